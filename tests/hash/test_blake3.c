/*
 * tests/hash/test_blake3.c — BLAKE3 against the official vectors
 * (blake3/test_vectors.json: hash, keyed_hash, derive_key, 131-byte XOF and
 * 32-byte prefix) with every back-end this CPU has (portable, sse41, avx2,
 * avx512), incremental updates in odd sizes, finalize_seek, the one-block fast
 * path, hash64_many, hash_many_chunks, long (parallel) XOF outputs and
 * small-then-long update sequences, and streaming in fixed and random update
 * sizes (keyed, unkeyed, derive-key; stopping on chunk boundaries and
 * continuing) against the official values and the one-shot hash, and inputs
 * across 64-chunk update batches against an independent spec-direct tree
 * (the official vectors stop at 31 chunks). Back-ends
 * the CPU (or DSIG_CPU_DISABLE) lacks are skipped with a printed note; CMake
 * runs the binary again with
 * DSIG_CPU_DISABLE=avx512 and =avx2 so the default dispatch of the lower
 * back-ends is covered too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "hash/blake3.h"
#include "hash/blake3_impl.h"
#include "testutil.h"

/* In order of preference: the dispatcher picks the last one the CPU has. */
static const char *const backends[] = {"portable", "sse41", "avx2", "avx512"};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

/* Odd update sizes: around a block, a chunk, and several chunks (the SIMD
 * subtree path). */
static const size_t chunk_sizes[] = {1, 63, 64, 65, 1023, 1024, 1025, 8191};

static json_t *vectors;

/* Load the vector file once for all tests. */
static int setup(void **state)
{
    (void)state;
    vectors = tu_load_json("blake3/test_vectors.json");
    return vectors ? 0 : -1;
}

/* Release the vectors. */
static int teardown(void **state)
{
    (void)state;
    json_decref(vectors);
    return 0;
}

/* The vector input: len bytes of 0, 1, ..., 250, 0, 1, ... */
static uint8_t *pattern(size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)(i % 251);
    return p;
}

/* Pin a back-end; prints and returns 0 if this CPU lacks it. */
static int use_backend(const char *name)
{
    if (dsig_blake3_force_impl(name) != 0) {
        printf("    [ SKIPPED ] blake3 back-end %s: not supported by this CPU (or "
               "DSIG_CPU_DISABLE)\n",
               name);
        return 0;
    }
    assert_string_equal(dsig_blake3_impl(), name);
    return 1;
}

enum mode { M_HASH, M_KEYED, M_DERIVE };

/* A hasher for the given mode with the vector file's key / context. */
static void mode_init(dsig_blake3_hasher *h, enum mode m)
{
    if (m == M_HASH)
        dsig_blake3_init(h);
    else if (m == M_KEYED)
        dsig_blake3_init_keyed(h, (const uint8_t *)tu_str(vectors, "key"));
    else
        dsig_blake3_init_derive_key(h, tu_str(vectors, "context_string"));
}

/* Check one case in one mode: one update and every odd update size, full XOF +
 * 32-byte prefix, seeks. */
static void check_case(enum mode m, const uint8_t *in, size_t len, const uint8_t *want, size_t want_len)
{
    uint8_t out[256];
    dsig_blake3_hasher h;
    assert_true(want_len <= sizeof out && want_len >= 32);

    mode_init(&h, m);
    dsig_blake3_update(&h, in, len);
    memset(out, 0, sizeof out);
    dsig_blake3_finalize(&h, out, want_len);
    assert_memory_equal(out, want, want_len);
    memset(out, 0, sizeof out);
    dsig_blake3_finalize(&h, out, DSIG_BLAKE3_OUT_LEN); /* default length = prefix; hasher unchanged */
    assert_memory_equal(out, want, DSIG_BLAKE3_OUT_LEN);

    /* finalize_seek: every offset, a few lengths (spanning output-block
     * boundaries). */
    for (size_t seek = 0; seek < want_len; seek++) {
        size_t n = want_len - seek;
        memset(out, 0, sizeof out);
        dsig_blake3_finalize_seek(&h, seek, out, n);
        assert_memory_equal(out, want + seek, n);
        if (n > 1) {
            dsig_blake3_finalize_seek(&h, seek, out, 1);
            assert_int_equal(out[0], want[seek]);
        }
    }

    for (size_t c = 0; c < sizeof chunk_sizes / sizeof chunk_sizes[0]; c++) {
        mode_init(&h, m);
        dsig_blake3_update(&h, in, 0); /* empty updates are no-ops */
        for (size_t off = 0; off < len; off += chunk_sizes[c]) {
            size_t n = len - off < chunk_sizes[c] ? len - off : chunk_sizes[c];
            dsig_blake3_update(&h, in + off, n);
        }
        memset(out, 0, sizeof out);
        dsig_blake3_finalize(&h, out, want_len);
        assert_memory_equal(out, want, want_len);
    }

    if (m == M_HASH) {
        memset(out, 0, sizeof out);
        dsig_blake3(in, len, out, want_len);
        assert_memory_equal(out, want, want_len);
        dsig_blake3(in, len, out, DSIG_BLAKE3_OUT_LEN);
        assert_memory_equal(out, want, DSIG_BLAKE3_OUT_LEN);
    }
    if (m != M_DERIVE) {
        const uint8_t *key = m == M_KEYED ? (const uint8_t *)tu_str(vectors, "key") : NULL;
        memset(out, 0, sizeof out);
        dsig_blake3_hash_block(key, in, len, out, DSIG_BLAKE3_OUT_LEN); /* also > 64 B: hasher fallback */
        assert_memory_equal(out, want, DSIG_BLAKE3_OUT_LEN);
        memset(out, 0, sizeof out);
        dsig_blake3_hash_block(key, in, len, out, want_len);
        assert_memory_equal(out, want, want_len);
    }
}

