/* Key API behaviour a first user meets: a JWK's own "kid" is kept (export, public copy, JWS
 * header); a missing "crv" is named; the algorithm of an unbound key follows from its type only when
 * the type admits exactly one (never from a JWS header); key sizes that do not apply are refused;
 * the legacy "EdDSA" resolves by the key's curve. */
#include <string.h>

#include "core/internal.h"
#include "testutil.h"

/* Import a JWK text; DSIG_OK expected. */
static dsig_key *import(const char *json)
{
    dsig_key *k = NULL;
    int rc = dsig_jwk_import(&k, json, strlen(json));
    if (rc)
        fail_msg("import %s: %s", json, dsig_last_error_detail());
    return k;
}

/* A generated key's public JWK with some members removed (and "kid" replaced when kid != NULL). */
static char *public_jwk(const char *alg, int keep_alg, const char *kid)
{
    dsig_key *k = NULL, *pub = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name(alg), NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    char *text = NULL;
    assert_int_equal(dsig_jwk_export(pub, 0, &text, NULL), DSIG_OK);
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    if (!keep_alg)
        json_object_del(j, "alg");
    json_object_del(j, "kid");
    if (kid)
        json_object_set_new(j, "kid", json_string(kid));
    char *out = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    dsig_free(text);
    dsig_key_free(pub);
    dsig_key_free(k);
    return out;
}

static void test_kid_kept(void **state)
{
    (void)state;
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("ES256"), NULL), DSIG_OK);
    assert_null(dsig_key_kid(k)); /* generated: no own kid, the thumbprint stands in */
    char *text = NULL, tp[DSIG_THUMBPRINT_LEN];
    assert_int_equal(dsig_jwk_export(k, 1, &text, NULL), DSIG_OK);
    assert_int_equal(dsig_jwk_thumbprint(k, tp), DSIG_OK);
    assert_non_null(strstr(text, tp));
    /* The user's kid survives import, export, the public copy and the JWS header. */
    json_t *j = json_loads(text, 0, NULL);
    json_object_set_new(j, "kid", json_string("release-2026 \"q\""));
    char *mine = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    dsig_key *u = import(mine), *pub = NULL;
    assert_string_equal(dsig_key_kid(u), "release-2026 \"q\"");
    char *again = NULL;
    assert_int_equal(dsig_jwk_export(u, 0, &again, NULL), DSIG_OK);
    assert_non_null(strstr(again, "\"kid\":\"release-2026 \\\"q\\\"\""));
    assert_null(strstr(again, tp));
    assert_int_equal(dsig_key_public(&pub, u), DSIG_OK);
    assert_string_equal(dsig_key_kid(pub), "release-2026 \"q\"");
    dsig_jws_sign_ctx *c;
    dsig_jws_sign_opts o = {.format = DSIG_FMT_JWS, .include_kid = 1};
    assert_int_equal(dsig_jws_sign_init(&c, NULL, u, &o), DSIG_OK);
    char *jws = NULL;
    size_t len = 0;
    assert_int_equal(dsig_jws_sign_final(c, &jws, &len), DSIG_OK);
    uint8_t *hdr = NULL;
    size_t hlen = 0;
    assert_int_equal(dsig_b64url_decode_alloc(jws, strcspn(jws, "."), &hdr, &hlen), DSIG_OK);
    const char *want = "\"kid\":\"release-2026 \\\"q\\\"\"";
    assert_non_null(memmem(hdr, hlen, want, strlen(want)));
    dsig_xfree(hdr, hlen);
    dsig_free(jws);
    /* A kid that is empty, too long or holds control characters is refused, naming "kid". */
    static const char *const bad[] = {"", "a\nb", "tab\there"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = json_loads(text, 0, NULL);
        json_object_set_new(j, "kid", json_string(bad[i]));
        char *t = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        dsig_key *x = NULL;
        assert_int_equal(dsig_jwk_import(&x, t, strlen(t)), DSIG_E_KEY);
        assert_non_null(strstr(dsig_last_error_detail(), "\"kid\""));
        free(t);
    }
    char longkid[DSIG_KID_MAX + 2];
    memset(longkid, 'k', sizeof longkid - 1);
    longkid[sizeof longkid - 1] = '\0';
    j = json_loads(text, 0, NULL);
    json_object_set_new(j, "kid", json_string(longkid));
    char *t = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    dsig_key *x = NULL;
    assert_int_equal(dsig_jwk_import(&x, t, strlen(t)), DSIG_E_KEY);
    free(t);
    free(mine);
    dsig_free(text);
    dsig_free(again);
    dsig_key_free(pub);
    dsig_key_free(u);
    dsig_key_free(k);
}

