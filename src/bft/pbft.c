/*
 * src/bft/pbft.c — the replica: requests, the PBFT normal case, execution, checkpoints and timers
 * (docs/bft.md "Replication"). View changes are in pbft_view.c, state transfer and the log replay in
 * pbft_fetch.c.
 *
 * Normal case in view v (leader = members[v mod n]): the leader assigns sequence number s to a client
 * request and signs PRE-PREPARE(v, s, d); a backup that accepts it (the first for (v, s), from the
 * leader, within the log window (h, h + L]) signs PREPARE(v, s, d) to all; PRE-PREPARE + 2f matching
 * PREPAREs from distinct backups are the prepared certificate, upon which a replica signs COMMIT; 2f+1
 * matching COMMITs are the commit certificate: the request is executed in sequence order and each
 * replica signs a REPLY to the client. Every C sequence numbers replicas sign CHECKPOINT(s, state
 * digest); 2f+1 matching ones make it stable, and the log below it is dropped.
 *
 * Equivocation: a PREPARE carries the leader's PRE-PREPARE signature, so a backup that accepted d1 and
 * sees a PREPARE for d2 holds both of the leader's statements: the proof, and a view change.
 *
 * Durability: records (own votes, prepared certificates, executions, checkpoints, view changes) are
 * appended to the log before the frames that depend on them are queued; pb_flush syncs the log, then
 * sends. A restarted replica therefore never contradicts a vote it sent.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bft/pbft.h"
#include "core/bytes.h"
#include "core/internal.h"

bft_core *bft_replica_core(bft_replica *r)
{
    return &r->c;
}

uint64_t pb_leader(const bft_replica *r, uint64_t v)
{
    return r->c.members[v % r->c.n];
}

static uint64_t now_ms(bft_replica *r)
{
    return r->c.env->now_ms(r->c.env->ctx);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- requests ------------------------------------------------------------------------------- */

void pb_put_req(bft_buf *b, const pb_req *q)
{
    pb_req_ref v;
    pb_req_view(q, &v);
    pb_put_req_ref(b, &v);
}

void pb_put_req_ref(bft_buf *b, const pb_req_ref *q)
{
    if (!q->present) {
        bb_u8(b, 0);
        return;
    }
    bb_u8(b, 1);
    bb_u64(b, q->client);
    bb_u64(b, q->t);
    bb_blob16(b, q->op, q->oplen);
    bb_blob16(b, q->csig, q->csig_len);
}

int pb_get_req(const bft_core *c, bft_rd *r, pb_req_ref *q)
{
    memset(q, 0, sizeof *q);
    uint8_t flag = rd_u8(r);
    if (flag == 0)
        return r->bad ? -1 : 0;
    if (flag != 1) {
        r->bad = 1;
        return -1;
    }
    q->present = 1;
    q->client = rd_u64(r);
    q->t = rd_u64(r);
    q->op = rd_blob16(r, 1, DSIG_BFT_MAX_OP, &q->oplen);
    q->csig = rd_blob16(r, 0, c->env->sig_max, &q->csig_len);
    return r->bad ? -1 : 0;
}

void pb_req_digest(const pb_req_ref *q, uint8_t d[32])
{
    if (q->present)
        bft_request_digest(q->client, q->t, q->op, q->oplen, d);
    else
        bft_null_digest(d);
}

void pb_req_clear(pb_req *q)
{
    dsig_xfree(q->op, 0);
    bft_vote_clear(&q->csig);
    memset(q, 0, sizeof *q);
}

int pb_req_copy(pb_req *dst, const pb_req_ref *src)
{
    pb_req n = {.present = src->present, .client = src->client, .t = src->t};
    if (src->present) {
        if (!(n.op = dsig_malloc(src->oplen)) ||
            bft_vote_set(&n.csig, src->client, src->csig, src->csig_len) != DSIG_OK) {
            pb_req_clear(&n);
            return DSIG_E_NOMEM;
        }
        memcpy(n.op, src->op, src->oplen);
        n.oplen = src->oplen;
    }
    pb_req_clear(dst);
    *dst = n;
    return DSIG_OK;
}

void pb_req_view(const pb_req *q, pb_req_ref *out)
{
    out->present = q->present;
    out->client = q->client;
    out->t = q->t;
    out->op = q->op;
    out->oplen = q->oplen;
    out->csig = q->csig.sig;
    out->csig_len = q->csig.len;
}

static int client_index(const bft_replica *r, uint64_t id)
{
    for (size_t i = 0; i < r->n_clients; i++)
        if (r->clients[i] == id)
            return (int)i;
    return -1;
}

/* ---- the log window ------------------------------------------------------------------------- */

static void votes_clear(bft_vote *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bft_vote_clear(&v[i]);
}

void pb_entry_reset_votes(pb_entry *e, uint64_t v)
{
    e->vv = v;
    e->have_pp = 0;
    e->prepared = e->sent_com = 0;
    pb_req_clear(&e->req);
    bft_vote_clear(&e->pp);
    votes_clear(e->prep, DSIG_BFT_MAX_MEMBERS);
    votes_clear(e->com, DSIG_BFT_MAX_MEMBERS);
    e->prep_mask = e->com_mask = 0;
    e->proposed_ns = 0;
}

void pb_entry_clear(pb_entry *e)
{
    pb_entry_reset_votes(e, 0);
    pb_req_clear(&e->pc_req);
    bft_vote_clear(&e->pc_pp);
    votes_clear(e->pc_prep, DSIG_BFT_MAX_MEMBERS);
    pb_req_clear(&e->cc_req);
    votes_clear(e->cc, DSIG_BFT_MAX_MEMBERS);
    memset(e, 0, sizeof *e);
}

pb_entry *pb_entry_of(bft_replica *r, uint64_t s, int create)
{
    if (s <= r->h || s - r->h > r->window)
        return NULL;
    pb_entry *e = &r->log[s % r->window];
    if (e->used && e->s != s)
        pb_entry_clear(e); /* left over from below the window */
    if (!e->used) {
        if (!create)
            return NULL;
        e->used = 1;
        e->s = s;
        e->vv = r->view;
    }
    return e;
}

