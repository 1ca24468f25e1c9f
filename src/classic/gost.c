/*
 * GOST R 34.10-2012 signatures with 256-bit keys and the GOST R 34.11-2012 (Streebog-256) hash
 * (RFC 7091, RFC 6986), algorithm "GOST3410-2012-256", on the four TC26 256-bit parameter sets, one
 * key type each (kty "EC"):
 *   crv "GOST-256-A"  id-tc26-gost-3410-2012-256-paramSetA (1.2.643.7.1.2.1.1.1), twisted Edwards
 *                     curve in Weierstrass form, cofactor 4 (libgcrypt "GOST2012-256-A", engine "TCA");
 *   crv "GOST-256-B"  paramSetB (1.2.643.7.1.2.1.1.2) = CryptoPro-A of RFC 4357 — the default
 *                     (libgcrypt "GOST2001-CryptoPro-A", engine "A"/"TCB");
 *   crv "GOST-256-C"  paramSetC (1.2.643.7.1.2.1.1.3) = CryptoPro-B (engine "B"/"TCC");
 *   crv "GOST-256-D"  paramSetD (1.2.643.7.1.2.1.1.4) = CryptoPro-C (engine "C"/"TCD").
 * The one algorithm accepts all four (dsig_alg.keytypes); keygen picks the set with
 * dsig_keygen_params.param. See docs/regional.md.
 *
 * One pass: update is a bare Streebog-256 gcry_md_write; final signs the digest with libgcrypt's EC
 * point arithmetic.
 *
 * Byte orders (the usual GOST conventions, which the OpenSSL GOST engine and Botan follow):
 *  - the message digest h is the Streebog output byte string; the integer α of GOST R 34.10-2012 §6.1
 *    step 2 is h read little-endian (the standard writes vectors most significant bit first, and the
 *    hash's byte string is that vector reversed);
 *  - the signature is s ‖ r, each 32 bytes big-endian: RFC 4491 §2.2.2's 64-octet signature value
 *    (the standard's vector ζ = r̄ ‖ s̄ written most significant bit first, stored from its least
 *    significant end... as every implementation does it: s first, then r, each big-endian);
 *  - JWK members x, y, d are 32-byte big-endian, as every other EC JWK (GOST's own
 *    SubjectPublicKeyInfo and PKCS#8 encodings are little-endian; we do not produce them).
 */
#include <string.h>
#include <strings.h>

#include "classic/regional_ec.h"
#include "core/backend.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"

#define GOST_SIG_BYTES (2 * REC_BYTES)

static const char *const gost_pub[] = {"x", "y", NULL};
static const char *const gost_priv[] = {"d", NULL};

/* Key generation on a named parameter set: `param` is the crv ("GOST-256-A".."GOST-256-D"), the TC26
 * name ("id-tc26-gost-3410-2012-256-paramSetA".."D") or its OID, any case; NULL = the key type's own
 * set (GOST-256-B through dsig_key_generate). Bare letters are refused: the GOST engine's "A" is
 * TC26's B. The key takes the chosen set's key type. */
static int gost_generate_param(struct dsig_key *key, const char *param, unsigned bits, dsig_rng *rng)
{
    if (param) {
        const struct rec_curve *cv = NULL;
        for (const struct rec_curve *const *c = dsig_rec_gost_curves; *c && !cv; c++)
            if (strcasecmp(param, (*c)->type->crv) == 0 || strcasecmp(param, (*c)->std_name) == 0 ||
                strcmp(param, (*c)->oid) == 0)
                cv = *c;
        if (!cv)
            return dsig_fail(DSIG_E_ARG, "GOST3410-2012-256: unknown parameter set \"%s\"; use GOST-256-A, "
                             "GOST-256-B (default), GOST-256-C or GOST-256-D (or the TC26 name "
                             "id-tc26-gost-3410-2012-256-paramSetA..D, or its OID)", param);
        key->type = cv->type;
    }
    return rec_generate(key, bits, rng);
}

/* Project-specific JWK: kty "EC", crv "GOST-256-A".."GOST-256-D" (no JOSE registration for GOST
 * curves exists). No PEM: OpenSSL 3.0's default provider has no GOST keys. */
#define GOST_KEYTYPE(crvname)                                                                          \
    {                                                                                                  \
        .kty = "EC", .crv = crvname, .pub_members = gost_pub, .priv_members = gost_priv,               \
        .has_public = 1, .generate = rec_generate, .import_jwk = rec_import_jwk,                       \
        .export_jwk = rec_export_jwk, .to_pkey = NULL, .from_pkey = NULL,                              \
        .public_copy = rec_public_copy, .destroy = rec_destroy, .bits = rec_bits,                      \
        .generate_param = gost_generate_param,                                                         \
    }

