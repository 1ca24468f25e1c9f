/*
 * bench/bench_ping_end.c — one end of `dsig ping`: its node, the sign and verify of each scheme, the
 * plane-thread side of a round trip (the responder answers in on_app, the initiator chains its rounds
 * there) and the mailbox through which control messages reach the main thread.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_ping_internal.h"

/* CPU time of a clock in ns (0 if the clock is unavailable). */
static uint64_t cpu_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Record the first failure of an end and wake its main thread. */
void ep_fail(ping_ep *e, const char *fmt, ...)
{
    pthread_mutex_lock(&e->mu);
    if (!atomic_load(&e->failed)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->why, sizeof e->why, fmt, ap);
        va_end(ap);
        atomic_store(&e->failed, 1);
    }
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* CPU time of every thread of this process but the plane thread (the foreground sign / verify of the
 * round trips) and the calling one (the main thread, idle while rounds run), in ns. */
uint64_t ep_bg_cpu_ns(ping_ep *e)
{
    uint64_t self = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t plane = atomic_load(&e->have_plane_clk) ? cpu_ns(e->plane_clk) : 0;
    uint64_t all = cpu_ns(CLOCK_PROCESS_CPUTIME_ID); /* read last: never below the others */
    return all > self + plane ? all - self - plane : 0;
}

/* DSig verification counters of the node (fast, slow). */
void ep_fast_slow(ping_ep *e, uint64_t *fast, uint64_t *slow)
{
    dsig_node_stats st;
    dsig_node_stats_get(e->node, &st);
    *fast = st.verify_fast;
    *slow = st.verify_slow;
}

/* Sign msg with `scheme` into sig (SIG_CAP bytes). */
static int do_sign(ping_ep *e, int scheme, const uint8_t *msg, size_t len, uint8_t *sig, size_t *sig_len)
{
    switch (scheme) {
    case PING_NONE:
        *sig_len = 0;
        return DSIG_OK;
    case PING_SODIUM:
        *sig_len = crypto_sign_BYTES;
        return crypto_sign_detached(sig, NULL, msg, len, e->k->sk) == 0 ? DSIG_OK : DSIG_E_INTERNAL;
    default:
        return dsig_node_sign(e->node, e->group, msg, len, sig, SIG_CAP, sig_len);
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
        return dsig_node_verify(e->node, e->k->peer_id, msg, len, sig, sig_len);
    }
}

/* Send a small control message (kind ‖ body) to the peer. */
int ep_send_ctrl(ping_ep *e, uint8_t kind, const void *body, size_t len)
{
    uint8_t b[1 + END_ACK_BYTES];
    if (len > END_ACK_BYTES)
        return DSIG_E_ARG;
    b[0] = kind;
    if (len)
        memcpy(b + 1, body, len);
    return dsig_node_send_app(e->node, e->k->peer_id, b, 1 + len);
}

/* Responder (plane thread): verify the ping, sign the echoed message, reply with both times. */
static void respond_ping(ping_ep *e, const uint8_t *p, size_t len)
{
    rhdr h;
    const uint8_t *msg, *sig;
    if (rhdr_get(p, len, &h, &msg, &sig) != 0 || !(e->schemes & (1u << h.scheme))) {
        ep_fail(e, "malformed ping frame");
        return;
    }
    uint8_t *out = e->buf, *omsg = out + RHDR, *osig = omsg + h.msg_len;
    uint64_t t0 = ping_now_ns();
    int vrc = do_verify(e, h.scheme, msg, h.msg_len, sig, h.sig_len);
    uint64_t t1 = ping_now_ns();
    memcpy(omsg, msg, h.msg_len); /* the echo: not timed (the signing below reads it in place) */
    uint64_t t2 = ping_now_ns();
    size_t sl = 0;
    int src = do_sign(e, h.scheme, omsg, h.msg_len, osig, &sl);
    uint64_t t3 = ping_now_ns();
    rhdr r = {.kind = PM_PONG, .scheme = h.scheme, .flags = vrc == DSIG_OK ? 0 : FLAG_BAD, .seq = h.seq,
              .msg_len = h.msg_len, .sig_len = (uint32_t)sl, .r_verify = t1 - t0, .r_sign = t3 - t2};
    if (src != DSIG_OK) {
        ep_fail(e, "responder: %s sign failed: %s", ping_scheme_name(h.scheme), dsig_strerror(src));
        r.flags |= FLAG_BAD;
        r.sig_len = 0;
    }
    rhdr_put(out, &r);
    int rc = dsig_node_send_app(e->node, e->k->peer_id, out, RHDR + h.msg_len + r.sig_len);
    if (rc != DSIG_OK)
        ep_fail(e, "responder: reply not sent: %s", dsig_strerror(rc));
}

