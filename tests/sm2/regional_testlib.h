/*
 * tests/sm2/regional_testlib.h — helpers shared by tests/sm2 and tests/gost: fixed-width hex, keys
 * through the public JWK import, Botan .vec parsing, streaming round trips and bit-flip tampering.
 */
#ifndef DSIG_TESTS_REGIONAL_TESTLIB_H
#define DSIG_TESTS_REGIONAL_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classic/regional_ec.h"
#include "core/internal.h"
#include "testutil.h"

/* Hex (any length up to width bytes, optional 0x) -> exactly `width` bytes, left-padded. */
static inline void rt_hexw(const char *hex, uint8_t *out, size_t width)
{
    if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
        hex += 2;
    size_t hl = strlen(hex);
    char *h = malloc(hl + 2);
    if (hl % 2) {
        h[0] = '0';
        strcpy(h + 1, hex);
    } else {
        strcpy(h, hex);
    }
    size_t n;
    uint8_t *raw = tu_hex(h, &n);
    free(h);
    size_t skip = 0;
    while (n - skip > width && raw[skip] == 0)
        skip++;
    assert_true(n - skip <= width);
    memset(out, 0, width);
    memcpy(out + width - (n - skip), raw + skip, n - skip);
    free(raw);
}

/* Import {"kty":"EC","crv":crv,"x","y"[,"d"]} through the public JWK parser. */
static inline int rt_jwk_key(const char *crv, const uint8_t *x, const uint8_t *y, const uint8_t *d,
                             size_t w, dsig_key **out)
{
    char *bx = dsig_b64url_encode_alloc(x, w), *by = dsig_b64url_encode_alloc(y, w);
    char *bd = d ? dsig_b64url_encode_alloc(d, w) : NULL;
    char json[512];
    snprintf(json, sizeof json, "{\"kty\":\"EC\",\"crv\":\"%s\",\"x\":\"%s\",\"y\":\"%s\"%s%s%s}", crv, bx,
             by, d ? ",\"d\":\"" : "", d ? bd : "", d ? "\"" : "");
    dsig_xfree(bx, 0);
    dsig_xfree(by, 0);
    if (bd)
        dsig_xfree(bd, 0);
    *out = NULL;
    return dsig_jwk_import(out, json, strlen(json));
}

/* One record of a Botan .vec file: up to 16 "Key = Value" pairs, with the current [section]. */
struct rt_rec {
    char section[64];
    int n;
    char key[16][32];
    char *val[16];
};

/* The value of `key` in a record, or NULL. */
static inline const char *rt_get(const struct rt_rec *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->key[i], key) == 0)
            return r->val[i];
    return NULL;
}

/* Parse a .vec text: calls fn for every record that has `last_key` (the record's final field);
 * fields persist across records (Botan files repeat only what changes). Returns records seen. */
static inline int rt_vec_each(char *text, const char *last_key,
                              void (*fn)(const struct rt_rec *r, void *arg), void *arg)
{
    struct rt_rec r;
    memset(&r, 0, sizeof r);
    int count = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\r' || line[l - 1] == ' '))
            line[--l] = 0;
        if (line[0] == '#' || l == 0)
            continue;
        if (line[0] == '[') {
            snprintf(r.section, sizeof r.section, "%.*s", (int)(l - 2), line + 1);
            continue;
        }
        char *eq = strstr(line, " =");
        if (!eq)
            continue;
        *eq = 0;
        char *v = eq + 2;
        while (*v == ' ')
            v++;
        int i;
        for (i = 0; i < r.n; i++)
            if (strcmp(r.key[i], line) == 0)
                break;
        if (i == r.n && r.n < 16)
            snprintf(r.key[r.n++], sizeof r.key[0], "%s", line);
        r.val[i] = v;
        if (strcmp(line, last_key) == 0) {
            fn(&r, arg);
            count++;
        }
    }
    return count;
}

/* Flip every bit of a valid signature in turn: each must be DSIG_E_VERIFY; so must every flip of
 * the first 8 message bytes, a truncated and an extended signature. */
