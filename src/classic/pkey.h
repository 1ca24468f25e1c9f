/*
 * src/classic/pkey.h — helpers shared by the RSA and ECDSA providers (OpenSSL 3.0 EVP_PKEY based).
 *
 * Streaming design: the message is hashed with a digest fetched once per process (EVP_MD_fetch under
 * pthread_once), so the per-chunk update is exactly EVP_DigestUpdate; the private/public key operation
 * runs once, in final, on the digest (EVP_PKEY_sign / EVP_PKEY_verify with the signature digest set,
 * which performs the EMSA-PKCS1-v1_5 / EMSA-PSS encoding or the ECDSA operation on that digest).
 */
#ifndef DSIG_CLASSIC_PKEY_H
#define DSIG_CLASSIC_PKEY_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

#include "core/keytype.h"

/* The key types of the two providers: RSA (rsa.c) and EC P-256 / P-384 / P-521 (ecdsa.c). */
extern const struct dsig_keytype dsig_keytype_rsa;
extern const struct dsig_keytype dsig_keytype_p256, dsig_keytype_p384, dsig_keytype_p521;

/* The hashes used by RS*, PS* and ES*. */
enum dsig_pk_hash { DSIG_PK_SHA256 = 0, DSIG_PK_SHA384 = 1, DSIG_PK_SHA512 = 2 };

/* The fetched EVP_MD for a hash (fetched once, never freed); NULL if the provider lacks it. */
const EVP_MD *dsig_pk_md(enum dsig_pk_hash h);

/* A streaming sign/verify state: digest context + a reference to the key + the signature (verify). */
struct dsig_pk_state {
    EVP_MD_CTX *md_ctx;
    const EVP_MD *md;
    EVP_PKEY *pkey;          /* own reference (EVP_PKEY_up_ref) */
    const dsig_alg *alg;
    const void *key_impl;    /* provider key impl, valid while the caller's key lives (init only) */
    int bad_sig;             /* verify: the signature was malformed; final reports DSIG_E_VERIFY */
    size_t sig_len;
    uint8_t sig[2048];       /* verify: a copy of the signature (RSA up to 16384 bits) */
};

/* Allocate a state, take a reference to `pkey` and start the digest. */
int dsig_pk_state_new(struct dsig_pk_state **out, const dsig_alg *alg, enum dsig_pk_hash h,
                      EVP_PKEY *pkey);
/* Ops sign_init: a state on `pkey` with the digest started; key_impl is kept for final. */
int dsig_pk_sign_init(void **state, const dsig_alg *alg, enum dsig_pk_hash h, EVP_PKEY *pkey,
                      const void *key_impl);
/* Ops verify_init: as sign_init, plus a copy of the signature when it is expected_len bytes long
 * (and fits); otherwise the state is marked bad_sig and final must reject it. */
int dsig_pk_verify_init(void **state, const dsig_alg *alg, enum dsig_pk_hash h, EVP_PKEY *pkey,
                        const void *key_impl, const uint8_t *sig, size_t sig_len, size_t expected_len);
/* Hash a chunk (the hot path: one EVP_DigestUpdate). */
int dsig_pk_update(void *state, const uint8_t *data, size_t len);
/* Finish the digest into out (64 bytes suffice). */
int dsig_pk_digest(struct dsig_pk_state *st, uint8_t *out, size_t *out_len);
/* Wipe and free a state. */
void dsig_pk_free_state(void *state);

/* A new EVP_PKEY_CTX on pkey initialised for sign (sign=1) or verify with the signature digest set. */
int dsig_pk_ctx(EVP_PKEY *pkey, const EVP_MD *md, int sign, EVP_PKEY_CTX **out);

/* Extra set-up of a sign/verify context (RSA padding); NULL when there is none. */
typedef int (*dsig_pk_setup_fn)(EVP_PKEY_CTX *c, const struct dsig_pk_state *st);

/* Finish the digest and sign it with the state's key: *out_len is the capacity of out on entry and
 * the signature length on return. `what` names the operation in the DSIG_E_CRYPTO message. */
int dsig_pk_sign_digest(struct dsig_pk_state *st, dsig_pk_setup_fn setup, uint8_t *out, size_t *out_len,
                        const char *what);
/* The private-key operation alone, on a finished digest (dg, dlen bytes). */
int dsig_pk_sign_hash(const struct dsig_pk_state *st, dsig_pk_setup_fn setup, const uint8_t *dg, size_t dlen,
                      uint8_t *out, size_t *out_len, const char *what);
/* "SHA-256", "SHA-384", "SHA-512" (the names dsig/prehashed.h takes). */
const char *dsig_pk_hash_name(enum dsig_pk_hash h);
/* Fill a stack state for a key operation on a caller's digest (dsig/prehashed.h): no digest context,
 * pkey borrowed (never freed through this state); DSIG_E_FORMAT if digest_len is not the hash's size. */
int dsig_pk_prehashed_state(struct dsig_pk_state *st, const dsig_alg *alg, enum dsig_pk_hash h, EVP_PKEY *pkey,
                            const void *key_impl, size_t digest_len);
/* Verify `sig` (the key operation's own encoding) over a finished digest: DSIG_OK or DSIG_E_VERIFY
 * ("<alg> signature does not verify"). */
int dsig_pk_verify_digest(const struct dsig_pk_state *st, dsig_pk_setup_fn setup, const uint8_t *sig,
                          size_t sig_len, const uint8_t *dg, size_t dlen);

/* Key type destroy for an impl holding `pkey`: free the key object, wipe and free the impl. */
void dsig_pk_free_impl(struct dsig_key *key, EVP_PKEY *pkey, size_t impl_size);

/* Key type to_pkey for a private export: a new reference to the key's own EVP_PKEY. */
int dsig_pk_ref(EVP_PKEY *pkey, void **out);

/* Turn a parameter builder into an EVP_PKEY of `type` and free the builder. `pushed` says whether
 * every push succeeded; on a failure there, DSIG_E_NOMEM names `what`. The parameters are wiped. */
int dsig_pk_from_builder(const char *type, OSSL_PARAM_BLD *b, int pushed, int with_private,
                         const char *what, EVP_PKEY **out);

/* Build an EVP_PKEY of `type` ("RSA", "EC") from an OSSL_PARAM array (selection = keypair or public). */
int dsig_pk_fromdata(const char *type, void *params, int with_private, EVP_PKEY **out);

/* Wipe every value of an OSSL_PARAM_BLD_to_param array, then free it (3.0 has no OSSL_PARAM_clear_free). */
void dsig_pk_params_free(OSSL_PARAM *params);

/* Big-endian bytes of a BIGNUM, allocated with dsig_malloc: minimal (width 0) or left-padded to width. */
int dsig_pk_bn_export(const BIGNUM *bn, size_t width, uint8_t **out, size_t *out_len);

/* A present JWK member of key type `t` (at its canonical index, or found by name); NULL if absent. */
const dsig_jwk_member *dsig_pk_member(const struct dsig_keytype *t, const dsig_jwk_member *m, size_t n,
                                      const char *name);

#endif
