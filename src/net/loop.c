/*
 * src/net/loop.c — the poll() event loop: listeners, accepted and outgoing connections (reconnect with
 * jittered exponential backoff), heartbeats, bounded per-connection send queues written by the loop
 * thread, and counters. The state machine is in docs/net.md.
 *
 * Locking: one mutex per loop guards the slot table, every connection's `state`/`fd` and send queue,
 * and the wake flag. Only the loop thread changes fds and frees connections, so a connection pointer it
 * took from the table stays valid for the whole iteration; other threads reach connections only through
 * their id, under the mutex. Counters are relaxed atomics. Callbacks run with the mutex released.
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
#include "net/net.h"

enum { K_LISTENER = 1, K_IN, K_OUT };
enum { S_IDLE = 0, S_CONNECTING, S_UP, S_LISTEN, S_DEAD };

enum {
#define ST_ENUM(f) ST_##f,
    DSIG_NET_STATS_FIELDS(ST_ENUM)
#undef ST_ENUM
    ST_N
};

/* Room kept beyond the application bounds so heartbeats still fit when the queue is full. */
#define CTRL_FRAMES 8u
#define CTRL_BYTES (CTRL_FRAMES * (DSIG_NET_HDR_BYTES + DSIG_NET_PING_BYTES))
#define LEN_CTRL 0x80000000u
#define RBUF_BYTES 65536u
#define READS_PER_ROUND 16
#define ACCEPTS_PER_ROUND 64

struct conn {
    uint64_t id;
    int kind;
    int state;                   /* under mu */
    int fd;                      /* changed by the loop thread, under mu */
    dsig_net_addr addr;          /* OUT: target; IN: peer; LISTENER: bound address */
    struct conn *parent;         /* IN: its listener while that is open (loop thread) */
    uint64_t listener_id;
    atomic_int close_req;
    int write_err;               /* loop thread */
    dsig_net_decoder dec;        /* loop thread */
    /* Send queue (under mu): a byte ring plus a ring of frame sizes (LEN_CTRL = heartbeat). */
    uint8_t *q;
    size_t qcap, qhead, qused, head_sent;
    uint32_t *lens;
    uint32_t lcap, lhead, lcount;
    size_t app_frames, app_bytes;
    /* Timers (loop thread, ms on CLOCK_MONOTONIC). */
    uint64_t t_rx, t_ping, t_connect, t_next;
    unsigned attempts;
    int ever_up, proven;
    _Atomic uint64_t st[ST_N];
};

struct dsig_net_loop {
    dsig_net_config cfg;
    dsig_net_event_fn fn;
    void *arg;
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* send_wait: room freed or connection gone */
    unsigned waiters;
    int wfd;                     /* eventfd that wakes poll() */
    int wake_pending;
    pthread_t owner;             /* the loop thread, once it ran */
    int owner_set;
    struct conn **slot;
    uint32_t *gen;
    uint32_t nslot;
    atomic_int stop;
    uint8_t *rbuf;
    struct conn **act;           /* this iteration's snapshot of the table */
    struct pollfd *pfd;
    struct conn **pconn;
    uint64_t rng;
    _Atomic uint64_t tot[ST_N];
};

/* Monotonic clock in microseconds. */
static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Monotonic clock in milliseconds. */
static uint64_t now_ms(void)
{
    return now_us() / 1000u;
}

