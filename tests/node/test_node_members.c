/*
 * tests/node/test_node_members.c — membership at run time (dsig_node_member_add / _remove): a node
 * that joins gets connections and batches and is verified on the fast path; one that leaves is
 * disconnected, refused and no longer holds dsig_node_wait_ready; its slot is reused by the next;
 * bad and conflicting entries are refused with the parser's codes; and add / remove race sign,
 * verify and the plane threads (run under TSan: label threads).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nodetest.h"
#include "testutil.h"

#define WAIT_MS 20000

/* Monotonic milliseconds. */
static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The entry of node `id` with key nt_key(key) on port `port` in the groups `groups` (JSON array). */
static char *entry_key(uint64_t id, size_t key, unsigned port, const char *groups)
{
    char *jwk;
    dsig_key *k = nt_key(key, &jwk);
    dsig_key_free(k);
    size_t cap = strlen(jwk) + 256;
    char *s = malloc(cap);
    assert_non_null(s);
    snprintf(s, cap, "{\"id\":%llu,\"address\":\"tcp:127.0.0.1:%u\",\"public_key\":%s,\"groups\":%s}",
             (unsigned long long)id, port, jwk, groups);
    free(jwk);
    return s;
}

/* The entry of node `id` (key nt_key(id-1)). */
static char *entry(uint64_t id, unsigned port, const char *groups)
{
    return entry_key(id, (size_t)id - 1, port, groups);
}

/* A started node `id` of cfg with small pools and quick reconnection. */
static dsig_node *start_node(const dsig_node_config *cfg, uint64_t id)
{
    dsig_key *k = nt_private((size_t)id - 1);
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.pool_target = 256;
    o.heartbeat_ms = 200;
    o.backoff_max_ms = 200;
    dsig_node *n = NULL;
    assert_int_equal(dsig_node_new(&n, cfg, id, k, &o), DSIG_OK);
    dsig_key_free(k);
    assert_int_equal(dsig_node_start(n), DSIG_OK);
    return n;
}

/* Sign on s (id sid) in g1; 1 if v verifies it on the fast path, 0 if on the slow path (it must
 * verify either way). */
