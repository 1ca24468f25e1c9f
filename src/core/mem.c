/*
 * Counted allocation, wiping and constant-time comparison.
 *
 * Every allocation the library makes goes through dsig_malloc & co, which prefix each block with its
 * size so that the counters (current, peak, total) are exact. The benchmarks report "bytes the library
 * allocated" from these counters; dsig_track_openssl_allocations() routes OpenSSL's heap through them too.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "core/internal.h"
#include "core/layer_api.h"

static _Atomic uint64_t cur_bytes, peak_bytes, total_bytes, n_allocs;

#define HDR 16u /* keeps 16-byte alignment of the user pointer */

void dsig_mem_account_add(size_t n)
{
    uint64_t now = atomic_fetch_add(&cur_bytes, n) + n;
    atomic_fetch_add(&total_bytes, n);
    atomic_fetch_add(&n_allocs, 1);
    uint64_t p = atomic_load(&peak_bytes);
    while (now > p && !atomic_compare_exchange_weak(&peak_bytes, &p, now)) {
    }
}

void dsig_mem_account_sub(size_t n)
{
    atomic_fetch_sub(&cur_bytes, n);
}

DSIG_LAYER_API void *dsig_malloc(size_t n)
{
    if (n > SIZE_MAX - HDR)
        return NULL;
    unsigned char *p = malloc(n + HDR);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof n);
    dsig_mem_account_add(n);
    return p + HDR;
}

DSIG_LAYER_API void *dsig_calloc(size_t count, size_t n)
{
    if (n && count > SIZE_MAX / n)
        return NULL;
    void *p = dsig_malloc(count * n);
    if (p)
        memset(p, 0, count * n);
    return p;
}

static size_t block_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - HDR, sizeof n);
    return n;
}

DSIG_LAYER_API void *dsig_realloc(void *p, size_t n)
{
    if (!p)
        return dsig_malloc(n);
    size_t old = block_size(p);
    void *q = dsig_malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    dsig_xfree(p, old); /* wipe: the block may have held secrets */
    return q;
}

DSIG_LAYER_API char *dsig_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = dsig_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

DSIG_LAYER_API void dsig_xfree(void *p, size_t wipe_len)
{
    if (!p)
        return;
    size_t n = block_size(p);
    if (wipe_len)
        dsig_memzero(p, wipe_len < n ? wipe_len : n);
    dsig_mem_account_sub(n);
    free((unsigned char *)p - HDR);
}

void dsig_free(void *p)
{
    if (p)
        dsig_xfree(p, block_size(p));
}

/* glibc's explicit_bzero is a vectorised memset the compiler may not elide: as safe as
 * OPENSSL_cleanse and several times faster on the multi-KiB one-time keys DSig erases per signature. */
void dsig_memzero(void *p, size_t n)
{
    explicit_bzero(p, n);
}

int dsig_ct_equal(const void *a, const void *b, size_t n)
{
    return CRYPTO_memcmp(a, b, n) == 0;
}

void dsig_alloc_stats_get(dsig_alloc_stats *out)
{
    out->current = atomic_load(&cur_bytes);
    out->peak = atomic_load(&peak_bytes);
    out->total = atomic_load(&total_bytes);
    out->count = atomic_load(&n_allocs);
}

void dsig_alloc_stats_reset(void)
{
    atomic_store(&peak_bytes, atomic_load(&cur_bytes));
    atomic_store(&total_bytes, 0);
    atomic_store(&n_allocs, 0);
}

/* OpenSSL hooks: same header scheme, so OpenSSL's blocks are counted like ours. */
static void *ossl_malloc(size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    return dsig_malloc(n);
}

static void *ossl_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    if (!p)
        return dsig_malloc(n);
    size_t old = block_size(p);
    unsigned char *q = realloc((unsigned char *)p - HDR, n + HDR);
    if (!q)
        return NULL;
    memcpy(q, &n, sizeof n);
    dsig_mem_account_sub(old);
    dsig_mem_account_add(n);
    return q + HDR;
}

static void ossl_free(void *p, const char *file, int line)
{
    (void)file;
    (void)line;
    dsig_xfree(p, 0);
}

int dsig_track_openssl_allocations(void)
{
    if (!CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc, ossl_free))
        return dsig_fail(DSIG_E_STATE, "OpenSSL has already allocated memory; call "
                                       "dsig_track_openssl_allocations() first thing in main()");
    return DSIG_OK;
}
