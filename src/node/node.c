/*
 * src/node/node.c — the DSig node (docs/node.md): per-group signers whose batches are pushed to the
 * group's members, batch reception with replay window and background verification, acknowledgements,
 * re-sync after (re)connection, the application channel, and verification of any configured signer.
 *
 * Threads and locks:
 *   plane thread   runs the net loop; owns the connection table (conns[]); handles HELLO / BATCH /
 *                  BATCH_ACK / APP frames.
 *   workers        verify queued batch messages (the hybrid verifier runs with threads = 0, so the
 *                  verdict is known here and an ACK can follow), mark the replay window, send ACKs.
 *   signer threads call on_batch with each new batch message.
 *   n->lock        peers' readiness and the per-group rings of retained batch messages (+ ack bits);
 *                  held while sending BATCH frames so a batch is never missed between "peer ready" and
 *                  "new batch". Never held while calling into a signer (its callback takes n->lock).
 *   n->win_lock    the replay windows.   n->q_lock   the verification queue.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "classic/ed25519_derive.h"
#include "classic/eddsa.h"
#include "core/internal.h"
#include "dsig/error.h"
#include "dsig/jwk.h"
#include "dsig/mem.h"
#include "dsig/registry.h"
#include "dsig/stream.h"
#include "net/net.h"
#include "node/node_internal.h"

/* ---- counters -------------------------------------------------------------------------------- */

enum {
    C_GENERATED, C_SENT, C_RESENT, C_SEND_FAILED, C_ACKS, C_SIGS, C_RECEIVED, C_VERIFIED, C_UNKNOWN,
    C_BADSIG, C_REPLAY, C_MALFORMED, C_QFULL, C_VFAIL, C_APP_SENT, C_APP_RECV, C_APP_FAIL, C_REJECTED,
    C_AUTH_OK, C_AUTH_FAIL, C_UNAUTH, C_ACK_DEFER, C_ACK_RETRY, C_ACK_DROP, C_SLOW_DIRECT, C_RATE,
    C_BATCH_CHECKS,
    C_COUNT
};

struct peer {
    uint64_t id;
    uint8_t auth_pk[32];                /* its authentication key, derived from its configured key */
    dsig_net_addr addr;
    uint64_t out_conn;                  /* our outgoing connection (constant after start) */
    int out_ready;                      /* under n->lock: it authenticated on the current connection */
    _Atomic int ready;                  /* mirror of out_ready for lock-free readers */
    _Atomic uint64_t in_conn;           /* its latest authenticated connection to us (0: none); the
                                           higher id of a pair sends APP frames there (send_app) */
    /* What its batches may cost us (under q_lock; docs/node.md "Per-peer bounds"): */
    unsigned queued;                    /* its batches waiting for verification */
    int64_t tokens;                     /* verification budget, in 1/1000 batch */
    int64_t refilled_ms;                /* monotonic time the budget was last topped up */
};

/* What a batch whose root signature does not verify costs its sender on top of its own check: an
 * honest peer never sends one, a flooding peer is slowed to rate / (1 + this). */
#define BAD_BATCH_COST 64

struct retained {
    uint64_t seq;
    uint64_t acked;                     /* bit per member position in the group */
    uint64_t pending;                   /* bit per member position: refused by its full send queue,
                                           to be retried by the plane thread (retry_pending) */
    size_t len;
    uint8_t *msg;
};

struct ngroup {
    struct dsig_node *node;
    size_t gi;
    const struct node_cfg_group *cg;
    size_t name_len;
    dsig_hybrid_verifier *verifier;     /* this group's batches of the other members (if member): one
                                           verifier per group, so that each signer's batch seqs in it
                                           form one growing sequence (its sequence floor) */
    int member;                         /* this node belongs to the group */
    dsig_hybrid_signer *signer;         /* if member */
    uint64_t all_mask;                  /* member bits except this node's */
    struct retained *ring;              /* under n->lock */
    size_t ring_cap, ring_head, ring_len;
    uint64_t pending_mask;              /* under n->lock: members with a refused batch in the ring; new
                                           batches to them wait behind it so they arrive in seq order */
    _Atomic uint64_t last_used;         /* seq of the latest signature (keys are used in seq order) */
    _Atomic int used_any;
};

struct conn_state {
    uint64_t conn;
    int outgoing;
    int hello;                          /* the peer's HELLO arrived (claimed id in peer_idx) */
    int identified;                     /* its AUTH verified: frames are accepted */
    int closing;
    long peer_idx;                      /* config index of the peer once it claimed an id (or expected) */
    uint8_t my_nonce[NODE_NONCE_BYTES]; /* fresh per connection: the peer signs it */
    uint8_t peer_nonce[NODE_NONCE_BYTES];
};

/* A BATCH_ACK refused by a full send queue, waiting for the plane thread's retry. */
struct pending_ack {
    uint64_t conn, signer, seq;
    size_t gi;
};
#define ACK_PENDING_MAX 1024u           /* bound of the retry list (beyond it: re-sync recovers) */

struct work {
    struct work *next;
    uint64_t signer;
    size_t sidx, gi;
    size_t from;                        /* config index of the peer that sent it */
    uint64_t seq;
    uint64_t conn;
    size_t len;
    uint8_t msg[];
};

struct dsig_node {
    dsig_node_config *cfg;
    uint64_t my_id;
    size_t my_idx;
    dsig_node_options opt;
    uint64_t instance;
    char *listen_copy;                  /* options.listen_address, or NULL: the configured address */
    struct peer *peers;                 /* indexed like cfg->nodes */
    struct ngroup *groups;              /* indexed like cfg->groups */

    pthread_mutex_t lock;
    pthread_cond_t cond;                /* an ACK arrived (wait_ready) */

    pthread_mutex_t win_lock;
    struct node_window *windows;        /* [signer index × n_groups + group] */
    unsigned win_width;

    dsig_net_loop *loop;
    uint64_t listener;
    pthread_t plane;
    int started, stopped;

    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    struct work *q_head, *q_tail;
    unsigned q_len;
    int q_stop;
    pthread_t *workers;
    unsigned n_workers;

    struct conn_state *conns;           /* plane thread only */
    size_t n_conns, cap_conns;

    dsig_ed25519_dkey auth_sk;          /* derived authentication key: signs HELLO transcripts only */

    pthread_mutex_t ack_lock;           /* the ACK retry list */
    struct pending_ack *acks;           /* ACK_PENDING_MAX entries */
    size_t n_acks;

    _Atomic int retry;                  /* some ring entry has a pending bit or an ACK waits: the plane
                                           polls briefly */
    _Atomic uint64_t c[C_COUNT];
};

#define DEFAULT_POOL 512u
/* Per-peer bounds: an honest signer's burst — what its send queue (256 frames or 1 MiB) and the
 * socket buffers release at once after a stall — must fit, or its batches would be lost. */
#define DEFAULT_PEER_QUEUE 512u
#define DEFAULT_PEER_BURST 1024u
#define DEFAULT_PEER_RATE 2000u
#define MIN_CACHE 32u
#define MAX_WORKERS 16u
#define RETRY_MS 10                     /* plane tick while refused batches wait for queue room */
#define IDLE_MS 250                     /* plane tick otherwise (the loop wakes on any event anyway) */

static int retry_acks(dsig_node *n);
static int64_t mono_ms(void);

/* Relaxed counter increment. */
static void bump(dsig_node *n, int c)
{
    atomic_fetch_add_explicit(&n->c[c], 1, memory_order_relaxed);
}

