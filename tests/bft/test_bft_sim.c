/*
 * tests/bft/test_bft_sim.c — the property test of docs/bft.md: the protocol cores (src/bft) in one
 * process over a simulated network that delivers messages in random order, loses and duplicates them,
 * with one Byzantine process (two for n = 7 in some runs) that equivocates (SEND of two values, the
 * leader's PRE-PREPARE of two requests), runs as two honest twins that broadcast different values to
 * the two halves of the members and gather a quorum for each, goes silent, and injects garbage,
 * replays, mutations and votes moved to other instances. Many seeds within a time budget (DSIG_BFT_SIM_SECONDS, default 20).
 *
 * Checked on every run: no two honest processes deliver different values for one broadcast instance,
 * or execute different histories; no process delivers an instance twice; every equivocation proof
 * checks and names a Byzantine process; honest processes refuse and count what the Byzantine one
 * injects. After a fair phase (no loss): every honest broadcast is delivered by every honest member,
 * reliable broadcast is total, and the client gets every result, each the one the sequential
 * specification of the key-value store gives. Replication runs may also crash an honest replica and
 * restart it from its log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bft/bft.h"
#include "bft/pbft.h"
#include "byz.h"
#include "dsig/dsig.h"
#include "hash/blake3.h"

#define MAXP 9
#define K_BCAST 4
#define N_REQ 24
#define MAX_SEQ 4096
#define CAPTURE 32

/* BYZ_TWIN (broadcast protocols): the process runs two honest cores under its one key, each talking
 * to one half of the others (even / odd index), and broadcasts different values from them: each core
 * gathers echoes and readies for its own value, so a quorum rule too weak to intersect in an honest
 * member lets the two halves deliver different values. */
enum { BYZ_EQUIVOCATE = 1, BYZ_SILENT = 2, BYZ_TWIN = 3 };

typedef struct sim sim;

typedef struct deliv {
    uint64_t origin, k;
    uint8_t d[32];
} deliv;

typedef struct sproc {
    sim *S;
    int idx;
    uint64_t id;
    int byz, crashed, is_client;
    bft_env env;
    dsig_bft_stats st;
    void *core;
    void *twin;                 /* BYZ_TWIN: the core of the odd half */
    bft_env twin_env;
    dsig_bft_stats twin_st;
    uint8_t key[32];
    dsig_key *ed, *ed_pub;
    deliv dl[MAXP * K_BCAST * 2];
    size_t n_dl;
    uint8_t hist[MAX_SEQ][32];
    uint8_t have_hist[MAX_SEQ];
    uint64_t last_seq;
    bft_buf cap[CAPTURE];
    size_t n_cap;
    char log_path[256];
} sproc;

typedef struct msg {
    uint64_t from, to;
    uint8_t *p;
    size_t len;
} msg;

struct sim {
    uint64_t rng, now, seed;
    int protocol;
    size_t n, np;               /* members, processes (members + client) */
    uint64_t members[MAXP];
    sproc p[MAXP + 1];
    msg *q;
    size_t nq, capq;
    unsigned loss, dup;         /* per mille */
    int ed25519;
    int byz_mode;
    /* client */
    unsigned req_done, req_sent;
    int client_ready;
    uint8_t expect[N_REQ][8];   /* GET results expected */
    uint8_t last_val[8][8];
    int have_val[8];
    /* counts */
    unsigned evidence, views;
    char dir[128];
};

static const dsig_alg *ed_alg;

static sproc *by_id(sim *S, uint64_t id)
{
    for (size_t i = 0; i < S->np; i++)
        if (S->p[i].id == id)
            return &S->p[i];
    return NULL;
}

/* ---- env ------------------------------------------------------------------------------------ */

static void push(sim *S, uint64_t from, uint64_t to, const uint8_t *f, size_t len)
{
    if (S->nq == S->capq) {
        S->capq = S->capq ? 2 * S->capq : 1024;
        S->q = realloc(S->q, S->capq * sizeof *S->q);
        assert_non_null(S->q);
    }
    msg *m = &S->q[S->nq++];
    m->from = from;
    m->to = to;
    m->p = malloc(len);
    assert_non_null(m->p);
    memcpy(m->p, f, len);
    m->len = len;
}

