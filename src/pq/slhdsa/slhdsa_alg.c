/*
 * SLH-DSA (FIPS 205) as twelve registry algorithms "SLH-DSA-SHA2-128s" ... "SLH-DSA-SHAKE-256f": the
 * AKP key types (JWK "pub" = PK.seed ‖ PK.root, "priv" = the FIPS 205 secret key SK.seed ‖ SK.prf ‖
 * PK.seed ‖ PK.root, as in draft-ietf-cose-sphincs-plus), the external interface (Algorithms 22-25:
 * pure with a context, or HashSLH-DSA with a pre-hash) over the streaming message hashes of slhdsa.h.
 *
 * The message enters only through R = PRF_msg(SK.prf, opt_rand, M') and H_msg(R, PK.seed, PK.root,
 * M'). Hence three signers:
 *   - one-shot (dsig_sign / dsig_sign_ex, M in memory) and two-pass streaming (dsig_sign_init_two_pass,
 *     seekable input): PRF_msg over M', then H_msg over M' — exactly FIPS 205, hedged or deterministic;
 *   - one-pass streaming (dsig_sign_init, pipes): R = PRF_msg(SK.prf, fresh opt_rand, ε), then one H_msg
 *     pass. Every FIPS 205 verifier accepts it (verification never recomputes R); R just does not depend
 *     on M, so opt_rand must be fresh and the deterministic variant is refused in this mode.
 * With a pre-hash, M' = 1 ‖ |ctx| ‖ ctx ‖ OID ‖ PH(M) is complete once PH(M) is, so every mode signs
 * exactly (deterministic included) after reading M once. Verification always reads M once (R is the
 * signature's first n bytes).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/ct.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"
#include "dsig/mem.h"
#include "pq/akp.h"
#include "pq/slhdsa/slhdsa.h"
#include "pq/slhdsa/slhdsa_key.h"

#define N_MAX DSIG_SLHDSA_NMAX
#define PH_MAX 64 /* longest PH(M): SHA-512, SHA3-512, SHAKE256 */

/* Key impl. pk is always present; sk only for private keys. */
struct slh_key {
    const dsig_slhdsa_params *p;
    int has_sk;
    int test_rnd_set;                 /* dsig_slhdsa_key_set_test_rnd (tests only) */
    int test_iface;                   /* dsig_slhdsa_key_set_test_interface (tests only) */
    uint8_t sk[4 * N_MAX];            /* SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root (secret) */
    uint8_t pk[2 * N_MAX];            /* PK.seed ‖ PK.root */
    uint8_t test_rnd[N_MAX];
};

enum { MODE_VERIFY, MODE_ONE_PASS, MODE_TWO_PASS };

/* Streaming state of either direction (wiped whole by slh_free_state). The message hash and the PH
 * context come first: an update touches one of them only. */
struct slh_state {
    dsig_slhdsa_msg h;                /* PRF_msg or H_msg over M' (direct feeding) */
    EVP_MD_CTX *ph_ctx;               /* HashSLH-DSA: PH over M; NULL: M goes into h */
    const dsig_slhdsa_params *p;
    const dsig_slhdsa_prehash *ph;    /* pre-hash option (also set in the PREHASHED test mode) */
    int mode;                         /* MODE_* */
    int pass;                         /* two-pass: 1 or 2 */
    size_t prefix_len;
    size_t sig_len;                   /* verify */
    uint8_t *sig;                     /* verify: copy of the signature (dsig_malloc'd) */
    uint8_t prefix[DSIG_SLHDSA_PREFIX_MAX]; /* M' before M (or before PH(M)) */
    uint8_t opt_rand[N_MAX];          /* sign: PK.seed (deterministic) or fresh randomness */
    uint8_t r[N_MAX];                 /* sign: R, once known (H_msg runs with it) */
    uint8_t phm1[PH_MAX];             /* two-pass HashSLH-DSA: PH(M) of pass 1 */
    uint8_t sk[4 * N_MAX];            /* sign: copy of sk (secret) */
    uint8_t pk[2 * N_MAX];
};

/* ---- descriptors ---------------------------------------------------------------------------- */

DSIG_AKP_DECLARE_HOOKS;

