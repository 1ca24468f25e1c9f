/*
 * tools/dsig/cmd_node.c — `dsig node`: run a DSig node (docs/node.md) until SIGINT/SIGTERM, printing
 * its counters on stderr every few seconds. Optionally a small signed-message workload: --sign-to sends
 * signed messages to peers (APP frames), --verify checks the ones received and prints one line each
 * (used by the process-level crash test, tests/faults/crash.sh). No cryptography here: everything is in
 * libdsig.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dsig/node.h"

int cmd_node(int argc, char **argv);

const char cli_usage_node[] =
    "Usage: dsig node --config FILE --id N --key KEY.jwk [--listen ADDR] [--interval S] [--quiet]\n"
    "                 [--sign-to ID,... [--rate N] [--group NAME]] [--verify]\n"
    "\n"
    "Run DSig node N of the configuration FILE (docs/node.md) until SIGINT or SIGTERM: keep a key pool\n"
    "per group, push batches to the group's members, receive, verify and cache other nodes' batches.\n"
    "\n"
    "  --config FILE   membership configuration (JSON)\n"
    "  --id N          this node's id in the configuration\n"
    "  --key KEY       this node's DSig private key (a JWK made by dsig keygen -a DSig); must match\n"
    "                  the configured key\n"
    "  --listen ADDR   listen here instead of the configured address (e.g. tcp:0.0.0.0:7101)\n"
    "  --interval S    seconds between statistics lines on stderr (default 5)\n"
    "  -q, --quiet     no statistics lines\n"
    "  --sign-to LIST  sign a numbered message N times a second (--rate, default 100) in --group (default:\n"
    "                  this node's first group) and send it to each listed node that is connected\n"
    "  --verify        verify the signed messages received from other nodes; one line each on stdout:\n"
    "                  signer, batch seq, key index, path (fast/slow), verdict, and whether a copy with\n"
    "                  one message bit flipped was rejected\n";

/* Signed message APP payload: "DSNM" ‖ message length u32 big-endian ‖ message ‖ signature. */
#define SM_MAGIC "DSNM"
#define SM_HDR 8u
#define SM_MSG_MAX 256u
#define SM_SIG_MAX 8192u

/* What the APP callback needs. */
struct node_app {
    dsig_node *node;
    const dsig_node_config *cfg;
    pthread_mutex_t mu;                 /* stdout lines */
};

/* The (batch seq, key index) of a DSig signature under any of the configuration's parameter sets. */
static int locate(const dsig_node_config *cfg, const uint8_t *sig, size_t len, uint64_t *seq, uint32_t *idx)
{
    for (size_t i = 0; i < dsig_node_config_group_count(cfg); i++) {
        dsig_node_group g;
        if (dsig_node_config_group(cfg, i, &g) == DSIG_OK &&
            dsig_hybrid_sig_locate(g.params, sig, len, seq, idx) == DSIG_OK)
            return 0;
    }
    return -1;
}

/* --verify: check a signed message from `peer` (plane thread) and print its line. */
static void on_app(void *arg, uint64_t peer, const uint8_t *b, size_t len)
{
    struct node_app *a = arg;
    if (len < SM_HDR || memcmp(b, SM_MAGIC, 4) != 0)
        return;
    size_t ml = (size_t)b[4] << 24 | (size_t)b[5] << 16 | (size_t)b[6] << 8 | b[7];
    if (ml > SM_MSG_MAX || len - SM_HDR < ml)
        return;
    const uint8_t *msg = b + SM_HDR, *sig = msg + ml;
    size_t sl = len - SM_HDR - ml;
    uint64_t seq = 0;
    uint32_t idx = 0;
    int located = locate(a->cfg, sig, sl, &seq, &idx) == 0;
    int fast = dsig_node_can_verify_fast(a->node, peer, sig, sl);
    int rc = dsig_node_verify(a->node, peer, msg, ml, sig, sl);
    uint8_t bad[SM_MSG_MAX + 1];
    memcpy(bad, msg, ml);
    int forged_rc = DSIG_E_VERIFY;
    if (ml) {
        bad[ml - 1] ^= 1;
        forged_rc = dsig_node_verify(a->node, peer, bad, ml, sig, sl);
    }
    pthread_mutex_lock(&a->mu);
    printf("verified signer=%llu seq=%llu index=%lu path=%s result=%s forgery=%s msg=%.*s\n",
           (unsigned long long)peer, located ? (unsigned long long)seq : 0ull, (unsigned long)idx,
           fast ? "fast" : "slow", rc == DSIG_OK ? "ok" : dsig_strerror(rc),
           forged_rc == DSIG_OK || forged_rc == DSIG_E_EQUIVOCATION ? "ACCEPTED" : "rejected", (int)ml,
           (const char *)msg);
    fflush(stdout);
    pthread_mutex_unlock(&a->mu);
}

