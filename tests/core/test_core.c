/* Core: base64url (strict, canonical, streaming), registry, allocation counters, seeded RNG, io. */
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "testutil.h"

static void test_b64url_roundtrip(void **state)
{
    (void)state;
    uint8_t buf[300], dec[300];
    tu_fill(buf, sizeof buf, 1);
    for (size_t n = 0; n < sizeof buf; n++) {
        char enc[401];
        dsig_b64url_encode(enc, buf, n);
        assert_int_equal(strlen(enc), dsig_b64url_encoded_len(n));
        size_t m = 0;
        assert_int_equal(dsig_b64url_decode(enc, strlen(enc), dec, sizeof dec, &m), DSIG_OK);
        assert_int_equal(m, n);
        assert_memory_equal(dec, buf, n);
    }
}

static void test_b64url_rejects(void **state)
{
    (void)state;
    uint8_t out[16];
    size_t n;
    /* RFC 7515 example: "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9" decodes fine */
    assert_int_equal(dsig_b64url_decode("Zm9v", 4, out, sizeof out, &n), DSIG_OK);
    assert_int_equal(n, 3);
    assert_memory_equal(out, "foo", 3);
    assert_int_equal(dsig_b64url_decode("Zm8=", 4, out, sizeof out, &n), DSIG_E_BASE64); /* padding */
    assert_int_equal(dsig_b64url_decode("Zm8+", 4, out, sizeof out, &n), DSIG_E_BASE64); /* '+' */
    assert_int_equal(dsig_b64url_decode("Zm 8", 4, out, sizeof out, &n), DSIG_E_BASE64); /* space */
    assert_int_equal(dsig_b64url_decode("Zm9", 3, out, sizeof out, &n), DSIG_E_BASE64);  /* 'o' = Zm8 */
    assert_int_equal(dsig_b64url_decode("Zm8", 3, out, sizeof out, &n), DSIG_OK);
    assert_int_equal(dsig_b64url_decode("Z", 1, out, sizeof out, &n), DSIG_E_BASE64);    /* length */
    assert_int_equal(dsig_b64url_decode("Zh", 2, out, sizeof out, &n), DSIG_E_BASE64);   /* bits */
    assert_int_equal(dsig_b64url_decode("Zg", 2, out, sizeof out, &n), DSIG_OK);
    assert_int_equal(dsig_b64url_decode("-_", 2, out, sizeof out, &n), DSIG_E_BASE64);
    assert_int_equal(dsig_b64url_decode("-w", 2, out, sizeof out, &n), DSIG_OK);
    assert_int_equal(out[0], 0xfb);
    assert_non_null(dsig_last_error_detail());
}

struct sinkbuf {
    char text[2000];
    size_t len;
};

static int sink(void *arg, const char *t, size_t n)
{
    struct sinkbuf *s = arg;
    memcpy(s->text + s->len, t, n);
    s->len += n;
    return 0;
}

static void test_b64url_stream(void **state)
{
    (void)state;
    uint8_t buf[1000];
    tu_fill(buf, sizeof buf, 2);
    char ref[1400];
    dsig_b64url_encode(ref, buf, sizeof buf);
    for (size_t chunk = 1; chunk < 20; chunk++) {
        struct sinkbuf sb = {.len = 0};
        dsig_b64url_stream s;
        dsig_b64url_stream_init(&s, sink, &sb);
        for (size_t off = 0; off < sizeof buf; off += chunk) {
            size_t n = sizeof buf - off < chunk ? sizeof buf - off : chunk;
            assert_int_equal(dsig_b64url_stream_update(&s, buf + off, n), 0);
        }
        assert_int_equal(dsig_b64url_stream_final(&s), 0);
        assert_int_equal(sb.len, strlen(ref));
        assert_memory_equal(sb.text, ref, sb.len);
    }
}

