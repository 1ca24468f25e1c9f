/*
 * bench/bench_ping.c — `dsig ping`: the two-process ping-pong of the DSig paper (OSDI '24, §8):
 * the initiator signs a message and sends it; the responder verifies it, signs the echoed message and
 * replies; the initiator verifies the reply. No signature ("none"), libsodium Ed25519 and DSig are
 * measured in the same run, interleaved per run, over the same connection (docs/benchmarks.md).
 *
 * Transport: the DSig node (include/dsig/node.h, docs/node.md) — the product a user deploys. Each end
 * is a node of a two-node membership (in memory in the self-contained mode, the --config file
 * otherwise); the ping messages are the node's APP frames (dsig_node_send_app / on_app), DSig signs
 * from the node's group pool (dsig_node_sign) and verifies through its verifier cache (dsig_node_verify),
 * and the batches, acknowledgements and re-syncs are the node's own background plane. Both ends run
 * the round trips on the node's plane thread: the responder answers inside on_app, and the initiator
 * chains its rounds there too (verify the reply, sign the next message, send), so no round trip pays a
 * cross-thread wake-up on either side; the main threads only exchange control messages.
 *
 * Timing (CLOCK_MONOTONIC, ns): the initiator brackets its own sign and verify; the responder brackets
 * its verify and sign and returns both in the reply header (outside the signed bytes). Per round trip:
 *   rtt      = initiator: before its sign .. after its verify of the reply
 *   transmit = (rtt - both signs - both verifies) / 2      (one way; derived as in the paper)
 * so "none" gives the transport's one-way floor. Before the warm-up and again before the timed rounds of
 * each block, both ends wait until their group pool is full and every batch with unused keys has been
 * verified, cached and acknowledged by the other end (dsig_node_wait_ready).
 *
 * Background CPU: each end notes, at the start of the timed rounds (the responder: its last SYNC) and
 * at their end (the responder: END), its process CPU time minus the CPU time of the node's plane thread
 * (which signs and verifies the round trips in the foreground; it also carries the plane's frames, a
 * small part) and of the idle main thread; the difference over the wall time between the two points
 * is the plane's cost in cores (key generation and batch verification threads). The responder returns
 * its figure in END_ACK.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "bench_internal.h"
#include "bench_ping.h"
#include "dsig/hybrid.h"
#include "dsig/jwk.h"
#include "dsig/node.h"
#include "net/net.h"

/* ------------------------------------------------------------------------------------------------ */
/* Parsing                                                                                          */
/* ------------------------------------------------------------------------------------------------ */

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
    } else if (o->have_id || key_set || peer_set) {
        return bench_fail(err, errlen, "--id, --key and --peer only go with --config FILE");
    }
    return 0;
}

/* Usage of `dsig ping`. */
void ping_print_help(FILE *f)
{
    fputs("Usage: dsig ping [options]\n"
          "       dsig ping --config FILE --id N --key KEY [--peer M] [options]\n"
          "\n"
          "The DSig paper's two-process ping-pong: sign -> send -> verify -> reply, with no signature,\n"
          "libsodium Ed25519 and DSig measured in the same run. Reports median/p90/p99 of the round trip,\n"
          "of sign, of one-way transmit and of verify, and checks the issue-5 target: the latency DSig adds\n"
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
          "  -h, --help       this help\n"
          "\n"
          "Transmit is derived per round trip: (rtt - both signs - both verifies) / 2; \"none\" therefore\n"
          "shows the transport's one-way floor. Exit status: 0 done (whatever the target), 2 error.\n",
          f);
}

/* ------------------------------------------------------------------------------------------------ */
/* Statistics and output                                                                            */
/* ------------------------------------------------------------------------------------------------ */

/* Median / p90 / p99 of v (sorted in place). */
ping_stat ping_stat_of(double *v, size_t n)
{
    ping_stat s = {0, 0, 0};
    if (n == 0)
        return s;
    bench_stat b = bench_stat_of(v, n);
    s.median = b.median;
    s.p90 = bench_percentile(v, n, 0.90);
    s.p99 = bench_percentile(v, n, 0.99);
    return s;
}

/* One JSON line per row; fast_path_fraction is null for the schemes without a fast path. */
void ping_json_row(FILE *f, const ping_row *r)
{
    fprintf(f,
            "{\"scheme\":\"%s\",\"msg_bytes\":%zu,\"sig_bytes\":%zu,\"rounds\":%u,\"runs\":%u,"
            "\"rtt_median_ns\":%.0f,\"rtt_p90_ns\":%.0f,\"rtt_p99_ns\":%.0f,"
            "\"sign_median_ns\":%.0f,\"sign_p90_ns\":%.0f,\"sign_p99_ns\":%.0f,"
            "\"transmit_median_ns\":%.0f,\"transmit_p90_ns\":%.0f,\"transmit_p99_ns\":%.0f,"
            "\"verify_median_ns\":%.0f,\"verify_p90_ns\":%.0f,\"verify_p99_ns\":%.0f,"
            "\"transmit_method\":\"derived\","
            "\"bg_cpu_core_fraction_initiator\":%.4f,\"bg_cpu_core_fraction_responder\":%.4f,",
            ping_scheme_name(r->scheme), r->msg_bytes, r->sig_bytes, r->rounds, r->runs, r->rtt.median,
            r->rtt.p90, r->rtt.p99, r->sign.median, r->sign.p90, r->sign.p99, r->transmit.median,
            r->transmit.p90, r->transmit.p99, r->verify.median, r->verify.p90, r->verify.p99,
            r->bg_cpu_initiator, r->bg_cpu_responder);
    if (r->fast_path_fraction < 0)
        fputs("\"fast_path_fraction\":null}\n", f);
    else
        fprintf(f, "\"fast_path_fraction\":%.4f}\n", r->fast_path_fraction);
}

/* Table header (microseconds). */
void ping_table_header(FILE *f)
{
    fprintf(f, "%-15s %6s %5s %7s | %-23s | %-23s | %-23s | %-23s | %5s | %s\n", "scheme", "bytes", "sig",
            "rounds", "rtt us  med/p90/p99", "sign us med/p90/p99", "transmit us med/p90/p99",
            "verify us med/p90/p99", "fast", "bg-cpu % of one core ini/rsp");
}

/* Three values in microseconds, fixed width. */
static void us3(FILE *f, const ping_stat *s)
{
    fprintf(f, "%7.2f %7.2f %7.2f", s->median / 1e3, s->p90 / 1e3, s->p99 / 1e3);
}

/* One table line. */
void ping_table_row(FILE *f, const ping_row *r)
{
    fprintf(f, "%-15s %6zu %5zu %7u | ", ping_scheme_name(r->scheme), r->msg_bytes, r->sig_bytes, r->rounds);
    us3(f, &r->rtt);
    fputs(" | ", f);
    us3(f, &r->sign);
    fputs(" | ", f);
    us3(f, &r->transmit);
    fputs(" | ", f);
    us3(f, &r->verify);
    if (r->fast_path_fraction < 0)
        fprintf(f, " | %5s", "-");
    else
        fprintf(f, " | %4.0f%%", r->fast_path_fraction * 100.0);
    fprintf(f, " | %6.1f %6.1f\n", r->bg_cpu_initiator * 100.0, r->bg_cpu_responder * 100.0);
}

/* The row of a scheme at a size, NULL if absent. */
static const ping_row *find_row(const ping_row *rows, size_t n, int scheme, size_t bytes)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].scheme == scheme && rows[i].msg_bytes == bytes)
            return &rows[i];
    return NULL;
}