/* Fill the documented defaults. */
void dsig_node_options_default(dsig_node_options *o)
{
    memset(o, 0, sizeof *o);
    o->pool_target = DEFAULT_POOL;
    o->signer_threads = 1;
    o->verify_threads = 1;
    o->cache_batches = MIN_CACHE;
    o->verify_queue = 1024;
    o->peer_verify_queue = DEFAULT_PEER_QUEUE;
    o->peer_verify_rate = DEFAULT_PEER_RATE;
    o->peer_verify_burst = DEFAULT_PEER_BURST;
    o->max_app_bytes = 65536u - 64u;
    o->heartbeat_ms = 500;
    o->backoff_max_ms = 2000;
}

/* Wall clock in µs: the low 56 bits of every signer's first batch seq, so a restarted node starts past
 * every seq it used before (one batch takes far more than 1 µs to generate). */
static uint64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- sending batches (n->lock held) ------------------------------------------------------------ */

/* Queue one BATCH frame of group g to a peer; counts a success, and a failure if count_fail. */
static int send_batch(dsig_node *n, struct ngroup *g, struct peer *p, const struct retained *r,
                      int count_fail)
{
    uint8_t pre[NODE_BATCH_HDR_MAX];
    size_t pl = node_batch_prefix(pre, n->my_id, g->cg->name, g->name_len);
    struct iovec iov[2] = {{pre, pl}, {r->msg, r->len}};
    int rc = dsig_net_sendv(n->loop, p->out_conn, DSIG_NODE_T_BATCH, iov, 2);
    if (rc == DSIG_OK)
        bump(n, C_SENT);
    else if (count_fail)
        bump(n, C_SEND_FAILED);
    return rc;
}

/* Send retained batch r to the member at position pos (peer p, ready), or, if its send queue is full
 * or it already has refused batches waiting (order: the verifier's replay window slides forward),
 * mark r pending for the plane thread's retry. Memory stays bounded: pending is a bit of a ring entry
 * that exists anyway. Returns 1 if queued now. (n->lock held) */
static int push_batch(dsig_node *n, struct ngroup *g, int pos, struct peer *p, struct retained *r)
{
    uint64_t bit = UINT64_C(1) << pos;
    if (g->pending_mask & bit) {
        r->pending |= bit;
        bump(n, C_SEND_FAILED);
        return 0;
    }
    int rc = send_batch(n, g, p, r, 1);
    if (rc == DSIG_OK)
        return 1;
    if (rc == DSIG_E_WOULD_BLOCK) { /* other errors: the connection is going down; re-sync covers it */
        r->pending |= bit;
        g->pending_mask |= bit;
        atomic_store_explicit(&n->retry, 1, memory_order_relaxed);
    }
    return 0;
}

/* Is retained batch r possibly still holding unused keys? */
static int still_unused(const struct ngroup *g, const struct retained *r)
{
    if (!atomic_load_explicit(&g->used_any, memory_order_relaxed))
        return 1;
    return r->seq >= atomic_load_explicit(&g->last_used, memory_order_relaxed);
}

/* Clear peer p's acknowledgements of our retained batches and its pending retries: it is down or
 * about to be re-synced (n->lock held). */
static void forget_acks(dsig_node *n, size_t pidx)
{
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        int pos = g->member ? node_cfg_member_pos(g->cg, n->peers[pidx].id) : -1;
        if (pos < 0)
            continue;
        uint64_t keep = ~(UINT64_C(1) << pos);
        for (size_t k = 0; k < g->ring_len; k++) {
            struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
            r->acked &= keep;
            r->pending &= keep;
        }
        g->pending_mask &= keep;
    }
}

/* Re-send every retained batch with unused keys of every group shared with peer p (now ready). */
static void resync(dsig_node *n, size_t pidx)
{
    struct peer *p = &n->peers[pidx];
    forget_acks(n, pidx); /* a reconnected peer may have lost its cache: it acks again */
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        int pos = g->member ? node_cfg_member_pos(g->cg, p->id) : -1;
        if (pos < 0)
            continue;
        for (size_t k = 0; k < g->ring_len; k++) {
            struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
            if (!still_unused(g, r))
                continue;
            if (push_batch(n, g, pos, p, r))
                bump(n, C_RESENT);
        }
    }
}

/* Plane thread, between loop iterations: re-send, in seq order, the batches a full send queue refused,
 * as long as the queue takes them (the first refusal stops that peer until the next tick: the bound and
 * the back-pressure stay the transport's). Batches whose keys are all used are no longer worth sending
 * and just lose their bit. */
static void retry_pending(dsig_node *n)
{
    if (!atomic_exchange_explicit(&n->retry, 0, memory_order_relaxed))
        return;
    int again = retry_acks(n);
    pthread_mutex_lock(&n->lock);
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        if (!g->member || !g->pending_mask)
            continue;
        uint64_t left = 0;
        for (size_t pos = 0; pos < g->cg->n_members; pos++) {
            uint64_t bit = UINT64_C(1) << pos;
            if (!(g->pending_mask & bit))
                continue;
            long pi = node_cfg_index(n->cfg, g->cg->members[pos]);
            int ready = pi >= 0 && n->peers[pi].out_ready;
            int blocked = 0;
            for (size_t k = 0; k < g->ring_len; k++) {
                struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
                if (!(r->pending & bit))
                    continue;
                if (!ready || !still_unused(g, r)) { /* down: the re-sync will send it */
                    r->pending &= ~bit;
                    continue;
                }
                if (blocked) {
                    left |= bit;
                    continue;
                }
                int rc = send_batch(n, g, &n->peers[pi], r, 0);
                if (rc == DSIG_OK) {
                    r->pending &= ~bit;
                    bump(n, C_RESENT);
                } else if (rc == DSIG_E_WOULD_BLOCK) {
                    blocked = 1;
                    left |= bit;
                } else { /* not UP any more: the DOWN event and the re-sync take over */
                    r->pending &= ~bit;
                }
            }
        }
        g->pending_mask = left;
        again |= left != 0;
    }
    if (again)
        atomic_store_explicit(&n->retry, 1, memory_order_relaxed);
    pthread_mutex_unlock(&n->lock);
}

/* Signer callback (background thread): retain the batch message and push it to the ready members. */
static void on_batch(void *arg, uint64_t signer_id, unsigned group, const uint8_t *msg, size_t len)
{
    struct ngroup *g = arg;
    dsig_node *n = g->node;
    (void)signer_id;
    (void)group; /* one signer per node group: always 0 */
    uint8_t *copy = dsig_malloc(len);
    if (!copy)
        return; /* the batch stays usable through the slow path */
    memcpy(copy, msg, len);
    uint64_t seq = node_batch_msg_seq(msg);
    bump(n, C_GENERATED);
    pthread_mutex_lock(&n->lock);
    /* drop used-up batches first, then the oldest if still full */
    while (g->ring_len && (!still_unused(g, &g->ring[g->ring_head]) || g->ring_len == g->ring_cap)) {
        dsig_xfree(g->ring[g->ring_head].msg, 0);
        g->ring_head = (g->ring_head + 1) % g->ring_cap;
        g->ring_len--;
    }
    struct retained *r = &g->ring[(g->ring_head + g->ring_len) % g->ring_cap];
    r->seq = seq;
    r->acked = 0;
    r->pending = 0;
    r->len = len;
    r->msg = copy;
    g->ring_len++;
    for (size_t i = 0; i < g->cg->n_members; i++) {
        uint64_t id = g->cg->members[i];
        if (id == n->my_id)
            continue;
        long pi = node_cfg_index(n->cfg, id);
        if (pi >= 0 && n->peers[pi].out_ready)
            (void)push_batch(n, g, (int)i, &n->peers[pi], r);
    }
    pthread_mutex_unlock(&n->lock);
}

/* ---- connections (plane thread) ---------------------------------------------------------------- */

/* The state of connection `conn`, or NULL. */
static struct conn_state *conn_find(dsig_node *n, uint64_t conn)
{
    for (size_t i = 0; i < n->n_conns; i++)
        if (n->conns[i].conn == conn)
            return &n->conns[i];
    return NULL;
}

