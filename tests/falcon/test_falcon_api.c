/*
 * FALCON512 / FALCON1024 through the library API: registry entries, AKP JWK import/export (the KAT
 * keys), verification of the KAT signatures through dsig_verify_*, streaming sign/verify round trips,
 * JWS compact, seeded key generation (reproducible; equality with the KAT keys is proven in
 * test_falcon_kat), and rejection of mismatched or malformed keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "testutil.h"

/* First record of a KAT file: pk, sk, msg, detached signature. */
typedef struct rec {
    uint8_t *pk, *sk, *msg, sig[1400];
    size_t pk_len, sk_len, mlen, sig_len;
} rec;

/* Hex value of "name = ..." in the first record. */
static uint8_t *field(const char *text, const char *name, size_t *len)
{
    char key[16];
    snprintf(key, sizeof key, "\n%s = ", name);
    const char *p = strstr(text, key);
    assert_non_null(p);
    p += strlen(key);
    const char *e = strchr(p, '\n');
    char *hex = strndup(p, (size_t)(e - p));
    uint8_t *v = hex[0] ? tu_hex(hex, len) : calloc(1, 1);
    if (!hex[0])
        *len = 0;
    free(hex);
    return v;
}

/* Load record 0 and detach its signature (0x30+logn ‖ nonce ‖ comp(s2)). */
static void load_rec(unsigned logn, rec *r)
{
    size_t flen, smlen;
    char *text = tu_read_vector_file(logn == 9 ? "falcon/round3-kat/falcon512-KAT.rsp"
                                               : "falcon/round3-kat/falcon1024-KAT.rsp",
                                     &flen);
    r->pk = field(text, "pk", &r->pk_len);
    r->sk = field(text, "sk", &r->sk_len);
    r->msg = field(text, "msg", &r->mlen);
    uint8_t *sm = field(text, "sm", &smlen);
    size_t body = ((size_t)sm[0] << 8) | sm[1];
    r->sig[0] = (uint8_t)(0x30 + logn);
    memcpy(r->sig + 1, sm + 2, 40);
    memcpy(r->sig + 41, sm + 2 + 40 + r->mlen + 1, body - 1);
    r->sig_len = 40 + body;
    free(sm);
    free(text);
}

static void free_rec(rec *r)
{
    free(r->pk);
    free(r->sk);
    free(r->msg);
}

/* {"kty":"AKP","alg":...,"pub":...[,"priv":...]} */
static char *akp_jwk(const char *alg, const uint8_t *pk, size_t pk_len, const uint8_t *sk,
                     size_t sk_len)
{
    char *pub = dsig_b64url_encode_alloc(pk, pk_len);
    char *priv = sk ? dsig_b64url_encode_alloc(sk, sk_len) : NULL;
    size_t n = strlen(pub) + (priv ? strlen(priv) : 0) + 128;
    char *j = malloc(n);
    if (priv)
        snprintf(j, n, "{\"kty\":\"AKP\",\"alg\":\"%s\",\"pub\":\"%s\",\"priv\":\"%s\"}", alg, pub, priv);
    else
        snprintf(j, n, "{\"kty\":\"AKP\",\"alg\":\"%s\",\"pub\":\"%s\"}", alg, pub);
    dsig_xfree(pub, 0);
    dsig_xfree(priv, 0);
    return j;
}

static void test_registry(void **state)
{
    (void)state;
    const dsig_alg *a = dsig_alg_by_name("FALCON512"), *b = dsig_alg_by_name("FALCON1024");
    assert_non_null(a);
    assert_non_null(b);
    unsigned want = DSIG_ALG_PQ | DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED;
    assert_int_equal(dsig_alg_flags(a), want);
    assert_int_equal(dsig_alg_flags(b), want);
    assert_int_equal(dsig_alg_sig_max(a), 666);
    assert_int_equal(dsig_alg_sig_max(b), 1280);
    assert_string_equal(dsig_alg_kty(a), "AKP");
}

