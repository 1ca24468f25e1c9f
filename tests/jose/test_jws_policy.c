/* JWS verification policy: every rejection of the contract in include/dsig/jws.h, with its code. */
#include <stdlib.h>
#include <string.h>

#include "jose_test_util.h"

static const char *const allow_hs[] = {"HS256", NULL};
static const dsig_jws_verify_opts vo = {.allowed = allow_hs};

/* Forge with the A.1 HMAC key and expect `code` from embedded verification. */
static void expect_hdr(const char *hdr, const char *payload_seg, int code, const char *detail_part)
{
    char *jws = jt_forge(hdr, payload_seg, jt_hs, jt_hkey);
    int rc = jt_verify_embedded(jws, jt_hkey, &vo);
    if (rc != code)
        fail_msg("header %s: got %d (%s), want %d", hdr, rc, dsig_last_error_detail(), code);
    if (detail_part && !strstr(dsig_last_error_detail(), detail_part))
        fail_msg("header %s: detail \"%s\" lacks \"%s\"", hdr, dsig_last_error_detail(), detail_part);
    free(jws);
}

static void test_header_policy(void **state)
{
    (void)state;
    jt_need("HS256");
    expect_hdr("{\"alg\":\"HS256\"}", "JC4wMg", DSIG_OK, NULL);
    expect_hdr("{\"alg\":\"none\"}", "JC4wMg", DSIG_E_HEADER, "none");
    expect_hdr("{\"alg\":\"NONE\"}", "JC4wMg", DSIG_E_HEADER, "NONE");
    expect_hdr("{\"typ\":\"JWT\"}", "JC4wMg", DSIG_E_HEADER, "\"alg\" is missing");
    expect_hdr("{\"alg\":256}", "JC4wMg", DSIG_E_HEADER, "string");
    expect_hdr("{\"alg\":\"HS256\",\"b64\":false}", "JC4wMg", DSIG_E_HEADER, "crit");
    expect_hdr("{\"alg\":\"HS256\",\"b64\":\"false\",\"crit\":[\"b64\"]}", "x", DSIG_E_HEADER, "b64");
    expect_hdr("{\"alg\":\"HS256\",\"b64\":false,\"crit\":[\"b64\"]}", "x", DSIG_OK, NULL);
    expect_hdr("{\"alg\":\"HS256\",\"exp\":1,\"crit\":[\"exp\"]}", "JC4wMg", DSIG_E_HEADER,
               "\"crit\" lists unknown member \"exp\"");
    expect_hdr("{\"alg\":\"HS256\",\"b64\":false,\"crit\":\"b64\"}", "x", DSIG_E_HEADER, "array");
    expect_hdr("{\"alg\":\"HS256\",\"crit\":[]}", "JC4wMg", DSIG_E_HEADER, "empty");
    expect_hdr("{\"alg\":\"HS256\",\"b64\":false,\"crit\":[\"b64\",\"b64\"]}", "x", DSIG_E_HEADER, "twice");
    expect_hdr("{\"alg\":\"HS256\",\"crit\":[\"b64\"]}", "JC4wMg", DSIG_E_HEADER, "no such member");
    expect_hdr("{\"alg\":\"HS256\",\"crit\":[7]}", "JC4wMg", DSIG_E_HEADER, "not a string");
    expect_hdr("{\"alg\":\"HS256\",\"alg\":\"HS256\"}", "JC4wMg", DSIG_E_JSON, "duplicate");
    expect_hdr("{\"alg\":\"HS256\"} x", "JC4wMg", DSIG_E_JSON, NULL);
    expect_hdr("[\"HS256\"]", "JC4wMg", DSIG_E_JSON, "object");
    expect_hdr("{\"alg\":\"HS256\",\"kid\":5}", "JC4wMg", DSIG_E_HEADER, "kid");
    expect_hdr("{\"alg\":\"RS256\"}", "JC4wMg", DSIG_E_ALG_NOT_ALLOWED, "RS256");
    /* header just over the bound */
    size_t big = DSIG_JWS_MAX_HEADER + 10;
    char *h = malloc(big + 1);
    int n = snprintf(h, big + 1, "{\"alg\":\"HS256\",\"pad\":\"");
    memset(h + n, 'a', big - (size_t)n - 2);
    memcpy(h + big - 2, "\"}", 3);
    expect_hdr(h, "JC4wMg", DSIG_E_HEADER, "larger");
    /* and just under it: accepted */
    size_t ok = DSIG_JWS_MAX_HEADER;
    memset(h + n, 'a', ok - (size_t)n - 2);
    memcpy(h + ok - 2, "\"}", 3);
    expect_hdr(h, "JC4wMg", DSIG_OK, NULL);
    free(h);
}