/* Add a connection to the table (NULL when out of memory: the connection is closed). */
static struct conn_state *conn_add(dsig_node *n, uint64_t conn, int outgoing)
{
    if (n->n_conns == n->cap_conns) {
        size_t cap = n->cap_conns ? 2 * n->cap_conns : 16;
        struct conn_state *c = dsig_realloc(n->conns, cap * sizeof *c);
        if (!c)
            return NULL;
        n->conns = c;
        n->cap_conns = cap;
    }
    struct conn_state *cs = &n->conns[n->n_conns++];
    memset(cs, 0, sizeof *cs);
    cs->conn = conn;
    cs->outgoing = outgoing;
    cs->peer_idx = -1;
    return cs;
}

/* Remove a connection from the table. */
static void conn_remove(dsig_node *n, struct conn_state *cs)
{
    *cs = n->conns[--n->n_conns];
}

/* Drop an accepted connection (outgoing ones are kept: closing would stop their reconnection). */
static void conn_reject(dsig_node *n, struct conn_state *cs)
{
    if (!cs->outgoing && !cs->closing) {
        cs->closing = 1;
        dsig_net_close(n->loop, cs->conn);
    }
}

/* Config index of the peer whose outgoing connection is `conn`, or -1. */
static long peer_by_out_conn(dsig_node *n, uint64_t conn)
{
    for (size_t i = 0; i < n->cfg->n_nodes; i++)
        if (i != n->my_idx && n->peers[i].out_conn == conn)
            return (long)i;
    return -1;
}

/* HELLO: the peer claims an id and sends its nonce; we answer with AUTH, our signature of the
 * transcript over both nonces and both ids. Nothing is accepted from it before its own AUTH verifies. */
static void handle_hello(dsig_node *n, struct conn_state *cs, const uint8_t *p, size_t len)
{
    uint64_t id, inst;
    if (cs->hello || node_hello_parse(p, len, &id, &inst, cs->peer_nonce) != DSIG_OK) {
        bump(n, C_MALFORMED); /* a bad payload layout or a second HELLO ... */
        bump(n, C_REJECTED);  /* ... closes the connection (node.h: connections_rejected) */
        conn_reject(n, cs);
        return;
    }
    long idx = node_cfg_index(n->cfg, id);
    if (idx < 0 || id == n->my_id || (cs->outgoing && idx != cs->peer_idx)) {
        if (idx < 0)
            bump(n, C_UNKNOWN);
        bump(n, C_REJECTED);
        conn_reject(n, cs);
        return;
    }
    cs->hello = 1;
    cs->peer_idx = idx;
    uint8_t t[NODE_AUTH_TRANSCRIPT_BYTES], sig[NODE_AUTH_BYTES];
    node_auth_transcript(t, n->my_id, id, cs->my_nonce, cs->peer_nonce);
    if (dsig_ed25519_dkey_sign(&n->auth_sk, t, sizeof t, sig) != DSIG_OK)
        return; /* cannot happen with a valid key; the peer then never sees us authenticated */
    (void)dsig_net_send(n->loop, cs->conn, DSIG_NODE_T_AUTH, sig, sizeof sig);
}

/* AUTH: the peer's signature of the transcript under the configured key of the id it claimed. A
 * failure is counted and the connection refused (an accepted one is closed; an outgoing one stays
 * unauthenticated — its frames are dropped — until the transport reconnects). */
static void handle_auth(dsig_node *n, struct conn_state *cs, const uint8_t *p, size_t len)
{
    if (!cs->hello || cs->identified || len != NODE_AUTH_BYTES) {
        bump(n, C_MALFORMED);
        bump(n, C_REJECTED);
        conn_reject(n, cs);
        return;
    }
    uint64_t id = n->cfg->nodes[cs->peer_idx].id;
    uint8_t t[NODE_AUTH_TRANSCRIPT_BYTES];
    node_auth_transcript(t, id, n->my_id, cs->peer_nonce, cs->my_nonce);
    if (!dsig_ed25519_verify_pk(n->peers[cs->peer_idx].auth_pk, t, sizeof t, p)) {
        bump(n, C_AUTH_FAIL);
        bump(n, C_REJECTED);
        conn_reject(n, cs);
        return;
    }
    bump(n, C_AUTH_OK);
    cs->identified = 1;
    if (cs->outgoing) {
        pthread_mutex_lock(&n->lock);
        n->peers[cs->peer_idx].out_ready = 1;
        atomic_store_explicit(&n->peers[cs->peer_idx].ready, 1, memory_order_release);
        resync(n, (size_t)cs->peer_idx);
        pthread_mutex_unlock(&n->lock);
    } else {
        atomic_store_explicit(&n->peers[cs->peer_idx].in_conn, cs->conn, memory_order_release);
    }
}

/* Keep a refused ACK for the plane thread's retry (duplicates are kept once). */
static void defer_ack(dsig_node *n, uint64_t conn, uint64_t signer, uint64_t seq, size_t gi)
{
    pthread_mutex_lock(&n->ack_lock);
    for (size_t i = 0; i < n->n_acks; i++) {
        struct pending_ack *a = &n->acks[i];
        if (a->conn == conn && a->signer == signer && a->seq == seq && a->gi == gi) {
            pthread_mutex_unlock(&n->ack_lock);
            return;
        }
    }
    if (n->n_acks == ACK_PENDING_MAX) {
        pthread_mutex_unlock(&n->ack_lock);
        bump(n, C_ACK_DROP);
        return;
    }
    n->acks[n->n_acks++] = (struct pending_ack){conn, signer, seq, gi};
    atomic_store_explicit(&n->retry, 1, memory_order_relaxed);
    pthread_mutex_unlock(&n->ack_lock);
    bump(n, C_ACK_DEFER);
}

/* Queue one ACK frame; DSIG_E_WOULD_BLOCK and other errors are returned. */
static int ack_frame(dsig_node *n, uint64_t conn, uint64_t signer, uint64_t seq, size_t gi)
{
    uint8_t a[NODE_ACK_MAX];
    const struct node_cfg_group *cg = &n->cfg->groups[gi];
    size_t al = node_ack_encode(a, signer, seq, cg->name, strlen(cg->name));
    return dsig_net_send(n->loop, conn, DSIG_NODE_T_BATCH_ACK, a, al);
}

/* Send an ACK for (signer, group, seq) back on `conn`; a full send queue defers it for retry. */
static void send_ack(dsig_node *n, uint64_t conn, uint64_t signer, uint64_t seq, size_t gi)
{
    if (ack_frame(n, conn, signer, seq, gi) == DSIG_E_WOULD_BLOCK)
        defer_ack(n, conn, signer, seq, gi);
}

/* Plane thread: retry the deferred ACKs; those whose connection is gone are dropped (the signer
 * re-syncs when it reconnects). Returns 1 if some still wait. */
static int retry_acks(dsig_node *n)
{
    pthread_mutex_lock(&n->ack_lock);
    size_t k = 0;
    for (size_t i = 0; i < n->n_acks; i++) {
        struct pending_ack a = n->acks[i];
        int rc = ack_frame(n, a.conn, a.signer, a.seq, a.gi);
        if (rc == DSIG_OK)
            bump(n, C_ACK_RETRY);
        else if (rc == DSIG_E_WOULD_BLOCK)
            n->acks[k++] = a;
        else
            bump(n, C_ACK_DROP);
    }
    n->n_acks = k;
    pthread_mutex_unlock(&n->ack_lock);
    return k != 0;
}

/* Top up a peer's verification budget for the time elapsed and take one batch from it: 1 if it had
 * one, 0 if it is spent (q_lock held). */
