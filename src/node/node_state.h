/*
 * src/node/node_state.h — the state of a running DSig node and the calls between the files that run it
 * (docs/node.md). Each file owns one lock, and only it takes that lock:
 *
 *   node_batches.c  n->lock (+ n->cond): peers' readiness and the per-group rings of retained batch
 *                   messages (+ ack bits); held while sending BATCH frames so a batch is never missed
 *                   between "peer ready" and "new batch". Never held while calling into a signer (its
 *                   callback, on_batch, takes n->lock). Also signing and dsig_node_wait_ready.
 *   node_conn.c     no lock: the plane thread's connection table (conns[]), HELLO / AUTH and frame
 *                   dispatch, the application channel.
 *   node_acks.c     n->ack_lock: BATCH_ACKs a full send queue refused, retried by the plane thread.
 *   node_windows.c  n->win_lock: the replay windows of every (signer, group).
 *   node_workers.c  n->q_lock (+ n->q_cond): the verification queue, the per-peer verification budgets
 *                   and the worker threads that verify queued batches and acknowledge them.
 *   node_verify.c   no lock of its own (the hybrid verifiers lock themselves): dsig_node_verify.
 *   node.c          life cycle: options, creation, start, stop, free, statistics.
 *   node_members.c  n->mem_lock, a reader-writer lock over the membership: n->cfg's node entries and
 *                   group member lists, n->peers[] slots and their verifiers. Every path that looks a
 *                   member up holds it for reading (the plane thread per event and per retry pass, a
 *                   worker per batch, a signer's on_batch, dsig_node_verify / _send_app / _peer_up /
 *                   _stats_get); dsig_node_member_add / _remove hold it for writing. It is taken
 *                   before any other lock and never twice by one thread (writer-preferring: a nested
 *                   read would deadlock behind a waiting writer), so the plane thread drops it
 *                   around the application's on_app callback.
 *
 * Threads: the plane thread runs the net loop (node_conn.c) and, between iterations, the retries
 * (node_batches.c, node_acks.c); the workers verify; the signer threads call on_batch.
 */
#ifndef DSIG_NODE_STATE_H
#define DSIG_NODE_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "classic/ed25519_derive.h"
#include "dsig/hybrid.h"
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
    uint64_t id;                        /* 0: a free slot (a member left) */
    uint64_t gen;                       /* bumped each time the slot gets a member: connections and
                                           queued batches of an earlier occupant are told apart */
    dsig_hybrid_verifier **verifiers;   /* [group]: this member's batches of each group both belong
                                           to (NULL otherwise); one verifier per (member, group) so a
                                           member that leaves takes its cached batches with it */
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
    uint64_t peer_gen;                  /* n->peers[peer_idx].gen then: a member that left (and a
                                           later one in its slot) is not this connection's peer */
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
    uint64_t sgen, fgen;                /* the gens of slots sidx and from when it was queued */
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
    struct peer *peers;                 /* indexed like cfg->nodes; DSIG_NODE_MAX_NODES slots */
    pthread_rwlock_t mem_lock;          /* owned by node_members.c */
    uint64_t gens;                      /* under mem_lock (write): the last slot gen given out */
    int dialing;                        /* under mem_lock: started, members get connected */
    _Atomic uint64_t gone_fast, gone_slow, gone_equiv; /* verifier counts of members that left */
    struct ngroup *groups;              /* indexed like cfg->groups */

    pthread_mutex_t lock;               /* owned by node_batches.c */
    pthread_cond_t cond;                /* an ACK arrived (wait_ready) */

    pthread_mutex_t win_lock;           /* owned by node_windows.c */
    struct node_window *windows;        /* [signer index × n_groups + group] */
    unsigned win_width;

    dsig_net_loop *loop;
    uint64_t listener;
    pthread_t plane;
    int started, stopped;

    pthread_mutex_t q_lock;             /* owned by node_workers.c */
    pthread_cond_t q_cond;
    struct work *q_head, *q_tail;
    unsigned q_len;
    int q_stop;
    pthread_t *workers;
    unsigned n_workers;

    struct conn_state *conns;           /* plane thread only (node_conn.c) */
    size_t n_conns, cap_conns;

    dsig_ed25519_dkey auth_sk;          /* derived authentication key: signs HELLO transcripts only */

    pthread_mutex_t ack_lock;           /* the ACK retry list; owned by node_acks.c */
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

/* Relaxed counter increment. */
static inline void bump(dsig_node *n, int c)
{
    atomic_fetch_add_explicit(&n->c[c], 1, memory_order_relaxed);
}

