/*
 * tests/mldsa_avx2/test_mldsa_kernels_avx2.c — differential tests of the AVX2 kernel table of ML-DSA
 * (src/pq/mldsa/kernels.h: poly_avx2.c, pack_avx2.c, rej_avx2.c) against the portable table: every
 * entry except the NTT family (test_mldsa_avx2.c) must give bit-identical results, on random inputs
 * over each kernel's whole input range and on the edges (±bound, 0, q − 1, the Decompose wrap-around).
 * Decompose and UseHint are compared for every coefficient value in [0, q) and both γ2; the packers for
 * every width FIPS 204 uses and a few others (which the AVX2 code hands back to the portable code),
 * with canaries around the buffers; the bounded rejection sampler for both η, every output budget and
 * buffer lengths that are not multiples of its 4-byte step. Exits 77 (CTest "skipped") without AVX2.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "core/cpu.h"
#include "pq/mldsa/kernels.h"

#define Q DSIG_MLDSA_Q
#define N DSIG_MLDSA_N

#ifdef DSIG_MLDSA_HAVE_AVX2

static const dsig_mldsa_kernels *pc = &dsig_mldsa_kernels_portable, *vx = &dsig_mldsa_kernels_avx2;

/* Reproducible test inputs (tu_rand64: splitmix64, not cryptographic). */
static uint64_t rng_state = 0x6b65726e656c73ULL;
static uint64_t rnd64(void)
{
    return tu_rand64(&rng_state);
}

/* Uniform in [lo, hi]; one in eight draws is an end point. */
static int32_t rnd_in(int64_t lo, int64_t hi)
{
    uint64_t r = rnd64();
    if ((r & 7) == 0)
        return (int32_t)((r >> 3) & 1 ? hi : lo);
    return (int32_t)(lo + (int64_t)((r >> 8) % (uint64_t)(hi - lo + 1)));
}

static void fill(mldsa_poly *a, int64_t lo, int64_t hi)
{
    for (unsigned i = 0; i < N; i++)
        a->c[i] = rnd_in(lo, hi);
}

static void expect_same(const mldsa_poly *want, const mldsa_poly *got, const char *what)
{
    for (unsigned i = 0; i < N; i++)
        if (want->c[i] != got->c[i])
            fail_msg("%s: coefficient %u: portable %d, avx2 %d", what, i, want->c[i], got->c[i]);
}

#define ITER 2000

/* add, sub, reduce, caddq, freeze, shiftl over their input ranges (poly.h). */
static void test_elementwise(void **state)
{
    (void)state;
    mldsa_poly a, b, r1, r2;
    for (unsigned it = 0; it < ITER; it++) {
        fill(&a, -(1 << 30), (1 << 30) - 1); /* a - b and a + b stay within int32 */
        fill(&b, -(1 << 30), (1 << 30) - 1);
        pc->poly_add(&r1, &a, &b);
        vx->poly_add(&r2, &a, &b);
        expect_same(&r1, &r2, "add");
        pc->poly_sub(&r1, &a, &b);
        vx->poly_sub(&r2, &a, &b);
        expect_same(&r1, &r2, "sub");
        fill(&a, INT32_MIN, INT32_MAX - (1 << 22));
        r1 = r2 = a;
        pc->poly_reduce(&r1);
        vx->poly_reduce(&r2);
        expect_same(&r1, &r2, "reduce");
        r1 = r2 = a;
        pc->poly_freeze(&r1);
        vx->poly_freeze(&r2);
        expect_same(&r1, &r2, "freeze");
        fill(&a, -(Q - 1), Q - 1);
        r1 = r2 = a;
        pc->poly_caddq(&r1);
        vx->poly_caddq(&r2);
        expect_same(&r1, &r2, "caddq");
        fill(&a, 0, (1 << 10) - 1);
        r1 = r2 = a;
        pc->poly_shiftl(&r1);
        vx->poly_shiftl(&r2);
        expect_same(&r1, &r2, "shiftl");
    }
}