/* Add to a counter of a connection, of its listener (if open) and of the loop. */
static void stat_add(dsig_net_loop *L, struct conn *c, int f, uint64_t n)
{
    if (c) {
        atomic_fetch_add_explicit(&c->st[f], n, memory_order_relaxed);
        if (c->parent)
            atomic_fetch_add_explicit(&c->parent->st[f], n, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&L->tot[f], n, memory_order_relaxed);
}

/* Defaults documented in net.h. */
void dsig_net_config_default(dsig_net_config *cfg)
{
    cfg->max_payload = DSIG_NET_DEFAULT_MAX_PAYLOAD;
    cfg->sendq_max_frames = 256;
    cfg->sendq_max_bytes = 1u << 20;
    cfg->max_conns = 256;
    cfg->heartbeat_ms = 500;
    cfg->heartbeat_misses = 4;
    cfg->backoff_min_ms = 20;
    cfg->backoff_max_ms = 2000;
    cfg->connect_timeout_ms = 2000;
}

/* Is the calling thread the loop thread? (mu held) */
static int on_loop_thread(const dsig_net_loop *L)
{
    return L->owner_set && pthread_equal(L->owner, pthread_self());
}

/* Wake poll() unless a wake-up is already pending or we are the loop. (mu held) */
static void wake_locked(dsig_net_loop *L)
{
    if (L->wake_pending || on_loop_thread(L))
        return;
    L->wake_pending = 1;
    uint64_t one = 1;
    ssize_t r = write(L->wfd, &one, sizeof one);
    (void)r; /* EAGAIN means the counter is already non-zero: poll will wake anyway */
}

/* The connection named by id, or NULL. (mu held) */
static struct conn *lookup_locked(dsig_net_loop *L, uint64_t id)
{
    uint64_t s = (id & 0xffffffffu);
    if (s == 0 || s > L->nslot)
        return NULL;
    struct conn *c = L->slot[s - 1];
    return c && c->id == id ? c : NULL;
}

/* Allocate a connection in a free slot (queue included for IN/OUT). (mu held) */
static int conn_new_locked(dsig_net_loop *L, int kind, const dsig_net_addr *addr, struct conn **out)
{
    uint32_t s;
    for (s = 0; s < L->nslot && L->slot[s]; s++)
        ;
    if (s == L->nslot)
        return dsig_fail(DSIG_E_EXHAUSTED, "net: all %u connection slots are in use", L->nslot);
    struct conn *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "net: out of memory for a connection");
    c->kind = kind;
    c->fd = -1;
    c->state = S_IDLE;
    if (addr)
        c->addr = *addr;
    atomic_init(&c->close_req, 0);
    for (int i = 0; i < ST_N; i++)
        atomic_init(&c->st[i], 0);
    if (kind != K_LISTENER) {
        /* glibc maps large blocks lazily: untouched queue pages cost no memory. */
        c->qcap = (size_t)L->cfg.sendq_max_bytes + CTRL_BYTES;
        c->lcap = L->cfg.sendq_max_frames + CTRL_FRAMES;
        c->q = dsig_malloc(c->qcap);
        c->lens = dsig_malloc((size_t)c->lcap * sizeof *c->lens);
        if (!c->q || !c->lens) {
            dsig_xfree(c->q, 0);
            dsig_xfree(c->lens, 0);
            dsig_xfree(c, 0);
            return dsig_fail(DSIG_E_NOMEM, "net: out of memory for a send queue");
        }
        dsig_net_decoder_init(&c->dec, L->cfg.max_payload);
    }
    c->id = (uint64_t)L->gen[s] << 32 | (uint64_t)(s + 1);
    L->slot[s] = c;
    *out = c;
    return DSIG_OK;
}

/* Throw the queue away (the connection is gone: a partial frame cannot be resumed). (mu held) */
static void queue_discard_locked(dsig_net_loop *L, struct conn *c)
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
static int queue_flush_locked(dsig_net_loop *L, struct conn *c)
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

/* Deliver an event (loop thread, no lock). */
static void emit(dsig_net_loop *L, const dsig_net_event *ev)
{
    if (L->fn)
        L->fn(L->arg, L, ev);
}

/* Small xorshift for backoff jitter (loop thread; not security relevant). */
static uint64_t jitter_rand(dsig_net_loop *L)
{
    uint64_t x = L->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    L->rng = x;
    return x;
}

/* Schedule the next connect attempt: min·2^attempts capped at max, uniformly jittered in [d/2, d]. */
static void schedule_retry(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    uint64_t d = L->cfg.backoff_min_ms;
    for (unsigned i = 0; i < c->attempts && d < L->cfg.backoff_max_ms; i++)
        d *= 2;
    if (d > L->cfg.backoff_max_ms)
        d = L->cfg.backoff_max_ms;
    d = d / 2 + jitter_rand(L) % (d / 2 + 1);
    if (c->attempts < 64)
        c->attempts++;
    c->t_next = now + d;
}

