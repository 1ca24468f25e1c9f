/*
 * EdDSA known-answer tests: RFC 8032 §7.1/§7.4 (pure), Wycheproof ed25519/ed448 verification, and
 * NIST ACVP EDDSA KeyGen/KeyVer/SigGen/SigVer (pure groups). Every verification runs through both the
 * one-shot path (libsodium / OpenSSL) and the one-pass streaming path with several chunk sizes.
 */
#include <stdio.h>

#include "eddsa_testlib.h"

static const size_t chunks[] = {1, 7, 4096, 0};

/* Verify through the one-shot path and every streaming chunk size; all must return `want`. */
static void verify_all(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                       const uint8_t *sig, size_t sl, int want, const char *what)
{
    int rc = dsig_verify(alg, key, msg, len, sig, sl);
    if (rc != want)
        fail_msg("%s: one-shot verify returned %d, want %d (%s)", what, rc, want,
                 dsig_last_error_detail());
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        if (chunks[i] == 1 && len > 2048)
            continue; /* byte-at-a-time over long messages adds time, not coverage */
        rc = tu_verify_chunked(alg, key, msg, len, chunks[i], sig, sl);
        if (rc != want)
            fail_msg("%s: streaming verify (chunk %zu) returned %d, want %d (%s)", what, chunks[i], rc,
                     want, dsig_last_error_detail());
    }
}

/* RFC 8032 pure vectors: key derivation, byte-exact one-shot signatures, both verifiers. */
static void run_rfc8032(const char *file, int ed448)
{
    const dsig_alg *alg = et_alg(ed448);
    json_t *arr = tu_load_json(file);
    size_t i, used = 0;
    json_t *v;
    json_array_foreach(arr, i, v) {
        const char *ctx = json_string_value(json_object_get(v, "context"));
        if (ctx && *ctx)
            continue; /* Ed448 with a context is not the pure scheme */
        size_t ml, sl, xl;
        uint8_t *msg = tu_hex(tu_str(v, "message"), &ml);
        uint8_t *want = tu_hex(tu_str(v, "signature"), &sl);
        uint8_t *x = tu_hex(tu_str(v, "publicKey"), &xl);
        dsig_key *key;
        /* Import with d recomputes A from the secret and requires x to match: key derivation. */
        assert_int_equal(et_key_hex(alg->keytype, tu_str(v, "publicKey"), tu_str(v, "secretKey"), &key),
                         DSIG_OK);
        dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
        size_t n = 0;
        assert_int_equal(alg->keytype->export_jwk(key, 1, m, &n), DSIG_OK);
        assert_int_equal(n, 2);
        assert_int_equal(m[0].len, xl);
        assert_memory_equal(m[0].data, x, xl);
        for (size_t j = 0; j < n; j++)
            dsig_xfree(m[j].data, m[j].len);
        /* A wrong x next to the right d is refused. */
        x[1] ^= 1;
        dsig_key *bad;
        size_t dl;
        uint8_t *d = tu_hex(tu_str(v, "secretKey"), &dl);
        int rc = et_key(alg->keytype, x, xl, d, dl, &bad);
        assert_true(rc == DSIG_E_KEY || rc == DSIG_E_POINT);
        free(d);

        uint8_t sig[114];
        size_t got = 0;
        assert_int_equal(dsig_sign(alg, key, msg, ml, sig, sizeof sig, &got), DSIG_OK);
        assert_int_equal(got, sl);
        assert_memory_equal(sig, want, sl);
        verify_all(alg, key, msg, ml, want, sl, DSIG_OK, tu_str(v, "name"));
        /* The public part alone verifies too. */
        dsig_key *pub;
        assert_int_equal(dsig_key_public(&pub, key), DSIG_OK);
        verify_all(alg, pub, msg, ml, want, sl, DSIG_OK, tu_str(v, "name"));
        dsig_key_free(pub);
        dsig_key_free(key);
        free(msg);
        free(want);
        free(x);
        used++;
    }
    print_message("%s: %zu pure vectors\n", file, used);
    assert_true(used >= 5);
    json_decref(arr);
}

static void test_rfc8032_ed25519(void **state)
{
    (void)state;
    run_rfc8032("eddsa/rfc8032/ed25519.json", 0);
}

static void test_rfc8032_ed448(void **state)
{
    (void)state;
    run_rfc8032("eddsa/rfc8032/ed448.json", 1);
}

