/*
 * src/hash/blake3_sse41.c — SSE4.1 BLAKE3 back-end: the one-block compression with the 4x4 state held as
 * four row registers (columns, then diagonals by rotating rows 0, 2 and 3), and 4-way hash_many /
 * hash_lanes / xof_many with one state word of 4 independent inputs (or output blocks) per register. Compiled with
 * target("sse4.1") per function, chosen at run time (blake3.c); results are byte-identical to the
 * portable back-end (tests/hash/test_blake3.c).
 */
#include "hash/blake3_impl.h"

#include "core/cpu.h"

#ifdef DSIG_B3_X86

#include <immintrin.h>
#include <string.h>

#define B3_SSE __attribute__((target("sse4.1")))

/* Rotate each 32-bit lane right by 16 (a byte shuffle: one instruction). */
B3_SSE static inline __m128i rot16(__m128i x)
{
    return _mm_shuffle_epi8(x, _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
}

/* Rotate each 32-bit lane right by 12. */
B3_SSE static inline __m128i rot12(__m128i x)
{
    return _mm_or_si128(_mm_srli_epi32(x, 12), _mm_slli_epi32(x, 20));
}

/* Rotate each 32-bit lane right by 8 (a byte shuffle). */
B3_SSE static inline __m128i rot8(__m128i x)
{
    return _mm_shuffle_epi8(x, _mm_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12));
}

/* Rotate each 32-bit lane right by 7. */
B3_SSE static inline __m128i rot7(__m128i x)
{
    return _mm_or_si128(_mm_srli_epi32(x, 7), _mm_slli_epi32(x, 25));
}

/* @spec BLAKE3 spec §2.2: G on four lanes at once (a, b, c, d are rows or per-input words). The message
 * word is added to a before b, because b is the last value of the previous step to become ready; the
 * empty asm stops the compiler from reassociating the sum back to (b + x) + a, which costs a cycle of
 * latency per half-step (~10% of a one-block compression here). */
#define G4(a, b, c, d, x, y)                                                                                 \
    do {                                                                                                     \
        a = _mm_add_epi32(a, x);                                                                             \
        __asm__("" : "+x"(a));                                                                               \
        a = _mm_add_epi32(a, b);                                                                             \
        d = rot16(_mm_xor_si128(d, a));                                                                      \
        c = _mm_add_epi32(c, d);                                                                             \
        b = rot12(_mm_xor_si128(b, c));                                                                      \
        a = _mm_add_epi32(a, y);                                                                             \
        __asm__("" : "+x"(a));                                                                               \
        a = _mm_add_epi32(a, b);                                                                             \
        d = rot8(_mm_xor_si128(d, a));                                                                       \
        c = _mm_add_epi32(c, d);                                                                             \
        b = rot7(_mm_xor_si128(b, c));                                                                       \
    } while (0)

/* (a[i0], a[i1], b[i2], b[i3]): the two-source 32-bit shuffle (shufps). */
#define SHUF2(a, b, i0, i1, i2, i3)                                                                          \
    _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(i3, i2, i1, i0)))
/* (a[i0], a[i1], a[i2], a[i3]). */
#define PERM1(a, i0, i1, i2, i3) _mm_shuffle_epi32(a, _MM_SHUFFLE(i3, i2, i1, i0))

/*
 * @spec BLAKE3 spec §2.2: compression with rows r0..r3 = v[0..3], v[4..7], v[8..11], v[12..15]. The
 * diagonal step rotates rows 0, 2, 3 (right by 1, left by 1, by 2 lanes) so diagonals line up as
 * columns, lane i holding diagonal i − 1 (mod 4), then back; row 1 (b, the last row a half-round
 * produces and the first the next needs) stays put, so no shuffle sits on the dependency chain (the
 * diagonal message vectors are rotated to match instead, off that chain). The message is kept as the
 * four vectors one round consumes, with m' = this round's word order:
 * u0 = (m'0, m'2, m'4, m'6), u1 = (m'1, m'3, m'5, m'7), u2 = (m'8, m'10, m'12, m'14),
 * u3 = (m'9, m'11, m'13, m'15). The next round's order is m'[P[i]] (P = the spec's permutation), which
 * in these vectors is u0 <- (u0[1], u1[1], u1[3], u0[2]), u1 <- (u0[3], u2[1], u0[0], u3[2]),
 * u2 <- (u1[0], u2[2], u3[0], u3[3]), u3 <- (u3[1], u1[2], u2[3], u2[0]): 9 shuffles per round.
 */
