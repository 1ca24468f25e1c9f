/*
 * src/node/node_conn.c — the plane thread's side of the node: the connection table, the authenticated
 * HELLO (challenge-response: nothing is taken from a peer before its AUTH verifies), the dispatch of
 * BATCH / BATCH_ACK / APP frames, and the application channel (dsig_node_send_app, dsig_node_peer_up).
 *
 * No lock of its own: the connection table is the plane thread's (see node_state.h). Each event is
 * handled holding the membership lock for reading; a connection remembers the generation of the
 * member slot its peer claimed, so a member that left (or a later one in its slot) is never served
 * on it.
 */
#include <string.h>

#include "classic/eddsa.h"
#include "core/internal.h"
#include "node/node_state.h"

/* The state of connection `conn`, or NULL. */
static struct conn_state *conn_find(dsig_node *n, uint64_t conn)
{
    for (size_t i = 0; i < n->n_conns; i++)
        if (n->conns[i].conn == conn)
            return &n->conns[i];
    return NULL;
}

/* Add a connection to the table (NULL when out of memory: the connection is closed). */
static struct conn_state *conn_add(dsig_node *n, uint64_t conn, int outgoing)
{
    if (n->n_conns == n->cap_conns) {
        size_t cap = n->cap_conns ? 2 * n->cap_conns : 16;
        struct conn_state *c = dsig_realloc(n->conns, cap * sizeof *c);
        if (!c)
            return NULL;
        n->conns = c;
        n->cap_conns = cap;
    }
    struct conn_state *cs = &n->conns[n->n_conns++];
    memset(cs, 0, sizeof *cs);
    cs->conn = conn;
    cs->outgoing = outgoing;
    cs->peer_idx = -1;
    return cs;
}

/* Remove a connection from the table. */
static void conn_remove(dsig_node *n, struct conn_state *cs)
{
    *cs = n->conns[--n->n_conns];
}

/* Drop an accepted connection (outgoing ones are kept: closing would stop their reconnection). */
static void conn_reject(dsig_node *n, struct conn_state *cs)
{
    if (!cs->outgoing && !cs->closing) {
        cs->closing = 1;
        dsig_net_close(n->loop, cs->conn);
    }
}

/* Config index of the peer whose outgoing connection is `conn`, or -1. */
static long peer_by_out_conn(dsig_node *n, uint64_t conn)
{
    for (size_t i = 0; i < n->cfg->n_nodes; i++)
        if (i != n->my_idx && n->peers[i].id != 0 && n->peers[i].out_conn == conn)
            return (long)i;
    return -1;
}

/* HELLO: the peer claims an id and sends its nonce; we answer with AUTH, our signature of the
 * transcript over both nonces and both ids. Nothing is accepted from it before its own AUTH verifies. */
static void handle_hello(dsig_node *n, struct conn_state *cs, const uint8_t *p, size_t len)
{
    uint64_t id, inst;
    if (cs->hello || node_hello_parse(p, len, &id, &inst, cs->peer_nonce) != DSIG_OK) {
        bump(n, C_MALFORMED); /* a bad payload layout or a second HELLO ... */
        bump(n, C_REJECTED);  /* ... closes the connection (node.h: connections_rejected) */
        conn_reject(n, cs);
        return;
    }
    long idx = node_cfg_index(n->cfg, id);
    if (idx < 0 || id == n->my_id ||
        (cs->outgoing && (idx != cs->peer_idx || !node_slot_is(n, idx, cs->peer_gen)))) {
        if (idx < 0)
            bump(n, C_UNKNOWN);
        bump(n, C_REJECTED);
        conn_reject(n, cs);
        return;
    }
    cs->hello = 1;
    cs->peer_idx = idx;
    cs->peer_gen = n->peers[idx].gen;
    uint8_t t[NODE_AUTH_TRANSCRIPT_BYTES], sig[NODE_AUTH_BYTES];
    node_auth_transcript(t, n->my_id, id, cs->my_nonce, cs->peer_nonce);
    if (dsig_ed25519_dkey_sign(&n->auth_sk, t, sizeof t, sig) != DSIG_OK)
        return; /* cannot happen with a valid key; the peer then never sees us authenticated */
    (void)dsig_net_send(n->loop, cs->conn, DSIG_NODE_T_AUTH, sig, sizeof sig);
}

