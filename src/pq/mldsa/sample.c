/* src/pq/mldsa/sample.c — FIPS 204 sampling (see sample.h). */
#include "pq/mldsa/sample.h"

#include <string.h>

#include "core/ct.h"
#include "dsig/mem.h"
#include "hash/keccak.h"
#include "pq/mldsa/kernels.h"
#include "pq/mldsa/packing.h"

/* SHAKE128 blocks that almost always give 256 RejNTTPoly samples: 5·168/3 = 280 candidates with
 * acceptance q/2^23 > 0.999. Further blocks are squeezed on demand. */
#define UNIFORM_NBLOCKS 5
/* SHAKE256 blocks for RejBoundedPoly: 2·136·2 = 544 nibbles; 256 accepted need ~273 (η = 2) or ~455
 * (η = 4) on average. */
#define ETA_NBLOCKS 2
/* SHAKE256 blocks for ExpandMask: 32·20 = 640 ≤ 5·136 bytes. */
#define MASK_NBLOCKS 5

/* @spec FIPS 204 Algorithm 30 RejNTTPoly inner loop with Algorithm 14 CoeffFromThreeBytes, portable
 * back-end (contract in kernels.h). Public data (ρ). */
unsigned dsig_mldsa_rej_uniform_c(int32_t *a, unsigned len, const uint8_t *buf, unsigned buflen)
{
    unsigned ctr = 0;
    for (unsigned pos = 0; ctr < len && buflen - pos >= 3; pos += 3) {
        uint32_t z = buf[pos] | ((uint32_t)buf[pos + 1] << 8) | ((uint32_t)(buf[pos + 2] & 0x7F) << 16);
        if (z < DSIG_MLDSA_Q)
            a[ctr++] = (int32_t)z;
    }
    return ctr;
}

/*
 * @spec FIPS 204 Algorithm 31 RejBoundedPoly inner loop with Algorithm 15 CoeffFromHalfByte, portable
 * back-end (contract in kernels.h): appends accepted nibbles of buf (low nibble first). The nibble
 * values are secret; the accept/reject decision is a rejection-sampling outcome FIPS 204 §3.6.3
 * allows to leak (rejected nibbles are independent of the accepted ones), so only that bit is
 * declassified, and the coefficient itself is computed without branches or tables.
 */
unsigned dsig_mldsa_rej_eta_c(int32_t *a, unsigned len, const uint8_t *buf, unsigned buflen, unsigned eta)
{
    unsigned ctr = 0;
    for (unsigned pos = 0; ctr < len && pos < buflen; pos++) {
        uint32_t nib[2] = {buf[pos] & 0x0Fu, (uint32_t)buf[pos] >> 4};
        for (unsigned t = 0; t < 2 && ctr < len; t++) {
            uint32_t b = nib[t];
            int32_t v;
            uint32_t ok;
            if (eta == 2) {
                /* 2 - (b mod 5) for b < 15; b mod 5 = b - 5·floor(205·b / 1024), exact for b < 15 */
                v = 2 - (int32_t)(b - 5 * ((205 * b) >> 10));
                ok = (b - 15) >> 31;
            } else {
                v = 4 - (int32_t)b;
                ok = (b - 9) >> 31;
            }
            DSIG_CT_DECLASSIFY(&ok, sizeof ok);
            a[ctr] = v;   /* written unconditionally; only kept (ctr advanced) if accepted */
            ctr += ok;
        }
    }
    return ctr;
}

/* Appends to a[ctr..256) from buf with the process's back-end; returns the new count. */
static unsigned rej_uniform(int32_t *a, unsigned ctr, const uint8_t *buf, size_t len)
{
    return ctr + dsig_mldsa_kernels_get()->rej_uniform(a + ctr, DSIG_MLDSA_N - ctr, buf, (unsigned)len);
}

/* Appends to a[ctr..256) from buf with the process's back-end; returns the new count. */
static unsigned rej_eta(int32_t *a, unsigned ctr, const uint8_t *buf, size_t len, unsigned eta)
{
    return ctr + dsig_mldsa_kernels_get()->rej_eta(a + ctr, DSIG_MLDSA_N - ctr, buf, (unsigned)len, eta);
}

/*
 * Up to eight independent SHAKE instances of one rate, squeezed together: the x8 sponge when its
 * kernel is native (AVX-512), else the x4 one, so that ExpandA and ExpandS take as many rows per
 * permutation call as the CPU permutes side by side. `width` (4 or 8) is how many rows one batch
 * takes; the choice depends on the CPU only.
 */
typedef struct {
    unsigned width;
    dsig_keccak_x4 k4;
    dsig_keccak_x8 k8;
} shake_batch;

static unsigned batch_width(void)
{
    return dsig_keccak_x8_simd_degree() == 8 ? 8 : 4;
}

