/*
 * SM2 digital signatures with SM3 (GB/T 32918.2-2016 / GM/T 0003.2-2012; hash GB/T 32905 / GM/T 0004)
 * on the recommended curve sm2p256v1 (GB/T 32918.5 / GM/T 0003.5): key type "EC"/"SM2" and algorithm
 * "SM2-SM3". See docs/regional.md.
 *
 * One pass: init computes Z_A = SM3(ENTL ‖ ID ‖ a ‖ b ‖ xG ‖ yG ‖ xA ‖ yA) and starts a second SM3 with
 * Z_A; update streams the payload into it (a bare gcry_md_write); final turns e = SM3(Z_A ‖ M) into the
 * signature with libgcrypt's EC point arithmetic. The distinguishing identifier is "1234567812345678"
 * (GM/T 0009) unless the signing options carry a context, which is then used as the ID.
 *
 * Signature: r ‖ s, each 32 bytes big-endian (the fixed-width form of GM/T 0009's SM2Signature
 * SEQUENCE, like JOSE's ECDSA R ‖ S). Keys: x, y, d as 32-byte big-endian JWK members; PEM through
 * OpenSSL's SM2 key type (id-ecPublicKey with the SM2 curve OID 1.2.156.10197.1.301).
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "classic/pkey.h"
#include "classic/regional_ec.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"

#define SM2_SIG_BYTES (2 * REC_BYTES)

/* GM/T 0009-2012 §10: the default user identifier. */
static const uint8_t sm2_default_id[16] = {'1', '2', '3', '4', '5', '6', '7', '8',
                                           '1', '2', '3', '4', '5', '6', '7', '8'};

/* ---- key type: PEM through OpenSSL's SM2 keys ---------------------------------------------- */

/* An OpenSSL SM2 EVP_PKEY for the key (private part only when asked and present). */
static int sm2_to_pkey(const struct dsig_key *key, int include_private, void **out)
{
    const struct rec_key *k = key->impl;
    uint8_t pub[1 + 2 * REC_BYTES];
    pub[0] = 0x04; /* uncompressed SEC 1 point */
    memcpy(pub + 1, k->x, REC_BYTES);
    memcpy(pub + 1 + REC_BYTES, k->y, REC_BYTES);
    int priv = include_private && k->has_d;
    BIGNUM *bd = priv ? BN_secure_new() : NULL;
    if (priv && (!bd || !BN_bin2bn(k->d, (int)REC_BYTES, bd))) {
        BN_clear_free(bd);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    int pushed = b && OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, "SM2", 0) &&
                 OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof pub) &&
                 (!priv || OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_PRIV_KEY, bd));
    int rc = dsig_pk_from_builder("SM2", b, pushed, priv, "SM2 key parameters", (EVP_PKEY **)out);
    BN_clear_free(bd);
    return rc;
}

/* Take an OpenSSL SM2 key (from PEM) through the JWK validation; other keys: DSIG_E_KEY_MISMATCH. */
static int sm2_from_pkey(struct dsig_key *key, void *pk)
{
    EVP_PKEY *pkey = pk;
    char gname[64];
    size_t glen = 0;
    if (!EVP_PKEY_is_a(pkey, "SM2") && !EVP_PKEY_is_a(pkey, "EC"))
        return DSIG_E_KEY_MISMATCH;
    if (!EVP_PKEY_get_group_name(pkey, gname, sizeof gname, &glen) || strcmp(gname, "SM2") != 0) {
        ERR_clear_error();
        return DSIG_E_KEY_MISMATCH;
    }
    uint8_t enc[1 + 2 * REC_BYTES + 8], d[REC_BYTES];
    size_t elen = 0;
    if (!EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, enc, sizeof enc, &elen) ||
        elen != 1 + 2 * REC_BYTES || enc[0] != 0x04) {
        ERR_clear_error();
        return dsig_fail(DSIG_E_POINT, "SM2 key: the public point is not an uncompressed 65-byte point");
    }
    BIGNUM *bd = NULL;
    int has_d = EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &bd) == 1;
    ERR_clear_error();
    if (has_d && (BN_num_bytes(bd) > (int)REC_BYTES || BN_bn2binpad(bd, d, (int)REC_BYTES) < 0)) {
        BN_clear_free(bd);
        return dsig_fail(DSIG_E_KEY, "SM2 private key \"d\" is not in [1, n-2]");
    }
    BN_clear_free(bd);
    int rc = rec_build(key, enc + 1, enc + 1 + REC_BYTES, has_d ? d : NULL);
    dsig_memzero(d, sizeof d);
    return rc;
}

