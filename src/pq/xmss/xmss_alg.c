/*
 * src/pq/xmss/xmss_alg.c — the "XMSS" and "XMSSMT" providers (stateful; RFC 8391, SP 800-208).
 *
 * Key types: AKP with "alg" XMSS / XMSSMT; the JWK "pub" is the RFC 8391 public key encoding
 * OID ‖ root ‖ SEED (§4.1.7 / §4.2.2), whose 4-byte typecode selects the parameter set. There is no
 * "priv": the private key lives only in a state file (include/dsig/state.h) through the stateful ops
 * below. Signing takes its index from dsig_state_take_index (durably reserved by the core) and
 * refuses otherwise.
 *
 * Streaming: r = PRF(SK_PRF, toByte(idx, 32)) is known at sign_init, so
 * H_msg = Hash(toByte(2) ‖ r ‖ root ‖ toByte(idx, n) ‖ M) streams M once; verification reads r and idx
 * from the signature and streams M once too. The payload goes through OpenSSL EVP (the bare hash:
 * the digest objects are fetched once); the many short tree hashes use src/hash directly.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/ct.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"
#include "core/stateful.h"
#include "dsig/mem.h"
#include "pq/xmss/xmss.h"

/* Defaults: XMSS-SHA2_10_256 is the only single-tree set whose key generation is fast (~0.2 s; the
 * h = 16 set takes ~10 s, h = 20 minutes) — 1024 signatures; XMSSMT-SHA2_20/4_256 gives 2^20
 * signatures with a key generation of 4 trees of 32 leaves (milliseconds) and short signing. */
#define XMSS_DEFAULT "XMSS-SHA2_10_256"
#define XMSSMT_DEFAULT "XMSSMT-SHA2_20/4_256"

#define PK_MAX (4 + 2 * XMSS_NMAX)
#define PREFIX_MAX (64 + 3 * XMSS_NMAX)

struct xmss_key {
    const dsig_xmss_params *p;
    int has_sk;
    uint8_t pk[PK_MAX];            /* OID ‖ root ‖ SEED */
    uint8_t sk_prf[XMSS_NMAX];     /* secret */
    dsig_xmss_hash hc;             /* seeds and precomputed states (SK_SEED secret) */
    dsig_xmss_trav *trav;          /* signing keys: positioned at the next index */
    pthread_mutex_t lock;          /* serializes index taking and the traversal */
};

struct xmss_state {
    EVP_MD_CTX *md;
    const dsig_xmss_params *p;
    int sign;
    size_t sig_len;
    uint8_t *sig;                  /* dsig_malloc'd, p->sig_bytes */
    uint8_t root[XMSS_NMAX];
    dsig_xmss_hash hc;             /* a copy: the state does not depend on the key's lifetime */
};

/* ---- H_msg over EVP ------------------------------------------------------------------------- */

static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_sha256, *md_sha512, *md_shake128, *md_shake256;

/* Fetch the four payload digests once for the process. */
static void md_fetch(void)
{
    md_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    md_sha512 = EVP_MD_fetch(NULL, "SHA512", NULL);
    md_shake128 = EVP_MD_fetch(NULL, "SHAKE128", NULL);
    md_shake256 = EVP_MD_fetch(NULL, "SHAKE256", NULL);
}

/* The EVP digest behind a set's Hash (RFC 8391 §5.1, SP 800-208 §5). */
static const EVP_MD *md_of(const dsig_xmss_params *p)
{
    pthread_once(&md_once, md_fetch);
    switch (p->hash) {
    case XMSS_SHA256: return md_sha256;
    case XMSS_SHA512: return md_sha512;
    case XMSS_SHAKE128: return md_shake128;
    default: return md_shake256;
    }
}

