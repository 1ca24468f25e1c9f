/*
 * The DSig signer: one pool of prepared one-time keys per verifier group (the paper's per-signature
 * hint), refilled by background threads, one-time pop on sign, and delivery of every new batch message
 * (the group's channel, callback, outbox) before its keys can sign.
 *
 * A pool is a FIFO of generated batches; `ready` counts the keys not yet handed out. sign() moves one
 * key out of the head batch of the hinted group's pool under the mutex (a struct copy; the source is
 * zeroed so no other caller can see it), then signs outside the lock and hands the used key to the
 * background threads to erase (see "Deferred erase" below). Background threads
 * sleep on `need_keys` until some pool's ready + in-flight keys fall below pool_target, generate a
 * whole batch for the emptiest one without the lock, and wake blocked signers through `not_empty`. No
 * busy-waiting anywhere. All groups take sequence numbers from one counter, so a verifier that is in
 * several groups sees one growing sequence per signer (its sequence floor needs that).
 *
 * Key freshness: every signer draws its own 32-byte master seed from the OS CSPRNG; per-key seeds are
 * derived from (master seed, batch sequence number, index) by the scheme. Sequence numbers are handed
 * out under the mutex, so no (master, seq) pair is generated twice within an instance, and a new
 * instance (or a restart) never shares the master seed.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hybrid/runtime.h"

/*
 * Fork guard. A child process with a copy of the address space (fork, _Fork, clone without CLONE_VM)
 * would hold the very one-time keys its parent goes on using: if both signed, one key would sign two
 * messages (forgeable by anyone who sees both). The signer's secrets — master seed, root key and an
 * owner pid — live in secret memory with MADV_WIPEONFORK, like every batch of keys: in such a child
 * they read as zeros, so the owner pid no longer matches the pid the signer recorded and the signer
 * refuses to sign or generate (DSIG_E_STATE). That costs one load per signature. Where the kernel
 * does not wipe on fork, or with opts.strict_pid, the signer compares getpid() on every signature (a
 * system call). Children that share the parent's memory (vfork, clone with CLONE_VM) share its pool
 * too — a key one of them takes is gone for the other, so no key is used twice — and strict_pid
 * refuses them as well.
 */
_Static_assert(DSIG_HYBRID_PROTECT_NODUMP == DSIG_SECMEM_NODUMP &&
                   DSIG_HYBRID_PROTECT_WIPEONFORK == DSIG_SECMEM_WIPEONFORK &&
                   DSIG_HYBRID_PROTECT_LOCKED == DSIG_SECMEM_LOCKED,
               "public and internal protection flags differ");

struct hb_secrets {
    pid_t owner;                        /* getpid() at creation; 0 in a wiped copy */
    uint8_t master[DSIG_HB_SEED_BYTES];
    dsig_ed25519_dkey root;             /* signs batch roots */
};

/* The default first batch sequence number: CLOCK_REALTIME in µs × 256. A signer restarted under the
 * same id starts past every seq it used before unless it made more than 256 batches per µs on average
 * (one batch is at least microseconds of hashing per thread), or the clock went back; verifiers refuse
 * reused seqs and cache only growing ones (dsig/hybrid.h, first_seq). 2^59 is reached in 4253. */
static uint64_t clock_seq(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u) << 8;
}

#define DEFAULT_POOL 512u
#define MAX_GROUPS 64u
#define MAX_THREADS 64u
#define MAX_POOL (1u << 24)

/* A generated batch in the pool; keys [next_key, batch) are still available. */
struct pool_batch {
    struct pool_batch *next;
    uint32_t next_key;
    dsig_hb_batch b;
};

/* A kept batch message for the pull API. */
struct outmsg {
    struct outmsg *next;
    size_t len;
    uint8_t data[];
};

