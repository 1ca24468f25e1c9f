/* JWS against the official examples: RFC 7515 Appendix A, RFC 7797 §4, RFC 8037 Appendix A. */
#include <stdlib.h>
#include <string.h>

#include "jose_test_util.h"

static const char *const only_hs256[] = {"HS256", NULL};

/* The signing input and signature of a compact JWS text: re-sign (deterministic algs) byte-exactly. */
static void resign_exact(const char *jws, const dsig_alg *alg, const dsig_key *key)
{
    const char *last = strrchr(jws, '.');
    assert_non_null(last);
    size_t cap = dsig_alg_sig_max(alg), sl = 0;
    uint8_t *sig = malloc(cap);
    assert_int_equal(dsig_sign(alg, key, jws, (size_t)(last - jws), sig, cap, &sl), DSIG_OK);
    char *enc = jt_b64((const char *)sig, sl);
    assert_string_equal(enc, last + 1);
    free(enc);
    free(sig);
}

/* Verify a vector file's compact JWS with an unbound key and an allow-list; check the payload. */
static void verify_file(const char *jws_rel, const char *jwk_rel, const char *alg, const char *expect)
{
    jt_need(alg);
    dsig_key *key = jt_key_file(jwk_rel);
    size_t len;
    char *jws = tu_read_vector_file(jws_rel, &len);
    const char *allowed[] = {alg, NULL};
    dsig_jws_verify_opts o = {.allowed = allowed};
    uint8_t *p = NULL;
    size_t n = 0;
    int rc = dsig_jws_verify_compact(key, jws, len, &o, &p, &n);
    if (rc)
        fail_msg("%s: %d %s", jws_rel, rc, dsig_last_error_detail());
    assert_true(n >= strlen(expect) && memmem(p, n, expect, strlen(expect)) != NULL);
    dsig_free(p);
    /* the same with opts->alg instead of the allow-list */
    dsig_jws_verify_opts o2 = {.alg = dsig_alg_by_name(alg)};
    assert_int_equal(jt_verify_embedded(jws, key, &o2), DSIG_OK);
    /* no algorithm source but the key: its type decides when it admits one algorithm (EC P-256 ->
     * ES256), else refused — never guessed from the header */
    const dsig_alg *implied = NULL;
    if (dsig_key_infer_alg(key, &implied) == DSIG_OK) {
        assert_ptr_equal(implied, dsig_alg_by_name(alg));
        assert_int_equal(jt_verify_embedded(jws, key, NULL), DSIG_OK);
    } else {
        assert_int_equal(jt_verify_embedded(jws, key, NULL), DSIG_E_ALG_NOT_ALLOWED);
    }
    /* a flipped bit in the signature segment */
    jws[len - 3] ^= 1;
    assert_int_not_equal(jt_verify_embedded(jws, key, &o), DSIG_OK);
    free(jws);
    dsig_key_free(key);
}

static void test_rfc7515_a1_hs256(void **state)
{
    (void)state;
    verify_file("jws/rfc7515/rfc7515_A.1.jwsc", "jws/rfc7515/rfc7515_A.1.jwk", "HS256", "\"iss\":\"joe\"");
    dsig_key *key = jt_key_file("jws/rfc7515/rfc7515_A.1.jwk");
    char *jws = tu_read_vector_file("jws/rfc7515/rfc7515_A.1.jwsc", NULL);
    resign_exact(jws, dsig_alg_by_name("HS256"), key);
    free(jws);
    dsig_key_free(key);
}

static void test_rfc7515_a2_rs256(void **state)
{
    (void)state;
    verify_file("jws/rfc7515/rfc7515_A.2.jwsc", "jws/rfc7515/rfc7515_A.2.jwk", "RS256", "\"iss\":\"joe\"");
    dsig_key *key = jt_key_file("jws/rfc7515/rfc7515_A.2.jwk");
    char *jws = tu_read_vector_file("jws/rfc7515/rfc7515_A.2.jwsc", NULL);
    resign_exact(jws, dsig_alg_by_name("RS256"), key);
    free(jws);
    dsig_key_free(key);
}

static void test_rfc7515_a3_es256(void **state)
{
    (void)state;
    verify_file("jws/rfc7515/rfc7515_A.3.jwsc", "jws/rfc7515/rfc7515_A.3.jwk", "ES256", "\"iss\":\"joe\"");
}