/* KAT key via JWK: the KAT signature verifies (streamed), ours round-trip, mutations fail. */
static void run_kat_key(unsigned logn)
{
    const char *name = logn == 9 ? "FALCON512" : "FALCON1024";
    const dsig_alg *alg = dsig_alg_by_name(name);
    rec r;
    load_rec(logn, &r);
    char *jp = akp_jwk(name, r.pk, r.pk_len, NULL, 0);
    char *js = akp_jwk(name, r.pk, r.pk_len, r.sk, r.sk_len);
    dsig_key *pub = NULL, *priv = NULL;
    assert_int_equal(dsig_jwk_import(&pub, jp, strlen(jp)), DSIG_OK);
    assert_int_equal(dsig_jwk_import(&priv, js, strlen(js)), DSIG_OK);
    assert_false(dsig_key_has_private(pub));
    assert_true(dsig_key_has_private(priv));
    for (size_t chunk = 0; chunk < 40; chunk += 7)
        assert_int_equal(tu_verify_chunked(alg, pub, r.msg, r.mlen, chunk, r.sig, r.sig_len),
                         DSIG_OK);
    uint8_t bad[1400];
    memcpy(bad, r.sig, r.sig_len);
    bad[r.sig_len - 3] ^= 0x10;
    assert_int_equal(tu_verify_chunked(alg, pub, r.msg, r.mlen, 0, bad, r.sig_len), DSIG_E_VERIFY);
    assert_int_equal(tu_verify_chunked(alg, pub, r.msg, r.mlen, 0, r.sig, r.sig_len - 1),
                     DSIG_E_VERIFY);
    bad[0] = 0x30 + (logn == 9 ? 10 : 9);
    assert_int_equal(tu_verify_chunked(alg, pub, r.msg, r.mlen, 0, bad, r.sig_len), DSIG_E_VERIFY);

    /* Sign with the imported private key, verify with the public one. */
    uint8_t msg[5000], sig[1400];
    tu_fill(msg, sizeof msg, 7);
    for (int rep = 0; rep < 3; rep++) {
        size_t len = 0, chunk = rep == 0 ? 0 : rep == 1 ? 1 : 999;
        assert_int_equal(tu_sign_chunked(alg, priv, msg, sizeof msg, chunk, sig, sizeof sig, &len),
                         DSIG_OK);
        assert_true(len <= dsig_alg_sig_max(alg));
        assert_int_equal(sig[0], 0x30 + logn);
        assert_int_equal(tu_verify_chunked(alg, pub, msg, sizeof msg, 313, sig, len), DSIG_OK);
        msg[100] ^= 1;
        assert_int_equal(tu_verify_chunked(alg, pub, msg, sizeof msg, 313, sig, len), DSIG_E_VERIFY);
        msg[100] ^= 1;
    }
    /* Export reproduces the KAT encodings. */
    char *out = NULL;
    size_t out_len = 0;
    assert_int_equal(dsig_jwk_export(priv, 1, &out, &out_len), DSIG_OK);
    char *pub64 = dsig_b64url_encode_alloc(r.pk, r.pk_len), *priv64 =
        dsig_b64url_encode_alloc(r.sk, r.sk_len);
    assert_non_null(strstr(out, pub64));
    assert_non_null(strstr(out, priv64));
    assert_non_null(strstr(out, name));
    dsig_free(out);
    dsig_xfree(pub64, 0);
    dsig_xfree(priv64, 0);
    /* The public key cannot sign; a key of the other set does not fit. */
    size_t len = 0;
    assert_int_equal(tu_sign_chunked(alg, pub, msg, 10, 0, sig, sizeof sig, &len), DSIG_E_NO_PRIVATE);
    const dsig_alg *other = dsig_alg_by_name(logn == 9 ? "FALCON1024" : "FALCON512");
    assert_int_not_equal(tu_verify_chunked(other, pub, r.msg, r.mlen, 0, r.sig, r.sig_len), DSIG_OK);
    dsig_key_free(pub);
    dsig_key_free(priv);
    free(jp);
    free(js);

    /* Mismatched pub/priv, bad lengths, wrong alg label: rejected. */
    uint8_t *pk2 = malloc(r.pk_len);
    memcpy(pk2, r.pk, r.pk_len);
    pk2[10] ^= 1;
    char *jm = akp_jwk(name, pk2, r.pk_len, r.sk, r.sk_len);
    dsig_key *k = NULL;
    assert_int_equal(dsig_jwk_import(&k, jm, strlen(jm)), DSIG_E_KEY);
    free(jm);
    jm = akp_jwk(name, r.pk, r.pk_len - 1, NULL, 0);
    assert_int_equal(dsig_jwk_import(&k, jm, strlen(jm)), DSIG_E_KEY);
    free(jm);
    jm = akp_jwk(name, r.pk, r.pk_len, r.sk, r.sk_len - 1);
    assert_int_equal(dsig_jwk_import(&k, jm, strlen(jm)), DSIG_E_KEY);
    free(jm);
    jm = akp_jwk(logn == 9 ? "FALCON1024" : "FALCON512", r.pk, r.pk_len, NULL, 0);
    assert_int_equal(dsig_jwk_import(&k, jm, strlen(jm)), DSIG_E_KEY);
    free(jm);
    free(pk2);
    free_rec(&r);
}

