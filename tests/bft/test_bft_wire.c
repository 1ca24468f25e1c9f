/*
 * tests/bft/test_bft_wire.c — the BFT cores' bad-input handling and building blocks, one process, a
 * fake env (keyed-BLAKE3 "signatures" per process, so that forging takes another process's key):
 *   - statements: every field changes the signed bytes (domain separation);
 *   - every truncation and every single-byte change of a valid SEND / ECHO / FINAL, REQUEST /
 *     PRE-PREPARE / PREPARE is refused and counted exactly once (malformed, forged or replayed) and
 *     makes the core send nothing; the valid frame is then taken, and taken again as a replay;
 *   - a vote moved to another instance or view is forged (its statement is another one);
 *   - equivocation proofs: accepted, and refused when not two conflicting signed statements;
 *   - quorums, for f = 1, 2, 3, one valid vote at a time from distinct members: reliable broadcast
 *     sends READY at f+1 READYs and delivers at 2f+1, not one vote before; a replica commits at 2f
 *     PREPAREs (its own included) and executes at 2f+1 COMMITs, not one vote before;
 *   - the log file: records back in order, a cut last record dropped, damage and another
 *     deployment's log refused;
 *   - the key-value state machine: operations, snapshot round trip, malformed snapshots refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bft/bft.h"
#include "bft/pbft.h"
#include "dsig/dsig.h"
#include "hash/blake3.h"

#define QF_MAX 3                 /* the quorum tests go up to f = 3: n = 10 members */
#define NP (3 * QF_MAX + 2)      /* ids 1..NP: the members and one client */

typedef struct fake {
    uint64_t id;
    bft_env env;
    dsig_bft_stats st;
    size_t sent;                 /* frames sent */
    size_t sent_type[256];       /* ... by frame type */
    bft_buf last;                /* the last one */
    size_t events;
} fake;

static fake procs[NP + 1];       /* ids 1..NP */
static const uint64_t members[4] = {1, 2, 3, 4}, client_id = 5;

static void key_of(uint64_t id, uint8_t k[32])
{
    memset(k, (int)id, 32);
}

static void f_send(void *ctx, uint64_t to, const uint8_t *f, size_t len)
{
    (void)to;
    fake *p = ctx;
    p->sent++;
    if (len >= BFT_HDR_BYTES)
        p->sent_type[f[5]]++;
    bb_reset(&p->last);
    bb_put(&p->last, f, len);
}

static int mac(uint64_t id, const uint8_t *stmt, size_t len, uint8_t out[32])
{
    uint8_t k[32];
    key_of(id, k);
    dsig_blake3_hasher h;
    dsig_blake3_init_keyed(&h, k);
    dsig_blake3_update(&h, stmt, len);
    dsig_blake3_finalize(&h, out, 32);
    return DSIG_OK;
}

static int f_sign(void *ctx, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sl)
{
    (void)cap;
    *sl = 32;
    return mac(((fake *)ctx)->id, stmt, len, sig);
}

static int f_verify(void *ctx, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig, size_t sl)
{
    (void)ctx;
    uint8_t want[32];
    mac(signer, stmt, len, want);
    return sl == 32 && memcmp(want, sig, 32) == 0 ? DSIG_OK : DSIG_E_VERIFY;
}

static void f_event(void *ctx, const dsig_bft_event *ev)
{
    (void)ev;
    ((fake *)ctx)->events++;
}

static uint64_t f_now(void *ctx)
{
    (void)ctx;
    return 1000;
}

static int setup(void **state)
{
    (void)state;
    for (uint64_t i = 1; i <= NP; i++) {
        fake *p = &procs[i];
        bb_free(&p->last);
        memset(p, 0, sizeof *p);
        p->id = i;
        p->env = (bft_env){.ctx = p, .send = f_send, .sign = f_sign, .verify = f_verify, .event = f_event,
                           .now_ms = f_now, .sig_max = 32};
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 1; i <= NP; i++)
        bb_free(&procs[i].last);
    return 0;
}

static uint64_t refusals(const dsig_bft_stats *s)
{
    return s->malformed + s->forged + s->replayed + s->future;
}

/* ---- statements ----------------------------------------------------------------------------- */

