/*
 * The DSig verifier: a table of known signers (id → root public key + batch cache), a queue of
 * received batch messages verified by background threads before they are cached, fast / slow path
 * verification, and equivocation evidence (deduplicated and bounded: EVIDENCE_PER_SIGNER records per
 * signer, opts.evidence_max in all; records are copies, so they outlive the batches they cite).
 *
 * Locking:
 *   - the signer table is fixed-size open addressing whose slots are published with release stores and
 *     never removed, so look-ups take no lock (add_lock serialises writers);
 *   - each signer has a writer-preferring rwlock: exclusive to insert/evict a batch, shared while a
 *     verification uses a cached batch (so it cannot be evicted under it);
 *   - the queue has its own mutex and two condition variables (work, idle); the evidence list its own;
 *   - arr_lock + `arrived` wake dsig_hybrid_verify_wait: a waiter checks the cache holding arr_lock
 *     (then the signer's read lock), an insert broadcasts under arr_lock after dropping the signer's
 *     write lock, so no arrival is missed and the locks never nest the other way.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "hybrid/runtime.h"

#define DEFAULT_CACHE 32u
#define DEFAULT_SIGNERS 64u
#define DEFAULT_QUEUE 1024u
#define MAX_SIGNERS 65536u
#define MAX_THREADS 64u
#define DEFAULT_EVIDENCE 1024u

/* One known signer. */
struct signer_entry {
    uint64_t id;
    dsig_hb_who who;             /* runtime domain, this id, the root public key */
    pthread_rwlock_t lock;
    dsig_hb_cache cache;
    unsigned nev;                /* evidence records kept for this signer (under ev_lock) */
};

/* A received batch message waiting for verification. */
struct qitem {
    struct qitem *next;
    uint64_t signer_id;
    size_t len;
    uint8_t data[];
};

/* An evidence record: the public struct plus the bytes it points to, in one allocation. */
struct evrec {
    dsig_hybrid_evidence ev;
    uint8_t data[];
};

struct dsig_hybrid_verifier {
    dsig_hb_params params;
    dsig_hybrid_verifier_options opt;

    _Atomic(struct signer_entry *) *table;
    uint32_t table_mask;
    uint32_t nsigners;
    pthread_mutex_t add_lock;

    pthread_mutex_t qlock;
    pthread_cond_t qwork;        /* an item was queued, or stop */
    pthread_cond_t qidle;        /* queue empty and no item in progress */
    struct qitem *qhead, *qtail;
    unsigned qlen;
    unsigned busy;
    int stop;
    pthread_t *threads;
    unsigned nthreads;

    pthread_mutex_t ev_lock;
    struct evrec **ev;
    size_t nev, ev_cap;

    pthread_mutex_t arr_lock;    /* with `arrived`: dsig_hybrid_verify_wait sleeps for a batch */
    pthread_cond_t arrived;      /* a batch was cached (broadcast after the signer lock is dropped) */

    _Atomic uint64_t received, cached, rejected, dropped, duplicate, evicted, stale, fast, slow;
    _Atomic uint64_t equivocations, evidence_dropped, waits, wait_timeouts;
};

