/*
 * bench/bench_dsig_run.c — `dsig bench dsig`: DSig hybrid signatures measured in the style of the DSig
 * paper (OSDI '24), with libsodium and OpenSSL Ed25519 as baselines in the same process and run.
 *
 * Rows (see docs/benchmarks.md, "dsig bench dsig"):
 *   1. latency of Ed25519 sign / verify (libsodium, OpenSSL) per message size;
 *   2. latency of DSig sign, fast verify and slow verify per message size, primary configuration,
 *      with the signer's key pool full and the verifier's batch cache warm;
 *   3. one-core throughput with background costs included (process CPU time of every thread);
 *   4. sweeps at the first message size: one-time scheme x hash, then batch size;
 *   5. the same-run ratios to libsodium (figures, no judgement); with --targets also the paper's latency
 *      targets as PASS/FAIL lines — judgements belong to benchmarks run on purpose, not to a quick
 *      run on a busy machine.
 *
 * Timing: each latency sample is one call bracketed by clock_gettime(CLOCK_MONOTONIC); the median
 * cost of an empty bracket (measured at start-up) is subtracted from every sample. Throughput rows
 * time whole rounds of calls with CLOCK_PROCESS_CPUTIME_ID and report CPU ns per call.
 *
 * This file: the timing of one call and the run (rows in order, ratios, targets). The options are in
 * bench_dsig_args.c, the row formats in bench_dsig_report.c, the baselines in bench_dsig_baseline.c,
 * the DSig rows in bench_dsig_hybrid.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_dsig_internal.h"

/* The harness's own failure detail (consistency checks that are not library errors). */
static char g_why[256];

/* Record a harness failure detail and return `code`. */
int bd_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_why, sizeof g_why, fmt, ap);
    va_end(ap);
    return code;
}

/* Text of a failure: the harness detail if one was recorded, else the library's. */
const char *bd_errtext(int rc, char *buf, size_t cap)
{
    if (g_why[0]) {
        snprintf(buf, cap, "%s", g_why);
        g_why[0] = '\0';
        return buf;
    }
    return bench_errstr(rc, buf, cap);
}

/* Median cost of an empty timing bracket (two back-to-back clock reads), in ns. */
double bd_clock_overhead_ns(void)
{
    enum { N = 4001 };
    static double v[N];
    for (int i = 0; i < N; i++) {
        uint64_t t0 = now_ns();
        uint64_t t1 = now_ns();
        v[i] = (double)(t1 - t0);
    }
    return bench_stat_of(v, N).median;
}

/* Run warmup + count calls; ns[0..count) gets the overhead-corrected samples. 0 or the call's code. */
int bd_measure_latency(const lat_job *j, unsigned warmup, unsigned count, double overhead,
                           double *ns)
{
    unsigned total = warmup + count, i = 0;
    while (i < total) {
        unsigned n = j->round && j->round < total - i ? j->round : total - i;
        int rc = j->prepare ? j->prepare(j->ctx, i, n) : 0;
        if (rc)
            return rc;
        for (unsigned k = 0; k < n; k++, i++) {
            uint64_t t0 = now_ns();
            rc = j->call(j->ctx, i);
            uint64_t t1 = now_ns();
            if (rc)
                return rc;
            if (i >= warmup) {
                double d = (double)(t1 - t0) - overhead;
                ns[i - warmup] = d > 0 ? d : 0;
            }
        }
    }
    return 0;
}/* Record and print one row. */
int bd_emit(run *R, const bench_dsig_row *r)
{
    if (R->nrows == R->caprows) {
        size_t cap = R->caprows ? 2 * R->caprows : 64;
        bench_dsig_row *nr = realloc(R->rows, cap * sizeof *nr);
        if (!nr)
            return DSIG_E_NOMEM;
        R->rows = nr;
        R->caprows = cap;
    }
    R->rows[R->nrows++] = *r;
    if (R->o->json)
        bench_dsig_json_row(stdout, r);
    else
        bench_dsig_table_row(stdout, r);
    fflush(stdout);
    if (R->sink)
        R->sink(R->sink_ctx, r);
    return 0;
}

/* A row template. */
bench_dsig_row bd_row_of(const char *scheme, const char *op, const char *metric, size_t msg_bytes,
                             size_t sig_bytes, const bench_dsig_cfg *cfg)
{
    bench_dsig_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.scheme, sizeof r.scheme, "%s", scheme);
    snprintf(r.op, sizeof r.op, "%s", op);
    snprintf(r.metric, sizeof r.metric, "%s", metric);
    r.msg_bytes = msg_bytes;
    r.sig_bytes = sig_bytes;
    if (cfg)
        r.cfg = *cfg;
    else
        r.cfg.hash = -1;
    return r;
}

