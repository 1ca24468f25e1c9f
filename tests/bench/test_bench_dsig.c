/*
 * `dsig bench dsig` harness tests (no timing assertions): option parsing (profiles, overrides, every
 * error), the primary configuration, statistics, the JSON and table row formats, the targets check,
 * and a tiny real run that must produce the expected rows (the DSig rows only when the runtime is in
 * the build; otherwise that part is skipped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "bench.h"
#include "bench_dsig.h"

/* Parse a NULL-terminated argument list (argv[0] = "dsig" is added). */
static int parse(bench_dsig_opts *o, char *err, const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"dsig";
    for (; *args; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    return bench_dsig_parse(argc, argv, o, err, 512);
}

static void test_defaults(void **state)
{
    (void)state;
    bench_dsig_opts o;
    char err[512];
    const char *none[] = {NULL};
    assert_int_equal(parse(&o, err, none), 0);
    assert_int_equal(o.nsizes, 4);
    assert_true(o.sizes[0] == 8 && o.sizes[1] == 32 && o.sizes[2] == 1024 && o.sizes[3] == 8192);
    assert_int_equal(o.count, 8192);
    assert_int_equal(o.nbatch, 11);
    assert_int_equal(o.batch[0], 1);
    assert_int_equal(o.batch[10], 1024);
    assert_int_equal(o.nhbss, 5);
    assert_int_equal(o.hbss[0].w, 2);
    assert_int_equal(o.hbss[3].w, 16);
    assert_true(o.hbss[4].w == 0 && o.hbss[4].k == 64 && o.hbss[4].log_t == 8);
    assert_int_equal(o.nhash, 3);
    assert_false(o.json || o.quick);

    const char *quick[] = {"--quick", NULL};
    assert_int_equal(parse(&o, err, quick), 0);
    assert_true(o.quick);
    assert_int_equal(o.nsizes, 2);
    assert_int_equal(o.count, 256);
    assert_true(o.nbatch == 1 && o.batch[0] == 128);
    assert_true(o.nhbss == 1 && o.hbss[0].w == 4);
    assert_true(o.nhash == 1 && o.hash[0] == BENCH_DSIG_HARAKA);

    const char *help[] = {"--help", NULL};
    assert_int_equal(parse(&o, err, help), 1);
}

static void test_options(void **state)
{
    (void)state;
    bench_dsig_opts o;
    char err[512];
    /* Explicit options win over --quick in any order; --opt=value works. */
    const char *a[] = {"--sizes", "0,8,1K,2KiB,1M", "--count=77", "--quick", "--batch-sizes", "1,1024",
                       "--w", "16,hors,HORS32,hors16,2", "--hash=blake3,SHA256", "--json", "--seed",
                       "42", NULL};
    assert_int_equal(parse(&o, err, a), 0);
    assert_int_equal(o.nsizes, 5);
    assert_true(o.sizes[0] == 0 && o.sizes[1] == 8 && o.sizes[2] == 1024 && o.sizes[3] == 2048 &&
                o.sizes[4] == 1048576);
    assert_int_equal(o.count, 77);
    assert_true(o.nbatch == 2 && o.batch[0] == 1 && o.batch[1] == 1024);
    assert_int_equal(o.nhbss, 5);
    assert_int_equal(o.hbss[0].w, 16);
    assert_true(o.hbss[1].k == 64 && o.hbss[1].log_t == 8);
    assert_true(o.hbss[2].k == 32 && o.hbss[2].log_t == 9);
    assert_true(o.hbss[3].k == 16 && o.hbss[3].log_t == 12);
    assert_int_equal(o.hbss[4].w, 2);
    assert_true(o.nhash == 2 && o.hash[0] == BENCH_DSIG_BLAKE3 && o.hash[1] == BENCH_DSIG_SHA256);
    assert_true(o.json && o.quick);
    assert_true(o.seed == 42);
}

static void test_bad_options(void **state)
{
    (void)state;
    static const struct {
        const char *args[4];
        const char *needle;
    } bad[] = {
        {{"--sizes", "", NULL}, "empty list"},
        {{"--sizes", "8,x", NULL}, "bad size \"x\"; valid:"},
        {{"--sizes", "2M", NULL}, "valid:"},
        {{"--sizes", "-8", NULL}, "valid:"},
        {{"--sizes", "8Q", NULL}, "valid:"},
        {{"--count", "0", NULL}, "--count"},
        {{"--count", "10x", NULL}, "--count"},
        {{"--batch-sizes", "3", NULL}, "powers of two"},
        {{"--batch-sizes", "2048", NULL}, "powers of two"},
        {{"--batch-sizes", "0", NULL}, "powers of two"},
        {{"--w", "3", NULL}, "hors"},
        {{"--w", "32", NULL}, "hors"},
        {{"--w", "hors8", NULL}, "hors"},
        {{"--hash", "md5", NULL}, "valid: haraka, sha256, blake3"},
        {{"--hash", NULL}, "needs a value"},
        {{"--seed", "x", NULL}, "--seed"},
        {{"--frobnicate", NULL}, "unknown option"},
        {{"--w", "2,2,2,2,2,2,2,2,2", NULL}, "at most"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bench_dsig_opts o;
        char err[512] = "";
        assert_int_equal(parse(&o, err, bad[i].args), -1);
        if (!strstr(err, bad[i].needle))
            fail_msg("case %zu: \"%s\" does not contain \"%s\"", i, err, bad[i].needle);
    }
}

static void test_primary(void **state)
{
    (void)state;
    bench_dsig_opts o;
    char err[512];
    const char *none[] = {NULL};
    assert_int_equal(parse(&o, err, none), 0);
    bench_dsig_cfg c = bench_dsig_primary(&o);
    assert_true(c.hbss.w == 4 && c.hash == BENCH_DSIG_HARAKA && c.batch == 128);
    const char *other[] = {"--w", "hors,8", "--hash", "blake3", "--batch-sizes", "16,64", NULL};
    assert_int_equal(parse(&o, err, other), 0);
    c = bench_dsig_primary(&o);
    assert_true(c.hbss.w == 0 && c.hbss.k == 64 && c.hash == BENCH_DSIG_BLAKE3 && c.batch == 16);
    assert_string_equal(bench_dsig_hash_name(BENCH_DSIG_SHA256), "sha256");
    assert_null(bench_dsig_hash_name(7));
}

static void test_stats(void **state)
{
    (void)state;
    bench_dsig_row r;
    memset(&r, 0, sizeof r);
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = (double)(100 - i); /* 100 .. 1, unsorted */
    bench_dsig_fill_stats(&r, v, 100);
    assert_int_equal(r.n, 100);
    assert_true(r.median_ns == 50.5);
    assert_true(r.p90_ns == 90 && r.p99_ns == 99);
    assert_true(r.min_ns == 1 && r.max_ns == 100);
    assert_true(r.ops_per_s > 19801980.1 && r.ops_per_s < 19801980.3); /* 100 calls in 5050 ns */
}

/* A DSig row and a baseline row with known values. */
static bench_dsig_row dsig_row(const char *op, double med)
{
    bench_dsig_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.scheme, sizeof r.scheme, "dsig");
    snprintf(r.op, sizeof r.op, "%s", op);
    snprintf(r.metric, sizeof r.metric, "latency");
    r.cfg.hbss.w = 4;
    r.cfg.hash = BENCH_DSIG_HARAKA;
    r.cfg.batch = 128;
    r.msg_bytes = 8;
    r.sig_bytes = 1584;
    r.n = 512;
    r.median_ns = med;
    r.p90_ns = med + 1;
    r.p99_ns = med + 2.5;
    r.min_ns = med - 1;
    r.max_ns = med + 10;
    r.ops_per_s = 1e9 / med;
    return r;
}

static bench_dsig_row base_row(const char *scheme, const char *op, double med)
{
    bench_dsig_row r = dsig_row(op, med);
    snprintf(r.scheme, sizeof r.scheme, "%s", scheme);
    memset(&r.cfg, 0, sizeof r.cfg);
    r.cfg.hash = -1;
    r.sig_bytes = 64;
    return r;
}

/* Print a row with `fn` into a string. */
static char *render(void (*fn)(FILE *, const bench_dsig_row *), const bench_dsig_row *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fn(f, r);
    fclose(f);
    return buf;
}

static void test_json(void **state)
{
    (void)state;
    bench_dsig_row r = dsig_row("verify-fast", 2500);
    char *s = render(bench_dsig_json_row, &r);
    assert_string_equal(s, "{\"scheme\":\"dsig\",\"op\":\"verify-fast\",\"msg_bytes\":8,\"median_ns\":2500.0,"
                           "\"p90_ns\":2501.0,\"p99_ns\":2502.5,\"metric\":\"latency\",\"hbss\":\"wots\","
                           "\"w\":4,\"k\":null,\"t\":null,\"hash\":\"haraka\",\"batch\":128,"
                           "\"sig_bytes\":1584,\"n\":512,\"min_ns\":2499.0,\"max_ns\":2510.0,"
                           "\"ops_per_s\":400000.0}\n");
    free(s);

    /* HORS and a baseline: valid JSON with the documented fields and types. */
    bench_dsig_row h = dsig_row("sign", 300);
    h.cfg.hbss = (bench_dsig_hbss){.k = 32, .log_t = 9};
    h.cfg.hash = BENCH_DSIG_SHA256;
    snprintf(h.metric, sizeof h.metric, "throughput");
    bench_dsig_row b = base_row("openssl-ed25519", "verify", 60000);
    const bench_dsig_row *rows[] = {&h, &b};
    for (size_t i = 0; i < 2; i++) {
        s = render(bench_dsig_json_row, rows[i]);
        json_error_t jerr;
        json_t *j = json_loads(s, 0, &jerr);
        if (!j)
            fail_msg("not JSON (%s): %s", jerr.text, s);
        assert_true(json_is_string(json_object_get(j, "scheme")));
        assert_true(json_is_string(json_object_get(j, "op")));
        assert_true(json_is_integer(json_object_get(j, "msg_bytes")));
        assert_true(json_is_number(json_object_get(j, "median_ns")));
        assert_true(json_is_number(json_object_get(j, "p90_ns")));
        assert_true(json_is_number(json_object_get(j, "p99_ns")));
        if (i == 0) {
            assert_string_equal(json_string_value(json_object_get(j, "hbss")), "hors");
            assert_int_equal(json_integer_value(json_object_get(j, "k")), 32);
            assert_int_equal(json_integer_value(json_object_get(j, "t")), 512);
            assert_true(json_is_null(json_object_get(j, "w")));
            assert_string_equal(json_string_value(json_object_get(j, "hash")), "sha256");
            assert_string_equal(json_string_value(json_object_get(j, "metric")), "throughput");
        } else {
            assert_string_equal(json_string_value(json_object_get(j, "scheme")), "openssl-ed25519");
            assert_true(json_is_null(json_object_get(j, "hash")));
            assert_true(json_is_null(json_object_get(j, "batch")));
            assert_true(json_is_null(json_object_get(j, "w")));
        }
        json_decref(j);
        assert_non_null(strchr(s, '\n'));
        assert_true(strchr(s, '\n') == s + strlen(s) - 1); /* exactly one line */
        free(s);
    }
}

static void test_table(void **state)
{
    (void)state;
    bench_dsig_row r = dsig_row("sign", 412.0);
    char *s = render(bench_dsig_table_row, &r);
    assert_string_equal(s, "dsig            | w=4    | haraka |   128 | sign        | lat    |     8 |"
                           "   1584 |    512 |      0.412 |      0.413 |      0.414 |     2427184\n");
    free(s);
    bench_dsig_row b = base_row("sodium-ed25519", "verify", 34561.0);
    s = render(bench_dsig_table_row, &b);
    assert_non_null(strstr(s, "sodium-ed25519  | -      | -      |     - | verify      | lat    |"));
    assert_non_null(strstr(s, "34.561"));
    free(s);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    bench_dsig_table_header(f);
    fclose(f);
    assert_non_null(strstr(buf, "SCHEME "));
    assert_non_null(strstr(buf, "MEDIAN-us"));
    free(buf);
}

/* Run the targets over rows; returns the FAIL count and the text in *out. */
static int targets(const bench_dsig_row *rows, size_t n, char **out)
{
    size_t len = 0;
    FILE *f = open_memstream(out, &len);
    bench_dsig_cfg p = {.hbss = {.w = 4}, .hash = BENCH_DSIG_HARAKA, .batch = 128};
    int fails = bench_dsig_targets(f, rows, n, &p);
    fclose(f);
    return fails;
}

static void test_targets(void **state)
{
    (void)state;
    char *s;
    /* All met (stretch goals too). */
    bench_dsig_row ok[] = {dsig_row("sign", 300), dsig_row("verify-fast", 2000),
                           base_row("sodium-ed25519", "sign", 11700),
                           base_row("sodium-ed25519", "verify", 34500)};
    assert_int_equal(targets(ok, 4, &s), 0);
    assert_non_null(strstr(s, "PASS sign median 0.300 us <= 0.70 us"));
    assert_non_null(strstr(s, "PASS verify-fast median 2.000 us <= 5.10 us"));
    assert_non_null(strstr(s, "PASS sign 39.0x faster than sodium-ed25519 sign"));
    assert_non_null(strstr(s, "PASS verify-fast 17.2x faster than sodium-ed25519 verify"));
    assert_non_null(strstr(s, "PASS (stretch) sign"));
    assert_null(strstr(s, "FAIL"));
    free(s);
    /* Sign too slow: absolute and relative targets fail; a stretch failure is not counted. */
    bench_dsig_row slow[] = {dsig_row("sign", 800), dsig_row("verify-fast", 4000),
                             base_row("sodium-ed25519", "sign", 11700),
                             base_row("sodium-ed25519", "verify", 34500)};
    assert_int_equal(targets(slow, 4, &s), 2);
    assert_non_null(strstr(s, "FAIL sign median 0.800 us"));
    assert_non_null(strstr(s, "FAIL sign 14.6x faster"));
    assert_non_null(strstr(s, "FAIL (stretch) verify-fast"));
    free(s);
    /* Rows of another configuration or size do not count: everything is SKIP. */
    bench_dsig_row other[] = {dsig_row("sign", 300), dsig_row("verify-fast", 2000),
                              base_row("sodium-ed25519", "sign", 11700)};
    other[0].cfg.batch = 64;
    other[1].msg_bytes = 32;
    assert_int_equal(targets(other, 3, &s), 0);
    assert_null(strstr(s, "PASS"));
    assert_non_null(strstr(s, "SKIP sign median"));
    assert_non_null(strstr(s, "SKIP verify-fast >= 7x"));
    free(s);
}

/* Collects the rows of a real run. */
typedef struct collected {
    bench_dsig_row rows[256];
    size_t n;
} collected;

static void sink(void *ctx, const bench_dsig_row *r)
{
    collected *c = ctx;
    if (c->n < 256)
        c->rows[c->n++] = *r;
}

/* Count rows matching (scheme, op, metric, msg_bytes). */
static size_t count_rows(const collected *c, const char *scheme, const char *op, const char *metric,
                         size_t msg_bytes)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const bench_dsig_row *r = &c->rows[i];
        if (!strcmp(r->scheme, scheme) && !strcmp(r->op, op) && !strcmp(r->metric, metric) &&
            r->msg_bytes == msg_bytes) {
            assert_true(r->median_ns >= 0 && r->p90_ns >= r->median_ns && r->p99_ns >= r->p90_ns);
            assert_true(r->n > 0 && r->ops_per_s > 0);
            n++;
        }
    }
    return n;
}

