/*
 * bench/bench_dsig_args.c — the options of `dsig bench dsig`: lists, profiles, parsing, help.
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "bench_dsig.h"
#include "bench_internal.h"

#define KIB 1024u

static const char *const hash_names[] = {"haraka", "sha256", "blake3"};

/* Name of a hash id, NULL if out of range. */
const char *bench_dsig_hash_name(int hash)
{
    return hash >= 0 && hash < (int)(sizeof hash_names / sizeof hash_names[0]) ? hash_names[hash] : NULL;
}

/* Message size: bytes, or with a unit K/KiB or M/MiB (any case); 0 .. 1 MiB. */
static int msg_size_item(const char *t, void *out, size_t i)
{
    uint64_t v;
    if (bench_parse_scaled(t, 1, "km", 0, BENCH_DSIG_MAX_MSG, &v) != 0)
        return -1;
    ((size_t *)out)[i] = (size_t)v;
    return 0;
}

/* Batch size: a power of two from 1 to 1024 (2^0 .. 2^10). */
static int batch_item(const char *t, void *out, size_t i)
{
    uint64_t v;
    if (bench_parse_u64(t, 1, 1024, &v) != 0 || (v & (v - 1)) != 0)
        return -1;
    ((unsigned *)out)[i] = (unsigned)v;
    return 0;
}

/* One-time scheme: a W-OTS+ depth 2, 4, 8, 16, or "hors" (= hors64), "hors64", "hors32", "hors16". */
static int hbss_item(const char *t, void *out, size_t i)
{
    bench_dsig_hbss *h = &((bench_dsig_hbss *)out)[i];
    memset(h, 0, sizeof *h);
    if (strcasecmp(t, "hors") == 0 || strcasecmp(t, "hors64") == 0) {
        h->k = 64;
        h->log_t = 8;
        return 0;
    }
    if (strcasecmp(t, "hors32") == 0) {
        h->k = 32;
        h->log_t = 9;
        return 0;
    }
    if (strcasecmp(t, "hors16") == 0) {
        h->k = 16;
        h->log_t = 12;
        return 0;
    }
    uint64_t v;
    if (bench_parse_u64(t, 2, 16, &v) != 0 || (v & (v - 1)) != 0)
        return -1;
    h->w = (unsigned)v;
    return 0;
}

/* Chain hash by name. */
static int hash_item(const char *t, void *out, size_t i)
{
    for (int h = 0; h < (int)(sizeof hash_names / sizeof hash_names[0]); h++) {
        if (strcasecmp(t, hash_names[h]) == 0) {
            ((int *)out)[i] = h;
            return 0;
        }
    }
    return -1;
}

/* The list options; their empty-list message repeats the valid items. */
#define BENCH_DSIG_LIST(opt, item, valid, parse) {opt, 512, "bad " item, "items", valid, valid, parse}
static const bench_list_spec sizes_spec = BENCH_DSIG_LIST(
    "--sizes", "size", "bytes 0..1048576, or with a unit K/KiB, M/MiB (e.g. 8,32,1K,8K)", msg_size_item);
static const bench_list_spec batch_spec = BENCH_DSIG_LIST(
    "--batch-sizes", "batch size", "powers of two from 1 to 1024 (e.g. 1,8,128,1024)", batch_item);
static const bench_list_spec w_spec = BENCH_DSIG_LIST(
    "--w", "one-time scheme", "2, 4, 8, 16 (W-OTS+ depth), hors (= hors64), hors32, hors16", hbss_item);
static const bench_list_spec hash_spec = BENCH_DSIG_LIST("--hash", "hash", "haraka, sha256, blake3", hash_item);
#undef BENCH_DSIG_LIST

/* The profile: full (the paper's sweeps) or quick (primary configuration, two sizes). */
static void apply_profile(bench_dsig_opts *o, int quick)
{
    memset(o, 0, sizeof *o);
    o->quick = quick;
    o->seed = 1;
    static const size_t full_sizes[] = {8, 32, KIB, 8 * KIB};
    o->nsizes = quick ? 2 : 4;
    memcpy(o->sizes, full_sizes, o->nsizes * sizeof o->sizes[0]);
    o->count = quick ? 256 : 8192;
    if (quick) {
        o->batch[o->nbatch++] = 128;
        o->hbss[o->nhbss++] = (bench_dsig_hbss){.w = 4};
        o->hash[o->nhash++] = BENCH_DSIG_HARAKA;
    } else {
        for (unsigned b = 1; b <= 1024; b <<= 1)
            o->batch[o->nbatch++] = b;
        for (unsigned w = 2; w <= 16; w <<= 1)
            o->hbss[o->nhbss++] = (bench_dsig_hbss){.w = w};
        o->hbss[o->nhbss++] = (bench_dsig_hbss){.k = 64, .log_t = 8};
        for (int h = 0; h < 3; h++)
            o->hash[o->nhash++] = h;
    }
}

