/*
 * ML-DSA through the library API (registry, streaming with options, AKP JWK, external μ), proven
 * against NIST ACVP (sigGen / sigVer, external and external-μ groups) and every Wycheproof ML-DSA file.
 * Vectors are read at run time from $DSIG_VECTORS/mldsa.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/internal.h"
#include "hash/keccak.h"
#include "pq/mldsa/mldsa.h"
#include "pq/mldsa/mldsa_key.h"
#include "testutil.h"

/* ACVP hashAlg → dsig_sign_opts.prehash spelling. */
static const char *prehash_name(const char *acvp)
{
    static const char *const map[][2] = {
        {"SHA2-224", "SHA-224"},         {"SHA2-256", "SHA-256"},         {"SHA2-384", "SHA-384"},
        {"SHA2-512", "SHA-512"},         {"SHA2-512/224", "SHA-512/224"}, {"SHA2-512/256", "SHA-512/256"},
        {"SHA3-224", "SHA3-224"},        {"SHA3-256", "SHA3-256"},        {"SHA3-384", "SHA3-384"},
        {"SHA3-512", "SHA3-512"},        {"SHAKE-128", "SHAKE128"},       {"SHAKE-256", "SHAKE256"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], acvp) == 0)
            return map[i][1];
    fail_msg("unknown ACVP hashAlg %s", acvp);
    return NULL;
}

/* PH(msg) for a HashML-DSA pre-hash (dsig_sign_opts spelling) through OpenSSL, not our code: the
 * digest a client would send to dsig_sign_digest. Its length. */
static size_t ph_digest(const char *name, const uint8_t *msg, size_t len, uint8_t out[64])
{
    const int shake128 = strcmp(name, "SHAKE128") == 0, xof = shake128 || strcmp(name, "SHAKE256") == 0;
    EVP_MD *md = EVP_MD_fetch(NULL, name, NULL);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    unsigned n = 0;
    assert_non_null(md);
    assert_non_null(c);
    assert_int_equal(EVP_DigestInit_ex(c, md, NULL), 1);
    assert_int_equal(EVP_DigestUpdate(c, msg, len), 1);
    if (xof) {
        n = shake128 ? 32 : 64; /* FIPS 204 §5.4: 256 / 512 bits */
        assert_int_equal(EVP_DigestFinalXOF(c, out, n), 1);
    } else {
        assert_int_equal(EVP_DigestFinal_ex(c, out, &n), 1);
    }
    EVP_MD_CTX_free(c);
    EVP_MD_free(md);
    return n;
}

/* ---- ACVP ----------------------------------------------------------------------------------- */

/* sigGen external (pure and preHash, deterministic and hedged) byte-exact through dsig_sign_ex from
 * the expanded sk; externalMu groups through dsig_mldsa_sign_external_mu. */
