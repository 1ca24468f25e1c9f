/*
 * Two-pass JWS signing (dsig_jws_sign_opts.two_pass + dsig_jws_sign_next_pass) for DSIG_ALG_TWO_PASS
 * algorithms (SLH-DSA):
 *   - known answers: ACVP sigGen vsId 53 (FIPS 205 internal interface, through the test hook of
 *     slhdsa_key.h) byte-exact through the JWS signer in raw format, pass 1 and pass 2 chunked
 *     differently, deterministic groups via the option and randomized groups via the pinned opt_rand;
 *   - every format (detached JWS, JSON, compact, raw): the deterministic two-pass signature equals the
 *     deterministic in-memory dsig_sign_ex over the same JWS signing input header "." payload (itself
 *     ACVP-proven in tests/slhdsa_api) and verifies; hedged two-pass signatures verify and differ;
 *   - the state machine and refusals (one-pass context, twice, final in pass 1, unequal passes,
 *     changed compact payload, algorithms without a two-pass signature, JOSE context).
 * Sampling: DSIG_SLH_SAMPLE=1 (ASan) signs ACVP vectors of the f sets only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jose_test_util.h"
#include "pq/slhdsa/slhdsa_key.h"

#define SIG_MAX 49856

/* 1 when the run is sampled (sanitizers). */
static int sample_mode(void)
{
    return tu_env_flag("DSIG_SLH_SAMPLE");
}

/* Feed `m` in `chunk`-byte updates (0 = one update). */
static void feed(dsig_jws_sign_ctx *c, const uint8_t *m, size_t mlen, size_t chunk)
{
    size_t step = chunk ? chunk : (mlen ? mlen : 1);
    for (size_t off = 0; off < mlen; off += step)
        assert_int_equal(dsig_jws_sign_update(c, m + off, mlen - off < step ? mlen - off : step), DSIG_OK);
    if (mlen == 0)
        assert_int_equal(dsig_jws_sign_update(c, "", 0), DSIG_OK);
}

/* A two-pass JWS signature of `m` (pass 1 in chunk1-byte updates, pass 2 in chunk2); returns rc. */
static int jws_two_pass(const dsig_alg *alg, const dsig_key *key, dsig_format fmt,
                        const dsig_sign_opts *so, const uint8_t *m, size_t mlen, size_t chunk1,
                        size_t chunk2, char **out, size_t *out_len)
{
    dsig_jws_sign_opts o = {.format = fmt, .sign_opts = so, .two_pass = 1};
    dsig_jws_sign_ctx *c = NULL;
    int rc = dsig_jws_sign_init(&c, alg, key, &o);
    if (rc)
        return rc;
    feed(c, m, mlen, chunk1);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_OK);
    feed(c, m, mlen, chunk2);
    return dsig_jws_sign_final(c, out, out_len);
}

/* ---- ACVP known answers through the JWS signer (raw) ------------------------------------------- */

/* The tests of ACVP sigGen vsId 53 whose tcId matches in expectedResults: one per group (two in
 * release for the f sets), signed two-pass through dsig_jws_sign_* with format raw. */
