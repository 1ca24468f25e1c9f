/*
 * dsig/registry.h — the algorithm registry.
 *
 * Every algorithm the library implements is one descriptor in a static registry. Descriptors are
 * immutable, live for the whole program, and may be compared by pointer. Nothing outside the library
 * (JWS, CLI, benchmarks) ever switches on a name: they look a descriptor up and use its properties.
 *
 * Names are the JOSE "alg" names (RFC 7518, RFC 9864, and the project's naming table in
 * docs/naming.md for algorithms that have no registered name).
 */
#ifndef DSIG_REGISTRY_H
#define DSIG_REGISTRY_H

#include "common.h"

DSIG_BEGIN_DECLS

typedef struct dsig_alg dsig_alg;

/* Flags returned by dsig_alg_flags(). */
#define DSIG_ALG_SYMMETRIC   0x0001u /* a MAC: the same secret key signs and verifies */
#define DSIG_ALG_STATEFUL    0x0002u /* signing consumes one-time keys from a key state */
#define DSIG_ALG_RANDOMIZED  0x0004u /* streaming signatures are randomized (not reproducible) */
#define DSIG_ALG_PQ          0x0008u /* believed secure against quantum adversaries */
#define DSIG_ALG_ONE_PASS    0x0010u /* sign and verify read the payload exactly once */
#define DSIG_ALG_DETERMINISTIC_ONESHOT 0x0020u /* dsig_sign() is deterministic (e.g. RFC 8032) */
#define DSIG_ALG_OPTIONS     0x0040u /* takes dsig_sign_opts: context, deterministic, pre-hash */
#define DSIG_ALG_TWO_PASS    0x0080u /* has an exact signature that reads the payload twice:
                                         dsig_sign_init_two_pass (stream.h) */
#define DSIG_ALG_BOUND_KEY   0x0100u /* takes only keys bound to it (JWK "alg", or generated for it):
                                         an unbound key is refused (DSIG_E_ALG_NOT_ALLOWED), so one
                                         key is never used for two algorithms by accident */

/*
 * The number of registered algorithms. Together with dsig_alg_at() it enumerates the registry in a
 * stable order (families in registry order, algorithms in family order), the order `dsig list` prints.
 * @return the number of descriptors, the same for the whole program.
 */
DSIG_EXPORT size_t dsig_alg_count(void);

/*
 * The i-th registered algorithm, for 0 <= i < dsig_alg_count().
 * @return the descriptor, or NULL when i is past the end.
 */
DSIG_EXPORT const dsig_alg *dsig_alg_at(size_t i);

/*
 * Look an algorithm up by its JOSE "alg" name, case-sensitively as JOSE requires ("ES256", not
 * "es256"). The legacy JOSE name "EdDSA" (RFC 8037) names no single algorithm here: see
 * dsig_jws_alg_for_key().
 * @return the descriptor, or NULL if the name is NULL or unknown.
 */
DSIG_EXPORT const dsig_alg *dsig_alg_by_name(const char *name);

/*
 * The algorithm's JOSE "alg" name (docs/naming.md), e.g. "ES256". alg must not be NULL (this and the
 * accessors below read the descriptor and cannot fail).
 * @return a static string.
 */
DSIG_EXPORT const char *dsig_alg_name(const dsig_alg *alg);

/*
 * The algorithm's family, the grouping of `dsig list` and the benchmarks, e.g. "ECDSA", "HMAC",
 * "EdDSA", "ML-DSA".
 * @return a static string.
 */
DSIG_EXPORT const char *dsig_alg_family(const dsig_alg *alg);

/*
 * The JWK key type the algorithm takes: "oct", "RSA", "EC", "OKP" or "AKP".
 * @return a static string.
 */
DSIG_EXPORT const char *dsig_alg_kty(const dsig_alg *alg);

/*
 * The JWK curve ("crv") of the algorithm's keys, e.g. "P-256" or "Ed25519".
 * @return a static string, or NULL for key types without a curve (RSA, oct, AKP).
 */
DSIG_EXPORT const char *dsig_alg_curve(const dsig_alg *alg);

/*
 * One line describing the algorithm for humans (the `dsig list` column).
 * @return a static string.
 */
DSIG_EXPORT const char *dsig_alg_description(const dsig_alg *alg);

/*
 * The bare hash the benchmarks compare the algorithm's streaming throughput with (the hash its
 * signing input goes through, e.g. "SHA-256" for ES256).
 * @return a static string.
 */
DSIG_EXPORT const char *dsig_alg_baseline(const dsig_alg *alg);

/*
 * The algorithm's claimed classical security level in bits (e.g. 128 for ES256), at its default key
 * size.
 * @return the level in bits.
 */
DSIG_EXPORT unsigned dsig_alg_security_bits(const dsig_alg *alg);

/*
 * The algorithm's properties as a set of DSIG_ALG_* flags (above): symmetric, stateful, randomized,
 * post-quantum, one pass, deterministic one-shot, options, two-pass, bound key.
 * @return the flags, an OR of DSIG_ALG_* values.
 */
DSIG_EXPORT unsigned dsig_alg_flags(const dsig_alg *alg);

/*
 * The size of the largest signature (or MAC tag) the algorithm produces with any key it accepts: a
 * buffer of this many bytes always suffices for dsig_sign_final() and dsig_sign().
 * @return the size in bytes.
 */
DSIG_EXPORT size_t dsig_alg_sig_max(const dsig_alg *alg);

/*
 * The key size dsig_key_generate() uses when dsig_keygen_params.bits is 0: the RSA modulus or MAC key
 * size in bits, or the fixed size of key types of one size.
 * @return the size in bits.
 */
DSIG_EXPORT unsigned dsig_alg_default_bits(const dsig_alg *alg);

DSIG_END_DECLS

#endif