static void test_rfc7515_a4_es512(void **state)
{
    (void)state;
    verify_file("jws/rfc7515/rfc7515_A.4.jwsc", "jws/rfc7515/rfc7515_A.4.jwk", "ES512", "Payload");
}

static void test_rfc7515_a5_none(void **state)
{
    (void)state;
    jt_need("HS256");
    dsig_key *key = jt_key_file("jws/rfc7515/rfc7515_A.1.jwk");
    char *jws = tu_read_vector_file("jws/rfc7515/rfc7515_A.5.jwsc", NULL);
    const char *allowed[] = {"HS256", "none", NULL};
    dsig_jws_verify_opts o = {.allowed = allowed};
    assert_int_equal(jt_verify_embedded(jws, key, &o), DSIG_E_HEADER);
    assert_non_null(strstr(dsig_last_error_detail(), "none"));
    free(jws);
    dsig_key_free(key);
}

static void test_rfc7515_a6_general_json(void **state)
{
    (void)state;
    jt_need("RS256");
    dsig_key *key = jt_key_file("jws/rfc7515/rfc7515_A.6.1.jwk");
    char *jws = tu_read_vector_file("jws/rfc7515/rfc7515_A.6.jwsg", NULL);
    const char *allowed[] = {"RS256", NULL};
    dsig_jws_verify_opts o = {.allowed = allowed};
    assert_int_equal(jt_verify_embedded(jws, key, &o), DSIG_E_UNSUPPORTED);
    assert_non_null(strstr(dsig_last_error_detail(), "general"));
    free(jws);
    dsig_key_free(key);
}

static void test_rfc7515_a7_flattened(void **state)
{
    (void)state;
    jt_need("ES256");
    dsig_key *key = jt_key_file("jws/rfc7515/rfc7515_A.7.jwk");
    size_t len;
    char *jws = tu_read_vector_file("jws/rfc7515/rfc7515_A.7.jwsf", &len);
    const char *allowed[] = {"ES256", NULL};
    dsig_jws_verify_opts o = {.allowed = allowed};
    assert_int_equal(dsig_jws_detect_format(jws, len), DSIG_FMT_JSON);
    assert_int_equal(dsig_jws_has_embedded_payload(jws, len), 1);
    /* the payload is embedded: the streaming (detached) API refuses the JWS outright */
    dsig_jws_verify_ctx *c;
    assert_int_equal(dsig_jws_verify_init(&c, key, jws, len, &o), DSIG_E_FORMAT);
    assert_non_null(strstr(dsig_last_error_detail(), "dsig_jws_verify_compact"));
    assert_int_equal(jt_verify_embedded(jws, key, &o), DSIG_OK);
    free(jws);
    dsig_key_free(key);
}

