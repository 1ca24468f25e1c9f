/*
 * tests/faults/test_fault_garbage.c — the fault "a peer that sends garbage or over-long frames":
 * raw sockets play a hostile or broken peer against a running verifier node: random bytes, a bad magic,
 * an over-long length (1 MiB and 2^32 − 1), frames before HELLO, a HELLO from an unknown id or of the
 * wrong size, BATCH frames that are truncated, name an unknown group or an unknown signer, carry a
 * batch whose root signature was made with another key or altered in one byte, and a genuine batch sent
 * twice (replay). Each is dropped and counted (dsig_node_stats) and the node keeps serving: its
 * connection with the real signer stays up and fresh signatures keep taking the fast path. A genuine
 * batch injected the same way IS accepted (so the drops are not an artefact of the harness), and a
 * signature made by a forger's keys under a configured id never verifies. Threads (label "threads").
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

#define SIGNER 1u
#define VERIFIER 2u
#define PLAYED 3u /* a configured member whose private key the test holds: played over raw sockets */

/* Send one frame (type, payload) on a raw socket. */
static int send_frame(int fd, uint8_t type, const void *payload, size_t len)
{
    uint8_t hdr[DSIG_NET_HDR_BYTES];
    dsig_net_frame_header(hdr, type, (uint32_t)len);
    if (fu_write_all(fd, hdr, sizeof hdr) != 0)
        return -1;
    return len ? fu_write_all(fd, payload, len) : 0;
}

static void be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* A HELLO payload (docs/node.md): version ‖ id ‖ instance ‖ nonce, big-endian. */
static void hello(uint8_t out[NODE_HELLO_BYTES], uint64_t id, uint64_t instance)
{
    uint8_t nonce[NODE_NONCE_BYTES];
    tu_fill(nonce, sizeof nonce, id ^ instance);
    node_hello_encode(out, id, instance, nonce);
}

/* A BATCH payload: signer ‖ name length ‖ name ‖ batch message. Returns a malloc'd buffer. */
static uint8_t *batch_frame(uint64_t signer, const char *group, const uint8_t *msg, size_t mlen, size_t *len)
{
    size_t glen = strlen(group);
    uint8_t *p = malloc(9 + glen + mlen);
    assert_non_null(p);
    be64(p, signer);
    p[8] = (uint8_t)glen;
    memcpy(p + 9, group, glen);
    memcpy(p + 9 + glen, msg, mlen);
    *len = 9 + glen + mlen;
    return p;
}

/* A raw peer connected to the verifier that has introduced itself as `id` (0: no HELLO): a configured
 * member whose key the test holds authenticates with it (HELLO + AUTH, docs/node.md); any other id only
 * sends a HELLO. */
static int raw_peer(fn_cluster *c, uint64_t id)
{
    int fd = fu_connect(c->addr[VERIFIER]);
    assert_true(fd >= 0);
    if (id >= 1 && id <= c->n) {
        const fu_dsig_key *k = &c->key[id % (FN_MAX + 1)]; /* (in range: the modulo tells the compiler) */
        assert_int_equal(nr_handshake(fd, id, k->priv, VERIFIER, c->key[VERIFIER].pub), 0);
    } else if (id) {
        uint8_t h[NODE_HELLO_BYTES];
        hello(h, id, 0x1234u + id);
        assert_int_equal(send_frame(fd, DSIG_NODE_T_HELLO, h, sizeof h), 0);
    }
    return fd;
}

/* Open a connection as PLAYED, send one BATCH frame with this payload, and keep reading the node's
 * frames for 150 ms (or until it closes) before closing: a peer that closes at once may make the node's
 * own HELLO fail with EPIPE before it has read the frame. */
static void inject(fn_cluster *c, const uint8_t *payload, size_t len)
{
    int fd = raw_peer(c, PLAYED);
    assert_int_equal(send_frame(fd, DSIG_NODE_T_BATCH, payload, len), 0);
    (void)fu_wait_closed(fd, 150);
    close(fd);
}

