/*
 * dsig/node.h — a DSig node: the background plane that carries DSig batches between processes and
 * hosts, running on its own thread inside the application process (docs/node.md).
 *
 * A node knows the membership of a deployment from a JSON configuration (node ids, addresses, DSig
 * public keys, groups). It
 *   - keeps one DSig signer (one key pool) per group it belongs to, and pushes every batch message of
 *     that pool to the other members of the group (the paper's "hint": sign(msg, group) uses a key
 *     whose batch went to exactly those verifiers);
 *   - receives other signers' batch messages, checks their Ed25519 root signature under the configured
 *     key of the claimed signer in a background thread, caches them, and acknowledges them (BATCH_ACK),
 *     so a signer knows when its verifiers are warm (dsig_node_wait_ready);
 *   - verifies signatures from any configured node: fast path when the batch is cached, slow path
 *     (Merkle proof + Ed25519) otherwise — a node outside a group can still verify its signatures;
 *   - carries application messages (APP frames) between nodes for ping-style protocols;
 *   - reconnects with backoff, and after a peer (re)connects re-sends the batches whose keys are still
 *     unused in the pools, so a restarted verifier returns to the fast path.
 * Frames from unknown ids, batches with a bad root signature, replayed batches and malformed frames are
 * dropped and counted (dsig_node_stats); they never crash the node and never make a signature verify.
 *
 * Threads: dsig_node_start() starts the plane thread (the network event loop), one or more batch
 * verification threads, and each group's key-generation threads. Every function below is thread-safe
 * unless stated otherwise; the on_app callback runs on the plane thread.
 *
 * Return values follow dsig/error.h.
 */
#ifndef DSIG_NODE_H
#define DSIG_NODE_H

#include "common.h"
#include "hybrid.h"
#include "key.h"

DSIG_BEGIN_DECLS

/* ---- configuration (membership) ------------------------------------------------------------- */

/* Bounds enforced by the configuration parser. */
#define DSIG_NODE_MAX_NODES 256u         /* nodes in a configuration */
#define DSIG_NODE_MAX_GROUPS 64u         /* groups in a configuration */
#define DSIG_NODE_MAX_GROUP_MEMBERS 64u  /* nodes in one group */
#define DSIG_NODE_MAX_NAME 64u           /* bytes in a group name ([A-Za-z0-9._-], non-empty) */
#define DSIG_NODE_MAX_ADDRESS 128u      /* bytes of an address text with its NUL ("tcp:HOST:PORT",
                                            "unix:PATH"): enough for dsig_node_listen_address */
#define DSIG_NODE_MAX_CONFIG_BYTES (1024u * 1024u) /* configuration file / text size */
#define DSIG_NODE_MAX_ID UINT64_C(0x7FFFFFFFFFFFFFFF) /* ids are 1..2^63-1 */

/* A parsed, validated, immutable configuration. */
typedef struct dsig_node_config dsig_node_config;

/*
 * Parse a configuration from JSON text (docs/node.md):
 *   {"nodes":[{"id":1,"address":"tcp:127.0.0.1:7101",
 *              "public_key":{"kty":"OKP","crv":"Ed25519","alg":"DSig","x":"..."},"groups":["g1"]}, ...],
 *    "groups":{"g1":{"params":"wots4-haraka-b128"}}}
 * Strict: unknown members, duplicate ids / addresses / keys, a node naming an undefined group, a group
 * with no member, an unknown parameter preset, a private key ("d") in the file, a key not bound to
 * "DSig", bounds exceeded are refused, with dsig_last_error_detail() naming the field (e.g. "node
 * config: nodes[2].groups[0]: undefined group \"g9\""). *out is NULL on failure.
 * @retval DSIG_OK                *out is the configuration (free it with dsig_node_config_free).
 * @retval DSIG_E_ARG             json or out NULL.
 * @retval DSIG_E_JSON            not strict JSON, an unknown or duplicate member, a wrong type.
 * @retval DSIG_E_FORMAT          a bad value: address, id, group name, duplicate, undefined group,
 *                                empty group, unknown parameter preset.
 * @retval DSIG_E_KEY             a malformed public key, or a private key ("d") in the file.
 * @retval DSIG_E_ALG_NOT_ALLOWED a key not bound to "DSig".
 * @retval DSIG_E_TOO_LARGE       a bound exceeded (DSIG_NODE_MAX_*).
 * @retval DSIG_E_NOMEM           out of memory.
 */
