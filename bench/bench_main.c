/*
 * bench/bench_main.c — `dsig bench SUBCOMMAND`: dispatch to the streaming and the short-message
 * harnesses (see docs/benchmarks.md).
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "bench_dsig.h"
#include "bench_internal.h"

/* Top-level usage. */
static void usage(FILE *f)
{
    fputs("usage: dsig bench stream [options]   streaming sign/verify per algorithm and payload size\n"
          "       dsig bench sig [options]      keygen/sign/verify of short messages\n"
          "       dsig bench dsig [options]     DSig hybrid signatures vs Ed25519 (issue 4)\n"
          "       dsig bench SUBCOMMAND --help  options of a subcommand\n",
          f);
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
    fprintf(stderr, "dsig bench: unknown subcommand \"%s\"; valid: stream, sig\n", argv[1]);
    return 2;
}
