/*
 * bench/bench_state.h — stateful schemes (DSIG_ALG_STATEFUL: HSS-LMS, XMSS, XMSSMT) in the benchmarks:
 * the parameter sets measured, and signing keys in state files inside a private temporary directory
 * (mkdtemp) with its own high-water registry, removed at exit, on error and on SIGINT/SIGTERM/SIGHUP.
 */
#ifndef DSIG_BENCH_STATE_H
#define DSIG_BENCH_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/dsig.h"
#include "dsig/state.h"

/* Reservation window of benchmark keys (indices per durable write) unless --reserve says otherwise:
 * a window this large makes the fsync of a reservation one sample in a thousand. */
#define BENCH_STATE_RESERVE 1024u

/* One measured parameter set of a stateful algorithm. */
typedef struct bench_pset {
    const char *alg;    /* registry name */
    const char *param;  /* dsig_keygen_params.param, always spelled out (never the implicit default) */
    const char *label;  /* what the ALG column shows */
} bench_pset;

/* The parameter sets measured for a stateful algorithm: *sets and their count (0 = none known). */
size_t bench_state_sets(const dsig_alg *alg, const bench_pset **sets);

/* Create the private directory (once per process; later calls reuse it). 0, or -1 with err set. */
int bench_state_begin(char *err, size_t len);
/* The directory (empty before bench_state_begin). */
const char *bench_state_dir(void);

/* A signing key of `ps` in a new state file (seed from bench_key_seed(seed, counter)), reserving
 * `reserve` indices per durable write, and its public key. keygen_ms: wall time of dsig_state_create
 * (key generation + the first durable write of the file). DSIG_OK or a library status. */
int bench_state_key(const dsig_alg *alg, const bench_pset *ps, uint64_t seed, uint64_t counter,
                    uint32_t reserve, dsig_key **sign_key, dsig_key **verify_key, double *keygen_ms);

/* Signatures left in a state key (0 on error). */
uint64_t bench_state_remaining(const dsig_key *sign_key);

/* Remove every file and directory made so far (also run by atexit and the signal handlers). */
void bench_state_end(void);

#endif
