/*
 * src/classic/regional_ec.c — the curve and key code shared by SM2 (sm2.c) and GOST R 34.10-2012
 * (gost.c), on libgcrypt's EC point API (see regional_ec.h).
 *
 * Key material is kept as fixed-width big-endian bytes (the JWK form) and turned into MPIs per
 * operation; secret scalars are flagged GCRYMPI_FLAG_SECURE, which makes libgcrypt's point
 * multiplication take its constant-time path. Keys are validated on every way in: coordinates below
 * p, the point on the curve and not at infinity, and n·Q = O on the cofactor-4 GOST paramSetA
 * (DSIG_E_POINT); d in [1, n-1] and d·G equal to the public point (DSIG_E_KEY).
 */
#include <string.h>

#include "classic/regional_ec.h"
#include "core/backend.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/rng.h"

const struct rec_curve dsig_rec_sm2 = {&dsig_keytype_sm2, "sm2p256v1", NULL, "sm2p256v1",
                                        "1.2.156.10197.1.301"};
/* The TC26 256-bit sets (RFC 7836 Appendix A.2 / TC26 parameter recommendations; RFC 4357 for the
 * CryptoPro sets that B, C and D reuse). libgcrypt 1.10.1 (Debian 12) names paramSetA
 * "GOST2012-256-A"; later releases also know it as "GOST2012-256-tc26-A". paramSetA is the twisted
 * Edwards curve of TC26, given (and used) here in its Weierstrass form, cofactor 4. */
const struct rec_curve dsig_rec_gost256a = {&dsig_keytype_gost256a, "GOST2012-256-A",
                                            "GOST2012-256-tc26-A",
                                            "id-tc26-gost-3410-2012-256-paramSetA", "1.2.643.7.1.2.1.1.1"};
/* paramSetB = id-GostR3410-2001-CryptoPro-A-ParamSet. */
const struct rec_curve dsig_rec_gost256b = {&dsig_keytype_gost256b, "GOST2001-CryptoPro-A",
                                            "GOST2012-256-tc26-B",
                                            "id-tc26-gost-3410-2012-256-paramSetB", "1.2.643.7.1.2.1.1.2"};
/* paramSetC = id-GostR3410-2001-CryptoPro-B-ParamSet. */
const struct rec_curve dsig_rec_gost256c = {&dsig_keytype_gost256c, "GOST2001-CryptoPro-B",
                                            "GOST2012-256-tc26-C",
                                            "id-tc26-gost-3410-2012-256-paramSetC", "1.2.643.7.1.2.1.1.3"};
/* paramSetD = id-GostR3410-2001-CryptoPro-C-ParamSet. */
const struct rec_curve dsig_rec_gost256d = {&dsig_keytype_gost256d, "GOST2001-CryptoPro-C",
                                            "GOST2012-256-tc26-D",
                                            "id-tc26-gost-3410-2012-256-paramSetD", "1.2.643.7.1.2.1.1.4"};

const struct rec_curve *const dsig_rec_gost_curves[] = {&dsig_rec_gost256a, &dsig_rec_gost256b,
                                                        &dsig_rec_gost256c, &dsig_rec_gost256d, NULL};

/* The curve of a key type (the regional key types only). */
const struct rec_curve *rec_curve_of(const struct dsig_keytype *t)
{
    if (t == &dsig_keytype_sm2)
        return &dsig_rec_sm2;
    for (const struct rec_curve *const *c = dsig_rec_gost_curves; *c; c++)
        if ((*c)->type == t)
            return *c;
    return NULL;
}

gcry_mpi_t rec_mpi(const uint8_t *be, size_t n, int secret)
{
    gcry_mpi_t a = NULL;
    if (gcry_mpi_scan(&a, GCRYMPI_FMT_USG, be, n, NULL))
        return NULL;
    /* libgcrypt asserts when a zero MPI is made secure; zero is never a valid secret anyway. */
    if (secret && gcry_mpi_cmp_ui(a, 0) != 0)
        gcry_mpi_set_flag(a, GCRYMPI_FLAG_SECURE);
    return a;
}