/* Bump a statistics counter (relaxed: counters order nothing). */
static void bump(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* Slot index of a signer id in the table (splitmix64 finaliser: ids may be sequential). */
static uint32_t id_hash(uint64_t id)
{
    id ^= id >> 30;
    id *= 0xbf58476d1ce4e5b9ull;
    id ^= id >> 27;
    id *= 0x94d049bb133111ebull;
    id ^= id >> 31;
    return (uint32_t)id;
}

/* Lock-free look-up of a signer; NULL if unknown. */
static struct signer_entry *find_signer(const dsig_hybrid_verifier *v, uint64_t id)
{
    for (uint32_t i = id_hash(id) & v->table_mask;; i = (i + 1) & v->table_mask) {
        struct signer_entry *e = atomic_load_explicit(&v->table[i], memory_order_acquire);
        if (!e)
            return NULL;
        if (e->id == id)
            return e;
    }
}

/* The signer registered with this root public key, or NULL (add_lock held: a scan, once per add). */
static const struct signer_entry *find_key(const dsig_hybrid_verifier *v, const uint8_t root_pk[32])
{
    for (uint32_t i = 0; i <= v->table_mask; i++) {
        const struct signer_entry *e = atomic_load_explicit(&v->table[i], memory_order_relaxed);
        if (e && memcmp(e->who.root_pk, root_pk, 32) == 0)
            return e;
    }
    return NULL;
}

void dsig_hybrid_verifier_options_default(dsig_hybrid_verifier_options *o)
{
    memset(o, 0, sizeof *o);
    o->cache_batches = DEFAULT_CACHE;
    o->max_signers = DEFAULT_SIGNERS;
    o->queue_max = DEFAULT_QUEUE;
    o->threads = 1;
    o->evidence_max = DEFAULT_EVIDENCE;
}

/* ---- evidence ------------------------------------------------------------------------------- */

/* Build an evidence record from two (msg, sig) pairs (msgs may be NULL for batch equivocation). */
static struct evrec *evidence_new(int kind, uint64_t signer, uint64_t seq, uint32_t index,
                                  const uint8_t *m1, size_t m1n, const uint8_t *s1, size_t s1n,
                                  const uint8_t *m2, size_t m2n, const uint8_t *s2, size_t s2n)
{
    size_t total = m1n + s1n + m2n + s2n;
    if (total < m1n || total > SIZE_MAX - sizeof(struct evrec)) /* crude overflow guard */
        return NULL;
    struct evrec *r = dsig_malloc(sizeof *r + total);
    if (!r)
        return NULL;
    memset(&r->ev, 0, sizeof r->ev);
    r->ev.kind = kind;
    r->ev.signer_id = signer;
    r->ev.batch_seq = seq;
    r->ev.index = index;
    uint8_t *p = r->data;
#define PUT(field, src, n)                                                                           \
    do {                                                                                             \
        r->ev.field##_len = (n);                                                                     \
        if (src) {                                                                                   \
            if (n)                                                                                   \
                memcpy(p, (src), (n));                                                               \
            r->ev.field = p;                                                                         \
            p += (n);                                                                                \
        }                                                                                            \
    } while (0)
    PUT(msg1, m1, m1n);
    PUT(sig1, s1, s1n);
    PUT(msg2, m2, m2n);
    PUT(sig2, s2, s2n);
#undef PUT
    return r;
}

/* The same equivocation (kind, signer, batch, leaf) is already on record. (ev_lock held) */
static int evidence_known(const dsig_hybrid_verifier *v, const dsig_hybrid_evidence *e)
{
    for (size_t i = 0; i < v->nev; i++) {
        const dsig_hybrid_evidence *o = &v->ev[i]->ev;
        if (o->kind == e->kind && o->signer_id == e->signer_id && o->batch_seq == e->batch_seq &&
            o->index == e->index)
            return 1;
    }
    return 0;
}

/* Count one detected equivocation and keep its record unless the same one is already kept or a bound
 * (per signer, in all) is reached — replayed evidence must not grow memory — then tell the callback
 * (no other lock held). */
static int evidence_publish(dsig_hybrid_verifier *v, struct signer_entry *se, struct evrec *r)
{
    if (!r)
        return dsig_fail(DSIG_E_NOMEM, "DSig verifier: out of memory keeping equivocation evidence");
    pthread_mutex_lock(&v->ev_lock);
    if (evidence_known(v, &r->ev)) {
        pthread_mutex_unlock(&v->ev_lock);
        dsig_xfree(r, 0);
        return DSIG_OK;
    }
    bump(&v->equivocations);
    if (se->nev >= DSIG_HYBRID_EVIDENCE_PER_SIGNER || v->nev >= v->opt.evidence_max) {
        pthread_mutex_unlock(&v->ev_lock);
        dsig_xfree(r, 0);
        bump(&v->evidence_dropped);
        return DSIG_OK;
    }
    if (v->nev == v->ev_cap) {
        size_t ncap = v->ev_cap ? 2 * v->ev_cap : 8;
        struct evrec **n = dsig_realloc(v->ev, ncap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&v->ev_lock);
            dsig_xfree(r, 0);
            return dsig_fail(DSIG_E_NOMEM, "DSig verifier: out of memory keeping equivocation evidence");
        }
        v->ev = n;
        v->ev_cap = ncap;
    }
    v->ev[v->nev++] = r;
    se->nev++;
    pthread_mutex_unlock(&v->ev_lock);
    if (v->opt.on_equivocation)
        v->opt.on_equivocation(v->opt.on_equivocation_arg, &r->ev);
    return DSIG_OK;
}

