/*
 * Fuzz target: the parsers of the auditable applications (src/apps, docs/kv.md, docs/orderbook.md) — what
 * a server reads from its clients, a client from its server, and the auditor from a log file. Byte 0 of
 * the input selects the target (bits 0-2, 7 = 0; bit 3 = patch mode for the receipt and the log: the rest is
 * 5-byte edits of a valid one, see fuzz_patch):
 *
 *   0 request message (apps_req_parse)       accepted => re-encodes to the same bytes
 *   1 reply message (apps_rep_parse)         accepted => re-encodes to the same bytes, its result a value
 *   2 result value (apps_value_check)        accepted => printed (apps_val_next walks it)
 *   3 KV request body (apps_kv_parse and     accepted => re-encodes to the same bytes; the backend's check
 *     the KV backend's check)                accepts only what parses, and `writes` only what it accepts
 *   4 order-book bodies, applied in turn     the backend's check accepts exactly what apps_book_parse does;
 *     (client u8 ‖ 17-byte body) ...         every result is one well-formed value; after each operation
 *                                            the book is sorted (bids descending, asks ascending), never
 *                                            crossed, and its levels count every resting order
 *   5 receipt (apps_receipt_check, Ed25519)  accepted only if byte-identical to the valid receipt
 *   6 log file (apps_audit_verify with the   a verdict naming the bad entry, or every record verified —
 *     keys of clients 1 and 2, then the      then only if the log is the valid one (or a prefix of it) —
 *     book replay when it verifies)          and the replay of a verified log executes every record
 *
 * The signatures are Ed25519 (scheme "sig") with keys from fixed seeds; the valid receipt and log are
 * made here, also as seeds. The server's and client's socket handlers are tested by tests/apps.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/apps_internal.h"
#include "core/bytes.h"
#include "fuzz_common.h"

#define FA_MAX_INPUT 65536u
#define FA_TARGETS 7u
#define FA_PATCH 8u
#define FA_LOG_RECORDS 6u
#define FA_GROW 512u

static struct {
    int ready;
    dsig_key *server, *server_pub, *client[3]; /* clients 1 and 2 */
    apps_keyset *keys;
    char log_path[300];
    FILE *devnull;
    uint8_t *receipt, *log;
    size_t receipt_len, log_len;
    size_t rec_end[FA_LOG_RECORDS]; /* end offset of each record of the valid log */
} F;

