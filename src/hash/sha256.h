/*
 * src/hash/sha256.h — SHA-256 compression (FIPS 180-4) for hot paths: SHA-NI when the CPU has it, a
 * portable fallback otherwise (chosen once, src/core/cpu.h). Not for bulk hashing of payloads (OpenSSL's
 * EVP is as fast there); for the many short hashes of hash-based signatures, where EVP's ~190 ns per
 * call is 4x the ~46 ns compression.
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

/* "shani" or "portable". */
const char *dsig_sha256_impl(void);

#endif
