/*
 * src/apps/book.c — a limit order book for one symbol with price-time priority (apps_internal.h).
 *
 * Each side is an array of price levels sorted so that the best level is the LAST element (bids by
 * ascending price, asks by descending price): matching consumes and removes the best level with no
 * shifting, and a new level is inserted by binary search. A level holds its resting orders as a FIFO
 * (a doubly linked list through the order pool), so orders at one price fill in arrival order. Orders
 * are found by id through an open-addressing hash table (linear probing, backward-shift deletion).
 * Trades execute at the resting (maker) order's price.
 */
#include <stdlib.h>
#include <string.h>

#include "apps/apps_internal.h"
#include "core/internal.h"

#define NIL (-1)

struct order {
    uint64_t id, owner;
    uint32_t price, qty;
    int32_t prev, next;          /* FIFO within the level; next also links the free list */
    uint8_t buy;
};

struct level {
    uint32_t price;
    uint32_t orders;
    uint64_t qty;
    int32_t head, tail;
};

struct side {
    struct level *lv;
    size_t n, cap;
};

struct apps_book {
    struct order *o;             /* pool */
    size_t ocap, olive;
    int32_t free_head;
    int32_t *tab;                /* hash table of order indices (NIL = empty), size tcap (power of 2) */
    size_t tcap;
    struct side bid, ask;
};

/* Make room for one more element of `size` bytes in *arr (capacity *cap, first allocation `first`):
 * doubling, so appends cost O(1) amortized. 0, or -1 out of memory (nothing changed). */
static int grow(void **arr, size_t *cap, size_t used, size_t size, size_t first)
{
    if (used < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    void *p = realloc(*arr, nc * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

int apps_book_new(apps_book **out)
{
    *out = NULL;
    apps_book *b = calloc(1, sizeof *b);
    if (!b)
        return dsig_fail(DSIG_E_NOMEM, "book: out of memory");
    b->free_head = NIL;
    b->tcap = 1024;
    b->tab = malloc(b->tcap * sizeof *b->tab);
    if (!b->tab) {
        free(b);
        return dsig_fail(DSIG_E_NOMEM, "book: out of memory");
    }
    for (size_t i = 0; i < b->tcap; i++)
        b->tab[i] = NIL;
    *out = b;
    return DSIG_OK;
}

void apps_book_free(apps_book *b)
{
    if (!b)
        return;
    free(b->o);
    free(b->tab);
    free(b->bid.lv);
    free(b->ask.lv);
    free(b);
}

size_t apps_book_orders(const apps_book *b)
{
    return b->olive;
}

/* ---- id table --------------------------------------------------------------------------------- */

static size_t tab_slot(const apps_book *b, uint64_t id)
{
    size_t m = b->tcap - 1, i = mix(id) & m;
    while (b->tab[i] != NIL && b->o[b->tab[i]].id != id)
        i = (i + 1) & m;
    return i;
}

static int tab_grow(apps_book *b)
{
    size_t ncap = b->tcap * 2;
    int32_t *t = malloc(ncap * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < ncap; i++)
        t[i] = NIL;
    int32_t *old = b->tab;
    size_t ocap = b->tcap;
    b->tab = t;
    b->tcap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i] != NIL)
            b->tab[tab_slot(b, b->o[old[i]].id)] = old[i];
    free(old);
    return 0;
}

static int32_t tab_find(const apps_book *b, uint64_t id)
{
    return b->tab[tab_slot(b, id)];
}

/* Remove the entry of `id` (present), shifting later entries of its probe run back. */
static void tab_del(apps_book *b, uint64_t id)
{
    size_t m = b->tcap - 1, i = tab_slot(b, id);
    b->tab[i] = NIL;
    for (size_t j = (i + 1) & m; b->tab[j] != NIL; j = (j + 1) & m) {
        size_t home = mix(b->o[b->tab[j]].id) & m;
        /* move j back to i if its home does not lie in (i, j] (cyclically) */
        int in = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!in) {
            b->tab[i] = b->tab[j];
            b->tab[j] = NIL;
            i = j;
        }
    }
}

/* ---- order pool ------------------------------------------------------------------------------- */

static int32_t order_alloc(apps_book *b)
{
    if (b->free_head != NIL) {
        int32_t i = b->free_head;
        b->free_head = b->o[i].next;
        return i;
    }
    if (b->olive >= APPS_BOOK_MAX_ORDERS)
        return NIL;
    if (grow((void **)&b->o, &b->ocap, b->olive, sizeof *b->o, 1024) != 0)
        return NIL;
    return (int32_t)b->olive; /* pool slots are used in order until the first free */
}

/* ---- levels ----------------------------------------------------------------------------------- */

/* Index of `price` in a side (sorted so that the best is last), or where it would go; *found. */
static size_t level_find(const struct side *s, int buy, uint32_t price, int *found)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t p = s->lv[mid].price;
        if (p == price) {
            *found = 1;
            return mid;
        }
        /* bids ascend, asks descend */
        if (buy ? p < price : p > price)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

static struct level *level_get(struct side *s, int buy, uint32_t price)
{
    int found;
    size_t i = level_find(s, buy, price, &found);
    if (found)
        return &s->lv[i];
    if (grow((void **)&s->lv, &s->cap, s->n, sizeof *s->lv, 64) != 0)
        return NULL;
    memmove(&s->lv[i + 1], &s->lv[i], (s->n - i) * sizeof *s->lv);
    s->n++;
    s->lv[i] = (struct level){.price = price, .head = NIL, .tail = NIL};
    return &s->lv[i];
}