/* norm_exceeds at bounds around every coefficient position, both verdicts. */
static void test_norm(void **state)
{
    (void)state;
    static const int32_t bounds[] = {1, 2, 78, 95232 - 78, 261888 - 196, (1 << 17) - 78, (1 << 19) - 196, Q};
    mldsa_poly a;
    for (unsigned it = 0; it < ITER; it++) {
        int32_t bound = bounds[it % (sizeof bounds / sizeof bounds[0])];
        fill(&a, -(bound - 1), bound - 1);
        unsigned pos = (unsigned)(rnd64() % N);
        switch (it % 4) {
        case 1: a.c[pos] = bound; break;      /* just out */
        case 2: a.c[pos] = -bound; break;     /* just out, negative */
        case 3: a.c[pos] = -(bound - 1); break; /* just in */
        default: break;
        }
        uint32_t want = pc->poly_norm_exceeds(&a, bound), got = vx->poly_norm_exceeds(&a, bound);
        if (want != got)
            fail_msg("norm_exceeds bound %d (case %u): portable %08x, avx2 %08x", bound, it % 4, want, got);
        assert_int_equal(want, it % 4 == 1 || it % 4 == 2 ? 0xFFFFFFFFu : 0u);
    }
}

/* Decompose and UseHint for every value in [0, q) (both γ2, both hint values), Power2Round too. */
static void test_rounding_exhaustive(void **state)
{
    (void)state;
    const int32_t g2s[2] = {(Q - 1) / 88, (Q - 1) / 32};
    mldsa_poly a, h0, h1, p1, p0, v1, v0;
    for (unsigned g = 0; g < 2; g++) {
        const mldsa_decomp d = mldsa_decomp_init(g2s[g]);
        for (int32_t base = 0; base < Q; base += N) {
            for (unsigned i = 0; i < N; i++) {
                a.c[i] = base + (int32_t)i < Q ? base + (int32_t)i : Q - 1;
                h0.c[i] = (int32_t)(rnd64() & 1);
                h1.c[i] = 1 - h0.c[i];
            }
            pc->poly_decompose(&d, &p1, &p0, &a);
            vx->poly_decompose(&d, &v1, &v0, &a);
            expect_same(&p1, &v1, "decompose a1");
            expect_same(&p0, &v0, "decompose a0");
            for (unsigned k = 0; k < 2; k++) {
                p1 = v1 = a;
                pc->poly_use_hint(&d, &p1, k ? &h1 : &h0);
                vx->poly_use_hint(&d, &v1, k ? &h1 : &h0);
                expect_same(&p1, &v1, "use_hint");
            }
            if (g == 0) {
                pc->poly_power2round(&p1, &p0, &a);
                vx->poly_power2round(&v1, &v0, &a);
                expect_same(&p1, &v1, "power2round a1");
                expect_same(&p0, &v0, "power2round a0");
            }
        }
    }
}

/* MakeHint with a0 over (−2γ2, 2γ2) and its edges (±γ2, −γ2 with a1 = 0 and ≠ 0), and the count. */
static void test_make_hint(void **state)
{
    (void)state;
    const int32_t g2s[2] = {(Q - 1) / 88, (Q - 1) / 32};
    mldsa_poly a0, a1, hp, hv;
    for (unsigned it = 0; it < ITER; it++) {
        int32_t g2 = g2s[it & 1], m = (Q - 1) / (2 * g2);
        for (unsigned i = 0; i < N; i++) {
            uint64_t r = rnd64();
            static const int32_t edge[] = {0, 1, -1};
            a0.c[i] = (r & 3) == 0 ? g2 * (int32_t)((r >> 2) % 3 == 2 ? -1 : 1) + edge[(r >> 4) % 3]
                                   : rnd_in(-2 * g2 + 1, 2 * g2 - 1);
            a1.c[i] = (r >> 8) & 1 ? 0 : rnd_in(0, m - 1);
        }
        unsigned np = pc->poly_make_hint(&hp, &a0, &a1, g2), nv = vx->poly_make_hint(&hv, &a0, &a1, g2);
        expect_same(&hp, &hv, "make_hint");
        assert_int_equal(np, nv);
    }
}

/* Bit packing both ways at every width FIPS 204 uses (and widths the AVX2 code declines), both signs,
 * with the offset b the encodings use; nothing written outside the 32·bits bytes. */
