/*
 * Embedded payloads never reach the detached (streaming) API: dsig_jws_verify_init refuses any JWS
 * that carries its payload (compact with a non-empty middle segment, flattened JSON with "payload"),
 * so that a detached verification of an empty or truncated download can never "pass" on the payload
 * hidden in the signature. dsig_jws_verify_compact is the one entry point for embedded payloads, and
 * dsig_jws_has_embedded_payload tells a caller which one to use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jose_test_util.h"


/* Our own COMPACT_B64 signature over `msg` (malloc'ed copy, NUL-terminated). */
static char *sign_compact(const char *msg)
{
    dsig_jws_sign_opts so = {.format = DSIG_FMT_COMPACT_B64};
    dsig_jws_sign_ctx *sc;
    assert_int_equal(dsig_jws_sign_init(&sc, jt_hs, jt_hkey, &so), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(sc, msg, strlen(msg)), DSIG_OK);
    char *out;
    size_t ol;
    assert_int_equal(dsig_jws_sign_final(sc, &out, &ol), DSIG_OK);
    char *copy = strdup(out);
    dsig_free(out);
    return copy;
}

/* The flattened JSON serialization of a compact JWS, with its payload ("payload" member). */
static char *to_json_with_payload(const char *compact)
{
    const char *d1 = strchr(compact, '.');
    const char *d2 = strchr(d1 + 1, '.');
    char *out = malloc(strlen(compact) + 64);
    sprintf(out, "{\"protected\":\"%.*s\",\"payload\":\"%.*s\",\"signature\":\"%s\"}\n",
            (int)(d1 - compact), compact, (int)(d2 - d1 - 1), d1 + 1, d2 + 1);
    return out;
}

/* What the security review reproduced: "hello" signed as JSON with its payload, then "verified"
 * detached against an empty payload (no update at all) — must never be DSIG_OK. */
static void test_detached_refuses_embedded_json(void **state)
{
    (void)state;
    jt_need("HS256");
    char *compact = sign_compact("hello");
    char *json = to_json_with_payload(compact);
    dsig_format fmts[] = {DSIG_FMT_AUTO, DSIG_FMT_JSON};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        dsig_jws_verify_opts o = {.format = fmts[i], .alg = jt_hs};
        dsig_jws_verify_ctx *c = (dsig_jws_verify_ctx *)1;
        int rc = dsig_jws_verify_init(&c, jt_hkey, json, strlen(json), &o);
        if (rc == DSIG_OK) {
            int fin = dsig_jws_verify_final(c); /* the old behaviour: DSIG_OK over an empty payload */
            fail_msg("format %d: detached init accepted a JWS with an embedded payload (final %d)",
                     (int)fmts[i], fin);
        }
        assert_int_equal(rc, DSIG_E_FORMAT);
        assert_null(c);
        assert_non_null(strstr(dsig_last_error_detail(), "dsig_jws_verify_compact"));
        /* the empty payload as a stream of zero-length updates changes nothing */
        assert_int_equal(jt_verify_detached(json, jt_hkey, &o, "", 0, 0), DSIG_E_FORMAT);
        assert_int_equal(jt_verify_detached(json, jt_hkey, &o, "hello", 5, 0), DSIG_E_FORMAT);
    }
    /* the one entry point for embedded payloads verifies it and returns the payload */
    dsig_jws_verify_opts o = {.alg = jt_hs};
    uint8_t *p = NULL;
    size_t n = 0;
    assert_int_equal(dsig_jws_verify_compact(jt_hkey, json, strlen(json), &o, &p, &n), DSIG_OK);
    assert_int_equal(n, 5);
    assert_memory_equal(p, "hello", 5);
    dsig_free(p);
    o.format = DSIG_FMT_JSON;
    assert_int_equal(jt_verify_embedded(json, jt_hkey, &o), DSIG_OK);
    /* an empty embedded payload ("payload":"") is still embedded */
    char *empty_compact = sign_compact("");
    char *empty_json = to_json_with_payload(empty_compact);
    assert_non_null(strstr(empty_json, "\"payload\":\"\""));
    o.format = DSIG_FMT_AUTO;
    assert_int_equal(jt_verify_detached(empty_json, jt_hkey, &o, "", 0, 0), DSIG_E_FORMAT);
    assert_int_equal(jt_verify_embedded(empty_json, jt_hkey, &o), DSIG_OK);
    /* a "payload" that is not a string is refused too, never ignored */
    const char *bad = "{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\",\"payload\":1,\"signature\":\"AA\"}";
    assert_int_not_equal(jt_verify_detached(bad, jt_hkey, &o, "", 0, 0), DSIG_OK);
    free(empty_json);
    free(empty_compact);
    free(json);
    free(compact);
}

