/*
 * dsig/stream.h — streaming sign and verify, and their one-shot forms.
 *
 * The payload is fed through *_update in chunks of any size (zero included); the result does not
 * depend on the chunking. Memory is bounded by the algorithm, never by the payload: nothing is
 * buffered. Lengths are 64-bit throughout (size_t chunks, uint64_t totals).
 *
 * Context lifetime: *_init allocates; *_abort always wipes and frees the context; *_final does too, on
 * every path, success or failure — except the two outcomes of dsig_sign_final that keep the context
 * (a size query with a NULL buffer, and DSIG_E_BUFFER), documented there. After a context is freed,
 * the pointer must not be used again.
 *
 * The signature is given to dsig_verify_init, not to the final call: several schemes (EdDSA, Falcon,
 * SLH-DSA) hash part of the signature before the message, and reading it first is what lets them verify
 * in one pass. JWS verification always has the signature before the payload.
 *
 * Streaming EdDSA signatures are randomized (see docs/eddsa-one-pass.md); dsig_sign() on an in-memory
 * message produces the exact deterministic RFC 8032 signature.
 */
#ifndef DSIG_STREAM_H
#define DSIG_STREAM_H

#include "common.h"
#include "key.h"
#include "registry.h"

DSIG_BEGIN_DECLS

typedef struct dsig_sign_ctx dsig_sign_ctx;
typedef struct dsig_verify_ctx dsig_verify_ctx;

/*
 * Start signing a payload with `alg` and a private `key`, with the default options (the same as
 * dsig_sign_init_ex with opts NULL). A stateful key takes its one-time index here, durably reserved
 * before any signature can be released. *ctx is NULL on failure.
 * @retval DSIG_OK                *ctx is a new context: feed it with dsig_sign_update.
 * @retval DSIG_E_ARG             ctx, alg or key NULL.
 * @retval DSIG_E_NO_PRIVATE      key has no private part.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is bound to another algorithm (or unbound, for DSig).
 * @retval DSIG_E_KEY_MISMATCH    the key's type or curve does not fit alg.
 * @retval DSIG_E_KEY_WEAK        the key is under alg's minimum size.
 * @retval DSIG_E_STATE           a stateful key without an open state file, or its file refused.
 * @retval DSIG_E_EXHAUSTED       a stateful key with no one-time keys left.
 * @retval DSIG_E_IO              a stateful key's reservation could not be written durably.
 * @retval DSIG_E_NOMEM           out of memory.
 * @retval DSIG_E_CRYPTO          a back-end failed to start or refused the key.
 */
DSIG_EXPORT int dsig_sign_init(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key);

/*
 * Feed the next `len` bytes of the payload (any chunking gives the same signature; len 0 is accepted
 * and changes nothing; data may be NULL only when len is 0). A failed update poisons the context: only
 * dsig_sign_final (which then fails with DSIG_E_STATE) or dsig_sign_abort remain.
 * @retval DSIG_OK      the bytes are absorbed.
 * @retval DSIG_E_ARG   ctx NULL, or data NULL with len > 0.
 * @retval DSIG_E_STATE after a failed update, or after dsig_sign_final made the signature.
 * @retval other        a provider error (DSIG_E_CRYPTO, DSIG_E_TOO_LARGE for a payload over the
 *                      algorithm's bound); the context is then poisoned.
 */
DSIG_EXPORT int dsig_sign_update(dsig_sign_ctx *ctx, const void *data, size_t len);
/*
 * Finish signing: write the signature (at most `cap` bytes) to `sig` and its length to *sig_len.
 * A buffer of dsig_alg_sig_max(alg) bytes always suffices. The payload of a stream (a pipe) cannot
 * be fed again, so a signature is never lost to a small buffer:
 *   - sig == NULL: size query. The signature is made and kept in the context, *sig_len receives
 *     its exact length, DSIG_OK is returned and ctx stays allocated (no update is accepted any
 *     more): call dsig_sign_final again with a buffer of *sig_len bytes, or dsig_sign_abort.
 *   - cap < the signature's length: DSIG_E_BUFFER, *sig_len receives the length needed, and ctx
 *     stays allocated, keeping the signature, exactly as after a size query.
 * @retval DSIG_OK         the signature is written and ctx freed; or the size query above.
 * @retval DSIG_E_BUFFER   cap is smaller than the signature (above: ctx stays allocated).
 * @retval DSIG_E_ARG      ctx or sig_len NULL (a non-NULL ctx is freed).
 * @retval DSIG_E_STATE    after a failed update, a two-pass context still in pass 1, or passes of
 *                         different lengths (ctx freed).
 * @retval DSIG_E_NOMEM    out of memory for the kept signature (ctx freed).
 * @retval DSIG_E_CRYPTO   the back-end failed (ctx freed); also DSIG_E_EXHAUSTED and the other
 *                         provider errors.
 */
