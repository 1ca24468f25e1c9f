/*
 * bench/bench_args.c — command-line parsing for `dsig bench stream` and `dsig bench sig`, and the
 * resolution of --alg names/globs against the registry.
 *
 * Profiles (--quick or the default full profile) are applied first; explicitly given options always
 * win, whatever their position on the command line.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)
#define GIB (1024ull * 1024ull * 1024ull)

/* Parse "N[unit]" where a bare N is multiplied by `bare`; units K/KiB, M/MiB, G/GiB (any case); N > 0. */
static int parse_unit(const char *s, uint64_t bare, uint64_t *out)
{
    return bench_parse_scaled(s, bare, "kmg", 1, UINT64_MAX, out);
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
    uint64_t v;
    if (bench_parse_u64(s, lo, hi, &v) != 0)
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

/* One payload size of --sizes. */
static int size_item(const char *t, void *out, size_t i)
{
    return bench_parse_size(t, &((uint64_t *)out)[i]);
}

/* One RSA modulus size of --rsa-bits: a multiple of 8 in [2048, 16384]. */
static int bits_item(const char *t, void *out, size_t i)
{
    unsigned *bits = out;
    return parse_uint(t, 2048, 16384, &bits[i]) != 0 || bits[i] % 8 != 0 ? -1 : 0;
}

static const bench_list_spec sizes_list = {
    "--sizes", 512, "bad size", "sizes",
    "positive whole numbers of MiB (e.g. 1,5,10,50,100), or with a unit K/KiB, M/MiB, G/GiB (e.g. 64K, "
    "512KiB); multiples of 1 KiB up to 4 GiB",
    "e.g. 1,5,10,50,100 (MiB) or 64K", size_item};

static const bench_list_spec bits_list = {
    "--rsa-bits", 256, "bad key size", "sizes",
    "multiples of 8 from 2048 to 16384, e.g. 2048,3072,4096,6144,8192", "e.g. 2048,3072,4096",
    bits_item};

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
    fputs("Usage: dsig bench stream [options]\n"
          "Streaming sign then verify (JWS, detached unencoded payload) of every algorithm and size.\n"
          "  --alg LIST        names or globs, comma-separated (default: every algorithm)\n"
          "  --sizes LIST      payload sizes; bare numbers are MiB (default 1,5,10,50,100; 64K ok)\n"
          "  --warmup N        untimed iterations per row (default 5)\n"
          "  --measure N       timed iterations per row (default 10)\n"
          "  --chunk SIZE      bytes per update; bare numbers are bytes (default 64K)\n"
          "  --source KIND     mem | file | pipe (default mem)\n"
          "  --format KIND     jws | raw (default jws)\n"
          "  --reserve N       stateful keys (HSS-LMS, XMSS, XMSSMT): indices reserved per durable\n"
          "                    write of the state file (default 1024)\n"
          "  --seed N          payload and key seed, decimal or 0x-hex (default 1)\n"
          "  --rsa-bits LIST   RSA key sizes (full profile: 2048..8192 for the first RSA alg,\n"
          "                    the default size for the others; quick: default size only)\n"
          "  --out DIR         write the CSV and the SVG chart there (default: no files)\n"
          "  --quick           sizes 1,10 MiB, 1 warm-up, 3 measured\n"
          "  --json            rows as JSON lines on stdout (summary on stderr)\n"
          "  --list            list the algorithms and exit\n",
          f);
}

/* Help of `dsig bench sig`. */
void bench_print_sig_help(FILE *f)
{
    fputs("Usage: dsig bench sig [options]\n"
          "Key generation, one-shot sign and verify of short messages, for every algorithm.\n"
          "  --alg LIST        names or globs, comma-separated (default: every algorithm)\n"
          "  --size N          message bytes (default 32; K/M units accepted)\n"
          "  --warmup N        untimed iterations per op (default 5)\n"
          "  --measure N       at most N timed iterations per op (default 1000)\n"
          "  --max-time SEC    stop an op after SEC seconds (default 1; at least 3 samples)\n"
          "  --clock KIND      wall | cpu: time each sample by the wall clock (default) or by the\n"
          "                    CPU time of the thread (time spent preempted is left out)\n"
          "  --reserve N       stateful keys (HSS-LMS, XMSS, XMSSMT): indices reserved per durable\n"
          "                    write of the state file (default 1024; a sign-r1 row always uses 1)\n"
          "  --seed N          message and key seed (default 1)\n"
          "  --rsa-bits LIST   RSA key sizes (default: the algorithm's default)\n"
          "  --out DIR         also write benchmark_sig_YYYYMMDD_HHMMSS.csv there\n"
          "  --quick           1 warm-up, at most 100 samples, 0.2 s per op\n"
          "  --json            one JSON object per row on stdout\n"
          "  --list            list the algorithms and exit\n",
          f);
}

