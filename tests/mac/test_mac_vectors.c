/*
 * MAC known-answer tests from the official vectors (read at run time from $DSIG_VECTORS/mac):
 *   Wycheproof  hmac_sha{256,384,512}, hmac_sha3_{256,384,512}, kmac{128,256}_no_customization,
 *               aes_cmac — valid must verify, invalid must not, through the test hook (truncated tags)
 *               and, where the vector fits a registered algorithm, through dsig_verify;
 *   ACVP        HMAC-SHA2-256/384/512, HMAC-SHA3-256/384/512 (2.0), CMAC-AES (gen, ver),
 *               KMAC-128/256 (AFT, MVT, hexCustomization, xof) — see kmac_ref.h for the bit-level part.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "kmac_ref.h"
#include "mac/mac.h"
#include "testutil.h"

/* A raw-bytes oct key through the key type's JWK import. */
static dsig_key *oct_key(const uint8_t *k, size_t len)
{
    dsig_key *key = dsig_key_new(&dsig_keytype_oct);
    assert_non_null(key);
    dsig_jwk_member m = {.name = "k", .data = (uint8_t *)k, .len = len};
    assert_int_equal(dsig_keytype_oct.import_jwk(key, &m, 1), DSIG_OK);
    return key;
}

/* Integer member that ACVP writes either as a number or as a decimal string. */
static size_t num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (json_is_integer(v))
        return (size_t)json_integer_value(v);
    if (json_is_string(v))
        return (size_t)strtoull(json_string_value(v), NULL, 10);
    fail_msg("vector member \"%s\" missing", k);
    return 0;
}

/* Boolean that ACVP writes as true/false or "True"/"False". */
static int boolean(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_string(v))
        return strcmp(json_string_value(v), "True") == 0 || strcmp(json_string_value(v), "true") == 0;
    fail_msg("vector member \"%s\" missing", k);
    return 0;
}

/* ---- Wycheproof ------------------------------------------------------------------------------ */

/* Run one Wycheproof MAC file; `alg_name` NULL means CMAC (chosen by the group's keySize). */
static void run_wycheproof(const char *file, const char *alg_name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "mac/wycheproof/%s", file);
    json_t *root = tu_load_json(rel);
    size_t n_valid = 0, n_invalid = 0, n_api = 0;
    json_t *groups = json_object_get(root, "testGroups"), *g;
    size_t gi;
    json_array_foreach(groups, gi, g)
    {
        size_t key_bits = num(g, "keySize"), tag_bits = num(g, "tagSize");
        assert_int_equal(tag_bits % 8, 0);
        size_t out_len = tag_bits / 8;
        const char *name = alg_name;
        if (!name)
            name = key_bits == 128 ? "CMAC-AES-128" : key_bits == 192 ? "CMAC-AES-192" : "CMAC-AES-256";
        const dsig_alg *alg = dsig_alg_by_name(name);
        assert_non_null(alg);
        json_t *tests = json_object_get(g, "tests"), *t;
        size_t ti;
        json_array_foreach(tests, ti, t)
        {
            size_t klen, mlen, tlen;
            uint8_t *key = tu_hex(tu_str(t, "key"), &klen);
            uint8_t *msg = tu_hex(tu_str(t, "msg"), &mlen);
            uint8_t *tag = tu_hex(tu_str(t, "tag"), &tlen);
            int valid = strcmp(tu_str(t, "result"), "valid") == 0;
            long id = (long)json_integer_value(json_object_get(t, "tcId"));
            uint8_t out[64];
            int rc = dsig_mac_compute(name, key, klen, msg, mlen, NULL, 0, out_len, 0, out);
            int ok = rc == DSIG_OK && tlen == out_len && memcmp(out, tag, tlen) == 0;
            if (ok != valid)
                fail_msg("%s tcId %ld: expected %s, rc %d", file, id, valid ? "valid" : "invalid", rc);
            valid ? n_valid++ : n_invalid++;

            /* Through the public API when the vector is a registered algorithm as such. */
            if (out_len == dsig_alg_sig_max(alg) && klen > 0) {
                dsig_key *k = oct_key(key, klen);
                int vrc = dsig_verify(alg, k, msg, mlen, tag, tlen);
                /* Key policy comes first: too short is weak; CMAC takes exactly the AES size. */
                int want = valid ? DSIG_OK : DSIG_E_VERIFY;
                if (klen * 8 < alg->min_key_bits)
                    want = DSIG_E_KEY_WEAK;
                else if (strcmp(dsig_alg_family(alg), "CMAC") == 0 && klen * 8 != alg->min_key_bits)
                    want = DSIG_E_KEY_MISMATCH;
                if (vrc != want)
                    fail_msg("%s tcId %ld: dsig_verify gave %d, expected %d (%s)", file, id, vrc, want,
                             dsig_last_error_detail());
                if (valid && want == DSIG_OK) {
                    uint8_t sig[64];
                    size_t sl;
                    assert_int_equal(dsig_sign(alg, k, msg, mlen, sig, sizeof sig, &sl), DSIG_OK);
                    assert_int_equal(sl, tlen);
                    assert_memory_equal(sig, tag, tlen);
                }
                dsig_key_free(k);
                n_api++;
            }
            free(key);
            free(msg);
            free(tag);
        }
    }
    print_message("%s: %zu valid, %zu invalid, %zu through dsig_verify\n", file, n_valid, n_invalid,
                  n_api);
    assert_true(n_valid > 0 && n_invalid > 0 && n_api > 0);
    json_decref(root);
}

