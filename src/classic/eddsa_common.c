/*
 * Shared EdDSA plumbing (RFC 8032): the registry list, the hashes fetched once, the one-pass nonce
 * seed (docs/eddsa-one-pass.md explains why the streaming signer derives r this way), the OKP
 * key-type hooks and the streaming skeleton. The curve-specific arithmetic comes from the curve
 * descriptors of ed25519.c and ed448.c.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>

#include "classic/eddsa.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"

const dsig_alg *const dsig_eddsa_algs[] = {&dsig_alg_ed25519, &dsig_alg_ed448, NULL};

static const struct dsig_eddsa_curve *const curves[] = {&dsig_eddsa_curve_ed25519,
                                                        &dsig_eddsa_curve_ed448};

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

/* Little-endian u64 into 8 bytes. */
static void put_u64le(uint8_t *out, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

/*
 * @spec docs/eddsa-one-pass.md "nonce derivation" (hedged r, cf. draft-irtf-cfrg-det-sigs-with-noise)
 * Absorbs tag ‖ prefix ‖ rnd32 ‖ ctr ‖ pid ‖ CLOCK_REALTIME ns ‖ CLOCK_BOOTTIME ns. The clocks and the
 * pid guard against a process or VM image that is cloned or restored from a snapshot together with its
 * counter: the restored copy would need the same random bytes AND the same clock readings to repeat r.
 */
int dsig_eddsa_absorb_nonce_seed(EVP_MD_CTX *ctx, const char *domain_tag, const uint8_t *prefix,
                                 size_t prefix_len)
{
    uint8_t fresh[32 + 8 * 4];
    int rc = dsig_random_bytes(fresh, 32);
    if (rc)
        return rc;
    struct timespec rt = {0, 0}, bt = {0, 0};
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_BOOTTIME, &bt);
    put_u64le(fresh + 32, atomic_fetch_add(&nonce_counter, 1));
    put_u64le(fresh + 40, (uint64_t)getpid());
    put_u64le(fresh + 48, (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
    put_u64le(fresh + 56, (uint64_t)bt.tv_sec * 1000000000u + (uint64_t)bt.tv_nsec);
    int ok = EVP_DigestUpdate(ctx, domain_tag, strlen(domain_tag)) &&
             EVP_DigestUpdate(ctx, prefix, prefix_len) && EVP_DigestUpdate(ctx, fresh, sizeof fresh);
    dsig_memzero(fresh, sizeof fresh);
    if (!ok)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "EdDSA nonce hash");
    return DSIG_OK;
}

/* dsig_fail_openssl with a formatted subject (the curve name, the hash...). */
__attribute__((format(printf, 2, 3))) static int fail_openssl_f(int code, const char *fmt, ...)
{
    char subject[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(subject, sizeof subject, fmt, ap);
    va_end(ap);
    return dsig_fail_openssl(code, subject);
}

/* An H failure: "<curve>: <hash><suffix>". */
static int hash_fail(const struct dsig_eddsa_curve *c, const char *suffix)
{
    return fail_openssl_f(DSIG_E_CRYPTO, "%s: %s%s", c->name, c->hash_name, suffix);
}

/* ---- key type ------------------------------------------------------------------------------- */

/* The descriptor of an OKP key type (NULL, error recorded, for a key type that is not EdDSA). */
static const struct dsig_eddsa_curve *curve_of(const struct dsig_keytype *t)
{
    for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++)
        if (curves[i]->keytype == t)
            return curves[i];
    dsig_fail(DSIG_E_INTERNAL, "not an EdDSA key type");
    return NULL;
}

/* Free an impl (wiping secrets). */
static void free_impl(const struct dsig_eddsa_curve *c, struct dsig_eddsa_key *k)
{
    if (!k)
        return;
    if (c->release_key)
        c->release_key(k);
    dsig_xfree(k, c->key_size);
}

/* Build key->impl from a public key and an optional seed (which must reproduce the public key). */
static int eddsa_set(const struct dsig_eddsa_curve *c, struct dsig_key *key, const uint8_t *seed,
                     const uint8_t *pk)
{
    struct dsig_eddsa_key *k = dsig_calloc(1, c->key_size);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    int rc = DSIG_OK;
    if (pk && (rc = c->check_public(pk)))
        goto fail;
    if (seed) {
        memcpy(k->seed, seed, c->key_bytes);
        if ((rc = c->expand(k)))
            goto fail;
        k->has_seed = 1;
        if (pk && !dsig_ct_equal(pk, k->pk, c->key_bytes)) {
            rc = dsig_fail(DSIG_E_KEY, "%s: \"x\" does not match the public key derived from \"d\"",
                           c->name);
            goto fail;
        }
    } else {
        memcpy(k->pk, pk, c->key_bytes);
        if (c->init_public && (rc = c->init_public(k)))
            goto fail;
    }
    if (key->impl && key->type->destroy)
        key->type->destroy(key);
    key->impl = k;
    key->has_private = k->has_seed;
    return DSIG_OK;
fail:
    free_impl(c, k);
    return rc;
}

/* Key type hook: a fresh key from key_bytes seed bytes of the given RNG. */
int dsig_eddsa_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    const struct dsig_eddsa_curve *c = curve_of(key->type);
    if (!c)
        return DSIG_E_INTERNAL;
    if (bits && bits != c->bits)
        return dsig_fail(DSIG_E_ARG, "%s keys have a fixed size (%u bits), %u requested", c->name,
                         c->bits, bits);
    uint8_t seed[DSIG_EDDSA_MAX_BYTES];
    int rc = dsig_rng_bytes(rng, seed, c->key_bytes);
    if (rc == DSIG_OK)
        rc = eddsa_set(c, key, seed, NULL);
    dsig_memzero(seed, sizeof seed);
    return rc;
}

