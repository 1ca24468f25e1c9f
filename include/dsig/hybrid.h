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

/*
 * The default parameter set: W-OTS+ w = 4, Haraka, batches of 128 keys ("wots4-haraka-b128").
 * @return the static preset, never NULL.
 */
DSIG_EXPORT const dsig_hybrid_params *dsig_hybrid_params_default(void);

/*
 * A preset by name ("wots4-haraka-b128", "wots8-haraka-b128", "hors-k64-t256-haraka-b128", ...; `dsig
 * bench dsig --list-params` prints them all).
 * @return the static preset, or NULL if there is none of that name (or name is NULL).
 */
DSIG_EXPORT const dsig_hybrid_params *dsig_hybrid_params_by_name(const char *name);

/*
 * The number of presets, for enumerating them with dsig_hybrid_params_at().
 * @return the number of presets.
 */
DSIG_EXPORT size_t dsig_hybrid_params_count(void);

/*
 * The i-th preset, for 0 ≤ i < dsig_hybrid_params_count(), in a stable order.
 * @return the static preset, or NULL past the end.
 */
DSIG_EXPORT const dsig_hybrid_params *dsig_hybrid_params_at(size_t i);

/*
 * A custom parameter set. ots = DSIG_HYBRID_OTS_WOTS: log_w 1..4 (w = 2, 4, 8, 16), log_t = k = 0.
 * ots = DSIG_HYBRID_OTS_HORS: log_w = 0, log_t 4..12, 1 ≤ k < 2^log_t with ≥ 128-bit HORS security.
 * log_batch 0..10 (1 to 1024 keys per batch). hash is a DSIG_HYBRID_HASH_*. Free with
 * dsig_hybrid_params_free(); signers and verifiers keep their own copy. *out is NULL on failure.
 * @retval DSIG_OK     *out holds the new set.
 * @retval DSIG_E_ARG  out NULL, or a field out of range (the detail names it).
 * @retval DSIG_E_NOMEM out of memory.
 */
DSIG_EXPORT int dsig_hybrid_params_new(dsig_hybrid_params **out, unsigned ots, unsigned hash,
                                       unsigned log_w, unsigned log_t, unsigned k, unsigned log_batch);

/*
 * A copy of set `p` (NULL = default) with another batch size (log_batch 0..10); free it with
 * dsig_hybrid_params_free(). *out is NULL on failure.
 * @retval DSIG_OK      *out holds the new set.
 * @retval DSIG_E_ARG   out NULL, log_batch out of range, or p not a valid set.
 * @retval DSIG_E_NOMEM out of memory.
 */
DSIG_EXPORT int dsig_hybrid_params_with_batch(dsig_hybrid_params **out, const dsig_hybrid_params *p,
                                              unsigned log_batch);

/* Free a set made by dsig_hybrid_params_new / _with_batch. NULL and presets are ignored. */
DSIG_EXPORT void dsig_hybrid_params_free(dsig_hybrid_params *p);

/*
 * The name of a parameter set. p must not be NULL (nor for the size accessors below).
 * @return the preset's name, or "custom" for a set made by dsig_hybrid_params_new / _with_batch.
 */
DSIG_EXPORT const char *dsig_hybrid_params_name(const dsig_hybrid_params *p);

/*
 * The exact size of every signature under set `p` (docs/dsig-format.md).
 * @return the size in bytes (1559 for the default).
 */
DSIG_EXPORT size_t dsig_hybrid_params_sig_bytes(const dsig_hybrid_params *p);

/*
 * The exact size of a batch message under set `p` (the public part of one batch, sent to verifiers).
 * @return the size in bytes.
 */
DSIG_EXPORT size_t dsig_hybrid_params_batch_msg_bytes(const dsig_hybrid_params *p);

/*
 * The number of one-time keys in one batch of set `p` (2^log_batch).
 * @return the batch size.
 */
DSIG_EXPORT unsigned dsig_hybrid_params_batch_size(const dsig_hybrid_params *p);

/*
 * Where a signature's one-time key sits: its batch sequence number and leaf index. Checks the length,
 * version, parameter id and index range for `p` (NULL = default); verifies nothing.
 * @retval DSIG_OK       *batch_seq and *index are set.
 * @retval DSIG_E_VERIFY the signature is malformed for p (length, version, parameter id, index).
 * @retval DSIG_E_ARG    sig, batch_seq or index NULL, or p not a valid set.
 */