static void test_missing_crv_named(void **state)
{
    (void)state;
    dsig_key *k = NULL;
    const char *ec = "{\"kty\":\"EC\"}";
    assert_int_equal(dsig_jwk_import(&k, ec, strlen(ec)), DSIG_E_KEY);
    assert_non_null(strstr(dsig_last_error_detail(), "\"crv\" is missing"));
    assert_non_null(strstr(dsig_last_error_detail(), "P-256"));
    const char *okp = "{\"kty\":\"OKP\",\"x\":\"AAAA\"}";
    assert_int_equal(dsig_jwk_import(&k, okp, strlen(okp)), DSIG_E_KEY);
    assert_non_null(strstr(dsig_last_error_detail(), "Ed25519"));
    const char *other = "{\"kty\":\"EC\",\"crv\":\"P-192\"}";
    assert_int_equal(dsig_jwk_import(&k, other, strlen(other)), DSIG_E_UNSUPPORTED);
    assert_non_null(strstr(dsig_last_error_detail(), "\"P-192\" is not supported"));
    const char *xyz = "{\"kty\":\"XYZ\"}";
    assert_int_equal(dsig_jwk_import(&k, xyz, strlen(xyz)), DSIG_E_UNSUPPORTED);
    assert_non_null(strstr(dsig_last_error_detail(), "unsupported key type \"XYZ\""));
}

/* Sign `msg` as a detached JWS with a bound private key of `alg`; returns the JWS text. */
static char *jws_of(const char *alg, dsig_key **priv)
{
    assert_int_equal(dsig_key_generate(priv, dsig_alg_by_name(alg), NULL), DSIG_OK);
    dsig_jws_sign_ctx *c;
    assert_int_equal(dsig_jws_sign_init(&c, NULL, *priv, NULL), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "msg", 3), DSIG_OK);
    char *jws = NULL;
    size_t len;
    assert_int_equal(dsig_jws_sign_final(c, &jws, &len), DSIG_OK);
    return jws;
}

/* A verify of `jws` over "msg" with `key` and no algorithm given. */
static int verify_unbound(const char *jws, const dsig_key *key)
{
    dsig_jws_verify_ctx *v;
    int rc = dsig_jws_verify_init(&v, key, jws, strlen(jws), NULL);
    if (rc)
        return rc;
    assert_int_equal(dsig_jws_verify_update(v, "msg", 3), DSIG_OK);
    return dsig_jws_verify_final(v);
}