/* @spec RFC 8391 §5.1 H_msg: start Hash(toByte(2, padlen) ‖ r ‖ root ‖ toByte(idx, n) ‖ ...). */
static int hmsg_start(EVP_MD_CTX **md, const dsig_xmss_params *p, const uint8_t *r, const uint8_t *root,
                      uint64_t idx)
{
    uint8_t pre[PREFIX_MAX];
    size_t L = dsig_xmss_hmsg_prefix(p, pre, r, root, idx);
    const EVP_MD *m = md_of(p);
    if (!m)
        return dsig_fail(DSIG_E_CRYPTO, "XMSS: OpenSSL has no digest for H_msg");
    *md = EVP_MD_CTX_new();
    if (!*md)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (EVP_DigestInit_ex(*md, m, NULL) != 1 || EVP_DigestUpdate(*md, pre, L) != 1)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "XMSS H_msg");
    return DSIG_OK;
}

/* Finish H_msg: the first n bytes of the digest (XOF: n bytes). */
static int hmsg_final(EVP_MD_CTX *md, const dsig_xmss_params *p, uint8_t *out)
{
    uint8_t d[64];
    int ok = (p->hash == XMSS_SHAKE128 || p->hash == XMSS_SHAKE256)
                 ? EVP_DigestFinalXOF(md, out, p->n)
                 : EVP_DigestFinal_ex(md, d, NULL);
    if (ok != 1)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "XMSS H_msg");
    if (p->hash == XMSS_SHA256 || p->hash == XMSS_SHA512)
        memcpy(out, d, p->n);
    return DSIG_OK;
}

/* ---- key types ------------------------------------------------------------------------------- */

static const char *const akp_pub_members[] = {"pub", NULL};
static const char *const akp_priv_members[] = {NULL}; /* no "priv": state files only */

static int xk_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng);
static int xk_generate_param(struct dsig_key *key, const char *param, unsigned bits, dsig_rng *rng);
static int xk_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n);
static int xk_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                         size_t *n);
static int xk_public_copy(struct dsig_key *dst, const struct dsig_key *src);
static void xk_destroy(struct dsig_key *key);
static unsigned xk_bits(const struct dsig_key *key);
static int xk_save_private(const struct dsig_key *key, uint8_t **out, size_t *len);
static int xk_load_private(struct dsig_key *key, const uint8_t *in, size_t len, uint64_t next);
static uint64_t xk_capacity(const struct dsig_key *key);
static int xk_check_private(const uint8_t *priv, size_t priv_len, const uint8_t *pub, size_t pub_len);

static const struct dsig_stateful_ops xk_stateful = {
    .save_private = xk_save_private,
    .load_private = xk_load_private,
    .capacity = xk_capacity,
    .check_private = xk_check_private,
};

#define XMSS_KEYTYPE(name)                                                                          \
    {                                                                                               \
        .kty = "AKP", .crv = NULL, .pub_members = akp_pub_members,                                  \
        .priv_members = akp_priv_members, .has_public = 1, .generate = xk_generate,                 \
        .import_jwk = xk_import_jwk, .export_jwk = xk_export_jwk, .to_pkey = NULL,                  \
        .from_pkey = NULL, .public_copy = xk_public_copy, .destroy = xk_destroy, .bits = xk_bits,   \
        .alg = name, .stateful = &xk_stateful, .generate_param = xk_generate_param,                 \
    }

static const struct dsig_keytype dsig_keytype_xmss = XMSS_KEYTYPE("XMSS");
static const struct dsig_keytype dsig_keytype_xmssmt = XMSS_KEYTYPE("XMSSMT");

/* 1 for the XMSS^MT key type. */
static int is_mt(const struct dsig_keytype *t)
{
    return t == &dsig_keytype_xmssmt;
}

/* A fresh impl (lock initialized) or NULL. */
static struct xmss_key *impl_new(const dsig_xmss_params *p)
{
    struct xmss_key *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->p = p;
    if (pthread_mutex_init(&k->lock, NULL) != 0) {
        dsig_xfree(k, 0);
        return NULL;
    }
    return k;
}

