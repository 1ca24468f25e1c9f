/*
 * src/hybrid/merkle.c — the batch Merkle tree (docs/dsig-format.md §6): node = BLAKE3-keyed(K_node,
 * left ‖ right), keyed differently from leaves, level-major storage, proofs leaf level first.
 */
#include <string.h>

#include "hash/blake3.h"
#include "hybrid/hb_internal.h"

/* Parent of two nodes. @spec docs §6 */
void hb_node(const uint8_t left[32], const uint8_t right[32], uint8_t out[32])
{
    uint8_t blk[64];
    memcpy(blk, left, 32);
    memcpy(blk + 32, right, 32);
    dsig_blake3_hash_block(hb_key(HB_K_NODE), blk, 64, out, 32);
}

/* Every level above the leaves; siblings are adjacent, so a level is one hash64_many call. */
void hb_tree_build(const dsig_hb_params *p, uint8_t (*nodes)[32])
{
    size_t off = 0, width = p->batch;
    while (width > 1) {
        dsig_blake3_hash64_many(hb_key(HB_K_NODE), (const uint8_t(*)[64])nodes[off], width / 2,
                                nodes + off + width);
        off += width;
        width /= 2;
    }
}

/* Siblings of leaf `index` from the leaf level up. */
void hb_tree_proof(const dsig_hb_params *p, const uint8_t (*nodes)[32], uint32_t index, uint8_t *proof)
{
    size_t off = 0, width = p->batch;
    for (unsigned l = 0; l < p->log_batch; l++) {
        memcpy(proof + (size_t)l * 32, nodes[off + (index ^ 1u)], 32);
        off += width;
        width /= 2;
        index >>= 1;
    }
}

/* Root from a leaf and its proof: bit ℓ of the index says whether the running node is the right
 * (1) or left (0) child at level ℓ. @spec docs §6 */
void dsig_hb_merkle_root_from_proof(const dsig_hb_params *p, const uint8_t leaf[DSIG_HB_HASH_BYTES],
                                    uint32_t index, const uint8_t *proof, uint8_t root[DSIG_HB_HASH_BYTES])
{
    uint8_t acc[32];
    memcpy(acc, leaf, 32);
    for (unsigned l = 0; l < p->log_batch; l++) {
        if ((index >> l) & 1u)
            hb_node(proof + (size_t)l * 32, acc, acc);
        else
            hb_node(acc, proof + (size_t)l * 32, acc);
    }
    memcpy(root, acc, 32);
}
