/*
 * src/serve/digest.c — the audit payload digest (SHA-256 or BLAKE3) off the signing thread.
 *
 * The signer runs on the libmicrohttpd thread that owns the connection; hashing every byte a second
 * time there for the audit line halved the service's throughput (ES256 is itself one SHA-256 pass).
 * Here each upload gets a job: a ring of `slots` buffers of `slot_bytes` (constant memory per upload,
 * taken from a bounded free list) that the connection thread copies each chunk into (a copy costs
 * about a tenth of a SHA-256 pass), and a small shared pool of worker threads hashes the published
 * slots in order while the connection thread goes on signing.
 *
 * Ownership: a job's hash context is used by whoever has "claimed" the job, at most one thread at a
 * time, and always on the oldest published slot first, so the digest is of the bytes in order. A
 * worker claims a job from the run queue; the connection thread claims it itself when the ring is
 * full and no worker is on it (back-pressure without waiting behind other uploads), and at the join.
 * When a worker is on the job and the ring is full the connection thread waits for that worker
 * only (at most one slot's hashing). Every hand-over goes through one pool mutex, which is also what
 * orders the slot bytes and the hash context between the threads (TSan-clean).
 *
 * Small requests never touch the pool: the first `offload_min` bytes of every request are hashed
 * inline (no thread wake-up in the latency of a 1 KiB request), and a request that finds no free ring
 * (more than `max_jobs` large uploads at once) or no pool stays inline to the end.
 */
#include <string.h>

#include <openssl/evp.h>

#include "core/internal.h"
#include "dsig/mem.h"
#include "hash/blake3.h"
#include "serve_internal.h"

#define RING_MAX 16 /* upper bound of opts.slots */

/* One ring buffer, kept on the pool's free list between uploads (no allocation per upload). */
struct ring {
    struct ring *next;
    uint8_t *buf;          /* slots × slot_bytes */
};

struct serve_digest_pool {
    struct serve_digest_opts o;
    pthread_mutex_t mu;    /* guards everything below and every job's shared members */
    pthread_cond_t work;   /* a job was queued, or stop */
    struct serve_digest *qhead, *qtail; /* run queue: jobs with published slots and no claimer */
    struct ring *free_rings;
    unsigned rings;        /* rings allocated (≤ max_jobs) */
    int stop;
    unsigned nthreads;
    pthread_t *threads;
};

/* Claimer of a job (guarded by the pool mutex). */
enum { CLAIM_NONE = 0, CLAIM_WORKER = 1, CLAIM_OWNER = 2 };

struct serve_digest {
    struct serve_digest_pool *pool; /* NULL: inline only */
    int kind;                       /* SERVE_DIGEST_SHA256 or SERVE_DIGEST_BLAKE3 */
    EVP_MD_CTX *md;                 /* used by the claimer only (inline: by the owner) */
    dsig_blake3_hasher *b3;
    int failed;                     /* a hash update failed (written by the claimer, like the context) */
    uint64_t bytes;                 /* owner only: bytes seen */
    int inline_only;                /* owner only: no ring could be had */
    /* ring (offloaded) */
    struct ring *ring;              /* owner only (set before the first publish) */
    size_t wfill;                   /* owner only: bytes in the open slot */
    unsigned widx;                  /* owner only: the open slot */
    size_t fill[RING_MAX];          /* published slot sizes (mutex) */
    size_t used[RING_MAX];          /* owner only: high-water of each slot, wiped at the end */
    unsigned head, count;           /* oldest published slot, number published (mutex) */
    int claim;                      /* CLAIM_* (mutex) */
    int queued;                     /* in the run queue (mutex) */
    struct serve_digest *qprev, *qnext;
    pthread_cond_t cv;              /* slot consumed / claim released (owner waits) */
};

