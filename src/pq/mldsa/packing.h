/*
 * src/pq/mldsa/packing.h — FIPS 204 §7.1–7.3 encodings: bit packing of polynomials (Algorithms 16–19),
 * hint packing (20–21), the key and signature encodings (22–27) and w1Encode (28).
 */
#ifndef DSIG_PQ_MLDSA_PACKING_H
#define DSIG_PQ_MLDSA_PACKING_H

#include <stddef.h>
#include <stdint.h>

#include "pq/mldsa/mldsa.h"
#include "pq/mldsa/poly.h"

/* Bits per coefficient of the secret vectors s1, s2: bitlen(2η). */
static inline unsigned mldsa_eta_bits(const dsig_mldsa_params *p) { return p->eta == 2 ? 3 : 4; }
/* Bits per coefficient of z: 1 + bitlen(γ1 - 1). */
static inline unsigned mldsa_z_bits(const dsig_mldsa_params *p) { return p->gamma1 == (1 << 17) ? 18 : 20; }
/* Bits per coefficient of w1: bitlen((q-1)/(2γ2) - 1). */
static inline unsigned dsig_mldsa_w1_bits(const dsig_mldsa_params *p)
{
    return p->gamma2 == (DSIG_MLDSA_Q - 1) / 88 ? 6 : 4;
}

/* @spec FIPS 204 Algorithm 16 SimpleBitPack: each a_i in [0, 2^bits) to `bits` bits, little-endian. */
void dsig_mldsa_simple_bitpack(uint8_t *out, const mldsa_poly *a, unsigned bits);
/* @spec FIPS 204 Algorithm 18 SimpleBitUnpack. */
void dsig_mldsa_simple_bitunpack(mldsa_poly *a, const uint8_t *in, unsigned bits);
/* @spec FIPS 204 Algorithm 17 BitPack(w, a, b): stores b - w_i in `bits` bits. */
void dsig_mldsa_bitpack(uint8_t *out, const mldsa_poly *a, int32_t b, unsigned bits);
/* @spec FIPS 204 Algorithm 19 BitUnpack: w_i = b - (bits-bit value). Constant time. */
void dsig_mldsa_bitunpack(mldsa_poly *a, const uint8_t *in, int32_t b, unsigned bits);

/* @spec FIPS 204 Algorithm 22 pkEncode(ρ, t1). */
void dsig_mldsa_pk_encode(const dsig_mldsa_params *p, uint8_t *pk, const uint8_t rho[32], const mldsa_poly *t1);
/* @spec FIPS 204 Algorithm 23 pkDecode (every bit string is a valid public key of the right length). */
void dsig_mldsa_pk_decode(const dsig_mldsa_params *p, uint8_t rho[32], mldsa_poly *t1, const uint8_t *pk);

/* @spec FIPS 204 Algorithm 24 skEncode(ρ, K, tr, s1, s2, t0). */
void dsig_mldsa_sk_encode(const dsig_mldsa_params *p, uint8_t *sk, const uint8_t rho[32], const uint8_t key[32],
                     const uint8_t tr[64], const mldsa_poly *s1, const mldsa_poly *s2, const mldsa_poly *t0);
/*
 * @spec FIPS 204 Algorithm 25 skDecode, plus the range check FIPS 204 §7.2 asks of skDecode's input:
 * every s1/s2 coefficient must lie in [-η, η]. Constant time (the check accumulates a mask; only the
 * verdict, which is a property of the key's validity, is released). DSIG_OK or DSIG_E_KEY.
 */
int dsig_mldsa_sk_decode(const dsig_mldsa_params *p, uint8_t rho[32], uint8_t key[32], uint8_t tr[64],
                    mldsa_poly *s1, mldsa_poly *s2, mldsa_poly *t0, const uint8_t *sk);

/* @spec FIPS 204 Algorithm 26 sigEncode(c̃, z mod± q, h) with Algorithm 20 HintBitPack. h_i in {0, 1};
 * at most ω ones in total (the caller has checked). */
void dsig_mldsa_sig_encode(const dsig_mldsa_params *p, uint8_t *sig, const uint8_t *ctilde, const mldsa_poly *z,
                      const mldsa_poly *h);
/*
 * @spec FIPS 204 Algorithm 27 sigDecode with Algorithm 21 HintBitUnpack: returns NULL on success or
 * a static sentence naming the malformed part of the hint encoding (counts decreasing or above ω,
 * indices not strictly increasing within a polynomial, non-zero padding). sig is p->sig_bytes long.
 */
const char *dsig_mldsa_sig_decode(const dsig_mldsa_params *p, const uint8_t **ctilde, mldsa_poly *z,
                             mldsa_poly *h, const uint8_t *sig);

/* @spec FIPS 204 Algorithm 28 w1Encode: k·32·bitlen((q-1)/(2γ2) - 1) bytes; returns that length. */
size_t dsig_mldsa_w1_encode(const dsig_mldsa_params *p, uint8_t *out, const mldsa_poly *w1);

#endif