static void test_acvp_raw_two_pass(void **state)
{
    (void)state;
    jt_need("SLH-DSA-SHA2-128f");
    json_t *prompt = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigGen-FIPS205/prompt.json");
    json_t *expect = tu_load_json("slhdsa/acvp-2024-08-vs53/SLH-DSA-sigGen-FIPS205/expectedResults.json");
    size_t gi, ti, n = 0, n_det = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), gi, g) {
        const char *set = tu_str(g, "parameterSet");
        const dsig_alg *alg = dsig_alg_by_name(set);
        assert_non_null(alg);
        const int fast = set[strlen(set) - 1] == 'f';
        if (sample_mode() && !fast)
            continue;
        const int det = json_is_true(json_object_get(g, "deterministic"));
        json_t *eg = json_array_get(json_object_get(expect, "testGroups"), gi);
        assert_int_equal(json_integer_value(json_object_get(eg, "tgId")),
                         json_integer_value(json_object_get(g, "tgId")));
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            if (ti >= (fast && !sample_mode() ? 2u : 1u))
                break;
            size_t lsk, lm, lr = 0, le;
            uint8_t *sk = tu_hex(tu_str(t, "sk"), &lsk), *m = tu_hex(tu_str(t, "message"), &lm);
            uint8_t *rnd = det ? NULL : tu_hex(tu_str(t, "additionalRandomness"), &lr);
            const json_t *e = tu_acvp_test(eg, json_integer_value(json_object_get(t, "tcId")));
            uint8_t *want = tu_hex(tu_str(e, "signature"), &le);
            dsig_key *key = NULL;
            assert_int_equal(dsig_slhdsa_key_from_sk(&key, alg, sk, lsk), DSIG_OK);
            assert_int_equal(dsig_slhdsa_key_set_test_interface(key, DSIG_SLHDSA_TEST_INTERNAL), DSIG_OK);
            if (rnd)
                assert_int_equal(dsig_slhdsa_key_set_test_rnd(key, rnd), DSIG_OK);
            dsig_sign_opts d = {.deterministic = 1};
            char *sig = NULL;
            size_t sl = 0;
            /* Pass 1 byte by byte (short messages) or 4096-byte chunks; pass 2 in one update. */
            int rc = jws_two_pass(alg, key, DSIG_FMT_RAW, det ? &d : NULL, m, lm, lm < 20000 ? 1 : 4096,
                                  0, &sig, &sl);
            if (rc != DSIG_OK || sl != le || memcmp(sig, want, le) != 0)
                fail_msg("%s tcId %lld: rc %d (%s), len %zu vs %zu", set,
                         (long long)json_integer_value(json_object_get(t, "tcId")), rc,
                         dsig_last_error_detail(), sl, le);
            n++;
            n_det += det;
            dsig_free(sig);
            dsig_key_free(key);
            free(sk), free(m), free(rnd), free(want);
        }
    }
    print_message("  ACVP sigGen: %zu signatures (%zu deterministic) byte-exact through the two-pass "
                  "JWS signer (raw)\n", n, n_det);
    assert_true(n >= 4 && n_det >= 2);
    json_decref(prompt);
    json_decref(expect);
}

/* ---- JWS formats: equal to the in-memory signature over header.payload ------------------------- */

/* Split the output of `fmt` into the signing input (malloc, NUL-terminated) and the decoded
 * signature (malloc). */
static void split(dsig_format fmt, const char *out, size_t out_len, const uint8_t *payload, size_t plen,
                  char **input, size_t *input_len, uint8_t **sig, size_t *sig_len)
{
    const char *hdr, *sigtxt, *body = NULL;
    size_t hl, sgl, bl = 0;
    json_t *j = NULL;
    if (fmt == DSIG_FMT_JSON) {
        j = json_loadb(out, out_len, 0, NULL);
        assert_non_null(j);
        assert_null(json_object_get(j, "payload"));
        hdr = tu_str(j, "protected");
        sigtxt = tu_str(j, "signature");
        hl = strlen(hdr), sgl = strlen(sigtxt);
    } else {
        const char *d1 = memchr(out, '.', out_len);
        assert_non_null(d1);
        const char *d2 = memchr(d1 + 1, '.', out_len - (size_t)(d1 + 1 - out));
        assert_non_null(d2);
        hdr = out, hl = (size_t)(d1 - out);
        body = d1 + 1, bl = (size_t)(d2 - body);
        sigtxt = d2 + 1, sgl = out_len - (size_t)(sigtxt - out);
        while (sgl && sigtxt[sgl - 1] == '\n')
            sgl--;
        if (fmt == DSIG_FMT_JWS)
            assert_int_equal(bl, 0); /* detached */
    }
    size_t cap = hl + 1 + (fmt == DSIG_FMT_COMPACT_B64 ? bl : plen);
    char *in = malloc(cap + 1);
    assert_non_null(in);
    memcpy(in, hdr, hl);
    in[hl] = '.';
    if (fmt == DSIG_FMT_COMPACT_B64)
        memcpy(in + hl + 1, body, bl);
    else if (plen)
        memcpy(in + hl + 1, payload, plen);
    in[cap] = '\0';
    *input = in;
    *input_len = cap;
    *sig = malloc(sgl + 1);
    assert_non_null(*sig);
    assert_int_equal(dsig_b64url_decode(sigtxt, sgl, *sig, sgl + 1, sig_len), DSIG_OK);
    json_decref(j);
}

