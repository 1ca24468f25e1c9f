/*
 * src/pq/xmss/xmss_traversal.c — XMSS / XMSS^MT key generation and tree traversal: the nodes every
 * layer keeps for authentication paths, the incremental builders of the next subtrees, and the signing
 * step that emits the authentication paths (RFC 8391 §4.1.9, §4.2.4 without the layer-0 WOTS+ part).
 *
 * Every layer keeps the nodes its current tree needs for authentication paths — the levels split..t of
 * the whole tree ("top") and all nodes of the current bottom subtree of height split ("bot") — and two
 * incremental tree-hash builders: the next bottom subtree and (when split < t) the top of the next
 * tree. Each signature advances the builders by ceil(remaining leaves / remaining signatures) leaves,
 * so a builder is complete exactly when its subtree becomes current and a signature never recomputes
 * a tree (one leaf per layer per signature in the steady state). For t <= 10 the split is t: the
 * whole tree is stored (2^(t+1) nodes) and XMSS-*_10 signing does no tree work at all.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "dsig/mem.h"
#include "pq/xmss/xmss_internal.h"

unsigned dsig_xmss_test_split;

/* Incremental tree hash over leaves [start, start+count) of one tree, storing completed nodes:
 * levels < split into `bot` (a bottom subtree's layout), levels >= split into `top`. */
typedef struct builder {
    int active;
    unsigned layer;
    uint64_t tree;
    uint32_t start, count, done, bsub;
    uint8_t *top, *bot;
    unsigned sp;
    uint8_t sh[XMSS_TMAX + 1];
    uint8_t stack[(XMSS_TMAX + 1) * XMSS_NMAX];
} builder;

typedef struct layer_state {
    uint8_t *top, *ntop, *bot, *nbot; /* current and next node stores */
    uint8_t *wsig;                    /* layers >= 1: WOTS+ signature of the layer below's root */
    uint64_t cur_p;                   /* leaf position (global over this layer's trees) */
    uint64_t wsig_for;                /* cur_p the wsig was made for (UINT64_MAX: none) */
    builder bb;                       /* next bottom subtree */
    builder bt;                       /* top of the next tree (split < t) */
} layer_state;

struct dsig_xmss_trav {
    const dsig_xmss_params *p;
    unsigned t, s, d;
    uint64_t next;     /* index the state is positioned for */
    size_t top_nodes, bot_nodes;
    uint8_t *mem;
    size_t mem_len;
    layer_state L[XMSS_DMAX];
};

/* Bottom-subtree height for trees of height t: whole trees up to 10 (64 KiB at n = 32), else about
 * half, so that the stored top and the bottom subtree stay small and a reload rebuilds 2^split leaves. */
static unsigned split_of(unsigned t)
{
    if (dsig_xmss_test_split && dsig_xmss_test_split < t)
        return dsig_xmss_test_split;
    return t <= 10 ? t : (t + 1) / 2;
}

/* Node offset of level lvl in a top store (levels s..t). */
static inline size_t off_top(const dsig_xmss_trav *T, unsigned lvl)
{
    size_t o = 0;
    for (unsigned k = T->s; k < lvl; k++)
        o += (size_t)1 << (T->t - k);
    return o;
}

/* Node offset of level lvl in a bottom store (levels 0..s-1). */
static inline size_t off_bot(const dsig_xmss_trav *T, unsigned lvl)
{
    size_t o = 0;
    for (unsigned k = 0; k < lvl; k++)
        o += (size_t)1 << (T->s - k);
    return o;
}

/* Record a completed node (level, index within its tree) where the builder keeps it. */
static void bstore(const dsig_xmss_trav *T, const builder *b, unsigned lvl, uint64_t idx, const uint8_t *node)
{
    unsigned n = T->p->n;
    if (lvl < T->s) {
        if (b->bot)
            memcpy(b->bot + (off_bot(T, lvl) + idx - ((uint64_t)b->bsub << (T->s - lvl))) * n, node, n);
    } else if (b->top) {
        memcpy(b->top + (off_top(T, lvl) + idx) * n, node, n);
    }
}

/* @spec RFC 8391 §4.1.6 treeHash, one leaf at a time. */
static void bstep(const dsig_xmss_hash *c, const dsig_xmss_trav *T, builder *b)
{
    unsigned n = T->p->n;
    uint8_t node[XMSS_NMAX], scr[SCRATCH];
    uint32_t a[8];
    uint64_t idx = b->start + b->done;
    dsig_xmss_gen_leaf(c, node, b->layer, b->tree, (uint32_t)idx);
    bstore(T, b, 0, idx, node);
    unsigned h = 0;
    adrs_init(a, b->layer, b->tree, 2);
    while (b->sp > 0 && b->sh[b->sp - 1] == h) {
        a[5] = h;
        a[6] = (uint32_t)(idx >> 1);
        dsig_xmss_rand_hash(c, node, b->stack + (b->sp - 1) * n, node, a, scr);
        b->sp--;
        h++;
        idx >>= 1;
        bstore(T, b, h, idx, node);
    }
    memcpy(b->stack + b->sp * n, node, n);
    b->sh[b->sp++] = (uint8_t)h;
    if (++b->done == b->count)
        b->active = 0;
}

