/*
 * Differential target: the portable and the SIMD back-ends of every hash written here (src/hash/) —
 * BLAKE3 (portable, SSE4.1, AVX2, AVX-512: the hasher in any chunking, keyed and derive-key modes, XOF
 * with seek, the many-message forms), SHA-256 (portable, SHA-NI, SHA-NI ×2, AVX2 ×8), SHA-512 (portable,
 * AVX2 ×4), Keccak-f[1600] (portable, AVX2 ×4, AVX-512 ×1/×4/×8; SHA-3 and SHAKE against OpenSSL
 * too) and Haraka v2 (portable, AES-NI, VAES). Back-ends this CPU lacks are skipped. The input is
 *
 *   byte 0   function (modulo 6): 0 BLAKE3 hasher, 1 BLAKE3 many, 2 SHA-256, 3 SHA-512, 4 Keccak, 5 Haraka
 *   rest     parameters and data, read in order as each function needs them (short inputs give zeros)
 *
 * Invariant (abort on violation): every back-end gives the same bytes as the portable one (and, for
 * SHA-2 and SHA-3 / SHAKE, as OpenSSL).
 */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "core/cpu.h"
#include "fuzz_common.h"
#include "hash/blake3.h"
#include "hash/blake3_impl.h"
#include "hash/haraka.h"
#include "hash/haraka_impl.h"
#include "hash/keccak.h"
#include "hash/keccak_impl.h"
#include "hash/sha256.h"
#include "hash/sha256_impl.h"
#include "hash/sha512.h"

#define FH_MAX_INPUT 16384u

static const char *const b3_backends[] = {"portable", "sse41", "avx2", "avx512"};
#define N_B3 (sizeof b3_backends / sizeof b3_backends[0])

/* The back-end chosen at start, restored after each input. */
static const char *b3_default;

static void same(const void *a, const void *b, size_t n, const char *what, const char *backend)
{
    FUZZ_CHECK(memcmp(a, b, n) == 0, "%s: the %s back-end differs from the reference", what, backend);
}

/* ---- BLAKE3 ---------------------------------------------------------------------------------------- */

static int b3_update(void *h, const uint8_t *p, size_t n)
{
    dsig_blake3_update(h, p, n);
    return 0;
}

static void fuzz_b3_hasher(fuzz_in *in)
{
    const unsigned mode = fuzz_u8(in) % 3, split = fuzz_u8(in);
    size_t outlen = fuzz_u16(in) % 2049, seek = (size_t)fuzz_u8(in) * 61, kl, ml;
    const uint8_t *key = fuzz_take(in, 32, &kl);
    uint8_t k[32] = {0};
    memcpy(k, key, kl);
    char ctx[33] = {0};
    memcpy(ctx, key, kl);
    const uint8_t *msg = fuzz_take(in, in->n, &ml);
    static uint8_t ref[2048], out[2048];
    for (size_t b = 0; b < N_B3; b++) {
        if (dsig_blake3_force_impl(b3_backends[b]) != 0)
            continue;
        dsig_blake3_hasher h;
        if (mode == 0)
            dsig_blake3_init(&h);
        else if (mode == 1)
            dsig_blake3_init_keyed(&h, k);
        else
            dsig_blake3_init_derive_key(&h, ctx);
        fuzz_feed(b3_update, &h, msg, ml, split);
        dsig_blake3_finalize_seek(&h, seek, b ? out : ref, outlen);
        if (b)
            same(ref, out, outlen, "BLAKE3 hasher", b3_backends[b]);
        if (mode == 0) {
            dsig_blake3(msg, ml, out, outlen);
            if (!seek)
                same(ref, out, outlen, "BLAKE3 one-shot", b3_backends[b]);
        }
        if (mode < 2 && ml <= 64 && !seek && outlen <= 64) {
            dsig_blake3_hash_block(mode ? k : NULL, msg, ml, out, outlen);
            same(ref, out, outlen, "BLAKE3 single block", b3_backends[b]);
        }
    }
}

