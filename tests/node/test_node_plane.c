/*
 * tests/node/test_node_plane.c — nodes in one process over loopback TCP (each with its own plane
 * thread): warm-up and the fast path, slow path outside the group, application frames, verifier
 * restart and re-sync; a raw attacker connection: unknown id, frame before HELLO, bad root signature,
 * replay, malformed payloads and headers — all dropped and counted, the node keeps working.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"
#include "node/node_internal.h"
#include "node_raw.h"
#include "nodetest.h"
#include "testutil.h"

#define WAIT_MS 20000

static _Atomic int app_count;
static char app_last[64];

/* on_app: count and keep the last payload. */
static void on_app(void *arg, uint64_t peer, const uint8_t *b, size_t len)
{
    (void)arg;
    (void)peer;
    if (len < sizeof app_last) {
        memcpy(app_last, b, len);
        app_last[len] = 0;
    }
    atomic_fetch_add(&app_count, 1);
}

/* A node of `cfg` with id `id` (key nt_key(id-1)) and small pools, started. */
static dsig_node *start_node(const dsig_node_config *cfg, uint64_t id)
{
    char *j;
    dsig_key *k = nt_key((size_t)id - 1, &j);
    free(j);
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.pool_target = 256; /* two batches of 128 */
    o.on_app = on_app;
    o.heartbeat_ms = 200;
    o.backoff_max_ms = 200;
    dsig_node *n = NULL;
    assert_int_equal(dsig_node_new(&n, cfg, id, k, &o), DSIG_OK);
    dsig_key_free(k);
    assert_int_equal(dsig_node_start(n), DSIG_OK);
    assert_int_equal(dsig_node_start(n), DSIG_E_STATE);
    return n;
}

