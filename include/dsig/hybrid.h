/*
 * dsig/hybrid.h — DSig hybrid signatures (Aguilera et al., OSDI '24): one-time hash-based signatures
 * (W-OTS+ or HORS) whose public keys are batched under a Merkle root signed once with Ed25519.
 *
 * Three objects, all thread-safe:
 *
 *   dsig_hybrid_signer    owns a DSig private key and a pool of prepared one-time keys that
 *                         background threads keep filled (≥ 512 ready keys by default). Signing pops
 *                         ONE key, writes the signature and erases the key: a one-time key is never
 *                         used twice. Each new batch's public part (a "batch message") is handed to
 *                         the verifiers before any of its keys can sign.
 *   dsig_hybrid_verifier  knows signers by id and DSig public key, verifies incoming batch
 *                         messages in the background and caches them (a hash table keyed by
 *                         (signer, batch sequence number), ≥ 32 batches per signer, the lowest
 *                         sequence number evicted first, a sequence floor below it).
 *                         A signature of a cached batch is checked on the FAST path (the one-time
 *                         signature only); otherwise on the SLOW path (Merkle proof + Ed25519 +
 *                         one-time signature), so any holder of the signer's public key can
 *                         verify. Two different messages verified under the same one-time key are
 *                         reported as signer equivocation, with both signatures as evidence.
 *   dsig_hybrid_channel   an in-process fan-out carrying batch messages from signers to verifiers.
 *
 * Signatures are self-contained byte strings (docs/dsig-format.md); their size depends only on the
 * parameter set (1559 bytes for the default W-OTS+ w = 4, batch 128). The registry algorithm "DSig"
 * (dsig/registry.h) uses the same scheme for streamed payloads (docs/dsig.md).
 *
 * Return values follow dsig/error.h: DSIG_OK, DSIG_E_VERIFY for a signature that does not verify,
 * DSIG_E_EQUIVOCATION for a valid signature that convicts its signer, other negative codes for errors.
 */
#ifndef DSIG_HYBRID_H
#define DSIG_HYBRID_H

#include "common.h"
#include "key.h"

DSIG_BEGIN_DECLS

/* ---- parameter sets ------------------------------------------------------------------------- */

/* One-time scheme. */
#define DSIG_HYBRID_OTS_WOTS 1u /* W-OTS+ (default: w = 4) */
#define DSIG_HYBRID_OTS_HORS 2u /* HORS, completed public key in the signature */

/* Chain hash. */
#define DSIG_HYBRID_HASH_HARAKA 1u /* Haraka-512 v2 (AES-NI; default) */
#define DSIG_HYBRID_HASH_SHA256 2u /* one SHA-256 compression (SHA-NI when available) */
#define DSIG_HYBRID_HASH_BLAKE3 3u /* one BLAKE3 compression */

/* An immutable parameter set: one-time scheme, chain hash, W-OTS+ depth or HORS (k, t), batch size.
 * Presets are static; custom sets come from dsig_hybrid_params_new(). */
typedef struct dsig_hb_params dsig_hybrid_params;

/* The default: W-OTS+ w = 4, Haraka, batches of 128 keys ("wots4-haraka-b128"). Never NULL. */
DSIG_EXPORT const dsig_hybrid_params *dsig_hybrid_params_default(void);

/* A preset by name ("wots4-haraka-b128", "wots8-haraka-b128", "hors-k64-t256-haraka-b128", ...),
 * or NULL if there is none. */
DSIG_EXPORT const dsig_hybrid_params *dsig_hybrid_params_by_name(const char *name);

/* The i-th preset (0 ≤ i < dsig_hybrid_params_count()), NULL past the end. */
DSIG_EXPORT size_t dsig_hybrid_params_count(void);
DSIG_EXPORT const dsig_hybrid_params *dsig_hybrid_params_at(size_t i);

