/*
 * Streaming JWS verification: parse the JWS (compact or flattened JSON), apply the header policy,
 * decide the algorithm from the key and the caller, then feed BASE64URL(header) "." payload to the
 * verifier while the payload streams (raw for b64:false; base64url on the fly for a detached b64:true
 * payload, RFC 7515 Appendix F). The streaming API is for detached payloads only; a JWS carrying its
 * payload goes through dsig_jws_verify_compact, which returns the payload it verified.
 */
#include <string.h>

#include "jose/jose_internal.h"

/* Bound of a flattened-JSON / compact JWS text: an embedded payload plus header and signature. */
#define JWS_MAX_TEXT ((size_t)DSIG_JWS_MAX_EMBEDDED / 3 * 4 + 4 + 4 * (size_t)DSIG_JWS_MAX_HEADER + 65536)

struct dsig_jws_verify_ctx {
    const dsig_alg *alg;
    dsig_verify_ctx *verify;
    int b64;                    /* header b64 (detached payloads are encoded on the fly if 1) */
    int embedded;               /* dsig_jws_verify_compact's context: the payload was inside the JWS */
    dsig_b64url_stream enc;
    uint8_t *payload;           /* embedded payload, decoded (only when asked for) */
    size_t payload_len;
    int failed;
};

/* The pieces of a parsed JWS text (pointers into the caller's text or the parsed JSON). */
struct jws_parts {
    const char *hdr, *payload, *sig;
    size_t hdr_len, payload_len, sig_len;
    int has_payload;
    json_t *json;               /* flattened JSON document (owns the strings), or NULL */
    const json_t *unprotected;
};

/* 1 for a base64url alphabet character. */
static int is_b64url(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

/* Length without trailing whitespace (a final newline from a file). */
static size_t trim_len(const char *s, size_t n)
{
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n;
}

dsig_format dsig_jws_detect_format(const char *sig, size_t len)
{
    if (!sig)
        return DSIG_FMT_RAW;
    len = trim_len(sig, len);
    if (len == 0)
        return DSIG_FMT_RAW;
    if (sig[0] == '{') {
        /* JSON serializations are ASCII text; binary that merely starts with '{' (one raw signature
         * in 256) is a raw signature. */
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)sig[i];
            if (c >= 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r'))
                return DSIG_FMT_RAW;
        }
        return DSIG_FMT_JSON;
    }
    size_t dots = 0, first = 0, second = 0;
    for (size_t i = 0; i < len; i++) {
        if (sig[i] == '.') {
            if (++dots == 1)
                first = i;
            else if (dots == 2)
                second = i;
        } else if (!is_b64url((unsigned char)sig[i])) {
            return DSIG_FMT_RAW;
        }
    }
    if (dots != 2)
        return DSIG_FMT_RAW;
    return second == first + 1 ? DSIG_FMT_JWS : DSIG_FMT_COMPACT_B64;
}

/* @spec RFC 7515 §7.1: exactly three dot-separated segments. */
static int split_compact(const char *s, size_t n, struct jws_parts *p)
{
    const char *d1 = memchr(s, '.', n);
    const char *d2 = d1 ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - s)) : NULL;
    if (!d1 || !d2)
        return dsig_fail(DSIG_E_FORMAT, "JWS: compact serialization needs three segments separated by "
                                        "two dots");
    if (memchr(d2 + 1, '.', n - (size_t)(d2 + 1 - s)))
        return dsig_fail(DSIG_E_FORMAT, "JWS: compact serialization has more than three segments");
    p->hdr = s;
    p->hdr_len = (size_t)(d1 - s);
    p->payload = d1 + 1;
    p->payload_len = (size_t)(d2 - d1 - 1);
    p->has_payload = p->payload_len > 0;
    p->sig = d2 + 1;
    p->sig_len = n - (size_t)(d2 + 1 - s);
    return DSIG_OK;
}

