/*
 * SLH-DSA verification against known answers: ACVP sigVer vsId 53 (internal interface; the invalid
 * cases — modified signature, modified message, too-short signature — must be rejected), BoringSSL
 * sigver files (SHA2-128s, SHAKE-256f) and BoringSSL's HashSLH-DSA pre-hash file (external interface
 * with context, FIPS 205 Algorithm 25; BoringSSL-generated, not NIST data).
 */
#include "slh_testlib.h"

/* ACVP sigVer: testPassed must match; internalProjection's reason is printed for rejected cases. */
static void test_acvp_sigver(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigVer-FIPS205/prompt.json");
    json_t *expect = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigVer-FIPS205/expectedResults.json");
    json_t *proj = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigVer-FIPS205/internalProjection.json");
    size_t gi, ti, pass = 0, reject = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), gi, g) {
        const dsig_slhdsa_params *p = slh_group_params(g);
        json_t *etests = json_object_get(json_array_get(json_object_get(expect, "testGroups"), gi), "tests");
        json_t *ptests = json_object_get(json_array_get(json_object_get(proj, "testGroups"), gi), "tests");
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            json_int_t id = json_integer_value(json_object_get(t, "tcId"));
            size_t lpk, lm, ls;
            uint8_t *pk = slh_jhex(t, "pk", &lpk), *m = slh_jhex(t, "message", &lm);
            uint8_t *sig = slh_jhex(t, "signature", &ls);
            int want = json_is_true(json_object_get(slh_find_tc(etests, id), "testPassed"));
            const char *reason = tu_str(slh_find_tc(ptests, id), "reason");
            assert_int_equal(lpk, p->pk_bytes);
            int rc = dsig_slhdsa_verify_internal(p, pk, m, lm, sig, ls);
            if (want) {
                assert_int_equal(rc, DSIG_OK);
                pass++;
            } else {
                assert_int_equal(rc, DSIG_E_VERIFY);
                print_message("  %-20s tcId %lld rejected as expected (%s): %s\n", p->name,
                              (long long)id, reason, dsig_last_error_detail());
                reject++;
            }
            free(pk), free(m), free(sig);
        }
    }
    assert_true(pass >= 5);
    assert_true(reject >= 5);
    json_decref(prompt);
    json_decref(expect);
    json_decref(proj);
}

/* BoringSSL sigver files: pub, msg, sig, valid (true/false). */
static void boring_sigver(const char *file, const dsig_slhdsa_params *p)
{
    size_t len;
    char *text = tu_read_vector_file(file, &len), *cur = text;
    slh_record r;
    int count = 0, rejected = 0;
    while (slh_next_record(&cur, &r)) {
        if (slh_field(&r, "valid") == NULL)
            continue;
        size_t lp, lm, ls;
        uint8_t *pk = tu_hex(slh_field(&r, "pub"), &lp), *m = tu_hex(slh_field(&r, "msg"), &lm);
        uint8_t *sig = tu_hex(slh_field(&r, "sig"), &ls);
        int want = strcmp(slh_field(&r, "valid"), "true") == 0;
        assert_int_equal(lp, p->pk_bytes);
        int rc = dsig_slhdsa_verify_internal(p, pk, m, lm, sig, ls);
        assert_int_equal(rc, want ? DSIG_OK : DSIG_E_VERIFY);
        rejected += !want;
        free(pk), free(m), free(sig);
        count++;
    }
    print_message("  %-20s BoringSSL sigver %d records (%d invalid rejected)\n", p->name, count, rejected);
    assert_true(count >= 5);
    free(text);
}

static void test_boringssl_sigver(void **state)
{
    (void)state;
    boring_sigver("slhdsa/boringssl/slhdsa_sha2_128s_sigver.txt", &dsig_slhdsa_sha2_128s);
    boring_sigver("slhdsa/boringssl/slhdsa_shake_256f_sigver.txt", &dsig_slhdsa_shake_256f);
}

/* BoringSSL HashSLH-DSA: pub, hash (PH name), msg (= PH(M)), context, sig. Also: a changed context,
 * a changed digest and the pure interface over the same bytes must all be rejected. */
static void test_boringssl_prehash(void **state)
{
    (void)state;
    const dsig_slhdsa_params *p = &dsig_slhdsa_sha2_128s;
    size_t len;
    char *text = tu_read_vector_file("slhdsa/boringssl/slhdsa_sha2_128s_prehash.txt", &len), *cur = text;
    slh_record r;
    int count = 0;
    while (slh_next_record(&cur, &r)) {
        if (slh_field(&r, "sig") == NULL)
            continue;
        const dsig_slhdsa_prehash *ph = dsig_slhdsa_prehash_find(slh_field(&r, "hash"));
        assert_non_null(ph);
        size_t lp, lm, lc, ls;
        uint8_t *pk = tu_hex(slh_field(&r, "pub"), &lp), *m = tu_hex(slh_field(&r, "msg"), &lm);
        uint8_t *ctx = tu_hex(slh_field(&r, "context"), &lc), *sig = tu_hex(slh_field(&r, "sig"), &ls);
        assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, lm, ctx, lc, ph, 1, sig, ls), DSIG_OK);
        /* Another context: empty, or one byte when the record's is empty. */
        uint8_t other = 0x55;
        assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, lm, &other, lc > 0 ? 0 : 1, ph, 1, sig, ls),
                         DSIG_E_VERIFY);
        assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, lm, ctx, lc, NULL, 0, sig, ls), DSIG_E_VERIFY);
        m[0] ^= 1;
        assert_int_equal(dsig_slhdsa_verify_ext(p, pk, m, lm, ctx, lc, ph, 1, sig, ls), DSIG_E_VERIFY);
        print_message("  %-20s HashSLH-DSA (%s, |ctx| = %zu) verified\n", p->name, ph->name, lc);
        free(pk), free(m), free(ctx), free(sig);
        count++;
    }
    assert_int_equal(count, 2);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acvp_sigver),
        cmocka_unit_test(test_boringssl_sigver),
        cmocka_unit_test(test_boringssl_prehash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