/* Run a builder to completion. */
static void bfinish(const dsig_xmss_hash *c, const dsig_xmss_trav *T, builder *b)
{
    while (b->active)
        bstep(c, T, b);
}

/* Set a builder up over [start, start+count) of (layer, tree). */
static void bsetup(builder *b, unsigned layer, uint64_t tree, uint32_t start, uint32_t count,
                   uint32_t bsub, uint8_t *top, uint8_t *bot)
{
    b->active = 1;
    b->layer = layer;
    b->tree = tree;
    b->start = start;
    b->count = count;
    b->done = 0;
    b->bsub = bsub;
    b->top = top;
    b->bot = bot;
    b->sp = 0;
}

/* Start the next-bottom-subtree builder of layer l for the position of index q. */
static void start_bb(dsig_xmss_trav *T, unsigned l, uint64_t q)
{
    const dsig_xmss_params *p = T->p;
    layer_state *L = &T->L[l];
    uint64_t b = (q >> (T->t * l)) >> T->s, nb = b + 1;
    unsigned lg_total = p->h - T->t * l - T->s;
    L->bb.active = 0;
    if (nb >= ((uint64_t)1 << lg_total))
        return;
    uint32_t bsub = (uint32_t)(nb & (((uint64_t)1 << (T->t - T->s)) - 1));
    bsetup(&L->bb, l, nb >> (T->t - T->s), bsub << T->s, (uint32_t)1 << T->s, bsub,
           T->s == T->t ? L->ntop : NULL, L->nbot);
}

/* Start the next-tree-top builder of layer l (only when split < t). */
static void start_bt(dsig_xmss_trav *T, unsigned l, uint64_t q)
{
    const dsig_xmss_params *p = T->p;
    layer_state *L = &T->L[l];
    uint64_t nt = ((q >> (T->t * l)) >> T->t) + 1;
    L->bt.active = 0;
    if (T->s == T->t || nt >= ((uint64_t)1 << (p->h - T->t * (l + 1))))
        return;
    bsetup(&L->bt, l, nt, 0, (uint32_t)1 << T->t, 0, L->ntop, NULL);
}

/* Root of layer l's current tree. */
static inline const uint8_t *cur_root(const dsig_xmss_trav *T, unsigned l)
{
    return T->L[l].top + off_top(T, T->t) * T->p->n;
}

/* WOTS+ signature of layer l-1's root by layer l's current leaf (XMSS^MT, RFC 8391 §4.2.4). */
static void make_wsig(const dsig_xmss_hash *c, dsig_xmss_trav *T, unsigned l)
{
    layer_state *L = &T->L[l];
    uint8_t scr[SCRATCH];
    uint32_t a[8];
    uint64_t pos = L->cur_p;
    adrs_init(a, l, pos >> T->t, 0);
    a[4] = (uint32_t)(pos & (((uint64_t)1 << T->t) - 1));
    dsig_xmss_wots_sign(c, L->wsig, cur_root(T, l - 1), a, scr);
    dsig_memzero(scr, sizeof scr);
    L->wsig_for = pos;
}

/* Position every layer at index q from scratch (the reload cost: see docs/xmss.md). */
static void trav_init_at(const dsig_xmss_hash *c, dsig_xmss_trav *T, uint64_t q, const uint8_t *top)
{
    uint64_t mask = ((uint64_t)1 << T->t) - 1;
    for (unsigned l = 0; l < T->d; l++) {
        layer_state *L = &T->L[l];
        uint64_t pos = q >> (T->t * l), tree = pos >> T->t;
        uint32_t bsub = (uint32_t)((pos & mask) >> T->s);
        builder b;
        if (T->s < T->t) {
            if (top && T->d == 1) {
                memcpy(L->top, top, T->top_nodes * T->p->n);
            } else {
                bsetup(&b, l, tree, 0, (uint32_t)1 << T->t, 0, L->top, NULL);
                bfinish(c, T, &b);
            }
        }
        bsetup(&b, l, tree, bsub << T->s, (uint32_t)1 << T->s, bsub, T->s == T->t ? L->top : NULL,
               L->bot);
        bfinish(c, T, &b);
        dsig_memzero(&b, sizeof b);
        L->cur_p = pos;
        L->wsig_for = UINT64_MAX;
        start_bb(T, l, q);
        start_bt(T, l, q);
    }
    for (unsigned l = 1; l < T->d; l++)
        make_wsig(c, T, l);
    T->next = q;
}