static void test_acvp_siggen(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("mldsa/acvp/ML-DSA-sigGen-FIPS204/prompt.json");
    json_t *expected = tu_load_json("mldsa/acvp/ML-DSA-sigGen-FIPS204/expectedResults.json");
    const json_t *g, *t;
    size_t i, j, n_ext = 0, n_ph = 0, n_mu = 0, n_ph_digest = 0;
    char seen_ph[512] = "";
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        const dsig_alg *alg = dsig_alg_by_name(tu_str(g, "parameterSet"));
        assert_non_null(alg);
        int det = json_is_true(json_object_get(g, "deterministic"));
        int external = strcmp(tu_str(g, "signatureInterface"), "external") == 0;
        int ext_mu = json_is_true(json_object_get(g, "externalMu"));
        if (!external && !ext_mu)
            continue; /* Sign_internal on a raw M': the core's own tests (tests/mldsa) */
        int ph = external && strcmp(tu_str(g, "preHash"), "preHash") == 0;
        json_int_t tg = json_integer_value(json_object_get(g, "tgId"));
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_int_t tc = json_integer_value(json_object_get(t, "tcId"));
            size_t sk_len, want_len, rnd_len = 0;
            uint8_t *sk = tu_hex(tu_str(t, "sk"), &sk_len);
            uint8_t *want = tu_hex(tu_str(tu_acvp_find(expected, tg, tc), "signature"), &want_len);
            uint8_t *rnd = det ? NULL : tu_hex(tu_str(t, "rnd"), &rnd_len);
            dsig_key *key = NULL;
            assert_int_equal(dsig_mldsa_key_from_expanded(&key, alg, sk, sk_len, NULL, 0), DSIG_OK);
            uint8_t sig[4627];
            size_t sig_len = 0;
            int rc;
            if (ext_mu) {
                size_t mu_len;
                uint8_t *mu = tu_hex(tu_str(t, "mu"), &mu_len);
                uint8_t zero[32] = {0};
                assert_int_equal(mu_len, 64);
                rc = dsig_mldsa_sign_external_mu(key, mu, det ? zero : rnd, sig, sizeof sig, &sig_len);
                /* the same signature through dsig/prehashed.h (its randomness from the test hook) */
                uint8_t sig2[4627];
                size_t sig2_len = 0;
                assert_int_equal(dsig_mldsa_key_set_test_rnd(key, det ? zero : rnd), DSIG_OK);
                assert_int_equal(dsig_sign_digest(alg, key, "ExternalMu", mu, mu_len, sig2, sizeof sig2, &sig2_len),
                                 DSIG_OK);
                if (sig2_len != want_len || memcmp(sig2, want, want_len) != 0)
                    fail_msg("sigGen tg %lld tc %lld: dsig_sign_digest(ExternalMu) differs", (long long)tg,
                             (long long)tc);
                free(mu);
                n_mu++;
            } else {
                size_t msg_len, ctx_len;
                uint8_t *msg = tu_hex(tu_str(t, "message"), &msg_len);
                uint8_t *ctx = tu_hex(tu_str(t, "context"), &ctx_len);
                dsig_sign_opts o = {.context = ctx, .context_len = ctx_len, .deterministic = det};
                if (ph) {
                    o.prehash = prehash_name(tu_str(t, "hashAlg"));
                    if (!strstr(seen_ph, o.prehash)) {
                        strcat(seen_ph, o.prehash);
                        strcat(seen_ph, " ");
                    }
                    n_ph++;
                } else {
                    n_ext++;
                }
                if (!det) /* the streaming signer, with its one randomness draw fed from the vector */
                    assert_int_equal(dsig_mldsa_key_set_test_rnd(key, rnd), DSIG_OK);
                rc = dsig_sign_ex(alg, key, msg, msg_len, sig, sizeof sig, &sig_len, &o);
                if (ph && ctx_len == 0) { /* dsig/prehashed.h signs HashML-DSA with the empty context */
                    uint8_t dg[64], sig2[4627], zero[32] = {0};
                    size_t dl = ph_digest(o.prehash, msg, msg_len, dg), sig2_len = 0;
                    assert_int_equal(dsig_mldsa_key_set_test_rnd(key, det ? zero : rnd), DSIG_OK);
                    assert_int_equal(dsig_sign_digest(alg, key, o.prehash, dg, dl, sig2, sizeof sig2, &sig2_len),
                                     DSIG_OK);
                    if (sig2_len != want_len || memcmp(sig2, want, want_len) != 0)
                        fail_msg("sigGen tg %lld tc %lld: dsig_sign_digest(%s) differs", (long long)tg,
                                 (long long)tc, o.prehash);
                    n_ph_digest++;
                }
                free(msg);
                free(ctx);
            }
            if (rc != DSIG_OK || sig_len != want_len || memcmp(sig, want, want_len) != 0)
                fail_msg("sigGen tg %lld tc %lld: rc %d (%s), len %zu vs %zu", (long long)tg,
                         (long long)tc, rc, dsig_last_error_detail(), sig_len, want_len);
            dsig_key_free(key);
            free(sk);
            free(want);
            free(rnd);
        }
    }
    print_message("sigGen: %zu pure, %zu pre-hash (%s), %zu external-mu cases; %zu pre-hash and %zu "
                  "external-mu also through dsig_sign_digest\n", n_ext, n_ph, seen_ph, n_mu, n_ph_digest, n_mu);
    assert_true(n_ext > 0 && n_ph > 0 && n_mu > 0 && n_ph_digest > 0);
    json_decref(prompt);
    json_decref(expected);
}

/* sigVer external groups through dsig_verify_ex with a JWK-imported public key; externalMu groups
 * through dsig_mldsa_verify_external_mu. */
