/*
 * src/apps/wire.c — the byte layouts of the applications (apps_internal.h): request and reply messages,
 * result values, KV and order-book bodies. Every parser is bounded and exact: lengths are checked
 * before any byte is read, nothing may trail, unused fields must be zero.
 */
#include <stdlib.h>
#include <string.h>

#include "apps/apps_internal.h"
#include "core/bytes.h"
#include "core/internal.h"

static const uint8_t REQ_LABEL[16] = "DSig-app-request";
static const uint8_t REP_LABEL[16] = {'D', 'S', 'i', 'g', '-', 'a', 'p', 'p', '-', 'r', 'e', 'p', 'l', 'y', 0, 0};

const char *apps_scheme_name(int scheme)
{
    static const char *const names[] = {"none", "sig", "dsig"};
    return scheme >= 0 && scheme <= APPS_SCHEME_DSIG ? names[scheme] : NULL;
}

int apps_scheme_by_name(const char *name)
{
    for (int s = 0; s <= APPS_SCHEME_DSIG; s++)
        if (strcmp(name, apps_scheme_name(s)) == 0)
            return s;
    return -1;
}

const char *apps_app_name(unsigned app)
{
    return app == APPS_APP_KV ? "kv" : app == APPS_APP_BOOK ? "book" : NULL;
}

/* ---- messages ------------------------------------------------------------------------------- */

/* The 20-byte common prefix: label, version, app, scheme, zero. */
static void put_prefix(uint8_t *out, const uint8_t label[16], unsigned app, int scheme)
{
    memcpy(out, label, 16);
    out[16] = APPS_PROTO_VERSION;
    out[17] = (uint8_t)app;
    out[18] = (uint8_t)scheme;
    out[19] = 0;
}

/* Check the common prefix; DSIG_E_FORMAT naming what differs. */
static int get_prefix(const uint8_t *in, const uint8_t label[16], const char *what, unsigned *app, int *scheme)
{
    if (memcmp(in, label, 16) != 0)
        return dsig_fail(DSIG_E_FORMAT, "%s: not a %s (label)", what, what);
    if (in[16] != APPS_PROTO_VERSION)
        return dsig_fail(DSIG_E_FORMAT, "%s: version %u (expected %u)", what, in[16], APPS_PROTO_VERSION);
    if (in[17] != APPS_APP_KV && in[17] != APPS_APP_BOOK)
        return dsig_fail(DSIG_E_FORMAT, "%s: unknown application %u", what, in[17]);
    if (in[18] > APPS_SCHEME_DSIG)
        return dsig_fail(DSIG_E_FORMAT, "%s: unknown scheme %u", what, in[18]);
    if (in[19] != 0)
        return dsig_fail(DSIG_E_FORMAT, "%s: reserved byte is not zero", what);
    *app = in[17];
    *scheme = in[18];
    return DSIG_OK;
}

int apps_req_encode(const apps_req *r, uint8_t *out, size_t cap, size_t *len)
{
    if (r->body_len > APPS_MAX_BODY)
        return dsig_fail(DSIG_E_TOO_LARGE, "request body of %zu bytes (at most %u)", r->body_len, APPS_MAX_BODY);
    if (cap < APPS_MSG_HDR + r->body_len)
        return dsig_fail(DSIG_E_BUFFER, "request: buffer too small");
    put_prefix(out, REQ_LABEL, r->app, r->scheme);
    memcpy(out + 20, r->tag, APPS_TAG_BYTES);
    dsig_store_be64(out + 52, r->client);
    dsig_store_be64(out + 60, r->seq);
    dsig_store_be32(out + 68, (uint32_t)r->body_len);
    if (r->body_len)
        memcpy(out + APPS_MSG_HDR, r->body, r->body_len);
    *len = APPS_MSG_HDR + r->body_len;
    return DSIG_OK;
}

int apps_req_parse(const uint8_t *in, size_t len, apps_req *r)
{
    if (len < APPS_MSG_HDR)
        return dsig_fail(DSIG_E_FORMAT, "request: %zu bytes, shorter than its %u-byte header", len, APPS_MSG_HDR);
    int rc = get_prefix(in, REQ_LABEL, "request", &r->app, &r->scheme);
    if (rc)
        return rc;
    memcpy(r->tag, in + 20, APPS_TAG_BYTES);
    r->client = dsig_load_be64(in + 52);
    r->seq = dsig_load_be64(in + 60);
    uint32_t bl = dsig_load_be32(in + 68);
    if (bl > APPS_MAX_BODY || bl != len - APPS_MSG_HDR)
        return dsig_fail(DSIG_E_FORMAT, "request: body length %u does not match the %zu bytes after the header",
                         bl, len - APPS_MSG_HDR);
    if (r->client == 0 || r->client > APPS_MAX_ID)
        return dsig_fail(DSIG_E_FORMAT, "request: client id %llu out of range", (unsigned long long)r->client);
    if (r->seq == 0)
        return dsig_fail(DSIG_E_FORMAT, "request: sequence number 0 (they start at 1)");
    r->body = in + APPS_MSG_HDR;
    r->body_len = bl;
    return DSIG_OK;
}

