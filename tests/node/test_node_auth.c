/*
 * tests/node/test_node_auth.c — HELLO authentication (docs/node.md "Authentication"): an impostor node
 * that claims a configured id with another Ed25519 key is refused in both directions and counted (its
 * AUTH does not verify; no re-sync, no batch, no APP frame is taken from it, none of ours goes to it),
 * and the legitimate node with that id then connects, authenticates and works (fast path, APP). A peer
 * that holds the right DSig key but signs its AUTH with another key made from it — the identity key
 * itself (plain Ed25519, which anyone can ask for with `dsig sign -a Ed25519` of a PEM copy) or the
 * batch root key — is refused: only the key derived for node authentication authenticates.
 * Threads (label "threads").
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hybrid/scheme.h"
#include "node/node_internal.h"
#include "node_raw.h"
#include "nodetest.h"
#include "testutil.h"

#define WAIT_MS 20000

static _Atomic int app_at_1;

/* on_app of node 1: count. */
static void on_app(void *arg, uint64_t peer, const uint8_t *b, size_t len)
{
    (void)arg;
    (void)peer;
    (void)b;
    (void)len;
    atomic_fetch_add(&app_at_1, 1);
}

/* A started node of `cfg` with id `id`, signing with RFC 8032 key `key_idx`. */
static dsig_node *start(const dsig_node_config *cfg, uint64_t id, size_t key_idx)
{
    char *j;
    dsig_key *k = nt_key(key_idx, &j);
    free(j);
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.pool_target = 256;
    o.heartbeat_ms = 200;
    o.backoff_max_ms = 100;
    if (id == 1)
        o.on_app = on_app;
    dsig_node *n = NULL;
    assert_int_equal(dsig_node_new(&n, cfg, id, k, &o), DSIG_OK);
    dsig_key_free(k);
    assert_int_equal(dsig_node_start(n), DSIG_OK);
    return n;
}

/* Replace the first `from` in a malloc'd text by `to` (returns a new malloc'd text). */
static char *replace(const char *txt, const char *from, const char *to)
{
    const char *at = strstr(txt, from);
    assert_non_null(at);
    size_t a = (size_t)(at - txt), fl = strlen(from), tl = strlen(to), n = strlen(txt);
    char *r = malloc(n - fl + tl + 1);
    assert_non_null(r);
    memcpy(r, txt, a);
    memcpy(r + a, to, tl);
    memcpy(r + a + tl, at + fl, n - a - fl + 1);
    return r;
}