/* AUTH: the peer's signature of the transcript under the configured key of the id it claimed. A
 * failure is counted and the connection refused (an accepted one is closed; an outgoing one stays
 * unauthenticated — its frames are dropped — until the transport reconnects). */
static void handle_auth(dsig_node *n, struct conn_state *cs, const uint8_t *p, size_t len)
{
    if (!cs->hello || cs->identified || len != NODE_AUTH_BYTES ||
        !node_slot_is(n, cs->peer_idx, cs->peer_gen)) {
        bump(n, C_MALFORMED);
        bump(n, C_REJECTED);
        conn_reject(n, cs);
        return;
    }
    uint64_t id = n->cfg->nodes[cs->peer_idx].id;
    uint8_t t[NODE_AUTH_TRANSCRIPT_BYTES];
    node_auth_transcript(t, id, n->my_id, cs->peer_nonce, cs->my_nonce);
    if (!dsig_ed25519_verify_pk(n->peers[cs->peer_idx].auth_pk, t, sizeof t, p)) {
        bump(n, C_AUTH_FAIL);
        bump(n, C_REJECTED);
        conn_reject(n, cs);
        return;
    }
    bump(n, C_AUTH_OK);
    cs->identified = 1;
    if (cs->outgoing) {
        node_peer_ready(n, (size_t)cs->peer_idx, 1);
    } else {
        atomic_store_explicit(&n->peers[cs->peer_idx].in_conn, cs->conn, memory_order_release);
    }
}

/* BATCH: validate, check the replay window and the sender's bounds, queue for background
 * verification. */
static void handle_batch(dsig_node *n, struct conn_state *cs, const uint8_t *p, size_t len)
{
    struct node_batch_view b;
    if (node_batch_parse(p, len, &b) != DSIG_OK) {
        bump(n, C_MALFORMED);
        return;
    }
    bump(n, C_RECEIVED);
    long si = node_cfg_index(n->cfg, b.signer);
    if (si < 0) {
        bump(n, C_UNKNOWN);
        return;
    }
    long gi = node_cfg_group_index(n->cfg, b.group, b.group_len);
    if (gi < 0 || b.signer == n->my_id || !n->peers[si].verifiers || !n->peers[si].verifiers[gi] ||
        node_cfg_member_pos(&n->cfg->groups[gi], b.signer) < 0 ||
        (b.seq >> NODE_SEQ_GROUP_SHIFT) != (uint64_t)gi ||
        b.msg_len != dsig_hybrid_params_batch_msg_bytes(n->cfg->groups[gi].params)) {
        bump(n, C_MALFORMED);
        return;
    }
    int st = node_windows_check(n, (size_t)si, (size_t)gi, b.seq);
    if (st != NODE_WIN_NEW) {
        bump(n, C_REPLAY);
        if (st == NODE_WIN_SEEN) /* verified and cached already (e.g. a re-sync): confirm it */
            node_send_ack(n, cs->conn, b.signer, b.seq, (size_t)gi);
        return;
    }
    struct work *w = dsig_malloc(sizeof *w + b.msg_len);
    if (!w) {
        bump(n, C_QFULL);
        return;
    }
    w->next = NULL;
    w->signer = b.signer;
    w->sidx = (size_t)si;
    w->gi = (size_t)gi;
    w->seq = b.seq;
    w->conn = cs->conn;
    w->from = (size_t)cs->peer_idx;
    w->sgen = n->peers[si].gen;
    w->fgen = cs->peer_gen;
    w->len = b.msg_len;
    memcpy(w->msg, b.msg, b.msg_len);
    node_queue_push(n, w);
}