static void test_acvp_sigver(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("mldsa/acvp/ML-DSA-sigVer-FIPS204/prompt.json");
    json_t *expected = tu_load_json("mldsa/acvp/ML-DSA-sigVer-FIPS204/expectedResults.json");
    const json_t *g, *t;
    size_t i, j, n = 0, n_bad = 0, n_digest = 0;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        const char *set = tu_str(g, "parameterSet");
        const dsig_alg *alg = dsig_alg_by_name(set);
        assert_non_null(alg);
        int external = strcmp(tu_str(g, "signatureInterface"), "external") == 0;
        int ext_mu = json_is_true(json_object_get(g, "externalMu"));
        if (!external && !ext_mu)
            continue;
        int ph = external && strcmp(tu_str(g, "preHash"), "preHash") == 0;
        json_int_t tg = json_integer_value(json_object_get(g, "tgId"));
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_int_t tc = json_integer_value(json_object_get(t, "tcId"));
            int want = json_is_true(json_object_get(tu_acvp_find(expected, tg, tc), "testPassed"));
            size_t pk_len, sig_len;
            uint8_t *pk = tu_hex(tu_str(t, "pk"), &pk_len);
            uint8_t *sig = tu_hex(tu_str(t, "signature"), &sig_len);
            char *jwk = tu_akp_jwk(set, pk, pk_len, NULL, 0);
            dsig_key *key = NULL;
            assert_int_equal(tu_jwk_import(jwk, &key), DSIG_OK);
            int rc;
            if (ext_mu) {
                size_t mu_len;
                uint8_t *mu = tu_hex(tu_str(t, "mu"), &mu_len);
                rc = dsig_mldsa_verify_external_mu(key, mu, sig, sig_len);
                int rd = dsig_verify_digest(alg, key, "ExternalMu", mu, mu_len, sig, sig_len);
                if (rd != rc)
                    fail_msg("sigVer tg %lld tc %lld: dsig_verify_digest %d, external mu %d", (long long)tg,
                             (long long)tc, rd, rc);
                n_digest++;
                free(mu);
            } else {
                size_t msg_len, ctx_len;
                uint8_t *msg = tu_hex(tu_str(t, "message"), &msg_len);
                uint8_t *ctx = tu_hex(tu_str(t, "context"), &ctx_len);
                dsig_sign_opts o = {.context = ctx, .context_len = ctx_len};
                if (ph)
                    o.prehash = prehash_name(tu_str(t, "hashAlg"));
                rc = dsig_verify_ex(alg, key, msg, msg_len, sig, sig_len, &o);
                if (ph && ctx_len == 0) {
                    uint8_t dg[64];
                    size_t dl = ph_digest(o.prehash, msg, msg_len, dg);
                    int rd = dsig_verify_digest(alg, key, o.prehash, dg, dl, sig, sig_len);
                    if (rd != rc)
                        fail_msg("sigVer tg %lld tc %lld: dsig_verify_digest(%s) %d, dsig_verify_ex %d",
                                 (long long)tg, (long long)tc, o.prehash, rd, rc);
                    n_digest++;
                }
                free(msg);
                free(ctx);
            }
            if (want ? rc != DSIG_OK : rc != DSIG_E_VERIFY)
                fail_msg("sigVer tg %lld tc %lld: expected %s, rc %d (%s)", (long long)tg, (long long)tc,
                         want ? "valid" : "invalid", rc, dsig_last_error_detail());
            n++;
            n_bad += !want;
            dsig_key_free(key);
            free(jwk);
            free(pk);
            free(sig);
        }
    }
    print_message("sigVer: %zu cases (%zu invalid rejected), %zu also through dsig_verify_digest\n", n, n_bad,
                  n_digest);
    assert_true(n > 0 && n_bad > 0 && n_digest > 0);
    json_decref(prompt);
    json_decref(expected);
}

/* ---- Wycheproof ----------------------------------------------------------------------------- */

/* Hex member or NULL when absent / JSON null. */
static uint8_t *opt_hex(const json_t *o, const char *name, size_t *len)
{
    const json_t *v = json_object_get(o, name);
    *len = 0;
    return json_is_string(v) ? tu_hex(json_string_value(v), len) : NULL;
}

/* One Wycheproof signing case with a ready key: sign (μ-interface for "Internal" vectors), compare,
 * verify, and check μ. Returns 1 if every step succeeded and matched, 0 on any failure. */
static int wp_sign_case(const dsig_alg *alg, dsig_key *key, int can_verify, const json_t *t)
{
    size_t msg_len, ctx_len, rnd_len, mu_len, want_len;
    uint8_t *msg = opt_hex(t, "msg", &msg_len), *ctx = opt_hex(t, "ctx", &ctx_len);
    uint8_t *rnd = opt_hex(t, "rnd", &rnd_len), *mu = opt_hex(t, "mu", &mu_len);
    uint8_t *want = opt_hex(t, "sig", &want_len);
    uint8_t sig[4627], zero[32] = {0}, got_mu[64];
    size_t sig_len = 0;
    int ok = 1, rc;
    if (msg) {
        dsig_sign_opts o = {.context = ctx, .context_len = ctx_len, .deterministic = !rnd};
        if (rnd)
            assert_int_equal(dsig_mldsa_key_set_test_rnd(key, rnd), DSIG_OK);
        rc = dsig_sign_ex(alg, key, msg, msg_len, sig, sizeof sig, &sig_len, &o);
        dsig_mldsa_key_set_test_rnd(key, NULL);
        ok = rc == DSIG_OK;
        /* μ from message and context must match, and fail exactly when the context is invalid. */
        int mrc = dsig_mldsa_mu(key, ctx, ctx_len, msg, msg_len, got_mu);
        if (mu)
            assert_true(mrc == DSIG_OK && memcmp(got_mu, mu, 64) == 0);
        else
            assert_int_not_equal(mrc, DSIG_OK);
        if (ctx_len > 255)
            assert_int_equal(rc, DSIG_E_ARG);
    } else {
        assert_non_null(mu);
        rc = dsig_mldsa_sign_external_mu(key, mu, rnd ? rnd : zero, sig, sizeof sig, &sig_len);
        ok = rc == DSIG_OK;
    }
    if (ok && want)
        ok = sig_len == want_len && memcmp(sig, want, want_len) == 0;
    if (ok && can_verify) {
        dsig_sign_opts o = {.context = ctx, .context_len = ctx_len};
        ok = msg ? dsig_verify_ex(alg, key, msg, msg_len, sig, sig_len, &o) == DSIG_OK
                 : dsig_mldsa_verify_external_mu(key, mu, sig, sig_len) == DSIG_OK;
        assert_true(ok); /* a signature we produced and that matched must verify */
    }
    free(msg);
    free(ctx);
    free(rnd);
    free(mu);
    free(want);
    return ok;
}

