/*
 * src/bft/pbft_view.c — view change (docs/bft.md "View change").
 *
 * A backup whose pending request is not executed within the view timeout (doubled per view that did
 * not start), or that proved its leader's equivocation, stops taking part in view v and signs
 * VIEW-CHANGE(v+1, h, body digest): its stable checkpoint h with the 2f+1 CHECKPOINT signatures that
 * certify it, and, for every sequence number above h it prepared, the prepared certificate of the
 * highest view (PRE-PREPARE + 2f PREPAREs). A replica that sees f+1 VIEW-CHANGEs for views above its
 * own joins the smallest of them. The leader of v+1 collects 2f+1 and signs NEW-VIEW: those VIEW-CHANGEs
 * and, for each sequence number from the highest certified checkpoint min-s to the highest prepared
 * max-s, a PRE-PREPARE(v+1, s, d) for the prepared request of the highest view (the null request where
 * none). Every replica checks each certificate and recomputes that set before it enters v+1.
 *
 * Safety across views: a request committed in view v at s was prepared by f+1 correct replicas; any
 * 2f+1 VIEW-CHANGEs include one of them, whose certificate for s is of view >= v, and no certificate of
 * a higher view for another digest can exist; so NEW-VIEW re-proposes it. After sending
 * VIEW-CHANGE(x) a replica never takes part in a view below x.
 */
#include <stdlib.h>
#include <string.h>

#include "bft/pbft.h"
#include "core/internal.h"

typedef struct vc_pc {
    uint64_t v, s;
    uint8_t d[BFT_DIGEST];
    pb_req_ref req;
    const uint8_t *pp;
    size_t pp_len;
    bft_vref prep[DSIG_BFT_MAX_MEMBERS];
    size_t n;
} vc_pc;

typedef struct vc_info {
    uint64_t v, h;
    const uint8_t *hd;
    bft_vref ck[DSIG_BFT_MAX_MEMBERS];
    size_t nck, np;
    vc_pc pc[PB_MAX_WINDOW];
    bft_vref vote;
    const uint8_t *body;
    size_t body_len;
} vc_info;

static const uint8_t zero32[32];

static uint64_t now_ms(bft_replica *r)
{
    return r->c.env->now_ms(r->c.env->ctx);
}

static int client_known(const bft_replica *r, uint64_t id)
{
    for (size_t i = 0; i < r->n_clients; i++)
        if (r->clients[i] == id)
            return 1;
    return 0;
}

/* Parse and check the layout of a VIEW-CHANGE frame. 0 or -1 (malformed). */
static int vc_parse(bft_replica *r, const uint8_t *frame, size_t len, vc_info *vi)
{
    bft_core *c = &r->c;
    int type;
    bft_rd rd;
    if (!bft_open(c, frame, len, &type, &rd) || type != BT_PB_VIEWCHANGE)
        return -1;
    vi->body = rd.p;
    vi->v = rd_u64(&rd);
    vi->h = rd_u64(&rd);
    vi->hd = rd_take(&rd, BFT_DIGEST);
    if (bft_get_cert(c, &rd, vi->ck, DSIG_BFT_MAX_MEMBERS, &vi->nck) != 0)
        return -1;
    vi->np = rd_u8(&rd);
    if (rd.bad || vi->np > r->window || vi->h % r->interval != 0 ||
        (vi->h == 0 && (vi->nck || memcmp(vi->hd, zero32, 32) != 0)))
        return -1;
    for (size_t i = 0; i < vi->np; i++) {
        vc_pc *p = &vi->pc[i];
        p->v = rd_u64(&rd);
        p->s = rd_u64(&rd);
        if (pb_get_req(c, &rd, &p->req) != 0)
            return -1;
        p->pp = rd_blob16(&rd, 0, c->env->sig_max, &p->pp_len);
        if (bft_get_cert(c, &rd, p->prep, DSIG_BFT_MAX_MEMBERS, &p->n) != 0)
            return -1;
        if (p->v >= vi->v || p->s <= vi->h || p->s - vi->h > r->window || (i && p->s <= vi->pc[i - 1].s) ||
            (p->req.present && !client_known(r, p->req.client)))
            return -1;
        pb_req_digest(&p->req, p->d);
    }
    vi->body_len = rd.off;
    if (bft_get_vote(c, &rd, &vi->vote) != 0 || !rd_done(&rd) || bft_index(c, vi->vote.signer) < 0)
        return -1;
    return 0;
}

