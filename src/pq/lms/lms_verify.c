/*
 * src/pq/lms/lms_verify.c — HSS and LMS verification (RFC 8554 §5.4.2, §6.3): public key and signature
 * layout checks, then the message digest streamed and every level checked against its public key.
 */
#include <string.h>

#include "core/bytes.h"
#include "core/ct.h"
#include "core/internal.h"
#include "dsig/mem.h"
#include "pq/lms/lms_internal.h"

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
    dsig_lmots_candidate(op, I, q, Q, s + 8 + op->n, Kc);
    const uint8_t *path = s + 4 + 4 + (size_t)op->n * (op->p + 1) + 4;
    uint32_t node = (1u << lp->h) + q;
    dsig_lms_leaf_node(lp, I, node, Kc, tmp);
    for (unsigned i = 0; node > 1; i++, node >>= 1) {
        const uint8_t *pi = path + (size_t)i * lp->m;
        if (node & 1)
            dsig_lms_inner_node(lp, I, node >> 1, pi, tmp, tmp);
        else
            dsig_lms_inner_node(lp, I, node >> 1, tmp, pi, tmp);
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
    dsig_lms_mesg_init(&c->h, op->shake, bp + 8, dsig_load_be32(bs), bs + 8, op->n);
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
        dsig_lms_mesg_init(&h, op->shake, p + 8, dsig_load_be32(s), s + 8, op->n);
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
