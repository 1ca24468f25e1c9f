/*
 * ML-DSA (FIPS 204) as registry algorithms "ML-DSA-44", "ML-DSA-65", "ML-DSA-87": the AKP key types
 * (RFC 9964 JWK: "pub" = pk, "priv" = the 32-byte seed ξ), the streaming external interface
 * (Algorithms 2/3 and, with a pre-hash, 4/5) on top of the byte-level functions of mldsa.h, and the
 * public external-μ entry points of include/dsig/mldsa.h.
 *
 * Streaming: μ = H(tr ‖ M', 64) with M' = 0x00 ‖ |ctx| ‖ ctx ‖ M is absorbed incrementally, so the
 * payload is read once with constant memory and the signature is exactly FIPS 204's ML-DSA.Sign. With
 * a pre-hash the message streams through PH instead and M' = 0x01 ‖ |ctx| ‖ ctx ‖ OID(PH) ‖ PH(M).
 *
 * Hashing: H (μ) and the SHAKE128/SHAKE256 pre-hashes run on the project's sponge (src/hash/keccak.h:
 * no EVP call per chunk, and its unrolled 64-bit permutation absorbs bulk input faster than OpenSSL
 * 3.0's, see `dsig bench keccak`); only the SHA-2/SHA-3 pre-hashes go through OpenSSL EVP.
 */
#include <stdio.h>
#include <string.h>

#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"
#include "dsig/mldsa.h"
#include "hash/keccak.h"
#include "pq/akp.h"
#include "pq/mldsa/mldsa.h"
#include "pq/mldsa/mldsa_key.h"
#include "pq/mldsa/prehash.h"

/* Largest encodings (ML-DSA-87, FIPS 204 Table 2). */
#define MLDSA_PK_MAX 2592
#define MLDSA_SK_MAX 4896
#define MLDSA_SIG_MAX 4627

/* Key impl: what a key may hold. A JWK or generated private key has all four; a public key only pk
 * and tr; a test key from an expanded sk has sk and tr (and pk if given) but no seed. */
struct mldsa_key {
    const dsig_mldsa_params *p;
    int has_seed, has_sk, has_pk;
    int test_rnd_set;                     /* dsig_mldsa_key_set_test_rnd (tests only) */
    uint8_t xi[DSIG_MLDSA_SEEDBYTES];     /* ξ, the JWK "priv" (secret) */
    uint8_t tr[DSIG_MLDSA_TRBYTES];       /* H(pk, 64) */
    uint8_t pk[MLDSA_PK_MAX];
    uint8_t sk[MLDSA_SK_MAX];             /* expanded secret key (secret) */
    uint8_t test_rnd[DSIG_MLDSA_RNDBYTES];
};

/* Streaming state of either direction (one struct, wiped whole by mldsa_free_state). The sponge and
 * the EVP pointer come first: the per-chunk update touches nothing else. */
struct mldsa_state {
    dsig_keccak kc;                       /* SHAKE256 over tr ‖ M' (pure, and μ of HashML-DSA at
                                             final), or the SHAKE128/SHAKE256 PH over M */
    EVP_MD_CTX *md;                       /* SHA-2/SHA-3 PH over M; NULL: M goes into kc */
    const dsig_mldsa_params *p;
    const dsig_mldsa_prehash *ph;         /* NULL: pure ML-DSA */
    int deterministic;                    /* sign: rnd = 0^32 */
    int test_rnd_set;
    size_t ctx_len;
    size_t sig_len;                       /* verify */
    uint8_t ctx[DSIG_SIGN_CONTEXT_MAX];   /* kept for M' of HashML-DSA, built at final */
    uint8_t tr[DSIG_MLDSA_TRBYTES];
    uint8_t test_rnd[DSIG_MLDSA_RNDBYTES];
    uint8_t key[MLDSA_SK_MAX];            /* sign: copy of sk (secret); verify: copy of pk */
    uint8_t sig[MLDSA_SIG_MAX];           /* verify: the signature */
};

/* ---- descriptors ---------------------------------------------------------------------------- */

DSIG_AKP_DECLARE_HOOKS;