/* Wait until counter expression `expr` of the verifier's stats exceeds `base`. */
#define WAIT_STAT(c, field, base)                                                                    \
    do {                                                                                             \
        dsig_node_stats st_;                                                                         \
        uint64_t dl_ = fu_mono_ms() + 10000;                                                         \
        for (;;) {                                                                                   \
            dsig_node_stats_get((c)->node[VERIFIER], &st_);                                          \
            if (st_.field > (base))                                                                  \
                break;                                                                               \
            if (fu_mono_ms() > dl_)                                                                  \
                fail_msg("verifier counter %s stayed at %llu", #field, (unsigned long long)st_.field); \
            usleep(1000);                                                                            \
        }                                                                                            \
    } while (0)

/* The node still serves its real signer: connection up, a fresh signature fast, forgeries rejected. */
static void still_serving(fn_cluster *c, const char *what)
{
    assert_int_equal(dsig_node_peer_up(c->node[VERIFIER], SIGNER), 1);
    char msg[128];
    snprintf(msg, sizeof msg, "still serving after %s", what);
    size_t len;
    uint8_t *sig = fn_sign(c->node[SIGNER], msg, &len);
    fn_wait_fast(c->node[VERIFIER], SIGNER, sig, len, 10000);
    fn_check_no_forgery(c->node[VERIFIER], SIGNER, PLAYED, msg, sig, len);
    free(sig);
}

/* A standalone DSig signer for key `k` whose batch messages we can take (outbox). */
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
    assert_int_equal(dsig_hybrid_signer_refill(s, 1), DSIG_OK);
    return s;
}

/* Take the oldest batch message of a standalone signer. */
static uint8_t *take_batch(dsig_hybrid_signer *s, size_t *len)
{
    size_t cap = dsig_hybrid_params_batch_msg_bytes(dsig_hybrid_signer_params(s));
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    assert_int_equal(dsig_hybrid_signer_next_batch(s, b, cap, len), DSIG_OK);
    return b;
}