/* A copy of a cached batch's message (for evidence), or NULL when out of memory. */
static uint8_t *batch_message_copy(const dsig_hybrid_verifier *v, const dsig_hb_batch *b, size_t *len)
{
    uint8_t *m = dsig_malloc(v->params.batch_msg_bytes);
    if (m && dsig_hb_batch_message(b, m, v->params.batch_msg_bytes, len) != DSIG_OK) {
        dsig_xfree(m, 0);
        m = NULL;
    }
    return m;
}

size_t dsig_hybrid_verifier_evidence_count(dsig_hybrid_verifier *v)
{
    pthread_mutex_lock(&v->ev_lock);
    size_t n = v->nev;
    pthread_mutex_unlock(&v->ev_lock);
    return n;
}

int dsig_hybrid_verifier_evidence(dsig_hybrid_verifier *v, size_t i, const dsig_hybrid_evidence **out)
{
    int rc = DSIG_OK;
    pthread_mutex_lock(&v->ev_lock);
    if (i < v->nev)
        *out = &v->ev[i]->ev;
    else
        rc = DSIG_E_ARG;
    pthread_mutex_unlock(&v->ev_lock);
    if (rc)
        return dsig_fail(rc, "DSig verifier: no evidence record %zu", i);
    return DSIG_OK;
}

/* ---- background verification ---------------------------------------------------------------- */

/* Verify one batch message's root signature and cache it: the work of a background thread (or of
 * receive_batch with threads = 0). DSIG_OK also for a duplicate; DSIG_E_STALE for a batch below the
 * signer's sequence floor (never cached: a replay of old batch messages cannot evict current ones);
 * DSIG_E_EQUIVOCATION for a second, different, validly signed batch under a cached sequence number. */
static int process_batch(dsig_hybrid_verifier *v, uint64_t signer_id, const uint8_t *msg, size_t len)
{
    struct signer_entry *se = find_signer(v, signer_id);
    if (!se) {
        bump(&v->rejected);
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "DSig verifier: batch from unknown signer %llu",
                         (unsigned long long)signer_id);
    }
    dsig_hb_batch b;
    int rc = dsig_hb_batch_verify(&v->params, msg, len, &se->who, &b);
    if (rc != DSIG_OK) {
        bump(&v->rejected);
        return rc;
    }
    struct evrec *ev = NULL;
    int evicted = 0, outcome = 0; /* 0 cached, 1 duplicate, 2 equivocation, 3 stale */
    pthread_rwlock_wrlock(&se->lock);
    dsig_hb_centry *e = dsig_hb_cache_find(&se->cache, b.batch_seq);
    if (e) {
        outcome = 1;
        if (memcmp(e->batch.root, b.root, sizeof b.root) != 0) {
            /* Two validly signed batches under one sequence number: the signer equivocated (seqs never
             * repeat for an honest signer, restarts included). Keep the first (verifications already
             * rely on it) and convict with both batch messages (evidence_publish drops repeats). */
            outcome = 2;
            size_t flen = 0;
            uint8_t *first = batch_message_copy(v, &e->batch, &flen);
            if (first)
                ev = evidence_new(DSIG_HYBRID_EQUIV_BATCH, signer_id, b.batch_seq, 0, NULL, 0, first, flen,
                                  NULL, 0, msg, len);
            dsig_xfree(first, 0);
        }
    } else if (!dsig_hb_cache_admits(&se->cache, b.batch_seq)) {
        outcome = 3;
    } else {
        dsig_hb_cache_insert(&se->cache, &b, &evicted);
    }
    pthread_rwlock_unlock(&se->lock);
    if (outcome) {
        uint64_t seq = b.batch_seq;
        dsig_hb_batch_free(&b);
        if (outcome == 3) {
            bump(&v->stale);
            return dsig_fail(DSIG_E_STALE, "DSig verifier: batch %llu of signer %llu is below its sequence floor",
                             (unsigned long long)seq, (unsigned long long)signer_id);
        }
        if (outcome == 2) {
            int prc = evidence_publish(v, se, ev);
            return prc ? prc
                       : dsig_fail(DSIG_E_EQUIVOCATION, "DSig verifier: signer %llu signed two batches "
                                   "under sequence number %llu", (unsigned long long)signer_id,
                                   (unsigned long long)seq);
        }
        bump(&v->duplicate);
        return DSIG_OK;
    }
    bump(&v->cached);
    if (evicted)
        bump(&v->evicted);
    pthread_mutex_lock(&v->arr_lock);
    pthread_cond_broadcast(&v->arrived);
    pthread_mutex_unlock(&v->arr_lock);
    return DSIG_OK;
}

