/*
 * src/hash/blake3_avx2.c — AVX2 BLAKE3 hash_many: 8 independent inputs compressed in parallel, each ymm
 * register holding one state (or message) word of all 8 inputs, so G needs no shuffles between steps.
 * Message blocks are transposed in registers on load and chaining values transposed back on store. Used
 * for whole chunks (dsig_blake3_update), parent layers and dsig_blake3_hash64_many (Merkle nodes).
 */
#include "hash/blake3_impl.h"

#ifdef DSIG_B3_X86

#include <immintrin.h>

#define B3_AVX2 __attribute__((target("avx2")))

/* Rotate each 32-bit lane right by 16 (byte shuffle within each 128-bit half). */
B3_AVX2 static inline __m256i rot16(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3,
                                                   0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
}

/* Rotate each 32-bit lane right by 12. */
B3_AVX2 static inline __m256i rot12(__m256i x)
{
    return _mm256_or_si256(_mm256_srli_epi32(x, 12), _mm256_slli_epi32(x, 20));
}

/* Rotate each 32-bit lane right by 8 (byte shuffle). */
B3_AVX2 static inline __m256i rot8(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2,
                                                   3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12));
}

/* Rotate each 32-bit lane right by 7. */
B3_AVX2 static inline __m256i rot7(__m256i x)
{
    return _mm256_or_si256(_mm256_srli_epi32(x, 7), _mm256_slli_epi32(x, 25));
}

/* @spec BLAKE3 spec §2.2: G on 8 inputs at once (message word added before b, as in the SSE4.1 G4). */
#define G8(a, b, c, d, x, y)                                                                                 \
    do {                                                                                                     \
        a = _mm256_add_epi32(_mm256_add_epi32(a, x), b);                                                     \
        d = rot16(_mm256_xor_si256(d, a));                                                                   \
        c = _mm256_add_epi32(c, d);                                                                          \
        b = rot12(_mm256_xor_si256(b, c));                                                                   \
        a = _mm256_add_epi32(_mm256_add_epi32(a, y), b);                                                     \
        d = rot8(_mm256_xor_si256(d, a));                                                                    \
        c = _mm256_add_epi32(c, d);                                                                          \
        b = rot7(_mm256_xor_si256(b, c));                                                                    \
    } while (0)

/* In-register 8x8 transpose of 32-bit words: x[r] word c  ->  x[c] word r. */
B3_AVX2 static inline void transpose8(__m256i x[8])
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

/* @spec BLAKE3 spec §2.2: 8 inputs in parallel (lane i = input i), `blocks` blocks each. */
B3_AVX2 static void avx2_hash8(const uint8_t *in, size_t stride, size_t blocks, const uint32_t key[8],
                               uint64_t counter, int inc_counter, uint8_t flags, uint8_t flags_start,
                               uint8_t flags_end, uint8_t *out)
{
    __m256i h[8];
    for (int i = 0; i < 8; i++)
        h[i] = _mm256_set1_epi32((int)key[i]);
    uint32_t lo[8], hi[8];
    for (int i = 0; i < 8; i++) {
        uint64_t c = counter + (inc_counter ? (uint64_t)i : 0);
        lo[i] = (uint32_t)c;
        hi[i] = (uint32_t)(c >> 32);
    }
    const __m256i clo = _mm256_loadu_si256((const __m256i *)lo);
    const __m256i chi = _mm256_loadu_si256((const __m256i *)hi);
    for (size_t j = 0; j < blocks; j++) {
        uint8_t f = flags;
        if (j == 0)
            f |= flags_start;
        if (j + 1 == blocks)
            f |= flags_end;
        __m256i m[16];
        for (int i = 0; i < 8; i++) {
            const uint8_t *p = in + (size_t)i * stride + 64 * j;
            m[i] = _mm256_loadu_si256((const __m256i *)p);
            m[8 + i] = _mm256_loadu_si256((const __m256i *)(p + 32));
        }
        transpose8(m);
        transpose8(m + 8);
        __m256i v[16];
        for (int i = 0; i < 8; i++)
            v[i] = h[i];
        for (int i = 0; i < 4; i++)
            v[8 + i] = _mm256_set1_epi32((int)dsig_b3_iv[i]);
        v[12] = clo;
        v[13] = chi;
        v[14] = _mm256_set1_epi32(64);
        v[15] = _mm256_set1_epi32(f);
#pragma GCC unroll 7
        for (int k = 0; k < 7; k++) {
            const uint8_t *s = dsig_b3_sched[k];
            G8(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
            G8(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
            G8(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
            G8(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
            G8(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
            G8(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
            G8(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
            G8(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
        }
        for (int i = 0; i < 8; i++)
            h[i] = _mm256_xor_si256(v[i], v[i + 8]);
    }
    transpose8(h);
    for (int i = 0; i < 8; i++)
        _mm256_storeu_si256((__m256i *)(out + 32 * i), h[i]);
}

/* 8-way hash_many (contract in blake3_impl.h); a remainder of < 8 inputs goes to the SSE4.1 back-end. */
B3_AVX2 void dsig_b3_avx2_hash_many(const uint8_t *in, size_t stride, size_t n, size_t blocks,
                                    const uint32_t key[8], uint64_t counter, int inc_counter, uint8_t flags,
                                    uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    while (n >= 8) {
        avx2_hash8(in, stride, blocks, key, counter, inc_counter, flags, flags_start, flags_end, out);
        in += 8 * stride;
        out += 8 * 32;
        n -= 8;
        if (inc_counter)
            counter += 8;
    }
    if (n > 0)
        dsig_b3_sse41_hash_many(in, stride, n, blocks, key, counter, inc_counter, flags, flags_start,
                                flags_end, out);
}

#endif
