/*
 * tests/bft/bft_byz.c — a Byzantine process for the fault tests (test_bft_procs.c): a DSig node with
 * an honest protocol core whose frames it tampers with (src/bft/runtime.h hooks, tests/bft/byz.h):
 *   --equivocate  the twin of every SEND / PRE-PREPARE it sends, validly signed, to every member of odd
 *                 index (the others get the real one);
 *   --silent      sends nothing at all (a silent leader);
 *   --noise       every 10 ms a frame of garbage, a replay, a mutation or a vote moved to another
 *                 instance, to a random process.
 *
 *   bft_byz --config FILE --id N --key KEY.jwk (--replica --replicas L --clients L | --member cbc|rbc
 *           [--members L] [--broadcast N]) [--equivocate] [--silent] [--noise] [--session N]
 * Runs until SIGTERM; prints its counters on stdout at exit.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bft/runtime.h"
#include "byz.h"
#include "dsig/dsig.h"
#include "dsig/bft.h"
#include "dsig/jwk.h"
#include "dsig/node.h"

#define CAPTURE 32

static volatile sig_atomic_t stop_flag;
static void on_signal(int s)
{
    (void)s;
    stop_flag = 1;
}

typedef struct byz {
    pthread_mutex_t mu;
    dsig_bft *bft;
    int equivocate, silent;
    bft_buf cap[CAPTURE];
    size_t n_cap;
    uint64_t rng;
} byz;

static int parse_ids(const char *s, uint64_t *out, int cap)
{
    int n = 0;
    while (*s && n < cap) {
        char *end;
        out[n++] = strtoull(s, &end, 10);
        if (end == s)
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static void on_app(void *arg, uint64_t peer, const uint8_t *b, size_t len)
{
    byz *z = arg;
    pthread_mutex_lock(&z->mu);
    dsig_bft *t = z->bft;
    bft_buf *c = &z->cap[z->n_cap < CAPTURE ? z->n_cap++ : byz_rand(&z->rng) % CAPTURE];
    bb_reset(c);
    bb_put(c, b, len);
    pthread_mutex_unlock(&z->mu);
    if (t)
        (void)dsig_bft_receive(t, peer, b, len);
}

static int sign_cb(void *arg, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sl)
{
    return bft_runtime_sign(arg, stmt, len, sig, cap, sl);
}

/* The send hook (object lock held). */
static int hook(void *arg, dsig_bft *b, uint64_t to, const uint8_t *frame, size_t len)
{
    byz *z = arg;
    if (z->silent)
        return 1;
    if (!z->equivocate)
        return 0;
    const bft_core *c = bft_runtime_core(b);
    int idx = bft_index(c, to);
    if (idx < 0 || idx % 2 == 0)
        return 0;
    bft_buf twin;
    bb_init(&twin);
    int done = byz_equivocate(c, sign_cb, b, frame, len, &twin) == 1;
    if (done)
        (void)bft_runtime_send_raw(b, to, twin.p, twin.len);
    bb_free(&twin);
    return done;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *keypath = NULL, *member = NULL;
    uint64_t id = 0, session = 1, replicas[16], clients[64], members[16];
    int nrep = 0, ncli = 0, nmem = 0, replica = 0, noise = 0, bcast = 0;
    byz z;
    memset(&z, 0, sizeof z);
    pthread_mutex_init(&z.mu, NULL);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--config")) config = v, i++;
        else if (!strcmp(a, "--id")) id = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--key")) keypath = v, i++;
        else if (!strcmp(a, "--session")) session = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--replica")) replica = 1;
        else if (!strcmp(a, "--member")) member = v, i++;
        else if (!strcmp(a, "--replicas")) nrep = parse_ids(v, replicas, 16), i++;
        else if (!strcmp(a, "--clients")) ncli = parse_ids(v, clients, 64), i++;
        else if (!strcmp(a, "--members")) nmem = parse_ids(v, members, 16), i++;
        else if (!strcmp(a, "--broadcast")) bcast = atoi(v), i++;
        else if (!strcmp(a, "--equivocate")) z.equivocate = 1;
        else if (!strcmp(a, "--silent")) z.silent = 1;
        else if (!strcmp(a, "--noise")) noise = 1;
        else {
            fprintf(stderr, "bft_byz: unknown argument %s\n", a);
            return 2;
        }
    }
    if (!config || !id || !keypath || (!replica && !member) || dsig_init() != DSIG_OK)
        return 2;
    dsig_node_config *cfg = NULL;
    FILE *kf = fopen(keypath, "r");
    char kt[4096];
    size_t kl = kf ? fread(kt, 1, sizeof kt, kf) : 0;
    if (kf)
        fclose(kf);
    dsig_key *key = NULL;
    if (dsig_node_config_load(config, &cfg) != DSIG_OK || dsig_jwk_import(&key, kt, kl) != DSIG_OK) {
        fprintf(stderr, "bft_byz: %s\n", dsig_last_error_detail());
        return 2;
    }
    if (member && nmem == 0)
        for (size_t i = 0; i < dsig_node_config_node_count(cfg) && nmem < 16; i++) {
            dsig_node_member m;
            if (dsig_node_config_node(cfg, i, &m) == DSIG_OK)
                members[nmem++] = m.id;
        }
    z.rng = id * 7919 + (uint64_t)time(NULL);
    dsig_node_options no;
    dsig_node_options_default(&no);
    no.pool_target = 256;
    no.max_app_bytes = DSIG_BFT_NODE_APP_BYTES;
    no.on_app = on_app;
    no.on_app_arg = &z;
    dsig_node *node = NULL;
    if (dsig_node_new(&node, cfg, id, key, &no) != DSIG_OK) {
        fprintf(stderr, "bft_byz: node: %s\n", dsig_last_error_detail());
        return 2;
    }
    dsig_key_free(key);
    dsig_node_member self;
    dsig_node_config_find(cfg, id, &self);
    dsig_bft_options bo;
    dsig_bft_options_default(&bo);
    bo.protocol = replica ? DSIG_BFT_REPLICA : !strcmp(member, "rbc") ? DSIG_BFT_RBC : DSIG_BFT_CBC;
    bo.session = session;
    bo.group = self.groups[0];
    bo.members = replica ? replicas : members;
    bo.n_members = (size_t)(replica ? nrep : nmem);
    bo.clients = clients;
    bo.n_clients = (size_t)ncli;
    bo.view_timeout_ms = 600;
    dsig_bft *b = NULL;
    if (dsig_bft_new(&b, node, &bo) != DSIG_OK) {
        fprintf(stderr, "bft_byz: bft: %s\n", dsig_last_error_detail());
        return 2;
    }
    bft_runtime_set_send_hook(b, hook, &z);
    pthread_mutex_lock(&z.mu);
    z.bft = b;
    pthread_mutex_unlock(&z.mu);
    if (dsig_node_start(node) != DSIG_OK)
        return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    for (size_t i = 0; i < bo.n_members; i++)
        for (int t = 0; bo.members[i] != id && !dsig_node_peer_up(node, bo.members[i]) && t < 1000; t++)
            usleep(10000);
    (void)dsig_node_wait_ready(node, bo.group, 128, 1000);
    printf("ready id=%" PRIu64 "\n", id);
    fflush(stdout);
    int sent = 0;
    const bft_core *core = bft_runtime_core(b);
    int cls = replica ? BFT_CLASS_PBFT : bo.protocol == DSIG_BFT_RBC ? BFT_CLASS_RBC : BFT_CLASS_CBC;
    while (!stop_flag) {
        usleep(10000);
        if (sent < bcast) {
            char v[32];
            int vl = snprintf(v, sizeof v, "byz%" PRIu64 "-%d", id, sent + 1);
            if (dsig_bft_broadcast(b, (const uint8_t *)v, (size_t)vl, NULL) == DSIG_OK)
                sent++;
        }
        if (noise && !z.silent) {
            bft_buf f;
            bb_init(&f);
            pthread_mutex_lock(&z.mu);
            byz_inject(core, cls, &z.rng, z.cap, z.n_cap, &f);
            uint64_t to = core->members[byz_rand(&z.rng) % core->n];
            if (replica && ncli && byz_rand(&z.rng) % 4 == 0)
                to = clients[0];
            pthread_mutex_unlock(&z.mu);
            if (to != id && !f.err)
                (void)bft_runtime_send_raw(b, to, f.p, f.len);
            bb_free(&f);
        }
    }
    dsig_node_stop(node);
    dsig_bft_stats st;
    dsig_bft_stats_get(b, &st);
    printf("stats byz=%" PRIu64 " frames_out=%" PRIu64 " malformed=%" PRIu64 " forged=%" PRIu64 "\n", id,
           st.frames_out, st.malformed, st.forged);
    dsig_bft_free(b);
    dsig_node_free(node);
    dsig_node_config_free(cfg);
    for (size_t i = 0; i < CAPTURE; i++)
        bb_free(&z.cap[i]);
    return 0;
}
