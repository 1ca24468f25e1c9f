/*
 * SLH-DSA through the library API (registry, one-shot, one-pass and two-pass streaming with options,
 * AKP JWK), proven against known answers: ACVP sigGen / sigVer vsId 53 and BoringSSL's siggen and
 * HashSLH-DSA pre-hash files, all driven through dsig_sign_ex / dsig_sign_init_two_pass /
 * dsig_verify_ex. The vectors are internal-interface (M' = M): the test-only interface hook of
 * slhdsa_key.h removes the M' prefix so the provider's whole path (R, H_msg, streaming) is compared
 * byte for byte; the external prefix itself is cross-checked against the core's dsig_slhdsa_sign_ext.
 *
 * Sampling: DSIG_SLH_SAMPLE=1 (ASan) signs the first ACVP test of each group (the two-pass chunkings
 * only for the f sets) and the first BoringSSL record; release signs every ACVP sigGen test, with
 * the three chunkings on the first test of each group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/internal.h"
#include "pq/slhdsa/slhdsa.h"
#include "pq/slhdsa/slhdsa_key.h"
#include "testutil.h"

#define SIG_MAX 49856

/* 1 when the run is sampled (sanitizers). */
static int sample_mode(void)
{
    return tu_env_flag("DSIG_SLH_SAMPLE");
}

/* Two-pass streaming signature with `chunk`-byte updates (0 = one update per pass); returns rc. */
static int sign_two_pass(const dsig_alg *alg, const dsig_key *key, const dsig_sign_opts *o,
                         const uint8_t *m, size_t mlen, size_t chunk, uint8_t *sig, size_t *sig_len)
{
    dsig_sign_ctx *c;
    int rc = dsig_sign_init_two_pass(&c, alg, key, o);
    if (rc)
        return rc;
    size_t step = chunk ? chunk : (mlen ? mlen : 1);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t off = 0; off < mlen; off += step)
            assert_int_equal(dsig_sign_update(c, m + off, mlen - off < step ? mlen - off : step), DSIG_OK);
        if (pass == 0)
            assert_int_equal(dsig_sign_next_pass(c), DSIG_OK);
    }
    return dsig_sign_final(c, sig, SIG_MAX, sig_len);
}

/* ---- registry ------------------------------------------------------------------------------- */

static const char *const sets[] = {
    "SLH-DSA-SHA2-128s",  "SLH-DSA-SHA2-128f",  "SLH-DSA-SHA2-192s",  "SLH-DSA-SHA2-192f",
    "SLH-DSA-SHA2-256s",  "SLH-DSA-SHA2-256f",  "SLH-DSA-SHAKE-128s", "SLH-DSA-SHAKE-128f",
    "SLH-DSA-SHAKE-192s", "SLH-DSA-SHAKE-192f", "SLH-DSA-SHAKE-256s", "SLH-DSA-SHAKE-256f",
};

/* Twelve descriptors with FIPS 205 names, Table 2 sizes, flags, baselines, security bits. */
static void test_registry(void **state)
{
    (void)state;
    for (size_t i = 0; i < 12; i++) {
        const dsig_alg *a = dsig_alg_by_name(sets[i]);
        const dsig_slhdsa_params *p = dsig_slhdsa_params_by_name(sets[i]);
        assert_non_null(a);
        assert_non_null(p);
        assert_string_equal(dsig_alg_family(a), "SLH-DSA");
        assert_string_equal(dsig_alg_kty(a), "AKP");
        assert_null(dsig_alg_curve(a));
        assert_int_equal(dsig_alg_sig_max(a), p->sig_bytes);
        assert_int_equal(dsig_alg_security_bits(a), p->category == 1 ? 128 : p->category == 3 ? 192 : 256);
        unsigned fl = dsig_alg_flags(a);
        assert_true((fl & DSIG_ALG_PQ) && (fl & DSIG_ALG_ONE_PASS) && (fl & DSIG_ALG_RANDOMIZED) &&
                    (fl & DSIG_ALG_OPTIONS) && (fl & DSIG_ALG_TWO_PASS));
        assert_false(fl & (DSIG_ALG_SYMMETRIC | DSIG_ALG_STATEFUL | DSIG_ALG_DETERMINISTIC_ONESHOT));
        const char *want = p->family == DSIG_SLHDSA_SHAKE ? "SHAKE256" : p->n == 16 ? "SHA-256" : "SHA-512";
        assert_string_equal(dsig_alg_baseline(a), want);
    }
    assert_null(dsig_alg_by_name("SLH-DSA-SHA2-128S")); /* case-sensitive JOSE names */
    /* Other algorithms have no two-pass signature. */
    const dsig_alg *es = dsig_alg_by_name("ES256");
    dsig_key *ek = NULL;
    dsig_sign_ctx *c = NULL;
    assert_int_equal(dsig_key_generate(&ek, es, NULL), DSIG_OK);
    assert_int_equal(dsig_sign_init_two_pass(&c, es, ek, NULL), DSIG_E_UNSUPPORTED);
    assert_null(c);
    dsig_key_free(ek);
}

