/*
 * Keccak / SHA-3 / SHAKE (src/hash/keccak*.c): FIPS 202 example answers, NIST ACVP HMAC-SHA3 known
 * answers (official vectors, through an HMAC built here on our SHA-3), differential tests against
 * OpenSSL EVP for every input length 0..600 and several output lengths, absorb/squeeze split at every
 * boundary, and the x4 interface and permutation against four scalar ones on every back-end this CPU
 * can run. CTest also runs this binary with DSIG_CPU_DISABLE=avx2 and =avx512 so the dispatcher's
 * portable and AVX2 choices are exercised end to end.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/bytes.h"
#include "core/cpu.h"
#include "hash/keccak.h"
#include "hash/keccak_impl.h"
#include "testutil.h"

#define SHA3_224_RATE 144

/* One-shot generic sponge through the streaming API. */
static void sponge(unsigned rate, uint8_t ds, uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen)
{
    dsig_keccak k;
    dsig_keccak_init(&k, rate);
    dsig_keccak_absorb(&k, in, inlen);
    dsig_keccak_finalize(&k, ds);
    dsig_keccak_squeeze(&k, out, outlen);
    dsig_keccak_wipe(&k);
}

/* OpenSSL EVP digest or XOF of `in` into out[outlen] (the MD is fetched by the caller, once). */
static void evp_hash(const EVP_MD *md, int xof, uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    assert_non_null(c);
    assert_int_equal(EVP_DigestInit_ex(c, md, NULL), 1);
    assert_int_equal(EVP_DigestUpdate(c, in, inlen), 1);
    if (xof) {
        assert_int_equal(EVP_DigestFinalXOF(c, out, outlen), 1);
    } else {
        unsigned int n = 0;
        assert_int_equal(EVP_DigestFinal_ex(c, out, &n), 1);
        assert_int_equal(n, outlen);
    }
    EVP_MD_CTX_free(c);
}

/* Hex-compare helper that names the case on failure. */
static void expect_hex(const uint8_t *got, const char *want_hex, const char *what)
{
    size_t n;
    uint8_t *want = tu_hex(want_hex, &n);
    if (memcmp(got, want, n) != 0)
        fail_msg("%s: output differs from the known answer", what);
    free(want);
}

/* @spec FIPS 202 §6.1/§6.2: NIST's published examples (empty message, "abc", 200 bytes of 0xA3). */
static void test_keccak_fips202_examples(void **state)
{
    (void)state;
    uint8_t a3[200], out[64];
    memset(a3, 0xa3, sizeof a3);
    const uint8_t *abc = (const uint8_t *)"abc";

    dsig_sha3_256(out, NULL, 0);
    expect_hex(out, "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a", "SHA3-256('')");
    dsig_sha3_256(out, abc, 3);
    expect_hex(out, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532", "SHA3-256('abc')");
    dsig_sha3_256(out, a3, sizeof a3);
    expect_hex(out, "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787", "SHA3-256(0xA3x200)");
    sponge(SHA3_224_RATE, DSIG_KECCAK_DS_SHA3, out, 28, NULL, 0);
    expect_hex(out, "6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7", "SHA3-224('')");
    dsig_sha3_384(out, NULL, 0);
    expect_hex(out,
               "0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61"
               "995e71bbee983a2ac3713831264adb47fb6bd1e058d5f004",
               "SHA3-384('')");
    dsig_sha3_512(out, NULL, 0);
    expect_hex(out,
               "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a6"
               "15b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26",
               "SHA3-512('')");
    dsig_sha3_512(out, abc, 3);
    expect_hex(out,
               "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e"
               "10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
               "SHA3-512('abc')");
    dsig_shake128(out, 32, NULL, 0);
    expect_hex(out, "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26", "SHAKE128('')");
    dsig_shake256(out, 32, NULL, 0);
    expect_hex(out, "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f", "SHAKE256('')");
    dsig_shake128(out, 32, a3, sizeof a3);
    expect_hex(out, "131ab8d2b594946b9c81333f9bb6e0ce75c3b93104fa3469d3917457385da037",
               "SHAKE128(0xA3x200)");
    dsig_shake256(out, 32, a3, sizeof a3);
    expect_hex(out, "cd8a920ed141aa0407a22d59288652e9d9f1a7ee0c1e7c1ca699424da84a904d",
               "SHAKE256(0xA3x200)");

    /* The permutation itself: Keccak-f[1600] of the all-zero state (Keccak team's intermediate values),
     * first and last lanes; and x4 of four zero states on every back-end. */
    uint64_t s[25] = {0};
    dsig_keccak_f1600(s);
    assert_true(s[0] == 0xF1258F7940E1DDE7ULL);
    assert_true(s[24] == 0xEAF1FF7B5CECA249ULL);
    uint64_t s4[100] __attribute__((aligned(32))) = {0};
    dsig_keccak_f1600_x4(s4);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 25; i++)
            assert_true(s4[4 * i + j] == s[i]);
}