DSIG_EXPORT int dsig_sign_final(dsig_sign_ctx *ctx, uint8_t *sig, size_t cap, size_t *sig_len);
/* Wipe and free a signing context without making a signature (or after a size query or DSIG_E_BUFFER,
 * dropping the signature it kept). A stateful key's index taken by the context is not given back:
 * it is never reused. NULL is accepted. */
DSIG_EXPORT void dsig_sign_abort(dsig_sign_ctx *ctx);

/*
 * The number of payload bytes fed to the context so far (in two-pass signing, in the current pass).
 * @return the byte count, 0 for a NULL ctx.
 */
DSIG_EXPORT uint64_t dsig_sign_total(const dsig_sign_ctx *ctx);

/*
 * Start verifying `sig` (sig_len bytes; copied, the caller's buffer may go at once) over a payload fed
 * next, with the default options (as dsig_verify_init_ex with opts NULL). The signature comes first so
 * that schemes hashing part of it before the message verify in one pass. A signature the algorithm
 * can tell is malformed already here (a wrong length, an out-of-range scalar) fails here.
 * *ctx is NULL on failure.
 * @retval DSIG_OK                *ctx is a new context: feed it with dsig_verify_update.
 * @retval DSIG_E_VERIFY          sig is malformed for alg: it cannot verify.
 * @retval DSIG_E_ARG             ctx, alg or key NULL, or sig NULL with sig_len > 0.
 * @retval DSIG_E_NO_PRIVATE      a MAC algorithm with a key lacking its secret.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is bound to another algorithm (or unbound, for DSig).
 * @retval DSIG_E_KEY_MISMATCH    the key's type or curve does not fit alg.
 * @retval DSIG_E_KEY_WEAK        the key is under alg's minimum size.
 * @retval DSIG_E_NOMEM           out of memory.
 * @retval DSIG_E_CRYPTO          a back-end failed to start or refused the key.
 */
DSIG_EXPORT int dsig_verify_init(dsig_verify_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                 const uint8_t *sig, size_t sig_len);

/*
 * Feed the next `len` bytes of the payload (any chunking; len 0 accepted; data NULL only with len 0).
 * A failed update poisons the context: dsig_verify_final then gives DSIG_E_STATE.
 * @retval DSIG_OK      the bytes are absorbed.
 * @retval DSIG_E_ARG   ctx NULL, or data NULL with len > 0.
 * @retval DSIG_E_STATE after a failed update.
 * @retval other        a provider error (DSIG_E_CRYPTO, DSIG_E_TOO_LARGE); the context is poisoned.
 */
DSIG_EXPORT int dsig_verify_update(dsig_verify_ctx *ctx, const void *data, size_t len);

/*
 * Finish: decide whether the signature given to dsig_verify_init is valid for the payload fed. Frees
 * ctx on every path. The three outcomes of error.h must never be confused: only DSIG_OK means valid.
 * @retval DSIG_OK       the signature is valid.
 * @retval DSIG_E_VERIFY the signature does not verify (the detail says why when the scheme knows).
 * @retval DSIG_E_ARG    ctx NULL.
 * @retval DSIG_E_STATE  an update had failed: nothing was decided.
 * @retval other         an error inside the back-end (DSIG_E_CRYPTO, DSIG_E_NOMEM): nothing decided.
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_verify_final(dsig_verify_ctx *ctx);
/* Wipe and free a verification context without a verdict. NULL is accepted. */
DSIG_EXPORT void dsig_verify_abort(dsig_verify_ctx *ctx);