/*
 * A custom parameter set. ots = DSIG_HYBRID_OTS_WOTS: log_w 1..4 (w = 2, 4, 8, 16), log_t = k = 0.
 * ots = DSIG_HYBRID_OTS_HORS: log_w = 0, log_t 4..12, 1 ≤ k < 2^log_t with ≥ 128-bit HORS security.
 * log_batch 0..10 (1 to 1024 keys per batch). DSIG_E_ARG with a detail naming the field otherwise.
 * Free with dsig_hybrid_params_free(); signers and verifiers keep their own copy.
 */
DSIG_EXPORT int dsig_hybrid_params_new(dsig_hybrid_params **out, unsigned ots, unsigned hash,
                                       unsigned log_w, unsigned log_t, unsigned k, unsigned log_batch);

/* The same set with another batch size (log_batch 0..10); free with dsig_hybrid_params_free(). */
DSIG_EXPORT int dsig_hybrid_params_with_batch(dsig_hybrid_params **out, const dsig_hybrid_params *p,
                                              unsigned log_batch);

/* Free a set made by dsig_hybrid_params_new / _with_batch. NULL and presets are ignored. */
DSIG_EXPORT void dsig_hybrid_params_free(dsig_hybrid_params *p);

/* Preset name ("custom" for custom sets), and exact sizes in bytes. */
DSIG_EXPORT const char *dsig_hybrid_params_name(const dsig_hybrid_params *p);
DSIG_EXPORT size_t dsig_hybrid_params_sig_bytes(const dsig_hybrid_params *p);
DSIG_EXPORT size_t dsig_hybrid_params_batch_msg_bytes(const dsig_hybrid_params *p);
DSIG_EXPORT unsigned dsig_hybrid_params_batch_size(const dsig_hybrid_params *p);

/*
 * Where a signature's one-time key sits: its batch sequence number and leaf index. Checks the length,
 * version, parameter id and index range for `p` (NULL = default). DSIG_OK or DSIG_E_VERIFY.
 */
DSIG_EXPORT int dsig_hybrid_sig_locate(const dsig_hybrid_params *p, const uint8_t *sig, size_t sig_len,
                                       uint64_t *batch_seq, uint32_t *index);

/*
 * Stateless slow-path verification with nothing but the signer's DSig public key (a key bound to
 * "DSig", public or private) and its id: Merkle proof, Ed25519 on the batch root (under the root key
 * derived from the DSig key, for this signer id), one-time signature. DSIG_OK, DSIG_E_VERIFY,
 * DSIG_E_ALG_NOT_ALLOWED for a key not bound to "DSig", or another error for a bad key / parameter
 * set. No equivocation tracking.
 */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_hybrid_verify_slow(const dsig_hybrid_params *p,
                                                         const dsig_key *signer_key, uint64_t signer_id,
                                                         const uint8_t *msg, size_t len,
                                                         const uint8_t *sig, size_t sig_len);

/* ---- channel -------------------------------------------------------------------------------- */

typedef struct dsig_hybrid_channel dsig_hybrid_channel;
typedef struct dsig_hybrid_verifier dsig_hybrid_verifier;
typedef struct dsig_hybrid_signer dsig_hybrid_signer;

/* A new channel with no subscribers. */
DSIG_EXPORT int dsig_hybrid_channel_new(dsig_hybrid_channel **out);

/*
 * Free a channel. Every signer publishing to it must have been freed first. Subscribed verifiers
 * are simply forgotten (they are not freed). NULL is accepted.
 */
DSIG_EXPORT void dsig_hybrid_channel_free(dsig_hybrid_channel *ch);

/* Deliver every batch message published from now on to `v` (dsig_hybrid_verifier_receive_batch).
 * DSIG_E_ARG if already subscribed. */
DSIG_EXPORT int dsig_hybrid_channel_subscribe(dsig_hybrid_channel *ch, dsig_hybrid_verifier *v);

