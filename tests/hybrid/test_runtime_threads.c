/*
 * tests/hybrid/test_runtime_threads.c — the DSig runtime with its background threads (CTest label
 * "threads": `make check-tsan` runs it under ThreadSanitizer): pool warm-up and the fast path through
 * a channel, non-blocking mode drained, one-time keys unique across concurrent signing threads,
 * several signers and verifiers working at once, and the bounded "wait for the batch" verification.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsig/dsig.h"
#include "testutil.h"

/* A deterministic DSig key (public part in *pub). */
static dsig_key *ed_key(uint8_t tag, dsig_key **pub)
{
    uint8_t seed[32];
    memset(seed, tag, sizeof seed);
    dsig_keygen_params kp = {.bits = 0, .seed = seed, .seed_len = sizeof seed};
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("DSig"), &kp), DSIG_OK);
    assert_int_equal(dsig_key_public(pub, k), DSIG_OK);
    return k;
}

/* Default signer: background thread, pool of 512, batch messages to a channel; verifier with a
 * background thread. After warm-up and flush the fast path is taken. */
static void test_background_fast_path(void **state)
{
    (void)state;
    dsig_key *pub, *k = ed_key(1, &pub);
    dsig_hybrid_channel *ch;
    assert_int_equal(dsig_hybrid_channel_new(&ch), DSIG_OK);
    dsig_hybrid_verifier *v;
    assert_int_equal(dsig_hybrid_verifier_new(&v, NULL, NULL), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 1, pub), DSIG_OK);
    assert_int_equal(dsig_hybrid_channel_subscribe(ch, v), DSIG_OK);
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.signer_id = 1;
    so.channel = ch;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_wait_ready(s, 512), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_wait_ready(s, 513), DSIG_E_ARG);
    dsig_hybrid_verifier_flush(v);

    uint8_t sig[4096];
    size_t len;
    for (unsigned i = 0; i < 300; i++) {
        assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)&i, sizeof i, sig, sizeof sig, &len), DSIG_OK);
        /* The batch message went out before its keys entered the pool; after a flush it is cached. */
        dsig_hybrid_verifier_flush(v);
        assert_int_equal(dsig_hybrid_can_verify_fast(v, 1, sig, len), 1);
        assert_int_equal(dsig_hybrid_verify(v, 1, (const uint8_t *)&i, sizeof i, sig, len), DSIG_OK);
    }
    dsig_hybrid_verifier_stats vs;
    dsig_hybrid_verifier_stats_get(v, &vs);
    assert_int_equal(vs.fast, 300);
    assert_int_equal(vs.slow, 0);
    assert_int_equal(vs.batches_rejected, 0);
    dsig_hybrid_signer_stats ss;
    dsig_hybrid_signer_stats_get(s, &ss);
    assert_int_equal(ss.signatures, 300);
    assert_int_equal(ss.publish_errors, 0);

    dsig_hybrid_signer_free(s);
    assert_int_equal(dsig_hybrid_channel_unsubscribe(ch, v), DSIG_OK);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_channel_free(ch);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* Used keys are erased off the signing path: by the background thread within its erase period (here
 * with a pool target of 1, so that signing never wakes it for keys: only the period does), and at once
 * without background threads. */
static void test_used_keys_erased(void **state)
{
    (void)state;
    dsig_key *pub, *k = ed_key(2, &pub);
    for (unsigned threads = 0; threads <= 1; threads++) {
        dsig_hybrid_signer_options so;
        dsig_hybrid_signer_options_default(&so);
        so.signer_id = 2;
        so.threads = threads;
        so.pool_target = 1;
        dsig_hybrid_signer *s;
        assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_OK);
        assert_int_equal(dsig_hybrid_signer_wait_ready(s, 1), DSIG_OK);
        uint8_t sig[4096];
        size_t len;
        for (unsigned i = 0; i < 100; i++)
            assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)&i, sizeof i, sig, sizeof sig, &len), DSIG_OK);
        dsig_hybrid_signer_stats ss;
        dsig_hybrid_signer_stats_get(s, &ss);
        assert_int_equal(ss.signatures, 100);
        if (threads == 0)
            assert_int_equal(ss.erased, 100);
        /* The period is 20 ms; allow 5 s for a loaded machine (sanitizers, valgrind). */
        for (int t = 0; t < 500 && ss.erased < 100; t++) {
            struct timespec d = {0, 10 * 1000 * 1000};
            nanosleep(&d, NULL);
            dsig_hybrid_signer_stats_get(s, &ss);
        }
        if (ss.erased != 100)
            fail_msg("threads=%u: %llu of 100 used keys erased after 5 s", threads, (unsigned long long)ss.erased);
        dsig_hybrid_signer_free(s);
    }
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* Non-blocking mode: signing is much faster than key generation, so draining the pool must end in
 * DSIG_E_WOULD_BLOCK; after a wait the signer works again. */
