/*
 * bench/bench_feed.c — feeding a payload to a sink in fixed-size chunks from memory, a file or a pipe,
 * and the bare-hash baselines the efficiency column is computed from (OpenSSL EVP; BLAKE3 and, when
 * faster than EVP, SHAKE on the project's own implementations).
 *
 * Everything that is not the data transfer itself (opening the file, forking the pipe writer, reaping
 * it) happens in feed_prepare/feed_finish, outside the timed region.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gcrypt.h>
#include <openssl/evp.h>

#include "bench_feed.h"

/* Point a feeder at a payload; buf must hold `chunk` bytes (used by the file and pipe sources). */
void feed_init(bench_feeder *f, int kind, const uint8_t *payload, uint64_t len, size_t chunk,
               const char *path, uint8_t *buf)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->payload = payload;
    f->len = len;
    f->chunk = chunk;
    f->path = path;
    f->buf = buf;
    f->fd = -1;
    f->writer = -1;
}

/* Write all of buf to fd (pipe writer child: only async-signal-safe calls). */
static int write_all(int fd, const uint8_t *p, uint64_t n)
{
    while (n > 0) {
        size_t step = n > (1u << 20) ? (1u << 20) : (size_t)n;
        ssize_t w = write(fd, p, step);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (uint64_t)w;
    }
    return 0;
}

/* Untimed set-up of one pass: open the file, or start a writer process feeding a fresh pipe. */
int feed_prepare(bench_feeder *f)
{
    if (f->kind == BENCH_SRC_FILE) {
        f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
        return f->fd < 0 ? -1 : 0;
    }
    if (f->kind == BENCH_SRC_PIPE) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            return -1;
        pid_t pid = fork();
        if (pid < 0) {
            close(p[0]);
            close(p[1]);
            return -1;
        }
        if (pid == 0) {
            /* The writer is a separate process so that it adds nothing to our RSS or CPU time. */
            close(p[0]);
            _exit(write_all(p[1], f->payload, f->len) == 0 ? 0 : 1);
        }
        close(p[1]);
        f->fd = p[0];
        f->writer = pid;
    }
    return 0;
}

/* Timed part of one pass: every chunk of the payload to fn, from memory or through dsig_read_fd. */
int feed_run(bench_feeder *f, bench_sink fn, void *arg)
{
    if (f->kind == BENCH_SRC_MEM) {
        for (uint64_t off = 0; off < f->len; off += f->chunk) {
            size_t n = f->len - off < f->chunk ? (size_t)(f->len - off) : f->chunk;
            int rc = fn(arg, f->payload + off, n);
            if (rc)
                return rc;
        }
        return 0;
    }
    uint64_t total = 0;
    int rc = dsig_read_fd(f->fd, f->buf, f->chunk, fn, arg, &total);
    if (rc)
        return rc;
    return total == f->len ? 0 : DSIG_E_IO;
}

/* Untimed tear-down: close the descriptor and reap the writer. Returns -1 if the writer failed. */
int feed_finish(bench_feeder *f)
{
    int rc = 0;
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if (f->writer > 0) {
        int st;
        while (waitpid(f->writer, &st, 0) < 0 && errno == EINTR) {
        }
        /* A writer killed by SIGPIPE means the reader stopped early: already reported there. */
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && !(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE))
            rc = -1;
        f->writer = -1;
    }
    return rc;
}

/* ---- baselines ---------------------------------------------------------------------------- */

enum { BL_DIGEST, BL_XOF, BL_CIPHER, BL_BLAKE3, BL_GCRY };

/* dsig_alg_baseline() strings and what OpenSSL 3.0 runs for them. OpenSSL 3.0 has no cSHAKE: the
 * SHAKE of the same width is the same permutation and rate, so it costs the same per byte. The XOFs
 * carry their Keccak rate: src/hash/keccak.h runs them instead of EVP when it is faster. */