/* Wycheproof: valid -> DSIG_OK, invalid -> DSIG_E_VERIFY (or a key error at import): never accept. */
static void run_wycheproof(const char *file, int ed448)
{
    const dsig_alg *alg = et_alg(ed448);
    json_t *root = tu_load_json(file);
    size_t gi, ti, nvalid = 0, ninvalid = 0, nkeyrej = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(root, "testGroups"), gi, g) {
        const char *pk = tu_str(json_object_get(g, "publicKey"), "pk");
        dsig_key *key = NULL;
        int krc = et_key_hex(alg->keytype, pk, NULL, &key);
        if (krc == DSIG_OK) {
            /* The same key through PEM (SubjectPublicKeyInfo) must give the same x. */
            const char *pem = json_string_value(json_object_get(g, "publicKeyPem"));
            if (pem) {
                dsig_key *pk2;
                assert_int_equal(dsig_key_import_pem(&pk2, pem, strlen(pem)), DSIG_OK);
                assert_ptr_equal(pk2->type, alg->keytype);
                dsig_jwk_member a[2], b[2];
                size_t na, nb;
                assert_int_equal(alg->keytype->export_jwk(key, 0, a, &na), DSIG_OK);
                assert_int_equal(alg->keytype->export_jwk(pk2, 0, b, &nb), DSIG_OK);
                assert_memory_equal(a[0].data, b[0].data, a[0].len);
                dsig_xfree(a[0].data, a[0].len);
                dsig_xfree(b[0].data, b[0].len);
                dsig_key_free(pk2);
            }
        }
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            int valid = strcmp(tu_str(t, "result"), "valid") == 0;
            char what[64];
            snprintf(what, sizeof what, "%s tcId %lld", file,
                     (long long)json_integer_value(json_object_get(t, "tcId")));
            if (krc != DSIG_OK) {
                if (valid)
                    fail_msg("%s: valid test but key import failed: %d (%s)", what, krc,
                             dsig_last_error_detail());
                assert_true(krc == DSIG_E_POINT || krc == DSIG_E_KEY);
                nkeyrej++;
                continue;
            }
            size_t ml, sl;
            uint8_t *msg = tu_hex(tu_str(t, "msg"), &ml);
            uint8_t *sig = tu_hex(tu_str(t, "sig"), &sl);
            verify_all(alg, key, msg, ml, sig, sl, valid ? DSIG_OK : DSIG_E_VERIFY, what);
            valid ? nvalid++ : ninvalid++;
            free(msg);
            free(sig);
        }
        dsig_key_free(key);
    }
    print_message("%s: %zu valid, %zu invalid, %zu rejected at key import\n", file, nvalid, ninvalid,
                  nkeyrej);
    assert_int_equal(nvalid + ninvalid + nkeyrej,
                     (size_t)json_integer_value(json_object_get(root, "numberOfTests")));
    json_decref(root);
}

static void test_wycheproof_ed25519(void **state)
{
    (void)state;
    run_wycheproof("eddsa/wycheproof/ed25519_test.json", 0);
}

static void test_wycheproof_ed448(void **state)
{
    (void)state;
    run_wycheproof("eddsa/wycheproof/ed448_test.json", 1);
}

/* Find test `tcId` in a group's tests array. */
static json_t *find_tc(json_t *group, json_int_t tc)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(group, "tests"), i, t) {
        if (json_integer_value(json_object_get(t, "tcId")) == tc)
            return t;
    }
    fail_msg("tcId %lld not found", (long long)tc);
    return NULL;
}

/* Find group `tgId` in a vector set. */
static json_t *find_tg(json_t *root, json_int_t tg)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(root, "testGroups"), i, g) {
        if (json_integer_value(json_object_get(g, "tgId")) == tg)
            return g;
    }
    fail_msg("tgId %lld not found", (long long)tg);
    return NULL;
}

static int acvp_is_448(json_t *g)
{
    return strcmp(tu_str(g, "curve"), "ED-448") == 0;
}

/* ACVP KeyGen: d -> q (our derivation must give q); KeyVer: q -> testPassed. */
static void test_acvp_keys(void **state)
{
    (void)state;
    json_t *ip = tu_load_json("eddsa/acvp/EDDSA-KeyGen-1.0/internalProjection.json");
    size_t gi, ti, n = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(ip, "testGroups"), gi, g) {
        const dsig_alg *alg = et_alg(acvp_is_448(g));
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            dsig_key *key;
            assert_int_equal(et_key_hex(alg->keytype, tu_str(t, "q"), tu_str(t, "d"), &key), DSIG_OK);
            dsig_key_free(key);
            n++;
        }
    }
    json_decref(ip);
    json_t *kv = tu_load_json("eddsa/acvp/EDDSA-KeyVer-1.0/prompt.json");
    json_t *ex = tu_load_json("eddsa/acvp/EDDSA-KeyVer-1.0/expectedResults.json");
    json_array_foreach(json_object_get(kv, "testGroups"), gi, g) {
        const dsig_alg *alg = et_alg(acvp_is_448(g));
        json_t *eg = find_tg(ex, json_integer_value(json_object_get(g, "tgId")));
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            json_t *et = find_tc(eg, json_integer_value(json_object_get(t, "tcId")));
            int pass = json_is_true(json_object_get(et, "testPassed"));
            dsig_key *key;
            int rc = et_key_hex(alg->keytype, tu_str(t, "q"), NULL, &key);
            if (pass)
                assert_int_equal(rc, DSIG_OK);
            else
                assert_int_equal(rc, DSIG_E_POINT);
            dsig_key_free(key);
            n++;
        }
    }
    json_decref(kv);
    json_decref(ex);
    print_message("ACVP KeyGen/KeyVer: %zu tests\n", n);
}

