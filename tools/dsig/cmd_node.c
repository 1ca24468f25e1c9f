/*
 * tools/dsig/cmd_node.c — `dsig node`: run a DSig node (docs/node.md) until SIGINT/SIGTERM, printing
 * its counters on stderr every few seconds. No cryptography here: everything is in libdsig.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dsig/node.h"

int cmd_node(int argc, char **argv);

const char cli_usage_node[] =
    "Usage: dsig node --config FILE --id N --key KEY.jwk [--listen ADDR] [--interval S] [--quiet]\n"
    "\n"
    "Run DSig node N of the configuration FILE (docs/node.md) until SIGINT or SIGTERM: keep a key pool\n"
    "per group, push batches to the group's members, receive, verify and cache other nodes' batches.\n"
    "\n"
    "  --config FILE   membership configuration (JSON)\n"
    "  --id N          this node's id in the configuration\n"
    "  --key KEY       this node's Ed25519 private key (JWK or PEM); must match the configured key\n"
    "  --listen ADDR   listen here instead of the configured address (e.g. tcp:0.0.0.0:7101)\n"
    "  --interval S    seconds between statistics lines on stderr (default 5)\n"
    "  -q, --quiet     no statistics lines\n";

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
            "verified %llu | dropped unknown %llu badsig %llu replay %llu malformed %llu full %llu | "
            "verify fast %llu slow %llu failed %llu | reconnects %llu\n",
            (unsigned long long)dsig_node_id(n), (unsigned long long)s.peers_up,
            (unsigned long long)s.batches_generated, (unsigned long long)s.batches_sent,
            (unsigned long long)s.batches_resent, (unsigned long long)s.acks_received,
            (unsigned long long)s.batches_received, (unsigned long long)s.batches_verified,
            (unsigned long long)s.drop_unknown_id, (unsigned long long)s.drop_bad_signature,
            (unsigned long long)s.drop_replay, (unsigned long long)s.drop_malformed,
            (unsigned long long)s.drop_queue_full, (unsigned long long)s.verify_fast,
            (unsigned long long)s.verify_slow, (unsigned long long)s.verify_failed,
            (unsigned long long)s.reconnects);
}

/* `dsig node`: parse options, load config and key, run until a signal. */
int cmd_node(int argc, char **argv)
{
    enum { O_CONFIG = 1, O_ID, O_KEY, O_LISTEN, O_INTERVAL };
    static const struct cli_opt opts[] = {
        {"config", 'c', 1, O_CONFIG}, {"id", 0, 1, O_ID}, {"key", 'k', 1, O_KEY},
        {"listen", 0, 1, O_LISTEN},   {"interval", 0, 1, O_INTERVAL}, CLI_COMMON_OPTS,
        {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "node", opts, argc, argv);
    const char *config = NULL, *keypath = NULL, *listen = NULL, *val;
    unsigned id = 0, interval = 5;
    int have_id = 0, r;
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
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.listen_address = listen;
    dsig_node *n = NULL;
    rc = dsig_node_new(&n, cfg, id, key, &o);
    dsig_key_free(key);
    dsig_node_config_free(cfg);
    if (rc) {
        cli_err_lib(rc, "node %u", id);
        return CLI_EXIT_ERROR;
    }
    if ((rc = dsig_node_start(n)) != DSIG_OK) {
        cli_err_lib(rc, "node %u: start", id);
        dsig_node_free(n);
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
    unsigned ticks = 0;
    while (!stop_flag) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (++ticks % (interval * 10) == 0 && !cli_quiet)
            print_stats(n);
    }
    if (!cli_quiet)
        print_stats(n);
    dsig_node_free(n);
    return CLI_EXIT_OK;
}
