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
    unsigned bits;          /* RSA modulus / MAC key size in bits; 0 = the algorithm's default.
                               Key types of one size (EC, OKP, AKP) refuse any other value
                               (DSIG_E_ARG): ES256 with bits 384 is an error, never a P-256 key */
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
 * Returns DSIG_OK; DSIG_E_ARG (NULL out or alg, a seed under 16 bytes, a size for a key type of one
 * size, a parameter-set name over 400 characters or unknown); DSIG_E_KEY_WEAK (bits under the
 * algorithm's minimum); DSIG_E_UNSUPPORTED (a parameter set for an algorithm without sets);
 * DSIG_E_RNG, DSIG_E_NOMEM, DSIG_E_CRYPTO.
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
/* The key's own "kid" (from the JWK it was imported from), or NULL when it has none: JWK export and
 * JWS headers (dsig_jws_sign_opts.include_kid) then use the RFC 7638 thumbprint. */
DSIG_EXPORT const char *dsig_key_kid(const dsig_key *key);

/*
 * The algorithm to use with `key` when the caller names none: its bound algorithm, else the only
 * registered algorithm its key type admits (EC P-256 -> ES256, P-384 -> ES384, P-521 -> ES512, OKP
 * Ed25519 -> Ed25519, Ed448 -> Ed448, ...; algorithms that take a key only when it is bound to them,
 * DSig, do not count). Never decided from a JWS header.
 * Returns DSIG_OK with *alg set; DSIG_E_ALG_NOT_ALLOWED when the key is unbound and several
 * algorithms fit its type (RSA, oct: the detail names them); DSIG_E_UNSUPPORTED when none does;
 * DSIG_E_ARG for NULL arguments. *alg is NULL on failure.
 */
DSIG_EXPORT int dsig_key_infer_alg(const dsig_key *key, const dsig_alg **alg);

/* Bind (or re-bind) a key to an algorithm (NULL: unbind); DSIG_E_KEY_MISMATCH / DSIG_E_KEY_WEAK if its
 * type, curve or size does not fit. */
DSIG_EXPORT int dsig_key_set_alg(dsig_key *key, const dsig_alg *alg);

/* Check that `key` can be used with `alg`: DSIG_OK; DSIG_E_ALG_NOT_ALLOWED if it is bound to another
 * algorithm, or unbound for a DSIG_ALG_BOUND_KEY algorithm (the detail says how to make a key for it);
 * DSIG_E_KEY_MISMATCH / DSIG_E_KEY_WEAK for a type, curve or size that does not fit. */
DSIG_EXPORT int dsig_key_check_alg(const dsig_key *key, const dsig_alg *alg);

/*
 * PEM and DER for RSA, EC and OKP keys, so that OpenSSL users can bring their keys. Import reads every
 * unencrypted form `openssl` writes: PKCS#8 ("PRIVATE KEY"), SEC1 ("EC PRIVATE KEY", also after the
 * "EC PARAMETERS" block of `openssl ecparam -genkey`), PKCS#1 ("RSA PRIVATE KEY", "RSA PUBLIC KEY")
 * and SubjectPublicKeyInfo ("PUBLIC KEY"); DER is the same structures without the text armour. The
 * key type is detected; the result is unbound (no algorithm). Input is bounded (DSIG_JWK_MAX_BYTES).
 * Returns DSIG_OK; DSIG_E_FORMAT (not such a key; for DER also: not starting with 0x30);
 * DSIG_E_UNSUPPORTED (an encrypted key, or a key type without a provider); DSIG_E_TOO_LARGE;
 * DSIG_E_KEY / DSIG_E_KEY_WEAK / DSIG_E_POINT (the provider refused the key material); DSIG_E_ARG.
 * Export writes PKCS#8 (private) or SubjectPublicKeyInfo (public) PEM and allocates *pem
 * (NUL-terminated); free it with dsig_free().
 */
DSIG_EXPORT int dsig_key_import_pem(dsig_key **out, const char *pem, size_t len);
DSIG_EXPORT int dsig_key_import_der(dsig_key **out, const uint8_t *der, size_t len);
DSIG_EXPORT int dsig_key_export_pem(const dsig_key *key, int include_private, char **pem, size_t *len);

DSIG_END_DECLS

#endif
