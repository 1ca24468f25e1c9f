/*
 * tests/apps/test_apps_book.c — the limit order book (src/apps/book.c): price-time priority, FIFO within a
 * level, trades at the resting order's price, partial fills, cancels (owner only), depth; what the
 * fields mean (a buy's price is its limit, its quantity the units: swapping them gives a different
 * outcome, checked); and 20,000 random orders and cancels against a naive reference book (a flat list
 * scanned for the best price, then the oldest order), comparing every trade and the final book.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "apps/apps_internal.h"

static apps_fill fills[APPS_BOOK_MAX_FILLS];

/* Place an order; returns the quantity resting, trades in fills[0..*n). */
static uint32_t place(apps_book *b, uint64_t id, uint64_t owner, int buy, uint32_t price, uint32_t qty, size_t *n,
                      uint64_t *filled)
{
    size_t total;
    uint32_t rested;
    assert_int_equal(apps_book_limit(b, id, owner, buy, price, qty, fills, APPS_BOOK_MAX_FILLS, n, &total, filled,
                                     &rested),
                     DSIG_OK);
    assert_int_equal(*n, total);
    return rested;
}

static void test_priority_and_fifo(void **state)
{
    (void)state;
    apps_book *b;
    assert_int_equal(apps_book_new(&b), DSIG_OK);
    size_t n;
    uint64_t f;
    /* asks: 1885 x200 (id 1), 1886 x300 (id 2), 1885 x100 (id 3, behind id 1 at the same price) */
    assert_int_equal(place(b, 1, 7, 0, 1885, 200, &n, &f), 200);
    assert_int_equal(place(b, 2, 7, 0, 1886, 300, &n, &f), 300);
    assert_int_equal(place(b, 3, 8, 0, 1885, 100, &n, &f), 100);
    /* a buy of 450 at 1886: best price first (1885: id 1 then id 3, FIFO), then 1886 */
    assert_int_equal(place(b, 4, 9, 1, 1886, 450, &n, &f), 0);
    assert_int_equal(n, 3);
    assert_int_equal(f, 450);
    assert_int_equal(fills[0].maker, 1);
    assert_int_equal(fills[0].qty, 200);
    assert_int_equal(fills[0].price, 1885);
    assert_int_equal(fills[1].maker, 3);
    assert_int_equal(fills[1].qty, 100);
    assert_int_equal(fills[1].price, 1885); /* at the maker's price, not the taker's limit */
    assert_int_equal(fills[2].maker, 2);
    assert_int_equal(fills[2].qty, 150);
    assert_int_equal(fills[2].price, 1886);
    apps_level lv[4];
    assert_int_equal(apps_book_depth(b, 0, lv, 4), 1);
    assert_int_equal(lv[0].price, 1886);
    assert_int_equal(lv[0].qty, 150);
    assert_int_equal(apps_book_depth(b, 1, lv, 4), 0);
    /* a buy below the best ask rests without trading; bids best first */
    assert_int_equal(place(b, 5, 9, 1, 1880, 100, &n, &f), 100);
    assert_int_equal(n, 0);
    assert_int_equal(place(b, 6, 9, 1, 1883, 100, &n, &f), 100);
    assert_int_equal(apps_book_depth(b, 1, lv, 4), 2);
    assert_int_equal(lv[0].price, 1883);
    assert_int_equal(lv[1].price, 1880);
    /* a sell at 1881 takes the best bid (1883) only, then rests 50 at 1881 */
    assert_int_equal(place(b, 7, 7, 0, 1881, 150, &n, &f), 50);
    assert_int_equal(n, 1);
    assert_int_equal(fills[0].maker, 6);
    assert_int_equal(fills[0].price, 1883);
    assert_int_equal(apps_book_depth(b, 0, lv, 4), 2);
    assert_int_equal(lv[0].price, 1881);
    apps_book_free(b);
}

/* The fields mean what the docs say: buy price=1885 qty=300 against an ask of 100 at 1885 fills 100 and
 * rests 200 at 1885. The same numbers swapped (price 300, qty 1885) trade nothing (limit 300 < 1885). */
static void test_field_meaning(void **state)
{
    (void)state;
    apps_book *b;
    assert_int_equal(apps_book_new(&b), DSIG_OK);
    size_t n;
    uint64_t f;
    place(b, 1, 1, 0, 1885, 100, &n, &f);
    assert_int_equal(place(b, 2, 2, 1, 1885, 300, &n, &f), 200);
    assert_int_equal(f, 100);
    apps_level lv[1];
    assert_int_equal(apps_book_depth(b, 1, lv, 1), 1);
    assert_int_equal(lv[0].price, 1885);
    assert_int_equal(lv[0].qty, 200);
    apps_book_free(b);

    assert_int_equal(apps_book_new(&b), DSIG_OK);
    place(b, 1, 1, 0, 1885, 100, &n, &f);
    assert_int_equal(place(b, 2, 2, 1, 300, 1885, &n, &f), 1885);
    assert_int_equal(f, 0);
    apps_book_free(b);
}