/* Key type hook: JWK members x (required) and d (optional), already base64url-decoded. */
int dsig_eddsa_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    const struct dsig_eddsa_curve *c = curve_of(key->type);
    if (!c)
        return DSIG_E_INTERNAL;
    if (n < 1 || !m[0].data)
        return dsig_fail(DSIG_E_KEY, "%s JWK: member \"x\" is missing", c->name);
    if (m[0].len != c->key_bytes)
        return dsig_fail(DSIG_E_KEY, "%s JWK: member \"x\" must be %zu bytes, got %zu", c->name,
                         c->key_bytes, m[0].len);
    const uint8_t *d = n >= 2 ? m[1].data : NULL;
    if (d && m[1].len != c->key_bytes)
        return dsig_fail(DSIG_E_KEY, "%s JWK: member \"d\" must be %zu bytes, got %zu", c->name,
                         c->key_bytes, m[1].len);
    return eddsa_set(c, key, d, m[0].data);
}

/* Key type hook: x, then d when asked (allocated copies). */
int dsig_eddsa_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                          size_t *n)
{
    const struct dsig_eddsa_curve *c = curve_of(key->type);
    if (!c)
        return DSIG_E_INTERNAL;
    const struct dsig_eddsa_key *k = key->impl;
    if (include_private && !k->has_seed)
        return dsig_fail(DSIG_E_NO_PRIVATE, "the %s key has no private part to export", c->name);
    size_t count = include_private ? 2 : 1;
    const uint8_t *src[2] = {k->pk, k->seed};
    static const char *const names[2] = {"x", "d"};
    for (size_t i = 0; i < count; i++) {
        m[i].name = names[i];
        m[i].len = c->key_bytes;
        m[i].data = dsig_malloc(c->key_bytes);
        if (!m[i].data) {
            for (size_t j = 0; j < i; j++) {
                dsig_xfree(m[j].data, m[j].len);
                m[j].data = NULL;
            }
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
        }
        memcpy(m[i].data, src[i], c->key_bytes);
    }
    *n = count;
    return DSIG_OK;
}