static int sim_sign_raw(sproc *P, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sl)
{
    if (P->S->ed25519)
        return dsig_sign(ed_alg, P->ed, stmt, len, sig, cap, sl);
    dsig_blake3_hasher h;
    dsig_blake3_init_keyed(&h, P->key);
    dsig_blake3_update(&h, stmt, len);
    dsig_blake3_finalize(&h, sig, 32);
    *sl = 32;
    return DSIG_OK;
}

static int byz_sign(void *arg, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sl)
{
    return sim_sign_raw(arg, stmt, len, sig, cap, sl);
}

static bft_core *core_of(sproc *P)
{
    switch (P->S->protocol) {
    case DSIG_BFT_CBC: return bft_cbc_core(P->core);
    case DSIG_BFT_RBC: return bft_rbc_core(P->core);
    default: return P->is_client ? bft_client_core(P->core) : bft_replica_core(P->core);
    }
}

static void env_send(void *ctx, uint64_t to, const uint8_t *f, size_t len)
{
    sproc *P = ctx;
    sim *S = P->S;
    if (P->crashed)
        return;
    if (P->byz == BYZ_SILENT)
        return;
    if (P->byz == BYZ_TWIN) {
        sproc *T = by_id(S, to);
        if (T && T->idx % 2) /* the twin core talks to the odd half */
            return;
    }
    if (P->byz == BYZ_EQUIVOCATE) {
        sproc *T = by_id(S, to);
        if (T && T->idx % 2) {
            bft_buf twin;
            bb_init(&twin);
            if (byz_equivocate(core_of(P), byz_sign, P, f, len, &twin) == 1) {
                push(S, P->id, to, twin.p, twin.len);
                bb_free(&twin);
                return;
            }
            bb_free(&twin);
        }
    }
    push(S, P->id, to, f, len);
}

static void twin_send(void *ctx, uint64_t to, const uint8_t *f, size_t len)
{
    sproc *P = ctx;
    sproc *T = by_id(P->S, to);
    if (!P->crashed && T && T->idx % 2)
        push(P->S, P->id, to, f, len);
}

/* The twin core's events: a Byzantine process's own deliveries and proofs are not checked. */
static void twin_event(void *ctx, const dsig_bft_event *ev)
{
    (void)ctx;
    (void)ev;
}

static int env_sign(void *ctx, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sl)
{
    return sim_sign_raw(ctx, stmt, len, sig, cap, sl);
}

static int sim_verify(sim *S, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig, size_t sl)
{
    sproc *Q = by_id(S, signer);
    if (!Q)
        return DSIG_E_UNKNOWN_SIGNER;
    if (S->ed25519)
        return dsig_verify(ed_alg, Q->ed_pub, stmt, len, sig, sl);
    uint8_t want[32];
    dsig_blake3_hasher h;
    dsig_blake3_init_keyed(&h, Q->key);
    dsig_blake3_update(&h, stmt, len);
    dsig_blake3_finalize(&h, want, 32);
    return sl == 32 && memcmp(want, sig, 32) == 0 ? DSIG_OK : DSIG_E_VERIFY;
}

static int env_verify(void *ctx, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig, size_t sl)
{
    sproc *P = ctx;
    return sim_verify(P->S, signer, stmt, len, sig, sl);
}

static int proof_verify(void *arg, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig, size_t sl)
{
    return sim_verify(arg, signer, stmt, len, sig, sl);
}

static uint64_t env_now(void *ctx)
{
    return ((sproc *)ctx)->S->now;
}