static const char *const sm2_pub[] = {"x", "y", NULL};
static const char *const sm2_priv[] = {"d", NULL};

/* Project-specific JWK: kty "EC", crv "SM2" (no IANA "JSON Web Key Elliptic Curve" entry exists). */
const struct dsig_keytype dsig_keytype_sm2 = {
    .kty = "EC",
    .crv = "SM2",
    .pub_members = sm2_pub,
    .priv_members = sm2_priv,
    .has_public = 1,
    .generate = rec_generate,
    .import_jwk = rec_import_jwk,
    .export_jwk = rec_export_jwk,
    .to_pkey = sm2_to_pkey,
    .from_pkey = sm2_from_pkey,
    .public_copy = rec_public_copy,
    .destroy = rec_destroy,
    .bits = rec_bits,
};

/* ---- SM2 arithmetic --------------------------------------------------------------------------- */

/* @spec GB/T 32918.2 §5.5: Z_A = SM3(ENTL_A ‖ ID_A ‖ a ‖ b ‖ x_G ‖ y_G ‖ x_A ‖ y_A), ENTL = bit length
 * of ID as 2 bytes big-endian. */
static int sm2_za(struct rec_ctx *c, const uint8_t *id, size_t id_len, const uint8_t x[REC_BYTES],
                  const uint8_t y[REC_BYTES], uint8_t za[REC_BYTES])
{
    if (id_len > 8191)
        return dsig_fail(DSIG_E_ARG, "SM2 identifier of %zu bytes is longer than 8191", id_len);
    uint8_t consts[4][REC_BYTES];
    int rc = rec_curve_bytes(c, consts[0], consts[1], consts[2], consts[3]);
    if (rc)
        return rc;
    uint8_t entl[2] = {(uint8_t)((id_len * 8) >> 8), (uint8_t)(id_len * 8)};
    gcry_md_hd_t h;
    if (gcry_md_open(&h, GCRY_MD_SM3, 0))
        return dsig_fail(DSIG_E_CRYPTO, "libgcrypt: cannot open SM3");
    gcry_md_write(h, entl, 2);
    gcry_md_write(h, id, id_len);
    gcry_md_write(h, consts, sizeof consts);
    gcry_md_write(h, x, REC_BYTES);
    gcry_md_write(h, y, REC_BYTES);
    memcpy(za, gcry_md_read(h, GCRY_MD_SM3), REC_BYTES);
    gcry_md_close(h);
    return DSIG_OK;
}

/*
 * @spec GB/T 32918.2 §6.1 steps A3-A7: k in [1, n-1] (given, or fresh from the OS RNG), (x1, y1) = k·G,
 * r = (e + x1) mod n, retry if r = 0 or r + k = n; s = (1 + d)^-1 (k - r·d) mod n, retry if s = 0.
 * (1 + d)^-1 is (1 + d)^(n-2) mod n (n is prime): libgcrypt's powm on a secure base, not invm.
 */