static void test_registry(void **state)
{
    (void)state;
    size_t n = dsig_alg_count();
    for (size_t i = 0; i < n; i++) {
        const dsig_alg *a = dsig_alg_at(i);
        assert_non_null(a);
        assert_ptr_equal(dsig_alg_by_name(dsig_alg_name(a)), a);
        assert_non_null(dsig_alg_family(a));
        assert_non_null(dsig_alg_kty(a));
        assert_non_null(dsig_alg_description(a));
        assert_non_null(dsig_alg_baseline(a));
        assert_true(dsig_alg_sig_max(a) > 0);
        assert_true(dsig_alg_security_bits(a) >= 112);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(dsig_alg_name(dsig_alg_at(j)), dsig_alg_name(a));
    }
    assert_null(dsig_alg_at(n));
    assert_null(dsig_alg_by_name("none"));
    assert_null(dsig_alg_by_name("hs256")); /* names are case-sensitive */
}

static void test_alloc_counters(void **state)
{
    (void)state;
    dsig_alloc_stats a, b;
    dsig_alloc_stats_reset();
    dsig_alloc_stats_get(&a);
    void *p = dsig_malloc(1000);
    dsig_alloc_stats_get(&b);
    assert_int_equal(b.current - a.current, 1000);
    assert_true(b.peak >= a.current + 1000);
    dsig_free(p);
    dsig_alloc_stats_get(&b);
    assert_int_equal(b.current, a.current);
}

static void test_seeded_rng(void **state)
{
    (void)state;
    uint8_t seed[32] = {1, 2, 3};
    uint8_t x[64], y[64], z[64];
    dsig_rng r1, r2, r3;
    assert_int_equal(dsig_rng_init_seeded(&r1, seed, sizeof seed, "a"), 0);
    assert_int_equal(dsig_rng_init_seeded(&r2, seed, sizeof seed, "a"), 0);
    assert_int_equal(dsig_rng_init_seeded(&r3, seed, sizeof seed, "b"), 0);
    assert_int_equal(dsig_rng_bytes(&r1, x, 64), 0);
    assert_int_equal(dsig_rng_bytes(&r2, y, 64), 0);
    assert_int_equal(dsig_rng_bytes(&r3, z, 64), 0);
    assert_memory_equal(x, y, 64);
    assert_memory_not_equal(x, z, 64);
    assert_int_equal(dsig_rng_bytes(&r1, y, 64), 0); /* the next request gives fresh bytes */
    assert_memory_not_equal(x, y, 64);
    dsig_rng_clear(&r1);
    dsig_rng_clear(&r2);
    dsig_rng_clear(&r3);
}

static int count_cb(void *arg, const uint8_t *d, size_t n)
{
    (void)d;
    *(size_t *)arg += n;
    return 0;
}

static void test_read_fd(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    uint8_t buf[5000];
    tu_fill(buf, sizeof buf, 3);
    assert_int_equal(write(p[1], buf, sizeof buf), (ssize_t)sizeof buf);
    close(p[1]);
    size_t seen = 0;
    uint64_t total = 0;
    assert_int_equal(dsig_read_fd(p[0], NULL, 7, count_cb, &seen, &total), 0);
    assert_int_equal(seen, sizeof buf);
    assert_int_equal(total, sizeof buf);
    close(p[0]);
    assert_int_equal(dsig_read_fd(p[0], NULL, 7, count_cb, &seen, &total), DSIG_E_IO);
    assert_non_null(strstr(dsig_last_error_detail(), "read failed"));
}

static void test_strerror(void **state)
{
    (void)state;
    for (int c = 0; c >= DSIG_E_UNAVAILABLE; c--)
        assert_string_not_equal(dsig_strerror(c), "unknown error");
    assert_string_equal(dsig_strerror(12345), "unknown error");
}

/* Signing options: defaults behave like the plain calls; anything else is refused, loudly, by
 * algorithms that take no options, and malformed options are refused before any provider runs. */
