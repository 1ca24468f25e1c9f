/*
 * src/bft/pbft.h — the replica's state, shared by its files: pbft.c (requests, normal case, execution,
 * checkpoints, timers), pbft_view.c (VIEW-CHANGE / NEW-VIEW), pbft_fetch.c (state transfer and the log
 * replay), kv.c (the state machine) and store.c (the log file). docs/bft.md "Replication".
 */
#ifndef DSIG_BFT_PBFT_H
#define DSIG_BFT_PBFT_H

#include "bft/bft.h"

#define PB_MAX_WINDOW 128u         /* log window L = 2 x checkpoint interval, at most */
#define PB_CKPT_SLOTS 8u           /* checkpoints being voted on */

/* ---- the key-value state machine (kv.c) ----------------------------------------------------- */

typedef struct kv_item {
    uint8_t klen;
    uint16_t vlen;
    uint8_t key[DSIG_BFT_KV_MAX_KEY];
    uint8_t value[DSIG_BFT_KV_MAX_VALUE];
} kv_item;

typedef struct kv_client {
    uint64_t id;
    uint64_t t;                    /* last request number executed (0: none) */
    uint16_t rlen;
    uint8_t result[DSIG_BFT_MAX_RESULT];
} kv_client;

typedef struct bft_kv {
    kv_item *items;                /* sorted by key (length, then bytes) */
    size_t n;
    kv_client *clients;            /* the replica's clients, ascending ids */
    size_t n_clients;
    uint8_t hist[32];              /* history digest: H(previous ‖ seq ‖ request digest ‖ result) */
} bft_kv;

int kv_init(bft_kv *kv, const uint64_t *clients, size_t n);
void kv_free(bft_kv *kv);
/* Apply an operation deterministically; result (status [‖ value]) into out. Any bytes are an op. */
size_t kv_apply(bft_kv *kv, const uint8_t *op, size_t len, uint8_t out[DSIG_BFT_MAX_RESULT]);
kv_client *kv_client_of(bft_kv *kv, uint64_t id);
/* Snapshot (items ‖ client table) and its digest; restore from one (bounded, strict). */
void kv_snapshot(const bft_kv *kv, bft_buf *out);
int kv_restore(bft_kv *kv, const uint8_t *p, size_t len);   /* 0 or -1 (malformed; kv unchanged) */
void kv_digest(const uint8_t *snap, size_t len, uint8_t out[32]);

/* ---- the log file (store.c) --------------------------------------------------------------------- */

enum { REC_VOTE = 1, REC_PCERT = 2, REC_EXEC = 3, REC_CKPT = 4, REC_VIEW = 5 };

typedef struct bft_store bft_store;
/* Open or create the log (mode 0600, no symlinks); it is bound to the session id. */
int bft_store_open(bft_store **out, const char *path, const uint8_t session[32], int durable);
/* Every valid record in order. A record cut by a crash at the end is dropped (truncated); any other
 * damage is DSIG_E_FORMAT. fn returns 0 to go on. */
int bft_store_load(bft_store *s, int (*fn)(void *arg, int type, const uint8_t *p, size_t len), void *arg);
int bft_store_append(bft_store *s, int type, const uint8_t *p, size_t len);
/* Make everything appended durable (durable mode; no-op otherwise or when nothing is pending). */
int bft_store_sync(bft_store *s);
/* Compaction: records written to a new file that replaces the log atomically at commit. */
int bft_store_rewrite_begin(bft_store *s);
int bft_store_rewrite_add(bft_store *s, int type, const uint8_t *p, size_t len);
int bft_store_rewrite_commit(bft_store *s);
void bft_store_close(bft_store *s);
uint64_t bft_store_records(const bft_store *s);
uint64_t bft_store_syncs(const bft_store *s);

/* ---- requests ------------------------------------------------------------------------------- */

/* A request as it travels: flag u8 (0 null, 1) [‖ client u64 ‖ t u64 ‖ op blob16 ‖ client sig blob16]. */
typedef struct pb_req {
    int present;                   /* 0: the null request */
    uint64_t client, t;
    uint8_t *op;
    size_t oplen;
    bft_vote csig;
} pb_req;

typedef struct pb_req_ref {
    int present;
    uint64_t client, t;
    const uint8_t *op;
    size_t oplen;
    const uint8_t *csig;
    size_t csig_len;
} pb_req_ref;