static void test_statement_fields(void **state)
{
    (void)state;
    bft_core a, b;
    uint64_t other[4] = {1, 2, 3, 5};
    assert_int_equal(bft_core_init(&a, &procs[1].env, &procs[1].st, BFT_CLASS_CBC, 7, 1, members, 4), DSIG_OK);
    uint8_t d[32] = {1}, d2[32] = {2}, base[BFT_STMT_BYTES], t[BFT_STMT_BYTES];
    bft_stmt(&a, base, BT_CBC_ECHO, 2, 3, 4, 5, d);
    assert_memory_equal(base, BFT_LABEL, BFT_LABEL_BYTES);
    const struct { int kind; uint64_t s, x, y, z; const uint8_t *dd; } v[] = {
        {BT_CBC_SEND, 2, 3, 4, 5, d}, {BT_CBC_ECHO, 3, 3, 4, 5, d}, {BT_CBC_ECHO, 2, 4, 4, 5, d},
        {BT_CBC_ECHO, 2, 3, 5, 5, d}, {BT_CBC_ECHO, 2, 3, 4, 6, d}, {BT_CBC_ECHO, 2, 3, 4, 5, d2}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        bft_stmt(&a, t, v[i].kind, v[i].s, v[i].x, v[i].y, v[i].z, v[i].dd);
        assert_memory_not_equal(t, base, BFT_STMT_BYTES);
    }
    /* another session, protocol or member set: another session id */
    const struct { int cls; uint64_t session; const uint64_t *m; } w[] = {
        {BFT_CLASS_CBC, 8, members}, {BFT_CLASS_RBC, 7, members}, {BFT_CLASS_CBC, 7, other}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        assert_int_equal(bft_core_init(&b, &procs[1].env, &procs[1].st, w[i].cls, w[i].session, 1, w[i].m, 4), DSIG_OK);
        bft_stmt(&b, t, BT_CBC_ECHO, 2, 3, 4, 5, d);
        assert_memory_not_equal(t, base, BFT_STMT_BYTES);
        bft_core_free(&b);
    }
    /* members: too few, repeated, zero */
    uint64_t rep[4] = {1, 2, 2, 3}, zero[4] = {0, 1, 2, 3};
    assert_int_equal(bft_core_init(&b, &procs[1].env, &procs[1].st, 1, 1, 1, members, 3), DSIG_E_ARG);
    assert_int_equal(bft_core_init(&b, &procs[1].env, &procs[1].st, 1, 1, 1, rep, 4), DSIG_E_ARG);
    assert_int_equal(bft_core_init(&b, &procs[1].env, &procs[1].st, 1, 1, 1, zero, 4), DSIG_E_ARG);
    bft_core_free(&a);
}

/* ---- mutations ------------------------------------------------------------------------------ */

typedef int (*recv_fn)(void *core, uint64_t from, const uint8_t *b, size_t len);
typedef void *(*new_fn)(void);
typedef void (*free_fn)(void *core);

/* Feed one mutated copy to a fresh core: a frame whose header is damaged is not this session's
 * (DSIG_E_ARG, nothing counted); any other is refused exactly once (malformed, forged or replayed, or left
 * for later: `future`). In
 * both cases the core sends nothing. */
static void one_mutation(const uint8_t *m, size_t ml, const char *what, size_t pos, uint64_t from, int receiver,
                         new_fn mk, recv_fn rx, free_fn fr)
{
    fake *p = &procs[receiver];
    void *core = mk();
    memset(&p->st, 0, sizeof p->st);
    p->sent = 0;
    int rc = rx(core, from, m, ml);
    if (rc == DSIG_E_ARG) {
        if (ml >= BFT_HDR_BYTES && !(pos < BFT_HDR_BYTES && pos != 5))
            fail_msg("%s %zu: refused as another session's frame", what, pos);
        assert_int_equal(refusals(&p->st), 0);
    } else if (refusals(&p->st) != 1) {
        fail_msg("%s %zu: %llu refusals (malformed %llu forged %llu replayed %llu)", what, pos,
                 (unsigned long long)refusals(&p->st), (unsigned long long)p->st.malformed,
                 (unsigned long long)p->st.forged, (unsigned long long)p->st.replayed);
    }
    if (p->sent)
        fail_msg("%s %zu: a refused frame made the core send", what, pos);
    fr(core);
}

/* Every cut, every one-bit change of each byte and one byte too many of `frame`, each refused; then the
 * frame itself taken (nothing refused; something sent when expect_send) and again refused as a replay. */
static void mutate_all(const uint8_t *frame, size_t len, uint64_t from, int receiver, new_fn mk, recv_fn rx,
                       free_fn fr, int expect_send)
{
    fake *p = &procs[receiver];
    uint8_t *m = malloc(len + 1);
    assert_non_null(m);
    for (size_t cut = 0; cut < len; cut++)
        one_mutation(frame, cut, "cut at", cut, from, receiver, mk, rx, fr);
    for (size_t at = 0; at < len; at++) {
        memcpy(m, frame, len);
        m[at] ^= 0x01;
        one_mutation(m, len, "bit flipped in byte", at, from, receiver, mk, rx, fr);
    }
    memcpy(m, frame, len);
    m[len] = 0;
    one_mutation(m, len + 1, "extended by", 1, from, receiver, mk, rx, fr);
    void *core = mk();
    memset(&p->st, 0, sizeof p->st);
    p->sent = 0;
    assert_int_equal(rx(core, from, frame, len), DSIG_OK);
    assert_int_equal(refusals(&p->st), 0);
    if (expect_send)
        assert_true(p->sent > 0);
    assert_int_equal(rx(core, from, frame, len), DSIG_OK);
    assert_int_equal(p->st.replayed, 1);
    fr(core);
    free(m);
}

static void *mk_cbc1(void)
{
    bft_cbc *b;
    assert_int_equal(bft_cbc_new(&b, &procs[1].env, &procs[1].st, 7, 1, members, 4, 50), DSIG_OK);
    return b;
}
static void *mk_cbc2(void)
{
    bft_cbc *b;
    assert_int_equal(bft_cbc_new(&b, &procs[2].env, &procs[2].st, 7, 2, members, 4, 50), DSIG_OK);
    return b;
}
static int rx_cbc(void *c, uint64_t from, const uint8_t *b, size_t len)
{
    return bft_cbc_receive(c, from, b, len);
}
static void fr_cbc(void *c)
{
    bft_cbc_free(c);
}