static void test_nonblocking_drained(void **state)
{
    (void)state;
    dsig_key *pub, *k = ed_key(2, &pub);
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.nonblocking = 1;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_wait_ready(s, 512), DSIG_OK);
    uint8_t sig[4096];
    size_t len;
    int blocked = 0;
    for (unsigned i = 0; i < 200000 && !blocked; i++) {
        int rc = dsig_hybrid_sign(s, (const uint8_t *)"m", 1, sig, sizeof sig, &len);
        if (rc == DSIG_E_WOULD_BLOCK)
            blocked = 1;
        else
            assert_int_equal(rc, DSIG_OK);
    }
    assert_true(blocked);
    dsig_hybrid_signer_stats st;
    dsig_hybrid_signer_stats_get(s, &st);
    assert_true(st.would_block >= 1);
    assert_true(st.signatures >= 512);
    assert_int_equal(dsig_hybrid_signer_wait_ready(s, 1), DSIG_OK);
    assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)"m", 1, sig, sizeof sig, &len), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify_slow(NULL, pub, 0, (const uint8_t *)"m", 1, sig, len), DSIG_OK);
    dsig_hybrid_signer_free(s);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* ---- waiting for the batch ------------------------------------------------------------------ */

struct waiter {
    dsig_hybrid_verifier *v;
    const uint8_t *sig;
    size_t sl;
    _Atomic int rc;
};

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;
    atomic_store(&w->rc, dsig_hybrid_verify_wait(w->v, 4, (const uint8_t *)"early", 5, w->sig, w->sl, 20000, 0));
    return NULL;
}

/* A signature that races ahead of its batch: verify_wait blocks until the batch is cached, then takes
 * the fast path (without the slow fallback flag, a timeout would have been DSIG_E_WOULD_BLOCK). The
 * test sees the call waiting (stats.waits, no result yet) before it delivers the batch.
 * Then: a timeout, the slow fallback, a batch below the floor (no wait), bad arguments. */
