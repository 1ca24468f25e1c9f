/*
 * src/pq/lms/lms.c — LM-OTS, LMS and HSS (RFC 8554; SP 800-208 hash modes): hashing, key trees,
 * signing with the working key in memory, streaming verification. See lms.h for the interface.
 *
 * Every hash of the one-time scheme has the shape H(I ‖ u32 q ‖ u16 i ‖ u8 j ‖ X) with |X| = n:
 * the chain step (§4.5, j = chain position), the Appendix A key derivation (j = 0xff, X = SEED) and the
 * cisco/hash-sigs derivations (i = 0xfffd/0xfffe/0xffff, j = 0xff). That is 23 + n <= 55 bytes: one
 * SHA-256 block (padding fixed once per chain) or one Keccak permutation.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "dsig/mem.h"
#include "hash/keccak.h"
#include "hash/sha256.h"
#include "hash/sha256_impl.h"
#include "pq/lms/lms.h"
#include "core/bytes.h"

/* ---- hashes --------------------------------------------------------------------------------- */

void dsig_lms_hash_init(dsig_lms_hash *h, int shake)
{
    h->shake = shake;
    if (shake) {
        dsig_shake256_init(&h->u.k);
    } else {
        memcpy(h->u.sha.s, dsig_sha256_iv, sizeof h->u.sha.s);
        h->u.sha.total = 0;
    }
}

void dsig_lms_hash_update(dsig_lms_hash *h, const void *in, size_t len)
{
    const uint8_t *p = in;
    if (h->shake) {
        dsig_keccak_absorb(&h->u.k, p, len);
        return;
    }
    size_t used = (size_t)(h->u.sha.total & 63);
    h->u.sha.total += len;
    if (used) {
        size_t take = 64 - used < len ? 64 - used : len;
        memcpy(h->u.sha.buf + used, p, take);
        p += take;
        len -= take;
        if (used + take < 64)
            return;
        dsig_sha256_compress(h->u.sha.s, h->u.sha.buf, 1);
    }
    if (len >= 64) { /* whole blocks straight from the input: no copy on the payload path */
        dsig_sha256_compress(h->u.sha.s, p, len / 64);
        p += len & ~(size_t)63;
        len &= 63;
    }
    memcpy(h->u.sha.buf, p, len);
}

/* @spec FIPS 180-4 §5.1.1 padding; SP 800-208 §4.2 SHA-256/192 = the first 24 bytes. */
void dsig_lms_hash_final(dsig_lms_hash *h, uint8_t *out, size_t n)
{
    if (h->shake) {
        dsig_shake_finalize(&h->u.k);
        dsig_keccak_squeeze(&h->u.k, out, n);
        dsig_keccak_wipe(&h->u.k);
        return;
    }
    size_t used = (size_t)(h->u.sha.total & 63);
    uint8_t *b = h->u.sha.buf;
    b[used++] = 0x80;
    if (used > 56) {
        memset(b + used, 0, 64 - used);
        dsig_sha256_compress(h->u.sha.s, b, 1);
        used = 0;
    }
    memset(b + used, 0, 56 - used);
    uint64_t bits = h->u.sha.total * 8;
    dsig_store_be32(b + 56, (uint32_t)(bits >> 32));
    dsig_store_be32(b + 60, (uint32_t)bits);
    dsig_sha256_compress(h->u.sha.s, b, 1);
    uint8_t full[32];
    dsig_sha256_store(full, h->u.sha.s);
    memcpy(out, full, n);
    dsig_memzero(h, sizeof *h);
}

/* A short one-shot hash (tree nodes): n bytes of SHA-256 or SHAKE256 over in. */
static void hash1(int shake, uint8_t *out, size_t n, const uint8_t *in, size_t len)
{
    if (shake) {
        dsig_shake256(out, n, in, len);
    } else {
        uint8_t full[32];
        dsig_sha256(full, in, len);
        memcpy(out, full, n);
    }
}

/*
 * @spec RFC 8554 §4.5 Algorithm 3 step "tmp = H(I ‖ u32str(q) ‖ u16str(i) ‖ u8str(j) ‖ tmp)" for
 * j = from .. to-1 (chain positions), in place on tmp (n bytes). With j = 0xff and to = from + 1 it is
 * the Appendix A derivation H(I ‖ q ‖ i ‖ 0xff ‖ SEED). SHA-256: the block and its padding are laid
 * out once, each step is one compression writing its output back into the block.
 */
static void chain(int shake, unsigned n, const uint8_t *I, uint32_t q, uint32_t i, uint8_t *tmp,
                  unsigned from, unsigned to)
{
    if (from >= to)
        return;
    uint8_t blk[64];
    const size_t len = 23 + n;
    memcpy(blk, I, 16);
    dsig_store_be32(blk + 16, q);
    dsig_store_be16(blk + 20, i);
    memcpy(blk + 23, tmp, n);
    if (!shake) {
        blk[len] = 0x80;
        memset(blk + len + 1, 0, 56 - len - 1);
        dsig_store_be32(blk + 56, 0);
        dsig_store_be32(blk + 60, (uint32_t)(len * 8));
        for (unsigned j = from; j < to; j++) {
            uint32_t st[8];
            blk[22] = (uint8_t)j;
            memcpy(st, dsig_sha256_iv, sizeof st);
            dsig_sha256_compress(st, blk, 1);
            for (unsigned w = 0; w < n / 4; w++)
                dsig_store_be32(blk + 23 + 4 * w, st[w]);
        }
    } else {
        uint8_t o[DSIG_LMS_N_MAX];
        for (unsigned j = from; j < to; j++) {
            blk[22] = (uint8_t)j;
            dsig_shake256(o, n, blk, len);
            memcpy(blk + 23, o, n);
        }
        dsig_memzero(o, sizeof o);
    }
    memcpy(tmp, blk + 23, n);
    dsig_memzero(blk, sizeof blk);
}

