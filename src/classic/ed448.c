/*
 * Ed448 (RFC 8032 §5.2): key type "OKP"/"Ed448" and algorithm "Ed448" (RFC 9864).
 *
 * One-shot sign/verify is exact RFC 8032 through OpenSSL's EVP_DigestSign/EVP_DigestVerify. The
 * streaming path reads the payload once: the message hash is SHAKE256 through OpenSSL EVP (fetched
 * once), the nonce r is hedged random (docs/eddsa-one-pass.md), and the group arithmetic is libgcrypt's
 * EC point API on its "Ed448" curve. libgcrypt's own point decoder is not used: point encoding and
 * strict decoding (RFC 8032 §5.2.2/§5.2.3) are written here over libgcrypt MPIs.
 */
#include <string.h>

#include <gcrypt.h>
#include <openssl/err.h>

#include "classic/eddsa.h"
#include "core/error_internal.h"
#include "core/keytype.h"

#define ED448_KEY_BYTES 57
#define ED448_SIG_BYTES 114

/* dom4(0, "") = "SigEd448" ‖ octet(0) ‖ octet(0)  (RFC 8032 §5.2). */
static const uint8_t ed448_dom4[10] = {'S', 'i', 'g', 'E', 'd', '4', '4', '8', 0, 0};

/* Key impl: the shared part (seed, pk = A, s = clamped scalar, prefix = second half of
 * SHAKE256(seed, 114)) plus the OpenSSL key of the one-shot path. */
struct ed448_key {
    struct dsig_eddsa_key base; /* first: the shared hooks see only this */
    EVP_PKEY *pkey;             /* OpenSSL key for the one-shot path (private if has_seed) */
};

/* Streaming state: the shared part plus the nonce scalar. */
struct ed448_state {
    struct dsig_eddsa_state base; /* first: the shared hooks see only this */
    gcry_mpi_t r;                 /* sign: nonce scalar (secret, secure MPI; released = wiped) */
};

/* ---- MPI and point helpers ---------------------------------------------------------------- */

/* A curve context for one operation (libgcrypt contexts hold scratch state: not shared). */
static int ed448_ctx(gcry_ctx_t *ctx)
{
    if (gcry_mpi_ec_new(ctx, NULL, "Ed448"))
        return dsig_fail(DSIG_E_CRYPTO, "libgcrypt: curve Ed448 is not available");
    return DSIG_OK;
}

/* Little-endian bytes -> MPI; `secret` marks it so that libgcrypt multiplies in constant time. */
static gcry_mpi_t mpi_from_le(const uint8_t *in, size_t n, int secret)
{
    uint8_t be[114];
    for (size_t i = 0; i < n; i++)
        be[i] = in[n - 1 - i];
    gcry_mpi_t a = NULL;
    if (gcry_mpi_scan(&a, GCRYMPI_FMT_USG, be, n, NULL))
        a = NULL;
    dsig_memzero(be, n);
    if (a && secret)
        gcry_mpi_set_flag(a, GCRYMPI_FLAG_SECURE);
    return a;
}

/* MPI -> exactly n little-endian bytes; DSIG_E_INTERNAL if it does not fit. */
static int mpi_to_le(gcry_mpi_t a, uint8_t *out, size_t n)
{
    uint8_t be[114];
    size_t w = 0;
    if (n > sizeof be || gcry_mpi_print(GCRYMPI_FMT_USG, be, n, &w, a) || w > n)
        return dsig_fail(DSIG_E_INTERNAL, "Ed448: integer does not fit in %zu bytes", n);
    memset(out, 0, n);
    for (size_t i = 0; i < w; i++)
        out[i] = be[w - 1 - i];
    dsig_memzero(be, sizeof be);
    return DSIG_OK;
}

/* @spec RFC 8032 §5.2.2 — encode a point: y little-endian in 57 bytes, bit 455 = x mod 2. */
static int ed448_encode(gcry_ctx_t ctx, gcry_mpi_point_t P, uint8_t out[57])
{
    gcry_mpi_t x = gcry_mpi_new(0), y = gcry_mpi_new(0);
    int rc = DSIG_OK;
    if (gcry_mpi_ec_get_affine(x, y, P, ctx))
        rc = dsig_fail(DSIG_E_INTERNAL, "Ed448: point at infinity in projective form");
    else if ((rc = mpi_to_le(y, out, 57)) == DSIG_OK)
        out[56] |= (uint8_t)(gcry_mpi_test_bit(x, 0) ? 0x80 : 0);
    gcry_mpi_release(x);
    gcry_mpi_release(y);
    return rc;
}