static void test_sign_opts(void **state)
{
    (void)state;
    const dsig_alg *hs = dsig_alg_by_name("HS256");
    assert_non_null(hs);
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, hs, NULL), DSIG_OK);
    uint8_t sig[64], sig2[64];
    size_t n = 0, n2 = 0;
    dsig_sign_opts zero = {0};
    assert_int_equal(dsig_sign_ex(hs, k, "abc", 3, sig, sizeof sig, &n, &zero), DSIG_OK);
    assert_int_equal(dsig_sign(hs, k, "abc", 3, sig2, sizeof sig2, &n2), DSIG_OK);
    assert_int_equal(n, n2);
    assert_memory_equal(sig, sig2, n);
    assert_int_equal(dsig_verify_ex(hs, k, "abc", 3, sig, n, NULL), DSIG_OK);

    uint8_t ctx[300] = {1};
    dsig_sign_opts with_ctx = {.context = ctx, .context_len = 3};
    assert_int_equal(dsig_sign_ex(hs, k, "abc", 3, sig, sizeof sig, &n, &with_ctx), DSIG_E_UNSUPPORTED);
    assert_non_null(strstr(dsig_last_error_detail(), "HS256"));
    assert_int_equal(dsig_verify_ex(hs, k, "abc", 3, sig2, n2, &with_ctx), DSIG_E_UNSUPPORTED);
    dsig_sign_opts det = {.deterministic = 1};
    assert_int_equal(dsig_sign_ex(hs, k, "abc", 3, sig, sizeof sig, &n, &det), DSIG_E_UNSUPPORTED);
    dsig_sign_opts ph = {.prehash = "SHA-256"};
    dsig_sign_ctx *c = NULL;
    assert_int_equal(dsig_sign_init_ex(&c, hs, k, &ph), DSIG_E_UNSUPPORTED);
    assert_null(c);
    dsig_sign_opts too_long = {.context = ctx, .context_len = 256};
    assert_int_equal(dsig_sign_ex(hs, k, "abc", 3, sig, sizeof sig, &n, &too_long), DSIG_E_ARG);
    assert_non_null(strstr(dsig_last_error_detail(), "255"));
    dsig_sign_opts null_ctx = {.context = NULL, .context_len = 4};
    assert_int_equal(dsig_sign_ex(hs, k, "abc", 3, sig, sizeof sig, &n, &null_ctx), DSIG_E_ARG);
    dsig_key_free(k);
}

/* Key types come from the registered descriptors: each one listed once, each listed one taken by some
 * algorithm, each algorithm's found again by its JWK names (kty + crv, or kty + alg). */
static void test_keytypes_from_registry(void **state)
{
    (void)state;
    const struct dsig_keytype *const *list = dsig_keytype_list();
    size_t n = 0;
    for (; list[n]; n++) {
        for (size_t j = 0; j < n; j++)
            assert_ptr_not_equal(list[j], list[n]);
        int taken = 0;
        for (size_t i = 0; i < dsig_alg_count() && !taken; i++)
            taken = dsig_alg_takes_keytype(dsig_alg_at(i), list[n]);
        assert_true(taken);
        assert_ptr_equal(dsig_keytype_find_jwk(list[n]->kty, list[n]->crv, list[n]->alg), list[n]);
    }
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const dsig_alg *a = dsig_alg_at(i);
        int found = 0;
        for (size_t j = 0; j < n; j++)
            found |= list[j] == a->keytype;
        assert_true(found);
    }
    assert_ptr_equal(dsig_keytype_list(), list); /* built once */
    assert_non_null(dsig_keytype_find("oct", NULL));
    assert_non_null(dsig_keytype_find("EC", "GOST-256-A")); /* only in GOST's keytypes list */
    assert_non_null(dsig_keytype_find_jwk("AKP", NULL, "ML-DSA-65"));
    assert_null(dsig_keytype_find("AKP", NULL)); /* AKP types answer only with their "alg" */
    assert_true(dsig_keytype_kty_needs_alg("AKP"));
    assert_false(dsig_keytype_kty_needs_alg("EC"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_b64url_roundtrip), cmocka_unit_test(test_b64url_rejects),
        cmocka_unit_test(test_b64url_stream),    cmocka_unit_test(test_registry),
        cmocka_unit_test(test_alloc_counters),   cmocka_unit_test(test_seeded_rng),
        cmocka_unit_test(test_read_fd),          cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_sign_opts),        cmocka_unit_test(test_keytypes_from_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
