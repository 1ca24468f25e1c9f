/*
 * src/bft/cbc.c — Byzantine consistent broadcast by signed echo (docs/bft.md "Consistent broadcast").
 *
 * Instance (origin o, k): o signs SEND(o, k, H(v)) and sends v to every member; a member that gets the
 * first valid SEND of an instance signs ECHO(o, k, H(v)) back to o (never a second one for that
 * instance); o collects ceil((n+f+1)/2) echoes (its own included) and sends FINAL(v, those echoes) to all;
 * a member delivers v on a FINAL whose echo certificate verifies. Two such quorums share f+1 members, one
 * of them correct, and a correct member echoes once: no two correct members deliver different values.
 *
 * Equivocation: a member that saw SEND(d1) and gets o's signature on SEND(d2) (inside a FINAL, or in the
 * WITNESS frames members exchange on the timer, off the critical path) holds two conflicting statements
 * signed by o: the proof.
 *
 * Loss: o re-sends SEND to members whose echo it lacks and FINAL to members that did not acknowledge
 * delivery (ACK, unsigned: it only stops retransmission). Each origin has a window of BFT_WINDOW
 * instances; frames outside it are refused (counted as replayed), except a FINAL beyond it, whose
 * certificate proves the origin moved on: the window then jumps.
 */
#include <string.h>

#include "bft/bft.h"
#include "bft/window.h"
#include "core/internal.h"

#define WITNESS_MAX 16u

typedef struct cbc_slot {
    bft_slot_head h;     /* first: the window's part (instance, used, delivered, acks) */
    int have_send;       /* first valid SEND seen: d, value, send */
    uint8_t d[BFT_DIGEST];
    uint8_t *value;
    size_t vlen;
    bft_vote send;       /* the origin's signature on SEND */
    bft_vote echo;       /* this member's echo */
    int witnessed, proven;
    uint64_t t;          /* last (re)transmission by the origin */
    unsigned tries;      /* retransmissions so far: the period doubles (up to 64x) */
    /* origin == self */
    bft_vote echoes[DSIG_BFT_MAX_MEMBERS];
    uint64_t echo_mask;
    uint8_t *final;      /* the FINAL frame, once built */
    size_t final_len;
} cbc_slot;

typedef struct cbc_origin {
    bft_window w;        /* over slot[] */
    cbc_slot slot[BFT_WINDOW];
} cbc_origin;

struct bft_cbc {
    bft_core c;
    unsigned retransmit_ms;
    uint64_t next_k;
    cbc_origin *o;       /* per member index */
};

bft_core *bft_cbc_core(bft_cbc *b)
{
    return &b->c;
}

static void slot_clear(cbc_slot *s)
{
    dsig_xfree(s->value, 0);
    dsig_xfree(s->final, 0);
    bft_vote_clear(&s->send);
    bft_vote_clear(&s->echo);
    for (size_t i = 0; i < DSIG_BFT_MAX_MEMBERS; i++)
        bft_vote_clear(&s->echoes[i]);
    memset(s, 0, sizeof *s);
}

/* The slot of (origin index, k) within its window, created if asked; NULL outside. */
static cbc_slot *slot_of(bft_cbc *b, int oi, uint64_t k, int create)
{
    return bft_window_slot(&b->o[oi].w, k, create);
}

/* Retire what can be retired at the bottom of origin oi's window (bft_window_advance). */
static void window_advance(bft_cbc *b, int oi, int force)
{
    bft_window_advance(&b->o[oi].w, &b->c, force);
}

/* bft_window's view of slot_clear. */
static void slot_clear_any(void *s)
{
    slot_clear(s);
}

int bft_cbc_new(bft_cbc **out, const bft_env *env, dsig_bft_stats *st, uint64_t session, uint64_t self,
                const uint64_t *members, size_t n, unsigned retransmit_ms)
{
    bft_cbc *b = dsig_calloc(1, sizeof *b);
    if (!b)
        return DSIG_E_NOMEM;
    int rc = bft_core_init(&b->c, env, st, BFT_CLASS_CBC, session, self, members, n);
    if (rc == DSIG_OK && b->c.self_idx < 0)
        rc = dsig_fail(DSIG_E_ARG, "bft: this node (%llu) is not a broadcast member", (unsigned long long)self);
    if (rc == DSIG_OK && !(b->o = dsig_calloc(n, sizeof *b->o)))
        rc = DSIG_E_NOMEM;
    if (rc != DSIG_OK) {
        bft_core_free(&b->c);
        dsig_xfree(b, 0);
        return rc;
    }
    for (size_t i = 0; i < n; i++) /* only the own instances wait for acknowledgements */
        bft_window_init(&b->o[i].w, b->o[i].slot, sizeof b->o[i].slot[0], slot_clear_any,
                        (int)i == b->c.self_idx);
    b->next_k = 1;
    b->retransmit_ms = retransmit_ms ? retransmit_ms : 50;
    *out = b;
    return DSIG_OK;
}