int rec_mpi_out(gcry_mpi_t a, uint8_t *out, size_t n)
{
    uint8_t tmp[2 * REC_BYTES];
    size_t w = 0;
    if (n > sizeof tmp || gcry_mpi_print(GCRYMPI_FMT_USG, tmp, n, &w, a) || w > n) {
        dsig_memzero(tmp, sizeof tmp);
        return dsig_fail(DSIG_E_INTERNAL, "EC integer does not fit in %zu bytes", n);
    }
    memset(out, 0, n - w);
    memcpy(out + (n - w), tmp, w);
    dsig_memzero(tmp, sizeof tmp);
    return DSIG_OK;
}

void rec_ctx_close(struct rec_ctx *c)
{
    gcry_mpi_release(c->p);
    gcry_mpi_release(c->a);
    gcry_mpi_release(c->b);
    gcry_mpi_release(c->n);
    gcry_mpi_point_release(c->G);
    gcry_ctx_release(c->ctx);
    memset(c, 0, sizeof *c);
}

int rec_ctx_open(struct rec_ctx *c, const struct rec_curve *cv, const struct rec_explicit *ep)
{
    memset(c, 0, sizeof *c);
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    gpg_error_t err;
    if (ep) {
        uint8_t g[1 + 2 * REC_BYTES];
        g[0] = 0x04;
        memcpy(g + 1, ep->gx, REC_BYTES);
        memcpy(g + 1 + REC_BYTES, ep->gy, REC_BYTES);
        gcry_sexp_t s = NULL;
        err = gcry_sexp_build(&s, NULL, "(public-key(ecc(p %b)(a %b)(b %b)(g %b)(n %b)(h %d)))",
                              (int)REC_BYTES, ep->p, (int)REC_BYTES, ep->a, (int)REC_BYTES, ep->b,
                              (int)sizeof g, g, (int)REC_BYTES, ep->n, 1);
        if (!err)
            err = gcry_mpi_ec_new(&c->ctx, s, NULL);
        gcry_sexp_release(s);
    } else {
        err = gcry_mpi_ec_new(&c->ctx, NULL, cv->gcry_name);
        if (err && cv->gcry_alt) /* the name differs between libgcrypt releases */
            err = gcry_mpi_ec_new(&c->ctx, NULL, cv->gcry_alt);
    }
    if (err) {
        c->ctx = NULL;
        return dsig_fail(DSIG_E_CRYPTO, "libgcrypt: cannot set up the curve %s: %s",
                         ep ? "(explicit parameters)" : cv->gcry_name, gcry_strerror(err));
    }
    c->p = gcry_mpi_ec_get_mpi("p", c->ctx, 1);
    c->a = gcry_mpi_ec_get_mpi("a", c->ctx, 1);
    c->b = gcry_mpi_ec_get_mpi("b", c->ctx, 1);
    c->n = gcry_mpi_ec_get_mpi("n", c->ctx, 1);
    c->G = gcry_mpi_ec_get_point("g", c->ctx, 1);
    /* Explicit test curves are built with h = 1; a named curve's h comes from libgcrypt. */
    gcry_mpi_t h = ep ? NULL : gcry_mpi_ec_get_mpi("h", c->ctx, 1);
    c->cofactor_one = ep || (h && gcry_mpi_cmp_ui(h, 1) == 0);
    gcry_mpi_release(h);
    if (!c->p || !c->a || !c->b || !c->n || !c->G) {
        rec_ctx_close(c);
        return dsig_fail(DSIG_E_CRYPTO, "libgcrypt: incomplete curve parameters");
    }
    return DSIG_OK;
}

