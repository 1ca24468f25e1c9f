/*
 * dsig/jwk.h — JSON Web Keys (RFC 7517, RFC 7518 §6, RFC 8037) and thumbprints (RFC 7638).
 *
 * Import accepts one JWK object (not a set). Members are checked strictly: unknown "kty"/"crv",
 * missing or non-canonical base64url members, duplicate members, wrong sizes and invalid curve points
 * are rejected with a detail naming the member. If the JWK carries "alg", the key is bound to it; if it
 * carries "kid" (1..DSIG_KID_MAX bytes, no control characters), the key keeps it (dsig_key_kid).
 * Input is bounded (DSIG_JWK_MAX_BYTES).
 */
#ifndef DSIG_JWK_H
#define DSIG_JWK_H

#include "common.h"
#include "key.h"

DSIG_BEGIN_DECLS

#define DSIG_JWK_MAX_BYTES (64u * 1024u)
#define DSIG_KID_MAX 256u /* bytes of a JWK "kid" kept by import */

/*
 * @spec RFC 7517 §4, RFC 7518 §6, RFC 8037 §2, RFC 9964: import one JWK object (`json`, `len` bytes, no
 * NUL needed) as a key, bound to its "alg" when it carries one and keeping its "kid". *out is NULL on
 * failure; dsig_last_error_detail() names the member.
 * @retval DSIG_OK            *out holds the key (free it with dsig_key_free).
 * @retval DSIG_E_ARG         out or json NULL.
 * @retval DSIG_E_TOO_LARGE   len over DSIG_JWK_MAX_BYTES.
 * @retval DSIG_E_JSON        not JSON, duplicate member, wrong member type.
 * @retval DSIG_E_BASE64      a member that is not canonical base64url.
 * @retval DSIG_E_KEY         a missing or malformed member ("kty", "crv", "kid", sizes).
 * @retval DSIG_E_POINT       an EC or OKP public key that is not a valid point.
 * @retval DSIG_E_KEY_WEAK    an RSA modulus under 2048 bits.
 * @retval DSIG_E_KEY_MISMATCH an "alg" that does not fit the key's type or curve.
 * @retval DSIG_E_UNSUPPORTED unknown "kty", "crv" or "alg", or a JWK Set instead of one key.
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_CRYPTO      a back-end failed to start or refused the material.
 */
DSIG_EXPORT int dsig_jwk_import(dsig_key **out, const char *json, size_t len);

/*
 * Export as a JWK (NUL-terminated JSON, one object, members in a stable order). With
 * include_private == 0 only public members are written (MAC keys then fail: they have no public part).
 * "alg" is written when the key is bound; "kid" is the key's own (dsig_key_kid), else the RFC 7638
 * thumbprint. Free *json with dsig_free(); *len (may be NULL) receives its length without the NUL.
 * @retval DSIG_OK            *json holds the JWK.
 * @retval DSIG_E_ARG         key or json NULL.
 * @retval DSIG_E_NO_PRIVATE  include_private for a public key.
 * @retval DSIG_E_UNSUPPORTED a public export of a secret (oct) key, or a key type without export.
 * @retval DSIG_E_KEY         the key lacks a member its type exports.
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_INTERNAL    a key type that exports more members than the encoder holds (a bug).
 */
DSIG_EXPORT int dsig_jwk_export(const dsig_key *key, int include_private, char **json, size_t *len);

#define DSIG_THUMBPRINT_LEN 44 /* base64url of a SHA-256 digest, no padding: 43 characters + NUL */

/*
 * @spec RFC 7638 §3: the key's SHA-256 JWK thumbprint (the required public members, sorted, no
 * whitespace), base64url without padding, NUL-terminated in `out`. For a secret (oct) key the
 * thumbprint covers the secret "k" and needs it.
 * @retval DSIG_OK           out holds the thumbprint.
 * @retval DSIG_E_ARG        key or out NULL.
 * @retval DSIG_E_NO_PRIVATE an oct key without its secret.
 * @retval DSIG_E_UNSUPPORTED a key type without JWK export.
 * @retval DSIG_E_NOMEM      out of memory.
 * @retval DSIG_E_CRYPTO     SHA-256 failed in OpenSSL.
 */
DSIG_EXPORT int dsig_jwk_thumbprint(const dsig_key *key, char out[DSIG_THUMBPRINT_LEN]);

DSIG_END_DECLS

#endif
