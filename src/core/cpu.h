/*
 * src/core/cpu.h — CPU feature detection, decided once per process, and the one way a primitive picks
 * its back-end from it.
 *
 * Every primitive with vector code (SHA-256, SHA-512, Keccak, Haraka, BLAKE3, the ML-DSA kernels) has
 * one dispatch file (src/hash/<name>_dispatch.c, src/pq/mldsa/kernels.c) holding a list of back-end
 * tables in order of preference, each with the DSIG_CPU_* features it needs. The dispatch file walks
 * that list once per process with dsig_cpu_usable(): a back-end whose features are missing declines,
 * and the next one is asked, down to the portable C table, which needs nothing. A table may also leave
 * an operation out (NULL): the walk takes that operation from the next usable table. Declining depends
 * on the CPU (and DSIG_CPU_DISABLE) only, never on the data being processed. The result is cached; the
 * primitive's *_simd_degree() tells callers how many independent inputs its wide kernel takes at once.
 *
 * DSIG_CPU_DISABLE (environment, comma-separated: "avx2,avx512,sse41,aesni,shani,vaes,pclmul,all"),
 * read once here, switches features off. It is the only switch tests use to force back-ends, so every
 * back-end is proven against the same vectors on one machine (tests/CMakeLists.txt files run the same
 * binaries with different values). Disabling avx2 or sse41 also disables avx512 (AVX-512 kernels fall
 * back to AVX2 code for small remainders, and AVX2 code to SSE4.1 for single inputs).
 */
#ifndef DSIG_CORE_CPU_H
#define DSIG_CORE_CPU_H

#include <pthread.h>

#define DSIG_CPU_SSE41 0x01u
#define DSIG_CPU_AVX2 0x02u
#define DSIG_CPU_AESNI 0x04u
#define DSIG_CPU_SHANI 0x08u
#define DSIG_CPU_VAES 0x10u
#define DSIG_CPU_PCLMUL 0x20u
/* AVX512F + AVX512VL, with the OS saving opmask and ZMM state (XCR0 bits 1, 2, 5, 6, 7), AVX2 and SSE4.1. */
#define DSIG_CPU_AVX512 0x40u

/* Features usable on this CPU and OS (XSAVE-enabled for AVX), minus DSIG_CPU_DISABLE. */
unsigned dsig_cpu_features(void);
/* Human-readable list, e.g. "sse41 avx2 aesni shani vaes". */
const char *dsig_cpu_describe(void);

/* Whether a back-end needing all of the DSIG_CPU_* bits in `needs` may run here (0 = needs nothing,
 * always usable: the portable fallback). */
static inline int dsig_cpu_usable(unsigned needs)
{
    return (dsig_cpu_features() & needs) == needs;
}

/*
 * The dispatch result in *slot; on first use resolve() runs once (pthread_once) and stores it there
 * with release order. The fast path is one acquire load, so hot functions may call this every time.
 */
static inline const void *dsig_cpu_once(const void **slot, pthread_once_t *once, void (*resolve)(void))
{
    const void *v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (__builtin_expect(v == NULL, 0)) {
        pthread_once(once, resolve);
        v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    }
    return v;
}

#endif
