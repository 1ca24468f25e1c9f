/*
 * bench/bench_dsig_internal.h — what the files of `dsig bench dsig` share: the run (bench_dsig_run.c),
 * the timing of one call, the Ed25519 baselines (bench_dsig_baseline.c) and the DSig rows
 * (bench_dsig_hybrid.c). Options are read in bench_dsig_args.c, rows printed and judged in
 * bench_dsig_report.c. Not seen by the tests or the tool (bench_dsig.h is their interface).
 */
#ifndef DSIG_BENCH_DSIG_INTERNAL_H
#define DSIG_BENCH_DSIG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/evp.h>
#include <sodium.h>

#include "bench_dsig.h"
#include "bench_internal.h"

/* Monotonic nanoseconds (vDSO clock_gettime: ~20 ns, measured and subtracted by the callers). */
static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU nanoseconds of the whole process: every thread, so a runtime's background work is counted. */
static inline uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A latency measurement: `call` is timed one call at a time; `prepare` (untimed) runs before each
 * round of at most `round` calls, e.g. to refill a key pool or pre-sign the signatures to verify. */
typedef struct lat_job {
    int (*prepare)(void *ctx, unsigned first, unsigned n);
    int (*call)(void *ctx, unsigned i);
    void *ctx;
    unsigned round; /* 0 = no rounds */
} lat_job;

/* Run-wide state: options, clock overhead, sample buffer, collected rows, outputs. */
typedef struct run {
    const bench_dsig_opts *o;
    double overhead;
    double *ns;          /* count samples */
    bench_dsig_row *rows;
    size_t nrows, caprows;
    bench_dsig_sink sink;
    void *sink_ctx;
    unsigned skipped;
} run;

/* Both libraries' keys (from one seed) and the message under test. */
typedef struct ed_ctx {
    uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
    EVP_PKEY *pkey;    /* private key, reused by every OpenSSL sign */
    EVP_PKEY *pub;     /* public-only key, reused by every OpenSSL verify (what a verifier holds) */
    EVP_MD_CTX *mctx;  /* reused context; EVP_DigestSignInit per call, as one-shot Ed25519 requires */
    const uint8_t *msg;
    size_t len;
    uint8_t sig[crypto_sign_BYTES];
} ed_ctx;

/* Rounds of a throughput row: per-round CPU ns per call are the samples. */
#define TPUT_ROUNDS_FULL 7u
#define TPUT_ROUNDS_QUICK 3u

/* Record a harness failure detail (a consistency check that is not a library error) and return code. */
__attribute__((format(printf, 2, 3))) int bd_fail(int code, const char *fmt, ...);
/* Text of a failure: the harness detail if one was recorded, else the library's. */
const char *bd_errtext(int rc, char *buf, size_t cap);
/* Median cost of an empty timing bracket (two back-to-back clock reads), in ns. */
double bd_clock_overhead_ns(void);
/* Run warmup + count calls; ns[0..count) gets the overhead-corrected samples. 0 or the call's code. */
int bd_measure_latency(const lat_job *j, unsigned warmup, unsigned count, double overhead, double *ns);
/* Record and print one row. */
int bd_emit(run *R, const bench_dsig_row *r);
/* A row template (cfg NULL: a baseline row). */
bench_dsig_row bd_row_of(const char *scheme, const char *op, const char *metric, size_t msg_bytes,
                         size_t sig_bytes, const bench_dsig_cfg *cfg);
/* Are two configurations the same? */
int bd_cfg_equal(const bench_dsig_cfg *a, const bench_dsig_cfg *b);

/* Both libraries' Ed25519 keys from one seed, for the message msg: 0, or non-zero with why set. */
int bd_ed_open(ed_ctx *c, uint64_t seed, const uint8_t *msg, char *why, size_t whylen);
void bd_ed_close(ed_ctx *c);
/* Baseline rows for one message size (latency, or throughput when tput). */
int bd_baseline_rows(run *R, ed_ctx *c, const uint8_t *msg, size_t len, int tput);

/* Every DSig row of one configuration (none, counted as skipped, without the runtime). */
int bd_config_rows(run *R, const bench_dsig_cfg *cfg, const uint8_t *payload, const size_t *sizes,
                   size_t nsizes, int with_tput);

#endif
