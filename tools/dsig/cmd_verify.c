/*
 * `dsig verify`: read the (small) signature first, then stream the payload through the verifier.
 * Three outcomes, never confused: 0 valid, 1 a signature that does not verify, 2 anything else
 * (usage, I/O — including a read error in the middle of a pipe —, malformed input, unusable key).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char cli_usage_verify[] =
    "Usage: dsig verify -k KEY -s SIG [-a ALG] [--format jws|json|compact|raw]\n"
    "                   [--context HEX] [--prehash NAME] [--json] [-q] [FILE|-]\n"
    "\n"
    "Verify the signature SIG over FILE (or standard input when FILE is '-' or absent). The format is\n"
    "detected when --format is not given. A JWS that carries its payload (compact with a payload\n"
    "segment, or JSON with \"payload\") is verified over that payload: FILE ('-': standard input), when\n"
    "given, must be byte for byte that payload; without FILE only the embedded payload is checked\n"
    "(standard input is not read). Text is always read as a JWS (malformed text is an error, exit 2);\n"
    "binary content is a raw signature. Without FILE a terminal on standard input is not read.\n"
    "\n"
    "Options:\n"
    "  -k, --key KEY       public key (or the secret key of a MAC), JWK, PEM or DER (detected);\n"
    "                      required\n"
    "  -s, --sig SIG       signature file; required\n"
    "  -a, --alg ALG       algorithm, for keys without \"alg\" (PEM keys) whose type fits several\n"
    "                      (RSA, oct; an EC or OKP key has one); must match the key's \"alg\" and the\n"
    "                      JWS header. The legacy JOSE name EdDSA is accepted for Ed25519 / Ed448\n"
    "      --format F      jws, json, compact or raw (see 'dsig sign --help'); default: detected\n"
    "      --context HEX   the context string the signer used (raw signatures only)\n"
    "      --prehash NAME  the HashML-DSA pre-hash the signer used (raw signatures only)\n"
    "      --json          print the outcome on stdout as one JSON object:\n"
    "                      {\"valid\", \"status\" (valid|invalid|error), \"alg\", \"kid\", \"reason\"}\n"
    "  -q, --quiet         no \"OK\", no progress bar\n"
    "  -h, --help          this help\n"
    "\n"
    "Exit status: 0 the signature is valid (\"OK\" on stderr), 1 it does not verify, 2 error.\n";

/* A signature file can hold a compact JWS with an embedded payload of up to DSIG_JWS_MAX_EMBEDDED. */
#define SIG_MAX_BYTES ((DSIG_JWS_MAX_EMBEDDED / 3u + 1u) * 4u + (4u << 20))

struct verify_feed {
    dsig_jws_verify_ctx *ctx;
    struct progress pg;
    int lib_rc;     /* set when the verifier (not the reader) failed */
};

/* One chunk from the reader into the verifier. */
static int verify_chunk(void *arg, const uint8_t *data, size_t len)
{
    struct verify_feed *f = arg;
    int rc = dsig_jws_verify_update(f->ctx, data, len);
    if (rc != DSIG_OK) {
        f->lib_rc = rc;
        return rc;
    }
    progress_add(&f->pg, len);
    return DSIG_OK;
}

struct compare_feed {
    const uint8_t *expect;
    size_t len, off;
    int differs;
};

/* Compare a chunk of FILE with the next bytes of the embedded payload (public data). */
static int compare_chunk(void *arg, const uint8_t *data, size_t len)
{
    struct compare_feed *c = arg;
    if (len > c->len - c->off || memcmp(c->expect + c->off, data, len) != 0) {
        c->differs = 1;
        return DSIG_E_VERIFY;
    }
    c->off += len;
    return DSIG_OK;
}

/* Printable ASCII and whitespace only: what every JWS serialization written by a JOSE tool is. */
static int is_ascii_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c > 0x7e)
            return 0;
    }
    return 1;
}

/* Text that the library's detector did not recognise is a malformed JWS, never a raw signature (a
 * raw signature is binary; --format raw says otherwise): hand it to the JWS parser of the form it
 * resembles, so that the error names what is wrong and the exit status is 2. */