static void test_quick_run(void **state)
{
    (void)state;
    bench_dsig_opts o;
    char err[512];
    const char *a[] = {"--quick", "--count", "24", "--json", NULL};
    assert_int_equal(parse(&o, err, a), 0);
    collected *c = calloc(1, sizeof *c);
    assert_non_null(c);
    assert_int_equal(bench_dsig_run(&o, sink, c), 0);
    static const char *const bl[] = {"sodium-ed25519", "openssl-ed25519"};
    for (size_t b = 0; b < 2; b++) {
        for (size_t s = 0; s < 2; s++) {
            size_t bytes = s ? 32 : 8;
            assert_int_equal(count_rows(c, bl[b], "sign", "latency", bytes), 1);
            assert_int_equal(count_rows(c, bl[b], "verify", "latency", bytes), 1);
        }
        assert_int_equal(count_rows(c, bl[b], "sign", "throughput", 8), 1);
        assert_int_equal(count_rows(c, bl[b], "verify", "throughput", 8), 1);
    }
    if (!bench_dsig_available()) {
        assert_int_equal(c->n, 12);
        free(c);
        skip(); /* the DSig runtime is not in this build yet: baselines checked, DSig rows skipped */
    }
    for (size_t s = 0; s < 2; s++) {
        size_t bytes = s ? 32 : 8;
        assert_int_equal(count_rows(c, "dsig", "sign", "latency", bytes), 1);
        assert_int_equal(count_rows(c, "dsig", "verify-fast", "latency", bytes), 1);
        assert_int_equal(count_rows(c, "dsig", "verify-slow", "latency", bytes), 1);
    }
    assert_int_equal(count_rows(c, "dsig", "sign", "throughput", 8), 1);
    assert_int_equal(count_rows(c, "dsig", "verify", "throughput", 8), 1);
    assert_int_equal(c->n, 12 + 8);
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->rows[i].scheme, "dsig") == 0) {
            assert_true(c->rows[i].cfg.hbss.w == 4 && c->rows[i].cfg.batch == 128);
            assert_true(c->rows[i].sig_bytes > 64);
        }
    }
    free(c);
}

static void test_main_dispatch(void **state)
{
    (void)state;
    char *help[] = {(char *)"bench", (char *)"dsig", (char *)"--help", NULL};
    assert_int_equal(dsig_bench_main(3, help), 0);
    char *bad[] = {(char *)"bench", (char *)"dsig", (char *)"--w", (char *)"5", NULL};
    assert_int_equal(dsig_bench_main(4, bad), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults), cmocka_unit_test(test_options),
        cmocka_unit_test(test_bad_options), cmocka_unit_test(test_primary),
        cmocka_unit_test(test_stats),    cmocka_unit_test(test_json),
        cmocka_unit_test(test_table),    cmocka_unit_test(test_targets),
        cmocka_unit_test(test_main_dispatch), cmocka_unit_test(test_quick_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
