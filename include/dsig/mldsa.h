/*
 * dsig/mldsa.h — ML-DSA (FIPS 204) specifics: the "external μ" interface.
 *
 * ML-DSA-44, ML-DSA-65 and ML-DSA-87 are ordinary registry algorithms: generate keys, sign and verify
 * them with key.h and stream.h like any other (streaming reads the payload once, constant memory), and
 * pass a context string, deterministic signing or a pre-hash (HashML-DSA) with dsig_sign_opts
 * (dsig_sign_ex, dsig_sign_init_ex, ...). Keys are JWKs of key type "AKP" (RFC 9964):
 *   {"kty":"AKP","alg":"ML-DSA-65","pub":"<base64url pk>","priv":"<base64url 32-byte seed>"}
 *
 * This header adds the split that FIPS 204 calls "external μ" (§6.2, Algorithm 7 line 6 computed
 * outside the signer): the message representative
 *     μ = SHAKE256(tr ‖ 0x00 ‖ |ctx| ‖ ctx ‖ M, 64 bytes),  tr = SHAKE256(pk, 64 bytes)
 * needs only the PUBLIC key, so a party holding the message can compute μ and send 64 bytes to the
 * party holding the private key (an HSM, a remote signer), which signs μ. The signature is the
 * ordinary ML-DSA signature of (M, ctx): any verifier accepts it with dsig_verify_ex.
 *
 * Failures return a DSIG_E_* code with a detail (dsig_last_error_detail()); nothing is written to the
 * outputs then.
 */
#ifndef DSIG_MLDSA_H
#define DSIG_MLDSA_H

#include "common.h"
#include "key.h"

DSIG_BEGIN_DECLS

#define DSIG_MLDSA_MU_LEN 64  /* bytes of μ */
#define DSIG_MLDSA_RND_LEN 32 /* bytes of the signing randomness rnd */

/*
 * @spec FIPS 204 Algorithm 2 lines 1–10 and Algorithm 7 line 6: μ of (msg, context) for `key` (an
 * ML-DSA key, public or private), the same μ streaming signing computes. context may be NULL when
 * context_len is 0. Pure ML-DSA only: for HashML-DSA sign with dsig_sign_ex and opts.prehash.
 * @retval DSIG_OK             mu holds the 64 bytes.
 * @retval DSIG_E_ARG          key or mu NULL, msg NULL with msg_len > 0, context NULL with
 *                             context_len > 0, or context_len over 255 (FIPS 204 Algorithm 2 line 1).
 * @retval DSIG_E_KEY_MISMATCH key is not an ML-DSA key.
 * @retval DSIG_E_NOMEM        out of memory.
 */
DSIG_EXPORT int dsig_mldsa_mu(const dsig_key *key, const uint8_t *context, size_t context_len,
                              const void *msg, size_t msg_len, uint8_t mu[DSIG_MLDSA_MU_LEN]);

/*
 * @spec FIPS 204 Algorithm 7 from line 7: sign μ with a private ML-DSA key. rnd NULL = hedged (32
 * fresh bytes from the OS CSPRNG: the default, and the recommended choice); otherwise the 32 bytes
 * given — 32 zero bytes give the deterministic variant. cap must be at least dsig_alg_sig_max() of the
 * key's algorithm; *sig_len receives the signature length.
 * @retval DSIG_OK             sig holds the signature of the (M, ctx) that μ represents.
 * @retval DSIG_E_ARG          key, mu, sig or sig_len NULL.
 * @retval DSIG_E_KEY_MISMATCH key is not an ML-DSA key.
 * @retval DSIG_E_NO_PRIVATE   key is a public key.
 * @retval DSIG_E_BUFFER       cap under the signature size (nothing written).
 * @retval DSIG_E_RNG          rnd NULL and the OS random generator failed.
 */
DSIG_EXPORT int dsig_mldsa_sign_external_mu(const dsig_key *key, const uint8_t mu[DSIG_MLDSA_MU_LEN],
                                            const uint8_t *rnd, uint8_t *sig, size_t cap, size_t *sig_len);

/*
 * @spec FIPS 204 Algorithm 8 from line 7: verify sig as a signature of μ under the public part of
 * `key` (an ML-DSA key).
 * @retval DSIG_OK             the signature is valid for μ.
 * @retval DSIG_E_VERIFY       it is not (detail: wrong length, malformed hint, norm bound, challenge
 *                             mismatch).
 * @retval DSIG_E_ARG          key or mu NULL, or sig NULL with sig_len > 0.
 * @retval DSIG_E_KEY_MISMATCH key is not an ML-DSA key.
 * @retval DSIG_E_KEY          the key holds no public key.
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_mldsa_verify_external_mu(const dsig_key *key,
                                                               const uint8_t mu[DSIG_MLDSA_MU_LEN],
                                                               const uint8_t *sig, size_t sig_len);

DSIG_END_DECLS

#endif
