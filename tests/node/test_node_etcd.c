/*
 * tests/node/test_node_etcd.c — node-plane membership through a real etcd cluster (run inside
 * tests/coord/etcd_cluster.sh: DSIG_ETCD_ENDPOINTS, DSIG_ETCD_CTL). Every node's configuration holds
 * only itself: the others come from etcd. Two nodes find each other and reach the fast path; a third
 * joins and is verified on the fast path; malformed, mismatched and conflicting entries are ignored;
 * an etcd majority outage keeps the membership; a node whose entry disappears registers again; a
 * clean leave (lease revoked) and a killed node
 * (lease expired) are removed, and the fast path between the others goes on.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coord/etcd.h"
#include "nodetest.h"
#include "testutil.h"

#define WAIT_MS 20000
#define TTL_S 3

static const char *g_eps[8];
static size_t g_n;
static char g_prefix[96];

/* Node `id` (key nt_key(id-1)) on `port`, its configuration holding itself only, started, following
 * etcd. */
static dsig_node *start_node(uint64_t id, unsigned port, dsig_node_etcd **m)
{
    unsigned ports[4] = {0};
    const char *groups[4] = {"[]", "[]", "[]", "[]"};
    ports[id - 1] = port;
    groups[id - 1] = "[\"g1\"]";
    /* nt_config writes nodes 1..id: keep only node id's entry */
    char *all = nt_config((size_t)id, ports, groups, "{\"g1\":{\"params\":\"wots4-haraka-b128\"}}");
    char head[64];
    snprintf(head, sizeof head, "{\"id\":%" PRIu64 ",", id);
    char *mine = strstr(all, head), *tail = strstr(all, "],\"groups\"");
    assert_non_null(mine);
    assert_non_null(tail);
    char txt[8192];
    snprintf(txt, sizeof txt, "{\"nodes\":[%.*s%s", (int)(tail - mine), mine, tail);
    free(all);
    dsig_node_config *cfg;
    assert_int_equal(dsig_node_config_parse(txt, strlen(txt), &cfg), DSIG_OK);
    dsig_key *k = nt_private((size_t)id - 1);
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.pool_target = 256;
    o.heartbeat_ms = 200;
    o.backoff_max_ms = 200;
    dsig_node *n = NULL;
    assert_int_equal(dsig_node_new(&n, cfg, id, k, &o), DSIG_OK);
    dsig_key_free(k);
    dsig_node_config_free(cfg);
    assert_int_equal(dsig_node_start(n), DSIG_OK);
    dsig_node_etcd_options eo;
    dsig_node_etcd_options_default(&eo);
    eo.endpoints = g_eps;
    eo.n_endpoints = g_n;
    eo.prefix = g_prefix;
    eo.lease_ttl_s = TTL_S;
    int rc = dsig_node_etcd_start(m, n, &eo);
    if (rc)
        fprintf(stderr, "%s\n", dsig_last_error_detail());
    assert_int_equal(rc, DSIG_OK);
    return n;
}

/* Wait until n has `count` members. */
static void wait_members(dsig_node *n, size_t count)
{
    for (int i = 0; i < 1000 && dsig_node_member_ids(n, NULL, 0) != count; i++)
        nt_nap(20);
    assert_int_equal(dsig_node_member_ids(n, NULL, 0), count);
}

