/*
 * src/hash/keccak_x8.c — eight Keccak sponges stepped together (keccak.h, dsig_keccak_x8): absorb of
 * eight equal-length inputs in one go, whole-block squeezes. The permutation is the dispatched x8
 * kernel (keccak_dispatch.c); this file only moves bytes in and out of the interleaved lanes.
 */
#include <string.h>

#include "core/bytes.h"
#include "dsig/mem.h"
#include "hash/keccak.h"

/* @spec FIPS 202 §4 absorbing + §5.1 padding for eight equal-length inputs into the interleaved state. */
void dsig_keccak_x8_absorb_once(dsig_keccak_x8 *k, unsigned rate, uint8_t ds,
                                const uint8_t *const in[8], size_t inlen)
{
    memset(k->s, 0, sizeof k->s);
    k->rate = rate;
    size_t off = 0;
    for (; inlen - off >= rate; off += rate) {
        for (unsigned i = 0; i < rate / 8; i++)
            for (unsigned j = 0; j < 8; j++)
                k->s[8 * i + j] ^= dsig_load_le64(in[j] + off + 8 * i);
        dsig_keccak_f1600_x8(k->s);
    }
    size_t rem = inlen - off;
    for (unsigned j = 0; j < 8; j++) {
        /* whole lanes of the tail, then its last partial lane byte by byte (lengths are public) */
        size_t t = 0;
        for (; rem - t >= 8; t += 8)
            k->s[8 * (t / 8) + j] ^= dsig_load_le64(in[j] + off + t);
        for (; t < rem; t++)
            k->s[8 * (t / 8) + j] ^= (uint64_t)in[j][off + t] << (8 * (t % 8));
        k->s[8 * (rem / 8) + j] ^= (uint64_t)ds << (8 * (rem % 8));
        k->s[8 * ((rate - 1) / 8) + j] ^= 0x80ULL << (8 * ((rate - 1) % 8));
    }
}

/* @spec FIPS 202 §4 squeezing, whole blocks, eight instances: lane stores straight to each output. */
void dsig_keccak_x8_squeezeblocks(dsig_keccak_x8 *k, uint8_t *const out[8], size_t nblocks)
{
    unsigned rate = k->rate;
    for (size_t n = 0; n < nblocks; n++) {
        dsig_keccak_f1600_x8(k->s);
        for (unsigned i = 0; i < rate / 8; i++)
            for (unsigned j = 0; j < 8; j++)
                dsig_store_le64(out[j] + n * rate + 8 * i, k->s[8 * i + j]);
    }
}

/* Wipe eight states that absorbed secrets. */
void dsig_keccak_x8_wipe(dsig_keccak_x8 *k)
{
    dsig_memzero(k, sizeof *k);
}
