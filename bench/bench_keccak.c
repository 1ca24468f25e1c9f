/*
 * bench/bench_keccak.c — Keccak micro-benchmark behind `dsig bench keccak`: ns per Keccak-f[1600]
 * (one state portable and AVX-512VL, x4 portable, AVX2 and AVX-512VL per four states, x8 AVX-512 per
 * eight), bulk SHAKE256 throughput on 64 KiB chunks (the reader's chunk size, i.e. the streaming hot
 * path) and the cost of one 32-byte-in / 32-byte-out
 * SHAKE256 call, each against OpenSSL 3 EVP (assembly Keccak). Every metric is timed `runs` times and
 * reported as median [min .. max], like the other benches; the ratios use the medians. Not a unit test.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "bench_internal.h"
#include "bench_keccak.h"
#include "core/cpu.h"
#include "hash/keccak.h"
#include "hash/keccak_impl.h"

#define RUNS_MAX 15

/* Monotonic nanoseconds. */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per call of perm over `iters` calls, `runs` times. */
static bench_stat time_perm(void (*perm)(uint64_t *), uint64_t *s, long iters, int runs)
{
    double v[RUNS_MAX];
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++)
            perm(s);
        v[r] = (now_ns() - t0) / (double)iters;
    }
    return bench_stat_of(v, (size_t)runs);
}

/* Adapters with the common signature. */
static void perm1(uint64_t *s) { dsig_keccak_f1600_portable(s); }
static void perm4p(uint64_t *s) { dsig_keccak_f1600_x4_portable(s); }
#ifdef DSIG_KECCAK_X86
static void perm4a(uint64_t *s) { dsig_keccak_f1600_x4_avx2(s); }
static void perm4z(uint64_t *s) { dsig_keccak_f1600_x4_avx512(s); }
static void perm1z(uint64_t *s) { dsig_keccak_f1600_avx512(s); }
static void perm8z(uint64_t *s) { dsig_keccak_f1600_x8_avx512(s); }
#endif

/* One bulk pass: init, `chunks` absorbs of `chunk` bytes, 32 bytes out (ours when ctx is NULL, else
 * EVP with the MD fetched once); returns MiB/s. */
static double bulk_once(EVP_MD_CTX *ctx, const EVP_MD *md, const uint8_t *buf, size_t chunk, int chunks)
{
    uint8_t out[32];
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
    return (double)chunk * chunks / (1024.0 * 1024.0) / ((now_ns() - t0) / 1e9);
}

/* ns per 32-byte-in / 32-byte-out SHAKE256 over `iters` calls (ours when ctx is NULL, else EVP with
 * the MD fetched once and the context reused: the cheapest EVP use). */
static double small_once(EVP_MD_CTX *ctx, const EVP_MD *md, long iters)
{
    uint8_t buf[32] = {1, 2, 3};
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
    return (now_ns() - t0) / (double)iters;
}

/* One report line: label, median, min, max, unit, comment. */
static void line(FILE *out, const char *label, bench_stat st, const char *unit, const char *note)
{
    fprintf(out, "%-40s %10.1f %10.1f %10.1f  ", label, st.median, st.min, st.max);
    if (*note)
        fprintf(out, "%-6s %s\n", unit, note);
    else
        fprintf(out, "%s\n", unit);
}

