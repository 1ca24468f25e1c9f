/*
 * src/core/provider.h — the provider contract: what an algorithm gives the core. Not installed.
 *
 * Every algorithm is one `struct dsig_alg` descriptor naming its key type (core/keytype.h) and a
 * `struct dsig_alg_ops` table. A family's descriptor file exports one NULL-terminated array of
 * descriptors; src/core/registry.c lists the arrays, one line each, and is the only list: key types
 * are found through the descriptors. docs/adding-an-algorithm.md walks through a new family.
 *
 * What the core (stream.c) guarantees before calling an operation, so that no provider checks it:
 *  - the arguments are not NULL (a message or signature of length 0 is a valid non-NULL pointer);
 *  - the key's type is one the algorithm takes (dsig_alg_takes_keytype), and it is bound to this
 *    algorithm or to none; signing (and verifying with a DSIG_ALG_SYMMETRIC algorithm) has a private
 *    key (key->has_private);
 *  - `opts` is NULL unless the caller asked for something other than the defaults AND the algorithm
 *    is flagged DSIG_ALG_OPTIONS; when it is not NULL, context_len <= DSIG_SIGN_CONTEXT_MAX and the
 *    context pointer is set. An algorithm without DSIG_ALG_OPTIONS always sees NULL;
 *  - a state is used by one thread at a time, fed only after a successful init, finished at most
 *    once, and always released with free_state (also after a failed update or final);
 *  - sign_final gets a buffer of at least alg->sig_max bytes.
 * Every operation that fails records a detail sentence (dsig_fail, core/error_internal.h) and returns
 * the DSIG_E_* code; the core passes both to the caller unchanged.
 */
#ifndef DSIG_CORE_PROVIDER_H
#define DSIG_CORE_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/dsig.h"

struct dsig_key;     /* core/keytype.h */
struct dsig_keytype; /* core/keytype.h */

/* Optional one-shot operations over a message held in memory (a whole-message construction such as
 * exact RFC 8032 EdDSA or the two-pass FIPS 205 SLH-DSA signature). Either member may be NULL: that
 * direction then runs through the streaming operations. */
struct dsig_alg_oneshot {
    /*
     * Sign `len` bytes at msg into sig (cap >= alg->sig_max is not guaranteed here: check it).
     * opts: NULL = defaults (see the file comment for when it is not NULL).
     * @retval DSIG_OK          *sig_len bytes written
     * @retval DSIG_E_BUFFER    cap is too small for the signature
     * @retval DSIG_E_NO_PRIVATE the key holds no private part the scheme can use
     * @retval DSIG_E_UNSUPPORTED an option the scheme does not implement (named in the detail)
     * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO, DSIG_E_RNG  resources, a back-end, randomness
     */
    int (*sign)(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg, size_t len,
                uint8_t *sig, size_t cap, size_t *sig_len, const dsig_sign_opts *opts);
    /*
     * Verify sig (sig_len bytes) over `len` bytes at msg. opts as for sign.
     * @retval DSIG_OK        the signature is valid
     * @retval DSIG_E_VERIFY  it is not (also: a malformed signature of any length)
     * @retval DSIG_E_KEY     the key cannot verify (no public part)
     * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO  resources, a back-end
     */
    int (*verify)(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg, size_t len,
                  const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts);
};

/* Optional signing of a digest computed elsewhere (dsig/prehashed.h): the signature the algorithm's
 * ordinary operation makes over any message with that digest. The core checks the arguments, the key
 * against the algorithm and (sign) its private part, and that `hash` is one of `hashes`' names. */
