/*
 * src/apps/book_backend.c — the order-book backend: requests (apps.h "Book") executed on the in-process
 * book (book.c) in log order, each new order's id being its log index, and the replies as result values:
 *   BUY / SELL  [order id, filled qty, resting qty, number of trades, [[maker id, price, qty], ...]]
 *               (at most APPS_BOOK_MAX_FILLS trades listed; all of them executed)
 *   CANCEL      [order id, cancelled qty]                or an error value naming why not
 *   DEPTH n     [[[price, qty, orders], ...bids best first], [[price, qty, orders], ...asks best first]]
 */
#include <stdlib.h>
#include <string.h>

#include "apps/apps_internal.h"
#include "core/internal.h"

struct book_backend {
    apps_backend base;
    apps_book *book;
    apps_fill *fills;
    apps_level *levels;
};

static int book_check(const uint8_t *body, size_t len, char *why, size_t cap)
{
    apps_book_req r;
    if (apps_book_parse(body, len, &r) != DSIG_OK) {
        snprintf(why, cap, "%s", dsig_last_error_detail());
        return -1;
    }
    return 0;
}

static int book_writes(const uint8_t *body, size_t len)
{
    apps_book_req r;
    return apps_book_parse(body, len, &r) == DSIG_OK && r.op != APPS_BOOK_DEPTH;
}

/* An error value carrying the library's detail. */
static void put_error(apps_buf *out)
{
    const char *d = dsig_last_error_detail();
    apps_val_str(out, APPS_V_ERROR, d, strlen(d));
}

static void put_levels(apps_buf *out, const apps_level *lv, size_t n)
{
    apps_val_array(out, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        apps_val_array(out, 3);
        apps_val_int(out, lv[i].price);
        apps_val_int(out, (int64_t)lv[i].qty);
        apps_val_int(out, lv[i].orders);
    }
}

static int book_exec(apps_backend *be, uint64_t index, uint64_t client, const uint8_t *body, size_t len,
                     apps_buf *out)
{
    struct book_backend *b = (struct book_backend *)be;
    apps_book_req r;
    if (apps_book_parse(body, len, &r) != DSIG_OK) {
        put_error(out); /* checked before logging: unreachable */
        return APPS_EXEC_OK;
    }
    switch (r.op) {
    case APPS_BOOK_BUY:
    case APPS_BOOK_SELL: {
        size_t nf = 0, total = 0;
        uint64_t filled = 0;
        uint32_t rested = 0;
        if (apps_book_limit(b->book, index, client, r.op == APPS_BOOK_BUY, r.price, r.qty, b->fills,
                            APPS_BOOK_MAX_FILLS, &nf, &total, &filled, &rested) != DSIG_OK) {
            put_error(out);
            break;
        }
        apps_val_array(out, 5);
        apps_val_int(out, (int64_t)index);
        apps_val_int(out, (int64_t)filled);
        apps_val_int(out, rested);
        apps_val_int(out, (int64_t)total);
        apps_val_array(out, (uint32_t)nf);
        for (size_t i = 0; i < nf; i++) {
            apps_val_array(out, 3);
            apps_val_int(out, (int64_t)b->fills[i].maker);
            apps_val_int(out, b->fills[i].price);
            apps_val_int(out, b->fills[i].qty);
        }
        break;
    }
    case APPS_BOOK_CANCEL: {
        uint32_t q = 0;
        if (apps_book_cancel(b->book, r.order, client, &q) != DSIG_OK) {
            put_error(out);
            break;
        }
        apps_val_array(out, 2);
        apps_val_int(out, (int64_t)r.order);
        apps_val_int(out, q);
        break;
    }
    default: { /* DEPTH */
        apps_val_array(out, 2);
        put_levels(out, b->levels, apps_book_depth(b->book, 1, b->levels, r.qty));
        put_levels(out, b->levels, apps_book_depth(b->book, 0, b->levels, r.qty));
        break;
    }
    }
    return APPS_EXEC_OK;
}

static int book_reset(apps_backend *be, char *why, size_t cap)
{
    struct book_backend *b = (struct book_backend *)be;
    apps_book *nb;
    if (apps_book_new(&nb) != DSIG_OK) {
        snprintf(why, cap, "book: out of memory");
        return APPS_EXEC_DOWN;
    }
    apps_book_free(b->book);
    b->book = nb;
    return APPS_EXEC_OK;
}

static void book_free(apps_backend *be)
{
    struct book_backend *b = (struct book_backend *)be;
    if (!b)
        return;
    apps_book_free(b->book);
    free(b->fills);
    free(b->levels);
    free(b);
}

const struct apps_backend_ops apps_book_ops = {
    .app = APPS_APP_BOOK, .check = book_check, .writes = book_writes, .exec = book_exec, .reset = book_reset,
    .free = book_free,
};

int apps_book_backend_new(apps_backend **out)
{
    *out = NULL;
    struct book_backend *b = calloc(1, sizeof *b);
    if (!b || !(b->fills = malloc(APPS_BOOK_MAX_FILLS * sizeof *b->fills)) ||
        !(b->levels = malloc(1000 * sizeof *b->levels)) || apps_book_new(&b->book) != DSIG_OK) {
        if (b) {
            free(b->fills);
            free(b->levels);
            free(b);
        }
        return dsig_fail(DSIG_E_NOMEM, "book: out of memory");
    }
    b->base.ops = &apps_book_ops;
    *out = &b->base;
    return DSIG_OK;
}

apps_book *apps_book_backend_book(apps_backend *be)
{
    return ((struct book_backend *)be)->book;
}