/* BATCH_ACK: a member has verified and cached one of our batches. */
static void handle_ack(dsig_node *n, struct conn_state *cs, const uint8_t *p, size_t len)
{
    uint64_t signer, seq;
    const char *gname;
    size_t glen;
    if (node_ack_parse(p, len, &signer, &seq, &gname, &glen) != DSIG_OK || signer != n->my_id) {
        bump(n, C_MALFORMED);
        return;
    }
    long gi = node_cfg_group_index(n->cfg, gname, glen);
    if (gi < 0 || !n->groups[gi].member) {
        bump(n, C_MALFORMED);
        return;
    }
    struct ngroup *g = &n->groups[gi];
    int pos = node_cfg_member_pos(g->cg, n->peers[cs->peer_idx].id);
    if (pos < 0) { /* acks only count from the group's members */
        bump(n, C_MALFORMED);
        return;
    }
    bump(n, C_ACKS);
    node_batch_acked(n, g, pos, seq);
}

/* Connection state and frame dispatch (mem_lock held for reading). */
static void on_event(dsig_node *n, const dsig_net_event *ev)
{
    struct conn_state *cs = conn_find(n, ev->conn);
    switch (ev->kind) {
    case DSIG_NET_EV_UP: {
        if (!cs)
            cs = conn_add(n, ev->conn, ev->outgoing);
        if (!cs) {
            if (!ev->outgoing)
                dsig_net_close(n->loop, ev->conn);
            return;
        }
        cs->hello = 0;
        cs->identified = 0;
        cs->closing = 0;
        cs->peer_idx = ev->outgoing ? peer_by_out_conn(n, ev->conn) : -1;
        cs->peer_gen = cs->peer_idx >= 0 ? n->peers[cs->peer_idx].gen : 0;
        if (dsig_random_bytes(cs->my_nonce, sizeof cs->my_nonce) != DSIG_OK) {
            cs->closing = 1; /* no fresh nonce, no authentication: never identified */
            if (!ev->outgoing)
                dsig_net_close(n->loop, ev->conn);
            return;
        }
        uint8_t h[NODE_HELLO_BYTES];
        node_hello_encode(h, n->my_id, n->instance, cs->my_nonce);
        (void)dsig_net_send(n->loop, ev->conn, DSIG_NODE_T_HELLO, h, sizeof h);
        return;
    }
    case DSIG_NET_EV_DOWN:
        if (ev->reason == DSIG_NET_DOWN_MALFORMED)
            bump(n, C_MALFORMED);
        if (!cs)
            return;
        if (!node_slot_is(n, cs->peer_idx, cs->peer_gen)) { /* its member left: nothing to undo */
            conn_remove(n, cs);
            return;
        }
        if (cs->outgoing) {
            node_peer_ready(n, (size_t)cs->peer_idx, 0);
        }
        if (!cs->outgoing && cs->identified) {
            uint64_t cur = cs->conn;
            atomic_compare_exchange_strong(&n->peers[cs->peer_idx].in_conn, &cur, 0);
        }
        conn_remove(n, cs);
        return;
    case DSIG_NET_EV_FRAME:
        if (!cs || cs->closing)
            return;
        if (ev->type == DSIG_NODE_T_HELLO) {
            handle_hello(n, cs, ev->payload, ev->len);
            return;
        }
        if (ev->type == DSIG_NODE_T_AUTH) {
            handle_auth(n, cs, ev->payload, ev->len);
            return;
        }
        if (!cs->hello) { /* nothing but HELLO before the peer said who it claims to be */
            bump(n, C_MALFORMED);
            conn_reject(n, cs);
            return;
        }
        if (!cs->identified) { /* claimed, not proven: no frame is taken from it */
            bump(n, C_UNAUTH);
            return;
        }
        if (!node_slot_is(n, cs->peer_idx, cs->peer_gen)) { /* its member left */
            bump(n, C_UNKNOWN);
            conn_reject(n, cs);
            return;
        }
        switch (ev->type) {
        case DSIG_NODE_T_BATCH:
            handle_batch(n, cs, ev->payload, ev->len);
            return;
        case DSIG_NODE_T_BATCH_ACK:
            handle_ack(n, cs, ev->payload, ev->len);
            return;
        case DSIG_NODE_T_APP:
            bump(n, C_APP_RECV);
            if (n->opt.on_app) {
                /* without the membership lock: the callback may call back into the node, and a
                 * nested read lock could deadlock behind a waiting writer */
                uint64_t from = n->peers[cs->peer_idx].id;
                node_mem_unlock(n);
                n->opt.on_app(n->opt.on_app_arg, from, ev->payload, ev->len);
                node_mem_rdlock(n);
            }
            return;
        default:
            bump(n, C_MALFORMED);
            return;
        }
    default:
        return;
    }
}