/* One verifier group's keys and kept batch messages. */
/*
 * Deferred erase. Wiping a used key (its whole table of chain levels: 5 KB for the default set) was
 * about 40 % of a signature's time on the signing thread. A used key therefore goes on a lock-free
 * stack (one compare-and-swap), written over the start of its own memory, which is about to be wiped
 * anyway, and a background thread erases the stack: whenever it wakes to generate keys, and at least
 * every SPENT_PERIOD_MS otherwise. So a used key's secrets live at most that long after the signature
 * is released — and no longer secret than the hundreds of unused prepared keys next to them in the
 * same protected memory (out of core dumps and swap, zero in a fork child). The key has left the pool
 * under the mutex before it signs, so deferring its erase cannot let it sign again. Without background
 * threads (or once they have stopped) the signing thread erases at once, as before.
 */
#define SPENT_PERIOD_MS 20
struct spent {
    struct spent *next;
    dsig_hb_key key;
};

struct pool {
    struct pool_batch *head, *tail;     /* under lock */
    uint64_t ready;                     /* keys not yet handed out (under lock) */
    uint64_t inflight;                  /* keys being generated by background threads (under lock) */
    struct outmsg *ohead, *otail;       /* under out_lock */
    unsigned olen;
};

struct dsig_hybrid_signer {
    dsig_hb_params params;
    dsig_hybrid_signer_options opt;
    struct hb_secrets *sec;             /* in `secmem` (see the fork guard above) */
    pid_t pid;                          /* the owner pid, also kept here: a wiped copy tells */
    int check_pid;                      /* also compare getpid() on every signature */
    dsig_secmem secmem;
    dsig_hb_who who;                    /* runtime domain, signer id, root public key */
    uint8_t pk[DSIG_HB_ED25519_PK];     /* the identity public key */

    pthread_mutex_t lock;
    pthread_cond_t not_empty;           /* keys became ready, or a background error, or stop */
    pthread_cond_t need_keys;           /* a pool fell below target, or stop */
    struct pool *pools;                 /* one per group */
    unsigned ngroups;
    uint64_t next_seq;
    int stop;
    int bg_error;                       /* first background failure (the threads then stop) */
    unsigned bg_alive;
    pthread_t *threads;
    unsigned nthreads;
    dsig_hybrid_signer_stats st;        /* under lock, except outbox/publish counters */

    pthread_mutex_t out_lock;
    uint64_t outbox_dropped;
    _Atomic uint64_t publish_errors;
    unsigned protections;               /* DSIG_SECMEM_* that every secret region had (under lock) */
    _Atomic(struct spent *) spent;      /* used keys not yet erased (see "Deferred erase") */
    _Atomic unsigned bg_live;           /* background threads that will still erase `spent` */
    _Atomic uint64_t erased;            /* used keys wiped (stats) */
};

/* Put a used key on the stack of keys to erase; *key is cleared (it held no secret, only addresses). */
static void spent_push(dsig_hybrid_signer *s, dsig_hb_key *key)
{
    struct spent *n = (struct spent *)(void *)key->mem; /* 64-byte aligned, larger than a node */
    n->key = *key;
    struct spent *old = atomic_load_explicit(&s->spent, memory_order_relaxed);
    do
        n->next = old;
    while (!atomic_compare_exchange_weak_explicit(&s->spent, &old, n, memory_order_seq_cst, memory_order_relaxed));
    dsig_memzero(key, sizeof *key);
}

/* Erase every key on the stack (each erase wipes the node too, so it is copied first). */
static void spent_erase_all(dsig_hybrid_signer *s)
{
    struct spent *n = atomic_exchange_explicit(&s->spent, NULL, memory_order_acquire);
    while (n) {
        struct spent c = *n;
        dsig_hb_key_erase(&c.key);
        n = c.next;
        dsig_memzero(&c, sizeof c);
        atomic_fetch_add_explicit(&s->erased, 1, memory_order_relaxed);
    }
}