/* ---- sending, durably ----------------------------------------------------------------------- */

void pb_queue(bft_replica *r, uint64_t to)
{
    bft_core *c = &r->c;
    if (r->loading || c->out.err || to == c->self)
        return;
    bb_u64(&r->outq, to);
    bb_u32(&r->outq, (uint32_t)c->out.len);
    bb_put(&r->outq, c->out.p, c->out.len);
}

void pb_queue_all(bft_replica *r)
{
    for (size_t i = 0; i < r->c.n; i++)
        pb_queue(r, r->c.members[i]);
}

void pb_persist(bft_replica *r, int type, const bft_buf *b)
{
    if (!r->store || r->loading || b->err)
        return;
    if (bft_store_append(r->store, type, b->p, b->len) == DSIG_OK)
        r->st->log_records++;
}

void pb_flush(bft_replica *r)
{
    if (r->store && bft_store_sync(r->store) != DSIG_OK) {
        /* not durable: nothing that depends on it may leave */
        r->st->send_failed++;
        bb_reset(&r->outq);
        return;
    }
    if (r->store)
        r->st->log_syncs = bft_store_syncs(r->store);
    bft_rd rd;
    rd_init(&rd, r->outq.p, r->outq.len);
    while (rd.off < rd.n) {
        uint64_t to = rd_u64(&rd);
        uint32_t len = rd_u32(&rd);
        const uint8_t *f = rd_take(&rd, len);
        if (!f)
            break;
        bft_send_frame(&r->c, to, f, len);
    }
    bb_reset(&r->outq);
}

/* ---- normal case ---------------------------------------------------------------------------- */

/* Frame PRE-PREPARE(v, s) of entry e in c->out. */
static void build_pp(bft_replica *r, const pb_entry *e)
{
    bft_core *c = &r->c;
    bft_begin(c, BT_PB_PREPREPARE);
    bb_u64(&c->out, e->vv);
    bb_u64(&c->out, e->s);
    pb_put_req(&c->out, &e->req);
    bft_put_vote(&c->out, &e->pp);
}

static void build_prepare(bft_replica *r, const pb_entry *e)
{
    bft_core *c = &r->c;
    bft_begin(c, BT_PB_PREPARE);
    bb_u64(&c->out, e->vv);
    bb_u64(&c->out, e->s);
    bb_put(&c->out, e->d, BFT_DIGEST);
    bft_put_vote(&c->out, &e->prep[c->self_idx]);
    bb_blob16(&c->out, e->pp.sig, e->pp.len);
}

static void build_commit(bft_replica *r, const pb_entry *e)
{
    bft_core *c = &r->c;
    bft_begin(c, BT_PB_COMMIT);
    bb_u64(&c->out, e->vv);
    bb_u64(&c->out, e->s);
    bb_put(&c->out, e->d, BFT_DIGEST);
    bft_put_vote(&c->out, &e->com[c->self_idx]);
}

/* Record of this replica's vote on a pre-prepare: v ‖ s ‖ request ‖ leader sig ‖ own prepare sig. */
static void persist_vote(bft_replica *r, const pb_entry *e)
{
    if (!r->store || r->loading)
        return;
    bft_buf b;
    bb_init(&b);
    bb_u64(&b, e->vv);
    bb_u64(&b, e->s);
    pb_put_req(&b, &e->req);
    bb_blob16(&b, e->pp.sig, e->pp.len);
    const bft_vote *own = &e->prep[r->c.self_idx];
    bb_blob16(&b, own->sig, own->sig ? own->len : 0);
    pb_persist(r, REC_VOTE, &b);
    bb_free(&b);
}

/* Record of a prepared certificate and the own commit: v ‖ s ‖ request ‖ pp sig ‖ cert ‖ commit sig. */
static void persist_pcert(bft_replica *r, const pb_entry *e)
{
    if (!r->store || r->loading)
        return;
    bft_buf b;
    bb_init(&b);
    bb_u64(&b, e->pc_v);
    bb_u64(&b, e->s);
    pb_put_req(&b, &e->pc_req);
    bb_blob16(&b, e->pc_pp.sig, e->pc_pp.len);
    bft_put_cert(&b, e->pc_prep, e->pc_n);
    const bft_vote *own = &e->com[r->c.self_idx];
    bb_blob16(&b, own->sig, own->sig ? own->len : 0);
    pb_persist(r, REC_PCERT, &b);
    bb_free(&b);
}

void pb_accept_pp(bft_replica *r, pb_entry *e, uint64_t v, const uint8_t d[32], const pb_req_ref *q,
                  const uint8_t *pp, size_t pp_len, int send_prepare)
{
    bft_core *c = &r->c;
    if (e->vv != v)
        pb_entry_reset_votes(e, v);
    if (pb_req_copy(&e->req, q) != DSIG_OK || bft_vote_set(&e->pp, pb_leader(r, v), pp, pp_len) != DSIG_OK)
        return;
    memcpy(e->d, d, BFT_DIGEST);
    e->have_pp = 1;
    e->t = now_ms(r);
    if (send_prepare) {
        int me = c->self_idx;
        if (bft_sign(c, BT_PB_PREPARE, v, e->s, 0, d, &e->prep[me]) != DSIG_OK)
            return;
        memcpy(e->prep_d[me], d, BFT_DIGEST);
        e->prep_mask |= UINT64_C(1) << me;
        persist_vote(r, e);
        build_prepare(r, e);
        pb_queue_all(r);
    } else {
        persist_vote(r, e);
    }
    pb_check(r, e);
}

/* Votes for digest d among a mask (minus `exclude`). */
static size_t tally(uint64_t mask, uint8_t (*dd)[BFT_DIGEST], size_t n, const uint8_t d[32], int exclude)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (int)i != exclude && (mask >> i & 1) && memcmp(dd[i], d, BFT_DIGEST) == 0;
    return k;
}

