/*
 * bench/bench_ping.c — `dsig ping`: the two-process ping-pong of the DSig paper (OSDI '24, §8):
 * the initiator signs a message and sends it; the responder verifies it, signs the echoed message and
 * replies; the initiator verifies the reply. No signature ("none"), libsodium Ed25519 and DSig are
 * measured in the same run, interleaved per run, over the same connection (docs/benchmarks.md).
 *
 * Transport: src/net (framed TCP, TCP_NODELAY). The initiator runs the event loop on its own timing
 * thread (dsig_net_loop_run_once between its sign and its verify), so a round trip has no cross-thread
 * wake-up on that side; the responder answers inside the loop callback. DSig's background plane runs
 * beside it: each end's signer threads push every new batch message to the peer (frame PF_BATCH), whose
 * verifier checks the Ed25519 root in a background thread and caches the batch (the fast path).
 *
 * Timing (CLOCK_MONOTONIC, ns): the initiator brackets its own sign and verify; the responder brackets
 * its verify and sign and returns both in the reply header (outside the signed bytes). Per round trip:
 *   rtt      = initiator: before its sign .. after its verify of the reply
 *   transmit = (rtt - both signs - both verifies) / 2      (one way; derived as in the paper)
 * so "none" gives the transport's one-way floor. Before the timed rounds of each block, both DSig pools
 * are filled and each end has flushed its verifier (every batch of the peer's pool is cached), then
 * untimed warm-up rounds run.
 *
 * Background CPU: each end notes, at the start of the timed rounds (the responder: its last SYNC) and
 * at their end (the responder: END), its process CPU time minus the CPU time of the thread running its
 * event loop (the thread that signs and verifies in the foreground); the difference over the wall time
 * between the two points is the plane's cost in cores. The responder returns its figure in END_ACK.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
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
    fputs("usage: dsig ping [options]\n"
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
/* Wire protocol (application frame types of src/net; all integers big-endian)                      */
/* ------------------------------------------------------------------------------------------------ */

/*
 * PF_HELLO     initiator -> responder: magic "DSPG" ‖ version u8 ‖ initiator id u64 ‖ schemes u8 ‖
 *              pool keys u32 ‖ cache batches u32 (22 B); the responder answers with its own HELLO.
 * PF_BATCH     a DSig batch message of the sender's signer (to the peer's verifier).
 * PF_PING/PONG round header (32 B) ‖ message ‖ signature, header = scheme u8 ‖ flags u8 ‖ 0 u16 ‖
 *              seq u32 ‖ responder verify ns u64 ‖ responder sign ns u64 ‖ msg len u32 ‖ sig len u32.
 * PF_SYNC      scheme u8: the responder fills its pool, flushes its verifier, notes its counters and
 *              answers PF_SYNC_ACK (its DSig batches, all sent before the ACK, precede it on the stream).
 * PF_END       the responder answers PF_END_ACK = fast u64 ‖ slow u64 (verifications since the SYNC) ‖
 *              background CPU ns u64 ‖ wall ns u64 (both since the SYNC) (32 B).
 * PF_BYE       the responder exits.
 */
#define PF_HELLO 0x40u
#define PF_BATCH 0x41u
#define PF_PING 0x42u
#define PF_PONG 0x43u
#define PF_SYNC 0x44u
#define PF_SYNC_ACK 0x45u
#define PF_END 0x46u
#define PF_END_ACK 0x47u
#define PF_BYE 0x48u

#define PING_VERSION 2u        /* 2: END_ACK carries the background CPU time */
#define HELLO_BYTES 22u
#define END_ACK_BYTES 32u
#define RHDR 32u
#define FLAG_BAD 1u             /* the responder's verification failed */
#define SIG_CAP 4096u           /* a DSig signature of any preset fits */
#define REPLY_TIMEOUT_MS 20000

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

