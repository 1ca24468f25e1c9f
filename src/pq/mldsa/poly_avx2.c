/*
 * src/pq/mldsa/poly_avx2.c — AVX2 back-end of ML-DSA's element-wise kernels (poly.h) and rounding
 * (rounding.h): 8 coefficients per __m256i, the same formulas as the portable code, so the results are
 * bit-identical (contracts in kernels.h). Decompose computes ⌊x / 2γ2⌋ as (x · ⌈2^48 / 2γ2⌉) >> 48 like
 * the scalar form, with 32×32 → 64-bit multiplies on the even and the odd lanes.
 *
 * Constant time: straight-line vector arithmetic; no branch or index depends on a coefficient (the
 * hint count is a popcount of a compare mask).
 */
#include "pq/mldsa/kernels.h"

#ifdef DSIG_MLDSA_HAVE_AVX2

#include <immintrin.h>

#define MLDSA_AVX2 __attribute__((target("avx2")))
#define N DSIG_MLDSA_N
#define Q DSIG_MLDSA_Q

MLDSA_AVX2 static inline __m256i load(const mldsa_poly *a, unsigned i)
{
    return _mm256_load_si256((const __m256i *)&a->c[i]);
}

MLDSA_AVX2 static inline void store(mldsa_poly *a, unsigned i, __m256i v)
{
    _mm256_store_si256((__m256i *)&a->c[i], v);
}

/* mldsa_reduce32 on 8 lanes: a − ⌊(a + 2^22) / 2^23⌋·q. */
MLDSA_AVX2 static inline __m256i reduce32(__m256i a)
{
    __m256i t = _mm256_srai_epi32(_mm256_add_epi32(a, _mm256_set1_epi32(1 << 22)), 23);
    return _mm256_sub_epi32(a, _mm256_mullo_epi32(t, _mm256_set1_epi32(Q)));
}

/* mldsa_caddq on 8 lanes: + q where negative. */
MLDSA_AVX2 static inline __m256i caddq(__m256i a)
{
    return _mm256_add_epi32(a, _mm256_and_si256(_mm256_srai_epi32(a, 31), _mm256_set1_epi32(Q)));
}

MLDSA_AVX2 void dsig_mldsa_poly_add_avx2(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b)
{
    for (unsigned i = 0; i < N; i += 8)
        store(c, i, _mm256_add_epi32(load(a, i), load(b, i)));
}

MLDSA_AVX2 void dsig_mldsa_poly_sub_avx2(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b)
{
    for (unsigned i = 0; i < N; i += 8)
        store(c, i, _mm256_sub_epi32(load(a, i), load(b, i)));
}

MLDSA_AVX2 void dsig_mldsa_poly_reduce_avx2(mldsa_poly *a)
{
    for (unsigned i = 0; i < N; i += 8)
        store(a, i, reduce32(load(a, i)));
}

MLDSA_AVX2 void dsig_mldsa_poly_caddq_avx2(mldsa_poly *a)
{
    for (unsigned i = 0; i < N; i += 8)
        store(a, i, caddq(load(a, i)));
}

MLDSA_AVX2 void dsig_mldsa_poly_freeze_avx2(mldsa_poly *a)
{
    for (unsigned i = 0; i < N; i += 8)
        store(a, i, caddq(reduce32(load(a, i))));
}

MLDSA_AVX2 void dsig_mldsa_poly_shiftl_avx2(mldsa_poly *a)
{
    for (unsigned i = 0; i < N; i += 8)
        store(a, i, _mm256_slli_epi32(load(a, i), DSIG_MLDSA_D));
}

/* @spec FIPS 204 §2.3 infinity norm against a bound, every coefficient examined (no early exit). */
MLDSA_AVX2 uint32_t dsig_mldsa_poly_norm_exceeds_avx2(const mldsa_poly *a, int32_t bound)
{
    const __m256i lim = _mm256_set1_epi32(bound - 1);
    __m256i bad = _mm256_setzero_si256();
    for (unsigned i = 0; i < N; i += 8)
        bad = _mm256_or_si256(bad, _mm256_cmpgt_epi32(_mm256_abs_epi32(load(a, i)), lim));
    /* all-ones iff some lane compared greater, without a branch */
    return 0u - (uint32_t)!_mm256_testz_si256(bad, bad);
}

/* @spec FIPS 204 Algorithm 35 Power2Round: a1 = ⌊(a + 2^12 − 1) / 2^13⌋, a0 = a − a1·2^13. */
MLDSA_AVX2 void dsig_mldsa_poly_power2round_avx2(mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a)
{
    const __m256i half = _mm256_set1_epi32((1 << (DSIG_MLDSA_D - 1)) - 1);
    for (unsigned i = 0; i < N; i += 8) {
        __m256i x = load(a, i);
        __m256i hi = _mm256_srai_epi32(_mm256_add_epi32(x, half), DSIG_MLDSA_D);
        store(a0, i, _mm256_sub_epi32(x, _mm256_slli_epi32(hi, DSIG_MLDSA_D)));
        store(a1, i, hi);
    }
}