gcry_mpi_point_t rec_point(struct rec_ctx *c, const uint8_t x[REC_BYTES], const uint8_t y[REC_BYTES])
{
    gcry_mpi_t mx = rec_mpi(x, REC_BYTES, 0), my = rec_mpi(y, REC_BYTES, 0);
    gcry_mpi_point_t P = NULL;
    if (mx && my && gcry_mpi_cmp(mx, c->p) < 0 && gcry_mpi_cmp(my, c->p) < 0) {
        gcry_mpi_t one = gcry_mpi_set_ui(NULL, 1);
        P = gcry_mpi_point_set(NULL, mx, my, one);
        gcry_mpi_release(one);
        /* (0, 0) is on none of the curves (b != 0); libgcrypt represents infinity with z = 0. */
        if (!gcry_mpi_ec_curve_point(P, c->ctx)) {
            gcry_mpi_point_release(P);
            P = NULL;
        } else if (!c->cofactor_one) {
            /* @spec SP 800-186 §D.1.1.2 / SEC 1 §3.2.2.1 step 4 (full public key validation): with
             * a cofactor, the point must also have order n, i.e. n·P = O; otherwise a small-order
             * component would leak through or let forged keys verify. */
            gcry_mpi_point_t T = gcry_mpi_point_new(0);
            gcry_mpi_t tx = gcry_mpi_new(0);
            gcry_mpi_ec_mul(T, c->n, P, c->ctx);
            int at_infinity = gcry_mpi_ec_get_affine(tx, NULL, T, c->ctx) != 0;
            gcry_mpi_release(tx);
            gcry_mpi_point_release(T);
            if (!at_infinity) {
                gcry_mpi_point_release(P);
                P = NULL;
            }
        }
    }
    gcry_mpi_release(mx);
    gcry_mpi_release(my);
    return P;
}

int rec_affine_x(struct rec_ctx *c, gcry_mpi_point_t P, gcry_mpi_t x)
{
    if (gcry_mpi_ec_get_affine(x, NULL, P, c->ctx))
        return dsig_fail(DSIG_E_INTERNAL, "EC: point at infinity");
    return DSIG_OK;
}

/* @spec FIPS 186-5 §A.4.2-style rejection sampling: 32 random bytes, cut to the bit length of n,
 * until 1 <= k < n. */
static int scalar_from_rng(struct rec_ctx *c, dsig_rng *rng, uint8_t out[REC_BYTES])
{
    /* n has 256 bits except on GOST paramSetA (255): masking keeps the rejection rate below 1/2
     * there and changes nothing on the other curves (their seeded keys stay the same). */
    unsigned nbits = gcry_mpi_get_nbits(c->n);
    uint8_t top = nbits >= 8 * REC_BYTES ? 0xff : (uint8_t)(0xff >> (8 * REC_BYTES - nbits));
    for (int tries = 0; tries < 1000; tries++) {
        int rc = rng ? dsig_rng_bytes(rng, out, REC_BYTES) : dsig_random_bytes(out, REC_BYTES);
        if (rc)
            return rc;
        out[0] &= top;
        gcry_mpi_t k = rec_mpi(out, REC_BYTES, 1);
        if (!k)
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
        /* Rejection only reveals that a discarded draw was out of range. */
        int ok = gcry_mpi_cmp_ui(k, 0) != 0 && gcry_mpi_cmp(k, c->n) < 0;
        gcry_mpi_release(k);
        if (ok)
            return DSIG_OK;
    }
    return dsig_fail(DSIG_E_RNG, "EC scalar: the RNG keeps giving out-of-range values");
}

int rec_random_scalar(struct rec_ctx *c, gcry_mpi_t *k)
{
    uint8_t b[REC_BYTES];
    *k = NULL;
    int rc = scalar_from_rng(c, NULL, b);
    if (rc == DSIG_OK && !(*k = rec_mpi(b, REC_BYTES, 1)))
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    dsig_memzero(b, sizeof b);
    return rc;
}

int rec_curve_bytes(struct rec_ctx *c, uint8_t a[REC_BYTES], uint8_t b[REC_BYTES], uint8_t gx[REC_BYTES],
                    uint8_t gy[REC_BYTES])
{
    gcry_mpi_t x = gcry_mpi_new(0), y = gcry_mpi_new(0);
    int rc = DSIG_OK;
    if (gcry_mpi_ec_get_affine(x, y, c->G, c->ctx))
        rc = dsig_fail(DSIG_E_INTERNAL, "EC: base point at infinity");
    if (!rc && !(rc = rec_mpi_out(c->a, a, REC_BYTES)) && !(rc = rec_mpi_out(c->b, b, REC_BYTES)) &&
        !(rc = rec_mpi_out(x, gx, REC_BYTES)))
        rc = rec_mpi_out(y, gy, REC_BYTES);
    gcry_mpi_release(x);
    gcry_mpi_release(y);
    return rc;
}

