/* src/pq/mldsa/packing.c — FIPS 204 encodings (see packing.h). */
#include "pq/mldsa/packing.h"

#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "pq/mldsa/kernels.h"

/*
 * Writes `bits` (≤ 20) bits per value b + sign·a_i, little-endian. Works on groups of 8 values
 * (exactly `bits` bytes, so the accumulator is empty at every group boundary); with `bits` a
 * compile-time constant (see the dispatch below) the group body unrolls into straight-line shifts.
 * Loop bounds depend only on `bits` (public), never on the data.
 */
__attribute__((always_inline)) static inline void pack_inl(uint8_t *out, const mldsa_poly *a, int32_t b,
                                                           int32_t sign, unsigned bits)
{
    const uint32_t mask = (1u << bits) - 1;
    for (unsigned g = 0; g < DSIG_MLDSA_N; g += 8, out += bits) {
        uint64_t acc = 0;
        unsigned nbits = 0, o = 0;
        for (unsigned i = 0; i < 8; i++) {
            acc |= (uint64_t)((uint32_t)(b + sign * a->c[g + i]) & mask) << nbits;
            nbits += bits;
            while (nbits >= 8) {
                out[o++] = (uint8_t)acc;
                acc >>= 8;
                nbits -= 8;
            }
        }
    }
}

/* Reads `bits` bits per value and stores b + sign·value (group structure as in pack_inl). */
__attribute__((always_inline)) static inline void unpack_inl(mldsa_poly *a, const uint8_t *in, int32_t b,
                                                             int32_t sign, unsigned bits)
{
    const uint32_t mask = (1u << bits) - 1;
    for (unsigned g = 0; g < DSIG_MLDSA_N; g += 8, in += bits) {
        uint64_t acc = 0;
        unsigned nbits = 0, o = 0;
        for (unsigned i = 0; i < 8; i++) {
            while (nbits < bits) {
                acc |= (uint64_t)in[o++] << nbits;
                nbits += 8;
            }
            a->c[g + i] = b + sign * (int32_t)((uint32_t)acc & mask);
            acc >>= bits;
            nbits -= bits;
        }
    }
}

/* pack_inl specialised for each width FIPS 204 uses (3, 4, 6, 10, 13, 18, 20): the portable back-end
 * of kernels.h's pack. */
void dsig_mldsa_pack_c(uint8_t *out, const mldsa_poly *a, int32_t b, int32_t sign, unsigned bits)
{
    switch (bits) {
    case 3: pack_inl(out, a, b, sign, 3); break;
    case 4: pack_inl(out, a, b, sign, 4); break;
    case 6: pack_inl(out, a, b, sign, 6); break;
    case 10: pack_inl(out, a, b, sign, 10); break;
    case 13: pack_inl(out, a, b, sign, 13); break;
    case 18: pack_inl(out, a, b, sign, 18); break;
    case 20: pack_inl(out, a, b, sign, 20); break;
    default: pack_inl(out, a, b, sign, bits); break;
    }
}

/* unpack_inl specialised for each width FIPS 204 uses: the portable back-end of kernels.h's unpack. */
void dsig_mldsa_unpack_c(mldsa_poly *a, const uint8_t *in, int32_t b, int32_t sign, unsigned bits)
{
    switch (bits) {
    case 3: unpack_inl(a, in, b, sign, 3); break;
    case 4: unpack_inl(a, in, b, sign, 4); break;
    case 6: unpack_inl(a, in, b, sign, 6); break;
    case 10: unpack_inl(a, in, b, sign, 10); break;
    case 13: unpack_inl(a, in, b, sign, 13); break;
    case 18: unpack_inl(a, in, b, sign, 18); break;
    case 20: unpack_inl(a, in, b, sign, 20); break;
    default: unpack_inl(a, in, b, sign, bits); break;
    }
}

/* @spec FIPS 204 Algorithm 16 SimpleBitPack. */
void dsig_mldsa_simple_bitpack(uint8_t *out, const mldsa_poly *a, unsigned bits)
{
    dsig_mldsa_kernels_get()->pack(out, a, 0, 1, bits);
}

