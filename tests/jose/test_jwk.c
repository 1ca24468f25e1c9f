/* JWK import/export round trips for every registered key type, thumbprints, and import rejections. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "jose_test_util.h"

/* Export, re-import, re-export: identical text; thumbprint stable; public part consistent. */
static void roundtrip(const dsig_alg *alg)
{
    dsig_key *k;
    uint8_t seed[32];
    tu_fill(seed, sizeof seed, 7);
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    int rc = dsig_key_generate(&k, alg, &kp);
    if (rc)
        fail_msg("%s keygen: %d %s", dsig_alg_name(alg), rc, dsig_last_error_detail());
    char tp[DSIG_THUMBPRINT_LEN], tp2[DSIG_THUMBPRINT_LEN];
    assert_int_equal(dsig_jwk_thumbprint(k, tp), DSIG_OK);
    assert_int_equal(strlen(tp), 43);
    char *priv;
    size_t plen;
    assert_int_equal(dsig_jwk_export(k, 1, &priv, &plen), DSIG_OK);
    assert_int_equal(strlen(priv), plen);
    assert_non_null(strstr(priv, tp)); /* "kid" */
    dsig_key *k2;
    rc = dsig_jwk_import(&k2, priv, plen);
    if (rc)
        fail_msg("%s re-import: %d %s\n%s", dsig_alg_name(alg), rc, dsig_last_error_detail(), priv);
    assert_true(dsig_key_has_private(k2));
    assert_ptr_equal(dsig_key_alg(k2), alg);
    char *priv2;
    assert_int_equal(dsig_jwk_export(k2, 1, &priv2, NULL), DSIG_OK);
    assert_string_equal(priv, priv2);
    dsig_free(priv2);
    assert_int_equal(dsig_jwk_thumbprint(k2, tp2), DSIG_OK);
    assert_string_equal(tp, tp2);
    /* sign with the re-imported key, verify with the original (or its public part) */
    dsig_key *ver = k;
    dsig_key *pubk = NULL;
    char *pub = NULL;
    if (dsig_alg_flags(alg) & DSIG_ALG_SYMMETRIC) {
        assert_int_equal(dsig_jwk_export(k, 0, &pub, NULL), DSIG_E_UNSUPPORTED);
    } else {
        size_t publen;
        assert_int_equal(dsig_jwk_export(k, 0, &pub, &publen), DSIG_OK);
        assert_int_equal(dsig_jwk_import(&pubk, pub, publen), DSIG_OK);
        assert_false(dsig_key_has_private(pubk));
        assert_int_equal(dsig_jwk_thumbprint(pubk, tp2), DSIG_OK);
        assert_string_equal(tp, tp2);
        char *none = NULL;
        assert_int_equal(dsig_jwk_export(pubk, 1, &none, NULL), DSIG_E_NO_PRIVATE);
        assert_null(none);
        ver = pubk;
        dsig_free(pub);
    }
    for (int f = DSIG_FMT_JWS; f <= DSIG_FMT_RAW; f++) {
        dsig_jws_sign_opts so = {.format = (dsig_format)f, .include_kid = f == DSIG_FMT_JSON};
        dsig_jws_sign_ctx *sc;
        assert_int_equal(dsig_jws_sign_init(&sc, NULL, k2, &so), DSIG_OK);
        assert_int_equal(dsig_jws_sign_update(sc, "hello ", 6), DSIG_OK);
        assert_int_equal(dsig_jws_sign_update(sc, "world", 5), DSIG_OK);
        char *out;
        size_t ol;
        assert_int_equal(dsig_jws_sign_final(sc, &out, &ol), DSIG_OK);
        dsig_jws_verify_opts vo = {.format = (dsig_format)f};
        if (f == DSIG_FMT_COMPACT_B64) {
            uint8_t *p;
            size_t pl;
            assert_int_equal(dsig_jws_verify_compact(ver, out, ol, &vo, &p, &pl), DSIG_OK);
            assert_memory_equal(p, "hello world", 11);
            dsig_free(p);
        } else {
            dsig_jws_verify_ctx *vc;
            assert_int_equal(dsig_jws_verify_init(&vc, ver, out, ol, &vo), DSIG_OK);
            assert_int_equal(dsig_jws_verify_update(vc, "hello world", 11), DSIG_OK);
            assert_int_equal(dsig_jws_verify_final(vc), DSIG_OK);
            assert_int_equal(dsig_jws_verify_init(&vc, ver, out, ol, &vo), DSIG_OK);
            assert_int_equal(dsig_jws_verify_update(vc, "hello worle", 11), DSIG_OK);
            assert_int_equal(dsig_jws_verify_final(vc), DSIG_E_VERIFY);
        }
        dsig_free(out);
    }
    dsig_key_free(pubk);
    dsig_free(priv);
    dsig_key_free(k2);
    dsig_key_free(k);
}

