/*
 * `dsig list`: the algorithm registry as a table, as JSON, or as bare names — all from the registry's
 * descriptors, so a new algorithm appears here without any change to the tool.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char cli_usage_list[] =
    "Usage: dsig list [--json | --names] [-q]\n"
    "\n"
    "List the algorithms of the registry: JOSE name, family, JWK key type and curve, classical\n"
    "security level in bits, largest signature in bytes, and flags.\n"
    "\n"
    "Options:\n"
    "  --json        one JSON array of objects (name, family, kty, crv, security_bits, sig_max,\n"
    "                default_key_bits, flags, description)\n"
    "  --names       only the names, one per line\n"
    "  -q, --quiet   no informational messages\n"
    "  -h, --help    this help\n"
    "\n"
    "Flags: symmetric (a MAC: the same secret key signs and verifies), stateful (signing consumes\n"
    "one-time keys: the key signs only from its state file, see keygen --help), randomized\n"
    "(streaming signatures are not reproducible), pq (post-quantum), one-pass (the payload is read\n"
    "once), deterministic (the one-shot signature is deterministic), options (takes sign\n"
    "--context/--deterministic/--prehash, verify --context/--prehash), two-pass (has an exact\n"
    "signature that reads the payload twice: sign does so for a regular file unless --one-pass).\n"
    "A flag bit this tool does not know yet is shown as 0xNNNN.\n";

static const struct {
    unsigned bit;
    const char *name;
} flag_names[] = {
    {DSIG_ALG_SYMMETRIC, "symmetric"},
    {DSIG_ALG_STATEFUL, "stateful"},
    {DSIG_ALG_RANDOMIZED, "randomized"},
    {DSIG_ALG_PQ, "pq"},
    {DSIG_ALG_ONE_PASS, "one-pass"},
    {DSIG_ALG_DETERMINISTIC_ONESHOT, "deterministic"},
    {DSIG_ALG_OPTIONS, "options"},
    {DSIG_ALG_TWO_PASS, "two-pass"},
    {DSIG_ALG_BOUND_KEY, "bound-key"},
};
#define N_FLAGS (sizeof flag_names / sizeof flag_names[0])

/* Bits of `flags` that have no name in flag_names (a newer library than this table). */
static unsigned unknown_flags(unsigned flags)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        flags &= ~flag_names[i].bit;
    return flags;
}

/* Flags of an algorithm as a comma-separated list ("-" when none); unnamed bits as 0xNNNN. */
static void flags_text(unsigned flags, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < N_FLAGS; i++)
        if (flags & flag_names[i].bit)
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? "," : "",
                                  flag_names[i].name);
    unsigned rest = unknown_flags(flags);
    for (unsigned bit = 1; rest; bit <<= 1)
        if (rest & bit) {
            rest &= ~bit;
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s0x%04x", n ? "," : "", bit);
        }
    if (n == 0)
        snprintf(out, cap, "-");
}

/* The registry as a JSON array. */
static void list_json(void)
{
    size_t n = dsig_alg_count();
    printf("[");
    for (size_t i = 0; i < n; i++) {
        const dsig_alg *a = dsig_alg_at(i);
        printf("%s\n  {\"name\": ", i ? "," : "");
        cli_json_string(stdout, dsig_alg_name(a));
        printf(", \"family\": ");
        cli_json_string(stdout, dsig_alg_family(a));
        printf(", \"kty\": ");
        cli_json_string(stdout, dsig_alg_kty(a));
        printf(", \"crv\": ");
        cli_json_string(stdout, dsig_alg_curve(a));
        printf(", \"security_bits\": %u, \"sig_max\": %zu, \"default_key_bits\": %u, \"flags\": [",
               dsig_alg_security_bits(a), dsig_alg_sig_max(a), dsig_alg_default_bits(a));
        int first = 1;
        for (size_t f = 0; f < N_FLAGS; f++)
            if (dsig_alg_flags(a) & flag_names[f].bit) {
                printf("%s\"%s\"", first ? "" : ", ", flag_names[f].name);
                first = 0;
            }
        unsigned rest = unknown_flags(dsig_alg_flags(a));
        for (unsigned bit = 1; rest; bit <<= 1)
            if (rest & bit) {
                rest &= ~bit;
                printf("%s\"0x%04x\"", first ? "" : ", ", bit);
                first = 0;
            }
        printf("], \"description\": ");
        cli_json_string(stdout, dsig_alg_description(a));
        printf("}");
    }
    printf("%s]\n", n ? "\n" : "");
}

/* Width of the widest string of a column (at least the header's). */
static int col_width(const char *header, const char *(*get)(const dsig_alg *))
{
    int w = (int)strlen(header);
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const char *s = get(dsig_alg_at(i));
        if (s && (int)strlen(s) > w)
            w = (int)strlen(s);
    }
    return w;
}

/* The registry as an aligned table. */
static void list_table(void)
{
    int wn = col_width("NAME", dsig_alg_name);
    int wf = col_width("FAMILY", dsig_alg_family);
    int wk = col_width("KTY", dsig_alg_kty);
    int wc = col_width("CRV", dsig_alg_curve);
    printf("%-*s  %-*s  %-*s  %-*s  %4s  %7s  %s\n", wn, "NAME", wf, "FAMILY", wk, "KTY", wc, "CRV",
           "BITS", "SIG_MAX", "FLAGS");
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const dsig_alg *a = dsig_alg_at(i);
        char flags[128];
        flags_text(dsig_alg_flags(a), flags, sizeof flags);
        const char *crv = dsig_alg_curve(a);
        printf("%-*s  %-*s  %-*s  %-*s  %4u  %7zu  %s\n", wn, dsig_alg_name(a), wf, dsig_alg_family(a),
               wk, dsig_alg_kty(a), wc, crv ? crv : "-", dsig_alg_security_bits(a), dsig_alg_sig_max(a),
               flags);
    }
}

/* `dsig list [--json|--names]` */
int cmd_list(int argc, char **argv)
{
    enum { OPT_JSON = 1, OPT_NAMES };
    static const struct cli_opt opts[] = {
        {"json", 0, 0, OPT_JSON}, {"names", 0, 0, OPT_NAMES}, CLI_COMMON_OPTS, {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "list", opts, argc, argv);
    int json = 0, names = 0, id;
    const char *val;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_JSON: json = 1; break;
        case OPT_NAMES: names = 1; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_list, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL: return cli_usage_error("list", "unexpected argument '%s'", val);
        default: return CLI_EXIT_ERROR;
        }
    }
    if (json && names)
        return cli_usage_error("list", "--json and --names cannot be combined");
    if (names) {
        for (size_t i = 0; i < dsig_alg_count(); i++)
            printf("%s\n", dsig_alg_name(dsig_alg_at(i)));
    } else if (json) {
        list_json();
    } else {
        list_table();
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_err_sys(errno, "cannot write the list to <stdout>");
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}