/* The net loop's callback. */
void node_on_event(void *arg, dsig_net_loop *loop, const dsig_net_event *ev)
{
    dsig_node *n = arg;
    (void)loop;
    node_mem_rdlock(n);
    on_event(n, ev);
    node_mem_unlock(n);
}

/* Plane thread: the event loop until dsig_node_stop, retrying refused batches between iterations
 * (the transport has no "queue drained" event; a short tick while something waits is enough). */
void *node_plane_main(void *arg)
{
    dsig_node *n = arg;
    for (;;) {
        int t = atomic_load_explicit(&n->retry, memory_order_relaxed) ? RETRY_MS : IDLE_MS;
        if (dsig_net_loop_run_once(n->loop, t) != DSIG_OK)
            break;
        node_mem_rdlock(n);
        node_retry_pending(n);
        node_mem_unlock(n);
    }
    return NULL;
}

static int send_app(dsig_node *n, uint64_t peer_id, const void *bytes, size_t len);

/* Queue an APP frame to a peer. */
int dsig_node_send_app(dsig_node *n, uint64_t peer_id, const void *bytes, size_t len)
{
    if (!n || (!bytes && len))
        return dsig_fail(DSIG_E_ARG, "dsig_node_send_app: NULL argument");
    if (len > n->opt.max_app_bytes)
        return dsig_fail(DSIG_E_TOO_LARGE, "node: application message of %zu bytes, at most %u", len,
                         n->opt.max_app_bytes);
    node_mem_rdlock(n);
    int rc = send_app(n, peer_id, bytes, len);
    node_mem_unlock(n);
    return rc;
}

/* dsig_node_send_app (mem_lock held for reading). */
static int send_app(dsig_node *n, uint64_t peer_id, const void *bytes, size_t len)
{
    long pi = node_cfg_index(n->cfg, peer_id);
    if (pi < 0 || (size_t)pi == n->my_idx)
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "node: no peer with id %llu", (unsigned long long)peer_id);
    /* One TCP stream per pair carries the APP traffic both ways, the one the lower id opened: the
     * higher id answers on the connection it accepted (once authenticated). A request and its reply
     * then share a socket, so TCP acknowledgements ride on the data instead of costing a packet of
     * their own each way (measured: ~1.5 us per one-way message on loopback). */
    int rc = DSIG_E_STATE;
    if (n->my_id > peer_id) {
        uint64_t in = atomic_load_explicit(&n->peers[pi].in_conn, memory_order_acquire);
        if (in)
            rc = dsig_net_send(n->loop, in, DSIG_NODE_T_APP, bytes, len);
    }
    if (rc == DSIG_E_STATE) { /* no such connection (any more): our own */
        if (!atomic_load_explicit(&n->peers[pi].ready, memory_order_acquire)) {
            bump(n, C_APP_FAIL);
            return dsig_fail(DSIG_E_STATE, "node: peer %llu is not connected", (unsigned long long)peer_id);
        }
        rc = dsig_net_send(n->loop, n->peers[pi].out_conn, DSIG_NODE_T_APP, bytes, len);
    }
    bump(n, rc == DSIG_OK ? C_APP_SENT : C_APP_FAIL);
    return rc;
}

int dsig_node_peer_up(dsig_node *n, uint64_t peer_id)
{
    if (!n)
        return 0;
    node_mem_rdlock(n);
    long pi = node_cfg_index(n->cfg, peer_id);
    int up = pi >= 0 && (size_t)pi != n->my_idx && atomic_load_explicit(&n->peers[pi].ready, memory_order_acquire);
    node_mem_unlock(n);
    return up;
}
