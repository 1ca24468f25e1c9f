/*
 * src/pq/mldsa/kernels.h — the ML-DSA kernels that have a vector back-end, as one table per back-end,
 * and the one place that picks the table for the process.
 *
 * The rest of src/pq/mldsa calls the unsuffixed functions (ntt.h, poly.h, rounding.h, packing.h,
 * sample.c); they forward to dsig_mldsa_kernels(), chosen once per process from src/core/cpu.h: the
 * AVX-512 table (AVX-512 NTT family, AVX2 for the rest) when the CPU has AVX-512 and DSIG_CPU_DISABLE
 * names neither avx512 nor avx2, else the AVX2 table when the CPU has AVX2 and DSIG_CPU_DISABLE does
 * not name it, else the portable one. The
 * choice never depends on the data. Every entry of every table meets the contract of the unsuffixed
 * function it stands for, and except for the NTT family (whose contract allows congruent results, see
 * ntt.h) gives bit-identical results, so back-ends can be mixed and tested against each other.
 *
 * A back-end may decline part of a job: its rejection samplers and bit packers hand the inputs or
 * widths they do not handle (a buffer tail, an unusual width) to the portable code.
 */
#ifndef DSIG_PQ_MLDSA_KERNELS_H
#define DSIG_PQ_MLDSA_KERNELS_H

#include <stdint.h>

#include "pq/mldsa/ntt.h" /* DSIG_MLDSA_HAVE_AVX2 and the NTT back-ends */
#include "pq/mldsa/poly.h"
#include "pq/mldsa/rounding.h"

typedef struct dsig_mldsa_kernels {
    const char *name; /* "avx512", "avx2", "portable" */
    /* ntt.h */
    void (*ntt)(int32_t a[256]);
    void (*invntt_tomont)(int32_t a[256]);
    void (*pointwise_montgomery)(int32_t c[256], const int32_t a[256], const int32_t b[256]);
    void (*pointwise_acc_montgomery)(int32_t c[256], const int32_t *a, const int32_t *b, unsigned len);
    /* poly.h */
    void (*poly_add)(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b);
    void (*poly_sub)(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b);
    void (*poly_reduce)(mldsa_poly *a);
    void (*poly_caddq)(mldsa_poly *a);
    void (*poly_freeze)(mldsa_poly *a);
    void (*poly_shiftl)(mldsa_poly *a);
    uint32_t (*poly_norm_exceeds)(const mldsa_poly *a, int32_t bound);
    /* rounding.h */
    void (*poly_power2round)(mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a);
    void (*poly_decompose)(const mldsa_decomp *d, mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a);
    unsigned (*poly_make_hint)(mldsa_poly *h, const mldsa_poly *a0, const mldsa_poly *a1, int32_t gamma2);
    void (*poly_use_hint)(const mldsa_decomp *d, mldsa_poly *a, const mldsa_poly *h);
    /* packing.h: a_i ↔ `bits`-bit fields holding b + sign·a_i (sign ±1), the core of Algorithms 16–19 */
    void (*pack)(uint8_t *out, const mldsa_poly *a, int32_t b, int32_t sign, unsigned bits);
    void (*unpack)(mldsa_poly *a, const uint8_t *in, int32_t b, int32_t sign, unsigned bits);
    /*
     * sample.c: rejection sampling of one buffer, appending to a[0..len) and returning the count
     * n ≤ len appended; a[n..len) may receive scratch, a[len] and beyond are never written.
     * rej_uniform (FIPS 204 Algorithm 30 inner loop, Algorithm 14): 3-byte groups in order, a trailing
     * partial group ignored, z = b0 + 256·b1 + 65536·(b2 mod 128) kept iff z < q. Its timing depends
     * on the accept pattern: for the public matrix Â only.
     * rej_eta (Algorithm 31 inner loop, Algorithm 15): the nibbles of buf, low one first, b kept iff
     * b < 15 (η = 2, value 2 − b mod 5) or b < 9 (η = 4, value 4 − b). The values are secret and never
     * steer a branch or an index; the accept pattern, which FIPS 204 §3.6.3 lets leak, is declassified.
     */
    unsigned (*rej_uniform)(int32_t *a, unsigned len, const uint8_t *buf, unsigned buflen);
    unsigned (*rej_eta)(int32_t *a, unsigned len, const uint8_t *buf, unsigned buflen, unsigned eta);
} dsig_mldsa_kernels;