static void write_file(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f && fwrite(d, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

/* The valid receipt: a KV reply to client 3 signed by the server key. */
static void make_receipt(apps_signer *s)
{
    static const uint8_t val[] = {APPS_V_ARRAY, 0, 0, 0, 2, APPS_V_INT, 0, 0, 0, 0, 0, 0, 0, 42,
                                  APPS_V_BULK, 0, 0, 0, 2, 'o', 'k'};
    apps_rep rep = {.app = APPS_APP_KV, .scheme = APPS_SCHEME_SIG, .client = 3, .seq = 4, .index = 5,
                    .result = val, .result_len = sizeof val};
    FUZZ_CHECK(apps_server_tag(F.server_pub, rep.tag) == DSIG_OK, "server tag");
    memset(rep.req_hash, 0x11, sizeof rep.req_hash);
    memset(rep.chain, 0x22, sizeof rep.chain);
    uint8_t buf[1024];
    size_t ml, sl;
    FUZZ_CHECK(apps_rep_encode(&rep, buf + 4, sizeof buf - 4, &ml) == DSIG_OK, "reply encode");
    FUZZ_CHECK(apps_sign(s, buf + 4, ml, buf + 4 + ml, sizeof buf - 4 - ml, &sl) == DSIG_OK, "receipt sign");
    dsig_store_be32(buf, (uint32_t)ml);
    F.receipt_len = 4 + ml + sl;
    F.receipt = fuzz_dup(buf, F.receipt_len);
}

/* The valid log: book orders of clients 1 and 2 alternating, consecutive sequence numbers, chained. */
static void make_log(void)
{
    apps_signer *s[3] = {0};
    for (int c = 1; c <= 2; c++)
        FUZZ_CHECK(apps_signer_new(&s[c], APPS_SCHEME_SIG, F.client[c], (uint64_t)c, 0, NULL, NULL) == DSIG_OK,
                   "client signer");
    uint8_t chain[32] = {0}, *rec = malloc(APPS_REC_MAX);
    F.log = malloc(FA_LOG_RECORDS * 512);
    FUZZ_CHECK(rec && F.log, "out of memory");
    uint64_t seq[3] = {0};
    static const unsigned ops[FA_LOG_RECORDS] = {APPS_BOOK_BUY, APPS_BOOK_SELL, APPS_BOOK_BUY, APPS_BOOK_CANCEL,
                                                 APPS_BOOK_SELL, APPS_BOOK_DEPTH};
    for (size_t i = 1; i <= FA_LOG_RECORDS; i++) {
        int c = (i % 2) ? 1 : 2;
        seq[c]++;
        uint8_t body[APPS_BOOK_BODY], msg[256], sig[256];
        unsigned op = ops[i - 1];
        apps_book_body(op, op == APPS_BOOK_CANCEL || op == APPS_BOOK_DEPTH ? 0 : 100 + (uint32_t)i,
                       op == APPS_BOOK_CANCEL ? 0 : op == APPS_BOOK_DEPTH ? 5 : 10 * (uint32_t)i,
                       op == APPS_BOOK_CANCEL ? 1 : 0, body);
        apps_req rq = {.app = APPS_APP_BOOK, .scheme = APPS_SCHEME_SIG, .client = (uint64_t)c, .seq = seq[c],
                       .body = body, .body_len = sizeof body};
        FUZZ_CHECK(apps_server_tag(F.server_pub, rq.tag) == DSIG_OK, "server tag");
        size_t ml, sl, rl;
        FUZZ_CHECK(apps_req_encode(&rq, msg, sizeof msg, &ml) == DSIG_OK, "request encode");
        FUZZ_CHECK(apps_sign(s[c], msg, ml, sig, sizeof sig, &sl) == DSIG_OK, "request sign");
        apps_rec r = {.scheme = APPS_SCHEME_SIG, .app = APPS_APP_BOOK, .index = i, .client = (uint64_t)c,
                      .seq = seq[c], .time_ns = 1000 + i, .req = msg, .req_len = ml, .sig = sig, .sig_len = sl};
        FUZZ_CHECK(apps_rec_build(&r, chain, rec, APPS_REC_MAX, &rl) == DSIG_OK && rl <= 512, "record build");
        memcpy(chain, r.chain, 32);
        memcpy(F.log + F.log_len, rec, rl);
        F.log_len += rl;
        F.rec_end[i - 1] = F.log_len;
    }
    free(rec);
    for (int c = 1; c <= 2; c++)
        apps_signer_free(s[c]);
}

static void setup(void)
{
    if (F.ready)
        return;
    F.ready = 1;
    FUZZ_CHECK(dsig_init() == DSIG_OK, "dsig_init");
    F.server = fuzz_ed25519_key(0x5E);
    FUZZ_CHECK(dsig_key_public(&F.server_pub, F.server) == DSIG_OK, "server public key");
    const char *dir = fuzz_tmpdir("apps");
    char keys[300], p[400];
    snprintf(keys, sizeof keys, "%s/keys", dir);
    FUZZ_CHECK(mkdir(keys, 0700) == 0, "mkdir %s", keys);
    for (int c = 1; c <= 2; c++) {
        F.client[c] = fuzz_ed25519_key((uint8_t)c);
        dsig_key *pub;
        char *text;
        size_t tl;
        FUZZ_CHECK(dsig_key_public(&pub, F.client[c]) == DSIG_OK && dsig_jwk_export(pub, 0, &text, &tl) == DSIG_OK,
                   "client %d public JWK", c);
        snprintf(p, sizeof p, "%s/client-%d.jwk", keys, c);
        write_file(p, text, tl);
        dsig_free(text);
        dsig_key_free(pub);
    }
    FUZZ_CHECK(apps_keyset_load(keys, &F.keys) == DSIG_OK, "keyset: %s", dsig_last_error_detail());
    snprintf(F.log_path, sizeof F.log_path, "%s/log", dir);
    FUZZ_CHECK((F.devnull = fopen("/dev/null", "w")) != NULL, "/dev/null");
    apps_signer *s;
    FUZZ_CHECK(apps_signer_new(&s, APPS_SCHEME_SIG, F.server, 0, 0, NULL, NULL) == DSIG_OK, "server signer");
    make_receipt(s);
    apps_signer_free(s);
    make_log();
    /* the references are valid: otherwise "accepted only if identical to them" would prove nothing */
    FUZZ_CHECK(apps_receipt_check(F.receipt, F.receipt_len, F.server_pub, NULL) == DSIG_OK, "the valid receipt: %s",
               dsig_last_error_detail());
    write_file(F.log_path, F.log, F.log_len);
    apps_audit_result res;
    FUZZ_CHECK(apps_audit_verify(F.log_path, F.keys, &res) == DSIG_OK && res.entries == FA_LOG_RECORDS,
               "the valid log: %s", res.what);
}

/* ---- messages, values, bodies ------------------------------------------------------------------ */

static void t_request(const uint8_t *d, size_t n)
{
    apps_req r;
    int rc = apps_req_parse(d, n, &r);
    fuzz_check_detail(rc, "apps_req_parse");
    if (rc != DSIG_OK)
        return;
    FUZZ_CHECK(r.body_len == n - APPS_MSG_HDR && r.client >= 1 && r.seq >= 1, "accepted request fields");
    uint8_t *out = malloc(n);
    size_t len = 0;
    FUZZ_CHECK(out && apps_req_encode(&r, out, n, &len) == DSIG_OK, "an accepted request does not re-encode");
    FUZZ_CHECK(len == n && memcmp(out, d, n) == 0, "an accepted request re-encodes to other bytes");
    free(out);
}

static void t_reply(const uint8_t *d, size_t n)
{
    apps_rep r;
    int rc = apps_rep_parse(d, n, &r);
    fuzz_check_detail(rc, "apps_rep_parse");
    if (rc != DSIG_OK)
        return;
    FUZZ_CHECK(apps_value_check(r.result, r.result_len) == DSIG_OK, "an accepted reply's result is no value");
    uint8_t *out = malloc(n);
    size_t len = 0;
    FUZZ_CHECK(out && apps_rep_encode(&r, out, n, &len) == DSIG_OK, "an accepted reply does not re-encode");
    FUZZ_CHECK(len == n && memcmp(out, d, n) == 0, "an accepted reply re-encodes to other bytes");
    free(out);
    apps_value_print(F.devnull, r.result, r.result_len);
}

static void t_value(const uint8_t *d, size_t n)
{
    int rc = apps_value_check(d, n);
    fuzz_check_detail(rc, "apps_value_check");
    apps_value_print(F.devnull, d, n); /* checks again; walks the value when it is one */
}

static void t_kv(const uint8_t *d, size_t n)
{
    const uint8_t *argv[APPS_KV_MAX_ARGS];
    size_t lens[APPS_KV_MAX_ARGS], argc = 0;
    int rc = apps_kv_parse(d, n, argv, lens, APPS_KV_MAX_ARGS, &argc);
    fuzz_check_detail(rc, "apps_kv_parse");
    char why[512] = "";
    int ok = apps_kv_ops.check(d, n, why, sizeof why) == 0;
    FUZZ_CHECK(ok || why[0], "the KV check refuses without saying why");
    FUZZ_CHECK(!ok || rc == DSIG_OK, "the KV check accepts a body that does not parse");
    FUZZ_CHECK(!apps_kv_ops.writes(d, n) || ok, "a refused KV body counts as a write");
    if (rc != DSIG_OK)
        return;
    FUZZ_CHECK(argc >= 1 && argc <= APPS_KV_MAX_ARGS, "argument count %zu", argc);
    /* apps_kv_body takes C strings; the lengths make embedded NULs fine */
    uint8_t *out = malloc(n);
    size_t len = 0;
    rc = out ? apps_kv_body((int)argc, (const char *const *)argv, lens, out, n, &len) : DSIG_E_NOMEM;
    if (n <= APPS_MAX_BODY) {
        FUZZ_CHECK(rc == DSIG_OK, "an accepted KV body does not re-encode: %s", dsig_last_error_detail());
        FUZZ_CHECK(len == n && memcmp(out, d, n) == 0, "an accepted KV body re-encodes to other bytes");
    }
    free(out);
}

/* ---- the order book ----------------------------------------------------------------------------- */

static apps_level levels[2][1000];

static void check_book(apps_book *b)
{
    size_t nb = apps_book_depth(b, 1, levels[1], 1000), na = apps_book_depth(b, 0, levels[0], 1000);
    uint64_t orders = 0;
    for (int side = 0; side < 2; side++) {
        size_t nl = side ? nb : na;
        for (size_t i = 0; i < nl; i++) {
            const apps_level *l = &levels[side][i];
            FUZZ_CHECK(l->orders >= 1 && l->qty >= l->orders && l->price >= 1, "empty or zero level at %u", l->price);
            if (i)
                FUZZ_CHECK(side ? l->price < levels[side][i - 1].price : l->price > levels[side][i - 1].price,
                           "%s levels out of order", side ? "bid" : "ask");
            orders += l->orders;
        }
    }
    FUZZ_CHECK(!nb || !na || levels[1][0].price < levels[0][0].price, "crossed book: bid %u >= ask %u",
               levels[1][0].price, levels[0][0].price);
    if (nb < 1000 && na < 1000)
        FUZZ_CHECK(orders == apps_book_orders(b), "levels count %llu orders, the book %zu",
                   (unsigned long long)orders, apps_book_orders(b));
}

static void t_book(const uint8_t *d, size_t n)
{
    apps_backend *be;
    FUZZ_CHECK(apps_book_backend_new(&be) == DSIG_OK, "book backend");
    apps_buf out;
    apps_buf_init(&out, APPS_MAX_RESULT);
    uint64_t index = 0;
    for (size_t off = 0; off + 1 + APPS_BOOK_BODY <= n; off += 1 + APPS_BOOK_BODY) {
        const uint64_t client = 1 + d[off] % 4;
        const uint8_t *body = d + off + 1;
        char why[512] = "";
        apps_book_req r;
        int parsed = apps_book_parse(body, APPS_BOOK_BODY, &r) == DSIG_OK;
        int ok = be->ops->check(body, APPS_BOOK_BODY, why, sizeof why) == 0;
        FUZZ_CHECK(ok == parsed, "the book check and apps_book_parse disagree");
        FUZZ_CHECK(ok || why[0], "the book check refuses without saying why");
        FUZZ_CHECK(be->ops->writes(body, APPS_BOOK_BODY) == (ok && r.op != APPS_BOOK_DEPTH), "book writes");
        if (!ok)
            continue;
        out.len = 0;
        out.overflow = 0;
        FUZZ_CHECK(be->ops->exec(be, ++index, client, body, APPS_BOOK_BODY, &out) == APPS_EXEC_OK, "book exec");
        FUZZ_CHECK(!out.overflow && apps_value_check(out.p, out.len) == DSIG_OK, "a book result is no value");
        check_book(apps_book_backend_book(be));
    }
    apps_buf_free(&out);
    be->ops->free(be);
}

/* ---- receipts and logs --------------------------------------------------------------------------- */

/* The object of a signed target: the input itself, or the valid one with the input's edits. */
static uint8_t *object(const uint8_t *d, size_t n, int patch, const uint8_t *base, size_t blen, size_t *len)
{
    if (!patch) {
        *len = n;
        return fuzz_dup(d, n);
    }
    uint8_t *o = malloc(blen + FA_GROW);
    FUZZ_CHECK(o != NULL, "out of memory");
    *len = fuzz_patch(base, blen, d, n, o, FA_GROW);
    return o;
}

static void t_receipt(const uint8_t *d, size_t n, int patch)
{
    size_t len;
    uint8_t *r = object(d, n, patch, F.receipt, F.receipt_len, &len);
    apps_receipt_info info;
    int rc = apps_receipt_check(r, len, F.server_pub, &info);
    fuzz_check_detail(rc, "apps_receipt_check");
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_VERIFY || rc == DSIG_E_FORMAT || rc == DSIG_E_UNSUPPORTED,
               "receipt verdict %d", rc);
    if (rc == DSIG_OK)
        FUZZ_CHECK(len == F.receipt_len && memcmp(r, F.receipt, len) == 0, "an altered receipt is accepted");
    free(r);
}

static void t_log(const uint8_t *d, size_t n, int patch)
{
    size_t len;
    uint8_t *img = object(d, n, patch, F.log, F.log_len, &len);
    unlink(F.log_path);
    write_file(F.log_path, img, len);
    apps_audit_result res;
    int rc = apps_audit_verify(F.log_path, F.keys, &res);
    fuzz_check_detail(rc, "apps_audit_verify");
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_VERIFY, "audit verdict %d (%s)", rc, dsig_last_error_detail());
    if (rc == DSIG_E_VERIFY) {
        FUZZ_CHECK(res.what[0] && res.bad_entry >= 1 && res.bad_offset < len,
                   "a refused log names no bad entry (entry %llu after %llu good ones, offset %llu)",
                   (unsigned long long)res.bad_entry, (unsigned long long)res.entries,
                   (unsigned long long)res.bad_offset);
    } else {
        /* the signatures are the clients', the chain binds the unsigned fields: only the valid log, or
         * one of its prefixes, can verify */
        FUZZ_CHECK(res.entries <= FA_LOG_RECORDS && len == (res.entries ? F.rec_end[res.entries - 1] : 0) &&
                       memcmp(img, F.log, len) == 0,
                   "a log of %llu entries that is not the valid one verifies", (unsigned long long)res.entries);
        uint64_t writes = 0;
        rc = apps_audit_replay_book(F.log_path, F.devnull, &writes);
        FUZZ_CHECK(rc == DSIG_OK, "a verified log does not replay: %s", dsig_last_error_detail());
        FUZZ_CHECK(writes <= res.entries, "%llu writes replayed from %llu entries", (unsigned long long)writes,
                   (unsigned long long)res.entries);
    }
    free(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FA_MAX_INPUT)
        return 0;
    setup();
    const unsigned target = (data[0] & 7u) % FA_TARGETS, patch = data[0] & FA_PATCH;
    uint8_t *d = fuzz_dup(data + 1, size - 1);
    const size_t n = size - 1;
    switch (target) {
    case 0: t_request(d, n); break;
    case 1: t_reply(d, n); break;
    case 2: t_value(d, n); break;
    case 3: t_kv(d, n); break;
    case 4: t_book(d, n); break;
    case 5: t_receipt(d, n, patch); break;
    default: t_log(d, n, patch); break;
    }
    free(d);
    return 0;
}