/* Verify a two-pass output over `m` (detached: streamed in 1000-byte updates; embedded: compact). */
static void verify_out(dsig_format fmt, const char *out, size_t out_len, const dsig_key *pub,
                       const uint8_t *m, size_t mlen, int want)
{
    if (fmt == DSIG_FMT_COMPACT_B64) {
        assert_int_equal(jt_verify_embedded(out, pub, NULL), want);
        return;
    }
    dsig_jws_verify_opts vo = {.format = fmt};
    dsig_jws_verify_ctx *v = NULL;
    assert_int_equal(dsig_jws_verify_init(&v, pub, out, out_len, &vo), DSIG_OK);
    for (size_t off = 0; off < mlen; off += 1000)
        assert_int_equal(dsig_jws_verify_update(v, m + off, mlen - off < 1000 ? mlen - off : 1000), DSIG_OK);
    assert_int_equal(dsig_jws_verify_final(v), want);
}

/* For two sets, four formats and three payload sizes: deterministic two-pass = dsig_sign_ex over
 * header.payload (exact FIPS 205), repeatable, verifies; a changed payload does not. */
static void test_equals_in_memory(void **state)
{
    (void)state;
    static const char *const sets[] = {"SLH-DSA-SHA2-128f", "SLH-DSA-SHAKE-128f"};
    static const dsig_format fmts[] = {DSIG_FMT_JWS, DSIG_FMT_JSON, DSIG_FMT_COMPACT_B64, DSIG_FMT_RAW};
    static const size_t lens[] = {0, 1, 70001};
    uint8_t *m = malloc(70001);
    assert_non_null(m);
    tu_fill(m, 70001, 7);
    for (size_t s = 0; s < 2; s++) {
        const dsig_alg *alg = jt_need(sets[s]);
        dsig_key *k = NULL, *pub = NULL;
        assert_int_equal(dsig_key_generate(&k, alg, NULL), DSIG_OK);
        assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
        dsig_sign_opts det = {.deterministic = 1};
        for (size_t f = 0; f < 4; f++) {
            for (size_t l = 0; l < 3; l++) {
                if (sample_mode() && s == 1 && l != 2)
                    continue;
                char *o1 = NULL, *o2 = NULL, *in = NULL;
                size_t ol1, ol2, il, sl, wl;
                uint8_t *sig = NULL, want[SIG_MAX];
                assert_int_equal(jws_two_pass(alg, k, fmts[f], &det, m, lens[l], 777, 0, &o1, &ol1), DSIG_OK);
                assert_int_equal(jws_two_pass(alg, k, fmts[f], &det, m, lens[l], 0, 4096, &o2, &ol2), DSIG_OK);
                assert_int_equal(ol1, ol2);
                assert_memory_equal(o1, o2, ol1); /* chunking of either pass does not matter */
                if (fmts[f] == DSIG_FMT_RAW) {
                    in = malloc(lens[l] + 1);
                    memcpy(in, m, lens[l]);
                    il = lens[l];
                    sig = malloc(ol1);
                    memcpy(sig, o1, ol1);
                    sl = ol1;
                } else {
                    split(fmts[f], o1, ol1, m, lens[l], &in, &il, &sig, &sl);
                }
                assert_int_equal(dsig_sign_ex(alg, k, in, il, want, sizeof want, &wl, &det), DSIG_OK);
                if (sl != wl || memcmp(sig, want, wl) != 0)
                    fail_msg("%s format %d payload %zu: two-pass JWS signature differs from dsig_sign_ex "
                             "over the signing input", sets[s], (int)fmts[f], lens[l]);
                verify_out(fmts[f], o1, ol1, pub, m, lens[l], DSIG_OK);
                if (lens[l] && fmts[f] != DSIG_FMT_COMPACT_B64) {
                    m[lens[l] / 2] ^= 1;
                    verify_out(fmts[f], o1, ol1, pub, m, lens[l], DSIG_E_VERIFY);
                    m[lens[l] / 2] ^= 1;
                }
                free(in), free(sig);
                dsig_free(o1), dsig_free(o2);
            }
        }
        /* Hedged two-pass JWS: verifies, and two signatures differ (fresh opt_rand). */
        char *h1 = NULL, *h2 = NULL;
        size_t hl1, hl2;
        assert_int_equal(jws_two_pass(alg, k, DSIG_FMT_JWS, NULL, m, 5000, 1000, 0, &h1, &hl1), DSIG_OK);
        assert_int_equal(jws_two_pass(alg, k, DSIG_FMT_JWS, NULL, m, 5000, 1000, 0, &h2, &hl2), DSIG_OK);
        assert_true(hl1 == hl2 && memcmp(h1, h2, hl1) != 0);
        verify_out(DSIG_FMT_JWS, h1, hl1, pub, m, 5000, DSIG_OK);
        /* The one-pass JWS signer of the same key still verifies (and refuses deterministic). */
        dsig_jws_sign_opts one = {.format = DSIG_FMT_JWS, .sign_opts = &det};
        dsig_jws_sign_ctx *c = NULL;
        assert_int_equal(dsig_jws_sign_init(&c, alg, k, &one), DSIG_E_UNSUPPORTED);
        assert_null(c);
        dsig_free(h1), dsig_free(h2);
        dsig_key_free(k);
        dsig_key_free(pub);
    }
    free(m);
}