/* A SEND of member 2 (its own core builds it). */
static void cbc_send_of_2(bft_buf *out)
{
    bft_cbc *b;
    assert_int_equal(bft_cbc_new(&b, &procs[2].env, &procs[2].st, 7, 2, members, 4, 50), DSIG_OK);
    assert_int_equal(bft_cbc_broadcast(b, (const uint8_t *)"12345678", 8, NULL), DSIG_OK);
    bb_reset(out);
    bb_put(out, procs[2].last.p, procs[2].last.len);
    bft_cbc_free(b);
}

static void test_cbc_send_mutations(void **state)
{
    (void)state;
    bft_buf f;
    bb_init(&f);
    cbc_send_of_2(&f);
    mutate_all(f.p, f.len, 2, 1, mk_cbc1, rx_cbc, fr_cbc, 1);
    bb_free(&f);
}

static void test_cbc_echo_and_final_mutations(void **state)
{
    (void)state;
    /* member 1 broadcasts; member 3's echo of it; then the FINAL member 1 builds from 3 echoes */
    bft_cbc *o, *m3, *m4;
    assert_int_equal(bft_cbc_new(&o, &procs[1].env, &procs[1].st, 7, 1, members, 4, 50), DSIG_OK);
    assert_int_equal(bft_cbc_new(&m3, &procs[3].env, &procs[3].st, 7, 3, members, 4, 50), DSIG_OK);
    assert_int_equal(bft_cbc_new(&m4, &procs[4].env, &procs[4].st, 7, 4, members, 4, 50), DSIG_OK);
    assert_int_equal(bft_cbc_broadcast(o, (const uint8_t *)"abcdefgh", 8, NULL), DSIG_OK);
    bft_buf send, echo3, echo4;
    bb_init(&send), bb_init(&echo3), bb_init(&echo4);
    bb_put(&send, procs[1].last.p, procs[1].last.len);
    assert_int_equal(bft_cbc_receive(m3, 1, send.p, send.len), DSIG_OK);
    bb_put(&echo3, procs[3].last.p, procs[3].last.len);
    assert_int_equal(bft_cbc_receive(m4, 1, send.p, send.len), DSIG_OK);
    bb_put(&echo4, procs[4].last.p, procs[4].last.len);
    /* the echo, as the origin's core sees it (a fresh origin core has no such instance: replayed, so
     * mutate against the live one instead, by hand) */
    memset(&procs[1].st, 0, sizeof procs[1].st);
    for (size_t at = BFT_HDR_BYTES; at < echo3.len; at++) {
        echo3.p[at] ^= 0x01;
        procs[1].sent = 0;
        assert_int_equal(bft_cbc_receive(o, 3, echo3.p, echo3.len), DSIG_OK);
        echo3.p[at] ^= 0x01;
        assert_int_equal(procs[1].sent, 0);
    }
    assert_int_equal(refusals(&procs[1].st), echo3.len - BFT_HDR_BYTES);
    /* an echo moved to another instance: its signature covers another statement */
    bft_buf moved;
    bb_init(&moved);
    bb_put(&moved, echo3.p, echo3.len);
    moved.p[BFT_HDR_BYTES + 15]++; /* instance k + 1 ... */
    assert_int_equal(bft_cbc_broadcast(o, (const uint8_t *)"second!!", 8, NULL), DSIG_OK); /* ... exists */
    uint64_t forged = procs[1].st.forged;
    assert_int_equal(bft_cbc_receive(o, 3, moved.p, moved.len), DSIG_OK);
    assert_true(procs[1].st.forged == forged + 1 || procs[1].st.malformed > 0);
    /* the real echoes: quorum, FINAL */
    procs[1].sent = 0;
    assert_int_equal(bft_cbc_receive(o, 3, echo3.p, echo3.len), DSIG_OK);
    assert_int_equal(procs[1].sent, 0); /* 2 echoes (its own and 3's) of the ceil((n+f+1)/2) = 3: no FINAL */
    assert_int_equal(bft_cbc_receive(o, 4, echo4.p, echo4.len), DSIG_OK);
    assert_true(procs[1].sent >= 3);
    bft_buf fin;
    bb_init(&fin);
    bb_put(&fin, procs[1].last.p, procs[1].last.len);
    mutate_all(fin.p, fin.len, 1, 2, mk_cbc2, rx_cbc, fr_cbc, 1);
    /* the certificate is the FINAL's tail: count u8, then (signer u64, length u16, 32-byte MAC) per echo.
     * One echo fewer than the quorum, each of them valid: refused by a member; the whole one delivered. */
    const size_t vote = 8 + 2 + 32, cert_at = fin.len - 1 - 3 * vote;
    assert_int_equal(fin.p[cert_at], 3);
    bft_buf short_fin;
    bb_init(&short_fin);
    bb_put(&short_fin, fin.p, fin.len - vote);
    short_fin.p[cert_at] = 2;
    bft_cbc *m2 = mk_cbc2();
    memset(&procs[2].st, 0, sizeof procs[2].st);
    procs[2].events = 0;
    assert_int_equal(bft_cbc_receive(m2, 1, short_fin.p, short_fin.len), DSIG_OK);
    assert_int_equal(procs[2].events, 0);
    assert_true(refusals(&procs[2].st) > 0);
    assert_int_equal(bft_cbc_receive(m2, 1, fin.p, fin.len), DSIG_OK);
    assert_int_equal(procs[2].events, 1);
    bft_cbc_free(m2);
    bb_free(&short_fin);
    bb_free(&send), bb_free(&echo3), bb_free(&echo4), bb_free(&moved), bb_free(&fin);
    bft_cbc_free(o), bft_cbc_free(m3), bft_cbc_free(m4);
}

