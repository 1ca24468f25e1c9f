/*
 * tests/ping/test_ping.c — `dsig ping` harness (bench/bench_ping_*.c): parsing, statistics, JSON and table
 * rows, the latency target line, and a quick loopback run that must produce a row per scheme.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "bench_ping.h"

/* Parse a NULL-terminated list of arguments (argv[0] = "ping" is added). */
static int parse(ping_opts *o, char *err, size_t errlen, ...)
{
    char *argv[32] = {"ping"};
    int argc = 1;
    va_list ap;
    va_start(ap, errlen);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
        argv[argc++] = a;
    va_end(ap);
    err[0] = '\0';
    return ping_parse(argc, argv, o, err, errlen);
}

/* No option: 8 B and 1 KiB, three schemes, loopback. */
static void test_defaults(void **state)
{
    (void)state;
    ping_opts o;
    char err[256];
    assert_int_equal(parse(&o, err, sizeof err, NULL), 0);
    assert_int_equal(o.nsizes, 2);
    assert_int_equal(o.sizes[0], 8);
    assert_int_equal(o.sizes[1], 1024);
    assert_int_equal(o.schemes, 7);
    assert_true(o.count > 0 && o.runs > 0 && o.warmup >= 50);
    assert_null(o.config);
    assert_int_equal(o.json, 0);
}

/* Every option, both spellings. */
static void test_options(void **state)
{
    (void)state;
    ping_opts o;
    char err[256];
    assert_int_equal(parse(&o, err, sizeof err, "--size", "8,1K,2KiB,8k", "--count=200", "--runs", "2",
                           "--warmup", "0", "--schemes", "dsig,none", "--json", "-q", NULL),
                     0);
    assert_int_equal(o.nsizes, 4);
    assert_int_equal(o.sizes[1], 1024);
    assert_int_equal(o.sizes[2], 2048);
    assert_int_equal(o.sizes[3], 8192);
    assert_int_equal(o.count, 200);
    assert_int_equal(o.runs, 2);
    assert_int_equal(o.warmup, 0);
    assert_int_equal(o.schemes, (1u << PING_DSIG) | (1u << PING_NONE));
    assert_true(o.json && o.quiet);
    assert_int_equal(parse(&o, err, sizeof err, "--sizes=64", "--schemes", "sodium", NULL), 0);
    assert_int_equal(o.sizes[0], 64);
    assert_int_equal(o.schemes, 1u << PING_SODIUM);
    assert_int_equal(parse(&o, err, sizeof err, "--config", "c.json", "--id", "3", "--key", "k.jwk",
                           "--peer", "1", NULL),
                     0);
    assert_string_equal(o.config, "c.json");
    assert_string_equal(o.key, "k.jwk");
    assert_int_equal(o.id, 3);
    assert_int_equal(o.peer, 1);
    assert_int_equal(parse(&o, err, sizeof err, "--help", NULL), 1);
    assert_int_equal(parse(&o, err, sizeof err, "-h", NULL), 1);
}