/* A required string member of the flattened JSON serialization. */
static int json_str_member(const json_t *o, const char *name, const char **s, size_t *n)
{
    const json_t *v = json_object_get(o, name);
    if (!v)
        return dsig_fail(DSIG_E_JSON, "JWS JSON: member \"%s\" is missing", name);
    if (!json_is_string(v))
        return dsig_fail(DSIG_E_JSON, "JWS JSON: member \"%s\" must be a string", name);
    *s = json_string_value(v);
    *n = json_string_length(v);
    return DSIG_OK;
}

/* @spec RFC 7515 §7.2.2 (flattened JSON serialization); §7.2.1 general form is not supported. */
static int split_json(const char *s, size_t n, struct jws_parts *p)
{
    int rc = jose_json_load_object(&p->json, s, n, "JWS JSON");
    if (rc)
        return rc;
    if (json_object_get(p->json, "signatures"))
        return dsig_fail(DSIG_E_UNSUPPORTED, "JWS JSON: the general serialization (\"signatures\") is "
                                             "not supported; use the flattened form");
    if ((rc = json_str_member(p->json, "protected", &p->hdr, &p->hdr_len)) ||
        (rc = json_str_member(p->json, "signature", &p->sig, &p->sig_len)))
        return rc;
    const json_t *h = json_object_get(p->json, "header");
    if (h && !json_is_object(h))
        return dsig_fail(DSIG_E_JSON, "JWS JSON: member \"header\" must be an object");
    p->unprotected = h;
    if (json_object_get(p->json, "payload")) {
        if ((rc = json_str_member(p->json, "payload", &p->payload, &p->payload_len)))
            return rc;
        p->has_payload = 1;
    }
    return DSIG_OK;
}

/* Sink of the on-the-fly encoder for detached b64:true payloads. */
static int verify_sink(void *arg, const char *text, size_t len)
{
    return dsig_verify_update(arg, text, len);
}

void dsig_jws_verify_abort(dsig_jws_verify_ctx *ctx)
{
    if (!ctx)
        return;
    dsig_verify_abort(ctx->verify);
    if (ctx->payload)
        dsig_xfree(ctx->payload, ctx->payload_len);
    dsig_xfree(ctx, sizeof *ctx);
}

/* Feed an embedded payload segment and keep its decoded form for the caller. @spec RFC 7515 §5.2
 * step 8, RFC 7797 §3 (the payload is used as-is in the signing input when b64 is false). */
static int feed_embedded(struct dsig_jws_verify_ctx *c, const struct jws_parts *p)
{
    if (c->b64) {
        if (dsig_b64url_decode_alloc(p->payload, p->payload_len, &c->payload, &c->payload_len))
            return jose_fail_prefix(DSIG_E_BASE64, "JWS payload");
    } else {
        c->payload = dsig_malloc(p->payload_len + 1);
        if (!c->payload)
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
        memcpy(c->payload, p->payload, p->payload_len);
        c->payload_len = p->payload_len;
    }
    /* An empty payload is still a (non-NULL) payload for the caller. */
    if (!c->payload && !(c->payload = dsig_malloc(1)))
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    c->embedded = 1;
    return dsig_verify_update(c->verify, p->payload, p->payload_len);
}

/* Everything after the format is known: header policy, algorithm, signature, signing input. */
static int start(struct dsig_jws_verify_ctx *c, const struct jws_parts *p, const dsig_key *key,
                 const dsig_jws_verify_opts *opts, int embedded)
{
    jose_header h;
    int rc = jose_header_parse(p->hdr, p->hdr_len, p->unprotected, &h);
    if (rc)
        return rc;
    if ((rc = jose_decide_alg(h.alg, key, opts, &c->alg)))
        return rc;
    c->b64 = h.b64;
    if (p->sig_len == 0)
        return dsig_fail(DSIG_E_FORMAT, "JWS: the signature segment is empty");
    uint8_t *sig = NULL;
    size_t sig_len = 0;
    if (dsig_b64url_decode_alloc(p->sig, p->sig_len, &sig, &sig_len))
        return jose_fail_prefix(DSIG_E_BASE64, "JWS signature");
    if (opts && opts->sign_opts && (opts->sign_opts->context_len || opts->sign_opts->prehash))
        rc = dsig_fail(DSIG_E_UNSUPPORTED, "JWS: %s in JOSE uses an empty context and pure signing; "
                                           "a context or pre-hash applies to raw signatures only",
                       c->alg->name);
    else
        rc = dsig_verify_init(&c->verify, c->alg, key, sig, sig_len);
    dsig_xfree(sig, sig_len);
    if (rc == DSIG_OK)
        rc = dsig_verify_update(c->verify, p->hdr, p->hdr_len);
    if (rc == DSIG_OK)
        rc = dsig_verify_update(c->verify, ".", 1);
    if (rc == DSIG_OK && embedded)
        rc = feed_embedded(c, p);
    dsig_b64url_stream_init(&c->enc, verify_sink, c->verify);
    return rc;
}

