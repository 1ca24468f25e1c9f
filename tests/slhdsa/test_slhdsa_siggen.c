/*
 * SLH-DSA signing, byte-exact against known answers on the internal interface (FIPS 205 Algorithm 19):
 * ACVP sigGen vsId 53 (SHA2-192s, SHA2-256f, SHAKE-128f, SHAKE-192s, SHAKE-256f; deterministic and
 * randomized) and BoringSSL's SHA2-128s / SHAKE-256f siggen files. Each produced signature is also
 * verified, and checked through the streaming path (PRF_msg / H_msg fed in chunks).
 *
 * Sampling: under AddressSanitizer (DSIG_SLH_SAMPLE=1, set by CMake for sanitizer builds) only the first
 * test of each ACVP group and the first two BoringSSL records per file are signed; release runs all.
 */
#include "slh_testlib.h"

static int sample_mode(void)
{
    const char *s = getenv("DSIG_SLH_SAMPLE");
    return s != NULL && s[0] == '1';
}

/* Sign M through the streaming API (two passes, chunked) and compare with the one-shot result. */
static void streaming_matches(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *m,
                              size_t mlen, const uint8_t *addrnd, const uint8_t *expect)
{
    uint8_t r[DSIG_SLHDSA_NMAX], digest[DSIG_SLHDSA_MMAX];
    dsig_slhdsa_msg h;
    size_t chunk = 7 + mlen / 5;
    assert_int_equal(dsig_slhdsa_prf_msg_init(&h, p, sk + p->n, addrnd ? addrnd : sk + 2 * p->n), DSIG_OK);
    for (size_t off = 0; off < mlen; off += chunk)
        assert_int_equal(dsig_slhdsa_msg_update(&h, m + off, mlen - off < chunk ? mlen - off : chunk), DSIG_OK);
    assert_int_equal(dsig_slhdsa_msg_final(&h, r), DSIG_OK);
    assert_memory_equal(r, expect, p->n);
    assert_int_equal(dsig_slhdsa_h_msg_init(&h, p, r, sk + 2 * p->n), DSIG_OK);
    for (size_t off = 0; off < mlen; off += chunk)
        assert_int_equal(dsig_slhdsa_msg_update(&h, m + off, mlen - off < chunk ? mlen - off : chunk), DSIG_OK);
    assert_int_equal(dsig_slhdsa_msg_final(&h, digest), DSIG_OK);
    assert_int_equal(dsig_slhdsa_verify_digest(p, sk + 2 * p->n, expect, digest), DSIG_OK);
}

/* One known-answer signature: sign, compare, verify. */
static void check_sig(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *m, size_t mlen,
                      const uint8_t *addrnd, const uint8_t *expect, size_t elen, int streaming)
{
    assert_int_equal(elen, p->sig_bytes);
    uint8_t *sig = malloc(p->sig_bytes);
    assert_non_null(sig);
    assert_int_equal(dsig_slhdsa_sign_internal(p, sk, m, mlen, addrnd, sig), DSIG_OK);
    assert_memory_equal(sig, expect, p->sig_bytes);
    assert_int_equal(dsig_slhdsa_verify_internal(p, sk + 2 * p->n, m, mlen, sig, p->sig_bytes), DSIG_OK);
    if (streaming)
        streaming_matches(p, sk, m, mlen, addrnd, sig);
    free(sig);
}

/* ACVP sigGen vsId 53: every group; deterministic groups use opt_rand = PK.seed. */
static void test_acvp_siggen(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigGen-FIPS205/prompt.json");
    json_t *expect = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigGen-FIPS205/expectedResults.json");
    json_t *egroups = json_object_get(expect, "testGroups");
    size_t gi, ti, count = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), gi, g) {
        const dsig_slhdsa_params *p = slh_group_params(g);
        int det = json_is_true(json_object_get(g, "deterministic"));
        json_t *eg = json_array_get(egroups, gi);
        assert_int_equal(json_integer_value(json_object_get(eg, "tgId")),
                         json_integer_value(json_object_get(g, "tgId")));
        double t0 = slh_now();
        size_t done = 0;
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            if (sample_mode() && done >= 1)
                break;
            size_t lsk, lm, lr = 0, le;
            uint8_t *sk = slh_jhex(t, "sk", &lsk), *m = slh_jhex(t, "message", &lm);
            uint8_t *addrnd = det ? NULL : slh_jhex(t, "additionalRandomness", &lr);
            json_t *e = slh_find_tc(json_object_get(eg, "tests"),
                                    json_integer_value(json_object_get(t, "tcId")));
            uint8_t *sig = slh_jhex(e, "signature", &le);
            assert_int_equal(lsk, p->sk_bytes);
            assert_int_equal(lm * 8, json_integer_value(json_object_get(t, "messageLength")));
            if (!det)
                assert_int_equal(lr, p->n);
            check_sig(p, sk, m, lm, addrnd, sig, le, done == 0);
            free(sk), free(m), free(addrnd), free(sig);
            done++;
            count++;
        }
        print_message("  %-20s %s sigGen %zu signatures ok (%.2f s)\n", p->name,
                      det ? "deterministic" : "randomized", done, slh_now() - t0);
    }
    assert_true(count >= 10);
    json_decref(prompt);
    json_decref(expect);
}

/* BoringSSL siggen files: priv, entropy (opt_rand), msg, sig. */
static void boring_siggen(const char *file, const dsig_slhdsa_params *p)
{
    size_t len;
    char *text = tu_read_vector_file(file, &len), *cur = text;
    slh_record r;
    int count = 0;
    double t0 = slh_now();
    while (slh_next_record(&cur, &r)) {
        if (slh_field(&r, "sig") == NULL)
            continue;
        if (sample_mode() && count >= 2)
            break;
        size_t lk, le, lm, ls;
        uint8_t *sk = tu_hex(slh_field(&r, "priv"), &lk), *ent = tu_hex(slh_field(&r, "entropy"), &le);
        uint8_t *m = tu_hex(slh_field(&r, "msg"), &lm), *sig = tu_hex(slh_field(&r, "sig"), &ls);
        assert_int_equal(lk, p->sk_bytes);
        assert_int_equal(le, p->n);
        check_sig(p, sk, m, lm, ent, sig, ls, count == 0);
        free(sk), free(ent), free(m), free(sig);
        count++;
    }
    assert_true(count >= 2);
    print_message("  %-20s BoringSSL siggen %d signatures ok (%.2f s)\n", p->name, count, slh_now() - t0);
    free(text);
}

static void test_boringssl_siggen(void **state)
{
    (void)state;
    boring_siggen("slhdsa/boringssl/slhdsa_sha2_128s_siggen.txt", &dsig_slhdsa_sha2_128s);
    boring_siggen("slhdsa/boringssl/slhdsa_shake_256f_siggen.txt", &dsig_slhdsa_shake_256f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acvp_siggen),
        cmocka_unit_test(test_boringssl_siggen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
