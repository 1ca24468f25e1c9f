/*
 * SLH-DSA round trips for all 12 sets: key from a seed, one signature per set (the slow `s` sets get
 * exactly one; the `f` sets also a HashSLH-DSA and a deterministic one), made the way the pipe
 * mode does it (one pass: R from SK.prf and fresh randomness, H_msg streamed over M' = 0 ‖ |ctx| ‖ ctx
 * ‖ M) and checked with the one-shot external verifier; then corruptions of R, SIG_FORS, SIG_HT,
 * the length, the message and the context are rejected, and bad arguments fail with a code.
 */
#include "slh_testlib.h"

#include "dsig/mem.h"

/* One-pass signature of M' = 0 ‖ |ctx| ‖ ctx ‖ M, streamed in chunks. */
static void sign_onepass(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *ctx,
                         size_t clen, const uint8_t *m, size_t mlen, uint8_t *sig)
{
    uint8_t opt_rand[DSIG_SLHDSA_NMAX], r[DSIG_SLHDSA_NMAX], digest[DSIG_SLHDSA_MMAX];
    uint8_t prefix[DSIG_SLHDSA_PREFIX_MAX];
    size_t plen;
    tu_fill(opt_rand, sizeof opt_rand, 99 + p->n); /* stands in for fresh randomness */
    assert_int_equal(dsig_slhdsa_r_onepass(p, sk, opt_rand, r), DSIG_OK);
    assert_int_equal(dsig_slhdsa_pure_prefix(ctx, clen, prefix, &plen), DSIG_OK);
    dsig_slhdsa_msg h;
    assert_int_equal(dsig_slhdsa_h_msg_init(&h, p, r, sk + 2 * p->n), DSIG_OK);
    assert_int_equal(dsig_slhdsa_msg_update(&h, prefix, plen), DSIG_OK);
    for (size_t off = 0; off < mlen; off += 1000)
        assert_int_equal(dsig_slhdsa_msg_update(&h, m + off, mlen - off < 1000 ? mlen - off : 1000), DSIG_OK);
    assert_int_equal(dsig_slhdsa_msg_final(&h, digest), DSIG_OK);
    assert_int_equal(dsig_slhdsa_sign_digest(p, sk, r, digest, sig), DSIG_OK);
}