/* d·G as affine bytes (d secret). */
static int pub_from_d(struct rec_ctx *c, const uint8_t d[REC_BYTES], uint8_t x[REC_BYTES],
                      uint8_t y[REC_BYTES])
{
    gcry_mpi_t md = rec_mpi(d, REC_BYTES, 1), qx = gcry_mpi_new(0), qy = gcry_mpi_new(0);
    gcry_mpi_point_t Q = gcry_mpi_point_new(0);
    int rc = DSIG_OK;
    if (!md) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    } else {
        gcry_mpi_ec_mul(Q, md, c->G, c->ctx);
        if (gcry_mpi_ec_get_affine(qx, qy, Q, c->ctx))
            rc = dsig_fail(DSIG_E_KEY, "EC private key gives the point at infinity");
        else if (!(rc = rec_mpi_out(qx, x, REC_BYTES)))
            rc = rec_mpi_out(qy, y, REC_BYTES);
    }
    gcry_mpi_release(md);
    gcry_mpi_release(qx);
    gcry_mpi_release(qy);
    gcry_mpi_point_release(Q);
    return rc;
}

/* @spec SP 800-186 / GB/T 32918.1 §6.2.1 (public key validation) and the key pair check. */
int rec_build(struct dsig_key *key, const uint8_t *x, const uint8_t *y, const uint8_t *d)
{
    const struct rec_curve *cv = rec_curve_of(key->type);
    if (!cv)
        return dsig_fail(DSIG_E_INTERNAL, "not an SM2/GOST key type");
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, cv, NULL);
    if (rc)
        return rc;
    gcry_mpi_point_t P = rec_point(&c, x, y);
    if (!P) {
        rec_ctx_close(&c);
        return dsig_fail(DSIG_E_POINT, "%s point (x, y) is not a valid point of the curve", cv->type->crv);
    }
    gcry_mpi_point_release(P);
    if (d) {
        gcry_mpi_t md = rec_mpi(d, REC_BYTES, 1);
        /* GB/T 32918.1 §6.1 restricts SM2 keys to [1, n-2] (1 + d must be invertible); GOST allows
         * [1, q-1]. The comparison is on the key's range only, not its value bits. */
        if (md && cv == &dsig_rec_sm2)
            gcry_mpi_add_ui(md, md, 1);
        int in_range = md && gcry_mpi_cmp_ui(md, cv == &dsig_rec_sm2 ? 1 : 0) > 0 && gcry_mpi_cmp(md, c.n) < 0;
        gcry_mpi_release(md);
        uint8_t qx[REC_BYTES], qy[REC_BYTES];
        if (!in_range)
            rc = dsig_fail(DSIG_E_KEY, "%s private key \"d\" is not in [1, n-%d]", cv->type->crv,
                           cv == &dsig_rec_sm2 ? 2 : 1);
        else if (!(rc = pub_from_d(&c, d, qx, qy)) &&
                 (!dsig_ct_equal(qx, x, REC_BYTES) || !dsig_ct_equal(qy, y, REC_BYTES)))
            rc = dsig_fail(DSIG_E_KEY, "%s private key \"d\" does not match the public point (x, y)",
                           cv->type->crv);
    }
    rec_ctx_close(&c);
    if (rc)
        return rc;
    struct rec_key *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    k->cv = cv;
    k->has_d = d != NULL;
    memcpy(k->x, x, REC_BYTES);
    memcpy(k->y, y, REC_BYTES);
    if (d)
        memcpy(k->d, d, REC_BYTES);
    if (key->impl)
        rec_destroy(key);
    key->impl = k;
    key->has_private = d != NULL;
    return DSIG_OK;
}

/* d uniform in [1, n-1] from the given RNG (seeded or OS), Q = d·G. */
int rec_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    (void)bits; /* the curve fixes the size */
    const struct rec_curve *cv = rec_curve_of(key->type);
    if (!cv)
        return dsig_fail(DSIG_E_INTERNAL, "not an SM2/GOST key type");
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, cv, NULL);
    if (rc)
        return rc;
    uint8_t d[REC_BYTES], x[REC_BYTES], y[REC_BYTES];
    if (!(rc = scalar_from_rng(&c, rng, d)))
        rc = pub_from_d(&c, d, x, y);
    rec_ctx_close(&c);
    if (!rc)
        rc = rec_build(key, x, y, d);
    dsig_memzero(d, sizeof d);
    return rc;
}

