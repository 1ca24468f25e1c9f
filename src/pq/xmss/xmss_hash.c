/*
 * src/pq/xmss/xmss_hash.c — the tweakable hashes of XMSS (RFC 8391 §5.1 + SP 800-208 §5): the generic
 * Hash(toByte(pad) ‖ KEY ‖ M) and the precomputed SHA-2 paths (seeded PRF / PRF_keygen states, F and H
 * as fixed one- or two-block compressions), and the per-key hash context.
 */
#include <string.h>

#include "dsig/mem.h"
#include "hash/keccak.h"
#include "hash/sha256.h"
#include "hash/sha256_impl.h"
#include "hash/sha512.h"
#include "pq/xmss/xmss_internal.h"

/* @spec RFC 8391 §5.1 / SP 800-208 §5: Hash(toByte(pad, padlen) ‖ KEY ‖ M) truncated to n, for the
 * generic cases (the precomputed SHA-2 paths below cover the hot ones). scr: caller's scratch, which
 * the caller wipes when KEY or M were secret. */
void dsig_xmss_core_hash(const dsig_xmss_hash *c, unsigned pad, const uint8_t *key, const uint8_t *in,
                         size_t inlen, uint8_t *out, uint8_t *scr)
{
    const dsig_xmss_params *p = c->p;
    size_t L = p->padlen;
    memset(scr, 0, L);
    scr[L - 1] = (uint8_t)pad;
    memcpy(scr + L, key, p->n);
    L += p->n;
    memcpy(scr + L, in, inlen);
    L += inlen;
    uint8_t t[64];
    switch (p->hash) {
    case XMSS_SHA256:
        dsig_sha256_with(c->c256, t, scr, L);
        memcpy(out, t, p->n);
        break;
    case XMSS_SHA512:
        dsig_sha512(t, scr, L);
        memcpy(out, t, p->n);
        break;
    case XMSS_SHAKE128:
        dsig_shake128(out, p->n, scr, L);
        break;
    default:
        dsig_shake256(out, p->n, scr, L);
        break;
    }
}

/* SHA-256 of a one-block tail after a precomputed state: tail = data ‖ 0x80 ‖ 0.. ‖ bitlen. */
static inline void sha256_tail(const dsig_xmss_hash *c, uint32_t st[8], const uint8_t *data, size_t dlen,
                               uint64_t total)
{
    uint8_t blk[64];
    memcpy(blk, data, dlen);
    blk[dlen] = 0x80;
    memset(blk + dlen + 1, 0, 55 - dlen);
    dsig_store_be64(blk + 56, total * 8);
    c->c256(st, blk, 1);
}

/* @spec RFC 8391 §5.1 PRF(SEED, ADRS) = Hash(toByte(3, padlen) ‖ SEED ‖ ADRS): one compression
 * after the precomputed PUB_SEED block for SHA2 n = 32 (SHA-256) and n = 64 (SHA-512). */
void dsig_xmss_prf_adrs(const dsig_xmss_hash *c, uint8_t *out, const uint32_t a[8], uint8_t *scr)
{
    const dsig_xmss_params *p = c->p;
    uint8_t ab[32];
    adrs_bytes(ab, a);
    if (p->hash == XMSS_SHA256 && p->n == 32) {
        uint32_t st[8];
        memcpy(st, c->prf256, sizeof st);
        sha256_tail(c, st, ab, 32, 96);
        dsig_sha256_store(out, st);
    } else if (p->hash == XMSS_SHA512) {
        uint64_t st[8];
        uint8_t blk[128];
        memcpy(st, c->prf512, sizeof st);
        memcpy(blk, ab, 32);
        blk[32] = 0x80;
        memset(blk + 33, 0, 128 - 33 - 8);
        dsig_store_be64(blk + 120, (128 + 32) * 8);
        dsig_sha512_compress(st, blk, 1);
        dsig_sha512_store(out, st);
    } else {
        dsig_xmss_core_hash(c, PAD_PRF, c->pub_seed, ab, 32, out, scr);
    }
}

/* @spec SP 800-208 §5.1/§5.3 PRF_keygen(SK_SEED, PUB_SEED ‖ ADRS) = Hash(toByte(4, padlen) ‖ SK_SEED ‖
 * PUB_SEED ‖ ADRS): the WOTS+ secret key elements (the reference implementation's derivation). */