/* HMAC (FIPS 198-1) over a SHA-3 sponge of `rate` bytes (the block size) and `dlen`-byte digests. */
static void hmac_sha3(unsigned rate, size_t dlen, const uint8_t *key, size_t klen, const uint8_t *msg,
                      size_t mlen, uint8_t *mac)
{
    uint8_t k0[SHA3_224_RATE] = {0}, pad[SHA3_224_RATE], inner[64];
    if (klen > rate)
        sponge(rate, DSIG_KECCAK_DS_SHA3, k0, dlen, key, klen);
    else if (klen)
        memcpy(k0, key, klen);
    dsig_keccak k;
    for (unsigned i = 0; i < rate; i++)
        pad[i] = k0[i] ^ 0x36;
    dsig_keccak_init(&k, rate);
    dsig_keccak_absorb(&k, pad, rate);
    dsig_keccak_absorb(&k, msg, mlen);
    dsig_keccak_finalize(&k, DSIG_KECCAK_DS_SHA3);
    dsig_keccak_squeeze(&k, inner, dlen);
    for (unsigned i = 0; i < rate; i++)
        pad[i] = k0[i] ^ 0x5c;
    dsig_keccak_init(&k, rate);
    dsig_keccak_absorb(&k, pad, rate);
    dsig_keccak_absorb(&k, inner, dlen);
    dsig_keccak_finalize(&k, DSIG_KECCAK_DS_SHA3);
    dsig_keccak_squeeze(&k, mac, dlen);
}

/* NIST ACVP HMAC-SHA3-224/256/384/512 (revision 2.0: varied key, message and tag lengths). */
static void test_keccak_acvp_hmac_sha3(void **state)
{
    (void)state;
    static const struct {
        const char *dir;
        unsigned rate;
        size_t dlen;
    } sets[] = {
        {"mac/acvp/HMAC-SHA3-224-2.0", SHA3_224_RATE, 28},
        {"mac/acvp/HMAC-SHA3-256-2.0", DSIG_SHA3_256_RATE, 32},
        {"mac/acvp/HMAC-SHA3-384-2.0", DSIG_SHA3_384_RATE, 48},
        {"mac/acvp/HMAC-SHA3-512-2.0", DSIG_SHA3_512_RATE, 64},
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        char path[256];
        snprintf(path, sizeof path, "%s/prompt.json", sets[s].dir);
        json_t *prompt = tu_load_json(path);
        snprintf(path, sizeof path, "%s/expectedResults.json", sets[s].dir);
        json_t *expect = tu_load_json(path);
        size_t ran = 0, gi, ti;
        json_t *g, *t;
        json_array_foreach(json_object_get(prompt, "testGroups"), gi, g)
        {
            json_t *eg = json_array_get(json_object_get(expect, "testGroups"), gi);
            assert_non_null(eg);
            json_array_foreach(json_object_get(g, "tests"), ti, t)
            {
                json_t *et = json_array_get(json_object_get(eg, "tests"), ti);
                assert_non_null(et);
                assert_int_equal(json_integer_value(json_object_get(t, "tcId")),
                                 json_integer_value(json_object_get(et, "tcId")));
                size_t klen, mlen, elen;
                uint8_t *key = tu_hex(tu_str(t, "key"), &klen);
                uint8_t *msg = tu_hex(tu_str(t, "msg"), &mlen);
                uint8_t *want = tu_hex(tu_str(et, "mac"), &elen);
                assert_int_equal(json_integer_value(json_object_get(t, "macLen")), 8 * elen);
                assert_int_equal(json_integer_value(json_object_get(t, "msgLen")), 8 * mlen);
                uint8_t mac[64];
                hmac_sha3(sets[s].rate, sets[s].dlen, key, klen, msg, mlen, mac);
                if (elen > sets[s].dlen || memcmp(mac, want, elen) != 0)
                    fail_msg("%s tcId %lld: MAC differs", sets[s].dir,
                             (long long)json_integer_value(json_object_get(t, "tcId")));
                ran++;
                free(key);
                free(msg);
                free(want);
            }
        }
        assert_true(ran >= 100);
        json_decref(prompt);
        json_decref(expect);
    }
}

