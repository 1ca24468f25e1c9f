/*
 * src/hybrid/params.c — DSig parameter sets: validation, derived sizes, parameter ids, named presets.
 */
#include <string.h>

#include "core/internal.h"
#include "hybrid/params.h"

/* Parameter id (docs/dsig-format.md §2): byte0 = ots | hash<<4, byte1 = log_w or log_t, byte2 = k,
 * byte3 = log_batch; read as a little-endian u32. */
#define HB_ID(ots, hash, a, k, lb) \
    ((uint32_t)(ots) | ((uint32_t)(hash) << 4) | ((uint32_t)(a) << 8) | ((uint32_t)(k) << 16) | \
     ((uint32_t)(lb) << 24))

/* W-OTS+ sizes: len1 = ⌈128/log_w⌉, len2 = digits of the largest checksum len1·(w−1) in base w. */
#define WL1(lw) ((128u + (lw) - 1u) / (lw))
#define SIGB(values, lb) (47u + (values) + 32u * (lb) + 64u)
#define BMSG(lb) (77u + 32u * (1u << (lb)))

/* A W-OTS+ preset with batch 128 (len2 given: 8, 4, 3, 3 for log_w 1..4). */
#define WOTS_PRESET(nm, hh, lw, l2)                                                            \
    {                                                                                           \
        .name = nm, .id = HB_ID(DSIG_HB_OTS_WOTS, hh, lw, 0, 7), .ots = DSIG_HB_OTS_WOTS,     \
        .hash = hh, .log_w = lw, .log_t = 0, .k = 0, .log_batch = 7, .n = DSIG_HB_WOTS_N,      \
        .w = 1u << (lw), .len1 = WL1(lw), .len2 = l2, .chains = WL1(lw) + (l2), .levels = 1u << (lw), \
        .digest_bytes = (WL1(lw) * (lw) + 7u) / 8u, .batch = 128,                                 \
        .sig_bytes = SIGB((WL1(lw) + (l2)) * 18u, 7), .table_bytes = (1u << (lw)) * (WL1(lw) + (l2)) * 18u, \
        .batch_msg_bytes = BMSG(7)                                                                \
    }

#define HORS_PRESET(nm, hh, lt, kk)                                                            \
    {                                                                                           \
        .name = nm, .id = HB_ID(DSIG_HB_OTS_HORS, hh, lt, kk, 7), .ots = DSIG_HB_OTS_HORS,    \
        .hash = hh, .log_w = 0, .log_t = lt, .k = kk, .log_batch = 7, .n = DSIG_HB_HORS_N,    \
        .w = 1, .len1 = kk, .len2 = 0, .chains = 1u << (lt), .levels = 2,                         \
        .digest_bytes = ((kk) * (lt) + 7u) / 8u, .batch = 128,                                     \
        .sig_bytes = SIGB((1u << (lt)) * 16u, 7), .table_bytes = 2u * (1u << (lt)) * 16u,        \
        .batch_msg_bytes = BMSG(7)                                                                \
    }

const dsig_hb_params dsig_hb_wots4_haraka = WOTS_PRESET("wots4-haraka-b128", DSIG_HB_HASH_HARAKA, 2, 4);
const dsig_hb_params dsig_hb_wots2_haraka = WOTS_PRESET("wots2-haraka-b128", DSIG_HB_HASH_HARAKA, 1, 8);
const dsig_hb_params dsig_hb_wots8_haraka = WOTS_PRESET("wots8-haraka-b128", DSIG_HB_HASH_HARAKA, 3, 3);
const dsig_hb_params dsig_hb_wots16_haraka = WOTS_PRESET("wots16-haraka-b128", DSIG_HB_HASH_HARAKA, 4, 3);
const dsig_hb_params dsig_hb_wots4_sha256 = WOTS_PRESET("wots4-sha256-b128", DSIG_HB_HASH_SHA256, 2, 4);
const dsig_hb_params dsig_hb_wots4_blake3 = WOTS_PRESET("wots4-blake3-b128", DSIG_HB_HASH_BLAKE3, 2, 4);
const dsig_hb_params dsig_hb_hors64_haraka = HORS_PRESET("hors-k64-t256-haraka-b128", DSIG_HB_HASH_HARAKA, 8, 64);
const dsig_hb_params dsig_hb_hors32_haraka = HORS_PRESET("hors-k32-t512-haraka-b128", DSIG_HB_HASH_HARAKA, 9, 32);
const dsig_hb_params dsig_hb_hors16_haraka = HORS_PRESET("hors-k16-t4096-haraka-b128", DSIG_HB_HASH_HARAKA, 12, 16);

const dsig_hb_params *const dsig_hb_presets[] = {
    &dsig_hb_wots4_haraka, &dsig_hb_wots2_haraka,  &dsig_hb_wots8_haraka,
    &dsig_hb_wots16_haraka, &dsig_hb_wots4_sha256, &dsig_hb_wots4_blake3,
    &dsig_hb_hors64_haraka, &dsig_hb_hors32_haraka, &dsig_hb_hors16_haraka, NULL,
};

/* The default parameter set: W-OTS+ w=4, Haraka, batch 128. */
const dsig_hb_params *dsig_hb_params_default(void)
{
    return &dsig_hb_wots4_haraka;
}

/* Preset by name. */
const dsig_hb_params *dsig_hb_params_by_name(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; dsig_hb_presets[i]; i++)
        if (strcmp(dsig_hb_presets[i]->name, name) == 0) return dsig_hb_presets[i];
    return NULL;
}

