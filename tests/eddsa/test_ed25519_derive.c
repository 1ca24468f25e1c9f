/*
 * tests/eddsa/test_ed25519_derive.c — Ed25519 keys derived under a label (src/classic/ed25519_derive.h):
 * signing with an expanded key reproduces every RFC 8032 pure Ed25519 vector byte for byte (official
 * vectors: the signing code is exact RFC 8032); a derived key's signatures verify under the derived
 * public key that anyone computes from the identity public key, and never under the identity key or a
 * key derived under another label (nor the reverse); frozen project vectors pin the derivation.
 */
#include <stdio.h>

#include <sodium.h>

#include "classic/ed25519_derive.h"
#include "classic/eddsa.h"
#include "eddsa_testlib.h"

#define LABEL_A "DSig batch root key"
#define LABEL_B "DSig node authentication key"
/* Derived public keys of RFC 8032 §7.1 TEST 1 under LABEL_A and LABEL_B (project vectors, frozen;
 * the same values come out of a separate affine-coordinate implementation of the Edwards group law). */
#define KAT_A "d28780bdfef12bd2dd12a75c63eb015b6fbd9dd449f911480f5411affdf4349a"
#define KAT_B "08c46cc3f27e5d6d18503a242c37412e8829eede57cfb93e0305d0b82d3088de"

static void hex(char *out, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

/* Every pure RFC 8032 Ed25519 vector: the expanded-key signer gives the vector's signature. */
static void test_sign_expanded_rfc8032(void **state)
{
    (void)state;
    json_t *arr = tu_load_json("eddsa/rfc8032/ed25519.json");
    size_t i, used = 0;
    json_t *v;
    json_array_foreach(arr, i, v) {
        size_t ml, sl;
        uint8_t *msg = tu_hex(tu_str(v, "message"), &ml);
        uint8_t *want = tu_hex(tu_str(v, "signature"), &sl);
        dsig_key *key;
        assert_int_equal(et_key_hex(&dsig_keytype_ed25519, tu_str(v, "publicKey"), tu_str(v, "secretKey"), &key),
                         DSIG_OK);
        const struct dsig_eddsa_key *k = key->impl;
        uint8_t sig[64];
        assert_int_equal(dsig_ed25519_sign_expanded(k->s, k->prefix, k->pk, msg, ml, sig), DSIG_OK);
        assert_int_equal(sl, 64);
        assert_memory_equal(sig, want, 64);
        dsig_key_free(key);
        free(msg);
        free(want);
        used++;
    }
    assert_true(used >= 5);
    json_decref(arr);
}

/* Derivation: public side from A alone equals the secret side; signatures stay under their own key. */
static void test_derived_keys(void **state)
{
    (void)state;
    json_t *arr = tu_load_json("eddsa/rfc8032/ed25519.json");
    json_t *v = json_array_get(arr, 0);
    dsig_key *key;
    assert_int_equal(et_key_hex(&dsig_keytype_ed25519, tu_str(v, "publicKey"), tu_str(v, "secretKey"), &key),
                     DSIG_OK);
    const struct dsig_eddsa_key *id = key->impl;
    dsig_ed25519_dkey a, b;
    assert_int_equal(dsig_ed25519_derive_secret(key, LABEL_A, &a), DSIG_OK);
    assert_int_equal(dsig_ed25519_derive_secret(key, LABEL_B, &b), DSIG_OK);
    uint8_t pa[32], pb[32];
    assert_int_equal(dsig_ed25519_derive_public(id->pk, LABEL_A, pa), DSIG_OK);
    assert_int_equal(dsig_ed25519_derive_public(id->pk, LABEL_B, pb), DSIG_OK);
    assert_memory_equal(pa, a.pk, 32);
    assert_memory_equal(pb, b.pk, 32);
    assert_memory_not_equal(pa, id->pk, 32);
    assert_memory_not_equal(pa, pb, 32);
    assert_memory_not_equal(a.prefix, id->prefix, 32);
    assert_memory_not_equal(a.prefix, b.prefix, 32);
    char ha[65], hb[65];
    hex(ha, pa, 32);
    hex(hb, pb, 32);
    if (getenv("DSIG_PRINT_KAT"))
        printf("KAT_A %s\nKAT_B %s\n", ha, hb);
    assert_string_equal(ha, KAT_A);
    assert_string_equal(hb, KAT_B);

    /* One message signed three ways: each signature verifies under its own public key only. */
    const uint8_t msg[] = "the same bytes signed under three keys";
    uint8_t s_id[64], s_a[64], s_b[64];
    size_t sl = 0;
    assert_int_equal(dsig_sign(et_alg(0), key, msg, sizeof msg, s_id, sizeof s_id, &sl), DSIG_OK);
    assert_int_equal(sl, 64);
    assert_int_equal(dsig_ed25519_dkey_sign(&a, msg, sizeof msg, s_a), DSIG_OK);
    assert_int_equal(dsig_ed25519_dkey_sign(&b, msg, sizeof msg, s_b), DSIG_OK);
    const uint8_t *pks[3] = {id->pk, pa, pb}, *sigs[3] = {s_id, s_a, s_b};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_int_equal(dsig_ed25519_verify_pk(pks[i], msg, sizeof msg, sigs[j]), i == j);
    /* Deterministic (RFC 8032 nonce from the derived prefix). */
    uint8_t again[64];
    assert_int_equal(dsig_ed25519_dkey_sign(&a, msg, sizeof msg, again), DSIG_OK);
    assert_memory_equal(again, s_a, 64);
    sodium_memzero(&a, sizeof a);
    sodium_memzero(&b, sizeof b);
    dsig_key_free(key);
    json_decref(arr);
}

/* Bad labels, bad points, keys without a private part or of another type. */
static void test_derive_errors(void **state)
{
    (void)state;
    json_t *arr = tu_load_json("eddsa/rfc8032/ed25519.json");
    json_t *v = json_array_get(arr, 1);
    dsig_key *key, *pub, *ec;
    assert_int_equal(et_key_hex(&dsig_keytype_ed25519, tu_str(v, "publicKey"), tu_str(v, "secretKey"), &key),
                     DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, key), DSIG_OK);
    dsig_ed25519_dkey d;
    uint8_t out[32], bad[32] = {2}; /* y = 2 is not on the curve */
    char longl[DSIG_ED25519_LABEL_MAX + 2];
    memset(longl, 'x', sizeof longl - 1);
    longl[sizeof longl - 1] = 0;
    assert_int_equal(dsig_ed25519_derive_secret(key, "", &d), DSIG_E_ARG);
    assert_int_equal(dsig_ed25519_derive_secret(key, longl, &d), DSIG_E_ARG);
    longl[DSIG_ED25519_LABEL_MAX] = 0;
    assert_int_equal(dsig_ed25519_derive_secret(key, longl, &d), DSIG_OK);
    assert_int_equal(dsig_ed25519_derive_secret(pub, LABEL_A, &d), DSIG_E_NO_PRIVATE);
    assert_int_equal(dsig_ed25519_derive_public(bad, LABEL_A, out), DSIG_E_POINT);
    assert_int_equal(dsig_key_generate(&ec, dsig_alg_by_name("ES256"), NULL), DSIG_OK);
    assert_int_equal(dsig_ed25519_derive_secret(ec, LABEL_A, &d), DSIG_E_KEY_MISMATCH);
    dsig_key_free(ec);
    dsig_key_free(pub);
    dsig_key_free(key);
    json_decref(arr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sign_expanded_rfc8032),
        cmocka_unit_test(test_derived_keys),
        cmocka_unit_test(test_derive_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