/* 1 if P is the neutral element (0, 1). */
static int ed448_is_identity(gcry_ctx_t ctx, gcry_mpi_point_t P)
{
    gcry_mpi_t x = gcry_mpi_new(0), y = gcry_mpi_new(0);
    int id = gcry_mpi_ec_get_affine(x, y, P, ctx) == 0 && gcry_mpi_cmp_ui(x, 0) == 0 &&
             gcry_mpi_cmp_ui(y, 1) == 0;
    gcry_mpi_release(x);
    gcry_mpi_release(y);
    return id;
}

/*
 * @spec RFC 8032 §5.2.3 — strict decoding: y < p, the 7 unused bits zero, x = ±sqrt(u/v) with
 * u = y² − 1, v = d·y² − 1 (p ≡ 3 mod 4, so sqrt(a) = a^((p+1)/4)), reject x = 0 with x_0 = 1.
 * Public data only (no constant-time requirement). Returns a new point or NULL (not on the curve).
 */
static gcry_mpi_point_t ed448_decode(gcry_ctx_t ctx, const uint8_t in[57])
{
    if (in[56] & 0x7f)
        return NULL;
    int x0 = in[56] >> 7;
    gcry_mpi_point_t P = NULL;
    gcry_mpi_t p = gcry_mpi_ec_get_mpi("p", ctx, 1);
    gcry_mpi_t y = mpi_from_le(in, 56, 0);
    gcry_mpi_t d = gcry_mpi_new(0), u = gcry_mpi_new(0), v = gcry_mpi_new(0), t = gcry_mpi_new(0);
    gcry_mpi_t x = gcry_mpi_new(0), e = gcry_mpi_new(0), one = gcry_mpi_set_ui(NULL, 1);
    if (!p || !y || gcry_mpi_cmp(y, p) >= 0)
        goto out;
    gcry_mpi_sub_ui(d, p, 39081);          /* d = −39081 mod p */
    gcry_mpi_mulm(t, y, y, p);             /* y² */
    gcry_mpi_subm(u, t, one, p);           /* u = y² − 1 */
    gcry_mpi_mulm(v, d, t, p);
    gcry_mpi_subm(v, v, one, p);           /* v = d·y² − 1, never 0 (d is not a square) */
    if (!gcry_mpi_invm(t, v, p))
        goto out;
    gcry_mpi_mulm(t, u, t, p);             /* u/v */
    gcry_mpi_add_ui(e, p, 1);
    gcry_mpi_rshift(e, e, 2);              /* (p+1)/4 */
    gcry_mpi_powm(x, t, e, p);             /* candidate root */
    gcry_mpi_mulm(e, x, x, p);
    if (gcry_mpi_cmp(e, t) != 0)           /* u/v is not a square: not a curve point */
        goto out;
    if (gcry_mpi_cmp_ui(x, 0) == 0 && x0)
        goto out;
    if ((int)gcry_mpi_test_bit(x, 0) != x0)
        gcry_mpi_sub(x, p, x);
    /* Not gcry_mpi_ec_curve_point(): libgcrypt's Ed448 field code aborts on coordinates shorter
     * than the field size; v·x² = u above is the curve equation. */
    P = gcry_mpi_point_set(NULL, x, y, one);
out:
    gcry_mpi_release(p);
    gcry_mpi_release(y);
    gcry_mpi_release(d);
    gcry_mpi_release(u);
    gcry_mpi_release(v);
    gcry_mpi_release(t);
    gcry_mpi_release(x);
    gcry_mpi_release(e);
    gcry_mpi_release(one);
    return P;
}