/* PASS/FAIL/SKIP line of the issue-5 target at one size; 1 for FAIL. */
int ping_target(FILE *f, const ping_row *rows, size_t n, size_t msg_bytes)
{
    const ping_row *none = find_row(rows, n, PING_NONE, msg_bytes);
    const ping_row *sod = find_row(rows, n, PING_SODIUM, msg_bytes);
    const ping_row *ds = find_row(rows, n, PING_DSIG, msg_bytes);
    if (!none || !sod || !ds) {
        fprintf(f, "SKIP %zu B: DSig added latency <= 1/5 of Ed25519's: needs none, sodium-ed25519 and dsig rows\n",
                msg_bytes);
        return 0;
    }
    double add_d = ds->rtt.median - none->rtt.median;
    double add_s = sod->rtt.median - none->rtt.median;
    int pass = add_s > 0 && add_d <= add_s / 5.0;
    fprintf(f,
            "%s %zu B: DSig adds %.2f us to the unsigned ping (rtt median %.2f vs %.2f us), Ed25519 adds %.2f us;"
            " ratio %.3f (target <= 0.200; %.0f%% less added latency)\n",
            pass ? "PASS" : "FAIL", msg_bytes, add_d / 1e3, ds->rtt.median / 1e3, none->rtt.median / 1e3,
            add_s / 1e3, add_s > 0 ? add_d / add_s : 0.0, add_s > 0 ? 100.0 * (1.0 - add_d / add_s) : 0.0);
    return pass ? 0 : 1;
}

/* PASS/FAIL/SKIP line of the background-plane target at one size (DSig row); 1 for FAIL. */
int ping_target_bg(FILE *f, const ping_row *rows, size_t n, size_t msg_bytes)
{
    const ping_row *ds = find_row(rows, n, PING_DSIG, msg_bytes);
    if (!ds) {
        fprintf(f, "SKIP %zu B: background plane <= 1 core per process: needs a dsig row\n", msg_bytes);
        return 0;
    }
    int pass = ds->bg_cpu_initiator <= 1.0 && ds->bg_cpu_responder <= 1.0;
    fprintf(f,
            "%s %zu B: background plane <= 1 core per process: initiator %.1f%%, responder %.1f%% of one core"
            " (dsig timed rounds)\n",
            pass ? "PASS" : "FAIL", msg_bytes, ds->bg_cpu_initiator * 100.0, ds->bg_cpu_responder * 100.0);
    return pass ? 0 : 1;
}

/* ------------------------------------------------------------------------------------------------ */
/* Wire protocol: APP frames of the DSig node (include/dsig/node.h); all integers big-endian        */
/* ------------------------------------------------------------------------------------------------ */

/*
 * Every APP payload starts with a kind byte:
 * PM_HELLO     "DSPG" ‖ version u8 ‖ schemes u8 (10 B with the kind); the responder answers with its own.
 *              Who the peer is was settled by the node's authenticated HELLO (docs/node.md).
 * PM_PING/PONG round header (32 B, its first byte is the kind) ‖ message ‖ signature, header = kind u8 ‖
 *              scheme u8 ‖ flags u8 ‖ 0 u8 ‖ seq u32 ‖ responder verify ns u64 ‖ responder sign ns u64 ‖
 *              msg len u32 ‖ sig len u32. The message starts at offset 32 of the payload: aligned like
 *              the payload itself (an odd offset costs the 1 KiB fast-path verification ~2 us).
 * PM_SYNC      scheme u8: the responder waits until its group pool is full and every batch with unused
 *              keys is acknowledged by the initiator (dsig_node_wait_ready), notes its counters and
 *              answers PM_SYNC_ACK.
 * PM_END       the responder answers PM_END_ACK = fast u64 ‖ slow u64 (verifications since the SYNC) ‖
 *              background CPU ns u64 ‖ wall ns u64 (both since the SYNC) (32 B).
 * PM_BYE       the responder exits.
 * DSig's batches, acknowledgements and re-syncs are the node's own frames: nothing of ping's.
 */
#define PM_HELLO 0x01u
#define PM_PING 0x02u
#define PM_PONG 0x03u
#define PM_SYNC 0x04u
#define PM_SYNC_ACK 0x05u
#define PM_END 0x06u
#define PM_END_ACK 0x07u
#define PM_BYE 0x08u

#define PING_VERSION 3u        /* 3: over the DSig node's APP frames */
#define HELLO_BYTES 10u
#define END_ACK_BYTES 32u
#define RHDR 32u
#define FLAG_BAD 1u             /* the responder's verification failed */
#define SIG_CAP 4096u           /* a DSig signature of any preset fits */
#define FRAME_CAP (RHDR + PING_MAX_MSG + SIG_CAP)
#define REPLY_TIMEOUT_MS 20000
#define POOL_MAX 4096u          /* keys per pool at most (a config-mode responder always uses it) */

/* Big-endian stores and loads. */
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Monotonic nanoseconds. */
static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of a clock in ns (0 if the clock is unavailable). */
static uint64_t cpu_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------------------------------------ */
/* One end                                                                                          */
/* ------------------------------------------------------------------------------------------------ */

/* Keys of one end: its own Ed25519 key pair and the peer's public key, in both libraries' forms. */
typedef struct ping_keys {
    uint64_t self_id, peer_id;
    uint8_t sk[crypto_sign_SECRETKEYBYTES]; /* libsodium: seed ‖ public key */
    uint8_t peer_pk[crypto_sign_PUBLICKEYBYTES];
    dsig_key *ed_sk;                        /* the same key for the node (the sodium-ed25519 baseline
                                               signs under it too: harmless, DSig batch roots and node
                                               AUTH use keys derived from it, docs/dsig.md) */
    dsig_key *peer_ed_pk;
} ping_keys;

/* Per (size, scheme) sample storage, pooled over the runs. */
typedef struct samples {
    double *rtt, *sign, *verify, *transmit;
    size_t n;                    /* round trips stored */
    uint64_t fast, slow;
    uint64_t bg_ini, wall_ini, bg_rsp, wall_rsp; /* background CPU / wall ns of the timed rounds */
    size_t sig_bytes;
} samples;

/* State of one end. The node's plane thread runs on_app: the responder answers pings there and the
 * initiator runs its whole chain of round trips there (receive, verify, sign the next, send), so no
 * round trip pays a cross-thread wake-up. Control messages go through a one-slot mailbox to the main
 * thread, which may block (dsig_node_wait_ready) without stalling the plane. */
typedef struct ping_ep {
    int initiator;
    const ping_opts *o;
    ping_keys *k;
    dsig_node *node;
    char group[DSIG_NODE_MAX_NAME + 1];
    unsigned pool_keys, schemes;
    uint8_t *buf;                           /* FRAME_CAP: the frame being built (plane thread) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the plane thread's CPU clock, learned in its first on_app */
    clockid_t plane_clk;
    atomic_int have_plane_clk;
    /* mailbox (mu) */
    int got_ctrl;
    uint8_t ctrl_kind;
    uint32_t ctrl_len;
    uint8_t ctrl[END_ACK_BYTES];
    /* responder: counters noted at the last SYNC (main thread) */
    uint64_t fast0, slow0, bg0, wall0;
    /* initiator: the chain of round trips (set by the main thread before it sends the first ping, then
     * the plane thread's; chain_done under mu hands it back) */
    int scheme;
    size_t len;
    uint32_t seq;
    unsigned left;
    samples *rec;                           /* NULL for warm-up rounds */
    uint64_t t0, t1;
    int chain_done;
    uint64_t progress;                      /* rounds completed (mu) */
    /* first failure (mu) */
    atomic_int failed;
    char why[256];
} ping_ep;

/* Record the first failure of an end and wake its main thread. */
__attribute__((format(printf, 2, 3))) static void ep_fail(ping_ep *e, const char *fmt, ...)
{
    pthread_mutex_lock(&e->mu);
    if (!atomic_load(&e->failed)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->why, sizeof e->why, fmt, ap);
        va_end(ap);
        atomic_store(&e->failed, 1);
    }
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* CPU time of every thread of this process but the plane thread (the foreground sign / verify of the
 * round trips) and the calling one (the main thread, idle while rounds run), in ns. */
