/*
 * Constant-time check of Falcon signing ("ctgrind", run under valgrind memcheck): the private key
 * bytes and the sampler seed are marked secret (src/core/ct.h), then the key is decoded, completed,
 * expanded into the LDL tree and a message is signed. Any branch or memory index that depends on a
 * secret is reported by memcheck, except the leaks the specification allows, which the library
 * declassifies explicitly (rejection decisions of SamplerZ/BerExp, the norm check, the released s2).
 * Key generation is not covered: it is documented as not constant time (docs/falcon.md).
 */
#include <stdlib.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "testutil.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ct_falcon512),
        cmocka_unit_test(test_ct_falcon1024),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