static int budget_take(dsig_node *n, struct peer *p)
{
    int64_t now = mono_ms(), burst = (int64_t)n->opt.peer_verify_burst * 1000;
    p->tokens += (now - p->refilled_ms) * (int64_t)n->opt.peer_verify_rate; /* rate/s = rate/1000 per ms */
    p->refilled_ms = now;
    if (p->tokens > burst)
        p->tokens = burst;
    if (p->tokens < 1000)
        return 0;
    p->tokens -= 1000;
    return 1;
}

/* BATCH: validate, check the replay window and the sender's bounds, queue for background
 * verification. */
static void handle_batch(dsig_node *n, struct conn_state *cs, const uint8_t *p, size_t len)
{
    struct node_batch_view b;
    if (node_batch_parse(p, len, &b) != DSIG_OK) {
        bump(n, C_MALFORMED);
        return;
    }
    bump(n, C_RECEIVED);
    long si = node_cfg_index(n->cfg, b.signer);
    if (si < 0) {
        bump(n, C_UNKNOWN);
        return;
    }
    long gi = node_cfg_group_index(n->cfg, b.group, b.group_len);
    if (gi < 0 || !n->groups[gi].verifier || b.signer == n->my_id ||
        node_cfg_member_pos(&n->cfg->groups[gi], b.signer) < 0 ||
        (b.seq >> NODE_SEQ_GROUP_SHIFT) != (uint64_t)gi ||
        b.msg_len != dsig_hybrid_params_batch_msg_bytes(n->cfg->groups[gi].params)) {
        bump(n, C_MALFORMED);
        return;
    }
    pthread_mutex_lock(&n->win_lock);
    int st = node_window_check(&n->windows[(size_t)si * n->cfg->n_groups + (size_t)gi], n->win_width,
                               b.seq);
    pthread_mutex_unlock(&n->win_lock);
    if (st != NODE_WIN_NEW) {
        bump(n, C_REPLAY);
        if (st == NODE_WIN_SEEN) /* verified and cached already (e.g. a re-sync): confirm it */
            send_ack(n, cs->conn, b.signer, b.seq, (size_t)gi);
        return;
    }
    struct work *w = dsig_malloc(sizeof *w + b.msg_len);
    if (!w) {
        bump(n, C_QFULL);
        return;
    }
    w->next = NULL;
    w->signer = b.signer;
    w->sidx = (size_t)si;
    w->gi = (size_t)gi;
    w->seq = b.seq;
    w->conn = cs->conn;
    w->from = (size_t)cs->peer_idx;
    w->len = b.msg_len;
    memcpy(w->msg, b.msg, b.msg_len);
    struct peer *from = &n->peers[w->from];
    pthread_mutex_lock(&n->q_lock);
    int full = n->q_len >= n->opt.verify_queue || n->q_stop || from->queued >= n->opt.peer_verify_queue;
    int broke = !full && !budget_take(n, from);
    if (full || broke) {
        pthread_mutex_unlock(&n->q_lock);
        dsig_xfree(w, 0);
        bump(n, full ? C_QFULL : C_RATE);
        return;
    }
    from->queued++;
    if (n->q_tail)
        n->q_tail->next = w;
    else
        n->q_head = w;
    n->q_tail = w;
    n->q_len++;
    pthread_cond_signal(&n->q_cond);
    pthread_mutex_unlock(&n->q_lock);
}

/* BATCH_ACK: a member has verified and cached one of our batches. */
static void handle_ack(dsig_node *n, struct conn_state *cs, const uint8_t *p, size_t len)
{
    uint64_t signer, seq;
    const char *gname;
    size_t glen;
    if (node_ack_parse(p, len, &signer, &seq, &gname, &glen) != DSIG_OK || signer != n->my_id) {
        bump(n, C_MALFORMED);
        return;
    }
    long gi = node_cfg_group_index(n->cfg, gname, glen);
    if (gi < 0 || !n->groups[gi].member) {
        bump(n, C_MALFORMED);
        return;
    }
    struct ngroup *g = &n->groups[gi];
    int pos = node_cfg_member_pos(g->cg, n->peers[cs->peer_idx].id);
    if (pos < 0) { /* acks only count from the group's members */
        bump(n, C_MALFORMED);
        return;
    }
    bump(n, C_ACKS);
    pthread_mutex_lock(&n->lock);
    for (size_t k = 0; k < g->ring_len; k++) {
        struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
        if (r->seq == seq) {
            r->acked |= UINT64_C(1) << pos;
            pthread_cond_broadcast(&n->cond);
            break;
        }
    }
    pthread_mutex_unlock(&n->lock);
}

/* The net loop's callback: connection state and frame dispatch. */
static void on_event(void *arg, dsig_net_loop *loop, const dsig_net_event *ev)
{
    dsig_node *n = arg;
    (void)loop;
    struct conn_state *cs = conn_find(n, ev->conn);
    switch (ev->kind) {
    case DSIG_NET_EV_UP: {
        if (!cs)
            cs = conn_add(n, ev->conn, ev->outgoing);
        if (!cs) {
            if (!ev->outgoing)
                dsig_net_close(n->loop, ev->conn);
            return;
        }
        cs->hello = 0;
        cs->identified = 0;
        cs->closing = 0;
        cs->peer_idx = ev->outgoing ? peer_by_out_conn(n, ev->conn) : -1;
        if (dsig_random_bytes(cs->my_nonce, sizeof cs->my_nonce) != DSIG_OK) {
            cs->closing = 1; /* no fresh nonce, no authentication: never identified */
            if (!ev->outgoing)
                dsig_net_close(n->loop, ev->conn);
            return;
        }
        uint8_t h[NODE_HELLO_BYTES];
        node_hello_encode(h, n->my_id, n->instance, cs->my_nonce);
        (void)dsig_net_send(n->loop, ev->conn, DSIG_NODE_T_HELLO, h, sizeof h);
        return;
    }
    case DSIG_NET_EV_DOWN:
        if (ev->reason == DSIG_NET_DOWN_MALFORMED)
            bump(n, C_MALFORMED);
        if (!cs)
            return;
        if (cs->outgoing && cs->peer_idx >= 0) {
            pthread_mutex_lock(&n->lock);
            n->peers[cs->peer_idx].out_ready = 0;
            atomic_store_explicit(&n->peers[cs->peer_idx].ready, 0, memory_order_release);
            forget_acks(n, (size_t)cs->peer_idx); /* it may be restarting with an empty cache */
            pthread_mutex_unlock(&n->lock);
        }
        if (!cs->outgoing && cs->identified) {
            uint64_t cur = cs->conn;
            atomic_compare_exchange_strong(&n->peers[cs->peer_idx].in_conn, &cur, 0);
        }
        conn_remove(n, cs);
        return;
    case DSIG_NET_EV_FRAME:
        if (!cs || cs->closing)
            return;
        if (ev->type == DSIG_NODE_T_HELLO) {
            handle_hello(n, cs, ev->payload, ev->len);
            return;
        }
        if (ev->type == DSIG_NODE_T_AUTH) {
            handle_auth(n, cs, ev->payload, ev->len);
            return;
        }
        if (!cs->hello) { /* nothing but HELLO before the peer said who it claims to be */
            bump(n, C_MALFORMED);
            conn_reject(n, cs);
            return;
        }
        if (!cs->identified) { /* claimed, not proven: no frame is taken from it */
            bump(n, C_UNAUTH);
            return;
        }
        switch (ev->type) {
        case DSIG_NODE_T_BATCH:
            handle_batch(n, cs, ev->payload, ev->len);
            return;
        case DSIG_NODE_T_BATCH_ACK:
            handle_ack(n, cs, ev->payload, ev->len);
            return;
        case DSIG_NODE_T_APP:
            bump(n, C_APP_RECV);
            if (n->opt.on_app)
                n->opt.on_app(n->opt.on_app_arg, n->peers[cs->peer_idx].id, ev->payload, ev->len);
            return;
        default:
            bump(n, C_MALFORMED);
            return;
        }
    default:
        return;
    }
}