static void env_event(void *ctx, const dsig_bft_event *ev)
{
    sproc *P = ctx;
    sim *S = P->S;
    switch (ev->kind) {
    case DSIG_BFT_EV_DELIVER:
        for (size_t i = 0; i < P->n_dl; i++)
            if (P->dl[i].origin == ev->origin && P->dl[i].k == ev->instance)
                fail_msg("seed %llu: process %llu delivered (%llu, %llu) twice", (unsigned long long)S->seed,
                         (unsigned long long)P->id, (unsigned long long)ev->origin, (unsigned long long)ev->instance);
        assert_true(P->n_dl < sizeof P->dl / sizeof P->dl[0]);
        P->dl[P->n_dl].origin = ev->origin;
        P->dl[P->n_dl].k = ev->instance;
        memcpy(P->dl[P->n_dl].d, ev->digest, 32);
        P->n_dl++;
        break;
    case DSIG_BFT_EV_DECIDE:
        assert_true(ev->instance < MAX_SEQ);
        if (ev->instance <= P->last_seq)
            fail_msg("seed %llu: replica %llu executed seq %llu after %llu", (unsigned long long)S->seed,
                     (unsigned long long)P->id, (unsigned long long)ev->instance, (unsigned long long)P->last_seq);
        memcpy(P->hist[ev->instance], ev->digest, 32);
        P->have_hist[ev->instance] = 1;
        P->last_seq = ev->instance;
        break;
    case DSIG_BFT_EV_REPLY: {
        unsigned i = S->req_done;
        assert_true(i < N_REQ);
        /* odd requests are GETs of the key the previous PUT wrote */
        if (i % 2 == 1) {
            if (ev->value_len != 9 || ev->value[0] != DSIG_BFT_KV_OK || memcmp(ev->value + 1, S->expect[i], 8) != 0)
                fail_msg("seed %llu: GET %u returned a wrong result (%zu bytes)", (unsigned long long)S->seed, i,
                         ev->value_len);
        } else if (ev->value_len != 1 || ev->value[0] != DSIG_BFT_KV_OK) {
            fail_msg("seed %llu: PUT %u failed", (unsigned long long)S->seed, i);
        }
        S->req_done++;
        S->client_ready = 1;
        break;
    }
    case DSIG_BFT_EV_EVIDENCE: {
        uint64_t culprit = 0;
        assert_int_equal(dsig_bft_proof_check(ev->proof, ev->proof_len, proof_verify, S, &culprit), DSIG_OK);
        sproc *C = by_id(S, culprit);
        if (!C || !C->byz)
            fail_msg("seed %llu: process %llu accused an honest process %llu", (unsigned long long)S->seed,
                     (unsigned long long)P->id, (unsigned long long)culprit);
        S->evidence++;
        break;
    }
    case DSIG_BFT_EV_VIEW:
        S->views++;
        break;
    default:
        break;
    }
}

/* ---- processes ------------------------------------------------------------------------------ */

static void proc_core_new(sim *S, sproc *P)
{
    int rc;
    switch (S->protocol) {
    case DSIG_BFT_CBC:
        rc = bft_cbc_new((bft_cbc **)&P->core, &P->env, &P->st, S->seed, P->id, S->members, S->n, 50);
        break;
    case DSIG_BFT_RBC:
        rc = bft_rbc_new((bft_rbc **)&P->core, &P->env, &P->st, S->seed, P->id, S->members, S->n, 50);
        break;
    default:
        if (P->is_client) {
            rc = bft_client_new((bft_client **)&P->core, &P->env, &P->st, S->seed, P->id, S->members, S->n, 400);
        } else {
            uint64_t client = S->p[S->np - 1].id;
            bft_replica_cfg cfg = {.session = S->seed, .self = P->id, .members = S->members, .n = S->n,
                                   .clients = &client, .n_clients = 1, .retransmit_ms = 50,
                                   .view_timeout_ms = 300, .checkpoint_interval = 4,
                                   .log_path = P->log_path[0] ? P->log_path : NULL, .durable = 0};
            rc = bft_replica_new((bft_replica **)&P->core, &P->env, &P->st, &cfg);
        }
    }
    if (rc == DSIG_OK && P->byz == BYZ_TWIN) {
        P->twin_env = P->env;
        P->twin_env.send = twin_send;
        P->twin_env.event = twin_event;
        rc = S->protocol == DSIG_BFT_CBC
                 ? bft_cbc_new((bft_cbc **)&P->twin, &P->twin_env, &P->twin_st, S->seed, P->id, S->members, S->n, 50)
                 : bft_rbc_new((bft_rbc **)&P->twin, &P->twin_env, &P->twin_st, S->seed, P->id, S->members, S->n, 50);
    }
    if (rc != DSIG_OK)
        fail_msg("seed %llu: core of %llu: %s", (unsigned long long)S->seed, (unsigned long long)P->id,
                 dsig_last_error_detail());
}