/*
 * Sign an in-memory message in one call, with the default options. dsig_sign is deterministic where
 * the algorithm defines a deterministic signature (RFC 8032 EdDSA, PKCS#1 v1.5, MACs; flag
 * DSIG_ALG_DETERMINISTIC_ONESHOT); a buffer of dsig_alg_sig_max(alg) bytes always suffices. Unlike
 * dsig_sign_final, a too small buffer keeps nothing (the message is still the caller's).
 * @retval DSIG_OK                the signature is in sig, its length in *sig_len.
 * @retval DSIG_E_ARG             alg, key, sig or sig_len NULL, or msg NULL with msg_len > 0.
 * @retval DSIG_E_BUFFER          cap is smaller than the signature (*sig_len holds the size needed).
 * @retval DSIG_E_NO_PRIVATE      key has no private part.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is bound to another algorithm (or unbound, for DSig).
 * @retval DSIG_E_KEY_MISMATCH    the key's type or curve does not fit alg.
 * @retval DSIG_E_KEY_WEAK        the key is under alg's minimum size.
 * @retval DSIG_E_STATE           a stateful key without an open state file, or its file refused.
 * @retval DSIG_E_EXHAUSTED       a stateful key with no one-time keys left.
 * @retval DSIG_E_NOMEM           out of memory.
 * @retval DSIG_E_CRYPTO          the back-end failed.
 */
DSIG_EXPORT int dsig_sign(const dsig_alg *alg, const dsig_key *key, const void *msg, size_t msg_len,
                          uint8_t *sig, size_t cap, size_t *sig_len);
/*
 * Verify a signature over an in-memory message in one call, with the default options.
 * @retval DSIG_OK                the signature is valid.
 * @retval DSIG_E_VERIFY          it does not verify, or is malformed.
 * @retval DSIG_E_ARG             alg or key NULL, or msg / sig NULL with a length > 0.
 * @retval DSIG_E_NO_PRIVATE      a MAC algorithm with a key lacking its secret.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is bound to another algorithm (or unbound, for DSig).
 * @retval DSIG_E_KEY_MISMATCH    the key's type or curve does not fit alg.
 * @retval DSIG_E_KEY_WEAK        the key is under alg's minimum size.
 * @retval DSIG_E_NOMEM           out of memory.
 * @retval DSIG_E_CRYPTO          the back-end failed: nothing was decided.
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_verify(const dsig_alg *alg, const dsig_key *key, const void *msg,
                                             size_t msg_len, const uint8_t *sig, size_t sig_len);

/*
 * Per-signature options, for the schemes that define them (flag DSIG_ALG_OPTIONS): ML-DSA (FIPS 204)
 * and SLH-DSA (FIPS 205) take a context string, hedged or deterministic signing, and a pre-hash
 * variant (HashML-DSA, HashSLH-DSA). Zero-initialise, then set what you need; an all-zero struct (or
 * NULL) means the defaults: empty context, hedged, pure. Other algorithms refuse non-default options
 * with DSIG_E_UNSUPPORTED rather than silently ignoring them.
 *
 * The verifier must use the same context and pre-hash as the signer. JWS uses the defaults only (the
 * JOSE registrations fix an empty context and pure signing); the options are for raw signatures.
 */
typedef struct dsig_sign_opts {
    const uint8_t *context;   /* FIPS 204/205 ctx, at most 255 bytes; NULL with context_len 0 = empty */
    size_t context_len;
    int deterministic;        /* signing only: 1 = deterministic variant (rnd = 0^32), 0 = hedged */
    const char *prehash;      /* NULL = pure; else the pre-hash function for HashML-DSA / HashSLH-DSA:
                                 "SHA-256", "SHA-384", "SHA-512", "SHA-224", "SHA-512/224",
                                 "SHA-512/256", "SHA3-224", "SHA3-256", "SHA3-384", "SHA3-512",
                                 "SHAKE128", "SHAKE256" (as the scheme allows) */
} dsig_sign_opts;

#define DSIG_SIGN_CONTEXT_MAX 255

/*
 * @spec FIPS 204 §5.2 / §5.4, FIPS 205 §10.2 / §10.2.2 (context string, hedged or deterministic,
 * HashML-DSA / HashSLH-DSA): as dsig_sign_init, with per-signature options (NULL or all zero = the
 * defaults, exactly dsig_sign_init).
 * @retval DSIG_OK            *ctx is a new context.
 * @retval DSIG_E_ARG         as dsig_sign_init; also context_len > 0 with context NULL, or
 *                            context_len over DSIG_SIGN_CONTEXT_MAX.
 * @retval DSIG_E_UNSUPPORTED non-default options for an algorithm without DSIG_ALG_OPTIONS, or a
 *                            pre-hash name the scheme does not take.
 * @retval other              the codes of dsig_sign_init.
 */
