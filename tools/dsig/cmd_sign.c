/*
 * `dsig sign`: stream a payload of any size through the JWS signer in 64 KiB chunks (one reader,
 * dsig_read_fd; no temporary file), then write the small signature. The output file is created only
 * after signing succeeded, so a failure leaves no partial output. Algorithms with an exact two-pass
 * signature (DSIG_ALG_TWO_PASS: SLH-DSA) read a regular file twice (seeking back between the passes),
 * in every output format, unless --one-pass is given: the JWS signer feeds the header prefix in both
 * passes (dsig_jws_sign_opts.two_pass).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char cli_usage_sign[] =
    "Usage: dsig sign -k KEY [-a ALG] [-o SIG] [--format jws|json|compact|raw] [--kid]\n"
    "                 [--deterministic] [--context HEX] [--prehash NAME] [--one-pass] [-q]\n"
    "                 [FILE|-]\n"
    "\n"
    "Sign FILE (or standard input when FILE is '-' or absent; a terminal only with '-') in one\n"
    "streaming pass. The algorithm is the key's bound \"alg\", or -a (required for PEM and DER keys,\n"
    "which are unbound).\n"
    "SLH-DSA (flag two-pass in dsig list) reads a regular file twice (seeking back), in every format,\n"
    "which gives the exact FIPS 205 signature of the signing input (R = PRF_msg over it; for JWS\n"
    "formats the input is header.payload) and allows --deterministic; pipes, standard input that is\n"
    "not a regular file and --one-pass sign in one pass, where R comes from fresh randomness only\n"
    "(still a valid SLH-DSA signature; --deterministic is refused unless --prehash is given).\n"
    "\n"
    "Options:\n"
    "  -k, --key KEY       private key file, JWK, PEM or DER (detected), or the state file of a stateful\n"
    "                      key (HSS-LMS, XMSS, XMSSMT; updated durably before the signature is\n"
    "                      written; $DSIG_STATE_RESERVE indices reserved per update, default 1);\n"
    "                      required\n"
    "  -a, --alg ALG       algorithm (must match the key's \"alg\" if it has one)\n"
    "  -o, --out SIG       signature file (default: standard output); written only on success;\n"
    "                      never the key or the payload file itself\n"
    "      --format F      jws     compact detached JWS with unencoded payload (RFC 7797), the default\n"
    "                      json    flattened JWS JSON serialization without \"payload\"\n"
    "                      compact ordinary compact JWS with the payload embedded (payloads up to\n"
    "                              64 MiB; held in memory)\n"
    "                      raw     the bare signature bytes over the payload (no JOSE; never\n"
    "                              written to a terminal)\n"
    "      --kid           put the key's \"kid\" in the header (its JWK's own, else the RFC 7638\n"
    "                      thumbprint); JWS formats only\n"
    "      --deterministic deterministic signature instead of the default hedged one (algorithms\n"
    "                      with signing options: ML-DSA, any format; SLH-DSA: two-pass signatures\n"
    "                      of regular files, or with --prehash)\n"
    "      --context HEX   context string (FIPS 204/205 ctx, up to 255 bytes); raw format only: JOSE\n"
    "                      uses an empty context. The verifier needs the same --context\n"
    "      --prehash NAME  HashML-DSA / HashSLH-DSA with pre-hash NAME: SHA-224, SHA-256, SHA-384,\n"
    "                      SHA-512, SHA-512/224, SHA-512/256, SHA3-224, SHA3-256, SHA3-384,\n"
    "                      SHA3-512, SHAKE128, SHAKE256; raw format only. The verifier needs the\n"
    "                      same NAME\n"
    "      --one-pass      SLH-DSA: sign a regular file in one pass (as for pipes) instead of two,\n"
    "                      in any format\n"
    "  -q, --quiet         no progress bar or informational messages\n"
    "  -h, --help          this help\n"
    "\n"
    "Text formats are followed by a newline. For stateful algorithms the key file is rewritten\n"
    "(atomically) with the advanced state before the signature is written.\n";

struct sign_feed {
    dsig_jws_sign_ctx *ctx;
    struct progress pg;
    int lib_rc;     /* set when the signer (not the reader) failed */
};