static void test_infer_alg(void **state)
{
    (void)state;
    static const char *const single[] = {"ES256", "ES384", "ES512", "Ed25519", "Ed448"};
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++) {
        char *text = public_jwk(single[i], 0, NULL);
        dsig_key *pub = import(text);
        assert_null(dsig_key_alg(pub));
        const dsig_alg *a = NULL;
        assert_int_equal(dsig_key_infer_alg(pub, &a), DSIG_OK);
        assert_string_equal(dsig_alg_name(a), single[i]);
        /* A JWS from the matching private key verifies with the unbound public key. */
        dsig_key *priv = NULL;
        char *jws = jws_of(single[i], &priv);
        dsig_key *pub2 = NULL;
        assert_int_equal(dsig_key_public(&pub2, priv), DSIG_OK);
        char *t2 = NULL;
        assert_int_equal(dsig_jwk_export(pub2, 0, &t2, NULL), DSIG_OK);
        json_t *j = json_loads(t2, 0, NULL);
        json_object_del(j, "alg");
        char *t3 = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        dsig_key *unbound = import(t3);
        assert_int_equal(verify_unbound(jws, unbound), DSIG_OK);
        free(t3);
        dsig_free(t2);
        dsig_free(jws);
        dsig_key_free(unbound);
        dsig_key_free(pub2);
        dsig_key_free(priv);
        dsig_key_free(pub);
        free(text);
    }
    /* Never from the header: an HS256 header on an unbound P-256 key is refused. */
    char *text = public_jwk("ES256", 0, NULL);
    dsig_key *p256 = import(text);
    dsig_key *hs = NULL;
    char *hjws = jws_of("HS256", &hs);
    assert_int_equal(verify_unbound(hjws, p256), DSIG_E_ALG_NOT_ALLOWED);
    assert_non_null(strstr(dsig_last_error_detail(), "ES256"));
    dsig_free(hjws);
    dsig_key_free(hs);
    dsig_key_free(p256);
    free(text);
    /* RSA and oct: several fit; the error names them. */
    text = public_jwk("PS256", 0, NULL);
    dsig_key *rsa = import(text);
    const dsig_alg *a = (const dsig_alg *)1;
    assert_int_equal(dsig_key_infer_alg(rsa, &a), DSIG_E_ALG_NOT_ALLOWED);
    assert_null(a);
    assert_non_null(strstr(dsig_last_error_detail(), "RS256"));
    assert_non_null(strstr(dsig_last_error_detail(), "PS512"));
    dsig_key *priv = NULL;
    char *rjws = jws_of("PS256", &priv);
    assert_int_equal(verify_unbound(rjws, rsa), DSIG_E_ALG_NOT_ALLOWED);
    assert_non_null(strstr(dsig_last_error_detail(), "PS384"));
    dsig_free(rjws);
    dsig_key_free(priv);
    dsig_key_free(rsa);
    free(text);
    dsig_key *oct = import("{\"kty\":\"oct\",\"k\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}");
    assert_int_equal(dsig_key_infer_alg(oct, &a), DSIG_E_ALG_NOT_ALLOWED);
    assert_non_null(strstr(dsig_last_error_detail(), "HS256"));
    dsig_key_free(oct);
}

static void test_bits_that_do_not_apply(void **state)
{
    (void)state;
    dsig_key *k = NULL;
    dsig_keygen_params p = {.bits = 384};
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("ES256"), &p), DSIG_E_ARG);
    assert_null(k);
    assert_non_null(strstr(dsig_last_error_detail(), "P-256"));
    p.bits = 256; /* the size the algorithm has anyway */
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("ES256"), &p), DSIG_OK);
    dsig_key_free(k);
    p.bits = 512;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("Ed25519"), &p), DSIG_E_ARG);
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("ML-DSA-44"), &p), DSIG_E_ARG);
    p.bits = 3072; /* RSA takes a size */
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("RS256"), &p), DSIG_OK);
    assert_int_equal(dsig_key_bits(k), 3072);
    dsig_key_free(k);
}

static void test_eddsa_alias(void **state)
{
    (void)state;
    dsig_key *ed = NULL, *ed448 = NULL, *es = NULL;
    assert_int_equal(dsig_key_generate(&ed, dsig_alg_by_name("Ed25519"), NULL), DSIG_OK);
    assert_int_equal(dsig_key_generate(&ed448, dsig_alg_by_name("Ed448"), NULL), DSIG_OK);
    assert_int_equal(dsig_key_generate(&es, dsig_alg_by_name("ES256"), NULL), DSIG_OK);
    assert_ptr_equal(dsig_jws_alg_for_key("EdDSA", ed), dsig_alg_by_name("Ed25519"));
    assert_ptr_equal(dsig_jws_alg_for_key("EdDSA", ed448), dsig_alg_by_name("Ed448"));
    assert_null(dsig_jws_alg_for_key("EdDSA", es));
    assert_null(dsig_jws_alg_for_key("EdDSA", NULL));
    assert_ptr_equal(dsig_jws_alg_for_key("ES256", NULL), dsig_alg_by_name("ES256"));
    assert_null(dsig_jws_alg_for_key("NOPE", ed));
    dsig_key_free(ed);
    dsig_key_free(ed448);
    dsig_key_free(es);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kid_kept),          cmocka_unit_test(test_missing_crv_named),
        cmocka_unit_test(test_infer_alg),         cmocka_unit_test(test_bits_that_do_not_apply),
        cmocka_unit_test(test_eddsa_alias),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
