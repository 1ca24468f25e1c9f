/*
 * dsig/bft.h — Byzantine fault-tolerant protocols over the DSig node (docs/bft.md).
 *
 * Four kinds of process, each a dsig_bft object bound to a running dsig_node (include/dsig/node.h) that
 * carries its frames as APP messages:
 *
 *   DSIG_BFT_CBC      Byzantine consistent broadcast (signed echo): the sender signs SEND, members sign
 *                     ECHO, a quorum of ceil((n+f+1)/2) signed echoes is a transferable delivery
 *                     certificate. No two correct members deliver different values for one instance.
 *   DSIG_BFT_RBC      Bracha reliable broadcast with signed SEND / ECHO / READY: in addition, if one
 *                     correct member delivers, every correct member does; 2f+1 signed READYs certify it.
 *   DSIG_BFT_REPLICA  a PBFT-style replica (PRE-PREPARE / PREPARE / COMMIT with 2f+1 quorum certificates,
 *                     checkpoints, view change with certificates carried in VIEW-CHANGE / NEW-VIEW, state
 *                     transfer, an optional durable log) of a key-value state machine.
 *   DSIG_BFT_CLIENT   a client of the replicas: it signs requests and accepts a result once f+1 replicas
 *                     sent matching signed replies.
 *
 * n members (replicas) tolerate f = floor((n-1)/3) Byzantine ones; n >= 4. Every signed message is a
 * fixed statement "DSig-bft-stmt-v1" || session id || kind || signer || instance fields || digest, so no
 * signature of one protocol step, instance, view, sequence number or deployment verifies in another.
 * Equivocation (two conflicting statements signed by one process) is detected and proven: the proof is
 * both signed statements (dsig_bft_proof_check). Malformed, forged and replayed frames are refused and
 * counted (dsig_bft_stats); none can make two correct processes deliver or decide different values.
 *
 * Signatures: DSIG_BFT_SCHEME_DSIG signs with the node's DSig pool of a group holding every member and
 * client (fast-path verification at all of them); DSIG_BFT_SCHEME_KEY signs with any registry algorithm
 * (e.g. Ed25519, the benchmark's baseline) with keys given in the options; DSIG_BFT_SCHEME_NONE signs
 * nothing (a benchmark baseline only: not Byzantine fault tolerant).
 *
 * Threads: every function is thread-safe. Events are delivered to on_event outside the object's lock,
 * one at a time and in order; the callback may call dsig_bft_broadcast / _submit / _tick / _stats_get
 * (never _free). Return values follow dsig/error.h.
 */
#ifndef DSIG_BFT_H
#define DSIG_BFT_H

#include "common.h"
#include "key.h"
#include "node.h"

DSIG_BEGIN_DECLS

/* ---- kinds, schemes, bounds ----------------------------------------------------------------- */

#define DSIG_BFT_CBC 1
#define DSIG_BFT_RBC 2
#define DSIG_BFT_REPLICA 3
#define DSIG_BFT_CLIENT 4

#define DSIG_BFT_SCHEME_DSIG 1   /* the node's DSig pool of options.group */
#define DSIG_BFT_SCHEME_KEY 2    /* a registry algorithm: options.key, options.peer_keys */
#define DSIG_BFT_SCHEME_NONE 3   /* no signatures (benchmark baseline; no Byzantine fault tolerance) */

#define DSIG_BFT_MAX_MEMBERS 16u     /* members / replicas (n = 4 .. 16) */
#define DSIG_BFT_MAX_CLIENTS 64u     /* clients a replica serves */
#define DSIG_BFT_MAX_VALUE 1024u     /* bytes of a broadcast value */
#define DSIG_BFT_MAX_OP 512u         /* bytes of a client operation */
#define DSIG_BFT_MAX_RESULT 512u     /* bytes of a result */
#define DSIG_BFT_MAX_SIG 4096u       /* bytes of one signature */
#define DSIG_BFT_KV_MAX_KEYS 1024u   /* keys in the replicated store */
#define DSIG_BFT_KV_MAX_KEY 64u      /* bytes of a key (1 ..) */
#define DSIG_BFT_KV_MAX_VALUE 256u   /* bytes of a value */
/* The largest frame the protocols send (NEW-VIEW and state transfer carry certificates): configure the
 * node's max_app_bytes with at least this. dsig_bft_new refuses a configuration that could need more. */
#define DSIG_BFT_NODE_APP_BYTES (4u * 1024u * 1024u)

