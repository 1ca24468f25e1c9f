/*
 * Multi-lane SHA-2 compressions (src/hash/sha256_x8_avx2.c, sha512_x4_avx2.c) and the portable
 * SHA-512 (src/hash/sha512.c):
 *   - the FIPS 180-4 example messages ("abc", "" and the 448-bit message for SHA-256, "abc" and ""
 *     for SHA-512) as one padded block in every lane, through the lane kernels;
 *   - differential: the 8-lane / 4-lane kernels (and the 2-lane interleaved SHA-NI one) equal the scalar compression on every lane for
 *     random states and blocks (per-lane and shared initial states, every lane distinct);
 *   - the dispatching entry points (which honour DSIG_CPU_DISABLE) equal the scalar compression too;
 *   - the portable SHA-512 equals OpenSSL's SHA512() for every length 0..300 and random long inputs.
 * The SLH-DSA suites (tests/slhdsa, *_x8 / *_portable entries) prove the kernels again against the
 * ACVP known answers, since every F/H call of the SHA2 sets runs through them.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "core/cpu.h"
#include "hash/sha256.h"
#include "hash/sha256_impl.h"
#include "hash/sha512.h"
#include "testutil.h"

#define ROUNDS 300

/* One padded single block of a message shorter than one block (SHA-256: len < 56, 64-bit length). */
static void pad256(uint8_t blk[64], const void *msg, size_t len)
{
    memset(blk, 0, 64);
    memcpy(blk, msg, len);
    blk[len] = 0x80;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        blk[63 - i] = (uint8_t)(bits >> (8 * i));
}

/* The same for SHA-512 (len < 112, 128-bit length). */
static void pad512(uint8_t blk[128], const void *msg, size_t len)
{
    memset(blk, 0, 128);
    memcpy(blk, msg, len);
    blk[len] = 0x80;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        blk[127 - i] = (uint8_t)(bits >> (8 * i));
}

/* Random 32/64-bit words from tu_fill. */
static void fill_words(void *w, size_t bytes, uint64_t seed)
{
    tu_fill(w, bytes, seed);
}

/* @spec FIPS 180-4 / NIST SHA-256 examples through every lane of the 8-lane kernel. */
static void test_sha256_x8_examples(void **state)
{
    (void)state;
    static const char msg448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    const struct {
        const char *msg;
        const char *hex;
    } ex[2] = {
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    };
    uint8_t blk[8][64];
    const uint8_t *bp[8];
    uint32_t out[8][8];
    /* Lanes alternate "abc" and "" so a lane mix-up shows. */
    for (int l = 0; l < 8; l++) {
        pad256(blk[l], ex[l & 1].msg, strlen(ex[l & 1].msg));
        bp[l] = blk[l];
    }
    dsig_sha256_compress_x8_from(out, dsig_sha256_iv, bp);
    for (int l = 0; l < 8; l++) {
        uint8_t d[32];
        size_t dl;
        uint8_t *want = tu_hex(ex[l & 1].hex, &dl);
        dsig_sha256_store(d, out[l]);
        assert_memory_equal(d, want, 32);
        free(want);
    }
    /* The 448-bit message needs two blocks (digest 248d6a61…, compared through OpenSSL): the
     * per-lane-state kernel continues from the lane states of the first. */
    uint8_t two[128];
    memset(two, 0, sizeof two);
    memcpy(two, msg448, 56);
    two[56] = 0x80;
    two[126] = (56 * 8) >> 8;
    two[127] = (uint8_t)(56 * 8);
    for (int l = 0; l < 8; l++)
        bp[l] = two;
    dsig_sha256_compress_x8_from(out, dsig_sha256_iv, bp);
    for (int l = 0; l < 8; l++)
        bp[l] = two + 64;
    dsig_sha256_compress_x8(out, bp);
    uint8_t want[32], d[32];
    SHA256((const unsigned char *)msg448, 56, want);
    for (int l = 0; l < 8; l++) {
        dsig_sha256_store(d, out[l]);
        assert_memory_equal(d, want, 32);
    }
}

