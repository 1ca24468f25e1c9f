/* Helpers shared by the RSA and ECDSA providers: fetched digests, streaming state, EVP_PKEY glue. */
#include <pthread.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>

#include "classic/pkey.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"

static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *mds[3];

/* Fetch the three digests once per process (EVP_MD_fetch is costly; the objects are immutable). */
static void fetch_mds(void)
{
    mds[DSIG_PK_SHA256] = EVP_MD_fetch(NULL, "SHA2-256", NULL);
    mds[DSIG_PK_SHA384] = EVP_MD_fetch(NULL, "SHA2-384", NULL);
    mds[DSIG_PK_SHA512] = EVP_MD_fetch(NULL, "SHA2-512", NULL);
}

/* The fetched digest for `h` (NULL if the default provider does not offer it). */
const EVP_MD *dsig_pk_md(enum dsig_pk_hash h)
{
    pthread_once(&md_once, fetch_mds);
    if ((unsigned)h > DSIG_PK_SHA512)
        return NULL;
    return mds[h];
}

/* Allocate a streaming state holding a key reference and an initialised digest context. */
int dsig_pk_state_new(struct dsig_pk_state **out, const dsig_alg *alg, enum dsig_pk_hash h,
                      EVP_PKEY *pkey)
{
    *out = NULL;
    const EVP_MD *md = dsig_pk_md(h);
    if (!md)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "cannot fetch the SHA-2 digest");
    struct dsig_pk_state *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    st->md_ctx = EVP_MD_CTX_new();
    if (!st->md_ctx) {
        dsig_xfree(st, sizeof *st);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    if (!EVP_DigestInit_ex(st->md_ctx, md, NULL)) {
        EVP_MD_CTX_free(st->md_ctx);
        dsig_xfree(st, sizeof *st);
        return dsig_fail_openssl(DSIG_E_CRYPTO, "digest init");
    }
    if (!EVP_PKEY_up_ref(pkey)) {
        EVP_MD_CTX_free(st->md_ctx);
        dsig_xfree(st, sizeof *st);
        return dsig_fail_openssl(DSIG_E_CRYPTO, "key reference");
    }
    st->md = md;
    st->pkey = pkey;
    st->alg = alg;
    *out = st;
    return DSIG_OK;
}

/* Start a streaming signature: only the hash runs until final. */
int dsig_pk_sign_init(void **state, const dsig_alg *alg, enum dsig_pk_hash h, EVP_PKEY *pkey,
                      const void *key_impl)
{
    struct dsig_pk_state *st;
    int rc = dsig_pk_state_new(&st, alg, h, pkey);
    if (rc)
        return rc;
    st->key_impl = key_impl;
    *state = st;
    return DSIG_OK;
}

/* Start a streaming verification; a malformed signature is remembered and rejected at final (so
 * that a bad length costs the same as a bad value from the caller's point of view). */
int dsig_pk_verify_init(void **state, const dsig_alg *alg, enum dsig_pk_hash h, EVP_PKEY *pkey,
                        const void *key_impl, const uint8_t *sig, size_t sig_len, size_t expected_len)
{
    struct dsig_pk_state *st;
    int rc = dsig_pk_state_new(&st, alg, h, pkey);
    if (rc)
        return rc;
    st->key_impl = key_impl;
    if (sig_len != expected_len || sig_len > sizeof st->sig) {
        st->bad_sig = 1;
    } else {
        memcpy(st->sig, sig, sig_len);
        st->sig_len = sig_len;
    }
    *state = st;
    return DSIG_OK;
}

/* Hash one chunk: the only work done per update. */
int dsig_pk_update(void *state, const uint8_t *data, size_t len)
{
    struct dsig_pk_state *st = state;
    if (!EVP_DigestUpdate(st->md_ctx, data, len))
        return dsig_fail_openssl(DSIG_E_CRYPTO, "digest update");
    return DSIG_OK;
}

/* Finish the message digest. */
int dsig_pk_digest(struct dsig_pk_state *st, uint8_t *out, size_t *out_len)
{
    unsigned int n = 0;
    if (!EVP_DigestFinal_ex(st->md_ctx, out, &n))
        return dsig_fail_openssl(DSIG_E_CRYPTO, "digest final");
    *out_len = n;
    return DSIG_OK;
}

