/*
 * bench/bench_ping.h — `dsig ping`: the DSig paper's two-process ping-pong (sign → send → verify →
 * reply) with no signature, libsodium Ed25519 and DSig measured in the same run. Shared
 * with tests/ping/; not part of the library API. docs/benchmarks.md ("dsig ping") explains the method.
 */
#ifndef DSIG_BENCH_PING_H
#define DSIG_BENCH_PING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_internal.h"

#define PING_MAX_SIZES 16
#define PING_MAX_MSG 8192u        /* --size ceiling: 8 KiB, as in the paper's sweep */
#define PING_MAX_COUNT 1000000u
#define PING_MAX_RUNS 100u

/* Schemes, in the order they are measured (and their --schemes names). */
enum ping_scheme { PING_NONE = 0, PING_SODIUM = 1, PING_DSIG = 2, PING_NSCHEMES = 3 };

/* Options of `dsig ping` after parsing. */
typedef struct ping_opts {
    size_t sizes[PING_MAX_SIZES];  /* message sizes in bytes, 1 .. PING_MAX_MSG */
    size_t nsizes;
    unsigned count;                /* timed round trips per (scheme, size, run) */
    unsigned warmup;               /* untimed round trips before each block */
    unsigned runs;                 /* the whole (size x scheme) sweep is repeated, interleaved */
    unsigned schemes;              /* bit (1 << enum ping_scheme) per selected scheme */
    int json;
    int quiet;                     /* no progress notes on stderr */
    /* Two-host mode: one end against a configured peer. NULL config = both ends on loopback. */
    const char *config;            /* membership file (JSON), see docs/benchmarks.md */
    const char *key;               /* this node's Ed25519 private key (JWK file) */
    uint64_t id;                   /* this node's id in the config */
    uint64_t peer;                 /* the peer's id; 0 = the only other node of the config */
    int have_id;
    /* Membership through etcd (docs/node.md "Membership through etcd"): NULL = the config alone. */
    const char *etcd;              /* "http://HOST:PORT[,...]" */
    const char *etcd_prefix;       /* NULL: the node plane's default */
} ping_opts;

/* Percentiles of one measured quantity, in ns: the shared latency percentiles of the report code. */
typedef bench_pctl ping_stat;

/* One result row: one scheme at one message size, every run pooled. */
typedef struct ping_row {
    int scheme;                    /* enum ping_scheme */
    size_t msg_bytes, sig_bytes;
    unsigned rounds;               /* round trips measured (count x runs) */
    unsigned runs;
    ping_stat rtt;                 /* initiator: before its sign .. after its verify of the reply */
    ping_stat sign, verify;        /* both ends' samples pooled (2 per round trip) */
    ping_stat transmit;            /* one way: (rtt - both signs - both verifies) / 2 per round */
    double fast_path_fraction;     /* dsig: verifications on the fast path / all (both ends);
                                      < 0 for the other schemes (printed as null) */
    /* CPU time of each end's background threads (everything but the thread that runs its event loop
     * and does the foreground sign/verify) over the wall time of the timed rounds, in cores (1.0 = one
     * core busy); every run pooled. */
    double bg_cpu_initiator, bg_cpu_responder;
} ping_row;

/* Parse argv (argv[0] = "ping"). 0 = run, 1 = help requested, -1 = error (message in err). */
int ping_parse(int argc, char **argv, ping_opts *o, char *err, size_t errlen);
void ping_print_help(FILE *f);

/* "none", "sodium-ed25519", "dsig"; NULL if out of range. */
const char *ping_scheme_name(int scheme);

/* Median / p90 / p99 (nearest rank) of n samples; sorts v. */
ping_stat ping_stat_of(double *v, size_t n);

/* Output: one JSON object per line; the table header and one table line. */
void ping_json_row(FILE *f, const ping_row *r);
void ping_table_header(FILE *f);
void ping_table_row(FILE *f, const ping_row *r);

/*
 * the ping latency target at message size `msg_bytes`: the median RTT DSig adds over "none" is at most 1/5
 * of what sodium-ed25519 adds (same run). Prints one "PASS ...", "FAIL ..." or "SKIP ..." line;
 * returns 1 for FAIL, else 0.
 */
int ping_target(FILE *f, const ping_row *rows, size_t n, size_t msg_bytes);

/*
 * The ping plane target at message size `msg_bytes`: during DSig's timed rounds the background plane
 * of each end costs at most one core (bg_cpu_initiator and bg_cpu_responder <= 1.0). Prints one
 * "PASS", "FAIL" or "SKIP" line; returns 1 for FAIL, else 0.
 */
int ping_target_bg(FILE *f, const ping_row *rows, size_t n, size_t msg_bytes);

/* Rows also go to `sink` (tests). Returns a process exit code: 0 done (whatever the target verdict),
 * 2 error (bad option or key, lost peer, a signature that does not verify). */
typedef void (*ping_sink)(void *ctx, const ping_row *r);
int ping_run(const ping_opts *o, ping_sink sink, void *ctx);

/* Entry point of `dsig ping` (argv[0] = "ping"): parse, run, exit code. */
int dsig_ping_main(int argc, char **argv);

#endif
