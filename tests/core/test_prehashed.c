/*
 * dsig/prehashed.h beyond the vectors (those are in tests/rsa, tests/ecdsa, tests/mldsa_api): which
 * algorithms take which hashes — from the registry, for every algorithm — and the refusals: another
 * algorithm's hash, a wrong length, a public key, NULL arguments; a digest signature is a signature
 * of the message and the other way round.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "testutil.h"

/* The algorithms expected to sign digests, with one hash each takes and its length. */
static const struct {
    const char *alg, *hash;
    size_t len;
} takes[] = {
    {"RS256", "SHA-256", 32}, {"RS384", "SHA-384", 48}, {"RS512", "SHA-512", 64}, {"PS256", "SHA-256", 32},
    {"PS384", "SHA-384", 48}, {"PS512", "SHA-512", 64}, {"ES256", "SHA-256", 32}, {"ES384", "SHA-384", 48},
    {"ES512", "SHA-512", 64}, {"ML-DSA-44", "SHA-512", 64}, {"ML-DSA-65", "SHAKE128", 32},
    {"ML-DSA-87", "ExternalMu", 64},
};
#define N_TAKES (sizeof takes / sizeof takes[0])

static int expected(const char *name)
{
    for (size_t i = 0; i < N_TAKES; i++)
        if (strcmp(takes[i].alg, name) == 0)
            return (int)i;
    return -1;
}

/* Every registered algorithm: exactly the expected ones offer digests; the others refuse with
 * DSIG_E_UNSUPPORTED and a detail naming the algorithm. */
static void test_registry(void **state)
{
    (void)state;
    size_t offered = 0;
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const char *name = dsig_alg_name(dsig_alg_at(i));
        const char *h = dsig_alg_digest_hashes(dsig_alg_at(i));
        int e = expected(name);
        if (e < 0 && h)
            fail_msg("%s offers digest signing (%s), not expected", name, h);
        if (e >= 0 && (!h || !strstr(h, takes[e].hash)))
            fail_msg("%s: digest hashes \"%s\" lack %s", name, h ? h : "(none)", takes[e].hash);
        offered += h != NULL;
    }
    assert_int_equal(offered, N_TAKES);
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("Ed25519"), NULL), DSIG_OK);
    uint8_t dg[64] = {1}, sig[128];
    size_t sl = 0;
    assert_int_equal(dsig_sign_digest(dsig_alg_by_name("Ed25519"), k, "SHA-512", dg, 64, sig, sizeof sig, &sl),
                     DSIG_E_UNSUPPORTED);
    assert_non_null(strstr(dsig_last_error_detail(), "Ed25519"));
    dsig_key_free(k);
}