/* The need_keys wait of a background thread: woken by a signer, or after SPENT_PERIOD_MS to erase. */
static void wait_need_keys(dsig_hybrid_signer *s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += SPENT_PERIOD_MS * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&s->need_keys, &s->lock, &t);
}

/* 1 if this is a copy of the signer in another process (see the fork guard above). */
static int hb_forked(const dsig_hybrid_signer *s)
{
    return s->sec->owner != s->pid || (s->check_pid && getpid() != s->pid);
}

void dsig_hybrid_signer_options_default(dsig_hybrid_signer_options *o)
{
    memset(o, 0, sizeof *o);
    o->pool_target = DEFAULT_POOL;
    o->threads = 1;
}

/* ---- batch generation and delivery ---------------------------------------------------------- */

/* Keep a copy of a batch message for the pull API, dropping the group's oldest when full. */
static void outbox_push(dsig_hybrid_signer *s, struct pool *pl, const uint8_t *msg, size_t len)
{
    struct outmsg *m = dsig_malloc(sizeof *m + len);
    if (!m) {
        pthread_mutex_lock(&s->out_lock);
        s->outbox_dropped++;
        pthread_mutex_unlock(&s->out_lock);
        return;
    }
    m->next = NULL;
    m->len = len;
    memcpy(m->data, msg, len);
    struct outmsg *drop = NULL;
    pthread_mutex_lock(&s->out_lock);
    if (pl->olen >= s->opt.outbox) {
        drop = pl->ohead;
        pl->ohead = drop->next;
        if (!pl->ohead)
            pl->otail = NULL;
        pl->olen--;
        s->outbox_dropped++;
    }
    if (pl->otail)
        pl->otail->next = m;
    else
        pl->ohead = m;
    pl->otail = m;
    pl->olen++;
    pthread_mutex_unlock(&s->out_lock);
    dsig_xfree(drop, 0);
}

/* The channel group g's batch messages go to (NULL: none). */
static dsig_hybrid_channel *group_channel(const dsig_hybrid_signer *s, unsigned g)
{
    return s->opt.group_channels ? s->opt.group_channels[g] : s->opt.channel;
}

/* Generate batch `seq` for group g and deliver its batch message; the keys are not yet in the pool. */
static int generate(dsig_hybrid_signer *s, unsigned g, uint64_t seq, struct pool_batch **out)
{
    *out = NULL;
    struct pool_batch *pb = dsig_calloc(1, sizeof *pb);
    if (!pb)
        return dsig_fail(DSIG_E_NOMEM, "DSig signer: out of memory");
    int rc = dsig_hb_keygen_batch(&s->params, s->sec->master, seq, &s->sec->root, &s->who, &pb->b);
    if (rc) {
        dsig_xfree(pb, 0);
        return rc;
    }
    dsig_hybrid_channel *ch = group_channel(s, g);
    if (ch || s->opt.on_batch || s->opt.outbox) {
        size_t cap = s->params.batch_msg_bytes, len = 0;
        uint8_t *msg = dsig_malloc(cap);
        if (!msg)
            rc = dsig_fail(DSIG_E_NOMEM, "DSig signer: out of memory");
        else
            rc = dsig_hb_batch_message(&pb->b, msg, cap, &len);
        if (rc == DSIG_OK) {
            /* Before the keys enter the pool: a verifier may see the batch before any signature. */
            if (ch && dsig_hybrid_channel_publish(ch, s->opt.signer_id, msg, len) != DSIG_OK)
                atomic_fetch_add_explicit(&s->publish_errors, 1, memory_order_relaxed);
            if (s->opt.on_batch)
                s->opt.on_batch(s->opt.on_batch_arg, s->opt.signer_id, g, msg, len);
            if (s->opt.outbox)
                outbox_push(s, &s->pools[g], msg, len);
        }
        dsig_xfree(msg, 0);
        if (rc) {
            dsig_hb_batch_free(&pb->b);
            dsig_xfree(pb, 0);
            return rc;
        }
    }
    *out = pb;
    return DSIG_OK;
}

