/*
 * tests/lms/test_lms_api.c — the "HSS-LMS" provider through the public API: key generation with
 * parameter strings, AKP JWK export/import (public only), state files (dsig_state_create/open in a
 * temporary directory, registry disabled), consecutive indices across child-tree replacement,
 * streaming, exhaustion, reopen after close, refusal to sign from memory, tampering, malformed keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define PARAM2 "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8"

static char tmpdir[256];

/* Big-endian load. */
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static const dsig_alg *hss(void)
{
    const dsig_alg *a = dsig_alg_by_name("HSS-LMS");
    assert_non_null(a);
    return a;
}

/* Global index of a 2-level H5/H5 signature: top q ‖ bottom q (RFC 8554 §6.2 layout). */
static uint64_t index_of_l2(const uint8_t *sig)
{
    size_t top = 4 + 4 + 32 * 68 + 4 + 5 * 32; /* LMS sig, H5/W4 */
    return (uint64_t)be32(sig + 4) << 5 | be32(sig + 4 + top + 56);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dsig-lms-test-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* In-memory keys: descriptor flags, parameter strings, JWK round trip, never a signature. */
static void test_memory_key(void **state)
{
    (void)state;
    const dsig_alg *a = hss();
    unsigned f = dsig_alg_flags(a);
    assert_true(f & DSIG_ALG_STATEFUL);
    assert_true(f & DSIG_ALG_PQ);
    assert_true(f & DSIG_ALG_ONE_PASS);
    assert_string_equal(dsig_alg_kty(a), "AKP");
    dsig_keygen_params p = {0};
    p.param = "H5/W8";
    dsig_key *k;
    assert_int_equal(dsig_key_generate(&k, a, &p), 0);
    uint8_t sig[16];
    size_t sl;
    assert_int_equal(dsig_sign(a, k, "x", 1, sig, sizeof sig, &sl), DSIG_E_STATE);
    char *json;
    size_t jl;
    assert_int_not_equal(dsig_jwk_export(k, 1, &json, &jl), 0);
    assert_int_equal(dsig_jwk_export(k, 0, &json, &jl), 0);
    assert_non_null(strstr(json, "\"HSS-LMS\""));
    dsig_key *pub;
    assert_int_equal(dsig_jwk_import(&pub, json, jl), 0);
    assert_int_equal(dsig_key_has_private(pub), 0);
    dsig_free(json);
    dsig_key_free(pub);
    dsig_key_free(k);
    /* seeded generation is reproducible */
    uint8_t seed[32] = {7};
    p.seed = seed;
    p.seed_len = sizeof seed;
    dsig_key *k1, *k2;
    char *j1, *j2;
    size_t l1, l2;
    assert_int_equal(dsig_key_generate(&k1, a, &p), 0);
    assert_int_equal(dsig_key_generate(&k2, a, &p), 0);
    assert_int_equal(dsig_jwk_export(k1, 0, &j1, &l1), 0);
    assert_int_equal(dsig_jwk_export(k2, 0, &j2, &l2), 0);
    assert_string_equal(j1, j2);
    dsig_free(j1);
    dsig_free(j2);
    dsig_key_free(k1);
    dsig_key_free(k2);
    /* bad parameter strings and sizes */
    p.seed = NULL;
    p.param = "LMS_SHA256_M32_H10/LMOTS_SHAKE_N32_W4";
    assert_int_equal(dsig_key_generate(&k, a, &p), DSIG_E_ARG);
    p.param = "H7/W4";
    assert_int_equal(dsig_key_generate(&k, a, &p), DSIG_E_ARG);
    p.param = NULL;
    p.bits = 256;
    assert_int_equal(dsig_key_generate(&k, a, &p), DSIG_E_ARG);
}

/* Malformed "pub" members are refused at import. */
static void test_bad_jwk(void **state)
{
    (void)state;
    static const char *const bad[] = {
        /* L = 0 */
        "{\"kty\":\"AKP\",\"alg\":\"HSS-LMS\",\"pub\":\"AAAAAAAAAAUAAAAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}",
        /* unknown LMS type 0x42 */
        "{\"kty\":\"AKP\",\"alg\":\"HSS-LMS\",\"pub\":\"AAAAAQAAAEIAAAAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}",
        /* truncated */
        "{\"kty\":\"AKP\",\"alg\":\"HSS-LMS\",\"pub\":\"AAAAAQAAAAUAAAAE\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dsig_key *k = NULL;
        assert_int_not_equal(dsig_jwk_import(&k, bad[i], strlen(bad[i])), 0);
        assert_null(k);
    }
}

/* A state file: 70 signatures over the child replacement at 32 and 64, streamed in chunks, indices
 * consecutive, each verifies with the public key, tampering is rejected; reopen continues above. */
static void test_state_sign(void **state)
{
    (void)state;
    const dsig_alg *a = hss();
    char path[300];
    snprintf(path, sizeof path, "%s/k2.state", tmpdir);
    dsig_keygen_params p = {0};
    p.param = PARAM2;
    dsig_state_opts o = {.reserve = 16, .registry_dir = ""};
    dsig_key *k, *pub;
    int rc = dsig_state_create(&k, path, a, &p, &o);
    if (rc)
        fail_msg("dsig_state_create: %s", dsig_last_error_detail());
    assert_int_equal(dsig_state_is_state_file(path), 1);
    uint64_t rem;
    assert_int_equal(dsig_state_remaining(k, &rem), 0);
    assert_int_equal(rem, 1024);
    assert_int_equal(dsig_key_public(&pub, k), 0);
    uint8_t msg[777], *sig = malloc(dsig_alg_sig_max(a));
    tu_fill(msg, sizeof msg, 5);
    size_t sl;
    for (uint64_t i = 0; i < 70; i++) {
        msg[0] = (uint8_t)i;
        rc = tu_sign_chunked(a, k, msg, sizeof msg, i % 3 ? 100 : 0, sig, dsig_alg_sig_max(a), &sl);
        if (rc)
            fail_msg("sign %llu: %s", (unsigned long long)i, dsig_last_error_detail());
        assert_int_equal(index_of_l2(sig), i);
        assert_int_equal(tu_verify_chunked(a, pub, msg, sizeof msg, 64, sig, sl), 0);
        if (i % 10 == 0) {
            sig[(i * 131) % sl] ^= 4;
            assert_int_equal(dsig_verify(a, pub, msg, sizeof msg, sig, sl), DSIG_E_VERIFY);
            sig[(i * 131) % sl] ^= 4;
            msg[1] ^= 1;
            assert_int_equal(dsig_verify(a, pub, msg, sizeof msg, sig, sl), DSIG_E_VERIFY);
            msg[1] ^= 1;
        }
    }
    /* a second open of the same file is refused while the first holds it */
    dsig_key *k2 = NULL;
    assert_int_not_equal(dsig_state_open(&k2, path, &o), 0);
    dsig_key_free(k);
    /* reopen: the rest of the reserved window is skipped, never reused */
    rc = dsig_state_open(&k, path, &o);
    if (rc)
        fail_msg("dsig_state_open: %s", dsig_last_error_detail());
    assert_int_equal(dsig_sign(a, k, msg, sizeof msg, sig, dsig_alg_sig_max(a), &sl), 0);
    assert_true(index_of_l2(sig) >= 70);
    assert_int_equal(dsig_verify(a, pub, msg, sizeof msg, sig, sl), 0);
    dsig_key_free(k);
    dsig_key_free(pub);
    free(sig);
}

/* An L = 1 H5 key signs exactly 32 times, then DSIG_E_EXHAUSTED and never a signature. */
static void test_exhaust(void **state)
{
    (void)state;
    const dsig_alg *a = hss();
    char path[300];
    snprintf(path, sizeof path, "%s/k1.state", tmpdir);
    dsig_keygen_params p = {0};
    p.param = "LMS_SHAKE_M24_H5/LMOTS_SHAKE_N24_W4";
    dsig_state_opts o = {.reserve = 5, .registry_dir = ""};
    dsig_key *k, *pub;
    int rc = dsig_state_create(&k, path, a, &p, &o);
    if (rc)
        fail_msg("dsig_state_create: %s", dsig_last_error_detail());
    assert_int_equal(dsig_key_public(&pub, k), 0);
    uint8_t *sig = malloc(dsig_alg_sig_max(a));
    size_t sl;
    for (uint32_t i = 0; i < 32; i++) {
        assert_int_equal(dsig_sign(a, k, &i, sizeof i, sig, dsig_alg_sig_max(a), &sl), 0);
        assert_int_equal(be32(sig + 4), i);
        assert_int_equal(dsig_verify(a, pub, &i, sizeof i, sig, sl), 0);
    }
    uint64_t rem = 1;
    assert_int_equal(dsig_state_remaining(k, &rem), 0);
    assert_int_equal(rem, 0);
    assert_int_equal(dsig_sign(a, k, "x", 1, sig, dsig_alg_sig_max(a), &sl), DSIG_E_EXHAUSTED);
    dsig_key_free(k);
    /* an exhausted file still opens (public key, remaining 0) and still refuses */
    if (dsig_state_open(&k, path, &o) == DSIG_OK) {
        assert_int_equal(dsig_sign(a, k, "x", 1, sig, dsig_alg_sig_max(a), &sl), DSIG_E_EXHAUSTED);
        dsig_key_free(k);
    }
    dsig_key_free(pub);
    free(sig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_key),
        cmocka_unit_test(test_bad_jwk),
        cmocka_unit_test(test_state_sign),
        cmocka_unit_test(test_exhaust),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