DSIG_EXPORT int dsig_node_config_parse(const char *json, size_t len, dsig_node_config **out);

/*
 * Read and parse a configuration file (at most DSIG_NODE_MAX_CONFIG_BYTES), as dsig_node_config_parse.
 * @retval DSIG_OK          *out is the configuration.
 * @retval DSIG_E_ARG       path or out NULL.
 * @retval DSIG_E_IO        the file cannot be opened or read.
 * @retval DSIG_E_TOO_LARGE the file is over DSIG_NODE_MAX_CONFIG_BYTES.
 * @retval other            the codes of dsig_node_config_parse.
 */
DSIG_EXPORT int dsig_node_config_load(const char *path, dsig_node_config **out);

/* Free a configuration. NULL is accepted. Nodes made from it keep their own copy. */
DSIG_EXPORT void dsig_node_config_free(dsig_node_config *cfg);

/* One configured node, as seen through dsig_node_config_node(). Pointers stay valid as long as the
 * configuration. */
typedef struct dsig_node_member {
    uint64_t id;
    const char *address;             /* "tcp:HOST:PORT" or "unix:PATH" (docs/net.md) */
    const dsig_key *public_key;      /* a DSig key (OKP Ed25519 bound to "DSig"), public part only */
    size_t n_groups;
    const char *const *groups;       /* group names this node belongs to */
} dsig_node_member;

/* One group, as seen through dsig_node_config_group(). Groups are listed sorted by name. */
typedef struct dsig_node_group {
    const char *name;
    const dsig_hybrid_params *params;/* the group's parameter set */
    size_t n_members;
    const uint64_t *members;         /* member ids, ascending */
} dsig_node_group;

/*
 * The number of nodes in the configuration.
 * @return the count, 0 for a NULL cfg.
 */
DSIG_EXPORT size_t dsig_node_config_node_count(const dsig_node_config *cfg);

/*
 * The i-th node, in file order, into *out (pointers valid as long as cfg).
 * @retval DSIG_OK    *out describes the node.
 * @retval DSIG_E_ARG i past the end, or a NULL argument.
 */
DSIG_EXPORT int dsig_node_config_node(const dsig_node_config *cfg, size_t i, dsig_node_member *out);
/*
 * The node with this id, into *out.
 * @retval DSIG_OK               *out describes the node.
 * @retval DSIG_E_UNKNOWN_SIGNER there is no node with this id.
 * @retval DSIG_E_ARG            cfg or out NULL.
 */
DSIG_EXPORT int dsig_node_config_find(const dsig_node_config *cfg, uint64_t id, dsig_node_member *out);

/*
 * The number of groups in the configuration.
 * @return the count, 0 for a NULL cfg.
 */
DSIG_EXPORT size_t dsig_node_config_group_count(const dsig_node_config *cfg);

/*
 * The i-th group, sorted by name, into *out (pointers valid as long as cfg).
 * @retval DSIG_OK    *out describes the group.
 * @retval DSIG_E_ARG i past the end, or a NULL argument.
 */
DSIG_EXPORT int dsig_node_config_group(const dsig_node_config *cfg, size_t i, dsig_node_group *out);
/*
 * The group of this name, into *out.
 * @retval DSIG_OK    *out describes the group.
 * @retval DSIG_E_ARG the group is undefined, or a NULL argument.
 */
DSIG_EXPORT int dsig_node_config_group_find(const dsig_node_config *cfg, const char *name,
                                            dsig_node_group *out);

