/*
 * src/hash/keccak.h — Keccak-f[1600], SHA-3 and SHAKE written here (FIPS 202), for the post-quantum
 * schemes that make many small SHAKE calls (ML-DSA, SLH-DSA-SHAKE, Falcon, XMSS-SHAKE): OpenSSL 3.0's
 * EVP costs ~190 ns per call on top of the permutation. Not installed.
 *
 * States are caller-allocated and hold no pointers; copying a state forks the hash (used to absorb a
 * common prefix once). Wipe states that absorbed secrets with dsig_keccak_wipe().
 *
 * The x4 permutation is chosen once per process by keccak_dispatch.c (src/core/cpu.h): AVX-512VL, else
 * AVX2, when the CPU has it and DSIG_CPU_DISABLE does not name it, portable 64-bit C otherwise. Every
 * back-end is constant time (no data-dependent branches or table lookups).
 */
#ifndef DSIG_HASH_KECCAK_H
#define DSIG_HASH_KECCAK_H

#include <stddef.h>
#include <stdint.h>

#define DSIG_SHAKE128_RATE 168
#define DSIG_SHAKE256_RATE 136
#define DSIG_SHA3_256_RATE 136
#define DSIG_SHA3_384_RATE 104
#define DSIG_SHA3_512_RATE 72

/* Domain-separation + first padding bit (FIPS 202 §6): SHA-3 0x06, SHAKE 0x1F. */
#define DSIG_KECCAK_DS_SHA3 0x06
#define DSIG_KECCAK_DS_SHAKE 0x1F

/* A sponge: absorb any number of times, finalize once, squeeze any number of times. */
typedef struct dsig_keccak {
    uint64_t s[25];   /* lanes, little-endian byte order within a lane (FIPS 202 §3.1.2) */
    unsigned rate;    /* bytes */
    unsigned pos;     /* absorb: bytes absorbed into the current block; squeeze: bytes used */
    unsigned squeezing;
} dsig_keccak;

/* @spec FIPS 202 §3.3 Keccak-p[1600, 24] on a state of 25 lanes (x + 5y indexing). */
void dsig_keccak_f1600(uint64_t s[25]);

/* Generic sponge with a rate in bytes (< 200, multiple of 8). */
void dsig_keccak_init(dsig_keccak *k, unsigned rate);
void dsig_keccak_absorb(dsig_keccak *k, const uint8_t *in, size_t n);
/* Pad with the domain byte (DSIG_KECCAK_DS_*) and switch to squeezing. */
void dsig_keccak_finalize(dsig_keccak *k, uint8_t ds);
void dsig_keccak_squeeze(dsig_keccak *k, uint8_t *out, size_t n);
/* Squeeze whole blocks of `rate` bytes straight from the state (only right after finalize or after
 * earlier whole-block squeezes). */
void dsig_keccak_squeezeblocks(dsig_keccak *k, uint8_t *out, size_t nblocks);
void dsig_keccak_wipe(dsig_keccak *k);
/* The next 8 output bytes as a little-endian word: exactly dsig_keccak_squeeze of 8 bytes followed by
 * a little-endian load, read straight from the state when the output position is lane-aligned (only
 * after finalize). */
uint64_t dsig_keccak_squeeze_u64(dsig_keccak *k);

static inline void dsig_shake128_init(dsig_keccak *k) { dsig_keccak_init(k, DSIG_SHAKE128_RATE); }
static inline void dsig_shake256_init(dsig_keccak *k) { dsig_keccak_init(k, DSIG_SHAKE256_RATE); }
static inline void dsig_shake_finalize(dsig_keccak *k) { dsig_keccak_finalize(k, DSIG_KECCAK_DS_SHAKE); }

/* One-shot forms. */
void dsig_shake128(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen);
void dsig_shake256(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen);
void dsig_sha3_256(uint8_t out[32], const uint8_t *in, size_t inlen);
void dsig_sha3_384(uint8_t out[48], const uint8_t *in, size_t inlen);
void dsig_sha3_512(uint8_t out[64], const uint8_t *in, size_t inlen);

/*
 * Four independent sponges of the same rate, stepped together (4-way AVX-512VL or AVX2 when available, else four
 * scalar permutations). Lane i of instance j is s[4*i + j] (interleaved: one 256-bit vector per lane).
 * The inputs of one absorb call have the same length; used for matrix and vector expansion.
 */
typedef struct dsig_keccak_x4 {
    uint64_t s[100] __attribute__((aligned(32)));
    unsigned rate;
} dsig_keccak_x4;

/* @spec FIPS 202 §3.3, four states at once (layout above). */
void dsig_keccak_f1600_x4(uint64_t s[100]);
/* Init, absorb in[0..3] (each inlen bytes) in one go, pad with ds: ready to squeeze. */
void dsig_keccak_x4_absorb_once(dsig_keccak_x4 *k, unsigned rate, uint8_t ds,
                                const uint8_t *const in[4], size_t inlen);
/* Squeeze nblocks whole blocks of `rate` bytes into each out[j]. */
void dsig_keccak_x4_squeezeblocks(dsig_keccak_x4 *k, uint8_t *const out[4], size_t nblocks);
void dsig_keccak_x4_wipe(dsig_keccak_x4 *k);

/*
 * Eight independent sponges, stepped together on 512-bit vectors when the x4 back-end brings an x8
 * kernel (AVX-512), else eight portable permutations one after another: use them only when
 * dsig_keccak_x8_simd_degree() is 8, the x4 interface otherwise. Lane i of instance j is s[8*i + j].
 * Same contract as the x4 functions.
 */
typedef struct dsig_keccak_x8 {
    uint64_t s[200] __attribute__((aligned(64)));
    unsigned rate;
} dsig_keccak_x8;

/* @spec FIPS 202 §3.3, eight states at once (layout above). */
void dsig_keccak_f1600_x8(uint64_t s[200]);
void dsig_keccak_x8_absorb_once(dsig_keccak_x8 *k, unsigned rate, uint8_t ds,
                                const uint8_t *const in[8], size_t inlen);
void dsig_keccak_x8_squeezeblocks(dsig_keccak_x8 *k, uint8_t *const out[8], size_t nblocks);
void dsig_keccak_x8_wipe(dsig_keccak_x8 *k);
/* 8 when the eight states are permuted side by side (AVX-512), 1 otherwise. */
unsigned dsig_keccak_x8_simd_degree(void);

/* Name of the permutation back-ends in use ("avx512", "avx2", "portable"), for benchmarks and tests. */
const char *dsig_keccak_backend(void);
/* How many of the four x4 states are permuted side by side: 4 (AVX-512VL, AVX2) or 1 (one after another). A
 * caller with independent inputs batches them four at a time when this is 4. */
unsigned dsig_keccak_simd_degree(void);

#endif