/* CPU time of every thread of this process but the calling one (the loop / timing thread), in ns. */
static uint64_t bg_cpu_ns(void)
{
    uint64_t self = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t all = cpu_ns(CLOCK_PROCESS_CPUTIME_ID); /* read second: never below self */
    return all > self ? all - self : 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* One end                                                                                          */
/* ------------------------------------------------------------------------------------------------ */

/* Keys of one end: its own Ed25519 key pair and the peer's public key, in both libraries' forms. */
typedef struct ping_keys {
    uint64_t self_id, peer_id;
    uint8_t sk[crypto_sign_SECRETKEYBYTES]; /* libsodium: seed ‖ public key */
    uint8_t peer_pk[crypto_sign_PUBLICKEYBYTES];
    dsig_key *ed_sk;                        /* the same key for the DSig signer */
    dsig_key *peer_ed_pk;
} ping_keys;

/* State of one end (the loop callback's argument). */
typedef struct ping_ep {
    int initiator;
    const ping_opts *o;
    ping_keys *k;
    dsig_net_loop *loop;
    uint64_t conn;
    int up, down, hello;
    unsigned pool_keys, cache_batches, schemes;
    dsig_hybrid_signer *signer;
    dsig_hybrid_verifier *verifier;
    atomic_uint batch_send_errors;
    uint8_t *sig;                           /* SIG_CAP bytes */
    /* responder: counters noted at the last SYNC */
    uint64_t fast0, slow0;
    uint64_t bg0, wall0;                    /* background CPU and wall clock at the last SYNC */
    /* initiator: the reply of the current round / control answer */
    int got;
    uint32_t want_seq;
    int want_scheme;
    uint64_t t_arrive, t_verified, r_verify, r_sign;
    const uint8_t *expect_msg;
    size_t expect_len;
    int got_ctrl;
    uint32_t ctrl_len;
    uint8_t ctrl[END_ACK_BYTES];
    /* first failure */
    int failed;
    char why[256];
} ping_ep;

/* Record the first failure of an end. */
__attribute__((format(printf, 2, 3))) static void ep_fail(ping_ep *e, const char *fmt, ...)
{
    if (e->failed)
        return;
    e->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof e->why, fmt, ap);
    va_end(ap);
}

/* Signer callback (background thread): push each new batch message to the peer before its keys sign. */
static void on_batch(void *arg, uint64_t signer_id, const uint8_t *msg, size_t len)
{
    ping_ep *e = arg;
    (void)signer_id;
    if (dsig_net_send_wait(e->loop, e->conn, PF_BATCH, msg, len, 5000) != DSIG_OK)
        atomic_fetch_add(&e->batch_send_errors, 1);
}

/* Start this end's DSig plane: a signer whose batches go to the peer, a verifier for the peer's. */
static int ep_dsig_open(ping_ep *e)
{
    dsig_hybrid_verifier_options vo;
    dsig_hybrid_verifier_options_default(&vo);
    vo.cache_batches = e->cache_batches;
    vo.max_signers = 4;
    vo.threads = 1;
    int rc = dsig_hybrid_verifier_new(&e->verifier, NULL, &vo);
    if (rc == DSIG_OK)
        rc = dsig_hybrid_verifier_add_signer(e->verifier, e->k->peer_id, e->k->peer_ed_pk);
    if (rc != DSIG_OK) {
        ep_fail(e, "DSig verifier: %s: %s", dsig_strerror(rc), dsig_last_error_detail());
        return rc;
    }
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.pool_target = e->pool_keys;
    so.threads = 1;
    so.signer_id = e->k->self_id;
    so.on_batch = on_batch;
    so.on_batch_arg = e;
    rc = dsig_hybrid_signer_new(&e->signer, e->k->ed_sk, NULL, &so);
    if (rc != DSIG_OK)
        ep_fail(e, "DSig signer: %s: %s", dsig_strerror(rc), dsig_last_error_detail());
    return rc;
}

/* Stop the DSig plane (signer first: its callback sends through the loop). */
static void ep_dsig_close(ping_ep *e)
{
    dsig_hybrid_signer_free(e->signer);
    e->signer = NULL;
    dsig_hybrid_verifier_free(e->verifier);
    e->verifier = NULL;
}

/* Sign msg with `scheme` into e->sig. */
static int do_sign(ping_ep *e, int scheme, const uint8_t *msg, size_t len, size_t *sig_len)
{
    switch (scheme) {
    case PING_NONE:
        *sig_len = 0;
        return DSIG_OK;
    case PING_SODIUM:
        *sig_len = crypto_sign_BYTES;
        return crypto_sign_detached(e->sig, NULL, msg, len, e->k->sk) == 0 ? DSIG_OK : DSIG_E_INTERNAL;
    default:
        return dsig_hybrid_sign(e->signer, msg, len, e->sig, SIG_CAP, sig_len);
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
        return dsig_hybrid_verify(e->verifier, e->k->peer_id, msg, len, sig, sig_len);
    }
}

/* Round header fields. */
typedef struct rhdr {
    uint8_t scheme, flags;
    uint32_t seq, msg_len, sig_len;
    uint64_t r_verify, r_sign;
} rhdr;

/* Write a round header. */
static void rhdr_put(uint8_t out[RHDR], const rhdr *h)
{
    memset(out, 0, RHDR);
    out[0] = h->scheme;
    out[1] = h->flags;
    put32(out + 4, h->seq);
    put64(out + 8, h->r_verify);
    put64(out + 16, h->r_sign);
    put32(out + 24, h->msg_len);
    put32(out + 28, h->sig_len);
}