/* ---- events --------------------------------------------------------------------------------- */

#define DSIG_BFT_EV_DELIVER 1    /* broadcast member: a value delivered (with its certificate) */
#define DSIG_BFT_EV_DECIDE 2     /* replica: a sequence number executed */
#define DSIG_BFT_EV_REPLY 3      /* client: a result accepted (f+1 matching signed replies) */
#define DSIG_BFT_EV_EVIDENCE 4   /* equivocation proven: proof = two conflicting signed statements */
#define DSIG_BFT_EV_VIEW 5       /* replica: entered a view (view change completed) */
#define DSIG_BFT_EV_RECOVERED 6  /* replica: its log was reloaded at creation (instance = last seq) */

/*
 * One event. Pointers are valid during the callback only.
 *   DELIVER   origin = broadcaster, instance = its instance number, value, digest = value digest,
 *             proof = the delivery certificate (docs/bft.md "Certificates").
 *   DECIDE    instance = sequence number, view, origin = client (0 for a null request), request = the
 *             client's request number, value = operation, result, proof = the commit certificate,
 *             digest = state digest after executing it, proposed_ns = at the replica that proposed it
 *             in this view, CLOCK_MONOTONIC ns when it did (0 elsewhere, and after a restart).
 *   REPLY     instance = request number, value = result, proof = the f+1 replies.
 *   EVIDENCE  origin = the culprit, instance = broadcast instance or sequence number, view (replicas),
 *             proof = the two signed statements (dsig_bft_proof_check).
 *   VIEW      view = the new view.
 *   RECOVERED instance = last executed sequence number after reloading the log, view = its view.
 */
typedef struct dsig_bft_event {
    int kind;
    uint64_t origin;
    uint64_t instance;
    uint64_t view;
    uint64_t request;
    const uint8_t *value;
    size_t value_len;
    const uint8_t *result;
    size_t result_len;
    const uint8_t *proof;
    size_t proof_len;
    uint8_t digest[32];
    uint64_t proposed_ns;
} dsig_bft_event;

typedef void (*dsig_bft_event_cb)(void *arg, const dsig_bft_event *ev);

/* ---- options -------------------------------------------------------------------------------- */

/* A peer's public key for DSIG_BFT_SCHEME_KEY. */
typedef struct dsig_bft_peer_key {
    uint64_t id;
    const dsig_key *key;
} dsig_bft_peer_key;

typedef struct dsig_bft_options {
    int protocol;                  /* DSIG_BFT_CBC / _RBC / _REPLICA / _CLIENT */
    int scheme;                    /* DSIG_BFT_SCHEME_* (default DSIG) */
    uint64_t session;              /* deployment / run id, bound into every frame and signature
                                      (processes of one deployment use the same value) */
    const uint64_t *members;       /* the n broadcast members or replicas (node ids; order free) */
    size_t n_members;
    const uint64_t *clients;       /* replica: the clients it serves (node ids) */
    size_t n_clients;
    const char *group;             /* SCHEME_DSIG: node group holding every member and client */
    const dsig_key *key;           /* SCHEME_KEY: this process's private key (its bound algorithm, or
                                      options.alg, signs) — not the node's key: one key, one purpose */
    const dsig_alg *alg;           /* SCHEME_KEY: the algorithm (NULL = the key's bound algorithm) */
    const dsig_bft_peer_key *peer_keys; /* SCHEME_KEY: public keys of every other member and client */
    size_t n_peer_keys;
    const char *log_path;          /* replica: durable log file (NULL = state in memory only) */
    int durable;                   /* replica with a log: 1 = fdatasync before any message that depends
                                      on a record is sent (default 1); 0 = left to the kernel */
    unsigned tick_ms;              /* timer resolution of the internal ticker thread (default 10;
                                      0 = no thread: call dsig_bft_tick) */
    unsigned retransmit_ms;        /* re-send unacknowledged messages after this (default 50) */
    unsigned view_timeout_ms;      /* replica: a pending request older than this starts a view change
                                      (default 1000, doubled per failed view); client: re-send a request
                                      after this (default 500) */
    unsigned checkpoint_interval;  /* replica: sequence numbers per checkpoint, 2..64 (default 16); the
                                      log window is twice that */
    dsig_bft_event_cb on_event;    /* events (default NULL) */
    void *on_event_arg;
} dsig_bft_options;