static void level_remove_at(struct side *s, size_t i)
{
    memmove(&s->lv[i], &s->lv[i + 1], (s->n - i - 1) * sizeof *s->lv);
    s->n--;
}

/* Unlink order oi from its level's FIFO and free it. */
static void order_unlink(apps_book *b, struct level *l, int32_t oi)
{
    struct order *o = &b->o[oi];
    if (o->prev != NIL)
        b->o[o->prev].next = o->next;
    else
        l->head = o->next;
    if (o->next != NIL)
        b->o[o->next].prev = o->prev;
    else
        l->tail = o->prev;
    l->orders--;
    tab_del(b, o->id);
    o->id = 0;
    o->next = b->free_head;
    b->free_head = oi;
    b->olive--;
}

/* ---- operations ------------------------------------------------------------------------------- */

int apps_book_limit(apps_book *b, uint64_t id, uint64_t owner, int buy, uint32_t price, uint32_t qty,
                    apps_fill *fills, size_t cap, size_t *nfills, size_t *nfills_total, uint64_t *filled,
                    uint32_t *rested)
{
    *nfills = *nfills_total = 0;
    *filled = 0;
    *rested = 0;
    if (price == 0 || qty == 0 || id == 0)
        return dsig_fail(DSIG_E_ARG, "book: zero price, quantity or id");
    if (tab_find(b, id) != NIL)
        return dsig_fail(DSIG_E_ARG, "book: order id %llu is in use", (unsigned long long)id);
    /* Room for a resting remainder is checked first, so a refused order changes nothing. */
    if (b->olive >= APPS_BOOK_MAX_ORDERS)
        return dsig_fail(DSIG_E_TOO_LARGE, "book: full (%u resting orders)", APPS_BOOK_MAX_ORDERS);
    if ((b->olive + 1) * 2 > b->tcap && tab_grow(b) != 0)
        return dsig_fail(DSIG_E_NOMEM, "book: out of memory");
    struct side *opp = buy ? &b->ask : &b->bid;
    uint32_t left = qty;
    while (left && opp->n) {
        struct level *l = &opp->lv[opp->n - 1];
        if (buy ? l->price > price : l->price < price)
            break;
        while (left && l->head != NIL) {
            int32_t oi = l->head;
            struct order *o = &b->o[oi];
            uint32_t f = o->qty < left ? o->qty : left;
            if (*nfills < cap)
                fills[(*nfills)++] = (apps_fill){.maker = o->id, .price = o->price, .qty = f};
            (*nfills_total)++;
            *filled += f;
            left -= f;
            o->qty -= f;
            l->qty -= f;
            if (o->qty == 0)
                order_unlink(b, l, oi);
        }
        if (l->head == NIL)
            level_remove_at(opp, opp->n - 1);
    }
    if (left) {
        int32_t oi = order_alloc(b);
        struct level *l = oi == NIL ? NULL : level_get(buy ? &b->bid : &b->ask, buy, price);
        if (!l) /* only out of memory: the trades above stand, the remainder is reported as not resting */
            return dsig_fail(DSIG_E_NOMEM, "book: out of memory");
        b->olive++;
        struct order *o = &b->o[oi];
        *o = (struct order){.id = id, .owner = owner, .price = price, .qty = left, .prev = l->tail, .next = NIL,
                            .buy = (uint8_t)(buy != 0)};
        if (l->tail != NIL)
            b->o[l->tail].next = oi;
        else
            l->head = oi;
        l->tail = oi;
        l->orders++;
        l->qty += left;
        b->tab[tab_slot(b, id)] = oi;
        *rested = left;
    }
    return DSIG_OK;
}

int apps_book_cancel(apps_book *b, uint64_t id, uint64_t owner, uint32_t *qty)
{
    *qty = 0;
    int32_t oi = id ? tab_find(b, id) : NIL;
    if (oi == NIL)
        return dsig_fail(DSIG_E_ARG, "book: no resting order %llu", (unsigned long long)id);
    struct order *o = &b->o[oi];
    if (o->owner != owner)
        return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "book: order %llu belongs to another client", (unsigned long long)id);
    struct side *s = o->buy ? &b->bid : &b->ask;
    int found;
    size_t li = level_find(s, o->buy, o->price, &found);
    struct level *l = &s->lv[li];
    *qty = o->qty;
    l->qty -= o->qty;
    order_unlink(b, l, oi);
    if (l->head == NIL)
        level_remove_at(s, li);
    return DSIG_OK;
}

size_t apps_book_depth(const apps_book *b, int buy, apps_level *out, size_t levels)
{
    const struct side *s = buy ? &b->bid : &b->ask;
    size_t n = 0;
    for (size_t i = s->n; i > 0 && n < levels; i--, n++)
        out[n] = (apps_level){.price = s->lv[i - 1].price, .qty = s->lv[i - 1].qty, .orders = s->lv[i - 1].orders};
    return n;
}

void apps_book_each(const apps_book *b, apps_book_order_fn fn, void *arg)
{
    for (int side = 1; side >= 0; side--) {
        const struct side *s = side ? &b->bid : &b->ask;
        for (size_t i = s->n; i > 0; i--)
            for (int32_t oi = s->lv[i - 1].head; oi != NIL; oi = b->o[oi].next)
                fn(arg, side, b->o[oi].price, b->o[oi].qty, b->o[oi].id, b->o[oi].owner);
    }
}
