/*
 * src/jose/jose_internal.h — what the JOSE files (jwk.c, jws_*.c) share: a small text builder with
 * JSON string escaping, strict JSON loading, the protected-header policy and the algorithm decision.
 * Not installed.
 */
#ifndef DSIG_JOSE_INTERNAL_H
#define DSIG_JOSE_INTERNAL_H

#include <jansson.h>

#include "core/internal.h"

/* ---- text builder --------------------------------------------------------------------------- */

/* A growable NUL-terminated buffer from dsig_malloc; growth wipes the old block (it may hold keys). */
typedef struct jose_buf {
    char *p;
    size_t len, cap;
    int oom;
} jose_buf;

/* Append raw bytes (sets oom on allocation failure; later appends are no-ops). */
void jose_buf_add(jose_buf *b, const void *data, size_t n);
/* Append a NUL-terminated string. */
void jose_buf_adds(jose_buf *b, const char *s);
/* Append a JSON string literal (quotes and escapes) for a NUL-terminated string. */
void jose_buf_json_str(jose_buf *b, const char *s);
/* Append `"name":"value"` with `sep` (e.g. ",") first when non-NULL. */
void jose_buf_member(jose_buf *b, const char *sep, const char *name, const char *value);
/* Wipe and free the contents. */
void jose_buf_wipe(jose_buf *b);

/* Re-fail with `code`, prefixing the current detail with `prefix` ("JWK member \"d\""). */
int jose_fail_prefix(int code, const char *prefix);

/* ---- JSON ----------------------------------------------------------------------------------- */

/* Parse exactly one JSON object from `len` bytes (duplicates rejected, no trailing data). `what`
 * names the document in the failure detail ("JWK", "JWS header", ...). */
int jose_json_load_object(json_t **out, const char *text, size_t len, const char *what);
/* Strict configuration objects: DSIG_E_JSON naming the first member of `obj` that is not in the
 * NULL-terminated `allowed` list ("<prefix><where>: unknown member \"k\""). Used by the serve and
 * node configuration parsers. */
int jose_json_only_members(const json_t *obj, const char *prefix, const char *where, const char *const *allowed);

/* Free text from json_dumps with jansson's current allocator: an application may have installed its own
 * (the dsig tool installs a wiping one), so plain free() would be wrong. NULL is ignored. */
void jose_json_text_free(char *text);

/* Wipe the characters of a string member in place (secrets parsed from JSON) — the parsed object is
 * ours alone (refcount 1), so overwriting its buffer before json_decref is safe. */
void jose_json_wipe_string(json_t *obj, const char *name);

/* ---- protected header ----------------------------------------------------------------------- */

#define JOSE_ALG_NAME_MAX 64

/* What verification needs from a protected header after the policy checks. */
typedef struct jose_header {
    char alg[JOSE_ALG_NAME_MAX]; /* header "alg" */
    int b64;                     /* 1 unless "b64":false */
} jose_header;

/* Decode BASE64URL(header) text, parse it and apply the policy (alg, b64, crit; size bound).
 * `unprotected` (may be NULL) is the JSON serialization's "header" object: it must not carry
 * alg/b64/crit nor repeat a protected member. */
int jose_header_parse(const char *b64, size_t b64_len, const json_t *unprotected, jose_header *out);

/* Build BASE64URL of the protected header we produce for `alg` (unencoded form when b64 == 0). */
int jose_header_build(const dsig_alg *alg, const dsig_key *key, int b64, int include_kid,
                      char **b64_out, size_t *b64_len);

/* Decide the verification algorithm from the key, the caller's options and the header alg (NULL
 * for raw signatures); see docs/jws.md "Verification policy". */
int jose_decide_alg(const char *header_alg, const dsig_key *key, const dsig_jws_verify_opts *opts,
                    const dsig_alg **out);

/* The one legacy alias: JOSE "EdDSA" (RFC 8037) names the registry entry for the key's OKP curve.
 * NULL when `name` is not the alias or no entry fits. */
const dsig_alg *jose_legacy_alias(const char *name, const struct dsig_keytype *kt);

#endif