/* Check a case outcome against "result". */
static void wp_expect(const char *file, const json_t *t, int ok)
{
    const char *result = tu_str(t, "result");
    int valid = strcmp(result, "valid") == 0;
    if (ok != valid)
        fail_msg("%s tc %lld (%s): expected %s, got %s (%s)", file,
                 (long long)json_integer_value(json_object_get(t, "tcId")),
                 json_string_value(json_object_get(t, "comment")), result, ok ? "success" : "failure",
                 dsig_last_error_detail());
}

/* sign_seed: the key is a JWK with "priv" = the seed (and "pub" = the expected public key, so the
 * import also proves KeyGen); sign_noseed: the expanded key. */
static void wp_sign_file(const char *set, const char *kind)
{
    char path[128];
    snprintf(path, sizeof path, "mldsa/wycheproof/mldsa_%s_%s_test.json", set + 7, kind);
    json_t *f = tu_load_json(path);
    const dsig_alg *alg = dsig_alg_by_name(set);
    assert_non_null(alg);
    int seeded = strcmp(kind, "sign_seed") == 0;
    const json_t *g, *t;
    size_t i, j, n = 0;
    json_array_foreach(json_object_get(f, "testGroups"), i, g)
    {
        size_t pk_len, sk_len;
        uint8_t *pk = opt_hex(g, "publicKey", &pk_len);
        uint8_t *sk = opt_hex(g, seeded ? "privateSeed" : "privateKey", &sk_len);
        dsig_key *key = NULL;
        int krc;
        if (seeded) {
            char *jwk = tu_akp_jwk(set, pk ? pk : (const uint8_t *)"", pk_len, sk, sk_len);
            krc = tu_jwk_import(jwk, &key);
            free(jwk);
        } else {
            krc = dsig_mldsa_key_from_expanded(&key, alg, sk, sk_len, pk, pk_len);
        }
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            wp_expect(path, t, krc == DSIG_OK && wp_sign_case(alg, key, pk != NULL, t));
            n++;
        }
        dsig_key_free(key);
        free(pk);
        free(sk);
    }
    assert_int_equal((json_int_t)n, json_integer_value(json_object_get(f, "numberOfTests")));
    json_decref(f);
}

/* verify: JWK-imported public key, dsig_verify_ex; every invalid case must be rejected. */
static void wp_verify_file(const char *set)
{
    char path[128];
    snprintf(path, sizeof path, "mldsa/wycheproof/mldsa_%s_verify_test.json", set + 7);
    json_t *f = tu_load_json(path);
    const dsig_alg *alg = dsig_alg_by_name(set);
    const json_t *g, *t;
    size_t i, j, n = 0;
    json_array_foreach(json_object_get(f, "testGroups"), i, g)
    {
        size_t pk_len;
        uint8_t *pk = opt_hex(g, "publicKey", &pk_len);
        char *jwk = tu_akp_jwk(set, pk, pk_len, NULL, 0);
        dsig_key *key = NULL;
        int krc = tu_jwk_import(jwk, &key);
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            size_t msg_len, ctx_len, sig_len;
            uint8_t *msg = opt_hex(t, "msg", &msg_len), *ctx = opt_hex(t, "ctx", &ctx_len);
            uint8_t *sig = opt_hex(t, "sig", &sig_len);
            dsig_sign_opts o = {.context = ctx, .context_len = ctx_len};
            int rc = krc ? krc : dsig_verify_ex(alg, key, msg, msg_len, sig, sig_len, &o);
            wp_expect(path, t, rc == DSIG_OK);
            free(msg);
            free(ctx);
            free(sig);
            n++;
        }
        dsig_key_free(key);
        free(jwk);
        free(pk);
    }
    assert_int_equal((json_int_t)n, json_integer_value(json_object_get(f, "numberOfTests")));
    json_decref(f);
}

static const char *const sets[] = {"ML-DSA-44", "ML-DSA-65", "ML-DSA-87"};

static void test_wycheproof_sign_seed(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++)
        wp_sign_file(sets[i], "sign_seed");
}