/* One AKP key type per parameter set (src/pq/akp.h), selected by the JWK "alg". */
static const struct dsig_keytype dsig_keytype_slhdsa_sha2_128s = DSIG_AKP_KEYTYPE("SLH-DSA-SHA2-128s");
static const struct dsig_keytype dsig_keytype_slhdsa_sha2_128f = DSIG_AKP_KEYTYPE("SLH-DSA-SHA2-128f");
static const struct dsig_keytype dsig_keytype_slhdsa_sha2_192s = DSIG_AKP_KEYTYPE("SLH-DSA-SHA2-192s");
static const struct dsig_keytype dsig_keytype_slhdsa_sha2_192f = DSIG_AKP_KEYTYPE("SLH-DSA-SHA2-192f");
static const struct dsig_keytype dsig_keytype_slhdsa_sha2_256s = DSIG_AKP_KEYTYPE("SLH-DSA-SHA2-256s");
static const struct dsig_keytype dsig_keytype_slhdsa_sha2_256f = DSIG_AKP_KEYTYPE("SLH-DSA-SHA2-256f");
static const struct dsig_keytype dsig_keytype_slhdsa_shake_128s = DSIG_AKP_KEYTYPE("SLH-DSA-SHAKE-128s");
static const struct dsig_keytype dsig_keytype_slhdsa_shake_128f = DSIG_AKP_KEYTYPE("SLH-DSA-SHAKE-128f");
static const struct dsig_keytype dsig_keytype_slhdsa_shake_192s = DSIG_AKP_KEYTYPE("SLH-DSA-SHAKE-192s");
static const struct dsig_keytype dsig_keytype_slhdsa_shake_192f = DSIG_AKP_KEYTYPE("SLH-DSA-SHAKE-192f");
static const struct dsig_keytype dsig_keytype_slhdsa_shake_256s = DSIG_AKP_KEYTYPE("SLH-DSA-SHAKE-256s");
static const struct dsig_keytype dsig_keytype_slhdsa_shake_256f = DSIG_AKP_KEYTYPE("SLH-DSA-SHAKE-256f");

static const struct dsig_alg_ops slh_ops;

/* The registry descriptor of a set (sizes: FIPS 205 Table 2). baseline: the hash H_msg streams the
 * payload through (§11.1: SHAKE256; §11.2.1: SHA-256 for category 1; §11.2.2: SHA-512 for categories
 * 3 and 5); security: the NIST category's classical strength. */
#define SLH(set, cat, kt, base, sec, prm, sigb)                                                      \
    {                                                                                                \
        .name = set, .family = "SLH-DSA",                                                            \
        .description = set " (FIPS 205, category " cat "); hedged; exact two-pass for files, "       \
                           "one-pass streaming for pipes; context, deterministic, HashSLH-DSA",      \
        .keytype = &kt, .baseline = base, .security_bits = sec,                                      \
        .flags = DSIG_ALG_PQ | DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED | DSIG_ALG_OPTIONS |          \
                 DSIG_ALG_TWO_PASS,                                                                  \
        .sig_max = sigb, .min_key_bits = 0, .default_key_bits = 0, .ops = &slh_ops, .params = &prm,  \
    }

static const dsig_alg a_sha2_128s = SLH("SLH-DSA-SHA2-128s", "1", dsig_keytype_slhdsa_sha2_128s,
                                        "SHA-256", 128, dsig_slhdsa_sha2_128s, 7856);
static const dsig_alg a_sha2_128f = SLH("SLH-DSA-SHA2-128f", "1", dsig_keytype_slhdsa_sha2_128f,
                                        "SHA-256", 128, dsig_slhdsa_sha2_128f, 17088);
static const dsig_alg a_sha2_192s = SLH("SLH-DSA-SHA2-192s", "3", dsig_keytype_slhdsa_sha2_192s,
                                        "SHA-512", 192, dsig_slhdsa_sha2_192s, 16224);
static const dsig_alg a_sha2_192f = SLH("SLH-DSA-SHA2-192f", "3", dsig_keytype_slhdsa_sha2_192f,
                                        "SHA-512", 192, dsig_slhdsa_sha2_192f, 35664);
static const dsig_alg a_sha2_256s = SLH("SLH-DSA-SHA2-256s", "5", dsig_keytype_slhdsa_sha2_256s,
                                        "SHA-512", 256, dsig_slhdsa_sha2_256s, 29792);
static const dsig_alg a_sha2_256f = SLH("SLH-DSA-SHA2-256f", "5", dsig_keytype_slhdsa_sha2_256f,
                                        "SHA-512", 256, dsig_slhdsa_sha2_256f, 49856);