static void test_roundtrip_all(void **state)
{
    (void)state;
    size_t n = dsig_alg_count(), done = 0;
    for (size_t i = 0; i < n; i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (dsig_alg_flags(a) & DSIG_ALG_STATEFUL)
            continue; /* stateful keys are large and slow to generate; their own tests cover them */
        /* RSA keygen is slow: one RSA round trip per family is enough */
        if (strcmp(dsig_alg_kty(a), "RSA") == 0 && strcmp(dsig_alg_name(a) + 2, "256") != 0)
            continue;
        roundtrip(a);
        done++;
    }
    print_message("  JWK round trips: %zu algorithms\n", done);
    if (!done)
        skip();
}

static void expect_import(const char *jwk, int code, const char *detail_part)
{
    dsig_key *k = NULL;
    int rc = dsig_jwk_import(&k, jwk, strlen(jwk));
    if (rc != code)
        fail_msg("%s: got %d (%s), want %d", jwk, rc, dsig_last_error_detail(), code);
    if (detail_part && !strstr(dsig_last_error_detail(), detail_part))
        fail_msg("%s: detail \"%s\" lacks \"%s\"", jwk, dsig_last_error_detail(), detail_part);
    if (rc == DSIG_OK)
        assert_non_null(k);
    else
        assert_null(k);
    dsig_key_free(k);
}