/* ---- ACVP / BoringSSL known answers through the API ----------------------------------------- */

/* One known answer: one-shot dsig_sign_ex, then (when chunked) the two-pass streaming API with 1-,
 * 4096-byte and single updates; each byte-identical; and the signature verified one-pass. */
static void kat_sign(const dsig_alg *alg, const uint8_t *sk, size_t sk_len, const uint8_t *m,
                     size_t mlen, const uint8_t *addrnd, const uint8_t *want, size_t want_len,
                     int chunked)
{
    dsig_key *key = NULL;
    assert_int_equal(dsig_slhdsa_key_from_sk(&key, alg, sk, sk_len), DSIG_OK);
    assert_int_equal(dsig_slhdsa_key_set_test_interface(key, DSIG_SLHDSA_TEST_INTERNAL), DSIG_OK);
    dsig_sign_opts det = {.deterministic = 1};
    const dsig_sign_opts *o = addrnd ? NULL : &det;
    if (addrnd)
        assert_int_equal(dsig_slhdsa_key_set_test_rnd(key, addrnd), DSIG_OK);
    static uint8_t sig[SIG_MAX];
    size_t sig_len = 0;
    int rc = dsig_sign_ex(alg, key, m, mlen, sig, sizeof sig, &sig_len, o);
    if (rc != DSIG_OK || sig_len != want_len || memcmp(sig, want, want_len) != 0)
        fail_msg("%s one-shot: rc %d (%s), len %zu vs %zu", dsig_alg_name(alg), rc,
                 dsig_last_error_detail(), sig_len, want_len);
    assert_int_equal(dsig_verify(alg, key, m, mlen, sig, sig_len), DSIG_OK);
    if (chunked) {
        static const size_t chunks[] = {1, 4096, 0};
        for (size_t c = 0; c < 3; c++) {
            if (chunks[c] == 1 && mlen > 20000)
                continue;
            memset(sig, 0, sizeof sig);
            assert_int_equal(sign_two_pass(alg, key, o, m, mlen, chunks[c], sig, &sig_len), DSIG_OK);
            assert_int_equal(sig_len, want_len);
            assert_memory_equal(sig, want, want_len);
        }
    }
    dsig_key_free(key);
}

/* ACVP sigGen vsId 53: deterministic groups through the deterministic option, randomized groups
 * through the test rnd hook (additionalRandomness = opt_rand). */
static void test_acvp_siggen(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigGen-FIPS205/prompt.json");
    json_t *expect = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigGen-FIPS205/expectedResults.json");
    size_t gi, ti, n = 0, n_chunked = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), gi, g) {
        const dsig_alg *alg = dsig_alg_by_name(tu_str(g, "parameterSet"));
        assert_non_null(alg);
        const dsig_slhdsa_params *p = alg->params;
        int det = json_is_true(json_object_get(g, "deterministic"));
        json_t *eg = json_array_get(json_object_get(expect, "testGroups"), gi);
        assert_int_equal(json_integer_value(json_object_get(eg, "tgId")),
                         json_integer_value(json_object_get(g, "tgId")));
        const int fast = p->a * p->k > 0 && p->hp <= 4; /* the f sets: h' = 3 or 4 */
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            if (sample_mode() && ti >= 1)
                break;
            size_t lsk, lm, lr = 0, le;
            uint8_t *sk = tu_hex(tu_str(t, "sk"), &lsk), *m = tu_hex(tu_str(t, "message"), &lm);
            uint8_t *rnd = det ? NULL : tu_hex(tu_str(t, "additionalRandomness"), &lr);
            const json_t *e = tu_acvp_test(eg, json_integer_value(json_object_get(t, "tcId")));
            uint8_t *want = tu_hex(tu_str(e, "signature"), &le);
            int chunked = ti == 0 && (!sample_mode() || fast);
            kat_sign(alg, sk, lsk, m, lm, rnd, want, le, chunked);
            n++;
            n_chunked += chunked;
            free(sk), free(m), free(rnd), free(want);
        }
    }
    print_message("  ACVP sigGen: %zu signatures byte-exact through dsig_sign_ex, %zu also two-pass "
                  "streamed (1 / 4096 / one update)\n", n, n_chunked);
    assert_true(n >= 10);
    json_decref(prompt);
    json_decref(expect);
}