static void test_verify_wait(void **state)
{
    (void)state;
    dsig_key *pub, *k = ed_key(5, &pub);
    dsig_hybrid_params *p2;
    assert_int_equal(dsig_hybrid_params_with_batch(&p2, NULL, 1), DSIG_OK);
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.threads = 0;
    so.signer_id = 4;
    so.outbox = 64;
    so.pool_target = 2;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, p2, &so), DSIG_OK);
    dsig_hybrid_verifier *v;
    assert_int_equal(dsig_hybrid_verifier_new(&v, p2, NULL), DSIG_OK); /* a background thread */
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 4, pub), DSIG_OK);
    uint8_t sig[2048], bm[4096];
    size_t sl, bl;
    assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)"early", 5, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_next_batch(s, bm, sizeof bm, &bl), DSIG_OK);
    struct waiter w = {v, sig, sl, 99};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);
    dsig_hybrid_verifier_stats st;
    struct timespec nap = {0, 5 * 1000000L};
    for (int i = 0; i < 4000; i++) { /* until it waits (20 s at most on a loaded machine) */
        dsig_hybrid_verifier_stats_get(v, &st);
        if (st.waits)
            break;
        nanosleep(&nap, NULL);
    }
    assert_int_equal(st.waits, 1);
    nanosleep(&nap, NULL);
    assert_int_equal(atomic_load(&w.rc), 99); /* still waiting: nothing to verify it with yet */
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 4, bm, bl), DSIG_OK);
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&w.rc), DSIG_OK);
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.fast, 1);
    assert_int_equal(st.slow, 0);
    assert_int_equal(st.wait_timeouts, 0);
    /* Already cached: no wait at all. */
    assert_int_equal(dsig_hybrid_verify_wait(v, 4, (const uint8_t *)"early", 5, sig, sl, 0, 0), DSIG_OK);

    /* A batch that never comes: timeout, or the slow path when asked for. */
    uint8_t sig2[2048];
    size_t sl2;
    assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)"x", 1, sig2, sizeof sig2, &sl2), DSIG_OK);
    assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)"late", 4, sig2, sizeof sig2, &sl2), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify_wait(v, 4, (const uint8_t *)"late", 4, sig2, sl2, 50, 0), DSIG_E_WOULD_BLOCK);
    assert_non_null(strstr(dsig_last_error_detail(), "did not arrive"));
    assert_int_equal(dsig_hybrid_verify_wait(v, 4, (const uint8_t *)"late", 4, sig2, sl2, 50, DSIG_HYBRID_WAIT_SLOW),
                     DSIG_OK);
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.waits, 3);
    assert_int_equal(st.wait_timeouts, 2);
    assert_int_equal(st.slow, 1);
    assert_int_equal(dsig_hybrid_verify_wait(v, 4, (const uint8_t *)"lat3", 4, sig2, sl2, 0, DSIG_HYBRID_WAIT_SLOW),
                     DSIG_E_VERIFY);
    /* 40 newer batches raise the floor past sig2's: it will never be cached, so no wait. */
    while (dsig_hybrid_signer_next_batch(s, bm, sizeof bm, &bl) == DSIG_OK) {
    }
    for (int i = 0; i < 40; i++) {
        assert_int_equal(dsig_hybrid_signer_refill(s, 1), DSIG_OK);
        assert_int_equal(dsig_hybrid_signer_next_batch(s, bm, sizeof bm, &bl), DSIG_OK);
        assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 4, bm, bl), DSIG_OK);
    }
    dsig_hybrid_verifier_flush(v);
    assert_int_equal(dsig_hybrid_verify_wait(v, 4, (const uint8_t *)"late", 4, sig2, sl2, DSIG_HYBRID_MAX_WAIT_MS, 0),
                     DSIG_E_WOULD_BLOCK);
    assert_non_null(strstr(dsig_last_error_detail(), "sequence floor"));
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.waits, 3); /* it did not wait */
    /* Bad arguments and input. */
    assert_int_equal(dsig_hybrid_verify_wait(v, 4, (const uint8_t *)"x", 1, sig, sl, DSIG_HYBRID_MAX_WAIT_MS + 1, 0),
                     DSIG_E_ARG);
    assert_int_equal(dsig_hybrid_verify_wait(v, 4, (const uint8_t *)"x", 1, sig, sl, 10, 2), DSIG_E_ARG);
    assert_int_equal(dsig_hybrid_verify_wait(v, 5, (const uint8_t *)"x", 1, sig, sl, 10, 0), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_hybrid_verify_wait(v, 4, (const uint8_t *)"x", 1, sig, sl - 1, 10, 0), DSIG_E_VERIFY);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_signer_free(s);
    dsig_hybrid_params_free(p2);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* ---- concurrent signing: every (batch, index) pair distinct ---------------------------------- */

#define SIGN_THREADS 4
#define SIGNS_PER_THREAD 700

struct signjob {
    dsig_hybrid_signer *s;
    uint64_t *pairs;
    int rc;
};

/* Sign SIGNS_PER_THREAD messages, recording where each one-time key came from. */
static void *sign_worker(void *arg)
{
    struct signjob *j = arg;
    uint8_t sig[4096];
    size_t len;
    j->rc = DSIG_OK;
    for (unsigned i = 0; i < SIGNS_PER_THREAD; i++) {
        int rc = dsig_hybrid_sign(j->s, (const uint8_t *)&i, sizeof i, sig, sizeof sig, &len);
        uint64_t seq;
        uint32_t idx;
        if (rc == DSIG_OK)
            rc = dsig_hybrid_sig_locate(NULL, sig, len, &seq, &idx);
        if (rc != DSIG_OK) {
            j->rc = rc;
            return NULL;
        }
        j->pairs[i] = seq << 32 | idx;
    }
    return NULL;
}