B3_SSE static inline void sse41_core(__m128i r[4], const uint32_t cv[8], const uint8_t block[64],
                                     uint8_t block_len, uint64_t counter, uint8_t flags)
{
    __m128i r0 = _mm_loadu_si128((const __m128i *)cv);
    __m128i r1 = _mm_loadu_si128((const __m128i *)(cv + 4));
    __m128i r2 = _mm_loadu_si128((const __m128i *)dsig_b3_iv);
    __m128i r3 =
        _mm_setr_epi32((int)(uint32_t)counter, (int)(uint32_t)(counter >> 32), (int)block_len, (int)flags);
    /* x86 is little-endian: the block bytes are the message words. */
    const __m128i b0 = _mm_loadu_si128((const __m128i *)block);
    const __m128i b1 = _mm_loadu_si128((const __m128i *)(block + 16));
    const __m128i b2 = _mm_loadu_si128((const __m128i *)(block + 32));
    const __m128i b3 = _mm_loadu_si128((const __m128i *)(block + 48));
    __m128i u0 = SHUF2(b0, b1, 0, 2, 0, 2), u1 = SHUF2(b0, b1, 1, 3, 1, 3);
    __m128i u2 = SHUF2(b2, b3, 0, 2, 0, 2), u3 = SHUF2(b2, b3, 1, 3, 1, 3);
#pragma GCC unroll 7
    for (int k = 0; k < 7; k++) {
        G4(r0, r1, r2, r3, u0, u1);
        r0 = _mm_shuffle_epi32(r0, _MM_SHUFFLE(2, 1, 0, 3));
        r2 = _mm_shuffle_epi32(r2, _MM_SHUFFLE(0, 3, 2, 1));
        r3 = _mm_shuffle_epi32(r3, _MM_SHUFFLE(1, 0, 3, 2));
        G4(r0, r1, r2, r3, PERM1(u2, 3, 0, 1, 2), PERM1(u3, 3, 0, 1, 2));
        r0 = _mm_shuffle_epi32(r0, _MM_SHUFFLE(0, 3, 2, 1));
        r2 = _mm_shuffle_epi32(r2, _MM_SHUFFLE(2, 1, 0, 3));
        r3 = _mm_shuffle_epi32(r3, _MM_SHUFFLE(1, 0, 3, 2));
        if (k == 6)
            break;
        __m128i n0 = PERM1(SHUF2(u0, u1, 1, 2, 1, 3), 0, 2, 3, 1);
        __m128i n1 = PERM1(SHUF2(u0, SHUF2(u2, u3, 1, 1, 2, 2), 3, 0, 0, 2), 0, 2, 1, 3);
        __m128i n2 = SHUF2(SHUF2(u1, u2, 0, 0, 2, 2), u3, 0, 2, 0, 3);
        __m128i n3 = SHUF2(SHUF2(u3, u1, 1, 1, 2, 2), u2, 0, 2, 3, 0);
        u0 = n0;
        u1 = n1;
        u2 = n2;
        u3 = n3;
    }
    r[0] = r0;
    r[1] = r1;
    r[2] = r2;
    r[3] = r3;
}

/* Chaining value: cv <- rows 0,1 xor rows 2,3. */
B3_SSE void dsig_b3_sse41_compress_cv(uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                      uint64_t counter, uint8_t flags)
{
    __m128i r[4];
    sse41_core(r, cv, block, block_len, counter, flags);
    _mm_storeu_si128((__m128i *)cv, _mm_xor_si128(r[0], r[2]));
    _mm_storeu_si128((__m128i *)(cv + 4), _mm_xor_si128(r[1], r[3]));
}

