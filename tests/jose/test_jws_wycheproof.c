/*
 * Wycheproof json_web_signature_test.json: every "invalid" vector must be rejected; every "valid" one
 * must verify unless its algorithm is not supported (DSIG_E_UNSUPPORTED, counted) or it is one of the
 * documented strict-policy rejections below.
 */
#include <stdlib.h>
#include <string.h>

#include "jose_test_util.h"

/* Valid-labelled vectors dsig rejects on purpose (docs/jws.md):
 *  - tcId 373 "InvalidCharacterInsertedInPayload": a lenient decoder skips the '?'; base64url is strict;
 *  - a JWS whose header alg differs from the JWK's "alg" (RFC 7520 keys bound to PS256 used for
 *    PS384/PS512): the key's binding decides, the header must agree. */
static int strict_policy_reject(long tc, int rc, const dsig_key *key)
{
    return (tc == 373 && rc == DSIG_E_BASE64) || (rc == DSIG_E_ALG_NOT_ALLOWED && dsig_key_alg(key));
}

/* The tcId of a "valid" vector of the group with exactly this JWS text, or -1. The stored file has
 * "invalid" vectors (367, 370: their padding was lost) byte-identical to valid ones: no verifier can
 * tell them apart, so they are counted and reported, not failed. */
static long identical_valid(const json_t *tests, const char *jws)
{
    for (size_t t = 0; t < json_array_size(tests); t++) {
        const json_t *tc = json_array_get(tests, t);
        if (strcmp(tu_str(tc, "result"), "valid") == 0 && strcmp(tu_str(tc, "jws"), jws) == 0)
            return (long)json_integer_value(json_object_get(tc, "tcId"));
    }
    return -1;
}

static void test_wycheproof(void **state)
{
    (void)state;
    json_t *v = tu_load_json("jws/wycheproof/json_web_signature_test.json");
    json_t *groups = json_object_get(v, "testGroups");
    size_t ok_valid = 0, rej_invalid = 0, unsupported = 0, policy = 0, total = 0, contradictory = 0;
    const char *all[64];
    size_t na = 0;
    for (size_t i = 0; i < dsig_alg_count() && na < 63; i++)
        all[na++] = dsig_alg_name(dsig_alg_at(i));
    all[na] = NULL;
    for (size_t g = 0; g < json_array_size(groups); g++) {
        json_t *grp = json_array_get(groups, g);
        json_t *jwk = json_object_get(grp, "public") ? json_object_get(grp, "public")
                                                     : json_object_get(grp, "private");
        char *text = json_dumps(jwk, JSON_COMPACT);
        dsig_key *key = NULL;
        int krc = dsig_jwk_import(&key, text, strlen(text));
        char kdetail[256];
        snprintf(kdetail, sizeof kdetail, "%s", dsig_last_error_detail());
        free(text);
        json_t *tests = json_object_get(grp, "tests");
        for (size_t t = 0; t < json_array_size(tests); t++) {
            json_t *tc = json_array_get(tests, t);
            long id = (long)json_integer_value(json_object_get(tc, "tcId"));
            int valid = strcmp(tu_str(tc, "result"), "valid") == 0;
            const char *jws = tu_str(tc, "jws");
            int rc = krc;
            if (krc == DSIG_OK) {
                /* keys without "alg": the header alg must be one we implement and fit the key */
                dsig_jws_verify_opts o = {.allowed = dsig_key_alg(key) ? NULL : all};
                rc = jt_verify_embedded(jws, key, &o);
            }
            total++;
            long twin = valid ? -1 : identical_valid(tests, jws);
            if (!valid && rc == DSIG_OK && twin >= 0) {
                print_message("  tcId %ld: \"invalid\" but byte-identical to valid tcId %ld\n", id, twin);
                contradictory++;
            } else if (!valid) {
                if (rc == DSIG_OK)
                    fail_msg("tcId %ld (%s) is invalid but was accepted", id, tu_str(tc, "comment"));
                rej_invalid++;
            } else if (rc == DSIG_OK) {
                ok_valid++;
            } else if (rc == DSIG_E_UNSUPPORTED) {
                print_message("  tcId %ld: unsupported (%s)\n", id,
                              krc ? kdetail : dsig_last_error_detail());
                unsupported++;
            } else if (strict_policy_reject(id, rc, key)) {
                print_message("  tcId %ld: rejected by policy (%s)\n", id, dsig_last_error_detail());
                policy++;
            } else {
                fail_msg("tcId %ld (%s) is valid but failed: %d %s", id, tu_str(tc, "comment"), rc,
                         krc ? kdetail : dsig_last_error_detail());
            }
        }
        dsig_key_free(key);
    }
    print_message("  Wycheproof JWS: %zu tests; %zu invalid rejected; %zu valid accepted; %zu valid "
                  "unsupported; %zu valid rejected by strict policy; %zu contradictory\n",
                  total, rej_invalid, ok_valid, unsupported, policy, contradictory);
    assert_true(contradictory <= 2);
    assert_int_equal(total, (size_t)json_integer_value(json_object_get(v, "numberOfTests")));
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_wycheproof)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
