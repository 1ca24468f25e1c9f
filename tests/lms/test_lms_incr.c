/*
 * tests/lms/test_lms_incr.c — "signing must not hide a tree computation": the HSS core
 * (src/pq/lms/hss_key.c) builds every level's NEXT child tree a slice per signature. Measures no time:
 * it counts work through the core's per-thread test hooks (dsig_lms_test_leaves = LM-OTS public
 * keys computed, dsig_lms_test_child_signs = signatures of child public keys) and checks that, in
 * sequence, no signature does more than one leaf per non-top level and one child signature per
 * non-top level, across bottom and middle roll-overs, after a load at any index, and after a jump.
 * Byte identity: every signature at a roll-over equals the one a freshly loaded key makes (that key
 * builds its trees whole, the path before incremental trees, itself proven by the RFC 8554 / Botan vectors of
 * test_lms); every 7th signature and every boundary also verify.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "pq/lms/lms.h"
#include "testutil.h"

/* A parsed parameter string and fixed secrets. */
struct set {
    unsigned L;
    uint32_t lt[DSIG_HSS_L_MAX], ot[DSIG_HSS_L_MAX];
    uint8_t seed[32], I[16];
};

/* Parse param and fill the secrets. */
static void set_init(struct set *s, const char *param)
{
    assert_int_equal(dsig_hss_parse_param(param, &s->L, s->lt, s->ot), 0);
    tu_fill(s->seed, sizeof s->seed, 11);
    tu_fill(s->I, sizeof s->I, 12);
}

/* A key of s loaded at index next. */
static dsig_hss_priv *load(const struct set *s, uint64_t next)
{
    dsig_hss_priv *k;
    assert_int_equal(dsig_hss_priv_new(&k, s->L, s->lt, s->ot, s->seed, s->I, next), 0);
    return k;
}

/* Sign the index (derived C: reproducible) and return the work it did. */
static void sign_counted(dsig_hss_priv *k, uint64_t idx, uint8_t *sig, uint64_t *leaves,
                         uint64_t *csigns)
{
    static const uint8_t msg[5] = {'i', 's', 's', '8', 0};
    size_t cap = dsig_hss_priv_sig_len(k), sl;
    uint64_t l0 = dsig_lms_test_leaves, c0 = dsig_lms_test_child_signs;
    if (dsig_hss_sign(k, idx, NULL, msg, sizeof msg, sig, cap, &sl))
        fail_msg("sign %llu: %s", (unsigned long long)idx, dsig_last_error_detail());
    assert_int_equal(sl, cap);
    *leaves = dsig_lms_test_leaves - l0;
    *csigns = dsig_lms_test_child_signs - c0;
}

/* The signature at idx equals that of a key freshly loaded at idx, and verifies. */
static void check_fresh(const struct set *s, dsig_hss_priv *k, uint64_t idx, const uint8_t *sig)
{
    static const uint8_t msg[5] = {'i', 's', 's', '8', 0};
    dsig_hss_priv *f = load(s, idx);
    size_t cap = dsig_hss_priv_sig_len(f), sl;
    uint8_t *want = malloc(cap), pub[DSIG_HSS_PUB_MAX];
    assert_non_null(want);
    assert_int_equal(dsig_hss_sign(f, idx, NULL, msg, sizeof msg, want, cap, &sl), 0);
    if (memcmp(want, sig, cap))
        fail_msg("index %llu: signature differs from a freshly loaded key's", (unsigned long long)idx);
    size_t pl = dsig_hss_priv_pub(k, pub);
    assert_int_equal(dsig_hss_verify(pub, pl, msg, sizeof msg, sig, cap), 0);
    free(want);
    dsig_hss_priv_free(f);
}

/* 1 when idx is at a roll-over of some lower level (the first or last index of one of its trees). */
static int near_boundary(const struct set *s, uint64_t idx)
{
    unsigned below = 0;
    for (unsigned i = s->L; i-- > 1;) {
        const dsig_lms_params *lp = dsig_lms_params_by_type(s->lt[i]);
        below += lp->h;
        uint64_t mask = ((uint64_t)1 << below) - 1;
        if ((idx & mask) == 0 || (idx & mask) == mask)
            return 1;
    }
    return 0;
}

/*
 * Sign from..to-1 in sequence with a key loaded at `from`: each signature does at most L-1 leaf
 * computations and L-1 child signatures (one per non-top level), the roll-overs build nothing
 * whole, and the bytes equal a fresh key's at every boundary. Returns the total leaves.
 */
