/*
 * src/hash/keccak.c — Keccak sponge (FIPS 202) and the portable 64-bit Keccak-f[1600].
 *
 * The permutation keeps the 25 lanes in local variables and runs two fully unrolled rounds per loop
 * iteration (A -> E -> A), with ρ/π folded into constant rotations (keccak_impl.h), so there are no
 * index computations, table lookups or data-dependent branches: constant time by construction.
 * Whole blocks are absorbed and squeezed with 64-bit little-endian lane loads/stores; only the bytes of
 * a partial lane go one at a time. The x4 permutation is dispatched once per process (AVX2 or four
 * strided portable permutations).
 */
#include <string.h>

#include "dsig/mem.h"
#include "hash/keccak.h"
#include "hash/keccak_impl.h"
#include "core/bytes.h"

/* @spec FIPS 202 §3.2.5, Algorithm 5/6: RC[i_r] for i_r = 0..23 (bits at positions 2^j - 1). */
const uint64_t dsig_keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

/* Rotate left by a constant 1..63 (compiles to one rotate instruction). */
static inline uint64_t rol64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64 - r));
}

#define KXOR(a, b) ((a) ^ (b))
#define KAND(a, b) ((a) & (b))
#define KOR(a, b) ((a) | (b))
#define KNOT(a) (~(a))
#define KROL(x, n) rol64((x), (n))
#define KRC(i) dsig_keccak_rc[(i)]

/*
 * @spec FIPS 202 §3.3 Keccak-p[1600, 24] on 25 lanes found at s[0], s[stride], ..., s[24 * stride]:
 * stride 1 is one state, stride 4 one instance of the interleaved x4 layout (no de-interleave copy).
 * Lanes in P are complemented on entry and exit so the rounds need 5 NOTs instead of 25 (plain C has
 * no and-not instruction); the state in memory is always the standard one.
 */
__attribute__((always_inline)) static inline void f1600_strided(uint64_t *s, size_t stride)
{
    uint64_t c0, c1, c2, c3, c4, d0, d1, d2, d3, d4, b0, b1, b2, b3, b4, nb;
#define DECL(y, x, i) uint64_t a##y##x = s[(i) * stride], e##y##x;
    DSIG_KECCAK_LANES(DECL)
#undef DECL
#define FLIP(y, x) a##y##x = ~a##y##x;
    DSIG_KECCAK_LC_LANES(FLIP)
    for (int r = 0; r < 24; r += 2) {
        DSIG_KECCAK_ROUND_LC(a, e, r)
        DSIG_KECCAK_ROUND_LC(e, a, r + 1)
    }
    DSIG_KECCAK_LC_LANES(FLIP)
#undef FLIP
#define STORE(y, x, i) s[(i) * stride] = a##y##x;
    DSIG_KECCAK_LANES(STORE)
#undef STORE
}

/* @spec FIPS 202 §3.3 Keccak-p[1600, 24], portable 64-bit C. */
void dsig_keccak_f1600_portable(uint64_t s[25])
{
    f1600_strided(s, 1);
}

/* @spec FIPS 202 §3.3 on four interleaved states, one portable permutation per instance. */
void dsig_keccak_f1600_x4_portable(uint64_t s[100])
{
    for (size_t j = 0; j < 4; j++)
        f1600_strided(s + j, 4);
}

/* @spec FIPS 202 §3.3 on eight interleaved states (dsig_keccak_x8), one portable permutation each. */
void dsig_keccak_f1600_x8_portable(uint64_t s[200])
{
    for (size_t j = 0; j < 8; j++)
        f1600_strided(s + j, 8);
}

/* @spec FIPS 202 §3.3: the single-state permutation. The portable C (with lane complementing it
 * already beats OpenSSL's assembly, bench/bench_keccak.c) unless the dispatched back-end has a
 * single-state kernel (AVX-512VL: rotates and three-input logic, one lane per register). */
