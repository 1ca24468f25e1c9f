/*
 * src/serve/digest.c — the audit payload digest (BLAKE3 or SHA-256) beside the signer, without copies.
 *
 * The signer runs on the libmicrohttpd thread that owns the connection; hashing every byte a second
 * time there for the audit line put a whole extra hash pass on the request's critical path (ES256 is
 * itself one SHA-256 pass). So each large chunk MHD hands over is *lent* to a small shared pool of
 * worker threads while the connection thread signs the same bytes:
 *
 *   serve_digest_update(d, chunk)   queues (pointer, length) for a worker — no copy, no allocation;
 *   ... the connection thread signs the chunk ...
 *   serve_digest_sync(d)            before the chunk goes back to MHD: if no worker has started on it,
 *                                   the connection thread takes it back and hashes it itself (it never
 *                                   waits behind other uploads); if a worker is on it, it waits for that
 *                                   one chunk only (shorter than signing it for every signature scheme).
 *
 * A job has at most one chunk outstanding, so the digest is of the bytes in order, and the memory per
 * upload is the hash state alone (an earlier version copied chunks into a 2 MiB ring per upload).
 * Ownership: a job's hash context is used either by the connection thread or by the one worker that
 * dequeued it, never both; every hand-over goes through the pool mutex, which also orders the lent
 * bytes and the context between the threads (TSan-clean).
 *
 * Small chunks (< offload_min, e.g. a whole 1 KiB request) are hashed inline: a thread wake-up would
 * cost more than the hashing and add to the latency of small requests. Workers run at nice 10 (see
 * worker()).
 */
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/internal.h"
#include "dsig/mem.h"
#include "hash/blake3.h"
#include "serve_internal.h"

struct serve_digest_pool {
    struct serve_digest_opts o;
    pthread_mutex_t mu;    /* guards the run queue, `stop` and every job's `state`/`lent*` */
    pthread_cond_t work;   /* a job was queued, or stop */
    struct serve_digest *qhead, *qtail; /* lent chunks no worker has started on, oldest first */
    int stop;
    unsigned nthreads;
    pthread_t *threads;
};

/* Where a job's outstanding chunk is (guarded by the pool mutex). */
enum { LENT_NONE = 0, LENT_QUEUED = 1, LENT_RUNNING = 2 };

struct serve_digest {
    struct serve_digest_pool *pool; /* NULL: inline only */
    int kind;                       /* SERVE_DIGEST_SHA256 or SERVE_DIGEST_BLAKE3 */
    EVP_MD_CTX *md;                 /* the hash context: owner, or the worker running the lent chunk */
    dsig_blake3_hasher *b3;
    int failed;                     /* a hash update failed (written with the context) */
    const uint8_t *lent;            /* the outstanding chunk (mutex) */
    size_t lent_n;
    int state;                      /* LENT_* (mutex) */
    struct serve_digest *qprev, *qnext;
    pthread_cond_t cv;              /* the worker finished this job's chunk */
};

/* Hash n bytes into the job's context (by whoever holds it).
 * @spec BLAKE3 spec §2 (src/hash/blake3.c) or FIPS 180-4 §6.2 (SHA-256, OpenSSL EVP): incremental update. */
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
    d->qnext = NULL;
    d->qprev = p->qtail;
    if (p->qtail)
        p->qtail->qnext = d;
    else
        p->qhead = d;
    p->qtail = d;
    pthread_cond_signal(&p->work);
}

/* Take a queued job out of the run queue (mutex held). */
static void dequeue(struct serve_digest_pool *p, struct serve_digest *d)
{
    if (d->qprev)
        d->qprev->qnext = d->qnext;
    else
        p->qhead = d->qnext;
    if (d->qnext)
        d->qnext->qprev = d->qprev;
    else
        p->qtail = d->qprev;
    d->qprev = d->qnext = NULL;
}