void pb_check(bft_replica *r, pb_entry *e)
{
    bft_core *c = &r->c;
    if (!e->have_pp)
        return;
    int li = bft_index(c, pb_leader(r, e->vv)), me = c->self_idx;
    if (!e->prepared && tally(e->prep_mask, e->prep_d, c->n, e->d, li) >= 2 * c->f) {
        e->prepared = 1;
        pb_req_ref q;
        pb_req_view(&e->req, &q);
        if (pb_req_copy(&e->pc_req, &q) != DSIG_OK || bft_vote_set(&e->pc_pp, e->pp.signer, e->pp.sig,
                                                                   e->pp.len) != DSIG_OK)
            return;
        votes_clear(e->pc_prep, DSIG_BFT_MAX_MEMBERS);
        e->pc_n = 0;
        for (size_t i = 0; i < c->n && e->pc_n < 2 * c->f; i++)
            if ((int)i != li && (e->prep_mask >> i & 1) && memcmp(e->prep_d[i], e->d, BFT_DIGEST) == 0)
                bft_vote_set(&e->pc_prep[e->pc_n++], e->prep[i].signer, e->prep[i].sig, e->prep[i].len);
        e->have_pc = 1;
        e->pc_v = e->vv;
        memcpy(e->pc_d, e->d, BFT_DIGEST);
        if (!e->sent_com && !r->loading) {
            if (bft_sign(c, BT_PB_COMMIT, e->vv, e->s, 0, e->d, &e->com[me]) != DSIG_OK)
                return;
            memcpy(e->com_d[me], e->d, BFT_DIGEST);
            e->com_mask |= UINT64_C(1) << me;
            e->sent_com = 1;
            persist_pcert(r, e);
            build_commit(r, e);
            pb_queue_all(r);
        }
    }
    if (e->prepared && !e->committed && tally(e->com_mask, e->com_d, c->n, e->d, -1) >= 2 * c->f + 1) {
        pb_req_ref q;
        pb_req_view(&e->req, &q);
        if (pb_req_copy(&e->cc_req, &q) != DSIG_OK)
            return;
        votes_clear(e->cc, DSIG_BFT_MAX_MEMBERS);
        e->cc_n = 0;
        for (size_t i = 0; i < c->n && e->cc_n < 2 * c->f + 1; i++)
            if ((e->com_mask >> i & 1) && memcmp(e->com_d[i], e->d, BFT_DIGEST) == 0)
                bft_vote_set(&e->cc[e->cc_n++], e->com[i].signer, e->com[i].sig, e->com[i].len);
        e->committed = 1;
        e->cc_v = e->vv;
        memcpy(e->cc_d, e->d, BFT_DIGEST);
        e->t_committed = now_ms(r);
        pb_try_execute(r);
    }
}

/* Take a checkpoint at s (just executed): snapshot, digest, signed vote to all. */
static void take_checkpoint(bft_replica *r, uint64_t s)
{
    bft_core *c = &r->c;
    pb_ckpt *k = NULL;
    for (size_t i = 0; i < PB_CKPT_SLOTS && !k; i++)
        if (r->ck[i].used && r->ck[i].s == s)
            k = &r->ck[i];
    for (size_t i = 0; i < PB_CKPT_SLOTS && !k; i++)
        if (!r->ck[i].used)
            k = &r->ck[i];
    if (!k)
        return;
    bft_buf snap;
    bb_init(&snap);
    kv_snapshot(&r->kv, &snap);
    if (snap.err) {
        bb_free(&snap);
        return;
    }
    if (!k->used) {
        memset(k, 0, sizeof *k);
        k->used = 1;
        k->s = s;
    }
    dsig_xfree(k->snap, 0);
    k->snap = snap.p;
    k->snap_len = snap.len;
    kv_digest(snap.p, snap.len, k->d);
    k->own = 1;
    k->t = now_ms(r);
    int me = c->self_idx;
    if (bft_sign(c, BT_PB_CHECKPOINT, s, 0, 0, k->d, &k->v[me]) != DSIG_OK)
        return;
    memcpy(k->dd[me], k->d, BFT_DIGEST);
    k->mask |= UINT64_C(1) << me;
    bft_begin(c, BT_PB_CHECKPOINT);
    bb_u64(&c->out, s);
    bb_put(&c->out, k->d, BFT_DIGEST);
    bft_put_vote(&c->out, &k->v[me]);
    pb_queue_all(r);
    if (tally(k->mask, k->dd, c->n, k->d, -1) >= 2 * c->f + 1) {
        bft_vote cert[DSIG_BFT_MAX_MEMBERS];
        size_t n = 0;
        for (size_t i = 0; i < c->n && n < 2 * c->f + 1; i++)
            if ((k->mask >> i & 1) && memcmp(k->dd[i], k->d, BFT_DIGEST) == 0)
                cert[n++] = k->v[i];
        uint8_t d[BFT_DIGEST];
        memcpy(d, k->d, BFT_DIGEST);
        pb_stable(r, s, d, cert, n);
    }
}

