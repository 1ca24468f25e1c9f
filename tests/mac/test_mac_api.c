/*
 * MAC provider through the public API, for every registered algorithm of kty "oct": round trip,
 * chunking equivalence, empty message, tampering, key-size policy, key-type mismatch, seeded keygen,
 * registry properties. Known-answer vectors are in test_mac_vectors.c.
 */
#include <string.h>

#include "core/internal.h"
#include "mac/mac.h"
#include "testutil.h"

/* Every registered algorithm whose key type is oct (there must be exactly the 14 MACs). */
static size_t mac_algs(const dsig_alg **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (strcmp(dsig_alg_kty(a), "oct") == 0 && n < cap)
            out[n++] = a;
    }
    return n;
}

/* A raw-bytes oct key through the key type's JWK import (what the JOSE layer calls). */
static dsig_key *oct_key(const uint8_t *k, size_t len)
{
    dsig_key *key = dsig_key_new(&dsig_keytype_oct);
    assert_non_null(key);
    dsig_jwk_member m = {.name = "k", .data = (uint8_t *)k, .len = len};
    assert_int_equal(dsig_keytype_oct.import_jwk(key, &m, 1), DSIG_OK);
    key->has_private = 1;
    return key;
}

/* The 14 MAC descriptors carry the documented names, baselines, sizes and flags. */
static void test_registry(void **state)
{
    (void)state;
    static const struct {
        const char *name, *family, *baseline;
        size_t tag;
        unsigned min_bits, def_bits;
    } want[] = {
        {"HS256", "HMAC", "SHA-256", 32, 256, 256},
        {"HS384", "HMAC", "SHA-384", 48, 384, 384},
        {"HS512", "HMAC", "SHA-512", 64, 512, 512},
        {"HMAC-SHA3-256", "HMAC", "SHA3-256", 32, 256, 256},
        {"HMAC-SHA3-384", "HMAC", "SHA3-384", 48, 384, 384},
        {"HMAC-SHA3-512", "HMAC", "SHA3-512", 64, 512, 512},
        {"KMAC128", "KMAC", "cSHAKE128", 32, 128, 256},
        {"KMAC256", "KMAC", "cSHAKE256", 64, 256, 512},
        {"CMAC-AES-128", "CMAC", "AES-128-CBC", 16, 128, 128},
        {"CMAC-AES-192", "CMAC", "AES-192-CBC", 16, 192, 192},
        {"CMAC-AES-256", "CMAC", "AES-256-CBC", 16, 256, 256},
        /* regional HMACs on libgcrypt (docs/regional.md) */
        {"HMAC-SM3", "HMAC", "SM3", 32, 256, 256},
        {"HMAC-STREEBOG-256", "HMAC", "Streebog-256", 32, 256, 256},
        {"HMAC-STREEBOG-512", "HMAC", "Streebog-512", 64, 512, 512},
    };
    const dsig_alg *algs[32];
    assert_int_equal(mac_algs(algs, 32), sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const dsig_alg *a = dsig_alg_by_name(want[i].name);
        assert_non_null(a);
        assert_string_equal(dsig_alg_family(a), want[i].family);
        assert_string_equal(dsig_alg_baseline(a), want[i].baseline);
        assert_string_equal(dsig_alg_kty(a), "oct");
        assert_null(dsig_alg_curve(a));
        assert_int_equal(dsig_alg_sig_max(a), want[i].tag);
        assert_int_equal(a->min_key_bits, want[i].min_bits);
        assert_int_equal(dsig_alg_default_bits(a), want[i].def_bits);
        assert_int_equal(dsig_alg_flags(a), DSIG_ALG_SYMMETRIC | DSIG_ALG_ONE_PASS);
        assert_true(dsig_alg_security_bits(a) >= 128);
        assert_non_null(dsig_alg_description(a));
    }
    assert_null(dsig_alg_by_name("hs256")); /* JOSE names are case-sensitive */
}

