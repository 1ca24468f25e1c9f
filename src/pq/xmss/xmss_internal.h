/*
 * src/pq/xmss/xmss_internal.h — private to the files of src/pq/xmss: the pieces the XMSS files share. The
 * tweakable hashes (xmss_hash.c), WOTS+ (xmss_wots.c), L-trees and leaves (xmss_tree.c), the traversal
 * that keeps authentication paths and emits them (xmss_traversal.c), signing (xmss_sign.c) and
 * verification (xmss_verify.c) see each other only through this header and xmss.h.
 */
#ifndef DSIG_PQ_XMSS_INTERNAL_H
#define DSIG_PQ_XMSS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/bytes.h"
#include "pq/xmss/xmss.h"

/* Domain-separation values of the toByte(x, padlen) prefix (RFC 8391 §5.1, SP 800-208 §5). */
enum { PAD_F = 0, PAD_H = 1, PAD_HMSG = 2, PAD_PRF = 3, PAD_PRF_KEYGEN = 4 };

#define SCRATCH 256 /* padlen + n + 2n at most (64 + 64 + 128) */

/* @spec RFC 8391 §2.4 toByte(x, y): x big-endian in y bytes. */
static inline void to_byte(uint8_t *out, uint64_t x, size_t y)
{
    for (size_t i = 0; i < y; i++)
        out[y - 1 - i] = i < 8 ? (uint8_t)(x >> (8 * i)) : 0;
}

/* @spec RFC 8391 §2.5 ADRS: eight 32-bit words, big-endian. */
static inline void adrs_bytes(uint8_t out[32], const uint32_t a[8])
{
    for (int i = 0; i < 8; i++)
        dsig_store_be32(out + 4 * i, a[i]);
}

/* An address with layer and tree set (§2.5 words 0-2) and a type (word 3); the rest zero. */
static inline void adrs_init(uint32_t a[8], unsigned layer, uint64_t tree, uint32_t type)
{
    memset(a, 0, 8 * sizeof a[0]);
    a[0] = layer;
    a[1] = (uint32_t)(tree >> 32);
    a[2] = (uint32_t)tree;
    a[3] = type;
}

/* ---- tweakable hashes (xmss_hash.c); scr: SCRATCH bytes of the caller's, wiped by it ---- */

/* @spec RFC 8391 §5.1 / SP 800-208 §5: Hash(toByte(pad, padlen) ‖ KEY ‖ M) truncated to n. */
void dsig_xmss_core_hash(const dsig_xmss_hash *c, unsigned pad, const uint8_t *key, const uint8_t *in,
                         size_t inlen, uint8_t *out, uint8_t *scr);
/* @spec RFC 8391 §5.1 PRF(PUB_SEED, ADRS). */
void dsig_xmss_prf_adrs(const dsig_xmss_hash *c, uint8_t *out, const uint32_t a[8], uint8_t *scr);
/* @spec SP 800-208 §5.1/§5.3 PRF_keygen(SK_SEED, PUB_SEED ‖ ADRS). */
void dsig_xmss_prf_keygen(const dsig_xmss_hash *c, uint8_t *out, const uint32_t a[8], uint8_t *scr);
/* @spec RFC 8391 §5.1 F(KEY, M), |M| = n, and H(KEY, M), |M| = 2n. */
void dsig_xmss_hash_f(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *key, const uint8_t *m,
                      uint8_t *scr);
void dsig_xmss_hash_h(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *key, const uint8_t *m,
                      uint8_t *scr);

/* ---- WOTS+ (xmss_wots.c); a: OTS address (type 0, OTS index set) ---- */

/* @spec RFC 8391 §3.1.4 WOTS_genPK into pk (len n-byte chain ends). */
void dsig_xmss_wots_pkgen(const dsig_xmss_hash *c, uint8_t *pk, uint32_t a[8], uint8_t *scr);
/* @spec RFC 8391 §3.1.5 WOTS_sign of an n-byte message. */
void dsig_xmss_wots_sign(const dsig_xmss_hash *c, uint8_t *sig, const uint8_t *msg, uint32_t a[8],
                         uint8_t *scr);
/* @spec RFC 8391 §3.1.6 WOTS_pkFromSig. */
void dsig_xmss_wots_pk_from_sig(const dsig_xmss_hash *c, uint8_t *pk, const uint8_t *sig,
                                const uint8_t *msg, uint32_t a[8], uint8_t *scr);

/* ---- trees (xmss_tree.c) ---- */

/* @spec RFC 8391 §4.1.4 RAND_HASH(LEFT, RIGHT, SEED, ADRS); out may alias left or right. */
void dsig_xmss_rand_hash(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *left, const uint8_t *right,
                         uint32_t a[8], uint8_t *scr);
/* @spec RFC 8391 §4.1.5 ltree: a WOTS+ public key (destroyed) into one node. a: type 1. */
void dsig_xmss_ltree(const dsig_xmss_hash *c, uint8_t *out, uint8_t *pk, uint32_t a[8], uint8_t *scr);
/* One leaf of tree `tree` at `layer`: ltree(WOTS_genPK) (RFC 8391 §4.1.6 loop body). */
void dsig_xmss_gen_leaf(const dsig_xmss_hash *c, uint8_t *out, unsigned layer, uint64_t tree, uint32_t idx);

#endif
