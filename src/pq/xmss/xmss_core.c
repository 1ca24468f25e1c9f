/*
 * src/pq/xmss/xmss_core.c — XMSS / XMSS^MT (RFC 8391) with the SP 800-208 key derivation:
 * tweakable hashes (§5.1 + SP 800-208 §5), WOTS+ (§3.1, w = 16), L-trees and tree hashing (§4.1),
 * signing and verification (§4.1.9, §4.1.10, §4.2.4, §4.2.5).
 *
 * Traversal: every layer keeps the nodes its current tree needs for authentication paths — the levels
 * split..t of the whole tree ("top") and all nodes of the current bottom subtree of height split
 * ("bot") — and two incremental tree-hash builders: the next bottom subtree and (when split < t) the
 * top of the next tree. Each signature advances the builders by ceil(remaining leaves / remaining
 * signatures) leaves, so a builder is complete exactly when its subtree becomes current and a
 * signature never recomputes a tree (one leaf per layer per signature in the steady state). For
 * t <= 10 the split is t: the whole tree is stored (2^(t+1) nodes) and XMSS-*_10 signing does no
 * tree work at all.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "dsig/mem.h"
#include "hash/keccak.h"
#include "hash/sha256.h"
#include "hash/sha256_impl.h"
#include "hash/sha512.h"
#include "pq/xmss/xmss.h"
#include "core/bytes.h"

unsigned dsig_xmss_test_split;

/* Domain-separation values of the toByte(x, padlen) prefix (RFC 8391 §5.1, SP 800-208 §5). */
enum { PAD_F = 0, PAD_H = 1, PAD_HMSG = 2, PAD_PRF = 3, PAD_PRF_KEYGEN = 4 };

#define SCRATCH 256 /* padlen + n + 2n at most (64 + 64 + 128) */

/* @spec RFC 8391 §2.4 toByte(x, y): x big-endian in y bytes. */
static void to_byte(uint8_t *out, uint64_t x, size_t y)
{
    for (size_t i = 0; i < y; i++)
        out[y - 1 - i] = i < 8 ? (uint8_t)(x >> (8 * i)) : 0;
}

/* @spec RFC 8391 §2.5 ADRS: eight 32-bit words, big-endian. */
static inline void adrs_bytes(uint8_t out[32], const uint32_t a[8])
{
    for (int i = 0; i < 8; i++)
        dsig_store_be32(out + 4 * i, a[i]);
}

/* An address with layer and tree set (§2.5 words 0-2) and a type (word 3); the rest zero. */
static inline void adrs_init(uint32_t a[8], unsigned layer, uint64_t tree, uint32_t type)
{
    memset(a, 0, 8 * sizeof a[0]);
    a[0] = layer;
    a[1] = (uint32_t)(tree >> 32);
    a[2] = (uint32_t)tree;
    a[3] = type;
}

/* ---- hash functions ------------------------------------------------------------------------ */

/* @spec RFC 8391 §5.1 / SP 800-208 §5: Hash(toByte(pad, padlen) ‖ KEY ‖ M) truncated to n, for the
 * generic cases (the precomputed SHA-2 paths below cover the hot ones). scr: caller's scratch, which
 * the caller wipes when KEY or M were secret. */
static void core_hash(const dsig_xmss_hash *c, unsigned pad, const uint8_t *key, const uint8_t *in,
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
static void prf_adrs(const dsig_xmss_hash *c, uint8_t *out, const uint32_t a[8], uint8_t *scr)
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
        core_hash(c, PAD_PRF, c->pub_seed, ab, 32, out, scr);
    }
}

/* @spec SP 800-208 §5.1/§5.3 PRF_keygen(SK_SEED, PUB_SEED ‖ ADRS) = Hash(toByte(4, padlen) ‖ SK_SEED ‖
 * PUB_SEED ‖ ADRS): the WOTS+ secret key elements (the reference implementation's derivation). */
static void prf_keygen(const dsig_xmss_hash *c, uint8_t *out, const uint32_t a[8], uint8_t *scr)
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
        core_hash(c, PAD_PRF_KEYGEN, c->sk_seed, in, p->n + 32, out, scr);
    }
}

/* @spec RFC 8391 §5.1 F(KEY, M) = Hash(toByte(0, padlen) ‖ KEY ‖ M), |M| = n. */
static inline void hash_f(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *key, const uint8_t *m,
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
        core_hash(c, PAD_F, key, m, c->p->n, out, scr);
    }
}

