/*
 * tests/coord/test_counter_etcd.c — the etcd index counter (src/serve/counter_etcd.c) on a real
 * 3-member cluster started by etcd_cluster.sh (DSIG_ETCD_ENDPOINTS, DSIG_ETCD_CTL):
 *   - the counter's contract: absent = 0, cas creates, conflicts report the value held, failover past
 *     a dead endpoint, every member dead = unavailable with a detail naming them;
 *   - shared keys (HSS-LMS, XMSS) signed by several processes with threads through etcd: every
 *     signature verifies, no index twice;
 *   - one member killed: reservations go on; a majority killed: the signer uses up its range, then
 *     stateful signing fails with DSIG_E_UNAVAILABLE; the members restarted: signing resumes; still
 *     no index twice and every signature verifies.
 * Without the cluster (run outside etcd_cluster.sh) it exits 77 (skipped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../state/ranges_fleet.h"
#include "../state/sigindex.h"
#include "testutil.h"

#define MAX_EP 8
#define SIG_MAX 16384

static char dir[256];
static char ep_buf[512];
static const char *eps[MAX_EP];
static size_t n_eps;
static char prefix[64];

static void parse_endpoints(void)
{
    snprintf(ep_buf, sizeof ep_buf, "%s", getenv("DSIG_ETCD_ENDPOINTS"));
    for (char *s = ep_buf, *t; n_eps < MAX_EP && (t = strsep(&s, ",")) != NULL;)
        if (*t)
            eps[n_eps++] = t;
}

static struct serve_counter *etcd_counter(const char *const *e, size_t n, uint32_t timeout_ms)
{
    struct serve_counter_etcd_config cfg = {.endpoints = e, .n_endpoints = n, .prefix = prefix,
                                            .connect_timeout_ms = 300, .timeout_ms = timeout_ms};
    struct serve_counter *c = NULL;
    if (serve_counter_etcd_new(&c, &cfg) != DSIG_OK)
        fail_msg("serve_counter_etcd_new: %s", dsig_last_error_detail());
    return c;
}

/* The fleet's counter: the cluster, with short timeouts. */
static int fleet_etcd(struct serve_counter **out, const char *cdir)
{
    (void)cdir;
    *out = etcd_counter(eps, n_eps, 1000);
    return DSIG_OK;
}

static void ctl(const char *op, int member)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s %s %d", getenv("DSIG_ETCD_CTL"), op, member);
    if (system(cmd) != 0)
        fail_msg("'%s' failed", cmd);
}

static void test_counter_contract(void **state)
{
    (void)state;
    struct serve_counter *c = etcd_counter(eps, n_eps, 2000);
    const char *k = "contract-key_1";
    uint64_t v = 99, obs = 0;
    assert_int_equal(c->ops->get(c->ctx, k, &v), SERVE_COUNTER_OK);
    assert_int_equal(v, 0);
    assert_int_equal(c->ops->cas(c->ctx, k, 0, 5, &obs), SERVE_COUNTER_OK);
    obs = 0;
    assert_int_equal(c->ops->cas(c->ctx, k, 0, 7, &obs), SERVE_COUNTER_CONFLICT); /* it exists now */
    assert_int_equal(obs, 5);
    assert_int_equal(c->ops->cas(c->ctx, k, 4, 7, &obs), SERVE_COUNTER_CONFLICT);
    assert_int_equal(obs, 5);
    assert_int_equal(c->ops->cas(c->ctx, k, 5, 18446744073709551615ull, &obs), SERVE_COUNTER_OK);
    assert_int_equal(c->ops->get(c->ctx, k, &v), SERVE_COUNTER_OK);
    assert_true(v == 18446744073709551615ull);
    assert_int_equal(c->ops->get(c->ctx, "other", &v), SERVE_COUNTER_OK); /* one counter per name */
    assert_int_equal(v, 0);
    assert_int_equal(c->ops->get(c->ctx, "../x", &v), SERVE_COUNTER_UNAVAILABLE); /* never a path */
    serve_counter_free(c);

    /* A dead endpoint first: the next member answers, and is asked first from then on. */
    const char *e2[MAX_EP + 1] = {"http://127.0.0.1:1"};
    for (size_t i = 0; i < n_eps; i++)
        e2[i + 1] = eps[i];
    c = etcd_counter(e2, n_eps + 1, 2000);
    assert_int_equal(c->ops->get(c->ctx, k, &v), SERVE_COUNTER_OK);
    assert_true(v == 18446744073709551615ull);
    uint64_t before = serve_counter_etcd_requests(c);
    assert_int_equal(c->ops->get(c->ctx, k, &v), SERVE_COUNTER_OK);
    assert_int_equal(serve_counter_etcd_requests(c) - before, 1);
    serve_counter_free(c);

    /* Nobody there: unavailable, and the detail names the endpoint. */
    const char *dead[2] = {"http://127.0.0.1:1", "http://127.0.0.1:9"};
    c = etcd_counter(dead, 2, 500);
    assert_int_equal(c->ops->cas(c->ctx, k, 0, 1, &obs), SERVE_COUNTER_UNAVAILABLE);
    assert_non_null(strstr(dsig_last_error_detail(), "127.0.0.1:9"));
    serve_counter_free(c);

    /* Bad configurations are refused by name. */
    const char *bad[1] = {"ftp://127.0.0.1:1"};
    struct serve_counter_etcd_config cfg = {.endpoints = bad, .n_endpoints = 1};
    assert_int_equal(serve_counter_etcd_new(&c, &cfg), DSIG_E_ARG);
    assert_non_null(strstr(dsig_last_error_detail(), "ftp://"));
    cfg.n_endpoints = 0;
    assert_int_equal(serve_counter_etcd_new(&c, &cfg), DSIG_E_ARG);
}