static inline void rt_tamper_all(const dsig_alg *alg, const dsig_key *pub, const uint8_t *msg,
                                 size_t len, const uint8_t *sig, size_t sig_len,
                                 const dsig_sign_opts *opts)
{
    uint8_t t[256];
    assert_true(sig_len <= sizeof t - 1);
    assert_int_equal(dsig_verify_ex(alg, pub, msg, len, sig, sig_len, opts), DSIG_OK);
    for (size_t bit = 0; bit < 8 * sig_len; bit++) {
        memcpy(t, sig, sig_len);
        t[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dsig_verify_ex(alg, pub, msg, len, t, sig_len, opts), DSIG_E_VERIFY);
    }
    uint8_t *m = malloc(len ? len : 1);
    memcpy(m, msg, len);
    for (size_t bit = 0; bit < 64 && bit < 8 * len; bit++) {
        m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dsig_verify_ex(alg, pub, m, len, sig, sig_len, opts), DSIG_E_VERIFY);
        m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    free(m);
    memcpy(t, sig, sig_len);
    t[sig_len] = 0;
    assert_int_equal(dsig_verify_ex(alg, pub, msg, len, t, sig_len - 1, opts), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify_ex(alg, pub, msg, len, t, sig_len + 1, opts), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify_ex(alg, pub, msg, len, t, 0, opts), DSIG_E_VERIFY);
}

/* Sign in chunks of several sizes and verify each in other chunkings. */
static inline void rt_roundtrip(const dsig_alg *alg, const dsig_key *priv, const dsig_key *pub)
{
    uint8_t msg[3000], sig[128];
    tu_fill(msg, sizeof msg, 77);
    static const size_t chunks[] = {0, 1, 63, 64, 65, 1000};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        size_t sl = 0;
        assert_int_equal(tu_sign_chunked(alg, priv, msg, sizeof msg, chunks[i], sig, sizeof sig, &sl),
                         DSIG_OK);
        assert_int_equal(sl, 64);
        for (size_t j = 0; j < sizeof chunks / sizeof chunks[0]; j++)
            assert_int_equal(tu_verify_chunked(alg, pub, msg, sizeof msg, chunks[j], sig, sl), DSIG_OK);
    }
    /* empty message */
    size_t sl = 0;
    assert_int_equal(dsig_sign(alg, priv, "", 0, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pub, "", 0, sig, sl), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pub, "x", 1, sig, sl), DSIG_E_VERIFY);
    /* randomized: two signatures differ, both verify */
    uint8_t sig2[128];
    size_t sl2 = 0;
    assert_int_equal(dsig_sign(alg, priv, msg, 10, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_sign(alg, priv, msg, 10, sig2, sizeof sig2, &sl2), DSIG_OK);
    assert_memory_not_equal(sig, sig2, 64);
    assert_int_equal(dsig_verify(alg, pub, msg, 10, sig2, sl2), DSIG_OK);
    /* small buffer; public key cannot sign */
    assert_int_equal(dsig_sign(alg, priv, msg, 10, sig, 63, &sl), DSIG_E_BUFFER);
    assert_int_not_equal(dsig_sign(alg, pub, msg, 10, sig, sizeof sig, &sl), DSIG_OK);
}

/* A key pair of alg from a fixed 32-byte seed: an "EC" key on curve crv and its public key, put
 * through rt_roundtrip. Free both with dsig_key_free. */
static inline void rt_seeded_pair(const dsig_alg *alg, const char *crv, const uint8_t seed[32],
                                  dsig_key **priv, dsig_key **pub)
{
    dsig_keygen_params kp = {.seed = seed, .seed_len = 32};
    *priv = *pub = NULL;
    assert_int_equal(dsig_key_generate(priv, alg, &kp), DSIG_OK);
    assert_string_equal(dsig_key_kty(*priv), "EC");
    assert_string_equal(dsig_key_curve(*priv), crv);
    assert_int_equal(dsig_key_public(pub, *priv), DSIG_OK);
    rt_roundtrip(alg, *priv, *pub);
}

/* sig = a signature (64 bytes, r ‖ s) of msg = 100 test bytes, then every rt_tamper_all variant and
 * the all-zero and all-ones (r, s) must fail to verify. msg and sig stay usable for more checks. */