/* ---- wire protocol (frame types over src/net; payload layouts in docs/node.md) ------------------ */

#define DSIG_NODE_T_HELLO 0x10u          /* version u8 ‖ node id u64 ‖ instance u64 ‖ nonce[32] (49 B) */
#define DSIG_NODE_T_BATCH 0x11u          /* signer id u64 ‖ name len u8 ‖ group name ‖ batch message */
#define DSIG_NODE_T_BATCH_ACK 0x12u      /* signer id u64 ‖ batch seq u64 ‖ name len u8 ‖ group name */
#define DSIG_NODE_T_APP 0x13u            /* application bytes */
#define DSIG_NODE_T_AUTH 0x14u           /* Ed25519 signature of the HELLO transcript under the
                                            sender's derived authentication key (64 B) */
#define DSIG_NODE_PROTOCOL_VERSION 3u    /* 2: authenticated HELLO (challenge-response); 3: AUTH under
                                            the node's derived authentication key, DSig format v2 */

/* ---- node ----------------------------------------------------------------------------------- */

typedef struct dsig_node dsig_node;

/* Called on the plane thread for each APP frame from an authenticated peer. The bytes are valid during
 * the call only. It may call dsig_node_send_app / _verify / _sign (a blocking sign on an empty pool
 * would stall the plane: use nonblocking signers or keep pools warm), never stop/free. */
typedef void (*dsig_node_app_cb)(void *arg, uint64_t peer_id, const uint8_t *bytes, size_t len);

typedef struct dsig_node_options {
    unsigned pool_target;            /* keys kept ready per group (default 512) */
    unsigned signer_threads;         /* key-generation threads per group (default 1) */
    int nonblocking;                 /* 1: dsig_node_sign on an empty pool returns DSIG_E_WOULD_BLOCK
                                        (default 0: it waits) */
    unsigned verify_threads;         /* background batch-verification threads (default 1, max 16) */
    unsigned cache_batches;          /* verified batches cached per (signer, group) and replay window
                                        (default and minimum 32) */
    unsigned verify_queue;           /* received batches waiting for verification (default 1024;
                                        beyond it they are dropped and counted as queue_full) */
    /* What one authenticated peer's BATCH frames may cost (docs/node.md "Per-peer bounds"): */
    unsigned peer_verify_queue;      /* its batches waiting for verification (default 512: room for
                                        what a stalled signer releases at once; beyond:
                                        drop_queue_full) */
    unsigned peer_verify_rate;       /* root-signature checks per second it may cause (default 2000) */
    unsigned peer_verify_burst;      /* ... in a burst (default 1024; beyond: drop_rate_limited). A
                                        batch whose root signature fails costs its sender 64 more,
                                        so forged batches get rate / 65 checks per second */
    uint32_t max_app_bytes;          /* largest APP payload (default 65536 - 64, ≤ 16 MiB - 64) */
    uint32_t heartbeat_ms;           /* transport heartbeat interval (default 500; 0 = off) */
    uint32_t backoff_max_ms;         /* reconnect delay ceiling (default 2000) */
    const char *listen_address;      /* listen here instead of the configured address (e.g.
                                        "tcp:0.0.0.0:7101" on a multi-homed host); NULL = configured */
    dsig_node_app_cb on_app;         /* APP frames (default NULL: counted and dropped) */
    void *on_app_arg;
} dsig_node_options;

/* Fill `o` with the node defaults documented on each member above. */
DSIG_EXPORT void dsig_node_options_default(dsig_node_options *o);