/* Wipe and free an impl. */
static void impl_free(struct xmss_key *k)
{
    if (!k)
        return;
    dsig_xmss_trav_free(k->trav);
    pthread_mutex_destroy(&k->lock);
    dsig_xfree(k, sizeof *k);
}

/* Fill the public key OID ‖ root ‖ SEED. */
static void set_pk(struct xmss_key *k, const uint8_t *root, const uint8_t *seed)
{
    const dsig_xmss_params *p = k->p;
    k->pk[0] = (uint8_t)(p->oid >> 24);
    k->pk[1] = (uint8_t)(p->oid >> 16);
    k->pk[2] = (uint8_t)(p->oid >> 8);
    k->pk[3] = (uint8_t)p->oid;
    memcpy(k->pk + 4, root, p->n);
    memcpy(k->pk + 4 + p->n, seed, p->n);
}

/* The parameter set a key type may use, from a name (NULL = the type's default). */
static int pick_params(const struct dsig_keytype *t, const char *param, const dsig_xmss_params **out)
{
    const char *name = param ? param : (is_mt(t) ? XMSSMT_DEFAULT : XMSS_DEFAULT);
    const dsig_xmss_params *p = dsig_xmss_params_by_name(name);
    if (!p || p->mt != is_mt(t))
        return dsig_fail(DSIG_E_ARG,
                         "%s: unknown parameter set \"%s\" (valid: %s-SHA2|SHAKE|SHAKE256_%s_256|192|512 "
                         "as in RFC 8391 / SP 800-208, e.g. \"%s\")",
                         t->alg, name, is_mt(t) ? "XMSSMT" : "XMSS", is_mt(t) ? "20/2..60/12" : "10|16|20",
                         is_mt(t) ? XMSSMT_DEFAULT : XMSS_DEFAULT);
    *out = p;
    return DSIG_OK;
}

/* Build a private impl from the seeds; the traversal is positioned at `next` (UINT64_MAX: none).
 * root: expected root (checked) or NULL (computed: key generation). */
static int impl_from_seeds(struct dsig_key *key, const dsig_xmss_params *p, const uint8_t *sk_seed,
                           const uint8_t *sk_prf, const uint8_t *pub_seed, const uint8_t *root,
                           uint64_t next, const uint8_t *top, size_t top_len)
{
    struct xmss_key *k = impl_new(p);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    dsig_xmss_hash_init(&k->hc, p, pub_seed, sk_seed);
    memcpy(k->sk_prf, sk_prf, p->n);
    k->has_sk = 1;
    uint8_t r[XMSS_NMAX];
    int rc;
    if (!root) {
        rc = dsig_xmss_keygen(&k->hc, r, &k->trav);
    } else if (p->h < 64 && next >> p->h) {
        memcpy(r, root, p->n); /* exhausted: verify-only use; nothing to position */
        rc = DSIG_OK;
    } else {
        rc = dsig_xmss_trav_new(&k->hc, next, top, top_len, &k->trav);
        /* Whether the seeds give the stored root is public (the state file is consistent or not). */
        int same = rc == DSIG_OK && dsig_ct_equal(dsig_xmss_trav_root(k->trav), root, p->n);
        DSIG_CT_DECLASSIFY(&same, sizeof same);
        if (rc == DSIG_OK && !same)
            rc = dsig_fail(DSIG_E_KEY, "XMSS state: the seeds do not give the stored root (corrupt "
                                       "state or wrong parameter set)");
        memcpy(r, root, p->n);
    }
    if (rc) {
        impl_free(k);
        return rc;
    }
    set_pk(k, r, pub_seed);
    if (key->impl)
        impl_free(key->impl);
    key->impl = k;
    key->has_private = 1;
    return DSIG_OK;
}

/* Key generation with the type's default set. */
static int xk_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    return xk_generate_param(key, NULL, bits, rng);
}