/* Stop delivering to `v`; when it returns no delivery to `v` is in progress. Call it before freeing a
 * subscribed verifier. DSIG_E_ARG if `v` was not subscribed. */
DSIG_EXPORT int dsig_hybrid_channel_unsubscribe(dsig_hybrid_channel *ch, dsig_hybrid_verifier *v);

/*
 * Hand a batch message from `signer_id` to every subscriber (signers with a channel option do this
 * themselves). Returns DSIG_OK if every subscriber queued it, else the first subscriber's error
 * (e.g. DSIG_E_WOULD_BLOCK for a full queue, DSIG_E_UNKNOWN_SIGNER) — delivery to the others goes on.
 */
DSIG_EXPORT int dsig_hybrid_channel_publish(dsig_hybrid_channel *ch, uint64_t signer_id,
                                            const uint8_t *msg, size_t len);

/* ---- signer --------------------------------------------------------------------------------- */

/* Called from a background thread with each new batch message of verifier group `group` (0 unless
 * the signer has several), before any key of that batch signs. The bytes are valid only during the
 * call. Must not call back into the same signer. */
typedef void (*dsig_hybrid_batch_cb)(void *arg, uint64_t signer_id, unsigned group, const uint8_t *msg,
                                     size_t len);

typedef struct dsig_hybrid_signer_options {
    unsigned pool_target;        /* keys kept ready per group (default 512; a pool refills below it) */
    unsigned threads;            /* background key-generation threads (default 1; 0 = none: the pool
                                    is filled by dsig_hybrid_signer_refill, or by a blocking sign) */
    int nonblocking;             /* 1: sign on an empty pool returns DSIG_E_WOULD_BLOCK (default 0:
                                    it waits for the background threads) */
    uint64_t signer_id;          /* the id verifiers know this signer by (channel and callback) */
    unsigned groups;             /* verifier groups, the paper's per-signature hint (default 0 = 1;
                                    at most 64): one pool of pool_target keys per group.
                                    dsig_hybrid_sign_hint(s, g, ...) signs with a key of group g,
                                    whose batch messages went to group g's verifiers only: its
                                    group_channels[g], on_batch with group = g, outbox g */
    dsig_hybrid_channel *const *group_channels; /* NULL, or `groups` channels (entries may be NULL):
                                    group g's batch messages are published to group_channels[g] */
    dsig_hybrid_channel *channel;/* with group_channels NULL, publish every batch message of every
                                    group here (default NULL) */
    dsig_hybrid_batch_cb on_batch; /* and/or call this with it (default NULL) */
    void *on_batch_arg;
    unsigned outbox;             /* keep up to this many batch messages per group for
                                    dsig_hybrid_signer_next_batch / _next_group_batch (default 0 =
                                    none; when full the oldest is dropped) */
    uint64_t first_seq;          /* sequence number of the first batch. 0 (the default) = the wall
                                    clock: CLOCK_REALTIME in µs × 256, so a signer restarted under the
                                    same id starts past every seq it used before (it would need more
                                    than 256 batches per µs to catch up with the clock). Verifiers
                                    never accept a seq twice from one signer id, and cache only
                                    batches above a sequence floor: seqs must grow across restarts.
                                    Nonzero: exactly this (e.g. an epoch the application persists) */
    int strict_pid;              /* 1: compare getpid() on every signature (a system call, ~0.2 µs
                                    here) so that children sharing the memory (vfork, clone with
                                    CLONE_VM) are refused too. Default 0: a child with a copy of the
                                    memory (fork, _Fork, clone) is refused through wipe-on-fork
                                    memory at the cost of one load; getpid() is used anyway where
                                    the kernel cannot wipe on fork */
} dsig_hybrid_signer_options;

/* Fill `o` with the defaults above. */
DSIG_EXPORT void dsig_hybrid_signer_options_default(dsig_hybrid_signer_options *o);