/*
 * A node with id `my_id` of configuration `cfg` (copied), signing with `my_ed25519_private`, a DSig
 * private key (OKP Ed25519 bound to "DSig", with "d"; what the node needs is copied); it must match the
 * configured public key of `my_id`. opts NULL = defaults. The group signers start generating keys at
 * once; nothing is sent or received until dsig_node_start(). *out is NULL on failure.
 * @retval DSIG_OK                *out is the node (free it with dsig_node_free).
 * @retval DSIG_E_ARG             a NULL argument, or bad options (the detail names the member).
 * @retval DSIG_E_UNKNOWN_SIGNER  my_id is not in the configuration.
 * @retval DSIG_E_NO_PRIVATE      the key has no private part.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is not bound to "DSig".
 * @retval DSIG_E_KEY_MISMATCH    the key does not match the configured public key of my_id.
 * @retval DSIG_E_NOMEM           out of memory, or a thread cannot start.
 * @retval other                  the codes of dsig_hybrid_signer_new for a group signer.
 */
DSIG_EXPORT int dsig_node_new(dsig_node **out, const dsig_node_config *cfg, uint64_t my_id,
                              const dsig_key *my_ed25519_private, const dsig_node_options *opts);

/*
 * Bind the listening address, connect to every other node and start the plane thread and the batch
 * verification threads. A node is started once.
 * @retval DSIG_OK      the node runs.
 * @retval DSIG_E_ARG   n NULL.
 * @retval DSIG_E_STATE already started (or stopped).
 * @retval DSIG_E_FORMAT a listen address that does not parse.
 * @retval DSIG_E_IO    the address cannot be bound (the detail names it).
 * @retval DSIG_E_NOMEM out of memory, or a thread cannot start.
 */
DSIG_EXPORT int dsig_node_start(dsig_node *n);

/* Stop the plane thread and close every connection; signing and verifying still work (no more batches
 * are sent or received). Idempotent; not from the on_app callback. */
DSIG_EXPORT void dsig_node_stop(dsig_node *n);

/* Stop if running, erase every key and free. No other call on `n` may be in progress. NULL accepted. */
DSIG_EXPORT void dsig_node_free(dsig_node *n);

/*
 * This node's id.
 * @return the id.
 */
DSIG_EXPORT uint64_t dsig_node_id(const dsig_node *n);

/*
 * The address the node listens on, as text in buf ("tcp:HOST:PORT" with the port chosen for port 0,
 * or "unix:PATH"), once started.
 * @retval DSIG_OK      buf holds the NUL-terminated address.
 * @retval DSIG_E_ARG   n or buf NULL.
 * @retval DSIG_E_STATE not started.
 * @retval DSIG_E_BUFFER the text does not fit cap bytes.
 * @retval DSIG_E_IO    the socket's address cannot be read.
 */
DSIG_EXPORT int dsig_node_listen_address(dsig_node *n, char *buf, size_t cap);

/*
 * The size of the signatures this node makes in `group`.
 * @return the size in bytes, 0 if `group` is not a group of this node.
 */
DSIG_EXPORT size_t dsig_node_sig_bytes(dsig_node *n, const char *group);

/*
 * Sign `msg` with a one-time key of `group`'s pool (this node must be a member). Writes
 * dsig_node_sig_bytes(n, group) bytes.
 * @retval DSIG_OK            sig holds the signature.
 * @retval DSIG_E_ARG         a group this node is not in, or a NULL argument.
 * @retval DSIG_E_BUFFER      cap is too small (no key consumed).
 * @retval DSIG_E_WOULD_BLOCK nonblocking and the pool is empty.
 * @retval other              the codes of dsig_hybrid_sign.
 */
DSIG_EXPORT int dsig_node_sign(dsig_node *n, const char *group, const uint8_t *msg, size_t len,
                               uint8_t *sig, size_t cap, size_t *sig_len);

/*
 * Verify `sig` on `msg` from node `signer_id` (any configured node, in any group): the fast path if the
 * batch is cached here, else the slow path.
 * @retval DSIG_OK               the signature is valid.
 * @retval DSIG_E_VERIFY         it does not verify, or is malformed.
 * @retval DSIG_E_UNKNOWN_SIGNER signer_id is not in the configuration.
 * @retval DSIG_E_EQUIVOCATION   valid, but the signer equivocated (see dsig/hybrid.h).
 * @retval DSIG_E_ARG            a NULL argument.
 */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_node_verify(dsig_node *n, uint64_t signer_id, const uint8_t *msg,
                                                  size_t len, const uint8_t *sig, size_t sig_len);