/* Fill `o` with the defaults above (protocol 0: set it). */
DSIG_EXPORT void dsig_bft_options_default(dsig_bft_options *o);

/* ---- objects -------------------------------------------------------------------------------- */

typedef struct dsig_bft dsig_bft;

/*
 * A BFT process of kind o->protocol on node `node` (which must outlive it; the process is the node's id).
 * The node carries the frames: the application's on_app callback hands every APP frame to
 * dsig_bft_receive. A replica with a log_path reloads it first (DSIG_BFT_EV_RECOVERED) and then fetches
 * what it missed from the other replicas.
 * *out is NULL on failure.
 * @retval DSIG_OK          *out is the process (free it with dsig_bft_free).
 * @retval DSIG_E_ARG       bad member list (n < 4, > DSIG_BFT_MAX_MEMBERS, repeats, this node missing
 *                          from the members of a broadcast / replica or present in them as a client),
 *                          bad scheme options, or a NULL argument; the detail names the field.
 * @retval DSIG_E_TOO_LARGE the worst-case frame exceeds DSIG_BFT_NODE_APP_BYTES.
 * @retval DSIG_E_IO        the log cannot be opened, read or written.
 * @retval DSIG_E_FORMAT    the log is corrupt.
 * @retval DSIG_E_NOMEM     out of memory, or the ticker thread cannot start.
 */
DSIG_EXPORT int dsig_bft_new(dsig_bft **out, dsig_node *node, const dsig_bft_options *o);

/*
 * An APP frame from node `peer`, handed over by the application's on_app callback. Events it causes
 * are delivered before this returns (outside the lock).
 * @retval DSIG_OK    a frame of this process's session: processed, or refused and counted (stats).
 * @retval DSIG_E_ARG not a BFT frame of this session (the application may use it), or b / bytes NULL.
 */
DSIG_EXPORT int dsig_bft_receive(dsig_bft *b, uint64_t peer, const uint8_t *bytes, size_t len);

/*
 * Whether `bytes` start like a BFT frame (of any session), for applications that share the node's APP
 * frames between BFT and their own messages.
 * @retval 1 a BFT frame header.
 * @retval 0 anything else.
 */
DSIG_EXPORT int dsig_bft_is_frame(const uint8_t *bytes, size_t len);

/*
 * Broadcast member: broadcast `value` (1 .. DSIG_BFT_MAX_VALUE bytes) as this member's next instance
 * (*instance, may be NULL).
 * @retval DSIG_OK            sent; *instance is its instance number.
 * @retval DSIG_E_WOULD_BLOCK 64 of this member's instances are still unacknowledged by n-f members.
 * @retval DSIG_E_ARG         b NULL, or a value of 0 or over DSIG_BFT_MAX_VALUE bytes.
 * @retval DSIG_E_STATE       not a broadcast member.
 * @retval other              a signing error of the scheme (DSIG_E_WOULD_BLOCK from an empty pool, ...).
 */
DSIG_EXPORT int dsig_bft_broadcast(dsig_bft *b, const uint8_t *value, size_t len, uint64_t *instance);

/*
 * Client: submit operation `op` (1 .. DSIG_BFT_MAX_OP bytes; dsig_bft_kv_op builds them) as the next
 * request (*request, may be NULL); the result arrives as DSIG_BFT_EV_REPLY. One request at a time.
 * @retval DSIG_OK            sent; *request is its request number.
 * @retval DSIG_E_WOULD_BLOCK the previous request has no accepted result yet.
 * @retval DSIG_E_ARG         b NULL, or an operation of 0 or over DSIG_BFT_MAX_OP bytes.
 * @retval DSIG_E_STATE       not a client.
 * @retval other              a signing error of the scheme.
 */
DSIG_EXPORT int dsig_bft_submit(dsig_bft *b, const uint8_t *op, size_t len, uint64_t *request);

/*
 * Run the timers now (retransmission, view change, state transfer), for processes made with
 * tick_ms = 0. Failures inside (a refused send) are counted, not returned.
 * @retval DSIG_OK    the timers ran.
 * @retval DSIG_E_ARG b NULL.
 */
DSIG_EXPORT int dsig_bft_tick(dsig_bft *b);

/*
 * Replica: its last executed sequence number, current view and state digest.
 * @retval DSIG_OK      the outputs are set.
 * @retval DSIG_E_STATE b is not a replica (or NULL).
 */
