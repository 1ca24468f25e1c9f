/* Helpers shared by the JOSE tests: key loading from vectors, compact JWS forging, skipping. */
#ifndef DSIG_JOSE_TEST_UTIL_H
#define DSIG_JOSE_TEST_UTIL_H

#include "core/internal.h"
#include "testutil.h"

/* The registry entry `name`, or skip the test when that provider is not built. */
const dsig_alg *jt_need(const char *name);
/* Import a JWK given as a JSON value; skip if its key type has no provider yet. */
dsig_key *jt_key_json(const json_t *jwk);
/* Import a JWK from a vector file (e.g. "jws/rfc7515/rfc7515_A.1.jwk"). */
dsig_key *jt_key_file(const char *rel);
/* BASE64URL of a string (malloc). */
char *jt_b64(const char *s, size_t n);
/* A compact JWS over an arbitrary header JSON and payload segment text, signed with (alg, key)
 * through the one-shot signer; sig_override (if not NULL) replaces the signature segment. malloc. */
char *jt_forge(const char *hdr_json, const char *payload_seg, const dsig_alg *alg, const dsig_key *key);
/* Verify a whole compact/JSON JWS with an embedded payload; returns the status. */
int jt_verify_embedded(const char *jws, const dsig_key *key, const dsig_jws_verify_opts *opts);
/* Verify a detached JWS streaming `payload` in `chunk`-sized updates (0 = one update). */
int jt_verify_detached(const char *jws, const dsig_key *key, const dsig_jws_verify_opts *opts,
                       const void *payload, size_t len, size_t chunk);

/* Group fixture for tests built on the RFC 7515 A.1 HMAC key: jt_hs = HS256 (NULL when the MAC
 * provider is not built, then jt_hkey stays NULL too), jt_hkey = that key. */
extern const dsig_alg *jt_hs;
extern dsig_key *jt_hkey;
int jt_setup_hs256(void **state);
int jt_teardown_hs256(void **state);

#endif