/* Wipe and free a state (EVP_MD_CTX_free cleanses the hash state). */
void dsig_pk_free_state(void *state)
{
    struct dsig_pk_state *st = state;
    if (!st)
        return;
    EVP_MD_CTX_free(st->md_ctx);
    EVP_PKEY_free(st->pkey);
    dsig_xfree(st, sizeof *st);
}

/* An EVP_PKEY_CTX for one sign or verify operation on a precomputed digest. */
int dsig_pk_ctx(EVP_PKEY *pkey, const EVP_MD *md, int sign, EVP_PKEY_CTX **out)
{
    *out = NULL;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    if (!c)
        return dsig_fail_openssl(DSIG_E_NOMEM, "EVP_PKEY_CTX_new_from_pkey");
    int ok = sign ? EVP_PKEY_sign_init(c) : EVP_PKEY_verify_init(c);
    if (ok > 0)
        ok = EVP_PKEY_CTX_set_signature_md(c, md);
    if (ok <= 0) {
        EVP_PKEY_CTX_free(c);
        return dsig_fail_openssl(DSIG_E_CRYPTO, sign ? "sign init" : "verify init");
    }
    *out = c;
    return DSIG_OK;
}

/* The private-key operation on a finished digest (dg, dlen bytes): streaming final and digest signing. */
int dsig_pk_sign_hash(const struct dsig_pk_state *st, dsig_pk_setup_fn setup, const uint8_t *dg, size_t dlen,
                      uint8_t *out, size_t *out_len, const char *what)
{
    EVP_PKEY_CTX *c;
    int rc = dsig_pk_ctx(st->pkey, st->md, 1, &c);
    if (rc)
        return rc;
    if (!setup || (rc = setup(c, st)) == DSIG_OK) {
        if (EVP_PKEY_sign(c, out, out_len, dg, dlen) <= 0)
            rc = dsig_fail_openssl(DSIG_E_CRYPTO, what);
    }
    EVP_PKEY_CTX_free(c);
    return rc;
}

/* Digest, then the private-key operation on it (the only key operation of a streaming signature). */
int dsig_pk_sign_digest(struct dsig_pk_state *st, dsig_pk_setup_fn setup, uint8_t *out, size_t *out_len,
                        const char *what)
{
    uint8_t dg[EVP_MAX_MD_SIZE];
    size_t dlen = 0;
    int rc = dsig_pk_digest(st, dg, &dlen);
    if (rc)
        return rc;
    return dsig_pk_sign_hash(st, setup, dg, dlen, out, out_len, what);
}

static const char *const pk_hash_names[] = {"SHA-256", "SHA-384", "SHA-512"};

const char *dsig_pk_hash_name(enum dsig_pk_hash h)
{
    return (unsigned)h <= DSIG_PK_SHA512 ? pk_hash_names[h] : NULL;
}

/* A state for a key operation on a caller's digest (no digest context): the algorithm's hash, and
 * digest_len checked against its output length. The core has checked the hash name. */
int dsig_pk_prehashed_state(struct dsig_pk_state *st, const dsig_alg *alg, enum dsig_pk_hash h, EVP_PKEY *pkey,
                            const void *key_impl, size_t digest_len)
{
    memset(st, 0, sizeof *st);
    st->md = dsig_pk_md(h);
    if (!st->md)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "cannot fetch the SHA-2 digest");
    size_t want = (size_t)EVP_MD_get_size(st->md);
    if (digest_len != want)
        return dsig_fail(DSIG_E_FORMAT, "%s: a %s digest is %zu bytes, got %zu", alg->name, dsig_pk_hash_name(h),
                         want, digest_len);
    st->alg = alg;
    st->pkey = pkey; /* borrowed: the caller's key outlives the call */
    st->key_impl = key_impl;
    return DSIG_OK;
}

/* The public-key operation on a finished digest. */
int dsig_pk_verify_digest(const struct dsig_pk_state *st, dsig_pk_setup_fn setup, const uint8_t *sig,
                          size_t sig_len, const uint8_t *dg, size_t dlen)
{
    EVP_PKEY_CTX *c;
    int rc = dsig_pk_ctx(st->pkey, st->md, 0, &c);
    if (rc)
        return rc;
    if (!setup || (rc = setup(c, st)) == DSIG_OK) {
        int v = EVP_PKEY_verify(c, sig, sig_len, dg, dlen);
        ERR_clear_error(); /* a bad signature leaves decoding errors on the queue */
        if (v != 1)
            rc = dsig_fail(DSIG_E_VERIFY, "%s signature does not verify", st->alg->name);
    }
    EVP_PKEY_CTX_free(c);
    return rc;
}

