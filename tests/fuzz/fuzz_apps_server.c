/*
 * Fuzz target: the auditable applications' server (src/apps/server.c, the order book, scheme "sig":
 * Ed25519) fed a hostile client's byte stream over a real connection — the server runs in this process
 * (apps_server_run on its own thread, a Unix socket in a temporary directory, its request log there),
 * each input is one connection. Everything a client sends is written in pieces split at random points
 * (fuzz_feed), so the server's incremental frame reading sees partial headers and payloads. The input is
 *
 *   byte 0   HELLO: bits 0-1 client (1, 2, 3 = not registered, raw: the next 12 bytes are the HELLO
 *            payload), bits 2-3 (app, scheme) asked for (book/sig, book/any, book/dsig, kv/sig)
 *   byte 1   split seed of the HELLO
 *   then operations, each a byte: bits 0-2 what (below), bits 3-7 the split seed of its bytes, then
 *     0, 6, 7  a request of the connection's client with the next sequence number, signed with its key;
 *              body: 17 bytes (0) or u8 length + bytes (6, 7)
 *     1        the same with edits (a byte: bit 0 a signed 8-bit sequence offset follows, bit 1 another
 *              client id, bit 2 the KV application, bit 3 scheme "none", bit 4 a flipped tag byte, bit 5
 *              signed with the other client's key), body as 0
 *     2        a request as 0, signed, then patched (u8 count of 5-byte fuzz_patch edits; body as 0)
 *     3        a frame: type u8, u16 length, payload
 *     4        SYNC
 *     5        u8 length + raw bytes, and the input ends (a torn frame, garbage)
 *   After the HELLO and after each operation the harness sends SYNC and reads the answers up to its
 *   SYNC_ACK (the server answers in order, one frame at a time): every answer is attributed to one
 *   operation. An input ends when the server closes the connection.
 *
 * Invariants (abort on violation; also whatever ASan and UBSan see in the server's threads):
 *   - the HELLO gets exactly the documented answer: WELCOME (44 bytes: version, book, sig, the next
 *     sequence number, the server's tag) for a well-formed HELLO of a registered client asking for
 *     book and sig (or any), else ERROR (protocol, unknown client) and the connection closed;
 *   - a request (built, edited, patched or raw) gets exactly the answer the harness's own reading of it
 *     predicts, in the server's order of checks: malformed (split or parse), protocol (app, scheme,
 *     client, tag), command (apps_book_parse), signature (dsig_verify with the connection client's
 *     public key), sequence (exactly the previous + 1): ERROR with that code and the request's
 *     sequence number, connection kept; else a REPLY — so a request whose signature does not verify
 *     under the client's key is never logged, executed or answered;
 *   - a REPLY verifies under the server's public key, answers exactly that request (app, scheme,
 *     client, sequence number, tag, BLAKE3 of the request message), carries one well-formed result
 *     value, and its log index is the next one (the server's entry count goes up by one per REPLY and
 *     by nothing else);
 *   - SYNC gets a 16-byte SYNC_ACK; any other frame from the client, or a malformed one, an ERROR and
 *     the connection closed; nothing is answered that was not asked (no frame type the server does not
 *     send, nothing after a closing ERROR).
 * The log and the book grow with accepted requests: the server is restarted on a new log every
 * FS_MAX_ENTRIES entries, which bounds both.
 */
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/apps_internal.h"
#include "core/bytes.h"
#include "fuzz_common.h"

#define FS_MAX_INPUT 65536u
#define FS_MAX_ENTRIES 4096u
#define FS_TIMEOUT_MS 30000 /* an answer's wait: generous, the campaign runs under nice 19 on a shared machine */
#define FS_NOT_REGISTERED 3u

static struct {
    int ready;
    dsig_key *server, *server_pub, *client[3], *client_pub[3]; /* clients 1 and 2 */
    apps_keyset *keys;
    char dir[256], log_path[300], sock[300], addr[320];
    uint8_t tag[APPS_TAG_BYTES];
    apps_server *srv;
    pthread_t th;
    apps_signer *signer[3];
    uint8_t *out;
} F;