static const dsig_alg a_shake_128s = SLH("SLH-DSA-SHAKE-128s", "1", dsig_keytype_slhdsa_shake_128s,
                                         "SHAKE256", 128, dsig_slhdsa_shake_128s, 7856);
static const dsig_alg a_shake_128f = SLH("SLH-DSA-SHAKE-128f", "1", dsig_keytype_slhdsa_shake_128f,
                                         "SHAKE256", 128, dsig_slhdsa_shake_128f, 17088);
static const dsig_alg a_shake_192s = SLH("SLH-DSA-SHAKE-192s", "3", dsig_keytype_slhdsa_shake_192s,
                                         "SHAKE256", 192, dsig_slhdsa_shake_192s, 16224);
static const dsig_alg a_shake_192f = SLH("SLH-DSA-SHAKE-192f", "3", dsig_keytype_slhdsa_shake_192f,
                                         "SHAKE256", 192, dsig_slhdsa_shake_192f, 35664);
static const dsig_alg a_shake_256s = SLH("SLH-DSA-SHAKE-256s", "5", dsig_keytype_slhdsa_shake_256s,
                                         "SHAKE256", 256, dsig_slhdsa_shake_256s, 29792);
static const dsig_alg a_shake_256f = SLH("SLH-DSA-SHAKE-256f", "5", dsig_keytype_slhdsa_shake_256f,
                                         "SHAKE256", 256, dsig_slhdsa_shake_256f, 49856);

/* FIPS 205 Table 2 order: SHA2 then SHAKE, s before f. */
const dsig_alg *const dsig_slhdsa_algs[] = {
    &a_sha2_128s,  &a_sha2_128f,  &a_sha2_192s,  &a_sha2_192f,  &a_sha2_256s,  &a_sha2_256f,
    &a_shake_128s, &a_shake_128f, &a_shake_192s, &a_shake_192f, &a_shake_256s, &a_shake_256f, NULL,
};

/* The algorithm whose key type is `t` (each set has its own), or NULL. */
static const dsig_alg *alg_of_type(const struct dsig_keytype *t)
{
    return dsig_akp_find_alg(dsig_slhdsa_algs, t);
}

/* Parameters of an SLH-DSA key type; NULL (error recorded) for any other key type. */
static const dsig_slhdsa_params *params_of(const struct dsig_keytype *t)
{
    const dsig_alg *a = dsig_akp_alg_of(dsig_slhdsa_algs, t, "an SLH-DSA key");
    return a ? a->params : NULL;
}

/* ---- key material --------------------------------------------------------------------------- */

/* Key type hook: wipe (sk) and free. */
static void akp_destroy(struct dsig_key *key)
{
    if (key->impl)
        dsig_xfree(key->impl, sizeof(struct slh_key));
    key->impl = NULL;
}

/* A new zeroed impl for p; NULL (error recorded) on OOM. */
static struct slh_key *new_impl(const dsig_slhdsa_params *p)
{
    struct slh_key *k = dsig_calloc(1, sizeof *k);
    if (!k) {
        dsig_fail(DSIG_E_NOMEM, "out of memory");
        return NULL;
    }
    k->p = p;
    return k;
}

/* Install a finished impl in key (replacing any previous one). */
static void install(struct dsig_key *key, struct slh_key *k)
{
    dsig_akp_install(key, k, k->has_sk);
}

/* @spec FIPS 205 Algorithm 18 slh_keygen_internal from the three n-byte seeds (SK.seed, SK.prf,
 * PK.seed = seeds[0..3n)); when want_sk is given (a JWK "priv"), its PK.root must equal the one
 * recomputed here, and when want_pk is given (JWK "pub") it must equal the derived public key. */
static int set_from_seeds(struct dsig_key *key, const dsig_slhdsa_params *p, const uint8_t *seeds,
                          const uint8_t *want_sk, const uint8_t *want_pk)
{
    const size_t n = p->n;
    struct slh_key *k = new_impl(p);
    if (!k)
        return DSIG_E_NOMEM;
    int rc = dsig_slhdsa_keygen_internal(p, seeds, seeds + n, seeds + 2 * n, k->pk, k->sk);
    if (rc) {
        dsig_xfree(k, sizeof *k);
        return rc;
    }
    /* The public key is public (PK.root is derived from SK.seed, but published): early-exit
     * comparisons on it leak nothing secret. */
    DSIG_CT_DECLASSIFY(k->pk, 2 * n);
    if (want_sk && memcmp(want_sk + 3 * n, k->pk + n, n) != 0) {
        dsig_xfree(k, sizeof *k);
        return dsig_fail(DSIG_E_KEY, "%s JWK: \"priv\" is inconsistent: its PK.root does not match the "
                                     "root recomputed from SK.seed and PK.seed", p->name);
    }
    if (want_pk && memcmp(want_pk, k->pk, 2 * n) != 0) {
        dsig_xfree(k, sizeof *k);
        return dsig_fail(DSIG_E_KEY, "%s JWK: \"pub\" does not match the public key of \"priv\"",
                         p->name);
    }
    k->has_sk = 1;
    install(key, k);
    return DSIG_OK;
}

