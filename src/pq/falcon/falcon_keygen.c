/*
 * src/pq/falcon/falcon_keygen.c — Falcon key generation (round-3 specification §3.8.2, Algorithms 4–9):
 * sample f, g from a discrete Gaussian, check the Gram–Schmidt norm, h = g/f mod q, and solve the NTRU
 * equation fG − gF = q with the field-norm tower (NTRUSolve) and Babai reduction (Reduce).
 *
 * f and g are sampled exactly as the round-3 reference does from its SHAKE256 PRNG (two 64-bit words
 * per Gaussian sample, CDT table generated from the specification's σ = 1.17·√(q/2n)), so a KAT seed
 * gives the KAT f, g and h. F is the Babai-reduced solution, unique given (f, g) up to floating-point
 * ties, which is what the reference produces too.
 *
 * Big integers: OpenSSL BIGNUM in the deep levels of the tower (coefficients of thousands of bits),
 * 128-bit machine integers where the operands are small enough. This arithmetic is NOT constant time
 * (the sizes of intermediate values depend on f and g); key generation is a one-off per key and runs
 * with no attacker-chosen input, which we judge acceptable — documented in docs/falcon.md.
 */
#include <string.h>

#include <openssl/bn.h>
#include <openssl/err.h>

#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "pq/falcon/falcon_tables.h"

/* ---- f, g sampling ------------------------------------------------------------------------------ */

/* One coefficient of D_{Z, σ_fg}: 2^(10−logn) samples of the n = 1024 distribution summed (variances
 * add: σ_512² = 2·σ_1024²). Each sample takes two 64-bit words of the PRNG (the reference's order):
 * the first gives the sign (top bit) and whether the sample is 0 (below table[0]); the second, r, the
 * magnitude: the first k ≥ 1 with r ≥ table[k]. table[1..26] decreases to 0, so that k is 1 plus the
 * number of entries above r. Constant time: every entry is compared, no branch or index on r. */
static int mkgauss(dsig_keccak *rng, unsigned logn)
{
    const uint64_t top = ~((uint64_t)1 << 63);
    int val = 0;
    for (unsigned u = 0; u < (1u << (10 - logn)); u++) {
        uint64_t r = dsig_keccak_squeeze_u64(rng);
        uint32_t neg = (uint32_t)(r >> 63);
        uint32_t zero = (uint32_t)(((r & top) - falcon_keygen_gauss[0]) >> 63); /* 1: the sample is 0 */
        r = dsig_keccak_squeeze_u64(rng) & top;
        uint32_t above = 0;
        for (unsigned k = 1; k < 26; k++) /* table[26] = 0 is never above r */
            above += (uint32_t)((r - falcon_keygen_gauss[k]) >> 63);
        uint32_t v = (above + 1) & (zero - 1u);
        v = (v ^ -neg) + neg;
        val += (int32_t)v;
    }
    return val;
}

/* A polynomial with Gaussian coefficients in [−127, 127] and odd coefficient sum (so that the
 * resultant with x^n + 1 is odd, which NTRUSolve needs). */
static void poly_small_gauss(dsig_keccak *rng, int8_t *f, unsigned logn)
{
    size_t n = (size_t)1 << logn;
    unsigned mod2 = 0;
    for (size_t u = 0; u < n; u++) {
        int s;
        for (;;) {
            s = mkgauss(rng, logn);
            if (s < -127 || s > 127)
                continue;
            if (u == n - 1 && (mod2 ^ (unsigned)(s & 1)) == 0)
                continue;
            break;
        }
        mod2 ^= (unsigned)(s & 1);
        f[u] = (int8_t)s;
    }
}

/* ---- polynomials of big integers ----------------------------------------------------------------- */

typedef struct bpoly {
    BIGNUM **c;
    size_t m;
} bpoly;

/* Allocate m zero coefficients. */
static int bp_init(bpoly *p, size_t m)
{
    p->m = m;
    p->c = dsig_calloc(m, sizeof *p->c); /* on failure bp_free() still works (NULLs) */
    if (!p->c)
        return 0;
    for (size_t i = 0; i < m; i++)
        if (!(p->c[i] = BN_new()))
            return 0;
    return 1;
}

