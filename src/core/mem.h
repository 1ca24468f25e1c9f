/*
 * src/core/mem.h — the library's allocator (mem.c) and page-backed memory for long-lived secrets
 * (secmem.c). Not installed.
 */
#ifndef DSIG_CORE_MEM_H
#define DSIG_CORE_MEM_H

#include <stddef.h>

/* Counted allocation; every library allocation goes through these (NULL on OOM). dsig_xfree wipes
 * `wipe_len` bytes first when it is > 0 (pass the size for secrets), then frees; NULL is a no-op. */
void *dsig_malloc(size_t n);
void *dsig_calloc(size_t count, size_t n);
void *dsig_realloc(void *p, size_t n);
char *dsig_strdup(const char *s);
void dsig_xfree(void *p, size_t wipe_len);

/* The counters behind dsig_malloc, for memory the library maps itself (secmem.c). */
void dsig_mem_account_add(size_t n);
void dsig_mem_account_sub(size_t n);

/* Page-backed memory for long-lived secrets. Each protection is best effort; `flags` says which ones
 * the region got. */
#define DSIG_SECMEM_NODUMP 1u     /* MADV_DONTDUMP: left out of core dumps */
#define DSIG_SECMEM_WIPEONFORK 2u /* MADV_WIPEONFORK: reads as zeros in a child made by fork, _Fork or
                                     clone without CLONE_VM */
#define DSIG_SECMEM_LOCKED 4u     /* mlock: never written to swap */
typedef struct dsig_secmem {
    void *p;                      /* page aligned, zero-filled */
    size_t len;                   /* mapped length (whole pages) */
    unsigned flags;               /* DSIG_SECMEM_* */
} dsig_secmem;

/*
 * At least `len` bytes of secret memory into *m (zeroed).
 * @retval DSIG_OK     *m holds the region
 * @retval DSIG_E_NOMEM no memory could be mapped
 * @retval DSIG_E_ARG  NULL m or len 0
 */
int dsig_secmem_alloc(dsig_secmem *m, size_t len);

/* Wipe and release a region (kept for reuse or unmapped); *m is zeroed. NULL or empty: no-op. */
void dsig_secmem_free(dsig_secmem *m);

/* Release a region whose every byte the caller has already wiped (the DSig key slab: each one-time
 * key erases its own bytes when used or dropped), without wiping it a second time. Otherwise as
 * dsig_secmem_free. */
void dsig_secmem_free_wiped(dsig_secmem *m);

#endif