/* Four full chains (0 .. 2^w-1) at once on the 4-way Keccak (SHAKE key generation): x[k] in place. */
static void chain_x4_full(unsigned n, unsigned w, const uint8_t *I, uint32_t q, uint32_t i0,
                          uint8_t *x[4])
{
    uint8_t blk[4][56], out[4][DSIG_SHAKE256_RATE];
    const size_t len = 23 + n;
    for (unsigned k = 0; k < 4; k++) {
        memcpy(blk[k], I, 16);
        dsig_store_be32(blk[k] + 16, q);
        dsig_store_be16(blk[k] + 20, i0 + k);
        memcpy(blk[k] + 23, x[k], n);
    }
    const uint8_t *in[4] = {blk[0], blk[1], blk[2], blk[3]};
    uint8_t *const o[4] = {out[0], out[1], out[2], out[3]};
    dsig_keccak_x4 ks;
    for (unsigned j = 0; j < (1u << w) - 1; j++) {
        for (unsigned k = 0; k < 4; k++)
            blk[k][22] = (uint8_t)j;
        dsig_keccak_x4_absorb_once(&ks, DSIG_SHAKE256_RATE, DSIG_KECCAK_DS_SHAKE, in, len);
        dsig_keccak_x4_squeezeblocks(&ks, o, 1);
        for (unsigned k = 0; k < 4; k++)
            memcpy(blk[k] + 23, out[k], n);
    }
    for (unsigned k = 0; k < 4; k++)
        memcpy(x[k], blk[k] + 23, n);
    dsig_keccak_x4_wipe(&ks);
    dsig_memzero(blk, sizeof blk);
    dsig_memzero(out, sizeof out);
}

/* ---- LM-OTS --------------------------------------------------------------------------------- */

/* @spec RFC 8554 §3.1.3 coef(S, i, w). */
static inline unsigned coef(const uint8_t *S, unsigned i, unsigned w)
{
    return ((1u << w) - 1) & (S[i * w / 8] >> (8 - (w * (i % (8 / w)) + w)));
}

/* @spec RFC 8554 §4.4 Cksm(S) appended: the p digits a_i of Q ‖ Cksm(Q). */
static void digits(const dsig_lmots_params *op, const uint8_t *Q, uint8_t *a)
{
    uint8_t qc[DSIG_LMS_N_MAX + 2];
    const unsigned n = op->n, w = op->w, max = (1u << w) - 1;
    unsigned sum = 0;
    for (unsigned i = 0; i < n * 8 / w; i++)
        sum += max - coef(Q, i, w);
    sum <<= op->ls;
    memcpy(qc, Q, n);
    dsig_store_be16(qc + n, sum);
    for (unsigned i = 0; i < op->p; i++)
        a[i] = (uint8_t)coef(qc, i, w);
}

/* @spec RFC 8554 Appendix A x_q[i] then §4.3 Algorithm 1 chain to 2^w - 1, for chains i0 ..
 * i0+lanes-1 side by side (SHA-256, every step one block from the IV): y[k] = the chain end of i0 + k.
 * Same bytes as chain() twice per i. */
static void chain_full_wide(const dsig_sha256_ops *o, unsigned n, unsigned w, const uint8_t *I,
                            uint32_t q, uint32_t i0, const uint8_t *seed,
                            uint8_t (*y)[DSIG_LMS_N_MAX])
{
    /* always o->lanes; the bound is for the compiler */
    const unsigned lanes = o->lanes < DSIG_SHA256_MAX_LANES ? o->lanes : DSIG_SHA256_MAX_LANES;
    uint8_t blk[DSIG_SHA256_MAX_LANES][64];
    const uint8_t *bp[DSIG_SHA256_MAX_LANES];
    uint32_t st[DSIG_SHA256_MAX_LANES][8];
    const size_t len = 23 + n;
    for (unsigned k = 0; k < lanes; k++) {
        memcpy(blk[k], I, 16);
        dsig_store_be32(blk[k] + 16, q);
        dsig_store_be16(blk[k] + 20, i0 + k);
        blk[k][22] = 0xff; /* Appendix A: x_q[i] = H(I ‖ q ‖ i ‖ 0xff ‖ SEED) */
        memcpy(blk[k] + 23, seed, n);
        blk[k][len] = 0x80;
        memset(blk[k] + len + 1, 0, 56 - len - 1);
        dsig_store_be32(blk[k] + 56, 0);
        dsig_store_be32(blk[k] + 60, (uint32_t)(len * 8));
        bp[k] = blk[k];
    }
    for (unsigned j = 0; j <= (1u << w) - 1; j++) {
        o->lanes_from(st, dsig_sha256_iv, bp);
        for (unsigned k = 0; k < lanes; k++) {
            blk[k][22] = (uint8_t)j; /* the next step's chain position (unused after the last) */
            for (unsigned v = 0; v < n / 4; v++)
                dsig_store_be32(blk[k] + 23 + 4 * v, st[k][v]);
        }
    }
    for (unsigned k = 0; k < lanes; k++)
        memcpy(y[k], blk[k] + 23, n);
    dsig_memzero(blk, lanes * sizeof blk[0]); /* only the rows used */
    dsig_memzero(st, lanes * sizeof st[0]);
}

_Thread_local uint64_t dsig_lms_test_leaves;
_Thread_local uint64_t dsig_lms_test_child_signs;

/* @spec RFC 8554 §4.3 Algorithm 1 with Appendix A x_q[i]: the public key K of leaf q. The p chains
 * are independent: SHAKE runs them 4 at a time on the 4-way Keccak, SHA-256 in groups of the wide
 * kernel's lanes (dsig_sha256_simd_degree(): 2 with SHA-NI, 8 with AVX2, else one at a time). */
static void lmots_pub_K(const dsig_lmots_params *op, const uint8_t *I, uint32_t q, const uint8_t *seed,
                        uint8_t *K)
{
    const unsigned n = op->n, top = (1u << op->w) - 1;
    dsig_lms_test_leaves++;
    uint8_t pre[22], y[8][DSIG_LMS_N_MAX];
    dsig_lms_hash h;
    memcpy(pre, I, 16);
    dsig_store_be32(pre + 16, q);
    dsig_store_be16(pre + 20, DSIG_LMS_D_PBLC);
    dsig_lms_hash_init(&h, op->shake);
    dsig_lms_hash_update(&h, pre, sizeof pre);
    unsigned i = 0;
    const dsig_sha256_ops *o = dsig_sha256_ops_get();
    unsigned lanes = op->shake ? 1 : o->lanes;
    for (; lanes > 1 && i + lanes <= op->p; i += lanes) {
        chain_full_wide(o, n, op->w, I, q, i, seed, y);
        for (unsigned k = 0; k < lanes; k++)
            dsig_lms_hash_update(&h, y[k], n);
    }
    if (op->shake) {
        uint8_t *x[4] = {y[0], y[1], y[2], y[3]};
        for (; i + 4 <= op->p; i += 4) {
            for (unsigned k = 0; k < 4; k++) {
                memcpy(y[k], seed, n);
                chain(1, n, I, q, i + k, y[k], 0xff, 0x100);
            }
            chain_x4_full(n, op->w, I, q, i, x);
            for (unsigned k = 0; k < 4; k++)
                dsig_lms_hash_update(&h, y[k], n);
        }
    }
    for (; i < op->p; i++) {
        memcpy(y[0], seed, n);
        chain(op->shake, n, I, q, i, y[0], 0xff, 0x100);
        chain(op->shake, n, I, q, i, y[0], 0, top);
        dsig_lms_hash_update(&h, y[0], n);
    }
    dsig_lms_hash_final(&h, K, n);
    dsig_memzero(y, sizeof y);
}

