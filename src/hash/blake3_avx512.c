/*
 * src/hash/blake3_avx512.c — AVX-512 BLAKE3 back-end (AVX512F + AVX512VL, chosen at run time by blake3.c
 * only when dsig_cpu_features() reports DSIG_CPU_AVX512):
 *  - 16-way hash_many / hash_lanes / xof_many: each zmm register holds one state (or message) word of 16
 *    independent inputs, so G needs no shuffles; the four rotations are single vprord instructions
 *    (AVX2 needs a byte shuffle or two shifts and an or), which is where the speed over AVX2 comes from.
 *    Message blocks are transposed 16x16 in registers on load, chaining values transposed back on store.
 *  - the one-block compression on four xmm rows with VL rotates (vprord xmm) and the message schedule
 *    taken from two ymm registers with one two-source permute per half-round.
 * Groups of 2..8 inputs take the 8-way body of blake3_x8.h with VL rotations; a single input and the
 * XOF remainders go to the AVX2 back-end, which this one requires.
 */
#include "hash/blake3_impl.h"

#include "core/cpu.h"

#ifdef DSIG_B3_X86

#include <immintrin.h>
#include <string.h>

#include "core/avx2_util.h"

#define B3_AVX512 __attribute__((target("avx512f,avx512vl")))

/* How many blocks ahead hash16 prefetches each lane (2..4 measured best on Zen 5; 8+ loses again). */
#define B3_PREFETCH_BLOCKS 3

/* ---------------------------------------------------------------------------------------------------
 * 16-way kernels
 * ------------------------------------------------------------------------------------------------- */

/* @spec BLAKE3 spec §2.2: G on 16 inputs at once; rotations right by 16, 12, 8, 7 are native (vprord).
 * The message word is added to a before b, since b is the last value of the previous step to be ready. */
#define G16(a, b, c, d, x, y)                                                                                \
    do {                                                                                                     \
        a = _mm512_add_epi32(_mm512_add_epi32(a, x), b);                                                     \
        d = _mm512_ror_epi32(_mm512_xor_si512(d, a), 16);                                                    \
        c = _mm512_add_epi32(c, d);                                                                          \
        b = _mm512_ror_epi32(_mm512_xor_si512(b, c), 12);                                                    \
        a = _mm512_add_epi32(_mm512_add_epi32(a, y), b);                                                     \
        d = _mm512_ror_epi32(_mm512_xor_si512(d, a), 8);                                                     \
        c = _mm512_add_epi32(c, d);                                                                          \
        b = _mm512_ror_epi32(_mm512_xor_si512(b, c), 7);                                                     \
    } while (0)

/* @spec BLAKE3 spec §2.2: the 7 rounds on 16 states at once; m[w] is message word w of every lane. The
 * schedule table is folded into register indices by the full unroll. */