/* Bad input: exit -1 with a message naming the option. */
static void test_errors(void **state)
{
    (void)state;
    ping_opts o;
    char err[256];
    static const char *const bad[][3] = {
        {"--size", "0", "--size"},       {"--size", "9K", "--size"},   {"--size", "8,x", "--size"},
        {"--size", "8M", "--size"},      {"--count", "0", "--count"},  {"--count", "-1", "--count"},
        {"--runs", "0", "--runs"},       {"--schemes", "rsa", "--schemes"}, {"--id", "5", "--config"},
        {"--key", "k", "--config"},      {"--config", "c", "--id"},    {"--nope", NULL, "unknown"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = bad[i][1] ? parse(&o, err, sizeof err, (char *)bad[i][0], (char *)bad[i][1], NULL)
                          : parse(&o, err, sizeof err, (char *)bad[i][0], NULL);
        if (r != -1 || !strstr(err, bad[i][2]))
            fail_msg("%s %s: r=%d err=\"%s\"", bad[i][0], bad[i][1] ? bad[i][1] : "", r, err);
    }
    assert_int_equal(parse(&o, err, sizeof err, "--count", NULL), -1);
    assert_non_null(strstr(err, "needs a value"));
    assert_int_equal(parse(&o, err, sizeof err, "--config", "c", "--id", "2", "--key", "k", "--peer", "2", NULL),
                     -1);
}

/* Percentiles: nearest rank over 1..100. */
static void test_stats(void **state)
{
    (void)state;
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = 100 - i;
    ping_stat s = ping_stat_of(v, 100);
    assert_true(s.median == 50.5);
    assert_true(s.p90 == 90);
    assert_true(s.p99 == 99);
    ping_stat z = ping_stat_of(v, 0);
    assert_true(z.median == 0 && z.p99 == 0);
}

/* A row with fixed numbers. */
static ping_row mkrow(int scheme, size_t bytes, double rtt)
{
    ping_row r;
    memset(&r, 0, sizeof r);
    r.scheme = scheme;
    r.msg_bytes = bytes;
    r.sig_bytes = scheme == PING_DSIG ? 1559 : scheme == PING_SODIUM ? 64 : 0;
    r.rounds = 10;
    r.runs = 1;
    r.rtt = (ping_stat){rtt, rtt + 1, rtt + 2};
    r.sign = (ping_stat){100, 200, 300};
    r.verify = (ping_stat){400, 500, 600};
    r.transmit = (ping_stat){7000, 8000, 9000};
    r.fast_path_fraction = scheme == PING_DSIG ? 1.0 : -1.0;
    r.bg_cpu_initiator = 0.25;
    r.bg_cpu_responder = 0.5;
    return r;
}

/* JSON: one object per line with the documented fields and types. */
static void test_json(void **state)
{
    (void)state;
    static const char *const num[] = {"msg_bytes", "rtt_median_ns", "rtt_p90_ns", "rtt_p99_ns", "sign_median_ns",
                                      "transmit_median_ns", "verify_median_ns", "verify_p99_ns", "sig_bytes",
                                      "rounds", "bg_cpu_core_fraction_initiator",
                                      "bg_cpu_core_fraction_responder"};
    for (int s = 0; s < PING_NSCHEMES; s++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ping_row r = mkrow(s, 8, 20000);
        ping_json_row(f, &r);
        fclose(f);
        assert_int_equal(buf[len - 1], '\n');
        assert_null(memchr(buf, '\n', len - 1));
        json_error_t je;
        json_t *j = json_loads(buf, 0, &je);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "scheme")), ping_scheme_name(s));
        for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
            if (!json_is_number(json_object_get(j, num[i])))
                fail_msg("%s is not a number in %s", num[i], buf);
        assert_int_equal(json_integer_value(json_object_get(j, "msg_bytes")), 8);
        assert_true(json_number_value(json_object_get(j, "rtt_median_ns")) == 20000);
        assert_true(json_number_value(json_object_get(j, "bg_cpu_core_fraction_initiator")) == 0.25);
        assert_true(json_number_value(json_object_get(j, "bg_cpu_core_fraction_responder")) == 0.5);
        json_t *fp = json_object_get(j, "fast_path_fraction");
        assert_non_null(fp);
        if (s == PING_DSIG)
            assert_true(json_number_value(fp) == 1.0);
        else
            assert_true(json_is_null(fp));
        json_decref(j);
        free(buf);
    }
    assert_string_equal(ping_scheme_name(PING_SODIUM), "sodium-ed25519");
    assert_null(ping_scheme_name(PING_NSCHEMES));
}

/* Table: header and a line per row, microseconds. */
static void test_table(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ping_table_header(f);
    ping_row r = mkrow(PING_DSIG, 1024, 24000);
    ping_table_row(f, &r);
    fclose(f);
    assert_non_null(strstr(buf, "scheme"));
    assert_non_null(strstr(buf, "\ndsig "));
    assert_non_null(strstr(buf, "24.00"));
    assert_non_null(strstr(buf, "100%"));
    assert_non_null(strstr(buf, "bg-cpu"));
    assert_non_null(strstr(buf, "  25.0   50.0\n"));
    free(buf);
}

