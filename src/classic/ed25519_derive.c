/*
 * src/classic/ed25519_derive.c — Ed25519 key derivation under a label and signing with an expanded key
 * (ed25519_derive.h). Group and scalar arithmetic are libsodium's constant-time primitives; nothing here
 * branches on a secret.
 */
#include <string.h>

#include <sodium.h>

#include "core/backend.h"
#include "core/ct.h"
#include "core/error_internal.h"
#include "core/keytype.h"

#include "classic/ed25519_derive.h"
#include "classic/eddsa.h"
#include "core/layer_api.h"

#define TWEAK_TAG "dsig/Ed25519/derive/v1"
#define PREFIX_TAG "dsig/Ed25519/derive-prefix/v1"

/* SHA-512(tag ‖ u8 |label| ‖ label ‖ x[0..32]) into h. DSIG_E_ARG for a label that is empty or too long. */
static int labelled_hash(const char *tag, const char *label, const uint8_t x[32], uint8_t h[64])
{
    size_t ll = label ? strlen(label) : 0;
    if (ll == 0 || ll > DSIG_ED25519_LABEL_MAX)
        return dsig_fail(DSIG_E_ARG, "Ed25519 key derivation: label of %zu bytes (1..%u)", ll,
                         DSIG_ED25519_LABEL_MAX);
    crypto_hash_sha512_state st;
    uint8_t n = (uint8_t)ll;
    crypto_hash_sha512_init(&st);
    crypto_hash_sha512_update(&st, (const uint8_t *)tag, strlen(tag));
    crypto_hash_sha512_update(&st, &n, 1);
    crypto_hash_sha512_update(&st, (const uint8_t *)label, ll);
    crypto_hash_sha512_update(&st, x, 32);
    crypto_hash_sha512_final(&st, h);
    sodium_memzero(&st, sizeof st); /* x is the secret prefix when deriving p' */
    return DSIG_OK;
}

/* The public tweak t = H(tag ‖ label ‖ A) mod L. */
static int tweak(const uint8_t a[32], const char *label, uint8_t t[32])
{
    uint8_t h[64];
    int rc = labelled_hash(TWEAK_TAG, label, a, h);
    if (rc == DSIG_OK)
        crypto_core_ed25519_scalar_reduce(t, h);
    return rc;
}

DSIG_LAYER_API int dsig_ed25519_derive_public(const uint8_t a[32], const char *label, uint8_t out[32])
{
    if (!a || !out)
        return dsig_fail(DSIG_E_ARG, "Ed25519 key derivation: NULL argument");
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    if (!crypto_core_ed25519_is_valid_point(a))
        return dsig_fail(DSIG_E_POINT, "Ed25519 key derivation: the public key is not a valid point");
    uint8_t t[32], tb[32];
    if ((rc = tweak(a, label, t)) != DSIG_OK)
        return rc;
    /* t = 0 or A' of small order happen with probability ~2^-252: refused rather than used. */
    if (crypto_scalarmult_ed25519_base_noclamp(tb, t) != 0 || crypto_core_ed25519_add(out, a, tb) != 0 ||
        !crypto_core_ed25519_is_valid_point(out))
        return dsig_fail(DSIG_E_CRYPTO, "Ed25519 key derivation: degenerate derived key");
    return DSIG_OK;
}