/* ---- seeds --------------------------------------------------------------------------------------- */

static void seed_book_ops(void)
{
    static const struct { uint8_t client; unsigned op; uint32_t price, qty; uint64_t order; } o[] = {
        {1, APPS_BOOK_BUY, 100, 10, 0},  {2, APPS_BOOK_BUY, 101, 5, 0},  {3, APPS_BOOK_SELL, 103, 7, 0},
        {1, APPS_BOOK_SELL, 100, 12, 0}, {2, APPS_BOOK_CANCEL, 0, 0, 1}, {1, APPS_BOOK_CANCEL, 0, 0, 1},
        {4, APPS_BOOK_DEPTH, 0, 3, 0},   {3, APPS_BOOK_BUY, 104, 20, 0}, {2, APPS_BOOK_DEPTH, 0, 1000, 0},
    };
    fuzz_seed_begin();
    fuzz_seed_add("\x04", 1);
    for (size_t i = 0; i < sizeof o / sizeof o[0]; i++) {
        uint8_t b[APPS_BOOK_BODY];
        apps_book_body(o[i].op, o[i].price, o[i].qty, o[i].order, b);
        fuzz_seed_add(&o[i].client, 1);
        fuzz_seed_add(b, sizeof b);
    }
    fuzz_seed_end();
}

