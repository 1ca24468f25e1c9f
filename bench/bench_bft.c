/*
 * bench/bench_bft.c — `dsig bench bft` (docs/bft.md "Benchmark"): latency of the BFT protocols of
 * include/dsig/bft.h with no signature ("none"), libsodium Ed25519 ("ed25519", the registry's one-shot
 * Ed25519 = crypto_sign_detached) and DSig ("dsig", the node's pools) through the same code, the DSig
 * paper's parameters: 8-byte messages, broadcast samples of one ping plus one pong (two broadcasts: the
 * paper's two signs and two verifies on the critical path), 1,024 proposals for replication.
 *
 * n = 3f+1 processes (plus a client for replication), each a DSig node (TCP loopback) with a dsig_bft
 * object; a coordinator drives them over socketpairs in phases (open a session, wait until every DSig
 * pool is full and acknowledged, run a batch of samples, close). Two layouts:
 *   procs  one OS process per BFT process, default thread priorities: what a deployment on one host
 *          looks like, oversubscribed here (each node has a plane thread, a batch-verification thread
 *          and a key-generation thread; the report prints threads per core);
 *   fit    all BFT processes as threads of one process, and every node's background threads (key
 *          generation, batch verification) at SCHED_IDLE, so that they only use a core no protocol
 *          thread wants — the paper gives each process a foreground and a background core; this is
 *          the nearest a 2-core machine comes to it.
 * Samples (CLOCK_MONOTONIC): broadcast — process 1 broadcasts ping i; process 2 broadcasts pong i when
 * it delivers it; the sample ends when process 1 delivers the pong. Replication — the leader's
 * proposal (before it signs PRE-PREPARE) to its decision (execution after the commit certificate); the
 * client's request-to-accepted-result time is reported too. Before each batch (--batch, default 128 as
 * the paper's runs of 128) every node waits until its pool is full and acknowledged, as the paper does.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "bench_bft.h"
#include "bench_internal.h"
#include "dsig/bft.h"
#include "dsig/jwk.h"
#include "dsig/node.h"

#define MAXP (DSIG_BFT_MAX_MEMBERS + 1)
#define MAX_COUNT 100000u
#define CHUNK 2048u                 /* samples per control message */

enum { SC_NONE = 0, SC_ED25519 = 1, SC_DSIG = 2, N_SCHEMES = 3 };
enum { PR_CBC = 0, PR_RBC = 1, PR_PBFT = 2, N_PROTOS = 3 };
enum { LY_PROCS = 0, LY_FIT = 1, N_LAYOUTS = 2 };

static const char *const scheme_names[N_SCHEMES] = {"none", "ed25519", "dsig"};
static const char *const proto_names[N_PROTOS] = {"cbc", "rbc", "pbft"};
static const char *const layout_names[N_LAYOUTS] = {"procs", "fit"};
/* The paper's total-latency reductions: broadcast (uBFT consistent tail broadcast) and replication. */
static const double paper_ratio[N_PROTOS] = {0.73, 0.73, 0.69};

typedef struct bft_opts {
    unsigned count, batch, warmup, runs, f, size;
    unsigned schemes, protos, layouts;   /* bit per item */
    const char *out_dir;
    int quick, quiet;
} bft_opts;

/* ---- options -------------------------------------------------------------------------------- */

static int name_item(const char *t, void *out, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(t, names[i]) == 0) {
            *(unsigned *)out |= 1u << i;
            return 0;
        }
    return -1;
}
static int scheme_item(const char *t, void *out, size_t i)
{
    (void)i;
    return name_item(t, out, scheme_names, N_SCHEMES);
}
static int proto_item(const char *t, void *out, size_t i)
{
    (void)i;
    return name_item(t, out, proto_names, N_PROTOS);
}
static int layout_item(const char *t, void *out, size_t i)
{
    (void)i;
    return name_item(t, out, layout_names, N_LAYOUTS);
}
static const bench_list_spec scheme_list = {"--schemes", 128, "unknown scheme", "schemes", "none, ed25519, dsig",
                                            NULL, scheme_item};
static const bench_list_spec proto_list = {"--protocols", 128, "unknown protocol", "protocols", "cbc, rbc, pbft",
                                           NULL, proto_item};
static const bench_list_spec layout_list = {"--layout", 128, "unknown layout", "layouts", "procs, fit", NULL,
                                            layout_item};

static void usage(FILE *f)
{
    fputs("Usage: dsig bench bft [options]\n"
          "  BFT broadcast and replication latency (docs/bft.md): none / libsodium Ed25519 / DSig through\n"
          "  the same protocol code, n = 3f+1 DSig nodes on loopback TCP.\n"
          "  --protocols LIST  cbc (signed echo), rbc (Bracha), pbft (replication) (default all)\n"
          "  --schemes LIST    none, ed25519, dsig (default all)\n"
          "  --layout LIST     procs (one OS process each), fit (threads of one process, background\n"
          "                    threads at SCHED_IDLE) (default both)\n"
          "  --count N         samples per protocol, scheme and layout: ping-pongs / proposals (default 1024)\n"
          "  --batch N         samples between two waits for full, acknowledged pools (default 128)\n"
          "  --warmup N        untimed samples first (default 64)\n"
          "  --runs N          repeat the sweep, schemes interleaved; samples pooled (default 1)\n"
          "  --f N             tolerated faults: n = 3f+1 (default 1; 2 gives 7 processes)\n"
          "  --size N          message bytes, 1..1024 (default 8)\n"
          "  --out DIR         write the CSV and the SVG there (without it no file is written)\n"
          "  --quick           64 samples, batch 32, warm-up 16 (a smoke test)\n"
          "  -q, --quiet       no progress on stderr\n",
          f);
}