DSIG_EXPORT int dsig_hybrid_sig_locate(const dsig_hybrid_params *p, const uint8_t *sig, size_t sig_len,
                                       uint64_t *batch_seq, uint32_t *index);

/*
 * Stateless slow-path verification with nothing but the signer's DSig public key (a key bound to
 * "DSig", public or private) and its id: Merkle proof, Ed25519 on the batch root (under the root key
 * derived from the DSig key, for this signer id), one-time signature. No equivocation tracking.
 * @retval DSIG_OK                the signature is valid.
 * @retval DSIG_E_VERIFY          it is not, or it is malformed.
 * @retval DSIG_E_ALG_NOT_ALLOWED signer_key is not bound to "DSig".
 * @retval DSIG_E_KEY_MISMATCH    signer_key is not an OKP Ed25519 key.
 * @retval DSIG_E_ARG             sig NULL, msg NULL with len > 0, signer_key NULL, or p not a valid set.
 * @retval DSIG_E_POINT           the public key is not a valid point.
 */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_hybrid_verify_slow(const dsig_hybrid_params *p,
                                                         const dsig_key *signer_key, uint64_t signer_id,
                                                         const uint8_t *msg, size_t len,
                                                         const uint8_t *sig, size_t sig_len);

/* ---- channel -------------------------------------------------------------------------------- */

typedef struct dsig_hybrid_channel dsig_hybrid_channel;
typedef struct dsig_hybrid_verifier dsig_hybrid_verifier;
typedef struct dsig_hybrid_signer dsig_hybrid_signer;

/*
 * A new in-process channel with no subscribers. *out is NULL on failure.
 * @retval DSIG_OK      *out is the channel (free it with dsig_hybrid_channel_free).
 * @retval DSIG_E_ARG   out NULL.
 * @retval DSIG_E_NOMEM out of memory.
 */
DSIG_EXPORT int dsig_hybrid_channel_new(dsig_hybrid_channel **out);

/*
 * Free a channel. Every signer publishing to it must have been freed first. Subscribed verifiers
 * are simply forgotten (they are not freed). NULL is accepted.
 */
DSIG_EXPORT void dsig_hybrid_channel_free(dsig_hybrid_channel *ch);

/*
 * Deliver every batch message published from now on to `v` (dsig_hybrid_verifier_receive_batch).
 * @retval DSIG_OK      v is subscribed.
 * @retval DSIG_E_ARG   ch or v NULL, or v already subscribed.
 * @retval DSIG_E_NOMEM out of memory.
 */
DSIG_EXPORT int dsig_hybrid_channel_subscribe(dsig_hybrid_channel *ch, dsig_hybrid_verifier *v);

/*
 * Stop delivering to `v`; when it returns no delivery to `v` is in progress. Call it before freeing a
 * subscribed verifier.
 * @retval DSIG_OK    v is no longer subscribed.
 * @retval DSIG_E_ARG ch or v NULL, or v was not subscribed.
 */
DSIG_EXPORT int dsig_hybrid_channel_unsubscribe(dsig_hybrid_channel *ch, dsig_hybrid_verifier *v);

/*
 * Hand a batch message from `signer_id` to every subscriber (signers with a channel option do this
 * themselves). Delivery to every subscriber is attempted, whatever one of them answers.
 * @retval DSIG_OK    every subscriber queued it (also with no subscriber).
 * @retval DSIG_E_ARG ch or msg NULL.
 * @retval other      the first subscriber's error from dsig_hybrid_verifier_receive_batch (e.g.
 *                    DSIG_E_WOULD_BLOCK for a full queue, DSIG_E_UNKNOWN_SIGNER, DSIG_E_FORMAT).
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

/* Fill `o` with the signer defaults documented on each member above. */
DSIG_EXPORT void dsig_hybrid_signer_options_default(dsig_hybrid_signer_options *o);

/*
 * A signer for the DSig private key `key` (OKP Ed25519 bound to "DSig", with "d"; what the signer
 * needs is copied, the caller may free it) under parameter set `p` (NULL = default) and `opts` (NULL =
 * defaults). A fresh master seed is drawn from the OS CSPRNG for every signer, so one-time keys are
 * never reused across signer instances or restarts. Background threads start filling the pool
 * immediately. *out is NULL on failure.
 * @retval DSIG_OK                *out is the signer (free it with dsig_hybrid_signer_free).
 * @retval DSIG_E_ARG             out or key NULL, p not a valid set, or bad options (pool_target,
 *                                threads, groups out of range; the detail names it).
 * @retval DSIG_E_NO_PRIVATE      key is a public key.
 * @retval DSIG_E_ALG_NOT_ALLOWED key not bound to "DSig" (the detail says how to make one).
 * @retval DSIG_E_KEY_MISMATCH    key is not an OKP Ed25519 key.
 * @retval DSIG_E_RNG             the master seed cannot be drawn.
 * @retval DSIG_E_NOMEM           out of memory, or a background thread cannot start.
 */