/* Decode a public key and require a point of order L (not small order, no torsion component). */
static int ed448_decode_public(gcry_ctx_t ctx, const uint8_t pk[57], gcry_mpi_point_t *out)
{
    gcry_mpi_point_t A = ed448_decode(ctx, pk);
    if (!A)
        return dsig_fail(DSIG_E_POINT, "Ed448 public key \"x\" is not a valid point encoding");
    gcry_mpi_t n = gcry_mpi_ec_get_mpi("n", ctx, 1);
    gcry_mpi_point_t T = gcry_mpi_point_new(0);
    int ok = !ed448_is_identity(ctx, A);
    if (ok) {
        gcry_mpi_ec_mul(T, n, A, ctx); /* [L]A = O exactly for the prime-order subgroup */
        ok = ed448_is_identity(ctx, T);
    }
    gcry_mpi_release(n);
    gcry_mpi_point_release(T);
    if (!ok) {
        gcry_mpi_point_release(A);
        return dsig_fail(DSIG_E_POINT, "Ed448 public key \"x\" has small order or is outside the "
                                       "prime-order subgroup");
    }
    if (out)
        *out = A;
    else
        gcry_mpi_point_release(A);
    return DSIG_OK;
}

/* Internal hook (also for tests): DSIG_OK if `pk` is an acceptable Ed448 public key, else DSIG_E_POINT. */
int dsig_ed448_check_public(const uint8_t pk[57])
{
    gcry_ctx_t ctx;
    int rc = ed448_ctx(&ctx);
    if (rc == DSIG_OK) {
        rc = ed448_decode_public(ctx, pk, NULL);
        gcry_ctx_release(ctx);
    }
    return rc;
}

/* [n]B encoded, n given little-endian (secret: constant-time ladder). */
static int ed448_base_mul(const uint8_t *n_le, size_t n_len, uint8_t out[57])
{
    gcry_ctx_t ctx;
    int rc = ed448_ctx(&ctx);
    if (rc)
        return rc;
    gcry_mpi_t n = mpi_from_le(n_le, n_len, 1);
    gcry_mpi_point_t G = gcry_mpi_ec_get_point("g", ctx, 1);
    gcry_mpi_point_t P = gcry_mpi_point_new(0);
    if (!n || !G)
        rc = dsig_fail(DSIG_E_CRYPTO, "libgcrypt: Ed448 base point multiplication");
    else {
        gcry_mpi_ec_mul(P, n, G, ctx);
        rc = ed448_encode(ctx, P, out);
    }
    gcry_mpi_release(n);
    gcry_mpi_point_release(G);
    gcry_mpi_point_release(P);
    gcry_ctx_release(ctx);
    return rc;
}

/* r = h mod L kept as a secure MPI (never printed to bytes, so no length-dependent copy of the
 * secret), and R = [r]B encoded. */
static int ed448_nonce(const uint8_t h[114], gcry_mpi_t *r_out, uint8_t R[57])
{
    gcry_ctx_t ctx;
    int rc = ed448_ctx(&ctx);
    if (rc)
        return rc;
    gcry_mpi_t n = gcry_mpi_ec_get_mpi("n", ctx, 1);
    gcry_mpi_t a = mpi_from_le(h, 114, 1);
    gcry_mpi_t r = gcry_mpi_snew(0);
    gcry_mpi_point_t G = gcry_mpi_ec_get_point("g", ctx, 1);
    gcry_mpi_point_t P = gcry_mpi_point_new(0);
    if (!n || !a || !r || !G)
        rc = dsig_fail(DSIG_E_CRYPTO, "libgcrypt: Ed448 nonce");
    else {
        gcry_mpi_mod(r, a, n);
        gcry_mpi_set_flag(r, GCRYMPI_FLAG_SECURE);
        if (gcry_mpi_cmp_ui(r, 0) == 0) /* probability 2^-446; R would be the identity */
            rc = dsig_fail(DSIG_E_CRYPTO, "Ed448: nonce scalar is zero");
        else {
            gcry_mpi_ec_mul(P, r, G, ctx);
            rc = ed448_encode(ctx, P, R);
        }
    }
    gcry_mpi_release(n);
    gcry_mpi_release(a);
    gcry_mpi_point_release(G);
    gcry_mpi_point_release(P);
    gcry_ctx_release(ctx);
    if (rc)
        gcry_mpi_release(r);
    else
        *r_out = r;
    return rc;
}

/* ---- key material --------------------------------------------------------------------------- */

