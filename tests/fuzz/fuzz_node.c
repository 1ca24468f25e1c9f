/*
 * Fuzz target: the node plane's wire formats — the transport's frame decoder (src/net/frame.c), the
 * node's frame payloads HELLO / BATCH / BATCH_ACK (src/node/proto.c) and the replay window over batch
 * sequence numbers (src/node/replay.c). The input is
 *
 *   byte 0   target: 0 decoder, 1 payload parsers, 2 replay window (modulo 3)
 *   decoder: byte 1 = maximum payload (64, 256, 4096 or 65536: bits 0-1) and the frame after which the
 *            whole-buffer feed's callback stops (bits 2-5, 0 = never); byte 2 = split seed; rest = the
 *            byte stream of a connection
 *   parsers: rest = one payload, given to every parser
 *   window:  bytes 1-2 = width (1..1024), then operations of 3 bytes: op (bit 0 mark, else check; bit 1:
 *            the next 8 bytes are an absolute seq) and a signed 16-bit distance from the top
 *
 * Invariants (abort on violation):
 *   - decoder: the frames (type, length, payload) and the final error are the same whether the stream
 *     arrives in one piece (with the callback stopping at a frame boundary and the feed resumed from
 *     *consumed) or split at random points; every frame has a valid header (type, length ≤ maximum);
 *   - parsers: what parses re-encodes to the same bytes; what does not parse says why;
 *   - window: check/mark agree with a reference model (a plain set of marked seqs with RFC 4303's
 *     rules: new above the top, old at a distance ≥ width below it, else seen iff marked).
 */
#include <string.h>

#include "core/internal.h"
#include "fuzz_common.h"
#include "net/net.h"
#include "node/node_internal.h"

#define FN_MAX_INPUT 262144u
#define FN_MAX_FRAMES 4096u

struct frames {
    size_t n;
    uint8_t type[FN_MAX_FRAMES];
    uint32_t len[FN_MAX_FRAMES];
    uint64_t hash[FN_MAX_FRAMES];
    uint32_t max_payload;
    size_t stop_at; /* stop the feed after this many frames (0 never) */
};

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static int on_frame(void *arg, uint8_t type, const uint8_t *payload, uint32_t len)
{
    struct frames *f = arg;
    FUZZ_CHECK(len <= f->max_payload, "frame of %u bytes delivered over the maximum %u", len, f->max_payload);
    FUZZ_CHECK(type == DSIG_NET_T_PING || type == DSIG_NET_T_PONG ||
                   (type >= DSIG_NET_T_APP_MIN && type <= DSIG_NET_T_APP_MAX),
               "frame of type 0x%02x delivered", type);
    FUZZ_CHECK((type != DSIG_NET_T_PING && type != DSIG_NET_T_PONG) || len == DSIG_NET_PING_BYTES,
               "heartbeat of %u bytes delivered", len);
    if (f->n < FN_MAX_FRAMES) {
        f->type[f->n] = type;
        f->len[f->n] = len;
        f->hash[f->n] = fnv1a(payload, len);
    }
    f->n++;
    return f->stop_at && f->n % f->stop_at == 0;
}

/* Split feeding adapter for fuzz_feed. */
struct split_arg {
    dsig_net_decoder *d;
    struct frames *f;
    int rc;
};

static int feed_piece(void *arg, const uint8_t *p, size_t n)
{
    struct split_arg *s = arg;
    size_t used = 0;
    int rc = dsig_net_decoder_feed(s->d, p, n, on_frame, s->f, &used);
    FUZZ_CHECK(rc != DSIG_OK || used == n, "decoder consumed %zu of %zu bytes without stopping", used, n);
    if (rc && !s->rc)
        s->rc = rc;
    return 0; /* go on feeding: a dead stream must keep returning its error */
}

