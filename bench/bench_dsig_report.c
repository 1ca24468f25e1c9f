/*
 * bench/bench_dsig_report.c — the rows of `dsig bench dsig`: statistics, JSON and table lines, the
 * primary configuration, the same-run ratios and the targets.
 */
#include <stdio.h>
#include <string.h>

#include "bench_dsig_internal.h"

/* Fill n, median, p90, p99, min, max and ops/s (n / sum) from samples in ns; sorts ns. */
void bench_dsig_fill_stats(bench_dsig_row *r, double *ns, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += ns[i];
    bench_stat st = bench_stat_of(ns, n);
    r->n = n;
    r->median_ns = st.median;
    r->min_ns = st.min;
    r->max_ns = st.max;
    r->p90_ns = bench_percentile(ns, n, 0.90);
    r->p99_ns = bench_percentile(ns, n, 0.99);
    r->ops_per_s = sum > 0 ? (double)n * 1e9 / sum : 0;
}

/* Is this row one of the Ed25519 baselines (no DSig configuration)? */
static int is_baseline(const bench_dsig_row *r)
{
    return strcmp(r->scheme, "dsig") != 0;
}

/* One JSON object (one line). The required fields come first, in the documented order. */
void bench_dsig_json_row(FILE *f, const bench_dsig_row *r)
{
    fprintf(f, "{\"scheme\":\"%s\",\"op\":\"%s\",\"msg_bytes\":%zu,\"median_ns\":%.1f,\"p90_ns\":%.1f,"
               "\"p99_ns\":%.1f,\"metric\":\"%s\",",
            r->scheme, r->op, r->msg_bytes, r->median_ns, r->p90_ns, r->p99_ns, r->metric);
    if (is_baseline(r)) {
        fputs("\"hbss\":null,\"w\":null,\"k\":null,\"t\":null,\"hash\":null,\"batch\":null,", f);
    } else if (r->cfg.hbss.w) {
        fprintf(f, "\"hbss\":\"wots\",\"w\":%u,\"k\":null,\"t\":null,\"hash\":\"%s\",\"batch\":%u,",
                r->cfg.hbss.w, bench_dsig_hash_name(r->cfg.hash), r->cfg.batch);
    } else {
        fprintf(f, "\"hbss\":\"hors\",\"w\":null,\"k\":%u,\"t\":%u,\"hash\":\"%s\",\"batch\":%u,",
                r->cfg.hbss.k, 1u << r->cfg.hbss.log_t, bench_dsig_hash_name(r->cfg.hash),
                r->cfg.batch);
    }
    fprintf(f, "\"sig_bytes\":%zu,\"n\":%zu,\"min_ns\":%.1f,\"max_ns\":%.1f,\"ops_per_s\":%.1f}\n",
            r->sig_bytes, r->n, r->min_ns, r->max_ns, r->ops_per_s);
}

/* Table header (one line; the rule under it). */
void bench_dsig_table_header(FILE *f)
{
    fputs("SCHEME          | HBSS   | HASH   | BATCH | OP          | METRIC | BYTES |  SIG-B |      N |"
          "  MEDIAN-us |     P90-us |     P99-us |       OPS/S\n",
          f);
    fputs("----------------+--------+--------+-------+-------------+--------+-------+--------+--------+"
          "------------+------------+------------+------------\n",
          f);
}

/* One table line: latency rows per call; throughput rows show CPU us per call (background included). */
void bench_dsig_table_row(FILE *f, const bench_dsig_row *r)
{
    char hbss[16] = "-", batch[16] = "-";
    const char *hash = "-";
    if (!is_baseline(r)) {
        if (r->cfg.hbss.w)
            snprintf(hbss, sizeof hbss, "w=%u", r->cfg.hbss.w);
        else
            snprintf(hbss, sizeof hbss, "hors%u", r->cfg.hbss.k);
        snprintf(batch, sizeof batch, "%u", r->cfg.batch);
        hash = bench_dsig_hash_name(r->cfg.hash);
    }
    fprintf(f, "%-15s | %-6s | %-6s | %5s | %-11s | %-6s | %5zu | %6zu | %6zu | %10.3f | %10.3f | "
               "%10.3f | %11.0f\n",
            r->scheme, hbss, hash ? hash : "?", batch, r->op,
            strcmp(r->metric, "throughput") == 0 ? "tput" : "lat", r->msg_bytes, r->sig_bytes, r->n,
            r->median_ns / 1e3, r->p90_ns / 1e3, r->p99_ns / 1e3, r->ops_per_s);
}

