/*
 * src/hash/sha256_dispatch.c — the one place that chooses SHA-256 back-ends (src/core/cpu.h): the list
 * below, in order of preference, walked once per process. Each operation comes from the first back-end
 * that is usable here and has it:
 *   compress (one message, n blocks):      SHA-NI, else portable;
 *   wide kernel (independent blocks):      SHA-NI x2 interleaved, else AVX2 x8, else portable x1.
 * SHA-NI x2 (~18 ns per block) beats the 8 AVX2 lanes (~38 ns per block and lane) on the development
 * CPU, so AVX2 runs only without SHA-NI.
 *
 * Adding a kernel: write it with its dsig_sha256_backend table (needs, the operations it has, NULL or
 * lanes 0 for the rest) in its own file, then declare the table below and add it to `backends` at its
 * rank. The dispatched functions, the lane query, the callers (SLH-DSA, LMS, XMSS) and the tests that
 * walk dsig_sha256_backends() pick it up with no other change (a wide kernel of more than
 * DSIG_SHA256_MAX_LANES lanes also raises that constant in sha256.h).
 */
#include <string.h>

#include "core/cpu.h"
#include "hash/sha256.h"
#include "hash/sha256_impl.h"

/* The back-end tables, each defined next to its kernels. */
extern const dsig_sha256_backend dsig_sha256_backend_portable;
#if defined(__x86_64__) || defined(__i386__)
extern const dsig_sha256_backend dsig_sha256_backend_shani;
#endif
#if defined(__x86_64__)
extern const dsig_sha256_backend dsig_sha256_backend_avx2;
#endif

static const dsig_sha256_backend *const backends[] = {
#if defined(__x86_64__) || defined(__i386__)
    &dsig_sha256_backend_shani,
#endif
#if defined(__x86_64__)
    &dsig_sha256_backend_avx2,
#endif
    &dsig_sha256_backend_portable,
};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

const dsig_sha256_backend *const *dsig_sha256_backends(size_t *n)
{
    *n = N_BACKENDS;
    return backends;
}

static dsig_sha256_ops resolved;
static const void *slot;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The walk: each operation from the first usable back-end that has it (portable has all). */
static void resolve(void)
{
    dsig_sha256_ops o = {0};
    for (size_t i = 0; i < N_BACKENDS; i++) {
        const dsig_sha256_backend *b = backends[i];
        if (!dsig_cpu_usable(b->needs))
            continue;
        if (!o.compress && b->compress) {
            o.compress = b->compress;
            o.compress_name = b->name;
        }
        if (!o.lanes && b->lanes) {
            o.lanes = b->lanes;
            o.lanes_from = b->lanes_from;
            o.lanes_cont = b->lanes_cont;
            o.lanes_name = b->name;
        }
    }
    resolved = o;
    __atomic_store_n(&slot, (const void *)&resolved, __ATOMIC_RELEASE);
}

const dsig_sha256_ops *dsig_sha256_ops_get(void)
{
    return dsig_cpu_once(&slot, &once, resolve);
}

unsigned dsig_sha256_simd_degree(void)
{
    return dsig_sha256_ops_get()->lanes;
}

/* state = compress(state, block) for each of n blocks, with the chosen back-end. */
void dsig_sha256_compress(uint32_t state[8], const uint8_t *blocks, size_t n)
{
    dsig_sha256_ops_get()->compress(state, blocks, n);
}

/* Full SHA-256 of any message, with the chosen back-end. */
void dsig_sha256(uint8_t out[32], const void *in, size_t len)
{
    dsig_sha256_with(dsig_sha256_ops_get()->compress, out, in, len);
}

const char *dsig_sha256_impl(void)
{
    return dsig_sha256_ops_get()->compress_name;
}

/* Per back-end availability, for callers and tests that name one kernel (same rule as the walk). */
int dsig_sha256_have_shani(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return dsig_cpu_usable(dsig_sha256_backend_shani.needs);
#else
    return 0;
#endif
}

int dsig_sha256_have_x8(void)
{
#if defined(__x86_64__)
    return dsig_cpu_usable(dsig_sha256_backend_avx2.needs);
#else
    return 0;
#endif
}

/* The fixed eight-lane forms: the AVX2 kernel when usable, else eight dispatched compressions. */
void dsig_sha256_compress_x8_from(uint32_t out[8][8], const uint32_t init[8],
                                  const uint8_t *const blocks[8])
{
#if defined(__x86_64__)
    if (dsig_sha256_have_x8()) {
        dsig_sha256_compress_x8_avx2_from(out, init, blocks);
        return;
    }
#endif
    for (int l = 0; l < 8; l++) {
        memcpy(out[l], init, 8 * sizeof(uint32_t));
        dsig_sha256_compress(out[l], blocks[l], 1);
    }
}

void dsig_sha256_compress_x8(uint32_t state[8][8], const uint8_t *const blocks[8])
{
#if defined(__x86_64__)
    if (dsig_sha256_have_x8()) {
        dsig_sha256_compress_x8_avx2(state, blocks);
        return;
    }
#endif
    for (int l = 0; l < 8; l++)
        dsig_sha256_compress(state[l], blocks[l], 1);
}
