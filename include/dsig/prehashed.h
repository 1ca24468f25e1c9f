/*
 * dsig/prehashed.h — signing a digest computed elsewhere, for the algorithms whose signature keeps its
 * standard meaning over a hash the signer never saw the message of.
 *
 * The signature is exactly the one the ordinary operation makes over any message M with that digest:
 *   RS*, PS*, ES*     the hash the algorithm names (RS256: "SHA-256", ...) — the RSA or ECDSA key
 *                     operation on H(M), as RFC 8017 §8 and FIPS 186-5 §6.4 define it; dsig_verify of
 *                     M, or dsig_verify_digest of H(M), accepts it.
 *   ML-DSA-*          "ExternalMu": μ (64 bytes, FIPS 204 Algorithm 7 line 6, dsig_mldsa_mu) — the pure
 *                     ML-DSA signature of the (M, context) μ stands for; any FIPS 204 verifier accepts
 *                     it over M. Or a HashML-DSA pre-hash name ("SHA-256", "SHA-512", "SHAKE128", ...
 *                     as dsig_sign_opts.prehash takes them, empty context): the HashML-DSA signature
 *                     (FIPS 204 Algorithm 4) of M with PH(M) = digest; dsig_verify_ex with the same
 *                     opts.prehash accepts it.
 * Every other algorithm refuses (DSIG_E_UNSUPPORTED): EdDSA and SLH-DSA sign the message itself (their
 * pre-hash variants are other algorithms), a MAC or DSig signature over a client's hash is not what
 * their verifiers check, and a stateful key's index is not spent blind.
 *
 * SECURITY CONSIDERATIONS. Whoever may call dsig_sign_digest with a key can make that key sign any
 * message they can hash, without showing it: the same power as signing the message, with nothing for
 * the signer to inspect or log but the digest. Grant it as such (dsig serve has its own
 * "sign-digest" permission and records the digest it signed). The digest must come from a collision-
 * resistant hash of the whole message; a wrong-length digest is refused, never padded or cut.
 */
#ifndef DSIG_PREHASHED_H
#define DSIG_PREHASHED_H

#include "common.h"
#include "key.h"
#include "registry.h"

DSIG_BEGIN_DECLS

/*
 * The hash names alg signs a digest of.
 * @return a ", "-separated list ("SHA-256"; "ExternalMu, SHA-224, SHA-256, ..."), static; NULL when alg
 *         is NULL or signs no digest.
 */
DSIG_EXPORT const char *dsig_alg_digest_hashes(const dsig_alg *alg);

/*
 * Sign `digest` (digest_len bytes, the output of `hash`) with a private key, as described above.
 * @spec RFC 8017 §8.1.1 / §8.2.1 (RS*, PS*), FIPS 186-5 §6.4.1 + RFC 7518 §3.4 (ES*: R‖S), FIPS 204
 *       Algorithm 7 from line 7 (ExternalMu) and Algorithm 4 (HashML-DSA).
 * @retval DSIG_OK                *sig_len bytes of signature in sig.
 * @retval DSIG_E_ARG             a NULL argument (digest may be NULL only with digest_len 0).
 * @retval DSIG_E_UNSUPPORTED     alg signs no digest, or not one of `hash` (the detail names what it takes).
 * @retval DSIG_E_FORMAT          digest_len is not the output length of `hash`.
 * @retval DSIG_E_NO_PRIVATE      key has no private part.
 * @retval DSIG_E_ALG_NOT_ALLOWED the key is bound to another algorithm.
 * @retval DSIG_E_KEY_MISMATCH    the key's type does not fit alg.
 * @retval DSIG_E_BUFFER          cap is under the signature's size (nothing written).
 * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO, DSIG_E_RNG  resources, a back-end, randomness.
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_sign_digest(const dsig_alg *alg, const dsig_key *key, const char *hash,
                                                  const uint8_t *digest, size_t digest_len, uint8_t *sig,
                                                  size_t cap, size_t *sig_len);

/*
 * Verify sig as alg's signature of the message whose `hash` is `digest`.
 * @retval DSIG_OK            the signature is valid.
 * @retval DSIG_E_VERIFY      it is not (also a malformed signature of any length).
 * @retval DSIG_E_ARG, DSIG_E_UNSUPPORTED, DSIG_E_FORMAT, DSIG_E_ALG_NOT_ALLOWED, DSIG_E_KEY_MISMATCH
 *                            as for dsig_sign_digest.
 * @retval DSIG_E_KEY         the key holds no public key.
 * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO  resources, a back-end (not a verdict).
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_verify_digest(const dsig_alg *alg, const dsig_key *key, const char *hash,
                                                    const uint8_t *digest, size_t digest_len, const uint8_t *sig,
                                                    size_t sig_len);

DSIG_END_DECLS

#endif
