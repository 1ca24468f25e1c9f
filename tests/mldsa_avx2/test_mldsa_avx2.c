/*
 * tests/mldsa_avx2/test_mldsa_avx2.c — differential tests of the vector ML-DSA polynomial arithmetic
 * (src/pq/mldsa/ntt_avx2.c, ntt_avx512.c) against the portable *_c code and against an exact,
 * unoptimised FIPS 204 NTT written here (int64 arithmetic mod q, twiddles computed from ζ = 1753): for
 * random inputs at the bounds of ntt.h, including the extremes ±(q−1), outputs must agree mod q and
 * respect the stated output bounds. Every vector back-end the CPU has (and DSIG_CPU_DISABLE leaves on)
 * is tested; exits 77 (CTest "skipped") on a CPU without AVX2.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "core/cpu.h"
#include "pq/mldsa/kernels.h"
#include "pq/mldsa/ntt.h"

#define Q 8380417
#define ITER 10000

#ifdef DSIG_MLDSA_HAVE_AVX2

static int32_t zeta_exact[256]; /* ζ^BitRev8(m) mod q, plain (not Montgomery) form */

/* Reproducible test inputs (tu_rand64: splitmix64, not cryptographic). */
static uint64_t rng_state = 0x6d6c64736132ULL;
static uint64_t rnd64(void)
{
    return tu_rand64(&rng_state);
}

/* Uniform integer with |x| < bound; every fourth call (per `mode`) returns an extreme ±(bound−1). */
static int32_t rnd_coeff(int64_t bound, unsigned mode)
{
    uint64_t r = rnd64();
    if (mode == 1 || (mode == 2 && (r & 3) == 0))
        return (int32_t)((r >> 8) & 1 ? bound - 1 : -(bound - 1));
    return (int32_t)((int64_t)((r >> 8) % (uint64_t)(2 * bound - 1)) - (bound - 1));
}

/* Fill n coefficients with |x| < bound: mode 0 uniform, 1 all extremes, 2 mixed. */
static void fill(int32_t *a, size_t n, int64_t bound, unsigned mode)
{
    for (size_t i = 0; i < n; i++)
        a[i] = rnd_coeff(bound, mode);
}

/* x mod q in [0, q). */
static int64_t modq(int64_t x)
{
    x %= Q;
    return x < 0 ? x + Q : x;
}

/* b^e mod q. */
static int64_t powq(int64_t b, uint64_t e)
{
    int64_t r = 1;
    b = modq(b);
    while (e) {
        if (e & 1)
            r = r * b % Q;
        b = b * b % Q;
        e >>= 1;
    }
    return r;
}

/* Reverse the 8 low bits. */
static unsigned brv8(unsigned m)
{
    unsigned r = 0;
    for (unsigned i = 0; i < 8; i++)
        r |= ((m >> i) & 1u) << (7 - i);
    return r;
}

/* @spec FIPS 204 Algorithm 41, exact arithmetic mod q (the reference the vector code must match). */
static void ntt_exact(int64_t w[256])
{
    unsigned m = 0;
    for (unsigned len = 128; len >= 1; len /= 2)
        for (unsigned start = 0; start < 256; start += 2 * len) {
            int64_t z = zeta_exact[++m];
            for (unsigned j = start; j < start + len; j++) {
                int64_t t = z * w[j + len] % Q;
                w[j + len] = modq(w[j] - t);
                w[j] = modq(w[j] + t);
            }
        }
}

/* @spec FIPS 204 Algorithm 42, exact arithmetic mod q (f = 256^-1 = 8347681). */
static void invntt_exact(int64_t w[256])
{
    unsigned m = 256;
    for (unsigned len = 1; len < 256; len *= 2)
        for (unsigned start = 0; start < 256; start += 2 * len) {
            int64_t z = modq(-(int64_t)zeta_exact[--m]);
            for (unsigned j = start; j < start + len; j++) {
                int64_t t = w[j];
                w[j] = modq(t + w[j + len]);
                w[j + len] = modq(z * modq(t - w[j + len]));
            }
        }
    for (unsigned j = 0; j < 256; j++)
        w[j] = w[j] * 8347681 % Q;
}

static const char *current = "?"; /* the back-end under test, for failure messages */

/* The vector tables of src/pq/mldsa/kernels.c (not the portable one, the reference here), each tested
 * when dsig_cpu_usable(needs); k is the table. */