static void proc_core_free(sim *S, sproc *P)
{
    switch (S->protocol) {
    case DSIG_BFT_CBC: bft_cbc_free(P->core), bft_cbc_free(P->twin); break;
    case DSIG_BFT_RBC: bft_rbc_free(P->core), bft_rbc_free(P->twin); break;
    default:
        if (P->is_client)
            bft_client_free(P->core);
        else
            bft_replica_free(P->core);
    }
    P->core = P->twin = NULL;
}

static void deliver(sim *S, const msg *m)
{
    sproc *P = by_id(S, m->to);
    if (!P || P->crashed)
        return;
    if (P->byz) {
        bft_buf *c = &P->cap[P->n_cap < CAPTURE ? P->n_cap++ : byz_rand(&S->rng) % CAPTURE];
        bb_reset(c);
        bb_put(c, m->p, m->len);
    }
    int rc;
    const sproc *F = by_id(S, m->from);
    void *core = P->twin && F && F->idx % 2 ? P->twin : P->core; /* each half talks to its own core */
    switch (S->protocol) {
    case DSIG_BFT_CBC: rc = bft_cbc_receive(core, m->from, m->p, m->len); break;
    case DSIG_BFT_RBC: rc = bft_rbc_receive(core, m->from, m->p, m->len); break;
    default:
        rc = P->is_client ? bft_client_receive(P->core, m->from, m->p, m->len)
                          : bft_replica_receive(P->core, m->from, m->p, m->len);
    }
    assert_int_equal(rc, DSIG_OK); /* every frame is of this session */
}

static void tick_all(sim *S)
{
    for (size_t i = 0; i < S->np; i++) {
        sproc *P = &S->p[i];
        if (P->crashed)
            continue;
        switch (S->protocol) {
        case DSIG_BFT_CBC: bft_cbc_tick(P->core); if (P->twin) bft_cbc_tick(P->twin); break;
        case DSIG_BFT_RBC: bft_rbc_tick(P->core); if (P->twin) bft_rbc_tick(P->twin); break;
        default:
            if (P->is_client)
                bft_client_tick(P->core);
            else
                bft_replica_tick(P->core);
        }
        if (P->byz && byz_rand(&S->rng) % 4 == 0) {
            bft_buf f;
            bb_init(&f);
            int cls = S->protocol == DSIG_BFT_CBC ? BFT_CLASS_CBC : S->protocol == DSIG_BFT_RBC ? BFT_CLASS_RBC
                                                                                               : BFT_CLASS_PBFT;
            byz_inject(core_of(P), cls, &S->rng, P->cap, P->n_cap, &f);
            uint64_t to = S->p[byz_rand(&S->rng) % S->np].id;
            if (to != P->id && !f.err)
                push(S, P->id, to, f.p, f.len);
            bb_free(&f);
        }
    }
}

/* Client: the next request (PUT of request i at even i, GET of that key at odd i). */
static void client_next(sim *S)
{
    sproc *C = &S->p[S->np - 1];
    unsigned i = S->req_done;
    if (!S->client_ready || i >= N_REQ || C->crashed)
        return;
    uint8_t key[1] = {(uint8_t)('a' + (i / 2) % 8)}, val[8], op[64];
    size_t len;
    for (int b = 0; b < 8; b++)
        val[b] = (uint8_t)byz_rand(&S->rng);
    if (i % 2 == 0) {
        len = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, key, 1, val, 8);
        memcpy(S->expect[i + 1 < N_REQ ? i + 1 : i], val, 8);
    } else {
        len = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_GET, key, 1, NULL, 0);
    }
    assert_int_equal(bft_client_submit(C->core, op, len, NULL), DSIG_OK);
    S->client_ready = 0;
    S->req_sent++;
}

