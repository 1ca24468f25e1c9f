/*
 * src/pq/slhdsa/slhdsa_key.h — private entry points of the SLH-DSA provider for the known-answer tests
 * (tests/slhdsa_api, tests/ct). Not installed, not exported from the shared library (hidden
 * visibility); the tests link the static library.
 */
#ifndef DSIG_PQ_SLHDSA_KEY_H
#define DSIG_PQ_SLHDSA_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

/*
 * A private key of `alg` (one of the twelve SLH-DSA sets) from the FIPS 205 secret key encoding
 * sk = SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root (4n bytes), as ACVP sigGen and BoringSSL give it. Only
 * the length is checked (the JWK import also recomputes PK.root); the public key is sk's last 2n.
 */
int dsig_slhdsa_key_from_sk(dsig_key **out, const dsig_alg *alg, const uint8_t *sk, size_t sk_len);

/*
 * TEST ONLY: every later hedged signature made with this key uses `rnd` (n bytes) as opt_rand instead
 * of fresh OS randomness — how ACVP's randomized vectors (additionalRandomness) are reproduced through
 * the ordinary signer. rnd NULL restores OS randomness. Never use outside tests.
 */
int dsig_slhdsa_key_set_test_rnd(dsig_key *key, const uint8_t *rnd);

/* TEST ONLY: which M' the provider signs / verifies for this key (both directions). */
enum {
    DSIG_SLHDSA_TEST_EXTERNAL = 0,  /* normal: M' = 0 ‖ |ctx| ‖ ctx ‖ M, or the pre-hash form */
    DSIG_SLHDSA_TEST_INTERNAL = 1,  /* M' = M: FIPS 205 Algorithms 19/20 (ACVP internal vectors);
                                       options are ignored */
    DSIG_SLHDSA_TEST_PREHASHED = 2, /* with a pre-hash option the payload already is PH(M)
                                       (BoringSSL's prehash file) */
};
int dsig_slhdsa_key_set_test_interface(dsig_key *key, int iface);

#endif
