/*
 * src/hybrid/hb_internal.h — helpers shared by the scheme's files (chain.c, wots.c, hors.c, merkle.c,
 * onetime.c, sigformat.c). Not part of the runtime-facing API (scheme.h).
 */
#ifndef DSIG_HYBRID_HB_INTERNAL_H
#define DSIG_HYBRID_HB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hybrid/scheme.h"
#include "core/bytes.h"

/* Signature field offsets (docs/dsig-format.md §4). */
#define HB_OFF_VERSION 0
#define HB_OFF_PARAM 1
#define HB_OFF_SEQ 5
#define HB_OFF_INDEX 13
#define HB_OFF_PKSEED 15
#define HB_OFF_NONCE 31
#define HB_OFF_VALUES 47

/* Chain-hash domain bytes (byte 16 of the F block). */
#define HB_DOM_WOTS 0x01u
#define HB_DOM_HORS 0x02u

/* Offset of x inside the 64-byte F block: pk_seed 16 ‖ dom 1 ‖ step 1 ‖ chain u16 2. */
#define HB_F_XOFF 20

/* Largest W-OTS+ chain count (w = 2: 128 + 8). */
#define HB_MAX_WOTS_CHAINS 136u

/* BLAKE3 keys derived once from context strings (docs §3): keyed-hash mode per purpose. */
enum { HB_K_CHAIN, HB_K_LEAF, HB_K_NODE, HB_K_MSG, HB_K_EXPAND, HB_K_LANE, HB_K_COUNT };
const uint8_t *hb_key(int which);


/* Copy one chain value / slot of n bytes. Every parameter set has n = 18 or 16: fixed-size moves,
 * because a variable-length memcpy compiles to `rep movs`, whose start-up cost dominates such copies. */
static inline void hb_cpy_val(uint8_t *d, const uint8_t *s, size_t n)
{
    if (n == DSIG_HB_WOTS_N) {
        memcpy(d, s, 16);
        memcpy(d + 16, s + 16, 2);
    } else if (n == DSIG_HB_HORS_N) {
        memcpy(d, s, 16);
    } else {
        memcpy(d, s, n);
    }
}

/* `bits` (≤ 16) bits of a little-endian bit string starting at bit `pos`; buf must have 2 spare bytes. */
static inline uint32_t hb_bits(const uint8_t *buf, size_t pos, unsigned bits)
{
    size_t b = pos >> 3;
    uint32_t v = (uint32_t)buf[b] | ((uint32_t)buf[b + 1] << 8) | ((uint32_t)buf[b + 2] << 16);
    return (v >> (pos & 7)) & ((1u << bits) - 1u);
}

/* ---- chain.c ---- */

/* The tweakable hash F on one value: out = F(x, pk_seed, dom, chain, step) (n bytes). */
void hb_chain_f(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, uint32_t chain,
                uint32_t step, const uint8_t *x, uint8_t *out);

/*
 * Walk `cnt` chains in lock-step on the widest lanes the hash offers. Chain c (0-based in this call)
 * is chain number ids[c], holds value vals[c·n] at level start[c] and is advanced to level stop[c]
 * (both below p->levels; nothing to do when start[c] ≥ stop[c]); vals is updated in place. When table != NULL each intermediate level is also stored at
 * table[(ids[c]·levels + level)·n] (key generation).
 */
void hb_chains_walk(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, const uint16_t *ids,
                    const uint8_t *start, const uint8_t *stop, uint8_t *vals, size_t cnt, uint8_t *table);

/*
 * Verification's walk with the ends written elsewhere: chain c starts from vals[c·n] (not changed) and
 * its end (the start value when start[c] ≥ stop[c]) goes to ends in chain order, `per` values of n
 * bytes in a row, each group `stride` bytes after the previous one (W-OTS+: straight into the leaf
 * hash's lane messages). ids NULL: chain c is chain number c; stop NULL: every chain goes to the top
 * level (levels − 1). cnt ≤ 256; no key table.
 */
typedef struct hb_walk_out {
    unsigned per;  /* values per group */
    size_t stride; /* bytes from one group's first value to the next one's */
} hb_walk_out;
void hb_chains_walk_to(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, const uint16_t *ids,
                       const uint8_t *start, const uint8_t *stop, const uint8_t *vals, uint8_t *ends,
                       const hb_walk_out *lay, size_t cnt);
/* The back-ends of hb_chains_walk_to, same contract: the generic walker (any parameter set) and, on
 * x86 only, the register-resident VAES-512 one (chain_vaes512.c: Haraka chains with n = 18, on a CPU
 * where hb_chains_walk_native(p) says 1, which is where hb_chains_walk_to uses it). Tests compare them. */
void hb_chains_walk_to_generic(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom,
                               const uint16_t *ids, const uint8_t *start, const uint8_t *stop, const uint8_t *vals,
                               uint8_t *ends, const hb_walk_out *lay, size_t cnt);
int hb_chains_walk_native(const dsig_hb_params *p);

/* ---- walk_plan.c: the schedule of both walkers ---- */

/* Chains one walk call handles at once (HORS key generation passes 256, a HORS leaf at most 255). */
#define HB_WALK_MAX 256u

typedef struct hb_walk_sched {
    uint8_t steps[HB_WALK_MAX];  /* steps of chain c: max(stop[c] − start[c], 0) */
    uint16_t order[HB_WALK_MAX]; /* chain at position i, most steps first */
    uint16_t at[HB_WALK_MAX];    /* position of chain c (the inverse of order) */
    uint8_t *dst[HB_WALK_MAX];   /* where chain c's end goes */
    uint16_t ge[17];             /* ge[s]: chains with at least s steps (ge[levels] = 0) */
    unsigned most;               /* largest step count (0: nothing to hash) */
} hb_walk_sched;

