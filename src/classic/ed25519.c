/*
 * Ed25519 (RFC 8032 §5.1): key type "OKP"/"Ed25519" and algorithm "Ed25519" (RFC 9864).
 *
 * One-shot sign/verify is exact RFC 8032 through libsodium. The streaming path reads the payload once:
 * the message hash is SHA-512 through OpenSSL EVP (fetched once), the nonce r is hedged random instead
 * of H(prefix ‖ M) (docs/eddsa-one-pass.md), and the group/scalar arithmetic is libsodium's.
 */
#include <string.h>

#include <openssl/err.h>
#include <sodium.h>

#include "classic/eddsa.h"

#define ED25519_KEY_BYTES 32
#define ED25519_SIG_BYTES 64

/* Identity point encoding (x = 0, y = 1). */
static const uint8_t ed25519_identity[32] = {1};

struct ed25519_key {
    int has_seed;
    uint8_t seed[32];   /* the RFC 8032 secret key (JWK "d") */
    uint8_t pk[32];     /* encoded A (JWK "x") */
    uint8_t sk64[64];   /* seed ‖ pk: libsodium's secret-key layout, for the one-shot signer */
    uint8_t s[32];      /* clamped secret scalar, reduced mod L */
    uint8_t prefix[32]; /* second half of SHA-512(seed): secret input of the one-pass nonce seed */
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
static int ed25519_expand(struct ed25519_key *k, const uint8_t seed[32])
{
    uint8_t h[64];
    memcpy(k->seed, seed, 32);
    if (crypto_sign_seed_keypair(k->pk, k->sk64, seed) != 0)
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519: key derivation failed");
    crypto_hash_sha512(h, seed, 32);
    h[0] &= 248;
    h[31] &= 127;
    h[31] |= 64;
    sc_reduce32(k->s, h);
    memcpy(k->prefix, h + 32, 32);
    sodium_memzero(h, sizeof h);
    /* Self-check: the streaming signer's scalar must give the same A as libsodium's key pair. */
    uint8_t a[32];
    if (crypto_scalarmult_ed25519_base_noclamp(a, k->s) != 0 || memcmp(a, k->pk, 32) != 0)
        return dsig_fail(DSIG_E_INTERNAL, "Ed25519: scalar does not reproduce the public key");
    k->has_seed = 1;
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.3 — accept only canonical, on-curve, prime-order-subgroup, non-small-order A. */
static int ed25519_check_point(const uint8_t pk[32])
{
    if (!crypto_core_ed25519_is_valid_point(pk))
        return dsig_fail(DSIG_E_POINT, "Ed25519 public key \"x\" is not a valid point (non-canonical, "
                                       "off the curve, small order or outside the prime-order subgroup)");
    return DSIG_OK;
}

/* Build key->impl from a public key and an optional seed (which must reproduce the public key). */
static int ed25519_set(struct dsig_key *key, const uint8_t *seed, const uint8_t *pk)
{
    struct ed25519_key *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    int rc = DSIG_OK;
    if (pk && (rc = ed25519_check_point(pk)))
        goto fail;
    if (seed) {
        if ((rc = ed25519_expand(k, seed)))
            goto fail;
        if (pk && !dsig_ct_equal(pk, k->pk, 32)) {
            rc = dsig_fail(DSIG_E_KEY, "Ed25519: \"x\" does not match the public key derived from \"d\"");
            goto fail;
        }
    } else {
        memcpy(k->pk, pk, 32);
    }
    if (key->impl && key->type->destroy)
        key->type->destroy(key);
    key->impl = k;
    key->has_private = k->has_seed;
    return DSIG_OK;
fail:
    dsig_xfree(k, sizeof *k);
    return rc;
}

/* Key type hook: a fresh key from 32 seed bytes of the given RNG. */
static int ed25519_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    if (bits && bits != 256)
        return dsig_fail(DSIG_E_ARG, "Ed25519 keys have a fixed size (256 bits), %u requested", bits);
    uint8_t seed[32];
    int rc = dsig_rng_bytes(rng, seed, sizeof seed);
    if (rc == DSIG_OK)
        rc = ed25519_set(key, seed, NULL);
    dsig_memzero(seed, sizeof seed);
    return rc;
}

/* Key type hook: JWK members x (required) and d (optional), already base64url-decoded. */
static int ed25519_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    if (n < 1 || !m[0].data)
        return dsig_fail(DSIG_E_KEY, "Ed25519 JWK: member \"x\" is missing");
    if (m[0].len != ED25519_KEY_BYTES)
        return dsig_fail(DSIG_E_KEY, "Ed25519 JWK: member \"x\" must be 32 bytes, got %zu", m[0].len);
    const uint8_t *d = n >= 2 ? m[1].data : NULL;
    if (d && m[1].len != ED25519_KEY_BYTES)
        return dsig_fail(DSIG_E_KEY, "Ed25519 JWK: member \"d\" must be 32 bytes, got %zu", m[1].len);
    return ed25519_set(key, d, m[0].data);
}