/* RFC 7797 §4.2: b64:false, payload "$.02", detached — byte-exact compact and flattened output. */
static void test_rfc7797_4_2(void **state)
{
    (void)state;
    const dsig_alg *hs = jt_need("HS256");
    json_t *v = tu_load_json("jws/rfc7797/rfc7797_section4.json");
    dsig_key *key = jt_key_json(json_object_get(v, "jwk"));
    const char *payload = tu_str(v, "payload_utf8");
    json_t *ex = json_array_get(json_object_get(v, "examples"), 1);
    assert_string_equal(tu_str(ex, "section"), "4.2");
    const char *want_compact = tu_str(ex, "jws_compact_detached");
    json_t *fj = json_object_get(ex, "jws_flattened_json");

    for (int fmt = DSIG_FMT_JWS; fmt <= DSIG_FMT_JSON; fmt++) {
        dsig_jws_sign_opts so = {.format = (dsig_format)fmt};
        dsig_jws_sign_ctx *sc;
        assert_int_equal(dsig_jws_sign_init(&sc, hs, key, &so), DSIG_OK);
        for (const char *p = payload; *p; p++) /* byte by byte: chunking must not matter */
            assert_int_equal(dsig_jws_sign_update(sc, p, 1), DSIG_OK);
        char *out;
        size_t out_len;
        assert_int_equal(dsig_jws_sign_final(sc, &out, &out_len), DSIG_OK);
        assert_int_equal(strlen(out), out_len);
        if (fmt == DSIG_FMT_JWS) {
            assert_string_equal(out, want_compact);
        } else {
            char want[512];
            snprintf(want, sizeof want, "{\"protected\":\"%s\",\"signature\":\"%s\"}",
                     tu_str(fj, "protected"), tu_str(fj, "signature"));
            assert_string_equal(out, want);
        }
        assert_int_equal(dsig_jws_detect_format(out, out_len), (dsig_format)fmt);
        const char *allowed[] = {"HS256", NULL};
        dsig_jws_verify_opts vo = {.allowed = allowed};
        for (size_t chunk = 0; chunk < 4; chunk++)
            assert_int_equal(jt_verify_detached(out, key, &vo, payload, strlen(payload), chunk), DSIG_OK);
        assert_int_equal(jt_verify_detached(out, key, &vo, "$.03", 4, 0), DSIG_E_VERIFY);
        dsig_free(out);
    }
    /* the RFC's flattened form carries the unencoded payload: verified as embedded */
    char *ftext = json_dumps(fj, JSON_COMPACT);
    dsig_jws_verify_opts vo = {.allowed = only_hs256};
    uint8_t *p = NULL;
    size_t n = 0;
    assert_int_equal(dsig_jws_verify_compact(key, ftext, strlen(ftext), &vo, &p, &n), DSIG_OK);
    assert_int_equal(n, 4);
    assert_memory_equal(p, "$.02", 4);
    dsig_free(p);
    free(ftext);
    dsig_key_free(key);
    json_decref(v);
}

/* RFC 7797 §4.1: the ordinary b64:true JWS — embedded, detached (Appendix F) and re-signed exactly. */
static void test_rfc7797_4_1(void **state)
{
    (void)state;
    const dsig_alg *hs = jt_need("HS256");
    json_t *v = tu_load_json("jws/rfc7797/rfc7797_section4.json");
    dsig_key *key = jt_key_json(json_object_get(v, "jwk"));
    const char *payload = tu_str(v, "payload_utf8");
    json_t *ex = json_array_get(json_object_get(v, "examples"), 0);
    const char *compact = tu_str(ex, "jws_compact");
    dsig_jws_verify_opts vo = {.allowed = only_hs256};
    uint8_t *p = NULL;
    size_t n = 0;
    assert_int_equal(dsig_jws_verify_compact(key, compact, strlen(compact), &vo, &p, &n), DSIG_OK);
    assert_int_equal(n, strlen(payload));
    assert_memory_equal(p, payload, n);
    dsig_free(p);
    /* detached form of the same JWS: the verifier base64url-encodes the streamed payload */
    char detached[256];
    const char *dot = strchr(compact, '.');
    const char *dot2 = strchr(dot + 1, '.');
    snprintf(detached, sizeof detached, "%.*s.%s", (int)(dot - compact + 1), compact, dot2 + 1);
    assert_int_equal(dsig_jws_detect_format(detached, strlen(detached)), DSIG_FMT_JWS);
    for (size_t chunk = 0; chunk < 4; chunk++)
        assert_int_equal(jt_verify_detached(detached, key, &vo, payload, 4, chunk), DSIG_OK);
    /* our COMPACT_B64 signer produces the RFC's bytes (header {"alg":"HS256"}) */
    dsig_jws_sign_opts so = {.format = DSIG_FMT_COMPACT_B64};
    dsig_jws_sign_ctx *sc;
    assert_int_equal(dsig_jws_sign_init(&sc, hs, key, &so), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(sc, payload, 1), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(sc, payload + 1, 3), DSIG_OK);
    char *out;
    size_t out_len;
    assert_int_equal(dsig_jws_sign_final(sc, &out, &out_len), DSIG_OK);
    assert_string_equal(out, compact);
    assert_int_equal(dsig_jws_detect_format(out, out_len), DSIG_FMT_COMPACT_B64);
    dsig_free(out);
    /* and the flattened JSON with an encoded payload */
    char *ftext = json_dumps(json_object_get(ex, "jws_flattened_json"), JSON_COMPACT);
    assert_int_equal(jt_verify_embedded(ftext, key, &vo), DSIG_OK);
    free(ftext);
    dsig_key_free(key);
    json_decref(v);
}

