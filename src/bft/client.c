/*
 * src/bft/client.c — a client of the replicas (docs/bft.md "Clients").
 *
 * It signs REQUEST(client, t, H(client ‖ t ‖ op)) and sends it to every replica (so that backups see it
 * and time out a leader that ignores it), re-sends it on a timeout, and accepts a result once f+1
 * replicas sent matching signed REPLYs for request t: at least one of them is correct, and a correct
 * replica replies only with the result of a committed execution. Request numbers start at the wall
 * clock in microseconds, so a restarted client never reuses one (replicas refuse old numbers).
 */
#include <string.h>
#include <time.h>

#include "bft/bft.h"
#include "core/internal.h"

struct bft_client {
    bft_core c;
    unsigned timeout_ms;
    uint64_t t;                      /* current / last request number */
    int busy;
    uint8_t *frame;                  /* the REQUEST frame (re-sent) */
    size_t frame_len;
    uint64_t sent_ms;
    uint64_t got;                    /* replicas that replied to t */
    uint8_t rd[DSIG_BFT_MAX_MEMBERS][BFT_DIGEST];
    bft_vote rv[DSIG_BFT_MAX_MEMBERS];
};

bft_core *bft_client_core(bft_client *c)
{
    return &c->c;
}

int bft_client_new(bft_client **out, const bft_env *env, dsig_bft_stats *st, uint64_t session, uint64_t self,
                   const uint64_t *replicas, size_t n, unsigned timeout_ms)
{
    bft_client *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return DSIG_E_NOMEM;
    int rc = bft_core_init(&c->c, env, st, BFT_CLASS_PBFT, session, self, replicas, n);
    if (rc == DSIG_OK && c->c.self_idx >= 0)
        rc = dsig_fail(DSIG_E_ARG, "bft: a client (%llu) cannot be a replica", (unsigned long long)self);
    if (rc != DSIG_OK) {
        bft_core_free(&c->c);
        dsig_xfree(c, 0);
        return rc;
    }
    c->timeout_ms = timeout_ms ? timeout_ms : 500;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    c->t = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    *out = c;
    return DSIG_OK;
}

static void replies_clear(bft_client *c)
{
    for (size_t i = 0; i < DSIG_BFT_MAX_MEMBERS; i++)
        bft_vote_clear(&c->rv[i]);
    c->got = 0;
}

void bft_client_free(bft_client *c)
{
    if (!c)
        return;
    replies_clear(c);
    dsig_xfree(c->frame, 0);
    bft_core_free(&c->c);
    dsig_xfree(c, 0);
}

int bft_client_submit(bft_client *c, const uint8_t *op, size_t len, uint64_t *request)
{
    bft_core *k = &c->c;
    if (!op || len == 0 || len > DSIG_BFT_MAX_OP)
        return dsig_fail(DSIG_E_ARG, "bft submit: operation of %zu bytes, 1..%u allowed", len, DSIG_BFT_MAX_OP);
    if (c->busy)
        return dsig_fail(DSIG_E_WOULD_BLOCK, "bft submit: request %llu has no result yet",
                         (unsigned long long)c->t);
    uint64_t t = c->t + 1;
    uint8_t d[BFT_DIGEST];
    bft_request_digest(k->self, t, op, len, d);
    bft_vote sig = {0};
    int rc = bft_sign(k, BT_PB_REQUEST, k->self, t, 0, d, &sig);
    if (rc != DSIG_OK)
        return rc;
    bft_begin(k, BT_PB_REQUEST);
    bb_u8(&k->out, 1);
    bb_u64(&k->out, k->self);
    bb_u64(&k->out, t);
    bb_blob16(&k->out, op, len);
    bb_blob16(&k->out, sig.sig, sig.len);
    bft_vote_clear(&sig);
    uint8_t *f = k->out.err ? NULL : dsig_malloc(k->out.len);
    if (!f)
        return DSIG_E_NOMEM;
    memcpy(f, k->out.p, k->out.len);
    dsig_xfree(c->frame, 0);
    c->frame = f;
    c->frame_len = k->out.len;
    c->t = t;
    c->busy = 1;
    replies_clear(c);
    c->sent_ms = k->env->now_ms(k->env->ctx);
    bft_send_all(k);
    if (request)
        *request = t;
    return DSIG_OK;
}

static void on_reply(bft_client *c, bft_rd *r)
{
    bft_core *k = &c->c;
    uint64_t v = rd_u64(r), client = rd_u64(r), t = rd_u64(r);
    (void)v;
    size_t rl;
    const uint8_t *res = rd_blob16(r, 0, DSIG_BFT_MAX_RESULT, &rl);
    bft_vref vote;
    bft_get_vote(k, r, &vote);
    int vi = bft_index(k, vote.signer);
    if (!rd_done(r) || vi < 0 || client != k->self) {
        k->st->malformed++;
        return;
    }
    if (!c->busy || t != c->t || (c->got >> vi & 1)) {
        k->st->replayed++;
        return;
    }
    uint8_t d[BFT_DIGEST];
    bft_hash("DSig-bft result v1", res, rl, NULL, 0, d);
    if (bft_verify(k, vote.signer, BT_PB_REPLY, k->self, t, 0, d, vote.sig, vote.len) != DSIG_OK) {
        k->st->forged++;
        return;
    }
    if (bft_vote_set(&c->rv[vi], vote.signer, vote.sig, vote.len) != DSIG_OK)
        return;
    memcpy(c->rd[vi], d, BFT_DIGEST);
    c->got |= UINT64_C(1) << vi;
    bft_vote q[DSIG_BFT_MAX_MEMBERS];
    size_t nq = 0;
    for (size_t i = 0; i < k->n; i++)
        if ((c->got >> i & 1) && memcmp(c->rd[i], d, BFT_DIGEST) == 0)
            q[nq++] = c->rv[i];
    if (nq < k->f + 1)
        return;
    c->busy = 0;
    k->st->replies++;
    bft_buf cert;
    bb_init(&cert);
    bft_put_cert(&cert, q, nq);
    dsig_bft_event ev = {.kind = DSIG_BFT_EV_REPLY, .instance = t, .value = res, .value_len = rl,
                         .proof = cert.p, .proof_len = cert.len};
    memcpy(ev.digest, d, 32);
    k->env->event(k->env->ctx, &ev);
    bb_free(&cert);
}

int bft_client_receive(bft_client *c, uint64_t from, const uint8_t *bytes, size_t len)
{
    bft_core *k = &c->c;
    int type;
    bft_rd r;
    if (!bft_open(k, bytes, len, &type, &r))
        return DSIG_E_ARG;
    k->st->frames_in++;
    if (bft_index(k, from) < 0 || type != BT_PB_REPLY) {
        k->st->malformed++;
        return DSIG_OK;
    }
    on_reply(c, &r);
    return DSIG_OK;
}

void bft_client_tick(bft_client *c)
{
    bft_core *k = &c->c;
    uint64_t now = k->env->now_ms(k->env->ctx);
    if (!c->busy || now - c->sent_ms < c->timeout_ms)
        return;
    c->sent_ms = now;
    for (size_t i = 0; i < k->n; i++) {
        k->st->retransmits++;
        bft_send_frame(k, k->members[i], c->frame, c->frame_len);
    }
}
