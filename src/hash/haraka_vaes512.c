/*
 * src/hash/haraka_vaes512.c — four or eight Haraka-512 hashes at once with VAES on 512-bit registers
 * (target("vaes,avx512f")): one zmm register holds state word j of four inputs, one per 128-bit lane,
 * so a VAESENC is four AES rounds and each MIX unpack serves four inputs. The 256-bit back-end
 * (haraka_vaes.c) needs twice the unpacks per hash, and those run on a single shuffle port: that port,
 * not AES, bounds it. Byte-identical to the AES-NI and portable back-ends. `out` may be `in`.
 */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdint.h>

#include "core/cpu.h"
#include "hash/haraka_impl.h"
#include "hash/haraka_vaes512_core.h"

/* Inputs in[0..3] (64 bytes each, one per register as loaded) to word-major order: w[j] = word j of
 * the four inputs, input i in lane i (a 4x4 transpose of 128-bit lanes). */
static inline TARGET_V512 void load_quad(const uint8_t *in, __m512i w[4])
{
    __m512i a = _mm512_loadu_si512(in), b = _mm512_loadu_si512(in + 64);
    __m512i c = _mm512_loadu_si512(in + 128), d = _mm512_loadu_si512(in + 192);
    __m512i t0 = _mm512_shuffle_i64x2(a, b, 0x44); /* a0 a1 b0 b1 */
    __m512i t1 = _mm512_shuffle_i64x2(a, b, 0xEE); /* a2 a3 b2 b3 */
    __m512i t2 = _mm512_shuffle_i64x2(c, d, 0x44); /* c0 c1 d0 d1 */
    __m512i t3 = _mm512_shuffle_i64x2(c, d, 0xEE); /* c2 c3 d2 d3 */
    w[0] = _mm512_shuffle_i64x2(t0, t2, 0x88);     /* a0 b0 c0 d0 */
    w[1] = _mm512_shuffle_i64x2(t0, t2, 0xDD);
    w[2] = _mm512_shuffle_i64x2(t1, t3, 0x88);
    w[3] = _mm512_shuffle_i64x2(t1, t3, 0xDD);
}

/* @spec Haraka v2: Haraka-512 v2 (5 rounds, feed-forward, truncation) on 4·nquads inputs (nquads is a
 * compile-time constant after inlining, so the state stays in registers). */
static inline __attribute__((always_inline)) TARGET_V512 void
haraka512_quads(uint8_t *out, const uint8_t *in, const int nquads)
{
    __m512i w[2][4], s[2][4];
    for (int q = 0; q < nquads; q++) {
        load_quad(in + 256 * q, w[q]);
        for (int j = 0; j < 4; j++)
            s[q][j] = w[q][j];
    }
    dsig_haraka512_v512_rounds(s, nquads);
    /* Feed-forward and truncation (bytes 8..15 of words 0, 1 and 0..7 of words 2, 3 per input), for
     * every input before any store (out == in allowed). */
    const __m512i lo_idx = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    const __m512i hi_idx = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    __m512i res[2][2];
    for (int q = 0; q < nquads; q++) {
        __m512i t01 = _mm512_unpackhi_epi64(_mm512_xor_si512(s[q][0], w[q][0]), _mm512_xor_si512(s[q][1], w[q][1]));
        __m512i t23 = _mm512_unpacklo_epi64(_mm512_xor_si512(s[q][2], w[q][2]), _mm512_xor_si512(s[q][3], w[q][3]));
        res[q][0] = _mm512_permutex2var_epi64(t01, lo_idx, t23); /* outputs of inputs 0, 1 */
        res[q][1] = _mm512_permutex2var_epi64(t01, hi_idx, t23); /* outputs of inputs 2, 3 */
    }
    for (int q = 0; q < nquads; q++) {
        _mm512_storeu_si512(out + 128 * q, res[q][0]);
        _mm512_storeu_si512(out + 128 * q + 64, res[q][1]);
    }
}

/* Four Haraka-512 hashes: one register group. */
TARGET_V512 void dsig_haraka512_x4_vaes512(uint8_t out[4 * 32], const uint8_t in[4 * 64])
{
    haraka512_quads(out, in, 1);
}

/* Eight Haraka-512 hashes: two register groups, interleaved (the AES latency is hidden by the other). */
TARGET_V512 void dsig_haraka512_x8_vaes512(uint8_t out[8 * 32], const uint8_t in[8 * 64])
{
    haraka512_quads(out, in, 2);
}

/* The multi-lane Haraka-512 forms only; single inputs come from AES-NI (implied through `needs`). */
const dsig_haraka_backend dsig_haraka_backend_vaes512 = {
    .name = "vaes512",
    .needs = DSIG_CPU_VAES | DSIG_CPU_AVX512 | DSIG_CPU_AVX2 | DSIG_CPU_AESNI | DSIG_CPU_SSE41,
    .h512_x4 = dsig_haraka512_x4_vaes512,
    .h512_x8 = dsig_haraka512_x8_vaes512,
};

#else
/* Not x86: the dispatcher never selects this back-end; keep the translation unit non-empty. */
typedef int dsig_haraka_vaes512_unused;

#endif