/* One AKP key type per parameter set (src/pq/akp.h): the JWK "alg" selects it (RFC 9964 §5). */
static const struct dsig_keytype dsig_keytype_mldsa44 = DSIG_AKP_KEYTYPE("ML-DSA-44");
static const struct dsig_keytype dsig_keytype_mldsa65 = DSIG_AKP_KEYTYPE("ML-DSA-65");
static const struct dsig_keytype dsig_keytype_mldsa87 = DSIG_AKP_KEYTYPE("ML-DSA-87");

static const struct dsig_alg_ops mldsa_ops;
static const struct dsig_alg_prehashed mldsa_prehashed;

/* The registry descriptor of a set (sizes: FIPS 204 Table 2; security: the NIST category's
 * classical strength). */
#define MLDSA_ALG(set, category, kt, sec, sig_bytes, prm)                                            \
    {                                                                                                \
        .name = set, .family = "ML-DSA",                                                             \
        .description = set " (FIPS 204, category " category "); hedged by default, one-pass "         \
                           "streaming of mu; context, deterministic and HashML-DSA options",         \
        .keytype = &kt, .baseline = "SHAKE256", .security_bits = sec,                                \
        .flags = DSIG_ALG_PQ | DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED | DSIG_ALG_OPTIONS,           \
        .sig_max = sig_bytes, .min_key_bits = 0, .default_key_bits = 0, .ops = &mldsa_ops,           \
        .params = &prm,                                                                              \
    }

static const dsig_alg alg44 = MLDSA_ALG("ML-DSA-44", "2", dsig_keytype_mldsa44, 128, 2420, dsig_mldsa44);
static const dsig_alg alg65 = MLDSA_ALG("ML-DSA-65", "3", dsig_keytype_mldsa65, 192, 3309, dsig_mldsa65);
static const dsig_alg alg87 = MLDSA_ALG("ML-DSA-87", "5", dsig_keytype_mldsa87, 256, 4627, dsig_mldsa87);
const dsig_alg *const dsig_mldsa_algs[] = {&alg44, &alg65, &alg87, NULL};

/* The algorithm whose key type is `t` (each set has its own), or NULL. */
static const dsig_alg *alg_of_type(const struct dsig_keytype *t)
{
    return dsig_akp_find_alg(dsig_mldsa_algs, t);
}

/* Parameters of an ML-DSA key type; NULL (error recorded) for any other key type. */
static const dsig_mldsa_params *params_of(const struct dsig_keytype *t)
{
    const dsig_alg *a = dsig_akp_alg_of(dsig_mldsa_algs, t, "an ML-DSA key");
    return a ? a->params : NULL;
}

/* ---- key material --------------------------------------------------------------------------- */

/* Wipe and free an impl. */
static void free_impl(struct mldsa_key *k)
{
    if (k)
        dsig_xfree(k, sizeof *k);
}

/* Install a finished impl in key (replacing any previous one). */
static void install(struct dsig_key *key, struct mldsa_key *k)
{
    dsig_akp_install(key, k, k->has_sk);
}

/* @spec FIPS 204 Algorithm 6 ML-DSA.KeyGen_internal(ξ): a private key from its seed; when pk is
 * given (JWK "pub") it must equal the derived public key. */
static int set_from_seed(struct dsig_key *key, const dsig_mldsa_params *p, const uint8_t *xi,
                         const uint8_t *pk)
{
    struct mldsa_key *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    k->p = p;
    memcpy(k->xi, xi, DSIG_MLDSA_SEEDBYTES);
    int rc = dsig_mldsa_keygen_internal(p, k->pk, k->sk, k->xi);
    if (rc) {
        free_impl(k);
        return rc;
    }
    /* tr is bytes 64..127 of sk (FIPS 204 Algorithm 24): the same as H(pk, 64). */
    memcpy(k->tr, k->sk + 2 * DSIG_MLDSA_SEEDBYTES, DSIG_MLDSA_TRBYTES);
    k->has_seed = k->has_sk = k->has_pk = 1;
    /* pk is public: comparing it (even with early exit) leaks nothing about ξ. */
    if (pk && memcmp(pk, k->pk, p->pk_bytes) != 0) {
        free_impl(k);
        return dsig_fail(DSIG_E_KEY, "%s JWK: \"pub\" does not match the public key derived from "
                                     "\"priv\"", p->name);
    }
    install(key, k);
    return DSIG_OK;
}