/* A public-only key from pk (length already checked). */
static int set_public(struct dsig_key *key, const dsig_slhdsa_params *p, const uint8_t *pk)
{
    struct slh_key *k = new_impl(p);
    if (!k)
        return DSIG_E_NOMEM;
    memcpy(k->pk, pk, 2 * p->n);
    install(key, k);
    return DSIG_OK;
}

/* Key type hook: SK.seed ‖ SK.prf ‖ PK.seed (3n bytes) from the RNG given (a seeded RNG makes keygen
 * reproducible), then Algorithm 18. */
static int akp_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    const dsig_slhdsa_params *p = params_of(key->type);
    if (!p)
        return DSIG_E_KEY_MISMATCH;
    int rc = dsig_akp_check_no_bits(p->name, bits);
    if (rc)
        return rc;
    uint8_t seeds[3 * N_MAX];
    rc = dsig_rng_bytes(rng, seeds, 3 * p->n);
    if (rc == DSIG_OK)
        rc = set_from_seeds(key, p, seeds, NULL, NULL);
    dsig_memzero(seeds, sizeof seeds);
    return rc;
}

/* Key type hook: "pub" (required, 2n bytes) and "priv" (optional, the 4n-byte FIPS 205 sk, whose
 * PK.seed ‖ PK.root must be "pub" and whose PK.root is recomputed). */
static int akp_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    const dsig_slhdsa_params *p = params_of(key->type);
    if (!p)
        return DSIG_E_KEY_MISMATCH;
    int rc = dsig_akp_check_pub(m, n, p->name, p->pk_bytes);
    if (rc)
        return rc;
    if (dsig_akp_has_priv(m, n)) {
        if (m[1].len != p->sk_bytes)
            return dsig_fail(DSIG_E_KEY, "%s JWK: member \"priv\" (SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root) "
                                         "must be %zu bytes, got %zu", p->name, p->sk_bytes, m[1].len);
        if (memcmp(m[1].data + 2 * p->n, m[0].data, 2 * p->n) != 0) /* public halves */
            return dsig_fail(DSIG_E_KEY, "%s JWK: \"pub\" does not match the PK.seed ‖ PK.root inside "
                                         "\"priv\"", p->name);
        return set_from_seeds(key, p, m[1].data, m[1].data, m[0].data);
    }
    return set_public(key, p, m[0].data);
}

/* Key type hook: "pub", then "priv" (the 4n-byte sk) when asked. */
static int akp_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                          size_t *n)
{
    const struct slh_key *k = key->impl;
    if (include_private && !k->has_sk)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s key has no private part to export", k->p->name);
    return dsig_akp_export(m, n, include_private, k->pk, k->p->pk_bytes, k->sk, k->p->sk_bytes);
}

/* Key type hook: a key holding only pk. */
static int akp_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct slh_key *k = src->impl;
    return set_public(dst, k->p, k->pk);
}