/* One chunk from the reader into the signer: the hot path adds only the progress counter. */
static int sign_chunk(void *arg, const uint8_t *data, size_t len)
{
    struct sign_feed *f = arg;
    int rc = dsig_jws_sign_update(f->ctx, data, len);
    if (rc != DSIG_OK) {
        f->lib_rc = rc;
        return rc;
    }
    progress_add(&f->pg, len);
    return DSIG_OK;
}

/* Read the payload to the end through the signer (one pass, with progress), from `start` when it is
 * not negative (a seekable regular file read twice), else from where the descriptor is. */
static int feed_pass(struct sign_feed *f, struct cli_input *in, off_t start)
{
    if (start >= 0 && lseek(in->fd, start, SEEK_SET) == (off_t)-1)
        return cli_err_sys(errno, "cannot seek in '%s'", in->name), -1;
    f->lib_rc = 0;
    progress_start(&f->pg, in);
    int rc = dsig_read_fd(in->fd, NULL, CLI_CHUNK, sign_chunk, f, NULL);
    progress_end(&f->pg);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "%s '%s'", f->lib_rc ? "cannot sign" : "cannot read", in->name);
        return -1;
    }
    return 0;
}

/* `dsig sign` */
int cmd_sign(int argc, char **argv)
{
    enum { OPT_KEY = 1, OPT_ALG, OPT_OUT, OPT_FORMAT, OPT_KID, OPT_DET, OPT_CONTEXT, OPT_PREHASH,
           OPT_ONE_PASS };
    static const struct cli_opt opts[] = {
        {"key", 'k', 1, OPT_KEY},         {"alg", 'a', 1, OPT_ALG},         {"out", 'o', 1, OPT_OUT},
        {"format", 0, 1, OPT_FORMAT},     {"kid", 0, 0, OPT_KID},           {"deterministic", 0, 0, OPT_DET},
        {"context", 0, 1, OPT_CONTEXT},   {"prehash", 0, 1, OPT_PREHASH},   {"one-pass", 0, 0, OPT_ONE_PASS},
        CLI_COMMON_OPTS,
        {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "sign", opts, argc, argv);
    const char *keypath = NULL, *alg_name = NULL, *out = NULL, *file = NULL;
    dsig_jws_sign_opts sopts = {.format = DSIG_FMT_JWS, .include_kid = 0};
    dsig_sign_opts so = {0};
    const char *context_hex = NULL;
    int id, nfiles = 0, one_pass = 0;
    const char *val;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_DET: so.deterministic = 1; break;
        case OPT_CONTEXT: context_hex = val; break;
        case OPT_PREHASH: so.prehash = val; break;
        case OPT_ONE_PASS: one_pass = 1; break;
        case OPT_KEY: keypath = val; break;
        case OPT_ALG: alg_name = val; break;
        case OPT_OUT: out = val; break;
        case OPT_FORMAT:
            if (cli_parse_format("sign", val, &sopts.format) != 0)
                return CLI_EXIT_ERROR;
            break;
        case OPT_KID: sopts.include_kid = 1; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_sign, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL:
            if (nfiles++)
                return cli_usage_error("sign", "only one payload can be signed (got '%s' and '%s')", file,
                                       val);
            file = val;
            break;
        default: return CLI_EXIT_ERROR;
        }
    }
    if (!keypath)
        return cli_usage_error("sign", "missing -k KEY");
    if (input_is_stdin(keypath) && input_is_stdin(file))
        return cli_usage_error("sign", "the key and the payload cannot both come from standard input");
    if (sopts.include_kid && sopts.format == DSIG_FMT_RAW)
        return cli_usage_error("sign", "--kid puts the key id in the JWS header; a raw signature has "
                                       "none (drop --kid or choose a JWS format)");
    if (sopts.format == DSIG_FMT_RAW && input_is_stdin(out) && isatty(STDOUT_FILENO))
        return cli_usage_error("sign", "refusing to write a binary raw signature to the terminal: give "
                                       "-o SIG or redirect standard output");
    if ((context_hex || so.prehash) && sopts.format != DSIG_FMT_RAW)
        return cli_usage_error("sign", "--context and --prehash need --format raw (JOSE signatures use "
                                       "an empty context and pure signing)");
    const dsig_alg *alg = NULL;
    if (alg_name && !(alg = cli_alg_lookup("sign", alg_name)))
        return CLI_EXIT_ERROR;
    uint8_t *context = NULL;
    if (context_hex && cli_parse_hex("sign", "--context", context_hex, &context, &so.context_len) != 0)
        return CLI_EXIT_ERROR;
    so.context = context;
    if (context_hex || so.prehash || so.deterministic)
        sopts.sign_opts = &so;

    int status = CLI_EXIT_ERROR, is_pem = 0, rc;
    dsig_key *key = NULL;
    char *sig = NULL;
    size_t sig_len = 0;
    struct sign_feed feed = {0};
    struct cli_input in = {.fd = -1};
    /* The output must never replace an input: the key (-o k.jwk would overwrite the private key
     * with the signature) or the payload. */
    struct cli_fileid inputs[2];
    if (keyfile_load(keypath, &key, &is_pem, &inputs[0]) != 0)
        goto out;
    if (!alg && !(alg = dsig_key_alg(key))) {
        cli_err("key '%s': %s: the key is not bound to an algorithm%s; give -a ALG",
                keypath, dsig_strerror(DSIG_E_ARG), is_pem ? " (PEM and DER keys never are)" : "");
        goto out;
    }
    if ((rc = dsig_key_check_alg(key, alg)) != DSIG_OK) {
        cli_err_lib(rc, "key '%s' cannot be used with %s", keypath, dsig_alg_name(alg));
        goto out;
    }
    if (sopts.sign_opts && !(dsig_alg_flags(alg) & DSIG_ALG_OPTIONS)) {
        cli_err("%s: %s takes no signing options (--deterministic, --context, "
                        "--prehash)", dsig_strerror(DSIG_E_UNSUPPORTED), dsig_alg_name(alg));
        goto out;
    }
    uint64_t left; /* stateful keys sign only from their state file (dsig/state.h), which the
                      library itself advances durably before each signature */
    int stateful = (dsig_alg_flags(alg) & DSIG_ALG_STATEFUL) && dsig_state_remaining(key, &left) != DSIG_OK;
    if (stateful) {
        cli_err("key '%s': %s: a key of %s signs only from its state file (dsig keygen -o "
                        "FILE.state); a JWK or PEM of one can only verify",
                keypath, dsig_strerror(DSIG_E_ARG), dsig_alg_name(alg));
        goto out;
    }
    if (input_open_payload(&in, file, "sign") != 0)
        goto out;
    fileid_from_fd(&inputs[1], in.fd, "payload", in.name);
    /* Checked before signing so that a stateful key's state is not spent on a refused output;
     * output_write checks again on the descriptor it writes. */
    if (output_check_distinct(out, "signature", inputs, 2) != 0)
        goto out;
    /* The exact signature of a two-pass algorithm reads a regular file twice (also one redirected to
     * standard input, which may not start at offset 0): pass 1, seek back, pass 2. */
    off_t start = -1;
    sopts.two_pass = !one_pass && in.size_known && (dsig_alg_flags(alg) & DSIG_ALG_TWO_PASS);
    if (sopts.two_pass && (start = lseek(in.fd, 0, SEEK_CUR)) == (off_t)-1) {
        cli_err_sys(errno, "cannot seek in '%s'", in.name);
        goto out;
    }
    if ((rc = dsig_jws_sign_init(&feed.ctx, alg, key, &sopts)) != DSIG_OK) {
        cli_err_lib(rc, "cannot sign with key '%s'", keypath);
        goto out;
    }
    int fed = feed_pass(&feed, &in, start) == 0;
    if (fed && sopts.two_pass) {
        if ((rc = dsig_jws_sign_next_pass(feed.ctx)) != DSIG_OK)
            cli_err_lib(rc, "cannot sign '%s'", in.name);
        fed = rc == DSIG_OK && feed_pass(&feed, &in, start) == 0;
    }
    if (!fed) {
        dsig_jws_sign_abort(feed.ctx);
        goto out;
    }
    rc = dsig_jws_sign_final(feed.ctx, &sig, &sig_len);
    if (rc != DSIG_OK) {
        sig = NULL;
        cli_err_lib(rc, "cannot sign '%s'", in.name);
        goto out;
    }
    if (output_write(out, sig, sig_len, sopts.format != DSIG_FMT_RAW, 0644, "signature", inputs, 2) != 0)
        goto out;
    status = CLI_EXIT_OK;
out:
    input_close(&in);
    dsig_free(sig);
    dsig_key_free(key);
    free(context);
    return status;
}
