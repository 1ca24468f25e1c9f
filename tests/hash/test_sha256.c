/*
 * SHA-256 compression (src/hash/sha256*.c): the FIPS 180-4 / NIST example messages ("abc", the
 * 448-bit message, one million 'a'), and a differential test against OpenSSL's SHA256() for every
 * length 0..300 and random long inputs, with each back-end (portable, SHA-NI where present, dispatch).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "core/cpu.h"
#include "hash/sha256.h"
#include "hash/sha256_impl.h"
#include "testutil.h"

/* One compression back-end as the tests see it: every table of the dispatcher's list that has a
 * one-message compression (so a new kernel listed in sha256_dispatch.c is tested here with no change),
 * then the dispatched function itself. */
struct backend {
    const char *name;
    dsig_sha256_compress_fn fn;
    unsigned needs; /* DSIG_CPU_* */
};

static struct backend backends[8];
static size_t n_backends;
#define N_BACKENDS n_backends

static int collect_backends(void **state)
{
    (void)state;
    size_t n;
    const dsig_sha256_backend *const *list = dsig_sha256_backends(&n);
    n_backends = 0;
    for (size_t i = 0; i < n; i++)
        if (list[i]->compress)
            backends[n_backends++] = (struct backend){list[i]->name, list[i]->compress, list[i]->needs};
    backends[n_backends++] = (struct backend){"dispatch", dsig_sha256_compress, 0};
    return 0;
}

/* Whether back-end b can run here (the dispatcher's rule, so DSIG_CPU_DISABLE applies). */
static int usable(const struct backend *b)
{
    return dsig_cpu_usable(b->needs);
}

/* Hex of a 32-byte digest into a 65-byte buffer. */
static void hex32(char out[65], const uint8_t d[32])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[64] = '\0';
}

