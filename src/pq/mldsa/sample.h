/*
 * src/pq/mldsa/sample.h — FIPS 204 §7.3 pseudorandom sampling: SampleInBall, ExpandA, ExpandS,
 * ExpandMask. The expansions run four SHAKE instances at once (dsig_keccak_x4); ExpandA and ExpandS
 * eight when the 8-way Keccak is native (dsig_keccak_x8, AVX-512). ExpandMask stays 4-wide: its
 * stream already wastes no lane, and eight lanes measured no faster (≤ 1.5 %, within noise).
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

/* FIPS 204 Algorithm 34 ExpandMask as a stream over the attempts of one signature: attempt t gets
 * ExpandMask(ρ'', κ = t·l). Holds secrets: wipe it with dsig_mldsa_mask_wipe. */
typedef struct mldsa_mask_stream {
    uint8_t rhopp[64];
    unsigned kappa;       /* κ of the next polynomial handed out (of spare[0] when avail > 0) */
    unsigned avail;       /* masks already made for κ = kappa .. kappa + avail − 1 (≤ 3 < l) */
    mldsa_poly spare[3];
} mldsa_mask_stream;

void dsig_mldsa_mask_init(mldsa_mask_stream *st, const uint8_t rhopp[64]);
/* @spec FIPS 204 Algorithm 34 ExpandMask(ρ'', κ) with κ = st->kappa on entry: y (l polynomials),
 * coefficients in (-γ1, γ1]; st->kappa advances by l. */
void dsig_mldsa_mask_next(const dsig_mldsa_params *p, mldsa_mask_stream *st, mldsa_poly *y);
void dsig_mldsa_mask_wipe(mldsa_mask_stream *st);

/* @spec FIPS 204 Algorithm 29 SampleInBall(c̃): τ coefficients ±1, the rest 0. c̃ is public. */
void dsig_mldsa_sample_in_ball(const dsig_mldsa_params *p, mldsa_poly *c, const uint8_t *ctilde);

#endif