/* One step: deliver a random message (lost / duplicated by chance), or let a millisecond pass. */
static void step(sim *S, int fair)
{
    if (S->nq && byz_rand(&S->rng) % 16) {
        size_t i = (size_t)(byz_rand(&S->rng) % S->nq);
        msg m = S->q[i];
        S->q[i] = S->q[--S->nq];
        if (!fair && byz_rand(&S->rng) % 1000 < S->dup)
            push(S, m.from, m.to, m.p, m.len);
        if (fair || byz_rand(&S->rng) % 1000 >= S->loss)
            deliver(S, &m);
        free(m.p);
    } else {
        S->now++;
        if (S->now % 10 == 0)
            tick_all(S);
    }
    if (S->protocol == DSIG_BFT_REPLICA)
        client_next(S);
}

static void sim_setup(sim *S, int protocol, size_t n, uint64_t seed)
{
    memset(S, 0, sizeof *S);
    S->seed = seed;
    S->rng = seed * 0x2545F4914F6CDD1Dull + 1;
    S->protocol = protocol;
    S->n = n;
    S->np = n + (protocol == DSIG_BFT_REPLICA);
    S->now = 1000;
    S->loss = (unsigned)(byz_rand(&S->rng) % 200);
    S->dup = (unsigned)(byz_rand(&S->rng) % 50);
    S->ed25519 = byz_rand(&S->rng) % 8 == 0;
    unsigned mode = (unsigned)(byz_rand(&S->rng) % 4);
    S->byz_mode = mode == 0 ? BYZ_SILENT : mode == 1 && protocol != DSIG_BFT_REPLICA ? BYZ_TWIN : BYZ_EQUIVOCATE;
    S->client_ready = 1;
    for (size_t i = 0; i < S->np; i++) {
        sproc *P = &S->p[i];
        P->S = S;
        P->idx = (int)i;
        P->id = 10 + i * 3; /* ids unrelated to indexes */
        if (i < n)
            S->members[i] = P->id;
        P->is_client = i >= n;
        P->env = (bft_env){.ctx = P, .send = env_send, .sign = env_sign, .verify = env_verify, .event = env_event,
                           .now_ms = env_now, .sig_max = S->ed25519 ? 64 : 32};
        for (int b = 0; b < 32; b += 8) {
            uint64_t x = byz_rand(&S->rng);
            memcpy(P->key + b, &x, 8);
        }
        if (S->ed25519) {
            assert_int_equal(dsig_key_generate(&P->ed, ed_alg, NULL), DSIG_OK);
            assert_int_equal(dsig_key_public(&P->ed_pub, P->ed), DSIG_OK);
        }
    }
    /* the Byzantine member(s): any, the leader of view 0 included */
    size_t b1 = (size_t)(byz_rand(&S->rng) % n);
    S->p[b1].byz = S->byz_mode;
    if (n >= 7 && byz_rand(&S->rng) % 2) {
        size_t b2 = (b1 + 1 + byz_rand(&S->rng) % (n - 1)) % n;
        S->p[b2].byz = BYZ_EQUIVOCATE;
    }
}

static void sim_teardown(sim *S)
{
    for (size_t i = 0; i < S->np; i++) {
        sproc *P = &S->p[i];
        if (P->core)
            proc_core_free(S, P);
        for (size_t k = 0; k < CAPTURE; k++)
            bb_free(&P->cap[k]);
        dsig_key_free(P->ed);
        dsig_key_free(P->ed_pub);
        if (P->log_path[0]) {
            unlink(P->log_path);
            char tmp[300];
            snprintf(tmp, sizeof tmp, "%s.tmp", P->log_path);
            unlink(tmp);
        }
    }
    for (size_t i = 0; i < S->nq; i++)
        free(S->q[i].p);
    free(S->q);
    if (S->dir[0])
        rmdir(S->dir);
}

