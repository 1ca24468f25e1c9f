/*
 * bench/bench_args.c — command-line parsing for `dsig bench stream` and `dsig bench sig`, and the
 * resolution of --alg names/globs against the registry.
 *
 * Profiles (--quick or the default full profile) are applied first; explicitly given options always
 * win, whatever their position on the command line.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)
#define GIB (1024ull * 1024ull * 1024ull)

/* Format an error message into err and return -1. */
__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Parse "N[unit]" where a bare N is multiplied by `bare`; units K/KiB, M/MiB, G/GiB (any case). */
static int parse_unit(const char *s, uint64_t bare, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mult = bare;
    if (*end) {
        char u = (char)(*end | 0x20);
        mult = u == 'k' ? KIB : u == 'm' ? MIB : u == 'g' ? GIB : 0;
        if (!mult)
            return -1;
        end++;
        if (*end && strcasecmp(end, "ib") != 0 && strcasecmp(end, "b") != 0)
            return -1;
    }
    if (v == 0 || v > UINT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

/* Payload size: bare numbers are MiB; must be a multiple of 1 KiB, at most 4 GiB. */
int bench_parse_size(const char *s, uint64_t *out)
{
    uint64_t v;
    if (parse_unit(s, MIB, &v) != 0 || v % KIB != 0 || v > 4 * GIB)
        return -1;
    *out = v;
    return 0;
}

/* Unsigned integer in [lo, hi], whole string. */
static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* 64-bit seed: decimal or 0x-hexadecimal. */
static int parse_seed(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* Value of an option given as "--name VALUE" or "--name=VALUE"; NULL if `arg` is not that option.
 * *missing is set when the option is there but its value is not. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

/* Comma-separated list of sizes into out[]. */
static int parse_sizes(const char *s, uint64_t *out, size_t cap, size_t *n, char *err, size_t len)
{
    char tmp[512];
    if (strlen(s) >= sizeof tmp)
        return fail(err, len, "--sizes: list too long");
    strcpy(tmp, s);
    *n = 0;
    char *save = NULL;
    for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n >= cap)
            return fail(err, len, "--sizes: at most %zu sizes", cap);
        if (bench_parse_size(t, &out[*n]) != 0)
            return fail(err, len,
                        "--sizes: bad size \"%s\"; valid: positive whole numbers of MiB (e.g. "
                        "1,5,10,50,100), or with a unit K/KiB, M/MiB, G/GiB (e.g. 64K, 512KiB); "
                        "multiples of 1 KiB up to 4 GiB",
                        t);
        (*n)++;
    }
    if (*n == 0)
        return fail(err, len, "--sizes: empty list; valid: e.g. 1,5,10,50,100 (MiB) or 64K");
    return 0;
}

/* Comma-separated RSA modulus sizes. */
static int parse_bits(const char *s, unsigned *out, size_t cap, size_t *n, char *err, size_t len)
{
    char tmp[256];
    if (strlen(s) >= sizeof tmp)
        return fail(err, len, "--rsa-bits: list too long");
    strcpy(tmp, s);
    *n = 0;
    char *save = NULL;
    for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n >= cap)
            return fail(err, len, "--rsa-bits: at most %zu sizes", cap);
        if (parse_uint(t, 2048, 16384, &out[*n]) != 0 || out[*n] % 8 != 0)
            return fail(err, len,
                        "--rsa-bits: bad key size \"%s\"; valid: multiples of 8 from 2048 to 16384, "
                        "e.g. 2048,3072,4096,6144,8192",
                        t);
        (*n)++;
    }
    if (*n == 0)
        return fail(err, len, "--rsa-bits: empty list; valid: e.g. 2048,3072,4096");
    return 0;
}

/* Does argv contain a flag (used to apply --quick before the other options)? */
static int has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], flag) == 0)
            return 1;
    return 0;
}