static void test_import_rejects(void **state)
{
    (void)state;
    jt_need("HS256");
    const char *k = "\"k\":\"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow\"";
    char buf[512];
#define J(...) (snprintf(buf, sizeof buf, __VA_ARGS__), buf)
    expect_import(J("{\"kty\":\"oct\",%s}", k), DSIG_OK, NULL);
    expect_import(J("{\"kty\":\"oct\",%s,\"alg\":\"HS256\",\"use\":\"sig\",\"key_ops\":[\"sign\"]}", k), DSIG_OK, NULL);
    expect_import(J("{%s}", k), DSIG_E_KEY, "kty");
    expect_import(J("{\"kty\":7,%s}", k), DSIG_E_JSON, "kty");
    expect_import(J("{\"kty\":\"oct\",\"kty\":\"oct\",%s}", k), DSIG_E_JSON, "duplicate");
    expect_import(J("{\"kty\":\"oct\",%s,\"use\":\"enc\"}", k), DSIG_E_KEY, "use");
    expect_import(J("{\"kty\":\"oct\",%s,\"use\":1}", k), DSIG_E_JSON, "use");
    expect_import(J("{\"kty\":\"oct\",%s,\"key_ops\":\"sign\"}", k), DSIG_E_JSON, "key_ops");
    expect_import(J("{\"kty\":\"oct\",%s,\"key_ops\":[1]}", k), DSIG_E_JSON, "key_ops");
    expect_import(J("{\"kty\":\"oct\",%s,\"key_ops\":[\"encrypt\"]}", k), DSIG_E_KEY, "key_ops");
    expect_import(J("{\"kty\":\"oct\",%s,\"alg\":\"XX999\"}", k), DSIG_E_UNSUPPORTED, "XX999");
    expect_import(J("{\"kty\":\"oct\",%s,\"alg\":7}", k), DSIG_E_JSON, "alg");
    expect_import(J("{\"kty\":\"oct\",%s,\"kid\":[]}", k), DSIG_E_JSON, "kid");
    expect_import("{\"kty\":\"oct\"}", DSIG_E_KEY, NULL);
    expect_import("{\"kty\":\"oct\",\"k\":5}", DSIG_E_JSON, "\"k\"");
    expect_import("{\"kty\":\"oct\",\"k\":\"AyM=\"}", DSIG_E_BASE64, "\"k\"");
    expect_import("{\"kty\":\"oct\",\"k\":\"AyN\"}", DSIG_E_BASE64, "\"k\""); /* trailing bits */
    expect_import("{\"kty\":\"XYZ\"}", DSIG_E_UNSUPPORTED, "XYZ");
    expect_import("{\"kty\":\"EC\",\"crv\":\"P-999\",\"x\":\"AA\",\"y\":\"AA\"}", DSIG_E_UNSUPPORTED, "P-999");
    expect_import("{\"keys\":[]}", DSIG_E_UNSUPPORTED, "Set");
    expect_import("[]", DSIG_E_JSON, "object");
    expect_import("{\"kty\":\"oct\"", DSIG_E_JSON, NULL);
    expect_import(J("{\"kty\":\"oct\",%s} {}", k), DSIG_E_JSON, NULL);
    if (dsig_alg_by_name("RS256"))
        expect_import(J("{\"kty\":\"oct\",%s,\"alg\":\"RS256\"}", k), DSIG_E_KEY_MISMATCH, "RS256");
    if (dsig_alg_by_name("ES256")) {
        expect_import("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\"}",
                      DSIG_E_KEY, "\"y\"");
        /* a point off the curve: y changed — rejected by the key type (DSIG_E_POINT or DSIG_E_KEY) */
        const char *off = "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\","
                          "\"y\":\"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a4\"}";
        dsig_key *ok = NULL;
        assert_int_not_equal(dsig_jwk_import(&ok, off, strlen(off)), DSIG_OK);
        assert_null(ok);
    }
    /* bounded input */
    size_t big = DSIG_JWK_MAX_BYTES + 1;
    char *huge = malloc(big);
    memset(huge, ' ', big);
    huge[0] = '{';
    huge[big - 1] = '}';
    dsig_key *kk;
    assert_int_equal(dsig_jwk_import(&kk, huge, big), DSIG_E_TOO_LARGE);
    free(huge);
#undef J
}

static void test_thumbprint_oct(void **state)
{
    (void)state;
    jt_need("HS256");
    /* RFC 7638 §3.2: oct thumbprint over {"k":...,"kty":"oct"} — recomputed independently */
    const char *k = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
    char jwk[256], canon[256];
    snprintf(jwk, sizeof jwk, "{\"kty\":\"oct\",\"alg\":\"HS256\",\"k\":\"%s\"}", k);
    snprintf(canon, sizeof canon, "{\"k\":\"%s\",\"kty\":\"oct\"}", k);
    dsig_key *key;
    assert_int_equal(dsig_jwk_import(&key, jwk, strlen(jwk)), DSIG_OK);
    char tp[DSIG_THUMBPRINT_LEN];
    assert_int_equal(dsig_jwk_thumbprint(key, tp), DSIG_OK);
    uint8_t md[32];
    unsigned ml;
    assert_true(EVP_Digest(canon, strlen(canon), md, &ml, EVP_sha256(), NULL));
    char want[DSIG_THUMBPRINT_LEN];
    dsig_b64url_encode(want, md, 32);
    assert_string_equal(tp, want);
    dsig_key_free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_all),
        cmocka_unit_test(test_import_rejects),
        cmocka_unit_test(test_thumbprint_oct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
