/*
 * src/bft/pbft_fetch.c — catching up (docs/bft.md "State transfer and restart").
 *
 * A replica that is behind (restarted; a stable checkpoint or committed sequence numbers past what it
 * executed; f+1 members in a higher view) asks one other replica at a time with FETCH(next seq, view).
 * The answer, STATE, carries only certified data (besides the responder's last executed sequence number,
 * a hint to ask again), so one correct answer suffices and a Byzantine one cannot mislead: the NEW-VIEW of the responder's view, its stable checkpoint (snapshot + 2f+1
 * CHECKPOINT signatures) when the requester is below it, and committed entries with their commit
 * certificates (2f+1 COMMITs).
 *
 * The log replay (pb_replay) rebuilds a replica at creation from its records: checkpoint, view changes
 * and views entered, its own votes (so that it never contradicts one), prepared certificates, and the
 * executions after the checkpoint.
 */
#include <string.h>

#include "bft/pbft.h"
#include "core/internal.h"

#define STATE_MAX_ENTRIES 32u

static uint64_t now_ms(bft_replica *r)
{
    return r->c.env->now_ms(r->c.env->ctx);
}

void pb_fetch_tick(bft_replica *r, uint64_t now)
{
    bft_core *c = &r->c;
    int want = r->fetch_until > r->last_exec || r->fetch_view || r->probes;
    if (!want || now - r->fetch_ms < 2u * r->retransmit_ms)
        return;
    r->fetch_ms = now;
    if (r->probes)
        r->probes--;
    /* one replica at a time, in turn: a silent or lying one only delays */
    for (size_t k = 0; k < c->n; k++) {
        uint64_t to = c->members[r->fetch_next++ % c->n];
        if (to == c->self)
            continue;
        bft_begin(c, BT_PB_FETCH);
        bb_u64(&c->out, r->last_exec + 1);
        bb_u64(&c->out, r->vc ? r->vc_target : r->view);
        r->st->fetches++;
        pb_queue(r, to);
        return;
    }
}

void pb_on_fetch(bft_replica *r, uint64_t from, bft_rd *rd)
{
    bft_core *c = &r->c;
    uint64_t next = rd_u64(rd), their_view = rd_u64(rd);
    int fi = bft_index(c, from);
    if (!rd_done(rd) || next == 0) {
        r->st->malformed++;
        return;
    }
    uint64_t now = now_ms(r);
    if (now - r->answered_ms[fi] < r->retransmit_ms) {
        r->st->replayed++;
        return;
    }
    r->answered_ms[fi] = now;
    int ckpt = next <= r->h && r->h && r->h_snap;
    uint64_t first = next > r->h ? next : r->h + 1;
    if (!ckpt && first > r->last_exec && their_view >= r->view)
        return; /* nothing it lacks */
    bft_begin(c, BT_PB_STATE);
    bb_u64(&c->out, r->view);
    bb_u64(&c->out, r->last_exec);
    bb_blob32(&c->out, r->nv, r->view && r->nv ? r->nv_len : 0);
    bb_u8(&c->out, (uint8_t)ckpt);
    if (ckpt) {
        bb_u64(&c->out, r->h);
        bb_put(&c->out, r->h_d, BFT_DIGEST);
        bb_blob32(&c->out, r->h_snap, r->h_snap_len);
        bft_put_cert(&c->out, r->h_cert, r->h_n);
    }
    size_t n_at = c->out.len, n = 0;
    bb_u8(&c->out, 0);
    for (uint64_t s = first; s <= r->last_exec && n < STATE_MAX_ENTRIES; s++) {
        pb_entry *e = pb_entry_of(r, s, 0);
        if (!e || !e->committed || c->out.len > BFT_FRAME_MAX / 2)
            break;
        bb_u64(&c->out, s);
        bb_u64(&c->out, e->cc_v);
        pb_put_req(&c->out, &e->cc_req);
        bft_put_cert(&c->out, e->cc, e->cc_n);
        n++;
    }
    if (c->out.err)
        return;
    c->out.p[n_at] = (uint8_t)n;
    pb_queue(r, from);
}