DSIG_EXPORT int dsig_bft_replica_state(dsig_bft *b, uint64_t *seq, uint64_t *view, uint8_t digest[32]);

/* ---- the key-value state machine ------------------------------------------------------------ */

#define DSIG_BFT_KV_PUT 1        /* result: status */
#define DSIG_BFT_KV_GET 2        /* result: status || value */
#define DSIG_BFT_KV_DEL 3        /* result: status */
#define DSIG_BFT_KV_OK 0         /* result status bytes */
#define DSIG_BFT_KV_NOT_FOUND 1
#define DSIG_BFT_KV_FULL 2
#define DSIG_BFT_KV_BAD_OP 3

/*
 * Encode an operation of the replicated key-value store: kind u8 || key length u8 || key || value (PUT
 * only; the rest of the op), for dsig_bft_submit.
 * @return its length, or 0 if it does not fit `cap`, the kind is unknown or the key / value is out of
 *         bounds (DSIG_BFT_KV_MAX_KEY, DSIG_BFT_KV_MAX_VALUE).
 */
DSIG_EXPORT size_t dsig_bft_kv_op(uint8_t *out, size_t cap, int kind, const uint8_t *key, size_t key_len,
                                  const uint8_t *value, size_t value_len);

/* ---- proofs --------------------------------------------------------------------------------- */

/* Verify one signed statement of `signer`: DSIG_OK or DSIG_E_VERIFY. */
typedef int (*dsig_bft_verify_fn)(void *arg, uint64_t signer, const uint8_t *stmt, size_t stmt_len,
                                  const uint8_t *sig, size_t sig_len);

/*
 * Check an equivocation proof (DSIG_BFT_EV_EVIDENCE): two statements of the same kind, signer,
 * session and instance fields with different digests, each with a signature that `verify` accepts
 * (for DSig: dsig_hybrid_verify_slow with the culprit's DSig public key and node id — anyone can check it).
 * *culprit (may be NULL) gets the signer.
 * @retval DSIG_OK       a valid proof: the signer equivocated.
 * @retval DSIG_E_FORMAT not two conflicting statements with signatures.
 * @retval DSIG_E_VERIFY a signature does not verify.
 * @retval DSIG_E_ARG    proof or verify NULL.
 */
DSIG_EXPORT int dsig_bft_proof_check(const uint8_t *proof, size_t len, dsig_bft_verify_fn verify, void *arg,
                                     uint64_t *culprit);

/* ---- statistics ----------------------------------------------------------------------------- */

typedef struct dsig_bft_stats {
    uint64_t frames_in;          /* frames of this session received */
    uint64_t frames_out;         /* frames sent */
    uint64_t send_failed;        /* sends the node refused (peer down, queue full: retransmitted) */
    uint64_t malformed;          /* refused: bad layout, bounds, unknown sender, digest mismatch */
    uint64_t forged;             /* refused: a signature that does not verify */
    uint64_t replayed;           /* refused: duplicate, or for an instance / view / request already past */
    uint64_t future;             /* not processed: for a view or sequence number this replica has not
                                    reached (the sender retransmits; f+1 such members make it fetch) */
    uint64_t equivocations;      /* conflicting signed statements proven (EVIDENCE events) */
    uint64_t delivered;          /* broadcast: values delivered */
    uint64_t decided;            /* replica: sequence numbers executed */
    uint64_t replies;            /* client: results accepted */
    uint64_t view_changes;       /* replica: VIEW-CHANGE messages sent */
    uint64_t views_entered;      /* replica: new views entered */
    uint64_t checkpoints;        /* replica: stable checkpoints */
    uint64_t fetches;            /* replica: state-transfer requests sent */
    uint64_t fetched;            /* replica: sequence numbers installed from state transfer */
    uint64_t retransmits;        /* frames re-sent by the timers */
    uint64_t log_records;        /* replica: log records written */
    uint64_t log_syncs;          /* replica: fdatasync calls */
    uint64_t signatures;         /* statements signed */
    uint64_t verifications;      /* signatures verified */
} dsig_bft_stats;

/* Copy the process's counters into *st (under its lock: one consistent snapshot). */
DSIG_EXPORT void dsig_bft_stats_get(dsig_bft *b, dsig_bft_stats *st);

/* Stop the ticker and free. No other call on `b` may be in progress, and the node must no longer hand
 * frames to it. NULL is accepted. */
DSIG_EXPORT void dsig_bft_free(dsig_bft *b);

DSIG_END_DECLS

#endif