static void *run(void *arg)
{
    (void)apps_server_run(arg);
    return NULL;
}

/* Start the server on a new, empty log. */
static void start(void)
{
    unlink(F.log_path);
    unlink(F.sock);
    const apps_server_opts o = {.app = APPS_APP_BOOK, .scheme = APPS_SCHEME_SIG, .key = F.server, .clients = F.keys,
                                .log_path = F.log_path, .listen = {F.addr}, .nlisten = 1, .quiet = 1};
    FUZZ_CHECK(apps_server_new(&F.srv, &o) == DSIG_OK, "server: %s", dsig_last_error_detail());
    FUZZ_CHECK(pthread_create(&F.th, NULL, run, F.srv) == 0, "server thread");
}

static void stop(void)
{
    apps_server_stop(F.srv);
    pthread_join(F.th, NULL);
    apps_server_free(F.srv);
    F.srv = NULL;
}

static void cleanup(void)
{
    stop();
    for (int c = 1; c <= 2; c++) {
        apps_signer_free(F.signer[c]);
        dsig_key_free(F.client[c]);
        dsig_key_free(F.client_pub[c]);
    }
    apps_keyset_free(F.keys);
    dsig_key_free(F.server);
    dsig_key_free(F.server_pub);
    free(F.out);
}

static void setup(void)
{
    if (F.ready)
        return;
    F.ready = 1;
    FUZZ_CHECK(dsig_init() == DSIG_OK, "dsig_init");
    F.server = fuzz_ed25519_key(0x5E);
    FUZZ_CHECK(dsig_key_public(&F.server_pub, F.server) == DSIG_OK && apps_server_tag(F.server_pub, F.tag) == DSIG_OK,
               "server key");
    snprintf(F.dir, sizeof F.dir, "%s", fuzz_tmpdir("apps-server"));
    char keys[300], p[400];
    snprintf(keys, sizeof keys, "%s/keys", F.dir);
    FUZZ_CHECK(mkdir(keys, 0700) == 0, "mkdir %s", keys);
    for (int c = 1; c <= 2; c++) {
        F.client[c] = fuzz_ed25519_key((uint8_t)c);
        char *text;
        size_t tl;
        FUZZ_CHECK(dsig_key_public(&F.client_pub[c], F.client[c]) == DSIG_OK &&
                       dsig_jwk_export(F.client_pub[c], 0, &text, &tl) == DSIG_OK,
                   "client %d public JWK", c);
        snprintf(p, sizeof p, "%s/client-%d.jwk", keys, c);
        FILE *f = fopen(p, "wb");
        FUZZ_CHECK(f && fwrite(text, 1, tl, f) == tl && fclose(f) == 0, "cannot write %s", p);
        dsig_free(text);
        FUZZ_CHECK(apps_signer_new(&F.signer[c], APPS_SCHEME_SIG, F.client[c], (uint64_t)c, 0, NULL, NULL) == DSIG_OK,
                   "client signer");
    }
    FUZZ_CHECK(apps_keyset_load(keys, &F.keys) == DSIG_OK, "keyset: %s", dsig_last_error_detail());
    snprintf(F.log_path, sizeof F.log_path, "%s/book.log", F.dir);
    snprintf(F.sock, sizeof F.sock, "%s/s.sock", F.dir);
    snprintf(F.addr, sizeof F.addr, "unix:%s", F.sock);
    F.out = malloc(APPS_MAX_FRAME);
    FUZZ_CHECK(F.out != NULL, "out of memory");
    start();
    atexit(cleanup);
}

/* ---- the connection ---------------------------------------------------------------------------- */

struct conn {
    apps_io io;
    int open;             /* the server has not closed it */
    uint64_t client;      /* the HELLO's client (0 before WELCOME) */
    uint64_t next_seq;    /* the model: the sequence number the server expects */
    uint64_t next_index;  /* the model: the log index of the next REPLY */
};

