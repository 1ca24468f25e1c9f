/*
 * Constant-time check of Falcon signing ("ctgrind", run under valgrind memcheck): the private key
 * bytes and the sampler seed are marked secret (src/core/ct.h), then the key is decoded, completed,
 * expanded into the LDL tree and a message is signed. Any branch or memory index that depends on a
 * secret is reported by memcheck, except the leaks the specification allows, which the library
 * declassifies explicitly (rejection decisions of SamplerZ/BerExp, the norm check, the released s2).
 * Key generation is not covered: it is documented as not constant time (docs/falcon.md).
 *
 * The JWK import path is covered from the base64url text of "priv" on: decoding (dsig_b64url_decode),
 * the key type's import hook (sk decoding, the quality checks on (f, g), G completion and the NTRU
 * equation, h2 = g/f and its comparison with "pub", expansion), then a signature through the public
 * API. Only the JSON parsing in front of it (jansson, which scans the string it is given) is left out.
 *
 * `--self-check` (tests/ct/expect_leak.sh, CTest ct_falcon_selfcheck) probes (tests/ct/ct_test.h) the
 * decoded f, the completed G, the LDL tree of the expanded key and the base64url-decoded "priv":
 * memcheck must report each, or the marks got lost before the code this test is meant to check. The
 * signature itself cannot be probed: the library declassifies s2 when it is released.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "testutil.h"
#include "../ct/ct_test.h"

static int self_check;

/* First record's sk and pk. */
static void load(unsigned logn, uint8_t **pk, size_t *pk_len, uint8_t **sk, size_t *sk_len)
{
    size_t flen;
    char *text = tu_read_vector_file(logn == 9 ? "falcon/round3-kat/falcon512-KAT.rsp"
                                               : "falcon/round3-kat/falcon1024-KAT.rsp",
                                     &flen);
    char *p = strstr(text, "\npk = ") + 6, *e = strchr(p, '\n');
    *e = 0;
    *pk = tu_hex(p, pk_len);
    p = strstr(e + 1, "sk = ") + 5; /* the line right after pk */
    e = strchr(p, '\n');
    *e = 0;
    *sk = tu_hex(p, sk_len);
    free(text);
}

/* Decode, expand and sign with secrets marked; the signature must verify. */
static void run(unsigned logn)
{
    uint8_t *pk, *sk;
    size_t pk_len, sk_len;
    load(logn, &pk, &pk_len, &sk, &sk_len);
    int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N];
    DSIG_CT_SECRET(sk + 1, sk_len - 1); /* the header byte is public */
    assert_int_equal(falcon_sk_decode(f, g, F, sk, sk_len, logn), DSIG_OK);
    assert_int_equal(falcon_complete_private(G, f, g, F, logn), DSIG_OK);
    falcon_expanded ek;
    assert_int_equal(falcon_expand_private(&ek, f, g, F, G, logn), DSIG_OK);
    if (self_check) {
        ct_probe(f, "the decoded f");
        ct_probe(G, "the completed G");
        ct_probe(ek.tree + ((size_t)1 << logn), "the LDL tree");
    }
    uint8_t salt[40], seed[48], msg[100], sig[1280];
    tu_fill(salt, sizeof salt, 1);
    tu_fill(seed, sizeof seed, 2);
    tu_fill(msg, sizeof msg, 3);
    DSIG_CT_SECRET(seed, sizeof seed);
    for (int rep = 0; rep < 2; rep++) {
        falcon_sign_ctx s;
        size_t len = 0;
        falcon_sign_start(&s, logn, salt);
        falcon_sign_update(&s, msg, sizeof msg);
        assert_int_equal(falcon_sign_finish(&s, &ek, seed, sig, sizeof sig, &len,
                                            FALCON_FMT_COMPRESSED), DSIG_OK);
        DSIG_CT_DECLASSIFY(sig, len);
        uint16_t h[FALCON_MAX_N];
        assert_int_equal(falcon_pk_decode(h, pk, pk_len, logn), DSIG_OK);
        falcon_ntt(h, logn);
        falcon_verify_ctx v;
        assert_int_equal(falcon_verify_start(&v, logn, sig, len, FALCON_FMT_COMPRESSED), DSIG_OK);
        falcon_verify_update(&v, msg, sizeof msg);
        assert_int_equal(falcon_verify_finish(&v, h), DSIG_OK);
        seed[0] ^= 1;
    }
    falcon_expanded_clear(&ek);
    free(pk);
    free(sk);
}

/* The real JWK import: "priv" as base64url text, marked secret, decoded and handed to the AKP key
 * type's import hook with "pub"; the key then signs through dsig_sign. */
static void run_jwk(unsigned logn)
{
    uint8_t *pk, *sk;
    size_t pk_len, sk_len;
    load(logn, &pk, &pk_len, &sk, &sk_len);
    const char *name = logn == 9 ? "FALCON512" : "FALCON1024";
    const struct dsig_keytype *t = dsig_keytype_find_jwk("AKP", NULL, name);
    assert_non_null(t);
    char *text = dsig_b64url_encode_alloc(sk, sk_len);
    size_t text_len = strlen(text);
    DSIG_CT_SECRET(text, text_len);
    dsig_jwk_member m[2] = {{.name = "pub", .data = pk, .len = pk_len}, {.name = "priv"}};
    assert_int_equal(dsig_b64url_decode_alloc(text, text_len, &m[1].data, &m[1].len), DSIG_OK);
    /* The header byte names the parameter set: public (the test marked the whole text secret). */
    DSIG_CT_DECLASSIFY(m[1].data, 1);
    if (self_check)
        ct_probe(m[1].data + 1, "the decoded priv");
    dsig_key *key = dsig_key_new(t);
    assert_non_null(key);
    assert_int_equal(t->import_jwk(key, m, 2), DSIG_OK);
    dsig_xfree(m[1].data, m[1].len);
    key->has_private = 1;
    const dsig_alg *alg = dsig_alg_by_name(name);
    uint8_t msg[33], sig[1400];
    size_t len = 0;
    tu_fill(msg, sizeof msg, 4);
    assert_int_equal(dsig_sign(alg, key, msg, sizeof msg, sig, sizeof sig, &len), DSIG_OK);
    DSIG_CT_DECLASSIFY(sig, len); /* released */
    assert_int_equal(dsig_verify(alg, key, msg, sizeof msg, sig, len), DSIG_OK);
    dsig_key_free(key);
    dsig_xfree(text, text_len);
    free(pk);
    free(sk);
}

static void test_ct_falcon512_jwk(void **state)
{
    (void)state;
    run_jwk(9);
}

static void test_ct_falcon1024_jwk(void **state)
{
    (void)state;
    run_jwk(10);
}

static void test_ct_falcon512(void **state)
{
    (void)state;
    run(9);
}

static void test_ct_falcon1024(void **state)
{
    (void)state;
    run(10);
}

int main(int argc, char **argv)
{
    self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ct_falcon512),
        cmocka_unit_test(test_ct_falcon1024),
        cmocka_unit_test(test_ct_falcon512_jwk),
        cmocka_unit_test(test_ct_falcon1024_jwk),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return self_check && !failed ? ct_probe_summary() : failed;
}