void bft_cbc_free(bft_cbc *b)
{
    if (!b)
        return;
    for (size_t i = 0; b->o && i < b->c.n; i++)
        bft_window_clear_all(&b->o[i].w);
    dsig_xfree(b->o, 0);
    bft_core_free(&b->c);
    dsig_xfree(b, 0);
}

/* Keep the value of an instance. */
static int keep_value(cbc_slot *s, const uint8_t *v, size_t len)
{
    uint8_t *p = dsig_malloc(len);
    if (!p)
        return DSIG_E_NOMEM;
    memcpy(p, v, len);
    dsig_xfree(s->value, 0);
    s->value = p;
    s->vlen = len;
    return DSIG_OK;
}

static void deliver(bft_cbc *b, uint64_t origin, cbc_slot *s, const uint8_t *cert, size_t cert_len)
{
    s->h.delivered = 1;
    b->c.st->delivered++;
    dsig_bft_event ev = {.kind = DSIG_BFT_EV_DELIVER, .origin = origin, .instance = s->h.k, .value = s->value,
                         .value_len = s->vlen, .proof = cert, .proof_len = cert_len};
    memcpy(ev.digest, s->d, 32);
    b->c.env->event(b->c.env->ctx, &ev);
}

/* Origin: the echo quorum is complete: FINAL to every member, and deliver here. */
static void finalize(bft_cbc *b, cbc_slot *s)
{
    bft_core *c = &b->c;
    bft_vote q[DSIG_BFT_MAX_MEMBERS];
    size_t nq = 0, need = bft_q_echo(c);
    q[nq++] = s->echoes[c->self_idx];
    for (size_t i = 0; i < c->n && nq < need; i++)
        if ((int)i != c->self_idx && (s->echo_mask >> i & 1))
            q[nq++] = s->echoes[i];
    bft_begin(c, BT_CBC_FINAL);
    bb_u64(&c->out, c->self);
    bb_u64(&c->out, s->h.k);
    bb_blob16(&c->out, s->value, s->vlen);
    bb_blob16(&c->out, s->send.sig, s->send.len);
    size_t cert_at = c->out.len;
    bft_put_cert(&c->out, q, nq);
    if (c->out.err)
        return;
    s->final = dsig_malloc(c->out.len);
    if (!s->final)
        return;
    memcpy(s->final, c->out.p, c->out.len);
    s->final_len = c->out.len;
    s->t = c->env->now_ms(c->env->ctx);
    bft_send_all(c);
    deliver(b, c->self, s, s->final + cert_at, s->final_len - cert_at);
}

/* Add a verified echo at the origin; finalize on the quorum. */
static void add_echo(bft_cbc *b, cbc_slot *s, int idx, uint64_t signer, const uint8_t *sig, size_t len)
{
    if (bft_vote_set(&s->echoes[idx], signer, sig, len) != DSIG_OK)
        return;
    s->echo_mask |= UINT64_C(1) << idx;
    if (!s->final && (size_t)__builtin_popcountll(s->echo_mask) >= bft_q_echo(&b->c))
        finalize(b, s);
}

