/*
 * src/pq/slhdsa/hash_sha2.c — the SHA2 family's tree hashes (FIPS 205 §11.2): F and PRF always
 * SHA-256; H and T_l SHA-256 for category 1 (n = 16, §11.2.1) and SHA-512 for categories 3 and 5
 * (§11.2.2). Every call starts from the state after the PK.seed block (PK.seed ‖ zero padding to the
 * block size), computed once per key, so F/PRF (and H for n = 16, and H for n > 16 on SHA-512) are one
 * compression each: ADRSc ‖ input ‖ padding fits one block.
 *
 * Back-ends: the process-wide choice of src/hash/sha256_dispatch.c and sha512_dispatch.c (see
 * src/core/cpu.h), read at every batch:
 *   SHA-256 batches (f_many, h_many at n = 16): the SHA-256 wide kernel in groups of
 *     dsig_sha256_simd_degree() — two interleaved SHA-NI compressions (~18 ns per block on the
 *     development CPU, AMD EPYC with SHA-NI + AVX2; one at a time ~25-43 ns), else 8 AVX2 lanes (~38 ns
 *     per block and lane), else one at a time.
 *   SHA-512 batches (h_many at n = 24/32): 4 lanes of AVX2 (93 ns per block and lane against the
 *     portable compression's ~150-180 ns); else portable.
 *   T_l (one call, many blocks): the dispatched SHA-256 compression, portable SHA-512.
 */
#include <string.h>

#include "dsig/mem.h"
#include "hash/sha256.h"
#include "hash/sha256_impl.h"
#include "hash/sha512.h"
#include "pq/slhdsa/hash.h"
#include "core/bytes.h"

/* Precompute the seeded SHA-256 (and SHA-512) states. */
static void sha2_init(dsig_slhdsa_ctx *c)
{
    uint8_t blk[128];
    unsigned n = c->p->n;
    memset(blk, 0, sizeof blk);
    memcpy(blk, c->pk_seed, n);
    memcpy(c->sha256_seeded, dsig_sha256_iv, sizeof c->sha256_seeded);
    dsig_sha256_compress(c->sha256_seeded, blk, 1);
    if (n > 16) {
        memcpy(c->sha512_seeded, dsig_sha512_iv, sizeof c->sha512_seeded);
        dsig_sha512_compress(c->sha512_seeded, blk, 1);
    }
}

/* Fill a one-block SHA-256 tail: ADRSc ‖ in ‖ 0x80 ‖ zeros ‖ bit length of (64 + 22 + inlen). */
static inline void block256(uint8_t blk[64], const uint8_t adrs[32], const uint8_t *in, size_t inlen)
{
    slh_adrs_compress(blk, adrs);
    memcpy(blk + 22, in, inlen);
    blk[22 + inlen] = 0x80;
    memset(blk + 23 + inlen, 0, 64 - 8 - 23 - inlen);
    dsig_store_be64(blk + 56, (uint64_t)(64 + 22 + inlen) * 8);
}

/* Truncated big-endian output of a SHA-256 state (Trunc_n). */
static inline void out256(uint8_t *out, const uint32_t st[8], unsigned n)
{
    for (unsigned i = 0; i < n / 4; i++)
        dsig_store_be32(out + 4 * i, st[i]);
}

/* count one-block SHA-256 hashes over the seeded state: out[i] = Trunc_n(SHA-256(seed ‖ ADRSc ‖ in)).
 * With a wide kernel of L lanes, groups of L; a remainder of 2..L-1 runs as one more padded group
 * (unused lanes recompute lane 0: cheaper than 2+ single compressions). A last single call runs
 * alone. Inputs are copied into the blocks before anything is written, so out may alias in. */
