/*
 * tests/bft/byz.h — what a Byzantine process does, shared by the property test's simulated processes
 * (test_bft_sim.c) and the Byzantine OS process of the fault tests (bft_byz.c): it runs an honest core
 * and rewrites or adds frames with the protocols' own encoders, signing with its own key only.
 */
#ifndef DSIG_TESTS_BFT_BYZ_H
#define DSIG_TESTS_BFT_BYZ_H

#include "bft/bft.h"

typedef int (*byz_sign_fn)(void *arg, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sig_len);

/*
 * The conflicting twin of a frame this process's honest core sends: a SEND (consistent or reliable
 * broadcast) of another value, or a PRE-PREPARE of the null request instead of a client's, each validly
 * signed by this process. 1 with the frame in *out, 0 if the frame is not one of those.
 */
int byz_equivocate(const bft_core *c, byz_sign_fn sign, void *arg, const uint8_t *frame, size_t len, bft_buf *out);

/* splitmix64 */
uint64_t byz_rand(uint64_t *s);

/*
 * One injected frame for `to`, chosen by the generator among: random bytes behind a valid header of a
 * random type of the protocol class `cls` (BFT_CLASS_*), a replay of a captured frame, a captured frame
 * with a bit flipped / cut / extended, and a captured vote moved to the next instance or sequence number
 * (its signature then covers another statement). `captured` may be empty.
 */
void byz_inject(const bft_core *c, int cls, uint64_t *rng, const bft_buf *captured, size_t n_captured,
                bft_buf *out);

#endif