DSIG_LAYER_API int dsig_ed25519_derive_secret(const struct dsig_key *identity, const char *label, dsig_ed25519_dkey *out)
{
    if (!identity || !out)
        return dsig_fail(DSIG_E_ARG, "Ed25519 key derivation: NULL argument");
    memset(out, 0, sizeof *out);
    if (identity->type != &dsig_keytype_ed25519 || !identity->impl)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "Ed25519 key derivation: not an OKP Ed25519 key");
    const struct dsig_eddsa_key *k = identity->impl;
    if (!identity->has_private || !k->has_seed)
        return dsig_fail(DSIG_E_NO_PRIVATE, "Ed25519 key derivation needs the private key (\"d\")");
    int rc = dsig_ed25519_derive_public(k->pk, label, out->pk);
    if (rc)
        return rc;
    uint8_t t[32], h[64], check[32];
    if ((rc = tweak(k->pk, label, t)) != DSIG_OK || (rc = labelled_hash(PREFIX_TAG, label, k->prefix, h)))
        return rc;
    crypto_core_ed25519_scalar_add(out->s, k->s, t);
    memcpy(out->prefix, h, 32);
    sodium_memzero(h, sizeof h);
    /* [s']B must be the A' that verifiers compute from A alone. [s']B is public: it is A' (on a fault,
     * a point that is refused here). s' = 0 has probability 2^-252; libsodium branches on it itself
     * (tests/ct/ct.supp). Declassified, as the plain signer does with A (tests/ct: ct_eddsa). */
    int zero = crypto_scalarmult_ed25519_base_noclamp(check, out->s) != 0;
    DSIG_CT_DECLASSIFY(check, sizeof check);
    DSIG_CT_DECLASSIFY(&zero, sizeof zero);
    if (zero || !dsig_ct_equal(check, out->pk, 32)) {
        sodium_memzero(out, sizeof *out);
        return dsig_fail(DSIG_E_INTERNAL, "Ed25519 key derivation: derived scalar does not give the derived key");
    }
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.6 steps 2-6 with the expanded key given. */
int dsig_ed25519_sign_expanded(const uint8_t s[32], const uint8_t prefix[32], const uint8_t pk[32],
                               const uint8_t *msg, size_t len, uint8_t sig[64])
{
    if (dsig_backend_init() != DSIG_OK)
        return DSIG_E_CRYPTO;
    crypto_hash_sha512_state st;
    uint8_t h[64], r[32], k[32], ks[32];
    crypto_hash_sha512_init(&st);
    crypto_hash_sha512_update(&st, prefix, 32);
    crypto_hash_sha512_update(&st, msg, len);
    crypto_hash_sha512_final(&st, h);
    crypto_core_ed25519_scalar_reduce(r, h);
    int rc = DSIG_OK;
    int zero = crypto_scalarmult_ed25519_base_noclamp(sig, r) != 0;
    DSIG_CT_DECLASSIFY(sig, 32);            /* R: the first half of the signature */
    DSIG_CT_DECLASSIFY(&zero, sizeof zero); /* r = 0 (probability 2^-252): libsodium branches on it too */
    if (zero) {
        rc = dsig_fail(DSIG_E_CRYPTO, "Ed25519: nonce scalar is zero");
        goto out;
    }
    crypto_hash_sha512_init(&st);
    crypto_hash_sha512_update(&st, sig, 32);
    crypto_hash_sha512_update(&st, pk, 32);
    crypto_hash_sha512_update(&st, msg, len);
    crypto_hash_sha512_final(&st, h);
    crypto_core_ed25519_scalar_reduce(k, h);
    crypto_core_ed25519_scalar_mul(ks, k, s);
    crypto_core_ed25519_scalar_add(sig + 32, ks, r);
out:
    sodium_memzero(&st, sizeof st);
    sodium_memzero(h, sizeof h);
    sodium_memzero(r, sizeof r);
    sodium_memzero(ks, sizeof ks);
    return rc;
}

DSIG_LAYER_API int dsig_ed25519_dkey_sign(const dsig_ed25519_dkey *k, const uint8_t *msg, size_t len, uint8_t sig[64])
{
    return dsig_ed25519_sign_expanded(k->s, k->prefix, k->pk, msg, len, sig);
}

DSIG_LAYER_API int dsig_ed25519_verify_pk(const uint8_t pk[32], const uint8_t *msg, size_t len, const uint8_t sig[64])
{
    if (dsig_backend_init() != DSIG_OK)
        return 0;
    return crypto_sign_verify_detached(sig, msg, len, pk) == 0;
}
