/*
 * tests/apps/test_apps_server.c — the auditable server and the client library in one process, on the
 * order book (no Redis needed):
 *  - every scheme end to end: orders matched, replies verified, receipts checked offline with only the
 *    server's public key (and refused when altered), the log audited; DSig on the fast path both ways;
 *  - bad input, each with its error and nothing logged or executed: garbage, a frame before HELLO, an
 *    over-long frame, an unknown client, a bad signature, a replay, a sequence gap, another server's tag,
 *    another client's id, an unknown operation, a client that disconnects in the middle of a request;
 *    and one that disconnects after a whole request: it is logged and executed (nothing logged is lost);
 *  - recovery: a restart continues the log, the book and the sequence numbers, cuts a torn last record,
 *    and refuses a log damaged in the middle.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps_fixture.h"

/* The number of bid and ask levels in a DEPTH reply. */
static void depth_counts(apps_client *c, size_t *bids, size_t *asks)
{
    apps_reply r;
    assert_int_equal(fx_order(c, APPS_BOOK_DEPTH, 0, 100, 0, &r), DSIG_OK);
    const uint8_t *p = r.result;
    apps_val v;
    apps_val_next(&p, &v); /* [bids, asks] */
    apps_val_next(&p, &v);
    *bids = v.n;
    for (size_t i = 0; i < v.n * 4; i++) { /* each level: array header + 3 ints */
        apps_val e;
        apps_val_next(&p, &e);
    }
    apps_val_next(&p, &v);
    *asks = v.n;
}

static void audit_expect(struct fx *f, int rc, uint64_t entries)
{
    apps_audit_result res;
    int got = apps_audit_verify(f->log, f->ks, &res);
    if (got != rc)
        print_error("audit: %d, %s\n", got, res.what);
    assert_int_equal(got, rc);
    if (rc == DSIG_OK)
        assert_int_equal(res.entries, entries);
}

static void one_scheme(int scheme)
{
    struct fx f;
    fx_init(&f, scheme);
    assert_int_equal(fx_start(&f), DSIG_OK);
    apps_client *a = fx_client(&f, 1), *b = fx_client(&f, 2);
    assert_int_equal(apps_client_scheme(a), scheme);
    apps_reply r;
    assert_int_equal(fx_order(a, APPS_BOOK_SELL, 1885, 200, 0, &r), DSIG_OK);
    assert_int_equal(r.index, 1);
    assert_int_equal(r.seq, 1);
    assert_int_equal(fx_order(b, APPS_BOOK_BUY, 1886, 150, 0, &r), DSIG_OK);
    assert_int_equal(r.index, 2);
    /* [order id, filled, resting, trades, [[maker, price, qty]]] */
    const uint8_t *p = r.result;
    apps_val v;
    apps_val_next(&p, &v);
    assert_int_equal(v.type, APPS_V_ARRAY);
    assert_int_equal(v.n, 5);
    apps_val_next(&p, &v);
    assert_int_equal(v.i, 2);
    apps_val_next(&p, &v);
    assert_int_equal(v.i, 150);
    /* the receipt: verified with only the server's public key, refused when altered */
    uint8_t *rc = malloc(r.receipt_len);
    memcpy(rc, r.receipt, r.receipt_len);
    size_t rl = r.receipt_len;
    apps_receipt_info info;
    if (scheme == APPS_SCHEME_NONE) {
        assert_int_equal(apps_receipt_check(rc, rl, f.server_pub, &info), DSIG_E_UNSUPPORTED);
    } else {
        assert_int_equal(apps_receipt_check(rc, rl, f.server_pub, &info), DSIG_OK);
        assert_int_equal(info.client, 2);
        assert_int_equal(info.index, 2);
        rc[4 + 70] ^= 1; /* the log index */
        assert_int_equal(apps_receipt_check(rc, rl, f.server_pub, &info), DSIG_E_VERIFY);
    }
    free(rc);
    /* cancel: only the owner */
    assert_int_equal(fx_order(b, APPS_BOOK_CANCEL, 0, 0, 1, &r), DSIG_OK);
    p = r.result;
    apps_val_next(&p, &v);
    assert_int_equal(v.type, APPS_V_ERROR); /* executed and logged, refused by the book */
    assert_int_equal(fx_order(a, APPS_BOOK_CANCEL, 0, 0, 1, &r), DSIG_OK);
    if (scheme == APPS_SCHEME_DSIG) {
        /* warm: after the syncs, replies and requests verify on the fast path */
        for (int i = 0; i < 20; i++)
            assert_int_equal(fx_order(a, APPS_BOOK_BUY, 1800, 1, 0, &r), DSIG_OK);
        assert_true(r.fast);
        assert_int_equal(apps_client_sync(a), DSIG_OK);
        uint64_t fast, slow;
        apps_client_server_paths(a, &fast, &slow);
        assert_true(fast >= 20);
    }
    size_t bids, asks;
    depth_counts(a, &bids, &asks);
    assert_int_equal(asks, 0);
    apps_client_close(a);
    apps_client_close(b);
    apps_server_stats st = fx_stats(&f);
    fx_stop(&f);
    audit_expect(&f, scheme == APPS_SCHEME_NONE ? DSIG_E_VERIFY : DSIG_OK, st.entries);
    fx_free(&f);
}

