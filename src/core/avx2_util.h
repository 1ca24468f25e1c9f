/*
 * src/core/avx2_util.h — AVX2 building blocks shared by vector back-ends (BLAKE3, ML-DSA NTT, SHA-256 x8,
 * SHA-512 x4).
 * Include only from files that check for x86-64; every function carries target("avx2"), so callers
 * need no global -mavx2 and must only run them after dsig_cpu_features() reported DSIG_CPU_AVX2.
 */
#ifndef DSIG_CORE_AVX2_UTIL_H
#define DSIG_CORE_AVX2_UTIL_H

#include <immintrin.h>

/* In-register 8×8 transpose of 32-bit words: x[r] word c ↔ x[c] word r (its own inverse). */
__attribute__((target("avx2"))) static inline void dsig_avx2_transpose8x32(__m256i x[8])
{
    __m256i t0 = _mm256_unpacklo_epi32(x[0], x[1]), t1 = _mm256_unpackhi_epi32(x[0], x[1]);
    __m256i t2 = _mm256_unpacklo_epi32(x[2], x[3]), t3 = _mm256_unpackhi_epi32(x[2], x[3]);
    __m256i t4 = _mm256_unpacklo_epi32(x[4], x[5]), t5 = _mm256_unpackhi_epi32(x[4], x[5]);
    __m256i t6 = _mm256_unpacklo_epi32(x[6], x[7]), t7 = _mm256_unpackhi_epi32(x[6], x[7]);
    /* u0..u3: words 0..3 (low half) and 4..7 (high half) of rows 0..3; u4..u7 the same for rows 4..7. */
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    x[0] = _mm256_permute2x128_si256(u0, u4, 0x20);
    x[1] = _mm256_permute2x128_si256(u1, u5, 0x20);
    x[2] = _mm256_permute2x128_si256(u2, u6, 0x20);
    x[3] = _mm256_permute2x128_si256(u3, u7, 0x20);
    x[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
    x[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
    x[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
    x[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

/* In-register 4×4 transpose of 64-bit words: x[r] qword c ↔ x[c] qword r (its own inverse). */
__attribute__((target("avx2"))) static inline void dsig_avx2_transpose4x64(__m256i x[4])
{
    __m256i t0 = _mm256_unpacklo_epi64(x[0], x[1]), t1 = _mm256_unpackhi_epi64(x[0], x[1]);
    __m256i t2 = _mm256_unpacklo_epi64(x[2], x[3]), t3 = _mm256_unpackhi_epi64(x[2], x[3]);
    /* t0 = {r0c0, r1c0, r0c2, r1c2}, t1 = {r0c1, r1c1, r0c3, r1c3}; t2/t3 the same for rows 2, 3. */
    x[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    x[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    x[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    x[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

#endif
