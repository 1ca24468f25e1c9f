/*
 * src/bft/rbc.c — Bracha reliable broadcast with signed messages (docs/bft.md "Reliable broadcast").
 *
 * Instance (o, k): o signs SEND(o, k, H(v)); a member echoes the first valid SEND it sees: it signs
 * ECHO(o, k, H(v)) and sends it to all, with v and o's SEND signature. On ceil((n+f+1)/2) echoes of one
 * digest, or f+1 READYs of it, a member signs READY(o, k, H(v)) to all (once per instance); on 2f+1
 * READYs it delivers. The 2f+1 signed READYs are the transferable delivery certificate. Consistency as
 * in signed echo; totality because f+1 correct READYs make every correct member send READY.
 *
 * Equivocation: an ECHO carries o's SEND signature, so a member that echoed d1 and sees an ECHO of d2
 * holds both of o's signed statements: the proof (checked only when the digests differ).
 *
 * Loss: every member re-sends its SEND / ECHO / READY of an instance to members that have not
 * acknowledged delivery (ACK, unsigned; the period doubles up to 64x), until all did — or, when the
 * origin's window of BFT_WINDOW instances is needed, n-f did (a crashed member does not block an origin
 * for good).
 */
#include <string.h>

#include "bft/bft.h"
#include "bft/window.h"
#include "core/internal.h"

#define MAX_CANDS (2u * DSIG_BFT_MAX_MEMBERS + 1u)

typedef struct rbc_cand {
    uint8_t d[BFT_DIGEST];
    uint8_t *value;
    size_t vlen;
} rbc_cand;

typedef struct rbc_slot {
    bft_slot_head h;                          /* first: the window's part */
    int have_send;
    uint8_t d_send[BFT_DIGEST];
    bft_vote send;                            /* the origin's SEND signature */
    uint8_t echo_d[DSIG_BFT_MAX_MEMBERS][BFT_DIGEST];
    bft_vote echo[DSIG_BFT_MAX_MEMBERS];      /* per member index (own included) */
    uint8_t ready_d[DSIG_BFT_MAX_MEMBERS][BFT_DIGEST];
    bft_vote ready[DSIG_BFT_MAX_MEMBERS];
    uint64_t echo_mask, ready_mask;
    rbc_cand cand[MAX_CANDS];
    size_t n_cand;
    int proven;
    uint8_t d_deliv[BFT_DIGEST];
    uint64_t t;
    unsigned tries;      /* retransmissions so far: the period doubles (up to 64x) */
} rbc_slot;

typedef struct rbc_origin {
    bft_window w;                             /* over slot[] */
    rbc_slot slot[BFT_WINDOW];
} rbc_origin;

struct bft_rbc {
    bft_core c;
    unsigned retransmit_ms;
    uint64_t next_k;
    rbc_origin *o;
};

bft_core *bft_rbc_core(bft_rbc *b)
{
    return &b->c;
}

static void slot_clear(rbc_slot *s)
{
    bft_vote_clear(&s->send);
    for (size_t i = 0; i < DSIG_BFT_MAX_MEMBERS; i++) {
        bft_vote_clear(&s->echo[i]);
        bft_vote_clear(&s->ready[i]);
    }
    for (size_t i = 0; i < s->n_cand; i++)
        dsig_xfree(s->cand[i].value, 0);
    memset(s, 0, sizeof *s);
}

/* The slot of (origin index, k) within its window, created if asked; NULL outside. */
static rbc_slot *slot_of(bft_rbc *b, int oi, uint64_t k, int create)
{
    return bft_window_slot(&b->o[oi].w, k, create);
}

/* Retire what can be retired at the bottom of origin oi's window (bft_window_advance). */
static void window_advance(bft_rbc *b, int oi, int force)
{
    bft_window_advance(&b->o[oi].w, &b->c, force);
}

/* bft_window's view of slot_clear. */
static void slot_clear_any(void *s)
{
    slot_clear(s);
}

