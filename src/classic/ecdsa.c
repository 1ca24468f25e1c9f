/*
 * EC key types P-256, P-384, P-521 and the ES256/ES384/ES512 algorithms (FIPS 186-5 §6, RFC 7518 §3.4)
 * on OpenSSL 3.0. JOSE signatures are the fixed-width R‖S form; OpenSSL speaks DER, so signatures are
 * converted at the edges. Keys are validated on every way in: coordinates of exactly the field size,
 * < p, on the curve, not infinity (DSIG_E_POINT); d in [1, n-1] and d·G equal to the public point.
 */
#include <pthread.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include "classic/pkey.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"

#define EC_MAX_BYTES 66

struct ec_curve {
    const struct dsig_keytype *type;
    const char *ossl_name;  /* OpenSSL group name */
    int nid;
    size_t bytes;           /* field and order size in bytes */
    unsigned bits;          /* field size in bits */
    EC_GROUP *group;        /* created once */
    BIGNUM *p;              /* field prime */
};

static struct ec_curve curves[3] = {
    {&dsig_keytype_p256, "prime256v1", NID_X9_62_prime256v1, 32, 256, NULL, NULL},
    {&dsig_keytype_p384, "secp384r1", NID_secp384r1, 48, 384, NULL, NULL},
    {&dsig_keytype_p521, "secp521r1", NID_secp521r1, 66, 521, NULL, NULL},
};
static pthread_once_t curves_once = PTHREAD_ONCE_INIT;
static int curves_ok;

/* Create the three groups once (EC_GROUP objects are read-only after creation). */
static void curves_init(void)
{
    for (size_t i = 0; i < 3; i++) {
        curves[i].group = EC_GROUP_new_by_curve_name(curves[i].nid);
        curves[i].p = BN_new();
        if (!curves[i].group || !curves[i].p ||
            !EC_GROUP_get_curve(curves[i].group, curves[i].p, NULL, NULL, NULL))
            return;
    }
    curves_ok = 1;
}

/* The curve of a key type, or NULL (with the error recorded) if the groups cannot be created. */
static const struct ec_curve *curve_of(const struct dsig_keytype *t)
{
    pthread_once(&curves_once, curves_init);
    if (!curves_ok) {
        dsig_fail_openssl(DSIG_E_CRYPTO, "cannot create the NIST curve groups");
        return NULL;
    }
    for (size_t i = 0; i < 3; i++)
        if (curves[i].type == t)
            return &curves[i];
    dsig_fail(DSIG_E_INTERNAL, "not an EC key type");
    return NULL;
}

struct ec_impl {
    EVP_PKEY *pkey;
    const struct ec_curve *curve;
    int has_d;
    uint8_t x[EC_MAX_BYTES], y[EC_MAX_BYTES], d[EC_MAX_BYTES];
};

struct ec_params {
    enum dsig_pk_hash hash;
};

