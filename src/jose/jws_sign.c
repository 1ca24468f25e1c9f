/*
 * Streaming JWS signing: the signing input BASE64URL(header) "." payload is fed to the signer while the
 * payload streams (RFC 7797 unencoded for DSIG_FMT_JWS/JSON; base64url on the fly for COMPACT_B64).
 *
 * Two-pass signing (opts->two_pass, DSIG_ALG_TWO_PASS algorithms): the core's two-pass signer reads
 * its message twice, and the message here is the whole JWS signing input, so each pass feeds the
 * header prefix again before the caller's payload. The result is the exact signature the algorithm
 * defines over "header.payload" — what an in-memory dsig_sign_ex over that text gives.
 */
#include <string.h>

#include "jose/jose_internal.h"

struct dsig_jws_sign_ctx {
    dsig_format fmt;
    const dsig_alg *alg;
    dsig_sign_ctx *sign;
    char *hdr;                  /* BASE64URL(protected header); NULL for DSIG_FMT_RAW */
    size_t hdr_len;
    jose_buf body;              /* COMPACT_B64: the encoded payload, also fed to the signer */
    dsig_b64url_stream enc;
    uint64_t payload_total;
    int failed;
    int pass;                   /* two-pass: 1 or 2; 0 = one-pass context */
    size_t body_pos;            /* COMPACT_B64 pass 2: encoded bytes compared with pass 1 so far */
};

/* Sink of the on-the-fly encoder: the text is both signed and kept for the output. */
static int body_sink(void *arg, const char *text, size_t len)
{
    struct dsig_jws_sign_ctx *c = arg;
    int rc = dsig_sign_update(c->sign, text, len);
    if (rc)
        return rc;
    jose_buf_add(&c->body, text, len);
    return c->body.oom ? dsig_fail(DSIG_E_NOMEM, "out of memory") : DSIG_OK;
}

/* Sink of the encoder in pass 2 of a two-pass COMPACT_B64 signature: the text is signed again and
 * must equal what pass 1 kept for the output (the embedded payload is public: plain memcmp). */
static int body_recheck_sink(void *arg, const char *text, size_t len)
{
    struct dsig_jws_sign_ctx *c = arg;
    if (len > c->body.len - c->body_pos || (len && memcmp(c->body.p + c->body_pos, text, len) != 0))
        return dsig_fail(DSIG_E_STATE, "JWS two-pass: pass 2 fed a payload that differs from pass 1");
    c->body_pos += len;
    return dsig_sign_update(c->sign, text, len);
}

/* Feed the signing-input prefix BASE64URL(header) "." (nothing for raw signatures). */
static int feed_prefix(struct dsig_jws_sign_ctx *c)
{
    if (c->fmt == DSIG_FMT_RAW)
        return DSIG_OK;
    int rc = dsig_sign_update(c->sign, c->hdr, c->hdr_len);
    return rc ? rc : dsig_sign_update(c->sign, ".", 1);
}

/* Wipe and free a signing context (any state). */
void dsig_jws_sign_abort(dsig_jws_sign_ctx *ctx)
{
    if (!ctx)
        return;
    dsig_sign_abort(ctx->sign);
    if (ctx->hdr)
        dsig_xfree(ctx->hdr, ctx->hdr_len);
    jose_buf_wipe(&ctx->body);
    dsig_xfree(ctx, sizeof *ctx);
}

/* Start a JWS signature: build the protected header and feed the signing-input prefix.
 * @spec RFC 7515 §5.1 steps 1-5; RFC 7797 §3 (b64:false signing input). */