/* Key type hook: an OpenSSL EVP_PKEY (raw key) for PEM export. */
int dsig_eddsa_to_pkey(const struct dsig_key *key, int include_private, void **pkey)
{
    const struct dsig_eddsa_curve *c = curve_of(key->type);
    if (!c)
        return DSIG_E_INTERNAL;
    const struct dsig_eddsa_key *k = key->impl;
    EVP_PKEY *p = include_private && k->has_seed
                      ? EVP_PKEY_new_raw_private_key(c->evp_id, NULL, k->seed, c->key_bytes)
                      : EVP_PKEY_new_raw_public_key(c->evp_id, NULL, k->pk, c->key_bytes);
    if (!p)
        return fail_openssl_f(DSIG_E_CRYPTO, "%s EVP_PKEY", c->name);
    *pkey = p;
    return DSIG_OK;
}

/* Key type hook: from an OpenSSL EVP_PKEY; DSIG_E_KEY_MISMATCH at once for other key types. */
int dsig_eddsa_from_pkey(struct dsig_key *key, void *pkey)
{
    const struct dsig_eddsa_curve *c = curve_of(key->type);
    if (!c)
        return DSIG_E_INTERNAL;
    EVP_PKEY *p = pkey;
    if (EVP_PKEY_get_id(p) != c->evp_id)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "not an %s key", c->name);
    uint8_t seed[DSIG_EDDSA_MAX_BYTES], pk[DSIG_EDDSA_MAX_BYTES];
    size_t len = c->key_bytes;
    int rc;
    ERR_set_mark();
    int has_priv = EVP_PKEY_get_raw_private_key(p, seed, &len) == 1 && len == c->key_bytes;
    ERR_pop_to_mark();
    len = c->key_bytes;
    if (EVP_PKEY_get_raw_public_key(p, pk, &len) != 1 || len != c->key_bytes)
        rc = fail_openssl_f(DSIG_E_KEY, "%s PEM: cannot read the public key", c->name);
    else
        rc = eddsa_set(c, key, has_priv ? seed : NULL, pk);
    dsig_memzero(seed, sizeof seed);
    return rc;
}

/* Key type hook: a key holding only A. */
int dsig_eddsa_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct dsig_eddsa_curve *c = curve_of(src->type);
    if (!c)
        return DSIG_E_INTERNAL;
    const struct dsig_eddsa_key *k = src->impl;
    return eddsa_set(c, dst, NULL, k->pk);
}

/* Key type hook: wipe and free. */
void dsig_eddsa_destroy(struct dsig_key *key)
{
    const struct dsig_eddsa_curve *c = curve_of(key->type);
    if (c)
        free_impl(c, key->impl);
    key->impl = NULL;
}

/* Key type hook: encoded key size, as OpenSSL reports it. */
unsigned dsig_eddsa_bits(const struct dsig_key *key)
{
    const struct dsig_eddsa_curve *c = curve_of(key->type);
    return c ? c->bits : 0;
}

const char *const dsig_eddsa_pub_members[] = {"x", NULL};
const char *const dsig_eddsa_priv_members[] = {"d", NULL};

/* ---- checks shared by the streaming and one-shot paths ----------------------------------------- */

/* Signing needs the seed. */
static int need_private(const struct dsig_eddsa_curve *c, const struct dsig_eddsa_key *k)
{
    if (!k || !k->has_seed)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s signing needs a private key", c->name);
    return DSIG_OK;
}

/* The caller's buffer must hold R ‖ S. */
static int check_cap(const struct dsig_eddsa_curve *c, size_t cap)
{
    if (cap < 2 * c->key_bytes)
        return dsig_fail(DSIG_E_BUFFER, "%s signature needs %zu bytes, buffer has %zu", c->name,
                         2 * c->key_bytes, cap);
    return DSIG_OK;
}