/* ---- threads --------------------------------------------------------------------------------- */

/* Plane thread: the event loop until dsig_node_stop, retrying refused batches between iterations
 * (the transport has no "queue drained" event; a short tick while something waits is enough). */
static void *plane_main(void *arg)
{
    dsig_node *n = arg;
    for (;;) {
        int t = atomic_load_explicit(&n->retry, memory_order_relaxed) ? RETRY_MS : IDLE_MS;
        if (dsig_net_loop_run_once(n->loop, t) != DSIG_OK)
            break;
        retry_pending(n);
    }
    return NULL;
}

/* Verification worker: check root signatures, cache, mark the window, acknowledge. */
static void *worker_main(void *arg)
{
    dsig_node *n = arg;
    for (;;) {
        pthread_mutex_lock(&n->q_lock);
        while (!n->q_head && !n->q_stop)
            pthread_cond_wait(&n->q_cond, &n->q_lock);
        if (n->q_stop) {
            pthread_mutex_unlock(&n->q_lock);
            return NULL;
        }
        struct work *w = n->q_head;
        n->q_head = w->next;
        if (!n->q_head)
            n->q_tail = NULL;
        n->q_len--;
        pthread_mutex_unlock(&n->q_lock);

        dsig_hybrid_verifier *v = n->groups[w->gi].verifier;
        int rc = dsig_hybrid_verifier_receive_batch(v, w->signer, w->msg, w->len);
        bump(n, C_BATCH_CHECKS);
        pthread_mutex_lock(&n->q_lock);
        struct peer *from = &n->peers[w->from];
        from->queued--;
        if (rc == DSIG_E_VERIFY) { /* a forged batch: its sender pays for the check, and more */
            int64_t floor = -(int64_t)n->opt.peer_verify_burst * 1000;
            from->tokens -= (int64_t)BAD_BATCH_COST * 1000;
            if (from->tokens < floor)
                from->tokens = floor;
        }
        pthread_mutex_unlock(&n->q_lock);
        if (rc == DSIG_OK) {
            pthread_mutex_lock(&n->win_lock);
            node_window_mark(&n->windows[w->sidx * n->cfg->n_groups + w->gi], n->win_width, w->seq);
            pthread_mutex_unlock(&n->win_lock);
            bump(n, C_VERIFIED);
            send_ack(n, w->conn, w->signer, w->seq, w->gi);
        } else if (rc == DSIG_E_VERIFY) {
            bump(n, C_BADSIG);
        } else if (rc == DSIG_E_STALE) { /* below the sequence floor: an old batch */
            bump(n, C_REPLAY);
        } else if (rc != DSIG_E_EQUIVOCATION) { /* equivocation is counted by the verifier */
            bump(n, C_MALFORMED);
        }
        dsig_xfree(w, 0);
    }
}

/* ---- life cycle -------------------------------------------------------------------------------- */

/* Free everything (threads already stopped). */
static void node_destroy(dsig_node *n)
{
    if (n->groups) {
        for (size_t gi = 0; gi < n->cfg->n_groups; gi++)
            dsig_hybrid_signer_free(n->groups[gi].signer); /* joins its threads: no more on_batch */
    }
    if (n->groups)
        for (size_t gi = 0; gi < n->cfg->n_groups; gi++)
            dsig_hybrid_verifier_free(n->groups[gi].verifier);
    dsig_net_loop_free(n->loop);
    if (n->groups) {
        for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
            struct ngroup *g = &n->groups[gi];
            for (size_t k = 0; k < g->ring_len; k++)
                dsig_xfree(g->ring[(g->ring_head + k) % g->ring_cap].msg, 0);
            dsig_xfree(g->ring, 0);
        }
    }
    while (n->q_head) {
        struct work *w = n->q_head;
        n->q_head = w->next;
        dsig_xfree(w, 0);
    }
    dsig_xfree(n->groups, 0);
    dsig_xfree(n->peers, 0);
    dsig_xfree(n->windows, 0);
    dsig_xfree(n->conns, 0);
    dsig_xfree(n->workers, 0);
    dsig_xfree(n->listen_copy, 0);
    dsig_xfree(n->acks, 0);
    dsig_memzero(&n->auth_sk, sizeof n->auth_sk);
    pthread_mutex_destroy(&n->ack_lock);
    pthread_mutex_destroy(&n->lock);
    pthread_cond_destroy(&n->cond);
    pthread_mutex_destroy(&n->win_lock);
    pthread_mutex_destroy(&n->q_lock);
    pthread_cond_destroy(&n->q_cond);
    dsig_node_config_free(n->cfg);
    dsig_xfree(n, 0);
}

/* Check options and fill zero fields with defaults where zero is not meaningful. */
static int check_options(dsig_node_options *o)
{
    if (o->pool_target == 0)
        o->pool_target = DEFAULT_POOL;
    if (o->verify_threads == 0)
        o->verify_threads = 1;
    if (o->verify_threads > MAX_WORKERS)
        return dsig_fail(DSIG_E_ARG, "node options: verify_threads at most %u", MAX_WORKERS);
    if (o->cache_batches < MIN_CACHE)
        o->cache_batches = MIN_CACHE;
    if (o->cache_batches > NODE_WIN_WORDS * 64)
        return dsig_fail(DSIG_E_ARG, "node options: cache_batches at most %u", NODE_WIN_WORDS * 64);
    if (o->verify_queue == 0)
        o->verify_queue = 1024;
    if (o->peer_verify_queue == 0)
        o->peer_verify_queue = DEFAULT_PEER_QUEUE;
    if (o->peer_verify_rate == 0)
        o->peer_verify_rate = DEFAULT_PEER_RATE;
    if (o->peer_verify_burst == 0)
        o->peer_verify_burst = DEFAULT_PEER_BURST;
    if (o->peer_verify_rate > 1000000u || o->peer_verify_burst > 1000000u)
        return dsig_fail(DSIG_E_ARG, "node options: peer_verify_rate and peer_verify_burst at most 1000000");
    if (o->max_app_bytes == 0)
        o->max_app_bytes = 65536u - 64u;
    if (o->max_app_bytes > DSIG_NET_MAX_PAYLOAD_LIMIT - 64u)
        return dsig_fail(DSIG_E_ARG, "node options: max_app_bytes at most %u",
                         DSIG_NET_MAX_PAYLOAD_LIMIT - 64u);
    if (o->backoff_max_ms == 0)
        o->backoff_max_ms = 2000;
    return DSIG_OK;
}

/* Build one verifier per group this node is in, with the group's other members registered: it caches
 * their batches of that group only. Signatures of groups this node is not in take the slow path
 * (node_verify). */
static int make_verifiers(dsig_node *n)
{
    const dsig_node_config *cfg = n->cfg;
    for (size_t gi = 0; gi < cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        if (!g->member)
            continue;
        dsig_hybrid_verifier_options vo;
        dsig_hybrid_verifier_options_default(&vo);
        vo.threads = 0; /* the node's workers verify: the verdict decides the ACK */
        vo.cache_batches = n->opt.cache_batches;
        vo.max_signers = (unsigned)g->cg->n_members;
        int rc = dsig_hybrid_verifier_new(&g->verifier, g->cg->params, &vo);
        for (size_t i = 0; rc == DSIG_OK && i < g->cg->n_members; i++) {
            uint64_t id = g->cg->members[i];
            if (id != n->my_id)
                rc = dsig_hybrid_verifier_add_signer(g->verifier, id, cfg->nodes[node_cfg_index(cfg, id)].pk);
        }
        if (rc)
            return rc;
    }
    return DSIG_OK;
}