/*
 * A signer for the DSig private key `key` (OKP Ed25519 bound to "DSig", with "d"; what the signer
 * needs is copied, the caller may free it) under parameter set `p` (NULL = default) and `opts` (NULL =
 * defaults). A fresh master seed is drawn from the OS CSPRNG for every signer, so one-time keys are
 * never reused across signer instances or restarts. Background threads start filling the pool
 * immediately. DSIG_E_NO_PRIVATE for a public key, DSIG_E_ALG_NOT_ALLOWED for a key not bound to
 * "DSig" (the detail says how to make one), DSIG_E_ARG for bad options.
 */
DSIG_EXPORT int dsig_hybrid_signer_new(dsig_hybrid_signer **out, const dsig_key *key,
                                       const dsig_hybrid_params *p,
                                       const dsig_hybrid_signer_options *opts);

/*
 * Sign `msg` with one prepared one-time key, which is erased before returning; writes exactly
 * dsig_hybrid_signer_sig_bytes() bytes. Empty pool: waits for the background threads (or, with no
 * threads, generates a batch in the calling thread), or returns DSIG_E_WOULD_BLOCK in non-blocking
 * mode. DSIG_E_BUFFER if cap is too small (no key is consumed). DSIG_E_STATE in a child process that
 * has a copy of the signer (fork, _Fork, clone; also vfork / CLONE_VM children with strict_pid): its
 * keys are the parent's. Safe from any number of threads.
 */
DSIG_EXPORT int dsig_hybrid_sign(dsig_hybrid_signer *s, const uint8_t *msg, size_t len, uint8_t *sig,
                                 size_t cap, size_t *sig_len);

/* dsig_hybrid_sign with a key of verifier group `group` (opts.groups): its signature takes the fast
 * path at the verifiers that receive that group's batch messages. dsig_hybrid_sign is group 0. Same
 * return codes, and DSIG_E_ARG for group ≥ the signer's groups. */
DSIG_EXPORT int dsig_hybrid_sign_hint(dsig_hybrid_signer *s, unsigned group, const uint8_t *msg, size_t len,
                                      uint8_t *sig, size_t cap, size_t *sig_len);

/* Generate `batches` batches for every group in the calling thread and add them to the pools
 * (publishing each batch message first), whatever the pool level. For signers without threads and
 * for tests. */
DSIG_EXPORT int dsig_hybrid_signer_refill(dsig_hybrid_signer *s, unsigned batches);

/* Wait until at least `n` keys are ready in every group's pool (n ≤ pool_target; with no threads,
 * generates in the calling thread). For warm-up before latency measurements. */
DSIG_EXPORT int dsig_hybrid_signer_wait_ready(dsig_hybrid_signer *s, unsigned n);

/* Pull API: copy out the oldest kept batch message of group 0 (options.outbox > 0). DSIG_E_WOULD_BLOCK
 * if none is waiting, DSIG_E_BUFFER if cap < the message size (it stays queued; *len tells the size). */
DSIG_EXPORT int dsig_hybrid_signer_next_batch(dsig_hybrid_signer *s, uint8_t *buf, size_t cap,
                                              size_t *len);
/* The same for verifier group `group`; DSIG_E_ARG for group ≥ the signer's groups. */
DSIG_EXPORT int dsig_hybrid_signer_next_group_batch(dsig_hybrid_signer *s, unsigned group, uint8_t *buf,
                                                    size_t cap, size_t *len);

/* Signature size in bytes, parameter set, public key (32 bytes: the DSig key's Ed25519 "x") and id of
 * a signer. */
DSIG_EXPORT size_t dsig_hybrid_signer_sig_bytes(const dsig_hybrid_signer *s);
DSIG_EXPORT const dsig_hybrid_params *dsig_hybrid_signer_params(const dsig_hybrid_signer *s);
DSIG_EXPORT void dsig_hybrid_signer_public_key(const dsig_hybrid_signer *s, uint8_t pk[32]);
DSIG_EXPORT uint64_t dsig_hybrid_signer_id(const dsig_hybrid_signer *s);