DSIG_EXPORT int dsig_hybrid_signer_new(dsig_hybrid_signer **out, const dsig_key *key,
                                       const dsig_hybrid_params *p,
                                       const dsig_hybrid_signer_options *opts);

/*
 * Sign `msg` with one prepared one-time key, which is erased before returning; writes exactly
 * dsig_hybrid_signer_sig_bytes() bytes. Empty pool: waits for the background threads (or, with no
 * threads, generates a batch in the calling thread), or returns DSIG_E_WOULD_BLOCK in non-blocking
 * mode. Safe from any number of threads.
 * @retval DSIG_OK            sig holds the signature, *sig_len its length.
 * @retval DSIG_E_ARG         s, sig or sig_len NULL, or msg NULL with len > 0.
 * @retval DSIG_E_BUFFER      cap is too small (no key is consumed).
 * @retval DSIG_E_WOULD_BLOCK non-blocking mode and no key ready.
 * @retval DSIG_E_STATE       a child process with a copy of the signer (fork, _Fork, clone; also vfork
 *                            / CLONE_VM children with strict_pid): its keys are the parent's; or the
 *                            signer is being freed.
 * @retval other              the error that stopped background key generation (DSIG_E_NOMEM, ...).
 */
DSIG_EXPORT int dsig_hybrid_sign(dsig_hybrid_signer *s, const uint8_t *msg, size_t len, uint8_t *sig,
                                 size_t cap, size_t *sig_len);

/* dsig_hybrid_sign with a key of verifier group `group` (opts.groups): its signature takes the fast
 * path at the verifiers that receive that group's batch messages. dsig_hybrid_sign is group 0.
 * @retval DSIG_OK    sig holds the signature.
 * @retval DSIG_E_ARG group ≥ the signer's groups, or a NULL argument.
 * @retval other      the codes of dsig_hybrid_sign (DSIG_E_BUFFER, DSIG_E_WOULD_BLOCK, DSIG_E_STATE).
 */
DSIG_EXPORT int dsig_hybrid_sign_hint(dsig_hybrid_signer *s, unsigned group, const uint8_t *msg, size_t len,
                                      uint8_t *sig, size_t cap, size_t *sig_len);

/* Generate `batches` batches for every group in the calling thread and add them to the pools
 * (publishing each batch message first), whatever the pool level. For signers without threads and
 * for tests.
 * @retval DSIG_OK    the batches are in the pools.
 * @retval DSIG_E_ARG s NULL.
 * @retval other      a key-generation error (DSIG_E_NOMEM, DSIG_E_STATE in a forked copy).
 */
DSIG_EXPORT int dsig_hybrid_signer_refill(dsig_hybrid_signer *s, unsigned batches);

/* Wait until at least `n` keys are ready in every group's pool (n ≤ pool_target; with no threads,
 * generates in the calling thread). For warm-up before latency measurements.
 * @retval DSIG_OK      every pool holds n keys.
 * @retval DSIG_E_ARG   s NULL, or n > pool_target.
 * @retval DSIG_E_STATE a copy of the signer in a child process.
 * @retval other        the error that stopped background key generation.
 */
DSIG_EXPORT int dsig_hybrid_signer_wait_ready(dsig_hybrid_signer *s, unsigned n);

/*
 * Pull API: copy out (and dequeue) the oldest kept batch message of group 0 (options.outbox > 0).
 * @retval DSIG_OK            buf holds the message, *len its size.
 * @retval DSIG_E_WOULD_BLOCK none is waiting.
 * @retval DSIG_E_BUFFER      cap < the message size: it stays queued, *len tells the size.
 * @retval DSIG_E_ARG         s, buf or len NULL.
 */
DSIG_EXPORT int dsig_hybrid_signer_next_batch(dsig_hybrid_signer *s, uint8_t *buf, size_t cap,
                                              size_t *len);