int apps_rep_encode(const apps_rep *r, uint8_t *out, size_t cap, size_t *len)
{
    if (r->result_len > APPS_MAX_RESULT)
        return dsig_fail(DSIG_E_TOO_LARGE, "reply: result of %zu bytes (at most %u)", r->result_len, APPS_MAX_RESULT);
    if (cap < APPS_REPLY_HDR + r->result_len)
        return dsig_fail(DSIG_E_BUFFER, "reply: buffer too small");
    put_prefix(out, REP_LABEL, r->app, r->scheme);
    memcpy(out + 20, r->tag, APPS_TAG_BYTES);
    dsig_store_be64(out + 52, r->client);
    dsig_store_be64(out + 60, r->seq);
    dsig_store_be64(out + 68, r->index);
    memcpy(out + 76, r->req_hash, 32);
    memcpy(out + 108, r->chain, 32);
    dsig_store_be32(out + 140, (uint32_t)r->result_len);
    if (r->result_len)
        memcpy(out + APPS_REPLY_HDR, r->result, r->result_len);
    *len = APPS_REPLY_HDR + r->result_len;
    return DSIG_OK;
}

int apps_rep_parse(const uint8_t *in, size_t len, apps_rep *r)
{
    if (len < APPS_REPLY_HDR)
        return dsig_fail(DSIG_E_FORMAT, "reply: %zu bytes, shorter than its %u-byte header", len, APPS_REPLY_HDR);
    int rc = get_prefix(in, REP_LABEL, "reply", &r->app, &r->scheme);
    if (rc)
        return rc;
    memcpy(r->tag, in + 20, APPS_TAG_BYTES);
    r->client = dsig_load_be64(in + 52);
    r->seq = dsig_load_be64(in + 60);
    r->index = dsig_load_be64(in + 68);
    memcpy(r->req_hash, in + 76, 32);
    memcpy(r->chain, in + 108, 32);
    uint32_t rl = dsig_load_be32(in + 140);
    if (rl > APPS_MAX_RESULT || rl != len - APPS_REPLY_HDR)
        return dsig_fail(DSIG_E_FORMAT, "reply: result length %u does not match the %zu bytes after the header", rl,
                         len - APPS_REPLY_HDR);
    r->result = in + APPS_REPLY_HDR;
    r->result_len = rl;
    if (apps_value_check(r->result, r->result_len) != DSIG_OK)
        return dsig_fail(DSIG_E_FORMAT, "reply: malformed result value");
    return DSIG_OK;
}

int apps_signed_split(const uint8_t *p, size_t len, const uint8_t **msg, size_t *msg_len, const uint8_t **sig,
                      size_t *sig_len)
{
    if (len < 4)
        return dsig_fail(DSIG_E_FORMAT, "signed message: %zu bytes, no length", len);
    uint32_t ml = dsig_load_be32(p);
    if (ml > len - 4)
        return dsig_fail(DSIG_E_FORMAT, "signed message: message length %u exceeds the %zu bytes present", ml,
                         len - 4);
    if (len - 4 - ml > APPS_MAX_SIG)
        return dsig_fail(DSIG_E_FORMAT, "signed message: signature of %zu bytes (at most %u)", len - 4 - ml,
                         APPS_MAX_SIG);
    *msg = p + 4;
    *msg_len = ml;
    *sig = p + 4 + ml;
    *sig_len = len - 4 - ml;
    return DSIG_OK;
}

/* ---- growable buffer and result values -------------------------------------------------------- */