/* Every input length 0..600 (all padding positions, one to four blocks at every rate) and several
 * output lengths (inside, at and across block boundaries), against OpenSSL EVP. */
static void test_keccak_vs_openssl(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        unsigned rate;
        uint8_t ds;
        int xof;
        size_t dlen;
    } algs[] = {
        {"SHA3-224", SHA3_224_RATE, DSIG_KECCAK_DS_SHA3, 0, 28},
        {"SHA3-256", DSIG_SHA3_256_RATE, DSIG_KECCAK_DS_SHA3, 0, 32},
        {"SHA3-384", DSIG_SHA3_384_RATE, DSIG_KECCAK_DS_SHA3, 0, 48},
        {"SHA3-512", DSIG_SHA3_512_RATE, DSIG_KECCAK_DS_SHA3, 0, 64},
        {"SHAKE128", DSIG_SHAKE128_RATE, DSIG_KECCAK_DS_SHAKE, 1, 0},
        {"SHAKE256", DSIG_SHAKE256_RATE, DSIG_KECCAK_DS_SHAKE, 1, 0},
    };
    static const size_t outlens[] = {1, 7, 8, 31, 32, 64, 135, 136, 137, 168, 169, 337, 500};
    uint8_t in[601 + 1];
    uint8_t a[512], b[512];
    tu_fill(in, sizeof in, 202);
    for (size_t k = 0; k < sizeof algs / sizeof algs[0]; k++) {
        EVP_MD *md = EVP_MD_fetch(NULL, algs[k].name, NULL);
        assert_non_null(md);
        for (size_t len = 0; len <= 600; len++) {
            const uint8_t *m = in + 1 + (len & 1); /* odd and even alignments */
            if (!algs[k].xof) {
                size_t d = algs[k].dlen;
                evp_hash(md, 0, b, d, m, len);
                sponge(algs[k].rate, algs[k].ds, a, d, m, len);
                if (memcmp(a, b, d) != 0)
                    fail_msg("%s: sponge differs from OpenSSL at length %zu", algs[k].name, len);
                /* The one-shot wrappers. */
                if (d == 32)
                    dsig_sha3_256(a, m, len);
                else if (d == 48)
                    dsig_sha3_384(a, m, len);
                else if (d == 64)
                    dsig_sha3_512(a, m, len);
                if (memcmp(a, b, d) != 0)
                    fail_msg("%s: one-shot differs from OpenSSL at length %zu", algs[k].name, len);
                continue;
            }
            for (size_t o = 0; o < sizeof outlens / sizeof outlens[0]; o++) {
                size_t d = outlens[o];
                evp_hash(md, 1, b, d, m, len);
                if (algs[k].rate == DSIG_SHAKE128_RATE)
                    dsig_shake128(a, d, m, len);
                else
                    dsig_shake256(a, d, m, len);
                if (memcmp(a, b, d) != 0)
                    fail_msg("%s: differs from OpenSSL at length %zu, output %zu", algs[k].name, len, d);
            }
        }
        EVP_MD_free(md);
    }
}

