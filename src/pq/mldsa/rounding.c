/* src/pq/mldsa/rounding.c — FIPS 204 §7.4 rounding applied to whole polynomials, portable back-end
 * (contracts in rounding.h; the dispatching forms are in kernels.c). */
#include "pq/mldsa/kernels.h"

/* @spec FIPS 204 Algorithm 35 Power2Round on every coefficient (Algorithm 6 line 6). */
void dsig_mldsa_poly_power2round_c(mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        a1->c[i] = mldsa_power2round(&a0->c[i], a->c[i]);
}

/* @spec FIPS 204 Algorithms 36–38 Decompose / HighBits / LowBits on every coefficient. */
void dsig_mldsa_poly_decompose_c(const mldsa_decomp *d, mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        a1->c[i] = mldsa_decompose(d, &a0->c[i], a->c[i]);
}

/* @spec FIPS 204 Algorithm 39 MakeHint on every coefficient (Algorithm 7 line 26); returns the count of
 * ones, accumulated without branches. */
unsigned dsig_mldsa_poly_make_hint_c(mldsa_poly *h, const mldsa_poly *a0, const mldsa_poly *a1, int32_t gamma2)
{
    unsigned n = 0;
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++) {
        h->c[i] = mldsa_make_hint(a0->c[i], a1->c[i], gamma2);
        n += (unsigned)h->c[i];
    }
    return n;
}

/* @spec FIPS 204 Algorithm 40 UseHint on every coefficient (Algorithm 8 line 10; public data). */
void dsig_mldsa_poly_use_hint_c(const mldsa_decomp *d, mldsa_poly *a, const mldsa_poly *h)
{
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++)
        a->c[i] = mldsa_use_hint(d, a->c[i], h->c[i]);
}
