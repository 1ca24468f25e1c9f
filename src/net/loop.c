/*
 * src/net/loop.c — the poll() event loop (docs/net.md): creation and release, one iteration (timers,
 * poll, dispatch to the connection, queue and read code), stop, and the counters. What the loop's files
 * share, and its locking, is in loop_internal.h.
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
int net_on_loop_thread(const dsig_net_loop *L)
{
    return L->owner_set && pthread_equal(L->owner, pthread_self());
}

/* Wake poll() unless a wake-up is already pending or we are the loop. (mu held) */
void net_wake_locked(dsig_net_loop *L)
{
    if (L->wake_pending || net_on_loop_thread(L))
        return;
    L->wake_pending = 1;
    uint64_t one = 1;
    ssize_t r = write(L->wfd, &one, sizeof one);
    (void)r; /* EAGAIN means the counter is already non-zero: poll will wake anyway */
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
                net_conn_free(L, L->slot[s]);
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
                net_close_fd(L, c, S_DEAD);
                net_emit(L, &ev);
            }
            net_conn_free(L, c);
            L->act[i] = NULL;
            continue;
        }
        pthread_mutex_lock(&L->mu);
        int state = c->state;
        pthread_mutex_unlock(&L->mu);
        if (c->kind == K_OUT && state == S_IDLE && now >= c->t_next) {
            net_start_connect(L, c, now);
        } else if (state == S_CONNECTING && now >= c->t_connect + L->cfg.connect_timeout_ms) {
            net_connect_failed(L, c, now);
        } else if (state == S_UP && L->cfg.heartbeat_ms) {
            if (now >= c->t_rx + (uint64_t)L->cfg.heartbeat_ms * L->cfg.heartbeat_misses) {
                int freed = c->kind == K_IN; /* conn_down frees accepted connections */
                net_conn_down(L, c, DSIG_NET_DOWN_TIMEOUT, now);
                if (freed)
                    L->act[i] = NULL;
            } else if (now >= c->t_ping + L->cfg.heartbeat_ms) {
                uint8_t p[DSIG_NET_PING_BYTES];
                uint64_t t = now_us();
                for (int b = 0; b < 8; b++)
                    p[b] = (uint8_t)(t >> (56 - 8 * b));
                net_queue_ctrl(L, c, DSIG_NET_T_PING, p);
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
            c->write_err = net_queue_flush_locked(L, c) < 0;
        int pending = c->qused != 0;
        pthread_mutex_unlock(&L->mu);
        if (state == S_UP && c->write_err) {
            c->write_err = 0;
            int freed = c->kind == K_IN; /* conn_down frees accepted connections */
            net_conn_down(L, c, DSIG_NET_DOWN_IO, now);
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
            net_do_accept(L, c, now);
        } else if (L->pfd[i].events == POLLOUT && c->state == S_CONNECTING) {
            net_finish_connect(L, c, now);
        } else {
            if ((re & (POLLIN | POLLHUP | POLLERR)) && net_do_read(L, c, now))
                continue; /* down (and an accepted one freed) */
            pthread_mutex_lock(&L->mu);
            int state = c->state;
            if (state == S_UP && (re & POLLOUT) && c->qused)
                c->write_err = net_queue_flush_locked(L, c) < 0;
            pthread_mutex_unlock(&L->mu);
            if (state == S_UP && c->write_err) {
                c->write_err = 0;
                net_conn_down(L, c, DSIG_NET_DOWN_IO, now);
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

/* Snapshot counters; see net.h. */
int dsig_net_stats_get(dsig_net_loop *L, uint64_t id, dsig_net_stats *out)
{
    memset(out, 0, sizeof *out);
    _Atomic uint64_t *src = L->tot;
    pthread_mutex_lock(&L->mu);
    struct conn *c = id ? net_lookup_locked(L, id) : NULL;
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
    struct conn *c = net_lookup_locked(L, conn);
    int up = c && c->kind != K_LISTENER && c->state == S_UP;
    pthread_mutex_unlock(&L->mu);
    return up;
}