static void test_scheme_none(void **state)
{
    (void)state;
    one_scheme(APPS_SCHEME_NONE);
}

static void test_scheme_sig(void **state)
{
    (void)state;
    one_scheme(APPS_SCHEME_SIG);
}

static void test_scheme_dsig(void **state)
{
    (void)state;
    one_scheme(APPS_SCHEME_DSIG);
}

/* The next non-batch frame is an ERROR with this code. */
static void expect_error(struct raw *r, unsigned code)
{
    uint8_t type;
    unsigned got;
    assert_int_equal(raw_next(r, &type, &got), DSIG_OK);
    assert_int_equal(type, APPS_T_ERROR);
    assert_int_equal(got, code);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, APPS_SCHEME_DSIG);
    assert_int_equal(fx_start(&f), DSIG_OK);
    uint8_t type;
    unsigned code;
    uint8_t body[APPS_BOOK_BODY], frame[8192];
    size_t len;

    /* garbage instead of a frame header: closed */
    struct raw r;
    assert_int_equal(raw_open(&f, &r, 0), DSIG_E_UNKNOWN_SIGNER); /* id 0 is nobody */
    raw_close(&r);
    assert_int_equal(raw_open(&f, &r, 3), DSIG_E_UNKNOWN_SIGNER); /* unregistered */
    raw_close(&r);
    {
        apps_io io;
        int fd = raw_connect(&f, &io);
        assert_int_equal(write(fd, "GET / HTTP/1.0\r\n\r\n", 18), 18);
        const uint8_t *p;
        uint32_t l;
        int rc = apps_io_read(&io, 5000, 5000, &type, &p, &l);
        if (rc == DSIG_OK) { /* an ERROR naming the bad header, then the close */
            assert_int_equal(type, APPS_T_ERROR);
            rc = apps_io_read(&io, 5000, 5000, &type, &p, &l);
        }
        assert_int_equal(rc, DSIG_E_IO);
        apps_io_clear(&io);
    }
    /* a frame before HELLO, and an over-long announced frame: closed */
    {
        apps_io io;
        int fd = raw_connect(&f, &io);
        assert_int_equal(apps_io_write(fd, APPS_T_SYNC, NULL, 0), DSIG_OK);
        const uint8_t *p;
        uint32_t l;
        assert_int_equal(apps_io_read(&io, 5000, 5000, &type, &p, &l), DSIG_OK);
        assert_int_equal(type, APPS_T_ERROR);
        assert_int_equal(p[0], APPS_ERR_PROTOCOL);
        apps_io_clear(&io);
    }
    assert_int_equal(raw_open(&f, &r, 2), DSIG_OK);
    uint8_t hdr[DSIG_NET_HDR_BYTES];
    dsig_net_frame_header(hdr, APPS_T_REQUEST, 16u * 1024 * 1024);
    raw_send(&r, hdr, sizeof hdr);
    expect_error(&r, APPS_ERR_MALFORMED);
    assert_int_equal(raw_next(&r, &type, &code), DSIG_E_IO);
    raw_close(&r);

    /* requests from client 2 over a raw connection */
    assert_int_equal(raw_open(&f, &r, 2), DSIG_OK);
    assert_int_equal(r.next_seq, 1);
    apps_book_body(APPS_BOOK_BUY, 1880, 100, 0, body);
    raw_request(&f, &r, 2, 1, body, sizeof body, 1, frame, &len); /* a flipped signature byte */
    raw_send(&r, frame, len);
    expect_error(&r, APPS_ERR_SIGNATURE);
    raw_request(&f, &r, 2, 1, body, sizeof body, 0, frame, &len);
    raw_send(&r, frame, len);
    assert_int_equal(raw_next(&r, &type, &code), DSIG_OK);
    assert_int_equal(type, APPS_T_REPLY); /* logged as entry 1 */
    raw_send(&r, frame, len);                    /* the same request again: a replay */
    expect_error(&r, APPS_ERR_SEQUENCE);
    raw_request(&f, &r, 2, 5, body, sizeof body, 0, frame, &len); /* a gap */
    raw_send(&r, frame, len);
    expect_error(&r, APPS_ERR_SEQUENCE);
    raw_request(&f, &r, 1, 2, body, sizeof body, 0, frame, &len); /* another client's id on this connection */
    raw_send(&r, frame, len);
    expect_error(&r, APPS_ERR_PROTOCOL);
    memset(r.tag, 0x11, sizeof r.tag); /* meant for another server */
    raw_request(&f, &r, 2, 2, body, sizeof body, 0, frame, &len);
    raw_send(&r, frame, len);
    expect_error(&r, APPS_ERR_PROTOCOL);
    raw_close(&r);
    assert_int_equal(raw_open(&f, &r, 2), DSIG_OK);
    assert_int_equal(r.next_seq, 2); /* only the good request advanced it */
    uint8_t bad[APPS_BOOK_BODY];
    apps_book_body(9, 1, 1, 0, bad); /* no such operation */
    raw_request(&f, &r, 2, 2, bad, sizeof bad, 0, frame, &len);
    raw_send(&r, frame, len);
    expect_error(&r, APPS_ERR_COMMAND);
    /* disconnect in the middle of a request: nothing of it is logged or executed */
    raw_request(&f, &r, 2, 2, body, sizeof body, 0, frame, &len);
    raw_send(&r, frame, len / 2);
    raw_close(&r);
    apps_client *a = fx_client(&f, 1); /* the server still serves */
    apps_server_stats st = fx_stats(&f);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.refused_signature, 1);
    assert_int_equal(st.refused_replay, 2);
    assert_int_equal(st.refused_command, 1);
    assert_true(st.refused_unknown >= 2);
    assert_true(st.refused_malformed >= 5);

    /* disconnect after a whole request, before the reply: logged and executed all the same */
    assert_int_equal(raw_open(&f, &r, 2), DSIG_OK);
    apps_book_body(APPS_BOOK_SELL, 1890, 100, 0, body);
    raw_request(&f, &r, 2, 2, body, sizeof body, 0, frame, &len);
    raw_send(&r, frame, len);
    raw_close(&r);
    for (int i = 0; i < 500 && fx_stats(&f).entries < 2; i++)
        usleep(10000);
    size_t bids, asks;
    depth_counts(a, &bids, &asks); /* logged after entry 2, so executed after it */
    assert_int_equal(bids, 1);
    assert_int_equal(asks, 1);
    apps_client_close(a);
    st = fx_stats(&f);
    fx_stop(&f);
    audit_expect(&f, DSIG_OK, st.entries);
    fx_free(&f);
}

