/*
 * src/hash/blake3_avx2.c — AVX2 BLAKE3 hash_many: 8 independent inputs compressed in parallel, each ymm
 * register holding one state (or message) word of all 8 inputs, so G needs no shuffles between steps.
 * Message blocks are transposed in registers on load and chaining values transposed back on store. Used
 * for whole chunks (dsig_blake3_update), parent layers, dsig_blake3_hash64_many (Merkle nodes),
 * dsig_blake3_hash_many_chunks (DSig leaves) and 8 XOF output blocks at a time (dsig_blake3_finalize).
 */
#include "hash/blake3_impl.h"

#include "core/cpu.h"

#ifdef DSIG_B3_X86

#include <immintrin.h>

#include "core/avx2_util.h"
#include <string.h>

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

#define B3_X8 B3_AVX2
#define X8(name) avx2_##name
#include "hash/blake3_x8.h"

/* One group of 1..8 inputs: 8 at once; 2..7 as an 8-way group whose spare lanes repeat input 0 (their
 * results discarded; about the cost of one 4-way group on current cores); a single input serially. */
B3_AVX2 static void avx2_group(const uint8_t *const in[], const uint8_t *const last[], size_t r, size_t blocks,
                               uint8_t last_len, const uint32_t key[8], uint64_t counter, int inc_counter,
                               uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    if (r == 8) {
        avx2_hash8(in, last, blocks, last_len, key, counter, inc_counter, flags, flags_start, flags_end, out);
        return;
    }
    if (r == 1) {
        dsig_b3_sse41_hash_lanes(in, last, 1, blocks, last_len, key, counter, inc_counter, flags, flags_start,
                                 flags_end, out);
        return;
    }
    const uint8_t *pi[8], *pl[8];
    uint8_t tmp[8 * 32];
    for (size_t i = 0; i < 8; i++) {
        pi[i] = in[i < r ? i : 0];
        pl[i] = last ? last[i < r ? i : 0] : NULL;
    }
    avx2_hash8(pi, last ? pl : NULL, blocks, last_len, key, counter, inc_counter, flags, flags_start, flags_end,
               tmp);
    memcpy(out, tmp, 32 * r);
    b3_wipe(tmp, sizeof tmp); /* the spare lanes' results are key-dependent */
}

/* 8-way hash_lanes (contract in blake3_impl.h). */
B3_AVX2 void dsig_b3_avx2_hash_lanes(DSIG_B3_HASH_LANES_ARGS)
{
    for (size_t g = 0; g < n; g += 8) {
        size_t r = n - g < 8 ? n - g : 8;
        avx2_group(in + g, last ? last + g : NULL, r, blocks, last_len, key,
                   counter + (inc_counter ? g : 0), inc_counter, flags, flags_start, flags_end, out + 32 * g);
    }
}

/* 8-way hash_many (contract in blake3_impl.h): hash_lanes over contiguous inputs. */
B3_AVX2 void dsig_b3_avx2_hash_many(DSIG_B3_HASH_MANY_ARGS)
{
    for (size_t g = 0; g < n; g += 8) {
        size_t r = n - g < 8 ? n - g : 8;
        const uint8_t *p[8];
        for (size_t i = 0; i < r; i++)
            p[i] = in + (g + i) * stride;
        avx2_group(p, NULL, r, blocks, 64, key, counter + (inc_counter ? g : 0), inc_counter, flags,
                   flags_start, flags_end, out + 32 * g);
    }
}

/* @spec BLAKE3 spec §2.6: 8 root output blocks at once (counters counter..counter+7). The state and message
 * are the same for every lane but the counter, so the message words are broadcasts (no transpose on load);
 * the 16 output words of each lane are transposed back on store. */
B3_AVX2 static void avx2_xof8(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                              uint64_t counter, uint8_t flags, uint8_t *out)
{
    __m256i m[16], v[16];
    for (int i = 0; i < 16; i++)
        m[i] = _mm256_set1_epi32((int)dsig_load_le32(block + 4 * i));
    for (int i = 0; i < 8; i++)
        v[i] = _mm256_set1_epi32((int)cv[i]);
    for (int i = 0; i < 4; i++)
        v[8 + i] = _mm256_set1_epi32((int)dsig_b3_iv[i]);
    avx2_counters(counter, 1, &v[12], &v[13]);
    v[14] = _mm256_set1_epi32(block_len);
    v[15] = _mm256_set1_epi32(flags);
    avx2_rounds(v, m);
    __m256i o[16];
    for (int i = 0; i < 8; i++) {
        o[i] = _mm256_xor_si256(v[i], v[i + 8]);
        o[8 + i] = _mm256_xor_si256(v[i + 8], _mm256_set1_epi32((int)cv[i]));
    }
    dsig_avx2_transpose8x32(o);
    dsig_avx2_transpose8x32(o + 8);
    for (int i = 0; i < 8; i++) {
        _mm256_storeu_si256((__m256i *)(out + 64 * i), o[i]);
        _mm256_storeu_si256((__m256i *)(out + 64 * i + 32), o[8 + i]);
    }
}

/* 8-way xof_many (contract in blake3_impl.h); a remainder of 4..7 takes a padded 8-way group, fewer the
 * SSE4.1 back-end. */
B3_AVX2 void dsig_b3_avx2_xof_many(DSIG_B3_XOF_MANY_ARGS)
{
    while (n >= 8) {
        avx2_xof8(cv, block, block_len, counter, flags, out);
        out += 8 * 64;
        counter += 8;
        n -= 8;
    }
    if (n >= 4) {
        uint8_t tmp[8 * 64];
        avx2_xof8(cv, block, block_len, counter, flags, tmp);
        memcpy(out, tmp, 64 * n);
        b3_wipe(tmp, sizeof tmp);
    } else if (n > 0) {
        dsig_b3_sse41_xof_many(cv, block, block_len, counter, flags, n, out);
    }
}

/* AVX2 widens the batches to 8; a single block is fastest in 4 xmm rows, so the one-block compression
 * is left to the next back-end (SSE4.1, which the remainders use too: hence `needs`). */
const dsig_b3_backend dsig_b3_backend_avx2 = {.name = "avx2",
                                              .needs = DSIG_CPU_AVX2 | DSIG_CPU_SSE41,
                                              .hash_many = dsig_b3_avx2_hash_many,
                                              .hash_lanes = dsig_b3_avx2_hash_lanes,
                                              .xof_many = dsig_b3_avx2_xof_many,
                                              .degree = 8};

#endif
