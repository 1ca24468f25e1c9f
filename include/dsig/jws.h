/*
 * dsig/jws.h — JSON Web Signature (RFC 7515) with detached, unencoded payloads (RFC 7797), produced and
 * verified while the payload streams.
 *
 * Formats:
 *   DSIG_FMT_JWS   compact, detached, unencoded: BASE64URL(header) ".." BASE64URL(sig)
 *                  header = {"alg":…,"b64":false,"crit":["b64"]} (+ "kid")
 *   DSIG_FMT_JSON  flattened JSON serialization without "payload": {"protected":…,"signature":…}
 *   DSIG_FMT_COMPACT_B64
 *                  ordinary compact JWS with the base64url payload embedded (small messages only:
 *                  the whole output is held in memory; bounded by DSIG_JWS_MAX_EMBEDDED). Verified
 *                  only by dsig_jws_verify_compact(), like a flattened JSON JWS carrying "payload":
 *                  the streaming dsig_jws_verify_init() refuses every JWS that carries its payload.
 *   DSIG_FMT_RAW   plain signature bytes over the plain message (no JOSE at all)
 *
 * Verification decides the algorithm from the key (its bound "alg") and the caller's allow-list,
 * never from the header alone: the header's "alg" must equal it. Rejected: "alg":"none", "b64":false
 * without "crit":["b64"], unknown "crit" entries, duplicate JSON members, non-canonical base64url,
 * protected headers over DSIG_JWS_MAX_HEADER bytes.
 */
#ifndef DSIG_JWS_H
#define DSIG_JWS_H

#include "common.h"
#include "key.h"
#include "registry.h"
#include "stream.h"

DSIG_BEGIN_DECLS

#define DSIG_JWS_MAX_HEADER (8u * 1024u)            /* decoded protected header bound */
#define DSIG_JWS_MAX_EMBEDDED (64u * 1024u * 1024u) /* payload bound for DSIG_FMT_COMPACT_B64 */

typedef enum dsig_format {
    DSIG_FMT_AUTO = 0,      /* verify only: detect from the signature text */
    DSIG_FMT_JWS = 1,
    DSIG_FMT_JSON = 2,
    DSIG_FMT_COMPACT_B64 = 3,
    DSIG_FMT_RAW = 4
} dsig_format;

typedef struct dsig_jws_sign_opts {
    dsig_format format;     /* DSIG_FMT_JWS if 0 */
    int include_kid;        /* add "kid": the key's own (dsig_key_kid), else its RFC 7638 thumbprint */
    /* Per-signature options (stream.h; NULL = defaults) for algorithms flagged DSIG_ALG_OPTIONS.
     * JOSE fixes an empty context and pure signing (RFC 9964), so a context or pre-hash is refused
     * (DSIG_E_UNSUPPORTED) unless format is DSIG_FMT_RAW; `deterministic` is allowed everywhere. */
    const dsig_sign_opts *sign_opts;
    /* 1 = two-pass signing for algorithms flagged DSIG_ALG_TWO_PASS (SLH-DSA; others refuse it with
     * DSIG_E_UNSUPPORTED): the caller feeds the payload, calls dsig_jws_sign_next_pass, feeds the same
     * payload again, then dsig_jws_sign_final. The signer reads the whole signing input — the
     * protected header prefix BASE64URL(header) "." included — in both passes, so the JWS signature is
     * the exact FIPS 205 signature of that input (deterministic allowed). 0 = one pass. */
    int two_pass;
} dsig_jws_sign_opts;

typedef struct dsig_jws_verify_opts {
    dsig_format format;           /* DSIG_FMT_AUTO to detect */
    const char *const *allowed;   /* NULL-terminated list of allowed alg names; NULL = key's alg only */
    const dsig_alg *alg;          /* algorithm to use when the key is unbound (e.g. a PEM key); may be NULL */
    /* Context / pre-hash the signer used (stream.h; NULL = defaults): raw signatures only, as for
     * dsig_jws_sign_opts.sign_opts (a JWS with them is refused with DSIG_E_UNSUPPORTED). */
    const dsig_sign_opts *sign_opts;
} dsig_jws_verify_opts;

