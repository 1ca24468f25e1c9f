/*
 * dsig/key.h — keys.
 *
 * A dsig_key holds key material of one key type (kty + curve) and, optionally, the algorithm it is
 * bound to (the JWK "alg" member, or the algorithm it was generated for). Signing and verification take
 * the algorithm explicitly and refuse a key whose type, curve or size does not fit it
 * (DSIG_E_KEY_MISMATCH) or whose bound algorithm differs (DSIG_E_ALG_NOT_ALLOWED). An algorithm flagged
 * DSIG_ALG_BOUND_KEY (DSig) takes only keys bound to it: an unbound key is refused too.
 *
 * Private material is wiped when the key is freed.
 */
#ifndef DSIG_KEY_H
#define DSIG_KEY_H

#include "common.h"
#include "registry.h"

DSIG_BEGIN_DECLS

typedef struct dsig_key dsig_key;

typedef struct dsig_keygen_params {
    unsigned bits;          /* RSA modulus / MAC key size in bits; 0 = the algorithm's default */
    const uint8_t *seed;    /* NULL: keys come from the OS CSPRNG; else derived deterministically */
    size_t seed_len;        /* at least 16 bytes when seed != NULL */
    const char *param;      /* parameter set of algorithms that have several per JOSE name (HSS-LMS,
                               XMSS, XMSSMT: the RFC 8554 / RFC 8391 set name, e.g.
                               "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4" or "XMSS-SHA2_10_256");
                               NULL = the algorithm's default; refused by algorithms without sets */
} dsig_keygen_params;

/*
 * Generate a key for `alg`. With params == NULL or params->seed == NULL the OS CSPRNG (getrandom) is
 * used. With a seed, the same (alg, bits, seed) always gives the same key — for reproducible tests and
 * benchmarks; such keys are only as secret as the seed.
 */
DSIG_EXPORT int dsig_key_generate(dsig_key **out, const dsig_alg *alg, const dsig_keygen_params *params);

/* Free a key and wipe its secret material. NULL is accepted. */
DSIG_EXPORT void dsig_key_free(dsig_key *key);

/* A new key holding only the public part (for MAC keys: DSIG_E_UNSUPPORTED, they have none). */
DSIG_EXPORT int dsig_key_public(dsig_key **out, const dsig_key *key);

DSIG_EXPORT int dsig_key_has_private(const dsig_key *key);
DSIG_EXPORT const char *dsig_key_kty(const dsig_key *key);
DSIG_EXPORT const char *dsig_key_curve(const dsig_key *key);   /* NULL for RSA and oct */
DSIG_EXPORT unsigned dsig_key_bits(const dsig_key *key);       /* modulus / key size in bits */
DSIG_EXPORT const dsig_alg *dsig_key_alg(const dsig_key *key); /* bound algorithm or NULL */

/* Bind (or re-bind) a key to an algorithm (NULL: unbind); DSIG_E_KEY_MISMATCH / DSIG_E_KEY_WEAK if its
 * type, curve or size does not fit. */
DSIG_EXPORT int dsig_key_set_alg(dsig_key *key, const dsig_alg *alg);

/* Check that `key` can be used with `alg`: DSIG_OK; DSIG_E_ALG_NOT_ALLOWED if it is bound to another
 * algorithm, or unbound for a DSIG_ALG_BOUND_KEY algorithm (the detail says how to make a key for it);
 * DSIG_E_KEY_MISMATCH / DSIG_E_KEY_WEAK for a type, curve or size that does not fit. */
DSIG_EXPORT int dsig_key_check_alg(const dsig_key *key, const dsig_alg *alg);

/*
 * PEM (PKCS#8 "PRIVATE KEY" or SubjectPublicKeyInfo "PUBLIC KEY") for RSA, EC and OKP keys, so that
 * OpenSSL users can bring their keys. Import detects the key type; the result is unbound.
 * Export allocates *pem (NUL-terminated); free it with dsig_free(). Unencrypted PKCS#8 only.
 */
DSIG_EXPORT int dsig_key_import_pem(dsig_key **out, const char *pem, size_t len);
DSIG_EXPORT int dsig_key_export_pem(const dsig_key *key, int include_private, char **pem, size_t *len);

DSIG_END_DECLS

#endif
