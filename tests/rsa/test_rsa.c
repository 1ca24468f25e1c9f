/*
 * RSA: RS256/384/512 and PS256/384/512 against Wycheproof (PKCS#1 v1.5 generation + verification, PSS
 * verification) and NIST ACVP (FIPS 186-5 SigVer / SigGen results) vectors; seeded key generation;
 * JWK and PEM import/export with their validation; streaming round trips and tampering.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rsaec_util.h"

static const char *const RSA_PUB_NAMES[] = {"n", "e"};
static const char *const RSA_PRIV_NAMES[] = {"n", "e", "d", "p", "q", "dp", "dq", "qi"};

static const dsig_alg *alg(const char *name)
{
    const dsig_alg *a = dsig_alg_by_name(name);
    assert_non_null(a);
    return a;
}

/* The RS or PS algorithm for a hash name ("SHA-256"...), NULL if we do not implement it. */
static const dsig_alg *alg_for(const char *sha, int pss)
{
    const char *suffix = strcmp(sha, "SHA-256") == 0   ? "256"
                         : strcmp(sha, "SHA-384") == 0 ? "384"
                         : strcmp(sha, "SHA-512") == 0 ? "512"
                                                       : NULL;
    if (!suffix)
        return NULL;
    char name[8];
    snprintf(name, sizeof name, "%s%s", pss ? "PS" : "RS", suffix);
    return alg(name);
}

static size_t hash_len(const char *sha)
{
    return strcmp(sha, "SHA-256") == 0 ? 32 : strcmp(sha, "SHA-384") == 0 ? 48 : 64;
}

/* One Wycheproof RSA verification file; returns the number of tests run. `pss_strict`: PSS groups must
 * use MGF1 with the same hash and sLen = hash length; `expect_reject`: every test must give VERIFY. */
static size_t run_wycheproof_verify(const char *file, int pss, int expect_reject)
{
    json_t *root = tu_load_json(file);
    size_t ran = 0, i, j;
    json_t *g, *t;
    json_array_foreach(json_object_get(root, "testGroups"), i, g)
    {
        const char *sha = tu_str(g, "sha");
        const dsig_alg *a = alg_for(sha, pss);
        if (!a)
            continue;
        if (pss && !expect_reject) {
            if (strcmp(tu_str(g, "mgf"), "MGF1") != 0 || strcmp(tu_str(g, "mgfSha"), sha) != 0 ||
                (size_t)json_integer_value(json_object_get(g, "sLen")) != hash_len(sha))
                continue;
        }
        json_t *pk = json_object_get(g, "publicKey");
        const char *hex[] = {tu_str(pk, "modulus"), tu_str(pk, "publicExponent")};
        dsig_key *key = NULL;
        int rc = rt_key_hex(&dsig_keytype_rsa, RSA_PUB_NAMES, hex, 2, 0, &key);
        if (json_integer_value(json_object_get(g, "keySize")) < 2048) {
            assert_int_equal(rc, DSIG_E_KEY_WEAK);
            continue;
        }
        assert_int_equal(rc, DSIG_OK);
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            size_t ml = 0, sl = 0;
            uint8_t *msg = tu_hex(tu_str(t, "msg"), &ml);
            uint8_t *sig = tu_hex(tu_str(t, "sig"), &sl);
            int v = dsig_verify(a, key, msg, ml, sig, sl);
            uint8_t dg[64];
            size_t dl = rt_digest(sha, msg, ml, dg);
            int vd = dsig_verify_digest(a, key, sha, dg, dl, sig, sl);
            if ((vd == DSIG_OK) != (v == DSIG_OK) || (vd != DSIG_OK && vd != DSIG_E_VERIFY))
                fail_msg("%s tcId %d: dsig_verify_digest %d, dsig_verify %d (%s)", file,
                         (int)json_integer_value(json_object_get(t, "tcId")), vd, v, dsig_last_error_detail());
            const char *res = tu_str(t, "result");
            if (expect_reject) {
                if (strcmp(res, "valid") != 0)
                    goto next; /* some invalid ones are "changed to sLen = hLen" and do verify */
                res = "invalid";
            }
            if (!rt_expect(res, v))
                fail_msg("%s tcId %d (%s, %s): expected %s, got %d (%s)", file,
                         (int)json_integer_value(json_object_get(t, "tcId")), dsig_alg_name(a),
                         tu_str(t, "comment"), res, v, dsig_last_error_detail());
            ran++;
        next:
            free(msg);
            free(sig);
        }
        dsig_key_free(key);
    }
    json_decref(root);
    return ran;
}