/* @spec RFC 8391 §4.1.7 / §4.2.2 key generation: SK_SEED, SK_PRF, PUB_SEED (n bytes each, in this
 * order from the RNG, as the reference implementation draws them), then the root. */
static int xk_generate_param(struct dsig_key *key, const char *param, unsigned bits, dsig_rng *rng)
{
    const dsig_xmss_params *p = NULL;
    (void)bits;
    int rc = pick_params(key->type, param, &p);
    if (rc)
        return rc;
    uint8_t seeds[3 * XMSS_NMAX];
    rc = dsig_rng_bytes(rng, seeds, 3 * p->n);
    if (rc == DSIG_OK)
        rc = impl_from_seeds(key, p, seeds, seeds + p->n, seeds + 2 * p->n, NULL, 0, NULL, 0);
    dsig_memzero(seeds, sizeof seeds);
    return rc;
}

/* Parse OID ‖ root ‖ SEED for a key type; DSIG_E_KEY naming the problem. */
static int parse_pk(const struct dsig_keytype *t, const uint8_t *pk, size_t len,
                    const dsig_xmss_params **out)
{
    if (len < 4)
        return dsig_fail(DSIG_E_KEY, "%s JWK: \"pub\" is %zu bytes, too short for the OID", t->alg, len);
    uint32_t oid = (uint32_t)pk[0] << 24 | (uint32_t)pk[1] << 16 | (uint32_t)pk[2] << 8 | pk[3];
    const dsig_xmss_params *p = dsig_xmss_params_by_oid(is_mt(t), oid);
    if (!p)
        return dsig_fail(DSIG_E_KEY, "%s JWK: \"pub\" has unknown parameter set typecode 0x%08x",
                         t->alg, oid);
    if (len != p->pk_bytes)
        return dsig_fail(DSIG_E_KEY, "%s JWK: \"pub\" must be %zu bytes (OID ‖ root ‖ SEED) for "
                                     "typecode 0x%08x, got %zu", t->alg, p->pk_bytes, oid, len);
    *out = p;
    return DSIG_OK;
}

/* A public-only impl from an RFC 8391 public key. */
static int set_public(struct dsig_key *key, const dsig_xmss_params *p, const uint8_t *pk)
{
    struct xmss_key *k = impl_new(p);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    memcpy(k->pk, pk, p->pk_bytes);
    dsig_xmss_hash_init(&k->hc, p, pk + 4 + p->n, NULL);
    if (key->impl)
        impl_free(key->impl);
    key->impl = k;
    key->has_private = 0;
    return DSIG_OK;
}

/* JWK import: "pub" only ("priv" is not a member of these types). */
static int xk_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    if (n < 1 || !m[0].data)
        return dsig_fail(DSIG_E_KEY, "%s JWK: member \"pub\" is missing", key->type->alg);
    const dsig_xmss_params *p = NULL;
    int rc = parse_pk(key->type, m[0].data, m[0].len, &p);
    return rc ? rc : set_public(key, p, m[0].data);
}

/* JWK export: "pub" (private keys are never exported: they live in state files). */
static int xk_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                         size_t *n)
{
    const struct xmss_key *k = key->impl;
    (void)include_private;
    m[0].name = "pub";
    m[0].len = k->p->pk_bytes;
    m[0].data = dsig_malloc(m[0].len);
    if (!m[0].data)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    memcpy(m[0].data, k->pk, m[0].len);
    *n = 1;
    return DSIG_OK;
}

/* Public half of a key. */
static int xk_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct xmss_key *k = src->impl;
    return set_public(dst, k->p, k->pk);
}

/* Wipe and free. */
static void xk_destroy(struct dsig_key *key)
{
    impl_free(key->impl);
    key->impl = NULL;
}

/* Security level in bits: 8n (the hash output length). */
static unsigned xk_bits(const struct dsig_key *key)
{
    const struct xmss_key *k = key->impl;
    return k ? k->p->n * 8 : 0;
}