/* Close the socket and mark the state. (loop thread) */
static void close_fd(dsig_net_loop *L, struct conn *c, int state)
{
    pthread_mutex_lock(&L->mu);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->state = state;
    queue_discard_locked(L, c);
    if (L->waiters)
        pthread_cond_broadcast(&L->cv);
    pthread_mutex_unlock(&L->mu);
}

/* Free a connection and its slot. (loop thread) */
static void conn_free(dsig_net_loop *L, struct conn *c)
{
    if (c->kind == K_LISTENER) {
        /* Children stop summing into a listener that is gone. */
        for (uint32_t s = 0; s < L->nslot; s++) {
            pthread_mutex_lock(&L->mu);
            struct conn *o = L->slot[s];
            if (o && o->parent == c)
                o->parent = NULL;
            pthread_mutex_unlock(&L->mu);
        }
        if (c->addr.family == AF_UNIX)
            unlink(((struct sockaddr_un *)&c->addr.ss)->sun_path);
    }
    close_fd(L, c, S_DEAD);
    pthread_mutex_lock(&L->mu);
    uint32_t s = (uint32_t)(c->id & 0xffffffffu) - 1;
    L->slot[s] = NULL;
    L->gen[s]++;
    pthread_mutex_unlock(&L->mu);
    dsig_net_decoder_clear(&c->dec);
    dsig_xfree(c->q, 0);
    dsig_xfree(c->lens, 0);
    dsig_xfree(c, 0);
}

/* A connection that was UP is lost: count, tell the caller, then reconnect (OUT) or free (IN). */
static void conn_down(dsig_net_loop *L, struct conn *c, int reason, uint64_t now)
{
    if (dsig_net_decoder_midframe(&c->dec))
        stat_add(L, c, ST_cut_midframe, 1);
    if (reason == DSIG_NET_DOWN_MALFORMED)
        stat_add(L, c, ST_dropped_malformed, 1);
    else if (reason == DSIG_NET_DOWN_TIMEOUT)
        stat_add(L, c, ST_timeouts, 1);
    close_fd(L, c, c->kind == K_OUT ? S_IDLE : S_DEAD);
    dsig_net_decoder_reset(&c->dec);
    dsig_net_event ev = {.kind = DSIG_NET_EV_DOWN, .conn = c->id, .outgoing = c->kind == K_OUT,
                         .listener = c->listener_id, .reason = reason};
    if (c->kind == K_OUT)
        schedule_retry(L, c, now);
    emit(L, &ev);
    if (c->kind == K_IN)
        conn_free(L, c);
}

/* The connection is established. (loop thread) */
static void conn_up(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    pthread_mutex_lock(&L->mu);
    c->state = S_UP;
    pthread_mutex_unlock(&L->mu);
    c->t_rx = c->t_ping = now;
    c->proven = 0;
    dsig_net_decoder_reset(&c->dec);
    if (c->kind == K_OUT) {
        if (c->ever_up)
            stat_add(L, c, ST_reconnects, 1);
        c->ever_up = 1;
    }
    dsig_net_event ev = {.kind = DSIG_NET_EV_UP, .conn = c->id, .outgoing = c->kind == K_OUT,
                         .listener = c->listener_id};
    emit(L, &ev);
}

/* A connect attempt failed: back off. (loop thread) */
static void connect_failed(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    close_fd(L, c, S_IDLE);
    stat_add(L, c, ST_connect_failures, 1);
    schedule_retry(L, c, now);
}

/* Start a non-blocking connect. (loop thread) */
static void start_connect(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    int fd = socket(c->addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        connect_failed(L, c, now);
        return;
    }
    dsig_net_socket_nodelay(fd, c->addr.family);
    int r;
    do
        r = connect(fd, (const struct sockaddr *)&c->addr.ss, c->addr.len);
    while (r < 0 && errno == EINTR);
    int err = r < 0 ? errno : 0;
    pthread_mutex_lock(&L->mu);
    c->fd = fd;
    c->state = S_CONNECTING;
    pthread_mutex_unlock(&L->mu);
    c->t_connect = now;
    if (r == 0)
        conn_up(L, c, now);
    else if (err != EINPROGRESS && err != EAGAIN)
        connect_failed(L, c, now);
}