/* Help of `dsig bench stream`. */
void bench_print_stream_help(FILE *f)
{
    fputs("usage: dsig bench stream [options]\n"
          "Streaming sign then verify (JWS, detached unencoded payload) of every algorithm and size.\n"
          "  --alg LIST        names or globs, comma-separated (default: every algorithm)\n"
          "  --sizes LIST      payload sizes; bare numbers are MiB (default 1,5,10,50,100; 64K ok)\n"
          "  --warmup N        untimed iterations per row (default 5)\n"
          "  --measure N       timed iterations per row (default 10)\n"
          "  --chunk SIZE      bytes per update; bare numbers are bytes (default 64K)\n"
          "  --source KIND     mem | file | pipe (default mem)\n"
          "  --format KIND     jws | raw (default jws)\n"
          "  --seed N          payload and key seed, decimal or 0x-hex (default 1)\n"
          "  --rsa-bits LIST   RSA key sizes (full profile: 2048..8192 for the first RSA alg,\n"
          "                    the default size for the others; quick: default size only)\n"
          "  --out DIR         where the CSV and SVG go (default .)\n"
          "  --quick           sizes 1,10 MiB, 1 warm-up, 3 measured\n"
          "  --json            rows as JSON lines on stdout (summary on stderr)\n"
          "  --list            list the algorithms and exit\n",
          f);
}

/* Help of `dsig bench sig`. */
void bench_print_sig_help(FILE *f)
{
    fputs("usage: dsig bench sig [options]\n"
          "Key generation, one-shot sign and verify of short messages, for every algorithm.\n"
          "  --alg LIST        names or globs, comma-separated (default: every algorithm)\n"
          "  --size N          message bytes (default 32; K/M units accepted)\n"
          "  --warmup N        untimed iterations per op (default 5)\n"
          "  --measure N       at most N timed iterations per op (default 1000)\n"
          "  --max-time SEC    stop an op after SEC seconds (default 1; at least 3 samples)\n"
          "  --seed N          message and key seed (default 1)\n"
          "  --rsa-bits LIST   RSA key sizes (default: the algorithm's default)\n"
          "  --out DIR         also write benchmark_sig_YYYYMMDD_HHMMSS.csv there\n"
          "  --quick           1 warm-up, at most 100 samples, 0.2 s per op\n"
          "  --json            one JSON object per row on stdout\n"
          "  --list            list the algorithms and exit\n",
          f);
}

