/*
 * bench/bench_ping_report.c — what `dsig ping` prints: its rows as JSON lines and table lines, and the
 * PASS/FAIL/SKIP lines of its two targets. The percentiles of a row are the shared bench_pctl
 * (bench_util.c).
 */
#include <stdio.h>

#include "bench_internal.h"
#include "bench_ping.h"

/* Median / p90 / p99 of v (sorted in place). */
ping_stat ping_stat_of(double *v, size_t n)
{
    return bench_pctl_of(v, n);
}

/* One JSON line per row; fast_path_fraction is null for the schemes without a fast path. */
void ping_json_row(FILE *f, const ping_row *r)
{
    fprintf(f,
            "{\"scheme\":\"%s\",\"msg_bytes\":%zu,\"sig_bytes\":%zu,\"rounds\":%u,\"runs\":%u,"
            "\"rtt_median_ns\":%.0f,\"rtt_p90_ns\":%.0f,\"rtt_p99_ns\":%.0f,"
            "\"sign_median_ns\":%.0f,\"sign_p90_ns\":%.0f,\"sign_p99_ns\":%.0f,"
            "\"transmit_median_ns\":%.0f,\"transmit_p90_ns\":%.0f,\"transmit_p99_ns\":%.0f,"
            "\"verify_median_ns\":%.0f,\"verify_p90_ns\":%.0f,\"verify_p99_ns\":%.0f,"
            "\"transmit_method\":\"derived\","
            "\"bg_cpu_core_fraction_initiator\":%.4f,\"bg_cpu_core_fraction_responder\":%.4f,",
            ping_scheme_name(r->scheme), r->msg_bytes, r->sig_bytes, r->rounds, r->runs, r->rtt.median,
            r->rtt.p90, r->rtt.p99, r->sign.median, r->sign.p90, r->sign.p99, r->transmit.median,
            r->transmit.p90, r->transmit.p99, r->verify.median, r->verify.p90, r->verify.p99,
            r->bg_cpu_initiator, r->bg_cpu_responder);
    if (r->fast_path_fraction < 0)
        fputs("\"fast_path_fraction\":null}\n", f);
    else
        fprintf(f, "\"fast_path_fraction\":%.4f}\n", r->fast_path_fraction);
}

/* Table header (microseconds). */
void ping_table_header(FILE *f)
{
    fprintf(f, "%-15s %6s %5s %7s | %-23s | %-23s | %-23s | %-23s | %5s | %s\n", "scheme", "bytes", "sig",
            "rounds", "rtt us  med/p90/p99", "sign us med/p90/p99", "transmit us med/p90/p99",
            "verify us med/p90/p99", "fast", "bg-cpu % of one core ini/rsp");
}

/* Three values in microseconds, fixed width. */
static void us3(FILE *f, const ping_stat *s)
{
    fprintf(f, "%7.2f %7.2f %7.2f", s->median / 1e3, s->p90 / 1e3, s->p99 / 1e3);
}

/* One table line. */
void ping_table_row(FILE *f, const ping_row *r)
{
    fprintf(f, "%-15s %6zu %5zu %7u | ", ping_scheme_name(r->scheme), r->msg_bytes, r->sig_bytes, r->rounds);
    us3(f, &r->rtt);
    fputs(" | ", f);
    us3(f, &r->sign);
    fputs(" | ", f);
    us3(f, &r->transmit);
    fputs(" | ", f);
    us3(f, &r->verify);
    if (r->fast_path_fraction < 0)
        fprintf(f, " | %5s", "-");
    else
        fprintf(f, " | %4.0f%%", r->fast_path_fraction * 100.0);
    fprintf(f, " | %6.1f %6.1f\n", r->bg_cpu_initiator * 100.0, r->bg_cpu_responder * 100.0);
}

/* The row of a scheme at a size, NULL if absent. */
static const ping_row *find_row(const ping_row *rows, size_t n, int scheme, size_t bytes)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].scheme == scheme && rows[i].msg_bytes == bytes)
            return &rows[i];
    return NULL;
}

/* PASS/FAIL/SKIP line of the ping latency target at one size; 1 for FAIL. */
int ping_target(FILE *f, const ping_row *rows, size_t n, size_t msg_bytes)
{
    const ping_row *none = find_row(rows, n, PING_NONE, msg_bytes);
    const ping_row *sod = find_row(rows, n, PING_SODIUM, msg_bytes);
    const ping_row *ds = find_row(rows, n, PING_DSIG, msg_bytes);
    if (!none || !sod || !ds) {
        fprintf(f, "SKIP %zu B: DSig added latency <= 1/5 of Ed25519's: needs none, sodium-ed25519 and dsig rows\n",
                msg_bytes);
        return 0;
    }
    double add_d = ds->rtt.median - none->rtt.median;
    double add_s = sod->rtt.median - none->rtt.median;
    int pass = add_s > 0 && add_d <= add_s / 5.0;
    fprintf(f,
            "%s %zu B: DSig adds %.2f us to the unsigned ping (rtt median %.2f vs %.2f us), Ed25519 adds %.2f us;"
            " ratio %.3f (target <= 0.200; %.0f%% less added latency)\n",
            pass ? "PASS" : "FAIL", msg_bytes, add_d / 1e3, ds->rtt.median / 1e3, none->rtt.median / 1e3,
            add_s / 1e3, add_s > 0 ? add_d / add_s : 0.0, add_s > 0 ? 100.0 * (1.0 - add_d / add_s) : 0.0);
    return pass ? 0 : 1;
}

/* PASS/FAIL/SKIP line of the background-plane target at one size (DSig row); 1 for FAIL. */
int ping_target_bg(FILE *f, const ping_row *rows, size_t n, size_t msg_bytes)
{
    const ping_row *ds = find_row(rows, n, PING_DSIG, msg_bytes);
    if (!ds) {
        fprintf(f, "SKIP %zu B: background plane <= 1 core per process: needs a dsig row\n", msg_bytes);
        return 0;
    }
    int pass = ds->bg_cpu_initiator <= 1.0 && ds->bg_cpu_responder <= 1.0;
    fprintf(f,
            "%s %zu B: background plane <= 1 core per process: initiator %.1f%%, responder %.1f%% of one core"
            " (dsig timed rounds)\n",
            pass ? "PASS" : "FAIL", msg_bytes, ds->bg_cpu_initiator * 100.0, ds->bg_cpu_responder * 100.0);
    return pass ? 0 : 1;
}
