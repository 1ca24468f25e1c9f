/*
 * src/hash/haraka_vaes.c — four or eight Haraka-512 hashes at once with VAES (target("vaes,avx2")):
 * a 256-bit VAESENC is two independent AES rounds, one per 128-bit half, and the AVX2 unpacks work per
 * half too, so the AES-NI algorithm carries over with lane pair k (inputs 2k, 2k+1) in the two halves
 * of one ymm register per state word. Byte-identical to the AES-NI and portable back-ends.
 * `out` may be the same buffer as `in` (every input is read before any output is written).
 */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdint.h>

#include "core/cpu.h"
#include "hash/haraka_impl.h"

#define TARGET_VAES __attribute__((target("vaes,aes,avx2")))

/* Round constant k in both 128-bit halves. */
#define RC2(k) _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)dsig_haraka_rc[k]))

/* @spec Haraka v2 MIX for Haraka-512, on both halves at once (see mix4 in haraka_aesni.c). */
static inline TARGET_VAES void mix4x2(__m256i s[4])
{
    __m256i lo01 = _mm256_unpacklo_epi32(s[0], s[1]);
    __m256i hi01 = _mm256_unpackhi_epi32(s[0], s[1]);
    __m256i lo23 = _mm256_unpacklo_epi32(s[2], s[3]);
    __m256i hi23 = _mm256_unpackhi_epi32(s[2], s[3]);
    s[0] = _mm256_unpackhi_epi32(hi01, hi23);
    s[3] = _mm256_unpacklo_epi32(hi01, hi23);
    s[1] = _mm256_unpacklo_epi32(lo23, lo01);
    s[2] = _mm256_unpackhi_epi32(lo23, lo01);
}

/* Word j of inputs a (low half) and b (high half). */
static inline TARGET_VAES __m256i load_pair(const uint8_t *a, const uint8_t *b, int j)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)(a + 16 * j));
    __m128i hi = _mm_loadu_si128((const __m128i *)(b + 16 * j));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* @spec Haraka v2: Haraka-512 v2 (5 rounds, feed-forward, truncation) on 2*npairs independent inputs
 * (npairs is a compile-time constant after inlining, so the arrays live in registers). */
static inline __attribute__((always_inline)) TARGET_VAES void
haraka512_pairs(uint8_t *out, const uint8_t *in, const int npairs)
{
    __m256i s[4][4];
    for (int k = 0; k < npairs; k++)
        for (int j = 0; j < 4; j++)
            s[k][j] = load_pair(in + 128 * k, in + 128 * k + 64, j);
#pragma GCC unroll 5
    for (int t = 0; t < DSIG_HARAKA_ROUNDS; t++) {
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) {
            __m256i rc = RC2(8 * t + m);
#pragma GCC unroll 4
            for (int k = 0; k < npairs; k++)
                s[k][m & 3] = _mm256_aesenc_epi128(s[k][m & 3], rc);
        }
#pragma GCC unroll 4
        for (int k = 0; k < npairs; k++)
            mix4x2(s[k]);
    }
    /* Feed-forward and truncation for all lanes before any store (out == in allowed). */
    __m256i res[4][2];
    for (int k = 0; k < npairs; k++) {
        __m256i f[4];
        for (int j = 0; j < 4; j++)
            f[j] = _mm256_xor_si256(s[k][j], load_pair(in + 128 * k, in + 128 * k + 64, j));
        __m256i t01 = _mm256_unpackhi_epi64(f[0], f[1]); /* per half: bytes 8..15 of words 0, 1 */
        __m256i t23 = _mm256_unpacklo_epi64(f[2], f[3]); /* per half: bytes 0..7 of words 2, 3 */
        res[k][0] = _mm256_permute2x128_si256(t01, t23, 0x20); /* input 2k */
        res[k][1] = _mm256_permute2x128_si256(t01, t23, 0x31); /* input 2k+1 */
    }
    for (int k = 0; k < npairs; k++) {
        _mm256_storeu_si256((__m256i *)(out + 64 * k), res[k][0]);
        _mm256_storeu_si256((__m256i *)(out + 64 * k + 32), res[k][1]);
    }
}

/* Four Haraka-512 hashes: two lane pairs. */
TARGET_VAES void dsig_haraka512_x4_vaes(uint8_t out[4 * 32], const uint8_t in[4 * 64])
{
    haraka512_pairs(out, in, 2);
}

/* Eight Haraka-512 hashes: four lane pairs (measured faster than two calls of two pairs). */
TARGET_VAES void dsig_haraka512_x8_vaes(uint8_t out[8 * 32], const uint8_t in[8 * 64])
{
    haraka512_pairs(out, in, 4);
}

/* Only the multi-lane Haraka-512 forms gain from two lanes per ymm register; the rest (single inputs,
 * Haraka-256 x4) comes from the next back-end, AES-NI, which VAES implies here through `needs`. */
const dsig_haraka_backend dsig_haraka_backend_vaes = {
    .name = "vaes",
    .needs = DSIG_CPU_VAES | DSIG_CPU_AVX2 | DSIG_CPU_AESNI | DSIG_CPU_SSE41,
    .h512_x4 = dsig_haraka512_x4_vaes,
    .h512_x8 = dsig_haraka512_x8_vaes,
};

#else
/* Not x86: the dispatcher never selects this back-end; keep the translation unit non-empty. */
typedef int dsig_haraka_vaes_unused;

#endif