int dsig_slhdsa_key_from_sk(dsig_key **out, const dsig_alg *alg, const uint8_t *sk, size_t sk_len)
{
    if (!out || !alg || !sk)
        return dsig_fail(DSIG_E_ARG, "dsig_slhdsa_key_from_sk: NULL argument");
    *out = NULL;
    const dsig_slhdsa_params *p = params_of(alg->keytype);
    if (!p)
        return DSIG_E_KEY_MISMATCH;
    if (sk_len != p->sk_bytes)
        return dsig_fail(DSIG_E_KEY, "%s: secret key must be %zu bytes, got %zu", p->name, p->sk_bytes,
                         sk_len);
    struct dsig_key *key = dsig_key_new(alg->keytype);
    struct slh_key *k = key ? new_impl(p) : NULL;
    if (!k) {
        dsig_key_free(key);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    memcpy(k->sk, sk, sk_len);
    memcpy(k->pk, sk + 2 * p->n, 2 * p->n);
    k->has_sk = 1;
    install(key, k);
    key->alg = alg;
    *out = key;
    return DSIG_OK;
}

/* The impl of an SLH-DSA key for a test hook; NULL (error recorded) otherwise. */
static struct slh_key *test_impl(dsig_key *key, const char *fn)
{
    if (!key || !alg_of_type(key->type) || !key->impl) {
        dsig_fail(DSIG_E_ARG, "%s: not an SLH-DSA key", fn);
        return NULL;
    }
    return key->impl;
}

int dsig_slhdsa_key_set_test_rnd(dsig_key *key, const uint8_t *rnd)
{
    struct slh_key *k = test_impl(key, "dsig_slhdsa_key_set_test_rnd");
    if (!k)
        return DSIG_E_ARG;
    k->test_rnd_set = rnd != NULL;
    if (rnd)
        memcpy(k->test_rnd, rnd, k->p->n);
    else
        dsig_memzero(k->test_rnd, sizeof k->test_rnd);
    return DSIG_OK;
}

int dsig_slhdsa_key_set_test_interface(dsig_key *key, int iface)
{
    struct slh_key *k = test_impl(key, "dsig_slhdsa_key_set_test_interface");
    if (!k)
        return DSIG_E_ARG;
    if (iface < DSIG_SLHDSA_TEST_EXTERNAL || iface > DSIG_SLHDSA_TEST_PREHASHED)
        return dsig_fail(DSIG_E_ARG, "dsig_slhdsa_key_set_test_interface: unknown interface %d", iface);
    k->test_iface = iface;
    return DSIG_OK;
}

/* ---- streaming ------------------------------------------------------------------------------ */

/* Ops hook: wipe and free a state of either direction. */
static void slh_free_state(void *state)
{
    struct slh_state *st = state;
    if (!st)
        return;
    dsig_slhdsa_msg_abort(&st->h);
    EVP_MD_CTX_free(st->ph_ctx);
    if (st->sig)
        dsig_xfree(st->sig, st->sig_len);
    dsig_xfree(st, sizeof *st);
}

/* Allocate a state for key and options: the M' prefix (pure: 0 ‖ |ctx| ‖ ctx; HashSLH-DSA: 1 ‖ |ctx|
 * ‖ ctx ‖ OID; the INTERNAL test mode: none) and, for HashSLH-DSA, the PH context. */
static int new_state(struct slh_state **out, const dsig_alg *alg, const struct slh_key *k,
                     const dsig_sign_opts *opts, int mode)
{
    const dsig_slhdsa_params *p = alg->params;
    const dsig_slhdsa_prehash *ph = NULL;
    *out = NULL;
    if (k->test_iface == DSIG_SLHDSA_TEST_INTERNAL)
        opts = NULL;
    if (opts && opts->prehash && !(ph = dsig_slhdsa_prehash_find(opts->prehash)))
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s: unknown pre-hash function \"%.64s\" (HashSLH-DSA "
                                             "takes SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, "
                                             "SHA-512/256, SHA3-224, SHA3-256, SHA3-384, SHA3-512, "
                                             "SHAKE128, SHAKE256)", p->name, opts->prehash);
    size_t ctx_len = opts ? opts->context_len : 0;
    if (ctx_len > DSIG_SIGN_CONTEXT_MAX)
        return dsig_fail(DSIG_E_ARG, "%s: context of %zu bytes exceeds %d (FIPS 205 §10.2)", p->name,
                         ctx_len, DSIG_SIGN_CONTEXT_MAX);
    if (ctx_len && !opts->context)
        return dsig_fail(DSIG_E_ARG, "%s: context_len is %zu but context is NULL", p->name, ctx_len);
    const int stream_ph = ph && k->test_iface != DSIG_SLHDSA_TEST_PREHASHED;
    const EVP_MD *md = stream_ph ? dsig_slhdsa_prehash_md(ph) : NULL;
    if (stream_ph && !md)
        return dsig_fail(DSIG_E_CRYPTO, "%s: pre-hash %s is not available from OpenSSL", p->name,
                         ph->name);
    struct slh_state *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    st->p = p;
    st->ph = ph;
    st->mode = mode;
    st->pass = 1;
    int rc = DSIG_OK;
    if (k->test_iface == DSIG_SLHDSA_TEST_INTERNAL)
        st->prefix_len = 0;
    else if (ph)
        rc = dsig_slhdsa_prehash_prefix(ph, opts->context, ctx_len, st->prefix, &st->prefix_len);
    else
        rc = dsig_slhdsa_pure_prefix(opts ? opts->context : NULL, ctx_len, st->prefix, &st->prefix_len);
    if (rc == DSIG_OK && stream_ph) {
        if (!(st->ph_ctx = EVP_MD_CTX_new()))
            rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        else if (EVP_DigestInit_ex(st->ph_ctx, md, NULL) != 1)
            rc = dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA pre-hash init");
    }
    memcpy(st->pk, k->pk, p->pk_bytes);
    if (rc) {
        slh_free_state(st);
        return rc;
    }
    *out = st;
    return DSIG_OK;
}