/* The schedule of `cnt` ≤ HB_WALK_MAX chains from levels start[c] to stop[c] (stop NULL: to levels − 1;
 * levels ≤ 16), whose ends (n bytes each) go to `ends` in chain order under layout `lay`. The chains
 * needing a step in round k are order[0..ge[k]). */
void hb_walk_plan(const uint8_t *start, const uint8_t *stop, unsigned levels, size_t cnt, uint8_t *ends,
                  const hb_walk_out *lay, size_t n, hb_walk_sched *ws);
/* hb_walk_plan's steps, order, at, ge and most by the portable sort (tests compare the two). */
void hb_walk_plan_scalar(const uint8_t *start, const uint8_t *stop, unsigned levels, size_t cnt, hb_walk_sched *ws);
void hb_chains_walk_to_vaes512(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom,
                               const uint16_t *ids, const uint8_t *start, const uint8_t *stop, const uint8_t *vals,
                               uint8_t *ends, const hb_walk_out *lay, size_t cnt);

/* ---- wots.c: the leaf hash shared by W-OTS+ and HORS ---- */

/* Lane-parallel leaf (docs §5.3): the L top values are split into `lanes` lanes of `per` values each
 * (W-OTS+: 8 lanes of ⌈L/8⌉ chain ends; HORS: max(8, t/32) lanes of t/lanes slots, at most 32), each
 * lane message = pk_seed ‖ ots u8 ‖ n u8 ‖ lane u16 ‖ its values (positions ≥ L are n zero bytes) ‖
 * zeros up to a multiple of 64 bytes (whole BLAKE3 blocks: same compression count, and the SIMD
 * multi-message path needs no partial block) is hashed under K_lane (8 lanes at a time), then
 * leaf = BLAKE3-keyed(K_leaf, lane digests). */
#define HB_LANE_PREFIX 20u
#define HB_LANE_MAX 576u /* largest lane message: 64·⌈(20 + 32 HORS slots · 16)/64⌉ */
#define HB_MAX_LANES 128u                   /* HORS t = 4096 */
static inline unsigned hb_leaf_lanes(const dsig_hb_params *p)
{
    return p->ots == DSIG_HB_OTS_WOTS || p->chains <= 256 ? 8u : p->chains / 32u;
}
static inline unsigned hb_lane_values(const dsig_hb_params *p)
{
    unsigned m = hb_leaf_lanes(p);
    return (p->chains + m - 1u) / m;
}
/* Bytes of one lane message (a multiple of 64). */
static inline size_t hb_lane_bytes(const dsig_hb_params *p)
{
    return (HB_LANE_PREFIX + (size_t)hb_lane_values(p) * p->n + 63u) & ~(size_t)63u;
}
/*
 * Leaf from the top values: value i (i < L) is tops[i·stride .. +n], except that the ovr_cnt values
 * listed in ovr_idx (strictly increasing) are taken from ovr_vals[j·n] instead (HORS verification:
 * recomputed public slots over the revealed secrets).
 */
void hb_leaf_hash(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *tops, size_t stride,
                  const uint16_t *ovr_idx, const uint8_t *ovr_vals, size_t ovr_cnt, uint8_t leaf[32]);

/* ---- wots.c / hors.c ---- */

/* Message digest D = BLAKE3-keyed(K_msg, pk_seed ‖ nonce ‖ msg), p->digest_bytes bytes + 4 zero bytes. */
void hb_message_digest(const dsig_hb_params *p, const uint8_t *pk_seed, const uint8_t *nonce,
                       const uint8_t *msg, size_t len, uint8_t *out);

/* W-OTS+ digits (len1 message + len2 checksum) of a digest. */
void hb_wots_digits(const dsig_hb_params *p, const uint8_t *digest, uint8_t *digits);
/* Fill a key table (chain-major, w levels) from level-0 secrets in table[(i·w)·n]. */
void hb_wots_keygen(const dsig_hb_params *p, const uint8_t pk_seed[16], uint8_t *table);
/* Write the chain values of a signature from the table. */
void hb_wots_sign(const dsig_hb_params *p, const uint8_t *table, const uint8_t *digest, uint8_t *values);
/* Leaf from a signature's values. */
void hb_wots_leaf(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *values,
                  const uint8_t *digest, uint8_t leaf[32]);
/* Leaf from a key table (top level). */
void hb_wots_leaf_from_table(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *table,
                             uint8_t leaf[32]);

void hb_hors_keygen(const dsig_hb_params *p, const uint8_t pk_seed[16], uint8_t *table);
void hb_hors_sign(const dsig_hb_params *p, const uint8_t *table, const uint8_t *digest, uint8_t *values);
void hb_hors_leaf(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *values,
                  const uint8_t *digest, uint8_t leaf[32]);
void hb_hors_leaf_from_table(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *table,
                             uint8_t leaf[32]);

/* ---- merkle.c ---- */

/* Node hash BLAKE3-keyed(K_node, left ‖ right). */
void hb_node(const uint8_t left[32], const uint8_t right[32], uint8_t out[32]);
/* Fill levels 1.. of a level-major tree whose first p->batch nodes are the leaves. */
void hb_tree_build(const dsig_hb_params *p, uint8_t (*nodes)[32]);
/* Proof of leaf `index`: log_batch sibling nodes, leaf level first. */
void hb_tree_proof(const dsig_hb_params *p, const uint8_t (*nodes)[32], uint32_t index, uint8_t *proof);

#endif