static int parse(int argc, char **argv, bft_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->count = 1024, o->batch = 128, o->warmup = 64, o->runs = 1, o->f = 1, o->size = 8;
    o->schemes = (1u << N_SCHEMES) - 1, o->protos = (1u << N_PROTOS) - 1, o->layouts = (1u << N_LAYOUTS) - 1;
    int set_count = 0, set_batch = 0, set_warm = 0;
    size_t nn;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing = 0;
        uint64_t u;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
        if (strcmp(argv[i], "--quick") == 0) {
            o->quick = 1;
        } else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
            o->quiet = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--schemes", &missing))) {
            o->schemes = 0;
            if (bench_parse_list(&scheme_list, v, &o->schemes, SIZE_MAX, &nn, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--protocols", &missing))) {
            o->protos = 0;
            if (bench_parse_list(&proto_list, v, &o->protos, SIZE_MAX, &nn, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--layout", &missing))) {
            o->layouts = 0;
            if (bench_parse_list(&layout_list, v, &o->layouts, SIZE_MAX, &nn, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--count", &missing))) {
            if (bench_parse_u64(v, 1, MAX_COUNT, &u))
                return bench_fail(err, errlen, "--count: \"%s\" is not in 1..%u", v, MAX_COUNT);
            o->count = (unsigned)u, set_count = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--batch", &missing))) {
            if (bench_parse_u64(v, 1, 4096, &u))
                return bench_fail(err, errlen, "--batch: \"%s\" is not in 1..4096", v);
            o->batch = (unsigned)u, set_batch = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--warmup", &missing))) {
            if (bench_parse_u64(v, 0, MAX_COUNT, &u))
                return bench_fail(err, errlen, "--warmup: \"%s\" is not in 0..%u", v, MAX_COUNT);
            o->warmup = (unsigned)u, set_warm = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--runs", &missing))) {
            if (bench_parse_u64(v, 1, 100, &u))
                return bench_fail(err, errlen, "--runs: \"%s\" is not in 1..100", v);
            o->runs = (unsigned)u;
        } else if ((v = bench_opt_value(argc, argv, &i, "--f", &missing))) {
            if (bench_parse_u64(v, 1, 3, &u))
                return bench_fail(err, errlen, "--f: \"%s\" is not in 1..3", v);
            o->f = (unsigned)u;
        } else if ((v = bench_opt_value(argc, argv, &i, "--size", &missing))) {
            if (bench_parse_u64(v, 1, DSIG_BFT_MAX_VALUE, &u))
                return bench_fail(err, errlen, "--size: \"%s\" is not in 1..%u", v, DSIG_BFT_MAX_VALUE);
            o->size = (unsigned)u;
        } else if ((v = bench_opt_value(argc, argv, &i, "--out", &missing))) {
            o->out_dir = v;
        } else if (missing) {
            return bench_fail(err, errlen, "%s needs a value", argv[i]);
        } else {
            return bench_fail(err, errlen, "unknown option \"%s\" (see dsig bench bft --help)", argv[i]);
        }
    }
    if (o->quick) {
        if (!set_count)
            o->count = 64;
        if (!set_batch)
            o->batch = 32;
        if (!set_warm)
            o->warmup = 16;
    }
    if (!o->schemes || !o->protos || !o->layouts)
        return bench_fail(err, errlen, "nothing to measure");
    return 0;
}

/* ---- control messages (SOCK_SEQPACKET: one message per send) -------------------------------- */

enum { OP_PROBE = 1, OP_OPEN, OP_READY, OP_ARM, OP_RUN, OP_STOP, OP_CLOSE, OP_QUIT };

typedef struct ctl_cmd {
    uint32_t op, proto, scheme, count;
    uint64_t session;
} ctl_cmd;

typedef struct ctl_rep {
    int32_t rc;
    uint32_t n_a, n_b;               /* samples that follow: primary (ns), secondary (ns) */
    uint64_t cpu_ns;                 /* process CPU during RUN (procs layout: this process) */
    uint64_t fast, slow;             /* DSig verifications during RUN */
    uint64_t rtx;                    /* frames the protocol's timers re-sent */
    char why[200];
} ctl_rep;

static int send_all_msg(int fd, const void *p, size_t n)
{
    ssize_t w;
    do
        w = send(fd, p, n, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    return w == (ssize_t)n ? 0 : -1;
}

static int recv_msg(int fd, void *p, size_t n)
{
    ssize_t r;
    do
        r = recv(fd, p, n, 0);
    while (r < 0 && errno == EINTR);
    return r > 0 ? (int)r : -1;
}

/* ---- one BFT process ------------------------------------------------------------------------ */

typedef struct proc_keys {
    dsig_key *node;                  /* a DSig key (dsig keygen -a DSig): the DSig node's identity */
    dsig_key *bft;                   /* Ed25519, the ed25519 scheme's signing key (one key, one purpose) */
    dsig_key *bft_pub;
} proc_keys;

typedef struct worker {
    int idx, np, n;                  /* index (id = idx + 1), processes, members */
    int fd;
    const bft_opts *o;
    proc_keys *keys;                 /* all processes' */
    const dsig_node_config *cfg;
    dsig_node *node;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    dsig_bft *bft;
    int proto, scheme;
    /* run state (mu) */
    unsigned want, got, lgot;
    int running, resend;
    uint64_t t0;
    double *a, *b;                   /* samples: primary, secondary */
    unsigned na, nb;
    uint8_t value[DSIG_BFT_MAX_VALUE];
    char why[200];
    int failed;
    atomic_long plane_tid;
    long tid;
    dsig_node_stats s0;              /* at ARM */
    uint64_t rtx0;                   /* the protocol's retransmissions at ARM */
    uint64_t cpu0;
} worker;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t proc_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void w_fail(worker *w, const char *what, int rc)
{
    if (!w->failed) {
        snprintf(w->why, sizeof w->why, "process %d: %s: %s (%s)", w->idx + 1, what, dsig_strerror(rc),
                 dsig_last_error_detail());
        w->failed = 1;
    }
    pthread_cond_broadcast(&w->cv);
}

static void on_app(void *arg, uint64_t peer, const uint8_t *bytes, size_t len)
{
    worker *w = arg;
    if (!atomic_load_explicit(&w->plane_tid, memory_order_relaxed))
        atomic_store(&w->plane_tid, (long)syscall(SYS_gettid));
    pthread_mutex_lock(&w->mu);
    dsig_bft *b = w->bft;
    pthread_mutex_unlock(&w->mu);
    if (b && dsig_bft_is_frame(bytes, len))
        (void)dsig_bft_receive(b, peer, bytes, len);
}

/* The next ping (process 1) or an echoed pong (process 2), from the event callback: on the thread that
 * delivered, so no sample pays a thread hand-off. mu held. */
static void bcast_next(worker *w, dsig_bft *b)
{
    int rc = dsig_bft_broadcast(b, w->value, w->o->size, NULL);
    if (rc == DSIG_E_WOULD_BLOCK) {
        w->resend = 1; /* the main thread retries */
        pthread_cond_broadcast(&w->cv);
    }
    else if (rc != DSIG_OK)
        w_fail(w, "broadcast", rc);
}

static void submit_next(worker *w, dsig_bft *b)
{
    uint8_t op[DSIG_BFT_MAX_OP], key[1] = {'k'};
    size_t vl = w->o->size > 3 ? w->o->size - 3 : 1; /* PUT + key length + key + value = size bytes */
    size_t len = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, key, 1, w->value, vl);
    w->t0 = now_ns();
    int rc = dsig_bft_submit(b, op, len, NULL);
    if (rc != DSIG_OK)
        w_fail(w, "submit", rc);
}

static void on_event(void *arg, const dsig_bft_event *ev)
{
    worker *w = arg;
    uint64_t t = now_ns();
    pthread_mutex_lock(&w->mu);
    dsig_bft *b = w->bft;
    int id = w->idx + 1;
    if (ev->kind == DSIG_BFT_EV_DELIVER && (w->running || id == 2)) {
        if (id == 1 && ev->origin == 2) {            /* the pong: one sample */
            if (w->got < w->want) {
                w->a[w->na++] = (double)(t - w->t0);
                w->got++;
            }
            if (w->got < w->want) {
                w->value[0]++;
                w->t0 = now_ns();
                bcast_next(w, b);
            } else {
                pthread_cond_broadcast(&w->cv);
            }
        } else if (id == 2 && ev->origin == 1) {     /* answer the ping (armed or not: no race with ARM) */
            memcpy(w->value, ev->value, ev->value_len < sizeof w->value ? ev->value_len : sizeof w->value);
            bcast_next(w, b);
        }
    } else if (ev->kind == DSIG_BFT_EV_REPLY && w->running && id == w->np) {
        w->b[w->nb++] = (double)(t - w->t0);
        if (++w->got < w->want) {
            w->value[0]++;
            submit_next(w, b);
        } else {
            pthread_cond_broadcast(&w->cv);
        }
    } else if (ev->kind == DSIG_BFT_EV_DECIDE && w->running && id == 1 && ev->proposed_ns) {
        if (w->lgot < w->want)
            w->a[w->na++] = (double)(t - ev->proposed_ns);
        if (++w->lgot >= w->want)
            pthread_cond_broadcast(&w->cv);
    } else if (ev->kind == DSIG_BFT_EV_EVIDENCE) {
        w_fail(w, "unexpected equivocation evidence", DSIG_E_INTERNAL);
    }
    pthread_mutex_unlock(&w->mu);
}

static int w_open(worker *w, const ctl_cmd *c)
{
    uint64_t members[DSIG_BFT_MAX_MEMBERS], client = (uint64_t)w->np;
    for (int i = 0; i < w->n; i++)
        members[i] = (uint64_t)i + 1;
    dsig_bft_peer_key pk[MAXP];
    size_t npk = 0;
    for (int i = 0; i < w->np; i++)
        if (i != w->idx)
            pk[npk++] = (dsig_bft_peer_key){.id = (uint64_t)i + 1, .key = w->keys[i].bft_pub};
    dsig_bft_options bo;
    dsig_bft_options_default(&bo);
    bo.protocol = c->proto == PR_CBC ? DSIG_BFT_CBC : c->proto == PR_RBC ? DSIG_BFT_RBC
                  : w->idx + 1 == w->np                ? DSIG_BFT_CLIENT
                                                       : DSIG_BFT_REPLICA;
    bo.scheme = c->scheme == SC_DSIG ? DSIG_BFT_SCHEME_DSIG : c->scheme == SC_ED25519 ? DSIG_BFT_SCHEME_KEY
                                                                                      : DSIG_BFT_SCHEME_NONE;
    bo.session = c->session;
    bo.members = members;
    bo.n_members = (size_t)w->n;
    bo.clients = &client;
    bo.n_clients = 1;
    bo.group = "bft";
    bo.key = w->keys[w->idx].bft;
    bo.alg = dsig_alg_by_name("Ed25519");
    bo.peer_keys = pk;
    bo.n_peer_keys = npk;
    bo.view_timeout_ms = 5000;  /* no view change from a slow sample on a loaded machine */
    bo.retransmit_ms = 200;
    bo.on_event = on_event;
    bo.on_event_arg = w;
    dsig_bft *b = NULL;
    int rc = dsig_bft_new(&b, w->node, &bo);
    if (rc != DSIG_OK) {
        w_fail(w, "open", rc);
        return rc;
    }
    pthread_mutex_lock(&w->mu);
    w->bft = b;
    w->proto = (int)c->proto;
    w->scheme = (int)c->scheme;
    pthread_mutex_unlock(&w->mu);
    return DSIG_OK;
}

static void w_close(worker *w)
{
    pthread_mutex_lock(&w->mu);
    dsig_bft *b = w->bft;
    w->bft = NULL;
    pthread_mutex_unlock(&w->mu);
    /* on_app may still hold the old pointer for one frame: let the plane pass it */
    usleep(2000);
    dsig_bft_free(b);
}

/* ARM: counters reset and recording on, at every process before any sample starts (a decision can reach
 * the leader before its RUN does). */
static uint64_t retransmits(worker *w)
{
    dsig_bft_stats st = {0};
    pthread_mutex_lock(&w->mu);
    if (w->bft)
        dsig_bft_stats_get(w->bft, &st);
    pthread_mutex_unlock(&w->mu);
    return st.retransmits;
}

static void w_arm(worker *w, const ctl_cmd *c)
{
    dsig_node_stats_get(w->node, &w->s0);
    w->rtx0 = retransmits(w);
    w->cpu0 = proc_cpu_ns();
    pthread_mutex_lock(&w->mu);
    w->want = c->count;
    w->got = w->lgot = 0;
    w->na = w->nb = 0;
    w->resend = 0;
    w->running = 1;
    memset(w->value, 0, sizeof w->value);
    w->value[1] = (uint8_t)(w->idx + 1);
    pthread_mutex_unlock(&w->mu);
}

/* RUN: the initiator's samples (process 1 for broadcast; the client for replication, with the leader's
 * decision latencies); the other processes take part without waiting here. */
static void w_run(worker *w, const ctl_cmd *c, ctl_rep *rep)
{
    int id = w->idx + 1;
    int active = (c->proto != PR_PBFT && id == 1) || (c->proto == PR_PBFT && (id == w->np || id == 1));
    pthread_mutex_lock(&w->mu);
    dsig_bft *b = w->bft;
    if (active && id == 1 && c->proto != PR_PBFT) {
        w->t0 = now_ns();
        bcast_next(w, b);
    } else if (active && id == w->np) {
        submit_next(w, b);
    }
    uint64_t deadline = now_ns() + 120000000000ull;
    while (active && !w->failed) {
        int done = c->proto == PR_PBFT ? (id == w->np ? w->got >= w->want : w->lgot >= w->want) : w->got >= w->want;
        if (done)
            break;
        if (now_ns() > deadline) {
            w_fail(w, "no progress within 120 s", DSIG_E_WOULD_BLOCK);
            break;
        }
        if (w->resend) {
            w->resend = 0;
            pthread_mutex_unlock(&w->mu);
            usleep(100);
            pthread_mutex_lock(&w->mu);
            bcast_next(w, w->bft);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    if (active)
        w->running = 0;
    rep->n_a = w->na;
    rep->n_b = w->nb;
    pthread_mutex_unlock(&w->mu);
}

/* STOP: this process's CPU time and DSig verification counts since ARM (every process, after the
 * initiators finished: the same window everywhere). */
static void w_stop(worker *w, ctl_rep *rep)
{
    dsig_node_stats s1;
    dsig_node_stats_get(w->node, &s1);
    rep->cpu_ns = proc_cpu_ns() - w->cpu0;
    rep->fast = s1.verify_fast - w->s0.verify_fast;
    rep->slow = s1.verify_slow - w->s0.verify_slow;
    rep->rtx = retransmits(w) - w->rtx0;
}

/* Send the samples after a reply, in chunks. */
static int send_samples(int fd, const double *v, unsigned n)
{
    for (unsigned i = 0; i < n; i += CHUNK) {
        unsigned k = n - i < CHUNK ? n - i : CHUNK;
        if (send_all_msg(fd, v + i, k * sizeof *v) != 0)
            return -1;
    }
    return 0;
}

/* The command loop of one process (a child, or a thread of the coordinator). */
static int worker_main(worker *w)
{
    int code = 0;
    for (;;) {
        ctl_cmd c;
        if (recv_msg(w->fd, &c, sizeof c) != (int)sizeof c)
            return 2;
        ctl_rep rep;
        memset(&rep, 0, sizeof rep);
        switch (c.op) {
        case OP_PROBE: { /* every peer connected; an APP frame to each: every plane thread shows itself */
            uint64_t until = now_ns() + 30000000000ull;
            for (int i = 0; i < w->np; i++)
                while (i != w->idx && !dsig_node_peer_up(w->node, (uint64_t)i + 1) && now_ns() < until)
                    usleep(1000);
            for (int i = 0; i < w->np; i++)
                if (i != w->idx)
                    (void)dsig_node_send_app(w->node, (uint64_t)i + 1, "probe", 5);
            rep.rc = (int32_t)(uint32_t)w->tid;
            break;
        }
        case OP_OPEN:
            rep.rc = w_open(w, &c);
            break;
        case OP_READY:
            if (c.scheme == SC_DSIG)
                rep.rc = dsig_node_wait_ready(w->node, "bft", c.count, 120000);
            break;
        case OP_ARM:
            w_arm(w, &c);
            break;
        case OP_RUN:
            w_run(w, &c, &rep);
            break;
        case OP_STOP:
            w_stop(w, &rep);
            break;
        case OP_CLOSE:
            pthread_mutex_lock(&w->mu);
            w->running = 0;
            pthread_mutex_unlock(&w->mu);
            w_close(w);
            break;
        case OP_QUIT:
            return code;
        default:
            rep.rc = DSIG_E_ARG;
        }
        pthread_mutex_lock(&w->mu);
        if (w->failed && rep.rc == 0)
            rep.rc = DSIG_E_INTERNAL;
        if (w->failed)
            snprintf(rep.why, sizeof rep.why, "%s", w->why);
        pthread_mutex_unlock(&w->mu);
        if (rep.rc && !rep.why[0])
            snprintf(rep.why, sizeof rep.why, "process %d: %s: %s", w->idx + 1, dsig_strerror(rep.rc),
                     dsig_last_error_detail());
        if (send_all_msg(w->fd, &rep, sizeof rep) != 0 ||
            (c.op == OP_RUN && (send_samples(w->fd, w->a, rep.n_a) || send_samples(w->fd, w->b, rep.n_b))))
            return 2;
    }
}

/* ---- set-up ------------------------------------------------------------------------------------ */

static int reserve_ports(unsigned *port, int n)
{
    int fd[MAXP], rc = 0;
    for (int i = 0; i < n; i++)
        fd[i] = -1;
    for (int i = 0; i < n && rc == 0; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&a, sizeof a) != 0 ||
            getsockname(fd[i], (struct sockaddr *)&a, &al) != 0)
            rc = -1;
        else
            port[i] = ntohs(a.sin_port);
    }
    for (int i = 0; i < n; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    return rc;
}

/* Keys and the in-memory membership: nodes 1..np on loopback TCP, all in group "bft". */
static dsig_node_config *make_config(proc_keys *k, int np, char *why, size_t wl)
{
    /* The node key is a DSig key (the node plane signs batch roots and authenticates under keys
     * derived from it); the BFT key signs the protocol's messages under the Ed25519 scheme. */
    const dsig_alg *ed = dsig_alg_by_name("Ed25519"), *dsig = dsig_alg_by_name("DSig");
    unsigned port[MAXP];
    if (!ed || !dsig || reserve_ports(port, np) != 0) {
        snprintf(why, wl, "no Ed25519, no DSig or no loopback ports");
        return NULL;
    }
    size_t cap = 1024 + (size_t)np * 512, len = 0;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    len += (size_t)snprintf(text, cap, "{\"nodes\":[");
    for (int i = 0; i < np; i++) {
        char *jwk = NULL;
        size_t jl = 0;
        if (dsig_key_generate(&k[i].node, dsig, NULL) || dsig_key_generate(&k[i].bft, ed, NULL) ||
            dsig_key_public(&k[i].bft_pub, k[i].bft) || dsig_jwk_export(k[i].node, 0, &jwk, &jl)) {
            snprintf(why, wl, "keys: %s", dsig_last_error_detail());
            free(text);
            return NULL;
        }
        len += (size_t)snprintf(text + len, cap - len,
                                "%s{\"id\":%d,\"address\":\"tcp:127.0.0.1:%u\",\"public_key\":%.*s,\"groups\":[\"bft\"]}",
                                i ? "," : "", i + 1, port[i], (int)jl, jwk);
        dsig_free(jwk);
    }
    len += (size_t)snprintf(text + len, cap - len, "],\"groups\":{\"bft\":{\"params\":\"wots4-haraka-b128\"}}}");
    dsig_node_config *cfg = NULL;
    if (len >= cap || dsig_node_config_parse(text, len, &cfg) != DSIG_OK) {
        snprintf(why, wl, "configuration: %s", dsig_last_error_detail());
        cfg = NULL;
    }
    free(text);
    return cfg;
}

/* Keys per pool: what one batch of samples signs at most (RBC: 3 per broadcast, 2 broadcasts per sample;
 * PBFT: 4 per proposal) plus the warm-up, with room. */
static unsigned pool_keys(const bft_opts *o)
{
    unsigned b = o->batch > o->warmup ? o->batch : o->warmup;
    unsigned k = b * 6 + 256;
    k = (k + 127) / 128 * 128;
    return k < 512 ? 512 : k;
}

static int worker_setup(worker *w)
{
    dsig_node_options no;
    dsig_node_options_default(&no);
    no.pool_target = pool_keys(w->o);
    no.cache_batches = no.pool_target / 128 * 2 + 32;
    no.max_app_bytes = DSIG_BFT_NODE_APP_BYTES;
    no.on_app = on_app;
    no.on_app_arg = w;
    int rc = dsig_node_new(&w->node, w->cfg, (uint64_t)w->idx + 1, w->keys[w->idx].node, &no);
    if (rc == DSIG_OK)
        rc = dsig_node_start(w->node);
    if (rc != DSIG_OK) {
        w_fail(w, "node", rc);
        return -1;
    }
    unsigned cap = w->o->count > w->o->warmup ? w->o->count : w->o->warmup;
    if (cap < w->o->batch)
        cap = w->o->batch;
    w->a = calloc(cap, sizeof *w->a);
    w->b = calloc(cap, sizeof *w->b);
    return w->a && w->b ? 0 : -1;
}

static void worker_free(worker *w)
{
    w_close(w);
    dsig_node_free(w->node);
    free(w->a);
    free(w->b);
}

static void *worker_thread(void *arg)
{
    worker *w = arg;
    w->tid = (long)syscall(SYS_gettid);
    if (worker_setup(w) == 0)
        (void)worker_main(w);
    else
        (void)send_all_msg(w->fd, &(ctl_rep){.rc = DSIG_E_INTERNAL}, sizeof(ctl_rep));
    worker_free(w);
    close(w->fd);
    return NULL;
}

/* ---- the coordinator ----------------------------------------------------------------------------- */

typedef struct cell {
    double *a, *b;                   /* pooled samples (ns) */
    size_t na, nb;
    uint64_t cpu_ns, wall_ns, fast, slow, rtx;
} cell;

typedef struct coord {
    const bft_opts *o;
    int np, n, layout;
    int fd[MAXP];
    pid_t pid[MAXP];
    pthread_t th[MAXP];
    worker w[MAXP];
    proc_keys keys[MAXP];
    dsig_node_config *cfg;
    char why[256];
} coord;

/* Send a command to every process (or one), collect the replies; samples of RUN into the cell. */
static int phase(coord *C, int only, const ctl_cmd *c, cell *out)
{
    for (int i = 0; i < C->np; i++)
        if ((only < 0 || i == only) && send_all_msg(C->fd[i], c, sizeof *c) != 0) {
            snprintf(C->why, sizeof C->why, "process %d is gone", i + 1);
            return -1;
        }
    int rc = 0;
    for (int i = 0; i < C->np; i++) {
        if (only >= 0 && i != only)
            continue;
        ctl_rep rep;
        if (recv_msg(C->fd[i], &rep, sizeof rep) != (int)sizeof rep) {
            snprintf(C->why, sizeof C->why, "process %d is gone", i + 1);
            return -1;
        }
        if (rep.rc && c->op != OP_PROBE) {
            if (!rc)
                snprintf(C->why, sizeof C->why, "%s", rep.why);
            rc = -1;
        }
        if (c->op == OP_PROBE)
            C->w[i].tid = rep.rc;
        if (c->op == OP_STOP && out) {
            out->fast += rep.fast;
            out->slow += rep.slow;
            out->rtx += rep.rtx;
            if (C->layout == LY_PROCS || i == 0) /* procs: every process's CPU; fit: one process, once */
                out->cpu_ns += rep.cpu_ns;
        }
        if (c->op != OP_RUN)
            continue;
        for (int part = 0; part < 2; part++) {
            unsigned n = part ? rep.n_b : rep.n_a;
            double **dst = part ? &out->b : &out->a;
            size_t *dn = part ? &out->nb : &out->na;
            for (unsigned got = 0; got < n;) {
                unsigned k = n - got < CHUNK ? n - got : CHUNK;
                double buf[CHUNK];
                if (recv_msg(C->fd[i], buf, sizeof buf) != (int)(k * sizeof(double))) {
                    snprintf(C->why, sizeof C->why, "process %d: bad sample message", i + 1);
                    return -1;
                }
                if (out) {
                    double *g = realloc(*dst, (*dn + k) * sizeof **dst);
                    if (!g)
                        return -1;
                    memcpy(g + *dn, buf, k * sizeof *buf);
                    *dst = g;
                    *dn += k;
                }
                got += k;
            }
        }
    }
    return rc;
}

/* fit: every thread of this process that is neither a coordinator/worker thread nor a node's plane
 * thread (key generation, batch verification) to SCHED_IDLE. The count, or -1. */
static int demote_background(coord *C)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    long keep[2 * MAXP + 1];
    int nk = 0, demoted = 0;
    keep[nk++] = (long)syscall(SYS_gettid);
    for (int i = 0; i < C->np; i++) {
        keep[nk++] = C->w[i].tid;
        keep[nk++] = atomic_load(&C->w[i].plane_tid);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        long tid = strtol(e->d_name, NULL, 10);
        int k = 0;
        while (tid > 0 && k < nk && keep[k] != tid)
            k++;
        if (tid <= 0 || k < nk)
            continue;
        struct sched_param sp = {.sched_priority = 0};
        if (sched_setscheduler((pid_t)tid, SCHED_IDLE, &sp) == 0)
            demoted++;
    }
    closedir(d);
    return demoted;
}

static int coord_start(coord *C)
{
    C->cfg = make_config(C->keys, C->np, C->why, sizeof C->why);
    if (!C->cfg)
        return -1;
    for (int i = 0; i < C->np; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
            snprintf(C->why, sizeof C->why, "socketpair: %s", strerror(errno));
            return -1;
        }
        worker *w = &C->w[i];
        memset(w, 0, sizeof *w);
        w->idx = i, w->np = C->np, w->n = C->n, w->o = C->o, w->keys = C->keys, w->cfg = C->cfg, w->fd = sv[1];
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        atomic_init(&w->plane_tid, 0);
        C->fd[i] = sv[0];
        if (C->layout == LY_PROCS) {
            fflush(stdout);
            fflush(stderr);
            pid_t parent = getpid(), pid = fork(); /* before this child's node exists: no threads lost */
            if (pid < 0) {
                snprintf(C->why, sizeof C->why, "fork: %s", strerror(errno));
                return -1;
            }
            if (pid == 0) {
                (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
                if (getppid() != parent)
                    _exit(2);
                for (int j = 0; j <= i; j++)
                    close(C->fd[j]);
                w->tid = (long)syscall(SYS_gettid);
                int code = worker_setup(w) == 0 ? worker_main(w) : 2;
                worker_free(w);
                _exit(code);
            }
            C->pid[i] = pid;
            close(sv[1]);
        } else if (pthread_create(&C->th[i], NULL, worker_thread, w) != 0) {
            snprintf(C->why, sizeof C->why, "thread: %s", strerror(errno));
            return -1;
        }
    }
    /* every node connected: probe frames show the plane threads (fit: they must stay foreground) */
    ctl_cmd probe = {.op = OP_PROBE};
    for (int tries = 0;; tries++) {
        if (phase(C, -1, &probe, NULL) != 0)
            return -1;
        usleep(100000);
        int known = 1;
        for (int i = 0; i < C->np; i++)
            known &= atomic_load(&C->w[i].plane_tid) != 0;
        if (known || C->layout == LY_PROCS)
            break;
        if (tries == 20) {
            snprintf(C->why, sizeof C->why, "a node's plane thread never received a frame");
            return -1;
        }
    }
    if (C->layout == LY_FIT) {
        int d = demote_background(C);
        if (!C->o->quiet)
            fprintf(stderr, "# fit layout: %d background threads at SCHED_IDLE\n", d);
    }
    return 0;
}

static void coord_stop(coord *C)
{
    ctl_cmd q = {.op = OP_QUIT};
    for (int i = 0; i < C->np; i++)
        if (C->fd[i] > 0)
            (void)send_all_msg(C->fd[i], &q, sizeof q);
    for (int i = 0; i < C->np; i++) {
        if (C->layout == LY_PROCS && C->pid[i] > 0) {
            int st;
            waitpid(C->pid[i], &st, 0);
        } else if (C->layout == LY_FIT && C->th[i]) {
            pthread_join(C->th[i], NULL);
        }
        if (C->fd[i] > 0)
            close(C->fd[i]);
    }
    for (int i = 0; i < C->np; i++) {
        dsig_key_free(C->keys[i].node);
        dsig_key_free(C->keys[i].bft);
        dsig_key_free(C->keys[i].bft_pub);
    }
    dsig_node_config_free(C->cfg);
}

/* One (protocol, scheme) block: open, warm-up, batches of timed samples, close. */
static int block(coord *C, int proto, int scheme, uint64_t session, cell *out)
{
    const bft_opts *o = C->o;
    int np = proto == PR_PBFT ? C->np : C->n; /* broadcast: the client process sits out */
    int saved = C->np;
    C->np = np;
    ctl_cmd c = {.op = OP_OPEN, .proto = (uint32_t)proto, .scheme = (uint32_t)scheme, .session = session};
    int rc = phase(C, -1, &c, NULL);
    unsigned done = 0, total = o->warmup + o->count;
    while (rc == 0 && done < total) {
        unsigned k = done < o->warmup ? o->warmup - done : o->batch;
        if (done >= o->warmup && done + k > total)
            k = total - done;
        if (k == 0)
            break;
        ctl_cmd ready = {.op = OP_READY, .scheme = (uint32_t)scheme, .count = pool_keys(o)};
        ctl_cmd arm = {.op = OP_ARM, .proto = (uint32_t)proto, .scheme = (uint32_t)scheme, .count = k};
        ctl_cmd run = {.op = OP_RUN, .proto = (uint32_t)proto, .scheme = (uint32_t)scheme, .count = k};
        ctl_cmd stop = {.op = OP_STOP};
        cell tmp = {0};
        if ((rc = phase(C, -1, &ready, NULL)) != 0)
            break;
        /* the CPU window (ARM .. STOP, every process) and the wall time between them */
        uint64_t w0 = now_ns();
        if ((rc = phase(C, -1, &arm, NULL)) != 0 || (rc = phase(C, -1, &run, &tmp)) != 0 ||
            (rc = phase(C, -1, &stop, &tmp)) != 0)
            break;
        uint64_t w1 = now_ns();
        if (rc == 0 && done >= o->warmup) {
            out->a = realloc(out->a, (out->na + tmp.na) * sizeof *out->a);
            out->b = realloc(out->b, (out->nb + tmp.nb) * sizeof *out->b);
            if (!out->a || (tmp.nb && !out->b))
                rc = -1;
            else {
                if (tmp.na) /* memcpy from NULL is undefined even for 0 bytes: a metric without samples */
                    memcpy(out->a + out->na, tmp.a, tmp.na * sizeof *tmp.a);
                if (tmp.nb)
                    memcpy(out->b + out->nb, tmp.b, tmp.nb * sizeof *tmp.b);
                out->na += tmp.na;
                out->nb += tmp.nb;
                out->cpu_ns += tmp.cpu_ns;
                out->wall_ns += w1 - w0;
                out->fast += tmp.fast;
                out->slow += tmp.slow;
                out->rtx += tmp.rtx;
            }
        }
        free(tmp.a);
        free(tmp.b);
        done += k;
    }
    ctl_cmd close_c = {.op = OP_CLOSE};
    int rc2 = phase(C, -1, &close_c, NULL);
    C->np = saved;
    return rc ? rc : rc2;
}

/* ---- report ------------------------------------------------------------------------------------ */

typedef struct row {
    int layout, proto, scheme, metric; /* metric 0: the paper's (ping-pong / proposal->decision); 1: client */
    size_t n;
    double p10, p50, p90;              /* us */
    double cores, fast;
    uint64_t rtx;
} row;

static const char *metric_name(int proto, int metric)
{
    return proto == PR_PBFT ? (metric ? "client request->reply" : "proposal->decision") : "ping-pong (2 bcasts)";
}

static void stats_of(double *v, size_t n, row *r)
{
    bench_stat s = bench_stat_of(v, n); /* sorts */
    r->n = n;
    r->p50 = s.median / 1e3;
    r->p10 = bench_percentile(v, n, 0.10) / 1e3;
    r->p90 = bench_percentile(v, n, 0.90) / 1e3;
}

static const row *find_row(const row *rows, size_t n, int layout, int proto, int scheme, int metric)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].layout == layout && rows[i].proto == proto && rows[i].scheme == scheme && rows[i].metric == metric)
            return &rows[i];
    return NULL;
}

static void write_files(const bft_opts *o, const row *rows, size_t nr, const char *machine, const char *date,
                        int np)
{
    char ts[32], path[1024];
    bench_timestamp(ts, sizeof ts);
    if (!o->out_dir) {
        printf("# CSV, SVG: not written (give --out DIR)\n");
        return;
    }
    if (bench_mkdir_p(o->out_dir) != 0) {
        fprintf(stderr, "dsig bench bft: cannot create %s\n", o->out_dir);
        return;
    }
    snprintf(path, sizeof path, "%s/benchmark_bft_%s.csv", o->out_dir, ts);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("layout,protocol,metric,scheme,n_processes,msg_bytes,samples,p10_us,p50_us,p90_us,cpu_cores,"
              "fast_path,retransmits,machine,date\n", f);
        for (size_t i = 0; i < nr; i++) {
            const row *r = &rows[i];
            fprintf(f, "%s,%s,", layout_names[r->layout], proto_names[r->proto]);
            bench_csv_str(f, metric_name(r->proto, r->metric));
            fprintf(f, ",%s,%d,%u,%zu,%.3f,%.3f,%.3f,%.3f,", scheme_names[r->scheme],
                    r->proto == PR_PBFT ? np : np - 1, o->size, r->n, r->p10, r->p50, r->p90, r->cores);
            if (r->fast < 0)
                fputc(',', f);
            else
                fprintf(f, "%.4f,", r->fast);
            fprintf(f, "%llu,", (unsigned long long)r->rtx);
            bench_csv_str(f, machine);
            fprintf(f, ",%s\n", date);
        }
        fclose(f);
        printf("# CSV: %s\n", path);
    }
    snprintf(path, sizeof path, "%s/benchmark_bft_%s.svg", o->out_dir, ts);
    f = fopen(path, "w");
    if (!f)
        return;
    bench_lat_bar bars[N_LAYOUTS * N_PROTOS * 2 * N_SCHEMES];
    char groups[N_LAYOUTS * N_PROTOS * 2][64];
    const char *series[N_SCHEMES];
    size_t nb = 0, ng = 0, ns = 0;
    for (int s = 0; s < N_SCHEMES; s++)
        if (o->schemes & (1u << s))
            series[ns++] = scheme_names[s];
    for (size_t i = 0; i < nr; i++) {
        const row *r = &rows[i];
        char g[64];
        snprintf(g, sizeof g, "%s %s, %s", proto_names[r->proto], r->metric ? "client" : "", layout_names[r->layout]);
        if (r->proto != PR_PBFT || !r->metric)
            snprintf(g, sizeof g, "%s, %s", proto_names[r->proto], layout_names[r->layout]);
        else
            snprintf(g, sizeof g, "pbft client, %s", layout_names[r->layout]);
        size_t k = 0;
        while (k < ng && strcmp(groups[k], g) != 0)
            k++;
        if (k == ng)
            snprintf(groups[ng++], sizeof groups[0], "%s", g);
        size_t si = 0;
        while (si < ns && strcmp(series[si], scheme_names[r->scheme]) != 0)
            si++;
        bars[nb++] = (bench_lat_bar){.group = groups[k], .series = (int)si, .p10 = r->p10, .p50 = r->p50,
                                     .p90 = r->p90};
    }
    char sub1[400], sub2[200];
    snprintf(sub1, sizeof sub1, "%s; %s", machine, date);
    snprintf(sub2, sizeof sub2, "n = %d processes (f = %u), + 1 client for pbft; %u-byte messages; %u samples per bar (%u run%s)",
             np - 1, o->f, o->size, o->count * o->runs, o->runs, o->runs > 1 ? "s" : "");
    const char *subs[4] = {sub1, sub2,
                           "cbc / rbc: one ping + one pong (two broadcasts); pbft: proposal -> decision at the leader; "
                           "pbft client: request -> f+1 replies",
                           "procs: one OS process per BFT process; fit: threads of one process, background threads "
                           "(key generation, batch verification) at SCHED_IDLE"};
    const bench_lat_chart chart = {
        .title = "dsig bench bft: BFT latency with no signature, Ed25519 and DSig (lower is better)",
        .subtitle = subs, .nsub = 4, .series = series, .nseries = ns, .unit = "µs",
        .axis = "latency, microseconds", .log_axis = 1};
    bench_svg_latency(f, &chart, bars, nb);
    fclose(f);
    printf("# SVG: %s\n", path);
}