/* Free (clearing: the values are secret). */
static void bp_free(bpoly *p)
{
    if (!p->c)
        return;
    for (size_t i = 0; i < p->m; i++)
        BN_clear_free(p->c[i]);
    dsig_xfree(p->c, 0);
    p->c = NULL;
}

/* Largest coefficient size in bits. */
static int bp_bits(const bpoly *p)
{
    int b = 0;
    for (size_t i = 0; i < p->m; i++) {
        int k = BN_num_bits(p->c[i]);
        b = k > b ? k : b;
    }
    return b;
}

/* BIGNUM from a signed 128-bit value. */
static int bn_set_i128(BIGNUM *r, __int128 v)
{
    unsigned __int128 a = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    if ((a >> 64) == 0) {
        if (!BN_set_word(r, (BN_ULONG)a))
            return 0;
        BN_set_negative(r, v < 0);
        return 1;
    }
    uint8_t be[16];
    for (int i = 15; i >= 0; i--) {
        be[i] = (uint8_t)a;
        a >>= 8;
    }
    if (!BN_bin2bn(be, 16, r))
        return 0;
    BN_set_negative(r, v < 0);
    return 1;
}

/* Signed value of a BIGNUM of at most 63 bits. */
static int64_t bn_get_i64(const BIGNUM *a)
{
    int64_t v = (int64_t)BN_get_word(a);
    return BN_is_negative(a) ? -v : v;
}

/* Full product r[0..2m−1) = a·b of two length-m integer polynomials, Karatsuba down to 16
 * coefficients, with products and sums in ACC: kmul in 128-bit integers, kmul64 in 64-bit ones when
 * the caller has checked that they fit (about twice as fast). Each level adds one bit to the inputs
 * (a0 + a1), which the caller budgets for. Scratch: t64 holds 2m values, tacc holds 2m values. */
#define KMUL(NAME, ACC)                                                                           \
    static void NAME(ACC *r, const int64_t *a, const int64_t *b, size_t m, int64_t *t64, ACC *tacc) \
    {                                                                                             \
        if (m <= 16) {                                                                            \
            for (size_t i = 0; i < 2 * m; i++)                                                    \
                r[i] = 0;                                                                         \
            for (size_t i = 0; i < m; i++)                                                        \
                for (size_t j = 0; j < m; j++)                                                    \
                    r[i + j] += (ACC)a[i] * b[j];                                                 \
            return;                                                                               \
        }                                                                                         \
        size_t h = m / 2;                                                                         \
        int64_t *sa = t64, *sb = t64 + h;                                                         \
        ACC *z1 = tacc;                                                                           \
        NAME(r, a, b, h, t64 + m, tacc + m);             /* a0·b0 → r[0, m) */                    \
        NAME(r + m, a + h, b + h, h, t64 + m, tacc + m); /* a1·b1 → r[m, 2m) */                   \
        for (size_t i = 0; i < h; i++) {                                                          \
            sa[i] = a[i] + a[i + h];                                                              \
            sb[i] = b[i] + b[i + h];                                                              \
        }                                                                                         \
        NAME(z1, sa, sb, h, t64 + m, tacc + m);                                                   \
        for (size_t i = 0; i < m; i++)                                                            \
            z1[i] -= r[i] + r[m + i];                                                             \
        for (size_t i = 0; i < m; i++)                                                            \
            r[h + i] += z1[i];                                                                    \
    }
KMUL(kmul, __int128)
KMUL(kmul64, int64_t)
#undef KMUL

/* Karatsuba levels kmul uses for m coefficients. */
static int kmul_levels(size_t m)
{
    int l = 0;
    while (m > 16) {
        m >>= 1;
        l++;
    }
    return l;
}

/*
 * The NTRU solver's working memory, allocated once per solve and reused by every level: scratch
 * polynomials of capacity n, used through views of the size at hand (so their BIGNUMs keep their
 * buffers), and integer buffers grown on demand. The tower's loops then allocate almost nothing
 * (allocation was a sixth of key generation). Everything is wiped when freed: the values are secret.
 */