/* Write bytes, or one frame, in pieces (split seed; 0: one write). */
static void put(struct conn *c, const uint8_t *p, size_t n, uint32_t split)
{
    (void)fuzz_send_split(c->io.fd, p, n, split);
}

static void put_frame(struct conn *c, uint8_t type, const uint8_t *payload, size_t n, uint32_t split)
{
    (void)fuzz_send_frame(c->io.fd, type, payload, n, split);
}

/* The next frame from the server; 0 when it closed the connection. Its content is in c->io. */
static int next_frame(struct conn *c, uint8_t *type, const uint8_t **p, uint32_t *len)
{
    int rc = apps_io_read(&c->io, FS_TIMEOUT_MS, FS_TIMEOUT_MS, type, p, len);
    FUZZ_CHECK(rc != DSIG_E_WOULD_BLOCK, "no answer from the server within %d ms", FS_TIMEOUT_MS);
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_IO, "the server sent a malformed frame: %s", dsig_last_error_detail());
    if (rc != DSIG_OK)
        c->open = 0;
    return rc == DSIG_OK;
}

/* An ERROR frame: its code, and the sequence number it names. */
static unsigned error_code(const uint8_t *p, uint32_t len, uint64_t *seq)
{
    FUZZ_CHECK(len >= 9 && len <= 9 + APPS_ERROR_TEXT_MAX + 512, "ERROR frame of %u bytes", len);
    FUZZ_CHECK(p[0] >= APPS_ERR_MALFORMED && p[0] <= APPS_ERR_PROTOCOL, "ERROR code %u", p[0]);
    *seq = dsig_load_be64(p + 1);
    return p[0];
}

/* What the server must answer to a REQUEST payload (0 = a REPLY, else the ERROR code), by the
 * harness's own reading of it; *seq receives its sequence number (0 when it does not parse). */
static unsigned predict(const struct conn *c, const uint8_t *p, size_t n, uint64_t *seq, uint8_t hash[32])
{
    const uint8_t *msg, *sig;
    size_t ml, sl;
    apps_req rq;
    *seq = 0;
    if (apps_signed_split(p, n, &msg, &ml, &sig, &sl) != DSIG_OK || apps_req_parse(msg, ml, &rq) != DSIG_OK)
        return APPS_ERR_MALFORMED;
    *seq = rq.seq;
    struct iovec h = {(void *)msg, ml};
    apps_hash(hash, &h, 1);
    if (rq.app != APPS_APP_BOOK || rq.scheme != APPS_SCHEME_SIG || rq.client != c->client ||
        memcmp(rq.tag, F.tag, APPS_TAG_BYTES) != 0)
        return APPS_ERR_PROTOCOL;
    apps_book_req b;
    if (apps_book_parse(rq.body, rq.body_len, &b) != DSIG_OK)
        return APPS_ERR_COMMAND;
    if (dsig_verify(dsig_alg_by_name("Ed25519"), F.client_pub[c->client], msg, ml, sig, sl) != DSIG_OK)
        return APPS_ERR_SIGNATURE;
    return rq.seq == c->next_seq ? 0 : APPS_ERR_SEQUENCE;
}