static void test_pack(void **state)
{
    (void)state;
    static const unsigned widths[] = {1, 3, 4, 6, 10, 13, 18, 20, 7, 12};
    uint8_t bp[32 * 20 + 64], bv[32 * 20 + 64];
    mldsa_poly a, up, uv;
    for (unsigned w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        unsigned bits = widths[w];
        int32_t max = (int32_t)((1u << bits) - 1);
        for (unsigned it = 0; it < ITER / 4; it++) {
            int32_t sign = it & 1 ? -1 : 1, b = (it & 2) ? max / 2 : (sign < 0 ? max : 0);
            /* fields b + sign·a_i in [0, 2^bits) */
            for (unsigned i = 0; i < N; i++) {
                int32_t f = rnd_in(0, max);
                a.c[i] = sign * (f - b);
            }
            memset(bp, 0xA5, sizeof bp);
            memset(bv, 0xA5, sizeof bv);
            pc->pack(bp + 32, &a, b, sign, bits);
            vx->pack(bv + 32, &a, b, sign, bits);
            if (memcmp(bp, bv, sizeof bp) != 0)
                fail_msg("pack width %u sign %d: outputs (or the bytes around them) differ", bits, sign);
            for (unsigned i = 0; i < 32; i++)
                assert_int_equal(bv[i], 0xA5);
            for (unsigned i = 32 + 32 * bits; i < sizeof bv; i++)
                assert_int_equal(bv[i], 0xA5);
            /* unpack arbitrary bytes (every bit pattern is a valid field) and the packed ones */
            tu_fill(bp + 32, 32 * bits, 1000 * w + it);
            for (unsigned k = 0; k < 2; k++) {
                pc->unpack(&up, k ? bv + 32 : bp + 32, b, sign, bits);
                vx->unpack(&uv, k ? bv + 32 : bp + 32, b, sign, bits);
                expect_same(&up, &uv, "unpack");
            }
            /* pack(b + sign·a) and unpack(b + sign·field) are inverse for BitPack (sign −1) and
             * SimpleBitPack (b = 0) */
            if ((sign < 0 || b == 0) && memcmp(&a, &uv, sizeof a) != 0)
                fail_msg("unpack of pack width %u sign %d b %d", bits, sign, b);
        }
    }
}

/* The bounded rejection sampler: both η, random and all-reject/all-accept bytes, every budget. */
static void test_rej_eta(void **state)
{
    (void)state;
    static const unsigned budgets[] = {0, 1, 7, 8, 9, 15, 16, 17, 100, 248, 249, 255, 256};
    static uint8_t buf[600];
    int32_t ref[N + 16], vec[N + 16];
    for (unsigned it = 0; it < 3000; it++) {
        unsigned eta = it & 1 ? 4 : 2, buflen = it % 300 + (it / 300) % 5;
        tu_fill(buf, sizeof buf, 5000 + it);
        if (it % 7 == 3) /* long runs of rejected nibbles (15, or ≥ 9 for η = 4) */
            for (unsigned i = 0; i < buflen; i += 3)
                buf[i] = 0xFF;
        unsigned len = budgets[it % (sizeof budgets / sizeof budgets[0])];
        for (unsigned i = 0; i < N + 16; i++)
            ref[i] = vec[i] = 0x5A5A5A5A;
        unsigned nr = pc->rej_eta(ref, len, buf, buflen, eta), nv = vx->rej_eta(vec, len, buf, buflen, eta);
        if (nr != nv)
            fail_msg("rej_eta count: portable %u, avx2 %u (eta %u, len %u, buflen %u)", nr, nv, eta, len, buflen);
        for (unsigned i = 0; i < nr; i++)
            if (ref[i] != vec[i])
                fail_msg("rej_eta a[%u]: portable %d, avx2 %d (eta %u)", i, ref[i], vec[i], eta);
        for (unsigned i = len; i < N + 16; i++)
            assert_int_equal(vec[i], 0x5A5A5A5A);
    }
}

#endif /* DSIG_MLDSA_HAVE_AVX2 */

int main(void)
{
#ifdef DSIG_MLDSA_HAVE_AVX2
    TU_SKIP_WITHOUT_CPU(DSIG_CPU_AVX2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise), cmocka_unit_test(test_norm),
        cmocka_unit_test(test_rounding_exhaustive), cmocka_unit_test(test_make_hint),
        cmocka_unit_test(test_pack), cmocka_unit_test(test_rej_eta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    printf("skipped: no AVX2 back-end on this architecture\n");
    return 77;
#endif
}