static void test_cancel(void **state)
{
    (void)state;
    apps_book *b;
    assert_int_equal(apps_book_new(&b), DSIG_OK);
    size_t n;
    uint64_t f;
    uint32_t q;
    place(b, 1, 5, 1, 1880, 100, &n, &f);
    place(b, 2, 6, 1, 1880, 200, &n, &f);
    assert_int_equal(apps_book_cancel(b, 1, 6, &q), DSIG_E_ALG_NOT_ALLOWED); /* not the owner */
    assert_int_equal(apps_book_cancel(b, 99, 5, &q), DSIG_E_ARG);
    assert_int_equal(apps_book_cancel(b, 1, 5, &q), DSIG_OK);
    assert_int_equal(q, 100);
    assert_int_equal(apps_book_cancel(b, 1, 5, &q), DSIG_E_ARG); /* gone */
    /* the remaining order at 1880 is id 2, and a sell fills it */
    place(b, 3, 7, 0, 1880, 50, &n, &f);
    assert_int_equal(n, 1);
    assert_int_equal(fills[0].maker, 2);
    assert_int_equal(apps_book_cancel(b, 2, 6, &q), DSIG_OK);
    assert_int_equal(q, 150);
    assert_int_equal(apps_book_orders(b), 0);
    /* a reused id and zero fields are refused without changing anything */
    place(b, 4, 7, 0, 1890, 10, &n, &f);
    size_t total;
    uint64_t filled;
    uint32_t rested;
    assert_int_equal(apps_book_limit(b, 4, 7, 1, 1890, 10, fills, 8, &n, &total, &filled, &rested), DSIG_E_ARG);
    assert_int_equal(apps_book_limit(b, 5, 7, 1, 0, 10, fills, 8, &n, &total, &filled, &rested), DSIG_E_ARG);
    assert_int_equal(apps_book_limit(b, 5, 7, 1, 10, 0, fills, 8, &n, &total, &filled, &rested), DSIG_E_ARG);
    assert_int_equal(apps_book_orders(b), 1);
    apps_book_free(b);
}

/* ---- the reference: a flat list, best price then oldest by a full scan ---------------------------- */

struct ref_order {
    uint64_t id, owner;
    int buy;
    uint32_t price, qty;
    int live;
};

struct ref {
    struct ref_order *o;
    size_t n;
};

/* Index of the best resting order of a side able to trade at `limit`, or -1. */
static long ref_best(const struct ref *r, int buy_side, uint32_t limit)
{
    long best = -1;
    for (size_t i = 0; i < r->n; i++) {
        const struct ref_order *o = &r->o[i];
        if (!o->live || o->buy != buy_side)
            continue;
        if (buy_side ? o->price < limit : o->price > limit)
            continue;
        if (best < 0 || (buy_side ? o->price > r->o[best].price : o->price < r->o[best].price))
            best = (long)i; /* equal prices keep the earlier (older) one */
    }
    return best;
}

static void ref_limit(struct ref *r, uint64_t id, uint64_t owner, int buy, uint32_t price, uint32_t qty,
                      apps_fill *out, size_t *n)
{
    *n = 0;
    while (qty) {
        long b = ref_best(r, !buy, price);
        if (b < 0)
            break;
        struct ref_order *o = &r->o[b];
        uint32_t f = o->qty < qty ? o->qty : qty;
        out[(*n)++] = (apps_fill){.maker = o->id, .price = o->price, .qty = f};
        o->qty -= f;
        qty -= f;
        if (!o->qty)
            o->live = 0;
    }
    r->o[r->n++] = (struct ref_order){.id = id, .owner = owner, .buy = buy, .price = price, .qty = qty, .live = qty > 0};
}

struct collect {
    uint64_t ids[8000];
    size_t n;
};

static void collect_fn(void *arg, int buy, uint32_t price, uint32_t qty, uint64_t id, uint64_t owner)
{
    (void)buy;
    (void)price;
    (void)qty;
    (void)owner;
    struct collect *c = arg;
    c->ids[c->n++] = id;
}

static void test_against_reference(void **state)
{
    (void)state;
    enum { N = 8000 };
    apps_book *b;
    assert_int_equal(apps_book_new(&b), DSIG_OK);
    struct ref r = {calloc(N, sizeof(struct ref_order)), 0};
    apps_fill *rf = malloc(N * sizeof *rf);
    assert_non_null(r.o);
    uint64_t st = 12345, trades = 0;
    for (uint64_t id = 1; id <= N; id++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t x = st >> 11;
        if (x % 10 == 0 && r.n) { /* a cancel of a random earlier order (possibly gone, possibly not ours) */
            struct ref_order *o = &r.o[(x >> 8) % r.n];
            uint64_t owner = 1 + (x >> 20) % 3;
            uint32_t q;
            int rc = apps_book_cancel(b, o->id, owner, &q);
            if (!o->live) {
                assert_int_equal(rc, DSIG_E_ARG);
            } else if (o->owner != owner) {
                assert_int_equal(rc, DSIG_E_ALG_NOT_ALLOWED);
            } else {
                assert_int_equal(rc, DSIG_OK);
                assert_int_equal(q, o->qty);
                o->live = 0;
            }
            r.o[r.n++] = (struct ref_order){.id = id}; /* the id is used up, nothing rests */
            continue;
        }
        int buy = (x >> 30) & 1;
        uint32_t price = 1880 + (uint32_t)((x >> 32) % 14), qty = 100 + (uint32_t)((x >> 40) % 901);
        uint64_t owner = 1 + (x >> 50) % 3;
        size_t n, rn;
        uint64_t f;
        place(b, id, owner, buy, price, qty, &n, &f);
        ref_limit(&r, id, owner, buy, price, qty, rf, &rn);
        assert_int_equal(n, rn);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(fills[i].maker, rf[i].maker);
            assert_int_equal(fills[i].price, rf[i].price);
            assert_int_equal(fills[i].qty, rf[i].qty);
        }
        trades += n;
    }
    assert_true(trades > N / 2); /* the workload really matches */
    size_t live = 0;
    for (size_t i = 0; i < r.n; i++)
        live += r.o[i].live;
    assert_int_equal(apps_book_orders(b), live);
    struct collect *c = calloc(1, sizeof *c);
    apps_book_each(b, collect_fn, c);
    assert_int_equal(c->n, live);
    free(c);
    free(rf);
    free(r.o);
    apps_book_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priority_and_fifo),
        cmocka_unit_test(test_field_meaning),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
