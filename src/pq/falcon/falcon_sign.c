/*
 * src/pq/falcon/falcon_sign.c — Falcon signing: FFT over R[x]/(x^n + 1), the LDL tree of the private
 * basis, ffSampling and SamplerZ (Falcon round-3 specification §3.8.3, §3.9, §3.9.3).
 *
 * Floating point: native IEEE 754 binary64 with round-to-nearest-even, every operation rounded once.
 * That requires (checked below at compile time) SSE2-style evaluation (FLT_EVAL_METHOD == 0: no x87
 * extended precision), no -ffast-math, and no fused multiply-add contraction (an FMA rounds once
 * where the specification's reference computation rounds twice, which changes low bits and hence, now
 * and then, a sampled coefficient — the signature would still be valid but the known-answer tests
 * would not reproduce). GCC defaults to -ffp-contract=off in ISO C mode (-std=c11, which this project
 * uses); the pragma below makes it explicit. Valid on x86-64, AArch64 and any other target with
 * binary64 hardware arithmetic; not on i386 with x87 (FLT_EVAL_METHOD 2) — rejected at compile time.
 *
 * The order of every floating-point operation follows the round-3 reference implementation (FFT
 * butterflies, complex division as multiplication by the inverse squared modulus, split/merge), since
 * bit-exact reproduction of the known-answer signatures depends on it. Constant time: no branch or
 * memory index depends on secret values except the rejection loops of SamplerZ/BerExp, whose
 * control flow depends only on the accept/reject outcome (as in the specification).
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/ct.h"
#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "pq/falcon/falcon_tables.h"
#include "core/bytes.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "Falcon signing needs binary64 evaluation without excess precision (FLT_EVAL_METHOD == 0)"
#endif
#ifdef __FAST_MATH__
#error "Falcon signing must not be compiled with -ffast-math"
#endif

/* binary64 constants given by bit pattern (exactly the values the round-3 reference uses). */
static double d_of_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
/* 1/σ for n = 512 (σ = 165.7366171829776) and n = 1024 (σ = 168.38857144654395), spec Table 3.3. */
#define INV_SIGMA_512 UINT64_C(4573606369665796042)
#define INV_SIGMA_1024 UINT64_C(4573496814039276259)
/* σ_min, spec Table 3.3: 1.2778336969128337, 1.298280334344292. */
#define SIGMA_MIN_512 UINT64_C(4608433670533905013)
#define SIGMA_MIN_1024 UINT64_C(4608525754002622308)
/* 1/(2σ_max²), σ_max = 1.8205 (spec §3.9.3). */
static const double INV_2SQRSIGMA0 = 0.150865048875372721532312163019;
static const double LN2 = 0.69314718055994530941723212145818;
static const double INV_LN2 = 1.4426950408889634073599246810019;
static const double TWO63 = 9223372036854775808.0;

/* ---- complex helpers: n/2 complex values stored as re[0..n/2) then im[0..n/2) -------------- */

#define CMUL(dre, dim, are, aim, bre, bim)                                                          \
    do {                                                                                           \
        double ar_ = (are), ai_ = (aim), br_ = (bre), bi_ = (bim);                                 \
        (dre) = ar_ * br_ - ai_ * bi_;                                                             \
        (dim) = ar_ * bi_ + ai_ * br_;                                                             \
    } while (0)

/* Round to nearest, ties to even, for |x| < 2^51: adding 1.5·2^52 forces the rounding in hardware
 * (no branch, no secret-dependent timing). */
static inline int64_t rint_ct(double x)
{
    const double magic = 6755399441055744.0;
    /* Without -ffast-math the compiler may not fold (x + magic) − magic into x. */
    return (int64_t)((x + magic) - magic);
}

/* √x as the bare instruction: libm's sqrt() (with -fmath-errno, the default) adds a branch on x < 0
 * to set errno — a branch on secret data, even though x is never negative here. */
static inline double sqrt_ct(double x)
{
#if defined(__SSE2__)
    __m128d v = _mm_set_sd(x);
    return _mm_cvtsd_f64(_mm_sqrt_sd(v, v));
#elif defined(__aarch64__)
    double r;
    __asm__("fsqrt %d0, %d1" : "=w"(r) : "w"(x));
    return r;
#else
    return sqrt(x);
#endif
}

/* ⌊x⌋ for |x| < 2^63 without a branch (the comparison becomes a flag-to-integer move). */
static inline int64_t floor_ct(double x)
{
    int64_t r = (int64_t)x;
    return r - (int64_t)(x < (double)r);
}