/*
 * Whether dsig_node_verify would take the fast path for this signature now (its batch is cached here).
 * @retval 1 the fast path would be taken.
 * @retval 0 it would not (also for an unknown signer or a malformed signature).
 */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_node_can_verify_fast(dsig_node *n, uint64_t signer_id,
                                                           const uint8_t *sig, size_t sig_len);

/*
 * Send application bytes to node `peer_id` (APP frame; a pair's APP traffic shares one connection, the
 * one the lower id opened — docs/node.md "Application frames"). Never blocks.
 * @retval DSIG_OK               queued.
 * @retval DSIG_E_WOULD_BLOCK    the send queue is full.
 * @retval DSIG_E_STATE          not connected, or not started.
 * @retval DSIG_E_UNKNOWN_SIGNER peer_id is not in the configuration, or is this node.
 * @retval DSIG_E_TOO_LARGE      len > max_app_bytes.
 * @retval DSIG_E_ARG            a NULL argument.
 */
DSIG_EXPORT int dsig_node_send_app(dsig_node *n, uint64_t peer_id, const void *bytes, size_t len);

/*
 * Whether this node's connection to `peer_id` is up and the peer has authenticated itself (HELLO +
 * AUTH).
 * @retval 1 up and authenticated.
 * @retval 0 not (also for an unknown id, this node's own id, or n NULL).
 */
DSIG_EXPORT int dsig_node_peer_up(dsig_node *n, uint64_t peer_id);

/* ---- membership at run time (docs/node.md "Dynamic membership") ------------------------------ */

/*
 * Add a member while the node runs (or before it starts): `json` is one node entry exactly as in the
 * configuration's "nodes" array, {"id":..,"address":..,"public_key":{..},"groups":[..]}, checked as
 * dsig_node_config_parse checks an entry, against this node's groups (groups themselves are the
 * configuration's: a member can only join groups defined there). Once started, the node connects to
 * it, pushes it the batches of the groups both belong to, caches its batches and verifies its
 * signatures like a configured member's. Thread-safe; not concurrently with dsig_node_stop / _free.
 * @retval DSIG_OK          it is a member.
 * @retval DSIG_E_ARG       a NULL argument.
 * @retval DSIG_E_STATE     a member with this id exists already (remove it first).
 * @retval DSIG_E_FORMAT    the same address as a member, or a bad value (as dsig_node_config_parse).
 * @retval DSIG_E_KEY       the same public key as a member, or a malformed or private key.
 * @retval DSIG_E_TOO_LARGE DSIG_NODE_MAX_NODES members already, a group of DSIG_NODE_MAX_GROUP_MEMBERS,
 *                          or an entry over 64 KiB.
 * @retval other            the codes of dsig_node_config_parse for a bad entry; DSIG_E_NOMEM.
 */
DSIG_EXPORT int dsig_node_member_add(dsig_node *n, const char *json, size_t len);

/*
 * Remove a member (configured or added) while the node runs: its connections are closed, the batches
 * cached for it and those of its waiting for verification are dropped, its acknowledgements no longer
 * count for dsig_node_wait_ready, and its signatures and frames are refused like an unknown id's.
 * Thread-safe; not concurrently with dsig_node_stop / _free.
 * @retval DSIG_OK               removed.
 * @retval DSIG_E_ARG            n NULL, or id is this node.
 * @retval DSIG_E_UNKNOWN_SIGNER id is not a member.
 */
DSIG_EXPORT int dsig_node_member_remove(dsig_node *n, uint64_t id);

/*
 * A copy of a member's public key (free it with dsig_key_free).
 * @retval DSIG_OK               *out is the key.
 * @retval DSIG_E_UNKNOWN_SIGNER id is not a member.
 * @retval DSIG_E_ARG            a NULL argument.
 * @retval DSIG_E_NOMEM          out of memory.
 */