/* Parse `stream [options]`. */
int bench_stream_parse(int argc, char **argv, bench_stream_opts *o, char *err, size_t len)
{
    memset(o, 0, sizeof *o);
    o->quick = has_flag(argc, argv, "--quick");
    static const uint64_t full_sizes[] = {1 * MIB, 5 * MIB, 10 * MIB, 50 * MIB, 100 * MIB};
    static const uint64_t quick_sizes[] = {1 * MIB, 10 * MIB};
    const uint64_t *sz = o->quick ? quick_sizes : full_sizes;
    o->nsizes = o->quick ? 2 : 5;
    memcpy(o->sizes, sz, o->nsizes * sizeof *sz);
    o->warmup = o->quick ? 1 : 5;
    o->measure = o->quick ? 3 : 10;
    o->seed = 1;
    o->chunk = DSIG_IO_DEFAULT_CHUNK;
    o->source = BENCH_SRC_MEM;
    o->format = BENCH_FMT_JWS;
    o->out_dir = ".";

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 1;
        if (strcmp(a, "--quick") == 0)
            continue;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--list") == 0) {
            o->list = 1;
        } else if ((v = opt_value(argc, argv, &i, "--alg", &missing))) {
            if (!*v)
                return fail(err, len, "--alg: empty list");
            o->algs = v;
        } else if ((v = opt_value(argc, argv, &i, "--sizes", &missing))) {
            if (parse_sizes(v, o->sizes, BENCH_MAX_SIZES, &o->nsizes, err, len))
                return -1;
        } else if ((v = opt_value(argc, argv, &i, "--warmup", &missing))) {
            if (parse_uint(v, 0, 100000, &o->warmup))
                return fail(err, len, "--warmup: bad count \"%s\"; valid: 0 to 100000", v);
        } else if ((v = opt_value(argc, argv, &i, "--measure", &missing))) {
            if (parse_uint(v, 1, 100000, &o->measure))
                return fail(err, len, "--measure: bad count \"%s\"; valid: 1 to 100000", v);
        } else if ((v = opt_value(argc, argv, &i, "--seed", &missing))) {
            if (parse_seed(v, &o->seed))
                return fail(err, len, "--seed: bad seed \"%s\"; valid: a 64-bit number, "
                                      "decimal or 0x-hex", v);
        } else if ((v = opt_value(argc, argv, &i, "--chunk", &missing))) {
            uint64_t c;
            if (parse_unit(v, 1, &c) || c > 64 * MIB)
                return fail(err, len, "--chunk: bad size \"%s\"; valid: 1 byte to 64M, bare "
                                      "numbers are bytes, units K/M (e.g. 65536, 64K, 1M)", v);
            o->chunk = (size_t)c;
        } else if ((v = opt_value(argc, argv, &i, "--source", &missing))) {
            if (strcmp(v, "mem") == 0 || strcmp(v, "memory") == 0)
                o->source = BENCH_SRC_MEM;
            else if (strcmp(v, "file") == 0)
                o->source = BENCH_SRC_FILE;
            else if (strcmp(v, "pipe") == 0)
                o->source = BENCH_SRC_PIPE;
            else
                return fail(err, len, "--source: unknown source \"%s\"; valid: mem, file, pipe", v);
        } else if ((v = opt_value(argc, argv, &i, "--format", &missing))) {
            if (strcmp(v, "jws") == 0)
                o->format = BENCH_FMT_JWS;
            else if (strcmp(v, "raw") == 0)
                o->format = BENCH_FMT_RAW;
            else
                return fail(err, len, "--format: unknown format \"%s\"; valid: jws, raw", v);
        } else if ((v = opt_value(argc, argv, &i, "--rsa-bits", &missing))) {
            if (parse_bits(v, o->rsa_bits, BENCH_MAX_BITS, &o->nrsa_bits, err, len))
                return -1;
        } else if ((v = opt_value(argc, argv, &i, "--out", &missing))) {
            if (!*v)
                return fail(err, len, "--out: empty directory name");
            o->out_dir = v;
        } else if (missing) {
            return fail(err, len, "%s needs a value (see dsig bench stream --help)", a);
        } else {
            return fail(err, len, "unknown option \"%s\"; valid: --alg --sizes --warmup --measure "
                                  "--chunk --source --format --seed --rsa-bits --out --quick --json "
                                  "--list --help", a);
        }
    }
    return 0;
}