/* Absorb split at every point (and in three pieces, and one byte at a time) equals one absorb; squeeze
 * split at every point, byte by byte, and by whole blocks equals one squeeze. Every rate. */
static void test_keccak_split_absorb_squeeze(void **state)
{
    (void)state;
    static const unsigned rates[] = {DSIG_SHAKE128_RATE, SHA3_224_RATE, DSIG_SHAKE256_RATE,
                                     DSIG_SHA3_384_RATE, DSIG_SHA3_512_RATE};
    uint8_t in[2 * 168 + 20], ref[3 * 168 + 9], got[sizeof ref];
    tu_fill(in, sizeof in, 77);
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        unsigned rate = rates[r];
        size_t len = 2 * rate + 17, olen = 3 * rate + 9;
        sponge(rate, DSIG_KECCAK_DS_SHAKE, ref, olen, in, len);
        for (size_t i = 0; i <= len; i++) {
            dsig_keccak k;
            dsig_keccak_init(&k, rate);
            dsig_keccak_absorb(&k, in, i);
            dsig_keccak_absorb(&k, in + i, len - i);
            dsig_keccak_finalize(&k, DSIG_KECCAK_DS_SHAKE);
            dsig_keccak_squeeze(&k, got, olen);
            if (memcmp(got, ref, olen) != 0)
                fail_msg("rate %u: absorb split at %zu differs", rate, i);
            /* Three pieces: i, a few bytes, the rest (crosses a block edge inside the middle piece). */
            size_t j = i + (i * 7) % 23 < len ? i + (i * 7) % 23 : len;
            dsig_keccak_init(&k, rate);
            dsig_keccak_absorb(&k, in, i);
            dsig_keccak_absorb(&k, in + i, j - i);
            dsig_keccak_absorb(&k, in + j, len - j);
            dsig_keccak_finalize(&k, DSIG_KECCAK_DS_SHAKE);
            dsig_keccak_squeeze(&k, got, olen);
            if (memcmp(got, ref, olen) != 0)
                fail_msg("rate %u: absorb split at %zu,%zu differs", rate, i, j);
        }
        dsig_keccak k;
        dsig_keccak_init(&k, rate);
        for (size_t i = 0; i < len; i++)
            dsig_keccak_absorb(&k, in + i, 1);
        dsig_keccak_finalize(&k, DSIG_KECCAK_DS_SHAKE);
        for (size_t i = 0; i < olen; i++)
            dsig_keccak_squeeze(&k, got + i, 1);
        if (memcmp(got, ref, olen) != 0)
            fail_msg("rate %u: byte-at-a-time absorb/squeeze differs", rate);

        dsig_keccak base;
        dsig_keccak_init(&base, rate);
        dsig_keccak_absorb(&base, in, len);
        dsig_keccak_finalize(&base, DSIG_KECCAK_DS_SHAKE);
        for (size_t i = 0; i <= olen; i++) {
            k = base; /* copying a state forks the sponge */
            dsig_keccak_squeeze(&k, got, i);
            dsig_keccak_squeeze(&k, got + i, olen - i);
            if (memcmp(got, ref, olen) != 0)
                fail_msg("rate %u: squeeze split at %zu differs", rate, i);
        }
        /* Whole blocks, then a streamed tail. */
        k = base;
        dsig_keccak_squeezeblocks(&k, got, 2);
        dsig_keccak_squeeze(&k, got + 2 * rate, olen - 2 * rate);
        if (memcmp(got, ref, olen) != 0)
            fail_msg("rate %u: squeezeblocks + squeeze differs", rate);
        k = base;
        dsig_keccak_squeezeblocks(&k, got, 1);
        dsig_keccak_squeezeblocks(&k, got + rate, 2);
        if (memcmp(got, ref, 3 * rate) != 0)
            fail_msg("rate %u: squeezeblocks in two calls differs", rate);
        dsig_keccak_wipe(&k);
        static const dsig_keccak zero;
        assert_memory_equal(&k, &zero, sizeof k);
    }
}