/* ---- replication ---------------------------------------------------------------------------- */

static bft_replica *replica_of(int id, const uint64_t *m, size_t n, const uint64_t *client, const char *log)
{
    bft_replica *r;
    bft_replica_cfg cfg = {.session = 9, .self = (uint64_t)id, .members = m, .n = n, .clients = client,
                           .n_clients = 1, .checkpoint_interval = 4, .log_path = log, .durable = 1};
    assert_int_equal(bft_replica_new(&r, &procs[id].env, &procs[id].st, &cfg), DSIG_OK);
    return r;
}
static bft_replica *replica_new(int id, const char *log)
{
    return replica_of(id, members, 4, &client_id, log);
}
static void *mk_rep2(void)
{
    return replica_new(2, NULL);
}
static int rx_rep(void *c, uint64_t from, const uint8_t *b, size_t len)
{
    return bft_replica_receive(c, from, b, len);
}
static void fr_rep(void *c)
{
    bft_replica_free(c);
}

static void test_pbft_mutations(void **state)
{
    (void)state;
    /* the client's REQUEST, the leader's (replica 1) PRE-PREPARE, replica 3's PREPARE */
    bft_client *cl;
    assert_int_equal(bft_client_new(&cl, &procs[5].env, &procs[5].st, 9, 5, members, 4, 500), DSIG_OK);
    uint8_t op[32];
    size_t ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, (const uint8_t *)"k", 1, (const uint8_t *)"value", 5);
    assert_int_equal(bft_client_submit(cl, op, ol, NULL), DSIG_OK);
    bft_buf req, pp, prep;
    bb_init(&req), bb_init(&pp), bb_init(&prep);
    bb_put(&req, procs[5].last.p, procs[5].last.len);
    /* One request at a time: a second submit before the first has its result is refused. */
    assert_int_equal(bft_client_submit(cl, op, ol, NULL), DSIG_E_WOULD_BLOCK);
    mutate_all(req.p, req.len, 5, 2, mk_rep2, rx_rep, fr_rep, 0);

    bft_replica *leader = replica_new(1, NULL), *r3 = replica_new(3, NULL);
    procs[1].sent = 0;
    assert_int_equal(bft_replica_receive(leader, 5, req.p, req.len), DSIG_OK);
    assert_true(procs[1].sent == 3); /* PRE-PREPARE to the three backups */
    bb_put(&pp, procs[1].last.p, procs[1].last.len);
    mutate_all(pp.p, pp.len, 1, 2, mk_rep2, rx_rep, fr_rep, 1);
    /* a PRE-PREPARE signed by a backup, as if it led: malformed (not the leader of view 0) */
    bft_core *c3 = bft_replica_core(r3);
    bft_rd rd;
    int type;
    assert_true(bft_open(c3, pp.p, pp.len, &type, &rd));
    assert_int_equal(bft_replica_receive(r3, 1, pp.p, pp.len), DSIG_OK);
    bb_put(&prep, procs[3].last.p, procs[3].last.len);
    /* replica 2 holds the PRE-PREPARE: then every mutation of replica 3's PREPARE is refused — up to the
     * leader's signature it carries, which serves only as evidence and is checked only when it conflicts
     * (below) */
    size_t carried = 2 + 32;
    for (size_t at = BFT_HDR_BYTES; at < prep.len - carried; at++) {
        bft_replica *r2 = replica_new(2, NULL);
        assert_int_equal(bft_replica_receive(r2, 1, pp.p, pp.len), DSIG_OK);
        memset(&procs[2].st, 0, sizeof procs[2].st);
        procs[2].sent = 0;
        prep.p[at] ^= 0x01;
        assert_int_equal(bft_replica_receive(r2, 3, prep.p, prep.len), DSIG_OK);
        prep.p[at] ^= 0x01;
        if (refusals(&procs[2].st) != 1 || procs[2].sent)
            fail_msg("PREPARE byte %zu: %llu refusals, %zu frames sent", at, (unsigned long long)refusals(&procs[2].st),
                     procs[2].sent);
        bft_replica_free(r2);
    }
    /* a PREPARE of another digest whose carried leader signature is garbage: forged, no proof, no view
     * change */
    {
        bft_replica *r2b = replica_new(2, NULL);
        assert_int_equal(bft_replica_receive(r2b, 1, pp.p, pp.len), DSIG_OK);
        uint8_t d[32] = {9}, t[BFT_STMT_BYTES], sig[32];
        bft_buf f;
        bb_init(&f);
        bft_core *c2 = bft_replica_core(r2b);
        bft_stmt(c2, t, BT_PB_PREPARE, 3, 0, 1, 0, d);
        mac(3, t, sizeof t, sig);
        bb_put(&f, prep.p, BFT_HDR_BYTES);
        bb_u64(&f, 0);
        bb_u64(&f, 1);
        bb_put(&f, d, 32);
        bb_u64(&f, 3);
        bb_blob16(&f, sig, 32);
        bb_blob16(&f, sig, 32); /* not the leader's signature on PRE-PREPARE(0, 1, d) */
        memset(&procs[2].st, 0, sizeof procs[2].st);
        assert_int_equal(bft_replica_receive(r2b, 3, f.p, f.len), DSIG_OK);
        assert_int_equal(procs[2].st.forged, 1);
        assert_int_equal(procs[2].st.equivocations, 0);
        assert_int_equal(procs[2].st.view_changes, 0);
        bb_free(&f);
        bft_replica_free(r2b);
    }
    /* a view-0 vote after the replica moved to view 1 is a replay */
    bft_replica *r2 = replica_new(2, NULL);
    pb_start_view_change(r2, 1);
    memset(&procs[2].st, 0, sizeof procs[2].st);
    assert_int_equal(bft_replica_receive(r2, 3, prep.p, prep.len), DSIG_OK);
    assert_int_equal(procs[2].st.replayed, 1);
    bft_replica_free(r2);
    bb_free(&req), bb_free(&pp), bb_free(&prep);
    bft_replica_free(leader), bft_replica_free(r3);
    bft_client_free(cl);
}