/* Every case, every mode, with one back-end. */
static void run_vectors(const char *backend)
{
    if (!use_backend(backend))
        return;
    const json_t *cases = json_object_get(vectors, "cases");
    assert_true(json_is_array(cases));
    assert_true(json_array_size(cases) >= 28);
    size_t idx;
    const json_t *c;
    json_array_foreach(cases, idx, c)
    {
        size_t len = (size_t)json_integer_value(json_object_get(c, "input_len"));
        uint8_t *in = pattern(len);
        static const char *const fields[] = {"hash", "keyed_hash", "derive_key"};
        for (int m = 0; m < 3; m++) {
            size_t wl;
            uint8_t *want = tu_hex(tu_str(c, fields[m]), &wl);
            assert_int_equal(wl, 131);
            check_case((enum mode)m, in, len, want, wl);
            free(want);
        }
        free(in);
    }
    printf("    blake3 back-end %s: %zu official cases x 3 modes OK\n", backend, json_array_size(cases));
}

/* Official vectors, portable back-end. */
static void test_vectors_portable(void **state)
{
    (void)state;
    run_vectors("portable");
}

/* Official vectors, SSE4.1 back-end. */
static void test_vectors_sse41(void **state)
{
    (void)state;
    run_vectors("sse41");
}

/* Official vectors, AVX2 back-end. */
static void test_vectors_avx2(void **state)
{
    (void)state;
    run_vectors("avx2");
}

/* Official vectors, AVX-512 back-end. */
static void test_vectors_avx512(void **state)
{
    (void)state;
    run_vectors("avx512");
}

/* Reference for long inputs: updates of at most one chunk (each completes the
 * buffered chunk and leaves the next one buffered, so at most one chunk per SIMD
 * batch); with the portable back-end this is the plain serial chunk-by-chunk tree
 * of the specification. */
static void serial_hash(const uint8_t *key, const uint8_t *in, size_t len, uint8_t *out, size_t out_len)
{
    dsig_blake3_hasher h;
    if (key)
        dsig_blake3_init_keyed(&h, key);
    else
        dsig_blake3_init(&h);
    for (size_t off = 0; off < len; off += 1000)
        dsig_blake3_update(&h, in + off, len - off < 1000 ? len - off : 1000);
    dsig_blake3_finalize(&h, out, out_len);
}

/* Inputs longer than the vectors (up to 300 chunks: 64-chunk subtrees, odd
 * tails, unaligned starts) give the same hash with every back-end and every
 * update pattern as the portable serial tree. */
static void test_long_inputs(void **state)
{
    (void)state;
    const size_t max = 300 * 1024 + 77;
    uint8_t *in = malloc(max);
    assert_non_null(in);
    tu_fill(in, max, 3);
    static const size_t lens[] = {64 * 1024, 64 * 1024 + 1, 65 * 1024, 129 * 1024 + 5, 300 * 1024 + 77};
    static const size_t firsts[] = {0, 1, 1024, 5 * 1024 + 3};
    uint8_t key[32];
    tu_fill(key, sizeof key, 9);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        for (int keyed = 0; keyed < 2; keyed++) {
            uint8_t want[100];
            assert_int_equal(dsig_blake3_force_impl("portable"), 0);
            serial_hash(keyed ? key : NULL, in, lens[li], want, sizeof want);
            for (size_t b = 0; b < N_BACKENDS; b++) {
                if (dsig_blake3_force_impl(backends[b]) != 0)
                    continue;
                for (size_t fi = 0; fi < sizeof firsts / sizeof firsts[0]; fi++) {
                    /* A first update of `first` bytes shifts the chunk alignment of the
                     * big second one. */
                    dsig_blake3_hasher h;
                    uint8_t got[100];
                    if (keyed)
                        dsig_blake3_init_keyed(&h, key);
                    else
                        dsig_blake3_init(&h);
                    dsig_blake3_update(&h, in, firsts[fi]);
                    dsig_blake3_update(&h, in + firsts[fi], lens[li] - firsts[fi]);
                    dsig_blake3_finalize(&h, got, sizeof got);
                    assert_memory_equal(got, want, sizeof want);
                }
            }
        }
    }
    free(in);
}

/* hash_block (one compression) equals the hasher for 0..64 bytes, keyed and
 * unkeyed, every out_len up to 64 and beyond (hasher fallback), with every
 * back-end. */
