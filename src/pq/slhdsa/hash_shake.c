/*
 * src/pq/slhdsa/hash_shake.c — the SHAKE family's tree hashes (FIPS 205 §11.1): F, H, PRF, T_l are
 * SHAKE256(PK.seed ‖ ADRS ‖ input, 8n). F/H/PRF inputs (at most 32 + 32 + 64 bytes) fit one rate
 * block, so each call is one Keccak-f[1600]; batches go four at a time through dsig_keccak_x4 (AVX2
 * when available).
 */
#include <string.h>

#include "dsig/mem.h"
#include "hash/keccak.h"
#include "pq/slhdsa/hash.h"

/* Nothing to precompute: PK.seed is at most 32 bytes of one 136-byte block. */
static void shake_init(dsig_slhdsa_ctx *c)
{
    (void)c;
}

/* count one-block SHAKE256 hashes: out[i] = SHAKE256(PK.seed ‖ adrs[i] ‖ in[i], 8n). */
static void shake_many(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs,
                       const uint8_t *const *in, uint8_t *const *out, size_t count, size_t inlen)
{
    unsigned n = c->p->n;
    size_t total = n + 32 + inlen;
    uint8_t buf[4][DSIG_SLHDSA_NMAX + 32 + 2 * DSIG_SLHDSA_NMAX];
    uint8_t sq[4][DSIG_SHAKE256_RATE];
    dsig_keccak_x4 k4;
    size_t i = 0;
    while (count - i >= 2) {
        /* Four lanes; with 2 or 3 left the spare lanes recompute lane 0 (outputs dropped). */
        size_t g = count - i < 4 ? count - i : 4;
        const uint8_t *ins[4];
        uint8_t *outs[4];
        for (size_t j = 0; j < 4; j++) {
            size_t src = j < g ? i + j : i;
            memcpy(buf[j], c->pk_seed, n);
            memcpy(buf[j] + n, adrs[src], 32);
            memcpy(buf[j] + n + 32, in[src], inlen);
            ins[j] = buf[j];
            outs[j] = sq[j];
        }
        dsig_keccak_x4_absorb_once(&k4, DSIG_SHAKE256_RATE, DSIG_KECCAK_DS_SHAKE, ins, total);
        dsig_keccak_x4_squeezeblocks(&k4, outs, 1);
        for (size_t j = 0; j < g; j++)
            memcpy(out[i + j], sq[j], n);
        i += g;
    }
    if (i < count) {
        dsig_keccak k;
        memcpy(buf[0], c->pk_seed, n);
        memcpy(buf[0] + n, adrs[i], 32);
        memcpy(buf[0] + n + 32, in[i], inlen);
        dsig_shake256_init(&k);
        dsig_keccak_absorb(&k, buf[0], total);
        dsig_shake_finalize(&k);
        dsig_keccak_squeeze(&k, out[i], n);
        dsig_keccak_wipe(&k);
    }
    /* Chain values and PRF outputs are secret until revealed: wipe once per batch. */
    dsig_keccak_x4_wipe(&k4);
    dsig_memzero(buf, sizeof buf);
    dsig_memzero(sq, sizeof sq);
}

/* @spec FIPS 205 §11.1 F (and PRF): SHAKE256(PK.seed ‖ ADRS ‖ M1, 8n). */
static void shake_f_many(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs,
                         const uint8_t *const *in, uint8_t *const *out, size_t count)
{
    shake_many(c, adrs, in, out, count, c->p->n);
}

/* @spec FIPS 205 §11.1 H: SHAKE256(PK.seed ‖ ADRS ‖ M2, 8n). */
static void shake_h_many(const dsig_slhdsa_ctx *c, const uint8_t *const *adrs,
                         const uint8_t *const *in, uint8_t *const *out, size_t count)
{
    shake_many(c, adrs, in, out, count, 2 * (size_t)c->p->n);
}

/* @spec FIPS 205 §11.1 T_l: SHAKE256(PK.seed ‖ ADRS ‖ M_l, 8n). */
static void shake_t(const dsig_slhdsa_ctx *c, const uint8_t adrs[32], const uint8_t *in,
                    size_t inlen, uint8_t *out)
{
    dsig_keccak k;
    dsig_shake256_init(&k);
    dsig_keccak_absorb(&k, c->pk_seed, c->p->n);
    dsig_keccak_absorb(&k, adrs, 32);
    dsig_keccak_absorb(&k, in, inlen);
    dsig_shake_finalize(&k);
    dsig_keccak_squeeze(&k, out, c->p->n);
    dsig_keccak_wipe(&k);
}

/* Back-end name for benchmarks and tests. */
static const char *shake_backend(const dsig_slhdsa_ctx *c)
{
    (void)c;
    return strcmp(dsig_keccak_backend(), "portable") == 0 ? "keccak-x4-portable" : "keccak-x4-avx2";
}

const struct dsig_slhdsa_hash_ops dsig_slhdsa_shake_ops = {
    .init = shake_init,
    .f_many = shake_f_many,
    .h_many = shake_h_many,
    .t = shake_t,
    .backend = shake_backend,
};
