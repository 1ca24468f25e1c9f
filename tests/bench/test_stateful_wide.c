/*
 * tests/bench/test_stateful_wide.c — the wide (2-lane SHA-NI / 8-lane AVX2) WOTS+ and LM-OTS key
 * generation against the one-chain-at-a-time path, in the same run: identical public keys, and the
 * before/after times printed (XMSS-SHA2_10_256 root, LMS H10/W4 public key). No timing assertion.
 */
#include <string.h>
#include <time.h>

#include "testutil.h"

#include "hash/sha256.h"
#include "pq/lms/lms.h"
#include "pq/xmss/xmss.h"

extern unsigned dsig_xmss_test_narrow;
extern unsigned dsig_lms_test_narrow;

/* Monotonic milliseconds. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* XMSS-SHA2_10_256 (and a 5-layer-free small set) key generation: narrow and wide roots equal. */
static void test_xmss_wide_equals_narrow(void **state)
{
    (void)state;
    const dsig_xmss_params *p = dsig_xmss_params_by_name("XMSS-SHA2_10_256");
    assert_non_null(p);
    uint8_t seed[32], sk[32], r0[32], r1[32];
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(i * 7 + 1), sk[i] = (uint8_t)(255 - i);
    dsig_xmss_hash c;
    dsig_xmss_hash_init(&c, p, seed, sk);
    dsig_xmss_test_narrow = 1;
    double t0 = now_ms();
    assert_int_equal(dsig_xmss_keygen(&c, r0, NULL), DSIG_OK);
    double t1 = now_ms();
    dsig_xmss_test_narrow = 0;
    assert_int_equal(dsig_xmss_keygen(&c, r1, NULL), DSIG_OK);
    double t2 = now_ms();
    assert_memory_equal(r0, r1, 32);
    print_message("XMSS-SHA2_10_256 keygen (root): one chain at a time %.1f ms, wide %.1f ms "
                  "(x%.2f; sha256 %s, x8 %d)\n", t1 - t0, t2 - t1, (t1 - t0) / (t2 - t1),
                  dsig_sha256_impl(), dsig_sha256_have_x8());
    dsig_xmss_hash_wipe(&c);
}

/* LMS H10/W4 (and H5/W8, odd p for the remainder path) public keys: narrow and wide equal. */
static void test_lms_wide_equals_narrow(void **state)
{
    (void)state;
    static const char *const sets[][2] = {{"LMS_SHA256_M32_H10", "LMOTS_SHA256_N32_W4"},
                                          {"LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"},
                                          {"LMS_SHA256_M24_H5", "LMOTS_SHA256_N24_W2"}};
    uint8_t I[16], seed[32], p0[DSIG_LMS_PUB_MAX], p1[DSIG_LMS_PUB_MAX];
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(i * 13 + 5);
    memset(I, 0x42, sizeof I);
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        const dsig_lms_params *lp = dsig_lms_params_by_name(sets[s][0], strlen(sets[s][0]));
        const dsig_lmots_params *op = dsig_lmots_params_by_name(sets[s][1], strlen(sets[s][1]));
        assert_non_null(lp);
        assert_non_null(op);
        dsig_lms_test_narrow = 1;
        double t0 = now_ms();
        assert_int_equal(dsig_lms_keygen_pub(lp, op, I, seed, p0), DSIG_OK);
        double t1 = now_ms();
        dsig_lms_test_narrow = 0;
        assert_int_equal(dsig_lms_keygen_pub(lp, op, I, seed, p1), DSIG_OK);
        double t2 = now_ms();
        assert_memory_equal(p0, p1, dsig_lms_pub_len(lp));
        print_message("%s/%s keygen: one chain at a time %.1f ms, wide %.1f ms (x%.2f)\n", lp->name,
                      op->name, t1 - t0, t2 - t1, (t1 - t0) / (t2 - t1));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xmss_wide_equals_narrow),
        cmocka_unit_test(test_lms_wide_equals_narrow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