static void test_hash_block(void **state)
{
    (void)state;
    uint8_t msg[64], key[32];
    tu_fill(msg, sizeof msg, 5);
    tu_fill(key, sizeof key, 6);
    for (size_t b = 0; b < N_BACKENDS; b++) {
        if (!use_backend(backends[b]))
            continue;
        for (int keyed = 0; keyed < 2; keyed++) {
            const uint8_t *k = keyed ? key : NULL;
            for (size_t len = 0; len <= 64; len++) {
                uint8_t want[100], got[100];
                dsig_blake3_hasher h;
                if (k)
                    dsig_blake3_init_keyed(&h, k);
                else
                    dsig_blake3_init(&h);
                dsig_blake3_update(&h, msg, len);
                dsig_blake3_finalize(&h, want, sizeof want);
                for (size_t ol = 0; ol <= sizeof got; ol++) {
                    memset(got, 0xA5, sizeof got);
                    dsig_blake3_hash_block(k, msg, len, got, ol);
                    assert_memory_equal(got, want, ol);
                    for (size_t i = ol; i < sizeof got; i++) /* nothing written past out_len */
                        assert_int_equal(got[i], 0xA5);
                }
            }
        }
    }
}

/* hash64_many equals hash_block for n = 0..33 (every SIMD width and remainder,
 * up to two full 16-way groups and one more), with each back-end. */
static void test_hash64_many(void **state)
{
    (void)state;
    enum { NMAX = 33 };
    uint8_t in[NMAX][64], key[32], want[NMAX][32], got[NMAX + 1][32];
    tu_fill(&in[0][0], sizeof in, 7);
    tu_fill(key, sizeof key, 8);
    for (int keyed = 0; keyed < 2; keyed++) {
        const uint8_t *k = keyed ? key : NULL;
        assert_int_equal(dsig_blake3_force_impl("portable"), 0);
        for (size_t i = 0; i < NMAX; i++)
            dsig_blake3_hash_block(k, in[i], 64, want[i], 32);
        for (size_t b = 0; b < N_BACKENDS; b++) {
            if (!use_backend(backends[b]))
                continue;
            for (size_t n = 0; n <= NMAX; n++) {
                memset(got, 0x5A, sizeof got);
                dsig_blake3_hash64_many(k, (const uint8_t(*)[64])in, n, got);
                assert_memory_equal(got, want, 32 * n);
                for (size_t i = 0; i < 32; i++) /* nothing written past out[n - 1] */
                    assert_int_equal(got[n][i], 0x5A);
            }
        }
    }
}

/* A hasher (keyed or not) over `in`, all at once. */
static void hasher_over(dsig_blake3_hasher *h, const uint8_t *key, const uint8_t *in, size_t len)
{
    if (key)
        dsig_blake3_init_keyed(h, key);
    else
        dsig_blake3_init(h);
    dsig_blake3_update(h, in, len);
}

/* hash_many_chunks equals the hasher on each message for n = 0..33 (every SIMD
 * width up to 16, padded remainders), message lengths around block and chunk edges,
 * keyed and unkeyed, tight (stride = len: the last message ends the
 * allocation, so an over-read shows under ASan) and loose strides, with every
 * back-end; nothing is written past out[n - 1]. */
static void test_hash_many_chunks(void **state)
{
    (void)state;
    enum { NMAX = 33 };
    static const size_t lens[] = {0, 1, 63, 64, 65, 168, 1023, 1024};
    uint8_t key[32], want[NMAX][32], got[NMAX + 1][32];
    tu_fill(key, sizeof key, 11);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t len = lens[li];
        for (size_t extra = 0; extra <= 5; extra += 5) {
            size_t stride = len + extra;
            size_t total = stride * NMAX - extra; /* the last message ends the buffer */
            uint8_t *in = malloc(total ? total : 1);
            assert_non_null(in);
            tu_fill(in, total, (int)(len + extra));
            for (int keyed = 0; keyed < 2; keyed++) {
                const uint8_t *k = keyed ? key : NULL;
                assert_int_equal(dsig_blake3_force_impl("portable"), 0);
                for (size_t i = 0; i < NMAX; i++) {
                    dsig_blake3_hasher h;
                    hasher_over(&h, k, in + i * stride, len);
                    dsig_blake3_finalize(&h, want[i], 32);
                }
                for (size_t b = 0; b < N_BACKENDS; b++) {
                    if (dsig_blake3_force_impl(backends[b]) != 0)
                        continue;
                    for (size_t n = 0; n <= NMAX; n++) {
                        /* n messages taken from the end, so message n-1 always ends the buffer. */
                        const uint8_t *base = in + (NMAX - n) * stride;
                        memset(got, 0x5A, sizeof got);
                        dsig_blake3_hash_many_chunks(k, base, stride, len, n, got);
                        assert_memory_equal(got, want[NMAX - n], 32 * n);
                        for (size_t i = 0; i < 32; i++)
                            assert_int_equal(got[n][i], 0x5A);
                    }
                }
            }
            free(in);
        }
    }
    assert_int_equal(dsig_blake3_force_impl("portable"), 0);
}

/* Long XOF outputs (up to 2000 bytes, every seek offset mod 64, lengths around
 * block edges) equal the one-byte-at-a-time sequential output, with every
 * back-end, for a one-chunk root, a parent root and a keyed hasher; nothing is
 * written past out_len. */
