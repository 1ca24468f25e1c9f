/*
 * tests/net/test_net_loop.c — the transport over real sockets (CTest label "threads": each loop runs on
 * its own thread, so `make check-tsan` runs this under ThreadSanitizer). Only 127.0.0.1, ::1 and Unix
 * sockets in a mkdtemp directory; every wait is bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"
#include "testutil.h"

/* ---- harness ------------------------------------------------------------------------------------ */

typedef struct node {
    dsig_net_loop *loop;
    pthread_t th;
    pthread_mutex_t mu;
    uint64_t up_conn;            /* last connection that came UP */
    int ups, downs, last_reason;
    uint64_t frames, bad;        /* application frames; pattern mismatches */
    uint32_t next_seq[8];        /* per stream: expected sequence number */
} node;

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Wait (≤ ms) until cond holds; fail the test naming the condition otherwise. */
#define WAIT_FOR(cond, ms)                                                                           \
    do {                                                                                             \
        uint64_t dl_ = mono_ms() + (ms);                                                             \
        while (!(cond)) {                                                                            \
            if (mono_ms() > dl_)                                                                     \
                fail_msg("timed out waiting for %s", #cond);                                         \
            usleep(500);                                                                             \
        }                                                                                            \
    } while (0)

/* The payload of frame `seq` of stream `st`: [st][seq u32le][pattern], length derived from seq. */
static size_t pattern(uint8_t *out, uint8_t st, uint32_t seq, size_t maxlen)
{
    uint64_t x = (uint64_t)seq * 0x9E3779B97F4A7C15ull + st;
    x ^= x >> 29;
    size_t len = 5 + (size_t)(x % (maxlen - 4));
    out[0] = st;
    memcpy(out + 1, &seq, 4);
    for (size_t k = 5; k < len; k++)
        out[k] = (uint8_t)(seq * 31u + k * 7u + st);
    return len;
}

/* Event sink: count, check the pattern and the per-stream order. */
static void on_event(void *arg, dsig_net_loop *loop, const dsig_net_event *ev)
{
    (void)loop;
    node *n = arg;
    pthread_mutex_lock(&n->mu);
    if (ev->kind == DSIG_NET_EV_UP) {
        n->ups++;
        n->up_conn = ev->conn;
    } else if (ev->kind == DSIG_NET_EV_DOWN) {
        n->downs++;
        n->last_reason = ev->reason;
    } else {
        n->frames++;
        uint32_t seq;
        if (ev->len < 5 || ev->payload[0] >= 8) {
            n->bad++;
        } else {
            memcpy(&seq, ev->payload + 1, 4);
            uint8_t st = ev->payload[0];
            /* The length depends on the sender's maximum; the content only on (st, seq). */
            int ok = seq == n->next_seq[st] && ev->type == 0x10 + st;
            for (size_t k = 5; ok && k < ev->len; k++)
                ok = ev->payload[k] == (uint8_t)(seq * 31u + k * 7u + st);
            if (!ok)
                n->bad++;
            n->next_seq[st] = seq + 1;
        }
    }
    pthread_mutex_unlock(&n->mu);
}

/* Read a node field under its lock. */
#define NODE_GET(n, field)                                                                           \
    __extension__({                                                                                  \
        pthread_mutex_lock(&(n)->mu);                                                                \
        __typeof__((n)->field) v_ = (n)->field;                                                      \
        pthread_mutex_unlock(&(n)->mu);                                                              \
        v_;                                                                                          \
    })

static void *run_loop(void *arg)
{
    node *n = arg;
    dsig_net_loop_run(n->loop);
    return NULL;
}

/* Create and start a node (cfg NULL = defaults). */
static node *node_start(const dsig_net_config *cfg)
{
    node *n = calloc(1, sizeof *n);
    pthread_mutex_init(&n->mu, NULL);
    assert_int_equal(dsig_net_loop_new(&n->loop, cfg, on_event, n), DSIG_OK);
    assert_int_equal(pthread_create(&n->th, NULL, run_loop, n), 0);
    return n;
}

static void node_stop(node *n)
{
    dsig_net_loop_stop(n->loop);
    pthread_join(n->th, NULL);
    dsig_net_loop_free(n->loop);
    pthread_mutex_destroy(&n->mu);
    free(n);
}

/* A counter of a connection (or of the loop with id 0). */
static uint64_t stat_of(node *n, uint64_t id, size_t off)
{
    dsig_net_stats s;
    if (dsig_net_stats_get(n->loop, id, &s) != DSIG_OK)
        return UINT64_MAX;
    return *(const uint64_t *)((const uint8_t *)&s + off);
}
#define STAT(n, id, f) stat_of((n), (id), offsetof(dsig_net_stats, f))

static char g_dir[64];

/* Listen on text address (port 0) and return the bound address. */
static uint64_t listen_on(node *n, const char *text, dsig_net_addr *bound)
{
    dsig_net_addr a;
    uint64_t id;
    assert_int_equal(dsig_net_addr_parse(text, &a), DSIG_OK);
    assert_int_equal(dsig_net_listen(n->loop, &a, &id), DSIG_OK);
    assert_int_equal(dsig_net_local_addr(n->loop, id, bound), DSIG_OK);
    return id;
}

/* A blocking raw client socket connected to addr. */
static int raw_connect(const dsig_net_addr *a)
{
    int fd = socket(a->family, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (const struct sockaddr *)&a->ss, a->len), 0);
    return fd;
}

