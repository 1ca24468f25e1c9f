/*
 * tests/net/test_net_frame.c — the transport's frame format without sockets: header round trip and
 * every rejection, a stream split at every byte boundary (one and two cuts, and byte by byte), the
 * callback stopping at a frame boundary, a differential fuzz of the decoder (random chunking of random
 * and mutated streams must give the same frames and the same verdict as one-shot decoding), and
 * address parsing.
 */
#include <string.h>

#include "net/net.h"
#include "testutil.h"

/* Frames seen by the decoder, flattened for comparison. */
typedef struct seen {
    size_t n;
    uint8_t types[512];
    uint32_t lens[512];
    uint8_t data[1 << 17];
    size_t used;
    int stop_after;              /* stop (return 7) after this many frames; 0 = never */
} seen;

/* Record a frame. */
static int record(void *arg, uint8_t type, const uint8_t *payload, uint32_t len)
{
    seen *s = arg;
    assert_true(s->n < 512);
    assert_true(s->used + len <= sizeof s->data);
    s->types[s->n] = type;
    s->lens[s->n] = len;
    if (len)
        memcpy(s->data + s->used, payload, len);
    s->used += len;
    s->n++;
    return s->stop_after && s->n == (size_t)s->stop_after ? 7 : 0;
}

/* Append a frame to a buffer. */
static size_t put_frame(uint8_t *out, uint8_t type, const uint8_t *p, uint32_t len)
{
    dsig_net_frame_header(out, type, len);
    if (len)
        memcpy(out + DSIG_NET_HDR_BYTES, p, len);
    return DSIG_NET_HDR_BYTES + len;
}

/* A test stream: empty, 1-byte, ping, 300-byte and a batch-sized frame. */
static size_t sample_stream(uint8_t *buf, seen *expect)
{
    static uint8_t p[4300];
    tu_fill(p, sizeof p, 5);
    size_t n = 0;
    n += put_frame(buf + n, 0x10, NULL, 0);
    n += put_frame(buf + n, 0x11, p, 1);
    n += put_frame(buf + n, DSIG_NET_T_PING, p, 8);
    n += put_frame(buf + n, 0x7F, p, 300);
    n += put_frame(buf + n, 0x20, p, 4200);
    memset(expect, 0, sizeof *expect);
    dsig_net_decoder d;
    dsig_net_decoder_init(&d, DSIG_NET_DEFAULT_MAX_PAYLOAD);
    assert_int_equal(dsig_net_decoder_feed(&d, buf, n, record, expect, NULL), DSIG_OK);
    assert_int_equal(expect->n, 5);
    dsig_net_decoder_clear(&d);
    return n;
}

/* Two runs recorded the same frames. */
static void assert_same(const seen *a, const seen *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->used, b->used);
    assert_memory_equal(a->types, b->types, a->n);
    assert_memory_equal(a->lens, b->lens, a->n * sizeof a->lens[0]);
    assert_memory_equal(a->data, b->data, a->used);
}

/* Header encode/parse and each rejection. */
static void test_header(void **state)
{
    (void)state;
    uint8_t h[DSIG_NET_HDR_BYTES], t;
    uint32_t l;
    dsig_net_frame_header(h, 0x42, 4200);
    assert_int_equal(dsig_net_header_parse(h, 65536, &t, &l), DSIG_OK);
    assert_int_equal(t, 0x42);
    assert_int_equal(l, 4200);
    static const uint8_t want[12] = {'D', 'S', 'G', 'N', 1, 0x42, 0, 0, 0, 0, 0x10, 0x68};
    assert_memory_equal(h, want, 12);
    /* Every byte of magic, version and reserved matters. */
    for (int i = 0; i < 8; i++) {
        if (i == 5)
            continue;
        uint8_t b[12];
        memcpy(b, h, 12);
        b[i] ^= 0x01;
        assert_int_equal(dsig_net_header_parse(b, 65536, &t, &l), DSIG_E_FORMAT);
    }
    /* Types: 0, 0x03..0x0F, 0x80..0xFF are unknown. */
    for (unsigned ty = 0; ty < 256; ty++) {
        dsig_net_frame_header(h, (uint8_t)ty, 8);
        int ok = ty == 1 || ty == 2 || (ty >= 0x10 && ty <= 0x7F);
        assert_int_equal(dsig_net_header_parse(h, 65536, &t, &l), ok ? DSIG_OK : DSIG_E_FORMAT);
    }
    /* Heartbeats are exactly 8 bytes. */
    dsig_net_frame_header(h, DSIG_NET_T_PING, 7);
    assert_int_equal(dsig_net_header_parse(h, 65536, &t, &l), DSIG_E_FORMAT);
    dsig_net_frame_header(h, DSIG_NET_T_PONG, 9);
    assert_int_equal(dsig_net_header_parse(h, 65536, &t, &l), DSIG_E_FORMAT);
    /* Over-long: one past the maximum, and the largest u32. */
    dsig_net_frame_header(h, 0x10, 65537);
    assert_int_equal(dsig_net_header_parse(h, 65536, &t, &l), DSIG_E_TOO_LARGE);
    dsig_net_frame_header(h, 0x10, 65536);
    assert_int_equal(dsig_net_header_parse(h, 65536, &t, &l), DSIG_OK);
    dsig_net_frame_header(h, 0x10, 0xFFFFFFFFu);
    assert_int_equal(dsig_net_header_parse(h, 65536, &t, &l), DSIG_E_TOO_LARGE);
}