static void test_wycheproof_sign_noseed(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++)
        wp_sign_file(sets[i], "sign_noseed");
}

static void test_wycheproof_verify(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++)
        wp_verify_file(sets[i]);
}

/* ---- keys, JWK ------------------------------------------------------------------------------- */

/* A seeded key of `set` (reproducible). */
static dsig_key *seeded_key(const char *set)
{
    static const uint8_t seed[32] = "dsig mldsa api test seed 012345";
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name(set), &kp), DSIG_OK);
    return k;
}

/* Export → import → export gives the same text; seeded keygen is reproducible; "alg" is in the JWK;
 * the thumbprint is SHA-256 of {"alg","kty","pub"} in that order (RFC 7638 + RFC 9964). */
static void test_jwk_roundtrip_thumbprint(void **state)
{
    (void)state;
    for (size_t s = 0; s < 3; s++) {
        dsig_key *k = seeded_key(sets[s]), *k2 = seeded_key(sets[s]), *back = NULL, *pub = NULL;
        char *j1, *j2, *j3, *jp;
        assert_int_equal(dsig_jwk_export(k, 1, &j1, NULL), DSIG_OK);
        assert_int_equal(dsig_jwk_export(k2, 1, &j2, NULL), DSIG_OK);
        assert_string_equal(j1, j2); /* seeded generation is reproducible */
        assert_non_null(strstr(j1, "\"kty\":\"AKP\""));
        assert_non_null(strstr(j1, "\"priv\":\""));
        char alg_member[32];
        snprintf(alg_member, sizeof alg_member, "\"alg\":\"%s\"", sets[s]);
        assert_non_null(strstr(j1, alg_member));
        assert_int_equal(tu_jwk_import(j1, &back), DSIG_OK);
        assert_true(dsig_key_has_private(back));
        assert_ptr_equal(dsig_key_alg(back), dsig_alg_by_name(sets[s]));
        assert_int_equal(dsig_jwk_export(back, 1, &j3, NULL), DSIG_OK);
        assert_string_equal(j1, j3);
        assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
        assert_int_equal(dsig_jwk_export(pub, 0, &jp, NULL), DSIG_OK);
        assert_null(strstr(jp, "priv"));

        /* Thumbprint by hand. */
        json_t *o = json_loads(jp, 0, NULL);
        assert_non_null(o);
        char canon[8192];
        snprintf(canon, sizeof canon, "{\"alg\":\"%s\",\"kty\":\"AKP\",\"pub\":\"%s\"}", sets[s],
                 json_string_value(json_object_get(o, "pub")));
        uint8_t md[32];
        unsigned mdlen;
        assert_true(EVP_Digest(canon, strlen(canon), md, &mdlen, EVP_sha256(), NULL));
        char want[DSIG_THUMBPRINT_LEN], got[DSIG_THUMBPRINT_LEN];
        dsig_b64url_encode(want, md, 32);
        assert_int_equal(dsig_jwk_thumbprint(k, got), DSIG_OK);
        assert_string_equal(got, want);
        assert_string_equal(json_string_value(json_object_get(o, "kid")), want);
        json_decref(o);

        /* PEM: OpenSSL 3.0 has no ML-DSA. */
        char *pem = NULL;
        assert_int_equal(dsig_key_export_pem(k, 0, &pem, NULL), DSIG_E_UNSUPPORTED);

        dsig_free(j1);
        dsig_free(j2);
        dsig_free(j3);
        dsig_free(jp);
        dsig_key_free(k);
        dsig_key_free(k2);
        dsig_key_free(back);
        dsig_key_free(pub);
    }
}

