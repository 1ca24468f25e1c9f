/*
 * src/pq/falcon/falcon_alg.c — FALCON-512 / FALCON-1024 as registry algorithms "FALCON512" and
 * "FALCON1024" (draft JOSE naming), with AKP key types (RFC 9964-style JWK, "alg" selects the set):
 *   "pub"  = the public key encoding (spec §3.11.4: 0x00+logn ‖ 14-bit packed h; 897 / 1793 bytes);
 *   "priv" = the private key encoding (spec §3.11.5: 0x50+logn ‖ f ‖ g ‖ F; 1281 / 2305 bytes).
 * The private member is the specification's encoding rather than a seed: Falcon (round 3, and the
 * FN-DSA draft) defines no seed-to-key derivation — the 48-byte seed of the KATs feeds the reference
 * implementation's PRNG, not a specified algorithm — and key generation costs tens of milliseconds.
 *
 * Signatures are the compressed format of spec §3.11.3 (header 0x30+logn ‖ 40-byte salt ‖ Compress(s2),
 * at most 666 / 1280 bytes). Streaming: sign_init draws the salt from the OS CSPRNG and absorbs it,
 * updates absorb M, final hashes to the point and samples (randomness: 48 fresh OS bytes); verify_init
 * reads the salt from the signature. The private basis is expanded into the FFT/LDL tree once, when a
 * key is made; keys are immutable afterwards and shared with signing states by reference count.
 */
#include <stdatomic.h>
#include <string.h>

#include "core/ct.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"
#include "pq/akp.h"
#include "pq/falcon/falcon.h"

/* Key impl (immutable once built; freed when the last reference goes). */
struct falcon_key {
    atomic_int refs;
    unsigned logn;
    int has_private;
    uint8_t pk[1793];
    uint16_t h_ntt[FALCON_MAX_N];
    uint8_t sk[2305];          /* secret */
    falcon_expanded ek;        /* secret: FFT basis and LDL tree */
};

/* Streaming state of either direction. */
struct falcon_state {
    int signing;
    struct falcon_key *key;    /* one reference held */
    falcon_sign_ctx s;
    falcon_verify_ctx v;
};

/* ---- descriptors ------------------------------------------------------------------------------ */

DSIG_AKP_DECLARE_HOOKS;

/* One AKP key type per parameter set (src/pq/akp.h), selected by the JWK "alg". */
static const struct dsig_keytype dsig_keytype_falcon512 = DSIG_AKP_KEYTYPE("FALCON512");
static const struct dsig_keytype dsig_keytype_falcon1024 = DSIG_AKP_KEYTYPE("FALCON1024");

static const struct dsig_alg_ops falcon_ops;
static const unsigned logn9 = 9, logn10 = 10;

#define FALCON_ALG(set, level, kt, sec, sig_bytes, prm)                                              \
    {                                                                                                \
        .name = set, .family = "FALCON",                                                             \
        .description = set " (Falcon round 3, NIST level " level "); compressed signatures, "         \
                           "randomized one-pass streaming of SHAKE256(salt || M)",                   \
        .keytype = &kt, .baseline = "SHAKE256", .security_bits = sec,                                \
        .flags = DSIG_ALG_PQ | DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED, .sig_max = sig_bytes,        \
        .min_key_bits = 0, .default_key_bits = 0, .ops = &falcon_ops, .params = &prm,                \
    }

static const dsig_alg alg512 = FALCON_ALG("FALCON512", "1", dsig_keytype_falcon512, 128, 666, logn9);
static const dsig_alg alg1024 =
    FALCON_ALG("FALCON1024", "5", dsig_keytype_falcon1024, 256, 1280, logn10);
const dsig_alg *const dsig_falcon_algs[] = {&alg512, &alg1024, NULL};

/* logn of a Falcon key type; 0 (error recorded) for any other type. */
static unsigned logn_of(const struct dsig_keytype *t)
{
    if (t == &dsig_keytype_falcon512)
        return 9;
    if (t == &dsig_keytype_falcon1024)
        return 10;
    dsig_fail(DSIG_E_KEY_MISMATCH, "not a Falcon key (kty %s)", t ? t->kty : "?");
    return 0;
}

/* ---- key material ------------------------------------------------------------------------------ */