/* A REPLY: verifies under the server key, answers exactly the request (seq, hash), the next index. */
static void check_reply(struct conn *c, const uint8_t *p, uint32_t len, uint64_t seq, const uint8_t hash[32])
{
    const uint8_t *msg, *sig;
    size_t ml, sl;
    apps_rep rep;
    FUZZ_CHECK(apps_signed_split(p, len, &msg, &ml, &sig, &sl) == DSIG_OK && apps_rep_parse(msg, ml, &rep) == DSIG_OK,
               "malformed REPLY: %s", dsig_last_error_detail());
    FUZZ_CHECK(apps_verify_offline(APPS_SCHEME_SIG, F.server_pub, 0, msg, ml, sig, sl) == DSIG_OK,
               "the REPLY does not verify under the server key");
    FUZZ_CHECK(rep.app == APPS_APP_BOOK && rep.scheme == APPS_SCHEME_SIG && rep.client == c->client && rep.seq == seq &&
                   memcmp(rep.tag, F.tag, APPS_TAG_BYTES) == 0 && memcmp(rep.req_hash, hash, 32) == 0,
               "the REPLY (client %llu, seq %llu) does not answer request %llu of client %llu",
               (unsigned long long)rep.client, (unsigned long long)rep.seq, (unsigned long long)seq,
               (unsigned long long)c->client);
    FUZZ_CHECK(rep.index == c->next_index, "REPLY with log index %llu, the next is %llu", (unsigned long long)rep.index,
               (unsigned long long)c->next_index);
    FUZZ_CHECK(apps_value_check(rep.result, rep.result_len) == DSIG_OK, "the REPLY's result is not a value");
    c->next_index++;
    c->next_seq++;
}

/* The barrier: SYNC, then the answers up to its SYNC_ACK. `want` is what the operation before it must
 * have been answered (0 a REPLY, an ERROR code, -1 nothing, -2 an ERROR and the connection closed,
 * -3 anything (a frame of a type not modelled)). */
static void barrier(struct conn *c, int want, uint64_t seq, const uint8_t hash[32], uint32_t split)
{
    if (!c->open)
        return;
    put_frame(c, APPS_T_SYNC, NULL, 0, split);
    uint8_t type;
    const uint8_t *p;
    uint32_t len;
    int answered = 0;
    while (next_frame(c, &type, &p, &len)) {
        if (type == APPS_T_SYNC_ACK) {
            FUZZ_CHECK(len == 16, "SYNC_ACK of %u bytes", len);
            FUZZ_CHECK(want == -1 || want == -3 || answered, "no answer to an operation (expected %d)", want);
            return;
        }
        FUZZ_CHECK(!answered, "two answers to one operation (the second of type 0x%02x)", type);
        answered = 1;
        if (type == APPS_T_REPLY) {
            FUZZ_CHECK(want == 0, "a REPLY where %d was expected", want);
            check_reply(c, p, len, seq, hash);
        } else {
            FUZZ_CHECK(type == APPS_T_ERROR, "the server sent a frame of type 0x%02x", type);
            uint64_t es;
            unsigned code = error_code(p, len, &es);
            FUZZ_CHECK(want == -2 || want == -3 || want == (int)code,
                       "ERROR %u (%.*s) where %d was expected", code, (int)(len - 9), (const char *)p + 9, want);
            FUZZ_CHECK(want < 0 || es == seq, "ERROR for sequence number %llu, the request had %llu",
                       (unsigned long long)es, (unsigned long long)seq);
        }
    }
    /* closed: only after an answer that closes (or when anything goes) */
    FUZZ_CHECK(want == -2 || want == -3, "the server closed the connection (expected %d)", want);
    if (want == -2)
        FUZZ_CHECK(answered, "the server closed the connection without an ERROR");
}

