/*
 * src/hash/haraka_aesni.c — Haraka v2 with AES-NI (target("aes,sse4.1"), chosen at run time by
 * haraka.c). One AESENC is exactly one Haraka AES round (SubBytes, ShiftRows, MixColumns, XOR RC), and
 * MIX is a network of 32-bit unpacks. The multi-lane forms interleave independent inputs so the AESENC
 * latency (about 4 cycles) is hidden behind the other lanes' instructions: Haraka-256 x4 runs four lanes
 * (8 states) in lock-step, Haraka-512 runs pairs (8 states; 16 would not fit the xmm registers).
 * `out` may be the same buffer as `in` (every input is read before any output is written).
 */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdint.h>

#include "core/cpu.h"
#include "hash/haraka_impl.h"

#define TARGET_AESNI __attribute__((target("aes,sse4.1")))

/* Round constant k as a vector (aligned table: a memory operand of AESENC). */
#define RC(k) _mm_load_si128((const __m128i *)dsig_haraka_rc[k])

/* @spec Haraka v2 MIX for Haraka-512: new words = columns (3,11,7,15), (8,0,12,4), (9,1,13,5),
 * (2,10,6,14) of the old 16 32-bit columns. */
static inline TARGET_AESNI void mix4(__m128i s[4])
{
    __m128i lo01 = _mm_unpacklo_epi32(s[0], s[1]); /* 0 4 1 5 */
    __m128i hi01 = _mm_unpackhi_epi32(s[0], s[1]); /* 2 6 3 7 */
    __m128i lo23 = _mm_unpacklo_epi32(s[2], s[3]); /* 8 12 9 13 */
    __m128i hi23 = _mm_unpackhi_epi32(s[2], s[3]); /* 10 14 11 15 */
    s[0] = _mm_unpackhi_epi32(hi01, hi23);         /* 3 11 7 15 */
    s[3] = _mm_unpacklo_epi32(hi01, hi23);         /* 2 10 6 14 */
    s[1] = _mm_unpacklo_epi32(lo23, lo01);         /* 8 0 12 4 */
    s[2] = _mm_unpackhi_epi32(lo23, lo01);         /* 9 1 13 5 */
}

/* @spec Haraka v2 MIX for Haraka-256: columns (0,4,1,5), (2,6,3,7). */
static inline TARGET_AESNI void mix2(__m128i s[2])
{
    __m128i lo = _mm_unpacklo_epi32(s[0], s[1]);
    s[1] = _mm_unpackhi_epi32(s[0], s[1]);
    s[0] = lo;
}

/* Haraka-512 truncation: bytes 8..15 of words 0 and 1, bytes 0..7 of words 2 and 3. */
static inline TARGET_AESNI void store_trunc512(uint8_t out[32], const __m128i f[4])
{
    _mm_storeu_si128((__m128i *)out, _mm_unpackhi_epi64(f[0], f[1]));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_unpacklo_epi64(f[2], f[3]));
}

/* @spec Haraka v2: Haraka-256 v2 — 5 rounds of (2 AES rounds per word with RC[4t..4t+3], MIX2), then
 * feed-forward. */
TARGET_AESNI void dsig_haraka256_aesni(uint8_t out[32], const uint8_t in[32])
{
    __m128i x[2], s[2];
    for (int j = 0; j < 2; j++)
        s[j] = x[j] = _mm_loadu_si128((const __m128i *)(in + 16 * j));
#pragma GCC unroll 5
    for (int t = 0; t < DSIG_HARAKA_ROUNDS; t++) {
        s[0] = _mm_aesenc_si128(s[0], RC(4 * t + 0));
        s[1] = _mm_aesenc_si128(s[1], RC(4 * t + 1));
        s[0] = _mm_aesenc_si128(s[0], RC(4 * t + 2));
        s[1] = _mm_aesenc_si128(s[1], RC(4 * t + 3));
        mix2(s);
    }
    _mm_storeu_si128((__m128i *)out, _mm_xor_si128(s[0], x[0]));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_xor_si128(s[1], x[1]));
}

/* @spec Haraka v2: Haraka-512 v2 — 5 rounds of (2 AES rounds per word with RC[8t..8t+7], MIX4), then
 * feed-forward and truncation. */
TARGET_AESNI void dsig_haraka512_aesni(uint8_t out[32], const uint8_t in[64])
{
    __m128i x[4], s[4];
    for (int j = 0; j < 4; j++)
        s[j] = x[j] = _mm_loadu_si128((const __m128i *)(in + 16 * j));
#pragma GCC unroll 5
    for (int t = 0; t < DSIG_HARAKA_ROUNDS; t++) {
#pragma GCC unroll 2
        for (int m = 0; m < 2; m++)
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++)
                s[j] = _mm_aesenc_si128(s[j], RC(8 * t + 4 * m + j));
        mix4(s);
    }
    for (int j = 0; j < 4; j++)
        s[j] = _mm_xor_si128(s[j], x[j]);
    store_trunc512(out, s);
}