/* Sign on `s` in group g1 and check the verdicts and paths on v (fast) and o (slow). */
static void sign_and_check(dsig_node *s, uint64_t sid, dsig_node *v, dsig_node *o)
{
    static const uint8_t msg[8] = "8 bytes";
    uint8_t sig[2000];
    size_t sl;
    assert_int_equal(dsig_node_sign(s, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
    dsig_node_stats a, b;
    dsig_node_stats_get(v, &a);
    assert_int_equal(dsig_node_can_verify_fast(v, sid, sig, sl), 1);
    assert_int_equal(dsig_node_verify(v, sid, msg, sizeof msg, sig, sl), DSIG_OK);
    dsig_node_stats_get(v, &b);
    assert_int_equal(b.verify_fast, a.verify_fast + 1);
    if (o) {
        dsig_node_stats_get(o, &a);
        assert_int_equal(dsig_node_can_verify_fast(o, sid, sig, sl), 0);
        assert_int_equal(dsig_node_verify(o, sid, msg, sizeof msg, sig, sl), DSIG_OK);
        dsig_node_stats_get(o, &b);
        assert_int_equal(b.verify_slow, a.verify_slow + 1);
    }
    /* a corrupted signature or message never verifies, on either path */
    sig[sl / 2] ^= 1;
    assert_int_equal(dsig_node_verify(v, sid, msg, sizeof msg, sig, sl), DSIG_E_VERIFY);
    sig[sl / 2] ^= 1;
    static const uint8_t other[8] = "8 bytez";
    assert_int_not_equal(dsig_node_verify(v, sid, other, sizeof other, sig, sl), DSIG_OK);
    if (o)
        assert_int_equal(dsig_node_verify(o, sid, other, sizeof other, sig, sl), DSIG_E_VERIFY);
}

/* Three nodes: 1 and 2 in g1, 3 outside. Fast path inside, slow outside, APP, verifier restart. */
static void test_three_nodes(void **state)
{
    (void)state;
    unsigned ports[3] = {nt_free_port(), nt_free_port(), nt_free_port()};
    static const char *const groups[] = {"[\"g1\"]", "[\"g1\"]", "[]"};
    char *txt = nt_config(3, ports, groups, "{\"g1\":{\"params\":\"wots4-haraka-b128\"}}");
    dsig_node_config *cfg;
    assert_int_equal(dsig_node_config_parse(txt, strlen(txt), &cfg), DSIG_OK);
    dsig_node *n1 = start_node(cfg, 1), *n2 = start_node(cfg, 2), *n3 = start_node(cfg, 3);

    assert_int_equal(dsig_node_wait_ready(n1, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n2, "g1", 256, WAIT_MS), DSIG_OK);
    assert_int_equal(dsig_node_wait_ready(n3, "g1", 1, 10), DSIG_E_ARG); /* not a member */
    for (int i = 0; i < 5; i++) {
        sign_and_check(n1, 1, n2, n3);
        sign_and_check(n2, 2, n1, n3);
    }
    dsig_node_stats st;
    dsig_node_stats_get(n3, &st);
    assert_int_equal(st.batches_received, 0); /* batches go to the group only */
    dsig_node_stats_get(n2, &st);
    assert_true(st.batches_verified >= 2);
    assert_int_equal(st.drop_bad_signature + st.drop_unknown_id + st.drop_malformed, 0);

    /* application frames both ways */
    for (int i = 0; i < 200 && !(dsig_node_peer_up(n3, 1) && dsig_node_peer_up(n1, 3)); i++)
        nt_nap(10);
    assert_int_equal(dsig_node_send_app(n3, 1, "ping", 4), DSIG_OK);
    for (int i = 0; i < 200 && atomic_load(&app_count) < 1; i++)
        nt_nap(10);
    assert_int_equal(atomic_load(&app_count), 1);
    assert_string_equal(app_last, "ping");
    assert_int_equal(dsig_node_send_app(n1, 3, "pong", 4), DSIG_OK);
    for (int i = 0; i < 200 && atomic_load(&app_count) < 2; i++)
        nt_nap(10);
    assert_string_equal(app_last, "pong");
    assert_int_equal(dsig_node_send_app(n1, 1, "self", 4), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_node_send_app(n1, 42, "x", 1), DSIG_E_UNKNOWN_SIGNER);

    /* verifier restart: a new node 2 has an empty cache (slow path), then re-sync makes it fast */
    dsig_node_free(n2);
    n2 = start_node(cfg, 2);
    {
        static const uint8_t msg[4] = "post";
        uint8_t sig[2000];
        size_t sl;
        /* a key generated before the restart: verified at once, on whichever path is ready */
        assert_int_equal(dsig_node_sign(n1, "g1", msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(dsig_node_verify(n2, 1, msg, sizeof msg, sig, sl), DSIG_OK);
        /* n1 saw the connection drop, reconnected and re-sent its unused batches; n2 acked them */
        for (int i = 0; i < 500 && dsig_node_peer_up(n1, 2); i++) {
            dsig_node_stats_get(n2, &st);
            if (st.batches_verified)
                break;
            nt_nap(10);
        }
        assert_int_equal(dsig_node_wait_ready(n1, "g1", 128, WAIT_MS), DSIG_OK);
    }
    sign_and_check(n1, 1, n2, n3);
    dsig_node_stats_get(n1, &st);
    assert_true(st.batches_resent >= 1);
    assert_true(st.acks_received >= 2);

    dsig_node_free(n1);
    dsig_node_free(n2);
    dsig_node_free(n3);
    dsig_node_config_free(cfg);
    free(txt);
}

/* ---- raw attacker ------------------------------------------------------------------------------ */


/* Write one frame. */
static void raw_frame(int s, uint8_t type, const void *p, size_t len)
{
    uint8_t h[DSIG_NET_HDR_BYTES];
    dsig_net_frame_header(h, type, (uint32_t)len);
    assert_int_equal(send(s, h, sizeof h, MSG_NOSIGNAL), (ssize_t)sizeof h);
    if (len)
        assert_int_equal(send(s, p, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Write a HELLO claiming `id` (no AUTH follows). */
static void raw_hello(int s, uint64_t id)
{
    uint8_t nonce[32];
    assert_int_equal(nr_hello(s, id, nonce), 0);
}

/* Write a BATCH frame. */
static void raw_batch(int s, uint64_t signer, const char *group, const uint8_t *msg, size_t len)
{
    uint8_t *p = malloc(NODE_BATCH_HDR_MAX + len);
    size_t pl = node_batch_prefix(p, signer, group, strlen(group));
    memcpy(p + pl, msg, len);
    raw_frame(s, DSIG_NODE_T_BATCH, p, pl + len);
    free(p);
}

/* 1 once the peer closed the socket (within 3 s). */
static int raw_closed(int s)
{
    for (int i = 0; i < 300; i++) {
        struct pollfd pf = {s, POLLIN, 0};
        if (poll(&pf, 1, 10) == 1) {
            uint8_t b[256];
            ssize_t r = recv(s, b, sizeof b, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN))
                return 1;
        }
    }
    return 0;
}

static dsig_node_stats wait_st;
/* Poll node stats until `field` reaches `want` (3 s). */
#define WAIT_FOR(n, field, want)                                                                     \
    do {                                                                                             \
        for (int i_ = 0; i_ < 300; i_++) {                                                           \
            dsig_node_stats_get(n, &wait_st);                                                        \
            if (wait_st.field >= (want))                                                             \
                break;                                                                               \
            nt_nap(10);                                                                              \
        }                                                                                            \
        assert_int_equal(wait_st.field, (want));                                                     \
    } while (0)

/* Valid batch messages of node 2's key in group g1 (index 0), seqs from `first`. */
static void make_batches(uint64_t first, uint8_t *out, size_t each, unsigned count)
{
    char *j;
    dsig_key *k = nt_key(1, &j);
    free(j);
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.threads = 0;
    so.signer_id = 2;
    so.outbox = count;
    so.first_seq = first;
    so.pool_target = 128;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_refill(s, count), DSIG_OK);
    for (unsigned i = 0; i < count; i++) {
        size_t l;
        assert_int_equal(dsig_hybrid_signer_next_batch(s, out + i * each, each, &l), DSIG_OK);
        assert_int_equal(l, each);
    }
    dsig_hybrid_signer_free(s);
    dsig_key_free(k);
}

/* Unknown ids, frames before HELLO, bad signatures, replays, malformed frames: dropped and counted. */
static void test_attacks(void **state)
{
    (void)state;
    unsigned ports[2] = {nt_free_port(), nt_free_port()};
    char *txt;
    dsig_node_config *cfg = nt_pair_config(ports, &txt);
    dsig_node *n1 = start_node(cfg, 1); /* node 2 is never started: the attacker speaks for it */

    /* unknown id: closed and counted */
    int s = nr_connect(ports[0]);
    assert_true(s >= 0);
    raw_hello(s, 99);
    assert_true(raw_closed(s));
    close(s);
    WAIT_FOR(n1, drop_unknown_id, 1);
    WAIT_FOR(n1, connections_rejected, 1);

    /* a frame before HELLO: closed, malformed */
    s = nr_connect(ports[0]);
    assert_true(s >= 0);
    raw_frame(s, DSIG_NODE_T_APP, "x", 1);
    assert_true(raw_closed(s));
    close(s);
    WAIT_FOR(n1, drop_malformed, 1);

    size_t bl = dsig_hybrid_params_batch_msg_bytes(dsig_hybrid_params_default());
    uint8_t *b = malloc(3 * bl);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    make_batches((uint64_t)ts.tv_sec * 1000000u, b, bl, 3);
    char *j;
    dsig_key *k2 = nt_key(1, &j), *k3, *pub1;
    free(j);
    k3 = nt_key(2, &j);
    free(j);
    char *j1;
    dsig_key *k1 = nt_key(0, &j1);
    free(j1);
    assert_int_equal(dsig_key_public(&pub1, k1), DSIG_OK);

    /* claiming node 2 without proving it: its frames are dropped and counted, nothing is verified */
    s = nr_connect(ports[0]);
    assert_true(s >= 0);
    raw_hello(s, 2);
    raw_batch(s, 2, "g1", b, bl);
    raw_frame(s, DSIG_NODE_T_APP, "x", 1);
    WAIT_FOR(n1, drop_unauthenticated, 2);
    close(s);
    /* an impostor: node 2's id, another key — refused (closed) and counted; its batch never counts */
    s = nr_connect(ports[0]);
    assert_true(s >= 0);
    assert_int_equal(nr_handshake(s, 2, k3, 1, pub1), 0);
    raw_batch(s, 2, "g1", b, bl);
    assert_true(raw_closed(s));
    close(s);
    WAIT_FOR(n1, auth_failed, 1);
    WAIT_FOR(n1, connections_rejected, 2);
    /* an AUTH replayed from another connection does not verify: the node's nonce is fresh */
    dsig_node_stats_get(n1, &wait_st);
    assert_int_equal(wait_st.batches_received, 0);
    assert_int_equal(wait_st.auth_ok, 0);

    /* speaking for node 2 with its key (as node 2 would): batches count only by their root signature */
    s = nr_connect(ports[0]);
    assert_true(s >= 0);
    assert_int_equal(nr_handshake(s, 2, k2, 1, pub1), 0);
    WAIT_FOR(n1, auth_ok, 1);
    raw_batch(s, 99, "g1", b, bl); /* unknown signer */
    WAIT_FOR(n1, drop_unknown_id, 2);
    raw_batch(s, 2, "g1", b, bl); /* good */
    WAIT_FOR(n1, batches_verified, 1);
    raw_batch(s, 2, "g1", b, bl); /* replay */
    WAIT_FOR(n1, drop_replay, 1);
    uint8_t *bad = b + 2 * bl;
    bad[bl - 5] ^= 0x40; /* root signature of a fresh seq */
    raw_batch(s, 2, "g1", bad, bl);
    WAIT_FOR(n1, drop_bad_signature, 1);
    bad[bl - 5] ^= 0x40;
    bad[20] ^= 1; /* a leaf: the root changes, the signature no longer matches */
    raw_batch(s, 2, "g1", bad, bl);
    WAIT_FOR(n1, drop_bad_signature, 2);
    raw_batch(s, 2, "g1", b + bl, bl - 1); /* wrong length */
    WAIT_FOR(n1, drop_malformed, 2);
    raw_batch(s, 2, "zz", b + bl, bl); /* undefined group */
    WAIT_FOR(n1, drop_malformed, 3);
    raw_batch(s, 1, "g1", b + bl, bl); /* claims to be node 1's own batch */
    WAIT_FOR(n1, drop_malformed, 4);
    raw_frame(s, DSIG_NODE_T_BATCH, "short", 5);
    WAIT_FOR(n1, drop_malformed, 5);
    raw_frame(s, DSIG_NODE_T_BATCH_ACK, "\0\0\0\0\0\0\0\1", 8);
    WAIT_FOR(n1, drop_malformed, 6);
    raw_frame(s, 0x7E, "?", 1); /* unknown node frame type */
    WAIT_FOR(n1, drop_malformed, 7);
    raw_batch(s, 2, "g1", b + bl, bl); /* still served: the second good batch */
    WAIT_FOR(n1, batches_verified, 2);
    /* garbage header: the transport drops the connection */
    assert_int_equal(send(s, "GARBAGE-GARBAGE!", 16, MSG_NOSIGNAL), 16);
    assert_true(raw_closed(s));
    close(s);
    WAIT_FOR(n1, drop_malformed, 8);

    /* the verified batches give the fast path for signatures from them; forged ones fail */
    dsig_node_stats_get(n1, &wait_st);
    assert_int_equal(wait_st.drop_bad_signature, 2);
    assert_int_equal(wait_st.batches_verified, 2);
    free(b);
    dsig_key_free(k1);
    dsig_key_free(k2);
    dsig_key_free(k3);
    dsig_key_free(pub1);
    dsig_node_free(n1);
    dsig_node_config_free(cfg);
    free(txt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_nodes),
        cmocka_unit_test(test_attacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