/* A public-only key from pk (length already checked). */
static int set_public(struct dsig_key *key, const dsig_mldsa_params *p, const uint8_t *pk)
{
    struct mldsa_key *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    k->p = p;
    memcpy(k->pk, pk, p->pk_bytes);
    dsig_mldsa_tr(p, k->pk, k->tr);
    k->has_pk = 1;
    install(key, k);
    return DSIG_OK;
}

/* Key type hook: ξ from the RNG given (a seeded RNG makes keygen reproducible), then KeyGen. */
static int akp_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    const dsig_mldsa_params *p = params_of(key->type);
    if (!p)
        return DSIG_E_KEY_MISMATCH;
    int rc = dsig_akp_check_no_bits(p->name, bits);
    if (rc)
        return rc;
    uint8_t xi[DSIG_MLDSA_SEEDBYTES];
    rc = dsig_rng_bytes(rng, xi, sizeof xi);
    if (rc == DSIG_OK)
        rc = set_from_seed(key, p, xi, NULL);
    dsig_memzero(xi, sizeof xi);
    return rc;
}

/* Key type hook: "pub" (required, p->pk_bytes) and "priv" (optional, the 32-byte seed ξ). */
static int akp_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    const dsig_mldsa_params *p = params_of(key->type);
    if (!p)
        return DSIG_E_KEY_MISMATCH;
    int rc = dsig_akp_check_pub(m, n, p->name, p->pk_bytes);
    if (rc)
        return rc;
    if (dsig_akp_has_priv(m, n)) {
        if (m[1].len != DSIG_MLDSA_SEEDBYTES)
            return dsig_fail(DSIG_E_KEY, "%s JWK: member \"priv\" (the seed) must be %d bytes, got %zu",
                             p->name, DSIG_MLDSA_SEEDBYTES, m[1].len);
        return set_from_seed(key, p, m[1].data, m[0].data);
    }
    return set_public(key, p, m[0].data);
}

/* Key type hook: "pub", then "priv" (ξ) when asked. A key built from an expanded sk has no seed. */
static int akp_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                          size_t *n)
{
    const struct mldsa_key *k = key->impl;
    if (!k->has_pk)
        return dsig_fail(DSIG_E_KEY, "%s key has no public key to export", k->p->name);
    if (include_private && !k->has_seed)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s key has no seed: only keys holding their 32-byte seed "
                                            "can be exported (JWK \"priv\")", k->p->name);
    return dsig_akp_export(m, n, include_private, k->pk, k->p->pk_bytes, k->xi, sizeof k->xi);
}

/* Key type hook: a key holding only pk and tr. */
static int akp_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct mldsa_key *k = src->impl;
    if (!k->has_pk)
        return dsig_fail(DSIG_E_KEY, "%s key has no public key", k->p->name);
    return set_public(dst, k->p, k->pk);
}

/* Key type hook: wipe (ξ, sk) and free. */
static void akp_destroy(struct dsig_key *key)
{
    free_impl(key->impl);
    key->impl = NULL;
}