/* SHAKE256(seed, 114) (RFC 8032 §5.2.5). */
static int ed448_hash_seed(const uint8_t seed[57], uint8_t h[114])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && dsig_eddsa_shake256() && EVP_DigestInit_ex(c, dsig_eddsa_shake256(), NULL) &&
             EVP_DigestUpdate(c, seed, 57) && EVP_DigestFinalXOF(c, h, 114);
    EVP_MD_CTX_free(c);
    return ok ? DSIG_OK : dsig_fail_openssl(DSIG_E_CRYPTO, "Ed448: SHAKE256");
}

/* @spec RFC 8032 §5.2.5 — expand the seed: s = clamp(h[0..57)), prefix = h[57..114), A = [s]B. */
static int ed448_expand(struct dsig_eddsa_key *base)
{
    struct ed448_key *k = (struct ed448_key *)base;
    uint8_t h[114];
    int rc = ed448_hash_seed(base->seed, h);
    if (rc)
        return rc;
    memcpy(base->s, h, 57);
    base->s[0] &= 0xfc;
    base->s[55] |= 0x80;
    base->s[56] = 0;
    memcpy(base->prefix, h + 57, 57);
    dsig_memzero(h, sizeof h);
    if ((rc = ed448_base_mul(base->s, 57, base->pk)))
        return rc;
    /* Cross-check with OpenSSL, whose key object the one-shot signer uses. */
    k->pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED448, NULL, base->seed, 57);
    uint8_t opk[57];
    size_t len = sizeof opk;
    if (!k->pkey || EVP_PKEY_get_raw_public_key(k->pkey, opk, &len) != 1 || len != 57)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "Ed448 EVP_PKEY");
    if (memcmp(opk, base->pk, 57) != 0)
        return dsig_fail(DSIG_E_INTERNAL, "Ed448: libgcrypt and OpenSSL derive different public keys");
    return DSIG_OK;
}

/* A public-only key: the OpenSSL key object of the one-shot verifier. */
static int ed448_init_public(struct dsig_eddsa_key *base)
{
    struct ed448_key *k = (struct ed448_key *)base;
    k->pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED448, NULL, base->pk, 57);
    if (!k->pkey)
        return dsig_fail_openssl(DSIG_E_KEY, "Ed448 EVP_PKEY");
    return DSIG_OK;
}

/* Free the OpenSSL key object (the shared code wipes and frees the rest). */
static void ed448_release_key(struct dsig_eddsa_key *base)
{
    EVP_PKEY_free(((struct ed448_key *)base)->pkey);
}

const struct dsig_keytype dsig_keytype_ed448 = DSIG_EDDSA_KEYTYPE("Ed448");

/* ---- streaming (the skeleton is in eddsa_common.c) ------------------------------------------ */

/* r = SHAKE256(nonce seed, 114) mod L as a secure MPI, and R = [r]B. */
static int ed448_state_nonce(struct dsig_eddsa_state *base, const uint8_t *h)
{
    struct ed448_state *st = (struct ed448_state *)base;
    return ed448_nonce(h, &st->r, base->R);
}

/* Release the nonce MPI (libgcrypt wipes secure MPIs on release). */
static void ed448_release_state(struct dsig_eddsa_state *base)
{
    struct ed448_state *st = (struct ed448_state *)base;
    gcry_mpi_release(st->r);
    st->r = NULL;
}

/* @spec RFC 8032 §5.2.6 steps 5-6: k = h mod L, S = (r + k·s) mod L, signature R ‖ S. */
static int ed448_sign_finish(struct dsig_eddsa_state *base, const uint8_t *h, uint8_t *sig)
{
    struct ed448_state *st = (struct ed448_state *)base;
    gcry_ctx_t ctx = NULL;
    gcry_mpi_t n = NULL, k = NULL, s = NULL, r = NULL, S = NULL;
    int rc = ed448_ctx(&ctx);
    if (rc == DSIG_OK) {
        n = gcry_mpi_ec_get_mpi("n", ctx, 1);
        k = mpi_from_le(h, 114, 0); /* k is public (recomputed by every verifier) */
        s = mpi_from_le(base->s, 57, 1);
        r = st->r;
        st->r = NULL; /* released (wiped) below */
        S = gcry_mpi_snew(0);
        if (!n || !k || !s || !r || !S)
            rc = dsig_fail(DSIG_E_CRYPTO, "libgcrypt: Ed448 scalar arithmetic");
    }
    if (rc == DSIG_OK) {
        gcry_mpi_mod(k, k, n);
        gcry_mpi_mulm(S, k, s, n);
        gcry_mpi_addm(S, S, r, n);
        memcpy(sig, base->R, 57);
        rc = mpi_to_le(S, sig + 57, 57);
    }
    gcry_mpi_release(n);
    gcry_mpi_release(k);
    gcry_mpi_release(s);
    gcry_mpi_release(r);
    gcry_mpi_release(S);
    if (ctx)
        gcry_ctx_release(ctx);
    return rc;
}

