/*
 * src/pq/mldsa/ntt.h — ML-DSA polynomial arithmetic that has a vector back-end: the NTT, its inverse
 * and pointwise products mod q = 8380417, with Montgomery factor R = 2^32.
 *
 * Contracts (every back-end meets them; results of different back-ends may differ but are congruent
 * mod q and within the stated bounds, so they can be mixed freely):
 *   ntt:       in |a_i| < q; out ≡ NTT(a) (FIPS 204 Algorithm 41: â_j = a(ζ^(2·BitRev8(j)+1)), natural
 *              index order j = 0..255, no Montgomery factor), |out_i| < 9q.
 *   invntt_tomont: in |a_i| < q; out ≡ NTT^-1(a)·R mod q (FIPS 204 Algorithm 42 times 2^32), |out_i| < q.
 *   pointwise_montgomery: c_i ≡ a_i·b_i·R^-1, needs |a_i·b_i| < 2^31·q; |c_i| < q.
 *   pointwise_acc_montgomery: c_i ≡ Σ_{j<len} a[j]_i·b[j]_i·R^-1 over `len` ≤ 8 polynomial pairs
 *              (a, b point at len·256 coefficients), needs |a| < q, |b| < 9q; |c_i| < q.
 * Coefficient order is natural everywhere (no back-end-private permutation), so packed encodings and
 * the portable code never see a difference.
 *
 * The portable versions are *_c (ntt.c); *_avx2 (ntt_avx2.c) and *_avx512 (ntt_avx512.c) exist on
 * x86-64. The unsuffixed names forward to the back-end table chosen once per process (kernels.h;
 * DSIG_CPU_DISABLE=avx512 forces the AVX2 code, DSIG_CPU_DISABLE=avx2 the portable code).
 */
#ifndef DSIG_PQ_MLDSA_NTT_H
#define DSIG_PQ_MLDSA_NTT_H

#include <stdint.h>

void dsig_mldsa_ntt(int32_t a[256]);
void dsig_mldsa_invntt_tomont(int32_t a[256]);
void dsig_mldsa_pointwise_montgomery(int32_t c[256], const int32_t a[256], const int32_t b[256]);
void dsig_mldsa_pointwise_acc_montgomery(int32_t c[256], const int32_t *a, const int32_t *b,
                                         unsigned len);

void dsig_mldsa_ntt_c(int32_t a[256]);
void dsig_mldsa_invntt_tomont_c(int32_t a[256]);
void dsig_mldsa_pointwise_montgomery_c(int32_t c[256], const int32_t a[256], const int32_t b[256]);
void dsig_mldsa_pointwise_acc_montgomery_c(int32_t c[256], const int32_t *a, const int32_t *b,
                                           unsigned len);

#if defined(__x86_64__)
#define DSIG_MLDSA_HAVE_AVX2 1
void dsig_mldsa_ntt_avx2(int32_t a[256]);
void dsig_mldsa_invntt_tomont_avx2(int32_t a[256]);
void dsig_mldsa_pointwise_montgomery_avx2(int32_t c[256], const int32_t a[256], const int32_t b[256]);
void dsig_mldsa_pointwise_acc_montgomery_avx2(int32_t c[256], const int32_t *a, const int32_t *b,
                                              unsigned len);
/* AVX-512 (ntt_avx512.c): call only when dsig_cpu_features() reports DSIG_CPU_AVX512. */
#define DSIG_MLDSA_HAVE_AVX512 1
void dsig_mldsa_ntt_avx512(int32_t a[256]);
void dsig_mldsa_invntt_tomont_avx512(int32_t a[256]);
void dsig_mldsa_pointwise_montgomery_avx512(int32_t c[256], const int32_t a[256], const int32_t b[256]);
void dsig_mldsa_pointwise_acc_montgomery_avx512(int32_t c[256], const int32_t *a, const int32_t *b,
                                                unsigned len);
#endif

#endif
