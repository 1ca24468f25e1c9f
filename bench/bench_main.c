/*
 * bench/bench_main.c — `dsig bench SUBCOMMAND`: dispatch to the streaming, short-message, DSig and
 * Keccak harnesses (see docs/benchmarks.md).
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "bench_apps.h"
#include "bench_bft.h"
#include "bench_dsig.h"
#include "bench_internal.h"
#include "bench_keccak.h"

/* Top-level usage. */
static void usage(FILE *f)
{
    fputs("Usage: dsig bench stream [options]   streaming sign/verify per algorithm and payload size\n"
          "       dsig bench sig [options]      keygen/sign/verify of short messages\n"
          "       dsig bench dsig [options]     DSig hybrid signatures vs Ed25519\n"
          "       dsig bench keccak [options]   Keccak-f[1600] and SHAKE256: ours vs OpenSSL EVP\n"
          "       dsig bench apps [options]     auditable Redis and order book: none / Ed25519 / DSig\n"
          "       dsig bench bft [options]      BFT broadcast and replication: none / Ed25519 / DSig\n"
          "       dsig bench SUBCOMMAND --help  options of a subcommand\n",
          f);
}

/* Usage of `dsig bench keccak`. */
static void keccak_usage(FILE *f)
{
    fputs("Usage: dsig bench keccak [--quick] [--runs N]\n"
          "  Keccak-f[1600] ns per permutation (one state; four states with the portable and AVX2 x4\n"
          "  back-ends), SHAKE256 MiB/s absorbing 64 KiB chunks (the streaming hot path) and ns per\n"
          "  32-byte-in / 32-byte-out SHAKE256 call, src/hash/keccak.h against OpenSSL 3 EVP. Each\n"
          "  metric is timed N times: median, min and max are printed (ratios use the medians).\n"
          "  --quick    a tenth of the iterations and 3 runs (a smoke test: well under 1 s)\n"
          "  --runs N   runs per metric, 1..15 (default 7)\n",
          f);
}

/* `dsig bench keccak [--quick] [--runs N]`: argv[0] is "keccak". */
static int keccak_main(int argc, char **argv)
{
    double scale = 1;
    uint64_t runs = 7;
    int quick = 0, runs_given = 0;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            keccak_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--runs", &missing)) != NULL) {
            if (bench_parse_u64(v, 1, 15, &runs) != 0) {
                fprintf(stderr, "dsig bench keccak: bad --runs \"%s\"; valid: 1..15\n", v);
                return 2;
            }
            runs_given = 1;
        } else {
            if (missing)
                fprintf(stderr, "dsig bench keccak: %s needs a value\n", argv[i]);
            else
                fprintf(stderr, "dsig bench keccak: unknown option \"%s\"; valid: --quick, --runs N, "
                                "--help\n", argv[i]);
            return 2;
        }
    }
    if (quick) {
        scale = 0.1;
        if (!runs_given)
            runs = 3;
    }
    return dsig_bench_keccak(stdout, scale, (int)runs) == 0 ? 0 : 1;
}

/* argv[0] is "bench"; argv[1] the subcommand. */
int dsig_bench_main(int argc, char **argv)
{
    char err[BENCH_ERR_LEN];
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "stream") == 0) {
        bench_stream_opts o;
        int r = bench_stream_parse(argc - 1, argv + 1, &o, err, sizeof err);
        if (r == 1) {
            bench_print_stream_help(stdout);
            return 0;
        }
        if (r < 0) {
            fprintf(stderr, "dsig bench stream: %s\n", err);
            return 2;
        }
        return bench_stream_run(&o);
    }
    if (strcmp(argv[1], "sig") == 0) {
        bench_sig_opts o;
        int r = bench_sig_parse(argc - 1, argv + 1, &o, err, sizeof err);
        if (r == 1) {
            bench_print_sig_help(stdout);
            return 0;
        }
        if (r < 0) {
            fprintf(stderr, "dsig bench sig: %s\n", err);
            return 2;
        }
        return bench_sig_run(&o);
    }
    if (strcmp(argv[1], "dsig") == 0)
        return bench_dsig_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "keccak") == 0)
        return keccak_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "apps") == 0)
        return bench_apps_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "bft") == 0)
        return bench_bft_main(argc - 1, argv + 1);
    fprintf(stderr, "dsig bench: unknown subcommand \"%s\"; valid: stream, sig, dsig, keccak, apps, bft\n", argv[1]);
    return 2;
}