/* Append a generated batch to a pool and wake waiting signers (lock held). */
static void pool_append(dsig_hybrid_signer *s, struct pool *pl, struct pool_batch *pb)
{
    if (pl->tail)
        pl->tail->next = pb;
    else
        pl->head = pb;
    pl->tail = pb;
    pl->ready += s->params.batch;
    s->st.batches++;
    s->protections &= pb->b.secmem_flags;
    pthread_cond_broadcast(&s->not_empty);
}

/* Generate one batch for group g in the calling thread and add it to its pool (lock NOT held). */
static int refill_one(dsig_hybrid_signer *s, unsigned g)
{
    if (hb_forked(s)) /* the parent's pool and seqs: its keys, or (wiped) no keys at all */
        return dsig_fail(DSIG_E_STATE, "DSig signer: a copy in a child process; create a new signer");
    pthread_mutex_lock(&s->lock);
    uint64_t seq = s->next_seq++;
    pthread_mutex_unlock(&s->lock);
    struct pool_batch *pb;
    int rc = generate(s, g, seq, &pb);
    if (rc)
        return rc;
    pthread_mutex_lock(&s->lock);
    pool_append(s, &s->pools[g], pb);
    pthread_mutex_unlock(&s->lock);
    return DSIG_OK;
}

/* The group whose pool is furthest below target, or -1 if every pool has its target (lock held). */
static int neediest(const dsig_hybrid_signer *s)
{
    int best = -1;
    uint64_t low = s->opt.pool_target;
    for (unsigned g = 0; g < s->ngroups; g++) {
        uint64_t have = s->pools[g].ready + s->pools[g].inflight;
        if (have < low) {
            low = have;
            best = (int)g;
        }
    }
    return best;
}

/* Background thread: keep ready + in-flight keys at or above the pool target until stopped. */
static void *keygen_thread(void *arg)
{
    dsig_hybrid_signer *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stop && !s->bg_error) {
        if (atomic_load_explicit(&s->spent, memory_order_relaxed)) {
            pthread_mutex_unlock(&s->lock);
            spent_erase_all(s);
            pthread_mutex_lock(&s->lock);
            continue;
        }
        int g = neediest(s);
        if (g < 0) {
            wait_need_keys(s);
            continue;
        }
        struct pool *pl = &s->pools[g];
        uint64_t seq = s->next_seq++;
        pl->inflight += s->params.batch;
        pthread_mutex_unlock(&s->lock);

        struct pool_batch *pb;
        int rc = generate(s, (unsigned)g, seq, &pb);

        pthread_mutex_lock(&s->lock);
        pl->inflight -= s->params.batch;
        if (rc) {
            /* Fatal for the pool (out of memory, RNG or Ed25519 failure): stop generating and let
             * signers on an empty pool see the error instead of waiting forever. */
            s->bg_error = rc;
            pthread_cond_broadcast(&s->not_empty);
            pthread_cond_broadcast(&s->need_keys);
            break;
        }
        pool_append(s, pl, pb);
    }
    s->bg_alive--;
    pthread_cond_broadcast(&s->not_empty);
    pthread_mutex_unlock(&s->lock);
    /* Leave no used key behind: a signer that pushes after this drain sees bg_live at 0 (both
     * sequentially consistent) and erases itself. */
    atomic_fetch_sub_explicit(&s->bg_live, 1, memory_order_seq_cst);
    spent_erase_all(s);
    return NULL;
}

/* ---- life cycle ----------------------------------------------------------------------------- */

