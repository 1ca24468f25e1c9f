/*
 * src/hash/sha256_x8_avx2.c — eight independent SHA-256 compressions at once with AVX2: each 32-bit
 * lane of a __m256i belongs to one message (lane l = message l), so every instruction advances eight
 * hashes by the same step. For the many independent one-block hashes of hash-based signatures
 * (SLH-DSA F/PRF/H over a precomputed PK.seed state); a single long message gains nothing here.
 *
 * Message blocks and states are transposed in registers on load and states transposed back on store
 * (dsig_avx2_transpose8x32). Constant time: only shifts, xors, ands and additions; no data-dependent
 * branch or index. Built with target("avx2"); run only when the dispatcher
 * (sha256_dispatch.c) found DSIG_CPU_AVX2.
 */
#include "hash/sha256.h"

#include "core/cpu.h"
#include "dsig/mem.h"
#include "hash/sha256_impl.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "core/avx2_util.h"

#define TARGET_AVX2 __attribute__((target("avx2")))

/* ROTR^n of each 32-bit lane (AVX2 has no vector rotate: two shifts and an or). */
#define ROTR(x, n) _mm256_or_si256(_mm256_srli_epi32((x), (n)), _mm256_slli_epi32((x), 32 - (n)))
#define XOR3(a, b, c) _mm256_xor_si256(_mm256_xor_si256((a), (b)), (c))
#define ADD(a, b) _mm256_add_epi32((a), (b))

/* @spec FIPS 180-4 §4.1.2 (4.4)-(4.7): Σ0, Σ1, σ0, σ1 on eight lanes. */
#define BSIG0(x) XOR3(ROTR((x), 2), ROTR((x), 13), ROTR((x), 22))
#define BSIG1(x) XOR3(ROTR((x), 6), ROTR((x), 11), ROTR((x), 25))
#define SSIG0(x) XOR3(ROTR((x), 7), ROTR((x), 18), _mm256_srli_epi32((x), 3))
#define SSIG1(x) XOR3(ROTR((x), 17), ROTR((x), 19), _mm256_srli_epi32((x), 10))
/* Ch(e,f,g) = (e∧f)⊕(¬e∧g), written as ((f⊕g)∧e)⊕g; Maj(a,b,c) = ((a⊕b)∧(b⊕c))⊕b. */
#define CH(e, f, g) _mm256_xor_si256(_mm256_and_si256(_mm256_xor_si256((f), (g)), (e)), (g))
#define MAJ(a, b, c)                                                                               \
    _mm256_xor_si256(_mm256_and_si256(_mm256_xor_si256((a), (b)), _mm256_xor_si256((b), (c))), (b))

/* One round t0+i (@spec FIPS 180-4 §6.2.2 step 3); the caller rotates the variable names instead of
 * moving eight vectors. From round 16 on, w[i] first becomes W_t of the schedule (step 1), kept as a
 * 16-entry window W[t mod 16]. */
#define RND(a, b, c, d, e, f, g, h, i)                                                             \
    do {                                                                                           \
        if (sched)                                                                                 \
            w[i] = ADD(ADD(w[i], SSIG1(w[((i) + 14) & 15])),                                       \
                       ADD(w[((i) + 9) & 15], SSIG0(w[((i) + 1) & 15])));                          \
        __m256i t1 = ADD(ADD(h, BSIG1(e)), ADD(CH(e, f, g), ADD(w[i], k[i])));                     \
        d = ADD(d, t1);                                                                            \
        h = ADD(t1, ADD(BSIG0(a), MAJ(a, b, c)));                                                  \
    } while (0)

/* The message words of eight blocks as word vectors: w[j] lane l = big-endian word j of blocks[l]. */
static inline TARGET_AVX2 void load_words(__m256i w[16], const uint8_t *const blocks[8])
{
    /* Reverse the bytes of each dword: the same pattern in both 128-bit halves. */
    const __m256i bswap = _mm256_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3, 12,
                                          13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
    for (int l = 0; l < 8; l++) {
        w[l] = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)blocks[l]), bswap);
        w[8 + l] = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(blocks[l] + 32)), bswap);
    }
    dsig_avx2_transpose8x32(w);
    dsig_avx2_transpose8x32(w + 8);
}

/* @spec FIPS 180-4 §6.2.2 steps 1-4 on eight lanes: s[j] (word j of every lane's state) +=
 * the 64 rounds over the message words in w (overwritten by the schedule). */
static inline TARGET_AVX2 void compress8(__m256i s[8], __m256i w[16])
{
    __m256i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int t = 0; t < 64; t += 16) {
        const int sched = t > 0;
        __m256i k[16];
        /* K_t broadcast to every lane (the same constants for all eight messages). */
        for (int i = 0; i < 16; i++)
            k[i] = _mm256_set1_epi32((int)dsig_sha256_k[t + i]);
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

/* Store word vectors s back as eight per-lane states (state[l][j] = lane l of s[j]). */
static inline TARGET_AVX2 void store_states(uint32_t state[8][8], __m256i s[8])
{
    dsig_avx2_transpose8x32(s);
    for (int l = 0; l < 8; l++)
        _mm256_storeu_si256((__m256i *)state[l], s[l]);
}

/* @spec FIPS 180-4 §6.2.2: state[l] = compress(state[l], blocks[l]) for l = 0..7 (AVX2). */
TARGET_AVX2 void dsig_sha256_compress_x8_avx2(uint32_t state[8][8], const uint8_t *const blocks[8])
{
    __m256i s[8], w[16];
    for (int l = 0; l < 8; l++)
        s[l] = _mm256_loadu_si256((const __m256i *)state[l]);
    dsig_avx2_transpose8x32(s);
    load_words(w, blocks);
    compress8(s, w);
    store_states(state, s);
    dsig_memzero(s, sizeof s); /* state and schedule derive from possibly secret input */
    dsig_memzero(w, sizeof w);
}

/* @spec FIPS 180-4 §6.2.2: out[l] = compress(init, blocks[l]) for l = 0..7, one shared initial
 * state (broadcast: no transpose on load). */
TARGET_AVX2 void dsig_sha256_compress_x8_avx2_from(uint32_t out[8][8], const uint32_t init[8],
                                                   const uint8_t *const blocks[8])
{
    __m256i s[8], w[16];
    for (int j = 0; j < 8; j++)
        s[j] = _mm256_set1_epi32((int)init[j]);
    load_words(w, blocks);
    compress8(s, w);
    store_states(out, s);
    dsig_memzero(s, sizeof s);
    dsig_memzero(w, sizeof w);
}

/* AVX2 has no one-message compression of its own: compress is left to the next back-end. */
const dsig_sha256_backend dsig_sha256_backend_avx2 = {
    .name = "avx2",
    .needs = DSIG_CPU_AVX2,
    .lanes = 8,
    .lanes_from = dsig_sha256_compress_x8_avx2_from,
    .lanes_cont = dsig_sha256_compress_x8_avx2,
};

#endif /* __x86_64__ */
