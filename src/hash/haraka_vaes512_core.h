/*
 * src/hash/haraka_vaes512_core.h — the Haraka-512 v2 permutation on VAES-512 registers, for the
 * back-end (haraka_vaes512.c) and for callers that keep their states in registers between hashes
 * (the DSig verification walk, src/hybrid/chain_vaes512.c). Layout: s[q][j] holds state word j
 * (16 bytes) of four inputs, one per 128-bit lane; q counts groups of four. Include only from files
 * compiled for x86; every function carries its own target attribute.
 */
#ifndef DSIG_HASH_HARAKA_VAES512_CORE_H
#define DSIG_HASH_HARAKA_VAES512_CORE_H

#include <immintrin.h>

#include "hash/haraka_impl.h"

#define TARGET_V512 __attribute__((target("vaes,aes,avx512f,avx2")))

/* Round constant k in all four 128-bit lanes. */
#define RC4(k) _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)dsig_haraka_rc[k]))

/* @spec Haraka v2 MIX for Haraka-512 (see mix4 in haraka_aesni.c), per 128-bit lane. */
static inline TARGET_V512 void mix4x4(__m512i s[4])
{
    __m512i lo01 = _mm512_unpacklo_epi32(s[0], s[1]);
    __m512i hi01 = _mm512_unpackhi_epi32(s[0], s[1]);
    __m512i lo23 = _mm512_unpacklo_epi32(s[2], s[3]);
    __m512i hi23 = _mm512_unpackhi_epi32(s[2], s[3]);
    s[0] = _mm512_unpackhi_epi32(hi01, hi23);
    s[3] = _mm512_unpacklo_epi32(hi01, hi23);
    s[1] = _mm512_unpacklo_epi32(lo23, lo01);
    s[2] = _mm512_unpackhi_epi32(lo23, lo01);
}

/* @spec Haraka v2: the 5 rounds of Haraka-512 (2 AES rounds per word, then MIX) on nquads groups of
 * four states, interleaved so one group's AES latency hides behind the other's (nquads is a
 * compile-time constant after inlining: the states never leave the registers). No feed-forward. */
static inline __attribute__((always_inline)) TARGET_V512 void dsig_haraka512_v512_rounds(__m512i s[][4],
                                                                                       const int nquads)
{
#pragma GCC unroll 5
    for (int t = 0; t < DSIG_HARAKA_ROUNDS; t++) {
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) {
            __m512i rc = RC4(8 * t + m);
#pragma GCC unroll 2
            for (int q = 0; q < nquads; q++)
                s[q][m & 3] = _mm512_aesenc_epi128(s[q][m & 3], rc);
        }
#pragma GCC unroll 2
        for (int q = 0; q < nquads; q++)
            mix4x4(s[q]);
    }
}

#endif
