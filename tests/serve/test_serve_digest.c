/*
 * tests/serve/test_serve_digest.c — the audit payload digest pipeline of `dsig serve` (src/serve/digest.c):
 * the digest of bytes fed in arbitrary chunks, lent to worker threads, equals the digest of the whole
 * payload — against the official BLAKE3 vectors (BLAKE3-team test_vectors.json) and against OpenSSL's
 * one-shot SHA-256 — inline, offloaded from byte 0, mixed (small chunks inline, large ones lent), more
 * uploads than workers (chunks taken back by their owners), aborted uploads, and many uploads from
 * several threads at once (run under TSan: label "threads"). Every chunk is fed from a scratch buffer
 * that is overwritten right after serve_digest_sync, as MHD reuses its read buffer: a digest that still
 * read a lent chunk after the sync would come out wrong (and TSan/ASan would report it).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "testutil.h"
#include "core/internal.h"
#include "hash/blake3.h"
#include "serve/serve_internal.h"

/* The BLAKE3 test input: input_len bytes of 0, 1, ..., 250, 0, 1, ... (vectors README). */
static uint8_t *blake3_input(size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i % 251);
    return b;
}

/* Feed msg in chunks cycling through `chunks` (0 = the rest), each copied into one of two scratch
 * buffers that are clobbered as soon as the digest is synced past them (the connection thread's
 * contract with MHD, which reuses its read buffer); return the digest. */
static void run_digest(struct serve_digest_pool *pool, int kind, const uint8_t *msg, size_t len,
                       const size_t *chunks, size_t nchunks, uint8_t out[32])
{
    struct serve_digest *d = NULL;
    assert_int_equal(serve_digest_new(&d, pool, kind), DSIG_OK);
    uint8_t *buf[2] = {malloc(len ? len : 1), malloc(len ? len : 1)};
    assert_non_null(buf[0]);
    assert_non_null(buf[1]);
    size_t off = 0, i = 0;
    while (off < len) {
        size_t c = chunks[i % nchunks];
        if (c == 0 || c > len - off)
            c = len - off;
        uint8_t *sb = buf[i % 2]; /* its previous chunk was synced by the update before this one */
        memcpy(sb, msg + off, c);
        assert_int_equal(serve_digest_update(d, sb, c), DSIG_OK); /* syncs the previous chunk */
        memset(buf[(i + 1) % 2], 0xA5, len ? len : 1);
        if (i % 3 == 0) { /* an explicit sync, as feed() does before handing the chunk back */
            assert_int_equal(serve_digest_sync(d), DSIG_OK);
            memset(sb, 0x5A, c);
        }
        off += c;
        i++;
    }
    assert_int_equal(serve_digest_final(d, out), DSIG_OK);
    free(buf[0]);
    free(buf[1]);
    serve_digest_free(d);
}

/* OpenSSL's one-shot SHA-256: the reference the pipeline must reproduce. */
static void sha256_ref(const uint8_t *msg, size_t len, uint8_t out[32])
{
    unsigned int ol = 0;
    assert_int_equal(EVP_Digest(msg, len, out, &ol, EVP_sha256(), NULL), 1);
    assert_int_equal(ol, 32);
}

/* A pool of `workers` threads lending chunks of at least offload_min bytes. */
static struct serve_digest_pool *small_pool(unsigned workers, size_t offload_min)
{
    struct serve_digest_opts o = {workers, offload_min};
    struct serve_digest_pool *p = NULL;
    assert_int_equal(serve_digest_pool_new(&p, &o), DSIG_OK);
    return p;
}

static const size_t chunk_sets[][4] = {
    {0, 0, 0, 0},          /* one update */
    {1, 1, 1, 1},          /* byte by byte */
    {7, 1000, 1024, 3},    /* around the offload threshold of the second pool */
    {1023, 1025, 4096, 1}, /* lent and inline chunks alternating */
    {300, 300, 300, 300},  /* small chunks */
};

