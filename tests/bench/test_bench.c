/*
 * Benchmark harness tests: everything that can be checked without looking at timings — argument
 * parsing (good and bad), table/CSV/JSON formatting of known rows, payload determinism, statistics,
 * and a tiny real run producing a well-formed CSV and SVG.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "bench.h"
#include "bench_internal.h"

#define MIB (1024ull * 1024ull)

/* Parse a stream command line given as a NULL-terminated list (argv[0] = "stream"). */
static int parse_stream(bench_stream_opts *o, char *err, const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"stream";
    for (; *args; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    return bench_stream_parse(argc, argv, o, err, BENCH_ERR_LEN);
}

static void test_stream_defaults(void **state)
{
    (void)state;
    bench_stream_opts o;
    char err[BENCH_ERR_LEN];
    const char *none[] = {NULL};
    assert_int_equal(parse_stream(&o, err, none), 0);
    assert_int_equal(o.nsizes, 5);
    assert_true(o.sizes[0] == 1 * MIB && o.sizes[4] == 100 * MIB);
    assert_int_equal(o.warmup, 5);
    assert_int_equal(o.measure, 10);
    assert_int_equal(o.chunk, 64 * 1024);
    assert_int_equal(o.source, BENCH_SRC_MEM);
    assert_int_equal(o.format, BENCH_FMT_JWS);
    assert_null(o.out_dir); /* files only with --out */
    assert_null(o.algs);
    assert_int_equal(o.nrsa_bits, 0);

    const char *quick[] = {"--quick", NULL};
    assert_int_equal(parse_stream(&o, err, quick), 0);
    assert_int_equal(o.nsizes, 2);
    assert_true(o.sizes[0] == 1 * MIB && o.sizes[1] == 10 * MIB);
    assert_int_equal(o.warmup, 1);
    assert_int_equal(o.measure, 3);
}

static void test_stream_options(void **state)
{
    (void)state;
    bench_stream_opts o;
    char err[BENCH_ERR_LEN];
    /* Explicit options win over --quick whatever the order; --opt=value works too. */
    const char *a[] = {"--sizes", "1,64K,2MiB", "--quick", "--warmup=0", "--measure", "7",
                       "--seed", "0x10", "--chunk", "4K", "--source", "pipe", "--format", "raw",
                       "--rsa-bits", "2048,3072", "--out", "/tmp/x", "--alg", "HS*", "--json", NULL};
    assert_int_equal(parse_stream(&o, err, a), 0);
    assert_int_equal(o.nsizes, 3);
    assert_true(o.sizes[0] == MIB && o.sizes[1] == 64 * 1024 && o.sizes[2] == 2 * MIB);
    assert_int_equal(o.warmup, 0);
    assert_int_equal(o.measure, 7);
    assert_true(o.seed == 16);
    assert_int_equal(o.chunk, 4096);
    assert_int_equal(o.source, BENCH_SRC_PIPE);
    assert_int_equal(o.format, BENCH_FMT_RAW);
    assert_int_equal(o.nrsa_bits, 2);
    assert_int_equal(o.rsa_bits[1], 3072);
    assert_string_equal(o.out_dir, "/tmp/x");
    assert_string_equal(o.algs, "HS*");
    assert_true(o.json && o.quick);

    const char *help[] = {"--help", NULL};
    assert_int_equal(parse_stream(&o, err, help), 1);
}

static void test_stream_bad_options(void **state)
{
    (void)state;
    static const struct {
        const char *args[4];
        const char *needle; /* the message must say this */
    } bad[] = {
        {{"--sizes", "0", NULL}, "valid:"},
        {{"--sizes", "1.5", NULL}, "bad size \"1.5\""},
        {{"--sizes", "10X", NULL}, "valid:"},
        {{"--sizes", "100B", NULL}, "valid:"},
        {{"--sizes", "-1", NULL}, "valid:"},
        {{"--sizes", "5G", NULL}, "4 GiB"},
        {{"--sizes", "", NULL}, "empty"},
        {{"--warmup", "x", NULL}, "--warmup"},
        {{"--measure", "0", NULL}, "valid: 1"},
        {{"--chunk", "0", NULL}, "--chunk"},
        {{"--source", "socket", NULL}, "valid: mem, file, pipe"},
        {{"--format", "cbor", NULL}, "valid: jws, raw"},
        {{"--rsa-bits", "1024", NULL}, "2048"},
        {{"--seed", "12ab", NULL}, "--seed"},
        {{"--measure", NULL}, "needs a value"},
        {{"--frobnicate", NULL}, "unknown option"},
        {{"--out", "", NULL}, "--out"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bench_stream_opts o;
        char err[BENCH_ERR_LEN] = "";
        assert_int_equal(parse_stream(&o, err, bad[i].args), -1);
        if (!strstr(err, bad[i].needle))
            fail_msg("case %zu: \"%s\" does not contain \"%s\"", i, err, bad[i].needle);
    }
}

static void test_sig_options(void **state)
{
    (void)state;
    bench_sig_opts o;
    char err[BENCH_ERR_LEN];
    char *def[] = {(char *)"sig", NULL};
    assert_int_equal(bench_sig_parse(1, def, &o, err, sizeof err), 0);
    assert_int_equal(o.msg_bytes, 32);
    assert_null(o.out_dir);
    char *a[] = {(char *)"sig", (char *)"--size", (char *)"1K", (char *)"--max-time", (char *)"0.5",
                 (char *)"--quick", (char *)"--measure", (char *)"9", NULL};
    assert_int_equal(bench_sig_parse(8, a, &o, err, sizeof err), 0);
    assert_int_equal(o.msg_bytes, 1024);
    assert_int_equal(o.measure, 9);
    assert_int_equal(o.warmup, 1);
    assert_true(o.max_time == 0.5);
    char *b[] = {(char *)"sig", (char *)"--max-time", (char *)"-1", NULL};
    assert_int_equal(bench_sig_parse(3, b, &o, err, sizeof err), -1);
    assert_non_null(strstr(err, "--max-time"));
}

static void test_parse_size(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(bench_parse_size("100", &v), 0);
    assert_true(v == 100 * MIB);
    assert_int_equal(bench_parse_size("512k", &v), 0);
    assert_true(v == 512 * 1024);
    assert_int_equal(bench_parse_size("1GiB", &v), 0);
    assert_true(v == 1024 * MIB);
    assert_int_equal(bench_parse_size("3MB", &v), 0);
    assert_true(v == 3 * MIB);
    assert_int_equal(bench_parse_size("", &v), -1);
    assert_int_equal(bench_parse_size("M", &v), -1);
    assert_int_equal(bench_parse_size("1Mx", &v), -1);
    assert_int_equal(bench_parse_size("99999999999999999999", &v), -1);
}

static void test_select_algs(void **state)
{
    (void)state;
    const dsig_alg *algs[BENCH_MAX_ALGS];
    size_t n = 99;
    char err[BENCH_ERR_LEN] = "";
    assert_int_equal(bench_select_algs("NO-SUCH-ALG", algs, BENCH_MAX_ALGS, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "NO-SUCH-ALG"));
    assert_non_null(strstr(err, "valid:"));
    if (dsig_alg_count() > 0)
        assert_non_null(strstr(err, dsig_alg_name(dsig_alg_at(0))));
    assert_int_equal(bench_select_algs("Z*", algs, BENCH_MAX_ALGS, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "pattern"));

    assert_int_equal(bench_select_algs(NULL, algs, BENCH_MAX_ALGS, &n, err, sizeof err), 0);
    assert_int_equal(n, dsig_alg_count());
    if (dsig_alg_count() == 0)
        return;
    /* A name given twice and also matched by a glob appears once, in registry order. */
    const char *first = dsig_alg_name(dsig_alg_at(0));
    char pat[128];
    snprintf(pat, sizeof pat, "%s,*,%s", first, first);
    assert_int_equal(bench_select_algs(pat, algs, BENCH_MAX_ALGS, &n, err, sizeof err), 0);
    assert_int_equal(n, dsig_alg_count());
    assert_ptr_equal(algs[0], dsig_alg_at(0));
    assert_int_equal(bench_select_algs(first, algs, BENCH_MAX_ALGS, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
}

static void test_payload_deterministic(void **state)
{
    (void)state;
    enum { N = 100000 };
    uint8_t *a = malloc(N), *b = malloc(N), *c = malloc(N);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    bench_payload_fill(a, N, 42);
    bench_payload_fill(b, N, 42);
    assert_memory_equal(a, b, N);               /* same seed, same bytes */
    bench_payload_fill(c, N, 43);
    assert_memory_not_equal(a, c, N);           /* another seed, other bytes */
    bench_payload_fill(b, 1001, 42);
    assert_memory_equal(a, b, 1001);            /* a shorter payload is a prefix */
    /* Known answer: splitmix64 from state 0 starts 0xe220a8397b1dcdaf, written little-endian. */
    uint8_t k[9];
    bench_payload_fill(k, sizeof k, 0);
    static const uint8_t want[8] = {0xaf, 0xcd, 0x1d, 0x7b, 0x39, 0xa8, 0x20, 0xe2};
    assert_memory_equal(k, want, 8);
    free(a);
    free(b);
    free(c);
}

static void test_stats(void **state)
{
    (void)state;
    double odd[] = {5, 1, 3};
    bench_stat s = bench_stat_of(odd, 3);
    assert_true(s.median == 3 && s.min == 1 && s.max == 5);
    double even[] = {4, 1, 3, 2};
    s = bench_stat_of(even, 4);
    assert_true(s.median == 2.5 && s.min == 1 && s.max == 4);
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    assert_true(bench_percentile(v, 100, 0.90) == 90);
    assert_true(bench_percentile(v, 100, 0.99) == 99);
    assert_true(bench_percentile(v, 3, 0.99) == 3);
    assert_true(bench_percentile(v, 1, 0.5) == 1);
}

/* Efficiency above 1.10 is flagged: the operation contains the bare hash, so the baseline was
 * disturbed. */
static void test_eff_suspect(void **state)
{
    (void)state;
    assert_false(bench_eff_suspect(-1));
    assert_false(bench_eff_suspect(0.97));
    assert_false(bench_eff_suspect(1.10));
    assert_true(bench_eff_suspect(1.11));
}

/* Tick steps are 1, 2 or 5 times a power of ten, at most 8 of them up to the maximum. */
static void test_svg_ticks(void **state)
{
    (void)state;
    static const struct {
        double max, step;
    } t[] = {{1, 0.2}, {8, 1}, {9, 2}, {1234, 200}, {1990, 500}, {4000, 500}, {0.3, 0.05}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        double s = bench_svg_tick_step(t[i].max);
        assert_true(s > t[i].step * 0.999 && s < t[i].step * 1.001);
        assert_true(t[i].max / s <= 8);
    }
}

/* A row with known values. */
static bench_row known_row(void)
{
    bench_row r;
    memset(&r, 0, sizeof r);
    strcpy(r.kty, "oct");
    strcpy(r.alg, "HS256");
    strcpy(r.label, "HS256");
    r.key_bits = 256;
    r.bytes = 100 * MIB;
    r.sign_ms = (bench_stat){56.4, 55.0, 60.25};
    r.ver_ms = (bench_stat){56.6, 55.5, 57};
    r.cpu_s_ms = (bench_stat){62, 61, 63};
    r.cpu_v_ms = (bench_stat){1234.5, 1200, 1300};
    r.mem_s_kib = (bench_stat){0.25, 0, 1};
    r.mem_v_kib = (bench_stat){8, 4, 12};
    r.mibps_s = 1773.05;
    r.mibps_v = 1766.78;
    strcpy(r.baseline, "SHA-256");
    r.base_ms = 55.0;
    r.eff_s = 0.97517;
    r.eff_v = 0.9717;
    return r;
}

/* Render through a FILE* into a string. */
#define CAPTURE(buf, stmt)                                                                         \
    do {                                                                                           \
        FILE *f = fmemopen(buf, sizeof buf, "w");                                                  \
        assert_non_null(f);                                                                        \
        stmt;                                                                                      \
        fclose(f);                                                                                 \
    } while (0)

static void test_table_format(void **state)
{
    (void)state;
    char buf[2048];
    bench_row r = known_row();
    CAPTURE(buf, bench_table_header(f));
    assert_string_equal(buf, "KTY     | ALG                  | KiB     | SIGN    | VER      | CPU-S    | "
                             "CPU-V    | MEM-S   | MEM-V   | MiB/s-S  | MiB/s-V  | EFF-S | EFF-V\n");
    CAPTURE(buf, bench_table_rule(f));
    assert_string_equal(buf, "--------+----------------------+---------+---------+----------+----------+"
                             "----------+---------+---------+----------+----------+-------+------\n");
    CAPTURE(buf, bench_table_row(f, &r));
    assert_string_equal(buf, "oct     | HS256                | 102400  | 56      | 57       | 62       | "
                             "1235     | 0       | 8       | 1773     | 1767     | 0.98  | 0.97\n");
    r.eff_v = 1.15; /* a disturbed baseline is marked */
    CAPTURE(buf, bench_table_row(f, &r));
    assert_non_null(strstr(buf, "| 0.98  | 1.15!\n"));
    r.eff_s = r.eff_v = -1;
    CAPTURE(buf, bench_table_row(f, &r));
    assert_non_null(strstr(buf, "| n/a   | n/a\n"));
}

static void test_csv_format(void **state)
{
    (void)state;
    char buf[4096];
    bench_row r = known_row();
    CAPTURE(buf, bench_csv_header(f));
    assert_string_equal(buf,
                        "kty,alg,key_bits,kib,bytes,sign_ms_median,sign_ms_min,sign_ms_max,ver_ms_median,"
                        "ver_ms_min,ver_ms_max,cpu_s_ms_median,cpu_s_ms_min,cpu_s_ms_max,cpu_v_ms_median,"
                        "cpu_v_ms_min,cpu_v_ms_max,mem_s_kib_median,mem_s_kib_min,mem_s_kib_max,"
                        "mem_v_kib_median,mem_v_kib_min,mem_v_kib_max,mibps_s,mibps_v,baseline,"
                        "baseline_ms,eff_s,eff_v,eff_suspect\n");
    CAPTURE(buf, bench_csv_row(f, &r));
    assert_string_equal(buf, "oct,HS256,256,102400,104857600,56.400,55.000,60.250,56.600,55.500,57.000,"
                             "62.000,61.000,63.000,1234.500,1200.000,1300.000,0.250,0.000,1.000,8.000,"
                             "4.000,12.000,1773.050,1766.780,SHA-256,55.000,0.9752,0.9717,0\n");
    /* n/a baseline: empty fields; a name with a comma is quoted. */
    r.base_ms = r.eff_s = r.eff_v = -1;
    strcpy(r.alg, "A,B");
    CAPTURE(buf, bench_csv_row(f, &r));
    assert_non_null(strstr(buf, "oct,\"A,B\",256,"));
    assert_non_null(strstr(buf, ",SHA-256,,,,0\n"));
}

static void test_json_format(void **state)
{
    (void)state;
    char buf[4096];
    bench_row r = known_row();
    CAPTURE(buf, bench_json_row(f, &r));
    json_error_t je;
    json_t *j = json_loads(buf, 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "alg")), "HS256");
    assert_string_equal(json_string_value(json_object_get(j, "kty")), "oct");
    assert_int_equal(json_integer_value(json_object_get(j, "kib")), 102400);
    assert_true(json_real_value(json_object_get(j, "sign")) == 56.4);
    assert_true(json_real_value(json_object_get(j, "sign_max")) == 60.25);
    assert_true(json_real_value(json_object_get(j, "mem_v")) == 8.0);
    assert_non_null(json_object_get(j, "eff_s"));
    assert_true(json_is_false(json_object_get(j, "eff_suspect")));
    json_decref(j);
    r.eff_s = 1.2;
    CAPTURE(buf, bench_json_row(f, &r));
    j = json_loads(buf, 0, &je);
    assert_true(json_is_true(json_object_get(j, "eff_suspect")));
    json_decref(j);
    r.base_ms = r.eff_s = r.eff_v = -1;
    CAPTURE(buf, bench_json_row(f, &r));
    j = json_loads(buf, 0, &je);
    assert_non_null(j);
    assert_true(json_is_null(json_object_get(j, "eff_v")));
    json_decref(j);
}

static void test_svg_format(void **state)
{
    (void)state;
    char buf[16384];
    bench_row rows[2] = {known_row(), known_row()};
    strcpy(rows[1].label, "A<&>");
    rows[1].bytes = MIB; /* not at the largest size: not drawn */
    const bench_svg_meta m = {"Test CPU <x>, 2 CPUs", "2026-12-01 10:00 UTC", 5, 10};
    CAPTURE(buf, bench_svg_write(f, rows, 2, 100 * MIB, &m));
    assert_memory_equal(buf, "<svg", 4);
    assert_non_null(strstr(buf, ">HS256</text>"));
    assert_null(strstr(buf, "A&lt;"));
    assert_non_null(strstr(buf, "</svg>\n"));
    /* Readable alone: machine, date, iterations, the axis with its ticks and unit. */
    assert_non_null(strstr(buf, "Test CPU &lt;x&gt;, 2 CPUs; 2026-12-01 10:00 UTC; 5 warm-up, 10 measured"));
    assert_non_null(strstr(buf, ">MiB/s</text>"));
    /* Fastest iteration 100 MiB / 55 ms = 1818 MiB/s: ticks every 500 up to 2000. */
    assert_non_null(strstr(buf, "text-anchor=\"middle\">0</text>"));
    assert_non_null(strstr(buf, "text-anchor=\"middle\">500</text>"));
    assert_non_null(strstr(buf, "text-anchor=\"middle\">2000</text>"));
    assert_null(strstr(buf, "text-anchor=\"middle\">2500</text>"));
    /* Whiskers: sign from 100/60.25 s^-1 to 100/55 s^-1 MiB/s, on the 2000-wide axis of 560 px. */
    char whisker[96];
    snprintf(whisker, sizeof whisker, "<line x1=\"%.1f\"", 190 + (100.0 / 0.06025) / 2000 * 560);
    assert_non_null(strstr(buf, whisker));
    snprintf(whisker, sizeof whisker, "x2=\"%.1f\"", 190 + (100.0 / 0.055) / 2000 * 560);
    assert_non_null(strstr(buf, whisker));
    rows[1].bytes = 100 * MIB;
    CAPTURE(buf, bench_svg_write(f, rows, 2, 100 * MIB, &m));
    assert_non_null(strstr(buf, ">A&lt;&amp;&gt;</text>"));
}

/* Whole file into memory (NUL-terminated). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char data[1 << 16];
    size_t n = fread(data, 1, sizeof data - 1, f);
    data[n] = '\0';
    fclose(f);
    return data;
}

/* Path of the single file in dir whose name ends with `suffix`. */
static void find_output(const char *dir, const char *suffix, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name), s = strlen(suffix);
        if (n > s && strcmp(e->d_name + n - s, suffix) == 0 &&
            strncmp(e->d_name, "benchmark_stream_sig_", 21) == 0) {
            snprintf(out, cap, "%s/%s", dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    assert_int_equal(found, 1);
}

/* Remove the run's outputs. */
static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

static void test_quick_run(void **state)
{
    (void)state;
    char algs[64] = "";
    size_t n = 0;
    static const char *const wanted[] = {"HS256", "Ed25519"};
    for (size_t i = 0; i < 2; i++) {
        if (!dsig_alg_by_name(wanted[i]))
            continue; /* not registered yet in this build */
        snprintf(algs + strlen(algs), sizeof algs - strlen(algs), "%s%s", n ? "," : "", wanted[i]);
        n++;
    }
    if (n == 0)
        skip();
    char dir[] = "/tmp/dsig-bench-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (int src = 0; src < 3; src++) {
        static const char *const sources[] = {"mem", "file", "pipe"};
        char *argv[] = {(char *)"bench", (char *)"stream", (char *)"--alg", algs, (char *)"--sizes",
                        (char *)"1", (char *)"--warmup", (char *)"0", (char *)"--measure", (char *)"1",
                        (char *)"--source", (char *)sources[src], (char *)"--out", dir, NULL};
        assert_int_equal(dsig_bench_main(14, argv), 0);
        char csv[4200], svg[4200];
        find_output(dir, ".csv", csv, sizeof csv);
        find_output(dir, ".svg", svg, sizeof svg);
        char *text = slurp(csv);
        size_t lines = 0;
        for (char *p = text; *p; p++)
            lines += *p == '\n';
        assert_int_equal(lines, n + 1);
        assert_memory_equal(text, "kty,alg,key_bits,kib,bytes,", 27);
        assert_non_null(strstr(text, ",1024,1048576,"));
        assert_memory_equal(slurp(svg), "<svg", 4);
        rm_dir(dir);
        assert_non_null(mkdtemp(strcpy(dir, "/tmp/dsig-bench-test-XXXXXX")));
    }
    /* The short-message harness runs too (keygen, sign, verify rows). */
    char first[16];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(algs, ","), algs);
    char *sargv[] = {(char *)"bench", (char *)"sig", (char *)"--alg", first, (char *)"--warmup",
                     (char *)"0", (char *)"--measure", (char *)"3", (char *)"--max-time", (char *)"0.05",
                     (char *)"--json", NULL};
    assert_int_equal(dsig_bench_main(11, sargv), 0);
    char *bad[] = {(char *)"bench", (char *)"stream", (char *)"--alg", (char *)"NOPE", NULL};
    assert_int_equal(dsig_bench_main(4, bad), 2);
    char *badsub[] = {(char *)"bench", (char *)"nope", NULL};
    assert_int_equal(dsig_bench_main(2, badsub), 2);
    rm_dir(dir);
}

int main(void)
{
    dsig_track_openssl_allocations(); /* as the tool does: memory columns include OpenSSL's heap */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_defaults),   cmocka_unit_test(test_stream_options),
        cmocka_unit_test(test_stream_bad_options), cmocka_unit_test(test_sig_options),
        cmocka_unit_test(test_parse_size),        cmocka_unit_test(test_select_algs),
        cmocka_unit_test(test_payload_deterministic), cmocka_unit_test(test_stats),
        cmocka_unit_test(test_eff_suspect),       cmocka_unit_test(test_svg_ticks),         cmocka_unit_test(test_table_format),
        cmocka_unit_test(test_csv_format),        cmocka_unit_test(test_json_format),
        cmocka_unit_test(test_svg_format),        cmocka_unit_test(test_quick_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
