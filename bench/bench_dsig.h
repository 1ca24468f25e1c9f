/*
 * bench/bench_dsig.h — `dsig bench dsig`: DSig hybrid signatures against libsodium and OpenSSL
 * Ed25519 in the same run (latency percentiles, one-core throughput, w / HORS / hash / batch sweeps,
 * the paper's latency targets). Shared with tests/bench/test_bench_dsig.c; not part of the library API.
 */
#ifndef DSIG_BENCH_DSIG_H
#define DSIG_BENCH_DSIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_DSIG_MAX_SIZES 16
#define BENCH_DSIG_MAX_BATCH 11 /* 2^0 .. 2^10 */
#define BENCH_DSIG_MAX_HBSS 8
#define BENCH_DSIG_MAX_HASH 4
#define BENCH_DSIG_MAX_MSG (1u << 20)
#define BENCH_DSIG_MAX_COUNT 10000000u

/* Hash of the one-time scheme, in the order of the --hash names "haraka", "sha256", "blake3". */
enum bench_dsig_hash { BENCH_DSIG_HARAKA = 0, BENCH_DSIG_SHA256 = 1, BENCH_DSIG_BLAKE3 = 2 };

/* One one-time scheme of the sweep: W-OTS+ of depth w, or HORS (w = 0) revealing k of 2^log_t slots. */
typedef struct bench_dsig_hbss {
    unsigned w;      /* 2, 4, 8, 16; 0 = HORS */
    unsigned k;      /* HORS: 64, 32 or 16; 0 for W-OTS+ */
    unsigned log_t;  /* HORS: 8, 9 or 12 (the published pairs); 0 for W-OTS+ */
} bench_dsig_hbss;

/* One DSig configuration: one-time scheme, chain hash, batch size. */
typedef struct bench_dsig_cfg {
    bench_dsig_hbss hbss;
    int hash;        /* enum bench_dsig_hash */
    unsigned batch;  /* one-time keys per Ed25519-signed Merkle batch */
} bench_dsig_cfg;

/* Options of `dsig bench dsig` after parsing (profile first, explicit options on top). */
typedef struct bench_dsig_opts {
    size_t sizes[BENCH_DSIG_MAX_SIZES]; /* message sizes in bytes; sizes[0] is used by the sweeps */
    size_t nsizes;
    unsigned count;                      /* timed calls per latency row */
    unsigned batch[BENCH_DSIG_MAX_BATCH];/* Merkle batch sizes, powers of two 1..1024 */
    size_t nbatch;
    bench_dsig_hbss hbss[BENCH_DSIG_MAX_HBSS]; /* hbss[0..] from --w; the primary is w = 4 if listed */
    size_t nhbss;
    int hash[BENCH_DSIG_MAX_HASH];       /* enum bench_dsig_hash */
    size_t nhash;
    uint64_t seed;                       /* payload and baseline key seed */
    int quick, json;
    int targets;                         /* --targets: also judge the paper's latency targets (PASS/FAIL) */
} bench_dsig_opts;

/* One measured row (latency or throughput) of the report. */
typedef struct bench_dsig_row {
    char scheme[24]; /* "dsig", "sodium-ed25519", "openssl-ed25519" */
    char op[16];     /* "sign", "verify-fast", "verify-slow" (dsig) or "verify" (baselines, dsig tput) */
    char metric[12]; /* "latency" or "throughput" */
    bench_dsig_cfg cfg; /* dsig rows only; the baselines have hbss all zero, hash -1, batch 0 */
    size_t msg_bytes, sig_bytes, n;
    double median_ns, p90_ns, p99_ns, min_ns, max_ns, ops_per_s;
} bench_dsig_row;

/* Parse argv (argv[0] = "dsig"). 0 = run, 1 = help requested, -1 = error (message in err). */
int bench_dsig_parse(int argc, char **argv, bench_dsig_opts *o, char *err, size_t errlen);
void bench_dsig_print_help(FILE *f);
const char *bench_dsig_hash_name(int hash); /* "haraka", "sha256", "blake3"; NULL if unknown */

/* Statistics of n samples in ns (sorted in place) into r: n, median, p90, p99, min, max, ops/s. */
void bench_dsig_fill_stats(bench_dsig_row *r, double *ns, size_t n);

/* Output: one JSON object per line, or one table line (print the header first). */
void bench_dsig_json_row(FILE *f, const bench_dsig_row *r);
void bench_dsig_table_header(FILE *f);
void bench_dsig_table_row(FILE *f, const bench_dsig_row *r);

/* The primary configuration of the options: w = 4 (else the first of --w), haraka (else the first of
 * --hash), batch 128 (else the first of --batch-sizes). The size sweep runs with it. */
bench_dsig_cfg bench_dsig_primary(const bench_dsig_opts *o);

/* The paper's latency targets over measured rows (8-byte latency medians of the primary configuration):
 * "PASS ...", "FAIL ..." or "SKIP ..." lines on f. Returns the number of FAIL lines (stretch goals
 * are reported but never counted). */
int bench_dsig_targets(FILE *f, const bench_dsig_row *rows, size_t n, const bench_dsig_cfg *primary);
/* The figures the targets are about, as same-run ratios (no judgement): the 8-byte primary DSig sign
 * and fast-verify medians and how many times faster they are than libsodium's Ed25519 in this run. */
void bench_dsig_ratios(FILE *f, const bench_dsig_row *rows, size_t n, const bench_dsig_cfg *primary);

/* 1 when this build has the DSig runtime (include/dsig/hybrid.h), 0 when only the baselines run. */
int bench_dsig_available(void);

/* `dsig bench dsig` with parsed options (rows also handed to `sink` when not NULL, e.g. for tests).
 * Returns a process exit code. */
typedef void (*bench_dsig_sink)(void *ctx, const bench_dsig_row *r);
int bench_dsig_run(const bench_dsig_opts *o, bench_dsig_sink sink, void *ctx);

/* Entry point from bench_main.c: argv[0] = "dsig". */
int bench_dsig_main(int argc, char **argv);

#endif