/* Raw two-pass with a context (allowed outside JOSE) equals dsig_sign_ex with that context; the
 * JWS formats refuse a context even in two passes (JOSE fixes an empty one). */
static void test_raw_context(void **state)
{
    (void)state;
    const dsig_alg *alg = jt_need("SLH-DSA-SHA2-128f");
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, alg, NULL), DSIG_OK);
    static const uint8_t ctx[] = {1, 2, 3};
    dsig_sign_opts o = {.deterministic = 1, .context = ctx, .context_len = sizeof ctx};
    const uint8_t msg[] = "two passes";
    char *out = NULL;
    size_t ol, wl;
    uint8_t want[SIG_MAX];
    assert_int_equal(jws_two_pass(alg, k, DSIG_FMT_RAW, &o, msg, sizeof msg, 3, 0, &out, &ol), DSIG_OK);
    assert_int_equal(dsig_sign_ex(alg, k, msg, sizeof msg, want, sizeof want, &wl, &o), DSIG_OK);
    assert_int_equal(ol, wl);
    assert_memory_equal(out, want, wl);
    assert_int_equal(dsig_verify_ex(alg, k, msg, sizeof msg, (const uint8_t *)out, ol, &o), DSIG_OK);
    dsig_free(out);
    dsig_jws_sign_opts jo = {.format = DSIG_FMT_JWS, .sign_opts = &o, .two_pass = 1};
    dsig_jws_sign_ctx *c = NULL;
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &jo), DSIG_E_UNSUPPORTED);
    assert_null(c);
    dsig_key_free(k);
}

/* ---- state machine and refusals ------------------------------------------------------------- */

