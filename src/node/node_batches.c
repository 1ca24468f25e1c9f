/*
 * src/node/node_batches.c — our own batches: each group's signer hands its new batch messages to
 * node_on_batch, which retains them in the group's ring and pushes them to the ready members; a
 * member's (re)authentication re-sends what it may lack, refused sends are retried in seq order by the
 * plane thread, acknowledgements set the ring's bits, and dsig_node_wait_ready waits for them. Signing
 * notes the batch in use, so that re-syncs skip batches whose keys are all used.
 *
 * Owns n->lock (and n->cond): see node_state.h.
 */
#include <string.h>
#include <sys/uio.h>

#include "core/internal.h"
#include "node/node_state.h"

/* Queue one BATCH frame of group g to a peer; counts a success, and a failure if count_fail. */
static int send_batch(dsig_node *n, struct ngroup *g, struct peer *p, const struct retained *r,
                      int count_fail)
{
    uint8_t pre[NODE_BATCH_HDR_MAX];
    size_t pl = node_batch_prefix(pre, n->my_id, g->cg->name, g->name_len);
    struct iovec iov[2] = {{pre, pl}, {r->msg, r->len}};
    int rc = dsig_net_sendv(n->loop, p->out_conn, DSIG_NODE_T_BATCH, iov, 2);
    if (rc == DSIG_OK)
        bump(n, C_SENT);
    else if (count_fail)
        bump(n, C_SEND_FAILED);
    return rc;
}

/* Send retained batch r to the member at position pos (peer p, ready), or, if its send queue is full
 * or it already has refused batches waiting (order: the verifier's replay window slides forward),
 * mark r pending for the plane thread's retry. Memory stays bounded: pending is a bit of a ring entry
 * that exists anyway. Returns 1 if queued now. (n->lock held) */
static int push_batch(dsig_node *n, struct ngroup *g, int pos, struct peer *p, struct retained *r)
{
    uint64_t bit = UINT64_C(1) << pos;
    if (g->pending_mask & bit) {
        r->pending |= bit;
        bump(n, C_SEND_FAILED);
        return 0;
    }
    int rc = send_batch(n, g, p, r, 1);
    if (rc == DSIG_OK)
        return 1;
    if (rc == DSIG_E_WOULD_BLOCK) { /* other errors: the connection is going down; re-sync covers it */
        r->pending |= bit;
        g->pending_mask |= bit;
        atomic_store_explicit(&n->retry, 1, memory_order_relaxed);
    }
    return 0;
}

/* Is retained batch r possibly still holding unused keys? */
static int still_unused(const struct ngroup *g, const struct retained *r)
{
    if (!atomic_load_explicit(&g->used_any, memory_order_relaxed))
        return 1;
    return r->seq >= atomic_load_explicit(&g->last_used, memory_order_relaxed);
}

/* Clear peer p's acknowledgements of our retained batches and its pending retries: it is down or
 * about to be re-synced (n->lock held). */
static void forget_acks(dsig_node *n, size_t pidx)
{
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        int pos = g->member ? node_cfg_member_pos(g->cg, n->peers[pidx].id) : -1;
        if (pos < 0)
            continue;
        uint64_t keep = ~(UINT64_C(1) << pos);
        for (size_t k = 0; k < g->ring_len; k++) {
            struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
            r->acked &= keep;
            r->pending &= keep;
        }
        g->pending_mask &= keep;
    }
}

/* Re-send every retained batch with unused keys of every group shared with peer p (now ready). */
static void resync(dsig_node *n, size_t pidx)
{
    struct peer *p = &n->peers[pidx];
    forget_acks(n, pidx); /* a reconnected peer may have lost its cache: it acks again */
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        int pos = g->member ? node_cfg_member_pos(g->cg, p->id) : -1;
        if (pos < 0)
            continue;
        for (size_t k = 0; k < g->ring_len; k++) {
            struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
            if (!still_unused(g, r))
                continue;
            if (push_batch(n, g, pos, p, r))
                bump(n, C_RESENT);
        }
    }
}

/* Peer pidx's outgoing connection authenticated, or went down. */
void node_peer_ready(dsig_node *n, size_t pidx, int ready)
{
    pthread_mutex_lock(&n->lock);
    n->peers[pidx].out_ready = ready;
    atomic_store_explicit(&n->peers[pidx].ready, ready, memory_order_release);
    if (ready)
        resync(n, pidx);
    else
        forget_acks(n, pidx); /* it may be restarting with an empty cache */
    pthread_mutex_unlock(&n->lock);
}