/* @spec §3.7.1 FFT (reference split-radix ordering: the first layer is implicit, f[j] + i·f[j+n/2]). */
static void fft(double *f, unsigned logn)
{
    size_t n = (size_t)1 << logn, hn = n >> 1, t = hn;
    for (size_t u = 1, m = 2; u < logn; u++, m <<= 1) {
        size_t ht = t >> 1, hm = m >> 1;
        for (size_t i1 = 0, j1 = 0; i1 < hm; i1++, j1 += t) {
            double s_re = falcon_gm_tab[((m + i1) << 1) + 0];
            double s_im = falcon_gm_tab[((m + i1) << 1) + 1];
            for (size_t j = j1; j < j1 + ht; j++) {
                double x_re = f[j], x_im = f[j + hn];
                double y_re, y_im;
                CMUL(y_re, y_im, f[j + ht], f[j + ht + hn], s_re, s_im);
                f[j] = x_re + y_re;
                f[j + hn] = x_im + y_im;
                f[j + ht] = x_re - y_re;
                f[j + ht + hn] = x_im - y_im;
            }
        }
        t = ht;
    }
}

/* @spec §3.7.1 inverse FFT (the last layer folds into the 2/n scaling). */
static void ifft(double *f, unsigned logn)
{
    size_t n = (size_t)1 << logn, hn = n >> 1, t = 1, m = n;
    for (unsigned u = logn; u > 1; u--) {
        size_t hm = m >> 1, dt = t << 1;
        for (size_t i1 = 0, j1 = 0; j1 < hn; i1++, j1 += dt) {
            double s_re = falcon_gm_tab[((hm + i1) << 1) + 0];
            double s_im = -falcon_gm_tab[((hm + i1) << 1) + 1];
            for (size_t j = j1; j < j1 + t; j++) {
                double x_re = f[j], x_im = f[j + hn];
                double y_re = f[j + t], y_im = f[j + t + hn];
                f[j] = x_re + y_re;
                f[j + hn] = x_im + y_im;
                x_re = x_re - y_re;
                x_im = x_im - y_im;
                CMUL(f[j + t], f[j + t + hn], x_re, x_im, s_re, s_im);
            }
        }
        t = dt;
        m = hm;
    }
    if (logn > 0) {
        double ni = ldexp(1.0, 1 - (int)logn); /* exact power of two */
        for (size_t u = 0; u < n; u++)
            f[u] = f[u] * ni;
    }
}

/* a ← a + b (n values). */
static void poly_add(double *a, const double *b, unsigned logn)
{
    for (size_t u = 0, n = (size_t)1 << logn; u < n; u++)
        a[u] = a[u] + b[u];
}

/* a ← a − b. */
static void poly_sub(double *a, const double *b, unsigned logn)
{
    for (size_t u = 0, n = (size_t)1 << logn; u < n; u++)
        a[u] = a[u] - b[u];
}

/* a ← −a. */
static void poly_neg(double *a, unsigned logn)
{
    for (size_t u = 0, n = (size_t)1 << logn; u < n; u++)
        a[u] = -a[u];
}

/* a ← a·x for a real constant. */
static void poly_mulconst(double *a, double x, unsigned logn)
{
    for (size_t u = 0, n = (size_t)1 << logn; u < n; u++)
        a[u] = a[u] * x;
}

/* a ← a·b in FFT form. */
static void poly_mul_fft(double *a, const double *b, unsigned logn)
{
    size_t hn = ((size_t)1 << logn) >> 1;
    for (size_t u = 0; u < hn; u++)
        CMUL(a[u], a[u + hn], a[u], a[u + hn], b[u], b[u + hn]);
}

/* a ← a·adj(b) in FFT form. */
static void poly_muladj_fft(double *a, const double *b, unsigned logn)
{
    size_t hn = ((size_t)1 << logn) >> 1;
    for (size_t u = 0; u < hn; u++)
        CMUL(a[u], a[u + hn], a[u], a[u + hn], b[u], -b[u + hn]);
}

/* a ← a·adj(a) (real, so the imaginary halves become 0). */
static void poly_mulselfadj_fft(double *a, unsigned logn)
{
    size_t hn = ((size_t)1 << logn) >> 1;
    for (size_t u = 0; u < hn; u++) {
        double re = a[u], im = a[u + hn];
        a[u] = re * re + im * im;
        a[u + hn] = 0.0;
    }
}

/* @spec §3.8.3 LDL* of the self-adjoint 2×2 matrix [[g00, g01], [adj g01, g11]] in FFT form:
 * l10 = adj(g01/g00), d11 = g11 − |g01|²/g00 (division as multiplication by 1/|g00|²·adj(g00)). */
