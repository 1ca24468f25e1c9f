/*
 * bench/preload/noavx512.c — LD_PRELOAD shim for bench/compare_liboqs.sh --no-avx512: the process sees
 * a CPU without AVX-512.
 *
 * DSIG_CPU_DISABLE=avx512 switches off dsig's AVX-512 code only; liboqs reads CPUID itself and keeps
 * its AVX-512VL Keccak, so that comparison sets AVX2 code against AVX-512 code. To compare both tools
 * as they run on a CPU without AVX-512, this shim turns on CPUID faulting for the process (Linux
 * arch_prctl ARCH_SET_CPUID, on CPUs and hypervisors that offer it: /proc/cpuinfo flag cpuid_fault).
 * Every CPUID instruction then traps; the SIGSEGV handler runs the real CPUID with faulting briefly off
 * and returns its answer with the AVX-512 feature bits of leaf 7 cleared. The setting is per thread and
 * inherited by threads and child processes (execve clears it, LD_PRELOAD loads the shim again).
 *
 * glibc and libcrypto read CPUID before this constructor runs; the script hides AVX-512 from them with
 * GLIBC_TUNABLES and OPENSSL_ia32cap. Where CPUID faulting is unavailable the shim says so and the
 * process exits with status 2 before main, so no figure is ever printed under a mask that did not
 * apply. Built by the script into a temporary directory (not part of libdsig or the dsig tool).
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef ARCH_SET_CPUID
#define ARCH_SET_CPUID 0x1012
#endif

/* Leaf 7 sub-leaf 0: EBX AVX512F 16, DQ 17, IFMA 21, PF 26, ER 27, CD 28, BW 30, VL 31; ECX VBMI 1,
 * VBMI2 6, VNNI 11, BITALG 12, VPOPCNTDQ 14; EDX 4VNNIW 2, 4FMAPS 3, VP2INTERSECT 8, FP16 23.
 * Sub-leaf 1: EAX BF16 5. */
#define MASK_7_0_EBX 0xDC230000u
#define MASK_7_0_ECX 0x00005842u
#define MASK_7_0_EDX 0x0080010Cu
#define MASK_7_1_EAX 0x00000020u

static long cpuid_allowed(int allowed)
{
    return syscall(SYS_arch_prctl, ARCH_SET_CPUID, allowed);
}

static void on_segv(int sig, siginfo_t *info, void *context)
{
    ucontext_t *uc = context;
    greg_t *reg = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)reg[REG_RIP];
    /* A faulting CPUID is a general-protection fault (SI_KERNEL) at a CPUID instruction; anything else
     * is a real crash: restore the default action, and let the instruction fault again (a fault) or
     * send the signal again (one sent by a process, which returning would swallow). */
    if (sig != SIGSEGV || info->si_code != SI_KERNEL || ip[0] != 0x0F || ip[1] != 0xA2) {
        signal(SIGSEGV, SIG_DFL);
        if (info->si_code <= 0)
            raise(SIGSEGV);
        return;
    }
    unsigned leaf = (unsigned)reg[REG_RAX], sub = (unsigned)reg[REG_RCX], a, b, c, d;
    cpuid_allowed(1);
    __cpuid_count(leaf, sub, a, b, c, d);
    cpuid_allowed(0);
    if (leaf == 7 && sub == 0) {
        b &= ~MASK_7_0_EBX;
        c &= ~MASK_7_0_ECX;
        d &= ~MASK_7_0_EDX;
    } else if (leaf == 7 && sub == 1) {
        a &= ~MASK_7_1_EAX;
    }
    reg[REG_RAX] = a;
    reg[REG_RBX] = b;
    reg[REG_RCX] = c;
    reg[REG_RDX] = d;
    reg[REG_RIP] += 2;
}

__attribute__((constructor)) static void hide_avx512(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0 || cpuid_allowed(0) != 0) {
        fprintf(stderr, "noavx512: cannot hide AVX-512: CPUID faulting is unavailable (arch_prctl ARCH_SET_CPUID: %s)\n",
                strerror(errno));
        _exit(2);
    }
}