void pb_execute_entry(bft_replica *r, pb_entry *e)
{
    bft_core *c = &r->c;
    uint8_t result[DSIG_BFT_MAX_RESULT];
    size_t rlen = 0;
    int reply = 0, ci = -1;
    const pb_req *q = &e->cc_req;
    if (q->present && (ci = client_index(r, q->client)) >= 0) {
        kv_client *kc = kv_client_of(&r->kv, q->client);
        if (q->t > kc->t) {
            rlen = kv_apply(&r->kv, q->op, q->oplen, result);
            kc->t = q->t;
            kc->rlen = (uint16_t)rlen;
            memcpy(kc->result, result, rlen);
            reply = 1;
        } else if (q->t == kc->t) {
            rlen = kc->rlen;
            memcpy(result, kc->result, rlen);
            reply = 1; /* committed twice (another sequence number): answer again, apply once */
        }
    }
    uint8_t sd[8 + BFT_DIGEST];
    dsig_store_be64(sd, e->s);
    memcpy(sd + 8, e->cc_d, BFT_DIGEST);
    uint8_t chain[32 + sizeof sd];
    memcpy(chain, r->kv.hist, 32);
    memcpy(chain + 32, sd, sizeof sd);
    bft_hash("DSig-bft history v1", chain, sizeof chain, result, rlen, r->kv.hist);
    if (r->store && !r->loading) {
        bft_buf b;
        bb_init(&b);
        bb_u64(&b, e->s);
        bb_u64(&b, e->cc_v);
        pb_put_req(&b, q);
        bft_put_cert(&b, e->cc, e->cc_n);
        pb_persist(r, REC_EXEC, &b);
        bb_free(&b);
    }
    r->last_exec = e->s;
    r->progress_ms = now_ms(r);
    r->attempt = 0;
    if (ci >= 0 && r->pend[ci].used && r->pend[ci].req.t <= q->t) {
        pb_req_clear(&r->pend[ci].req);
        memset(&r->pend[ci], 0, sizeof r->pend[ci]);
    }
    if (r->loading)
        return;
    r->st->decided++;
    if (reply) {
        uint8_t rd[BFT_DIGEST];
        bft_hash("DSig-bft result v1", result, rlen, NULL, 0, rd);
        bft_vote v = {0};
        if (bft_sign(c, BT_PB_REPLY, q->client, q->t, 0, rd, &v) == DSIG_OK) {
            bft_begin(c, BT_PB_REPLY);
            bb_u64(&c->out, r->view);
            bb_u64(&c->out, q->client);
            bb_u64(&c->out, q->t);
            bb_blob16(&c->out, result, rlen);
            bft_put_vote(&c->out, &v);
            if (!c->out.err) {
                uint8_t *cp = dsig_malloc(c->out.len);
                if (cp) {
                    memcpy(cp, c->out.p, c->out.len);
                    dsig_xfree(r->reply[ci], 0);
                    r->reply[ci] = cp;
                    r->reply_len[ci] = c->out.len;
                }
            }
            pb_queue(r, q->client);
        }
        bft_vote_clear(&v);
    }
    bft_buf cert;
    bb_init(&cert);
    bft_put_cert(&cert, e->cc, e->cc_n);
    dsig_bft_event ev = {.kind = DSIG_BFT_EV_DECIDE, .origin = q->present ? q->client : 0, .instance = e->s,
                         .view = e->cc_v, .request = q->present ? q->t : 0, .value = q->op,
                         .value_len = q->oplen, .result = result, .result_len = rlen, .proof = cert.p,
                         .proof_len = cert.len, .proposed_ns = e->proposed_ns};
    memcpy(ev.digest, r->kv.hist, 32);
    c->env->event(c->env->ctx, &ev);
    bb_free(&cert);
    if (e->s % r->interval == 0)
        take_checkpoint(r, e->s);
}

void pb_try_execute(bft_replica *r)
{
    pb_entry *e;
    while ((e = pb_entry_of(r, r->last_exec + 1, 0)) != NULL && e->committed)
        pb_execute_entry(r, e);
    pb_propose(r);
}

void pb_propose(bft_replica *r)
{
    bft_core *c = &r->c;
    if (r->loading || r->vc || pb_leader(r, r->view) != c->self)
        return;
    if (r->next_seq <= r->last_exec)
        r->next_seq = r->last_exec + 1;
    while (r->next_seq - 1 - r->last_exec < r->interval && r->next_seq <= r->h + r->window) {
        pb_pending *best = NULL;
        for (size_t i = 0; i < r->n_clients; i++) {
            pb_pending *p = &r->pend[i];
            if (p->used && p->assigned_v != r->view + 1 && (!best || p->arrived < best->arrived))
                best = p;
        }
        if (!best)
            return;
        uint64_t s = r->next_seq;
        pb_entry *e = pb_entry_of(r, s, 1);
        if (!e)
            return;
        if (e->vv == r->view && e->have_pp)
            return; /* taken in this view already (after a restart): leave it */
        bft_vote pp = {0};
        if (bft_sign(c, BT_PB_PREPREPARE, r->view, s, 0, best->d, &pp) != DSIG_OK)
            return;
        r->next_seq++;
        best->assigned_v = r->view + 1;
        pb_req_ref q;
        pb_req_view(&best->req, &q);
        uint64_t t0 = mono_ns();
        pb_accept_pp(r, e, r->view, best->d, &q, pp.sig, pp.len, 0);
        e->proposed_ns = t0;
        bft_vote_clear(&pp);
        build_pp(r, e);
        pb_queue_all(r);
    }
}

void pb_stable(bft_replica *r, uint64_t s, const uint8_t d[32], const bft_vote *cert, size_t n)
{
    if (s <= r->h)
        return;
    pb_ckpt *own = NULL;
    for (size_t i = 0; i < PB_CKPT_SLOTS; i++)
        if (r->ck[i].used && r->ck[i].s == s && r->ck[i].own && memcmp(r->ck[i].d, d, BFT_DIGEST) == 0)
            own = &r->ck[i];
    bft_vote nc[DSIG_BFT_MAX_MEMBERS] = {{0}};
    for (size_t i = 0; i < n; i++)
        bft_vote_set(&nc[i], cert[i].signer, cert[i].sig, cert[i].len);
    votes_clear(r->h_cert, DSIG_BFT_MAX_MEMBERS);
    memcpy(r->h_cert, nc, sizeof nc);
    r->h_n = n;
    r->h = s;
    memcpy(r->h_d, d, BFT_DIGEST);
    dsig_xfree(r->h_snap, 0);
    r->h_snap = NULL;
    r->h_snap_len = 0;
    if (own) {
        r->h_snap = own->snap;
        r->h_snap_len = own->snap_len;
        own->snap = NULL;
    } else if (r->last_exec < s && r->fetch_until < s) {
        r->fetch_until = s; /* the others are past a state this replica does not have */
    }
    for (size_t i = 0; i < PB_CKPT_SLOTS; i++)
        if (r->ck[i].used && r->ck[i].s <= s) {
            votes_clear(r->ck[i].v, DSIG_BFT_MAX_MEMBERS);
            dsig_xfree(r->ck[i].snap, 0);
            memset(&r->ck[i], 0, sizeof r->ck[i]);
        }
    for (size_t i = 0; i < r->window; i++)
        if (r->log[i].used && r->log[i].s <= s)
            pb_entry_clear(&r->log[i]);
    if (r->next_seq <= s)
        r->next_seq = s + 1;
    r->st->checkpoints++;
    if (r->h_snap)
        pb_compact(r);
}

