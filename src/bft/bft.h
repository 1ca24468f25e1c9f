/*
 * src/bft/bft.h — the protocol cores behind dsig/bft.h (docs/bft.md): consistent broadcast (cbc.c),
 * reliable broadcast (rbc.c), the replica (pbft*.c) and its client (client.c), plus what they share
 * (wire.c): statements, digests, bounded readers and writers, certificates, proofs.
 *
 * A core is a state machine with no I/O and no threads of its own: it is handed frames, and timer ticks,
 * and talks to the world through a bft_env (send a frame, sign and verify a statement, emit an event,
 * read the clock). runtime.c binds an env to a dsig_node (through node_adapter.c) and serialises every
 * call with one mutex; the property test (tests/bft) binds it to a simulated network instead.
 */
#ifndef DSIG_BFT_INTERNAL_H
#define DSIG_BFT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/bft.h"

#define BFT_DIGEST 32u
#define BFT_LABEL "DSig-bft-stmt-v1"  /* 16 bytes: first bytes of every signed statement */
#define BFT_LABEL_BYTES 16u
/* label ‖ session id (32) ‖ kind u8 ‖ signer u64 ‖ a u64 ‖ b u64 ‖ c u64 ‖ digest (32) */
#define BFT_STMT_BYTES (BFT_LABEL_BYTES + 32u + 1u + 4u * 8u + BFT_DIGEST)
#define BFT_MAGIC "DBFT"
#define BFT_VERSION 1u
#define BFT_HDR_BYTES 14u             /* magic ‖ version u8 ‖ type u8 ‖ first 8 bytes of the session id */
#define BFT_FRAME_MAX DSIG_BFT_NODE_APP_BYTES
#define BFT_WINDOW 64u                /* broadcast instances per origin held (and retransmitted) */

/* Frame types; a signed message's statement kind is the type of the frame that carries it. */
enum {
    BT_CBC_SEND = 0x11, BT_CBC_ECHO = 0x12, BT_CBC_FINAL = 0x13, BT_CBC_ACK = 0x14, BT_CBC_WITNESS = 0x15,
    BT_RBC_SEND = 0x21, BT_RBC_ECHO = 0x22, BT_RBC_READY = 0x23, BT_RBC_ACK = 0x24,
    BT_PB_REQUEST = 0x31, BT_PB_PREPREPARE = 0x32, BT_PB_PREPARE = 0x33, BT_PB_COMMIT = 0x34,
    BT_PB_REPLY = 0x35, BT_PB_CHECKPOINT = 0x36, BT_PB_VIEWCHANGE = 0x37, BT_PB_NEWVIEW = 0x38,
    BT_PB_FETCH = 0x39, BT_PB_STATE = 0x3A
};

/* Protocol classes bound into the session id (a replica and its clients share "replication"). */
enum { BFT_CLASS_CBC = 1, BFT_CLASS_RBC = 2, BFT_CLASS_PBFT = 3 };

/* ---- environment ---------------------------------------------------------------------------- */

typedef struct bft_env {
    void *ctx;
    /* Queue a frame to process `to` (never the caller itself). Failures are the timers' business. */
    void (*send)(void *ctx, uint64_t to, const uint8_t *frame, size_t len);
    /* Sign a statement as this process; DSIG_OK or an error. */
    int (*sign)(void *ctx, const uint8_t *stmt, size_t stmt_len, uint8_t *sig, size_t cap, size_t *sig_len);
    /* Verify `signer`'s signature: DSIG_OK, DSIG_E_VERIFY, DSIG_E_EQUIVOCATION (valid, but its signer
     * reused a one-time key: refused), or an error (refused). */
    int (*verify)(void *ctx, uint64_t signer, const uint8_t *stmt, size_t stmt_len, const uint8_t *sig,
                  size_t sig_len);
    /* An event (pointers valid during the call). */
    void (*event)(void *ctx, const dsig_bft_event *ev);
    /* Milliseconds of a monotonic clock. */
    uint64_t (*now_ms)(void *ctx);
    size_t sig_max;                  /* largest signature `sign` produces (0 for no signatures) */
} bft_env;

/* ---- growable writer with a hard ceiling, and a bounded reader ---------------------------------- */

typedef struct bft_buf {
    uint8_t *p;
    size_t len, cap;
    int err;                         /* set once a write failed (no memory, over BFT_FRAME_MAX) */
} bft_buf;

void bb_init(bft_buf *b);
void bb_free(bft_buf *b);
void bb_reset(bft_buf *b);
void bb_put(bft_buf *b, const void *p, size_t n);
void bb_u8(bft_buf *b, uint8_t v);
void bb_u16(bft_buf *b, uint16_t v);
void bb_u32(bft_buf *b, uint32_t v);
void bb_u64(bft_buf *b, uint64_t v);
/* u16 / u32 length ‖ bytes (a signature, a value; a snapshot, an embedded frame) */
void bb_blob16(bft_buf *b, const uint8_t *p, size_t n);
void bb_blob32(bft_buf *b, const uint8_t *p, size_t n);