/* Background thread: pop queued batch messages and verify them until stopped. */
static void *verify_thread(void *arg)
{
    dsig_hybrid_verifier *v = arg;
    pthread_mutex_lock(&v->qlock);
    for (;;) {
        while (!v->qhead && !v->stop)
            pthread_cond_wait(&v->qwork, &v->qlock);
        if (v->stop)
            break;
        struct qitem *it = v->qhead;
        v->qhead = it->next;
        if (!v->qhead)
            v->qtail = NULL;
        v->qlen--;
        v->busy++;
        pthread_mutex_unlock(&v->qlock);

        (void)process_batch(v, it->signer_id, it->data, it->len);
        dsig_xfree(it, 0);

        pthread_mutex_lock(&v->qlock);
        v->busy--;
        if (!v->qhead && v->busy == 0)
            pthread_cond_broadcast(&v->qidle);
    }
    pthread_mutex_unlock(&v->qlock);
    return NULL;
}

/* ---- life cycle ----------------------------------------------------------------------------- */

int dsig_hybrid_verifier_new(dsig_hybrid_verifier **out, const dsig_hybrid_params *p,
                             const dsig_hybrid_verifier_options *opts)
{
    if (!out)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_verifier_new: out is NULL");
    *out = NULL;
    const dsig_hb_params *hp;
    int rc = dsig_hb_params_resolve(p, &hp);
    if (rc)
        return rc;
    dsig_hybrid_verifier_options o;
    if (opts)
        o = *opts;
    else
        dsig_hybrid_verifier_options_default(&o);
    if (o.cache_batches < DEFAULT_CACHE)
        o.cache_batches = DEFAULT_CACHE;
    if (o.max_signers == 0 || o.max_signers > MAX_SIGNERS)
        return dsig_fail(DSIG_E_ARG, "DSig verifier: max_signers must be 1..%u", MAX_SIGNERS);
    if (o.queue_max == 0)
        return dsig_fail(DSIG_E_ARG, "DSig verifier: queue_max must be at least 1");
    if (o.threads > MAX_THREADS)
        return dsig_fail(DSIG_E_ARG, "DSig verifier: at most %u threads", MAX_THREADS);
    if (o.evidence_max == 0)
        o.evidence_max = DEFAULT_EVIDENCE;

    dsig_hybrid_verifier *v = dsig_calloc(1, sizeof *v);
    if (!v)
        return dsig_fail(DSIG_E_NOMEM, "DSig verifier: out of memory");
    v->params = *hp;
    v->opt = o;
    uint32_t n = 1;
    while (n < 2 * o.max_signers)
        n <<= 1;
    v->table = dsig_calloc(n, sizeof *v->table);
    if (!v->table) {
        dsig_xfree(v, 0);
        return dsig_fail(DSIG_E_NOMEM, "DSig verifier: out of memory");
    }
    for (uint32_t i = 0; i < n; i++)
        atomic_init(&v->table[i], NULL);
    v->table_mask = n - 1;
    pthread_mutex_init(&v->add_lock, NULL);
    pthread_mutex_init(&v->qlock, NULL);
    pthread_cond_init(&v->qwork, NULL);
    pthread_cond_init(&v->qidle, NULL);
    pthread_mutex_init(&v->ev_lock, NULL);
    pthread_mutex_init(&v->arr_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&v->arrived, &ca);
    pthread_condattr_destroy(&ca);

    if (o.threads) {
        v->threads = dsig_calloc(o.threads, sizeof *v->threads);
        if (!v->threads) {
            dsig_hybrid_verifier_free(v);
            return dsig_fail(DSIG_E_NOMEM, "DSig verifier: out of memory");
        }
        for (unsigned i = 0; i < o.threads; i++) {
            if (pthread_create(&v->threads[i], NULL, verify_thread, v) != 0) {
                dsig_hybrid_verifier_free(v);
                return dsig_fail(DSIG_E_NOMEM, "DSig verifier: cannot start a background thread");
            }
            v->nthreads++;
        }
    }
    *out = v;
    return DSIG_OK;
}