static void test_long_xof(void **state)
{
    (void)state;
    enum { MAXOUT = 2000, REF = MAXOUT + 128 };
    static const size_t outs[] = {1, 63, 64, 65, 127, 128, 129, 191, 256, 500, 832, 960, 1240, MAXOUT};
    static const size_t inlens[] = {3, 168, 3 * 1024 + 5};
    uint8_t key[32], msg[3 * 1024 + 5];
    tu_fill(key, sizeof key, 12);
    tu_fill(msg, sizeof msg, 13);
    uint8_t *ref = malloc(REF), *got = malloc(MAXOUT + 64);
    assert_non_null(ref);
    assert_non_null(got);
    for (size_t ii = 0; ii < sizeof inlens / sizeof inlens[0]; ii++) {
        for (int keyed = 0; keyed < 2; keyed++) {
            dsig_blake3_hasher h;
            assert_int_equal(dsig_blake3_force_impl("portable"), 0);
            hasher_over(&h, keyed ? key : NULL, msg, inlens[ii]);
            for (size_t i = 0; i < REF; i++) /* one byte per call: never the multi-block path */
                dsig_blake3_finalize_seek(&h, i, ref + i, 1);
            for (size_t b = 0; b < N_BACKENDS; b++) {
                if (dsig_blake3_force_impl(backends[b]) != 0)
                    continue;
                for (size_t seek = 0; seek < 128; seek++) {
                    for (size_t oi = 0; oi < sizeof outs / sizeof outs[0]; oi++) {
                        size_t ol = outs[oi];
                        memset(got, 0xA5, MAXOUT + 64);
                        dsig_blake3_finalize_seek(&h, seek, got, ol);
                        assert_memory_equal(got, ref + seek, ol);
                        for (size_t i = ol; i < MAXOUT + 64; i++)
                            assert_int_equal(got[i], 0xA5);
                    }
                }
                memset(got, 0, MAXOUT);
                dsig_blake3_finalize(&h, got, MAXOUT);
                assert_memory_equal(got, ref, MAXOUT);
            }
        }
    }
    free(ref);
    free(got);
    assert_int_equal(dsig_blake3_force_impl("portable"), 0);
}

/* XOF output blocks whose 64-bit counter crosses 2^32 (the high counter word of every SIMD lane): any
 * back-end, any length, equals portable one-byte-at-a-time output at the same offsets. */
static void test_xof_high_counter(void **state)
{
    (void)state;
    enum { MAXOUT = 2000 };
    static const uint64_t seeks[] = {64ull * 0xFFFFFFF0ull, 64ull * 0xFFFFFFF0ull + 1, 64ull * 0xFFFFFFFFull + 63};
    static const size_t outs[] = {1, 65, 640, 960, 1088, MAXOUT};
    uint8_t msg[168], ref[MAXOUT], got[MAXOUT];
    tu_fill(msg, sizeof msg, 16);
    dsig_blake3_hasher h;
    for (size_t si = 0; si < sizeof seeks / sizeof seeks[0]; si++) {
        assert_int_equal(dsig_blake3_force_impl("portable"), 0);
        hasher_over(&h, NULL, msg, sizeof msg);
        for (size_t i = 0; i < MAXOUT; i++)
            dsig_blake3_finalize_seek(&h, seeks[si] + i, ref + i, 1);
        for (size_t b = 0; b < N_BACKENDS; b++) {
            if (dsig_blake3_force_impl(backends[b]) != 0)
                continue;
            for (size_t oi = 0; oi < sizeof outs / sizeof outs[0]; oi++) {
                memset(got, 0, sizeof got);
                dsig_blake3_finalize_seek(&h, seeks[si], got, outs[oi]);
                assert_memory_equal(got, ref, outs[oi]);
            }
        }
    }
    assert_int_equal(dsig_blake3_force_impl("portable"), 0);
}

/* Small first updates followed by a long one (the DSig message digest: keyed,
 * 16 + 16 + 8192 bytes, 64 bytes out) equal the one-shot and the serial
 * hashes, with every back-end, for prefixes that leave the chunk state empty,
 * with under one block, exactly one block, or compressed blocks, and long
 * parts that end mid-chunk, on a chunk edge, or run past one 64-chunk batch. */
static void test_split_update(void **state)
{
    (void)state;
    static const size_t pre1[] = {0, 1, 16, 16, 63, 64, 64, 65, 1000, 1024, 1025};
    static const size_t pre2[] = {0, 0, 16, 48, 1, 0, 1, 0, 24, 1, 0};
    static const size_t bigs[] = {1, 959, 960, 961, 8192, 8193, 64 * 1024, 70 * 1024 + 3};
    const size_t max = 1025 + 70 * 1024 + 3;
    uint8_t *in = malloc(max), key[32];
    assert_non_null(in);
    tu_fill(in, max, 14);
    tu_fill(key, sizeof key, 15);
    for (size_t bi = 0; bi < sizeof bigs / sizeof bigs[0]; bi++) {
        for (size_t pi = 0; pi < sizeof pre1 / sizeof pre1[0]; pi++) {
            size_t total = pre1[pi] + pre2[pi] + bigs[bi];
            for (int keyed = 0; keyed < 2; keyed++) {
                const uint8_t *k = keyed ? key : NULL;
                uint8_t want[64], got[64];
                assert_int_equal(dsig_blake3_force_impl("portable"), 0);
                serial_hash(k, in, total, want, sizeof want);
                for (size_t b = 0; b < N_BACKENDS; b++) {
                    if (dsig_blake3_force_impl(backends[b]) != 0)
                        continue;
                    dsig_blake3_hasher h;
                    hasher_over(&h, k, in, 0);
                    dsig_blake3_update(&h, in, pre1[pi]);
                    dsig_blake3_update(&h, in + pre1[pi], pre2[pi]);
                    dsig_blake3_update(&h, in + pre1[pi] + pre2[pi], bigs[bi]);
                    dsig_blake3_finalize(&h, got, sizeof got);
                    assert_memory_equal(got, want, sizeof want);
                    hasher_over(&h, k, in, total);
                    dsig_blake3_finalize(&h, got, sizeof got);
                    assert_memory_equal(got, want, sizeof want);
                }
            }
        }
    }
    free(in);
    assert_int_equal(dsig_blake3_force_impl("portable"), 0);
}