/* Malformed AKP JWKs are refused with DSIG_E_KEY / DSIG_E_UNSUPPORTED and a detail. */
static void test_jwk_rejects(void **state)
{
    (void)state;
    uint8_t seed[32] = {1}, seed2[32] = {2}, pk[2592], sk[4896], pk2[2592];
    assert_int_equal(dsig_mldsa_keygen_internal(&dsig_mldsa44, pk, sk, seed), DSIG_OK);
    assert_int_equal(dsig_mldsa_keygen_internal(&dsig_mldsa44, pk2, sk, seed2), DSIG_OK);
    dsig_key *k = NULL;
    char *j;

    j = tu_akp_jwk("ML-DSA-44", pk, 1311, NULL, 0); /* short pub */
    assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
    assert_non_null(strstr(dsig_last_error_detail(), "1312"));
    assert_non_null(strstr(dsig_last_error_detail(), "1311"));
    free(j);
    j = tu_akp_jwk("ML-DSA-65", pk, 1312, NULL, 0); /* a 44 key claimed as 65 */
    assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
    free(j);
    j = tu_akp_jwk("ML-DSA-44", pk2, 1312, seed, 32); /* pub of another seed */
    assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
    assert_non_null(strstr(dsig_last_error_detail(), "does not match"));
    free(j);
    j = tu_akp_jwk("ML-DSA-44", pk, 1312, seed, 31); /* short seed */
    assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
    free(j);
    j = tu_akp_jwk("ML-DSA-99", pk, 1312, NULL, 0);
    assert_int_equal(tu_jwk_import(j, &k), DSIG_E_UNSUPPORTED);
    free(j);
    j = tu_akp_jwk("ES256", pk, 1312, NULL, 0);
    assert_int_equal(tu_jwk_import(j, &k), DSIG_E_UNSUPPORTED);
    free(j);
    const char *no_alg = "{\"kty\":\"AKP\",\"pub\":\"AAAA\"}";
    assert_int_equal(tu_jwk_import(no_alg, &k), DSIG_E_KEY);
    assert_non_null(strstr(dsig_last_error_detail(), "\"alg\""));
    const char *no_pub = "{\"kty\":\"AKP\",\"alg\":\"ML-DSA-44\",\"priv\":\"AAAA\"}";
    assert_int_equal(tu_jwk_import(no_pub, &k), DSIG_E_KEY);
    assert_null(k);

    /* The good one imports. */
    j = tu_akp_jwk("ML-DSA-44", pk, 1312, seed, 32);
    assert_int_equal(tu_jwk_import(j, &k), DSIG_OK);
    dsig_key_free(k);
    free(j);
}

/* ---- signing options, lengths, refusals -------------------------------------------------- */