/* A member joined or left (mem_lock held for writing). */
void node_members_changed(dsig_node *n, long gone, const int *pos)
{
    pthread_mutex_lock(&n->lock);
    if (gone >= 0) {
        n->peers[gone].out_ready = 0;
        atomic_store_explicit(&n->peers[gone].ready, 0, memory_order_release);
    }
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        if (pos[gi] >= 0) {
            uint64_t keep = ~(UINT64_C(1) << pos[gi]);
            for (size_t k = 0; k < g->ring_len; k++) {
                struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
                r->acked &= keep;
                r->pending &= keep;
            }
            g->pending_mask &= keep;
        }
        g->all_mask = 0;
        for (size_t i = 0; i < g->cg->n_members; i++)
            if (g->cg->members[i] != 0 && g->cg->members[i] != n->my_id)
                g->all_mask |= UINT64_C(1) << i;
    }
    pthread_cond_broadcast(&n->cond); /* a member that left no longer holds wait_ready up */
    pthread_mutex_unlock(&n->lock);
}

/* Every peer down: the node stops. */
void node_peers_down(dsig_node *n)
{
    node_mem_rdlock(n);
    pthread_mutex_lock(&n->lock);
    for (size_t i = 0; i < n->cfg->n_nodes; i++) {
        n->peers[i].out_ready = 0;
        atomic_store_explicit(&n->peers[i].ready, 0, memory_order_release);
    }
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
    node_mem_unlock(n);
}

/* A member has verified and cached one of our batches. */
void node_batch_acked(dsig_node *n, struct ngroup *g, int pos, uint64_t seq)
{
    pthread_mutex_lock(&n->lock);
    for (size_t k = 0; k < g->ring_len; k++) {
        struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
        if (r->seq == seq) {
            r->acked |= UINT64_C(1) << pos;
            pthread_cond_broadcast(&n->cond);
            break;
        }
    }
    pthread_mutex_unlock(&n->lock);
}

/* Plane thread, between loop iterations: re-send, in seq order, the batches a full send queue refused,
 * as long as the queue takes them (the first refusal stops that peer until the next tick: the bound and
 * the back-pressure stay the transport's). Batches whose keys are all used are no longer worth sending
 * and just lose their bit. */
void node_retry_pending(dsig_node *n)
{
    if (!atomic_exchange_explicit(&n->retry, 0, memory_order_relaxed))
        return;
    int again = node_retry_acks(n);
    pthread_mutex_lock(&n->lock);
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct ngroup *g = &n->groups[gi];
        if (!g->member || !g->pending_mask)
            continue;
        uint64_t left = 0;
        for (size_t pos = 0; pos < g->cg->n_members; pos++) {
            uint64_t bit = UINT64_C(1) << pos;
            if (!(g->pending_mask & bit))
                continue;
            long pi = node_cfg_index(n->cfg, g->cg->members[pos]);
            int ready = pi >= 0 && n->peers[pi].out_ready;
            int blocked = 0;
            for (size_t k = 0; k < g->ring_len; k++) {
                struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
                if (!(r->pending & bit))
                    continue;
                if (!ready || !still_unused(g, r)) { /* down: the re-sync will send it */
                    r->pending &= ~bit;
                    continue;
                }
                if (blocked) {
                    left |= bit;
                    continue;
                }
                int rc = send_batch(n, g, &n->peers[pi], r, 0);
                if (rc == DSIG_OK) {
                    r->pending &= ~bit;
                    bump(n, C_RESENT);
                } else if (rc == DSIG_E_WOULD_BLOCK) {
                    blocked = 1;
                    left |= bit;
                } else { /* not UP any more: the DOWN event and the re-sync take over */
                    r->pending &= ~bit;
                }
            }
        }
        g->pending_mask = left;
        again |= left != 0;
    }
    if (again)
        atomic_store_explicit(&n->retry, 1, memory_order_relaxed);
    pthread_mutex_unlock(&n->lock);
}

/* Signer callback (background thread): retain the batch message and push it to the ready members. */
void node_on_batch(void *arg, uint64_t signer_id, unsigned group, const uint8_t *msg, size_t len)
{
    struct ngroup *g = arg;
    dsig_node *n = g->node;
    (void)signer_id;
    (void)group; /* one signer per node group: always 0 */
    uint8_t *copy = dsig_malloc(len);
    if (!copy)
        return; /* the batch stays usable through the slow path */
    memcpy(copy, msg, len);
    uint64_t seq = node_batch_msg_seq(msg);
    bump(n, C_GENERATED);
    node_mem_rdlock(n); /* the group's member list */
    pthread_mutex_lock(&n->lock);
    /* drop used-up batches first, then the oldest if still full */
    while (g->ring_len && (!still_unused(g, &g->ring[g->ring_head]) || g->ring_len == g->ring_cap)) {
        dsig_xfree(g->ring[g->ring_head].msg, 0);
        g->ring_head = (g->ring_head + 1) % g->ring_cap;
        g->ring_len--;
    }
    struct retained *r = &g->ring[(g->ring_head + g->ring_len) % g->ring_cap];
    r->seq = seq;
    r->acked = 0;
    r->pending = 0;
    r->len = len;
    r->msg = copy;
    g->ring_len++;
    for (size_t i = 0; i < g->cg->n_members; i++) {
        uint64_t id = g->cg->members[i];
        if (id == n->my_id)
            continue;
        long pi = node_cfg_index(n->cfg, id);
        if (pi >= 0 && n->peers[pi].out_ready)
            (void)push_batch(n, g, (int)i, &n->peers[pi], r);
    }
    pthread_mutex_unlock(&n->lock);
    node_mem_unlock(n);
}

