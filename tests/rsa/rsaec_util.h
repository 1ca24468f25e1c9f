/*
 * tests/rsa/rsaec_util.h — helpers shared by the RSA, ECDSA and RSA/ECDSA interop tests: build keys
 * from hex vector fields through the key type's JWK import (the same path a JWK takes).
 */
#ifndef DSIG_TESTS_RSAEC_UTIL_H
#define DSIG_TESTS_RSAEC_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "classic/pkey.h"
#include "core/internal.h"
#include "testutil.h"

/* Hex → bytes, minimal (width 0: leading zero octets dropped) or fixed-width (left-padded); returns
 * NULL when the value does not fit in `width`. Free with free(). */
static inline uint8_t *rt_hex_width(const char *hex, size_t width, size_t *len)
{
    size_t n;
    uint8_t *raw;
    if (strlen(hex) % 2) { /* ACVP sometimes drops a leading zero nibble */
        char *h = malloc(strlen(hex) + 2);
        h[0] = '0';
        strcpy(h + 1, hex);
        raw = tu_hex(h, &n);
        free(h);
    } else {
        raw = tu_hex(hex, &n);
    }
    size_t skip = 0;
    while (skip < n && raw[skip] == 0)
        skip++;
    size_t sig = n - skip;
    if (width == 0) {
        if (sig == 0)
            sig = 1, skip = n - 1;
        uint8_t *out = malloc(sig);
        memcpy(out, raw + skip, sig);
        free(raw);
        *len = sig;
        return out;
    }
    if (sig > width) {
        free(raw);
        return NULL;
    }
    uint8_t *out = calloc(1, width);
    memcpy(out + width - sig, raw + skip, sig);
    free(raw);
    *len = width;
    return out;
}

/* out = sha(msg) ("SHA-256", "SHA-384", "SHA-512"); its length. The digest signing path
 * (dsig/prehashed.h) is checked against the same vectors as the message path. */
static inline size_t rt_digest(const char *sha, const uint8_t *msg, size_t ml, uint8_t out[64])
{
    EVP_MD *md = EVP_MD_fetch(NULL, sha, NULL);
    unsigned n = 0;
    assert_non_null(md);
    assert_int_equal(EVP_Digest(msg, ml, out, &n, md, NULL), 1);
    EVP_MD_free(md);
    return n;
}

/* Import a key of type t from named hex members (width as in rt_hex_width). Returns the import code. */
static inline int rt_key_hex(const struct dsig_keytype *t, const char *const *names,
                             const char *const *hex, size_t count, size_t width, dsig_key **out)
{
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t total = 0;
    for (const char *const *p = t->pub_members; *p; p++)
        m[total++] = (dsig_jwk_member){.name = *p};
    for (const char *const *p = t->priv_members; *p; p++)
        m[total++] = (dsig_jwk_member){.name = *p};
    for (size_t i = 0; i < count; i++) {
        if (!hex[i])
            continue;
        for (size_t j = 0; j < total; j++) {
            if (strcmp(m[j].name, names[i]) == 0) {
                m[j].data = rt_hex_width(hex[i], width, &m[j].len);
                if (!m[j].data) { /* does not fit: pass one byte too many so the import rejects it */
                    m[j].len = width + 1;
                    m[j].data = calloc(1, width + 1);
                    m[j].data[0] = 1;
                }
            }
        }
    }
    *out = NULL;
    struct dsig_key *k = dsig_key_new(t);
    assert_non_null(k);
    int rc = t->import_jwk(k, m, total);
    for (size_t j = 0; j < total; j++)
        free(m[j].data);
    if (rc) {
        dsig_key_free(k);
        return rc;
    }
    *out = k;
    return rc;
}

/* Import raw member bytes (already decoded) of key type t. */
static inline int rt_key_raw(const struct dsig_keytype *t, const char *const *names,
                             const uint8_t *const *data, const size_t *lens, size_t count, dsig_key **out)
{
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t total = 0;
    for (const char *const *p = t->pub_members; *p; p++)
        m[total++] = (dsig_jwk_member){.name = *p};
    for (const char *const *p = t->priv_members; *p; p++)
        m[total++] = (dsig_jwk_member){.name = *p};
    for (size_t i = 0; i < count; i++)
        for (size_t j = 0; j < total; j++)
            if (strcmp(m[j].name, names[i]) == 0) {
                m[j].data = (uint8_t *)data[i];
                m[j].len = lens[i];
            }
    *out = NULL;
    struct dsig_key *k = dsig_key_new(t);
    assert_non_null(k);
    int rc = t->import_jwk(k, m, total);
    if (rc) {
        dsig_key_free(k);
        return rc;
    }
    *out = k;
    return rc;
}

