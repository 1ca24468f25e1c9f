/*
 * src/hash/sha512.h — SHA-512 compression (FIPS 180-4) for the short, fixed-layout hashes of
 * SLH-DSA-SHA2 at security categories 3 and 5 (H and T_l over a precomputed PK.seed block, FIPS 205
 * §11.2.2). Portable 64-bit C, constant time (no data-dependent branches or table indexes). Bulk
 * payload hashing stays with OpenSSL's EVP. Not installed.
 */
#ifndef DSIG_HASH_SHA512_H
#define DSIG_HASH_SHA512_H

#include <stddef.h>
#include <stdint.h>

extern const uint64_t dsig_sha512_iv[8];
/* FIPS 180-4 §4.2.3 K0..K79, shared by the portable and the AVX2 compressions. */
extern const uint64_t dsig_sha512_k[80];

/* state = compress(state, block) for each of the n 128-byte blocks. */
void dsig_sha512_compress(uint64_t state[8], const uint8_t *blocks, size_t n);
/* Full SHA-512 of any message (padding included). */
void dsig_sha512(uint8_t out[64], const void *in, size_t len);
/* The 64-byte big-endian encoding of a state. */
void dsig_sha512_store(uint8_t out[64], const uint64_t state[8]);

/* ---- Independent compressions: one 128-byte block per lane ------------------------------------ */

/* out[l] = compress(init, blocks[l]) / st[l] = compress(st[l], blocks[l]) for l < lanes. */
typedef void (*dsig_sha512_lanes_from_fn)(uint64_t out[][8], const uint64_t init[8],
                                          const uint8_t *const blocks[]);
typedef void (*dsig_sha512_lanes_fn)(uint64_t st[][8], const uint8_t *const blocks[]);

/* One back-end of the wide kernel, defined next to its code (sha512.c, sha512_x4_avx2.c) and listed
 * in order of preference in sha512_dispatch.c; it declines when the CPU lacks a feature in `needs`. */
typedef struct dsig_sha512_backend {
    const char *name;
    unsigned needs; /* DSIG_CPU_* bits, all required */
    unsigned lanes;
    dsig_sha512_lanes_from_fn lanes_from;
    dsig_sha512_lanes_fn lanes_cont;
} dsig_sha512_backend;

extern const dsig_sha512_backend dsig_sha512_backend_portable;
#if defined(__x86_64__)
extern const dsig_sha512_backend dsig_sha512_backend_avx2;
#endif
/* The dispatcher's list, in order of preference (portable last): *n entries. */
const dsig_sha512_backend *const *dsig_sha512_backends(size_t *n);
/* The wide kernel chosen for this process (never NULL; chosen once, thread-safe). */
const dsig_sha512_backend *dsig_sha512_lanes_get(void);
/* Its lanes: 4 (AVX2) or 1 (portable, one at a time). */
unsigned dsig_sha512_simd_degree(void);

/* Whether the 4-lane AVX2 kernel may run here (dsig_cpu_features(): DSIG_CPU_DISABLE=avx2 says no). */
int dsig_sha512_have_x4(void);
/* state[l] = compress(state[l], blocks[l]) for l < 4: AVX2 when usable, else one at a time. */
void dsig_sha512_compress_x4(uint64_t state[4][8], const uint8_t *const blocks[4]);
/* out[l] = compress(init, blocks[l]) for l < 4 (one shared initial state, e.g. a precomputed prefix). */
void dsig_sha512_compress_x4_from(uint64_t out[4][8], const uint64_t init[8],
                                  const uint8_t *const blocks[4]);
#if defined(__x86_64__)
/* The AVX2 kernels themselves (only after dsig_sha512_have_x4(); tests call them directly). */
void dsig_sha512_compress_x4_avx2(uint64_t state[4][8], const uint8_t *const blocks[4]);
void dsig_sha512_compress_x4_avx2_from(uint64_t out[4][8], const uint64_t init[8],
                                       const uint8_t *const blocks[4]);
#endif

#endif
