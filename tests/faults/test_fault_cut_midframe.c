/*
 * tests/faults/test_fault_cut_midframe.c — the fault "a connection cut mid-frame", through a node:
 * the signer reaches the verifier through a frame-aware proxy (tests/faults/fault_util.c) that forwards
 * bytes and, when armed, forwards a BATCH frame only up to a chosen payload byte and closes both
 * sockets. Cuts right after the header, after 1 byte, in the middle and one byte before the end; during
 * the initial sync and later under signing load. The partial batch must never be accepted (no bad root
 * signature, no equivocation), the signer must reconnect and re-send, and the verifier must return to
 * the fast path. Corrupted signatures are rejected after each cut. Threads (label "threads").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_node.h"
#include "testutil.h"

#define SIGNER 1u
#define VERIFIER 2u
#define BYSTANDER 3u
#define BATCH_MIN 4000u /* a BATCH frame's payload (a batch message is 4173 B); HELLO/ACK/PING are small */

/* Sign one message and check the fast path at the verifier plus the forgery battery. */
static void check_fast(fn_cluster *c, const char *msg)
{
    size_t len;
    uint8_t *sig = fn_sign(c->node[SIGNER], msg, &len);
    fn_wait_fast(c->node[VERIFIER], SIGNER, sig, len, 15000);
    fn_check_no_forgery(c->node[VERIFIER], SIGNER, BYSTANDER, msg, sig, len);
    free(sig);
}

static void test_cut_midframe(void **state)
{
    (void)state;
    fn_cluster c;
    fn_cluster_init(&c, 3, NULL, 1u << SIGNER | 1u << VERIFIER, 1u << VERIFIER);
    fu_proxy *px = fu_proxy_start(c.addr[VERIFIER], c.listen[VERIFIER]);

    /* Cut 1: the second batch of the initial sync, in its middle. */
    fu_proxy_cut_midframe(px, 1, BATCH_MIN, FU_CUT_HALF);
    fn_node_start(&c, VERIFIER, NULL);
    fn_node_start(&c, SIGNER, NULL);
    FU_WAIT_FOR(fu_proxy_cuts(px) == 1, 15000);
    fn_wait_ready(&c, SIGNER, 128, 20000);
    check_fast(&c, "after a cut during the initial sync");

    /* Later cuts under load: arm, then sign past a batch so that new batches flow. */
    const uint32_t at[] = {0, 1, FU_CUT_HALF, UINT32_MAX - 1 /* clamped to length - 1 */};
    for (unsigned r = 0; r < sizeof at / sizeof at[0]; r++) {
        uint64_t cuts = fu_proxy_cuts(px);
        fu_proxy_cut_midframe(px, 0, BATCH_MIN, at[r]);
        for (unsigned i = 0; fu_proxy_cuts(px) == cuts; i++) {
            char msg[64];
            snprintf(msg, sizeof msg, "load %u.%u", r, i);
            size_t len;
            uint8_t *sig = fn_sign(c.node[SIGNER], msg, &len);
            /* Every signature verifies, whatever the state of the connection (slow path if needed). */
            assert_int_equal(dsig_node_verify(c.node[VERIFIER], SIGNER, (const uint8_t *)msg, strlen(msg), sig,
                                              len),
                             DSIG_OK);
            free(sig);
            if (i > 20000)
                fail_msg("round %u: no batch frame crossed the proxy after %u signatures", r, i);
        }
        if (dsig_node_wait_ready(c.node[SIGNER], FN_GROUP, 128, 20000) != DSIG_OK) {
            print_message("faults: round %u: proxy accepted %llu, cuts %llu, frames forwarded %llu\n", r,
                          (unsigned long long)fu_proxy_accepted(px), (unsigned long long)fu_proxy_cuts(px),
                          (unsigned long long)fu_proxy_frames_up(px));
            fn_wait_ready(&c, SIGNER, 128, 1);
        }
        char msg[64];
        snprintf(msg, sizeof msg, "after cut %u", r + 2);
        check_fast(&c, msg);
    }

    dsig_node_stats s, v;
    dsig_node_stats_get(c.node[SIGNER], &s);
    dsig_node_stats_get(c.node[VERIFIER], &v);
    print_message("faults: %llu cuts, proxy accepted %llu connections, signer reconnects %llu, "
                  "batches resent %llu, verifier verified %llu batches\n",
                  (unsigned long long)fu_proxy_cuts(px), (unsigned long long)fu_proxy_accepted(px),
                  (unsigned long long)s.reconnects, (unsigned long long)s.batches_resent,
                  (unsigned long long)v.batches_verified);
    assert_int_equal(fu_proxy_cuts(px), 5);
    assert_true(fu_proxy_accepted(px) >= 6);  /* one connection per cut, plus the last */
    assert_true(s.reconnects >= 5);
    assert_true(s.batches_resent > 0);
    assert_int_equal(v.drop_bad_signature, 0); /* a partial frame was never taken for a batch */
    assert_int_equal(v.equivocations, 0);

    fn_cluster_free(&c);
    fu_proxy_stop(px);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_midframe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
