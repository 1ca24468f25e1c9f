/*
 * src/net/loop_queue.c — the bounded per-connection send queues (a byte ring plus a ring of frame
 * sizes, with room kept for heartbeats), written by the loop thread, and the send calls that fill them
 * from any thread.
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

/* Throw the queue away (the connection is gone: a partial frame cannot be resumed). (mu held) */
void net_queue_discard_locked(dsig_net_loop *L, struct conn *c)
{
    if (c->app_frames)
        stat_add(L, c, ST_discarded, c->app_frames);
    c->qhead = c->qused = c->head_sent = 0;
    c->lhead = c->lcount = 0;
    c->app_frames = c->app_bytes = 0;
}

/* Can a frame of `total` bytes be queued now? (mu held) */
static int queue_room_locked(const dsig_net_loop *L, const struct conn *c, size_t total, int ctrl)
{
    if (c->qused + total > c->qcap || c->lcount >= c->lcap)
        return 0;
    if (ctrl)
        return 1;
    return c->app_frames < L->cfg.sendq_max_frames && c->app_bytes + total <= L->cfg.sendq_max_bytes;
}

/* Copy bytes into the ring at its tail. (mu held) */
static void queue_put_locked(struct conn *c, const uint8_t *p, size_t n)
{
    size_t tail = (c->qhead + c->qused) % c->qcap;
    size_t first = c->qcap - tail < n ? c->qcap - tail : n;
    memcpy(c->q + tail, p, first);
    memcpy(c->q, p + first, n - first);
    c->qused += n;
}

/* Append one frame (room already checked). (mu held) */
static void queue_push_locked(struct conn *c, uint8_t type, const struct iovec *iov, int n, size_t plen,
                              int ctrl)
{
    uint8_t hdr[DSIG_NET_HDR_BYTES];
    dsig_net_frame_header(hdr, type, (uint32_t)plen);
    queue_put_locked(c, hdr, sizeof hdr);
    for (int i = 0; i < n; i++)
        if (iov[i].iov_len)
            queue_put_locked(c, iov[i].iov_base, iov[i].iov_len);
    size_t total = DSIG_NET_HDR_BYTES + plen;
    c->lens[(c->lhead + c->lcount) % c->lcap] = (uint32_t)total | (ctrl ? LEN_CTRL : 0);
    c->lcount++;
    if (!ctrl) {
        c->app_frames++;
        c->app_bytes += total;
    }
}

/* Write as much of the queue as the socket takes: 0, or -1 on a socket error. (mu held, loop thread) */
int net_queue_flush_locked(dsig_net_loop *L, struct conn *c)
{
    int freed = 0;
    while (c->qused) {
        struct iovec v[2];
        size_t first = c->qcap - c->qhead < c->qused ? c->qcap - c->qhead : c->qused;
        v[0].iov_base = c->q + c->qhead;
        v[0].iov_len = first;
        v[1].iov_base = c->q;
        v[1].iov_len = c->qused - first;
        struct msghdr m = {.msg_iov = v, .msg_iovlen = v[1].iov_len ? 2 : 1};
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -1;
        }
        size_t n = (size_t)w;
        stat_add(L, c, ST_bytes_out, n);
        c->qhead = (c->qhead + n) % c->qcap;
        c->qused -= n;
        c->head_sent += n;
        while (c->lcount) {
            uint32_t e = c->lens[c->lhead];
            size_t len = e & ~LEN_CTRL;
            if (c->head_sent < len)
                break;
            c->head_sent -= len;
            if (!(e & LEN_CTRL)) {
                c->app_frames--;
                c->app_bytes -= len;
                freed = 1;
            }
            stat_add(L, c, ST_frames_out, 1);
            c->lhead = (c->lhead + 1) % c->lcap;
            c->lcount--;
        }
        if (c->qused == 0)
            c->qhead = 0;
    }
    if (freed && L->waiters)
        pthread_cond_broadcast(&L->cv);
    return 0;
}

/* Queue a heartbeat frame (PING with our clock, or the PONG echo). (loop thread) */
void net_queue_ctrl(dsig_net_loop *L, struct conn *c, uint8_t type, const uint8_t p[DSIG_NET_PING_BYTES])
{
    struct iovec v = {.iov_base = (void *)p, .iov_len = DSIG_NET_PING_BYTES};
    pthread_mutex_lock(&L->mu);
    if (c->state == S_UP && queue_room_locked(L, c, DSIG_NET_HDR_BYTES + DSIG_NET_PING_BYTES, 1))
        queue_push_locked(c, type, &v, 1, DSIG_NET_PING_BYTES, 1);
    pthread_mutex_unlock(&L->mu);
}