/* The sample stream cut at every byte (one cut), fed byte by byte, and at every pair of cuts in a
 * shorter prefix: always the same frames, and a partial frame is reported as mid-frame. */
static void test_every_split(void **state)
{
    (void)state;
    static uint8_t buf[8192];
    static seen expect, got;
    size_t n = sample_stream(buf, &expect);
    dsig_net_decoder d;
    dsig_net_decoder_init(&d, DSIG_NET_DEFAULT_MAX_PAYLOAD);
    for (size_t i = 0; i <= n; i++) {
        memset(&got, 0, sizeof got);
        dsig_net_decoder_reset(&d);
        size_t used;
        assert_int_equal(dsig_net_decoder_feed(&d, buf, i, record, &got, &used), DSIG_OK);
        assert_int_equal(used, i);
        assert_int_equal(dsig_net_decoder_feed(&d, buf + i, n - i, record, &got, &used), DSIG_OK);
        assert_int_equal(used, n - i);
        assert_same(&expect, &got);
        assert_int_equal(dsig_net_decoder_midframe(&d), 0);
    }
    memset(&got, 0, sizeof got);
    dsig_net_decoder_reset(&d);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(dsig_net_decoder_feed(&d, buf + i, 1, record, &got, NULL), DSIG_OK);
        if (i + 1 < DSIG_NET_HDR_BYTES)
            assert_int_equal(dsig_net_decoder_midframe(&d), 1);
    }
    assert_int_equal(dsig_net_decoder_midframe(&d), 0);
    assert_same(&expect, &got);
    /* Two cuts over the first three frames plus part of the fourth (exhaustive, ~10^4 pairs). */
    size_t m = 3 * DSIG_NET_HDR_BYTES + 9 + 100;
    seen pre;
    memset(&pre, 0, sizeof pre);
    dsig_net_decoder_reset(&d);
    dsig_net_decoder_feed(&d, buf, m, record, &pre, NULL);
    for (size_t i = 0; i <= m; i++)
        for (size_t j = i; j <= m; j++) {
            got.n = got.used = 0;
            dsig_net_decoder_reset(&d);
            dsig_net_decoder_feed(&d, buf, i, record, &got, NULL);
            dsig_net_decoder_feed(&d, buf + i, j - i, record, &got, NULL);
            dsig_net_decoder_feed(&d, buf + j, m - j, record, &got, NULL);
            assert_same(&pre, &got);
            assert_int_equal(dsig_net_decoder_midframe(&d), 1);
        }
    dsig_net_decoder_clear(&d);
}

/* A callback that stops returns its value at a frame boundary; the rest can be fed later. */
static void test_callback_stop(void **state)
{
    (void)state;
    static uint8_t buf[8192];
    static seen expect, got;
    size_t n = sample_stream(buf, &expect);
    dsig_net_decoder d;
    dsig_net_decoder_init(&d, DSIG_NET_DEFAULT_MAX_PAYLOAD);
    memset(&got, 0, sizeof got);
    got.stop_after = 2;
    size_t used;
    assert_int_equal(dsig_net_decoder_feed(&d, buf, n, record, &got, &used), 7);
    assert_int_equal(got.n, 2);
    assert_int_equal(used, 2 * DSIG_NET_HDR_BYTES + 1);
    got.stop_after = 0;
    assert_int_equal(dsig_net_decoder_feed(&d, buf + used, n - used, record, &got, NULL), DSIG_OK);
    assert_same(&expect, &got);
    dsig_net_decoder_clear(&d);
}

/* Bad input is sticky: frames before it are delivered, nothing after it. */
static void test_bad_stream(void **state)
{
    (void)state;
    uint8_t buf[256];
    seen *got = calloc(1, sizeof *got);
    size_t n = put_frame(buf, 0x10, (const uint8_t *)"hello", 5);
    memcpy(buf + n, "GET / HTTP/1.1\r\n\r\n", 18);
    n += 18;
    n += put_frame(buf + n, 0x10, (const uint8_t *)"world", 5);
    dsig_net_decoder d;
    dsig_net_decoder_init(&d, 1024);
    assert_int_equal(dsig_net_decoder_feed(&d, buf, n, record, got, NULL), DSIG_E_FORMAT);
    assert_int_equal(got->n, 1);
    assert_int_equal(dsig_net_decoder_feed(&d, buf, n, record, got, NULL), DSIG_E_FORMAT);
    assert_int_equal(got->n, 1);
    /* Over-long announced length is refused at the header, before any payload arrives. */
    dsig_net_decoder_reset(&d);
    dsig_net_frame_header(buf, 0x10, 1025);
    assert_int_equal(dsig_net_decoder_feed(&d, buf, 11, record, got, NULL), DSIG_OK);
    assert_int_equal(dsig_net_decoder_feed(&d, buf + 11, 1, record, got, NULL), DSIG_E_TOO_LARGE);
    assert_null(d.buf); /* nothing was allocated for it */
    dsig_net_decoder_clear(&d);
    free(got);
}