/* @spec RFC 7518 §6.2 layout (x, y, d fixed-width big-endian), applied to the SM2/GOST curves. */
int rec_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    static const char *const names[] = {"x", "y", "d"};
    const dsig_jwk_member *mm[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        for (size_t j = 0; j < n; j++)
            if (m[j].name && m[j].data && strcmp(m[j].name, names[i]) == 0)
                mm[i] = &m[j];
        if (!mm[i] && i < 2)
            return dsig_fail(DSIG_E_KEY, "%s JWK: member \"%s\" is missing", key->type->crv, names[i]);
        if (mm[i] && mm[i]->len != REC_BYTES)
            return dsig_fail(DSIG_E_KEY, "%s JWK: member \"%s\" must be %u bytes, got %zu",
                             key->type->crv, names[i], REC_BYTES, mm[i]->len);
    }
    return rec_build(key, mm[0]->data, mm[1]->data, mm[2] ? mm[2]->data : NULL);
}

int rec_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m, size_t *n)
{
    const struct rec_key *k = key->impl;
    if (!k)
        return dsig_fail(DSIG_E_KEY, "%s key has no material", key->type->crv);
    static const char *const names[] = {"x", "y", "d"};
    const uint8_t *src[] = {k->x, k->y, k->d};
    size_t count = include_private && k->has_d ? 3 : 2;
    for (size_t i = 0; i < count; i++) {
        m[i].name = names[i];
        m[i].len = REC_BYTES;
        if (!(m[i].data = dsig_malloc(REC_BYTES))) {
            for (size_t j = 0; j < i; j++) {
                dsig_xfree(m[j].data, REC_BYTES);
                m[j].data = NULL;
            }
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
        }
        memcpy(m[i].data, src[i], REC_BYTES);
    }
    *n = count;
    return DSIG_OK;
}

int rec_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct rec_key *k = src->impl;
    return rec_build(dst, k->x, k->y, NULL);
}

void rec_destroy(struct dsig_key *key)
{
    if (key->impl)
        dsig_xfree(key->impl, sizeof(struct rec_key));
    key->impl = NULL;
}

unsigned rec_bits(const struct dsig_key *key)
{
    return key->impl ? 256u : 0u;
}

/* ---- test hook: the streaming hash --------------------------------------------------------- */

int dsig_rec_hash(int which, const uint8_t *msg, size_t len, size_t chunk, uint8_t *out)
{
    static const int algos[] = {GCRY_MD_SM3, GCRY_MD_STRIBOG256, GCRY_MD_STRIBOG512};
    if (which < 0 || which > 2 || (!msg && len) || !out)
        return dsig_fail(DSIG_E_ARG, "dsig_rec_hash: bad argument");
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    gcry_md_hd_t h;
    if (gcry_md_open(&h, algos[which], 0))
        return dsig_fail(DSIG_E_CRYPTO, "libgcrypt: cannot open the hash");
    size_t step = chunk ? chunk : (len ? len : 1);
    for (size_t off = 0; off < len; off += step)
        gcry_md_write(h, msg + off, len - off < step ? len - off : step);
    memcpy(out, gcry_md_read(h, 0), gcry_md_get_algo_dlen(algos[which]));
    gcry_md_close(h);
    return DSIG_OK;
}

/* ---- test hook: d·G on a named or explicit curve ---------------------------------------------- */

int dsig_rec_test_pub(const struct rec_explicit *ep, int gost, const uint8_t d[REC_BYTES],
                      uint8_t x[REC_BYTES], uint8_t y[REC_BYTES])
{
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, gost ? &dsig_rec_gost256b : &dsig_rec_sm2, ep);
    if (rc)
        return rc;
    rc = pub_from_d(&c, d, x, y);
    rec_ctx_close(&c);
    return rc;
}