/* A signature is exactly R ‖ S. */
static int check_sig_len(const struct dsig_eddsa_curve *c, size_t sig_len)
{
    if (sig_len != 2 * c->key_bytes)
        return dsig_fail(DSIG_E_VERIFY, "%s signature must be %zu bytes, got %zu", c->name,
                         2 * c->key_bytes, sig_len);
    return DSIG_OK;
}

/* ---- streaming ------------------------------------------------------------------------------ */

/* Ops hook: wipe and free a state. */
static void eddsa_free_state(void *state)
{
    struct dsig_eddsa_state *st = state;
    if (!st)
        return;
    const struct dsig_eddsa_curve *c = st->curve;
    if (c->release_state)
        c->release_state(st);
    EVP_MD_CTX_free(st->md);
    dsig_xfree(st, c->state_size);
}

/* Allocate a state with its EVP context; NULL (error in *rc) on failure. */
static struct dsig_eddsa_state *new_state(const struct dsig_eddsa_curve *c, int *rc)
{
    if (!c->md()) {
        *rc = dsig_fail(DSIG_E_CRYPTO, "%s: %s is not available from OpenSSL", c->name, c->hash_name);
        return NULL;
    }
    struct dsig_eddsa_state *st = dsig_calloc(1, c->state_size);
    if (st && !(st->md = EVP_MD_CTX_new())) {
        dsig_xfree(st, c->state_size);
        st = NULL;
    }
    if (!st) {
        *rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        return NULL;
    }
    st->curve = c;
    return st;
}

/* Start the k-hash with dom ‖ R ‖ A (RFC 8032 §5.1.6 step 4 / §5.2.6 step 4). */
static int start_k(struct dsig_eddsa_state *st)
{
    const struct dsig_eddsa_curve *c = st->curve;
    if (!EVP_DigestInit_ex(st->md, c->md(), NULL) ||
        (c->dom_len && !EVP_DigestUpdate(st->md, c->dom, c->dom_len)) ||
        !EVP_DigestUpdate(st->md, st->R, c->key_bytes) || !EVP_DigestUpdate(st->md, st->A, c->key_bytes))
        return hash_fail(c, "");
    return DSIG_OK;
}

/* Finish the current hash into h (hash_bytes bytes). */
static int squeeze(struct dsig_eddsa_state *st, uint8_t *h)
{
    const struct dsig_eddsa_curve *c = st->curve;
    int ok = c->xof ? EVP_DigestFinalXOF(st->md, h, c->hash_bytes)
                    : EVP_DigestFinal_ex(st->md, h, NULL);
    return ok ? DSIG_OK : hash_fail(c, "");
}

