/*
 * CTest driver for the fuzz targets in the gcc builds (the libFuzzer build, DSIG_FUZZ=ON, runs the same
 * targets coverage-guided; docs/fuzzing.md):
 * a seed corpus generated in code (our own JWS in every format, RFC-shaped headers, exported JWKs),
 * then deterministic mutations — bit flips, byte substitutions with JOSE-significant characters,
 * truncation, insertion, deletion, duplication — fed to both entry points.
 *
 *   fuzz_driver [N]            JOSE: N mutations over the JWS and JWK targets (default 20000)
 *   fuzz_driver N dsig         DSig: N mutations for EACH of the four fuzz_dsig.c targets, seeded with
 *                              valid signatures / batch messages of every preset (fixed seeds)
 *   fuzz_driver N mldsa        ML-DSA: N mutations for EACH of the three fuzz_mldsa.c targets (signature,
 *                              public key, AKP JWK), seeded with valid objects of ML-DSA-44/65/87
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "fuzz_common.h"

#define MAX_SEEDS 160
#define MAX_LEN (FUZZ_DSIG_MAX_INPUT + 64) /* a little over the DSig bound: some inputs exceed it */

typedef struct seed {
    uint8_t *data;
    size_t len;
} seed;

static seed jws_seeds[MAX_SEEDS], jwk_seeds[MAX_SEEDS];
static size_t n_jws, n_jwk;

/* Add a copy of a seed to a corpus. */
static void add(seed *corpus, size_t *n, const void *d, size_t len)
{
    if (*n >= MAX_SEEDS || len > MAX_LEN)
        return;
    uint8_t *p = malloc(len ? len : 1);
    memcpy(p, d, len);
    corpus[(*n)++] = (seed){p, len};
}

/* Seed callback of the JOSE corpus: target 0 JWS (mode byte first), 1 JWK. */
static void jose_seed_add(void *arg, unsigned target, const uint8_t *data, size_t len)
{
    (void)arg;
    if (target == 0)
        add(jws_seeds, &n_jws, data, len);
    else
        add(jwk_seeds, &n_jwk, data, len);
}

/* xorshift64*: deterministic mutations (not cryptographic). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* One to four mutations of `in` into `out` (capacity MAX_LEN); returns the new length. The first
 * `keep` bytes (mode / selector bytes) are left alone except by the "new mode byte" mutation, which
 * rewrites byte 0 (keep = 1) or one of bytes 1 .. keep−1 (keep > 1). */
static size_t mutate(const seed *s, uint8_t *out, size_t keep)
{
    static const uint8_t special[] = {'.', '"', '{', '}', '[', ']', ':', ',', '=', '\\', 0,
                                      0xff, 'A', '_', '-', ' ', '\n', 0x80, '0', 'u'};
    size_t len = s->len;
    memcpy(out, s->data, len);
    int rounds = 1 + (int)(rnd() % 4);
    size_t lo = keep < len ? keep : len;
    for (int r = 0; r < rounds; r++) {
        size_t span = len > lo ? len - lo : 0;
        size_t pos = lo + (span ? rnd() % span : 0);
        switch (rnd() % 7) {
        case 0: /* bit flip */
            if (span)
                out[pos] ^= (uint8_t)(1u << (rnd() % 8));
            break;
        case 1: /* JOSE-significant byte */
            if (span)
                out[pos] = special[rnd() % sizeof special];
            break;
        case 2: /* truncation */
            len = pos;
            break;
        case 3: /* insertion of 1-8 bytes */
        {
            size_t k = 1 + rnd() % 8;
            if (len + k > MAX_LEN)
                break;
            memmove(out + pos + k, out + pos, len - pos);
            for (size_t i = 0; i < k; i++)
                out[pos + i] = (rnd() & 1) ? special[rnd() % sizeof special] : (uint8_t)rnd();
            len += k;
            break;
        }
        case 4: /* deletion */
        {
            size_t k = span ? 1 + rnd() % (span < 16 ? span : 16) : 0;
            if (pos + k > len)
                k = len - pos;
            memmove(out + pos, out + pos + k, len - pos - k);
            len -= k;
            break;
        }
        case 5: /* duplicate a chunk */
        {
            size_t k = span ? 1 + rnd() % (span < 32 ? span : 32) : 0;
            if (pos + k > len || len + k > MAX_LEN)
                break;
            memmove(out + pos + k, out + pos, len - pos);
            len += k;
            break;
        }
        default: /* new mode byte */
            if (keep == 1 && len)
                out[0] = (uint8_t)rnd();
            else if (keep > 1 && len >= keep)
                out[1 + rnd() % (keep - 1)] = (uint8_t)rnd();
            break;
        }
    }
    return len;
}