typedef struct bft_rd {
    const uint8_t *p;
    size_t n, off;
    int bad;                         /* set by any read past the end or out of bounds */
} bft_rd;

void rd_init(bft_rd *r, const uint8_t *p, size_t n);
uint8_t rd_u8(bft_rd *r);
uint16_t rd_u16(bft_rd *r);
uint32_t rd_u32(bft_rd *r);
uint64_t rd_u64(bft_rd *r);
const uint8_t *rd_take(bft_rd *r, size_t n);
/* u16 length ‖ bytes, the length within [lo, hi] (else bad); *len receives it. */
const uint8_t *rd_blob16(bft_rd *r, size_t lo, size_t hi, size_t *len);
const uint8_t *rd_blob32(bft_rd *r, size_t lo, size_t hi, size_t *len);
/* 1 when everything was read and nothing was bad. */
int rd_done(const bft_rd *r);

/* ---- votes and certificates ----------------------------------------------------------------- */

/* A signature inside a received frame (pointers into it). */
typedef struct bft_vref {
    uint64_t signer;
    const uint8_t *sig;
    size_t len;
} bft_vref;

/* A signature kept by a core (owned copy). */
typedef struct bft_vote {
    uint64_t signer;
    uint8_t *sig;
    size_t len;
} bft_vote;

int bft_vote_set(bft_vote *v, uint64_t signer, const uint8_t *sig, size_t len); /* DSIG_OK / E_NOMEM */
void bft_vote_clear(bft_vote *v);

/* ---- the common part of every core ---------------------------------------------------------- */

typedef struct bft_core {
    const bft_env *env;
    dsig_bft_stats *st;
    uint64_t self;
    size_t n, f;
    uint64_t members[DSIG_BFT_MAX_MEMBERS];  /* ascending */
    int self_idx;                    /* -1: not a member (a client) */
    uint8_t session[32];
    bft_buf out;                     /* scratch for building frames */
} bft_core;

/* Members sorted and checked (4 .. DSIG_BFT_MAX_MEMBERS, no repeats, no 0), session id derived from
 * (class, session, members). DSIG_OK or DSIG_E_ARG with a detail. */
int bft_core_init(bft_core *c, const bft_env *env, dsig_bft_stats *st, int cls, uint64_t session,
                  uint64_t self, const uint64_t *members, size_t n);
void bft_core_free(bft_core *c);
/* Index of a member id, -1 if it is none. */
int bft_index(const bft_core *c, uint64_t id);
/* ceil((n+f+1)/2): the echo quorum; 2f+1: the vote quorum. */
size_t bft_q_echo(const bft_core *c);
size_t bft_q_vote(const bft_core *c);

/* Domain-separated BLAKE3 digests of values, requests, states, bodies. */
void bft_hash(const char *ctx, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint8_t out[32]);

/* The statement every signature covers. */
void bft_stmt(const bft_core *c, uint8_t out[BFT_STMT_BYTES], int kind, uint64_t signer, uint64_t a,
              uint64_t b, uint64_t cc, const uint8_t d[32]);
/* Sign a statement of this process (counts signatures). DSIG_OK or an error. */
int bft_sign(bft_core *c, int kind, uint64_t a, uint64_t b, uint64_t cc, const uint8_t d[32], bft_vote *out);
/* Verify `signer`'s signature on a statement (counts verifications). DSIG_OK; anything else refuses. */
int bft_verify(bft_core *c, uint64_t signer, int kind, uint64_t a, uint64_t b, uint64_t cc,
               const uint8_t d[32], const uint8_t *sig, size_t len);

/* Start a frame of `type` in c->out (the header). */
void bft_begin(bft_core *c, int type);
/* Frame header check: 1 and *type / the reader past the header when it is a frame of this session. */
int bft_open(const bft_core *c, const uint8_t *bytes, size_t len, int *type, bft_rd *r);
/* Send c->out to one process / to every member but this one. Counts frames_out. */
void bft_send(bft_core *c, uint64_t to);
void bft_send_all(bft_core *c);
/* Send an already built frame. */
void bft_send_frame(bft_core *c, uint64_t to, const uint8_t *f, size_t len);

/* Certificate encoding: count u8 ‖ count × (signer u64 ‖ signature blob16). */
void bft_put_cert(bft_buf *b, const bft_vote *v, size_t n);
/* Read one (bounded by max entries and sig_max); 0, or -1 (malformed). */
int bft_get_cert(const bft_core *c, bft_rd *r, bft_vref *v, size_t max, size_t *n);
/* A signed vote: signer u64 ‖ signature blob16. */
void bft_put_vote(bft_buf *b, const bft_vote *v);
int bft_get_vote(const bft_core *c, bft_rd *r, bft_vref *v);

