/*
 * src/pq/lms/lms_internal.h — private to the files of src/pq/lms: the pieces the LMS files share. The
 * one-time scheme (lms_ots.c), the trees and working keys (lms_tree.c), verification (lms_verify.c), the
 * HSS private key (hss_key.c) and the parameter strings (hss_param.c) see each other only through this
 * header and lms.h.
 *
 * Every hash of the one-time scheme has the shape H(I ‖ u32 q ‖ u16 i ‖ u8 j ‖ X) with |X| = n: the chain
 * step (§4.5, j = chain position), the Appendix A key derivation (j = 0xff, X = SEED) and the
 * cisco/hash-sigs derivations (i = 0xfffd/0xfffe/0xffff, j = 0xff). That is 23 + n <= 55 bytes: one
 * SHA-256 block (padding fixed once per chain) or one Keccak permutation.
 */
#ifndef DSIG_PQ_LMS_INTERNAL_H
#define DSIG_PQ_LMS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pq/lms/lms.h"

/* ---- LM-OTS (lms_ots.c) ---- */

/* @spec RFC 8554 §4.5 Algorithm 3 chain steps j = from .. to-1 in place on tmp (n bytes); with j = 0xff
 * and to = from + 1 the Appendix A / cisco/hash-sigs derivations. */
void dsig_lms_chain(int shake, unsigned n, const uint8_t *I, uint32_t q, uint32_t i, uint8_t *tmp,
                    unsigned from, unsigned to);
/* @spec RFC 8554 §4.3 Algorithm 1 with Appendix A x_q[i]: the public key K of leaf q. */
void dsig_lmots_pub_K(const dsig_lmots_params *op, const uint8_t *I, uint32_t q, const uint8_t *seed,
                      uint8_t *K);
/* @spec RFC 8554 §4.6 Algorithm 4b steps 3-4: the candidate public key Kc from y and the digest Q. */
void dsig_lmots_candidate(const dsig_lmots_params *op, const uint8_t *I, uint32_t q, const uint8_t *Q,
                          const uint8_t *y, uint8_t *Kc);
/* Start H(I ‖ u32str(q) ‖ u16str(D_MESG) ‖ C ‖ ...) (RFC 8554 §4.5 Algorithm 3 step 4). */
void dsig_lms_mesg_init(dsig_lms_hash *h, int shake, const uint8_t *I, uint32_t q, const uint8_t *C,
                        unsigned n);

/* ---- LMS trees (lms_tree.c) ---- */

/* A short one-shot hash (tree nodes): n bytes of SHA-256 or SHAKE256 over in. */
void dsig_lms_hash1(int shake, uint8_t *out, size_t n, const uint8_t *in, size_t len);
/* @spec RFC 8554 §5.3 leaf T[r] = H(I ‖ u32str(r) ‖ u16str(D_LEAF) ‖ K). */
void dsig_lms_leaf_node(const dsig_lms_params *lp, const uint8_t *I, uint32_t r, const uint8_t *K,
                        uint8_t *out);
/* @spec RFC 8554 §5.3 interior T[r] = H(I ‖ u32str(r) ‖ u16str(D_INTR) ‖ left ‖ right). */
void dsig_lms_inner_node(const dsig_lms_params *lp, const uint8_t *I, uint32_t r, const uint8_t *left,
                         const uint8_t *right, uint8_t *out);
/* Start building the key of (SEED, I) leaf by leaf (buffers of a previous key of the same set
 * reused); DSIG_OK or an error (k cleared). */
int dsig_lms_key_begin(dsig_lms_key *k, const dsig_lms_params *lp, const dsig_lmots_params *op,
                       const uint8_t *I, const uint8_t *seed);
/* Compute the next leaf of k and every interior node it completes. */
void dsig_lms_key_step(dsig_lms_key *k);

/* 1 once every leaf of k is computed (the tree and public key usable). */
static inline int dsig_lms_key_complete(const dsig_lms_key *k)
{
    return k->nodes && k->done == 1u << k->lp->h;
}

#endif
