/*
 * tests/faults/test_fault_pool_burst.c — the fault "a full key pool under burst load" (here: an
 * empty one — a burst drains it faster than the background threads refill it):
 *   - nonblocking node: a tight burst of signs gets DSIG_E_WOULD_BLOCK once the pool is empty, never
 *     any other error, never a reused key; the pool refills and the verifier is fast again;
 *   - blocking node: 4 threads sign a burst of 4 × 1500 messages concurrently; every sign succeeds
 *     (waiting for the pool), no one-time key is used twice.
 * Every successful signature verifies at the verifier (fast or slow), corrupted ones never do.
 * Threads (label "threads").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_node.h"
#include "testutil.h"

#define SIGNER 1u
#define VERIFIER 2u
#define BYSTANDER 3u
#define BURST 20000u
#define THREADS 4u
#define PER_THREAD 1500u

typedef struct signed_msg {
    uint8_t *sig;
    size_t len;
} signed_msg;

/* Message text of burst entry i of phase p. */
static void burst_msg(char *out, size_t cap, unsigned p, unsigned i)
{
    snprintf(out, cap, "burst %u message %u", p, i);
}

/* Verify the kept signatures at the verifier and collect their one-time keys. */
static size_t verify_all(fn_cluster *c, unsigned phase, signed_msg *v, size_t n, fn_otk *otk)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].sig)
            continue;
        char msg[64];
        burst_msg(msg, sizeof msg, phase, (unsigned)i);
        fn_otk_of(v[i].sig, v[i].len, &otk[k++]);
        /* A sample (every 7th and the last): slow-path checks cost ~0.1 ms each under the sanitizer. */
        if (i % 7 == 0 || i + 1 == n) {
            int rc = dsig_node_verify(c->node[VERIFIER], SIGNER, (const uint8_t *)msg, strlen(msg), v[i].sig,
                                      v[i].len);
            if (rc != DSIG_OK)
                fail_msg("burst %u signature %zu does not verify: %d (%s)", phase, i, rc, dsig_strerror(rc));
        }
    }
    return k;
}

typedef struct worker {
    dsig_node *node;
    unsigned t;
    signed_msg *out; /* PER_THREAD entries */
    int bad_rc;
} worker;

/* Blocking burst thread: every sign must succeed. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    size_t cap = dsig_node_sig_bytes(w->node, FN_GROUP);
    for (unsigned i = 0; i < PER_THREAD; i++) {
        char msg[64];
        burst_msg(msg, sizeof msg, 2, w->t * PER_THREAD + i);
        uint8_t *sig = malloc(cap);
        size_t len = 0;
        int rc = dsig_node_sign(w->node, FN_GROUP, (const uint8_t *)msg, strlen(msg), sig, cap, &len);
        if (rc != DSIG_OK) {
            w->bad_rc = rc;
            free(sig);
            return NULL;
        }
        w->out[i].sig = sig;
        w->out[i].len = len;
    }
    return NULL;
}

static void test_pool_burst(void **state)
{
    (void)state;
    fn_cluster c;
    fn_cluster_init(&c, 3, NULL, 1u << SIGNER | 1u << VERIFIER, 0);
    fn_node_start(&c, VERIFIER, NULL);
    dsig_node_options o;
    fn_options(&o);
    o.nonblocking = 1;
    o.pool_target = 256;
    fn_node_start(&c, SIGNER, &o);
    fn_wait_ready(&c, SIGNER, 256, 20000);

    fn_otk *otk = calloc(BURST + THREADS * PER_THREAD + 4, sizeof *otk);
    assert_non_null(otk);
    size_t n_otk = 0;

    /* Phase 1: nonblocking burst. */
    signed_msg *v = calloc(BURST, sizeof *v);
    assert_non_null(v);
    size_t cap = dsig_node_sig_bytes(c.node[SIGNER], FN_GROUP);
    unsigned ok = 0, blocked = 0;
    for (unsigned i = 0; i < BURST; i++) {
        char msg[64];
        burst_msg(msg, sizeof msg, 1, i);
        uint8_t *sig = malloc(cap);
        size_t len = 0;
        int rc = dsig_node_sign(c.node[SIGNER], FN_GROUP, (const uint8_t *)msg, strlen(msg), sig, cap, &len);
        if (rc == DSIG_OK) {
            v[i].sig = sig;
            v[i].len = len;
            ok++;
        } else if (rc == DSIG_E_WOULD_BLOCK) {
            free(sig);
            blocked++;
        } else {
            fail_msg("nonblocking burst sign %u: unexpected %d (%s)", i, rc, dsig_strerror(rc));
        }
    }
    dsig_node_stats s;
    dsig_node_stats_get(c.node[SIGNER], &s);
    print_message("faults: nonblocking burst of %u: %u signed, %u would-block\n", BURST, ok, blocked);
    assert_true(blocked > 0);  /* the pool ran dry and said so */
    assert_true(ok >= 256);    /* the ready keys were all usable */
    assert_int_equal(s.signatures, ok);
    n_otk += verify_all(&c, 1, v, BURST, otk + n_otk);

    /* The pool refills by itself and the verifier is warm again. */
    fn_wait_ready(&c, SIGNER, 256, 30000);
    {
        size_t len;
        uint8_t *sig = fn_sign(c.node[SIGNER], "after the nonblocking burst", &len);
        fn_wait_fast(c.node[VERIFIER], SIGNER, sig, len, 10000);
        fn_check_no_forgery(c.node[VERIFIER], SIGNER, BYSTANDER, "after the nonblocking burst", sig, len);
        fn_otk_of(sig, len, &otk[n_otk++]);
        free(sig);
    }

    /* Phase 2: the same signer id restarted in blocking mode; a concurrent burst from 4 threads. */
    fn_node_free(&c, SIGNER);
    fn_options(&o);
    o.pool_target = 256;
    fn_node_start(&c, SIGNER, &o);
    fn_wait_ready(&c, SIGNER, 128, 20000);
    signed_msg *w_out = calloc(THREADS * PER_THREAD, sizeof *w_out);
    worker w[THREADS];
    pthread_t th[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        w[t] = (worker){.node = c.node[SIGNER], .t = t, .out = w_out + t * PER_THREAD};
        assert_int_equal(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    }
    for (unsigned t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        if (w[t].bad_rc)
            fail_msg("blocking burst thread %u: %d (%s)", t, w[t].bad_rc, dsig_strerror(w[t].bad_rc));
    }
    dsig_node_stats_get(c.node[SIGNER], &s);
    assert_int_equal(s.signatures, THREADS * PER_THREAD);
    n_otk += verify_all(&c, 2, w_out, THREADS * PER_THREAD, otk + n_otk);
    fn_wait_ready(&c, SIGNER, 128, 30000);
    {
        size_t len;
        uint8_t *sig = fn_sign(c.node[SIGNER], "after the blocking burst", &len);
        fn_wait_fast(c.node[VERIFIER], SIGNER, sig, len, 10000);
        fn_check_no_forgery(c.node[VERIFIER], SIGNER, BYSTANDER, "after the blocking burst", sig, len);
        fn_otk_of(sig, len, &otk[n_otk++]);
        free(sig);
    }

    fn_otk_all_distinct(otk, n_otk);
    dsig_node_stats vs;
    dsig_node_stats_get(c.node[VERIFIER], &vs);
    assert_int_equal(vs.equivocations, 0);

    for (unsigned i = 0; i < BURST; i++)
        free(v[i].sig);
    for (unsigned i = 0; i < THREADS * PER_THREAD; i++)
        free(w_out[i].sig);
    free(v);
    free(w_out);
    free(otk);
    fn_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
