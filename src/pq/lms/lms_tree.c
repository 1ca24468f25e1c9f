/*
 * src/pq/lms/lms_tree.c — LMS trees (RFC 8554 §5): node hashes, the working key built leaf by leaf (whole
 * up to height 20, above that top levels plus one recomputed bottom subtree), authentication paths and
 * signing one leaf.
 */
#include <string.h>

#include "core/bytes.h"
#include "core/internal.h"
#include "dsig/mem.h"
#include "hash/keccak.h"
#include "hash/sha256.h"
#include "pq/lms/lms_internal.h"

/* A short one-shot hash (tree nodes): n bytes of SHA-256 or SHAKE256 over in. */
void dsig_lms_hash1(int shake, uint8_t *out, size_t n, const uint8_t *in, size_t len)
{
    if (shake) {
        dsig_shake256(out, n, in, len);
    } else {
        uint8_t full[32];
        dsig_sha256(full, in, len);
        memcpy(out, full, n);
    }
}

/* @spec RFC 8554 §5.3 leaf T[r] = H(I ‖ u32str(r) ‖ u16str(D_LEAF) ‖ K). */
void dsig_lms_leaf_node(const dsig_lms_params *lp, const uint8_t *I, uint32_t r, const uint8_t *K,
                        uint8_t *out)
{
    uint8_t b[22 + DSIG_LMS_N_MAX];
    memcpy(b, I, 16);
    dsig_store_be32(b + 16, r);
    dsig_store_be16(b + 20, DSIG_LMS_D_LEAF);
    memcpy(b + 22, K, lp->m);
    dsig_lms_hash1(lp->shake, out, lp->m, b, 22 + lp->m);
}

/* @spec RFC 8554 §5.3 interior T[r] = H(I ‖ u32str(r) ‖ u16str(D_INTR) ‖ left ‖ right). */
void dsig_lms_inner_node(const dsig_lms_params *lp, const uint8_t *I, uint32_t r, const uint8_t *left,
                         const uint8_t *right, uint8_t *out)
{
    uint8_t b[22 + 2 * DSIG_LMS_N_MAX];
    memcpy(b, I, 16);
    dsig_store_be32(b + 16, r);
    dsig_store_be16(b + 20, DSIG_LMS_D_INTR);
    memcpy(b + 22, left, lp->m);
    memcpy(b + 22 + lp->m, right, lp->m);
    dsig_lms_hash1(lp->shake, out, lp->m, b, 22 + 2 * (size_t)lp->m);
}

/* Tree-hash of the subtree of height c whose leaves are s 2^c .. (s+1) 2^c - 1, into out (local
 * heap order: out[l m] for l in 1 .. 2^(c+1)-1, l = 1 its root). */
static void build_subtree(const dsig_lms_key *k, unsigned c, uint32_t s, uint8_t *out)
{
    const dsig_lms_params *lp = k->lp;
    const unsigned h = lp->h, m = lp->m;
    uint8_t K[DSIG_LMS_N_MAX];
    for (uint32_t l = 0; l < (1u << c); l++) {
        uint32_t q = (s << c) + l;
        dsig_lmots_pub_K(k->op, k->I, q, k->seed, K);
        dsig_lms_leaf_node(lp, k->I, (1u << h) + q, K, out + (size_t)((1u << c) + l) * m);
    }
    for (uint32_t l = (1u << c) - 1; l >= 1; l--) {
        unsigned d = 31 - (unsigned)__builtin_clz(l); /* depth in the subtree */
        unsigned kh = c - d;                           /* height in the whole tree */
        uint32_t r = (1u << (h - kh)) + (s << (c - kh)) + (l - (1u << d));
        dsig_lms_inner_node(lp, k->I, r, out + (size_t)2 * l * m, out + (size_t)(2 * l + 1) * m,
                   out + (size_t)l * m);
    }
}

/* Trees up to this height are kept whole (2^21 nodes, 64 MiB at m = 32); above it the bottom
 * levels are recomputed per subtree of 2^(h - 20) leaves. */
#define FULL_TREE_MAX_H 20