/* Initiator (main thread for the first round of a chain, then the plane thread): sign round e->seq
 * and send it. The message lives in e->buf, where the reply's echo is compared. */
int ep_send_round(ping_ep *e)
{
    uint8_t *msg = e->buf + RHDR, *sig = msg + e->len;
    for (size_t b = 0; b < 4 && b < e->len; b++) /* distinct messages: the round number first */
        msg[b] = (uint8_t)(e->seq >> (8 * b));
    size_t sl = 0;
    e->t0 = ping_now_ns();
    int rc = do_sign(e, e->scheme, msg, e->len, sig, &sl);
    e->t1 = ping_now_ns();
    if (rc != DSIG_OK) {
        ep_fail(e, "%s sign failed: %s", ping_scheme_name(e->scheme), dsig_strerror(rc));
        return -1;
    }
    rhdr h = {.kind = PM_PING, .scheme = (uint8_t)e->scheme, .seq = e->seq, .msg_len = (uint32_t)e->len,
              .sig_len = (uint32_t)sl};
    rhdr_put(e->buf, &h);
    if ((rc = dsig_node_send_app(e->node, e->k->peer_id, e->buf, RHDR + e->len + sl)) != DSIG_OK) {
        ep_fail(e, "ping not sent: %s", dsig_strerror(rc));
        return -1;
    }
    return 0;
}

/* Initiator (plane thread): the reply of the current round, verified at once; the samples of the round
 * go to e->rec; then the next round is signed and sent from here, or the chain is handed back. */