/* @spec RFC 8391 §5.1 H(KEY, M) = Hash(toByte(1, padlen) ‖ KEY ‖ M), |M| = 2n. */
static void hash_h(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *key, const uint8_t *m,
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
        core_hash(c, PAD_H, key, m, 2 * c->p->n, out, scr);
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

/* ---- WOTS+ ----------------------------------------------------------------------------------- */

/* chain() for SHA2 n = 32 with the blocks built once: per step two PRF compressions after the
 * seeded state (ADRS words 6-7 patched in place) and the two compressions of F. */
static void chain_sha256(const dsig_xmss_hash *c, uint8_t *x, unsigned start, unsigned steps,
                         const uint32_t a[8])
{
    uint8_t pblk[64], f1[64], f2[64];
    uint32_t st[8];
    adrs_bytes(pblk, a);
    pblk[32] = 0x80;
    memset(pblk + 33, 0, 23);
    dsig_store_be64(pblk + 56, 96 * 8);
    memset(f1, 0, 32); /* toByte(0, 32) ‖ KEY */
    f2[32] = 0x80;     /* (X xor BM) ‖ padding */
    memset(f2 + 33, 0, 23);
    dsig_store_be64(f2 + 56, 96 * 8);
    for (unsigned j = start; j < start + steps; j++) {
        dsig_store_be32(pblk + 24, j);
        dsig_store_be32(pblk + 28, 0);
        memcpy(st, c->prf256, sizeof st);
        c->c256(st, pblk, 1);
        dsig_sha256_store(f1 + 32, st);
        dsig_store_be32(pblk + 28, 1);
        memcpy(st, c->prf256, sizeof st);
        c->c256(st, pblk, 1);
        dsig_sha256_store(f2, st);
        for (unsigned i = 0; i < 32; i++)
            f2[i] ^= x[i];
        memcpy(st, dsig_sha256_iv, sizeof st);
        c->c256(st, f1, 1);
        c->c256(st, f2, 1);
        dsig_sha256_store(x, st);
    }
    dsig_memzero(f2, 32);
    dsig_memzero(st, sizeof st);
}

/* @spec RFC 8391 §3.1.2 chain(X, i, s, SEED, ADRS): s iterations of F from step i, in place. */
static void chain(const dsig_xmss_hash *c, uint8_t *x, unsigned start, unsigned steps, uint32_t a[8],
                  uint8_t *scr)
{
    unsigned n = c->p->n;
    if (c->p->hash == XMSS_SHA256 && n == 32) {
        chain_sha256(c, x, start, steps, a);
        return;
    }
    uint8_t key[XMSS_NMAX], bm[XMSS_NMAX], tmp[XMSS_NMAX];
    for (unsigned j = start; j < start + steps; j++) {
        a[6] = j;
        a[7] = 0;
        prf_adrs(c, key, a, scr);
        a[7] = 1;
        prf_adrs(c, bm, a, scr);
        for (unsigned i = 0; i < n; i++)
            tmp[i] = x[i] ^ bm[i];
        hash_f(c, x, key, tmp, scr);
    }
    dsig_memzero(tmp, sizeof tmp);
}

/* @spec RFC 8391 §3.1.5 (base_w, w = 16) and §3.1.5 checksum: the len chain positions for msg. */
static void wots_digits(const dsig_xmss_params *p, unsigned *d, const uint8_t *msg)
{
    unsigned csum = 0;
    for (unsigned i = 0; i < p->len1; i++) {
        d[i] = (msg[i / 2] >> ((i & 1) ? 0 : 4)) & 15;
        csum += 15 - d[i];
    }
    /* csum << (8 - ((len2 * lg(w)) % 8)) = << 4, as toByte(csum, 2), base_w into len2 = 3 digits */
    csum <<= 4;
    d[p->len1] = (csum >> 12) & 15;
    d[p->len1 + 1] = (csum >> 8) & 15;
    d[p->len1 + 2] = (csum >> 4) & 15;
}

/* @spec RFC 8391 §3.1.4 WOTS_genPK (SP 800-208 §5 PRF_keygen) for chains i0 .. i0+lanes-1 at once
 * (SHA2 n = 32): the lanes' PRF, F-key and F-message compressions run side by side; only the second
 * compression of F depends on the previous step. Same bytes as prf_keygen + chain_sha256. */
static void wots_pkgen_wide(const dsig_xmss_hash *c, const dsig_sha256_ops *o, uint8_t *pk, uint32_t a[8],
                            unsigned i0)
{
    enum { L = DSIG_SHA256_MAX_LANES };
    const unsigned lanes = o->lanes < L ? o->lanes : L; /* always o->lanes; the bound is for the compiler */
    uint8_t kb[L][64], pad[64], pk_[L][64], pm[L][64], f1[L][64], f2[L][64];
    const uint8_t *bk[L], *bpad[L], *bpk[L], *bpm[L], *bf1[L], *bf2[L];
    uint32_t st[L][8], key[L][8], bm[L][8];
    pad[0] = 0x80; /* the second block of PRF_keygen: only padding (message of 128 bytes) */
    memset(pad + 1, 0, 55);
    dsig_store_be64(pad + 56, 128 * 8);
    for (unsigned k = 0; k < lanes; k++) {
        a[5] = i0 + k;
        a[6] = 0;
        a[7] = 0;
        memcpy(kb[k], c->pub_seed, 32);
        adrs_bytes(kb[k] + 32, a);
        adrs_bytes(pk_[k], a);
        pk_[k][32] = 0x80;
        memset(pk_[k] + 33, 0, 23);
        dsig_store_be64(pk_[k] + 56, 96 * 8);
        memcpy(pm[k], pk_[k], 64);
        memset(f1[k], 0, 32); /* toByte(0, 32) ‖ KEY */
        f2[k][32] = 0x80;     /* (X xor BM) ‖ padding */
        memset(f2[k] + 33, 0, 23);
        dsig_store_be64(f2[k] + 56, 96 * 8);
        bk[k] = kb[k], bpad[k] = pad, bpk[k] = pk_[k], bpm[k] = pm[k], bf1[k] = f1[k], bf2[k] = f2[k];
    }
    o->lanes_from(st, c->kg256, bk);
    o->lanes_cont(st, bpad);
    for (unsigned k = 0; k < lanes; k++)
        dsig_sha256_store(pk + (i0 + k) * 32, st[k]);
    for (unsigned j = 0; j < 15; j++) {
        for (unsigned k = 0; k < lanes; k++) {
            dsig_store_be32(pk_[k] + 24, j);
            dsig_store_be32(pk_[k] + 28, 0);
            dsig_store_be32(pm[k] + 24, j);
            dsig_store_be32(pm[k] + 28, 1);
        }
        o->lanes_from(key, c->prf256, bpk);
        o->lanes_from(bm, c->prf256, bpm);
        for (unsigned k = 0; k < lanes; k++) {
            dsig_sha256_store(f1[k] + 32, key[k]);
            dsig_sha256_store(f2[k], bm[k]);
            const uint8_t *x = pk + (i0 + k) * 32;
            for (unsigned b = 0; b < 32; b++)
                f2[k][b] ^= x[b];
        }
        o->lanes_from(st, dsig_sha256_iv, bf1);
        o->lanes_cont(st, bf2);
        for (unsigned k = 0; k < lanes; k++)
            dsig_sha256_store(pk + (i0 + k) * 32, st[k]);
    }
    dsig_memzero(kb, lanes * sizeof kb[0]); /* SK_SEED-derived secrets: the chain starts and their states */
    dsig_memzero(f2, lanes * sizeof f2[0]);
    dsig_memzero(st, lanes * sizeof st[0]);
}

/* @spec RFC 8391 §3.1.4 WOTS_genPK with SP 800-208 §5 secret key elements PRF_keygen(SK_SEED,
 * PUB_SEED ‖ ADRS(chain i, hash 0, keyAndMask 0)). a: OTS address (type 0, OTS index set). The
 * chains are independent: SHA2 n = 32 runs them in groups on the wide kernels (wots_pkgen_wide). */
static void wots_pkgen(const dsig_xmss_hash *c, uint8_t *pk, uint32_t a[8], uint8_t *scr)
{
    unsigned n = c->p->n, i = 0;
    const dsig_sha256_ops *o = dsig_sha256_ops_get();
    unsigned lanes = c->p->hash == XMSS_SHA256 && n == 32 ? o->lanes : 1;
    for (; lanes > 1 && i + lanes <= c->p->len; i += lanes)
        wots_pkgen_wide(c, o, pk, a, i);
    for (; i < c->p->len; i++) {
        a[5] = i;
        a[6] = 0;
        a[7] = 0;
        prf_keygen(c, pk + i * n, a, scr);
        chain(c, pk + i * n, 0, 15, a, scr);
    }
}

/* @spec RFC 8391 §3.1.5 WOTS_sign of an n-byte message. */
static void wots_sign(const dsig_xmss_hash *c, uint8_t *sig, const uint8_t *msg, uint32_t a[8],
                      uint8_t *scr)
{
    unsigned n = c->p->n, d[XMSS_LEN_MAX];
    wots_digits(c->p, d, msg);
    /* The digits of what is signed — a message digest randomized by r (in the signature), or the root
     * of the tree below (every verifier recomputes it) — are public; the chain lengths follow them. */
    DSIG_CT_DECLASSIFY(d, sizeof d);
    for (unsigned i = 0; i < c->p->len; i++) {
        a[5] = i;
        a[6] = 0;
        a[7] = 0;
        prf_keygen(c, sig + i * n, a, scr);
        chain(c, sig + i * n, 0, d[i], a, scr);
    }
}

/* @spec RFC 8391 §3.1.6 WOTS_pkFromSig. */
static void wots_pk_from_sig(const dsig_xmss_hash *c, uint8_t *pk, const uint8_t *sig,
                             const uint8_t *msg, uint32_t a[8], uint8_t *scr)
{
    unsigned n = c->p->n, d[XMSS_LEN_MAX];
    wots_digits(c->p, d, msg);
    for (unsigned i = 0; i < c->p->len; i++) {
        a[5] = i;
        memcpy(pk + i * n, sig + i * n, n);
        chain(c, pk + i * n, d[i], 15 - d[i], a, scr);
    }
}

/* ---- trees ------------------------------------------------------------------------------------ */

/* @spec RFC 8391 §4.1.4 RAND_HASH(LEFT, RIGHT, SEED, ADRS); out may alias left or right. */
static void rand_hash(const dsig_xmss_hash *c, uint8_t *out, const uint8_t *left, const uint8_t *right,
                      uint32_t a[8], uint8_t *scr)
{
    unsigned n = c->p->n;
    uint8_t key[XMSS_NMAX], bm[2 * XMSS_NMAX], m[2 * XMSS_NMAX];
    a[7] = 0;
    prf_adrs(c, key, a, scr);
    a[7] = 1;
    prf_adrs(c, bm, a, scr);
    a[7] = 2;
    prf_adrs(c, bm + n, a, scr);
    for (unsigned i = 0; i < n; i++) {
        m[i] = left[i] ^ bm[i];
        m[n + i] = right[i] ^ bm[n + i];
    }
    hash_h(c, out, key, m, scr);
}

/* @spec RFC 8391 §4.1.5 ltree: compress a WOTS+ public key (destroyed) into one node. a: type 1. */
static void ltree(const dsig_xmss_hash *c, uint8_t *out, uint8_t *pk, uint32_t a[8], uint8_t *scr)
{
    unsigned n = c->p->n, l = c->p->len;
    a[5] = 0;
    while (l > 1) {
        unsigned half = l >> 1;
        for (unsigned i = 0; i < half; i++) {
            a[6] = i;
            rand_hash(c, pk + i * n, pk + 2 * i * n, pk + (2 * i + 1) * n, a, scr);
        }
        if (l & 1)
            memmove(pk + half * n, pk + (l - 1) * n, n);
        l = half + (l & 1);
        a[5]++;
    }
    memcpy(out, pk, n);
}

/* One leaf of tree `tree` at `layer`: ltree(WOTS_genPK) (RFC 8391 §4.1.6 loop body). */
static void gen_leaf(const dsig_xmss_hash *c, uint8_t *out, unsigned layer, uint64_t tree, uint32_t idx)
{
    uint8_t pk[XMSS_LEN_MAX * XMSS_NMAX], scr[SCRATCH];
    uint32_t a[8];
    adrs_init(a, layer, tree, 0);
    a[4] = idx;
    wots_pkgen(c, pk, a, scr);
    adrs_init(a, layer, tree, 1);
    a[4] = idx;
    ltree(c, out, pk, a, scr);
    dsig_memzero(scr, sizeof scr);
}

/* ---- traversal ---------------------------------------------------------------------------- */

/* Incremental tree hash over leaves [start, start+count) of one tree, storing completed nodes:
 * levels < split into `bot` (a bottom subtree's layout), levels >= split into `top`. */
typedef struct builder {
    int active;
    unsigned layer;
    uint64_t tree;
    uint32_t start, count, done, bsub;
    uint8_t *top, *bot;
    unsigned sp;
    uint8_t sh[XMSS_TMAX + 1];
    uint8_t stack[(XMSS_TMAX + 1) * XMSS_NMAX];
} builder;

typedef struct layer_state {
    uint8_t *top, *ntop, *bot, *nbot; /* current and next node stores */
    uint8_t *wsig;                    /* layers >= 1: WOTS+ signature of the layer below's root */
    uint64_t cur_p;                   /* leaf position (global over this layer's trees) */
    uint64_t wsig_for;                /* cur_p the wsig was made for (UINT64_MAX: none) */
    builder bb;                       /* next bottom subtree */
    builder bt;                       /* top of the next tree (split < t) */
} layer_state;

struct dsig_xmss_trav {
    const dsig_xmss_params *p;
    unsigned t, s, d;
    uint64_t next;     /* index the state is positioned for */
    size_t top_nodes, bot_nodes;
    uint8_t *mem;
    size_t mem_len;
    layer_state L[XMSS_DMAX];
};

/* Bottom-subtree height for trees of height t: whole trees up to 10 (64 KiB at n = 32), else about
 * half, so that the stored top and the bottom subtree stay small and a reload rebuilds 2^split leaves. */
static unsigned split_of(unsigned t)
{
    if (dsig_xmss_test_split && dsig_xmss_test_split < t)
        return dsig_xmss_test_split;
    return t <= 10 ? t : (t + 1) / 2;
}

/* Node offset of level lvl in a top store (levels s..t). */
static inline size_t off_top(const dsig_xmss_trav *T, unsigned lvl)
{
    size_t o = 0;
    for (unsigned k = T->s; k < lvl; k++)
        o += (size_t)1 << (T->t - k);
    return o;
}

/* Node offset of level lvl in a bottom store (levels 0..s-1). */
static inline size_t off_bot(const dsig_xmss_trav *T, unsigned lvl)
{
    size_t o = 0;
    for (unsigned k = 0; k < lvl; k++)
        o += (size_t)1 << (T->s - k);
    return o;
}

/* Record a completed node (level, index within its tree) where the builder keeps it. */
static void bstore(const dsig_xmss_trav *T, const builder *b, unsigned lvl, uint64_t idx, const uint8_t *node)
{
    unsigned n = T->p->n;
    if (lvl < T->s) {
        if (b->bot)
            memcpy(b->bot + (off_bot(T, lvl) + idx - ((uint64_t)b->bsub << (T->s - lvl))) * n, node, n);
    } else if (b->top) {
        memcpy(b->top + (off_top(T, lvl) + idx) * n, node, n);
    }
}

/* @spec RFC 8391 §4.1.6 treeHash, one leaf at a time. */
static void bstep(const dsig_xmss_hash *c, const dsig_xmss_trav *T, builder *b)
{
    unsigned n = T->p->n;
    uint8_t node[XMSS_NMAX], scr[SCRATCH];
    uint32_t a[8];
    uint64_t idx = b->start + b->done;
    gen_leaf(c, node, b->layer, b->tree, (uint32_t)idx);
    bstore(T, b, 0, idx, node);
    unsigned h = 0;
    adrs_init(a, b->layer, b->tree, 2);
    while (b->sp > 0 && b->sh[b->sp - 1] == h) {
        a[5] = h;
        a[6] = (uint32_t)(idx >> 1);
        rand_hash(c, node, b->stack + (b->sp - 1) * n, node, a, scr);
        b->sp--;
        h++;
        idx >>= 1;
        bstore(T, b, h, idx, node);
    }
    memcpy(b->stack + b->sp * n, node, n);
    b->sh[b->sp++] = (uint8_t)h;
    if (++b->done == b->count)
        b->active = 0;
}

/* Run a builder to completion. */
static void bfinish(const dsig_xmss_hash *c, const dsig_xmss_trav *T, builder *b)
{
    while (b->active)
        bstep(c, T, b);
}

/* Set a builder up over [start, start+count) of (layer, tree). */
static void bsetup(builder *b, unsigned layer, uint64_t tree, uint32_t start, uint32_t count,
                   uint32_t bsub, uint8_t *top, uint8_t *bot)
{
    b->active = 1;
    b->layer = layer;
    b->tree = tree;
    b->start = start;
    b->count = count;
    b->done = 0;
    b->bsub = bsub;
    b->top = top;
    b->bot = bot;
    b->sp = 0;
}

/* Start the next-bottom-subtree builder of layer l for the position of index q. */
static void start_bb(dsig_xmss_trav *T, unsigned l, uint64_t q)
{
    const dsig_xmss_params *p = T->p;
    layer_state *L = &T->L[l];
    uint64_t b = (q >> (T->t * l)) >> T->s, nb = b + 1;
    unsigned lg_total = p->h - T->t * l - T->s;
    L->bb.active = 0;
    if (nb >= ((uint64_t)1 << lg_total))
        return;
    uint32_t bsub = (uint32_t)(nb & (((uint64_t)1 << (T->t - T->s)) - 1));
    bsetup(&L->bb, l, nb >> (T->t - T->s), bsub << T->s, (uint32_t)1 << T->s, bsub,
           T->s == T->t ? L->ntop : NULL, L->nbot);
}

/* Start the next-tree-top builder of layer l (only when split < t). */
static void start_bt(dsig_xmss_trav *T, unsigned l, uint64_t q)
{
    const dsig_xmss_params *p = T->p;
    layer_state *L = &T->L[l];
    uint64_t nt = ((q >> (T->t * l)) >> T->t) + 1;
    L->bt.active = 0;
    if (T->s == T->t || nt >= ((uint64_t)1 << (p->h - T->t * (l + 1))))
        return;
    bsetup(&L->bt, l, nt, 0, (uint32_t)1 << T->t, 0, L->ntop, NULL);
}

/* Root of layer l's current tree. */
static inline const uint8_t *cur_root(const dsig_xmss_trav *T, unsigned l)
{
    return T->L[l].top + off_top(T, T->t) * T->p->n;
}

/* WOTS+ signature of layer l-1's root by layer l's current leaf (XMSS^MT, RFC 8391 §4.2.4). */
static void make_wsig(const dsig_xmss_hash *c, dsig_xmss_trav *T, unsigned l)
{
    layer_state *L = &T->L[l];
    uint8_t scr[SCRATCH];
    uint32_t a[8];
    uint64_t pos = L->cur_p;
    adrs_init(a, l, pos >> T->t, 0);
    a[4] = (uint32_t)(pos & (((uint64_t)1 << T->t) - 1));
    wots_sign(c, L->wsig, cur_root(T, l - 1), a, scr);
    dsig_memzero(scr, sizeof scr);
    L->wsig_for = pos;
}

/* Position every layer at index q from scratch (the reload cost: see docs/xmss.md). */
static void trav_init_at(const dsig_xmss_hash *c, dsig_xmss_trav *T, uint64_t q, const uint8_t *top)
{
    uint64_t mask = ((uint64_t)1 << T->t) - 1;
    for (unsigned l = 0; l < T->d; l++) {
        layer_state *L = &T->L[l];
        uint64_t pos = q >> (T->t * l), tree = pos >> T->t;
        uint32_t bsub = (uint32_t)((pos & mask) >> T->s);
        builder b;
        if (T->s < T->t) {
            if (top && T->d == 1) {
                memcpy(L->top, top, T->top_nodes * T->p->n);
            } else {
                bsetup(&b, l, tree, 0, (uint32_t)1 << T->t, 0, L->top, NULL);
                bfinish(c, T, &b);
            }
        }
        bsetup(&b, l, tree, bsub << T->s, (uint32_t)1 << T->s, bsub, T->s == T->t ? L->top : NULL,
               L->bot);
        bfinish(c, T, &b);
        dsig_memzero(&b, sizeof b);
        L->cur_p = pos;
        L->wsig_for = UINT64_MAX;
        start_bb(T, l, q);
        start_bt(T, l, q);
    }
    for (unsigned l = 1; l < T->d; l++)
        make_wsig(c, T, l);
    T->next = q;
}

/* Allocate a traversal for c's parameter set (node stores of every layer). */
static dsig_xmss_trav *trav_alloc(const dsig_xmss_params *p)
{
    dsig_xmss_trav *T = dsig_calloc(1, sizeof *T);
    if (!T)
        return NULL;
    T->p = p;
    T->t = p->t;
    T->s = split_of(p->t);
    T->d = p->d;
    T->top_nodes = ((size_t)2 << (T->t - T->s)) - 1;
    T->bot_nodes = ((size_t)2 << T->s) - 2;
    size_t per = (2 * T->top_nodes + 2 * T->bot_nodes) * p->n + (size_t)p->len * p->n;
    T->mem_len = per * p->d;
    T->mem = dsig_calloc(1, T->mem_len);
    if (!T->mem) {
        dsig_xfree(T, 0);
        return NULL;
    }
    uint8_t *m = T->mem;
    for (unsigned l = 0; l < p->d; l++) {
        layer_state *L = &T->L[l];
        L->top = m;
        m += T->top_nodes * p->n;
        L->ntop = m;
        m += T->top_nodes * p->n;
        L->bot = m;
        m += T->bot_nodes * p->n;
        L->nbot = m;
        m += T->bot_nodes * p->n;
        L->wsig = m;
        m += (size_t)p->len * p->n;
    }
    return T;
}

/* Free a traversal (its nodes are public, the builders' stacks too; wiped anyway). */
void dsig_xmss_trav_free(dsig_xmss_trav *T)
{
    if (!T)
        return;
    dsig_xfree(T->mem, T->mem_len);
    dsig_xfree(T, sizeof *T);
}

/* A traversal positioned at q. */
int dsig_xmss_trav_new(const dsig_xmss_hash *c, uint64_t q, const uint8_t *top, size_t top_len,
                       dsig_xmss_trav **out)
{
    const dsig_xmss_params *p = c->p;
    *out = NULL;
    if (!c->has_sk)
        return dsig_fail(DSIG_E_NO_PRIVATE, "XMSS traversal needs SK_SEED");
    if (p->h < 64 && q >> p->h)
        return dsig_fail(DSIG_E_EXHAUSTED, "XMSS index %llu beyond 2^%u", (unsigned long long)q, p->h);
    dsig_xmss_trav *T = trav_alloc(p);
    if (!T)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (top && (T->d != 1 || T->s == T->t || top_len != T->top_nodes * p->n))
        top = NULL; /* not applicable or not ours: recompute */
    trav_init_at(c, T, q, top);
    *out = T;
    return DSIG_OK;
}

/* Root of the top layer's current tree (the public root). */
const uint8_t *dsig_xmss_trav_root(const dsig_xmss_trav *T)
{
    return cur_root(T, T->d - 1);
}

/* Persistable top part (XMSS with split < t): the static nodes of levels split..h. */
int dsig_xmss_trav_top(const dsig_xmss_trav *T, const uint8_t **top, size_t *len)
{
    if (T->d != 1 || T->s == T->t) {
        *top = NULL;
        *len = 0;
        return 0;
    }
    *top = T->L[0].top;
    *len = T->top_nodes * T->p->n;
    return 1;
}

/* @spec RFC 8391 §4.1.7 XMSS_keyGen / §4.2.2 XMSSMT_keyGen (root of the top layer's first tree),
 * with the SP 800-208 seed-derived WOTS+ keys. */
int dsig_xmss_keygen(const dsig_xmss_hash *c, uint8_t *root, dsig_xmss_trav **trav)
{
    const dsig_xmss_params *p = c->p;
    if (trav) {
        int rc = dsig_xmss_trav_new(c, 0, NULL, 0, trav);
        if (rc)
            return rc;
        memcpy(root, cur_root(*trav, p->d - 1), p->n);
        return DSIG_OK;
    }
    /* root only: the top layer's tree 0 */
    dsig_xmss_trav *T = trav_alloc(p);
    if (!T)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    builder b;
    bsetup(&b, p->d - 1, 0, 0, (uint32_t)1 << T->t, 0, T->L[0].top, NULL);
    T->s = T->t; /* store the root only (into top's level-t slot) */
    bfinish(c, T, &b);
    memcpy(root, T->L[0].top + off_top(T, T->t) * p->n, p->n);
    dsig_memzero(&b, sizeof b);
    dsig_xmss_trav_free(T);
    return DSIG_OK;
}

/* Advance the layers to index q (switch to the prebuilt next subtrees/trees where q enters them). */
static void trav_advance(const dsig_xmss_hash *c, dsig_xmss_trav *T, uint64_t q)
{
    for (unsigned l = 0; l < T->d; l++) {
        layer_state *L = &T->L[l];
        uint64_t pos = q >> (T->t * l);
        if (pos != L->cur_p) {
            if ((pos >> T->s) != (L->cur_p >> T->s)) {
                uint8_t *x;
                bfinish(c, T, &L->bb);
                x = L->bot, L->bot = L->nbot, L->nbot = x;
                if ((pos >> T->t) != (L->cur_p >> T->t)) {
                    bfinish(c, T, &L->bt);
                    x = L->top, L->top = L->ntop, L->ntop = x;
                    L->cur_p = pos;
                    start_bt(T, l, q);
                }
                L->cur_p = pos;
                start_bb(T, l, q);
            }
            L->cur_p = pos;
        }
        if (l >= 1 && L->wsig_for != pos)
            make_wsig(c, T, l);
    }
}

/* 1 if q lies in the current bottom subtree of every layer (then no rebuild is needed to sign it:
 * the auth paths are all stored and the builders keep their targets). */
static int same_subtrees(const dsig_xmss_trav *T, uint64_t q)
{
    for (unsigned l = 0; l < T->d; l++)
        if (((q >> (T->t * l)) >> T->s) != (T->L[l].cur_p >> T->s))
            return 0;
    return 1;
}

/* The builders' share of work for this signature: ceil(remaining leaves / signatures left). */
static void trav_work(const dsig_xmss_hash *c, dsig_xmss_trav *T, uint64_t q)
{
    for (unsigned l = 0; l < T->d; l++) {
        layer_state *L = &T->L[l];
        unsigned sh = T->t * l;
        uint64_t pos = q >> sh;
        for (int which = 0; which < 2; which++) {
            builder *b = which ? &L->bt : &L->bb;
            if (!b->active)
                continue;
            unsigned lv = which ? T->t : T->s;
            uint64_t sw = ((pos >> lv) + 1) << (lv + sh);
            uint64_t left = sw - q, m = b->count - b->done;
            uint64_t k = (m + left - 1) / left;
            while (k-- && b->active)
                bstep(c, T, b);
        }
    }
}

/* Index encoded in a signature (RFC 8391 §4.1.8: 4 bytes; §4.2.4: ceil(h/8) bytes). */
uint64_t dsig_xmss_sig_index(const dsig_xmss_params *p, const uint8_t *sig)
{
    uint64_t q = 0;
    for (unsigned i = 0; i < p->idx_bytes; i++)
        q = q << 8 | sig[i];
    return q;
}

/* @spec RFC 8391 §4.1.9 XMSS_sign / §4.2.4 XMSSMT_sign without the layer-0 WOTS+ signature. */
int dsig_xmss_sign_prepare(const dsig_xmss_hash *c, dsig_xmss_trav *T, const uint8_t *sk_prf,
                           uint64_t q, uint8_t *sig)
{
    const dsig_xmss_params *p = c->p;
    unsigned n = p->n;
    if (p->h < 64 && q >> p->h)
        return dsig_fail(DSIG_E_EXHAUSTED, "XMSS index %llu beyond 2^%u", (unsigned long long)q, p->h);
    if (q != T->next && !same_subtrees(T, q))
        trav_init_at(c, T, q, NULL);
    trav_advance(c, T, q);

    uint8_t q32[32], scr[SCRATCH];
    to_byte(sig, q, p->idx_bytes);
    to_byte(q32, q, 32);
    core_hash(c, PAD_PRF, sk_prf, q32, 32, sig + p->idx_bytes, scr); /* r = PRF(SK_PRF, toByte(q, 32)) */
    dsig_memzero(scr, sizeof scr);

    uint8_t *o = sig + p->idx_bytes + n;
    uint64_t mask = ((uint64_t)1 << T->t) - 1;
    for (unsigned l = 0; l < T->d; l++) {
        layer_state *L = &T->L[l];
        uint64_t j = L->cur_p & mask;
        uint64_t bsub = j >> T->s;
        if (l == 0)
            memset(o, 0, (size_t)p->len * n); /* filled by dsig_xmss_sign_finish */
        else
            memcpy(o, L->wsig, (size_t)p->len * n);
        o += (size_t)p->len * n;
        for (unsigned lvl = 0; lvl < T->t; lvl++) {
            uint64_t sib = (j >> lvl) ^ 1;
            const uint8_t *src = lvl < T->s
                                     ? L->bot + (off_bot(T, lvl) + sib - (bsub << (T->s - lvl))) * n
                                     : L->top + (off_top(T, lvl) + sib) * n;
            memcpy(o, src, n);
            o += n;
        }
    }
    trav_work(c, T, q);
    T->next = q + 1;
    return DSIG_OK;
}

/* The layer-0 WOTS+ signature of the message digest. */
void dsig_xmss_sign_finish(const dsig_xmss_hash *c, const uint8_t *digest, uint8_t *sig)
{
    const dsig_xmss_params *p = c->p;
    uint64_t q = dsig_xmss_sig_index(p, sig);
    uint8_t scr[SCRATCH];
    uint32_t a[8];
    adrs_init(a, 0, p->mt ? q >> p->t : 0, 0);
    a[4] = (uint32_t)(q & (((uint64_t)1 << p->t) - 1));
    wots_sign(c, sig + p->idx_bytes + p->n, digest, a, scr);
    dsig_memzero(scr, sizeof scr);
}

/* @spec RFC 8391 §4.1.9 / §4.2.4 H_msg key: toByte(2, padlen) ‖ r ‖ root ‖ toByte(idx, n). */
size_t dsig_xmss_hmsg_prefix(const dsig_xmss_params *p, uint8_t *out, const uint8_t *r,
                             const uint8_t *root, uint64_t idx)
{
    size_t o = p->padlen;
    memset(out, 0, o);
    out[o - 1] = PAD_HMSG;
    memcpy(out + o, r, p->n);
    o += p->n;
    memcpy(out + o, root, p->n);
    o += p->n;
    to_byte(out + o, idx, p->n);
    return o + p->n;
}

/* @spec RFC 8391 §4.1.10 XMSS_rootFromSig (per layer) and §4.1.10 / §4.2.5 verification. */
int dsig_xmss_verify_digest(const dsig_xmss_hash *c, const uint8_t *root, const uint8_t *digest,
                            const uint8_t *sig)
{
    const dsig_xmss_params *p = c->p;
    unsigned n = p->n, t = p->t;
    uint64_t q = dsig_xmss_sig_index(p, sig);
    if (p->h < 64 && q >> p->h)
        return -1;
    uint8_t node[XMSS_NMAX], pk[XMSS_LEN_MAX * XMSS_NMAX], scr[SCRATCH];
    uint32_t a[8];
    const uint8_t *s = sig + p->idx_bytes + n;
    memcpy(node, digest, n);
    for (unsigned l = 0; l < p->d; l++) {
        uint64_t tree = q >> t;
        uint32_t j = (uint32_t)(q & (((uint64_t)1 << t) - 1));
        adrs_init(a, l, tree, 0);
        a[4] = j;
        wots_pk_from_sig(c, pk, s, node, a, scr);
        s += (size_t)p->len * n;
        adrs_init(a, l, tree, 1);
        a[4] = j;
        ltree(c, node, pk, a, scr);
        adrs_init(a, l, tree, 2);
        for (unsigned k = 0; k < t; k++, s += n) {
            a[5] = k;
            a[6] = j >> (k + 1);
            if ((j >> k) & 1)
                rand_hash(c, node, s, node, a, scr);
            else
                rand_hash(c, node, node, s, a, scr);
        }
        q = tree;
    }
    return dsig_ct_equal(node, root, n) ? 0 : -1;
}