void dsig_keccak_f1600(uint64_t s[25])
{
    void (*one)(uint64_t s[25]) = dsig_keccak_x4_get()->f1600;
    if (one)
        one(s);
    else
        f1600_strided(s, 1);
}

/* ---- lane loads and stores ------------------------------------------------------------------ */

/* XOR n bytes into lanes s[0], s[stride], ... starting at byte offset `off` (< 200): head bytes up to
 * a lane boundary, whole lanes, then tail bytes. Offsets and lengths are public. */
static inline void xor_bytes(uint64_t *s, size_t stride, size_t off, const uint8_t *in, size_t n)
{
    for (; n && (off & 7); n--, off++)
        s[(off >> 3) * stride] ^= (uint64_t)*in++ << (8 * (off & 7));
    for (; n >= 8; n -= 8, off += 8, in += 8)
        s[(off >> 3) * stride] ^= dsig_load_le64(in);
    for (; n; n--, off++)
        s[(off >> 3) * stride] ^= (uint64_t)*in++ << (8 * (off & 7));
}

/* Copy n bytes out of lanes s[0], s[stride], ... starting at byte offset `off`. */
static inline void get_bytes(const uint64_t *s, size_t stride, size_t off, uint8_t *out, size_t n)
{
    for (; n && (off & 7); n--, off++)
        *out++ = (uint8_t)(s[(off >> 3) * stride] >> (8 * (off & 7)));
    for (; n >= 8; n -= 8, off += 8, out += 8)
        dsig_store_le64(out, s[(off >> 3) * stride]);
    for (; n; n--, off++)
        *out++ = (uint8_t)(s[(off >> 3) * stride] >> (8 * (off & 7)));
}

/* XOR one whole block of `lanes` lanes (the rate / 8) into the state. */
__attribute__((always_inline)) static inline void xor_block(uint64_t s[25], const uint8_t *in,
                                                            unsigned lanes)
{
    for (unsigned i = 0; i < lanes; i++)
        s[i] ^= dsig_load_le64(in + 8 * i);
}

/* Copy one whole block of `lanes` lanes out of the state. */
__attribute__((always_inline)) static inline void get_block(const uint64_t s[25], uint8_t *out,
                                                            unsigned lanes)
{
    for (unsigned i = 0; i < lanes; i++)
        dsig_store_le64(out + 8 * i, s[i]);
}

/* Absorb whole blocks; rates the library uses get a loop with a constant trip count (unrolled).
 * Returns the bytes consumed (a multiple of the rate). */
static size_t absorb_blocks(uint64_t s[25], unsigned rate, const uint8_t *in, size_t n)
{
    size_t done = 0;
#define BLOCKS(R)                                                                                     \
    case R:                                                                                           \
        for (; n - done >= R; done += R) {                                                            \
            xor_block(s, in + done, R / 8);                                                           \
            dsig_keccak_f1600(s);                                                                     \
        }                                                                                             \
        break;
    switch (rate) {
        BLOCKS(DSIG_SHAKE128_RATE)
        BLOCKS(DSIG_SHAKE256_RATE)
        BLOCKS(DSIG_SHA3_384_RATE)
        BLOCKS(DSIG_SHA3_512_RATE)
    default:
        for (; n - done >= rate; done += rate) {
            xor_block(s, in + done, rate / 8);
            dsig_keccak_f1600(s);
        }
    }
#undef BLOCKS
    return done;
}

/* ---- the sponge ------------------------------------------------------------------------------ */

/* @spec FIPS 202 §4 SPONGE: zero state, rate r = `rate` bytes. */
void dsig_keccak_init(dsig_keccak *k, unsigned rate)
{
    memset(k->s, 0, sizeof k->s);
    k->rate = rate;
    k->pos = 0;
    k->squeezing = 0;
}

/* @spec FIPS 202 §4 absorbing phase, streamed: finish a pending partial block, then whole blocks
 * straight from the input, then keep the tail pending (pos < rate on return). */