/* Compact JWS with a payload segment: refused by the streaming API whatever the declared format. */
static void test_detached_refuses_embedded_compact(void **state)
{
    (void)state;
    jt_need("HS256");
    char *compact = sign_compact("hello");
    dsig_format fmts[] = {DSIG_FMT_AUTO, DSIG_FMT_COMPACT_B64, DSIG_FMT_JWS};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        dsig_jws_verify_opts o = {.format = fmts[i], .alg = jt_hs};
        dsig_jws_verify_ctx *c = NULL;
        int rc = dsig_jws_verify_init(&c, jt_hkey, compact, strlen(compact), &o);
        if (rc == DSIG_OK) {
            int fin = dsig_jws_verify_final(c);
            fail_msg("format %d: detached init accepted a compact JWS with a payload (final %d)",
                     (int)fmts[i], fin);
        }
        assert_int_equal(rc, DSIG_E_FORMAT);
        assert_non_null(strstr(dsig_last_error_detail(), "dsig_jws_verify_compact"));
    }
    /* DSIG_FMT_COMPACT_B64 declares an embedded payload even with an empty middle segment */
    char *empty = sign_compact("");
    dsig_jws_verify_opts ob = {.format = DSIG_FMT_COMPACT_B64, .alg = jt_hs};
    assert_int_equal(jt_verify_detached(empty, jt_hkey, &ob, "", 0, 0), DSIG_E_FORMAT);
    assert_int_equal(jt_verify_embedded(empty, jt_hkey, &ob), DSIG_OK);
    free(empty);
    dsig_jws_verify_opts o = {.alg = jt_hs};
    assert_int_equal(jt_verify_embedded(compact, jt_hkey, &o), DSIG_OK);
    free(compact);
}

/* Detached signatures still stream as before. */
static void test_detached_still_works(void **state)
{
    (void)state;
    jt_need("HS256");
    for (int f = DSIG_FMT_JWS; f <= DSIG_FMT_JSON; f++) {
        dsig_jws_sign_opts so = {.format = (dsig_format)f};
        dsig_jws_sign_ctx *sc;
        assert_int_equal(dsig_jws_sign_init(&sc, jt_hs, jt_hkey, &so), DSIG_OK);
        assert_int_equal(dsig_jws_sign_update(sc, "hello", 5), DSIG_OK);
        char *out;
        size_t ol;
        assert_int_equal(dsig_jws_sign_final(sc, &out, &ol), DSIG_OK);
        assert_int_equal(dsig_jws_has_embedded_payload(out, ol), 0);
        dsig_jws_verify_opts o = {.alg = jt_hs};
        assert_int_equal(jt_verify_detached(out, jt_hkey, &o, "hello", 5, 2), DSIG_OK);
        assert_int_equal(jt_verify_detached(out, jt_hkey, &o, "", 0, 0), DSIG_E_VERIFY);
        dsig_free(out);
    }
}

/* dsig_jws_has_embedded_payload: 1 / 0 / negative error. */
static void test_has_embedded_payload(void **state)
{
    (void)state;
    assert_int_equal(dsig_jws_has_embedded_payload("a.b.c", 5), 1);
    assert_int_equal(dsig_jws_has_embedded_payload("a..c\n", 5), 0);
    assert_int_equal(dsig_jws_has_embedded_payload("\x01\x02\x03", 3), 0); /* raw signature bytes */
    assert_int_equal(dsig_jws_has_embedded_payload("{\"protected\":\"a\",\"signature\":\"b\"}", 34), 0);
    static const char with[] = "{\"protected\":\"a\",\"payload\":\"\",\"signature\":\"b\"}\r\n";
    assert_int_equal(dsig_jws_has_embedded_payload(with, sizeof with - 1), 1);
    static const char nonstr[] = "{\"protected\":\"a\",\"payload\":null,\"signature\":\"b\"}";
    assert_int_equal(dsig_jws_has_embedded_payload(nonstr, sizeof nonstr - 1), 1);
    /* errors: JSON that does not parse, duplicate members, NULL */
    assert_true(dsig_jws_has_embedded_payload("{\"protected\":", 13) < 0);
    assert_true(dsig_last_error_detail()[0] != '\0');
    static const char dup[] = "{\"payload\":\"a\",\"payload\":\"b\"}";
    assert_true(dsig_jws_has_embedded_payload(dup, sizeof dup - 1) < 0);
    assert_int_equal(dsig_jws_has_embedded_payload(NULL, 3), DSIG_E_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detached_refuses_embedded_json),
        cmocka_unit_test(test_detached_refuses_embedded_compact),
        cmocka_unit_test(test_detached_still_works),
        cmocka_unit_test(test_has_embedded_payload),
    };
    return cmocka_run_group_tests(tests, jt_setup_hs256, jt_teardown_hs256);
}
