/*
 * Shared EdDSA plumbing: the registry list, the hashes fetched once, and the one-pass nonce seed
 * (docs/eddsa-one-pass.md explains why the streaming signer derives r this way).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "classic/eddsa.h"

const dsig_alg *const dsig_eddsa_algs[] = {&dsig_alg_ed25519, &dsig_alg_ed448, NULL};

static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_sha512;
static EVP_MD *md_shake256;

/* Fetch both digests from the default library context, once. */
static void fetch_mds(void)
{
    md_sha512 = EVP_MD_fetch(NULL, "SHA512", NULL);
    md_shake256 = EVP_MD_fetch(NULL, "SHAKE256", NULL);
}

/* SHA-512 (Ed25519's H), fetched once. */
const EVP_MD *dsig_eddsa_sha512(void)
{
    pthread_once(&md_once, fetch_mds);
    return md_sha512;
}

/* SHAKE256 (Ed448's H), fetched once. */
const EVP_MD *dsig_eddsa_shake256(void)
{
    pthread_once(&md_once, fetch_mds);
    return md_shake256;
}

/* Process-wide counter: makes the nonce seed unique within a process even if two OS-random draws
 * collided; never reset. */
static _Atomic uint64_t nonce_counter;

/* @spec docs/eddsa-one-pass.md "nonce derivation" (hedged r, cf. draft-irtf-cfrg-det-sigs-with-noise) */
int dsig_eddsa_absorb_nonce_seed(EVP_MD_CTX *ctx, const char *domain_tag, const uint8_t *prefix,
                                 size_t prefix_len)
{
    uint8_t fresh[32 + 8];
    int rc = dsig_random_bytes(fresh, 32);
    if (rc)
        return rc;
    uint64_t ctr = atomic_fetch_add(&nonce_counter, 1);
    for (int i = 0; i < 8; i++)
        fresh[32 + i] = (uint8_t)(ctr >> (8 * i));
    int ok = EVP_DigestUpdate(ctx, domain_tag, strlen(domain_tag)) &&
             EVP_DigestUpdate(ctx, prefix, prefix_len) && EVP_DigestUpdate(ctx, fresh, sizeof fresh);
    dsig_memzero(fresh, sizeof fresh);
    if (!ok)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "EdDSA nonce hash");
    return DSIG_OK;
}