/* Compare u64 for qsort. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* SIGN_THREADS threads × SIGNS_PER_THREAD signatures (≫ the 512-key pool, blocking mode, two
 * background generators): no (batch, index) pair appears twice. */
static void test_unique_keys_concurrent(void **state)
{
    (void)state;
    dsig_key *pub, *k = ed_key(3, &pub);
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.threads = 2;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_OK);
    uint64_t *pairs = malloc(sizeof *pairs * SIGN_THREADS * SIGNS_PER_THREAD);
    pthread_t th[SIGN_THREADS];
    struct signjob jobs[SIGN_THREADS];
    for (int t = 0; t < SIGN_THREADS; t++) {
        jobs[t].s = s;
        jobs[t].pairs = pairs + (size_t)t * SIGNS_PER_THREAD;
        assert_int_equal(pthread_create(&th[t], NULL, sign_worker, &jobs[t]), 0);
    }
    for (int t = 0; t < SIGN_THREADS; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(jobs[t].rc, DSIG_OK);
    }
    size_t n = (size_t)SIGN_THREADS * SIGNS_PER_THREAD;
    qsort(pairs, n, sizeof *pairs, cmp_u64);
    for (size_t i = 1; i < n; i++)
        assert_true(pairs[i - 1] != pairs[i]);
    dsig_hybrid_signer_stats st;
    dsig_hybrid_signer_stats_get(s, &st);
    assert_int_equal(st.signatures, n);
    free(pairs);
    dsig_hybrid_signer_free(s);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* ---- several signers and verifiers at once --------------------------------------------------- */

#define NSIG 2
#define NVER 2
#define MSGS 400

/* A signature in flight from a signing thread to the verifying threads. */
struct item {
    uint64_t signer;
    uint32_t n;
    size_t len;
    uint8_t sig[1600];
};

struct world {
    dsig_hybrid_signer *s[NSIG];
    dsig_hybrid_verifier *v[NVER];
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct item *items;
    size_t produced, consumed;
    int producers_left;
    int bad;
    unsigned fast_seen;
};

struct sarg {
    struct world *w;
    int who;
};