typedef struct dsig_hybrid_signer_stats {
    uint64_t ready;              /* keys in the pools now (all groups) */
    uint64_t batches;            /* batches generated */
    uint64_t signatures;         /* signatures made (= keys consumed) */
    uint64_t would_block;        /* non-blocking signs refused on an empty pool */
    uint64_t waits;              /* blocking signs that had to wait */
    uint64_t outbox_dropped;     /* batch messages dropped from a full outbox */
    uint64_t publish_errors;     /* channel deliveries a verifier refused */
    unsigned protections;        /* DSIG_HYBRID_PROTECT_* every secret region of the signer got */
} dsig_hybrid_signer_stats;

/* How the signer's secrets (master seed, root key, prepared one-time keys) are kept: each is best
 * effort, so a kernel or limit that refuses one degrades to fewer protections, never to a failure. */
#define DSIG_HYBRID_PROTECT_NODUMP 1u     /* left out of core dumps (MADV_DONTDUMP) */
#define DSIG_HYBRID_PROTECT_WIPEONFORK 2u /* zero in a child with a copy of the memory (MADV_WIPEONFORK) */
#define DSIG_HYBRID_PROTECT_LOCKED 4u     /* locked in RAM, never swapped (mlock; RLIMIT_MEMLOCK) */

DSIG_EXPORT void dsig_hybrid_signer_stats_get(dsig_hybrid_signer *s, dsig_hybrid_signer_stats *st);

/* Stop and join the background threads, erase every one-time key, the master seed and the Ed25519
 * key, and free. No call on `s` may be in progress. NULL is accepted. */
DSIG_EXPORT void dsig_hybrid_signer_free(dsig_hybrid_signer *s);

/* ---- verifier ------------------------------------------------------------------------------- */

#define DSIG_HYBRID_EQUIV_LEAF 1  /* two messages verified under one one-time key */
#define DSIG_HYBRID_EQUIV_BATCH 2 /* two different batches signed under one batch sequence number */
#define DSIG_HYBRID_EQUIV_ROOT 3  /* a cached batch and a valid signature under another root, same seq */

/* Evidence records kept per signer (and opts.evidence_max in all): the same equivocation is kept
 * once; beyond the bounds detections are counted (stats) but not kept. */
#define DSIG_HYBRID_EVIDENCE_PER_SIGNER 16u

/*
 * Evidence that a signer equivocated. Both halves are validly signed by the signer; a record is made
 * only then. LEAF: (msg1, sig1) and (msg2, sig2) both verify under the same (signer, batch, index)
 * with msg1 ≠ msg2. BATCH: sig1 and sig2 are two validly signed batch messages with the same sequence
 * number and different roots (msg1 = msg2 = NULL, index = 0). ROOT: sig1 is a validly signed batch
 * message, (msg2, sig2) a valid signature with the same sequence number under another root (msg1 =
 * NULL, index = 0). Anyone with the signer's public key and id can check it (dsig_hybrid_verify_slow
 * on the signatures; the batch messages through a verifier). The bytes are copies: a record outlives
 * the cached batches it cites.
 */
typedef struct dsig_hybrid_evidence {
    int kind;                    /* DSIG_HYBRID_EQUIV_* */
    uint64_t signer_id;
    uint64_t batch_seq;
    uint32_t index;
    const uint8_t *msg1, *sig1, *msg2, *sig2;
    size_t msg1_len, sig1_len, msg2_len, sig2_len;
} dsig_hybrid_evidence;

/* Called (from the verifying thread, no lock held) each time equivocation is detected. The evidence
 * stays valid until the verifier is freed. */
typedef void (*dsig_hybrid_equivocation_cb)(void *arg, const dsig_hybrid_evidence *ev);

