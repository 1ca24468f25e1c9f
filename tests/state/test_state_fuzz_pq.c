/*
 * Mutation fuzzing of the real stateful providers' private sections (the generic
 * parser fuzzer test_state_fuzz uses a test-only scheme). Real state files — HSS-LMS (one level of
 * LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8), XMSSMT-SHA2_20/4_256 (trees of 32 leaves, cheap to reload)
 * and XMSS-SHA2_10_256 (generated once; a reload rebuilds its 1024-leaf tree, so fewer mutants) — are
 * created in a temporary directory with the high-water registry in it. The provider's private section
 * (docs/state.md: priv_len ‖ priv) is then mutated — bit flips, byte values, 32-bit fields set to
 * extremes, truncation, extension — with priv_len and the file checksum recomputed so that the
 * provider's load_private is reached, and the file is opened:
 *   - nothing crashes (ASan build included);
 *   - a mutant that loads must sign, and its signature must verify under the stored public key.
 * Expected loads: XMSS mutants that only touch SK_PRF. SK_PRF derives the per-signature randomizer
 * r = PRF(SK_PRF, idx); no public value depends on it, so the load-time check (rebuild the tree, compare
 * the root and the public key) cannot see it, and a changed SK_PRF still gives valid signatures: the
 * verifier takes r from the signature. Detecting it would need a check value over SK_PRF in the
 * format; the file's checksum already refuses accidental corruption, and whoever can rewrite the file
 * with a fresh checksum can replace the whole key anyway (docs/xmss.md). HSS-LMS has no such field:
 * SEED and I both determine the public key.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "hash/sha256.h"
#include "testutil.h"

static char dir[256], reg[300];

/* xorshift64* (deterministic). */
static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* Replace a file's bytes (mode 0600, a new inode). */
static void spit(const char *path, const uint8_t *b, size_t len)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, len), (ssize_t)len);
    close(fd);
}

/* Whole file into a malloc'ed buffer. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Forget every high-water mark: a loaded mutant that signed raised its key's mark, which would make
 * the next mutant fail on the registry instead of reaching the parser. */
