/*
 * EdDSA streaming properties: randomized one-pass signatures that the standard (one-shot RFC 8032)
 * verifier accepts, tampering of every bit of R, S and the message, empty and 1 MiB messages in odd
 * chunks, no allocation per update, key validation (small-order, mixed-order, non-canonical points),
 * registry metadata, PEM and seeded key generation.
 */
#include <stdio.h>

#include <gcrypt.h>

#include "classic/eddsa.h"
#include "eddsa_testlib.h"

/* A seeded key for an algorithm (reproducible). */
static dsig_key *seeded_key(const dsig_alg *alg, uint8_t tag)
{
    uint8_t seed[32];
    memset(seed, tag, sizeof seed);
    dsig_keygen_params p = {.bits = 0, .seed = seed, .seed_len = sizeof seed};
    dsig_key *k;
    assert_int_equal(dsig_key_generate(&k, alg, &p), DSIG_OK);
    return k;
}

static void test_registry(void **state)
{
    (void)state;
    const dsig_alg *e1 = et_alg(0), *e4 = et_alg(1);
    assert_string_equal(dsig_alg_family(e1), "EdDSA");
    assert_string_equal(dsig_alg_family(e4), "EdDSA");
    assert_string_equal(dsig_alg_kty(e1), "OKP");
    assert_string_equal(dsig_alg_curve(e1), "Ed25519");
    assert_string_equal(dsig_alg_curve(e4), "Ed448");
    assert_string_equal(dsig_alg_baseline(e1), "SHA-512");
    assert_string_equal(dsig_alg_baseline(e4), "SHAKE256");
    assert_int_equal(dsig_alg_security_bits(e1), 128);
    assert_int_equal(dsig_alg_security_bits(e4), 224);
    assert_int_equal(dsig_alg_sig_max(e1), 64);
    assert_int_equal(dsig_alg_sig_max(e4), 114);
    unsigned f = DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED | DSIG_ALG_DETERMINISTIC_ONESHOT;
    assert_int_equal(dsig_alg_flags(e1), f);
    assert_int_equal(dsig_alg_flags(e4), f);
    assert_null(dsig_alg_by_name("EdDSA")); /* the JOSE layer maps the legacy name */
}

/* Two streaming signatures of one message differ, and both pass the one-shot RFC verifier. */
static void roundtrip(int ed448)
{
    const dsig_alg *alg = et_alg(ed448);
    dsig_key *key = seeded_key(alg, 1), *pub;
    assert_int_equal(dsig_key_public(&pub, key), DSIG_OK);
    uint8_t msg[3000];
    tu_fill(msg, sizeof msg, 42);
    uint8_t s1[114], s2[114], det[114];
    size_t l1, l2, ld;
    assert_int_equal(tu_sign_chunked(alg, key, msg, sizeof msg, 333, s1, sizeof s1, &l1), DSIG_OK);
    assert_int_equal(tu_sign_chunked(alg, key, msg, sizeof msg, 0, s2, sizeof s2, &l2), DSIG_OK);
    assert_int_equal(l1, dsig_alg_sig_max(alg));
    assert_int_equal(l2, l1);
    assert_memory_not_equal(s1, s2, l1); /* randomized R */
    assert_int_equal(dsig_verify(alg, pub, msg, sizeof msg, s1, l1), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pub, msg, sizeof msg, s2, l2), DSIG_OK);
    assert_int_equal(tu_verify_chunked(alg, pub, msg, sizeof msg, 1, s1, l1), DSIG_OK);
    /* One-shot signing is deterministic (RFC 8032). */
    assert_int_equal(dsig_sign(alg, key, msg, sizeof msg, det, sizeof det, &ld), DSIG_OK);
    assert_int_equal(dsig_sign(alg, key, msg, sizeof msg, s2, sizeof s2, &l2), DSIG_OK);
    assert_memory_equal(det, s2, ld);
    assert_int_equal(tu_verify_chunked(alg, pub, msg, sizeof msg, 100, det, ld), DSIG_OK);
    dsig_key_free(pub);
    dsig_key_free(key);
}

