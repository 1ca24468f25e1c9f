/*
 * src/hybrid/scheme.h — the DSig hybrid signature scheme, single-threaded and pure (no globals but
 * constant, once-initialised hash keys): one-time key generation for a whole batch, the Merkle tree and
 * the Ed25519 root signature, signing with a prepared one-time key, parsing, and fast / slow
 * verification. The runtime (pools, threads, caches, channels) is built on this API.
 *
 * Byte encodings: docs/dsig-format.md. Errors: negative DSIG_E_* codes through dsig_fail() with a
 * detail naming the field; verification failures are DSIG_E_VERIFY (malformed input included).
 *
 * Batch roots are signed with the signer's ROOT key: an Ed25519 key derived from its identity key
 * (src/classic/ed25519_derive.h, label DSIG_HB_ROOT_LABEL); the root message binds the domain, the
 * signer id and the root public key (dsig_hb_who). The runtime derives both (runtime.h).
 */
#ifndef DSIG_HYBRID_SCHEME_H
#define DSIG_HYBRID_SCHEME_H

#include <stddef.h>
#include <stdint.h>

#include "classic/ed25519_derive.h"
#include "hybrid/params.h"

/* The label under which an identity key's root key is derived (never used for anything else). */
#define DSIG_HB_ROOT_LABEL "DSig batch root key"

/* What a root signature is for (root message byte 17, docs/dsig-format.md §6). */
#define DSIG_HB_DOMAIN_RUNTIME 1u /* a batch of a long-lived signer (dsig_hybrid_signer) */
#define DSIG_HB_DOMAIN_FILE 2u    /* the one-key batch of one registry "DSig" signature */

/* Whose batch this is: everything public that a root message binds besides the batch itself. */
typedef struct dsig_hb_who {
    uint8_t domain;                      /* DSIG_HB_DOMAIN_* */
    uint64_t signer_id;                  /* runtime: the id verifiers know the signer by; file: 0 */
    uint8_t root_pk[DSIG_HB_ED25519_PK]; /* the derived root public key the root is signed under */
} dsig_hb_who;

/* ---- one-time keys (signer side) ------------------------------------------------------------ */

/*
 * A prepared one-time key: everything needed to emit a signature by copying. `mem` (64-byte aligned)
 * holds the signature template (header and tail: every signature byte except the chain values) and the
 * precomputed secret table (all chain levels; HORS: secrets and public slots). The memory of all keys of
 * a batch is one region of secret memory (`slab`, reference-counted, released when its last key is
 * erased; src/core/secmem.c: out of core dumps and swap, zero in a fork child where the kernel allows).
 * Keys may be moved between containers (and threads) by copying the struct and zeroing the source;
 * erase exactly once with dsig_hb_key_erase() (wipes; frees the slab with its last key). A key must
 * sign at most once — the caller enforces it (erase right after signing).
 */
typedef struct dsig_hb_key {
    const dsig_hb_params *params;
    uint64_t batch_seq;
    uint32_t index;                    /* leaf index in the batch */
    uint8_t leaf[DSIG_HB_HASH_BYTES];  /* one-time public-key digest (public) */
    uint8_t *mem;                      /* template ‖ table; NULL when erased / moved */
    size_t mem_len;
    void *slab;                        /* the batch allocation `mem` lies in (internal) */
} dsig_hb_key;

/* Wipe a key's secret material and drop its reference to the batch allocation (safe on an erased or
 * zeroed key; thread-safe against erasing other keys of the same batch). */
void dsig_hb_key_erase(dsig_hb_key *key);

/*
 * Prefetch every cache line of a key's template and table: call it for the NEXT key right after
 * signing, so that the key — written by a key-generation thread on another core — is in this
 * core's L2 when it signs (reads ~70 lines chosen by the message).
 * Issues only prefetch hints; no effect on an erased key.
 */
void dsig_hb_key_prefetch(const dsig_hb_key *key);

/*
 * The per-key seed of key `index` of batch `batch_seq` under a 32-byte master seed (docs §3.1).
 * Exposed for tests and for runtimes that generate keys one at a time.
 */
