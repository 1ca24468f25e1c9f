/*
 * tools/dsig/cmd_bft.c — `dsig bft replica|client|member`: one process of a BFT deployment
 * (docs/bft.md) on a DSig node of the membership file of `dsig node`. Signatures are DSig, from the
 * node's pool of one group that holds every process. Every event is one line on stdout (the fault tests
 * read them): deliveries, executions, replies, proven equivocations, views, and the counters at exit.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dsig/bft.h"
#include "dsig/node.h"

int cmd_bft(int argc, char **argv);

const char cli_usage_bft[] =
    "Usage: dsig bft replica --config FILE --id N --key KEY --replicas LIST --clients LIST [options]\n"
    "       dsig bft client  --config FILE --id N --key KEY --replicas LIST [--requests N] [options]\n"
    "       dsig bft member  --config FILE --id N --key KEY --protocol cbc|rbc [--members LIST]\n"
    "                        [--broadcast N] [options]\n"
    "\n"
    "One process of a Byzantine fault-tolerant deployment (docs/bft.md) on DSig node N of the membership\n"
    "FILE of `dsig node`: a replica of the key-value store (PBFT-style), its client, or a member of a\n"
    "consistent (cbc) or reliable (rbc) broadcast group. n = 3f+1 replicas or members tolerate f Byzantine\n"
    "ones. Every event is one line on stdout; the counters are printed at exit.\n"
    "\n"
    "  --config FILE      membership configuration (JSON, docs/node.md)\n"
    "  --id N             this node's id\n"
    "  --key KEY          this node's DSig private key (a JWK made by dsig keygen -a DSig); must match\n"
    "                     its public key in FILE\n"
    "  --replicas LIST    replica ids (replica, client)\n"
    "  --clients LIST     client ids a replica serves\n"
    "  --members LIST     broadcast members (default: every node of FILE)\n"
    "  --protocol P       member: cbc (signed echo) or rbc (Bracha)\n"
    "  --group NAME       DSig group holding every process (default: the first group of this node)\n"
    "  --session N        deployment id bound into every signature (default 1)\n"
    "  --log FILE         replica: durable log (reloaded at start; the replica then catches up)\n"
    "  --no-sync          replica: write the log without fdatasync\n"
    "  --view-timeout MS  replica: view change after a request waits this long (default 1000);\n"
    "                     client: re-send a request after this (default 500)\n"
    "  --retransmit MS    re-send unacknowledged messages after this (default 50)\n"
    "  --checkpoint N     replica: sequence numbers per checkpoint, 2..64 (default 16)\n"
    "  --requests N       client: requests to make, PUT and GET in turn (default 100); exits 0 when\n"
    "                     every result arrived and was right, 1 if one was wrong, 2 on --deadline\n"
    "  --broadcast N      member: values to broadcast (default 0), one every --every MS (default 20)\n"
    "  --until N          member: exit once N values are delivered (default: run until a signal)\n"
    "  --deadline S       give up after S seconds (exit 2; default 120 for a client, none otherwise)\n"
    "  --pool N           DSig keys kept ready by the node (default 1024)\n"
    "  --listen ADDR      listen here instead of the configured address\n"
    "  -q, --quiet        no notes on stderr\n"
    "\n"
    "Exit status: 0 done (a client: every result right), 1 a client got a wrong result, 2 error (bad\n"
    "options, a node that does not start, --deadline passed, a client stopped by a signal).\n";

struct bft_run {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    dsig_bft *bft;                   /* set once created; read by the plane thread (mu) */
    uint64_t delivered, decided, replies, bad_results;
    uint64_t submit_ns;
    uint8_t expect[DSIG_BFT_KV_MAX_VALUE];
    size_t expect_len;
    int expect_get;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put_hex(FILE *f, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
}

/* The node's APP frames go to the protocol (frames before it exists are dropped: retransmitted). */
static void on_app(void *arg, uint64_t peer, const uint8_t *bytes, size_t len)
{
    struct bft_run *r = arg;
    pthread_mutex_lock(&r->mu);
    dsig_bft *b = r->bft;
    pthread_mutex_unlock(&r->mu);
    if (b)
        (void)dsig_bft_receive(b, peer, bytes, len);
}

