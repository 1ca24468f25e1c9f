/*
 * `dsig keygen`: generate a key for an algorithm (from the OS CSPRNG, or reproducibly from --seed),
 * write the private key with mode 0600 and optionally the public key. The private key file is new
 * (an existing file or a symlink is replaced only with --force, by an atomic rename); if the public
 * key cannot be written, the private key written by this command is removed again.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char cli_usage_keygen[] =
    "Usage: dsig keygen -a ALG [-o KEY] [--force] [--pub PUB] [--seed HEX] [--bits N] [--pem]\n"
    "                   [--param NAME] [-q]\n"
    "\n"
    "Generate a private key for ALG. The key is written as a JWK bound to ALG (\"alg\" member), or as\n"
    "PKCS#8 PEM with --pem (RSA, EC and OKP keys; PEM keys are unbound, so sign and verify then\n"
    "need -a; not for DSig, whose keys must stay bound). Private key files are created with mode\n"
    "0600; an existing KEY file (or a symbolic link) is never replaced without --force.\n"
    "\n"
    "Stateful algorithms (HSS-LMS, XMSS, XMSSMT) write a state file instead (-o FILE.state, required;\n"
    "never replaced, not even with --force): it holds the private key and the counter of used one-time\n"
    "keys, and is updated by every 'dsig sign -k FILE.state'. Never copy or restore it (docs/state.md).\n"
    "\n"
    "Options:\n"
    "  -a, --alg ALG     algorithm (see 'dsig list'); required\n"
    "  -o, --out KEY     private key file (default: standard output); must not exist yet\n"
    "      --force       replace an existing KEY (atomically: a new file renamed over it; a symbolic\n"
    "                    link is replaced itself, its target is left alone); give --pub too, or\n"
    "                    public keys of the old key are stale (a warning says so)\n"
    "      --pub PUB     also write the public key to PUB (not for MAC algorithms)\n"
    "      --seed HEX    derive the key deterministically from this seed (at least 16 bytes = 32 hex\n"
    "                    digits); for tests and benchmarks only: the key is only as secret as the seed\n"
    "      --bits N      key size in bits (RSA modulus, MAC key); default: the algorithm's default;\n"
    "                    other key types have one size (ES256 = P-256) and refuse another\n"
    "      --pem         write PEM instead of JWK\n"
    "      --param NAME  parameter set, for algorithms with several per name (HSS-LMS: e.g.\n"
    "                    LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4, comma-separated levels;\n"
    "                    XMSS / XMSSMT: e.g. XMSS-SHA2_10_256, XMSSMT-SHA2_20/2_256); default: the\n"
    "                    algorithm's default set\n"
    "  -q, --quiet       no informational messages\n"
    "  -h, --help        this help\n";

/* Stateful algorithm: create the state file (O_EXCL, 0600, durable), then the public key; if that
 * fails, the new (never used) state file is removed again. */
static int keygen_state(const dsig_alg *alg, const dsig_keygen_params *params, const char *out,
                        const char *pub)
{
    dsig_key *key = NULL;
    char *pub_text = NULL;
    size_t pub_len = 0;
    int status = CLI_EXIT_ERROR;
    struct cli_fileid avoid;
    fileid_from_path(&avoid, out, "state file");
    if (avoid.set) { /* early, clear refusal; dsig_state_create refuses too (O_EXCL) */
        cli_err("state file '%s': %s: it already exists; a state file is never replaced",
                out, dsig_strerror(DSIG_E_ARG));
        return CLI_EXIT_ERROR;
    }
    if (pub && output_check_distinct(pub, "public key", &avoid, 0) != 0)
        return CLI_EXIT_ERROR;
    int rc = dsig_state_create(&key, out, alg, params, NULL);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "cannot create the %s state file '%s'", dsig_alg_name(alg), out);
        return CLI_EXIT_ERROR;
    }
    fileid_from_path(&avoid, out, "state file");
    avoid.name = out;
    if (pub && (keyfile_export(key, 0, 0, "public key", &pub_text, &pub_len) != 0 ||
                output_write(pub, pub_text, pub_len, cli_needs_newline(pub_text, pub_len), 0644,
                             "public key", &avoid, 1) != 0)) {
        dsig_key_free(key); /* unlock before removing */
        key = NULL;
        unlink(out);
        goto out;
    }
    uint64_t left = 0;
    dsig_state_remaining(key, &left);
    cli_note("state file '%s': %s key, %llu signatures", out, dsig_alg_name(alg), (unsigned long long)left);
    status = CLI_EXIT_OK;
out:
    dsig_free(pub_text);
    dsig_key_free(key);
    return status;
}

/* `dsig keygen` */
int cmd_keygen(int argc, char **argv)
{
    enum { OPT_ALG = 1, OPT_OUT, OPT_PUB, OPT_SEED, OPT_BITS, OPT_PEM, OPT_FORCE, OPT_PARAM };
    static const struct cli_opt opts[] = {
        {"alg", 'a', 1, OPT_ALG},   {"out", 'o', 1, OPT_OUT},   {"pub", 0, 1, OPT_PUB},
        {"seed", 0, 1, OPT_SEED},   {"bits", 0, 1, OPT_BITS},   {"pem", 0, 0, OPT_PEM},
        {"force", 0, 0, OPT_FORCE}, {"param", 0, 1, OPT_PARAM}, CLI_COMMON_OPTS,
        {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "keygen", opts, argc, argv);
    const char *alg_name = NULL, *out = NULL, *pub = NULL, *param = NULL;
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
        case OPT_PARAM: param = val; break;
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

    if ((dsig_alg_flags(alg) & DSIG_ALG_STATEFUL) && (input_is_stdin(out) || pem || force))
        return cli_usage_error("keygen", "%s keys live in a state file: give -o FILE.state (a new file; "
                                         "no --pem, no --force)", alg_name);
    dsig_keygen_params params = {.bits = bits, .param = param};
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
    if (dsig_alg_flags(alg) & DSIG_ALG_STATEFUL) {
        status = keygen_state(alg, &params, out, pub);
        goto out;
    }
    int rc = dsig_key_generate(&key, alg, &params);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "cannot generate a key for %s", alg_name);
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
    /* The replaced key's public key, wherever the user keeps it, no longer verifies anything this
     * key signs: say so, since nothing else will until a verify fails. */
    if (avoid[1].set && !pub && !(dsig_alg_flags(alg) & DSIG_ALG_SYMMETRIC))
        fprintf(stderr, "dsig: warning: '%s' holds a new key; public keys of the key it replaced do not "
                        "verify its signatures: write the new one (--pub PUB, or dsig pubkey %s)\n",
                out, out);
    status = CLI_EXIT_OK;
out:
    dsig_free(priv_text);
    dsig_free(pub_text);
    dsig_key_free(key);
    cli_free_secret(seed, seed_len);
    return status;
}
