/*
 * tests/state/toy.h — a test-only stateful "signature" scheme (NOT secure: the public key is the
 * secret) compiled into the state tests, never into the library. It exercises the state-file layer
 * exactly as LMS/XMSS do: sign_init takes an index with dsig_state_take_index.
 *
 *   pub  = seed (32) || u64be capacity          priv = seed (32) || u64be capacity
 *   sig  = u64be q || SHA-256(seed || u64be q || message)
 *
 * dsig_keygen_params.bits chooses the capacity (0 = 1000).
 */
#ifndef DSIG_TEST_STATE_TOY_H
#define DSIG_TEST_STATE_TOY_H

#include <stdint.h>

#include "core/internal.h"

#define TOY_SIG_LEN 40

extern const dsig_alg toy_alg;
/* Register toy_alg with dsig_state_open's name lookup (test hook in statefile.c). */
void toy_register(void);
/* Test hook of statefile.c. */
void dsig_state_set_test_alg(const dsig_alg *alg);
/* The index a toy signature used. */
uint64_t toy_sig_index(const uint8_t *sig);

#endif