static dsig_format guess_malformed(const char *s, size_t n)
{
    if (s[0] == '{')
        return DSIG_FMT_JSON;
    const char *dot = memchr(s, '.', n);
    return dot && dot + 1 < s + n && dot[1] != '.' ? DSIG_FMT_COMPACT_B64 : DSIG_FMT_JWS;
}

/* Map a verification status to the exit code and report it. */
static int outcome(int rc, const char *sigpath, const char *keypath, const char *payload)
{
    if (rc == DSIG_OK) {
        cli_note("OK");
        return CLI_EXIT_OK;
    }
    cli_err_lib(rc, "signature '%s' (key '%s', payload '%s')", sigpath, keypath, payload);
    return rc == DSIG_E_VERIFY ? CLI_EXIT_INVALID : CLI_EXIT_ERROR;
}

/* --json: the outcome as one object on stdout, for scripts. The reason is the message printed on
 * standard error (null when valid). */
static void print_json(int status, const dsig_alg *alg, const dsig_key *key)
{
    static const char *const names[] = {"valid", "invalid", "error"};
    char tp[DSIG_THUMBPRINT_LEN];
    printf("{\"valid\":%s,\"status\":\"%s\",\"alg\":", status == CLI_EXIT_OK ? "true" : "false",
           names[status]);
    cli_json_string(stdout, alg ? dsig_alg_name(alg) : NULL);
    fputs(",\"kid\":", stdout);
    cli_json_string(stdout, key ? cli_key_id(key, tp) : NULL);
    fputs(",\"reason\":", stdout);
    cli_json_string(stdout, status == CLI_EXIT_OK ? NULL : cli_last_error());
    fputs("}\n", stdout);
}

/* Verify a JWS carrying its payload (compact or JSON); FILE, when given, must be that payload. */
static int verify_embedded(const char *sig, size_t sig_len, const dsig_key *key,
                           const dsig_jws_verify_opts *vopts, const char *sigpath, const char *keypath,
                           const char *file)
{
    uint8_t *payload = NULL;
    size_t plen = 0;
    int rc = dsig_jws_verify_compact(key, sig, sig_len, vopts, &payload, &plen);
    if (rc == DSIG_OK && !file) {
        dsig_free(payload);
        /* Say what was checked: a user who meant to verify standard input must see it was not. */
        cli_note("OK (the payload embedded in the signature; no FILE was compared with it)");
        return CLI_EXIT_OK;
    }
    if (rc != DSIG_OK) {
        dsig_free(payload);
        return outcome(rc, sigpath, keypath, "embedded");
    }
    struct cli_input in;
    if (input_open_payload(&in, file, "verify") != 0) {
        dsig_free(payload);
        return CLI_EXIT_ERROR;
    }
    struct compare_feed cmp = {.expect = payload, .len = plen};
    rc = dsig_read_fd(in.fd, NULL, CLI_CHUNK, compare_chunk, &cmp, NULL);
    dsig_free(payload);
    int status;
    if (rc != DSIG_OK && !cmp.differs) {
        cli_err_lib(rc, "cannot read '%s'", in.name);
        status = CLI_EXIT_ERROR;
    } else if (cmp.differs || cmp.off != plen) {
        cli_err("signature '%s': %s: '%s' differs from the payload embedded in the JWS",
                sigpath, dsig_strerror(DSIG_E_VERIFY), in.name);
        status = CLI_EXIT_INVALID;
    } else {
        status = outcome(DSIG_OK, sigpath, keypath, in.name);
    }
    input_close(&in);
    return status;
}

/* The algorithm of -a NAME for this key: a registry name, or the legacy JOSE "EdDSA" resolved by
 * the key's curve. Reports and returns NULL when neither. */
static const dsig_alg *alg_for_key(const char *name, const dsig_key *key)
{
    const dsig_alg *alg = dsig_jws_alg_for_key(name, key);
    if (!alg)
        cli_usage_error("verify", "unknown algorithm '%s' for this key (see 'dsig list --names'; the "
                                  "legacy EdDSA names Ed25519 or Ed448 by the key's curve)", name);
    return alg;
}