static void fuzz_decoder(const uint8_t *d, size_t n)
{
    if (n < 2)
        return;
    static const uint32_t maxes[4] = {64, 256, 4096, 65536};
    const uint32_t max = maxes[d[0] & 3];
    const uint32_t split = d[1] | 0x100u;
    const uint8_t *s = d + 2;
    const size_t sl = n - 2;
    static struct frames f1, f2;
    memset(&f1, 0, sizeof f1);
    memset(&f2, 0, sizeof f2);
    f1.max_payload = f2.max_payload = max;
    f1.stop_at = (d[0] >> 2) & 15;

    dsig_net_decoder d1, d2;
    dsig_net_decoder_init(&d1, max);
    dsig_net_decoder_init(&d2, max);
    uint8_t *buf = fuzz_dup(s, sl);
    size_t off = 0;
    int r1 = DSIG_OK;
    for (;;) {
        size_t used = 0;
        r1 = dsig_net_decoder_feed(&d1, buf + off, sl - off, on_frame, &f1, &used);
        FUZZ_CHECK(used <= sl - off, "consumed past the input");
        off += used;
        if (r1 != 1)
            break;
        FUZZ_CHECK(used > 0, "the callback stopped the feed without a frame");
        FUZZ_CHECK(!dsig_net_decoder_midframe(&d1), "stopped inside a frame");
    }
    struct split_arg sa = {&d2, &f2, DSIG_OK};
    fuzz_feed(feed_piece, &sa, buf, sl, split);
    FUZZ_CHECK(r1 == sa.rc, "whole-buffer feed ended with %d, split feed with %d", r1, sa.rc);
    FUZZ_CHECK(f1.n == f2.n, "whole-buffer feed gave %zu frames, split feed %zu", f1.n, f2.n);
    for (size_t i = 0; i < f1.n && i < FN_MAX_FRAMES; i++)
        FUZZ_CHECK(f1.type[i] == f2.type[i] && f1.len[i] == f2.len[i] && f1.hash[i] == f2.hash[i],
                   "frame %zu differs between the whole and the split feed", i);
    if (r1) { /* the stream is dead: it stays dead */
        size_t used = 0;
        FUZZ_CHECK(dsig_net_decoder_feed(&d1, (const uint8_t *)"DSGN", 4, on_frame, &f1, &used) == r1,
                   "a dead stream came back to life");
    }
    dsig_net_decoder_clear(&d1);
    dsig_net_decoder_clear(&d2);
    free(buf);
}

static void fuzz_payloads(const uint8_t *p, size_t n)
{
    uint8_t *b = fuzz_dup(p, n);
    uint64_t id, inst, signer, seq;
    uint8_t nonce[NODE_NONCE_BYTES];
    int rc = node_hello_parse(b, n, &id, &inst, nonce);
    fuzz_check_detail(rc, "node_hello_parse");
    if (rc == DSIG_OK) {
        uint8_t e[NODE_HELLO_BYTES];
        node_hello_encode(e, id, inst, nonce);
        FUZZ_CHECK(n == sizeof e && memcmp(e, b, n) == 0, "HELLO does not re-encode to itself");
    }
    struct node_batch_view v;
    rc = node_batch_parse(b, n, &v);
    fuzz_check_detail(rc, "node_batch_parse");
    if (rc == DSIG_OK) {
        uint8_t e[NODE_BATCH_HDR_MAX];
        size_t el = node_batch_prefix(e, v.signer, v.group, v.group_len);
        FUZZ_CHECK(v.msg == b + el && v.msg_len == n - el && memcmp(e, b, el) == 0, "BATCH does not re-encode");
        FUZZ_CHECK(v.seq == node_batch_msg_seq(v.msg), "BATCH seq");
    }
    const char *g;
    size_t gl;
    rc = node_ack_parse(b, n, &signer, &seq, &g, &gl);
    fuzz_check_detail(rc, "node_ack_parse");
    if (rc == DSIG_OK) {
        uint8_t e[NODE_ACK_MAX];
        size_t el = node_ack_encode(e, signer, seq, g, gl);
        FUZZ_CHECK(el == n && memcmp(e, b, n) == 0, "BATCH_ACK does not re-encode to itself");
    }
    free(b);
}

/* The reference window: every marked seq, and the top. */
static int model_check(const uint64_t *marked, size_t nm, uint64_t top, unsigned width, uint64_t seq)
{
    if (!nm || seq > top)
        return NODE_WIN_NEW;
    if (top - seq >= width)
        return NODE_WIN_OLD;
    for (size_t i = 0; i < nm; i++)
        if (marked[i] == seq)
            return NODE_WIN_SEEN;
    return NODE_WIN_NEW;
}

