/*
 * src/pq/akp.h — the parts every AKP ("Algorithm Key Pair", RFC 9964) key type shares: the JWK
 * member lists ("pub", then the private "priv"), the key-type descriptor, and the JWK import/export
 * scaffolding around the family-specific key material. Used by ML-DSA, SLH-DSA and FALCON; each family
 * keeps its own key impl, its own checks and its own error wording (passed in as `name`).
 *
 * A family file defines five static hooks — akp_generate, akp_import_jwk, akp_export_jwk,
 * akp_public_copy, akp_destroy — declared by DSIG_AKP_DECLARE_HOOKS, and builds one key type per
 * parameter set with DSIG_AKP_KEYTYPE("set name"): the JWK "alg" selects the set (RFC 9964 §5). No
 * PEM: OpenSSL 3.0 has none of these algorithms, so to_pkey/from_pkey are NULL and PEM import/export
 * fail with a clear error in the core.
 */
#ifndef DSIG_PQ_AKP_H
#define DSIG_PQ_AKP_H

#include <stddef.h>
#include <stdint.h>

#include "core/keytype.h"
#include "core/rng.h"

/* JWK members of every AKP key: public "pub", private "priv" (RFC 7638 order). */
extern const char *const dsig_akp_pub_members[];
extern const char *const dsig_akp_priv_members[];

/* Prototypes of the five key-type hooks a family file defines (static, in that file). */
#define DSIG_AKP_DECLARE_HOOKS                                                                       \
    static int akp_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng);                     \
    static int akp_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n);             \
    static int akp_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,   \
                              size_t *n);                                                            \
    static int akp_public_copy(struct dsig_key *dst, const struct dsig_key *src);                    \
    static void akp_destroy(struct dsig_key *key)

/* The key-type descriptor of one parameter set `set` (its JWK "alg"), wired to the file's hooks. */
#define DSIG_AKP_KEYTYPE(set)                                                                        \
    {                                                                                                \
        .kty = "AKP", .crv = NULL, .pub_members = dsig_akp_pub_members,                              \
        .priv_members = dsig_akp_priv_members, .has_public = 1, .generate = akp_generate,            \
        .import_jwk = akp_import_jwk, .export_jwk = akp_export_jwk, .to_pkey = NULL,                 \
        .from_pkey = NULL, .public_copy = akp_public_copy, .destroy = akp_destroy, .bits = NULL,     \
        .alg = set,                                                                                  \
    }

/* The algorithm of the NULL-terminated list `algs` whose key type is `t`; NULL without recording an
 * error (callers that need one use dsig_akp_alg_of). */
const dsig_alg *dsig_akp_find_alg(const dsig_alg *const *algs, const struct dsig_keytype *t);

/* As dsig_akp_find_alg, but records DSIG_E_KEY_MISMATCH "not <what> (kty ...)" when none matches;
 * `what` names the family with its article, e.g. "an ML-DSA key". */
const dsig_alg *dsig_akp_alg_of(const dsig_alg *const *algs, const struct dsig_keytype *t,
                                const char *what);

/* generate hook guard: AKP sets have no size parameter, so any nonzero `bits` is DSIG_E_ARG. */
int dsig_akp_check_no_bits(const char *name, unsigned bits);

/* import hook guard: member "pub" (m[0]) must be present and, when pub_len is nonzero, exactly
 * pub_len bytes (pub_len 0: the family's decoder checks the length). */
int dsig_akp_check_pub(const dsig_jwk_member *m, size_t n, const char *name, size_t pub_len);
/* A fixed-length signature of `name` must be `expected` bytes: DSIG_E_VERIFY naming both lengths. */
int dsig_akp_check_sig_len(const char *name, size_t expected, size_t sig_len);

/* Whether the imported JWK carries the private member "priv" (m[1]). */
int dsig_akp_has_priv(const dsig_jwk_member *m, size_t n);

/* export hook body: "pub" (pub_len bytes), then "priv" when include_private; *n = 1 or 2. On failure
 * nothing stays allocated. The caller has already checked the key holds what is asked for. */
int dsig_akp_export(dsig_jwk_member *m, size_t *n, int include_private, const uint8_t *pub,
                    size_t pub_len, const uint8_t *priv, size_t priv_len);

/* Install a finished impl in key, destroying any previous one through the key type's own hook. */
void dsig_akp_install(struct dsig_key *key, void *impl, int has_private);

#endif