void dsig_hybrid_verifier_free(dsig_hybrid_verifier *v)
{
    if (!v)
        return;
    pthread_mutex_lock(&v->qlock);
    v->stop = 1;
    pthread_cond_broadcast(&v->qwork);
    pthread_mutex_unlock(&v->qlock);
    for (unsigned i = 0; i < v->nthreads; i++)
        pthread_join(v->threads[i], NULL);
    dsig_xfree(v->threads, 0);
    for (struct qitem *it = v->qhead, *nx; it; it = nx) {
        nx = it->next;
        dsig_xfree(it, 0);
    }
    for (uint32_t i = 0; i <= v->table_mask; i++) {
        struct signer_entry *e = atomic_load_explicit(&v->table[i], memory_order_relaxed);
        if (e) {
            dsig_hb_cache_destroy(&e->cache);
            pthread_rwlock_destroy(&e->lock);
            dsig_xfree(e, 0);
        }
    }
    dsig_xfree(v->table, 0);
    for (size_t i = 0; i < v->nev; i++)
        dsig_xfree(v->ev[i], 0);
    dsig_xfree(v->ev, 0);
    pthread_mutex_destroy(&v->add_lock);
    pthread_mutex_destroy(&v->qlock);
    pthread_cond_destroy(&v->qwork);
    pthread_cond_destroy(&v->qidle);
    pthread_mutex_destroy(&v->ev_lock);
    pthread_mutex_destroy(&v->arr_lock);
    pthread_cond_destroy(&v->arrived);
    dsig_xfree(v, 0);
}

int dsig_hybrid_verifier_add_signer(dsig_hybrid_verifier *v, uint64_t signer_id,
                                    const dsig_key *signer_key)
{
    if (!v || !signer_key)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_verifier_add_signer: NULL argument");
    struct signer_entry *e = dsig_calloc(1, sizeof *e);
    if (!e)
        return dsig_fail(DSIG_E_NOMEM, "DSig verifier: out of memory");
    int rc = dsig_hb_key_public(signer_key, NULL, e->who.root_pk);
    if (rc) {
        dsig_xfree(e, 0);
        return rc;
    }
    e->id = signer_id;
    e->who.domain = DSIG_HB_DOMAIN_RUNTIME;
    e->who.signer_id = signer_id;
    rc = dsig_hb_cache_init(&e->cache, v->opt.cache_batches, v->params.batch, v->params.sig_bytes);
    if (rc) {
        dsig_xfree(e, 0);
        return rc;
    }
    pthread_rwlockattr_t at;
    pthread_rwlockattr_init(&at);
    /* Writers (batch inserts) must not starve behind a steady stream of verifications. */
    pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&e->lock, &at);
    pthread_rwlockattr_destroy(&at);

    pthread_mutex_lock(&v->add_lock);
    const struct signer_entry *same = find_key(v, e->who.root_pk);
    if (find_signer(v, signer_id))
        rc = dsig_fail(DSIG_E_ARG, "DSig verifier: signer %llu is already registered",
                       (unsigned long long)signer_id);
    else if (same)
        rc = dsig_fail(DSIG_E_ARG, "DSig verifier: this public key is already registered as signer %llu (one "
                       "key, one signer id: a second id would let one signer's batches pass as another's)",
                       (unsigned long long)same->id);
    else if (v->nsigners >= v->opt.max_signers)
        rc = dsig_fail(DSIG_E_TOO_LARGE, "DSig verifier: more than max_signers = %u signers",
                       v->opt.max_signers);
    if (rc == DSIG_OK) {
        uint32_t i = id_hash(signer_id) & v->table_mask;
        while (atomic_load_explicit(&v->table[i], memory_order_relaxed))
            i = (i + 1) & v->table_mask;
        atomic_store_explicit(&v->table[i], e, memory_order_release);
        v->nsigners++;
    }
    pthread_mutex_unlock(&v->add_lock);
    if (rc) {
        dsig_hb_cache_destroy(&e->cache);
        pthread_rwlock_destroy(&e->lock);
        dsig_xfree(e, 0);
    }
    return rc;
}