/* Absorbs in[0..width) (inlen bytes each) with SHAKE padding, ready to squeeze. */
static void batch_absorb(shake_batch *b, unsigned rate, const uint8_t *const *in, size_t inlen)
{
    if (b->width == 8)
        dsig_keccak_x8_absorb_once(&b->k8, rate, DSIG_KECCAK_DS_SHAKE, in, inlen);
    else
        dsig_keccak_x4_absorb_once(&b->k4, rate, DSIG_KECCAK_DS_SHAKE, in, inlen);
}

static void batch_squeeze(shake_batch *b, uint8_t *const *out, size_t nblocks)
{
    if (b->width == 8)
        dsig_keccak_x8_squeezeblocks(&b->k8, out, nblocks);
    else
        dsig_keccak_x4_squeezeblocks(&b->k4, out, nblocks);
}

static void batch_wipe(shake_batch *b)
{
    if (b->width == 8)
        dsig_keccak_x8_wipe(&b->k8);
    else
        dsig_keccak_x4_wipe(&b->k4);
}

/* @spec FIPS 204 Algorithm 32 ExpandA, four or eight RejNTTPoly instances per SHAKE128 batch pass. */
void dsig_mldsa_expand_a(const dsig_mldsa_params *p, mldsa_poly *a, const uint8_t rho[32])
{
    const unsigned total = p->k * p->l;
    uint8_t seed[8][34];
    uint8_t buf[8][UNIFORM_NBLOCKS * DSIG_SHAKE128_RATE];
    int32_t scratch[DSIG_MLDSA_N];
    shake_batch ks;
    ks.width = batch_width();
    const unsigned w = ks.width;
    for (unsigned base = 0; base < total; base += w) {
        const uint8_t *in[8];
        uint8_t *out[8];
        unsigned ctr[8];
        int32_t *dst[8];
        for (unsigned j = 0; j < w; j++) {
            /* indexes past the end repeat the last polynomial into scratch (the batch pass is paid for) */
            unsigned idx = base + j < total ? base + j : total - 1;
            memcpy(seed[j], rho, 32);
            seed[j][32] = (uint8_t)(idx % p->l); /* s: column */
            seed[j][33] = (uint8_t)(idx / p->l); /* r: row */
            in[j] = seed[j];
            out[j] = buf[j];
            dst[j] = base + j < total ? a[base + j].c : scratch;
        }
        batch_absorb(&ks, DSIG_SHAKE128_RATE, in, 34);
        batch_squeeze(&ks, out, UNIFORM_NBLOCKS);
        unsigned more = 0;
        for (unsigned j = 0; j < w; j++) {
            ctr[j] = rej_uniform(dst[j], 0, buf[j], sizeof buf[j]);
            more |= ctr[j] < DSIG_MLDSA_N;
        }
        while (more) {
            batch_squeeze(&ks, out, 1);
            more = 0;
            for (unsigned j = 0; j < w; j++) {
                ctr[j] = rej_uniform(dst[j], ctr[j], buf[j], DSIG_SHAKE128_RATE);
                more |= ctr[j] < DSIG_MLDSA_N;
            }
        }
    }
}

/* @spec FIPS 204 Algorithm 33 ExpandS: RejBoundedPoly(ρ' ‖ IntegerToBytes(r, 2)) for r < l (s1) and
 * r = l..l+k-1 (s2), four or eight per SHAKE256 batch pass. Buffers and states are wiped (secret). */
void dsig_mldsa_expand_s(const dsig_mldsa_params *p, mldsa_poly *s1, mldsa_poly *s2, const uint8_t rhop[64])
{
    const unsigned total = p->l + p->k;
    uint8_t seed[8][66];
    uint8_t buf[8][ETA_NBLOCKS * DSIG_SHAKE256_RATE];
    int32_t scratch[DSIG_MLDSA_N];
    shake_batch ks;
    ks.width = batch_width();
    const unsigned w = ks.width;
    for (unsigned base = 0; base < total; base += w) {
        const uint8_t *in[8];
        uint8_t *out[8];
        unsigned ctr[8];
        int32_t *dst[8];
        for (unsigned j = 0; j < w; j++) {
            unsigned r = base + j < total ? base + j : total - 1;
            memcpy(seed[j], rhop, 64);
            seed[j][64] = (uint8_t)r;
            seed[j][65] = (uint8_t)(r >> 8);
            in[j] = seed[j];
            out[j] = buf[j];
            dst[j] = base + j >= total ? scratch : r < p->l ? s1[r].c : s2[r - p->l].c;
        }
        batch_absorb(&ks, DSIG_SHAKE256_RATE, in, 66);
        batch_squeeze(&ks, out, ETA_NBLOCKS);
        unsigned more = 0;
        for (unsigned j = 0; j < w; j++) {
            ctr[j] = rej_eta(dst[j], 0, buf[j], sizeof buf[j], p->eta);
            more |= ctr[j] < DSIG_MLDSA_N;
        }
        while (more) {
            batch_squeeze(&ks, out, 1);
            more = 0;
            for (unsigned j = 0; j < w; j++) {
                ctr[j] = rej_eta(dst[j], ctr[j], buf[j], DSIG_SHAKE256_RATE, p->eta);
                more |= ctr[j] < DSIG_MLDSA_N;
            }
        }
    }
    batch_wipe(&ks);
    dsig_memzero(seed, sizeof seed);
    dsig_memzero(buf, sizeof buf);
    dsig_memzero(scratch, sizeof scratch);
}

