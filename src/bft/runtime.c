/*
 * src/bft/runtime.c — dsig/bft.h: a protocol core bound to a DSig node. One mutex serialises the core
 * (frames from the node's plane thread, the ticker thread, the application's calls); events are queued
 * under it and handed to on_event afterwards by one thread at a time, in order, with no lock held, so
 * the callback may broadcast or submit again.
 *
 * Signatures: SCHEME_DSIG signs through the node (node_adapter.c, the one file that calls the node),
 * SCHEME_KEY through the registry's one-shot dsig_sign / dsig_verify, SCHEME_NONE not at all.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "bft/bft.h"
#include "bft/node_adapter.h"
#include "bft/runtime.h"
#include "core/internal.h"
#include "dsig/registry.h"
#include "dsig/stream.h"

typedef struct ev_item {
    struct ev_item *next;
    dsig_bft_event ev;
    uint8_t data[];                  /* value ‖ result ‖ proof */
} ev_item;

typedef struct peer_key {
    uint64_t id;
    dsig_key *key;                   /* public copy */
} peer_key;

struct dsig_bft {
    pthread_mutex_t mu;              /* the core */
    dsig_node *node;
    int protocol, scheme;
    uint64_t self;
    char group[DSIG_NODE_MAX_NAME + 1];
    const dsig_alg *alg;
    const dsig_key *key;
    peer_key *peers;
    size_t n_peers;
    bft_env env;
    dsig_bft_stats st;
    union {
        bft_cbc *cbc;
        bft_rbc *rbc;
        bft_replica *rep;
        bft_client *cli;
    } core;
    bft_send_hook hook;
    void *hook_arg;
    dsig_bft_event_cb on_event;
    void *on_event_arg;
    /* events (evmu; taken after mu, never before) */
    pthread_mutex_t evmu;
    ev_item *head, *tail;
    int dispatching;
    /* ticker */
    unsigned tick_ms;
    pthread_t ticker;
    int ticker_started, stop;
    pthread_cond_t stop_cv;
};

/* ---- env ------------------------------------------------------------------------------------ */

static void env_send(void *ctx, uint64_t to, const uint8_t *frame, size_t len)
{
    dsig_bft *b = ctx;
    if (b->hook && b->hook(b->hook_arg, b, to, frame, len))
        return;
    if (bft_node_send(b->node, to, frame, len) != DSIG_OK)
        b->st.send_failed++;
}

static int env_sign(void *ctx, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    dsig_bft *b = ctx;
    switch (b->scheme) {
    case DSIG_BFT_SCHEME_DSIG:
        return bft_node_sign(b->node, b->group, stmt, len, sig, cap, sig_len);
    case DSIG_BFT_SCHEME_KEY:
        return dsig_sign(b->alg, b->key, stmt, len, sig, cap, sig_len);
    default:
        *sig_len = 0;
        return DSIG_OK;
    }
}

static const dsig_key *peer_of(const dsig_bft *b, uint64_t id)
{
    for (size_t i = 0; i < b->n_peers; i++)
        if (b->peers[i].id == id)
            return b->peers[i].key;
    return NULL;
}

static int env_verify(void *ctx, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig,
                      size_t sig_len)
{
    dsig_bft *b = ctx;
    switch (b->scheme) {
    case DSIG_BFT_SCHEME_DSIG:
        return bft_node_verify(b->node, signer, stmt, len, sig, sig_len);
    case DSIG_BFT_SCHEME_KEY: {
        const dsig_key *k = peer_of(b, signer);
        return k ? dsig_verify(b->alg, k, stmt, len, sig, sig_len) : DSIG_E_UNKNOWN_SIGNER;
    }
    default:
        return sig_len == 0 ? DSIG_OK : DSIG_E_VERIFY;
    }
}