int bft_rbc_new(bft_rbc **out, const bft_env *env, dsig_bft_stats *st, uint64_t session, uint64_t self,
                const uint64_t *members, size_t n, unsigned retransmit_ms)
{
    bft_rbc *b = dsig_calloc(1, sizeof *b);
    if (!b)
        return DSIG_E_NOMEM;
    int rc = bft_core_init(&b->c, env, st, BFT_CLASS_RBC, session, self, members, n);
    if (rc == DSIG_OK && b->c.self_idx < 0)
        rc = dsig_fail(DSIG_E_ARG, "bft: this node (%llu) is not a broadcast member", (unsigned long long)self);
    if (rc == DSIG_OK && !(b->o = dsig_calloc(n, sizeof *b->o)))
        rc = DSIG_E_NOMEM;
    if (rc != DSIG_OK) {
        bft_core_free(&b->c);
        dsig_xfree(b, 0);
        return rc;
    }
    for (size_t i = 0; i < n; i++) /* every member retransmits: every slot waits for acknowledgements */
        bft_window_init(&b->o[i].w, b->o[i].slot, sizeof b->o[i].slot[0], slot_clear_any, 1);
    b->next_k = 1;
    b->retransmit_ms = retransmit_ms ? retransmit_ms : 50;
    *out = b;
    return DSIG_OK;
}

void bft_rbc_free(bft_rbc *b)
{
    if (!b)
        return;
    for (size_t i = 0; b->o && i < b->c.n; i++)
        bft_window_clear_all(&b->o[i].w);
    dsig_xfree(b->o, 0);
    bft_core_free(&b->c);
    dsig_xfree(b, 0);
}

/* The value of digest d, kept once per distinct digest. */
static rbc_cand *cand_of(rbc_slot *s, const uint8_t d[32])
{
    for (size_t i = 0; i < s->n_cand; i++)
        if (memcmp(s->cand[i].d, d, BFT_DIGEST) == 0)
            return &s->cand[i];
    return NULL;
}

static void keep_cand(rbc_slot *s, const uint8_t d[32], const uint8_t *v, size_t len)
{
    if (cand_of(s, d) || s->n_cand == MAX_CANDS)
        return;
    rbc_cand *c = &s->cand[s->n_cand];
    if (!(c->value = dsig_malloc(len)))
        return;
    memcpy(c->value, v, len);
    c->vlen = len;
    memcpy(c->d, d, BFT_DIGEST);
    s->n_cand++;
}

/* Votes of one kind for digest d. */
static size_t count(uint64_t mask, uint8_t (*dd)[BFT_DIGEST], size_t n, const uint8_t d[32])
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (mask >> i & 1) && memcmp(dd[i], d, BFT_DIGEST) == 0;
    return k;
}

static void send_vote(bft_rbc *b, int type, uint64_t o, const rbc_slot *s, const uint8_t d[32],
                      const bft_vote *v, uint64_t to_mask_skip, int to_all)
{
    bft_core *c = &b->c;
    const rbc_cand *cd = cand_of((rbc_slot *)s, d);
    if (!cd)
        return;
    bft_begin(c, type);
    bb_u64(&c->out, o);
    bb_u64(&c->out, s->h.k);
    bb_blob16(&c->out, cd->value, cd->vlen);
    if (type == BT_RBC_ECHO)
        bb_blob16(&c->out, s->send.sig, s->send.len);
    bft_put_vote(&c->out, v);
    if (to_all) {
        bft_send_all(c);
        return;
    }
    for (size_t i = 0; i < c->n; i++)
        if ((int)i != c->self_idx && !(to_mask_skip >> i & 1)) {
            c->st->retransmits++;
            bft_send(c, c->members[i]);
        }
}

static void thresholds(bft_rbc *b, int oi, rbc_slot *s, const uint8_t d[32]);

/* Sign and send this member's ECHO of the SEND it holds. */
static void do_echo(bft_rbc *b, int oi, rbc_slot *s)
{
    bft_core *c = &b->c;
    int me = c->self_idx;
    if (s->echo_mask >> me & 1)
        return;
    if (bft_sign(c, BT_RBC_ECHO, c->members[oi], s->h.k, 0, s->d_send, &s->echo[me]) != DSIG_OK)
        return;
    memcpy(s->echo_d[me], s->d_send, BFT_DIGEST);
    s->echo_mask |= UINT64_C(1) << me;
    send_vote(b, BT_RBC_ECHO, c->members[oi], s, s->d_send, &s->echo[me], 0, 1);
    thresholds(b, oi, s, s->d_send);
}