/* ---- receiving ------------------------------------------------------------------------------ */

int dsig_hybrid_verifier_receive_batch(dsig_hybrid_verifier *v, uint64_t signer_id, const uint8_t *msg,
                                       size_t len)
{
    if (!v || (!msg && len))
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_verifier_receive_batch: NULL argument");
    if (!find_signer(v, signer_id))
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "DSig verifier: batch from unknown signer %llu",
                         (unsigned long long)signer_id);
    if (len != v->params.batch_msg_bytes)
        return dsig_fail(DSIG_E_FORMAT, "DSig batch message: %zu bytes, expected %zu for %s", len,
                         v->params.batch_msg_bytes, v->params.name);
    if (v->nthreads == 0) {
        bump(&v->received);
        return process_batch(v, signer_id, msg, len);
    }
    struct qitem *it = dsig_malloc(sizeof *it + len);
    if (!it)
        return dsig_fail(DSIG_E_NOMEM, "DSig verifier: out of memory queueing a batch");
    it->next = NULL;
    it->signer_id = signer_id;
    it->len = len;
    memcpy(it->data, msg, len);
    pthread_mutex_lock(&v->qlock);
    if (v->qlen >= v->opt.queue_max) {
        pthread_mutex_unlock(&v->qlock);
        dsig_xfree(it, 0);
        bump(&v->dropped);
        return dsig_fail(DSIG_E_WOULD_BLOCK, "DSig verifier: batch queue full (%u messages)",
                         v->opt.queue_max);
    }
    if (v->qtail)
        v->qtail->next = it;
    else
        v->qhead = it;
    v->qtail = it;
    v->qlen++;
    pthread_cond_signal(&v->qwork);
    pthread_mutex_unlock(&v->qlock);
    bump(&v->received);
    return DSIG_OK;
}

void dsig_hybrid_verifier_flush(dsig_hybrid_verifier *v)
{
    if (!v || v->nthreads == 0)
        return;
    pthread_mutex_lock(&v->qlock);
    while ((v->qhead || v->busy) && !v->stop)
        pthread_cond_wait(&v->qidle, &v->qlock);
    pthread_mutex_unlock(&v->qlock);
}

/* ---- verification --------------------------------------------------------------------------- */

/* The slow path for a signature whose sequence number is cached with ANOTHER root (its proof or
 * root signature differ from the cached batch): a valid one convicts the signer — two validly signed
 * roots under one sequence number — with the cached batch message and this (message, signature). */