void pb_put_req(bft_buf *b, const pb_req *q);
void pb_put_req_ref(bft_buf *b, const pb_req_ref *q);
int pb_get_req(const bft_core *c, bft_rd *r, pb_req_ref *q);  /* 0 / -1 */
void pb_req_digest(const pb_req_ref *q, uint8_t d[32]);
int pb_req_copy(pb_req *dst, const pb_req_ref *src);
void pb_req_clear(pb_req *q);
void pb_req_view(const pb_req *q, pb_req_ref *out);

/* ---- the log window ------------------------------------------------------------------------- */

typedef struct pb_entry {
    int used;
    uint64_t s;
    /* voting in view vv */
    uint64_t vv;
    int have_pp;
    uint8_t d[BFT_DIGEST];
    pb_req req;
    bft_vote pp;                   /* the leader's PRE-PREPARE signature */
    uint8_t prep_d[DSIG_BFT_MAX_MEMBERS][BFT_DIGEST];
    bft_vote prep[DSIG_BFT_MAX_MEMBERS];
    uint64_t prep_mask;
    uint8_t com_d[DSIG_BFT_MAX_MEMBERS][BFT_DIGEST];
    bft_vote com[DSIG_BFT_MAX_MEMBERS];
    uint64_t com_mask;
    int prepared, sent_com;
    uint64_t t;                    /* last (re)transmission of this replica's votes */
    uint64_t proposed_ns;          /* leader: when it proposed (CLOCK_MONOTONIC) */
    /* the prepared certificate of the highest view (carried in VIEW-CHANGE) */
    int have_pc;
    uint64_t pc_v;
    uint8_t pc_d[BFT_DIGEST];
    pb_req pc_req;
    bft_vote pc_pp;
    bft_vote pc_prep[DSIG_BFT_MAX_MEMBERS];
    size_t pc_n;
    /* committed: the commit certificate (kept for state transfer) */
    int committed;
    uint64_t cc_v;
    uint8_t cc_d[BFT_DIGEST];
    pb_req cc_req;
    bft_vote cc[DSIG_BFT_MAX_MEMBERS];
    size_t cc_n;
    uint64_t t_committed;          /* when it became committed while an earlier one was not (gap) */
    uint64_t proven_v;             /* view + 1 in which the leader's equivocation was proven here */
} pb_entry;

/* A checkpoint being voted on: votes per member, and this replica's snapshot at it. */
typedef struct pb_ckpt {
    int used;
    uint64_t s;
    uint8_t dd[DSIG_BFT_MAX_MEMBERS][BFT_DIGEST];
    bft_vote v[DSIG_BFT_MAX_MEMBERS];
    uint64_t mask;
    int own;                       /* this replica executed s: own digest and snapshot */
    uint8_t d[BFT_DIGEST];
    uint8_t *snap;
    size_t snap_len;
    uint64_t t;
} pb_ckpt;

/* The latest request of a client not yet executed. */
typedef struct pb_pending {
    int used;
    pb_req req;
    uint8_t d[BFT_DIGEST];
    uint64_t arrived;
    uint64_t assigned_v;           /* view + 1 in which the leader (this replica) proposed it; 0: not */
} pb_pending;

/* A VIEW-CHANGE received (the latest per replica). */
typedef struct pb_vc {
    uint64_t v;                    /* 0: none */
    uint8_t *frame;                /* the whole frame (for NEW-VIEW), verified */
    size_t len;
} pb_vc;