/*
 * dsig_hybrid_signer_next_batch for verifier group `group`.
 * @retval DSIG_OK            buf holds the message, *len its size.
 * @retval DSIG_E_WOULD_BLOCK none is waiting.
 * @retval DSIG_E_BUFFER      cap < the message size (it stays queued; *len tells the size).
 * @retval DSIG_E_ARG         group ≥ the signer's groups, or a NULL argument.
 */
DSIG_EXPORT int dsig_hybrid_signer_next_group_batch(dsig_hybrid_signer *s, unsigned group, uint8_t *buf,
                                                    size_t cap, size_t *len);

/*
 * The size of every signature of signer `s` (s must not be NULL, nor for the accessors below).
 * @return the size in bytes.
 */
DSIG_EXPORT size_t dsig_hybrid_signer_sig_bytes(const dsig_hybrid_signer *s);

/*
 * The signer's parameter set (its own copy).
 * @return the set, valid as long as the signer.
 */
DSIG_EXPORT const dsig_hybrid_params *dsig_hybrid_signer_params(const dsig_hybrid_signer *s);

/* Copy the signer's public key to pk: 32 bytes, the DSig key's Ed25519 "x". */
DSIG_EXPORT void dsig_hybrid_signer_public_key(const dsig_hybrid_signer *s, uint8_t pk[32]);

/*
 * The id verifiers know the signer by (options.signer_id).
 * @return the id.
 */
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
    uint64_t erased;             /* used one-time keys wiped: with background threads a used key is
                                    wiped by them within about 20 ms of its signature (off the
                                    signing path), so signatures − erased are the keys waiting */
} dsig_hybrid_signer_stats;

/* How the signer's secrets (master seed, root key, prepared one-time keys) are kept: each is best
 * effort, so a kernel or limit that refuses one degrades to fewer protections, never to a failure. */
#define DSIG_HYBRID_PROTECT_NODUMP 1u     /* left out of core dumps (MADV_DONTDUMP) */
#define DSIG_HYBRID_PROTECT_WIPEONFORK 2u /* zero in a child with a copy of the memory (MADV_WIPEONFORK) */
#define DSIG_HYBRID_PROTECT_LOCKED 4u     /* locked in RAM, never swapped (mlock; RLIMIT_MEMLOCK) */

/* Copy the signer's counters into *st (each read atomically; not one snapshot under load). */
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

/* Fill `o` with the verifier defaults documented on each member above. */
DSIG_EXPORT void dsig_hybrid_verifier_options_default(dsig_hybrid_verifier_options *o);

/*
 * A verifier for signers using parameter set `p` (NULL = default); opts NULL = defaults. Its background
 * threads start at once. *out is NULL on failure.
 * @retval DSIG_OK      *out is the verifier (free it with dsig_hybrid_verifier_free).
 * @retval DSIG_E_ARG   out NULL, p not a valid set, or bad options (max_signers, queue_max, threads).
 * @retval DSIG_E_NOMEM out of memory, or a background thread cannot start.
 */
DSIG_EXPORT int dsig_hybrid_verifier_new(dsig_hybrid_verifier **out, const dsig_hybrid_params *p,
                                         const dsig_hybrid_verifier_options *opts);

/* Register a signer: its id and DSig public key (bound to "DSig", public or private; the public part
 * is used).
 * @retval DSIG_OK                the signer is registered.
 * @retval DSIG_E_ARG             a NULL argument, the id is taken, or the key is already registered under
 *                                another id (one key, one signer id).
 * @retval DSIG_E_TOO_LARGE       beyond max_signers.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is not bound to "DSig".
 * @retval DSIG_E_POINT           the public key is not a valid point.
 * @retval DSIG_E_NOMEM           out of memory.
 */
DSIG_EXPORT int dsig_hybrid_verifier_add_signer(dsig_hybrid_verifier *v, uint64_t signer_id,
                                                const dsig_key *signer_key);