static void take_pong(ping_ep *e, const uint8_t *p, size_t len)
{
    uint64_t t_arrive = ping_now_ns();
    rhdr h;
    const uint8_t *msg, *sig;
    if (rhdr_get(p, len, &h, &msg, &sig) != 0 || !e->left || h.seq != e->seq || h.scheme != e->scheme) {
        ep_fail(e, "malformed or unexpected reply frame");
        return;
    }
    int vrc = do_verify(e, h.scheme, msg, h.msg_len, sig, h.sig_len);
    uint64_t t_verified = ping_now_ns();
    if (h.flags & FLAG_BAD) {
        ep_fail(e, "the responder could not verify (or sign) a %s message", ping_scheme_name(h.scheme));
        return;
    }
    if (vrc != DSIG_OK) {
        ep_fail(e, "a %s reply did not verify: %s", ping_scheme_name(h.scheme), dsig_strerror(vrc));
        return;
    }
    if (h.msg_len != e->len || memcmp(msg, e->buf + RHDR, h.msg_len) != 0) {
        ep_fail(e, "the reply does not echo the message");
        return;
    }
    if (e->rec) {
        samples *S = e->rec;
        double rtt = (double)(t_verified - e->t0);
        double s_a = (double)(e->t1 - e->t0), v_a = (double)(t_verified - t_arrive);
        double s_b = (double)h.r_sign, v_b = (double)h.r_verify;
        size_t n = S->n++;
        S->rtt[n] = rtt;
        S->sign[2 * n] = s_a;
        S->sign[2 * n + 1] = s_b;
        S->verify[2 * n] = v_a;
        S->verify[2 * n + 1] = v_b;
        S->transmit[n] = (rtt - s_a - v_a - s_b - v_b) / 2.0;
    }
    e->seq++;
    e->left--;
    if (e->left && ep_send_round(e) != 0)
        return;
    pthread_mutex_lock(&e->mu);
    e->progress++;
    if (!e->left) {
        e->chain_done = 1;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
}

/* The node's APP callback (plane thread): rounds here, control messages to the main thread. */
static void on_app(void *arg, uint64_t peer_id, const uint8_t *p, size_t len)
{
    ping_ep *e = arg;
    if (!atomic_load_explicit(&e->have_plane_clk, memory_order_relaxed)) {
        clockid_t c;
        if (pthread_getcpuclockid(pthread_self(), &c) == 0) {
            e->plane_clk = c;
            atomic_store(&e->have_plane_clk, 1);
        }
    }
    if (peer_id != e->k->peer_id || len < 1 || atomic_load_explicit(&e->failed, memory_order_relaxed))
        return; /* another configured node talking to us: not part of this run */
    if (p[0] == PM_PING && !e->initiator) {
        respond_ping(e, p, len);
        return;
    }
    if (p[0] == PM_PONG && e->initiator) {
        take_pong(e, p, len);
        return;
    }
    pthread_mutex_lock(&e->mu);
    if (e->got_ctrl || len - 1 > sizeof e->ctrl) {
        pthread_mutex_unlock(&e->mu);
        ep_fail(e, "unexpected control message 0x%02x (%zu bytes)", p[0], len);
        return;
    }
    e->ctrl_kind = p[0];
    e->ctrl_len = (uint32_t)(len - 1);
    memcpy(e->ctrl, p + 1, len - 1);
    e->got_ctrl = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* Main thread: wait ≤ timeout_ms for a control message (kind 0: any). 0, or -1 with the end failed. */
int ep_wait_ctrl(ping_ep *e, uint8_t kind, int timeout_ms, const char *what)
{
    uint64_t until = ping_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    pthread_mutex_lock(&e->mu);
    while (!e->got_ctrl && !atomic_load(&e->failed) && ping_now_ns() < until) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
    }
    int got = e->got_ctrl;
    uint8_t k = e->ctrl_kind;
    e->got_ctrl = 0;
    pthread_mutex_unlock(&e->mu);
    if (atomic_load(&e->failed))
        return -1;
    if (!got) {
        ep_fail(e, "no %s from the peer within %d ms", what, timeout_ms);
        return -1;
    }
    if (kind && k != kind) {
        ep_fail(e, "expected %s from the peer, got message 0x%02x", what, k);
        return -1;
    }
    return 0;
}

/* Main thread: wait ≤ ms until the node's connection to the peer is up and authenticated. 0 or -1. */
int ep_wait_peer(ping_ep *e, int ms)
{
    uint64_t until = ping_now_ns() + (uint64_t)ms * 1000000ull;
    while (!dsig_node_peer_up(e->node, e->k->peer_id)) {
        if (atomic_load(&e->failed))
            return -1;
        if (ping_now_ns() > until) {
            ep_fail(e, "node %" PRIu64 " not connected within %d ms", e->k->peer_id, ms);
            return -1;
        }
        usleep(1000);
    }
    return 0;
}

/* Keys per pool for the initiator: every key a block uses is ready before it (capped at POOL_MAX). */
unsigned ping_pool_size(const ping_opts *o)
{
    uint64_t want = (uint64_t)o->count + o->warmup + 16;
    if (want < 512)
        want = 512;
    if (want > POOL_MAX)
        want = POOL_MAX;
    return (unsigned)want;
}

/* Verified batches cached per signer: twice a pool of `pool` keys (batches of 128), plus room. */
static unsigned cache_batches(unsigned pool)
{
    return pool / 128u * 2u + 32u;
}

/* Set up one end: its node (id k->self_id of cfg, not started) with ping's on_app, and the group both
 * ends share (the first by name; none = no DSig). 0 or -1 (e->why says why). */
int ep_open(ping_ep *e, int initiator, const ping_opts *o, ping_keys *k, const dsig_node_config *cfg,
                   unsigned pool)
{
    memset(e, 0, sizeof *e);
    e->initiator = initiator;
    e->o = o;
    e->k = k;
    e->pool_keys = pool;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    atomic_init(&e->failed, 0);
    atomic_init(&e->have_plane_clk, 0);
    e->buf = malloc(FRAME_CAP);
    if (!e->buf) {
        ep_fail(e, "out of memory");
        return -1;
    }
    for (size_t gi = 0; gi < dsig_node_config_group_count(cfg) && !e->group[0]; gi++) {
        dsig_node_group g;
        int self = 0, peer = 0;
        if (dsig_node_config_group(cfg, gi, &g) != DSIG_OK)
            continue;
        for (size_t m = 0; m < g.n_members; m++) {
            self |= g.members[m] == k->self_id;
            peer |= g.members[m] == k->peer_id;
        }
        if (self && peer)
            snprintf(e->group, sizeof e->group, "%s", g.name);
    }
    dsig_node_options no;
    dsig_node_options_default(&no);
    no.pool_target = pool;
    no.cache_batches = cache_batches(pool);
    no.on_app = on_app;
    no.on_app_arg = e;
    int rc = dsig_node_new(&e->node, cfg, k->self_id, k->ed_sk, &no);
    if (rc != DSIG_OK) {
        ep_fail(e, "node %" PRIu64 ": %s: %s", k->self_id, dsig_strerror(rc), dsig_last_error_detail());
        return -1;
    }
    return 0;
}

/* Free an end (the node first: its plane thread uses the rest). */
void ep_close(ping_ep *e)
{
    dsig_node_free(e->node);
    e->node = NULL;
    free(e->buf);
    e->buf = NULL;
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
}

/* Start an end's node (listen, connect, plane). 0 or -1. */
int ep_start(ping_ep *e)
{
    int rc = dsig_node_start(e->node);
    if (rc != DSIG_OK) {
        ep_fail(e, "node %" PRIu64 ": %s", e->k->self_id, dsig_last_error_detail());
        return -1;
    }
    return 0;
}