/* The options both subcommands take (where to store them and their per-command limits), and the
 * subcommand's own valued options. */
struct arg_spec {
    const char *cmd;                 /* "stream" / "sig", for messages */
    unsigned count_max;              /* upper bound of --warmup and --measure */
    int *json, *list;
    const char **algs, **out_dir;
    unsigned *warmup, *measure;
    uint64_t *seed;
    unsigned *rsa_bits;
    size_t *nrsa_bits;
    const char *const *own;          /* the subcommand's own valued options, NULL-terminated */
    /* Apply own option `name` = v: 0, or -1 with err set. */
    int (*apply_own)(void *o, const char *name, const char *v, char *err, size_t len);
    void *o;
    const char *valid;               /* every option, for the unknown-option message */
};

/* Apply an option common to both subcommands; 1 if `name` is not one of them. */
static int apply_common(const struct arg_spec *sp, const char *name, const char *v, char *err,
                        size_t len)
{
    if (strcmp(name, "--alg") == 0) {
        if (!*v)
            return bench_fail(err, len, "--alg: empty list");
        *sp->algs = v;
    } else if (strcmp(name, "--warmup") == 0) {
        if (parse_uint(v, 0, sp->count_max, sp->warmup))
            return bench_fail(err, len, "--warmup: bad count \"%s\"; valid: 0 to %u", v, sp->count_max);
    } else if (strcmp(name, "--measure") == 0) {
        if (parse_uint(v, 1, sp->count_max, sp->measure))
            return bench_fail(err, len, "--measure: bad count \"%s\"; valid: 1 to %u", v, sp->count_max);
    } else if (strcmp(name, "--seed") == 0) {
        if (parse_seed(v, sp->seed))
            return bench_fail(err, len, "--seed: bad seed \"%s\"; valid: a 64-bit number, "
                                  "decimal or 0x-hex", v);
    } else if (strcmp(name, "--rsa-bits") == 0) {
        return bench_parse_list(&bits_list, v, sp->rsa_bits, BENCH_MAX_BITS, sp->nrsa_bits, err, len);
    } else if (strcmp(name, "--out") == 0) {
        if (!*v)
            return bench_fail(err, len, "--out: empty directory name");
        *sp->out_dir = v;
    } else {
        return 1;
    }
    return 0;
}

/* Walk argv: flags, common valued options, then the subcommand's own. 0 = run, 1 = help, -1 = error. */
static int parse_args(int argc, char **argv, const struct arg_spec *sp, char *err, size_t len)
{
    static const char *const common[] = {"--alg", "--warmup", "--measure", "--seed", "--rsa-bits",
                                         "--out", NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int missing = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 1;
        if (strcmp(a, "--quick") == 0)
            continue;
        if (strcmp(a, "--json") == 0) {
            *sp->json = 1;
            continue;
        }
        if (strcmp(a, "--list") == 0) {
            *sp->list = 1;
            continue;
        }
        for (const char *const *nm = common; *nm && !v && !missing; nm++)
            if ((v = bench_opt_value(argc, argv, &i, *nm, &missing)) && apply_common(sp, *nm, v, err, len))
                return -1;
        for (const char *const *nm = sp->own; *nm && !v && !missing; nm++)
            if ((v = bench_opt_value(argc, argv, &i, *nm, &missing)) && sp->apply_own(sp->o, *nm, v, err, len))
                return -1;
        if (v)
            continue;
        if (missing)
            return bench_fail(err, len, "%s needs a value (see dsig bench %s --help)", a, sp->cmd);
        return bench_fail(err, len, "unknown option \"%s\"; valid: %s", a, sp->valid);
    }
    return 0;
}

/* --reserve N (stateful keys: indices per durable write) into *out: 0, or -1 with err set. */
static int parse_reserve(const char *v, uint32_t *out, char *err, size_t len)
{
    uint64_t r;
    if (bench_parse_u64(v, 1, 1u << 20, &r) != 0)
        return bench_fail(err, len, "--reserve: bad count \"%s\"; valid: 1 to 1048576 indices per "
                              "durable write", v);
    *out = (uint32_t)r;
    return 0;
}

