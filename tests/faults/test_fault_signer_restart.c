/*
 * tests/faults/test_fault_signer_restart.c — the fault "signer restart": every incarnation of a
 * signer under the same id and Ed25519 key draws new key material, so no one-time key is ever used
 * twice. Four incarnations (clean stops, and one replaced while its predecessor still runs), each
 * signing across several batches; the (batch seq, index, pk_seed) of every signature are collected and
 * must all be distinct — also (batch seq, index) alone, or a verifier would see two batches under one
 * sequence number. The verifier stays up throughout: it keeps verifying the earlier incarnations'
 * signatures, takes the fast path for each new incarnation once warmed up, reports no equivocation and
 * rejects corrupted signatures. Nodes run as threads (label "threads").
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
#define INCARNATIONS 4u
#define PER_INCARNATION 300u /* > 2 batches of 128 */

typedef struct kept {
    char msg[64];
    uint8_t *sig;
    size_t len;
} kept;

static void test_signer_restart(void **state)
{
    (void)state;
    fn_cluster c;
    fn_cluster_init(&c, 3, NULL, 1u << SIGNER | 1u << VERIFIER, 0);
    fn_node_start(&c, VERIFIER, NULL);
    fn_node_start(&c, SIGNER, NULL);

    fn_otk *otk = calloc(INCARNATIONS * (PER_INCARNATION + 1), sizeof *otk);
    kept *first = calloc(INCARNATIONS, sizeof *first); /* one signature per incarnation, re-checked later */
    assert_non_null(otk);
    assert_non_null(first);
    size_t n_otk = 0;

    for (unsigned inc = 0; inc < INCARNATIONS; inc++) {
        dsig_node *s = c.node[SIGNER];
        fn_wait_ready(&c, SIGNER, 128, 20000);
        for (unsigned i = 0; i < PER_INCARNATION; i++) {
            char msg[64];
            snprintf(msg, sizeof msg, "incarnation %u message %u", inc, i);
            size_t len;
            uint8_t *sig = fn_sign(s, msg, &len);
            fn_otk_of(sig, len, &otk[n_otk++]);
            if (i == 0) {
                /* Warm: the verifier has this batch (wait_ready saw its acknowledgement). */
                fn_wait_fast(c.node[VERIFIER], SIGNER, sig, len, 10000);
                fn_check_no_forgery(c.node[VERIFIER], SIGNER, BYSTANDER, msg, sig, len);
                snprintf(first[inc].msg, sizeof first[inc].msg, "%s", msg);
                first[inc].sig = sig;
                first[inc].len = len;
                continue;
            }
            int rc = dsig_node_verify(c.node[VERIFIER], SIGNER, (const uint8_t *)msg, strlen(msg), sig, len);
            if (rc != DSIG_OK)
                fail_msg("incarnation %u signature %u: %d (%s)", inc, i, rc, dsig_strerror(rc));
            free(sig);
        }
        /* Every earlier incarnation's signature still verifies and nothing is reported as equivocation. */
        for (unsigned k = 0; k <= inc; k++)
            assert_int_equal(dsig_node_verify(c.node[VERIFIER], SIGNER, (const uint8_t *)first[k].msg,
                                              strlen(first[k].msg), first[k].sig, first[k].len),
                             DSIG_OK);
        dsig_node_stats vs;
        dsig_node_stats_get(c.node[VERIFIER], &vs);
        assert_int_equal(vs.equivocations, 0);
        assert_int_equal(vs.drop_bad_signature, 0);

        if (inc + 1 == INCARNATIONS)
            break;
        if (inc % 2 == 0) {
            /* Clean restart. */
            fn_node_free(&c, SIGNER);
            fn_node_start(&c, SIGNER, NULL);
        } else {
            /* Replacement: the new instance generates its keys while the old one still holds its pool
             * (two live signers with the same key must not share key material either). */
            dsig_node *old = c.node[SIGNER];
            c.node[SIGNER] = NULL;
            fn_node_new(&c, SIGNER, NULL);
            size_t len;
            uint8_t *sig = fn_sign(old, "signed by the old instance after its successor was created", &len);
            fn_otk_of(sig, len, &otk[n_otk++]);
            free(sig);
            dsig_node_free(old);
            assert_int_equal(dsig_node_start(c.node[SIGNER]), DSIG_OK);
        }
    }
    fn_otk_all_distinct(otk, n_otk);
    print_message("faults: %zu signatures over %u signer incarnations, all one-time keys distinct\n", n_otk,
                  INCARNATIONS);

    for (unsigned k = 0; k < INCARNATIONS; k++)
        free(first[k].sig);
    free(first);
    free(otk);
    fn_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signer_restart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
