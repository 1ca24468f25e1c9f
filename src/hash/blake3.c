/*
 * src/hash/blake3.c — BLAKE3 written from the specification (O'Connor, Aumasson, Neves, Wilcox-O'Hearn,
 * "BLAKE3: one function, fast everywhere", 2020): the portable compression function, the incremental
 * hasher (chunks, the chaining-value stack, XOF), the one-block fast path and the back-end dispatch.
 * SIMD back-ends live in blake3_sse41.c, blake3_avx2.c and blake3_avx512.c; all share blake3_impl.h.
 */
#include "hash/blake3_impl.h"

#include <string.h>

#include "core/cpu.h"
#include "dsig/mem.h"
#include "core/layer_api.h"

/* ---------------------------------------------------------------------------------------------------
 * Portable compression
 * ------------------------------------------------------------------------------------------------- */

/* Rotate a 32-bit word right by n (1..31). */
static inline uint32_t rotr32(uint32_t w, unsigned n)
{
    return (w >> n) | (w << (32 - n));
}

/* @spec BLAKE3 spec §2.2: the quarter-round G mixing a column or diagonal with message words x, y. */
#define B3_G(a, b, c, d, x, y)                                                                               \
    do {                                                                                                     \
        a = a + (x) + b; /* b, the last value computed, goes last: shorter dependency chain */               \
        d = rotr32(d ^ a, 16);                                                                               \
        c = c + d;                                                                                           \
        b = rotr32(b ^ c, 12);                                                                               \
        a = a + (y) + b;                                                                                     \
        d = rotr32(d ^ a, 8);                                                                                \
        c = c + d;                                                                                           \
        b = rotr32(b ^ c, 7);                                                                                \
    } while (0)