/* The table for this process (never NULL). */
const dsig_mldsa_kernels *dsig_mldsa_kernels_get(void);

/* Every table of this build in order of preference, each with the CPU features it needs (DSIG_CPU_*,
 * all required); the last one is the portable table (needs 0). dsig_mldsa_kernels_get() takes the
 * first usable one; tests walk the list to check every back-end the CPU can run. */
typedef struct dsig_mldsa_backend {
    unsigned needs;
    const dsig_mldsa_kernels *table;
} dsig_mldsa_backend;
extern const dsig_mldsa_backend dsig_mldsa_backends[];
extern const unsigned dsig_mldsa_backend_count;

/* The functions of one back-end, suffix SFX (the NTT family is declared in ntt.h). */
#define DSIG_MLDSA_KERNEL_DECLS(SFX)                                                                  \
    void dsig_mldsa_poly_add_##SFX(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b);          \
    void dsig_mldsa_poly_sub_##SFX(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b);          \
    void dsig_mldsa_poly_reduce_##SFX(mldsa_poly *a);                                                 \
    void dsig_mldsa_poly_caddq_##SFX(mldsa_poly *a);                                                  \
    void dsig_mldsa_poly_freeze_##SFX(mldsa_poly *a);                                                 \
    void dsig_mldsa_poly_shiftl_##SFX(mldsa_poly *a);                                                 \
    uint32_t dsig_mldsa_poly_norm_exceeds_##SFX(const mldsa_poly *a, int32_t bound);                  \
    void dsig_mldsa_poly_power2round_##SFX(mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a);      \
    void dsig_mldsa_poly_decompose_##SFX(const mldsa_decomp *d, mldsa_poly *a1, mldsa_poly *a0,       \
                                         const mldsa_poly *a);                                        \
    unsigned dsig_mldsa_poly_make_hint_##SFX(mldsa_poly *h, const mldsa_poly *a0, const mldsa_poly *a1, \
                                             int32_t gamma2);                                         \
    void dsig_mldsa_poly_use_hint_##SFX(const mldsa_decomp *d, mldsa_poly *a, const mldsa_poly *h);   \
    void dsig_mldsa_pack_##SFX(uint8_t *out, const mldsa_poly *a, int32_t b, int32_t sign, unsigned bits); \
    void dsig_mldsa_unpack_##SFX(mldsa_poly *a, const uint8_t *in, int32_t b, int32_t sign, unsigned bits); \
    unsigned dsig_mldsa_rej_uniform_##SFX(int32_t *a, unsigned len, const uint8_t *buf, unsigned buflen); \
    unsigned dsig_mldsa_rej_eta_##SFX(int32_t *a, unsigned len, const uint8_t *buf, unsigned buflen,   \
                                      unsigned eta);

/* The portable table (any CPU) and its functions (poly.c, rounding.c, packing.c, sample.c). */
extern const dsig_mldsa_kernels dsig_mldsa_kernels_portable;
DSIG_MLDSA_KERNEL_DECLS(c)

#ifdef DSIG_MLDSA_HAVE_AVX2
/* The AVX2 table and its functions (poly_avx2.c, pack_avx2.c, rej_avx2.c, ntt_avx2.c): call only when
 * dsig_cpu_features() reports DSIG_CPU_AVX2. */
extern const dsig_mldsa_kernels dsig_mldsa_kernels_avx2;
DSIG_MLDSA_KERNEL_DECLS(avx2)
#endif

#ifdef DSIG_MLDSA_HAVE_AVX512
/* The AVX-512 table: the NTT family of ntt_avx512.c, every other entry from the AVX2 table; call only
 * when dsig_cpu_features() reports DSIG_CPU_AVX512 (which implies DSIG_CPU_AVX2). */
extern const dsig_mldsa_kernels dsig_mldsa_kernels_avx512;
#endif

#endif
