/*
 * src/bft/kv.c — the replicated key-value state machine: PUT / GET / DEL on byte keys, with the
 * client table (last request number and result per client) that makes execution exactly-once.
 * Deterministic: every replica that applies the same operations in the same order holds the same
 * bytes, so the snapshot digest is the state's identity (checkpoints, state transfer).
 */
#include <string.h>

#include "bft/pbft.h"
#include "core/internal.h"

int kv_init(bft_kv *kv, const uint64_t *clients, size_t n)
{
    memset(kv, 0, sizeof *kv);
    kv->items = dsig_calloc(DSIG_BFT_KV_MAX_KEYS, sizeof *kv->items);
    kv->clients = dsig_calloc(n ? n : 1, sizeof *kv->clients);
    if (!kv->items || !kv->clients) {
        kv_free(kv);
        return DSIG_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        kv->clients[i].id = clients[i]; /* ascending: the replica sorted them */
    kv->n_clients = n;
    return DSIG_OK;
}

void kv_free(bft_kv *kv)
{
    dsig_xfree(kv->items, 0);
    dsig_xfree(kv->clients, 0);
    memset(kv, 0, sizeof *kv);
}

kv_client *kv_client_of(bft_kv *kv, uint64_t id)
{
    for (size_t i = 0; i < kv->n_clients; i++)
        if (kv->clients[i].id == id)
            return &kv->clients[i];
    return NULL;
}

/* Key order: shorter first, then bytes. */
static int key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    if (al != bl)
        return al < bl ? -1 : 1;
    return memcmp(a, b, al);
}