/* Round trip, chunking equivalence, empty message and tampering for one algorithm. */
static void check_alg(const dsig_alg *alg)
{
    dsig_key *key = NULL;
    assert_int_equal(dsig_key_generate(&key, alg, NULL), DSIG_OK);
    assert_int_equal(dsig_key_bits(key), dsig_alg_default_bits(alg));
    assert_string_equal(dsig_key_kty(key), "oct");
    assert_true(dsig_key_has_private(key));
    dsig_key *pub = NULL;
    assert_int_equal(dsig_key_public(&pub, key), DSIG_E_UNSUPPORTED);
    assert_null(pub);

    const size_t len = 200000; /* > 3 chunks of 64 KiB */
    uint8_t *msg = malloc(len);
    assert_non_null(msg);
    tu_fill(msg, len, 42);
    size_t smax = dsig_alg_sig_max(alg);
    uint8_t ref[64], sig[80]; /* sig has room for an over-long tag */
    size_t ref_len = 0, sig_len = 0;

    assert_int_equal(dsig_sign(alg, key, msg, len, ref, sizeof ref, &ref_len), DSIG_OK);
    assert_int_equal(ref_len, smax);
    assert_int_equal(dsig_verify(alg, key, msg, len, ref, ref_len), DSIG_OK);
    /* Deterministic: same key and message, same tag. */
    assert_int_equal(dsig_sign(alg, key, msg, len, sig, sizeof sig, &sig_len), DSIG_OK);
    assert_memory_equal(sig, ref, smax);

    static const size_t chunks[] = {1, 7, 65536, 0};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        /* 1-byte chunks over the whole 200 kB would dominate the ASan run: use a 20 kB prefix. */
        size_t n = chunks[c] == 1 ? 20000 : len;
        uint8_t r1[64];
        size_t r1_len;
        assert_int_equal(dsig_sign(alg, key, msg, n, r1, sizeof r1, &r1_len), DSIG_OK);
        assert_int_equal(tu_sign_chunked(alg, key, msg, n, chunks[c], sig, sizeof sig, &sig_len),
                         DSIG_OK);
        assert_int_equal(sig_len, smax);
        assert_memory_equal(sig, r1, smax);
        assert_int_equal(tu_verify_chunked(alg, key, msg, n, chunks[c], r1, r1_len), DSIG_OK);
    }

    /* Empty message, with and without an empty update. */
    uint8_t e1[64], e2[64];
    size_t e1_len, e2_len;
    assert_int_equal(dsig_sign(alg, key, NULL, 0, e1, sizeof e1, &e1_len), DSIG_OK);
    dsig_sign_ctx *sc;
    assert_int_equal(dsig_sign_init(&sc, alg, key), DSIG_OK);
    assert_int_equal(dsig_sign_update(sc, "", 0), DSIG_OK);
    assert_int_equal(dsig_sign_final(sc, e2, sizeof e2, &e2_len), DSIG_OK);
    assert_int_equal(e1_len, smax);
    assert_int_equal(e2_len, smax);
    assert_memory_equal(e1, e2, smax);
    assert_int_equal(dsig_verify(alg, key, "", 0, e1, e1_len), DSIG_OK);
    assert_int_equal(dsig_verify(alg, key, "x", 1, e1, e1_len), DSIG_E_VERIFY);

    /* Every bit of the tag matters (short message so that all flips stay cheap). */
    uint8_t st[64];
    size_t st_len;
    assert_int_equal(dsig_sign(alg, key, msg, 1000, st, sizeof st, &st_len), DSIG_OK);
    assert_int_equal(dsig_verify(alg, key, msg, 1000, st, st_len), DSIG_OK);
    for (size_t bit = 0; bit < 8 * smax; bit++) {
        memcpy(sig, st, smax);
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dsig_verify(alg, key, msg, 1000, sig, smax), DSIG_E_VERIFY);
    }
    /* Tamper the full-message tag: a bit flip anywhere in the message fails. */
    msg[len / 2] ^= 0x10;
    assert_int_equal(dsig_verify(alg, key, msg, len, ref, ref_len), DSIG_E_VERIFY);
    msg[len / 2] ^= 0x10;
    msg[len - 1] ^= 0x01;
    assert_int_equal(dsig_verify(alg, key, msg, len, ref, ref_len), DSIG_E_VERIFY);
    msg[len - 1] ^= 0x01;
    for (size_t bit = 0; bit < 8 * smax; bit += 7) {
        memcpy(sig, ref, smax);
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dsig_verify(alg, key, msg, len, sig, smax), DSIG_E_VERIFY);
    }
    /* Wrong tag lengths are DSIG_E_VERIFY, not errors: empty, truncated, extended. */
    assert_int_equal(dsig_verify(alg, key, msg, len, NULL, 0), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(alg, key, msg, len, ref, smax - 1), DSIG_E_VERIFY);
    memcpy(sig, ref, smax);
    sig[smax] = 0;
    assert_int_equal(dsig_verify(alg, key, msg, len, sig, smax + 1), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(alg, key, msg, len, ref, 1), DSIG_E_VERIFY);
    /* Output buffer too small. */
    assert_int_equal(dsig_sign(alg, key, msg, 10, sig, smax - 1, &sig_len), DSIG_E_BUFFER);

    /* A different key gives a different tag and does not verify. */
    dsig_key *other = NULL;
    assert_int_equal(dsig_key_generate(&other, alg, NULL), DSIG_OK);
    assert_int_equal(dsig_verify(alg, other, msg, len, ref, ref_len), DSIG_E_VERIFY);
    dsig_key_free(other);

    free(msg);
    dsig_key_free(key);
}

