/* src/pq/mldsa/poly.c — element-wise polynomial helpers of ML-DSA, portable back-end (contracts in
 * poly.h; the dispatching forms are in kernels.c). */
#include "pq/mldsa/kernels.h"

#include "pq/mldsa/reduce.h"

/* c = a + b, coefficient-wise (FIPS 204 Algorithm 44 AddNTT works the same in either domain). */
void dsig_mldsa_poly_add_c(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        c->c[i] = a->c[i] + b->c[i];
}

/* c = a - b, coefficient-wise. */
void dsig_mldsa_poly_sub_c(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        c->c[i] = a->c[i] - b->c[i];
}

/* Barrett-style reduction of every coefficient (mldsa_reduce32). */
void dsig_mldsa_poly_reduce_c(mldsa_poly *a)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        a->c[i] = mldsa_reduce32(a->c[i]);
}

/* Maps (-q, q) to [0, q). */
void dsig_mldsa_poly_caddq_c(mldsa_poly *a)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        a->c[i] = mldsa_caddq(a->c[i]);
}

/* Standard representatives [0, q). */
void dsig_mldsa_poly_freeze_c(mldsa_poly *a)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        a->c[i] = mldsa_freeze(a->c[i]);
}

/* Multiplies by 2^d (t1 coefficients are < 2^10, so the result stays below q). */
void dsig_mldsa_poly_shiftl_c(mldsa_poly *a)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        a->c[i] = (int32_t)((uint32_t)a->c[i] << DSIG_MLDSA_D);
}

/*
 * @spec FIPS 204 §2.3 infinity norm, compared against a bound: accumulates a mask over all
 * coefficients instead of returning at the first large one, so the time does not depend on where
 * (or whether) a secret coefficient is large. The caller declassifies only the final verdict.
 */
uint32_t dsig_mldsa_poly_norm_exceeds_c(const mldsa_poly *a, int32_t bound)
{
    uint32_t bad = 0;
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++) {
        int32_t x = a->c[i];
        int32_t s = x >> 31;
        int32_t abs = (x ^ s) - s;               /* |x| without a branch */
        bad |= (uint32_t)(bound - 1 - abs) >> 31; /* 1 iff |x| ≥ bound */
    }
    return 0u - bad;
}