/* @spec SP 800-186 / FIPS 186-5 §6.2 (key pair validation): check (x, y[, d]) and store the key. */
static int ec_build(struct dsig_key *key, const struct ec_curve *cv, const uint8_t *x, const uint8_t *y,
                    const uint8_t *d)
{
    int rc = DSIG_E_NOMEM;
    BN_CTX *ctx = BN_CTX_secure_new();
    EC_POINT *P = EC_POINT_new(cv->group), *Q = EC_POINT_new(cv->group);
    BIGNUM *bx = BN_new(), *by = BN_new(), *bd = d ? BN_secure_new() : NULL;
    EVP_PKEY *pkey = NULL;
    uint8_t pub[1 + 2 * EC_MAX_BYTES];
    if (!ctx || !P || !Q || !bx || !by || (d && !bd)) {
        dsig_fail(rc, "out of memory");
        goto out;
    }
    if (!BN_bin2bn(x, (int)cv->bytes, bx) || !BN_bin2bn(y, (int)cv->bytes, by)) {
        dsig_fail(rc, "out of memory");
        goto out;
    }
    rc = DSIG_E_POINT;
    if (BN_cmp(bx, cv->p) >= 0 || BN_cmp(by, cv->p) >= 0) {
        dsig_fail(rc, "%s point: a coordinate is not below the field prime", cv->type->crv);
        goto out;
    }
    if (!EC_POINT_set_affine_coordinates(cv->group, P, bx, by, ctx) ||
        EC_POINT_is_on_curve(cv->group, P, ctx) != 1) {
        ERR_clear_error();
        dsig_fail(rc, "%s point (x, y) is not on the curve", cv->type->crv);
        goto out;
    }
    if (EC_POINT_is_at_infinity(cv->group, P)) {
        dsig_fail(rc, "%s point is the point at infinity", cv->type->crv);
        goto out;
    }
    if (d) {
        rc = DSIG_E_KEY;
        BN_set_flags(bd, BN_FLG_CONSTTIME);
        if (!BN_bin2bn(d, (int)cv->bytes, bd)) {
            rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
            goto out;
        }
        if (BN_is_zero(bd) || BN_cmp(bd, EC_GROUP_get0_order(cv->group)) >= 0) {
            dsig_fail(rc, "%s private key \"d\" is not in [1, n-1]", cv->type->crv);
            goto out;
        }
        if (!EC_POINT_mul(cv->group, Q, bd, NULL, NULL, ctx)) {
            rc = dsig_fail_openssl(DSIG_E_CRYPTO, "EC scalar multiplication");
            goto out;
        }
        if (EC_POINT_cmp(cv->group, P, Q, ctx) != 0) {
            dsig_fail(rc, "%s private key \"d\" does not match the public point (x, y)",
                      cv->type->crv);
            goto out;
        }
    }
    pub[0] = 0x04; /* uncompressed SEC 1 point */
    memcpy(pub + 1, x, cv->bytes);
    memcpy(pub + 1 + cv->bytes, y, cv->bytes);
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    int pushed = b && OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, cv->ossl_name, 0) &&
                 OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pub, 1 + 2 * cv->bytes) &&
                 (!d || OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_PRIV_KEY, bd));
    if ((rc = dsig_pk_from_builder("EC", b, pushed, d != NULL, "EC key parameters", &pkey)))
        goto out;
    struct ec_impl *impl = dsig_calloc(1, sizeof *impl);
    if (!impl) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        goto out;
    }
    impl->pkey = pkey;
    pkey = NULL;
    impl->curve = cv;
    impl->has_d = d != NULL;
    memcpy(impl->x, x, cv->bytes);
    memcpy(impl->y, y, cv->bytes);
    if (d)
        memcpy(impl->d, d, cv->bytes);
    key->impl = impl;
    key->has_private = d != NULL;
    rc = DSIG_OK;
out:
    EVP_PKEY_free(pkey);
    BN_clear_free(bd);
    BN_free(bx);
    BN_free(by);
    EC_POINT_free(P);
    EC_POINT_free(Q);
    BN_CTX_free(ctx);
    return rc;
}

/* Affine coordinates of a point as fixed-width big-endian bytes. */
static int ec_point_xy(const struct ec_curve *cv, const EC_POINT *P, uint8_t *x, uint8_t *y)
{
    BIGNUM *bx = BN_new(), *by = BN_new();
    int ok = bx && by && EC_POINT_get_affine_coordinates(cv->group, P, bx, by, NULL) &&
             BN_bn2binpad(bx, x, (int)cv->bytes) == (int)cv->bytes &&
             BN_bn2binpad(by, y, (int)cv->bytes) == (int)cv->bytes;
    BN_free(bx);
    BN_free(by);
    return ok ? DSIG_OK : dsig_fail_openssl(DSIG_E_POINT, "EC point coordinates");
}

