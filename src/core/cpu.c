/* CPU feature detection with CPUID + XGETBV, once; see cpu.h. */
#include "core/cpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned features;
static char description[80];

#if defined(__x86_64__) || defined(__i386__)
/* XCR0 bits 1 and 2: the OS saves SSE and AVX state, so AVX registers may be used. */
static int os_saves_ymm(void)
{
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (eax & 6u) == 6u;
}

/* XCR0 bits 1, 2 (SSE, AVX) and 5, 6, 7 (opmask, upper halves of ZMM0-15, ZMM16-31): the OS saves the
 * AVX-512 state, so zmm and k registers may be used. Only called when OSXSAVE is set. */
static int os_saves_zmm(void)
{
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (eax & 0xE6u) == 0xE6u;
}
#endif

static void detect(void)
{
    unsigned f = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        if (c & (1u << 19))
            f |= DSIG_CPU_SSE41;
        if (c & (1u << 25))
            f |= DSIG_CPU_AESNI;
        if (c & (1u << 1))
            f |= DSIG_CPU_PCLMUL;
        int avx_ok = (c & (1u << 27)) && (c & (1u << 28)) && os_saves_ymm(); /* OSXSAVE, AVX */
        if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
            if (avx_ok && (b & (1u << 5)))
                f |= DSIG_CPU_AVX2;
            if (b & (1u << 29))
                f |= DSIG_CPU_SHANI;
            if (avx_ok && (c & (1u << 9)))
                f |= DSIG_CPU_VAES;
            /* EBX bit 16 AVX512F, bit 31 AVX512VL; kernels also use AVX2 code, so require it too. */
            if (avx_ok && (f & DSIG_CPU_AVX2) && (b & (1u << 16)) && (b & (1u << 31)) && os_saves_zmm())
                f |= DSIG_CPU_AVX512;
        }
    }
#endif
    const char *off = getenv("DSIG_CPU_DISABLE");
    if (off) {
        static const struct {
            const char *name;
            unsigned bit;
        } names[] = {{"sse41", DSIG_CPU_SSE41}, {"avx2", DSIG_CPU_AVX2},   {"aesni", DSIG_CPU_AESNI},
                     {"shani", DSIG_CPU_SHANI}, {"vaes", DSIG_CPU_VAES},   {"pclmul", DSIG_CPU_PCLMUL},
                     {"avx512", DSIG_CPU_AVX512}, {"all", ~0u}};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strstr(off, names[i].name))
                f &= ~names[i].bit;
        /* AVX-512 kernels hand remainders to AVX2 code (which uses SSE4.1 for single inputs): no avx2 or
         * no sse41 means no avx512, so the flag always names a usable back-end. */
        if (!(f & DSIG_CPU_AVX2) || !(f & DSIG_CPU_SSE41))
            f &= ~DSIG_CPU_AVX512;
    }
    features = f;
    static const char *const labels[] = {"sse41", "avx2", "aesni", "shani", "vaes", "pclmul", "avx512"};
    description[0] = '\0';
    for (unsigned i = 0; i < sizeof labels / sizeof labels[0]; i++) {
        if (!(f & (1u << i)))
            continue;
        if (description[0])
            strcat(description, " ");
        strcat(description, labels[i]);
    }
    if (!description[0])
        strcpy(description, "portable");
}

unsigned dsig_cpu_features(void)
{
    pthread_once(&once, detect);
    return features;
}

const char *dsig_cpu_describe(void)
{
    pthread_once(&once, detect);
    return description;
}
