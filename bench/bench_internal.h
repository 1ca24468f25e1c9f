/*
 * bench/bench_internal.h — pieces of the benchmark harness shared between its files and its tests
 * (tests/bench/). Not part of the library API: the harness uses the include/dsig/ headers, libsodium and
 * OpenSSL for the baselines, and of the library's own headers only the header-only byte helpers
 * (core/bytes.h), the kernels the kernel benchmarks time (bench_keccak.c, bench_feed.c) and the
 * applications bench_apps.c drives (apps/apps.h, with net/net.h to reach their servers).
 */
#ifndef DSIG_BENCH_INTERNAL_H
#define DSIG_BENCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dsig/dsig.h"

#define BENCH_MAX_SIZES 32
#define BENCH_MAX_BITS 8
#define BENCH_MAX_ALGS 128
#define BENCH_ERR_LEN 4096

enum bench_source { BENCH_SRC_MEM = 0, BENCH_SRC_FILE = 1, BENCH_SRC_PIPE = 2 };
enum bench_format { BENCH_FMT_JWS = 0, BENCH_FMT_RAW = 1 };

/* Options of `dsig bench stream` after parsing (profile applied, explicit options on top). */
typedef struct bench_stream_opts {
    uint64_t sizes[BENCH_MAX_SIZES]; /* payload sizes in bytes (multiples of 1 KiB) */
    size_t nsizes;
    unsigned warmup, measure;
    uint64_t seed;
    size_t chunk;
    int source;                      /* enum bench_source */
    int format;                      /* enum bench_format */
    uint32_t reserve;                /* stateful keys: indices per durable write (0 = bench default) */
    const char *out_dir;             /* CSV and SVG only when given (NULL: none) */
    const char *algs;                /* comma-separated names/globs; NULL = every algorithm */
    unsigned rsa_bits[BENCH_MAX_BITS];
    size_t nrsa_bits;                /* 0 = profile default */
    int quick, json, list;
} bench_stream_opts;

/* Options of `dsig bench sig`. */
typedef struct bench_sig_opts {
    size_t msg_bytes;
    unsigned warmup, measure;        /* measure = maximum number of samples per (alg, op) */
    double max_time;                 /* seconds per (alg, op) before stopping early */
    int cpu_clock;                   /* samples in CPU time of the thread instead of wall-clock time */
    uint64_t seed;
    uint32_t reserve;                /* stateful keys: indices per durable write (0 = bench default) */
    const char *out_dir;             /* CSV only when given */
    const char *algs;
    unsigned rsa_bits[BENCH_MAX_BITS];
    size_t nrsa_bits;
    int quick, json, list;
} bench_sig_opts;

/* Median, minimum and maximum of one metric over the measured iterations. */
typedef struct bench_stat {
    double median, min, max;
} bench_stat;

/* One row of the streaming report: one (algorithm, key size, payload size). */
typedef struct bench_row {
    char kty[16];
    char alg[48];        /* registry name */
    char label[64];      /* what the ALG column shows (alg, or alg/bits for RSA key sizes) */
    unsigned key_bits;
    uint64_t bytes;
    bench_stat sign_ms, ver_ms, cpu_s_ms, cpu_v_ms, mem_s_kib, mem_v_kib;
    double mibps_s, mibps_v;
    char baseline[24];
    double base_ms;      /* median wall ms of the bare baseline; < 0 = n/a */
    double eff_s, eff_v; /* base_ms / op median; < 0 = n/a */
} bench_row;

/* ---- parsing (bench_args.c). Return 0 = run, 1 = help printed, -1 = error (message in err). ---- */
int bench_stream_parse(int argc, char **argv, bench_stream_opts *o, char *err, size_t errlen);
int bench_sig_parse(int argc, char **argv, bench_sig_opts *o, char *err, size_t errlen);
/* "1" = 1 MiB, "64K", "5M", "1G", "512KiB", "10MiB": a positive multiple of 1 KiB. */
int bench_parse_size(const char *s, uint64_t *out);
/* Resolve comma-separated names or globs against the registry, in registry order, each once. */
int bench_select_algs(const char *patterns, const dsig_alg **out, size_t cap, size_t *n, char *err,
                      size_t errlen);