#define PROCS 3
#define THREADS 2
#define PER_THREAD 16

/* Several processes of threads sign one shared key through etcd. */
static void fleet_run(const struct fleet_key *fk, const char *name)
{
    char kdir[400], out[600], tag[64];
    snprintf(kdir, sizeof kdir, "%s/%s", dir, name);
    assert_int_equal(mkdir(kdir, 0700), 0);
    dsig_key *pub = NULL;
    fleet_create(kdir, fk, PROCS, &pub);
    pid_t pids[PROCS];
    for (int i = 0; i < PROCS; i++) {
        snprintf(out, sizeof out, "%s/i%d.rec", kdir, i);
        snprintf(tag, sizeof tag, "%s i%d", name, i);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0)
            _exit(fleet_instance(kdir, fk, i, THREADS, PER_THREAD, out, tag) == 0 ? 0 : 6);
    }
    size_t cap = PROCS * THREADS * PER_THREAD, n = 0;
    int64_t idx[PROCS * THREADS * PER_THREAD];
    for (int i = 0; i < PROCS; i++) {
        int st;
        assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("%s instance %d: exit status 0x%x", name, i, st);
        snprintf(out, sizeof out, "%s/i%d.rec", kdir, i);
        assert_int_equal(fleet_collect(out, fk, pub, 0, idx, &n, cap), THREADS * PER_THREAD);
    }
    fleet_check_unique(idx, n, name);
    print_message("%s: %d processes x %d threads through etcd, %zu signatures verified, all indices "
                  "distinct (highest %lld)\n", name, PROCS, THREADS, n, (long long)idx[n - 1]);
    dsig_key_free(pub);
}

static void test_fleet_hss(void **state)
{
    (void)state;
    const struct fleet_key fk = {"HSS-LMS", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/"
                                            "LMOTS_SHA256_N32_W4", 0};
    fleet_run(&fk, "hss");
}

static void test_fleet_xmss(void **state)
{
    (void)state;
    const struct fleet_key fk = {"XMSS", "XMSS-SHA2_10_256", 4};
    fleet_run(&fk, "xmss");
}

/* ---- members going away ------------------------------------------------------------------------- */

struct signed_set {
    int64_t idx[512];
    size_t n;
};

/* Sign one message with k; on success verify it and record its index. The signing result. */
static int sign_one(const struct fleet_key *fk, const dsig_key *k, const dsig_key *pub, struct signed_set *s)
{
    static uint8_t sig[SIG_MAX];
    char msg[64];
    int ml = snprintf(msg, sizeof msg, "outage %zu", s->n);
    size_t sl = 0;
    const dsig_alg *alg = dsig_alg_by_name(fk->alg_name);
    int rc = dsig_sign(alg, k, msg, (size_t)ml, sig, sizeof sig, &sl);
    if (rc != DSIG_OK)
        return rc;
    assert_int_equal(dsig_verify(alg, pub, msg, (size_t)ml, sig, sl), DSIG_OK);
    int64_t q = fk->idx_bytes ? sigindex_xmss(sig, sl, fk->idx_bytes) : sigindex_hss(sig, sl);
    assert_true(q >= 0);
    assert_true(s->n < sizeof s->idx / sizeof s->idx[0]);
    s->idx[s->n++] = q;
    return DSIG_OK;
}