/* Everything after the options: key, signature, payload. Sets *used_alg / *used_key for --json. */
static int verify_run(const char *keypath, const char *sigpath, const char *alg_name, const char *file,
                      dsig_jws_verify_opts *vopts, const dsig_alg **used_alg, dsig_key **used_key)
{
    int status = CLI_EXIT_ERROR, is_pem = 0, rc;
    dsig_key *key = NULL;
    char *sig = NULL;
    size_t sig_len = 0;
    struct verify_feed feed = {0};
    struct cli_input in = {.fd = -1};
    if (keyfile_load(keypath, &key, &is_pem, NULL) != 0)
        goto out;
    *used_key = key;
    const dsig_alg *alg = NULL;
    if (alg_name && !(alg = alg_for_key(alg_name, key)))
        goto out;
    if (alg && (rc = dsig_key_check_alg(key, alg)) != DSIG_OK) {
        cli_err_lib(rc, "key '%s' cannot be used with %s", keypath, alg_name);
        goto out;
    }
    /* Unbound keys: -a, or the one algorithm the key type admits (never the JWS header). */
    const dsig_alg *use_alg = alg;
    if (!use_alg && (rc = dsig_key_infer_alg(key, &use_alg)) != DSIG_OK) {
        cli_err("key '%s': %s: %s%s; give -a ALG", keypath, dsig_strerror(rc), dsig_last_error_detail(),
                is_pem ? " (PEM and DER keys carry no algorithm)" : "");
        goto out;
    }
    *used_alg = use_alg;
    vopts->alg = alg;
    if (vopts->sign_opts && !(dsig_alg_flags(use_alg) & DSIG_ALG_OPTIONS)) {
        cli_err("%s: %s takes no signing options (--context, --prehash)",
                dsig_strerror(DSIG_E_UNSUPPORTED), dsig_alg_name(use_alg));
        goto out;
    }
    if (input_read_all(sigpath, SIG_MAX_BYTES, "signature", &sig, &sig_len, NULL) != 0)
        goto out;
    int sig_on_stdin = input_is_stdin(sigpath);
    if (sig_on_stdin)
        sigpath = "<stdin>";
    /* Text formats were written with a trailing newline; raw signatures are used byte for byte. */
    size_t text_len = sig_len;
    while (text_len && strchr(" \t\r\n", sig[text_len - 1]))
        text_len--;
    if (vopts->format == DSIG_FMT_AUTO) {
        /* Binary content is a raw signature whatever its first byte is (one in 256 raw signatures
         * starts with '{'); text is a JWS, and text that is no JWS is a malformed one. */
        if (!is_ascii_text(sig, text_len)) {
            vopts->format = DSIG_FMT_RAW;
        } else if (text_len == 0) {
            cli_err("signature '%s': %s: the file is empty (a JWS is text; give --format raw for a raw "
                    "signature)", sigpath, dsig_strerror(DSIG_E_FORMAT));
            goto out;
        } else if ((vopts->format = dsig_jws_detect_format(sig, text_len)) == DSIG_FMT_RAW) {
            vopts->format = guess_malformed(sig, text_len);
        }
    }
    if (vopts->sign_opts && vopts->format != DSIG_FMT_RAW) {
        status = cli_usage_error("verify", "--context and --prehash apply to raw signatures only, and "
                                           "'%s' is a JWS (JOSE uses an empty context and pure signing)",
                                 sigpath);
        goto out;
    }
    size_t use_len = vopts->format == DSIG_FMT_RAW ? sig_len : text_len;
    /* A JWS carrying its payload — compact, or flattened JSON with "payload" — is verified by
     * dsig_jws_verify_compact against that payload (and FILE compared with it): the streaming
     * API refuses it, so that an empty FILE can never "verify" the payload hidden in SIG. JSON that
     * does not parse goes to the streaming path, whose parser names the error. */
    int embedded = vopts->format == DSIG_FMT_COMPACT_B64 ||
                   (vopts->format == DSIG_FMT_JSON && dsig_jws_has_embedded_payload(sig, text_len) == 1);
    if (embedded) {
        if (file && input_is_stdin(file) && (input_is_stdin(keypath) || sig_on_stdin)) {
            status = cli_usage_error("verify", "standard input is already used for the key or signature");
            goto out;
        }
        status = verify_embedded(sig, use_len, key, vopts, sigpath, keypath, file);
        goto out;
    }
    if (input_is_stdin(file) && (input_is_stdin(keypath) || sig_on_stdin)) {
        status = cli_usage_error("verify", "the payload must be a file when the key or signature is on "
                                           "standard input");
        goto out;
    }
    if (input_open_payload(&in, file, "verify") != 0)
        goto out;
    rc = dsig_jws_verify_init(&feed.ctx, key, sig, use_len, vopts);
    if (rc != DSIG_OK) {
        status = outcome(rc, sigpath, keypath, in.name);
        goto out;
    }
    progress_start(&feed.pg, &in);
    rc = dsig_read_fd(in.fd, NULL, CLI_CHUNK, verify_chunk, &feed, NULL);
    progress_end(&feed.pg);
    if (rc != DSIG_OK) {
        dsig_jws_verify_abort(feed.ctx);
        if (feed.lib_rc)
            status = outcome(rc, sigpath, keypath, in.name);
        else
            cli_err_lib(rc, "cannot read '%s'", in.name);
        goto out;
    }
    status = outcome(dsig_jws_verify_final(feed.ctx), sigpath, keypath, in.name);
out:
    input_close(&in);
    free(sig);
    return status;
}