static uint64_t bg_cpu_ns(ping_ep *e)
{
    uint64_t self = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t plane = atomic_load(&e->have_plane_clk) ? cpu_ns(e->plane_clk) : 0;
    uint64_t all = cpu_ns(CLOCK_PROCESS_CPUTIME_ID); /* read last: never below the others */
    return all > self + plane ? all - self - plane : 0;
}

/* DSig verification counters of the node (fast, slow). */
static void node_fast_slow(ping_ep *e, uint64_t *fast, uint64_t *slow)
{
    dsig_node_stats st;
    dsig_node_stats_get(e->node, &st);
    *fast = st.verify_fast;
    *slow = st.verify_slow;
}

/* Sign msg with `scheme` into sig (SIG_CAP bytes). */
static int do_sign(ping_ep *e, int scheme, const uint8_t *msg, size_t len, uint8_t *sig, size_t *sig_len)
{
    switch (scheme) {
    case PING_NONE:
        *sig_len = 0;
        return DSIG_OK;
    case PING_SODIUM:
        *sig_len = crypto_sign_BYTES;
        return crypto_sign_detached(sig, NULL, msg, len, e->k->sk) == 0 ? DSIG_OK : DSIG_E_INTERNAL;
    default:
        return dsig_node_sign(e->node, e->group, msg, len, sig, SIG_CAP, sig_len);
    }
}

/* Verify the peer's signature with `scheme`. */
static int do_verify(ping_ep *e, int scheme, const uint8_t *msg, size_t len, const uint8_t *sig, size_t sig_len)
{
    switch (scheme) {
    case PING_NONE:
        return sig_len == 0 ? DSIG_OK : DSIG_E_VERIFY;
    case PING_SODIUM:
        return sig_len == crypto_sign_BYTES && crypto_sign_verify_detached(sig, msg, len, e->k->peer_pk) == 0
                   ? DSIG_OK
                   : DSIG_E_VERIFY;
    default:
        return dsig_node_verify(e->node, e->k->peer_id, msg, len, sig, sig_len);
    }
}

/* Round header fields. */
typedef struct rhdr {
    uint8_t kind, scheme, flags;
    uint32_t seq, msg_len, sig_len;
    uint64_t r_verify, r_sign;
} rhdr;

/* Write a round header. */
static void rhdr_put(uint8_t out[RHDR], const rhdr *h)
{
    memset(out, 0, RHDR);
    out[0] = h->kind;
    out[1] = h->scheme;
    out[2] = h->flags;
    put32(out + 4, h->seq);
    put64(out + 8, h->r_verify);
    put64(out + 16, h->r_sign);
    put32(out + 24, h->msg_len);
    put32(out + 28, h->sig_len);
}

/* Read and check a round payload (kind byte included): header, lengths, scheme. 0 or -1. */
static int rhdr_get(const uint8_t *p, size_t len, rhdr *h, const uint8_t **msg, const uint8_t **sig)
{
    if (len < RHDR)
        return -1;
    h->kind = p[0];
    h->scheme = p[1];
    h->flags = p[2];
    h->seq = get32(p + 4);
    h->r_verify = get64(p + 8);
    h->r_sign = get64(p + 16);
    h->msg_len = get32(p + 24);
    h->sig_len = get32(p + 28);
    if (h->scheme >= PING_NSCHEMES || h->msg_len > PING_MAX_MSG || h->sig_len > SIG_CAP ||
        (uint64_t)RHDR + h->msg_len + h->sig_len != len)
        return -1;
    *msg = p + RHDR;
    *sig = p + RHDR + h->msg_len;
    return 0;
}

/* Send a small control message (kind ‖ body) to the peer. */
static int send_ctrl(ping_ep *e, uint8_t kind, const void *body, size_t len)
{
    uint8_t b[1 + END_ACK_BYTES];
    if (len > END_ACK_BYTES)
        return DSIG_E_ARG;
    b[0] = kind;
    if (len)
        memcpy(b + 1, body, len);
    return dsig_node_send_app(e->node, e->k->peer_id, b, 1 + len);
}

/* Responder (plane thread): verify the ping, sign the echoed message, reply with both times. */
static void respond_ping(ping_ep *e, const uint8_t *p, size_t len)
{
    rhdr h;
    const uint8_t *msg, *sig;
    if (rhdr_get(p, len, &h, &msg, &sig) != 0 || !(e->schemes & (1u << h.scheme))) {
        ep_fail(e, "malformed ping frame");
        return;
    }
    uint8_t *out = e->buf, *omsg = out + RHDR, *osig = omsg + h.msg_len;
    uint64_t t0 = now_ns();
    int vrc = do_verify(e, h.scheme, msg, h.msg_len, sig, h.sig_len);
    uint64_t t1 = now_ns();
    memcpy(omsg, msg, h.msg_len); /* the echo: not timed (the signing below reads it in place) */
    uint64_t t2 = now_ns();
    size_t sl = 0;
    int src = do_sign(e, h.scheme, omsg, h.msg_len, osig, &sl);
    uint64_t t3 = now_ns();
    rhdr r = {.kind = PM_PONG, .scheme = h.scheme, .flags = vrc == DSIG_OK ? 0 : FLAG_BAD, .seq = h.seq,
              .msg_len = h.msg_len, .sig_len = (uint32_t)sl, .r_verify = t1 - t0, .r_sign = t3 - t2};
    if (src != DSIG_OK) {
        ep_fail(e, "responder: %s sign failed: %s", ping_scheme_name(h.scheme), dsig_strerror(src));
        r.flags |= FLAG_BAD;
        r.sig_len = 0;
    }
    rhdr_put(out, &r);
    int rc = dsig_node_send_app(e->node, e->k->peer_id, out, RHDR + h.msg_len + r.sig_len);
    if (rc != DSIG_OK)
        ep_fail(e, "responder: reply not sent: %s", dsig_strerror(rc));
}

/* Initiator (main thread for the first round of a chain, then the plane thread): sign round e->seq
 * and send it. The message lives in e->buf, where the reply's echo is compared. */
static int send_round(ping_ep *e)
{
    uint8_t *msg = e->buf + RHDR, *sig = msg + e->len;
    for (size_t b = 0; b < 4 && b < e->len; b++) /* distinct messages: the round number first */
        msg[b] = (uint8_t)(e->seq >> (8 * b));
    size_t sl = 0;
    e->t0 = now_ns();
    int rc = do_sign(e, e->scheme, msg, e->len, sig, &sl);
    e->t1 = now_ns();
    if (rc != DSIG_OK) {
        ep_fail(e, "%s sign failed: %s", ping_scheme_name(e->scheme), dsig_strerror(rc));
        return -1;
    }
    rhdr h = {.kind = PM_PING, .scheme = (uint8_t)e->scheme, .seq = e->seq, .msg_len = (uint32_t)e->len,
              .sig_len = (uint32_t)sl};
    rhdr_put(e->buf, &h);
    if ((rc = dsig_node_send_app(e->node, e->k->peer_id, e->buf, RHDR + e->len + sl)) != DSIG_OK) {
        ep_fail(e, "ping not sent: %s", dsig_strerror(rc));
        return -1;
    }
    return 0;
}

/* Initiator (plane thread): the reply of the current round, verified at once; the samples of the round
 * go to e->rec; then the next round is signed and sent from here, or the chain is handed back. */
