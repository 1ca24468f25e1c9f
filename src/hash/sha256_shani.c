/*
 * src/hash/sha256_shani.c — SHA-256 compression with the SHA extensions (target("sha,sse4.1")).
 *
 * From Intel's instruction definitions: SHA256RNDS2 xmm1, xmm2, <xmm0> does two rounds of FIPS 180-4
 * §6.2.2 step 3; xmm1 holds the state words {C,D,G,H} and xmm2 {A,B,E,F} (the first-named word in the
 * highest dword), the low two dwords of xmm0 are W_t+K_t and W_{t+1}+K_{t+1}, and the result is the new
 * {A,B,E,F} (the new {C,D,G,H} is the old {A,B,E,F}). SHA256MSG1 adds σ0(W_{t-15}) to W_{t-16} for four
 * t; SHA256MSG2 adds σ1 of W_{t-2} (including the two words it computes itself) to finish W_t.
 *
 * Also here, the two-lane kernel: two SHA-NI compressions interleaved instruction by instruction. One
 * SHA-NI compression is a chain of 32 dependent SHA256RNDS2 (~43 ns per block when each block depends
 * on the last, ~25 ns when the out-of-order core overlaps neighbours); two independent chains in one
 * instruction stream fill the gaps (~18 ns per block on AMD EPYC), which is why the dispatcher prefers
 * it to the 8 AVX2 lanes (~38 ns per block and lane) wherever SHA-NI exists.
 */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cpu.h"
#include "dsig/mem.h"
#include "hash/sha256_impl.h"

#define TARGET_SHANI __attribute__((target("sha,sse4.1")))

/* W+K for 4 rounds starting at t, then 4 rounds (2 x SHA256RNDS2) updating abef/cdgh. */
#define ROUNDS4(w, t)                                                                              \
    do {                                                                                           \
        __m128i wk = _mm_add_epi32((w), _mm_load_si128((const __m128i *)&dsig_sha256_k[t]));       \
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);                                              \
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0e));                     \
    } while (0)

/* The next four schedule words W_t..W_{t+3} from the previous 16 (w0 oldest .. w3 newest):
 * @spec FIPS 180-4 §6.2.2 step 1, W_t = σ1(W_{t-2}) + W_{t-7} + σ0(W_{t-15}) + W_{t-16}. */
static inline TARGET_SHANI __m128i schedule(__m128i w0, __m128i w1, __m128i w2, __m128i w3)
{
    __m128i x = _mm_sha256msg1_epu32(w0, w1);        /* W_{t-16} + σ0(W_{t-15}) */
    x = _mm_add_epi32(x, _mm_alignr_epi8(w3, w2, 4)); /* + W_{t-7} */
    return _mm_sha256msg2_epu32(x, w3);              /* + σ1(W_{t-2}) */
}

/* @spec FIPS 180-4 §6.2.2: SHA-256 compression of n 64-byte blocks with SHA-NI. */
TARGET_SHANI void dsig_sha256_compress_shani(uint32_t state[8], const uint8_t *blocks, size_t n)
{
    /* Big-endian message words: reverse the bytes within each dword. */
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i abcd = _mm_loadu_si128((const __m128i *)state);       /* dwords: a b c d */
    __m128i efgh = _mm_loadu_si128((const __m128i *)(state + 4)); /* dwords: e f g h */
    /* Rearrange into the instruction's {A,B,E,F} / {C,D,G,H} (A in the top dword). */
    __m128i badc = _mm_shuffle_epi32(abcd, 0xb1);               /* b a d c */
    __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1b);               /* h g f e */
    __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);              /* f e b a */
    __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xf0);           /* h g d c */

    for (; n > 0; n--, blocks += 64) {
        __m128i abef_in = abef, cdgh_in = cdgh;
        __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)blocks), bswap);
        __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 16)), bswap);
        __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 32)), bswap);
        __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 48)), bswap);
        ROUNDS4(w0, 0);
        ROUNDS4(w1, 4);
        ROUNDS4(w2, 8);
        ROUNDS4(w3, 12);
        /* Rounds 16..63: a sliding window of four 4-word groups. */
#pragma GCC unroll 12
        for (int t = 16; t < 64; t += 4) {
            __m128i w4 = schedule(w0, w1, w2, w3);
            ROUNDS4(w4, t);
            w0 = w1;
            w1 = w2;
            w2 = w3;
            w3 = w4;
        }
        abef = _mm_add_epi32(abef, abef_in);
        cdgh = _mm_add_epi32(cdgh, cdgh_in);
    }

    /* Back to a b c d / e f g h. */
    __m128i feba = _mm_shuffle_epi32(abef, 0x1b); /* a b e f */
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1); /* g h c d */
    _mm_storeu_si128((__m128i *)state, _mm_blend_epi16(feba, dchg, 0xf0));        /* a b c d */
    _mm_storeu_si128((__m128i *)(state + 4), _mm_alignr_epi8(dchg, feba, 8));     /* e f g h */
}