/* Parse argv (argv[0] = "dsig"); --quick is applied first, explicit options win whatever the order. */
int bench_dsig_parse(int argc, char **argv, bench_dsig_opts *o, char *err, size_t errlen)
{
    int quick = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
    apply_profile(o, quick);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        uint64_t u;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 1;
        if (strcmp(a, "--quick") == 0)
            continue;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(a, "--targets") == 0) {
            o->targets = 1;
            continue;
        }
        if ((v = bench_opt_value(argc, argv, &i, "--sizes", &missing))) {
            if (bench_parse_list(&sizes_spec, v, o->sizes, BENCH_DSIG_MAX_SIZES, &o->nsizes, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--batch-sizes", &missing))) {
            if (bench_parse_list(&batch_spec, v, o->batch, BENCH_DSIG_MAX_BATCH, &o->nbatch, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--w", &missing))) {
            if (bench_parse_list(&w_spec, v, o->hbss, BENCH_DSIG_MAX_HBSS, &o->nhbss, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--hash", &missing))) {
            if (bench_parse_list(&hash_spec, v, o->hash, BENCH_DSIG_MAX_HASH, &o->nhash, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--count", &missing))) {
            if (bench_parse_u64(v, 1, BENCH_DSIG_MAX_COUNT, &u) != 0)
                return bench_fail(err, errlen, "--count: bad value \"%s\"; valid: 1..%u", v,
                            BENCH_DSIG_MAX_COUNT);
            o->count = (unsigned)u;
        } else if ((v = bench_opt_value(argc, argv, &i, "--seed", &missing))) {
            if (bench_parse_u64(v, 0, UINT64_MAX, &o->seed) != 0)
                return bench_fail(err, errlen, "--seed: bad value \"%s\"; valid: a decimal number", v);
        } else if (missing) {
            return bench_fail(err, errlen, "%s needs a value", a);
        } else {
            return bench_fail(err, errlen,
                        "unknown option \"%s\"; valid: --sizes, --count, --batch-sizes, --w, --hash, "
                        "--seed, --quick, --json, --targets, --help",
                        a);
        }
    }
    return 0;
}

/* Help of `dsig bench dsig`. */
void bench_dsig_print_help(FILE *f)
{
    fputs("Usage: dsig bench dsig [options]\n"
          "DSig hybrid signatures (sign, fast verify, slow verify; throughput with background costs)\n"
          "against libsodium and OpenSSL Ed25519, measured in the same run, and their same-run ratios.\n"
          "  --sizes LIST        message sizes in bytes, K/KiB and M/MiB units ok (default 8,32,1K,8K)\n"
          "  --count N           timed calls per latency row (default 8192; quick 256)\n"
          "  --batch-sizes LIST  Merkle batch sizes, powers of two 1..1024 (default all; quick 128)\n"
          "  --w LIST            one-time schemes: 2,4,8,16 (W-OTS+ depth), hors (k=64,t=256),\n"
          "                      hors32, hors16 (default 2,4,8,16,hors; quick 4)\n"
          "  --hash LIST         chain hash: haraka, sha256, blake3 (default all; quick haraka)\n"
          "  --seed N            payload and baseline-key seed (default 1)\n"
          "  --quick             sizes 8,32; 256 calls per row; w=4, haraka, batch 128 only\n"
          "  --json              one JSON object per measured row on stdout (ratios on stderr)\n"
          "  --targets           also judge the paper's latency targets (PASS/FAIL lines; for a run on an\n"
          "                      idle machine: a busy one fails them without saying anything)\n"
          "The size sweep uses the primary configuration (w=4, haraka, batch 128 when listed, else\n"
          "the first of each list); the scheme, hash and batch sweeps use the first size.\n",
          f);
}