static void test_garbage(void **state)
{
    (void)state;
    fn_cluster c;
    fn_cluster_init(&c, 3, NULL, 0, 0);
    fn_node_start(&c, VERIFIER, NULL);
    fn_node_start(&c, SIGNER, NULL);
    FU_WAIT_FOR(dsig_node_peer_up(c.node[VERIFIER], SIGNER) == 1, 10000);
    still_serving(&c, "start-up");
    dsig_node_stats s0;
    dsig_node_stats_get(c.node[VERIFIER], &s0);

    /* 1. Random bytes (no valid header): the transport drops the connection. */
    {
        int fd = raw_peer(&c, 0);
        uint8_t junk[4096];
        tu_fill(junk, sizeof junk, 5);
        fu_write_all(fd, junk, sizeof junk);
        assert_int_equal(fu_wait_closed(fd, 5000), 1);
        close(fd);
        WAIT_STAT(&c, drop_malformed, s0.drop_malformed);
        still_serving(&c, "random bytes");
    }
    /* 2. Over-long frames: 1 MiB (over the 64 KiB default) and 2^32 - 1, announced in the header only —
     * nothing is allocated for them, the connection is dropped at the header. */
    const uint32_t longs[] = {1u << 20, UINT32_MAX, DSIG_NET_MAX_PAYLOAD_LIMIT + 1u};
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
        dsig_node_stats b;
        dsig_node_stats_get(c.node[VERIFIER], &b);
        int fd = raw_peer(&c, PLAYED);
        uint8_t hdr[DSIG_NET_HDR_BYTES];
        dsig_net_frame_header(hdr, DSIG_NODE_T_BATCH, longs[i]);
        fu_write_all(fd, hdr, sizeof hdr);
        uint8_t some[1024] = {0};
        fu_write_all(fd, some, sizeof some);
        assert_int_equal(fu_wait_closed(fd, 5000), 1);
        close(fd);
        WAIT_STAT(&c, drop_malformed, b.drop_malformed);
        still_serving(&c, "an over-long frame");
    }
    /* 3. A bad magic after a valid HELLO; a reserved bit; an unknown frame type. */
    {
        const unsigned char bads[][12] = {
            {'X', 'S', 'G', 'N', 1, DSIG_NODE_T_APP, 0, 0, 0, 0, 0, 4},
            {'D', 'S', 'G', 'N', 1, DSIG_NODE_T_APP, 0, 1, 0, 0, 0, 4},
            {'D', 'S', 'G', 'N', 1, 0x80, 0, 0, 0, 0, 0, 4},
            {'D', 'S', 'G', 'N', 2, DSIG_NODE_T_APP, 0, 0, 0, 0, 0, 4},
        };
        for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
            dsig_node_stats b;
            dsig_node_stats_get(c.node[VERIFIER], &b);
            int fd = raw_peer(&c, PLAYED);
            fu_write_all(fd, bads[i], 12);
            fu_write_all(fd, "abcd", 4);
            assert_int_equal(fu_wait_closed(fd, 5000), 1);
            close(fd);
            WAIT_STAT(&c, drop_malformed, b.drop_malformed);
        }
        still_serving(&c, "bad headers");
    }
    /* 4. Frames before HELLO, a HELLO of the wrong size / version, a HELLO from an unknown id. */
    {
        dsig_node_stats b, e;
        dsig_node_stats_get(c.node[VERIFIER], &b);
        int fd = raw_peer(&c, 0);
        uint8_t junk[64];
        tu_fill(junk, sizeof junk, 6);
        send_frame(fd, DSIG_NODE_T_BATCH, junk, sizeof junk);
        send_frame(fd, DSIG_NODE_T_APP, junk, 8);
        WAIT_STAT(&c, drop_malformed, b.drop_malformed);
        close(fd);

        dsig_node_stats_get(c.node[VERIFIER], &b);
        fd = raw_peer(&c, 0);
        uint8_t h[NODE_HELLO_BYTES + 1];
        hello(h, PLAYED, 1);
        h[NODE_HELLO_BYTES] = 0;
        send_frame(fd, DSIG_NODE_T_HELLO, h, NODE_HELLO_BYTES + 1); /* one byte too long */
        assert_int_equal(fu_wait_closed(fd, 5000), 1);
        close(fd);
        fd = raw_peer(&c, 0);
        h[0] = DSIG_NODE_PROTOCOL_VERSION + 1;
        send_frame(fd, DSIG_NODE_T_HELLO, h, NODE_HELLO_BYTES); /* unknown protocol version */
        assert_int_equal(fu_wait_closed(fd, 5000), 1);
        close(fd);
        /* Counted as malformed or as a rejected connection. */
        FU_WAIT_FOR((dsig_node_stats_get(c.node[VERIFIER], &e), e.drop_malformed + e.connections_rejected >=
                                                               b.drop_malformed + b.connections_rejected + 2),
                    10000);

        dsig_node_stats_get(c.node[VERIFIER], &b);
        fd = raw_peer(&c, 999); /* not in the configuration */
        assert_int_equal(fu_wait_closed(fd, 5000), 1);
        close(fd);
        WAIT_STAT(&c, drop_unknown_id, b.drop_unknown_id);
        WAIT_STAT(&c, connections_rejected, b.connections_rejected);
        still_serving(&c, "bad HELLOs");
    }

    /* The played member's batches: genuine, forged (another key), altered, replayed. */
    struct timeval tv;
    gettimeofday(&tv, NULL);
    uint64_t seq0 = (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec; /* low 56 bits, group 0 */
    dsig_hybrid_signer *good = played_signer(c.key[PLAYED].priv, seq0);
    fu_dsig_key forger_key;
    fu_dsig_key_new(&forger_key);
    dsig_hybrid_signer *forger = played_signer(forger_key.priv, seq0 + 1000);
    size_t glen, flen, plen;
    uint8_t *gmsg = take_batch(good, &glen);
    uint8_t *fmsg = take_batch(forger, &flen);

    /* 4b. Impostors: PLAYED's id with the forger's key (AUTH does not verify: counted, closed — not even
     * the genuine batch it carries is taken), and PLAYED's id with no AUTH at all (frames dropped and
     * counted as unauthenticated). */
    {
        dsig_node_stats b, e;
        dsig_node_stats_get(c.node[VERIFIER], &b);
        uint8_t *p = batch_frame(PLAYED, FN_GROUP, gmsg, glen, &plen);
        int fd = fu_connect(c.addr[VERIFIER]);
        assert_true(fd >= 0);
        assert_int_equal(nr_handshake(fd, PLAYED, forger_key.priv, VERIFIER, c.key[VERIFIER].pub), 0);
        send_frame(fd, DSIG_NODE_T_BATCH, p, plen);
        assert_int_equal(fu_wait_closed(fd, 5000), 1);
        close(fd);
        WAIT_STAT(&c, auth_failed, b.auth_failed);
        fd = fu_connect(c.addr[VERIFIER]);
        assert_true(fd >= 0);
        uint8_t nonce[NODE_NONCE_BYTES];
        assert_int_equal(nr_hello(fd, PLAYED, nonce), 0);
        send_frame(fd, DSIG_NODE_T_BATCH, p, plen);
        send_frame(fd, DSIG_NODE_T_APP, "hi", 2);
        WAIT_STAT(&c, drop_unauthenticated, b.drop_unauthenticated + 1);
        close(fd);
        free(p);
        dsig_node_stats_get(c.node[VERIFIER], &e);
        assert_int_equal(e.app_received, b.app_received);
        /* the genuine batch the impostors carried was not taken: a key of it is still on the slow
         * path (the real signer's own traffic moves the batch counters meanwhile, so they prove
         * nothing here) */
        const char *m = "signed while impostors knocked";
        uint8_t sig[4096];
        size_t sl;
        assert_int_equal(dsig_hybrid_sign(good, (const uint8_t *)m, strlen(m), sig, sizeof sig, &sl), DSIG_OK);
        usleep(50000);
        assert_int_equal(dsig_node_can_verify_fast(c.node[VERIFIER], PLAYED, sig, sl), 0);
        assert_int_equal(dsig_node_verify(c.node[VERIFIER], PLAYED, (const uint8_t *)m, strlen(m), sig, sl),
                         DSIG_OK);
        still_serving(&c, "impostors");
    }
    /* 5. Malformed BATCH payloads from an identified peer, each on its own connection (the node may
     * close a connection after a bad frame): too short, empty name, unknown group, a batch message cut
     * short, an unknown signer id. */
    {
        dsig_node_stats b;
        dsig_node_stats_get(c.node[VERIFIER], &b);
        uint8_t tiny[5] = {0};
        inject(&c, tiny, sizeof tiny);
        uint8_t *p = batch_frame(PLAYED, "nosuchgroup", gmsg, glen, &plen);
        inject(&c, p, plen);
        free(p);
        p = batch_frame(PLAYED, FN_GROUP, gmsg, glen / 2, &plen);
        inject(&c, p, plen);
        free(p);
        p = batch_frame(PLAYED, FN_GROUP, gmsg, glen, &plen);
        p[8] = 0; /* empty name */
        inject(&c, p, plen);
        free(p);
        WAIT_STAT(&c, drop_malformed, b.drop_malformed + 2);
        p = batch_frame(4242, FN_GROUP, gmsg, glen, &plen); /* unknown signer id */
        inject(&c, p, plen);
        free(p);
        WAIT_STAT(&c, drop_unknown_id, b.drop_unknown_id);
        still_serving(&c, "malformed batches");
    }
    /* 6. A batch made with another Ed25519 key, and the genuine batch with one byte of a key changed:
     * the root signature does not verify under PLAYED's configured key. */
    {
        dsig_node_stats b;
        dsig_node_stats_get(c.node[VERIFIER], &b);
        uint8_t *p = batch_frame(PLAYED, FN_GROUP, fmsg, flen, &plen);
        inject(&c, p, plen);
        free(p);
        uint8_t *alt = fu_corrupt(gmsg, glen, glen / 2, 0x10);
        p = batch_frame(PLAYED, FN_GROUP, alt, glen, &plen);
        inject(&c, p, plen);
        free(p);
        free(alt);
        WAIT_STAT(&c, drop_bad_signature, b.drop_bad_signature + 1);
    }
    /* 7. The genuine batch: accepted. Then the same again, on a new connection and twice on one: replays,
     * dropped. */
    {
        dsig_node_stats b;
        dsig_node_stats_get(c.node[VERIFIER], &b);
        uint8_t *p = batch_frame(PLAYED, FN_GROUP, gmsg, glen, &plen);
        inject(&c, p, plen);
        WAIT_STAT(&c, batches_verified, b.batches_verified);
        int fd = raw_peer(&c, PLAYED);
        send_frame(fd, DSIG_NODE_T_BATCH, p, plen);
        send_frame(fd, DSIG_NODE_T_BATCH, p, plen);
        WAIT_STAT(&c, drop_replay, b.drop_replay + 1);
        close(fd);
        free(p);
        dsig_node_stats e;
        dsig_node_stats_get(c.node[VERIFIER], &e);
        assert_int_equal(e.batches_verified, b.batches_verified + 1);
    }
    /* The played member's own signature now takes the fast path at the verifier ... */
    {
        const char *msg = "signed by the played member";
        uint8_t sig[4096];
        size_t len;
        assert_int_equal(dsig_hybrid_sign(good, (const uint8_t *)msg, strlen(msg), sig, sizeof sig, &len), DSIG_OK);
        fn_wait_fast(c.node[VERIFIER], PLAYED, sig, len, 5000);
        fn_check_no_forgery(c.node[VERIFIER], PLAYED, SIGNER, msg, sig, len);
    }
    /* ... while the forger's signature, claimed under PLAYED's id, never verifies (its batch was
     * refused; the slow path fails on the Ed25519 root signature). */
    {
        const char *msg = "signed by a forger";
        uint8_t sig[4096];
        size_t len;
        assert_int_equal(dsig_hybrid_sign(forger, (const uint8_t *)msg, strlen(msg), sig, sizeof sig, &len),
                         DSIG_OK);
        assert_int_equal(dsig_node_can_verify_fast(c.node[VERIFIER], PLAYED, sig, len), 0);
        assert_int_equal(dsig_node_verify(c.node[VERIFIER], PLAYED, (const uint8_t *)msg, strlen(msg), sig, len),
                         DSIG_E_VERIFY);
        assert_int_equal(dsig_node_verify(c.node[VERIFIER], SIGNER, (const uint8_t *)msg, strlen(msg), sig, len),
                         DSIG_E_VERIFY);
    }

    /* 8. A flood: 200 raw connections each sending a different garbage, concurrently open. */
    {
        int fds[200];
        for (int i = 0; i < 200; i++) {
            fds[i] = fu_connect(c.addr[VERIFIER]);
            assert_true(fds[i] >= 0);
            uint8_t junk[256];
            tu_fill(junk, sizeof junk, 100u + (uint64_t)i);
            if (i % 2)
                dsig_net_frame_header(junk, DSIG_NODE_T_HELLO, NODE_HELLO_BYTES); /* random HELLO */
            fu_write_all(fds[i], junk, sizeof junk);
        }
        for (int i = 0; i < 200; i++) {
            assert_int_equal(fu_wait_closed(fds[i], 5000), 1);
            close(fds[i]);
        }
        still_serving(&c, "a flood of garbage connections");
    }

    dsig_node_stats e;
    dsig_node_stats_get(c.node[VERIFIER], &e);
    print_message("faults: verifier dropped malformed %llu, unknown id %llu, bad signature %llu, replay %llu; "
                  "rejected connections %llu; equivocations %llu\n",
                  (unsigned long long)e.drop_malformed, (unsigned long long)e.drop_unknown_id,
                  (unsigned long long)e.drop_bad_signature, (unsigned long long)e.drop_replay,
                  (unsigned long long)e.connections_rejected, (unsigned long long)e.equivocations);
    assert_int_equal(e.equivocations, 0);

    free(gmsg);
    free(fmsg);
    dsig_hybrid_signer_free(good);
    dsig_hybrid_signer_free(forger);
    fu_dsig_key_free(&forger_key);
    fn_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