/* Four random states: x4 back-end `fn` (chained 50 times) equals four scalar permutations. */
static void check_x4_perm(void (*fn)(uint64_t *), const char *name)
{
    uint64_t s4[100] __attribute__((aligned(32))), one[4][25];
    tu_fill((uint8_t *)s4, sizeof s4, 404);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 25; i++)
            one[j][i] = s4[4 * i + j];
    for (int it = 0; it < 50; it++) {
        fn(s4);
        for (int j = 0; j < 4; j++) {
            dsig_keccak_f1600_portable(one[j]);
            for (int i = 0; i < 25; i++)
                if (s4[4 * i + j] != one[j][i])
                    fail_msg("%s: x4 instance %d lane %d differs at iteration %d", name, j, i, it);
        }
    }
    /* Unaligned state (callers may pass any uint64_t[100]). */
    uint64_t *buf = malloc(101 * sizeof *buf);
    assert_non_null(buf);
    memset(buf, 0, 101 * sizeof *buf);
    uint64_t *u = (uint64_t *)((uint8_t *)buf + 8);
    fn(u);
    uint64_t z[25] = {0};
    dsig_keccak_f1600(z);
    for (int i = 0; i < 100; i++)
        assert_true(u[i] == z[i / 4]);
    free(buf);
}

/* Eight random states: x8 kernel `fn` (chained 20 times, from an unaligned copy too) equals eight
 * portable single-state permutations. */
static void check_x8_perm(void (*fn)(uint64_t *), const char *name)
{
    uint64_t *buf = malloc(201 * sizeof *buf);
    assert_non_null(buf);
    uint64_t *s8 = buf + 1; /* 8-byte aligned only: the kernels must not assume more */
    uint64_t one[8][25];
    tu_fill((uint8_t *)s8, 200 * sizeof *s8, 606);
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 25; i++)
            one[j][i] = s8[8 * i + j];
    for (int it = 0; it < 20; it++) {
        fn(s8);
        for (int j = 0; j < 8; j++) {
            dsig_keccak_f1600_portable(one[j]);
            for (int i = 0; i < 25; i++)
                if (s8[8 * i + j] != one[j][i])
                    fail_msg("%s: x8 instance %d lane %d differs at iteration %d", name, j, i, it);
        }
    }
    free(buf);
}

/* A random state: the single-state back-end `fn` (chained 200 times) equals the portable one. */
static void check_one_perm(void (*fn)(uint64_t *), const char *name)
{
    uint64_t s[25], ref[25];
    tu_fill((uint8_t *)s, sizeof s, 808);
    memcpy(ref, s, sizeof s);
    for (int it = 0; it < 200; it++) {
        fn(s);
        dsig_keccak_f1600_portable(ref);
        if (memcmp(s, ref, sizeof s) != 0)
            fail_msg("%s: single state differs from the portable permutation at iteration %d", name, it);
    }
}

/* The adapters for check_x4_perm and check_one_perm. */
static void one_dispatch(uint64_t *s) { dsig_keccak_f1600(s); }
static void x8_dispatch(uint64_t *s) { dsig_keccak_f1600_x8(s); }
static void x8_portable(uint64_t *s) { dsig_keccak_f1600_x8_portable(s); }
static void x4_dispatch(uint64_t *s) { dsig_keccak_f1600_x4(s); }
static void x4_portable(uint64_t *s) { dsig_keccak_f1600_x4_portable(s); }
#ifdef DSIG_KECCAK_X86
static void x4_avx2(uint64_t *s) { dsig_keccak_f1600_x4_avx2(s); }
static void x4_avx512(uint64_t *s) { dsig_keccak_f1600_x4_avx512(s); }
static void one_avx512(uint64_t *s) { dsig_keccak_f1600_avx512(s); }
static void x8_avx512(uint64_t *s) { dsig_keccak_f1600_x8_avx512(s); }
#endif

/* The dispatcher picks what the CPU (minus DSIG_CPU_DISABLE) allows; every x4 back-end agrees with
 * four scalar permutations. */