/* @spec FIPS 186-5 §A.4.2 (rejection sampling): d uniform in [1, n-1] from the RNG, Q = d·G. */
static int ec_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    (void)bits; /* the curve fixes the size */
    const struct ec_curve *cv = curve_of(key->type);
    if (!cv)
        return DSIG_E_CRYPTO;
    uint8_t d[EC_MAX_BYTES], x[EC_MAX_BYTES], y[EC_MAX_BYTES];
    BIGNUM *bd = BN_secure_new();
    EC_POINT *Q = EC_POINT_new(cv->group);
    int rc = DSIG_OK;
    if (!bd || !Q) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        goto out;
    }
    BN_set_flags(bd, BN_FLG_CONSTTIME);
    /* bits beyond the order's bit length are masked off so that a draw is accepted with p > 1/2 */
    uint8_t top_mask = (uint8_t)(cv->bits % 8 ? (1u << (cv->bits % 8)) - 1 : 0xff);
    for (int tries = 0;; tries++) {
        if (tries > 1000) {
            rc = dsig_fail(DSIG_E_RNG, "EC key generation: the RNG keeps giving out-of-range values");
            goto out;
        }
        if ((rc = dsig_rng_bytes(rng, d, cv->bytes)))
            goto out;
        d[0] &= top_mask;
        if (!BN_bin2bn(d, (int)cv->bytes, bd)) {
            rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
            goto out;
        }
        if (!BN_is_zero(bd) && BN_cmp(bd, EC_GROUP_get0_order(cv->group)) < 0)
            break;
    }
    if (!EC_POINT_mul(cv->group, Q, bd, NULL, NULL, NULL)) {
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "EC scalar multiplication");
        goto out;
    }
    if ((rc = ec_point_xy(cv, Q, x, y)))
        goto out;
    rc = ec_build(key, cv, x, y, d);
out:
    OPENSSL_cleanse(d, sizeof d);
    BN_clear_free(bd);
    EC_POINT_free(Q);
    return rc;
}

/* @spec RFC 7518 §6.2: import an EC JWK; x, y, d must be exactly the field size. */
static int ec_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    const struct ec_curve *cv = curve_of(key->type);
    if (!cv)
        return DSIG_E_CRYPTO;
    static const char *const names[] = {"x", "y", "d"};
    const dsig_jwk_member *mm[3];
    for (int i = 0; i < 3; i++) {
        mm[i] = dsig_pk_member(key->type, m, n, names[i]);
        if (!mm[i] && i < 2)
            return dsig_fail(DSIG_E_KEY, "%s JWK: member \"%s\" is missing", cv->type->crv, names[i]);
        if (mm[i] && mm[i]->len != cv->bytes)
            return dsig_fail(DSIG_E_KEY, "%s JWK: member \"%s\" must be %zu bytes, got %zu",
                             cv->type->crv, names[i], cv->bytes, mm[i]->len);
    }
    return ec_build(key, cv, mm[0]->data, mm[1]->data, mm[2] ? mm[2]->data : NULL);
}

/* Export x, y (and d) as fixed-width members. */
static int ec_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m, size_t *n)
{
    const struct ec_impl *impl = key->impl;
    size_t w = impl->curve->bytes;
    size_t count = include_private && impl->has_d ? 3 : 2;
    static const char *const names[] = {"x", "y", "d"};
    const uint8_t *src[] = {impl->x, impl->y, impl->d};
    for (size_t i = 0; i < count; i++) {
        m[i].name = names[i];
        m[i].len = w;
        m[i].data = dsig_malloc(w);
        if (!m[i].data) {
            for (size_t j = 0; j < i; j++) {
                dsig_xfree(m[j].data, w);
                m[j].data = NULL;
            }
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
        }
        memcpy(m[i].data, src[i], w);
    }
    *n = count;
    return DSIG_OK;
}

/* A public-only EVP_PKEY for the same point. */
static int ec_public_pkey(const struct ec_impl *impl, EVP_PKEY **out)
{
    const struct ec_curve *cv = impl->curve;
    uint8_t pub[1 + 2 * EC_MAX_BYTES];
    pub[0] = 0x04;
    memcpy(pub + 1, impl->x, cv->bytes);
    memcpy(pub + 1 + cv->bytes, impl->y, cv->bytes);
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    int pushed = b && OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, cv->ossl_name, 0) &&
                 OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pub, 1 + 2 * cv->bytes);
    return dsig_pk_from_builder("EC", b, pushed, 0, "EC key parameters", out);
}

/* EVP_PKEY for PEM export. */
static int ec_to_pkey(const struct dsig_key *key, int include_private, void **out)
{
    const struct ec_impl *impl = key->impl;
    if (include_private && impl->has_d)
        return dsig_pk_ref(impl->pkey, out);
    return ec_public_pkey(impl, (EVP_PKEY **)out);
}