/* Create a node (see node.h). */
int dsig_node_new(dsig_node **out, const dsig_node_config *cfg, uint64_t my_id,
                  const dsig_key *my_ed25519_private, const dsig_node_options *opts)
{
    if (!out || !cfg || !my_ed25519_private)
        return dsig_fail(DSIG_E_ARG, "dsig_node_new: NULL argument");
    *out = NULL;
    dsig_node_options o;
    if (opts)
        o = *opts;
    else
        dsig_node_options_default(&o);
    int rc = check_options(&o);
    if (rc)
        return rc;
    long me = node_cfg_index(cfg, my_id);
    if (me < 0)
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "node: id %llu is not in the configuration",
                         (unsigned long long)my_id);
    if (!dsig_key_has_private(my_ed25519_private))
        return dsig_fail(DSIG_E_NO_PRIVATE, "node %llu: the signing key has no private part",
                         (unsigned long long)my_id);
    if ((rc = dsig_key_check_alg(my_ed25519_private, dsig_alg_by_name("DSig"))) != DSIG_OK)
        return dsig_fail_prefix(rc, "node %llu", (unsigned long long)my_id);
    char th[64];
    rc = dsig_jwk_thumbprint(my_ed25519_private, th);
    if (rc)
        return rc;
    if (strcmp(th, cfg->nodes[me].thumb) != 0)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "node %llu: the private key does not match the public key "
                         "configured for this id", (unsigned long long)my_id);

    dsig_node *n = dsig_calloc(1, sizeof *n);
    if (!n)
        return dsig_fail(DSIG_E_NOMEM, "node: out of memory");
    pthread_mutex_init(&n->lock, NULL);
    pthread_cond_init(&n->cond, NULL);
    pthread_mutex_init(&n->win_lock, NULL);
    pthread_mutex_init(&n->q_lock, NULL);
    pthread_cond_init(&n->q_cond, NULL);
    pthread_mutex_init(&n->ack_lock, NULL);
    for (int i = 0; i < C_COUNT; i++)
        atomic_init(&n->c[i], 0);
    atomic_init(&n->retry, 0);
    n->opt = o;
    n->opt.listen_address = NULL;
    if (o.listen_address && !(n->listen_copy = dsig_strdup(o.listen_address))) {
        rc = dsig_fail(DSIG_E_NOMEM, "node: out of memory");
        goto fail;
    }
    n->my_id = my_id;
    rc = dsig_node_config_parse(cfg->text, cfg->text_len, &n->cfg); /* our own copy */
    if (rc)
        goto fail;
    if ((rc = dsig_ed25519_derive_secret(my_ed25519_private, NODE_AUTH_KEY_LABEL, &n->auth_sk)) != DSIG_OK)
        goto fail;
    n->acks = dsig_calloc(ACK_PENDING_MAX, sizeof *n->acks);
    if (!n->acks) {
        rc = dsig_fail(DSIG_E_NOMEM, "node: out of memory");
        goto fail;
    }
    n->my_idx = (size_t)node_cfg_index(n->cfg, my_id);
    if ((rc = dsig_random_bytes(&n->instance, sizeof n->instance)) != DSIG_OK)
        goto fail;

    n->peers = dsig_calloc(n->cfg->n_nodes, sizeof *n->peers);
    n->groups = dsig_calloc(n->cfg->n_groups ? n->cfg->n_groups : 1, sizeof *n->groups);
    n->win_width = o.cache_batches;
    n->windows = dsig_calloc(n->cfg->n_nodes * (n->cfg->n_groups ? n->cfg->n_groups : 1),
                             sizeof *n->windows);
    if (!n->peers || !n->groups || !n->windows) {
        rc = dsig_fail(DSIG_E_NOMEM, "node: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n->cfg->n_nodes; i++) {
        n->peers[i].id = n->cfg->nodes[i].id;
        const struct dsig_eddsa_key *pk = n->cfg->nodes[i].pk->impl;
        if ((rc = dsig_ed25519_derive_public(pk->pk, NODE_AUTH_KEY_LABEL, n->peers[i].auth_pk)) != DSIG_OK)
            goto fail;
        atomic_init(&n->peers[i].ready, 0);
        n->peers[i].tokens = (int64_t)o.peer_verify_burst * 1000;
        n->peers[i].refilled_ms = mono_ms();
        atomic_init(&n->peers[i].in_conn, 0);
        if (dsig_net_addr_parse(n->cfg->nodes[i].address, &n->peers[i].addr) != DSIG_OK) {
            rc = dsig_fail(DSIG_E_FORMAT, "node: bad address %s", n->cfg->nodes[i].address);
            goto fail;
        }
    }

    /* transport: frames big enough for the largest batch message and application payload */
    uint32_t maxp = o.max_app_bytes;
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        size_t b = dsig_hybrid_params_batch_msg_bytes(n->cfg->groups[gi].params) + NODE_BATCH_HDR_MAX;
        if (b > maxp)
            maxp = (uint32_t)b;
    }
    if (maxp < DSIG_NET_MIN_PAYLOAD_LIMIT)
        maxp = DSIG_NET_MIN_PAYLOAD_LIMIT;
    dsig_net_config nc;
    dsig_net_config_default(&nc);
    nc.max_payload = maxp;
    if (nc.sendq_max_bytes < 4u * (maxp + DSIG_NET_HDR_BYTES))
        nc.sendq_max_bytes = 4u * (maxp + DSIG_NET_HDR_BYTES);
    nc.heartbeat_ms = o.heartbeat_ms;
    nc.backoff_max_ms = o.backoff_max_ms;
    if (nc.backoff_min_ms > nc.backoff_max_ms)
        nc.backoff_min_ms = nc.backoff_max_ms;
    if ((rc = dsig_net_loop_new(&n->loop, &nc, on_event, n)) != DSIG_OK)
        goto fail;

    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        g->node = n;
        g->gi = gi;
        g->cg = &n->cfg->groups[gi];
        g->name_len = strlen(g->cg->name);
        atomic_init(&g->last_used, 0);
        atomic_init(&g->used_any, 0);
        int pos = node_cfg_member_pos(g->cg, my_id);
        g->member = pos >= 0;
        g->all_mask = 0;
        for (size_t i = 0; i < g->cg->n_members; i++)
            if ((int)i != pos)
                g->all_mask |= UINT64_C(1) << i;
    }
    if ((rc = make_verifiers(n)) != DSIG_OK)
        goto fail;

    /* signers last: their threads call on_batch at once */
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        if (!g->member)
            continue;
        unsigned bs = dsig_hybrid_params_batch_size(g->cg->params);
        g->ring_cap = o.pool_target / bs + 2u * o.signer_threads + 4u;
        g->ring = dsig_calloc(g->ring_cap, sizeof *g->ring);
        if (!g->ring) {
            rc = dsig_fail(DSIG_E_NOMEM, "node: out of memory");
            goto fail;
        }
        dsig_hybrid_signer_options so;
        dsig_hybrid_signer_options_default(&so);
        so.pool_target = o.pool_target;
        so.threads = o.signer_threads;
        so.nonblocking = o.nonblocking;
        so.signer_id = my_id;
        so.on_batch = on_batch;
        so.on_batch_arg = g;
        so.first_seq = ((uint64_t)gi << NODE_SEQ_GROUP_SHIFT) | (wall_us() & NODE_SEQ_LOW_MASK);
        if ((rc = dsig_hybrid_signer_new(&g->signer, my_ed25519_private, g->cg->params, &so)) != DSIG_OK)
            goto fail;
    }
    *out = n;
    return DSIG_OK;
fail:
    node_destroy(n);
    return rc;
}

/* Stop the verification workers and join them. */
static void stop_workers(dsig_node *n)
{
    pthread_mutex_lock(&n->q_lock);
    n->q_stop = 1;
    pthread_cond_broadcast(&n->q_cond);
    pthread_mutex_unlock(&n->q_lock);
    for (unsigned i = 0; i < n->n_workers; i++)
        pthread_join(n->workers[i], NULL);
    n->n_workers = 0;
}

