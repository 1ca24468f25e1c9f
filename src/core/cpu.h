/*
 * src/core/cpu.h — CPU feature detection, decided once per process. Hot paths pick their back-end
 * (portable, SSE4.1, AVX2, AES-NI, SHA-NI, VAES) from these flags at first use.
 *
 * DSIG_CPU_DISABLE (environment, comma-separated: "avx2,sse41,aesni,shani,vaes,all") switches features
 * off, so tests can prove every back-end against the same vectors on one machine.
 */
#ifndef DSIG_CORE_CPU_H
#define DSIG_CORE_CPU_H

#define DSIG_CPU_SSE41 0x01u
#define DSIG_CPU_AVX2 0x02u
#define DSIG_CPU_AESNI 0x04u
#define DSIG_CPU_SHANI 0x08u
#define DSIG_CPU_VAES 0x10u
#define DSIG_CPU_PCLMUL 0x20u

/* Features usable on this CPU and OS (XSAVE-enabled for AVX), minus DSIG_CPU_DISABLE. */
unsigned dsig_cpu_features(void);
/* Human-readable list, e.g. "sse41 avx2 aesni shani vaes". */
const char *dsig_cpu_describe(void);

#endif