/* ---- quorums -------------------------------------------------------------------------------- */

/* A core of member `j` of members m[0..n) for the protocol class `cls`: it signs as j (its fake env) and
 * builds frames of that session. */
static void member_core(bft_core *k, int cls, uint64_t session, uint64_t j, const uint64_t *m, size_t n)
{
    assert_int_equal(bft_core_init(k, &procs[j].env, &procs[j].st, cls, session, j, m, n), DSIG_OK);
}

static void take_out(bft_core *k, bft_buf *out)
{
    assert_int_equal(k->out.err, 0);
    bb_reset(out);
    bb_put(out, k->out.p, k->out.len);
}

static void reset_counts(fake *p)
{
    memset(&p->st, 0, sizeof p->st);
    p->sent = p->events = 0;
    memset(p->sent_type, 0, sizeof p->sent_type);
}

/* Member j's READY of origin 1's instance 1 with value v. */
static void rbc_ready_of(const uint64_t *m, size_t n, uint64_t j, const char *v, bft_buf *out)
{
    bft_core k;
    member_core(&k, BFT_CLASS_RBC, 7, j, m, n);
    uint8_t d[BFT_DIGEST];
    bft_hash("DSig-bft value v1", (const uint8_t *)v, strlen(v), NULL, 0, d);
    bft_vote vote = {0};
    assert_int_equal(bft_sign(&k, BT_RBC_READY, 1, 1, 0, d, &vote), DSIG_OK);
    bft_begin(&k, BT_RBC_READY);
    bb_u64(&k.out, 1);
    bb_u64(&k.out, 1);
    bb_blob16(&k.out, (const uint8_t *)v, strlen(v));
    bft_put_vote(&k.out, &vote);
    take_out(&k, out);
    bft_vote_clear(&vote);
    bft_core_free(&k);
}

/* Member 2 of n = 3f + 1 is handed valid READYs one at a time. f members READY another value first (a
 * faulty origin's second SEND): they count for neither. Then the other 2f, each for v: member 2 signs
 * its own READY at the (f+1)-th and delivers when that makes 2f+1 — and not one READY before. */
static void test_rbc_ready_quorum(void **state)
{
    (void)state;
    uint64_t m[3 * QF_MAX + 1], voters[3 * QF_MAX];
    fake *p = &procs[2];
    bft_buf fr;
    bb_init(&fr);
    for (size_t f = 1; f <= QF_MAX; f++) {
        size_t n = 3 * f + 1, nv = 0;
        for (size_t i = 0; i < n; i++) {
            m[i] = i + 1;
            if (m[i] != 2)
                voters[nv++] = m[i];
        }
        bft_rbc *b;
        assert_int_equal(bft_rbc_new(&b, &p->env, &p->st, 7, 2, m, n, 50), DSIG_OK);
        reset_counts(p);
        for (size_t i = 0; i < f; i++) {
            rbc_ready_of(m, n, voters[i], "the other value", &fr);
            assert_int_equal(bft_rbc_receive(b, voters[i], fr.p, fr.len), DSIG_OK);
        }
        assert_int_equal(p->sent, 0);
        for (size_t i = f; i < nv; i++) {
            rbc_ready_of(m, n, voters[i], "the value", &fr);
            assert_int_equal(bft_rbc_receive(b, voters[i], fr.p, fr.len), DSIG_OK);
            size_t got = i - f + 1;
            int own = got >= f + 1, deliver = got + (size_t)own >= 2 * f + 1;
            if ((p->sent_type[BT_RBC_READY] > 0) != own || (p->st.delivered > 0) != deliver || p->events != (size_t)deliver)
                fail_msg("f=%zu, %zu READYs of the value: own READY sent %zu times (want %s), delivered %llu (want %d)",
                         f, got, p->sent_type[BT_RBC_READY], own ? "n-1" : "none",
                         (unsigned long long)p->st.delivered, deliver);
        }
        assert_int_equal(refusals(&p->st), 0);
        assert_int_equal(p->st.delivered, 1);
        bft_rbc_free(b);
    }
    bb_free(&fr);
}