/* Start building the key of (SEED, I) leaf by leaf: parameters, secrets and the public key's fixed
 * part set, no leaf computed yet. The node buffers are reused when k already holds a tree of the
 * same set (the next HSS child tree recycles the retired one: no allocation while signing); k must be
 * zeroed or a previous key. */
int dsig_lms_key_begin(dsig_lms_key *k, const dsig_lms_params *lp, const dsig_lmots_params *op,
                       const uint8_t *I, const uint8_t *seed)
{
    if (!dsig_lms_pair_ok(lp, op)) {
        dsig_lms_key_clear(k);
        return dsig_fail(DSIG_E_ARG, "LMS: %s cannot be paired with %s (SP 800-208 needs the same "
                                     "hash and output length)", lp ? lp->name : "?", op ? op->name : "?");
    }
    if (k->nodes && k->lp != lp)
        dsig_lms_key_clear(k);
    k->lp = lp;
    k->op = op;
    memcpy(k->I, I, DSIG_LMS_I_LEN);
    memcpy(k->seed, seed, lp->m);
    k->cut = lp->h > FULL_TREE_MAX_H ? lp->h - FULL_TREE_MAX_H : 0;
    k->sub_idx = -1;
    k->done = 0;
    const unsigned m = lp->m, top = lp->h - k->cut;
    if (!k->nodes)
        k->nodes = dsig_malloc(((size_t)2 << top) * m);
    if (k->cut && !k->sub)
        k->sub = dsig_malloc(((size_t)2 << k->cut) * m);
    if (!k->nodes || (k->cut && !k->sub)) {
        dsig_lms_key_clear(k);
        return dsig_fail(DSIG_E_NOMEM, "LMS: out of memory for the %s tree", lp->name);
    }
    memset(k->pub, 0, sizeof k->pub);
    dsig_store_be32(k->pub, lp->type);
    dsig_store_be32(k->pub + 4, op->type);
    memcpy(k->pub + 8, I, DSIG_LMS_I_LEN);
    return DSIG_OK;
}

/*
 * @spec RFC 8554 §5.3 (tree-hash order): compute leaf k->done and every interior node it completes
 * (a node is complete when its right child is), so 2^h calls build the tree — the same node values as
 * any other order. Below `cut` the leaves go into the subtree buffer (local heap order, as
 * build_subtree); a completed subtree root is copied into the stored top levels. The last call
 * writes T[1] into the public key.
 */
void dsig_lms_key_step(dsig_lms_key *k)
{
    const dsig_lms_params *lp = k->lp;
    const unsigned h = lp->h, m = lp->m, cut = k->cut, c = cut ? cut : h;
    const uint32_t q = k->done++;
    const uint32_t s = cut ? q >> cut : 0, lq = q & ((1u << c) - 1);
    uint8_t *buf = cut ? k->sub : k->nodes, K[DSIG_LMS_N_MAX];
    if (cut && lq == 0)
        k->sub_idx = -1; /* the buffer is being refilled */
    dsig_lmots_pub_K(k->op, k->I, q, k->seed, K);
    uint32_t l = (1u << c) + lq;
    dsig_lms_leaf_node(lp, k->I, (1u << h) + q, K, buf + (size_t)l * m);
    while (l > 1 && (l & 1)) {
        l >>= 1;
        unsigned d = 31 - (unsigned)__builtin_clz(l); /* depth in the subtree */
        unsigned kh = c - d;                           /* height in the whole tree */
        uint32_t r = (1u << (h - kh)) + (s << (c - kh)) + (l - (1u << d));
        dsig_lms_inner_node(lp, k->I, r, buf + (size_t)2 * l * m, buf + (size_t)(2 * l + 1) * m,
                   buf + (size_t)l * m);
    }
    if (cut && l == 1) {
        uint32_t r = (1u << (h - cut)) + s;
        memcpy(k->nodes + (size_t)r * m, k->sub + m, m);
        k->sub_idx = s;
        while (r > 1 && (r & 1)) {
            r >>= 1;
            dsig_lms_inner_node(lp, k->I, r, k->nodes + (size_t)2 * r * m, k->nodes + (size_t)(2 * r + 1) * m,
                       k->nodes + (size_t)r * m);
        }
    }
    if (k->done == 1u << h)
        memcpy(k->pub + 24, k->nodes + m, m);
}