/* Position of a key: found (1) at *pos, or where it would go (0). */
static int find(const bft_kv *kv, const uint8_t *key, size_t klen, size_t *pos)
{
    size_t lo = 0, hi = kv->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = key_cmp(kv->items[mid].key, kv->items[mid].klen, key, klen);
        if (c == 0) {
            *pos = mid;
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return 0;
}

size_t kv_apply(bft_kv *kv, const uint8_t *op, size_t len, uint8_t out[DSIG_BFT_MAX_RESULT])
{
    out[0] = DSIG_BFT_KV_BAD_OP;
    if (len < 2 || op[1] == 0 || op[1] > DSIG_BFT_KV_MAX_KEY || (size_t)2 + op[1] > len)
        return 1;
    const uint8_t *key = op + 2, *val = op + 2 + op[1];
    size_t klen = op[1], vlen = len - 2 - klen, pos;
    int found = find(kv, key, klen, &pos);
    switch (op[0]) {
    case DSIG_BFT_KV_PUT:
        if (vlen > DSIG_BFT_KV_MAX_VALUE)
            return 1;
        if (!found) {
            if (kv->n == DSIG_BFT_KV_MAX_KEYS) {
                out[0] = DSIG_BFT_KV_FULL;
                return 1;
            }
            memmove(&kv->items[pos + 1], &kv->items[pos], (kv->n - pos) * sizeof *kv->items);
            kv->n++;
            kv->items[pos].klen = (uint8_t)klen;
            memcpy(kv->items[pos].key, key, klen);
        }
        kv->items[pos].vlen = (uint16_t)vlen;
        memcpy(kv->items[pos].value, val, vlen);
        out[0] = DSIG_BFT_KV_OK;
        return 1;
    case DSIG_BFT_KV_GET:
        if (vlen)
            return 1;
        if (!found) {
            out[0] = DSIG_BFT_KV_NOT_FOUND;
            return 1;
        }
        out[0] = DSIG_BFT_KV_OK;
        memcpy(out + 1, kv->items[pos].value, kv->items[pos].vlen);
        return 1 + (size_t)kv->items[pos].vlen;
    case DSIG_BFT_KV_DEL:
        if (vlen)
            return 1;
        if (!found) {
            out[0] = DSIG_BFT_KV_NOT_FOUND;
            return 1;
        }
        memmove(&kv->items[pos], &kv->items[pos + 1], (kv->n - pos - 1) * sizeof *kv->items);
        kv->n--;
        out[0] = DSIG_BFT_KV_OK;
        return 1;
    default:
        return 1;
    }
}

/* history (32) ‖ items u32 ‖ (klen u8 ‖ key ‖ value blob16)* ‖ clients u16 ‖ (id u64 ‖ t u64 ‖ result
 * blob16)* */
void kv_snapshot(const bft_kv *kv, bft_buf *out)
{
    bb_put(out, kv->hist, 32);
    bb_u32(out, (uint32_t)kv->n);
    for (size_t i = 0; i < kv->n; i++) {
        bb_u8(out, kv->items[i].klen);
        bb_put(out, kv->items[i].key, kv->items[i].klen);
        bb_blob16(out, kv->items[i].value, kv->items[i].vlen);
    }
    bb_u16(out, (uint16_t)kv->n_clients);
    for (size_t i = 0; i < kv->n_clients; i++) {
        bb_u64(out, kv->clients[i].id);
        bb_u64(out, kv->clients[i].t);
        bb_blob16(out, kv->clients[i].result, kv->clients[i].rlen);
    }
}

int kv_restore(bft_kv *kv, const uint8_t *p, size_t len)
{
    bft_rd r;
    rd_init(&r, p, len);
    const uint8_t *hist = rd_take(&r, 32);
    size_t n = rd_u32(&r);
    if (r.bad || n > DSIG_BFT_KV_MAX_KEYS)
        return -1;
    kv_item *items = dsig_calloc(DSIG_BFT_KV_MAX_KEYS, sizeof *items);
    kv_client *cl = dsig_calloc(kv->n_clients ? kv->n_clients : 1, sizeof *cl);
    int ok = items && cl;
    for (size_t i = 0; ok && i < n; i++) {
        size_t klen = rd_u8(&r), vlen;
        const uint8_t *key = rd_take(&r, klen);
        const uint8_t *val = rd_blob16(&r, 0, DSIG_BFT_KV_MAX_VALUE, &vlen);
        if (r.bad || klen == 0 || klen > DSIG_BFT_KV_MAX_KEY ||
            (i && key_cmp(items[i - 1].key, items[i - 1].klen, key, klen) >= 0)) {
            ok = 0;
            break;
        }
        items[i].klen = (uint8_t)klen;
        memcpy(items[i].key, key, klen);
        items[i].vlen = (uint16_t)vlen;
        memcpy(items[i].value, val, vlen);
    }
    size_t nc = ok ? rd_u16(&r) : 0;
    if (ok && nc != kv->n_clients)
        ok = 0;
    for (size_t i = 0; ok && i < nc; i++) {
        cl[i].id = rd_u64(&r);
        cl[i].t = rd_u64(&r);
        size_t rl;
        const uint8_t *res = rd_blob16(&r, 0, DSIG_BFT_MAX_RESULT, &rl);
        if (r.bad || cl[i].id != kv->clients[i].id) {
            ok = 0;
            break;
        }
        cl[i].rlen = (uint16_t)rl;
        memcpy(cl[i].result, res, rl);
    }
    if (!ok || !rd_done(&r)) {
        dsig_xfree(items, 0);
        dsig_xfree(cl, 0);
        return -1;
    }
    dsig_xfree(kv->items, 0);
    dsig_xfree(kv->clients, 0);
    memcpy(kv->hist, hist, 32);
    kv->items = items;
    kv->n = n;
    kv->clients = cl;
    return 0;
}

void kv_digest(const uint8_t *snap, size_t len, uint8_t out[32])
{
    bft_hash("DSig-bft state v1", snap, len, NULL, 0, out);
}

size_t dsig_bft_kv_op(uint8_t *out, size_t cap, int kind, const uint8_t *key, size_t key_len,
                      const uint8_t *value, size_t value_len)
{
    if (!out || !key || key_len == 0 || key_len > DSIG_BFT_KV_MAX_KEY ||
        (kind != DSIG_BFT_KV_PUT && kind != DSIG_BFT_KV_GET && kind != DSIG_BFT_KV_DEL))
        return 0;
    if (kind != DSIG_BFT_KV_PUT)
        value_len = 0;
    if (value_len > DSIG_BFT_KV_MAX_VALUE || (value_len && !value))
        return 0;
    size_t n = 2 + key_len + value_len;
    if (n > cap || n > DSIG_BFT_MAX_OP)
        return 0;
    out[0] = (uint8_t)kind;
    out[1] = (uint8_t)key_len;
    memcpy(out + 2, key, key_len);
    if (value_len)
        memcpy(out + 2 + key_len, value, value_len);
    return n;
}