DSIG_EXPORT int dsig_node_member_public_key(dsig_node *n, uint64_t id, dsig_key **out);

/*
 * Whether member `id` belongs to `group` now.
 * @retval 1 it does.
 * @retval 0 it does not, is not a member, the group is undefined, or a NULL argument.
 */
DSIG_EXPORT int dsig_node_member_in_group(dsig_node *n, uint64_t id, const char *group);

/*
 * The member ids now (this node included), ascending: up to cap of them into ids (NULL: count only).
 * @return the number of members (may exceed cap), 0 for a NULL n.
 */
DSIG_EXPORT size_t dsig_node_member_ids(dsig_node *n, uint64_t *ids, size_t cap);

/* ---- membership through etcd (docs/node.md "Membership through etcd") ----------------------- */

typedef struct dsig_node_etcd dsig_node_etcd;

/* Called for each membership change and each entry ignored (from the etcd thread): a one-line text. */
typedef void (*dsig_node_etcd_log_cb)(void *arg, const char *line);

typedef struct dsig_node_etcd_options {
    const char *const *endpoints;    /* "http://HOST:PORT" of the etcd members (at least one) */
    size_t n_endpoints;
    const char *prefix;              /* keys are PREFIX "nodes/<id>" (default "dsig/") */
    unsigned lease_ttl_s;            /* this node's registration lease (default 5 s, 2..3600): how
                                        long a node that died stays a member elsewhere */
    uint32_t timeout_ms;             /* per etcd request and member (default 2000) */
    dsig_node_etcd_log_cb on_log;    /* default NULL: lines go to stderr */
    void *on_log_arg;
} dsig_node_etcd_options;

/* Fill `o` with the defaults above (no endpoint). */
DSIG_EXPORT void dsig_node_etcd_options_default(dsig_node_etcd_options *o);

/*
 * Register node `n` in etcd under PREFIX "nodes/<its id>" (its configuration entry as JSON, attached
 * to a lease kept alive by a thread of its own), add every valid member found under PREFIX "nodes/",
 * and follow the prefix: a new or changed entry adds (or replaces) a member, a deleted one (a clean
 * leave, or a lease that expired) removes it. Each entry is checked like a configuration entry; one
 * that does not parse, whose id is not the one of its key, or that conflicts with a member (same
 * address or key) is ignored and logged. When etcd cannot be reached the membership stays as it is;
 * a lost lease is granted again and the entry put again. Etcd is trusted for membership as the
 * configuration file is (docs/node.md). Before or after dsig_node_start; stop it before
 * dsig_node_stop / _free.
 * @retval DSIG_OK            *out runs.
 * @retval DSIG_E_ARG         a NULL argument, no endpoint, a bad endpoint, prefix or lease_ttl_s.
 * @retval DSIG_E_UNAVAILABLE etcd cannot be reached to register (the detail names each member).
 * @retval DSIG_E_NOMEM       out of memory, or the thread cannot start.
 */
DSIG_EXPORT int dsig_node_etcd_start(dsig_node_etcd **out, dsig_node *n, const dsig_node_etcd_options *o);

/* Stop following etcd. leave 1: revoke the lease first, so the others remove this node at once
 * (leave 0: it stays registered until its lease expires). NULL accepted. */
DSIG_EXPORT void dsig_node_etcd_stop(dsig_node_etcd *m, int leave);

typedef struct dsig_node_etcd_stats {
    uint64_t registrations;          /* this node's entry put under a fresh lease (1 + re-registrations) */
    uint64_t leases_lost;            /* keep-alive found the lease expired (or the entry deleted) */
    uint64_t joined, left;           /* members added (or replaced) / removed from etcd */
    uint64_t ignored;                /* entries refused (malformed, id mismatch, conflict) */
    uint64_t unavailable;            /* etcd requests that no member answered */
    uint64_t rereads;                /* prefix read again after the watch fell behind compaction */
} dsig_node_etcd_stats;