/* Update sizes of the streaming test: around a block and a chunk, whole chunk
 * multiples (every update ends on a chunk boundary and the next continues it),
 * one past four chunks, and a 16-chunk batch. */
static const size_t stream_sizes[] = {1, 63, 64, 65, 1023, 1024, 1025, 2048, 3072, 4096 + 1, 16384};

/* xorshift64: reproducible pseudo-random update sizes (fixed seeds). */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random update size, 0..max: within a few blocks, an exact chunk multiple,
 * a chunk multiple +-1, or anything up to max. */
static size_t rand_size(uint64_t *s, size_t max)
{
    uint64_t r = rng_next(s);
    size_t v;
    switch (r & 3) {
    case 0:
        v = (size_t)(r >> 8) % 200;
        break;
    case 1:
        v = 1024 * (1 + (size_t)(r >> 8) % 6);
        break;
    case 2:
        v = 1024 * (1 + (size_t)(r >> 8) % 6) + (size_t)(r >> 32) % 3 - 1;
        break;
    default:
        v = (size_t)(r >> 8) % (max + 1);
        break;
    }
    return v > max ? max : v;
}

/* Absorb in[0..len) with updates of `fixed` bytes, or of random sizes (at most
 * rmax) from *seed when fixed == 0. */
static void feed(dsig_blake3_hasher *h, const uint8_t *in, size_t len, size_t fixed, uint64_t *seed, size_t rmax)
{
    size_t off = 0;
    while (off < len) {
        size_t n = fixed ? fixed : rand_size(seed, rmax);
        if (n > len - off)
            n = len - off;
        dsig_blake3_update(h, in + off, n);
        off += n;
    }
}

/* One streaming pattern of one case: the 131-byte output equals `want` (the
 * official value, also the one-shot result). */
static void stream_check(enum mode m, const uint8_t *in, size_t len, size_t fixed, uint64_t seed,
                         const uint8_t *want, size_t want_len)
{
    dsig_blake3_hasher h;
    uint8_t out[256];
    mode_init(&h, m);
    feed(&h, in, len, fixed, &seed, 5000);
    memset(out, 0, sizeof out);
    dsig_blake3_finalize(&h, out, want_len);
    assert_memory_equal(out, want, want_len);
}

/* Every official input, in hash / keyed_hash / derive_key mode, with every
 * back-end, fed in each fixed update size and in random sizes (fixed seeds),
 * equals the one-shot result and the official value; and a stream that stops
 * exactly on each chunk boundary (finalising there: the buffered last chunk is
 * the root or the last leaf) and then continues gives the same results. */
static void test_stream_updates(void **state)
{
    (void)state;
    const json_t *cases = json_object_get(vectors, "cases");
    assert_true(json_is_array(cases));
    static const char *const fields[] = {"hash", "keyed_hash", "derive_key"};
    size_t checked = 0;
    for (size_t b = 0; b < N_BACKENDS; b++) {
        if (!use_backend(backends[b]))
            continue;
        size_t idx;
        const json_t *c;
        json_array_foreach(cases, idx, c)
        {
            size_t len = (size_t)json_integer_value(json_object_get(c, "input_len"));
            uint8_t *in = pattern(len);
            for (int m = 0; m < 3; m++) {
                size_t wl;
                uint8_t *want = tu_hex(tu_str(c, fields[m]), &wl);
                uint8_t out[256];
                dsig_blake3_hasher h;
                assert_int_equal(wl, 131);
                /* The one-shot result is the official one. */
                mode_init(&h, (enum mode)m);
                dsig_blake3_update(&h, in, len);
                dsig_blake3_finalize(&h, out, wl);
                assert_memory_equal(out, want, wl);
                for (size_t i = 0; i < sizeof stream_sizes / sizeof stream_sizes[0]; i++)
                    stream_check((enum mode)m, in, len, stream_sizes[i], 0, want, wl);
                for (uint64_t seed = 1; seed <= 8; seed++)
                    stream_check((enum mode)m, in, len, 0, seed * 0x9E3779B97F4A7C15ull + idx, want, wl);
                /* Stop on every chunk boundary, finalise (the prefix's one-shot hash), continue. */
                for (size_t kc = 1024; kc < len; kc += 1024) {
                    uint8_t pre[32], pre_want[32];
                    dsig_blake3_hasher ref;
                    mode_init(&ref, (enum mode)m);
                    dsig_blake3_update(&ref, in, kc);
                    dsig_blake3_finalize(&ref, pre_want, sizeof pre_want);
                    for (int how = 0; how < 3; how++) {
                        uint64_t seed = 77 + kc;
                        mode_init(&h, (enum mode)m);
                        if (how == 0)
                            dsig_blake3_update(&h, in, kc); /* one update right up to the boundary */
                        else
                            feed(&h, in, kc, how == 1 ? 1024 : 0, &seed, 3000); /* several ending there */
                        dsig_blake3_finalize(&h, pre, sizeof pre);
                        assert_memory_equal(pre, pre_want, sizeof pre);
                        if (how == 2)
                            dsig_blake3_update(&h, in + kc, 0); /* an empty update decides nothing */
                        if (how == 1)
                            dsig_blake3_update(&h, in + kc, 1); /* one byte, then the rest */
                        size_t done = how == 1 ? kc + 1 : kc;
                        feed(&h, in + done, len - done, how == 0 ? len - done : 0, &seed, 3000);
                        memset(out, 0, sizeof out);
                        dsig_blake3_finalize(&h, out, wl);
                        assert_memory_equal(out, want, wl);
                    }
                }
                free(want);
                checked++;
            }
            free(in);
        }
    }
    printf("    blake3 streaming: %zu case x mode x back-end combinations OK\n", checked);
    assert_int_equal(dsig_blake3_force_impl("portable"), 0);
}