void dsig_lmots_sign_q(const dsig_lmots_params *op, const uint8_t *I, uint32_t q, const uint8_t *seed,
                       const uint8_t *Q, uint8_t *y)
{
    uint8_t a[DSIG_LMS_P_MAX];
    const unsigned n = op->n;
    digits(op, Q, a);
    /* Q's digits: a function of C (in the signature), I, q and the message, so public; the chain
     * lengths follow them, never the secret seed. */
    DSIG_CT_DECLASSIFY(a, sizeof a);
    for (unsigned i = 0; i < op->p; i++) {
        uint8_t *yi = y + (size_t)i * n;
        memcpy(yi, seed, n);
        chain(op->shake, n, I, q, i, yi, 0xff, 0x100);
        chain(op->shake, n, I, q, i, yi, 0, a[i]);
    }
}

/* @spec RFC 8554 §4.6 Algorithm 4b steps 3-4: the candidate public key Kc from y and the digest Q. */
static void lmots_candidate(const dsig_lmots_params *op, const uint8_t *I, uint32_t q, const uint8_t *Q,
                            const uint8_t *y, uint8_t *Kc)
{
    uint8_t a[DSIG_LMS_P_MAX], pre[22], tmp[DSIG_LMS_N_MAX];
    const unsigned n = op->n, top = (1u << op->w) - 1;
    dsig_lms_hash h;
    digits(op, Q, a);
    memcpy(pre, I, 16);
    dsig_store_be32(pre + 16, q);
    dsig_store_be16(pre + 20, DSIG_LMS_D_PBLC);
    dsig_lms_hash_init(&h, op->shake);
    dsig_lms_hash_update(&h, pre, sizeof pre);
    for (unsigned i = 0; i < op->p; i++) {
        memcpy(tmp, y + (size_t)i * n, n);
        chain(op->shake, n, I, q, i, tmp, a[i], top);
        dsig_lms_hash_update(&h, tmp, n);
    }
    dsig_lms_hash_final(&h, Kc, n);
}

/* Start H(I ‖ u32str(q) ‖ u16str(D_MESG) ‖ C ‖ ...) (RFC 8554 §4.5 Algorithm 3 step 4). */
static void mesg_init(dsig_lms_hash *h, int shake, const uint8_t *I, uint32_t q, const uint8_t *C,
                      unsigned n)
{
    uint8_t pre[22];
    memcpy(pre, I, 16);
    dsig_store_be32(pre + 16, q);
    dsig_store_be16(pre + 20, DSIG_LMS_D_MESG);
    dsig_lms_hash_init(h, shake);
    dsig_lms_hash_update(h, pre, sizeof pre);
    dsig_lms_hash_update(h, C, n);
}

/* ---- LMS trees -------------------------------------------------------------------------------- */

/* @spec RFC 8554 §5.3 leaf T[r] = H(I ‖ u32str(r) ‖ u16str(D_LEAF) ‖ K). */
static void leaf_node(const dsig_lms_params *lp, const uint8_t *I, uint32_t r, const uint8_t *K,
                      uint8_t *out)
{
    uint8_t b[22 + DSIG_LMS_N_MAX];
    memcpy(b, I, 16);
    dsig_store_be32(b + 16, r);
    dsig_store_be16(b + 20, DSIG_LMS_D_LEAF);
    memcpy(b + 22, K, lp->m);
    hash1(lp->shake, out, lp->m, b, 22 + lp->m);
}