int pb_check_ckpt_cert(bft_replica *r, uint64_t s, const uint8_t d[32], const bft_vref *v, size_t n)
{
    return bft_cert_verify(&r->c, v, n, 2 * r->c.f + 1, 0, BT_PB_CHECKPOINT, s, 0, 0, d, NULL);
}

/* Every signature of a parsed VIEW-CHANGE. DSIG_OK, DSIG_E_FORMAT or DSIG_E_VERIFY. */
static int vc_verify(bft_replica *r, const vc_info *vi)
{
    bft_core *c = &r->c;
    uint8_t bd[BFT_DIGEST];
    bft_hash("DSig-bft view-change v1", vi->body, vi->body_len, NULL, 0, bd);
    if (bft_verify(c, vi->vote.signer, BT_PB_VIEWCHANGE, vi->v, vi->h, 0, bd, vi->vote.sig, vi->vote.len) != DSIG_OK)
        return DSIG_E_VERIFY;
    if (vi->h) {
        int rc = pb_check_ckpt_cert(r, vi->h, vi->hd, vi->ck, vi->nck);
        if (rc != DSIG_OK)
            return rc;
    }
    for (size_t i = 0; i < vi->np; i++) {
        const vc_pc *p = &vi->pc[i];
        uint64_t leader = pb_leader(r, p->v);
        if (bft_verify(c, leader, BT_PB_PREPREPARE, p->v, p->s, 0, p->d, p->pp, p->pp_len) != DSIG_OK)
            return DSIG_E_VERIFY;
        int rc = bft_cert_verify(c, p->prep, p->n, 2 * c->f, UINT64_C(1) << bft_index(c, leader),
                                 BT_PB_PREPARE, p->v, p->s, 0, p->d, NULL);
        if (rc != DSIG_OK)
            return rc;
    }
    return DSIG_OK;
}

/* The timer of a view being changed to starts once 2f+1 replicas (this one included) want it: a replica
 * alone ahead must not run on to later views that the others never reach (PBFT's liveness rule). */
static void vc_quorum_check(bft_replica *r)
{
    if (!r->vc || r->vc_quorum)
        return;
    size_t k = 0;
    for (size_t i = 0; i < r->c.n; i++)
        k += r->vcs[i].v == r->vc_target;
    if (k >= 2 * r->c.f + 1) {
        r->vc_quorum = 1;
        r->vc_since = now_ms(r);
    }
}

void pb_start_view_change(bft_replica *r, uint64_t v)
{
    bft_core *c = &r->c;
    if (r->loading || (r->vc ? v <= r->vc_target : v <= r->view))
        return;
    uint64_t now = now_ms(r);
    r->vc = 1;
    r->vc_target = v;
    r->vc_quorum = 0;
    r->vc_since = r->vc_sent = now;
    r->st->view_changes++;
    bft_begin(c, BT_PB_VIEWCHANGE);
    size_t body_at = c->out.len;
    bb_u64(&c->out, v);
    bb_u64(&c->out, r->h);
    bb_put(&c->out, r->h ? r->h_d : zero32, BFT_DIGEST);
    bft_put_cert(&c->out, r->h_cert, r->h ? r->h_n : 0);
    size_t np_at = c->out.len, np = 0;
    bb_u8(&c->out, 0);
    for (uint64_t s = r->h + 1; s <= r->h + r->window; s++) {
        pb_entry *e = pb_entry_of(r, s, 0);
        if (!e || !e->have_pc)
            continue;
        bb_u64(&c->out, e->pc_v);
        bb_u64(&c->out, s);
        pb_put_req(&c->out, &e->pc_req);
        bb_blob16(&c->out, e->pc_pp.sig, e->pc_pp.len);
        bft_put_cert(&c->out, e->pc_prep, e->pc_n);
        np++;
    }
    if (c->out.err)
        return;
    c->out.p[np_at] = (uint8_t)np;
    uint8_t bd[BFT_DIGEST];
    bft_hash("DSig-bft view-change v1", c->out.p + body_at, c->out.len - body_at, NULL, 0, bd);
    bft_vote vote = {0};
    if (bft_sign(c, BT_PB_VIEWCHANGE, v, r->h, 0, bd, &vote) != DSIG_OK)
        return;
    bft_put_vote(&c->out, &vote);
    bft_vote_clear(&vote);
    if (c->out.err)
        return;
    uint8_t *copy = dsig_malloc(c->out.len), *copy2 = dsig_malloc(c->out.len);
    if (!copy || !copy2) {
        dsig_xfree(copy, 0);
        dsig_xfree(copy2, 0);
        return;
    }
    memcpy(copy, c->out.p, c->out.len);
    memcpy(copy2, c->out.p, c->out.len);
    dsig_xfree(r->my_vc, 0);
    r->my_vc = copy;
    r->my_vc_len = c->out.len;
    pb_vc *mine = &r->vcs[c->self_idx];
    dsig_xfree(mine->frame, 0);
    mine->frame = copy2;
    mine->len = c->out.len;
    mine->v = v;
    if (r->store) {
        bft_buf b;
        bb_init(&b);
        bb_u64(&b, v);
        bb_u8(&b, 0);
        bb_blob32(&b, r->my_vc, r->my_vc_len);
        pb_persist(r, REC_VIEW, &b);
        bb_free(&b);
    }
    pb_queue_all(r);
    vc_quorum_check(r);
    pb_try_newview(r, v); /* the leader of v may be this replica */
}

