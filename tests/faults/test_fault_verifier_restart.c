/*
 * tests/faults/test_fault_verifier_restart.c — the fault "verifier restart": a verifier that comes
 * back with an empty cache checks the signer's signatures on the slow path (Merkle proof + Ed25519),
 * and after the signer re-sends its batches (re-sync on reconnect) takes the fast path again. Twice,
 * once with a clean stop and once with the verifier replaced while its old connection is still open.
 * After each step a corrupted or forged signature must be rejected. Nodes run as threads (label
 * "threads").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_node.h"
#include "testutil.h"

#define SIGNER 1u
#define VERIFIER 2u
#define BYSTANDER 3u /* configured, not started: another id to claim signatures with */

/* Sign one message and check that `v` verifies it on the fast path (counter moves), plus forgeries. */
static void expect_fast(fn_cluster *c, const char *msg)
{
    size_t len;
    uint8_t *sig = fn_sign(c->node[SIGNER], msg, &len);
    fn_wait_fast(c->node[VERIFIER], SIGNER, sig, len, 10000);
    dsig_node_stats a, b;
    dsig_node_stats_get(c->node[VERIFIER], &a);
    assert_int_equal(dsig_node_verify(c->node[VERIFIER], SIGNER, (const uint8_t *)msg, strlen(msg), sig, len),
                     DSIG_OK);
    dsig_node_stats_get(c->node[VERIFIER], &b);
    assert_int_equal(b.verify_fast, a.verify_fast + 1);
    assert_int_equal(b.verify_slow, a.verify_slow);
    fn_check_no_forgery(c->node[VERIFIER], SIGNER, BYSTANDER, msg, sig, len);
    free(sig);
}

/* One restart cycle: `graceful` stops the old verifier first; otherwise the new one is created while
 * the old is still connected and the old is freed only after (a replaced process). */
static void restart_cycle(fn_cluster *c, int graceful, unsigned round)
{
    char msg[96];
    snprintf(msg, sizeof msg, "before restart %u", round);
    expect_fast(c, msg);

    /* A signature made while the verifier is away, from keys whose batches it had cached. */
    snprintf(msg, sizeof msg, "while the verifier is down %u", round);
    size_t len;
    uint8_t *sig;
    if (graceful) {
        fn_node_free(c, VERIFIER);
        sig = fn_sign(c->node[SIGNER], msg, &len);
        fn_node_new(c, VERIFIER, NULL); /* empty cache, not yet connected */
    } else {
        sig = fn_sign(c->node[SIGNER], msg, &len);
        dsig_node *old = c->node[VERIFIER];
        c->node[VERIFIER] = NULL;
        fn_node_new(c, VERIFIER, NULL);
        dsig_node_free(old); /* releases the socket path for the new instance's start below */
    }
    dsig_node *v = c->node[VERIFIER];

    /* Empty cache: the slow path, with the configured Ed25519 key only. */
    assert_int_equal(dsig_node_can_verify_fast(v, SIGNER, sig, len), 0);
    dsig_node_stats a, b;
    dsig_node_stats_get(v, &a);
    assert_int_equal(dsig_node_verify(v, SIGNER, (const uint8_t *)msg, strlen(msg), sig, len), DSIG_OK);
    dsig_node_stats_get(v, &b);
    assert_int_equal(b.verify_slow, a.verify_slow + 1);
    assert_int_equal(b.verify_fast, a.verify_fast);
    fn_check_no_forgery(v, SIGNER, BYSTANDER, msg, sig, len);

    /* Back on the network: the signer re-sends every batch with unused keys; once the new instance
     * has acknowledged them all, fresh signatures take the fast path. */
    int rc = dsig_node_start(v);
    if (rc != DSIG_OK)
        fail_msg("restart of the verifier: %s (%s)", dsig_strerror(rc), dsig_last_error_detail());
    fn_wait_ready(c, SIGNER, 128, 20000);
    FU_WAIT_FOR(dsig_node_peer_up(c->node[SIGNER], VERIFIER) == 1, 10000);
    dsig_node_stats s;
    dsig_node_stats_get(c->node[SIGNER], &s);
    assert_true(s.batches_resent > 0);
    snprintf(msg, sizeof msg, "after restart %u", round);
    expect_fast(c, msg);

    /* The signature made while it was down still verifies (slow or, after the re-sync, fast). */
    snprintf(msg, sizeof msg, "while the verifier is down %u", round);
    assert_int_equal(dsig_node_verify(v, SIGNER, (const uint8_t *)msg, strlen(msg), sig, len), DSIG_OK);
    free(sig);
    dsig_node_stats_get(v, &s);
    assert_int_equal(s.equivocations, 0);
    assert_int_equal(s.drop_bad_signature, 0);
}

/* Two restarts of the verifier with the signer running throughout. */
static void test_verifier_restart(void **state)
{
    (void)state;
    fn_cluster c;
    fn_cluster_init(&c, 3, NULL, 1u << SIGNER | 1u << VERIFIER, 0);
    fn_node_start(&c, SIGNER, NULL);
    fn_node_start(&c, VERIFIER, NULL);
    fn_wait_ready(&c, SIGNER, 128, 20000);

    restart_cycle(&c, 1, 1);
    restart_cycle(&c, 0, 2);

    dsig_node_stats s;
    dsig_node_stats_get(c.node[SIGNER], &s);
    assert_true(s.reconnects >= 2);
    fn_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verifier_restart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
