/*
 * tests/bench/test_stateful_wide.c — WOTS+ and LM-OTS key generation on whatever SHA-256 wide kernel
 * the dispatcher chose (2-lane SHA-NI, 8-lane AVX2, or one chain at a time) against fixed known
 * answers (XMSS-SHA2_10_256 root, LMS public keys incl. an odd p for the remainder path). CTest runs
 * this binary again with DSIG_CPU_DISABLE=shani and =avx2,shani, so every back-end gives the same
 * bytes; each run prints its time, so the runs side by side are the before/after. No timing assertion.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

#include "core/cpu.h"
#include "hash/sha256.h"
#include "pq/lms/lms.h"
#include "pq/xmss/xmss.h"

/* Monotonic milliseconds. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void hex(char *out, const uint8_t *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", in[i]);
}

/* The wide kernel in use, for the printed lines. */
static void print_backend(void)
{
    print_message("sha256 wide kernel: %s x%u (cpu: %s)\n", dsig_sha256_ops_get()->lanes_name,
                  dsig_sha256_simd_degree(), dsig_cpu_describe());
}

/* XMSS-SHA2_10_256 key generation: the root equals the known answer. */
static void test_xmss_wide_known_answer(void **state)
{
    (void)state;
    static const char want[] = "d335e9ab0627286ac07d47ada9e984aeda49d919dfaeaf0375b7d6d79b467bea";
    const dsig_xmss_params *p = dsig_xmss_params_by_name("XMSS-SHA2_10_256");
    assert_non_null(p);
    uint8_t seed[32], sk[32], root[32];
    char got[65];
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(i * 7 + 1), sk[i] = (uint8_t)(255 - i);
    dsig_xmss_hash c;
    dsig_xmss_hash_init(&c, p, seed, sk);
    double t0 = now_ms();
    assert_int_equal(dsig_xmss_keygen(&c, root, NULL), DSIG_OK);
    double t1 = now_ms();
    hex(got, root, 32);
    print_backend();
    print_message("XMSS-SHA2_10_256 keygen (root): %.1f ms, root %s\n", t1 - t0, got);
    assert_string_equal(got, want);
    dsig_xmss_hash_wipe(&c);
}

/* LMS H10/W4, H5/W8 and M24 H5/W2 public keys equal the known answers. */
static void test_lms_wide_known_answer(void **state)
{
    (void)state;
    static const char *const sets[][3] = {
        {"LMS_SHA256_M32_H10", "LMOTS_SHA256_N32_W4",
         "000000060000000342424242424242424242424242424242"
         "bc7ea9adc866967c9f2ab5a1bd59fceb8d5f47bc1dd9d7dcdbecea54cc2a50c7"},
        {"LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8",
         "000000050000000442424242424242424242424242424242"
         "6eb6fb2614f89a612ed1bc26a296093f16261a2e7e7d824d1346c4c83b60e051"},
        {"LMS_SHA256_M24_H5", "LMOTS_SHA256_N24_W2",
         "0000000a0000000642424242424242424242424242424242"
         "d19a64996182af9b268ef25576f8a8374b7f17cdfcfd2815"}};
    uint8_t I[16], seed[32], pub[DSIG_LMS_PUB_MAX];
    char got[2 * DSIG_LMS_PUB_MAX + 1];
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(i * 13 + 5);
    memset(I, 0x42, sizeof I);
    int bad = 0;
    print_backend();
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        const dsig_lms_params *lp = dsig_lms_params_by_name(sets[s][0], strlen(sets[s][0]));
        const dsig_lmots_params *op = dsig_lmots_params_by_name(sets[s][1], strlen(sets[s][1]));
        assert_non_null(lp);
        assert_non_null(op);
        double t0 = now_ms();
        assert_int_equal(dsig_lms_keygen_pub(lp, op, I, seed, pub), DSIG_OK);
        double t1 = now_ms();
        hex(got, pub, dsig_lms_pub_len(lp));
        print_message("%s/%s keygen: %.1f ms, pub %s\n", lp->name, op->name, t1 - t0, got);
        if (strcmp(got, sets[s][2]) != 0)
            bad++;
    }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xmss_wide_known_answer),
        cmocka_unit_test(test_lms_wide_known_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