static const struct {
    const char *name, *ossl;
    int kind;
    unsigned rate;
} table[] = {
    {"SHA-256", "SHA2-256", BL_DIGEST, 0},   {"SHA-384", "SHA2-384", BL_DIGEST, 0},
    {"SHA-512", "SHA2-512", BL_DIGEST, 0},   {"SHA3-256", "SHA3-256", BL_DIGEST, 0},
    {"SHA3-384", "SHA3-384", BL_DIGEST, 0},  {"SHA3-512", "SHA3-512", BL_DIGEST, 0},
    {"SHAKE128", "SHAKE128", BL_XOF, DSIG_SHAKE128_RATE}, {"SHAKE256", "SHAKE256", BL_XOF, DSIG_SHAKE256_RATE},
    {"cSHAKE128", "SHAKE128", BL_XOF, DSIG_SHAKE128_RATE}, {"cSHAKE256", "SHAKE256", BL_XOF, DSIG_SHAKE256_RATE},
    {"AES-128-CBC", "AES-128-CBC", BL_CIPHER, 0}, {"AES-192-CBC", "AES-192-CBC", BL_CIPHER, 0},
    {"AES-256-CBC", "AES-256-CBC", BL_CIPHER, 0}, {"BLAKE3", NULL, BL_BLAKE3, 0},
    /* libgcrypt (as SM2-SM3, GOST3410-2012-256 and their HMACs): OpenSSL 3.0's default provider has
     * no Streebog, and its SM3 is slower than libgcrypt's. `rate` holds the GCRY_MD_* id here. */
    {"SM3", NULL, BL_GCRY, GCRY_MD_SM3}, {"Streebog-256", NULL, BL_GCRY, GCRY_MD_STRIBOG256},
    {"Streebog-512", NULL, BL_GCRY, GCRY_MD_STRIBOG512},
};
#define NTABLE (sizeof table / sizeof table[0])

#define SCRATCH (64u * 1024u)

/* Seconds of this thread's CPU time (calibration only): unlike wall time, it does not charge one
 * implementation for another process that happened to run meanwhile on a shared machine. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* MiB/s of one 8 MiB SHAKE pass in 64 KiB chunks over buf: the project's sponge when mdctx is NULL,
 * else EVP (the same work as a baseline pass, only shorter). */
static double xof_mibs(EVP_MD_CTX *mdctx, const EVP_MD *md, unsigned rate, const uint8_t *buf)
{
    enum { CHUNKS = 128 };
    uint8_t out[64];
    double t0 = cpu_s();
    if (mdctx) {
        if (EVP_DigestInit_ex2(mdctx, md, NULL) != 1)
            return 0;
        for (int i = 0; i < CHUNKS; i++)
            EVP_DigestUpdate(mdctx, buf, SCRATCH);
        EVP_DigestFinalXOF(mdctx, out, sizeof out);
    } else {
        dsig_keccak k;
        dsig_keccak_init(&k, rate);
        for (int i = 0; i < CHUNKS; i++)
            dsig_keccak_absorb(&k, buf, SCRATCH);
        dsig_keccak_finalize(&k, DSIG_KECCAK_DS_SHAKE);
        dsig_keccak_squeeze(&k, out, sizeof out);
    }
    return (double)CHUNKS * SCRATCH / (1024.0 * 1024.0) / (cpu_s() - t0);
}

/* Is the project's sponge the faster SHAKE at this rate? Decided once per process per rate: best of
 * three alternating 8 MiB passes each (~0.1 s, thread CPU time), the choice reported on stderr. */
static int xof_use_keccak(bench_baseline *b, const char *name, unsigned rate)
{
    static struct {
        unsigned rate;
        int use;
    } done[2];
    for (size_t i = 0; i < 2; i++)
        if (done[i].rate == rate)
            return done[i].use;
    memset(b->scratch, 0x5a, SCRATCH);
    double ours = 0, evp = 0;
    for (int r = 0; r < 3; r++) {
        double o = xof_mibs(NULL, NULL, rate, b->scratch), e = xof_mibs(b->mdctx, b->md, rate, b->scratch);
        ours = o > ours ? o : ours;
        evp = e > evp ? e : evp;
    }
    int use = ours > evp;
    fprintf(stderr, "bench: %s baseline runs on %s (calibration, 64 KiB chunks, CPU time: src/hash/keccak.h "
            "%.0f MiB/s, OpenSSL EVP %.0f MiB/s; the faster is the baseline)\n", name,
            use ? "src/hash/keccak.h" : "OpenSSL EVP", ours, evp);
    for (size_t i = 0; i < 2; i++)
        if (!done[i].rate) {
            done[i].rate = rate;
            done[i].use = use;
            break;
        }
    return use;
}