/* A raw listening socket on 127.0.0.1 (port chosen by the kernel); *a gets its address. */
static int raw_listen(dsig_net_addr *a, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (rcvbuf)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    assert_int_equal(dsig_net_addr_parse("tcp:127.0.0.1:0", a), DSIG_OK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a->ss, a->len), 0);
    assert_int_equal(listen(fd, 8), 0);
    socklen_t sl = sizeof a->ss;
    getsockname(fd, (struct sockaddr *)&a->ss, &sl);
    return fd;
}

/* accept() with a bounded wait. */
static int raw_accept(int lfd, int ms)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, ms), 1);
    int fd = accept(lfd, NULL, NULL);
    assert_true(fd >= 0);
    return fd;
}

static void write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        assert_true(w > 0);
        b += w;
        n -= (size_t)w;
    }
}

/* Wait ≤ ms for EOF or reset on a raw socket (the loop dropped us). */
static int raw_sees_close(int fd, int ms)
{
    uint64_t dl = mono_ms() + (uint64_t)ms;
    uint8_t b[4096];
    while (mono_ms() < dl) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) == 1) {
            ssize_t r = read(fd, b, sizeof b);
            if (r <= 0)
                return 1;
        }
    }
    return 0;
}

static int setup(void **state)
{
    (void)state;
    strcpy(g_dir, "/tmp/dsig-net-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* Many frames of random sizes both ways between two loops over `listen_text`. */
static void roundtrip(const char *listen_text)
{
    node *srv = node_start(NULL), *cli = node_start(NULL);
    dsig_net_addr bound;
    listen_on(srv, listen_text, &bound);
    uint64_t c;
    assert_int_equal(dsig_net_connect(cli->loop, &bound, &c), DSIG_OK);
    WAIT_FOR(dsig_net_is_up(cli->loop, c) && NODE_GET(srv, ups) == 1, 2000);
    uint64_t s = NODE_GET(srv, up_conn);
    static uint8_t buf[9000];
    const uint32_t N = 1500;
    for (uint32_t i = 0; i < N; i++) {
        size_t len = pattern(buf, 0, i, 9000);
        assert_int_equal(dsig_net_send_wait(cli->loop, c, 0x10, buf, len, 2000), DSIG_OK);
        len = pattern(buf, 1, i, 9000);
        assert_int_equal(dsig_net_send_wait(srv->loop, s, 0x11, buf, len, 2000), DSIG_OK);
    }
    WAIT_FOR(NODE_GET(srv, frames) == N && NODE_GET(cli, frames) == N, 4000);
    assert_int_equal(NODE_GET(srv, bad), 0);
    assert_int_equal(NODE_GET(cli, bad), 0);
    /* frames_out counts heartbeats too, and one may still be in flight when the data has
     * arrived (TSan slows the loop enough to see it): wait for the two counters to agree. */
    WAIT_FOR(STAT(cli, c, frames_out) == STAT(srv, s, frames_in), 4000);
    assert_int_equal(STAT(srv, 0, dropped_malformed), 0);
    node_stop(cli);
    node_stop(srv);
}

static void test_roundtrip_tcp4(void **state)
{
    (void)state;
    roundtrip("tcp:127.0.0.1:0");
}

static void test_roundtrip_tcp6(void **state)
{
    (void)state;
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok) {
        print_message("skipped: ::1 is not available here\n");
        skip();
    }
    roundtrip("tcp:[::1]:0");
}

static void test_roundtrip_uds(void **state)
{
    (void)state;
    char t[160];
    snprintf(t, sizeof t, "unix:%s/rt.sock", g_dir);
    roundtrip(t);
}

/* A frame stream written by a raw client in two writes, cut at every byte boundary; the loop waits
 * until it has read the first part before the rest is written. */
static void test_split_every_byte(void **state)
{
    (void)state;
    node *srv = node_start(NULL);
    dsig_net_addr bound;
    uint64_t lid = listen_on(srv, "tcp:127.0.0.1:0", &bound);
    int fd = raw_connect(&bound);
    WAIT_FOR(NODE_GET(srv, ups) == 1, 2000);
    uint8_t stream[256], p[64];
    size_t n = 0, l;
    l = pattern(p, 0, 0, 40);
    n += (dsig_net_frame_header(stream + n, 0x10, (uint32_t)l), DSIG_NET_HDR_BYTES);
    memcpy(stream + n, p, l);
    n += l;
    uint64_t base_bytes = 0;
    for (size_t cut = 1; cut < n; cut++) {
        /* The stream for this round: the same frame with the next sequence number. */
        uint32_t seq = (uint32_t)(cut - 1);
        size_t m = 0;
        l = pattern(p, 0, seq, 40);
        dsig_net_frame_header(stream, 0x10, (uint32_t)l);
        memcpy(stream + DSIG_NET_HDR_BYTES, p, l);
        m = DSIG_NET_HDR_BYTES + l;
        size_t c = cut < m ? cut : m - 1;
        write_all(fd, stream, c);
        WAIT_FOR(STAT(srv, lid, bytes_in) == base_bytes + c, 2000);
        assert_int_equal(NODE_GET(srv, frames), seq); /* nothing delivered from a partial frame */
        write_all(fd, stream + c, m - c);
        base_bytes += m;
        WAIT_FOR(NODE_GET(srv, frames) == seq + 1, 2000);
    }
    /* Several frames in one write. */
    size_t m = 0;
    uint32_t seq0 = (uint32_t)NODE_GET(srv, frames);
    static uint8_t many[4096];
    for (uint32_t k = 0; k < 20; k++) {
        l = pattern(p, 0, seq0 + k, 40);
        dsig_net_frame_header(many + m, 0x10, (uint32_t)l);
        memcpy(many + m + DSIG_NET_HDR_BYTES, p, l);
        m += DSIG_NET_HDR_BYTES + l;
    }
    write_all(fd, many, m);
    WAIT_FOR(NODE_GET(srv, frames) == seq0 + 20, 2000);
    assert_int_equal(NODE_GET(srv, bad), 0);
    close(fd);
    node_stop(srv);
}

/* Garbage and an over-long length: that connection is dropped and counted; a good client keeps being
 * served, and new clients are accepted. */
static void test_garbage_dropped(void **state)
{
    (void)state;
    node *srv = node_start(NULL), *cli = node_start(NULL);
    dsig_net_addr bound;
    uint64_t lid = listen_on(srv, "tcp:127.0.0.1:0", &bound);
    uint64_t c;
    assert_int_equal(dsig_net_connect(cli->loop, &bound, &c), DSIG_OK);
    WAIT_FOR(dsig_net_is_up(cli->loop, c), 2000);
    uint8_t p[9000];
    size_t l = pattern(p, 0, 0, 9000);
    assert_int_equal(dsig_net_send(cli->loop, c, 0x10, p, l), DSIG_OK);
    WAIT_FOR(NODE_GET(srv, frames) == 1, 2000);

    int g = raw_connect(&bound);
    write_all(g, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
    assert_true(raw_sees_close(g, 2000));
    close(g);
    WAIT_FOR(STAT(srv, 0, dropped_malformed) == 1, 2000);

    g = raw_connect(&bound);
    uint8_t h[DSIG_NET_HDR_BYTES];
    dsig_net_frame_header(h, 0x10, 0xFFFFFFF0u);
    write_all(g, h, sizeof h);
    assert_true(raw_sees_close(g, 2000));
    close(g);
    WAIT_FOR(STAT(srv, 0, dropped_malformed) == 2, 2000);
    assert_int_equal(STAT(srv, lid, dropped_malformed), 2);
    assert_int_equal(NODE_GET(srv, last_reason), DSIG_NET_DOWN_MALFORMED);

    /* The good client still works, and a new one connects. */
    l = pattern(p, 0, 1, 9000);
    assert_int_equal(dsig_net_send(cli->loop, c, 0x10, p, l), DSIG_OK);
    WAIT_FOR(NODE_GET(srv, frames) == 2, 2000);
    uint64_t c2;
    assert_int_equal(dsig_net_connect(cli->loop, &bound, &c2), DSIG_OK);
    WAIT_FOR(dsig_net_is_up(cli->loop, c2), 2000);
    l = pattern(p, 1, 0, 9000);
    assert_int_equal(dsig_net_send(cli->loop, c2, 0x11, p, l), DSIG_OK);
    WAIT_FOR(NODE_GET(srv, frames) == 3, 2000);
    assert_int_equal(NODE_GET(srv, bad), 0);
    assert_int_equal(STAT(srv, 0, dropped_malformed), 2);
    /* Send-side argument checks. */
    assert_int_equal(dsig_net_send(cli->loop, c, 0x01, p, 8), DSIG_E_ARG);
    assert_int_equal(dsig_net_send(cli->loop, c, 0x80, p, 8), DSIG_E_ARG);
    assert_int_equal(dsig_net_send(cli->loop, c, 0x10, p, DSIG_NET_DEFAULT_MAX_PAYLOAD + 1), DSIG_E_TOO_LARGE);
    assert_int_equal(dsig_net_send(cli->loop, 12345, 0x10, p, 8), DSIG_E_STATE);
    node_stop(cli);
    node_stop(srv);
}

/* A peer that cuts the connection mid-frame: no frame is delivered, the loop reconnects, and frames
 * sent after the reconnection flow both ways. */
static void test_cut_midframe_reconnect(void **state)
{
    (void)state;
    dsig_net_config cfg;
    dsig_net_config_default(&cfg);
    cfg.backoff_min_ms = 10;
    cfg.backoff_max_ms = 100;
    node *cli = node_start(&cfg);
    dsig_net_addr a;
    int lfd = raw_listen(&a, 0);
    uint64_t c;
    assert_int_equal(dsig_net_connect(cli->loop, &a, &c), DSIG_OK);
    int fd = raw_accept(lfd, 2000);
    WAIT_FOR(NODE_GET(cli, ups) == 1, 2000);
    uint8_t fr[9100], p[9000];
    size_t l = pattern(p, 0, 0, 9000);
    dsig_net_frame_header(fr, 0x10, (uint32_t)l);
    memcpy(fr + DSIG_NET_HDR_BYTES, p, l);
    write_all(fd, fr, DSIG_NET_HDR_BYTES + l / 2);
    WAIT_FOR(STAT(cli, c, bytes_in) == DSIG_NET_HDR_BYTES + l / 2, 2000);
    close(fd);
    WAIT_FOR(NODE_GET(cli, downs) == 1, 2000);
    assert_int_equal(NODE_GET(cli, last_reason), DSIG_NET_DOWN_EOF);
    assert_int_equal(NODE_GET(cli, frames), 0);
    assert_int_equal(STAT(cli, c, cut_midframe), 1);
    /* Reconnection. */
    fd = raw_accept(lfd, 2000);
    WAIT_FOR(NODE_GET(cli, ups) == 2 && dsig_net_is_up(cli->loop, c), 2000);
    assert_int_equal(STAT(cli, c, reconnects), 1);
    for (uint32_t i = 0; i < 10; i++) {
        l = pattern(p, 0, i, 9000);
        dsig_net_frame_header(fr, 0x10, (uint32_t)l);
        memcpy(fr + DSIG_NET_HDR_BYTES, p, l);
        write_all(fd, fr, DSIG_NET_HDR_BYTES + l);
    }
    WAIT_FOR(NODE_GET(cli, frames) == 10, 2000);
    assert_int_equal(NODE_GET(cli, bad), 0);
    /* And the other direction: the raw peer reads a well-formed frame. */
    assert_int_equal(dsig_net_send(cli->loop, c, 0x33, "abc", 3), DSIG_OK);
    uint8_t got[DSIG_NET_HDR_BYTES + 3];
    size_t have = 0;
    while (have < sizeof got) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&pf, 1, 2000), 1);
        ssize_t r = read(fd, got + have, sizeof got - have);
        assert_true(r > 0);
        have += (size_t)r;
    }
    uint8_t t;
    uint32_t len;
    assert_int_equal(dsig_net_header_parse(got, 65536, &t, &len), DSIG_OK);
    assert_int_equal(t, 0x33);
    assert_int_equal(len, 3);
    assert_memory_equal(got + DSIG_NET_HDR_BYTES, "abc", 3);
    close(fd);
    node_stop(cli);
    close(lfd);
}