int dsig_jws_sign_init(dsig_jws_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                       const dsig_jws_sign_opts *opts)
{
    if (!ctx || !key)
        return dsig_fail(DSIG_E_ARG, "dsig_jws_sign_init: NULL argument");
    *ctx = NULL;
    if (!alg)
        alg = key->alg;
    if (!alg)
        return dsig_fail(DSIG_E_ARG, "JWS sign: no algorithm given and the key is not bound to one");
    dsig_format fmt = opts && opts->format ? opts->format : DSIG_FMT_JWS;
    if (fmt != DSIG_FMT_JWS && fmt != DSIG_FMT_JSON && fmt != DSIG_FMT_COMPACT_B64 && fmt != DSIG_FMT_RAW)
        return dsig_fail(DSIG_E_ARG, "JWS sign: invalid output format %d", (int)fmt);
    const dsig_sign_opts *so = opts ? opts->sign_opts : NULL;
    if (so && (so->context_len || so->prehash) && fmt != DSIG_FMT_RAW)
        return dsig_fail(DSIG_E_UNSUPPORTED, "JWS: %s in JOSE uses an empty context and pure signing; "
                                             "a context or pre-hash needs the raw signature format",
                         alg->name);
    struct dsig_jws_sign_ctx *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    c->fmt = fmt;
    c->alg = alg;
    c->pass = opts && opts->two_pass ? 1 : 0;
    int rc = c->pass ? dsig_sign_init_two_pass(&c->sign, alg, key, so)
                     : dsig_sign_init_ex(&c->sign, alg, key, so);
    if (rc == DSIG_OK && fmt != DSIG_FMT_RAW)
        rc = jose_header_build(alg, key, fmt == DSIG_FMT_COMPACT_B64, opts && opts->include_kid,
                               &c->hdr, &c->hdr_len);
    if (rc == DSIG_OK)
        rc = feed_prefix(c);
    if (rc) {
        dsig_jws_sign_abort(c);
        return rc;
    }
    dsig_b64url_stream_init(&c->enc, body_sink, c);
    *ctx = c;
    return DSIG_OK;
}

/* Feed payload bytes (of the current pass) to the signer. */
int dsig_jws_sign_update(dsig_jws_sign_ctx *ctx, const void *data, size_t len)
{
    if (!ctx || (!data && len))
        return dsig_fail(DSIG_E_ARG, "dsig_jws_sign_update: NULL argument");
    if (ctx->failed)
        return dsig_fail(DSIG_E_STATE, "dsig_jws_sign_update after a failure");
    int rc;
    if (ctx->fmt != DSIG_FMT_COMPACT_B64) {
        rc = dsig_sign_update(ctx->sign, data, len); /* hot path: the bare signer, nothing added */
    } else if (len > DSIG_JWS_MAX_EMBEDDED || ctx->payload_total > DSIG_JWS_MAX_EMBEDDED - len) {
        rc = dsig_fail(DSIG_E_TOO_LARGE, "JWS: embedded payloads are limited to %u bytes; use the "
                                         "detached format", DSIG_JWS_MAX_EMBEDDED);
    } else {
        ctx->payload_total += len;
        rc = dsig_b64url_stream_update(&ctx->enc, data, len);
    }
    if (rc)
        ctx->failed = 1;
    return rc;
}

/* End pass 1 of a two-pass signature and feed the prefix again for pass 2.
 * @spec FIPS 205 §10.2.1 Algorithm 22 (PRF_msg then H_msg, each over M') with M = the JWS signing
 * input of RFC 7515 §5.1 step 5 / RFC 7797 §3. */
int dsig_jws_sign_next_pass(dsig_jws_sign_ctx *ctx)
{
    if (!ctx)
        return dsig_fail(DSIG_E_ARG, "dsig_jws_sign_next_pass: NULL context");
    if (ctx->failed)
        return dsig_fail(DSIG_E_STATE, "dsig_jws_sign_next_pass after a failure");
    if (ctx->pass != 1) {
        ctx->failed = 1;
        return dsig_fail(DSIG_E_STATE, ctx->pass ? "dsig_jws_sign_next_pass called twice"
                                                 : "dsig_jws_sign_next_pass on a one-pass context "
                                                   "(set dsig_jws_sign_opts.two_pass)");
    }
    int rc = DSIG_OK;
    if (ctx->fmt == DSIG_FMT_COMPACT_B64) {
        /* Pass 1's encoded payload is complete (tail included) before its signer pass ends. */
        rc = dsig_b64url_stream_final(&ctx->enc);
        dsig_b64url_stream_init(&ctx->enc, body_recheck_sink, ctx);
        ctx->payload_total = 0;
    }
    if (rc == DSIG_OK)
        rc = dsig_sign_next_pass(ctx->sign);
    if (rc == DSIG_OK)
        rc = feed_prefix(ctx);
    ctx->pass = 2;
    if (rc)
        ctx->failed = 1;
    return rc;
}