void dsig_xmss_prf_keygen(const dsig_xmss_hash *c, uint8_t *out, const uint32_t a[8], uint8_t *scr)
{
    const dsig_xmss_params *p = c->p;
    uint8_t in[XMSS_NMAX + 32];
    memcpy(in, c->pub_seed, p->n);
    adrs_bytes(in + p->n, a);
    if (p->hash == XMSS_SHA256 && p->n == 32) {
        uint32_t st[8];
        uint8_t blk[64];
        memcpy(st, c->kg256, sizeof st);
        c->c256(st, in, 1);
        blk[0] = 0x80;
        memset(blk + 1, 0, 55);
        dsig_store_be64(blk + 56, 128 * 8);
        c->c256(st, blk, 1);
        dsig_sha256_store(out, st);
        dsig_memzero(st, sizeof st);
    } else if (p->hash == XMSS_SHA512) {
        uint64_t st[8];
        uint8_t blk[128];
        memcpy(st, c->kg512, sizeof st);
        memcpy(blk, in, 96);
        blk[96] = 0x80;
        memset(blk + 97, 0, 128 - 97 - 8);
        dsig_store_be64(blk + 120, (128 + 96) * 8);
        dsig_sha512_compress(st, blk, 1);
        dsig_sha512_store(out, st);
        dsig_memzero(st, sizeof st);
        dsig_memzero(blk, sizeof blk);
    } else {
        dsig_xmss_core_hash(c, PAD_PRF_KEYGEN, c->sk_seed, in, p->n + 32, out, scr);
    }
}

/* @spec RFC 8391 §5.1 F(KEY, M) = Hash(toByte(0, padlen) ‖ KEY ‖ M), |M| = n. */
void dsig_xmss_hash_f(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *key, const uint8_t *m,
                      uint8_t *scr)
{
    if (c->p->hash == XMSS_SHA256 && c->p->n == 32) {
        uint32_t st[8];
        memcpy(st, dsig_sha256_iv, sizeof st);
        memset(scr, 0, 32);
        memcpy(scr + 32, key, 32);
        c->c256(st, scr, 1);
        sha256_tail(c, st, m, 32, 96);
        dsig_sha256_store(out, st);
    } else {
        dsig_xmss_core_hash(c, PAD_F, key, m, c->p->n, out, scr);
    }
}

/* @spec RFC 8391 §5.1 H(KEY, M) = Hash(toByte(1, padlen) ‖ KEY ‖ M), |M| = 2n. */
void dsig_xmss_hash_h(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *key, const uint8_t *m,
                      uint8_t *scr)
{
    if (c->p->hash == XMSS_SHA256 && c->p->n == 32) {
        uint32_t st[8];
        uint8_t blk[64];
        memcpy(st, dsig_sha256_iv, sizeof st);
        memset(scr, 0, 32);
        scr[31] = PAD_H;
        memcpy(scr + 32, key, 32);
        memcpy(scr + 64, m, 64);
        c->c256(st, scr, 2);
        blk[0] = 0x80;
        memset(blk + 1, 0, 55);
        dsig_store_be64(blk + 56, 128 * 8);
        c->c256(st, blk, 1);
        dsig_sha256_store(out, st);
    } else {
        dsig_xmss_core_hash(c, PAD_H, key, m, 2 * c->p->n, out, scr);
    }
}

/* Precompute the seeded states: PRF's toByte(3) ‖ PUB_SEED and PRF_keygen's toByte(4) ‖ SK_SEED
 * blocks are constant per key and fill exactly one block for SHA2 n = 32 / n = 64. */
void dsig_xmss_hash_init(dsig_xmss_hash *c, const dsig_xmss_params *p, const uint8_t *pub_seed,
                         const uint8_t *sk_seed)
{
    uint8_t blk[128];
    memset(c, 0, sizeof *c);
    c->p = p;
    c->c256 = dsig_sha256_ops_get()->compress; /* the process-wide choice, kept at hand */
    memcpy(c->pub_seed, pub_seed, p->n);
    if (sk_seed) {
        memcpy(c->sk_seed, sk_seed, p->n);
        c->has_sk = 1;
    }
    if (p->hash == XMSS_SHA256 && p->n == 32) {
        memset(blk, 0, 32);
        blk[31] = PAD_PRF;
        memcpy(blk + 32, pub_seed, 32);
        memcpy(c->prf256, dsig_sha256_iv, sizeof c->prf256);
        c->c256(c->prf256, blk, 1);
        if (sk_seed) {
            blk[31] = PAD_PRF_KEYGEN;
            memcpy(blk + 32, sk_seed, 32);
            memcpy(c->kg256, dsig_sha256_iv, sizeof c->kg256);
            c->c256(c->kg256, blk, 1);
        }
    } else if (p->hash == XMSS_SHA512) {
        memset(blk, 0, 64);
        blk[63] = PAD_PRF;
        memcpy(blk + 64, pub_seed, 64);
        memcpy(c->prf512, dsig_sha512_iv, sizeof c->prf512);
        dsig_sha512_compress(c->prf512, blk, 1);
        if (sk_seed) {
            blk[63] = PAD_PRF_KEYGEN;
            memcpy(blk + 64, sk_seed, 64);
            memcpy(c->kg512, dsig_sha512_iv, sizeof c->kg512);
            dsig_sha512_compress(c->kg512, blk, 1);
        }
    }
    dsig_memzero(blk, sizeof blk);
}

/* Wipe the secret parts of a hash context. */
void dsig_xmss_hash_wipe(dsig_xmss_hash *c)
{
    dsig_memzero(c, sizeof *c);
}