/* Everything for one set. */
static void roundtrip(const dsig_slhdsa_params *p)
{
    double t0 = slh_now();
    uint8_t seed[3 * DSIG_SLHDSA_NMAX], pk[64], sk[128], m[3000], ctx[256];
    tu_fill(seed, sizeof seed, p->n * 7 + p->h + p->family);
    tu_fill(m, sizeof m, 5);
    tu_fill(ctx, sizeof ctx, 6);
    assert_int_equal(dsig_slhdsa_keygen_internal(p, seed, seed + p->n, seed + 2 * p->n, pk, sk), DSIG_OK);
    size_t slen = p->sig_bytes;
    uint8_t *sig = malloc(slen + 1), *bad = malloc(slen + 1);
    assert_non_null(sig);
    assert_non_null(bad);

    sign_onepass(p, sk, ctx, 9, m, sizeof m, sig);
    assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m, ctx, 9, NULL, 0, sig, slen), DSIG_OK);

    /* Corruptions: R, first FORS secret, last FORS auth node, first and last HT bytes. */
    size_t fors_end = p->n + (size_t)p->k * (1 + p->a) * p->n;
    size_t where[] = {0, p->n, fors_end - 1, fors_end, slen - 1};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        memcpy(bad, sig, slen);
        bad[where[i]] ^= 0x10;
        assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m, ctx, 9, NULL, 0, bad, slen),
                         DSIG_E_VERIFY);
    }
    memcpy(bad, sig, slen);
    bad[slen] = 0;
    assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m, ctx, 9, NULL, 0, bad, slen + 1), DSIG_E_VERIFY);
    assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m, ctx, 9, NULL, 0, bad, slen - 1), DSIG_E_VERIFY);
    assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m, ctx, 9, NULL, 0, bad, 0), DSIG_E_VERIFY);
    assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m - 1, ctx, 9, NULL, 0, sig, slen), DSIG_E_VERIFY);
    assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m, ctx, 8, NULL, 0, sig, slen), DSIG_E_VERIFY);
    assert_int_equal(dsig_slhdsa_verify_internal(p, pk, m, sizeof m, sig, slen), DSIG_E_VERIFY);
    uint8_t pk2[64];
    memcpy(pk2, pk, p->pk_bytes);
    pk2[p->pk_bytes - 1] ^= 1;
    assert_int_equal(dsig_slhdsa_verify_ext(p, pk2, m, sizeof m, ctx, 9, NULL, 0, sig, slen), DSIG_E_VERIFY);

    /* Arguments. */
    assert_int_equal(dsig_slhdsa_sign_ext(p, sk, m, 1, ctx, 256, NULL, NULL, sig), DSIG_E_ARG);
    assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, 1, ctx, 256, NULL, 0, sig, slen), DSIG_E_ARG);
    assert_int_equal(dsig_slhdsa_verify_internal(p, NULL, m, 1, sig, slen), DSIG_E_ARG);

    if (p->hp <= 4) { /* f sets: HashSLH-DSA and deterministic signing too */
        const dsig_slhdsa_prehash *ph = dsig_slhdsa_prehash_find("SHAKE128");
        assert_non_null(ph);
        assert_int_equal(dsig_slhdsa_sign_ext(p, sk, m, sizeof m, ctx, 3, ph, seed, sig), DSIG_OK);
        assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m, ctx, 3, ph, 0, sig, slen), DSIG_OK);
        assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, sizeof m, ctx, 3, NULL, 0, sig, slen), DSIG_E_VERIFY);
        assert_int_equal(dsig_slhdsa_sign_internal(p, sk, m, 100, NULL, sig), DSIG_OK);
        assert_int_equal(dsig_slhdsa_sign_internal(p, sk, m, 100, NULL, bad), DSIG_OK);
        assert_memory_equal(sig, bad, slen);
        assert_int_equal(dsig_slhdsa_verify_internal(p, pk, m, 100, sig, slen), DSIG_OK);
    }
    print_message("  %-20s round trip ok (%.2f s, back-end %s)\n", p->name, slh_now() - t0,
                  dsig_slhdsa_backend(p));
    free(sig);
    free(bad);
}

static void test_roundtrip_all(void **state)
{
    (void)state;
    for (size_t i = 0; dsig_slhdsa_all[i] != NULL; i++)
        roundtrip(dsig_slhdsa_all[i]);
}

/* M' encodings (FIPS 205 Algorithms 22/23) and the pre-hash table. */
static void test_prefixes(void **state)
{
    (void)state;
    uint8_t out[DSIG_SLHDSA_PREFIX_MAX], ctx[3] = {1, 2, 3};
    size_t len;
    assert_int_equal(dsig_slhdsa_pure_prefix(ctx, 3, out, &len), DSIG_OK);
    assert_int_equal(len, 5);
    assert_memory_equal(out, "\x00\x03\x01\x02\x03", 5);
    const dsig_slhdsa_prehash *ph = dsig_slhdsa_prehash_find("SHA-256");
    assert_non_null(ph);
    assert_int_equal(dsig_slhdsa_prehash_prefix(ph, ctx, 0, out, &len), DSIG_OK);
    assert_int_equal(len, 13);
    assert_memory_equal(out, "\x01\x00\x06\x09\x60\x86\x48\x01\x65\x03\x04\x02\x01", 13);
    assert_int_equal(dsig_slhdsa_pure_prefix(ctx, 256, out, &len), DSIG_E_ARG);
    assert_null(dsig_slhdsa_prehash_find("MD5"));
    static const char *names[] = {"SHA-224", "SHA-384", "SHA-512", "SHA-512/224", "SHA-512/256",
                                  "SHA3-224", "SHA3-256", "SHA3-384", "SHA3-512", "SHAKE256"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        uint8_t d[64];
        ph = dsig_slhdsa_prehash_find(names[i]);
        assert_non_null(ph);
        assert_int_equal(dsig_slhdsa_prehash_compute(ph, ctx, 3, d), DSIG_OK);
    }
    dsig_slhdsa_msg h;
    memset(&h, 0, sizeof h);
    assert_int_equal(dsig_slhdsa_msg_update(&h, ctx, 3), DSIG_E_STATE);
    dsig_slhdsa_msg_abort(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_roundtrip_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