/* Inputs past one 64-chunk batch (batches whose first lane is the buffered
 * chunk) in random update sizes up to 70 KiB, keyed and unkeyed, with every
 * back-end, equal the portable one-shot hash (the batch-edge alignments are
 * test_stream_batch_edges' job). */
static void test_stream_long(void **state)
{
    (void)state;
    static const size_t lens[] = {64 * 1024, 131 * 1024, 200 * 1024 + 517};
    const size_t max = 200 * 1024 + 517;
    uint8_t *in = malloc(max), key[32];
    assert_non_null(in);
    tu_fill(in, max, 21);
    tu_fill(key, sizeof key, 22);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        for (int keyed = 0; keyed < 2; keyed++) {
            uint8_t want[64], got[64];
            dsig_blake3_hasher h;
            assert_int_equal(dsig_blake3_force_impl("portable"), 0);
            hasher_over(&h, keyed ? key : NULL, in, lens[li]);
            dsig_blake3_finalize(&h, want, sizeof want);
            for (size_t b = 0; b < N_BACKENDS; b++) {
                if (dsig_blake3_force_impl(backends[b]) != 0)
                    continue;
                for (uint64_t seed = 1; seed <= 6; seed++) {
                    uint64_t s = seed * 0xD1B54A32D192ED03ull + li;
                    hasher_over(&h, keyed ? key : NULL, in, 0);
                    feed(&h, in, lens[li], 0, &s, 70 * 1024);
                    dsig_blake3_finalize(&h, got, sizeof got);
                    assert_memory_equal(got, want, sizeof want);
                }
                /* Chunk-multiple updates after an odd start: every batch begins with the buffered chunk. */
                for (size_t first = 1; first <= 1024; first += 1023) {
                    hasher_over(&h, keyed ? key : NULL, in, first);
                    feed(&h, in + first, lens[li] - first, 64 * 1024, NULL, 0);
                    dsig_blake3_finalize(&h, got, sizeof got);
                    assert_memory_equal(got, want, sizeof want);
                }
            }
        }
    }
    free(in);
    assert_int_equal(dsig_blake3_force_impl("portable"), 0);
}

/* Independent reference for inputs past the official vectors (they stop at 31
 * chunks, so no official value crosses a 64-chunk update batch): the recursive
 * tree of the specification straight over the portable compression function —
 * no chunk buffer, CV stack, batching or SIMD, so a bug shared by every update
 * pattern of the hasher (a chunk counter, a merge order) still shows. */
struct ref_node {
    uint32_t cv[8];
    uint8_t block[64];
    uint8_t block_len;
    uint64_t counter;
    uint8_t flags;
};

/* @spec BLAKE3 spec §2.4: the output node of chunk `ctr` (0..1024 bytes). */
static void ref_chunk(const uint32_t key[8], uint8_t flags, const uint8_t *in, size_t len, uint64_t ctr,
                      struct ref_node *n)
{
    uint8_t start = B3_CHUNK_START;
    size_t off = 0;
    memcpy(n->cv, key, sizeof n->cv);
    for (; len - off > 64; off += 64) {
        dsig_b3_portable_compress_cv(n->cv, in + off, 64, ctr, flags | start);
        start = 0;
    }
    memset(n->block, 0, sizeof n->block);
    if (len > off)
        memcpy(n->block, in + off, len - off);
    n->block_len = (uint8_t)(len - off);
    n->counter = ctr;
    n->flags = flags | start | B3_CHUNK_END;
}