/* BoringSSL siggen files (priv, entropy, msg, sig), randomized internal signatures. */
static void boring_siggen(const char *file, const char *set)
{
    size_t len;
    char *text = tu_read_vector_file(file, &len), *cur = text;
    const dsig_alg *alg = dsig_alg_by_name(set);
    int count = 0;
    /* A record is blank-line separated "key: hex" lines. */
    char *priv = NULL, *ent = NULL, *msg = NULL, *sigh = NULL;
    while (cur && *cur && count < (sample_mode() ? 1 : 2)) {
        char *eol = strchr(cur, '\n');
        if (eol)
            *eol = '\0';
        char *line = cur;
        cur = eol ? eol + 1 : NULL;
        if (!strncmp(line, "priv: ", 6))
            priv = line + 6;
        else if (!strncmp(line, "entropy: ", 9))
            ent = line + 9;
        else if (!strncmp(line, "msg: ", 5))
            msg = line + 5;
        else if (!strncmp(line, "sig: ", 5))
            sigh = line + 5;
        if (priv && ent && msg && sigh) {
            size_t lk, le, lm, ls;
            uint8_t *sk = tu_hex(priv, &lk), *e = tu_hex(ent, &le), *m = tu_hex(msg, &lm);
            uint8_t *want = tu_hex(sigh, &ls);
            kat_sign(alg, sk, lk, m, lm, e, want, ls, count == 0);
            free(sk), free(e), free(m), free(want);
            priv = ent = msg = sigh = NULL;
            count++;
        }
    }
    assert_true(count >= 1);
    print_message("  %s BoringSSL siggen: %d signatures byte-exact\n", set, count);
    free(text);
}

static void test_boringssl_siggen(void **state)
{
    (void)state;
    boring_siggen("slhdsa/boringssl/slhdsa_sha2_128s_siggen.txt", "SLH-DSA-SHA2-128s");
    boring_siggen("slhdsa/boringssl/slhdsa_shake_256f_siggen.txt", "SLH-DSA-SHAKE-256f");
}

/* ACVP sigVer through JWK-imported public keys and the one-pass streaming verifier. */
static void test_acvp_sigver(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigVer-FIPS205/prompt.json");
    json_t *expect = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigVer-FIPS205/expectedResults.json");
    size_t gi, ti, n = 0, bad = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), gi, g) {
        const char *set = tu_str(g, "parameterSet");
        const dsig_alg *alg = dsig_alg_by_name(set);
        json_t *etests = json_object_get(json_array_get(json_object_get(expect, "testGroups"), gi), "tests");
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            size_t lpk, lm, ls;
            uint8_t *pk = tu_hex(tu_str(t, "pk"), &lpk), *m = tu_hex(tu_str(t, "message"), &lm);
            uint8_t *sig = tu_hex(tu_str(t, "signature"), &ls);
            int want = json_is_true(json_object_get(json_array_get(etests, ti), "testPassed"));
            assert_int_equal(json_integer_value(json_object_get(json_array_get(etests, ti), "tcId")),
                             json_integer_value(json_object_get(t, "tcId")));
            char *jwk = tu_akp_jwk(set, pk, lpk, NULL, 0);
            dsig_key *key = NULL;
            assert_int_equal(tu_jwk_import(jwk, &key), DSIG_OK);
            assert_int_equal(dsig_slhdsa_key_set_test_interface(key, DSIG_SLHDSA_TEST_INTERNAL), DSIG_OK);
            int rc = dsig_verify(alg, key, m, lm, sig, ls);
            if (want ? rc != DSIG_OK : rc != DSIG_E_VERIFY)
                fail_msg("%s sigVer tc %zu: expected %s, rc %d (%s)", set, ti, want ? "valid" : "invalid",
                         rc, dsig_last_error_detail());
            /* The external interface over the same bytes never verifies. */
            assert_int_equal(dsig_slhdsa_key_set_test_interface(key, DSIG_SLHDSA_TEST_EXTERNAL), DSIG_OK);
            assert_int_equal(dsig_verify(alg, key, m, lm, sig, ls), DSIG_E_VERIFY);
            n++;
            bad += !want;
            dsig_key_free(key);
            free(jwk), free(pk), free(m), free(sig);
        }
    }
    print_message("  ACVP sigVer: %zu cases through JWK keys (%zu invalid rejected)\n", n, bad);
    assert_true(n >= 10 && bad >= 5);
    json_decref(prompt);
    json_decref(expect);
}