static void test_wycheproof_pkcs1_verify(void **state)
{
    (void)state;
    static const char *const files[] = {
        "rsa/wycheproof/rsa_signature_2048_sha256_test.json",
        "rsa/wycheproof/rsa_signature_2048_sha384_test.json",
        "rsa/wycheproof/rsa_signature_2048_sha512_test.json",
        "rsa/wycheproof/rsa_signature_3072_sha256_test.json",
        "rsa/wycheproof/rsa_signature_3072_sha384_test.json",
        "rsa/wycheproof/rsa_signature_3072_sha512_test.json",
        "rsa/wycheproof/rsa_signature_4096_sha256_test.json",
        "rsa/wycheproof/rsa_signature_4096_sha384_test.json",
        "rsa/wycheproof/rsa_signature_4096_sha512_test.json",
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        total += run_wycheproof_verify(files[i], 0, 0);
    assert_true(total > 2000);
}

static void test_wycheproof_pss_verify(void **state)
{
    (void)state;
    static const char *const files[] = {
        "rsa/wycheproof/rsa_pss_2048_sha256_mgf1_32_test.json",
        "rsa/wycheproof/rsa_pss_2048_sha256_mgf1_32_params_test.json",
        "rsa/wycheproof/rsa_pss_2048_sha384_mgf1_48_test.json",
        "rsa/wycheproof/rsa_pss_3072_sha256_mgf1_32_test.json",
        "rsa/wycheproof/rsa_pss_4096_sha256_mgf1_32_test.json",
        "rsa/wycheproof/rsa_pss_4096_sha384_mgf1_48_test.json",
        "rsa/wycheproof/rsa_pss_4096_sha512_mgf1_64_test.json",
        "rsa/wycheproof/rsa_pss_misc_test.json", /* only groups matching our parameters */
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        total += run_wycheproof_verify(files[i], 1, 0);
    assert_true(total > 800);
    /* sLen = 0 signatures (valid for that parameter set) must all be refused: we demand sLen = hLen */
    assert_true(run_wycheproof_verify("rsa/wycheproof/rsa_pss_2048_sha256_mgf1_0_test.json", 1, 1) > 50);
}

/* Wycheproof PKCS#1 v1.5 generation: with the private key, our signature must be byte-identical. */
static void test_wycheproof_pkcs1_sign(void **state)
{
    (void)state;
    static const char *const files[] = {
        "rsa/wycheproof/rsa_pkcs1_2048_sig_gen_test.json",
        "rsa/wycheproof/rsa_pkcs1_3072_sig_gen_test.json",
        "rsa/wycheproof/rsa_pkcs1_4096_sig_gen_test.json",
    };
    size_t exact = 0;
    for (size_t f = 0; f < 3; f++) {
        json_t *root = tu_load_json(files[f]);
        size_t i, j;
        json_t *g, *t;
        json_array_foreach(json_object_get(root, "testGroups"), i, g)
        {
            const dsig_alg *a = alg_for(tu_str(g, "sha"), 0);
            if (!a)
                continue;
            json_t *pk = json_object_get(g, "privateKey");
            /* these files give (n, e, d) only: the non-CRT private key path */
            static const char *const fields[] = {"modulus",   "publicExponent", "privateExponent",
                                                 "prime1",    "prime2",         "exponent1",
                                                 "exponent2", "coefficient"};
            const char *hex[8];
            for (size_t k = 0; k < 8; k++)
                hex[k] = json_string_value(json_object_get(pk, fields[k]));
            dsig_key *key = NULL;
            int rc = rt_key_hex(&dsig_keytype_rsa, RSA_PRIV_NAMES, hex, 8, 0, &key);
            if (rc != DSIG_OK)
                fail_msg("%s group %zu: key import failed: %s", files[f], i, dsig_last_error_detail());
            assert_true(dsig_key_has_private(key));
            /* the public key in PEM form (made by Wycheproof, not by us) imports to the same n */
            const char *pem = tu_str(g, "keyPem");
            dsig_key *pub = NULL;
            assert_int_equal(dsig_key_import_pem(&pub, pem, strlen(pem)), DSIG_OK);
            assert_int_equal(dsig_key_bits(pub), dsig_key_bits(key));
            json_array_foreach(json_object_get(g, "tests"), j, t)
            {
                size_t ml, sl, ol;
                uint8_t *msg = tu_hex(tu_str(t, "msg"), &ml);
                uint8_t *want = tu_hex(tu_str(t, "sig"), &sl);
                uint8_t out[1024];
                assert_int_equal(dsig_sign(a, key, msg, ml, out, sizeof out, &ol), DSIG_OK);
                assert_int_equal(ol, sl);
                assert_memory_equal(out, want, sl);
                assert_int_equal(dsig_verify(a, pub, msg, ml, want, sl), DSIG_OK);
                /* the same bytes from the digest alone (PKCS#1 v1.5 is deterministic) */
                uint8_t dg[64], out2[1024];
                size_t dl = rt_digest(tu_str(g, "sha"), msg, ml, dg), ol2 = 0;
                assert_int_equal(dsig_sign_digest(a, key, tu_str(g, "sha"), dg, dl, out2, sizeof out2, &ol2),
                                 DSIG_OK);
                assert_int_equal(ol2, sl);
                assert_memory_equal(out2, want, sl);
                assert_int_equal(dsig_verify_digest(a, pub, tu_str(g, "sha"), dg, dl, want, sl), DSIG_OK);
                exact++;
                free(msg);
                free(want);
            }
            dsig_key_free(key);
            dsig_key_free(pub);
        }
        json_decref(root);
    }
    assert_true(exact >= 30);
}

/* ACVP RSA SigVer (FIPS 186-5): the PKCS#1 v1.5 SHA2-256 groups are RS256 (the PSS groups use SHAKE or
 * SHA-3, which JOSE does not define). */
static void test_acvp_sigver(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("rsa/acvp/RSA-SigVer-FIPS186-5/prompt.json");
    json_t *exp = tu_load_json("rsa/acvp/RSA-SigVer-FIPS186-5/expectedResults.json");
    size_t i, j, ran = 0, passed = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        if (strcmp(tu_str(g, "sigType"), "pkcs1v1.5") != 0 || strcmp(tu_str(g, "hashAlg"), "SHA2-256"))
            continue;
        const char *hex[] = {tu_str(g, "n"), tu_str(g, "e")};
        dsig_key *key = NULL;
        assert_int_equal(rt_key_hex(&dsig_keytype_rsa, RSA_PUB_NAMES, hex, 2, 0, &key), DSIG_OK);
        json_t *eg = acvp_group(exp, acvp_id(g, "tgId"));
        assert_non_null(eg);
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_t *et = acvp_test(eg, acvp_id(t, "tcId"));
            assert_non_null(et);
            json_t *tp = json_object_get(et, "testPassed");
            int want = json_is_boolean(tp) ? json_is_true(tp) : strcmp(json_string_value(tp), "True") == 0;
            size_t ml = 0, sl = 0;
            uint8_t *msg = tu_hex(tu_str(t, "message"), &ml);
            uint8_t *sig = rt_hex_width(tu_str(t, "signature"), (dsig_key_bits(key) + 7) / 8, &sl);
            int v = sig ? dsig_verify(alg("RS256"), key, msg, ml, sig, sl) : DSIG_E_VERIFY;
            if (v != (want ? DSIG_OK : DSIG_E_VERIFY))
                fail_msg("ACVP RSA SigVer tg %lld tc %lld: want %d got %d (%s)",
                         (long long)acvp_id(g, "tgId"), (long long)acvp_id(t, "tcId"), want, v,
                         dsig_last_error_detail());
            passed += want;
            ran++;
            free(msg);
            free(sig);
        }
        dsig_key_free(key);
    }
    assert_true(ran >= 12);
    assert_true(passed > 0 && passed < ran);
    json_decref(prompt);
    json_decref(exp);

    /* ACVP SigGen: the server's PKCS#1 v1.5 SHA2-256 signatures verify under its (n, e). */
    prompt = tu_load_json("rsa/acvp/RSA-SigGen-FIPS186-5/prompt.json");
    exp = tu_load_json("rsa/acvp/RSA-SigGen-FIPS186-5/expectedResults.json");
    ran = 0;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        if (strcmp(tu_str(g, "sigType"), "pkcs1v1.5") != 0 || strcmp(tu_str(g, "hashAlg"), "SHA2-256"))
            continue;
        json_t *eg = acvp_group(exp, acvp_id(g, "tgId"));
        const char *hex[] = {tu_str(eg, "n"), tu_str(eg, "e")};
        dsig_key *key = NULL;
        assert_int_equal(rt_key_hex(&dsig_keytype_rsa, RSA_PUB_NAMES, hex, 2, 0, &key), DSIG_OK);
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_t *et = acvp_test(eg, acvp_id(t, "tcId"));
            size_t ml = 0, sl = 0;
            uint8_t *msg = tu_hex(tu_str(t, "message"), &ml);
            uint8_t *sig = rt_hex_width(tu_str(et, "signature"), (dsig_key_bits(key) + 7) / 8, &sl);
            assert_int_equal(dsig_verify(alg("RS256"), key, msg, ml, sig, sl), DSIG_OK);
            msg[0] ^= 1;
            assert_int_equal(dsig_verify(alg("RS256"), key, msg, ml, sig, sl), DSIG_E_VERIFY);
            ran++;
            free(msg);
            free(sig);
        }
        dsig_key_free(key);
    }
    assert_true(ran >= 3);
    json_decref(prompt);
    json_decref(exp);
}