/* A peer that never reads: the send queue stops at its bound and sends report DSIG_E_WOULD_BLOCK;
 * send_wait times out; once the peer drains, send_wait succeeds. */
static void test_slow_reader_backpressure(void **state)
{
    (void)state;
    dsig_net_config cfg;
    dsig_net_config_default(&cfg);
    cfg.sendq_max_frames = 32;
    cfg.sendq_max_bytes = 96 * 1024;
    cfg.heartbeat_ms = 0;
    node *cli = node_start(&cfg);
    dsig_net_addr a;
    int lfd = raw_listen(&a, 4096);
    uint64_t c;
    assert_int_equal(dsig_net_connect(cli->loop, &a, &c), DSIG_OK);
    int fd = raw_accept(lfd, 2000);
    WAIT_FOR(dsig_net_is_up(cli->loop, c), 2000);
    static uint8_t p[4200];
    memset(p, 0xAB, sizeof p);
    int full = 0;
    unsigned sent = 0;
    for (unsigned i = 0; i < 200000 && !full; i++) {
        int rc = dsig_net_send(cli->loop, c, 0x11, p, sizeof p);
        if (rc == DSIG_E_WOULD_BLOCK)
            full = 1;
        else {
            assert_int_equal(rc, DSIG_OK);
            sent++;
        }
        if (i % 64 == 63)
            usleep(200); /* let the loop move what the kernel still takes */
    }
    assert_true(full);
    dsig_net_stats s;
    assert_int_equal(dsig_net_stats_get(cli->loop, c, &s), DSIG_OK);
    assert_true(s.queued_frames <= cfg.sendq_max_frames);
    assert_true(s.queued_bytes <= cfg.sendq_max_bytes + 1024);
    assert_true(s.send_full >= 1);
    /* Still full a moment later: send_wait gives up after its timeout. */
    uint64_t t0 = mono_ms();
    int rc = dsig_net_send_wait(cli->loop, c, 0x11, p, sizeof p, 100);
    if (rc == DSIG_E_WOULD_BLOCK)
        assert_true(mono_ms() - t0 >= 90);
    /* Drain everything the peer has: room appears and a waiting send gets through. */
    uint8_t sink[65536];
    uint64_t dl = mono_ms() + 3000;
    rc = DSIG_E_WOULD_BLOCK;
    while (rc == DSIG_E_WOULD_BLOCK && mono_ms() < dl) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 10) == 1)
            assert_true(read(fd, sink, sizeof sink) > 0);
        rc = dsig_net_send_wait(cli->loop, c, 0x11, p, sizeof p, 5);
    }
    assert_int_equal(rc, DSIG_OK);
    close(fd);
    node_stop(cli);
    close(lfd);
}