static void fuzz_b3_many(fuzz_in *in)
{
    const int keyed = fuzz_u8(in) & 1;
    const size_t n = 1 + fuzz_u8(in) % 40, len = fuzz_u16(in) % 1025;
    size_t kl, dl;
    const uint8_t *key = fuzz_take(in, 32, &kl);
    uint8_t k[32] = {0};
    memcpy(k, key, kl);
    const uint8_t *d = fuzz_take(in, in->n, &dl);
    /* n messages of len bytes: the input's data repeated with a per-message tweak. */
    uint8_t *msgs = malloc(n * (len ? len : 1)), (*ref)[32] = malloc(n * 32), (*out)[32] = malloc(n * 32);
    uint8_t(*blocks)[64] = malloc(n * 64);
    FUZZ_CHECK(msgs && ref && out && blocks, "out of memory");
    for (size_t i = 0; i < n * len; i++)
        msgs[i] = (uint8_t)((dl ? d[i % dl] : 0) + i / (len ? len : 1));
    for (size_t i = 0; i < n * 64; i++)
        blocks[i / 64][i % 64] = (uint8_t)((dl ? d[i % dl] : 0) ^ (i / 64));
    dsig_blake3_force_impl("portable");
    for (size_t i = 0; i < n; i++) { /* reference: the hasher on each message */
        dsig_blake3_hasher h;
        if (keyed)
            dsig_blake3_init_keyed(&h, k);
        else
            dsig_blake3_init(&h);
        dsig_blake3_update(&h, msgs + i * len, len);
        dsig_blake3_finalize(&h, ref[i], 32);
    }
    for (size_t b = 0; b < N_B3; b++) {
        if (dsig_blake3_force_impl(b3_backends[b]) != 0)
            continue;
        dsig_blake3_hash_many_chunks(keyed ? k : NULL, msgs, len, len, n, out);
        same(ref, out, n * 32, "BLAKE3 hash_many_chunks", b3_backends[b]);
    }
    for (size_t i = 0; i < n; i++) {
        dsig_blake3_force_impl("portable");
        dsig_blake3_hash_block(keyed ? k : NULL, blocks[i], 64, ref[i], 32);
    }
    for (size_t b = 0; b < N_B3; b++) {
        if (dsig_blake3_force_impl(b3_backends[b]) != 0)
            continue;
        dsig_blake3_hash64_many(keyed ? k : NULL, (const uint8_t(*)[64])blocks, n, out);
        same(ref, out, n * 32, "BLAKE3 hash64_many", b3_backends[b]);
    }
    free(msgs);
    free(ref);
    free(out);
    free(blocks);
}

/* ---- SHA-2 ----------------------------------------------------------------------------------------- */

/* 8 blocks of `bs` bytes and a state of `ss` bytes from the input (repeated to fill). */
static void fill(fuzz_in *in, uint8_t *out, size_t n)
{
    size_t l;
    const uint8_t *p = fuzz_take(in, n, &l);
    for (size_t i = 0; i < n; i++)
        out[i] = l ? (uint8_t)(p[i % l] + i / l) : (uint8_t)i;
}