/* Each misuse of the two-pass sequence fails with the documented code and frees what it must. */
static void test_state_errors(void **state)
{
    (void)state;
    const dsig_alg *alg = jt_need("SLH-DSA-SHA2-128f");
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, alg, NULL), DSIG_OK);
    dsig_jws_sign_opts two = {.format = DSIG_FMT_JWS, .two_pass = 1};
    dsig_jws_sign_opts one = {.format = DSIG_FMT_JWS};
    dsig_jws_sign_ctx *c = NULL;
    char *out = NULL;
    size_t ol;

    assert_int_equal(dsig_jws_sign_next_pass(NULL), DSIG_E_ARG);
    /* next_pass on a one-pass context; the context is then failed. */
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &one), DSIG_OK);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "one-pass"));
    assert_int_equal(dsig_jws_sign_final(c, &out, &ol), DSIG_E_STATE);
    /* next_pass twice. */
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &two), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abc", 3), DSIG_OK);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "twice"));
    dsig_jws_sign_abort(c);
    /* final while still in pass 1. */
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &two), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abc", 3), DSIG_OK);
    assert_int_equal(dsig_jws_sign_final(c, &out, &ol), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "pass 1"));
    /* pass 2 shorter / longer than pass 1 (detached: the core compares the byte counts). */
    for (int longer = 0; longer < 2; longer++) {
        assert_int_equal(dsig_jws_sign_init(&c, alg, k, &two), DSIG_OK);
        assert_int_equal(dsig_jws_sign_update(c, "abcd", 4), DSIG_OK);
        assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_OK);
        assert_int_equal(dsig_jws_sign_update(c, "abcde", longer ? 5 : 3), DSIG_OK);
        assert_int_equal(dsig_jws_sign_final(c, &out, &ol), DSIG_E_STATE);
    }
    /* Compact (embedded payload): a changed byte in pass 2 is caught (the output would carry pass 1's
     * payload under pass 2's signature), as are a shorter and a longer pass 2. */
    dsig_jws_sign_opts cb = {.format = DSIG_FMT_COMPACT_B64, .two_pass = 1};
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &cb), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abcdefgh", 8), DSIG_OK);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abcdXfgh", 8), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "differs"));
    assert_int_equal(dsig_jws_sign_final(c, &out, &ol), DSIG_E_STATE);
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &cb), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abcdefgh", 8), DSIG_OK);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abcdef", 6), DSIG_OK);
    assert_int_equal(dsig_jws_sign_final(c, &out, &ol), DSIG_E_STATE);
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &cb), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abcdefgh", 8), DSIG_OK);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abcdefghij", 10), DSIG_E_STATE);
    dsig_jws_sign_abort(c);
    /* A change still in the encoder's carry (under 3 bytes) is caught at final. */
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &cb), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "ab", 2), DSIG_OK);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "xy", 2), DSIG_OK);
    assert_int_equal(dsig_jws_sign_final(c, &out, &ol), DSIG_E_STATE);
    /* Update after a failed update is refused. */
    assert_int_equal(dsig_jws_sign_init(&c, alg, k, &cb), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "abc", 3), DSIG_OK);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_OK);
    assert_int_equal(dsig_jws_sign_update(c, "xyz", 3), DSIG_E_STATE);
    assert_int_equal(dsig_jws_sign_update(c, "abc", 3), DSIG_E_STATE);
    assert_int_equal(dsig_jws_sign_next_pass(c), DSIG_E_STATE);
    dsig_jws_sign_abort(c);
    dsig_jws_sign_abort(NULL);
    /* A public key cannot sign. */
    dsig_key *pub = NULL;
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    c = (dsig_jws_sign_ctx *)1;
    assert_int_equal(dsig_jws_sign_init(&c, alg, pub, &two), DSIG_E_NO_PRIVATE);
    assert_null(c);
    dsig_key_free(pub);
    dsig_key_free(k);
}

/* Algorithms without DSIG_ALG_TWO_PASS refuse two_pass (never silently sign in one pass). */
static void test_not_two_pass(void **state)
{
    (void)state;
    static const char *const names[] = {"HS256", "ES256", "Ed25519", "ML-DSA-44"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const dsig_alg *a = dsig_alg_by_name(names[i]);
        if (!a)
            continue;
        assert_false(dsig_alg_flags(a) & DSIG_ALG_TWO_PASS);
        dsig_key *k = NULL;
        assert_int_equal(dsig_key_generate(&k, a, NULL), DSIG_OK);
        dsig_jws_sign_opts o = {.format = DSIG_FMT_JWS, .two_pass = 1};
        dsig_jws_sign_ctx *c = (dsig_jws_sign_ctx *)1;
        assert_int_equal(dsig_jws_sign_init(&c, a, k, &o), DSIG_E_UNSUPPORTED);
        assert_null(c);
        dsig_key_free(k);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acvp_raw_two_pass),
        cmocka_unit_test(test_equals_in_memory),
        cmocka_unit_test(test_raw_context),
        cmocka_unit_test(test_state_errors),
        cmocka_unit_test(test_not_two_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