/* Free a group's ring (threads stopped). */
void node_ring_free(struct ngroup *g)
{
    for (size_t k = 0; k < g->ring_len; k++)
        dsig_xfree(g->ring[(g->ring_head + k) % g->ring_cap].msg, 0);
    dsig_xfree(g->ring, 0);
    g->ring = NULL;
    g->ring_len = 0;
}

/* Sign with the group's pool and note the batch in use (re-sync skips older ones). */
int dsig_node_sign(dsig_node *n, const char *group, const uint8_t *msg, size_t len, uint8_t *sig,
                   size_t cap, size_t *sig_len)
{
    if (!n)
        return dsig_fail(DSIG_E_ARG, "dsig_node_sign: NULL node");
    struct ngroup *g = node_my_group(n, group);
    if (!g)
        return dsig_fail(DSIG_E_ARG, "node %llu: not a member of group \"%.80s\"",
                         (unsigned long long)n->my_id, group ? group : "(null)");
    int rc = dsig_hybrid_sign(g->signer, msg, len, sig, cap, sig_len);
    if (rc)
        return rc;
    uint64_t seq;
    uint32_t idx; /* dsig_hybrid_sig_locate wants both outputs (DSIG_E_ARG with a NULL one) */
    if (dsig_hybrid_sig_locate(g->cg->params, sig, *sig_len, &seq, &idx) == DSIG_OK) {
        uint64_t cur = atomic_load_explicit(&g->last_used, memory_order_relaxed);
        while ((!atomic_load_explicit(&g->used_any, memory_order_relaxed) || seq > cur) &&
               !atomic_compare_exchange_weak_explicit(&g->last_used, &cur, seq, memory_order_relaxed,
                                                      memory_order_relaxed))
            ;
        atomic_store_explicit(&g->used_any, 1, memory_order_relaxed);
    }
    bump(n, C_SIGS);
    return DSIG_OK;
}

/* Every retained batch with unused keys acknowledged by every other member (n->lock held)? */
static int all_acked(const struct ngroup *g)
{
    for (size_t k = 0; k < g->ring_len; k++) {
        const struct retained *r = &g->ring[(g->ring_head + k) % g->ring_cap];
        if (still_unused(g, r) && (r->acked & g->all_mask) != g->all_mask)
            return 0;
    }
    return 1;
}

/* Wait for a warm pool whose batches every other member acknowledged. */
int dsig_node_wait_ready(dsig_node *n, const char *group, unsigned n_keys, int timeout_ms)
{
    if (!n)
        return dsig_fail(DSIG_E_ARG, "dsig_node_wait_ready: NULL node");
    struct ngroup *g = node_my_group(n, group);
    if (!g)
        return dsig_fail(DSIG_E_ARG, "node %llu: not a member of group \"%.80s\"",
                         (unsigned long long)n->my_id, group ? group : "(null)");
    if (n_keys > n->opt.pool_target)
        return dsig_fail(DSIG_E_ARG, "node: wait_ready for %u keys, pool_target is %u", n_keys,
                         n->opt.pool_target);
    if (!n->started || n->stopped)
        return dsig_fail(DSIG_E_STATE, "node %llu: not running", (unsigned long long)n->my_id);
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : mono_ms() + timeout_ms;
    for (;;) {
        /* the pool level is read without n->lock: the signer's callback takes n->lock */
        dsig_hybrid_signer_stats st;
        dsig_hybrid_signer_stats_get(g->signer, &st);
        pthread_mutex_lock(&n->lock);
        int ok = st.ready >= n_keys && all_acked(g);
        if (!ok) {
            int64_t now = mono_ms();
            if (now >= deadline) {
                pthread_mutex_unlock(&n->lock);
                return dsig_fail(DSIG_E_WOULD_BLOCK, "node %llu: group %s not ready after %d ms "
                                 "(%llu keys ready)", (unsigned long long)n->my_id, g->cg->name,
                                 timeout_ms, (unsigned long long)st.ready);
            }
            int64_t wait = deadline - now < 10 ? deadline - now : 10; /* re-read the pool level */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += (long)wait * 1000000L;
            ts.tv_sec += ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&n->cond, &n->lock, &ts);
        }
        pthread_mutex_unlock(&n->lock);
        if (ok)
            return DSIG_OK;
    }
}