/* Heartbeats: a silent peer is dropped after heartbeat_ms × misses (accepted side), an outgoing
 * connection to a silent peer times out and reconnects, and two loops that talk stay up. */
static void test_heartbeat_timeout(void **state)
{
    (void)state;
    dsig_net_config cfg;
    dsig_net_config_default(&cfg);
    cfg.heartbeat_ms = 40;
    cfg.heartbeat_misses = 3;
    cfg.backoff_min_ms = 10;
    cfg.backoff_max_ms = 50;
    node *srv = node_start(&cfg);
    dsig_net_addr bound;
    char t[160];
    snprintf(t, sizeof t, "unix:%s/hb.sock", g_dir);
    listen_on(srv, t, &bound);
    /* 1. A raw client that says nothing. */
    uint64_t t0 = mono_ms();
    int fd = raw_connect(&bound);
    WAIT_FOR(NODE_GET(srv, downs) == 1, 2000);
    assert_true(mono_ms() - t0 >= 100);
    assert_int_equal(NODE_GET(srv, last_reason), DSIG_NET_DOWN_TIMEOUT);
    assert_int_equal(STAT(srv, 0, timeouts), 1);
    assert_true(raw_sees_close(fd, 2000));
    close(fd);
    /* 2. An outgoing connection to a raw listener that never answers: timeout, then reconnect. */
    node *cli = node_start(&cfg);
    dsig_net_addr a;
    int lfd = raw_listen(&a, 0);
    uint64_t c;
    assert_int_equal(dsig_net_connect(cli->loop, &a, &c), DSIG_OK);
    int f1 = raw_accept(lfd, 2000);
    WAIT_FOR(STAT(cli, c, timeouts) >= 1, 2000);
    int f2 = raw_accept(lfd, 2000);
    WAIT_FOR(STAT(cli, c, reconnects) >= 1, 2000);
    close(f1);
    close(f2);
    assert_int_equal(dsig_net_close(cli->loop, c), DSIG_OK);
    close(lfd);
    node_stop(cli);
    node_stop(srv);
    /* 3. Two loops with heartbeats stay up well past the timeout and measure a round trip. More
     * misses than above (240 ms of silence tolerated, 600 ms watched): a sanitizer build on a loaded
     * machine can stall a thread for ~100 ms, which must not count as a dead peer here. */
    cfg.heartbeat_misses = 6;
    node *srv3 = node_start(&cfg), *cli3 = node_start(&cfg);
    dsig_net_addr bound3;
    snprintf(t, sizeof t, "unix:%s/hb3.sock", g_dir);
    listen_on(srv3, t, &bound3);
    uint64_t c2;
    assert_int_equal(dsig_net_connect(cli3->loop, &bound3, &c2), DSIG_OK);
    WAIT_FOR(dsig_net_is_up(cli3->loop, c2), 2000);
    int downs = NODE_GET(srv3, downs);
    usleep(600 * 1000);
    assert_true(dsig_net_is_up(cli3->loop, c2));
    assert_int_equal(NODE_GET(srv3, downs), downs);
    assert_true(STAT(cli3, c2, pongs_in) >= 3);
    assert_true(STAT(cli3, c2, rtt_last_us) > 0 || STAT(cli3, c2, pongs_in) > 0);
    assert_int_equal(STAT(cli3, c2, timeouts), 0);
    node_stop(cli3);
    node_stop(srv3);
}