/* check_alg() for every registered MAC. */
static void test_all_algs(void **state)
{
    (void)state;
    const dsig_alg *algs[32];
    size_t n = mac_algs(algs, 32);
    for (size_t i = 0; i < n; i++)
        check_alg(algs[i]);
}

/* Too-short keys are DSIG_E_KEY_WEAK (generation and use); CMAC keys that are too long mismatch. */
static void test_key_policy(void **state)
{
    (void)state;
    const dsig_alg *algs[32];
    size_t n = mac_algs(algs, 32);
    uint8_t kb[600], tag[64];
    size_t tag_len;
    tu_fill(kb, sizeof kb, 7);
    for (size_t i = 0; i < n; i++) {
        const dsig_alg *alg = algs[i];
        unsigned min = alg->min_key_bits;
        dsig_key *key = NULL;
        dsig_keygen_params p = {.bits = min - 8};
        assert_int_equal(dsig_key_generate(&key, alg, &p), DSIG_E_KEY_WEAK);
        assert_null(key);

        key = oct_key(kb, min / 8 - 1);
        assert_int_equal(dsig_key_bits(key), min - 8);
        assert_int_equal(dsig_key_check_alg(key, alg), DSIG_E_KEY_WEAK);
        assert_int_equal(dsig_sign(alg, key, "m", 1, tag, sizeof tag, &tag_len), DSIG_E_KEY_WEAK);
        assert_int_equal(dsig_verify(alg, key, "m", 1, tag, dsig_alg_sig_max(alg)), DSIG_E_KEY_WEAK);
        assert_int_equal(dsig_key_set_alg(key, alg), DSIG_E_KEY_WEAK);
        dsig_key_free(key);

        /* Exactly the minimum works. */
        key = oct_key(kb, min / 8);
        assert_int_equal(dsig_sign(alg, key, "m", 1, tag, sizeof tag, &tag_len), DSIG_OK);
        assert_int_equal(dsig_verify(alg, key, "m", 1, tag, tag_len), DSIG_OK);
        dsig_key_free(key);

        /* Longer keys: fine for HMAC/KMAC (up to the backend's 4096-bit KMAC limit), refused for
         * CMAC, whose key is exactly the AES key size. */
        key = oct_key(kb, min / 8 + 8);
        int rc = dsig_sign(alg, key, "m", 1, tag, sizeof tag, &tag_len);
        if (strcmp(dsig_alg_family(alg), "CMAC") == 0) {
            assert_int_equal(rc, DSIG_E_KEY_MISMATCH);
            assert_int_equal(dsig_verify(alg, key, "m", 1, tag, 16), DSIG_E_KEY_MISMATCH);
        } else {
            assert_int_equal(rc, DSIG_OK);
            assert_int_equal(dsig_verify(alg, key, "m", 1, tag, tag_len), DSIG_OK);
        }
        dsig_key_free(key);
        if (strcmp(dsig_alg_family(alg), "KMAC") == 0) {
            key = oct_key(kb, 513);
            assert_int_equal(dsig_sign(alg, key, "m", 1, tag, sizeof tag, &tag_len),
                             DSIG_E_KEY_MISMATCH);
            dsig_key_free(key);
        }
    }
    /* Key generation sizes must be whole bytes. */
    dsig_key *key = NULL;
    dsig_keygen_params p = {.bits = 260};
    assert_int_equal(dsig_key_generate(&key, dsig_alg_by_name("HS256"), &p), DSIG_E_ARG);
    p.bits = 1024;
    assert_int_equal(dsig_key_generate(&key, dsig_alg_by_name("HS256"), &p), DSIG_OK);
    assert_int_equal(dsig_key_bits(key), 1024);
    dsig_key_free(key);
}