/* @spec FIPS 204 Algorithm 18 SimpleBitUnpack. */
void dsig_mldsa_simple_bitunpack(mldsa_poly *a, const uint8_t *in, unsigned bits)
{
    dsig_mldsa_kernels_get()->unpack(a, in, 0, 1, bits);
}

/* @spec FIPS 204 Algorithm 17 BitPack: b - w_i. */
void dsig_mldsa_bitpack(uint8_t *out, const mldsa_poly *a, int32_t b, unsigned bits)
{
    dsig_mldsa_kernels_get()->pack(out, a, b, -1, bits);
}

/* @spec FIPS 204 Algorithm 19 BitUnpack: b - value. */
void dsig_mldsa_bitunpack(mldsa_poly *a, const uint8_t *in, int32_t b, unsigned bits)
{
    dsig_mldsa_kernels_get()->unpack(a, in, b, -1, bits);
}

/* @spec FIPS 204 Algorithm 22 pkEncode: ρ ‖ SimpleBitPack(t1[i], 2^10 - 1) for each i. */
void dsig_mldsa_pk_encode(const dsig_mldsa_params *p, uint8_t *pk, const uint8_t rho[32], const mldsa_poly *t1)
{
    memcpy(pk, rho, 32);
    for (unsigned i = 0; i < p->k; i++)
        dsig_mldsa_simple_bitpack(pk + 32 + 320 * i, &t1[i], 10);
}

/* @spec FIPS 204 Algorithm 23 pkDecode. */
void dsig_mldsa_pk_decode(const dsig_mldsa_params *p, uint8_t rho[32], mldsa_poly *t1, const uint8_t *pk)
{
    memcpy(rho, pk, 32);
    for (unsigned i = 0; i < p->k; i++)
        dsig_mldsa_simple_bitunpack(&t1[i], pk + 32 + 320 * i, 10);
}

/* @spec FIPS 204 Algorithm 24 skEncode: ρ ‖ K ‖ tr ‖ BitPack(s1, η, η) ‖ BitPack(s2, η, η) ‖
 * BitPack(t0, 2^12 - 1, 2^12). */
void dsig_mldsa_sk_encode(const dsig_mldsa_params *p, uint8_t *sk, const uint8_t rho[32], const uint8_t key[32],
                     const uint8_t tr[64], const mldsa_poly *s1, const mldsa_poly *s2, const mldsa_poly *t0)
{
    const unsigned eb = mldsa_eta_bits(p);
    memcpy(sk, rho, 32);
    memcpy(sk + 32, key, 32);
    memcpy(sk + 64, tr, 64);
    sk += 128;
    for (unsigned i = 0; i < p->l; i++, sk += 32 * eb)
        dsig_mldsa_bitpack(sk, &s1[i], (int32_t)p->eta, eb);
    for (unsigned i = 0; i < p->k; i++, sk += 32 * eb)
        dsig_mldsa_bitpack(sk, &s2[i], (int32_t)p->eta, eb);
    for (unsigned i = 0; i < p->k; i++, sk += 32 * DSIG_MLDSA_D)
        dsig_mldsa_bitpack(sk, &t0[i], 1 << (DSIG_MLDSA_D - 1), DSIG_MLDSA_D);
}

/* Mask with bit 0 set iff some coefficient of a lies outside [-η, η] (branch-free). */
static uint32_t eta_out_of_range(const mldsa_poly *a, int32_t eta)
{
    uint32_t bad = 0;
    for (unsigned i = 0; i < DSIG_MLDSA_N; i++) {
        /* the decoded value is η - u with u ≥ 0, so only u > 2η (value < -η) can occur */
        bad |= (uint32_t)(a->c[i] + eta) >> 31;
    }
    return bad;
}