static uint64_t run(const char *param, uint64_t from, uint64_t to)
{
    struct set s;
    set_init(&s, param);
    dsig_hss_priv *k = load(&s, from);
    size_t cap = dsig_hss_priv_sig_len(k);
    uint8_t *sig = malloc(cap), pub[DSIG_HSS_PUB_MAX];
    assert_non_null(sig);
    size_t pl = dsig_hss_priv_pub(k, pub);
    uint64_t total = 0, maxl = 0, maxc = 0;
    for (uint64_t idx = from; idx < to; idx++) {
        uint64_t l, c;
        sign_counted(k, idx, sig, &l, &c);
        total += l;
        maxl = l > maxl ? l : maxl;
        maxc = c > maxc ? c : maxc;
        if (l > s.L - 1 || c > s.L - 1)
            fail_msg("%s: signature %llu computed %llu leaves and %llu child signatures (bound %u)",
                     param, (unsigned long long)idx, (unsigned long long)l, (unsigned long long)c,
                     s.L - 1);
        if (near_boundary(&s, idx))
            check_fresh(&s, k, idx, sig);
        else if (idx % 7 == 0)
            assert_int_equal(dsig_hss_verify(pub, pl, (const uint8_t *)"iss8", 5, sig, cap), 0);
    }
    print_message("%s [%llu, %llu): %llu leaves, at most %llu leaves / %llu child signatures per "
                  "signature\n", param, (unsigned long long)from, (unsigned long long)to,
                  (unsigned long long)total, (unsigned long long)maxl, (unsigned long long)maxc);
    free(sig);
    dsig_hss_priv_free(k);
    return total;
}

/* Two levels: one leaf per signature while a next bottom tree exists, across 3 roll-overs. */
static void test_two_levels(void **state)
{
    (void)state;
    /* 4 bottom trees of 32 signatures: every signature computes one leaf of the next tree, except
     * index 0 whose leaf the load computed */
    assert_int_equal(run("H5/W4,H5/W4", 0, 128), 127);
    /* the last bottom tree of the key has no successor: no tree work at all */
    const uint64_t cap = (uint64_t)1 << 10;
    assert_int_equal(run("H5/W4,H5/W4", cap - 32, cap), 0);
    /* SHA-256/192 and SHAKE256 */
    run("LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W8,LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W2", 20, 80);
    run("LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W4,LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W4", 30, 70);
}

/* Three levels: middle roll-overs (every 1024) and the carry where a middle tree and its bottom child
 * roll over together (the child signed by the parent's own next tree). */
static void test_three_levels(void **state)
{
    (void)state;
    /* bottom: one leaf per signature but index 0's (done at load); middle: one leaf per 32
     * signatures (at positions 0, 32, .. 992 of its 1024), 31 + 32 + 2 of them in [0, 2088) */
    assert_int_equal(run("H5/W4,H5/W8,H5/W2", 0, 2 * 1024 + 40), (2088 - 1) + (31 + 32 + 2));
}

/* A load at any index leaves the next trees as sequential signing would: the first signature after
 * it does only its own slice (the bound holds from the first one), and the bytes stay the same. */
static void test_load_anywhere(void **state)
{
    (void)state;
    const uint64_t at[] = {1, 17, 31, 991, 992, 1000, 1023, 1024, 2047};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        run("H5/W4,H5/W8,H5/W2", at[i], at[i] + 3);
    run("H5/W4,H10/W4", 1020, 1030); /* different heights per level */
}

/* A jump ahead (the core API allows any index) catches up, still the same bytes; the next signature
 * in sequence is bounded again. */
static void test_jump(void **state)
{
    (void)state;
    struct set s;
    set_init(&s, "H5/W4,H5/W8,H5/W2");
    dsig_hss_priv *k = load(&s, 0);
    uint8_t *sig = malloc(dsig_hss_priv_sig_len(k));
    assert_non_null(sig);
    uint64_t l, c;
    const uint64_t seq[] = {0, 5, 31, 32, 40, 1023, 1024, 1025, 3000, 3001, 5000, 32767};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        sign_counted(k, seq[i], sig, &l, &c);
        check_fresh(&s, k, seq[i], sig);
        if (i && seq[i] == seq[i - 1] + 1 && (l > 2 || c > 2))
            fail_msg("signature %llu after %llu: %llu leaves", (unsigned long long)seq[i],
                     (unsigned long long)seq[i - 1], (unsigned long long)l);
    }
    free(sig);
    dsig_hss_priv_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_levels),
        cmocka_unit_test(test_three_levels),
        cmocka_unit_test(test_load_anywhere),
        cmocka_unit_test(test_jump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