void dsig_hb_key_seed(const uint8_t master_seed[DSIG_HB_SEED_BYTES], uint64_t batch_seq, uint32_t index,
                      uint8_t seed_out[DSIG_HB_SEED_BYTES]);

/* ---- batches --------------------------------------------------------------------------------- */

/*
 * A batch: 2^log_batch one-time public keys (leaves), the Merkle tree over them and the Ed25519
 * signature of the root message. On the signer side `keys` holds the prepared one-time keys (index i
 * = leaf i); on the verifier side (dsig_hb_batch_verify) keys == NULL.
 * Tree layout, level-major: nodes[0 .. batch−1] are the leaves, then each level above, the root last
 * (2·batch − 1 nodes); level ℓ starts at node 2·batch − 2·(batch >> ℓ).
 */
typedef struct dsig_hb_batch {
    const dsig_hb_params *params;
    uint64_t batch_seq;
    dsig_hb_who who;                           /* domain, signer id, root public key */
    uint8_t root[DSIG_HB_HASH_BYTES];
    uint8_t root_sig[DSIG_HB_ED25519_SIG];
    uint8_t (*nodes)[DSIG_HB_HASH_BYTES];      /* 2·batch − 1 nodes (dsig_malloc) */
    dsig_hb_key *keys;                         /* batch keys (dsig_calloc) or NULL */
    unsigned secmem_flags;                     /* DSIG_SECMEM_* protections of the keys' memory */
} dsig_hb_batch;

/* Leaf i of a batch (i < batch). */
static inline const uint8_t *dsig_hb_batch_leaf(const dsig_hb_batch *b, uint32_t i)
{
    return b->nodes[i];
}

/*
 * Generate batch `batch_seq`: per-key seeds from master_seed (docs §3.1), every one-time key with all
 * levels precomputed (multi-lane hashing), the leaves, the tree and the Ed25519 root signature with
 * `root_sk` over the root message for `who` (who->root_pk must be root_sk's public key:
 * DSIG_E_KEY_MISMATCH otherwise). `out` is overwritten (not freed first). Caller frees with
 * dsig_hb_batch_free(). The caller must never reuse a (master_seed, batch_seq) pair: it would reuse
 * one-time keys.
 */
int dsig_hb_keygen_batch(const dsig_hb_params *p, const uint8_t master_seed[DSIG_HB_SEED_BYTES],
                         uint64_t batch_seq, const dsig_ed25519_dkey *root_sk, const dsig_hb_who *who,
                         dsig_hb_batch *out);

/* Erase every remaining key (dsig_hb_key_erase), free the tree and key array, zero the struct. */
void dsig_hb_batch_free(dsig_hb_batch *b);

/* The Ed25519-signed root message (DSIG_HB_ROOT_MSG_BYTES bytes, docs §6). */
void dsig_hb_root_message(const dsig_hb_params *p, const dsig_hb_who *who, uint64_t batch_seq,
                          const uint8_t root[DSIG_HB_HASH_BYTES], uint8_t out[DSIG_HB_ROOT_MSG_BYTES]);

/* Batch message for the background plane (p->batch_msg_bytes, docs §7): version, parameter id, batch
 * sequence number, the leaves and the root signature. DSIG_E_BUFFER if cap is too small. */
int dsig_hb_batch_message(const dsig_hb_batch *b, uint8_t *out, size_t cap, size_t *out_len);

/* Parse a batch message, rebuild the tree and verify the root signature for `who` (root message with
 * its domain, signer id and root public key). DSIG_OK and a filled `out` (keys == NULL; free with
 * dsig_hb_batch_free), or DSIG_E_VERIFY with a detail (wrong length, version, parameter id, or bad
 * root signature); `out` is then left zeroed. */
int dsig_hb_batch_verify(const dsig_hb_params *p, const uint8_t *msg, size_t len, const dsig_hb_who *who,
                         dsig_hb_batch *out);

/* ---- signing --------------------------------------------------------------------------------- */

/* Sign `msg` with a prepared key: one message digest and copies. Writes exactly p->sig_bytes.
 * The key is not modified; the caller erases it afterwards (one-time use). */
int dsig_hb_sign(const dsig_hb_key *key, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                 size_t *sig_len);

