/*
 * Deterministic mutation fuzzing of the state-file parser (src/core/statefile.c): a valid file is
 * mutated (bit flips, byte sets, truncation, extension, splices, length-field edits) thousands of
 * times. Mutated files must never crash and never load. A second round recomputes the checksum
 * after mutating, so that the bounded parser behind it is reached: those must not crash, and may
 * load only when the mutation kept the file meaningful (same algorithm and key).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash/sha256.h"
#include "testutil.h"
#include "toy.h"

static char dir[256];

/* xorshift64* (deterministic). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* Replace a file's bytes (mode 0600). */
static void spit(const char *path, const uint8_t *b, size_t len)
{
    unlink(path); /* a new file: ext4 flushes a truncated one on close (auto_da_alloc), slowly */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, len), (ssize_t)len);
    close(fd);
}

/* One random mutation of `in` into `out` (cap bytes); returns the new length. */
static size_t mutate(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    memcpy(out, in, len);
    size_t n = len;
    int rounds = 1 + (int)(rnd() % 3);
    for (int r = 0; r < rounds; r++) {
        switch (rnd() % 7) {
        case 0: /* bit flip */
            out[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
            break;
        case 1: /* interesting byte */
        {
            static const uint8_t v[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0x40};
            out[rnd() % n] = v[rnd() % sizeof v];
            break;
        }
        case 2: /* truncate */
            n = 1 + rnd() % n;
            break;
        case 3: /* extend */
        {
            size_t add = 1 + rnd() % 64;
            if (n + add <= cap) {
                for (size_t i = 0; i < add; i++)
                    out[n + i] = (uint8_t)rnd();
                n += add;
            }
            break;
        }
        case 4: /* length fields: name (13), pub_len (14+name), priv_len — set to extremes */
        {
            size_t nl = in[13];
            size_t offs[3] = {13, 14 + nl, 14 + nl + 4 + 40};
            size_t o = offs[rnd() % 3];
            if (o + 4 <= n) {
                static const uint32_t v[] = {0, 1, 39, 41, 0xffffffffu, 0x80000000u, 4096, 4097, 1u << 20};
                uint32_t x = v[rnd() % (sizeof v / sizeof v[0])];
                if (o == 13)
                    out[o] = (uint8_t)x;
                else
                    for (int i = 0; i < 4; i++)
                        out[o + (size_t)i] = (uint8_t)(x >> (24 - 8 * i));
            }
            break;
        }
        case 5: /* splice: copy a block over another place */
        {
            size_t a = rnd() % n, b = rnd() % n, l = 1 + rnd() % 16;
            if (a + l <= n && b + l <= n)
                memmove(out + b, out + a, l);
            break;
        }
        default: /* delete a block */
        {
            size_t a = rnd() % n, l = 1 + rnd() % 16;
            if (a + l < n) {
                memmove(out + a, out + a + l, n - a - l);
                n -= l;
            }
            break;
        }
        }
    }
    return n;
}

static void test_fuzz(void **state)
{
    (void)state;
    char p[512];
    snprintf(p, sizeof p, "%s/f.state", dir);
    dsig_state_opts o = {.reserve = 4, .registry_dir = ""};
    dsig_keygen_params kp = {.bits = 100};
    dsig_key *k = NULL;
    assert_int_equal(dsig_state_create(&k, p, &toy_alg, &kp, &o), DSIG_OK);
    dsig_key_free(k);
    FILE *f = fopen(p, "rb");
    uint8_t good[512], buf[700];
    size_t len = fread(good, 1, sizeof good, f);
    fclose(f);
    assert_true(len > 100 && len < sizeof good);
    unsigned loaded_fixed = 0, refused = 0;
    for (int iter = 0; iter < 6000; iter++) {
        int fix = iter >= 3000; /* second half: valid checksum after mutation */
        size_t n = mutate(good, len, buf, sizeof buf);
        if (n == len && memcmp(buf, good, len) == 0)
            continue;
        if (fix && n > 32)
            dsig_sha256(buf + n - 32, buf, n - 32);
        spit(p, buf, n);
        k = NULL;
        int rc = dsig_state_open(&k, p, &o);
        if (!fix) {
            if (rc == DSIG_OK)
                fail_msg("iteration %d: a mutated file (%zu bytes) loaded", iter, n);
            assert_null(k);
            refused++;
            continue;
        }
        if (rc == DSIG_OK) {
            /* Only a meaningful file may load: same key, counter within capacity. */
            uint64_t rem;
            assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
            assert_true(rem <= 100);
            dsig_key_free(k);
            loaded_fixed++;
        } else {
            assert_null(k);
            refused++;
        }
    }
    print_message("refused %u mutated files; %u checksum-fixed mutations were still valid files\n", refused,
                  loaded_fixed);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-state-fuzz-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    toy_register();
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
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fuzz)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