static void test_roundtrip_ed25519(void **state)
{
    (void)state;
    roundtrip(0);
}

static void test_roundtrip_ed448(void **state)
{
    (void)state;
    roundtrip(1);
}

/* Every bit of R, S and of the message, flipped one at a time, is rejected by both verifiers. */
static void tamper(int ed448)
{
    const dsig_alg *alg = et_alg(ed448);
    dsig_key *key = seeded_key(alg, 2);
    uint8_t msg[24], sig[114];
    size_t sl;
    tu_fill(msg, sizeof msg, 7);
    assert_int_equal(tu_sign_chunked(alg, key, msg, sizeof msg, 5, sig, sizeof sig, &sl), DSIG_OK);
    for (size_t bit = 0; bit < sl * 8; bit++) {
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dsig_verify(alg, key, msg, sizeof msg, sig, sl), DSIG_E_VERIFY);
        assert_int_equal(tu_verify_chunked(alg, key, msg, sizeof msg, 0, sig, sl), DSIG_E_VERIFY);
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    for (size_t bit = 0; bit < sizeof msg * 8; bit++) {
        msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dsig_verify(alg, key, msg, sizeof msg, sig, sl), DSIG_E_VERIFY);
        assert_int_equal(tu_verify_chunked(alg, key, msg, sizeof msg, 3, sig, sl), DSIG_E_VERIFY);
        msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    /* Truncated, extended, and the untouched original. */
    assert_int_equal(tu_verify_chunked(alg, key, msg, sizeof msg, 0, sig, sl - 1), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(alg, key, msg, sizeof msg, sig, sl - 1), DSIG_E_VERIFY);
    assert_int_equal(tu_verify_chunked(alg, key, msg, sizeof msg - 1, 0, sig, sl), DSIG_E_VERIFY);
    assert_int_equal(tu_verify_chunked(alg, key, msg, sizeof msg, 0, sig, 0), DSIG_E_VERIFY);
    assert_int_equal(tu_verify_chunked(alg, key, msg, sizeof msg, 0, sig, sl), DSIG_OK);
    /* S + L (same value mod L, non-canonical) is malleability: rejected. */
    if (!ed448) {
        static const uint8_t L[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                      0xa2, 0xde, 0xf9, 0xde, 0x14, 0,    0,    0,    0,    0,    0,
                                      0,    0,    0,    0,    0,    0,    0,    0,    0,    0x10};
        uint8_t m[64];
        memcpy(m, sig, 64);
        unsigned c = 0;
        for (int i = 0; i < 32; i++) {
            c += (unsigned)m[32 + i] + L[i];
            m[32 + i] = (uint8_t)c;
            c >>= 8;
        }
        assert_int_equal(tu_verify_chunked(alg, key, msg, sizeof msg, 0, m, 64), DSIG_E_VERIFY);
        assert_int_equal(dsig_verify(alg, key, msg, sizeof msg, m, 64), DSIG_E_VERIFY);
    }
    dsig_key_free(key);
}

static void test_tamper_ed25519(void **state)
{
    (void)state;
    tamper(0);
}

static void test_tamper_ed448(void **state)
{
    (void)state;
    tamper(1);
}