/* Key type hook: x, then d when asked (allocated copies). */
static int ed25519_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                              size_t *n)
{
    const struct ed25519_key *k = key->impl;
    if (include_private && !k->has_seed)
        return dsig_fail(DSIG_E_NO_PRIVATE, "the Ed25519 key has no private part to export");
    size_t count = include_private ? 2 : 1;
    const uint8_t *src[2] = {k->pk, k->seed};
    static const char *const names[2] = {"x", "d"};
    for (size_t i = 0; i < count; i++) {
        m[i].name = names[i];
        m[i].len = 32;
        m[i].data = dsig_malloc(32);
        if (!m[i].data) {
            for (size_t j = 0; j < i; j++) {
                dsig_xfree(m[j].data, m[j].len);
                m[j].data = NULL;
            }
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
        }
        memcpy(m[i].data, src[i], 32);
    }
    *n = count;
    return DSIG_OK;
}

/* Key type hook: an OpenSSL EVP_PKEY (raw Ed25519) for PEM export. */
static int ed25519_to_pkey(const struct dsig_key *key, int include_private, void **pkey)
{
    const struct ed25519_key *k = key->impl;
    EVP_PKEY *p = include_private && k->has_seed
                      ? EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed, 32)
                      : EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, k->pk, 32);
    if (!p)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "Ed25519 EVP_PKEY");
    *pkey = p;
    return DSIG_OK;
}

/* Key type hook: from an OpenSSL EVP_PKEY; DSIG_E_KEY_MISMATCH at once for other key types. */
static int ed25519_from_pkey(struct dsig_key *key, void *pkey)
{
    EVP_PKEY *p = pkey;
    if (EVP_PKEY_get_id(p) != EVP_PKEY_ED25519)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "not an Ed25519 key");
    uint8_t seed[32], pk[32];
    size_t len = sizeof seed;
    int rc;
    ERR_set_mark();
    int has_priv = EVP_PKEY_get_raw_private_key(p, seed, &len) == 1 && len == 32;
    ERR_pop_to_mark();
    len = sizeof pk;
    if (EVP_PKEY_get_raw_public_key(p, pk, &len) != 1 || len != 32)
        rc = dsig_fail_openssl(DSIG_E_KEY, "Ed25519 PEM: cannot read the public key");
    else
        rc = ed25519_set(key, has_priv ? seed : NULL, pk);
    dsig_memzero(seed, sizeof seed);
    return rc;
}

/* Key type hook: a key holding only A. */
static int ed25519_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct ed25519_key *k = src->impl;
    return ed25519_set(dst, NULL, k->pk);
}

/* Key type hook: wipe and free. */
static void ed25519_destroy(struct dsig_key *key)
{
    dsig_xfree(key->impl, sizeof(struct ed25519_key));
    key->impl = NULL;
}

/* Key type hook: encoded key size, as OpenSSL reports it. */
static unsigned ed25519_bits(const struct dsig_key *key)
{
    (void)key;
    return 256;
}

static const char *const okp_pub[] = {"x", NULL};
static const char *const okp_priv[] = {"d", NULL};

const struct dsig_keytype dsig_keytype_ed25519 = {
    .kty = "OKP",
    .crv = "Ed25519",
    .pub_members = okp_pub,
    .priv_members = okp_priv,
    .has_public = 1,
    .generate = ed25519_generate,
    .import_jwk = ed25519_import_jwk,
    .export_jwk = ed25519_export_jwk,
    .to_pkey = ed25519_to_pkey,
    .from_pkey = ed25519_from_pkey,
    .public_copy = ed25519_public_copy,
    .destroy = ed25519_destroy,
    .bits = ed25519_bits,
};

/* ---- streaming ---------------------------------------------------------------------------- */

