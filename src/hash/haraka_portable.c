/*
 * src/hash/haraka_portable.c — Haraka v2 for CPUs without AES-NI. The AES round is computed without
 * any table: the S-box is the GF(2^8) inverse (x^254, by square-and-multiply on eight bytes at once in
 * a 64-bit word) followed by the affine map, so neither timing nor cache state depends on the data.
 * Slow (tens of microseconds per hash) but byte-identical to the AES-NI back-end.
 */
#include <stdint.h>
#include <string.h>

#include "dsig/mem.h"
#include "hash/haraka_impl.h"
#include "core/bytes.h"

#define LO_BITS 0x0101010101010101ULL

/* Multiply each of the eight packed bytes by x in GF(2^8) mod x^8+x^4+x^3+x+1 (FIPS 197 §4.2.1). */
static uint64_t xtime8(uint64_t a)
{
    uint64_t hi = (a >> 7) & LO_BITS;
    return ((a & 0x7f7f7f7f7f7f7f7fULL) << 1) ^ (hi * 0x1b);
}

/* Bytewise GF(2^8) product of eight packed pairs; masks instead of branches (constant time). */
static uint64_t gmul8(uint64_t a, uint64_t b)
{
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) {
        uint64_t mask = ((b >> i) & LO_BITS) * 0xff; /* 0xff where bit i of that byte of b is set */
        r ^= a & mask;
        a = xtime8(a);
    }
    return r;
}

/* Rotate each packed byte left by k (1..7). */
static uint64_t rotl8(uint64_t x, unsigned k)
{
    uint64_t keep = (uint64_t)(0xffu >> k) * LO_BITS;          /* bits that stay inside the byte */
    return ((x & keep) << k) | ((x >> (8 - k)) & ~(keep << k) & (0xffULL * LO_BITS));
}

/* @spec FIPS 197 §5.1.1 SubBytes on eight packed bytes: b = x^254 (the inverse, 0 -> 0), then the
 * affine map b ^ rotl(b,1) ^ rotl(b,2) ^ rotl(b,3) ^ rotl(b,4) ^ 0x63. */
static uint64_t sub_bytes8(uint64_t x)
{
    uint64_t x2 = gmul8(x, x);
    uint64_t x3 = gmul8(x2, x);
    uint64_t x6 = gmul8(x3, x3);
    uint64_t x7 = gmul8(x6, x);
    uint64_t x14 = gmul8(x7, x7);
    uint64_t x15 = gmul8(x14, x);
    uint64_t x30 = gmul8(x15, x15);
    uint64_t x31 = gmul8(x30, x);
    uint64_t x62 = gmul8(x31, x31);
    uint64_t x63 = gmul8(x62, x);
    uint64_t x126 = gmul8(x63, x63);
    uint64_t x127 = gmul8(x126, x);
    uint64_t b = gmul8(x127, x127); /* x^254 */
    return b ^ rotl8(b, 1) ^ rotl8(b, 2) ^ rotl8(b, 3) ^ rotl8(b, 4) ^ (0x63 * LO_BITS);
}

/* xtime on a single byte (MixColumns). */
static uint8_t xtime1(uint8_t a)
{
    return (uint8_t)((a << 1) ^ (0x1b & (0u - (unsigned)(a >> 7))));
}

/*
 * @spec FIPS 197 §5.1 one AES encryption round as AESENC defines it: SubBytes, ShiftRows, MixColumns,
 * AddRoundKey. State byte 4c + r is row r of column c (the AES-NI register layout).
 */
static void aes_round(uint8_t s[16], const uint8_t key[16])
{
    uint8_t t[16];
    dsig_store_le64(t, sub_bytes8(dsig_load_le64(s)));
    dsig_store_le64(t + 8, sub_bytes8(dsig_load_le64(s + 8)));
    /* ShiftRows (§5.1.2): row r moves left by r columns. */
    uint8_t u[16];
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++)
            u[4 * c + r] = t[4 * ((c + r) & 3) + r];
    /* MixColumns (§5.1.3): b_r = 2a_r ^ 3a_{r+1} ^ a_{r+2} ^ a_{r+3}, then AddRoundKey (§5.1.4). */
    for (int c = 0; c < 4; c++) {
        const uint8_t *a = u + 4 * c;
        for (int r = 0; r < 4; r++) {
            uint8_t a0 = a[r], a1 = a[(r + 1) & 3], a2 = a[(r + 2) & 3], a3 = a[(r + 3) & 3];
            s[4 * c + r] = (uint8_t)(xtime1(a0) ^ xtime1(a1) ^ a1 ^ a2 ^ a3 ^ key[4 * c + r]);
        }
    }
    dsig_memzero(t, sizeof t);
    dsig_memzero(u, sizeof u);
}