static int fast_at(dsig_node *s, uint64_t sid, dsig_node *v)
{
    static const uint8_t msg[5] = "hello";
    uint8_t sig[2000];
    size_t sl;
    assert_int_equal(dsig_node_sign(s, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
    int fast = dsig_node_can_verify_fast(v, sid, sig, sl);
    dsig_node_stats a, b;
    dsig_node_stats_get(v, &a);
    assert_int_equal(dsig_node_verify(v, sid, msg, sizeof msg, sig, sl), DSIG_OK);
    dsig_node_stats_get(v, &b);
    assert_int_equal(b.verify_fast - a.verify_fast, (uint64_t)fast);
    return fast;
}

/* Nodes 1 and 2 know each other from their configuration; node 3 knows all three. 3 joins 1 and 2
 * at run time, leaves 1, joins it again; a never-started 4 takes 3's old slot on 2 and leaves. */
static void test_join_leave(void **state)
{
    (void)state;
    unsigned ports[3] = {nt_free_port(), nt_free_port(), nt_free_port()};
    static const char *const groups[] = {"[\"g1\"]", "[\"g1\"]", "[\"g1\"]"};
    const char *gobj = "{\"g1\":{\"params\":\"wots4-haraka-b128\"},\"g2\":{}}";
    char *t12 = nt_config(2, ports, groups, gobj), *t123 = nt_config(3, ports, groups, gobj);
    dsig_node_config *c12, *c123;
    assert_int_equal(dsig_node_config_parse(t12, strlen(t12), &c12), DSIG_E_FORMAT); /* g2 empty */
    free(t12);
    free(t123);
    gobj = "{\"g1\":{\"params\":\"wots4-haraka-b128\"}}";
    t12 = nt_config(2, ports, groups, gobj);
    t123 = nt_config(3, ports, groups, gobj);
    assert_int_equal(dsig_node_config_parse(t12, strlen(t12), &c12), DSIG_OK);
    assert_int_equal(dsig_node_config_parse(t123, strlen(t123), &c123), DSIG_OK);
    dsig_node *n1 = start_node(c12, 1), *n2 = start_node(c12, 2), *n3 = start_node(c123, 3);
    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(fast_at(n1, 1, n2), 1);

    /* 3 is unknown to 1 and 2: its signatures are refused there */
    uint8_t sig[2000];
    size_t sl;
    assert_int_equal(dsig_node_sign(n3, "g1", (const uint8_t *)"x", 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_node_verify(n1, 3, (const uint8_t *)"x", 1, sig, sl), DSIG_E_UNKNOWN_SIGNER);

    /* bad and conflicting entries: the parser's codes, nothing changes */
    char *e3 = entry(3, ports[2], "[\"g1\"]");
    char *dup_addr = entry(4, ports[0], "[\"g1\"]");
    char *undef = entry(4, nt_free_port(), "[\"g9\"]");
    char *dup_key = entry_key(4, 2, nt_free_port(), "[\"g1\"]"); /* node 3's key under id 4 */
    assert_int_equal(dsig_node_member_add(n1, dup_addr, strlen(dup_addr)), DSIG_E_FORMAT);
    assert_int_equal(dsig_node_member_add(n1, undef, strlen(undef)), DSIG_E_FORMAT);
    assert_int_equal(dsig_node_member_add(n1, "{\"id\":4}", 8), DSIG_E_JSON);
    assert_int_equal(dsig_node_member_add(n1, "{\"id\":", 6), DSIG_E_JSON);
    assert_int_equal(dsig_node_member_remove(n1, 1), DSIG_E_ARG);
    assert_int_equal(dsig_node_member_remove(n1, 42), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_node_member_ids(n1, NULL, 0), 2);

    /* 3 joins 1 and 2: connections, batches both ways, the fast path everywhere */
    assert_int_equal(dsig_node_member_add(n1, e3, strlen(e3)), DSIG_OK);
    assert_int_equal(dsig_node_member_add(n1, e3, strlen(e3)), DSIG_E_STATE);
    assert_int_equal(dsig_node_member_add(n1, dup_key, strlen(dup_key)), DSIG_E_KEY);
    assert_int_equal(dsig_node_member_add(n2, e3, strlen(e3)), DSIG_OK);
    uint64_t ids[4];
    assert_int_equal(dsig_node_member_ids(n1, ids, 4), 3);
    assert_true(ids[0] == 1 && ids[1] == 2 && ids[2] == 3);
    for (dsig_node **n = (dsig_node *[]){n1, n2, n3, NULL}; *n; n++)
        assert_int_equal(dsig_node_wait_ready(*n, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(fast_at(n3, 3, n1), 1);
    assert_int_equal(fast_at(n3, 3, n2), 1);
    assert_int_equal(fast_at(n1, 1, n3), 1);
    assert_int_equal(fast_at(n2, 2, n3), 1);
    dsig_key *k3;
    assert_int_equal(dsig_node_member_public_key(n1, 3, &k3), DSIG_OK);
    dsig_key_free(k3);

    /* 3 leaves 1: disconnected, refused, its cached batches gone; 1 and 2 go on fast */
    assert_int_equal(dsig_node_member_remove(n1, 3), DSIG_OK);
    assert_int_equal(dsig_node_member_public_key(n1, 3, &k3), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_node_peer_up(n1, 3), 0);
    assert_int_equal(dsig_node_sign(n3, "g1", (const uint8_t *)"y", 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_node_can_verify_fast(n1, 3, sig, sl), 0);
    assert_int_equal(dsig_node_verify(n1, 3, (const uint8_t *)"y", 1, sig, sl), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, WAIT_MS), DSIG_OK); /* 3 is not waited for */
    assert_int_equal(fast_at(n1, 1, n2), 1);
    assert_int_equal(fast_at(n2, 2, n1), 1);
    dsig_node_stats st;
    for (int i = 0; i < 300; i++) { /* 3 keeps knocking: 1 refuses it as unknown */
        dsig_node_stats_get(n1, &st);
        if (st.drop_unknown_id > 0)
            break;
        nt_nap(10);
    }
    assert_true(st.drop_unknown_id > 0);

    /* 3 joins 1 again: the fast path resumes both ways */
    assert_int_equal(dsig_node_member_add(n1, e3, strlen(e3)), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n3, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(fast_at(n3, 3, n1), 1);
    assert_int_equal(fast_at(n1, 1, n3), 1);

    /* on 2: 3 leaves and 4 (never started) takes its slot: 2 waits for 4's ACKs until 4 leaves */
    char *e4 = entry(4, nt_free_port(), "[\"g1\"]");
    assert_int_equal(dsig_node_member_remove(n2, 3), DSIG_OK);
    assert_int_equal(dsig_node_member_add(n2, e4, strlen(e4)), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n2, "g1", 256, 300), DSIG_E_WOULD_BLOCK);
    assert_int_equal(dsig_node_member_remove(n2, 4), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n2, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(fast_at(n2, 2, n1), 1);
    dsig_node_stats_get(n2, &st);
    assert_int_equal(st.drop_bad_signature + st.drop_malformed, 0);

    dsig_node_free(n3);
    dsig_node_free(n2);
    dsig_node_free(n1);
    dsig_node_config_free(c12);
    dsig_node_config_free(c123);
    free(t12);
    free(t123);
    free(e3);
    free(e4);
    free(dup_addr);
    free(dup_key);
    free(undef);
}

struct churn {
    dsig_node *n;
    const char *e3;
    _Atomic int stop;
    int rounds;
};

/* Add and remove node 3 on one node as fast as it goes. */
static void *churn_main(void *arg)
{
    struct churn *c = arg;
    while (!atomic_load(&c->stop)) {
        assert_int_equal(dsig_node_member_add(c->n, c->e3, strlen(c->e3)), DSIG_OK);
        nt_nap(1);
        assert_int_equal(dsig_node_member_remove(c->n, 3), DSIG_OK);
        c->rounds++;
    }
    return NULL;
}

/* add / remove race the plane, workers, signers, sign and verify: every signature of 1 and 2 still
 * verifies, 3's verifies or is refused as unknown, never anything else. */
static void test_churn(void **state)
{
    (void)state;
    unsigned ports[3] = {nt_free_port(), nt_free_port(), nt_free_port()};
    static const char *const groups[] = {"[\"g1\"]", "[\"g1\"]", "[\"g1\"]"};
    const char *gobj = "{\"g1\":{\"params\":\"wots4-haraka-b128\"}}";
    char *t12 = nt_config(2, ports, groups, gobj), *t123 = nt_config(3, ports, groups, gobj);
    dsig_node_config *c12, *c123;
    assert_int_equal(dsig_node_config_parse(t12, strlen(t12), &c12), DSIG_OK);
    assert_int_equal(dsig_node_config_parse(t123, strlen(t123), &c123), DSIG_OK);
    dsig_node *n1 = start_node(c12, 1), *n2 = start_node(c12, 2), *n3 = start_node(c123, 3);
    char *e3 = entry(3, ports[2], "[\"g1\"]");
    assert_int_equal(dsig_node_member_add(n2, e3, strlen(e3)), DSIG_OK);
    struct churn c = {.n = n1, .e3 = e3};
    atomic_init(&c.stop, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, churn_main, &c), 0);
    int64_t end = now_ms() + 1500;
    unsigned ok3 = 0, unknown3 = 0;
    while (now_ms() < end) {
        static const uint8_t msg[3] = "abc";
        uint8_t sig[2000];
        size_t sl;
        assert_int_equal(dsig_node_sign(n2, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(dsig_node_verify(n1, 2, msg, sizeof msg, sig, sl), DSIG_OK);
        assert_int_equal(dsig_node_sign(n3, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
        int rc = dsig_node_verify(n1, 3, msg, sizeof msg, sig, sl);
        assert_true(rc == DSIG_OK || rc == DSIG_E_UNKNOWN_SIGNER);
        ok3 += rc == DSIG_OK;
        unknown3 += rc == DSIG_E_UNKNOWN_SIGNER;
        (void)dsig_node_send_app(n1, 3, "x", 1);
        (void)dsig_node_peer_up(n1, 3);
        dsig_node_stats st;
        dsig_node_stats_get(n1, &st);
    }
    atomic_store(&c.stop, 1);
    pthread_join(th, NULL);
    print_message("churn: %d add/remove rounds; node 3's signatures: %u verified, %u refused\n", c.rounds,
                  ok3, unknown3);
    assert_true(c.rounds > 10);
    /* settled: 3 joins for good and the fast path comes back */
    assert_int_equal(dsig_node_member_add(n1, e3, strlen(e3)), DSIG_OK);
    for (dsig_node **n = (dsig_node *[]){n1, n2, n3, NULL}; *n; n++)
        assert_int_equal(dsig_node_wait_ready(*n, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(fast_at(n3, 3, n1), 1);
    assert_int_equal(fast_at(n2, 2, n1), 1);
    dsig_node_free(n3);
    dsig_node_free(n2);
    dsig_node_free(n1);
    dsig_node_config_free(c12);
    dsig_node_config_free(c123);
    free(t12);
    free(t123);
    free(e3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_leave),
        cmocka_unit_test(test_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