#if defined(__x86_64__)
/* @spec FIPS 180-4 §6.2.2: out[l] = compress(init, blocks[l]) for l = 0, 1 with SHA-NI, the two
 * compressions interleaved (SHA256RNDS2 takes {A,B,E,F} / {C,D,G,H} with A in the top dword, see
 * sha256_shani.c). Needs dsig_sha256_have_shani(). */
TARGET_SHANI void dsig_sha256_compress_x2_shani_from(uint32_t out[2][8], const uint32_t init[8],
                                                     const uint8_t *const blocks[2])
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i abcd = _mm_loadu_si128((const __m128i *)init);
    __m128i efgh = _mm_loadu_si128((const __m128i *)(init + 4));
    __m128i badc = _mm_shuffle_epi32(abcd, 0xb1), hgfe = _mm_shuffle_epi32(efgh, 0x1b);
    const __m128i abef0 = _mm_alignr_epi8(badc, hgfe, 8);    /* dwords f e b a */
    const __m128i cdgh0 = _mm_blend_epi16(hgfe, badc, 0xf0); /* dwords h g d c */
    __m128i abef[2] = {abef0, abef0}, cdgh[2] = {cdgh0, cdgh0}, w[2][4];
    for (int l = 0; l < 2; l++)
        for (int q = 0; q < 4; q++)
            w[l][q] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks[l] + 16 * q)), bswap);
    /* Fully unrolled so the 4-group window w[l][q] stays in registers (q is a constant). */
#pragma GCC unroll 16
    for (int t = 0; t < 64; t += 4) {
        const int q = (t / 4) & 3;
        if (t >= 16)
            for (int l = 0; l < 2; l++)
                w[l][q] = schedule(w[l][q], w[l][(q + 1) & 3], w[l][(q + 2) & 3],
                                         w[l][(q + 3) & 3]);
        const __m128i k = _mm_load_si128((const __m128i *)&dsig_sha256_k[t]);
        __m128i wk0 = _mm_add_epi32(w[0][q], k), wk1 = _mm_add_epi32(w[1][q], k);
        cdgh[0] = _mm_sha256rnds2_epu32(cdgh[0], abef[0], wk0);
        cdgh[1] = _mm_sha256rnds2_epu32(cdgh[1], abef[1], wk1);
        abef[0] = _mm_sha256rnds2_epu32(abef[0], cdgh[0], _mm_shuffle_epi32(wk0, 0x0e));
        abef[1] = _mm_sha256rnds2_epu32(abef[1], cdgh[1], _mm_shuffle_epi32(wk1, 0x0e));
    }
    for (int l = 0; l < 2; l++) {
        /* Feed-forward, then back from {f e b a}/{h g d c} to a b c d / e f g h. */
        __m128i abef_r = _mm_shuffle_epi32(_mm_add_epi32(abef[l], abef0), 0x1b); /* a b e f */
        __m128i cdgh_r = _mm_shuffle_epi32(_mm_add_epi32(cdgh[l], cdgh0), 0x1b); /* c d g h */
        _mm_storeu_si128((__m128i *)out[l], _mm_unpacklo_epi64(abef_r, cdgh_r));
        _mm_storeu_si128((__m128i *)(out[l] + 4), _mm_unpackhi_epi64(abef_r, cdgh_r));
    }
    /* The message words derive from possibly secret input: clear the registers' spill copies. */
    dsig_memzero(w, sizeof w);
}

/* state[l] = compress(state[l], blocks[l]) for two lanes: two independent calls, which the
 * out-of-order core overlaps. */
void dsig_sha256_compress_x2_shani(uint32_t state[2][8], const uint8_t *const blocks[2])
{
    dsig_sha256_compress_shani(state[0], blocks[0], 1);
    dsig_sha256_compress_shani(state[1], blocks[1], 1);
}
#endif

/* Needs the SHA extensions plus SSE4.1 (the byte shuffles and blends around them). Two lanes
 * interleaved beat the 8 AVX2 lanes per block, so the dispatcher prefers this wide kernel too. */
const dsig_sha256_backend dsig_sha256_backend_shani = {
    .name = "shani",
    .needs = DSIG_CPU_SHANI | DSIG_CPU_SSE41,
    .compress = dsig_sha256_compress_shani,
#if defined(__x86_64__)
    .lanes = 2,
    .lanes_from = dsig_sha256_compress_x2_shani_from,
    .lanes_cont = dsig_sha256_compress_x2_shani,
#endif
};

#else
/* Not x86: the dispatcher never selects this back-end; keep the translation unit non-empty. */
typedef int dsig_sha256_shani_unused;
#endif