/* A pending connect finished (POLLOUT / POLLERR). (loop thread) */
static void finish_connect(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err == 0)
        conn_up(L, c, now);
    else if (err != EINPROGRESS && err != EALREADY)
        connect_failed(L, c, now);
}

/* Accept pending connections on a listener. (loop thread) */
static void do_accept(dsig_net_loop *L, struct conn *lc, uint64_t now)
{
    for (int k = 0; k < ACCEPTS_PER_ROUND; k++) {
        dsig_net_addr peer;
        memset(&peer, 0, sizeof peer);
        socklen_t sl = sizeof peer.ss;
        int fd = accept4(lc->fd, (struct sockaddr *)&peer.ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; /* EAGAIN, or EMFILE & co: try again next round */
        }
        peer.family = lc->addr.family;
        peer.len = sl;
        if (peer.family == AF_UNIX)
            peer = lc->addr; /* an unnamed client: name it by the listener's path */
        dsig_net_socket_nodelay(fd, peer.family);
        struct conn *c;
        pthread_mutex_lock(&L->mu);
        int rc = conn_new_locked(L, K_IN, &peer, &c);
        if (rc == DSIG_OK) {
            c->fd = fd;
            c->parent = lc;
            c->listener_id = lc->id;
        }
        pthread_mutex_unlock(&L->mu);
        if (rc != DSIG_OK) {
            close(fd);
            stat_add(L, lc, ST_rejected, 1);
            continue;
        }
        stat_add(L, lc, ST_accepted, 1);
        conn_up(L, c, now);
    }
}

/* Queue a heartbeat frame (PING with our clock, or the PONG echo). (loop thread) */
static void queue_ctrl(dsig_net_loop *L, struct conn *c, uint8_t type, const uint8_t p[DSIG_NET_PING_BYTES])
{
    struct iovec v = {.iov_base = (void *)p, .iov_len = DSIG_NET_PING_BYTES};
    pthread_mutex_lock(&L->mu);
    if (c->state == S_UP && queue_room_locked(L, c, DSIG_NET_HDR_BYTES + DSIG_NET_PING_BYTES, 1))
        queue_push_locked(c, type, &v, 1, DSIG_NET_PING_BYTES, 1);
    pthread_mutex_unlock(&L->mu);
}

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
        queue_ctrl(L, c, DSIG_NET_T_PONG, payload);
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
        emit(L, &ev);
    }
    return atomic_load(&c->close_req) || atomic_load(&L->stop) ? 1 : 0;
}

/* Read what the socket has and decode it: 1 if the connection went down (an IN one is freed). */
static int do_read(dsig_net_loop *L, struct conn *c, uint64_t now)
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
                conn_down(L, c, rc == DSIG_E_NOMEM ? DSIG_NET_DOWN_IO : DSIG_NET_DOWN_MALFORMED, now);
                return 1;
            }
            if ((size_t)r < RBUF_BYTES)
                return 0;
        } else if (r == 0) {
            conn_down(L, c, DSIG_NET_DOWN_EOF, now);
            return 1;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return 0;
        } else {
            conn_down(L, c, DSIG_NET_DOWN_IO, now);
            return 1;
        }
    }
    return 0;
}