typedef struct solver {
    BN_CTX *ctx;
    BIGNUM *tmp, *tmp2;
    bpoly e, o, sq0, sq1; /* field_norm: the even and odd halves and their squares */
    bpoly x2, gn;         /* lift: F'(x²) and g(−x) */
    bpoly kp, kf;         /* reduce: k and k·f (then k·g) */
    int64_t *i64;         /* products: limbs or operands, n64 entries */
    __int128 *i128;       /* products: results and Karatsuba scratch, n128 entries */
    size_t n64, n128;
    double *dbl;          /* reduce: 8 doubles per coefficient */
    int64_t *k;           /* reduce: the rounded quotients */
} solver;

/* The first m coefficients of p (m ≤ its capacity). */
static bpoly view(const bpoly *p, size_t m)
{
    bpoly v = { p->c, m };
    return v;
}

/* sv->i64 and sv->i128 with room for at least n64 and n128 entries (contents not kept). */
static int scratch(solver *sv, size_t n64, size_t n128)
{
    if (n64 > sv->n64) {
        dsig_xfree(sv->i64, sv->n64 * sizeof *sv->i64);
        sv->i64 = dsig_malloc(n64 * sizeof *sv->i64);
        sv->n64 = sv->i64 ? n64 : 0;
    }
    if (n128 > sv->n128) {
        dsig_xfree(sv->i128, sv->n128 * sizeof *sv->i128);
        sv->i128 = dsig_malloc(n128 * sizeof *sv->i128);
        sv->n128 = sv->i128 ? n128 : 0;
    }
    return sv->i64 && sv->i128;
}

/* Working memory for polynomials of up to n coefficients; 0 on allocation failure (solver_free
 * still works). */
static int solver_init(solver *sv, size_t n)
{
    memset(sv, 0, sizeof *sv);
    sv->ctx = BN_CTX_new();
    sv->tmp = BN_new();
    sv->tmp2 = BN_new();
    sv->dbl = dsig_malloc(8 * n * sizeof *sv->dbl);
    sv->k = dsig_malloc(n * sizeof *sv->k);
    return sv->ctx && sv->tmp && sv->tmp2 && sv->dbl && sv->k && bp_init(&sv->e, n / 2) &&
           bp_init(&sv->o, n / 2) && bp_init(&sv->sq0, n / 2) && bp_init(&sv->sq1, n / 2) &&
           bp_init(&sv->x2, n) && bp_init(&sv->gn, n) && bp_init(&sv->kp, n) && bp_init(&sv->kf, n) &&
           scratch(sv, 8 * n, 4 * n);
}

static void solver_free(solver *sv, size_t n)
{
    bpoly *all[] = { &sv->e, &sv->o, &sv->sq0, &sv->sq1, &sv->x2, &sv->gn, &sv->kp, &sv->kf };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_free(all[i]);
    dsig_xfree(sv->i64, sv->n64 * sizeof *sv->i64);
    dsig_xfree(sv->i128, sv->n128 * sizeof *sv->i128);
    dsig_xfree(sv->dbl, sv->dbl ? 8 * n * sizeof *sv->dbl : 0);
    dsig_xfree(sv->k, sv->k ? n * sizeof *sv->k : 0);
    BN_clear_free(sv->tmp);
    BN_clear_free(sv->tmp2);
    BN_CTX_free(sv->ctx);
}

/* Limb size of the multi-limb product: 50-bit limbs keep every Karatsuba sum (≤ 5 levels) and
 * every accumulated product (≤ 2·min(A,B)·m·2^100 for m ≤ 1024) inside 127 bits. */
#define LIMB_BITS 50