static const uint8_t SEED[32] = "rsa test seed, 32 bytes long...";

/* A seeded key for `alg_name` of `bits` (reproducible). */
static dsig_key *seeded(const char *alg_name, unsigned bits, const uint8_t *seed)
{
    dsig_keygen_params p = {.bits = bits, .seed = seed, .seed_len = 32};
    dsig_key *k = NULL;
    int rc = dsig_key_generate(&k, alg(alg_name), &p);
    if (rc)
        fail_msg("keygen %s/%u: %d %s", alg_name, bits, rc, dsig_last_error_detail());
    dsig_key_set_alg(k, NULL); /* unbound: the tests use one key with several algorithms */
    return k;
}

static dsig_key *key2048;

static void test_roundtrip_all(void **state)
{
    (void)state;
    static const char *const names[] = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"};
    for (size_t i = 0; i < 6; i++) {
        const dsig_alg *a = alg(names[i]);
        assert_string_equal(dsig_alg_kty(a), "RSA");
        assert_int_equal(dsig_alg_sig_max(a), 2048);
        assert_int_equal(dsig_alg_default_bits(a), 2048);
        assert_int_equal(dsig_alg_security_bits(a), 112);
        assert_true(dsig_alg_flags(a) & DSIG_ALG_ONE_PASS);
        assert_int_equal(!!(dsig_alg_flags(a) & DSIG_ALG_RANDOMIZED), names[i][0] == 'P');
        assert_string_equal(dsig_alg_family(a), names[i][0] == 'P' ? "RSASSA-PSS" : "RSASSA-PKCS1-v1_5");
        dsig_key_set_alg(key2048, NULL);
        rt_roundtrip(a, key2048, 70000);
    }
    /* a PS256 signature is not an RS256 one and vice versa; nor PS256 under PS384 */
    uint8_t sig[1024];
    size_t sl;
    assert_int_equal(dsig_sign(alg("PS256"), key2048, "m", 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_verify(alg("RS256"), key2048, "m", 1, sig, sl), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(alg("PS384"), key2048, "m", 1, sig, sl), DSIG_E_VERIFY);
    assert_int_equal(dsig_sign(alg("RS256"), key2048, "m", 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_verify(alg("PS256"), key2048, "m", 1, sig, sl), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(alg("RS512"), key2048, "m", 1, sig, sl), DSIG_E_VERIFY);
    /* signature equal to or above the modulus */
    memset(sig, 0xff, sl);
    assert_int_equal(dsig_verify(alg("RS256"), key2048, "m", 1, sig, sl), DSIG_E_VERIFY);
    assert_int_equal(dsig_verify(alg("PS256"), key2048, "m", 1, sig, sl), DSIG_E_VERIFY);
    memset(sig, 0, sl);
    assert_int_equal(dsig_verify(alg("RS256"), key2048, "m", 1, sig, sl), DSIG_E_VERIFY);
    /* an EC algorithm refuses an RSA key */
    assert_int_equal(dsig_sign(alg("ES256"), key2048, "m", 1, sig, sizeof sig, &sl), DSIG_E_KEY_MISMATCH);
}

static void test_keygen(void **state)
{
    (void)state;
    uint8_t other[32];
    memcpy(other, SEED, 32);
    other[0] ^= 1;
    /* same seed → same modulus; another seed → another modulus */
    dsig_key *a = seeded("RS256", 2048, SEED), *b = seeded("PS256", 2048, SEED), *c = seeded("RS256", 2048, other);
    assert_int_equal(dsig_key_bits(a), 2048);
    dsig_jwk_member ma[8], mb[8], mc[8];
    size_t na, nb, nc;
    assert_int_equal(a->type->export_jwk(a, 1, ma, &na), DSIG_OK);
    assert_int_equal(b->type->export_jwk(b, 1, mb, &nb), DSIG_OK);
    assert_int_equal(c->type->export_jwk(c, 1, mc, &nc), DSIG_OK);
    assert_int_equal(na, 8);
    assert_string_equal(ma[1].name, "n");
    assert_int_equal(ma[1].len, 256);
    assert_memory_equal(ma[1].data, mb[1].data, 256);
    assert_memory_not_equal(ma[1].data, mc[1].data, 256);
    assert_int_equal(ma[0].len, 3);
    assert_memory_equal(ma[0].data, "\x01\x00\x01", 3);
    assert_int_equal(ma[3].len, 128); /* p: exactly half */
    assert_int_equal(ma[3].data[0] & 0xc0, 0xc0);
    for (size_t i = 0; i < 8; i++) {
        dsig_xfree(ma[i].data, ma[i].len);
        dsig_xfree(mb[i].data, mb[i].len);
        dsig_xfree(mc[i].data, mc[i].len);
    }
    rt_jwk_roundtrip(a);
    rt_pem_roundtrip(alg("RS256"), a);
    dsig_key_free(a);
    dsig_key_free(b);
    dsig_key_free(c);

    /* 3072 reproducible, 4096 round trip */
    dsig_key *k3 = seeded("RS384", 3072, SEED), *k3b = seeded("RS384", 3072, SEED);
    assert_int_equal(dsig_key_bits(k3), 3072);
    char *p1, *p2;
    size_t l1, l2;
    assert_int_equal(dsig_key_export_pem(k3, 0, &p1, &l1), DSIG_OK);
    assert_int_equal(dsig_key_export_pem(k3b, 0, &p2, &l2), DSIG_OK);
    assert_int_equal(l1, l2);
    assert_memory_equal(p1, p2, l1);
    dsig_free(p1);
    dsig_free(p2);
    rt_roundtrip(alg("PS384"), k3, 1000);
    dsig_key_free(k3);
    dsig_key_free(k3b);
    dsig_key *k4 = seeded("PS512", 4096, SEED);
    assert_int_equal(dsig_key_bits(k4), 4096);
    rt_roundtrip(alg("PS512"), k4, 1000);
    rt_roundtrip(alg("RS512"), k4, 1000);
    dsig_key_free(k4);

    /* OS RNG generation */
    dsig_key *ko = NULL;
    assert_int_equal(dsig_key_generate(&ko, alg("RS256"), NULL), DSIG_OK);
    assert_int_equal(dsig_key_bits(ko), 2048);
    rt_roundtrip(alg("RS256"), ko, 100);
    rt_jwk_roundtrip(ko);
    dsig_key_free(ko);

    /* refused sizes */
    dsig_keygen_params p = {.bits = 1024, .seed = SEED, .seed_len = 32};
    assert_int_equal(dsig_key_generate(&ko, alg("RS256"), &p), DSIG_E_KEY_WEAK);
    p.seed = NULL;
    assert_int_equal(dsig_key_generate(&ko, alg("RS256"), &p), DSIG_E_KEY_WEAK);
    p.bits = 16384 + 1024;
    assert_int_equal(dsig_key_generate(&ko, alg("RS256"), &p), DSIG_E_TOO_LARGE);
    p.bits = 2056;
    assert_int_equal(dsig_key_generate(&ko, alg("RS256"), &p), DSIG_E_ARG);
}

/* 6144 and 8192 (release only: seeded generation of 3-4k-bit primes is slow under ASan). */
static void test_large_keys(void **state)
{
    (void)state;
#ifdef DSIG_TEST_SANITIZE
    skip();
#else
    if (getenv("DSIG_SANITIZE") && strcmp(getenv("DSIG_SANITIZE"), "ON") == 0)
        skip();
    static const unsigned sizes[] = {6144, 8192};
    for (size_t i = 0; i < 2; i++) {
        time_t t0 = time(NULL);
        dsig_key *k = seeded("PS256", sizes[i], SEED);
        assert_int_equal(dsig_key_bits(k), sizes[i]);
        rt_roundtrip(alg("PS256"), k, 1000);
        rt_roundtrip(alg("RS256"), k, 100);
        print_message("RSA %u: seeded keygen + round trips in %lds\n", sizes[i], (long)(time(NULL) - t0));
        dsig_key_free(k);
    }
#endif
}

/* Replace one member of a full JWK of key2048 and expect `want` from the import. */
static void jwk_variant(const char *name, const uint8_t *data, size_t len, int drop, int want)
{
    dsig_jwk_member m[8];
    size_t n;
    assert_int_equal(key2048->type->export_jwk(key2048, 1, m, &n), DSIG_OK);
    const char *names[8];
    const uint8_t *d[8];
    size_t lens[8], k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(m[i].name, name) == 0) {
            if (drop)
                continue;
            names[k] = m[i].name, d[k] = data, lens[k++] = len;
        } else {
            names[k] = m[i].name, d[k] = m[i].data, lens[k++] = m[i].len;
        }
    }
    dsig_key *out = NULL;
    int rc = rt_key_raw(&dsig_keytype_rsa, names, d, lens, k, &out);
    if (rc != want)
        fail_msg("JWK with %s %s: want %d, got %d (%s)", drop ? "no" : "changed", name, want, rc,
                 dsig_last_error_detail());
    dsig_key_free(out);
    for (size_t i = 0; i < n; i++)
        dsig_xfree(m[i].data, m[i].len);
}

