/*
 * src/pq/mldsa/reduce.h — modular reductions mod q = 8380417 used by every ML-DSA file (FIPS 204
 * Appendix A: Montgomery multiplication with R = 2^32). All branch-free: they run on secret data.
 */
#ifndef DSIG_PQ_MLDSA_REDUCE_H
#define DSIG_PQ_MLDSA_REDUCE_H

#include <stdint.h>

#include "pq/mldsa/params.h"

#define DSIG_MLDSA_QINV 58728449 /* q^-1 mod 2^32 */

/* @spec FIPS 204 Algorithm 49 MontgomeryReduce: for |a| < 2^31·q returns r ≡ a·2^-32 mod q, |r| < q. */
static inline int32_t mldsa_montgomery_reduce(int64_t a)
{
    int32_t t = (int32_t)((uint32_t)(uint64_t)a * (uint32_t)DSIG_MLDSA_QINV);
    return (int32_t)((a - (int64_t)t * DSIG_MLDSA_Q) >> 32);
}

/* @spec FIPS 204 Appendix A (reduction mod q), Barrett-style: for a ≤ 2^31 - 2^22 - 1 returns r ≡ a mod q with -6283009 ≤ r ≤ 6283008. */
static inline int32_t mldsa_reduce32(int32_t a)
{
    int32_t t = (a + (1 << 22)) >> 23; /* ≈ a / q, since q = 2^23 - 2^13 + 1 */
    return a - t * DSIG_MLDSA_Q;
}

/* Adds q if a is negative (branch-free: arithmetic shift of the sign bit). */
static inline int32_t mldsa_caddq(int32_t a)
{
    return a + ((a >> 31) & DSIG_MLDSA_Q);
}

/* Standard representative in [0, q) of any a ≤ 2^31 - 2^22 - 1. */
static inline int32_t mldsa_freeze(int32_t a)
{
    return mldsa_caddq(mldsa_reduce32(a));
}

#endif
