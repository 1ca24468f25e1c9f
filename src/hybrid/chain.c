/*
 * src/hybrid/chain.c — the tweakable chain hash F (docs/dsig-format.md §3.2) for Haraka-512, the
 * SHA-256 compression and BLAKE3, plus the once-derived BLAKE3 domain keys, and the lock-step
 * multi-lane chain walker used by key generation and verification.
 */
#include <pthread.h>
#include <string.h>

#include "hash/blake3.h"
#include "hash/haraka.h"
#include "hash/sha256.h"
#include "core/internal.h"
#include "hybrid/hb_internal.h"

/* Context strings of the BLAKE3 derive-key mode, one per purpose (docs §3.1). */
static const char *const hb_contexts[HB_K_COUNT] = {
    "DSig hybrid signatures v1 chain hash F",
    "DSig hybrid signatures v1 one-time public key leaf",
    "DSig hybrid signatures v1 Merkle node",
    "DSig hybrid signatures v1 message digest",
    "DSig hybrid signatures v1 one-time key expansion",
    "DSig hybrid signatures v1 one-time public key lane",
};
static uint8_t hb_keys[HB_K_COUNT][32];
static pthread_once_t hb_keys_once = PTHREAD_ONCE_INIT;

/* Derive every domain key once (BLAKE3 derive_key(context, empty key material)). */
static void hb_keys_init(void)
{
    dsig_blake3_hasher h;
    for (int i = 0; i < HB_K_COUNT; i++) {
        dsig_blake3_init_derive_key(&h, hb_contexts[i]);
        dsig_blake3_finalize(&h, hb_keys[i], 32);
    }
}

/* The 32-byte BLAKE3 key of a purpose (HB_K_*). */
const uint8_t *hb_key(int which)
{
    pthread_once(&hb_keys_once, hb_keys_init);
    return hb_keys[which];
}

/* Lay out an F block: pk_seed 16 ‖ dom ‖ step ‖ chain u16le ‖ x (n) ‖ zeros. @spec docs §3.2 */
static inline void f_block(uint8_t blk[64], const uint8_t pk_seed[16], unsigned dom, uint32_t chain,
                           uint32_t step, const uint8_t *x, size_t n)
{
    memcpy(blk, pk_seed, 16);
    blk[16] = (uint8_t)dom;
    blk[17] = (uint8_t)step;
    dsig_store_le16(blk + 18, chain);
    memset(blk + HB_F_XOFF, 0, 64 - HB_F_XOFF);
    hb_cpy_val(blk + HB_F_XOFF, x, n);
}

/* Hash one F block with the parameter set's chain hash; 32 bytes out (callers truncate to n). */
static inline void f_hash1(unsigned hash, const uint8_t blk[64], uint8_t out[32])
{
    if (hash == DSIG_HB_HASH_HARAKA) {
        dsig_haraka512(out, blk);
    } else if (hash == DSIG_HB_HASH_SHA256) {
        uint32_t st[8];
        memcpy(st, dsig_sha256_iv, sizeof st);
        dsig_sha256_compress(st, blk, 1);
        dsig_sha256_store(out, st);
    } else {
        dsig_blake3_hash_block(hb_key(HB_K_CHAIN), blk, 64, out, 32);
    }
}

/* F on a single value. @spec docs §3.2 */
void hb_chain_f(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, uint32_t chain,
                uint32_t step, const uint8_t *x, uint8_t *out)
{
    uint8_t blk[64], h[32];
    f_block(blk, pk_seed, dom, chain, step, x, p->n);
    f_hash1(p->hash, blk, h);
    hb_cpy_val(out, h, p->n);
}

#define LANES 8

/* Zero the stack just below the caller's frame, where the hash back-ends' frames were (their spilled
 * registers hold chain values: secret during key generation). noinline, so its frame starts where
 * theirs did; 4 KiB covers the deepest back-end call chain. ~0.1 µs once per key (review fix). */
__attribute__((noinline)) static void hb_stack_scrub(void)
{
    uint8_t s[4096];
    dsig_memzero(s, sizeof s);
    __asm__ __volatile__("" : : "r"(s) : "memory");
}

/* Hash the first `a` lane blocks (a ≤ 8) on the widest path the chain hash has. */
static inline void f_hash_lanes(unsigned hash, uint8_t blk[LANES][64], size_t a, uint8_t out[LANES][32])
{
    if (hash == DSIG_HB_HASH_HARAKA) {
        if (a == 1)
            dsig_haraka512(out[0], blk[0]);
        else if (a <= 4)
            dsig_haraka512_x4(out[0], blk[0]);
        else
            dsig_haraka512_x8(out[0], blk[0]);
    } else if (hash == DSIG_HB_HASH_BLAKE3) {
        if (a == 1)
            dsig_blake3_hash_block(hb_key(HB_K_CHAIN), blk[0], 64, out[0], 32);
        else
            dsig_blake3_hash64_many(hb_key(HB_K_CHAIN), (const uint8_t(*)[64])blk, a, out);
    } else {
        for (size_t l = 0; l < a; l++) f_hash1(hash, blk[l], out[l]);
    }
}

/*
 * Lock-step walker: up to 8 chains in flight, each lane refilled from the pending list as soon as
 * its chain is complete, so the number of multi-lane calls is about total steps / 8.
 */
void hb_chains_walk(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, const uint16_t *ids,
                    const uint8_t *start, const uint8_t *stop, uint8_t *vals, size_t cnt, uint8_t *table)
{
    uint8_t blk[LANES][64], out[LANES][32];
    size_t lane_c[LANES];   /* which chain (position in this call) each active lane walks */
    unsigned lane_j[LANES]; /* level of the value currently in the lane's block */
    const size_t n = p->n;
    size_t a = 0, next = 0;

    /* Unused lanes of an x4/x8 call still get hashed: keep them initialised. */
    memset(blk, 0, sizeof blk);
    for (;;) {
        while (a < LANES && next < cnt) {
            size_t c = next++;
            if (start[c] >= stop[c]) continue;
            f_block(blk[a], pk_seed, dom, ids[c], start[c], vals + c * n, n);
            lane_c[a] = c;
            lane_j[a] = start[c];
            a++;
        }
        if (a == 0) break;
        f_hash_lanes(p->hash, blk, a, out);
        for (size_t l = 0; l < a;) {
            size_t c = lane_c[l];
            unsigned j = ++lane_j[l];
            if (table) hb_cpy_val(table + ((size_t)ids[c] * p->levels + j) * n, out[l], n);
            if (j >= stop[c]) {
                hb_cpy_val(vals + c * n, out[l], n);
                /* Move the last lane into this slot to keep lanes 0..a-1 dense. */
                a--;
                if (l != a) {
                    memcpy(blk[l], blk[a], 64);
                    memcpy(out[l], out[a], 32);
                    lane_c[l] = lane_c[a];
                    lane_j[l] = lane_j[a];
                }
                continue; /* re-examine slot l (now holding the moved lane) */
            }
            blk[l][17] = (uint8_t)j;
            hb_cpy_val(blk[l] + HB_F_XOFF, out[l], n);
            l++;
        }
    }
    /* Key generation (table != NULL) walks secret levels: leave none of them on the stack (review
     * fix; verification walks public values and skips the wipe). */
    if (table) {
        dsig_memzero(blk, sizeof blk);
        dsig_memzero(out, sizeof out);
        hb_stack_scrub();
    }
}
