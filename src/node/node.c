/*
 * src/node/node.c — the DSig node's life cycle (docs/node.md): options, creation (configuration copy,
 * derived authentication key, peers, transport, verifiers, and the per-group signers last), start
 * (listen, connect, workers, plane), stop, free, and the statistics. The node's parts live in the
 * files node_state.h lists, each with the one lock it owns.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "classic/ed25519_derive.h"
#include "classic/eddsa.h"
#include "core/internal.h"
#include "dsig/jwk.h"
#include "dsig/registry.h"
#include "node/node_state.h"

/* Fill the documented defaults. */
void dsig_node_options_default(dsig_node_options *o)
{
    memset(o, 0, sizeof *o);
    o->pool_target = DEFAULT_POOL;
    o->signer_threads = 1;
    o->verify_threads = 1;
    o->cache_batches = MIN_CACHE;
    o->verify_queue = 1024;
    o->peer_verify_queue = DEFAULT_PEER_QUEUE;
    o->peer_verify_rate = DEFAULT_PEER_RATE;
    o->peer_verify_burst = DEFAULT_PEER_BURST;
    o->max_app_bytes = 65536u - 64u;
    o->heartbeat_ms = 500;
    o->backoff_max_ms = 2000;
}

/* Wall clock in µs: the low 56 bits of every signer's first batch seq, so a restarted node starts past
 * every seq it used before (one batch takes far more than 1 µs to generate). */
static uint64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Free everything (threads already stopped). */
static void node_destroy(dsig_node *n)
{
    if (n->groups) {
        for (size_t gi = 0; gi < n->cfg->n_groups; gi++)
            dsig_hybrid_signer_free(n->groups[gi].signer); /* joins its threads: no more on_batch */
    }
    if (n->peers)
        for (size_t i = 0; i < n->cfg->n_nodes; i++)
            node_slot_free(n, i);
    dsig_net_loop_free(n->loop);
    if (n->groups)
        for (size_t gi = 0; gi < n->cfg->n_groups; gi++)
            node_ring_free(&n->groups[gi]);
    node_queue_free(n);
    dsig_xfree(n->groups, 0);
    dsig_xfree(n->peers, 0);
    dsig_xfree(n->windows, 0);
    dsig_xfree(n->conns, 0);
    dsig_xfree(n->workers, 0);
    dsig_xfree(n->listen_copy, 0);
    dsig_xfree(n->acks, 0);
    dsig_memzero(&n->auth_sk, sizeof n->auth_sk);
    pthread_mutex_destroy(&n->ack_lock);
    pthread_mutex_destroy(&n->lock);
    pthread_cond_destroy(&n->cond);
    pthread_mutex_destroy(&n->win_lock);
    pthread_mutex_destroy(&n->q_lock);
    pthread_cond_destroy(&n->q_cond);
    pthread_rwlock_destroy(&n->mem_lock);
    dsig_node_config_free(n->cfg);
    dsig_xfree(n, 0);
}

/* Give the node's own copy of the configuration room for members joining at run time
 * (node_members.c): DSIG_NODE_MAX_NODES entries and DSIG_NODE_MAX_GROUP_MEMBERS per group, so that
 * nothing a reader holds a pointer into ever moves. */
static int make_room(dsig_node_config *cfg)
{
    struct node_cfg_node *nodes = dsig_realloc(cfg->nodes, DSIG_NODE_MAX_NODES * sizeof *nodes);
    if (!nodes)
        return dsig_fail(DSIG_E_NOMEM, "node: out of memory");
    memset(nodes + cfg->n_nodes, 0, (DSIG_NODE_MAX_NODES - cfg->n_nodes) * sizeof *nodes);
    cfg->nodes = nodes;
    size_t *by_id = dsig_realloc(cfg->by_id, DSIG_NODE_MAX_NODES * sizeof *by_id);
    if (!by_id)
        return dsig_fail(DSIG_E_NOMEM, "node: out of memory");
    cfg->by_id = by_id;
    for (size_t gi = 0; gi < cfg->n_groups; gi++) {
        struct node_cfg_group *g = &cfg->groups[gi];
        uint64_t *m = dsig_realloc(g->members, DSIG_NODE_MAX_GROUP_MEMBERS * sizeof *m);
        if (!m)
            return dsig_fail(DSIG_E_NOMEM, "node: out of memory");
        g->members = m;
    }
    return DSIG_OK;
}