int bft_cbc_broadcast(bft_cbc *b, const uint8_t *value, size_t len, uint64_t *instance)
{
    bft_core *c = &b->c;
    if (!value || len == 0 || len > DSIG_BFT_MAX_VALUE)
        return dsig_fail(DSIG_E_ARG, "bft broadcast: value of %zu bytes, 1..%u allowed", len, DSIG_BFT_MAX_VALUE);
    uint64_t k = b->next_k;
    bft_window_make_room(&b->o[c->self_idx].w, c, k);
    cbc_slot *s = slot_of(b, c->self_idx, k, 1);
    if (!s)
        return dsig_fail(DSIG_E_WOULD_BLOCK, "bft broadcast: %u instances not yet acknowledged", BFT_WINDOW);
    int rc = keep_value(s, value, len);
    bft_hash("DSig-bft value v1", value, len, NULL, 0, s->d);
    if (rc == DSIG_OK)
        rc = bft_sign(c, BT_CBC_SEND, c->self, k, 0, s->d, &s->send);
    bft_vote own = {0};
    if (rc == DSIG_OK)
        rc = bft_sign(c, BT_CBC_ECHO, c->self, k, 0, s->d, &own);
    if (rc != DSIG_OK) {
        bft_vote_clear(&own);
        slot_clear(s);
        return rc;
    }
    b->next_k++;
    s->have_send = 1;
    bft_begin(c, BT_CBC_SEND);
    bb_u64(&c->out, c->self);
    bb_u64(&c->out, k);
    bb_blob16(&c->out, value, len);
    bb_blob16(&c->out, s->send.sig, s->send.len);
    s->t = c->env->now_ms(c->env->ctx);
    bft_send_all(c);
    /* the own echo is signed after SEND leaves: it overlaps with the network */
    s->echo = own;
    bft_vote copy = {0};
    if (bft_vote_set(&copy, c->self, own.sig, own.len) == DSIG_OK) {
        s->echoes[c->self_idx] = copy;
        s->echo_mask |= UINT64_C(1) << c->self_idx;
    }
    if (instance)
        *instance = k;
    return DSIG_OK;
}

/* Send this member's echo of slot s to its origin. */
static void send_echo(bft_cbc *b, uint64_t origin, const cbc_slot *s)
{
    bft_core *c = &b->c;
    bft_begin(c, BT_CBC_ECHO);
    bb_u64(&c->out, origin);
    bb_u64(&c->out, s->h.k);
    bb_put(&c->out, s->d, BFT_DIGEST);
    bft_put_vote(&c->out, &s->echo);
    bft_send(c, origin);
}

/* Another statement of the origin for this instance: the proof when it verifies. */
static void check_conflict(bft_cbc *b, uint64_t origin, cbc_slot *s, const uint8_t d[32], const uint8_t *sig,
                           size_t len)
{
    bft_core *c = &b->c;
    if (s->proven) {
        c->st->replayed++;
        return;
    }
    int rc = bft_verify(c, origin, BT_CBC_SEND, origin, s->h.k, 0, d, sig, len);
    if (rc != DSIG_OK) {
        c->st->forged++;
        return;
    }
    s->proven = 1;
    bft_evidence(c, BT_CBC_SEND, origin, origin, s->h.k, 0, s->d, s->send.sig, s->send.len, d, sig, len, 0);
}

static void on_send(bft_cbc *b, bft_rd *r)
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
    cbc_slot *s = oi == c->self_idx ? NULL : slot_of(b, oi, k, 1);
    if (!s) {
        c->st->replayed++;
        return;
    }
    uint8_t d[BFT_DIGEST];
    bft_hash("DSig-bft value v1", v, vlen, NULL, 0, d);
    if (s->have_send) {
        if (memcmp(d, s->d, BFT_DIGEST) != 0) {
            check_conflict(b, o, s, d, sig, slen);
            return;
        }
        c->st->replayed++; /* the origin retransmits: our echo may have been lost */
        if (s->echo.sig)
            send_echo(b, o, s);
        return;
    }
    if (bft_verify(c, o, BT_CBC_SEND, o, k, 0, d, sig, slen) != DSIG_OK) {
        c->st->forged++;
        if (!s->h.delivered && !s->have_send)
            slot_clear(s);
        return;
    }
    if (keep_value(s, v, vlen) != DSIG_OK || bft_vote_set(&s->send, o, sig, slen) != DSIG_OK)
        return;
    memcpy(s->d, d, BFT_DIGEST);
    s->have_send = 1;
    if (bft_sign(c, BT_CBC_ECHO, o, k, 0, d, &s->echo) == DSIG_OK)
        send_echo(b, o, s);
}

