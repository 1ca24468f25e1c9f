/*
 * Index-range reservation (src/serve/ranges.c, docs/scale.md) on the in-process counter with injected
 * faults and on the file counter: the sizing formula, ranges that never overlap, the state file's
 * counter as a floor, retries on conflicts, a lost compare-and-swap answer (the range burned, never
 * used), an unavailable coordinator (bounded attempts, then a cooldown without calls; stateful signing
 * stops with DSIG_E_UNAVAILABLE while a stateless key signs on), a counter going backward refused, and
 * the exhausted key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/ranges.h"
#include "testutil.h"
#include "toy.h"

#define KID "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

static char dir[256], regdir[300];

static void test_sizing(void **state)
{
    (void)state;
    struct serve_ranges_config c = {0}; /* defaults: initial 64, floor 16, ceiling 65536, 30 s, share 16 */
    const uint64_t big = UINT64_MAX / 2;
    assert_int_equal(serve_ranges_size(&c, 0, 0, big), 64);          /* the first range */
    assert_int_equal(serve_ranges_size(&c, 64, 30000, big), 64);     /* lasted the target: kept */
    assert_int_equal(serve_ranges_size(&c, 64, 15000, big), 128);    /* twice as fast: doubled */
    assert_int_equal(serve_ranges_size(&c, 64, 1, big), 256);        /* much faster: at most 4x */
    assert_int_equal(serve_ranges_size(&c, 64, 0, big), 256);
    assert_int_equal(serve_ranges_size(&c, 256, 60000, big), 128);   /* slower: halved */
    assert_int_equal(serve_ranges_size(&c, 256, 3600000, big), 64);  /* idle: at most /4 */
    assert_int_equal(serve_ranges_size(&c, 32, 3600000, big), 16);   /* never below the floor */
    assert_int_equal(serve_ranges_size(&c, 65536, 1, big), 65536);   /* nor above the ceiling */
    assert_int_equal(serve_ranges_size(&c, 64, 30000, 100), 7);      /* ceil(100 / 16) near the end */
    assert_int_equal(serve_ranges_size(&c, 64, 30000, 3), 1);
    assert_int_equal(serve_ranges_size(&c, 64, 30000, 1), 1);
    assert_int_equal(serve_ranges_size(&c, 64, 30000, 0), 0);
    struct serve_ranges_config c2 = {.initial = 5, .floor = 2, .ceiling = 10, .share = 1};
    assert_int_equal(serve_ranges_size(&c2, 0, 0, 1000), 5);
    assert_int_equal(serve_ranges_size(&c2, 10, 1, 1000), 10);
    assert_int_equal(serve_ranges_size(&c2, 10, 1, 4), 4);
}