static void take_pong(ping_ep *e, const uint8_t *p, size_t len)
{
    uint64_t t_arrive = now_ns();
    rhdr h;
    const uint8_t *msg, *sig;
    if (rhdr_get(p, len, &h, &msg, &sig) != 0 || !e->left || h.seq != e->seq || h.scheme != e->scheme) {
        ep_fail(e, "malformed or unexpected reply frame");
        return;
    }
    int vrc = do_verify(e, h.scheme, msg, h.msg_len, sig, h.sig_len);
    uint64_t t_verified = now_ns();
    if (h.flags & FLAG_BAD) {
        ep_fail(e, "the responder could not verify (or sign) a %s message", ping_scheme_name(h.scheme));
        return;
    }
    if (vrc != DSIG_OK) {
        ep_fail(e, "a %s reply did not verify: %s", ping_scheme_name(h.scheme), dsig_strerror(vrc));
        return;
    }
    if (h.msg_len != e->len || memcmp(msg, e->buf + RHDR, h.msg_len) != 0) {
        ep_fail(e, "the reply does not echo the message");
        return;
    }
    if (e->rec) {
        samples *S = e->rec;
        double rtt = (double)(t_verified - e->t0);
        double s_a = (double)(e->t1 - e->t0), v_a = (double)(t_verified - t_arrive);
        double s_b = (double)h.r_sign, v_b = (double)h.r_verify;
        size_t n = S->n++;
        S->rtt[n] = rtt;
        S->sign[2 * n] = s_a;
        S->sign[2 * n + 1] = s_b;
        S->verify[2 * n] = v_a;
        S->verify[2 * n + 1] = v_b;
        S->transmit[n] = (rtt - s_a - v_a - s_b - v_b) / 2.0;
    }
    e->seq++;
    e->left--;
    if (e->left && send_round(e) != 0)
        return;
    pthread_mutex_lock(&e->mu);
    e->progress++;
    if (!e->left) {
        e->chain_done = 1;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
}

/* The node's APP callback (plane thread): rounds here, control messages to the main thread. */
static void on_app(void *arg, uint64_t peer_id, const uint8_t *p, size_t len)
{
    ping_ep *e = arg;
    if (!atomic_load_explicit(&e->have_plane_clk, memory_order_relaxed)) {
        clockid_t c;
        if (pthread_getcpuclockid(pthread_self(), &c) == 0) {
            e->plane_clk = c;
            atomic_store(&e->have_plane_clk, 1);
        }
    }
    if (peer_id != e->k->peer_id || len < 1 || atomic_load_explicit(&e->failed, memory_order_relaxed))
        return; /* another configured node talking to us: not part of this run */
    if (p[0] == PM_PING && !e->initiator) {
        respond_ping(e, p, len);
        return;
    }
    if (p[0] == PM_PONG && e->initiator) {
        take_pong(e, p, len);
        return;
    }
    pthread_mutex_lock(&e->mu);
    if (e->got_ctrl || len - 1 > sizeof e->ctrl) {
        pthread_mutex_unlock(&e->mu);
        ep_fail(e, "unexpected control message 0x%02x (%zu bytes)", p[0], len);
        return;
    }
    e->ctrl_kind = p[0];
    e->ctrl_len = (uint32_t)(len - 1);
    memcpy(e->ctrl, p + 1, len - 1);
    e->got_ctrl = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* Main thread: wait ≤ timeout_ms for a control message (kind 0: any). 0, or -1 with the end failed. */
static int wait_ctrl(ping_ep *e, uint8_t kind, int timeout_ms, const char *what)
{
    uint64_t until = now_ns() + (uint64_t)timeout_ms * 1000000ull;
    pthread_mutex_lock(&e->mu);
    while (!e->got_ctrl && !atomic_load(&e->failed) && now_ns() < until) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
    }
    int got = e->got_ctrl;
    uint8_t k = e->ctrl_kind;
    e->got_ctrl = 0;
    pthread_mutex_unlock(&e->mu);
    if (atomic_load(&e->failed))
        return -1;
    if (!got) {
        ep_fail(e, "no %s from the peer within %d ms", what, timeout_ms);
        return -1;
    }
    if (kind && k != kind) {
        ep_fail(e, "expected %s from the peer, got message 0x%02x", what, k);
        return -1;
    }
    return 0;
}

/* Main thread: wait ≤ ms until the node's connection to the peer is up and authenticated. 0 or -1. */
static int wait_peer(ping_ep *e, int ms)
{
    uint64_t until = now_ns() + (uint64_t)ms * 1000000ull;
    while (!dsig_node_peer_up(e->node, e->k->peer_id)) {
        if (atomic_load(&e->failed))
            return -1;
        if (now_ns() > until) {
            ep_fail(e, "node %" PRIu64 " not connected within %d ms", e->k->peer_id, ms);
            return -1;
        }
        usleep(1000);
    }
    return 0;
}

/* Fill a ping HELLO body (after the kind byte). */
static void hello_put(const ping_ep *e, uint8_t out[HELLO_BYTES - 1])
{
    memcpy(out, "DSPG", 4);
    out[4] = PING_VERSION;
    out[5] = (uint8_t)e->schemes;
    memset(out + 6, 0, HELLO_BYTES - 7);
}

/* ------------------------------------------------------------------------------------------------ */
/* Keys and configuration                                                                           */
/* ------------------------------------------------------------------------------------------------ */

/* A JWK text for a DSig key (Ed25519 bound to "DSig"; with "d" when seed is not NULL) -> dsig_key. */
static int jwk_from_raw(const uint8_t pk[32], const uint8_t *seed, dsig_key **out)
{
    char x[64], d[64], text[256];
    sodium_bin2base64(x, sizeof x, pk, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    int n;
    if (seed) {
        sodium_bin2base64(d, sizeof d, seed, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        n = snprintf(text, sizeof text,
                     "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"alg\":\"DSig\",\"x\":\"%s\",\"d\":\"%s\"}", x, d);
    } else {
        n = snprintf(text, sizeof text, "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"alg\":\"DSig\",\"x\":\"%s\"}", x);
    }
    int rc = dsig_jwk_import(out, text, (size_t)n);
    dsig_memzero(text, sizeof text);
    dsig_memzero(d, sizeof d);
    return rc;
}

/* Decode a 32-byte base64url JWK member. 0 or -1. */
static int b64_32(json_t *obj, const char *name, uint8_t out[32])
{
    const char *s = json_string_value(json_object_get(obj, name));
    size_t n = 0;
    if (!s || sodium_base642bin(out, 32, s, strlen(s), NULL, &n, NULL,
                                sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 || n != 32)
        return -1;
    return 0;
}

/* Free keys (the secret is wiped). */
static void keys_free(ping_keys *k)
{
    dsig_key_free(k->ed_sk);
    dsig_key_free(k->peer_ed_pk);
    dsig_memzero(k->sk, sizeof k->sk);
    memset(k, 0, sizeof *k);
}

/* Self-contained mode: fresh key pairs for both ends (ids 1 = initiator, 2 = responder). */
static int keys_generate(ping_keys *ini, ping_keys *rsp, char *why, size_t whylen)
{
    uint8_t pk1[32], pk2[32];
    memset(ini, 0, sizeof *ini);
    memset(rsp, 0, sizeof *rsp);
    crypto_sign_keypair(pk1, ini->sk);
    crypto_sign_keypair(pk2, rsp->sk);
    ini->self_id = rsp->peer_id = 1;
    ini->peer_id = rsp->self_id = 2;
    memcpy(ini->peer_pk, pk2, 32);
    memcpy(rsp->peer_pk, pk1, 32);
    /* libsodium's secret key is seed ‖ public key: the seed is the JWK "d". */
    if (jwk_from_raw(pk1, ini->sk, &ini->ed_sk) || jwk_from_raw(pk2, rsp->sk, &rsp->ed_sk) ||
        jwk_from_raw(pk2, NULL, &ini->peer_ed_pk) || jwk_from_raw(pk1, NULL, &rsp->peer_ed_pk)) {
        snprintf(why, whylen, "key import: %s", dsig_last_error_detail());
        keys_free(ini);
        keys_free(rsp);
        return -1;
    }
    return 0;
}

/* Read a whole small file into a NUL-terminated buffer. */
static char *slurp(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
    fclose(f);
    if (!buf || n > max) {
        free(buf);
        errno = EFBIG;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/*
 * Config mode: this node's private key (--key), the peer's public key and both addresses from the
 * membership file of `dsig node` ({"nodes":[{"id","address","public_key",...}], ...}; only the members
 * ping needs are read here — `dsig node` validates the whole file).
 */
static int keys_from_config(const ping_opts *o, ping_keys *k, char self_addr[DSIG_NET_ADDR_TEXT_MAX],
                            char peer_addr[DSIG_NET_ADDR_TEXT_MAX], char *why, size_t whylen)
{
    memset(k, 0, sizeof *k);
    size_t len = 0;
    int rc = -1;
    json_t *cfg = NULL, *key = NULL;
    char *text = slurp(o->config, 1u << 20, &len);
    if (!text) {
        snprintf(why, whylen, "%s: %s", o->config, strerror(errno));
        return -1;
    }
    json_error_t je;
    cfg = json_loadb(text, len, 0, &je);
    free(text);
    json_t *nodes = cfg ? json_object_get(cfg, "nodes") : NULL;
    if (!json_is_array(nodes)) {
        snprintf(why, whylen, "%s: not a node configuration (%s)", o->config, cfg ? "no \"nodes\" array" : je.text);
        goto out;
    }
    json_t *self = NULL, *peer = NULL;
    size_t i, others = 0;
    json_t *nd;
    json_array_foreach(nodes, i, nd) {
        json_int_t id = json_integer_value(json_object_get(nd, "id"));
        if ((uint64_t)id == o->id)
            self = nd;
        else if (o->peer ? (uint64_t)id == o->peer : ++others == 1)
            peer = nd;
    }
    if (!self || !peer || (!o->peer && others != 1)) {
        snprintf(why, whylen, "%s: %s", o->config,
                 !self ? "no node with the --id given"
                 : !peer ? "no node with the --peer given"
                         : "more than two nodes: name the other end with --peer");
        goto out;
    }
    k->self_id = o->id;
    k->peer_id = (uint64_t)json_integer_value(json_object_get(peer, "id"));
    uint8_t self_pk[32], peer_pk[32];
    const char *sa = json_string_value(json_object_get(self, "address"));
    const char *pa = json_string_value(json_object_get(peer, "address"));
    if (!sa || !pa || strlen(sa) >= DSIG_NET_ADDR_TEXT_MAX || strlen(pa) >= DSIG_NET_ADDR_TEXT_MAX ||
        b64_32(json_object_get(self, "public_key"), "x", self_pk) ||
        b64_32(json_object_get(peer, "public_key"), "x", peer_pk)) {
        snprintf(why, whylen, "%s: nodes need \"address\" and an Ed25519 \"public_key\" JWK", o->config);
        goto out;
    }
    strcpy(self_addr, sa);
    strcpy(peer_addr, pa);
    memcpy(k->peer_pk, peer_pk, 32);
    text = slurp(o->key, DSIG_JWK_MAX_BYTES, &len);
    if (!text) {
        snprintf(why, whylen, "%s: %s", o->key, strerror(errno));
        goto out;
    }
    key = json_loadb(text, len, 0, &je);
    dsig_memzero(text, len);
    free(text);
    uint8_t seed[32], pk[32];
    const char *crv = json_string_value(json_object_get(key, "crv"));
    if (!crv || strcmp(crv, "Ed25519") != 0 || b64_32(key, "d", seed) != 0) {
        snprintf(why, whylen, "%s: not an Ed25519 private JWK (with \"d\")", o->key);
        goto out;
    }
    /* The node signs with it: a key made for DSig, never one that also signs plain Ed25519. */
    const char *kalg = json_string_value(json_object_get(key, "alg"));
    if (!kalg || strcmp(kalg, "DSig") != 0) {
        snprintf(why, whylen, "%s: not a DSig key (\"alg\":\"DSig\"): make one with `dsig keygen -a DSig`",
                 o->key);
        goto out;
    }
    crypto_sign_seed_keypair(pk, k->sk, seed);
    dsig_memzero(seed, sizeof seed);
    if (sodium_memcmp(pk, self_pk, 32) != 0) {
        snprintf(why, whylen, "%s is not the key of node %" PRIu64 " in %s", o->key, o->id, o->config);
        goto out;
    }
    if (jwk_from_raw(pk, k->sk, &k->ed_sk) || jwk_from_raw(peer_pk, NULL, &k->peer_ed_pk)) {
        snprintf(why, whylen, "key import: %s", dsig_last_error_detail());
        goto out;
    }
    rc = 0;
out:
    if (key) {
        /* jansson holds "d" as text: the tool's wiping allocator erases it on free. */
        json_decref(key);
    }
    json_decref(cfg);
    if (rc)
        keys_free(k);
    return rc;
}
/* ------------------------------------------------------------------------------------------------ */
/* Nodes                                                                                            */
/* ------------------------------------------------------------------------------------------------ */

/* Keys per pool for the initiator: every key a block uses is ready before it (capped at POOL_MAX). */
static unsigned pool_size(const ping_opts *o)
{
    uint64_t want = (uint64_t)o->count + o->warmup + 16;
    if (want < 512)
        want = 512;
    if (want > POOL_MAX)
        want = POOL_MAX;
    return (unsigned)want;
}

/* Verified batches cached per signer: twice a pool of `pool` keys (batches of 128), plus room. */
static unsigned cache_batches(unsigned pool)
{
    return pool / 128u * 2u + 32u;
}

/* Set up one end: its node (id k->self_id of cfg, not started) with ping's on_app, and the group both
 * ends share (the first by name; none = no DSig). 0 or -1 (e->why says why). */
static int ep_open(ping_ep *e, int initiator, const ping_opts *o, ping_keys *k, const dsig_node_config *cfg,
                   unsigned pool)
{
    memset(e, 0, sizeof *e);
    e->initiator = initiator;
    e->o = o;
    e->k = k;
    e->pool_keys = pool;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    atomic_init(&e->failed, 0);
    atomic_init(&e->have_plane_clk, 0);
    e->buf = malloc(FRAME_CAP);
    if (!e->buf) {
        ep_fail(e, "out of memory");
        return -1;
    }
    for (size_t gi = 0; gi < dsig_node_config_group_count(cfg) && !e->group[0]; gi++) {
        dsig_node_group g;
        int self = 0, peer = 0;
        if (dsig_node_config_group(cfg, gi, &g) != DSIG_OK)
            continue;
        for (size_t m = 0; m < g.n_members; m++) {
            self |= g.members[m] == k->self_id;
            peer |= g.members[m] == k->peer_id;
        }
        if (self && peer)
            snprintf(e->group, sizeof e->group, "%s", g.name);
    }
    dsig_node_options no;
    dsig_node_options_default(&no);
    no.pool_target = pool;
    no.cache_batches = cache_batches(pool);
    no.on_app = on_app;
    no.on_app_arg = e;
    int rc = dsig_node_new(&e->node, cfg, k->self_id, k->ed_sk, &no);
    if (rc != DSIG_OK) {
        ep_fail(e, "node %" PRIu64 ": %s: %s", k->self_id, dsig_strerror(rc), dsig_last_error_detail());
        return -1;
    }
    return 0;
}

/* Free an end (the node first: its plane thread uses the rest). */
static void ep_close(ping_ep *e)
{
    dsig_node_free(e->node);
    e->node = NULL;
    free(e->buf);
    e->buf = NULL;
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
}

/* Start an end's node (listen, connect, plane). 0 or -1. */
static int ep_start(ping_ep *e)
{
    int rc = dsig_node_start(e->node);
    if (rc != DSIG_OK) {
        ep_fail(e, "node %" PRIu64 ": %s", e->k->self_id, dsig_last_error_detail());
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Responder                                                                                        */
/* ------------------------------------------------------------------------------------------------ */

/* Responder main thread: one control message. 1 = BYE, 0 = go on, -1 = failed. */
static int respond_ctrl(ping_ep *e, uint8_t kind, const uint8_t *p, uint32_t len, int *hello)
{
    uint8_t out[END_ACK_BYTES] = {0};
    switch (kind) {
    case PM_HELLO:
        if (len != HELLO_BYTES - 1 || memcmp(p, "DSPG", 4) != 0 || p[4] != PING_VERSION) {
            ep_fail(e, "the peer is not a `dsig ping` end of this version");
            return -1;
        }
        e->schemes = p[5] & ((1u << PING_NSCHEMES) - 1);
        if ((e->schemes & (1u << PING_DSIG)) && !e->group[0]) {
            ep_fail(e, "nodes %" PRIu64 " and %" PRIu64 " share no group: no DSig", e->k->self_id, e->k->peer_id);
            return -1;
        }
        if (wait_peer(e, 30000) != 0)
            return -1;
        hello_put(e, out);
        *hello = 1;
        return send_ctrl(e, PM_HELLO, out, HELLO_BYTES - 1) == DSIG_OK ? 0 : (ep_fail(e, "HELLO not sent"), -1);
    case PM_SYNC:
        if (len != 1 || p[0] >= PING_NSCHEMES || !*hello) {
            ep_fail(e, "malformed SYNC");
            return -1;
        }
        if (p[0] == PING_DSIG) {
            /* our pool full, and every batch with unused keys cached and acknowledged by the peer */
            int rc = dsig_node_wait_ready(e->node, e->group, e->pool_keys, 120000);
            if (rc != DSIG_OK) {
                ep_fail(e, "responder pool: %s", dsig_last_error_detail());
                return -1;
            }
            node_fast_slow(e, &e->fast0, &e->slow0);
        }
        e->bg0 = bg_cpu_ns(e);
        e->wall0 = now_ns();
        return send_ctrl(e, PM_SYNC_ACK, p, 1) == DSIG_OK ? 0 : (ep_fail(e, "SYNC_ACK not sent"), -1);
    case PM_END: {
        uint64_t bg = bg_cpu_ns(e), wall = now_ns(), fast, slow;
        node_fast_slow(e, &fast, &slow);
        put64(out, fast - e->fast0);
        put64(out + 8, slow - e->slow0);
        put64(out + 16, bg >= e->bg0 ? bg - e->bg0 : 0);
        put64(out + 24, wall >= e->wall0 ? wall - e->wall0 : 0);
        return send_ctrl(e, PM_END_ACK, out, END_ACK_BYTES) == DSIG_OK ? 0 : (ep_fail(e, "END_ACK not sent"), -1);
    }
    case PM_BYE:
        return 1;
    default:
        ep_fail(e, "unknown control message 0x%02x", kind);
        return -1;
    }
}

/* Serve one initiator until BYE, or until it has been gone for 5 s. `ready_fd` >= 0 gets one byte once
 * the node listens (1) or failed to start (0) (self-contained mode). Exit code 0 / 2. */
static int responder_main(ping_ep *e, int ready_fd)
{
    int rc = ep_start(e);
    if (ready_fd >= 0) {
        uint8_t b = rc == 0;
        if (write(ready_fd, &b, 1) != 1)
            rc = -1;
        close(ready_fd);
    }
    if (rc != 0) {
        fprintf(stderr, "dsig ping (responder): %s\n", e->why);
        return 2;
    }
    if (!e->o->quiet && ready_fd < 0) {
        char a[DSIG_NET_ADDR_TEXT_MAX] = "?";
        (void)dsig_node_listen_address(e->node, a, sizeof a);
        fprintf(stderr, "# dsig ping: node %" PRIu64 " answering on %s\n", e->k->self_id, a);
    }
    int hello = 0, gone = 0;
    uint64_t away_since = 0;
    for (;;) {
        pthread_mutex_lock(&e->mu);
        if (!e->got_ctrl && !atomic_load(&e->failed)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 250 * 1000000L;
            ts.tv_sec += ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        }
        int got = e->got_ctrl;
        uint8_t kind = e->ctrl_kind, body[END_ACK_BYTES];
        uint32_t len = e->ctrl_len;
        memcpy(body, e->ctrl, sizeof body);
        e->got_ctrl = 0;
        pthread_mutex_unlock(&e->mu);
        if (atomic_load(&e->failed))
            break;
        if (got) {
            int r = respond_ctrl(e, kind, body, len, &hello);
            if (r != 0)
                break;
        }
        if (hello && !dsig_node_peer_up(e->node, e->k->peer_id)) {
            uint64_t t = now_ns();
            if (!away_since)
                away_since = t;
            else if (t - away_since > 5000000000ull) {
                gone = 1;
                break;
            }
        } else {
            away_since = 0;
        }
    }
    int code = atomic_load(&e->failed) && !gone ? 2 : 0;
    if (code)
        fprintf(stderr, "dsig ping (responder): %s\n", e->why);
    return code;
}

/* ------------------------------------------------------------------------------------------------ */
/* Initiator                                                                                        */
/* ------------------------------------------------------------------------------------------------ */

/* Both pools full and each end's batches cached and acknowledged at the other (SYNC -> SYNC_ACK). */
static int sync_peer(ping_ep *e, int scheme)
{
    if (scheme == PING_DSIG) {
        int rc = dsig_node_wait_ready(e->node, e->group, e->pool_keys, 120000);
        if (rc != DSIG_OK) {
            ep_fail(e, "initiator pool: %s", dsig_last_error_detail());
            return -1;
        }
    }
    uint8_t s = (uint8_t)scheme;
    if (send_ctrl(e, PM_SYNC, &s, 1) != DSIG_OK) {
        ep_fail(e, "SYNC not sent: %s", dsig_last_error_detail());
        return -1;
    }
    return wait_ctrl(e, PM_SYNC_ACK, 120000, "SYNC_ACK");
}

/* n round trips of `scheme` with a `len`-byte message (in e->buf), chained on the plane thread; samples
 * to rec (NULL: warm-up). 0 or -1. */
static int chain(ping_ep *e, int scheme, size_t len, unsigned n, samples *rec, uint32_t *seq)
{
    if (!n)
        return 0;
    pthread_mutex_lock(&e->mu);
    e->chain_done = 0;
    uint64_t seen = e->progress;
    pthread_mutex_unlock(&e->mu);
    e->scheme = scheme;
    e->len = len;
    e->seq = *seq;
    e->left = n;
    e->rec = rec;
    if (send_round(e) != 0) /* the plane thread owns the chain from here */
        return -1;
    uint64_t deadline = now_ns() + (uint64_t)REPLY_TIMEOUT_MS * 1000000ull;
    pthread_mutex_lock(&e->mu);
    while (!e->chain_done && !atomic_load(&e->failed)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        uint64_t t = now_ns();
        if (e->progress != seen) {
            seen = e->progress;
            deadline = t + (uint64_t)REPLY_TIMEOUT_MS * 1000000ull;
        } else if (t > deadline && !e->chain_done) {
            pthread_mutex_unlock(&e->mu);
            ep_fail(e, "no reply from the peer within %d ms", REPLY_TIMEOUT_MS);
            return -1;
        }
    }
    int ok = e->chain_done && !atomic_load(&e->failed);
    *seq = e->seq;
    pthread_mutex_unlock(&e->mu);
    return ok ? 0 : -1;
}

/* One block: sync, warm-up, sync, timed rounds, END. Samples appended to *S. */
static int block(ping_ep *e, int scheme, size_t len, samples *S, uint32_t *seq)
{
    const ping_opts *o = e->o;
    if (sync_peer(e, scheme) != 0 || chain(e, scheme, len, o->warmup, NULL, seq) != 0 || sync_peer(e, scheme) != 0)
        return -1;
    uint64_t fast0 = 0, slow0 = 0, fast1 = 0, slow1 = 0;
    node_fast_slow(e, &fast0, &slow0);
    uint64_t bg0 = bg_cpu_ns(e), w0 = now_ns();
    if (chain(e, scheme, len, o->count, S, seq) != 0)
        return -1;
    uint64_t bg1 = bg_cpu_ns(e), w1 = now_ns();
    node_fast_slow(e, &fast1, &slow1);
    S->bg_ini += bg1 >= bg0 ? bg1 - bg0 : 0;
    S->wall_ini += w1 - w0;
    if (send_ctrl(e, PM_END, NULL, 0) != DSIG_OK) {
        ep_fail(e, "END not sent");
        return -1;
    }
    if (wait_ctrl(e, PM_END_ACK, 30000, "END_ACK") != 0)
        return -1;
    pthread_mutex_lock(&e->mu);
    uint32_t cl = e->ctrl_len;
    uint8_t ack[END_ACK_BYTES];
    memcpy(ack, e->ctrl, sizeof ack);
    pthread_mutex_unlock(&e->mu);
    if (cl != END_ACK_BYTES) {
        ep_fail(e, "malformed END_ACK (%u bytes)", (unsigned)cl);
        return -1;
    }
    S->bg_rsp += get64(ack + 16);
    S->wall_rsp += get64(ack + 24);
    if (scheme == PING_DSIG) {
        S->fast += fast1 - fast0 + get64(ack);
        S->slow += slow1 - slow0 + get64(ack + 8);
    }
    S->sig_bytes = scheme == PING_NONE ? 0 : scheme == PING_SODIUM ? crypto_sign_BYTES
                                                                   : dsig_node_sig_bytes(e->node, e->group);
    return 0;
}

/* Start the node, HELLO, then every run x size x scheme block; rows out. `ready_fd` >= 0: wait for the
 * responder's start byte first (self-contained mode). Exit code. */
static int initiator_main(ping_ep *e, int ready_fd, ping_sink sink, void *ctx)
{
    const ping_opts *o = e->o;
    FILE *info = o->json ? stderr : stdout;
    int code = 2;
    size_t ncells = o->nsizes * PING_NSCHEMES;
    samples *S = calloc(ncells, sizeof *S);
    ping_row *rows = calloc(ncells, sizeof *rows);
    size_t per = (size_t)o->count * o->runs;
    int ok = S && rows;
    for (size_t c = 0; ok && c < ncells; c++) {
        if (!(o->schemes & (1u << (c % PING_NSCHEMES))))
            continue;
        S[c].rtt = malloc(per * sizeof(double));
        S[c].transmit = malloc(per * sizeof(double));
        S[c].sign = malloc(2 * per * sizeof(double));
        S[c].verify = malloc(2 * per * sizeof(double));
        ok = S[c].rtt && S[c].transmit && S[c].sign && S[c].verify;
    }
    if (!ok) {
        ep_fail(e, "out of memory");
        goto done;
    }
    e->schemes = o->schemes;
    if ((o->schemes & (1u << PING_DSIG)) && !e->group[0]) {
        ep_fail(e, "nodes %" PRIu64 " and %" PRIu64 " share no group: no DSig", e->k->self_id, e->k->peer_id);
        goto done;
    }
    if (ready_fd >= 0) {
        uint8_t b = 0;
        struct pollfd pl = {.fd = ready_fd, .events = POLLIN};
        if (poll(&pl, 1, 30000) != 1 || read(ready_fd, &b, 1) != 1 || b != 1) {
            ep_fail(e, "the responder process did not start");
            goto done;
        }
    }
    if (ep_start(e) != 0)
        goto done;
    if (!o->quiet)
        fprintf(stderr, "# dsig ping: node %" PRIu64 " -> node %" PRIu64 " (DSig group \"%s\")\n", e->k->self_id,
                e->k->peer_id, e->group[0] ? e->group : "-");
    if (wait_peer(e, 60000) != 0)
        goto done;
    uint8_t h[HELLO_BYTES - 1];
    hello_put(e, h);
    if (send_ctrl(e, PM_HELLO, h, sizeof h) != DSIG_OK) {
        ep_fail(e, "HELLO not sent");
        goto done;
    }
    if (wait_ctrl(e, PM_HELLO, 30000, "HELLO") != 0)
        goto done;

    uint32_t seq = 0;
    for (unsigned run = 0; run < o->runs; run++) {
        for (size_t si = 0; si < o->nsizes; si++) {
            bench_payload_fill(e->buf + RHDR, o->sizes[si], 0x70696e67u + si);
            for (int sc = 0; sc < PING_NSCHEMES; sc++) {
                if (!(o->schemes & (1u << sc)))
                    continue;
                if (!o->quiet)
                    fprintf(stderr, "# run %u/%u: %s, %zu B, %u round trips\n", run + 1, o->runs,
                            ping_scheme_name(sc), o->sizes[si], o->count);
                if (block(e, sc, o->sizes[si], &S[si * PING_NSCHEMES + sc], &seq) != 0)
                    goto done;
            }
        }
    }
    /* Rows, then the target per size. */
    if (!o->json)
        ping_table_header(stdout);
    size_t nrows = 0;
    for (size_t c = 0; c < ncells; c++) {
        samples *s = &S[c];
        if (!(o->schemes & (1u << (c % PING_NSCHEMES))))
            continue;
        ping_row *r = &rows[nrows++];
        r->scheme = (int)(c % PING_NSCHEMES);
        r->msg_bytes = o->sizes[c / PING_NSCHEMES];
        r->sig_bytes = s->sig_bytes;
        r->rounds = (unsigned)s->n;
        r->runs = o->runs;
        r->rtt = ping_stat_of(s->rtt, s->n);
        r->sign = ping_stat_of(s->sign, 2 * s->n);
        r->verify = ping_stat_of(s->verify, 2 * s->n);
        r->transmit = ping_stat_of(s->transmit, s->n);
        r->fast_path_fraction = r->scheme == PING_DSIG && s->fast + s->slow
                                    ? (double)s->fast / (double)(s->fast + s->slow)
                                    : -1.0;
        r->bg_cpu_initiator = s->wall_ini ? (double)s->bg_ini / (double)s->wall_ini : 0.0;
        r->bg_cpu_responder = s->wall_rsp ? (double)s->bg_rsp / (double)s->wall_rsp : 0.0;
        if (o->json)
            ping_json_row(stdout, r);
        else
            ping_table_row(stdout, r);
        if (sink)
            sink(ctx, r);
    }
    fflush(stdout);
    const ping_row *floor_row = NULL;
    for (size_t i = 0; i < nrows && !floor_row; i++)
        if (rows[i].scheme == PING_NONE)
            floor_row = &rows[i];
    if (floor_row)
        fprintf(info, "# transport floor (none, %zu B): one way %.2f us median, rtt %.2f us\n",
                floor_row->msg_bytes, floor_row->transmit.median / 1e3, floor_row->rtt.median / 1e3);
    for (size_t si = 0; si < o->nsizes; si++)
        (void)ping_target(info, rows, nrows, o->sizes[si]);
    for (size_t si = 0; si < o->nsizes; si++)
        (void)ping_target_bg(info, rows, nrows, o->sizes[si]);
    dsig_node_stats ns;
    dsig_node_stats_get(e->node, &ns);
    if (ns.batches_send_failed || ns.drop_bad_signature || ns.drop_queue_full)
        fprintf(info, "# note: node: %" PRIu64 " batch sends refused by a full queue (retried), %" PRIu64
                " bad batches, %" PRIu64 " batches dropped (queue full)\n",
                ns.batches_send_failed, ns.drop_bad_signature, ns.drop_queue_full);
    code = 0;
done:
    if (e->node && dsig_node_peer_up(e->node, e->k->peer_id)) {
        (void)send_ctrl(e, PM_BYE, NULL, 0);
        usleep(20000); /* let the plane write it before the node closes the connection */
    }
    if (atomic_load(&e->failed)) {
        fprintf(stderr, "dsig ping: %s\n", e->why);
        code = 2;
    }
    for (size_t c = 0; S && c < ncells; c++) {
        free(S[c].rtt);
        free(S[c].transmit);
        free(S[c].sign);
        free(S[c].verify);
    }
    free(S);
    free(rows);
    return code;
}

/* ------------------------------------------------------------------------------------------------ */
/* Modes                                                                                            */
/* ------------------------------------------------------------------------------------------------ */

/* Two free loopback TCP ports (bound together, then released for the nodes). 0 or -1. */
static int reserve_ports(unsigned port[2])
{
    int fd[2] = {-1, -1}, rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&a, sizeof a) != 0 ||
            getsockname(fd[i], (struct sockaddr *)&a, &al) != 0)
            rc = -1;
        else
            port[i] = ntohs(a.sin_port);
    }
    for (int i = 0; i < 2; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    return rc;
}

/* The in-memory membership of the self-contained mode: nodes 1 (initiator) and 2 (responder) on
 * loopback TCP, both in group "ping" (default DSig preset). NULL on failure. */
static dsig_node_config *local_config(const ping_keys *ini, const ping_keys *rsp, const unsigned port[2])
{
    char x1[64], x2[64], text[1024];
    sodium_bin2base64(x1, sizeof x1, ini->sk + 32, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_bin2base64(x2, sizeof x2, rsp->sk + 32, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    int n = snprintf(text, sizeof text,
                     "{\"nodes\":["
                     "{\"id\":1,\"address\":\"tcp:127.0.0.1:%u\",\"public_key\":{\"kty\":\"OKP\",\"crv\":"
                     "\"Ed25519\",\"alg\":\"DSig\",\"x\":\"%s\"},\"groups\":[\"ping\"]},"
                     "{\"id\":2,\"address\":\"tcp:127.0.0.1:%u\",\"public_key\":{\"kty\":\"OKP\",\"crv\":"
                     "\"Ed25519\",\"alg\":\"DSig\",\"x\":\"%s\"},\"groups\":[\"ping\"]}],"
                     "\"groups\":{\"ping\":{\"params\":\"wots4-haraka-b128\"}}}",
                     port[0], x1, port[1], x2);
    dsig_node_config *cfg = NULL;
    if (n <= 0 || (size_t)n >= sizeof text || dsig_node_config_parse(text, (size_t)n, &cfg) != DSIG_OK)
        return NULL;
    return cfg;
}

/* Self-contained: fork a responder child; both ends are nodes on loopback TCP, keys in memory. */
static int run_local(const ping_opts *o, ping_sink sink, void *ctx)
{
    ping_keys ini, rsp;
    char why[256];
    unsigned port[2];
    if (keys_generate(&ini, &rsp, why, sizeof why) != 0) {
        fprintf(stderr, "dsig ping: %s\n", why);
        return 2;
    }
    dsig_node_config *cfg = reserve_ports(port) == 0 ? local_config(&ini, &rsp, port) : NULL;
    int pfd[2] = {-1, -1};
    if (!cfg || pipe(pfd) != 0) {
        fprintf(stderr, "dsig ping: %s\n", cfg ? strerror(errno) : "no loopback ports / configuration");
        dsig_node_config_free(cfg);
        keys_free(&ini);
        keys_free(&rsp);
        return 2;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork(); /* before any node exists: no threads to lose */
    if (pid < 0) {
        fprintf(stderr, "dsig ping: fork: %s\n", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        dsig_node_config_free(cfg);
        keys_free(&ini);
        keys_free(&rsp);
        return 2;
    }
    if (pid == 0) {
        /* The child: the responder. It never outlives the measuring parent. */
        close(pfd[0]);
        keys_free(&ini);
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(2);
        ping_ep e;
        int code = 2;
        if (ep_open(&e, 0, o, &rsp, cfg, pool_size(o)) == 0)
            code = responder_main(&e, pfd[1]);
        else {
            fprintf(stderr, "dsig ping (responder): %s\n", e.why);
            uint8_t b = 0;
            if (write(pfd[1], &b, 1) != 1)
                code = 2;
            close(pfd[1]);
        }
        ep_close(&e);
        dsig_node_config_free(cfg);
        keys_free(&rsp);
        fflush(stderr);
        _exit(code);
    }
    close(pfd[1]);
    keys_free(&rsp);
    ping_ep e;
    int code = 2;
    if (ep_open(&e, 1, o, &ini, cfg, pool_size(o)) == 0)
        code = initiator_main(&e, pfd[0], sink, ctx);
    else
        fprintf(stderr, "dsig ping: %s\n", e.why);
    ep_close(&e);
    dsig_node_config_free(cfg);
    close(pfd[0]);
    if (code != 0)
        kill(pid, SIGTERM);
    int st = 0;
    if (waitpid(pid, &st, 0) == pid && code == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        fprintf(stderr, "dsig ping: the responder process failed\n");
        code = 2;
    }
    keys_free(&ini);
    return code;
}

/* Config mode: one end, a node of the membership file; the lower id answers, the higher id measures. */
static int run_config(const ping_opts *o, ping_sink sink, void *ctx)
{
    ping_keys k;
    char self_addr[DSIG_NET_ADDR_TEXT_MAX], peer_addr[DSIG_NET_ADDR_TEXT_MAX], why[512];
    if (keys_from_config(o, &k, self_addr, peer_addr, why, sizeof why) != 0) {
        fprintf(stderr, "dsig ping: %s\n", why);
        return 2;
    }
    dsig_node_config *cfg = NULL;
    if (dsig_node_config_load(o->config, &cfg) != DSIG_OK) {
        fprintf(stderr, "dsig ping: %s\n", dsig_last_error_detail());
        keys_free(&k);
        return 2;
    }
    int responder = k.self_id < k.peer_id;
    ping_ep e;
    int code = 2;
    /* the responder cannot know the initiator's --count: it keeps the largest pool */
    if (ep_open(&e, !responder, o, &k, cfg, responder ? POOL_MAX : pool_size(o)) != 0)
        fprintf(stderr, "dsig ping: %s\n", e.why);
    else
        code = responder ? responder_main(&e, -1) : initiator_main(&e, -1, sink, ctx);
    ep_close(&e);
    dsig_node_config_free(cfg);
    keys_free(&k);
    return code;
}

/* Run with parsed options. */
int ping_run(const ping_opts *o, ping_sink sink, void *ctx)
{
    if (sodium_init() < 0) {
        fprintf(stderr, "dsig ping: libsodium unusable\n");
        return 2;
    }
    if (!o->quiet)
        fprintf(stderr,
                "# dsig ping: %u run(s) x %zu size(s); per block %u warm-up + %u timed round trips; "
                "transmit = (rtt - signs - verifies) / 2\n",
                o->runs, o->nsizes, o->warmup, o->count);
    return o->config ? run_config(o, sink, ctx) : run_local(o, sink, ctx);
}

/* `dsig ping` entry point. */
int dsig_ping_main(int argc, char **argv)
{
    ping_opts o;
    char err[BENCH_ERR_LEN];
    int r = ping_parse(argc, argv, &o, err, sizeof err);
    if (r == 1) {
        ping_print_help(stdout);
        return 0;
    }
    if (r < 0) {
        fprintf(stderr, "dsig ping: %s\n", err);
        return 2;
    }
    return ping_run(&o, NULL, NULL);
}