/* Split every coefficient of p into `count` signed 50-bit limbs: out[j·m + i] = sign·limb_j(|p_i|). */
static int bp_split_limbs(int64_t *out, const bpoly *p, int count)
{
    size_t m = p->m, blen = (size_t)count * LIMB_BITS / 8 + 16;
    uint8_t *buf = dsig_malloc(blen);
    if (!buf)
        return 0;
    for (size_t i = 0; i < m; i++) {
        memset(buf, 0, blen);
        if (BN_bn2lebinpad(p->c[i], buf, (int)(blen - 8)) < 0) {
            dsig_xfree(buf, blen);
            return 0;
        }
        int64_t sg = BN_is_negative(p->c[i]) ? -1 : 1;
        for (int j = 0; j < count; j++) {
            size_t bit = (size_t)j * LIMB_BITS, byte = bit / 8;
            uint64_t w = 0;
            for (int k = 7; k >= 0; k--)
                w = (w << 8) | buf[byte + (size_t)k];
            out[(size_t)j * m + i] = sg * (int64_t)((w >> (bit % 8)) & ((UINT64_C(1) << LIMB_BITS) - 1));
        }
    }
    dsig_xfree(buf, blen);
    return 1;
}

/* r = a·b mod (x^m + 1) for large coefficients: both operands cut into 50-bit limb polynomials,
 * every pair multiplied with the 128-bit Karatsuba, partial products recombined in BIGNUM. */
static int bp_mul_limbs(bpoly *r, const bpoly *a, const bpoly *b, int ba, int bb, solver *sv)
{
    size_t m = a->m;
    int A = (ba + LIMB_BITS - 1) / LIMB_BITS, B = (bb + LIMB_BITS - 1) / LIMB_BITS, S;
    A = A ? A : 1;
    B = B ? B : 1;
    S = A + B - 1;
    if (!scratch(sv, ((size_t)A + (size_t)B + 2) * m, ((size_t)S * 2 + 4) * m))
        return 0;
    int64_t *al = sv->i64, *bl = al + (size_t)A * m, *s64 = bl + (size_t)B * m;
    __int128 *acc = sv->i128, *prod = acc + (size_t)S * 2 * m, *s128 = prod + 2 * m;
    memset(acc, 0, (size_t)S * 2 * m * sizeof *acc);
    int ok = bp_split_limbs(al, a, A) && bp_split_limbs(bl, b, B);
    for (int j = 0; ok && j < A; j++) {
        for (int k = 0; k < B; k++) {
            kmul(prod, al + (size_t)j * m, bl + (size_t)k * m, m, s64, s128);
            __int128 *dst = acc + (size_t)(j + k) * 2 * m;
            for (size_t i = 0; i < 2 * m; i++)
                dst[i] += prod[i];
        }
    }
    for (size_t i = 0; ok && i < m; i++) {
        BN_zero(r->c[i]);
        for (int sidx = S - 1; ok && sidx >= 0; sidx--) {
            const __int128 *src = acc + (size_t)sidx * 2 * m;
            ok = BN_lshift(r->c[i], r->c[i], LIMB_BITS) && bn_set_i128(sv->tmp2, src[i] - src[i + m]) &&
                 BN_add(r->c[i], r->c[i], sv->tmp2);
        }
    }
    return ok;
}

/* r = a·b mod (x^m + 1); r must not alias a or b. ba, bb: the operands' bp_bits, or −1 to compute
 * them here (reduce multiplies by the same f and g many times). */