/* Listen, connect to every other node, start the plane and the workers. */
int dsig_node_start(dsig_node *n)
{
    if (!n)
        return dsig_fail(DSIG_E_ARG, "dsig_node_start: NULL argument");
    if (n->started)
        return dsig_fail(DSIG_E_STATE, "node %llu: already started", (unsigned long long)n->my_id);
    const char *la = n->listen_copy ? n->listen_copy : n->cfg->nodes[n->my_idx].address;
    dsig_net_addr a;
    int rc = dsig_net_addr_parse(la, &a);
    if (rc)
        return dsig_fail(DSIG_E_FORMAT, "node %llu: bad listen address %s", (unsigned long long)n->my_id,
                         la);
    rc = dsig_net_listen(n->loop, &a, &n->listener);
    if (rc)
        return dsig_fail_prefix(DSIG_E_IO, "node %llu: cannot listen on %s", (unsigned long long)n->my_id, la);
    for (size_t i = 0; i < n->cfg->n_nodes; i++) {
        if (i == n->my_idx)
            continue;
        if ((rc = dsig_net_connect(n->loop, &n->peers[i].addr, &n->peers[i].out_conn)) != DSIG_OK)
            return rc;
    }
    n->workers = dsig_calloc(n->opt.verify_threads, sizeof *n->workers);
    if (!n->workers)
        return dsig_fail(DSIG_E_NOMEM, "node: out of memory");
    for (unsigned i = 0; i < n->opt.verify_threads; i++) {
        if (pthread_create(&n->workers[i], NULL, worker_main, n) != 0) {
            stop_workers(n);
            return dsig_fail(DSIG_E_NOMEM, "node: cannot start a verification thread");
        }
        n->n_workers++;
    }
    if (pthread_create(&n->plane, NULL, plane_main, n) != 0) {
        stop_workers(n);
        return dsig_fail(DSIG_E_NOMEM, "node: cannot start the plane thread");
    }
    n->started = 1;
    return DSIG_OK;
}

/* Stop the plane and the workers. */
void dsig_node_stop(dsig_node *n)
{
    if (!n || !n->started || n->stopped)
        return;
    n->stopped = 1;
    dsig_net_loop_stop(n->loop);
    pthread_join(n->plane, NULL);
    stop_workers(n);
    pthread_mutex_lock(&n->lock);
    for (size_t i = 0; i < n->cfg->n_nodes; i++) {
        n->peers[i].out_ready = 0;
        atomic_store_explicit(&n->peers[i].ready, 0, memory_order_release);
    }
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
}

/* Stop and free. */
void dsig_node_free(dsig_node *n)
{
    if (!n)
        return;
    dsig_node_stop(n);
    node_destroy(n);
}

/* ---- operations -------------------------------------------------------------------------------- */

uint64_t dsig_node_id(const dsig_node *n)
{
    return n ? n->my_id : 0;
}

/* Text of the bound listening address. */
int dsig_node_listen_address(dsig_node *n, char *buf, size_t cap)
{
    if (!n || !buf)
        return dsig_fail(DSIG_E_ARG, "dsig_node_listen_address: NULL argument");
    if (!n->started)
        return dsig_fail(DSIG_E_STATE, "node: not started");
    dsig_net_addr a;
    int rc = dsig_net_local_addr(n->loop, n->listener, &a);
    if (rc)
        return rc;
    return dsig_net_addr_format(&a, buf, cap);
}

/* This node's group by name, or NULL. */
static struct ngroup *my_group(dsig_node *n, const char *name)
{
    if (!name)
        return NULL;
    long gi = node_cfg_group_index(n->cfg, name, strlen(name));
    if (gi < 0 || !n->groups[gi].member)
        return NULL;
    return &n->groups[gi];
}

size_t dsig_node_sig_bytes(dsig_node *n, const char *group)
{
    struct ngroup *g = n ? my_group(n, group) : NULL;
    return g ? dsig_hybrid_params_sig_bytes(g->cg->params) : 0;
}

/* Sign with the group's pool and note the batch in use (re-sync skips older ones). */
int dsig_node_sign(dsig_node *n, const char *group, const uint8_t *msg, size_t len, uint8_t *sig,
                   size_t cap, size_t *sig_len)
{
    if (!n)
        return dsig_fail(DSIG_E_ARG, "dsig_node_sign: NULL node");
    struct ngroup *g = my_group(n, group);
    if (!g)
        return dsig_fail(DSIG_E_ARG, "node %llu: not a member of group \"%.80s\"",
                         (unsigned long long)n->my_id, group ? group : "(null)");
    int rc = dsig_hybrid_sign(g->signer, msg, len, sig, cap, sig_len);
    if (rc)
        return rc;
    uint64_t seq;
    uint32_t idx; /* dsig_hybrid_sig_locate wants both outputs (DSIG_E_ARG with a NULL one) */
    if (dsig_hybrid_sig_locate(g->cg->params, sig, *sig_len, &seq, &idx) == DSIG_OK) {
        uint64_t cur = atomic_load_explicit(&g->last_used, memory_order_relaxed);
        while ((!atomic_load_explicit(&g->used_any, memory_order_relaxed) || seq > cur) &&
               !atomic_compare_exchange_weak_explicit(&g->last_used, &cur, seq, memory_order_relaxed,
                                                      memory_order_relaxed))
            ;
        atomic_store_explicit(&g->used_any, 1, memory_order_relaxed);
    }
    bump(n, C_SIGS);
    return DSIG_OK;
}

/*
 * Where a signature from `signer_id` is checked: the group its batch seq names (top byte) when the
 * parameter set matches; *v is that group's verifier if this node caches it for this signer (a member
 * of a group of ours), else NULL (the slow path). DSIG_OK, or DSIG_E_VERIFY for a signature of no
 * configured group.
 */
static int route(dsig_node *n, uint64_t signer_id, const uint8_t *sig, size_t sig_len,
                 const struct node_cfg_group **cg, dsig_hybrid_verifier **v)
{
    uint64_t seq;
    uint32_t idx;
    *v = NULL;
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        const struct node_cfg_group *g = &n->cfg->groups[gi];
        if (dsig_hybrid_sig_locate(g->params, sig, sig_len, &seq, &idx) != DSIG_OK)
            continue;
        size_t named = (size_t)(seq >> NODE_SEQ_GROUP_SHIFT);
        if (named < n->cfg->n_groups && n->cfg->groups[named].params == g->params) {
            gi = named;
            g = &n->cfg->groups[gi];
        }
        *cg = g;
        if (n->groups[gi].verifier && signer_id != n->my_id && node_cfg_member_pos(g, signer_id) >= 0)
            *v = n->groups[gi].verifier;
        return DSIG_OK;
    }
    return dsig_fail(DSIG_E_VERIFY, "node: signature of no configured parameter set");
}

/* Verify any configured signer's signature (fast path when cached). */
int dsig_node_verify(dsig_node *n, uint64_t signer_id, const uint8_t *msg, size_t len, const uint8_t *sig,
                     size_t sig_len)
{
    if (!n || (!msg && len) || !sig)
        return dsig_fail(DSIG_E_ARG, "dsig_node_verify: NULL argument");
    long si = node_cfg_index(n->cfg, signer_id);
    if (si < 0) {
        bump(n, C_VFAIL);
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "node: signer %llu is not in the configuration",
                         (unsigned long long)signer_id);
    }
    const struct node_cfg_group *cg = NULL;
    dsig_hybrid_verifier *v;
    int rc = route(n, signer_id, sig, sig_len, &cg, &v);
    if (rc == DSIG_OK && v) {
        rc = dsig_hybrid_verify(v, signer_id, msg, len, sig, sig_len);
    } else if (rc == DSIG_OK) {
        bump(n, C_SLOW_DIRECT);
        rc = dsig_hybrid_verify_slow(cg->params, n->cfg->nodes[si].pk, signer_id, msg, len, sig, sig_len);
    }
    if (rc != DSIG_OK && rc != DSIG_E_EQUIVOCATION)
        bump(n, C_VFAIL);
    return rc;
}