static void clear_registry(void)
{
    DIR *d = opendir(reg);
    if (!d)
        return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", reg, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Mutate priv (len bytes) into out (cap bytes); returns the new length. */
static size_t mutate(const uint8_t *priv, size_t len, uint8_t *out, size_t cap)
{
    memcpy(out, priv, len);
    size_t n = len;
    int rounds = 1 + (int)(rnd() % 2);
    for (int r = 0; r < rounds; r++) {
        switch (rnd() % 6) {
        case 0: /* bit flip */
        case 1:
            out[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
            break;
        case 2: /* interesting byte */
        {
            static const uint8_t v[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0x02, 0x05, 0x10};
            out[rnd() % n] = v[rnd() % sizeof v];
            break;
        }
        case 3: /* a 32-bit field of the header part (L, typecodes, OID, version) to an extreme */
        {
            static const uint32_t v[] = {0, 1, 2, 5, 8, 9, 0x0000000e, 0x00000005, 0x01000001,
                                         0x7fffffffu, 0x80000000u, 0xffffffffu};
            size_t o = (rnd() % 5) * 2; /* offsets 0, 2, ..., 8 */
            if (o + 4 <= n)
                put_be32(out + o, v[rnd() % (sizeof v / sizeof v[0])]);
            break;
        }
        case 4: /* truncate (may leave 0 bytes: refused by the core) */
            n = rnd() % n;
            if (!n)
                return 0;
            break;
        default: /* extend */
        {
            size_t add = 1 + rnd() % 40;
            if (n + add <= cap) {
                for (size_t i = 0; i < add; i++)
                    out[n + i] = (uint8_t)rnd();
                n += add;
            }
            break;
        }
        }
    }
    return n;
}

/* Create a state file for (alg, param), then open `iters` mutants of its private section. */
static void fuzz(const char *alg_name, const char *param, int iters)
{
    const dsig_alg *alg = dsig_alg_by_name(alg_name);
    assert_non_null(alg);
    char p[512];
    snprintf(p, sizeof p, "%s/%s.state", dir, alg_name);
    unlink(p);
    dsig_state_opts o = {.reserve = 2, .registry_dir = reg};
    dsig_keygen_params kp = {.param = param};
    dsig_key *k = NULL;
    assert_int_equal(dsig_state_create(&k, p, alg, &kp, &o), DSIG_OK);
    dsig_key_free(k);

    /* Locate the sections (docs/state.md). */
    size_t len;
    uint8_t *good = slurp(p, &len);
    size_t nl = good[13], pub_off = 14 + nl + 4;
    size_t pub_len = be32(good + 14 + nl), priv_off = pub_off + pub_len + 4;
    size_t priv_len = be32(good + pub_off + pub_len);
    assert_int_equal(priv_off + priv_len + 8 + 32, len);
    const uint8_t *priv = good + priv_off, *counter = good + priv_off + priv_len;

    /* The verifier: the stored public key as an AKP JWK. */
    char *pub64 = dsig_b64url_encode_alloc(good + pub_off, pub_len);
    char jwk[8192];
    snprintf(jwk, sizeof jwk, "{\"kty\":\"AKP\",\"alg\":\"%s\",\"pub\":\"%s\"}", alg_name, pub64);
    dsig_xfree(pub64, 0);
    dsig_key *vk = NULL;
    assert_int_equal(dsig_jwk_import(&vk, jwk, strlen(jwk)), DSIG_OK);

    size_t cap = priv_len + 64;
    uint8_t *mp = malloc(cap), *file = malloc(priv_off + cap + 40);
    unsigned loaded = 0, refused = 0, same = 0;
    for (int iter = 0; iter < iters; iter++) {
        size_t n = mutate(priv, priv_len, mp, cap);
        if (n == priv_len && memcmp(mp, priv, n) == 0) {
            same++;
            continue;
        }
        /* header ‖ priv_len ‖ priv ‖ counter ‖ SHA-256 of everything before it */
        memcpy(file, good, priv_off - 4);
        put_be32(file + priv_off - 4, (uint32_t)n);
        memcpy(file + priv_off, mp, n);
        memcpy(file + priv_off + n, counter, 8);
        size_t flen = priv_off + n + 8;
        dsig_sha256(file + flen, file, flen);
        flen += 32;
        spit(p, file, flen);
        clear_registry();
        k = NULL;
        int rc = dsig_state_open(&k, p, &o);
        if (rc != DSIG_OK) {
            assert_null(k);
            refused++;
            continue;
        }
        /* Loaded although its private section differs: it must still make valid signatures. For
         * XMSS / XMSSMT the difference must lie in SK_PRF alone ("XMSS" 1 mt OID ‖ SK_SEED ‖ SK_PRF ‖
         * PUB_SEED ‖ root ‖ ...), the one field no load-time check can cover. */
        loaded++;
        if (strncmp(alg_name, "XMSS", 4) == 0) {
            size_t xn = (pub_len - 4) / 2, lo = 10 + xn, hi = 10 + 2 * xn;
            assert_int_equal(n, priv_len);
            for (size_t i = 0; i < n; i++)
                if (mp[i] != priv[i] && (i < lo || i >= hi))
                    fail_msg("%s iteration %d: a mutant of byte %zu (outside SK_PRF) loaded", alg_name,
                             iter, i);
        }
        uint8_t msg[16], sig[65536];
        size_t sig_len = 0;
        tu_fill(msg, sizeof msg, (uint64_t)iter);
        rc = dsig_sign(alg, k, msg, sizeof msg, sig, sizeof sig, &sig_len);
        if (rc != DSIG_OK)
            fail_msg("%s iteration %d: a mutant loaded but cannot sign: %s", alg_name, iter,
                     dsig_last_error_detail());
        rc = dsig_verify(alg, vk, msg, sizeof msg, sig, sig_len);
        if (rc != DSIG_OK)
            fail_msg("%s iteration %d: a mutant loaded and made a signature that does not verify",
                     alg_name, iter);
        dsig_key_free(k);
    }
    print_message("%s: %u mutants refused, %u loaded (all signed and verified), %u no-ops\n", alg_name,
                  refused, loaded, same);
    assert_true(refused > 0);
    dsig_key_free(vk);
    free(mp);
    free(file);
    free(good);
    unlink(p);
}

static void test_fuzz_hss(void **state)
{
    (void)state;
    fuzz("HSS-LMS", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8", 400);
}

static void test_fuzz_xmssmt(void **state)
{
    (void)state;
    fuzz("XMSSMT", "XMSSMT-SHA2_20/4_256", 300);
}

static void test_fuzz_xmss(void **state)
{
    (void)state;
    fuzz("XMSS", "XMSS-SHA2_10_256", 100);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-state-fuzzpq-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(reg, sizeof reg, "%s/registry", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_hss),
        cmocka_unit_test(test_fuzz_xmssmt),
        cmocka_unit_test(test_fuzz_xmss),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
