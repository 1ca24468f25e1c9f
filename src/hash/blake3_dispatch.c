/*
 * src/hash/blake3_dispatch.c — the one place that chooses BLAKE3 back-ends (src/core/cpu.h), in the
 * manner of the reference implementation's c/blake3_dispatch.c: the list below, in order of
 * preference (avx512 > avx2 > sse41 > portable), walked once per process. The one-block compression
 * pair and the batch group (hash_many, hash_lanes, xof_many with their degree) each come whole from the
 * first usable back-end that has them: AVX2 leaves single blocks to SSE4.1. Adding a kernel: its file
 * with its dsig_b3_backend table, and one line in `backends` here.
 */
#include <string.h>

#include "core/cpu.h"
#include "hash/blake3_impl.h"

static const dsig_b3_backend *const backends[] = {
#ifdef DSIG_B3_X86
    &dsig_b3_backend_avx512,
    &dsig_b3_backend_avx2,
    &dsig_b3_backend_sse41,
#endif
    &dsig_b3_backend_portable,
};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

/* The walk from list entry `first` on (the named back-end must itself be usable): each group from the
 * first usable back-end that has it. The name is that of the batch group's back-end. */
static int walk_from(size_t first, dsig_b3_backend *out)
{
    if (!dsig_cpu_usable(backends[first]->needs))
        return -1;
    dsig_b3_backend o = {0};
    for (size_t i = first; i < N_BACKENDS; i++) {
        const dsig_b3_backend *b = backends[i];
        if (!dsig_cpu_usable(b->needs))
            continue;
        if (!o.compress_cv && b->compress_cv) {
            o.compress_cv = b->compress_cv;
            o.compress_xof = b->compress_xof;
        }
        if (!o.hash_many && b->hash_many) {
            o.hash_many = b->hash_many;
            o.hash_lanes = b->hash_lanes;
            o.xof_many = b->xof_many;
            o.degree = b->degree;
            o.name = b->name;
            o.needs = b->needs;
        }
    }
    *out = o;
    return 0;
}

static dsig_b3_backend resolved, pinned;
const void *dsig_b3_slot; /* read inline by dsig_b3_backend_get() (blake3_impl.h) */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    size_t i = 0;
    while (walk_from(i, &resolved) != 0) /* the portable entry needs nothing: the loop ends */
        i++;
    __atomic_store_n(&dsig_b3_slot, (const void *)&resolved, __ATOMIC_RELEASE);
}

const dsig_b3_backend *dsig_b3_backend_resolve(void)
{
    return dsig_cpu_once(&dsig_b3_slot, &once, resolve);
}

size_t dsig_blake3_simd_degree(void)
{
    return dsig_b3_backend_get()->degree;
}

/* Tests: run the walk from the named back-end instead (see blake3_impl.h). Declines exactly as the
 * walk does, so DSIG_CPU_DISABLE still rules what can run. */
int dsig_blake3_force_impl(const char *name)
{
    dsig_b3_backend_get(); /* resolve first, so the once-only walk cannot overwrite the pin later */
    for (size_t i = 0; i < N_BACKENDS; i++) {
        if (strcmp(backends[i]->name, name) != 0)
            continue;
        if (strcmp(name, resolved.name) == 0) {
            __atomic_store_n(&dsig_b3_slot, (const void *)&resolved, __ATOMIC_RELEASE);
            return 0;
        }
        if (walk_from(i, &pinned) != 0)
            return -1;
        __atomic_store_n(&dsig_b3_slot, (const void *)&pinned, __ATOMIC_RELEASE);
        return 0;
    }
    return -1;
}

/* Name of the back-end in use. */
const char *dsig_blake3_impl(void)
{
    return dsig_b3_backend_get()->name;
}
