/*
 * src/pq/mldsa/mldsa.c — ML-DSA key generation, signing from μ and verification from μ (FIPS 204
 * Algorithms 6–8), on top of sample.c, packing.c, rounding.c and the NTT back-ends.
 *
 * Memory: everything lives on the caller's stack (ML-DSA-87 signing uses about 130 KiB, most of it
 * the 8×7 matrix Â, expanded once and reused by every rejection iteration). No heap allocation.
 */
#include "pq/mldsa/mldsa.h"

#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "dsig/mem.h"
#include "hash/keccak.h"
#include "pq/mldsa/ntt.h"
#include "pq/mldsa/packing.h"
#include "pq/mldsa/poly.h"
#include "pq/mldsa/rounding.h"
#include "pq/mldsa/sample.h"

#define KMAX DSIG_MLDSA_KMAX
#define LMAX DSIG_MLDSA_LMAX

/* Largest w1Encode output: k = 8 polynomials of 4 bits, or k = 4 of 6 bits → 1024 bytes. */
#define W1_MAX_BYTES (KMAX * 32 * 6)

/* w = Â·v for an l-vector v̂ in the NTT domain: one accumulated pointwise product per row. */
static void matrix_mul(const dsig_mldsa_params *p, mldsa_poly *w, const mldsa_poly *a, const mldsa_poly *vhat)
{
    for (unsigned i = 0; i < p->k; i++)
        dsig_mldsa_pointwise_acc_montgomery(w[i].c, a[i * p->l].c, vhat[0].c, p->l);
}

/* c̃ = H(μ ‖ w1Encode(w1), λ/4) (FIPS 204 Algorithm 7 line 15, Algorithm 8 line 12). */
static void challenge_hash(const dsig_mldsa_params *p, uint8_t *ctilde, const uint8_t mu[64], const mldsa_poly *w1)
{
    uint8_t enc[W1_MAX_BYTES];
    size_t n = dsig_mldsa_w1_encode(p, enc, w1);
    dsig_keccak ks;
    dsig_shake256_init(&ks);
    dsig_keccak_absorb(&ks, mu, DSIG_MLDSA_MUBYTES);
    dsig_keccak_absorb(&ks, enc, n);
    dsig_shake_finalize(&ks);
    dsig_keccak_squeeze(&ks, ctilde, p->lambda / 4);
    /* w1 of a rejected iteration is never published; wipe it with the sponge */
    dsig_keccak_wipe(&ks);
    dsig_memzero(enc, n);
}

/* @spec FIPS 204 Algorithm 6 line 6 / Algorithm 7 line 1: tr = H(pk, 64). */
void dsig_mldsa_tr(const dsig_mldsa_params *p, const uint8_t *pk, uint8_t tr[DSIG_MLDSA_TRBYTES])
{
    dsig_shake256(tr, DSIG_MLDSA_TRBYTES, pk, p->pk_bytes);
}

/* @spec FIPS 204 Algorithm 6 ML-DSA.KeyGen_internal(ξ). */
int dsig_mldsa_keygen_internal(const dsig_mldsa_params *p, uint8_t *pk, uint8_t *sk,
                               const uint8_t xi[DSIG_MLDSA_SEEDBYTES])
{
    if (!p || !pk || !sk || !xi)
        return dsig_fail(DSIG_E_ARG, "ML-DSA key generation: NULL argument");
    uint8_t in[DSIG_MLDSA_SEEDBYTES + 2];
    uint8_t seeds[128]; /* ρ (32) ‖ ρ' (64) ‖ K (32) */
    uint8_t tr[DSIG_MLDSA_TRBYTES];
    mldsa_poly a[KMAX * LMAX];
    mldsa_poly s1[LMAX], s1hat[LMAX], s2[KMAX], t1[KMAX], t0[KMAX];

    /* line 1: (ρ, ρ', K) = H(ξ ‖ IntegerToBytes(k, 1) ‖ IntegerToBytes(l, 1), 128) */
    memcpy(in, xi, DSIG_MLDSA_SEEDBYTES);
    in[DSIG_MLDSA_SEEDBYTES] = (uint8_t)p->k;
    in[DSIG_MLDSA_SEEDBYTES + 1] = (uint8_t)p->l;
    dsig_shake256(seeds, sizeof seeds, in, sizeof in);
    const uint8_t *rho = seeds, *rhop = seeds + 32, *key = seeds + 96;
    /* ρ is published in pk: not secret */
    DSIG_CT_DECLASSIFY(seeds, 32);

    dsig_mldsa_expand_a(p, a, rho);           /* line 3 */
    dsig_mldsa_expand_s(p, s1, s2, rhop);     /* line 4 */

    /* line 5: t = NTT^-1(Â ∘ NTT(s1)) + s2 */
    for (unsigned i = 0; i < p->l; i++) {
        s1hat[i] = s1[i];
        dsig_mldsa_ntt(s1hat[i].c);
    }
    matrix_mul(p, t1, a, s1hat); /* t is built in t1's storage and split in place */
    for (unsigned i = 0; i < p->k; i++) {
        dsig_mldsa_invntt_tomont(t1[i].c);
        dsig_mldsa_poly_add(&t1[i], &t1[i], &s2[i]);
        dsig_mldsa_poly_freeze(&t1[i]);
        dsig_mldsa_poly_power2round(&t1[i], &t0[i], &t1[i]); /* line 6 (element-wise, in place is fine) */
    }
    /* t1 is the public key */
    DSIG_CT_DECLASSIFY(t1, sizeof(mldsa_poly) * p->k);

    dsig_mldsa_pk_encode(p, pk, rho, t1);                      /* line 8 */
    dsig_mldsa_tr(p, pk, tr);                            /* line 9 */
    dsig_mldsa_sk_encode(p, sk, rho, key, tr, s1, s2, t0);    /* line 10 */

    dsig_memzero(in, sizeof in);
    dsig_memzero(seeds, sizeof seeds);
    dsig_memzero(s1, sizeof(mldsa_poly) * p->l);
    dsig_memzero(s1hat, sizeof(mldsa_poly) * p->l);
    dsig_memzero(s2, sizeof(mldsa_poly) * p->k);
    dsig_memzero(t0, sizeof(mldsa_poly) * p->k);
    return DSIG_OK;
}