typedef struct dsig_jws_sign_ctx dsig_jws_sign_ctx;
typedef struct dsig_jws_verify_ctx dsig_jws_verify_ctx;

/*
 * @spec RFC 7515 §5.1, RFC 7797 §3: start a JWS over a streamed payload with `alg` (NULL: the key's
 * bound algorithm) and a private `key`. The protected header is built (and, for detached formats,
 * BASE64URL(header) "." fed to the signer) here; opts NULL = DSIG_FMT_JWS without "kid", one pass.
 * *ctx is NULL on failure.
 * @retval DSIG_OK            *ctx is a new context: feed the payload with dsig_jws_sign_update.
 * @retval DSIG_E_ARG         ctx or key NULL, alg NULL with an unbound key, or an invalid format.
 * @retval DSIG_E_UNSUPPORTED a context or pre-hash in a JOSE format, or two_pass for an algorithm
 *                            without DSIG_ALG_TWO_PASS.
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval other              the codes of dsig_sign_init_ex (DSIG_E_NO_PRIVATE, DSIG_E_KEY_MISMATCH,
 *                            DSIG_E_ALG_NOT_ALLOWED, DSIG_E_EXHAUSTED, ...).
 */
DSIG_EXPORT int dsig_jws_sign_init(dsig_jws_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                   const dsig_jws_sign_opts *opts);
/*
 * Feed the next `len` bytes of the payload (any chunking; len 0 accepted). For DSIG_FMT_COMPACT_B64 the
 * payload is also base64url-encoded into the output as it goes. A failed update poisons the context.
 * @retval DSIG_OK          the bytes are absorbed.
 * @retval DSIG_E_ARG       ctx NULL, or data NULL with len > 0.
 * @retval DSIG_E_STATE     after a failure.
 * @retval DSIG_E_TOO_LARGE an embedded payload (DSIG_FMT_COMPACT_B64) over DSIG_JWS_MAX_EMBEDDED.
 * @retval DSIG_E_NOMEM     out of memory (embedded payload).
 * @retval other            the codes of dsig_sign_update.
 */
DSIG_EXPORT int dsig_jws_sign_update(dsig_jws_sign_ctx *ctx, const void *data, size_t len);
/* Two-pass signing (dsig_jws_sign_opts.two_pass): end pass 1 and start pass 2, in which the same
 * payload is fed again (any chunking; the byte counts must match, and for DSIG_FMT_COMPACT_B64 the
 * bytes too, else final fails with DSIG_E_STATE). On failure ctx stays allocated: only
 * dsig_jws_sign_final / dsig_jws_sign_abort remain.
 * @retval DSIG_OK      pass 2 has started (the header prefix is fed again).
 * @retval DSIG_E_ARG   ctx NULL.
 * @retval DSIG_E_STATE a one-pass context, a second call, or after a failure.
 * @retval other        the codes of dsig_sign_next_pass.
 */
DSIG_EXPORT int dsig_jws_sign_next_pass(dsig_jws_sign_ctx *ctx);
/*
 * Finish: make the signature and write the whole output to *out (allocated, NUL-terminated for text
 * formats; free with dsig_free()), its length to *out_len (may be NULL). Frees ctx on every path.
 * @retval DSIG_OK      *out holds the JWS (or the raw signature for DSIG_FMT_RAW).
 * @retval DSIG_E_ARG   ctx or out NULL.
 * @retval DSIG_E_STATE after a failed update or next_pass, a two-pass context still in pass 1, or a
 *                      pass 2 that fed another payload length (or other bytes, embedded payloads).
 * @retval DSIG_E_NOMEM out of memory.
 * @retval other        the codes of dsig_sign_final (DSIG_E_CRYPTO, DSIG_E_EXHAUSTED, ...).
 */