/* Create a loop; see net.h. */
int dsig_net_loop_new(dsig_net_loop **out, const dsig_net_config *cfg, dsig_net_event_fn fn, void *arg)
{
    if (!out)
        return dsig_fail(DSIG_E_ARG, "net: NULL loop pointer");
    *out = NULL;
    dsig_net_config c;
    if (cfg)
        c = *cfg;
    else
        dsig_net_config_default(&c);
    if (c.max_payload < DSIG_NET_MIN_PAYLOAD_LIMIT || c.max_payload > DSIG_NET_MAX_PAYLOAD_LIMIT)
        return dsig_fail(DSIG_E_ARG, "net: max_payload %u outside [%u, %u]", c.max_payload,
                         DSIG_NET_MIN_PAYLOAD_LIMIT, DSIG_NET_MAX_PAYLOAD_LIMIT);
    if (c.sendq_max_frames == 0 || c.sendq_max_frames > (1u << 24))
        return dsig_fail(DSIG_E_ARG, "net: sendq_max_frames %u outside [1, 2^24]", c.sendq_max_frames);
    if ((uint64_t)c.sendq_max_bytes < (uint64_t)c.max_payload + DSIG_NET_HDR_BYTES ||
        c.sendq_max_bytes > (1u << 30))
        return dsig_fail(DSIG_E_ARG, "net: sendq_max_bytes %u must hold one maximal frame and be ≤ 1 GiB",
                         c.sendq_max_bytes);
    if (c.max_conns == 0 || c.max_conns > 65536)
        return dsig_fail(DSIG_E_ARG, "net: max_conns %u outside [1, 65536]", c.max_conns);
    if (c.heartbeat_ms && c.heartbeat_misses == 0)
        return dsig_fail(DSIG_E_ARG, "net: heartbeat_misses must be ≥ 1");
    if (c.backoff_min_ms == 0 || c.backoff_max_ms < c.backoff_min_ms || c.connect_timeout_ms == 0)
        return dsig_fail(DSIG_E_ARG, "net: backoff bounds / connect timeout inconsistent");
    dsig_net_loop *L = dsig_calloc(1, sizeof *L);
    if (!L)
        return dsig_fail(DSIG_E_NOMEM, "net: out of memory");
    L->cfg = c;
    L->fn = fn;
    L->arg = arg;
    L->nslot = c.max_conns;
    L->wfd = -1;
    atomic_init(&L->stop, 0);
    for (int i = 0; i < ST_N; i++)
        atomic_init(&L->tot[i], 0);
    L->slot = dsig_calloc(L->nslot, sizeof *L->slot);
    L->gen = dsig_calloc(L->nslot, sizeof *L->gen);
    L->act = dsig_calloc(L->nslot, sizeof *L->act);
    L->pfd = dsig_calloc(L->nslot + 1, sizeof *L->pfd);
    L->pconn = dsig_calloc(L->nslot + 1, sizeof *L->pconn);
    L->rbuf = dsig_malloc(RBUF_BYTES);
    if (!L->slot || !L->gen || !L->act || !L->pfd || !L->pconn || !L->rbuf) {
        dsig_net_loop_free(L);
        return dsig_fail(DSIG_E_NOMEM, "net: out of memory");
    }
    for (uint32_t s = 0; s < L->nslot; s++)
        L->gen[s] = 1;
    if (dsig_random_bytes(&L->rng, sizeof L->rng) != DSIG_OK || L->rng == 0)
        L->rng = now_us() | 1;
    L->wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&L->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&L->mu, NULL);
    if (L->wfd < 0) {
        dsig_net_loop_free(L);
        return dsig_fail(DSIG_E_IO, "net: eventfd: %s", strerror(errno));
    }
    *out = L;
    return DSIG_OK;
}

/* Close and free everything; see net.h. */
void dsig_net_loop_free(dsig_net_loop *L)
{
    if (!L)
        return;
    if (L->slot && L->wfd >= 0) {
        for (uint32_t s = 0; s < L->nslot; s++)
            if (L->slot[s])
                conn_free(L, L->slot[s]);
    }
    if (L->wfd >= 0) {
        close(L->wfd);
        pthread_cond_destroy(&L->cv);
        pthread_mutex_destroy(&L->mu);
    }
    dsig_xfree(L->slot, 0);
    dsig_xfree(L->gen, 0);
    dsig_xfree(L->act, 0);
    dsig_xfree(L->pfd, 0);
    dsig_xfree(L->pconn, 0);
    dsig_xfree(L->rbuf, 0);
    dsig_xfree(L, 0);
}

/* Earliest timer of a connection, or UINT64_MAX. (loop thread) */
static uint64_t conn_deadline(const dsig_net_loop *L, const struct conn *c, int state)
{
    if (c->kind == K_OUT && state == S_IDLE)
        return c->t_next;
    if (state == S_CONNECTING)
        return c->t_connect + L->cfg.connect_timeout_ms;
    if (state == S_UP && L->cfg.heartbeat_ms) {
        uint64_t a = c->t_ping + L->cfg.heartbeat_ms;
        uint64_t b = c->t_rx + (uint64_t)L->cfg.heartbeat_ms * L->cfg.heartbeat_misses;
        return a < b ? a : b;
    }
    return UINT64_MAX;
}