/* Primary configuration of the options (see the header). */
bench_dsig_cfg bench_dsig_primary(const bench_dsig_opts *o)
{
    bench_dsig_cfg c = {.hbss = o->nhbss ? o->hbss[0] : (bench_dsig_hbss){.w = 4},
                        .hash = o->nhash ? o->hash[0] : BENCH_DSIG_HARAKA,
                        .batch = o->nbatch ? o->batch[0] : 128};
    for (size_t i = 0; i < o->nhbss; i++)
        if (o->hbss[i].w == 4)
            c.hbss = o->hbss[i];
    for (size_t i = 0; i < o->nhash; i++)
        if (o->hash[i] == BENCH_DSIG_HARAKA)
            c.hash = BENCH_DSIG_HARAKA;
    for (size_t i = 0; i < o->nbatch; i++)
        if (o->batch[i] == 128)
            c.batch = 128;
    return c;
}

/* Same DSig configuration? */
int bd_cfg_equal(const bench_dsig_cfg *a, const bench_dsig_cfg *b)
{
    return a->hbss.w == b->hbss.w && a->hbss.k == b->hbss.k && a->hbss.log_t == b->hbss.log_t &&
           a->hash == b->hash && a->batch == b->batch;
}

/* The 8-byte latency row of (scheme, op), DSig rows restricted to the primary configuration. */
static const bench_dsig_row *find_row(const bench_dsig_row *rows, size_t n, const char *scheme,
                                      const char *op, const bench_dsig_cfg *primary)
{
    for (size_t i = 0; i < n; i++) {
        const bench_dsig_row *r = &rows[i];
        if (strcmp(r->scheme, scheme) || strcmp(r->op, op) || strcmp(r->metric, "latency") ||
            r->msg_bytes != 8)
            continue;
        if (!is_baseline(r) && !bd_cfg_equal(&r->cfg, primary))
            continue;
        return r;
    }
    return NULL;
}

/* One absolute target line: median <= limit. Returns 1 on FAIL. */
static int target_abs(FILE *f, const char *tag, const bench_dsig_row *r, const char *what, double limit_us)
{
    if (!r) {
        fprintf(f, "SKIP %s%s median <= %.2f us: no 8-byte dsig row\n", tag, what, limit_us);
        return 0;
    }
    int ok = r->median_ns <= limit_us * 1e3;
    fprintf(f, "%s %s%s median %.3f us <= %.2f us\n", ok ? "PASS" : "FAIL", tag, what,
            r->median_ns / 1e3, limit_us);
    return !ok;
}

/* One relative target line: base median / ours median >= factor. Returns 1 on FAIL. */
static int target_rel(FILE *f, const bench_dsig_row *ours, const bench_dsig_row *base, const char *what,
                      double factor)
{
    if (!ours || !base || ours->median_ns <= 0) {
        fprintf(f, "SKIP %s >= %.0fx faster than sodium-ed25519: missing 8-byte rows\n", what, factor);
        return 0;
    }
    double x = base->median_ns / ours->median_ns;
    int ok = x >= factor;
    fprintf(f, "%s %s %.1fx faster than sodium-ed25519 %s (%.3f vs %.3f us; target >= %.0fx)\n",
            ok ? "PASS" : "FAIL", what, x, base->op, ours->median_ns / 1e3, base->median_ns / 1e3,
            factor);
    return !ok;
}

void bench_dsig_ratios(FILE *f, const bench_dsig_row *rows, size_t n, const bench_dsig_cfg *primary)
{
    const struct {
        const char *op, *base_op;
    } pairs[] = {{"sign", "sign"}, {"verify-fast", "verify"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const bench_dsig_row *ours = find_row(rows, n, "dsig", pairs[i].op, primary);
        const bench_dsig_row *base = find_row(rows, n, "sodium-ed25519", pairs[i].base_op, primary);
        if (!ours || !base || ours->median_ns <= 0) {
            fprintf(f, "ratio %s: no 8-byte rows of both dsig and sodium-ed25519\n", pairs[i].op);
            continue;
        }
        fprintf(f, "ratio %s: dsig %.3f us, sodium-ed25519 %s %.3f us: %.1fx faster (same run, 8-byte "
                   "medians)\n",
                pairs[i].op, ours->median_ns / 1e3, base->op, base->median_ns / 1e3,
                base->median_ns / ours->median_ns);
    }
}

/* The paper's latency targets (see the header). */
int bench_dsig_targets(FILE *f, const bench_dsig_row *rows, size_t n, const bench_dsig_cfg *primary)
{
    const bench_dsig_row *sign = find_row(rows, n, "dsig", "sign", primary);
    const bench_dsig_row *fast = find_row(rows, n, "dsig", "verify-fast", primary);
    const bench_dsig_row *ssign = find_row(rows, n, "sodium-ed25519", "sign", primary);
    const bench_dsig_row *sver = find_row(rows, n, "sodium-ed25519", "verify", primary);
    int fails = 0;
    fails += target_abs(f, "", sign, "sign", 0.7);
    fails += target_abs(f, "", fast, "verify-fast", 5.1);
    fails += target_rel(f, sign, ssign, "sign", 25);
    fails += target_rel(f, fast, sver, "verify-fast", 7);
    (void)target_abs(f, "(stretch) ", sign, "sign", 0.35);
    (void)target_abs(f, "(stretch) ", fast, "verify-fast", 2.5);
    return fails;
}