/* Take an EC EVP_PKEY of this key type's curve (from PEM) through the JWK validation. */
static int ec_from_pkey(struct dsig_key *key, void *pk)
{
    EVP_PKEY *pkey = pk;
    if (!EVP_PKEY_is_a(pkey, "EC"))
        return DSIG_E_KEY_MISMATCH;
    char gname[64];
    size_t glen = 0;
    if (!EVP_PKEY_get_group_name(pkey, gname, sizeof gname, &glen)) {
        ERR_clear_error();
        return DSIG_E_KEY_MISMATCH; /* explicit curve parameters: not a named curve we support */
    }
    const struct ec_curve *cv = curve_of(key->type);
    if (!cv)
        return DSIG_E_CRYPTO;
    if (OBJ_txt2nid(gname) != cv->nid && EC_curve_nist2nid(gname) != cv->nid)
        return DSIG_E_KEY_MISMATCH;

    uint8_t enc[1 + 2 * EC_MAX_BYTES + 8], x[EC_MAX_BYTES], y[EC_MAX_BYTES], d[EC_MAX_BYTES];
    size_t elen = 0;
    int rc;
    EC_POINT *P = EC_POINT_new(cv->group);
    BIGNUM *bd = NULL;
    if (!P)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (!EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, enc, sizeof enc, &elen) ||
        !EC_POINT_oct2point(cv->group, P, enc, elen, NULL)) {
        EC_POINT_free(P);
        return dsig_fail_openssl(DSIG_E_POINT, "EC key: invalid public point");
    }
    rc = ec_point_xy(cv, P, x, y);
    EC_POINT_free(P);
    if (rc)
        return rc;
    int has_d = EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &bd) == 1;
    ERR_clear_error();
    if (has_d && (BN_num_bytes(bd) > (int)cv->bytes || BN_bn2binpad(bd, d, (int)cv->bytes) < 0)) {
        BN_clear_free(bd);
        return dsig_fail(DSIG_E_KEY, "%s private key \"d\" is not in [1, n-1]", cv->type->crv);
    }
    BN_clear_free(bd);
    rc = ec_build(key, cv, x, y, has_d ? d : NULL);
    OPENSSL_cleanse(d, sizeof d);
    return rc;
}

/* A public-only copy. */
static int ec_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct ec_impl *s = src->impl;
    return ec_build(dst, s->curve, s->x, s->y, NULL);
}

/* Wipe and free. */
static void ec_destroy(struct dsig_key *key)
{
    struct ec_impl *impl = key->impl;
    dsig_pk_free_impl(key, impl ? impl->pkey : NULL, sizeof *impl);
}

/* The curve's field size in bits. */
static unsigned ec_bits(const struct dsig_key *key)
{
    const struct ec_impl *impl = key->impl;
    return impl ? impl->curve->bits : 0;
}

static const char *const ec_pub[] = {"x", "y", NULL};
static const char *const ec_priv[] = {"d", NULL};

#define EC_KEYTYPE(var, crvname)                                                                     \
    const struct dsig_keytype var = {.kty = "EC",                                                    \
                                     .crv = crvname,                                                 \
                                     .pub_members = ec_pub,                                          \
                                     .priv_members = ec_priv,                                        \
                                     .has_public = 1,                                                \
                                     .generate = ec_generate,                                        \
                                     .import_jwk = ec_import_jwk,                                    \
                                     .export_jwk = ec_export_jwk,                                    \
                                     .to_pkey = ec_to_pkey,                                          \
                                     .from_pkey = ec_from_pkey,                                      \
                                     .public_copy = ec_public_copy,                                  \
                                     .destroy = ec_destroy,                                          \
                                     .bits = ec_bits}

EC_KEYTYPE(dsig_keytype_p256, "P-256");
EC_KEYTYPE(dsig_keytype_p384, "P-384");
EC_KEYTYPE(dsig_keytype_p521, "P-521");

/* ---- ES256 / ES384 / ES512 ------------------------------------------------------------------- */