int dsig_mldsa_key_from_expanded(dsig_key **out, const dsig_alg *alg, const uint8_t *sk,
                                 size_t sk_len, const uint8_t *pk, size_t pk_len)
{
    if (!out || !alg || !sk)
        return dsig_fail(DSIG_E_ARG, "dsig_mldsa_key_from_expanded: NULL argument");
    *out = NULL;
    const dsig_mldsa_params *p = params_of(alg->keytype);
    if (!p)
        return DSIG_E_KEY_MISMATCH;
    if (sk_len != p->sk_bytes)
        return dsig_fail(DSIG_E_KEY, "%s: expanded secret key must be %zu bytes, got %zu", p->name,
                         p->sk_bytes, sk_len);
    if (pk && pk_len != p->pk_bytes)
        return dsig_fail(DSIG_E_KEY, "%s: public key must be %zu bytes, got %zu", p->name, p->pk_bytes,
                         pk_len);
    if (pk) { /* the pair must belong together: sk = ρ ‖ K ‖ tr ‖ ..., pk = ρ ‖ t1, tr = H(pk) */
        uint8_t tr[DSIG_MLDSA_TRBYTES];
        dsig_mldsa_tr(p, pk, tr);
        if (memcmp(sk, pk, DSIG_MLDSA_SEEDBYTES) != 0 ||
            memcmp(sk + 2 * DSIG_MLDSA_SEEDBYTES, tr, sizeof tr) != 0)
            return dsig_fail(DSIG_E_KEY, "%s: the public key does not belong to the expanded secret key "
                                         "(rho or tr differ)", p->name);
    }
    struct dsig_key *key = dsig_key_new(alg->keytype);
    struct mldsa_key *k = key ? dsig_calloc(1, sizeof *k) : NULL;
    if (!k) {
        dsig_key_free(key);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    k->p = p;
    memcpy(k->sk, sk, sk_len);
    memcpy(k->tr, sk + 2 * DSIG_MLDSA_SEEDBYTES, DSIG_MLDSA_TRBYTES);
    k->has_sk = 1;
    if (pk) {
        memcpy(k->pk, pk, pk_len);
        k->has_pk = 1;
    }
    install(key, k);
    key->alg = alg;
    *out = key;
    return DSIG_OK;
}

int dsig_mldsa_key_set_test_rnd(dsig_key *key, const uint8_t *rnd)
{
    if (!key || !params_of(key->type))
        return dsig_fail(DSIG_E_ARG, "dsig_mldsa_key_set_test_rnd: not an ML-DSA key");
    struct mldsa_key *k = key->impl;
    if (!k)
        return dsig_fail(DSIG_E_ARG, "dsig_mldsa_key_set_test_rnd: empty key");
    k->test_rnd_set = rnd != NULL;
    if (rnd)
        memcpy(k->test_rnd, rnd, sizeof k->test_rnd);
    else
        dsig_memzero(k->test_rnd, sizeof k->test_rnd);
    return DSIG_OK;
}

/* ---- streaming ------------------------------------------------------------------------------ */

/* Ops hook: wipe and free a state of either direction. */
static void mldsa_free_state(void *state)
{
    struct mldsa_state *st = state;
    if (!st)
        return;
    EVP_MD_CTX_free(st->md);
    dsig_xfree(st, sizeof *st);
}

/* A failure of the SHA-2/SHA-3 pre-hash inside OpenSSL (the only hashing that can fail). */
static int hash_fail(const struct mldsa_state *st, const char *what)
{
    char subject[96];
    snprintf(subject, sizeof subject, "%s: %s %s", st->p->name, st->ph ? st->ph->name : "hash", what);
    return dsig_fail_openssl(DSIG_E_CRYPTO, subject);
}

/* Start SHAKE256 over tr ‖ domain ‖ |ctx| ‖ ctx: the M' prefix of FIPS 204 Algorithm 2 line 10
 * (domain 0) or Algorithm 4 line 23 (domain 1), behind the tr of Algorithm 7 line 6. */
static void start_mu(struct mldsa_state *st, uint8_t domain)
{
    uint8_t hdr[2] = {domain, (uint8_t)st->ctx_len};
    dsig_shake256_init(&st->kc);
    dsig_keccak_absorb(&st->kc, st->tr, sizeof st->tr);
    dsig_keccak_absorb(&st->kc, hdr, sizeof hdr);
    dsig_keccak_absorb(&st->kc, st->ctx, st->ctx_len);
}

/* Allocate a state for key and options (context length already checked by the caller or core):
 * pure → SHAKE256 primed with tr ‖ 0 ‖ |ctx| ‖ ctx; pre-hash → PH, the M' prefix waits for final. */
static int new_state(struct mldsa_state **out, const dsig_alg *alg, const struct mldsa_key *k,
                     const dsig_sign_opts *opts)
{
    const dsig_mldsa_params *p = alg->params;
    const dsig_mldsa_prehash *ph = NULL;
    *out = NULL;
    if (opts && opts->prehash && !(ph = dsig_mldsa_prehash_find(opts->prehash)))
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s: unknown pre-hash function \"%.64s\" (HashML-DSA "
                                             "takes %s)", p->name, opts->prehash,
                         dsig_mldsa_prehash_names());
    size_t ctx_len = opts ? opts->context_len : 0;
    if (ctx_len > DSIG_SIGN_CONTEXT_MAX)
        return dsig_fail(DSIG_E_ARG, "%s: context of %zu bytes exceeds %d (FIPS 204 §5.2)", p->name,
                         ctx_len, DSIG_SIGN_CONTEXT_MAX);
    if (ctx_len && !opts->context)
        return dsig_fail(DSIG_E_ARG, "%s: context_len is %zu but context is NULL", p->name, ctx_len);
    const int evp_ph = ph && !ph->xof_rate; /* SHA-2/SHA-3 pre-hash: the only EVP user */
    if (evp_ph && !dsig_mldsa_prehash_md(ph))
        return dsig_fail(DSIG_E_CRYPTO, "%s: pre-hash %s is not available from OpenSSL", p->name,
                         ph->name);
    struct mldsa_state *st = dsig_calloc(1, sizeof *st);
    if (st && evp_ph && !(st->md = EVP_MD_CTX_new())) {
        dsig_xfree(st, sizeof *st);
        st = NULL;
    }
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    st->p = p;
    st->ph = ph;
    st->deterministic = opts && opts->deterministic;
    st->ctx_len = ctx_len;
    if (ctx_len)
        memcpy(st->ctx, opts->context, ctx_len);
    memcpy(st->tr, k->tr, sizeof st->tr);
    if (!ph) {
        start_mu(st, 0);
    } else if (ph->xof_rate) {
        dsig_keccak_init(&st->kc, ph->xof_rate);
    } else if (!EVP_DigestInit_ex(st->md, dsig_mldsa_prehash_md(ph), NULL)) {
        int rc = hash_fail(st, "init");
        mldsa_free_state(st);
        return rc;
    }
    *out = st;
    return DSIG_OK;
}