/* Saved private material (version 1):
 *   "XMSS" ‖ 0x01 ‖ mt (1) ‖ OID (4) ‖ SK_SEED ‖ SK_PRF ‖ PUB_SEED ‖ root ‖ top_len (4) ‖ top
 * where top is the static upper part of a single tree (levels split..h, only when h > 10) so that
 * reloading rebuilds just one bottom subtree. */
#define SAVE_HDR 10

/* Serialize the private key for the state file. */
static int xk_save_private(const struct dsig_key *key, uint8_t **out, size_t *len)
{
    const struct xmss_key *k = key->impl;
    if (!k || !k->has_sk)
        return dsig_fail(DSIG_E_NO_PRIVATE, "XMSS: no private key to save");
    const dsig_xmss_params *p = k->p;
    const uint8_t *top = NULL;
    size_t top_len = 0;
    if (k->trav)
        dsig_xmss_trav_top(k->trav, &top, &top_len);
    size_t L = SAVE_HDR + 4 * (size_t)p->n + 4 + top_len;
    uint8_t *b = dsig_malloc(L);
    if (!b)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    memcpy(b, "XMSS", 4);
    b[4] = 1;
    b[5] = (uint8_t)p->mt;
    memcpy(b + 6, k->pk, 4);
    uint8_t *o = b + SAVE_HDR;
    memcpy(o, k->hc.sk_seed, p->n);
    memcpy(o + p->n, k->sk_prf, p->n);
    memcpy(o + 2 * p->n, k->hc.pub_seed, p->n);
    memcpy(o + 3 * p->n, k->pk + 4, p->n);
    o += 4 * p->n;
    o[0] = (uint8_t)(top_len >> 24);
    o[1] = (uint8_t)(top_len >> 16);
    o[2] = (uint8_t)(top_len >> 8);
    o[3] = (uint8_t)top_len;
    if (top_len)
        memcpy(o + 4, top, top_len);
    *out = b;
    *len = L;
    return DSIG_OK;
}

/* Rebuild the private key and its traversal at `next` (cost: the active trees, docs/xmss.md). */
static int xk_load_private(struct dsig_key *key, const uint8_t *in, size_t len, uint64_t next)
{
    const char *what = key->type->alg;
    if (len < SAVE_HDR + 4 || memcmp(in, "XMSS", 4) != 0 || in[4] != 1)
        return dsig_fail(DSIG_E_KEY, "%s state: private part has an unknown format", what);
    if (in[5] != is_mt(key->type))
        return dsig_fail(DSIG_E_KEY, "%s state: private part is for %s", what, in[5] ? "XMSSMT" : "XMSS");
    uint32_t oid = (uint32_t)in[6] << 24 | (uint32_t)in[7] << 16 | (uint32_t)in[8] << 8 | in[9];
    const dsig_xmss_params *p = dsig_xmss_params_by_oid(in[5], oid);
    if (!p)
        return dsig_fail(DSIG_E_KEY, "%s state: unknown parameter set typecode 0x%08x", what, oid);
    size_t need = SAVE_HDR + 4 * (size_t)p->n + 4;
    if (len < need)
        return dsig_fail(DSIG_E_KEY, "%s state: private part truncated (%zu bytes)", what, len);
    const uint8_t *s = in + SAVE_HDR, *tl = s + 4 * p->n;
    size_t top_len = (size_t)tl[0] << 24 | (size_t)tl[1] << 16 | (size_t)tl[2] << 8 | tl[3];
    if (len != need + top_len)
        return dsig_fail(DSIG_E_KEY, "%s state: private part length %zu, expected %zu", what, len,
                         need + top_len);
    return impl_from_seeds(key, p, s, s + p->n, s + 2 * p->n, s + 3 * p->n, next,
                           top_len ? tl + 4 : NULL, top_len);
}

