/*
 * src/hash/haraka_dispatch.c — the one place that chooses Haraka v2 back-ends (src/core/cpu.h): the
 * list below, in order of preference, walked once per process. The single-input group (Haraka-256,
 * Haraka-512, Haraka-256 x4) comes from the first usable back-end that has it (AES-NI, else portable);
 * the multi-lane Haraka-512 group (x4, x8) likewise (VAES on zmm, else VAES on ymm, else AES-NI, else portable). Adding a
 * kernel: its file with its dsig_haraka_backend table, and one line in `backends` here.
 */
#include <stdio.h>

#include "core/cpu.h"
#include "hash/haraka.h"
#include "hash/haraka_impl.h"

static const dsig_haraka_backend *const backends[] = {
#if defined(__x86_64__) || defined(__i386__)
    &dsig_haraka_backend_vaes512,
    &dsig_haraka_backend_vaes,
    &dsig_haraka_backend_aesni,
#endif
    &dsig_haraka_backend_portable,
};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

/* The operations in use, each group from one back-end, and the name of the combination. */
struct haraka_ops {
    dsig_haraka_backend fn;
    char name[32];
};

static struct haraka_ops resolved;
static const void *slot;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    const dsig_haraka_backend *single = NULL, *multi = NULL;
    for (size_t i = 0; i < N_BACKENDS; i++) {
        const dsig_haraka_backend *b = backends[i];
        if (!dsig_cpu_usable(b->needs))
            continue;
        if (!single && b->h256)
            single = b;
        if (!multi && b->h512_x4)
            multi = b;
    }
    struct haraka_ops o = {.fn = {.h256 = single->h256,
                                  .h512 = single->h512,
                                  .h256_x4 = single->h256_x4,
                                  .h512_x4 = multi->h512_x4,
                                  .h512_x8 = multi->h512_x8}};
    /* "portable", "aesni", or "aesni+vaes" / "aesni+vaes512" when the groups come from two back-ends. */
    if (single == multi)
        snprintf(o.name, sizeof o.name, "%s", single->name);
    else
        snprintf(o.name, sizeof o.name, "%s+%s", single->name, multi->name);
    resolved = o;
    resolved.fn.name = resolved.name;
    __atomic_store_n(&slot, (const void *)&resolved, __ATOMIC_RELEASE);
}

static inline const dsig_haraka_backend *ops(void)
{
    return &((const struct haraka_ops *)dsig_cpu_once(&slot, &once, resolve))->fn;
}

/* Back-ends usable here, from the (possibly DSIG_CPU_DISABLE-reduced) CPU features. */
unsigned dsig_haraka_backends(void)
{
    unsigned have = DSIG_HARAKA_HAVE_PORTABLE;
#if defined(__x86_64__) || defined(__i386__)
    if (dsig_cpu_usable(dsig_haraka_backend_aesni.needs))
        have |= DSIG_HARAKA_HAVE_AESNI;
    if (dsig_cpu_usable(dsig_haraka_backend_vaes.needs))
        have |= DSIG_HARAKA_HAVE_VAES;
    if (dsig_cpu_usable(dsig_haraka_backend_vaes512.needs))
        have |= DSIG_HARAKA_HAVE_VAES512;
#endif
    return have;
}

/* @spec Haraka v2 (ePrint 2016/098), Haraka-256 v2: 32-byte input, 32-byte output. */
void dsig_haraka256(uint8_t out[32], const uint8_t in[32])
{
    ops()->h256(out, in);
}

/* @spec Haraka v2 (ePrint 2016/098), Haraka-512 v2 with its 256-bit truncation. */
void dsig_haraka512(uint8_t out[32], const uint8_t in[64])
{
    ops()->h512(out, in);
}

/* Four independent Haraka-256 hashes. */
void dsig_haraka256_x4(uint8_t out[4 * 32], const uint8_t in[4 * 32])
{
    ops()->h256_x4(out, in);
}

/* Four independent Haraka-512 hashes. */
void dsig_haraka512_x4(uint8_t out[4 * 32], const uint8_t in[4 * 64])
{
    ops()->h512_x4(out, in);
}

/* Eight independent Haraka-512 hashes. */
void dsig_haraka512_x8(uint8_t out[8 * 32], const uint8_t in[8 * 64])
{
    ops()->h512_x8(out, in);
}

/* Name of the back-end in use. */
const char *dsig_haraka_impl(void)
{
    return ops()->name;
}