/* `dsig verify` */
int cmd_verify(int argc, char **argv)
{
    enum { OPT_KEY = 1, OPT_SIG, OPT_ALG, OPT_FORMAT, OPT_CONTEXT, OPT_PREHASH, OPT_JSON };
    static const struct cli_opt opts[] = {
        {"key", 'k', 1, OPT_KEY},       {"sig", 's', 1, OPT_SIG},         {"alg", 'a', 1, OPT_ALG},
        {"format", 0, 1, OPT_FORMAT},   {"context", 0, 1, OPT_CONTEXT},   {"prehash", 0, 1, OPT_PREHASH},
        {"json", 0, 0, OPT_JSON},       CLI_COMMON_OPTS,                  {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "verify", opts, argc, argv);
    const char *keypath = NULL, *sigpath = NULL, *alg_name = NULL, *file = NULL;
    dsig_jws_verify_opts vopts = {.format = DSIG_FMT_AUTO};
    dsig_sign_opts so = {0};
    const char *context_hex = NULL;
    int id, nfiles = 0, json = 0;
    const char *val;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_CONTEXT: context_hex = val; break;
        case OPT_PREHASH: so.prehash = val; break;
        case OPT_KEY: keypath = val; break;
        case OPT_SIG: sigpath = val; break;
        case OPT_ALG: alg_name = val; break;
        case OPT_JSON: json = 1; break;
        case OPT_FORMAT:
            if (cli_parse_format("verify", val, &vopts.format) != 0)
                return CLI_EXIT_ERROR;
            break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_verify, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL:
            if (nfiles++)
                return cli_usage_error("verify", "only one payload can be verified (got '%s' and '%s')",
                                       file, val);
            file = val;
            break;
        default: return CLI_EXIT_ERROR;
        }
    }
    /* From here on every outcome, usage errors included, is reported by --json. */
    if (json)
        cli_quiet = 1; /* the object on stdout says it; errors still go to stderr */
    const dsig_alg *used_alg = NULL;
    dsig_key *used_key = NULL;
    uint8_t *context = NULL;
    int status;
    if (!keypath) {
        status = cli_usage_error("verify", "missing -k KEY");
    } else if (!sigpath) {
        status = cli_usage_error("verify", "missing -s SIG");
    } else if (input_is_stdin(keypath) && input_is_stdin(sigpath)) {
        status = cli_usage_error("verify", "the key and the signature cannot both come from standard input");
    } else if ((context_hex || so.prehash) && vopts.format != DSIG_FMT_AUTO && vopts.format != DSIG_FMT_RAW) {
        status = cli_usage_error("verify", "--context and --prehash apply to raw signatures only (JOSE "
                                           "signatures use an empty context and pure signing)");
    } else if (context_hex && cli_parse_hex("verify", "--context", context_hex, &context, &so.context_len) != 0) {
        status = CLI_EXIT_ERROR;
    } else {
        so.context = context;
        if (context_hex || so.prehash)
            vopts.sign_opts = &so;
        status = verify_run(keypath, sigpath, alg_name, file, &vopts, &used_alg, &used_key);
    }
    if (json)
        print_json(status, used_alg, used_key);
    dsig_key_free(used_key);
    free(context);
    return status;
}
