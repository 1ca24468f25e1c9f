/*
 * src/hash/sha256.h — SHA-256 compression (FIPS 180-4) for hot paths: SHA-NI when the CPU has it, a
 * portable fallback otherwise, and a wide kernel for independent one-block hashes (2 interleaved SHA-NI
 * compressions, else 8 AVX2 lanes). Chosen once per process by src/hash/sha256_dispatch.c (see
 * src/core/cpu.h). Not for bulk hashing of payloads (OpenSSL's EVP is as fast there); for the many
 * short hashes of hash-based signatures, where EVP's ~190 ns per call is 4x the ~46 ns compression.
 */
#ifndef DSIG_HASH_SHA256_H
#define DSIG_HASH_SHA256_H

#include <stddef.h>
#include <stdint.h>

extern const uint32_t dsig_sha256_iv[8];

/* state = compress(state, block) for each of the n 64-byte blocks. */
void dsig_sha256_compress(uint32_t state[8], const uint8_t *blocks, size_t n);
/* Full SHA-256 of any message (padding included). */
void dsig_sha256(uint8_t out[32], const void *in, size_t len);
/* The 32-byte big-endian encoding of a state. */
void dsig_sha256_store(uint8_t out[32], const uint32_t state[8]);

/* "shani" or "portable": the back-end of dsig_sha256_compress. */
const char *dsig_sha256_impl(void);

/* ---- The operations chosen for this process ------------------------------------------------- */

/* The most lanes any wide kernel has: callers size their per-lane arrays with it. */
#define DSIG_SHA256_MAX_LANES 8

/* out[l] = compress(init, blocks[l]) for l < lanes (one shared initial state, e.g. a precomputed
 * prefix), and st[l] = compress(st[l], blocks[l]): one 64-byte block per lane. */
typedef void (*dsig_sha256_lanes_from_fn)(uint32_t out[][8], const uint32_t init[8],
                                          const uint8_t *const blocks[]);
typedef void (*dsig_sha256_lanes_fn)(uint32_t st[][8], const uint8_t *const blocks[]);

typedef struct dsig_sha256_ops {
    /* state = compress(state, block) for n consecutive blocks (dsig_sha256_compress). */
    void (*compress)(uint32_t state[8], const uint8_t *blocks, size_t n);
    /* The wide kernel: lanes independent blocks per call (1 = no wide kernel, one at a time). */
    unsigned lanes;
    dsig_sha256_lanes_from_fn lanes_from;
    dsig_sha256_lanes_fn lanes_cont;
    const char *compress_name; /* back-end of compress: "shani", "portable" */
    const char *lanes_name;    /* back-end of the wide kernel: "shani", "avx2", "portable" */
} dsig_sha256_ops;

/* The operations in use (never NULL; chosen once, thread-safe). */
const dsig_sha256_ops *dsig_sha256_ops_get(void);
/* How many independent one-block compressions the wide kernel does per call: 2 (SHA-NI), 8 (AVX2
 * without SHA-NI) or 1. Callers batch lanes_from / lanes_cont calls in groups of this size. */
unsigned dsig_sha256_simd_degree(void);

/* ---- Eight independent compressions (sha256_x8_avx2.c): one 64-byte block per lane ---------- */

/* Whether the 8-lane AVX2 kernel may run here (dsig_cpu_features(): DSIG_CPU_DISABLE=avx2 says no). */
int dsig_sha256_have_x8(void);
/* state[l] = compress(state[l], blocks[l]) for l < 8: AVX2 when usable, else one at a time. */
void dsig_sha256_compress_x8(uint32_t state[8][8], const uint8_t *const blocks[8]);
/* out[l] = compress(init, blocks[l]) for l < 8 (one shared initial state, e.g. a precomputed prefix). */
void dsig_sha256_compress_x8_from(uint32_t out[8][8], const uint32_t init[8],
                                  const uint8_t *const blocks[8]);
#if defined(__x86_64__)
/* The AVX2 kernels themselves (only after dsig_sha256_have_x8(); tests call them directly). */
void dsig_sha256_compress_x8_avx2(uint32_t state[8][8], const uint8_t *const blocks[8]);
void dsig_sha256_compress_x8_avx2_from(uint32_t out[8][8], const uint32_t init[8],
                                       const uint8_t *const blocks[8]);
/* Two SHA-NI compressions from one state, interleaved, and two from their own states (only after
 * dsig_sha256_have_shani()). */
void dsig_sha256_compress_x2_shani_from(uint32_t out[2][8], const uint32_t init[8],
                                        const uint8_t *const blocks[2]);
void dsig_sha256_compress_x2_shani(uint32_t state[2][8], const uint8_t *const blocks[2]);
#endif

#endif
