/*
 * bench/bench_ping_responder.c — the responder's main thread: answers the initiator's control
 * messages (HELLO, SYNC, END, BYE) while the plane thread answers its pings (bench_ping_end.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_ping_internal.h"

/* Responder main thread: one control message. 1 = BYE, 0 = go on, -1 = failed. */
static int respond_ctrl(ping_ep *e, uint8_t kind, const uint8_t *p, uint32_t len, int *hello)
{
    uint8_t out[END_ACK_BYTES] = {0};
    switch (kind) {
    case PM_HELLO:
        if (hello_get(p, len, &e->schemes) != 0) {
            ep_fail(e, "the peer is not a `dsig ping` end of this version");
            return -1;
        }
        if ((e->schemes & (1u << PING_DSIG)) && !e->group[0]) {
            ep_fail(e, "nodes %" PRIu64 " and %" PRIu64 " share no group: no DSig", e->k->self_id, e->k->peer_id);
            return -1;
        }
        if (ep_wait_peer(e, 30000) != 0)
            return -1;
        hello_put(out, e->schemes);
        *hello = 1;
        return ep_send_ctrl(e, PM_HELLO, out, HELLO_BYTES - 1) == DSIG_OK ? 0 : (ep_fail(e, "HELLO not sent"), -1);
    case PM_SYNC:
        if (len != 1 || p[0] >= PING_NSCHEMES || !*hello) {
            ep_fail(e, "malformed SYNC");
            return -1;
        }
        if (p[0] == PING_DSIG) {
            /* our pool full, and every batch with unused keys cached and acknowledged by the peer */
            int rc = dsig_node_wait_ready(e->node, e->group, e->pool_keys, 120000);
            if (rc != DSIG_OK) {
                ep_fail(e, "responder pool: %s", dsig_last_error_detail());
                return -1;
            }
            ep_fast_slow(e, &e->fast0, &e->slow0);
        }
        e->bg0 = ep_bg_cpu_ns(e);
        e->wall0 = ping_now_ns();
        return ep_send_ctrl(e, PM_SYNC_ACK, p, 1) == DSIG_OK ? 0 : (ep_fail(e, "SYNC_ACK not sent"), -1);
    case PM_END: {
        uint64_t bg = ep_bg_cpu_ns(e), wall = ping_now_ns(), fast, slow;
        ep_fast_slow(e, &fast, &slow);
        ping_end_ack a = {.fast = fast - e->fast0, .slow = slow - e->slow0,
                          .bg_ns = bg >= e->bg0 ? bg - e->bg0 : 0, .wall_ns = wall >= e->wall0 ? wall - e->wall0 : 0};
        end_ack_put(out, &a);
        return ep_send_ctrl(e, PM_END_ACK, out, END_ACK_BYTES) == DSIG_OK ? 0 : (ep_fail(e, "END_ACK not sent"), -1);
    }
    case PM_BYE:
        return 1;
    default:
        ep_fail(e, "unknown control message 0x%02x", kind);
        return -1;
    }
}

/* Serve one initiator until BYE, or until it has been gone for 5 s. `ready_fd` >= 0 gets one byte once
 * the node listens (1) or failed to start (0) (self-contained mode). Exit code 0 / 2. */
int ping_responder_main(ping_ep *e, int ready_fd)
{
    int rc = ep_start(e);
    if (ready_fd >= 0) {
        uint8_t b = rc == 0;
        if (write(ready_fd, &b, 1) != 1)
            rc = -1;
        close(ready_fd);
    }
    if (rc != 0) {
        fprintf(stderr, "dsig ping (responder): %s\n", e->why);
        return 2;
    }
    if (!e->o->quiet && ready_fd < 0) {
        char a[DSIG_NODE_MAX_ADDRESS] = "?";
        (void)dsig_node_listen_address(e->node, a, sizeof a);
        fprintf(stderr, "# dsig ping: node %" PRIu64 " answering on %s\n", e->k->self_id, a);
    }
    int hello = 0, gone = 0;
    uint64_t away_since = 0;
    for (;;) {
        pthread_mutex_lock(&e->mu);
        if (!e->got_ctrl && !atomic_load(&e->failed)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 250 * 1000000L;
            ts.tv_sec += ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        }
        int got = e->got_ctrl;
        uint8_t kind = e->ctrl_kind, body[END_ACK_BYTES];
        uint32_t len = e->ctrl_len;
        memcpy(body, e->ctrl, sizeof body);
        e->got_ctrl = 0;
        pthread_mutex_unlock(&e->mu);
        if (atomic_load(&e->failed))
            break;
        if (got) {
            int r = respond_ctrl(e, kind, body, len, &hello);
            if (r != 0)
                break;
        }
        if (hello && !dsig_node_peer_up(e->node, e->k->peer_id)) {
            uint64_t t = ping_now_ns();
            if (!away_since)
                away_since = t;
            else if (t - away_since > 5000000000ull) {
                gone = 1;
                break;
            }
        } else {
            away_since = 0;
        }
    }
    int code = atomic_load(&e->failed) && !gone ? 2 : 0;
    if (code)
        fprintf(stderr, "dsig ping (responder): %s\n", e->why);
    return code;
}
