/*
 * bench/bench_keccak.c — Keccak micro-benchmark: ns per Keccak-f[1600] (portable one state, x4 per
 * four states on each back-end), bulk SHAKE256 throughput on 64 KiB chunks and the cost of one
 * 32-byte-in / 32-byte-out SHAKE256 call, each against OpenSSL 3 EVP (assembly Keccak). Best of a few
 * repetitions, so a busy shared machine reports the cost, not the noise. Not a unit test.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "bench_keccak.h"
#include "core/cpu.h"
#include "hash/keccak.h"
#include "hash/keccak_impl.h"

#define REPS 5

/* Monotonic nanoseconds. */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best-of-REPS ns per call of perm over `iters` calls. */
static double time_perm(void (*perm)(uint64_t *), uint64_t *s, long iters)
{
    double best = 1e300;
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++)
            perm(s);
        double t = (now_ns() - t0) / (double)iters;
        if (t < best)
            best = t;
    }
    return best;
}

/* Adapters with the common signature. */
static void perm1(uint64_t *s) { dsig_keccak_f1600(s); }
static void perm4p(uint64_t *s) { dsig_keccak_f1600_x4_portable(s); }
#ifdef DSIG_KECCAK_X86
static void perm4a(uint64_t *s) { dsig_keccak_f1600_x4_avx2(s); }
#endif

/* Best-of-REPS MiB/s absorbing `total` bytes in 64 KiB chunks (ours when ctx is NULL, else EVP). */
static double bulk_mibs(EVP_MD_CTX *ctx, const EVP_MD *md, const uint8_t *buf, size_t chunk, int chunks)
{
    double best = 0;
    uint8_t out[32];
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ns();
        if (ctx) {
            EVP_DigestInit_ex(ctx, md, NULL);
            for (int i = 0; i < chunks; i++)
                EVP_DigestUpdate(ctx, buf, chunk);
            EVP_DigestFinalXOF(ctx, out, sizeof out);
        } else {
            dsig_keccak k;
            dsig_shake256_init(&k);
            for (int i = 0; i < chunks; i++)
                dsig_keccak_absorb(&k, buf, chunk);
            dsig_shake_finalize(&k);
            dsig_keccak_squeeze(&k, out, sizeof out);
        }
        double mibs = (double)chunk * chunks / (1024.0 * 1024.0) / ((now_ns() - t0) / 1e9);
        if (mibs > best)
            best = mibs;
    }
    return best;
}

/* Best-of-REPS ns per 32-byte-in / 32-byte-out SHAKE256 (ours when ctx is NULL, else EVP with the
 * MD fetched once and the context reused: the cheapest EVP use). */
static double small_ns(EVP_MD_CTX *ctx, const EVP_MD *md, long iters)
{
    uint8_t buf[32] = {1, 2, 3};
    double best = 1e300;
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            if (ctx) {
                EVP_DigestInit_ex(ctx, md, NULL);
                EVP_DigestUpdate(ctx, buf, 32);
                EVP_DigestFinalXOF(ctx, buf, 32);
            } else {
                dsig_shake256(buf, 32, buf, 32);
            }
        }
        double t = (now_ns() - t0) / (double)iters;
        if (t < best)
            best = t;
    }
    return best;
}

/* The whole report (see bench_keccak.h). */
int dsig_bench_keccak(FILE *out, double scale)
{
    if (scale <= 0)
        scale = 1;
    long iters = (long)(20000 * scale) + 1;
    uint64_t s[100] __attribute__((aligned(32))) = {1};

    fprintf(out, "keccak back-end: %s (cpu: %s)\n", dsig_keccak_backend(), dsig_cpu_describe());
    double t1 = time_perm(perm1, s, iters);
    double t4p = time_perm(perm4p, s, iters / 4 + 1);
    fprintf(out, "Keccak-f[1600] portable, 1 state     : %8.1f ns\n", t1);
    fprintf(out, "Keccak-f[1600] x4 portable, 4 states : %8.1f ns (%.2f x scalar)\n", t4p, t4p / t1);
#ifdef DSIG_KECCAK_X86
    if (dsig_cpu_features() & DSIG_CPU_AVX2) {
        double t4a = time_perm(perm4a, s, iters / 2 + 1);
        fprintf(out, "Keccak-f[1600] x4 AVX2, 4 states     : %8.1f ns (%.2f x scalar, %.1f ns per state)\n",
                t4a, t4a / t1, t4a / 4);
    }
#endif

    EVP_MD *md = EVP_MD_fetch(NULL, "SHAKE256", NULL);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!md || !ctx) {
        fprintf(out, "OpenSSL SHAKE256 unavailable\n");
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
        return 1;
    }
    size_t chunk = 64 * 1024;
    int chunks = (int)(64 * scale) + 1;
    uint8_t *buf = calloc(1, chunk);
    if (!buf) {
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
        return 1;
    }
    memset(buf, 0x5a, chunk);
    double ours = bulk_mibs(NULL, md, buf, chunk, chunks);
    double evp = bulk_mibs(ctx, md, buf, chunk, chunks);
    fprintf(out, "SHAKE256 bulk, 64 KiB chunks         : %8.1f MiB/s (EVP %.1f MiB/s, %.2f x)\n", ours, evp,
            ours / evp);
    double so = small_ns(NULL, md, iters);
    double se = small_ns(ctx, md, iters);
    fprintf(out, "SHAKE256 32 B in -> 32 B out         : %8.1f ns (EVP %.1f ns, %.2f x)\n", so, se, so / se);
    free(buf);
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
    return 0;
}