/* Allocate a traversal for c's parameter set (node stores of every layer). */
static dsig_xmss_trav *trav_alloc(const dsig_xmss_params *p)
{
    dsig_xmss_trav *T = dsig_calloc(1, sizeof *T);
    if (!T)
        return NULL;
    T->p = p;
    T->t = p->t;
    T->s = split_of(p->t);
    T->d = p->d;
    T->top_nodes = ((size_t)2 << (T->t - T->s)) - 1;
    T->bot_nodes = ((size_t)2 << T->s) - 2;
    size_t per = (2 * T->top_nodes + 2 * T->bot_nodes) * p->n + (size_t)p->len * p->n;
    T->mem_len = per * p->d;
    T->mem = dsig_calloc(1, T->mem_len);
    if (!T->mem) {
        dsig_xfree(T, 0);
        return NULL;
    }
    uint8_t *m = T->mem;
    for (unsigned l = 0; l < p->d; l++) {
        layer_state *L = &T->L[l];
        L->top = m;
        m += T->top_nodes * p->n;
        L->ntop = m;
        m += T->top_nodes * p->n;
        L->bot = m;
        m += T->bot_nodes * p->n;
        L->nbot = m;
        m += T->bot_nodes * p->n;
        L->wsig = m;
        m += (size_t)p->len * p->n;
    }
    return T;
}

/* Free a traversal (its nodes are public, the builders' stacks too; wiped anyway). */
void dsig_xmss_trav_free(dsig_xmss_trav *T)
{
    if (!T)
        return;
    dsig_xfree(T->mem, T->mem_len);
    dsig_xfree(T, sizeof *T);
}

/* A traversal positioned at q. */
int dsig_xmss_trav_new(const dsig_xmss_hash *c, uint64_t q, const uint8_t *top, size_t top_len,
                       dsig_xmss_trav **out)
{
    const dsig_xmss_params *p = c->p;
    *out = NULL;
    if (!c->has_sk)
        return dsig_fail(DSIG_E_NO_PRIVATE, "XMSS traversal needs SK_SEED");
    if (p->h < 64 && q >> p->h)
        return dsig_fail(DSIG_E_EXHAUSTED, "XMSS index %llu beyond 2^%u", (unsigned long long)q, p->h);
    dsig_xmss_trav *T = trav_alloc(p);
    if (!T)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (top && (T->d != 1 || T->s == T->t || top_len != T->top_nodes * p->n))
        top = NULL; /* not applicable or not ours: recompute */
    trav_init_at(c, T, q, top);
    *out = T;
    return DSIG_OK;
}

/* Root of the top layer's current tree (the public root). */
const uint8_t *dsig_xmss_trav_root(const dsig_xmss_trav *T)
{
    return cur_root(T, T->d - 1);
}

/* Persistable top part (XMSS with split < t): the static nodes of levels split..h. */
int dsig_xmss_trav_top(const dsig_xmss_trav *T, const uint8_t **top, size_t *len)
{
    if (T->d != 1 || T->s == T->t) {
        *top = NULL;
        *len = 0;
        return 0;
    }
    *top = T->L[0].top;
    *len = T->top_nodes * T->p->n;
    return 1;
}

/* @spec RFC 8391 §4.1.7 XMSS_keyGen / §4.2.2 XMSSMT_keyGen (root of the top layer's first tree),
 * with the SP 800-208 seed-derived WOTS+ keys. */
int dsig_xmss_keygen(const dsig_xmss_hash *c, uint8_t *root, dsig_xmss_trav **trav)
{
    const dsig_xmss_params *p = c->p;
    if (trav) {
        int rc = dsig_xmss_trav_new(c, 0, NULL, 0, trav);
        if (rc)
            return rc;
        memcpy(root, cur_root(*trav, p->d - 1), p->n);
        return DSIG_OK;
    }
    /* root only: the top layer's tree 0 */
    dsig_xmss_trav *T = trav_alloc(p);
    if (!T)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    builder b;
    bsetup(&b, p->d - 1, 0, 0, (uint32_t)1 << T->t, 0, T->L[0].top, NULL);
    T->s = T->t; /* store the root only (into top's level-t slot) */
    bfinish(c, T, &b);
    memcpy(root, T->L[0].top + off_top(T, T->t) * p->n, p->n);
    dsig_memzero(&b, sizeof b);
    dsig_xmss_trav_free(T);
    return DSIG_OK;
}