typedef struct dsig_hybrid_verifier_options {
    unsigned cache_batches;      /* verified batches cached per signer (default and minimum 32) */
    unsigned max_signers;        /* signers that can be added (default 64) */
    unsigned queue_max;          /* batch messages waiting for background verification (default
                                    1024; beyond it receive_batch returns DSIG_E_WOULD_BLOCK) */
    unsigned threads;            /* background verification threads (default 1; 0 = batch messages
                                    are verified inside receive_batch) */
    unsigned evidence_max;       /* evidence records kept in all (default 1024; 0 = default) */
    dsig_hybrid_equivocation_cb on_equivocation; /* default NULL */
    void *on_equivocation_arg;
} dsig_hybrid_verifier_options;

/* Fill `o` with the defaults above. */
DSIG_EXPORT void dsig_hybrid_verifier_options_default(dsig_hybrid_verifier_options *o);

/* A verifier for signers using parameter set `p` (NULL = default); opts NULL = defaults. */
DSIG_EXPORT int dsig_hybrid_verifier_new(dsig_hybrid_verifier **out, const dsig_hybrid_params *p,
                                         const dsig_hybrid_verifier_options *opts);

/* Register a signer: its id and DSig public key (bound to "DSig", public or private; the public part
 * is used). DSIG_E_ARG if the id is taken or the key is already registered under another id (one key,
 * one signer id), DSIG_E_TOO_LARGE beyond max_signers, DSIG_E_ALG_NOT_ALLOWED for a key not bound to
 * "DSig", DSIG_E_POINT for a bad key. */
DSIG_EXPORT int dsig_hybrid_verifier_add_signer(dsig_hybrid_verifier *v, uint64_t signer_id,
                                                const dsig_key *signer_key);

/*
 * Hand over a batch message from `signer_id` (bytes are copied). It is queued, its root signature is
 * verified by a background thread, and only then is the batch cached; a bad batch is dropped (see
 * the stats). Each signer's cache keeps the cache_batches highest sequence numbers: when full, the
 * lowest is evicted and becomes the signer's sequence floor; a batch at or below the floor, or below
 * every cached one when full, is stale and never cached (replaying old batch messages cannot push
 * current ones out). DSIG_OK (queued), DSIG_E_UNKNOWN_SIGNER, DSIG_E_FORMAT for a wrong length,
 * DSIG_E_WOULD_BLOCK if the queue is full. With threads = 0 the verification happens here and its
 * verdict is returned: DSIG_OK (cached, or the same batch again), DSIG_E_VERIFY for a bad batch,
 * DSIG_E_STALE, DSIG_E_EQUIVOCATION for another validly signed batch under a cached seq (recorded).
 */
DSIG_EXPORT int dsig_hybrid_verifier_receive_batch(dsig_hybrid_verifier *v, uint64_t signer_id,
                                                   const uint8_t *msg, size_t len);

/* Wait until every batch message received so far has been verified and cached (or dropped). */
DSIG_EXPORT void dsig_hybrid_verifier_flush(dsig_hybrid_verifier *v);

/*
 * Verify `sig` on `msg` from `signer_id`: the fast path if the signature belongs to a cached batch
 * (same sequence number, proof and root signature), else the slow path — also when its sequence
 * number is cached with another root. DSIG_OK; DSIG_E_VERIFY; DSIG_E_UNKNOWN_SIGNER; or
 * DSIG_E_EQUIVOCATION when the signature is valid but convicts its signer: another message was
 * already verified under the same one-time key, or it is under another root than the cached batch of
 * its sequence number (the evidence is recorded and the callback called). Safe from any number of
 * threads.
 */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_hybrid_verify(dsig_hybrid_verifier *v, uint64_t signer_id,
                                                    const uint8_t *msg, size_t len,
                                                    const uint8_t *sig, size_t sig_len);

/* How dsig_hybrid_verify_wait ends when the batch has not arrived in time (or never will: below the
 * signer's sequence floor). */