/* @spec FIPS 204 Algorithm 7 ML-DSA.Sign_internal, lines 1–5 and 7–33 (μ is given). */
int dsig_mldsa_sign_mu(const dsig_mldsa_params *p, uint8_t *sig, const uint8_t *sk,
                       const uint8_t mu[DSIG_MLDSA_MUBYTES], const uint8_t rnd[DSIG_MLDSA_RNDBYTES])
{
    if (!p || !sig || !sk || !mu || !rnd)
        return dsig_fail(DSIG_E_ARG, "ML-DSA signing: NULL argument");
    uint8_t rho[32], key[32], tr[64];
    uint8_t rhopp[64];
    uint8_t ctilde[64];
    mldsa_poly a[KMAX * LMAX];
    mldsa_poly s1[LMAX], s2[KMAX], t0[KMAX]; /* NTT domain after decoding */
    mldsa_poly y[LMAX], z[LMAX];
    mldsa_poly w1[KMAX], w0[KMAX];
    mldsa_poly h[KMAX];
    mldsa_poly c, tmp;
    mldsa_mask_stream masks;
    const mldsa_decomp dc = mldsa_decomp_init(p->gamma2);
    int rc;

    /* line 1 */
    rc = dsig_mldsa_sk_decode(p, rho, key, tr, s1, s2, t0, sk);
    if (rc != DSIG_OK)
        goto out;
    /* ρ is public (it is in pk); Â depends on nothing else */
    DSIG_CT_DECLASSIFY(rho, sizeof rho);

    /* lines 2–5: NTT of every secret vector once, Â once */
    for (unsigned i = 0; i < p->l; i++)
        dsig_mldsa_ntt(s1[i].c);
    for (unsigned i = 0; i < p->k; i++) {
        dsig_mldsa_ntt(s2[i].c);
        dsig_mldsa_ntt(t0[i].c);
    }
    dsig_mldsa_expand_a(p, a, rho);

    /* line 7: ρ'' = H(K ‖ rnd ‖ μ, 64) */
    {
        dsig_keccak ks;
        dsig_shake256_init(&ks);
        dsig_keccak_absorb(&ks, key, sizeof key);
        dsig_keccak_absorb(&ks, rnd, DSIG_MLDSA_RNDBYTES);
        dsig_keccak_absorb(&ks, mu, DSIG_MLDSA_MUBYTES);
        dsig_shake_finalize(&ks);
        dsig_keccak_squeeze(&ks, rhopp, sizeof rhopp);
        dsig_keccak_wipe(&ks);
    }
    dsig_mldsa_mask_init(&masks, rhopp);

    /* lines 8–32: rejection loop. κ grows by l per attempt; the expected number of attempts is
     * 4.25 / 5.1 / 3.85 (ML-DSA-44/65/87). FIPS 204 §3.6.3 allows the attempt count to leak, so
     * each rejection verdict is declassified; everything computed before a verdict is branch-free. */
    for (;;) {
        if (masks.kappa > 0xFFFF - p->l) {
            /* κ is encoded in 2 bytes; unreachable in practice (probability far below 2^-1000) */
            rc = dsig_fail(DSIG_E_INTERNAL, "%s signing: rejection loop exhausted", p->name);
            goto out;
        }
        /* lines 11–13: y = ExpandMask(ρ'', κ) (κ advances by l); w = NTT^-1(Â ∘ NTT(y)); w1 = HighBits(w) */
        dsig_mldsa_mask_next(p, &masks, y);
        for (unsigned i = 0; i < p->l; i++) {
            z[i] = y[i];
            dsig_mldsa_ntt(z[i].c);
        }
        matrix_mul(p, w0, a, z);
        for (unsigned i = 0; i < p->k; i++) {
            dsig_mldsa_invntt_tomont(w0[i].c);
            dsig_mldsa_poly_caddq(&w0[i]);
            dsig_mldsa_poly_decompose(&dc, &w1[i], &w0[i], &w0[i]); /* w0 = LowBits(w) */
        }

        /* lines 15–16: c̃ = H(μ ‖ w1Encode(w1)); c = SampleInBall(c̃). c̃ goes into the signature if
         * this attempt is accepted, and a rejected attempt's c̃ is a hash of a w1 that is never
         * published: declassified, so SampleInBall may branch on it (FIPS 204 §3.6.3). */
        challenge_hash(p, ctilde, mu, w1);
        DSIG_CT_DECLASSIFY(ctilde, p->lambda / 4);
        dsig_mldsa_sample_in_ball(p, &c, ctilde);
        dsig_mldsa_ntt(c.c);

        /* lines 18–19: z = y + NTT^-1(ĉ ∘ ŝ1); check ‖z‖∞ < γ1 - β */
        uint32_t reject = 0;
        for (unsigned i = 0; i < p->l; i++) {
            dsig_mldsa_pointwise_montgomery(z[i].c, c.c, s1[i].c);
            dsig_mldsa_invntt_tomont(z[i].c);
            dsig_mldsa_poly_add(&z[i], &z[i], &y[i]);
            dsig_mldsa_poly_reduce(&z[i]); /* exact centred value: |z| < γ1 + β */
            reject |= dsig_mldsa_poly_norm_exceeds(&z[i], p->gamma1 - (int32_t)p->beta);
        }
        /* rejection verdict: allowed to leak (FIPS 204 §3.6.3) */
        DSIG_CT_DECLASSIFY(&reject, sizeof reject);
        if (reject)
            continue;

        /* lines 17, 20–23: r0 = LowBits(w - cs2), computed as w0 - cs2 (equal whenever the check
         * passes, since ‖cs2‖∞ ≤ β); check ‖r0‖∞ < γ2 - β */
        for (unsigned i = 0; i < p->k; i++) {
            dsig_mldsa_pointwise_montgomery(tmp.c, c.c, s2[i].c);
            dsig_mldsa_invntt_tomont(tmp.c);
            dsig_mldsa_poly_reduce(&tmp); /* exact cs2, |cs2| ≤ β */
            dsig_mldsa_poly_sub(&w0[i], &w0[i], &tmp);
            reject |= dsig_mldsa_poly_norm_exceeds(&w0[i], p->gamma2 - (int32_t)p->beta);
        }
        DSIG_CT_DECLASSIFY(&reject, sizeof reject); /* rejection verdict (FIPS 204 §3.6.3) */
        if (reject)
            continue;

        /* lines 25–28: ct0; check ‖ct0‖∞ < γ2; h = MakeHint(-ct0, w - cs2 + ct0); count ≤ ω */
        unsigned nhints = 0;
        for (unsigned i = 0; i < p->k; i++) {
            dsig_mldsa_pointwise_montgomery(tmp.c, c.c, t0[i].c);
            dsig_mldsa_invntt_tomont(tmp.c);
            dsig_mldsa_poly_reduce(&tmp); /* exact ct0, |ct0| ≤ τ·2^12 */
            reject |= dsig_mldsa_poly_norm_exceeds(&tmp, p->gamma2);
            dsig_mldsa_poly_add(&w0[i], &w0[i], &tmp);
            nhints += dsig_mldsa_poly_make_hint(&h[i], &w0[i], &w1[i], p->gamma2);
        }
        reject |= 0u - (uint32_t)(((uint32_t)p->omega - nhints) >> 31); /* nhints > ω */
        DSIG_CT_DECLASSIFY(&reject, sizeof reject); /* rejection verdict (FIPS 204 §3.6.3) */
        if (reject)
            continue;

        /* line 33: accepted. z and h are the signature being released. */
        DSIG_CT_DECLASSIFY(z, sizeof(mldsa_poly) * p->l);
        DSIG_CT_DECLASSIFY(h, sizeof(mldsa_poly) * p->k);
        dsig_mldsa_sig_encode(p, sig, ctilde, z, h);
        rc = DSIG_OK;
        break;
    }

out:
    /* the vectors hold l or k polynomials of this set (sk_decode fills them or fails before any) */
    dsig_memzero(key, sizeof key);
    dsig_memzero(tr, sizeof tr);
    dsig_memzero(rhopp, sizeof rhopp);
    dsig_memzero(s1, sizeof(mldsa_poly) * p->l);
    dsig_memzero(s2, sizeof(mldsa_poly) * p->k);
    dsig_memzero(t0, sizeof(mldsa_poly) * p->k);
    dsig_memzero(y, sizeof(mldsa_poly) * p->l);
    dsig_memzero(z, sizeof(mldsa_poly) * p->l);
    dsig_memzero(w0, sizeof(mldsa_poly) * p->k);
    dsig_memzero(w1, sizeof(mldsa_poly) * p->k);
    dsig_memzero(h, sizeof(mldsa_poly) * p->k);
    dsig_memzero(&tmp, sizeof tmp);
    dsig_mldsa_mask_wipe(&masks);
    return rc;
}

