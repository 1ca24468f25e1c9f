/*
 * src/pq/mldsa/mldsa_key.h — private entry points of the ML-DSA provider for the known-answer tests
 * (tests/mldsa_api). Not installed, not exported from the shared library (hidden visibility); the
 * tests link the static library.
 */
#ifndef DSIG_PQ_MLDSA_KEY_H
#define DSIG_PQ_MLDSA_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

/*
 * A private key of `alg` (ML-DSA-44/65/87) from the expanded FIPS 204 secret key encoding sk
 * (Algorithm 24 skEncode: ρ ‖ K ‖ tr ‖ s1 ‖ s2 ‖ t0), as ACVP sigGen and Wycheproof "sign_noseed"
 * give it, plus optionally its public key (pk NULL: the key can sign but not verify). Such a key has
 * no seed ξ, so its private part cannot be exported as a JWK. The encoding is not validated beyond
 * its length: a malformed s1/s2 makes signing fail with DSIG_E_KEY.
 */
int dsig_mldsa_key_from_expanded(dsig_key **out, const dsig_alg *alg, const uint8_t *sk,
                                 size_t sk_len, const uint8_t *pk, size_t pk_len);

/*
 * TEST ONLY: every later hedged signature made with this key uses `rnd` (32 bytes) instead of fresh
 * OS randomness — how the ACVP / Wycheproof hedged vectors are reproduced through the ordinary
 * streaming signer. rnd NULL restores OS randomness. Never use outside tests.
 */
int dsig_mldsa_key_set_test_rnd(dsig_key *key, const uint8_t *rnd);

#endif