/* Before any tree is rebuilt: the saved OID, PUB_SEED and root must be the stored public key's
 * (OID ‖ root ‖ PUB_SEED; all public). SK_SEED is checked by load_private (the rebuilt root must match);
 * SK_PRF cannot be checked at all: no public value depends on it (docs/xmss.md). */
static int xk_check_private(const uint8_t *priv, size_t priv_len, const uint8_t *pub, size_t pub_len)
{
    if (priv_len < SAVE_HDR || pub_len < 4 || memcmp(priv + 6, pub, 4) != 0)
        return dsig_fail(DSIG_E_KEY, "XMSS state: the private part's parameter set differs from the "
                                     "public key's");
    size_t n = (pub_len - 4) / 2;
    if (pub_len != 4 + 2 * n || priv_len < SAVE_HDR + 4 * n)
        return DSIG_OK; /* malformed: load_private names the problem */
    const uint8_t *s = priv + SAVE_HDR;
    if (memcmp(s + 2 * n, pub + 4 + n, n) != 0 || memcmp(s + 3 * n, pub + 4, n) != 0)
        return dsig_fail(DSIG_E_KEY, "XMSS state: the private part's PUB_SEED or root differs from the "
                                     "public key's");
    return DSIG_OK;
}

/* 2^h signatures per key. */
static uint64_t xk_capacity(const struct dsig_key *key)
{
    const struct xmss_key *k = key->impl;
    return k ? (uint64_t)1 << k->p->h : 0;
}

/* ---- algorithm ----------------------------------------------------------------------------- */

/* Free a state of either direction. */
static void x_free_state(void *st)
{
    struct xmss_state *s = st;
    if (!s)
        return;
    EVP_MD_CTX_free(s->md);
    dsig_xfree(s->sig, s->sig_len);
    dsig_xfree(s, sizeof *s);
}

/* @spec RFC 8391 §4.1.9 / §4.2.4: take the next index, build everything but the layer-0 WOTS+
 * signature, start H_msg. */
static int x_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                       const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    (void)alg;
    *state = NULL;
    struct xmss_key *k = key->impl;
    if (!k || !k->has_sk || !key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s: signing needs the private key (a state file)",
                         key->type->alg);
    const dsig_xmss_params *p = k->p;
    struct xmss_state *s = dsig_calloc(1, sizeof *s);
    if (!s)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    s->p = p;
    s->sign = 1;
    s->sig_len = p->sig_bytes;
    s->sig = dsig_malloc(s->sig_len);
    if (!s->sig) {
        x_free_state(s);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    uint64_t q;
    pthread_mutex_lock(&k->lock);
    int rc = dsig_state_take_index(key, &q);
    if (rc == DSIG_OK && !k->trav)
        rc = dsig_xmss_trav_new(&k->hc, q, NULL, 0, &k->trav);
    if (rc == DSIG_OK)
        rc = dsig_xmss_sign_prepare(&k->hc, k->trav, k->sk_prf, q, s->sig);
    pthread_mutex_unlock(&k->lock);
    if (rc == DSIG_OK) {
        s->hc = k->hc;
        memcpy(s->root, k->pk + 4, p->n);
        rc = hmsg_start(&s->md, p, s->sig + p->idx_bytes, s->root, q);
    }
    if (rc) {
        x_free_state(s);
        return rc;
    }
    *state = s;
    return DSIG_OK;
}

/* Stream the payload into H_msg (the bare hash). */
static int x_update(void *state, const uint8_t *data, size_t len)
{
    struct xmss_state *s = state;
    if (len && EVP_DigestUpdate(s->md, data, len) != 1)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "XMSS H_msg");
    return DSIG_OK;
}

/* Finish H_msg and add the layer-0 WOTS+ signature. */
static int x_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct xmss_state *s = state;
    if (cap < s->sig_len)
        return dsig_fail(DSIG_E_BUFFER, "XMSS signature needs %zu bytes, buffer has %zu (the index "
                                        "is spent)", s->sig_len, cap);
    uint8_t dg[XMSS_NMAX];
    int rc = hmsg_final(s->md, s->p, dg);
    if (rc)
        return rc;
    dsig_xmss_sign_finish(&s->hc, dg, s->sig);
    memcpy(sig, s->sig, s->sig_len);
    *sig_len = s->sig_len;
    return DSIG_OK;
}

