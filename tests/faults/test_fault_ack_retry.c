/*
 * tests/faults/test_fault_ack_retry.c — a BATCH_ACK refused by a full send queue is retried: a raw
 * peer plays a configured signer (the test holds its key), authenticates, sends a
 * genuine batch and then replays it until the verifier's acknowledgements fill the socket buffers and
 * the transport's send queue on that connection (the peer reads nothing). Two more genuine batches are
 * then verified while the queue is full, so their ACKs are refused: they must be deferred (counted),
 * not lost, and arrive once the peer reads again — without any reconnection or re-sync.
 * Threads (label "threads").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "fault_node.h"
#include "net/net.h"
#include "node/node_internal.h"
#include "node_raw.h"
#include "testutil.h"

#define VERIFIER 1u
#define PLAYED 2u

/* Standalone signer for the played member (its batch messages go out by hand). */
static dsig_hybrid_signer *played_signer(const dsig_key *k, uint64_t first_seq)
{
    dsig_hybrid_signer_options o;
    dsig_hybrid_signer_options_default(&o);
    o.threads = 0;
    o.pool_target = 128;
    o.outbox = 8;
    o.signer_id = PLAYED;
    o.first_seq = first_seq;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &o), DSIG_OK);
    return s;
}

/* A BATCH payload of the played member in FN_GROUP. */
static uint8_t *batch_payload(dsig_hybrid_signer *s, size_t *len, uint64_t *seq)
{
    assert_int_equal(dsig_hybrid_signer_refill(s, 1), DSIG_OK);
    size_t cap = dsig_hybrid_params_batch_msg_bytes(dsig_hybrid_signer_params(s));
    uint8_t *p = malloc(NODE_BATCH_HDR_MAX + cap);
    assert_non_null(p);
    size_t pl = node_batch_prefix(p, PLAYED, FN_GROUP, strlen(FN_GROUP)), ml;
    assert_int_equal(dsig_hybrid_signer_next_batch(s, p + pl, cap, &ml), DSIG_OK);
    *len = pl + ml;
    *seq = node_batch_msg_seq(p + pl);
    return p;
}

static void test_ack_retry(void **state)
{
    (void)state;
    fn_cluster c;
    fn_cluster_init(&c, 2, NULL, 0, 0);
    dsig_node_options o;
    fn_options(&o);
    o.heartbeat_ms = 0; /* a peer that reads nothing must not be timed out: this is back-pressure */
    fn_node_start(&c, VERIFIER, &o);

    int fd = fu_connect(c.addr[VERIFIER]);
    assert_true(fd >= 0);
    assert_int_equal(nr_handshake(fd, PLAYED, c.key[PLAYED].priv, VERIFIER, c.key[VERIFIER].pub), 0);

    struct timeval tv;
    gettimeofday(&tv, NULL);
    dsig_hybrid_signer *s = played_signer(c.key[PLAYED].priv, (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec);
    size_t la, lb, lc;
    uint64_t sa, sb, sc;
    uint8_t *a = batch_payload(s, &la, &sa), *b = batch_payload(s, &lb, &sb), *cc = batch_payload(s, &lc, &sc);
    dsig_node *v = c.node[VERIFIER];
    dsig_node_stats st;

    /* A, then its replays (each acknowledged again) until an ACK is refused and deferred. */
    assert_int_equal(nr_frame(fd, DSIG_NODE_T_BATCH, a, la), 0);
    FU_WAIT_FOR((dsig_node_stats_get(v, &st), st.batches_verified == 1), 10000);
    unsigned replays = 0;
    for (;;) {
        for (int i = 0; i < 64; i++, replays++)
            assert_int_equal(nr_frame(fd, DSIG_NODE_T_BATCH, a, la), 0);
        dsig_node_stats_get(v, &st);
        if (st.acks_deferred)
            break;
        assert_true(replays < 200000);
    }
    /* B and C are verified while the queue is still full: their ACKs are refused and deferred. */
    assert_int_equal(nr_frame(fd, DSIG_NODE_T_BATCH, b, lb), 0);
    assert_int_equal(nr_frame(fd, DSIG_NODE_T_BATCH, cc, lc), 0);
    FU_WAIT_FOR((dsig_node_stats_get(v, &st), st.batches_verified == 3), 10000);
    FU_WAIT_FOR((dsig_node_stats_get(v, &st), st.acks_deferred >= 3), 10000);
    dsig_node_stats_get(v, &st);
    print_message("ack retry: %u replays; deferred %llu, dropped %llu, queue-full drops of batches %llu\n",
                  replays, (unsigned long long)st.acks_deferred, (unsigned long long)st.acks_dropped,
                  (unsigned long long)st.drop_queue_full);
    assert_int_equal(st.acks_dropped, 0);

    /* Read again: the deferred ACKs of B and C arrive on the same connection. */
    int got_b = 0, got_c = 0;
    uint64_t acks = 0;
    uint8_t *buf = malloc(1 << 16);
    assert_non_null(buf);
    uint64_t dl = fu_mono_ms() + 15000;
    while (!(got_b && got_c) && fu_mono_ms() < dl) {
        size_t len;
        int t = nr_read_frame(fd, buf, 1 << 16, &len, 2000);
        assert_true(t >= 0);
        if (t != DSIG_NODE_T_BATCH_ACK)
            continue;
        uint64_t signer, seq;
        const char *g;
        size_t gl;
        assert_int_equal(node_ack_parse(buf, len, &signer, &seq, &g, &gl), DSIG_OK);
        assert_int_equal(signer, PLAYED);
        acks++;
        got_b |= seq == sb;
        got_c |= seq == sc;
    }
    assert_true(got_b && got_c);
    dsig_node_stats_get(v, &st);
    assert_true(st.acks_retried >= 2);
    assert_int_equal(st.reconnects, 0);
    print_message("ack retry: %llu ACKs read; retried %llu\n", (unsigned long long)acks,
                  (unsigned long long)st.acks_retried);

    free(buf);
    free(a);
    free(b);
    free(cc);
    close(fd);
    dsig_hybrid_signer_free(s);
    fn_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ack_retry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
