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

#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "pq/falcon/falcon_tables.h"

/* ---- f, g sampling ------------------------------------------------------------------------------ */

/* 64-bit little-endian word from the key generation PRNG. */
static uint64_t rng_u64(dsig_keccak *rng)
{
    uint8_t b[8];
    dsig_keccak_squeeze(rng, b, sizeof b);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

/* One coefficient of D_{Z, σ_fg}: 2^(10−logn) samples of the n = 1024 distribution summed (variances
 * add: σ_512² = 2·σ_1024²). Constant time: table scans with masks. */
static int mkgauss(dsig_keccak *rng, unsigned logn)
{
    int val = 0;
    for (unsigned u = 0; u < (1u << (10 - logn)); u++) {
        uint64_t r = rng_u64(rng);
        uint32_t neg = (uint32_t)(r >> 63);
        r &= ~((uint64_t)1 << 63);
        uint32_t f = (uint32_t)((r - falcon_keygen_gauss[0]) >> 63); /* 1: the sample is 0 */
        uint32_t v = 0;
        r = rng_u64(rng);
        r &= ~((uint64_t)1 << 63);
        for (uint32_t k = 1; k < 27; k++) {
            uint32_t t = (uint32_t)((r - falcon_keygen_gauss[k]) >> 63) ^ 1u; /* r ≥ table[k] */
            v |= k & -(t & (f ^ 1u));
            f |= t;
        }
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
 * coefficients. Each level adds one bit to the inputs (a0 + a1), which the caller budgets for.
 * Scratch: t64 holds 2m values, t128 holds 2m values. */
static void kmul(__int128 *r, const int64_t *a, const int64_t *b, size_t m, int64_t *t64,
                 __int128 *t128)
{
    if (m <= 16) {
        for (size_t i = 0; i < 2 * m; i++)
            r[i] = 0;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++)
                r[i + j] += (__int128)a[i] * b[j];
        return;
    }
    size_t h = m / 2;
    int64_t *sa = t64, *sb = t64 + h;
    __int128 *z1 = t128;
    kmul(r, a, b, h, t64 + m, t128 + m);             /* a0·b0 → r[0, m) */
    kmul(r + m, a + h, b + h, h, t64 + m, t128 + m); /* a1·b1 → r[m, 2m) */
    for (size_t i = 0; i < h; i++) {
        sa[i] = a[i] + a[i + h];
        sb[i] = b[i] + b[i + h];
    }
    kmul(z1, sa, sb, h, t64 + m, t128 + m);
    for (size_t i = 0; i < m; i++)
        z1[i] -= r[i] + r[m + i];
    for (size_t i = 0; i < m; i++)
        r[h + i] += z1[i];
}

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
static int bp_mul_limbs(bpoly *r, const bpoly *a, const bpoly *b, int ba, int bb)
{
    size_t m = a->m;
    int A = (ba + LIMB_BITS - 1) / LIMB_BITS, B = (bb + LIMB_BITS - 1) / LIMB_BITS, S;
    A = A ? A : 1;
    B = B ? B : 1;
    S = A + B - 1;
    size_t n64 = ((size_t)A + (size_t)B + 2) * m, n128 = ((size_t)S * 2 + 4) * m;
    int64_t *l64 = dsig_malloc(n64 * sizeof *l64);
    __int128 *l128 = dsig_calloc(n128, sizeof *l128);
    BIGNUM *t = BN_new();
    int ok = l64 && l128 && t;
    int64_t *al = l64, *bl = l64 + (size_t)A * m, *s64 = bl + (size_t)B * m;
    __int128 *acc = l128, *prod = l128 + (size_t)S * 2 * m, *s128 = prod + 2 * m;
    ok = ok && bp_split_limbs(al, a, A) && bp_split_limbs(bl, b, B);
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
            ok = BN_lshift(r->c[i], r->c[i], LIMB_BITS) && bn_set_i128(t, src[i] - src[i + m]) &&
                 BN_add(r->c[i], r->c[i], t);
        }
    }
    dsig_xfree(l64, l64 ? n64 * sizeof *l64 : 0);
    dsig_xfree(l128, l128 ? n128 * sizeof *l128 : 0);
    BN_clear_free(t);
    return ok;
}