/* Flip one bit / change one character of a valid JWS: every position must be rejected. */
static void test_tamper(void **state)
{
    (void)state;
    jt_need("HS256");
    char *jws = jt_forge("{\"alg\":\"HS256\"}", "JC4wMg", jt_hs, jt_hkey);
    size_t len = strlen(jws);
    assert_int_equal(jt_verify_embedded(jws, jt_hkey, &vo), DSIG_OK);
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            jws[i] ^= (char)(1 << bit);
            if (jws[i] != '\0')
                assert_int_not_equal(jt_verify_embedded(jws, jt_hkey, &vo), DSIG_OK);
            jws[i] ^= (char)(1 << bit);
        }
    }
    /* truncation at every length */
    for (size_t n = 0; n < len; n++) {
        char *t = strndup(jws, n);
        assert_int_not_equal(jt_verify_embedded(t, jt_hkey, &vo), DSIG_OK);
        free(t);
    }
    /* a trailing newline (from a file) is tolerated, other trailing bytes are not */
    char *nl = malloc(len + 3);
    snprintf(nl, len + 3, "%s\n", jws);
    assert_int_equal(jt_verify_embedded(nl, jt_hkey, &vo), DSIG_OK);
    snprintf(nl, len + 3, "%s.", jws);
    assert_int_not_equal(jt_verify_embedded(nl, jt_hkey, &vo), DSIG_OK);
    free(nl);
    free(jws);
}

/* Non-canonical base64url in each segment (non-zero trailing bits, padding, foreign characters). */
static void test_noncanonical(void **state)
{
    (void)state;
    jt_need("HS256");
    /* "JC4wMg" = "$.02"; "JC4wMh" differs only in the unused trailing bits */
    expect_hdr("{\"alg\":\"HS256\"}", "JC4wMh", DSIG_E_BASE64, "payload");
    expect_hdr("{\"alg\":\"HS256\"}", "JC4wMg==", DSIG_E_BASE64, "payload");
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    /* a 16-byte header encodes to 22 characters with 4 unused trailing bits: set one */
    char *h = jt_forge("{\"alg\":\"HS256\"} ", "JC4wMg", jt_hs, jt_hkey);
    assert_int_equal(jt_verify_embedded(h, jt_hkey, &vo), DSIG_OK);
    char *hl = strchr(h, '.') - 1;
    *hl = alphabet[(strchr(alphabet, *hl) - alphabet) | 1];
    assert_int_equal(jt_verify_embedded(h, jt_hkey, &vo), DSIG_E_BASE64);
    assert_non_null(strstr(dsig_last_error_detail(), "header"));
    free(h);
    char *jws = jt_forge("{\"alg\":\"HS256\"}", "JC4wMg", jt_hs, jt_hkey);
    /* signature: 32 bytes -> 43 chars with 2 spare bits: set them */
    char *s = strdup(jws);
    char *last = s + strlen(s) - 1;
    int v = (int)(strchr(alphabet, *last) - alphabet);
    *last = alphabet[v | 1];
    assert_int_equal(jt_verify_embedded(s, jt_hkey, &vo), DSIG_E_BASE64);
    assert_non_null(strstr(dsig_last_error_detail(), "signature"));
    free(s);
    free(jws);
}