static int verify_other_root(dsig_hybrid_verifier *v, struct signer_entry *se, const uint8_t *msg, size_t len,
                             const uint8_t *sig, size_t sig_len, uint64_t seq)
{
    int rc = dsig_hb_verify_slow(&v->params, sig, sig_len, msg, len, &se->who);
    if (rc != DSIG_OK)
        return rc;
    /* Valid. Its root: another one convicts; the cached root itself (the signer signed the same root
     * message twice, with another nonce) does not. */
    dsig_hb_sig_view sv;
    uint8_t leaf[32], root[32];
    if (dsig_hb_parse(&v->params, sig, sig_len, &sv) != DSIG_OK ||
        dsig_hb_compute_leaf(&v->params, &sv, msg, len, leaf) != DSIG_OK)
        return DSIG_E_INTERNAL; /* it parsed and verified a moment ago */
    dsig_hb_merkle_root_from_proof(&v->params, leaf, sv.index, sv.proof, root);
    struct evrec *ev = NULL;
    pthread_rwlock_rdlock(&se->lock);
    dsig_hb_centry *e = dsig_hb_cache_find(&se->cache, seq);
    if (e && memcmp(e->batch.root, root, sizeof root) == 0)
        e = NULL; /* same batch: nothing to hold against the signer */
    if (e) {
        size_t flen = 0;
        uint8_t *first = batch_message_copy(v, &e->batch, &flen);
        if (first)
            ev = evidence_new(DSIG_HYBRID_EQUIV_ROOT, se->id, seq, 0, NULL, 0, first, flen, msg, len, sig,
                              sig_len);
        dsig_xfree(first, 0);
    }
    pthread_rwlock_unlock(&se->lock);
    if (!e) /* the same root, or evicted meanwhile: nothing cached to hold against it */
        return DSIG_OK;
    if ((rc = evidence_publish(v, se, ev)) != DSIG_OK)
        return rc;
    return dsig_fail(DSIG_E_EQUIVOCATION, "DSig verify: signer %llu signed another root under sequence number %llu",
                     (unsigned long long)se->id, (unsigned long long)seq);
}

int dsig_hybrid_verify(dsig_hybrid_verifier *v, uint64_t signer_id, const uint8_t *msg, size_t len,
                       const uint8_t *sig, size_t sig_len)
{
    if (!v || (!msg && len) || !sig)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_verify: NULL argument");
    struct signer_entry *se = find_signer(v, signer_id);
    if (!se)
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "DSig verify: unknown signer %llu",
                         (unsigned long long)signer_id);
    dsig_hb_sig_view sv;
    if (dsig_hb_parse(&v->params, sig, sig_len, &sv) != DSIG_OK)
        return DSIG_E_VERIFY; /* the detail names the field */

    pthread_rwlock_rdlock(&se->lock);
    dsig_hb_centry *e = dsig_hb_cache_find(&se->cache, sv.batch_seq);
    if (!e || !dsig_hb_sig_in_batch(&v->params, &e->batch, &sv)) {
        pthread_rwlock_unlock(&se->lock);
        bump(&v->slow);
        if (e) /* same sequence number, another root: not the cached batch's key (slow path decides) */
            return verify_other_root(v, se, msg, len, sig, sig_len, sv.batch_seq);
        return dsig_hb_verify_slow(&v->params, sig, sig_len, msg, len, &se->who);
    }
    bump(&v->fast);
    dsig_hb_cache_prefetch_record(e); /* overlap the record's cache misses with the hashing */
    int rc = dsig_hb_verify_in_batch(&v->params, &e->batch, &sv, msg, len);
    struct evrec *ev = NULL;
    int equiv = 0;
    if (rc == DSIG_OK) {
        const dsig_hb_leafrec *first = NULL;
        int r = dsig_hb_cache_record(e, sv.index, msg, len, sig, sig_len, &first);
        if (r == DSIG_HB_RECORD_OTHER) {
            /* The first conviction of this key builds the evidence (two messages, both verified on the
             * fast path); a replayed second signature only returns DSIG_E_EQUIVOCATION again. */
            equiv = atomic_exchange_explicit(&((dsig_hb_leafrec *)first)->convicted, 1,
                                             memory_order_relaxed) ? 2 : 1;
            if (equiv == 1)
                ev = evidence_new(DSIG_HYBRID_EQUIV_LEAF, signer_id, sv.batch_seq, sv.index, first->msg,
                                  first->msg_len, first->sig, first->sig_len, msg, len, sig, sig_len);
        } else if (r < 0) {
            rc = r;
        }
    }
    pthread_rwlock_unlock(&se->lock);
    if (equiv) {
        if (equiv == 1) {
            int prc = evidence_publish(v, se, ev);
            if (prc)
                return prc;
        }
        return dsig_fail(DSIG_E_EQUIVOCATION,
                         "DSig verify: signer %llu signed two messages with one-time key %u of batch %llu",
                         (unsigned long long)signer_id, sv.index, (unsigned long long)sv.batch_seq);
    }
    return rc;
}

