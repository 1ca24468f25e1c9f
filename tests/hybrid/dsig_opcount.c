/*
 * tests/hybrid/dsig_opcount.c — a single-threaded driver of the `dsig bench dsig --quick` preset
 * (Haraka, w = 4, batch 128) for instruction counting: N signs, then N fast verifies, each op in its
 * own public call, with no background thread and every key generated before the first sign. Under
 * `valgrind --tool=callgrind --toggle-collect=dsig_hybrid_sign` (or dsig_hybrid_verify) the counts
 * are those of the timed calls alone (docs/benchmarks.md, "DSig instruction counts").
 *
 *   dsig_opcount [N] [message bytes] [time]   N a multiple of 128 (default 1024), size 8..1024 (default
 *                                             32); "time": also print each op's median and minimum ns
 *
 * As a test (dsig_opcount_smoke) it checks every signature is accepted on the fast path and a
 * changed message is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dsig/dsig.h"
#include "dsig/hybrid.h"

#define SIGNER 7u

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Minor page faults of this process so far (first touches of fresh memory: a repeatable count). */
static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* Median and minimum of n per-op times (sorts t), and the page faults the ops took. */
static void report(const char *op, uint64_t *t, unsigned n, long faults)
{
    qsort(t, n, sizeof *t, cmp_u64);
    printf("dsig_opcount: %s median %llu ns, min %llu ns, %.3f page faults per op (%u ops, clock_gettime "
           "included)\n",
           op, (unsigned long long)t[n / 2], (unsigned long long)t[0], (double)faults / n, n);
}

/* Exit with a message naming the step that failed. */
static void die(const char *what, int rc)
{
    fprintf(stderr, "dsig_opcount: %s failed: %s (%d)\n", what, dsig_strerror(rc), rc);
    exit(1);
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1024u;
    size_t len = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 32u;
    const int timed = argc > 3 && strcmp(argv[3], "time") == 0;
    if (n == 0 || n % 128u || n > 65536u || len < 8 || len > 1024) {
        fprintf(stderr, "usage: dsig_opcount [N: a multiple of 128, at most 65536] [bytes: 8..1024]\n");
        return 2;
    }
    uint8_t seed[32];
    memset(seed, 0x5a, sizeof seed);
    dsig_keygen_params kp = {.bits = 0, .seed = seed, .seed_len = sizeof seed};
    dsig_key *sk = NULL, *pk = NULL;
    dsig_hybrid_params *p = NULL;
    int rc = dsig_key_generate(&sk, dsig_alg_by_name("DSig"), &kp);
    if (rc) die("key generation", rc);
    if ((rc = dsig_key_public(&pk, sk))) die("public key", rc);
    if ((rc = dsig_hybrid_params_new(&p, DSIG_HYBRID_OTS_WOTS, DSIG_HYBRID_HASH_HARAKA, 2, 0, 0, 7)))
        die("parameters", rc);
    const unsigned batches = n / 128u;
    const size_t sb = dsig_hybrid_params_sig_bytes(p), bcap = dsig_hybrid_params_batch_msg_bytes(p);

    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.threads = 0;
    so.pool_target = n;
    so.signer_id = SIGNER;
    so.outbox = batches + 1;
    dsig_hybrid_signer *s = NULL;
    if ((rc = dsig_hybrid_signer_new(&s, sk, p, &so))) die("signer", rc);
    if ((rc = dsig_hybrid_signer_refill(s, batches))) die("refill", rc);

    uint8_t *msgs = malloc((size_t)n * len), *sigs = malloc((size_t)n * sb), *bm = malloc(bcap);
    uint64_t *ts = malloc(sizeof *ts * n), t0 = 0;
    if (!msgs || !sigs || !bm || !ts) die("allocation", DSIG_E_NOMEM);
    memset(sigs, 0xA5, (size_t)n * sb); /* touched now: the driver's first touches are not the library's */
    memset(ts, 0xA5, sizeof *ts * n);
    long f0 = minor_faults();
    for (unsigned i = 0; i < n; i++) {
        for (size_t b = 0; b < len; b++) msgs[(size_t)i * len + b] = (uint8_t)(i * 31u + b);
        size_t got = 0;
        if (timed) t0 = now_ns();
        if ((rc = dsig_hybrid_sign(s, msgs + (size_t)i * len, len, sigs + (size_t)i * sb, sb, &got)))
            die("sign", rc);
        if (timed) ts[i] = now_ns() - t0;
    }
    if (timed) report("sign", ts, n, minor_faults() - f0);

    dsig_hybrid_verifier_options vo;
    dsig_hybrid_verifier_options_default(&vo);
    vo.threads = 0;
    vo.cache_batches = batches + 32;
    vo.queue_max = batches + 32;
    dsig_hybrid_verifier *v = NULL;
    if ((rc = dsig_hybrid_verifier_new(&v, p, &vo))) die("verifier", rc);
    if ((rc = dsig_hybrid_verifier_add_signer(v, SIGNER, pk))) die("add signer", rc);
    size_t bl = 0;
    unsigned got_batches = 0;
    while (dsig_hybrid_signer_next_batch(s, bm, bcap, &bl) == DSIG_OK) {
        if ((rc = dsig_hybrid_verifier_receive_batch(v, SIGNER, bm, bl))) die("receive batch", rc);
        got_batches++;
    }
    if (got_batches != batches) {
        fprintf(stderr, "dsig_opcount: %u batch messages, expected %u\n", got_batches, batches);
        return 1;
    }
    f0 = minor_faults();
    for (unsigned i = 0; i < n; i++) {
        if (timed) t0 = now_ns();
        if ((rc = dsig_hybrid_verify(v, SIGNER, msgs + (size_t)i * len, len, sigs + (size_t)i * sb, sb)))
            die("verify", rc);
        if (timed) ts[i] = now_ns() - t0;
    }
    if (timed) report("fast verify", ts, n, minor_faults() - f0);
    dsig_hybrid_verifier_stats st;
    dsig_hybrid_verifier_stats_get(v, &st);
    msgs[0] ^= 1;
    int bad = dsig_hybrid_verify(v, SIGNER, msgs, len, sigs, sb);
    if (st.fast != n || bad == DSIG_OK) {
        fprintf(stderr, "dsig_opcount: %llu of %u verifies on the fast path; altered message %s\n",
                (unsigned long long)st.fast, n, bad == DSIG_OK ? "ACCEPTED" : "refused");
        return 1;
    }
    printf("dsig_opcount: %u signs and %u fast verifies of %zu-byte messages (%zu-byte signatures)\n", n, n,
           len, sb);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_signer_free(s);
    dsig_hybrid_params_free(p);
    dsig_key_free(pk);
    dsig_key_free(sk);
    free(msgs);
    free(sigs);
    free(bm);
    free(ts);
    return 0;
}