/* ACVP SigGen (pure, no context): byte-exact deterministic signatures with the server's key pair
 * from internalProjection; the expected signature from expectedResults. */
static void test_acvp_siggen(void **state)
{
    (void)state;
    json_t *ip = tu_load_json("eddsa/acvp/EDDSA-SigGen-1.0/internalProjection.json");
    json_t *ex = tu_load_json("eddsa/acvp/EDDSA-SigGen-1.0/expectedResults.json");
    size_t gi, ti, n = 0, skipped = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(ip, "testGroups"), gi, g) {
        if (json_is_true(json_object_get(g, "preHash")))
            continue;
        const dsig_alg *alg = et_alg(acvp_is_448(g));
        json_t *eg = find_tg(ex, json_integer_value(json_object_get(g, "tgId")));
        assert_string_equal(tu_str(eg, "q"), tu_str(g, "q"));
        dsig_key *key;
        assert_int_equal(et_key_hex(alg->keytype, tu_str(g, "q"), tu_str(g, "d"), &key), DSIG_OK);
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            const char *ctx = json_string_value(json_object_get(t, "context"));
            if (ctx && *ctx) {
                skipped++; /* a context is not the pure scheme */
                continue;
            }
            json_t *et = find_tc(eg, json_integer_value(json_object_get(t, "tcId")));
            size_t ml, sl;
            uint8_t *msg = tu_hex(tu_str(t, "message"), &ml);
            uint8_t *want = tu_hex(tu_str(et, "signature"), &sl);
            uint8_t sig[114];
            size_t got;
            assert_int_equal(dsig_sign(alg, key, msg, ml, sig, sizeof sig, &got), DSIG_OK);
            assert_int_equal(got, sl);
            assert_memory_equal(sig, want, sl);
            verify_all(alg, key, msg, ml, want, sl, DSIG_OK, "ACVP SigGen");
            free(msg);
            free(want);
            n++;
        }
        dsig_key_free(key);
    }
    print_message("ACVP SigGen: %zu pure tests, %zu skipped (context)\n", n, skipped);
    assert_true(n >= 30);
    json_decref(ip);
    json_decref(ex);
}

/* ACVP SigVer (pure): q, message, signature -> testPassed, through both verifiers. */
static void test_acvp_sigver(void **state)
{
    (void)state;
    json_t *pr = tu_load_json("eddsa/acvp/EDDSA-SigVer-1.0/prompt.json");
    json_t *ex = tu_load_json("eddsa/acvp/EDDSA-SigVer-1.0/expectedResults.json");
    size_t gi, ti, n = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(pr, "testGroups"), gi, g) {
        if (json_is_true(json_object_get(g, "preHash")))
            continue;
        const dsig_alg *alg = et_alg(acvp_is_448(g));
        json_t *eg = find_tg(ex, json_integer_value(json_object_get(g, "tgId")));
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            json_t *et = find_tc(eg, json_integer_value(json_object_get(t, "tcId")));
            int pass = json_is_true(json_object_get(et, "testPassed"));
            dsig_key *key;
            int rc = et_key_hex(alg->keytype, tu_str(t, "q"), NULL, &key);
            if (rc != DSIG_OK) {
                assert_false(pass);
                assert_int_equal(rc, DSIG_E_POINT);
                n++;
                continue;
            }
            size_t ml, sl;
            uint8_t *msg = tu_hex(tu_str(t, "message"), &ml);
            uint8_t *sig = tu_hex(tu_str(t, "signature"), &sl);
            verify_all(alg, key, msg, ml, sig, sl, pass ? DSIG_OK : DSIG_E_VERIFY, "ACVP SigVer");
            free(msg);
            free(sig);
            dsig_key_free(key);
            n++;
        }
    }
    print_message("ACVP SigVer: %zu pure tests\n", n);
    assert_true(n >= 6);
    json_decref(pr);
    json_decref(ex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc8032_ed25519),    cmocka_unit_test(test_rfc8032_ed448),
        cmocka_unit_test(test_wycheproof_ed25519), cmocka_unit_test(test_wycheproof_ed448),
        cmocka_unit_test(test_acvp_keys),          cmocka_unit_test(test_acvp_siggen),
        cmocka_unit_test(test_acvp_sigver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