/* One loop iteration; see net.h. */
int dsig_net_loop_run_once(dsig_net_loop *L, int timeout_ms)
{
    if (atomic_load(&L->stop))
        return DSIG_E_STATE;
    uint64_t now = now_ms();
    uint32_t n = 0;
    pthread_mutex_lock(&L->mu);
    L->owner = pthread_self();
    L->owner_set = 1;
    for (uint32_t s = 0; s < L->nslot; s++)
        if (L->slot[s])
            L->act[n++] = L->slot[s];
    pthread_mutex_unlock(&L->mu);

    /* 1. Close requests and timers. */
    for (uint32_t i = 0; i < n; i++) {
        struct conn *c = L->act[i];
        if (atomic_load(&c->close_req)) {
            pthread_mutex_lock(&L->mu);
            int was_up = c->state == S_UP;
            pthread_mutex_unlock(&L->mu);
            if (was_up) {
                dsig_net_event ev = {.kind = DSIG_NET_EV_DOWN, .conn = c->id, .outgoing = c->kind == K_OUT,
                                     .listener = c->listener_id, .reason = DSIG_NET_DOWN_LOCAL};
                close_fd(L, c, S_DEAD);
                emit(L, &ev);
            }
            conn_free(L, c);
            L->act[i] = NULL;
            continue;
        }
        pthread_mutex_lock(&L->mu);
        int state = c->state;
        pthread_mutex_unlock(&L->mu);
        if (c->kind == K_OUT && state == S_IDLE && now >= c->t_next) {
            start_connect(L, c, now);
        } else if (state == S_CONNECTING && now >= c->t_connect + L->cfg.connect_timeout_ms) {
            connect_failed(L, c, now);
        } else if (state == S_UP && L->cfg.heartbeat_ms) {
            if (now >= c->t_rx + (uint64_t)L->cfg.heartbeat_ms * L->cfg.heartbeat_misses) {
                int freed = c->kind == K_IN; /* conn_down frees accepted connections */
                conn_down(L, c, DSIG_NET_DOWN_TIMEOUT, now);
                if (freed)
                    L->act[i] = NULL;
            } else if (now >= c->t_ping + L->cfg.heartbeat_ms) {
                uint8_t p[DSIG_NET_PING_BYTES];
                uint64_t t = now_us();
                for (int b = 0; b < 8; b++)
                    p[b] = (uint8_t)(t >> (56 - 8 * b));
                queue_ctrl(L, c, DSIG_NET_T_PING, p);
                stat_add(L, c, ST_pings_out, 1);
                c->t_ping = now;
            }
        }
    }

    /* 2. Write what is queued; build the poll set. */
    uint32_t np = 0;
    L->pfd[np].fd = L->wfd;
    L->pfd[np].events = POLLIN;
    L->pconn[np++] = NULL;
    uint64_t deadline = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        struct conn *c = L->act[i];
        if (!c)
            continue;
        pthread_mutex_lock(&L->mu);
        int state = c->state;
        if (state == S_UP && c->qused)
            c->write_err = queue_flush_locked(L, c) < 0;
        int pending = c->qused != 0;
        pthread_mutex_unlock(&L->mu);
        if (state == S_UP && c->write_err) {
            c->write_err = 0;
            int freed = c->kind == K_IN; /* conn_down frees accepted connections */
            conn_down(L, c, DSIG_NET_DOWN_IO, now);
            if (freed)
                L->act[i] = NULL;
            continue;
        }
        uint64_t d = conn_deadline(L, c, state);
        if (d < deadline)
            deadline = d;
        short ev = 0;
        if (state == S_LISTEN)
            ev = POLLIN;
        else if (state == S_CONNECTING)
            ev = POLLOUT;
        else if (state == S_UP)
            ev = (short)(POLLIN | (pending ? POLLOUT : 0));
        if (!ev)
            continue;
        L->pfd[np].fd = c->fd;
        L->pfd[np].events = ev;
        L->pfd[np].revents = 0;
        L->pconn[np++] = c;
    }
    int to = timeout_ms;
    if (deadline != UINT64_MAX) {
        uint64_t now2 = now_ms();
        uint64_t wait = deadline > now2 ? deadline - now2 : 0;
        if (to < 0 || wait < (uint64_t)to)
            to = (int)(wait > 60000 ? 60000 : wait);
    }
    if (atomic_load(&L->stop))
        return DSIG_E_STATE;

    /* 3. Wait, then serve the ready sockets. */
    int pr = poll(L->pfd, np, to);
    if (pr < 0)
        return errno == EINTR ? DSIG_OK : dsig_fail(DSIG_E_IO, "net: poll: %s", strerror(errno));
    now = now_ms();
    if (L->pfd[0].revents) {
        uint64_t v;
        ssize_t r = read(L->wfd, &v, sizeof v);
        (void)r;
        pthread_mutex_lock(&L->mu);
        L->wake_pending = 0;
        pthread_mutex_unlock(&L->mu);
    }
    for (uint32_t i = 1; i < np && !atomic_load(&L->stop); i++) {
        struct conn *c = L->pconn[i];
        short re = L->pfd[i].revents;
        if (!re || atomic_load(&c->close_req))
            continue;
        if (c->kind == K_LISTENER) {
            do_accept(L, c, now);
        } else if (L->pfd[i].events == POLLOUT && c->state == S_CONNECTING) {
            finish_connect(L, c, now);
        } else {
            if ((re & (POLLIN | POLLHUP | POLLERR)) && do_read(L, c, now))
                continue; /* down (and an accepted one freed) */
            pthread_mutex_lock(&L->mu);
            int state = c->state;
            if (state == S_UP && (re & POLLOUT) && c->qused)
                c->write_err = queue_flush_locked(L, c) < 0;
            pthread_mutex_unlock(&L->mu);
            if (state == S_UP && c->write_err) {
                c->write_err = 0;
                conn_down(L, c, DSIG_NET_DOWN_IO, now);
            }
        }
    }
    return atomic_load(&L->stop) ? DSIG_E_STATE : DSIG_OK;
}