/* Empty message: no update at all, and zero-length updates. */
static void empty(int ed448)
{
    const dsig_alg *alg = et_alg(ed448);
    dsig_key *key = seeded_key(alg, 3);
    uint8_t sig[114];
    size_t sl;
    dsig_sign_ctx *c;
    assert_int_equal(dsig_sign_init(&c, alg, key), DSIG_OK);
    assert_int_equal(dsig_sign_update(c, "", 0), DSIG_OK);
    assert_int_equal(dsig_sign_final(c, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_verify(alg, key, NULL, 0, sig, sl), DSIG_OK);
    dsig_verify_ctx *v;
    assert_int_equal(dsig_verify_init(&v, alg, key, sig, sl), DSIG_OK);
    assert_int_equal(dsig_verify_final(v), DSIG_OK);
    assert_int_equal(tu_verify_chunked(alg, key, (const uint8_t *)"x", 1, 0, sig, sl), DSIG_E_VERIFY);
    dsig_key_free(key);
}

static void test_empty(void **state)
{
    (void)state;
    empty(0);
    empty(1);
}

/* 1 MiB in odd chunk sizes; signer and verifier chunk differently; the one-shot verifier agrees. */
static void test_one_mib(void **state)
{
    (void)state;
    size_t n = 1u << 20;
    uint8_t *msg = malloc(n);
    assert_non_null(msg);
    tu_fill(msg, n, 99);
    static const size_t sizes[][2] = {{4093, 65537}, {1000003, 17}, {13, 0}};
    for (int ed448 = 0; ed448 < 2; ed448++) {
        const dsig_alg *alg = et_alg(ed448);
        dsig_key *key = seeded_key(alg, 4);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            uint8_t sig[114];
            size_t sl;
            assert_int_equal(tu_sign_chunked(alg, key, msg, n, sizes[i][0], sig, sizeof sig, &sl),
                             DSIG_OK);
            assert_int_equal(tu_verify_chunked(alg, key, msg, n, sizes[i][1], sig, sl), DSIG_OK);
            assert_int_equal(dsig_verify(alg, key, msg, n, sig, sl), DSIG_OK);
            msg[n - 1] ^= 1;
            assert_int_equal(tu_verify_chunked(alg, key, msg, n, sizes[i][1], sig, sl), DSIG_E_VERIFY);
            msg[n - 1] ^= 1;
        }
        dsig_key_free(key);
    }
    free(msg);
}

/* The per-chunk update allocates nothing (library counters). */
static void test_no_alloc_per_update(void **state)
{
    (void)state;
    uint8_t buf[1000];
    tu_fill(buf, sizeof buf, 5);
    for (int ed448 = 0; ed448 < 2; ed448++) {
        const dsig_alg *alg = et_alg(ed448);
        dsig_key *key = seeded_key(alg, 5);
        dsig_sign_ctx *c;
        assert_int_equal(dsig_sign_init(&c, alg, key), DSIG_OK);
        dsig_alloc_stats st;
        dsig_alloc_stats_reset();
        for (int i = 0; i < 1000; i++)
            assert_int_equal(dsig_sign_update(c, buf, (size_t)i % sizeof buf), DSIG_OK);
        dsig_alloc_stats_get(&st);
        assert_int_equal(st.count, 0);
        uint8_t sig[114];
        size_t sl;
        assert_int_equal(dsig_sign_final(c, sig, sizeof sig, &sl), DSIG_OK);
        dsig_key_free(key);
    }
}