static void poly_ldl_fft(double *d11, double *l10, const double *g00, const double *g01,
                         const double *g11, unsigned logn)
{
    size_t hn = ((size_t)1 << logn) >> 1;
    for (size_t u = 0; u < hn; u++) {
        double g00_re = g00[u], g00_im = g00[u + hn];
        double g01_re = g01[u], g01_im = g01[u + hn];
        double g11_re = g11[u], g11_im = g11[u + hn];
        double m = 1.0 / (g00_re * g00_re + g00_im * g00_im);
        double b_re = g00_re * m, b_im = -g00_im * m;
        double mu_re, mu_im, xi_re, xi_im;
        CMUL(mu_re, mu_im, g01_re, g01_im, b_re, b_im);
        CMUL(xi_re, xi_im, mu_re, mu_im, g01_re, -g01_im);
        d11[u] = g11_re - xi_re;
        d11[u + hn] = g11_im - xi_im;
        l10[u] = mu_re;
        l10[u + hn] = -mu_im;
    }
}

/* @spec §3.7.2 splitfft: f(x) = f0(x²) + x·f1(x²), in FFT form. f0, f1 must not overlap f. */
static void poly_split_fft(double *f0, double *f1, const double *f, unsigned logn)
{
    size_t n = (size_t)1 << logn, hn = n >> 1, qn = hn >> 1;
    f0[0] = f[0];
    f1[0] = f[hn];
    for (size_t u = 0; u < qn; u++) {
        double a_re = f[(u << 1) + 0], a_im = f[(u << 1) + 0 + hn];
        double b_re = f[(u << 1) + 1], b_im = f[(u << 1) + 1 + hn];
        double t_re = a_re + b_re, t_im = a_im + b_im;
        f0[u] = t_re * 0.5;
        f0[u + qn] = t_im * 0.5;
        t_re = a_re - b_re;
        t_im = a_im - b_im;
        CMUL(t_re, t_im, t_re, t_im, falcon_gm_tab[((u + hn) << 1) + 0],
             -falcon_gm_tab[((u + hn) << 1) + 1]);
        f1[u] = t_re * 0.5;
        f1[u + qn] = t_im * 0.5;
    }
}

/* @spec §3.7.2 mergefft, the inverse of poly_split_fft. f must not overlap f0, f1. */
static void poly_merge_fft(double *f, const double *f0, const double *f1, unsigned logn)
{
    size_t n = (size_t)1 << logn, hn = n >> 1, qn = hn >> 1;
    f[0] = f0[0];
    f[hn] = f1[0];
    for (size_t u = 0; u < qn; u++) {
        double a_re = f0[u], a_im = f0[u + qn];
        double b_re, b_im;
        CMUL(b_re, b_im, f1[u], f1[u + qn], falcon_gm_tab[((u + hn) << 1) + 0],
             falcon_gm_tab[((u + hn) << 1) + 1]);
        f[(u << 1) + 0] = a_re + b_re;
        f[(u << 1) + 0 + hn] = a_im + b_im;
        f[(u << 1) + 1] = a_re - b_re;
        f[(u << 1) + 1 + hn] = a_im - b_im;
    }
}

/* ---- the LDL tree --------------------------------------------------------------------------- */

/* Number of values in the tree for degree 2^logn. */
static size_t tree_size(unsigned logn)
{
    return (size_t)(logn + 1) << logn;
}

/* @spec §3.8.3 ffLDL* on a quasi-cyclic Gram matrix [[g0, g1], [adj g1, g0]]; g0 and g1 are
 * destroyed; tmp holds 2^logn values. */
static void ffldl_inner(double *tree, double *g0, double *g1, unsigned logn, double *tmp)
{
    if (logn == 0) {
        tree[0] = g0[0];
        return;
    }
    size_t n = (size_t)1 << logn, hn = n >> 1;
    poly_ldl_fft(tmp, tree, g0, g1, g0, logn);
    poly_split_fft(g1, g1 + hn, g0, logn);  /* d00 = g0 */
    poly_split_fft(g0, g0 + hn, tmp, logn); /* d11 */
    ffldl_inner(tree + n, g1, g1 + hn, logn - 1, tmp);
    ffldl_inner(tree + n + tree_size(logn - 1), g0, g0 + hn, logn - 1, tmp);
}