/* Check options and fill zero fields with defaults where zero is not meaningful. */
static int check_options(dsig_node_options *o)
{
    if (o->pool_target == 0)
        o->pool_target = DEFAULT_POOL;
    if (o->verify_threads == 0)
        o->verify_threads = 1;
    if (o->verify_threads > MAX_WORKERS)
        return dsig_fail(DSIG_E_ARG, "node options: verify_threads at most %u", MAX_WORKERS);
    if (o->cache_batches < MIN_CACHE)
        o->cache_batches = MIN_CACHE;
    if (o->cache_batches > NODE_WIN_WORDS * 64)
        return dsig_fail(DSIG_E_ARG, "node options: cache_batches at most %u", NODE_WIN_WORDS * 64);
    if (o->verify_queue == 0)
        o->verify_queue = 1024;
    if (o->peer_verify_queue == 0)
        o->peer_verify_queue = DEFAULT_PEER_QUEUE;
    if (o->peer_verify_rate == 0)
        o->peer_verify_rate = DEFAULT_PEER_RATE;
    if (o->peer_verify_burst == 0)
        o->peer_verify_burst = DEFAULT_PEER_BURST;
    if (o->peer_verify_rate > 1000000u || o->peer_verify_burst > 1000000u)
        return dsig_fail(DSIG_E_ARG, "node options: peer_verify_rate and peer_verify_burst at most 1000000");
    if (o->max_app_bytes == 0)
        o->max_app_bytes = 65536u - 64u;
    if (o->max_app_bytes > DSIG_NET_MAX_PAYLOAD_LIMIT - 64u)
        return dsig_fail(DSIG_E_ARG, "node options: max_app_bytes at most %u",
                         DSIG_NET_MAX_PAYLOAD_LIMIT - 64u);
    if (o->backoff_max_ms == 0)
        o->backoff_max_ms = 2000;
    return DSIG_OK;
}