static void test_recovery(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, APPS_SCHEME_SIG);
    assert_int_equal(fx_start(&f), DSIG_OK);
    apps_client *a = fx_client(&f, 1);
    apps_reply r;
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(fx_order(a, APPS_BOOK_BUY, 1880 + i, 100, 0, &r), DSIG_OK);
    apps_client_close(a);
    fx_stop(&f);
    struct stat st0;
    assert_int_equal(stat(f.log, &st0), 0);
    /* a crash in the middle of an append leaves a torn last record */
    int fd = open(f.log, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "DSAL\x01\x01\x02\x00\x00\x00\x01\x00", 12), 12);
    close(fd);
    assert_int_equal(fx_start(&f), DSIG_OK);
    struct stat st1;
    assert_int_equal(stat(f.log, &st1), 0);
    assert_int_equal(st1.st_size, st0.st_size); /* cut off */
    assert_int_equal(fx_stats(&f).entries, 5);
    a = fx_client(&f, 1);
    assert_int_equal(apps_client_next_seq(a), 6);
    size_t bids, asks;
    depth_counts(a, &bids, &asks); /* the book was rebuilt: five bid levels */
    assert_int_equal(bids, 5);
    assert_int_equal(fx_order(a, APPS_BOOK_SELL, 1880, 500, 0, &r), DSIG_OK);
    assert_int_equal(r.index, 7); /* 6 was the depth query */
    apps_client_close(a);
    fx_stop(&f);
    audit_expect(&f, DSIG_OK, 7);
    /* a record damaged in the middle: the server refuses to start on it */
    fd = open(f.log, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, 200), 1);
    b ^= 0x20;
    assert_int_equal(pwrite(fd, &b, 1, 200), 1);
    close(fd);
    assert_int_equal(fx_start(&f), DSIG_E_FORMAT);
    assert_non_null(strstr(dsig_last_error_detail(), "book.log"));
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scheme_none),
        cmocka_unit_test(test_scheme_sig),
        cmocka_unit_test(test_scheme_dsig),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_recovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