/* Iterate until stopped; see net.h. */
int dsig_net_loop_run(dsig_net_loop *L)
{
    int rc;
    while ((rc = dsig_net_loop_run_once(L, -1)) == DSIG_OK)
        ;
    return rc == DSIG_E_STATE ? DSIG_OK : rc;
}

/* Ask the loop to return; see net.h. */
void dsig_net_loop_stop(dsig_net_loop *L)
{
    atomic_store(&L->stop, 1);
    pthread_mutex_lock(&L->mu);
    L->wake_pending = 0; /* force the write: a stop must never be lost */
    uint64_t one = 1;
    ssize_t r = write(L->wfd, &one, sizeof one);
    (void)r;
    pthread_cond_broadcast(&L->cv);
    pthread_mutex_unlock(&L->mu);
}

/* Bind and listen; see net.h. */
int dsig_net_listen(dsig_net_loop *L, const dsig_net_addr *addr, uint64_t *id)
{
    if (!L || !addr || !id)
        return dsig_fail(DSIG_E_ARG, "net: NULL argument to listen");
    int fd;
    dsig_net_addr bound;
    int rc = dsig_net_socket_listen(addr, 1, &fd, &bound);
    if (rc != DSIG_OK)
        return rc;
    struct conn *c;
    pthread_mutex_lock(&L->mu);
    rc = conn_new_locked(L, K_LISTENER, &bound, &c);
    if (rc == DSIG_OK) {
        c->fd = fd;
        c->state = S_LISTEN;
        *id = c->id;
        wake_locked(L);
    }
    pthread_mutex_unlock(&L->mu);
    if (rc != DSIG_OK) {
        close(fd);
        if (addr->family == AF_UNIX)
            unlink(((const struct sockaddr_un *)&addr->ss)->sun_path);
    }
    return rc;
}

