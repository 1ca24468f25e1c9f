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

DSIG_EXPORT int dsig_jwk_import(dsig_key **out, const char *json, size_t len);

/*
 * Export as a JWK (NUL-terminated JSON, one object, members in a stable order). With
 * include_private == 0 only public members are written (MAC keys then fail: they have no public part).
 * "alg" is written when the key is bound; "kid" is the key's own (dsig_key_kid), else the RFC 7638
 * thumbprint. Free *json with dsig_free().
 */
DSIG_EXPORT int dsig_jwk_export(const dsig_key *key, int include_private, char **json, size_t *len);

/* RFC 7638 SHA-256 thumbprint, base64url without padding (43 chars + NUL). */
#define DSIG_THUMBPRINT_LEN 44
DSIG_EXPORT int dsig_jwk_thumbprint(const dsig_key *key, char out[DSIG_THUMBPRINT_LEN]);

DSIG_END_DECLS

#endif