/* @spec BLAKE3 spec §2.5: the chaining value of a non-root node. */
static void ref_cv(const struct ref_node *n, uint8_t out[32])
{
    uint32_t cv[8];
    memcpy(cv, n->cv, sizeof cv);
    dsig_b3_portable_compress_cv(cv, n->block, n->block_len, n->counter, n->flags);
    for (int i = 0; i < 8; i++)
        dsig_store_le32(out + 4 * i, cv[i]);
}

/* @spec BLAKE3 spec §5.1.1: the node over `len` bytes starting at chunk `ctr`;
 * the left subtree is the largest power of two of chunks leaving at least one
 * byte for the right one. */
static void ref_tree(const uint32_t key[8], uint8_t flags, const uint8_t *in, size_t len, uint64_t ctr,
                     struct ref_node *n)
{
    if (len <= DSIG_BLAKE3_CHUNK_LEN) {
        ref_chunk(key, flags, in, len, ctr, n);
        return;
    }
    size_t left = DSIG_BLAKE3_CHUNK_LEN;
    while (2 * left < len)
        left *= 2;
    struct ref_node sub;
    ref_tree(key, flags, in, left, ctr, &sub);
    ref_cv(&sub, n->block);
    ref_tree(key, flags, in + left, len - left, ctr + left / DSIG_BLAKE3_CHUNK_LEN, &sub);
    ref_cv(&sub, n->block + 32);
    memcpy(n->cv, key, sizeof n->cv);
    n->block_len = 64;
    n->counter = 0;
    n->flags = flags | B3_PARENT;
}

/* @spec BLAKE3 spec §2.6: out_len bytes of root output. */
static void ref_root(const uint32_t key[8], uint8_t flags, const uint8_t *in, size_t len, uint8_t *out,
                     size_t out_len)
{
    struct ref_node n;
    uint8_t blk[64];
    ref_tree(key, flags, in, len, 0, &n);
    for (size_t o = 0; o < out_len; o += 64) {
        dsig_b3_portable_compress_xof(n.cv, n.block, n.block_len, o / 64, n.flags | B3_ROOT, blk);
        memcpy(out + o, blk, out_len - o < 64 ? out_len - o : 64);
    }
}

/* @spec BLAKE3 spec §2.3: the reference hash in mode m (the vector file's key /
 * context). */
static void ref_hash(enum mode m, const uint8_t *in, size_t len, uint8_t *out, size_t out_len)
{
    uint32_t k[8];
    if (m == M_HASH) {
        ref_root(dsig_b3_iv, 0, in, len, out, out_len);
    } else if (m == M_KEYED) {
        for (int i = 0; i < 8; i++)
            k[i] = dsig_load_le32((const uint8_t *)tu_str(vectors, "key") + 4 * i);
        ref_root(k, B3_KEYED_HASH, in, len, out, out_len);
    } else {
        const char *ctx = tu_str(vectors, "context_string");
        uint8_t ck[32];
        ref_root(dsig_b3_iv, B3_DERIVE_KEY_CONTEXT, (const uint8_t *)ctx, strlen(ctx), ck, sizeof ck);
        for (int i = 0; i < 8; i++)
            k[i] = dsig_load_le32(ck + 4 * i);
        ref_root(k, B3_DERIVE_KEY_MATERIAL, in, len, out, out_len);
    }
}

/* Absorb in[from..to) as a first update of `first` bytes, then updates of
 * `step` bytes (the last one shorter). */
static void feed_steps(dsig_blake3_hasher *h, const uint8_t *in, size_t from, size_t to, size_t first,
                       size_t step)
{
    size_t n = first < to - from ? first : to - from;
    dsig_blake3_update(h, in + from, n);
    for (size_t off = from + n; off < to; off += n) {
        n = step < to - off ? step : to - off;
        dsig_blake3_update(h, in + off, n);
    }
}

/* Inputs across 64-chunk update batches against the independent reference (itself
 * first proven on every official vector), in every mode and with every back-end:
 * update patterns that put the buffered chunk at every position relative to a
 * batch edge (64 KiB steps from an empty start buffer chunk 63, 127, ... and
 * hash it as lane 0 of the next batch), updates of more than one batch with the
 * CVs of an unaligned tail waiting, chunk-sized updates crossing the edge one
 * lane at a time; streams stopped on chunk 63 / 64 / 65 / 128 boundaries finalise
 * to the prefix's hash (the undecided chunk is the last leaf), twice and from a
 * copy (finalize leaves the hasher unchanged), and then continue. */