/* @spec FIPS 204 Algorithm 25 skDecode, with the [-η, η] check on s1 and s2. */
int dsig_mldsa_sk_decode(const dsig_mldsa_params *p, uint8_t rho[32], uint8_t key[32], uint8_t tr[64],
                    mldsa_poly *s1, mldsa_poly *s2, mldsa_poly *t0, const uint8_t *sk)
{
    const unsigned eb = mldsa_eta_bits(p);
    const int32_t eta = (int32_t)p->eta;
    uint32_t bad = 0;
    memcpy(rho, sk, 32);
    memcpy(key, sk + 32, 32);
    memcpy(tr, sk + 64, 64);
    sk += 128;
    for (unsigned i = 0; i < p->l; i++, sk += 32 * eb) {
        dsig_mldsa_bitunpack(&s1[i], sk, eta, eb);
        bad |= eta_out_of_range(&s1[i], eta);
    }
    for (unsigned i = 0; i < p->k; i++, sk += 32 * eb) {
        dsig_mldsa_bitunpack(&s2[i], sk, eta, eb);
        bad |= eta_out_of_range(&s2[i], eta);
    }
    for (unsigned i = 0; i < p->k; i++, sk += 32 * DSIG_MLDSA_D)
        dsig_mldsa_bitunpack(&t0[i], sk, 1 << (DSIG_MLDSA_D - 1), DSIG_MLDSA_D);
    /* Whether the key is well formed is not secret: release only that verdict. */
    DSIG_CT_DECLASSIFY(&bad, sizeof bad);
    if (bad)
        return dsig_fail(DSIG_E_KEY, "%s secret key: a coefficient of s1 or s2 is outside [-%u, %u]",
                         p->name, p->eta, p->eta);
    return DSIG_OK;
}

/* @spec FIPS 204 Algorithm 26 sigEncode and Algorithm 20 HintBitPack (h is public by now). */
void dsig_mldsa_sig_encode(const dsig_mldsa_params *p, uint8_t *sig, const uint8_t *ctilde, const mldsa_poly *z,
                      const mldsa_poly *h)
{
    const size_t clen = p->lambda / 4;
    const unsigned zb = mldsa_z_bits(p);
    memcpy(sig, ctilde, clen);
    sig += clen;
    for (unsigned i = 0; i < p->l; i++, sig += 32 * zb)
        dsig_mldsa_bitpack(sig, &z[i], p->gamma1, zb);
    memset(sig, 0, p->omega + p->k);
    unsigned idx = 0;
    for (unsigned i = 0; i < p->k; i++) {
        for (unsigned j = 0; j < DSIG_MLDSA_N; j++)
            if (h[i].c[j] != 0)
                sig[idx++] = (uint8_t)j;
        sig[p->omega + i] = (uint8_t)idx;
    }
}

/* @spec FIPS 204 Algorithm 27 sigDecode and Algorithm 21 HintBitUnpack (public input: branches ok). */
const char *dsig_mldsa_sig_decode(const dsig_mldsa_params *p, const uint8_t **ctilde, mldsa_poly *z,
                             mldsa_poly *h, const uint8_t *sig)
{
    const size_t clen = p->lambda / 4;
    const unsigned zb = mldsa_z_bits(p);
    *ctilde = sig;
    sig += clen;
    for (unsigned i = 0; i < p->l; i++, sig += 32 * zb)
        dsig_mldsa_bitunpack(&z[i], sig, p->gamma1, zb);

    const uint8_t *y = sig;
    unsigned idx = 0;
    for (unsigned i = 0; i < p->k; i++) {
        memset(h[i].c, 0, sizeof h[i].c);
        unsigned end = y[p->omega + i];
        if (end < idx)
            return "hint counts decrease";
        if (end > p->omega)
            return "hint count exceeds omega";
        unsigned first = idx;
        for (; idx < end; idx++) {
            /* strictly increasing positions within one polynomial: the encoding is then unique
             * (strong unforgeability needs that) */
            if (idx > first && y[idx - 1] >= y[idx])
                return "hint indices not strictly increasing";
            h[i].c[y[idx]] = 1;
        }
    }
    for (; idx < p->omega; idx++)
        if (y[idx] != 0)
            return "non-zero padding after the hint indices";
    return NULL;
}

/* @spec FIPS 204 Algorithm 28 w1Encode: SimpleBitPack(w1[i], (q-1)/(2γ2) - 1) for each i. */
size_t dsig_mldsa_w1_encode(const dsig_mldsa_params *p, uint8_t *out, const mldsa_poly *w1)
{
    const unsigned wb = dsig_mldsa_w1_bits(p);
    for (unsigned i = 0; i < p->k; i++)
        dsig_mldsa_simple_bitpack(out + 32 * wb * i, &w1[i], wb);
    return (size_t)p->k * 32 * wb;
}