static void test_refusals(void **state)
{
    (void)state;
    const dsig_alg *a44 = dsig_alg_by_name("ML-DSA-44");
    assert_non_null(a44);
    unsigned fl = dsig_alg_flags(a44);
    assert_true((fl & DSIG_ALG_PQ) && (fl & DSIG_ALG_ONE_PASS) && (fl & DSIG_ALG_RANDOMIZED) &&
                (fl & DSIG_ALG_OPTIONS));
    assert_string_equal(dsig_alg_family(a44), "ML-DSA");
    assert_string_equal(dsig_alg_kty(a44), "AKP");
    assert_string_equal(dsig_alg_baseline(a44), "SHAKE256");
    assert_int_equal(dsig_alg_sig_max(a44), 2420);

    dsig_key *k = seeded_key("ML-DSA-44"), *pub = NULL;
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    uint8_t sig[4627], ctx[256] = {0};
    size_t sig_len;
    const uint8_t msg[] = "message";
    /* Wrong-length signatures: DSIG_E_VERIFY, like every other algorithm. */
    assert_int_equal(dsig_sign(a44, k, msg, 7, sig, sizeof sig, &sig_len), DSIG_OK);
    assert_int_equal(sig_len, 2420);
    assert_int_equal(dsig_verify(a44, pub, msg, 7, sig, sig_len), DSIG_OK);
    assert_int_equal(dsig_verify(a44, pub, msg, 7, sig, sig_len - 1), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(a44, pub, msg, 7, sig, 0), DSIG_E_VERIFY);
    uint8_t longer[2421] = {0};
    memcpy(longer, sig, sig_len);
    assert_int_equal(dsig_verify(a44, pub, msg, 7, longer, sizeof longer), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(a44, pub, msg, 6, sig, sig_len), DSIG_E_VERIFY);
    /* Too small an output buffer. */
    assert_int_equal(dsig_sign(a44, k, msg, 7, sig, 2419, &sig_len), DSIG_E_BUFFER);
    /* A public key cannot sign. */
    assert_int_equal(dsig_sign(a44, pub, msg, 7, sig, sizeof sig, &sig_len), DSIG_E_NO_PRIVATE);

    /* Context: must match; 256 bytes refused. */
    dsig_sign_opts o = {.context = (const uint8_t *)"ctx", .context_len = 3};
    assert_int_equal(dsig_sign_ex(a44, k, msg, 7, sig, sizeof sig, &sig_len, &o), DSIG_OK);
    assert_int_equal(dsig_verify_ex(a44, pub, msg, 7, sig, sig_len, &o), DSIG_OK);
    assert_int_equal(dsig_verify(a44, pub, msg, 7, sig, sig_len), DSIG_E_VERIFY);
    dsig_sign_opts o2 = {.context = (const uint8_t *)"ctY", .context_len = 3};
    assert_int_equal(dsig_verify_ex(a44, pub, msg, 7, sig, sig_len, &o2), DSIG_E_VERIFY);
    dsig_sign_opts big = {.context = ctx, .context_len = 256};
    assert_int_equal(dsig_sign_ex(a44, k, msg, 7, sig, sizeof sig, &sig_len, &big), DSIG_E_ARG);
    uint8_t mu[64];
    assert_int_equal(dsig_mldsa_mu(pub, ctx, 256, msg, 7, mu), DSIG_E_ARG);
    /* Pre-hash: round trip, mismatch, unknown name. */
    dsig_sign_opts ph = {.prehash = "SHA3-256"};
    assert_int_equal(dsig_sign_ex(a44, k, msg, 7, sig, sizeof sig, &sig_len, &ph), DSIG_OK);
    assert_int_equal(dsig_verify_ex(a44, pub, msg, 7, sig, sig_len, &ph), DSIG_OK);
    assert_int_equal(dsig_verify(a44, pub, msg, 7, sig, sig_len), DSIG_E_VERIFY);
    dsig_sign_opts ph2 = {.prehash = "SHA-256"};
    assert_int_equal(dsig_verify_ex(a44, pub, msg, 7, sig, sig_len, &ph2), DSIG_E_VERIFY);
    dsig_sign_opts bad = {.prehash = "MD5"};
    assert_int_equal(dsig_sign_ex(a44, k, msg, 7, sig, sizeof sig, &sig_len, &bad), DSIG_E_UNSUPPORTED);
    assert_non_null(strstr(dsig_last_error_detail(), "MD5"));
    /* Algorithms without options refuse them. */
    const dsig_alg *es = dsig_alg_by_name("ES256");
    dsig_key *ek = NULL;
    assert_int_equal(dsig_key_generate(&ek, es, NULL), DSIG_OK);
    assert_int_equal(dsig_sign_ex(es, ek, msg, 7, sig, sizeof sig, &sig_len, &o), DSIG_E_UNSUPPORTED);
    dsig_sign_opts det = {.deterministic = 1};
    assert_int_equal(dsig_sign_ex(es, ek, msg, 7, sig, sizeof sig, &sig_len, &det), DSIG_E_UNSUPPORTED);
    /* External μ needs an ML-DSA key. */
    assert_int_equal(dsig_mldsa_mu(ek, NULL, 0, msg, 7, mu), DSIG_E_KEY_MISMATCH);
    /* Hedged signatures differ; deterministic ones repeat. */
    uint8_t s1[2420], s2[2420];
    size_t l1, l2;
    assert_int_equal(dsig_sign(a44, k, msg, 7, s1, sizeof s1, &l1), DSIG_OK);
    assert_int_equal(dsig_sign(a44, k, msg, 7, s2, sizeof s2, &l2), DSIG_OK);
    assert_memory_not_equal(s1, s2, 2420);
    assert_int_equal(dsig_sign_ex(a44, k, msg, 7, s1, sizeof s1, &l1, &det), DSIG_OK);
    assert_int_equal(dsig_sign_ex(a44, k, msg, 7, s2, sizeof s2, &l2, &det), DSIG_OK);
    assert_memory_equal(s1, s2, 2420);
    dsig_key_free(ek);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* JWS: deterministic allowed, context / pre-hash refused unless raw; verification round trip. */
static void test_jws(void **state)
{
    (void)state;
    dsig_key *k = seeded_key("ML-DSA-65"), *pub = NULL;
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    dsig_sign_opts det = {.deterministic = 1}, ctx = {.context = (const uint8_t *)"c", .context_len = 1};
    dsig_jws_sign_opts so = {.format = DSIG_FMT_JWS, .sign_opts = &det};
    dsig_jws_sign_ctx *c = NULL;
    char *out[2];
    size_t out_len[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dsig_jws_sign_init(&c, NULL, k, &so), DSIG_OK);
        assert_int_equal(dsig_jws_sign_update(c, "payload", 7), DSIG_OK);
        assert_int_equal(dsig_jws_sign_final(c, &out[i], &out_len[i]), DSIG_OK);
    }
    assert_string_equal(out[0], out[1]);
    assert_non_null(strstr(out[0], ".."));
    dsig_jws_verify_ctx *v = NULL;
    assert_int_equal(dsig_jws_verify_init(&v, pub, out[0], out_len[0], NULL), DSIG_OK);
    assert_int_equal(dsig_jws_verify_update(v, "payload", 7), DSIG_OK);
    assert_int_equal(dsig_jws_verify_final(v), DSIG_OK);
    dsig_jws_verify_opts vo = {.sign_opts = &ctx};
    assert_int_equal(dsig_jws_verify_init(&v, pub, out[0], out_len[0], &vo), DSIG_E_UNSUPPORTED);
    so.sign_opts = &ctx;
    assert_int_equal(dsig_jws_sign_init(&c, NULL, k, &so), DSIG_E_UNSUPPORTED);
    so.format = DSIG_FMT_RAW;
    char *raw;
    size_t raw_len;
    assert_int_equal(dsig_jws_sign_init(&c, NULL, k, &so), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "payload", 7), DSIG_OK);
    assert_int_equal(dsig_jws_sign_final(c, &raw, &raw_len), DSIG_OK);
    vo.format = DSIG_FMT_RAW;
    assert_int_equal(dsig_jws_verify_init(&v, pub, raw, raw_len, &vo), DSIG_OK);
    assert_int_equal(dsig_jws_verify_update(v, "payload", 7), DSIG_OK);
    assert_int_equal(dsig_jws_verify_final(v), DSIG_OK);
    dsig_free(out[0]);
    dsig_free(out[1]);
    dsig_free(raw);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* Chunked streaming (1, 7, 4096 bytes, one update) gives the deterministic signature that the
 * one-shot internal computation gives: μ by this file's own SHAKE256 (src/hash/keccak.h, not the
 * provider's EVP path) and dsig_mldsa_sign_mu. */