/* Hash n bytes into the job's context (claimer or inline owner only).
 * @spec FIPS 180-4 §6.2 (SHA-256, OpenSSL EVP) or BLAKE3 spec §2 (src/hash/blake3.c): incremental update. */
static void hash_bytes(struct serve_digest *d, const void *p, size_t n)
{
    if (d->kind == SERVE_DIGEST_BLAKE3)
        dsig_blake3_update(d->b3, p, n);
    else if (EVP_DigestUpdate(d->md, p, n) != 1)
        d->failed = 1;
}

/* Append a job to the run queue and wake a worker (mutex held). */
static void enqueue(struct serve_digest_pool *p, struct serve_digest *d)
{
    d->queued = 1;
    d->qnext = NULL;
    d->qprev = p->qtail;
    if (p->qtail)
        p->qtail->qnext = d;
    else
        p->qhead = d;
    p->qtail = d;
    pthread_cond_signal(&p->work);
}

/* Take a job out of the run queue (mutex held). */
static void dequeue(struct serve_digest_pool *p, struct serve_digest *d)
{
    if (!d->queued)
        return;
    if (d->qprev)
        d->qprev->qnext = d->qnext;
    else
        p->qhead = d->qnext;
    if (d->qnext)
        d->qnext->qprev = d->qprev;
    else
        p->qtail = d->qprev;
    d->qprev = d->qnext = NULL;
    d->queued = 0;
}

/* Hash the oldest published slot as the claimer: the mutex is released during the hashing (the slot
 * and the context belong to the claimer), retaken after. */
static void consume_one(struct serve_digest_pool *p, struct serve_digest *d)
{
    unsigned s = d->head;
    size_t n = d->fill[s];
    const uint8_t *src = d->ring->buf + (size_t)s * p->o.slot_bytes;
    pthread_mutex_unlock(&p->mu);
    hash_bytes(d, src, n);
    pthread_mutex_lock(&p->mu);
    d->head = (s + 1) % p->o.slots;
    d->count--;
    pthread_cond_signal(&d->cv);
}

/* The connection thread brings its job down to `keep` pending slots: it hashes them itself while no
 * worker is on the job, else waits for that worker (mutex held). Used when the ring is full (keep =
 * slots - 1: one slot free again) and at the join (keep = 0). */
static void owner_help(struct serve_digest_pool *p, struct serve_digest *d, unsigned keep)
{
    while (d->count > keep) {
        if (d->claim == CLAIM_NONE) {
            dequeue(p, d);
            d->claim = CLAIM_OWNER;
            consume_one(p, d);
            d->claim = CLAIM_NONE;
        } else {
            pthread_cond_wait(&d->cv, &p->mu); /* a worker is on it: one slot at most */
        }
    }
    if (d->count && d->claim == CLAIM_NONE && !d->queued)
        enqueue(p, d); /* what remains goes back to the workers */
}

/* Worker thread: claim queued jobs and hash their slots in order. */
static void *worker(void *arg)
{
    struct serve_digest_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->qhead && !p->stop)
            pthread_cond_wait(&p->work, &p->mu);
        struct serve_digest *d = p->qhead;
        if (!d)
            break; /* stop, and nothing queued */
        dequeue(p, d);
        d->claim = CLAIM_WORKER;
        /* At most one ring's worth, then the job goes to the back of the queue: an upload that keeps
         * its ring full does not keep the worker from the others. */
        for (unsigned i = 0; i < p->o.slots && d->count; i++)
            consume_one(p, d);
        d->claim = CLAIM_NONE;
        if (d->count)
            enqueue(p, d);
        /* Under the mutex: once it is released the owner may free the job. */
        pthread_cond_signal(&d->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Start the worker threads. */
int serve_digest_pool_new(struct serve_digest_pool **out, const struct serve_digest_opts *o)
{
    *out = NULL;
    if (!o->workers || o->slots < 2 || o->slots > RING_MAX || o->slot_bytes < 1024 || !o->max_jobs)
        return dsig_fail(DSIG_E_ARG, "serve: digest pool: bad parameters");
    struct serve_digest_pool *p = dsig_calloc(1, sizeof *p);
    if (!p || !(p->threads = dsig_calloc(o->workers, sizeof *p->threads))) {
        dsig_xfree(p, 0);
        return dsig_fail(DSIG_E_NOMEM, "serve: digest pool: out of memory");
    }
    p->o = *o;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    for (unsigned i = 0; i < o->workers; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
            serve_digest_pool_free(p);
            return dsig_fail(DSIG_E_INTERNAL, "serve: cannot start a digest thread");
        }
        p->nthreads++;
    }
    *out = p;
    return DSIG_OK;
}