static int bp_mul(bpoly *r, const bpoly *a, const bpoly *b, int ba, int bb, solver *sv)
{
    size_t m = a->m;
    int la = 0;
    while (((size_t)1 << la) < m)
        la++;
    ba = ba < 0 ? bp_bits(a) : ba;
    bb = bb < 0 ? bp_bits(b) : bb;
    int kl = kmul_levels(m);
    if (ba + kl <= 62 && bb + kl <= 62 && ba + bb + 2 * kl + la + 1 <= 126) {
        /* Small operands: exact Karatsuba in 64-bit integers if every product and sum fits, else in
         * 128-bit ones. */
        int fits64 = ba + bb + 2 * kl + la + 1 <= 62;
        if (!scratch(sv, 8 * m, 4 * m))
            return 0;
        int64_t *x = sv->i64, *y = x + m, *t64 = x + 2 * m, *acc64 = x + 4 * m;
        __int128 *acc = sv->i128;
        for (size_t i = 0; i < m; i++) {
            x[i] = bn_get_i64(a->c[i]);
            y[i] = bn_get_i64(b->c[i]);
        }
        if (fits64) {
            kmul64(acc64, x, y, m, t64, acc64 + 2 * m);
            for (size_t i = 0; i < m; i++)
                acc[i] = acc64[i] - acc64[i + m];
        } else {
            kmul(acc, x, y, m, t64, acc + 2 * m);
            for (size_t i = 0; i < m; i++)
                acc[i] -= acc[i + m];
        }
        int ok = 1;
        for (size_t i = 0; i < m && ok; i++)
            ok = bn_set_i128(r->c[i], acc[i]);
        return ok;
    }
    if (m >= 32)
        return bp_mul_limbs(r, a, b, ba, bb, sv);
    BN_CTX_start(sv->ctx);
    BIGNUM *t = BN_CTX_get(sv->ctx);
    int ok = t != NULL;
    for (size_t i = 0; ok && i < m; i++)
        BN_zero(r->c[i]);
    for (size_t i = 0; ok && i < m; i++) {
        if (BN_is_zero(a->c[i]))
            continue;
        for (size_t j = 0; ok && j < m; j++) {
            ok = BN_mul(t, a->c[i], b->c[j], sv->ctx);
            if (ok)
                ok = i + j < m ? BN_add(r->c[i + j], r->c[i + j], t)
                               : BN_sub(r->c[i + j - m], r->c[i + j - m], t);
        }
    }
    BN_CTX_end(sv->ctx);
    return ok;
}

/* @spec §3.6.1 field norm N(f) = f0² − x·f1² where f(x) = f0(x²) + x·f1(x²); out has m/2 slots. */
static int field_norm(bpoly *out, const bpoly *f, solver *sv)
{
    size_t h = f->m / 2;
    bpoly e = view(&sv->e, h), o = view(&sv->o, h), a = view(&sv->sq0, h), b = view(&sv->sq1, h);
    int ok = 1;
    for (size_t i = 0; ok && i < h; i++)
        ok = BN_copy(e.c[i], f->c[2 * i]) && BN_copy(o.c[i], f->c[2 * i + 1]);
    ok = ok && bp_mul(&a, &e, &e, -1, -1, sv) && bp_mul(&b, &o, &o, -1, -1, sv);
    /* (x·b)[0] = −b[h−1], (x·b)[i] = b[i−1]. */
    ok = ok && BN_add(out->c[0], a.c[0], b.c[h - 1]);
    for (size_t i = 1; ok && i < h; i++)
        ok = BN_sub(out->c[i], a.c[i], b.c[i - 1]);
    return ok;
}

/* out = F'(x²)·g(−x) (size 2·F'.m). */
static int lift(bpoly *out, const bpoly *Fp, const bpoly *g, solver *sv)
{
    size_t m = g->m;
    bpoly x2 = view(&sv->x2, m), gn = view(&sv->gn, m);
    int ok = 1;
    for (size_t i = 0; ok && i < m / 2; i++) {
        ok = BN_copy(x2.c[2 * i], Fp->c[i]) != NULL;
        BN_zero(x2.c[2 * i + 1]);
    }
    for (size_t i = 0; ok && i < m; i++) {
        ok = BN_copy(gn.c[i], g->c[i]) != NULL;
        if (ok && (i & 1))
            BN_set_negative(gn.c[i], !BN_is_negative(gn.c[i]) && !BN_is_zero(gn.c[i]));
    }
    return ok && bp_mul(out, &x2, &gn, -1, -1, sv);
}

/* Coefficients >> sh (toward −∞; exact for |value| < 2^53 after the shift) as doubles. */
static int bp_to_double(double *out, const bpoly *p, int sh, BIGNUM *t)
{
    for (size_t i = 0; i < p->m; i++) {
        if (!BN_rshift(t, p->c[i], sh))
            return 0;
        int64_t v = (int64_t)BN_get_word(t);
        out[i] = (double)(BN_is_negative(t) ? -v : v);
    }
    return 1;
}

