/*
 * src/pq/mldsa/rounding.h — FIPS 204 §7.4 rounding: Power2Round, Decompose, HighBits/LowBits, MakeHint,
 * UseHint, per coefficient (inline) and per polynomial (rounding.c). The per-coefficient forms are
 * branch-free because key generation and signing apply them to secrets.
 */
#ifndef DSIG_PQ_MLDSA_ROUNDING_H
#define DSIG_PQ_MLDSA_ROUNDING_H

#include <stdint.h>

#include "pq/mldsa/poly.h"

/* @spec FIPS 204 Algorithm 35 Power2Round: a in [0, q) → a1·2^13 + a0 with a0 in (-2^12, 2^12]. */
static inline int32_t mldsa_power2round(int32_t *a0, int32_t a)
{
    int32_t a1 = (a + (1 << (DSIG_MLDSA_D - 1)) - 1) >> DSIG_MLDSA_D;
    *a0 = a - (a1 << DSIG_MLDSA_D);
    return a1;
}

/*
 * Precomputed constants of Decompose for one γ2: the divisor 2γ2, the quotient count m = (q-1)/(2γ2)
 * and a multiplier so that floor(x / 2γ2) = (x · mul) >> 48 for every 0 ≤ x < 2^24 (48 ≥ 24 + log2(2γ2)
 * + 1 makes the rounding error of mul too small to change a quotient; checked exhaustively by the test).
 */
typedef struct mldsa_decomp {
    int32_t alpha; /* 2γ2 */
    int32_t gamma2;
    uint32_t m;    /* (q-1)/α: 16 or 44 */
    uint64_t mul;  /* ceil(2^48 / α) */
} mldsa_decomp;

static inline mldsa_decomp mldsa_decomp_init(int32_t gamma2)
{
    mldsa_decomp d;
    d.alpha = 2 * gamma2;
    d.gamma2 = gamma2;
    d.m = (uint32_t)((DSIG_MLDSA_Q - 1) / d.alpha);
    d.mul = ((UINT64_C(1) << 48) + (uint64_t)d.alpha - 1) / (uint64_t)d.alpha;
    return d;
}

/*
 * @spec FIPS 204 Algorithm 36 Decompose: a in [0, q) → (a1, a0) with a = a1·2γ2 + a0, a0 in (-γ2, γ2],
 * except that the top quotient m wraps to 0 with a0 reduced by 1 (the r+ - r0 = q - 1 case). a1 is
 * HighBits (Algorithm 37), a0 LowBits (Algorithm 38). Branch-free.
 */
static inline int32_t mldsa_decompose(const mldsa_decomp *d, int32_t *a0, int32_t a)
{
    /* a1 = ceil((a - γ2) / 2γ2) = floor((a + γ2 - 1) / 2γ2): the quotient whose remainder lies in
     * (-γ2, γ2]. */
    uint32_t a1 = (uint32_t)(((uint64_t)(uint32_t)(a + d->gamma2 - 1) * d->mul) >> 48);
    int32_t r0 = a - (int32_t)a1 * d->alpha;
    /* wrap = 1 iff a1 == m: then the high part is 0 and r0 = a - q. */
    uint32_t x = a1 ^ d->m;
    uint32_t wrap = ((x | (0u - x)) >> 31) ^ 1u;
    r0 -= (int32_t)wrap;
    a1 &= wrap - 1u;
    *a0 = r0;
    return (int32_t)a1;
}

/*
 * @spec FIPS 204 Algorithm 39 MakeHint, in the form used by signing: given the centred low part
 * a0 = LowBits(w) - cs2 + ct0 (|a0| < 2γ2) and a1 = HighBits(w) = HighBits(w - cs2), returns 1 iff
 * HighBits(w - cs2 + ct0) ≠ a1, i.e. iff a0 leaves (-γ2, γ2] — except that a0 = -γ2 with a1 = 0 wraps
 * to the same high part 0 (Decompose's special case). Branch-free.
 */
static inline int32_t mldsa_make_hint(int32_t a0, int32_t a1, int32_t gamma2)
{
    uint32_t above = (uint32_t)(gamma2 - a0) >> 31;   /* a0 > γ2 */
    uint32_t below = (uint32_t)(a0 + gamma2) >> 31;   /* a0 < -γ2 */
    uint32_t x = (uint32_t)(a0 + gamma2);             /* 0 iff a0 == -γ2 */
    uint32_t eq = ((x | (0u - x)) >> 31) ^ 1u;
    uint32_t nz = ((uint32_t)a1 | (0u - (uint32_t)a1)) >> 31;
    return (int32_t)(above | below | (eq & nz));
}

/* @spec FIPS 204 Algorithm 40 UseHint: a in [0, q), hint h in {0, 1} → corrected high part. */
static inline int32_t mldsa_use_hint(const mldsa_decomp *d, int32_t a, int32_t h)
{
    int32_t a0;
    int32_t a1 = mldsa_decompose(d, &a0, a);
    if (!h)
        return a1;
    if (a0 > 0)
        return (uint32_t)a1 + 1 == d->m ? 0 : a1 + 1;
    return a1 == 0 ? (int32_t)d->m - 1 : a1 - 1;
}

/* Per polynomial: a1 = Power2Round high parts of a (in [0, q)), a0 = low parts. */
void dsig_mldsa_poly_power2round(mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a);
/* Per polynomial Decompose: a (in [0, q)) → a1 (HighBits), a0 (LowBits). */
void dsig_mldsa_poly_decompose(const mldsa_decomp *d, mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a);
/* Per polynomial MakeHint (form above); returns the number of hints set. */
unsigned dsig_mldsa_poly_make_hint(mldsa_poly *h, const mldsa_poly *a0, const mldsa_poly *a1, int32_t gamma2);
/* Per polynomial UseHint; a is overwritten with the corrected high parts. */
void dsig_mldsa_poly_use_hint(const mldsa_decomp *d, mldsa_poly *a, const mldsa_poly *h);

#endif
