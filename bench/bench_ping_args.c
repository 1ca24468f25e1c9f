/*
 * bench/bench_ping_args.c — the options of `dsig ping`: parsing, defaults, help, scheme names.
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "bench_internal.h"
#include "bench_ping.h"


static const char *const scheme_names[PING_NSCHEMES] = {"none", "sodium-ed25519", "dsig"};

/* Name of a scheme id. */
const char *ping_scheme_name(int scheme)
{
    return scheme >= 0 && scheme < PING_NSCHEMES ? scheme_names[scheme] : NULL;
}

/* One message size of --size: bytes, or K/KiB (any case); 1 .. PING_MAX_MSG. */
static int size_item(const char *t, void *out, size_t i)
{
    uint64_t v;
    if (bench_parse_scaled(t, 1, "k", 1, PING_MAX_MSG, &v) != 0)
        return -1;
    ((size_t *)out)[i] = (size_t)v;
    return 0;
}

/* One scheme of --schemes, by name ("sodium" = sodium-ed25519): sets its bit in *(unsigned *)out
 * (repeats are harmless, so the item index is not used). */
static int scheme_item(const char *t, void *out, size_t i)
{
    (void)i;
    int s = 0;
    while (s < PING_NSCHEMES && strcasecmp(t, scheme_names[s]) != 0)
        s++;
    if (s == PING_NSCHEMES && strcasecmp(t, "sodium") == 0)
        s = PING_SODIUM;
    if (s == PING_NSCHEMES)
        return -1;
    *(unsigned *)out |= 1u << s;
    return 0;
}

/* The bad-size message names the ceiling literally (PING_MAX_MSG is "8192u", not printable text). */
_Static_assert(PING_MAX_MSG == 8192u, "update size_list's message with PING_MAX_MSG");
static const bench_list_spec size_list = {
    "--size", 256, "bad size", "sizes", "1..8192 bytes, or with K/KiB (e.g. 8,1K,8K)", NULL, size_item};
/* Items are not counted against a capacity: the 128-byte text bounds them. */
static const bench_list_spec scheme_list = {
    "--schemes", 128, "unknown scheme", "schemes", "none, sodium-ed25519, dsig", NULL, scheme_item};

/* Defaults: 8 B and 1 KiB, 1000 timed round trips per block, 3 runs, every scheme. */
static void ping_defaults(ping_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sizes[0] = 8;
    o->sizes[1] = 1024;
    o->nsizes = 2;
    o->count = 1000;
    o->warmup = 200;
    o->runs = 3;
    o->schemes = (1u << PING_NSCHEMES) - 1;
}