/* Sign on s (id sid): v verifies it on the fast path. */
static void fast(dsig_node *s, uint64_t sid, dsig_node *v)
{
    static const uint8_t msg[4] = "etcd";
    uint8_t sig[2000];
    size_t sl;
    assert_int_equal(dsig_node_sign(s, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_node_can_verify_fast(v, sid, sig, sl), 1);
    assert_int_equal(dsig_node_verify(v, sid, msg, sizeof msg, sig, sl), DSIG_OK);
}

/* Run an etcd_cluster.sh ctl command (stop / start / wait member i). */
static void ctl(const char *what, int i)
{
    const char *c = getenv("DSIG_ETCD_CTL");
    assert_non_null(c);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s %d", c, what, i);
    assert_int_equal(system(cmd), 0);
}

static void test_join_leave(void **state)
{
    (void)state;
    unsigned p1 = nt_free_port(), p2 = nt_free_port(), p3 = nt_free_port();
    dsig_node_etcd *m1, *m2, *m3;
    dsig_node *n1 = start_node(1, p1, &m1), *n2 = start_node(2, p2, &m2);
    wait_members(n1, 2);
    wait_members(n2, 2);
    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n2, "g1", 256, WAIT_MS), DSIG_OK);
    fast(n1, 1, n2);
    fast(n2, 2, n1);

    /* a third joins: connected, batches both ways, the fast path */
    dsig_node *n3 = start_node(3, p3, &m3);
    wait_members(n1, 3);
    wait_members(n2, 3);
    wait_members(n3, 3);
    for (dsig_node **n = (dsig_node *[]){n1, n2, n3, NULL}; *n; n++)
        assert_int_equal(dsig_node_wait_ready(*n, "g1", 256, WAIT_MS), DSIG_OK);
    fast(n3, 3, n1);
    fast(n3, 3, n2);
    fast(n1, 1, n3);

    /* entries that must be ignored: not JSON, an id that is not the key's, node 1's address under
     * id 4, a key that is not nodes/<id> */
    coord_etcd_config ec = {.endpoints = g_eps, .n_endpoints = g_n};
    coord_etcd *e;
    assert_int_equal(coord_etcd_new(&e, &ec), DSIG_OK);
    char key[160], val[1024];
    dsig_node_etcd_stats st0, st;
    dsig_node_etcd_stats_get(m1, &st0);
    snprintf(key, sizeof key, "%snodes/9", g_prefix);
    assert_int_equal(coord_etcd_put(e, key, "{bad", 4, 0, NULL), DSIG_OK);
    snprintf(key, sizeof key, "%snodes/8", g_prefix);
    snprintf(val, sizeof val, "{\"id\":7}");
    assert_int_equal(coord_etcd_put(e, key, val, strlen(val), 0, NULL), DSIG_OK);
    char *jwk;
    dsig_key *k4 = nt_key(3, &jwk);
    dsig_key_free(k4);
    snprintf(key, sizeof key, "%snodes/4", g_prefix);
    snprintf(val, sizeof val, "{\"id\":4,\"address\":\"tcp:127.0.0.1:%u\",\"public_key\":%s,\"groups\":[\"g1\"]}",
             p1, jwk);
    free(jwk);
    assert_int_equal(coord_etcd_put(e, key, val, strlen(val), 0, NULL), DSIG_OK);
    snprintf(key, sizeof key, "%snodes/x1", g_prefix);
    assert_int_equal(coord_etcd_put(e, key, "{}", 2, 0, NULL), DSIG_OK);
    for (int i = 0; i < 500; i++) {
        dsig_node_etcd_stats_get(m1, &st);
        if (st.ignored >= st0.ignored + 4)
            break;
        nt_nap(10);
    }
    assert_true(st.ignored >= st0.ignored + 4);
    assert_int_equal(dsig_node_member_ids(n1, NULL, 0), 3);
    snprintf(key, sizeof key, "%snodes/", g_prefix);
    uint64_t gone;
    for (const char *k = "9\0" "8\0" "4\0" "x1\0"; *k; k += strlen(k) + 1) {
        snprintf(key, sizeof key, "%snodes/%s", g_prefix, k);
        assert_int_equal(coord_etcd_delete(e, key, 0, &gone), DSIG_OK);
    }
    coord_etcd_free(e);

    /* an etcd majority outage (shorter than the lease): the membership stays, the plane goes on */
    ctl("stop", 0);
    ctl("stop", 1);
    nt_nap(1000);
    assert_int_equal(dsig_node_member_ids(n1, NULL, 0), 3);
    fast(n3, 3, n1);
    fast(n1, 1, n2);
    ctl("start", 0);
    ctl("start", 1);
    ctl("wait", 0);
    wait_members(n1, 3); /* a lease that expired meanwhile is granted again and the entry put */
    wait_members(n2, 3);

    /* node 2's entry deleted behind its back (as when its lease expired): the others drop it, it
     * registers again under a fresh lease and they take it back; the fast path resumes */
    dsig_node_etcd_stats s1, s2;
    dsig_node_etcd_stats_get(m1, &s1);
    dsig_node_etcd_stats_get(m2, &s2);
    assert_int_equal(coord_etcd_new(&e, &ec), DSIG_OK);
    snprintf(key, sizeof key, "%snodes/2", g_prefix);
    assert_int_equal(coord_etcd_delete(e, key, 0, &gone), DSIG_OK);
    assert_int_equal(gone, 1);
    coord_etcd_free(e);
    for (int i = 0; i < 500; i++) {
        dsig_node_etcd_stats_get(m1, &st);
        if (st.joined > s1.joined && st.left > s1.left)
            break;
        nt_nap(20);
    }
    assert_true(st.left > s1.left && st.joined > s1.joined);
    dsig_node_etcd_stats_get(m2, &st);
    assert_int_equal(st.registrations, s2.registrations + 1);
    wait_members(n1, 3);
    wait_members(n3, 3);
    assert_int_equal(dsig_node_wait_ready(n2, "g1", 256, WAIT_MS), DSIG_OK);
    fast(n2, 2, n1);
    fast(n2, 2, n3);

    /* node 3 leaves cleanly (its lease revoked): gone at once; 1 and 2 go on fast */
    dsig_node_etcd_stop(m3, 1);
    dsig_node_free(n3);
    wait_members(n1, 2);
    wait_members(n2, 2);
    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, WAIT_MS), DSIG_OK);
    fast(n1, 1, n2);
    fast(n2, 2, n1);

    /* node 3 comes back, then dies without a word: its lease expires and it is removed */
    n3 = start_node(3, p3, &m3);
    wait_members(n1, 3);
    assert_int_equal(dsig_node_wait_ready(n3, "g1", 256, WAIT_MS), DSIG_OK);
    fast(n3, 3, n1);
    int64_t t0 = (int64_t)time(NULL);
    dsig_node_etcd_stop(m3, 0); /* no revoke, no more keep-alive: like a killed process */
    dsig_node_free(n3);
    wait_members(n1, 2);
    wait_members(n2, 2);
    assert_true((int64_t)time(NULL) - t0 <= TTL_S + 3);
    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n2, "g1", 256, WAIT_MS), DSIG_OK);
    fast(n1, 1, n2);
    fast(n2, 2, n1);
    dsig_node_etcd_stats_get(m1, &st);
    print_message("node 1: %" PRIu64 " joined, %" PRIu64 " left, %" PRIu64 " ignored, %" PRIu64
                  " registrations, %" PRIu64 " unavailable\n", st.joined, st.left, st.ignored,
                  st.registrations, st.unavailable);
    assert_true(st.joined >= 3 && st.left >= 2);

    dsig_node_etcd_stop(m2, 1);
    dsig_node_etcd_stop(m1, 1);
    dsig_node_free(n2);
    dsig_node_free(n1);
}

int main(void)
{
    const char *eps = getenv("DSIG_ETCD_ENDPOINTS");
    if (!eps) {
        fprintf(stderr, "run inside tests/coord/etcd_cluster.sh\n");
        return 77;
    }
    char *copy = strdup(eps), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && g_n < 8; t = strtok_r(NULL, ",", &save))
        g_eps[g_n++] = t;
    snprintf(g_prefix, sizeof g_prefix, "/dsig-node-etcd-test/%ld/", (long)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_leave),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(copy);
    return rc;
}
