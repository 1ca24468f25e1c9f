/*
 * src/pq/xmss/xmss_verify.c — XMSS / XMSS^MT verification of a message digest (RFC 8391 §4.1.10,
 * §4.2.5): the root recomputed layer by layer from the WOTS+ signatures and authentication paths.
 */
#include <string.h>

#include "core/ct.h"
#include "dsig/mem.h"
#include "pq/xmss/xmss_internal.h"

/* @spec RFC 8391 §4.1.10 XMSS_rootFromSig (per layer) and §4.1.10 / §4.2.5 verification. */
int dsig_xmss_verify_digest(const dsig_xmss_hash *c, const uint8_t *root, const uint8_t *digest,
                            const uint8_t *sig)
{
    const dsig_xmss_params *p = c->p;
    unsigned n = p->n, t = p->t;
    uint64_t q = dsig_xmss_sig_index(p, sig);
    if (p->h < 64 && q >> p->h)
        return -1;
    uint8_t node[XMSS_NMAX], pk[XMSS_LEN_MAX * XMSS_NMAX], scr[SCRATCH];
    uint32_t a[8];
    const uint8_t *s = sig + p->idx_bytes + n;
    memcpy(node, digest, n);
    for (unsigned l = 0; l < p->d; l++) {
        uint64_t tree = q >> t;
        uint32_t j = (uint32_t)(q & (((uint64_t)1 << t) - 1));
        adrs_init(a, l, tree, 0);
        a[4] = j;
        dsig_xmss_wots_pk_from_sig(c, pk, s, node, a, scr);
        s += (size_t)p->len * n;
        adrs_init(a, l, tree, 1);
        a[4] = j;
        dsig_xmss_ltree(c, node, pk, a, scr);
        adrs_init(a, l, tree, 2);
        for (unsigned k = 0; k < t; k++, s += n) {
            a[5] = k;
            a[6] = j >> (k + 1);
            if ((j >> k) & 1)
                dsig_xmss_rand_hash(c, node, s, node, a, scr);
            else
                dsig_xmss_rand_hash(c, node, node, s, a, scr);
        }
        q = tree;
    }
    return dsig_ct_equal(node, root, n) ? 0 : -1;
}
