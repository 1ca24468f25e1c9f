/*
 * dsig/mem.h — memory: freeing library-allocated buffers, wiping, constant-time comparison, and the
 * allocation counters used by the benchmarks to report "bytes the library allocated".
 */
#ifndef DSIG_MEM_H
#define DSIG_MEM_H

#include "common.h"

DSIG_BEGIN_DECLS

/* Free a buffer returned by the library (JWK/JWS/PEM text). Wipes it first. NULL is accepted. */
DSIG_EXPORT void dsig_free(void *p);

/* Overwrite memory in a way the compiler cannot elide. */
DSIG_EXPORT void dsig_memzero(void *p, size_t n);

/* Constant-time equality of two equal-length buffers: 1 if equal, 0 if not. Time depends on n only. */
DSIG_EXPORT int dsig_ct_equal(const void *a, const void *b, size_t n);

typedef struct dsig_alloc_stats {
    uint64_t current;   /* bytes currently allocated by the library */
    uint64_t peak;      /* high-water mark of `current` since the last reset */
    uint64_t total;     /* bytes allocated since the last reset */
    uint64_t count;     /* number of allocations since the last reset */
} dsig_alloc_stats;

/* Counters of the library's own allocations (and OpenSSL's if dsig_track_openssl_allocations()
 * succeeded). Thread-safe (atomic). */
DSIG_EXPORT void dsig_alloc_stats_get(dsig_alloc_stats *out);
DSIG_EXPORT void dsig_alloc_stats_reset(void);   /* peak := current; total := count := 0 */

/* Route OpenSSL's allocations through the counters. Must be called before anything else uses
 * OpenSSL in the process; returns DSIG_E_STATE if too late. */
DSIG_EXPORT int dsig_track_openssl_allocations(void);

DSIG_END_DECLS

#endif