static void test_kat_key_512(void **state)
{
    (void)state;
    run_kat_key(9);
}

static void test_kat_key_1024(void **state)
{
    (void)state;
    run_kat_key(10);
}

/* Seeded generation is reproducible; keys sign, export and re-import; JWS compact round trip. */
static void test_generate_jws(void **state)
{
    (void)state;
    for (unsigned logn = 9; logn <= 10; logn++) {
        const dsig_alg *alg = dsig_alg_by_name(logn == 9 ? "FALCON512" : "FALCON1024");
        uint8_t seed[32];
        tu_fill(seed, sizeof seed, 42 + logn);
        dsig_keygen_params p = { .seed = seed, .seed_len = sizeof seed };
        dsig_key *k1 = NULL, *k2 = NULL, *k3 = NULL;
        assert_int_equal(dsig_key_generate(&k1, alg, &p), DSIG_OK);
        assert_int_equal(dsig_key_generate(&k2, alg, &p), DSIG_OK);
        char *j1 = NULL, *j2 = NULL;
        size_t l1, l2;
        assert_int_equal(dsig_jwk_export(k1, 1, &j1, &l1), DSIG_OK);
        assert_int_equal(dsig_jwk_export(k2, 1, &j2, &l2), DSIG_OK);
        assert_string_equal(j1, j2);
        assert_int_equal(dsig_jwk_import(&k3, j1, l1), DSIG_OK);

        dsig_jws_sign_ctx *sc = NULL;
        const char *payload = "falcon over JWS";
        assert_int_equal(dsig_jws_sign_init(&sc, alg, k1, NULL), DSIG_OK);
        assert_int_equal(dsig_jws_sign_update(sc, payload, strlen(payload)), DSIG_OK);
        char *jws = NULL;
        size_t jws_len = 0;
        assert_int_equal(dsig_jws_sign_final(sc, &jws, &jws_len), DSIG_OK);
        dsig_key *pub = NULL;
        assert_int_equal(dsig_key_public(&pub, k3), DSIG_OK);
        dsig_jws_verify_ctx *vc = NULL;
        assert_int_equal(dsig_jws_verify_init(&vc, pub, jws, jws_len, NULL), DSIG_OK);
        assert_int_equal(dsig_jws_verify_update(vc, payload, strlen(payload)), DSIG_OK);
        assert_int_equal(dsig_jws_verify_final(vc), DSIG_OK);
        assert_int_equal(dsig_jws_verify_init(&vc, pub, jws, jws_len, NULL), DSIG_OK);
        assert_int_equal(dsig_jws_verify_update(vc, "x", 1), DSIG_OK);
        assert_int_equal(dsig_jws_verify_final(vc), DSIG_E_VERIFY);
        dsig_free(jws);
        dsig_free(j1);
        dsig_free(j2);
        dsig_key_free(pub);
        dsig_key_free(k1);
        dsig_key_free(k2);
        dsig_key_free(k3);
    }
}

/* A signing context outlives the key it was made from (the key is reference-counted). */
static void test_state_outlives_key(void **state)
{
    (void)state;
    const dsig_alg *alg = dsig_alg_by_name("FALCON512");
    uint8_t seed[32] = { 1 };
    dsig_keygen_params p = { .seed = seed, .seed_len = sizeof seed };
    dsig_key *k = NULL, *pub = NULL;
    assert_int_equal(dsig_key_generate(&k, alg, &p), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    dsig_sign_ctx *sc = NULL;
    assert_int_equal(dsig_sign_init(&sc, alg, k), DSIG_OK);
    dsig_key_free(k);
    assert_int_equal(dsig_sign_update(sc, "abc", 3), DSIG_OK);
    uint8_t sig[700];
    size_t len = 0;
    assert_int_equal(dsig_sign_final(sc, sig, sizeof sig, &len), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pub, "abc", 3, sig, len), DSIG_OK);
    /* A public key cannot sign. */
    assert_int_equal(dsig_sign_init(&sc, alg, pub), DSIG_E_NO_PRIVATE);
    /* Too small an output buffer is an error, not a crash. */
    assert_int_equal(dsig_key_generate(&k, alg, &p), DSIG_OK);
    assert_int_equal(dsig_sign(alg, k, "abc", 3, sig, 600, &len), DSIG_E_BUFFER);
    dsig_key_free(k);
    dsig_key_free(pub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_kat_key_512),
        cmocka_unit_test(test_kat_key_1024),
        cmocka_unit_test(test_generate_jws),
        cmocka_unit_test(test_state_outlives_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