/* Wycheproof HMAC-SHA-256/384/512. */
static void test_wycheproof_hmac_sha2(void **state)
{
    (void)state;
    run_wycheproof("hmac_sha256_test.json", "HS256");
    run_wycheproof("hmac_sha384_test.json", "HS384");
    run_wycheproof("hmac_sha512_test.json", "HS512");
}

/* Wycheproof HMAC-SHA3-256/384/512. */
static void test_wycheproof_hmac_sha3(void **state)
{
    (void)state;
    run_wycheproof("hmac_sha3_256_test.json", "HMAC-SHA3-256");
    run_wycheproof("hmac_sha3_384_test.json", "HMAC-SHA3-384");
    run_wycheproof("hmac_sha3_512_test.json", "HMAC-SHA3-512");
}

/* Wycheproof KMAC128/256 (S = "", L = tagSize). */
static void test_wycheproof_kmac(void **state)
{
    (void)state;
    run_wycheproof("kmac128_no_customization_test.json", "KMAC128");
    run_wycheproof("kmac256_no_customization_test.json", "KMAC256");
}

/* Wycheproof AES-CMAC, including invalid key sizes. */
static void test_wycheproof_cmac(void **state)
{
    (void)state;
    run_wycheproof("aes_cmac_test.json", NULL);
}

/* ---- ACVP ------------------------------------------------------------------------------------ */

/* The expected-results test with the given tcId (ACVP files keep prompt and answers apart). */
static const json_t *acvp_answer(const json_t *expected, const json_t *tc)
{
    size_t id = num(tc, "tcId");
    json_t *groups = json_object_get(expected, "testGroups"), *g;
    size_t gi;
    json_array_foreach(groups, gi, g)
    {
        json_t *tests = json_object_get(g, "tests"), *t;
        size_t ti;
        json_array_foreach(tests, ti, t) if (num(t, "tcId") == id) return t;
    }
    fail_msg("no expected result for tcId %zu", id);
    return NULL;
}

/* ACVP HMAC 2.0 (one AFT group): key, msg, macLen (truncation) -> mac. */
static void run_acvp_hmac(const char *dir, const char *alg_name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "mac/acvp/%s/prompt.json", dir);
    json_t *prompt = tu_load_json(rel);
    snprintf(rel, sizeof rel, "mac/acvp/%s/expectedResults.json", dir);
    json_t *expected = tu_load_json(rel);
    size_t count = 0;
    json_t *groups = json_object_get(prompt, "testGroups"), *g;
    size_t gi;
    json_array_foreach(groups, gi, g)
    {
        json_t *tests = json_object_get(g, "tests"), *t;
        size_t ti;
        json_array_foreach(tests, ti, t)
        {
            size_t klen, mlen, elen;
            uint8_t *key = tu_hex(tu_str(t, "key"), &klen);
            uint8_t *msg = tu_hex(tu_str(t, "msg"), &mlen);
            uint8_t *exp = tu_hex(tu_str(acvp_answer(expected, t), "mac"), &elen);
            assert_int_equal(num(t, "keyLen"), klen * 8);
            assert_int_equal(num(t, "msgLen"), mlen * 8);
            assert_int_equal(num(t, "macLen"), elen * 8);
            uint8_t out[64];
            int rc = dsig_mac_compute(alg_name, key, klen, msg, mlen, NULL, 0, elen, 0, out);
            if (rc != DSIG_OK || memcmp(out, exp, elen) != 0)
                fail_msg("%s tcId %zu: mismatch (rc %d)", dir, num(t, "tcId"), rc);
            free(key);
            free(msg);
            free(exp);
            count++;
        }
    }
    print_message("%s: %zu tests\n", dir, count);
    assert_true(count > 0);
    json_decref(prompt);
    json_decref(expected);
}