int dsig_node_can_verify_fast(dsig_node *n, uint64_t signer_id, const uint8_t *sig, size_t sig_len)
{
    if (!n || !sig)
        return 0;
    const struct node_cfg_group *cg = NULL;
    dsig_hybrid_verifier *v;
    if (route(n, signer_id, sig, sig_len, &cg, &v) != DSIG_OK || !v)
        return 0;
    return dsig_hybrid_can_verify_fast(v, signer_id, sig, sig_len);
}

/* Queue an APP frame to a peer. */
int dsig_node_send_app(dsig_node *n, uint64_t peer_id, const void *bytes, size_t len)
{
    if (!n || (!bytes && len))
        return dsig_fail(DSIG_E_ARG, "dsig_node_send_app: NULL argument");
    long pi = node_cfg_index(n->cfg, peer_id);
    if (pi < 0 || (size_t)pi == n->my_idx)
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "node: no peer with id %llu", (unsigned long long)peer_id);
    if (len > n->opt.max_app_bytes)
        return dsig_fail(DSIG_E_TOO_LARGE, "node: application message of %zu bytes, at most %u", len,
                         n->opt.max_app_bytes);
    /* One TCP stream per pair carries the APP traffic both ways, the one the lower id opened: the
     * higher id answers on the connection it accepted (once authenticated). A request and its reply
     * then share a socket, so TCP acknowledgements ride on the data instead of costing a packet of
     * their own each way (measured: ~1.5 us per one-way message on loopback). */
    int rc = DSIG_E_STATE;
    if (n->my_id > peer_id) {
        uint64_t in = atomic_load_explicit(&n->peers[pi].in_conn, memory_order_acquire);
        if (in)
            rc = dsig_net_send(n->loop, in, DSIG_NODE_T_APP, bytes, len);
    }
    if (rc == DSIG_E_STATE) { /* no such connection (any more): our own */
        if (!atomic_load_explicit(&n->peers[pi].ready, memory_order_acquire)) {
            bump(n, C_APP_FAIL);
            return dsig_fail(DSIG_E_STATE, "node: peer %llu is not connected", (unsigned long long)peer_id);
        }
        rc = dsig_net_send(n->loop, n->peers[pi].out_conn, DSIG_NODE_T_APP, bytes, len);
    }
    bump(n, rc == DSIG_OK ? C_APP_SENT : C_APP_FAIL);
    return rc;
}

int dsig_node_peer_up(dsig_node *n, uint64_t peer_id)
{
    if (!n)
        return 0;
    long pi = node_cfg_index(n->cfg, peer_id);
    if (pi < 0 || (size_t)pi == n->my_idx)
        return 0;
    return atomic_load_explicit(&n->peers[pi].ready, memory_order_acquire);
}

/* Every retained batch with unused keys acknowledged by every other member (n->lock held)? */
static int all_acked(const struct ngroup *g)
{
    for (size_t k = 0; k < g->ring_len; k++) {
        const struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
        if (still_unused(g, r) && (r->acked & g->all_mask) != g->all_mask)
            return 0;
    }
    return 1;
}

/* Monotonic clock in ms. */
static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for a warm pool whose batches every other member acknowledged. */
int dsig_node_wait_ready(dsig_node *n, const char *group, unsigned n_keys, int timeout_ms)
{
    if (!n)
        return dsig_fail(DSIG_E_ARG, "dsig_node_wait_ready: NULL node");
    struct ngroup *g = my_group(n, group);
    if (!g)
        return dsig_fail(DSIG_E_ARG, "node %llu: not a member of group \"%.80s\"",
                         (unsigned long long)n->my_id, group ? group : "(null)");
    if (n_keys > n->opt.pool_target)
        return dsig_fail(DSIG_E_ARG, "node: wait_ready for %u keys, pool_target is %u", n_keys,
                         n->opt.pool_target);
    if (!n->started || n->stopped)
        return dsig_fail(DSIG_E_STATE, "node %llu: not running", (unsigned long long)n->my_id);
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : mono_ms() + timeout_ms;
    for (;;) {
        /* the pool level is read without n->lock: the signer's callback takes n->lock */
        dsig_hybrid_signer_stats st;
        dsig_hybrid_signer_stats_get(g->signer, &st);
        pthread_mutex_lock(&n->lock);
        int ok = st.ready >= n_keys && all_acked(g);
        if (!ok) {
            int64_t now = mono_ms();
            if (now >= deadline) {
                pthread_mutex_unlock(&n->lock);
                return dsig_fail(DSIG_E_WOULD_BLOCK, "node %llu: group %s not ready after %d ms "
                                 "(%llu keys ready)", (unsigned long long)n->my_id, g->cg->name,
                                 timeout_ms, (unsigned long long)st.ready);
            }
            int64_t wait = deadline - now < 10 ? deadline - now : 10; /* re-read the pool level */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += (long)wait * 1000000L;
            ts.tv_sec += ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&n->cond, &n->lock, &ts);
        }
        pthread_mutex_unlock(&n->lock);
        if (ok)
            return DSIG_OK;
    }
}

/* Snapshot of the counters. */
void dsig_node_stats_get(dsig_node *n, dsig_node_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!n)
        return;
#define G(i) atomic_load_explicit(&n->c[i], memory_order_relaxed)
    st->batches_generated = G(C_GENERATED);
    st->batches_sent = G(C_SENT);
    st->batches_resent = G(C_RESENT);
    st->batches_send_failed = G(C_SEND_FAILED);
    st->acks_received = G(C_ACKS);
    st->signatures = G(C_SIGS);
    st->batches_received = G(C_RECEIVED);
    st->batches_verified = G(C_VERIFIED);
    st->drop_unknown_id = G(C_UNKNOWN);
    st->drop_bad_signature = G(C_BADSIG);
    st->drop_replay = G(C_REPLAY);
    st->drop_malformed = G(C_MALFORMED);
    st->drop_queue_full = G(C_QFULL);
    st->verify_failed = G(C_VFAIL);
    st->app_sent = G(C_APP_SENT);
    st->app_received = G(C_APP_RECV);
    st->app_send_failed = G(C_APP_FAIL);
    st->connections_rejected = G(C_REJECTED);
    st->auth_ok = G(C_AUTH_OK);
    st->auth_failed = G(C_AUTH_FAIL);
    st->drop_unauthenticated = G(C_UNAUTH);
    st->acks_deferred = G(C_ACK_DEFER);
    st->acks_retried = G(C_ACK_RETRY);
    st->acks_dropped = G(C_ACK_DROP);
    st->drop_rate_limited = G(C_RATE);
    st->batch_checks = G(C_BATCH_CHECKS);
#undef G
    st->verify_slow = atomic_load_explicit(&n->c[C_SLOW_DIRECT], memory_order_relaxed);
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        if (!n->groups[gi].verifier)
            continue;
        dsig_hybrid_verifier_stats vs;
        dsig_hybrid_verifier_stats_get(n->groups[gi].verifier, &vs);
        st->verify_fast += vs.fast;
        st->verify_slow += vs.slow;
        st->equivocations += vs.equivocations;
    }
    for (size_t i = 0; i < n->cfg->n_nodes; i++)
        st->peers_up += (uint64_t)atomic_load_explicit(&n->peers[i].ready, memory_order_relaxed);
    dsig_net_stats ns;
    if (dsig_net_stats_get(n->loop, 0, &ns) == DSIG_OK)
        st->reconnects = ns.reconnects;
}