void bench_print_stream_help(FILE *f);
void bench_print_sig_help(FILE *f);

/* ---- payload, statistics, clocks, memory (bench_util.c) ---- */
/* Deterministic payload: little-endian splitmix64 outputs from state `seed` (a shorter payload is a
 * prefix of a longer one with the same seed). Not cryptographic; only reproducible. */
void bench_payload_fill(uint8_t *buf, size_t n, uint64_t seed);
/* The next splitmix64 output of *state (reproducible workloads; not cryptographic). */
uint64_t bench_rand_u64(uint64_t *state);
bench_stat bench_stat_of(double *v, size_t n);           /* sorts v */
double bench_percentile(const double *sorted, size_t n, double q); /* nearest rank */
/* Median, p90 and p99 (nearest rank) of one latency quantity: the percentiles every latency report
 * prints (`dsig ping` rows, `dsig bench dsig` rows). */
typedef struct bench_pctl {
    double median, p90, p99;
} bench_pctl;
bench_pctl bench_pctl_of(double *v, size_t n);            /* sorts v; all 0 when n is 0 */
double bench_now_ms(void);                                /* CLOCK_MONOTONIC */
double bench_cpu_ms(void);                                /* CLOCK_THREAD_CPUTIME_ID */

typedef struct bench_mem_probe {
    long rss_before_kib;
    long hwm_before_kib;
    int peak_reset;       /* clear_refs worked: VmHWM was reset to the current RSS */
    uint64_t lib_before;
} bench_mem_probe;
void bench_mem_begin(bench_mem_probe *p);
double bench_mem_end(const bench_mem_probe *p); /* growth in KiB (see docs/benchmarks.md) */

/* ---- keys and files shared by both harnesses (bench_util.c) ---- */
/* 32 key-seed bytes derived from --seed and a counter (stateful schemes: one counter per key). */
void bench_key_seed(uint8_t out[32], uint64_t seed, uint64_t counter);
/* Does the algorithm take a modulus size (--rsa-bits)? Decided by its key type, not its name. */
int bench_alg_takes_bits(const dsig_alg *alg);
/* Seeded signing key and the key that verifies (the public part; the same key for MACs). */
int bench_make_keys(const dsig_alg *alg, unsigned bits, uint64_t seed, uint64_t counter,
                    dsig_key **sign_key, dsig_key **verify_key);
/* "<strerror>: <detail>" for a failed call. */
const char *bench_errstr(int rc, char *buf, size_t cap);
int bench_mkdir_p(const char *dir);
/* A whole small file, NUL-terminated, read with the library's chunked reader (dsig_read_fd): 0, or -1
 * with errno set (EFBIG when it holds more than max bytes). Free *out with free() (wipe it first when
 * it holds a secret). */
int bench_read_file(const char *path, size_t max, char **out, size_t *len);
void bench_timestamp(char *buf, size_t cap);   /* local time, YYYYMMDD_HHMMSS */
void bench_utc_date(char *buf, size_t cap);    /* "YYYY-MM-DD HH:MM UTC" */
/* The CPU model (/proc/cpuinfo) and the number of online CPUs, e.g. "Intel(R) Xeon(R) ..., 2 CPUs". */
void bench_machine(char *buf, size_t cap);

/* ---- option parsing shared by bench_args.c, bench_dsig.c and bench_ping.c (bench_util.c) ---- */
/* Format an error message into err (printf-style) and return -1. */
__attribute__((format(printf, 3, 4))) int bench_fail(char *err, size_t len, const char *fmt, ...);
/* Unsigned decimal in [lo, hi], whole string: 0, or -1 (out untouched). */
int bench_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* "N[unit]": a bare N is multiplied by `bare`; `units` lists the accepted unit letters in lower case,
 * the i-th meaning 1024^(i+1) ("k", "km", "kmg"), each written in any case, alone or followed by
 * "b" / "iB". The product must lie in [lo, hi]. 0, or -1 (out untouched). */
int bench_parse_scaled(const char *s, uint64_t bare, const char *units, uint64_t lo, uint64_t hi,
                       uint64_t *out);
/* Value of an option given as "--name VALUE" or "--name=VALUE" at argv[*i] (advancing *i past a
 * separate value); NULL if argv[*i] is not that option, with *missing set when it is but the value
 * is not there. */
