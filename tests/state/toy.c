/* A test-only stateful scheme for the state-file tests (see toy.h). */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "toy.h"

struct toy_key {
    uint8_t seed[32];
    uint64_t cap;
};

struct toy_ctx {
    EVP_MD_CTX *md;
    uint8_t q[8];
    uint8_t expect[32]; /* verify: the signature's digest */
    const struct toy_key *key;
};

/* Big-endian u64 store/load. */
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}
static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

uint64_t toy_sig_index(const uint8_t *sig) { return get64(sig); }

/* Make a random key; bits = capacity. */
static int toy_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    struct toy_key *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return DSIG_E_NOMEM;
    int rc = dsig_rng_bytes(rng, k->seed, 32);
    k->cap = bits ? bits : 1000;
    key->impl = k;
    return rc;
}

/* Key from 40 bytes (seed || cap). */
static int toy_from_bytes(struct dsig_key *key, const uint8_t *in, size_t len)
{
    if (len != 40)
        return dsig_fail(DSIG_E_KEY, "toy key must be 40 bytes");
    struct toy_key *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return DSIG_E_NOMEM;
    memcpy(k->seed, in, 32);
    k->cap = get64(in + 32);
    if (k->cap == 0 || k->cap > (1u << 20)) {
        dsig_xfree(k, sizeof *k);
        return dsig_fail(DSIG_E_KEY, "toy capacity out of range");
    }
    if (key->impl)
        dsig_xfree(key->impl, sizeof *k);
    key->impl = k;
    return DSIG_OK;
}

/* 40 bytes of a key. */
static uint8_t *toy_bytes(const struct dsig_key *key)
{
    const struct toy_key *k = key->impl;
    uint8_t *b = dsig_malloc(40);
    if (b) {
        memcpy(b, k->seed, 32);
        put64(b + 32, k->cap);
    }
    return b;
}

static int toy_import(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    if (n < 1 || !m[0].data)
        return dsig_fail(DSIG_E_KEY, "toy JWK without pub");
    return toy_from_bytes(key, m[0].data, m[0].len);
}

static int toy_export(const struct dsig_key *key, int include_private, dsig_jwk_member *m, size_t *n)
{
    (void)include_private;
    m[0].name = "pub";
    m[0].data = toy_bytes(key);
    m[0].len = 40;
    *n = 1;
    return m[0].data ? DSIG_OK : DSIG_E_NOMEM;
}

static int toy_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    uint8_t *b = toy_bytes(src);
    int rc = b ? toy_from_bytes(dst, b, 40) : DSIG_E_NOMEM;
    dsig_xfree(b, 40);
    return rc;
}

static void toy_destroy(struct dsig_key *key)
{
    dsig_xfree(key->impl, sizeof(struct toy_key));
    key->impl = NULL;
}

static int toy_save(const struct dsig_key *key, uint8_t **out, size_t *len)
{
    *out = toy_bytes(key);
    *len = 40;
    return *out ? DSIG_OK : DSIG_E_NOMEM;
}

static int toy_load(struct dsig_key *key, const uint8_t *in, size_t len, uint64_t next)
{
    (void)next;
    return toy_from_bytes(key, in, len);
}

static uint64_t toy_capacity(const struct dsig_key *key)
{
    return ((const struct toy_key *)key->impl)->cap;
}

static const struct dsig_stateful_ops toy_stateful = {toy_save, toy_load, toy_capacity, NULL};
static const char *const toy_pub_members[] = {"pub", NULL};
static const char *const toy_priv_members[] = {NULL};

static const struct dsig_keytype toy_keytype = {
    .kty = "AKP",
    .pub_members = toy_pub_members,
    .priv_members = toy_priv_members,
    .has_public = 1,
    .sized = 1, /* generate reads bits as the capacity */
    .generate = toy_generate,
    .import_jwk = toy_import,
    .export_jwk = toy_export,
    .public_copy = toy_public_copy,
    .destroy = toy_destroy,
    .alg = "TEST-STATEFUL",
    .stateful = &toy_stateful,
};

/* Start a digest of seed || q. */
static int toy_start(struct toy_ctx **out, const struct dsig_key *key, uint64_t q)
{
    struct toy_ctx *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return DSIG_E_NOMEM;
    c->key = key->impl;
    put64(c->q, q);
    c->md = EVP_MD_CTX_new();
    if (!c->md || !EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) ||
        !EVP_DigestUpdate(c->md, c->key->seed, 32) || !EVP_DigestUpdate(c->md, c->q, 8)) {
        EVP_MD_CTX_free(c->md);
        dsig_xfree(c, sizeof *c);
        return DSIG_E_CRYPTO;
    }
    *out = c;
    return DSIG_OK;
}

static int toy_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                         const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    (void)alg;
    uint64_t q;
    int rc = dsig_state_take_index(key, &q); /* refuses keys without a state file */
    if (rc)
        return rc;
    return toy_start((struct toy_ctx **)state, key, q);
}

static int toy_update(void *state, const uint8_t *data, size_t len)
{
    struct toy_ctx *c = state;
    return EVP_DigestUpdate(c->md, data, len) ? DSIG_OK : DSIG_E_CRYPTO;
}

static int toy_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct toy_ctx *c = state;
    if (cap < TOY_SIG_LEN)
        return DSIG_E_BUFFER;
    memcpy(sig, c->q, 8);
    if (!EVP_DigestFinal_ex(c->md, sig + 8, NULL))
        return DSIG_E_CRYPTO;
    *sig_len = TOY_SIG_LEN;
    return DSIG_OK;
}

static int toy_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                           const uint8_t *sig, size_t sig_len,
                           const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    (void)alg;
    if (sig_len != TOY_SIG_LEN)
        return DSIG_E_VERIFY;
    struct toy_ctx *c;
    int rc = toy_start(&c, key, get64(sig));
    if (rc)
        return rc;
    memcpy(c->expect, sig + 8, 32);
    *state = c;
    return DSIG_OK;
}

static int toy_verify_final(void *state)
{
    struct toy_ctx *c = state;
    uint8_t d[32];
    if (!EVP_DigestFinal_ex(c->md, d, NULL))
        return DSIG_E_CRYPTO;
    return CRYPTO_memcmp(d, c->expect, 32) == 0 ? DSIG_OK : DSIG_E_VERIFY;
}

static void toy_free(void *state)
{
    struct toy_ctx *c = state;
    if (!c)
        return;
    EVP_MD_CTX_free(c->md);
    dsig_xfree(c, sizeof *c);
}

static const struct dsig_alg_ops toy_ops = {
    .sign_init = toy_sign_init,
    .sign_update = toy_update,
    .sign_final = toy_sign_final,
    .verify_init = toy_verify_init,
    .verify_update = toy_update,
    .verify_final = toy_verify_final,
    .free_state = toy_free,
};

const dsig_alg toy_alg = {
    .name = "TEST-STATEFUL",
    .family = "TEST",
    .description = "test-only stateful scheme (insecure)",
    .keytype = &toy_keytype,
    .baseline = "SHA-256",
    .flags = DSIG_ALG_STATEFUL | DSIG_ALG_ONE_PASS,
    .sig_max = TOY_SIG_LEN,
    .ops = &toy_ops,
};

void toy_register(void) { dsig_state_set_test_alg(&toy_alg); }
