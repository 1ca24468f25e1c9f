/*
 * Differential target: the ML-DSA polynomial arithmetic of src/pq/mldsa/ntt.h, portable (*_c) against
 * AVX2 (*_avx2) and, where the CPU has it, AVX-512 (*_avx512), on coefficients anywhere within the input bounds of each function, the extremes
 * ±(bound − 1) included. The input is
 *
 *   byte 0   function (modulo 4): 0 ntt, 1 invntt_tomont, 2 pointwise_montgomery, 3 pointwise_acc (len 1..8)
 *   byte 1   bit 0: extremes mode — each coefficient byte pair picks −(bound−1), 0, +(bound−1) or a value;
 *            bits 1-3: len − 1 of pointwise_acc
 *   rest     coefficients, 4 bytes each (little-endian, reduced into the function's input range);
 *            polynomials are filled in order, missing bytes as zeros
 *
 * Invariants (abort on violation, per ntt.h): the back-ends agree mod q, and each output is within its
 * bound (ntt |x| < 9q; the others |x| < q). Skipped (returns at once) on a CPU without AVX2; the
 * AVX-512 comparison is skipped on a CPU without AVX-512 (or with DSIG_CPU_DISABLE=avx512).
 */
#include <string.h>

#include "core/cpu.h"
#include "fuzz_common.h"
#include "pq/mldsa/kernels.h"
#include "pq/mldsa/ntt.h"

#define Q 8380417

/* A coefficient with |x| < bound from 4 input bytes. */
static int32_t coeff(fuzz_in *in, int64_t bound, int extremes)
{
    uint32_t u = fuzz_u16(in);
    u |= (uint32_t)fuzz_u16(in) << 16;
    if (extremes && (u & 3) != 3)
        return (int32_t)((u & 3) == 0 ? -(bound - 1) : (u & 3) == 1 ? 0 : bound - 1);
    return (int32_t)((int64_t)(u % (uint64_t)(2 * bound - 1)) - (bound - 1));
}

static void fill(fuzz_in *in, int32_t *a, size_t n, int64_t bound, int extremes)
{
    for (size_t i = 0; i < n; i++)
        a[i] = coeff(in, bound, extremes);
}

static int64_t modq(int64_t x)
{
    x %= Q;
    return x < 0 ? x + Q : x;
}

/* c (portable) against v (back-end `be`). */
static void check(const int32_t *c, const int32_t *v, int64_t bound, const char *what, const char *be)
{
    for (unsigned i = 0; i < 256; i++) {
        FUZZ_CHECK(modq(c[i]) == modq(v[i]), "%s: coefficient %u: portable %d, %s %d (mod q)", what, i, c[i], be,
                   v[i]);
        FUZZ_CHECK(c[i] > -bound && c[i] < bound && v[i] > -bound && v[i] < bound,
                   "%s: coefficient %u out of bound %lld: portable %d, %s %d", what, i, (long long)bound, c[i], be,
                   v[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef DSIG_MLDSA_HAVE_AVX2
    if (size < 2 || size > 16 * 1024 + 2 || !(dsig_cpu_features() & DSIG_CPU_AVX2))
        return 0;
    fuzz_in in = {data + 2, size - 2};
    const unsigned op = data[0] % 4, len = 1 + ((data[1] >> 1) & 7);
    const int ext = data[1] & 1;
    /* The inputs (a, b), kept intact; each function gets copies (a2, b2), so that none sees another's
     * writes; c is the portable result, v a back-end's. */
    static int32_t a[8 * 256] __attribute__((aligned(32)));
    static int32_t b[8 * 256] __attribute__((aligned(32)));
    static int32_t c[256] __attribute__((aligned(32)));
    static int32_t v[256] __attribute__((aligned(32)));
    static int32_t a2[8 * 256] __attribute__((aligned(32)));
    static int32_t b2[8 * 256] __attribute__((aligned(32)));
    /* The portable result first (c), then each back-end on fresh copies (v, a2, b2). */
    switch (op) {
    case 0:
    case 1: /* the transforms, in place */
        fill(&in, a, 256, Q, ext);
        memcpy(c, a, sizeof c);
        (op ? dsig_mldsa_invntt_tomont_c : dsig_mldsa_ntt_c)(c);
        break;
    case 2:
        /* |a·b| < 2^31·q: one factor below q, the other below 9q (as the callers use it). */
        fill(&in, a, 256, Q, ext);
        fill(&in, b, 256, 9LL * Q, ext);
        memcpy(a2, a, 256 * sizeof *a);
        memcpy(b2, b, 256 * sizeof *b);
        dsig_mldsa_pointwise_montgomery_c(c, a2, b2);
        break;
    default:
        fill(&in, a, 256 * (size_t)len, Q, ext);
        fill(&in, b, 256 * (size_t)len, 9LL * Q, ext);
        memcpy(a2, a, 256 * (size_t)len * sizeof *a);
        memcpy(b2, b, 256 * (size_t)len * sizeof *b);
        dsig_mldsa_pointwise_acc_montgomery_c(c, a2, b2, len);
        break;
    }
    /* Every vector table of src/pq/mldsa/kernels.c the CPU can run (the portable one is c). */
    for (unsigned k = 0; k < dsig_mldsa_backend_count; k++) {
        const dsig_mldsa_kernels *be = dsig_mldsa_backends[k].table;
        if (be == &dsig_mldsa_kernels_portable || !dsig_cpu_usable(dsig_mldsa_backends[k].needs))
            continue;
        switch (op) {
        case 0:
        case 1:
            memcpy(v, a, sizeof v);
            (op ? be->invntt_tomont : be->ntt)(v);
            check(c, v, op ? Q : 9LL * Q, op ? "invntt_tomont" : "ntt", be->name);
            break;
        case 2:
            memcpy(a2, a, 256 * sizeof *a);
            memcpy(b2, b, 256 * sizeof *b);
            be->pointwise_montgomery(v, a2, b2);
            check(c, v, Q, "pointwise_montgomery", be->name);
            break;
        default:
            memcpy(a2, a, 256 * (size_t)len * sizeof *a);
            memcpy(b2, b, 256 * (size_t)len * sizeof *b);
            be->pointwise_acc_montgomery(v, a2, b2, len);
            check(c, v, Q, "pointwise_acc_montgomery", be->name);
            break;
        }
    }
#else
    (void)data;
    (void)size;
#endif
    return 0;
}

/* Seeds: each function in both modes, with a little and with a full polynomial of coefficients. */
static void seeds(void)
{
    static uint8_t body[2 * 8 * 256 * 4];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (uint8_t)(i * 131 + 17);
    for (uint8_t op = 0; op < 4; op++)
        for (uint8_t mode = 0; mode < 16; mode += 5) {
            const uint8_t head[2] = {op, mode};
            fuzz_seed2(head, 2, body, mode ? sizeof body : 1024);
        }
}

FUZZ_SEED_GENERATOR(seeds)