/* Create a node (see node.h). */
int dsig_node_new(dsig_node **out, const dsig_node_config *cfg, uint64_t my_id,
                  const dsig_key *my_ed25519_private, const dsig_node_options *opts)
{
    if (!out || !cfg || !my_ed25519_private)
        return dsig_fail(DSIG_E_ARG, "dsig_node_new: NULL argument");
    *out = NULL;
    dsig_node_options o;
    if (opts)
        o = *opts;
    else
        dsig_node_options_default(&o);
    int rc = check_options(&o);
    if (rc)
        return rc;
    long me = node_cfg_index(cfg, my_id);
    if (me < 0)
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "node: id %llu is not in the configuration",
                         (unsigned long long)my_id);
    if (!dsig_key_has_private(my_ed25519_private))
        return dsig_fail(DSIG_E_NO_PRIVATE, "node %llu: the signing key has no private part",
                         (unsigned long long)my_id);
    if ((rc = dsig_key_check_alg(my_ed25519_private, dsig_alg_by_name("DSig"))) != DSIG_OK)
        return dsig_fail_prefix(rc, "node %llu", (unsigned long long)my_id);
    char th[64];
    rc = dsig_jwk_thumbprint(my_ed25519_private, th);
    if (rc)
        return rc;
    if (strcmp(th, cfg->nodes[me].thumb) != 0)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "node %llu: the private key does not match the public key "
                         "configured for this id", (unsigned long long)my_id);

    dsig_node *n = dsig_calloc(1, sizeof *n);
    if (!n)
        return dsig_fail(DSIG_E_NOMEM, "node: out of memory");
    pthread_mutex_init(&n->lock, NULL);
    pthread_cond_init(&n->cond, NULL);
    pthread_mutex_init(&n->win_lock, NULL);
    pthread_mutex_init(&n->q_lock, NULL);
    pthread_cond_init(&n->q_cond, NULL);
    pthread_mutex_init(&n->ack_lock, NULL);
    pthread_rwlockattr_t at;
    pthread_rwlockattr_init(&at);
    /* membership changes must not starve behind a steady stream of verifications */
    pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&n->mem_lock, &at);
    pthread_rwlockattr_destroy(&at);
    atomic_init(&n->gone_fast, 0);
    atomic_init(&n->gone_slow, 0);
    atomic_init(&n->gone_equiv, 0);
    for (int i = 0; i < C_COUNT; i++)
        atomic_init(&n->c[i], 0);
    atomic_init(&n->retry, 0);
    n->opt = o;
    n->opt.listen_address = NULL;
    if (o.listen_address && !(n->listen_copy = dsig_strdup(o.listen_address))) {
        rc = dsig_fail(DSIG_E_NOMEM, "node: out of memory");
        goto fail;
    }
    n->my_id = my_id;
    rc = dsig_node_config_parse(cfg->text, cfg->text_len, &n->cfg); /* our own copy */
    if (rc || (rc = make_room(n->cfg)) != DSIG_OK)
        goto fail;
    if ((rc = dsig_ed25519_derive_secret(my_ed25519_private, NODE_AUTH_KEY_LABEL, &n->auth_sk)) != DSIG_OK)
        goto fail;
    n->acks = dsig_calloc(ACK_PENDING_MAX, sizeof *n->acks);
    if (!n->acks) {
        rc = dsig_fail(DSIG_E_NOMEM, "node: out of memory");
        goto fail;
    }
    n->my_idx = (size_t)node_cfg_index(n->cfg, my_id);
    if ((rc = dsig_random_bytes(&n->instance, sizeof n->instance)) != DSIG_OK)
        goto fail;

    n->peers = dsig_calloc(DSIG_NODE_MAX_NODES, sizeof *n->peers);
    n->groups = dsig_calloc(n->cfg->n_groups ? n->cfg->n_groups : 1, sizeof *n->groups);
    n->win_width = o.cache_batches;
    n->windows = dsig_calloc(DSIG_NODE_MAX_NODES * (n->cfg->n_groups ? n->cfg->n_groups : 1),
                             sizeof *n->windows);
    if (!n->peers || !n->groups || !n->windows) {
        rc = dsig_fail(DSIG_E_NOMEM, "node: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < DSIG_NODE_MAX_NODES; i++) {
        atomic_init(&n->peers[i].ready, 0);
        atomic_init(&n->peers[i].in_conn, 0);
    }

    /* transport: frames big enough for the largest batch message and application payload */
    uint32_t maxp = o.max_app_bytes;
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        size_t b = dsig_hybrid_params_batch_msg_bytes(n->cfg->groups[gi].params) + NODE_BATCH_HDR_MAX;
        if (b > maxp)
            maxp = (uint32_t)b;
    }
    if (maxp < DSIG_NET_MIN_PAYLOAD_LIMIT)
        maxp = DSIG_NET_MIN_PAYLOAD_LIMIT;
    dsig_net_config nc;
    dsig_net_config_default(&nc);
    nc.max_payload = maxp;
    if (nc.sendq_max_bytes < 4u * (maxp + DSIG_NET_HDR_BYTES))
        nc.sendq_max_bytes = 4u * (maxp + DSIG_NET_HDR_BYTES);
    nc.heartbeat_ms = o.heartbeat_ms;
    nc.backoff_max_ms = o.backoff_max_ms;
    if (nc.backoff_min_ms > nc.backoff_max_ms)
        nc.backoff_min_ms = nc.backoff_max_ms;
    if ((rc = dsig_net_loop_new(&n->loop, &nc, node_on_event, n)) != DSIG_OK)
        goto fail;

    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        g->node = n;
        g->gi = gi;
        g->cg = &n->cfg->groups[gi];
        g->name_len = strlen(g->cg->name);
        atomic_init(&g->last_used, 0);
        atomic_init(&g->used_any, 0);
        int pos = node_cfg_member_pos(g->cg, my_id);
        g->member = pos >= 0;
        g->all_mask = 0;
        for (size_t i = 0; i < g->cg->n_members; i++)
            if ((int)i != pos)
                g->all_mask |= UINT64_C(1) << i;
    }
    /* every member's slot: its authentication key, address and the verifiers of the groups it shares
     * with this node (they cache its batches of that group only; signatures of groups this node is
     * not in take the slow path, node_verify.c) */
    for (size_t i = 0; i < n->cfg->n_nodes; i++)
        if ((rc = node_slot_init(n, i)) != DSIG_OK)
            goto fail;

    /* signers last: their threads call on_batch at once */
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        if (!g->member)
            continue;
        unsigned bs = dsig_hybrid_params_batch_size(g->cg->params);
        g->ring_cap = o.pool_target / bs + 2u * o.signer_threads + 4u;
        g->ring = dsig_calloc(g->ring_cap, sizeof *g->ring);
        if (!g->ring) {
            rc = dsig_fail(DSIG_E_NOMEM, "node: out of memory");
            goto fail;
        }
        dsig_hybrid_signer_options so;
        dsig_hybrid_signer_options_default(&so);
        so.pool_target = o.pool_target;
        so.threads = o.signer_threads;
        so.nonblocking = o.nonblocking;
        so.signer_id = my_id;
        so.on_batch = node_on_batch;
        so.on_batch_arg = g;
        so.first_seq = ((uint64_t)gi << NODE_SEQ_GROUP_SHIFT) | (wall_us() & NODE_SEQ_LOW_MASK);
        if ((rc = dsig_hybrid_signer_new(&g->signer, my_ed25519_private, g->cg->params, &so)) != DSIG_OK)
            goto fail;
    }
    *out = n;
    return DSIG_OK;