static void deliver(bft_rbc *b, int oi, rbc_slot *s, const uint8_t d[32])
{
    bft_core *c = &b->c;
    rbc_cand *cd = cand_of(s, d);
    if (!cd)
        return;
    bft_vote q[DSIG_BFT_MAX_MEMBERS];
    size_t nq = 0, need = bft_q_vote(c);
    for (size_t i = 0; i < c->n && nq < need; i++)
        if ((s->ready_mask >> i & 1) && memcmp(s->ready_d[i], d, BFT_DIGEST) == 0)
            q[nq++] = s->ready[i];
    bft_buf cert;
    bb_init(&cert);
    bft_put_cert(&cert, q, nq);
    s->h.delivered = 1;
    memcpy(s->d_deliv, d, BFT_DIGEST);
    c->st->delivered++;
    dsig_bft_event ev = {.kind = DSIG_BFT_EV_DELIVER, .origin = c->members[oi], .instance = s->h.k,
                         .value = cd->value, .value_len = cd->vlen, .proof = cert.p, .proof_len = cert.len};
    memcpy(ev.digest, d, 32);
    c->env->event(c->env->ctx, &ev);
    bb_free(&cert);
    bft_begin(c, BT_RBC_ACK);
    bb_u64(&c->out, c->members[oi]);
    bb_u64(&c->out, s->h.k);
    bft_send_all(c);
}

/* Bracha's rules for digest d of an instance. */
static void thresholds(bft_rbc *b, int oi, rbc_slot *s, const uint8_t d[32])
{
    bft_core *c = &b->c;
    int me = c->self_idx;
    size_t echoes = count(s->echo_mask, s->echo_d, c->n, d);
    size_t readies = count(s->ready_mask, s->ready_d, c->n, d);
    if (!(s->ready_mask >> me & 1) && (echoes >= bft_q_echo(c) || readies >= c->f + 1) && cand_of(s, d)) {
        if (bft_sign(c, BT_RBC_READY, c->members[oi], s->h.k, 0, d, &s->ready[me]) != DSIG_OK)
            return;
        memcpy(s->ready_d[me], d, BFT_DIGEST);
        s->ready_mask |= UINT64_C(1) << me;
        if (!s->t)
            s->t = c->env->now_ms(c->env->ctx);
        readies++;
        send_vote(b, BT_RBC_READY, c->members[oi], s, d, &s->ready[me], 0, 1);
    }
    if (!s->h.delivered && readies >= bft_q_vote(c))
        deliver(b, oi, s, d);
}

int bft_rbc_broadcast(bft_rbc *b, const uint8_t *value, size_t len, uint64_t *instance)
{
    bft_core *c = &b->c;
    if (!value || len == 0 || len > DSIG_BFT_MAX_VALUE)
        return dsig_fail(DSIG_E_ARG, "bft broadcast: value of %zu bytes, 1..%u allowed", len, DSIG_BFT_MAX_VALUE);
    uint64_t k = b->next_k, now = c->env->now_ms(c->env->ctx);
    bft_window_make_room(&b->o[c->self_idx].w, &b->c, k);
    rbc_slot *s = slot_of(b, c->self_idx, k, 1);
    if (!s)
        return dsig_fail(DSIG_E_WOULD_BLOCK, "bft broadcast: %u instances not yet acknowledged", BFT_WINDOW);
    bft_hash("DSig-bft value v1", value, len, NULL, 0, s->d_send);
    keep_cand(s, s->d_send, value, len);
    int rc = s->n_cand ? bft_sign(c, BT_RBC_SEND, c->self, k, 0, s->d_send, &s->send) : DSIG_E_NOMEM;
    if (rc != DSIG_OK) {
        slot_clear(s);
        return rc;
    }
    b->next_k++;
    s->have_send = 1;
    s->t = now;
    bft_begin(c, BT_RBC_SEND);
    bb_u64(&c->out, c->self);
    bb_u64(&c->out, k);
    bb_blob16(&c->out, value, len);
    bb_blob16(&c->out, s->send.sig, s->send.len);
    bft_send_all(c);
    do_echo(b, c->self_idx, s);
    if (instance)
        *instance = k;
    return DSIG_OK;
}

/* A SEND statement of the origin (d, sig) for slot s: adopt it (first), ignore it (same), or prove the
 * equivocation (another digest). `verified`: the signature is already checked. */