/* Misuse and error codes. */
static void test_errors(void **state)
{
    (void)state;
    const dsig_alg *e1 = et_alg(0), *e4 = et_alg(1);
    dsig_key *k1 = seeded_key(e1, 6), *k4 = seeded_key(e4, 6), *p1;
    uint8_t sig[114];
    size_t sl;
    assert_int_equal(dsig_sign(e1, k1, "m", 1, sig, 63, &sl), DSIG_E_BUFFER);
    assert_int_equal(tu_sign_chunked(e1, k1, (const uint8_t *)"m", 1, 0, sig, 63, &sl), DSIG_E_BUFFER);
    assert_int_equal(dsig_sign(e4, k4, "m", 1, sig, 113, &sl), DSIG_E_BUFFER);
    /* A generated key is bound to its algorithm; unbound, the type mismatch is what is reported. */
    assert_int_equal(dsig_sign(e4, k1, "m", 1, sig, sizeof sig, &sl), DSIG_E_ALG_NOT_ALLOWED);
    assert_int_equal(dsig_key_set_alg(k1, NULL), DSIG_OK);
    assert_int_equal(dsig_key_set_alg(k4, NULL), DSIG_OK);
    assert_int_equal(dsig_sign(e4, k1, "m", 1, sig, sizeof sig, &sl), DSIG_E_KEY_MISMATCH);
    assert_int_equal(dsig_key_set_alg(k1, e4), DSIG_E_KEY_MISMATCH);
    dsig_verify_ctx *v;
    assert_int_equal(dsig_verify_init(&v, e1, k4, sig, 64), DSIG_E_KEY_MISMATCH);
    assert_int_equal(dsig_key_public(&p1, k1), DSIG_OK);
    assert_int_equal(dsig_sign(e1, p1, "m", 1, sig, sizeof sig, &sl), DSIG_E_NO_PRIVATE);
    dsig_sign_ctx *c;
    assert_int_equal(dsig_sign_init(&c, e1, p1), DSIG_E_NO_PRIVATE);
    /* JWK member sizes. */
    uint8_t z[57] = {0};
    dsig_key *k;
    assert_int_equal(et_key(&dsig_keytype_ed25519, z, 31, NULL, 0, &k), DSIG_E_KEY);
    assert_int_equal(et_key(&dsig_keytype_ed448, z, 56, NULL, 0, &k), DSIG_E_KEY);
    assert_int_equal(et_key(&dsig_keytype_ed25519, NULL, 0, NULL, 0, &k), DSIG_E_KEY);
    assert_true(dsig_last_error_detail()[0] != '\0');
    /* Fixed key sizes. */
    dsig_keygen_params bad = {.bits = 2048};
    assert_int_equal(dsig_key_generate(&k, e1, &bad), DSIG_E_ARG);
    dsig_key_free(p1);
    dsig_key_free(k1);
    dsig_key_free(k4);
}

/* Invalid public keys: identity, order-2, non-canonical, off-curve, mixed order. */
static void test_bad_points(void **state)
{
    (void)state;
    dsig_key *k;
    uint8_t p[57] = {0};
    /* Ed25519 identity (0,1), and y = p (non-canonical encoding of 0). */
    p[0] = 1;
    assert_int_equal(et_key(&dsig_keytype_ed25519, p, 32, NULL, 0, &k), DSIG_E_POINT);
    memset(p, 0xff, 32);
    p[0] = 0xed;
    p[31] = 0x7f;
    assert_int_equal(et_key(&dsig_keytype_ed25519, p, 32, NULL, 0, &k), DSIG_E_POINT);
    /* Ed448 identity; (0,−1) of order 2; y = p (non-canonical); stray bits in the last byte;
     * y = 2 (not on the curve). */
    memset(p, 0, 57);
    p[0] = 1;
    assert_int_equal(et_key(&dsig_keytype_ed448, p, 57, NULL, 0, &k), DSIG_E_POINT);
    /* p − 1 = 2^448 − 2^224 − 2: bytes fe ff .. ff (28 bytes) then fe ff .. ff */
    memset(p, 0xff, 56);
    p[0] = 0xfe;
    p[28] = 0xfe;
    assert_int_equal(et_key(&dsig_keytype_ed448, p, 57, NULL, 0, &k), DSIG_E_POINT);
    p[0] = 0xff; /* y = p */
    assert_int_equal(et_key(&dsig_keytype_ed448, p, 57, NULL, 0, &k), DSIG_E_POINT);
    memset(p, 0, 57);
    p[0] = 2;
    assert_int_equal(et_key(&dsig_keytype_ed448, p, 57, NULL, 0, &k), DSIG_E_POINT);

    /* A valid Ed448 key plus the order-2 point: (x, y) + (0, −1) = (−x, −y). Encoding: p − y, and
     * the sign bit flips (x ≠ 0, p odd). It is on the curve but outside the prime-order subgroup. */
    dsig_key *good = seeded_key(et_alg(1), 8);
    dsig_jwk_member m[2];
    size_t n;
    assert_int_equal(dsig_keytype_ed448.export_jwk(good, 0, m, &n), DSIG_OK);
    assert_int_equal(dsig_ed448_check_public(m[0].data), DSIG_OK);
    uint8_t be[56];
    for (int i = 0; i < 56; i++)
        be[i] = m[0].data[55 - i];
    gcry_mpi_t y, P = NULL;
    assert_int_equal(gcry_mpi_scan(&y, GCRYMPI_FMT_USG, be, 56, NULL), 0);
    assert_int_equal(gcry_mpi_scan(&P, GCRYMPI_FMT_HEX,
                                   "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFE"
                                   "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
                                   0, NULL),
                     0);
    gcry_mpi_sub(y, P, y);
    size_t w;
    uint8_t nb[56] = {0}, mixed[57] = {0};
    assert_int_equal(gcry_mpi_print(GCRYMPI_FMT_USG, nb, 56, &w, y), 0);
    for (size_t i = 0; i < w; i++)
        mixed[i] = nb[w - 1 - i];
    mixed[56] = (uint8_t)(m[0].data[56] ^ 0x80);
    assert_int_equal(dsig_ed448_check_public(mixed), DSIG_E_POINT);
    assert_int_equal(et_key(&dsig_keytype_ed448, mixed, 57, NULL, 0, &k), DSIG_E_POINT);
    gcry_mpi_release(y);
    gcry_mpi_release(P);
    dsig_xfree(m[0].data, m[0].len);
    dsig_key_free(good);
}