fail:
    node_destroy(n);
    return rc;
}

/* Listen, connect to every other node, start the plane and the workers. */
int dsig_node_start(dsig_node *n)
{
    if (!n)
        return dsig_fail(DSIG_E_ARG, "dsig_node_start: NULL argument");
    if (n->started)
        return dsig_fail(DSIG_E_STATE, "node %llu: already started", (unsigned long long)n->my_id);
    const char *la = n->listen_copy ? n->listen_copy : n->cfg->nodes[n->my_idx].address;
    dsig_net_addr a;
    int rc = dsig_net_addr_parse(la, &a);
    if (rc)
        return dsig_fail(DSIG_E_FORMAT, "node %llu: bad listen address %s", (unsigned long long)n->my_id,
                         la);
    rc = dsig_net_listen(n->loop, &a, &n->listener);
    if (rc)
        return dsig_fail_prefix(DSIG_E_IO, "node %llu: cannot listen on %s", (unsigned long long)n->my_id, la);
    /* under the membership lock: a member added now is connected either here or by
     * dsig_node_member_add, never twice */
    pthread_rwlock_wrlock(&n->mem_lock);
    for (size_t i = 0; rc == DSIG_OK && i < n->cfg->n_nodes; i++) {
        if (i == n->my_idx || n->peers[i].id == 0)
            continue;
        rc = dsig_net_connect(n->loop, &n->peers[i].addr, &n->peers[i].out_conn);
    }
    n->dialing = rc == DSIG_OK;
    pthread_rwlock_unlock(&n->mem_lock);
    if (rc)
        return rc;
    if ((rc = node_workers_start(n)) != DSIG_OK)
        return rc;
    if (pthread_create(&n->plane, NULL, node_plane_main, n) != 0) {
        node_workers_stop(n);
        return dsig_fail(DSIG_E_NOMEM, "node: cannot start the plane thread");
    }
    n->started = 1;
    return DSIG_OK;
}

/* Stop the plane and the workers. */
void dsig_node_stop(dsig_node *n)
{
    if (!n || !n->started || n->stopped)
        return;
    n->stopped = 1;
    pthread_rwlock_wrlock(&n->mem_lock);
    n->dialing = 0; /* a member added from now on is not connected */
    pthread_rwlock_unlock(&n->mem_lock);
    dsig_net_loop_stop(n->loop);
    pthread_join(n->plane, NULL);
    node_workers_stop(n);
    node_peers_down(n);
}