/* Verify with the outcome demanded by a Wycheproof "result" (valid/invalid/acceptable). */
static inline int rt_expect(const char *result, int rc)
{
    if (strcmp(result, "valid") == 0)
        return rc == DSIG_OK;
    if (strcmp(result, "invalid") == 0)
        return rc == DSIG_E_VERIFY;
    return rc == DSIG_OK || rc == DSIG_E_VERIFY;
}

/* Round trip for one algorithm and key: streaming with chunk sizes 1, 7, 65536 and one-shot, the empty
 * message, and tampering with the message and the signature. */
static inline void rt_roundtrip(const dsig_alg *alg, const dsig_key *key, size_t msg_len)
{
    uint8_t *msg = malloc(msg_len + 1);
    tu_fill(msg, msg_len, 42);
    size_t cap = dsig_alg_sig_max(alg);
    uint8_t *sig = malloc(cap), *sig2 = malloc(cap);
    size_t sl = 0, sl2 = 0;
    static const size_t chunks[] = {1, 7, 65536, 0};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(tu_sign_chunked(alg, key, msg, msg_len, chunks[i], sig, cap, &sl), DSIG_OK);
        for (size_t j = 0; j < 4; j++)
            assert_int_equal(tu_verify_chunked(alg, key, msg, msg_len, chunks[j], sig, sl), DSIG_OK);
    }
    assert_int_equal(dsig_sign(alg, key, msg, msg_len, sig2, cap, &sl2), DSIG_OK);
    assert_int_equal(sl2, sl);
    assert_int_equal(dsig_verify(alg, key, msg, msg_len, sig2, sl2), DSIG_OK);
    if (!(dsig_alg_flags(alg) & DSIG_ALG_RANDOMIZED))
        assert_memory_equal(sig, sig2, sl); /* PKCS#1 v1.5 is deterministic */
    /* empty message, streaming and one-shot */
    assert_int_equal(dsig_sign(alg, key, NULL, 0, sig2, cap, &sl2), DSIG_OK);
    assert_int_equal(tu_verify_chunked(alg, key, msg, 0, 7, sig2, sl2), DSIG_OK);
    assert_int_equal(dsig_verify(alg, key, "", 0, sig2, sl2), DSIG_OK);
    assert_int_equal(dsig_verify(alg, key, "x", 1, sig2, sl2), DSIG_E_VERIFY);
    /* tampering */
    msg[msg_len / 2] ^= 0x01;
    assert_int_equal(dsig_verify(alg, key, msg, msg_len, sig, sl), DSIG_E_VERIFY);
    msg[msg_len / 2] ^= 0x01;
    for (size_t pos = 0; pos < sl; pos += sl / 5 + 1) {
        sig[pos] ^= 0x80;
        assert_int_equal(tu_verify_chunked(alg, key, msg, msg_len, 65536, sig, sl), DSIG_E_VERIFY);
        sig[pos] ^= 0x80;
    }
    sig[sl - 1] ^= 0x01;
    assert_int_equal(dsig_verify(alg, key, msg, msg_len, sig, sl), DSIG_E_VERIFY);
    sig[sl - 1] ^= 0x01;
    assert_int_equal(dsig_verify(alg, key, msg, msg_len, sig, sl - 1), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(alg, key, msg, msg_len, sig, 0), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(alg, key, msg, msg_len + 1, sig, sl), DSIG_E_VERIFY);
    /* buffer too small */
    assert_int_equal(dsig_sign(alg, key, msg, msg_len, sig2, sl - 1, &sl2), DSIG_E_BUFFER);
    /* the public half verifies too */
    dsig_key *pub = NULL;
    assert_int_equal(dsig_key_public(&pub, key), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pub, msg, msg_len, sig, sl), DSIG_OK);
    assert_int_equal(dsig_sign(alg, pub, msg, msg_len, sig2, cap, &sl2), DSIG_E_NO_PRIVATE);
    dsig_key_free(pub);
    free(msg);
    free(sig);
    free(sig2);
}

