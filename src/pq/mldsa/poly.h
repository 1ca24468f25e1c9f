/*
 * src/pq/mldsa/poly.h — the polynomial type of ML-DSA (R_q = Z_q[X]/(X^256 + 1), FIPS 204 §2.3) and the
 * element-wise helpers the algorithms need. Everything here is branch-free (runs on secrets).
 */
#ifndef DSIG_PQ_MLDSA_POLY_H
#define DSIG_PQ_MLDSA_POLY_H

#include <stdint.h>

#include "pq/mldsa/params.h"

/* 32-byte aligned so vector back-ends may use aligned loads. */
typedef struct mldsa_poly {
    int32_t c[DSIG_MLDSA_N];
} __attribute__((aligned(32))) mldsa_poly;

/* c = a + b (no reduction). */
void dsig_mldsa_poly_add(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b);
/* c = a - b (no reduction). */
void dsig_mldsa_poly_sub(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b);
/* Each coefficient to its representative in about (-6.3·10^6, 6.3·10^6] (exact centred value when
 * that is below 2^22 - 2^13 in magnitude). */
void dsig_mldsa_poly_reduce(mldsa_poly *a);
/* Each coefficient in (-q, q) to [0, q). */
void dsig_mldsa_poly_caddq(mldsa_poly *a);
/* Each coefficient (below 2^31 - 2^22 in magnitude) to [0, q). */
void dsig_mldsa_poly_freeze(mldsa_poly *a);
/* a <<= d (t1 · 2^d, FIPS 204 Algorithm 8 line 9). */
void dsig_mldsa_poly_shiftl(mldsa_poly *a);

/* All-ones (0xFFFFFFFF) if some centred coefficient has |a_i| ≥ bound, else 0. Examines every
 * coefficient (no early exit), for a_i with |a_i| < 2^31. */
uint32_t dsig_mldsa_poly_norm_exceeds(const mldsa_poly *a, int32_t bound);

#endif
