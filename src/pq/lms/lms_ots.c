/*
 * src/pq/lms/lms_ots.c — LM-OTS (RFC 8554 §4): the hash chains, the public key of a leaf (chains side by
 * side on the wide SHA-256 kernel or the 4-way Keccak), signing a digest and the candidate public key
 * of verification. Hash shapes: see lms_internal.h.
 */
#include <string.h>

#include "core/bytes.h"
#include "core/ct.h"
#include "dsig/mem.h"
#include "hash/keccak.h"
#include "hash/sha256.h"
#include "pq/lms/lms_internal.h"

/*
 * @spec RFC 8554 §4.5 Algorithm 3 step "tmp = H(I ‖ u32str(q) ‖ u16str(i) ‖ u8str(j) ‖ tmp)" for
 * j = from .. to-1 (chain positions), in place on tmp (n bytes). With j = 0xff and to = from + 1 it is
 * the Appendix A derivation H(I ‖ q ‖ i ‖ 0xff ‖ SEED). SHA-256: the block and its padding are laid
 * out once, each step is one compression writing its output back into the block.
 */
void dsig_lms_chain(int shake, unsigned n, const uint8_t *I, uint32_t q, uint32_t i, uint8_t *tmp,
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
 * Same bytes as dsig_lms_chain() twice per i. */
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

/* @spec RFC 8554 §4.3 Algorithm 1 with Appendix A x_q[i]: the public key K of leaf q. The p chains
 * are independent: SHAKE runs them 4 at a time on the 4-way Keccak, SHA-256 in groups of the wide
 * kernel's lanes (dsig_sha256_simd_degree(): 2 with SHA-NI, 8 with AVX2, else one at a time). */
void dsig_lmots_pub_K(const dsig_lmots_params *op, const uint8_t *I, uint32_t q, const uint8_t *seed,
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
                dsig_lms_chain(1, n, I, q, i + k, y[k], 0xff, 0x100);
            }
            chain_x4_full(n, op->w, I, q, i, x);
            for (unsigned k = 0; k < 4; k++)
                dsig_lms_hash_update(&h, y[k], n);
        }
    }
    for (; i < op->p; i++) {
        memcpy(y[0], seed, n);
        dsig_lms_chain(op->shake, n, I, q, i, y[0], 0xff, 0x100);
        dsig_lms_chain(op->shake, n, I, q, i, y[0], 0, top);
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
        dsig_lms_chain(op->shake, n, I, q, i, yi, 0xff, 0x100);
        dsig_lms_chain(op->shake, n, I, q, i, yi, 0, a[i]);
    }
}

/* @spec RFC 8554 §4.6 Algorithm 4b steps 3-4: the candidate public key Kc from y and the digest Q. */
void dsig_lmots_candidate(const dsig_lmots_params *op, const uint8_t *I, uint32_t q, const uint8_t *Q,
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
        dsig_lms_chain(op->shake, n, I, q, i, tmp, a[i], top);
        dsig_lms_hash_update(&h, tmp, n);
    }
    dsig_lms_hash_final(&h, Kc, n);
}

/* Start H(I ‖ u32str(q) ‖ u16str(D_MESG) ‖ C ‖ ...) (RFC 8554 §4.5 Algorithm 3 step 4). */
void dsig_lms_mesg_init(dsig_lms_hash *h, int shake, const uint8_t *I, uint32_t q, const uint8_t *C,
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
