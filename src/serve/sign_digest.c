/*
 * src/serve/sign_digest.c — POST /v1/keys/{kid}/sign-digest: sign a digest the client computed
 * (dsig/prehashed.h), for the keys whose algorithm gives such a signature its standard meaning.
 *
 *   request   {"hash": "SHA-256", "digest": "<base64url>"}   (at most SERVE_SIGN_DIGEST_BODY_MAX bytes)
 *   response  {"kid": "...", "alg": "ES256", "hash": "SHA-256", "signature": "<base64url>"}
 *
 * Which algorithm takes which hash is the registry's answer (dsig_alg_digest_hashes), never a list
 * here. The request parser is strict: exactly these two members, strings, canonical base64url, no
 * duplicate member; anything else is a 400 naming what was wrong.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "core/codec.h"
#include "core/internal.h"
#include "serve_internal.h"

#define DIGEST_MAX 64 /* the longest digest any algorithm takes (SHA-512, SHAKE256, μ) */

__attribute__((format(printf, 5, 6))) static int fail(unsigned *code, char *msg, size_t n, unsigned c,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *code = c;
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return 0;
}

int serve_sign_digest(const struct serve_key *k, const char *body, size_t len, struct serve_signed_digest *out,
                      unsigned *code, char *msg, size_t n)
{
    memset(out, 0, sizeof *out);
    const char *hashes = dsig_alg_digest_hashes(k->alg);
    if (!hashes)
        return fail(code, msg, n, 400,
                    "%s does not sign a digest computed elsewhere (ML-DSA, RSA and ECDSA keys do): use "
                    "/sign with the payload", dsig_alg_name(k->alg));
    json_error_t jerr;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        return fail(code, msg, n, 400, "the body must be a JSON object {\"hash\": ..., \"digest\": ...}");
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (strcmp(key, "hash") != 0 && strcmp(key, "digest") != 0) {
            char k2[40];
            snprintf(k2, sizeof k2, "%.32s", key);
            json_decref(root);
            return fail(code, msg, n, 400, "unknown member \"%s\" (the body has \"hash\" and \"digest\")", k2);
        }
    }
    const char *hash = json_string_value(json_object_get(root, "hash"));
    const char *b64 = json_string_value(json_object_get(root, "digest"));
    if (!hash || !b64) {
        json_decref(root);
        return fail(code, msg, n, 400, "\"hash\" and \"digest\" must both be strings");
    }
    /* The name goes into the audit record unescaped: letters, digits, '-' and '/' only. */
    size_t hl = strlen(hash);
    int ok = hl > 0 && hl < sizeof out->hash;
    for (size_t i = 0; ok && i < hl; i++)
        ok = (hash[i] >= 'A' && hash[i] <= 'Z') || (hash[i] >= 'a' && hash[i] <= 'z') ||
             (hash[i] >= '0' && hash[i] <= '9') || hash[i] == '-' || hash[i] == '/';
    if (!ok) {
        json_decref(root);
        return fail(code, msg, n, 400, "\"hash\" is not a hash name this key takes (it takes: %s)", hashes);
    }
    memcpy(out->hash, hash, hl + 1);
    size_t dl = 0;
    int rc = dsig_b64url_decode(b64, strlen(b64), out->digest, sizeof out->digest, &dl);
    json_decref(root);
    if (rc == DSIG_E_BUFFER)
        return fail(code, msg, n, 400, "\"digest\" is longer than any digest (64 bytes at most)");
    if (rc != DSIG_OK)
        return fail(code, msg, n, 400, "\"digest\" is not canonical base64url (RFC 4648 §5, no padding)");
    out->digest_len = dl;
    uint8_t sig[8192];
    size_t sl = 0;
    if (dsig_alg_sig_max(k->alg) > sizeof sig)
        return fail(code, msg, n, 500, "signature of %s too large for this endpoint", dsig_alg_name(k->alg));
    rc = dsig_sign_digest(k->alg, k->key, out->hash, out->digest, dl, sig, sizeof sig, &sl);
    if (rc != DSIG_OK) {
        /* the request's fault (a hash the key does not take, a wrong length) or the signer's */
        const int client = rc == DSIG_E_UNSUPPORTED || rc == DSIG_E_FORMAT;
        out->sign_rc = rc;
        *code = client ? 400 : rc == DSIG_E_EXHAUSTED || serve_sign_rc_retry(rc) ? 503 : 500;
        snprintf(msg, n, "%s: %s", client ? "digest refused" : "cannot sign", dsig_last_error_detail());
        return 0;
    }
    char s64[(sizeof sig * 4 + 2) / 3 + 1];
    dsig_b64url_encode(s64, sig, sl);
    json_t *doc = json_pack("{s:s,s:s,s:s,s:s}", "kid", k->kid, "alg", dsig_alg_name(k->alg), "hash", out->hash,
                            "signature", s64);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text) {
        out->body_len = strlen(text);
        out->body = dsig_malloc(out->body_len + 1);
        if (out->body)
            memcpy(out->body, text, out->body_len + 1);
        serve_json_free(text);
    }
    if (!out->body)
        return fail(code, msg, n, 500, "out of memory");
    *code = 200;
    return 1;
}