#define FOR_EACH_BACKEND(k)                                                                              \
    for (unsigned k##_i = 0; k##_i < dsig_mldsa_backend_count; k##_i++)                                 \
        for (const dsig_mldsa_kernels *k = dsig_mldsa_backends[k##_i].table; k; k = NULL)                \
            if (k != &dsig_mldsa_kernels_portable && dsig_cpu_usable(dsig_mldsa_backends[k##_i].needs) && \
                (current = k->name) != NULL)

static const int64_t R_MOD_Q = 4193792;    /* 2^32 mod q */
static const int64_t RINV_MOD_Q = 8265825; /* 2^-32 mod q */

/* Assert every |a_i| < bound. */
static void assert_bound(const int32_t *a, int64_t bound, const char *what)
{
    for (unsigned i = 0; i < 256; i++)
        if (!(a[i] < bound && a[i] > -bound)) {
            print_error("%s [%s]: coefficient %u = %d out of bound %lld\n", what, current, i, a[i],
                        (long long)bound);
            fail();
        }
}

/* Assert x ≡ y mod q coefficient-wise. */
static void assert_congruent(const int32_t *x, const int32_t *y, const char *what)
{
    for (unsigned i = 0; i < 256; i++)
        if (modq(x[i]) != modq(y[i])) {
            print_error("%s [%s]: coefficient %u: %d vs %d (mod q)\n", what, current, i, x[i], y[i]);
            fail();
        }
}

/* Sanity of the constants the exact reference relies on. */
static void test_constants(void **state)
{
    (void)state;
    assert_int_equal(modq(R_MOD_Q * RINV_MOD_Q), 1);
    assert_int_equal(R_MOD_Q, (int64_t)((1ULL << 32) % Q));
    assert_int_equal(powq(1753, 256), Q - 1); /* ζ is a primitive 512th root of unity */
    assert_int_equal(modq(256LL * 8347681), 1);
}

/* Each back-end: ntt ≡ ntt_c ≡ exact NTT, |out| < 9q, for inputs |a| < q (uniform, all extremes, mixed). */
static void test_ntt(void **state)
{
    (void)state;
    int32_t a[256], c[256], v[256];
    int64_t e[256];
    FOR_EACH_BACKEND(k)
    for (unsigned it = 0; it < ITER; it++) {
        fill(a, 256, Q, it % 3);
        memcpy(c, a, sizeof a);
        memcpy(v, a, sizeof a);
        for (unsigned i = 0; i < 256; i++)
            e[i] = modq(a[i]);
        dsig_mldsa_ntt_c(c);
        k->ntt(v);
        ntt_exact(e);
        assert_bound(v, 9LL * Q, "ntt");
        assert_congruent(v, c, "ntt vs ntt_c");
        for (unsigned i = 0; i < 256; i++)
            assert_int_equal(modq(v[i]), e[i]);
    }
}

/* Each back-end: invntt_tomont ≡ invntt_tomont_c ≡ exact NTT^-1 · 2^32, |out| < q, for inputs |a| < q. */
static void test_invntt(void **state)
{
    (void)state;
    int32_t a[256], c[256], v[256];
    int64_t e[256];
    FOR_EACH_BACKEND(k)
    for (unsigned it = 0; it < ITER; it++) {
        fill(a, 256, Q, it % 3);
        memcpy(c, a, sizeof a);
        memcpy(v, a, sizeof a);
        for (unsigned i = 0; i < 256; i++)
            e[i] = modq(a[i]);
        dsig_mldsa_invntt_tomont_c(c);
        k->invntt_tomont(v);
        invntt_exact(e);
        assert_bound(v, Q, "invntt");
        assert_congruent(v, c, "invntt vs invntt_c");
        for (unsigned i = 0; i < 256; i++)
            assert_int_equal(modq(v[i]), e[i] * R_MOD_Q % Q);
    }
}

/* ntt then invntt_tomont (after reducing the NTT output below q, as the contract requires) gives a·R. */
static void test_roundtrip(void **state)
{
    (void)state;
    int32_t a[256], v[256];
    FOR_EACH_BACKEND(k)
    for (unsigned it = 0; it < ITER; it++) {
        fill(a, 256, Q, it % 3);
        memcpy(v, a, sizeof a);
        k->ntt(v);
        for (unsigned i = 0; i < 256; i++) {
            int64_t r = modq(v[i]);
            v[i] = (int32_t)(r > Q / 2 ? r - Q : r);
        }
        k->invntt_tomont(v);
        assert_bound(v, Q, "roundtrip");
        for (unsigned i = 0; i < 256; i++)
            assert_int_equal(modq(v[i]), modq(a[i]) * R_MOD_Q % Q);
    }
}

/* pointwise_montgomery: c ≡ a·b·R^-1, |c| < q, across |a·b| < 2^31·q (|a| < q with |b| < 9q, and
 * |a| < 2^31 with |b| < q/2). */
static void test_pointwise(void **state)
{
    (void)state;
    int32_t a[256], b[256], c[256], v[256];
    FOR_EACH_BACKEND(k)
    for (unsigned it = 0; it < ITER; it++) {
        if (it % 2 == 0) {
            fill(a, 256, Q, it % 3);
            fill(b, 256, 9LL * Q, (it / 2) % 3);
        } else {
            fill(a, 256, 1LL << 31, it % 3);
            fill(b, 256, Q / 2, (it / 2) % 3);
        }
        dsig_mldsa_pointwise_montgomery_c(c, a, b);
        k->pointwise_montgomery(v, a, b);
        assert_bound(v, Q, "pointwise");
        assert_congruent(v, c, "pointwise vs pointwise_c");
        for (unsigned i = 0; i < 256; i++)
            assert_int_equal(modq(v[i]), modq(modq(a[i]) * modq(b[i]) % Q * RINV_MOD_Q));
    }
}

/* pointwise_acc_montgomery for len 1..8 with |a| < q, |b| < 9q (extremes included): c ≡ Σ a·b·R^-1,
 * |c| < q; the output may alias nothing but must not depend on stale contents of c. */
static void test_pointwise_acc(void **state)
{
    (void)state;
    static int32_t a[8 * 256], b[8 * 256];
    int32_t c[256], v[256];
    FOR_EACH_BACKEND(k)
    for (unsigned it = 0; it < ITER; it++) {
        unsigned len = 1 + it % 8;
        fill(a, 256 * len, Q, (it / 8) % 3);
        fill(b, 256 * len, 9LL * Q, (it / 24) % 3);
        memset(v, 0x5a, sizeof v);
        dsig_mldsa_pointwise_acc_montgomery_c(c, a, b, len);
        k->pointwise_acc_montgomery(v, a, b, len);
        assert_bound(v, Q, "pointwise_acc");
        assert_congruent(v, c, "pointwise_acc vs pointwise_acc_c");
        for (unsigned i = 0; i < 256; i++) {
            int64_t s = 0;
            for (unsigned j = 0; j < len; j++)
                s = modq(s + modq(a[256 * j + i]) * modq(b[256 * j + i]));
            assert_int_equal(modq(v[i]), s * RINV_MOD_Q % Q);
        }
    }
}

/* The worst case of the accumulation bound: all 8 pairs at +(q−1)·(9q−1), and all at opposite signs. */
static void test_pointwise_acc_worst(void **state)
{
    (void)state;
    static int32_t a[8 * 256], b[8 * 256];
    int32_t c[256], v[256];
    FOR_EACH_BACKEND(k)
    for (int sign = -1; sign <= 1; sign += 2) {
        for (unsigned i = 0; i < 8 * 256; i++) {
            a[i] = Q - 1;
            b[i] = sign * (9 * Q - 1);
        }
        dsig_mldsa_pointwise_acc_montgomery_c(c, a, b, 8);
        k->pointwise_acc_montgomery(v, a, b, 8);
        assert_bound(v, Q, "pointwise_acc worst case");
        assert_congruent(v, c, "pointwise_acc worst case");
    }
}

#endif /* DSIG_MLDSA_HAVE_AVX2 */

int main(void)
{
#ifdef DSIG_MLDSA_HAVE_AVX2
    TU_SKIP_WITHOUT_CPU(DSIG_CPU_AVX2);
    FOR_EACH_BACKEND(k)
    printf("back-end under test: %s\n", k->name);
    for (unsigned m = 0; m < 256; m++)
        zeta_exact[m] = (int32_t)powq(1753, brv8(m));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constants),     cmocka_unit_test(test_ntt),
        cmocka_unit_test(test_invntt),        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_pointwise),     cmocka_unit_test(test_pointwise_acc),
        cmocka_unit_test(test_pointwise_acc_worst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    printf("skipped: no AVX2 back-end on this architecture\n");
    return 77;
#endif
}