/* Monotonic clock in ms. */
static inline int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* This node's group by name, or NULL (node.c). */
struct ngroup *node_my_group(dsig_node *n, const char *name);

/* ---- membership (node_members.c; n->mem_lock) ------------------------------------------------- */
void node_mem_rdlock(dsig_node *n);
void node_mem_unlock(dsig_node *n);
/* Slot i holds a member other than this node and it is still the one of generation gen. */
int node_slot_is(const dsig_node *n, long i, uint64_t gen);
/* Set up slot i for the member cfg->nodes[i] (auth key, address, budget, its verifiers): gen is the
 * new generation. Does not connect. */
int node_slot_init(dsig_node *n, size_t i);
/* Free slot i's verifiers (their counts go to gone_*). */
void node_slot_free(dsig_node *n, size_t i);
/* Add the member of one node entry (JSON text), or replace the member with its id if the entry
 * differs (*changed 1; the same entry: DSIG_OK, *changed 0). Codes of dsig_node_member_add. */
int node_member_put_json(dsig_node *n, const char *json, size_t len, int *changed);
/* This node's own configuration entry as compact JSON (dsig_malloc'd, *len bytes), or NULL. */
char *node_self_entry(dsig_node *n, size_t *len);

/* ---- batches (node_batches.c; n->lock) ---------------------------------------------------------- */
/* Signer callback (background thread): retain the batch message and push it to the ready members. */
void node_on_batch(void *arg, uint64_t signer_id, unsigned group, const uint8_t *msg, size_t len);
/* Peer pidx's outgoing connection authenticated (ready = 1: re-send what it may lack) or went down
 * (ready = 0: forget its acknowledgements, it may be restarting with an empty cache). */
void node_peer_ready(dsig_node *n, size_t pidx, int ready);
/* Every peer down (the node stops); wakes dsig_node_wait_ready. */
void node_peers_down(dsig_node *n);
/* The member at position pos of group g acknowledged our batch seq. */
void node_batch_acked(dsig_node *n, struct ngroup *g, int pos, uint64_t seq);
/* Plane thread, between loop iterations: the retries of refused batches and ACKs. */
void node_retry_pending(dsig_node *n);
/* Free a group's ring (threads stopped). */
void node_ring_free(struct ngroup *g);
/* A member joined or left: the member lists changed (mem_lock held for writing). Under n->lock:
 * clear slot gone's readiness (-1: none left), forget what position pos[gi] (-1: none) of each group
 * acknowledged or had pending (a position is reused by the next member), recompute every group's
 * all_mask and wake dsig_node_wait_ready. */
void node_members_changed(dsig_node *n, long gone, const int *pos);

/* ---- acknowledgements (node_acks.c; n->ack_lock) ------------------------------------------------ */
/* Send an ACK for (signer, group, seq) back on `conn`; a full send queue defers it for retry. */
void node_send_ack(dsig_node *n, uint64_t conn, uint64_t signer, uint64_t seq, size_t gi);
/* Plane thread: retry the deferred ACKs. Returns 1 if some still wait. */
int node_retry_acks(dsig_node *n);

/* ---- replay windows (node_windows.c; n->win_lock) ----------------------------------------------- */
/* NODE_WIN_NEW, _SEEN or _OLD for seq of (signer index si, group gi). */
int node_windows_check(dsig_node *n, size_t si, size_t gi, uint64_t seq);
/* Mark seq of (si, gi) as verified. */
void node_windows_mark(dsig_node *n, size_t si, size_t gi, uint64_t seq);
/* Empty the windows of slot si (a new member in it). */
void node_windows_reset(dsig_node *n, size_t si);

/* ---- verification queue and workers (node_workers.c; n->q_lock) -------------------------------- */
/* Queue w (from peer index w->from) for verification, within the queue's and the peer's bounds; on
 * refusal w is freed and counted (queue full / rate limited). */
void node_queue_push(dsig_node *n, struct work *w);
/* Start opt.verify_threads workers; stop and join them; free what is still queued (workers stopped). */
int node_workers_start(dsig_node *n);
void node_workers_stop(dsig_node *n);
void node_queue_free(dsig_node *n);
/* Drop the queued batches sent by or signed by slot si, and reset its budget (mem_lock held for
 * writing: no worker is inside a batch). */
void node_queue_forget(dsig_node *n, size_t si);

/* ---- connections (node_conn.c; plane thread) ---------------------------------------------------- */
/* The net loop's callback: connection state and frame dispatch. */
void node_on_event(void *arg, dsig_net_loop *loop, const dsig_net_event *ev);
/* Plane thread: the event loop until dsig_node_stop, with the retries between iterations. */
void *node_plane_main(void *arg);

#endif
