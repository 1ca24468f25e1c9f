/*
 * src/net/loop_conn.c — the life of a connection in the event loop: slots and ids, listeners and
 * accept, outgoing connects with jittered exponential backoff, up / down events, close and free.
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

/* The connection named by id, or NULL. (mu held) */
struct conn *net_lookup_locked(dsig_net_loop *L, uint64_t id)
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

/* Deliver an event (loop thread, no lock). */
void net_emit(dsig_net_loop *L, const dsig_net_event *ev)
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
void net_close_fd(dsig_net_loop *L, struct conn *c, int state)
{
    pthread_mutex_lock(&L->mu);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->state = state;
    net_queue_discard_locked(L, c);
    if (L->waiters)
        pthread_cond_broadcast(&L->cv);
    pthread_mutex_unlock(&L->mu);
}

/* Free a connection and its slot. (loop thread) */
void net_conn_free(dsig_net_loop *L, struct conn *c)
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
    net_close_fd(L, c, S_DEAD);
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
void net_conn_down(dsig_net_loop *L, struct conn *c, int reason, uint64_t now)
{
    if (dsig_net_decoder_midframe(&c->dec))
        stat_add(L, c, ST_cut_midframe, 1);
    if (reason == DSIG_NET_DOWN_MALFORMED)
        stat_add(L, c, ST_dropped_malformed, 1);
    else if (reason == DSIG_NET_DOWN_TIMEOUT)
        stat_add(L, c, ST_timeouts, 1);
    net_close_fd(L, c, c->kind == K_OUT ? S_IDLE : S_DEAD);
    dsig_net_decoder_reset(&c->dec);
    dsig_net_event ev = {.kind = DSIG_NET_EV_DOWN, .conn = c->id, .outgoing = c->kind == K_OUT,
                         .listener = c->listener_id, .reason = reason};
    if (c->kind == K_OUT)
        schedule_retry(L, c, now);
    net_emit(L, &ev);
    if (c->kind == K_IN)
        net_conn_free(L, c);
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
    net_emit(L, &ev);
}

/* A connect attempt failed: back off. (loop thread) */
void net_connect_failed(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    net_close_fd(L, c, S_IDLE);
    stat_add(L, c, ST_connect_failures, 1);
    schedule_retry(L, c, now);
}

/* Start a non-blocking connect. (loop thread) */
void net_start_connect(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    int fd = socket(c->addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        net_connect_failed(L, c, now);
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
        net_connect_failed(L, c, now);
}

/* A pending connect finished (POLLOUT / POLLERR). (loop thread) */
void net_finish_connect(dsig_net_loop *L, struct conn *c, uint64_t now)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err == 0)
        conn_up(L, c, now);
    else if (err != EINPROGRESS && err != EALREADY)
        net_connect_failed(L, c, now);
}

/* Accept pending connections on a listener. (loop thread) */
void net_do_accept(dsig_net_loop *L, struct conn *lc, uint64_t now)
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
        net_wake_locked(L);
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
        net_wake_locked(L);
    }
    pthread_mutex_unlock(&L->mu);
    return rc;
}

/* Request a close; see net.h. */
int dsig_net_close(dsig_net_loop *L, uint64_t id)
{
    pthread_mutex_lock(&L->mu);
    struct conn *c = net_lookup_locked(L, id);
    if (c) {
        atomic_store(&c->close_req, 1);
        L->wake_pending = 0; /* the loop may be in this round's poll already */
        net_wake_locked(L);
    }
    pthread_mutex_unlock(&L->mu);
    return c ? DSIG_OK : dsig_fail(DSIG_E_STATE, "net: no connection %llu", (unsigned long long)id);
}

/* Bound address of a listener; see net.h. */
int dsig_net_local_addr(dsig_net_loop *L, uint64_t id, dsig_net_addr *out)
{
    pthread_mutex_lock(&L->mu);
    struct conn *c = net_lookup_locked(L, id);
    if (c && c->kind == K_LISTENER)
        *out = c->addr;
    pthread_mutex_unlock(&L->mu);
    return c && c->kind == K_LISTENER ? DSIG_OK : dsig_fail(DSIG_E_STATE, "net: no listener %llu",
                                                            (unsigned long long)id);
}