void apps_buf_init(apps_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

void apps_buf_free(apps_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void apps_buf_put(apps_buf *b, const void *p, size_t n)
{
    if (b->overflow)
        return;
    if (n > b->max - b->len) {
        b->overflow = 1;
        return;
    }
    if (b->len + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->len + n)
            c *= 2;
        if (c > b->max)
            c = b->max;
        uint8_t *q = realloc(b->p, c);
        if (!q) {
            b->overflow = 1;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

void apps_val_nil(apps_buf *b)
{
    uint8_t t = APPS_V_NIL;
    apps_buf_put(b, &t, 1);
}

void apps_val_int(apps_buf *b, int64_t v)
{
    uint8_t t[9] = {APPS_V_INT};
    dsig_store_be64(t + 1, (uint64_t)v);
    apps_buf_put(b, t, sizeof t);
}

void apps_val_str(apps_buf *b, unsigned type, const void *p, size_t n)
{
    uint8_t t[5] = {(uint8_t)type};
    dsig_store_be32(t + 1, (uint32_t)n);
    apps_buf_put(b, t, sizeof t);
    apps_buf_put(b, p, n);
}

void apps_val_array(apps_buf *b, uint32_t n)
{
    uint8_t t[5] = {APPS_V_ARRAY};
    dsig_store_be32(t + 1, n);
    apps_buf_put(b, t, sizeof t);
}

#define VALUE_MAX_DEPTH 8

/* Skip one value at v[*off], bounded by len; 0 or -1. */
static int value_skip(const uint8_t *v, size_t len, size_t *off, int depth)
{
    if (*off >= len || depth > VALUE_MAX_DEPTH)
        return -1;
    unsigned t = v[(*off)++];
    switch (t) {
    case APPS_V_NIL:
        return 0;
    case APPS_V_INT:
        if (len - *off < 8)
            return -1;
        *off += 8;
        return 0;
    case APPS_V_BULK:
    case APPS_V_STATUS:
    case APPS_V_ERROR: {
        if (len - *off < 4)
            return -1;
        uint32_t n = dsig_load_be32(v + *off);
        *off += 4;
        if (n > len - *off)
            return -1;
        *off += n;
        return 0;
    }
    case APPS_V_ARRAY: {
        if (len - *off < 4)
            return -1;
        uint32_t n = dsig_load_be32(v + *off);
        *off += 4;
        if (n > len - *off) /* every element takes at least one byte */
            return -1;
        for (uint32_t i = 0; i < n; i++)
            if (value_skip(v, len, off, depth + 1) != 0)
                return -1;
        return 0;
    }
    default:
        return -1;
    }
}

int apps_value_check(const uint8_t *v, size_t len)
{
    size_t off = 0;
    if (value_skip(v, len, &off, 0) != 0 || off != len)
        return dsig_fail(DSIG_E_FORMAT, "malformed result value");
    return DSIG_OK;
}

void apps_val_next(const uint8_t **p, apps_val *v)
{
    const uint8_t *q = *p;
    memset(v, 0, sizeof *v);
    v->type = *q++;
    switch (v->type) {
    case APPS_V_INT:
        v->i = (int64_t)dsig_load_be64(q);
        q += 8;
        break;
    case APPS_V_BULK:
    case APPS_V_STATUS:
    case APPS_V_ERROR:
        v->n = dsig_load_be32(q);
        v->s = q + 4;
        q += 4 + v->n;
        break;
    case APPS_V_ARRAY:
        v->n = dsig_load_be32(q);
        q += 4;
        break;
    default:
        break;
    }
    *p = q;
}

/* Bytes as a quoted string with non-printables escaped. */
static void print_bytes(FILE *f, const uint8_t *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            fprintf(f, "\\%c", s[i]);
        else if (s[i] < 0x20 || s[i] >= 0x7f)
            fprintf(f, "\\x%02x", s[i]);
        else
            fputc(s[i], f);
    }
    fputc('"', f);
}

/* Print the value at *p (checked), advancing past it. */
static void print_value(FILE *f, const uint8_t **p)
{
    apps_val v;
    apps_val_next(p, &v);
    switch (v.type) {
    case APPS_V_NIL:
        fputs("(nil)", f);
        break;
    case APPS_V_INT:
        fprintf(f, "(integer) %lld", (long long)v.i);
        break;
    case APPS_V_BULK:
        print_bytes(f, v.s, v.n);
        break;
    case APPS_V_STATUS:
        fprintf(f, "%.*s", (int)v.n, (const char *)v.s);
        break;
    case APPS_V_ERROR:
        fputs("(error) ", f);
        for (size_t i = 0; i < v.n; i++)
            fputc(v.s[i] >= 0x20 && v.s[i] < 0x7f ? v.s[i] : '?', f);
        break;
    case APPS_V_ARRAY:
        fputc('[', f);
        for (size_t i = 0; i < v.n; i++) {
            if (i)
                fputs(", ", f);
            print_value(f, p);
        }
        fputc(']', f);
        break;
    default:
        break;
    }
}

void apps_value_print(FILE *f, const uint8_t *v, size_t len)
{
    if (apps_value_check(v, len) != DSIG_OK) {
        fputs("(malformed)", f);
        return;
    }
    const uint8_t *p = v;
    print_value(f, &p);
}

/* ---- bodies --------------------------------------------------------------------------------- */

int apps_kv_body(int argc, const char *const *argv, const size_t *lens, uint8_t *out, size_t cap, size_t *len)
{
    if (argc < 1 || (unsigned)argc > APPS_KV_MAX_ARGS)
        return dsig_fail(DSIG_E_ARG, "kv: 1..%u arguments, not %d", APPS_KV_MAX_ARGS, argc);
    size_t need = 2;
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        if (l > APPS_MAX_BODY)
            return dsig_fail(DSIG_E_TOO_LARGE, "kv: argument %d longer than %u bytes", i, APPS_MAX_BODY);
        need += 4 + l;
    }
    if (need > APPS_MAX_BODY)
        return dsig_fail(DSIG_E_TOO_LARGE, "kv: request of %zu bytes (at most %u)", need, APPS_MAX_BODY);
    if (need > cap)
        return dsig_fail(DSIG_E_BUFFER, "kv: buffer too small");
    dsig_store_be16(out, (uint32_t)argc);
    size_t o = 2;
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        dsig_store_be32(out + o, (uint32_t)l);
        memcpy(out + o + 4, argv[i], l);
        o += 4 + l;
    }
    *len = o;
    return DSIG_OK;
}

int apps_kv_parse(const uint8_t *body, size_t len, const uint8_t **argv, size_t *lens, size_t cap, size_t *argc)
{
    if (len < 2)
        return dsig_fail(DSIG_E_FORMAT, "kv: request body of %zu bytes has no argument count", len);
    size_t n = dsig_load_be16(body);
    if (n < 1 || n > cap)
        return dsig_fail(DSIG_E_FORMAT, "kv: %zu arguments (1..%zu)", n, cap);
    size_t o = 2;
    for (size_t i = 0; i < n; i++) {
        if (len - o < 4)
            return dsig_fail(DSIG_E_FORMAT, "kv: argument %zu: truncated length", i);
        uint32_t l = dsig_load_be32(body + o);
        o += 4;
        if (l > len - o)
            return dsig_fail(DSIG_E_FORMAT, "kv: argument %zu: %u bytes announced, %zu present", i, l, len - o);
        argv[i] = body + o;
        lens[i] = l;
        o += l;
    }
    if (o != len)
        return dsig_fail(DSIG_E_FORMAT, "kv: %zu bytes after the last argument", len - o);
    *argc = n;
    return DSIG_OK;
}

void apps_book_body(unsigned op, uint32_t price, uint32_t qty, uint64_t order, uint8_t out[APPS_BOOK_BODY])
{
    out[0] = (uint8_t)op;
    dsig_store_be32(out + 1, price);
    dsig_store_be32(out + 5, qty);
    dsig_store_be64(out + 9, order);
}

#define BOOK_MAX_VALUE 0x7FFFFFFFu
#define BOOK_MAX_DEPTH 1000u

int apps_book_parse(const uint8_t *body, size_t len, apps_book_req *r)
{
    if (len != APPS_BOOK_BODY)
        return dsig_fail(DSIG_E_FORMAT, "book: request body of %zu bytes (exactly %u)", len, APPS_BOOK_BODY);
    r->op = body[0];
    r->price = dsig_load_be32(body + 1);
    r->qty = dsig_load_be32(body + 5);
    r->order = dsig_load_be64(body + 9);
    switch (r->op) {
    case APPS_BOOK_BUY:
    case APPS_BOOK_SELL:
        if (r->price == 0 || r->price > BOOK_MAX_VALUE)
            return dsig_fail(DSIG_E_FORMAT, "book: price %u out of range (1..%u ticks)", r->price, BOOK_MAX_VALUE);
        if (r->qty == 0 || r->qty > BOOK_MAX_VALUE)
            return dsig_fail(DSIG_E_FORMAT, "book: quantity %u out of range (1..%u)", r->qty, BOOK_MAX_VALUE);
        if (r->order)
            return dsig_fail(DSIG_E_FORMAT, "book: a new order carries no order id");
        return DSIG_OK;
    case APPS_BOOK_CANCEL:
        if (r->order == 0)
            return dsig_fail(DSIG_E_FORMAT, "book: cancel needs an order id");
        if (r->price || r->qty)
            return dsig_fail(DSIG_E_FORMAT, "book: cancel carries no price or quantity");
        return DSIG_OK;
    case APPS_BOOK_DEPTH:
        if (r->qty == 0 || r->qty > BOOK_MAX_DEPTH)
            return dsig_fail(DSIG_E_FORMAT, "book: depth of %u levels (1..%u)", r->qty, BOOK_MAX_DEPTH);
        if (r->price || r->order)
            return dsig_fail(DSIG_E_FORMAT, "book: depth carries no price or order id");
        return DSIG_OK;
    default:
        return dsig_fail(DSIG_E_FORMAT, "book: unknown operation %u", r->op);
    }
}
