/*
 * src/hybrid/sigformat.c — the signature wire format (docs/dsig-format.md §4): signing with a prepared
 * key (one digest + copies), bounds-checked parsing, and fast / slow verification.
 */
#include <string.h>

#include <sodium.h>

#include "core/ct.h"
#include "core/internal.h"
#include "hybrid/hb_internal.h"

/* Largest message digest + 4 zero bytes of padding for the bit reader (HORS k=255, log_t=12). */
#define HB_MAX_DIGEST (383 + 4)

/* Sign with a prepared key: template prefix, chain values chosen by the digest, template tail. */
int dsig_hb_sign(const dsig_hb_key *key, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                 size_t *sig_len)
{
    if (!key || !key->mem || !key->params) return dsig_fail(DSIG_E_STATE, "DSig sign: one-time key is erased");
    if (!sig || (!msg && len)) return dsig_fail(DSIG_E_ARG, "DSig sign: NULL message or signature buffer");
    const dsig_hb_params *p = key->params;
    if (cap < p->sig_bytes)
        return dsig_fail(DSIG_E_BUFFER, "DSig sign: signature needs %zu bytes, buffer has %zu", p->sig_bytes, cap);
    const size_t vbytes = (size_t)p->chains * p->n, tail = (size_t)p->log_batch * 32 + 64;
    const uint8_t *t = key->mem, *table = key->mem + DSIG_HB_SIG_HEADER + tail;
    uint8_t digest[HB_MAX_DIGEST];

    memcpy(sig, t, DSIG_HB_SIG_HEADER);
    hb_message_digest(p, t + HB_OFF_PKSEED, t + HB_OFF_NONCE, msg, len, digest);
    /* A function of pk_seed and nonce (both in this signature) and the message: public. It picks the
     * chain values to reveal, so the lookups below follow it (and not the secrets). */
    DSIG_CT_DECLASSIFY(digest, sizeof digest);
    if (p->ots == DSIG_HB_OTS_WOTS)
        hb_wots_sign(p, table, digest, sig + HB_OFF_VALUES);
    else
        hb_hors_sign(p, table, digest, sig + HB_OFF_VALUES);
    memcpy(sig + HB_OFF_VALUES + vbytes, t + DSIG_HB_SIG_HEADER, tail);
    if (sig_len) *sig_len = p->sig_bytes;
    return DSIG_OK;
}

/* Bounds-checked parse (exact length, version, parameter id, index < batch). @spec docs §4 */
int dsig_hb_parse(const dsig_hb_params *p, const uint8_t *sig, size_t len, dsig_hb_sig_view *v)
{
    if (!p || !v) return dsig_fail(DSIG_E_ARG, "DSig parse: NULL argument");
    if (!sig) return dsig_fail(DSIG_E_VERIFY, "DSig signature: NULL");
    if (len != p->sig_bytes)
        return dsig_fail(DSIG_E_VERIFY, "DSig signature: length %zu, expected %zu for %s", len, p->sig_bytes,
                         p->name);
    if (sig[HB_OFF_VERSION] != DSIG_HB_VERSION)
        return dsig_fail(DSIG_E_VERIFY, "DSig signature: version %u, expected %u", sig[HB_OFF_VERSION],
                         DSIG_HB_VERSION);
    v->param_id = dsig_load_le32(sig + HB_OFF_PARAM);
    if (v->param_id != p->id)
        return dsig_fail(DSIG_E_VERIFY, "DSig signature: parameter id 0x%08x, expected 0x%08x", v->param_id, p->id);
    v->batch_seq = dsig_load_le64(sig + HB_OFF_SEQ);
    v->index = dsig_load_le16(sig + HB_OFF_INDEX);
    if (v->index >= p->batch)
        return dsig_fail(DSIG_E_VERIFY, "DSig signature: leaf index %u outside the batch of %u", v->index, p->batch);
    const size_t vbytes = (size_t)p->chains * p->n;
    v->pk_seed = sig + HB_OFF_PKSEED;
    v->nonce = sig + HB_OFF_NONCE;
    v->values = sig + HB_OFF_VALUES;
    v->proof = v->values + vbytes;
    v->root_sig = v->proof + (size_t)p->log_batch * 32;
    return DSIG_OK;
}

/* Batch sequence number and index only. */
int dsig_hb_sig_locate(const dsig_hb_params *p, const uint8_t *sig, size_t len, uint64_t *batch_seq,
                       uint32_t *index)
{
    dsig_hb_sig_view v = {0};
    int rc = dsig_hb_parse(p, sig, len, &v);
    if (rc != DSIG_OK) return rc;
    if (batch_seq) *batch_seq = v.batch_seq;
    if (index) *index = v.index;
    return DSIG_OK;
}

/* Leaf implied by a parsed signature and a message. */
int dsig_hb_compute_leaf(const dsig_hb_params *p, const dsig_hb_sig_view *v, const uint8_t *msg, size_t len,
                         uint8_t leaf[DSIG_HB_HASH_BYTES])
{
    uint8_t digest[HB_MAX_DIGEST];
    if (!p || !v || !leaf || (!msg && len)) return dsig_fail(DSIG_E_ARG, "DSig verify: NULL argument");
    hb_message_digest(p, v->pk_seed, v->nonce, msg, len, digest);
    if (p->ots == DSIG_HB_OTS_WOTS)
        hb_wots_leaf(p, v->pk_seed, v->values, digest, leaf);
    else
        hb_hors_leaf(p, v->pk_seed, v->values, digest, leaf);
    return DSIG_OK;
}