/* JWK member plumbing of the oct key type: import/export of "k", no public part. */
static void test_oct_jwk(void **state)
{
    (void)state;
    const struct dsig_keytype *t = &dsig_keytype_oct;
    assert_string_equal(t->kty, "oct");
    assert_null(t->crv);
    assert_null(t->pub_members[0]);
    assert_string_equal(t->priv_members[0], "k");
    assert_null(t->priv_members[1]);
    assert_int_equal(t->has_public, 0);
    assert_null(t->to_pkey);
    assert_null(t->from_pkey);
    assert_null(t->public_copy);
    assert_int_equal(dsig_keytype_find("oct", NULL), t);

    uint8_t kb[40];
    tu_fill(kb, sizeof kb, 3);
    dsig_key *key = oct_key(kb, sizeof kb);
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t n = 0;
    assert_int_equal(t->export_jwk(key, 1, m, &n), DSIG_OK);
    assert_int_equal(n, 1);
    assert_string_equal(m[0].name, "k");
    assert_int_equal(m[0].len, sizeof kb);
    assert_memory_equal(m[0].data, kb, sizeof kb);
    dsig_xfree(m[0].data, m[0].len);
    assert_int_not_equal(t->export_jwk(key, 0, m, &n), DSIG_OK);
    dsig_key_free(key);

    /* Absent or empty "k" is refused. */
    key = dsig_key_new(t);
    dsig_jwk_member absent = {.name = "k", .data = NULL, .len = 0};
    assert_int_equal(t->import_jwk(key, &absent, 1), DSIG_E_KEY);
    dsig_jwk_member empty = {.name = "k", .data = kb, .len = 0};
    assert_int_equal(t->import_jwk(key, &empty, 1), DSIG_E_KEY);
    /* One byte is a valid oct key (too weak for every MAC, which is the algorithm's business). */
    dsig_jwk_member one = {.name = "k", .data = kb, .len = 1};
    assert_int_equal(t->import_jwk(key, &one, 1), DSIG_OK);
    assert_int_equal(dsig_key_bits(key), 8);
    dsig_key_free(key);
}

/* A key of another kty is DSIG_E_KEY_MISMATCH, in both directions (skipped while no such provider). */
static void test_key_mismatch(void **state)
{
    (void)state;
    const dsig_alg *hs = dsig_alg_by_name("HS256");
    static const char *const others[] = {"ES256", "EdDSA", "Ed25519", "RS256", "PS256"};
    int tested = 0;
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        const dsig_alg *a = dsig_alg_by_name(others[i]);
        if (!a)
            continue;
        dsig_key *k = NULL;
        int rc = dsig_key_generate(&k, a, NULL);
        if (rc == DSIG_E_UNSUPPORTED || !k)
            continue;
        assert_int_equal(rc, DSIG_OK);
        uint8_t tag[64];
        size_t tag_len;
        /* The key is bound to its own algorithm: unbind it so the type check is what fails. */
        assert_int_equal(dsig_key_set_alg(k, NULL), DSIG_OK);
        assert_int_equal(dsig_sign(hs, k, "m", 1, tag, sizeof tag, &tag_len), DSIG_E_KEY_MISMATCH);
        assert_int_equal(dsig_verify(hs, k, "m", 1, tag, 32), DSIG_E_KEY_MISMATCH);
        dsig_key_free(k);
        tested++;
        break;
    }
    /* And an oct key is refused by any non-MAC algorithm that exists. */
    uint8_t kb[64] = {1};
    dsig_key *ok = oct_key(kb, sizeof kb);
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (strcmp(dsig_alg_kty(a), "oct") == 0)
            continue;
        uint8_t sig[16];
        size_t sl;
        assert_int_equal(dsig_sign(a, ok, "m", 1, sig, sizeof sig, &sl), DSIG_E_KEY_MISMATCH);
    }
    dsig_key_free(ok);
    if (!tested)
        print_message("note: no asymmetric provider yet; the other-kty key check was skipped\n");
}