/* ---- DSig ------------------------------------------------------------------------------------- */

static seed dsig_seeds[FUZZ_DSIG_TARGETS][MAX_SEEDS];
static size_t n_dsig[FUZZ_DSIG_TARGETS];

/* Seed callback: keep a copy in the target's corpus. */
static void dsig_seed_add(void *arg, unsigned target, const uint8_t *data, size_t len)
{
    (void)arg;
    add(dsig_seeds[target % FUZZ_DSIG_TARGETS], &n_dsig[target % FUZZ_DSIG_TARGETS], data, len);
}

/* Splice: overwrite a chunk with the bytes at the same offset of another seed of the same target
 * (e.g. the proof of one leaf's signature under another's one-time signature). */
static size_t splice(const seed *corpus, size_t n, uint8_t *out, size_t len)
{
    const seed *o = &corpus[rnd() % n];
    if (len <= 3 || o->len <= 3)
        return len;
    size_t top = (len < o->len ? len : o->len) - 3;
    size_t pos = 3 + rnd() % top, k = 1 + rnd() % 256;
    if (pos + k > 3 + top)
        k = 3 + top - pos;
    memcpy(out + pos, o->data + pos, k);
    return len;
}

/* The DSig targets: every seed, then `iterations` mutations per target (round robin). */
static int run_dsig(long iterations)
{
    fuzz_dsig_seeds(dsig_seed_add, NULL);
    printf("fuzz_driver: DSig seeds %zu / %zu / %zu / %zu (scheme / batch / runtime / registry), %ld mutations "
           "per target\n", n_dsig[0], n_dsig[1], n_dsig[2], n_dsig[3], iterations);
    for (unsigned t = 0; t < FUZZ_DSIG_TARGETS; t++)
        for (size_t i = 0; i < n_dsig[t]; i++)
            fuzz_dsig_one(dsig_seeds[t][i].data, dsig_seeds[t][i].len);
    static uint8_t buf[MAX_LEN];
    for (long it = 0; it < iterations * (long)FUZZ_DSIG_TARGETS; it++) {
        unsigned t = (unsigned)(it % FUZZ_DSIG_TARGETS);
        if (!n_dsig[t])
            continue;
        /* Mutate the raw and two-edit seeds only: the empty patches (3 bytes) have no body to mutate. */
        size_t si = rnd() % n_dsig[t];
        for (size_t k = 0; k < n_dsig[t] && dsig_seeds[t][si].len <= 3; k++)
            si = (si + 1) % n_dsig[t];
        size_t len = mutate(&dsig_seeds[t][si], buf, 3);
        if (rnd() % 4 == 0)
            len = splice(dsig_seeds[t], n_dsig[t], buf, len);
        fuzz_dsig_one(buf, len);
    }
    for (unsigned t = 0; t < FUZZ_DSIG_TARGETS; t++)
        for (size_t i = 0; i < n_dsig[t]; i++)
            free(dsig_seeds[t][i].data);
    fuzz_dsig_free();
    printf("fuzz_driver: done\n");
    return 0;
}

/* ---- ML-DSA ----------------------------------------------------------------------------------- */