/* ACVP HMAC-SHA2 and HMAC-SHA3, revision 2.0. */
static void test_acvp_hmac(void **state)
{
    (void)state;
    run_acvp_hmac("HMAC-SHA2-256-2.0", "HS256");
    run_acvp_hmac("HMAC-SHA2-384-2.0", "HS384");
    run_acvp_hmac("HMAC-SHA2-512-2.0", "HS512");
    run_acvp_hmac("HMAC-SHA3-256-2.0", "HMAC-SHA3-256");
    run_acvp_hmac("HMAC-SHA3-384-2.0", "HMAC-SHA3-384");
    run_acvp_hmac("HMAC-SHA3-512-2.0", "HMAC-SHA3-512");
}

/* ACVP CMAC-AES: gen (compute, truncated to macLen) and ver (testPassed). */
static void test_acvp_cmac(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("mac/acvp/CMAC-AES-1.0/prompt.json");
    json_t *expected = tu_load_json("mac/acvp/CMAC-AES-1.0/expectedResults.json");
    size_t n_gen = 0, n_ver = 0, n_ver_false = 0;
    json_t *groups = json_object_get(prompt, "testGroups"), *g;
    size_t gi;
    json_array_foreach(groups, gi, g)
    {
        size_t key_bits = num(g, "keyLen"), mac_bits = num(g, "macLen");
        assert_int_equal(mac_bits % 8, 0);
        const char *name = key_bits == 128 ? "CMAC-AES-128" : key_bits == 192 ? "CMAC-AES-192"
                                                                              : "CMAC-AES-256";
        int gen = strcmp(tu_str(g, "direction"), "gen") == 0;
        json_t *tests = json_object_get(g, "tests"), *t;
        size_t ti;
        json_array_foreach(tests, ti, t)
        {
            size_t klen, mlen, elen;
            uint8_t *key = tu_hex(tu_str(t, "key"), &klen);
            uint8_t *msg = tu_hex(tu_str(t, "message"), &mlen);
            assert_int_equal(klen * 8, key_bits);
            assert_int_equal(mlen * 8, num(g, "msgLen"));
            const json_t *ans = acvp_answer(expected, t);
            uint8_t *exp = tu_hex(tu_str(gen ? ans : t, "mac"), &elen);
            assert_int_equal(elen * 8, mac_bits);
            uint8_t out[16];
            assert_int_equal(dsig_mac_compute(name, key, klen, msg, mlen, NULL, 0, elen, 0, out),
                             DSIG_OK);
            int same = memcmp(out, exp, elen) == 0;
            if (gen) {
                if (!same)
                    fail_msg("CMAC gen tcId %zu: mismatch", num(t, "tcId"));
                n_gen++;
            } else {
                int want = boolean(ans, "testPassed");
                if (same != want)
                    fail_msg("CMAC ver tcId %zu: expected testPassed=%d", num(t, "tcId"), want);
                n_ver++;
                n_ver_false += !want;
            }
            free(key);
            free(msg);
            free(exp);
        }
    }
    print_message("CMAC-AES: %zu gen, %zu ver (%zu failing)\n", n_gen, n_ver, n_ver_false);
    assert_true(n_gen > 0 && n_ver > 0 && n_ver_false > 0);
    json_decref(prompt);
    json_decref(expected);
}

/* Customization string of a KMAC group/test (ASCII or hex), as bytes. */
static uint8_t *kmac_custom(const json_t *g, const json_t *t, size_t *len)
{
    if (boolean(g, "hexCustomization"))
        return tu_hex(tu_str(t, "customizationHex"), len);
    const char *s = tu_str(t, "customization");
    *len = strlen(s);
    uint8_t *c = malloc(*len + 1);
    assert_non_null(c);
    memcpy(c, s, *len + 1);
    return c;
}

/*
 * Byte-oriented library output (FIPS 202 bit order: the first r bits of a last partial byte are its
 * low bits) against an ACVP bit string of `bits` bits (those r bits are the high bits; kmac_ref.c).
 */
