/*
 * dsig/mem.h — memory: freeing library-allocated buffers, wiping, constant-time comparison, and the
 * allocation counters used by the benchmarks to report "bytes the library allocated".
 */
#ifndef DSIG_MEM_H
#define DSIG_MEM_H

#include "common.h"

DSIG_BEGIN_DECLS

/*
 * Free a buffer the library allocated for the caller (JWK, JWS and PEM text, embedded payloads),
 * wiping it first. NULL is accepted. Never use free() on such a buffer: the library's allocator keeps
 * a header in front of it.
 */
DSIG_EXPORT void dsig_free(void *p);

/*
 * Overwrite `n` bytes at `p` with zeros in a way the compiler cannot remove as a dead store (for
 * secrets in the caller's own buffers). n == 0 does nothing.
 */
DSIG_EXPORT void dsig_memzero(void *p, size_t n);

/*
 * Constant-time equality of two buffers of `n` bytes: the time taken depends on n only, never on
 * where the buffers differ (for comparing MAC tags, tokens and digests).
 * @retval 1 the buffers are equal (also for n == 0).
 * @retval 0 they differ.
 */
DSIG_EXPORT int dsig_ct_equal(const void *a, const void *b, size_t n);

typedef struct dsig_alloc_stats {
    uint64_t current;   /* bytes currently allocated by the library */
    uint64_t peak;      /* high-water mark of `current` since the last reset */
    uint64_t total;     /* bytes allocated since the last reset */
    uint64_t count;     /* number of allocations since the last reset */
} dsig_alloc_stats;

/*
 * Copy the counters of the library's own allocations (and OpenSSL's, once
 * dsig_track_openssl_allocations() succeeded) into *out. Thread-safe (atomic counters); each counter is
 * read atomically, the set is not one snapshot while other threads allocate.
 */
DSIG_EXPORT void dsig_alloc_stats_get(dsig_alloc_stats *out);
/*
 * Start a new measurement: peak := current, total := 0, count := 0 (current is left as it is: the
 * bytes still allocated stay counted). Thread-safe.
 */
DSIG_EXPORT void dsig_alloc_stats_reset(void);

/*
 * Route OpenSSL's allocations through the library's counters (dsig_alloc_stats_get), so that the
 * benchmarks report what OpenSSL allocates on the library's behalf too. Must be called before anything
 * in the process uses OpenSSL (first thing in main()).
 * @retval DSIG_OK      OpenSSL allocates through the counters from now on.
 * @retval DSIG_E_STATE too late: OpenSSL has already allocated memory (CRYPTO_set_mem_functions refused).
 */
DSIG_EXPORT int dsig_track_openssl_allocations(void);

DSIG_END_DECLS

#endif
