/*
 * src/serve/conns.c — the connection guard: every open connection, the deadlines libmicrohttpd does not
 * enforce, and the per-address connection limit.
 *
 * libmicrohttpd's own timeout is an idle timeout: any byte resets it, so a client sending one header
 * line every few seconds ("slowloris") or a body at a few bytes a second holds a connection for as long
 * as it likes. The guard adds:
 *  - a header deadline: a connection must deliver a complete request head within header_timeout_s of
 *    being accepted (TLS handshake included) or of the end of its previous request (so an idle
 *    keep-alive connection is closed after header_timeout_s as well);
 *  - a minimum upload rate: while a body streams, every window of window_s seconds must bring at least
 *    min_rate × window_s bytes;
 *  - at most `per_address` connections per client address (IPv6 by /64, as the failed-authentication
 *    limiter), counted in buckets under a random key: addresses sharing a bucket share its limit.
 * A connection breaking one of them is cut by shutdown(2) on its socket from the guard's thread (or
 * from the accept callback for the per-address limit); libmicrohttpd's polling thread then sees the
 * socket closed and releases the connection (its completion callbacks run as for a client that went
 * away). The descriptor is only touched while the connection is in the list, under the list's mutex,
 * and libmicrohttpd closes it only after its close notification (serve_conn_closed) took it out.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "core/internal.h"
#include "serve_internal.h"

#define TICK_MS 200u            /* how often deadlines are checked: a deadline is late by at most this */
#define ADDR_BUCKETS 4096u

enum { PHASE_HEAD = 0, PHASE_BODY = 1, PHASE_BUSY = 2 };

struct serve_conn {
    struct serve_conn *prev, *next; /* the list (mutex) */
    int fd;
    size_t bucket;                  /* per-address bucket; counted only if `counted` */
    int counted;
    char peer[SERVE_PEER_MAX];
    _Atomic int phase;              /* PHASE_*, set by the connection's thread */
    _Atomic uint64_t phase_ns;      /* when the phase began */
    _Atomic uint64_t body_bytes;    /* received in the current body */
    uint64_t win_ns, win_bytes;     /* the upload window (guard thread only) */
    _Atomic int cut;                /* enum serve_cut: why the guard cut it */
};

struct serve_conns {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct serve_conn *head;
    _Atomic unsigned header_timeout_s;
    _Atomic uint64_t min_rate;
    _Atomic unsigned window_s;
    unsigned per_address;           /* 0: no limit (fixed at start) */
    uint8_t key[32];
    uint16_t *count;                /* connections per bucket (mutex) */
    int stop;
    pthread_t thread;
    int have_thread;
    void (*tick)(void *);
    void *tick_arg;
    _Atomic uint64_t open, cut_head, cut_slow, refused;
};

/* Cut a connection (mutex held: its descriptor is still open). */
static void cut(struct serve_conns *g, struct serve_conn *c, enum serve_cut why)
{
    int expected = SERVE_CUT_NONE;
    if (!atomic_compare_exchange_strong(&c->cut, &expected, (int)why))
        return; /* already cut */
    (void)shutdown(c->fd, SHUT_RDWR);
    atomic_fetch_add_explicit(why == SERVE_CUT_SLOW ? &g->cut_slow : &g->cut_head, 1, memory_order_relaxed);
}

/* Check every connection's deadline at `now` (mutex held). A connection's thread starts a phase
 * without the mutex, so a phase may have begun after `now` was read: such a connection has had no time
 * yet and is left to the next sweep. (Not checking this, a body phase that began after `now` made the
 * unsigned `now - win_ns` wrap around, and the connection was cut as too slow a fraction of a
 * millisecond into its body: no response at all — the fuzz finding of docs/fuzzing.md.) */