static int sm2_sign_digest(struct rec_ctx *c, const uint8_t d[REC_BYTES], const uint8_t e[REC_BYTES],
                           const uint8_t *kfix, uint8_t sig[SM2_SIG_BYTES])
{
    int rc = DSIG_OK;
    gcry_mpi_t md = rec_mpi(d, REC_BYTES, 1), me = rec_mpi(e, REC_BYTES, 0);
    gcry_mpi_t inv = gcry_mpi_snew(256), ex = gcry_mpi_new(256), x1 = gcry_mpi_new(256);
    gcry_mpi_t r = gcry_mpi_new(256), s = gcry_mpi_snew(256), t = gcry_mpi_snew(256), k = NULL;
    gcry_mpi_point_t K = gcry_mpi_point_new(0);
    if (!md || !me) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        goto out;
    }
    gcry_mpi_add_ui(t, md, 1);
    gcry_mpi_sub_ui(ex, c->n, 2);
    gcry_mpi_powm(inv, t, ex, c->n); /* (1 + d)^-1; d < n - 1 is ensured: 1 + d != n for valid keys */
    for (int tries = 0;; tries++) {
        if (tries > 64) {
            rc = dsig_fail(DSIG_E_RNG, "SM2 signing: no usable nonce after 64 tries");
            goto out;
        }
        gcry_mpi_release(k);
        k = NULL;
        if (kfix) {
            if (tries > 0) {
                rc = dsig_fail(DSIG_E_ARG, "SM2 signing: the given nonce k gives r = 0, r + k = n or s = 0");
                goto out;
            }
            k = rec_mpi(kfix, REC_BYTES, 1);
            if (!k || gcry_mpi_cmp_ui(k, 0) == 0 || gcry_mpi_cmp(k, c->n) >= 0) {
                rc = dsig_fail(DSIG_E_ARG, "SM2 signing: the given nonce k is not in [1, n-1]");
                goto out;
            }
        } else if ((rc = rec_random_scalar(c, &k))) {
            goto out;
        }
        gcry_mpi_ec_mul(K, k, c->G, c->ctx);
        if ((rc = rec_affine_x(c, K, x1)))
            goto out;
        gcry_mpi_addm(r, me, x1, c->n);
        gcry_mpi_add(t, r, k);
        if (gcry_mpi_cmp_ui(r, 0) == 0 || gcry_mpi_cmp(t, c->n) == 0)
            continue;
        gcry_mpi_mulm(t, r, md, c->n);
        gcry_mpi_subm(t, k, t, c->n);
        gcry_mpi_mulm(s, inv, t, c->n);
        if (gcry_mpi_cmp_ui(s, 0) == 0)
            continue;
        break;
    }
    if (!(rc = rec_mpi_out(r, sig, REC_BYTES)))
        rc = rec_mpi_out(s, sig + REC_BYTES, REC_BYTES);
out:
    gcry_mpi_release(md);
    gcry_mpi_release(me);
    gcry_mpi_release(inv);
    gcry_mpi_release(ex);
    gcry_mpi_release(x1);
    gcry_mpi_release(r);
    gcry_mpi_release(s);
    gcry_mpi_release(t);
    gcry_mpi_release(k);
    gcry_mpi_point_release(K);
    return rc;
}

/* @spec GB/T 32918.2 §7.1 steps B1-B7: r, s in [1, n-1]; t = (r + s) mod n != 0; (x1, y1) = s·G + t·P;
 * valid iff (e + x1) mod n = r. Public data only. DSIG_OK or DSIG_E_VERIFY. */
static int sm2_verify_digest(struct rec_ctx *c, const uint8_t x[REC_BYTES], const uint8_t y[REC_BYTES],
                             const uint8_t e[REC_BYTES], const uint8_t sig[SM2_SIG_BYTES])
{
    int rc = DSIG_E_VERIFY;
    gcry_mpi_t r = rec_mpi(sig, REC_BYTES, 0), s = rec_mpi(sig + REC_BYTES, REC_BYTES, 0);
    gcry_mpi_t me = rec_mpi(e, REC_BYTES, 0), t = gcry_mpi_new(256), x1 = gcry_mpi_new(256);
    gcry_mpi_point_t P = rec_point(c, x, y), A = gcry_mpi_point_new(0), B = gcry_mpi_point_new(0);
    if (!r || !s || !me) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        goto out;
    }
    if (!P) {
        rc = dsig_fail(DSIG_E_POINT, "SM2 public key is not a valid curve point");
        goto out;
    }
    if (gcry_mpi_cmp_ui(r, 0) == 0 || gcry_mpi_cmp(r, c->n) >= 0 || gcry_mpi_cmp_ui(s, 0) == 0 ||
        gcry_mpi_cmp(s, c->n) >= 0) {
        rc = dsig_fail(DSIG_E_VERIFY, "SM2-SM3 signature: r or s is not in [1, n-1]");
        goto out;
    }
    gcry_mpi_addm(t, r, s, c->n);
    if (gcry_mpi_cmp_ui(t, 0) == 0) {
        rc = dsig_fail(DSIG_E_VERIFY, "SM2-SM3 signature: (r + s) mod n = 0");
        goto out;
    }
    gcry_mpi_ec_mul(A, s, c->G, c->ctx);
    gcry_mpi_ec_mul(B, t, P, c->ctx);
    gcry_mpi_ec_add(A, A, B, c->ctx);
    if (gcry_mpi_ec_get_affine(x1, NULL, A, c->ctx)) {
        rc = dsig_fail(DSIG_E_VERIFY, "SM2-SM3 signature does not verify (s·G + t·P is infinity)");
        goto out;
    }
    gcry_mpi_addm(t, me, x1, c->n);
    rc = gcry_mpi_cmp(t, r) == 0 ? DSIG_OK
                                 : dsig_fail(DSIG_E_VERIFY, "SM2-SM3 signature does not verify");