/* Absorb a chunk (the hot path): a bare sponge absorb, or EVP_DigestUpdate for a SHA-2/SHA-3 PH. The
 * branch depends only on the options, never on data. */
static int mldsa_update(void *state, const uint8_t *data, size_t len)
{
    struct mldsa_state *st = state;
    if (!st->md) {
        dsig_keccak_absorb(&st->kc, data, len);
        return DSIG_OK;
    }
    if (!EVP_DigestUpdate(st->md, data, len))
        return hash_fail(st, "update");
    return DSIG_OK;
}

/* @spec FIPS 204 Algorithm 4 line 23: start μ over tr ‖ M' = 1 ‖ |ctx| ‖ ctx ‖ OID ‖ PH(M) (the PH
 * sponge, if any, is done: kc is re-initialised). */
static void absorb_prehashed(struct mldsa_state *st, const uint8_t *phm)
{
    uint8_t oid[DSIG_MLDSA_PH_OID_BYTES];
    dsig_mldsa_prehash_oid(st->ph, oid);
    start_mu(st, 1);
    dsig_keccak_absorb(&st->kc, oid, sizeof oid);
    dsig_keccak_absorb(&st->kc, phm, st->ph->out_len);
}

/* @spec FIPS 204 Algorithm 7 line 6 (μ = H(tr ‖ M', 64)); with a pre-hash first Algorithm 4 lines
 * 10-22 (PH(M)) and line 23 (M' = 1 ‖ |ctx| ‖ ctx ‖ OID ‖ PH(M)). */
static int squeeze_mu(struct mldsa_state *st, uint8_t mu[DSIG_MLDSA_MUBYTES])
{
    if (st->ph) {
        uint8_t phm[DSIG_MLDSA_PH_MAX];
        if (st->md) {
            if (!EVP_DigestFinal_ex(st->md, phm, NULL))
                return hash_fail(st, "final");
        } else {
            dsig_shake_finalize(&st->kc);
            dsig_keccak_squeeze(&st->kc, phm, st->ph->out_len);
        }
        absorb_prehashed(st, phm);
    }
    dsig_shake_finalize(&st->kc);
    dsig_keccak_squeeze(&st->kc, mu, DSIG_MLDSA_MUBYTES);
    return DSIG_OK;
}

/* @spec FIPS 204 Algorithm 2 ML-DSA.Sign lines 1-4 and 10 (pure) / Algorithm 4 (HashML-DSA), with
 * the caller's context and the deterministic variant (§3.4: rnd = 0^32); opts NULL: pure, hedged,
 * empty context. A private key, then the state with a copy of sk. */