/* --sign-to: sign message number `ctr` once and send it to every connected target. */
static void sign_and_send(dsig_node *n, const char *group, const char *tag, unsigned long long ctr,
                          const uint64_t *to, int nto, uint8_t *buf, unsigned long long *skipped)
{
    int any = 0;
    for (int i = 0; i < nto; i++)
        any |= dsig_node_peer_up(n, to[i]);
    if (!any) {
        (*skipped)++;
        return;
    }
    int ml = snprintf((char *)buf + SM_HDR, SM_MSG_MAX, "dsig node %s message %llu", tag, ctr);
    if (ml < 0 || (unsigned)ml >= SM_MSG_MAX)
        return;
    memcpy(buf, SM_MAGIC, 4);
    buf[4] = 0;
    buf[5] = 0;
    buf[6] = (uint8_t)(ml >> 8);
    buf[7] = (uint8_t)ml;
    size_t sl = 0;
    int rc = dsig_node_sign(n, group, buf + SM_HDR, (size_t)ml, buf + SM_HDR + ml, SM_SIG_MAX, &sl);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "node: sign");
        return;
    }
    for (int i = 0; i < nto; i++)
        if (dsig_node_peer_up(n, to[i]))
            (void)dsig_node_send_app(n, to[i], buf, SM_HDR + (size_t)ml + sl);
}

static volatile sig_atomic_t stop_flag;

/* SIGINT / SIGTERM: ask the main loop to stop. */
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* One statistics line. */
static void print_stats(dsig_node *n)
{
    dsig_node_stats s;
    dsig_node_stats_get(n, &s);
    fprintf(stderr,
            "dsig node %llu: peers %llu | batches gen %llu sent %llu resent %llu acked %llu | recv %llu "
            "verified %llu | dropped unknown %llu badsig %llu replay %llu malformed %llu full %llu limited %llu | "
            "verify fast %llu slow %llu failed %llu | reconnects %llu\n",
            (unsigned long long)dsig_node_id(n), (unsigned long long)s.peers_up,
            (unsigned long long)s.batches_generated, (unsigned long long)s.batches_sent,
            (unsigned long long)s.batches_resent, (unsigned long long)s.acks_received,
            (unsigned long long)s.batches_received, (unsigned long long)s.batches_verified,
            (unsigned long long)s.drop_unknown_id, (unsigned long long)s.drop_bad_signature,
            (unsigned long long)s.drop_replay, (unsigned long long)s.drop_malformed,
            (unsigned long long)s.drop_queue_full, (unsigned long long)s.drop_rate_limited,
            (unsigned long long)s.verify_fast,
            (unsigned long long)s.verify_slow, (unsigned long long)s.verify_failed,
            (unsigned long long)s.reconnects);
}