static void test_reserve_mem(void **state)
{
    (void)state;
    struct serve_counter *mc = NULL;
    assert_int_equal(serve_counter_mem_new(&mc), DSIG_OK);
    struct serve_ranges_config cfg = {.initial = 10, .floor = 10, .ceiling = 10, .share = 1,
                                      .backoff_ms = 1, .cooldown_ms = 50, .attempts = 4};
    struct serve_ranges *r = NULL;
    assert_int_equal(serve_ranges_new(&r, mc, &cfg), DSIG_OK);
    uint64_t lo, hi;
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_OK);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 10);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_OK);
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 20);
    /* The state file's counter is a floor: a file used before the key was shared. */
    assert_int_equal(serve_ranges_reserve(r, KID, 100, 1000, &lo, &hi), DSIG_OK);
    assert_int_equal(lo, 100);
    assert_int_equal(hi, 110);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_OK);
    assert_int_equal(lo, 110);
    /* Other writers get in first three times: retried from what they left. */
    struct serve_counter_mem_faults f = {.conflicts = 3, .bump = 5};
    serve_counter_mem_set_faults(mc, &f);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_OK);
    assert_int_equal(lo, 120 + 15);
    /* More contention than attempts. */
    f = (struct serve_counter_mem_faults){.conflicts = 10};
    serve_counter_mem_set_faults(mc, &f);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_E_STATE);
    f = (struct serve_counter_mem_faults){0};
    serve_counter_mem_set_faults(mc, &f);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_OK);
    uint64_t before = hi;
    /* A swap that was applied but whose answer was lost: that range is burned, the next one follows. */
    f = (struct serve_counter_mem_faults){.lost = 1};
    serve_counter_mem_set_faults(mc, &f);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_OK);
    assert_int_equal(lo, before + 10);
    /* Unavailable: bounded attempts, then a cooldown that asks nobody, then back. */
    f = (struct serve_counter_mem_faults){.unavailable = 1000};
    serve_counter_mem_set_faults(mc, &f);
    uint64_t calls = serve_counter_mem_calls(mc);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_E_UNAVAILABLE);
    assert_non_null(strstr(dsig_last_error_detail(), "unavailable"));
    assert_int_equal(serve_counter_mem_calls(mc) - calls, 4);
    calls = serve_counter_mem_calls(mc);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_E_UNAVAILABLE);
    assert_int_equal(serve_counter_mem_calls(mc), calls);
    f = (struct serve_counter_mem_faults){0};
    serve_counter_mem_set_faults(mc, &f);
    struct timespec ts = {0, 80 * 1000000L};
    nanosleep(&ts, NULL);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_OK);
    /* An outage that ends in conflicts (the coordinator is back, other writers first): attempts used up
     * partly unanswered are an outage (unavailable, retried later), not contention. */
    f = (struct serve_counter_mem_faults){.unavailable = 2, .conflicts = 10};
    serve_counter_mem_set_faults(mc, &f);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_E_UNAVAILABLE);
    f = (struct serve_counter_mem_faults){0};
    serve_counter_mem_set_faults(mc, &f);
    nanosleep(&ts, NULL);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_OK);
    /* A counter that went back (a restored coordinator) is refused. */
    serve_counter_mem_set(mc, KID, 50);
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "went back"));
    /* Near the end ranges shrink to what is left, then the key is exhausted for everyone. */
    serve_counter_mem_set(mc, "BBBB", 995);
    assert_int_equal(serve_ranges_reserve(r, "BBBB", 0, 1000, &lo, &hi), DSIG_OK);
    assert_int_equal(lo, 995);
    assert_int_equal(hi, 1000);
    assert_int_equal(serve_ranges_reserve(r, "BBBB", 0, 1000, &lo, &hi), DSIG_E_EXHAUSTED);
    assert_int_equal(serve_ranges_reserve(r, "CCCC", 1000, 1000, &lo, &hi), DSIG_E_EXHAUSTED);
    assert_int_equal(serve_ranges_reserve(r, "a/b", 0, 1000, &lo, &hi), DSIG_E_ARG);
    assert_int_equal(serve_ranges_reserve(r, "", 0, 1000, &lo, &hi), DSIG_E_ARG);
    serve_ranges_free(r);
    serve_counter_free(mc);
}