static int take_send(bft_rbc *b, int oi, rbc_slot *s, const uint8_t d[32], const uint8_t *sig, size_t len,
                     int verified)
{
    bft_core *c = &b->c;
    uint64_t o = c->members[oi];
    if (s->have_send) {
        if (memcmp(d, s->d_send, BFT_DIGEST) == 0 || s->proven)
            return 0;
        if (bft_verify(c, o, BT_RBC_SEND, o, s->h.k, 0, d, sig, len) != DSIG_OK) {
            c->st->forged++;
            return -1;
        }
        s->proven = 1;
        bft_evidence(c, BT_RBC_SEND, o, o, s->h.k, 0, s->d_send, s->send.sig, s->send.len, d, sig, len, 0);
        return 0;
    }
    if (!verified && bft_verify(c, o, BT_RBC_SEND, o, s->h.k, 0, d, sig, len) != DSIG_OK) {
        c->st->forged++;
        return -1;
    }
    if (bft_vote_set(&s->send, o, sig, len) != DSIG_OK)
        return -1;
    memcpy(s->d_send, d, BFT_DIGEST);
    s->have_send = 1;
    s->t = c->env->now_ms(c->env->ctx);
    return 1;
}

/* An instance this member delivered (or retired, which implies it) is re-sent to it: the sender lacks
 * its ACK, which was lost — acknowledge again so that the sender stops and can retire. */
static void re_ack(bft_rbc *b, int oi, uint64_t k, const rbc_slot *s, uint64_t to)
{
    bft_core *c = &b->c;
    if (!(s && s->h.delivered) && !(k >= 1 && k < b->o[oi].w.floor))
        return;
    bft_begin(c, BT_RBC_ACK);
    bb_u64(&c->out, c->members[oi]);
    bb_u64(&c->out, k);
    bft_send(c, to);
}

static void on_send(bft_rbc *b, uint64_t from, bft_rd *r)
{
    bft_core *c = &b->c;
    uint64_t o = rd_u64(r), k = rd_u64(r);
    size_t vlen, slen;
    const uint8_t *v = rd_blob16(r, 1, DSIG_BFT_MAX_VALUE, &vlen);
    const uint8_t *sig = rd_blob16(r, 0, c->env->sig_max, &slen);
    int oi = bft_index(c, o);
    if (!rd_done(r) || oi < 0) {
        c->st->malformed++;
        return;
    }
    if (oi != c->self_idx)
        bft_window_make_room(&b->o[oi].w, &b->c, k);
    rbc_slot *s = oi == c->self_idx ? NULL : slot_of(b, oi, k, 1);
    if (!s || s->h.delivered) {
        c->st->replayed++;
        if (oi != c->self_idx)
            re_ack(b, oi, k, s, from);
        return;
    }
    uint8_t d[BFT_DIGEST];
    bft_hash("DSig-bft value v1", v, vlen, NULL, 0, d);
    if (s->have_send && memcmp(d, s->d_send, BFT_DIGEST) == 0) {
        c->st->replayed++;
        return;
    }
    if (take_send(b, oi, s, d, sig, slen, 0) == 1) {
        keep_cand(s, d, v, vlen);
        do_echo(b, oi, s);
    }
}

/* ECHO and READY: o, k, value, [SEND signature,] vote. */
static void on_vote(bft_rbc *b, uint64_t from, int type, bft_rd *r)
{
    bft_core *c = &b->c;
    uint64_t o = rd_u64(r), k = rd_u64(r);
    size_t vlen, slen = 0;
    const uint8_t *v = rd_blob16(r, 1, DSIG_BFT_MAX_VALUE, &vlen);
    const uint8_t *ssig = type == BT_RBC_ECHO ? rd_blob16(r, 0, c->env->sig_max, &slen) : NULL;
    bft_vref vote;
    bft_get_vote(c, r, &vote);
    int oi = bft_index(c, o), vi = bft_index(c, vote.signer);
    if (!rd_done(r) || oi < 0 || vi < 0) {
        c->st->malformed++;
        return;
    }
    if (vi != c->self_idx)
        bft_window_make_room(&b->o[oi].w, &b->c, k);
    rbc_slot *s = vi == c->self_idx ? NULL : slot_of(b, oi, k, 1);
    uint64_t mask = !s ? 0 : type == BT_RBC_ECHO ? s->echo_mask : s->ready_mask;
    if (!s || (mask >> vi & 1)) {
        c->st->replayed++;
        if (vi != c->self_idx)
            re_ack(b, oi, k, s, from);
        return;
    }
    uint8_t d[BFT_DIGEST];
    bft_hash("DSig-bft value v1", v, vlen, NULL, 0, d);
    if (bft_verify(c, vote.signer, type, o, k, 0, d, vote.sig, vote.len) != DSIG_OK) {
        c->st->forged++;
        if (!s->have_send && !s->echo_mask && !s->ready_mask)
            slot_clear(s);
        return;
    }
    if (type == BT_RBC_ECHO) {
        /* the ECHO relays the origin's SEND: adopt it if we missed the SEND, prove a conflict */
        int took = oi == c->self_idx ? 0 : take_send(b, oi, s, d, ssig, slen, 0);
        if (bft_vote_set(&s->echo[vi], vote.signer, vote.sig, vote.len) != DSIG_OK)
            return;
        memcpy(s->echo_d[vi], d, BFT_DIGEST);
        s->echo_mask |= UINT64_C(1) << vi;
        keep_cand(s, d, v, vlen);
        if (took == 1)
            do_echo(b, oi, s);
    } else {
        if (bft_vote_set(&s->ready[vi], vote.signer, vote.sig, vote.len) != DSIG_OK)
            return;
        memcpy(s->ready_d[vi], d, BFT_DIGEST);
        s->ready_mask |= UINT64_C(1) << vi;
        keep_cand(s, d, v, vlen);
    }
    thresholds(b, oi, s, d);
    if (s->h.delivered)
        window_advance(b, oi, 0);
}

