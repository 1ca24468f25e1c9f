/*
 * src/pq/slhdsa/hash.h — private to src/pq/slhdsa: the per-key hash context, the family operation
 * tables (SHA2 §11.2, SHAKE §11.1) and ADRS (§4.2) helpers.
 *
 * The tree code never calls a hash directly: it hands the family table arrays of independent F/H
 * calls (every chain step of a leaf batch, every leaf of a FORS chunk, every node of a tree level),
 * so a back-end can run them 1 or 4 (Keccak x4) at a time (room for an 8-lane AVX2 SHA-256). PRF is F with input
 * SK.seed (the two have the same form in both families).
 */
#ifndef DSIG_PQ_SLHDSA_HASH_H
#define DSIG_PQ_SLHDSA_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pq/slhdsa/params.h"

/* @spec FIPS 205 §4.2 Table 1: ADRS type constants. */
enum {
    SLH_WOTS_HASH = 0,
    SLH_WOTS_PK = 1,
    SLH_TREE = 2,
    SLH_FORS_TREE = 3,
    SLH_FORS_ROOTS = 4,
    SLH_WOTS_PRF = 5,
    SLH_FORS_PRF = 6,
};

/* Per-key hash state: the seeds and, for SHA2, the compression states after the PK.seed block. */
typedef struct dsig_slhdsa_ctx {
    const dsig_slhdsa_params *p;
    uint8_t pk_seed[DSIG_SLHDSA_NMAX];
    uint8_t sk_seed[DSIG_SLHDSA_NMAX];   /* zero for verification */
    uint32_t sha256_seeded[8];           /* SHA-256 state after PK.seed ‖ 0^(64-n) */
    uint64_t sha512_seeded[8];           /* SHA-512 state after PK.seed ‖ 0^(128-n) (n > 16) */
} dsig_slhdsa_ctx;

struct dsig_slhdsa_hash_ops {
    /* Precompute the seeded states (p, pk_seed, sk_seed already set). */
    void (*init)(dsig_slhdsa_ctx *c);
    /* out[i] = F(PK.seed, adrs[i], in[i]) for i < count (in n bytes; out may alias in). */
    void (*f_many)(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs, const uint8_t *const *in,
                   uint8_t *const *out, size_t count);
    /* out[i] = H(PK.seed, adrs[i], in[i]) for i < count (in 2n bytes; out must not alias in). */
    void (*h_many)(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs, const uint8_t *const *in,
                   uint8_t *const *out, size_t count);
    /* out = T_l(PK.seed, adrs, in) with inlen = l·n. */
    void (*t)(const dsig_slhdsa_ctx *c, const uint8_t adrs[32], const uint8_t *in, size_t inlen,
              uint8_t *out);
    /* Name of the back-end chosen for a context ("sha256-shani", "keccak-x4-avx2", ...). */
    const char *(*backend)(const dsig_slhdsa_ctx *c);
};

extern const struct dsig_slhdsa_hash_ops dsig_slhdsa_sha2_ops, dsig_slhdsa_shake_ops;

/* Set up c for a key (sk_seed NULL when only verifying); wipe with dsig_slhdsa_ctx_wipe. */
void dsig_slhdsa_ctx_init(dsig_slhdsa_ctx *c, const dsig_slhdsa_params *p, const uint8_t *pk_seed,
                          const uint8_t *sk_seed);
void dsig_slhdsa_ctx_wipe(dsig_slhdsa_ctx *c);

/* ---- ADRS (FIPS 205 §4.2–4.3): 32 bytes, big-endian words ------------------------------------ */

/* Store a big-endian 32-bit word at byte offset off. */
static inline void slh_adrs_word(uint8_t a[32], unsigned off, uint32_t v)
{
    a[off] = (uint8_t)(v >> 24);
    a[off + 1] = (uint8_t)(v >> 16);
    a[off + 2] = (uint8_t)(v >> 8);
    a[off + 3] = (uint8_t)v;
}
/* @spec FIPS 205 §4.3 setLayerAddress. */
static inline void slh_set_layer(uint8_t a[32], uint32_t l) { slh_adrs_word(a, 0, l); }
/* @spec FIPS 205 §4.3 setTreeAddress (12 bytes; the top 4 are always 0 since h - h' <= 64). */
static inline void slh_set_tree(uint8_t a[32], uint64_t t)
{
    slh_adrs_word(a, 4, 0);
    slh_adrs_word(a, 8, (uint32_t)(t >> 32));
    slh_adrs_word(a, 12, (uint32_t)t);
}
/* @spec FIPS 205 §4.3 setTypeAndClear: type word, then the last three words zeroed. */
static inline void slh_set_type(uint8_t a[32], uint32_t type)
{
    slh_adrs_word(a, 16, type);
    memset(a + 20, 0, 12);
}
/* @spec FIPS 205 §4.3 setKeyPairAddress. */
static inline void slh_set_keypair(uint8_t a[32], uint32_t i) { slh_adrs_word(a, 20, i); }
/* @spec FIPS 205 §4.3 setChainAddress / setTreeHeight (the same word). */
static inline void slh_set_chain(uint8_t a[32], uint32_t i) { slh_adrs_word(a, 24, i); }
static inline void slh_set_height(uint8_t a[32], uint32_t z) { slh_adrs_word(a, 24, z); }
/* @spec FIPS 205 §4.3 setHashAddress / setTreeIndex (the same word). */
static inline void slh_set_hash(uint8_t a[32], uint32_t i) { slh_adrs_word(a, 28, i); }
static inline void slh_set_index(uint8_t a[32], uint32_t i) { slh_adrs_word(a, 28, i); }

/* @spec FIPS 205 §11.2 ADRSc: layer (1 byte) ‖ tree (8) ‖ type (1) ‖ last three words (12). */
static inline void slh_adrs_compress(uint8_t out[22], const uint8_t a[32])
{
    out[0] = a[3];
    memcpy(out + 1, a + 8, 8);
    out[9] = a[19];
    memcpy(out + 10, a + 20, 12);
}

#endif