struct dsig_alg_prehashed {
    /* The hash names alg takes, ", "-separated (dsig_alg_digest_hashes): a function, as one table
     * serves a family whose algorithms differ in their hash (RS256, RS384, ...). */
    const char *(*hashes)(const dsig_alg *alg);
    /*
     * Sign digest (len bytes of `hash`). cap >= alg->sig_max is not guaranteed: check it.
     * @retval DSIG_OK          *sig_len bytes written
     * @retval DSIG_E_FORMAT    len is not the output length of `hash`
     * @retval DSIG_E_BUFFER    cap is too small
     * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO, DSIG_E_RNG  resources, a back-end, randomness
     */
    int (*sign)(const dsig_alg *alg, const struct dsig_key *key, const char *hash, const uint8_t *digest,
                size_t len, uint8_t *sig, size_t cap, size_t *sig_len);
    /*
     * @retval DSIG_OK        valid
     * @retval DSIG_E_VERIFY  not valid (also: malformed)
     * @retval DSIG_E_FORMAT  len is not the output length of `hash`
     * @retval DSIG_E_KEY     no public part
     * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO  resources, a back-end
     */
    int (*verify)(const dsig_alg *alg, const struct dsig_key *key, const char *hash, const uint8_t *digest,
                  size_t len, const uint8_t *sig, size_t sig_len);
};

/* Optional two-pass signing (algorithms flagged DSIG_ALG_TWO_PASS): the core calls sign_init, feeds
 * pass 1 through the ops' sign_update, calls next_pass, feeds pass 2 (the core checks that both passes
 * had the same byte count), then calls the ops' sign_final and free_state. */
struct dsig_alg_two_pass {
    /*
     * Start a two-pass signature; *state as for dsig_alg_ops.sign_init. opts: NULL = defaults.
     * @retval DSIG_OK          *state is ready for pass 1
     * @retval DSIG_E_NO_PRIVATE, DSIG_E_UNSUPPORTED, DSIG_E_NOMEM, DSIG_E_CRYPTO, DSIG_E_RNG
     *                          as for dsig_alg_ops.sign_init
     */
    int (*sign_init)(void **state, const dsig_alg *alg, const struct dsig_key *key,
                     const dsig_sign_opts *opts);
    /*
     * End pass 1: the state then takes the payload again.
     * @retval DSIG_OK       pass 2 may start
     * @retval DSIG_E_STATE  called out of order (the core never does)
     * @retval DSIG_E_CRYPTO a back-end failed
     */
    int (*next_pass)(void *state);
};

struct dsig_alg_ops {
    /* ---- required: streaming sign ---- */

    /*
     * Allocate a signing state for key into *state (left unset on failure: nothing to free).
     * opts: NULL = defaults (hedged/randomized as the scheme defines, empty context, no pre-hash).
     * A stateful scheme reserves its one-time index here (dsig_state_take_index, core/stateful.h).
     * @retval DSIG_OK            *state is ready for sign_update
     * @retval DSIG_E_NO_PRIVATE  the key holds no private part the scheme can use
     * @retval DSIG_E_KEY         the key is unusable for this algorithm (wrong size, damaged)
     * @retval DSIG_E_UNSUPPORTED an option value the scheme does not implement (named in the detail)
     * @retval DSIG_E_EXHAUSTED, DSIG_E_STATE  stateful keys: no index left, or no state file
     * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO, DSIG_E_RNG  resources, a back-end, randomness
     */
    int (*sign_init)(void **state, const dsig_alg *alg, const struct dsig_key *key,
                     const dsig_sign_opts *opts);
    /*
     * Absorb len > 0 bytes of the message (the hot path: no allocation, no branch on the data).
     * @retval DSIG_OK       absorbed
     * @retval DSIG_E_CRYPTO a back-end's digest failed (the core then refuses further updates)
     */
    int (*sign_update)(void *state, const uint8_t *data, size_t len);
    /*
     * Write the signature (cap >= alg->sig_max) and its length. Does not free the state; wipes the
     * secrets it holds.
     * @retval DSIG_OK       *sig_len bytes written
     * @retval DSIG_E_STATE  the state is not complete (two-pass: still in pass 1; payload changed)
     * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO, DSIG_E_RNG  resources, a back-end, randomness
     */
    int (*sign_final)(void *state, uint8_t *sig, size_t cap, size_t *sig_len);