DSIG_EXPORT int dsig_sign_init_ex(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                  const dsig_sign_opts *opts);
/*
 * As dsig_verify_init, with the options the signer used (NULL or all zero = the defaults; the
 * `deterministic` member is ignored: it changes nothing a verifier checks).
 * @retval DSIG_OK            *ctx is a new context.
 * @retval DSIG_E_ARG         as dsig_verify_init; also a context_len without context or over
 *                            DSIG_SIGN_CONTEXT_MAX.
 * @retval DSIG_E_UNSUPPORTED non-default options for an algorithm without DSIG_ALG_OPTIONS, or an
 *                            unknown pre-hash name.
 * @retval other              the codes of dsig_verify_init (DSIG_E_VERIFY for a malformed signature).
 */
DSIG_EXPORT int dsig_verify_init_ex(dsig_verify_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                    const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts);
/*
 * dsig_sign with per-signature options (NULL = defaults).
 * @retval DSIG_OK            the signature is in sig.
 * @retval DSIG_E_UNSUPPORTED non-default options for an algorithm without DSIG_ALG_OPTIONS.
 * @retval DSIG_E_ARG         as dsig_sign, and the option checks of dsig_sign_init_ex.
 * @retval other              the codes of dsig_sign (DSIG_E_BUFFER, DSIG_E_NO_PRIVATE, ...).
 */
DSIG_EXPORT int dsig_sign_ex(const dsig_alg *alg, const dsig_key *key, const void *msg, size_t msg_len,
                             uint8_t *sig, size_t cap, size_t *sig_len, const dsig_sign_opts *opts);
/*
 * dsig_verify with the options the signer used (NULL = defaults).
 * @retval DSIG_OK            the signature is valid.
 * @retval DSIG_E_VERIFY      it does not verify (also under other options than the signer's).
 * @retval DSIG_E_UNSUPPORTED non-default options for an algorithm without DSIG_ALG_OPTIONS.
 * @retval DSIG_E_ARG         as dsig_verify, and the option checks of dsig_verify_init_ex.
 * @retval other              the codes of dsig_verify.
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_verify_ex(const dsig_alg *alg, const dsig_key *key,
                                                const void *msg, size_t msg_len, const uint8_t *sig,
                                                size_t sig_len, const dsig_sign_opts *opts);

/*
 * Two-pass signing, for algorithms flagged DSIG_ALG_TWO_PASS (SLH-DSA): the exact signature of a
 * scheme whose signer reads the message twice (FIPS 205: R = PRF_msg(SK.prf, opt_rand, M) before
 * H_msg(R, ..., M)), over a payload the caller can read again (a regular file, a memory map):
 *   dsig_sign_init_two_pass → dsig_sign_update* (pass 1) → dsig_sign_next_pass →
 *   dsig_sign_update* with the same bytes (pass 2) → dsig_sign_final.
 * The chunking of the two passes may differ. The core checks that pass 2 fed exactly as many bytes
 * as pass 1 (DSIG_E_STATE otherwise, also for final before next_pass or next_pass twice); that the
 * bytes are the same is the caller's duty (a changed payload gives a signature that does not verify).
 * dsig_sign_total counts the current pass.
 * @spec FIPS 205 Algorithm 19 (slh_sign_internal) through Algorithm 22 / 23: the message is read once
 * for R = PRF_msg and once for H_msg.
 * @retval DSIG_OK            *ctx is a new context in pass 1.
 * @retval DSIG_E_UNSUPPORTED alg has no two-pass signature (not DSIG_ALG_TWO_PASS).
 * @retval DSIG_E_ARG         ctx, alg or key NULL, or bad options (as dsig_sign_init_ex).
 * @retval other              the codes of dsig_sign_init_ex.
 */
DSIG_EXPORT int dsig_sign_init_two_pass(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                        const dsig_sign_opts *opts);
/*
 * End pass 1 and start pass 2 of a two-pass context: feed the same payload again, then
 * dsig_sign_final. On failure ctx stays allocated, poisoned: only dsig_sign_abort or dsig_sign_final
 * (which then fails) remain.
 * @retval DSIG_OK      pass 2 has started.
 * @retval DSIG_E_ARG   ctx NULL.
 * @retval DSIG_E_STATE a one-pass context, a second call, after a failed update or after final.
 * @retval other        a provider error (ctx poisoned).
 */
DSIG_EXPORT int dsig_sign_next_pass(dsig_sign_ctx *ctx);

DSIG_END_DECLS

#endif