out:
    gcry_mpi_release(r);
    gcry_mpi_release(s);
    gcry_mpi_release(me);
    gcry_mpi_release(t);
    gcry_mpi_release(x1);
    gcry_mpi_point_release(P);
    gcry_mpi_point_release(A);
    gcry_mpi_point_release(B);
    return rc;
}

/* ---- streaming operations ------------------------------------------------------------------ */

struct sm2_state {
    gcry_md_hd_t md;            /* SM3 over Z_A ‖ M */
    const dsig_alg *alg;
    struct rec_key key;         /* a copy: the state does not depend on the caller's key object */
    int bad_sig;                /* verify: the signature is not 64 bytes */
    size_t sig_len;
    uint8_t sig[SM2_SIG_BYTES]; /* verify: the presented signature */
};

/* Wipe and free a state (gcry_md_close wipes the hash context). */
static void sm2_free_state(void *state)
{
    struct sm2_state *st = state;
    if (!st)
        return;
    if (st->md)
        gcry_md_close(st->md);
    dsig_xfree(st, sizeof *st);
}

/* A state for `key` with SM3 started on Z_A for the identifier (id, id_len). */
static int sm2_state_new(struct sm2_state **out, const dsig_alg *alg, const struct dsig_key *key,
                         const uint8_t *id, size_t id_len)
{
    *out = NULL;
    const struct rec_key *k = key->impl;
    if (!k)
        return dsig_fail(DSIG_E_KEY, "SM2 key has no material");
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, k->cv, NULL);
    if (rc)
        return rc;
    uint8_t za[REC_BYTES];
    rc = sm2_za(&c, id, id_len, k->x, k->y, za);
    rec_ctx_close(&c);
    if (rc)
        return rc;
    struct sm2_state *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (gcry_md_open(&st->md, GCRY_MD_SM3, 0)) {
        st->md = NULL;
        sm2_free_state(st);
        return dsig_fail(DSIG_E_CRYPTO, "libgcrypt: cannot open SM3");
    }
    gcry_md_write(st->md, za, REC_BYTES);
    st->alg = alg;
    st->key = *k;
    *out = st;
    return DSIG_OK;
}

/* The identifier the options ask for: the context if given, else the GM/T 0009 default. Refuses the
 * options SM2 does not define (a deterministic variant, a pre-hash). */
static int sm2_id(const dsig_sign_opts *opts, const uint8_t **id, size_t *id_len)
{
    *id = sm2_default_id;
    *id_len = sizeof sm2_default_id;
    if (!opts)
        return DSIG_OK;
    if (opts->deterministic)
        return dsig_fail(DSIG_E_UNSUPPORTED, "SM2-SM3 has no deterministic variant");
    if (opts->prehash)
        return dsig_fail(DSIG_E_UNSUPPORTED, "SM2-SM3 takes no pre-hash (e = SM3(Z_A || M) is fixed)");
    if (opts->context_len) {
        *id = opts->context;
        *id_len = opts->context_len;
    }
    return DSIG_OK;
}

/* Ops hook: start a signature with the identifier from the options (NULL: the default
 * "1234567812345678"). */
static int sm2_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                         const dsig_sign_opts *opts)
{
    *state = NULL;
    const uint8_t *id;
    size_t id_len;
    int rc = sm2_id(opts, &id, &id_len);
    if (rc)
        return rc;
    if (!key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "SM2-SM3 signing needs the private key");
    return sm2_state_new((struct sm2_state **)state, alg, key, id, id_len);
}

/* Hot path: one SM3 write. */
static int sm2_update(void *state, const uint8_t *data, size_t len)
{
    struct sm2_state *st = state;
    gcry_md_write(st->md, data, len);
    return DSIG_OK;
}