/* Bound keys: a key generated for HS256 is not allowed with HS512 even with enough bits. */
static void test_binding(void **state)
{
    (void)state;
    dsig_key *key = NULL;
    dsig_keygen_params p = {.bits = 512};
    assert_int_equal(dsig_key_generate(&key, dsig_alg_by_name("HS256"), &p), DSIG_OK);
    uint8_t tag[64];
    size_t tag_len;
    assert_int_equal(dsig_sign(dsig_alg_by_name("HS512"), key, "m", 1, tag, sizeof tag, &tag_len),
                     DSIG_E_ALG_NOT_ALLOWED);
    assert_int_equal(dsig_key_set_alg(key, dsig_alg_by_name("HS512")), DSIG_OK);
    assert_int_equal(dsig_sign(dsig_alg_by_name("HS512"), key, "m", 1, tag, sizeof tag, &tag_len),
                     DSIG_OK);
    dsig_key_free(key);
}

/* Same seed -> same key (compared through the tags), different seed -> different key. */
static void test_seeded_keygen(void **state)
{
    (void)state;
    const dsig_alg *algs[32];
    size_t n = mac_algs(algs, 32);
    uint8_t seed[32], seed2[32];
    tu_fill(seed, sizeof seed, 11);
    memcpy(seed2, seed, sizeof seed);
    seed2[31] ^= 1;
    for (size_t i = 0; i < n; i++) {
        dsig_keygen_params p = {.seed = seed, .seed_len = sizeof seed};
        dsig_keygen_params p2 = {.seed = seed2, .seed_len = sizeof seed2};
        dsig_key *a = NULL, *b = NULL, *c = NULL;
        assert_int_equal(dsig_key_generate(&a, algs[i], &p), DSIG_OK);
        assert_int_equal(dsig_key_generate(&b, algs[i], &p), DSIG_OK);
        assert_int_equal(dsig_key_generate(&c, algs[i], &p2), DSIG_OK);
        uint8_t ta[64], tb[64], tc[64];
        size_t la, lb, lc;
        assert_int_equal(dsig_sign(algs[i], a, "seeded", 6, ta, sizeof ta, &la), DSIG_OK);
        assert_int_equal(dsig_sign(algs[i], b, "seeded", 6, tb, sizeof tb, &lb), DSIG_OK);
        assert_int_equal(dsig_sign(algs[i], c, "seeded", 6, tc, sizeof tc, &lc), DSIG_OK);
        assert_int_equal(la, lb);
        assert_memory_equal(ta, tb, la);
        assert_memory_not_equal(ta, tc, la);
        assert_int_equal(dsig_verify(algs[i], b, "seeded", 6, ta, la), DSIG_OK);
        dsig_key_free(a);
        dsig_key_free(b);
        dsig_key_free(c);
    }
}

/* The streaming shell: abort after updates frees everything (ASan checks), verify needs the key. */
static void test_abort_and_misuse(void **state)
{
    (void)state;
    const dsig_alg *alg = dsig_alg_by_name("KMAC128");
    dsig_key *key = NULL;
    assert_int_equal(dsig_key_generate(&key, alg, NULL), DSIG_OK);
    dsig_sign_ctx *sc;
    assert_int_equal(dsig_sign_init(&sc, alg, key), DSIG_OK);
    assert_int_equal(dsig_sign_update(sc, "abc", 3), DSIG_OK);
    assert_int_equal(dsig_sign_total(sc), 3);
    dsig_sign_abort(sc);
    dsig_verify_ctx *vc;
    uint8_t tag[32] = {0};
    assert_int_equal(dsig_verify_init(&vc, alg, key, tag, sizeof tag), DSIG_OK);
    assert_int_equal(dsig_verify_update(vc, "abc", 3), DSIG_OK);
    dsig_verify_abort(vc);
    assert_int_equal(dsig_verify_init(&vc, alg, key, tag, 3), DSIG_OK);
    assert_int_equal(dsig_verify_final(vc), DSIG_E_VERIFY);
    assert_true(strlen(dsig_last_error_detail()) > 0);
    dsig_key_free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),      cmocka_unit_test(test_all_algs),
        cmocka_unit_test(test_key_policy),    cmocka_unit_test(test_oct_jwk),
        cmocka_unit_test(test_key_mismatch),  cmocka_unit_test(test_binding),
        cmocka_unit_test(test_seeded_keygen), cmocka_unit_test(test_abort_and_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