/* Target line: the ratio of added latencies against 1/5. */
static void test_target(void **state)
{
    (void)state;
    ping_row rows[3] = {mkrow(PING_NONE, 8, 16000), mkrow(PING_SODIUM, 8, 146000), mkrow(PING_DSIG, 8, 24000)};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(ping_target(f, rows, 3, 8), 0);        /* 8 us vs 130 us */
    rows[2].rtt.median = 16000 + 27000;                     /* 27 > 130 / 5 = 26 */
    assert_int_equal(ping_target(f, rows, 3, 8), 1);
    assert_int_equal(ping_target(f, rows, 2, 8), 0);        /* no dsig row */
    assert_int_equal(ping_target(f, rows, 3, 1024), 0);     /* no row of that size */
    fclose(f);
    assert_true(strncmp(buf, "PASS 8 B", 8) == 0);
    assert_non_null(strstr(buf, "\nFAIL 8 B"));
    assert_non_null(strstr(buf, "\nSKIP 8 B"));
    assert_non_null(strstr(buf, "\nSKIP 1024 B"));
    free(buf);
}

/* Plane target line: each end's background CPU against one core, from the dsig row. */
static void test_target_bg(void **state)
{
    (void)state;
    ping_row rows[3] = {mkrow(PING_NONE, 8, 16000), mkrow(PING_SODIUM, 8, 146000), mkrow(PING_DSIG, 8, 24000)};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(ping_target_bg(f, rows, 3, 8), 0);     /* 25 % and 50 % */
    rows[2].bg_cpu_responder = 1.2;
    assert_int_equal(ping_target_bg(f, rows, 3, 8), 1);
    assert_int_equal(ping_target_bg(f, rows, 2, 8), 0);     /* no dsig row */
    fclose(f);
    static const char pass_line[] = "PASS 8 B: background plane <= 1 core per process";
    assert_true(strncmp(buf, pass_line, sizeof pass_line - 1) == 0);
    assert_non_null(strstr(buf, "\nFAIL 8 B: background plane <= 1 core per process"));
    assert_non_null(strstr(buf, "\nSKIP 8 B: background plane"));
    free(buf);
}

/* Rows collected by the quick run. */
typedef struct collect {
    ping_row rows[8];
    size_t n;
} collect;

/* Sink of the quick run. */
static void sink(void *ctx, const ping_row *r)
{
    collect *c = ctx;
    if (c->n < 8)
        c->rows[c->n++] = *r;
}

/* A real (small) loopback run: a child process answers; one row per scheme, sane numbers. */
static void test_quick_run(void **state)
{
    (void)state;
    ping_opts o;
    char err[256];
    assert_int_equal(parse(&o, err, sizeof err, "--count", "200", "--size", "8", "--runs", "1", "--warmup", "20",
                           "--json", "-q", NULL),
                     0);
    collect c;
    memset(&c, 0, sizeof c);
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w"); /* the rows are checked through the sink */
    int rc = ping_run(&o, sink, &c);
    fclose(stdout);
    stdout = saved;
    assert_int_equal(rc, 0);
    assert_int_equal(c.n, 3);
    for (size_t i = 0; i < c.n; i++) {
        const ping_row *r = &c.rows[i];
        assert_int_equal(r->scheme, (int)i);
        assert_int_equal(r->msg_bytes, 8);
        assert_int_equal(r->rounds, 200);
        assert_true(r->rtt.median > 0 && r->rtt.median <= r->rtt.p90 && r->rtt.p90 <= r->rtt.p99);
        assert_true(r->transmit.median <= r->rtt.median);
        double cores = 2.0 * (double)sysconf(_SC_NPROCESSORS_ONLN);
        if (!(r->bg_cpu_initiator >= 0 && r->bg_cpu_initiator <= cores && r->bg_cpu_responder >= 0 &&
              r->bg_cpu_responder <= cores))
            fail_msg("%s: background CPU %f / %f cores out of [0, %f]", ping_scheme_name(r->scheme),
                     r->bg_cpu_initiator, r->bg_cpu_responder, cores);
    }
    assert_int_equal(c.rows[PING_SODIUM].sig_bytes, 64);
    assert_true(c.rows[PING_DSIG].sig_bytes > 64);
    assert_true(c.rows[PING_DSIG].fast_path_fraction >= 0 && c.rows[PING_DSIG].fast_path_fraction <= 1);
    assert_true(c.rows[PING_NONE].fast_path_fraction < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults), cmocka_unit_test(test_options), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_stats),    cmocka_unit_test(test_json),    cmocka_unit_test(test_table),
        cmocka_unit_test(test_target),   cmocka_unit_test(test_target_bg), cmocka_unit_test(test_quick_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