/* BoringSSL HashSLH-DSA (SHA2-128s; msg = PH(M)): dsig_verify_ex with prehash + context. */
static void test_boringssl_prehash(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_read_vector_file("slhdsa/boringssl/slhdsa_sha2_128s_prehash.txt", &len), *cur = text;
    const dsig_alg *alg = dsig_alg_by_name("SLH-DSA-SHA2-128s");
    char *f[5] = {0};
    static const char *const names[5] = {"pub: ", "hash: ", "msg: ", "context:", "sig: "};
    int count = 0;
    while (cur && *cur) {
        char *eol = strchr(cur, '\n');
        if (eol)
            *eol = '\0';
        char *line = cur;
        cur = eol ? eol + 1 : NULL;
        for (int i = 0; i < 5; i++)
            if (!strncmp(line, names[i], strlen(names[i]))) {
                f[i] = line + strlen(names[i]);
                while (*f[i] == ' ')
                    f[i]++;
            }
        if (!(f[0] && f[1] && f[2] && f[3] && f[4]))
            continue;
        size_t lp, lm, lc, ls;
        uint8_t *pk = tu_hex(f[0], &lp), *m = tu_hex(f[2], &lm), *ctx = tu_hex(f[3], &lc);
        uint8_t *sig = tu_hex(f[4], &ls);
        char *jwk = tu_akp_jwk("SLH-DSA-SHA2-128s", pk, lp, NULL, 0);
        dsig_key *key = NULL;
        assert_int_equal(tu_jwk_import(jwk, &key), DSIG_OK);
        assert_int_equal(dsig_slhdsa_key_set_test_interface(key, DSIG_SLHDSA_TEST_PREHASHED), DSIG_OK);
        dsig_sign_opts o = {.context = ctx, .context_len = lc, .prehash = f[1]};
        assert_int_equal(dsig_verify_ex(alg, key, m, lm, sig, ls, &o), DSIG_OK);
        uint8_t other = 0x55;
        dsig_sign_opts o2 = {.context = &other, .context_len = lc ? 0 : 1, .prehash = f[1]};
        assert_int_equal(dsig_verify_ex(alg, key, m, lm, sig, ls, &o2), DSIG_E_VERIFY);
        dsig_sign_opts o3 = {.context = ctx, .context_len = lc};
        assert_int_equal(dsig_verify_ex(alg, key, m, lm, sig, ls, &o3), DSIG_E_VERIFY);
        print_message("  HashSLH-DSA %s |ctx| = %zu verified through dsig_verify_ex\n", f[1], lc);
        dsig_key_free(key);
        free(jwk), free(pk), free(m), free(ctx), free(sig);
        memset(f, 0, sizeof f);
        count++;
    }
    assert_int_equal(count, 2);
    free(text);
}

/* ---- external interface, modes --------------------------------------------------------------- */

/* Pure with context and HashSLH-DSA through the API equal the core's slh_sign / hash_slh_sign
 * (deterministic, and hedged with the test rnd); one-pass streaming signatures verify; one-pass
 * deterministic pure is refused, one-pass deterministic HashSLH-DSA is exact. */
