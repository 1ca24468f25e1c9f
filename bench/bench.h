/*
 * bench/bench.h — the benchmark harnesses behind `dsig bench ...`.
 */
#ifndef DSIG_BENCH_H
#define DSIG_BENCH_H

/* `dsig bench SUBCOMMAND [options]`: argv[0] is "bench". Returns a process exit code. */
int dsig_bench_main(int argc, char **argv);

#endif
