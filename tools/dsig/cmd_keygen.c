/*
 * `dsig keygen`: generate a key for an algorithm (from the OS CSPRNG, or reproducibly from --seed),
 * write the private key with mode 0600 and optionally the public key. The private key file is new
 * (an existing file or a symlink is replaced only with --force, by an atomic rename); if the public
 * key cannot be written, the private key written by this command is removed again.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char cli_usage_keygen[] =
    "Usage: dsig keygen -a ALG [-o KEY] [--force] [--pub PUB] [--seed HEX] [--bits N] [--pem] [-q]\n"
    "\n"
    "Generate a private key for ALG. The key is written as a JWK bound to ALG (\"alg\" member), or as\n"
    "PKCS#8 PEM with --pem (RSA, EC and OKP keys; PEM keys are unbound, so sign and verify then need\n"
    "-a). Private key files are created with mode 0600; an existing KEY file (or a symbolic link)\n"
    "is never replaced without --force.\n"
    "\n"
    "Options:\n"
    "  -a, --alg ALG     algorithm (see 'dsig list'); required\n"
    "  -o, --out KEY     private key file (default: standard output); must not exist yet\n"
    "      --force       replace an existing KEY (atomically: a new file renamed over it; a symbolic\n"
    "                    link is replaced itself, its target is left alone)\n"
    "      --pub PUB     also write the public key to PUB (not for MAC algorithms)\n"
    "      --seed HEX    derive the key deterministically from this seed (at least 16 bytes = 32 hex\n"
    "                    digits); for tests and benchmarks only: the key is only as secret as the seed\n"
    "      --bits N      key size in bits (RSA modulus, MAC key); default: the algorithm's default\n"
    "      --pem         write PEM instead of JWK\n"
    "  -q, --quiet       no informational messages\n"
    "  -h, --help        this help\n";

/* `dsig keygen` */
int cmd_keygen(int argc, char **argv)
{
    enum { OPT_ALG = 1, OPT_OUT, OPT_PUB, OPT_SEED, OPT_BITS, OPT_PEM, OPT_FORCE };
    static const struct cli_opt opts[] = {
        {"alg", 'a', 1, OPT_ALG},   {"out", 'o', 1, OPT_OUT},   {"pub", 0, 1, OPT_PUB},
        {"seed", 0, 1, OPT_SEED},   {"bits", 0, 1, OPT_BITS},   {"pem", 0, 0, OPT_PEM},
        {"force", 0, 0, OPT_FORCE}, CLI_COMMON_OPTS,            {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "keygen", opts, argc, argv);
    const char *alg_name = NULL, *out = NULL, *pub = NULL;
    char *seed_hex = NULL;
    unsigned bits = 0;
    int pem = 0, force = 0, id;
    const char *val;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_ALG: alg_name = val; break;
        case OPT_OUT: out = val; break;
        case OPT_PUB: pub = val; break;
        case OPT_SEED: seed_hex = (char *)val; break;
        case OPT_BITS:
            if (cli_parse_uint("keygen", "--bits", val, &bits) != 0)
                return CLI_EXIT_ERROR;
            break;
        case OPT_PEM: pem = 1; break;
        case OPT_FORCE: force = 1; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_keygen, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL: return cli_usage_error("keygen", "unexpected argument '%s'", val);
        default: return CLI_EXIT_ERROR;
        }
    }
    if (!alg_name)
        return cli_usage_error("keygen", "missing -a ALG");
    if (out && pub && strcmp(out, pub) == 0)
        return cli_usage_error("keygen", "-o and --pub name the same file '%s'", out);
    const dsig_alg *alg = cli_alg_lookup("keygen", alg_name);
    if (!alg)
        return CLI_EXIT_ERROR;

    dsig_keygen_params params = {.bits = bits};
    uint8_t *seed = NULL;
    size_t seed_len = 0;
    if (seed_hex) {
        int bad = cli_parse_hex("keygen", "--seed", seed_hex, &seed, &seed_len);
        /* The seed is the key: do not leave it readable in /proc/PID/cmdline longer than needed. */
        dsig_memzero(seed_hex, strlen(seed_hex));
        if (bad)
            return CLI_EXIT_ERROR;
        params.seed = seed;
        params.seed_len = seed_len;
    }

    int status = CLI_EXIT_ERROR;
    dsig_key *key = NULL;
    char *priv_text = NULL, *pub_text = NULL;
    size_t priv_len = 0, pub_len = 0;
    int rc = dsig_key_generate(&key, alg, &params);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "cannot generate a %s key", alg_name);
        goto out;
    }
    /* Serialize everything before creating any file, so a failure leaves no partial output. */
    if (keyfile_export(key, pem, 1, "private key", &priv_text, &priv_len) != 0)
        goto out;
    if (pub && keyfile_export(key, pem, 0, "public key", &pub_text, &pub_len) != 0)
        goto out;
    /* PUB must never be (or lead to) the private key: neither the file written now nor, with
     * --force, the one it replaces — a symlink PUB -> KEY would show the new private key. */
    struct cli_fileid avoid[2];
    fileid_from_path(&avoid[1], force && !input_is_stdin(out) ? out : NULL, "private key");
    if (pub && output_check_distinct(pub, "public key", &avoid[1], 1) != 0)
        goto out;
    struct cli_private_out priv;
    if (output_private_begin(&priv, out, force, priv_text, priv_len,
                             cli_needs_newline(priv_text, priv_len), "private key") != 0)
        goto out;
    avoid[0] = priv.id;
    avoid[0].name = input_is_stdin(out) ? "<stdout>" : out;
    if (pub && output_write(pub, pub_text, pub_len, cli_needs_newline(pub_text, pub_len), 0644,
                            "public key", avoid, 2) != 0) {
        output_private_abort(&priv); /* no private key without its public key */
        goto out;
    }
    if (output_private_commit(&priv, "private key") != 0)
        goto out;
    status = CLI_EXIT_OK;
out:
    dsig_free(priv_text);
    dsig_free(pub_text);
    dsig_key_free(key);
    cli_free_secret(seed, seed_len);
    return status;
}