/* Starts the ExpandMask stream of one signature at κ = 0. */
void dsig_mldsa_mask_init(mldsa_mask_stream *st, const uint8_t rhopp[64])
{
    memcpy(st->rhopp, rhopp, sizeof st->rhopp);
    st->kappa = 0;
    st->avail = 0;
}

/*
 * @spec FIPS 204 Algorithm 34 ExpandMask(ρ'', κ): y[r] = BitUnpack(H(ρ'' ‖ IntegerToBytes(κ + r, 2), 32c),
 * γ1 − 1, γ1) for r < l and κ = st->kappa, which then advances by l (Algorithm 7 line 32). Polynomials
 * are made four per SHAKE256 x4 pass for consecutive κ; those past this attempt's l are kept in
 * st->spare for the next attempt, so no lane of a pass is wasted when l is 5 or 7. Constant time,
 * buffers wiped.
 */
void dsig_mldsa_mask_next(const dsig_mldsa_params *p, mldsa_mask_stream *st, mldsa_poly *y)
{
    const unsigned zb = mldsa_z_bits(p);
    /* l ≥ 4 > avail: the spare masks all go to this attempt */
    unsigned n = st->avail;
    for (unsigned i = 0; i < n; i++)
        y[i] = st->spare[i];
    st->avail = 0;
    st->kappa += n;
    uint8_t seed[4][66];
    uint8_t buf[4][MASK_NBLOCKS * DSIG_SHAKE256_RATE];
    dsig_keccak_x4 ks;
    while (n < p->l) {
        const uint8_t *in[4];
        uint8_t *out[4];
        for (unsigned j = 0; j < 4; j++) {
            unsigned v = st->kappa + j;
            memcpy(seed[j], st->rhopp, 64);
            seed[j][64] = (uint8_t)v;
            seed[j][65] = (uint8_t)(v >> 8);
            in[j] = seed[j];
            out[j] = buf[j];
        }
        dsig_keccak_x4_absorb_once(&ks, DSIG_SHAKE256_RATE, DSIG_KECCAK_DS_SHAKE, in, 66);
        dsig_keccak_x4_squeezeblocks(&ks, out, MASK_NBLOCKS);
        unsigned used = p->l - n < 4 ? p->l - n : 4;
        for (unsigned j = 0; j < 4; j++)
            dsig_mldsa_bitunpack(j < used ? &y[n + j] : &st->spare[st->avail++], buf[j], p->gamma1, zb);
        n += used;
        st->kappa += used;
    }
    dsig_keccak_x4_wipe(&ks);
    dsig_memzero(seed, sizeof seed);
    dsig_memzero(buf, sizeof buf);
}

/* Wipes the stream (ρ'' and the spare masks are secret). */
void dsig_mldsa_mask_wipe(mldsa_mask_stream *st)
{
    dsig_memzero(st, sizeof *st);
}

/* @spec FIPS 204 Algorithm 29 SampleInBall: sign bits from the first 8 bytes of H(c̃), then τ
 * Fisher–Yates style placements by rejection on the following bytes. */
void dsig_mldsa_sample_in_ball(const dsig_mldsa_params *p, mldsa_poly *c, const uint8_t *ctilde)
{
    uint8_t buf[DSIG_SHAKE256_RATE];
    dsig_keccak ks;
    dsig_shake256_init(&ks);
    dsig_keccak_absorb(&ks, ctilde, p->lambda / 4);
    dsig_shake_finalize(&ks);
    dsig_keccak_squeezeblocks(&ks, buf, 1);
    uint64_t signs = 0;
    for (unsigned i = 0; i < 8; i++)
        signs |= (uint64_t)buf[i] << (8 * i);
    size_t pos = 8;
    memset(c->c, 0, sizeof c->c);
    for (unsigned i = DSIG_MLDSA_N - p->tau; i < DSIG_MLDSA_N; i++) {
        unsigned j;
        do {
            if (pos == sizeof buf) {
                dsig_keccak_squeezeblocks(&ks, buf, 1);
                pos = 0;
            }
            j = buf[pos++];
        } while (j > i);
        c->c[i] = c->c[j];
        c->c[j] = 1 - 2 * (int32_t)(signs & 1);
        signs >>= 1;
    }
}