/* Algorithm decision: the key and the caller decide; the header must agree. */
static void test_alg_decision(void **state)
{
    (void)state;
    jt_need("HS256");
    char *jws = jt_forge("{\"alg\":\"HS256\"}", "JC4wMg", jt_hs, jt_hkey);
    /* unbound key, no options: refused */
    assert_int_equal(jt_verify_embedded(jws, jt_hkey, NULL), DSIG_E_ALG_NOT_ALLOWED);
    /* allow-list without the header alg */
    const char *other[] = {"HS384", "HS512", NULL};
    dsig_jws_verify_opts o = {.allowed = other};
    assert_int_equal(jt_verify_embedded(jws, jt_hkey, &o), DSIG_E_ALG_NOT_ALLOWED);
    /* caller's alg differs from the header */
    const dsig_alg *hs512 = dsig_alg_by_name("HS512");
    if (hs512) {
        dsig_jws_verify_opts o2 = {.alg = hs512};
        assert_int_equal(jt_verify_embedded(jws, jt_hkey, &o2), DSIG_E_ALG_NOT_ALLOWED);
        assert_non_null(strstr(dsig_last_error_detail(), "HS256"));
    }
    /* HS256 header with an RSA public key: the classic confusion */
    if (dsig_alg_by_name("RS256")) {
        json_t *j = tu_load_json("jws/rfc7515/rfc7515_A.2.jwk");
        json_t *pub = json_pack("{s:s,s:O,s:O}", "kty", "RSA", "n", json_object_get(j, "n"), "e",
                                json_object_get(j, "e"));
        dsig_key *rk = jt_key_json(pub);
        const char *both[] = {"HS256", "RS256", NULL};
        dsig_jws_verify_opts o3 = {.allowed = both};
        assert_int_equal(jt_verify_embedded(jws, rk, &o3), DSIG_E_ALG_NOT_ALLOWED);
        assert_non_null(strstr(dsig_last_error_detail(), "RSA"));
        json_object_set_new(pub, "alg", json_string("RS256"));
        dsig_key *rb = jt_key_json(pub);
        assert_int_equal(jt_verify_embedded(jws, rb, NULL), DSIG_E_ALG_NOT_ALLOWED);
        assert_non_null(strstr(dsig_last_error_detail(), "bound to RS256"));
        dsig_key_free(rb);
        dsig_key_free(rk);
        json_decref(pub);
        json_decref(j);
    }
    /* ES256 header with a P-384 key */
    const dsig_alg *es384 = dsig_alg_by_name("ES384"), *es256 = dsig_alg_by_name("ES256");
    if (es384 && es256) {
        dsig_key *k384;
        uint8_t seed[32] = {1};
        dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
        assert_int_equal(dsig_key_generate(&k384, es384, &kp), DSIG_OK);
        assert_int_equal(dsig_key_set_alg(k384, NULL), DSIG_OK);
        const char *a[] = {"ES256", NULL};
        dsig_jws_verify_opts o4 = {.allowed = a};
        char *e = jt_forge("{\"alg\":\"ES256\"}", "JC4wMg", jt_hs, jt_hkey); /* signature irrelevant */
        assert_int_equal(jt_verify_embedded(e, k384, &o4), DSIG_E_ALG_NOT_ALLOWED);
        assert_non_null(strstr(dsig_last_error_detail(), "P-384"));
        free(e);
        dsig_key_free(k384);
    }
    free(jws);
}