/* Preset by parameter id. */
const dsig_hb_params *dsig_hb_params_by_id(uint32_t id)
{
    for (size_t i = 0; dsig_hb_presets[i]; i++)
        if (dsig_hb_presets[i]->id == id) return dsig_hb_presets[i];
    return NULL;
}

/* floor(log2(k)) for k ≥ 1. */
static unsigned ilog2(unsigned k)
{
    unsigned r = 0;
    while (k >>= 1) r++;
    return r;
}

/* Compute every field of a parameter set from its primary choices, validating them. */
int dsig_hb_params_init(dsig_hb_params *p, unsigned ots, unsigned hash, unsigned log_w, unsigned log_t,
                        unsigned k, unsigned log_batch)
{
    if (!p) return dsig_fail(DSIG_E_ARG, "DSig params: NULL output");
    memset(p, 0, sizeof *p);
    if (hash < DSIG_HB_HASH_HARAKA || hash > DSIG_HB_HASH_BLAKE3)
        return dsig_fail(DSIG_E_ARG, "DSig params: unknown chain hash %u", hash);
    if (log_batch > DSIG_HB_MAX_LOG_BATCH)
        return dsig_fail(DSIG_E_ARG, "DSig params: log2 batch size %u outside 0..10", log_batch);
    p->name = "custom";
    p->ots = (uint8_t)ots;
    p->hash = (uint8_t)hash;
    p->log_batch = (uint8_t)log_batch;
    p->batch = 1u << log_batch;
    if (ots == DSIG_HB_OTS_WOTS) {
        if (log_w < 1 || log_w > 4) return dsig_fail(DSIG_E_ARG, "DSig params: W-OTS+ log2 w %u outside 1..4", log_w);
        if (log_t != 0 || k != 0) return dsig_fail(DSIG_E_ARG, "DSig params: W-OTS+ takes no HORS k / t");
        unsigned w = 1u << log_w, l1 = WL1(log_w), maxsum = l1 * (w - 1), l2 = 0;
        for (unsigned long pw = 1; pw <= maxsum; pw *= w) l2++;
        p->log_w = (uint8_t)log_w;
        p->n = DSIG_HB_WOTS_N;
        p->w = (uint16_t)w;
        p->len1 = (uint16_t)l1;
        p->len2 = (uint16_t)l2;
        p->chains = (uint16_t)(l1 + l2);
        p->levels = (uint16_t)w;
        p->digest_bytes = (uint16_t)((l1 * log_w + 7) / 8);
        p->id = HB_ID(ots, hash, log_w, 0, log_batch);
    } else if (ots == DSIG_HB_OTS_HORS) {
        if (log_w != 0) return dsig_fail(DSIG_E_ARG, "DSig params: HORS takes no W-OTS+ log2 w");
        if (log_t < 4 || log_t > 12) return dsig_fail(DSIG_E_ARG, "DSig params: HORS log2 t %u outside 4..12", log_t);
        if (k < 1 || k > 255 || k >= (1u << log_t))
            return dsig_fail(DSIG_E_ARG, "DSig params: HORS k %u outside 1..min(255, t-1)", k);
        if (k * (log_t - ilog2(k)) < 128)
            return dsig_fail(DSIG_E_ARG, "DSig params: HORS k=%u t=2^%u gives under 128-bit security", k, log_t);
        p->log_t = (uint8_t)log_t;
        p->k = (uint16_t)k;
        p->n = DSIG_HB_HORS_N;
        p->w = 1;
        p->len1 = (uint16_t)k;
        p->chains = (uint16_t)(1u << log_t);
        p->levels = 2;
        p->digest_bytes = (uint16_t)((k * log_t + 7) / 8);
        p->id = HB_ID(ots, hash, log_t, k, log_batch);
    } else {
        return dsig_fail(DSIG_E_ARG, "DSig params: unknown one-time scheme %u", ots);
    }
    p->sig_bytes = SIGB((size_t)p->chains * p->n, log_batch);
    p->table_bytes = (size_t)p->levels * p->chains * p->n;
    p->batch_msg_bytes = BMSG(log_batch);
    return DSIG_OK;
}

/* Recompute a parameter set from its primary fields and check every derived field matches. */
int dsig_hb_params_check(const dsig_hb_params *p)
{
    dsig_hb_params q;
    if (!p) return dsig_fail(DSIG_E_ARG, "DSig params: NULL");
    int rc = dsig_hb_params_init(&q, p->ots, p->hash, p->log_w, p->log_t, p->k, p->log_batch);
    if (rc != DSIG_OK) return rc;
    if (q.id != p->id || q.n != p->n || q.w != p->w || q.len1 != p->len1 || q.len2 != p->len2 ||
        q.chains != p->chains || q.levels != p->levels || q.digest_bytes != p->digest_bytes ||
        q.batch != p->batch || q.sig_bytes != p->sig_bytes || q.table_bytes != p->table_bytes ||
        q.batch_msg_bytes != p->batch_msg_bytes)
        return dsig_fail(DSIG_E_ARG, "DSig params: derived fields of \"%s\" are inconsistent",
                         p->name ? p->name : "?");
    return DSIG_OK;
}

/* Copy of a parameter set with another batch size. */
int dsig_hb_params_with_batch(dsig_hb_params *out, const dsig_hb_params *p, unsigned log_batch)
{
    if (!p) return dsig_fail(DSIG_E_ARG, "DSig params: NULL");
    return dsig_hb_params_init(out, p->ots, p->hash, p->log_w, p->log_t, p->k, log_batch);
}