/* Rewrite the log from the stable checkpoint: CKPT, VIEW, then each live entry's records. */
void pb_compact(bft_replica *r)
{
    if (!r->store || r->loading || !r->h_snap)
        return;
    bft_buf b;
    bb_init(&b);
    int rc = bft_store_rewrite_begin(r->store);
    bb_u64(&b, r->h);
    bb_put(&b, r->h_d, BFT_DIGEST);
    bb_blob32(&b, r->h_snap, r->h_snap_len);
    bft_put_cert(&b, r->h_cert, r->h_n);
    if (rc == DSIG_OK && !b.err)
        rc = bft_store_rewrite_add(r->store, REC_CKPT, b.p, b.len);
    bb_reset(&b);
    bb_u64(&b, r->vc ? r->vc_target : r->view);
    bb_u8(&b, r->vc ? 0 : 1);
    if (r->vc)
        bb_blob32(&b, r->my_vc, r->my_vc_len);
    else
        bb_blob32(&b, r->nv, r->nv ? r->nv_len : 0);
    if (rc == DSIG_OK && !b.err)
        rc = bft_store_rewrite_add(r->store, REC_VIEW, b.p, b.len);
    for (uint64_t s = r->h + 1; rc == DSIG_OK && s <= r->h + r->window; s++) {
        pb_entry *e = pb_entry_of(r, s, 0);
        if (!e)
            continue;
        const bft_vote *own;
        if (e->have_pp) {
            bb_reset(&b);
            bb_u64(&b, e->vv);
            bb_u64(&b, e->s);
            pb_put_req(&b, &e->req);
            bb_blob16(&b, e->pp.sig, e->pp.len);
            own = &e->prep[r->c.self_idx];
            bb_blob16(&b, own->sig, own->sig ? own->len : 0);
            if (!b.err)
                rc = bft_store_rewrite_add(r->store, REC_VOTE, b.p, b.len);
        }
        if (rc == DSIG_OK && e->have_pc) {
            bb_reset(&b);
            bb_u64(&b, e->pc_v);
            bb_u64(&b, e->s);
            pb_put_req(&b, &e->pc_req);
            bb_blob16(&b, e->pc_pp.sig, e->pc_pp.len);
            bft_put_cert(&b, e->pc_prep, e->pc_n);
            own = e->pc_v == e->vv ? &e->com[r->c.self_idx] : NULL;
            bb_blob16(&b, own && own->sig ? own->sig : NULL, own && own->sig ? own->len : 0);
            if (!b.err)
                rc = bft_store_rewrite_add(r->store, REC_PCERT, b.p, b.len);
        }
        if (rc == DSIG_OK && e->committed && s <= r->last_exec) {
            bb_reset(&b);
            bb_u64(&b, e->s);
            bb_u64(&b, e->cc_v);
            pb_put_req(&b, &e->cc_req);
            bft_put_cert(&b, e->cc, e->cc_n);
            if (!b.err)
                rc = bft_store_rewrite_add(r->store, REC_EXEC, b.p, b.len);
        }
    }
    if (rc == DSIG_OK)
        rc = bft_store_rewrite_commit(r->store);
    if (rc == DSIG_OK)
        r->st->log_syncs = bft_store_syncs(r->store);
    else
        r->st->send_failed++;
    bb_free(&b);
}

/* ---- handlers ------------------------------------------------------------------------------- */

/* A member claims view v: f+1 members above this replica's view make it fetch the NEW-VIEW. */
static void saw_view(bft_replica *r, int idx, uint64_t v)
{
    if (idx < 0 || v <= r->seen_view[idx])
        return;
    r->seen_view[idx] = v;
    size_t above = 0;
    for (size_t i = 0; i < r->c.n; i++)
        above += r->seen_view[i] > r->view;
    if (above >= r->c.f + 1)
        r->fetch_view = 1;
}

/* Is (v, s) for the current view's normal case? 1 yes; 0 refused (counted or noted). */
static int in_view(bft_replica *r, int idx, uint64_t v, uint64_t s)
{
    if (v > r->view) {
        r->st->future++;
        saw_view(r, idx, v);
        return 0;
    }
    if (v < r->view || r->vc || s <= r->h) {
        r->st->replayed++;
        return 0;
    }
    if (s - r->h > r->window) {
        r->st->future++;
        if (s > r->fetch_until)
            r->fetch_until = s - r->window;
        return 0;
    }
    return 1;
}

static void on_request(bft_replica *r, uint64_t from, bft_rd *rd)
{
    bft_core *c = &r->c;
    pb_req_ref q;
    pb_get_req(c, rd, &q);
    int ci = client_index(r, q.client);
    if (!rd_done(rd) || !q.present || ci < 0 || q.client != from) {
        r->st->malformed++;
        return;
    }
    kv_client *kc = kv_client_of(&r->kv, q.client);
    if (q.t <= kc->t) {
        r->st->replayed++;
        if (q.t == kc->t && r->reply[ci])
            bft_send_frame(c, q.client, r->reply[ci], r->reply_len[ci]); /* the reply was lost */
        return;
    }
    uint8_t d[BFT_DIGEST];
    pb_req_digest(&q, d);
    pb_pending *p = &r->pend[ci];
    if (p->used && (p->req.t > q.t || (p->req.t == q.t && memcmp(p->d, d, BFT_DIGEST) == 0))) {
        r->st->replayed++;
        return;
    }
    if (bft_verify(c, q.client, BT_PB_REQUEST, q.client, q.t, 0, d, q.csig, q.csig_len) != DSIG_OK) {
        r->st->forged++;
        return;
    }
    if (pb_req_copy(&p->req, &q) != DSIG_OK)
        return;
    p->used = 1;
    memcpy(p->d, d, BFT_DIGEST);
    p->arrived = now_ms(r);
    p->assigned_v = 0;
    pb_propose(r);
}

