/*
 * bench/bench_ping_initiator.c — the initiator's main thread: HELLO, then every run x size x scheme
 * block (sync, warm-up, sync, timed rounds chained on the plane thread, END), then the rows and the
 * target lines.
 */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_internal.h"
#include "bench_ping_internal.h"

/* Both pools full and each end's batches cached and acknowledged at the other (SYNC -> SYNC_ACK). */
static int sync_peer(ping_ep *e, int scheme)
{
    if (scheme == PING_DSIG) {
        int rc = dsig_node_wait_ready(e->node, e->group, e->pool_keys, 120000);
        if (rc != DSIG_OK) {
            ep_fail(e, "initiator pool: %s", dsig_last_error_detail());
            return -1;
        }
    }
    uint8_t s = (uint8_t)scheme;
    if (ep_send_ctrl(e, PM_SYNC, &s, 1) != DSIG_OK) {
        ep_fail(e, "SYNC not sent: %s", dsig_last_error_detail());
        return -1;
    }
    return ep_wait_ctrl(e, PM_SYNC_ACK, 120000, "SYNC_ACK");
}

/* n round trips of `scheme` with a `len`-byte message (in e->buf), chained on the plane thread; samples
 * to rec (NULL: warm-up). 0 or -1. */
static int chain(ping_ep *e, int scheme, size_t len, unsigned n, samples *rec, uint32_t *seq)
{
    if (!n)
        return 0;
    pthread_mutex_lock(&e->mu);
    e->chain_done = 0;
    uint64_t seen = e->progress;
    pthread_mutex_unlock(&e->mu);
    e->scheme = scheme;
    e->len = len;
    e->seq = *seq;
    e->left = n;
    e->rec = rec;
    if (ep_send_round(e) != 0) /* the plane thread owns the chain from here */
        return -1;
    uint64_t deadline = ping_now_ns() + (uint64_t)REPLY_TIMEOUT_MS * 1000000ull;
    pthread_mutex_lock(&e->mu);
    while (!e->chain_done && !atomic_load(&e->failed)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        uint64_t t = ping_now_ns();
        if (e->progress != seen) {
            seen = e->progress;
            deadline = t + (uint64_t)REPLY_TIMEOUT_MS * 1000000ull;
        } else if (t > deadline && !e->chain_done) {
            pthread_mutex_unlock(&e->mu);
            ep_fail(e, "no reply from the peer within %d ms", REPLY_TIMEOUT_MS);
            return -1;
        }
    }
    int ok = e->chain_done && !atomic_load(&e->failed);
    *seq = e->seq;
    pthread_mutex_unlock(&e->mu);
    return ok ? 0 : -1;
}

/* One block: sync, warm-up, sync, timed rounds, END. Samples appended to *S. */
static int block(ping_ep *e, int scheme, size_t len, samples *S, uint32_t *seq)
{
    const ping_opts *o = e->o;
    if (sync_peer(e, scheme) != 0 || chain(e, scheme, len, o->warmup, NULL, seq) != 0 || sync_peer(e, scheme) != 0)
        return -1;
    uint64_t fast0 = 0, slow0 = 0, fast1 = 0, slow1 = 0;
    ep_fast_slow(e, &fast0, &slow0);
    uint64_t bg0 = ep_bg_cpu_ns(e), w0 = ping_now_ns();
    if (chain(e, scheme, len, o->count, S, seq) != 0)
        return -1;
    uint64_t bg1 = ep_bg_cpu_ns(e), w1 = ping_now_ns();
    ep_fast_slow(e, &fast1, &slow1);
    S->bg_ini += bg1 >= bg0 ? bg1 - bg0 : 0;
    S->wall_ini += w1 - w0;
    if (ep_send_ctrl(e, PM_END, NULL, 0) != DSIG_OK) {
        ep_fail(e, "END not sent");
        return -1;
    }
    if (ep_wait_ctrl(e, PM_END_ACK, 30000, "END_ACK") != 0)
        return -1;
    pthread_mutex_lock(&e->mu);
    uint32_t cl = e->ctrl_len;
    uint8_t ack[END_ACK_BYTES];
    memcpy(ack, e->ctrl, sizeof ack);
    pthread_mutex_unlock(&e->mu);
    if (cl != END_ACK_BYTES) {
        ep_fail(e, "malformed END_ACK (%u bytes)", (unsigned)cl);
        return -1;
    }
    ping_end_ack a;
    end_ack_get(ack, &a);
    S->bg_rsp += a.bg_ns;
    S->wall_rsp += a.wall_ns;
    if (scheme == PING_DSIG) {
        S->fast += fast1 - fast0 + a.fast;
        S->slow += slow1 - slow0 + a.slow;
    }
    S->sig_bytes = scheme == PING_NONE ? 0 : scheme == PING_SODIUM ? crypto_sign_BYTES
                                                                   : dsig_node_sig_bytes(e->node, e->group);
    return 0;
}