static void sweep(struct serve_conns *g, uint64_t now)
{
    uint64_t head_ns = (uint64_t)atomic_load(&g->header_timeout_s) * 1000000000ull;
    uint64_t rate = atomic_load(&g->min_rate);
    uint64_t win_ns = (uint64_t)atomic_load(&g->window_s) * 1000000000ull;
    for (struct serve_conn *c = g->head; c; c = c->next) {
        int phase = atomic_load_explicit(&c->phase, memory_order_acquire);
        uint64_t since = atomic_load_explicit(&c->phase_ns, memory_order_relaxed);
        if (now <= since)
            continue;
        if (phase == PHASE_HEAD) {
            if (head_ns && now - since >= head_ns)
                cut(g, c, SERVE_CUT_HEADERS);
            continue;
        }
        if (phase != PHASE_BODY || !rate || !win_ns)
            continue;
        uint64_t bytes = atomic_load_explicit(&c->body_bytes, memory_order_relaxed);
        if (c->win_ns < since) { /* a new body: its first window starts with it */
            c->win_ns = since;
            c->win_bytes = 0;
        }
        if (now < c->win_ns || now - c->win_ns < win_ns) /* (a sweep at an earlier reading than the last) */
            continue;
        if (bytes - c->win_bytes < rate * (win_ns / 1000000000ull)) {
            cut(g, c, SERVE_CUT_SLOW);
            continue;
        }
        c->win_ns = now;
        c->win_bytes = bytes;
    }
}

void serve_conns_sweep(struct serve_conns *g, uint64_t now)
{
    pthread_mutex_lock(&g->mu);
    sweep(g, now);
    pthread_mutex_unlock(&g->mu);
}

/* The guard's thread: a sweep and the owner's tick every TICK_MS. */
static void *guard_thread(void *arg)
{
    struct serve_conns *g = arg;
    pthread_setname_np(pthread_self(), "dsig-guard");
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec ts = serve_abstime_ms(TICK_MS);
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        if (g->stop)
            break;
        sweep(g, serve_now_ns());
        if (g->tick) {
            pthread_mutex_unlock(&g->mu);
            g->tick(g->tick_arg);
            pthread_mutex_lock(&g->mu);
        }
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* A guard with these limits and its thread; `tick` (may be NULL) runs on that thread every TICK_MS. */
int serve_conns_new(struct serve_conns **out, const struct serve_conn_limits *l, void (*tick)(void *), void *arg)
{
    *out = NULL;
    struct serve_conns *g = dsig_calloc(1, sizeof *g);
    if (!g)
        return dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->per_address = l->per_address;
    g->tick = tick;
    g->tick_arg = arg;
    serve_conns_set_limits(g, l);
    int rc = dsig_random_bytes(g->key, sizeof g->key);
    if (rc == DSIG_OK && g->per_address && !(g->count = dsig_calloc(ADDR_BUCKETS, sizeof *g->count)))
        rc = dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    if (rc == DSIG_OK && pthread_create(&g->thread, NULL, guard_thread, g) != 0)
        rc = dsig_fail(DSIG_E_INTERNAL, "serve: cannot start the connection guard thread");
    if (rc != DSIG_OK) {
        serve_conns_free(g);
        return rc;
    }
    g->have_thread = 1;
    *out = g;
    return DSIG_OK;
}

/* The deadlines that a reload may change (the per-address limit is fixed at start). */
void serve_conns_set_limits(struct serve_conns *g, const struct serve_conn_limits *l)
{
    atomic_store(&g->header_timeout_s, l->header_timeout_s);
    atomic_store(&g->min_rate, l->min_rate);
    atomic_store(&g->window_s, l->window_s);
}

/* Stop the thread and free; every connection must have been closed (libmicrohttpd stopped). NULL ok. */
void serve_conns_free(struct serve_conns *g)
{
    if (!g)
        return;
    if (g->have_thread) {
        pthread_mutex_lock(&g->mu);
        g->stop = 1;
        pthread_cond_signal(&g->cv);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->thread, NULL);
    }
    while (g->head) { /* only after a failed start: libmicrohttpd closes what it opened */
        struct serve_conn *c = g->head;
        g->head = c->next;
        dsig_xfree(c, 0);
    }
    dsig_xfree(g->count, 0);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    dsig_xfree(g, 0);
}

