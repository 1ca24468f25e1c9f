/*
 * One process, two shared keys at once (HSS-LMS and XMSS^MT), each signed by several threads through
 * the file counter (src/serve/ranges.c) with small ranges, so that the threads keep running into the
 * end of a range together: every signature verifies, and no index occurs twice. Thread-safety of the
 * window switch under the key's lock and of the reservation's table (label "threads": run under TSan).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ranges_fleet.h"
#include "testutil.h"

#define THREADS 4
#define PER_THREAD 24

static char dir[256];

struct job {
    const struct fleet_key *fk;
    char kdir[400], out[600];
    int rc;
};

static void *instance_main(void *arg)
{
    struct job *j = arg;
    j->rc = fleet_instance(j->kdir, j->fk, 0, THREADS, PER_THREAD, j->out, j->fk->alg_name);
    return NULL;
}

static void test_two_keys_many_threads(void **state)
{
    (void)state;
    static const struct fleet_key keys[2] = {
        {"HSS-LMS", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4", 0},
        {"XMSSMT", "XMSSMT-SHA2_20/4_256", 3},
    };
    struct job jobs[2];
    dsig_key *pub[2];
    for (int k = 0; k < 2; k++) {
        jobs[k].fk = &keys[k];
        snprintf(jobs[k].kdir, sizeof jobs[k].kdir, "%s/k%d", dir, k);
        assert_int_equal(mkdir(jobs[k].kdir, 0700), 0);
        fleet_create(jobs[k].kdir, &keys[k], 1, &pub[k]);
        snprintf(jobs[k].out, sizeof jobs[k].out, "%s/k%d.rec", dir, k);
    }
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&t[k], NULL, instance_main, &jobs[k]), 0);
    for (int k = 0; k < 2; k++)
        pthread_join(t[k], NULL);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(jobs[k].rc, 0);
        int64_t idx[THREADS * PER_THREAD];
        size_t n = 0;
        assert_int_equal(fleet_collect(jobs[k].out, &keys[k], pub[k], 0, idx, &n, THREADS * PER_THREAD),
                         THREADS * PER_THREAD);
        fleet_check_unique(idx, n, keys[k].alg_name);
        dsig_key_free(pub[k]);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-rthreads-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
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
        cmocka_unit_test(test_two_keys_many_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
