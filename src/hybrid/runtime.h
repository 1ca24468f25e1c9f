/*
 * src/hybrid/runtime.h — what the DSig runtime files (signer.c, verifier.c, channel.c, cache.c,
 * hybrid_alg.c) share. Not installed. The pure scheme is in scheme.h; this is the threaded layer.
 */
#ifndef DSIG_HYBRID_RUNTIME_H
#define DSIG_HYBRID_RUNTIME_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "dsig/hybrid.h"
#include "hybrid/scheme.h"

/* ---- DSig keys (hybrid_alg.c) ----------------------------------------------------------------- */

/*
 * The public side of a DSig key: an OKP Ed25519 key bound to "DSig" (public or private). identity_pk
 * is its Ed25519 public key ("x"), root_pk the root public key derived from it (DSIG_HB_ROOT_LABEL),
 * under which its batch roots verify. DSIG_E_ALG_NOT_ALLOWED for an unbound key or one bound to
 * another algorithm (the detail says how to make a DSig key), DSIG_E_KEY_MISMATCH for another type.
 */
int dsig_hb_key_public(const dsig_key *key, uint8_t identity_pk[DSIG_HB_ED25519_PK],
                       uint8_t root_pk[DSIG_HB_ED25519_PK]);

/* The root signing key of a private DSig key (same checks, and DSIG_E_NO_PRIVATE). The caller wipes it. */
int dsig_hb_key_root_secret(const dsig_key *key, dsig_ed25519_dkey *root_sk);

/* The registry algorithm "DSig": sign a 32-byte digest with a fresh batch of one key made under
 * `master` (in production a fresh random seed per signature), its root signed for the file domain. */
int dsig_hb_alg_sign_digest(const uint8_t master[DSIG_HB_SEED_BYTES], const dsig_ed25519_dkey *root_sk,
                            const uint8_t digest[32], uint8_t *sig, size_t cap, size_t *sig_len);

/* The parameter set behind a public pointer (NULL = the default), validated. */
int dsig_hb_params_resolve(const dsig_hybrid_params *p, const dsig_hb_params **out);

/* ---- per-signer batch cache (cache.c) --------------------------------------------------------- */

/* The first message verified under one one-time key: kept to convict a second, different one. */
typedef struct dsig_hb_leafrec {
    size_t msg_len, sig_len;
    uint8_t *msg, *sig;          /* point into the same allocation, after the struct */
    int in_arena;                /* lies in its entry's record arena (freed with it), else malloc'd */
    _Atomic int convicted;       /* 1 once evidence against this key was recorded: a replayed second
                                    signature must not add a record each time (unbounded
                                    memory); one conviction per key is enough */
} dsig_hb_leafrec;

/* One cached, verified batch. */
typedef struct dsig_hb_centry {
    uint64_t seq;
    int32_t next;                /* next entry in the same bucket, -1 = end */
    int used;
    dsig_hb_batch batch;         /* verified (keys == NULL) */
    int batch_convicted;         /* batch-equivocation evidence already recorded for this entry
                                    (exclusive lock; replays of the rival batch add no record) */
    _Atomic(dsig_hb_leafrec *) *leaves; /* per leaf: first verified message, NULL = none yet */
    /* Record arena: one allocation per entry, made (pages touched) when a batch is inserted and kept
     * for the entry's next batch, carved into `nleaves` slots of `rec_slot` bytes by an atomic
     * counter, so the fast path neither calls malloc nor faults in fresh pages. (Made by the first
     * recorder instead when memory was short at insert.) A
     * record with a message over DSIG_HB_ARENA_MSG bytes (or an arena used up by lost races) is
     * malloc'd on its own. */
    _Atomic(uint8_t *) arena;
    _Atomic uint32_t arena_next;
    uint32_t nleaves;
    size_t rec_slot, rec_sig;
} dsig_hb_centry;

#define DSIG_HB_ARENA_MSG 64u    /* messages up to this size are recorded in the entry's arena */

/*
 * The verified batches of one signer: `cap` entries indexed by a chained hash table on the batch
 * sequence number; when full the lowest sequence number is evicted and becomes the floor (cache.c).
 * Not locked: the verifier holds its per-signer rwlock — shared for find/record, exclusive for insert.
 */
typedef struct dsig_hb_cache {
    uint32_t cap;                /* entries (≥ 32) */
    uint32_t batch;              /* leaves per batch */
    uint32_t mask;               /* buckets − 1 (a power of two ≥ 2·cap) */
    uint32_t count;
    int has_floor;               /* a batch was evicted: seqs ≤ floor are stale */
    uint64_t floor;              /* highest evicted sequence number */
    int32_t *buckets;
    dsig_hb_centry *slots;
    _Atomic(dsig_hb_leafrec *) *leafmem; /* cap · batch record pointers */
} dsig_hb_cache;

/* sig_bytes: the parameter set's signature size (the arena slot holds one signature of that size). */
int dsig_hb_cache_init(dsig_hb_cache *c, uint32_t cap, uint32_t batch, size_t sig_bytes);
void dsig_hb_cache_destroy(dsig_hb_cache *c);
/* The entry for batch `seq`, or NULL. */
dsig_hb_centry *dsig_hb_cache_find(const dsig_hb_cache *c, uint64_t seq);
/* 1 if a batch with this (uncached) seq may enter: above the floor and, when full, above the lowest
 * cached seq; 0 if it is stale. */
int dsig_hb_cache_admits(const dsig_hb_cache *c, uint64_t seq);
/* Insert a verified batch (ownership of its contents moves into the cache; *b is zeroed). The seq
 * must not be cached and must be admitted. *evicted = 1 if the lowest-numbered entry was dropped to
 * make room (the floor rises to its seq). */
void dsig_hb_cache_insert(dsig_hb_cache *c, dsig_hb_batch *b, int *evicted);

/* Hint: prefetch the arena slot the entry's next record will likely take (see cache.c). */
void dsig_hb_cache_prefetch_record(const dsig_hb_centry *e);

#define DSIG_HB_RECORD_FIRST 0   /* first message under this key: recorded */
#define DSIG_HB_RECORD_SAME 1    /* the same message again */
#define DSIG_HB_RECORD_OTHER 2   /* a different message: *first is the earlier record */
/* Record that (msg, sig) verified under leaf `index` of entry e (shared lock is enough: lock-free
 * publication). DSIG_E_NOMEM, or one of DSIG_HB_RECORD_*. */
int dsig_hb_cache_record(dsig_hb_centry *e, uint32_t index, const uint8_t *msg, size_t len,
                         const uint8_t *sig, size_t sig_len, const dsig_hb_leafrec **first);

#endif