/* Verification: the index and r come from the signature; M streams into H_msg. */
static int x_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                         const uint8_t *sig, size_t sig_len,
                         const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    (void)alg;
    *state = NULL;
    const struct xmss_key *k = key->impl;
    if (!k)
        return dsig_fail(DSIG_E_KEY, "XMSS: empty key");
    const dsig_xmss_params *p = k->p;
    if (!sig || sig_len != p->sig_bytes)
        return dsig_fail(DSIG_E_VERIFY, "%s signature must be %zu bytes, got %zu", key->type->alg,
                         p->sig_bytes, sig_len);
    struct xmss_state *s = dsig_calloc(1, sizeof *s);
    if (!s)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    s->p = p;
    s->sig_len = sig_len;
    s->sig = dsig_malloc(sig_len);
    if (!s->sig) {
        x_free_state(s);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    memcpy(s->sig, sig, sig_len);
    dsig_xmss_hash_init(&s->hc, p, k->pk + 4 + p->n, NULL);
    memcpy(s->root, k->pk + 4, p->n);
    int rc = hmsg_start(&s->md, p, s->sig + p->idx_bytes, s->root, dsig_xmss_sig_index(p, s->sig));
    if (rc) {
        x_free_state(s);
        return rc;
    }
    *state = s;
    return DSIG_OK;
}

/* @spec RFC 8391 §4.1.10 XMSS_verify / §4.2.5 XMSSMT_verify. */
static int x_verify_final(void *state)
{
    struct xmss_state *s = state;
    uint8_t dg[XMSS_NMAX];
    int rc = hmsg_final(s->md, s->p, dg);
    if (rc)
        return rc;
    if (dsig_xmss_verify_digest(&s->hc, s->root, dg, s->sig) != 0)
        return dsig_fail(DSIG_E_VERIFY, "XMSS signature does not verify (index %llu)",
                         (unsigned long long)dsig_xmss_sig_index(s->p, s->sig));
    return DSIG_OK;
}

static const struct dsig_alg_ops x_ops = {
    .sign_init = x_sign_init,
    .sign_update = x_update,
    .sign_final = x_sign_final,
    .verify_init = x_verify_init,
    .verify_update = x_update,
    .verify_final = x_verify_final,
    .free_state = x_free_state,
};

/* Largest signatures: XMSS-SHA2_20_512 / XMSSMT-*_60/12_512 (RFC 8391 §4.1.8, §4.2.4). */
#define SIG_MAX_XMSS (4 + 64 + (131 + 20) * 64)
#define SIG_MAX_XMSSMT (8 + 64 + (12 * 131 + 60) * 64)

static const dsig_alg a_xmss = {
    .name = "XMSS", .family = "XMSS",
    .description = "XMSS (RFC 8391, SP 800-208; stateful: state file) — parameter set by the public "
                   "key's OID; default " XMSS_DEFAULT,
    .keytype = &dsig_keytype_xmss, .baseline = "SHA-256", .security_bits = 256,
    .flags = DSIG_ALG_STATEFUL | DSIG_ALG_PQ | DSIG_ALG_ONE_PASS, .sig_max = SIG_MAX_XMSS,
    .ops = &x_ops,
};

static const dsig_alg a_xmssmt = {
    .name = "XMSSMT", .family = "XMSS",
    .description = "XMSS^MT (RFC 8391, SP 800-208; stateful: state file) — parameter set by the "
                   "public key's OID; default " XMSSMT_DEFAULT,
    .keytype = &dsig_keytype_xmssmt, .baseline = "SHA-256", .security_bits = 256,
    .flags = DSIG_ALG_STATEFUL | DSIG_ALG_PQ | DSIG_ALG_ONE_PASS, .sig_max = SIG_MAX_XMSSMT,
    .ops = &x_ops,
};