/* Ops hook, the hot path: one EVP_DigestUpdate (SHA2 sets, or the PH) or one sponge absorb. The
 * branch depends only on the options, never on data. */
static int slh_update(void *state, const uint8_t *data, size_t len)
{
    struct slh_state *st = state;
    if (st->ph_ctx) {
        if (EVP_DigestUpdate(st->ph_ctx, data, len) != 1)
            return dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA pre-hash update");
        return DSIG_OK;
    }
    return dsig_slhdsa_msg_update(&st->h, data, len);
}

/* PH(M) from the PH context into out (ph->out_len bytes); re-initialises the context for another
 * pass. */
static int ph_finish(struct slh_state *st, uint8_t out[PH_MAX])
{
    const EVP_MD *md = EVP_MD_CTX_get0_md(st->ph_ctx);
    int xof = (EVP_MD_get_flags(md) & EVP_MD_FLAG_XOF) != 0;
    int ok = xof ? EVP_DigestFinalXOF(st->ph_ctx, out, st->ph->out_len) == 1
                 : EVP_DigestFinal_ex(st->ph_ctx, out, NULL) == 1;
    if (ok)
        ok = EVP_DigestInit_ex(st->ph_ctx, md, NULL) == 1;
    return ok ? DSIG_OK : dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA pre-hash final");
}

/* Start the message hash h: PRF_msg(SK.prf, opt_rand, ·) (prf) or H_msg(R, PK.seed, PK.root, ·),
 * and feed the M' prefix. */
static int start_hash(struct slh_state *st, int prf, const uint8_t *r)
{
    int rc = prf ? dsig_slhdsa_prf_msg_init(&st->h, st->p, st->sk + st->p->n, st->opt_rand)
                 : dsig_slhdsa_h_msg_init(&st->h, st->p, r, st->pk);
    if (rc == DSIG_OK && st->prefix_len)
        rc = dsig_slhdsa_msg_update(&st->h, st->prefix, st->prefix_len);
    return rc;
}

/* Run a whole in-memory M' tail (after the prefix) through a fresh PRF_msg or H_msg. */
static int hash_all(struct slh_state *st, int prf, const uint8_t *r, const uint8_t *m, size_t mlen,
                    uint8_t *out)
{
    int rc = start_hash(st, prf, r);
    if (rc == DSIG_OK && mlen)
        rc = dsig_slhdsa_msg_update(&st->h, m, mlen);
    if (rc == DSIG_OK)
        rc = dsig_slhdsa_msg_final(&st->h, out);
    return rc;
}

/* Common sign init: the state with a copy of sk and opt_rand chosen (PK.seed when deterministic,
 * the test override, or fresh OS randomness), then the first message hash started. */
