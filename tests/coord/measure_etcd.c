/*
 * tests/coord/measure_etcd.c — a measurement, not a test (docs/scale.md "Measured"): one signer of an
 * HSS-LMS key (two levels of H10, W4: 2^20 signatures), N signatures from a plain state file and N
 * through index ranges reserved on the etcd cluster (the defaults dsig serve uses), alternating in
 * the same run (which goes first alternates too: a shared machine drifts), R rounds. Prints signatures/s of each and the etcd HTTP requests per N signatures.
 * Run inside the cluster: tests/coord/etcd_cluster.sh run measure_etcd [N [R]].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsig/dsig.h"
#include "serve/ranges.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sign n messages with a fresh key at path (ranges: NULL = plain). Signatures per second, or -1. */
static double run(const char *path, const char *reg, const dsig_state_range_source *ranges, int n)
{
    const dsig_alg *alg = dsig_alg_by_name("HSS-LMS");
    dsig_keygen_params kp = {.param = "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4"};
    dsig_state_opts o = {.registry_dir = reg, .ranges = ranges};
    dsig_key *k = NULL;
    if (dsig_state_create(&k, path, alg, &kp, &o) != DSIG_OK) {
        fprintf(stderr, "create: %s\n", dsig_last_error_detail());
        return -1;
    }
    static unsigned char sig[16384];
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        size_t sl = 0;
        char msg[32];
        int ml = snprintf(msg, sizeof msg, "m%d", i);
        if (dsig_sign(alg, k, msg, (size_t)ml, sig, sizeof sig, &sl) != DSIG_OK) {
            fprintf(stderr, "sign %d: %s\n", i, dsig_last_error_detail());
            dsig_key_free(k);
            return -1;
        }
    }
    double rate = n / (now_s() - t0);
    dsig_key_free(k);
    return rate;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000, rounds = argc > 2 ? atoi(argv[2]) : 3;
    const char *env = getenv("DSIG_ETCD_ENDPOINTS");
    if (!env || n <= 0 || rounds <= 0 || rounds > 32) {
        fprintf(stderr, "usage: etcd_cluster.sh run %s [N [ROUNDS]]\n", argv[0]);
        return 2;
    }
    char buf[512], *eps[8];
    size_t ne = 0;
    snprintf(buf, sizeof buf, "%s", env);
    for (char *s = buf, *t; ne < 8 && (t = strsep(&s, ",")) != NULL;)
        eps[ne++] = t;
    char dir[] = "/tmp/dsig-measure-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    double plain[32], etcd[32], reqs[32];
    for (int r = 0; r < rounds; r++) {
        char p[128], reg[128], prefix[64];
        snprintf(prefix, sizeof prefix, "/measure/%ld-%d/", (long)getpid(), r);
        struct serve_counter_etcd_config ec = {.endpoints = (const char *const *)eps, .n_endpoints = ne,
                                               .prefix = prefix};
        struct serve_counter *c = NULL;
        struct serve_ranges *rg = NULL;
        if (serve_counter_etcd_new(&c, &ec) != DSIG_OK || serve_ranges_new(&rg, c, NULL) != DSIG_OK)
            return 1;
        for (int which = 0; which < 2; which++) {
            int with_etcd = (which + r) % 2;
            snprintf(p, sizeof p, "%s/%s%d.state", dir, with_etcd ? "etcd" : "plain", r);
            snprintf(reg, sizeof reg, "%s/reg-%s%d", dir, with_etcd ? "etcd" : "plain", r);
            if (with_etcd)
                etcd[r] = run(p, reg, serve_ranges_source(rg), n);
            else
                plain[r] = run(p, reg, NULL, n);
        }
        reqs[r] = (double)serve_counter_etcd_requests(c);
        serve_ranges_free(rg);
        serve_counter_free(c);
        if (plain[r] < 0 || etcd[r] < 0)
            return 1;
        printf("round %d: plain %.0f sig/s, etcd %.0f sig/s, %.0f etcd requests for %d signatures\n", r,
               plain[r], etcd[r], reqs[r], n);
    }
    qsort(plain, (size_t)rounds, sizeof *plain, cmp_d);
    qsort(etcd, (size_t)rounds, sizeof *etcd, cmp_d);
    qsort(reqs, (size_t)rounds, sizeof *reqs, cmp_d);
    printf("%d rounds of %d signatures: plain median %.0f (min %.0f, max %.0f) sig/s; etcd median %.0f "
           "(min %.0f, max %.0f) sig/s; etcd requests median %.0f (min %.0f, max %.0f)\n", rounds, n,
           plain[rounds / 2], plain[0], plain[rounds - 1], etcd[rounds / 2], etcd[0], etcd[rounds - 1],
           reqs[rounds / 2], reqs[0], reqs[rounds - 1]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