int dsig_hybrid_signer_new(dsig_hybrid_signer **out, const dsig_key *key,
                           const dsig_hybrid_params *p, const dsig_hybrid_signer_options *opts)
{
    if (!out || !key)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_signer_new: NULL argument");
    *out = NULL;
    const dsig_hb_params *hp;
    int rc = dsig_hb_params_resolve(p, &hp);
    if (rc)
        return rc;
    dsig_hybrid_signer_options o;
    if (opts)
        o = *opts;
    else
        dsig_hybrid_signer_options_default(&o);
    if (o.pool_target == 0 || o.pool_target > MAX_POOL)
        return dsig_fail(DSIG_E_ARG, "DSig signer: pool_target must be 1..%u", MAX_POOL);
    if (o.threads > MAX_THREADS)
        return dsig_fail(DSIG_E_ARG, "DSig signer: at most %u threads", MAX_THREADS);
    if (o.groups > MAX_GROUPS)
        return dsig_fail(DSIG_E_ARG, "DSig signer: at most %u verifier groups", MAX_GROUPS);
    unsigned ngroups = o.groups ? o.groups : 1;

    dsig_hybrid_signer *s = dsig_calloc(1, sizeof *s);
    if (!s)
        return dsig_fail(DSIG_E_NOMEM, "DSig signer: out of memory");
    s->pools = dsig_calloc(ngroups, sizeof *s->pools);
    s->ngroups = ngroups;
    if (!s->pools || dsig_secmem_alloc(&s->secmem, sizeof *s->sec) != DSIG_OK) {
        dsig_xfree(s->pools, 0);
        dsig_xfree(s, 0);
        return dsig_fail(DSIG_E_NOMEM, "DSig signer: out of memory for its secrets");
    }
    s->sec = s->secmem.p;
    s->pid = s->sec->owner = getpid();
    s->check_pid = o.strict_pid || !(s->secmem.flags & DSIG_SECMEM_WIPEONFORK);
    s->protections = s->secmem.flags;
    s->params = *hp;
    s->opt = o;
    s->next_seq = o.first_seq ? o.first_seq : clock_seq();
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->not_empty, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* wait_need_keys' deadline */
    pthread_cond_init(&s->need_keys, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&s->out_lock, NULL);
    atomic_init(&s->spent, NULL);
    atomic_init(&s->bg_live, 0);
    atomic_init(&s->erased, 0);
    atomic_init(&s->publish_errors, 0);

    s->who.domain = DSIG_HB_DOMAIN_RUNTIME;
    s->who.signer_id = o.signer_id;
    rc = dsig_hb_key_public(key, s->pk, s->who.root_pk);
    if (rc == DSIG_OK)
        rc = dsig_hb_key_root_secret(key, &s->sec->root);
    if (rc == DSIG_OK && dsig_random_bytes(s->sec->master, sizeof s->sec->master) != DSIG_OK)
        rc = dsig_fail(DSIG_E_RNG, "DSig signer: cannot draw the master seed");
    if (rc == DSIG_OK && o.threads) {
        s->threads = dsig_calloc(o.threads, sizeof *s->threads);
        if (!s->threads)
            rc = dsig_fail(DSIG_E_NOMEM, "DSig signer: out of memory");
        for (unsigned i = 0; rc == DSIG_OK && i < o.threads; i++) {
            pthread_mutex_lock(&s->lock);
            s->bg_alive++;
            atomic_fetch_add_explicit(&s->bg_live, 1, memory_order_seq_cst);
            pthread_mutex_unlock(&s->lock);
            if (pthread_create(&s->threads[i], NULL, keygen_thread, s) != 0) {
                pthread_mutex_lock(&s->lock);
                s->bg_alive--;
                atomic_fetch_sub_explicit(&s->bg_live, 1, memory_order_seq_cst);
                pthread_mutex_unlock(&s->lock);
                rc = dsig_fail(DSIG_E_NOMEM, "DSig signer: cannot start a background thread");
                break;
            }
            s->nthreads++;
        }
    }
    if (rc) {
        dsig_hybrid_signer_free(s);
        return rc;
    }
    *out = s;
    return DSIG_OK;
}