/* Find the table entry of a baseline name and fetch its OpenSSL object (once per harness run). */
int baseline_open(bench_baseline *b, const char *name)
{
    memset(b, 0, sizeof *b);
    if (!name)
        return -1;
    for (size_t i = 0; i < NTABLE; i++) {
        if (strcmp(table[i].name, name) != 0)
            continue;
        b->kind = table[i].kind;
        if (b->kind == BL_GCRY) {
            gcry_md_hd_t h = NULL;
            if (dsig_init() != DSIG_OK || gcry_md_open(&h, (int)table[i].rate, 0))
                return -1;
            b->gmd = h;
            return 0;
        }
        if (b->kind == BL_CIPHER)
            b->cipher = EVP_CIPHER_fetch(NULL, table[i].ossl, NULL);
        else if (b->kind != BL_BLAKE3) /* BLAKE3 is the project's own (src/hash/blake3.h) */
            b->md = EVP_MD_fetch(NULL, table[i].ossl, NULL);
        b->mdctx = EVP_MD_CTX_new();
        b->cctx = EVP_CIPHER_CTX_new();
        b->scratch = OPENSSL_malloc(SCRATCH + 32);
        if ((!b->md && !b->cipher && b->kind != BL_BLAKE3) || !b->mdctx || !b->cctx || !b->scratch) {
            baseline_close(b);
            return -1;
        }
        if (table[i].rate && xof_use_keccak(b, name, table[i].rate))
            b->keccak_rate = table[i].rate;
        return 0;
    }
    return -1;
}

/* Release what baseline_open fetched. */
void baseline_close(bench_baseline *b)
{
    if (b->gmd)
        gcry_md_close((gcry_md_hd_t)b->gmd);
    EVP_MD_free(b->md);
    EVP_CIPHER_free(b->cipher);
    EVP_MD_CTX_free(b->mdctx);
    EVP_CIPHER_CTX_free(b->cctx);
    OPENSSL_free(b->scratch);
    memset(b, 0, sizeof *b);
}

/* Hash (or encrypt into the fixed scratch buffer, 64 KiB at a time) one chunk. */
static int baseline_sink(void *arg, const uint8_t *d, size_t n)
{
    bench_baseline *b = arg;
    if (b->gmd) {
        gcry_md_write((gcry_md_hd_t)b->gmd, d, n);
        return 0;
    }
    if (b->kind == BL_BLAKE3) {
        dsig_blake3_update(&b->blake3, d, n);
        return 0;
    }
    if (b->keccak_rate) {
        dsig_keccak_absorb(&b->keccak, d, n);
        return 0;
    }
    if (b->kind != BL_CIPHER)
        return EVP_DigestUpdate(b->mdctx, d, n) == 1 ? 0 : DSIG_E_CRYPTO;
    while (n > 0) {
        size_t step = n > SCRATCH ? SCRATCH : n;
        int outl;
        if (EVP_EncryptUpdate(b->cctx, b->scratch, &outl, d, (int)step) != 1)
            return DSIG_E_CRYPTO;
        d += step;
        n -= step;
    }
    return 0;
}

/* One timed pass of the bare baseline over the feeder's bytes: init, every chunk, final. */
int baseline_pass(bench_baseline *b, bench_feeder *f)
{
    static const uint8_t key[32], iv[16];
    unsigned char out[EVP_MAX_MD_SIZE > 64 ? EVP_MAX_MD_SIZE : 64];
    if (b->gmd) {
        gcry_md_reset((gcry_md_hd_t)b->gmd);
        int rc = feed_run(f, baseline_sink, b);
        gcry_md_final((gcry_md_hd_t)b->gmd);
        return rc;
    }
    if (b->kind == BL_BLAKE3) {
        dsig_blake3_init(&b->blake3);
    } else if (b->keccak_rate) {
        dsig_keccak_init(&b->keccak, b->keccak_rate);
    } else if (b->kind == BL_CIPHER) {
        if (EVP_EncryptInit_ex2(b->cctx, b->cipher, key, iv, NULL) != 1)
            return DSIG_E_CRYPTO;
    } else if (EVP_DigestInit_ex2(b->mdctx, b->md, NULL) != 1) {
        return DSIG_E_CRYPTO;
    }
    int rc = feed_run(f, baseline_sink, b);
    if (rc)
        return rc;
    int outl;
    if (b->kind == BL_BLAKE3) {
        dsig_blake3_finalize(&b->blake3, out, 32);
        return 0;
    }
    if (b->keccak_rate) {
        dsig_keccak_finalize(&b->keccak, DSIG_KECCAK_DS_SHAKE);
        dsig_keccak_squeeze(&b->keccak, out, 64);
        return 0;
    }
    if (b->kind == BL_CIPHER)
        return EVP_EncryptFinal_ex(b->cctx, b->scratch, &outl) == 1 ? 0 : DSIG_E_CRYPTO;
    if (b->kind == BL_XOF)
        return EVP_DigestFinalXOF(b->mdctx, out, 64) == 1 ? 0 : DSIG_E_CRYPTO;
    return EVP_DigestFinal_ex(b->mdctx, out, NULL) == 1 ? 0 : DSIG_E_CRYPTO;
}