/* Refusal of a JWS that carries its payload by the streaming (detached) API. Following the JWS
 * instead would let a detached verification with no update at all "pass" on the embedded payload:
 * an empty or truncated download would verify. */
static int refuse_embedded(dsig_format fmt)
{
    return dsig_fail(DSIG_E_FORMAT,
                     "JWS: this %s carries its payload (%s); dsig_jws_verify_init verifies detached "
                     "payloads only: use dsig_jws_verify_compact for a JWS with an embedded payload",
                     fmt == DSIG_FMT_JSON ? "JWS JSON" : "compact JWS",
                     fmt == DSIG_FMT_JSON ? "a \"payload\" member" : "a payload segment or format "
                                                                       "DSIG_FMT_COMPACT_B64");
}

/* Shared by dsig_jws_verify_init (`embedded` 0: the payload is detached and streams through
 * updates; a JWS carrying a payload is refused) and dsig_jws_verify_compact (`embedded` 1: the
 * payload must be inside the JWS; an empty middle segment is an empty payload). */
static int verify_init(dsig_jws_verify_ctx **ctx, const dsig_key *key, const char *sig, size_t sig_len,
                       const dsig_jws_verify_opts *opts, int embedded)
{
    if (!ctx || !sig || !key)
        return dsig_fail(DSIG_E_ARG, "dsig_jws_verify_init: NULL argument");
    *ctx = NULL;
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    dsig_format fmt = opts ? opts->format : DSIG_FMT_AUTO;
    if (fmt == DSIG_FMT_AUTO) {
        fmt = dsig_jws_detect_format(sig, sig_len);
        /* An embedded JWS is never raw: parse it as compact so that errors name the segment. */
        if (fmt == DSIG_FMT_RAW && embedded)
            fmt = DSIG_FMT_COMPACT_B64;
    }
    if (fmt < DSIG_FMT_JWS || fmt > DSIG_FMT_RAW)
        return dsig_fail(DSIG_E_ARG, "JWS verify: invalid format %d", (int)fmt);
    struct dsig_jws_verify_ctx *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    struct jws_parts p = {0};
    size_t n = fmt == DSIG_FMT_RAW ? sig_len : trim_len(sig, sig_len);
    if (fmt == DSIG_FMT_RAW) {
        if (embedded)
            rc = dsig_fail(DSIG_E_FORMAT, "JWS: not a compact JWS with an embedded payload");
        else if (!(rc = jose_decide_alg(NULL, key, opts, &c->alg)))
            rc = dsig_verify_init_ex(&c->verify, c->alg, key, (const uint8_t *)sig, sig_len,
                                     opts ? opts->sign_opts : NULL);
        c->b64 = 0;
    } else if (n > JWS_MAX_TEXT) {
        rc = dsig_fail(DSIG_E_TOO_LARGE, "JWS: text larger than %zu bytes", JWS_MAX_TEXT);
    } else {
        rc = fmt == DSIG_FMT_JSON ? split_json(sig, n, &p) : split_compact(sig, n, &p);
        if (rc == DSIG_OK && !embedded && (p.has_payload || fmt == DSIG_FMT_COMPACT_B64))
            rc = refuse_embedded(fmt);
        if (rc == DSIG_OK && fmt == DSIG_FMT_JSON && embedded && !p.has_payload)
            rc = dsig_fail(DSIG_E_FORMAT, "JWS JSON: no \"payload\" member (detached signature)");
        if (rc == DSIG_OK)
            rc = start(c, &p, key, opts, embedded);
    }
    if (p.json)
        json_decref(p.json);
    if (rc) {
        dsig_jws_verify_abort(c);
        return rc;
    }
    *ctx = c;
    return DSIG_OK;
}