static void test_stream_batch_edges(void **state)
{
    (void)state;
    const json_t *cases = json_object_get(vectors, "cases");
    static const char *const fields[] = {"hash", "keyed_hash", "derive_key"};
    size_t idx;
    const json_t *c;
    json_array_foreach(cases, idx, c)
    {
        size_t len = (size_t)json_integer_value(json_object_get(c, "input_len"));
        uint8_t *in = pattern(len);
        for (int m = 0; m < 3; m++) {
            size_t wl;
            uint8_t *want = tu_hex(tu_str(c, fields[m]), &wl);
            uint8_t out[256];
            assert_true(wl <= sizeof out);
            ref_hash((enum mode)m, in, len, out, wl);
            assert_memory_equal(out, want, wl);
            free(want);
        }
        free(in);
    }

    static const size_t lens[] = {64 * 1024,     64 * 1024 + 1,  65 * 1024 + 63,
                                  128 * 1024,    129 * 1024 + 1, 200 * 1024 + 517};
    static const size_t firsts[] = {0, 1, 1023, 1024, 1025, 63 * 1024, 64 * 1024 - 1, 0, 5, 0, 0};
    static const size_t steps[] = {64 * 1024, 64 * 1024, 64 * 1024, 64 * 1024, 64 * 1024, 1024, 2,
                                   65 * 1024, 65 * 1024 + 1, 128 * 1024 + 3, 300 * 1024};
    static const size_t stops[] = {63 * 1024, 64 * 1024, 65 * 1024, 128 * 1024};
    const size_t max = 200 * 1024 + 517;
    uint8_t *in = pattern(max);
    for (int m = 0; m < 3; m++) {
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            uint8_t want[64], pre_want[4][32];
            ref_hash((enum mode)m, in, lens[li], want, sizeof want);
            for (size_t si = 0; si < 4; si++)
                if (stops[si] < lens[li])
                    ref_hash((enum mode)m, in, stops[si], pre_want[si], 32);
            for (size_t b = 0; b < N_BACKENDS; b++) {
                if (dsig_blake3_force_impl(backends[b]) != 0)
                    continue;
                dsig_blake3_hasher h, copy;
                uint8_t got[64];
                for (size_t p = 0; p < sizeof steps / sizeof steps[0]; p++) {
                    mode_init(&h, (enum mode)m);
                    feed_steps(&h, in, 0, lens[li], firsts[p], steps[p]);
                    memset(got, 0, sizeof got);
                    dsig_blake3_finalize(&h, got, sizeof got);
                    assert_memory_equal(got, want, sizeof want);
                }
                for (size_t si = 0; si < 4; si++) {
                    if (stops[si] >= lens[li])
                        continue;
                    for (int how = 0; how < 2; how++) {
                        mode_init(&h, (enum mode)m);
                        feed_steps(&h, in, 0, stops[si], how ? 1024 : stops[si], 1024);
                        copy = h;
                        dsig_blake3_finalize(&h, got, 32);
                        assert_memory_equal(got, pre_want[si], 32);
                        assert_memory_equal(&h, &copy, offsetof(dsig_blake3_hasher, buf) + h.buf_len);
                        assert_memory_equal(h.cv_stack, copy.cv_stack, 32 * (size_t)h.cv_stack_len);
                        dsig_blake3_finalize(&copy, got, 32);
                        assert_memory_equal(got, pre_want[si], 32);
                        dsig_blake3_update(&h, in + stops[si], 0);
                        feed_steps(&h, in, stops[si], lens[li], how ? 1 : 64 * 1024, 64 * 1024);
                        dsig_blake3_finalize(&h, got, sizeof got);
                        assert_memory_equal(got, want, sizeof want);
                    }
                }
            }
        }
    }
    free(in);
    assert_int_equal(dsig_blake3_force_impl("portable"), 0);
}

/* The back-end detected at first use (this test runs first) is the best one the
 * CPU offers; avx512 is available exactly when the CPU feature is, and never
 * without avx2 (DSIG_CPU_DISABLE=avx2 turns it off too); unknown names fail. */
static void test_impl_name(void **state)
{
    (void)state;
    const char *detected = dsig_blake3_impl();
    const char *best = "portable";
    for (size_t b = 0; b < N_BACKENDS; b++)
        if (dsig_blake3_force_impl(backends[b]) == 0)
            best = backends[b];
    assert_int_equal(dsig_blake3_force_impl(best), 0);
    assert_string_equal(detected, best);
    unsigned f = dsig_cpu_features();
    int have512 = dsig_blake3_force_impl("avx512") == 0;
    assert_int_equal(have512, (f & DSIG_CPU_AVX512) != 0);
    if (f & DSIG_CPU_AVX512) {
        assert_true(f & DSIG_CPU_AVX2);
        assert_non_null(strstr(dsig_cpu_describe(), "avx512"));
    } else {
        assert_null(strstr(dsig_cpu_describe(), "avx512"));
    }
    const char *off = getenv("DSIG_CPU_DISABLE");
    if (off && (strstr(off, "avx2") || strstr(off, "avx512")))
        assert_false(f & DSIG_CPU_AVX512);
    assert_int_equal(dsig_blake3_force_impl("avx1024"), -1);
    assert_int_equal(dsig_blake3_force_impl(best), 0);
    printf("    blake3 default back-end: %s (cpu: %s)\n", detected, dsig_cpu_describe());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_impl_name),     cmocka_unit_test(test_vectors_portable),
        cmocka_unit_test(test_vectors_sse41), cmocka_unit_test(test_vectors_avx2),
        cmocka_unit_test(test_vectors_avx512),
        cmocka_unit_test(test_long_inputs),   cmocka_unit_test(test_hash_block),
        cmocka_unit_test(test_hash64_many),   cmocka_unit_test(test_hash_many_chunks),
        cmocka_unit_test(test_long_xof),      cmocka_unit_test(test_xof_high_counter),
        cmocka_unit_test(test_split_update),  cmocka_unit_test(test_stream_updates),
        cmocka_unit_test(test_stream_long),   cmocka_unit_test(test_stream_batch_edges),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