static void test_external(void **state)
{
    (void)state;
    static const char *const fsets[] = {"SLH-DSA-SHA2-128f", "SLH-DSA-SHAKE-128f", "SLH-DSA-SHA2-192f"};
    static uint8_t msg[10000], sig[SIG_MAX], want[SIG_MAX];
    tu_fill(msg, sizeof msg, 5);
    const uint8_t ctx[] = "external ctx";
    for (size_t s = 0; s < 3; s++) {
        const dsig_alg *alg = dsig_alg_by_name(fsets[s]);
        const dsig_slhdsa_params *p = alg->params;
        static const uint8_t seed[32] = "slh-dsa api test seed 0123456789";
        dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
        dsig_key *k = NULL, *pub = NULL;
        assert_int_equal(dsig_key_generate(&k, alg, &kp), DSIG_OK);
        assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
        char *jwk;
        assert_int_equal(dsig_jwk_export(k, 1, &jwk, NULL), DSIG_OK);
        json_t *o = json_loads(jwk, 0, NULL);
        uint8_t sk[128];
        size_t sk_len;
        assert_int_equal(dsig_b64url_decode(json_string_value(json_object_get(o, "priv")),
                                            strlen(json_string_value(json_object_get(o, "priv"))), sk,
                                            sizeof sk, &sk_len), DSIG_OK);
        assert_int_equal(sk_len, p->sk_bytes);
        json_decref(o);
        dsig_free(jwk);
        size_t sig_len;
        const dsig_slhdsa_prehash *sha256 = dsig_slhdsa_prehash_find("SHA-256");
        const dsig_slhdsa_prehash *shake = dsig_slhdsa_prehash_find("SHAKE128");

        /* Deterministic pure with context: one-shot and two-pass equal Algorithm 22. */
        dsig_sign_opts det = {.context = ctx, .context_len = sizeof ctx - 1, .deterministic = 1};
        assert_int_equal(dsig_slhdsa_sign_ext(p, sk, msg, sizeof msg, ctx, sizeof ctx - 1, NULL, NULL,
                                              want), DSIG_OK);
        assert_int_equal(dsig_sign_ex(alg, k, msg, sizeof msg, sig, sizeof sig, &sig_len, &det), DSIG_OK);
        assert_memory_equal(sig, want, p->sig_bytes);
        assert_int_equal(sign_two_pass(alg, k, &det, msg, sizeof msg, 777, sig, &sig_len), DSIG_OK);
        assert_memory_equal(sig, want, p->sig_bytes);
        assert_int_equal(dsig_verify_ex(alg, pub, msg, sizeof msg, sig, sig_len, &det), DSIG_OK);
        assert_int_equal(dsig_verify(alg, pub, msg, sizeof msg, sig, sig_len), DSIG_E_VERIFY);
        /* One-pass deterministic pure: refused with a clear error. */
        dsig_sign_ctx *c = NULL;
        assert_int_equal(dsig_sign_init_ex(&c, alg, k, &det), DSIG_E_UNSUPPORTED);
        assert_non_null(strstr(dsig_last_error_detail(), "two-pass"));
        assert_null(c);

        /* Hedged, test rnd: one-shot and two-pass = Algorithm 22 with that addrnd. */
        uint8_t rnd[32];
        tu_fill(rnd, sizeof rnd, 99 + s);
        assert_int_equal(dsig_slhdsa_key_set_test_rnd(k, rnd), DSIG_OK);
        assert_int_equal(dsig_slhdsa_sign_ext(p, sk, msg, sizeof msg, NULL, 0, NULL, rnd, want), DSIG_OK);
        assert_int_equal(dsig_sign(alg, k, msg, sizeof msg, sig, sizeof sig, &sig_len), DSIG_OK);
        assert_memory_equal(sig, want, p->sig_bytes);
        assert_int_equal(sign_two_pass(alg, k, NULL, msg, sizeof msg, 0, sig, &sig_len), DSIG_OK);
        assert_memory_equal(sig, want, p->sig_bytes);
        /* One-pass streaming: R = PRF_msg(SK.prf, rnd, ε); verifies, differs from the exact one. */
        assert_int_equal(tu_sign_chunked(alg, k, msg, sizeof msg, 1000, sig, sizeof sig, &sig_len), DSIG_OK);
        assert_int_equal(dsig_verify(alg, pub, msg, sizeof msg, sig, sig_len), DSIG_OK);
        assert_memory_not_equal(sig, want, p->sig_bytes);
        uint8_t r1[32];
        assert_int_equal(dsig_slhdsa_r_onepass(p, sk, rnd, r1), DSIG_OK);
        assert_memory_equal(sig, r1, p->n);
        assert_int_equal(dsig_slhdsa_key_set_test_rnd(k, NULL), DSIG_OK);
        /* Fresh randomness: two hedged signatures differ. */
        uint8_t s2[SIG_MAX];
        size_t l2;
        assert_int_equal(dsig_sign(alg, k, msg, 100, sig, sizeof sig, &sig_len), DSIG_OK);
        assert_int_equal(dsig_sign(alg, k, msg, 100, s2, sizeof s2, &l2), DSIG_OK);
        assert_memory_not_equal(sig, s2, p->n);

        /* HashSLH-DSA deterministic: one-shot, one-pass streaming and two-pass all = Algorithm 23. */
        dsig_sign_opts ph = {.context = ctx, .context_len = 3, .deterministic = 1, .prehash = "SHA-256"};
        assert_int_equal(dsig_slhdsa_sign_ext(p, sk, msg, sizeof msg, ctx, 3, sha256, NULL, want), DSIG_OK);
        assert_int_equal(dsig_sign_ex(alg, k, msg, sizeof msg, sig, sizeof sig, &sig_len, &ph), DSIG_OK);
        assert_memory_equal(sig, want, p->sig_bytes);
        assert_int_equal(dsig_sign_init_ex(&c, alg, k, &ph), DSIG_OK);
        assert_int_equal(dsig_sign_update(c, msg, 5), DSIG_OK);
        assert_int_equal(dsig_sign_update(c, msg + 5, sizeof msg - 5), DSIG_OK);
        assert_int_equal(dsig_sign_final(c, sig, sizeof sig, &sig_len), DSIG_OK);
        assert_memory_equal(sig, want, p->sig_bytes);
        assert_int_equal(sign_two_pass(alg, k, &ph, msg, sizeof msg, 4096, sig, &sig_len), DSIG_OK);
        assert_memory_equal(sig, want, p->sig_bytes);
        assert_int_equal(dsig_verify_ex(alg, pub, msg, sizeof msg, sig, sig_len, &ph), DSIG_OK);
        dsig_sign_opts ph2 = {.context = ctx, .context_len = 3, .prehash = "SHA-512"};
        assert_int_equal(dsig_verify_ex(alg, pub, msg, sizeof msg, sig, sig_len, &ph2), DSIG_E_VERIFY);
        /* An XOF pre-hash (SHAKE128, 256-bit output). */
        dsig_sign_opts phx = {.deterministic = 1, .prehash = "SHAKE128"};
        assert_int_equal(dsig_slhdsa_sign_ext(p, sk, msg, 333, NULL, 0, shake, NULL, want), DSIG_OK);
        assert_int_equal(dsig_sign_ex(alg, k, msg, 333, sig, sizeof sig, &sig_len, &phx), DSIG_OK);
        assert_memory_equal(sig, want, p->sig_bytes);
        assert_int_equal(dsig_verify_ex(alg, pub, msg, 333, sig, sig_len, &phx), DSIG_OK);
        /* Two-pass HashSLH-DSA notices a payload that changed between the passes. */
        assert_int_equal(dsig_sign_init_two_pass(&c, alg, k, &ph), DSIG_OK);
        assert_int_equal(dsig_sign_update(c, msg, 100), DSIG_OK);
        assert_int_equal(dsig_sign_next_pass(c), DSIG_OK);
        assert_int_equal(dsig_sign_update(c, msg + 1, 100), DSIG_OK);
        assert_int_equal(dsig_sign_final(c, sig, sizeof sig, &sig_len), DSIG_E_STATE);
        dsig_memzero(sk, sizeof sk);
        dsig_key_free(k);
        dsig_key_free(pub);
    }
}