/* @spec §3.8.2 Algorithm 7 Reduce: subtract ⌊(F·f* + G·g*)/(f·f* + g·g*)⌉·(f, g) until F, G stop
 * shrinking, working on the top 53 bits of every value. Unlike the specification's loop, which takes
 * k of magnitude ~1 at the scale 2^(Size−size) and so removes about one bit per round, each round
 * here takes up to 30 bits of k (scale 2^(Size−size−t), t ≤ 30): the same fixed point, ~25× fewer
 * rounds. The last rounds (Size − size < 30) are the exact Babai rounding. m ≥ 2. */
static int reduce(bpoly *F, bpoly *G, const bpoly *f, const bpoly *g, unsigned logm, solver *sv)
{
    size_t m = f->m;
    int sf = bp_bits(f), sg = bp_bits(g), ok = 1, size = sf > sg ? sf : sg;
    size = size > 53 ? size : 53;
    int64_t *k = sv->k;
    bpoly kp = view(&sv->kp, m), t = view(&sv->kf, m);
    BIGNUM *tmp = sv->tmp;
    double *fa = sv->dbl, *ga = fa + m, *Fa = fa + 2 * m, *Ga = fa + 3 * m, *w = fa + 4 * m;
    ok = bp_to_double(fa, f, size - 53, tmp) && bp_to_double(ga, g, size - 53, tmp);
    for (int iter = 0; ok; iter++) {
        int Size = bp_bits(F), sG = bp_bits(G);
        Size = Size > sG ? Size : sG;
        Size = Size > 53 ? Size : 53;
        if (Size < size || iter > 2000)
            break;
        int sh = Size - size < 30 ? Size - size : 30;
        ok = bp_to_double(Fa, F, Size - 53, tmp) && bp_to_double(Ga, G, Size - 53, tmp);
        if (!ok || !falcon_babai_round(k, Fa, Ga, fa, ga, logm, sh, w))
            break;
        uint64_t kmax = 0;
        for (size_t i = 0; ok && i < m; i++) {
            ok = bn_set_i128(kp.c[i], k[i]);
            kmax |= k[i] < 0 ? (uint64_t)0 - (uint64_t)k[i] : (uint64_t)k[i];
        }
        int sk = kmax ? 64 - __builtin_clzll(kmax) : 0; /* ≥ bp_bits(kp): a safe bound */
        ok = ok && bp_mul(&t, &kp, f, sk, sf, sv);
        for (size_t i = 0; ok && i < m; i++)
            ok = BN_lshift(tmp, t.c[i], Size - size - sh) && BN_sub(F->c[i], F->c[i], tmp);
        ok = ok && bp_mul(&t, &kp, g, sk, sg, sv);
        for (size_t i = 0; ok && i < m; i++)
            ok = BN_lshift(tmp, t.c[i], Size - size - sh) && BN_sub(G->c[i], G->c[i], tmp);
    }
    return ok;
}

/* @spec §3.8.2 Algorithm 6 NTRUSolve, iteratively: the tower of field norms down to n = 1, the
 * extended GCD there, then lifting and reducing back up. Returns 1 with F, G set (|·| ≤ 127), 0 if
 * (f, g) has no usable solution (the caller samples again), −1 on allocation failure. */
