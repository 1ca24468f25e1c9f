/*
 * src/net/loop_internal.h — the state of a poll() event loop and the calls between its files:
 * loop.c (creation, one iteration, stop, counters), loop_conn.c (connection life: slots, connect with
 * backoff, accept, up / down), loop_queue.c (bounded send queues and the send calls), loop_read.c
 * (reading and decoding, heartbeats). The state machine is in docs/net.md.
 *
 * Locking: one mutex per loop guards the slot table, every connection's `state`/`fd` and send queue,
 * and the wake flag. Only the loop thread changes fds and frees connections, so a connection pointer it
 * took from the table stays valid for the whole iteration; other threads reach connections only through
 * their id, under the mutex. Counters are relaxed atomics. Callbacks run with the mutex released.
 * Functions named *_locked expect the mutex held.
 */
#ifndef DSIG_NET_LOOP_INTERNAL_H
#define DSIG_NET_LOOP_INTERNAL_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

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
static inline uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Monotonic clock in milliseconds. */
static inline uint64_t now_ms(void)
{
    return now_us() / 1000u;
}

/* Add to a counter of a connection, of its listener (if open) and of the loop. */
static inline void stat_add(dsig_net_loop *L, struct conn *c, int f, uint64_t n)
{
    if (c) {
        atomic_fetch_add_explicit(&c->st[f], n, memory_order_relaxed);
        if (c->parent)
            atomic_fetch_add_explicit(&c->parent->st[f], n, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&L->tot[f], n, memory_order_relaxed);
}


/* ---- loop_conn.c ---- */
/* The connection named by id, or NULL. (mu held) */
struct conn *net_lookup_locked(dsig_net_loop *L, uint64_t id);
/* Deliver an event (loop thread, no lock). */
void net_emit(dsig_net_loop *L, const dsig_net_event *ev);
/* Close the socket and mark the state. (loop thread) */
void net_close_fd(dsig_net_loop *L, struct conn *c, int state);
/* Free a connection and its slot. (loop thread) */
void net_conn_free(dsig_net_loop *L, struct conn *c);
/* A connection that was UP is lost: count, tell the caller, then reconnect (OUT) or free (IN). */
void net_conn_down(dsig_net_loop *L, struct conn *c, int reason, uint64_t now);
/* A connect attempt failed: back off. (loop thread) */
void net_connect_failed(dsig_net_loop *L, struct conn *c, uint64_t now);
/* Start a non-blocking connect. (loop thread) */
void net_start_connect(dsig_net_loop *L, struct conn *c, uint64_t now);
/* A pending connect finished (POLLOUT / POLLERR). (loop thread) */
void net_finish_connect(dsig_net_loop *L, struct conn *c, uint64_t now);
/* Accept pending connections on a listener. (loop thread) */
void net_do_accept(dsig_net_loop *L, struct conn *lc, uint64_t now);

/* ---- loop_queue.c ---- */
/* Throw the queue away (the connection is gone: a partial frame cannot be resumed). (mu held) */
void net_queue_discard_locked(dsig_net_loop *L, struct conn *c);
/* Write as much of the queue as the socket takes: 0, or -1 on a socket error. (mu held, loop thread) */
int net_queue_flush_locked(dsig_net_loop *L, struct conn *c);
/* Queue a heartbeat frame (PING with our clock, or the PONG echo). (loop thread) */
void net_queue_ctrl(dsig_net_loop *L, struct conn *c, uint8_t type, const uint8_t p[DSIG_NET_PING_BYTES]);

/* ---- loop_read.c ---- */
/* Read what the socket has and decode it: 1 if the connection went down (an IN one is freed). */
int net_do_read(dsig_net_loop *L, struct conn *c, uint64_t now);

/* ---- loop.c ---- */
/* Is the calling thread the loop thread? (mu held) */
int net_on_loop_thread(const dsig_net_loop *L);
/* Wake poll() unless a wake-up is already pending or we are the loop. (mu held) */
void net_wake_locked(dsig_net_loop *L);

#endif