static int mldsa_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                           const dsig_sign_opts *opts)
{
    const struct mldsa_key *k = key->impl;
    if (!k || !k->has_sk)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s signing needs a private key", alg->name);
    struct mldsa_state *st;
    int rc = new_state(&st, alg, k, opts);
    if (rc)
        return rc;
    memcpy(st->key, k->sk, st->p->sk_bytes);
    st->test_rnd_set = k->test_rnd_set;
    memcpy(st->test_rnd, k->test_rnd, sizeof st->test_rnd);
    *state = st;
    return DSIG_OK;
}

/* rnd for one signature: 0^32 (deterministic), the test override, or 32 OS-random bytes. */
static int draw_rnd(const struct mldsa_state *st, uint8_t rnd[DSIG_MLDSA_RNDBYTES])
{
    if (st->deterministic) {
        memset(rnd, 0, DSIG_MLDSA_RNDBYTES);
        return DSIG_OK;
    }
    if (st->test_rnd_set) {
        memcpy(rnd, st->test_rnd, DSIG_MLDSA_RNDBYTES);
        return DSIG_OK;
    }
    return dsig_random_bytes(rnd, DSIG_MLDSA_RNDBYTES);
}

/* @spec FIPS 204 Algorithm 7 ML-DSA.Sign_internal: μ from the stream, then the signer on μ. */
static int mldsa_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct mldsa_state *st = state;
    if (cap < st->p->sig_bytes)
        return dsig_fail(DSIG_E_BUFFER, "%s signature needs %zu bytes, buffer has %zu", st->p->name,
                         st->p->sig_bytes, cap);
    uint8_t mu[DSIG_MLDSA_MUBYTES], rnd[DSIG_MLDSA_RNDBYTES];
    int rc = squeeze_mu(st, mu);
    if (rc == DSIG_OK)
        rc = draw_rnd(st, rnd);
    if (rc == DSIG_OK)
        rc = dsig_mldsa_sign_mu(st->p, sig, st->key, mu, rnd);
    if (rc == DSIG_OK)
        *sig_len = st->p->sig_bytes;
    dsig_memzero(rnd, sizeof rnd);
    dsig_memzero(st->key, sizeof st->key);
    return rc;
}

/* @spec FIPS 204 Algorithm 3 ML-DSA.Verify lines 1-5 (pure) / Algorithm 5 (HashML-DSA) with the
 * caller's context (opts NULL: pure, empty context). Length, public key, then the state with copies
 * of pk and the signature. */
static int mldsa_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                             const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts)
{
    const dsig_mldsa_params *p = alg->params;
    const struct mldsa_key *k = key->impl;
    int rc = dsig_akp_check_sig_len(p->name, p->sig_bytes, sig_len);
    if (rc)
        return rc;
    if (!k || !k->has_pk)
        return dsig_fail(DSIG_E_KEY, "%s verification needs the public key", alg->name);
    struct mldsa_state *st;
    if ((rc = new_state(&st, alg, k, opts)))
        return rc;
    memcpy(st->key, k->pk, p->pk_bytes);
    memcpy(st->sig, sig, sig_len);
    st->sig_len = sig_len;
    *state = st;
    return DSIG_OK;
}

/* @spec FIPS 204 Algorithm 8 ML-DSA.Verify_internal with μ from the stream. */
static int mldsa_verify_final(void *state)
{
    struct mldsa_state *st = state;
    uint8_t mu[DSIG_MLDSA_MUBYTES];
    int rc = squeeze_mu(st, mu);
    if (rc == DSIG_OK)
        rc = dsig_mldsa_verify_mu(st->p, st->key, mu, st->sig, st->sig_len);
    return rc;
}

static const struct dsig_alg_ops mldsa_ops = {
    .sign_init = mldsa_sign_init,
    .sign_update = mldsa_update,
    .sign_final = mldsa_sign_final,
    .verify_init = mldsa_verify_init,
    .verify_update = mldsa_update,
    .verify_final = mldsa_verify_final,
    .free_state = mldsa_free_state,
    .prehashed = &mldsa_prehashed,
};

