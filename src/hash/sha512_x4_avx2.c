/*
 * src/hash/sha512_x4_avx2.c — four independent SHA-512 compressions at once with AVX2: each 64-bit
 * lane of a __m256i belongs to one message. For the one-block H calls of SLH-DSA-SHA2 at categories
 * 3 and 5 (FIPS 205 §11.2.2: SHA-512 over the precomputed PK.seed state), which the tree code hands
 * over in batches.
 *
 * Blocks and states are transposed in registers (dsig_avx2_transpose4x64). Constant time: shifts,
 * xors, ands and additions only. Built with target("avx2"); run only when the dispatcher
 * (sha512_dispatch.c) found DSIG_CPU_AVX2.
 */
#include "hash/sha512.h"

#include "core/cpu.h"
#include "dsig/mem.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "core/avx2_util.h"

#define TARGET_AVX2 __attribute__((target("avx2")))

/* ROTR^n of each 64-bit lane (AVX2 has no 64-bit rotate: two shifts and an or). */
#define ROTR(x, n) _mm256_or_si256(_mm256_srli_epi64((x), (n)), _mm256_slli_epi64((x), 64 - (n)))
#define XOR3(a, b, c) _mm256_xor_si256(_mm256_xor_si256((a), (b)), (c))
#define ADD(a, b) _mm256_add_epi64((a), (b))

/* @spec FIPS 180-4 §4.1.3 (4.10)-(4.13): Σ0, Σ1, σ0, σ1 on four lanes. */
#define BSIG0(x) XOR3(ROTR((x), 28), ROTR((x), 34), ROTR((x), 39))
#define BSIG1(x) XOR3(ROTR((x), 14), ROTR((x), 18), ROTR((x), 41))
#define SSIG0(x) XOR3(ROTR((x), 1), ROTR((x), 8), _mm256_srli_epi64((x), 7))
#define SSIG1(x) XOR3(ROTR((x), 19), ROTR((x), 61), _mm256_srli_epi64((x), 6))
/* Ch(e,f,g) = ((f⊕g)∧e)⊕g; Maj(a,b,c) = ((a⊕b)∧(b⊕c))⊕b (§4.1.3 (4.8), (4.9)). */
#define CH(e, f, g) _mm256_xor_si256(_mm256_and_si256(_mm256_xor_si256((f), (g)), (e)), (g))
#define MAJ(a, b, c)                                                                               \
    _mm256_xor_si256(_mm256_and_si256(_mm256_xor_si256((a), (b)), _mm256_xor_si256((b), (c))), (b))

/* One round t+i (@spec FIPS 180-4 §6.4.2 step 3) with rotated variable names; from round 16 on w[i]
 * first becomes W_t (step 1) in a 16-entry window W[t mod 16]. */
#define RND(a, b, c, d, e, f, g, h, i)                                                             \
    do {                                                                                           \
        if (sched)                                                                                 \
            w[i] = ADD(ADD(w[i], SSIG1(w[((i) + 14) & 15])),                                       \
                       ADD(w[((i) + 9) & 15], SSIG0(w[((i) + 1) & 15])));                          \
        __m256i t1 = ADD(ADD(h, BSIG1(e)),                                                         \
                         ADD(CH(e, f, g), ADD(w[i], _mm256_set1_epi64x((long long)dsig_sha512_k[t + (i)])))); \
        d = ADD(d, t1);                                                                            \
        h = ADD(t1, ADD(BSIG0(a), MAJ(a, b, c)));                                                  \
    } while (0)

/* The message words of four blocks as word vectors: w[j] lane l = big-endian qword j of blocks[l]. */
static inline TARGET_AVX2 void load_words(__m256i w[16], const uint8_t *const blocks[4])
{
    /* Reverse the bytes of each qword (the same pattern in both 128-bit halves). */
    const __m256i bswap = _mm256_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                          10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    /* Group q holds qwords 4q..4q+3: row l = blocks[l] bytes 32q..32q+31, then transposed. */
    for (int q = 0; q < 4; q++) {
        for (int l = 0; l < 4; l++)
            w[4 * q + l] = _mm256_shuffle_epi8(
                _mm256_loadu_si256((const __m256i *)(blocks[l] + 32 * q)), bswap);
        dsig_avx2_transpose4x64(w + 4 * q);
    }
}