/* Register an outgoing connection; see net.h. */
int dsig_net_connect(dsig_net_loop *L, const dsig_net_addr *addr, uint64_t *id)
{
    if (!L || !addr || !id)
        return dsig_fail(DSIG_E_ARG, "net: NULL argument to connect");
    if ((addr->family == AF_INET && ((const struct sockaddr_in *)&addr->ss)->sin_port == 0) ||
        (addr->family == AF_INET6 && ((const struct sockaddr_in6 *)&addr->ss)->sin6_port == 0))
        return dsig_fail(DSIG_E_ARG, "net: cannot connect to port 0");
    if (addr->family != AF_INET && addr->family != AF_INET6 && addr->family != AF_UNIX)
        return dsig_fail(DSIG_E_ARG, "net: unknown address family");
    struct conn *c;
    pthread_mutex_lock(&L->mu);
    int rc = conn_new_locked(L, K_OUT, addr, &c);
    if (rc == DSIG_OK) {
        c->t_next = 0; /* first attempt at once */
        *id = c->id;
        wake_locked(L);
    }
    pthread_mutex_unlock(&L->mu);
    return rc;
}

/* Request a close; see net.h. */
int dsig_net_close(dsig_net_loop *L, uint64_t id)
{
    pthread_mutex_lock(&L->mu);
    struct conn *c = lookup_locked(L, id);
    if (c) {
        atomic_store(&c->close_req, 1);
        L->wake_pending = 0; /* the loop may be in this round's poll already */
        wake_locked(L);
    }
    pthread_mutex_unlock(&L->mu);
    return c ? DSIG_OK : dsig_fail(DSIG_E_STATE, "net: no connection %llu", (unsigned long long)id);
}

/* Bound address of a listener; see net.h. */
int dsig_net_local_addr(dsig_net_loop *L, uint64_t id, dsig_net_addr *out)
{
    pthread_mutex_lock(&L->mu);
    struct conn *c = lookup_locked(L, id);
    if (c && c->kind == K_LISTENER)
        *out = c->addr;
    pthread_mutex_unlock(&L->mu);
    return c && c->kind == K_LISTENER ? DSIG_OK : dsig_fail(DSIG_E_STATE, "net: no listener %llu",
                                                            (unsigned long long)id);
}

/* Check and enqueue under the lock: DSIG_OK, DSIG_E_WOULD_BLOCK or DSIG_E_STATE (no detail text). */
static int send_locked(dsig_net_loop *L, uint64_t id, uint8_t type, const struct iovec *iov, int n, size_t plen)
{
    struct conn *c = lookup_locked(L, id);
    if (!c || c->kind == K_LISTENER || c->state != S_UP || atomic_load(&c->close_req))
        return DSIG_E_STATE;
    if (!queue_room_locked(L, c, DSIG_NET_HDR_BYTES + plen, 0))
        return DSIG_E_WOULD_BLOCK;
    int was_empty = c->qused == 0;
    queue_push_locked(c, type, iov, n, plen, 0);
    if (was_empty)
        wake_locked(L);
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
        struct conn *c = lookup_locked(L, id);
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
    if (on_loop_thread(L)) {
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

/* Snapshot counters; see net.h. */
int dsig_net_stats_get(dsig_net_loop *L, uint64_t id, dsig_net_stats *out)
{
    memset(out, 0, sizeof *out);
    _Atomic uint64_t *src = L->tot;
    pthread_mutex_lock(&L->mu);
    struct conn *c = id ? lookup_locked(L, id) : NULL;
    if (id && !c) {
        pthread_mutex_unlock(&L->mu);
        return dsig_fail(DSIG_E_STATE, "net: no connection %llu", (unsigned long long)id);
    }
    if (c) {
        src = c->st;
        out->queued_frames = c->app_frames;
        out->queued_bytes = c->qused;
    }
#define ST_COPY(f) out->f = atomic_load_explicit(&src[ST_##f], memory_order_relaxed);
    DSIG_NET_STATS_FIELDS(ST_COPY)
#undef ST_COPY
    pthread_mutex_unlock(&L->mu);
    if (!c)
        out->rtt_last_us = 0; /* a sum of round-trips means nothing */
    return DSIG_OK;
}

/* Is a connection up? See net.h. */
int dsig_net_is_up(dsig_net_loop *L, uint64_t conn)
{
    pthread_mutex_lock(&L->mu);
    struct conn *c = lookup_locked(L, conn);
    int up = c && c->kind != K_LISTENER && c->state == S_UP;
    pthread_mutex_unlock(&L->mu);
    return up;
}