/* Member j's PREPARE (carrying the leader's PRE-PREPARE signature pp) or COMMIT (pp NULL) for view 0,
 * sequence s, request digest d. */
static void pbft_vote_of(const uint64_t *m, size_t n, uint64_t j, int type, uint64_t s, const uint8_t d[32],
                         const bft_vote *pp, bft_buf *out)
{
    bft_core k;
    member_core(&k, BFT_CLASS_PBFT, 9, j, m, n);
    bft_vote vote = {0};
    assert_int_equal(bft_sign(&k, type, 0, s, 0, d, &vote), DSIG_OK);
    bft_begin(&k, type);
    bb_u64(&k.out, 0);
    bb_u64(&k.out, s);
    bb_put(&k.out, d, BFT_DIGEST);
    bft_put_vote(&k.out, &vote);
    if (pp)
        bb_blob16(&k.out, pp->sig, pp->len);
    take_out(&k, out);
    bft_vote_clear(&vote);
    bft_core_free(&k);
}

/* Backup 2 of n = 3f + 1 holds the leader's PRE-PREPARE and is handed valid votes one at a time: it signs
 * COMMIT once 2f PREPAREs (its own included, the leader's never) match, and executes once 2f+1 COMMITs
 * (its own included) match — not one vote before either. */
static void test_pbft_quorums(void **state)
{
    (void)state;
    uint64_t m[3 * QF_MAX + 1];
    const uint64_t cid = NP;
    fake *p = &procs[2];
    bft_buf req, pp, fr;
    bb_init(&req), bb_init(&pp), bb_init(&fr);
    for (size_t f = 1; f <= QF_MAX; f++) {
        size_t n = 3 * f + 1;
        for (size_t i = 0; i < n; i++)
            m[i] = i + 1;
        bft_client *cl;
        assert_int_equal(bft_client_new(&cl, &procs[cid].env, &procs[cid].st, 9, cid, m, n, 500), DSIG_OK);
        uint8_t op[32];
        size_t ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1);
        assert_int_equal(bft_client_submit(cl, op, ol, NULL), DSIG_OK);
        bb_reset(&req);
        bb_put(&req, procs[cid].last.p, procs[cid].last.len);
        bft_replica *leader = replica_of(1, m, n, &cid, NULL), *r2 = replica_of(2, m, n, &cid, NULL);
        procs[1].sent = 0;
        assert_int_equal(bft_replica_receive(leader, cid, req.p, req.len), DSIG_OK);
        assert_int_equal(procs[1].sent, n - 1);
        bb_reset(&pp);
        bb_put(&pp, procs[1].last.p, procs[1].last.len);

        reset_counts(p);
        assert_int_equal(bft_replica_receive(r2, 1, pp.p, pp.len), DSIG_OK);
        assert_int_equal(p->sent_type[BT_PB_PREPARE], n - 1);
        /* its PREPARE names (v, s, d) */
        bft_rd rd;
        int type;
        assert_true(bft_open(bft_replica_core(r2), p->last.p, p->last.len, &type, &rd));
        assert_int_equal(type, BT_PB_PREPARE);
        assert_int_equal(rd_u64(&rd), 0);
        uint64_t s = rd_u64(&rd);
        const uint8_t *dp = rd_take(&rd, BFT_DIGEST);
        assert_non_null(dp);
        uint8_t d[BFT_DIGEST];
        memcpy(d, dp, BFT_DIGEST);
        bft_core lk;
        member_core(&lk, BFT_CLASS_PBFT, 9, 1, m, n);
        bft_vote ppsig = {0};
        assert_int_equal(bft_sign(&lk, BT_PB_PREPREPARE, 0, s, 0, d, &ppsig), DSIG_OK);

        for (uint64_t j = 3; j <= n; j++) {
            pbft_vote_of(m, n, j, BT_PB_PREPARE, s, d, &ppsig, &fr);
            assert_int_equal(bft_replica_receive(r2, j, fr.p, fr.len), DSIG_OK);
            size_t votes = (size_t)j - 2 + 1; /* backups 3..j and its own */
            int commit = votes >= 2 * f;
            if ((p->sent_type[BT_PB_COMMIT] > 0) != commit)
                fail_msg("f=%zu, %zu matching PREPAREs: COMMIT sent %zu times (want %s)", f, votes,
                         p->sent_type[BT_PB_COMMIT], commit ? "n-1" : "none");
        }
        uint64_t seq = 9;
        bft_replica_state(r2, &seq, NULL, NULL);
        assert_int_equal(seq, 0);
        for (uint64_t j = 1, votes = 1; j <= n; j++) {
            if (j == 2)
                continue;
            pbft_vote_of(m, n, j, BT_PB_COMMIT, s, d, NULL, &fr);
            assert_int_equal(bft_replica_receive(r2, j, fr.p, fr.len), DSIG_OK);
            votes++;
            int exec = votes >= 2 * f + 1;
            bft_replica_state(r2, &seq, NULL, NULL);
            if ((seq == s) != exec || (p->sent_type[BT_PB_REPLY] > 0) != exec)
                fail_msg("f=%zu, %llu matching COMMITs: executed up to %llu, %zu REPLYs (want %s)", f,
                         (unsigned long long)votes, (unsigned long long)seq, p->sent_type[BT_PB_REPLY],
                         exec ? "executed" : "not executed");
        }
        assert_int_equal(refusals(&p->st), 0);
        bft_vote_clear(&ppsig);
        bft_core_free(&lk);
        bft_replica_free(leader), bft_replica_free(r2);
        bft_client_free(cl);
    }
    bb_free(&req), bb_free(&pp), bb_free(&fr);
}