/* @spec §3.8.3 ffLDL* at the top (a general self-adjoint Gram matrix); tmp holds 3·2^logn values. */
static void ffldl_top(double *tree, const double *g00, const double *g01, const double *g11,
                      unsigned logn, double *tmp)
{
    size_t n = (size_t)1 << logn, hn = n >> 1;
    double *d00 = tmp, *d11 = tmp + n, *t = tmp + 2 * n;
    memcpy(d00, g00, n * sizeof *d00);
    poly_ldl_fft(d11, tree, g00, g01, g11, logn);
    poly_split_fft(t, t + hn, d00, logn);
    poly_split_fft(d00, d00 + hn, d11, logn);
    memcpy(d11, t, n * sizeof *t);
    ffldl_inner(tree + n, d11, d11 + hn, logn - 1, t);
    ffldl_inner(tree + n + tree_size(logn - 1), d00, d00 + hn, logn - 1, t);
}

/* @spec §3.8.3 step "normalize": each leaf becomes σ/√leaf; stored inverted (√leaf/σ) so the sampler
 * multiplies instead of dividing. */
static void ffldl_normalize(double *tree, double inv_sigma, unsigned logn)
{
    if (logn == 0) {
        tree[0] = sqrt_ct(tree[0]) * inv_sigma;
        return;
    }
    size_t n = (size_t)1 << logn;
    ffldl_normalize(tree + n, inv_sigma, logn - 1);
    ffldl_normalize(tree + n + tree_size(logn - 1), inv_sigma, logn - 1);
}

/* Small integer polynomial to FFT form. */
static void small_to_fft(double *out, const int8_t *a, unsigned logn)
{
    for (size_t u = 0, n = (size_t)1 << logn; u < n; u++)
        out[u] = (double)a[u];
    fft(out, logn);
}

/* Build the expanded private key: B = [[g, −f], [G, −F]] in FFT form and its normalized LDL tree. */
int falcon_expand_private(falcon_expanded *ek, const int8_t *f, const int8_t *g, const int8_t *F,
                          const int8_t *G, unsigned logn)
{
    size_t n = (size_t)1 << logn;
    memset(ek, 0, sizeof *ek);
    ek->mem_len = (4 * n + tree_size(logn)) * sizeof(double);
    ek->mem = dsig_malloc(ek->mem_len);
    double *tmp = dsig_malloc(7 * n * sizeof(double));
    if (!ek->mem || !tmp) {
        dsig_xfree(ek->mem, 0);
        dsig_xfree(tmp, 0);
        ek->mem = NULL;
        return dsig_fail(DSIG_E_NOMEM, "Falcon: out of memory expanding the private key");
    }
    ek->logn = logn;
    ek->b00 = ek->mem;
    ek->b01 = ek->b00 + n;
    ek->b10 = ek->b01 + n;
    ek->b11 = ek->b10 + n;
    ek->tree = ek->b11 + n;
    small_to_fft(ek->b00, g, logn);
    small_to_fft(ek->b01, f, logn);
    small_to_fft(ek->b10, G, logn);
    small_to_fft(ek->b11, F, logn);
    poly_neg(ek->b01, logn);
    poly_neg(ek->b11, logn);

    /* Gram matrix B·B*: g00 = |b00|² + |b01|², g01 = b00·adj(b10) + b01·adj(b11),
     * g11 = |b10|² + |b11|². */
    double *g00 = tmp, *g01 = tmp + n, *g11 = tmp + 2 * n, *gxx = tmp + 3 * n;
    memcpy(g00, ek->b00, n * sizeof *g00);
    poly_mulselfadj_fft(g00, logn);
    memcpy(gxx, ek->b01, n * sizeof *gxx);
    poly_mulselfadj_fft(gxx, logn);
    poly_add(g00, gxx, logn);
    memcpy(g01, ek->b00, n * sizeof *g01);
    poly_muladj_fft(g01, ek->b10, logn);
    memcpy(gxx, ek->b01, n * sizeof *gxx);
    poly_muladj_fft(gxx, ek->b11, logn);
    poly_add(g01, gxx, logn);
    memcpy(g11, ek->b10, n * sizeof *g11);
    poly_mulselfadj_fft(g11, logn);
    memcpy(gxx, ek->b11, n * sizeof *gxx);
    poly_mulselfadj_fft(gxx, logn);
    poly_add(g11, gxx, logn);

    ffldl_top(ek->tree, g00, g01, g11, logn, gxx);
    ffldl_normalize(ek->tree, d_of_bits(logn == 9 ? INV_SIGMA_512 : INV_SIGMA_1024), logn);
    dsig_xfree(tmp, 7 * n * sizeof(double));
    return DSIG_OK;
}

/* Wipe and free an expanded key. */
void falcon_expanded_clear(falcon_expanded *ek)
{
    if (ek->mem)
        dsig_xfree(ek->mem, ek->mem_len);
    memset(ek, 0, sizeof *ek);
}