/* Drop one reference; the last one wipes and frees. */
static void key_unref(struct falcon_key *k)
{
    if (!k || atomic_fetch_sub(&k->refs, 1) != 1)
        return;
    falcon_expanded_clear(&k->ek);
    dsig_xfree(k, sizeof *k);
}

/* A new impl with one reference. */
static struct falcon_key *key_alloc(unsigned logn)
{
    struct falcon_key *k = dsig_calloc(1, sizeof *k);
    if (!k) {
        dsig_fail(DSIG_E_NOMEM, "out of memory");
        return NULL;
    }
    atomic_init(&k->refs, 1);
    k->logn = logn;
    return k;
}

/* Install a finished impl in key (replacing any previous one). */
static void install(struct dsig_key *key, struct falcon_key *k)
{
    dsig_akp_install(key, k, k->has_private);
}

/* Public part from h (encodes pk, keeps h in NTT form for verification). */
static void set_public_h(struct falcon_key *k, const uint16_t *h)
{
    size_t n = (size_t)1 << k->logn;
    falcon_pk_encode(k->pk, h, k->logn);
    memcpy(k->h_ntt, h, n * sizeof *h);
    falcon_ntt(k->h_ntt, k->logn);
}

/* Private part from (f, g, F, G): encoding and expanded tree. */
static int set_private(struct falcon_key *k, const int8_t *f, const int8_t *g, const int8_t *F,
                       const int8_t *G)
{
    falcon_sk_encode(k->sk, f, g, F, k->logn);
    int rc = falcon_expand_private(&k->ek, f, g, F, G, k->logn);
    if (rc == DSIG_OK)
        k->has_private = 1;
    return rc;
}

/* Key type hook: a 48-byte seed from the RNG (a seeded RNG makes keygen reproducible) feeds the
 * SHAKE256 PRNG of key generation, as in the reference implementation. */
static int akp_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    unsigned logn = logn_of(key->type);
    if (!logn)
        return DSIG_E_KEY_MISMATCH;
    /* The key type's "alg" is the set's name, FALCON512 or FALCON1024 (= FALCON<1 << logn>). */
    int rc = dsig_akp_check_no_bits(key->type->alg, bits);
    if (rc)
        return rc;
    uint8_t seed[48];
    int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N];
    uint16_t h[FALCON_MAX_N];
    dsig_keccak xof;
    struct falcon_key *k = NULL;
    rc = dsig_rng_bytes(rng, seed, sizeof seed);
    if (rc == DSIG_OK) {
        dsig_shake256_init(&xof);
        dsig_keccak_absorb(&xof, seed, sizeof seed);
        dsig_shake_finalize(&xof);
        rc = falcon_keygen(&xof, f, g, F, G, h, logn);
        dsig_keccak_wipe(&xof);
    }
    if (rc == DSIG_OK && !(k = key_alloc(logn)))
        rc = DSIG_E_NOMEM;
    if (rc == DSIG_OK) {
        set_public_h(k, h);
        rc = set_private(k, f, g, F, G);
    }
    dsig_memzero(seed, sizeof seed);
    dsig_memzero(f, sizeof f);
    dsig_memzero(g, sizeof g);
    dsig_memzero(F, sizeof F);
    dsig_memzero(G, sizeof G);
    if (rc != DSIG_OK) {
        key_unref(k);
        return rc;
    }
    install(key, k);
    return DSIG_OK;
}

/*
 * @spec §3.8.2 Algorithm 5 NTRUGen steps 6–9 (the quality conditions on f, g), applied to an imported
 * key: ‖(f, g)‖² < 16823 (the integer form of ‖(g, −f)‖ ≤ 1.17·√q, 1.17²·q = 16822.41) and the
 * Gram–Schmidt norm ‖(q·f̄/(f·f̄ + g·ḡ), q·ḡ/(f·f̄ + g·ḡ))‖² ≤ 1.17²·q (falcon_keygen_gs_ok). Key
 * generation never emits a key failing them; an imported one that does has leaves of its LDL tree
 * below the bound that keeps every sampler deviation ≥ σ_min, which weakens the signatures. Both are
 * functions of (f, g) only: a basis with a poorly reduced (F, G) = (F + k·f, G + k·g) has the same
 * Gram–Schmidt norms, hence the same tree leaves and sampler deviations, and passes (as it should:
 * it spans the same lattice; its size is bounded by the int8 encoding of F and G anyway).
 * Computed without secret-dependent branches; only the two verdict bits are made public.
 */