/* The file counter: creation at 0, compare-and-swap, a damaged file refused (unavailable). */
/* A counter whose every call takes 30 ms and fails: the deadline, not the attempts, ends the reservation. */
static int slow_get(void *ctx, const char *name, uint64_t *v)
{
    (void)name, (void)v;
    struct timespec ts = {0, 30 * 1000000L};
    nanosleep(&ts, NULL);
    ++*(int *)ctx;
    return SERVE_COUNTER_UNAVAILABLE;
}
static int slow_cas(void *ctx, const char *name, uint64_t e, uint64_t d, uint64_t *o)
{
    (void)e, (void)d, (void)o;
    return slow_get(ctx, name, NULL);
}
static void test_deadline(void **state)
{
    (void)state;
    static const struct serve_counter_ops slow_ops = {.name = "slow", .get = slow_get, .cas = slow_cas};
    int calls = 0;
    struct serve_counter c = {.ops = &slow_ops, .ctx = &calls};
    struct serve_ranges *r = NULL;
    struct serve_ranges_config cfg = {.attempts = 1000, .backoff_ms = 1, .deadline_ms = 200};
    assert_int_equal(serve_ranges_new(&r, &c, &cfg), DSIG_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t lo, hi;
    assert_int_equal(serve_ranges_reserve(r, KID, 0, 1000, &lo, &hi), DSIG_E_UNAVAILABLE);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(ms >= 200 && ms < 2000);
    assert_true(calls >= 3 && calls < 60);
    serve_ranges_free(r);
}

static void test_file_counter(void **state)
{
    (void)state;
    char cdir[400], p[500];
    snprintf(cdir, sizeof cdir, "%s/counter", dir);
    struct serve_counter *fc = NULL;
    assert_int_equal(serve_counter_file_new(&fc, cdir), DSIG_OK);
    uint64_t v = 7, obs = 0;
    assert_int_equal(fc->ops->get(fc->ctx, KID, &v), SERVE_COUNTER_OK);
    assert_int_equal(v, 0);
    assert_int_equal(fc->ops->cas(fc->ctx, KID, 1, 5, &obs), SERVE_COUNTER_CONFLICT);
    assert_int_equal(obs, 0);
    assert_int_equal(fc->ops->cas(fc->ctx, KID, 0, 5, &obs), SERVE_COUNTER_OK);
    assert_int_equal(fc->ops->get(fc->ctx, KID, &v), SERVE_COUNTER_OK);
    assert_int_equal(v, 5);
    assert_int_equal(fc->ops->cas(fc->ctx, KID, 0, 9, &obs), SERVE_COUNTER_CONFLICT);
    assert_int_equal(obs, 5);
    assert_int_equal(fc->ops->cas(fc->ctx, "../x", 0, 9, &obs), SERVE_COUNTER_UNAVAILABLE);
    snprintf(p, sizeof p, "%s/%s", cdir, KID);
    FILE *f = fopen(p, "w");
    fputs("12x\n", f);
    fclose(f);
    assert_int_equal(fc->ops->get(fc->ctx, KID, &v), SERVE_COUNTER_UNAVAILABLE);
    assert_non_null(strstr(dsig_last_error_detail(), "damaged"));
    assert_int_equal(fc->ops->cas(fc->ctx, KID, 5, 9, &obs), SERVE_COUNTER_UNAVAILABLE);
    serve_counter_free(fc);
}

/* Stateful signing through the source stops with a clear error while the coordinator is down (once
 * the window is used up); a stateless key signs on; stateful signing resumes when it is back. */
static void test_unavailable_stops_stateful_only(void **state)
{
    (void)state;
    struct serve_counter *mc = NULL;
    assert_int_equal(serve_counter_mem_new(&mc), DSIG_OK);
    struct serve_ranges_config cfg = {.initial = 4, .floor = 4, .ceiling = 4, .attempts = 2,
                                      .backoff_ms = 1, .cooldown_ms = 30};
    struct serve_ranges *r = NULL;
    assert_int_equal(serve_ranges_new(&r, mc, &cfg), DSIG_OK);
    char p[500];
    snprintf(p, sizeof p, "%s/u.state", dir);
    dsig_keygen_params kp = {.bits = 200};
    dsig_state_opts o = {.reserve = 2, .registry_dir = regdir, .ranges = serve_ranges_source(r)};
    dsig_key *k = NULL, *ed = NULL;
    assert_int_equal(dsig_state_create(&k, p, &toy_alg, &kp, &o), DSIG_OK);
    const dsig_alg *eda = dsig_alg_by_name("Ed25519");
    assert_int_equal(dsig_key_generate(&ed, eda, NULL), DSIG_OK);
    uint8_t sig[128];
    size_t sl;
    for (int i = 0; i < 3; i++) /* inside the first range [0, 4) */
        assert_int_equal(dsig_sign(&toy_alg, k, "m", 1, sig, sizeof sig, &sl), DSIG_OK);
    struct serve_counter_mem_faults f = {.unavailable = 1000};
    serve_counter_mem_set_faults(mc, &f);
    /* The range this signer holds is its own: the coordinator's state does not matter to it. */
    assert_int_equal(dsig_sign(&toy_alg, k, "m", 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(toy_sig_index(sig), 3);
    assert_int_equal(dsig_sign(&toy_alg, k, "m", 1, sig, sizeof sig, &sl), DSIG_E_UNAVAILABLE);
    assert_non_null(strstr(dsig_last_error_detail(), "stateful signing stops"));
    assert_int_equal(dsig_sign(&toy_alg, k, "m", 1, sig, sizeof sig, &sl), DSIG_E_UNAVAILABLE);
    assert_int_equal(dsig_sign(eda, ed, "m", 1, sig, sizeof sig, &sl), DSIG_OK);
    f = (struct serve_counter_mem_faults){0};
    serve_counter_mem_set_faults(mc, &f);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    assert_int_equal(dsig_sign(&toy_alg, k, "m", 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(toy_sig_index(sig), 4);
    dsig_key_free(ed);
    dsig_key_free(k);
    serve_ranges_free(r);
    serve_counter_free(mc);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-ranges-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(regdir, sizeof regdir, "%s/registry", dir);
    toy_register();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_reserve_mem),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_file_counter),
        cmocka_unit_test(test_unavailable_stops_stateful_only),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
