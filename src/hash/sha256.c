/*
 * src/hash/sha256.c — SHA-256 (FIPS 180-4) for hot paths: the portable compression function and its
 * back-end table, padding for whole-message hashing, and the big-endian state encoding. The choice
 * between back-ends is sha256_dispatch.c's.
 */
#include "hash/sha256.h"

#include <string.h>

#include "dsig/mem.h"
#include "hash/sha256_impl.h"
#include "core/bytes.h"

/* @spec FIPS 180-4 §5.3.3: initial hash value H(0) (square roots of the first 8 primes). */
const uint32_t dsig_sha256_iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

/* @spec FIPS 180-4 §4.2.2: K0..K63 (cube roots of the first 64 primes). */
const uint32_t dsig_sha256_k[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* 32-bit rotate right (FIPS 180-4 §3.2 ROTR). */
static inline uint32_t rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

/* @spec FIPS 180-4 §6.2.2 SHA-256 hash computation (steps 1-4) for n blocks, §4.1.2 functions. */
void dsig_sha256_compress_portable(uint32_t state[8], const uint8_t *blocks, size_t n)
{
    uint32_t w[64];
    for (; n > 0; n--, blocks += 64) {
        for (int t = 0; t < 16; t++)
            w[t] = dsig_load_be32(blocks + 4 * t);
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; t++) {
            uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                          dsig_sha256_k[t] + w[t];
            uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
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

/* One lane of the portable "wide kernel": out[0] = compress(init, blocks[0]). */
static void compress_lane_from(uint32_t out[][8], const uint32_t init[8], const uint8_t *const blocks[])
{
    memcpy(out[0], init, 8 * sizeof(uint32_t));
    dsig_sha256_compress_portable(out[0], blocks[0], 1);
}

static void compress_lane(uint32_t st[][8], const uint8_t *const blocks[])
{
    dsig_sha256_compress_portable(st[0], blocks[0], 1);
}

/* Any CPU; the last entry of the dispatcher's list, so every operation has a back-end. */
const dsig_sha256_backend dsig_sha256_backend_portable = {
    .name = "portable",
    .needs = 0,
    .compress = dsig_sha256_compress_portable,
    .lanes = 1,
    .lanes_from = compress_lane_from,
    .lanes_cont = compress_lane,
};

/* @spec FIPS 180-4 §5.1.1 (padding), §5.3.3 (H(0)), §6.2 (hash computation) with a given back-end. */
void dsig_sha256_with(dsig_sha256_compress_fn compress, uint8_t out[32], const void *in, size_t len)
{
    const uint8_t *p = in;
    uint32_t st[8];
    memcpy(st, dsig_sha256_iv, sizeof st);
    size_t full = len / 64;
    if (full)
        compress(st, p, full);
    /* The tail, 0x80, zeros, and the 64-bit big-endian bit length fill one or two final blocks. */
    uint8_t tail[128];
    size_t rem = len % 64;
    size_t tail_len = rem < 56 ? 64 : 128;
    memset(tail, 0, sizeof tail);
    if (rem)
        memcpy(tail, p + 64 * full, rem);
    tail[rem] = 0x80;
    uint64_t bits = (uint64_t)len << 3;
    dsig_store_be32(tail + tail_len - 8, (uint32_t)(bits >> 32));
    dsig_store_be32(tail + tail_len - 4, (uint32_t)bits);
    compress(st, tail, tail_len / 64);
    dsig_sha256_store(out, st);
    dsig_memzero(tail, sizeof tail);
    dsig_memzero(st, sizeof st);
}

/* @spec FIPS 180-4 §6.2.2 step 4 / §3.1: the digest is H0..H7 as big-endian words. */
void dsig_sha256_store(uint8_t out[32], const uint32_t state[8])
{
    for (int i = 0; i < 8; i++)
        dsig_store_be32(out + 4 * i, state[i]);
}