const struct dsig_keytype dsig_keytype_gost256a = GOST_KEYTYPE("GOST-256-A");
const struct dsig_keytype dsig_keytype_gost256b = GOST_KEYTYPE("GOST-256-B");
const struct dsig_keytype dsig_keytype_gost256c = GOST_KEYTYPE("GOST-256-C");
const struct dsig_keytype dsig_keytype_gost256d = GOST_KEYTYPE("GOST-256-D");

/* ---- GOST R 34.10-2012 arithmetic ------------------------------------------------------------- */

/* @spec GOST R 34.10-2012 §6.1 steps 2-3 (= RFC 7091 §6.1): α = h read little-endian, e = α mod q,
 * e = 1 if that is 0. */
static gcry_mpi_t gost_e(struct rec_ctx *c, const uint8_t h[REC_BYTES])
{
    uint8_t be[REC_BYTES];
    for (size_t i = 0; i < REC_BYTES; i++)
        be[i] = h[REC_BYTES - 1 - i];
    gcry_mpi_t e = rec_mpi(be, REC_BYTES, 0);
    if (e) {
        gcry_mpi_mod(e, e, c->n);
        if (gcry_mpi_cmp_ui(e, 0) == 0)
            gcry_mpi_set_ui(e, 1);
    }
    return e;
}

/* @spec GOST R 34.10-2012 §6.1 steps 3-6: k in [1, q-1] (given, or from the OS RNG), C = k·P,
 * r = x_C mod q (retry if 0), s = (r·d + k·e) mod q (retry if 0); output s ‖ r. */
static int gost_sign_digest(struct rec_ctx *c, const uint8_t d[REC_BYTES], const uint8_t h[REC_BYTES],
                            const uint8_t *kfix, uint8_t sig[GOST_SIG_BYTES])
{
    int rc = DSIG_OK;
    gcry_mpi_t md = rec_mpi(d, REC_BYTES, 1), e = gost_e(c, h), xc = gcry_mpi_new(256);
    gcry_mpi_t r = gcry_mpi_new(256), s = gcry_mpi_snew(256), t = gcry_mpi_snew(256), k = NULL;
    gcry_mpi_point_t C = gcry_mpi_point_new(0);
    if (!md || !e) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        goto out;
    }
    for (int tries = 0;; tries++) {
        if (tries > 64) {
            rc = dsig_fail(DSIG_E_RNG, "GOST signing: no usable nonce after 64 tries");
            goto out;
        }
        gcry_mpi_release(k);
        k = NULL;
        if (kfix) {
            if (tries > 0) {
                rc = dsig_fail(DSIG_E_ARG, "GOST signing: the given nonce k gives r = 0 or s = 0");
                goto out;
            }
            k = rec_mpi(kfix, REC_BYTES, 1);
            if (!k || gcry_mpi_cmp_ui(k, 0) == 0 || gcry_mpi_cmp(k, c->n) >= 0) {
                rc = dsig_fail(DSIG_E_ARG, "GOST signing: the given nonce k is not in [1, q-1]");
                goto out;
            }
        } else if ((rc = rec_random_scalar(c, &k))) {
            goto out;
        }
        gcry_mpi_ec_mul(C, k, c->G, c->ctx);
        if ((rc = rec_affine_x(c, C, xc)))
            goto out;
        gcry_mpi_mod(r, xc, c->n);
        if (gcry_mpi_cmp_ui(r, 0) == 0)
            continue;
        gcry_mpi_mulm(s, r, md, c->n);
        gcry_mpi_mulm(t, k, e, c->n);
        gcry_mpi_addm(s, s, t, c->n);
        if (gcry_mpi_cmp_ui(s, 0) == 0)
            continue;
        break;
    }
    if (!(rc = rec_mpi_out(s, sig, REC_BYTES)))
        rc = rec_mpi_out(r, sig + REC_BYTES, REC_BYTES);
out:
    gcry_mpi_release(md);
    gcry_mpi_release(e);
    gcry_mpi_release(xc);
    gcry_mpi_release(r);
    gcry_mpi_release(s);
    gcry_mpi_release(t);
    gcry_mpi_release(k);
    gcry_mpi_point_release(C);
    return rc;
}

/* @spec GOST R 34.10-2012 §6.2: 0 < r, s < q; v = e^-1 mod q; z1 = s·v, z2 = -r·v mod q;
 * C = z1·P + z2·Q; valid iff x_C mod q = r. Public data only. DSIG_OK or DSIG_E_VERIFY. */
