/*
 * Several signer processes share one HSS-LMS key and one XMSS^MT key through the file counter
 * (src/serve/ranges.c), each process an instance with its own copy of the fenced state file and its own
 * registry, each signing from several threads inside the ranges it reserved. In every round all
 * instances run at once and one of them is SIGKILLed at a random moment (mid-range); a killed instance
 * comes back in the next round from its state file (the rest of its range above the file's counter,
 * then new ranges). Every signature ever written is read back and verified, and no index occurs twice.
 * Then an XMSS key (1024 indices) is signed to exhaustion by two instances: each ends with
 * DSIG_E_EXHAUSTED, and exactly 1024 distinct indices were used (nothing burned without a crash).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ranges_fleet.h"
#include "testutil.h"

#define INSTANCES 3
#define THREADS 3
#define PER_THREAD 8
#ifdef __SANITIZE_ADDRESS__
#define ROUNDS 8
#else
#define ROUNDS 16
#endif

static char dir[256];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static pid_t spawn(const char *kdir, const struct fleet_key *fk, int i, int per_thread, const char *out,
                   const char *tag)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ex = fleet_instance(kdir, fk, i, THREADS, per_thread, out, tag);
        _exit(ex < 0 ? 6 : ex > 0 ? 5 : 0);
    }
    return pid;
}

static void fleet_with_kills(const struct fleet_key *fk, const char *name)
{
    char kdir[400], out[600], tag[64];
    snprintf(kdir, sizeof kdir, "%s/%s", dir, name);
    assert_int_equal(mkdir(kdir, 0700), 0);
    dsig_key *pub = NULL;
    fleet_create(kdir, fk, INSTANCES, &pub);
    size_t cap = (size_t)ROUNDS * INSTANCES * THREADS * PER_THREAD;
    int64_t *idx = malloc(cap * sizeof *idx);
    size_t n = 0, killed = 0, torn = 0;

    /* Calibrate the kill delay on one uninterrupted round. */
    uint64_t t0 = now_ns();
    pid_t pids[INSTANCES];
    for (int i = 0; i < INSTANCES; i++) {
        snprintf(out, sizeof out, "%s/r0-i%d.rec", kdir, i);
        snprintf(tag, sizeof tag, "r0 i%d", i);
        pids[i] = spawn(kdir, fk, i, PER_THREAD, out, tag);
    }
    for (int i = 0; i < INSTANCES; i++) {
        int st;
        assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        snprintf(out, sizeof out, "%s/r0-i%d.rec", kdir, i);
        assert_int_equal(fleet_collect(out, fk, pub, 0, idx, &n, cap), THREADS * PER_THREAD);
    }
    uint64_t life = now_ns() - t0;

    srand(4242);
    for (int round = 1; round < ROUNDS; round++) {
        int victim = rand() % INSTANCES;
        uint64_t delay = 1 + (uint64_t)((double)rand() / RAND_MAX * 0.9 * (double)life);
        for (int i = 0; i < INSTANCES; i++) {
            snprintf(out, sizeof out, "%s/r%d-i%d.rec", kdir, round, i);
            snprintf(tag, sizeof tag, "r%d i%d", round, i);
            pids[i] = spawn(kdir, fk, i, PER_THREAD, out, tag);
        }
        struct timespec ts = {(time_t)(delay / 1000000000u), (long)(delay % 1000000000u)};
        nanosleep(&ts, NULL);
        kill(pids[victim], SIGKILL);
        for (int i = 0; i < INSTANCES; i++) {
            int st;
            assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
            int was_killed = WIFSIGNALED(st);
            if (!was_killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
                fail_msg("%s round %d instance %d: exit status 0x%x", name, round, i, st);
            killed += (size_t)was_killed;
            snprintf(out, sizeof out, "%s/r%d-i%d.rec", kdir, round, i);
            size_t before = n;
            size_t got = fleet_collect(out, fk, pub, was_killed, idx, &n, cap);
            assert_int_equal(got, n - before);
            if (!was_killed)
                assert_int_equal(got, THREADS * PER_THREAD);
            else
                torn += got < THREADS * PER_THREAD;
        }
    }
    fleet_check_unique(idx, n, name);
    print_message("%s: %d rounds of %d instances x %d threads, %zu killed, %zu signatures verified, "
                  "all indices distinct (highest %lld)\n", name, ROUNDS, INSTANCES, THREADS, killed, n,
                  (long long)idx[n - 1]);
    free(idx);
    dsig_key_free(pub);
}

static void test_hss_fleet(void **state)
{
    (void)state;
    const struct fleet_key fk = {"HSS-LMS",
                                 "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,"
                                 "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4",
                                 0};
    fleet_with_kills(&fk, "hss");
}

static void test_xmssmt_fleet(void **state)
{
    (void)state;
    const struct fleet_key fk = {"XMSSMT", "XMSSMT-SHA2_20/4_256", 3};
    fleet_with_kills(&fk, "xmssmt");
}

/* Two instances sign an XMSS key (1024 indices) until nothing is left. */
static void test_xmss_exhaustion(void **state)
{
    (void)state;
    const struct fleet_key fk = {"XMSS", "XMSS-SHA2_10_256", 4};
    char kdir[400], out[600];
    snprintf(kdir, sizeof kdir, "%s/xmss", dir);
    assert_int_equal(mkdir(kdir, 0700), 0);
    dsig_key *pub = NULL;
    fleet_create(kdir, &fk, 2, &pub);
    pid_t pids[2];
    for (int i = 0; i < 2; i++) {
        snprintf(out, sizeof out, "%s/i%d.rec", kdir, i);
        pids[i] = spawn(kdir, &fk, i, 1 << 20, out, i ? "b" : "a");
    }
    int64_t *idx = malloc(2048 * sizeof *idx);
    size_t n = 0;
    for (int i = 0; i < 2; i++) {
        int st;
        assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
        /* exit 5: every thread stopped on DSIG_E_EXHAUSTED */
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 5);
        snprintf(out, sizeof out, "%s/i%d.rec", kdir, i);
        fleet_collect(out, &fk, pub, 0, idx, &n, 2048);
    }
    assert_int_equal(n, 1024);
    fleet_check_unique(idx, n, "xmss");
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1023], 1023);
    /* Another instance now gets the clear error at once. */
    dsig_key *k = NULL;
    char p[600], reg[600], cdir[600];
    snprintf(p, sizeof p, "%s/master.state", kdir);
    snprintf(reg, sizeof reg, "%s/master-reg", kdir);
    snprintf(cdir, sizeof cdir, "%s/counter", kdir);
    struct serve_counter *fc = NULL;
    struct serve_ranges *r = NULL;
    assert_int_equal(serve_counter_file_new(&fc, cdir), DSIG_OK);
    assert_int_equal(serve_ranges_new(&r, fc, NULL), DSIG_OK);
    dsig_state_opts o = {.registry_dir = reg, .ranges = serve_ranges_source(r)};
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    uint8_t sig[4096];
    size_t sl;
    assert_int_equal(dsig_sign(dsig_alg_by_name("XMSS"), k, "x", 1, sig, sizeof sig, &sl), DSIG_E_EXHAUSTED);
    assert_non_null(strstr(dsig_last_error_detail(), "every one of its 1024 indices has been handed out"));
    dsig_key_free(k);
    serve_ranges_free(r);
    serve_counter_free(fc);
    free(idx);
    dsig_key_free(pub);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-rprocs-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
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
        cmocka_unit_test(test_hss_fleet),
        cmocka_unit_test(test_xmssmt_fleet),
        cmocka_unit_test(test_xmss_exhaustion),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