/* `dsig bench dsig` with parsed options. */
int bench_dsig_run(const bench_dsig_opts *o, bench_dsig_sink sink, void *sink_ctx)
{
    run R = {.o = o, .sink = sink, .sink_ctx = sink_ctx};
    char why[512] = "";
    size_t maxlen = 8;
    for (size_t i = 0; i < o->nsizes; i++)
        if (o->sizes[i] > maxlen)
            maxlen = o->sizes[i];
    uint8_t *payload = malloc(maxlen);
    R.ns = malloc(sizeof *R.ns * (o->count > 64 ? o->count : 64));
    if (!payload || !R.ns || sodium_init() < 0) {
        fprintf(stderr, "bench dsig: out of memory or libsodium unusable\n");
        free(payload);
        free(R.ns);
        return 1;
    }
    bench_payload_fill(payload, maxlen, o->seed);
    R.overhead = bd_clock_overhead_ns();
    const bench_dsig_cfg primary = bench_dsig_primary(o);

    ed_ctx ed;
    int rc = bd_ed_open(&ed, o->seed, payload, why, sizeof why);
    if (rc) {
        fprintf(stderr, "bench dsig: %s\n", why);
        bd_ed_close(&ed);
        free(payload);
        free(R.ns);
        return 1;
    }
    FILE *info = o->json ? stderr : stdout;
    fprintf(info, "# dsig bench dsig: clock overhead %.1f ns subtracted from every latency sample; "
                  "throughput = process CPU time per call (background threads included)\n",
            R.overhead);
    if (!bench_dsig_available()) /* the runtime is optional at build time (bench_dsig_hybrid.c) */
        fprintf(stderr, "bench dsig: the DSig runtime (include/dsig/hybrid.h) is not in this build: "
                        "baselines only\n");
    if (!o->json)
        bench_dsig_table_header(stdout);

    /* 1. Baselines per size, then 2. DSig primary configuration per size. */
    for (size_t s = 0; s < o->nsizes && rc == 0; s++)
        rc = bd_baseline_rows(&R, &ed, payload, o->sizes[s], 0);
    /* 3. One-core throughput at the first size: the baselines, then DSig with its background costs. */
    if (rc == 0)
        rc = bd_baseline_rows(&R, &ed, payload, o->sizes[0], 1);
    if (rc == 0)
        rc = bd_config_rows(&R, &primary, payload, o->sizes, o->nsizes, 1);
    /* 4. Sweeps at the first size: scheme x hash at the primary batch, then batch sizes. */
    for (size_t h = 0; h < o->nhbss && rc == 0; h++) {
        for (size_t x = 0; x < o->nhash && rc == 0; x++) {
            bench_dsig_cfg c = {.hbss = o->hbss[h], .hash = o->hash[x], .batch = primary.batch};
            if (!bd_cfg_equal(&c, &primary))
                rc = bd_config_rows(&R, &c, payload, o->sizes, 1, 1);
        }
    }
    for (size_t b = 0; b < o->nbatch && rc == 0; b++) {
        bench_dsig_cfg c = primary;
        c.batch = o->batch[b];
        if (!bd_cfg_equal(&c, &primary))
            rc = bd_config_rows(&R, &c, payload, o->sizes, 1, 1);
    }
    bd_ed_close(&ed);

    int exit_code = rc ? 1 : 0;
    if (rc == 0) {
        /* 5. Same-run ratios; the targets only when asked for (a benchmark reports them, it does not
         * fail on a slow machine). */
        bench_dsig_ratios(info, R.rows, R.nrows, &primary);
        if (o->targets)
            (void)bench_dsig_targets(info, R.rows, R.nrows, &primary);
        fprintf(o->json ? stderr : stdout, "Rows: %zu Skipped configurations: %u\n", R.nrows, R.skipped);
    }
    free(R.rows);
    free(R.ns);
    free(payload);
    return exit_code;
}

/* Entry from bench_main.c. */
int bench_dsig_main(int argc, char **argv)
{
    bench_dsig_opts o;
    char err[BENCH_ERR_LEN];
    int r = bench_dsig_parse(argc, argv, &o, err, sizeof err);
    if (r == 1) {
        bench_dsig_print_help(stdout);
        return 0;
    }
    if (r < 0) {
        fprintf(stderr, "dsig bench dsig: %s\n", err);
        return 2;
    }
    return bench_dsig_run(&o, NULL, NULL);
}