static int sign_start(void **state, const dsig_alg *alg, const struct dsig_key *key,
                      const dsig_sign_opts *opts, int mode)
{
    const struct slh_key *k = key->impl;
    if (!k || !k->has_sk)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s signing needs a private key", alg->name);
    const dsig_slhdsa_params *p = alg->params;
    const int det = opts && opts->deterministic;
    const int internal = k->test_iface == DSIG_SLHDSA_TEST_INTERNAL;
    /* Deterministic R = PRF_msg(SK.prf, PK.seed, M') needs M' before H_msg can start: only possible
     * in one pass when M' is complete in memory at the end (HashSLH-DSA). */
    if (mode == MODE_ONE_PASS && det && (internal || !opts->prehash))
        return dsig_fail(DSIG_E_UNSUPPORTED,
                         "%s: deterministic signing needs the message twice (R = PRF_msg(SK.prf, "
                         "PK.seed, M) comes before H_msg): the one-pass streaming signer cannot do it; "
                         "use dsig_sign_ex on in-memory data or the two-pass API "
                         "(dsig_sign_init_two_pass or dsig_jws_sign_opts.two_pass; CLI: a regular "
                         "file without --one-pass)", alg->name);
    struct slh_state *st;
    int rc = new_state(&st, alg, k, opts, mode);
    if (rc)
        return rc;
    memcpy(st->sk, k->sk, p->sk_bytes);
    if (det) /* FIPS 205 Algorithm 19 line 2 / 22 line 5: opt_rand = PK.seed when deterministic */
        memcpy(st->opt_rand, k->pk, p->n);
    else if (k->test_rnd_set)
        memcpy(st->opt_rand, k->test_rnd, p->n);
    else
        rc = dsig_random_bytes(st->opt_rand, p->n);
    if (rc == DSIG_OK && !st->ph_ctx) {
        if (mode == MODE_TWO_PASS) {
            rc = start_hash(st, 1, NULL); /* pass 1: PRF_msg over M' */
        } else {
            /* One pass: R = PRF_msg(SK.prf, opt_rand, ε) from fresh opt_rand, then H_msg over M'. */
            rc = dsig_slhdsa_r_onepass(p, st->sk, st->opt_rand, st->r);
            if (rc == DSIG_OK)
                rc = start_hash(st, 0, st->r);
        }
    }
    if (rc) {
        slh_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* @spec FIPS 205 Algorithm 22/23 (pure / HashSLH-DSA) with the one-pass R: the caller's context,
 * pre-hash and (HashSLH-DSA only, in one pass) the deterministic variant; opts NULL: hedged, empty
 * context. */
static int slh_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                         const dsig_sign_opts *opts)
{
    return sign_start(state, alg, key, opts, MODE_ONE_PASS);
}

/* @spec FIPS 205 Algorithm 19 line 6-7 (R = PRF_msg over M') for pass 1; opts may be NULL. */
static int slh_sign_init_two_pass(void **state, const dsig_alg *alg, const struct dsig_key *key,
                                  const dsig_sign_opts *opts)
{
    return sign_start(state, alg, key, opts, MODE_TWO_PASS);
}

/* Ops hook: end pass 1. Pure: R = PRF_msg's output, then H_msg(R, PK.seed, PK.root, ·) over pass 2.
 * HashSLH-DSA: keep PH(M) of pass 1, hash pass 2 again (compared at final). */
static int slh_sign_next_pass(void *state)
{
    struct slh_state *st = state;
    if (st->mode != MODE_TWO_PASS || st->pass != 1)
        return dsig_fail(DSIG_E_STATE, "%s: next pass out of order", st->p->name);
    int rc;
    if (st->ph_ctx) {
        rc = ph_finish(st, st->phm1);
    } else {
        rc = dsig_slhdsa_msg_final(&st->h, st->r);
        if (rc == DSIG_OK)
            rc = start_hash(st, 0, st->r);
    }
    if (rc == DSIG_OK)
        st->pass = 2;
    return rc;
}

/* @spec FIPS 205 Algorithm 19 lines 8-16: the digest of M', then FORS and the hypertree. For
 * HashSLH-DSA M' = prefix ‖ PH(M) is in memory here, so R = PRF_msg(SK.prf, opt_rand, M') is exact. */
static int slh_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct slh_state *st = state;
    const dsig_slhdsa_params *p = st->p;
    if (cap < p->sig_bytes)
        return dsig_fail(DSIG_E_BUFFER, "%s signature needs %zu bytes, buffer has %zu", p->name,
                         p->sig_bytes, cap);
    if (st->mode == MODE_TWO_PASS && st->pass != 2)
        return dsig_fail(DSIG_E_STATE, "%s: two-pass signing finished in pass 1", p->name);
    uint8_t digest[DSIG_SLHDSA_MMAX], phm[PH_MAX];
    int rc;
    if (st->ph_ctx) {
        rc = ph_finish(st, phm);
        if (rc == DSIG_OK && st->mode == MODE_TWO_PASS &&
            CRYPTO_memcmp(phm, st->phm1, st->ph->out_len) != 0)
            rc = dsig_fail(DSIG_E_STATE, "%s: the payload changed between the two passes", p->name);
        if (rc == DSIG_OK)
            rc = hash_all(st, 1, NULL, phm, st->ph->out_len, st->r);
        if (rc == DSIG_OK)
            rc = hash_all(st, 0, st->r, phm, st->ph->out_len, digest);
    } else {
        rc = dsig_slhdsa_msg_final(&st->h, digest);
    }
    if (rc == DSIG_OK)
        rc = dsig_slhdsa_sign_digest(p, st->sk, st->r, digest, sig);
    if (rc == DSIG_OK)
        *sig_len = p->sig_bytes;
    dsig_memzero(st->sk, sizeof st->sk);
    dsig_memzero(st->opt_rand, sizeof st->opt_rand);
    return rc;
}