/* Queue a copy of an event (mu held). */
static void env_event(void *ctx, const dsig_bft_event *ev)
{
    dsig_bft *b = ctx;
    if (!b->on_event)
        return;
    ev_item *it = dsig_malloc(sizeof *it + ev->value_len + ev->result_len + ev->proof_len);
    if (!it)
        return;
    it->next = NULL;
    it->ev = *ev;
    uint8_t *p = it->data;
    if (ev->value_len)
        memcpy(p, ev->value, ev->value_len);
    it->ev.value = p;
    p += ev->value_len;
    if (ev->result_len)
        memcpy(p, ev->result, ev->result_len);
    it->ev.result = p;
    p += ev->result_len;
    if (ev->proof_len)
        memcpy(p, ev->proof, ev->proof_len);
    it->ev.proof = p;
    pthread_mutex_lock(&b->evmu);
    if (b->tail)
        b->tail->next = it;
    else
        b->head = it;
    b->tail = it;
    pthread_mutex_unlock(&b->evmu);
}

static uint64_t env_now_ms(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Hand queued events to on_event, one thread at a time, no lock held during the callback. */
static void drain(dsig_bft *b)
{
    pthread_mutex_lock(&b->evmu);
    if (b->dispatching) {
        pthread_mutex_unlock(&b->evmu);
        return;
    }
    b->dispatching = 1;
    while (b->head) {
        ev_item *it = b->head;
        b->head = it->next;
        if (!b->head)
            b->tail = NULL;
        pthread_mutex_unlock(&b->evmu);
        b->on_event(b->on_event_arg, &it->ev);
        dsig_xfree(it, 0);
        pthread_mutex_lock(&b->evmu);
    }
    b->dispatching = 0;
    pthread_mutex_unlock(&b->evmu);
}

/* ---- the core behind the object --------------------------------------------------------------- */

bft_core *bft_runtime_core(dsig_bft *b)
{
    switch (b->protocol) {
    case DSIG_BFT_CBC: return bft_cbc_core(b->core.cbc);
    case DSIG_BFT_RBC: return bft_rbc_core(b->core.rbc);
    case DSIG_BFT_REPLICA: return bft_replica_core(b->core.rep);
    default: return bft_client_core(b->core.cli);
    }
}

static void core_tick(dsig_bft *b)
{
    switch (b->protocol) {
    case DSIG_BFT_CBC: bft_cbc_tick(b->core.cbc); break;
    case DSIG_BFT_RBC: bft_rbc_tick(b->core.rbc); break;
    case DSIG_BFT_REPLICA: bft_replica_tick(b->core.rep); break;
    default: bft_client_tick(b->core.cli); break;
    }
}

static void *ticker_main(void *arg)
{
    dsig_bft *b = arg;
    pthread_mutex_lock(&b->mu);
    while (!b->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)b->tick_ms * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&b->stop_cv, &b->mu, &ts);
        if (b->stop)
            break;
        core_tick(b);
        pthread_mutex_unlock(&b->mu);
        drain(b);
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* ---- public API ----------------------------------------------------------------------------- */

void dsig_bft_options_default(dsig_bft_options *o)
{
    memset(o, 0, sizeof *o);
    o->scheme = DSIG_BFT_SCHEME_DSIG;
    o->durable = 1;
    o->tick_ms = 10;
    o->retransmit_ms = 50;
    o->checkpoint_interval = 16;
}

/* Worst-case frame of a replica deployment (NEW-VIEW inside a state transfer) in bytes. */
static uint64_t replica_frame_bound(size_t n, unsigned interval, size_t sig, size_t n_clients)
{
    uint64_t f = (n - 1) / 3, q = 2 * f + 1, L = 2u * interval, vote = 10 + sig;
    uint64_t req = 1 + 16 + 2 + DSIG_BFT_MAX_OP + 2 + sig;
    uint64_t pcert = 16 + req + 2 + sig + 1 + 2 * f * vote;
    uint64_t vc = BFT_HDR_BYTES + 49 + q * vote + L * pcert + vote;
    uint64_t nv = BFT_HDR_BYTES + 9 + q * (4 + vc) + 2 + L * (8 + req + 2 + sig) + vote;
    uint64_t snap = 36 + (uint64_t)DSIG_BFT_KV_MAX_KEYS * (3 + DSIG_BFT_KV_MAX_KEY + DSIG_BFT_KV_MAX_VALUE) + 2 +
                    n_clients * (18 + 2 + DSIG_BFT_MAX_RESULT);
    uint64_t entries = 32u * (16 + req + 1 + q * vote);
    return BFT_HDR_BYTES + 8 + 4 + nv + 1 + 8 + 32 + 4 + snap + 1 + q * vote + 1 + entries;
}

static void free_peers(dsig_bft *b)
{
    for (size_t i = 0; i < b->n_peers; i++)
        dsig_key_free(b->peers[i].key);
    dsig_xfree(b->peers, 0);
    b->peers = NULL;
    b->n_peers = 0;
}

/* Scheme set-up: keys, signature size. */
static int setup_scheme(dsig_bft *b, const dsig_bft_options *o)
{
    b->scheme = o->scheme;
    switch (o->scheme) {
    case DSIG_BFT_SCHEME_DSIG:
        if (!o->group || strlen(o->group) > DSIG_NODE_MAX_NAME)
            return dsig_fail(DSIG_E_ARG, "bft options: group: a node group name is needed for DSig");
        strcpy(b->group, o->group);
        b->env.sig_max = bft_node_sig_bytes(b->node, b->group);
        if (!b->env.sig_max)
            return dsig_fail(DSIG_E_ARG, "bft options: group: this node is not in group \"%s\"", o->group);
        return DSIG_OK;
    case DSIG_BFT_SCHEME_KEY: {
        if (!o->key || !dsig_key_has_private(o->key))
            return dsig_fail(DSIG_E_ARG, "bft options: key: a private key is needed for the key scheme");
        b->alg = o->alg ? o->alg : dsig_key_alg(o->key);
        if (!b->alg || dsig_key_check_alg(o->key, b->alg) != DSIG_OK)
            return dsig_fail(DSIG_E_ARG, "bft options: alg: no algorithm for the key scheme's key");
        b->key = o->key;
        b->env.sig_max = dsig_alg_sig_max(b->alg);
        b->peers = dsig_calloc(o->n_peer_keys + 1, sizeof *b->peers);
        if (!b->peers)
            return DSIG_E_NOMEM;
        int rc = dsig_key_public(&b->peers[0].key, o->key);
        if (rc != DSIG_OK)
            return rc;
        b->peers[0].id = b->self;
        b->n_peers = 1;
        for (size_t i = 0; i < o->n_peer_keys; i++) {
            if (!o->peer_keys || !o->peer_keys[i].key || peer_of(b, o->peer_keys[i].id))
                return dsig_fail(DSIG_E_ARG, "bft options: peer_keys[%zu]: missing or repeated", i);
            if ((rc = dsig_key_public(&b->peers[b->n_peers].key, o->peer_keys[i].key)) != DSIG_OK)
                return rc;
            b->peers[b->n_peers++].id = o->peer_keys[i].id;
        }
        for (size_t i = 0; i < o->n_members; i++)
            if (!peer_of(b, o->members[i]))
                return dsig_fail(DSIG_E_ARG, "bft options: peer_keys: no key for member %llu",
                                 (unsigned long long)o->members[i]);
        for (size_t i = 0; i < o->n_clients; i++)
            if (!peer_of(b, o->clients[i]))
                return dsig_fail(DSIG_E_ARG, "bft options: peer_keys: no key for client %llu",
                                 (unsigned long long)o->clients[i]);
        return DSIG_OK;
    }
    case DSIG_BFT_SCHEME_NONE:
        b->env.sig_max = 0;
        return DSIG_OK;
    default:
        return dsig_fail(DSIG_E_ARG, "bft options: scheme %d unknown", o->scheme);
    }
}

int dsig_bft_new(dsig_bft **out, dsig_node *node, const dsig_bft_options *o)
{
    if (!out || !node || !o)
        return dsig_fail(DSIG_E_ARG, "dsig_bft_new: NULL argument");
    dsig_bft *b = dsig_calloc(1, sizeof *b);
    if (!b)
        return DSIG_E_NOMEM;
    pthread_mutex_init(&b->mu, NULL);
    pthread_mutex_init(&b->evmu, NULL);
    pthread_cond_init(&b->stop_cv, NULL);
    b->node = node;
    b->protocol = o->protocol;
    b->self = bft_node_self(node);
    b->on_event = o->on_event;
    b->on_event_arg = o->on_event_arg;
    b->env = (bft_env){.ctx = b, .send = env_send, .sign = env_sign, .verify = env_verify, .event = env_event,
                       .now_ms = env_now_ms};
    int rc = setup_scheme(b, o);
    unsigned rt = o->retransmit_ms ? o->retransmit_ms : 50;
    if (rc == DSIG_OK && b->env.sig_max > DSIG_BFT_MAX_SIG)
        rc = dsig_fail(DSIG_E_ARG, "bft options: signatures of %zu bytes, at most %u", b->env.sig_max,
                       DSIG_BFT_MAX_SIG);
    if (rc == DSIG_OK && (o->protocol == DSIG_BFT_REPLICA || o->protocol == DSIG_BFT_CLIENT) &&
        o->n_members >= 4 && o->n_members <= DSIG_BFT_MAX_MEMBERS &&
        replica_frame_bound(o->n_members, o->checkpoint_interval ? o->checkpoint_interval : 16,
                            b->env.sig_max, o->n_clients ? o->n_clients : DSIG_BFT_MAX_CLIENTS) >
            DSIG_BFT_NODE_APP_BYTES)
        rc = dsig_fail(DSIG_E_TOO_LARGE, "bft options: %zu replicas with %zu-byte signatures can need frames "
                       "over %u bytes (fewer replicas, or a smaller checkpoint_interval)",
                       o->n_members, b->env.sig_max, DSIG_BFT_NODE_APP_BYTES);
    if (rc == DSIG_OK) {
        switch (o->protocol) {
        case DSIG_BFT_CBC:
            rc = bft_cbc_new(&b->core.cbc, &b->env, &b->st, o->session, b->self, o->members, o->n_members, rt);
            break;
        case DSIG_BFT_RBC:
            rc = bft_rbc_new(&b->core.rbc, &b->env, &b->st, o->session, b->self, o->members, o->n_members, rt);
            break;
        case DSIG_BFT_REPLICA: {
            bft_replica_cfg rc_ = {.session = o->session, .self = b->self, .members = o->members,
                                   .n = o->n_members, .clients = o->clients, .n_clients = o->n_clients,
                                   .retransmit_ms = rt, .view_timeout_ms = o->view_timeout_ms,
                                   .checkpoint_interval = o->checkpoint_interval, .log_path = o->log_path,
                                   .durable = o->durable};
            rc = bft_replica_new(&b->core.rep, &b->env, &b->st, &rc_);
            break;
        }
        case DSIG_BFT_CLIENT:
            rc = bft_client_new(&b->core.cli, &b->env, &b->st, o->session, b->self, o->members, o->n_members,
                                o->view_timeout_ms ? o->view_timeout_ms : 500);
            break;
        default:
            rc = dsig_fail(DSIG_E_ARG, "bft options: protocol %d unknown", o->protocol);
        }
    }
    if (rc != DSIG_OK) {
        b->protocol = 0; /* nothing to free in the union */
        dsig_bft_free(b);
        return rc;
    }
    b->tick_ms = o->tick_ms;
    if (b->tick_ms) {
        if (pthread_create(&b->ticker, NULL, ticker_main, b) != 0) {
            dsig_bft_free(b);
            return dsig_fail(DSIG_E_INTERNAL, "bft: cannot start the ticker thread");
        }
        b->ticker_started = 1;
    }
    drain(b); /* a replica's RECOVERED */
    *out = b;
    return DSIG_OK;
}

int dsig_bft_receive(dsig_bft *b, uint64_t peer, const uint8_t *bytes, size_t len)
{
    if (!b || !bytes)
        return DSIG_E_ARG;
    int rc;
    pthread_mutex_lock(&b->mu);
    switch (b->protocol) {
    case DSIG_BFT_CBC: rc = bft_cbc_receive(b->core.cbc, peer, bytes, len); break;
    case DSIG_BFT_RBC: rc = bft_rbc_receive(b->core.rbc, peer, bytes, len); break;
    case DSIG_BFT_REPLICA: rc = bft_replica_receive(b->core.rep, peer, bytes, len); break;
    default: rc = bft_client_receive(b->core.cli, peer, bytes, len); break;
    }
    pthread_mutex_unlock(&b->mu);
    drain(b);
    return rc;
}

int dsig_bft_broadcast(dsig_bft *b, const uint8_t *value, size_t len, uint64_t *instance)
{
    if (!b)
        return dsig_fail(DSIG_E_ARG, "dsig_bft_broadcast: NULL argument");
    if (b->protocol != DSIG_BFT_CBC && b->protocol != DSIG_BFT_RBC)
        return dsig_fail(DSIG_E_STATE, "dsig_bft_broadcast: not a broadcast member");
    pthread_mutex_lock(&b->mu);
    int rc = b->protocol == DSIG_BFT_CBC ? bft_cbc_broadcast(b->core.cbc, value, len, instance)
                                         : bft_rbc_broadcast(b->core.rbc, value, len, instance);
    pthread_mutex_unlock(&b->mu);
    drain(b);
    return rc;
}

int dsig_bft_submit(dsig_bft *b, const uint8_t *op, size_t len, uint64_t *request)
{
    if (!b)
        return dsig_fail(DSIG_E_ARG, "dsig_bft_submit: NULL argument");
    if (b->protocol != DSIG_BFT_CLIENT)
        return dsig_fail(DSIG_E_STATE, "dsig_bft_submit: not a client");
    pthread_mutex_lock(&b->mu);
    int rc = bft_client_submit(b->core.cli, op, len, request);
    pthread_mutex_unlock(&b->mu);
    drain(b);
    return rc;
}

int dsig_bft_tick(dsig_bft *b)
{
    if (!b)
        return dsig_fail(DSIG_E_ARG, "dsig_bft_tick: NULL argument");
    pthread_mutex_lock(&b->mu);
    core_tick(b);
    pthread_mutex_unlock(&b->mu);
    drain(b);
    return DSIG_OK;
}

int dsig_bft_replica_state(dsig_bft *b, uint64_t *seq, uint64_t *view, uint8_t digest[32])
{
    if (!b || b->protocol != DSIG_BFT_REPLICA)
        return dsig_fail(DSIG_E_STATE, "dsig_bft_replica_state: not a replica");
    pthread_mutex_lock(&b->mu);
    bft_replica_state(b->core.rep, seq, view, digest);
    pthread_mutex_unlock(&b->mu);
    return DSIG_OK;
}

void dsig_bft_stats_get(dsig_bft *b, dsig_bft_stats *st)
{
    if (!b || !st)
        return;
    pthread_mutex_lock(&b->mu);
    *st = b->st;
    pthread_mutex_unlock(&b->mu);
}

void dsig_bft_free(dsig_bft *b)
{
    if (!b)
        return;
    if (b->ticker_started) {
        pthread_mutex_lock(&b->mu);
        b->stop = 1;
        pthread_cond_broadcast(&b->stop_cv);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->ticker, NULL);
    }
    switch (b->protocol) {
    case DSIG_BFT_CBC: bft_cbc_free(b->core.cbc); break;
    case DSIG_BFT_RBC: bft_rbc_free(b->core.rbc); break;
    case DSIG_BFT_REPLICA: bft_replica_free(b->core.rep); break;
    case DSIG_BFT_CLIENT: bft_client_free(b->core.cli); break;
    default: break;
    }
    while (b->head) {
        ev_item *it = b->head;
        b->head = it->next;
        dsig_xfree(it, 0);
    }
    free_peers(b);
    pthread_cond_destroy(&b->stop_cv);
    pthread_mutex_destroy(&b->evmu);
    pthread_mutex_destroy(&b->mu);
    dsig_xfree(b, 0);
}

/* ---- internal hooks (runtime.h) ------------------------------------------------------------- */

void bft_runtime_set_send_hook(dsig_bft *b, bft_send_hook hook, void *arg)
{
    pthread_mutex_lock(&b->mu);
    b->hook = hook;
    b->hook_arg = arg;
    pthread_mutex_unlock(&b->mu);
}

int bft_runtime_send_raw(dsig_bft *b, uint64_t to, const uint8_t *frame, size_t len)
{
    return bft_node_send(b->node, to, frame, len);
}

int bft_runtime_sign(dsig_bft *b, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    return env_sign(b, stmt, len, sig, cap, sig_len);
}
