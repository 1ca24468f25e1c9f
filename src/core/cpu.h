/*
 * src/core/cpu.h — CPU feature detection, decided once per process. Hot paths pick their back-end
 * (portable, SSE4.1, AVX2, AVX-512, AES-NI, SHA-NI, VAES) from these flags at first use.
 *
 * DSIG_CPU_DISABLE (environment, comma-separated: "avx2,avx512,sse41,aesni,shani,vaes,pclmul,all")
 * switches features off, so tests can prove every back-end against the same vectors on one machine.
 * Disabling avx2 or sse41 also disables avx512 (AVX-512 kernels fall back to AVX2 code for small
 * remainders, and AVX2 code to SSE4.1 for single inputs).
 */
#ifndef DSIG_CORE_CPU_H
#define DSIG_CORE_CPU_H

#define DSIG_CPU_SSE41 0x01u
#define DSIG_CPU_AVX2 0x02u
#define DSIG_CPU_AESNI 0x04u
#define DSIG_CPU_SHANI 0x08u
#define DSIG_CPU_VAES 0x10u
#define DSIG_CPU_PCLMUL 0x20u
/* AVX512F + AVX512VL, with the OS saving opmask and ZMM state (XCR0 bits 1, 2, 5, 6, 7), AVX2 and SSE4.1. */
#define DSIG_CPU_AVX512 0x40u

/* Features usable on this CPU and OS (XSAVE-enabled for AVX), minus DSIG_CPU_DISABLE. */
unsigned dsig_cpu_features(void);
/* Human-readable list, e.g. "sse41 avx2 aesni shani vaes". */
const char *dsig_cpu_describe(void);

#endif