#define DSIG_HYBRID_WAIT_SLOW 1u       /* verify on the slow path (default: return DSIG_E_WOULD_BLOCK) */
#define DSIG_HYBRID_MAX_WAIT_MS 60000u /* longest wait accepted */

/*
 * Verify like dsig_hybrid_verify, but when the signature's batch is not cached yet and may still
 * arrive (above the signer's sequence floor), first wait up to `timeout_ms` for it — the published
 * artifact's default, bounded here — so that a signature racing ahead of its batch still takes the
 * fast path. Returns at once when the batch is cached (with any root), will never be cached, or once
 * it arrives. If it did not arrive: DSIG_HYBRID_WAIT_SLOW in `flags` verifies on the slow path;
 * otherwise DSIG_E_WOULD_BLOCK (the detail names the signer and batch; nothing was verified, the call
 * may be repeated). Other results: as dsig_hybrid_verify (DSIG_OK, DSIG_E_VERIFY — also at once for a
 * malformed signature — DSIG_E_UNKNOWN_SIGNER, DSIG_E_EQUIVOCATION), and DSIG_E_ARG for timeout_ms >
 * DSIG_HYBRID_MAX_WAIT_MS or unknown flags. The wait needs someone else to deliver the batch: a
 * background thread, or another thread calling receive_batch. Safe from any number of threads.
 */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_hybrid_verify_wait(dsig_hybrid_verifier *v, uint64_t signer_id,
                                                         const uint8_t *msg, size_t len, const uint8_t *sig,
                                                         size_t sig_len, unsigned timeout_ms, unsigned flags);

/* 1 if dsig_hybrid_verify would take the fast path for this signature now: its batch is cached and
 * its proof and root signature are that batch's. 0 otherwise (including unknown signer, malformed
 * signature, and a sequence number cached with another root). */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_hybrid_can_verify_fast(dsig_hybrid_verifier *v,
                                                             uint64_t signer_id, const uint8_t *sig,
                                                             size_t sig_len);

/* Equivocation evidence recorded so far, oldest first: count, and the i-th record (valid until the
 * verifier is freed). DSIG_E_ARG past the end. */
DSIG_EXPORT size_t dsig_hybrid_verifier_evidence_count(dsig_hybrid_verifier *v);
DSIG_EXPORT int dsig_hybrid_verifier_evidence(dsig_hybrid_verifier *v, size_t i,
                                              const dsig_hybrid_evidence **out);

typedef struct dsig_hybrid_verifier_stats {
    uint64_t batches_received;   /* accepted by receive_batch */
    uint64_t batches_cached;     /* verified and inserted */
    uint64_t batches_rejected;   /* bad root signature, wrong format */
    uint64_t batches_dropped;    /* queue full */
    uint64_t batches_duplicate;  /* already cached (same root) */
    uint64_t batches_evicted;    /* pushed out of a full per-signer cache */
    uint64_t batches_stale;      /* refused: below the signer's sequence floor */
    uint64_t fast;               /* verifications on the fast path */
    uint64_t slow;               /* verifications on the slow path */
    uint64_t equivocations;      /* distinct equivocations detected */
    uint64_t evidence_dropped;   /* of which not kept (per-signer or total bound reached) */
    uint64_t waits;              /* dsig_hybrid_verify_wait calls that waited for their batch */
    uint64_t wait_timeouts;      /* of which the batch did not arrive in time */
} dsig_hybrid_verifier_stats;

DSIG_EXPORT void dsig_hybrid_verifier_stats_get(dsig_hybrid_verifier *v, dsig_hybrid_verifier_stats *st);

/* Stop and join the background threads and free everything. Unsubscribe `v` from channels first;
 * no call on `v` may be in progress. NULL is accepted. */
DSIG_EXPORT void dsig_hybrid_verifier_free(dsig_hybrid_verifier *v);

DSIG_END_DECLS

#endif
