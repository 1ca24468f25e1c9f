/*
 * tests/bft/test_bft_runtime.c — dsig/bft.h end to end in one process (label "threads": TSan runs it):
 * real DSig nodes on Unix sockets, the objects' ticker threads, events handed out by the delivering
 * thread, application threads broadcasting and submitting concurrently. Consistent broadcast with the
 * DSig scheme, replication with DSig and with the registry-key scheme (Ed25519 keys of their own), and
 * the option checks of dsig_bft_new.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsig/bft.h"
#include "dsig/dsig.h"
#include "fault_node.h"

#define NB 4
#define PER 10

typedef struct app {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    dsig_bft *b;
    unsigned delivered, replies;
    uint64_t origin[NB * PER], inst[NB * PER];
    uint8_t digest[NB * PER][32];
    uint64_t last_seq;
} app;

static void on_app(void *arg, uint64_t peer, const uint8_t *bytes, size_t len)
{
    app *a = arg;
    pthread_mutex_lock(&a->mu);
    dsig_bft *b = a->b;
    pthread_mutex_unlock(&a->mu);
    if (b)
        (void)dsig_bft_receive(b, peer, bytes, len);
}

static void on_event(void *arg, const dsig_bft_event *ev)
{
    app *a = arg;
    pthread_mutex_lock(&a->mu);
    if (ev->kind == DSIG_BFT_EV_DELIVER && a->delivered < NB * PER) {
        a->origin[a->delivered] = ev->origin;
        a->inst[a->delivered] = ev->instance;
        memcpy(a->digest[a->delivered], ev->digest, 32);
        a->delivered++;
    } else if (ev->kind == DSIG_BFT_EV_REPLY) {
        a->replies++;
    } else if (ev->kind == DSIG_BFT_EV_DECIDE) {
        assert_true(ev->instance > a->last_seq);
        a->last_seq = ev->instance;
    } else if (ev->kind == DSIG_BFT_EV_EVIDENCE) {
        fail_msg("evidence among honest processes");
    }
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

static void start_nodes(fn_cluster *c, app *apps, unsigned n)
{
    fn_cluster_init(c, n, NULL, 0, 0);
    for (unsigned id = 1; id <= n; id++) {
        pthread_mutex_init(&apps[id].mu, NULL);
        pthread_cond_init(&apps[id].cv, NULL);
        dsig_node_options o;
        fn_options(&o);
        o.max_app_bytes = DSIG_BFT_NODE_APP_BYTES;
        o.on_app = on_app;
        o.on_app_arg = &apps[id];
        fn_node_start(c, id, &o);
    }
    for (unsigned id = 1; id <= n; id++)
        fn_wait_ready(c, id, 128, 30000);
}

static void attach(app *a, dsig_bft *b)
{
    pthread_mutex_lock(&a->mu);
    a->b = b;
    pthread_mutex_unlock(&a->mu);
}

static void detach_all(fn_cluster *c, app *apps, unsigned n)
{
    for (unsigned id = 1; id <= n; id++)
        dsig_node_stop(c->node[id]);
    for (unsigned id = 1; id <= n; id++) {
        dsig_bft_free(apps[id].b);
        apps[id].b = NULL;
    }
}

static void wait_count(app *a, unsigned *field, unsigned want, unsigned ms)
{
    uint64_t until = fu_mono_ms() + ms;
    pthread_mutex_lock(&a->mu);
    while (*field < want) {
        if (fu_mono_ms() > until) {
            pthread_mutex_unlock(&a->mu);
            fail_msg("timed out: %u of %u", *field, want);
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&a->cv, &a->mu, &ts);
    }
    pthread_mutex_unlock(&a->mu);
}

static void *broadcaster(void *arg)
{
    dsig_bft *b = arg;
    for (int k = 0; k < PER; k++) {
        char v[32];
        int n = snprintf(v, sizeof v, "value %d of %p", k, arg);
        int rc;
        while ((rc = dsig_bft_broadcast(b, (const uint8_t *)v, (size_t)n, NULL)) == DSIG_E_WOULD_BLOCK)
            usleep(1000);
        assert_int_equal(rc, DSIG_OK);
    }
    return NULL;
}

static void broadcast_round(int protocol)
{
    fn_cluster c;
    static app apps[FN_MAX + 1];
    memset(apps, 0, sizeof apps);
    start_nodes(&c, apps, NB);
    uint64_t members[NB] = {1, 2, 3, 4};
    for (unsigned id = 1; id <= NB; id++) {
        dsig_bft_options o;
        dsig_bft_options_default(&o);
        o.protocol = protocol;
        o.session = 77;
        o.members = members;
        o.n_members = NB;
        o.group = FN_GROUP;
        o.on_event = on_event;
        o.on_event_arg = &apps[id];
        dsig_bft *b = NULL;
        assert_int_equal(dsig_bft_new(&b, c.node[id], &o), DSIG_OK);
        attach(&apps[id], b);
    }
    pthread_t th[NB];
    for (int i = 0; i < NB; i++)
        assert_int_equal(pthread_create(&th[i], NULL, broadcaster, apps[i + 1].b), 0);
    for (int i = 0; i < NB; i++)
        pthread_join(th[i], NULL);
    for (unsigned id = 1; id <= NB; id++)
        wait_count(&apps[id], &apps[id].delivered, NB * PER, 60000);
    /* the same digest for every (origin, instance) everywhere */
    for (unsigned id = 2; id <= NB; id++)
        for (unsigned x = 0; x < NB * PER; x++) {
            unsigned y = 0;
            while (y < NB * PER && !(apps[1].origin[y] == apps[id].origin[x] && apps[1].inst[y] == apps[id].inst[x]))
                y++;
            assert_true(y < NB * PER);
            assert_memory_equal(apps[1].digest[y], apps[id].digest[x], 32);
        }
    dsig_bft_stats st;
    dsig_bft_stats_get(apps[1].b, &st);
    assert_int_equal(st.delivered, NB * PER);
    assert_int_equal(st.malformed + st.forged + st.equivocations, 0);
    detach_all(&c, apps, NB);
    fn_cluster_free(&c);
}

