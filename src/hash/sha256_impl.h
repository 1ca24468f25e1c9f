/*
 * src/hash/sha256_impl.h — private to src/hash/sha256*.c and the tests: the round constants and the
 * per-back-end compression functions, so tests can run each back-end whatever the dispatcher picks.
 */
#ifndef DSIG_HASH_SHA256_IMPL_H
#define DSIG_HASH_SHA256_IMPL_H

#include <stddef.h>
#include <stdint.h>

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

#endif