/* @spec BLAKE3 paper §2 / reference test_vectors.json: the default 32-byte hash of every case, fed through
 * no pool, a pool with offload from byte 0, and a pool that hashes the first 100 bytes inline. */
static void test_blake3_vectors(void **state)
{
    (void)state;
    json_t *v = tu_load_json("blake3/test_vectors.json");
    json_t *cases = json_object_get(v, "cases");
    assert_true(json_array_size(cases) >= 20);
    struct serve_digest_pool *pools[3] = {NULL, small_pool(1, 0), small_pool(2, 100)};
    size_t idx;
    json_t *c;
    size_t checked = 0;
    json_array_foreach(cases, idx, c) {
        size_t n = (size_t)json_integer_value(json_object_get(c, "input_len"));
        size_t hl = 0;
        uint8_t *want = tu_hex(tu_str(c, "hash"), &hl);
        assert_true(hl >= 32);
        uint8_t *msg = blake3_input(n);
        for (size_t pi = 0; pi < 3; pi++) {
            for (size_t ci = 0; ci < sizeof chunk_sets / sizeof chunk_sets[0]; ci++) {
                if (ci == 1 && n > 5000)
                    continue; /* byte by byte only for the short cases: keeps the test fast */
                uint8_t got[32];
                run_digest(pools[pi], SERVE_DIGEST_BLAKE3, msg, n, chunk_sets[ci], 4, got);
                assert_memory_equal(got, want, 32);
                checked++;
            }
        }
        free(msg);
        free(want);
    }
    assert_true(checked > 200);
    for (size_t pi = 0; pi < 3; pi++)
        serve_digest_pool_free(pools[pi]);
    json_decref(v);
}

/* SHA-256 through the pipeline equals OpenSSL's one-shot SHA-256, for lengths around block and offload
 * boundaries; the empty payload too. */
static void test_sha256_chunked(void **state)
{
    (void)state;
    struct serve_digest_pool *pools[3] = {NULL, small_pool(1, 0), small_pool(2, 1024)};
    const size_t lens[] = {0, 1, 55, 64, 1023, 1024, 1025, 2048, 4999, 5000, 5001, 12345, 65536, 300000};
    uint8_t *msg = malloc(300000);
    assert_non_null(msg);
    tu_fill(msg, 300000, 11);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        uint8_t want[32];
        sha256_ref(msg, lens[li], want);
        for (size_t pi = 0; pi < 3; pi++)
            for (size_t ci = 0; ci < sizeof chunk_sets / sizeof chunk_sets[0]; ci++) {
                if (ci == 1 && lens[li] > 5001)
                    continue;
                uint8_t got[32];
                run_digest(pools[pi], SERVE_DIGEST_SHA256, msg, lens[li], chunk_sets[ci], 4, got);
                assert_memory_equal(got, want, 32);
            }
    }
    free(msg);
    for (size_t pi = 0; pi < 3; pi++)
        serve_digest_pool_free(pools[pi]);
}

/* More uploads in flight than workers (owners take their chunks back); an upload freed without final
 * (client disconnect) while its chunk is lent waits for the worker before it is freed. */
static void test_more_uploads_than_workers_and_abort(void **state)
{
    (void)state;
    struct serve_digest_pool *p = small_pool(1, 0);
    enum { N = 5, LEN = 20000 };
    uint8_t *msg = malloc(LEN);
    assert_non_null(msg);
    tu_fill(msg, LEN, 5);
    uint8_t want[32];
    sha256_ref(msg, LEN, want);
    for (int round = 0; round < 3; round++) {
        struct serve_digest *d[N];
        for (int i = 0; i < N; i++)
            assert_int_equal(serve_digest_new(&d[i], p, SERVE_DIGEST_SHA256), DSIG_OK);
        for (size_t off = 0; off < LEN; off += 1500) /* interleaved: all five have a chunk lent */
            for (int i = 0; i < N; i++)
                assert_int_equal(serve_digest_update(d[i], msg + off, off + 1500 > LEN ? LEN - off : 1500),
                                 DSIG_OK);
        for (int i = 0; i < N; i++) {
            if (i == 1) { /* aborted mid-flight */
                serve_digest_free(d[i]);
                continue;
            }
            uint8_t got[32];
            assert_int_equal(serve_digest_final(d[i], got), DSIG_OK);
            assert_memory_equal(got, want, 32);
            serve_digest_free(d[i]);
        }
    }
    free(msg);
    serve_digest_pool_free(p);
}