/* Fast path against a bare leaf. */
int dsig_hb_verify_leaf(const dsig_hb_params *p, const uint8_t *sig, size_t sig_len, const uint8_t *msg,
                        size_t len, const uint8_t expected_leaf[DSIG_HB_HASH_BYTES])
{
    dsig_hb_sig_view v = {0};
    uint8_t leaf[32];
    if (!expected_leaf) return dsig_fail(DSIG_E_ARG, "DSig verify: NULL expected leaf");
    int rc = dsig_hb_parse(p, sig, sig_len, &v);
    if (rc != DSIG_OK) return rc;
    if ((rc = dsig_hb_compute_leaf(p, &v, msg, len, leaf)) != DSIG_OK) return rc;
    if (!dsig_ct_equal(leaf, expected_leaf, 32))
        return dsig_fail(DSIG_E_VERIFY, "DSig signature: one-time signature does not match leaf %u of batch %llu",
                         v.index, (unsigned long long)v.batch_seq);
    return DSIG_OK;
}

/* The signature's batch_seq, proof nodes and root signature are those of the cached batch. */
int dsig_hb_sig_in_batch(const dsig_hb_params *p, const dsig_hb_batch *batch, const dsig_hb_sig_view *v)
{
    if (v->batch_seq != batch->batch_seq)
        return 0;
    size_t off = 0, width = p->batch;
    uint32_t idx = v->index;
    int same = 1;
    for (unsigned l = 0; l < p->log_batch; l++) {
        same &= memcmp(v->proof + (size_t)l * 32, batch->nodes[off + (idx ^ 1u)], 32) == 0;
        off += width;
        width /= 2;
        idx >>= 1;
    }
    return same & (memcmp(v->root_sig, batch->root_sig, 64) == 0);
}

/* The one-time signature of a signature known to belong to `batch`, against the cached leaf. */
int dsig_hb_verify_in_batch(const dsig_hb_params *p, const dsig_hb_batch *batch, const dsig_hb_sig_view *v,
                            const uint8_t *msg, size_t len)
{
    uint8_t leaf[32];
    int rc = dsig_hb_compute_leaf(p, v, msg, len, leaf);
    if (rc != DSIG_OK) return rc;
    if (!dsig_ct_equal(leaf, batch->nodes[v->index], 32))
        return dsig_fail(DSIG_E_VERIFY, "DSig signature: one-time signature does not match leaf %u of batch %llu",
                         v->index, (unsigned long long)v->batch_seq);
    return DSIG_OK;
}

/* Fast path against a cached, verified batch: same bytes for proof and root signature, then the
 * one-time signature against the cached leaf. */
int dsig_hb_verify_fast(const dsig_hb_params *p, const dsig_hb_batch *batch, const uint8_t *sig, size_t sig_len,
                        const uint8_t *msg, size_t len)
{
    dsig_hb_sig_view v = {0};
    if (!batch || !batch->nodes) return dsig_fail(DSIG_E_ARG, "DSig fast verify: no cached batch");
    int rc = dsig_hb_parse(p, sig, sig_len, &v);
    if (rc != DSIG_OK) return rc;
    if (!batch->params || batch->params->id != p->id)
        return dsig_fail(DSIG_E_ARG, "DSig fast verify: cached batch has other parameters");
    if (!dsig_hb_sig_in_batch(p, batch, &v))
        return dsig_fail(DSIG_E_VERIFY, "DSig signature: batch %llu, proof or root signature are not those of "
                         "the verified batch %llu", (unsigned long long)v.batch_seq,
                         (unsigned long long)batch->batch_seq);
    return dsig_hb_verify_in_batch(p, batch, &v, msg, len);
}

/* Slow path: leaf, root from the proof, Ed25519 on the root message. */
int dsig_hb_verify_slow(const dsig_hb_params *p, const uint8_t *sig, size_t sig_len, const uint8_t *msg,
                        size_t len, const dsig_hb_who *who)
{
    dsig_hb_sig_view v = {0};
    uint8_t leaf[32], root[32], rm[DSIG_HB_ROOT_MSG_BYTES];
    if (!who) return dsig_fail(DSIG_E_ARG, "DSig slow verify: NULL signer identity");
    int rc = dsig_hb_parse(p, sig, sig_len, &v);
    if (rc != DSIG_OK) return rc;
    if ((rc = dsig_hb_compute_leaf(p, &v, msg, len, leaf)) != DSIG_OK) return rc;
    dsig_hb_merkle_root_from_proof(p, leaf, v.index, v.proof, root);
    dsig_hb_root_message(p, who, v.batch_seq, root, rm);
    if (!dsig_ed25519_verify_pk(who->root_pk, rm, sizeof rm, v.root_sig))
        return dsig_fail(DSIG_E_VERIFY,
                         "DSig signature: Ed25519 root signature does not verify for batch %llu leaf %u "
                         "(wrong signer, or a corrupted proof, value, nonce or seed)",
                         (unsigned long long)v.batch_seq, v.index);
    return DSIG_OK;
}