/* The NEW-VIEW's set O: from min-s (the highest certified checkpoint) to max-s, the prepared request of
 * the highest view, else the null request. best[i] is the certificate chosen for min_s + 1 + i (NULL:
 * null). Returns the number of entries. */
static size_t compute_o(bft_replica *r, vc_info *const *set, size_t k, const vc_info **ckv, uint64_t *min_s,
                        const vc_pc **best)
{
    uint64_t lo = 0;
    const vc_info *from = NULL;
    for (size_t i = 0; i < k; i++)
        if (!from || set[i]->h > lo) {
            lo = set[i]->h;
            from = set[i];
        }
    uint64_t hi = lo;
    memset(best, 0, r->window * sizeof *best);
    for (size_t i = 0; i < k; i++)
        for (size_t j = 0; j < set[i]->np; j++) {
            const vc_pc *p = &set[i]->pc[j];
            if (p->s <= lo || p->s - lo > r->window)
                continue;
            const vc_pc **b = &best[p->s - lo - 1];
            if (!*b || p->v > (*b)->v)
                *b = p;
            if (p->s > hi)
                hi = p->s;
        }
    *ckv = from;
    *min_s = lo;
    return (size_t)(hi - lo);
}

static void enter_view(bft_replica *r, uint64_t v, const uint8_t *frame, size_t len, const vc_info *ckv,
                       uint64_t min_s, size_t no, const uint64_t *os, const uint8_t (*od)[BFT_DIGEST],
                       const pb_req_ref *oq, const bft_vref *opp)
{
    bft_core *c = &r->c;
    uint64_t now = now_ms(r);
    uint8_t *copy = dsig_malloc(len);
    if (!copy)
        return;
    memcpy(copy, frame, len);
    dsig_xfree(r->nv, 0);
    r->nv = copy;
    r->nv_len = len;
    r->view = v;
    r->vc = 0;
    r->progress_ms = now;
    r->fetch_view = 0;
    dsig_xfree(r->my_vc, 0);
    r->my_vc = NULL;
    if (r->store && !r->loading) {
        bft_buf b;
        bb_init(&b);
        bb_u64(&b, v);
        bb_u8(&b, 1);
        bb_blob32(&b, frame, len);
        pb_persist(r, REC_VIEW, &b);
        bb_free(&b);
    }
    if (min_s > r->h && ckv) {
        bft_vote cert[DSIG_BFT_MAX_MEMBERS] = {{0}};
        for (size_t i = 0; i < ckv->nck; i++)
            bft_vote_set(&cert[i], ckv->ck[i].signer, ckv->ck[i].sig, ckv->ck[i].len);
        uint8_t d[BFT_DIGEST];
        memcpy(d, ckv->hd, BFT_DIGEST);
        pb_stable(r, min_s, d, cert, ckv->nck);
        for (size_t i = 0; i < ckv->nck; i++)
            bft_vote_clear(&cert[i]);
    }
    for (size_t i = 0; i < r->window; i++)
        if (r->log[i].used)
            pb_entry_reset_votes(&r->log[i], v);
    int leader = pb_leader(r, v) == c->self;
    uint64_t max_s = min_s > r->h ? min_s : r->h;
    for (size_t i = 0; i < no; i++) {
        if (os[i] > max_s)
            max_s = os[i];
        pb_entry *e = pb_entry_of(r, os[i], 1);
        if (e)
            pb_accept_pp(r, e, v, od[i], &oq[i], opp[i].sig, opp[i].len, !leader);
    }
    r->next_seq = max_s + 1;
    for (size_t i = 0; i < r->n_clients; i++)
        if (r->pend[i].used) {
            r->pend[i].assigned_v = 0;
            r->pend[i].arrived = now;
        }
    for (size_t i = 0; i < c->n; i++)
        if (r->vcs[i].v <= v) {
            dsig_xfree(r->vcs[i].frame, 0);
            memset(&r->vcs[i], 0, sizeof r->vcs[i]);
        }
    if (!r->loading) {
        r->st->views_entered++;
        pb_event_view(r);
    }
    pb_try_execute(r);
}

