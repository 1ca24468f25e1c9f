/*
 * bench/bench_apps.h — `dsig bench apps`: the DSig paper's application benchmark (auditable key-value
 * store and order book) with no signature, libsodium Ed25519 and DSig through the same server code path,
 * client and server in separate processes (docs/benchmarks.md "dsig bench apps").
 */
#ifndef DSIG_BENCH_APPS_H
#define DSIG_BENCH_APPS_H

/* `dsig bench apps [options]`: argv[0] is "apps". Returns a process exit code (0 done, 2 error). */
int bench_apps_main(int argc, char **argv);

#endif