/* Build, sign and (optionally) edit a request; out: the REQUEST payload, its length. */
static size_t build_request(struct conn *c, fuzz_in *in, unsigned what, unsigned edits)
{
    const int64_t delta = edits & 1 ? (int8_t)fuzz_u8(in) : 0;
    size_t bl;
    const uint8_t *body = fuzz_take(in, what == 6 || what == 7 ? fuzz_u8(in) : APPS_BOOK_BODY, &bl);
    uint8_t zero[APPS_BOOK_BODY] = {0};
    if (!bl)
        body = zero, bl = sizeof zero;
    apps_req rq = {.app = APPS_APP_BOOK, .scheme = APPS_SCHEME_SIG, .client = c->client, .seq = c->next_seq,
                   .body = body, .body_len = bl};
    memcpy(rq.tag, F.tag, APPS_TAG_BYTES);
    unsigned signer = (unsigned)c->client;
    rq.seq += (uint64_t)delta;
    if (edits & 2)
        rq.client = c->client == 1 ? 2 : 1;
    if (edits & 4)
        rq.app = APPS_APP_KV;
    if (edits & 8)
        rq.scheme = APPS_SCHEME_NONE;
    if (edits & 16)
        rq.tag[edits >> 6] ^= 1;
    if (edits & 32)
        signer = c->client == 1 ? 2 : 1;
    size_t ml, sl;
    FUZZ_CHECK(apps_req_encode(&rq, F.out + 4, APPS_MAX_FRAME - 4, &ml) == DSIG_OK, "request encode");
    FUZZ_CHECK(apps_sign(F.signer[signer], F.out + 4, ml, F.out + 4 + ml, APPS_MAX_FRAME - 4 - ml, &sl) == DSIG_OK,
               "request sign");
    dsig_store_be32(F.out, (uint32_t)ml);
    return 4 + ml + sl;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > FS_MAX_INPUT)
        return 0;
    setup();
    apps_server_stats st;
    apps_server_stats_get(F.srv, &st);
    if (st.entries >= FS_MAX_ENTRIES) { /* bound the log and the book */
        stop();
        start();
        apps_server_stats_get(F.srv, &st);
    }
    const uint64_t entries0 = st.entries;
    fuzz_in in = {data, size};
    const unsigned b0 = fuzz_u8(&in), split0 = fuzz_u8(&in);
    struct conn c = {.open = 1, .next_index = entries0 + 1};
    dsig_net_addr a;
    int fd;
    FUZZ_CHECK(dsig_net_addr_parse(F.addr, &a) == DSIG_OK && dsig_net_socket_connect(&a, FS_TIMEOUT_MS, &fd) == DSIG_OK,
               "connect: %s", dsig_last_error_detail());
    FUZZ_CHECK(apps_io_init(&c.io, fd) == DSIG_OK, "connection buffers");

    /* HELLO and its model */
    static const uint8_t hello_as[4][2] = {{APPS_APP_BOOK, APPS_SCHEME_SIG},
                                           {APPS_APP_BOOK, APPS_HELLO_ANY_SCHEME},
                                           {APPS_APP_BOOK, APPS_SCHEME_DSIG},
                                           {APPS_APP_KV, APPS_SCHEME_SIG}};
    uint8_t hello[APPS_HELLO_BYTES] = {APPS_PROTO_VERSION, hello_as[(b0 >> 2) & 3][0], hello_as[(b0 >> 2) & 3][1], 0};
    dsig_store_be64(hello + 4, (b0 & 3) + 1u);
    if ((b0 & 3) == 3) {
        size_t hl;
        const uint8_t *h = fuzz_take(&in, APPS_HELLO_BYTES, &hl);
        memset(hello, 0, sizeof hello);
        memcpy(hello, h, hl);
    }
    const uint64_t id = dsig_load_be64(hello + 4);
    const int welcome = hello[0] == APPS_PROTO_VERSION && hello[3] == 0 && hello[1] == APPS_APP_BOOK &&
                        (hello[2] == APPS_SCHEME_SIG || hello[2] == APPS_HELLO_ANY_SCHEME) && (id == 1 || id == 2);
    put_frame(&c, APPS_T_HELLO, hello, sizeof hello, split0);
    uint8_t type;
    const uint8_t *p;
    uint32_t len;
    if (!next_frame(&c, &type, &p, &len))
        FUZZ_CHECK(0, "the server closed the connection without answering the HELLO");
    if (!welcome) {
        uint64_t es;
        FUZZ_CHECK(type == APPS_T_ERROR, "a HELLO that is not a registered client's for book/sig got type 0x%02x", type);
        const unsigned code = error_code(p, len, &es),
                       want = hello[0] == APPS_PROTO_VERSION && hello[3] == 0 && hello[1] == APPS_APP_BOOK &&
                                      (hello[2] == APPS_SCHEME_SIG || hello[2] == APPS_HELLO_ANY_SCHEME)
                                  ? APPS_ERR_UNKNOWN
                                  : APPS_ERR_PROTOCOL;
        FUZZ_CHECK(code == want, "HELLO answered ERROR %u, expected %u", code, want);
        FUZZ_CHECK(!next_frame(&c, &type, &p, &len), "a frame (type 0x%02x) after a closing ERROR", type);
    } else {
        FUZZ_CHECK(type == APPS_T_WELCOME && len == APPS_WELCOME_BYTES, "HELLO answered type 0x%02x, %u bytes", type,
                   len);
        FUZZ_CHECK(p[0] == APPS_PROTO_VERSION && p[1] == APPS_APP_BOOK && p[2] == APPS_SCHEME_SIG && p[3] == 0 &&
                       memcmp(p + 12, F.tag, APPS_TAG_BYTES) == 0 && dsig_load_be64(p + 4) >= 1,
                   "malformed WELCOME");
        c.client = id;
        c.next_seq = dsig_load_be64(p + 4);
        barrier(&c, -1, 0, NULL, 0);
    }

    /* the operations */
    while (c.open && in.n) {
        const unsigned op = fuzz_u8(&in), what = op & 7, split = op >> 3;
        uint8_t hash[32] = {0};
        uint64_t seq = 0;
        if (what == 5) { /* raw bytes, then the end: the server may wait for the rest of a frame until EOF */
            size_t rl;
            const uint8_t *raw = fuzz_take(&in, fuzz_u8(&in), &rl);
            put(&c, raw, rl, split);
            shutdown(c.io.fd, SHUT_WR);
            while (next_frame(&c, &type, &p, &len)) {
                if (type == APPS_T_REPLY) { /* the raw bytes may hold whole requests */
                    FUZZ_CHECK(0, "a REPLY to raw bytes: a request the harness did not model");
                }
                FUZZ_CHECK(type == APPS_T_ERROR || type == APPS_T_SYNC_ACK, "the server sent a frame of type 0x%02x",
                           type);
            }
            break;
        }
        if (what == 4) { /* a SYNC: the barrier's own */
            barrier(&c, -1, 0, NULL, split);
            continue;
        }
        size_t n;
        uint8_t ftype = APPS_T_REQUEST;
        const uint8_t *payload = F.out;
        if (what == 3) {
            ftype = fuzz_u8(&in);
            payload = fuzz_take(&in, fuzz_u16(&in), &n);
        } else {
            n = build_request(&c, &in, what, what == 1 ? fuzz_u8(&in) : 0);
            if (what == 2) {
                static uint8_t patched[APPS_MAX_FRAME];
                size_t el;
                const uint8_t *ed = fuzz_take(&in, 5u * fuzz_u8(&in), &el);
                n = fuzz_patch(F.out, n, ed, el, patched, 64);
                payload = patched;
            }
        }
        if (ftype == APPS_T_SYNC && n == 0) { /* a SYNC built as a frame: the barrier's, split otherwise */
            barrier(&c, -1, 0, NULL, split);
            continue;
        }
        int want;
        if (ftype == APPS_T_REQUEST)
            want = (int)predict(&c, payload, n, &seq, hash);
        else if (ftype >= DSIG_NET_T_APP_MIN && ftype <= DSIG_NET_T_APP_MAX)
            want = -2; /* HELLO again, BATCH (scheme sig), a server's frame type, an unknown type */
        else
            want = -3; /* not a frame type of the transport, or a heartbeat: the decoder's business */
        put_frame(&c, ftype, payload, n, split);
        barrier(&c, want, seq, hash, split);
    }
    apps_io_clear(&c.io);
    /* the server's log grew by one entry per REPLY, and by nothing else */
    apps_server_stats_get(F.srv, &st);
    FUZZ_CHECK(st.entries == c.next_index - 1, "the log has %llu entries, %llu expected (%llu REPLYs)",
               (unsigned long long)st.entries, (unsigned long long)(c.next_index - 1),
               (unsigned long long)(c.next_index - 1 - entries0));
    return 0;
}