/* ---- digests computed elsewhere (dsig/prehashed.h) -------------------------------------------- */

#define EXTERNAL_MU "ExternalMu"

static const char *mldsa_digest_hashes(const dsig_alg *alg)
{
    (void)alg;
    return EXTERNAL_MU ", SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, SHA-512/256, SHA3-224, SHA3-256, "
                       "SHA3-384, SHA3-512, SHAKE128, SHAKE256";
}

/* μ of the signature: the caller's own (ExternalMu), or that of HashML-DSA with PH(M) = digest (empty
 * context). DSIG_E_FORMAT when the digest is not of the hash's length. */
static int prehashed_mu(const dsig_alg *alg, const struct mldsa_key *k, const char *hash, const uint8_t *digest,
                        size_t len, uint8_t mu[DSIG_MLDSA_MUBYTES])
{
    if (strcmp(hash, EXTERNAL_MU) == 0) {
        if (len != DSIG_MLDSA_MUBYTES)
            return dsig_fail(DSIG_E_FORMAT, "%s: an external mu is %d bytes, got %zu", alg->name,
                             DSIG_MLDSA_MUBYTES, len);
        memcpy(mu, digest, DSIG_MLDSA_MUBYTES);
        return DSIG_OK;
    }
    const dsig_sign_opts o = {.prehash = hash};
    struct mldsa_state *st;
    int rc = new_state(&st, alg, k, &o);
    if (rc)
        return rc;
    if (len != st->ph->out_len) {
        rc = dsig_fail(DSIG_E_FORMAT, "%s: a %s digest for HashML-DSA is %zu bytes, got %zu", alg->name, hash,
                       st->ph->out_len, len);
    } else {
        absorb_prehashed(st, digest);
        dsig_shake_finalize(&st->kc);
        dsig_keccak_squeeze(&st->kc, mu, DSIG_MLDSA_MUBYTES);
    }
    mldsa_free_state(st);
    return rc;
}

/* @spec FIPS 204 Algorithm 7 from line 7 on μ (ExternalMu), or Algorithm 4 (HashML-DSA). */
static int mldsa_sign_prehashed(const dsig_alg *alg, const struct dsig_key *key, const char *hash,
                                const uint8_t *digest, size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    const struct mldsa_key *k = key->impl;
    const dsig_mldsa_params *p = alg->params;
    if (!k || !k->has_sk)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s signing needs a private key", alg->name);
    if (cap < p->sig_bytes)
        return dsig_fail(DSIG_E_BUFFER, "%s signature needs %zu bytes, buffer has %zu", p->name, p->sig_bytes,
                         cap);
    uint8_t mu[DSIG_MLDSA_MUBYTES], rnd[DSIG_MLDSA_RNDBYTES];
    int rc = prehashed_mu(alg, k, hash, digest, len, mu);
    if (rc == DSIG_OK)
        rc = k->test_rnd_set ? (memcpy(rnd, k->test_rnd, sizeof rnd), DSIG_OK) : dsig_random_bytes(rnd, sizeof rnd);
    if (rc == DSIG_OK)
        rc = dsig_mldsa_sign_mu(p, sig, k->sk, mu, rnd);
    if (rc == DSIG_OK)
        *sig_len = p->sig_bytes;
    dsig_memzero(rnd, sizeof rnd);
    return rc;
}

/* @spec FIPS 204 Algorithm 8 from line 7 on μ (ExternalMu), or Algorithm 5 (HashML-DSA). */
static int mldsa_verify_prehashed(const dsig_alg *alg, const struct dsig_key *key, const char *hash,
                                  const uint8_t *digest, size_t len, const uint8_t *sig, size_t sig_len)
{
    const struct mldsa_key *k = key->impl;
    const dsig_mldsa_params *p = alg->params;
    if (!k || !k->has_pk)
        return dsig_fail(DSIG_E_KEY, "%s verification needs the public key", alg->name);
    uint8_t mu[DSIG_MLDSA_MUBYTES];
    int rc = prehashed_mu(alg, k, hash, digest, len, mu);
    if (rc == DSIG_OK)
        rc = dsig_akp_check_sig_len(p->name, p->sig_bytes, sig_len);
    return rc ? rc : dsig_mldsa_verify_mu(p, k->pk, mu, sig, sig_len);
}