/* xorshift64 for the fuzz. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Differential fuzz: random streams (valid frames, mutated, truncated, pure noise) decoded in one
 * piece and in random chunks must give the same frames and the same final verdict. */
static void test_fuzz(void **state)
{
    (void)state;
    static uint8_t buf[40000];
    static seen a, b;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    dsig_net_decoder d1, d2;
    dsig_net_decoder_init(&d1, 4096);
    dsig_net_decoder_init(&d2, 4096);
    for (int it = 0; it < 3000; it++) {
        size_t n = 0;
        int nf = (int)(rnd(&s) % 8);
        for (int f = 0; f < nf; f++) {
            uint32_t len = (uint32_t)(rnd(&s) % 5000);
            uint8_t type = (uint8_t)(0x10 + rnd(&s) % 0x70);
            if (rnd(&s) % 8 == 0) {
                type = DSIG_NET_T_PING;
                len = 8;
            }
            dsig_net_frame_header(buf + n, type, len);
            tu_fill(buf + n + DSIG_NET_HDR_BYTES, len, rnd(&s));
            n += DSIG_NET_HDR_BYTES + len;
        }
        switch (rnd(&s) % 4) {
        case 0: /* flip a few bytes */
            for (int k = 0; n && k < 3; k++)
                buf[rnd(&s) % n] ^= (uint8_t)(1u << (rnd(&s) % 8));
            break;
        case 1: /* truncate */
            if (n)
                n = rnd(&s) % n;
            break;
        case 2: /* noise */
            n = rnd(&s) % 300;
            tu_fill(buf, n, rnd(&s));
            break;
        default:
            break;
        }
        a.n = a.used = b.n = b.used = 0;
        dsig_net_decoder_reset(&d1);
        dsig_net_decoder_reset(&d2);
        int r1 = dsig_net_decoder_feed(&d1, buf, n, record, &a, NULL);
        int r2 = DSIG_OK;
        for (size_t pos = 0; pos < n;) {
            size_t c = 1 + rnd(&s) % (rnd(&s) % 2 ? 16 : 3000);
            if (c > n - pos)
                c = n - pos;
            r2 = dsig_net_decoder_feed(&d2, buf + pos, c, record, &b, NULL);
            pos += c;
            if (r2 != DSIG_OK)
                break;
        }
        assert_int_equal(r1, r2);
        assert_same(&a, &b);
        assert_true(r1 == DSIG_OK || r1 == DSIG_E_FORMAT || r1 == DSIG_E_TOO_LARGE);
        assert_true(d1.cap <= 4096);
    }
    dsig_net_decoder_clear(&d1);
    dsig_net_decoder_clear(&d2);
}

/* Address syntax: accepted forms round-trip through format, bad ones are refused. */
static void test_addr(void **state)
{
    (void)state;
    const char *good[] = {"tcp:127.0.0.1:7000", "tcp:[::1]:0", "tcp:0.0.0.0:65535", "unix:/tmp/x.sock"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        dsig_net_addr a;
        char t[DSIG_NET_ADDR_TEXT_MAX];
        assert_int_equal(dsig_net_addr_parse(good[i], &a), DSIG_OK);
        assert_int_equal(dsig_net_addr_format(&a, t, sizeof t), DSIG_OK);
        assert_string_equal(t, good[i]);
    }
    const char *bad[] = {"", "127.0.0.1:7000", "tcp:127.0.0.1", "tcp:127.0.0.1:65536", "tcp:127.0.0.1:-1",
                         "tcp:localhost:80", "tcp:[::1:80", "tcp:[::1]80", "tcp::80", "unix:", "udp:1.2.3.4:5",
                         "tcp:1.2.3.4:12a"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        dsig_net_addr a;
        assert_int_equal(dsig_net_addr_parse(bad[i], &a), DSIG_E_ARG);
    }
    char longp[200] = "unix:/";
    memset(longp + 6, 'a', 150);
    longp[156] = 0;
    dsig_net_addr a;
    assert_int_equal(dsig_net_addr_parse(longp, &a), DSIG_E_ARG);
    char small[8];
    assert_int_equal(dsig_net_addr_parse("tcp:127.0.0.1:1", &a), DSIG_OK);
    assert_int_equal(dsig_net_addr_format(&a, small, sizeof small), DSIG_E_BUFFER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),      cmocka_unit_test(test_every_split),
        cmocka_unit_test(test_callback_stop), cmocka_unit_test(test_bad_stream),
        cmocka_unit_test(test_fuzz),        cmocka_unit_test(test_addr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
