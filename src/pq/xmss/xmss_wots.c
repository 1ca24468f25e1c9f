/*
 * src/pq/xmss/xmss_wots.c — WOTS+ with w = 16 (RFC 8391 §3.1) and the SP 800-208 secret key
 * derivation: chains (SHA2 n = 32 with its blocks built once), key generation with the chains in
 * groups on the SHA-256 wide kernel (dsig_sha256_simd_degree()), signing, public key from signature.
 */
#include <string.h>

#include "core/ct.h"
#include "dsig/mem.h"
#include "hash/sha256.h"
#include "pq/xmss/xmss_internal.h"

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
        dsig_xmss_prf_adrs(c, key, a, scr);
        a[7] = 1;
        dsig_xmss_prf_adrs(c, bm, a, scr);
        for (unsigned i = 0; i < n; i++)
            tmp[i] = x[i] ^ bm[i];
        dsig_xmss_hash_f(c, x, key, tmp, scr);
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
    const uint8_t *bk[L] = {0}, *bpad[L] = {0}, *bpk[L] = {0}, *bpm[L] = {0}, *bf1[L] = {0}, *bf2[L] = {0};
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
void dsig_xmss_wots_pkgen(const dsig_xmss_hash *c, uint8_t *pk, uint32_t a[8], uint8_t *scr)
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
        dsig_xmss_prf_keygen(c, pk + i * n, a, scr);
        chain(c, pk + i * n, 0, 15, a, scr);
    }
}

/* @spec RFC 8391 §3.1.5 WOTS_sign of an n-byte message. */
void dsig_xmss_wots_sign(const dsig_xmss_hash *c, uint8_t *sig, const uint8_t *msg, uint32_t a[8],
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
        dsig_xmss_prf_keygen(c, sig + i * n, a, scr);
        chain(c, sig + i * n, 0, d[i], a, scr);
    }
}

/* @spec RFC 8391 §3.1.6 WOTS_pkFromSig. */
void dsig_xmss_wots_pk_from_sig(const dsig_xmss_hash *c, uint8_t *pk, const uint8_t *sig, const uint8_t *msg,
                                uint32_t a[8], uint8_t *scr)
{
    unsigned n = c->p->n, d[XMSS_LEN_MAX];
    wots_digits(c->p, d, msg);
    for (unsigned i = 0; i < c->p->len; i++) {
        a[5] = i;
        memcpy(pk + i * n, sig + i * n, n);
        chain(c, pk + i * n, d[i], 15 - d[i], a, scr);
    }
}