/* ---- checks --------------------------------------------------------------------------------- */

static void check_broadcast(sim *S, int final)
{
    if (S->protocol == DSIG_BFT_REPLICA)
        return;
    for (size_t i = 0; i < S->n; i++) {
        sproc *A = &S->p[i];
        if (A->byz)
            continue;
        for (size_t j = i + 1; j < S->n; j++) {
            sproc *B = &S->p[j];
            if (B->byz)
                continue;
            for (size_t x = 0; x < A->n_dl; x++)
                for (size_t y = 0; y < B->n_dl; y++)
                    if (A->dl[x].origin == B->dl[y].origin && A->dl[x].k == B->dl[y].k &&
                        memcmp(A->dl[x].d, B->dl[y].d, 32) != 0)
                        fail_msg("seed %llu: %llu and %llu delivered different values for (%llu, %llu)",
                                 (unsigned long long)S->seed, (unsigned long long)A->id, (unsigned long long)B->id,
                                 (unsigned long long)A->dl[x].origin, (unsigned long long)A->dl[x].k);
        }
    }
    if (!final)
        return;
    for (size_t i = 0; i < S->n; i++) {
        sproc *A = &S->p[i];
        if (A->byz)
            continue;
        /* validity: every honest origin's broadcasts */
        for (size_t o = 0; o < S->n; o++) {
            if (S->p[o].byz)
                continue;
            for (uint64_t k = 1; k <= K_BCAST; k++) {
                int got = 0;
                for (size_t x = 0; x < A->n_dl; x++)
                    got |= A->dl[x].origin == S->p[o].id && A->dl[x].k == k;
                if (!got)
                    fail_msg("seed %llu: %llu never delivered (%llu, %llu)", (unsigned long long)S->seed,
                             (unsigned long long)A->id, (unsigned long long)S->p[o].id, (unsigned long long)k);
            }
        }
        /* totality of reliable broadcast: what one honest member delivered, all did */
        if (S->protocol != DSIG_BFT_RBC)
            continue;
        for (size_t j = 0; j < S->n; j++) {
            sproc *B = &S->p[j];
            if (B->byz)
                continue;
            for (size_t y = 0; y < B->n_dl; y++) {
                int got = 0;
                for (size_t x = 0; x < A->n_dl; x++)
                    got |= A->dl[x].origin == B->dl[y].origin && A->dl[x].k == B->dl[y].k;
                if (!got)
                    fail_msg("seed %llu: totality: %llu delivered (%llu, %llu), %llu did not",
                             (unsigned long long)S->seed, (unsigned long long)B->id,
                             (unsigned long long)B->dl[y].origin, (unsigned long long)B->dl[y].k,
                             (unsigned long long)A->id);
            }
        }
    }
}

static void check_replication(sim *S)
{
    for (size_t i = 0; i < S->n; i++) {
        sproc *A = &S->p[i];
        if (A->byz)
            continue;
        for (size_t j = i + 1; j < S->n; j++) {
            sproc *B = &S->p[j];
            if (B->byz)
                continue;
            for (uint64_t s = 1; s < MAX_SEQ; s++)
                if (A->have_hist[s] && B->have_hist[s] && memcmp(A->hist[s], B->hist[s], 32) != 0)
                    fail_msg("seed %llu: replicas %llu and %llu differ at seq %llu", (unsigned long long)S->seed,
                             (unsigned long long)A->id, (unsigned long long)B->id, (unsigned long long)s);
        }
    }
}

/* Honest processes refused something (the injection reaches every parser sooner or later). */
static uint64_t honest_refusals(sim *S)
{
    uint64_t n = 0;
    for (size_t i = 0; i < S->np; i++)
        if (!S->p[i].byz)
            n += S->p[i].st.malformed + S->p[i].st.forged + S->p[i].st.replayed;
    return n;
}

