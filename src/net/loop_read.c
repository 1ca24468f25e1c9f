/*
 * src/net/loop_read.c — reading a connection and decoding its frames: heartbeats answered here,
 * application frames handed to the caller.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "net/loop_internal.h"

/* What on_frame needs besides the frame: the loop, the connection, the time of the read. */
struct rx_ctx {
    dsig_net_loop *L;
    struct conn *c;
    uint64_t now;
};

/* One decoded frame: heartbeats are answered here, application frames go to the caller. */
static int on_frame(void *arg, uint8_t type, const uint8_t *payload, uint32_t len)
{
    struct rx_ctx *x = arg;
    dsig_net_loop *L = x->L;
    struct conn *c = x->c;
    stat_add(L, c, ST_frames_in, 1);
    c->t_rx = x->now;
    if (!c->proven) {
        /* A peer that speaks the protocol: the next loss starts the backoff afresh. */
        c->proven = 1;
        c->attempts = 0;
    }
    if (type == DSIG_NET_T_PING) {
        net_queue_ctrl(L, c, DSIG_NET_T_PONG, payload);
    } else if (type == DSIG_NET_T_PONG) {
        uint64_t sent = 0;
        for (int i = 0; i < 8; i++)
            sent = sent << 8 | payload[i];
        uint64_t t = now_us();
        stat_add(L, c, ST_pongs_in, 1);
        if (t >= sent)
            atomic_store_explicit(&c->st[ST_rtt_last_us], t - sent, memory_order_relaxed);
    } else {
        dsig_net_event ev = {.kind = DSIG_NET_EV_FRAME, .conn = c->id, .outgoing = c->kind == K_OUT,
                             .listener = c->listener_id, .type = type, .payload = payload, .len = len};
        net_emit(L, &ev);
    }
    return atomic_load(&c->close_req) || atomic_load(&L->stop) ? 1 : 0;
}

/* Read what the socket has and decode it: 1 if the connection went down (an IN one is freed). */
int net_do_read(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    struct rx_ctx x = {L, c, now};
    for (int k = 0; k < READS_PER_ROUND; k++) {
        ssize_t r = read(c->fd, L->rbuf, RBUF_BYTES);
        if (r > 0) {
            stat_add(L, c, ST_bytes_in, (uint64_t)r);
            int rc = dsig_net_decoder_feed(&c->dec, L->rbuf, (size_t)r, on_frame, &x, NULL);
            if (rc > 0)
                return 0; /* close or stop requested: the rest is not wanted */
            if (rc < 0) {
                net_conn_down(L, c, rc == DSIG_E_NOMEM ? DSIG_NET_DOWN_IO : DSIG_NET_DOWN_MALFORMED, now);
                return 1;
            }
            if ((size_t)r < RBUF_BYTES)
                return 0;
        } else if (r == 0) {
            net_conn_down(L, c, DSIG_NET_DOWN_EOF, now);
            return 1;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return 0;
        } else {
            net_conn_down(L, c, DSIG_NET_DOWN_IO, now);
            return 1;
        }
    }
    return 0;
}