static void fuzz_sha256(fuzz_in *in)
{
    uint32_t init[8], st[8][8], ref[8][8];
    uint8_t blocks[8][64];
    fill(in, (uint8_t *)init, sizeof init);
    fill(in, (uint8_t *)blocks, sizeof blocks);
    size_t ml;
    const uint8_t *msg = fuzz_take(in, in->n, &ml);
    const uint8_t *bp[8];
    for (int l = 0; l < 8; l++) {
        bp[l] = blocks[l];
        memcpy(ref[l], init, sizeof init);
        dsig_sha256_compress_portable(ref[l], blocks[l], 1);
    }
    uint8_t a[32], b[32];
    SHA256(msg, ml, a);
    dsig_sha256_with(dsig_sha256_compress_portable, b, msg, ml);
    same(a, b, 32, "SHA-256", "portable");
    dsig_sha256(b, msg, ml);
    same(a, b, 32, "SHA-256", dsig_sha256_impl());
#if defined(__x86_64__)
    if (dsig_sha256_have_shani()) {
        dsig_sha256_with(dsig_sha256_compress_shani, b, msg, ml);
        same(a, b, 32, "SHA-256", "shani");
        uint32_t two[2][8];
        dsig_sha256_compress_x2_shani_from(two, init, bp);
        same(ref, two, sizeof two, "SHA-256 x2 from", "shani");
    }
    if (dsig_sha256_have_x8()) {
        for (int l = 0; l < 8; l++)
            memcpy(st[l], init, sizeof init);
        dsig_sha256_compress_x8_avx2(st, bp);
        same(ref, st, sizeof st, "SHA-256 x8", "avx2");
        dsig_sha256_compress_x8_avx2_from(st, init, bp);
        same(ref, st, sizeof st, "SHA-256 x8 from", "avx2");
    }
#endif
    dsig_sha256_compress_x8_from(st, init, bp);
    same(ref, st, sizeof st, "SHA-256 x8 from", "dispatched");
}

static void fuzz_sha512(fuzz_in *in)
{
    uint64_t init[8], st[4][8], ref[4][8];
    uint8_t blocks[4][128];
    fill(in, (uint8_t *)init, sizeof init);
    fill(in, (uint8_t *)blocks, sizeof blocks);
    size_t ml;
    const uint8_t *msg = fuzz_take(in, in->n, &ml);
    const uint8_t *bp[4];
    for (int l = 0; l < 4; l++) {
        bp[l] = blocks[l];
        memcpy(ref[l], init, sizeof init);
        dsig_sha512_compress(ref[l], blocks[l], 1);
    }
    uint8_t a[64], b[64];
    SHA512(msg, ml, a);
    dsig_sha512(b, msg, ml);
    same(a, b, 64, "SHA-512", "portable");
#if defined(__x86_64__)
    if (dsig_sha512_have_x4()) {
        for (int l = 0; l < 4; l++)
            memcpy(st[l], init, sizeof init);
        dsig_sha512_compress_x4_avx2(st, bp);
        same(ref, st, sizeof st, "SHA-512 x4", "avx2");
        dsig_sha512_compress_x4_avx2_from(st, init, bp);
        same(ref, st, sizeof st, "SHA-512 x4 from", "avx2");
    }
#endif
    dsig_sha512_compress_x4_from(st, init, bp);
    same(ref, st, sizeof st, "SHA-512 x4 from", "dispatched");
}

/* ---- Keccak ---------------------------------------------------------------------------------------- */

static int keccak_absorb(void *k, const uint8_t *p, size_t n)
{
    dsig_keccak_absorb(k, p, n);
    return 0;
}