/* Read and check a round frame: header, lengths, scheme. 0 or -1. */
static int rhdr_get(const uint8_t *p, uint32_t len, rhdr *h, const uint8_t **msg, const uint8_t **sig)
{
    if (len < RHDR)
        return -1;
    h->scheme = p[0];
    h->flags = p[1];
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

/* Responder: verify the ping, sign the echoed message, reply with both times in the header. */
static void respond_ping(ping_ep *e, const uint8_t *p, uint32_t len)
{
    rhdr h;
    const uint8_t *msg, *sig;
    if (rhdr_get(p, len, &h, &msg, &sig) != 0 || !(e->schemes & (1u << h.scheme)) ||
        (h.scheme == PING_DSIG && !e->signer)) {
        ep_fail(e, "malformed ping frame");
        dsig_net_loop_stop(e->loop);
        return;
    }
    uint64_t t0 = now_ns();
    int vrc = do_verify(e, h.scheme, msg, h.msg_len, sig, h.sig_len);
    uint64_t t1 = now_ns();
    size_t sl = 0;
    int src = do_sign(e, h.scheme, msg, h.msg_len, &sl);
    uint64_t t2 = now_ns();
    rhdr r = {.scheme = h.scheme, .flags = vrc == DSIG_OK ? 0 : FLAG_BAD, .seq = h.seq,
              .msg_len = h.msg_len, .sig_len = (uint32_t)sl, .r_verify = t1 - t0, .r_sign = t2 - t1};
    if (src != DSIG_OK) {
        ep_fail(e, "responder: %s sign failed: %s", ping_scheme_name(h.scheme), dsig_strerror(src));
        r.flags |= FLAG_BAD;
        r.sig_len = 0;
    }
    uint8_t hb[RHDR];
    rhdr_put(hb, &r);
    struct iovec iov[3] = {{hb, RHDR}, {(void *)msg, h.msg_len}, {e->sig, r.sig_len}};
    int rc = dsig_net_sendv(e->loop, e->conn, PF_PONG, iov, 3);
    if (rc != DSIG_OK)
        ep_fail(e, "responder: reply not sent: %s", dsig_strerror(rc));
}

/* Initiator: the reply of the current round; verified here, on the timing thread, at once. */
static void take_pong(ping_ep *e, const uint8_t *p, uint32_t len)
{
    uint64_t t = now_ns();
    rhdr h;
    const uint8_t *msg, *sig;
    if (rhdr_get(p, len, &h, &msg, &sig) != 0 || h.seq != e->want_seq || h.scheme != e->want_scheme) {
        ep_fail(e, "malformed or unexpected reply frame");
        return;
    }
    int vrc = do_verify(e, h.scheme, msg, h.msg_len, sig, h.sig_len);
    e->t_verified = now_ns();
    e->t_arrive = t;
    e->r_verify = h.r_verify;
    e->r_sign = h.r_sign;
    e->got = 1;
    if (h.flags & FLAG_BAD)
        ep_fail(e, "the responder could not verify (or sign) a %s message", ping_scheme_name(h.scheme));
    else if (vrc != DSIG_OK)
        ep_fail(e, "a %s reply did not verify: %s", ping_scheme_name(h.scheme), dsig_strerror(vrc));
    else if (h.msg_len != e->expect_len || memcmp(msg, e->expect_msg, h.msg_len) != 0)
        ep_fail(e, "the reply does not echo the message");
}

/* Both ends: HELLO. The responder learns the run's parameters, starts DSig and answers. */
static void take_hello(ping_ep *e, const uint8_t *p, uint32_t len)
{
    if (len != HELLO_BYTES || memcmp(p, "DSPG", 4) != 0 || p[4] != PING_VERSION) {
        ep_fail(e, "the peer is not a `dsig ping` end of this version");
        dsig_net_loop_stop(e->loop);
        return;
    }
    if (get64(p + 5) != e->k->peer_id) {
        ep_fail(e, "the peer says it is node %" PRIu64 ", expected %" PRIu64, get64(p + 5), e->k->peer_id);
        dsig_net_loop_stop(e->loop);
        return;
    }
    if (!e->initiator) {
        e->schemes = p[13] & ((1u << PING_NSCHEMES) - 1);
        e->pool_keys = get32(p + 14);
        e->cache_batches = get32(p + 18);
        if (e->pool_keys < 1 || e->pool_keys > 65536 || e->cache_batches < 32 || e->cache_batches > 4096) {
            ep_fail(e, "HELLO with out-of-range pool size");
            dsig_net_loop_stop(e->loop);
            return;
        }
        if ((e->schemes & (1u << PING_DSIG)) && !e->signer && ep_dsig_open(e) != DSIG_OK) {
            dsig_net_loop_stop(e->loop);
            return;
        }
    }
    e->hello = 1;
}

/* Fill a HELLO (22 bytes). */
static void hello_put(const ping_ep *e, uint8_t out[HELLO_BYTES])
{
    memcpy(out, "DSPG", 4);
    out[4] = PING_VERSION;
    put64(out + 5, e->k->self_id);
    out[13] = (uint8_t)e->schemes;
    put32(out + 14, e->pool_keys);
    put32(out + 18, e->cache_batches);
}

/* Responder: a SYNC on the loop thread (waiting here is fine: the initiator waits for the ACK). */
static void respond_sync(ping_ep *e, const uint8_t *p, uint32_t len)
{
    if (len != 1 || p[0] >= PING_NSCHEMES) {
        ep_fail(e, "malformed SYNC");
        dsig_net_loop_stop(e->loop);
        return;
    }
    if (p[0] == PING_DSIG && e->signer) {
        int rc = dsig_hybrid_signer_wait_ready(e->signer, e->pool_keys);
        if (rc != DSIG_OK)
            ep_fail(e, "responder pool: %s", dsig_strerror(rc));
        dsig_hybrid_verifier_flush(e->verifier);
        dsig_hybrid_verifier_stats st;
        dsig_hybrid_verifier_stats_get(e->verifier, &st);
        e->fast0 = st.fast;
        e->slow0 = st.slow;
    }
    e->bg0 = bg_cpu_ns();
    e->wall0 = now_ns();
    uint8_t ack = p[0];
    if (dsig_net_send(e->loop, e->conn, PF_SYNC_ACK, &ack, 1) != DSIG_OK)
        ep_fail(e, "responder: SYNC_ACK not sent");
}

/* Responder: END -> fast / slow verification counts since the last SYNC. */
static void respond_end(ping_ep *e)
{
    uint64_t bg = bg_cpu_ns(), wall = now_ns();
    uint8_t out[END_ACK_BYTES] = {0};
    if (e->verifier) {
        dsig_hybrid_verifier_stats st;
        dsig_hybrid_verifier_stats_get(e->verifier, &st);
        put64(out, st.fast - e->fast0);
        put64(out + 8, st.slow - e->slow0);
    }
    put64(out + 16, bg >= e->bg0 ? bg - e->bg0 : 0);
    put64(out + 24, wall >= e->wall0 ? wall - e->wall0 : 0);
    if (dsig_net_send(e->loop, e->conn, PF_END_ACK, out, sizeof out) != DSIG_OK)
        ep_fail(e, "responder: END_ACK not sent");
}

/* Event callback of both ends (loop thread). */
static void on_event(void *arg, dsig_net_loop *loop, const dsig_net_event *ev)
{
    ping_ep *e = arg;
    (void)loop;
    if (ev->kind == DSIG_NET_EV_UP) {
        if (e->initiator || !e->up) {
            e->conn = ev->conn;
            e->up = 1;
        } else {
            dsig_net_close(e->loop, ev->conn); /* one initiator at a time */
        }
        return;
    }
    if (ev->kind == DSIG_NET_EV_DOWN) {
        if (ev->conn == e->conn && e->up) {
            e->down = 1;
            if (!e->initiator)
                dsig_net_loop_stop(e->loop);
        }
        return;
    }
    if (ev->conn != e->conn)
        return;
    switch (ev->type) {
    case PF_HELLO:
        take_hello(e, ev->payload, ev->len);
        if (!e->initiator && e->hello) {
            uint8_t h[HELLO_BYTES];
            hello_put(e, h);
            if (dsig_net_send(e->loop, e->conn, PF_HELLO, h, sizeof h) != DSIG_OK)
                ep_fail(e, "responder: HELLO not sent");
        }
        break;
    case PF_BATCH:
        if (e->verifier) {
            int rc = dsig_hybrid_verifier_receive_batch(e->verifier, e->k->peer_id, ev->payload, ev->len);
            if (rc != DSIG_OK)
                ep_fail(e, "a DSig batch of the peer was refused: %s", dsig_strerror(rc));
        }
        break;
    case PF_PING:
        if (!e->initiator)
            respond_ping(e, ev->payload, ev->len);
        break;
    case PF_PONG:
        if (e->initiator)
            take_pong(e, ev->payload, ev->len);
        break;
    case PF_SYNC:
        if (!e->initiator)
            respond_sync(e, ev->payload, ev->len);
        break;
    case PF_END:
        if (!e->initiator)
            respond_end(e);
        break;
    case PF_SYNC_ACK:
    case PF_END_ACK:
        if (e->initiator && ev->len <= sizeof e->ctrl) {
            memcpy(e->ctrl, ev->payload, ev->len);
            e->ctrl_len = ev->len;
            e->got_ctrl = 1;
        }
        break;
    case PF_BYE:
        if (!e->initiator)
            dsig_net_loop_stop(e->loop);
        break;
    default:
        ep_fail(e, "unknown frame type 0x%02x", ev->type);
        break;
    }
}

/* Initiator: run the loop until *flag is set, the end failed, or timeout_ms passed. 0 or -1. */
static int wait_flag(ping_ep *e, int *flag, int timeout_ms, const char *what)
{
    uint64_t until = now_ns() + (uint64_t)timeout_ms * 1000000ull;
    while (!*flag && !e->failed) {
        if (e->down) {
            ep_fail(e, "the peer went away while waiting for %s", what);
            break;
        }
        if (now_ns() > until) {
            ep_fail(e, "no %s from the peer within %d ms", what, timeout_ms);
            break;
        }
        if (dsig_net_loop_run_once(e->loop, 100) != DSIG_OK) {
            ep_fail(e, "event loop stopped");
            break;
        }
    }
    return *flag && !e->failed ? 0 : -1;
}

/* ------------------------------------------------------------------------------------------------ */
/* Keys and configuration                                                                           */
/* ------------------------------------------------------------------------------------------------ */

/* A JWK text for an Ed25519 key (with "d" when seed is not NULL) -> dsig_key. */
static int jwk_from_raw(const uint8_t pk[32], const uint8_t *seed, dsig_key **out)
{
    char x[64], d[64], text[256];
    sodium_bin2base64(x, sizeof x, pk, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    int n;
    if (seed) {
        sodium_bin2base64(d, sizeof d, seed, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        n = snprintf(text, sizeof text, "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\",\"d\":\"%s\"}", x, d);
    } else {
        n = snprintf(text, sizeof text, "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\"}", x);
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
/* Responder                                                                                        */
/* ------------------------------------------------------------------------------------------------ */

/* Pool and cache sizes of a run: every key a block uses is ready before it (capped at 4096 keys). */
static void plane_sizes(const ping_opts *o, unsigned *pool, unsigned *cache)
{
    uint64_t want = (uint64_t)o->count + o->warmup + 16;
    if (want < 512)
        want = 512;
    if (want > 4096)
        want = 4096;
    *pool = (unsigned)want;
    *cache = (unsigned)(want / 128 * 2 + 32); /* default batch 128; generous for other presets */
}

/* Make a loop for one end. */
static int ep_open(ping_ep *e, int initiator, const ping_opts *o, ping_keys *k)
{
    memset(e, 0, sizeof *e);
    e->initiator = initiator;
    e->o = o;
    e->k = k;
    atomic_init(&e->batch_send_errors, 0);
    e->sig = malloc(SIG_CAP);
    dsig_net_config nc;
    dsig_net_config_default(&nc);
    nc.heartbeat_ms = 1000;
    nc.heartbeat_misses = 30; /* a responder may sit in a long pool refill */
    nc.backoff_max_ms = 500;
    int rc = e->sig ? dsig_net_loop_new(&e->loop, &nc, on_event, e) : DSIG_E_NOMEM;
    if (rc != DSIG_OK)
        ep_fail(e, "event loop: %s", dsig_strerror(rc));
    return rc;
}

/* Free an end. */
static void ep_close(ping_ep *e)
{
    ep_dsig_close(e);
    dsig_net_loop_free(e->loop);
    free(e->sig);
    e->loop = NULL;
    e->sig = NULL;
}

/* Listen on `addr` (port 0 allowed); `port_fd` >= 0 receives the bound port (self-contained mode).
 * Serves one initiator until BYE or until it goes away. Exit code 0 / 2. */
static int responder_main(const ping_opts *o, ping_keys *k, const char *addr_text, int port_fd)
{
    ping_ep e;
    dsig_net_addr a, bound;
    uint64_t lid;
    int rc = ep_open(&e, 0, o, k);
    if (rc == DSIG_OK && (rc = dsig_net_addr_parse(addr_text, &a)) != DSIG_OK)
        ep_fail(&e, "bad address \"%s\": %s", addr_text, dsig_last_error_detail());
    if (rc == DSIG_OK && (rc = dsig_net_listen(e.loop, &a, &lid)) != DSIG_OK)
        ep_fail(&e, "listen on %s: %s", addr_text, dsig_last_error_detail());
    if (rc == DSIG_OK && port_fd >= 0) {
        uint8_t pb[2] = {0, 0};
        if (dsig_net_local_addr(e.loop, lid, &bound) == DSIG_OK && bound.family == AF_INET) {
            uint16_t port = ntohs(((struct sockaddr_in *)&bound.ss)->sin_port);
            pb[0] = (uint8_t)(port >> 8);
            pb[1] = (uint8_t)port;
        }
        if (write(port_fd, pb, 2) != 2)
            rc = DSIG_E_IO;
        close(port_fd);
    }
    if (rc == DSIG_OK && !o->quiet && port_fd < 0)
        fprintf(stderr, "# dsig ping: node %" PRIu64 " answering on %s\n", k->self_id, addr_text);
    if (rc == DSIG_OK)
        (void)dsig_net_loop_run(e.loop);
    int code = e.failed && !e.down ? 2 : 0;
    if (e.failed && !e.down)
        fprintf(stderr, "dsig ping (responder): %s\n", e.why);
    ep_close(&e);
    return rc == DSIG_OK ? code : 2;
}

/* ------------------------------------------------------------------------------------------------ */
/* Initiator                                                                                        */
/* ------------------------------------------------------------------------------------------------ */

/* Per (size, scheme) sample storage, pooled over the runs. */
typedef struct samples {
    double *rtt, *sign, *verify, *transmit;
    size_t n;                    /* round trips stored */
    uint64_t fast, slow;
    uint64_t bg_ini, wall_ini, bg_rsp, wall_rsp; /* background CPU / wall ns of the timed rounds */
    size_t sig_bytes;
} samples;

/* SYNC -> SYNC_ACK (the responder's pool full and our batches cached there). */
static int sync_peer(ping_ep *e, int scheme)
{
    if (scheme == PING_DSIG) {
        int rc = dsig_hybrid_signer_wait_ready(e->signer, e->pool_keys);
        if (rc != DSIG_OK) {
            ep_fail(e, "initiator pool: %s", dsig_strerror(rc));
            return -1;
        }
    }
    uint8_t s = (uint8_t)scheme;
    e->got_ctrl = 0;
    if (dsig_net_send(e->loop, e->conn, PF_SYNC, &s, 1) != DSIG_OK) {
        ep_fail(e, "SYNC not sent");
        return -1;
    }
    if (wait_flag(e, &e->got_ctrl, 120000, "SYNC_ACK") != 0)
        return -1;
    /* Every batch the responder made before its ACK came before it on the stream: cache them all. */
    if (scheme == PING_DSIG)
        dsig_hybrid_verifier_flush(e->verifier);
    return 0;
}

/* One round trip; on success the four durations of the initiator's view are in *t. */
static int round_trip(ping_ep *e, int scheme, uint8_t *msg, size_t len, uint32_t seq, double t[6])
{
    /* Distinct messages: the round number in the first bytes. */
    for (size_t b = 0; b < 4 && b < len; b++)
        msg[b] = (uint8_t)(seq >> (8 * b));
    e->got = 0;
    e->want_seq = seq;
    e->want_scheme = scheme;
    e->expect_msg = msg;
    e->expect_len = len;
    uint64_t t0 = now_ns();
    size_t sl = 0;
    int rc = do_sign(e, scheme, msg, len, &sl);
    uint64_t t1 = now_ns();
    if (rc != DSIG_OK) {
        ep_fail(e, "%s sign failed: %s", ping_scheme_name(scheme), dsig_strerror(rc));
        return -1;
    }
    uint8_t hb[RHDR];
    rhdr h = {.scheme = (uint8_t)scheme, .seq = seq, .msg_len = (uint32_t)len, .sig_len = (uint32_t)sl};
    rhdr_put(hb, &h);
    struct iovec iov[3] = {{hb, RHDR}, {msg, len}, {e->sig, sl}};
    if ((rc = dsig_net_sendv(e->loop, e->conn, PF_PING, iov, 3)) != DSIG_OK) {
        ep_fail(e, "ping not sent: %s", dsig_strerror(rc));
        return -1;
    }
    if (wait_flag(e, &e->got, REPLY_TIMEOUT_MS, "reply") != 0)
        return -1;
    double rtt = (double)(e->t_verified - t0);
    double s_a = (double)(t1 - t0), v_a = (double)(e->t_verified - e->t_arrive);
    double s_b = (double)e->r_sign, v_b = (double)e->r_verify;
    t[0] = rtt;
    t[1] = s_a;
    t[2] = s_b;
    t[3] = v_a;
    t[4] = v_b;
    t[5] = (rtt - s_a - v_a - s_b - v_b) / 2.0;
    return 0;
}

/* One block: sync, warm-up, sync, timed rounds, END. Samples appended to *S. */
static int block(ping_ep *e, int scheme, uint8_t *msg, size_t len, samples *S, uint32_t *seq)
{
    const ping_opts *o = e->o;
    double t[6];
    if (sync_peer(e, scheme) != 0)
        return -1;
    for (unsigned i = 0; i < o->warmup; i++)
        if (round_trip(e, scheme, msg, len, (*seq)++, t) != 0)
            return -1;
    if (sync_peer(e, scheme) != 0)
        return -1;
    dsig_hybrid_verifier_stats st0, st1;
    if (e->verifier)
        dsig_hybrid_verifier_stats_get(e->verifier, &st0);
    uint64_t bg0 = bg_cpu_ns(), w0 = now_ns();
    for (unsigned i = 0; i < o->count; i++) {
        if (round_trip(e, scheme, msg, len, (*seq)++, t) != 0)
            return -1;
        size_t n = S->n++;
        S->rtt[n] = t[0];
        S->sign[2 * n] = t[1];
        S->sign[2 * n + 1] = t[2];
        S->verify[2 * n] = t[3];
        S->verify[2 * n + 1] = t[4];
        S->transmit[n] = t[5];
    }
    uint64_t bg1 = bg_cpu_ns(), w1 = now_ns();
    S->bg_ini += bg1 >= bg0 ? bg1 - bg0 : 0;
    S->wall_ini += w1 - w0;
    e->got_ctrl = 0;
    if (dsig_net_send(e->loop, e->conn, PF_END, NULL, 0) != DSIG_OK) {
        ep_fail(e, "END not sent");
        return -1;
    }
    if (wait_flag(e, &e->got_ctrl, 30000, "END_ACK") != 0)
        return -1;
    if (e->ctrl_len != END_ACK_BYTES) {
        ep_fail(e, "malformed END_ACK (%u bytes)", (unsigned)e->ctrl_len);
        return -1;
    }
    S->bg_rsp += get64(e->ctrl + 16);
    S->wall_rsp += get64(e->ctrl + 24);
    if (scheme == PING_DSIG) {
        dsig_hybrid_verifier_stats_get(e->verifier, &st1);
        S->fast += st1.fast - st0.fast + get64(e->ctrl);
        S->slow += st1.slow - st0.slow + get64(e->ctrl + 8);
    }
    S->sig_bytes = scheme == PING_NONE ? 0 : scheme == PING_SODIUM ? crypto_sign_BYTES
                                                                   : dsig_hybrid_signer_sig_bytes(e->signer);
    return 0;
}

/* Connect, HELLO, then every run x size x scheme block; rows out. Exit code. */
static int initiator_main(const ping_opts *o, ping_keys *k, const char *peer_addr, ping_sink sink, void *ctx)
{
    FILE *info = o->json ? stderr : stdout;
    ping_ep e;
    int code = 2;
    size_t ncells = o->nsizes * PING_NSCHEMES;
    samples *S = calloc(ncells, sizeof *S);
    ping_row *rows = calloc(ncells, sizeof *rows);
    uint8_t *msg = malloc(PING_MAX_MSG);
    size_t per = (size_t)o->count * o->runs;
    int ok = S && rows && msg;
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
        fprintf(stderr, "dsig ping: out of memory\n");
        goto free_samples;
    }
    if (ep_open(&e, 1, o, k) != DSIG_OK) {
        fprintf(stderr, "dsig ping: %s\n", e.why);
        ep_close(&e);
        goto free_samples;
    }
    e.schemes = o->schemes;
    plane_sizes(o, &e.pool_keys, &e.cache_batches);

    dsig_net_addr a;
    uint64_t cid;
    if (dsig_net_addr_parse(peer_addr, &a) != DSIG_OK || dsig_net_connect(e.loop, &a, &cid) != DSIG_OK) {
        ep_fail(&e, "cannot connect to %s: %s", peer_addr, dsig_last_error_detail());
        goto done;
    }
    if (!o->quiet)
        fprintf(stderr, "# dsig ping: node %" PRIu64 " -> node %" PRIu64 " at %s\n", k->self_id, k->peer_id,
                peer_addr);
    if (wait_flag(&e, &e.up, 60000, "connection") != 0)
        goto done;
    uint8_t h[HELLO_BYTES];
    hello_put(&e, h);
    if (dsig_net_send(e.loop, e.conn, PF_HELLO, h, sizeof h) != DSIG_OK) {
        ep_fail(&e, "HELLO not sent");
        goto done;
    }
    if (wait_flag(&e, &e.hello, 30000, "HELLO") != 0)
        goto done;
    if ((o->schemes & (1u << PING_DSIG)) && ep_dsig_open(&e) != DSIG_OK)
        goto done;

    uint32_t seq = 0;
    for (unsigned run = 0; run < o->runs; run++) {
        for (size_t si = 0; si < o->nsizes; si++) {
            bench_payload_fill(msg, o->sizes[si], 0x70696e67u + si);
            for (int sc = 0; sc < PING_NSCHEMES; sc++) {
                if (!(o->schemes & (1u << sc)))
                    continue;
                if (!o->quiet)
                    fprintf(stderr, "# run %u/%u: %s, %zu B, %u round trips\n", run + 1, o->runs,
                            ping_scheme_name(sc), o->sizes[si], o->count);
                if (block(&e, sc, msg, o->sizes[si], &S[si * PING_NSCHEMES + sc], &seq) != 0)
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
    if (atomic_load(&e.batch_send_errors))
        fprintf(info, "# note: %u DSig batch messages could not be sent\n", atomic_load(&e.batch_send_errors));
    code = 0;
done:
    if (e.up && !e.down) {
        (void)dsig_net_send(e.loop, e.conn, PF_BYE, NULL, 0);
        for (int i = 0; i < 5; i++)
            (void)dsig_net_loop_run_once(e.loop, 10);
    }
    if (e.failed) {
        fprintf(stderr, "dsig ping: %s\n", e.why);
        code = 2;
    }
    ep_close(&e);
free_samples:
    for (size_t c = 0; S && c < ncells; c++) {
        free(S[c].rtt);
        free(S[c].transmit);
        free(S[c].sign);
        free(S[c].verify);
    }
    free(S);
    free(rows);
    free(msg);
    return code;
}

/* ------------------------------------------------------------------------------------------------ */
/* Modes                                                                                            */
/* ------------------------------------------------------------------------------------------------ */

/* Self-contained: fork a responder child on loopback TCP (port chosen by its kernel, sent over a pipe). */
static int run_local(const ping_opts *o, ping_sink sink, void *ctx)
{
    ping_keys ini, rsp;
    char why[256];
    if (keys_generate(&ini, &rsp, why, sizeof why) != 0) {
        fprintf(stderr, "dsig ping: %s\n", why);
        return 2;
    }
    int pfd[2];
    if (pipe(pfd) != 0) {
        fprintf(stderr, "dsig ping: pipe: %s\n", strerror(errno));
        keys_free(&ini);
        keys_free(&rsp);
        return 2;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "dsig ping: fork: %s\n", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
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
        int code = responder_main(o, &rsp, "tcp:127.0.0.1:0", pfd[1]);
        keys_free(&rsp);
        fflush(stderr);
        _exit(code);
    }
    close(pfd[1]);
    keys_free(&rsp);
    int code = 2;
    uint8_t pb[2];
    struct pollfd pl = {.fd = pfd[0], .events = POLLIN};
    if (poll(&pl, 1, 30000) == 1 && read(pfd[0], pb, 2) == 2 && (pb[0] | pb[1])) {
        char addr[64];
        snprintf(addr, sizeof addr, "tcp:127.0.0.1:%u", (unsigned)pb[0] << 8 | pb[1]);
        code = initiator_main(o, &ini, addr, sink, ctx);
    } else {
        fprintf(stderr, "dsig ping: the responder process did not start\n");
        kill(pid, SIGTERM);
    }
    close(pfd[0]);
    int st = 0;
    if (waitpid(pid, &st, 0) == pid && code == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        fprintf(stderr, "dsig ping: the responder process failed\n");
        code = 2;
    }
    keys_free(&ini);
    return code;
}

/* Config mode: one end; the lower id answers, the higher id measures. */
static int run_config(const ping_opts *o, ping_sink sink, void *ctx)
{
    ping_keys k;
    char self_addr[DSIG_NET_ADDR_TEXT_MAX], peer_addr[DSIG_NET_ADDR_TEXT_MAX], why[512];
    if (keys_from_config(o, &k, self_addr, peer_addr, why, sizeof why) != 0) {
        fprintf(stderr, "dsig ping: %s\n", why);
        return 2;
    }
    int code = k.self_id < k.peer_id ? responder_main(o, &k, self_addr, -1)
                                     : initiator_main(o, &k, peer_addr, sink, ctx);
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