const dsig_alg *const dsig_xmss_algs[] = {&a_xmss, &a_xmssmt, NULL};

/* ---- raw helpers (tests, benchmarks) -------------------------------------------------------- */

/* Sign msg at index q from the seeds (a traversal built at q; the liboqs/ACVP known answers). */
int dsig_xmss_sign_raw(const dsig_xmss_params *p, const uint8_t *sk_seed, const uint8_t *sk_prf,
                       const uint8_t *pub_seed, const uint8_t *root, uint64_t q, const uint8_t *msg,
                       size_t len, uint8_t *sig)
{
    dsig_xmss_hash hc;
    dsig_xmss_trav *t = NULL;
    EVP_MD_CTX *md = NULL;
    uint8_t dg[XMSS_NMAX];
    dsig_xmss_hash_init(&hc, p, pub_seed, sk_seed);
    int rc = dsig_xmss_trav_new(&hc, q, NULL, 0, &t);
    if (rc == DSIG_OK)
        rc = dsig_xmss_sign_prepare(&hc, t, sk_prf, q, sig);
    if (rc == DSIG_OK)
        rc = hmsg_start(&md, p, sig + p->idx_bytes, root, q);
    if (rc == DSIG_OK && len && EVP_DigestUpdate(md, msg, len) != 1)
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "XMSS H_msg");
    if (rc == DSIG_OK)
        rc = hmsg_final(md, p, dg);
    if (rc == DSIG_OK)
        dsig_xmss_sign_finish(&hc, dg, sig);
    EVP_MD_CTX_free(md);
    dsig_xmss_trav_free(t);
    dsig_xmss_hash_wipe(&hc);
    return rc;
}

/* Verify with an RFC 8391 public key (OID ‖ root ‖ SEED): DSIG_OK or DSIG_E_VERIFY. */
int dsig_xmss_verify_raw(const dsig_xmss_params *p, const uint8_t *pk, const uint8_t *msg, size_t len,
                         const uint8_t *sig, size_t sig_len)
{
    if (sig_len != p->sig_bytes)
        return dsig_fail(DSIG_E_VERIFY, "XMSS signature length %zu, expected %zu", sig_len, p->sig_bytes);
    dsig_xmss_hash hc;
    EVP_MD_CTX *md = NULL;
    uint8_t dg[XMSS_NMAX];
    dsig_xmss_hash_init(&hc, p, pk + 4 + p->n, NULL);
    int rc = hmsg_start(&md, p, sig + p->idx_bytes, pk + 4, dsig_xmss_sig_index(p, sig));
    if (rc == DSIG_OK && len && EVP_DigestUpdate(md, msg, len) != 1)
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "XMSS H_msg");
    if (rc == DSIG_OK)
        rc = hmsg_final(md, p, dg);
    if (rc == DSIG_OK && dsig_xmss_verify_digest(&hc, pk + 4, dg, sig) != 0)
        rc = dsig_fail(DSIG_E_VERIFY, "XMSS signature does not verify");
    EVP_MD_CTX_free(md);
    return rc;
}

/* H_msg of an in-memory message (tests). */
int dsig_xmss_hmsg(const dsig_xmss_params *p, const uint8_t *r, const uint8_t *root, uint64_t idx,
                   const uint8_t *msg, size_t len, uint8_t *out)
{
    EVP_MD_CTX *md = NULL;
    int rc = hmsg_start(&md, p, r, root, idx);
    if (rc == DSIG_OK && len && EVP_DigestUpdate(md, msg, len) != 1)
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "XMSS H_msg");
    if (rc == DSIG_OK)
        rc = hmsg_final(md, p, out);
    EVP_MD_CTX_free(md);
    return rc;
}