/* r = a·b mod (x^m + 1); r must not alias a or b. */
static int bp_mul(bpoly *r, const bpoly *a, const bpoly *b, BN_CTX *ctx)
{
    size_t m = a->m;
    int la = 0;
    while (((size_t)1 << la) < m)
        la++;
    int ba = bp_bits(a), bb = bp_bits(b), kl = kmul_levels(m);
    if (ba + kl <= 62 && bb + kl <= 62 && ba + bb + 2 * kl + la + 1 <= 126) {
        /* Small operands: exact 128-bit Karatsuba. */
        int64_t *x = dsig_malloc(4 * m * sizeof *x);
        __int128 *acc = dsig_malloc(4 * m * sizeof *acc);
        int ok = x && acc;
        if (ok) {
            int64_t *y = x + m;
            for (size_t i = 0; i < m; i++) {
                x[i] = bn_get_i64(a->c[i]);
                y[i] = bn_get_i64(b->c[i]);
            }
            kmul(acc, x, y, m, x + 2 * m, acc + 2 * m);
            for (size_t i = 0; i < m && ok; i++)
                ok = bn_set_i128(r->c[i], acc[i] - acc[i + m]);
        }
        dsig_xfree(x, x ? 4 * m * sizeof *x : 0);
        dsig_xfree(acc, acc ? 4 * m * sizeof *acc : 0);
        return ok;
    }
    if (m >= 32)
        return bp_mul_limbs(r, a, b, ba, bb);
    BN_CTX_start(ctx);
    BIGNUM *t = BN_CTX_get(ctx);
    int ok = t != NULL;
    for (size_t i = 0; ok && i < m; i++)
        BN_zero(r->c[i]);
    for (size_t i = 0; ok && i < m; i++) {
        if (BN_is_zero(a->c[i]))
            continue;
        for (size_t j = 0; ok && j < m; j++) {
            ok = BN_mul(t, a->c[i], b->c[j], ctx);
            if (ok)
                ok = i + j < m ? BN_add(r->c[i + j], r->c[i + j], t)
                               : BN_sub(r->c[i + j - m], r->c[i + j - m], t);
        }
    }
    BN_CTX_end(ctx);
    return ok;
}

/* @spec §3.6.1 field norm N(f) = f0² − x·f1² where f(x) = f0(x²) + x·f1(x²); out has m/2 slots. */
static int field_norm(bpoly *out, const bpoly *f, BN_CTX *ctx)
{
    size_t h = f->m / 2;
    bpoly e = { 0 }, o = { 0 }, a = { 0 }, b = { 0 };
    int ok = bp_init(&e, h) && bp_init(&o, h) && bp_init(&a, h) && bp_init(&b, h);
    for (size_t i = 0; ok && i < h; i++)
        ok = BN_copy(e.c[i], f->c[2 * i]) && BN_copy(o.c[i], f->c[2 * i + 1]);
    ok = ok && bp_mul(&a, &e, &e, ctx) && bp_mul(&b, &o, &o, ctx);
    /* (x·b)[0] = −b[h−1], (x·b)[i] = b[i−1]. */
    ok = ok && BN_add(out->c[0], a.c[0], b.c[h - 1]);
    for (size_t i = 1; ok && i < h; i++)
        ok = BN_sub(out->c[i], a.c[i], b.c[i - 1]);
    bp_free(&e);
    bp_free(&o);
    bp_free(&a);
    bp_free(&b);
    return ok;
}

/* out = F'(x²)·g(−x) (size 2·F'.m). */
static int lift(bpoly *out, const bpoly *Fp, const bpoly *g, BN_CTX *ctx)
{
    size_t m = g->m;
    bpoly x2 = { 0 }, gn = { 0 };
    int ok = bp_init(&x2, m) && bp_init(&gn, m);
    for (size_t i = 0; ok && i < m / 2; i++)
        ok = BN_copy(x2.c[2 * i], Fp->c[i]) != NULL;
    for (size_t i = 0; ok && i < m; i++) {
        ok = BN_copy(gn.c[i], g->c[i]) != NULL;
        if (ok && (i & 1))
            BN_set_negative(gn.c[i], !BN_is_negative(gn.c[i]) && !BN_is_zero(gn.c[i]));
    }
    ok = ok && bp_mul(out, &x2, &gn, ctx);
    bp_free(&x2);
    bp_free(&gn);
    return ok;
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
static int reduce(bpoly *F, bpoly *G, const bpoly *f, const bpoly *g, unsigned logm, BN_CTX *ctx)
{
    size_t m = f->m;
    int size = bp_bits(f), sg = bp_bits(g), ok = 1;
    size = size > sg ? size : sg;
    size = size > 53 ? size : 53;
    double *buf = dsig_malloc(8 * m * sizeof *buf);
    int64_t *k = dsig_malloc(m * sizeof *k);
    bpoly kp = { 0 }, t = { 0 };
    BIGNUM *tmp = BN_new();
    if (!buf || !k || !tmp || !bp_init(&kp, m) || !bp_init(&t, m)) {
        ok = 0;
        goto done;
    }
    double *fa = buf, *ga = buf + m, *Fa = buf + 2 * m, *Ga = buf + 3 * m, *w = buf + 4 * m;
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
        for (size_t i = 0; ok && i < m; i++)
            ok = bn_set_i128(kp.c[i], k[i]);
        ok = ok && bp_mul(&t, &kp, f, ctx);
        for (size_t i = 0; ok && i < m; i++)
            ok = BN_lshift(tmp, t.c[i], Size - size - sh) && BN_sub(F->c[i], F->c[i], tmp);
        ok = ok && bp_mul(&t, &kp, g, ctx);
        for (size_t i = 0; ok && i < m; i++)
            ok = BN_lshift(tmp, t.c[i], Size - size - sh) && BN_sub(G->c[i], G->c[i], tmp);
    }
done:
    dsig_xfree(buf, buf ? 8 * m * sizeof *buf : 0);
    dsig_xfree(k, k ? m * sizeof *k : 0);
    bp_free(&kp);
    bp_free(&t);
    BN_clear_free(tmp);
    return ok;
}