/* The core's two-pass bookkeeping: pass order, equal totals, contexts without two passes. */
static void test_two_pass_state(void **state)
{
    (void)state;
    const dsig_alg *alg = dsig_alg_by_name("SLH-DSA-SHAKE-128f");
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, alg, NULL), DSIG_OK);
    uint8_t sig[SIG_MAX];
    size_t sig_len;
    dsig_sign_ctx *c;
    /* Unequal totals. */
    assert_int_equal(dsig_sign_init_two_pass(&c, alg, k, NULL), DSIG_OK);
    assert_int_equal(dsig_sign_update(c, "abc", 3), DSIG_OK);
    assert_int_equal(dsig_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_sign_total(c), 0);
    assert_int_equal(dsig_sign_update(c, "ab", 2), DSIG_OK);
    assert_int_equal(dsig_sign_final(c, sig, sizeof sig, &sig_len), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "pass 2 fed 2 bytes, pass 1 fed 3"));
    /* Final in pass 1; next_pass twice. */
    assert_int_equal(dsig_sign_init_two_pass(&c, alg, k, NULL), DSIG_OK);
    assert_int_equal(dsig_sign_final(c, sig, sizeof sig, &sig_len), DSIG_E_STATE);
    assert_int_equal(dsig_sign_init_two_pass(&c, alg, k, NULL), DSIG_OK);
    assert_int_equal(dsig_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_sign_next_pass(c), DSIG_E_STATE);
    dsig_sign_abort(c);
    /* next_pass on a one-pass context. */
    assert_int_equal(dsig_sign_init(&c, alg, k), DSIG_OK);
    assert_int_equal(dsig_sign_next_pass(c), DSIG_E_STATE);
    dsig_sign_abort(c);
    assert_int_equal(dsig_sign_next_pass(NULL), DSIG_E_ARG);
    /* Empty payload both passes: valid. */
    dsig_key *pub = NULL;
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    assert_int_equal(dsig_sign_init_two_pass(&c, alg, k, NULL), DSIG_OK);
    assert_int_equal(dsig_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_sign_final(c, sig, sizeof sig, &sig_len), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pub, "", 0, sig, sig_len), DSIG_OK);
    /* A public key cannot start two-pass signing. */
    assert_int_equal(dsig_sign_init_two_pass(&c, alg, pub, NULL), DSIG_E_NO_PRIVATE);
    dsig_key_free(pub);
    dsig_key_free(k);
}

/* ---- keys, JWK, refusals ---------------------------------------------------------------------- */

/* Seeded keygen reproducible; export → import → export identical; thumbprint = SHA-256 of
 * {"alg","kty","pub"}; public copy has no priv; PEM refused. */
static void test_jwk_roundtrip(void **state)
{
    (void)state;
    static const char *const some[] = {"SLH-DSA-SHA2-128f", "SLH-DSA-SHAKE-128f", "SLH-DSA-SHA2-256f",
                                       "SLH-DSA-SHAKE-192f"};
    static const uint8_t seed[32] = "dsig slhdsa api test seed 01234";
    for (size_t s = 0; s < 4; s++) {
        const dsig_alg *alg = dsig_alg_by_name(some[s]);
        dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
        dsig_key *k = NULL, *k2 = NULL, *back = NULL, *pub = NULL;
        assert_int_equal(dsig_key_generate(&k, alg, &kp), DSIG_OK);
        assert_int_equal(dsig_key_generate(&k2, alg, &kp), DSIG_OK);
        char *j1, *j2, *j3, *jp;
        assert_int_equal(dsig_jwk_export(k, 1, &j1, NULL), DSIG_OK);
        assert_int_equal(dsig_jwk_export(k2, 1, &j2, NULL), DSIG_OK);
        assert_string_equal(j1, j2);
        char alg_member[48];
        snprintf(alg_member, sizeof alg_member, "\"alg\":\"%s\"", some[s]);
        assert_non_null(strstr(j1, alg_member));
        assert_non_null(strstr(j1, "\"kty\":\"AKP\""));
        assert_int_equal(tu_jwk_import(j1, &back), DSIG_OK);
        assert_true(dsig_key_has_private(back));
        assert_ptr_equal(dsig_key_alg(back), alg);
        assert_int_equal(dsig_jwk_export(back, 1, &j3, NULL), DSIG_OK);
        assert_string_equal(j1, j3);
        assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
        assert_int_equal(dsig_jwk_export(pub, 0, &jp, NULL), DSIG_OK);
        assert_null(strstr(jp, "priv"));
        json_t *o = json_loads(jp, 0, NULL);
        const dsig_slhdsa_params *p = alg->params;
        uint8_t pk[64];
        size_t pk_len;
        const char *pubs = json_string_value(json_object_get(o, "pub"));
        assert_int_equal(dsig_b64url_decode(pubs, strlen(pubs), pk, sizeof pk, &pk_len), DSIG_OK);
        assert_int_equal(pk_len, p->pk_bytes);
        char canon[256];
        snprintf(canon, sizeof canon, "{\"alg\":\"%s\",\"kty\":\"AKP\",\"pub\":\"%s\"}", some[s], pubs);
        uint8_t md[32];
        unsigned mdlen;
        assert_true(EVP_Digest(canon, strlen(canon), md, &mdlen, EVP_sha256(), NULL));
        char want[DSIG_THUMBPRINT_LEN], got[DSIG_THUMBPRINT_LEN];
        dsig_b64url_encode(want, md, 32);
        assert_int_equal(dsig_jwk_thumbprint(k, got), DSIG_OK);
        assert_string_equal(got, want);
        json_decref(o);
        /* The seeded key's sk is keygen_internal of its first 3n bytes (Algorithm 18). */
        o = json_loads(j1, 0, NULL);
        const char *privs = json_string_value(json_object_get(o, "priv"));
        uint8_t sk[128], sk2[128], pk2[64];
        size_t sk_len;
        assert_int_equal(dsig_b64url_decode(privs, strlen(privs), sk, sizeof sk, &sk_len), DSIG_OK);
        assert_int_equal(sk_len, p->sk_bytes);
        assert_int_equal(dsig_slhdsa_keygen_internal(p, sk, sk + p->n, sk + 2 * p->n, pk2, sk2), DSIG_OK);
        assert_memory_equal(sk2, sk, sk_len);
        assert_memory_equal(pk2, pk, pk_len);
        json_decref(o);
        char *pem = NULL;
        assert_int_equal(dsig_key_export_pem(k, 0, &pem, NULL), DSIG_E_UNSUPPORTED);
        dsig_free(j1), dsig_free(j2), dsig_free(j3), dsig_free(jp);
        dsig_key_free(k), dsig_key_free(k2), dsig_key_free(back), dsig_key_free(pub);
    }
}