/* Verify a NEW-VIEW frame (all of it unless `trusted`: built here) and enter its view. */
static int apply_newview(bft_replica *r, const uint8_t *frame, size_t len, int trusted)
{
    bft_core *c = &r->c;
    int type, rc = -1;
    bft_rd rd;
    if (!bft_open(c, frame, len, &type, &rd) || type != BT_PB_NEWVIEW) {
        r->st->malformed++;
        return -1;
    }
    const uint8_t *body = rd.p;
    uint64_t v = rd_u64(&rd);
    size_t nvc = rd_u8(&rd);
    vc_info **set = dsig_calloc(DSIG_BFT_MAX_MEMBERS, sizeof *set);
    const vc_pc **best = dsig_calloc(r->window, sizeof *best);
    uint64_t *os = dsig_calloc(r->window, sizeof *os);
    uint8_t (*od)[BFT_DIGEST] = dsig_calloc(r->window, BFT_DIGEST);
    pb_req_ref *oq = dsig_calloc(r->window, sizeof *oq);
    bft_vref *opp = dsig_calloc(r->window, sizeof *opp);
    size_t k = 0, no = 0;
    uint64_t seen = 0;
    int bad = !set || !best || !os || !od || !oq || !opp || rd.bad || nvc > c->n || nvc < 2 * c->f + 1;
    for (size_t i = 0; !bad && i < nvc; i++) {
        size_t vl;
        const uint8_t *vf = rd_blob32(&rd, BFT_HDR_BYTES, BFT_FRAME_MAX, &vl);
        set[k] = vf ? dsig_calloc(1, sizeof **set) : NULL;
        if (!set[k] || vc_parse(r, vf, vl, set[k]) != 0 || set[k]->v != v) {
            bad = 1;
            k += set[k] != NULL;
            break;
        }
        int idx = bft_index(c, set[k]->vote.signer);
        if (seen >> idx & 1)
            bad = 1;
        seen |= UINT64_C(1) << idx;
        k++;
    }
    if (!bad) {
        no = rd_u16(&rd);
        if (rd.bad || no > r->window)
            bad = 1;
        for (size_t i = 0; !bad && i < no; i++) {
            os[i] = rd_u64(&rd);
            if (pb_get_req(c, &rd, &oq[i]) != 0)
                bad = 1;
            opp[i].signer = pb_leader(r, v);
            opp[i].sig = rd_blob16(&rd, 0, c->env->sig_max, &opp[i].len);
            pb_req_digest(&oq[i], od[i]);
        }
    }
    size_t body_len = rd.off;
    bft_vref vote;
    if (!bad && (bft_get_vote(c, &rd, &vote) != 0 || !rd_done(&rd) || vote.signer != pb_leader(r, v)))
        bad = 1;
    if (bad) {
        r->st->malformed++;
        goto out;
    }
    if (r->vc ? v < r->vc_target : v <= r->view) {
        r->st->replayed++;
        goto out;
    }
    const vc_info *ckv = NULL;
    uint64_t min_s = 0;
    size_t want = compute_o(r, set, k, &ckv, &min_s, best);
    if (want != no) {
        r->st->malformed++;
        goto out;
    }
    for (size_t i = 0; i < no; i++) {
        uint8_t d[BFT_DIGEST];
        if (best[i])
            memcpy(d, best[i]->d, BFT_DIGEST);
        else
            bft_null_digest(d);
        if (os[i] != min_s + 1 + i || memcmp(d, od[i], BFT_DIGEST) != 0) {
            r->st->malformed++;
            goto out;
        }
    }
    if (!trusted) {
        uint8_t bd[BFT_DIGEST];
        bft_hash("DSig-bft new-view v1", body, body_len, NULL, 0, bd);
        int vr = bft_verify(c, vote.signer, BT_PB_NEWVIEW, v, 0, 0, bd, vote.sig, vote.len);
        for (size_t i = 0; vr == DSIG_OK && i < k; i++) {
            vr = vc_verify(r, set[i]);
        }
        for (size_t i = 0; vr == DSIG_OK && i < no; i++)
            if (bft_verify(c, opp[i].signer, BT_PB_PREPREPARE, v, os[i], 0, od[i], opp[i].sig, opp[i].len) != DSIG_OK)
                vr = DSIG_E_VERIFY;
        if (vr != DSIG_OK) {
            bft_count_refusal(c, vr);
            goto out;
        }
    }
    enter_view(r, v, frame, len, ckv, min_s, no, os, (const uint8_t(*)[BFT_DIGEST])od, oq, opp);
    rc = 0;
out:
    for (size_t i = 0; set && i < k; i++)
        dsig_xfree(set[i], 0);
    dsig_xfree(set, 0);
    dsig_xfree(best, 0);
    dsig_xfree(os, 0);
    dsig_xfree(od, 0);
    dsig_xfree(oq, 0);
    dsig_xfree(opp, 0);
    return rc;
}