static int workload_done(sim *S)
{
    if (S->protocol == DSIG_BFT_REPLICA)
        return S->req_done == N_REQ;
    for (size_t i = 0; i < S->n; i++) {
        sproc *A = &S->p[i];
        if (A->byz)
            continue;
        size_t want = 0;
        for (size_t o = 0; o < S->n; o++)
            want += S->p[o].byz ? 0 : K_BCAST;
        size_t have = 0;
        for (size_t x = 0; x < A->n_dl; x++)
            have += !by_id(S, A->dl[x].origin)->byz;
        if (have < want)
            return 0;
    }
    return 1;
}

/* One run; returns 1 when the Byzantine process's equivocation was proven somewhere. */
static int run(int protocol, size_t n, uint64_t seed)
{
    sim S;
    sim_setup(&S, protocol, n, seed);
    int restart = protocol == DSIG_BFT_REPLICA && seed % 3 == 0;
    sproc *victim = NULL;
    if (restart) {
        snprintf(S.dir, sizeof S.dir, "%s/dsig-bft-sim-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        assert_non_null(mkdtemp(S.dir));
        for (size_t i = 0; i < n && !victim; i++)
            if (!S.p[(i + seed) % n].byz)
                victim = &S.p[(i + seed) % n];
        if (victim)
            snprintf(victim->log_path, sizeof victim->log_path, "%s/r%llu.log", S.dir, (unsigned long long)victim->id);
    }
    for (size_t i = 0; i < S.np; i++)
        proc_core_new(&S, &S.p[i]);
    if (protocol != DSIG_BFT_REPLICA) {
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < K_BCAST; k++) {
                uint8_t v[8];
                for (int b = 0; b < 8; b++)
                    v[b] = (uint8_t)byz_rand(&S.rng);
                int rc = protocol == DSIG_BFT_CBC ? bft_cbc_broadcast(S.p[i].core, v, 8, NULL)
                                                  : bft_rbc_broadcast(S.p[i].core, v, 8, NULL);
                assert_int_equal(rc, DSIG_OK);
                if (S.p[i].twin) { /* the same instance, another value, to the other half */
                    v[0] ^= 0x80;
                    rc = protocol == DSIG_BFT_CBC ? bft_cbc_broadcast(S.p[i].twin, v, 8, NULL)
                                                  : bft_rbc_broadcast(S.p[i].twin, v, 8, NULL);
                    assert_int_equal(rc, DSIG_OK);
                }
            }
    }
    /* phase 1: adversarial schedule */
    for (unsigned t = 0; t < 40000; t++) {
        step(&S, 0);
        if (victim && t == 8000) {
            proc_core_free(&S, victim); /* a crash: its log stays */
            victim->crashed = 1;
        }
        if (victim && t == 20000) {
            victim->crashed = 0;
            proc_core_new(&S, victim);
        }
    }
    if (victim && victim->crashed) {
        victim->crashed = 0;
        proc_core_new(&S, victim);
    }
    check_broadcast(&S, 0);
    check_replication(&S);
    /* phase 2: fair (nothing lost) until the workload is done */
    for (unsigned t = 0; t < 600000 && !workload_done(&S); t++)
        step(&S, 1);
    if (!workload_done(&S) && protocol == DSIG_BFT_REPLICA) {
        for (size_t i = 0; i < n; i++) {
            bft_replica *R = S.p[i].core;
            print_message("replica %llu byz %d: view %llu vc %d target %llu attempt %u h %llu last_exec %llu next %llu "
                          "fetch_until %llu fetch_view %d pend %d q %zu\n",
                          (unsigned long long)S.p[i].id, S.p[i].byz, (unsigned long long)R->view, R->vc,
                          (unsigned long long)R->vc_target, R->attempt, (unsigned long long)R->h,
                          (unsigned long long)R->last_exec, (unsigned long long)R->next_seq,
                          (unsigned long long)R->fetch_until, R->fetch_view, R->pend[0].used, S.nq);
            for (size_t j = 0; j < n; j++)
                print_message("   vcs[%zu].v=%llu seen %llu\n", j, (unsigned long long)R->vcs[j].v,
                              (unsigned long long)R->seen_view[j]);
        }
    }
    if (!workload_done(&S))
        fail_msg("seed %llu: protocol %d n=%zu: the workload did not finish (requests %u/%u, loss %u, byz mode %d)",
                 (unsigned long long)seed, protocol, n, S.req_done, N_REQ, S.loss, S.byz_mode);
    /* drain what is in flight, so late deliveries are checked too */
    for (unsigned t = 0; t < 20000; t++)
        step(&S, 1);
    check_broadcast(&S, 1);
    check_replication(&S);
    assert_true(honest_refusals(&S) > 0);
    if (getenv("DSIG_BFT_SIM_VERBOSE")) {
        dsig_bft_stats t = {0};
        for (size_t i = 0; i < S.np; i++) {
            const dsig_bft_stats *x = &S.p[i].st;
            t.malformed += x->malformed, t.forged += x->forged, t.replayed += x->replayed;
            t.delivered += x->delivered, t.decided += x->decided, t.views_entered += x->views_entered;
            t.fetched += x->fetched, t.checkpoints += x->checkpoints, t.retransmits += x->retransmits;
            t.equivocations += x->equivocations;
        }
        print_message("seed %llu p%d n%zu loss %u byz %d ed %d restart %d: deliv %llu dec %llu views %llu "
                      "fetched %llu ckpt %llu rtx %llu mal %llu forged %llu replay %llu equiv %llu t=%llu\n",
                      (unsigned long long)seed, protocol, n, S.loss, S.byz_mode, S.ed25519, victim != NULL,
                      (unsigned long long)t.delivered, (unsigned long long)t.decided,
                      (unsigned long long)t.views_entered, (unsigned long long)t.fetched,
                      (unsigned long long)t.checkpoints, (unsigned long long)t.retransmits,
                      (unsigned long long)t.malformed, (unsigned long long)t.forged,
                      (unsigned long long)t.replayed, (unsigned long long)t.equivocations,
                      (unsigned long long)S.now);
    }
    int proven = S.evidence > 0;
    sim_teardown(&S);
    return proven;
}

