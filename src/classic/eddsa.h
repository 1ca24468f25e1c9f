/*
 * src/classic/eddsa.h — helpers shared by the Ed25519 and Ed448 providers (RFC 8032): the message
 * hashes fetched once, and the one-pass nonce derivation (see docs/eddsa-one-pass.md).
 */
#ifndef DSIG_CLASSIC_EDDSA_H
#define DSIG_CLASSIC_EDDSA_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "core/internal.h"

/* The two descriptors (ed25519.c, ed448.c), listed by dsig_eddsa_algs (eddsa_common.c). */
extern const dsig_alg dsig_alg_ed25519;
extern const dsig_alg dsig_alg_ed448;

/* SHA-512 and SHAKE256 implementations, fetched once per process (thread-safe); NULL on failure. */
const EVP_MD *dsig_eddsa_sha512(void);
const EVP_MD *dsig_eddsa_shake256(void);

/*
 * Absorb the one-pass nonce seed into `ctx` (already initialised with the scheme's hash H):
 *   domain_tag ‖ prefix ‖ 32 fresh OS-random bytes ‖ u64le(process-wide counter).
 * The caller squeezes H and reduces mod L to get r. Returns DSIG_OK, DSIG_E_RNG or DSIG_E_CRYPTO.
 */
int dsig_eddsa_absorb_nonce_seed(EVP_MD_CTX *ctx, const char *domain_tag, const uint8_t *prefix,
                                 size_t prefix_len);

/* DSIG_OK if `pk` (57 bytes) is a canonical Ed448 point of order L, else DSIG_E_POINT (ed448.c). */
int dsig_ed448_check_public(const uint8_t pk[57]);

#endif