/* Decompose of 8 coefficients in [0, q) (mldsa_decompose, same steps): returns a1, sets *r0 = a0. */
MLDSA_AVX2 static inline __m256i decompose8(__m256i a, __m256i *r0, __m256i mul, __m256i alpha, __m256i gm1,
                                            __m256i m)
{
    __m256i x = _mm256_add_epi32(a, gm1); /* a + γ2 − 1 < 2^24 */
    /* ⌊x·mul / 2^48⌋ per lane: even lanes' products in place, odd lanes' moved down first */
    __m256i pe = _mm256_srli_epi64(_mm256_mul_epu32(x, mul), 48);
    __m256i po = _mm256_srli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), mul), 16);
    __m256i a1 = _mm256_blend_epi32(pe, po, 0xAA);
    __m256i a0 = _mm256_sub_epi32(a, _mm256_mullo_epi32(a1, alpha));
    /* a1 == m: high part 0 and a0 − 1 (the r+ − r0 = q − 1 case) */
    __m256i wrap = _mm256_cmpeq_epi32(a1, m);
    *r0 = _mm256_add_epi32(a0, wrap);
    return _mm256_andnot_si256(wrap, a1);
}

/* The decompose8 constants of one γ2. */
#define DECOMP_CONSTS(d)                                                                             \
    const __m256i mul = _mm256_set1_epi64x((long long)(d)->mul);                                      \
    const __m256i alpha = _mm256_set1_epi32((d)->alpha), gm1 = _mm256_set1_epi32((d)->gamma2 - 1);   \
    const __m256i m = _mm256_set1_epi32((int)(d)->m)

/* @spec FIPS 204 Algorithms 36–38 Decompose / HighBits / LowBits on every coefficient. */
MLDSA_AVX2 void dsig_mldsa_poly_decompose_avx2(const mldsa_decomp *d, mldsa_poly *a1, mldsa_poly *a0,
                                               const mldsa_poly *a)
{
    DECOMP_CONSTS(d);
    for (unsigned i = 0; i < N; i += 8) {
        __m256i lo, hi = decompose8(load(a, i), &lo, mul, alpha, gm1, m);
        store(a1, i, hi);
        store(a0, i, lo);
    }
}

/* @spec FIPS 204 Algorithm 39 MakeHint in the signer's form (mldsa_make_hint): h = 1 iff a0 > γ2,
 * a0 < −γ2, or a0 = −γ2 with a1 ≠ 0; returns the number of ones. */
MLDSA_AVX2 unsigned dsig_mldsa_poly_make_hint_avx2(mldsa_poly *h, const mldsa_poly *a0, const mldsa_poly *a1,
                                                   int32_t gamma2)
{
    const __m256i g = _mm256_set1_epi32(gamma2), ng = _mm256_set1_epi32(-gamma2);
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    unsigned n = 0;
    for (unsigned i = 0; i < N; i += 8) {
        __m256i x = load(a0, i);
        __m256i out = _mm256_or_si256(_mm256_cmpgt_epi32(x, g), _mm256_cmpgt_epi32(ng, x));
        __m256i edge = _mm256_andnot_si256(_mm256_cmpeq_epi32(load(a1, i), zero), _mm256_cmpeq_epi32(x, ng));
        out = _mm256_or_si256(out, edge);
        store(h, i, _mm256_and_si256(out, one));
        n += (unsigned)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(out)));
    }
    return n;
}

/* @spec FIPS 204 Algorithm 40 UseHint on every coefficient: a1 ± 1 mod m where h = 1 (+ iff a0 > 0). */
MLDSA_AVX2 void dsig_mldsa_poly_use_hint_avx2(const mldsa_decomp *d, mldsa_poly *a, const mldsa_poly *h)
{
    DECOMP_CONSTS(d);
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi32(-1);
    for (unsigned i = 0; i < N; i += 8) {
        __m256i lo, hi = decompose8(load(a, i), &lo, mul, alpha, gm1, m);
        __m256i hint = _mm256_sub_epi32(zero, load(h, i)); /* h ∈ {0, 1} → 0 or all-ones */
        /* s = +1 where a0 > 0, −1 elsewhere; added where the hint is set */
        __m256i up = _mm256_cmpgt_epi32(lo, zero);
        __m256i s = _mm256_or_si256(_mm256_srli_epi32(up, 31), _mm256_andnot_si256(up, ones));
        hi = _mm256_add_epi32(hi, _mm256_and_si256(hint, s));
        /* wrap into [0, m): −1 → m − 1, m → 0 */
        hi = _mm256_add_epi32(hi, _mm256_and_si256(_mm256_srai_epi32(hi, 31), m));
        store(a, i, _mm256_andnot_si256(_mm256_cmpeq_epi32(hi, m), hi));
    }
}

#endif /* DSIG_MLDSA_HAVE_AVX2 */