/*
 * Verify a certificate: at least `need` entries from distinct members, none in `exclude` (a bit per
 * member index), each a valid signature on the statement (kind, signer, a, b, cc, d). An entry equal to
 * `own` (this process's own signature on that statement) is accepted without verification.
 * DSIG_OK; DSIG_E_FORMAT (too few, repeats, strangers: malformed); DSIG_E_VERIFY (forged).
 */
int bft_cert_verify(bft_core *c, const bft_vref *v, size_t nv, size_t need, uint64_t exclude, int kind,
                    uint64_t a, uint64_t b, uint64_t cc, const uint8_t d[32], const bft_vote *own);
/* Count a refusal by its verdict: DSIG_E_FORMAT -> malformed, anything else -> forged. */
void bft_count_refusal(bft_core *c, int rc);

/*
 * Equivocation: `culprit` signed two statements of `kind` with the same (a, b, cc) and digests d1 != d2.
 * Builds the proof (statement ‖ sig blob16, twice), counts it and emits DSIG_BFT_EV_EVIDENCE.
 */
void bft_evidence(bft_core *c, int kind, uint64_t culprit, uint64_t a, uint64_t b, uint64_t cc,
                  const uint8_t d1[32], const uint8_t *s1, size_t l1, const uint8_t d2[32], const uint8_t *s2,
                  size_t l2, uint64_t view);

/* ---- consistent broadcast (cbc.c) ------------------------------------------------------------ */

typedef struct bft_cbc bft_cbc;
int bft_cbc_new(bft_cbc **out, const bft_env *env, dsig_bft_stats *st, uint64_t session, uint64_t self,
                const uint64_t *members, size_t n, unsigned retransmit_ms);
void bft_cbc_free(bft_cbc *b);
int bft_cbc_broadcast(bft_cbc *b, const uint8_t *value, size_t len, uint64_t *instance);
/* A frame from transport peer `from`: DSIG_OK (processed or refused and counted), DSIG_E_ARG not ours. */
int bft_cbc_receive(bft_cbc *b, uint64_t from, const uint8_t *bytes, size_t len);
void bft_cbc_tick(bft_cbc *b);
bft_core *bft_cbc_core(bft_cbc *b);

/* ---- reliable broadcast (rbc.c) -------------------------------------------------------------- */

typedef struct bft_rbc bft_rbc;
int bft_rbc_new(bft_rbc **out, const bft_env *env, dsig_bft_stats *st, uint64_t session, uint64_t self,
                const uint64_t *members, size_t n, unsigned retransmit_ms);
void bft_rbc_free(bft_rbc *b);
int bft_rbc_broadcast(bft_rbc *b, const uint8_t *value, size_t len, uint64_t *instance);
int bft_rbc_receive(bft_rbc *b, uint64_t from, const uint8_t *bytes, size_t len);
void bft_rbc_tick(bft_rbc *b);
bft_core *bft_rbc_core(bft_rbc *b);

/* ---- replication (pbft.c, pbft_view.c, pbft_fetch.c, kv.c, store.c, client.c) ------------------ */

typedef struct bft_replica_cfg {
    uint64_t session, self;
    const uint64_t *members;
    size_t n;
    const uint64_t *clients;
    size_t n_clients;
    unsigned retransmit_ms, view_timeout_ms, checkpoint_interval;
    const char *log_path;
    int durable;
} bft_replica_cfg;

typedef struct bft_replica bft_replica;
int bft_replica_new(bft_replica **out, const bft_env *env, dsig_bft_stats *st, const bft_replica_cfg *cfg);
void bft_replica_free(bft_replica *r);
int bft_replica_receive(bft_replica *r, uint64_t from, const uint8_t *bytes, size_t len);
void bft_replica_tick(bft_replica *r);
void bft_replica_state(const bft_replica *r, uint64_t *seq, uint64_t *view, uint8_t digest[32]);
bft_core *bft_replica_core(bft_replica *r);

typedef struct bft_client bft_client;
int bft_client_new(bft_client **out, const bft_env *env, dsig_bft_stats *st, uint64_t session, uint64_t self,
                   const uint64_t *replicas, size_t n, unsigned retransmit_ms);
void bft_client_free(bft_client *c);
int bft_client_submit(bft_client *c, const uint8_t *op, size_t len, uint64_t *request);
int bft_client_receive(bft_client *c, uint64_t from, const uint8_t *bytes, size_t len);
void bft_client_tick(bft_client *c);
bft_core *bft_client_core(bft_client *c);

/* The request digest every replica agrees on: H(client ‖ request number ‖ op); the null request's. */
void bft_request_digest(uint64_t client, uint64_t t, const uint8_t *op, size_t len, uint8_t out[32]);
void bft_null_digest(uint8_t out[32]);

#endif
