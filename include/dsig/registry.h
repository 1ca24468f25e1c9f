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

/* Number of registered algorithms; dsig_alg_at(i) for i < count enumerates them in a stable order. */
DSIG_EXPORT size_t dsig_alg_count(void);
DSIG_EXPORT const dsig_alg *dsig_alg_at(size_t i);

/* Look up by JOSE name (case-sensitive, as JOSE requires). NULL if unknown. */
DSIG_EXPORT const dsig_alg *dsig_alg_by_name(const char *name);

DSIG_EXPORT const char *dsig_alg_name(const dsig_alg *alg);        /* JOSE "alg", e.g. "ES256" */
DSIG_EXPORT const char *dsig_alg_family(const dsig_alg *alg);      /* e.g. "ECDSA", "HMAC", "EdDSA" */
DSIG_EXPORT const char *dsig_alg_kty(const dsig_alg *alg);         /* JWK kty: "oct","RSA","EC","OKP","AKP" */
DSIG_EXPORT const char *dsig_alg_curve(const dsig_alg *alg);       /* JWK crv, or NULL */
DSIG_EXPORT const char *dsig_alg_description(const dsig_alg *alg); /* one line for humans */
DSIG_EXPORT const char *dsig_alg_baseline(const dsig_alg *alg);    /* bare hash it is compared with */
DSIG_EXPORT unsigned dsig_alg_security_bits(const dsig_alg *alg);  /* classical security level */
DSIG_EXPORT unsigned dsig_alg_flags(const dsig_alg *alg);
DSIG_EXPORT size_t dsig_alg_sig_max(const dsig_alg *alg);          /* largest signature, bytes */
DSIG_EXPORT unsigned dsig_alg_default_bits(const dsig_alg *alg);   /* default key size for keygen */

DSIG_END_DECLS

#endif