/* Stop and free. */
void dsig_node_free(dsig_node *n)
{
    if (!n)
        return;
    dsig_node_stop(n);
    node_destroy(n);
}

uint64_t dsig_node_id(const dsig_node *n)
{
    return n ? n->my_id : 0;
}

/* Text of the bound listening address. */
int dsig_node_listen_address(dsig_node *n, char *buf, size_t cap)
{
    if (!n || !buf)
        return dsig_fail(DSIG_E_ARG, "dsig_node_listen_address: NULL argument");
    if (!n->started)
        return dsig_fail(DSIG_E_STATE, "node: not started");
    dsig_net_addr a;
    int rc = dsig_net_local_addr(n->loop, n->listener, &a);
    if (rc)
        return rc;
    return dsig_net_addr_format(&a, buf, cap);
}

/* This node's group by name, or NULL. */
struct ngroup *node_my_group(dsig_node *n, const char *name)
{
    if (!name)
        return NULL;
    long gi = node_cfg_group_index(n->cfg, name, strlen(name));
    if (gi < 0 || !n->groups[gi].member)
        return NULL;
    return &n->groups[gi];
}

/* Snapshot of the counters. */
void dsig_node_stats_get(dsig_node *n, dsig_node_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!n)
        return;
#define G(i) atomic_load_explicit(&n->c[i], memory_order_relaxed)
    st->batches_generated = G(C_GENERATED);
    st->batches_sent = G(C_SENT);
    st->batches_resent = G(C_RESENT);
    st->batches_send_failed = G(C_SEND_FAILED);
    st->acks_received = G(C_ACKS);
    st->signatures = G(C_SIGS);
    st->batches_received = G(C_RECEIVED);
    st->batches_verified = G(C_VERIFIED);
    st->drop_unknown_id = G(C_UNKNOWN);
    st->drop_bad_signature = G(C_BADSIG);
    st->drop_replay = G(C_REPLAY);
    st->drop_malformed = G(C_MALFORMED);
    st->drop_queue_full = G(C_QFULL);
    st->verify_failed = G(C_VFAIL);
    st->app_sent = G(C_APP_SENT);
    st->app_received = G(C_APP_RECV);
    st->app_send_failed = G(C_APP_FAIL);
    st->connections_rejected = G(C_REJECTED);
    st->auth_ok = G(C_AUTH_OK);
    st->auth_failed = G(C_AUTH_FAIL);
    st->drop_unauthenticated = G(C_UNAUTH);
    st->acks_deferred = G(C_ACK_DEFER);
    st->acks_retried = G(C_ACK_RETRY);
    st->acks_dropped = G(C_ACK_DROP);
    st->drop_rate_limited = G(C_RATE);
    st->batch_checks = G(C_BATCH_CHECKS);
#undef G
    st->verify_slow = atomic_load_explicit(&n->c[C_SLOW_DIRECT], memory_order_relaxed);
    node_mem_rdlock(n);
    st->verify_fast = atomic_load_explicit(&n->gone_fast, memory_order_relaxed);
    st->verify_slow += atomic_load_explicit(&n->gone_slow, memory_order_relaxed);
    st->equivocations = atomic_load_explicit(&n->gone_equiv, memory_order_relaxed);
    for (size_t i = 0; i < n->cfg->n_nodes; i++) {
        for (size_t gi = 0; n->peers[i].verifiers && gi < n->cfg->n_groups; gi++) {
            if (!n->peers[i].verifiers[gi])
                continue;
            dsig_hybrid_verifier_stats vs;
            dsig_hybrid_verifier_stats_get(n->peers[i].verifiers[gi], &vs);
            st->verify_fast += vs.fast;
            st->verify_slow += vs.slow;
            st->equivocations += vs.equivocations;
        }
        st->peers_up += (uint64_t)atomic_load_explicit(&n->peers[i].ready, memory_order_relaxed);
    }
    node_mem_unlock(n);
    dsig_net_stats ns;
    if (dsig_net_stats_get(n->loop, 0, &ns) == DSIG_OK)
        st->reconnects = ns.reconnects;
}
