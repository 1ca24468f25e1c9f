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
 * Generate a key for `alg`, bound to it. With params == NULL or params->seed == NULL the OS CSPRNG
 * (getrandom) is used. With a seed, the same (alg, bits, param, seed) always gives the same key — for
 * reproducible tests and benchmarks; such keys are only as secret as the seed. A stateful algorithm's
 * key made here can verify but never sign: use dsig_state_create(). *out is NULL on failure.
 * @retval DSIG_OK            *out holds the new key (free it with dsig_key_free).
 * @retval DSIG_E_ARG         out or alg NULL, a seed under 16 bytes, a size for a key type of one size,
 *                            a parameter-set name over 400 characters or unknown to the algorithm.
 * @retval DSIG_E_KEY_WEAK    bits under the algorithm's minimum (RSA: 2048).
 * @retval DSIG_E_UNSUPPORTED a parameter set for an algorithm without sets.
 * @retval DSIG_E_RNG         the OS random generator failed.
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_CRYPTO      a back-end failed to start or to generate the key.
 */
DSIG_EXPORT int dsig_key_generate(dsig_key **out, const dsig_alg *alg, const dsig_keygen_params *params);

/*
 * Free a key and wipe its secret material. A key opened from a state file (dsig_state_open) is closed
 * first: its lock is released and the indices still reserved in its window are given up, never
 * reused. NULL is accepted.
 */
DSIG_EXPORT void dsig_key_free(dsig_key *key);

/*
 * A new key holding only the public part of `key`, with the same bound algorithm and "kid". *out is
 * NULL on failure.
 * @retval DSIG_OK            *out holds the public key (free it with dsig_key_free).
 * @retval DSIG_E_ARG         out or key NULL.
 * @retval DSIG_E_UNSUPPORTED a secret key type (oct: MAC keys have no public part).
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_CRYPTO      the back-end could not copy the public part.
 */
DSIG_EXPORT int dsig_key_public(dsig_key **out, const dsig_key *key);

/*
 * Whether `key` holds private material (can sign). A stateful key can sign only when it was opened
 * from its state file as well.
 * @retval 1 the key has a private part.
 * @retval 0 it is a public key, or key is NULL.
 */
DSIG_EXPORT int dsig_key_has_private(const dsig_key *key);

/*
 * The key's JWK key type. key must not be NULL.
 * @return a static string: "oct", "RSA", "EC", "OKP" or "AKP".
 */
DSIG_EXPORT const char *dsig_key_kty(const dsig_key *key);

/*
 * The key's JWK curve ("crv"), e.g. "P-256", "Ed25519", "SM2". key must not be NULL.
 * @return a static string, or NULL for key types without a curve (RSA, oct, AKP).
 */
DSIG_EXPORT const char *dsig_key_curve(const dsig_key *key);

/*
 * The key's size in bits: the RSA modulus, the MAC key length, or the fixed size of its curve or
 * parameter set. key must not be NULL.
 * @return the size in bits, 0 for a key type that reports none.
 */
DSIG_EXPORT unsigned dsig_key_bits(const dsig_key *key);

/*
 * The algorithm the key is bound to (the JWK "alg" it was imported with, the algorithm it was
 * generated for, or dsig_key_set_alg). key must not be NULL.
 * @return the descriptor, or NULL for an unbound key (PEM and DER keys always are).
 */
DSIG_EXPORT const dsig_alg *dsig_key_alg(const dsig_key *key);

/*
 * The key's own "kid" (from the JWK it was imported from). JWK export and JWS headers
 * (dsig_jws_sign_opts.include_kid) use it, else the RFC 7638 thumbprint.
 * @return the NUL-terminated kid, valid as long as the key; NULL when it has none or key is NULL.
 */
DSIG_EXPORT const char *dsig_key_kid(const dsig_key *key);

/*
 * The algorithm to use with `key` when the caller names none: its bound algorithm, else the only
 * registered algorithm its key type admits (EC P-256 -> ES256, P-384 -> ES384, P-521 -> ES512, OKP
 * Ed25519 -> Ed25519, Ed448 -> Ed448, ...; algorithms that take a key only when it is bound to them,
 * DSig, do not count). Never decided from a JWS header.
 * *alg is NULL on failure.
 * @retval DSIG_OK                *alg is set.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is unbound and several algorithms fit its type (RSA, oct:
 *                                the detail names them).
 * @retval DSIG_E_UNSUPPORTED     no registered algorithm takes keys of its type.
 * @retval DSIG_E_ARG             key or alg NULL.
 */
DSIG_EXPORT int dsig_key_infer_alg(const dsig_key *key, const dsig_alg **alg);

