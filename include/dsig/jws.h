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

/* alg may be NULL to use the key's bound algorithm. */
DSIG_EXPORT int dsig_jws_sign_init(dsig_jws_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                                   const dsig_jws_sign_opts *opts);
DSIG_EXPORT int dsig_jws_sign_update(dsig_jws_sign_ctx *ctx, const void *data, size_t len);
/* Two-pass signing (dsig_jws_sign_opts.two_pass): end pass 1 and start pass 2, in which the same
 * payload is fed again (any chunking; the byte counts must match, and for DSIG_FMT_COMPACT_B64 the
 * bytes too, else final fails with DSIG_E_STATE). DSIG_E_STATE on a one-pass context or a second
 * call. On failure ctx stays allocated: only dsig_jws_sign_final / dsig_jws_sign_abort remain. */
DSIG_EXPORT int dsig_jws_sign_next_pass(dsig_jws_sign_ctx *ctx);
/* *out is allocated (NUL-terminated for text formats); free with dsig_free(). Frees ctx. */
DSIG_EXPORT int dsig_jws_sign_final(dsig_jws_sign_ctx *ctx, char **out, size_t *out_len);
DSIG_EXPORT void dsig_jws_sign_abort(dsig_jws_sign_ctx *ctx);

/*
 * Streaming verification of a DETACHED payload: `sig` is the JWS text (DSIG_FMT_JWS, or DSIG_FMT_JSON
 * without "payload") or raw signature bytes (DSIG_FMT_RAW); the payload is what the updates give —
 * no update at all is an empty payload. A JWS that carries its payload (compact with a non-empty
 * payload segment, format DSIG_FMT_COMPACT_B64, or JSON with a "payload" member) is refused with
 * DSIG_E_FORMAT: verify it with dsig_jws_verify_compact(), which returns the payload it verified
 * (dsig_jws_has_embedded_payload() tells which entry point a signature needs).
 */
DSIG_EXPORT int dsig_jws_verify_init(dsig_jws_verify_ctx **ctx, const dsig_key *key, const char *sig,
                                     size_t sig_len, const dsig_jws_verify_opts *opts);
DSIG_EXPORT int dsig_jws_verify_update(dsig_jws_verify_ctx *ctx, const void *data, size_t len);
/* DSIG_OK valid, DSIG_E_VERIFY invalid, other codes errors. Frees ctx. */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_jws_verify_final(dsig_jws_verify_ctx *ctx);
DSIG_EXPORT void dsig_jws_verify_abort(dsig_jws_verify_ctx *ctx);
/* Algorithm chosen by dsig_jws_verify_init. */
DSIG_EXPORT const dsig_alg *dsig_jws_verify_alg(const dsig_jws_verify_ctx *ctx);

/* Verify a JWS with an embedded payload — ordinary compact (DSIG_FMT_COMPACT_B64) or flattened JSON
 * with "payload" — the one entry point for embedded payloads; on success *payload (allocated, free
 * with dsig_free) receives the decoded payload. The caller must use that payload (or compare its own
 * copy with it): the signature covers nothing else. */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_jws_verify_compact(const dsig_key *key, const char *jws, size_t len,
                                                         const dsig_jws_verify_opts *opts,
                                                         uint8_t **payload, size_t *payload_len);

/* 1 if the signature text carries its payload (compact JWS with a non-empty payload segment, or
 * flattened JSON with a "payload" member): verify it with dsig_jws_verify_compact(); 0 if it does not
 * (detached JWS, or not a JWS: raw); a negative DSIG_E_* if it is JSON that does not parse. */
DSIG_EXPORT int dsig_jws_has_embedded_payload(const char *sig, size_t len);

/* A JOSE "alg" name as JWS verification reads it, for `key`: the registry's algorithm of that name
 * (dsig_alg_by_name), or — for the legacy "EdDSA" of RFC 8037 — the EdDSA algorithm of the key's OKP
 * curve (Ed25519 or Ed448). NULL when the name is neither (or is "EdDSA" and key is NULL or not an
 * OKP key). */
DSIG_EXPORT const dsig_alg *dsig_jws_alg_for_key(const char *name, const dsig_key *key);

/* Detect the format of a signature text: DSIG_FMT_JWS, DSIG_FMT_JSON, DSIG_FMT_COMPACT_B64, or
 * DSIG_FMT_RAW when it is none of those. */
DSIG_EXPORT dsig_format dsig_jws_detect_format(const char *sig, size_t len);

DSIG_END_DECLS

#endif