/* Stop the workers (every job must be finished) and free the rings. */
void serve_digest_pool_free(struct serve_digest_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    while (p->free_rings) {
        struct ring *r = p->free_rings;
        p->free_rings = r->next;
        dsig_xfree(r->buf, 0); /* wiped when returned */
        dsig_xfree(r, 0);
    }
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    dsig_xfree(p->threads, 0);
    dsig_xfree(p, 0);
}

/* Start one payload digest; pool NULL: always inline. */
int serve_digest_new(struct serve_digest **out, struct serve_digest_pool *pool, int kind)
{
    *out = NULL;
    struct serve_digest *d = dsig_calloc(1, sizeof *d);
    if (!d)
        return dsig_fail(DSIG_E_NOMEM, "serve: payload digest: out of memory");
    d->pool = pool;
    d->kind = kind;
    if (kind == SERVE_DIGEST_BLAKE3) {
        if (!(d->b3 = dsig_malloc(sizeof *d->b3))) {
            dsig_xfree(d, 0);
            return dsig_fail(DSIG_E_NOMEM, "serve: payload digest: out of memory");
        }
        dsig_blake3_init(d->b3);
    } else {
        const EVP_MD *md = serve_sha256_md();
        if (!md || !(d->md = EVP_MD_CTX_new()) || EVP_DigestInit_ex(d->md, md, NULL) != 1) {
            EVP_MD_CTX_free(d->md);
            dsig_xfree(d, 0);
            return dsig_fail_openssl(DSIG_E_CRYPTO, "serve: payload digest: SHA-256");
        }
    }
    pthread_cond_init(&d->cv, NULL);
    *out = d;
    return DSIG_OK;
}