int pb_apply_newview(bft_replica *r, const uint8_t *frame, size_t len)
{
    return apply_newview(r, frame, len, 0);
}

/* As the leader of v with 2f+1 VIEW-CHANGEs for v: sign NEW-VIEW, send it, enter v. */
void pb_try_newview(bft_replica *r, uint64_t v)
{
    bft_core *c = &r->c;
    if (r->loading || pb_leader(r, v) != c->self || !r->vc || r->vc_target != v || r->nv_sent_view >= v)
        return;
    size_t have = 0;
    for (size_t i = 0; i < c->n; i++)
        have += r->vcs[i].v == v && r->vcs[i].frame;
    if (have < 2 * c->f + 1)
        return;
    vc_info **set = dsig_calloc(DSIG_BFT_MAX_MEMBERS, sizeof *set);
    const vc_pc **best = dsig_calloc(r->window, sizeof *best);
    size_t k = 0;
    int ok = set && best;
    for (size_t i = 0; ok && i < c->n && k < 2 * c->f + 1; i++) {
        if (r->vcs[i].v != v || !r->vcs[i].frame)
            continue;
        set[k] = dsig_calloc(1, sizeof **set);
        if (!set[k] || vc_parse(r, r->vcs[i].frame, r->vcs[i].len, set[k]) != 0)
            ok = 0;
        k++;
    }
    bft_buf f;
    bb_init(&f);
    if (ok) {
        const vc_info *ckv;
        uint64_t min_s;
        size_t no = compute_o(r, set, k, &ckv, &min_s, best);
        bft_begin(c, BT_PB_NEWVIEW);
        bb_put(&f, c->out.p, c->out.len);
        size_t body_at = f.len;
        bb_u64(&f, v);
        bb_u8(&f, (uint8_t)k);
        for (size_t i = 0; i < k; i++) {
            int idx = bft_index(c, set[i]->vote.signer);
            bb_blob32(&f, r->vcs[idx].frame, r->vcs[idx].len);
        }
        bb_u16(&f, (uint16_t)no);
        for (size_t i = 0; ok && i < no; i++) {
            pb_req_ref q = {0};
            uint8_t d[BFT_DIGEST];
            if (best[i])
                q = best[i]->req;
            pb_req_digest(&q, d);
            bft_vote pp = {0};
            if (bft_sign(c, BT_PB_PREPREPARE, v, min_s + 1 + i, 0, d, &pp) != DSIG_OK) {
                ok = 0;
                break;
            }
            bb_u64(&f, min_s + 1 + i);
            pb_put_req_ref(&f, &q);
            bb_blob16(&f, pp.sig, pp.len);
            bft_vote_clear(&pp);
        }
        uint8_t bd[BFT_DIGEST];
        bft_hash("DSig-bft new-view v1", f.p + body_at, f.len - body_at, NULL, 0, bd);
        bft_vote vote = {0};
        if (ok && !f.err && bft_sign(c, BT_PB_NEWVIEW, v, 0, 0, bd, &vote) == DSIG_OK) {
            bft_put_vote(&f, &vote);
            bft_vote_clear(&vote);
            r->nv_sent_view = v;
        } else {
            ok = 0;
        }
    }
    for (size_t i = 0; set && i < k; i++)
        dsig_xfree(set[i], 0);
    dsig_xfree(set, 0);
    dsig_xfree(best, 0);
    if (ok && !f.err) {
        bb_reset(&c->out);
        bb_put(&c->out, f.p, f.len);
        pb_queue_all(r);
        (void)apply_newview(r, f.p, f.len, 1);
    }
    bb_free(&f);
}