static void fuzz_window(const uint8_t *d, size_t n)
{
    fuzz_in in = {d, n};
    const unsigned width = 1u + fuzz_u16(&in) % (64u * NODE_WIN_WORDS);
    static uint64_t marked[FN_MAX_INPUT / 3];
    size_t nm = 0;
    uint64_t top = 0;
    struct node_window w;
    memset(&w, 0, sizeof w);
    while (in.n >= 3) {
        unsigned op = fuzz_u8(&in);
        int16_t delta = (int16_t)fuzz_u16(&in);
        uint64_t seq = top + (uint64_t)(int64_t)delta; /* wraps below 0: a huge seq, also worth a try */
        if (op & 2) {
            size_t l;
            const uint8_t *p = fuzz_take(&in, 8, &l);
            seq = 0;
            for (size_t i = 0; i < l; i++)
                seq = seq << 8 | p[i];
        }
        int expect = model_check(marked, nm, top, width, seq);
        int got = node_window_check(&w, width, seq);
        FUZZ_CHECK(got == expect, "window (width %u, top %llu): seq %llu classified %d, expected %d", width,
                   (unsigned long long)top, (unsigned long long)seq, got, expect);
        if ((op & 1) && expect == NODE_WIN_NEW) { /* the node marks only new seqs, after verification */
            node_window_mark(&w, width, seq);
            marked[nm++] = seq;
            if (nm == 1 || seq > top)
                top = seq;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FN_MAX_INPUT)
        return 0;
    switch (data[0] % 3) {
    case 0:
        fuzz_decoder(data + 1, size - 1);
        break;
    case 1:
        fuzz_payloads(data + 1, size - 1);
        break;
    default:
        fuzz_window(data + 1, size - 1);
        break;
    }
    return 0;
}

/* Seeds: a connection's stream (HELLO, AUTH, BATCH, BATCH_ACK, a heartbeat, an application frame), each
 * payload alone, and window operations. */
static void seeds(void)
{
    uint8_t nonce[NODE_NONCE_BYTES];
    memset(nonce, 0x6e, sizeof nonce);
    uint8_t hello[NODE_HELLO_BYTES], ack[NODE_ACK_MAX], batch[NODE_BATCH_HDR_MAX + 64], auth[NODE_AUTH_BYTES];
    node_hello_encode(hello, 3, 77, nonce);
    size_t al = node_ack_encode(ack, 3, 0x0100000000000005ull, "grp", 3);
    size_t bl = node_batch_prefix(batch, 3, "grp", 3);
    memset(batch + bl, 0, 64);
    batch[bl] = 1; /* version, then the parameter id and the seq of a batch message */
    batch[bl + NODE_BATCH_MSG_SEQ_OFF] = 5;
    bl += 64;
    memset(auth, 0xa5, sizeof auth);
    const struct {
        uint8_t type;
        const uint8_t *p;
        size_t n;
    } fr[] = {{DSIG_NODE_T_HELLO, hello, sizeof hello}, {DSIG_NODE_T_AUTH, auth, sizeof auth},
              {DSIG_NODE_T_BATCH, batch, bl}, {DSIG_NODE_T_BATCH_ACK, ack, al},             {DSIG_NET_T_PING, nonce, 8}, {0x20, (const uint8_t *)"app", 3}};
    for (unsigned variant = 0; variant < 2; variant++) {
        const uint8_t head[3] = {0, (uint8_t)(variant ? 2 | (2 << 2) : 3), 0x5a};
        fuzz_seed_begin();
        fuzz_seed_add(head, 3);
        for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
            uint8_t h[DSIG_NET_HDR_BYTES];
            dsig_net_frame_header(h, fr[i].type, (uint32_t)fr[i].n);
            fuzz_seed_add(h, sizeof h);
            fuzz_seed_add(fr[i].p, fr[i].n);
        }
        fuzz_seed_end();
    }
    for (size_t i = 0; i < 4; i++) {
        fuzz_seed2("\x01", 1, fr[i].p, fr[i].n);
    }
    static const uint8_t win[] = {2,    64,   0,    1, 0,    0,    1, 1, 0, 1, 0xff, 0xff, 1, 0, 1,
                                  0,    0xc0, 0xff, 1, 0x40, 0,    0, 0, 0, 0, 0xfe, 0xff, 3, 0, 0,
                                  0x10, 0,    0,    0, 0,    0,    0, 0, 1, 0, 0xf0};
    fuzz_seed(win, sizeof win);
}

FUZZ_SEED_GENERATOR(seeds)