/* Full 64-byte output: rows 0,1 xor rows 2,3, then rows 2,3 xor the input cv. */
B3_SSE void dsig_b3_sse41_compress_xof(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                       uint64_t counter, uint8_t flags, uint8_t out[64])
{
    __m128i r[4];
    sse41_core(r, cv, block, block_len, counter, flags);
    _mm_storeu_si128((__m128i *)out, _mm_xor_si128(r[0], r[2]));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_xor_si128(r[1], r[3]));
    _mm_storeu_si128((__m128i *)(out + 32), _mm_xor_si128(r[2], _mm_loadu_si128((const __m128i *)cv)));
    _mm_storeu_si128((__m128i *)(out + 48), _mm_xor_si128(r[3], _mm_loadu_si128((const __m128i *)(cv + 4))));
}

/* In-register 4x4 transpose of 32-bit words. */
B3_SSE static inline void transpose4(__m128i *a, __m128i *b, __m128i *c, __m128i *d)
{
    __m128i t0 = _mm_unpacklo_epi32(*a, *b), t1 = _mm_unpacklo_epi32(*c, *d);
    __m128i t2 = _mm_unpackhi_epi32(*a, *b), t3 = _mm_unpackhi_epi32(*c, *d);
    *a = _mm_unpacklo_epi64(t0, t1);
    *b = _mm_unpackhi_epi64(t0, t1);
    *c = _mm_unpacklo_epi64(t2, t3);
    *d = _mm_unpackhi_epi64(t2, t3);
}