/* @spec FIPS 180-4 / NIST SHA-512 examples ("abc", "") through every lane of the 4-lane kernel. */
static void test_sha512_x4_examples(void **state)
{
    (void)state;
    static const char *const msgs[2] = {"abc", ""};
    static const char *const hex[2] = {
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
        "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
        "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
    };
    uint8_t blk[4][128];
    const uint8_t *bp[4];
    uint64_t out[4][8];
    for (int l = 0; l < 4; l++) {
        pad512(blk[l], msgs[l & 1], strlen(msgs[l & 1]));
        bp[l] = blk[l];
    }
    dsig_sha512_compress_x4_from(out, dsig_sha512_iv, bp);
    for (int l = 0; l < 4; l++) {
        uint8_t d[64];
        size_t dl;
        uint8_t *want = tu_hex(hex[l & 1], &dl);
        dsig_sha512_store(d, out[l]);
        assert_memory_equal(d, want, 64);
        free(want);
    }
    /* The scalar path's one-shot too. */
    for (int i = 0; i < 2; i++) {
        uint8_t d[64];
        size_t dl;
        uint8_t *want = tu_hex(hex[i], &dl);
        dsig_sha512(d, msgs[i], strlen(msgs[i]));
        assert_memory_equal(d, want, 64);
        free(want);
    }
}

/* 8 lanes vs the scalar compression: random per-lane states and blocks, and a shared state. */
static void test_sha256_x8_differential(void **state)
{
    (void)state;
    uint8_t blk[8][64];
    const uint8_t *bp[8];
    uint32_t st[8][8], ref[8][8], init[8], out[8][8];
    int avx2 = dsig_sha256_have_x8();
    print_message("sha256 x8: %s\n", avx2 ? "avx2" : "scalar fallback (avx2 disabled)");
    for (int r = 0; r < ROUNDS; r++) {
        fill_words(blk, sizeof blk, 1000 + (uint64_t)r);
        fill_words(st, sizeof st, 5000 + (uint64_t)r);
        fill_words(init, sizeof init, 9000 + (uint64_t)r);
        for (int l = 0; l < 8; l++)
            bp[l] = blk[7 - l]; /* lanes read blocks in reverse order: pointers are honoured */
        memcpy(ref, st, sizeof ref);
        for (int l = 0; l < 8; l++)
            dsig_sha256_compress_portable(ref[l], bp[l], 1);
#if defined(__x86_64__)
        if (avx2) {
            uint32_t v[8][8];
            memcpy(v, st, sizeof v);
            dsig_sha256_compress_x8_avx2(v, bp);
            assert_memory_equal(v, ref, sizeof ref);
        }
#endif
        dsig_sha256_compress_x8(st, bp);
        assert_memory_equal(st, ref, sizeof ref);

        for (int l = 0; l < 8; l++) {
            memcpy(ref[l], init, sizeof init);
            dsig_sha256_compress_portable(ref[l], bp[l], 1);
        }
#if defined(__x86_64__)
        if (avx2) {
            dsig_sha256_compress_x8_avx2_from(out, init, bp);
            assert_memory_equal(out, ref, sizeof ref);
        }
#endif
        memset(out, 0, sizeof out);
        dsig_sha256_compress_x8_from(out, init, bp);
        assert_memory_equal(out, ref, sizeof ref);
    }
    /* All lanes on the same block: every lane must give the same answer. */
    for (int l = 0; l < 8; l++)
        bp[l] = blk[0];
    dsig_sha256_compress_x8_from(out, dsig_sha256_iv, bp);
    for (int l = 1; l < 8; l++)
        assert_memory_equal(out[l], out[0], sizeof out[0]);
}

/* The 2-lane interleaved SHA-NI kernel vs the scalar compression (skipped without SHA-NI). */
static void test_sha256_x2_shani_differential(void **state)
{
    (void)state;
#if defined(__x86_64__)
    if (!dsig_sha256_have_shani()) {
        print_message("sha256 x2 shani: skipped (no SHA-NI or disabled)\n");
        return;
    }
    uint8_t blk[2][64];
    uint32_t init[8], out[2][8], ref[2][8];
    for (int r = 0; r < ROUNDS; r++) {
        fill_words(blk, sizeof blk, 3000 + (uint64_t)r);
        fill_words(init, sizeof init, 4000 + (uint64_t)r);
        const uint8_t *bp[2] = {blk[r & 1], blk[(r + 1) & 1]};
        for (int l = 0; l < 2; l++) {
            memcpy(ref[l], init, sizeof init);
            dsig_sha256_compress_portable(ref[l], bp[l], 1);
        }
        dsig_sha256_compress_x2_shani_from(out, init, bp);
        assert_memory_equal(out, ref, sizeof ref);
    }
    /* FIPS 180-4 "abc" on both lanes. */
    uint8_t abc[64], d[32];
    pad256(abc, "abc", 3);
    const uint8_t *bp[2] = {abc, abc};
    dsig_sha256_compress_x2_shani_from(out, dsig_sha256_iv, bp);
    size_t dl;
    uint8_t *want = tu_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", &dl);
    for (int l = 0; l < 2; l++) {
        dsig_sha256_store(d, out[l]);
        assert_memory_equal(d, want, 32);
    }
    free(want);
#endif
}