/* dsig_keccak_squeeze_u64 is the next 8 output bytes as a little-endian word, whether the position
 * is lane-aligned (read from the state) or not (byte path), mixed with ordinary squeezes, across block
 * edges, for every rate the library uses. */
static void test_keccak_squeeze_u64(void **state)
{
    (void)state;
    static const unsigned rates[] = {DSIG_SHAKE128_RATE, SHA3_224_RATE, DSIG_SHAKE256_RATE,
                                     DSIG_SHA3_384_RATE, DSIG_SHA3_512_RATE};
    uint8_t in[40], ref[4 * 168];
    tu_fill(in, sizeof in, 31);
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        unsigned rate = rates[r];
        sponge(rate, DSIG_KECCAK_DS_SHAKE, ref, sizeof ref, in, sizeof in);
        for (unsigned skew = 0; skew < 8; skew++) {
            dsig_keccak k;
            dsig_keccak_init(&k, rate);
            dsig_keccak_absorb(&k, in, sizeof in);
            dsig_keccak_finalize(&k, DSIG_KECCAK_DS_SHAKE);
            uint8_t head[8];
            dsig_keccak_squeeze(&k, head, skew); /* skew 0: lane-aligned throughout */
            assert_memory_equal(head, ref, skew);
            size_t pos = skew;
            for (unsigned w = 0; pos + 8 <= sizeof ref; w++) {
                uint64_t want = dsig_load_le64(ref + pos);
                if (w % 5 == 4) { /* an ordinary squeeze in between keeps the alignment */
                    uint8_t b[8];
                    dsig_keccak_squeeze(&k, b, 8);
                    assert_memory_equal(b, ref + pos, 8);
                } else if (dsig_keccak_squeeze_u64(&k) != want) {
                    fail_msg("rate %u skew %u: word at byte %zu differs", rate, skew, pos);
                }
                pos += 8;
            }
        }
    }
}

static void test_keccak_x4_backends(void **state)
{
    (void)state;
    int avx2 = 0, avx512 = 0;
#ifdef DSIG_KECCAK_X86
    avx2 = (dsig_cpu_features() & DSIG_CPU_AVX2) != 0;
    avx512 = (dsig_cpu_features() & DSIG_CPU_AVX512) != 0;
#endif
    assert_string_equal(dsig_keccak_backend(), avx512 ? "avx512" : avx2 ? "avx2" : "portable");
    const char *dis = getenv("DSIG_CPU_DISABLE");
    if (dis && (strstr(dis, "avx2") || strstr(dis, "all")))
        assert_string_equal(dsig_keccak_backend(), "portable");
    if (dis && strstr(dis, "avx512") && avx2)
        assert_string_equal(dsig_keccak_backend(), "avx2");
    print_message("keccak x4 back-end: %s\n", dsig_keccak_backend());
    check_x4_perm(x4_dispatch, "dispatch");
    check_x4_perm(x4_portable, "portable");
#ifdef DSIG_KECCAK_X86
    if (avx2)
        check_x4_perm(x4_avx2, "avx2");
    if (avx512) {
        check_x4_perm(x4_avx512, "avx512");
        check_one_perm(one_avx512, "avx512 single state");
        check_x8_perm(x8_avx512, "avx512 x8");
    }
#endif
    check_one_perm(one_dispatch, "dispatch single state");
    check_x8_perm(x8_dispatch, "dispatch x8");
    check_x8_perm(x8_portable, "portable x8");
    assert_int_equal(dsig_keccak_x8_simd_degree(), avx512 ? 8 : 1);
}

/* x8 absorb_once + squeezeblocks equals eight scalar sponges, for SHAKE128/256 and a SHA-3 rate,
 * every input length 0 .. 2 * rate + 9 and 1..3 output blocks. */