DSIG_EXPORT int dsig_jws_sign_final(dsig_jws_sign_ctx *ctx, char **out, size_t *out_len);
/* Wipe and free a JWS signing context without output. NULL is accepted. */
DSIG_EXPORT void dsig_jws_sign_abort(dsig_jws_sign_ctx *ctx);

/*
 * Streaming verification of a DETACHED payload: `sig` is the JWS text (DSIG_FMT_JWS, or DSIG_FMT_JSON
 * without "payload") or raw signature bytes (DSIG_FMT_RAW); the payload is what the updates give —
 * no update at all is an empty payload. A JWS that carries its payload (compact with a non-empty
 * payload segment, format DSIG_FMT_COMPACT_B64, or JSON with a "payload" member) is refused with
 * DSIG_E_FORMAT: verify it with dsig_jws_verify_compact(), which returns the payload it verified
 * (dsig_jws_has_embedded_payload() tells which entry point a signature needs). opts NULL: detect
 * the format, allow the key's bound algorithm only. *ctx is NULL on failure.
 * @spec RFC 7515 §5.2, RFC 7797 §3 and §5 (the "crit" rule).
 * @retval DSIG_OK                *ctx is a new context: feed the detached payload.
 * @retval DSIG_E_ARG             ctx, key or sig NULL, or an invalid format.
 * @retval DSIG_E_FORMAT          not such a JWS, an empty signature segment, or a JWS carrying its
 *                                payload.
 * @retval DSIG_E_TOO_LARGE       a JWS text over the library's bound.
 * @retval DSIG_E_HEADER          the protected header is refused ("alg":"none", "b64":false without
 *                                "crit":["b64"], an unknown "crit" entry, over DSIG_JWS_MAX_HEADER).
 * @retval DSIG_E_JSON            the header or the JSON serialization is not strict JSON.
 * @retval DSIG_E_BASE64          a segment is not canonical base64url.
 * @retval DSIG_E_ALG_NOT_ALLOWED the header's "alg" is not the key's algorithm or not in the allow-list.
 * @retval DSIG_E_UNSUPPORTED     an "alg" the library does not know, or options JOSE does not allow.
 * @retval DSIG_E_VERIFY          a signature malformed for the algorithm (as dsig_verify_init).
 * @retval DSIG_E_NOMEM           out of memory.
 * @retval other                  the key checks of dsig_verify_init (DSIG_E_KEY_MISMATCH, ...).
 */
DSIG_EXPORT int dsig_jws_verify_init(dsig_jws_verify_ctx **ctx, const dsig_key *key, const char *sig,
                                     size_t sig_len, const dsig_jws_verify_opts *opts);
/*
 * Feed the next `len` bytes of the detached payload (any chunking; len 0 accepted).
 * @retval DSIG_OK      the bytes are absorbed.
 * @retval DSIG_E_ARG   ctx NULL, or data NULL with len > 0.
 * @retval DSIG_E_STATE after a failure.
 * @retval other        the codes of dsig_verify_update.
 */
DSIG_EXPORT int dsig_jws_verify_update(dsig_jws_verify_ctx *ctx, const void *data, size_t len);

/*
 * Finish: decide whether the JWS is valid for the payload fed. Frees ctx on every path.
 * @retval DSIG_OK       the JWS is valid.
 * @retval DSIG_E_VERIFY it is not.
 * @retval DSIG_E_ARG    ctx NULL.
 * @retval DSIG_E_STATE  an update had failed: nothing was decided.
 * @retval other         an error (DSIG_E_CRYPTO, DSIG_E_NOMEM): nothing was decided.
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_jws_verify_final(dsig_jws_verify_ctx *ctx);
/* Wipe and free a JWS verification context without a verdict. NULL is accepted. */
DSIG_EXPORT void dsig_jws_verify_abort(dsig_jws_verify_ctx *ctx);