/* Signing thread: MSGS signatures from signer `who`, handed to the verifiers. */
static void *producer(void *arg)
{
    struct sarg *a = arg;
    struct world *w = a->w;
    for (uint32_t i = 0; i < MSGS; i++) {
        struct item it;
        it.signer = (uint64_t)a->who + 1;
        it.n = i;
        uint8_t msg[8];
        memcpy(msg, &it.signer, 4);
        memcpy(msg + 4, &i, 4);
        if (dsig_hybrid_sign(w->s[a->who], msg, sizeof msg, it.sig, sizeof it.sig, &it.len) != DSIG_OK) {
            __atomic_store_n(&w->bad, 1, __ATOMIC_SEQ_CST);
            break;
        }
        pthread_mutex_lock(&w->lock);
        w->items[w->produced++] = it;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
    pthread_mutex_lock(&w->lock);
    w->producers_left--;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Verifying thread: take items and verify each on every verifier (fast or slow, whichever applies),
 * plus a forged copy that must fail. */
static void *consumer(void *arg)
{
    struct sarg *a = arg;
    struct world *w = a->w;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        while (w->consumed == w->produced && w->producers_left > 0)
            pthread_cond_wait(&w->cond, &w->lock);
        if (w->consumed == w->produced) {
            pthread_mutex_unlock(&w->lock);
            return NULL;
        }
        struct item it = w->items[w->consumed++];
        pthread_mutex_unlock(&w->lock);
        uint8_t msg[8];
        memcpy(msg, &it.signer, 4);
        memcpy(msg + 4, &it.n, 4);
        for (int v = 0; v < NVER; v++) {
            if (dsig_hybrid_can_verify_fast(w->v[v], it.signer, it.sig, it.len))
                __atomic_add_fetch(&w->fast_seen, 1, __ATOMIC_RELAXED);
            if (dsig_hybrid_verify(w->v[v], it.signer, msg, sizeof msg, it.sig, it.len) != DSIG_OK)
                __atomic_store_n(&w->bad, 2, __ATOMIC_SEQ_CST);
        }
        msg[0] ^= 0x40;
        if (dsig_hybrid_verify(w->v[a->who % NVER], it.signer, msg, sizeof msg, it.sig, it.len) !=
            DSIG_E_VERIFY)
            __atomic_store_n(&w->bad, 3, __ATOMIC_SEQ_CST);
    }
}

/* NSIG signers (each with its background thread) publish to one channel read by NVER verifiers (each
 * with a background thread) while NSIG signing threads and 2 verifying threads run. */
static void test_concurrent_signers_verifiers(void **state)
{
    (void)state;
    struct world w;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, NULL);
    w.items = calloc((size_t)NSIG * MSGS, sizeof *w.items);
    w.producers_left = NSIG;
    dsig_key *pub[NSIG], *k[NSIG];
    dsig_hybrid_channel *ch;
    assert_int_equal(dsig_hybrid_channel_new(&ch), DSIG_OK);
    for (int i = 0; i < NVER; i++) {
        assert_int_equal(dsig_hybrid_verifier_new(&w.v[i], NULL, NULL), DSIG_OK);
        assert_int_equal(dsig_hybrid_channel_subscribe(ch, w.v[i]), DSIG_OK);
    }
    for (int i = 0; i < NSIG; i++) {
        k[i] = ed_key((uint8_t)(10 + i), &pub[i]);
        for (int j = 0; j < NVER; j++)
            assert_int_equal(dsig_hybrid_verifier_add_signer(w.v[j], (uint64_t)i + 1, pub[i]), DSIG_OK);
        dsig_hybrid_signer_options so;
        dsig_hybrid_signer_options_default(&so);
        so.signer_id = (uint64_t)i + 1;
        so.channel = ch;
        so.pool_target = 256;
        assert_int_equal(dsig_hybrid_signer_new(&w.s[i], k[i], NULL, &so), DSIG_OK);
    }
    pthread_t pt[NSIG], ct[2];
    struct sarg pa[NSIG], ca[2];
    for (int i = 0; i < NSIG; i++) {
        pa[i] = (struct sarg){&w, i};
        assert_int_equal(pthread_create(&pt[i], NULL, producer, &pa[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        ca[i] = (struct sarg){&w, i};
        assert_int_equal(pthread_create(&ct[i], NULL, consumer, &ca[i]), 0);
    }
    for (int i = 0; i < NSIG; i++)
        pthread_join(pt[i], NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(ct[i], NULL);
    assert_int_equal(w.bad, 0);
    assert_int_equal(w.consumed, (size_t)NSIG * MSGS);
    uint64_t fast = 0, slow = 0;
    for (int i = 0; i < NVER; i++) {
        dsig_hybrid_verifier_stats vs;
        dsig_hybrid_verifier_stats_get(w.v[i], &vs);
        fast += vs.fast;
        slow += vs.slow;
        assert_int_equal(vs.equivocations, 0);
        assert_int_equal(vs.batches_rejected, 0);
    }
    assert_true(fast + slow >= (uint64_t)NSIG * MSGS * (NVER + 1));
    for (int i = 0; i < NSIG; i++) {
        dsig_hybrid_signer_free(w.s[i]);
        dsig_key_free(k[i]);
        dsig_key_free(pub[i]);
    }
    for (int i = 0; i < NVER; i++) {
        assert_int_equal(dsig_hybrid_channel_unsubscribe(ch, w.v[i]), DSIG_OK);
        dsig_hybrid_verifier_free(w.v[i]);
    }
    dsig_hybrid_channel_free(ch);
    free(w.items);
    pthread_mutex_destroy(&w.lock);
    pthread_cond_destroy(&w.cond);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_background_fast_path),
        cmocka_unit_test(test_nonblocking_drained),
        cmocka_unit_test(test_used_keys_erased),
        cmocka_unit_test(test_unique_keys_concurrent),
        cmocka_unit_test(test_concurrent_signers_verifiers),
        cmocka_unit_test(test_verify_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