static void test_cbc_threads(void **state)
{
    (void)state;
    broadcast_round(DSIG_BFT_CBC);
}

static void test_rbc_threads(void **state)
{
    (void)state;
    broadcast_round(DSIG_BFT_RBC);
}

static void replication(int scheme)
{
    fn_cluster c;
    static app apps[FN_MAX + 1];
    memset(apps, 0, sizeof apps);
    start_nodes(&c, apps, 5);
    uint64_t replicas[4] = {1, 2, 3, 4}, client = 5;
    fu_dsig_key keys[6];
    dsig_bft_peer_key pk[6];
    for (unsigned id = 1; id <= 5; id++)
        fu_dsig_key_new(&keys[id]);
    for (unsigned id = 1; id <= 5; id++) {
        size_t np = 0;
        for (unsigned j = 1; j <= 5; j++)
            if (j != id)
                pk[np++] = (dsig_bft_peer_key){.id = j, .key = keys[j].pub};
        dsig_bft_options o;
        dsig_bft_options_default(&o);
        o.protocol = id == 5 ? DSIG_BFT_CLIENT : DSIG_BFT_REPLICA;
        o.scheme = scheme;
        o.session = 78;
        o.members = replicas;
        o.n_members = 4;
        o.clients = &client;
        o.n_clients = 1;
        o.group = FN_GROUP;
        o.key = keys[id].priv;
        o.peer_keys = pk;
        o.n_peer_keys = np;
        o.checkpoint_interval = 4;
        o.on_event = on_event;
        o.on_event_arg = &apps[id];
        dsig_bft *b = NULL;
        if (dsig_bft_new(&b, c.node[id], &o) != DSIG_OK)
            fail_msg("dsig_bft_new %u: %s", id, dsig_last_error_detail());
        attach(&apps[id], b);
    }
    for (unsigned i = 0; i < 20; i++) {
        uint8_t op[64], key[2] = {'k', (uint8_t)('0' + i % 5)};
        size_t len = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, key, 2, (const uint8_t *)"v", 1);
        assert_int_equal(dsig_bft_submit(apps[5].b, op, len, NULL), DSIG_OK);
        /* No second submit here to see DSIG_E_WOULD_BLOCK: on a loaded machine the first request can be
         * answered before it (test_bft_wire checks the refusal on a hand-driven client). */
        wait_count(&apps[5], &apps[5].replies, i + 1, 60000);
    }
    /* every replica at the same state (the last ones may still be committing) */
    uint64_t until = fu_mono_ms() + 30000;
    uint8_t d1[32], d[32];
    uint64_t s1 = 0, s = 0;
    for (unsigned id = 2; id <= 4; id++) {
        do {
            assert_int_equal(dsig_bft_replica_state(apps[1].b, &s1, NULL, d1), DSIG_OK);
            assert_int_equal(dsig_bft_replica_state(apps[id].b, &s, NULL, d), DSIG_OK);
            if (s1 == 20 && s == 20)
                break;
            usleep(10000);
        } while (fu_mono_ms() < until);
        assert_int_equal(s, 20);
        assert_memory_equal(d1, d, 32);
    }
    dsig_bft_stats st;
    dsig_bft_stats_get(apps[2].b, &st);
    assert_int_equal(st.decided, 20);
    assert_true(st.checkpoints >= 4);
    assert_int_equal(dsig_bft_replica_state(apps[5].b, NULL, NULL, NULL), DSIG_E_STATE);
    detach_all(&c, apps, 5);
    for (unsigned id = 1; id <= 5; id++)
        fu_dsig_key_free(&keys[id]);
    fn_cluster_free(&c);
}

static void test_pbft_dsig(void **state)
{
    (void)state;
    replication(DSIG_BFT_SCHEME_DSIG);
}