/* RFC 8037 A.1-A.5: Ed25519 OKP keys, thumbprint, the "EdDSA" JWS. */
static void test_rfc8037(void **state)
{
    (void)state;
    const dsig_alg *ed = jt_need("Ed25519");
    json_t *v = tu_load_json("jws/rfc8037/rfc8037_appendixA.json");
    dsig_key *priv = jt_key_json(json_object_get(v, "private_jwk"));
    dsig_key *pub = jt_key_json(json_object_get(v, "public_jwk"));
    assert_true(dsig_key_has_private(priv));
    assert_false(dsig_key_has_private(pub));
    char tp[DSIG_THUMBPRINT_LEN];
    assert_int_equal(dsig_jwk_thumbprint(priv, tp), DSIG_OK);
    assert_string_equal(tp, tu_str(v, "jwk_thumbprint_sha256"));
    assert_int_equal(dsig_jwk_thumbprint(pub, tp), DSIG_OK);
    assert_string_equal(tp, tu_str(v, "jwk_thumbprint_sha256"));
    /* A.4 exactly, through the deterministic one-shot signer over the signing input */
    const char *jws = tu_str(v, "jws_compact");
    const char *input = tu_str(v, "signing_input");
    uint8_t sig[64];
    size_t sl;
    assert_int_equal(dsig_sign(ed, priv, input, strlen(input), sig, sizeof sig, &sl), DSIG_OK);
    char *enc = jt_b64((const char *)sig, sl);
    assert_string_equal(enc, strrchr(jws, '.') + 1);
    free(enc);
    /* A.5: verification, with "EdDSA" in the allow-list, with opts->alg, and with a bound key */
    const char *allowed[] = {"EdDSA", NULL};
    dsig_jws_verify_opts o1 = {.allowed = allowed};
    assert_int_equal(jt_verify_embedded(jws, pub, &o1), DSIG_OK);
    dsig_jws_verify_opts o2 = {.alg = ed};
    assert_int_equal(jt_verify_embedded(jws, pub, &o2), DSIG_OK);
    json_t *bound = json_deep_copy(json_object_get(v, "public_jwk"));
    json_object_set_new(bound, "alg", json_string("EdDSA"));
    dsig_key *bk = jt_key_json(bound);
    assert_ptr_equal(dsig_key_alg(bk), ed);
    assert_int_equal(jt_verify_embedded(jws, bk, NULL), DSIG_OK);
    const char *hs_only[] = {"HS256", NULL};
    dsig_jws_verify_opts o3 = {.allowed = hs_only};
    assert_int_equal(jt_verify_embedded(jws, bk, &o3), DSIG_E_ALG_NOT_ALLOWED);
    /* streaming JWS signing (randomized) verifies */
    dsig_jws_sign_opts so = {.format = DSIG_FMT_COMPACT_B64, .include_kid = 1};
    dsig_jws_sign_ctx *sc;
    assert_int_equal(dsig_jws_sign_init(&sc, ed, priv, &so), DSIG_OK);
    const char *msg = tu_str(v, "payload_utf8");
    assert_int_equal(dsig_jws_sign_update(sc, msg, strlen(msg)), DSIG_OK);
    char *out;
    size_t out_len;
    assert_int_equal(dsig_jws_sign_final(sc, &out, &out_len), DSIG_OK);
    assert_int_equal(jt_verify_embedded(out, bk, NULL), DSIG_OK);
    dsig_free(out);
    dsig_key_free(bk);
    json_decref(bound);
    dsig_key_free(priv);
    dsig_key_free(pub);
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc7515_a1_hs256), cmocka_unit_test(test_rfc7515_a2_rs256),
        cmocka_unit_test(test_rfc7515_a3_es256), cmocka_unit_test(test_rfc7515_a4_es512),
        cmocka_unit_test(test_rfc7515_a5_none),  cmocka_unit_test(test_rfc7515_a6_general_json),
        cmocka_unit_test(test_rfc7515_a7_flattened), cmocka_unit_test(test_rfc7797_4_2),
        cmocka_unit_test(test_rfc7797_4_1),      cmocka_unit_test(test_rfc8037),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
