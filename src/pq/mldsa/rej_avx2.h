/*
 * src/pq/mldsa/rej_avx2.h — AVX2 rejection sampling of NTT-domain coefficients (FIPS 204 Algorithm 30
 * RejNTTPoly, inner loop with Algorithm 14 CoeffFromThreeBytes) from SHAKE128 output already squeezed
 * into a buffer. Call only when dsig_cpu_features() reports DSIG_CPU_AVX2.
 */
#ifndef DSIG_PQ_MLDSA_REJ_AVX2_H
#define DSIG_PQ_MLDSA_REJ_AVX2_H

#include <stdint.h>

#include "pq/mldsa/ntt.h" /* DSIG_MLDSA_HAVE_AVX2 */

#ifdef DSIG_MLDSA_HAVE_AVX2
/*
 * Reads 3-byte groups of buf (in order, at most buflen bytes; a trailing partial group is ignored),
 * forms z = b0 + 256·b1 + 65536·(b2 mod 128) and appends each z < q to a, stopping once `len`
 * coefficients are written. Returns the number n ≤ len of coefficients appended: a[0..n) are exactly
 * those of the scalar loop, in order; a[n..len) may hold scratch (rejected candidates, public); a[len]
 * and beyond are never written. Timing depends on which candidates are
 * rejected: fine for the public matrix A (ρ is public), not for secret data.
 */
unsigned dsig_mldsa_rej_uniform_avx2(int32_t *a, unsigned len, const uint8_t *buf, unsigned buflen);
#endif

#endif