/* Four Haraka-256 hashes in lock-step (each RC load serves four AESENCs). */
TARGET_AESNI void dsig_haraka256_x4_aesni(uint8_t out[4 * 32], const uint8_t in[4 * 32])
{
    __m128i s[4][2];
    for (int l = 0; l < 4; l++)
        for (int j = 0; j < 2; j++)
            s[l][j] = _mm_loadu_si128((const __m128i *)(in + 32 * l + 16 * j));
#pragma GCC unroll 5
    for (int t = 0; t < DSIG_HARAKA_ROUNDS; t++) {
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            __m128i rc = RC(4 * t + k);
#pragma GCC unroll 4
            for (int l = 0; l < 4; l++)
                s[l][k & 1] = _mm_aesenc_si128(s[l][k & 1], rc);
        }
#pragma GCC unroll 4
        for (int l = 0; l < 4; l++)
            mix2(s[l]);
    }
    /* Feed-forward for every lane before any store, so out == in works. */
    for (int l = 0; l < 4; l++)
        for (int j = 0; j < 2; j++)
            s[l][j] = _mm_xor_si128(s[l][j], _mm_loadu_si128((const __m128i *)(in + 32 * l + 16 * j)));
    for (int l = 0; l < 4; l++)
        for (int j = 0; j < 2; j++)
            _mm_storeu_si128((__m128i *)(out + 32 * l + 16 * j), s[l][j]);
}

/* Two Haraka-512 hashes in lock-step: 8 states, enough AESENCs in flight to cover the latency at two
 * per cycle, while state + constant + MIX temporaries still fit the 16 xmm registers (four lanes at
 * once spill and are slower). */
static inline TARGET_AESNI void haraka512_x2(uint8_t out[2 * 32], const uint8_t in[2 * 64])
{
    __m128i s[2][4];
    for (int l = 0; l < 2; l++)
        for (int j = 0; j < 4; j++)
            s[l][j] = _mm_loadu_si128((const __m128i *)(in + 64 * l + 16 * j));
#pragma GCC unroll 5
    for (int t = 0; t < DSIG_HARAKA_ROUNDS; t++) {
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            __m128i rc = RC(8 * t + k);
            s[0][k & 3] = _mm_aesenc_si128(s[0][k & 3], rc);
            s[1][k & 3] = _mm_aesenc_si128(s[1][k & 3], rc);
        }
        mix4(s[0]);
        mix4(s[1]);
    }
    for (int l = 0; l < 2; l++)
        for (int j = 0; j < 4; j++)
            s[l][j] = _mm_xor_si128(s[l][j], _mm_loadu_si128((const __m128i *)(in + 64 * l + 16 * j)));
    store_trunc512(out, s[0]);
    store_trunc512(out + 32, s[1]);
}

/* Four Haraka-512 hashes: two lock-step pairs. With out == in, the first pair's 64 output bytes
 * overwrite only its own (consumed) input. */
TARGET_AESNI void dsig_haraka512_x4_aesni(uint8_t out[4 * 32], const uint8_t in[4 * 64])
{
    haraka512_x2(out, in);
    haraka512_x2(out + 64, in + 128);
}

/* Eight Haraka-512 hashes without VAES: two x4 batches. With out == in, each batch only overwrites
 * input that has already been consumed. */
TARGET_AESNI void dsig_haraka512_x8_aesni(uint8_t out[8 * 32], const uint8_t in[8 * 64])
{
    dsig_haraka512_x4_aesni(out, in);
    dsig_haraka512_x4_aesni(out + 4 * 32, in + 4 * 64);
}

/* AES-NI with SSE4.1 (the shuffles and blends around AESENC). */
const dsig_haraka_backend dsig_haraka_backend_aesni = {
    .name = "aesni",
    .needs = DSIG_CPU_AESNI | DSIG_CPU_SSE41,
    .h256 = dsig_haraka256_aesni,
    .h512 = dsig_haraka512_aesni,
    .h256_x4 = dsig_haraka256_x4_aesni,
    .h512_x4 = dsig_haraka512_x4_aesni,
    .h512_x8 = dsig_haraka512_x8_aesni,
};

#else
/* Not x86: the dispatcher never selects this back-end; keep the translation unit non-empty. */
typedef int dsig_haraka_aesni_unused;

#endif
