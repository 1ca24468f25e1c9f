/*
 * src/hash/keccak_avx2.c — 4-way Keccak-f[1600] with AVX2: each ymm register holds the same lane of the
 * four interleaved states (dsig_keccak_x4 layout: lane i of instance j at s[4*i + j]), so one round
 * of keccak_impl.h runs on all four states with no shuffles between steps. Rotations by 8 and 56 are
 * byte shuffles; the others two shifts and an OR. Constant time: no branches or lookups on data.
 * Compiled with a per-function target attribute (no global -mavx2); called only when the CPU has AVX2.
 */
#include "hash/keccak_impl.h"

#include "core/cpu.h"

#ifdef DSIG_KECCAK_X86

#include <immintrin.h>

#define K_AVX2 __attribute__((target("avx2")))

/* Rotate each 64-bit lane left by 8 (byte shuffle within each 128-bit half). */
K_AVX2 static inline __m256i rol8(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_setr_epi8(7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7,
                                                   0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14));
}

/* Rotate each 64-bit lane left by 56 (= right by 8; byte shuffle). */
K_AVX2 static inline __m256i rol56(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_setr_epi8(1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8, 1,
                                                   2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8));
}

#define KXOR(a, b) _mm256_xor_si256((a), (b))
#define KANDN(a, b) _mm256_andnot_si256((a), (b))
#define KCHI(a, b, c) KXOR((a), KANDN((b), (c)))
#define KPAR(a, b, c, d, e) KXOR(KXOR(KXOR((a), (b)), KXOR((c), (d))), (e))
/* n is a compile-time constant, so the selection folds away. */
#define KROL(x, n)                                                                                    \
    ((n) == 8    ? rol8(x)                                                                            \
     : (n) == 56 ? rol56(x)                                                                           \
                 : _mm256_or_si256(_mm256_slli_epi64((x), (n)), _mm256_srli_epi64((x), 64 - (n))))
#define KRC(i) _mm256_set1_epi64x((long long)dsig_keccak_rc[(i)])

/* @spec FIPS 202 §3.3 Keccak-p[1600, 24] on four interleaved states (AVX2). */
K_AVX2 void dsig_keccak_f1600_x4_avx2(uint64_t s[100])
{
    __m256i c0, c1, c2, c3, c4, d0, d1, d2, d3, d4, b0, b1, b2, b3, b4;
    __m256i *v = (__m256i *)s; /* unaligned access: callers may pass any uint64_t[100] */
#define DECL(y, x, i) __m256i a##y##x = _mm256_loadu_si256(v + (i)), e##y##x;
    DSIG_KECCAK_LANES(DECL)
#undef DECL
    for (int r = 0; r < 24; r += 2) {
        DSIG_KECCAK_ROUND(a, e, r)
        DSIG_KECCAK_ROUND(e, a, r + 1)
    }
#define STORE(y, x, i) _mm256_storeu_si256(v + (i), a##y##x);
    DSIG_KECCAK_LANES(STORE)
#undef STORE
}

const dsig_keccak_x4_backend dsig_keccak_x4_avx2_backend = {
    .name = "avx2",
    .needs = DSIG_CPU_AVX2,
    .lanes = 4,
    .f1600_x4 = dsig_keccak_f1600_x4_avx2,
};

#endif