static void test_pbft_ed25519_key(void **state)
{
    (void)state;
    replication(DSIG_BFT_SCHEME_KEY);
}

static void test_options(void **state)
{
    (void)state;
    fn_cluster c;
    static app apps[FN_MAX + 1];
    memset(apps, 0, sizeof apps);
    fn_cluster_init(&c, 5, NULL, 0x1E /* nodes 1..4 in the group, 5 not */, 0);
    fn_node_new(&c, 1, NULL);
    fn_node_new(&c, 5, NULL);
    uint64_t m4[4] = {1, 2, 3, 4}, m3[3] = {1, 2, 3}, rep[4] = {1, 1, 2, 3}, not_me[4] = {2, 3, 4, 5};
    dsig_bft_options o;
    dsig_bft *b = NULL;
    struct {
        const uint64_t *m;
        size_t n;
        int proto, scheme;
        const char *group;
        int want;
        uint64_t node;
    } cases[] = {
        {m3, 3, DSIG_BFT_CBC, DSIG_BFT_SCHEME_DSIG, FN_GROUP, DSIG_E_ARG, 1},   /* n < 4 */
        {rep, 4, DSIG_BFT_CBC, DSIG_BFT_SCHEME_DSIG, FN_GROUP, DSIG_E_ARG, 1},  /* a repeated member */
        {not_me, 4, DSIG_BFT_RBC, DSIG_BFT_SCHEME_DSIG, FN_GROUP, DSIG_E_ARG, 1}, /* not a member */
        {m4, 4, DSIG_BFT_CBC, DSIG_BFT_SCHEME_DSIG, NULL, DSIG_E_ARG, 1},      /* DSig without a group */
        {m4, 4, DSIG_BFT_CBC, DSIG_BFT_SCHEME_DSIG, FN_GROUP, DSIG_E_ARG, 5},  /* a node outside the group */
        {m4, 4, DSIG_BFT_CBC, DSIG_BFT_SCHEME_KEY, NULL, DSIG_E_ARG, 1},       /* key scheme without a key */
        {m4, 4, 9, DSIG_BFT_SCHEME_DSIG, FN_GROUP, DSIG_E_ARG, 1},             /* unknown protocol */
        {m4, 4, DSIG_BFT_CBC, 9, FN_GROUP, DSIG_E_ARG, 1},                     /* unknown scheme */
        {m4, 4, DSIG_BFT_REPLICA, DSIG_BFT_SCHEME_DSIG, FN_GROUP, DSIG_E_ARG, 1}, /* replica without clients */
        {m4, 4, DSIG_BFT_CLIENT, DSIG_BFT_SCHEME_DSIG, FN_GROUP, DSIG_E_ARG, 1},  /* a replica as client */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dsig_bft_options_default(&o);
        o.protocol = cases[i].proto;
        o.scheme = cases[i].scheme;
        o.members = cases[i].m;
        o.n_members = cases[i].n;
        o.group = cases[i].group;
        int rc = dsig_bft_new(&b, c.node[cases[i].node], &o);
        if (rc != cases[i].want)
            fail_msg("case %zu: %d (%s)", i, rc, dsig_last_error_detail());
        assert_true(strlen(dsig_last_error_detail()) > 0);
    }
    /* a broadcast member cannot submit, a replica cannot broadcast */
    dsig_bft_options_default(&o);
    o.protocol = DSIG_BFT_CBC;
    o.members = m4;
    o.n_members = 4;
    o.group = FN_GROUP;
    o.tick_ms = 0;
    assert_int_equal(dsig_bft_new(&b, c.node[1], &o), DSIG_OK);
    assert_int_equal(dsig_bft_submit(b, (const uint8_t *)"x", 1, NULL), DSIG_E_STATE);
    assert_int_equal(dsig_bft_broadcast(b, (const uint8_t *)"x", 0, NULL), DSIG_E_ARG);
    uint8_t big[DSIG_BFT_MAX_VALUE + 1] = {0};
    assert_int_equal(dsig_bft_broadcast(b, big, sizeof big, NULL), DSIG_E_ARG);
    assert_int_equal(dsig_bft_receive(b, 2, (const uint8_t *)"not a frame at all", 18), DSIG_E_ARG);
    assert_int_equal(dsig_bft_is_frame((const uint8_t *)"DBFT\x01\x11xxxxxxxx", 14), 1);
    assert_int_equal(dsig_bft_is_frame((const uint8_t *)"DBFT", 4), 0);
    assert_int_equal(dsig_bft_tick(b), DSIG_OK);
    dsig_bft_free(b);
    fn_cluster_free(&c);
}

int main(void)
{
    assert_int_equal(dsig_init(), DSIG_OK);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_cbc_threads),
        cmocka_unit_test(test_rbc_threads),
        cmocka_unit_test(test_pbft_dsig),
        cmocka_unit_test(test_pbft_ed25519_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
