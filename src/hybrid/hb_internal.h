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
enum { HB_K_CHAIN, HB_K_LEAF, HB_K_NODE, HB_K_MSG, HB_K_EXPAND, HB_K_COUNT };
const uint8_t *hb_key(int which);

/* Little-endian stores / loads. */
static inline void hb_le16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void hb_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void hb_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t hb_ld16(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }
static inline uint32_t hb_ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t hb_ld64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
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
 * is chain number ids[c], holds value vals[c·n] at level start[c] and is advanced to level stop[c];
 * vals is updated in place. When table != NULL each intermediate level is also stored at
 * table[(ids[c]·levels + level)·n] (key generation).
 */
void hb_chains_walk(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, const uint16_t *ids,
                    const uint8_t *start, const uint8_t *stop, uint8_t *vals, size_t cnt, uint8_t *table);

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