/* Start a streaming signature (the hash only, until final); the curve outlives every key. */
static int es_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                        const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    const struct ec_params *p = alg->params;
    const struct ec_impl *impl = key->impl;
    return dsig_pk_sign_init(state, alg, p->hash, impl->pkey, impl->curve);
}

/* @spec FIPS 186-5 §6.4.1 + RFC 7518 §3.4: sign a finished digest, then DER SEQUENCE{r, s} → R‖S. */
static int es_sign_hash(const struct dsig_pk_state *st, const uint8_t *dg, size_t dlen, uint8_t *sig, size_t cap,
                        size_t *sig_len)
{
    const struct ec_curve *cv = st->key_impl;
    size_t w = cv->bytes;
    if (cap < 2 * w)
        return dsig_fail(DSIG_E_BUFFER, "%s signature needs %zu bytes, buffer has %zu", st->alg->name,
                         2 * w, cap);
    uint8_t der[2 * EC_MAX_BYTES + 16];
    size_t derlen = sizeof der;
    int rc = dsig_pk_sign_hash(st, NULL, dg, dlen, der, &derlen, "ECDSA signing");
    if (rc)
        return rc;
    const unsigned char *pp = der;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &pp, (long)derlen);
    if (!es)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "ECDSA signature decoding");
    const BIGNUM *r = ECDSA_SIG_get0_r(es), *s = ECDSA_SIG_get0_s(es);
    int ok = BN_bn2binpad(r, sig, (int)w) == (int)w && BN_bn2binpad(s, sig + w, (int)w) == (int)w;
    ECDSA_SIG_free(es);
    if (!ok)
        return dsig_fail(DSIG_E_INTERNAL, "ECDSA signature component wider than the order");
    *sig_len = 2 * w;
    return DSIG_OK;
}

static int es_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct dsig_pk_state *st = state;
    uint8_t dg[EVP_MAX_MD_SIZE];
    size_t dlen;
    int rc = dsig_pk_digest(st, dg, &dlen);
    return rc ? rc : es_sign_hash(st, dg, dlen, sig, cap, sig_len);
}

/* Start a streaming verification; a malformed signature is remembered and rejected at final. */
static int es_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                          const uint8_t *sig, size_t sig_len,
                          const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    const struct ec_params *p = alg->params;
    const struct ec_impl *impl = key->impl;
    return dsig_pk_verify_init(state, alg, p->hash, impl->pkey, impl->curve, sig, sig_len,
                               2 * impl->curve->bytes);
}

/* @spec FIPS 186-5 §6.4.2 + RFC 7518 §3.4: the state's R‖S with 1 ≤ r, s < n, → DER, verify a finished
 * digest. */
static int es_verify_hash(const struct dsig_pk_state *st, const uint8_t *dg, size_t dlen)
{
    const struct ec_curve *cv = st->key_impl;
    size_t w = cv->bytes;
    if (st->bad_sig)
        return dsig_fail(DSIG_E_VERIFY, "%s signature must be exactly %zu bytes (R||S)", st->alg->name,
                         2 * w);
    uint8_t der[2 * EC_MAX_BYTES + 16];
    BIGNUM *r = BN_bin2bn(st->sig, (int)w, NULL), *s = BN_bin2bn(st->sig + w, (int)w, NULL);
    ECDSA_SIG *es = ECDSA_SIG_new();
    if (!r || !s || !es) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(es);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    const BIGNUM *order = EC_GROUP_get0_order(cv->group);
    if (BN_is_zero(r) || BN_is_zero(s) || BN_cmp(r, order) >= 0 || BN_cmp(s, order) >= 0) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(es);
        return dsig_fail(DSIG_E_VERIFY, "%s signature: R or S is not in [1, n-1]", st->alg->name);
    }
    ECDSA_SIG_set0(es, r, s);
    unsigned char *pp = der;
    int derlen = i2d_ECDSA_SIG(es, NULL);
    if (derlen <= 0 || (size_t)derlen > sizeof der || i2d_ECDSA_SIG(es, &pp) != derlen) {
        ECDSA_SIG_free(es);
        return dsig_fail_openssl(DSIG_E_INTERNAL, "ECDSA signature encoding");
    }
    ECDSA_SIG_free(es);
    return dsig_pk_verify_digest(st, NULL, der, (size_t)derlen, dg, dlen);
}

