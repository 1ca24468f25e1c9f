/*
 * bench/bench_bft.h — `dsig bench bft`: the DSig paper's BFT applications (§8: broadcast −73 %,
 * replication −69 %) rebuilt on dsig's message-passing protocols (docs/bft.md), with no signature,
 * libsodium Ed25519 and DSig through the same code. Not part of the library API.
 */
#ifndef DSIG_BENCH_BFT_H
#define DSIG_BENCH_BFT_H

/* `dsig bench bft [options]`: argv[0] is "bft". Returns a process exit code (0, or 2 on an error). */
int bench_bft_main(int argc, char **argv);

#endif
