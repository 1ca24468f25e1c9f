/*
 * src/hash/sha512.c — SHA-512 (FIPS 180-4) compression in portable C, for the one-block hashes of
 * SLH-DSA-SHA2 (see sha512.h). Fully unrolled; no tables indexed by data, no data-dependent branches
 * (constant time). The scalar reference of the 4-lane AVX2 kernel (sha512_x4_avx2.c).
 */
#include "hash/sha512.h"

#include <string.h>

#include "dsig/mem.h"
#include "core/bytes.h"

/* @spec FIPS 180-4 §5.3.5: initial hash value H(0) for SHA-512. */
const uint64_t dsig_sha512_iv[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

/* @spec FIPS 180-4 §4.2.3: K0..K79 (cube roots of the first 80 primes). */
const uint64_t dsig_sha512_k[80] = {
    0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL, 0xe9b5dba58189dbbcULL,
    0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL, 0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL,
    0xd807aa98a3030242ULL, 0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
    0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL, 0xc19bf174cf692694ULL,
    0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL, 0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL,
    0x2de92c6f592b0275ULL, 0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
    0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL, 0xbf597fc7beef0ee4ULL,
    0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL, 0x06ca6351e003826fULL, 0x142929670a0e6e70ULL,
    0x27b70a8546d22ffcULL, 0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
    0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL, 0x92722c851482353bULL,
    0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL, 0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL,
    0xd192e819d6ef5218ULL, 0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
    0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL, 0x34b0bcb5e19b48a8ULL,
    0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL, 0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL,
    0x748f82ee5defb2fcULL, 0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
    0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL, 0xc67178f2e372532bULL,
    0xca273eceea26619cULL, 0xd186b8c721c0c207ULL, 0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL,
    0x06f067aa72176fbaULL, 0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
    0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL, 0x431d67c49c100d4cULL,
    0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL, 0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};

/* 64-bit rotate right (FIPS 180-4 §3.2 ROTR). */
static inline uint64_t rotr64(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

/* FIPS 180-4 §4.1.3 functions. */
#define S0(x) (rotr64(x, 28) ^ rotr64(x, 34) ^ rotr64(x, 39))
#define S1(x) (rotr64(x, 14) ^ rotr64(x, 18) ^ rotr64(x, 41))
#define s0(x) (rotr64(x, 1) ^ rotr64(x, 8) ^ ((x) >> 7))
#define s1(x) (rotr64(x, 19) ^ rotr64(x, 61) ^ ((x) >> 6))
#define CH(x, y, z) ((((y) ^ (z)) & (x)) ^ (z))
#define MAJ(x, y, z) ((((x) ^ (y)) & ((y) ^ (z))) ^ (y))

/* One round t+i; the caller rotates the variable names instead of moving eight words. The sum is
 * ordered for a short dependency chain: h + K_t + W_t does not depend on the previous round, so only
 * Σ1(e) + Ch(e,f,g) (and Σ0(a) + Maj(a,b,c)) wait for the new e (a). */
#define RND(a, b, c, d, e, f, g, h, i)                                                             \
    do {                                                                                           \
        uint64_t t1 = (h + dsig_sha512_k[t + (i)] + w[i]) + CH(e, f, g) + S1(e);                            \
        d += t1;                                                                                   \
        h = t1 + (S0(a) + MAJ(a, b, c));                                                           \
    } while (0)

/* Schedule step for rounds 16..79: W[i] becomes W_t in the 16-word window (W[t mod 16]),
 * @spec FIPS 180-4 §6.4.2 step 1: W_t = σ1(W_{t-2}) + W_{t-7} + σ0(W_{t-15}) + W_{t-16}. */
#define SCHED(i) (w[i] += s1(w[((i) + 14) & 15]) + w[((i) + 9) & 15] + s0(w[((i) + 1) & 15]))

/* @spec FIPS 180-4 §6.4.2 SHA-512 hash computation (steps 1-4) for n blocks: 80 rounds as five
 * unrolled groups of 16, the message schedule as a rolling 16-word window (W[t mod 16]); the first
 * group uses the message words as they are, the other four compute the schedule word of each
 * round just before it (separate code, so no branch in the round). */
void dsig_sha512_compress(uint64_t state[8], const uint8_t *blocks, size_t n)
{
    uint64_t w[16];
    for (; n > 0; n--, blocks += 128) {
        for (int i = 0; i < 16; i++)
            w[i] = dsig_load_be64(blocks + 8 * i);
        uint64_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint64_t e = state[4], f = state[5], g = state[6], h = state[7];
        int t = 0;
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
        for (t = 16; t < 80; t += 16) {
            SCHED(0); RND(a, b, c, d, e, f, g, h, 0);
            SCHED(1); RND(h, a, b, c, d, e, f, g, 1);
            SCHED(2); RND(g, h, a, b, c, d, e, f, 2);
            SCHED(3); RND(f, g, h, a, b, c, d, e, 3);
            SCHED(4); RND(e, f, g, h, a, b, c, d, 4);
            SCHED(5); RND(d, e, f, g, h, a, b, c, 5);
            SCHED(6); RND(c, d, e, f, g, h, a, b, 6);
            SCHED(7); RND(b, c, d, e, f, g, h, a, 7);
            SCHED(8); RND(a, b, c, d, e, f, g, h, 8);
            SCHED(9); RND(h, a, b, c, d, e, f, g, 9);
            SCHED(10); RND(g, h, a, b, c, d, e, f, 10);
            SCHED(11); RND(f, g, h, a, b, c, d, e, 11);
            SCHED(12); RND(e, f, g, h, a, b, c, d, 12);
            SCHED(13); RND(d, e, f, g, h, a, b, c, 13);
            SCHED(14); RND(c, d, e, f, g, h, a, b, 14);
            SCHED(15); RND(b, c, d, e, f, g, h, a, 15);
        }
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
        state[4] += e;
        state[5] += f;
        state[6] += g;
        state[7] += h;
    }
    dsig_memzero(w, sizeof w); /* the schedule is derived from possibly secret input */
}

/* One lane of the portable wide kernel: out[0] = compress(init, blocks[0]). */
static void compress_lane_from(uint64_t out[][8], const uint64_t init[8], const uint8_t *const blocks[])
{
    memcpy(out[0], init, 8 * sizeof(uint64_t));
    dsig_sha512_compress(out[0], blocks[0], 1);
}

static void compress_lane(uint64_t st[][8], const uint8_t *const blocks[])
{
    dsig_sha512_compress(st[0], blocks[0], 1);
}

/* Any CPU; the last entry of the dispatcher's list. */
const dsig_sha512_backend dsig_sha512_backend_portable = {
    .name = "portable",
    .needs = 0,
    .lanes = 1,
    .lanes_from = compress_lane_from,
    .lanes_cont = compress_lane,
};

/* @spec FIPS 180-4 §5.1.2 (padding), §5.3.5 (H(0)), §6.4 (hash computation). */
void dsig_sha512(uint8_t out[64], const void *in, size_t len)
{
    const uint8_t *p = in;
    uint64_t st[8];
    memcpy(st, dsig_sha512_iv, sizeof st);
    size_t full = len / 128;
    if (full)
        dsig_sha512_compress(st, p, full);
    /* Tail, 0x80, zeros and the 128-bit big-endian bit length fill one or two final blocks. */
    uint8_t tail[256];
    size_t rem = len % 128;
    size_t tail_len = rem < 112 ? 128 : 256;
    memset(tail, 0, sizeof tail);
    if (rem)
        memcpy(tail, p + 128 * full, rem);
    tail[rem] = 0x80;
    dsig_store_be64(tail + tail_len - 16, (uint64_t)len >> 61);
    dsig_store_be64(tail + tail_len - 8, (uint64_t)len << 3);
    dsig_sha512_compress(st, tail, tail_len / 128);
    dsig_sha512_store(out, st);
    dsig_memzero(tail, sizeof tail);
    dsig_memzero(st, sizeof st);
}

/* @spec FIPS 180-4 §6.4.2 step 4: the digest is H0..H7 as big-endian 64-bit words. */
void dsig_sha512_store(uint8_t out[64], const uint64_t state[8])
{
    for (int i = 0; i < 8; i++)
        dsig_store_be64(out + 8 * i, state[i]);
}