static void on_preprepare(bft_replica *r, bft_rd *rd)
{
    bft_core *c = &r->c;
    uint64_t v = rd_u64(rd), s = rd_u64(rd);
    pb_req_ref q;
    pb_get_req(c, rd, &q);
    bft_vref pp;
    bft_get_vote(c, rd, &pp);
    int li = bft_index(c, pp.signer);
    if (!rd_done(rd) || pp.signer != pb_leader(r, v) || (q.present && client_index(r, q.client) < 0)) {
        r->st->malformed++;
        return;
    }
    if (!in_view(r, li, v, s))
        return;
    if (pp.signer == c->self) {
        r->st->replayed++;
        return;
    }
    uint8_t d[BFT_DIGEST];
    pb_req_digest(&q, d);
    pb_entry *e = pb_entry_of(r, s, 1);
    if (!e)
        return;
    if (e->vv == v && e->have_pp) {
        if (memcmp(d, e->d, BFT_DIGEST) == 0) {
            r->st->replayed++;
            return;
        }
        if (e->proven_v == v + 1) {
            r->st->replayed++;
            return;
        }
        if (bft_verify(c, pp.signer, BT_PB_PREPREPARE, v, s, 0, d, pp.sig, pp.len) != DSIG_OK) {
            r->st->forged++;
            return;
        }
        e->proven_v = v + 1;
        bft_evidence(c, BT_PB_PREPREPARE, pp.signer, v, s, 0, e->d, e->pp.sig, e->pp.len, d, pp.sig, pp.len, v);
        pb_start_view_change(r, v + 1);
        return;
    }
    if (bft_verify(c, pp.signer, BT_PB_PREPREPARE, v, s, 0, d, pp.sig, pp.len) != DSIG_OK) {
        r->st->forged++;
        return;
    }
    if (q.present) {
        int ci = client_index(r, q.client);
        const pb_pending *p = &r->pend[ci];
        int known = p->used && p->req.t == q.t && memcmp(p->d, d, BFT_DIGEST) == 0;
        if (!known && bft_verify(c, q.client, BT_PB_REQUEST, q.client, q.t, 0, d, q.csig, q.csig_len) != DSIG_OK) {
            r->st->forged++; /* the leader proposed a request its client never signed */
            return;
        }
    }
    pb_accept_pp(r, e, v, d, &q, pp.sig, pp.len, 1);
}

/*
 * Keep a member's vote (index vi) on (type, a, b, d) once its signature verifies: the vote in votes[vi],
 * its digest in digests[vi], its bit in *mask. 1 when recorded; 0 when the signature does not verify
 * (counted as forged) or the vote cannot be stored. The callers refuse replays before (their rules
 * differ), so that a refused frame costs no signature check.
 */
static int record_vote(bft_replica *r, int type, uint64_t a, uint64_t b, const uint8_t d[BFT_DIGEST],
                       const bft_vref *vote, int vi, bft_vote *votes, uint8_t (*digests)[BFT_DIGEST],
                       uint64_t *mask)
{
    if (bft_verify(&r->c, vote->signer, type, a, b, 0, d, vote->sig, vote->len) != DSIG_OK) {
        r->st->forged++;
        return 0;
    }
    if (bft_vote_set(&votes[vi], vote->signer, vote->sig, vote->len) != DSIG_OK)
        return 0;
    memcpy(digests[vi], d, BFT_DIGEST);
    *mask |= UINT64_C(1) << vi;
    return 1;
}

static void on_prepare(bft_replica *r, bft_rd *rd)
{
    bft_core *c = &r->c;
    uint64_t v = rd_u64(rd), s = rd_u64(rd);
    const uint8_t *d = rd_take(rd, BFT_DIGEST);
    bft_vref vote;
    bft_get_vote(c, rd, &vote);
    size_t pl;
    const uint8_t *ppsig = rd_blob16(rd, 0, c->env->sig_max, &pl);
    int vi = bft_index(c, vote.signer);
    if (!rd_done(rd) || vi < 0 || vote.signer == pb_leader(r, v)) {
        r->st->malformed++;
        return;
    }
    if (!in_view(r, vi, v, s))
        return;
    pb_entry *e = pb_entry_of(r, s, 1);
    if (!e)
        return;
    if (e->vv < v)
        pb_entry_reset_votes(e, v);
    if (vi == c->self_idx || (e->prep_mask >> vi & 1)) {
        r->st->replayed++;
        return;
    }
    if (e->have_pp && memcmp(d, e->d, BFT_DIGEST) != 0) {
        /* a backup prepared another digest: the leader's signature on it proves its equivocation */
        if (e->proven_v == v + 1) {
            r->st->replayed++;
            return;
        }
        uint64_t leader = pb_leader(r, v);
        if (bft_verify(c, leader, BT_PB_PREPREPARE, v, s, 0, d, ppsig, pl) == DSIG_OK) {
            e->proven_v = v + 1;
            bft_evidence(c, BT_PB_PREPREPARE, leader, v, s, 0, e->d, e->pp.sig, e->pp.len, d, ppsig, pl, v);
            pb_start_view_change(r, v + 1);
        } else {
            r->st->forged++;
        }
        return;
    }
    if (record_vote(r, BT_PB_PREPARE, v, s, d, &vote, vi, e->prep, e->prep_d, &e->prep_mask))
        pb_check(r, e);
}