/* @spec FIPS 180-4 §6.4.2 steps 1-4 on four lanes: s[j] (word j of every lane's state) += the 80
 * rounds over the message words in w (overwritten by the schedule). */
static inline TARGET_AVX2 void compress4(__m256i s[8], __m256i w[16])
{
    __m256i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int t = 0; t < 80; t += 16) {
        const int sched = t > 0;
        RND(a, b, c, d, e, f, g, h, 0);
        RND(h, a, b, c, d, e, f, g, 1);
        RND(g, h, a, b, c, d, e, f, 2);
        RND(f, g, h, a, b, c, d, e, 3);
        RND(e, f, g, h, a, b, c, d, 4);
        RND(d, e, f, g, h, a, b, c, 5);
        RND(c, d, e, f, g, h, a, b, 6);
        RND(b, c, d, e, f, g, h, a, 7);
        RND(a, b, c, d, e, f, g, h, 8);
        RND(h, a, b, c, d, e, f, g, 9);
        RND(g, h, a, b, c, d, e, f, 10);
        RND(f, g, h, a, b, c, d, e, 11);
        RND(e, f, g, h, a, b, c, d, 12);
        RND(d, e, f, g, h, a, b, c, 13);
        RND(c, d, e, f, g, h, a, b, 14);
        RND(b, c, d, e, f, g, h, a, 15);
    }
    s[0] = ADD(s[0], a);
    s[1] = ADD(s[1], b);
    s[2] = ADD(s[2], c);
    s[3] = ADD(s[3], d);
    s[4] = ADD(s[4], e);
    s[5] = ADD(s[5], f);
    s[6] = ADD(s[6], g);
    s[7] = ADD(s[7], h);
}

/* Store word vectors s back as four per-lane states (state[l][j] = lane l of s[j]). */
static inline TARGET_AVX2 void store_states(uint64_t state[4][8], __m256i s[8])
{
    dsig_avx2_transpose4x64(s);     /* s[l] = words 0..3 of lane l */
    dsig_avx2_transpose4x64(s + 4); /* s[4 + l] = words 4..7 of lane l */
    for (int l = 0; l < 4; l++) {
        _mm256_storeu_si256((__m256i *)state[l], s[l]);
        _mm256_storeu_si256((__m256i *)(state[l] + 4), s[4 + l]);
    }
}

/* @spec FIPS 180-4 §6.4.2: state[l] = compress(state[l], blocks[l]) for l = 0..3 (AVX2). */
TARGET_AVX2 void dsig_sha512_compress_x4_avx2(uint64_t state[4][8], const uint8_t *const blocks[4])
{
    __m256i s[8], w[16];
    for (int l = 0; l < 4; l++) {
        s[l] = _mm256_loadu_si256((const __m256i *)state[l]);
        s[4 + l] = _mm256_loadu_si256((const __m256i *)(state[l] + 4));
    }
    dsig_avx2_transpose4x64(s);
    dsig_avx2_transpose4x64(s + 4);
    load_words(w, blocks);
    compress4(s, w);
    store_states(state, s);
    dsig_memzero(s, sizeof s); /* state and schedule derive from possibly secret input */
    dsig_memzero(w, sizeof w);
}

/* @spec FIPS 180-4 §6.4.2: out[l] = compress(init, blocks[l]) for l = 0..3, one shared initial
 * state (broadcast). */
TARGET_AVX2 void dsig_sha512_compress_x4_avx2_from(uint64_t out[4][8], const uint64_t init[8],
                                                   const uint8_t *const blocks[4])
{
    __m256i s[8], w[16];
    for (int j = 0; j < 8; j++)
        s[j] = _mm256_set1_epi64x((long long)init[j]);
    load_words(w, blocks);
    compress4(s, w);
    store_states(out, s);
    dsig_memzero(s, sizeof s);
    dsig_memzero(w, sizeof w);
}

const dsig_sha512_backend dsig_sha512_backend_avx2 = {
    .name = "avx2",
    .needs = DSIG_CPU_AVX2,
    .lanes = 4,
    .lanes_from = dsig_sha512_compress_x4_avx2_from,
    .lanes_cont = dsig_sha512_compress_x4_avx2,
};

#endif /* __x86_64__ */
