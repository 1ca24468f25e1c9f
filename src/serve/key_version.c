/*
 * src/serve/key_version.c — versions of a served key id: the file-name scheme (<id>.v<N>), the JWS
 * header "kid" that picks the version a signature is checked with, and a version's state.
 *
 * A version is named by its kid "<id>.v<N>" (a plain <id>.jwk is version 1 and keeps "<id>"); a JWS
 * made with "include_kid" carries the key's own JWK "kid" (a rotated key's file holds "<id>.v<N>") or
 * its RFC 7638 thumbprint: all three pick the version. A JWS without "kid" is checked against the
 * signing version.
 */
#include <string.h>

#include <jansson.h>

#include "core/codec.h"
#include "core/internal.h"
#include "serve_internal.h"

#define HEADER_MAX 4096 /* a protected header longer than this is not read for its kid */
#define VERSION_DIGITS 9

int serve_key_stem_parse(const char *stem, size_t len, char id[SERVE_NAME_MAX + 1], unsigned *version)
{
    size_t keep = len < SERVE_NAME_MAX ? len : SERVE_NAME_MAX;
    memcpy(id, stem, keep);
    id[keep] = '\0';
    *version = 1;
    /* the last ".v": digits after it, a non-empty id before it */
    size_t d = len;
    while (d > 0 && stem[d - 1] >= '0' && stem[d - 1] <= '9')
        d--;
    size_t digits = len - d;
    if (digits == 0 || digits > VERSION_DIGITS || d < 3 || stem[d - 1] != 'v' || stem[d - 2] != '.' ||
        stem[d] == '0')
        return 0;
    unsigned v = 0;
    for (size_t i = d; i < len; i++)
        v = v * 10 + (unsigned)(stem[i] - '0');
    id[d - 2] = '\0';
    *version = v;
    return 1;
}

/* The kid member of a decoded header object: 1 copied, 0 none, -1 not a string or too long. */
static int kid_of(json_t *hdr, char *out, size_t outsz)
{
    json_t *kid = json_is_object(hdr) ? json_object_get(hdr, "kid") : NULL;
    if (!kid)
        return 0;
    const char *k = json_string_value(kid);
    if (!k || strlen(k) >= outsz)
        return -1;
    memcpy(out, k, strlen(k) + 1);
    return 1;
}

/* The protected header from its base64url text: 1 / 0 / -1 as serve_jws_header_kid. */
static int kid_of_b64(const char *b64, size_t n, char *out, size_t outsz)
{
    uint8_t hdr[HEADER_MAX];
    size_t hl = 0;
    if (n == 0 || dsig_b64url_decode(b64, n, hdr, sizeof hdr, &hl) != DSIG_OK)
        return -1;
    json_t *o = json_loadb((const char *)hdr, hl, JSON_REJECT_DUPLICATES, NULL);
    int rc = o ? kid_of(o, out, outsz) : -1;
    json_decref(o);
    return rc;
}

int serve_jws_header_kid(const char *sig, size_t n, char *out, size_t outsz)
{
    out[0] = '\0';
    if (n && sig[0] == '{') { /* flattened JSON: the "protected" member (an unprotected kid is not trusted) */
        json_t *o = json_loadb(sig, n, JSON_REJECT_DUPLICATES, NULL);
        const char *p = json_string_value(json_object_get(o, "protected"));
        int rc = p ? kid_of_b64(p, strlen(p), out, outsz) : -1;
        json_decref(o);
        return rc;
    }
    const char *dot = memchr(sig, '.', n);
    return dot ? kid_of_b64(sig, (size_t)(dot - sig), out, outsz) : -1;
}

/* 1 if the header kid names version k. */
static int names(const struct serve_key *k, const char *kid)
{
    const char *own = dsig_key_kid(k->key);
    return strcmp(kid, k->vkid) == 0 || (own && strcmp(kid, own) == 0) || strcmp(kid, k->thumbprint) == 0;
}

struct serve_key *serve_keyset_pick(const struct serve_keyset *ks, const char *id, const char *kid, int *retired)
{
    *retired = 0;
    size_t lo, hi;
    serve_keyset_range(ks, id, &lo, &hi);
    while (hi > lo) {
        struct serve_key *k = ks->keys[--hi];
        if (!names(k, kid))
            continue;
        if (!atomic_load(&k->retired))
            return k;
        *retired = 1;
    }
    return NULL;
}

const char *serve_key_state(const struct serve_keyset *ks, const struct serve_key *k)
{
    if (atomic_load(&((struct serve_key *)k)->retired))
        return "retired";
    return serve_keyset_find(ks, k->kid) == k ? "signing" : "verify-only";
}