void pb_on_viewchange(bft_replica *r, uint64_t from, const uint8_t *frame, size_t len, bft_rd *rd)
{
    bft_core *c = &r->c;
    (void)rd;
    vc_info *vi = dsig_calloc(1, sizeof *vi);
    if (!vi)
        return;
    if (vc_parse(r, frame, len, vi) != 0) {
        r->st->malformed++;
        dsig_xfree(vi, 0);
        return;
    }
    int idx = bft_index(c, vi->vote.signer);
    uint64_t now = now_ms(r);
    if (idx == c->self_idx) {
        r->st->replayed++;
    } else if (!r->vc && vi->v <= r->view) {
        /* the sender is behind: the NEW-VIEW of this view tells it where everyone is */
        r->st->replayed++;
        int fi = bft_index(c, from);
        if (r->nv && fi >= 0 && now - r->nv_answered[fi] >= 4u * r->retransmit_ms) {
            r->nv_answered[fi] = now;
            bft_send_frame(c, from, r->nv, r->nv_len);
        }
    } else if (r->vcs[idx].v >= vi->v) {
        r->st->replayed++;
    } else {
        int vr = vc_verify(r, vi);
        if (vr != DSIG_OK) {
            bft_count_refusal(c, vr);
        } else {
            uint8_t *copy = dsig_malloc(len);
            if (copy) {
                memcpy(copy, frame, len);
                dsig_xfree(r->vcs[idx].frame, 0);
                r->vcs[idx].frame = copy;
                r->vcs[idx].len = len;
                r->vcs[idx].v = vi->v;
            }
            if (vi->v > r->seen_view[idx])
                r->seen_view[idx] = vi->v;
            /* f+1 replicas want a view above ours: join the smallest of the f+1 highest */
            uint64_t cur = r->vc ? r->vc_target : r->view, above[DSIG_BFT_MAX_MEMBERS];
            size_t na = 0;
            for (size_t i = 0; i < c->n; i++)
                if ((int)i != c->self_idx && r->vcs[i].v > cur)
                    above[na++] = r->vcs[i].v;
            if (na >= c->f + 1) {
                for (size_t i = 1; i < na; i++) /* descending insertion sort: na <= 16 */
                    for (size_t j = i; j > 0 && above[j] > above[j - 1]; j--) {
                        uint64_t t = above[j];
                        above[j] = above[j - 1];
                        above[j - 1] = t;
                    }
                pb_start_view_change(r, above[c->f]);
            }
            vc_quorum_check(r);
            pb_try_newview(r, vi->v);
        }
    }
    dsig_xfree(vi, 0);
}

void pb_on_newview(bft_replica *r, uint64_t from, const uint8_t *frame, size_t len, bft_rd *rd)
{
    (void)from;
    (void)rd;
    (void)apply_newview(r, frame, len, 0);
}

void pb_view_tick(bft_replica *r, uint64_t now)
{
    bft_core *c = &r->c;
    unsigned sh = r->attempt < 4 ? r->attempt : 4;
    uint64_t timeout = (uint64_t)r->view_timeout_ms << sh;
    if (!r->vc) {
        if (pb_leader(r, r->view) == c->self)
            return;
        for (size_t i = 0; i < r->n_clients; i++) {
            const pb_pending *p = &r->pend[i];
            uint64_t since = p->arrived > r->progress_ms ? p->arrived : r->progress_ms;
            if (p->used && now - since >= timeout) {
                pb_start_view_change(r, r->view + 1);
                return;
            }
        }
        return;
    }
    if (r->vc_quorum && now - r->vc_since >= timeout) {
        r->attempt++;
        pb_start_view_change(r, r->vc_target + 1);
    } else if (r->my_vc && now - r->vc_sent >= 4u * r->retransmit_ms) {
        r->vc_sent = now;
        r->st->retransmits++;
        for (size_t i = 0; i < c->n; i++)
            bft_send_frame(c, c->members[i], r->my_vc, r->my_vc_len);
    }
}