static int lib_equals_acvp(const uint8_t *lib, const uint8_t *acvp, size_t bits)
{
    size_t full = bits / 8;
    unsigned r = (unsigned)(bits % 8);
    if (memcmp(lib, acvp, full) != 0)
        return 0;
    return r == 0 || (lib[full] & ((1u << r) - 1u)) == (unsigned)(acvp[full] >> (8u - r));
}

/*
 * ACVP KMAC. The vectors are bit-oriented (key, message and output lengths are rarely multiples of
 * 8) while the library, like OpenSSL, is byte-oriented. So:
 *  1. the bit-level reference (kmac_ref.c, written from FIPS 202 / SP 800-185) must reproduce every
 *     AFT answer and every MVT verdict exactly;
 *  2. the library hook must agree with that reference on the byte-aligned part of every vector
 *     (whole key/message bytes, the same customization, xof flag, output rounded up to bytes);
 *  3. vectors that happen to be byte-aligned are run through the hook directly against ACVP.
 */
static void run_acvp_kmac(const char *dir, const char *alg_name, unsigned strength)
{
    char rel[256];
    snprintf(rel, sizeof rel, "mac/acvp/%s/prompt.json", dir);
    json_t *prompt = tu_load_json(rel);
    snprintf(rel, sizeof rel, "mac/acvp/%s/expectedResults.json", dir);
    json_t *expected = tu_load_json(rel);
    size_t n_aft = 0, n_mvt = 0, n_mvt_false = 0, n_cross = 0, n_direct = 0, n_xof = 0, n_hex = 0;
    json_t *groups = json_object_get(prompt, "testGroups"), *g;
    size_t gi;
    json_array_foreach(groups, gi, g)
    {
        int xof = boolean(g, "xof");
        int aft = strcmp(tu_str(g, "testType"), "AFT") == 0;
        json_t *tests = json_object_get(g, "tests"), *t;
        size_t ti;
        json_array_foreach(tests, ti, t)
        {
            size_t klen, mlen, clen, elen;
            size_t key_bits = num(t, "keyLen"), msg_bits = num(t, "msgLen"), mac_bits = num(t, "macLen");
            uint8_t *key = tu_hex(tu_str(t, "key"), &klen);
            uint8_t *msg = tu_hex(tu_str(t, "msg"), &mlen);
            uint8_t *cus = kmac_custom(g, t, &clen);
            const json_t *ans = acvp_answer(expected, t);
            uint8_t *exp = tu_hex(tu_str(aft ? ans : t, "mac"), &elen);
            assert_int_equal(klen, (key_bits + 7) / 8);
            assert_int_equal(mlen, (msg_bits + 7) / 8);
            assert_int_equal(elen, (mac_bits + 7) / 8);
            size_t id = num(t, "tcId");

            /* 1. reference vs ACVP, bit-exact. */
            uint8_t *out = calloc(1, elen + 1);
            assert_non_null(out);
            assert_int_equal(kmac_ref(strength, key, key_bits, msg, msg_bits, cus, clen, mac_bits, xof,
                                      out), 0);
            int same = kmac_ref_equal_bits(out, exp, mac_bits);
            if (aft) {
                if (!same)
                    fail_msg("%s tcId %zu: reference does not reproduce the ACVP mac", dir, id);
                n_aft++;
            } else {
                int want = boolean(ans, "testPassed");
                if (same != want)
                    fail_msg("%s tcId %zu: reference verdict %d, ACVP testPassed %d", dir, id, same,
                             want);
                n_mvt++;
                n_mvt_false += !want;
            }

            /* 2. library vs reference on the byte-aligned part (backend key range 4..512 bytes). */
            size_t kb = key_bits / 8, mb = msg_bits / 8, ob = (mac_bits + 7) / 8;
            if (kb >= 4 && kb <= 512) {
                uint8_t *lib = malloc(ob), *ref = malloc(ob);
                assert_non_null(lib);
                assert_non_null(ref);
                assert_int_equal(kmac_ref(strength, key, kb * 8, msg, mb * 8, cus, clen, ob * 8, xof,
                                          ref), 0);
                int rc = dsig_mac_compute(alg_name, key, kb, msg, mb, cus, clen, ob, xof, lib);
                if (rc != DSIG_OK || memcmp(lib, ref, ob) != 0)
                    fail_msg("%s tcId %zu: library differs from the reference (rc %d: %s)", dir, id,
                             rc, dsig_last_error_detail());
                n_cross++;
                n_xof += xof != 0;
                n_hex += boolean(g, "hexCustomization");
                free(lib);
                free(ref);
            }

            /* 3. byte-aligned vectors straight through the library. */
            if (key_bits % 8 == 0 && msg_bits % 8 == 0 && (mac_bits % 8 == 0 || xof) && kb >= 4 &&
                kb <= 512) {
                uint8_t *lib = calloc(1, elen + 1);
                assert_non_null(lib);
                assert_int_equal(dsig_mac_compute(alg_name, key, kb, msg, mb, cus, clen, elen, xof,
                                                  lib), DSIG_OK);
                if (lib_equals_acvp(lib, exp, mac_bits) != (aft || boolean(ans, "testPassed")))
                    fail_msg("%s tcId %zu: library disagrees with ACVP", dir, id);
                n_direct++;
                free(lib);
            }
            free(out);
            free(key);
            free(msg);
            free(cus);
            free(exp);
        }
    }
    print_message("%s: %zu AFT, %zu MVT (%zu failing) bit-exact by the reference; library = "
                  "reference on %zu (%zu xof, %zu hex S); %zu byte-aligned direct\n",
                  dir, n_aft, n_mvt, n_mvt_false, n_cross, n_xof, n_hex, n_direct);
    assert_true(n_aft > 0 && n_mvt > 0 && n_mvt_false > 0 && n_cross > 0 && n_xof > 0 && n_hex > 0);
    json_decref(prompt);
    json_decref(expected);
}