static seed mldsa_seeds[FUZZ_MLDSA_TARGETS][MAX_SEEDS];
static size_t n_mldsa[FUZZ_MLDSA_TARGETS];

/* Seed callback: keep a copy in the ML-DSA target's corpus. */
static void mldsa_seed_add(void *arg, unsigned target, const uint8_t *data, size_t len)
{
    (void)arg;
    unsigned t = target % FUZZ_MLDSA_TARGETS;
    add(mldsa_seeds[t], &n_mldsa[t], data, len);
}

/* The ML-DSA targets: every seed, then `iterations` mutations per target (round robin); a quarter of
 * the mutants also get a chunk of another seed spliced in (another set's or message's object). */
static int run_mldsa(long iterations)
{
    fuzz_mldsa_seeds(mldsa_seed_add, NULL);
    printf("fuzz_driver: ML-DSA seeds %zu / %zu / %zu (signature / pk / jwk), %ld mutations per target\n",
           n_mldsa[0], n_mldsa[1], n_mldsa[2], iterations);
    for (unsigned t = 0; t < FUZZ_MLDSA_TARGETS; t++)
        for (size_t i = 0; i < n_mldsa[t]; i++)
            fuzz_mldsa_one(mldsa_seeds[t][i].data, mldsa_seeds[t][i].len);
    static uint8_t buf[MAX_LEN];
    for (long it = 0; it < iterations * (long)FUZZ_MLDSA_TARGETS; it++) {
        unsigned t = (unsigned)(it % FUZZ_MLDSA_TARGETS);
        if (!n_mldsa[t])
            continue;
        /* The empty patches (3 bytes) have no body to mutate: take the next longer seed. */
        size_t si = rnd() % n_mldsa[t];
        for (size_t k = 0; k < n_mldsa[t] && mldsa_seeds[t][si].len <= 3; k++)
            si = (si + 1) % n_mldsa[t];
        size_t len = mutate(&mldsa_seeds[t][si], buf, 3);
        if (rnd() % 4 == 0)
            len = splice(mldsa_seeds[t], n_mldsa[t], buf, len);
        fuzz_mldsa_one(buf, len);
    }
    for (unsigned t = 0; t < FUZZ_MLDSA_TARGETS; t++)
        for (size_t i = 0; i < n_mldsa[t]; i++)
            free(mldsa_seeds[t][i].data);
    fuzz_mldsa_free();
    printf("fuzz_driver: done\n");
    return 0;
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 20000;
    if (argc > 2 && strcmp(argv[2], "dsig") == 0)
        return run_dsig(iterations);
    if (argc > 2 && strcmp(argv[2], "mldsa") == 0)
        return run_mldsa(iterations);
    fuzz_jose_seeds(jose_seed_add, NULL);
    printf("fuzz_driver: %zu JWS seeds, %zu JWK seeds, %zu keys, %ld mutations\n", n_jws, n_jwk,
           fuzz_get_keys()->n, iterations);
    for (size_t i = 0; i < n_jws; i++)
        fuzz_jws_one(jws_seeds[i].data, jws_seeds[i].len);
    for (size_t i = 0; i < n_jwk; i++)
        fuzz_jwk_one(jwk_seeds[i].data, jwk_seeds[i].len);
    static uint8_t buf[MAX_LEN];
    long jwk_iters = iterations * 3 / 10;
    for (long it = 0; it < iterations; it++) {
        if (it < jwk_iters && n_jwk) {
            size_t len = mutate(&jwk_seeds[rnd() % n_jwk], buf, 0);
            fuzz_jwk_one(buf, len);
        } else if (n_jws) {
            size_t len = mutate(&jws_seeds[rnd() % n_jws], buf, 1);
            fuzz_jws_one(buf, len);
        }
    }
    for (size_t i = 0; i < n_jws; i++)
        free(jws_seeds[i].data);
    for (size_t i = 0; i < n_jwk; i++)
        free(jwk_seeds[i].data);
    fuzz_free_keys();
    printf("fuzz_driver: done\n");
    return 0;
}
