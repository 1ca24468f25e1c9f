/*
 * tests/state/sigindex.h — the one-time index a stateful signature carries, parsed from its bytes: the
 * leaf index of an HSS signature (every level's q combined) and the idx field of an XMSS / XMSS^MT
 * signature. What the tests that prove "no index twice" count.
 */
#ifndef DSIG_TEST_SIGINDEX_H
#define DSIG_TEST_SIGINDEX_H

#include <stddef.h>
#include <stdint.h>

/* The global leaf index of an HSS signature (RFC 8554 §6.2; SHA-256/M32/N32 sets), or -1 if the bytes
 * do not have that structure exactly (a torn record). */
int64_t sigindex_hss(const uint8_t *sig, size_t len);
/* The idx of an XMSS (idx_bytes 4) or XMSS^MT (ceil(h / 8)) signature (RFC 8391 §4.1.8 / §4.2.3). */
int64_t sigindex_xmss(const uint8_t *sig, size_t len, unsigned idx_bytes);

#endif