static void test_chunking(void **state)
{
    (void)state;
    static uint8_t msg[20000];
    tu_fill(msg, sizeof msg, 42);
    const uint8_t ctxs[] = "chunking context";
    for (size_t s = 0; s < 3; s++) {
        const dsig_alg *alg = dsig_alg_by_name(sets[s]);
        const dsig_mldsa_params *p = dsig_mldsa_params_by_name(sets[s]);
        uint8_t xi[32], pk[2592], sk[4896], tr[64], mu[64], zero[32] = {0}, want[4627];
        tu_fill(xi, 32, 7 + s);
        assert_int_equal(dsig_mldsa_keygen_internal(p, pk, sk, xi), DSIG_OK);
        dsig_mldsa_tr(p, pk, tr);
        dsig_keccak h;
        dsig_shake256_init(&h);
        uint8_t hdr[2] = {0, sizeof ctxs - 1};
        dsig_keccak_absorb(&h, tr, 64);
        dsig_keccak_absorb(&h, hdr, 2);
        dsig_keccak_absorb(&h, ctxs, sizeof ctxs - 1);
        dsig_keccak_absorb(&h, msg, sizeof msg);
        dsig_shake_finalize(&h);
        dsig_keccak_squeeze(&h, mu, 64);
        assert_int_equal(dsig_mldsa_sign_mu(p, want, sk, mu, zero), DSIG_OK);

        char *jwk = tu_akp_jwk(sets[s], pk, p->pk_bytes, xi, 32);
        dsig_key *k = NULL;
        assert_int_equal(tu_jwk_import(jwk, &k), DSIG_OK);
        uint8_t got_mu[64];
        assert_int_equal(dsig_mldsa_mu(k, ctxs, sizeof ctxs - 1, msg, sizeof msg, got_mu), DSIG_OK);
        assert_memory_equal(got_mu, mu, 64);
        dsig_sign_opts o = {.context = ctxs, .context_len = sizeof ctxs - 1, .deterministic = 1};
        static const size_t chunks[] = {1, 7, 4096, 0};
        for (size_t c = 0; c < 4; c++) {
            dsig_sign_ctx *sc;
            assert_int_equal(dsig_sign_init_ex(&sc, alg, k, &o), DSIG_OK);
            size_t step = chunks[c] ? chunks[c] : sizeof msg;
            for (size_t off = 0; off < sizeof msg; off += step)
                assert_int_equal(dsig_sign_update(sc, msg + off, sizeof msg - off < step ? sizeof msg - off
                                                                                        : step),
                                 DSIG_OK);
            uint8_t sig[4627];
            size_t sig_len;
            assert_int_equal(dsig_sign_final(sc, sig, sizeof sig, &sig_len), DSIG_OK);
            assert_int_equal(sig_len, p->sig_bytes);
            assert_memory_equal(sig, want, sig_len);
            dsig_verify_ctx *vc;
            assert_int_equal(dsig_verify_init_ex(&vc, alg, k, sig, sig_len, &o), DSIG_OK);
            for (size_t off = 0; off < sizeof msg; off += step)
                assert_int_equal(dsig_verify_update(vc, msg + off, sizeof msg - off < step ? sizeof msg - off
                                                                                          : step),
                                 DSIG_OK);
            assert_int_equal(dsig_verify_final(vc), DSIG_OK);
        }
        /* External μ: sign μ with the deterministic rnd, same signature. */
        uint8_t sig[4627];
        size_t sig_len;
        assert_int_equal(dsig_mldsa_sign_external_mu(k, mu, zero, sig, sizeof sig, &sig_len), DSIG_OK);
        assert_memory_equal(sig, want, sig_len);
        assert_int_equal(dsig_mldsa_verify_external_mu(k, mu, sig, sig_len), DSIG_OK);
        dsig_key_free(k);
        free(jwk);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acvp_siggen),
        cmocka_unit_test(test_acvp_sigver),
        cmocka_unit_test(test_wycheproof_sign_seed),
        cmocka_unit_test(test_wycheproof_sign_noseed),
        cmocka_unit_test(test_wycheproof_verify),
        cmocka_unit_test(test_jwk_roundtrip_thumbprint),
        cmocka_unit_test(test_jwk_rejects),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_jws),
        cmocka_unit_test(test_chunking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