static int es_verify_final(void *state)
{
    struct dsig_pk_state *st = state;
    uint8_t dg[EVP_MAX_MD_SIZE];
    size_t dlen;
    int rc = st->bad_sig ? DSIG_OK : dsig_pk_digest(st, dg, &dlen);
    return rc ? rc : es_verify_hash(st, dg, st->bad_sig ? 0 : dlen);
}

/* dsig/prehashed.h: the algorithm's own hash only (ES256 signs SHA-256 digests). */
static const char *es_digest_hashes(const dsig_alg *alg)
{
    return dsig_pk_hash_name(((const struct ec_params *)alg->params)->hash);
}

static int es_sign_prehashed(const dsig_alg *alg, const struct dsig_key *key, const char *hash,
                             const uint8_t *digest, size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    (void)hash; /* the core checked it is the algorithm's */
    const struct ec_impl *impl = key->impl;
    struct dsig_pk_state st;
    int rc = dsig_pk_prehashed_state(&st, alg, ((const struct ec_params *)alg->params)->hash, impl->pkey,
                                     impl->curve, len);
    return rc ? rc : es_sign_hash(&st, digest, len, sig, cap, sig_len);
}

static int es_verify_prehashed(const dsig_alg *alg, const struct dsig_key *key, const char *hash,
                               const uint8_t *digest, size_t len, const uint8_t *sig, size_t sig_len)
{
    (void)hash;
    const struct ec_impl *impl = key->impl;
    struct dsig_pk_state st;
    int rc = dsig_pk_prehashed_state(&st, alg, ((const struct ec_params *)alg->params)->hash, impl->pkey,
                                     impl->curve, len);
    if (rc)
        return rc;
    st.bad_sig = sig_len != 2 * impl->curve->bytes;
    if (!st.bad_sig)
        memcpy(st.sig, sig, sig_len);
    st.sig_len = sig_len;
    return es_verify_hash(&st, digest, len);
}

static const struct dsig_alg_prehashed es_prehashed = {
    .hashes = es_digest_hashes,
    .sign = es_sign_prehashed,
    .verify = es_verify_prehashed,
};

static const struct dsig_alg_ops es_ops = {
    .sign_init = es_sign_init,
    .sign_update = dsig_pk_update,
    .sign_final = es_sign_final,
    .verify_init = es_verify_init,
    .verify_update = dsig_pk_update,
    .verify_final = es_verify_final,
    .free_state = dsig_pk_free_state,
    .prehashed = &es_prehashed,
};

static const struct ec_params p_es256 = {DSIG_PK_SHA256}, p_es384 = {DSIG_PK_SHA384},
                              p_es512 = {DSIG_PK_SHA512};

#define ES_ALG(var, nm, desc, kt, base, sec, smax, kbits, par)                                      \
    static const dsig_alg var = {.name = nm,                                                         \
                                 .family = "ECDSA",                                                  \
                                 .description = desc,                                                \
                                 .keytype = &kt,                                                     \
                                 .baseline = base,                                                   \
                                 .security_bits = sec,                                               \
                                 .flags = DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED,                   \
                                 .sig_max = smax,                                                    \
                                 .min_key_bits = 0,                                                  \
                                 .default_key_bits = kbits,                                          \
                                 .ops = &es_ops,                                                     \
                                 .params = &par}

ES_ALG(alg_es256, "ES256", "ECDSA using P-256 and SHA-256", dsig_keytype_p256, "SHA-256", 128, 64, 256,
       p_es256);
ES_ALG(alg_es384, "ES384", "ECDSA using P-384 and SHA-384", dsig_keytype_p384, "SHA-384", 192, 96, 384,
       p_es384);
ES_ALG(alg_es512, "ES512", "ECDSA using P-521 and SHA-512", dsig_keytype_p521, "SHA-512", 256, 132, 521,
       p_es512);

const dsig_alg *const dsig_ecdsa_algs[] = {&alg_es256, &alg_es384, &alg_es512, NULL};