    /* ---- required: streaming verify (the signature is known at init) ---- */

    /*
     * Allocate a verifying state for key and the signature sig (sig_len bytes; copy what final needs).
     * opts as for sign_init. A signature of the wrong length may be refused here or at final.
     * @retval DSIG_OK            *state is ready for verify_update
     * @retval DSIG_E_VERIFY      the signature is malformed (wrong length, bad encoding)
     * @retval DSIG_E_KEY         the key cannot verify (no public part)
     * @retval DSIG_E_UNSUPPORTED an option value the scheme does not implement
     * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO  resources, a back-end
     */
    int (*verify_init)(void **state, const dsig_alg *alg, const struct dsig_key *key,
                       const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts);
    /*
     * Absorb len > 0 bytes of the message.
     * @retval DSIG_OK       absorbed
     * @retval DSIG_E_CRYPTO a back-end's digest failed
     */
    int (*verify_update)(void *state, const uint8_t *data, size_t len);
    /*
     * Decide. Does not free the state. The detail may stay empty on DSIG_E_VERIFY: the core then
     * records "ALG signature does not verify".
     * @retval DSIG_OK        the signature is valid for the message fed
     * @retval DSIG_E_VERIFY  it is not
     * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO  resources, a back-end (not a verdict)
     */
    int (*verify_final)(void *state);

    /* ---- required: both directions ---- */

    /* Wipe and free a state of either direction, finished or not. Never called with NULL. */
    void (*free_state)(void *state);

    /* ---- optional (NULL = not offered) ---- */

    /* One-shot hooks: dsig_sign / dsig_sign_ex and dsig_verify / dsig_verify_ex use them instead of
     * the streaming operations, with or without options. */
    const struct dsig_alg_oneshot *oneshot;
    /* Two-pass signing; required when the algorithm is flagged DSIG_ALG_TWO_PASS, else NULL. */
    const struct dsig_alg_two_pass *two_pass;
    /* Signing a digest computed elsewhere (dsig/prehashed.h); NULL = refused. */
    const struct dsig_alg_prehashed *prehashed;
};

/* One registered algorithm. */
struct dsig_alg {
    const char *name;                     /* JOSE alg */
    const char *family;                   /* "HMAC", "RSASSA-PSS", ... */
    const char *description;
    const struct dsig_keytype *keytype;   /* the key type it takes */
    const char *baseline;                 /* bare hash for benchmarks: "SHA-256", "SHAKE256", ... */
    unsigned security_bits;
    unsigned flags;                       /* DSIG_ALG_* (include/dsig/registry.h) */
    size_t sig_max;
    unsigned min_key_bits;                /* refuse smaller keys (RSA 2048; MAC: hash output) */
    unsigned default_key_bits;            /* keygen default (RSA 2048; MAC key size) */
    const struct dsig_alg_ops *ops;
    const void *params;                   /* provider-private parameters */
    /* Optional, NULL-terminated: every key type the algorithm accepts, for a JOSE name that covers
     * several curves (GOST3410-2012-256: GOST-256-A..D). NULL = `keytype` only. `keytype` stays the
     * default (keygen without a param, dsig_alg_curve) and must be in the list. */
    const struct dsig_keytype *const *keytypes;
    /* 1: never chosen for an unbound key from its type alone (dsig_key_infer_alg): a key is used
     * with this algorithm only when bound to it or when the caller names it. DSig takes the keys
     * of Ed25519; an unbound Ed25519 key is an Ed25519 key. */
    int explicit_only;
};

/* 1 if alg takes keys of type t (its keytype, or one of its optional keytypes list), else 0
 * (key.c). */
int dsig_alg_takes_keytype(const dsig_alg *alg, const struct dsig_keytype *t);

#endif
