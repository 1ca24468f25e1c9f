/* dsig_sign_final with no buffer or a buffer too small: the size is reported and the context keeps
 * the signature (a streamed payload cannot be fed again), then a buffer that fits receives it. */
#include <string.h>

#include "testutil.h"

/* Stream `msg` into a new signing context. */
static dsig_sign_ctx *streamed(const dsig_alg *alg, const dsig_key *key, const char *msg)
{
    dsig_sign_ctx *c = NULL;
    assert_int_equal(dsig_sign_init(&c, alg, key), DSIG_OK);
    assert_int_equal(dsig_sign_update(c, msg, 5), DSIG_OK);
    assert_int_equal(dsig_sign_update(c, msg + 5, strlen(msg) - 5), DSIG_OK);
    return c;
}

/* A too-small buffer, then the right one: the kept signature is the one a big buffer gets. */
static void test_small_buffer_keeps_signature(void **state)
{
    (void)state;
    const char *msg = "a payload that streamed once";
    const char *names[] = {"HS256", "Ed25519", "ES256", "ML-DSA-44"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const dsig_alg *alg = dsig_alg_by_name(names[i]);
        if (!alg)
            continue;
        dsig_key *key = NULL, *pub = NULL;
        assert_int_equal(dsig_key_generate(&key, alg, NULL), DSIG_OK);
        pub = key;
        if (!(dsig_alg_flags(alg) & DSIG_ALG_SYMMETRIC))
            assert_int_equal(dsig_key_public(&pub, key), DSIG_OK);
        uint8_t sig[8192], small[8];
        size_t len = 0;
        dsig_sign_ctx *c = streamed(alg, key, msg);
        assert_int_equal(dsig_sign_final(c, small, sizeof small, &len), DSIG_E_BUFFER);
        assert_true(len > sizeof small && len <= dsig_alg_sig_max(alg));
        assert_non_null(strstr(dsig_last_error_detail(), "keeps the signature"));
        size_t need = len;
        /* Still too small by one byte: kept again, same size reported. */
        assert_int_equal(dsig_sign_final(c, sig, need - 1, &len), DSIG_E_BUFFER);
        assert_int_equal(len, need);
        /* The context no longer takes payload. */
        assert_int_equal(dsig_sign_update(c, "x", 1), DSIG_E_STATE);
        memset(sig, 0, sizeof sig);
        assert_int_equal(dsig_sign_final(c, sig, need, &len), DSIG_OK); /* frees c */
        assert_int_equal(len, need);
        assert_int_equal(dsig_verify(alg, pub, msg, strlen(msg), sig, len), DSIG_OK);
        if (pub != key)
            dsig_key_free(pub);
        dsig_key_free(key);
    }
}

/* A NULL buffer asks for the size; the signature made then is the one delivered afterwards. */
static void test_null_buffer_queries_size(void **state)
{
    (void)state;
    const dsig_alg *alg = dsig_alg_by_name("HS256");
    dsig_key *key = NULL;
    assert_int_equal(dsig_key_generate(&key, alg, NULL), DSIG_OK);
    const char *msg = "deterministic MAC over a stream";
    uint8_t want[64], sig[64];
    size_t want_len = 0, len = 0;
    assert_int_equal(dsig_sign(alg, key, msg, strlen(msg), want, sizeof want, &want_len), DSIG_OK);
    dsig_sign_ctx *c = streamed(alg, key, msg);
    assert_int_equal(dsig_sign_final(c, NULL, 0, &len), DSIG_OK);
    assert_int_equal(len, want_len);
    assert_int_equal(dsig_sign_final(c, NULL, 0, &len), DSIG_OK); /* asking twice is harmless */
    assert_int_equal(dsig_sign_final(c, sig, sizeof sig, &len), DSIG_OK);
    assert_int_equal(len, want_len);
    assert_memory_equal(sig, want, want_len);
    /* Abort after a query or a short buffer frees everything (ASan: no leak). */
    c = streamed(alg, key, msg);
    assert_int_equal(dsig_sign_final(c, NULL, 0, &len), DSIG_OK);
    dsig_sign_abort(c);
    c = streamed(alg, key, msg);
    assert_int_equal(dsig_sign_final(c, sig, 1, &len), DSIG_E_BUFFER);
    dsig_sign_abort(c);
    /* A NULL length is an argument error and frees the context. */
    c = streamed(alg, key, msg);
    assert_int_equal(dsig_sign_final(c, sig, sizeof sig, NULL), DSIG_E_ARG);
    /* The one-shot form with a small buffer reports the size and leaks nothing. */
    assert_int_equal(dsig_sign(alg, key, msg, strlen(msg), sig, 4, &len), DSIG_E_BUFFER);
    dsig_key_free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_buffer_keeps_signature),
        cmocka_unit_test(test_null_buffer_queries_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
