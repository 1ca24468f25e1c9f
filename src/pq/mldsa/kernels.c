/*
 * src/pq/mldsa/kernels.c — the back-end tables of the ML-DSA kernels, the once-per-process choice
 * between them, and the unsuffixed functions of ntt.h, poly.h and rounding.h, which forward to the
 * chosen table (see kernels.h).
 */
#include "pq/mldsa/kernels.h"

#include "core/cpu.h"

const dsig_mldsa_kernels dsig_mldsa_kernels_portable = {
    .name = "portable",
    .ntt = dsig_mldsa_ntt_c,
    .invntt_tomont = dsig_mldsa_invntt_tomont_c,
    .pointwise_montgomery = dsig_mldsa_pointwise_montgomery_c,
    .pointwise_acc_montgomery = dsig_mldsa_pointwise_acc_montgomery_c,
    .poly_add = dsig_mldsa_poly_add_c,
    .poly_sub = dsig_mldsa_poly_sub_c,
    .poly_reduce = dsig_mldsa_poly_reduce_c,
    .poly_caddq = dsig_mldsa_poly_caddq_c,
    .poly_freeze = dsig_mldsa_poly_freeze_c,
    .poly_shiftl = dsig_mldsa_poly_shiftl_c,
    .poly_norm_exceeds = dsig_mldsa_poly_norm_exceeds_c,
    .poly_power2round = dsig_mldsa_poly_power2round_c,
    .poly_decompose = dsig_mldsa_poly_decompose_c,
    .poly_make_hint = dsig_mldsa_poly_make_hint_c,
    .poly_use_hint = dsig_mldsa_poly_use_hint_c,
    .pack = dsig_mldsa_pack_c,
    .unpack = dsig_mldsa_unpack_c,
    .rej_uniform = dsig_mldsa_rej_uniform_c,
    .rej_eta = dsig_mldsa_rej_eta_c,
};

#ifdef DSIG_MLDSA_HAVE_AVX2
const dsig_mldsa_kernels dsig_mldsa_kernels_avx2 = {
    .name = "avx2",
    .ntt = dsig_mldsa_ntt_avx2,
    .invntt_tomont = dsig_mldsa_invntt_tomont_avx2,
    .pointwise_montgomery = dsig_mldsa_pointwise_montgomery_avx2,
    .pointwise_acc_montgomery = dsig_mldsa_pointwise_acc_montgomery_avx2,
    .poly_add = dsig_mldsa_poly_add_avx2,
    .poly_sub = dsig_mldsa_poly_sub_avx2,
    .poly_reduce = dsig_mldsa_poly_reduce_avx2,
    .poly_caddq = dsig_mldsa_poly_caddq_avx2,
    .poly_freeze = dsig_mldsa_poly_freeze_avx2,
    .poly_shiftl = dsig_mldsa_poly_shiftl_avx2,
    .poly_norm_exceeds = dsig_mldsa_poly_norm_exceeds_avx2,
    .poly_power2round = dsig_mldsa_poly_power2round_avx2,
    .poly_decompose = dsig_mldsa_poly_decompose_avx2,
    .poly_make_hint = dsig_mldsa_poly_make_hint_avx2,
    .poly_use_hint = dsig_mldsa_poly_use_hint_avx2,
    .pack = dsig_mldsa_pack_avx2,
    .unpack = dsig_mldsa_unpack_avx2,
    .rej_uniform = dsig_mldsa_rej_uniform_avx2,
    .rej_eta = dsig_mldsa_rej_eta_avx2,
};
#endif

static const dsig_mldsa_kernels *selected; /* accessed only with __atomic builtins */

/* The table for this process: AVX2 if the CPU has it and DSIG_CPU_DISABLE does not veto it. A race
 * between two first callers is harmless: both compute the same pointer. */
const dsig_mldsa_kernels *dsig_mldsa_kernels_get(void)
{
    const dsig_mldsa_kernels *k = __atomic_load_n(&selected, __ATOMIC_ACQUIRE);
    if (__builtin_expect(k != NULL, 1))
        return k;
    k = &dsig_mldsa_kernels_portable;
#ifdef DSIG_MLDSA_HAVE_AVX2
    if (dsig_cpu_features() & DSIG_CPU_AVX2)
        k = &dsig_mldsa_kernels_avx2;
#endif
    __atomic_store_n(&selected, k, __ATOMIC_RELEASE);
    return k;
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
