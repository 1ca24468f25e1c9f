/*
 * tools/dsig/cmd_book.c — `dsig book`: the auditable limit order book (docs/orderbook.md). `dsig book
 * serve` runs the server; otherwise a client signs one order (or one per line of standard input) and
 * prints the verified outcome. Order fields are named (price=, qty=, order=), never positional.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "appcli.h"
#include "cli.h"

int cmd_book(int argc, char **argv);

const char cli_usage_book[] =
    "Usage: dsig book serve --listen ADDR [--listen ADDR]... --key SERVER.jwk --keys DIR --log FILE\n"
    "                       [--scheme dsig|sig|none] [--sync group|always] [--pool N] [-q]\n"
    "       dsig book --connect ADDR --id N --key CLIENT.jwk --server-key SERVER.pub.jwk [--receipt FILE]\n"
    "                 [-v] ORDER                                           (or '-': one per line)\n"
    "\n"
    "An auditable limit order book for one symbol with price-time priority (docs/orderbook.md): signed,\n"
    "sequenced orders, logged durably before they are matched, signed replies; server options as for\n"
    "'dsig kv serve' (no Redis: the book lives in the server and is rebuilt from the log at start).\n"
    "\n"
    "Orders (fields by name, in any order):\n"
    "  buy price=P qty=Q    buy up to Q units, paying at most P ticks per unit\n"
    "  sell price=P qty=Q   sell up to Q units, receiving at least P ticks per unit\n"
    "  cancel order=ID      withdraw what is left of your resting order ID\n"
    "  depth [levels=N]     the N best price levels of each side (default 10)\n"
    "A new order trades against the best opposite prices first, oldest order first at each price, at the\n"
    "resting order's price; what is left rests in the book. Its id is its log entry number.\n"
    "Exit status: 0 executed (a refused cancel is printed as an error), 2 refused or failed.\n";

/* "name=value" with value a decimal in 1..max: 1 (and *out), 0 if not that name, -1 if bad. */
static int field(const char *w, const char *name, uint64_t max, uint64_t *out)
{
    size_t n = strlen(name);
    if (strncasecmp(w, name, n) != 0 || w[n] != '=')
        return 0;
    const char *v = w + n + 1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *v == '-' || *end || errno || x == 0 || x > max) {
        fprintf(stderr, "dsig book: %s must be a whole number in 1..%llu, not '%s'\n", name, (unsigned long long)max,
                v);
        return -1;
    }
    *out = x;
    return 1;
}

/* Words -> book body. */
static int book_body(int argc, char **argv, uint8_t *body, size_t *len)
{
    unsigned op;
    if (strcasecmp(argv[0], "buy") == 0)
        op = APPS_BOOK_BUY;
    else if (strcasecmp(argv[0], "sell") == 0)
        op = APPS_BOOK_SELL;
    else if (strcasecmp(argv[0], "cancel") == 0)
        op = APPS_BOOK_CANCEL;
    else if (strcasecmp(argv[0], "depth") == 0)
        op = APPS_BOOK_DEPTH;
    else {
        fprintf(stderr, "dsig book: unknown order '%s' (buy, sell, cancel, depth)\n", argv[0]);
        return -1;
    }
    uint64_t price = 0, qty = 0, order = 0, levels = 10;
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (op == APPS_BOOK_BUY || op == APPS_BOOK_SELL) {
            if ((r = field(argv[i], "price", 0x7FFFFFFF, &price)) == 0)
                r = field(argv[i], "qty", 0x7FFFFFFF, &qty);
        } else if (op == APPS_BOOK_CANCEL) {
            r = field(argv[i], "order", APPS_MAX_ID, &order);
        } else {
            r = field(argv[i], "levels", 1000, &levels);
        }
        if (r < 0)
            return -1;
        if (r == 0) {
            fprintf(stderr, "dsig book: %s: unexpected '%s'\n", argv[0], argv[i]);
            return -1;
        }
    }
    if ((op == APPS_BOOK_BUY || op == APPS_BOOK_SELL) && (!price || !qty)) {
        fprintf(stderr, "dsig book: %s needs price=P and qty=Q\n", argv[0]);
        return -1;
    }
    if (op == APPS_BOOK_CANCEL && !order) {
        fprintf(stderr, "dsig book: cancel needs order=ID\n");
        return -1;
    }
    if (op == APPS_BOOK_DEPTH)
        qty = levels;
    apps_book_body(op, (uint32_t)price, (uint32_t)qty, order, body);
    *len = APPS_BOOK_BODY;
    return 0;
}

/* An integer element of a checked result array. */
static int64_t next_int(const uint8_t **p)
{
    apps_val v;
    apps_val_next(p, &v);
    return v.i;
}

/* One side of a DEPTH reply. */
static void print_side(const char *name, const uint8_t **p)
{
    apps_val a;
    apps_val_next(p, &a);
    if (a.n == 0)
        printf("%s: none\n", name);
    for (size_t i = 0; i < a.n; i++) {
        apps_val lv;
        apps_val_next(p, &lv);
        int64_t price = next_int(p), qty = next_int(p), orders = next_int(p);
        printf("%s price=%lld qty=%lld (%lld order%s)\n", name, (long long)price, (long long)qty, (long long)orders,
               orders == 1 ? "" : "s");
    }
}

/* The verified outcome in words. The shapes are those of src/apps/book_backend.c. */
static void book_print(const uint8_t *v, size_t len)
{
    const uint8_t *p = v;
    apps_val top;
    apps_val_next(&p, &top);
    if (top.type != APPS_V_ARRAY) {
        apps_value_print(stdout, v, len);
        fputc('\n', stdout);
        return;
    }
    if (top.n == 5) {
        int64_t id = next_int(&p), filled = next_int(&p), rested = next_int(&p), trades = next_int(&p);
        apps_val f;
        apps_val_next(&p, &f);
        printf("order %lld: filled %lld in %lld trade%s, resting %lld\n", (long long)id, (long long)filled,
               (long long)trades, trades == 1 ? "" : "s", (long long)rested);
        for (size_t i = 0; i < f.n; i++) {
            apps_val t;
            apps_val_next(&p, &t);
            int64_t maker = next_int(&p), price = next_int(&p), qty = next_int(&p);
            printf("  trade qty=%lld price=%lld with order %lld\n", (long long)qty, (long long)price, (long long)maker);
        }
    } else if (top.n == 2 && *p == APPS_V_INT) {
        int64_t id = next_int(&p), qty = next_int(&p);
        printf("order %lld: cancelled, %lld were resting\n", (long long)id, (long long)qty);
    } else {
        print_side("bid", &p);
        print_side("ask", &p);
    }
}

static const struct appcli_app book_app = {APPS_APP_BOOK, "book", cli_usage_book, book_body, book_print};

/* `dsig book ...`: argv[0] is "book". */
int cmd_book(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return appcli_serve(&book_app, argc - 1, argv + 1);
    return appcli_client(&book_app, argc, argv);
}