/* Assemble the output text around the encoded signature. */
static int assemble(struct dsig_jws_sign_ctx *c, const char *sig, jose_buf *out)
{
    switch (c->fmt) {
    case DSIG_FMT_JSON:
        jose_buf_adds(out, "{");
        jose_buf_member(out, NULL, "protected", c->hdr);
        jose_buf_member(out, ",", "signature", sig);
        jose_buf_adds(out, "}");
        break;
    case DSIG_FMT_COMPACT_B64:
        jose_buf_add(out, c->hdr, c->hdr_len);
        jose_buf_add(out, ".", 1);
        jose_buf_add(out, c->body.p ? c->body.p : "", c->body.len);
        jose_buf_add(out, ".", 1);
        jose_buf_adds(out, sig);
        break;
    default: /* DSIG_FMT_JWS: detached */
        jose_buf_add(out, c->hdr, c->hdr_len);
        jose_buf_add(out, "..", 2);
        jose_buf_adds(out, sig);
        break;
    }
    return out->oom ? dsig_fail(DSIG_E_NOMEM, "out of memory") : DSIG_OK;
}

/* Finish the signature and assemble the output text (or raw bytes); frees ctx. */
int dsig_jws_sign_final(dsig_jws_sign_ctx *ctx, char **out, size_t *out_len)
{
    if (!ctx)
        return dsig_fail(DSIG_E_ARG, "dsig_jws_sign_final: NULL context");
    int rc = DSIG_OK;
    if (!out)
        rc = dsig_fail(DSIG_E_ARG, "dsig_jws_sign_final: NULL output");
    else if (ctx->failed)
        rc = dsig_fail(DSIG_E_STATE, "dsig_jws_sign_final after a failed update or next_pass");
    else if (ctx->pass == 1)
        rc = dsig_fail(DSIG_E_STATE, "dsig_jws_sign_final: two-pass signing is still in pass 1 (call "
                                     "dsig_jws_sign_next_pass and feed the payload again)");
    if (rc) {
        dsig_jws_sign_abort(ctx);
        return rc;
    }
    *out = NULL;
    if (ctx->fmt == DSIG_FMT_COMPACT_B64 && (rc = dsig_b64url_stream_final(&ctx->enc))) {
        dsig_jws_sign_abort(ctx);
        return rc;
    }
    if (ctx->fmt == DSIG_FMT_COMPACT_B64 && ctx->pass == 2 && ctx->body_pos != ctx->body.len) {
        dsig_jws_sign_abort(ctx);
        return dsig_fail(DSIG_E_STATE, "JWS two-pass: pass 2 fed a shorter payload than pass 1");
    }
    size_t cap = dsig_alg_sig_max(ctx->alg), sig_len = 0;
    uint8_t *sig = dsig_malloc(cap ? cap : 1);
    if (!sig) {
        dsig_jws_sign_abort(ctx);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    rc = dsig_sign_final(ctx->sign, sig, cap, &sig_len);
    ctx->sign = NULL; /* freed by dsig_sign_final on every path */
    if (rc == DSIG_OK && ctx->fmt == DSIG_FMT_RAW) {
        *out = (char *)sig; /* raw bytes; allocated by dsig_malloc so dsig_free applies */
        if (out_len)
            *out_len = sig_len;
        dsig_jws_sign_abort(ctx);
        return DSIG_OK;
    }
    char *enc = rc == DSIG_OK ? dsig_b64url_encode_alloc(sig, sig_len) : NULL;
    dsig_xfree(sig, cap);
    if (rc == DSIG_OK && !enc)
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    jose_buf text = {0};
    if (rc == DSIG_OK)
        rc = assemble(ctx, enc, &text);
    if (enc)
        dsig_xfree(enc, strlen(enc));
    dsig_jws_sign_abort(ctx);
    if (rc) {
        jose_buf_wipe(&text);
        return rc;
    }
    *out = text.p;
    if (out_len)
        *out_len = text.len;
    return DSIG_OK;
}