static int gost_verify_digest(struct rec_ctx *c, const uint8_t x[REC_BYTES], const uint8_t y[REC_BYTES],
                              const uint8_t h[REC_BYTES], const uint8_t sig[GOST_SIG_BYTES])
{
    int rc = DSIG_E_VERIFY;
    gcry_mpi_t s = rec_mpi(sig, REC_BYTES, 0), r = rec_mpi(sig + REC_BYTES, REC_BYTES, 0);
    gcry_mpi_t e = gost_e(c, h), v = gcry_mpi_new(256), z1 = gcry_mpi_new(256), z2 = gcry_mpi_new(256);
    gcry_mpi_t xc = gcry_mpi_new(256);
    gcry_mpi_point_t Q = rec_point(c, x, y), A = gcry_mpi_point_new(0), B = gcry_mpi_point_new(0);
    if (!r || !s || !e) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        goto out;
    }
    if (!Q) {
        rc = dsig_fail(DSIG_E_POINT, "GOST public key is not a valid curve point");
        goto out;
    }
    if (gcry_mpi_cmp_ui(r, 0) == 0 || gcry_mpi_cmp(r, c->n) >= 0 || gcry_mpi_cmp_ui(s, 0) == 0 ||
        gcry_mpi_cmp(s, c->n) >= 0) {
        rc = dsig_fail(DSIG_E_VERIFY, "GOST3410-2012-256 signature: r or s is not in [1, q-1]");
        goto out;
    }
    if (!gcry_mpi_invm(v, e, c->n)) {
        rc = dsig_fail(DSIG_E_INTERNAL, "GOST: e has no inverse modulo q");
        goto out;
    }
    gcry_mpi_mulm(z1, s, v, c->n);
    gcry_mpi_mulm(z2, r, v, c->n);
    gcry_mpi_subm(z2, c->n, z2, c->n); /* -r·v mod q */
    gcry_mpi_ec_mul(A, z1, c->G, c->ctx);
    gcry_mpi_ec_mul(B, z2, Q, c->ctx);
    gcry_mpi_ec_add(A, A, B, c->ctx);
    if (gcry_mpi_ec_get_affine(xc, NULL, A, c->ctx)) {
        rc = dsig_fail(DSIG_E_VERIFY, "GOST3410-2012-256 signature does not verify (C is infinity)");
        goto out;
    }
    gcry_mpi_mod(xc, xc, c->n);
    rc = gcry_mpi_cmp(xc, r) == 0 ? DSIG_OK
                                  : dsig_fail(DSIG_E_VERIFY, "GOST3410-2012-256 signature does not verify");
out:
    gcry_mpi_release(r);
    gcry_mpi_release(s);
    gcry_mpi_release(e);
    gcry_mpi_release(v);
    gcry_mpi_release(z1);
    gcry_mpi_release(z2);
    gcry_mpi_release(xc);
    gcry_mpi_point_release(Q);
    gcry_mpi_point_release(A);
    gcry_mpi_point_release(B);
    return rc;
}

/* ---- streaming operations ------------------------------------------------------------------ */

struct gost_state {
    gcry_md_hd_t md;             /* Streebog-256 over M */
    const dsig_alg *alg;
    struct rec_key key;          /* a copy: independent of the caller's key object */
    int bad_sig;                 /* verify: the signature is not 64 bytes */
    size_t sig_len;
    uint8_t sig[GOST_SIG_BYTES]; /* verify: the presented signature */
};

/* Wipe and free a state (gcry_md_close wipes the hash context). */
static void gost_free_state(void *state)
{
    struct gost_state *st = state;
    if (!st)
        return;
    if (st->md)
        gcry_md_close(st->md);
    dsig_xfree(st, sizeof *st);
}

/* A state for `key` with Streebog-256 started. */
static int gost_state_new(struct gost_state **out, const dsig_alg *alg, const struct dsig_key *key)
{
    *out = NULL;
    const struct rec_key *k = key->impl;
    if (!k)
        return dsig_fail(DSIG_E_KEY, "GOST key has no material");
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    struct gost_state *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (gcry_md_open(&st->md, GCRY_MD_STRIBOG256, 0)) {
        st->md = NULL;
        gost_free_state(st);
        return dsig_fail(DSIG_E_CRYPTO, "libgcrypt: cannot open Streebog-256");
    }
    st->alg = alg;
    st->key = *k;
    *out = st;
    return DSIG_OK;
}

/* Start a signature. */
static int gost_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                          const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    *state = NULL;
    if (!key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "GOST3410-2012-256 signing needs the private key");
    return gost_state_new((struct gost_state **)state, alg, key);
}