static void test_keccak_x8_sponge(void **state)
{
    (void)state;
    static const struct {
        unsigned rate;
        uint8_t ds;
    } cfg[] = {{DSIG_SHAKE128_RATE, DSIG_KECCAK_DS_SHAKE},
               {DSIG_SHAKE256_RATE, DSIG_KECCAK_DS_SHAKE},
               {DSIG_SHA3_512_RATE, DSIG_KECCAK_DS_SHA3}};
    static uint8_t buf[8][2 * 168 + 16], outs[8][3 * 168], ref[3 * 168];
    for (int j = 0; j < 8; j++)
        tu_fill(buf[j], sizeof buf[j], 700 + (uint64_t)j);
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        unsigned rate = cfg[c].rate;
        for (size_t len = 0; len <= 2 * rate + 9; len++) {
            size_t nb = 1 + len % 3;
            const uint8_t *in[8];
            uint8_t *out[8];
            for (int j = 0; j < 8; j++) {
                in[j] = buf[j] + (j + len) % 7; /* unaligned inputs */
                out[j] = outs[j];
            }
            dsig_keccak_x8 k8;
            dsig_keccak_x8_absorb_once(&k8, rate, cfg[c].ds, in, len);
            dsig_keccak_x8_squeezeblocks(&k8, out, 1);
            for (int j = 0; j < 8; j++)
                out[j] += rate;
            dsig_keccak_x8_squeezeblocks(&k8, out, nb - 1);
            dsig_keccak_x8_wipe(&k8);
            for (int j = 0; j < 8; j++) {
                sponge(rate, cfg[c].ds, ref, nb * rate, in[j], len);
                if (memcmp(outs[j], ref, nb * rate) != 0)
                    fail_msg("x8 rate %u length %zu instance %d differs from the scalar sponge", rate, len,
                             j);
            }
        }
    }
}

/* x4 absorb_once + squeezeblocks equals four scalar sponges, for SHAKE128/256 and SHA-3 domain bytes,
 * every input length 0 .. 2 * rate + 9 and 1..3 output blocks. */
static void test_keccak_x4_sponge(void **state)
{
    (void)state;
    static const struct {
        unsigned rate;
        uint8_t ds;
    } cfg[] = {{DSIG_SHAKE128_RATE, DSIG_KECCAK_DS_SHAKE},
               {DSIG_SHAKE256_RATE, DSIG_KECCAK_DS_SHAKE},
               {DSIG_SHA3_512_RATE, DSIG_KECCAK_DS_SHA3}};
    uint8_t buf[4][2 * 168 + 16], outs[4][3 * 168], ref[3 * 168];
    for (int j = 0; j < 4; j++)
        tu_fill(buf[j], sizeof buf[j], 500 + (uint64_t)j);
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        unsigned rate = cfg[c].rate;
        for (size_t len = 0; len <= 2 * rate + 9; len++) {
            size_t nb = 1 + len % 3;
            const uint8_t *in[4] = {buf[0] + (len & 1), buf[1], buf[2] + 3, buf[3] + 5};
            uint8_t *out[4] = {outs[0], outs[1], outs[2], outs[3]};
            dsig_keccak_x4 k4;
            dsig_keccak_x4_absorb_once(&k4, rate, cfg[c].ds, in, len);
            dsig_keccak_x4_squeezeblocks(&k4, out, 1);
            for (int j = 0; j < 4; j++)
                out[j] += rate;
            dsig_keccak_x4_squeezeblocks(&k4, out, nb - 1);
            dsig_keccak_x4_wipe(&k4);
            for (int j = 0; j < 4; j++) {
                sponge(rate, cfg[c].ds, ref, nb * rate, in[j], len);
                if (memcmp(outs[j], ref, nb * rate) != 0)
                    fail_msg("x4 rate %u length %zu instance %d differs from the scalar sponge", rate, len,
                             j);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keccak_fips202_examples),
        cmocka_unit_test(test_keccak_acvp_hmac_sha3),
        cmocka_unit_test(test_keccak_vs_openssl),
        cmocka_unit_test(test_keccak_split_absorb_squeeze),
        cmocka_unit_test(test_keccak_squeeze_u64),
        cmocka_unit_test(test_keccak_x4_backends),
        cmocka_unit_test(test_keccak_x4_sponge),
        cmocka_unit_test(test_keccak_x8_sponge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