/* The 1-minute load average (other jobs on this machine: they take cores from the measurement). */
static double load_avg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static void report(const bft_opts *o, cell cells[N_LAYOUTS][N_PROTOS][N_SCHEMES], int np, double load0)
{
    row rows[N_LAYOUTS * N_PROTOS * N_SCHEMES * 2];
    size_t nr = 0;
    char machine[320], date[64];
    bench_machine(machine, sizeof machine);
    size_t ml = strlen(machine);
    snprintf(machine + ml, sizeof machine - ml, ", load average %.1f / %.1f (start / end)", load0, load_avg());
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# %s; %s\n", machine, date);
    printf("%-6s %-5s %-22s %-8s %7s | %9s %9s %9s | %6s %6s %5s\n", "layout", "proto", "metric", "scheme", "samples",
           "p10 us", "p50 us", "p90 us", "cores", "fast", "rtx");
    for (int l = 0; l < N_LAYOUTS; l++)
        for (int p = 0; p < N_PROTOS; p++)
            for (int m = 0; m < (p == PR_PBFT ? 2 : 1); m++)
                for (int s = 0; s < N_SCHEMES; s++) {
                    cell *c = &cells[l][p][s];
                    double *v = m ? c->b : c->a;
                    size_t n = m ? c->nb : c->na;
                    if (!n)
                        continue;
                    row *r = &rows[nr++];
                    memset(r, 0, sizeof *r);
                    r->layout = l, r->proto = p, r->scheme = s, r->metric = m;
                    stats_of(v, n, r);
                    r->cores = c->wall_ns ? (double)c->cpu_ns / (double)c->wall_ns : 0;
                    r->fast = s == SC_DSIG && c->fast + c->slow ? (double)c->fast / (double)(c->fast + c->slow) : -1;
                    r->rtx = c->rtx;
                    printf("%-6s %-5s %-22s %-8s %7zu | %9.1f %9.1f %9.1f | %6.2f ", layout_names[l], proto_names[p],
                           metric_name(p, m), scheme_names[s], r->n, r->p10, r->p50, r->p90, r->cores);
                    if (r->fast < 0)
                        printf("%6s", "-");
                    else
                        printf("%5.1f%%", 100 * r->fast);
                    printf(" %5llu\n", (unsigned long long)r->rtx);
                }
    /* the paper's ratio and the added-latency ratio, per layout and protocol (the paper's metric) */
    for (int l = 0; l < N_LAYOUTS; l++)
        for (int p = 0; p < N_PROTOS; p++) {
            const row *none = find_row(rows, nr, l, p, SC_NONE, 0), *ed = find_row(rows, nr, l, p, SC_ED25519, 0),
                      *ds = find_row(rows, nr, l, p, SC_DSIG, 0);
            if (!ed || !ds)
                continue;
            printf("# %s %s: 1 - p50(dsig)/p50(ed25519) = %.2f (paper: %.2f)", layout_names[l], proto_names[p],
                   1.0 - ds->p50 / ed->p50, paper_ratio[p]);
            if (none && ed->p50 > none->p50)
                printf("; added latency over none: dsig %.1f us, ed25519 %.1f us, ratio %.3f (%.0f%% less)",
                       ds->p50 - none->p50, ed->p50 - none->p50, (ds->p50 - none->p50) / (ed->p50 - none->p50),
                       100 * (1 - (ds->p50 - none->p50) / (ed->p50 - none->p50)));
            printf("\n");
        }
    write_files(o, rows, nr, machine, date, np);
}