/* `stream`'s own options: --sizes, --chunk, --source, --format, --reserve. */
static int stream_own(void *opts, const char *name, const char *v, char *err, size_t len)
{
    bench_stream_opts *o = opts;
    if (strcmp(name, "--sizes") == 0)
        return bench_parse_list(&sizes_list, v, o->sizes, BENCH_MAX_SIZES, &o->nsizes, err, len);
    if (strcmp(name, "--reserve") == 0)
        return parse_reserve(v, &o->reserve, err, len);
    if (strcmp(name, "--chunk") == 0) {
        uint64_t c;
        if (parse_unit(v, 1, &c) || c > 64 * MIB)
            return bench_fail(err, len, "--chunk: bad size \"%s\"; valid: 1 byte to 64M, bare "
                                  "numbers are bytes, units K/M (e.g. 65536, 64K, 1M)", v);
        o->chunk = (size_t)c;
    } else if (strcmp(name, "--source") == 0) {
        if (strcmp(v, "mem") == 0 || strcmp(v, "memory") == 0)
            o->source = BENCH_SRC_MEM;
        else if (strcmp(v, "file") == 0)
            o->source = BENCH_SRC_FILE;
        else if (strcmp(v, "pipe") == 0)
            o->source = BENCH_SRC_PIPE;
        else
            return bench_fail(err, len, "--source: unknown source \"%s\"; valid: mem, file, pipe", v);
    } else {
        if (strcmp(v, "jws") == 0)
            o->format = BENCH_FMT_JWS;
        else if (strcmp(v, "raw") == 0)
            o->format = BENCH_FMT_RAW;
        else
            return bench_fail(err, len, "--format: unknown format \"%s\"; valid: jws, raw", v);
    }
    return 0;
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

    static const char *const own[] = {"--sizes", "--chunk", "--source", "--format", "--reserve", NULL};
    const struct arg_spec sp = {
        "stream", 100000, &o->json, &o->list, &o->algs, &o->out_dir, &o->warmup, &o->measure,
        &o->seed, o->rsa_bits, &o->nrsa_bits, own, stream_own, o,
        "--alg --sizes --warmup --measure --chunk --source --format --reserve --seed --rsa-bits --out "
        "--quick --json --list --help"};
    return parse_args(argc, argv, &sp, err, len);
}

/* `sig`'s own options: --size, --max-time, --clock, --reserve. */
static int sig_own(void *opts, const char *name, const char *v, char *err, size_t len)
{
    bench_sig_opts *o = opts;
    if (strcmp(name, "--reserve") == 0)
        return parse_reserve(v, &o->reserve, err, len);
    if (strcmp(name, "--clock") == 0) {
        if (strcmp(v, "wall") == 0)
            o->cpu_clock = 0;
        else if (strcmp(v, "cpu") == 0)
            o->cpu_clock = 1;
        else
            return bench_fail(err, len, "--clock: unknown clock \"%s\"; valid: wall, cpu", v);
        return 0;
    }
    if (strcmp(name, "--size") == 0) {
        uint64_t s;
        if (parse_unit(v, 1, &s) || s > 64 * MIB)
            return bench_fail(err, len, "--size: bad message size \"%s\"; valid: 1 byte to 64M, bare "
                                  "numbers are bytes (e.g. 32, 1K)", v);
        o->msg_bytes = (size_t)s;
    } else {
        char *end;
        errno = 0;
        double t = strtod(v, &end);
        if (errno || *end || end == v || !(t > 0 && t <= 3600))
            return bench_fail(err, len, "--max-time: bad duration \"%s\"; valid: seconds in (0, 3600]", v);
        o->max_time = t;
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

    static const char *const own[] = {"--size", "--max-time", "--clock", "--reserve", NULL};
    const struct arg_spec sp = {
        "sig", 1000000, &o->json, &o->list, &o->algs, &o->out_dir, &o->warmup, &o->measure,
        &o->seed, o->rsa_bits, &o->nrsa_bits, own, sig_own, o,
        "--alg --size --warmup --measure --max-time --clock --reserve --seed --rsa-bits --out --quick --json "
        "--list --help"};
    return parse_args(argc, argv, &sp, err, len);
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
            return bench_fail(err, len, "--alg: list too long");
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
            return bench_fail(err, len, "--alg: empty list");
    }
    *n = 0;
    for (size_t i = 0; i < count && *n < cap; i++)
        if (chosen[i])
            out[(*n)++] = dsig_alg_at(i);
    return 0;
}