/* 4 lanes vs the scalar compression, likewise. */
static void test_sha512_x4_differential(void **state)
{
    (void)state;
    uint8_t blk[4][128];
    const uint8_t *bp[4];
    uint64_t st[4][8], ref[4][8], init[8], out[4][8];
    int avx2 = dsig_sha512_have_x4();
    print_message("sha512 x4: %s\n", avx2 ? "avx2" : "scalar fallback (avx2 disabled)");
    for (int r = 0; r < ROUNDS; r++) {
        fill_words(blk, sizeof blk, 2000 + (uint64_t)r);
        fill_words(st, sizeof st, 6000 + (uint64_t)r);
        fill_words(init, sizeof init, 8000 + (uint64_t)r);
        for (int l = 0; l < 4; l++)
            bp[l] = blk[(l + 1) & 3];
        memcpy(ref, st, sizeof ref);
        for (int l = 0; l < 4; l++)
            dsig_sha512_compress(ref[l], bp[l], 1);
#if defined(__x86_64__)
        if (avx2) {
            uint64_t v[4][8];
            memcpy(v, st, sizeof v);
            dsig_sha512_compress_x4_avx2(v, bp);
            assert_memory_equal(v, ref, sizeof ref);
        }
#endif
        dsig_sha512_compress_x4(st, bp);
        assert_memory_equal(st, ref, sizeof ref);

        for (int l = 0; l < 4; l++) {
            memcpy(ref[l], init, sizeof init);
            dsig_sha512_compress(ref[l], bp[l], 1);
        }
#if defined(__x86_64__)
        if (avx2) {
            dsig_sha512_compress_x4_avx2_from(out, init, bp);
            assert_memory_equal(out, ref, sizeof ref);
        }
#endif
        memset(out, 0, sizeof out);
        dsig_sha512_compress_x4_from(out, init, bp);
        assert_memory_equal(out, ref, sizeof ref);
    }
}

/* The portable SHA-512 (scalar reference of the lanes above) against OpenSSL for lengths 0..300 and
 * random long inputs (multi-block calls). */
static void test_sha512_vs_openssl(void **state)
{
    (void)state;
    size_t max = 5000;
    uint8_t *buf = malloc(max);
    assert_non_null(buf);
    tu_fill(buf, max, 77);
    uint8_t d[64], want[64];
    for (size_t len = 0; len <= 300; len++) {
        dsig_sha512(d, buf, len);
        SHA512(buf, len, want);
        if (memcmp(d, want, 64) != 0)
            fail_msg("sha512 length %zu differs from OpenSSL", len);
    }
    for (int r = 0; r < 20; r++) {
        size_t len = 300 + (size_t)(rand() % (int)(max - 300));
        tu_fill(buf, len, 100 + (uint64_t)r);
        dsig_sha512(d, buf, len);
        SHA512(buf, len, want);
        if (memcmp(d, want, 64) != 0)
            fail_msg("sha512 length %zu differs from OpenSSL", len);
    }
    free(buf);
}

/* The dispatch follows DSIG_CPU_DISABLE: avx2 disabled means no lane kernel. */
static void test_dispatch_honours_cpu_disable(void **state)
{
    (void)state;
    unsigned f = dsig_cpu_features();
    assert_int_equal(dsig_sha256_have_x8(), (f & DSIG_CPU_AVX2) != 0);
    assert_int_equal(dsig_sha512_have_x4(), (f & DSIG_CPU_AVX2) != 0);
    const char *off = getenv("DSIG_CPU_DISABLE");
    if (off != NULL && (strstr(off, "avx2") || strstr(off, "all"))) {
        assert_false(dsig_sha256_have_x8());
        assert_false(dsig_sha512_have_x4());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_x8_examples),
        cmocka_unit_test(test_sha512_x4_examples),
        cmocka_unit_test(test_sha256_x8_differential),
        cmocka_unit_test(test_sha256_x2_shani_differential),
        cmocka_unit_test(test_sha512_x4_differential),
        cmocka_unit_test(test_sha512_vs_openssl),
        cmocka_unit_test(test_dispatch_honours_cpu_disable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
