/*
 * tests/mldsa_avx2/test_mldsa_avx2_kat.c — the AVX2 back-end against NIST's ACVP ML-DSA keyGen vectors.
 * For every (pk, sk) of ML-DSA-keyGen-FIPS204 it recomputes t = NTT^-1(Â ∘ NTT(s1)) + s2 (FIPS 204
 * Algorithm 6, steps 3–5) using only AVX2 code — Â from SHAKE128 through dsig_mldsa_rej_uniform_avx2
 * (Algorithm 32 ExpandA, natural NTT order), ntt_avx2, pointwise_acc_montgomery_avx2 and
 * invntt_tomont_avx2 — with s1, s2, t0 decoded from the official sk and t1 from the official pk, and
 * checks Power2Round's identity t = t1·2^13 + t0 for every coefficient. Exits 77 without AVX2.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "hash/keccak.h"
#include "core/cpu.h"
#include "pq/mldsa/ntt.h"
#include "pq/mldsa/kernels.h"

#define Q 8380417
#define KMAX 8
#define LMAX 7

#ifdef DSIG_MLDSA_HAVE_AVX2

/* Coefficient i of a little-endian bit-packed vector of `bits`-bit values (FIPS 204 Algorithms 16–19). */
static uint32_t unpack_bits(const uint8_t *p, unsigned i, unsigned bits)
{
    uint32_t v = 0;
    for (unsigned b = 0; b < bits; b++) {
        unsigned pos = i * bits + b;
        v |= (uint32_t)((p[pos / 8] >> (pos % 8)) & 1u) << b;
    }
    return v;
}

/* @spec FIPS 204 Algorithm 32 ExpandA for one entry (ρ ‖ s ‖ r), sampled with the AVX2 rejection loop. */
static void rej_ntt_poly(int32_t a[256], const uint8_t rho[32], unsigned r, unsigned s)
{
    uint8_t seed[34], buf[5 * DSIG_SHAKE128_RATE];
    memcpy(seed, rho, 32);
    seed[32] = (uint8_t)s;
    seed[33] = (uint8_t)r;
    dsig_keccak k;
    dsig_shake128_init(&k);
    dsig_keccak_absorb(&k, seed, sizeof seed);
    dsig_shake_finalize(&k);
    dsig_keccak_squeezeblocks(&k, buf, 5);
    unsigned n = dsig_mldsa_rej_uniform_avx2(a, 256, buf, sizeof buf);
    while (n < 256) {
        dsig_keccak_squeezeblocks(&k, buf, 1);
        n += dsig_mldsa_rej_uniform_avx2(a + n, 256 - n, buf, DSIG_SHAKE128_RATE);
    }
}

/* Check one keyGen vector of a parameter set with dimensions k × l and secret bound eta. */
static void check_key(const uint8_t *pk, const uint8_t *sk, unsigned k, unsigned l, unsigned eta)
{
    static int32_t A[KMAX][LMAX * 256], s1[LMAX * 256];
    int32_t t[256];
    const unsigned eb = eta == 2 ? 3 : 4; /* bitlen(2η) */
    const uint8_t *s1p = sk + 128, *s2p = s1p + l * 32 * eb, *t0p = s2p + k * 32 * eb;
    assert_memory_equal(pk, sk, 32); /* ρ */
    for (unsigned j = 0; j < l; j++) {
        for (unsigned i = 0; i < 256; i++)
            s1[256 * j + i] = (int32_t)eta - (int32_t)unpack_bits(s1p + j * 32 * eb, i, eb);
        dsig_mldsa_ntt_avx2(s1 + 256 * j);
    }
    for (unsigned r = 0; r < k; r++)
        for (unsigned s = 0; s < l; s++)
            rej_ntt_poly(A[r] + 256 * s, pk, r, s);
    for (unsigned r = 0; r < k; r++) {
        dsig_mldsa_pointwise_acc_montgomery_avx2(t, A[r], s1, l);
        dsig_mldsa_invntt_tomont_avx2(t);
        for (unsigned i = 0; i < 256; i++) {
            int64_t s2 = (int64_t)eta - unpack_bits(s2p + r * 32 * eb, i, eb);
            int64_t v = ((int64_t)t[i] + s2) % Q;
            v += v < 0 ? Q : 0;
            int64_t t1 = unpack_bits(pk + 32 + r * 320, i, 10);
            int64_t t0 = 4096 - (int64_t)unpack_bits(t0p + r * 416, i, 13);
            if (v != t1 * 8192 + t0) {
                print_error("t[%u][%u] = %lld, expected t1·2^13 + t0 = %lld\n", r, i, (long long)v,
                            (long long)(t1 * 8192 + t0));
                fail();
            }
        }
    }
}

/* All ACVP keyGen vectors: the three parameter sets. */
static void test_acvp_keygen(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("mldsa/acvp/ML-DSA-keyGen-FIPS204/prompt.json");
    json_t *expect = tu_load_json("mldsa/acvp/ML-DSA-keyGen-FIPS204/expectedResults.json");
    json_t *pgroups = json_object_get(prompt, "testGroups"), *egroups = json_object_get(expect, "testGroups");
    size_t gi, checked = 0;
    json_t *eg;
    json_array_foreach(egroups, gi, eg) {
        json_int_t tg = json_integer_value(json_object_get(eg, "tgId"));
        const char *set = NULL;
        size_t pj;
        json_t *pg;
        json_array_foreach(pgroups, pj, pg) if (json_integer_value(json_object_get(pg, "tgId")) == tg) set =
            tu_str(pg, "parameterSet");
        assert_non_null(set);
        unsigned k = 0, l = 0, eta = 0;
        if (strcmp(set, "ML-DSA-44") == 0)
            k = 4, l = 4, eta = 2;
        else if (strcmp(set, "ML-DSA-65") == 0)
            k = 6, l = 5, eta = 4;
        else if (strcmp(set, "ML-DSA-87") == 0)
            k = 8, l = 7, eta = 2;
        else
            fail_msg("unknown parameter set %s", set);
        size_t ti;
        json_t *tc;
        json_array_foreach(json_object_get(eg, "tests"), ti, tc) {
            size_t pklen, sklen;
            uint8_t *pk = tu_hex(tu_str(tc, "pk"), &pklen), *sk = tu_hex(tu_str(tc, "sk"), &sklen);
            assert_int_equal(pklen, 32 + 320 * k);
            assert_int_equal(sklen, 128 + 32 * (k + l) * (eta == 2 ? 3 : 4) + 416 * k);
            check_key(pk, sk, k, l, eta);
            free(pk);
            free(sk);
            checked++;
        }
    }
    assert_true(checked >= 60);
    json_decref(prompt);
    json_decref(expect);
}

#endif /* DSIG_MLDSA_HAVE_AVX2 */

int main(void)
{
#ifdef DSIG_MLDSA_HAVE_AVX2
    TU_SKIP_WITHOUT_CPU(DSIG_CPU_AVX2);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_acvp_keygen)};
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    printf("skipped: no AVX2 back-end on this architecture\n");
    return 77;
#endif
}
