/*
 * tests/serve/test_serve_conns.c — the connection guard of `dsig serve` (src/serve/conns.c): its
 * deadlines, checked by serve_conns_sweep at clock readings the test chooses.
 *
 * The regression: a connection's thread starts a phase (serve_conn_headers_done) without the guard's
 * mutex, so the guard's sweep can run with a clock reading taken just before the phase began. For a
 * body phase the old sweep then computed `now - start` in unsigned arithmetic, got a huge number, took
 * the upload window as over with no byte received, and cut the connection as too slow a fraction of a
 * millisecond into its body: the client got no response at all (fuzz_serve_http's intermittent "no
 * answer" in docs/fuzzing.md; 1 in about 100 000 ML-DSA verify requests under load). Each case also
 * checks that the deadline still cuts once it is really over, so that "never cuts" cannot pass.
 *
 * The guard's own thread sweeps with the real clock meanwhile; the limits (60 s) are far beyond the
 * test's run time, so only the sweeps of the test can cut.
 */
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"
#include "serve/serve_internal.h"

#define S_NS 1000000000ull

struct fixture {
    struct serve_conns *g;
    int sv[2];
    struct serve_conn *c;
};

/* A guard (header deadline 60 s, at least 1024 B/s over 60 s windows) and one connection on a socket
 * pair (the guard shuts it down when it cuts). */
static void open_one(struct fixture *f)
{
    const struct serve_conn_limits l = {.header_timeout_s = 60, .min_rate = 1024, .window_s = 60, .per_address = 0};
    assert_int_equal(serve_conns_new(&f->g, &l, NULL, NULL), DSIG_OK);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, f->sv), 0);
    f->c = serve_conn_open(f->g, f->sv[0], NULL);
    assert_non_null(f->c);
}

static void close_one(struct fixture *f)
{
    serve_conn_closed(f->g, f->c);
    serve_conns_free(f->g);
    close(f->sv[0]);
    close(f->sv[1]);
}

/* A body that began after the sweep read the clock is not cut; a body with no byte for a whole window
 * is. */
static void test_body_started_after_the_clock_reading(void **state)
{
    (void)state;
    struct fixture f;
    open_one(&f);
    const uint64_t before = serve_now_ns() - 1; /* strictly before the phase's start */
    serve_conn_headers_done(f.c, 1);
    const uint64_t start = serve_now_ns();
    serve_conns_sweep(f.g, before);
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_NONE);
    serve_conns_sweep(f.g, start + 1); /* within the first window */
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_NONE);
    serve_conns_sweep(f.g, start + 61 * S_NS); /* a whole window without a byte */
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_SLOW);
    close_one(&f);
}

/* A body that brings its bytes is not cut at the end of a window; one that then stops is, at the end
 * of the next. */
static void test_body_rate(void **state)
{
    (void)state;
    struct fixture f;
    open_one(&f);
    serve_conn_headers_done(f.c, 1);
    const uint64_t start = serve_now_ns();
    serve_conn_body(f.c, 61 * 1024);
    serve_conns_sweep(f.g, start + 61 * S_NS);
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_NONE);
    serve_conns_sweep(f.g, start + 122 * S_NS);
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_SLOW);
    close_one(&f);
}

/* The header deadline: not before the connection (or its next request) started, not within it; cut
 * after it. A request in progress (no body, being answered) is never cut. */
static void test_header_deadline(void **state)
{
    (void)state;
    struct fixture f;
    open_one(&f);
    const uint64_t opened = serve_now_ns();
    serve_conns_sweep(f.g, opened - S_NS);
    serve_conns_sweep(f.g, opened + 59 * S_NS);
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_NONE);
    serve_conn_headers_done(f.c, 0);
    serve_conns_sweep(f.g, opened + 600 * S_NS);
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_NONE);
    const uint64_t before = serve_now_ns() - 1;
    serve_conn_request_done(f.c); /* the next request's head deadline starts now */
    const uint64_t next = serve_now_ns();
    serve_conns_sweep(f.g, before);
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_NONE);
    serve_conns_sweep(f.g, next + 61 * S_NS);
    assert_int_equal(serve_conn_cut(f.c), SERVE_CUT_HEADERS);
    close_one(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body_started_after_the_clock_reading),
        cmocka_unit_test(test_body_rate),
        cmocka_unit_test(test_header_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