/* Destroy a key impl built around an EVP_PKEY (OpenSSL clears private integers when freeing). */
void dsig_pk_free_impl(struct dsig_key *key, EVP_PKEY *pkey, size_t impl_size)
{
    if (!key->impl)
        return;
    EVP_PKEY_free(pkey);
    dsig_xfree(key->impl, impl_size);
    key->impl = NULL;
}

/* A new reference to the key object itself (private PEM export). */
int dsig_pk_ref(EVP_PKEY *pkey, void **out)
{
    if (!EVP_PKEY_up_ref(pkey))
        return dsig_fail_openssl(DSIG_E_CRYPTO, "key reference");
    *out = pkey;
    return DSIG_OK;
}

/* Builder → OSSL_PARAM array → EVP_PKEY, freeing (and wiping) the intermediate objects. */
int dsig_pk_from_builder(const char *type, OSSL_PARAM_BLD *b, int pushed, int with_private,
                         const char *what, EVP_PKEY **out)
{
    *out = NULL;
    OSSL_PARAM *params = pushed ? OSSL_PARAM_BLD_to_param(b) : NULL;
    OSSL_PARAM_BLD_free(b);
    if (!params)
        return dsig_fail_openssl(DSIG_E_NOMEM, what);
    int rc = dsig_pk_fromdata(type, params, with_private, out);
    dsig_pk_params_free(params);
    return rc;
}

/* EVP_PKEY_fromdata wrapper: `params` is an OSSL_PARAM array (void* keeps the header light). */
int dsig_pk_fromdata(const char *type, void *params, int with_private, EVP_PKEY **out)
{
    *out = NULL;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (!c)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "EVP_PKEY_CTX_new_from_name");
    EVP_PKEY *pkey = NULL;
    int ok = EVP_PKEY_fromdata_init(c) > 0 &&
             EVP_PKEY_fromdata(c, &pkey, with_private ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
                               (OSSL_PARAM *)params) > 0;
    EVP_PKEY_CTX_free(c);
    if (!ok || !pkey)
        return dsig_fail_openssl(DSIG_E_KEY, "cannot build the key");
    *out = pkey;
    return DSIG_OK;
}

/* Cleanse the values (private key integers) before the block goes back to the allocator. */
void dsig_pk_params_free(OSSL_PARAM *params)
{
    if (!params)
        return;
    for (OSSL_PARAM *p = params; p->key; p++)
        if (p->data && p->data_size)
            OPENSSL_cleanse(p->data, p->data_size);
    OSSL_PARAM_free(params);
}

/* Big-endian export of a BIGNUM (constant-time padded form when width > 0). */
int dsig_pk_bn_export(const BIGNUM *bn, size_t width, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    size_t n = width ? width : (size_t)BN_num_bytes(bn);
    if (n == 0)
        n = 1; /* zero is one octet, never an empty string */
    uint8_t *p = dsig_malloc(n);
    if (!p)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (BN_bn2binpad(bn, p, (int)n) != (int)n) {
        dsig_xfree(p, n);
        return dsig_fail(DSIG_E_INTERNAL, "integer does not fit in %zu bytes", n);
    }
    *out = p;
    *out_len = n;
    return DSIG_OK;
}

/* Look up a present JWK member: members come in pub_members-then-priv_members order; names, when
 * given, are trusted over positions. */
const dsig_jwk_member *dsig_pk_member(const struct dsig_keytype *t, const dsig_jwk_member *m, size_t n,
                                      const char *name)
{
    size_t idx = 0, found = (size_t)-1;
    for (const char *const *p = t->pub_members; *p; p++, idx++)
        if (strcmp(*p, name) == 0)
            found = idx;
    for (const char *const *p = t->priv_members; *p; p++, idx++)
        if (strcmp(*p, name) == 0)
            found = idx;
    if (found < n && (!m[found].name || strcmp(m[found].name, name) == 0))
        return m[found].data ? &m[found] : NULL;
    for (size_t i = 0; i < n; i++)
        if (m[i].name && strcmp(m[i].name, name) == 0)
            return m[i].data ? &m[i] : NULL;
    return NULL;
}
