/*
 * bench/bench_feed.h — payload sources (memory, file, pipe) and bare-hash baselines.
 */
#ifndef DSIG_BENCH_FEED_H
#define DSIG_BENCH_FEED_H

#include <sys/types.h>

#include <openssl/evp.h>

#include "hash/blake3.h"
#include "hash/keccak.h"

#include "bench_internal.h"

typedef int (*bench_sink)(void *arg, const uint8_t *data, size_t len);

typedef struct bench_feeder {
    int kind;               /* enum bench_source */
    const uint8_t *payload; /* the bytes (also what the pipe writer sends) */
    uint64_t len;
    size_t chunk;
    const char *path;       /* file source: the payload written once to --out */
    uint8_t *buf;           /* chunk buffer for file/pipe reads (owned by the caller) */
    int fd;
    pid_t writer;
} bench_feeder;

void feed_init(bench_feeder *f, int kind, const uint8_t *payload, uint64_t len, size_t chunk,
               const char *path, uint8_t *buf);
int feed_prepare(bench_feeder *f);
int feed_run(bench_feeder *f, bench_sink fn, void *arg);
int feed_finish(bench_feeder *f);

typedef struct bench_baseline {
    int kind;
    EVP_MD *md;
    EVP_CIPHER *cipher;
    EVP_MD_CTX *mdctx;
    EVP_CIPHER_CTX *cctx;
    unsigned char *scratch;
    dsig_blake3_hasher blake3;   /* the "BLAKE3" baseline: the project's own implementation */
    dsig_keccak keccak;          /* SHAKE baselines when the project's sponge is the faster one */
    unsigned keccak_rate;        /* nonzero: this baseline runs on `keccak` instead of EVP */
    void *gmd;                   /* gcry_md_hd_t of the SM3 / Streebog baselines (libgcrypt) */
} bench_baseline;

/* -1 when the name is unknown (efficiency is then "n/a") or OpenSSL lacks it. The SHAKE/cSHAKE
 * baselines run on the faster of OpenSSL EVP and src/hash/keccak.h (decided once per process by a
 * short calibration, reported on stderr), so efficiency is against the best bare hash available. */
int baseline_open(bench_baseline *b, const char *name);
void baseline_close(bench_baseline *b);
int baseline_pass(bench_baseline *b, bench_feeder *f);

#endif
