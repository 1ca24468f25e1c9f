/*
 * bench/bench_ping_proto.c — the byte layouts of `dsig ping`'s own messages (bench_ping_internal.h
 * describes them): round headers, HELLO, END_ACK. Big-endian through the project's one copy of the
 * byte helpers (src/core/bytes.h, header only).
 */
#include <string.h>

#include "bench_ping_internal.h"
#include "core/bytes.h"

/* Write a round header. */
void rhdr_put(uint8_t out[RHDR], const rhdr *h)
{
    memset(out, 0, RHDR);
    out[0] = h->kind;
    out[1] = h->scheme;
    out[2] = h->flags;
    dsig_store_be32(out + 4, h->seq);
    dsig_store_be64(out + 8, h->r_verify);
    dsig_store_be64(out + 16, h->r_sign);
    dsig_store_be32(out + 24, h->msg_len);
    dsig_store_be32(out + 28, h->sig_len);
}

/* Read and check a round payload: header, lengths, scheme. */
int rhdr_get(const uint8_t *p, size_t len, rhdr *h, const uint8_t **msg, const uint8_t **sig)
{
    if (len < RHDR)
        return -1;
    h->kind = p[0];
    h->scheme = p[1];
    h->flags = p[2];
    h->seq = dsig_load_be32(p + 4);
    h->r_verify = dsig_load_be64(p + 8);
    h->r_sign = dsig_load_be64(p + 16);
    h->msg_len = dsig_load_be32(p + 24);
    h->sig_len = dsig_load_be32(p + 28);
    if (h->scheme >= PING_NSCHEMES || h->msg_len > PING_MAX_MSG || h->sig_len > SIG_CAP ||
        (uint64_t)RHDR + h->msg_len + h->sig_len != len)
        return -1;
    *msg = p + RHDR;
    *sig = p + RHDR + h->msg_len;
    return 0;
}

/* "DSPG" ‖ version ‖ schemes ‖ zeros. */
void hello_put(uint8_t out[HELLO_BYTES - 1], unsigned schemes)
{
    memcpy(out, "DSPG", 4);
    out[4] = PING_VERSION;
    out[5] = (uint8_t)schemes;
    memset(out + 6, 0, HELLO_BYTES - 7);
}

/* Check a HELLO body; the schemes it announces. */
int hello_get(const uint8_t *p, size_t len, unsigned *schemes)
{
    if (len != HELLO_BYTES - 1 || memcmp(p, "DSPG", 4) != 0 || p[4] != PING_VERSION)
        return -1;
    *schemes = p[5] & ((1u << PING_NSCHEMES) - 1);
    return 0;
}

/* fast ‖ slow ‖ background CPU ns ‖ wall ns. */
void end_ack_put(uint8_t out[END_ACK_BYTES], const ping_end_ack *a)
{
    dsig_store_be64(out, a->fast);
    dsig_store_be64(out + 8, a->slow);
    dsig_store_be64(out + 16, a->bg_ns);
    dsig_store_be64(out + 24, a->wall_ns);
}

void end_ack_get(const uint8_t in[END_ACK_BYTES], ping_end_ack *a)
{
    a->fast = dsig_load_be64(in);
    a->slow = dsig_load_be64(in + 8);
    a->bg_ns = dsig_load_be64(in + 16);
    a->wall_ns = dsig_load_be64(in + 24);
}