/* Several threads send at once on one connection; per-thread order and content are preserved. */
struct sender {
    node *n;
    uint64_t conn;
    uint8_t st;
    uint32_t count;
};

static void *sender_main(void *arg)
{
    struct sender *s = arg;
    static __thread uint8_t buf[9000];
    for (uint32_t i = 0; i < s->count; i++) {
        size_t l = pattern(buf, s->st, i, 9000);
        if (dsig_net_send_wait(s->n->loop, s->conn, (uint8_t)(0x10 + s->st), buf, l, 5000) != DSIG_OK)
            return (void *)1;
    }
    return NULL;
}

static void test_threaded_senders(void **state)
{
    (void)state;
    dsig_net_config cfg;
    dsig_net_config_default(&cfg);
    cfg.sendq_max_frames = 16; /* small: the senders really wait on each other */
    node *srv = node_start(NULL), *cli = node_start(&cfg);
    dsig_net_addr bound;
    char t[160];
    snprintf(t, sizeof t, "unix:%s/mt.sock", g_dir);
    listen_on(srv, t, &bound);
    uint64_t c;
    assert_int_equal(dsig_net_connect(cli->loop, &bound, &c), DSIG_OK);
    WAIT_FOR(dsig_net_is_up(cli->loop, c), 2000);
    pthread_t th[4];
    struct sender sd[4];
    for (int i = 0; i < 4; i++) {
        sd[i] = (struct sender){cli, c, (uint8_t)i, 400};
        pthread_create(&th[i], NULL, sender_main, &sd[i]);
    }
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_null(r);
    }
    WAIT_FOR(NODE_GET(srv, frames) == 1600, 4000);
    assert_int_equal(NODE_GET(srv, bad), 0);
    node_stop(cli);
    node_stop(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_tcp4),
        cmocka_unit_test(test_roundtrip_tcp6),
        cmocka_unit_test(test_roundtrip_uds),
        cmocka_unit_test(test_split_every_byte),
        cmocka_unit_test(test_garbage_dropped),
        cmocka_unit_test(test_cut_midframe_reconnect),
        cmocka_unit_test(test_slow_reader_backpressure),
        cmocka_unit_test(test_heartbeat_timeout),
        cmocka_unit_test(test_threaded_senders),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