/* @spec FIPS 204 Algorithm 8 ML-DSA.Verify_internal, lines 1–2 and 5–13 (μ is given). */
int dsig_mldsa_verify_mu(const dsig_mldsa_params *p, const uint8_t *pk,
                         const uint8_t mu[DSIG_MLDSA_MUBYTES], const uint8_t *sig, size_t sig_len)
{
    if (!p || !pk || !mu || (!sig && sig_len))
        return dsig_fail(DSIG_E_ARG, "ML-DSA verification: NULL argument");
    if (sig_len != p->sig_bytes)
        return dsig_fail(DSIG_E_VERIFY, "%s signature is %zu bytes, expected %zu", p->name, sig_len,
                         p->sig_bytes);
    uint8_t rho[32];
    uint8_t ctilde2[64];
    const uint8_t *ctilde;
    mldsa_poly a[KMAX * LMAX];
    mldsa_poly t1[KMAX], z[LMAX], h[KMAX], w[KMAX];
    mldsa_poly c;
    const mldsa_decomp dc = mldsa_decomp_init(p->gamma2);

    /* line 2; line 4's "h = ⊥" */
    const char *why = dsig_mldsa_sig_decode(p, &ctilde, z, h, sig);
    if (why)
        return dsig_fail(DSIG_E_VERIFY, "%s signature: malformed hint: %s", p->name, why);
    /* line 13 first part: ‖z‖∞ < γ1 - β */
    uint32_t big = 0;
    for (unsigned i = 0; i < p->l; i++)
        big |= dsig_mldsa_poly_norm_exceeds(&z[i], p->gamma1 - (int32_t)p->beta);
    if (big)
        return dsig_fail(DSIG_E_VERIFY, "%s signature: ||z||_inf >= gamma1 - beta", p->name);

    dsig_mldsa_pk_decode(p, rho, t1, pk);                 /* line 1 */
    dsig_mldsa_expand_a(p, a, rho);                       /* line 5 */
    dsig_mldsa_sample_in_ball(p, &c, ctilde);             /* line 8 */

    /* line 9: w'approx = NTT^-1(Â ∘ NTT(z) - NTT(c) ∘ NTT(t1·2^d)) */
    for (unsigned i = 0; i < p->l; i++)
        dsig_mldsa_ntt(z[i].c);
    dsig_mldsa_ntt(c.c);
    matrix_mul(p, w, a, z);
    for (unsigned i = 0; i < p->k; i++) {
        dsig_mldsa_poly_shiftl(&t1[i]);
        dsig_mldsa_ntt(t1[i].c);
        dsig_mldsa_pointwise_montgomery(t1[i].c, c.c, t1[i].c);
        dsig_mldsa_poly_sub(&w[i], &w[i], &t1[i]);
        dsig_mldsa_poly_reduce(&w[i]); /* |w| < 2q before, inverse NTT wants |w| < q */
        dsig_mldsa_invntt_tomont(w[i].c);
        dsig_mldsa_poly_caddq(&w[i]);
        dsig_mldsa_poly_use_hint(&dc, &w[i], &h[i]); /* line 10: w1' = UseHint(h, w'approx) */
    }

    /* line 12: c̃' = H(μ ‖ w1Encode(w1'), λ/4); line 13: c̃ = c̃' (public values) */
    challenge_hash(p, ctilde2, mu, w);
    if (memcmp(ctilde, ctilde2, p->lambda / 4) != 0)
        return dsig_fail(DSIG_E_VERIFY, "%s signature: challenge mismatch", p->name);
    return DSIG_OK;
}