/* Worker thread: take the oldest lent chunk, hash it, hand the job back. */
static void *worker(void *arg)
{
    struct serve_digest_pool *p = arg;
    pthread_setname_np(pthread_self(), "dsig-digest"); /* visible in top -H, ps -L */
    /* Nice 10 (this thread only, Linux): the digest should take CPU the signers and the clients do not
     * need, not preempt them — a chunk nobody has started on is taken back at the sync anyway. On the
     * 2-core machine this moved 100 MiB ES256 uploads from 0.76–0.80× to 0.84–0.86× of `dsig sign`
     * (bench/serve_bench.sh). Not SCHED_IDLE: under full load an idle-class thread can wait about a
     * second for the CPU, and a connection thread synced on its chunk would wait with it. */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->qhead && !p->stop)
            pthread_cond_wait(&p->work, &p->mu);
        struct serve_digest *d = p->qhead;
        if (!d)
            break; /* stop, and nothing queued */
        dequeue(p, d);
        d->state = LENT_RUNNING;
        pthread_mutex_unlock(&p->mu);
        hash_bytes(d, d->lent, d->lent_n);
        pthread_mutex_lock(&p->mu);
        d->state = LENT_NONE;
        /* Under the mutex: once it is released the owner may reuse the chunk or free the job. */
        pthread_cond_signal(&d->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Start the worker threads. */
int serve_digest_pool_new(struct serve_digest_pool **out, const struct serve_digest_opts *o)
{
    *out = NULL;
    if (!o->workers || o->workers > 64)
        return dsig_fail(DSIG_E_ARG, "serve: digest pool: bad parameters (workers must be 1..64)");
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

/* Stop the workers (every job must be synced) and free the pool. */
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

/* Take the outstanding chunk back (hash it here) or wait for the worker on it; after this the job and
 * its context are the owner's again. */
int serve_digest_sync(struct serve_digest *d)
{
    struct serve_digest_pool *p = d->pool;
    if (p) {
        pthread_mutex_lock(&p->mu);
        if (d->state == LENT_QUEUED) {
            dequeue(p, d);
            d->state = LENT_NONE;
            pthread_mutex_unlock(&p->mu);
            hash_bytes(d, d->lent, d->lent_n); /* no worker got to it: hashing beats waiting */
        } else {
            while (d->state == LENT_RUNNING)
                pthread_cond_wait(&d->cv, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        d->lent = NULL;
        d->lent_n = 0;
    }
    return d->failed ? dsig_fail(DSIG_E_CRYPTO, "serve: payload digest update failed") : DSIG_OK;
}

/* Feed a chunk: lent to a worker (valid until serve_digest_sync) or hashed here if small. */
int serve_digest_update(struct serve_digest *d, const void *data, size_t n)
{
    struct serve_digest_pool *p = d->pool;
    int rc = serve_digest_sync(d); /* at most one chunk outstanding: the digest keeps the byte order */
    if (rc != DSIG_OK)
        return rc;
    if (!p || n < p->o.offload_min) {
        hash_bytes(d, data, n);
        return d->failed ? dsig_fail(DSIG_E_CRYPTO, "serve: payload digest update failed") : DSIG_OK;
    }
    pthread_mutex_lock(&p->mu);
    d->lent = data;
    d->lent_n = n;
    d->state = LENT_QUEUED;
    enqueue(p, d);
    pthread_mutex_unlock(&p->mu);
    return DSIG_OK;
}

/* Sync and produce the 32-byte digest of everything fed.
 * @spec BLAKE3 spec §2.6 root output, 32 bytes / FIPS 180-4 §6.2.2 final block. */
int serve_digest_final(struct serve_digest *d, uint8_t out[32])
{
    int rc = serve_digest_sync(d);
    if (rc != DSIG_OK)
        return rc;
    if (d->kind == SERVE_DIGEST_BLAKE3) {
        dsig_blake3_finalize(d->b3, out, 32);
        return DSIG_OK;
    }
    unsigned int ol = 0;
    if (EVP_DigestFinal_ex(d->md, out, &ol) != 1 || ol != 32)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "serve: payload digest: SHA-256 final");
    return DSIG_OK;
}

/* Sync (a worker may still read the lent chunk) and free. */
void serve_digest_free(struct serve_digest *d)
{
    if (!d)
        return;
    (void)serve_digest_sync(d);
    pthread_cond_destroy(&d->cv);
    EVP_MD_CTX_free(d->md);
    dsig_xfree(d->b3, sizeof *d->b3);
    dsig_xfree(d, 0);
}