void pb_install_snapshot(bft_replica *r, uint64_t s, const uint8_t d[32], const uint8_t *snap, size_t len,
                         const bft_vref *cert, size_t n)
{
    if (kv_restore(&r->kv, snap, len) != 0) {
        r->st->malformed++;
        return;
    }
    uint64_t before = r->last_exec;
    r->last_exec = s;
    r->progress_ms = now_ms(r);
    if (!r->loading)
        r->st->fetched += s - before;
    for (size_t i = 0; i < r->n_clients; i++) {
        kv_client *kc = kv_client_of(&r->kv, r->clients[i]);
        if (r->pend[i].used && r->pend[i].req.t <= kc->t) {
            pb_req_clear(&r->pend[i].req);
            memset(&r->pend[i], 0, sizeof r->pend[i]);
        }
        dsig_xfree(r->reply[i], 0);
        r->reply[i] = NULL;
    }
    bft_vote cv[DSIG_BFT_MAX_MEMBERS] = {{0}};
    for (size_t i = 0; i < n; i++)
        bft_vote_set(&cv[i], cert[i].signer, cert[i].sig, cert[i].len);
    uint8_t *copy = dsig_malloc(len ? len : 1);
    if (s > r->h) {
        pb_stable(r, s, d, cv, n); /* no own snapshot there: it takes this one below */
    }
    if (copy && s == r->h) {
        memcpy(copy, snap, len);
        dsig_xfree(r->h_snap, 0);
        r->h_snap = copy;
        r->h_snap_len = len;
        copy = NULL;
        pb_compact(r);
    }
    dsig_xfree(copy, 0);
    for (size_t i = 0; i < n; i++)
        bft_vote_clear(&cv[i]);
}

void pb_on_state(bft_replica *r, uint64_t from, bft_rd *rd)
{
    bft_core *c = &r->c;
    (void)from;
    uint64_t v = rd_u64(rd), their_exec = rd_u64(rd);
    size_t nvl;
    const uint8_t *nv = rd_blob32(rd, 0, BFT_FRAME_MAX, &nvl);
    int ckpt = rd_u8(rd);
    if (rd->bad || ckpt > 1) {
        r->st->malformed++;
        return;
    }
    if (nvl && v > (r->vc ? r->vc_target - 1 : r->view))
        (void)pb_apply_newview(r, nv, nvl);
    if (ckpt) {
        uint64_t s = rd_u64(rd);
        const uint8_t *d = rd_take(rd, BFT_DIGEST);
        size_t sl, n = 0;
        const uint8_t *snap = rd_blob32(rd, 0, BFT_FRAME_MAX, &sl);
        bft_vref cert[DSIG_BFT_MAX_MEMBERS];
        if (bft_get_cert(c, rd, cert, DSIG_BFT_MAX_MEMBERS, &n) != 0 || s == 0 || s % r->interval) {
            r->st->malformed++;
            return;
        }
        if (s > r->last_exec) {
            uint8_t sd[BFT_DIGEST];
            kv_digest(snap, sl, sd);
            int vr = memcmp(sd, d, BFT_DIGEST) == 0 ? pb_check_ckpt_cert(r, s, d, cert, n) : DSIG_E_FORMAT;
            if (vr != DSIG_OK) {
                bft_count_refusal(c, vr);
                return;
            }
            uint8_t dd[BFT_DIGEST];
            memcpy(dd, d, BFT_DIGEST);
            pb_install_snapshot(r, s, dd, snap, sl, cert, n);
        } else {
            r->st->replayed++;
        }
    }
    size_t ne = rd_u8(rd);
    if (rd->bad || ne > STATE_MAX_ENTRIES) {
        r->st->malformed++;
        return;
    }
    for (size_t i = 0; i < ne; i++) {
        uint64_t s = rd_u64(rd), cv = rd_u64(rd);
        pb_req_ref q;
        size_t n = 0;
        bft_vref cert[DSIG_BFT_MAX_MEMBERS];
        if (pb_get_req(c, rd, &q) != 0 || bft_get_cert(c, rd, cert, DSIG_BFT_MAX_MEMBERS, &n) != 0) {
            r->st->malformed++;
            return;
        }
        if (s != r->last_exec + 1) {
            r->st->replayed++;
            continue;
        }
        pb_entry *e = pb_entry_of(r, s, 1);
        if (!e)
            return;
        uint8_t d[BFT_DIGEST];
        pb_req_digest(&q, d);
        int vr = bft_cert_verify(c, cert, n, 2 * c->f + 1, 0, BT_PB_COMMIT, cv, s, 0, d, NULL);
        if (vr != DSIG_OK) {
            bft_count_refusal(c, vr);
            return;
        }
        if (pb_req_copy(&e->cc_req, &q) != DSIG_OK)
            return;
        for (size_t j = 0; j < DSIG_BFT_MAX_MEMBERS; j++)
            bft_vote_clear(&e->cc[j]);
        for (size_t j = 0; j < n; j++)
            bft_vote_set(&e->cc[j], cert[j].signer, cert[j].sig, cert[j].len);
        e->cc_n = n;
        e->cc_v = cv;
        memcpy(e->cc_d, d, BFT_DIGEST);
        e->committed = 1;
        r->st->fetched++;
        pb_execute_entry(r, e);
    }
    if (!rd_done(rd))
        r->st->malformed++;
    pb_try_execute(r);
    /* the responder is further (more than one answer holds): go on asking. Not certified, so it only
     * costs a few more FETCHes when a Byzantine responder exaggerates. */
    if (their_exec > r->last_exec && their_exec - r->last_exec <= 4u * r->window && their_exec > r->fetch_until)
        r->fetch_until = their_exec;
}