/* Parse `dsig ping` options; see ping_print_help. */
int ping_parse(int argc, char **argv, ping_opts *o, char *err, size_t errlen)
{
    ping_defaults(o);
    int warmup_set = 0, key_set = 0, peer_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        uint64_t u;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--size", &missing)) ||
                   (!missing && (v = bench_opt_value(argc, argv, &i, "--sizes", &missing)))) {
            if (bench_parse_list(&size_list, v, o->sizes, PING_MAX_SIZES, &o->nsizes, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--count", &missing))) {
            if (bench_parse_u64(v, 1, PING_MAX_COUNT, &u) != 0)
                return bench_fail(err, errlen, "--count: \"%s\" is not a number in 1..%u", v, PING_MAX_COUNT);
            o->count = (unsigned)u;
        } else if ((v = bench_opt_value(argc, argv, &i, "--warmup", &missing))) {
            if (bench_parse_u64(v, 0, PING_MAX_COUNT, &u) != 0)
                return bench_fail(err, errlen, "--warmup: \"%s\" is not a number in 0..%u", v, PING_MAX_COUNT);
            o->warmup = (unsigned)u;
            warmup_set = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--runs", &missing))) {
            if (bench_parse_u64(v, 1, PING_MAX_RUNS, &u) != 0)
                return bench_fail(err, errlen, "--runs: \"%s\" is not a number in 1..%u", v, PING_MAX_RUNS);
            o->runs = (unsigned)u;
        } else if ((v = bench_opt_value(argc, argv, &i, "--schemes", &missing))) {
            size_t nschemes;
            o->schemes = 0;
            if (bench_parse_list(&scheme_list, v, &o->schemes, SIZE_MAX, &nschemes, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--config", &missing))) {
            o->config = v;
        } else if ((v = bench_opt_value(argc, argv, &i, "--etcd", &missing))) {
            o->etcd = v;
        } else if ((v = bench_opt_value(argc, argv, &i, "--etcd-prefix", &missing))) {
            o->etcd_prefix = v;
        } else if ((v = bench_opt_value(argc, argv, &i, "--key", &missing))) {
            o->key = v;
            key_set = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--id", &missing))) {
            if (bench_parse_u64(v, 1, UINT64_C(0x7FFFFFFFFFFFFFFF), &u) != 0)
                return bench_fail(err, errlen, "--id: \"%s\" is not a node id (1..2^63-1)", v);
            o->id = u;
            o->have_id = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--peer", &missing))) {
            if (bench_parse_u64(v, 1, UINT64_C(0x7FFFFFFFFFFFFFFF), &u) != 0)
                return bench_fail(err, errlen, "--peer: \"%s\" is not a node id (1..2^63-1)", v);
            o->peer = u;
            peer_set = 1;
        } else if (missing) {
            return bench_fail(err, errlen, "%s needs a value", a);
        } else {
            return bench_fail(err, errlen, "unknown option \"%s\" (see dsig ping --help)", a);
        }
        if (missing)
            return bench_fail(err, errlen, "%s needs a value", a);
    }
    if (!warmup_set)
        o->warmup = o->count / 5 < 50 ? 50 : o->count / 5;
    if ((uint64_t)o->count * o->runs > 4000000u)
        return bench_fail(err, errlen, "--count x --runs: at most 4000000 round trips per scheme and size");
    if (o->config) {
        if (!o->have_id || !key_set)
            return bench_fail(err, errlen, "--config needs --id N (this node) and --key FILE (its Ed25519 private JWK)");
        if (peer_set && o->peer == o->id)
            return bench_fail(err, errlen, "--peer must name another node than --id");
        if (o->etcd && !peer_set)
            return bench_fail(err, errlen, "--etcd needs --peer M (the other end may not be in FILE)");
    } else if (o->have_id || key_set || peer_set || o->etcd) {
        return bench_fail(err, errlen, "--id, --key, --peer and --etcd only go with --config FILE");
    }
    if (o->etcd_prefix && !o->etcd)
        return bench_fail(err, errlen, "--etcd-prefix goes with --etcd");
    return 0;
}

/* Usage of `dsig ping`. */
void ping_print_help(FILE *f)
{
    fputs("Usage: dsig ping [options]\n"
          "       dsig ping --config FILE --id N --key KEY [--peer M] [options]\n"
          "       dsig ping --config FILE --id N --key KEY --peer M --etcd URL[,URL...] [options]\n"
          "\n"
          "The DSig paper's two-process ping-pong: sign -> send -> verify -> reply, with no signature,\n"
          "libsodium Ed25519 and DSig measured in the same run. Reports median/p90/p99 of the round trip,\n"
          "of sign, of one-way transmit and of verify, and checks the ping latency target: the latency DSig adds\n"
          "to the unsigned ping is at most 1/5 of what Ed25519 adds (PASS/FAIL).\n"
          "\n"
          "Without --config both ends run on this host: a child process answers over loopback TCP, with\n"
          "freshly generated keys (nothing written to disk).\n"
          "\n"
          "Options:\n"
          "  --size LIST      message sizes, 1 B .. 8 KiB, e.g. 8,1K,8K (default 8,1K)\n"
          "  --count N        timed round trips per scheme, size and run (default 1000)\n"
          "  --warmup N       untimed round trips before each block (default count/5, at least 50)\n"
          "  --runs N         repeat the sweep N times, schemes interleaved; samples pooled (default 3)\n"
          "  --schemes LIST   none,sodium-ed25519,dsig (default all three)\n"
          "  --json           one JSON object per scheme and size on stdout (notes and target on stderr)\n"
          "  -q, --quiet      no progress notes\n"
          "  --config FILE    membership file of `dsig node` (nodes: id, address, public_key JWK);\n"
          "                   run ONE end: the node with the lower id answers (listens on its address),\n"
          "                   the other one measures (connects to it)\n"
          "  --id N           this node's id in FILE\n"
          "  --key KEY        this node's Ed25519 private key (JWK file with \"d\")\n"
          "  --peer M         the other end (default: the only other node of FILE)\n"
          "  --etcd URLS      membership through etcd too (http://HOST:PORT, comma-separated): this\n"
          "                   node registers itself, the others (M included) are found there and may\n"
          "                   join and leave while it runs; FILE needs only this node's entry and its\n"
          "                   groups (docs/node.md \"Membership through etcd\")\n"
          "  --etcd-prefix P  etcd keys are P nodes/<id> (default dsig/)\n"
          "  -h, --help       this help\n"
          "\n"
          "Transmit is derived per round trip: (rtt - both signs - both verifies) / 2; \"none\" therefore\n"
          "shows the transport's one-way floor. Exit status: 0 done (whatever the target), 2 error.\n",
          f);
}