/* `dsig node`: parse options, load config and key, run until a signal. */
int cmd_node(int argc, char **argv)
{
    enum { O_CONFIG = 1, O_ID, O_KEY, O_LISTEN, O_INTERVAL, O_SIGN_TO, O_RATE, O_GROUP, O_VERIFY };
    static const struct cli_opt opts[] = {
        {"config", 'c', 1, O_CONFIG}, {"id", 0, 1, O_ID}, {"key", 'k', 1, O_KEY},
        {"listen", 0, 1, O_LISTEN},   {"interval", 0, 1, O_INTERVAL}, {"sign-to", 0, 1, O_SIGN_TO},
        {"rate", 0, 1, O_RATE},       {"group", 0, 1, O_GROUP},       {"verify", 0, 0, O_VERIFY},
        CLI_COMMON_OPTS,              {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "node", opts, argc, argv);
    const char *config = NULL, *keypath = NULL, *listen = NULL, *group = NULL, *val;
    unsigned id = 0, interval = 5, rate = 100;
    uint64_t to[DSIG_NODE_MAX_NODES];
    int have_id = 0, r, nto = 0, verify = 0;
    while ((r = args_next(&p, &val)) != ARGS_END) {
        switch (r) {
        case O_CONFIG: config = val; break;
        case O_ID:
            if (cli_parse_uint("node", "--id", val, &id) < 0)
                return CLI_EXIT_ERROR;
            have_id = 1;
            break;
        case O_KEY: keypath = val; break;
        case O_LISTEN: listen = val; break;
        case O_INTERVAL:
            if (cli_parse_uint("node", "--interval", val, &interval) < 0)
                return CLI_EXIT_ERROR;
            break;
        case O_SIGN_TO:
            if ((nto = cli_parse_ids(val, to, (int)DSIG_NODE_MAX_NODES)) < 0)
                return cli_usage_error("node", "--sign-to: \"%s\" is not a list of node ids", val);
            break;
        case O_RATE:
            if (cli_parse_uint("node", "--rate", val, &rate) < 0)
                return CLI_EXIT_ERROR;
            if (rate == 0 || rate > 100000)
                return cli_usage_error("node", "--rate: %u is not in 1..100000", rate);
            break;
        case O_GROUP: group = val; break;
        case O_VERIFY: verify = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_node, stdout); return CLI_EXIT_OK;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case ARGS_POSITIONAL: return cli_usage_error("node", "unexpected argument '%s'", val);
        default: return CLI_EXIT_ERROR;
        }
    }
    if (!config || !have_id || !keypath)
        return cli_usage_error("node", "--config, --id and --key are required");
    if (interval == 0)
        interval = 1;

    dsig_node_config *cfg = NULL;
    int rc = dsig_node_config_load(config, &cfg);
    if (rc) {
        cli_err_lib(rc, "node: configuration %s", config);
        return CLI_EXIT_ERROR;
    }
    dsig_key *key = NULL;
    int is_pem = 0;
    if (keyfile_load(keypath, &key, &is_pem, NULL) != 0) {
        dsig_node_config_free(cfg);
        return CLI_EXIT_ERROR;
    }
    struct node_app app = {.cfg = cfg};
    pthread_mutex_init(&app.mu, NULL);
    if (nto && !group) { /* default: this node's first group */
        dsig_node_member m;
        if (dsig_node_config_find(cfg, id, &m) == DSIG_OK && m.n_groups)
            group = m.groups[0];
    }
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.listen_address = listen;
    if (verify) {
        o.on_app = on_app;
        o.on_app_arg = &app;
    }
    dsig_node *n = NULL;
    rc = dsig_node_new(&n, cfg, id, key, &o);
    dsig_key_free(key);
    if (rc == DSIG_OK && nto && (!group || dsig_node_sig_bytes(n, group) == 0)) {
        dsig_node_free(n);
        dsig_node_config_free(cfg);
        pthread_mutex_destroy(&app.mu);
        return cli_usage_error("node", "--sign-to: node %u is in no group \"%s\"", id, group ? group : "");
    }
    if (rc) {
        cli_err_lib(rc, "node %u", id);
        dsig_node_free(n);
        dsig_node_config_free(cfg);
        pthread_mutex_destroy(&app.mu);
        return CLI_EXIT_ERROR;
    }
    app.node = n;
    if ((rc = dsig_node_start(n)) != DSIG_OK) {
        cli_err_lib(rc, "node %u: start", id);
        dsig_node_free(n);
        dsig_node_config_free(cfg);
        pthread_mutex_destroy(&app.mu);
        return CLI_EXIT_ERROR;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    char addr[160];
    if (dsig_node_listen_address(n, addr, sizeof addr) == DSIG_OK)
        cli_note("dsig node %u: listening on %s", id, addr);
    /* The message tag names this process: a restarted node's messages never repeat an earlier text. */
    char tag[64];
    snprintf(tag, sizeof tag, "%u pid %ld t %lld", id, (long)getpid(), (long long)time(NULL));
    uint8_t *buf = nto ? malloc(SM_HDR + SM_MSG_MAX + SM_SIG_MAX) : NULL;
    if (nto && !buf) {
        cli_err_lib(DSIG_E_NOMEM, "node %u", id);
        stop_flag = 1;
    }
    unsigned long long ctr = 0, skipped = 0;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    long step_ns = nto ? 1000000000L / (long)rate : 100000000L;
    long long since_stats = 0;
    while (!stop_flag) {
        next.tv_nsec += step_ns;
        next.tv_sec += next.tv_nsec / 1000000000L;
        next.tv_nsec %= 1000000000L;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        if (nto)
            sign_and_send(n, group, tag, ctr++, to, nto, buf, &skipped);
        since_stats += step_ns;
        if (since_stats >= (long long)interval * 1000000000LL) {
            since_stats = 0;
            if (!cli_quiet)
                print_stats(n);
        }
    }
    if (!cli_quiet)
        print_stats(n);
    dsig_node_free(n);
    dsig_node_config_free(cfg);
    pthread_mutex_destroy(&app.mu);
    free(buf);
    return CLI_EXIT_OK;
}