static void on_ack(bft_rbc *b, uint64_t from, bft_rd *r)
{
    bft_core *c = &b->c;
    uint64_t o = rd_u64(r), k = rd_u64(r);
    int oi = bft_index(c, o), fi = bft_index(c, from);
    if (!rd_done(r) || oi < 0 || fi < 0) {
        c->st->malformed++;
        return;
    }
    rbc_slot *s = slot_of(b, oi, k, 0);
    if (!s) {
        c->st->replayed++;
        return;
    }
    s->h.ack_mask |= UINT64_C(1) << fi;
    window_advance(b, oi, 0);
}

int bft_rbc_receive(bft_rbc *b, uint64_t from, const uint8_t *bytes, size_t len)
{
    bft_core *c = &b->c;
    int type;
    bft_rd r;
    if (!bft_open(c, bytes, len, &type, &r))
        return DSIG_E_ARG;
    c->st->frames_in++;
    if (bft_index(c, from) < 0) {
        c->st->malformed++;
        return DSIG_OK;
    }
    switch (type) {
    case BT_RBC_SEND: on_send(b, from, &r); break;
    case BT_RBC_ECHO:
    case BT_RBC_READY: on_vote(b, from, type, &r); break;
    case BT_RBC_ACK: on_ack(b, from, &r); break;
    default: c->st->malformed++; break;
    }
    return DSIG_OK;
}

void bft_rbc_tick(bft_rbc *b)
{
    bft_core *c = &b->c;
    uint64_t now = c->env->now_ms(c->env->ctx);
    int me = c->self_idx;
    for (size_t oi = 0; oi < c->n; oi++) {
        for (size_t j = 0; j < BFT_WINDOW; j++) {
            rbc_slot *s = &b->o[oi].slot[j];
            int mine = (int)oi == me || (s->echo_mask >> me & 1) || (s->ready_mask >> me & 1);
            if (!s->h.used || !mine || now - s->t < (uint64_t)b->retransmit_ms << (s->tries < 6 ? s->tries : 6))
                continue;
            s->t = now;
            s->tries++;
            uint64_t skip = s->h.ack_mask;
            if ((int)oi == me) {
                const rbc_cand *cd = cand_of(s, s->d_send);
                for (size_t i = 0; cd && i < c->n; i++) {
                    if ((int)i == me || (skip >> i & 1) || (s->echo_mask >> i & 1))
                        continue;
                    bft_begin(c, BT_RBC_SEND);
                    bb_u64(&c->out, c->self);
                    bb_u64(&c->out, s->h.k);
                    bb_blob16(&c->out, cd->value, cd->vlen);
                    bb_blob16(&c->out, s->send.sig, s->send.len);
                    c->st->retransmits++;
                    bft_send(c, c->members[i]);
                }
            }
            if (s->echo_mask >> me & 1)
                send_vote(b, BT_RBC_ECHO, c->members[oi], s, s->echo_d[me], &s->echo[me], skip, 0);
            if (s->ready_mask >> me & 1)
                send_vote(b, BT_RBC_READY, c->members[oi], s, s->ready_d[me], &s->ready[me], skip, 0);
        }
        window_advance(b, (int)oi, 0);
    }
}
