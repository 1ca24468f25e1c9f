/*
 * src/hash/sha512_dispatch.c — the one place that chooses the SHA-512 wide kernel (src/core/cpu.h):
 * AVX2 x4, else portable one block at a time; walked once per process. The one-message compression
 * (dsig_sha512_compress) has only the portable back-end. Adding a kernel: its file with its
 * dsig_sha512_backend table, and one line in `backends` here.
 */
#include <string.h>

#include "core/cpu.h"
#include "hash/sha512.h"

static const dsig_sha512_backend *const backends[] = {
#if defined(__x86_64__)
    &dsig_sha512_backend_avx2,
#endif
    &dsig_sha512_backend_portable,
};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

const dsig_sha512_backend *const *dsig_sha512_backends(size_t *n)
{
    *n = N_BACKENDS;
    return backends;
}

static const void *slot;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The walk: the first usable back-end (portable needs nothing). */
static void resolve(void)
{
    size_t i = 0;
    while (!dsig_cpu_usable(backends[i]->needs))
        i++;
    __atomic_store_n(&slot, (const void *)backends[i], __ATOMIC_RELEASE);
}

const dsig_sha512_backend *dsig_sha512_lanes_get(void)
{
    return dsig_cpu_once(&slot, &once, resolve);
}

unsigned dsig_sha512_simd_degree(void)
{
    return dsig_sha512_lanes_get()->lanes;
}

int dsig_sha512_have_x4(void)
{
#if defined(__x86_64__)
    return dsig_cpu_usable(dsig_sha512_backend_avx2.needs);
#else
    return 0;
#endif
}

/* The fixed four-lane forms, on the chosen kernel (lanes divides 4). */
void dsig_sha512_compress_x4_from(uint64_t out[4][8], const uint64_t init[8],
                                  const uint8_t *const blocks[4])
{
    const dsig_sha512_backend *b = dsig_sha512_lanes_get();
    for (unsigned l = 0; l < 4; l += b->lanes)
        b->lanes_from(out + l, init, blocks + l);
}

void dsig_sha512_compress_x4(uint64_t state[4][8], const uint8_t *const blocks[4])
{
    const dsig_sha512_backend *b = dsig_sha512_lanes_get();
    for (unsigned l = 0; l < 4; l += b->lanes)
        b->lanes_cont(state + l, blocks + l);
}