/* @spec §3.8.2 Algorithm 6 NTRUSolve, iteratively: the tower of field norms down to n = 1, the
 * extended GCD there, then lifting and reducing back up. Returns 1 with F, G set (|·| ≤ 127), 0 if
 * (f, g) has no usable solution (the caller samples again), −1 on allocation failure. */
static int ntru_solve(int8_t *Fo, int8_t *Go, const int8_t *f, const int8_t *g, unsigned logn)
{
    bpoly ft[FALCON_MAX_LOGN + 1], gt[FALCON_MAX_LOGN + 1], F = { 0 }, G = { 0 }, F2 = { 0 },
                                                             G2 = { 0 };
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *u = BN_new(), *v = BN_new(), *t = BN_new(), *a = BN_new();
    int ret = -1;
    memset(ft, 0, sizeof ft);
    memset(gt, 0, sizeof gt);
    if (!ctx || !u || !v || !t || !a)
        goto done;
    size_t n = (size_t)1 << logn;
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
        BN_CTX_start(ctx);
        int ok = bp_init(&ft[d], n >> d) && bp_init(&gt[d], n >> d) &&
                 field_norm(&ft[d], &ft[d - 1], ctx) && field_norm(&gt[d], &gt[d - 1], ctx);
        BN_CTX_end(ctx);
        if (!ok)
            goto done;
    }
    /* n = 1: u·f − v·g = 1 → (F, G) = (v·q, u·q). */
    const BIGNUM *fd = ft[logn].c[0], *gd = gt[logn].c[0];
    if (!BN_gcd(t, fd, gd, ctx))
        goto done;
    if (!BN_is_one(t)) {
        ret = 0;
        goto done;
    }
    if (!BN_copy(a, gd))
        goto done;
    BN_set_negative(a, 0);
    if (!BN_nnmod(t, fd, a, ctx) || !BN_mod_inverse(u, t, a, ctx))
        goto done;
    if (!BN_mul(t, u, fd, ctx) || !BN_sub_word(t, 1) || !BN_div(v, NULL, t, gd, ctx))
        goto done;
    if (!bp_init(&F, 1) || !bp_init(&G, 1) || !BN_mul_word(v, FALCON_Q) || !BN_mul_word(u, FALCON_Q) ||
        !BN_copy(F.c[0], v) || !BN_copy(G.c[0], u))
        goto done;
    for (unsigned d = logn; d-- > 0;) {
        size_t m = n >> d;
        BN_CTX_start(ctx);
        int ok = bp_init(&F2, m) && bp_init(&G2, m) && lift(&F2, &F, &gt[d], ctx) &&
                 lift(&G2, &G, &ft[d], ctx) && reduce(&F2, &G2, &ft[d], &gt[d], logn - d, ctx);
        BN_CTX_end(ctx);
        bp_free(&F);
        bp_free(&G);
        F = F2;
        G = G2;
        F2.c = G2.c = NULL;
        if (!ok)
            goto done;
        bp_free(&ft[d + 1]);
        bp_free(&gt[d + 1]);
    }
    ret = 1;
    for (size_t i = 0; i < n; i++) {
        if (BN_num_bits(F.c[i]) > 7 || BN_num_bits(G.c[i]) > 7) {
            ret = 0;
            break;
        }
        Fo[i] = (int8_t)bn_get_i64(F.c[i]);
        Go[i] = (int8_t)bn_get_i64(G.c[i]);
    }
done:
    for (unsigned d = 0; d <= FALCON_MAX_LOGN; d++) {
        bp_free(&ft[d]);
        bp_free(&gt[d]);
    }
    bp_free(&F);
    bp_free(&G);
    bp_free(&F2);
    bp_free(&G2);
    BN_clear_free(u);
    BN_clear_free(v);
    BN_clear_free(t);
    BN_clear_free(a);
    BN_CTX_free(ctx);
    return ret;
}

/* Exact check fG − gF = q in Z[x]/(x^n + 1) (small coefficients: 32-bit sums suffice). */
static int ntru_check(const int8_t *f, const int8_t *g, const int8_t *F, const int8_t *G,
                      unsigned logn)
{
    size_t n = (size_t)1 << logn;
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        int32_t s = 0;
        for (size_t i = 0; i < n; i++) {
            size_t j = (k + n - i) & (n - 1);
            int32_t t = (int32_t)f[i] * G[j] - (int32_t)g[i] * F[j];
            s += j <= k ? t : -t;
        }
        bad |= s != (k == 0 ? (int32_t)FALCON_Q : 0);
    }
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
        if (!ntru_check(f, g, F, G, logn))
            return dsig_fail(DSIG_E_INTERNAL, "Falcon key generation: NTRU equation check failed");
        if (skip > 0) {
            skip--;
            continue;
        }
        return DSIG_OK;
    }
    return dsig_fail(DSIG_E_INTERNAL, "Falcon key generation: no key after 1000 attempts");
}