static void on_echo(bft_cbc *b, bft_rd *r)
{
    bft_core *c = &b->c;
    uint64_t o = rd_u64(r), k = rd_u64(r);
    const uint8_t *d = rd_take(r, BFT_DIGEST);
    bft_vref v;
    bft_get_vote(c, r, &v);
    int vi = bft_index(c, v.signer);
    if (!rd_done(r) || o != c->self || vi < 0) {
        c->st->malformed++;
        return;
    }
    cbc_slot *s = slot_of(b, c->self_idx, k, 0);
    if (!s || (s->echo_mask >> vi & 1) || s->final) {
        c->st->replayed++;
        return;
    }
    if (memcmp(d, s->d, BFT_DIGEST) != 0) {
        c->st->malformed++; /* an echo of a value this origin never sent */
        return;
    }
    if (bft_verify(c, v.signer, BT_CBC_ECHO, o, k, 0, d, v.sig, v.len) != DSIG_OK) {
        c->st->forged++;
        return;
    }
    add_echo(b, s, vi, v.signer, v.sig, v.len);
}

/* Unsigned acknowledgement of a delivery: only stops retransmission. */
static void send_ack(bft_cbc *b, uint64_t origin, uint64_t k)
{
    bft_core *c = &b->c;
    bft_begin(c, BT_CBC_ACK);
    bb_u64(&c->out, origin);
    bb_u64(&c->out, k);
    bft_send(c, origin);
}

static void on_final(bft_cbc *b, bft_rd *r)
{
    bft_core *c = &b->c;
    uint64_t o = rd_u64(r), k = rd_u64(r);
    size_t vlen, slen, nv = 0;
    const uint8_t *v = rd_blob16(r, 1, DSIG_BFT_MAX_VALUE, &vlen);
    const uint8_t *ssig = rd_blob16(r, 0, c->env->sig_max, &slen);
    size_t cert_at = r->off;
    bft_vref q[DSIG_BFT_MAX_MEMBERS];
    bft_get_cert(c, r, q, DSIG_BFT_MAX_MEMBERS, &nv);
    int oi = bft_index(c, o);
    if (!rd_done(r) || oi < 0) {
        c->st->malformed++;
        return;
    }
    cbc_origin *org = &b->o[oi];
    if (oi == c->self_idx || k < org->w.floor) {
        c->st->replayed++;
        if (oi != c->self_idx && k >= 1)
            send_ack(b, o, k); /* delivered and retired here: the origin lacks the ACK */
        return;
    }
    uint8_t d[BFT_DIGEST];
    bft_hash("DSig-bft value v1", v, vlen, NULL, 0, d);
    cbc_slot *s = slot_of(b, oi, k, 0);
    if (s && s->h.delivered) {
        c->st->replayed++;
        if (memcmp(d, s->d, BFT_DIGEST) == 0)
            send_ack(b, o, k);
        return;
    }
    const bft_vote *own = s && s->echo.sig && memcmp(s->d, d, BFT_DIGEST) == 0 ? &s->echo : NULL;
    int rc = bft_cert_verify(c, q, nv, bft_q_echo(c), 0, BT_CBC_ECHO, o, k, 0, d, own);
    if (rc != DSIG_OK) {
        bft_count_refusal(c, rc);
        return;
    }
    if (k - org->w.floor >= BFT_WINDOW)
        bft_window_jump(&org->w, k);
    s = slot_of(b, oi, k, 1);
    if (!s)
        return;
    if (s->have_send && memcmp(s->d, d, BFT_DIGEST) != 0) {
        check_conflict(b, o, s, d, ssig, slen);
    } else if (!s->have_send) {
        /* kept (for proofs) only once verified: an honest origin's FINAL always carries its SEND */
        if (bft_verify(c, o, BT_CBC_SEND, o, k, 0, d, ssig, slen) != DSIG_OK) {
            c->st->forged++;
            return;
        }
        if (bft_vote_set(&s->send, o, ssig, slen) == DSIG_OK)
            s->have_send = 1; /* never echoed on: the instance is decided */
    }
    if (keep_value(s, v, vlen) != DSIG_OK)
        return;
    memcpy(s->d, d, BFT_DIGEST);
    s->witnessed = 1; /* what a FINAL carries is certified: nothing to witness */
    deliver(b, o, s, r->p + cert_at, r->n - cert_at);
    send_ack(b, o, k);
    window_advance(b, oi, 0);
}

static void on_ack(bft_cbc *b, uint64_t from, bft_rd *r)
{
    bft_core *c = &b->c;
    uint64_t o = rd_u64(r), k = rd_u64(r);
    int fi = bft_index(c, from);
    if (!rd_done(r) || fi < 0 || o != c->self) {
        c->st->malformed++;
        return;
    }
    cbc_slot *s = slot_of(b, c->self_idx, k, 0);
    if (!s) {
        c->st->replayed++;
        return;
    }
    s->h.ack_mask |= UINT64_C(1) << fi;
    window_advance(b, c->self_idx, 0);
}

