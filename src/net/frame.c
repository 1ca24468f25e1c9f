/*
 * src/net/frame.c — the frame header (encode, strict validation) and the incremental frame decoder.
 * Wire format in net.h and docs/net.md.
 */
#include <string.h>

#include "core/internal.h"
#include "net/net.h"

/* Write the 12-byte header of a frame. */
void dsig_net_frame_header(uint8_t out[DSIG_NET_HDR_BYTES], uint8_t type, uint32_t payload_len)
{
    out[0] = DSIG_NET_MAGIC0;
    out[1] = DSIG_NET_MAGIC1;
    out[2] = DSIG_NET_MAGIC2;
    out[3] = DSIG_NET_MAGIC3;
    out[4] = DSIG_NET_VERSION;
    out[5] = type;
    out[6] = 0;
    out[7] = 0;
    out[8] = (uint8_t)(payload_len >> 24);
    out[9] = (uint8_t)(payload_len >> 16);
    out[10] = (uint8_t)(payload_len >> 8);
    out[11] = (uint8_t)payload_len;
}

/* Validate a complete header; see net.h. */
int dsig_net_header_parse(const uint8_t hdr[DSIG_NET_HDR_BYTES], uint32_t max_payload, uint8_t *type,
                          uint32_t *len)
{
    if (hdr[0] != DSIG_NET_MAGIC0 || hdr[1] != DSIG_NET_MAGIC1 || hdr[2] != DSIG_NET_MAGIC2 ||
        hdr[3] != DSIG_NET_MAGIC3)
        return dsig_fail(DSIG_E_FORMAT, "net: bad frame magic");
    if (hdr[4] != DSIG_NET_VERSION)
        return dsig_fail(DSIG_E_FORMAT, "net: unsupported frame version %u", hdr[4]);
    if (hdr[6] != 0 || hdr[7] != 0)
        return dsig_fail(DSIG_E_FORMAT, "net: reserved header bits set");
    uint8_t t = hdr[5];
    uint32_t l = (uint32_t)hdr[8] << 24 | (uint32_t)hdr[9] << 16 | (uint32_t)hdr[10] << 8 | hdr[11];
    if (t == DSIG_NET_T_PING || t == DSIG_NET_T_PONG) {
        if (l != DSIG_NET_PING_BYTES)
            return dsig_fail(DSIG_E_FORMAT, "net: heartbeat frame of %u bytes (want %u)", l,
                             DSIG_NET_PING_BYTES);
    } else if (t < DSIG_NET_T_APP_MIN || t > DSIG_NET_T_APP_MAX) {
        return dsig_fail(DSIG_E_FORMAT, "net: unknown frame type 0x%02x", t);
    }
    if (l > max_payload)
        return dsig_fail(DSIG_E_TOO_LARGE, "net: frame payload of %u bytes exceeds the maximum %u", l,
                         max_payload);
    *type = t;
    *len = l;
    return DSIG_OK;
}

/* Set up an empty decoder (no allocation until a split frame needs one). */
void dsig_net_decoder_init(dsig_net_decoder *d, uint32_t max_payload)
{
    memset(d, 0, sizeof *d);
    d->max_payload = max_payload;
}

/* Forget a partial frame and a sticky error; keep the buffer for the next connection. */
void dsig_net_decoder_reset(dsig_net_decoder *d)
{
    d->error = 0;
    d->hdr_have = 0;
    d->need = d->have = 0;
    d->type = 0;
}

/* Free the buffer. */
void dsig_net_decoder_clear(dsig_net_decoder *d)
{
    dsig_xfree(d->buf, 0);
    d->buf = NULL;
    d->cap = 0;
    dsig_net_decoder_reset(d);
}

/* Nonzero while part of a frame is held. */
int dsig_net_decoder_midframe(const dsig_net_decoder *d)
{
    return d->hdr_have != 0;
}

