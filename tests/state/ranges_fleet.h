/*
 * tests/state/ranges_fleet.h — what the shared-key tests (test_ranges_procs, test_ranges_threads) have
 * in common: a fleet of signers of one stateful key, each with its own copy of a fenced state file
 * (an empty window: indices come from the shared counter only) and its own high-water registry, as
 * separate `dsig serve` instances have; signing threads that append one record per signature
 * (u32 message length, message, u32 signature length, signature: one write each); and the check that
 * reads every record back, verifies each signature and proves that no index was used twice.
 */
#ifndef DSIG_TEST_RANGES_FLEET_H
#define DSIG_TEST_RANGES_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/dsig.h"
#include "serve/ranges.h"

struct fleet_key {
    const char *alg_name;   /* "HSS-LMS", "XMSS", "XMSSMT" */
    const char *param;
    unsigned idx_bytes;     /* 0: HSS (the index from the tree levels), else XMSS idx bytes */
};

/* Create the key of `fk` in `dir`: DIR/master.state, fenced (dsig_state_set_window(k, 0, 0)), copied
 * to DIR/inst<i>/key.state for i < n (each with the registry DIR/inst<i>/reg); *pub is its public key;
 * DIR/counter is the shared file counter's directory. */
void fleet_create(const char *dir, const struct fleet_key *fk, int n, dsig_key **pub);

/* One instance: open DIR/inst<i>/key.state with the shared counter (fleet_counter_new), run `threads`
 * threads that each sign up to `per_thread` messages ("<tag> t<j> n<m>") and append their records to `out`. Returns the
 * number of threads that ended with DSIG_E_EXHAUSTED (the others signed all they had to); a failure of
 * any other kind fails the test (in a child: exit 6). */
int fleet_instance(const char *dir, const struct fleet_key *fk, int i, int threads, int per_thread,
                   const char *out, const char *tag);

/* The shared counter fleet_instance uses: NULL (the default) = the file counter of DIR/counter; a
 * test of another counter (tests/coord: etcd) sets its own constructor before any instance starts. */
extern int (*fleet_counter_new)(struct serve_counter **out, const char *dir);

/* Read the records of `path`, verify each signature with `pub`, append their indices to idx[*n..]
 * (capacity cap). A torn last record is allowed only when `torn_ok`. Returns the records read. */
size_t fleet_collect(const char *path, const struct fleet_key *fk, const dsig_key *pub, int torn_ok,
                     int64_t *idx, size_t *n, size_t cap);

/* Fail the test if an index occurs twice in idx[0..n) (sorts it). */
void fleet_check_unique(int64_t *idx, size_t n, const char *what);

#endif