/* Each digest-signing algorithm: round trips both ways, then every refusal. */
static void test_each(void **state)
{
    (void)state;
    static const uint8_t msg[] = "the message a client hashed";
    for (size_t i = 0; i < N_TAKES; i++) {
        const dsig_alg *a = dsig_alg_by_name(takes[i].alg);
        assert_non_null(a);
        dsig_key *k = NULL, *pub = NULL;
        assert_int_equal(dsig_key_generate(&k, a, NULL), DSIG_OK);
        assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
        uint8_t dg[64], sig[8192], bad[64];
        size_t sl = 0, dl = takes[i].len;
        const int mu = strcmp(takes[i].hash, "ExternalMu") == 0;
        if (mu) {
            assert_int_equal(dsig_mldsa_mu(k, NULL, 0, msg, sizeof msg, dg), DSIG_OK);
        } else {
            EVP_MD *md = EVP_MD_fetch(NULL, takes[i].hash, NULL);
            EVP_MD_CTX *c = EVP_MD_CTX_new();
            unsigned n = 0;
            assert_true(md && c && EVP_DigestInit_ex(c, md, NULL) == 1 && EVP_DigestUpdate(c, msg, sizeof msg) == 1);
            if (dl == 32 && strcmp(takes[i].hash, "SHAKE128") == 0)
                assert_int_equal(EVP_DigestFinalXOF(c, dg, dl), 1);
            else
                assert_true(EVP_DigestFinal_ex(c, dg, &n) == 1 && n == dl);
            EVP_MD_CTX_free(c);
            EVP_MD_free(md);
        }
        assert_int_equal(dsig_sign_digest(a, k, takes[i].hash, dg, dl, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(dsig_verify_digest(a, pub, takes[i].hash, dg, dl, sig, sl), DSIG_OK);
        /* a pure / RSA / ECDSA digest signature is one of the message; HashML-DSA verifies as such */
        const int hashml = strncmp(takes[i].alg, "ML-DSA", 6) == 0 && !mu;
        dsig_sign_opts o = {.prehash = hashml ? takes[i].hash : NULL};
        assert_int_equal(dsig_verify_ex(a, pub, msg, sizeof msg, sig, sl, hashml ? &o : NULL), DSIG_OK);
        if (hashml) /* not a pure ML-DSA signature: the domain byte of M' differs */
            assert_int_equal(dsig_verify(a, pub, msg, sizeof msg, sig, sl), DSIG_E_VERIFY);
        /* and a message signature verifies over its digest */
        assert_int_equal(dsig_sign_ex(a, k, msg, sizeof msg, sig, sizeof sig, &sl, hashml ? &o : NULL), DSIG_OK);
        assert_int_equal(dsig_verify_digest(a, pub, takes[i].hash, dg, dl, sig, sl), DSIG_OK);
        /* another digest, a damaged signature */
        memcpy(bad, dg, dl);
        bad[0] ^= 1;
        assert_int_equal(dsig_verify_digest(a, pub, takes[i].hash, bad, dl, sig, sl), DSIG_E_VERIFY);
        sig[sl / 2] ^= 4;
        assert_int_equal(dsig_verify_digest(a, pub, takes[i].hash, dg, dl, sig, sl), DSIG_E_VERIFY);
        assert_int_equal(dsig_verify_digest(a, pub, takes[i].hash, dg, dl, sig, sl - 1), DSIG_E_VERIFY);
        /* refusals */
        assert_int_equal(dsig_sign_digest(a, k, takes[i].hash, dg, dl - 1, sig, sizeof sig, &sl), DSIG_E_FORMAT);
        assert_int_equal(dsig_verify_digest(a, pub, takes[i].hash, dg, dl - 1, sig, sl), DSIG_E_FORMAT);
        assert_int_equal(dsig_sign_digest(a, k, "MD5", dg, 16, sig, sizeof sig, &sl), DSIG_E_UNSUPPORTED);
        assert_non_null(strstr(dsig_last_error_detail(), takes[i].hash));
        assert_int_equal(dsig_sign_digest(a, k, "sha-256", dg, dl, sig, sizeof sig, &sl), DSIG_E_UNSUPPORTED);
        assert_int_equal(dsig_sign_digest(a, pub, takes[i].hash, dg, dl, sig, sizeof sig, &sl), DSIG_E_NO_PRIVATE);
        assert_int_equal(dsig_sign_digest(a, k, takes[i].hash, dg, dl, sig, 8, &sl), DSIG_E_BUFFER);
        assert_int_equal(dsig_sign_digest(a, k, NULL, dg, dl, sig, sizeof sig, &sl), DSIG_E_ARG);
        assert_int_equal(dsig_sign_digest(a, k, takes[i].hash, NULL, dl, sig, sizeof sig, &sl), DSIG_E_ARG);
        assert_int_equal(dsig_sign_digest(NULL, k, takes[i].hash, dg, dl, sig, sizeof sig, &sl), DSIG_E_ARG);
        if (strncmp(takes[i].alg, "RS", 2) == 0) /* RS256 and PS256 share keys, not the other hashes */
            assert_int_equal(dsig_sign_digest(a, k, strcmp(takes[i].hash, "SHA-256") ? "SHA-256" : "SHA-512", dg, dl,
                                              sig, sizeof sig, &sl),
                             DSIG_E_UNSUPPORTED);
        dsig_key_free(k);
        dsig_key_free(pub);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