/* ---- sampler PRNG: ChaCha20 in the round-3 reference's 8-way interleaved layout ---------------- */

typedef struct fprng {
    uint8_t buf[512];
    uint8_t state[56]; /* 48 bytes key/constant words 4..15 material, then a 64-bit block counter */
    size_t ptr;
} fprng;

#define ROTL32(x, c) (((x) << (c)) | ((x) >> (32 - (c))))
#define QROUND(a, b, c, d)                                                                           \
    do {                                                                                           \
        st[a] += st[b];                                                                            \
        st[d] ^= st[a];                                                                            \
        st[d] = ROTL32(st[d], 16);                                                                 \
        st[c] += st[d];                                                                            \
        st[b] ^= st[c];                                                                            \
        st[b] = ROTL32(st[b], 12);                                                                 \
        st[a] += st[b];                                                                            \
        st[d] ^= st[a];                                                                            \
        st[d] = ROTL32(st[d], 8);                                                                  \
        st[c] += st[d];                                                                            \
        st[b] ^= st[c];                                                                            \
        st[b] = ROTL32(st[b], 7);                                                                  \
    } while (0)


/* Refill the 512-byte buffer with 8 ChaCha20 blocks (RFC 8439 core, 20 rounds) whose last two state
 * words are XORed with a 64-bit counter; word v of block u lands at byte 4u + 32v. */
static void fprng_refill(fprng *p)
{
    static const uint32_t CW[4] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
    uint64_t cc = dsig_load_le64(p->state + 48);
    uint32_t key[12];
    for (int i = 0; i < 12; i++)
        key[i] = dsig_load_le32(p->state + 4 * i);
    for (unsigned u = 0; u < 8; u++) {
        /* Keep u as the loop counter: otherwise the compiler counts with the (secret) block
         * counter cc and compares it against cc + 8. */
        __asm__("" : "+r"(u));
        uint32_t st[16];
        memcpy(st, CW, sizeof CW);
        memcpy(st + 4, key, sizeof key);
        st[14] ^= (uint32_t)cc;
        st[15] ^= (uint32_t)(cc >> 32);
        for (int i = 0; i < 10; i++) {
            QROUND(0, 4, 8, 12);
            QROUND(1, 5, 9, 13);
            QROUND(2, 6, 10, 14);
            QROUND(3, 7, 11, 15);
            QROUND(0, 5, 10, 15);
            QROUND(1, 6, 11, 12);
            QROUND(2, 7, 8, 13);
            QROUND(3, 4, 9, 14);
        }
        for (int v = 0; v < 4; v++)
            st[v] += CW[v];
        for (int v = 4; v < 14; v++)
            st[v] += key[v - 4];
        st[14] += key[10] ^ (uint32_t)cc;
        st[15] += key[11] ^ (uint32_t)(cc >> 32);
        cc++;
        for (unsigned v = 0; v < 16; v++) {
            uint8_t *d = p->buf + (u << 2) + (v << 5);
            d[0] = (uint8_t)st[v];
            d[1] = (uint8_t)(st[v] >> 8);
            d[2] = (uint8_t)(st[v] >> 16);
            d[3] = (uint8_t)(st[v] >> 24);
        }
        dsig_memzero(st, sizeof st);
    }
    for (int i = 0; i < 8; i++)
        p->state[48 + i] = (uint8_t)(cc >> (8 * i));
    dsig_memzero(key, sizeof key);
    p->ptr = 0;
}

/* Seed from 56 bytes of the SHAKE256 stream. */
static void fprng_init(fprng *p, dsig_keccak *src)
{
    dsig_keccak_squeeze(src, p->state, sizeof p->state);
    fprng_refill(p);
}

/* Next 64-bit little-endian word (never straddles a refill). */
static inline uint64_t fprng_u64(fprng *p)
{
    size_t u = p->ptr;
    if (u >= sizeof p->buf - 9) {
        fprng_refill(p);
        u = 0;
    }
    p->ptr = u + 8;
    return dsig_load_le64(p->buf + u);
}

/* Next byte. */
static inline unsigned fprng_u8(fprng *p)
{
    unsigned v = p->buf[p->ptr++];
    if (p->ptr == sizeof p->buf)
        fprng_refill(p);
    return v;
}

/* ---- SamplerZ --------------------------------------------------------------------------------- */

typedef struct sampler {
    fprng p;
    double sigma_min;
} sampler;

