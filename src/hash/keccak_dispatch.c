/*
 * src/hash/keccak_dispatch.c — the one place that chooses the Keccak-f[1600] x4 back-end
 * (src/core/cpu.h): AVX-512VL, else AVX2, else portable; walked once per process. Adding a kernel: its file with its
 * dsig_keccak_x4_backend table, and one line in `backends` here.
 */
#include "core/cpu.h"
#include "hash/keccak.h"
#include "hash/keccak_impl.h"

static const dsig_keccak_x4_backend *const backends[] = {
#ifdef DSIG_KECCAK_X86
    &dsig_keccak_x4_avx512_backend,
    &dsig_keccak_x4_avx2_backend,
#endif
    &dsig_keccak_x4_portable_backend,
};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

const dsig_keccak_x4_backend *const *dsig_keccak_backends(size_t *n)
{
    *n = N_BACKENDS;
    return backends;
}

const void *dsig_keccak_x4_slot; /* read inline by dsig_keccak_x4_get() (keccak_impl.h) */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The walk: the first usable back-end (portable needs nothing). */
static void resolve(void)
{
    size_t i = 0;
    while (!dsig_cpu_usable(backends[i]->needs))
        i++;
    __atomic_store_n(&dsig_keccak_x4_slot, (const void *)backends[i], __ATOMIC_RELEASE);
}

const dsig_keccak_x4_backend *dsig_keccak_x4_resolve(void)
{
    return dsig_cpu_once(&dsig_keccak_x4_slot, &once, resolve);
}

/* @spec FIPS 202 §3.3 on four interleaved states (dispatched back-end). */
void dsig_keccak_f1600_x4(uint64_t s[100])
{
    dsig_keccak_x4_get()->f1600_x4(s);
}

/* @spec FIPS 202 §3.3 on eight interleaved states (the back-end's x8 kernel, else portable). */
void dsig_keccak_f1600_x8(uint64_t s[200])
{
    void (*x8)(uint64_t s[200]) = dsig_keccak_x4_get()->f1600_x8;
    if (x8)
        x8(s);
    else
        dsig_keccak_f1600_x8_portable(s);
}

unsigned dsig_keccak_x8_simd_degree(void)
{
    return dsig_keccak_x4_get()->f1600_x8 ? 8 : 1;
}

unsigned dsig_keccak_simd_degree(void)
{
    return dsig_keccak_x4_get()->lanes;
}

const char *dsig_keccak_backend(void)
{
    return dsig_keccak_x4_get()->name;
}