/* Copy 32-bit column `src` of the 4-word state to column `dst` of another. */
static void col_copy(uint8_t (*to)[16], unsigned dst, uint8_t (*from)[16], unsigned src)
{
    memcpy(&to[dst / 4][4 * (dst % 4)], &from[src / 4][4 * (src % 4)], 4);
}

/* @spec Haraka v2: MIX for Haraka-512 — new column i = old column pi512[i] (columns 4j..4j+3 are the
 * 32-bit words of state word j); equals the unpacklo/hi_epi32 network of the AES-NI back-end. */
static void mix4(uint8_t s[4][16])
{
    static const uint8_t pi512[16] = {3, 11, 7, 15, 8, 0, 12, 4, 9, 1, 13, 5, 2, 10, 6, 14};
    uint8_t t[4][16];
    for (unsigned i = 0; i < 16; i++)
        col_copy(t, i, s, pi512[i]);
    memcpy(s, t, sizeof t);
    dsig_memzero(t, sizeof t);
}

/* @spec Haraka v2: MIX for Haraka-256 — (unpacklo_epi32, unpackhi_epi32) of the two words. */
static void mix2(uint8_t s[2][16])
{
    static const uint8_t pi256[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    uint8_t t[2][16];
    for (unsigned i = 0; i < 8; i++)
        col_copy(t, i, s, pi256[i]);
    memcpy(s, t, sizeof t);
    dsig_memzero(t, sizeof t);
}

/* @spec Haraka v2 (ePrint 2016/098): Haraka-256 v2 = 5 x (2 AES rounds per word, MIX2), feed-forward. */
void dsig_haraka256_portable(uint8_t out[32], const uint8_t in[32])
{
    uint8_t s[2][16];
    memcpy(s, in, 32);
    for (int t = 0; t < DSIG_HARAKA_ROUNDS; t++) {
        for (int m = 0; m < 2; m++)
            for (int j = 0; j < 2; j++)
                aes_round(s[j], dsig_haraka_rc[4 * t + 2 * m + j]);
        mix2(s);
    }
    for (int i = 0; i < 32; i++)
        out[i] = (uint8_t)(s[i / 16][i % 16] ^ in[i]);
    dsig_memzero(s, sizeof s);
}

/* @spec Haraka v2 (ePrint 2016/098): Haraka-512 v2 = 5 x (2 AES rounds per word, MIX4), feed-forward,
 * then the truncation to bytes 8..15, 24..31, 32..39, 48..55. */
void dsig_haraka512_portable(uint8_t out[32], const uint8_t in[64])
{
    uint8_t s[4][16];
    memcpy(s, in, 64);
    for (int t = 0; t < DSIG_HARAKA_ROUNDS; t++) {
        for (int m = 0; m < 2; m++)
            for (int j = 0; j < 4; j++)
                aes_round(s[j], dsig_haraka_rc[8 * t + 4 * m + j]);
        mix4(s);
    }
    uint8_t *f = &s[0][0];
    for (int i = 0; i < 64; i++)
        f[i] ^= in[i];
    memcpy(out, f + 8, 8);
    memcpy(out + 8, f + 24, 8);
    memcpy(out + 16, f + 32, 8);
    memcpy(out + 24, f + 48, 8);
    dsig_memzero(s, sizeof s);
}

/* Four Haraka-256 hashes, one after the other. */
void dsig_haraka256_x4_portable(uint8_t out[4 * 32], const uint8_t in[4 * 32])
{
    for (int l = 0; l < 4; l++)
        dsig_haraka256_portable(out + 32 * l, in + 32 * l);
}

/* Four Haraka-512 hashes, one after the other. */
void dsig_haraka512_x4_portable(uint8_t out[4 * 32], const uint8_t in[4 * 64])
{
    for (int l = 0; l < 4; l++)
        dsig_haraka512_portable(out + 32 * l, in + 64 * l);
}

/* Eight Haraka-512 hashes, one after the other. */
void dsig_haraka512_x8_portable(uint8_t out[8 * 32], const uint8_t in[8 * 64])
{
    for (int l = 0; l < 8; l++)
        dsig_haraka512_portable(out + 32 * l, in + 64 * l);
}

/* Any CPU: the last entry of haraka_dispatch.c's list. */
const dsig_haraka_backend dsig_haraka_backend_portable = {
    .name = "portable",
    .needs = 0,
    .h256 = dsig_haraka256_portable,
    .h512 = dsig_haraka512_portable,
    .h256_x4 = dsig_haraka256_x4_portable,
    .h512_x4 = dsig_haraka512_x4_portable,
    .h512_x8 = dsig_haraka512_x8_portable,
};