/* Several connection threads at once on one pool with fewer workers than uploads. */
struct worker_arg {
    struct serve_digest_pool *pool;
    const uint8_t *msg;
    size_t len;
    uint64_t seed;
    int failures;
    uint8_t scratch[9000];
};

/* One "connection thread": many uploads of random sizes in random chunks, each checked. */
static void *conn_thread(void *arg)
{
    struct worker_arg *a = arg;
    uint64_t x = a->seed;
    for (int it = 0; it < 40; it++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t len = (size_t)(x % a->len);
        int kind = (x >> 32) & 1 ? SERVE_DIGEST_BLAKE3 : SERVE_DIGEST_SHA256;
        struct serve_digest *d = NULL;
        if (serve_digest_new(&d, a->pool, kind) != DSIG_OK) {
            a->failures++;
            continue;
        }
        size_t off = 0;
        while (off < len) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t c = 1 + (size_t)(x % 9000);
            if (c > len - off)
                c = len - off;
            memcpy(a->scratch, a->msg + off, c); /* MHD's read buffer, reused after the sync */
            if (serve_digest_update(d, a->scratch, c) != DSIG_OK || serve_digest_sync(d) != DSIG_OK)
                a->failures++;
            memset(a->scratch, 0x77, c);
            off += c;
        }
        uint8_t got[32], want[32];
        if (serve_digest_final(d, got) != DSIG_OK)
            a->failures++;
        serve_digest_free(d);
        if (kind == SERVE_DIGEST_SHA256) {
            unsigned int ol = 0;
            EVP_Digest(a->msg, len, want, &ol, EVP_sha256(), NULL);
        } else {
            dsig_blake3_hasher h;
            dsig_blake3_init(&h);
            dsig_blake3_update(&h, a->msg, len);
            dsig_blake3_finalize(&h, want, 32);
        }
        if (memcmp(got, want, 32) != 0)
            a->failures++;
    }
    return NULL;
}

static void test_concurrent_uploads(void **state)
{
    (void)state;
    struct serve_digest_pool *p = small_pool(2, 2000);
    enum { T = 6, LEN = 200000 };
    uint8_t *msg = malloc(LEN);
    assert_non_null(msg);
    tu_fill(msg, LEN, 99);
    pthread_t th[T];
    struct worker_arg args[T];
    for (int i = 0; i < T; i++) {
        args[i] = (struct worker_arg){p, msg, LEN, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), 0, {0}};
        assert_int_equal(pthread_create(&th[i], NULL, conn_thread, &args[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    free(msg);
    serve_digest_pool_free(p);
}

/* Bad pool parameters are refused with a message. */
static void test_bad_pool_params(void **state)
{
    (void)state;
    struct serve_digest_pool *p = (void *)1;
    struct serve_digest_opts o = {0, 4096};
    assert_int_equal(serve_digest_pool_new(&p, &o), DSIG_E_ARG);
    assert_null(p);
    o = (struct serve_digest_opts){65, 4096};
    assert_int_equal(serve_digest_pool_new(&p, &o), DSIG_E_ARG);
    assert_non_null(strstr(dsig_last_error_detail(), "digest pool"));
    serve_digest_pool_free(NULL);
    serve_digest_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blake3_vectors),
        cmocka_unit_test(test_sha256_chunked),
        cmocka_unit_test(test_more_uploads_than_workers_and_abort),
        cmocka_unit_test(test_concurrent_uploads),
        cmocka_unit_test(test_bad_pool_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