static void on_witness(bft_cbc *b, bft_rd *r)
{
    bft_core *c = &b->c;
    size_t n = rd_u8(r);
    if (n == 0 || n > WITNESS_MAX) {
        c->st->malformed++;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t o = rd_u64(r), k = rd_u64(r);
        const uint8_t *d = rd_take(r, BFT_DIGEST);
        size_t slen;
        const uint8_t *sig = rd_blob16(r, 0, c->env->sig_max, &slen);
        int oi = bft_index(c, o);
        if (r->bad || oi < 0) {
            c->st->malformed++;
            return;
        }
        cbc_slot *s = oi == c->self_idx ? NULL : slot_of(b, oi, k, 0);
        if (s && s->have_send && !s->proven && memcmp(d, s->d, BFT_DIGEST) != 0)
            check_conflict(b, o, s, d, sig, slen);
    }
    if (!rd_done(r))
        c->st->malformed++;
}

int bft_cbc_receive(bft_cbc *b, uint64_t from, const uint8_t *bytes, size_t len)
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
    case BT_CBC_SEND: on_send(b, &r); break;
    case BT_CBC_ECHO: on_echo(b, &r); break;
    case BT_CBC_FINAL: on_final(b, &r); break;
    case BT_CBC_ACK: on_ack(b, from, &r); break;
    case BT_CBC_WITNESS: on_witness(b, &r); break;
    default: c->st->malformed++; break;
    }
    return DSIG_OK;
}

/* Re-send the own instances' SEND / FINAL where unacknowledged. */
static void retransmit(bft_cbc *b, uint64_t now)
{
    bft_core *c = &b->c;
    cbc_origin *o = &b->o[c->self_idx];
    for (uint64_t k = o->w.floor; k < o->w.floor + BFT_WINDOW; k++) {
        cbc_slot *s = slot_of(b, c->self_idx, k, 0);
        if (!s || now - s->t < (uint64_t)b->retransmit_ms << (s->tries < 6 ? s->tries : 6))
            continue;
        s->t = now;
        s->tries++;
        uint64_t need = s->final ? s->h.ack_mask : s->echo_mask;
        for (size_t i = 0; i < c->n; i++) {
            if ((int)i == c->self_idx || (need >> i & 1))
                continue;
            c->st->retransmits++;
            if (s->final) {
                bft_send_frame(c, c->members[i], s->final, s->final_len);
            } else {
                bft_begin(c, BT_CBC_SEND);
                bb_u64(&c->out, c->self);
                bb_u64(&c->out, k);
                bb_blob16(&c->out, s->value, s->vlen);
                bb_blob16(&c->out, s->send.sig, s->send.len);
                bft_send(c, c->members[i]);
            }
        }
    }
}

/* Tell the other members which SEND this member echoed (lets them detect an equivocating origin). */
static void witness(bft_cbc *b)
{
    bft_core *c = &b->c;
    bft_buf w;
    bb_init(&w);
    size_t n = 0;
    for (size_t oi = 0; oi < c->n; oi++) {
        if ((int)oi == c->self_idx)
            continue;
        for (size_t j = 0; j < BFT_WINDOW; j++) {
            cbc_slot *s = &b->o[oi].slot[j];
            if (!s->h.used || !s->have_send || s->witnessed || !s->echo.sig)
                continue;
            s->witnessed = 1;
            bb_u64(&w, c->members[oi]);
            bb_u64(&w, s->h.k);
            bb_put(&w, s->d, BFT_DIGEST);
            bb_blob16(&w, s->send.sig, s->send.len);
            if (++n == WITNESS_MAX) {
                bft_begin(c, BT_CBC_WITNESS);
                bb_u8(&c->out, (uint8_t)n);
                bb_put(&c->out, w.p, w.len);
                bft_send_all(c);
                bb_reset(&w);
                n = 0;
            }
        }
    }
    if (n) {
        bft_begin(c, BT_CBC_WITNESS);
        bb_u8(&c->out, (uint8_t)n);
        bb_put(&c->out, w.p, w.len);
        bft_send_all(c);
    }
    bb_free(&w);
}

void bft_cbc_tick(bft_cbc *b)
{
    uint64_t now = b->c.env->now_ms(b->c.env->ctx);
    retransmit(b, now);
    witness(b);
}