static void test_impostor(void **state)
{
    (void)state;
    unsigned ports[2] = {nt_free_port(), nt_free_port()};
    static const char *const groups[] = {"[\"g1\"]", "[\"g1\"]"};
    char *txt = nt_config(2, ports, groups, "{\"g1\":{}}");
    /* The impostor's own membership: id 2 at node 2's address, but with RFC 8032 key 3 */
    char *j2, *j3;
    dsig_key_free(nt_key(1, &j2));
    dsig_key_free(nt_key(2, &j3));
    char *itxt = replace(txt, j2, j3);
    dsig_node_config *cfg, *icfg;
    assert_int_equal(dsig_node_config_parse(txt, strlen(txt), &cfg), DSIG_OK);
    assert_int_equal(dsig_node_config_parse(itxt, strlen(itxt), &icfg), DSIG_OK);

    dsig_node *imp = start(icfg, 2, 2);
    dsig_node *n1 = start(cfg, 1, 0);
    /* Both directions: node 1's connection to "node 2" reaches the impostor, whose AUTH fails there;
     * the impostor's connection to node 1 is refused the same way (closed, retried, refused again). */
    dsig_node_stats st;
    for (int i = 0; i < 1000; i++) {
        dsig_node_stats_get(n1, &st);
        if (st.auth_failed >= 3)
            break;
        (void)dsig_node_send_app(imp, 1, "evil", 4); /* never delivered */
        nt_nap(5);
    }
    assert_true(st.auth_failed >= 3);
    assert_true(st.connections_rejected >= 1);
    assert_int_equal(st.auth_ok, 0);
    assert_int_equal(dsig_node_peer_up(n1, 2), 0);
    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, 300), DSIG_E_WOULD_BLOCK); /* nobody acked */
    dsig_node_stats_get(n1, &st);
    assert_int_equal(st.batches_sent, 0);    /* no re-sync to an unauthenticated peer */
    assert_int_equal(st.batches_received, 0);
    assert_int_equal(st.app_received, 0);
    assert_int_equal(atomic_load(&app_at_1), 0);
    /* the impostor's batches and signatures never verify at node 1 */
    {
        static const uint8_t msg[] = "from the impostor";
        uint8_t sig[2000];
        size_t sl;
        assert_int_equal(dsig_node_sign(imp, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(dsig_node_can_verify_fast(n1, 2, sig, sl), 0);
        assert_int_equal(dsig_node_verify(n1, 2, msg, sizeof msg, sig, sl), DSIG_E_VERIFY);
    }
    print_message("impostor: node 1 counted %llu failed AUTHs, %llu unauthenticated frames, %llu rejected "
                  "connections\n", (unsigned long long)st.auth_failed,
                  (unsigned long long)st.drop_unauthenticated, (unsigned long long)st.connections_rejected);

    /* The legitimate node 2 takes the address: authenticated, re-synced, fast path, APP. */
    dsig_node_free(imp);
    dsig_node *n2 = start(cfg, 2, 1);
    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n2, "g1", 256, WAIT_MS), DSIG_OK);
    static const uint8_t msg[] = "legit";
    uint8_t sig[2000];
    size_t sl;
    assert_int_equal(dsig_node_sign(n2, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_node_can_verify_fast(n1, 2, sig, sl), 1);
    assert_int_equal(dsig_node_verify(n1, 2, msg, sizeof msg, sig, sl), DSIG_OK);
    assert_int_equal(dsig_node_send_app(n2, 1, "hello", 5), DSIG_OK);
    for (int i = 0; i < 400 && atomic_load(&app_at_1) < 1; i++)
        nt_nap(5);
    assert_int_equal(atomic_load(&app_at_1), 1);
    dsig_node_stats_get(n1, &st);
    assert_true(st.auth_ok >= 2); /* node 2 on both connections */
    dsig_node_stats_get(n2, &st);
    assert_int_equal(st.auth_failed, 0);

    dsig_node_free(n1);
    dsig_node_free(n2);
    dsig_node_config_free(cfg);
    dsig_node_config_free(icfg);
    free(j2);
    free(j3);
    free(itxt);
    free(txt);
}

/* Node 1's auth_ok / auth_failed once a raw peer claiming id 2 signed its AUTH under `label`'s key. */
static void raw_auth(const unsigned ports[2], dsig_node *n1, const dsig_key *k2, const dsig_key *pub1, const char *label,
                     int want_ok)
{
    dsig_node_stats before, st;
    dsig_node_stats_get(n1, &before);
    int fd = nr_connect(ports[0]);
    assert_true(fd >= 0);
    assert_int_equal(nr_handshake_label(fd, 2, k2, label, 1, pub1), 0);
    for (int i = 0; i < 2000; i++) {
        dsig_node_stats_get(n1, &st);
        if (st.auth_ok > before.auth_ok || st.auth_failed > before.auth_failed)
            break;
        nt_nap(5);
    }
    close(fd);
    print_message("AUTH under %s: auth_ok +%llu, auth_failed +%llu\n", label ? label : "the identity key",
                  (unsigned long long)(st.auth_ok - before.auth_ok),
                  (unsigned long long)(st.auth_failed - before.auth_failed));
    assert_int_equal(st.auth_ok - before.auth_ok, (uint64_t)want_ok);
    assert_int_equal(st.auth_failed - before.auth_failed, (uint64_t)!want_ok);
}

static void test_auth_key_separation(void **state)
{
    (void)state;
    unsigned ports[2] = {nt_free_port(), nt_free_port()};
    char *txt;
    dsig_node_config *cfg = nt_pair_config(ports, &txt);
    dsig_node *n1 = start(cfg, 1, 0);
    dsig_key *k2 = nt_private(1), *pub1 = nt_public(0);
    raw_auth(ports, n1, k2, pub1, NULL, 0);
    raw_auth(ports, n1, k2, pub1, DSIG_HB_ROOT_LABEL, 0);
    raw_auth(ports, n1, k2, pub1, NODE_AUTH_KEY_LABEL, 1); /* control: the harness authenticates */
    dsig_key_free(k2);
    dsig_key_free(pub1);
    dsig_node_free(n1);
    dsig_node_config_free(cfg);
    free(txt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_impostor),
        cmocka_unit_test(test_auth_key_separation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