/* Make room for a payload of d->need bytes (geometric growth, capped at max_payload). */
static int decoder_reserve(dsig_net_decoder *d)
{
    if (d->cap >= d->need)
        return DSIG_OK;
    uint64_t cap = d->cap ? (uint64_t)d->cap * 2 : 4096;
    if (cap < d->need)
        cap = d->need;
    if (cap > d->max_payload)
        cap = d->max_payload;
    uint8_t *nb = dsig_realloc(d->buf, (size_t)cap);
    if (!nb)
        return dsig_fail(DSIG_E_NOMEM, "net: out of memory for a %u-byte frame", d->need);
    d->buf = nb;
    d->cap = (uint32_t)cap;
    return DSIG_OK;
}

/* Deliver the assembled frame and get ready for the next header. */
static int decoder_emit(dsig_net_decoder *d, const uint8_t *payload, dsig_net_frame_fn fn, void *arg)
{
    uint8_t type = d->type;
    uint32_t len = d->need;
    d->hdr_have = 0;
    d->need = d->have = 0;
    d->frames++;
    return fn ? fn(arg, type, payload, len) : 0;
}

/* Feed bytes; see net.h. */
int dsig_net_decoder_feed(dsig_net_decoder *d, const uint8_t *in, size_t n, dsig_net_frame_fn fn,
                          void *arg, size_t *consumed)
{
    size_t pos = 0;
    int rc = DSIG_OK;
    if (consumed)
        *consumed = 0;
    if (d->error)
        return d->error;
    while (pos < n) {
        if (d->hdr_have < DSIG_NET_HDR_BYTES) {
            /* Fast path: a whole frame in place, nothing held. */
            if (d->hdr_have == 0 && n - pos >= DSIG_NET_HDR_BYTES) {
                rc = dsig_net_header_parse(in + pos, d->max_payload, &d->type, &d->need);
                if (rc != DSIG_OK)
                    goto fail;
                if (n - pos - DSIG_NET_HDR_BYTES >= d->need) {
                    const uint8_t *payload = in + pos + DSIG_NET_HDR_BYTES;
                    pos += DSIG_NET_HDR_BYTES + d->need;
                    d->hdr_have = DSIG_NET_HDR_BYTES;
                    rc = decoder_emit(d, payload, fn, arg);
                    if (rc != 0)
                        break;
                    continue;
                }
                memcpy(d->hdr, in + pos, DSIG_NET_HDR_BYTES);
                d->hdr_have = DSIG_NET_HDR_BYTES;
                pos += DSIG_NET_HDR_BYTES;
            } else {
                size_t take = DSIG_NET_HDR_BYTES - d->hdr_have;
                if (take > n - pos)
                    take = n - pos;
                memcpy(d->hdr + d->hdr_have, in + pos, take);
                d->hdr_have += (uint32_t)take;
                pos += take;
                if (d->hdr_have < DSIG_NET_HDR_BYTES)
                    break;
                rc = dsig_net_header_parse(d->hdr, d->max_payload, &d->type, &d->need);
                if (rc != DSIG_OK)
                    goto fail;
            }
            d->have = 0;
            if (d->need == 0) {
                rc = decoder_emit(d, NULL, fn, arg);
                if (rc != 0)
                    break;
                continue;
            }
            rc = decoder_reserve(d);
            if (rc != DSIG_OK)
                goto fail;
            continue;
        }
        /* Assembling a split payload. */
        size_t take = d->need - d->have;
        if (take > n - pos)
            take = n - pos;
        memcpy(d->buf + d->have, in + pos, take);
        d->have += (uint32_t)take;
        pos += take;
        if (d->have == d->need) {
            rc = decoder_emit(d, d->buf, fn, arg);
            if (rc != 0)
                break;
        }
    }
    if (consumed)
        *consumed = pos;
    return rc;
fail:
    d->error = rc;
    if (consumed)
        *consumed = pos;
    return rc;
}