/* @spec RFC 8554 §5.3 interior T[r] = H(I ‖ u32str(r) ‖ u16str(D_INTR) ‖ left ‖ right). */
static void inner_node(const dsig_lms_params *lp, const uint8_t *I, uint32_t r, const uint8_t *left,
                       const uint8_t *right, uint8_t *out)
{
    uint8_t b[22 + 2 * DSIG_LMS_N_MAX];
    memcpy(b, I, 16);
    dsig_store_be32(b + 16, r);
    dsig_store_be16(b + 20, DSIG_LMS_D_INTR);
    memcpy(b + 22, left, lp->m);
    memcpy(b + 22 + lp->m, right, lp->m);
    hash1(lp->shake, out, lp->m, b, 22 + 2 * (size_t)lp->m);
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
        lmots_pub_K(k->op, k->I, q, k->seed, K);
        leaf_node(lp, k->I, (1u << h) + q, K, out + (size_t)((1u << c) + l) * m);
    }
    for (uint32_t l = (1u << c) - 1; l >= 1; l--) {
        unsigned d = 31 - (unsigned)__builtin_clz(l); /* depth in the subtree */
        unsigned kh = c - d;                           /* height in the whole tree */
        uint32_t r = (1u << (h - kh)) + (s << (c - kh)) + (l - (1u << d));
        inner_node(lp, k->I, r, out + (size_t)2 * l * m, out + (size_t)(2 * l + 1) * m,
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
static int key_begin(dsig_lms_key *k, const dsig_lms_params *lp, const dsig_lmots_params *op,
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
static void key_step(dsig_lms_key *k)
{
    const dsig_lms_params *lp = k->lp;
    const unsigned h = lp->h, m = lp->m, cut = k->cut, c = cut ? cut : h;
    const uint32_t q = k->done++;
    const uint32_t s = cut ? q >> cut : 0, lq = q & ((1u << c) - 1);
    uint8_t *buf = cut ? k->sub : k->nodes, K[DSIG_LMS_N_MAX];
    if (cut && lq == 0)
        k->sub_idx = -1; /* the buffer is being refilled */
    lmots_pub_K(k->op, k->I, q, k->seed, K);
    uint32_t l = (1u << c) + lq;
    leaf_node(lp, k->I, (1u << h) + q, K, buf + (size_t)l * m);
    while (l > 1 && (l & 1)) {
        l >>= 1;
        unsigned d = 31 - (unsigned)__builtin_clz(l); /* depth in the subtree */
        unsigned kh = c - d;                           /* height in the whole tree */
        uint32_t r = (1u << (h - kh)) + (s << (c - kh)) + (l - (1u << d));
        inner_node(lp, k->I, r, buf + (size_t)2 * l * m, buf + (size_t)(2 * l + 1) * m,
                   buf + (size_t)l * m);
    }
    if (cut && l == 1) {
        uint32_t r = (1u << (h - cut)) + s;
        memcpy(k->nodes + (size_t)r * m, k->sub + m, m);
        k->sub_idx = s;
        while (r > 1 && (r & 1)) {
            r >>= 1;
            inner_node(lp, k->I, r, k->nodes + (size_t)2 * r * m, k->nodes + (size_t)(2 * r + 1) * m,
                       k->nodes + (size_t)r * m);
        }
    }
    if (k->done == 1u << h)
        memcpy(k->pub + 24, k->nodes + m, m);
}

/* 1 once every leaf of k is computed (the tree and public key usable). */
static inline int key_complete(const dsig_lms_key *k)
{
    return k->nodes && k->done == 1u << k->lp->h;
}

int dsig_lms_key_build(dsig_lms_key *k, const dsig_lms_params *lp, const dsig_lmots_params *op,
                       const uint8_t *I, const uint8_t *seed)
{
    memset(k, 0, sizeof *k);
    int rc = key_begin(k, lp, op, I, seed);
    if (rc)
        return rc;
    while (!key_complete(k))
        key_step(k);
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
    chain(k->op->shake, k->op->n, k->I, q, 0xfffd, c, 0xff, 0x100);
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
    mesg_init(&h, k->op->shake, k->I, q, c, k->op->n);
    dsig_lms_hash_update(&h, msg, len);
    dsig_lms_hash_final(&h, Q, k->op->n);
    dsig_lmots_sign_q(k->op, k->I, q, k->seed, Q, sig + y);
    return DSIG_OK;
}

/* ---- verification ------------------------------------------------------------------------------ */

/* Parse an LMS public key at p (avail bytes): its length, or 0 (error recorded) when malformed. */
static size_t pub_parse(const uint8_t *p, size_t avail, const char *where, int code)
{
    if (avail < 8) {
        dsig_fail(code, "HSS-LMS: %s: LMS public key truncated", where);
        return 0;
    }
    const dsig_lms_params *lp = dsig_lms_params_by_type(dsig_load_be32(p));
    const dsig_lmots_params *op = dsig_lmots_params_by_type(dsig_load_be32(p + 4));
    if (!lp || !op) {
        dsig_fail(code, "HSS-LMS: %s: unknown %s typecode 0x%08x", where,
                  lp ? "LM-OTS" : "LMS", lp ? dsig_load_be32(p + 4) : dsig_load_be32(p));
        return 0;
    }
    if (!dsig_lms_pair_ok(lp, op)) {
        dsig_fail(code, "HSS-LMS: %s: %s cannot be paired with %s", where, lp->name,
                  op->name);
        return 0;
    }
    size_t len = dsig_lms_pub_len(lp);
    if (avail < len) {
        dsig_fail(code, "HSS-LMS: %s: LMS public key truncated", where);
        return 0;
    }
    return len;
}

/* @spec RFC 8554 §5.4.2 Algorithm 6a steps 2a-2i: check an LMS signature's layout against its
 * public key (types equal, q < 2^h); its length, or 0 (error recorded). */
static size_t sig_parse(const uint8_t *pub, const uint8_t *s, size_t avail, const char *where)
{
    const dsig_lms_params *lp = dsig_lms_params_by_type(dsig_load_be32(pub));
    const dsig_lmots_params *op = dsig_lmots_params_by_type(dsig_load_be32(pub + 4));
    if (avail < 8) {
        dsig_fail(DSIG_E_VERIFY, "HSS-LMS: %s: signature truncated", where);
        return 0;
    }
    if (dsig_load_be32(s + 4) != op->type) {
        dsig_fail(DSIG_E_VERIFY, "HSS-LMS: %s: LM-OTS type 0x%08x differs from the public key's %s",
                  where, dsig_load_be32(s + 4), op->name);
        return 0;
    }
    size_t ots = 4 + (size_t)op->n * (op->p + 1);
    if (avail < 4 + ots + 4) {
        dsig_fail(DSIG_E_VERIFY, "HSS-LMS: %s: signature truncated", where);
        return 0;
    }
    if (dsig_load_be32(s + 4 + ots) != lp->type) {
        dsig_fail(DSIG_E_VERIFY, "HSS-LMS: %s: LMS type 0x%08x differs from the public key's %s", where,
                  dsig_load_be32(s + 4 + ots), lp->name);
        return 0;
    }
    if (dsig_load_be32(s) >> lp->h) {
        dsig_fail(DSIG_E_VERIFY, "HSS-LMS: %s: leaf index %u out of range for %s", where, dsig_load_be32(s),
                  lp->name);
        return 0;
    }
    size_t len = dsig_lms_sig_len(lp, op);
    if (avail < len) {
        dsig_fail(DSIG_E_VERIFY, "HSS-LMS: %s: signature truncated", where);
        return 0;
    }
    return len;
}

/* @spec RFC 8554 §5.4.2 Algorithm 6a steps 3-4: 1 if the (parsed) LMS signature s with digest Q
 * leads to the public key's root. */
static int lms_check(const uint8_t *pub, const uint8_t *s, const uint8_t *Q)
{
    const dsig_lms_params *lp = dsig_lms_params_by_type(dsig_load_be32(pub));
    const dsig_lmots_params *op = dsig_lmots_params_by_type(dsig_load_be32(pub + 4));
    const uint8_t *I = pub + 8;
    uint32_t q = dsig_load_be32(s);
    uint8_t Kc[DSIG_LMS_N_MAX], tmp[DSIG_LMS_N_MAX];
    lmots_candidate(op, I, q, Q, s + 8 + op->n, Kc);
    const uint8_t *path = s + 4 + 4 + (size_t)op->n * (op->p + 1) + 4;
    uint32_t node = (1u << lp->h) + q;
    leaf_node(lp, I, node, Kc, tmp);
    for (unsigned i = 0; node > 1; i++, node >>= 1) {
        const uint8_t *pi = path + (size_t)i * lp->m;
        if (node & 1)
            inner_node(lp, I, node >> 1, pi, tmp, tmp);
        else
            inner_node(lp, I, node >> 1, tmp, pi, tmp);
    }
    return dsig_ct_equal(tmp, pub + 24, lp->m);
}

int dsig_hss_pub_check(const uint8_t *pub, size_t pub_len)
{
    if (!pub || pub_len < 4)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS public key: too short (%zu bytes)", pub_len);
    uint32_t L = dsig_load_be32(pub);
    if (L < 1 || L > DSIG_HSS_L_MAX)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS public key: L = %u levels, must be 1..8", L);
    size_t len = pub_parse(pub + 4, pub_len - 4, "public key", DSIG_E_KEY);
    if (!len)
        return DSIG_E_KEY;
    if (4 + len != pub_len)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS public key: %zu bytes, expected %zu", pub_len, 4 + len);
    return DSIG_OK;
}

int dsig_hss_verify_init(dsig_hss_verify_ctx *c, const uint8_t *pub, size_t pub_len, const uint8_t *sig,
                         size_t sig_len)
{
    memset(c, 0, sizeof *c);
    if (dsig_hss_pub_check(pub, pub_len))
        return DSIG_E_VERIFY;
    unsigned L = dsig_load_be32(pub);
    if (!sig || sig_len < 4)
        return dsig_fail(DSIG_E_VERIFY, "HSS-LMS signature: too short (%zu bytes)", sig_len);
    if (dsig_load_be32(sig) != L - 1)
        return dsig_fail(DSIG_E_VERIFY, "HSS-LMS signature: Nspk = %u, the public key has L = %u",
                         dsig_load_be32(sig), L);
    size_t off = 4;
    c->lpub[0] = pub + 4;
    for (unsigned i = 0; i < L; i++) {
        size_t len = sig_parse(c->lpub[i], sig + off, sig_len - off,
                               i + 1 < L ? "signed public key" : "message signature");
        if (!len)
            return DSIG_E_VERIFY;
        c->lsig[i] = sig + off;
        off += len;
        if (i + 1 < L) {
            len = pub_parse(sig + off, sig_len - off, "signed public key", DSIG_E_VERIFY);
            if (!len)
                return DSIG_E_VERIFY;
            c->lpub[i + 1] = sig + off;
            off += len;
        }
    }
    if (off != sig_len)
        return dsig_fail(DSIG_E_VERIFY, "HSS-LMS signature: %zu bytes, expected %zu", sig_len, off);
    c->L = L;
    const uint8_t *bp = c->lpub[L - 1], *bs = c->lsig[L - 1];
    const dsig_lmots_params *op = dsig_lmots_params_by_type(dsig_load_be32(bp + 4));
    mesg_init(&c->h, op->shake, bp + 8, dsig_load_be32(bs), bs + 8, op->n);
    return DSIG_OK;
}

void dsig_hss_verify_update(dsig_hss_verify_ctx *c, const uint8_t *in, size_t len)
{
    dsig_lms_hash_update(&c->h, in, len);
}

/* @spec RFC 8554 §6.3 Algorithm 8: every level's signature of the next public key, then the
 * message signature against the bottom key. */
int dsig_hss_verify_final(dsig_hss_verify_ctx *c)
{
    if (!c->L)
        return dsig_fail(DSIG_E_STATE, "HSS-LMS: verify context not initialized");
    uint8_t Q[DSIG_LMS_N_MAX];
    const uint8_t *bp = c->lpub[c->L - 1];
    const dsig_lmots_params *bop = dsig_lmots_params_by_type(dsig_load_be32(bp + 4));
    dsig_lms_hash_final(&c->h, Q, bop->n);
    int ok = lms_check(bp, c->lsig[c->L - 1], Q);
    for (unsigned i = 0; i + 1 < c->L; i++) {
        const uint8_t *p = c->lpub[i], *s = c->lsig[i];
        const dsig_lms_params *nlp = dsig_lms_params_by_type(dsig_load_be32(c->lpub[i + 1]));
        const dsig_lmots_params *op = dsig_lmots_params_by_type(dsig_load_be32(p + 4));
        dsig_lms_hash h;
        mesg_init(&h, op->shake, p + 8, dsig_load_be32(s), s + 8, op->n);
        dsig_lms_hash_update(&h, c->lpub[i + 1], dsig_lms_pub_len(nlp));
        dsig_lms_hash_final(&h, Q, op->n);
        ok &= lms_check(p, s, Q);
    }
    c->L = 0;
    return ok ? DSIG_OK : dsig_fail(DSIG_E_VERIFY, "HSS-LMS signature does not verify");
}

int dsig_hss_verify(const uint8_t *pub, size_t pub_len, const uint8_t *msg, size_t msg_len,
                    const uint8_t *sig, size_t sig_len)
{
    dsig_hss_verify_ctx c;
    int rc = dsig_hss_verify_init(&c, pub, pub_len, sig, sig_len);
    if (rc)
        return rc;
    dsig_hss_verify_update(&c, msg, msg_len);
    return dsig_hss_verify_final(&c);
}

int dsig_lms_verify(const uint8_t *pub, size_t pub_len, const uint8_t *msg, size_t msg_len,
                    const uint8_t *sig, size_t sig_len)
{
    /* An LMS signature is the HSS signature with L = 1 minus its u32 Nspk = 0 (RFC 8554 §6.2). */
    uint8_t hpub[DSIG_HSS_PUB_MAX];
    if (!pub || pub_len > DSIG_LMS_PUB_MAX || !sig)
        return dsig_fail(DSIG_E_VERIFY, "LMS: public key of %zu bytes", pub_len);
    dsig_store_be32(hpub, 1);
    memcpy(hpub + 4, pub, pub_len);
    uint8_t *hs = dsig_malloc(sig_len + 4);
    if (!hs)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    dsig_store_be32(hs, 0);
    memcpy(hs + 4, sig, sig_len);
    int rc = dsig_hss_verify(hpub, pub_len + 4, msg, msg_len, hs, sig_len + 4);
    dsig_xfree(hs, 0);
    return rc;
}

/* ---- HSS private key --------------------------------------------------------------------------- */

struct dsig_hss_priv {
    pthread_mutex_t mu;              /* guards the trees (child replacement, subtree cache) */
    unsigned L;
    unsigned shift[DSIG_HSS_L_MAX];  /* bits of the global index below level i */
    unsigned htot;
    const dsig_lms_params *lp[DSIG_HSS_L_MAX];
    const dsig_lmots_params *op[DSIG_HSS_L_MAX];
    dsig_lms_key lv[DSIG_HSS_L_MAX];
    int built[DSIG_HSS_L_MAX];
    uint64_t prefix[DSIG_HSS_L_MAX]; /* level i >= 1: index >> shift[i-1] it was built for */
    uint8_t *psig[DSIG_HSS_L_MAX];   /* level i >= 1: LMS signature of lv[i].pub by level i-1 */
    size_t psig_len[DSIG_HSS_L_MAX];
    /* Level i >= 1: the NEXT child tree (prefix nx_prefix[i] = prefix[i] + 1), built a slice per
     * signature while lv[i] is in use; nx_psig[i] is its parent's signature once nx_signed[i]. At the
     * roll-over the two swap (buffers recycled). */
    dsig_lms_key nx[DSIG_HSS_L_MAX];
    int nx_on[DSIG_HSS_L_MAX], nx_signed[DSIG_HSS_L_MAX];
    uint64_t nx_prefix[DSIG_HSS_L_MAX];
    uint8_t *nx_psig[DSIG_HSS_L_MAX];
};

/* The child (SEED, I) that leaf q of `parent` signs: cisco/hash-sigs "Secret Method 2". */
static void child_seed_I(const dsig_lms_key *parent, uint32_t q, uint8_t *seed, uint8_t *I)
{
    const unsigned n = parent->op->n;
    uint8_t t[DSIG_LMS_N_MAX];
    memcpy(seed, parent->seed, n);
    chain(parent->op->shake, n, parent->I, q, 0xfffe, seed, 0xff, 0x100);
    memcpy(t, parent->seed, n);
    chain(parent->op->shake, n, parent->I, q, 0xffff, t, 0xff, 0x100);
    memcpy(I, t, DSIG_LMS_I_LEN);
    dsig_memzero(t, sizeof t);
}

/* @spec RFC 8554 §6.2 (signing a child public key): the LMS signature by leaf pq of `parent` of
 * child->pub into *psig (allocated on first use), randomizer derived (0xfffd) so that signing it
 * again after a restart yields the identical one-time signature. */
static int sign_child(const dsig_hss_priv *k, unsigned i, dsig_lms_key *parent, uint32_t pq,
                      const dsig_lms_key *child, uint8_t **psig)
{
    uint8_t c[DSIG_LMS_N_MAX];
    if (!*psig) {
        *psig = dsig_malloc(dsig_lms_sig_len(k->lp[i - 1], k->op[i - 1]));
        if (!*psig)
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    dsig_lms_test_child_signs++;
    dsig_lms_derive_c(parent, pq, c);
    return dsig_lms_sign(parent, pq, c, child->pub, dsig_lms_key_pub_len(child), *psig);
}

/* Leaf of the level-(i-1) tree that signs the level-i tree of prefix pre. */
static inline uint32_t parent_leaf(const dsig_hss_priv *k, unsigned i, uint64_t pre)
{
    return (uint32_t)(pre & ((1u << k->lp[i - 1]->h) - 1));
}

/* Make nx[i] the current level i (its tree complete, signed by lv[i-1], which is already current):
 * swap the structures so the retired tree's buffers are reused by the next one; wipe its seed. */
static int promote_next(dsig_hss_priv *k, unsigned i)
{
    while (!key_complete(&k->nx[i])) /* only after a jump: the slices normally finished it */
        key_step(&k->nx[i]);
    if (!k->nx_signed[i]) {
        int rc = sign_child(k, i, &k->lv[i - 1], parent_leaf(k, i, k->nx_prefix[i]), &k->nx[i],
                            &k->nx_psig[i]);
        if (rc)
            return rc;
    }
    dsig_lms_key t = k->lv[i];
    k->lv[i] = k->nx[i];
    k->nx[i] = t;
    dsig_memzero(k->nx[i].seed, sizeof k->nx[i].seed);
    uint8_t *p = k->psig[i];
    k->psig[i] = k->nx_psig[i];
    k->nx_psig[i] = p;
    k->psig_len[i] = dsig_lms_sig_len(k->lp[i - 1], k->op[i - 1]);
    k->prefix[i] = k->nx_prefix[i];
    k->built[i] = 1;
    k->nx_on[i] = k->nx_signed[i] = 0;
    return DSIG_OK;
}

/* @spec RFC 8554 §6.2 (key replacement): make levels 1..L-1 those of global `index`, top down. A
 * level that rolls over to its next tree takes the precomputed one; after a jump (or at load) the
 * child tree is built here and signed by its parent leaf (derived C: the same bytes every time). */
static int prepare(dsig_hss_priv *k, uint64_t index)
{
    for (unsigned i = 1; i < k->L; i++) {
        uint64_t pre = index >> k->shift[i - 1];
        if (k->built[i] && k->prefix[i] == pre)
            continue;
        if (k->nx_on[i] && k->nx_prefix[i] == pre) {
            int rc = promote_next(k, i);
            if (rc)
                return rc;
            continue;
        }
        uint32_t pq = parent_leaf(k, i, pre);
        uint8_t seed[DSIG_LMS_N_MAX], I[DSIG_LMS_I_LEN];
        k->built[i] = 0;
        child_seed_I(&k->lv[i - 1], pq, seed, I);
        int rc = key_begin(&k->lv[i], k->lp[i], k->op[i], I, seed);
        dsig_memzero(seed, sizeof seed);
        if (rc)
            return rc;
        while (!key_complete(&k->lv[i]))
            key_step(&k->lv[i]);
        rc = sign_child(k, i, &k->lv[i - 1], pq, &k->lv[i], &k->psig[i]);
        if (rc)
            return rc;
        k->psig_len[i] = dsig_lms_sig_len(k->lp[i - 1], k->op[i - 1]);
        k->prefix[i] = pre;
        k->built[i] = 1;
    }
    return DSIG_OK;
}

/*
 * After prepare(index): advance every level's next child tree by the slice that `index` owes, top
 * down. Level i's next tree has 2^h_i leaves to compute while the current one serves 2^shift[i-1]
 * signatures, so position pos in that lifetime owes (pos >> shift[i]) + 1 leaves: the bottom level one
 * leaf per signature, level i one leaf per 2^shift[i] signatures — never more than one leaf per level
 * per signature in sequence (a jump ahead catches up here). A complete next tree is signed by its
 * parent: the current parent tree, or, when the parent rolls over at the same time, the parent's next
 * tree (complete before it, being one level up). Failures are not fatal to the signature being made:
 * the next tree is dropped and the roll-over rebuilds it (prepare) as before.
 */
static void advance(dsig_hss_priv *k, uint64_t index)
{
    for (unsigned i = 1; i < k->L; i++) {
        const uint64_t pre = index >> k->shift[i - 1], npre = pre + 1;
        if (npre >> (k->htot - k->shift[i - 1])) /* the last tree of this level: none follows */
            continue;
        const unsigned hp = k->lp[i - 1]->h;
        const int same_parent = (npre >> hp) == (pre >> hp);
        dsig_lms_key *parent = same_parent ? &k->lv[i - 1] : &k->nx[i - 1];
        if (!same_parent && !(k->nx_on[i - 1] && k->nx_prefix[i - 1] == (npre >> hp)))
            continue; /* not reachable in sequence (i - 1 >= 1 and advanced just above) */
        const uint32_t pq = parent_leaf(k, i, npre);
        if (!(k->nx_on[i] && k->nx_prefix[i] == npre)) {
            uint8_t seed[DSIG_LMS_N_MAX], I[DSIG_LMS_I_LEN];
            child_seed_I(parent, pq, seed, I);
            int rc = key_begin(&k->nx[i], k->lp[i], k->op[i], I, seed);
            dsig_memzero(seed, sizeof seed);
            k->nx_on[i] = rc == DSIG_OK;
            k->nx_signed[i] = 0;
            k->nx_prefix[i] = npre;
            if (rc)
                continue;
        }
        const uint64_t pos = index & (((uint64_t)1 << k->shift[i - 1]) - 1);
        const uint64_t full = (uint64_t)1 << k->lp[i]->h;
        uint64_t owed = (pos >> k->shift[i]) + 1;
        if (owed > full)
            owed = full;
        while (k->nx[i].done < owed)
            key_step(&k->nx[i]);
        if (key_complete(&k->nx[i]) && !k->nx_signed[i] && key_complete(parent))
            k->nx_signed[i] = sign_child(k, i, parent, pq, &k->nx[i], &k->nx_psig[i]) == DSIG_OK;
    }
}

int dsig_hss_priv_new(dsig_hss_priv **out, unsigned L, const uint32_t *lms_types,
                      const uint32_t *ots_types, const uint8_t *seed, const uint8_t *I, uint64_t next)
{
    *out = NULL;
    if (L < 1 || L > DSIG_HSS_L_MAX)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS: L = %u levels, must be 1..8", L);
    dsig_hss_priv *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    pthread_mutex_init(&k->mu, NULL);
    k->L = L;
    for (unsigned i = 0; i < L; i++) {
        k->lp[i] = dsig_lms_params_by_type(lms_types[i]);
        k->op[i] = dsig_lmots_params_by_type(ots_types[i]);
        if (!k->lp[i] || !k->op[i] || !dsig_lms_pair_ok(k->lp[i], k->op[i]) ||
            k->lp[i]->shake != k->lp[0]->shake || k->lp[i]->m != k->lp[0]->m) {
            dsig_hss_priv_free(k);
            return dsig_fail(DSIG_E_ARG, "HSS-LMS: level %u: LMS type 0x%x / LM-OTS type 0x%x is not a "
                                         "known pair using the top level's hash and length", i + 1,
                             lms_types[i], ots_types[i]);
        }
        k->htot += k->lp[i]->h;
    }
    if (k->htot > 63) {
        dsig_hss_priv_free(k);
        return dsig_fail(DSIG_E_ARG, "HSS-LMS: total height %u exceeds 63 (a 64-bit counter)", L);
    }
    unsigned below = k->htot;
    for (unsigned i = 0; i < L; i++) {
        below -= k->lp[i]->h;
        k->shift[i] = below;
    }
    int rc = dsig_lms_key_build(&k->lv[0], k->lp[0], k->op[0], I, seed);
    if (rc == DSIG_OK && next < dsig_hss_priv_capacity(k)) {
        rc = prepare(k, next);
        /* The next trees as signing `next` leaves them (loading may cost a tree per level): the
         * signatures from `next` on then do only their own slices. */
        if (rc == DSIG_OK)
            advance(k, next);
    }
    if (rc) {
        dsig_hss_priv_free(k);
        return rc;
    }
    *out = k;
    return DSIG_OK;
}

void dsig_hss_priv_free(dsig_hss_priv *k)
{
    if (!k)
        return;
    for (unsigned i = 0; i < DSIG_HSS_L_MAX; i++) {
        dsig_lms_key_clear(&k->lv[i]);
        dsig_lms_key_clear(&k->nx[i]);
        dsig_xfree(k->psig[i], 0);
        dsig_xfree(k->nx_psig[i], 0);
    }
    pthread_mutex_destroy(&k->mu);
    dsig_xfree(k, sizeof *k);
}

size_t dsig_hss_priv_pub(const dsig_hss_priv *k, uint8_t *pub)
{
    dsig_store_be32(pub, k->L);
    memcpy(pub + 4, k->lv[0].pub, dsig_lms_key_pub_len(&k->lv[0]));
    return 4 + dsig_lms_key_pub_len(&k->lv[0]);
}

uint64_t dsig_hss_priv_capacity(const dsig_hss_priv *k)
{
    return (uint64_t)1 << k->htot;
}

size_t dsig_hss_priv_sig_len(const dsig_hss_priv *k)
{
    size_t len = 4;
    for (unsigned i = 0; i < k->L; i++) {
        len += dsig_lms_sig_len(k->lp[i], k->op[i]);
        if (i + 1 < k->L)
            len += dsig_lms_pub_len(k->lp[i + 1]);
    }
    return len;
}

unsigned dsig_hss_priv_levels(const dsig_hss_priv *k, uint32_t *lms_types, uint32_t *ots_types)
{
    for (unsigned i = 0; i < k->L; i++) {
        if (lms_types)
            lms_types[i] = k->lp[i]->type;
        if (ots_types)
            ots_types[i] = k->op[i]->type;
    }
    return k->L;
}

const uint8_t *dsig_hss_priv_seed(const dsig_hss_priv *k, size_t *n)
{
    *n = k->lp[0]->m;
    return k->lv[0].seed;
}

const uint8_t *dsig_hss_priv_I(const dsig_hss_priv *k)
{
    return k->lv[0].I;
}

int dsig_hss_sign_init(dsig_hss_sign_ctx *c, dsig_hss_priv *k, uint64_t index, const uint8_t *rand_c)
{
    memset(c, 0, sizeof *c);
    if (index >= dsig_hss_priv_capacity(k))
        return dsig_fail(DSIG_E_EXHAUSTED, "HSS-LMS: index %llu is beyond the key's %llu signatures",
                         (unsigned long long)index, (unsigned long long)dsig_hss_priv_capacity(k));
    size_t len = dsig_hss_priv_sig_len(k);
    c->sig = dsig_malloc(len);
    if (!c->sig)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    c->sig_len = len;
    pthread_mutex_lock(&k->mu);
    int rc = prepare(k, index);
    if (rc) {
        pthread_mutex_unlock(&k->mu);
        dsig_hss_sign_clear(c);
        return rc;
    }
    const unsigned L = k->L;
    dsig_lms_key *b = &k->lv[L - 1];
    size_t off = 4;
    dsig_store_be32(c->sig, L - 1);
    for (unsigned i = 1; i < L; i++) {
        memcpy(c->sig + off, k->psig[i], k->psig_len[i]);
        off += k->psig_len[i];
        memcpy(c->sig + off, k->lv[i].pub, dsig_lms_key_pub_len(&k->lv[i]));
        off += dsig_lms_key_pub_len(&k->lv[i]);
    }
    uint8_t C[DSIG_LMS_N_MAX];
    c->q = (uint32_t)(index & ((1u << b->lp->h) - 1));
    if (rand_c)
        memcpy(C, rand_c, b->op->n);
    else
        dsig_lms_derive_c(b, c->q, C);
    c->y_off = off + dsig_lms_sign_frame(b, c->q, C, c->sig + off);
    c->op = b->op;
    memcpy(c->I, b->I, DSIG_LMS_I_LEN);
    memcpy(c->seed, b->seed, b->op->n);
    /* This signature's slice of the next child trees (issue 8: no whole tree inside one signature). */
    advance(k, index);
    pthread_mutex_unlock(&k->mu);
    mesg_init(&c->h, c->op->shake, c->I, c->q, C, c->op->n);
    return DSIG_OK;
}

void dsig_hss_sign_update(dsig_hss_sign_ctx *c, const uint8_t *in, size_t len)
{
    dsig_lms_hash_update(&c->h, in, len);
}

int dsig_hss_sign_final(dsig_hss_sign_ctx *c)
{
    if (!c->sig || !c->op)
        return dsig_fail(DSIG_E_STATE, "HSS-LMS: sign context not initialized");
    uint8_t Q[DSIG_LMS_N_MAX];
    dsig_lms_hash_final(&c->h, Q, c->op->n);
    dsig_lmots_sign_q(c->op, c->I, c->q, c->seed, Q, c->sig + c->y_off);
    dsig_memzero(c->seed, sizeof c->seed);
    c->op = NULL;
    /* The signature is released: its y values are public from here on. */
    DSIG_CT_DECLASSIFY(c->sig, c->sig_len);
    return DSIG_OK;
}

void dsig_hss_sign_clear(dsig_hss_sign_ctx *c)
{
    dsig_xfree(c->sig, c->sig_len);
    dsig_memzero(c, sizeof *c);
}

int dsig_hss_sign(dsig_hss_priv *k, uint64_t index, const uint8_t *rand_c, const uint8_t *msg,
                  size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    dsig_hss_sign_ctx c;
    if (cap < dsig_hss_priv_sig_len(k))
        return dsig_fail(DSIG_E_BUFFER, "HSS-LMS: signature needs %zu bytes, buffer has %zu",
                         dsig_hss_priv_sig_len(k), cap);
    int rc = dsig_hss_sign_init(&c, k, index, rand_c);
    if (rc)
        return rc;
    dsig_hss_sign_update(&c, msg, len);
    rc = dsig_hss_sign_final(&c);
    if (rc == DSIG_OK) {
        memcpy(sig, c.sig, c.sig_len);
        *sig_len = c.sig_len;
    }
    dsig_hss_sign_clear(&c);
    return rc;
}

/* ---- parameter strings -------------------------------------------------------------------------- */

/* One "LMS_x/LMOTS_y" or "Hh/Ww" pair of s[0..len). */
static int parse_pair(const char *s, size_t len, uint32_t *lt, uint32_t *ot)
{
    const char *slash = memchr(s, '/', len);
    if (!slash)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter \"%.*s\": expected LMS/LMOTS (e.g. "
                                     "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 or H10/W4)", (int)len, s);
    size_t a = (size_t)(slash - s), b = len - a - 1;
    const dsig_lms_params *lp = dsig_lms_params_by_name(s, a);
    const dsig_lmots_params *op = dsig_lmots_params_by_name(slash + 1, b);
    char buf[40];
    if (!lp && a >= 2 && a <= 3 && s[0] == 'H') { /* shorthand: SHA-256, M32 */
        snprintf(buf, sizeof buf, "LMS_SHA256_M32_%.*s", (int)a, s);
        lp = dsig_lms_params_by_name(buf, strlen(buf));
    }
    if (!op && b == 2 && slash[1] == 'W') {
        snprintf(buf, sizeof buf, "LMOTS_SHA256_N32_%.*s", (int)b, slash + 1);
        op = dsig_lmots_params_by_name(buf, strlen(buf));
    }
    if (!lp || !op)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter \"%.*s\": unknown %s set", (int)len, s,
                         lp ? "LM-OTS" : "LMS");
    if (!dsig_lms_pair_ok(lp, op))
        return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter \"%.*s\": %s and %s use different hashes or "
                                     "lengths", (int)len, s, lp->name, op->name);
    *lt = lp->type;
    *ot = op->type;
    return DSIG_OK;
}

int dsig_hss_parse_param(const char *s, unsigned *L, uint32_t *lms_types, uint32_t *ots_types)
{
    unsigned n = 0;
    if (!s || !*s)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter string is empty");
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (n == DSIG_HSS_L_MAX)
            return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter string: more than 8 levels");
        int rc = parse_pair(s, len, &lms_types[n], &ots_types[n]);
        if (rc)
            return rc;
        n++;
        s += len;
        if (*s == ',' && !*++s)
            return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter string ends with ','");
    }
    *L = n;
    return DSIG_OK;
}