/* The numeric text of a socket address ("-" if not IPv4/IPv6). */
static void peer_text(const struct sockaddr *sa, char out[SERVE_PEER_MAX])
{
    strcpy(out, "-");
    if (!sa)
        return;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out, SERVE_PEER_MAX);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out, SERVE_PEER_MAX);
}

/* A connection was accepted: track it, or cut it at once when its address has its share already. */
struct serve_conn *serve_conn_open(struct serve_conns *g, int fd, const struct sockaddr *sa)
{
    struct serve_conn *c = dsig_calloc(1, sizeof *c);
    if (!c) {
        (void)shutdown(fd, SHUT_RDWR);
        return NULL;
    }
    c->fd = fd;
    peer_text(sa, c->peer);
    atomic_store(&c->phase_ns, serve_now_ns());
    pthread_mutex_lock(&g->mu);
    c->next = g->head;
    if (g->head)
        g->head->prev = c;
    g->head = c;
    if (g->per_address) {
        c->bucket = serve_peer_bucket(g->key, c->peer, ADDR_BUCKETS);
        if (g->count[c->bucket] >= g->per_address) {
            atomic_store(&c->cut, SERVE_CUT_PER_ADDRESS);
            (void)shutdown(fd, SHUT_RDWR);
            atomic_fetch_add_explicit(&g->refused, 1, memory_order_relaxed);
        } else {
            g->count[c->bucket]++;
            c->counted = 1;
        }
    }
    atomic_fetch_add_explicit(&g->open, 1, memory_order_relaxed);
    pthread_mutex_unlock(&g->mu);
    return c;
}

/* libmicrohttpd closes the connection (its descriptor right after this returns). NULL ok. */
void serve_conn_closed(struct serve_conns *g, struct serve_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->counted)
        g->count[c->bucket]--;
    atomic_fetch_sub_explicit(&g->open, 1, memory_order_relaxed);
    pthread_mutex_unlock(&g->mu);
    dsig_xfree(c, 0);
}

const char *serve_conn_peer(const struct serve_conn *c)
{
    return c ? c->peer : "-";
}

/* The request head is complete: the header deadline stops; a body (has_body) is held to the rate. */
void serve_conn_headers_done(struct serve_conn *c, int has_body)
{
    if (!c)
        return;
    atomic_store_explicit(&c->body_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&c->phase_ns, serve_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&c->phase, has_body ? PHASE_BODY : PHASE_BUSY, memory_order_release);
}

/* Body bytes received so far in this request. */
void serve_conn_body(struct serve_conn *c, uint64_t total)
{
    if (c)
        atomic_store_explicit(&c->body_bytes, total, memory_order_relaxed);
}

/* The body is complete (the response is being made): no rate any more. */
void serve_conn_body_done(struct serve_conn *c)
{
    if (c)
        atomic_store_explicit(&c->phase, PHASE_BUSY, memory_order_release);
}

/* The request ended: the next one's header deadline starts now. */
void serve_conn_request_done(struct serve_conn *c)
{
    if (!c)
        return;
    atomic_store_explicit(&c->phase_ns, serve_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&c->phase, PHASE_HEAD, memory_order_release);
}

enum serve_cut serve_conn_cut(const struct serve_conn *c)
{
    return c ? (enum serve_cut)atomic_load(&c->cut) : SERVE_CUT_NONE;
}

void serve_conns_stats(struct serve_conns *g, struct serve_conns_stats *st)
{
    st->open = atomic_load_explicit(&g->open, memory_order_relaxed);
    st->cut_headers = atomic_load_explicit(&g->cut_head, memory_order_relaxed);
    st->cut_slow = atomic_load_explicit(&g->cut_slow, memory_order_relaxed);
    st->refused_per_address = atomic_load_explicit(&g->refused, memory_order_relaxed);
}