static void test_jwk_validation(void **state)
{
    (void)state;
    /* a 1024-bit modulus is refused on import */
    uint8_t n1024[128];
    tu_fill(n1024, sizeof n1024, 7);
    n1024[0] |= 0x80;
    n1024[127] |= 1;
    const char *names[] = {"n", "e"};
    const uint8_t *d[] = {n1024, (const uint8_t *)"\x01\x00\x01"};
    size_t lens[] = {128, 3};
    dsig_key *k = NULL;
    assert_int_equal(rt_key_raw(&dsig_keytype_rsa, names, d, lens, 2, &k), DSIG_E_KEY_WEAK);
    assert_non_null(strstr(dsig_last_error_detail(), "1024"));
    /* public variants */
    static const uint8_t e_even[] = {0x01, 0x00, 0x02}, e_one[] = {0x01}, zero_lead[] = {0x00, 0x01, 0x00, 0x01};
    jwk_variant("e", e_even, 3, 0, DSIG_E_KEY);
    jwk_variant("e", e_one, 1, 0, DSIG_E_KEY);
    jwk_variant("e", zero_lead, 4, 0, DSIG_E_KEY);
    jwk_variant("e", NULL, 0, 1, DSIG_E_KEY);
    jwk_variant("n", NULL, 0, 1, DSIG_E_KEY);
    /* private: partial CRT sets, a wrong d, a wrong p, qi, dp */
    jwk_variant("p", NULL, 0, 1, DSIG_E_KEY);
    jwk_variant("qi", NULL, 0, 1, DSIG_E_KEY);
    jwk_variant("d", NULL, 0, 1, DSIG_E_KEY);
    dsig_jwk_member m[8];
    size_t n;
    assert_int_equal(key2048->type->export_jwk(key2048, 1, m, &n), DSIG_OK);
    for (size_t i = 2; i < 8; i++) {
        uint8_t *bad = malloc(m[i].len);
        memcpy(bad, m[i].data, m[i].len);
        bad[m[i].len - 1] ^= 0x02;
        jwk_variant(m[i].name, bad, m[i].len, 0, DSIG_E_KEY);
        free(bad);
    }
    /* n, e, d only (no CRT) is a valid private key and signs */
    {
        const char *nm[] = {"e", "n", "d"};
        const uint8_t *dd[] = {m[0].data, m[1].data, m[2].data};
        size_t ll[] = {m[0].len, m[1].len, m[2].len};
        assert_int_equal(rt_key_raw(&dsig_keytype_rsa, nm, dd, ll, 3, &k), DSIG_OK);
        assert_true(dsig_key_has_private(k));
        uint8_t sig[256];
        size_t sl;
        assert_int_equal(dsig_sign(alg("RS256"), k, "abc", 3, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(dsig_verify(alg("RS256"), key2048, "abc", 3, sig, sl), DSIG_OK);
        dsig_key_free(k);
        /* and with a wrong d it is refused */
        uint8_t *bad = malloc(m[2].len);
        memcpy(bad, m[2].data, m[2].len);
        bad[m[2].len - 1] ^= 0x04;
        dd[2] = bad;
        assert_int_equal(rt_key_raw(&dsig_keytype_rsa, nm, dd, ll, 3, &k), DSIG_E_KEY);
        free(bad);
    }
    /* a leading zero octet on n is not the minimal base64urlUInt */
    uint8_t *nz = calloc(1, m[1].len + 1);
    memcpy(nz + 1, m[1].data, m[1].len);
    jwk_variant("n", nz, m[1].len + 1, 0, DSIG_E_KEY);
    free(nz);
    for (size_t i = 0; i < n; i++)
        dsig_xfree(m[i].data, m[i].len);
    /* binding: a 2048-bit key bound to RS256 refuses PS256 */
    dsig_key *b = seeded("RS256", 2048, SEED);
    assert_int_equal(dsig_key_set_alg(b, alg("RS256")), DSIG_OK);
    uint8_t sig[256];
    size_t sl;
    assert_int_equal(dsig_sign(alg("PS256"), b, "x", 1, sig, sizeof sig, &sl), DSIG_E_ALG_NOT_ALLOWED);
    dsig_key_free(b);
}

static void test_pem(void **state)
{
    (void)state;
    rt_pem_roundtrip(alg("PS256"), key2048);
    /* an EC PEM is not an RSA key; garbage is a format error */
    assert_int_equal(dsig_key_import_pem(&(dsig_key *){NULL}, "junk", 4), DSIG_E_FORMAT);
}

static int setup(void **state)
{
    (void)state;
    key2048 = seeded("RS256", 2048, SEED);
    dsig_key_set_alg(key2048, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dsig_key_free(key2048);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wycheproof_pkcs1_verify),
        cmocka_unit_test(test_wycheproof_pss_verify),
        cmocka_unit_test(test_wycheproof_pkcs1_sign),
        cmocka_unit_test(test_acvp_sigver),
        cmocka_unit_test(test_roundtrip_all),
        cmocka_unit_test(test_jwk_validation),
        cmocka_unit_test(test_pem),
        cmocka_unit_test(test_keygen),
        cmocka_unit_test(test_large_keys),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