static int ntru_solve(int8_t *Fo, int8_t *Go, const int8_t *f, const int8_t *g, unsigned logn)
{
    size_t n = (size_t)1 << logn;
    bpoly ft[FALCON_MAX_LOGN + 1], gt[FALCON_MAX_LOGN + 1];
    /* (F, G) of the level below and of this level, swapped after each level */
    bpoly Fc[2] = { { 0 }, { 0 } }, Gc[2] = { { 0 }, { 0 } };
    solver sv;
    BIGNUM *u = BN_new(), *v = BN_new(), *t = BN_new(), *a = BN_new();
    int ret = -1;
    memset(ft, 0, sizeof ft);
    memset(gt, 0, sizeof gt);
    if (!solver_init(&sv, n) || !u || !v || !t || !a || !bp_init(&Fc[0], n) || !bp_init(&Gc[0], n) ||
        !bp_init(&Fc[1], n) || !bp_init(&Gc[1], n))
        goto done;
    BN_CTX *ctx = sv.ctx;
    if (!bp_init(&ft[0], n) || !bp_init(&gt[0], n))
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (!BN_set_word(ft[0].c[i], (BN_ULONG)(f[i] < 0 ? -f[i] : f[i])) ||
            !BN_set_word(gt[0].c[i], (BN_ULONG)(g[i] < 0 ? -g[i] : g[i])))
            goto done;
        BN_set_negative(ft[0].c[i], f[i] < 0);
        BN_set_negative(gt[0].c[i], g[i] < 0);
    }
    for (unsigned d = 1; d <= logn; d++) {
        if (!bp_init(&ft[d], n >> d) || !bp_init(&gt[d], n >> d) || !field_norm(&ft[d], &ft[d - 1], &sv) ||
            !field_norm(&gt[d], &gt[d - 1], &sv))
            goto done;
    }
    /* n = 1: u·f − v·g = 1 → (F, G) = (v·q, u·q), with u = f^-1 mod |g|. The inverse exists iff
     * gcd(f, g) = 1, so its absence is the gcd test: no solution, the caller samples again. (A
     * separate BN_gcd, OpenSSL 3's constant-time binary GCD, cost a fifth of key generation.) */
    const BIGNUM *fd = ft[logn].c[0], *gd = gt[logn].c[0];
    if (!BN_copy(a, gd))
        goto done;
    BN_set_negative(a, 0);
    if (BN_is_zero(a)) {
        ret = 0;
        goto done;
    }
    if (!BN_nnmod(t, fd, a, ctx))
        goto done;
    ERR_set_mark();
    if (!BN_mod_inverse(u, t, a, ctx)) {
        unsigned long e = ERR_peek_last_error();
        ERR_pop_to_mark();
        if (ERR_GET_LIB(e) == ERR_LIB_BN && ERR_GET_REASON(e) == BN_R_NO_INVERSE)
            ret = 0;
        goto done;
    }
    ERR_pop_to_mark();
    if (!BN_mul(t, u, fd, ctx) || !BN_sub_word(t, 1) || !BN_div(v, NULL, t, gd, ctx))
        goto done;
    if (!BN_mul_word(v, FALCON_Q) || !BN_mul_word(u, FALCON_Q) || !BN_copy(Fc[0].c[0], v) ||
        !BN_copy(Gc[0].c[0], u))
        goto done;
    unsigned cur = 0; /* Fc[cur], Gc[cur]: the solution of the level below */
    for (unsigned d = logn; d-- > 0;) {
        size_t m = n >> d;
        bpoly F = view(&Fc[cur], m / 2), G = view(&Gc[cur], m / 2);
        bpoly F2 = view(&Fc[cur ^ 1], m), G2 = view(&Gc[cur ^ 1], m);
        if (!lift(&F2, &F, &gt[d], &sv) || !lift(&G2, &G, &ft[d], &sv) ||
            !reduce(&F2, &G2, &ft[d], &gt[d], logn - d, &sv))
            goto done;
        cur ^= 1;
        bp_free(&ft[d + 1]);
        bp_free(&gt[d + 1]);
    }
    ret = 1;
    for (size_t i = 0; i < n; i++) {
        if (BN_num_bits(Fc[cur].c[i]) > 7 || BN_num_bits(Gc[cur].c[i]) > 7) {
            ret = 0;
            break;
        }
        Fo[i] = (int8_t)bn_get_i64(Fc[cur].c[i]);
        Go[i] = (int8_t)bn_get_i64(Gc[cur].c[i]);
    }
