/*
 * src/pq/mldsa/sample.h — FIPS 204 §7.3 pseudorandom sampling: SampleInBall, ExpandA, ExpandS,
 * ExpandMask. The expansions run four SHAKE instances at once (dsig_keccak_x4).
 */
#ifndef DSIG_PQ_MLDSA_SAMPLE_H
#define DSIG_PQ_MLDSA_SAMPLE_H

#include <stdint.h>

#include "pq/mldsa/mldsa.h"
#include "pq/mldsa/poly.h"

/* @spec FIPS 204 Algorithm 32 ExpandA: A[r·l + s] = RejNTTPoly(ρ ‖ s ‖ r), coefficients in [0, q), in
 * the NTT domain. A holds k·l polynomials, row-major. */
void dsig_mldsa_expand_a(const dsig_mldsa_params *p, mldsa_poly *a, const uint8_t rho[32]);

/* @spec FIPS 204 Algorithm 33 ExpandS: s1 (l polynomials), s2 (k) with coefficients in [-η, η]. */
void dsig_mldsa_expand_s(const dsig_mldsa_params *p, mldsa_poly *s1, mldsa_poly *s2, const uint8_t rhop[64]);

/* @spec FIPS 204 Algorithm 34 ExpandMask(ρ'', κ): y (l polynomials), coefficients in (-γ1, γ1]. */
void dsig_mldsa_expand_mask(const dsig_mldsa_params *p, mldsa_poly *y, const uint8_t rhopp[64], unsigned kappa);

/* @spec FIPS 204 Algorithm 29 SampleInBall(c̃): τ coefficients ±1, the rest 0. c̃ is public. */
void dsig_mldsa_sample_in_ball(const dsig_mldsa_params *p, mldsa_poly *c, const uint8_t *ctilde);

#endif
