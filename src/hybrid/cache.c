/*
 * The verifier's per-signer batch cache: a fixed set of verified batches indexed by a chained hash
 * table on the batch sequence number, so a look-up costs one hash and, typically, one comparison —
 * never a scan of the cached batches. When full, the batch with the LOWEST sequence number is evicted
 * and the sequence floor rises to it: a batch at or below the floor, or below every cached one when
 * full, is stale and refused (a replay of old batch messages cannot push current ones out). Signers
 * number their batches upwards, across restarts too (dsig/hybrid.h, first_seq). Per leaf it keeps the
 * first message verified, which is what convicts an equivocating signer. Locking is the caller's
 * (verifier.c): a per-signer rwlock, exclusive for insert/evict, shared for find and record (records
 * are published with a CAS). Inserts scan the `cap` slots (once per batch, off the hot path).
 */
#include <string.h>

#include "hybrid/runtime.h"

/* Bucket of a sequence number (Fibonacci hashing: the high bits of seq·φ·2^64). */
static uint32_t bucket_of(const dsig_hb_cache *c, uint64_t seq)
{
    return (uint32_t)((seq * 0x9E3779B97F4A7C15ull) >> 32) & c->mask;
}

/* Allocate the ring, the buckets and the per-leaf record pointers for cap batches of `batch` keys. */
int dsig_hb_cache_init(dsig_hb_cache *c, uint32_t cap, uint32_t batch, size_t sig_bytes)
{
    memset(c, 0, sizeof *c);
    if (cap == 0 || batch == 0 || cap > (1u << 20) || sig_bytes > (1u << 24))
        return dsig_fail(DSIG_E_ARG, "DSig cache: bad size (%u batches of %u keys)", cap, batch);
    uint32_t nb = 1;
    while (nb < 2 * cap)
        nb <<= 1;
    c->cap = cap;
    c->batch = batch;
    c->mask = nb - 1;
    c->buckets = dsig_malloc((size_t)nb * sizeof *c->buckets);
    c->slots = dsig_calloc(cap, sizeof *c->slots);
    c->leafmem = dsig_calloc((size_t)cap * batch, sizeof *c->leafmem);
    if (!c->buckets || !c->slots || !c->leafmem) {
        dsig_hb_cache_destroy(c);
        return dsig_fail(DSIG_E_NOMEM, "DSig cache: out of memory");
    }
    for (uint32_t i = 0; i < nb; i++)
        c->buckets[i] = -1;
    for (uint32_t i = 0; i < cap; i++) {
        c->slots[i].next = -1;
        c->slots[i].leaves = c->leafmem + (size_t)i * batch;
        c->slots[i].nleaves = batch;
        c->slots[i].rec_sig = sig_bytes;
        c->slots[i].rec_slot = (sizeof(dsig_hb_leafrec) + DSIG_HB_ARENA_MSG + sig_bytes + 63u) & ~(size_t)63u;
        atomic_init(&c->slots[i].arena, NULL);
        atomic_init(&c->slots[i].arena_next, 0);
        for (uint32_t j = 0; j < batch; j++)
            atomic_init(&c->slots[i].leaves[j], NULL);
    }
    return DSIG_OK;
}

/* Free the leaf records of one entry (exclusive lock held). The arena goes too only with the cache
 * (keep_arena = 0): an evicted entry's slot is reused at once by the batch that evicted it, and
 * keeping its arena spares that batch an allocation and the page faults of fresh memory. */
static void clear_records(dsig_hb_cache *c, dsig_hb_centry *e, int keep_arena)
{
    for (uint32_t j = 0; j < c->batch; j++) {
        dsig_hb_leafrec *r = atomic_exchange_explicit(&e->leaves[j], NULL, memory_order_relaxed);
        if (r && !r->in_arena)
            dsig_xfree(r, 0);
    }
    if (!keep_arena)
        dsig_xfree(atomic_exchange_explicit(&e->arena, NULL, memory_order_relaxed), 0);
    atomic_store_explicit(&e->arena_next, 0, memory_order_relaxed);
}