static void on_commit(bft_replica *r, bft_rd *rd)
{
    bft_core *c = &r->c;
    uint64_t v = rd_u64(rd), s = rd_u64(rd);
    const uint8_t *d = rd_take(rd, BFT_DIGEST);
    bft_vref vote;
    bft_get_vote(c, rd, &vote);
    int vi = bft_index(c, vote.signer);
    if (!rd_done(rd) || vi < 0) {
        r->st->malformed++;
        return;
    }
    if (!in_view(r, vi, v, s))
        return;
    pb_entry *e = pb_entry_of(r, s, 1);
    if (!e)
        return;
    if (e->vv < v)
        pb_entry_reset_votes(e, v);
    if (vi == c->self_idx || (e->com_mask >> vi & 1)) {
        r->st->replayed++;
        return;
    }
    if (record_vote(r, BT_PB_COMMIT, v, s, d, &vote, vi, e->com, e->com_d, &e->com_mask))
        pb_check(r, e);
}

static void on_checkpoint(bft_replica *r, bft_rd *rd)
{
    bft_core *c = &r->c;
    uint64_t s = rd_u64(rd);
    const uint8_t *d = rd_take(rd, BFT_DIGEST);
    bft_vref vote;
    bft_get_vote(c, rd, &vote);
    int vi = bft_index(c, vote.signer);
    if (!rd_done(rd) || vi < 0 || s == 0 || s % r->interval != 0) {
        r->st->malformed++;
        return;
    }
    if (s <= r->h || vi == c->self_idx || s - r->h > 2 * (uint64_t)r->window) {
        r->st->replayed++;
        return;
    }
    pb_ckpt *k = NULL, *free_slot = NULL;
    for (size_t i = 0; i < PB_CKPT_SLOTS; i++) {
        if (r->ck[i].used && r->ck[i].s == s)
            k = &r->ck[i];
        else if (!r->ck[i].used && !free_slot)
            free_slot = &r->ck[i];
    }
    if (!k) {
        if (!free_slot) {
            r->st->replayed++;
            return;
        }
        k = free_slot;
        memset(k, 0, sizeof *k);
        k->used = 1;
        k->s = s;
    }
    if (k->mask >> vi & 1) {
        r->st->replayed++;
        return;
    }
    if (!record_vote(r, BT_PB_CHECKPOINT, s, 0, d, &vote, vi, k->v, k->dd, &k->mask))
        return;
    if (tally(k->mask, k->dd, c->n, d, -1) >= 2 * c->f + 1) {
        bft_vote cert[DSIG_BFT_MAX_MEMBERS];
        size_t n = 0;
        for (size_t i = 0; i < c->n && n < 2 * c->f + 1; i++)
            if ((k->mask >> i & 1) && memcmp(k->dd[i], d, BFT_DIGEST) == 0)
                cert[n++] = k->v[i];
        uint8_t dd[BFT_DIGEST];
        memcpy(dd, d, BFT_DIGEST);
        pb_stable(r, s, dd, cert, n);
    }
}

int bft_replica_receive(bft_replica *r, uint64_t from, const uint8_t *bytes, size_t len)
{
    bft_core *c = &r->c;
    int type;
    bft_rd rd;
    if (!bft_open(c, bytes, len, &type, &rd))
        return DSIG_E_ARG;
    r->st->frames_in++;
    int member = bft_index(c, from) >= 0;
    if (!member && !(type == BT_PB_REQUEST && client_index(r, from) >= 0)) {
        r->st->malformed++;
        return DSIG_OK;
    }
    switch (type) {
    case BT_PB_REQUEST: on_request(r, from, &rd); break;
    case BT_PB_PREPREPARE: on_preprepare(r, &rd); break;
    case BT_PB_PREPARE: on_prepare(r, &rd); break;
    case BT_PB_COMMIT: on_commit(r, &rd); break;
    case BT_PB_CHECKPOINT: on_checkpoint(r, &rd); break;
    case BT_PB_VIEWCHANGE: pb_on_viewchange(r, from, bytes, len, &rd); break;
    case BT_PB_NEWVIEW: pb_on_newview(r, from, bytes, len, &rd); break;
    case BT_PB_FETCH: pb_on_fetch(r, from, &rd); break;
    case BT_PB_STATE: pb_on_state(r, from, &rd); break;
    default: r->st->malformed++; break;
    }
    pb_flush(r);
    return DSIG_OK;
}

/* ---- timers --------------------------------------------------------------------------------- */

static void retransmit(bft_replica *r, uint64_t now)
{
    bft_core *c = &r->c;
    int me = c->self_idx;
    if (!r->vc) {
        for (size_t i = 0; i < r->window; i++) {
            pb_entry *e = &r->log[i];
            if (!e->used || !e->have_pp || e->vv != r->view || e->committed || now - e->t < r->retransmit_ms)
                continue;
            e->t = now;
            r->st->retransmits++;
            if (pb_leader(r, e->vv) == c->self)
                build_pp(r, e);
            else if (e->prep_mask >> me & 1)
                build_prepare(r, e);
            else
                continue;
            pb_queue_all(r);
            if (e->sent_com) {
                build_commit(r, e);
                pb_queue_all(r);
            }
        }
    }
    for (size_t i = 0; i < PB_CKPT_SLOTS; i++) {
        pb_ckpt *k = &r->ck[i];
        if (!k->used || !k->own || !(k->mask >> me & 1) || now - k->t < 4u * r->retransmit_ms)
            continue;
        k->t = now;
        r->st->retransmits++;
        bft_begin(c, BT_PB_CHECKPOINT);
        bb_u64(&c->out, k->s);
        bb_put(&c->out, k->d, BFT_DIGEST);
        bft_put_vote(&c->out, &k->v[me]);
        pb_queue_all(r);
    }
}