/*
 * Hand over a batch message from `signer_id` (bytes are copied). It is queued, its root signature is
 * verified by a background thread, and only then is the batch cached; a bad batch is dropped (see
 * the stats). Each signer's cache keeps the cache_batches highest sequence numbers: when full, the
 * lowest is evicted and becomes the signer's sequence floor; a batch at or below the floor, or below
 * every cached one when full, is stale and never cached (replaying old batch messages cannot push
 * current ones out). With threads = 0 the verification happens here and its verdict is returned.
 * @retval DSIG_OK               queued; with threads = 0: cached, or the same batch again.
 * @retval DSIG_E_UNKNOWN_SIGNER no signer registered under signer_id.
 * @retval DSIG_E_FORMAT         a wrong length for the parameter set.
 * @retval DSIG_E_WOULD_BLOCK    the queue is full (queue_max).
 * @retval DSIG_E_ARG            v or msg NULL.
 * @retval DSIG_E_VERIFY         threads = 0: the root signature does not verify.
 * @retval DSIG_E_STALE          threads = 0: at or below the signer's sequence floor.
 * @retval DSIG_E_EQUIVOCATION   threads = 0: another validly signed batch under a cached seq (recorded).
 * @retval DSIG_E_NOMEM          out of memory.
 */
DSIG_EXPORT int dsig_hybrid_verifier_receive_batch(dsig_hybrid_verifier *v, uint64_t signer_id,
                                                   const uint8_t *msg, size_t len);

/* Wait until every batch message received so far has been verified and cached (or dropped); returns at
 * once with threads = 0. */
DSIG_EXPORT void dsig_hybrid_verifier_flush(dsig_hybrid_verifier *v);

/*
 * Verify `sig` on `msg` from `signer_id`: the fast path if the signature belongs to a cached batch
 * (same sequence number, proof and root signature), else the slow path — also when its sequence
 * number is cached with another root. Safe from any number of threads.
 * @retval DSIG_OK               the signature is valid.
 * @retval DSIG_E_VERIFY         it does not verify, or is malformed.
 * @retval DSIG_E_UNKNOWN_SIGNER no signer registered under signer_id.
 * @retval DSIG_E_EQUIVOCATION   valid, but it convicts its signer: another message was already verified
 *                               under the same one-time key, or it is under another root than the
 *                               cached batch of its sequence number (evidence recorded, callback called).
 * @retval DSIG_E_ARG            v or sig NULL, or msg NULL with len > 0.
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
 * may be repeated). The wait needs someone else to deliver the batch: a background thread, or another
 * thread calling receive_batch. Safe from any number of threads.
 * @retval DSIG_OK               the signature is valid.
 * @retval DSIG_E_VERIFY         it does not verify (at once for a malformed signature).
 * @retval DSIG_E_UNKNOWN_SIGNER no signer registered under signer_id.
 * @retval DSIG_E_EQUIVOCATION   valid, but it convicts its signer (as dsig_hybrid_verify).
 * @retval DSIG_E_WOULD_BLOCK    the batch did not arrive in time and DSIG_HYBRID_WAIT_SLOW is not set.
 * @retval DSIG_E_ARG            timeout_ms > DSIG_HYBRID_MAX_WAIT_MS, unknown flags, or a NULL argument.
 */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_hybrid_verify_wait(dsig_hybrid_verifier *v, uint64_t signer_id,
                                                         const uint8_t *msg, size_t len, const uint8_t *sig,
                                                         size_t sig_len, unsigned timeout_ms, unsigned flags);

/* 1 if dsig_hybrid_verify would take the fast path for this signature now: its batch is cached and
 * its proof and root signature are that batch's. 0 otherwise (including unknown signer, malformed
 * signature, and a sequence number cached with another root).
 * @retval 1 the fast path would be taken.
 * @retval 0 it would not.
 */
DSIG_WARN_UNUSED DSIG_EXPORT int dsig_hybrid_can_verify_fast(dsig_hybrid_verifier *v,
                                                             uint64_t signer_id, const uint8_t *sig,
                                                             size_t sig_len);

/*
 * The number of equivocation evidence records kept so far (at most evidence_max).
 * @return the count.
 */
DSIG_EXPORT size_t dsig_hybrid_verifier_evidence_count(dsig_hybrid_verifier *v);

/*
 * The i-th evidence record, oldest first; *out stays valid until the verifier is freed.
 * @retval DSIG_OK    *out points at the record.
 * @retval DSIG_E_ARG i is past the end.
 */
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

/* Copy the verifier's counters into *st (each read atomically; not one snapshot under load). */
DSIG_EXPORT void dsig_hybrid_verifier_stats_get(dsig_hybrid_verifier *v, dsig_hybrid_verifier_stats *st);

/* Stop and join the background threads and free everything. Unsubscribe `v` from channels first;
 * no call on `v` may be in progress. NULL is accepted. */
DSIG_EXPORT void dsig_hybrid_verifier_free(dsig_hybrid_verifier *v);

DSIG_END_DECLS

#endif
