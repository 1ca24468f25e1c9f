/*
 * tests/node/test_node_flood.c — per-peer bounds (docs/node.md "Per-peer bounds"): an authenticated
 * peer (it holds node 2's key) floods node 1 with thousands of forged BATCH frames. Node 1 checks at
 * most what the flooder's queue share and verification budget allow — root-signature checks are
 * counted, and bounded by peer_verify_queue + peer_verify_burst + peer_verify_rate · t / 65 — drops
 * the rest, and an honest member (node 3) of another group keeps its batches verified and acknowledged
 * and its signatures on the fast path. A second run gives the flooder all the budget it wants: only its
 * queue share (peer_verify_queue, far below the node's verify_queue) then turns frames away. Threads
 * (label "threads").
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "node/node_internal.h"
#include "node_raw.h"
#include "nodetest.h"
#include "testutil.h"

#define WAIT_MS 20000
#define FLOOD 3000
#define QUEUE 8
#define BURST 16
#define RATE 100

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* How node 1 bounds its peers. */
enum bounds { UNBOUNDED, BUDGET, QUEUE_SHARE };

static dsig_node *start(const dsig_node_config *cfg, uint64_t id, enum bounds bounded)
{
    char *j;
    dsig_key *k = nt_key((size_t)id - 1, &j);
    free(j);
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.pool_target = 256;
    o.heartbeat_ms = 200;
    o.backoff_max_ms = 200;
    if (bounded == BUDGET) {
        o.peer_verify_queue = QUEUE;
        o.peer_verify_burst = BURST;
        o.peer_verify_rate = RATE;
    } else if (bounded == QUEUE_SHARE) { /* 65 · FLOOD < burst: the budget never runs out */
        o.peer_verify_queue = QUEUE;
        o.peer_verify_burst = 1000000;
        o.peer_verify_rate = 1000000;
        o.verify_queue = 2 * FLOOD;
    }
    dsig_node *n = NULL;
    assert_int_equal(dsig_node_new(&n, cfg, id, k, &o), DSIG_OK);
    dsig_key_free(k);
    assert_int_equal(dsig_node_start(n), DSIG_OK);
    return n;
}


static void flood(enum bounds bounds)
{
    unsigned ports[3] = {nt_free_port(), nt_free_port(), nt_free_port()};
    /* groups sorted by name: g1 = index 0 (nodes 1, 3), g2 = index 1 (nodes 1, 2) */
    static const char *const groups[] = {"[\"g1\",\"g2\"]", "[\"g2\"]", "[\"g1\"]"};
    char *txt = nt_config(3, ports, groups, "{\"g1\":{},\"g2\":{}}");
    dsig_node_config *cfg;
    assert_int_equal(dsig_node_config_parse(txt, strlen(txt), &cfg), DSIG_OK);
    dsig_node *n1 = start(cfg, 1, bounds), *n3 = start(cfg, 3, UNBOUNDED);

    /* A genuine batch message of node 2 in g2, its root signature then broken. */
    dsig_key *k2 = nt_private(1), *pub1 = nt_public(0);
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.threads = 0;
    so.signer_id = 2;
    so.outbox = 1;
    so.pool_target = 128;
    so.first_seq = (UINT64_C(1) << NODE_SEQ_GROUP_SHIFT) | 12345;
    dsig_hybrid_signer *s2;
    assert_int_equal(dsig_hybrid_signer_new(&s2, k2, NULL, &so), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_refill(s2, 1), DSIG_OK);
    uint8_t bm[8192];
    size_t bl;
    assert_int_equal(dsig_hybrid_signer_next_batch(s2, bm, sizeof bm, &bl), DSIG_OK);
    dsig_hybrid_signer_free(s2);
    bm[bl - 3] ^= 0x20;
    uint8_t *frame = malloc(NODE_BATCH_HDR_MAX + bl);
    size_t pl = node_batch_prefix(frame, 2, "g2", 2);
    memcpy(frame + pl, bm, bl);

    /* The flooder authenticates as node 2 (it has the key) and sends FLOOD forged batches. */
    int fd = nr_connect(ports[0]);
    assert_true(fd >= 0);
    assert_int_equal(nr_handshake(fd, 2, k2, 1, pub1), 0);
    dsig_node_stats st;
    for (int i = 0; i < 300; i++) {
        dsig_node_stats_get(n1, &st);
        if (st.auth_ok >= 1)
            break;
        nt_nap(10);
    }
    double t0 = now_s();
    for (int i = 0; i < FLOOD; i++)
        assert_int_equal(nr_frame(fd, DSIG_NODE_T_BATCH, frame, pl + bl), 0);
    /* Meanwhile the honest node 3 is warmed up in g1 through node 1. */
    assert_int_equal(dsig_node_wait_ready(n3, "g1", 256, WAIT_MS), DSIG_OK);
    for (int i = 0; i < 2000; i++) {
        dsig_node_stats_get(n1, &st);
        if (st.batches_received >= FLOOD + 2 &&
            st.drop_bad_signature + st.drop_rate_limited + st.drop_queue_full >= FLOOD)
            break;
        nt_nap(10);
    }
    double t = now_s() - t0;
    dsig_node_stats_get(n1, &st);
    uint64_t dropped = st.drop_rate_limited + st.drop_queue_full;
    print_message("flood of %d forged batches in %.2f s: %llu checked, %llu rate-limited, %llu over the queue "
                  "share; honest batches verified %llu\n",
                  FLOOD, t, (unsigned long long)st.drop_bad_signature, (unsigned long long)st.drop_rate_limited,
                  (unsigned long long)st.drop_queue_full, (unsigned long long)st.batches_verified);
    assert_int_equal(st.drop_bad_signature + dropped, FLOOD);
    if (bounds == BUDGET) {
        double bound = QUEUE + BURST + RATE * t / (1 + 64) + 2;
        if ((double)st.drop_bad_signature > bound)
            fail_msg("%llu forged batches checked, bound %.1f", (unsigned long long)st.drop_bad_signature, bound);
        assert_true(st.drop_rate_limited > 0);
    } else {
        /* Frames arrive far faster than root signatures are checked (µs against ~60 µs): the node's
         * queue of 2 · FLOOD would take them all, the flooder's share of QUEUE does not. */
        assert_int_equal(st.drop_rate_limited, 0);
        assert_true(st.drop_queue_full > 0);
    }
    assert_true(st.batches_verified >= 2); /* node 3's batches */

    /* Node 3 is served: its signatures are on node 1's fast path. */
    static const uint8_t msg[] = "honest";
    uint8_t sig[2000];
    size_t sl;
    assert_int_equal(dsig_node_sign(n3, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_node_can_verify_fast(n1, 3, sig, sl), 1);
    assert_int_equal(dsig_node_verify(n1, 3, msg, sizeof msg, sig, sl), DSIG_OK);

    close(fd);
    free(frame);
    dsig_key_free(k2);
    dsig_key_free(pub1);
    dsig_node_free(n1);
    dsig_node_free(n3);
    dsig_node_config_free(cfg);
    free(txt);
}

static void test_flooding_peer(void **state)
{
    (void)state;
    flood(BUDGET);
}

static void test_flooder_queue_share(void **state)
{
    (void)state;
    flood(QUEUE_SHARE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flooding_peer),
        cmocka_unit_test(test_flooder_queue_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
