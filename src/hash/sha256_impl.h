/*
 * src/hash/sha256_impl.h — private to src/hash/sha256*.c and the tests: the round constants, the
 * per-back-end compression functions (so tests can run each back-end whatever the dispatcher picks),
 * and the back-end tables that src/hash/sha256_dispatch.c walks.
 */
#ifndef DSIG_HASH_SHA256_IMPL_H
#define DSIG_HASH_SHA256_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "hash/sha256.h"

/* FIPS 180-4 §4.2.2 constants K0..K63 (16-byte aligned for vector loads). */
extern const uint32_t dsig_sha256_k[64] __attribute__((aligned(16)));

/* A compression back-end: state = compress(state, block) for n consecutive 64-byte blocks. */
typedef void (*dsig_sha256_compress_fn)(uint32_t state[8], const uint8_t *blocks, size_t n);

void dsig_sha256_compress_portable(uint32_t state[8], const uint8_t *blocks, size_t n);
/* SHA-NI (needs DSIG_CPU_SHANI and DSIG_CPU_SSE41; x86-64 only). */
void dsig_sha256_compress_shani(uint32_t state[8], const uint8_t *blocks, size_t n);

/* Full SHA-256 (FIPS 180-4 §5.1.1 padding) with a given compression back-end. */
void dsig_sha256_with(dsig_sha256_compress_fn compress, uint8_t out[32], const void *in, size_t len);

/* Whether SHA-NI may be used here (dsig_cpu_features(), so DSIG_CPU_DISABLE applies). */
int dsig_sha256_have_shani(void);

/*
 * One back-end, defined next to its kernels (sha256.c, sha256_shani.c, sha256_x8_avx2.c). It declines
 * when the CPU lacks a feature in `needs`; an operation it does not have is NULL (compress) or lanes 0
 * (the wide kernel), and the dispatcher takes that operation from the next back-end in its list.
 */
typedef struct dsig_sha256_backend {
    const char *name;
    unsigned needs; /* DSIG_CPU_* bits, all required */
    dsig_sha256_compress_fn compress;
    unsigned lanes; /* lanes of lanes_from / lanes_cont; 0 = none */
    dsig_sha256_lanes_from_fn lanes_from;
    dsig_sha256_lanes_fn lanes_cont;
} dsig_sha256_backend;

/* The dispatcher's list, in order of preference (portable last), for tests that prove every
 * back-end: *n entries. */
const dsig_sha256_backend *const *dsig_sha256_backends(size_t *n);

#endif