static void outage(const struct fleet_key *fk, const char *name)
{
    char kdir[400], p[600], reg[600];
    snprintf(kdir, sizeof kdir, "%s/%s", dir, name);
    assert_int_equal(mkdir(kdir, 0700), 0);
    dsig_key *pub = NULL;
    fleet_create(kdir, fk, 1, &pub);
    snprintf(p, sizeof p, "%s/inst0/key.state", kdir);
    snprintf(reg, sizeof reg, "%s/inst0/reg", kdir);
    struct serve_counter *c = etcd_counter(eps, n_eps, 800);
    struct serve_ranges *r = NULL;
    /* Ranges of 8: a few reservations per phase; a short cooldown so that the test does not wait. */
    struct serve_ranges_config cfg = {.initial = 8, .floor = 8, .ceiling = 8, .attempts = 3,
                                      .backoff_ms = 5, .cooldown_ms = 50};
    assert_int_equal(serve_ranges_new(&r, c, &cfg), DSIG_OK);
    dsig_state_opts o = {.registry_dir = reg, .ranges = serve_ranges_source(r)};
    dsig_key *k = NULL;
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    struct signed_set s = {.n = 0};

    for (int i = 0; i < 20; i++) /* all members up: more than two ranges */
        assert_int_equal(sign_one(fk, k, pub, &s), DSIG_OK);
    ctl("stop", 0); /* one member gone: the other two are a majority */
    uint64_t req0 = serve_counter_etcd_requests(c);
    for (int i = 0; i < 17; i++) { /* 37 in all: part of the fifth range is left */
        int rc = sign_one(fk, k, pub, &s);
        if (rc != DSIG_OK)
            fail_msg("%s: one member down, signing failed: %s", name, dsig_last_error_detail());
    }
    assert_true(serve_counter_etcd_requests(c) > req0); /* the coordinator was asked meanwhile */
    ctl("stop", 1); /* a majority gone */
    size_t before = s.n;
    int rc;
    while ((rc = sign_one(fk, k, pub, &s)) == DSIG_OK)
        assert_true(s.n - before <= 8); /* at most what is left of the range held */
    assert_int_equal(rc, DSIG_E_UNAVAILABLE);
    assert_true(s.n > before); /* the range held was used up first */
    print_message("%s: majority down: %zu more signatures from the range held, then: %s\n", name,
                  s.n - before, dsig_last_error_detail());
    assert_int_equal(sign_one(fk, k, pub, &s), DSIG_E_UNAVAILABLE); /* and it stays so */
    ctl("start", 0);
    ctl("start", 1);
    ctl("wait", 2);
    /* The cluster is back: signing resumes (after the cooldown). */
    int ok = 0;
    for (int i = 0; i < 100 && !ok; i++) {
        rc = sign_one(fk, k, pub, &s);
        ok = rc == DSIG_OK;
        if (!ok) {
            assert_int_equal(rc, DSIG_E_UNAVAILABLE);
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (!ok)
        fail_msg("%s: signing did not resume after the restart: %s", name, dsig_last_error_detail());
    for (int i = 0; i < 10; i++)
        assert_int_equal(sign_one(fk, k, pub, &s), DSIG_OK);
    fleet_check_unique(s.idx, s.n, name);
    print_message("%s: %zu signatures across the outage verified, all indices distinct\n", name, s.n);
    dsig_key_free(k);
    serve_ranges_free(r);
    serve_counter_free(c);
    dsig_key_free(pub);
}

static void test_outage(void **state)
{
    (void)state;
    const struct fleet_key hss = {"HSS-LMS", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/"
                                             "LMOTS_SHA256_N32_W4", 0};
    const struct fleet_key xmss = {"XMSS", "XMSS-SHA2_10_256", 4};
    outage(&hss, "hss-outage");
    ctl("wait", 0);
    outage(&xmss, "xmss-outage");
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-etcd-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
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
    if (!getenv("DSIG_ETCD_ENDPOINTS") || !getenv("DSIG_ETCD_CTL")) {
        printf("SKIP: no etcd cluster (run through tests/coord/etcd_cluster.sh)\n");
        return 77;
    }
    parse_endpoints();
    /* A fresh prefix per run: the counters of an earlier run never meet this one's. */
    snprintf(prefix, sizeof prefix, "/dsig-test/%ld-%ld/", (long)getpid(), (long)time(NULL));
    fleet_counter_new = fleet_etcd;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_contract),
        cmocka_unit_test(test_fleet_hss),
        cmocka_unit_test(test_fleet_xmss),
        cmocka_unit_test(test_outage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