const char *bench_opt_value(int argc, char **argv, int *i, const char *name, int *missing);

/* A comma-separated list option: its limits, its messages and how one item is read. */
typedef struct bench_list_spec {
    const char *opt;     /* "--sizes" */
    size_t max_len;      /* the list text must be shorter than this (at most 512) */
    const char *item;    /* the bad-item message's words before the item ("bad size") */
    const char *unit;    /* what "at most N ..." counts ("sizes") */
    const char *valid;   /* the valid items, for the bad-item message */
    const char *example; /* "; valid: <example>" of the empty-list message; NULL = none */
    int (*parse)(const char *t, void *out, size_t i); /* read item t into element i of out */
} bench_list_spec;
/* Split a comma-separated list and read each item into out[0..cap) (*n = items read); duplicates
 * are kept. 0, or -1 with the message in err. */
int bench_parse_list(const bench_list_spec *ls, const char *s, void *out, size_t cap, size_t *n,
                     char *err, size_t len);

/* ---- formatting (bench_report.c) ---- */
/* An efficiency above this is physically impossible (the operation contains the bare hash it is
 * divided into): the baseline measurement was disturbed. Such rows are flagged ("!" in the table,
 * eff_suspect in CSV and JSON, a warning after the table). */
#define BENCH_EFF_SUSPECT 1.10
int bench_eff_suspect(double eff);
int bench_row_suspect(const bench_row *r);
void bench_table_header(FILE *f);
void bench_table_rule(FILE *f);
void bench_table_row(FILE *f, const bench_row *r);
void bench_csv_header(FILE *f);
void bench_csv_row(FILE *f, const bench_row *r);
void bench_json_row(FILE *f, const bench_row *r);
/* What the chart says about its run, so that it can be read without the CSV beside it. */
typedef struct bench_svg_meta {
    const char *machine;  /* bench_machine() */
    const char *date;     /* UTC, "YYYY-MM-DD HH:MM UTC" */
    unsigned warmup, measure;
} bench_svg_meta;
/* Grouped bar chart of sign/verify MiB/s of the rows whose bytes == `bytes`: medians as bars,
 * min-max whiskers, an x axis with ticks; the title names the machine, date and iterations. */
void bench_svg_write(FILE *f, const bench_row *rows, size_t n, uint64_t bytes, const bench_svg_meta *m);
/* The x-axis tick step for values up to max: 1, 2 or 5 times a power of ten, at most 8 steps. */
double bench_svg_tick_step(double max);
/* A CSV field (RFC 4180 quoting when needed); XML-escaped text. */
void bench_csv_str(FILE *f, const char *s);
void bench_xml_str(FILE *f, const char *s);

/* One bar of a latency chart: the median as a bar, p10..p90 as a whisker. Bars of one `group` are drawn
 * together under the group's title (groups in order of first appearance); `series` indexes the chart's
 * legend and picks the colour. */
typedef struct bench_lat_bar {
    const char *group;
    const char *label;           /* left of the bar; NULL: the series name */
    int series;
    double p10, p50, p90;
    unsigned long n;             /* samples behind it (printed when not 0) */
} bench_lat_bar;
/* What a latency chart says besides its bars. */
typedef struct bench_lat_chart {
    const char *title;
    const char *const *subtitle; /* machine, date, counts, method */
    size_t nsub;
    const char *const *series;   /* legend names */
    size_t nseries;
    const char *unit;            /* of the values, printed after each median ("µs") */
    const char *axis;            /* caption under the x axis */
    const char *const *group_notes; /* NULL, or one per group (NULL entries: none), printed under its title */
    int log_axis;                /* logarithmic x axis (1-2-5 per decade) for latencies spanning decades */
} bench_lat_chart;
/* The benchmarks' one latency chart (bench_svg_latency.c): horizontal bars with whiskers, grouped and
 * coloured by series, title, subtitles, legend, axis with ticks and grid, value labels, group notes. */
void bench_svg_latency(FILE *f, const bench_lat_chart *c, const bench_lat_bar *bars, size_t n);

/* ---- runners ---- */
int bench_stream_run(const bench_stream_opts *o);
int bench_sig_run(const bench_sig_opts *o);

#endif