static void on_event(void *arg, const dsig_bft_event *ev)
{
    struct bft_run *r = arg;
    pthread_mutex_lock(&r->mu);
    switch (ev->kind) {
    case DSIG_BFT_EV_DELIVER:
        r->delivered++;
        printf("deliver origin=%" PRIu64 " instance=%" PRIu64 " digest=", ev->origin, ev->instance);
        put_hex(stdout, ev->digest, 32);
        printf(" value=");
        put_hex(stdout, ev->value, ev->value_len);
        printf(" cert_bytes=%zu\n", ev->proof_len);
        break;
    case DSIG_BFT_EV_DECIDE:
        r->decided++;
        printf("decide seq=%" PRIu64 " view=%" PRIu64 " client=%" PRIu64 " request=%" PRIu64 " history=",
               ev->instance, ev->view, ev->origin, ev->request);
        put_hex(stdout, ev->digest, 32);
        printf("\n");
        break;
    case DSIG_BFT_EV_REPLY: {
        int ok = !r->expect_get ? ev->value_len == 1 && ev->value[0] == DSIG_BFT_KV_OK
                                : ev->value_len == 1 + r->expect_len && ev->value[0] == DSIG_BFT_KV_OK &&
                                      memcmp(ev->value + 1, r->expect, r->expect_len) == 0;
        r->bad_results += !ok;
        r->replies++;
        printf("reply request=%" PRIu64 " ok=%d latency_us=%.1f result=", ev->instance, ok,
               (double)(mono_ns() - r->submit_ns) / 1e3);
        put_hex(stdout, ev->value, ev->value_len);
        printf("\n");
        break;
    }
    case DSIG_BFT_EV_EVIDENCE:
        printf("evidence culprit=%" PRIu64 " instance=%" PRIu64 " view=%" PRIu64 " proof=", ev->origin,
               ev->instance, ev->view);
        put_hex(stdout, ev->proof, ev->proof_len);
        printf("\n");
        break;
    case DSIG_BFT_EV_VIEW:
        printf("view view=%" PRIu64 " seq=%" PRIu64 "\n", ev->view, ev->instance);
        break;
    case DSIG_BFT_EV_RECOVERED:
        printf("recovered seq=%" PRIu64 " view=%" PRIu64 " history=", ev->instance, ev->view);
        put_hex(stdout, ev->digest, 32);
        printf("\n");
        break;
    default:
        break;
    }
    fflush(stdout);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void print_counters(FILE *f, const char *lead, dsig_bft *b)
{
    dsig_bft_stats s;
    dsig_bft_stats_get(b, &s);
    fprintf(f,
            "%s frames_in=%" PRIu64 " frames_out=%" PRIu64 " send_failed=%" PRIu64 " malformed=%" PRIu64
            " forged=%" PRIu64 " replayed=%" PRIu64 " future=%" PRIu64 " equivocations=%" PRIu64 " delivered=%" PRIu64
            " decided=%" PRIu64 " replies=%" PRIu64 " view_changes=%" PRIu64 " views_entered=%" PRIu64
            " checkpoints=%" PRIu64 " fetches=%" PRIu64 " fetched=%" PRIu64 " retransmits=%" PRIu64
            " log_records=%" PRIu64 " log_syncs=%" PRIu64 " signatures=%" PRIu64 " verifications=%" PRIu64 "\n",
            lead, s.frames_in, s.frames_out, s.send_failed, s.malformed, s.forged, s.replayed, s.future, s.equivocations,
            s.delivered, s.decided, s.replies, s.view_changes, s.views_entered, s.checkpoints, s.fetches,
            s.fetched, s.retransmits, s.log_records, s.log_syncs, s.signatures, s.verifications);
    fflush(f);
}

/* Client: the i-th operation (PUT "k<i/2 mod 16>" at even i, GET of that key at odd i). */
static size_t client_op(struct bft_run *r, uint64_t id, unsigned i, uint8_t *op, size_t cap)
{
    char key[16], val[48];
    snprintf(key, sizeof key, "k%u", (i / 2) % 16);
    if (i % 2 == 0) {
        int vl = snprintf(val, sizeof val, "v%" PRIu64 "-%u-%ld", id, i, (long)getpid());
        memcpy(r->expect, val, (size_t)vl);
        r->expect_len = (size_t)vl;
        r->expect_get = 0;
        return dsig_bft_kv_op(op, cap, DSIG_BFT_KV_PUT, (const uint8_t *)key, strlen(key), (const uint8_t *)val,
                              (size_t)vl);
    }
    r->expect_get = 1;
    return dsig_bft_kv_op(op, cap, DSIG_BFT_KV_GET, (const uint8_t *)key, strlen(key), NULL, 0);
}

/* Wait until cond() or a signal / deadline; 0, or -1 on the deadline. */
static int wait_until(struct bft_run *r, uint64_t deadline_ns, int (*cond)(struct bft_run *, void *), void *arg)
{
    pthread_mutex_lock(&r->mu);
    int rc = 0;
    while (!cond(r, arg) && !stop_flag) {
        if (deadline_ns && mono_ns() > deadline_ns) {
            rc = -1;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static int replies_reached(struct bft_run *r, void *arg)
{
    return r->replies >= *(uint64_t *)arg;
}

static int delivered_reached(struct bft_run *r, void *arg)
{
    return *(uint64_t *)arg && r->delivered >= *(uint64_t *)arg;
}

static int never(struct bft_run *r, void *arg)
{
    (void)r;
    (void)arg;
    return 0;
}

int cmd_bft(int argc, char **argv)
{
    enum { O_CONFIG = 1, O_ID, O_KEY, O_REPLICAS, O_CLIENTS, O_MEMBERS, O_PROTOCOL, O_GROUP, O_SESSION, O_LOG,
           O_NOSYNC, O_VIEWTO, O_RETX, O_CKPT, O_REQUESTS, O_BCAST, O_EVERY, O_UNTIL, O_DEADLINE, O_POOL,
           O_LISTEN };
    static const struct cli_opt opts[] = {
        {"config", 'c', 1, O_CONFIG},  {"id", 0, 1, O_ID},           {"key", 'k', 1, O_KEY},
        {"replicas", 0, 1, O_REPLICAS}, {"clients", 0, 1, O_CLIENTS}, {"members", 0, 1, O_MEMBERS},
        {"protocol", 0, 1, O_PROTOCOL}, {"group", 0, 1, O_GROUP},     {"session", 0, 1, O_SESSION},
        {"log", 0, 1, O_LOG},          {"no-sync", 0, 0, O_NOSYNC},  {"view-timeout", 0, 1, O_VIEWTO},
        {"retransmit", 0, 1, O_RETX},  {"checkpoint", 0, 1, O_CKPT}, {"requests", 0, 1, O_REQUESTS},
        {"broadcast", 0, 1, O_BCAST},  {"every", 0, 1, O_EVERY},     {"until", 0, 1, O_UNTIL},
        {"deadline", 0, 1, O_DEADLINE}, {"pool", 0, 1, O_POOL},      {"listen", 0, 1, O_LISTEN},
        CLI_COMMON_OPTS,               {NULL, 0, 0, 0}};
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
            fputs(cli_usage_bft, stdout);
            return CLI_EXIT_OK;
        }
        return cli_usage_error("bft", "a role is needed: replica, client or member");
    }
    const char *role = argv[1];
    int protocol = strcmp(role, "replica") == 0 ? DSIG_BFT_REPLICA
                   : strcmp(role, "client") == 0 ? DSIG_BFT_CLIENT
                   : strcmp(role, "member") == 0 ? DSIG_BFT_CBC
                                                 : 0;
    if (!protocol)
        return cli_usage_error("bft", "unknown role '%s'; valid: replica, client, member", role);
    struct cli_parser p;
    args_init(&p, "bft", opts, argc - 1, argv + 1);
    const char *config = NULL, *keypath = NULL, *group = NULL, *logp = NULL, *listen = NULL, *proto = NULL, *val;
    uint64_t replicas[DSIG_BFT_MAX_MEMBERS], clients[DSIG_BFT_MAX_CLIENTS], members[DSIG_BFT_MAX_MEMBERS];
    int nrep = 0, ncli = 0, nmem = 0, r, have_id = 0, sync = 1;
    unsigned id = 0, session = 1, viewto = 0, retx = 50, ckpt = 16, requests = 100, bcast = 0, every = 20,
             until = 0, deadline = protocol == DSIG_BFT_CLIENT ? 120 : 0, pool = 1024;
    while ((r = args_next(&p, &val)) != ARGS_END) {
        unsigned *u = NULL;
        const char *name = NULL;
        switch (r) {
        case O_CONFIG: config = val; break;
        case O_ID: u = &id, name = "--id", have_id = 1; break;
        case O_KEY: keypath = val; break;
        case O_REPLICAS:
            if ((nrep = cli_parse_ids(val, replicas, DSIG_BFT_MAX_MEMBERS)) < 0)
                return cli_usage_error("bft", "--replicas: \"%s\" is not a list of at most %u node ids", val,
                                       DSIG_BFT_MAX_MEMBERS);
            break;
        case O_CLIENTS:
            if ((ncli = cli_parse_ids(val, clients, DSIG_BFT_MAX_CLIENTS)) < 0)
                return cli_usage_error("bft", "--clients: \"%s\" is not a list of at most %u node ids", val,
                                       DSIG_BFT_MAX_CLIENTS);
            break;
        case O_MEMBERS:
            if ((nmem = cli_parse_ids(val, members, DSIG_BFT_MAX_MEMBERS)) < 0)
                return cli_usage_error("bft", "--members: \"%s\" is not a list of at most %u node ids", val,
                                       DSIG_BFT_MAX_MEMBERS);
            break;
        case O_PROTOCOL: proto = val; break;
        case O_GROUP: group = val; break;
        case O_SESSION: u = &session, name = "--session"; break;
        case O_LOG: logp = val; break;
        case O_NOSYNC: sync = 0; break;
        case O_VIEWTO: u = &viewto, name = "--view-timeout"; break;
        case O_RETX: u = &retx, name = "--retransmit"; break;
        case O_CKPT: u = &ckpt, name = "--checkpoint"; break;
        case O_REQUESTS: u = &requests, name = "--requests"; break;
        case O_BCAST: u = &bcast, name = "--broadcast"; break;
        case O_EVERY: u = &every, name = "--every"; break;
        case O_UNTIL: u = &until, name = "--until"; break;
        case O_DEADLINE: u = &deadline, name = "--deadline"; break;
        case O_POOL: u = &pool, name = "--pool"; break;
        case O_LISTEN: listen = val; break;
        case CLI_OPT_HELP: fputs(cli_usage_bft, stdout); return CLI_EXIT_OK;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case ARGS_POSITIONAL: return cli_usage_error("bft", "unexpected argument '%s'", val);
        default: return CLI_EXIT_ERROR;
        }
        if (u && cli_parse_uint("bft", name, val, u) < 0)
            return CLI_EXIT_ERROR;
    }
    if (!config || !have_id || !keypath)
        return cli_usage_error("bft", "--config, --id and --key are required");
    if (protocol == DSIG_BFT_CBC) {
        if (!proto || (strcmp(proto, "cbc") != 0 && strcmp(proto, "rbc") != 0))
            return cli_usage_error("bft", "member: --protocol cbc or rbc is required");
        protocol = strcmp(proto, "cbc") == 0 ? DSIG_BFT_CBC : DSIG_BFT_RBC;
    } else if (proto) {
        return cli_usage_error("bft", "--protocol is for members");
    }
    if ((protocol == DSIG_BFT_REPLICA || protocol == DSIG_BFT_CLIENT) && nrep <= 0)
        return cli_usage_error("bft", "%s: --replicas is required", role);
    if (protocol == DSIG_BFT_REPLICA && ncli <= 0)
        return cli_usage_error("bft", "replica: --clients is required");
    if (pool < 128 || pool > 65536)
        return cli_usage_error("bft", "--pool: %u is not in 128..65536", pool);

    dsig_node_config *cfg = NULL;
    int rc = dsig_node_config_load(config, &cfg);
    if (rc) {
        cli_err_lib(rc, "bft: configuration %s", config);
        return CLI_EXIT_ERROR;
    }
    if (protocol != DSIG_BFT_REPLICA && protocol != DSIG_BFT_CLIENT && nmem <= 0) {
        for (size_t i = 0; i < dsig_node_config_node_count(cfg) && nmem < (int)DSIG_BFT_MAX_MEMBERS; i++) {
            dsig_node_member m;
            if (dsig_node_config_node(cfg, i, &m) == DSIG_OK)
                members[nmem++] = m.id;
        }
    }
    if (!group) {
        dsig_node_member m;
        if (dsig_node_config_find(cfg, id, &m) == DSIG_OK && m.n_groups)
            group = m.groups[0];
    }
    dsig_key *key = NULL;
    int is_pem = 0;
    if (keyfile_load(keypath, &key, &is_pem, NULL) != 0) {
        dsig_node_config_free(cfg);
        return CLI_EXIT_ERROR;
    }
    struct bft_run run;
    memset(&run, 0, sizeof run);
    pthread_mutex_init(&run.mu, NULL);
    pthread_cond_init(&run.cv, NULL);
    dsig_node_options no;
    dsig_node_options_default(&no);
    no.pool_target = pool;
    no.max_app_bytes = DSIG_BFT_NODE_APP_BYTES;
    no.listen_address = listen;
    no.on_app = on_app;
    no.on_app_arg = &run;
    dsig_node *node = NULL;
    dsig_bft *b = NULL;
    int code = CLI_EXIT_ERROR;
    rc = dsig_node_new(&node, cfg, id, key, &no);
    dsig_key_free(key);
    if (rc) {
        cli_err_lib(rc, "bft: node %u", id);
        goto out;
    }
    dsig_bft_options bo;
    dsig_bft_options_default(&bo);
    bo.protocol = protocol;
    bo.session = session;
    bo.group = group;
    bo.members = protocol == DSIG_BFT_REPLICA || protocol == DSIG_BFT_CLIENT ? replicas : members;
    bo.n_members = (size_t)(protocol == DSIG_BFT_REPLICA || protocol == DSIG_BFT_CLIENT ? nrep : nmem);
    bo.clients = clients;
    bo.n_clients = (size_t)(ncli > 0 ? ncli : 0);
    bo.log_path = logp;
    bo.durable = sync;
    bo.retransmit_ms = retx;
    bo.view_timeout_ms = viewto;
    bo.checkpoint_interval = ckpt;
    bo.on_event = on_event;
    bo.on_event_arg = &run;
    if ((rc = dsig_bft_new(&b, node, &bo)) != DSIG_OK) {
        cli_err_lib(rc, "bft: %s %u", role, id);
        goto out;
    }
    pthread_mutex_lock(&run.mu);
    run.bft = b;
    pthread_mutex_unlock(&run.mu);
    if ((rc = dsig_node_start(node)) != DSIG_OK) {
        cli_err_lib(rc, "bft: node %u: start", id);
        goto out;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    uint64_t deadline_ns = deadline ? mono_ns() + (uint64_t)deadline * 1000000000ull : 0;
    /* warm: the protocol's peers connected and authenticated (≤ 10 s), then briefly this pool's batches
     * acknowledged, so that first signatures verify on the fast path (other group members, e.g. clients
     * not started yet, are not waited for) */
    for (size_t i = 0; i < bo.n_members; i++)
        for (int t = 0; bo.members[i] != id && !dsig_node_peer_up(node, bo.members[i]) && t < 1000 && !stop_flag; t++)
            usleep(10000);
    (void)dsig_node_wait_ready(node, group, pool / 2, 1000);
    pthread_mutex_lock(&run.mu);
    printf("ready id=%u\n", id); /* tests start their workload once every process said so */
    fflush(stdout);
    pthread_mutex_unlock(&run.mu);
    code = CLI_EXIT_OK;
    if (protocol == DSIG_BFT_CLIENT) {
        uint8_t op[DSIG_BFT_MAX_OP];
        for (unsigned i = 0; i < requests && !stop_flag && code == CLI_EXIT_OK; i++) {
            pthread_mutex_lock(&run.mu);
            size_t len = client_op(&run, id, i, op, sizeof op);
            run.submit_ns = mono_ns();
            pthread_mutex_unlock(&run.mu);
            if ((rc = dsig_bft_submit(b, op, len, NULL)) != DSIG_OK) {
                cli_err_lib(rc, "bft: client %u: submit", id);
                code = CLI_EXIT_ERROR;
                break;
            }
            uint64_t want = (uint64_t)i + 1;
            if (wait_until(&run, deadline_ns, replies_reached, &want) != 0) {
                cli_err("bft: client %u: --deadline of %u s passed with %u of %u requests answered", id, deadline,
                        i, requests);
                code = CLI_EXIT_ERROR;
            }
        }
        if (code == CLI_EXIT_OK && run.bad_results)
            code = CLI_EXIT_INVALID;
        if (code == CLI_EXIT_OK && stop_flag) {
            cli_err("bft: client %u: stopped by a signal before every request was answered", id);
            code = CLI_EXIT_ERROR;
        }
    } else {
        uint64_t next = mono_ns(), u = until;
        for (unsigned k = 0; k < bcast && !stop_flag;) {
            char v[64];
            int vl = snprintf(v, sizeof v, "m%u-%u", id, k + 1);
            rc = dsig_bft_broadcast(b, (const uint8_t *)v, (size_t)vl, NULL);
            if (rc == DSIG_OK)
                k++;
            else if (rc != DSIG_E_WOULD_BLOCK) {
                cli_err_lib(rc, "bft: member %u: broadcast", id);
                code = CLI_EXIT_ERROR;
                break;
            }
            next += (uint64_t)every * 1000000ull;
            struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull), .tv_nsec = (long)(next % 1000000000ull)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        }
        if (code == CLI_EXIT_OK &&
            wait_until(&run, deadline_ns, until ? delivered_reached : never, &u) != 0) {
            pthread_mutex_lock(&run.mu);
            unsigned long long got = (unsigned long long)run.delivered;
            pthread_mutex_unlock(&run.mu);
            if (until)
                cli_err("bft: member %u: --deadline of %u s passed with %llu of %u values delivered", id, deadline,
                        got, until);
            else
                cli_err("bft: member %u: --deadline of %u s passed", id, deadline);
            code = CLI_EXIT_ERROR;
        }
        if (until && code == CLI_EXIT_OK)
            usleep(300000); /* a moment for the acknowledgements and the others' last frames */
    }
out:
    if (node)
        dsig_node_stop(node); /* no more frames to the protocol */
    if (b) {
        char lead[64];
        snprintf(lead, sizeof lead, "stats %s=%u", role, id);
        print_counters(stdout, lead, b);
        /* A replica's state at exit: a state transfer installs a checkpoint without a "decide" line per
         * sequence number, so the last "decide" line need not be where the replica ended. */
        uint64_t seq = 0, view = 0;
        uint8_t hist[32];
        if (dsig_bft_replica_state(b, &seq, &view, hist) == DSIG_OK) {
            printf("state replica=%u seq=%" PRIu64 " view=%" PRIu64 " history=", id, seq, view);
            put_hex(stdout, hist, sizeof hist);
            printf("\n");
            fflush(stdout);
        }
    }
    dsig_bft_free(b);
    dsig_node_free(node);
    dsig_node_config_free(cfg);
    pthread_cond_destroy(&run.cv);
    pthread_mutex_destroy(&run.mu);
    return code;
}