/* @spec RFC 8032 §5.1.6 / §5.2.6 steps 2-3 with the hedged one-pass nonce of docs/eddsa-one-pass.md */
static int eddsa_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                           const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    const struct dsig_eddsa_curve *c = alg->params;
    const struct dsig_eddsa_key *k = key->impl;
    int rc = need_private(c, k);
    if (rc)
        return rc;
    struct dsig_eddsa_state *st = new_state(c, &rc);
    if (!st)
        return rc;
    uint8_t h[DSIG_EDDSA_MAX_HASH];
    if (!EVP_DigestInit_ex(st->md, c->md(), NULL))
        rc = hash_fail(c, "");
    if (rc == DSIG_OK)
        rc = dsig_eddsa_absorb_nonce_seed(st->md, c->nonce_tag, k->prefix, c->key_bytes);
    if (rc == DSIG_OK)
        rc = squeeze(st, h);
    if (rc == DSIG_OK)
        rc = c->nonce(st, h);
    if (rc == DSIG_OK) {
        memcpy(st->A, k->pk, c->key_bytes);
        memcpy(st->s, k->s, c->key_bytes);
        rc = start_k(st);
    }
    dsig_memzero(h, sizeof h);
    if (rc) {
        eddsa_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* Absorb a chunk into the k-hash: a plain EVP_DigestUpdate, nothing else (the hot path). */
static int eddsa_update(void *state, const uint8_t *data, size_t len)
{
    struct dsig_eddsa_state *st = state;
    if (!EVP_DigestUpdate(st->md, data, len))
        return hash_fail(st->curve, " update");
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.6 / §5.2.6 steps 4-6: S = (r + k·s) mod L, signature R ‖ S. */
static int eddsa_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct dsig_eddsa_state *st = state;
    const struct dsig_eddsa_curve *c = st->curve;
    int rc = check_cap(c, cap);
    if (rc)
        return rc;
    uint8_t h[DSIG_EDDSA_MAX_HASH];
    rc = squeeze(st, h);
    if (rc == DSIG_OK)
        rc = c->sign_finish(st, h, sig);
    if (rc == DSIG_OK)
        *sig_len = 2 * c->key_bytes;
    dsig_memzero(h, sizeof h);
    dsig_memzero(st->s, sizeof st->s);
    return rc;
}

/* @spec RFC 8032 §5.1.7 / §5.2.7 step 1: length, S < L, R decodes; then start H(dom ‖ R ‖ A ‖ M). */
static int eddsa_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                             const uint8_t *sig, size_t sig_len,
                             const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    const struct dsig_eddsa_curve *c = alg->params;
    const struct dsig_eddsa_key *k = key->impl;
    int rc = check_sig_len(c, sig_len);
    if (rc || (rc = c->check_sig(sig)))
        return rc;
    struct dsig_eddsa_state *st = new_state(c, &rc);
    if (!st)
        return rc;
    memcpy(st->R, sig, c->key_bytes);
    memcpy(st->S, sig + c->key_bytes, c->key_bytes);
    memcpy(st->A, k->pk, c->key_bytes);
    if ((rc = start_k(st))) {
        eddsa_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.7 / §5.2.7 steps 2-3: k from the hash, then the curve's equation. */
static int eddsa_verify_final(void *state)
{
    struct dsig_eddsa_state *st = state;
    uint8_t h[DSIG_EDDSA_MAX_HASH];
    int rc = squeeze(st, h);
    if (rc == DSIG_OK)
        rc = st->curve->verify_finish(st, h);
    dsig_memzero(h, sizeof h);
    return rc;
}

/* @spec RFC 8032 §5.1.6 / §5.2.6 — exact deterministic one-shot signature (the curve's backend). */
static int eddsa_sign_oneshot(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg,
                              size_t len, uint8_t *sig, size_t cap, size_t *sig_len,
                              const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    const struct dsig_eddsa_curve *c = alg->params;
    int rc = need_private(c, key->impl);
    if (rc || (rc = check_cap(c, cap)) || (rc = c->sign_oneshot(key->impl, msg, len, sig)))
        return rc;
    *sig_len = 2 * c->key_bytes;
    return DSIG_OK;
}

/* @spec RFC 8032 §5.1.7 / §5.2.7 — exact one-shot verification (the curve's backend). */
static int eddsa_verify_oneshot(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg,
                                size_t len, const uint8_t *sig, size_t sig_len,
                                const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    const struct dsig_eddsa_curve *c = alg->params;
    int rc = check_sig_len(c, sig_len);
    if (rc)
        return rc;
    return c->verify_oneshot(key->impl, msg, len, sig);
}

static const struct dsig_alg_oneshot eddsa_oneshot = {
    .sign = eddsa_sign_oneshot,
    .verify = eddsa_verify_oneshot,
};

const struct dsig_alg_ops dsig_eddsa_ops = {
    .sign_init = eddsa_sign_init,
    .sign_update = eddsa_update,
    .sign_final = eddsa_sign_final,
    .verify_init = eddsa_verify_init,
    .verify_update = eddsa_update,
    .verify_final = eddsa_verify_final,
    .free_state = eddsa_free_state,
    .oneshot = &eddsa_oneshot,
};
