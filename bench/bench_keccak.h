/*
 * bench/bench_keccak.h — Keccak micro-benchmark (src/hash/keccak*.c against OpenSSL EVP SHAKE256),
 * behind `dsig bench keccak`.
 */
#ifndef DSIG_BENCH_KECCAK_H
#define DSIG_BENCH_KECCAK_H

#include <stdio.h>

/* Measure ns per permutation (one state, x4 portable, x4 AVX2), bulk SHAKE256 MiB/s on 64 KiB chunks
 * and the 32-byte-in / 32-byte-out SHAKE256 call, ours vs EVP; print median [min .. max] of `runs`
 * runs (1..15) per metric to `out`. Returns 0, or 1 if OpenSSL could not provide SHAKE256. `scale`
 * multiplies the iteration counts (1 with 7 runs: well under 1 s on an idle core). */
int dsig_bench_keccak(FILE *out, double scale, int runs);

#endif
