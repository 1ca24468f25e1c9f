/*
 * src/core/secmem.c — page-backed memory for long-lived secrets (DSig one-time keys, master seeds,
 * root keys): kept out of core dumps (MADV_DONTDUMP), zero in any child process that gets a copy of
 * the address space (MADV_WIPEONFORK: fork, _Fork, clone without CLONE_VM), and locked in RAM (mlock)
 * while RLIMIT_MEMLOCK allows. Each protection is best effort — an older kernel or a spent memlock
 * limit degrades to fewer protections, never to a failure — and reported in the region's flags, so
 * that callers can fall back (the DSig signer checks the pid when wipe-on-fork is missing).
 *
 * Freed regions are wiped and a few are kept for reuse (SECMEM_KEEP, SECMEM_KEEP_BYTES), so that the
 * steady state of a signer (one batch allocated, one released, per batch) makes no system call.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/internal.h"

/* The sanitizers' runtimes replace mlock with a stub that locks nothing and returns 0: under them a
 * region is never reported locked, so the report stays the kernel's view. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MLOCK_INTERCEPTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define MLOCK_INTERCEPTED 1
#endif
#endif
#ifndef MLOCK_INTERCEPTED
#define MLOCK_INTERCEPTED 0
#endif

#define SECMEM_KEEP 8u
#define SECMEM_KEEP_BYTES (4u << 20)

static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
static dsig_secmem keep[SECMEM_KEEP];
static unsigned nkeep;
static size_t keep_bytes;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* fork() while another thread holds keep_lock must not leave the child's copy locked. */
static void lock_keep(void)
{
    pthread_mutex_lock(&keep_lock);
}

static void unlock_keep(void)
{
    pthread_mutex_unlock(&keep_lock);
}

static void register_atfork(void)
{
    (void)pthread_atfork(lock_keep, unlock_keep, unlock_keep);
}

/* Round up to whole pages. */
static size_t page_round(size_t len)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t p = pg > 0 ? (size_t)pg : 4096u;
    return (len + p - 1) / p * p;
}

int dsig_secmem_alloc(dsig_secmem *m, size_t len)
{
    memset(m, 0, sizeof *m);
    if (len == 0 || len > ((size_t)1 << 40))
        return dsig_fail(DSIG_E_ARG, "secret memory: %zu bytes", len);
    pthread_once(&atfork_once, register_atfork);
    size_t want = page_round(len);
    pthread_mutex_lock(&keep_lock);
    for (unsigned i = 0; i < nkeep; i++) {
        if (keep[i].len == want) {
            *m = keep[i];
            keep[i] = keep[--nkeep];
            keep_bytes -= want;
            pthread_mutex_unlock(&keep_lock);
            return DSIG_OK;
        }
    }
    pthread_mutex_unlock(&keep_lock);
    void *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return dsig_fail(DSIG_E_NOMEM, "secret memory: cannot map %zu bytes", want);
    m->p = p;
    m->len = want;
    dsig_mem_account_add(want);
#ifdef MADV_DONTDUMP
    if (madvise(p, want, MADV_DONTDUMP) == 0)
        m->flags |= DSIG_SECMEM_NODUMP;
#endif
#ifdef MADV_WIPEONFORK
    if (madvise(p, want, MADV_WIPEONFORK) == 0)
        m->flags |= DSIG_SECMEM_WIPEONFORK;
#endif
    if (mlock(p, want) == 0 && !MLOCK_INTERCEPTED)
        m->flags |= DSIG_SECMEM_LOCKED;
    return DSIG_OK;
}

/* Keep or unmap a region the caller has wiped. */
static void secmem_release(dsig_secmem *m)
{
    pthread_mutex_lock(&keep_lock);
    if (nkeep < SECMEM_KEEP && keep_bytes + m->len <= SECMEM_KEEP_BYTES) {
        keep[nkeep++] = *m;
        keep_bytes += m->len;
        pthread_mutex_unlock(&keep_lock);
    } else {
        pthread_mutex_unlock(&keep_lock);
        munmap(m->p, m->len);
        dsig_mem_account_sub(m->len);
    }
    memset(m, 0, sizeof *m);
}

void dsig_secmem_free(dsig_secmem *m)
{
    if (!m || !m->p)
        return;
    dsig_memzero(m->p, m->len);
    secmem_release(m);
}

void dsig_secmem_free_wiped(dsig_secmem *m)
{
    if (!m || !m->p)
        return;
#ifndef NDEBUG
    /* Debug builds check the caller's promise (a kept region is handed out again as zero-filled):
     * a byte left is a bug in the caller's erasure, not something to paper over. */
    for (size_t i = 0; i < m->len; i++)
        if (((const volatile uint8_t *)m->p)[i]) {
            fprintf(stderr, "dsig: secret memory released unwiped (byte %zu of %zu)\n", i, m->len);
            abort();
        }
#endif
    secmem_release(m);
}