/* A ring from the free list or a new one (≤ max_jobs); NULL: none (the upload stays inline). */
static struct ring *ring_get(struct serve_digest_pool *p)
{
    pthread_mutex_lock(&p->mu);
    struct ring *r = p->free_rings;
    if (r) {
        p->free_rings = r->next;
    } else if (p->rings < p->o.max_jobs) {
        p->rings++; /* reserved; allocated outside the lock */
    } else {
        pthread_mutex_unlock(&p->mu);
        return NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (r)
        return r;
    r = dsig_calloc(1, sizeof *r);
    if (r && !(r->buf = dsig_malloc((size_t)p->o.slots * p->o.slot_bytes))) {
        dsig_xfree(r, 0);
        r = NULL;
    }
    if (!r) {
        pthread_mutex_lock(&p->mu);
        p->rings--;
        pthread_mutex_unlock(&p->mu);
    }
    return r;
}

/* Publish the open slot to the claimer/workers; then make sure a free slot is open again, hashing
 * pending slots here if no worker is on this job (back-pressure). */
static void publish(struct serve_digest *d, int need_room)
{
    struct serve_digest_pool *p = d->pool;
    pthread_mutex_lock(&p->mu);
    d->fill[d->widx] = d->wfill;
    d->count++;
    if (d->claim == CLAIM_NONE && !d->queued)
        enqueue(p, d);
    if (need_room)
        owner_help(p, d, p->o.slots - 1);
    pthread_mutex_unlock(&p->mu);
    d->widx = (d->widx + 1) % p->o.slots;
    d->wfill = 0;
}

/* Feed payload bytes (the hot path: a copy into the ring, a lock per slot at most). */
int serve_digest_update(struct serve_digest *d, const void *data, size_t n)
{
    const uint8_t *in = data;
    struct serve_digest_pool *p = d->pool;
    if (!d->ring) {
        /* Inline: no pool, no ring, or the request is still small (latency of small requests). */
        size_t head = n;
        if (p && !d->inline_only && d->bytes + n > p->o.offload_min) {
            head = d->bytes < p->o.offload_min ? (size_t)(p->o.offload_min - d->bytes) : 0;
            if (!(d->ring = ring_get(p)))
                d->inline_only = 1, head = n;
        }
        hash_bytes(d, in, head);
        d->bytes += head;
        in += head;
        n -= head;
        if (d->failed)
            return dsig_fail(DSIG_E_CRYPTO, "serve: payload digest update failed");
    }
    d->bytes += n;
    size_t sb = p ? p->o.slot_bytes : 0;
    while (n) {
        size_t c = sb - d->wfill < n ? sb - d->wfill : n;
        uint8_t *dst = d->ring->buf + (size_t)d->widx * sb + d->wfill;
        memcpy(dst, in, c); /* the open slot is the owner's: no lock */
        d->wfill += c;
        if (d->wfill > d->used[d->widx])
            d->used[d->widx] = d->wfill;
        in += c;
        n -= c;
        if (d->wfill == sb)
            publish(d, 1);
    }
    /* Only full slots are handed over (small chunks are batched): one lock and at most one worker
     * wake-up per slot_bytes keeps the connection thread's cost near a bare memcpy. */
    return DSIG_OK;
}

/* Wait until every published byte is hashed (hashing the rest here if no worker is on it). */
static void join(struct serve_digest *d)
{
    struct serve_digest_pool *p = d->pool;
    if (!d->ring)
        return;
    if (d->wfill)
        publish(d, 0);
    pthread_mutex_lock(&p->mu);
    owner_help(p, d, 0);
    while (d->claim != CLAIM_NONE) /* the worker leaves the job once it has emptied it */
        pthread_cond_wait(&d->cv, &p->mu);
    dequeue(p, d);
    pthread_mutex_unlock(&p->mu);
}

/* Join and produce the 32-byte digest of everything fed.
 * @spec FIPS 180-4 §6.2.2 final block / BLAKE3 spec §2.6 root output, 32 bytes. */
int serve_digest_final(struct serve_digest *d, uint8_t out[32])
{
    join(d);
    if (d->failed)
        return dsig_fail(DSIG_E_CRYPTO, "serve: payload digest update failed");
    if (d->kind == SERVE_DIGEST_BLAKE3) {
        dsig_blake3_finalize(d->b3, out, 32);
        return DSIG_OK;
    }
    unsigned int ol = 0;
    if (EVP_DigestFinal_ex(d->md, out, &ol) != 1 || ol != 32)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "serve: payload digest: SHA-256 final");
    return DSIG_OK;
}

/* Join (a worker may still read the ring), wipe the payload copies, return the ring, free. */
void serve_digest_free(struct serve_digest *d)
{
    if (!d)
        return;
    join(d);
    if (d->ring) {
        struct serve_digest_pool *p = d->pool;
        for (unsigned i = 0; i < p->o.slots; i++)
            dsig_memzero(d->ring->buf + (size_t)i * p->o.slot_bytes, d->used[i]);
        pthread_mutex_lock(&p->mu);
        d->ring->next = p->free_rings;
        p->free_rings = d->ring;
        pthread_mutex_unlock(&p->mu);
    }
    pthread_cond_destroy(&d->cv);
    EVP_MD_CTX_free(d->md);
    dsig_xfree(d->b3, sizeof *d->b3);
    dsig_xfree(d, 0);
}
