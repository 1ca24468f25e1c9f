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
 * μ of (msg, context) for `key` (an ML-DSA key, public or private; else DSIG_E_KEY_MISMATCH).
 * context may be NULL when context_len is 0; context_len > 255 gives DSIG_E_ARG (FIPS 204 Alg 2 line
 * 1). Pure ML-DSA only: for HashML-DSA sign with dsig_sign_ex and opts.prehash.
 */
DSIG_EXPORT int dsig_mldsa_mu(const dsig_key *key, const uint8_t *context, size_t context_len,
                              const void *msg, size_t msg_len, uint8_t mu[DSIG_MLDSA_MU_LEN]);

/*
 * @spec FIPS 204 Algorithm 7 from line 7: sign μ with a private ML-DSA key. rnd NULL = hedged (32
 * fresh bytes from the OS CSPRNG: the default, and the recommended choice); otherwise the 32 bytes
 * given — 32 zero bytes give the deterministic variant. cap must be at least dsig_alg_sig_max() of the
 * key's algorithm (DSIG_E_BUFFER otherwise); *sig_len receives the signature length.
 */
DSIG_EXPORT int dsig_mldsa_sign_external_mu(const dsig_key *key, const uint8_t mu[DSIG_MLDSA_MU_LEN],
                                            const uint8_t *rnd, uint8_t *sig, size_t cap, size_t *sig_len);

/*
 * @spec FIPS 204 Algorithm 8 from line 7: DSIG_OK if sig is a valid signature of μ under the public
 * part of `key`; DSIG_E_VERIFY (detail: wrong length, malformed hint, norm bound, challenge mismatch)
 * otherwise; other codes for unusable arguments.
 */
DSIG_EXPORT DSIG_WARN_UNUSED int dsig_mldsa_verify_external_mu(const dsig_key *key,
                                                               const uint8_t mu[DSIG_MLDSA_MU_LEN],
                                                               const uint8_t *sig, size_t sig_len);

DSIG_END_DECLS

#endif