/* A committed entry beyond a missing one for half a view timeout: fetch what is missing. */
static void gap_check(bft_replica *r, uint64_t now)
{
    pb_entry *next = pb_entry_of(r, r->last_exec + 1, 0);
    if (next && next->committed)
        return;
    for (size_t i = 0; i < r->window; i++) {
        pb_entry *e = &r->log[i];
        if (e->used && e->committed && e->s > r->last_exec + 1 && now - e->t_committed >= r->view_timeout_ms / 2 &&
            e->s > r->fetch_until)
            r->fetch_until = e->s;
    }
}

void bft_replica_tick(bft_replica *r)
{
    uint64_t now = now_ms(r);
    retransmit(r, now);
    pb_view_tick(r, now);
    gap_check(r, now);
    pb_fetch_tick(r, now);
    pb_propose(r);
    pb_flush(r);
}

void pb_event_view(bft_replica *r)
{
    dsig_bft_event ev = {.kind = DSIG_BFT_EV_VIEW, .view = r->view, .instance = r->last_exec};
    memcpy(ev.digest, r->kv.hist, 32);
    r->c.env->event(r->c.env->ctx, &ev);
}

void bft_replica_state(const bft_replica *r, uint64_t *seq, uint64_t *view, uint8_t digest[32])
{
    if (seq)
        *seq = r->last_exec;
    if (view)
        *view = r->view;
    if (digest)
        memcpy(digest, r->kv.hist, 32);
}

/* ---- life ----------------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int bft_replica_new(bft_replica **out, const bft_env *env, dsig_bft_stats *st, const bft_replica_cfg *cfg)
{
    bft_replica *r = dsig_calloc(1, sizeof *r);
    if (!r)
        return DSIG_E_NOMEM;
    r->st = st;
    bb_init(&r->outq);
    int rc = bft_core_init(&r->c, env, st, BFT_CLASS_PBFT, cfg->session, cfg->self, cfg->members, cfg->n);
    if (rc == DSIG_OK && r->c.self_idx < 0)
        rc = dsig_fail(DSIG_E_ARG, "bft: this node (%llu) is not a replica", (unsigned long long)cfg->self);
    if (rc == DSIG_OK && (!cfg->clients || cfg->n_clients == 0 || cfg->n_clients > DSIG_BFT_MAX_CLIENTS))
        rc = dsig_fail(DSIG_E_ARG, "bft: clients: %zu given, 1..%u needed", cfg->n_clients, DSIG_BFT_MAX_CLIENTS);
    if (rc == DSIG_OK) {
        memcpy(r->clients, cfg->clients, cfg->n_clients * sizeof *cfg->clients);
        r->n_clients = cfg->n_clients;
        qsort(r->clients, r->n_clients, sizeof *r->clients, cmp_u64);
        for (size_t i = 0; rc == DSIG_OK && i < r->n_clients; i++) {
            if (r->clients[i] == 0 || bft_index(&r->c, r->clients[i]) >= 0 ||
                (i && r->clients[i] == r->clients[i - 1]))
                rc = dsig_fail(DSIG_E_ARG, "bft: clients: id %llu repeated, 0, or a replica",
                               (unsigned long long)r->clients[i]);
        }
    }
    unsigned ci = cfg->checkpoint_interval ? cfg->checkpoint_interval : 16;
    if (rc == DSIG_OK && (ci < 2 || ci > PB_MAX_WINDOW / 2))
        rc = dsig_fail(DSIG_E_ARG, "bft: checkpoint_interval %u, 2..%u allowed", ci, PB_MAX_WINDOW / 2);
    if (rc == DSIG_OK) {
        r->interval = ci;
        r->window = 2 * ci;
        r->retransmit_ms = cfg->retransmit_ms ? cfg->retransmit_ms : 50;
        r->view_timeout_ms = cfg->view_timeout_ms ? cfg->view_timeout_ms : 1000;
        r->next_seq = 1;
        if (!(r->log = dsig_calloc(r->window, sizeof *r->log)))
            rc = DSIG_E_NOMEM;
    }
    if (rc == DSIG_OK)
        rc = kv_init(&r->kv, r->clients, r->n_clients);
    if (rc == DSIG_OK && cfg->log_path) {
        rc = bft_store_open(&r->store, cfg->log_path, r->c.session, cfg->durable);
        if (rc == DSIG_OK) {
            r->loading = 1;
            rc = bft_store_load(r->store, pb_replay, r);
            r->loading = 0;
            r->st->log_records = 0;
        }
        if (rc == DSIG_OK && (r->last_exec || r->view || r->vc || r->h)) {
            r->probes = 3; /* catch up on what happened while this replica was down */
            dsig_bft_event ev = {.kind = DSIG_BFT_EV_RECOVERED, .instance = r->last_exec, .view = r->view};
            memcpy(ev.digest, r->kv.hist, 32);
            env->event(env->ctx, &ev);
        }
    }
    if (rc != DSIG_OK) {
        bft_replica_free(r);
        return rc;
    }
    r->progress_ms = now_ms(r);
    *out = r;
    return DSIG_OK;
}

void bft_replica_free(bft_replica *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->log && i < r->window; i++)
        pb_entry_clear(&r->log[i]);
    dsig_xfree(r->log, 0);
    for (size_t i = 0; i < PB_CKPT_SLOTS; i++) {
        votes_clear(r->ck[i].v, DSIG_BFT_MAX_MEMBERS);
        dsig_xfree(r->ck[i].snap, 0);
    }
    for (size_t i = 0; i < DSIG_BFT_MAX_CLIENTS; i++) {
        pb_req_clear(&r->pend[i].req);
        dsig_xfree(r->reply[i], 0);
    }
    for (size_t i = 0; i < DSIG_BFT_MAX_MEMBERS; i++)
        dsig_xfree(r->vcs[i].frame, 0);
    votes_clear(r->h_cert, DSIG_BFT_MAX_MEMBERS);
    dsig_xfree(r->h_snap, 0);
    dsig_xfree(r->my_vc, 0);
    dsig_xfree(r->nv, 0);
    kv_free(&r->kv);
    bft_store_close(r->store);
    bb_free(&r->outq);
    bft_core_free(&r->c);
    dsig_xfree(r, 0);
}