void dsig_hybrid_signer_free(dsig_hybrid_signer *s)
{
    if (!s)
        return;
    if (hb_forked(s)) {
        /* A copy in a child process: the background threads do not exist here, and a lock (the
         * signer's, malloc's, the secret-memory cache's) may have been held by one of them when the
         * child was made — _Fork and clone run no atfork handler. So wipe every key and secret in
         * place and free nothing: the copy is abandoned with the child's address space. */
        for (unsigned g = 0; g < s->ngroups; g++)
            for (struct pool_batch *pb = s->pools[g].head; pb; pb = pb->next)
                for (uint32_t i = pb->next_key; i < s->params.batch; i++)
                    if (pb->b.keys[i].mem)
                        dsig_memzero(pb->b.keys[i].mem, pb->b.keys[i].mem_len);
        /* Used keys not yet erased: where the fork zeroed them the first node reads as the end. */
        for (struct spent *n = atomic_load(&s->spent), *nx; n; n = nx) {
            nx = n->next;
            if (n->key.mem)
                dsig_memzero(n->key.mem, n->key.mem_len);
        }
        dsig_memzero(s->sec, sizeof *s->sec);
        return;
    }
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->need_keys);
    pthread_cond_broadcast(&s->not_empty);
    pthread_mutex_unlock(&s->lock);
    for (unsigned i = 0; i < s->nthreads; i++)
        pthread_join(s->threads[i], NULL);
    dsig_xfree(s->threads, 0);
    spent_erase_all(s); /* the threads drain it as they exit: normally nothing is left */
    for (unsigned g = 0; g < s->ngroups; g++) {
        for (struct pool_batch *pb = s->pools[g].head, *nx; pb; pb = nx) {
            nx = pb->next;
            dsig_hb_batch_free(&pb->b); /* erases every key still in it */
            dsig_xfree(pb, 0);
        }
        for (struct outmsg *m = s->pools[g].ohead, *nx; m; m = nx) {
            nx = m->next;
            dsig_xfree(m, 0);
        }
    }
    dsig_xfree(s->pools, 0);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->not_empty);
    pthread_cond_destroy(&s->need_keys);
    pthread_mutex_destroy(&s->out_lock);
    dsig_secmem_free(&s->secmem); /* wipes the master seed and the root key */
    dsig_xfree(s, sizeof *s);
}

/* ---- signing -------------------------------------------------------------------------------- */

/* @spec DSig (OSDI '24) §4 — take one prepared key out of group g's pool (waiting or refusing when
 * empty), sign with it and erase it. */