B3_AVX512 __attribute__((always_inline)) static inline void rounds16(__m512i v[16], const __m512i m[16])
{
#pragma GCC unroll 7
    for (int k = 0; k < 7; k++) {
        const uint8_t *s = dsig_b3_sched[k];
        G16(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
        G16(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
        G16(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
        G16(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
        G16(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
        G16(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
        G16(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
        G16(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
    }
}

/* In-register 16x16 transpose of 32-bit words: x[r] word c <-> x[c] word r (its own inverse). Within each
 * 128-bit lane, two unpack stages make 4x4 transposes of row groups 4g..4g+3; two 128-bit-lane shuffle
 * stages then gather lane k of the four groups into one register. */
B3_AVX512 __attribute__((always_inline)) static inline void transpose16x32(__m512i x[16])
{
    __m512i t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(x[2 * i], x[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(x[2 * i], x[2 * i + 1]);
    }
    /* u[4g + j], lane k = word 4k + j of rows 4g..4g+3. */
    for (int g = 0; g < 4; g++) {
        u[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    for (int j = 0; j < 4; j++) {
        /* p: lanes 0,1 of groups 0 and 1 (q: lanes 2,3); p2/q2 the same for groups 2 and 3. */
        __m512i p = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44), q = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xEE);
        __m512i p2 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44);
        __m512i q2 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xEE);
        x[j] = _mm512_shuffle_i32x4(p, p2, 0x88);      /* lane 0 of groups 0..3: word j */
        x[4 + j] = _mm512_shuffle_i32x4(p, p2, 0xDD);  /* lane 1: word 4 + j */
        x[8 + j] = _mm512_shuffle_i32x4(q, q2, 0x88);  /* lane 2: word 8 + j */
        x[12 + j] = _mm512_shuffle_i32x4(q, q2, 0xDD); /* lane 3: word 12 + j */
    }
}

/* Lane counters: lane i uses counter + i when inc, else counter (low and high words). */
B3_AVX512 static inline void counters16(uint64_t counter, int inc, __m512i *lo, __m512i *hi)
{
    uint32_t l[16], h[16];
    for (int i = 0; i < 16; i++) {
        uint64_t c = counter + (inc ? (uint64_t)i : 0);
        l[i] = (uint32_t)c;
        h[i] = (uint32_t)(c >> 32);
    }
    *lo = _mm512_loadu_si512(l);
    *hi = _mm512_loadu_si512(h);
}

/* @spec BLAKE3 spec §2.2: 16 inputs in parallel (lane i = input i), `blocks` blocks each; block j of lane i
 * is at in[i] + 64*j except the last, which is at last[i] (if last) and is last_len bytes long. Writes the
 * 16 chaining values, 32 bytes each, to out. */
B3_AVX512 static void hash16(const uint8_t *const in[16], const uint8_t *const last[16], size_t blocks,
                             uint8_t last_len, const uint32_t key[8], uint64_t counter, int inc_counter,
                             uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    __m512i h[8];
    for (int i = 0; i < 8; i++)
        h[i] = _mm512_set1_epi32((int)key[i]);
    __m512i clo, chi;
    counters16(counter, inc_counter, &clo, &chi);
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
        __m512i m[16];
        for (int i = 0; i < 16; i++) {
            m[i] = _mm512_loadu_si512(is_last && last ? last[i] : in[i] + 64 * j);
            /* 16 streams 1 KiB apart defeat the hardware prefetcher: from DRAM, 3.6 -> 6 GiB/s with this.
             * A hint only (never faults, reads nothing architecturally), so running past a lane's end
             * is harmless. */
            _mm_prefetch((const char *)(in[i] + 64 * (j + B3_PREFETCH_BLOCKS)), _MM_HINT_T0);
        }
        transpose16x32(m);
        __m512i v[16];
        for (int i = 0; i < 8; i++)
            v[i] = h[i];
        for (int i = 0; i < 4; i++)
            v[8 + i] = _mm512_set1_epi32((int)dsig_b3_iv[i]);
        v[12] = clo;
        v[13] = chi;
        v[14] = _mm512_set1_epi32((int)bl);
        v[15] = _mm512_set1_epi32(f);
        rounds16(v, m);
        for (int i = 0; i < 8; i++)
            h[i] = _mm512_xor_si512(v[i], v[i + 8]);
    }
    /* 8 words x 16 lanes -> 16 CVs: two 8x8 transposes, lanes 0..7 (low halves) and 8..15 (high halves). */
    __m256i lo[8], hi[8];
    for (int i = 0; i < 8; i++) {
        lo[i] = _mm512_castsi512_si256(h[i]);
        hi[i] = _mm512_extracti64x4_epi64(h[i], 1);
    }
    dsig_avx2_transpose8x32(lo);
    dsig_avx2_transpose8x32(hi);
    for (int i = 0; i < 8; i++) {
        _mm256_storeu_si256((__m256i *)(out + 32 * i), lo[i]);
        _mm256_storeu_si256((__m256i *)(out + 32 * (8 + i)), hi[i]);
    }
}

/* ---------------------------------------------------------------------------------------------------
 * 8-way kernel on ymm registers with VL rotations: the same body as the AVX2 back-end's (blake3_x8.h),
 * one vprord per rotation instead of a byte shuffle or two shifts and an or.
 * ------------------------------------------------------------------------------------------------- */
B3_AVX512 static inline __m256i rot16(__m256i x)
{
    return _mm256_ror_epi32(x, 16);
}
B3_AVX512 static inline __m256i rot12(__m256i x)
{
    return _mm256_ror_epi32(x, 12);
}
B3_AVX512 static inline __m256i rot8(__m256i x)
{
    return _mm256_ror_epi32(x, 8);
}
B3_AVX512 static inline __m256i rot7(__m256i x)
{
    return _mm256_ror_epi32(x, 7);
}

#define B3_X8 B3_AVX512
#define X8(name) vl8_##name
#include "hash/blake3_x8.h"
#undef B3_X8
#undef X8

/* One group of 1..16 inputs: 16 at once; 9..15 as a 16-way group whose spare lanes repeat input 0 (their
 * results discarded); 2..8 as an 8-way ymm group with VL rotations (an 8-way ymm group costs about as
 * much as a 16-way zmm group on cores with full-width AVX-512, and less on the others); one serially. */
B3_AVX512 static void group16(const uint8_t *const in[], const uint8_t *const last[], size_t r, size_t blocks,
                              uint8_t last_len, const uint32_t key[8], uint64_t counter, int inc_counter,
                              uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    if (r == 16) {
        hash16(in, last, blocks, last_len, key, counter, inc_counter, flags, flags_start, flags_end, out);
        return;
    }
    if (r == 1) {
        dsig_b3_avx2_hash_lanes(in, last, r, blocks, last_len, key, counter, inc_counter, flags, flags_start,
                                flags_end, out);
        return;
    }
    if (r == 8) {
        vl8_hash8(in, last, blocks, last_len, key, counter, inc_counter, flags, flags_start, flags_end, out);
        return;
    }
    const size_t width = r < 8 ? 8 : 16;
    const uint8_t *pi[16], *pl[16];
    uint8_t tmp[16 * 32];
    for (size_t i = 0; i < width; i++) {
        pi[i] = in[i < r ? i : 0];
        pl[i] = last ? last[i < r ? i : 0] : NULL;
    }
    if (width == 8)
        vl8_hash8(pi, last ? pl : NULL, blocks, last_len, key, counter, inc_counter, flags, flags_start, flags_end,
                  tmp);
    else
        hash16(pi, last ? pl : NULL, blocks, last_len, key, counter, inc_counter, flags, flags_start, flags_end,
               tmp);
    memcpy(out, tmp, 32 * r);
    b3_wipe(tmp, sizeof tmp); /* the spare lanes' results are key-dependent */
}

/* 16-way hash_lanes (contract in blake3_impl.h). */
B3_AVX512 void dsig_b3_avx512_hash_lanes(DSIG_B3_HASH_LANES_ARGS)
{
    for (size_t g = 0; g < n; g += 16) {
        size_t r = n - g < 16 ? n - g : 16;
        group16(in + g, last ? last + g : NULL, r, blocks, last_len, key, counter + (inc_counter ? g : 0),
                inc_counter, flags, flags_start, flags_end, out + 32 * g);
    }
}

/* 16-way hash_many (contract in blake3_impl.h): hash_lanes over inputs `stride` bytes apart. */
B3_AVX512 void dsig_b3_avx512_hash_many(DSIG_B3_HASH_MANY_ARGS)
{
    for (size_t g = 0; g < n; g += 16) {
        size_t r = n - g < 16 ? n - g : 16;
        const uint8_t *p[16];
        for (size_t i = 0; i < r; i++)
            p[i] = in + (g + i) * stride;
        group16(p, NULL, r, blocks, 64, key, counter + (inc_counter ? g : 0), inc_counter, flags, flags_start,
                flags_end, out + 32 * g);
    }
}

/* @spec BLAKE3 spec §2.6: 16 root output blocks at once (counters counter..counter+15). State and message
 * are the same in every lane but the counter, so the message words are broadcasts; the 16 output words of
 * the 16 lanes are one 16x16 transpose, after which register i is output block i. */
B3_AVX512 static void xof16(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len, uint64_t counter,
                            uint8_t flags, uint8_t *out)
{
    __m512i m[16], v[16];
    for (int i = 0; i < 16; i++)
        m[i] = _mm512_set1_epi32((int)dsig_load_le32(block + 4 * i));
    for (int i = 0; i < 8; i++)
        v[i] = _mm512_set1_epi32((int)cv[i]);
    for (int i = 0; i < 4; i++)
        v[8 + i] = _mm512_set1_epi32((int)dsig_b3_iv[i]);
    counters16(counter, 1, &v[12], &v[13]);
    v[14] = _mm512_set1_epi32(block_len);
    v[15] = _mm512_set1_epi32(flags);
    rounds16(v, m);
    __m512i o[16];
    for (int i = 0; i < 8; i++) {
        o[i] = _mm512_xor_si512(v[i], v[i + 8]);
        o[8 + i] = _mm512_xor_si512(v[i + 8], _mm512_set1_epi32((int)cv[i]));
    }
    transpose16x32(o);
    for (int i = 0; i < 16; i++)
        _mm512_storeu_si512(out + 64 * i, o[i]);
}

/* 16-way xof_many (contract in blake3_impl.h); a remainder of 9..15 takes a padded 16-way group, fewer
 * the AVX2 back-end. */
B3_AVX512 void dsig_b3_avx512_xof_many(DSIG_B3_XOF_MANY_ARGS)
{
    while (n >= 16) {
        xof16(cv, block, block_len, counter, flags, out);
        out += 16 * 64;
        counter += 16;
        n -= 16;
    }
    if (n > 8) {
        uint8_t tmp[16 * 64];
        xof16(cv, block, block_len, counter, flags, tmp);
        memcpy(out, tmp, 64 * n);
        b3_wipe(tmp, sizeof tmp); /* output blocks may be key material */
    } else if (n > 0) {
        dsig_b3_avx2_xof_many(cv, block, block_len, counter, flags, n, out);
    }
}

/* ---------------------------------------------------------------------------------------------------
 * One-block compression (xmm rows, VL rotates)
 * ------------------------------------------------------------------------------------------------- */

/* @spec BLAKE3 spec §2.2: G on the four columns (or diagonals) held as rows a, b, c, d. The empty asm
 * keeps the compiler from reassociating (a + x) + b into (b + x) + a, which lengthens the dependency
 * chain through b by one add per half-step. */
#define G4VL(a, b, c, d, x, y)                                                                               \
    do {                                                                                                     \
        a = _mm_add_epi32(a, x);                                                                             \
        __asm__("" : "+v"(a));                                                                               \
        a = _mm_add_epi32(a, b);                                                                             \
        d = _mm_ror_epi32(_mm_xor_si128(d, a), 16);                                                          \
        c = _mm_add_epi32(c, d);                                                                             \
        b = _mm_ror_epi32(_mm_xor_si128(b, c), 12);                                                          \
        a = _mm_add_epi32(a, y);                                                                             \
        __asm__("" : "+v"(a));                                                                               \
        a = _mm_add_epi32(a, b);                                                                             \
        d = _mm_ror_epi32(_mm_xor_si128(d, a), 8);                                                           \
        c = _mm_add_epi32(c, d);                                                                             \
        b = _mm_ror_epi32(_mm_xor_si128(b, c), 7);                                                           \
    } while (0)

/* Permute indices of round k for the two-source permute of the message (words 0..7 | 8..15): the column
 * step's (x0, x1, x2, x3 | y0, y1, y2, y3) = words s[0], s[2], s[4], s[6] | s[1], s[3], s[5], s[7]; the
 * diagonal step's from s[8..15], with lane i holding diagonal i − 1 (mod 4), see vl_core. */
#define B3_COL_IDX(s) _mm256_setr_epi32(s[0], s[2], s[4], s[6], s[1], s[3], s[5], s[7])
#define B3_DIAG_IDX(s) _mm256_setr_epi32(s[14], s[8], s[10], s[12], s[15], s[9], s[11], s[13])

/* @spec BLAKE3 spec §2.2: compression with rows r0..r3 = v[0..3], v[4..7], v[8..11], v[12..15]; the
 * diagonal step rotates rows 0, 2, 3 (right by 1, left by 1, by 2 words) so diagonals line up as
 * columns, lane i holding diagonal i − 1 (mod 4), then back. Row 1 (b) stays put: b is the last row a
 * half-round produces and the first the next one needs (a += b), so a shuffle of it would sit on the
 * dependency chain, where a, c and d are ready a few cycles early and their shuffles hide (−8 cycles
 * per compression against rotating rows 1, 2, 3; same result). Each half-round's message words come
 * from one vpermt2d off the critical path (the schedule is a constant table, so no running
 * permutation is carried between rounds). */
B3_AVX512 static inline void vl_core(__m128i r[4], const uint32_t cv[8], const uint8_t block[64],
                                     uint8_t block_len, uint64_t counter, uint8_t flags)
{
    __m128i r0 = _mm_loadu_si128((const __m128i *)cv);
    __m128i r1 = _mm_loadu_si128((const __m128i *)(cv + 4));
    __m128i r2 = _mm_loadu_si128((const __m128i *)dsig_b3_iv);
    __m128i r3 =
        _mm_setr_epi32((int)(uint32_t)counter, (int)(uint32_t)(counter >> 32), (int)block_len, (int)flags);
    /* x86 is little-endian: the block bytes are the message words. */
    const __m256i mlo = _mm256_loadu_si256((const __m256i *)block);
    const __m256i mhi = _mm256_loadu_si256((const __m256i *)(block + 32));
#pragma GCC unroll 7
    for (int k = 0; k < 7; k++) {
        const uint8_t *s = dsig_b3_sched[k];
        __m256i col = _mm256_permutex2var_epi32(mlo, B3_COL_IDX(s), mhi);
        __m256i dia = _mm256_permutex2var_epi32(mlo, B3_DIAG_IDX(s), mhi);
        G4VL(r0, r1, r2, r3, _mm256_castsi256_si128(col), _mm256_extracti128_si256(col, 1));
        r0 = _mm_shuffle_epi32(r0, _MM_SHUFFLE(2, 1, 0, 3));
        r2 = _mm_shuffle_epi32(r2, _MM_SHUFFLE(0, 3, 2, 1));
        r3 = _mm_shuffle_epi32(r3, _MM_SHUFFLE(1, 0, 3, 2));
        G4VL(r0, r1, r2, r3, _mm256_castsi256_si128(dia), _mm256_extracti128_si256(dia, 1));
        r0 = _mm_shuffle_epi32(r0, _MM_SHUFFLE(0, 3, 2, 1));
        r2 = _mm_shuffle_epi32(r2, _MM_SHUFFLE(2, 1, 0, 3));
        r3 = _mm_shuffle_epi32(r3, _MM_SHUFFLE(1, 0, 3, 2));
    }
    r[0] = r0;
    r[1] = r1;
    r[2] = r2;
    r[3] = r3;
}

/* Chaining value: cv <- rows 0,1 xor rows 2,3. */
B3_AVX512 void dsig_b3_avx512_compress_cv(uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                          uint64_t counter, uint8_t flags)
{
    __m128i r[4];
    vl_core(r, cv, block, block_len, counter, flags);
    _mm_storeu_si128((__m128i *)cv, _mm_xor_si128(r[0], r[2]));
    _mm_storeu_si128((__m128i *)(cv + 4), _mm_xor_si128(r[1], r[3]));
}

/* Full 64-byte output: rows 0,1 xor rows 2,3, then rows 2,3 xor the input cv. */
B3_AVX512 void dsig_b3_avx512_compress_xof(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                           uint64_t counter, uint8_t flags, uint8_t out[64])
{
    __m128i r[4];
    vl_core(r, cv, block, block_len, counter, flags);
    _mm_storeu_si128((__m128i *)out, _mm_xor_si128(r[0], r[2]));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_xor_si128(r[1], r[3]));
    _mm_storeu_si128((__m128i *)(out + 32), _mm_xor_si128(r[2], _mm_loadu_si128((const __m128i *)cv)));
    _mm_storeu_si128((__m128i *)(out + 48), _mm_xor_si128(r[3], _mm_loadu_si128((const __m128i *)(cv + 4))));
}

/* AVX-512 doubles the width again and hands remainders of 1..8 to AVX2 (and single inputs through it
 * to SSE4.1), so it needs all three; the one-block compression keeps 4 xmm rows but rotates natively. */
const dsig_b3_backend dsig_b3_backend_avx512 = {.name = "avx512",
                                                .needs = DSIG_CPU_AVX512 | DSIG_CPU_AVX2 | DSIG_CPU_SSE41,
                                                .compress_cv = dsig_b3_avx512_compress_cv,
                                                .compress_xof = dsig_b3_avx512_compress_xof,
                                                .hash_many = dsig_b3_avx512_hash_many,
                                                .hash_lanes = dsig_b3_avx512_hash_lanes,
                                                .xof_many = dsig_b3_avx512_xof_many,
                                                .degree = 16};

#endif