static void fuzz_keccak(fuzz_in *in)
{
    uint64_t s4[100], ref[100], one[25];
    fill(in, (uint8_t *)s4, sizeof s4);
    memcpy(ref, s4, sizeof ref);
    for (int j = 0; j < 4; j++) { /* reference: four single permutations */
        for (int i = 0; i < 25; i++)
            one[i] = ref[4 * i + j];
        dsig_keccak_f1600_portable(one);
        for (int i = 0; i < 25; i++)
            ref[4 * i + j] = one[i];
    }
    uint64_t t[100];
    memcpy(t, s4, sizeof t);
    dsig_keccak_f1600_x4_portable(t);
    same(ref, t, sizeof t, "Keccak-f x4", "portable");
#ifdef DSIG_KECCAK_X86
    if (dsig_cpu_features() & DSIG_CPU_AVX2) {
        memcpy(t, s4, sizeof t);
        dsig_keccak_f1600_x4_avx2(t);
        same(ref, t, sizeof t, "Keccak-f x4", "avx2");
    }
    if (dsig_cpu_features() & DSIG_CPU_AVX512) {
        memcpy(t, s4, sizeof t);
        dsig_keccak_f1600_x4_avx512(t);
        same(ref, t, sizeof t, "Keccak-f x4", "avx512");
        /* the single-state kernel on instance 0, and the x8 kernel on two copies of the x4 input */
        for (int i = 0; i < 25; i++)
            one[i] = s4[4 * i];
        dsig_keccak_f1600_avx512(one);
        for (int i = 0; i < 25; i++)
            FUZZ_CHECK(one[i] == ref[4 * i], "Keccak-f single state avx512 lane %d", i);
        uint64_t s8[200];
        for (int i = 0; i < 25; i++)
            for (int j = 0; j < 8; j++)
                s8[8 * i + j] = s4[4 * i + j % 4];
        dsig_keccak_f1600_x8_avx512(s8);
        for (int i = 0; i < 25; i++)
            for (int j = 0; j < 8; j++)
                FUZZ_CHECK(s8[8 * i + j] == ref[4 * i + j % 4], "Keccak-f x8 avx512 lane %d instance %d", i,
                           j);
    }
#endif
    /* The sponges against OpenSSL: SHA3-256/384/512, SHAKE128/256 with any output length. */
    const unsigned which = fuzz_u8(in) % 5, split = fuzz_u8(in);
    const size_t outlen = which >= 3 ? fuzz_u16(in) % 1025 : (size_t)(which == 0 ? 32 : which == 1 ? 48 : 64);
    size_t ml;
    const uint8_t *msg = fuzz_take(in, in->n, &ml);
    static const unsigned rates[5] = {DSIG_SHA3_256_RATE, DSIG_SHA3_384_RATE, DSIG_SHA3_512_RATE,
                                      DSIG_SHAKE128_RATE, DSIG_SHAKE256_RATE};
    static const char *const names[5] = {"SHA3-256", "SHA3-384", "SHA3-512", "SHAKE128", "SHAKE256"};
    static uint8_t a[1024], b[1024];
    dsig_keccak k;
    dsig_keccak_init(&k, rates[which]);
    fuzz_feed(keccak_absorb, &k, msg, ml, split);
    dsig_keccak_finalize(&k, which >= 3 ? DSIG_KECCAK_DS_SHAKE : DSIG_KECCAK_DS_SHA3);
    size_t half = outlen / 3;
    dsig_keccak_squeeze(&k, b, half);
    dsig_keccak_squeeze(&k, b + half, outlen - half);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    FUZZ_CHECK(c && EVP_DigestInit_ex(c, EVP_get_digestbyname(names[which]), NULL) == 1 &&
                   EVP_DigestUpdate(c, msg, ml) == 1 &&
                   (which >= 3 ? EVP_DigestFinalXOF(c, a, outlen) : EVP_DigestFinal_ex(c, a, NULL)) == 1,
               "OpenSSL %s", names[which]);
    EVP_MD_CTX_free(c);
    same(a, b, outlen, names[which], "ours (against OpenSSL)");
    /* Four equal-length inputs through the x4 sponge against the single one. */
    if (which >= 3) {
        const size_t len = ml / 4, nb = 1 + outlen / rates[which] % 4;
        const uint8_t *ins[4] = {msg, msg + len, msg + 2 * len, msg + 3 * len};
        static uint8_t o4[4][4 * DSIG_SHAKE128_RATE], o1[4 * DSIG_SHAKE128_RATE];
        uint8_t *outs[4] = {o4[0], o4[1], o4[2], o4[3]};
        dsig_keccak_x4 k4;
        dsig_keccak_x4_absorb_once(&k4, rates[which], DSIG_KECCAK_DS_SHAKE, ins, len);
        dsig_keccak_x4_squeezeblocks(&k4, outs, nb);
        for (int j = 0; j < 4; j++) {
            dsig_keccak_init(&k, rates[which]);
            dsig_keccak_absorb(&k, ins[j], len);
            dsig_keccak_finalize(&k, DSIG_KECCAK_DS_SHAKE);
            dsig_keccak_squeeze(&k, o1, nb * rates[which]);
            same(o1, o4[j], nb * rates[which], "SHAKE x4", dsig_keccak_backend());
        }
    }
}