/* Give an entry being inserted its record arena now (exclusive lock held, in batch processing: the
 * background thread's time, not a verification's), every page touched, so that the fast path neither
 * allocates nor takes the page faults of first use (measured at ~0.2 µs per fast verify, one fault
 * every two or three records). Without memory the entry stays without one and the first recorder
 * tries again (arena_take). */
static void arena_prepare(dsig_hb_centry *e)
{
    if (atomic_load_explicit(&e->arena, memory_order_relaxed))
        return;
    const size_t bytes = e->rec_slot * e->nleaves;
    uint8_t *a = dsig_malloc(bytes);
    if (!a)
        return;
    memset(a, 0, bytes);
    atomic_store_explicit(&e->arena, a, memory_order_release);
}

/* A slot of the entry's arena for a record of (len, sig_len), or NULL (the caller mallocs). The arena
 * is made by the first recorder; concurrent first recorders race with a CAS and the loser frees its
 * copy. Shared lock held: eviction (exclusive) cannot free the arena under us. */
static dsig_hb_leafrec *arena_take(dsig_hb_centry *e, size_t len, size_t sig_len)
{
    if (len > DSIG_HB_ARENA_MSG || sig_len > e->rec_sig)
        return NULL;
    uint8_t *a = atomic_load_explicit(&e->arena, memory_order_acquire);
    if (!a) {
        uint8_t *fresh = dsig_malloc(e->rec_slot * e->nleaves);
        if (!fresh)
            return NULL;
        if (atomic_compare_exchange_strong_explicit(&e->arena, &a, fresh, memory_order_acq_rel,
                                                    memory_order_acquire))
            a = fresh;
        else
            dsig_xfree(fresh, 0);
    }
    uint32_t i = atomic_fetch_add_explicit(&e->arena_next, 1, memory_order_relaxed);
    if (i >= e->nleaves)
        return NULL;
    dsig_hb_leafrec *r = (dsig_hb_leafrec *)(void *)(a + (size_t)i * e->rec_slot);
    r->in_arena = 1;
    return r;
}

/* Free every cached batch and record and the tables. */
void dsig_hb_cache_destroy(dsig_hb_cache *c)
{
    if (c->slots) {
        for (uint32_t i = 0; i < c->cap; i++) {
            if (c->slots[i].used)
                dsig_hb_batch_free(&c->slots[i].batch);
            if (c->leafmem)
                clear_records(c, &c->slots[i], 0);
        }
    }
    dsig_xfree(c->buckets, 0);
    dsig_xfree(c->slots, 0);
    dsig_xfree(c->leafmem, 0);
    memset(c, 0, sizeof *c);
}

/* Hash look-up of batch `seq`. */
dsig_hb_centry *dsig_hb_cache_find(const dsig_hb_cache *c, uint64_t seq)
{
    for (int32_t i = c->buckets[bucket_of(c, seq)]; i >= 0; i = c->slots[i].next)
        if (c->slots[i].seq == seq)
            return &c->slots[i];
    return NULL;
}

/* Unlink slot `i` from its bucket chain. */
static void unlink_slot(dsig_hb_cache *c, int32_t i)
{
    int32_t *pp = &c->buckets[bucket_of(c, c->slots[i].seq)];
    while (*pp >= 0 && *pp != i)
        pp = &c->slots[*pp].next;
    if (*pp == i)
        *pp = c->slots[i].next;
    c->slots[i].next = -1;
}

/* The slot an insert takes: a free one, or (full) the one with the lowest sequence number. */
static int32_t insert_slot(const dsig_hb_cache *c)
{
    int32_t low = -1;
    for (uint32_t i = 0; i < c->cap; i++) {
        if (!c->slots[i].used)
            return (int32_t)i;
        if (low < 0 || c->slots[i].seq < c->slots[low].seq)
            low = (int32_t)i;
    }
    return low;
}