/* Formats: detection, explicit-format mismatches, JSON structure errors, updates on embedded. */
static void test_formats(void **state)
{
    (void)state;
    assert_int_equal(dsig_jws_detect_format("a.b.c", 5), DSIG_FMT_COMPACT_B64);
    assert_int_equal(dsig_jws_detect_format("a..c\n", 5), DSIG_FMT_JWS);
    assert_int_equal(dsig_jws_detect_format("{}", 2), DSIG_FMT_JSON);
    assert_int_equal(dsig_jws_detect_format("a.b", 3), DSIG_FMT_RAW);
    assert_int_equal(dsig_jws_detect_format("a.b.c.d", 7), DSIG_FMT_RAW);
    assert_int_equal(dsig_jws_detect_format("a.$.c", 5), DSIG_FMT_RAW);
    assert_int_equal(dsig_jws_detect_format("\x01\x02", 2), DSIG_FMT_RAW);
    assert_int_equal(dsig_jws_detect_format("", 0), DSIG_FMT_RAW);
    jt_need("HS256");
    /* our own output, each format, then the wrong explicit format */
    static const char msg[] = "streamed payload";
    for (int f = DSIG_FMT_JWS; f <= DSIG_FMT_RAW; f++) {
        dsig_jws_sign_opts so = {.format = (dsig_format)f, .include_kid = 1};
        dsig_jws_sign_ctx *sc;
        assert_int_equal(dsig_jws_sign_init(&sc, jt_hs, jt_hkey, &so), DSIG_OK);
        assert_int_equal(dsig_jws_sign_update(sc, msg, sizeof msg - 1), DSIG_OK);
        char *out;
        size_t ol;
        assert_int_equal(dsig_jws_sign_final(sc, &out, &ol), DSIG_OK);
        dsig_jws_verify_opts o = {.format = (dsig_format)f, .alg = jt_hs};
        dsig_jws_verify_ctx *vc;
        if (f == DSIG_FMT_COMPACT_B64) {
            /* embedded payload: refused by the streaming API, verified by the compact one */
            assert_int_equal(dsig_jws_verify_init(&vc, jt_hkey, out, ol, &o), DSIG_E_FORMAT);
        } else {
            assert_int_equal(dsig_jws_verify_init(&vc, jt_hkey, out, ol, &o), DSIG_OK);
            assert_int_equal(dsig_jws_verify_update(vc, msg, sizeof msg - 1), DSIG_OK);
            assert_int_equal(dsig_jws_verify_final(vc), DSIG_OK);
        }
        if (f == DSIG_FMT_COMPACT_B64) {
            uint8_t *p;
            size_t pl;
            assert_int_equal(dsig_jws_verify_compact(jt_hkey, out, ol, &o, &p, &pl), DSIG_OK);
            assert_int_equal(pl, sizeof msg - 1);
            assert_memory_equal(p, msg, pl);
            dsig_free(p);
        } else {
            o.format = DSIG_FMT_AUTO;
            assert_int_equal(jt_verify_detached(f == DSIG_FMT_RAW ? "" : out, jt_hkey, &o, msg,
                                                sizeof msg - 1, 5),
                             f == DSIG_FMT_RAW ? DSIG_E_VERIFY : DSIG_OK);
            if (f == DSIG_FMT_RAW) {
                assert_int_equal(dsig_verify(jt_hs, jt_hkey, msg, sizeof msg - 1, (uint8_t *)out, ol), DSIG_OK);
                o.format = DSIG_FMT_RAW;
                assert_int_equal(dsig_jws_verify_init(&vc, jt_hkey, out, ol, &o), DSIG_OK);
                assert_int_equal(dsig_jws_verify_update(vc, msg, sizeof msg - 1), DSIG_OK);
                assert_int_equal(dsig_jws_verify_final(vc), DSIG_OK);
            }
        }
        dsig_free(out);
    }
    /* explicit DSIG_FMT_JWS with an embedded payload */
    char *jws = jt_forge("{\"alg\":\"HS256\"}", "JC4wMg", jt_hs, jt_hkey);
    dsig_jws_verify_opts oj = {.format = DSIG_FMT_JWS, .alg = jt_hs};
    dsig_jws_verify_ctx *vc;
    assert_int_equal(dsig_jws_verify_init(&vc, jt_hkey, jws, strlen(jws), &oj), DSIG_E_FORMAT);
    free(jws);
    /* JSON structure */
    static const struct {
        const char *json;
        int code;
    } bad[] = {
        {"{\"signature\":\"AA\"}", DSIG_E_JSON},
        {"{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\"}", DSIG_E_JSON},
        {"{\"protected\":1,\"signature\":\"AA\"}", DSIG_E_JSON},
        {"{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\",\"signature\":\"AA\",\"header\":[]}", DSIG_E_JSON},
        {"{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\",\"signature\":\"AA\",\"header\":{\"alg\":\"none\"}}",
         DSIG_E_HEADER},
        {"{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\",\"signature\":\"AA\",\"header\":{\"crit\":[]}}",
         DSIG_E_HEADER},
        {"{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\",\"signature\":\"AA\",\"protected\":\"x\"}", DSIG_E_JSON},
        {"{\"payload\":\"x\",\"signatures\":[]}", DSIG_E_UNSUPPORTED},
        {"{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\",\"signature\":\"\"}", DSIG_E_FORMAT},
        {"{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\",\"signature\":\"AA\"", DSIG_E_JSON},
    };
    dsig_jws_verify_opts oa = {.alg = jt_hs};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = dsig_jws_verify_init(&vc, jt_hkey, bad[i].json, strlen(bad[i].json), &oa);
        if (rc != bad[i].code)
            fail_msg("%s: got %d (%s), want %d", bad[i].json, rc, dsig_last_error_detail(), bad[i].code);
        assert_true(dsig_last_error_detail()[0] != '\0');
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_policy), cmocka_unit_test(test_tamper),
        cmocka_unit_test(test_noncanonical),  cmocka_unit_test(test_alg_decision),
        cmocka_unit_test(test_formats),
    };
    return cmocka_run_group_tests(tests, jt_setup_hs256, jt_teardown_hs256);
}
