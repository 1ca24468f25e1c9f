/*
 * src/pq/mldsa/kernels.c — the ML-DSA dispatch file: the back-end tables of the kernels, the
 * once-per-process walk between them (src/core/cpu.h), and the unsuffixed functions of ntt.h, poly.h
 * and rounding.h, which forward to the chosen table (see kernels.h).
 */
#include "pq/mldsa/kernels.h"

#include "core/cpu.h"

/* The table of the back-end whose NTT family (ntt.h) carries suffix NSFX and whose other kernels carry
 * suffix SFX. */
#define KERNELS2(NAME, NSFX, SFX)                                                                     \
    {                                                                                                 \
        .name = NAME, .ntt = dsig_mldsa_ntt_##NSFX, .invntt_tomont = dsig_mldsa_invntt_tomont_##NSFX,   \
        .pointwise_montgomery = dsig_mldsa_pointwise_montgomery_##NSFX,                               \
        .pointwise_acc_montgomery = dsig_mldsa_pointwise_acc_montgomery_##NSFX,                       \
        .poly_add = dsig_mldsa_poly_add_##SFX, .poly_sub = dsig_mldsa_poly_sub_##SFX,                 \
        .poly_reduce = dsig_mldsa_poly_reduce_##SFX, .poly_caddq = dsig_mldsa_poly_caddq_##SFX,       \
        .poly_freeze = dsig_mldsa_poly_freeze_##SFX, .poly_shiftl = dsig_mldsa_poly_shiftl_##SFX,     \
        .poly_norm_exceeds = dsig_mldsa_poly_norm_exceeds_##SFX,                                      \
        .poly_power2round = dsig_mldsa_poly_power2round_##SFX,                                        \
        .poly_decompose = dsig_mldsa_poly_decompose_##SFX, .poly_make_hint = dsig_mldsa_poly_make_hint_##SFX, \
        .poly_use_hint = dsig_mldsa_poly_use_hint_##SFX, .pack = dsig_mldsa_pack_##SFX,               \
        .unpack = dsig_mldsa_unpack_##SFX, .rej_uniform = dsig_mldsa_rej_uniform_##SFX,               \
        .rej_eta = dsig_mldsa_rej_eta_##SFX,                                                          \
    }
#define KERNELS(NAME, SFX) KERNELS2(NAME, SFX, SFX)

const dsig_mldsa_kernels dsig_mldsa_kernels_portable = KERNELS("portable", c);
#ifdef DSIG_MLDSA_HAVE_AVX2
const dsig_mldsa_kernels dsig_mldsa_kernels_avx2 = KERNELS("avx2", avx2);
#endif
#ifdef DSIG_MLDSA_HAVE_AVX512
/* The AVX-512 back-end has the NTT family only (ntt_avx512.c: the whole polynomial in 16 zmm registers);
 * the element-wise, rounding, packing and sampling kernels are the AVX2 ones, memory- or shuffle-bound
 * at either width. */
const dsig_mldsa_kernels dsig_mldsa_kernels_avx512 = KERNELS2("avx512", avx512, avx2);
#endif

/* The walk, in order of preference: the first table whose CPU features are all present. Adding a
 * back-end: its functions, its table above (KERNELS) and one line here. */
const dsig_mldsa_backend dsig_mldsa_backends[] = {
#ifdef DSIG_MLDSA_HAVE_AVX512
    {DSIG_CPU_AVX512 | DSIG_CPU_AVX2, &dsig_mldsa_kernels_avx512},
#endif
#ifdef DSIG_MLDSA_HAVE_AVX2
    {DSIG_CPU_AVX2, &dsig_mldsa_kernels_avx2},
#endif
    {0, &dsig_mldsa_kernels_portable},
};
const unsigned dsig_mldsa_backend_count = sizeof dsig_mldsa_backends / sizeof dsig_mldsa_backends[0];

static const void *slot;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    size_t i = 0;
    while (!dsig_cpu_usable(dsig_mldsa_backends[i].needs))
        i++;
    __atomic_store_n(&slot, (const void *)dsig_mldsa_backends[i].table, __ATOMIC_RELEASE);
}

/* The table for this process, chosen once; the choice depends on the CPU only, never on the data. */
const dsig_mldsa_kernels *dsig_mldsa_kernels_get(void)
{
    return dsig_cpu_once(&slot, &once, resolve);
}

#define K dsig_mldsa_kernels_get()

/* ntt.h */
void dsig_mldsa_ntt(int32_t a[256]) { K->ntt(a); }
void dsig_mldsa_invntt_tomont(int32_t a[256]) { K->invntt_tomont(a); }
void dsig_mldsa_pointwise_montgomery(int32_t c[256], const int32_t a[256], const int32_t b[256])
{
    K->pointwise_montgomery(c, a, b);
}
void dsig_mldsa_pointwise_acc_montgomery(int32_t c[256], const int32_t *a, const int32_t *b, unsigned len)
{
    K->pointwise_acc_montgomery(c, a, b, len);
}

/* poly.h */
void dsig_mldsa_poly_add(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b) { K->poly_add(c, a, b); }
void dsig_mldsa_poly_sub(mldsa_poly *c, const mldsa_poly *a, const mldsa_poly *b) { K->poly_sub(c, a, b); }
void dsig_mldsa_poly_reduce(mldsa_poly *a) { K->poly_reduce(a); }
void dsig_mldsa_poly_caddq(mldsa_poly *a) { K->poly_caddq(a); }
void dsig_mldsa_poly_freeze(mldsa_poly *a) { K->poly_freeze(a); }
void dsig_mldsa_poly_shiftl(mldsa_poly *a) { K->poly_shiftl(a); }
uint32_t dsig_mldsa_poly_norm_exceeds(const mldsa_poly *a, int32_t bound)
{
    return K->poly_norm_exceeds(a, bound);
}

/* rounding.h */
void dsig_mldsa_poly_power2round(mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a)
{
    K->poly_power2round(a1, a0, a);
}
void dsig_mldsa_poly_decompose(const mldsa_decomp *d, mldsa_poly *a1, mldsa_poly *a0, const mldsa_poly *a)
{
    K->poly_decompose(d, a1, a0, a);
}
unsigned dsig_mldsa_poly_make_hint(mldsa_poly *h, const mldsa_poly *a0, const mldsa_poly *a1, int32_t gamma2)
{
    return K->poly_make_hint(h, a0, a1, gamma2);
}
void dsig_mldsa_poly_use_hint(const mldsa_decomp *d, mldsa_poly *a, const mldsa_poly *h)
{
    K->poly_use_hint(d, a, h);
}