/* @spec RFC 8032 §5.2.7 step 1: S < L and R decodes. */
static int ed448_check_sig(const uint8_t *sig)
{
    gcry_ctx_t ctx;
    int rc = ed448_ctx(&ctx);
    if (rc)
        return rc;
    gcry_mpi_t n = gcry_mpi_ec_get_mpi("n", ctx, 1);
    gcry_mpi_t S = mpi_from_le(sig + 57, 57, 0);
    gcry_mpi_point_t R = ed448_decode(ctx, sig);
    if (!n || !S)
        rc = dsig_fail(DSIG_E_CRYPTO, "libgcrypt: Ed448");
    else if (gcry_mpi_cmp(S, n) >= 0)
        rc = dsig_fail(DSIG_E_VERIFY, "Ed448 signature: S is not reduced mod L");
    else if (!R)
        rc = dsig_fail(DSIG_E_VERIFY, "Ed448 signature: R is not a valid point encoding");
    gcry_mpi_release(n);
    gcry_mpi_release(S);
    gcry_mpi_point_release(R);
    gcry_ctx_release(ctx);
    return rc;
}

/* @spec RFC 8032 §5.2.7 step 3, the cofactored equation [4][S]B = [4]R + [4][k]A (as OpenSSL). */
static int ed448_verify_finish(struct dsig_eddsa_state *st, const uint8_t *h)
{
    gcry_ctx_t ctx;
    int rc = ed448_ctx(&ctx);
    if (rc)
        return rc;
    gcry_mpi_t n = gcry_mpi_ec_get_mpi("n", ctx, 1);
    gcry_mpi_t k = mpi_from_le(h, 114, 0);
    gcry_mpi_t S = mpi_from_le(st->S, 57, 0);
    gcry_mpi_point_t G = gcry_mpi_ec_get_point("g", ctx, 1);
    gcry_mpi_point_t A = ed448_decode(ctx, st->A), R = ed448_decode(ctx, st->R);
    gcry_mpi_point_t SB = gcry_mpi_point_new(0), KA = gcry_mpi_point_new(0);
    gcry_mpi_point_t D1 = gcry_mpi_point_new(0), D2 = gcry_mpi_point_new(0);
    gcry_mpi_point_t D3 = gcry_mpi_point_new(0), D4 = gcry_mpi_point_new(0);
    /* A and R were validated at import and at init: a failure here is a backend failure. */
    if (!n || !k || !S || !G || !A || !R)
        rc = dsig_fail(DSIG_E_CRYPTO, "libgcrypt: Ed448 verification");
    if (rc == DSIG_OK) {
        gcry_mpi_mod(k, k, n);
        gcry_mpi_ec_mul(SB, S, G, ctx);  /* [S]B */
        gcry_mpi_ec_mul(KA, k, A, ctx);  /* [k]A */
        gcry_mpi_ec_sub(D1, SB, KA, ctx); /* [S]B − [k]A */
        gcry_mpi_ec_dup(D2, D1, ctx);
        gcry_mpi_ec_dup(D3, D2, ctx);     /* [4]([S]B − [k]A) */
        /* [4]R through gcry_mpi_ec_mul, which (unlike add/sub/dup) accepts a point built from
         * short coordinates. ×4 on both sides clears any small-order component. */
        gcry_mpi_t four = gcry_mpi_set_ui(NULL, 4);
        gcry_mpi_ec_mul(D4, four, R, ctx);
        gcry_mpi_release(four);
        uint8_t e1[57], e2[57];
        if ((rc = ed448_encode(ctx, D3, e1)) == DSIG_OK && (rc = ed448_encode(ctx, D4, e2)) == DSIG_OK &&
            memcmp(e1, e2, 57) != 0)
            rc = dsig_fail(DSIG_E_VERIFY, "Ed448 signature does not verify");
    }
    gcry_mpi_release(n);
    gcry_mpi_release(k);
    gcry_mpi_release(S);
    gcry_mpi_point_release(G);
    gcry_mpi_point_release(A);
    gcry_mpi_point_release(R);
    gcry_mpi_point_release(SB);
    gcry_mpi_point_release(KA);
    gcry_mpi_point_release(D1);
    gcry_mpi_point_release(D2);
    gcry_mpi_point_release(D3);
    gcry_mpi_point_release(D4);
    gcry_ctx_release(ctx);
    return rc;
}