/* e = SM3(Z_A ‖ M), then the signature r ‖ s. */
static int sm2_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct sm2_state *st = state;
    if (cap < SM2_SIG_BYTES)
        return dsig_fail(DSIG_E_BUFFER, "SM2-SM3 signature needs %u bytes, buffer has %zu",
                         SM2_SIG_BYTES, cap);
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, st->key.cv, NULL);
    if (rc)
        return rc;
    rc = sm2_sign_digest(&c, st->key.d, gcry_md_read(st->md, GCRY_MD_SM3), NULL, sig);
    rec_ctx_close(&c);
    if (rc == DSIG_OK)
        *sig_len = SM2_SIG_BYTES;
    return rc;
}

/* Start a verification; a signature of the wrong length is remembered and rejected at final. */
static int sm2_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                           const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts)
{
    *state = NULL;
    const uint8_t *id;
    size_t id_len;
    int rc = sm2_id(opts, &id, &id_len);
    struct sm2_state *st = NULL;
    if (rc || (rc = sm2_state_new(&st, alg, key, id, id_len)))
        return rc;
    st->sig_len = sig_len;
    if (sig_len != SM2_SIG_BYTES || !sig)
        st->bad_sig = 1;
    else
        memcpy(st->sig, sig, SM2_SIG_BYTES);
    *state = st;
    return DSIG_OK;
}

/* Finish e and check r ‖ s: DSIG_OK or DSIG_E_VERIFY. */
static int sm2_verify_final(void *state)
{
    struct sm2_state *st = state;
    if (st->bad_sig)
        return dsig_fail(DSIG_E_VERIFY, "SM2-SM3 signature must be exactly %u bytes (r||s), got %zu",
                         SM2_SIG_BYTES, st->sig_len);
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, st->key.cv, NULL);
    if (rc)
        return rc;
    rc = sm2_verify_digest(&c, st->key.x, st->key.y, gcry_md_read(st->md, GCRY_MD_SM3), st->sig);
    rec_ctx_close(&c);
    return rc;
}

static const struct dsig_alg_ops sm2_ops = {
    .sign_init = sm2_sign_init,
    .sign_update = sm2_update,
    .sign_final = sm2_sign_final,
    .verify_init = sm2_verify_init,
    .verify_update = sm2_update,
    .verify_final = sm2_verify_final,
    .free_state = sm2_free_state,
};

/* @spec GB/T 32918.2 with SM3 on sm2p256v1; project name (no JOSE registration). */
static const dsig_alg alg_sm2_sm3 = {
    .name = "SM2-SM3",
    .family = "SM2",
    .description = "SM2 signature with SM3 on sm2p256v1 (GB/T 32918.2), ID 1234567812345678 by default",
    .keytype = &dsig_keytype_sm2,
    .baseline = "SM3",
    .security_bits = 128,
    .flags = DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED | DSIG_ALG_OPTIONS,
    .sig_max = SM2_SIG_BYTES,
    .min_key_bits = 0,
    .default_key_bits = 256,
    .ops = &sm2_ops,
    .params = NULL,
};

const dsig_alg *const dsig_sm2_algs[] = {&alg_sm2_sm3, NULL};

/* ---- test hooks (regional_ec.h) ----------------------------------------------------------- */

int dsig_sm2_test_za(const struct rec_explicit *ep, const uint8_t *id, size_t id_len,
                     const uint8_t x[REC_BYTES], const uint8_t y[REC_BYTES], uint8_t za[REC_BYTES])
{
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, &dsig_rec_sm2, ep);
    if (rc)
        return rc;
    rc = sm2_za(&c, id, id_len, x, y, za);
    rec_ctx_close(&c);
    return rc;
}

int dsig_sm2_test_sign(const struct rec_explicit *ep, const uint8_t d[REC_BYTES],
                       const uint8_t e[REC_BYTES], const uint8_t *k, uint8_t sig[2 * REC_BYTES])
{
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, &dsig_rec_sm2, ep);
    if (rc)
        return rc;
    rc = sm2_sign_digest(&c, d, e, k, sig);
    rec_ctx_close(&c);
    return rc;
}

int dsig_sm2_test_verify(const struct rec_explicit *ep, const uint8_t x[REC_BYTES],
                         const uint8_t y[REC_BYTES], const uint8_t e[REC_BYTES],
                         const uint8_t sig[2 * REC_BYTES])
{
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, &dsig_rec_sm2, ep);
    if (rc)
        return rc;
    rc = sm2_verify_digest(&c, x, y, e, sig);
    rec_ctx_close(&c);
    return rc;
}