/* Where batch `seq` of a signer stands: 1 cached (any root), 0 may still arrive, -1 never (stale). */
static int batch_state(struct signer_entry *se, uint64_t seq)
{
    pthread_rwlock_rdlock(&se->lock);
    int st = dsig_hb_cache_find(&se->cache, seq) ? 1 : dsig_hb_cache_admits(&se->cache, seq) ? 0 : -1;
    pthread_rwlock_unlock(&se->lock);
    return st;
}

int dsig_hybrid_verify_wait(dsig_hybrid_verifier *v, uint64_t signer_id, const uint8_t *msg, size_t len,
                            const uint8_t *sig, size_t sig_len, unsigned timeout_ms, unsigned flags)
{
    if (!v || (!msg && len) || !sig)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_verify_wait: NULL argument");
    if (timeout_ms > DSIG_HYBRID_MAX_WAIT_MS || (flags & ~DSIG_HYBRID_WAIT_SLOW))
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_verify_wait: timeout %u ms (at most %u) or flags 0x%x",
                         timeout_ms, DSIG_HYBRID_MAX_WAIT_MS, flags);
    struct signer_entry *se = find_signer(v, signer_id);
    if (!se)
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "DSig verify: unknown signer %llu", (unsigned long long)signer_id);
    uint64_t seq;
    uint32_t index;
    if (dsig_hb_sig_locate(&v->params, sig, sig_len, &seq, &index) != DSIG_OK)
        return DSIG_E_VERIFY; /* the detail names the field */
    int st = batch_state(se, seq);
    if (st == 0 && timeout_ms) {
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_sec += timeout_ms / 1000u;
        dl.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        bump(&v->waits);
        pthread_mutex_lock(&v->arr_lock);
        while ((st = batch_state(se, seq)) == 0) {
            if (pthread_cond_timedwait(&v->arrived, &v->arr_lock, &dl) == ETIMEDOUT) {
                st = batch_state(se, seq); /* it may have come with the deadline */
                break;
            }
        }
        pthread_mutex_unlock(&v->arr_lock);
        if (st == 0)
            bump(&v->wait_timeouts);
    }
    if (st != 1 && !(flags & DSIG_HYBRID_WAIT_SLOW))
        return dsig_fail(DSIG_E_WOULD_BLOCK, "DSig verify: batch %llu of signer %llu %s", (unsigned long long)seq,
                         (unsigned long long)signer_id,
                         st < 0 ? "is below its sequence floor (it will not be cached)"
                                : "did not arrive in time");
    return dsig_hybrid_verify(v, signer_id, msg, len, sig, sig_len);
}

int dsig_hybrid_can_verify_fast(dsig_hybrid_verifier *v, uint64_t signer_id, const uint8_t *sig,
                                size_t sig_len)
{
    if (!v || !sig)
        return 0;
    struct signer_entry *se = find_signer(v, signer_id);
    dsig_hb_sig_view sv;
    if (!se || dsig_hb_parse(&v->params, sig, sig_len, &sv) != DSIG_OK)
        return 0;
    pthread_rwlock_rdlock(&se->lock);
    const dsig_hb_centry *e = dsig_hb_cache_find(&se->cache, sv.batch_seq);
    int hit = e && dsig_hb_sig_in_batch(&v->params, &e->batch, &sv);
    pthread_rwlock_unlock(&se->lock);
    return hit;
}

void dsig_hybrid_verifier_stats_get(dsig_hybrid_verifier *v, dsig_hybrid_verifier_stats *st)
{
    memset(st, 0, sizeof *st);
    st->batches_received = atomic_load(&v->received);
    st->batches_cached = atomic_load(&v->cached);
    st->batches_rejected = atomic_load(&v->rejected);
    st->batches_dropped = atomic_load(&v->dropped);
    st->batches_duplicate = atomic_load(&v->duplicate);
    st->batches_evicted = atomic_load(&v->evicted);
    st->batches_stale = atomic_load(&v->stale);
    st->fast = atomic_load(&v->fast);
    st->slow = atomic_load(&v->slow);
    st->equivocations = atomic_load(&v->equivocations);
    st->evidence_dropped = atomic_load(&v->evidence_dropped);
    st->waits = atomic_load(&v->waits);
    st->wait_timeouts = atomic_load(&v->wait_timeouts);
}