done:
    for (unsigned d = 0; d <= FALCON_MAX_LOGN; d++) {
        bp_free(&ft[d]);
        bp_free(&gt[d]);
    }
    for (unsigned i = 0; i < 2; i++) {
        bp_free(&Fc[i]);
        bp_free(&Gc[i]);
    }
    solver_free(&sv, n);
    BN_clear_free(u);
    BN_clear_free(v);
    BN_clear_free(t);
    BN_clear_free(a);
    return ret;
}

/* Exact check fG − gF = q in Z[x]/(x^n + 1), with the 64-bit Karatsuba: the coefficients have at
 * most 8 bits, so every product and sum (below 2^(8 + 8 + 2·6 + 10 + 1)) is exact. 1 if it holds, 0 if
 * not, −1 on allocation failure. */
static int ntru_check(const int8_t *f, const int8_t *g, const int8_t *F, const int8_t *G,
                      unsigned logn)
{
    size_t n = (size_t)1 << logn;
    int64_t *x = dsig_malloc(12 * n * sizeof *x);
    if (!x)
        return -1;
    int64_t *y = x + n, *t64 = x + 2 * n, *r = x + 4 * n, *p = x + 6 * n, *tacc = x + 8 * n;
    for (size_t i = 0; i < n; i++) {
        x[i] = f[i];
        y[i] = G[i];
    }
    kmul64(r, x, y, n, t64, tacc); /* f·G, full product */
    for (size_t i = 0; i < n; i++) {
        x[i] = g[i];
        y[i] = F[i];
    }
    kmul64(p, x, y, n, t64, tacc); /* g·F */
    int bad = 0;
    for (size_t k = 0; k < n; k++) /* mod x^n + 1: coefficient k − coefficient k + n */
        bad |= (r[k] - r[k + n]) - (p[k] - p[k + n]) != (k == 0 ? FALCON_Q : 0);
    dsig_xfree(x, 12 * n * sizeof *x);
    return !bad;
}

/* @spec §3.8.2 Algorithm 4 KeyGen / Algorithm 5 NTRUGen with the reference's rejection order. */
int falcon_keygen(dsig_keccak *rng, int8_t *f, int8_t *g, int8_t *F, int8_t *G, uint16_t *h,
                  unsigned logn)
{
    return falcon_keygen_skip(rng, f, g, F, G, h, logn, 0);
}

/* falcon_keygen, discarding the first `skip` otherwise acceptable candidates. */
int falcon_keygen_skip(dsig_keccak *rng, int8_t *f, int8_t *g, int8_t *F, int8_t *G, uint16_t *h,
                       unsigned logn, unsigned skip)
{
    size_t n = (size_t)1 << logn;
    int lim = logn == 9 ? 32 : 16; /* f, g must fit the 6 / 5-bit private key encoding */
    for (int attempt = 0; attempt < 1000; attempt++) {
        poly_small_gauss(rng, f, logn);
        poly_small_gauss(rng, g, logn);
        int bad = 0;
        uint32_t norm = 0;
        for (size_t u = 0; u < n; u++) {
            bad |= f[u] >= lim || f[u] <= -lim || g[u] >= lim || g[u] <= -lim;
            norm += (uint32_t)(f[u] * f[u] + g[u] * g[u]);
        }
        if (bad || norm >= 16823)
            continue;
        if (!falcon_keygen_gs_ok(f, g, logn))
            continue;
        if (falcon_compute_public(h, f, g, logn) != DSIG_OK) {
            dsig_clear_error();
            continue;
        }
        int r = ntru_solve(F, G, f, g, logn);
        if (r < 0)
            return dsig_fail(DSIG_E_NOMEM, "Falcon key generation: out of memory (NTRU solver)");
        if (r == 0)
            continue;
        r = ntru_check(f, g, F, G, logn);
        if (r < 0)
            return dsig_fail(DSIG_E_NOMEM, "Falcon key generation: out of memory (NTRU check)");
        if (r == 0)
            return dsig_fail(DSIG_E_INTERNAL, "Falcon key generation: NTRU equation check failed");
        if (skip > 0) {
            skip--;
            continue;
        }
        return DSIG_OK;
    }
    return dsig_fail(DSIG_E_INTERNAL, "Falcon key generation: no key after 1000 attempts");
}
