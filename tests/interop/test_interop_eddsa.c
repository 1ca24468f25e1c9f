/*
 * EdDSA interop with the OpenSSL command line (run in a mkdtemp directory):
 *   our randomized streaming signature  -> `openssl pkeyutl -verify -rawin` accepts it;
 *   `openssl pkeyutl -sign -rawin`      -> equals our deterministic one-shot signature byte for byte
 *                                          and passes our streaming verifier.
 * Skips cleanly when no `openssl` binary is available.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char dir[64];

/* Write a file in the temporary directory. */
static void put(const char *name, const void *data, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Read a file of the temporary directory (at most cap bytes); returns its length. */
static size_t get(const char *name, uint8_t *buf, size_t cap)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* Run an openssl command in the temporary directory; returns its exit status. */
static int run(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && openssl %s >/dev/null 2>&1", dir, args);
    int st = system(cmd);
    return st == -1 ? -1 : WEXITSTATUS(st);
}

static int setup(void **state)
{
    (void)state;
    if (system("openssl version >/dev/null 2>&1") != 0)
        return 0; /* the tests skip */
    snprintf(dir, sizeof dir, "/tmp/dsig-eddsa-interop-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (dir[0] && strncmp(dir, "/tmp/dsig-eddsa-interop-", 24) == 0) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            return -1;
    }
    return 0;
}

static void interop(const char *alg_name)
{
    if (!dir[0])
        skip();
    const dsig_alg *alg = dsig_alg_by_name(alg_name);
    assert_non_null(alg);
    uint8_t seed[32];
    memset(seed, 0x5a, sizeof seed);
    dsig_keygen_params p = {.seed = seed, .seed_len = sizeof seed};
    dsig_key *key;
    assert_int_equal(dsig_key_generate(&key, alg, &p), DSIG_OK);
    char *pem;
    size_t pl;
    assert_int_equal(dsig_key_export_pem(key, 0, &pem, &pl), DSIG_OK);
    put("pub.pem", pem, pl);
    dsig_free(pem);
    assert_int_equal(dsig_key_export_pem(key, 1, &pem, &pl), DSIG_OK);
    put("priv.pem", pem, pl);
    dsig_free(pem);

    /* Lengths from 1: `openssl pkeyutl -rawin` (3.0) cannot read an empty input file. */
    static const size_t lens[] = {1, 10, 1000, 100000};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t len = lens[li];
        uint8_t *msg = malloc(len + 1);
        assert_non_null(msg);
        tu_fill(msg, len, len + 1);
        put("msg", msg, len);

        /* Our one-pass streaming signature -> OpenSSL verifies it. */
        uint8_t sig[114];
        size_t sl;
        assert_int_equal(tu_sign_chunked(alg, key, msg, len, 777, sig, sizeof sig, &sl), DSIG_OK);
        put("sig", sig, sl);
        if (run("pkeyutl -verify -rawin -pubin -inkey pub.pem -in msg -sigfile sig") != 0)
            fail_msg("%s: openssl rejects our streaming signature (message of %zu bytes)", alg_name, len);
        sig[sl - 1] ^= 0x01; /* and rejects a tampered one */
        put("sig", sig, sl);
        assert_int_not_equal(run("pkeyutl -verify -rawin -pubin -inkey pub.pem -in msg -sigfile sig"), 0);

        /* OpenSSL's deterministic signature == our one-shot one, and our streaming verifier agrees. */
        assert_int_equal(run("pkeyutl -sign -rawin -inkey priv.pem -in msg -out osig"), 0);
        uint8_t osig[200], ours[114];
        size_t ol = get("osig", osig, sizeof osig), lo;
        assert_int_equal(ol, dsig_alg_sig_max(alg));
        assert_int_equal(dsig_sign(alg, key, msg, len, ours, sizeof ours, &lo), DSIG_OK);
        assert_int_equal(lo, ol);
        assert_memory_equal(ours, osig, ol);
        assert_int_equal(tu_verify_chunked(alg, key, msg, len, 1000, osig, ol), DSIG_OK);
        free(msg);
    }
    dsig_key_free(key);
}

static void test_interop_ed25519(void **state)
{
    (void)state;
    interop("Ed25519");
}

static void test_interop_ed448(void **state)
{
    (void)state;
    interop("Ed448");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interop_ed25519),
        cmocka_unit_test(test_interop_ed448),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