static int check_basis_quality(const int8_t *f, const int8_t *g, unsigned logn)
{
    size_t n = (size_t)1 << logn;
    uint32_t sqn = 0;
    for (size_t u = 0; u < n; u++)
        sqn += (uint32_t)((int32_t)f[u] * f[u] + (int32_t)g[u] * g[u]);
    /* sqn ≤ 2·1024·127² < 2^31: the borrow bit of sqn − 16823 is exactly "sqn < 16823". */
    uint32_t norm_ok = (sqn - 16823u) >> 31;
    uint32_t gs_ok = (uint32_t)falcon_keygen_gs_ok(f, g, logn);
    /* Key validity is public (a refused key is simply not used); only these yes/no verdicts leave
     * the constant-time computation, not the norms themselves. */
    DSIG_CT_DECLASSIFY(&norm_ok, sizeof norm_ok);
    DSIG_CT_DECLASSIFY(&gs_ok, sizeof gs_ok);
    if (!norm_ok)
        return dsig_fail(DSIG_E_KEY, "FALCON%u JWK: \"priv\" fails key generation's norm check "
                                     "(||(f,g)||^2 must be below 16823): refused, it would weaken "
                                     "signatures", 1u << logn);
    if (!gs_ok)
        return dsig_fail(DSIG_E_KEY, "FALCON%u JWK: \"priv\" fails key generation's Gram-Schmidt "
                                     "norm check (must be at most 1.17*sqrt(q)): refused, it would "
                                     "weaken signatures", 1u << logn);
    return DSIG_OK;
}

/* Key type hook: "pub" (required) and "priv" (optional; must match "pub"). */
static int akp_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    unsigned logn = logn_of(key->type);
    if (!logn)
        return DSIG_E_KEY_MISMATCH;
    int rc = dsig_akp_check_pub(m, n, key->type->alg, 0); /* length: falcon_pk_decode */
    if (rc)
        return rc;
    uint16_t h[FALCON_MAX_N], h2[FALCON_MAX_N];
    rc = falcon_pk_decode(h, m[0].data, m[0].len, logn);
    if (rc != DSIG_OK)
        return rc;
    struct falcon_key *k = key_alloc(logn);
    if (!k)
        return DSIG_E_NOMEM;
    set_public_h(k, h);
    if (dsig_akp_has_priv(m, n)) {
        int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N];
        rc = falcon_sk_decode(f, g, F, m[1].data, m[1].len, logn);
        if (rc == DSIG_OK)
            rc = check_basis_quality(f, g, logn);
        if (rc == DSIG_OK)
            rc = falcon_complete_private(G, f, g, F, logn);
        if (rc == DSIG_OK)
            rc = falcon_compute_public(h2, f, g, logn);
        if (rc == DSIG_OK) {
            /* h2 = g/f is computed from the secret: compared in constant time, and only the verdict
             * is made public (it must equal the public h for any key that is accepted). */
            int same = dsig_ct_equal(h, h2, ((size_t)1 << logn) * sizeof *h);
            DSIG_CT_DECLASSIFY(&same, sizeof same);
            if (!same)
                rc = dsig_fail(DSIG_E_KEY, "FALCON%u JWK: \"pub\" does not match the public key "
                                           "derived from \"priv\"", 1u << logn);
        }
        dsig_memzero(h2, sizeof h2);
        if (rc == DSIG_OK)
            rc = set_private(k, f, g, F, G);
        dsig_memzero(f, sizeof f);
        dsig_memzero(g, sizeof g);
        dsig_memzero(F, sizeof F);
        dsig_memzero(G, sizeof G);
    }
    if (rc != DSIG_OK) {
        key_unref(k);
        return rc;
    }
    install(key, k);
    return DSIG_OK;
}

/* Key type hook: "pub", then "priv" when asked. */
static int akp_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                          size_t *n)
{
    const struct falcon_key *k = key->impl;
    if (include_private && !k->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "FALCON%u key has no private part", 1u << k->logn);
    return dsig_akp_export(m, n, include_private, k->pk, FALCON_PK_LEN(k->logn), k->sk,
                           FALCON_SK_LEN(k->logn));
}