/* The whole report (see bench_keccak.h). */
int dsig_bench_keccak(FILE *out, double scale, int runs)
{
    if (scale <= 0)
        scale = 1;
    if (runs < 1)
        runs = 1;
    if (runs > RUNS_MAX)
        runs = RUNS_MAX;
    long iters = (long)(20000 * scale) + 1;
    uint64_t s[100] __attribute__((aligned(32))) = {1};
    char note[96];

    fprintf(out, "keccak back-end: %s (cpu: %s); %d runs per metric, median [min .. max]\n",
            dsig_keccak_backend(), dsig_cpu_describe(), runs);
    fprintf(out, "%-40s %10s %10s %10s  %-6s NOTE\n", "METRIC", "MEDIAN", "MIN", "MAX", "UNIT");
    bench_stat t1 = time_perm(perm1, s, iters, runs);
    line(out, "Keccak-f[1600], 1 state (64-bit C)", t1, "ns", "");
#ifdef DSIG_KECCAK_X86
    if (dsig_cpu_features() & DSIG_CPU_AVX512) {
        bench_stat t1z = time_perm(perm1z, s, iters, runs);
        snprintf(note, sizeof note, "%.2f x the 64-bit C", t1z.median / t1.median);
        line(out, "Keccak-f[1600], 1 state (AVX-512VL)", t1z, "ns", note);
    }
#endif
    bench_stat t4p = time_perm(perm4p, s, iters / 4 + 1, runs);
    snprintf(note, sizeof note, "%.2f x one state", t4p.median / t1.median);
    line(out, "Keccak-f[1600] x4 portable, 4 states", t4p, "ns", note);
#ifdef DSIG_KECCAK_X86
    if (dsig_cpu_features() & DSIG_CPU_AVX2) {
        bench_stat t4a = time_perm(perm4a, s, iters / 2 + 1, runs);
        snprintf(note, sizeof note, "%.2f x one state, %.1f ns per state", t4a.median / t1.median,
                 t4a.median / 4);
        line(out, "Keccak-f[1600] x4 AVX2, 4 states", t4a, "ns", note);
    }
    if (dsig_cpu_features() & DSIG_CPU_AVX512) {
        bench_stat t4z = time_perm(perm4z, s, iters / 2 + 1, runs);
        snprintf(note, sizeof note, "%.2f x one state, %.1f ns per state", t4z.median / t1.median,
                 t4z.median / 4);
        line(out, "Keccak-f[1600] x4 AVX-512VL, 4 states", t4z, "ns", note);
        static uint64_t s8[200] __attribute__((aligned(64)));
        bench_stat t8z = time_perm(perm8z, s8, iters / 2 + 1, runs);
        snprintf(note, sizeof note, "%.2f x one state, %.1f ns per state", t8z.median / t1.median,
                 t8z.median / 8);
        line(out, "Keccak-f[1600] x8 AVX-512, 8 states", t8z, "ns", note);
    }
#endif

    EVP_MD *md = EVP_MD_fetch(NULL, "SHAKE256", NULL);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t chunk = 64 * 1024;
    uint8_t *buf = calloc(1, chunk);
    if (!md || !ctx || !buf) {
        fprintf(out, "OpenSSL SHAKE256 unavailable (or out of memory)\n");
        free(buf);
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
        return 1;
    }
    memset(buf, 0x5a, chunk);
    int chunks = (int)(64 * scale) + 1;
    /* Ours and EVP alternate run by run, so a change in machine load hits both alike. */
    double vo[RUNS_MAX], ve[RUNS_MAX];
    for (int r = 0; r < runs; r++) {
        vo[r] = bulk_once(NULL, md, buf, chunk, chunks);
        ve[r] = bulk_once(ctx, md, buf, chunk, chunks);
    }
    bench_stat bo = bench_stat_of(vo, (size_t)runs), be = bench_stat_of(ve, (size_t)runs);
    snprintf(note, sizeof note, "%.2f x EVP (higher is better)", bo.median / be.median);
    line(out, "SHAKE256 bulk, 64 KiB chunks (dsig)", bo, "MiB/s", note);
    line(out, "SHAKE256 bulk, 64 KiB chunks (EVP)", be, "MiB/s", "");
    for (int r = 0; r < runs; r++) {
        vo[r] = small_once(NULL, md, iters);
        ve[r] = small_once(ctx, md, iters);
    }
    bo = bench_stat_of(vo, (size_t)runs);
    be = bench_stat_of(ve, (size_t)runs);
    snprintf(note, sizeof note, "%.2f x EVP (lower is better)", bo.median / be.median);
    line(out, "SHAKE256 32 B in -> 32 B out (dsig)", bo, "ns", note);
    line(out, "SHAKE256 32 B in -> 32 B out (EVP)", be, "ns", "");
    free(buf);
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
    return 0;
}