/* ---- log replay ----------------------------------------------------------------------------- */

/* Copy a certificate out of a record. */
static void take_cert(bft_vote *dst, const bft_vref *v, size_t n)
{
    for (size_t i = 0; i < DSIG_BFT_MAX_MEMBERS; i++)
        bft_vote_clear(&dst[i]);
    for (size_t i = 0; i < n; i++)
        bft_vote_set(&dst[i], v[i].signer, v[i].sig, v[i].len);
}

int pb_replay(void *arg, int type, const uint8_t *p, size_t len)
{
    bft_replica *r = arg;
    bft_core *c = &r->c;
    bft_rd rd;
    rd_init(&rd, p, len);
    switch (type) {
    case REC_CKPT: {
        uint64_t s = rd_u64(&rd);
        const uint8_t *d = rd_take(&rd, BFT_DIGEST);
        size_t sl, n = 0;
        const uint8_t *snap = rd_blob32(&rd, 0, BFT_FRAME_MAX, &sl);
        bft_vref cert[DSIG_BFT_MAX_MEMBERS];
        if (bft_get_cert(c, &rd, cert, DSIG_BFT_MAX_MEMBERS, &n) != 0 || !rd_done(&rd))
            return 1;
        uint8_t sd[BFT_DIGEST], dd[BFT_DIGEST];
        kv_digest(snap, sl, sd);
        if (memcmp(sd, d, BFT_DIGEST) != 0)
            return 1;
        memcpy(dd, d, BFT_DIGEST);
        pb_install_snapshot(r, s, dd, snap, sl, cert, n);
        return r->last_exec == s ? 0 : 1;
    }
    case REC_VIEW: {
        uint64_t v = rd_u64(&rd);
        int entered = rd_u8(&rd);
        size_t fl;
        const uint8_t *f = rd_blob32(&rd, 0, BFT_FRAME_MAX, &fl);
        if (!rd_done(&rd) || entered > 1)
            return 1;
        uint8_t *copy = fl ? dsig_malloc(fl) : NULL;
        if (fl && !copy)
            return DSIG_E_NOMEM;
        if (fl)
            memcpy(copy, f, fl);
        if (entered) {
            if (v >= r->view) {
                r->view = v;
                r->vc = 0;
                dsig_xfree(r->nv, 0);
                r->nv = copy;
                r->nv_len = fl;
                for (size_t i = 0; i < r->window; i++)
                    if (r->log[i].used && r->log[i].vv < v)
                        pb_entry_reset_votes(&r->log[i], v);
                return 0;
            }
        } else if (v > r->view && (!r->vc || v > r->vc_target)) {
            r->vc = 1;
            r->vc_target = v;
            dsig_xfree(r->my_vc, 0);
            r->my_vc = copy;
            r->my_vc_len = fl;
            return 0;
        }
        dsig_xfree(copy, 0);
        return 0;
    }
    case REC_VOTE: {
        uint64_t v = rd_u64(&rd), s = rd_u64(&rd);
        pb_req_ref q;
        size_t pl, ol;
        pb_get_req(c, &rd, &q);
        const uint8_t *pp = rd_blob16(&rd, 0, DSIG_BFT_MAX_SIG, &pl);
        const uint8_t *own = rd_blob16(&rd, 0, DSIG_BFT_MAX_SIG, &ol);
        if (!rd_done(&rd))
            return 1;
        pb_entry *e = pb_entry_of(r, s, 1);
        if (!e || v < e->vv)
            return 0;
        if (v > e->vv)
            pb_entry_reset_votes(e, v);
        uint8_t d[BFT_DIGEST];
        pb_req_digest(&q, d);
        if (pb_req_copy(&e->req, &q) != DSIG_OK || bft_vote_set(&e->pp, pb_leader(r, v), pp, pl) != DSIG_OK)
            return DSIG_E_NOMEM;
        memcpy(e->d, d, BFT_DIGEST);
        e->have_pp = 1;
        if (ol) {
            int me = c->self_idx;
            bft_vote_set(&e->prep[me], c->self, own, ol);
            memcpy(e->prep_d[me], d, BFT_DIGEST);
            e->prep_mask |= UINT64_C(1) << me;
        }
        if (pb_leader(r, v) == c->self && s >= r->next_seq)
            r->next_seq = s + 1;
        return 0;
    }
    case REC_PCERT: {
        uint64_t v = rd_u64(&rd), s = rd_u64(&rd);
        pb_req_ref q;
        size_t pl, ol, n = 0;
        pb_get_req(c, &rd, &q);
        const uint8_t *pp = rd_blob16(&rd, 0, DSIG_BFT_MAX_SIG, &pl);
        bft_vref cert[DSIG_BFT_MAX_MEMBERS];
        if (bft_get_cert(c, &rd, cert, DSIG_BFT_MAX_MEMBERS, &n) != 0)
            return 1;
        const uint8_t *own = rd_blob16(&rd, 0, DSIG_BFT_MAX_SIG, &ol);
        if (!rd_done(&rd))
            return 1;
        pb_entry *e = pb_entry_of(r, s, 1);
        if (!e)
            return 0;
        if (pb_req_copy(&e->pc_req, &q) != DSIG_OK || bft_vote_set(&e->pc_pp, pb_leader(r, v), pp, pl) != DSIG_OK)
            return DSIG_E_NOMEM;
        take_cert(e->pc_prep, cert, n);
        e->pc_n = n;
        e->pc_v = v;
        pb_req_digest(&q, e->pc_d);
        e->have_pc = 1;
        if (e->vv == v && e->have_pp && memcmp(e->d, e->pc_d, BFT_DIGEST) == 0) {
            e->prepared = 1;
            if (ol) {
                int me = c->self_idx;
                bft_vote_set(&e->com[me], c->self, own, ol);
                memcpy(e->com_d[me], e->d, BFT_DIGEST);
                e->com_mask |= UINT64_C(1) << me;
                e->sent_com = 1;
            }
        }
        return 0;
    }
    case REC_EXEC: {
        uint64_t s = rd_u64(&rd), v = rd_u64(&rd);
        pb_req_ref q;
        size_t n = 0;
        bft_vref cert[DSIG_BFT_MAX_MEMBERS];
        pb_get_req(c, &rd, &q);
        if (bft_get_cert(c, &rd, cert, DSIG_BFT_MAX_MEMBERS, &n) != 0 || !rd_done(&rd))
            return 1;
        if (s <= r->last_exec)
            return 0;
        if (s != r->last_exec + 1)
            return 1; /* an execution without its predecessor: not a log this code wrote */
        pb_entry *e = pb_entry_of(r, s, 1);
        if (!e || pb_req_copy(&e->cc_req, &q) != DSIG_OK)
            return 1;
        take_cert(e->cc, cert, n);
        e->cc_n = n;
        e->cc_v = v;
        pb_req_digest(&q, e->cc_d);
        e->committed = 1;
        pb_execute_entry(r, e);
        return 0;
    }
    default:
        return 1;
    }
}