/* @spec §3.9.3 Algorithm 12 BaseSampler: a 72-bit uniform u, z0 = #{i : u < RCDT[i]}; compared as
 * three 24-bit limbs with a borrow chain (constant time). */
static int base_sampler(fprng *p)
{
    uint64_t lo = fprng_u64(p);
    uint32_t hi = fprng_u8(p);
    uint32_t v0 = (uint32_t)lo & 0xFFFFFF, v1 = (uint32_t)(lo >> 24) & 0xFFFFFF;
    uint32_t v2 = (uint32_t)(lo >> 48) | (hi << 16);
    int z = 0;
    for (int i = 0; i < 18; i++) {
        uint32_t cc = (v0 - falcon_rcdt_limbs[i][0]) >> 31;
        cc = (v1 - falcon_rcdt_limbs[i][1] - cc) >> 31;
        cc = (v2 - falcon_rcdt_limbs[i][2] - cc) >> 31;
        z += (int)cc;
    }
    return z;
}

/* High 64 bits of a 64×64 product. */
static inline uint64_t mulhi64(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* @spec §3.9.3 Algorithm 13 ApproxExp: ≈ 2^63·ccs·exp(−x) for 0 ≤ x < ln 2, 0 ≤ ccs ≤ 1 (the
 * polynomial coefficients of the specification, Horner's rule in 63-bit fixed point). */
static uint64_t approx_exp(double x, double ccs)
{
    static const uint64_t C[13] = {
        UINT64_C(0x00000004741183A3), UINT64_C(0x00000036548CFC06), UINT64_C(0x0000024FDCBF140A),
        UINT64_C(0x0000171D939DE045), UINT64_C(0x0000D00CF58F6F84), UINT64_C(0x000680681CF796E3),
        UINT64_C(0x002D82D8305B0FEA), UINT64_C(0x011111110E066FD0), UINT64_C(0x0555555555070F00),
        UINT64_C(0x155555555581FF00), UINT64_C(0x400000000002B400), UINT64_C(0x7FFFFFFFFFFF4800),
        UINT64_C(0x8000000000000000)
    };
    /* (z·y) >> 63 with z = ⌊2^63·x⌋ equals the high word of (2z)·y. */
    uint64_t z = (uint64_t)(int64_t)(x * TWO63) << 1;
    uint64_t y = C[0];
    for (int u = 1; u < 13; u++)
        y = C[u] - mulhi64(z, y);
    z = (uint64_t)(int64_t)(ccs * TWO63) << 1;
    return mulhi64(z, y);
}

/* @spec §3.9.3 Algorithm 14 BerExp: a bit that is 1 with probability ≈ ccs·exp(−x). */
static int ber_exp(fprng *p, double x, double ccs)
{
    int s = (int)(int64_t)(x * INV_LN2);
    double r = x - (double)s * LN2;
    /* s ← min(s, 63) without a branch. */
    uint32_t sw = (uint32_t)s;
    sw ^= (sw ^ 63u) & -((63u - sw) >> 31);
    uint64_t z = ((approx_exp(r, ccs) << 1) - 1) >> sw;
    /* Lazy byte-wise comparison of a uniform 64-bit value with z (spec: "w < 0"). */
    int i = 64;
    uint32_t w, differ;
    do {
        i -= 8;
        w = fprng_u8(p) - ((uint32_t)(z >> i) & 0xFF);
        /* The spec's lazy comparison stops at the first differing byte: only that one bit per step
         * is made public ("a uniform byte equalled the byte of z", probability 2^-8), not w nor
         * the sign that decides acceptance (the caller declassifies the accept bit alone). */
        differ = (w | (0u - w)) >> 31;
        DSIG_CT_DECLASSIFY(&differ, sizeof differ);
    } while (!differ && i > 0);
    return (int)(w >> 31);
}

/* @spec §3.9.3 Algorithm 15 SamplerZ(μ, σ'), given isigma = 1/σ'. */
static int sampler_z(sampler *sc, double mu, double isigma)
{
    int s = (int)floor_ct(mu);
    double r = mu - (double)s;
    double dss = (isigma * isigma) * 0.5;
    double ccs = isigma * sc->sigma_min;
    for (;;) {
        int z0 = base_sampler(&sc->p);
        int b = (int)fprng_u8(&sc->p) & 1;
        int z = b + ((b << 1) - 1) * z0;
        double x = (double)z - r;
        x = (x * x) * dss;
        x = x - (double)(z0 * z0) * INV_2SQRSIGMA0;
        int accept = ber_exp(&sc->p, x, ccs);
        /* Rejection sampling: the number of trials is allowed to leak (spec §3.9.3). */
        DSIG_CT_DECLASSIFY(&accept, sizeof accept);
        if (accept)
            return s + z;
    }
}

/* @spec §3.9.2 Algorithm 11 ffSampling: z0, z1 (FFT form) from targets t0, t1 and the tree;
 * tmp holds 2·2^logn values. Outputs must not overlap the inputs. */
static void ffsampling(sampler *sc, double *z0, double *z1, const double *tree, const double *t0,
                       const double *t1, unsigned logn, double *tmp)
{
    if (logn == 0) {
        z0[0] = (double)sampler_z(sc, t0[0], tree[0]);
        z1[0] = (double)sampler_z(sc, t1[0], tree[0]);
        return;
    }
    size_t n = (size_t)1 << logn, hn = n >> 1;
    const double *tree0 = tree + n, *tree1 = tree + n + tree_size(logn - 1);
    /* Right subtree first, on the split of t1. */
    poly_split_fft(z1, z1 + hn, t1, logn);
    ffsampling(sc, tmp, tmp + hn, tree1, z1, z1 + hn, logn - 1, tmp + n);
    poly_merge_fft(z1, tmp, tmp + hn, logn);
    /* tb0 = t0 + (t1 − z1)·l10 */
    memcpy(tmp, t1, n * sizeof *tmp);
    poly_sub(tmp, z1, logn);
    poly_mul_fft(tmp, tree, logn);
    poly_add(tmp, t0, logn);
    poly_split_fft(z0, z0 + hn, tmp, logn);
    ffsampling(sc, tmp, tmp + hn, tree0, z0, z0 + hn, logn - 1, tmp + n);
    poly_merge_fft(z0, tmp, tmp + hn, logn);
}

/* One signing attempt; returns 1 with s2 set if the vector is short enough. `w` holds 8n doubles. */
static int sign_attempt(sampler *sc, int16_t *s2, const falcon_expanded *ek, const uint16_t *c,
                        double *w)
{
    unsigned logn = ek->logn;
    size_t n = (size_t)1 << logn;
    double *t0 = w, *t1 = w + n, *tx = w + 2 * n, *ty = w + 3 * n, *tmp = w + 4 * n;
    const double ni = 1.0 / 12289.0;

    /* t = (c, 0)·B⁻¹ = (−c·F/q, c·f/q) in FFT form (b01 = −f, b11 = −F). */
    for (size_t u = 0; u < n; u++)
        t0[u] = (double)c[u];
    fft(t0, logn);
    memcpy(t1, t0, n * sizeof *t1);
    poly_mul_fft(t1, ek->b01, logn);
    poly_mulconst(t1, -ni, logn);
    poly_mul_fft(t0, ek->b11, logn);
    poly_mulconst(t0, ni, logn);

    ffsampling(sc, tx, ty, ek->tree, t0, t1, logn, tmp);

    /* v = z·B; s = (c, 0) − v. */
    memcpy(t0, tx, n * sizeof *t0);
    memcpy(t1, ty, n * sizeof *t1);
    poly_mul_fft(tx, ek->b00, logn);
    poly_mul_fft(ty, ek->b10, logn);
    poly_add(tx, ty, logn);
    memcpy(ty, t0, n * sizeof *ty);
    poly_mul_fft(ty, ek->b01, logn);
    memcpy(t0, tx, n * sizeof *t0);
    poly_mul_fft(t1, ek->b11, logn);
    poly_add(t1, ty, logn);
    ifft(t0, logn);
    ifft(t1, logn);

    uint64_t sqn = 0;
    int16_t s2tmp[FALCON_MAX_N];
    for (size_t u = 0; u < n; u++) {
        int64_t z = (int64_t)c[u] - rint_ct(t0[u]);
        sqn += (uint64_t)(z * z);
    }
    for (size_t u = 0; u < n; u++) {
        int64_t z = -rint_ct(t1[u]);
        sqn += (uint64_t)(z * z);
        s2tmp[u] = (int16_t)z;
    }
    int ok = sqn <= falcon_l2bound(logn);
    /* Restarting on a too-long vector leaks only the number of attempts (spec Algorithm 10). */
    DSIG_CT_DECLASSIFY(&ok, sizeof ok);
    if (ok)
        memcpy(s2, s2tmp, n * sizeof *s2);
    dsig_memzero(s2tmp, sizeof s2tmp);
    return ok;
}

/* @spec §3.9 Algorithm 10 inner loop (see falcon.h). */
int falcon_sign_core(int16_t *s2, dsig_keccak *rng, const falcon_expanded *ek, const uint16_t *c)
{
    size_t n = (size_t)1 << ek->logn;
    size_t wlen = 8 * n * sizeof(double);
    double *w = dsig_malloc(wlen);
    if (!w)
        return dsig_fail(DSIG_E_NOMEM, "Falcon: out of memory while signing");
    sampler sc;
    sc.sigma_min = d_of_bits(ek->logn == 9 ? SIGMA_MIN_512 : SIGMA_MIN_1024);
    for (;;) {
        fprng_init(&sc.p, rng);
        if (sign_attempt(&sc, s2, ek, c, w))
            break;
    }
    dsig_memzero(&sc, sizeof sc);
    dsig_xfree(w, wlen);
    return DSIG_OK;
}

/* ---- floating-point helpers of key generation ------------------------------------------------- */

/* @spec §3.8.2 Algorithm 5 step 6: the Gram–Schmidt norm of the second basis vector,
 * ‖(q·adj f/(f·adj f + g·adj g), q·adj g/(f·adj f + g·adj g))‖² < 1.17²·q (= 16822.4121), computed in
 * the reference's operation order. */
int falcon_keygen_gs_ok(const int8_t *f, const int8_t *g, unsigned logn)
{
    size_t n = (size_t)1 << logn, hn = n >> 1;
    double rt1[FALCON_MAX_N], rt2[FALCON_MAX_N], rt3[FALCON_MAX_N / 2];
    small_to_fft(rt1, f, logn);
    small_to_fft(rt2, g, logn);
    for (size_t u = 0; u < hn; u++) {
        double a = rt1[u] * rt1[u] + rt1[u + hn] * rt1[u + hn];
        double b = rt2[u] * rt2[u] + rt2[u + hn] * rt2[u + hn];
        rt3[u] = 1.0 / (a + b);
    }
    for (size_t u = 0; u < hn; u++) {
        rt1[u + hn] = -rt1[u + hn];
        rt2[u + hn] = -rt2[u + hn];
    }
    poly_mulconst(rt1, 12289.0, logn);
    poly_mulconst(rt2, 12289.0, logn);
    for (size_t u = 0; u < hn; u++) {
        rt1[u] = rt1[u] * rt3[u];
        rt1[u + hn] = rt1[u + hn] * rt3[u];
        rt2[u] = rt2[u] * rt3[u];
        rt2[u + hn] = rt2[u + hn] * rt3[u];
    }
    ifft(rt1, logn);
    ifft(rt2, logn);
    double bnorm = 0.0;
    for (size_t u = 0; u < n; u++) {
        bnorm = bnorm + rt1[u] * rt1[u];
        bnorm = bnorm + rt2[u] * rt2[u];
    }
    return bnorm < 16822.4121;
}

/* @spec §3.8.2 Algorithm 7 (Reduce) inner step: k = ⌊2^scale·(F·adj f + G·adj g)/(f·adj f + g·adj g)⌉
 * for polynomials given as doubles (already scaled to ≤ 53 bits); logn ≥ 1; tmp holds 4·2^logn
 * doubles. Returns 1 if some k is non-zero. */
int falcon_babai_round(int64_t *k, const double *F, const double *G, const double *f,
                       const double *g, unsigned logn, int scale, double *tmp)
{
    size_t n = (size_t)1 << logn, hn = n >> 1;
    double *a = tmp, *b = tmp + n, *c = tmp + 2 * n, *d = tmp + 3 * n;
    memcpy(a, F, n * sizeof *a);
    memcpy(b, G, n * sizeof *b);
    memcpy(c, f, n * sizeof *c);
    memcpy(d, g, n * sizeof *d);
    fft(a, logn);
    fft(b, logn);
    fft(c, logn);
    fft(d, logn);
    for (size_t u = 0; u < hn; u++) {
        double nr, ni, mr, mi;
        CMUL(nr, ni, a[u], a[u + hn], c[u], -c[u + hn]);
        CMUL(mr, mi, b[u], b[u + hn], d[u], -d[u + hn]);
        double den = c[u] * c[u] + c[u + hn] * c[u + hn] + d[u] * d[u] + d[u + hn] * d[u + hn];
        a[u] = (nr + mr) / den;
        a[u + hn] = (ni + mi) / den;
    }
    ifft(a, logn);
    int nz = 0;
    double sc = ldexp(1.0, scale);
    for (size_t u = 0; u < n; u++) {
        double r = a[u] * sc;
        if (!(r > -9e15 && r < 9e15))
            r = 0; /* cannot happen with scaled inputs; keep the conversion defined */
        k[u] = (int64_t)llrint(r);
        nz |= k[u] != 0;
    }
    return nz;
}