/* Start the node, HELLO, then every run x size x scheme block; rows out. `ready_fd` >= 0: wait for the
 * responder's start byte first (self-contained mode). Exit code. */
int ping_initiator_main(ping_ep *e, int ready_fd, ping_sink sink, void *ctx)
{
    const ping_opts *o = e->o;
    FILE *info = o->json ? stderr : stdout;
    int code = 2;
    size_t ncells = o->nsizes * PING_NSCHEMES;
    samples *S = calloc(ncells, sizeof *S);
    ping_row *rows = calloc(ncells, sizeof *rows);
    size_t per = (size_t)o->count * o->runs;
    int ok = S && rows;
    for (size_t c = 0; ok && c < ncells; c++) {
        if (!(o->schemes & (1u << (c % PING_NSCHEMES))))
            continue;
        S[c].rtt = malloc(per * sizeof(double));
        S[c].transmit = malloc(per * sizeof(double));
        S[c].sign = malloc(2 * per * sizeof(double));
        S[c].verify = malloc(2 * per * sizeof(double));
        ok = S[c].rtt && S[c].transmit && S[c].sign && S[c].verify;
    }
    if (!ok) {
        ep_fail(e, "out of memory");
        goto done;
    }
    e->schemes = o->schemes;
    if ((o->schemes & (1u << PING_DSIG)) && !e->group[0]) {
        ep_fail(e, "nodes %" PRIu64 " and %" PRIu64 " share no group: no DSig", e->k->self_id, e->k->peer_id);
        goto done;
    }
    if (ready_fd >= 0) {
        uint8_t b = 0;
        struct pollfd pl = {.fd = ready_fd, .events = POLLIN};
        if (poll(&pl, 1, 30000) != 1 || read(ready_fd, &b, 1) != 1 || b != 1) {
            ep_fail(e, "the responder process did not start");
            goto done;
        }
    }
    if (ep_start(e) != 0)
        goto done;
    if (!o->quiet)
        fprintf(stderr, "# dsig ping: node %" PRIu64 " -> node %" PRIu64 " (DSig group \"%s\")\n", e->k->self_id,
                e->k->peer_id, e->group[0] ? e->group : "-");
    if (ep_wait_peer(e, 60000) != 0)
        goto done;
    uint8_t h[HELLO_BYTES - 1];
    hello_put(h, e->schemes);
    if (ep_send_ctrl(e, PM_HELLO, h, sizeof h) != DSIG_OK) {
        ep_fail(e, "HELLO not sent");
        goto done;
    }
    if (ep_wait_ctrl(e, PM_HELLO, 30000, "HELLO") != 0)
        goto done;

    uint32_t seq = 0;
    for (unsigned run = 0; run < o->runs; run++) {
        for (size_t si = 0; si < o->nsizes; si++) {
            bench_payload_fill(e->buf + RHDR, o->sizes[si], 0x70696e67u + si);
            for (int sc = 0; sc < PING_NSCHEMES; sc++) {
                if (!(o->schemes & (1u << sc)))
                    continue;
                if (!o->quiet)
                    fprintf(stderr, "# run %u/%u: %s, %zu B, %u round trips\n", run + 1, o->runs,
                            ping_scheme_name(sc), o->sizes[si], o->count);
                if (block(e, sc, o->sizes[si], &S[si * PING_NSCHEMES + sc], &seq) != 0)
                    goto done;
            }
        }
    }
    /* Rows, then the target per size. */
    if (!o->json)
        ping_table_header(stdout);
    size_t nrows = 0;
    for (size_t c = 0; c < ncells; c++) {
        samples *s = &S[c];
        if (!(o->schemes & (1u << (c % PING_NSCHEMES))))
            continue;
        ping_row *r = &rows[nrows++];
        r->scheme = (int)(c % PING_NSCHEMES);
        r->msg_bytes = o->sizes[c / PING_NSCHEMES];
        r->sig_bytes = s->sig_bytes;
        r->rounds = (unsigned)s->n;
        r->runs = o->runs;
        r->rtt = ping_stat_of(s->rtt, s->n);
        r->sign = ping_stat_of(s->sign, 2 * s->n);
        r->verify = ping_stat_of(s->verify, 2 * s->n);
        r->transmit = ping_stat_of(s->transmit, s->n);
        r->fast_path_fraction = r->scheme == PING_DSIG && s->fast + s->slow
                                    ? (double)s->fast / (double)(s->fast + s->slow)
                                    : -1.0;
        r->bg_cpu_initiator = s->wall_ini ? (double)s->bg_ini / (double)s->wall_ini : 0.0;
        r->bg_cpu_responder = s->wall_rsp ? (double)s->bg_rsp / (double)s->wall_rsp : 0.0;
        if (o->json)
            ping_json_row(stdout, r);
        else
            ping_table_row(stdout, r);
        if (sink)
            sink(ctx, r);
    }
    fflush(stdout);
    const ping_row *floor_row = NULL;
    for (size_t i = 0; i < nrows && !floor_row; i++)
        if (rows[i].scheme == PING_NONE)
            floor_row = &rows[i];
    if (floor_row)
        fprintf(info, "# transport floor (none, %zu B): one way %.2f us median, rtt %.2f us\n",
                floor_row->msg_bytes, floor_row->transmit.median / 1e3, floor_row->rtt.median / 1e3);
    for (size_t si = 0; si < o->nsizes; si++)
        (void)ping_target(info, rows, nrows, o->sizes[si]);
    for (size_t si = 0; si < o->nsizes; si++)
        (void)ping_target_bg(info, rows, nrows, o->sizes[si]);
    dsig_node_stats ns;
    dsig_node_stats_get(e->node, &ns);
    if (ns.batches_send_failed || ns.drop_bad_signature || ns.drop_queue_full)
        fprintf(info, "# note: node: %" PRIu64 " batch sends refused by a full queue (retried), %" PRIu64
                " bad batches, %" PRIu64 " batches dropped (queue full)\n",
                ns.batches_send_failed, ns.drop_bad_signature, ns.drop_queue_full);
    code = 0;
done:
    if (e->node && dsig_node_peer_up(e->node, e->k->peer_id)) {
        (void)ep_send_ctrl(e, PM_BYE, NULL, 0);
        usleep(20000); /* let the plane write it before the node closes the connection */
    }
    if (atomic_load(&e->failed)) {
        fprintf(stderr, "dsig ping: %s\n", e->why);
        code = 2;
    }
    for (size_t c = 0; S && c < ncells; c++) {
        free(S[c].rtt);
        free(S[c].transmit);
        free(S[c].sign);
        free(S[c].verify);
    }
    free(S);
    free(rows);
    return code;
}