static void sha256_many(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs,
                        const uint8_t *const *in, uint8_t *const *out, size_t count, size_t inlen)
{
    const dsig_sha256_ops *o = dsig_sha256_ops_get();
    const size_t L = o->lanes < DSIG_SHA256_MAX_LANES ? o->lanes : DSIG_SHA256_MAX_LANES; /* = o->lanes */
    unsigned n = c->p->n;
    size_t i = 0;
    if (L >= 2 && count >= 2) {
        uint8_t blk[DSIG_SHA256_MAX_LANES][64];
        const uint8_t *bp[DSIG_SHA256_MAX_LANES];
        uint32_t st[DSIG_SHA256_MAX_LANES][8];
        while (count - i >= 2) {
            size_t lanes = count - i < L ? count - i : L;
            for (size_t l = 0; l < L; l++) {
                if (l < lanes)
                    block256(blk[l], adrs[i + l], in[i + l], inlen);
                bp[l] = blk[l < lanes ? l : 0];
            }
            o->lanes_from(st, c->sha256_seeded, bp);
            for (size_t l = 0; l < lanes; l++)
                out256(out[i + l], st[l], n);
            i += lanes;
        }
        dsig_memzero(blk, L * sizeof blk[0]); /* only the rows used */
        dsig_memzero(st, L * sizeof st[0]);
    }
    if (i == count)
        return;
    uint8_t blk1[64];
    uint32_t st1[8];
    for (; i < count; i++) {
        block256(blk1, adrs[i], in[i], inlen);
        memcpy(st1, c->sha256_seeded, sizeof st1);
        o->compress(st1, blk1, 1);
        out256(out[i], st1, n);
    }
    dsig_memzero(blk1, sizeof blk1);
    dsig_memzero(st1, sizeof st1);
}

/* @spec FIPS 205 §11.2.1/§11.2.2 F (and PRF): Trunc_n(SHA-256(PK.seed ‖ 0^(64-n) ‖ ADRSc ‖ M1)). */
static void sha2_f_many(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs,
                        const uint8_t *const *in, uint8_t *const *out, size_t count)
{
    sha256_many(c, adrs, in, out, count, c->p->n);
}

/* Fill a one-block SHA-512 tail: ADRSc ‖ in (2n bytes) ‖ 0x80 ‖ zeros ‖ 128-bit bit length of
 * (128 + 22 + 2n) bytes. */
static inline void block512(uint8_t blk[128], const uint8_t adrs[32], const uint8_t *in, unsigned n)
{
    slh_adrs_compress(blk, adrs);
    memcpy(blk + 22, in, 2 * n);
    blk[22 + 2 * n] = 0x80;
    memset(blk + 23 + 2 * n, 0, 128 - 16 - 23 - 2 * n);
    dsig_store_be64(blk + 112, 0);
    dsig_store_be64(blk + 120, (uint64_t)(128 + 22 + 2 * n) * 8);
}

/* Truncated big-endian output of a SHA-512 state (Trunc_n, n a multiple of 8). */
static inline void out512(uint8_t *out, const uint64_t st[8], unsigned n)
{
    for (unsigned w = 0; w < n / 8; w++)
        dsig_store_be64(out + 8 * w, st[w]);
}

/* @spec FIPS 205 §11.2.2 H for n > 16: Trunc_n(SHA-512(PK.seed ‖ 0^(128-n) ‖ ADRSc ‖ M2)).
 * With the 4-lane kernel, groups of 4; a remainder of 3 as one padded group (unused lane recomputes
 * lane 0), 1-2 one at a time (a 4-lane call costs about two portable compressions). */
static void sha512_h_many(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs,
                          const uint8_t *const *in, uint8_t *const *out, size_t count)
{
    const dsig_sha512_backend *b = dsig_sha512_lanes_get();
    const size_t L = b->lanes < 4 ? b->lanes : 4, min_group = L - 1; /* L = 4: at least 3 real lanes */
    unsigned n = c->p->n;
    size_t i = 0;
    if (L >= 4 && count >= min_group) {
        uint8_t blk[4][128];
        const uint8_t *bp[4];
        uint64_t st4[4][8];
        while (count - i >= min_group) {
            size_t lanes = count - i < L ? count - i : L;
            for (size_t l = 0; l < L; l++) {
                if (l < lanes)
                    block512(blk[l], adrs[i + l], in[i + l], n);
                bp[l] = blk[l < lanes ? l : 0];
            }
            b->lanes_from(st4, c->sha512_seeded, bp);
            for (size_t l = 0; l < lanes; l++)
                out512(out[i + l], st4[l], n);
            i += lanes;
        }
        dsig_memzero(blk, sizeof blk);
        dsig_memzero(st4, sizeof st4);
    }
    if (i == count)
        return;
    uint8_t blk1[128];
    uint64_t st[8];
    for (; i < count; i++) {
        block512(blk1, adrs[i], in[i], n);
        memcpy(st, c->sha512_seeded, sizeof st);
        dsig_sha512_compress(st, blk1, 1);
        out512(out[i], st, n);
    }
    dsig_memzero(blk1, sizeof blk1);
    dsig_memzero(st, sizeof st);
}