static void seeds(void)
{
    setup();
    /* a request and the log's records: their request messages */
    for (size_t i = 0; i < FA_LOG_RECORDS; i++) {
        const uint8_t *rec = i ? F.log + F.rec_end[i - 1] : F.log;
        fuzz_seed2("\x00", 1, rec + APPS_REC_HDR, dsig_load_be32(rec + 44));
    }
    const uint32_t ml = dsig_load_be32(F.receipt);
    fuzz_seed2("\x01", 1, F.receipt + 4, ml);
    fuzz_seed2("\x02", 1, F.receipt + 4 + APPS_REPLY_HDR, ml - APPS_REPLY_HDR);
    static const uint8_t nested[] = {APPS_V_ARRAY, 0, 0, 0, 3, APPS_V_NIL, APPS_V_STATUS, 0, 0, 0, 2, 'O', 'K',
                                     APPS_V_ARRAY, 0, 0, 0, 1, APPS_V_ERROR, 0, 0, 0, 1, 'E'};
    fuzz_seed2("\x02", 1, nested, sizeof nested);
    static const char *const kv[][4] = {{"SET", "key", "value", NULL}, {"GET", "key", NULL, NULL},
                                        {"HSET", "h", "f", "v"},       {"MGET", "a", "b", "c"},
                                        {"DBSIZE", NULL, NULL, NULL},  {"FLUSHALL", NULL, NULL, NULL}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        int argc = 0;
        while (argc < 4 && kv[i][argc])
            argc++;
        uint8_t b[256];
        size_t bl;
        FUZZ_CHECK(apps_kv_body(argc, kv[i], NULL, b, sizeof b, &bl) == DSIG_OK, "kv seed");
        fuzz_seed2("\x03", 1, b, bl);
    }
    seed_book_ops();
    fuzz_seed2("\x05", 1, F.receipt, F.receipt_len);
    fuzz_seed2("\x06", 1, F.log, F.log_len);
    fuzz_seed2("\x06", 1, F.log, F.rec_end[2]);
    static const uint8_t edit[5] = {0, 9, 0, 0, 0x01}; /* patch mode: one edit (xor 1 at byte 9) */
    fuzz_seed2("\x0d", 1, edit, sizeof edit);
    fuzz_seed2("\x0e", 1, edit, sizeof edit);
}

FUZZ_SEED_GENERATOR(seeds)
