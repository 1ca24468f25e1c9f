/*
 * src/pq/xmss/xmss_sign.c — the parts of an XMSS signature outside the traversal: the index encoding,
 * the layer-0 WOTS+ signature of the message digest, and the H_msg key prefix.
 */
#include <string.h>

#include "dsig/mem.h"
#include "pq/xmss/xmss_internal.h"

/* Index encoded in a signature (RFC 8391 §4.1.8: 4 bytes; §4.2.4: ceil(h/8) bytes). */
uint64_t dsig_xmss_sig_index(const dsig_xmss_params *p, const uint8_t *sig)
{
    uint64_t q = 0;
    for (unsigned i = 0; i < p->idx_bytes; i++)
        q = q << 8 | sig[i];
    return q;
}

/* The layer-0 WOTS+ signature of the message digest. */
void dsig_xmss_sign_finish(const dsig_xmss_hash *c, const uint8_t *digest, uint8_t *sig)
{
    const dsig_xmss_params *p = c->p;
    uint64_t q = dsig_xmss_sig_index(p, sig);
    uint8_t scr[SCRATCH];
    uint32_t a[8];
    adrs_init(a, 0, p->mt ? q >> p->t : 0, 0);
    a[4] = (uint32_t)(q & (((uint64_t)1 << p->t) - 1));
    dsig_xmss_wots_sign(c, sig + p->idx_bytes + p->n, digest, a, scr);
    dsig_memzero(scr, sizeof scr);
}

/* @spec RFC 8391 §4.1.9 / §4.2.4 H_msg key: toByte(2, padlen) ‖ r ‖ root ‖ toByte(idx, n). */
size_t dsig_xmss_hmsg_prefix(const dsig_xmss_params *p, uint8_t *out, const uint8_t *r,
                             const uint8_t *root, uint64_t idx)
{
    size_t o = p->padlen;
    memset(out, 0, o);
    out[o - 1] = PAD_HMSG;
    memcpy(out + o, r, p->n);
    o += p->n;
    memcpy(out + o, root, p->n);
    o += p->n;
    to_byte(out + o, idx, p->n);
    return o + p->n;
}