/* Copy the counters into *st (zeros for NULL m). */
DSIG_EXPORT void dsig_node_etcd_stats_get(dsig_node_etcd *m, dsig_node_etcd_stats *st);

/*
 * Wait until `group`'s pool holds at least `n_keys` ready keys (n_keys ≤ pool_target) AND every batch
 * with unused keys in that pool has been acknowledged by every other member of the group (so their
 * signatures will take the fast path there). timeout_ms < 0: no limit.
 * @retval DSIG_OK            ready.
 * @retval DSIG_E_WOULD_BLOCK timeout.
 * @retval DSIG_E_ARG         a group this node is not in, n_keys > pool_target, or n NULL.
 * @retval DSIG_E_STATE       not started.
 */
DSIG_EXPORT int dsig_node_wait_ready(dsig_node *n, const char *group, unsigned n_keys, int timeout_ms);

typedef struct dsig_node_stats {
    /* batches this node signed (all groups) */
    uint64_t batches_generated;      /* batch messages produced by the group signers */
    uint64_t batches_sent;           /* BATCH frames queued to peers (first sends + re-syncs) */
    uint64_t batches_resent;         /* of which re-sync after a peer (re)connected, or retry of a
                                        batch its full send queue had refused */
    uint64_t batches_send_failed;    /* not queued: send queue full, or behind a refused batch (retried
                                        once the queue has room while the batch has unused keys) */
    uint64_t acks_received;          /* BATCH_ACKs for this node's batches */
    uint64_t signatures;             /* dsig_node_sign successes */
    /* batches other nodes signed */
    uint64_t batches_received;       /* BATCH frames from identified peers */
    uint64_t batches_verified;       /* root signature valid: cached and acknowledged */
    uint64_t drop_unknown_id;        /* frames or HELLOs naming an id not in the configuration */
    uint64_t drop_bad_signature;     /* batch whose root signature does not verify under the key */
    uint64_t drop_replay;            /* batch seq already seen, or older than the cache window */
    uint64_t drop_malformed;         /* bad payload layout, unknown group, frame before HELLO, and
                                        connections the transport dropped for a bad frame header */
    uint64_t drop_queue_full;        /* verification queue full (all peers, or the sender's share) */
    uint64_t drop_rate_limited;      /* the sender's verification budget was spent */
    uint64_t batch_checks;           /* batch root signatures checked (verified or not) */
    /* verification */
    uint64_t verify_fast;
    uint64_t verify_slow;
    uint64_t verify_failed;          /* DSIG_E_VERIFY / unknown signer */
    uint64_t equivocations;
    /* application and transport */
    uint64_t app_sent, app_received, app_send_failed;
    uint64_t peers_up;               /* peers with an identified outgoing connection now */
    uint64_t reconnects;             /* outgoing connections re-established */
    uint64_t connections_rejected;   /* connections closed for a bad / unknown HELLO or a failed AUTH */
    /* HELLO authentication (docs/node.md "Authentication") */
    uint64_t auth_ok;                /* connections whose peer proved its configured key */
    uint64_t auth_failed;            /* AUTH frames that did not verify under the claimed id's key */
    uint64_t drop_unauthenticated;   /* frames other than HELLO/AUTH on a connection not authenticated */
    /* acknowledgements refused by a full send queue */
    uint64_t acks_deferred;          /* BATCH_ACKs queued for retry (the send queue was full) */
    uint64_t acks_retried;           /* of which sent later by the plane thread */
    uint64_t acks_dropped;           /* not kept: retry list full or the connection went down (the
                                        signer's re-sync on reconnection covers these) */
} dsig_node_stats;

/* Copy the node's counters into *st (each read atomically; not one snapshot under load). */
DSIG_EXPORT void dsig_node_stats_get(dsig_node *n, dsig_node_stats *st);

DSIG_END_DECLS

#endif