static double budget_s(void)
{
    const char *e = getenv("DSIG_BFT_SIM_SECONDS");
    double v = e ? atof(e) : 20.0;
    return v > 0 ? v : 20.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_random_schedules(void **state)
{
    (void)state;
    ed_alg = dsig_alg_by_name("Ed25519");
    assert_non_null(ed_alg);
    static const int protos[] = {DSIG_BFT_CBC, DSIG_BFT_RBC, DSIG_BFT_REPLICA};
    static const size_t ns[] = {4, 7};
    double t0 = now_s(), budget = budget_s();
    unsigned runs[3][2] = {{0}}, proven[3] = {0};
    uint64_t seed = 1;
    if (getenv("DSIG_BFT_SIM_SEED")) { /* one run, to debug it */
        int p = atoi(getenv("DSIG_BFT_SIM_PROTO") ? getenv("DSIG_BFT_SIM_PROTO") : "3");
        run(p, (size_t)atoi(getenv("DSIG_BFT_SIM_N") ? getenv("DSIG_BFT_SIM_N") : "4"),
            strtoull(getenv("DSIG_BFT_SIM_SEED"), NULL, 10));
        return;
    }
    for (;;) {
        int more = 0;
        for (int p = 0; p < 3; p++)
            for (int k = 0; k < 2; k++) {
                if (runs[p][k] >= 3 && now_s() - t0 > budget)
                    continue;
                more = 1;
                proven[p] += (unsigned)run(protos[p], ns[k], seed++);
                runs[p][k]++;
            }
        if (!more)
            break;
    }
    for (int p = 0; p < 3; p++)
        print_message("protocol %d: %u runs with n=4, %u with n=7; equivocation proven in %u\n", protos[p], runs[p][0],
                      runs[p][1], proven[p]);
    /* the Byzantine process equivocates in most runs: detection must have happened in some */
    for (int p = 0; p < 3; p++)
        assert_true(proven[p] > 0);
}

int main(void)
{
    assert_int_equal(dsig_init(), DSIG_OK);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_schedules)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