/* ACVP keyGen through JWK import: priv = the vector's sk, pub = pk — accepted; then bad JWKs. */
static void test_jwk_rejects(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("slhdsa/acvp/SLH-DSA-keyGen-FIPS205/prompt.json");
    json_t *expect = tu_load_json("slhdsa/acvp/SLH-DSA-keyGen-FIPS205/expectedResults.json");
    size_t gi, n = 0;
    json_t *g;
    json_array_foreach(json_object_get(expect, "testGroups"), gi, g) {
        const char *set = tu_str(json_array_get(json_object_get(prompt, "testGroups"), gi), "parameterSet");
        json_t *t = json_array_get(json_object_get(g, "tests"), 0);
        size_t lsk, lpk;
        uint8_t *sk = tu_hex(tu_str(t, "sk"), &lsk), *pk = tu_hex(tu_str(t, "pk"), &lpk);
        char *j = tu_akp_jwk(set, pk, lpk, sk, lsk);
        dsig_key *k = NULL;
        assert_int_equal(tu_jwk_import(j, &k), DSIG_OK);
        dsig_key_free(k);
        free(j);
        n++;
        if (strcmp(set, "SLH-DSA-SHA2-128f") == 0) {
            const size_t nb = 16;
            j = tu_akp_jwk(set, pk, lpk - 1, NULL, 0); /* short pub */
            assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
            assert_non_null(strstr(dsig_last_error_detail(), "32 bytes, got 31"));
            free(j);
            j = tu_akp_jwk(set, pk, lpk, sk, lsk - 1); /* short priv */
            assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
            assert_non_null(strstr(dsig_last_error_detail(), "64 bytes, got 63"));
            free(j);
            j = tu_akp_jwk("SLH-DSA-SHA2-192f", pk, lpk, NULL, 0); /* a 128 key claimed as 192 */
            assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
            free(j);
            uint8_t pk2[32], sk2[64];
            memcpy(pk2, pk, 32);
            pk2[31] ^= 1; /* pub differs from priv's public half */
            j = tu_akp_jwk(set, pk2, 32, sk, lsk);
            assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
            assert_non_null(strstr(dsig_last_error_detail(), "does not match"));
            free(j);
            memcpy(sk2, sk, 64);
            sk2[63] ^= 1; /* consistent pub/priv halves, but a PK.root that SK.seed does not give */
            j = tu_akp_jwk(set, pk2, 32, sk2, 64);
            assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
            assert_non_null(strstr(dsig_last_error_detail(), "PK.root"));
            free(j);
            memcpy(sk2, sk, 64);
            sk2[0] ^= 1; /* another SK.seed: the recomputed root differs */
            j = tu_akp_jwk(set, pk, 32, sk2, 64);
            assert_int_equal(tu_jwk_import(j, &k), DSIG_E_KEY);
            free(j);
            (void)nb;
            j = tu_akp_jwk("SLH-DSA-SHA2-128X", pk, lpk, NULL, 0);
            assert_int_equal(tu_jwk_import(j, &k), DSIG_E_UNSUPPORTED);
            free(j);
            const char *no_pub = "{\"kty\":\"AKP\",\"alg\":\"SLH-DSA-SHA2-128f\",\"priv\":\"AAAA\"}";
            assert_int_equal(tu_jwk_import(no_pub, &k), DSIG_E_KEY);
            assert_null(k);
        }
        free(sk), free(pk);
    }
    assert_int_equal(n, 12);
    json_decref(prompt);
    json_decref(expect);
}

