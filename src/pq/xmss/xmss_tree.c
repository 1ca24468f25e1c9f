/*
 * src/pq/xmss/xmss_tree.c — XMSS tree hashing (RFC 8391 §4.1.4-§4.1.6): RAND_HASH, L-trees and one leaf.
 */
#include <string.h>

#include "dsig/mem.h"
#include "pq/xmss/xmss_internal.h"

/* @spec RFC 8391 §4.1.4 RAND_HASH(LEFT, RIGHT, SEED, ADRS); out may alias left or right. */
void dsig_xmss_rand_hash(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *left, const uint8_t *right,
                         uint32_t a[8], uint8_t *scr)
{
    unsigned n = c->p->n;
    uint8_t key[XMSS_NMAX], bm[2 * XMSS_NMAX], m[2 * XMSS_NMAX];
    a[7] = 0;
    dsig_xmss_prf_adrs(c, key, a, scr);
    a[7] = 1;
    dsig_xmss_prf_adrs(c, bm, a, scr);
    a[7] = 2;
    dsig_xmss_prf_adrs(c, bm + n, a, scr);
    for (unsigned i = 0; i < n; i++) {
        m[i] = left[i] ^ bm[i];
        m[n + i] = right[i] ^ bm[n + i];
    }
    dsig_xmss_hash_h(c, out, key, m, scr);
}

/* @spec RFC 8391 §4.1.5 ltree: compress a WOTS+ public key (destroyed) into one node. a: type 1. */
void dsig_xmss_ltree(const dsig_xmss_hash *c, uint8_t *out, uint8_t *pk, uint32_t a[8], uint8_t *scr)
{
    unsigned n = c->p->n, l = c->p->len;
    a[5] = 0;
    while (l > 1) {
        unsigned half = l >> 1;
        for (unsigned i = 0; i < half; i++) {
            a[6] = i;
            dsig_xmss_rand_hash(c, pk + i * n, pk + 2 * i * n, pk + (2 * i + 1) * n, a, scr);
        }
        if (l & 1)
            memmove(pk + half * n, pk + (l - 1) * n, n);
        l = half + (l & 1);
        a[5]++;
    }
    memcpy(out, pk, n);
}

/* One leaf of tree `tree` at `layer`: dsig_xmss_ltree(WOTS_genPK) (RFC 8391 §4.1.6 loop body). */
void dsig_xmss_gen_leaf(const dsig_xmss_hash *c, uint8_t *out, unsigned layer, uint64_t tree, uint32_t idx)
{
    uint8_t pk[XMSS_LEN_MAX * XMSS_NMAX], scr[SCRATCH];
    uint32_t a[8];
    adrs_init(a, layer, tree, 0);
    a[4] = idx;
    dsig_xmss_wots_pkgen(c, pk, a, scr);
    adrs_init(a, layer, tree, 1);
    a[4] = idx;
    dsig_xmss_ltree(c, out, pk, a, scr);
    dsig_memzero(scr, sizeof scr);
}
