/*
 * src/pq/mldsa/mldsa.h — ML-DSA (FIPS 204) internal functions: the byte-level algorithms the ACVP
 * "internal" interface tests, and what the registry provider (mldsa_alg.c) builds the streaming
 * external interface on. Not installed.
 *
 * Sizes and parameters of the three sets are in params.h. All functions are constant time in the
 * secret inputs except the rejection decisions FIPS 204 permits to leak (marked DSIG_CT_DECLASSIFY).
 */
#ifndef DSIG_PQ_MLDSA_H
#define DSIG_PQ_MLDSA_H

#include <stddef.h>
#include <stdint.h>

#include "pq/mldsa/params.h"

#define DSIG_MLDSA_SEEDBYTES 32
#define DSIG_MLDSA_TRBYTES 64
#define DSIG_MLDSA_MUBYTES 64
#define DSIG_MLDSA_RNDBYTES 32

/* The set with that FIPS 204 name ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87") or NULL. */
const dsig_mldsa_params *dsig_mldsa_params_by_name(const char *name);

/* @spec FIPS 204 Algorithm 6 ML-DSA.KeyGen_internal(ξ): pk (p->pk_bytes), sk (p->sk_bytes). */
int dsig_mldsa_keygen_internal(const dsig_mldsa_params *p, uint8_t *pk, uint8_t *sk,
                               const uint8_t xi[DSIG_MLDSA_SEEDBYTES]);

/* tr = H(pk, 64) (FIPS 204 Algorithm 6 line 6; also bytes 64..127 of sk). */
void dsig_mldsa_tr(const dsig_mldsa_params *p, const uint8_t *pk, uint8_t tr[DSIG_MLDSA_TRBYTES]);

/*
 * @spec FIPS 204 Algorithm 7 ML-DSA.Sign_internal, from step 7 on: signs the message representative
 * μ (64 bytes; = H(tr ‖ M', 64) for the external interface) with randomness rnd (32 zero bytes for
 * the deterministic variant). sig receives p->sig_bytes. Returns DSIG_E_KEY for a malformed sk
 * (coefficients of s1/s2 outside [-η, η]) and never returns a signature that fails verification.
 */
int dsig_mldsa_sign_mu(const dsig_mldsa_params *p, uint8_t *sig, const uint8_t *sk,
                       const uint8_t mu[DSIG_MLDSA_MUBYTES], const uint8_t rnd[DSIG_MLDSA_RNDBYTES]);

/*
 * @spec FIPS 204 Algorithm 8 ML-DSA.Verify_internal, given μ. DSIG_OK if valid; DSIG_E_VERIFY (with a
 * detail saying why: wrong length, hint encoding, ‖z‖ too large, challenge mismatch) otherwise.
 */
int dsig_mldsa_verify_mu(const dsig_mldsa_params *p, const uint8_t *pk,
                         const uint8_t mu[DSIG_MLDSA_MUBYTES], const uint8_t *sig, size_t sig_len);

#endif