struct bft_replica {
    bft_core c;
    uint64_t clients[DSIG_BFT_MAX_CLIENTS];
    size_t n_clients;
    unsigned retransmit_ms, view_timeout_ms, interval, window;
    /* view */
    uint64_t view;
    int vc;                        /* changing view to vc_target */
    uint64_t vc_target, vc_since, vc_sent;
    int vc_quorum;                 /* 2f+1 VIEW-CHANGEs for vc_target seen: its timer runs from vc_since */
    unsigned attempt;              /* consecutive views that did not start */
    uint8_t *my_vc;                /* this replica's VIEW-CHANGE frame (retransmitted) */
    size_t my_vc_len;
    pb_vc vcs[DSIG_BFT_MAX_MEMBERS];
    uint64_t nv_sent_view;         /* NEW-VIEW built for this view (as its leader) */
    uint8_t *nv;                   /* the NEW-VIEW that started the current view (0 for view 0) */
    size_t nv_len;
    uint64_t seen_view[DSIG_BFT_MAX_MEMBERS]; /* highest view claimed by each member's frames */
    uint64_t nv_answered[DSIG_BFT_MAX_MEMBERS];
    /* checkpoints */
    uint64_t h;                    /* last stable checkpoint */
    uint8_t h_d[BFT_DIGEST];
    bft_vote h_cert[DSIG_BFT_MAX_MEMBERS];
    size_t h_n;
    uint8_t *h_snap;               /* snapshot at h (NULL if this replica never had that state) */
    size_t h_snap_len;
    pb_ckpt ck[PB_CKPT_SLOTS];
    /* execution */
    uint64_t last_exec;
    uint64_t progress_ms;          /* last execution / view start: the view timer counts from here */
    bft_kv kv;
    uint8_t state_d[BFT_DIGEST];   /* digest after the last execution */
    uint8_t *reply[DSIG_BFT_MAX_CLIENTS]; /* last REPLY frame per client (retransmitted) */
    size_t reply_len[DSIG_BFT_MAX_CLIENTS];
    /* leader */
    uint64_t next_seq;
    pb_pending pend[DSIG_BFT_MAX_CLIENTS];
    /* log window: s in (h, h + window] at log[s % window] */
    pb_entry *log;
    /* state transfer */
    uint64_t fetch_until;          /* a sequence number known to exist beyond last_exec */
    int fetch_view;                /* f+1 members are in a higher view */
    unsigned probes;               /* fetch rounds still to make after a restart */
    uint64_t fetch_ms;
    unsigned fetch_next;
    uint64_t answered_ms[DSIG_BFT_MAX_MEMBERS];
    /* durability: frames are held until the records they depend on are synced */
    bft_store *store;
    int loading;                   /* replaying the log: nothing is sent or persisted */
    bft_buf outq;                  /* queued frames: to u64 ‖ len u32 ‖ bytes */
    dsig_bft_stats *st;
};

/* pbft.c */
pb_entry *pb_entry_of(bft_replica *r, uint64_t s, int create);
void pb_entry_reset_votes(pb_entry *e, uint64_t v);
void pb_entry_clear(pb_entry *e);
uint64_t pb_leader(const bft_replica *r, uint64_t v);
void pb_queue(bft_replica *r, uint64_t to);          /* queue c.out to one replica / client */
void pb_queue_all(bft_replica *r);
void pb_flush(bft_replica *r);                       /* sync the log, then send what is queued */
void pb_persist(bft_replica *r, int type, const bft_buf *b);
void pb_accept_pp(bft_replica *r, pb_entry *e, uint64_t v, const uint8_t d[32], const pb_req_ref *q,
                  const uint8_t *pp, size_t pp_len, int send_prepare);
void pb_check(bft_replica *r, pb_entry *e);
void pb_try_execute(bft_replica *r);
void pb_propose(bft_replica *r);
void pb_stable(bft_replica *r, uint64_t s, const uint8_t d[32], const bft_vote *cert, size_t n);
void pb_compact(bft_replica *r);
void pb_event_view(bft_replica *r);

/* pbft_view.c */
void pb_start_view_change(bft_replica *r, uint64_t v);
void pb_try_newview(bft_replica *r, uint64_t v);
void pb_on_viewchange(bft_replica *r, uint64_t from, const uint8_t *frame, size_t len, bft_rd *rd);
void pb_on_newview(bft_replica *r, uint64_t from, const uint8_t *frame, size_t len, bft_rd *rd);
/* Verify a NEW-VIEW body (after the header) and enter its view. 0 or -1 (counted). */
int pb_apply_newview(bft_replica *r, const uint8_t *frame, size_t len);
void pb_view_tick(bft_replica *r, uint64_t now);
/* Verify a prepared / commit / checkpoint certificate. DSIG_OK, DSIG_E_FORMAT or DSIG_E_VERIFY. */
int pb_check_ckpt_cert(bft_replica *r, uint64_t s, const uint8_t d[32], const bft_vref *v, size_t n);

/* pbft_fetch.c */
void pb_on_fetch(bft_replica *r, uint64_t from, bft_rd *rd);
void pb_on_state(bft_replica *r, uint64_t from, bft_rd *rd);
void pb_fetch_tick(bft_replica *r, uint64_t now);
int pb_replay(void *arg, int type, const uint8_t *p, size_t len);
void pb_install_snapshot(bft_replica *r, uint64_t s, const uint8_t d[32], const uint8_t *snap, size_t len,
                         const bft_vref *cert, size_t n);
void pb_execute_entry(bft_replica *r, pb_entry *e);

#endif