struct ed25519_state {
    EVP_MD_CTX *md;   /* k-hash: SHA-512(R ‖ A ‖ M) */
    uint8_t R[32];
    uint8_t A[32];    /* verify: public key */
    uint8_t S[32];    /* verify: signature scalar */
    uint8_t r[32];    /* sign: nonce scalar (secret) */
    uint8_t s[32];    /* sign: copy of the secret scalar */
};

/* Wipe and free a state. */
static void ed25519_free_state(void *state)
{
    struct ed25519_state *st = state;
    if (!st)
        return;
    EVP_MD_CTX_free(st->md);
    dsig_xfree(st, sizeof *st);
}

/* Allocate a state with its EVP context; NULL (error recorded) on failure. */
static struct ed25519_state *ed25519_new_state(int *rc)
{
    if (!dsig_eddsa_sha512()) {
        *rc = dsig_fail(DSIG_E_CRYPTO, "Ed25519: SHA-512 is not available from OpenSSL");
        return NULL;
    }
    struct ed25519_state *st = dsig_calloc(1, sizeof *st);
    if (st && !(st->md = EVP_MD_CTX_new())) {
        dsig_xfree(st, sizeof *st);
        st = NULL;
    }
    if (!st)
        *rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    return st;
}

/* Start the k-hash with R ‖ A. */
static int ed25519_start_k(struct ed25519_state *st, const uint8_t A[32])
{
    if (!EVP_DigestInit_ex(st->md, dsig_eddsa_sha512(), NULL) || !EVP_DigestUpdate(st->md, st->R, 32) ||
        !EVP_DigestUpdate(st->md, A, 32))
        return dsig_fail_openssl(DSIG_E_CRYPTO, "Ed25519: SHA-512");
    return DSIG_OK;
}

/* Finish the k-hash: k = SHA-512(R ‖ A ‖ M) mod L. */
static int ed25519_finish_k(struct ed25519_state *st, uint8_t k[32])
{
    uint8_t h[64];
    if (!EVP_DigestFinal_ex(st->md, h, NULL))
        return dsig_fail_openssl(DSIG_E_CRYPTO, "Ed25519: SHA-512");
    crypto_core_ed25519_scalar_reduce(k, h);
    dsig_memzero(h, sizeof h);
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.6 steps 2-3 with the hedged one-pass nonce of docs/eddsa-one-pass.md */
static int ed25519_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key)
{
    (void)alg;
    const struct ed25519_key *k = key->impl;
    if (!k || !k->has_seed)
        return dsig_fail(DSIG_E_NO_PRIVATE, "Ed25519 signing needs a private key");
    int rc = DSIG_OK;
    struct ed25519_state *st = ed25519_new_state(&rc);
    if (!st)
        return rc;
    uint8_t h[64];
    if (!EVP_DigestInit_ex(st->md, dsig_eddsa_sha512(), NULL)) {
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "Ed25519: SHA-512");
        goto out;
    }
    if ((rc = dsig_eddsa_absorb_nonce_seed(st->md, "dsig/Ed25519/one-pass-nonce/v1", k->prefix, 32)))
        goto out;
    if (!EVP_DigestFinal_ex(st->md, h, NULL)) {
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "Ed25519: SHA-512");
        goto out;
    }
    crypto_core_ed25519_scalar_reduce(st->r, h);
    /* Fails only for r = 0, probability 2^-252. */
    if (crypto_scalarmult_ed25519_base_noclamp(st->R, st->r) != 0) {
        rc = dsig_fail(DSIG_E_CRYPTO, "Ed25519: nonce scalar is zero");
        goto out;
    }
    if ((rc = ed25519_start_k(st, k->pk)))
        goto out;
    memcpy(st->s, k->s, 32);