/*
 * Bind (or re-bind) a key to an algorithm; alg NULL unbinds it. On failure the binding is unchanged.
 * @retval DSIG_OK             the key is bound to alg (or unbound).
 * @retval DSIG_E_ARG          key NULL.
 * @retval DSIG_E_KEY_MISMATCH the key's type or curve does not fit alg.
 * @retval DSIG_E_KEY_WEAK     the key is smaller than alg's minimum.
 */
DSIG_EXPORT int dsig_key_set_alg(dsig_key *key, const dsig_alg *alg);

/*
 * Check that `key` can be used with `alg`, as every sign and verify entry point does first.
 * @retval DSIG_OK                the key fits.
 * @retval DSIG_E_ARG             key or alg NULL.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is bound to another algorithm, or unbound for a
 *                                DSIG_ALG_BOUND_KEY algorithm (the detail says how to make a key for it).
 * @retval DSIG_E_KEY_MISMATCH    the key's type or curve does not fit.
 * @retval DSIG_E_KEY_WEAK        the key is smaller than the algorithm's minimum.
 */
DSIG_EXPORT int dsig_key_check_alg(const dsig_key *key, const dsig_alg *alg);

/*
 * PEM and DER for RSA, EC and OKP keys, so that OpenSSL users can bring their keys. Import reads every
 * unencrypted form `openssl` writes: PKCS#8 ("PRIVATE KEY"), SEC1 ("EC PRIVATE KEY", also after the
 * "EC PARAMETERS" block of `openssl ecparam -genkey`), PKCS#1 ("RSA PRIVATE KEY", "RSA PUBLIC KEY")
 * and SubjectPublicKeyInfo ("PUBLIC KEY"); DER is the same structures without the text armour. The
 * key type is detected; the result is unbound (no algorithm). Input is bounded (DSIG_JWK_MAX_BYTES).
 * The first block holding a key is read ("EC PARAMETERS" before it is skipped). *out is NULL on
 * failure.
 * @retval DSIG_OK            *out holds the key (free it with dsig_key_free).
 * @retval DSIG_E_ARG         out or pem NULL.
 * @retval DSIG_E_TOO_LARGE   len over DSIG_JWK_MAX_BYTES.
 * @retval DSIG_E_FORMAT      no key block, or a block that is not such a key.
 * @retval DSIG_E_UNSUPPORTED an encrypted key, or a key type without a provider.
 * @retval DSIG_E_KEY         the provider refused the key material.
 * @retval DSIG_E_KEY_WEAK    an RSA modulus under 2048 bits.
 * @retval DSIG_E_POINT       an EC public point not on its curve.
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_CRYPTO      a back-end failed to start.
 */
DSIG_EXPORT int dsig_key_import_pem(dsig_key **out, const char *pem, size_t len);

/*
 * The same structures as dsig_key_import_pem without the text armour (DER: PKCS#8, SEC1, PKCS#1 or
 * SubjectPublicKeyInfo). The result is unbound. *out is NULL on failure.
 * @retval DSIG_OK            *out holds the key (free it with dsig_key_free).
 * @retval DSIG_E_ARG         out or der NULL.
 * @retval DSIG_E_TOO_LARGE   len over DSIG_JWK_MAX_BYTES.
 * @retval DSIG_E_FORMAT      empty, not starting with an ASN.1 SEQUENCE (0x30), or not such a key.
 * @retval DSIG_E_UNSUPPORTED a key type without a provider.
 * @retval DSIG_E_KEY         the provider refused the key material.
 * @retval DSIG_E_KEY_WEAK    an RSA modulus under 2048 bits.
 * @retval DSIG_E_POINT       an EC public point not on its curve.
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_CRYPTO      a back-end failed to start.
 */
DSIG_EXPORT int dsig_key_import_der(dsig_key **out, const uint8_t *der, size_t len);

/*
 * Export an RSA, EC or OKP key as PEM: PKCS#8 ("PRIVATE KEY") with include_private != 0, else
 * SubjectPublicKeyInfo ("PUBLIC KEY"). *pem is allocated and NUL-terminated (free it with
 * dsig_free()); *len (may be NULL) receives its length without the NUL. *pem is NULL on failure.
 * @retval DSIG_OK            *pem holds the text.
 * @retval DSIG_E_ARG         key or pem NULL.
 * @retval DSIG_E_UNSUPPORTED a key type without a PEM form (oct, AKP, the GOST curves).
 * @retval DSIG_E_NO_PRIVATE  include_private for a public key.
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_CRYPTO      OpenSSL could not encode the key.
 */
DSIG_EXPORT int dsig_key_export_pem(const dsig_key *key, int include_private, char **pem, size_t *len);

DSIG_END_DECLS

#endif
