/*
 * `dsig key info FILE`: what a key file holds — its form, key type, algorithm (bound, implied by the
 * key type, or the candidates), kid and RFC 7638 thumbprint, public or private, and for the state
 * file of a stateful key the signatures it has left — as text or one JSON object, so that scripts
 * need not parse JWKs to learn it. Nothing secret is printed.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char cli_usage_key[] =
    "Usage: dsig key info [--json] [-q] FILE\n"
    "\n"
    "Describe the key file FILE (JWK, PEM, DER or the state file of a stateful key; '-' reads\n"
    "standard input): form, key type and size, algorithm (bound to the key, implied by its type, or\n"
    "the candidates when several fit), kid, RFC 7638 thumbprint, private or public, and for a state\n"
    "file the signatures left. No secret is printed.\n"
    "\n"
    "Options:\n"
    "      --json      one JSON object: file, form, kty, crv, bits, alg, alg_source (bound | key type |\n"
    "                  null), kid, thumbprint, private, signatures_left (null unless a state file)\n"
    "  -q, --quiet     no informational messages\n"
    "  -h, --help      this help\n";

struct key_facts {
    const char *file, *form;
    const dsig_alg *alg;
    const char *alg_source;     /* "bound", "key type" or NULL */
    char candidates[320];       /* when no algorithm follows from the key */
    const char *kid;            /* the key's own, NULL if none */
    char thumbprint[DSIG_THUMBPRINT_LEN];
    int has_thumbprint, stateful;
    uint64_t left;
};

/* Gather what can be said about a loaded key. */
static void facts_of(const dsig_key *key, struct key_facts *f)
{
    f->alg = dsig_key_alg(key);
    f->alg_source = f->alg ? "bound" : NULL;
    if (!f->alg && dsig_key_infer_alg(key, &f->alg) == DSIG_OK)
        f->alg_source = "key type";
    else if (!f->alg)
        snprintf(f->candidates, sizeof f->candidates, "%s", dsig_last_error_detail());
    f->kid = dsig_key_kid(key);
    f->has_thumbprint = dsig_jwk_thumbprint(key, f->thumbprint) == DSIG_OK;
    f->stateful = dsig_state_remaining(key, &f->left) == DSIG_OK;
}

static void print_text(const dsig_key *key, const struct key_facts *f)
{
    const char *crv = dsig_key_curve(key);
    printf("file:        %s\n", f->file);
    printf("form:        %s\n", f->form);
    printf("key type:    %s%s%s, %u bits\n", dsig_key_kty(key), crv ? " " : "", crv ? crv : "",
           dsig_key_bits(key));
    if (f->alg)
        printf("algorithm:   %s (%s)\n", dsig_alg_name(f->alg),
               strcmp(f->alg_source, "bound") == 0 ? "bound to the key" : "the only one its type admits");
    else
        printf("algorithm:   none bound (%s)\n", f->candidates);
    printf("kid:         %s\n", f->kid ? f->kid : f->has_thumbprint ? "(none; the thumbprint is used)" : "-");
    printf("thumbprint:  %s\n", f->has_thumbprint ? f->thumbprint : "-");
    printf("part:        %s\n", dsig_key_has_private(key) ? "private" : "public");
    if (f->stateful)
        printf("signatures:  %llu left\n", (unsigned long long)f->left);
}

static void print_json(const dsig_key *key, const struct key_facts *f)
{
    fputs("{\"file\":", stdout);
    cli_json_string(stdout, f->file);
    fputs(",\"form\":", stdout);
    cli_json_string(stdout, f->form);
    fputs(",\"kty\":", stdout);
    cli_json_string(stdout, dsig_key_kty(key));
    fputs(",\"crv\":", stdout);
    cli_json_string(stdout, dsig_key_curve(key));
    printf(",\"bits\":%u,\"alg\":", dsig_key_bits(key));
    cli_json_string(stdout, f->alg ? dsig_alg_name(f->alg) : NULL);
    fputs(",\"alg_source\":", stdout);
    cli_json_string(stdout, f->alg_source);
    fputs(",\"kid\":", stdout);
    cli_json_string(stdout, f->kid);
    fputs(",\"thumbprint\":", stdout);
    cli_json_string(stdout, f->has_thumbprint ? f->thumbprint : NULL);
    printf(",\"private\":%s,\"signatures_left\":", dsig_key_has_private(key) ? "true" : "false");
    if (f->stateful)
        printf("%llu}\n", (unsigned long long)f->left);
    else
        fputs("null}\n", stdout);
}

/* `dsig key info [--json] FILE` */
static int key_info(int argc, char **argv)
{
    enum { OPT_JSON = 1 };
    static const struct cli_opt opts[] = {{"json", 0, 0, OPT_JSON}, CLI_COMMON_OPTS, {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "key info", opts, argc, argv);
    const char *file = NULL, *val;
    int json = 0, id;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_JSON: json = 1; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_key, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL:
            if (file)
                return cli_usage_error("key", "one key file at a time (got '%s' and '%s')", file, val);
            file = val;
            break;
        default: return CLI_EXIT_ERROR;
        }
    }
    if (!file)
        return cli_usage_error("key", "missing the key file (dsig key info FILE)");
    struct key_facts f = {.file = input_is_stdin(file) ? "<stdin>" : file};
    dsig_key *key = NULL;
    if (keyfile_load_form(file, &key, &f.form, NULL) != 0)
        return CLI_EXIT_ERROR;
    facts_of(key, &f);
    if (json)
        print_json(key, &f);
    else
        print_text(key, &f);
    dsig_key_free(key);
    return CLI_EXIT_OK;
}

/* `dsig key SUBCOMMAND`: argv[0] is "key". */
int cmd_key(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("key", "missing the subcommand (dsig key info FILE)");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(cli_usage_key, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "info") == 0)
        return key_info(argc - 1, argv + 1);
    return cli_usage_error("key", "unknown subcommand '%s' (dsig key info FILE)", argv[1]);
}