/* ---- Haraka ---------------------------------------------------------------------------------------- */

static void fuzz_haraka(fuzz_in *in)
{
    uint8_t m[8 * 64], ref[8 * 32], out[8 * 32];
    fill(in, m, sizeof m);
    const unsigned have = dsig_haraka_backends();
    dsig_haraka256_portable(ref, m);
    if (have & DSIG_HARAKA_HAVE_AESNI) {
        dsig_haraka256_aesni(out, m);
        same(ref, out, 32, "Haraka-256", "aesni");
    }
    uint8_t r4[4 * 32];
    for (int l = 0; l < 4; l++)
        dsig_haraka256_portable(r4 + 32 * l, m + 32 * l);
    dsig_haraka256_x4_portable(out, m);
    same(r4, out, sizeof r4, "Haraka-256 x4", "portable");
    if (have & DSIG_HARAKA_HAVE_AESNI) {
        dsig_haraka256_x4_aesni(out, m);
        same(r4, out, sizeof r4, "Haraka-256 x4", "aesni");
    }
    for (int l = 0; l < 8; l++)
        dsig_haraka512_portable(ref + 32 * l, m + 64 * l);
    dsig_haraka512_x4_portable(out, m);
    same(ref, out, 4 * 32, "Haraka-512 x4", "portable");
    dsig_haraka512_x8_portable(out, m);
    same(ref, out, 8 * 32, "Haraka-512 x8", "portable");
    if (have & DSIG_HARAKA_HAVE_AESNI) {
        dsig_haraka512_aesni(out, m);
        same(ref, out, 32, "Haraka-512", "aesni");
        dsig_haraka512_x4_aesni(out, m);
        same(ref, out, 4 * 32, "Haraka-512 x4", "aesni");
        dsig_haraka512_x8_aesni(out, m);
        same(ref, out, 8 * 32, "Haraka-512 x8", "aesni");
    }
    if (have & DSIG_HARAKA_HAVE_VAES) {
        dsig_haraka512_x4_vaes(out, m);
        same(ref, out, 4 * 32, "Haraka-512 x4", "vaes");
        dsig_haraka512_x8_vaes(out, m);
        same(ref, out, 8 * 32, "Haraka-512 x8", "vaes");
    }
    if (have & DSIG_HARAKA_HAVE_VAES512) {
        dsig_haraka512_x4_vaes512(out, m);
        same(ref, out, 4 * 32, "Haraka-512 x4", "vaes512");
        dsig_haraka512_x8_vaes512(out, m);
        same(ref, out, 8 * 32, "Haraka-512 x8", "vaes512");
    }
    dsig_haraka512_x8(out, m);
    same(ref, out, 8 * 32, "Haraka-512 x8", dsig_haraka_impl());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FH_MAX_INPUT)
        return 0;
    if (!b3_default)
        b3_default = dsig_blake3_impl();
    fuzz_in in = {data + 1, size - 1};
    switch (data[0] % 6) {
    case 0:
        fuzz_b3_hasher(&in);
        break;
    case 1:
        fuzz_b3_many(&in);
        break;
    case 2:
        fuzz_sha256(&in);
        break;
    case 3:
        fuzz_sha512(&in);
        break;
    case 4:
        fuzz_keccak(&in);
        break;
    default:
        fuzz_haraka(&in);
        break;
    }
    dsig_blake3_force_impl(b3_default);
    return 0;
}

/* Seeds: each function with a few lengths around the block and chunk sizes. */
static void seeds(void)
{
    static uint8_t body[3200];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (uint8_t)(i * 7 + 3);
    static const size_t lens[] = {0, 1, 63, 64, 65, 136, 168, 1024, 1025, 3072};
    for (uint8_t f = 0; f < 6; f++)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            fuzz_seed2(&f, 1, body, lens[l] + 40);
        }
}

FUZZ_SEED_GENERATOR(seeds)