/* ACVP KMAC-128 and KMAC-256 (all four AFT and MVT groups each). */
static void test_acvp_kmac(void **state)
{
    (void)state;
    run_acvp_kmac("KMAC-128-1.0", "KMAC128", 128);
    run_acvp_kmac("KMAC-256-1.0", "KMAC256", 256);
}

/* The hook refuses what the primitives cannot do, with an error code rather than a crash. */
static void test_hook_refusals(void **state)
{
    (void)state;
    uint8_t k[32] = {0}, out[80];
    assert_int_equal(dsig_mac_compute("ES256", k, 32, k, 1, NULL, 0, 16, 0, out), DSIG_E_UNSUPPORTED);
    assert_int_equal(dsig_mac_compute("HS256", k, 32, k, 1, NULL, 0, 33, 0, out), DSIG_E_ARG);
    assert_int_equal(dsig_mac_compute("HS256", k, 32, k, 1, NULL, 0, 0, 0, out), DSIG_E_ARG);
    assert_int_equal(dsig_mac_compute("HS256", k, 32, k, 1, k, 1, 32, 0, out), DSIG_E_ARG);
    assert_int_equal(dsig_mac_compute("CMAC-AES-128", k, 17, k, 1, NULL, 0, 16, 0, out),
                     DSIG_E_KEY_MISMATCH);
    assert_int_equal(dsig_mac_compute("CMAC-AES-128", k, 0, k, 1, NULL, 0, 16, 0, out),
                     DSIG_E_KEY_MISMATCH);
    assert_int_equal(dsig_mac_compute("KMAC128", k, 3, k, 1, NULL, 0, 16, 0, out),
                     DSIG_E_KEY_MISMATCH);
    /* KMAC with L = 80 bytes is a different function from L = 32, not a prefix (SP 800-185 §4.3). */
    uint8_t a[80];
    assert_int_equal(dsig_mac_compute("KMAC128", k, 32, k, 1, NULL, 0, 32, 0, out), DSIG_OK);
    assert_int_equal(dsig_mac_compute("KMAC128", k, 32, k, 1, NULL, 0, 80, 0, a), DSIG_OK);
    assert_memory_not_equal(out, a, 32);
    /* The registered KMAC128 is L = 256, S = "": the hook and dsig_sign agree. */
    dsig_key *key = oct_key(k, 32);
    uint8_t sig[64];
    size_t sl;
    assert_int_equal(dsig_sign(dsig_alg_by_name("KMAC128"), key, k, 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(sl, 32);
    assert_memory_equal(sig, out, 32);
    dsig_key_free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wycheproof_hmac_sha2), cmocka_unit_test(test_wycheproof_hmac_sha3),
        cmocka_unit_test(test_wycheproof_kmac),      cmocka_unit_test(test_wycheproof_cmac),
        cmocka_unit_test(test_acvp_hmac),            cmocka_unit_test(test_acvp_cmac),
        cmocka_unit_test(test_acvp_kmac),            cmocka_unit_test(test_hook_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