/* ---- one-shot (exact RFC 8032; length and key checks are in eddsa_common.c) ------------------ */

/* @spec RFC 8032 §5.2.6 — deterministic signature (OpenSSL one-shot EVP_DigestSign). */
static int ed448_sign_oneshot(const struct dsig_eddsa_key *base, const uint8_t *msg, size_t len,
                              uint8_t *sig)
{
    const struct ed448_key *k = (const struct ed448_key *)base;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    size_t n = ED448_SIG_BYTES;
    int ok = c && EVP_DigestSignInit(c, NULL, NULL, NULL, k->pkey) == 1 &&
             EVP_DigestSign(c, sig, &n, msg, len) == 1 && n == ED448_SIG_BYTES;
    EVP_MD_CTX_free(c);
    if (!ok)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "Ed448: OpenSSL signing failed");
    return DSIG_OK;
}

/* @spec RFC 8032 §5.2.7 — verification (OpenSSL one-shot EVP_DigestVerify). */
static int ed448_verify_oneshot(const struct dsig_eddsa_key *base, const uint8_t *msg, size_t len,
                                const uint8_t *sig)
{
    const struct ed448_key *k = (const struct ed448_key *)base;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (EVP_DigestVerifyInit(c, NULL, NULL, NULL, k->pkey) != 1) {
        EVP_MD_CTX_free(c);
        return dsig_fail_openssl(DSIG_E_CRYPTO, "Ed448: OpenSSL verify init");
    }
    ERR_set_mark();
    int v = EVP_DigestVerify(c, sig, ED448_SIG_BYTES, msg, len);
    ERR_pop_to_mark(); /* a rejected signature is an answer, not an error to report */
    EVP_MD_CTX_free(c);
    if (v != 1)
        return dsig_fail(DSIG_E_VERIFY, "Ed448 signature does not verify");
    return DSIG_OK;
}

const struct dsig_eddsa_curve dsig_eddsa_curve_ed448 = {
    .name = "Ed448",
    .keytype = &dsig_keytype_ed448,
    .key_bytes = ED448_KEY_BYTES,
    .bits = 456,
    .evp_id = EVP_PKEY_ED448,
    .hash_name = "SHAKE256",
    .md = dsig_eddsa_shake256,
    .hash_bytes = 114,
    .xof = 1,
    .dom = ed448_dom4,
    .dom_len = sizeof ed448_dom4,
    .nonce_tag = "dsig/Ed448/one-pass-nonce/v1",
    .key_size = sizeof(struct ed448_key),
    .state_size = sizeof(struct ed448_state),
    .check_public = dsig_ed448_check_public,
    .expand = ed448_expand,
    .init_public = ed448_init_public,
    .release_key = ed448_release_key,
    .nonce = ed448_state_nonce,
    .check_sig = ed448_check_sig,
    .sign_finish = ed448_sign_finish,
    .verify_finish = ed448_verify_finish,
    .release_state = ed448_release_state,
    .sign_oneshot = ed448_sign_oneshot,
    .verify_oneshot = ed448_verify_oneshot,
};

const dsig_alg dsig_alg_ed448 = DSIG_EDDSA_ALG("Ed448", dsig_keytype_ed448, "SHAKE256", 224,
                                               ED448_SIG_BYTES, 456, dsig_eddsa_curve_ed448);