/* @spec BLAKE3 spec §2.2: the 7 rounds over the 16-word state v, message words m. */
static inline void portable_rounds(uint32_t v[16], const uint32_t m[16])
{
    for (int r = 0; r < 7; r++) {
        const uint8_t *s = dsig_b3_sched[r];
        B3_G(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
        B3_G(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
        B3_G(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
        B3_G(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
        B3_G(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
        B3_G(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
        B3_G(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
        B3_G(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
    }
}

/* @spec BLAKE3 spec §2.2: initial state (cv, IV[0..3], counter low/high, block length, flags) + rounds. */
static inline void portable_core(uint32_t v[16], const uint32_t cv[8], const uint8_t block[64],
                                 uint8_t block_len, uint64_t counter, uint8_t flags)
{
    uint32_t m[16];
    for (int i = 0; i < 16; i++)
        m[i] = dsig_load_le32(block + 4 * i);
    for (int i = 0; i < 8; i++)
        v[i] = cv[i];
    v[8] = dsig_b3_iv[0];
    v[9] = dsig_b3_iv[1];
    v[10] = dsig_b3_iv[2];
    v[11] = dsig_b3_iv[3];
    v[12] = (uint32_t)counter;
    v[13] = (uint32_t)(counter >> 32);
    v[14] = block_len;
    v[15] = flags;
    portable_rounds(v, m);
}

/* @spec BLAKE3 spec §2.2: chaining value = first 8 output words (v[i] ^ v[i+8]). */
void dsig_b3_portable_compress_cv(uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                  uint64_t counter, uint8_t flags)
{
    uint32_t v[16];
    portable_core(v, cv, block, block_len, counter, flags);
    for (int i = 0; i < 8; i++)
        cv[i] = v[i] ^ v[i + 8];
}

/* @spec BLAKE3 spec §2.2: full 64-byte output (second half additionally xored with the input cv). */
void dsig_b3_portable_compress_xof(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                   uint64_t counter, uint8_t flags, uint8_t out[64])
{
    uint32_t v[16];
    portable_core(v, cv, block, block_len, counter, flags);
    for (int i = 0; i < 8; i++) {
        dsig_store_le32(out + 4 * i, v[i] ^ v[i + 8]);
        dsig_store_le32(out + 32 + 4 * i, v[i + 8] ^ cv[i]);
    }
}

/* Portable hash_many: the inputs one after another (contract in blake3_impl.h). */
void dsig_b3_portable_hash_many(const uint8_t *in, size_t stride, size_t n, size_t blocks,
                                const uint32_t key[8], uint64_t counter, int inc_counter, uint8_t flags,
                                uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t cv[8];
        memcpy(cv, key, sizeof cv);
        const uint8_t *p = in + i * stride;
        for (size_t j = 0; j < blocks; j++) {
            uint8_t f = flags;
            if (j == 0)
                f |= flags_start;
            if (j + 1 == blocks)
                f |= flags_end;
            dsig_b3_portable_compress_cv(cv, p + 64 * j, 64, counter + (inc_counter ? i : 0), f);
        }
        for (int k = 0; k < 8; k++)
            dsig_store_le32(out + 32 * i + 4 * k, cv[k]);
    }
}

/* Portable hash_lanes: the inputs one after another (contract in blake3_impl.h). */
void dsig_b3_portable_hash_lanes(DSIG_B3_HASH_LANES_ARGS)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t cv[8];
        memcpy(cv, key, sizeof cv);
        for (size_t j = 0; j < blocks; j++) {
            uint8_t f = flags, bl = DSIG_BLAKE3_BLOCK_LEN;
            const uint8_t *p = in[i] + 64 * j;
            if (j == 0)
                f |= flags_start;
            if (j + 1 == blocks) {
                f |= flags_end;
                bl = last_len;
                if (last)
                    p = last[i];
            }
            dsig_b3_portable_compress_cv(cv, p, bl, counter + (inc_counter ? i : 0), f);
        }
        for (int k = 0; k < 8; k++)
            dsig_store_le32(out + 32 * i + 4 * k, cv[k]);
        b3_wipe(cv, sizeof cv);
    }
}

/* Portable xof_many: the output blocks one after another. */
void dsig_b3_portable_xof_many(DSIG_B3_XOF_MANY_ARGS)
{
    for (size_t i = 0; i < n; i++)
        dsig_b3_portable_compress_xof(cv, block, block_len, counter + i, flags, out + 64 * i);
}

/* Any CPU: the last entry of blake3_dispatch.c's list. */
const dsig_b3_backend dsig_b3_backend_portable = {.name = "portable",
                                                  .needs = 0,
                                                  .compress_cv = dsig_b3_portable_compress_cv,
                                                  .compress_xof = dsig_b3_portable_compress_xof,
                                                  .hash_many = dsig_b3_portable_hash_many,
                                                  .hash_lanes = dsig_b3_portable_hash_lanes,
                                                  .xof_many = dsig_b3_portable_xof_many,
                                                  .degree = 1};

/* ---------------------------------------------------------------------------------------------------
 * Incremental hasher
 * ------------------------------------------------------------------------------------------------- */

/* Chunks hashed in one go by update(): up to 64 (64 KiB); 512 B of lane pointers, 4 KiB + 1 KiB of CVs on
 * the stack. The back-end's hash_lanes splits them into groups of its `degree` (4, 8 or 16 chunks per SIMD
 * pass), so a full batch is a whole number of passes for every back-end. 128 or 256 gained only ~1% with
 * AVX-512 (fewer tiny parent layers) for twice or four times the stack. */
#define B3_WIDE_CHUNKS 64
_Static_assert(B3_WIDE_CHUNKS % DSIG_B3_MAX_DEGREE == 0, "a full update batch must fill every SIMD group");
/* Levels of parent nodes inside one batch: log2(B3_WIDE_CHUNKS) + 1 nodes left over at most. */
#define B3_WIDE_LEVELS 7
_Static_assert((1u << (B3_WIDE_LEVELS - 1)) == B3_WIDE_CHUNKS, "B3_WIDE_LEVELS = log2(B3_WIDE_CHUNKS) + 1");
#define B3_CHUNK_BLOCKS (DSIG_BLAKE3_CHUNK_LEN / DSIG_BLAKE3_BLOCK_LEN)
/* Callers that hashed a secret wipe offsetof(dsig_blake3_hasher, cv_stack) bytes (src/hybrid/onetime.c): the
 * buffered message bytes must lie inside that prefix. */
_Static_assert(offsetof(dsig_blake3_hasher, buf) + sizeof(((dsig_blake3_hasher *)0)->buf) <=
                   offsetof(dsig_blake3_hasher, cv_stack),
               "buf must precede cv_stack");

/* Common initialisation: key words (IV or key) and the mode flag. buf is not cleared: only its first
 * buf_len bytes are ever read. */
static void hasher_init(dsig_blake3_hasher *h, const uint32_t key[8], uint8_t flags)
{
    memcpy(h->key, key, sizeof h->key);
    h->chunk_counter = 0;
    h->buf_len = 0;
    h->flags = flags;
    h->cv_stack_len = 0;
}

/* @spec BLAKE3 spec §2.3 (hash mode): key words = IV, no mode flag. */
DSIG_LAYER_API void dsig_blake3_init(dsig_blake3_hasher *h)
{
    hasher_init(h, dsig_b3_iv, 0);
}

/* @spec BLAKE3 spec §2.3 (keyed_hash mode): key words = the 32-byte key (little-endian), KEYED_HASH. */
void dsig_blake3_init_keyed(dsig_blake3_hasher *h, const uint8_t key[DSIG_BLAKE3_KEY_LEN])
{
    uint32_t k[8];
    for (int i = 0; i < 8; i++)
        k[i] = dsig_load_le32(key + 4 * i);
    hasher_init(h, k, B3_KEYED_HASH);
    dsig_memzero(k, sizeof k);
}

/* @spec BLAKE3 spec §2.3 (derive_key mode): context key = hash of the context string under
 * DERIVE_KEY_CONTEXT; the material is then hashed with that key under DERIVE_KEY_MATERIAL. */
DSIG_LAYER_API void dsig_blake3_init_derive_key(dsig_blake3_hasher *h, const char *context)
{
    uint8_t ck[32];
    uint32_t k[8];
    hasher_init(h, dsig_b3_iv, B3_DERIVE_KEY_CONTEXT);
    dsig_blake3_update(h, context, strlen(context));
    dsig_blake3_finalize(h, ck, sizeof ck);
    for (int i = 0; i < 8; i++)
        k[i] = dsig_load_le32(ck + 4 * i);
    hasher_init(h, k, B3_DERIVE_KEY_MATERIAL);
}

/* @spec BLAKE3 spec §5.1.2: push the CV of a completed subtree of 2^level chunks that ends after chunk
 * (chunk_counter - 1), first merging every stack entry it completes a larger subtree with. Only called
 * when more input is known to follow, so no merged node can be the root. The new CV sits in the slot just
 * above the stack top, so left || right is one contiguous 64-byte parent block. */
static void push_subtree_cv(dsig_blake3_hasher *h, const dsig_b3_backend *be, const uint8_t cv[32],
                            unsigned level)
{
    uint64_t t = h->chunk_counter >> level;
    size_t top = h->cv_stack_len;
    memcpy(h->cv_stack + 32 * top, cv, 32);
    while ((t & 1) == 0 && top > 0) {
        uint32_t w[8];
        memcpy(w, h->key, sizeof w);
        be->compress_cv(w, h->cv_stack + 32 * (top - 1), DSIG_BLAKE3_BLOCK_LEN, 0, h->flags | B3_PARENT);
        top--;
        for (int i = 0; i < 8; i++)
            dsig_store_le32(h->cv_stack + 32 * top + 4 * i, w[i]);
        t >>= 1;
    }
    h->cv_stack_len = (uint8_t)(top + 1);
}

/* @spec BLAKE3 spec §5.1.2: merge the CVs of `n` (<= B3_WIDE_CHUNKS) consecutive whole chunks starting at
 * chunk_counter (cvs, 32 bytes each; only cvs[0 .. n) is overwritten) into the tree. More input is known
 * to follow, so every parent whose two children both lie in the batch is final and not the root: the tree
 * is reduced layer by layer, each layer's parents in ONE SIMD hash_many call. A node whose sibling lies
 * outside the batch is a complete subtree and goes to the CV stack: those at the front (sibling already on
 * the stack) at once, in rising level; those at the back (sibling still to come) afterwards, in falling
 * level. That is the batch's split into maximal power-of-two-aligned subtrees, left to right, as the stack
 * needs them. */
static void push_chunk_cvs(dsig_blake3_hasher *h, const dsig_b3_backend *be, uint8_t *cvs, size_t n)
{
    uint8_t tmp[B3_WIDE_CHUNKS / 2 * 32];
    uint8_t back[B3_WIDE_LEVELS][32];
    unsigned back_level[B3_WIDE_LEVELS];
    size_t nback = 0;
    uint64_t idx = h->chunk_counter; /* index of cur[0] among the nodes of its level */
    uint8_t *cur = cvs;
    int in_tmp = 0;
    for (unsigned level = 0; n > 0; level++) {
        if (idx & 1) { /* left sibling on the stack: a complete 2^level-chunk subtree */
            h->chunk_counter += (uint64_t)1 << level;
            push_subtree_cv(h, be, cur, level);
            cur += 32;
            n--;
            idx++;
        }
        if (n & 1) { /* right sibling not hashed yet: stack it after the larger subtrees before it */
            n--;
            memcpy(back[nback], cur + 32 * n, 32);
            back_level[nback++] = level;
        }
        if (n == 0)
            break;
        uint8_t *next = in_tmp ? cvs : tmp; /* hash_many's out must not overlap its in */
        be->hash_many(cur, 64, n / 2, 1, h->key, 0, 0, h->flags | B3_PARENT, 0, 0, next);
        cur = next;
        in_tmp = !in_tmp;
        n /= 2;
        idx /= 2;
    }
    while (nback-- > 0) {
        h->chunk_counter += (uint64_t)1 << back_level[nback];
        push_subtree_cv(h, be, back[nback], back_level[nback]);
    }
}

/* @spec BLAKE3 spec §5.1.2: incremental update. The current chunk stays as raw bytes in buf until input
 * beyond it arrives, because only then is it known not to be the last chunk (the root, or a leaf whose
 * parents must wait). Then it is completed from the start of `in` and hashed as lane 0 of the same SIMD
 * hash_lanes batch as the whole chunks of `in` that are not last either (up to 64 per batch, be->degree
 * per pass) — no chunk is ever compressed block by block here, whatever the update sizes. The final 1..1024
 * bytes of the input become the new buffered chunk.
 * Batches start wherever the buffered chunk is (typically one before a 64-chunk boundary), so within one
 * call their CVs are merged only up to the last 64-chunk boundary and the rest joins the next batch of
 * the same call: the parents that would straddle two batches are computed in the SIMD parent layers.
 * At the end of a call the remaining CVs are pushed (with 64 KiB updates: the buffered chunk's CV alone,
 * then the other 63 as subtrees). */
DSIG_LAYER_API void dsig_blake3_update(dsig_blake3_hasher *h, const void *in_v, size_t len)
{
    const uint8_t *in = in_v;
    const size_t room = DSIG_BLAKE3_CHUNK_LEN - h->buf_len;
    if (len <= room) { /* still within the current chunk: it may yet be the last one */
        if (len > 0)
            memcpy(h->buf + h->buf_len, in, len);
        h->buf_len = (uint16_t)(h->buf_len + len);
        return;
    }
    const dsig_b3_backend *be = dsig_b3_backend_get();
    const uint8_t *lanes[B3_WIDE_CHUNKS];
    /* CVs of chunks chunk_counter.. not yet in the tree: < 64 waiting for a 64-chunk boundary, then a
     * batch. */
    uint8_t cvs[2 * B3_WIDE_CHUNKS * 32];
    size_t pending = 0;
    size_t use_buf = h->buf_len > 0; /* the buffered chunk is lane 0 of the first batch */
    if (use_buf) {
        memcpy(h->buf + h->buf_len, in, room);
        in += room;
        len -= room; /* > 0: more input follows the buffered chunk */
    }
    for (;;) {
        /* Whole chunks of `in` that leave at least one byte behind (those bytes may end the message). */
        size_t k = use_buf + (len - 1) / DSIG_BLAKE3_CHUNK_LEN;
        if (k == 0)
            break;
        if (k > B3_WIDE_CHUNKS)
            k = B3_WIDE_CHUNKS;
        size_t i = 0;
        if (use_buf)
            lanes[i++] = h->buf;
        for (; i < k; i++) {
            lanes[i] = in;
            in += DSIG_BLAKE3_CHUNK_LEN;
            len -= DSIG_BLAKE3_CHUNK_LEN;
        }
        be->hash_lanes(lanes, NULL, k, B3_CHUNK_BLOCKS, DSIG_BLAKE3_BLOCK_LEN, h->key,
                       h->chunk_counter + pending, 1, h->flags, B3_CHUNK_START, B3_CHUNK_END, cvs + 32 * pending);
        pending += k;
        use_buf = 0;
        /* Merge up to the last 64-chunk boundary: at most 64 CVs, as pending < 64 once chunk_counter is
         * aligned and a first unaligned stretch stops at the first boundary. */
        uint64_t edge = (h->chunk_counter + pending) & ~(uint64_t)(B3_WIDE_CHUNKS - 1);
        if (edge > h->chunk_counter) {
            size_t m = (size_t)(edge - h->chunk_counter);
            push_chunk_cvs(h, be, cvs, m); /* writes only cvs[0 .. m) */
            pending -= m;
            memmove(cvs, cvs + 32 * m, 32 * pending);
        }
    }
    if (pending > 0)
        push_chunk_cvs(h, be, cvs, pending);
    memcpy(h->buf, in, len); /* 1..1024 bytes: the new current chunk */
    h->buf_len = (uint16_t)len;
}

/* The root node's compression inputs: everything but the output block counter and the ROOT flag. */
struct b3_node {
    uint32_t cv[8];
    uint8_t block[64];
    uint64_t counter;
    uint8_t block_len;
    uint8_t flags;
};

/* @spec BLAKE3 spec §2.4/§2.5/§5.1.2: hash the buffered chunk up to its last block (blocks 0..b-2 whole,
 * the last holding the remaining 0..64 bytes, zero-padded; b = 1 for an empty chunk), then fold it and the
 * CV stack (top down) into the root node. */
static void root_node(const dsig_blake3_hasher *h, const dsig_b3_backend *be, struct b3_node *n)
{
    const size_t len = h->buf_len;
    const size_t blocks = len == 0 ? 1 : (len + DSIG_BLAKE3_BLOCK_LEN - 1) / DSIG_BLAKE3_BLOCK_LEN;
    const size_t last = len - DSIG_BLAKE3_BLOCK_LEN * (blocks - 1);
    uint8_t start = B3_CHUNK_START;
    memcpy(n->cv, h->key, sizeof n->cv);
    for (size_t j = 0; j + 1 < blocks; j++) {
        be->compress_cv(n->cv, h->buf + DSIG_BLAKE3_BLOCK_LEN * j, DSIG_BLAKE3_BLOCK_LEN, h->chunk_counter,
                        h->flags | start);
        start = 0;
    }
    if (last > 0)
        memcpy(n->block, h->buf + DSIG_BLAKE3_BLOCK_LEN * (blocks - 1), last);
    memset(n->block + last, 0, sizeof n->block - last);
    n->block_len = (uint8_t)last;
    n->counter = h->chunk_counter;
    n->flags = h->flags | start | B3_CHUNK_END;
    for (size_t i = h->cv_stack_len; i-- > 0;) {
        be->compress_cv(n->cv, n->block, n->block_len, n->counter, n->flags);
        for (int k = 0; k < 8; k++)
            dsig_store_le32(n->block + 32 + 4 * k, n->cv[k]);
        memcpy(n->block, h->cv_stack + 32 * i, 32);
        memcpy(n->cv, h->key, sizeof n->cv);
        n->block_len = DSIG_BLAKE3_BLOCK_LEN;
        n->counter = 0;
        n->flags = h->flags | B3_PARENT;
    }
}

/* Most output blocks computed per xof_many call straight into the caller's buffer (a multiple of every
 * back-end's degree); only bounds the loop granularity. */
#define B3_XOF_BATCH 32
_Static_assert(B3_XOF_BATCH % DSIG_B3_MAX_DEGREE == 0, "XOF batch must be a multiple of every degree");

/* @spec BLAKE3 spec §2.6: extendable output from byte offset `seek`: output block i is the root
 * compression with counter i, all 16 words. Runs of at least `degree` (the back-end's SIMD width) whole
 * blocks are computed SIMD-parallel (xof_many) directly into `out`; the rest (a partial first or last
 * block, a short run) as one xof_many batch of up to `degree` blocks through a local buffer, or one
 * compression if a single block. */
void dsig_blake3_finalize_seek(const dsig_blake3_hasher *h, uint64_t seek, uint8_t *out, size_t out_len)
{
    if (out_len == 0)
        return;
    const dsig_b3_backend *be = dsig_b3_backend_get();
    struct b3_node n;
    uint8_t blk[DSIG_B3_MAX_DEGREE * 64];
    const size_t deg = be->degree < 2 ? 2 : be->degree; /* portable: 2, as any small batch is serial */
    root_node(h, be, &n);
    uint64_t ctr = seek / 64;
    size_t skip = (size_t)(seek % 64);
    const uint8_t rf = n.flags | B3_ROOT;
    size_t used_blk = 0; /* bytes of blk written, wiped at the end */
    while (out_len > 0) {
        size_t whole = skip == 0 ? out_len / 64 : 0;
        if (whole >= deg) {
            whole = whole > B3_XOF_BATCH ? B3_XOF_BATCH : whole - whole % deg;
            be->xof_many(n.cv, n.block, n.block_len, ctr, rf, whole, out);
            out += 64 * whole;
            out_len -= 64 * whole;
            ctr += whole;
            continue;
        }
        size_t nblk = (skip + out_len + 63) / 64; /* blocks still touched, here at most deg + 1 */
        if (nblk > deg)
            nblk = deg;
        if (nblk == 1)
            be->compress_xof(n.cv, n.block, n.block_len, ctr, rf, blk);
        else
            be->xof_many(n.cv, n.block, n.block_len, ctr, rf, nblk, blk);
        if (64 * nblk > used_blk)
            used_blk = 64 * nblk;
        size_t take = 64 * nblk - skip;
        if (take > out_len)
            take = out_len;
        memcpy(out, blk + skip, take);
        out += take;
        out_len -= take;
        skip = 0;
        ctr += nblk;
    }
    /* The node holds key-dependent words and the last message bytes; blk holds output (key material
     * when the XOF expands a secret). */
    dsig_memzero(&n, sizeof n);
    if (used_blk)
        dsig_memzero(blk, used_blk);
}

/* Default finalisation: output from offset 0. */
DSIG_LAYER_API void dsig_blake3_finalize(const dsig_blake3_hasher *h, uint8_t *out, size_t out_len)
{
    dsig_blake3_finalize_seek(h, 0, out, out_len);
}

/* One-shot unkeyed hash (one compression when the input fits a block). */
void dsig_blake3(const void *in, size_t len, uint8_t *out, size_t out_len)
{
    if (len <= DSIG_BLAKE3_BLOCK_LEN && out_len <= DSIG_BLAKE3_BLOCK_LEN) {
        dsig_blake3_hash_block(NULL, in, len, out, out_len);
        return;
    }
    dsig_blake3_hasher h;
    dsig_blake3_init(&h);
    dsig_blake3_update(&h, in, len);
    dsig_blake3_finalize(&h, out, out_len);
}

/* hash_block's general case (more than one block in or out): the full hasher. Kept out of line so the
 * one-block path has a small stack frame. */
__attribute__((noinline, cold)) static void hash_block_slow(const uint8_t *key, const void *in, size_t len,
                                                            uint8_t *out, size_t out_len)
{
    dsig_blake3_hasher h;
    if (key)
        dsig_blake3_init_keyed(&h, key);
    else
        dsig_blake3_init(&h);
    dsig_blake3_update(&h, in, len);
    dsig_blake3_finalize(&h, out, out_len);
    dsig_memzero(&h, sizeof h);
}

/* Starting words and flags of a message that is one single-block chunk and the root: the key (keyed
 * hash) or the IV. Shared by the one-block fast paths. */
static uint8_t single_block_start(const uint8_t *key, uint32_t w[8])
{
    if (!key) {
        memcpy(w, dsig_b3_iv, 8 * sizeof w[0]);
        return B3_CHUNK_START | B3_CHUNK_END | B3_ROOT;
    }
    for (int i = 0; i < 8; i++)
        w[i] = dsig_load_le32(key + 4 * i);
    return B3_CHUNK_START | B3_CHUNK_END | B3_ROOT | B3_KEYED_HASH;
}

/* @spec BLAKE3 spec §2.2-2.6: a message of at most one block is a single chunk with a single block, so its
 * root output is one compression with CHUNK_START | CHUNK_END | ROOT. Larger requests take the hasher. */
DSIG_LAYER_API void dsig_blake3_hash_block(const uint8_t *key, const void *in, size_t len, uint8_t *out, size_t out_len)
{
    if (__builtin_expect(len > DSIG_BLAKE3_BLOCK_LEN || out_len > DSIG_BLAKE3_BLOCK_LEN, 0)) {
        hash_block_slow(key, in, len, out, out_len);
        return;
    }
    const dsig_b3_backend *be = dsig_b3_backend_get();
    uint32_t w[8];
    uint8_t flags = single_block_start(key, w);
    uint8_t block[64];
    const uint8_t *bp = in;
    if (len < DSIG_BLAKE3_BLOCK_LEN) {
        /* The spec pads a short block with zeros; block_len tells the real length. */
        memset(block, 0, sizeof block);
        if (len)
            memcpy(block, in, len);
        bp = block;
    }
    if (out_len <= 32) {
        be->compress_cv(w, bp, (uint8_t)len, 0, flags);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (out_len == 32)
            memcpy(out, w, 32); /* the common size: two stores instead of a memcpy call */
        else
            memcpy(out, w, out_len);
#else
        uint8_t o[32];
        for (int i = 0; i < 8; i++)
            dsig_store_le32(o + 4 * i, w[i]);
        memcpy(out, o, out_len);
        b3_wipe(o, sizeof o);
#endif
    } else {
        uint8_t o[64];
        be->compress_xof(w, bp, (uint8_t)len, 0, flags, o);
        memcpy(out, o, out_len);
        b3_wipe(o, sizeof o);
    }
    /* Inputs here are seeds and keys in the DSig signer: leave none of them on the stack. */
    b3_wipe(w, sizeof w);
    if (bp == block)
        b3_wipe(block, sizeof block);
}

/* @spec BLAKE3 spec §2.2-2.5: a message of at most one chunk (1024 bytes) is one chunk whose last block is
 * the root node, so its hash is a chain of compressions with no hasher state (the hasher's 2.8 KB set-up
 * and its CV stack cost more than the compressions on the short public messages DSig hashes). */
void dsig_blake3_hash_chunk(const uint8_t *key, const void *in, size_t len, uint8_t out[32])
{
    if (__builtin_expect(len > DSIG_BLAKE3_CHUNK_LEN, 0)) {
        hash_block_slow(key, in, len, out, 32);
        return;
    }
    const dsig_b3_backend *be = dsig_b3_backend_get();
    uint32_t w[8];
    const uint8_t all = single_block_start(key, w), base = all & (uint8_t)~(B3_CHUNK_START | B3_CHUNK_END | B3_ROOT);
    const uint8_t *p = in;
    size_t blocks = len == 0 ? 1 : (len + DSIG_BLAKE3_BLOCK_LEN - 1) / DSIG_BLAKE3_BLOCK_LEN;
    for (size_t j = 0; j + 1 < blocks; j++)
        be->compress_cv(w, p + 64 * j, 64, 0, (uint8_t)(base | (j == 0 ? B3_CHUNK_START : 0)));
    const size_t last_len = len - 64 * (blocks - 1);
    uint8_t block[64];
    memset(block, 0, sizeof block);
    if (last_len)
        memcpy(block, p + 64 * (blocks - 1), last_len);
    be->compress_cv(w, block, (uint8_t)last_len, 0,
                    (uint8_t)(base | B3_CHUNK_END | B3_ROOT | (blocks == 1 ? B3_CHUNK_START : 0)));
    for (int i = 0; i < 8; i++)
        dsig_store_le32(out + 4 * i, w[i]);
    b3_wipe(w, sizeof w);
    b3_wipe(block, sizeof block);
}

/* n one-block messages at once through the back-end's SIMD hash_many (root flags on the only block). */
void dsig_blake3_hash64_many(const uint8_t *key, const uint8_t (*in)[64], size_t n, uint8_t (*out)[32])
{
    if (n == 0)
        return;
    const dsig_b3_backend *be = dsig_b3_backend_get();
    uint32_t w[8];
    uint8_t flags = single_block_start(key, w);
    be->hash_many(in[0], 64, n, 1, w, 0, 0, flags, 0, 0, out[0]);
    b3_wipe(w, sizeof w);
}

/* @spec BLAKE3 spec §2.2-2.5: a message of at most one chunk is a single chunk whose last block is the root
 * node: blocks 0..b-2 are whole, the last holds len - 64(b-1) bytes, zero-padded (b = 1 for len = 0).
 * The n messages are compressed SIMD-parallel, block j of every message together (hash_lanes); a partial
 * last block is copied into a zero-padded buffer, so nothing is read past a message's end. */
void dsig_blake3_hash_many_chunks(const uint8_t *key, const uint8_t *in, size_t stride, size_t len, size_t n,
                                  uint8_t (*out)[32])
{
    if (n == 0)
        return;
    if (len > DSIG_BLAKE3_CHUNK_LEN) { /* outside the contract: still the right answer, the slow way */
        for (size_t i = 0; i < n; i++)
            hash_block_slow(key, in + i * stride, len, out[i], 32);
        return;
    }
    const dsig_b3_backend *be = dsig_b3_backend_get();
    uint32_t w[8];
    uint8_t flags = 0;
    if (key) {
        for (int i = 0; i < 8; i++)
            w[i] = dsig_load_le32(key + 4 * i);
        flags = B3_KEYED_HASH;
    } else {
        memcpy(w, dsig_b3_iv, sizeof w);
    }
    size_t blocks = len == 0 ? 1 : (len + DSIG_BLAKE3_BLOCK_LEN - 1) / DSIG_BLAKE3_BLOCK_LEN;
    size_t last_len = len - DSIG_BLAKE3_BLOCK_LEN * (blocks - 1);
    /* Groups of the back-end's width: a full group is one SIMD pass, and only the last may be short. */
    const size_t G = be->degree;
    uint8_t tails[DSIG_B3_MAX_DEGREE][64];
    const uint8_t *lanes[DSIG_B3_MAX_DEGREE], *lasts[DSIG_B3_MAX_DEGREE];
    for (size_t g = 0; g < n; g += G) {
        size_t r = n - g < G ? n - g : G;
        for (size_t i = 0; i < r; i++) {
            lanes[i] = in + (g + i) * stride;
            if (last_len < DSIG_BLAKE3_BLOCK_LEN) {
                memset(tails[i] + last_len, 0, 64 - last_len);
                if (last_len)
                    memcpy(tails[i], lanes[i] + DSIG_BLAKE3_BLOCK_LEN * (blocks - 1), last_len);
                lasts[i] = tails[i];
            }
        }
        be->hash_lanes(lanes, last_len < DSIG_BLAKE3_BLOCK_LEN ? lasts : NULL, r, blocks, (uint8_t)last_len, w,
                       0, 0, flags, B3_CHUNK_START, B3_CHUNK_END | B3_ROOT, out[g]);
    }
    b3_wipe(w, sizeof w);
    if (last_len < DSIG_BLAKE3_BLOCK_LEN)
        b3_wipe(tails, 64 * (n < G ? n : G)); /* the rows used; message bytes: leaves may be secret-derived */
}