int dsig_jws_verify_init(dsig_jws_verify_ctx **ctx, const dsig_key *key, const char *sig, size_t sig_len,
                         const dsig_jws_verify_opts *opts)
{
    return verify_init(ctx, key, sig, sig_len, opts, 0);
}

int dsig_jws_verify_update(dsig_jws_verify_ctx *ctx, const void *data, size_t len)
{
    if (!ctx || (!data && len))
        return dsig_fail(DSIG_E_ARG, "dsig_jws_verify_update: NULL argument");
    if (ctx->failed)
        return dsig_fail(DSIG_E_STATE, "dsig_jws_verify_update after a failure");
    int rc;
    if (ctx->embedded)
        rc = dsig_fail(DSIG_E_STATE, "JWS: the payload is embedded in the JWS; no detached payload "
                                     "can be given");
    else if (ctx->b64)
        rc = dsig_b64url_stream_update(&ctx->enc, data, len);
    else
        rc = dsig_verify_update(ctx->verify, data, len); /* hot path: the bare verifier */
    if (rc)
        ctx->failed = 1;
    return rc;
}

/* Finish, optionally handing the decoded embedded payload over. Frees ctx. */
static int verify_finish(struct dsig_jws_verify_ctx *c, uint8_t **payload, size_t *payload_len)
{
    int rc = DSIG_OK;
    if (c->failed)
        rc = dsig_fail(DSIG_E_STATE, "dsig_jws_verify_final after a failed update");
    else if (!c->embedded && c->b64)
        rc = dsig_b64url_stream_final(&c->enc);
    if (rc == DSIG_OK) {
        rc = dsig_verify_final(c->verify);
        c->verify = NULL; /* freed on every path */
    }
    if (rc == DSIG_OK && payload) {
        *payload = c->payload;
        if (payload_len)
            *payload_len = c->payload_len;
        c->payload = NULL;
    }
    dsig_jws_verify_abort(c);
    return rc;
}

int dsig_jws_verify_final(dsig_jws_verify_ctx *ctx)
{
    if (!ctx)
        return dsig_fail(DSIG_E_ARG, "dsig_jws_verify_final: NULL context");
    return verify_finish(ctx, NULL, NULL);
}

const dsig_alg *dsig_jws_verify_alg(const dsig_jws_verify_ctx *ctx)
{
    return ctx ? ctx->alg : NULL;
}

int dsig_jws_verify_compact(const dsig_key *key, const char *jws, size_t len,
                            const dsig_jws_verify_opts *opts, uint8_t **payload, size_t *payload_len)
{
    if (!payload)
        return dsig_fail(DSIG_E_ARG, "dsig_jws_verify_compact: NULL payload output");
    *payload = NULL;
    if (payload_len)
        *payload_len = 0;
    dsig_jws_verify_ctx *c;
    int rc = verify_init(&c, key, jws, len, opts, 1);
    if (rc)
        return rc;
    return verify_finish(c, payload, payload_len);
}

int dsig_jws_has_embedded_payload(const char *sig, size_t len)
{
    if (!sig)
        return dsig_fail(DSIG_E_ARG, "dsig_jws_has_embedded_payload: NULL signature");
    switch (dsig_jws_detect_format(sig, len)) {
    case DSIG_FMT_COMPACT_B64:
        return 1;
    case DSIG_FMT_JSON:
        break;
    default:
        return 0; /* detached compact JWS, or not a JWS at all (raw) */
    }
    size_t n = trim_len(sig, len);
    if (n > JWS_MAX_TEXT)
        return dsig_fail(DSIG_E_TOO_LARGE, "JWS: text larger than %zu bytes", JWS_MAX_TEXT);
    json_t *j;
    int rc = jose_json_load_object(&j, sig, n, "JWS JSON");
    if (rc)
        return rc;
    /* Any "payload" member, whatever its type: the streaming API refuses it all the same. */
    int has = json_object_get(j, "payload") != NULL;
    json_decref(j);
    return has;
}