int dsig_hb_cache_admits(const dsig_hb_cache *c, uint64_t seq)
{
    if (c->has_floor && seq <= c->floor)
        return 0;
    if (c->count < c->cap)
        return 1;
    return seq > c->slots[insert_slot(c)].seq;
}

/* Insert a verified batch, evicting the lowest-numbered batch when full (the caller checked
 * dsig_hb_cache_admits). */
void dsig_hb_cache_insert(dsig_hb_cache *c, dsig_hb_batch *b, int *evicted)
{
    int32_t i = insert_slot(c);
    dsig_hb_centry *e = &c->slots[i];
    *evicted = 0;
    if (e->used) {
        if (!c->has_floor || e->seq > c->floor)
            c->floor = e->seq;
        c->has_floor = 1;
        unlink_slot(c, i);
        dsig_hb_batch_free(&e->batch);
        clear_records(c, e, 1);
        e->used = 0;
        c->count--;
        *evicted = 1;
    }
    e->batch = *b;
    memset(b, 0, sizeof *b);
    e->seq = e->batch.batch_seq;
    e->used = 1;
    e->batch_convicted = 0;
    arena_prepare(e);
    uint32_t bk = bucket_of(c, e->seq);
    e->next = c->buckets[bk];
    c->buckets[bk] = i;
    c->count++;
}

/* Prefetch, with write intent, the arena slot the next record of this entry will most likely take
 * (shared lock held). The record copies a whole signature into lines no core has touched since the
 * slot was last used; asked for here, before the one-time signature is checked, those ownership
 * requests complete during the hashing instead of stalling the copy at the end. A hint only: another
 * thread may take that slot first (then this one prefetched a neighbour, harmlessly). */
void dsig_hb_cache_prefetch_record(const dsig_hb_centry *e)
{
    const uint8_t *a = atomic_load_explicit(&e->arena, memory_order_acquire);
    uint32_t i = atomic_load_explicit(&e->arena_next, memory_order_relaxed);
    if (!a || i >= e->nleaves)
        return;
    const uint8_t *r = a + (size_t)i * e->rec_slot;
    for (size_t o = 0; o < e->rec_slot; o += 64)
        __builtin_prefetch(r + o, 1, 3);
}

/* Publish the first verified (msg, sig) of a leaf, or compare with the one already there. */
int dsig_hb_cache_record(dsig_hb_centry *e, uint32_t index, const uint8_t *msg, size_t len,
                         const uint8_t *sig, size_t sig_len, const dsig_hb_leafrec **first)
{
    _Atomic(dsig_hb_leafrec *) *slot = &e->leaves[index];
    dsig_hb_leafrec *cur = atomic_load_explicit(slot, memory_order_acquire);
    if (!cur) {
        if (len > SIZE_MAX - sizeof *cur - sig_len)
            return dsig_fail(DSIG_E_TOO_LARGE, "DSig verifier: message too large to record");
        dsig_hb_leafrec *r = arena_take(e, len, sig_len);
        if (!r) {
            r = dsig_malloc(sizeof *r + len + sig_len);
            if (!r)
                return dsig_fail(DSIG_E_NOMEM, "DSig verifier: out of memory recording a signature");
            r->in_arena = 0;
        }
        r->msg_len = len;
        r->sig_len = sig_len;
        atomic_init(&r->convicted, 0);
        r->msg = (uint8_t *)(r + 1);
        r->sig = r->msg + len;
        if (len)
            memcpy(r->msg, msg, len);
        memcpy(r->sig, sig, sig_len);
        if (atomic_compare_exchange_strong_explicit(slot, &cur, r, memory_order_acq_rel,
                                                    memory_order_acquire))
            return DSIG_HB_RECORD_FIRST;
        /* Another thread recorded first; `cur` now holds its record (an arena slot stays unused). */
        if (!r->in_arena)
            dsig_xfree(r, 0);
    }
    if (cur->msg_len == len && (len == 0 || memcmp(cur->msg, msg, len) == 0))
        return DSIG_HB_RECORD_SAME;
    *first = cur;
    return DSIG_HB_RECORD_OTHER;
}