static inline void rt_sign_tamper(const dsig_alg *alg, const dsig_key *priv, const dsig_key *pub,
                                  uint8_t msg[100], uint8_t sig[64], size_t *sl)
{
    tu_fill(msg, 100, 5);
    assert_int_equal(dsig_sign(alg, priv, msg, 100, sig, 64, sl), DSIG_OK);
    rt_tamper_all(alg, pub, msg, 100, sig, *sl, NULL);
    uint8_t bad[64]; /* r = 0, s = 0; then r = s = 2^256 - 1 (both >= n) */
    memset(bad, 0, 64);
    assert_int_equal(dsig_verify(alg, pub, msg, 100, bad, 64), DSIG_E_VERIFY);
    memset(bad, 0xff, 64);
    assert_int_equal(dsig_verify(alg, pub, msg, 100, bad, 64), DSIG_E_VERIFY);
}

/* JWK export/import round trip (public and private) and thumbprint stability. */
static inline void rt_jwk_roundtrip(const dsig_key *priv)
{
    char *json = NULL;
    size_t jl = 0;
    dsig_key *k2 = NULL, *p2 = NULL;
    assert_int_equal(dsig_jwk_export(priv, 1, &json, &jl), DSIG_OK);
    assert_int_equal(dsig_jwk_import(&k2, json, jl), DSIG_OK);
    assert_true(dsig_key_has_private(k2));
    dsig_free(json);
    assert_int_equal(dsig_jwk_export(priv, 0, &json, &jl), DSIG_OK);
    assert_null(strstr(json, "\"d\""));
    assert_int_equal(dsig_jwk_import(&p2, json, jl), DSIG_OK);
    assert_false(dsig_key_has_private(p2));
    dsig_free(json);
    char t1[DSIG_THUMBPRINT_LEN], t2[DSIG_THUMBPRINT_LEN], t3[DSIG_THUMBPRINT_LEN];
    assert_int_equal(dsig_jwk_thumbprint(priv, t1), DSIG_OK);
    assert_int_equal(dsig_jwk_thumbprint(k2, t2), DSIG_OK);
    assert_int_equal(dsig_jwk_thumbprint(p2, t3), DSIG_OK);
    assert_string_equal(t1, t2);
    assert_string_equal(t1, t3);
    dsig_key_free(k2);
    dsig_key_free(p2);
}

/* Bad keys: off-curve point, coordinate >= p, wrong lengths, d = 0, d not matching. */
static inline void rt_bad_keys(const char *crv, const dsig_key *good)
{
    const struct rec_key *k = good->impl;
    uint8_t x[32], y[32], d[32], ff[32];
    memcpy(x, k->x, 32);
    memcpy(y, k->y, 32);
    memcpy(d, k->d, 32);
    memset(ff, 0xff, 32);
    dsig_key *out = NULL;
    assert_int_equal(rt_jwk_key(crv, x, y, d, 32, &out), DSIG_OK);
    dsig_key_free(out);
    y[31] ^= 1;
    assert_int_equal(rt_jwk_key(crv, x, y, NULL, 32, &out), DSIG_E_POINT);
    y[31] ^= 1;
    assert_int_equal(rt_jwk_key(crv, ff, y, NULL, 32, &out), DSIG_E_POINT);
    assert_int_equal(rt_jwk_key(crv, x, ff, NULL, 32, &out), DSIG_E_POINT);
    uint8_t zero[32] = {0};
    assert_int_equal(rt_jwk_key(crv, zero, zero, NULL, 32, &out), DSIG_E_POINT);
    assert_int_equal(rt_jwk_key(crv, x, y, zero, 32, &out), DSIG_E_KEY);
    assert_int_equal(rt_jwk_key(crv, x, y, ff, 32, &out), DSIG_E_KEY);
    d[31] ^= 1;
    assert_int_equal(rt_jwk_key(crv, x, y, d, 32, &out), DSIG_E_KEY);
    d[31] ^= 1;
    /* 31-byte members */
    assert_int_not_equal(rt_jwk_key(crv, x + 1, y + 1, NULL, 31, &out), DSIG_OK);
    assert_null(out);
}

#endif