/* Seeds: every HELLO; honest orders of each kind, a replay, a gap, each field edit, a patch, frames of
 * every client type, SYNC, a torn frame. */
static void seeds(void)
{
    uint8_t body[APPS_BOOK_BODY];
    for (unsigned h = 0; h < 16; h++) {
        const uint8_t head[2] = {(uint8_t)h, (uint8_t)(h * 7)};
        fuzz_seed_begin();
        fuzz_seed_add(head, 2);
        if ((h & 3) == 3) {
            uint8_t raw[APPS_HELLO_BYTES] = {APPS_PROTO_VERSION, APPS_APP_BOOK, APPS_SCHEME_SIG, 0};
            dsig_store_be64(raw + 4, 2);
            fuzz_seed_add(raw, sizeof raw);
        }
        apps_book_body(APPS_BOOK_BUY, 100 + h, 10, 0, body);
        const uint8_t op0 = (uint8_t)(h << 3);
        fuzz_seed_add(&op0, 1);
        fuzz_seed_add(body, sizeof body);
        fuzz_seed_end();
    }
    static const unsigned ops[4][3] = {{APPS_BOOK_BUY, 100, 5}, {APPS_BOOK_SELL, 99, 3}, {APPS_BOOK_DEPTH, 0, 10},
                                       {APPS_BOOK_CANCEL, 0, 0}};
    for (unsigned what = 0; what < 8; what++)
        for (unsigned v = 0; v < 4; v++) {
            const uint8_t head[2] = {(uint8_t)(v & 1), 0};
            fuzz_seed_begin();
            fuzz_seed_add(head, 2);
            for (unsigned k = 0; k < 4; k++) { /* four orders, then the operation */
                const uint8_t o = (uint8_t)(k << 3);
                apps_book_body(ops[k][0], ops[k][1], ops[k][2], ops[k][0] == APPS_BOOK_CANCEL ? 1 : 0, body);
                fuzz_seed_add(&o, 1);
                fuzz_seed_add(body, sizeof body);
            }
            const uint8_t o = (uint8_t)(what | (v + 1) << 3);
            fuzz_seed_add(&o, 1);
            apps_book_body(ops[v % 3][0], ops[v % 3][1], ops[v % 3][2], 0, body); /* BUY, SELL, DEPTH */
            if (what == 0) {
                fuzz_seed_add(body, sizeof body);
            } else if (what == 1) {
                static const uint8_t e[4] = {1, 2 | 4, 8 | 16, 32};
                fuzz_seed_add(&e[v], 1);
                if (e[v] & 1) {
                    const uint8_t d = 0xFF; /* a replay of the previous sequence number */
                    fuzz_seed_add(&d, 1);
                }
                fuzz_seed_add(body, sizeof body);
            } else if (what == 2) {
                const uint8_t pe[6] = {1, (uint8_t)(v * 40), 0, 0, 0, 1}; /* one xor edit at an offset */
                fuzz_seed_add(body, sizeof body);
                fuzz_seed_add(pe, sizeof pe);
            } else if (what == 3) {
                const uint8_t t[3] = {(uint8_t)(APPS_T_HELLO + v * 2), 3, 0};
                fuzz_seed_add(t, 3);
                fuzz_seed_add("abc", 3);
            } else if (what == 5) {
                uint8_t hdr[DSIG_NET_HDR_BYTES];
                dsig_net_frame_header(hdr, APPS_T_REQUEST, 100);
                const uint8_t l = (uint8_t)(v + 8);
                fuzz_seed_add(&l, 1);
                fuzz_seed_add(hdr, l < sizeof hdr ? l : sizeof hdr);
            } else if (what >= 6) {
                const uint8_t l = APPS_BOOK_BODY - (uint8_t)v;
                fuzz_seed_add(&l, 1);
                fuzz_seed_add(body, l);
            }
            fuzz_seed_end();
        }
}

FUZZ_SEED_GENERATOR(seeds)