static int sign_in(dsig_hybrid_signer *s, unsigned g, const uint8_t *msg, size_t len, uint8_t *sig,
                   size_t cap, size_t *sig_len)
{
    if (cap < s->params.sig_bytes)
        return dsig_fail(DSIG_E_BUFFER, "DSig sign: buffer of %zu bytes, signature needs %zu", cap,
                         s->params.sig_bytes);
    if (hb_forked(s))
        return dsig_fail(DSIG_E_STATE, "DSig sign: this signer is a copy in a child process (fork, "
                                       "_Fork, clone); its one-time keys belong to the parent (create a "
                                       "new signer)");
    struct pool *pl = &s->pools[g];
    dsig_hb_key key;
    struct pool_batch *done = NULL;
    pthread_mutex_lock(&s->lock);
    while (pl->ready == 0) {
        if (s->stop) {
            pthread_mutex_unlock(&s->lock);
            return dsig_fail(DSIG_E_STATE, "DSig sign: signer is shutting down");
        }
        if (s->opt.nonblocking) {
            s->st.would_block++;
            pthread_mutex_unlock(&s->lock);
            return dsig_fail(DSIG_E_WOULD_BLOCK, "DSig sign: no prepared one-time key ready");
        }
        if (s->nthreads == 0 || s->bg_alive == 0) {
            int bg = s->bg_error;
            pthread_mutex_unlock(&s->lock);
            if (bg)
                return dsig_fail(bg, "DSig sign: background key generation failed (%s)",
                                 dsig_strerror(bg));
            int rc = refill_one(s, g); /* no threads: the caller generates */
            if (rc)
                return rc;
            pthread_mutex_lock(&s->lock);
            continue;
        }
        s->st.waits++;
        pthread_cond_wait(&s->not_empty, &s->lock);
    }
    struct pool_batch *pb = pl->head;
    dsig_hb_key *src = &pb->b.keys[pb->next_key++];
    key = *src;
    memset(src, 0, sizeof *src); /* moved: nobody else can reach this key */
    if (pb->next_key == s->params.batch) {
        pl->head = pb->next;
        if (!pl->head)
            pl->tail = NULL;
        done = pb;
    }
    pl->ready--;
    s->st.signatures++;
    if (s->nthreads && pl->ready + pl->inflight < s->opt.pool_target)
        pthread_cond_signal(&s->need_keys);
    /* The key the NEXT signature will take: it was written by a background thread on another core,
     * so pull its lines into this core's cache now, while this call's own work overlaps the misses. */
    const dsig_hb_key *next = NULL;
    if (pl->head)
        next = pl->head->next_key < s->params.batch ? &pl->head->b.keys[pl->head->next_key]
               : pl->head->next                      ? &pl->head->next->b.keys[pl->head->next->next_key]
                                                     : NULL;
    /* Copy the descriptor under the lock: once it is released another thread may take and free that
     * key. Prefetching the copied address range is harmless even then (prefetches never fault). */
    dsig_hb_key next_hint = {0};
    if (next)
        next_hint = *next;
    const int defer = s->nthreads && s->bg_alive && !s->stop;
    pthread_mutex_unlock(&s->lock);

    int rc = dsig_hb_sign(&key, msg, len, sig, cap, sig_len);
    /* One-time: erased whatever the outcome, by a background thread when there is one. */
    if (defer && key.mem && key.mem_len >= sizeof(struct spent)) {
        spent_push(s, &key);
        if (atomic_load_explicit(&s->bg_live, memory_order_seq_cst) == 0)
            spent_erase_all(s); /* the threads stopped after `defer` was read */
    } else {
        dsig_hb_key_erase(&key);
        atomic_fetch_add_explicit(&s->erased, 1, memory_order_relaxed);
    }
    dsig_hb_key_prefetch(&next_hint); /* a hint only: no key data is read */
    dsig_memzero(&next_hint, sizeof next_hint);
    if (done) {
        dsig_hb_batch_free(&done->b);
        dsig_xfree(done, 0);
    }
    return rc;
}

int dsig_hybrid_sign(dsig_hybrid_signer *s, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                     size_t *sig_len)
{
    if (!s || (!msg && len) || !sig || !sig_len)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_sign: NULL argument");
    return sign_in(s, 0, msg, len, sig, cap, sig_len);
}

int dsig_hybrid_sign_hint(dsig_hybrid_signer *s, unsigned group, const uint8_t *msg, size_t len, uint8_t *sig,
                          size_t cap, size_t *sig_len)
{
    if (!s || (!msg && len) || !sig || !sig_len)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_sign_hint: NULL argument");
    if (group >= s->ngroups)
        return dsig_fail(DSIG_E_ARG, "DSig sign: verifier group %u, the signer has %u", group, s->ngroups);
    return sign_in(s, group, msg, len, sig, cap, sig_len);
}

int dsig_hybrid_signer_refill(dsig_hybrid_signer *s, unsigned batches)
{
    if (!s)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_signer_refill: NULL signer");
    for (unsigned g = 0; g < s->ngroups; g++)
        for (unsigned i = 0; i < batches; i++) {
            int rc = refill_one(s, g);
            if (rc)
                return rc;
        }
    return DSIG_OK;
}