/*
 * The algorithm dsig_jws_verify_init decided on (from the key and the allow-list, checked against
 * the header), e.g. to report it.
 * @return the descriptor, or NULL for a NULL ctx.
 */
DSIG_EXPORT const dsig_alg *dsig_jws_verify_alg(const dsig_jws_verify_ctx *ctx);

/* Verify a JWS with an embedded payload — ordinary compact (DSIG_FMT_COMPACT_B64) or flattened JSON
 * with "payload" — the one entry point for embedded payloads; on success *payload (allocated, free
 * with dsig_free) receives the decoded payload. The caller must use that payload (or compare its own
 * copy with it): the signature covers nothing else. The JWS text is bounded (DSIG_JWS_MAX_EMBEDDED of
 * payload).
 * @retval DSIG_OK                valid: *payload / *payload_len hold the payload.
 * @retval DSIG_E_VERIFY          the signature does not verify (*payload is NULL).
 * @retval DSIG_E_ARG             key, jws or payload NULL, or an invalid format.
 * @retval DSIG_E_FORMAT          not a JWS with an embedded payload.
 * @retval DSIG_E_TOO_LARGE       the text is over the bound.
 * @retval DSIG_E_HEADER          the protected header is refused ("alg":"none", "b64":false without
 *                                "crit":["b64"], an unknown "crit" entry, over DSIG_JWS_MAX_HEADER).
 * @retval DSIG_E_JSON            the header or the JSON serialization is not strict JSON.
 * @retval DSIG_E_BASE64          a segment is not canonical base64url.
 * @retval DSIG_E_ALG_NOT_ALLOWED the header's "alg" is not the key's algorithm or not in the allow-list.
 * @retval DSIG_E_UNSUPPORTED     an "alg" the library does not know, or options JOSE does not allow.
 * @retval DSIG_E_NOMEM           out of memory.
 * @retval other                  the key checks of dsig_verify_init.
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_jws_verify_compact(const dsig_key *key, const char *jws, size_t len,
                                                         const dsig_jws_verify_opts *opts,
                                                         uint8_t **payload, size_t *payload_len);

/* 1 if the signature text carries its payload (compact JWS with a non-empty payload segment, or
 * flattened JSON with a "payload" member): verify it with dsig_jws_verify_compact(); 0 if it does not
 * (detached JWS, or not a JWS: raw).
 * @retval 1                a JWS with an embedded payload.
 * @retval 0                a detached JWS, or not a JWS.
 * @retval DSIG_E_ARG       sig NULL.
 * @retval DSIG_E_TOO_LARGE JSON text over the library's bound.
 * @retval DSIG_E_JSON      text starting like JSON that does not parse.
 */
DSIG_EXPORT int dsig_jws_has_embedded_payload(const char *sig, size_t len);

/* A JOSE "alg" name as JWS verification reads it, for `key`: the registry's algorithm of that name
 * (dsig_alg_by_name), or — for the legacy "EdDSA" of RFC 8037 — the EdDSA algorithm of the key's OKP
 * curve (Ed25519 or Ed448). NULL when the name is neither (or is "EdDSA" and key is NULL or not an
 * OKP key).
 * @spec RFC 8037 §3.1 ("EdDSA" with the curve of the OKP key).
 * @return the descriptor, or NULL.
 */
DSIG_EXPORT const dsig_alg *dsig_jws_alg_for_key(const char *name, const dsig_key *key);

/* Detect the format of a signature text: DSIG_FMT_JWS, DSIG_FMT_JSON, DSIG_FMT_COMPACT_B64, or
 * DSIG_FMT_RAW when it is none of those (trailing whitespace, e.g. a file's final newline, is ignored;
 * binary that merely starts with '{' is raw).
 * @return the format; DSIG_FMT_RAW for a NULL or empty sig.
 */
DSIG_EXPORT dsig_format dsig_jws_detect_format(const char *sig, size_t len);

DSIG_END_DECLS

#endif