/* @spec FIPS 205 §11.2.1 H (n = 16: SHA-256) / §11.2.2 H (n > 16: SHA-512). */
static void sha2_h_many(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs,
                        const uint8_t *const *in, uint8_t *const *out, size_t count)
{
    if (c->p->n == 16)
        sha256_many(c, adrs, in, out, count, 32);
    else
        sha512_h_many(c, adrs, in, out, count);
}

/* @spec FIPS 205 §11.2 T_l: Trunc_n(SHA-X(PK.seed ‖ 0^(B-n) ‖ ADRSc ‖ M_l)), X = 256 (B = 64) for
 * n = 16, X = 512 (B = 128) otherwise; any number of blocks from the seeded state. */
static void sha2_t(const dsig_slhdsa_ctx *c, const uint8_t adrs[32], const uint8_t *in, size_t inlen,
                   uint8_t *out)
{
    unsigned n = c->p->n;
    int big = n > 16;
    size_t bs = big ? 128 : 64, lenpos = big ? 112 : 56;
    void (*compress256)(uint32_t state[8], const uint8_t *blocks, size_t n) = dsig_sha256_ops_get()->compress;
    uint8_t blk[128];
    uint32_t s256[8];
    uint64_t s512[8];
    if (big)
        memcpy(s512, c->sha512_seeded, sizeof s512);
    else
        memcpy(s256, c->sha256_seeded, sizeof s256);
    uint64_t total_bits = (uint64_t)(bs + 22 + inlen) * 8;
    slh_adrs_compress(blk, adrs);
    size_t fill = 22;
    while (inlen > 0) {
        size_t take = bs - fill < inlen ? bs - fill : inlen;
        memcpy(blk + fill, in, take);
        fill += take;
        in += take;
        inlen -= take;
        if (fill == bs) {
            if (big)
                dsig_sha512_compress(s512, blk, 1);
            else
                compress256(s256, blk, 1);
            fill = 0;
        }
    }
    blk[fill++] = 0x80;
    if (fill > lenpos) {
        memset(blk + fill, 0, bs - fill);
        if (big)
            dsig_sha512_compress(s512, blk, 1);
        else
            compress256(s256, blk, 1);
        fill = 0;
    }
    memset(blk + fill, 0, bs - fill);
    dsig_store_be64(blk + bs - 8, total_bits);
    if (big) {
        dsig_sha512_compress(s512, blk, 1);
        out512(out, s512, n);
    } else {
        compress256(s256, blk, 1);
        out256(out, s256, n);
    }
    dsig_memzero(blk, sizeof blk);
    dsig_memzero(s256, sizeof s256);
    dsig_memzero(s512, sizeof s512);
}

/* Back-end name for benchmarks and tests: the SHA-256 batch kernel, then "+sha512-x4-avx2" when
 * SHA-512's H runs 4 lanes wide (n > 16). */
static const char *sha2_backend(const dsig_slhdsa_ctx *c)
{
    static const char *const names[2][3] = {
        {"sha256-portable", "sha256-shani-x2", "sha256-x8-avx2"},
        {"sha256-portable+sha512-x4-avx2", "sha256-shani-x2+sha512-x4-avx2",
         "sha256-x8-avx2+sha512-x4-avx2"},
    };
    unsigned lanes = dsig_sha256_simd_degree();
    int k = lanes == 8 ? 2 : lanes == 2 ? 1 : 0;
    return names[(c->p->n > 16 && dsig_sha512_simd_degree() == 4) ? 1 : 0][k];
}

const struct dsig_slhdsa_hash_ops dsig_slhdsa_sha2_ops = {
    .init = sha2_init,
    .f_many = sha2_f_many,
    .h_many = sha2_h_many,
    .t = sha2_t,
    .backend = sha2_backend,
};