/* @spec BLAKE3 spec §2.2: the 7 rounds on 4 states at once; m[w] is message word w of every lane. */
B3_SSE __attribute__((always_inline)) static inline void sse41_rounds4(__m128i v[16], const __m128i m[16])
{
#pragma GCC unroll 7
    for (int k = 0; k < 7; k++) {
        const uint8_t *s = dsig_b3_sched[k];
        G4(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
        G4(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
        G4(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
        G4(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
        G4(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
        G4(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
        G4(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
        G4(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
    }
}

/* Lane counters: lane i uses counter + i when inc, else counter (low and high words). */
B3_SSE static inline void sse41_counters(uint64_t counter, int inc, __m128i *lo, __m128i *hi)
{
    uint64_t c[4];
    for (int i = 0; i < 4; i++)
        c[i] = counter + (inc ? (uint64_t)i : 0);
    *lo = _mm_setr_epi32((int)(uint32_t)c[0], (int)(uint32_t)c[1], (int)(uint32_t)c[2], (int)(uint32_t)c[3]);
    *hi = _mm_setr_epi32((int)(uint32_t)(c[0] >> 32), (int)(uint32_t)(c[1] >> 32), (int)(uint32_t)(c[2] >> 32),
                         (int)(uint32_t)(c[3] >> 32));
}

/* @spec BLAKE3 spec §2.2: 4 inputs in parallel, lane i = input i; v[w] holds state word w of all four.
 * Block j of lane i is at in[i] + 64*j except the last, at last[i] (if last), last_len bytes long. */
B3_SSE static void sse41_hash4(const uint8_t *const in[4], const uint8_t *const last[4], size_t blocks,
                               uint8_t last_len, const uint32_t key[8], uint64_t counter, int inc_counter,
                               uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    __m128i h[8];
    for (int i = 0; i < 8; i++)
        h[i] = _mm_set1_epi32((int)key[i]);
    __m128i clo, chi;
    sse41_counters(counter, inc_counter, &clo, &chi);
    for (size_t j = 0; j < blocks; j++) {
        uint8_t f = flags;
        uint32_t bl = 64;
        if (j == 0)
            f |= flags_start;
        int is_last = j + 1 == blocks;
        if (is_last) {
            f |= flags_end;
            bl = last_len;
        }
        const uint8_t *p[4];
        for (int i = 0; i < 4; i++)
            p[i] = is_last && last ? last[i] : in[i] + 64 * j;
        __m128i m[16];
        for (int q = 0; q < 4; q++) {
            /* Words 4q..4q+3 of the 4 inputs, transposed into 4 word vectors. */
            for (int i = 0; i < 4; i++)
                m[4 * q + i] = _mm_loadu_si128((const __m128i *)(p[i] + 16 * q));
            transpose4(&m[4 * q], &m[4 * q + 1], &m[4 * q + 2], &m[4 * q + 3]);
        }
        __m128i v[16];
        for (int i = 0; i < 8; i++)
            v[i] = h[i];
        for (int i = 0; i < 4; i++)
            v[8 + i] = _mm_set1_epi32((int)dsig_b3_iv[i]);
        v[12] = clo;
        v[13] = chi;
        v[14] = _mm_set1_epi32((int)bl);
        v[15] = _mm_set1_epi32(f);
        sse41_rounds4(v, m);
        for (int i = 0; i < 8; i++)
            h[i] = _mm_xor_si128(v[i], v[i + 8]);
    }
    transpose4(&h[0], &h[1], &h[2], &h[3]);
    transpose4(&h[4], &h[5], &h[6], &h[7]);
    for (int i = 0; i < 4; i++) {
        _mm_storeu_si128((__m128i *)(out + 32 * i), h[i]);
        _mm_storeu_si128((__m128i *)(out + 32 * i + 16), h[4 + i]);
    }
}

/* One input, block by block with the one-block compression. */
B3_SSE static void sse41_hash1(const uint8_t *in, const uint8_t *last, size_t blocks, uint8_t last_len,
                               const uint32_t key[8], uint64_t counter, uint8_t flags, uint8_t flags_start,
                               uint8_t flags_end, uint8_t *out)
{
    uint32_t cv[8];
    memcpy(cv, key, sizeof cv);
    for (size_t j = 0; j < blocks; j++) {
        uint8_t f = flags;
        uint8_t bl = 64;
        const uint8_t *p = in + 64 * j;
        if (j == 0)
            f |= flags_start;
        if (j + 1 == blocks) {
            f |= flags_end;
            bl = last_len;
            if (last)
                p = last;
        }
        dsig_b3_sse41_compress_cv(cv, p, bl, counter, f);
    }
    memcpy(out, cv, 32);
    b3_wipe(cv, sizeof cv);
}

/* One group of 1..4 inputs: 4 at once; 2..3 as a 4-way group whose spare lanes repeat input 0 (results
 * discarded); a single input serially. */
B3_SSE static void sse41_group(const uint8_t *const in[], const uint8_t *const last[], size_t r, size_t blocks,
                               uint8_t last_len, const uint32_t key[8], uint64_t counter, int inc_counter,
                               uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    if (r == 4) {
        sse41_hash4(in, last, blocks, last_len, key, counter, inc_counter, flags, flags_start, flags_end, out);
        return;
    }
    if (r == 1) {
        sse41_hash1(in[0], last ? last[0] : NULL, blocks, last_len, key, counter, flags, flags_start, flags_end,
                    out);
        return;
    }
    const uint8_t *pi[4], *pl[4];
    uint8_t tmp[4 * 32];
    for (size_t i = 0; i < 4; i++) {
        pi[i] = in[i < r ? i : 0];
        pl[i] = last ? last[i < r ? i : 0] : NULL;
    }
    sse41_hash4(pi, last ? pl : NULL, blocks, last_len, key, counter, inc_counter, flags, flags_start, flags_end,
                tmp);
    memcpy(out, tmp, 32 * r);
    b3_wipe(tmp, sizeof tmp); /* the spare lanes' results are key-dependent */
}

/* 4-way hash_lanes (contract in blake3_impl.h). */
B3_SSE void dsig_b3_sse41_hash_lanes(DSIG_B3_HASH_LANES_ARGS)
{
    for (size_t g = 0; g < n; g += 4) {
        size_t r = n - g < 4 ? n - g : 4;
        sse41_group(in + g, last ? last + g : NULL, r, blocks, last_len, key, counter + (inc_counter ? g : 0),
                    inc_counter, flags, flags_start, flags_end, out + 32 * g);
    }
}

/* 4-way hash_many (contract in blake3_impl.h): hash_lanes over contiguous inputs. */
B3_SSE void dsig_b3_sse41_hash_many(DSIG_B3_HASH_MANY_ARGS)
{
    for (size_t g = 0; g < n; g += 4) {
        size_t r = n - g < 4 ? n - g : 4;
        const uint8_t *p[4];
        for (size_t i = 0; i < r; i++)
            p[i] = in + (g + i) * stride;
        sse41_group(p, NULL, r, blocks, 64, key, counter + (inc_counter ? g : 0), inc_counter, flags,
                    flags_start, flags_end, out + 32 * g);
    }
}

/* @spec BLAKE3 spec §2.6: 4 root output blocks at once (counters counter..counter+3): broadcast message
 * words, per-lane counters, the 16 output words of each lane transposed back on store. */
B3_SSE static void sse41_xof4(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                              uint64_t counter, uint8_t flags, uint8_t *out)
{
    __m128i m[16], v[16];
    for (int i = 0; i < 16; i++)
        m[i] = _mm_set1_epi32((int)dsig_load_le32(block + 4 * i));
    for (int i = 0; i < 8; i++)
        v[i] = _mm_set1_epi32((int)cv[i]);
    for (int i = 0; i < 4; i++)
        v[8 + i] = _mm_set1_epi32((int)dsig_b3_iv[i]);
    sse41_counters(counter, 1, &v[12], &v[13]);
    v[14] = _mm_set1_epi32(block_len);
    v[15] = _mm_set1_epi32(flags);
    sse41_rounds4(v, m);
    __m128i o[16];
    for (int i = 0; i < 8; i++) {
        o[i] = _mm_xor_si128(v[i], v[i + 8]);
        o[8 + i] = _mm_xor_si128(v[i + 8], _mm_set1_epi32((int)cv[i]));
    }
    for (int q = 0; q < 4; q++) {
        /* o[4q..4q+3] are output words 4q..4q+3 of the 4 lanes: transposed, o[4q+i] is lane i's 16 bytes
         * at offset 16q of its block. */
        transpose4(&o[4 * q], &o[4 * q + 1], &o[4 * q + 2], &o[4 * q + 3]);
        for (int i = 0; i < 4; i++)
            _mm_storeu_si128((__m128i *)(out + 64 * i + 16 * q), o[4 * q + i]);
    }
}

/* 4-way xof_many (contract in blake3_impl.h); a remainder of 2..3 takes a padded 4-way group, a single
 * block the one-block compression. */
B3_SSE void dsig_b3_sse41_xof_many(DSIG_B3_XOF_MANY_ARGS)
{
    while (n >= 4) {
        sse41_xof4(cv, block, block_len, counter, flags, out);
        out += 4 * 64;
        counter += 4;
        n -= 4;
    }
    if (n >= 2) {
        uint8_t tmp[4 * 64];
        sse41_xof4(cv, block, block_len, counter, flags, tmp);
        memcpy(out, tmp, 64 * n);
        b3_wipe(tmp, sizeof tmp);
    } else if (n == 1) {
        dsig_b3_sse41_compress_xof(cv, block, block_len, counter, flags, out);
    }
}

/* SSE4.1: one-block compression in 4 xmm rows and 4-way batches. */
const dsig_b3_backend dsig_b3_backend_sse41 = {.name = "sse41",
                                               .needs = DSIG_CPU_SSE41,
                                               .compress_cv = dsig_b3_sse41_compress_cv,
                                               .compress_xof = dsig_b3_sse41_compress_xof,
                                               .hash_many = dsig_b3_sse41_hash_many,
                                               .hash_lanes = dsig_b3_sse41_hash_lanes,
                                               .xof_many = dsig_b3_sse41_xof_many,
                                               .degree = 4};

#endif
