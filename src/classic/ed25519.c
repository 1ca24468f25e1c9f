/*
 * Ed25519 (RFC 8032 §5.1): key type "OKP"/"Ed25519" and algorithm "Ed25519" (RFC 9864).
 *
 * One-shot sign/verify is exact RFC 8032 through libsodium. The streaming path reads the payload once:
 * the message hash is SHA-512 through OpenSSL EVP (fetched once), the nonce r is hedged random instead
 * of H(prefix ‖ M) (docs/eddsa-one-pass.md), and the group/scalar arithmetic is libsodium's.
 */
#include <string.h>

#include <sodium.h>

#include "classic/eddsa.h"
#include "core/ct.h"
#include "core/error_internal.h"
#include "core/keytype.h"

#define ED25519_KEY_BYTES 32
#define ED25519_SIG_BYTES 64

/* Identity point encoding (x = 0, y = 1). */
static const uint8_t ed25519_identity[32] = {1};

/* Key impl: the shared part (seed, pk = A, s = clamped scalar reduced mod L, prefix = second half of
 * SHA-512(seed)) plus libsodium's secret-key layout for the one-shot signer. */
struct ed25519_key {
    struct dsig_eddsa_key base; /* first: the shared hooks see only this */
    uint8_t sk64[64];           /* seed ‖ pk */
};

/* Streaming state: the shared part plus the nonce scalar. */
struct ed25519_state {
    struct dsig_eddsa_state base; /* first: the shared hooks see only this */
    uint8_t r[32];                /* sign: nonce scalar (secret) */
};

/* ---- key material --------------------------------------------------------------------------- */

/* Reduce a 32-byte little-endian integer mod L. */
static void sc_reduce32(uint8_t out[32], const uint8_t in[32])
{
    uint8_t wide[64] = {0};
    memcpy(wide, in, 32);
    crypto_core_ed25519_scalar_reduce(out, wide);
    sodium_memzero(wide, sizeof wide);
}

/* 1 if the 32 bytes are the canonical encoding of a scalar (< L). Public data only. */
static int sc_is_canonical(const uint8_t s[32])
{
    uint8_t red[32];
    sc_reduce32(red, s);
    return memcmp(red, s, 32) == 0;
}