/* ---- proofs --------------------------------------------------------------------------------- */

static int proof_verify(void *arg, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig, size_t sl)
{
    (void)arg;
    return f_verify(NULL, signer, stmt, len, sig, sl);
}

static void test_proofs(void **state)
{
    (void)state;
    bft_core c;
    assert_int_equal(bft_core_init(&c, &procs[1].env, &procs[1].st, BFT_CLASS_CBC, 7, 1, members, 4), DSIG_OK);
    uint8_t d1[32] = {1}, d2[32] = {2};
    uint8_t s1[32], s2[32], t[BFT_STMT_BYTES];
    bft_stmt(&c, t, BT_CBC_SEND, 3, 3, 9, 0, d1);
    mac(3, t, sizeof t, s1);
    bft_stmt(&c, t, BT_CBC_SEND, 3, 3, 9, 0, d2);
    mac(3, t, sizeof t, s2);
    procs[1].events = 0;
    bft_evidence(&c, BT_CBC_SEND, 3, 3, 9, 0, d1, s1, 32, d2, s2, 32, 0);
    assert_int_equal(procs[1].events, 1);
    assert_int_equal(procs[1].st.equivocations, 1);
    /* rebuild the proof the event carried */
    bft_buf p;
    bb_init(&p);
    bft_stmt(&c, t, BT_CBC_SEND, 3, 3, 9, 0, d1);
    bb_put(&p, t, sizeof t);
    bb_blob16(&p, s1, 32);
    bft_stmt(&c, t, BT_CBC_SEND, 3, 3, 9, 0, d2);
    bb_put(&p, t, sizeof t);
    bb_blob16(&p, s2, 32);
    uint64_t who = 0;
    assert_int_equal(dsig_bft_proof_check(p.p, p.len, proof_verify, NULL, &who), DSIG_OK);
    assert_int_equal(who, 3);
    /* one bit anywhere: refused (format: not conflicting / cut; verify: a signature) */
    for (size_t i = 0; i < p.len; i++) {
        p.p[i] ^= 0x01;
        assert_int_not_equal(dsig_bft_proof_check(p.p, p.len, proof_verify, NULL, NULL), DSIG_OK);
        p.p[i] ^= 0x01;
    }
    for (size_t cut = 0; cut < p.len; cut++)
        assert_int_equal(dsig_bft_proof_check(p.p, cut, proof_verify, NULL, NULL), DSIG_E_FORMAT);
    /* the same statement twice is no conflict */
    bft_buf q;
    bb_init(&q);
    bb_put(&q, p.p, BFT_STMT_BYTES + 34);
    bb_put(&q, p.p, BFT_STMT_BYTES + 34);
    assert_int_equal(dsig_bft_proof_check(q.p, q.len, proof_verify, NULL, NULL), DSIG_E_FORMAT);
    bb_free(&p);
    bb_free(&q);
    bft_core_free(&c);
}

/* ---- the log file --------------------------------------------------------------------------- */

typedef struct seen {
    int n;
    int type[16];
    size_t len[16];
} seen;

static int collect(void *arg, int type, const uint8_t *p, size_t len)
{
    (void)p;
    seen *s = arg;
    if (s->n < 16) {
        s->type[s->n] = type;
        s->len[s->n] = len;
    }
    s->n++;
    return 0;
}

static void test_store(void **state)
{
    (void)state;
    char dir[] = "/tmp/dsig-bft-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64], tmp[80];
    snprintf(path, sizeof path, "%s/log", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    uint8_t sid[32] = {7}, other[32] = {8}, rec[300];
    memset(rec, 0xAB, sizeof rec);
    bft_store *s;
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    seen x = {0};
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_OK);
    assert_int_equal(x.n, 0);
    for (int i = 1; i <= 3; i++)
        assert_int_equal(bft_store_append(s, i, rec, (size_t)(100 * i)), DSIG_OK);
    assert_int_equal(bft_store_sync(s), DSIG_OK);
    assert_true(bft_store_syncs(s) == 1);
    bft_store_close(s);
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    memset(&x, 0, sizeof x);
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_OK);
    assert_int_equal(x.n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(x.type[i], i + 1);
        assert_int_equal(x.len[i], (size_t)(100 * (i + 1)));
    }
    bft_store_close(s);
    /* a record cut by a crash at the end: dropped, the file truncated, appends go on after it */
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fwrite("\x00\x00\x01\x00\x02partial", 1, 12, f);
    fclose(f);
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    memset(&x, 0, sizeof x);
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_OK);
    assert_int_equal(x.n, 3);
    assert_int_equal(bft_store_append(s, 4, rec, 10), DSIG_OK);
    bft_store_close(s);
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    memset(&x, 0, sizeof x);
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_OK);
    assert_int_equal(x.n, 4);
    bft_store_close(s);
    /* compaction replaces the log atomically */
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_OK);
    assert_int_equal(bft_store_rewrite_begin(s), DSIG_OK);
    assert_int_equal(bft_store_rewrite_add(s, 9, rec, 5), DSIG_OK);
    assert_int_equal(bft_store_rewrite_commit(s), DSIG_OK);
    assert_int_equal(bft_store_append(s, 10, rec, 6), DSIG_OK);
    bft_store_close(s);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    memset(&x, 0, sizeof x);
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_OK);
    assert_int_equal(x.n, 2);
    assert_int_equal(x.type[0], 9);
    assert_int_equal(x.type[1], 10);
    bft_store_close(s);
    /* damage in the middle: refused, nothing truncated */
    f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 48 + 6, SEEK_SET);
    fputc(0x55, f);
    fclose(f);
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_E_FORMAT);
    bft_store_close(s);
    /* another deployment's log, and a file that is no log */
    unlink(path);
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    bft_store_close(s);
    assert_int_equal(bft_store_open(&s, path, other, 1), DSIG_OK);
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_E_FORMAT);
    bft_store_close(s);
    f = fopen(path, "wb");
    fputs("not a log", f);
    fclose(f);
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_OK);
    assert_int_equal(bft_store_load(s, collect, &x), DSIG_E_FORMAT);
    bft_store_close(s);
    /* a symlink is not followed */
    unlink(path);
    char target[80];
    snprintf(target, sizeof target, "%s/target", dir);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(bft_store_open(&s, path, sid, 1), DSIG_E_IO);
    unlink(path);
    unlink(target);
    rmdir(dir);
}

