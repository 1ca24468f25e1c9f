/*
 * `dsig pubkey`: the public part of a key file (JWK or PEM in, JWK or PEM out).
 */
#include <stdio.h>

#include "cli.h"

const char cli_usage_pubkey[] =
    "Usage: dsig pubkey [-k KEY | KEY] [-o OUT] [--pem] [-q]\n"
    "\n"
    "Write the public key of a private key file (JWK or PEM, detected). The JWK keeps the key's\n"
    "\"alg\" binding. MAC keys have no public part. OUT must not be the key file itself.\n"
    "\n"
    "Options:\n"
    "  -k, --key KEY     the key file (or give it as the argument; '-' reads standard input)\n"
    "  -o, --out OUT     output file (default: standard output)\n"
    "      --pem         write SubjectPublicKeyInfo PEM instead of JWK\n"
    "  -q, --quiet       no informational messages\n"
    "  -h, --help        this help\n";

/* `dsig pubkey` */
int cmd_pubkey(int argc, char **argv)
{
    enum { OPT_KEY = 1, OPT_OUT, OPT_PEM };
    static const struct cli_opt opts[] = {
        {"key", 'k', 1, OPT_KEY}, {"out", 'o', 1, OPT_OUT}, {"pem", 0, 0, OPT_PEM}, CLI_COMMON_OPTS,
        {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "pubkey", opts, argc, argv);
    const char *keypath = NULL, *out = NULL;
    int pem = 0, id;
    const char *val;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_KEY:
        case ARGS_POSITIONAL:
            if (keypath)
                return cli_usage_error("pubkey", "more than one key given ('%s' and '%s')", keypath, val);
            keypath = val;
            break;
        case OPT_OUT: out = val; break;
        case OPT_PEM: pem = 1; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_pubkey, stdout); return CLI_EXIT_OK;
        default: return CLI_EXIT_ERROR;
        }
    }
    if (!keypath)
        return cli_usage_error("pubkey", "missing the key file (-k KEY)");

    int status = CLI_EXIT_ERROR, is_pem;
    dsig_key *key = NULL, *pubk = NULL;
    char *text = NULL;
    size_t len = 0;
    struct cli_fileid key_id; /* the output must never replace the (private) key file */
    if (keyfile_load(keypath, &key, &is_pem, &key_id) != 0)
        goto out;
    if (output_check_distinct(out, "public key", &key_id, 1) != 0)
        goto out;
    int rc = dsig_key_public(&pubk, key);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "key '%s': no public key", keypath);
        goto out;
    }
    if (keyfile_export(pubk, pem, 0, "public key", &text, &len) != 0)
        goto out;
    if (output_write(out, text, len, cli_needs_newline(text, len), 0644, "public key", &key_id, 1) != 0)
        goto out;
    status = CLI_EXIT_OK;
out:
    dsig_free(text);
    dsig_key_free(pubk);
    dsig_key_free(key);
    return status;
}
