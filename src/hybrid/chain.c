/*
 * src/hybrid/chain.c — the tweakable chain hash F (docs/dsig-format.md §3.2) for Haraka-512, the
 * SHA-256 compression and BLAKE3, plus the once-derived BLAKE3 domain keys, and the lock-step
 * multi-lane chain walker used by key generation and verification.
 */
#include <pthread.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/cpu.h"
#include "core/internal.h"
#include "hash/blake3.h"
#include "hash/haraka.h"
#include "hash/haraka_impl.h"
#include "hash/sha256.h"
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

/* f_block for the walker: the same bytes as 4 aligned 16-byte stores (rows pk_seed | dom step chain
 * x[0..12) | x[12..n) zeros | zeros) instead of 7 narrow ones (memcpy, bytes, memset, the value's two
 * parts): laying out a verification's 68 blocks is about a third of its walk's non-hashing time, and
 * this form is ~35 cycles faster per leaf. `seed` holds pk_seed; n is 16 or 18 (the only sizes, see
 * hb_cpy_val); blk is 16-byte aligned. */
#if defined(__SSE2__)
static inline void f_block_rows(uint8_t blk[64], __m128i seed, unsigned dom, uint32_t chain, uint32_t step,
                                const uint8_t *x, size_t n)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)x);
    const uint32_t hdr = dom | step << 8 | chain << 16; /* bytes 16..19, little-endian */
    __m128i r2 = _mm_srli_si128(v, 12);
    if (n == DSIG_HB_WOTS_N) r2 = _mm_insert_epi16(r2, dsig_load_le16(x + 16), 2);
    _mm_store_si128((__m128i *)blk, seed);
    _mm_store_si128((__m128i *)(blk + 16), _mm_or_si128(_mm_slli_si128(v, 4), _mm_cvtsi32_si128((int)hdr)));
    _mm_store_si128((__m128i *)(blk + 32), r2);
    _mm_store_si128((__m128i *)(blk + 48), _mm_setzero_si128());
}
#endif

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
 * theirs did; 4 KiB covers the deepest back-end call chain. ~0.1 µs once per key. */
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
 * Walker in rounds, on the schedule of hb_walk_plan: the chains that still need a step in round k are
 * a prefix of its order. Each round hashes that prefix, 8 blocks at a time, in place: no lane refills,
 * no moves, and all but at most one call per round use every lane.
 */
static void walk_rounds(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, const uint16_t *ids,
                        const uint8_t *start, const uint8_t *stop, const uint8_t *vals, uint8_t *ends,
                        const hb_walk_out *lay, size_t cnt_chains, uint8_t *table)
{
    _Alignas(64) uint8_t blk[HB_WALK_MAX + LANES][64];
    _Alignas(32) uint8_t out[LANES][32];
    hb_walk_sched ws;
    const size_t n = p->n;

    /* Chains without steps are placed too (after the others: never hashed, their blocks hold their
     * values for the copy out). */
    hb_walk_plan(start, stop, p->levels, cnt_chains, ends, lay, n, &ws);
    const uint16_t *const at = ws.at, *const chain_at = ws.order;
    const size_t m = ws.ge[1], rows = (m + LANES - 1) & ~(size_t)(LANES - 1);
#if defined(__SSE2__)
    if (n == DSIG_HB_WOTS_N || n == DSIG_HB_HORS_N) {
        const __m128i seed = _mm_loadu_si128((const __m128i *)pk_seed);
        for (size_t c = 0; c < cnt_chains; c++)
            f_block_rows(blk[at[c]], seed, dom, ids ? ids[c] : (uint32_t)c, start[c], vals + c * n, n);
    } else
#endif
        for (size_t c = 0; c < cnt_chains; c++)
            f_block(blk[at[c]], pk_seed, dom, ids ? ids[c] : (uint32_t)c, start[c], vals + c * n, n);
    /* A last call with fewer than 8 (or 4) chains still hashes whole lanes: keep them initialised. */
    if (rows > cnt_chains) memset(blk[cnt_chains], 0, (rows - cnt_chains) * 64);

    for (unsigned k = 1; k <= ws.most; k++) {
        const size_t nk = ws.ge[k];
        for (size_t i = 0; i < nk; i += LANES) {
            const size_t a = nk - i < LANES ? nk - i : LANES;
            f_hash_lanes(p->hash, &blk[i], a, out);
            /* Two loops, not one test per lane: verification (no table) is the latency-critical walk. */
            if (!table) {
                for (size_t l = 0; l < a; l++) {
                    uint8_t *b = blk[i + l];
                    b[17]++;
                    hb_cpy_val(b + HB_F_XOFF, out[l], n);
                }
                continue;
            }
            for (size_t l = 0; l < a; l++) {
                uint8_t *b = blk[i + l];
                const unsigned j = b[17] + 1u;
                b[17] = (uint8_t)j;
                hb_cpy_val(b + HB_F_XOFF, out[l], n);
                hb_cpy_val(table + ((size_t)ids[chain_at[i + l]] * p->levels + j) * n, out[l], n);
            }
        }
    }
    /* Every chain's end (a chain without steps: its block's start value). */
    for (size_t c = 0; c < cnt_chains; c++) hb_cpy_val(ws.dst[c], blk[at[c]] + HB_F_XOFF, n);

    /* Key generation (table != NULL) walks secret levels: leave none of them on the stack
     * (verification walks public values and skips the wipe). */
    if (table) {
        dsig_memzero(blk, (rows > cnt_chains ? rows : cnt_chains) * 64);
        dsig_memzero(out, sizeof out);
        hb_stack_scrub();
    }
}