/* Parse `sig [options]`. */
int bench_sig_parse(int argc, char **argv, bench_sig_opts *o, char *err, size_t len)
{
    memset(o, 0, sizeof *o);
    o->quick = has_flag(argc, argv, "--quick");
    o->msg_bytes = 32;
    o->warmup = o->quick ? 1 : 5;
    o->measure = o->quick ? 100 : 1000;
    o->max_time = o->quick ? 0.2 : 1.0;
    o->seed = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 1;
        if (strcmp(a, "--quick") == 0)
            continue;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--list") == 0) {
            o->list = 1;
        } else if ((v = opt_value(argc, argv, &i, "--alg", &missing))) {
            if (!*v)
                return fail(err, len, "--alg: empty list");
            o->algs = v;
        } else if ((v = opt_value(argc, argv, &i, "--size", &missing))) {
            uint64_t s;
            if (parse_unit(v, 1, &s) || s > 64 * MIB)
                return fail(err, len, "--size: bad message size \"%s\"; valid: 1 byte to 64M, bare "
                                      "numbers are bytes (e.g. 32, 1K)", v);
            o->msg_bytes = (size_t)s;
        } else if ((v = opt_value(argc, argv, &i, "--warmup", &missing))) {
            if (parse_uint(v, 0, 1000000, &o->warmup))
                return fail(err, len, "--warmup: bad count \"%s\"; valid: 0 to 1000000", v);
        } else if ((v = opt_value(argc, argv, &i, "--measure", &missing))) {
            if (parse_uint(v, 1, 1000000, &o->measure))
                return fail(err, len, "--measure: bad count \"%s\"; valid: 1 to 1000000", v);
        } else if ((v = opt_value(argc, argv, &i, "--max-time", &missing))) {
            char *end;
            errno = 0;
            double t = strtod(v, &end);
            if (errno || *end || end == v || !(t > 0 && t <= 3600))
                return fail(err, len, "--max-time: bad duration \"%s\"; valid: seconds in (0, 3600]",
                            v);
            o->max_time = t;
        } else if ((v = opt_value(argc, argv, &i, "--seed", &missing))) {
            if (parse_seed(v, &o->seed))
                return fail(err, len, "--seed: bad seed \"%s\"; valid: a 64-bit number, "
                                      "decimal or 0x-hex", v);
        } else if ((v = opt_value(argc, argv, &i, "--rsa-bits", &missing))) {
            if (parse_bits(v, o->rsa_bits, BENCH_MAX_BITS, &o->nrsa_bits, err, len))
                return -1;
        } else if ((v = opt_value(argc, argv, &i, "--out", &missing))) {
            if (!*v)
                return fail(err, len, "--out: empty directory name");
            o->out_dir = v;
        } else if (missing) {
            return fail(err, len, "%s needs a value (see dsig bench sig --help)", a);
        } else {
            return fail(err, len, "unknown option \"%s\"; valid: --alg --size --warmup --measure "
                                  "--max-time --seed --rsa-bits --out --quick --json --list --help",
                        a);
        }
    }
    return 0;
}

/* Append every registered name to err after `prefix` (for "valid: ..." messages). */
static int fail_listing(char *err, size_t len, const char *prefix)
{
    size_t o = (size_t)snprintf(err, len, "%s; valid: ", prefix);
    size_t n = dsig_alg_count();
    if (n == 0 && o < len)
        o += (size_t)snprintf(err + o, len - o, "(no algorithm is registered in this build)");
    for (size_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(err + o, len - o, "%s%s", i ? ", " : "", dsig_alg_name(dsig_alg_at(i)));
    if (o < len)
        snprintf(err + o, len - o, " (globs like \"HS*\" or \"*256\" also work)");
    return -1;
}

/* Resolve the --alg list (NULL = every algorithm), keeping registry order and dropping repeats. */
int bench_select_algs(const char *patterns, const dsig_alg **out, size_t cap, size_t *n, char *err,
                      size_t len)
{
    size_t count = dsig_alg_count();
    unsigned char chosen[BENCH_MAX_ALGS] = {0};
    if (count > BENCH_MAX_ALGS)
        count = BENCH_MAX_ALGS;
    if (!patterns) {
        memset(chosen, 1, count);
    } else {
        char tmp[1024];
        if (strlen(patterns) >= sizeof tmp)
            return fail(err, len, "--alg: list too long");
        strcpy(tmp, patterns);
        char *save = NULL;
        int any = 0;
        for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int glob = strpbrk(t, "*?[") != NULL, matched = 0;
            for (size_t i = 0; i < count; i++) {
                const char *name = dsig_alg_name(dsig_alg_at(i));
                if (glob ? fnmatch(t, name, 0) == 0 : strcmp(t, name) == 0) {
                    chosen[i] = 1;
                    matched = 1;
                }
            }
            if (!matched) {
                char prefix[160];
                snprintf(prefix, sizeof prefix, "--alg: %s \"%.100s\" matches no algorithm",
                         glob ? "pattern" : "name", t);
                return fail_listing(err, len, prefix);
            }
            any = 1;
        }
        if (!any)
            return fail(err, len, "--alg: empty list");
    }
    *n = 0;
    for (size_t i = 0; i < count && *n < cap; i++)
        if (chosen[i])
            out[(*n)++] = dsig_alg_at(i);
    return 0;
}