/* @spec RFC 8032 §5.1.5 — expand the seed: s = clamp(h[0..32)), prefix = h[32..64), A = [s]B. */
static int ed25519_expand(struct dsig_eddsa_key *base)
{
    struct ed25519_key *k = (struct ed25519_key *)base;
    uint8_t h[64];
    if (crypto_sign_seed_keypair(base->pk, k->sk64, base->seed) != 0)
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519: key derivation failed");
    DSIG_CT_DECLASSIFY(base->pk, 32); /* A, the public key */
    crypto_hash_sha512(h, base->seed, 32);
    h[0] &= 248;
    h[31] &= 127;
    h[31] |= 64;
    sc_reduce32(base->s, h);
    memcpy(base->prefix, h + 32, 32);
    sodium_memzero(h, sizeof h);
    /* Self-check: the streaming signer's scalar must give the same A as libsodium's key pair. */
    uint8_t a[32];
    int bad = crypto_scalarmult_ed25519_base_noclamp(a, base->s) != 0;
    DSIG_CT_DECLASSIFY(a, sizeof a);      /* [s]B = A: public */
    DSIG_CT_DECLASSIFY(&bad, sizeof bad); /* s = 0 (probability 2^-252): libsodium branches on it too */
    if (bad || memcmp(a, base->pk, 32) != 0)
        return dsig_fail(DSIG_E_INTERNAL, "Ed25519: scalar does not reproduce the public key");
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.3 — accept only canonical, on-curve, prime-order-subgroup, non-small-order A. */
static int ed25519_check_point(const uint8_t *pk)
{
    if (!crypto_core_ed25519_is_valid_point(pk))
        return dsig_fail(DSIG_E_POINT, "Ed25519 public key \"x\" is not a valid point (non-canonical, "
                                       "off the curve, small order or outside the prime-order subgroup)");
    return DSIG_OK;
}

const struct dsig_keytype dsig_keytype_ed25519 = DSIG_EDDSA_KEYTYPE("Ed25519");

/* ---- streaming (the skeleton is in eddsa_common.c) ------------------------------------------ */

/* r = SHA-512(nonce seed) mod L and R = [r]B. */
static int ed25519_nonce(struct dsig_eddsa_state *base, const uint8_t *h)
{
    struct ed25519_state *st = (struct ed25519_state *)base;
    crypto_core_ed25519_scalar_reduce(st->r, h);
    /* Fails only for r = 0, probability 2^-252. */
    int zero = crypto_scalarmult_ed25519_base_noclamp(base->R, st->r) != 0;
    DSIG_CT_DECLASSIFY(base->R, 32);        /* R: the first half of the signature */
    DSIG_CT_DECLASSIFY(&zero, sizeof zero); /* r = 0: libsodium branches on it too */
    if (zero)
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519: nonce scalar is zero");
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.7 step 1: S < L, and R a valid point encoding. */
static int ed25519_check_sig(const uint8_t *sig)
{
    if (!sc_is_canonical(sig + 32))
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature: S is not reduced mod L");
    /* Any R that can match the encoding of [S]B - [k]A (A is in the prime-order subgroup) is a valid
     * point; rejecting the others early gives the same verdict as libsodium's verifier. */
    if (!crypto_core_ed25519_is_valid_point(sig))
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature: R is not a valid point encoding");
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.6 steps 5-6: k = h mod L, S = (r + k·s) mod L, signature R ‖ S. */
static int ed25519_sign_finish(struct dsig_eddsa_state *base, const uint8_t *h, uint8_t *sig)
{
    struct ed25519_state *st = (struct ed25519_state *)base;
    uint8_t k[32], ks[32];
    crypto_core_ed25519_scalar_reduce(k, h);
    crypto_core_ed25519_scalar_mul(ks, k, base->s);
    memcpy(sig, base->R, 32);
    crypto_core_ed25519_scalar_add(sig + 32, ks, st->r);
    dsig_memzero(ks, sizeof ks);
    dsig_memzero(st->r, sizeof st->r);
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.7 step 3 (cofactorless, as libsodium): encode([S]B - [k]A) == R. */
static int ed25519_verify_finish(struct dsig_eddsa_state *st, const uint8_t *h)
{
    uint8_t k[32], sb[32], ka[32], chk[32];
    crypto_core_ed25519_scalar_reduce(k, h);
    /* libsodium's scalar multiplications refuse a zero scalar (the result is the identity). */
    if (sodium_is_zero(st->S, 32))
        memcpy(sb, ed25519_identity, 32);
    else if (crypto_scalarmult_ed25519_base_noclamp(sb, st->S) != 0)
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519: [S]B failed");
    if (sodium_is_zero(k, 32))
        memcpy(ka, ed25519_identity, 32);
    else if (crypto_scalarmult_ed25519_noclamp(ka, k, st->A) != 0)
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519: [k]A failed");
    if (crypto_core_ed25519_sub(chk, sb, ka) != 0)
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519: point subtraction failed");
    if (!dsig_ct_equal(chk, st->R, 32))
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature does not verify");
    return DSIG_OK;
}

/* ---- one-shot (exact RFC 8032; length and key checks are in eddsa_common.c) ------------------ */

/* @spec RFC 8032 §5.1.6 — deterministic signature (libsodium). */
static int ed25519_sign_oneshot(const struct dsig_eddsa_key *base, const uint8_t *msg, size_t len,
                                uint8_t *sig)
{
    const struct ed25519_key *k = (const struct ed25519_key *)base;
    if (crypto_sign_detached(sig, NULL, msg, len, k->sk64) != 0)
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519: libsodium signing failed");
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.7 — verification (libsodium). */
static int ed25519_verify_oneshot(const struct dsig_eddsa_key *k, const uint8_t *msg, size_t len,
                                  const uint8_t *sig)
{
    if (crypto_sign_verify_detached(sig, msg, len, k->pk) != 0)
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature does not verify");
    return DSIG_OK;
}

const struct dsig_eddsa_curve dsig_eddsa_curve_ed25519 = {
    .name = "Ed25519",
    .keytype = &dsig_keytype_ed25519,
    .key_bytes = ED25519_KEY_BYTES,
    .bits = 256,
    .evp_id = EVP_PKEY_ED25519,
    .hash_name = "SHA-512",
    .md = dsig_eddsa_sha512,
    .hash_bytes = 64,
    .xof = 0,
    .dom = NULL,
    .dom_len = 0,
    .nonce_tag = "dsig/Ed25519/one-pass-nonce/v1",
    .key_size = sizeof(struct ed25519_key),
    .state_size = sizeof(struct ed25519_state),
    .check_public = ed25519_check_point,
    .expand = ed25519_expand,
    .nonce = ed25519_nonce,
    .check_sig = ed25519_check_sig,
    .sign_finish = ed25519_sign_finish,
    .verify_finish = ed25519_verify_finish,
    .sign_oneshot = ed25519_sign_oneshot,
    .verify_oneshot = ed25519_verify_oneshot,
};

const dsig_alg dsig_alg_ed25519 = DSIG_EDDSA_ALG("Ed25519", dsig_keytype_ed25519, "SHA-512", 128,
                                                 ED25519_SIG_BYTES, 256, dsig_eddsa_curve_ed25519);