void dsig_keccak_absorb(dsig_keccak *k, const uint8_t *in, size_t n)
{
    unsigned rate = k->rate;
    if (n == 0) /* also keeps (NULL, 0) away from pointer arithmetic */
        return;
    if (k->pos) {
        size_t take = rate - k->pos;
        if (take > n)
            take = n;
        xor_bytes(k->s, 1, k->pos, in, take);
        k->pos += (unsigned)take;
        in += take;
        n -= take;
        if (k->pos < rate)
            return;
        dsig_keccak_f1600(k->s);
        k->pos = 0;
    }
    size_t done = absorb_blocks(k->s, rate, in, n);
    xor_bytes(k->s, 1, 0, in + done, n - done);
    k->pos = (unsigned)(n - done);
}

/* @spec FIPS 202 §5.1 pad10*1 with the suffix bits folded into `ds` (§6.1 SHA-3 01, §6.2 SHAKE 1111). */
void dsig_keccak_finalize(dsig_keccak *k, uint8_t ds)
{
    k->s[k->pos / 8] ^= (uint64_t)ds << (8 * (k->pos % 8));
    k->s[(k->rate - 1) / 8] ^= 0x80ULL << (8 * ((k->rate - 1) % 8));
    k->squeezing = 1;
    k->pos = k->rate; /* no bytes available until the first permutation */
}

/* @spec FIPS 202 §4 squeezing phase, streamed: any output length, resuming mid-block. */
void dsig_keccak_squeeze(dsig_keccak *k, uint8_t *out, size_t n)
{
    unsigned rate = k->rate;
    while (n) {
        if (k->pos == rate) {
            dsig_keccak_f1600(k->s);
            k->pos = 0;
        }
        size_t take = rate - k->pos;
        if (take > n)
            take = n;
        get_bytes(k->s, 1, k->pos, out, take);
        k->pos += (unsigned)take;
        out += take;
        n -= take;
    }
}

/* @spec FIPS 202 §4 squeezing phase, whole blocks only (lane stores, no byte loop). */
void dsig_keccak_squeezeblocks(dsig_keccak *k, uint8_t *out, size_t nblocks)
{
    unsigned rate = k->rate;
    for (size_t i = 0; i < nblocks; i++, out += rate) {
        dsig_keccak_f1600(k->s);
        get_block(k->s, out, rate / 8);
    }
    k->pos = rate;
}

/* @spec FIPS 202 §4 squeezing phase, 8 bytes: one lane when the position is lane-aligned (bytes of a
 * lane are in little-endian order, §3.1.2), else through the byte path. */
uint64_t dsig_keccak_squeeze_u64(dsig_keccak *k)
{
    if ((k->pos & 7) == 0 && (k->rate & 7) == 0) {
        if (k->pos == k->rate) {
            dsig_keccak_f1600(k->s);
            k->pos = 0;
        }
        uint64_t v = k->s[k->pos / 8];
        k->pos += 8;
        return v;
    }
    uint8_t b[8];
    dsig_keccak_squeeze(k, b, sizeof b);
    return dsig_load_le64(b);
}

/* Wipe a state that absorbed secrets (explicit_bzero: not optimised away, and fast). */
void dsig_keccak_wipe(dsig_keccak *k)
{
    dsig_memzero(k, sizeof *k);
}

/* One-shot sponge: absorb all, pad, squeeze outlen bytes, wipe. */
static void sponge(unsigned rate, uint8_t ds, uint8_t *out, size_t outlen, const uint8_t *in,
                   size_t inlen)
{
    dsig_keccak k;
    dsig_keccak_init(&k, rate);
    dsig_keccak_absorb(&k, in, inlen);
    dsig_keccak_finalize(&k, ds);
    dsig_keccak_squeeze(&k, out, outlen);
    dsig_keccak_wipe(&k);
}