int dsig_lms_key_build(dsig_lms_key *k, const dsig_lms_params *lp, const dsig_lmots_params *op,
                       const uint8_t *I, const uint8_t *seed)
{
    memset(k, 0, sizeof *k);
    int rc = dsig_lms_key_begin(k, lp, op, I, seed);
    if (rc)
        return rc;
    while (!dsig_lms_key_complete(k))
        dsig_lms_key_step(k);
    return DSIG_OK;
}

void dsig_lms_key_clear(dsig_lms_key *k)
{
    if (!k)
        return;
    dsig_xfree(k->nodes, 0); /* public values */
    dsig_xfree(k->sub, 0);
    dsig_memzero(k, sizeof *k);
}

int dsig_lms_keygen_pub(const dsig_lms_params *lp, const dsig_lmots_params *op, const uint8_t *I,
                        const uint8_t *seed, uint8_t *pub)
{
    dsig_lms_key k;
    int rc = dsig_lms_key_build(&k, lp, op, I, seed);
    if (rc == DSIG_OK)
        memcpy(pub, k.pub, dsig_lms_key_pub_len(&k));
    dsig_lms_key_clear(&k);
    return rc;
}

/* The authentication path of leaf q (RFC 8554 §5.4.1 path[i] = sibling at height i) into path. */
static void auth_path(dsig_lms_key *k, uint32_t q, uint8_t *path)
{
    const unsigned h = k->lp->h, m = k->lp->m, cut = k->cut;
    if (cut && k->sub_idx != (int64_t)(q >> cut)) {
        build_subtree(k, cut, q >> cut, k->sub);
        k->sub_idx = q >> cut;
    }
    for (unsigned kh = 0; kh < h; kh++) {
        uint32_t r = (((1u << h) + q) >> kh) ^ 1u;
        const uint8_t *src;
        if (kh < cut) {
            uint32_t s = q >> cut;
            uint32_t l = r - (1u << (h - kh)) - (s << (cut - kh)) + (1u << (cut - kh));
            src = k->sub + (size_t)l * m;
        } else {
            src = k->nodes + (size_t)r * m;
        }
        memcpy(path + (size_t)kh * m, src, m);
    }
}

void dsig_lms_derive_c(const dsig_lms_key *k, uint32_t q, uint8_t *c)
{
    memcpy(c, k->seed, k->op->n);
    dsig_lms_chain(k->op->shake, k->op->n, k->I, q, 0xfffd, c, 0xff, 0x100);
}

size_t dsig_lms_sign_frame(dsig_lms_key *k, uint32_t q, const uint8_t *c, uint8_t *sig)
{
    const dsig_lmots_params *op = k->op;
    dsig_store_be32(sig, q);
    dsig_store_be32(sig + 4, op->type);
    memcpy(sig + 8, c, op->n);
    size_t off = 8 + op->n + (size_t)op->p * op->n;
    dsig_store_be32(sig + off, k->lp->type);
    auth_path(k, q, sig + off + 4);
    return 8 + op->n;
}

int dsig_lms_sign(dsig_lms_key *k, uint32_t q, const uint8_t *c, const uint8_t *msg, size_t len,
                  uint8_t *sig)
{
    if (q >> k->lp->h)
        return dsig_fail(DSIG_E_EXHAUSTED, "LMS: leaf %u is beyond the %u leaves of %s", q,
                         1u << k->lp->h, k->lp->name);
    uint8_t Q[DSIG_LMS_N_MAX];
    dsig_lms_hash h;
    size_t y = dsig_lms_sign_frame(k, q, c, sig);
    dsig_lms_mesg_init(&h, k->op->shake, k->I, q, c, k->op->n);
    dsig_lms_hash_update(&h, msg, len);
    dsig_lms_hash_final(&h, Q, k->op->n);
    dsig_lmots_sign_q(k->op, k->I, q, k->seed, Q, sig + y);
    return DSIG_OK;
}