int dsig_hybrid_signer_wait_ready(dsig_hybrid_signer *s, unsigned n)
{
    if (!s)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_signer_wait_ready: NULL signer");
    if (hb_forked(s)) /* no background threads in a child process: would wait forever */
        return dsig_fail(DSIG_E_STATE, "DSig signer: a copy in a child process; create a new signer");
    if (s->nthreads && n > s->opt.pool_target)
        return dsig_fail(DSIG_E_ARG, "DSig signer: cannot wait for %u keys, pool target is %u", n,
                         s->opt.pool_target);
    pthread_mutex_lock(&s->lock);
    for (;;) {
        unsigned g = 0;
        while (g < s->ngroups && s->pools[g].ready >= n)
            g++;
        if (g == s->ngroups)
            break;
        if (s->nthreads == 0 || s->bg_alive == 0) {
            int bg = s->bg_error;
            pthread_mutex_unlock(&s->lock);
            if (bg)
                return dsig_fail(bg, "DSig signer: background key generation failed");
            int rc = refill_one(s, g);
            if (rc)
                return rc;
            pthread_mutex_lock(&s->lock);
            continue;
        }
        pthread_cond_wait(&s->not_empty, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return DSIG_OK;
}

int dsig_hybrid_signer_next_batch(dsig_hybrid_signer *s, uint8_t *buf, size_t cap, size_t *len)
{
    return dsig_hybrid_signer_next_group_batch(s, 0, buf, cap, len);
}

int dsig_hybrid_signer_next_group_batch(dsig_hybrid_signer *s, unsigned group, uint8_t *buf, size_t cap,
                                        size_t *len)
{
    if (!s || !len || (!buf && cap))
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_signer_next_batch: NULL argument");
    if (group >= s->ngroups)
        return dsig_fail(DSIG_E_ARG, "DSig signer: verifier group %u, the signer has %u", group, s->ngroups);
    struct pool *pl = &s->pools[group];
    pthread_mutex_lock(&s->out_lock);
    struct outmsg *m = pl->ohead;
    if (!m) {
        pthread_mutex_unlock(&s->out_lock);
        return dsig_fail(DSIG_E_WOULD_BLOCK, "DSig signer: no batch message waiting");
    }
    *len = m->len;
    if (cap < m->len) {
        pthread_mutex_unlock(&s->out_lock);
        return dsig_fail(DSIG_E_BUFFER, "DSig signer: batch message needs %zu bytes", m->len);
    }
    pl->ohead = m->next;
    if (!pl->ohead)
        pl->otail = NULL;
    pl->olen--;
    pthread_mutex_unlock(&s->out_lock);
    memcpy(buf, m->data, m->len);
    dsig_xfree(m, 0);
    return DSIG_OK;
}

size_t dsig_hybrid_signer_sig_bytes(const dsig_hybrid_signer *s) { return s->params.sig_bytes; }
const dsig_hybrid_params *dsig_hybrid_signer_params(const dsig_hybrid_signer *s) { return &s->params; }
uint64_t dsig_hybrid_signer_id(const dsig_hybrid_signer *s) { return s->opt.signer_id; }

void dsig_hybrid_signer_public_key(const dsig_hybrid_signer *s, uint8_t pk[32])
{
    memcpy(pk, s->pk, DSIG_HB_ED25519_PK);
}

void dsig_hybrid_signer_stats_get(dsig_hybrid_signer *s, dsig_hybrid_signer_stats *st)
{
    pthread_mutex_lock(&s->lock);
    *st = s->st;
    st->ready = 0;
    for (unsigned g = 0; g < s->ngroups; g++)
        st->ready += s->pools[g].ready;
    st->protections = s->protections;
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->out_lock);
    st->outbox_dropped = s->outbox_dropped;
    pthread_mutex_unlock(&s->out_lock);
    st->publish_errors = atomic_load(&s->publish_errors);
    st->erased = atomic_load(&s->erased);
}