void hb_chains_walk(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, const uint16_t *ids,
                    const uint8_t *start, const uint8_t *stop, uint8_t *vals, size_t cnt, uint8_t *table)
{
    const hb_walk_out flat = {.per = HB_WALK_MAX, .stride = (size_t)HB_WALK_MAX * p->n};
    for (size_t base = 0; base < cnt; base += HB_WALK_MAX) {
        const size_t m = cnt - base < HB_WALK_MAX ? cnt - base : HB_WALK_MAX;
        uint8_t *v = vals + base * p->n;
        walk_rounds(p, pk_seed, dom, ids + base, start + base, stop + base, v, v, &flat, m, table);
    }
}

void hb_chains_walk_to_generic(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom,
                               const uint16_t *ids, const uint8_t *start, const uint8_t *stop, const uint8_t *vals,
                               uint8_t *ends, const hb_walk_out *lay, size_t cnt)
{
    walk_rounds(p, pk_seed, dom, ids, start, stop, vals, ends, lay, cnt, NULL);
}

/* The verification walker for Haraka chains of n = 18 (every W-OTS+ preset), decided once per process
 * like every back-end (core/cpu.h): the VAES-512 one wherever the VAES-512 Haraka back-end runs
 * (DSIG_CPU_DISABLE included), else the generic one. Never chosen by the input. */
typedef struct walker {
    void (*walk_to)(const dsig_hb_params *, const uint8_t *, unsigned, const uint16_t *, const uint8_t *,
                    const uint8_t *, const uint8_t *, uint8_t *, const hb_walk_out *, size_t);
    int native;
} walker;
static const walker walker_generic = {hb_chains_walk_to_generic, 0};
#if defined(__x86_64__) || defined(__i386__)
static const walker walker_vaes512 = {hb_chains_walk_to_vaes512, 1};
#endif
static const void *walker_haraka18;
static pthread_once_t walker_once = PTHREAD_ONCE_INIT;

static void walker_resolve(void)
{
    const walker *w = &walker_generic;
#if defined(__x86_64__) || defined(__i386__)
    if (dsig_cpu_usable(dsig_haraka_backend_vaes512.needs)) w = &walker_vaes512;
#endif
    __atomic_store_n(&walker_haraka18, (const void *)w, __ATOMIC_RELEASE);
}

static const walker *walker_for(const dsig_hb_params *p)
{
    if (p->hash != DSIG_HB_HASH_HARAKA || p->n != DSIG_HB_WOTS_N) return &walker_generic;
    return dsig_cpu_once(&walker_haraka18, &walker_once, walker_resolve);
}

int hb_chains_walk_native(const dsig_hb_params *p)
{
    return walker_for(p)->native;
}

void hb_chains_walk_to(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom, const uint16_t *ids,
                       const uint8_t *start, const uint8_t *stop, const uint8_t *vals, uint8_t *ends,
                       const hb_walk_out *lay, size_t cnt)
{
    walker_for(p)->walk_to(p, pk_seed, dom, ids, start, stop, vals, ends, lay, cnt);
}