/* PEM export/import (PKCS#8 and SPKI), and deterministic seeded key generation. */
static void test_pem_and_seeded(void **state)
{
    (void)state;
    for (int ed448 = 0; ed448 < 2; ed448++) {
        const dsig_alg *alg = et_alg(ed448);
        dsig_key *a = seeded_key(alg, 9), *b = seeded_key(alg, 9), *c = seeded_key(alg, 10);
        uint8_t sa[114], sb[114], sc[114];
        size_t la, lb, lc;
        assert_int_equal(dsig_sign(alg, a, "abc", 3, sa, sizeof sa, &la), DSIG_OK);
        assert_int_equal(dsig_sign(alg, b, "abc", 3, sb, sizeof sb, &lb), DSIG_OK);
        assert_int_equal(dsig_sign(alg, c, "abc", 3, sc, sizeof sc, &lc), DSIG_OK);
        assert_memory_equal(sa, sb, la);
        assert_memory_not_equal(sa, sc, la);
        char *pem;
        size_t pl;
        dsig_key *imp;
        assert_int_equal(dsig_key_export_pem(a, 1, &pem, &pl), DSIG_OK);
        assert_int_equal(dsig_key_import_pem(&imp, pem, pl), DSIG_OK);
        dsig_free(pem);
        assert_true(dsig_key_has_private(imp));
        assert_int_equal(dsig_sign(alg, imp, "abc", 3, sb, sizeof sb, &lb), DSIG_OK);
        assert_memory_equal(sa, sb, la);
        dsig_key_free(imp);
        assert_int_equal(dsig_key_export_pem(a, 0, &pem, &pl), DSIG_OK);
        assert_int_equal(dsig_key_import_pem(&imp, pem, pl), DSIG_OK);
        dsig_free(pem);
        assert_false(dsig_key_has_private(imp));
        assert_string_equal(dsig_key_curve(imp), ed448 ? "Ed448" : "Ed25519");
        assert_int_equal(dsig_key_bits(imp), ed448 ? 456 : 256);
        assert_int_equal(dsig_verify(alg, imp, "abc", 3, sa, la), DSIG_OK);
        dsig_key_free(imp);
        dsig_key_free(a);
        dsig_key_free(b);
        dsig_key_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),       cmocka_unit_test(test_roundtrip_ed25519),
        cmocka_unit_test(test_roundtrip_ed448), cmocka_unit_test(test_tamper_ed25519),
        cmocka_unit_test(test_tamper_ed448),   cmocka_unit_test(test_empty),
        cmocka_unit_test(test_one_mib),        cmocka_unit_test(test_no_alloc_per_update),
        cmocka_unit_test(test_errors),         cmocka_unit_test(test_bad_points),
        cmocka_unit_test(test_pem_and_seeded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