/* @spec FIPS 180-4 and NIST's SHA-256 examples (csrc.nist.gov "SHA256.pdf" / FIPS 180-2 Appendix B). */
static void test_sha256_nist_examples(void **state)
{
    (void)state;
    static const char msg448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    size_t mlen = 1000000;
    char *million = malloc(mlen);
    assert_non_null(million);
    memset(million, 'a', mlen);
    const struct {
        const void *msg;
        size_t len;
        const char *digest;
    } ex[] = {
        {"abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {msg448, 56, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {million, mlen, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
        {"", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    };
    for (size_t k = 0; k < N_BACKENDS; k++) {
        if (!usable(&backends[k]))
            continue;
        for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
            uint8_t d[32];
            char h[65];
            dsig_sha256_with(backends[k].fn, d, ex[i].msg, ex[i].len);
            hex32(h, d);
            if (strcmp(h, ex[i].digest) != 0)
                fail_msg("%s: example %zu: got %s want %s", backends[k].name, i, h, ex[i].digest);
        }
    }
    /* The public one-shot too. */
    uint8_t d[32];
    char h[65];
    dsig_sha256(d, "abc", 3);
    hex32(h, d);
    assert_string_equal(h, ex[0].digest);
    free(million);
}

/* Every length 0..300 (all padding cases: 55/56/63/64 boundaries) and random long inputs, against
 * OpenSSL. */
static void test_sha256_vs_openssl(void **state)
{
    (void)state;
    size_t cap = 200000;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    tu_fill(buf, cap, 256);
    for (size_t k = 0; k < N_BACKENDS; k++) {
        if (!usable(&backends[k]))
            continue;
        for (size_t len = 0; len <= 300; len++) {
            uint8_t a[32], b[32];
            dsig_sha256_with(backends[k].fn, a, buf + 1, len); /* +1: unaligned input */
            SHA256(buf + 1, len, b);
            if (memcmp(a, b, 32) != 0)
                fail_msg("%s: differs from OpenSSL at length %zu", backends[k].name, len);
        }
        for (int r = 0; r < 20; r++) {
            uint8_t seed[8], a[32], b[32];
            tu_fill(seed, sizeof seed, 300 + (uint64_t)r);
            size_t len = (((size_t)seed[0] << 16) | ((size_t)seed[1] << 8) | seed[2]) % (cap - 8);
            size_t off = seed[3] % 8;
            dsig_sha256_with(backends[k].fn, a, buf + off, len);
            SHA256(buf + off, len, b);
            if (memcmp(a, b, 32) != 0)
                fail_msg("%s: differs from OpenSSL at length %zu offset %zu", backends[k].name, len, off);
        }
    }
    free(buf);
}

/* Compression of n blocks at once equals n single-block calls; back-ends agree on random states. */
static void test_sha256_compress_blocks(void **state)
{
    (void)state;
    uint8_t blocks[64 * 9];
    tu_fill(blocks, sizeof blocks, 77);
    for (int r = 0; r < 200; r++) {
        uint32_t ref[8], st[8];
        uint8_t seed[32];
        tu_fill(seed, sizeof seed, 500 + (uint64_t)r);
        for (int i = 0; i < 8; i++)
            ref[i] = (uint32_t)seed[4 * i] << 24 | (uint32_t)seed[4 * i + 1] << 16 |
                     (uint32_t)seed[4 * i + 2] << 8 | seed[4 * i + 3];
        memcpy(st, ref, sizeof st);
        size_t n = 1 + (size_t)r % 9;
        for (size_t b = 0; b < n; b++)
            dsig_sha256_compress_portable(ref, blocks + 64 * b, 1);
        for (size_t k = 0; k < N_BACKENDS; k++) {
            if (!usable(&backends[k]))
                continue;
            uint32_t s2[8];
            memcpy(s2, st, sizeof s2);
            backends[k].fn(s2, blocks, n);
            if (memcmp(s2, ref, sizeof ref) != 0)
                fail_msg("%s: %zu-block compression differs", backends[k].name, n);
        }
        blocks[r % sizeof blocks] ^= (uint8_t)(r + 1);
    }
    /* n = 0 leaves the state alone. */
    uint32_t st[8];
    memcpy(st, dsig_sha256_iv, sizeof st);
    dsig_sha256_compress(st, blocks, 0);
    assert_memory_equal(st, dsig_sha256_iv, sizeof st);
}

/* store() is the big-endian digest encoding: IV stored = its hex. */
static void test_sha256_store(void **state)
{
    (void)state;
    uint8_t out[32];
    char h[65];
    dsig_sha256_store(out, dsig_sha256_iv);
    hex32(h, out);
    assert_string_equal(h, "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19");
}

/* The reported back-end matches the CPU features (and DSIG_CPU_DISABLE). */
static void test_sha256_impl_name(void **state)
{
    (void)state;
    assert_string_equal(dsig_sha256_impl(), dsig_sha256_have_shani() ? "shani" : "portable");
    const char *off = getenv("DSIG_CPU_DISABLE");
    if (off && strstr(off, "all"))
        assert_string_equal(dsig_sha256_impl(), "portable");
    print_message("sha256 back-end: %s (cpu: %s)\n", dsig_sha256_impl(), dsig_cpu_describe());
}

/* Every usable wide kernel of the list (and the dispatched one) equals one-at-a-time portable
 * compressions, from a shared initial state and from per-lane states, on random blocks. */
static void test_sha256_wide_kernels(void **state)
{
    (void)state;
    size_t n;
    const dsig_sha256_backend *const *list = dsig_sha256_backends(&n);
    uint8_t blocks[DSIG_SHA256_MAX_LANES][64];
    const uint8_t *bp[DSIG_SHA256_MAX_LANES];
    uint32_t init[8], ref[DSIG_SHA256_MAX_LANES][8], got[DSIG_SHA256_MAX_LANES][8];
    for (size_t i = 0; i <= n; i++) {
        const char *name = i < n ? list[i]->name : "dispatch";
        unsigned lanes = i < n ? list[i]->lanes : dsig_sha256_simd_degree();
        dsig_sha256_lanes_from_fn from = i < n ? list[i]->lanes_from : dsig_sha256_ops_get()->lanes_from;
        dsig_sha256_lanes_fn cont = i < n ? list[i]->lanes_cont : dsig_sha256_ops_get()->lanes_cont;
        if (!lanes || (i < n && !dsig_cpu_usable(list[i]->needs)))
            continue;
        assert_true(lanes <= DSIG_SHA256_MAX_LANES);
        for (uint64_t seed = 1; seed <= 20; seed++) {
            tu_fill(blocks[0], sizeof blocks, seed);
            tu_fill((uint8_t *)init, sizeof init, seed + 100);
            for (unsigned l = 0; l < lanes; l++) {
                bp[l] = blocks[l];
                memcpy(ref[l], init, sizeof init);
                dsig_sha256_compress_portable(ref[l], blocks[l], 1);
            }
            from(got, init, bp);
            for (unsigned l = 0; l < lanes; l++)
                if (memcmp(got[l], ref[l], sizeof ref[l]) != 0)
                    fail_msg("%s: lanes_from lane %u differs (seed %llu)", name, l, (unsigned long long)seed);
            for (unsigned l = 0; l < lanes; l++)
                dsig_sha256_compress_portable(ref[l], blocks[l], 1);
            cont(got, bp);
            for (unsigned l = 0; l < lanes; l++)
                if (memcmp(got[l], ref[l], sizeof ref[l]) != 0)
                    fail_msg("%s: lanes_cont lane %u differs (seed %llu)", name, l, (unsigned long long)seed);
        }
        print_message("sha256 wide kernel %s x%u: ok\n", name, lanes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_nist_examples), cmocka_unit_test(test_sha256_vs_openssl),
        cmocka_unit_test(test_sha256_compress_blocks), cmocka_unit_test(test_sha256_store),
        cmocka_unit_test(test_sha256_impl_name), cmocka_unit_test(test_sha256_wide_kernels),
    };
    return cmocka_run_group_tests(tests, collect_backends, NULL);
}