/* Key type hook: a public-only copy. */
static int akp_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct falcon_key *s = src->impl;
    struct falcon_key *k = key_alloc(s->logn);
    if (!k)
        return DSIG_E_NOMEM;
    memcpy(k->pk, s->pk, sizeof k->pk);
    memcpy(k->h_ntt, s->h_ntt, sizeof k->h_ntt);
    install(dst, k);
    return DSIG_OK;
}

/* Key type hook: drop the key's reference (states may still hold theirs). */
static void akp_destroy(struct dsig_key *key)
{
    key_unref(key->impl);
    key->impl = NULL;
}

/* ---- streaming ---------------------------------------------------------------------------------- */

/* Ops hook: release the key reference, wipe and free. */
static void falcon_free_state(void *state)
{
    struct falcon_state *st = state;
    if (!st)
        return;
    key_unref(st->key);
    dsig_xfree(st, sizeof *st);
}

/* A state holding a reference to the key. */
static struct falcon_state *new_state(const struct dsig_key *key, int signing)
{
    struct falcon_state *st = dsig_calloc(1, sizeof *st);
    if (!st) {
        dsig_fail(DSIG_E_NOMEM, "out of memory");
        return NULL;
    }
    st->signing = signing;
    st->key = key->impl;
    atomic_fetch_add(&st->key->refs, 1);
    return st;
}

/* Check the key belongs to the algorithm's set. */
static int check_key(const dsig_alg *alg, const struct dsig_key *key)
{
    const struct falcon_key *k = key->impl;
    unsigned logn = *(const unsigned *)alg->params;
    if (!k || k->logn != logn)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "%s needs a FALCON%u key", alg->name, 1u << logn);
    return DSIG_OK;
}

/* @spec Algorithm 10 Sign steps 1–2: draw the salt r (OS CSPRNG) and start SHAKE256(r ‖ M). */
static int falcon_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                            const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    int rc = check_key(alg, key);
    if (rc)
        return rc;
    const struct falcon_key *k = key->impl;
    if (!k->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s signing needs a private key", alg->name);
    uint8_t salt[FALCON_NONCE_LEN];
    if ((rc = dsig_random_bytes(salt, sizeof salt)))
        return rc;
    struct falcon_state *st = new_state(key, 1);
    if (!st)
        return DSIG_E_NOMEM;
    falcon_sign_start(&st->s, k->logn, salt);
    *state = st;
    return DSIG_OK;
}

/* Absorb a chunk (the hot path: a bare sponge absorb). */
static int falcon_update(void *state, const uint8_t *data, size_t len)
{
    struct falcon_state *st = state;
    if (st->signing)
        falcon_sign_update(&st->s, data, len);
    else
        falcon_verify_update(&st->v, data, len);
    return DSIG_OK;
}

/* @spec Algorithm 10 steps 3–9: HashToPoint, ffSampling (fresh OS randomness), Compress. */
static int falcon_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct falcon_state *st = state;
    uint8_t seed[48];
    int rc = dsig_random_bytes(seed, sizeof seed);
    if (rc == DSIG_OK)
        rc = falcon_sign_finish(&st->s, &st->key->ek, seed, sig, cap, sig_len,
                                FALCON_FMT_COMPRESSED);
    dsig_memzero(seed, sizeof seed);
    return rc;
}

/* @spec Algorithm 16 Verify steps 1–2: decode the signature, start SHAKE256(r ‖ M). */
static int falcon_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                              const uint8_t *sig, size_t sig_len,
                              const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    int rc = check_key(alg, key);
    if (rc)
        return rc;
    struct falcon_state *st = new_state(key, 0);
    if (!st)
        return DSIG_E_NOMEM;
    rc = falcon_verify_start(&st->v, st->key->logn, sig, sig_len, FALCON_FMT_COMPRESSED);
    if (rc) {
        falcon_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* @spec Algorithm 16 steps 3–6. */
static int falcon_verify_final(void *state)
{
    struct falcon_state *st = state;
    return falcon_verify_finish(&st->v, st->key->h_ntt);
}

static const struct dsig_alg_ops falcon_ops = {
    .sign_init = falcon_sign_init,
    .sign_update = falcon_update,
    .sign_final = falcon_sign_final,
    .verify_init = falcon_verify_init,
    .verify_update = falcon_update,
    .verify_final = falcon_verify_final,
    .free_state = falcon_free_state,
};