static const struct dsig_alg_prehashed mldsa_prehashed = {
    .hashes = mldsa_digest_hashes,
    .sign = mldsa_sign_prehashed,
    .verify = mldsa_verify_prehashed,
};

/* ---- external μ (include/dsig/mldsa.h) ------------------------------------------------------ */

/* *out = the impl of an ML-DSA key; DSIG_E_ARG / DSIG_E_KEY_MISMATCH (recorded) otherwise. */
static int mldsa_key_of(const dsig_key *key, const char *fn, const struct mldsa_key **out)
{
    if (!key)
        return dsig_fail(DSIG_E_ARG, "%s: NULL key", fn);
    if (!alg_of_type(key->type) || !key->impl)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "%s needs an ML-DSA key, got one of type %s", fn,
                         key->type->kty);
    *out = key->impl;
    return DSIG_OK;
}

int dsig_mldsa_mu(const dsig_key *key, const uint8_t *context, size_t context_len, const void *msg,
                  size_t msg_len, uint8_t mu[DSIG_MLDSA_MU_LEN])
{
    const struct mldsa_key *k = NULL;
    int rc = mldsa_key_of(key, "dsig_mldsa_mu", &k);
    if (rc)
        return rc;
    if ((!msg && msg_len) || !mu)
        return dsig_fail(DSIG_E_ARG, "dsig_mldsa_mu: NULL argument");
    /* The same state code as streaming signing, so μ here is μ there. */
    dsig_sign_opts o = {.context = context, .context_len = context_len};
    struct mldsa_state *st;
    rc = new_state(&st, alg_of_type(key->type), k, &o);
    if (rc)
        return rc;
    if (msg_len)
        rc = mldsa_update(st, msg, msg_len);
    if (rc == DSIG_OK)
        rc = squeeze_mu(st, mu);
    mldsa_free_state(st);
    return rc;
}

int dsig_mldsa_sign_external_mu(const dsig_key *key, const uint8_t mu[DSIG_MLDSA_MU_LEN],
                                const uint8_t *rnd, uint8_t *sig, size_t cap, size_t *sig_len)
{
    const struct mldsa_key *k = NULL;
    int rc = mldsa_key_of(key, "dsig_mldsa_sign_external_mu", &k);
    if (rc)
        return rc;
    if (!mu || !sig || !sig_len)
        return dsig_fail(DSIG_E_ARG, "dsig_mldsa_sign_external_mu: NULL argument");
    if (!k->has_sk)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s signing needs a private key", k->p->name);
    if (cap < k->p->sig_bytes)
        return dsig_fail(DSIG_E_BUFFER, "%s signature needs %zu bytes, buffer has %zu", k->p->name,
                         k->p->sig_bytes, cap);
    uint8_t fresh[DSIG_MLDSA_RNDBYTES];
    rc = rnd ? DSIG_OK : dsig_random_bytes(fresh, sizeof fresh);
    if (rc == DSIG_OK)
        rc = dsig_mldsa_sign_mu(k->p, sig, k->sk, mu, rnd ? rnd : fresh);
    dsig_memzero(fresh, sizeof fresh);
    if (rc == DSIG_OK)
        *sig_len = k->p->sig_bytes;
    return rc;
}

int dsig_mldsa_verify_external_mu(const dsig_key *key, const uint8_t mu[DSIG_MLDSA_MU_LEN],
                                  const uint8_t *sig, size_t sig_len)
{
    const struct mldsa_key *k = NULL;
    int rc = mldsa_key_of(key, "dsig_mldsa_verify_external_mu", &k);
    if (rc)
        return rc;
    if (!mu || (!sig && sig_len))
        return dsig_fail(DSIG_E_ARG, "dsig_mldsa_verify_external_mu: NULL argument");
    if (!k->has_pk)
        return dsig_fail(DSIG_E_KEY, "%s verification needs the public key", k->p->name);
    if ((rc = dsig_akp_check_sig_len(k->p->name, k->p->sig_bytes, sig_len)))
        return rc;
    return dsig_mldsa_verify_mu(k->p, k->pk, mu, sig, sig_len);
}