int bench_bft_main(int argc, char **argv)
{
    bft_opts o;
    char err[BENCH_ERR_LEN];
    int r = parse(argc, argv, &o, err, sizeof err);
    if (r == 1) {
        usage(stdout);
        return 0;
    }
    if (r < 0) {
        fprintf(stderr, "dsig bench bft: %s\n", err);
        return 2;
    }
    int n = 3 * (int)o.f + 1, np = n + 1;
    double load0 = load_avg();
    static cell cells[N_LAYOUTS][N_PROTOS][N_SCHEMES];
    memset(cells, 0, sizeof cells);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!o.quiet)
        fprintf(stderr,
                "# dsig bench bft: n = %d (+1 client for pbft), %u-byte messages, %u warm-up + %u samples per "
                "protocol, scheme and layout in batches of %u, %u run(s); each node runs a plane, a batch-"
                "verification and a key-generation thread: %d threads for %ld cores\n",
                n, o.size, o.warmup, o.count, o.batch, o.runs, 3 * np, cores);
    int code = 0;
    for (int l = 0; l < N_LAYOUTS && !code; l++) {
        if (!(o.layouts & (1u << l)))
            continue;
        coord C;
        memset(&C, 0, sizeof C);
        C.o = &o, C.n = n, C.np = np, C.layout = l;
        if (coord_start(&C) != 0) {
            fprintf(stderr, "dsig bench bft: %s layout: %s\n", layout_names[l], C.why);
            coord_stop(&C);
            code = 2;
            break;
        }
        for (unsigned run = 0; run < o.runs && !code; run++)
            for (int p = 0; p < N_PROTOS && !code; p++)
                for (int s = 0; s < N_SCHEMES && !code; s++) {
                    if (!(o.protos & (1u << p)) || !(o.schemes & (1u << s)))
                        continue;
                    if (!o.quiet)
                        fprintf(stderr, "# %s layout, run %u/%u: %s, %s\n", layout_names[l], run + 1, o.runs,
                                proto_names[p], scheme_names[s]);
                    uint64_t session = ((uint64_t)l << 32 | (uint64_t)run << 16 | (uint64_t)p << 8 | (uint64_t)s) + 1;
                    if (block(&C, p, s, session, &cells[l][p][s]) != 0) {
                        fprintf(stderr, "dsig bench bft: %s, %s, %s: %s\n", layout_names[l], proto_names[p],
                                scheme_names[s], C.why);
                        code = 2;
                    }
                }
        coord_stop(&C);
    }
    if (!code)
        report(&o, cells, np, load0);
    for (int l = 0; l < N_LAYOUTS; l++)
        for (int p = 0; p < N_PROTOS; p++)
            for (int s = 0; s < N_SCHEMES; s++) {
                free(cells[l][p][s].a);
                free(cells[l][p][s].b);
            }
    return code;
}