/* ---- parsing and verification ----------------------------------------------------------------- */

/* A parsed signature: pointers into the caller's signature buffer (docs §4). */
typedef struct dsig_hb_sig_view {
    uint32_t param_id;
    uint64_t batch_seq;
    uint32_t index;
    const uint8_t *pk_seed;   /* 16 */
    const uint8_t *nonce;     /* 16 */
    const uint8_t *values;    /* chains · n */
    const uint8_t *proof;     /* log_batch · 32, leaf level first */
    const uint8_t *root_sig;  /* 64 */
} dsig_hb_sig_view;

/* Bounds-checked parse: exact length for p, version, parameter id, index < batch.
 * DSIG_OK, or DSIG_E_VERIFY with a detail naming the field. */
int dsig_hb_parse(const dsig_hb_params *p, const uint8_t *sig, size_t len, dsig_hb_sig_view *out);

/* Just the batch sequence number and leaf index (for cache look-ups before a full verify); same
 * checks as dsig_hb_parse. */
int dsig_hb_sig_locate(const dsig_hb_params *p, const uint8_t *sig, size_t len, uint64_t *batch_seq,
                       uint32_t *index);

/* The one-time public-key digest (leaf) the signature implies for msg: message digest, chain
 * completion (lock-step, multi-lane), leaf hash. Any signature yields some leaf; the caller compares. */
int dsig_hb_compute_leaf(const dsig_hb_params *p, const dsig_hb_sig_view *v, const uint8_t *msg,
                         size_t len, uint8_t leaf[DSIG_HB_HASH_BYTES]);

/*
 * FAST path: `batch` is a cached, already-verified batch (dsig_hb_batch_verify) of the same signer.
 * Checks the signature's batch sequence number, that its proof nodes and root signature are the bytes
 * of the cached batch (so a signature the fast path accepts is one the slow path accepts), and that
 * the one-time signature completes to the cached leaf. No Merkle hashing, no Ed25519.
 * DSIG_OK or DSIG_E_VERIFY.
 */
int dsig_hb_verify_fast(const dsig_hb_params *p, const dsig_hb_batch *batch, const uint8_t *sig,
                        size_t sig_len, const uint8_t *msg, size_t len);

/* 1 if the signature (parsed) names `batch`'s sequence number and carries exactly its proof nodes and
 * root signature — the signature belongs to that verified batch; 0 otherwise. Memory comparisons only. */
int dsig_hb_sig_in_batch(const dsig_hb_params *p, const dsig_hb_batch *batch, const dsig_hb_sig_view *v);

/* The rest of the FAST path for a signature that dsig_hb_sig_in_batch placed in `batch`: the one-time
 * signature against the cached leaf. DSIG_OK or DSIG_E_VERIFY. */
int dsig_hb_verify_in_batch(const dsig_hb_params *p, const dsig_hb_batch *batch, const dsig_hb_sig_view *v,
                            const uint8_t *msg, size_t len);

/* Fast path against a bare expected leaf (no proof / root-signature comparison): for callers that
 * keep only leaves. DSIG_OK or DSIG_E_VERIFY. */
int dsig_hb_verify_leaf(const dsig_hb_params *p, const uint8_t *sig, size_t sig_len, const uint8_t *msg,
                        size_t len, const uint8_t expected_leaf[DSIG_HB_HASH_BYTES]);

/* SLOW path: leaf from the one-time signature, root from the proof, Ed25519 (libsodium, strict) on the
 * root message for `who`. DSIG_OK or DSIG_E_VERIFY. */
int dsig_hb_verify_slow(const dsig_hb_params *p, const uint8_t *sig, size_t sig_len, const uint8_t *msg,
                        size_t len, const dsig_hb_who *who);

/* Merkle root from a leaf, its index and a proof (log_batch nodes, leaf level first). */
void dsig_hb_merkle_root_from_proof(const dsig_hb_params *p, const uint8_t leaf[DSIG_HB_HASH_BYTES],
                                    uint32_t index, const uint8_t *proof,
                                    uint8_t root[DSIG_HB_HASH_BYTES]);

#endif