/* Advance the layers to index q (switch to the prebuilt next subtrees/trees where q enters them). */
static void trav_advance(const dsig_xmss_hash *c, dsig_xmss_trav *T, uint64_t q)
{
    for (unsigned l = 0; l < T->d; l++) {
        layer_state *L = &T->L[l];
        uint64_t pos = q >> (T->t * l);
        if (pos != L->cur_p) {
            if ((pos >> T->s) != (L->cur_p >> T->s)) {
                uint8_t *x;
                bfinish(c, T, &L->bb);
                x = L->bot, L->bot = L->nbot, L->nbot = x;
                if ((pos >> T->t) != (L->cur_p >> T->t)) {
                    bfinish(c, T, &L->bt);
                    x = L->top, L->top = L->ntop, L->ntop = x;
                    L->cur_p = pos;
                    start_bt(T, l, q);
                }
                L->cur_p = pos;
                start_bb(T, l, q);
            }
            L->cur_p = pos;
        }
        if (l >= 1 && L->wsig_for != pos)
            make_wsig(c, T, l);
    }
}

/* 1 if q lies in the current bottom subtree of every layer (then no rebuild is needed to sign it:
 * the auth paths are all stored and the builders keep their targets). */
static int same_subtrees(const dsig_xmss_trav *T, uint64_t q)
{
    for (unsigned l = 0; l < T->d; l++)
        if (((q >> (T->t * l)) >> T->s) != (T->L[l].cur_p >> T->s))
            return 0;
    return 1;
}

/* The builders' share of work for this signature: ceil(remaining leaves / signatures left). */
static void trav_work(const dsig_xmss_hash *c, dsig_xmss_trav *T, uint64_t q)
{
    for (unsigned l = 0; l < T->d; l++) {
        layer_state *L = &T->L[l];
        unsigned sh = T->t * l;
        uint64_t pos = q >> sh;
        for (int which = 0; which < 2; which++) {
            builder *b = which ? &L->bt : &L->bb;
            if (!b->active)
                continue;
            unsigned lv = which ? T->t : T->s;
            uint64_t sw = ((pos >> lv) + 1) << (lv + sh);
            uint64_t left = sw - q, m = b->count - b->done;
            uint64_t k = (m + left - 1) / left;
            while (k-- && b->active)
                bstep(c, T, b);
        }
    }
}

/* @spec RFC 8391 §4.1.9 XMSS_sign / §4.2.4 XMSSMT_sign without the layer-0 WOTS+ signature. */
int dsig_xmss_sign_prepare(const dsig_xmss_hash *c, dsig_xmss_trav *T, const uint8_t *sk_prf,
                           uint64_t q, uint8_t *sig)
{
    const dsig_xmss_params *p = c->p;
    unsigned n = p->n;
    if (p->h < 64 && q >> p->h)
        return dsig_fail(DSIG_E_EXHAUSTED, "XMSS index %llu beyond 2^%u", (unsigned long long)q, p->h);
    if (q != T->next && !same_subtrees(T, q))
        trav_init_at(c, T, q, NULL);
    trav_advance(c, T, q);

    uint8_t q32[32], scr[SCRATCH];
    to_byte(sig, q, p->idx_bytes);
    to_byte(q32, q, 32);
    dsig_xmss_core_hash(c, PAD_PRF, sk_prf, q32, 32, sig + p->idx_bytes, scr); /* r = PRF(SK_PRF, toByte(q, 32)) */
    dsig_memzero(scr, sizeof scr);

    uint8_t *o = sig + p->idx_bytes + n;
    uint64_t mask = ((uint64_t)1 << T->t) - 1;
    for (unsigned l = 0; l < T->d; l++) {
        layer_state *L = &T->L[l];
        uint64_t j = L->cur_p & mask;
        uint64_t bsub = j >> T->s;
        if (l == 0)
            memset(o, 0, (size_t)p->len * n); /* filled by dsig_xmss_sign_finish */
        else
            memcpy(o, L->wsig, (size_t)p->len * n);
        o += (size_t)p->len * n;
        for (unsigned lvl = 0; lvl < T->t; lvl++) {
            uint64_t sib = (j >> lvl) ^ 1;
            const uint8_t *src = lvl < T->s
                                     ? L->bot + (off_bot(T, lvl) + sib - (bsub << (T->s - lvl))) * n
                                     : L->top + (off_top(T, lvl) + sib) * n;
            memcpy(o, src, n);
            o += n;
        }
    }
    trav_work(c, T, q);
    T->next = q + 1;
    return DSIG_OK;
}