/* Lengths, buffers, keys, options: refused with the right code. */
static void test_refusals(void **state)
{
    (void)state;
    const dsig_alg *a = dsig_alg_by_name("SLH-DSA-SHA2-128f");
    dsig_key *k = NULL, *pub = NULL;
    assert_int_equal(dsig_key_generate(&k, a, NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    static uint8_t sig[SIG_MAX], longer[17089];
    size_t sig_len;
    const uint8_t msg[] = "message";
    assert_int_equal(dsig_sign(a, k, msg, 7, sig, sizeof sig, &sig_len), DSIG_OK);
    assert_int_equal(sig_len, 17088);
    assert_int_equal(dsig_verify(a, pub, msg, 7, sig, sig_len), DSIG_OK);
    assert_int_equal(dsig_verify(a, pub, msg, 7, sig, sig_len - 1), DSIG_E_VERIFY);
    assert_non_null(strstr(dsig_last_error_detail(), "17088"));
    assert_int_equal(dsig_verify(a, pub, msg, 7, sig, 0), DSIG_E_VERIFY);
    memcpy(longer, sig, sig_len);
    assert_int_equal(dsig_verify(a, pub, msg, 7, longer, sizeof longer), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(a, pub, msg, 6, sig, sig_len), DSIG_E_VERIFY);
    sig[100] ^= 1;
    assert_int_equal(dsig_verify(a, pub, msg, 7, sig, sig_len), DSIG_E_VERIFY);
    assert_int_equal(dsig_sign(a, k, msg, 7, sig, 17087, &sig_len), DSIG_E_BUFFER);
    assert_int_equal(dsig_sign(a, pub, msg, 7, sig, sizeof sig, &sig_len), DSIG_E_NO_PRIVATE);
    dsig_sign_ctx *c;
    assert_int_equal(dsig_sign_init(&c, a, k), DSIG_OK);
    assert_int_equal(dsig_sign_final(c, sig, 100, &sig_len), DSIG_E_BUFFER);
    assert_int_equal(sig_len, 17088);
    dsig_sign_abort(c); /* a too-small buffer keeps the context */
    uint8_t ctx[256] = {0};
    dsig_sign_opts big = {.context = ctx, .context_len = 256};
    assert_int_equal(dsig_sign_ex(a, k, msg, 7, sig, sizeof sig, &sig_len, &big), DSIG_E_ARG);
    assert_int_equal(dsig_verify_ex(a, pub, msg, 7, sig, 17088, &big), DSIG_E_ARG);
    dsig_sign_opts bad = {.prehash = "MD5"};
    assert_int_equal(dsig_sign_ex(a, k, msg, 7, sig, sizeof sig, &sig_len, &bad), DSIG_E_UNSUPPORTED);
    assert_non_null(strstr(dsig_last_error_detail(), "MD5"));
    assert_int_equal(dsig_sign_init_two_pass(&c, a, k, &bad), DSIG_E_UNSUPPORTED);
    /* A key of another set. */
    dsig_key *k2 = NULL;
    assert_int_equal(dsig_key_generate(&k2, dsig_alg_by_name("SLH-DSA-SHAKE-128f"), NULL), DSIG_OK);
    assert_int_not_equal(dsig_sign(a, k2, msg, 7, sig, sizeof sig, &sig_len), DSIG_OK);
    /* JWS: one pass, so deterministic (pure) is refused; hedged JWS verifies. */
    dsig_sign_opts det = {.deterministic = 1};
    dsig_jws_sign_opts so = {.format = DSIG_FMT_JWS, .sign_opts = &det};
    dsig_jws_sign_ctx *jc = NULL;
    assert_int_equal(dsig_jws_sign_init(&jc, NULL, k, &so), DSIG_E_UNSUPPORTED);
    so.sign_opts = NULL;
    char *out;
    size_t out_len;
    assert_int_equal(dsig_jws_sign_init(&jc, NULL, k, &so), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(jc, "payload", 7), DSIG_OK);
    assert_int_equal(dsig_jws_sign_final(jc, &out, &out_len), DSIG_OK);
    dsig_jws_verify_ctx *v = NULL;
    assert_int_equal(dsig_jws_verify_init(&v, pub, out, out_len, NULL), DSIG_OK);
    assert_int_equal(dsig_jws_verify_update(v, "payload", 7), DSIG_OK);
    assert_int_equal(dsig_jws_verify_final(v), DSIG_OK);
    dsig_free(out);
    dsig_key_free(k2);
    dsig_key_free(k);
    dsig_key_free(pub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_acvp_siggen),
        cmocka_unit_test(test_boringssl_siggen),
        cmocka_unit_test(test_acvp_sigver),
        cmocka_unit_test(test_boringssl_prehash),
        cmocka_unit_test(test_external),
        cmocka_unit_test(test_two_pass_state),
        cmocka_unit_test(test_jwk_roundtrip),
        cmocka_unit_test(test_jwk_rejects),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