/* @spec FIPS 202 §6.2 SHAKE128(M, d). */
void dsig_shake128(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen)
{
    sponge(DSIG_SHAKE128_RATE, DSIG_KECCAK_DS_SHAKE, out, outlen, in, inlen);
}

/* @spec FIPS 202 §6.2 SHAKE256(M, d). */
void dsig_shake256(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen)
{
    sponge(DSIG_SHAKE256_RATE, DSIG_KECCAK_DS_SHAKE, out, outlen, in, inlen);
}

/* @spec FIPS 202 §6.1 SHA3-256(M). */
void dsig_sha3_256(uint8_t out[32], const uint8_t *in, size_t inlen)
{
    sponge(DSIG_SHA3_256_RATE, DSIG_KECCAK_DS_SHA3, out, 32, in, inlen);
}

/* @spec FIPS 202 §6.1 SHA3-384(M). */
void dsig_sha3_384(uint8_t out[48], const uint8_t *in, size_t inlen)
{
    sponge(DSIG_SHA3_384_RATE, DSIG_KECCAK_DS_SHA3, out, 48, in, inlen);
}

/* @spec FIPS 202 §6.1 SHA3-512(M). */
void dsig_sha3_512(uint8_t out[64], const uint8_t *in, size_t inlen)
{
    sponge(DSIG_SHA3_512_RATE, DSIG_KECCAK_DS_SHA3, out, 64, in, inlen);
}

/* ---- four instances ---------------------------------------------------------------------- */

/* Any CPU: the four states one after another; the last entry of keccak_dispatch.c's list. */
const dsig_keccak_x4_backend dsig_keccak_x4_portable_backend = {
    .name = "portable",
    .needs = 0,
    .lanes = 1,
    .f1600_x4 = dsig_keccak_f1600_x4_portable,
};

/* @spec FIPS 202 §4 absorbing + §5.1 padding for four equal-length inputs into the interleaved state. */
void dsig_keccak_x4_absorb_once(dsig_keccak_x4 *k, unsigned rate, uint8_t ds,
                                const uint8_t *const in[4], size_t inlen)
{
    void (*perm)(uint64_t s[100]) = dsig_keccak_x4_get()->f1600_x4;
    memset(k->s, 0, sizeof k->s);
    k->rate = rate;
    size_t off = 0;
    for (; inlen - off >= rate; off += rate) {
        for (unsigned i = 0; i < rate / 8; i++)
            for (unsigned j = 0; j < 4; j++)
                k->s[4 * i + j] ^= dsig_load_le64(in[j] + off + 8 * i);
        perm(k->s);
    }
    size_t rem = inlen - off;
    for (unsigned j = 0; j < 4; j++) {
        xor_bytes(k->s + j, 4, 0, in[j] + off, rem);
        k->s[4 * (rem / 8) + j] ^= (uint64_t)ds << (8 * (rem % 8));
        k->s[4 * ((rate - 1) / 8) + j] ^= 0x80ULL << (8 * ((rate - 1) % 8));
    }
}

/* @spec FIPS 202 §4 squeezing, whole blocks, four instances: lane stores straight to each output. */
void dsig_keccak_x4_squeezeblocks(dsig_keccak_x4 *k, uint8_t *const out[4], size_t nblocks)
{
    void (*perm)(uint64_t s[100]) = dsig_keccak_x4_get()->f1600_x4;
    unsigned rate = k->rate;
    for (size_t n = 0; n < nblocks; n++) {
        perm(k->s);
        for (unsigned i = 0; i < rate / 8; i++)
            for (unsigned j = 0; j < 4; j++)
                dsig_store_le64(out[j] + n * rate + 8 * i, k->s[4 * i + j]);
    }
}

/* Wipe four states that absorbed secrets. */
void dsig_keccak_x4_wipe(dsig_keccak_x4 *k)
{
    dsig_memzero(k, sizeof *k);
}