/* Check and enqueue under the lock: DSIG_OK, DSIG_E_WOULD_BLOCK or DSIG_E_STATE (no detail text). */
static int send_locked(dsig_net_loop *L, uint64_t id, uint8_t type, const struct iovec *iov, int n, size_t plen)
{
    struct conn *c = net_lookup_locked(L, id);
    if (!c || c->kind == K_LISTENER || c->state != S_UP || atomic_load(&c->close_req))
        return DSIG_E_STATE;
    if (!queue_room_locked(L, c, DSIG_NET_HDR_BYTES + plen, 0))
        return DSIG_E_WOULD_BLOCK;
    int was_empty = c->qused == 0;
    queue_push_locked(c, type, iov, n, plen, 0);
    if (was_empty)
        net_wake_locked(L);
    return DSIG_OK;
}

/* Validate the frame of a send: type and total length. */
static int send_check(const dsig_net_loop *L, uint8_t type, const struct iovec *iov, int n, size_t *plen)
{
    if (!L || (n > 0 && !iov) || n < 0)
        return dsig_fail(DSIG_E_ARG, "net: NULL argument to send");
    if (type < DSIG_NET_T_APP_MIN || type > DSIG_NET_T_APP_MAX)
        return dsig_fail(DSIG_E_ARG, "net: frame type 0x%02x is not an application type", type);
    size_t t = 0;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len && !iov[i].iov_base)
            return dsig_fail(DSIG_E_ARG, "net: NULL payload");
        t += iov[i].iov_len;
        if (t > L->cfg.max_payload)
            return dsig_fail(DSIG_E_TOO_LARGE, "net: payload exceeds the maximum of %u bytes",
                             L->cfg.max_payload);
    }
    *plen = t;
    return DSIG_OK;
}

/* Report the outcome of a send with a detail sentence. */
static int send_result(dsig_net_loop *L, uint64_t id, int rc)
{
    if (rc == DSIG_E_WOULD_BLOCK) {
        pthread_mutex_lock(&L->mu);
        struct conn *c = net_lookup_locked(L, id);
        stat_add(L, c, ST_send_full, 1);
        pthread_mutex_unlock(&L->mu);
        return dsig_fail(rc, "net: send queue of connection %llu is full", (unsigned long long)id);
    }
    if (rc == DSIG_E_STATE)
        return dsig_fail(rc, "net: connection %llu is unknown or not up", (unsigned long long)id);
    return rc;
}

/* Queue a gathered frame; see net.h. */
int dsig_net_sendv(dsig_net_loop *L, uint64_t conn, uint8_t type, const struct iovec *iov, int n)
{
    size_t plen = 0;
    int rc = send_check(L, type, iov, n, &plen);
    if (rc != DSIG_OK)
        return rc;
    pthread_mutex_lock(&L->mu);
    rc = send_locked(L, conn, type, iov, n, plen);
    pthread_mutex_unlock(&L->mu);
    return send_result(L, conn, rc);
}

/* Queue one frame; see net.h. */
int dsig_net_send(dsig_net_loop *L, uint64_t conn, uint8_t type, const void *payload, size_t len)
{
    struct iovec v = {.iov_base = (void *)payload, .iov_len = len};
    return dsig_net_sendv(L, conn, type, &v, 1);
}

/* Queue one frame, waiting for room; see net.h. */
int dsig_net_send_wait(dsig_net_loop *L, uint64_t conn, uint8_t type, const void *payload, size_t len,
                       int timeout_ms)
{
    struct iovec v = {.iov_base = (void *)payload, .iov_len = len};
    size_t plen = 0;
    int rc = send_check(L, type, &v, 1, &plen);
    if (rc != DSIG_OK)
        return rc;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout_ms > 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&L->mu);
    if (net_on_loop_thread(L)) {
        pthread_mutex_unlock(&L->mu);
        return dsig_fail(DSIG_E_STATE, "net: send_wait on the loop thread would wait for itself");
    }
    for (;;) {
        rc = send_locked(L, conn, type, &v, 1, plen);
        if (rc != DSIG_E_WOULD_BLOCK || timeout_ms == 0 || atomic_load(&L->stop))
            break;
        L->waiters++;
        int w = timeout_ms < 0 ? pthread_cond_wait(&L->cv, &L->mu)
                               : pthread_cond_timedwait(&L->cv, &L->mu, &until);
        L->waiters--;
        if (w == ETIMEDOUT) {
            rc = send_locked(L, conn, type, &v, 1, plen);
            break;
        }
    }
    pthread_mutex_unlock(&L->mu);
    return send_result(L, conn, rc);
}