out:
    dsig_memzero(h, sizeof h);
    if (rc) {
        ed25519_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* Absorb a chunk into the k-hash: a plain EVP_DigestUpdate, nothing else. */
static int ed25519_update(void *state, const uint8_t *data, size_t len)
{
    struct ed25519_state *st = state;
    if (!EVP_DigestUpdate(st->md, data, len))
        return dsig_fail_openssl(DSIG_E_CRYPTO, "Ed25519: SHA-512 update");
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.6 steps 4-6: S = (r + k·s) mod L, signature R ‖ S. */
static int ed25519_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct ed25519_state *st = state;
    if (cap < ED25519_SIG_BYTES)
        return dsig_fail(DSIG_E_BUFFER, "Ed25519 signature needs 64 bytes, buffer has %zu", cap);
    uint8_t k[32], ks[32];
    int rc = ed25519_finish_k(st, k);
    if (rc == DSIG_OK) {
        crypto_core_ed25519_scalar_mul(ks, k, st->s);
        memcpy(sig, st->R, 32);
        crypto_core_ed25519_scalar_add(sig + 32, ks, st->r);
        *sig_len = ED25519_SIG_BYTES;
    }
    dsig_memzero(ks, sizeof ks);
    dsig_memzero(st->r, sizeof st->r);
    dsig_memzero(st->s, sizeof st->s);
    return rc;
}

/* @spec RFC 8032 §5.1.7 steps 1-2: check S < L and R, then start SHA-512(R ‖ A ‖ M). */
static int ed25519_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                               const uint8_t *sig, size_t sig_len)
{
    (void)alg;
    const struct ed25519_key *k = key->impl;
    if (sig_len != ED25519_SIG_BYTES)
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature must be 64 bytes, got %zu", sig_len);
    if (!sc_is_canonical(sig + 32))
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature: S is not reduced mod L");
    /* Any R that can match the encoding of [S]B - [k]A (A is in the prime-order subgroup) is a valid
     * point; rejecting the others early gives the same verdict as libsodium's verifier. */
    if (!crypto_core_ed25519_is_valid_point(sig))
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature: R is not a valid point encoding");
    int rc = DSIG_OK;
    struct ed25519_state *st = ed25519_new_state(&rc);
    if (!st)
        return rc;
    memcpy(st->R, sig, 32);
    memcpy(st->S, sig + 32, 32);
    memcpy(st->A, k->pk, 32);
    if ((rc = ed25519_start_k(st, st->A))) {
        ed25519_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.7 step 3 (cofactorless, as libsodium): encode([S]B - [k]A) == R. */
static int ed25519_verify_final(void *state)
{
    struct ed25519_state *st = state;
    uint8_t k[32], sb[32], ka[32], chk[32];
    int rc = ed25519_finish_k(st, k);
    if (rc)
        return rc;
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

/* ---- one-shot (exact RFC 8032) ------------------------------------------------------------- */

/* @spec RFC 8032 §5.1.6 — deterministic signature (libsodium). */
static int ed25519_sign_oneshot(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg,
                                size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    (void)alg;
    const struct ed25519_key *k = key->impl;
    if (!k || !k->has_seed)
        return dsig_fail(DSIG_E_NO_PRIVATE, "Ed25519 signing needs a private key");
    if (cap < ED25519_SIG_BYTES)
        return dsig_fail(DSIG_E_BUFFER, "Ed25519 signature needs 64 bytes, buffer has %zu", cap);
    if (crypto_sign_detached(sig, NULL, msg, len, k->sk64) != 0)
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519: libsodium signing failed");
    *sig_len = ED25519_SIG_BYTES;
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.7 — verification (libsodium). */
static int ed25519_verify_oneshot(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg,
                                  size_t len, const uint8_t *sig, size_t sig_len)
{
    (void)alg;
    const struct ed25519_key *k = key->impl;
    if (sig_len != ED25519_SIG_BYTES)
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature must be 64 bytes, got %zu", sig_len);
    if (crypto_sign_verify_detached(sig, msg, len, k->pk) != 0)
        return dsig_fail(DSIG_E_VERIFY, "Ed25519 signature does not verify");
    return DSIG_OK;
}

static const struct dsig_alg_ops ed25519_ops = {
    .sign_init = ed25519_sign_init,
    .sign_update = ed25519_update,
    .sign_final = ed25519_sign_final,
    .verify_init = ed25519_verify_init,
    .verify_update = ed25519_update,
    .verify_final = ed25519_verify_final,
    .free_state = ed25519_free_state,
    .sign_oneshot = ed25519_sign_oneshot,
    .verify_oneshot = ed25519_verify_oneshot,
};

const dsig_alg dsig_alg_ed25519 = {
    .name = "Ed25519",
    .family = "EdDSA",
    .description = "Ed25519 (RFC 8032); one-pass streaming with a hedged nonce, exact RFC 8032 one-shot",
    .keytype = &dsig_keytype_ed25519,
    .baseline = "SHA-512",
    .security_bits = 128,
    .flags = DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED | DSIG_ALG_DETERMINISTIC_ONESHOT,
    .sig_max = ED25519_SIG_BYTES,
    .min_key_bits = 0,
    .default_key_bits = 256,
    .ops = &ed25519_ops,
};
