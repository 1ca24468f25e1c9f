/*
 * tests/mldsa_avx2/test_mldsa_rej_avx2.c — differential test of dsig_mldsa_rej_uniform_avx2 (FIPS 204
 * Algorithm 30 inner loop, src/pq/mldsa/rej_avx2.c) against the plain scalar loop written here: same
 * count, same coefficients in the same order, nothing written at a[len] or beyond, for random and
 * adversarial byte strings (boundary values q−1, q, 2^23 − 1, the ignored top bit), every output budget
 * and buffer lengths that are not multiples of 3 or 24, plus real SHAKE128 output. Exits 77 (CTest
 * "skipped") on a CPU without AVX2.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "hash/keccak.h"
#include "core/cpu.h"
#include "pq/mldsa/kernels.h"

#define Q 8380417
#define CANARY 0x13572468

#ifdef DSIG_MLDSA_HAVE_AVX2

/* @spec FIPS 204 Algorithm 30 inner loop + Algorithm 14: the obvious scalar version, the reference. */
static unsigned rej_plain(int32_t *a, unsigned len, const uint8_t *buf, unsigned buflen)
{
    unsigned ctr = 0;
    for (unsigned pos = 0; ctr < len && pos + 3 <= buflen; pos += 3) {
        uint32_t z = buf[pos] + 256u * buf[pos + 1] + 65536u * (buf[pos + 2] % 128u);
        if (z < Q)
            a[ctr++] = (int32_t)z;
    }
    return ctr;
}

/* Run both versions on (buf, buflen) with output budget len: same count, same a[0..count), and a[len..]
 * untouched (a[count..len) is scratch by contract). */
static void compare(const uint8_t *buf, unsigned buflen, unsigned len)
{
    int32_t ref[256 + 16], vec[256 + 16];
    for (unsigned i = 0; i < 256 + 16; i++)
        ref[i] = vec[i] = CANARY;
    unsigned nr = rej_plain(ref, len, buf, buflen);
    unsigned nv = dsig_mldsa_rej_uniform_avx2(vec, len, buf, buflen);
    if (nr != nv) {
        print_error("count: plain %u, avx2 %u (len %u, buflen %u)\n", nr, nv, len, buflen);
        fail();
    }
    for (unsigned i = 0; i < nr; i++)
        if (ref[i] != vec[i]) {
            print_error("a[%u]: plain %d, avx2 %d (len %u, buflen %u)\n", i, ref[i], vec[i], len, buflen);
            fail();
        }
    for (unsigned i = len; i < 256 + 16; i++)
        assert_int_equal(vec[i], CANARY);
}

static const unsigned budgets[] = {0, 1, 7, 8, 9, 15, 16, 17, 100, 248, 249, 255, 256};

/* Random bytes: every buffer length 0..900 against a spread of output budgets. */
static void test_random(void **state)
{
    (void)state;
    static uint8_t buf[1024];
    for (unsigned buflen = 0; buflen <= 900; buflen++) {
        tu_fill(buf, sizeof buf, 1000 + buflen);
        for (unsigned b = 0; b < sizeof budgets / sizeof budgets[0]; b++)
            compare(buf, buflen, budgets[b]);
    }
}

/* Adversarial candidates: values at and around q, the all-ones 23-bit value, and the top bit of the
 * third byte set (it must be ignored), in random mixtures so accept masks take many patterns. */
static void test_boundaries(void **state)
{
    (void)state;
    static const uint32_t special[] = {0,          1,          Q - 2,      Q - 1,      Q,
                                       Q + 1,      0x7FFFFF,   0xFFFFFF,   0x800000,   0x800000 | (Q - 1),
                                       0x800000 | Q, 0x7FE000, 0x7FDFFF,   0x12345};
    const unsigned ns = sizeof special / sizeof special[0];
    static uint8_t buf[900], rnd[300];
    for (unsigned it = 0; it < 3000; it++) {
        tu_fill(rnd, sizeof rnd, 7 * it + 3);
        for (unsigned k = 0; k < 300; k++) {
            uint32_t z = special[rnd[k] % ns];
            buf[3 * k] = (uint8_t)z;
            buf[3 * k + 1] = (uint8_t)(z >> 8);
            buf[3 * k + 2] = (uint8_t)(z >> 16);
        }
        unsigned buflen = 3 * (it % 300) + it % 3;
        compare(buf, buflen, budgets[it % (sizeof budgets / sizeof budgets[0])]);
        compare(buf, sizeof buf, 256);
    }
}

/* All 256 accept patterns of one 8-candidate step appear: candidate k rejected iff bit k of m is 0. */
static void test_all_masks(void **state)
{
    (void)state;
    uint8_t buf[96];
    for (unsigned m = 0; m < 256; m++) {
        tu_fill(buf, sizeof buf, m);
        for (unsigned k = 0; k < 8; k++) {
            uint32_t z = (m >> k) & 1 ? (uint32_t)(m * 31 + k) : 0xFFFFFF;
            buf[3 * k] = (uint8_t)z;
            buf[3 * k + 1] = (uint8_t)(z >> 8);
            buf[3 * k + 2] = (uint8_t)(z >> 16);
        }
        compare(buf, sizeof buf, 256);
        compare(buf, sizeof buf, 8);
    }
}

/* Real SHAKE128(ρ ‖ s ‖ r) streams as the matrix expansion produces them (5 blocks = 840 bytes). */
static void test_shake(void **state)
{
    (void)state;
    uint8_t seed[34], buf[5 * DSIG_SHAKE128_RATE];
    for (unsigned i = 0; i < 64; i++) {
        tu_fill(seed, 32, 99 + i);
        seed[32] = (uint8_t)(i % 7);
        seed[33] = (uint8_t)(i / 7);
        dsig_keccak k;
        dsig_shake128_init(&k);
        dsig_keccak_absorb(&k, seed, sizeof seed);
        dsig_shake_finalize(&k);
        dsig_keccak_squeezeblocks(&k, buf, 5);
        compare(buf, sizeof buf, 256);
        compare(buf, DSIG_SHAKE128_RATE, 256);
    }
}

#endif /* DSIG_MLDSA_HAVE_AVX2 */

int main(void)
{
#ifdef DSIG_MLDSA_HAVE_AVX2
    TU_SKIP_WITHOUT_CPU(DSIG_CPU_AVX2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_all_masks),
        cmocka_unit_test(test_shake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    printf("skipped: no AVX2 back-end on this architecture\n");
    return 77;
#endif
}