/* ---- the key-value store -------------------------------------------------------------------- */

static void test_kv(void **state)
{
    (void)state;
    uint64_t cl[2] = {5, 6};
    bft_kv kv, kv2;
    assert_int_equal(kv_init(&kv, cl, 2), DSIG_OK);
    assert_int_equal(kv_init(&kv2, cl, 2), DSIG_OK);
    uint8_t op[400], res[DSIG_BFT_MAX_RESULT];
    size_t ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_GET, (const uint8_t *)"a", 1, NULL, 0);
    assert_int_equal(kv_apply(&kv, op, ol, res), 1);
    assert_int_equal(res[0], DSIG_BFT_KV_NOT_FOUND);
    ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, (const uint8_t *)"a", 1, (const uint8_t *)"xyz", 3);
    assert_int_equal(kv_apply(&kv, op, ol, res), 1);
    assert_int_equal(res[0], DSIG_BFT_KV_OK);
    ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, (const uint8_t *)"bb", 2, (const uint8_t *)"1", 1);
    assert_int_equal(kv_apply(&kv, op, ol, res), 1);
    ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_GET, (const uint8_t *)"a", 1, NULL, 0);
    assert_int_equal(kv_apply(&kv, op, ol, res), 4);
    assert_memory_equal(res + 1, "xyz", 3);
    ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_DEL, (const uint8_t *)"bb", 2, NULL, 0);
    assert_int_equal(kv_apply(&kv, op, ol, res), 1);
    assert_int_equal(res[0], DSIG_BFT_KV_OK);
    /* anything else is an operation too, with a deterministic refusal */
    assert_int_equal(kv_apply(&kv, (const uint8_t *)"\x09\x01k", 3, res), 1);
    assert_int_equal(res[0], DSIG_BFT_KV_BAD_OP);
    assert_int_equal(kv_apply(&kv, (const uint8_t *)"\x01\x40k", 3, res), 1);
    assert_int_equal(res[0], DSIG_BFT_KV_BAD_OP);
    /* op builder bounds */
    uint8_t big[300] = {0};
    assert_int_equal(dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, big, 65, NULL, 0), 0);
    assert_int_equal(dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, big, 1, big, 257), 0);
    assert_int_equal(dsig_bft_kv_op(op, 3, DSIG_BFT_KV_PUT, big, 1, big, 2), 0);
    assert_int_equal(dsig_bft_kv_op(op, sizeof op, 7, big, 1, NULL, 0), 0);
    /* snapshot: round trip with the same digest; every cut and flip of it refused or different */
    kv_client_of(&kv, 6)->t = 42;
    bft_buf snap, snap2;
    bb_init(&snap), bb_init(&snap2);
    kv_snapshot(&kv, &snap);
    assert_int_equal(kv_restore(&kv2, snap.p, snap.len), 0);
    kv_snapshot(&kv2, &snap2);
    assert_int_equal(snap.len, snap2.len);
    assert_memory_equal(snap.p, snap2.p, snap.len);
    for (size_t cut = 0; cut < snap.len; cut++)
        assert_int_equal(kv_restore(&kv2, snap.p, cut), -1);
    bft_kv other;
    uint64_t cl3[1] = {5};
    assert_int_equal(kv_init(&other, cl3, 1), DSIG_OK);
    assert_int_equal(kv_restore(&other, snap.p, snap.len), -1); /* another client table */
    kv_free(&other);
    bb_free(&snap), bb_free(&snap2);
    kv_free(&kv), kv_free(&kv2);
}

int main(void)
{
    assert_int_equal(dsig_init(), DSIG_OK);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_statement_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cbc_send_mutations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cbc_echo_and_final_mutations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pbft_mutations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rbc_ready_quorum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pbft_quorums, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proofs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kv, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