/* PEM export → import round trip (private and public); the re-imported keys sign/verify together. */
static inline void rt_pem_roundtrip(const dsig_alg *alg, const dsig_key *key)
{
    char *pem = NULL, *pub_pem = NULL;
    size_t plen = 0, publen = 0;
    assert_int_equal(dsig_key_export_pem(key, 1, &pem, &plen), DSIG_OK);
    assert_non_null(strstr(pem, "-----BEGIN PRIVATE KEY-----"));
    assert_int_equal(dsig_key_export_pem(key, 0, &pub_pem, &publen), DSIG_OK);
    assert_non_null(strstr(pub_pem, "-----BEGIN PUBLIC KEY-----"));
    assert_null(strstr(pub_pem, "PRIVATE"));
    dsig_key *k1 = NULL, *k2 = NULL;
    assert_int_equal(dsig_key_import_pem(&k1, pem, plen), DSIG_OK);
    assert_int_equal(dsig_key_import_pem(&k2, pub_pem, publen), DSIG_OK);
    assert_true(dsig_key_has_private(k1));
    assert_false(dsig_key_has_private(k2));
    assert_int_equal(dsig_key_bits(k1), dsig_key_bits(key));
    assert_ptr_equal(k1->type, key->type);
    /* exporting the re-imported key gives the same PEM text */
    char *pem2 = NULL;
    size_t plen2 = 0;
    assert_int_equal(dsig_key_export_pem(k1, 1, &pem2, &plen2), DSIG_OK);
    assert_int_equal(plen2, plen);
    assert_memory_equal(pem2, pem, plen);
    uint8_t sig[1024];
    size_t sl;
    assert_int_equal(dsig_sign(alg, k1, "pem", 3, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_verify(alg, k2, "pem", 3, sig, sl), DSIG_OK);
    assert_int_equal(dsig_verify(alg, key, "pem", 3, sig, sl), DSIG_OK);
    dsig_key_free(k1);
    dsig_key_free(k2);
    dsig_free(pem);
    dsig_free(pem2);
    dsig_free(pub_pem);
}

/* JWK member export → import round trip through the key type. */
static inline void rt_jwk_roundtrip(const dsig_key *key)
{
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t n = 0;
    for (int priv = 0; priv < 2; priv++) {
        assert_int_equal(key->type->export_jwk(key, priv, m, &n), DSIG_OK);
        struct dsig_key *k = dsig_key_new(key->type);
        assert_int_equal(key->type->import_jwk(k, m, n), DSIG_OK);
        assert_int_equal(dsig_key_has_private(k), priv);
        assert_int_equal(dsig_key_bits(k), dsig_key_bits(key));
        dsig_jwk_member m2[DSIG_JWK_MAX_MEMBERS];
        size_t n2 = 0;
        assert_int_equal(key->type->export_jwk(k, priv, m2, &n2), DSIG_OK);
        assert_int_equal(n2, n);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(m2[i].name, m[i].name);
            assert_int_equal(m2[i].len, m[i].len);
            if (m[i].len)
                assert_memory_equal(m2[i].data, m[i].data, m[i].len);
            dsig_xfree(m[i].data, m[i].len);
            dsig_xfree(m2[i].data, m2[i].len);
        }
        dsig_key_free(k);
    }
}

/* The group of an ACVP file whose tgId equals `id` (pairs prompt with expectedResults). */
static inline json_t *acvp_group(json_t *root, json_int_t id)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(root, "testGroups"), i, g)
    {
        json_t *v = json_object_get(g, "tgId");
        json_int_t gid = json_is_integer(v) ? json_integer_value(v) : atoll(json_string_value(v));
        if (gid == id)
            return g;
    }
    return NULL;
}

/* An ACVP id (a string or an integer). */
static inline json_int_t acvp_id(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? json_integer_value(v) : atoll(json_string_value(v));
}

/* The test of an ACVP group with tcId `id`. */
static inline json_t *acvp_test(json_t *g, json_int_t id)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(g, "tests"), i, t) if (acvp_id(t, "tcId") == id) return t;
    return NULL;
}

/* ACVP testPassed: a boolean or the string "True"/"False". */
static inline int acvp_passed(json_t *t)
{
    json_t *tp = json_object_get(t, "testPassed");
    return json_is_boolean(tp) ? json_is_true(tp) : strcmp(json_string_value(tp), "True") == 0;
}

#endif
