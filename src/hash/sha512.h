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

/* state = compress(state, block) for each of the n 128-byte blocks. */
void dsig_sha512_compress(uint64_t state[8], const uint8_t *blocks, size_t n);
/* Full SHA-512 of any message (padding included). */
void dsig_sha512(uint8_t out[64], const void *in, size_t len);
/* The 64-byte big-endian encoding of a state. */
void dsig_sha512_store(uint8_t out[64], const uint64_t state[8]);

#endif