/* @spec FIPS 205 Algorithm 24 (pure) / 25 (HashSLH-DSA) lines 1-4 and Algorithm 20 lines 1-8, with
 * the caller's context (opts NULL: pure, empty context): length check, then H_msg started with
 * R = SIG[0..n) and the M' prefix (pure), or the PH context (HashSLH-DSA). */
static int slh_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                           const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts)
{
    const dsig_slhdsa_params *p = alg->params;
    const struct slh_key *k = key->impl;
    int rc = dsig_akp_check_sig_len(p->name, p->sig_bytes, sig_len);
    if (rc)
        return rc;
    if (!k)
        return dsig_fail(DSIG_E_KEY, "%s verification needs the public key", alg->name);
    struct slh_state *st;
    if ((rc = new_state(&st, alg, k, opts, MODE_VERIFY)))
        return rc;
    if (!(st->sig = dsig_malloc(sig_len))) {
        slh_free_state(st);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    memcpy(st->sig, sig, sig_len);
    st->sig_len = sig_len;
    if (!st->ph_ctx && (rc = start_hash(st, 0, sig))) {
        slh_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* @spec FIPS 205 Algorithm 20 lines 8-13 with the digest of M' from the stream. */
static int slh_verify_final(void *state)
{
    struct slh_state *st = state;
    uint8_t digest[DSIG_SLHDSA_MMAX], phm[PH_MAX];
    int rc;
    if (st->ph_ctx) {
        rc = ph_finish(st, phm);
        if (rc == DSIG_OK)
            rc = hash_all(st, 0, st->sig, phm, st->ph->out_len, digest);
    } else {
        rc = dsig_slhdsa_msg_final(&st->h, digest);
    }
    if (rc == DSIG_OK)
        rc = dsig_slhdsa_verify_digest(st->p, st->pk, st->sig, digest);
    return rc;
}

/* Ops hook: dsig_sign / dsig_sign_ex on an in-memory message — the exact FIPS 205 signature
 * (Algorithms 22/23), hedged or deterministic (opts NULL: hedged, pure, empty context). Pure: the
 * two passes over the buffer; HashSLH-DSA: one pass already is exact. */
static int slh_sign_oneshot(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg,
                            size_t len, uint8_t *sig, size_t cap, size_t *sig_len,
                            const dsig_sign_opts *opts)
{
    const struct slh_key *k = key->impl;
    const int ph = opts && opts->prehash && k && k->test_iface != DSIG_SLHDSA_TEST_INTERNAL;
    void *state = NULL;
    int rc = sign_start(&state, alg, key, opts, ph ? MODE_ONE_PASS : MODE_TWO_PASS);
    if (rc)
        return rc;
    rc = slh_update(state, msg, len);
    if (rc == DSIG_OK && !ph && (rc = slh_sign_next_pass(state)) == DSIG_OK)
        rc = slh_update(state, msg, len);
    if (rc == DSIG_OK)
        rc = slh_sign_final(state, sig, cap, sig_len);
    slh_free_state(state);
    return rc;
}

/* Verification has no one-shot form: streaming reads the message once and is exact. */
static const struct dsig_alg_oneshot slh_oneshot = {.sign = slh_sign_oneshot, .verify = NULL};

static const struct dsig_alg_two_pass slh_two_pass = {
    .sign_init = slh_sign_init_two_pass,
    .next_pass = slh_sign_next_pass,
};

static const struct dsig_alg_ops slh_ops = {
    .sign_init = slh_sign_init,
    .sign_update = slh_update,
    .sign_final = slh_sign_final,
    .verify_init = slh_verify_init,
    .verify_update = slh_update,
    .verify_final = slh_verify_final,
    .free_state = slh_free_state,
    .oneshot = &slh_oneshot,
    .two_pass = &slh_two_pass,
};
