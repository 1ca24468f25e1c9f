/*
 * src/classic/ed25519_derive.h — Ed25519 keys derived from an identity key under a label: one key pair
 * per purpose (DSig batch roots, DSig node authentication) with nothing new to distribute, because the
 * derived public key is computed from the identity's public key alone.
 *
 *   t  = SHA-512("dsig/Ed25519/derive/v1" ‖ u8 |label| ‖ label ‖ A) mod L          (public)
 *   s' = s + t mod L,    A' = A + [t]B = [s']B                                       (key pair)
 *   p' = SHA-512("dsig/Ed25519/derive-prefix/v1" ‖ u8 |label| ‖ label ‖ prefix)[0..32]  (nonce key)
 *
 * where (s, prefix, A) is the RFC 8032 §5.1.5 expansion of the identity seed. Signatures under the
 * derived key are plain RFC 8032 Ed25519 signatures under A' (r = SHA-512(p' ‖ M) mod L, R = [r]B,
 * S = r + SHA-512(R ‖ A' ‖ M)·s' mod L): libsodium's (or any) Ed25519 verifier checks them given A'.
 * Why no other signature transfers: docs/dsig.md "Key separation".
 */
#ifndef DSIG_CLASSIC_ED25519_DERIVE_H
#define DSIG_CLASSIC_ED25519_DERIVE_H

#include <stddef.h>
#include <stdint.h>

#include "core/keytype.h"

/* A derived signing key: secret scalar s' (reduced mod L), secret nonce prefix p', public key A'. */
typedef struct dsig_ed25519_dkey {
    uint8_t s[32];
    uint8_t prefix[32];
    uint8_t pk[32];
} dsig_ed25519_dkey;

/* Longest label (it is length-prefixed with one byte). */
#define DSIG_ED25519_LABEL_MAX 64u

/* A' from the identity public key A (a valid point): DSIG_OK, DSIG_E_POINT, DSIG_E_ARG (label). */
int dsig_ed25519_derive_public(const uint8_t a[32], const char *label, uint8_t out[32]);

/* The derived key of an OKP Ed25519 dsig_key holding its private seed: DSIG_OK, DSIG_E_NO_PRIVATE,
 * DSIG_E_KEY_MISMATCH (not an Ed25519 key), DSIG_E_ARG (label), DSIG_E_INTERNAL (self-check). The
 * caller wipes *out. */
int dsig_ed25519_derive_secret(const struct dsig_key *identity, const char *label, dsig_ed25519_dkey *out);

/* RFC 8032 §5.1.6 signing with an expanded key (scalar s < L, nonce prefix, public key [s]B): the
 * deterministic signature, byte for byte what libsodium gives for the seed the expansion came from.
 * DSIG_OK or DSIG_E_CRYPTO. */
int dsig_ed25519_sign_expanded(const uint8_t s[32], const uint8_t prefix[32], const uint8_t pk[32],
                               const uint8_t *msg, size_t len, uint8_t sig[64]);

/* Sign with a derived key (dsig_ed25519_sign_expanded on its fields). */
int dsig_ed25519_dkey_sign(const dsig_ed25519_dkey *k, const uint8_t *msg, size_t len, uint8_t sig[64]);

/* Strict RFC 8032 verification under a (derived) public key, libsodium's verifier: 1 valid, 0 not. */
int dsig_ed25519_verify_pk(const uint8_t pk[32], const uint8_t *msg, size_t len, const uint8_t sig[64]);

#endif
