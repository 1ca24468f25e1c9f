/*
 * src/hash/haraka_impl.h — private to src/hash/haraka*.c and the tests: the round constants and the
 * per-back-end entry points (portable, AES-NI, VAES), so tests can prove each back-end against the same
 * known answers regardless of what the dispatcher in haraka.c picks on this CPU.
 */
#ifndef DSIG_HASH_HARAKA_IMPL_H
#define DSIG_HASH_HARAKA_IMPL_H

#include <stdint.h>

/* Haraka v2 uses 5 rounds of 2 AES rounds; Haraka-512 needs 4 constants per AES round (40 in all),
 * Haraka-256 uses the first 20. */
#define DSIG_HARAKA_ROUNDS 5
#define DSIG_HARAKA_RC_COUNT 40

/* RC[k] as the 16 bytes of an AES round key (byte j holds bits 8j..8j+7 of the paper's RC_k). */
extern const uint8_t dsig_haraka_rc[DSIG_HARAKA_RC_COUNT][16] __attribute__((aligned(16)));

/* Portable, constant-time (table-free AES round): any CPU. */
void dsig_haraka256_portable(uint8_t out[32], const uint8_t in[32]);
void dsig_haraka512_portable(uint8_t out[32], const uint8_t in[64]);
void dsig_haraka256_x4_portable(uint8_t out[4 * 32], const uint8_t in[4 * 32]);
void dsig_haraka512_x4_portable(uint8_t out[4 * 32], const uint8_t in[4 * 64]);
void dsig_haraka512_x8_portable(uint8_t out[8 * 32], const uint8_t in[8 * 64]);

/* AES-NI (needs DSIG_CPU_AESNI and DSIG_CPU_SSE41; x86-64 only). */
void dsig_haraka256_aesni(uint8_t out[32], const uint8_t in[32]);
void dsig_haraka512_aesni(uint8_t out[32], const uint8_t in[64]);
void dsig_haraka256_x4_aesni(uint8_t out[4 * 32], const uint8_t in[4 * 32]);
void dsig_haraka512_x4_aesni(uint8_t out[4 * 32], const uint8_t in[4 * 64]);
void dsig_haraka512_x8_aesni(uint8_t out[8 * 32], const uint8_t in[8 * 64]);

/* VAES (needs DSIG_CPU_VAES, DSIG_CPU_AVX2 and DSIG_CPU_AESNI): two lanes per 256-bit register. */
void dsig_haraka512_x4_vaes(uint8_t out[4 * 32], const uint8_t in[4 * 64]);
void dsig_haraka512_x8_vaes(uint8_t out[8 * 32], const uint8_t in[8 * 64]);

/* VAES on 512-bit registers (needs DSIG_CPU_VAES, DSIG_CPU_AVX512, DSIG_CPU_AVX2, DSIG_CPU_AESNI):
 * four lanes per register. */
void dsig_haraka512_x4_vaes512(uint8_t out[4 * 32], const uint8_t in[4 * 64]);
void dsig_haraka512_x8_vaes512(uint8_t out[8 * 32], const uint8_t in[8 * 64]);

/*
 * One back-end, defined next to its code (haraka_portable.c, haraka_aesni.c, haraka_vaes.c) and listed
 * in order of preference in haraka_dispatch.c. It declines when the CPU lacks a feature in `needs`; a
 * NULL entry is an operation it does not have, taken from the next usable back-end. The single-input
 * group (h256, h512, h256_x4) and the multi-lane Haraka-512 group (h512_x4, h512_x8) are each taken
 * whole from one back-end.
 */
typedef struct dsig_haraka_backend {
    const char *name;
    unsigned needs; /* DSIG_CPU_* bits, all required */
    void (*h256)(uint8_t out[32], const uint8_t in[32]);
    void (*h512)(uint8_t out[32], const uint8_t in[64]);
    void (*h256_x4)(uint8_t out[4 * 32], const uint8_t in[4 * 32]);
    void (*h512_x4)(uint8_t out[4 * 32], const uint8_t in[4 * 64]);
    void (*h512_x8)(uint8_t out[8 * 32], const uint8_t in[8 * 64]);
} dsig_haraka_backend;

extern const dsig_haraka_backend dsig_haraka_backend_portable;
#if defined(__x86_64__) || defined(__i386__)
extern const dsig_haraka_backend dsig_haraka_backend_aesni;
extern const dsig_haraka_backend dsig_haraka_backend_vaes;
extern const dsig_haraka_backend dsig_haraka_backend_vaes512;
#endif

/* Which back-ends this build and CPU can run (for tests): bit 0 portable (always), bit 1 aesni,
 * bit 2 vaes, bit 3 vaes512 — from dsig_cpu_features(), so DSIG_CPU_DISABLE applies. */
#define DSIG_HARAKA_HAVE_PORTABLE 1u
#define DSIG_HARAKA_HAVE_AESNI 2u
#define DSIG_HARAKA_HAVE_VAES 4u
#define DSIG_HARAKA_HAVE_VAES512 8u
unsigned dsig_haraka_backends(void);

#endif
