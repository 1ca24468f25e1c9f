/*
 * src/hash/haraka.h — Haraka v2 (Kölbl, Lauridsen, Mendel, Rechberger 2016): Haraka-256 (32 → 32 bytes)
 * and Haraka-512 (64 → 32 bytes), 5 rounds, AES-NI, with multi-lane forms that hash 4 (or 8 with VAES)
 * independent inputs at once for key generation and lock-step chain verification. A portable,
 * constant-time (table-free) AES-round fallback keeps the results identical without AES-NI.
 */
#ifndef DSIG_HASH_HARAKA_H
#define DSIG_HASH_HARAKA_H

#include <stdint.h>

void dsig_haraka256(uint8_t out[32], const uint8_t in[32]);
void dsig_haraka512(uint8_t out[32], const uint8_t in[64]);
/* Four independent inputs: in = 4 consecutive blocks, out = 4 consecutive 32-byte outputs. */
void dsig_haraka256_x4(uint8_t out[4 * 32], const uint8_t in[4 * 32]);
void dsig_haraka512_x4(uint8_t out[4 * 32], const uint8_t in[4 * 64]);
/* Eight independent inputs (VAES when available, else two x4 calls). */
void dsig_haraka512_x8(uint8_t out[8 * 32], const uint8_t in[8 * 64]);

/* "aesni+vaes512", "aesni+vaes", "aesni" or "portable". */
const char *dsig_haraka_impl(void);

#endif
