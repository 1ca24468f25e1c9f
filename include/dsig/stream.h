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

DSIG_EXPORT int dsig_sign_init(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key);
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
 * Returns: DSIG_OK (signature written, ctx freed; or the size query above); DSIG_E_BUFFER (above);
 * DSIG_E_ARG (ctx or sig_len NULL; a non-NULL ctx is freed); DSIG_E_STATE (after a failed update, a
 * two-pass context still in pass 1, or passes of different lengths; ctx freed); DSIG_E_EXHAUSTED,
 * DSIG_E_CRYPTO, DSIG_E_NOMEM and the other provider errors (ctx freed).
 */
DSIG_EXPORT int dsig_sign_final(dsig_sign_ctx *ctx, uint8_t *sig, size_t cap, size_t *sig_len);
DSIG_EXPORT void dsig_sign_abort(dsig_sign_ctx *ctx);
/* Bytes fed so far. */
DSIG_EXPORT uint64_t dsig_sign_total(const dsig_sign_ctx *ctx);

DSIG_EXPORT int dsig_verify_init(dsig_verify_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                 const uint8_t *sig, size_t sig_len);
DSIG_EXPORT int dsig_verify_update(dsig_verify_ctx *ctx, const void *data, size_t len);
/* DSIG_OK if valid, DSIG_E_VERIFY if not, another code on error. Frees ctx. */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_verify_final(dsig_verify_ctx *ctx);
DSIG_EXPORT void dsig_verify_abort(dsig_verify_ctx *ctx);

/* One-shot forms over an in-memory message. dsig_sign is deterministic where the algorithm defines
 * a deterministic signature (RFC 8032 EdDSA, PKCS#1 v1.5, MACs). */
DSIG_EXPORT int dsig_sign(const dsig_alg *alg, const dsig_key *key, const void *msg, size_t msg_len,
                          uint8_t *sig, size_t cap, size_t *sig_len);
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

/* As dsig_sign_init / dsig_verify_init, with options (NULL = defaults). */
DSIG_EXPORT int dsig_sign_init_ex(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                  const dsig_sign_opts *opts);
DSIG_EXPORT int dsig_verify_init_ex(dsig_verify_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                    const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts);
/* One-shot forms with options. */
DSIG_EXPORT int dsig_sign_ex(const dsig_alg *alg, const dsig_key *key, const void *msg, size_t msg_len,
                             uint8_t *sig, size_t cap, size_t *sig_len, const dsig_sign_opts *opts);
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
 * dsig_sign_total counts the current pass. Other algorithms: DSIG_E_UNSUPPORTED.
 */
DSIG_EXPORT int dsig_sign_init_two_pass(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                        const dsig_sign_opts *opts);
/* End pass 1, start pass 2. On failure ctx stays allocated (only abort or final remain). */
DSIG_EXPORT int dsig_sign_next_pass(dsig_sign_ctx *ctx);

DSIG_END_DECLS

#endif