/* Hot path: one Streebog write. */
static int gost_update(void *state, const uint8_t *data, size_t len)
{
    struct gost_state *st = state;
    gcry_md_write(st->md, data, len);
    return DSIG_OK;
}

/* Finish h = Streebog-256(M) and sign it: s ‖ r. */
static int gost_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct gost_state *st = state;
    if (cap < GOST_SIG_BYTES)
        return dsig_fail(DSIG_E_BUFFER, "GOST3410-2012-256 signature needs %u bytes, buffer has %zu",
                         GOST_SIG_BYTES, cap);
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, st->key.cv, NULL);
    if (rc)
        return rc;
    rc = gost_sign_digest(&c, st->key.d, gcry_md_read(st->md, GCRY_MD_STRIBOG256), NULL, sig);
    rec_ctx_close(&c);
    if (rc == DSIG_OK)
        *sig_len = GOST_SIG_BYTES;
    return rc;
}

/* Start a verification; a signature of the wrong length is remembered and rejected at final. */
static int gost_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                            const uint8_t *sig, size_t sig_len,
                            const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    struct gost_state *st = NULL;
    int rc = gost_state_new(&st, alg, key);
    *state = st;
    if (rc)
        return rc;
    st->sig_len = sig_len;
    if (sig_len != GOST_SIG_BYTES || !sig)
        st->bad_sig = 1;
    else
        memcpy(st->sig, sig, GOST_SIG_BYTES);
    return DSIG_OK;
}

/* Finish h and check s ‖ r: DSIG_OK or DSIG_E_VERIFY. */
static int gost_verify_final(void *state)
{
    struct gost_state *st = state;
    if (st->bad_sig)
        return dsig_fail(DSIG_E_VERIFY, "GOST3410-2012-256 signature must be exactly %u bytes (s||r), "
                         "got %zu", GOST_SIG_BYTES, st->sig_len);
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, st->key.cv, NULL);
    if (rc)
        return rc;
    rc = gost_verify_digest(&c, st->key.x, st->key.y, gcry_md_read(st->md, GCRY_MD_STRIBOG256), st->sig);
    rec_ctx_close(&c);
    return rc;
}

static const struct dsig_alg_ops gost_ops = {
    .sign_init = gost_sign_init,
    .sign_update = gost_update,
    .sign_final = gost_sign_final,
    .verify_init = gost_verify_init,
    .verify_update = gost_update,
    .verify_final = gost_verify_final,
    .free_state = gost_free_state,
};

/* Every key type the algorithm takes; B (keytype below) is the default. */
static const struct dsig_keytype *const gost_keytypes[] = {&dsig_keytype_gost256a, &dsig_keytype_gost256b,
                                                          &dsig_keytype_gost256c, &dsig_keytype_gost256d,
                                                          NULL};

/* @spec GOST R 34.10-2012 (RFC 7091) 256-bit with GOST R 34.11-2012 256-bit; project name. */
static const dsig_alg alg_gost256 = {
    .name = "GOST3410-2012-256",
    .family = "GOST R 34.10-2012",
    .description = "GOST R 34.10-2012 256-bit with Streebog-256 on the TC26 256-bit parameter sets "
                   "A-D (default paramSetB)",
    .keytype = &dsig_keytype_gost256b,
    .keytypes = gost_keytypes,
    .baseline = "Streebog-256",
    .security_bits = 128,
    .flags = DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED,
    .sig_max = GOST_SIG_BYTES,
    .min_key_bits = 0,
    .default_key_bits = 256,
    .ops = &gost_ops,
    .params = NULL,
};

const dsig_alg *const dsig_gost_algs[] = {&alg_gost256, NULL};

/* ---- test hooks (regional_ec.h) ----------------------------------------------------------- */

int dsig_gost_test_sign(const struct rec_explicit *ep, const uint8_t d[REC_BYTES],
                        const uint8_t h[REC_BYTES], const uint8_t *k, uint8_t sig[2 * REC_BYTES])
{
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, &dsig_rec_gost256b, ep);
    if (rc)
        return rc;
    rc = gost_sign_digest(&c, d, h, k, sig);
    rec_ctx_close(&c);
    return rc;
}

int dsig_gost_test_verify(const struct rec_explicit *ep, const uint8_t x[REC_BYTES],
                          const uint8_t y[REC_BYTES], const uint8_t h[REC_BYTES],
                          const uint8_t sig[2 * REC_BYTES])
{
    struct rec_ctx c;
    int rc = rec_ctx_open(&c, &dsig_rec_gost256b, ep);
    if (rc)
        return rc;
    rc = gost_verify_digest(&c, x, y, h, sig);
    rec_ctx_close(&c);
    return rc;
}
