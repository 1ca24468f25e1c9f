/*
 * Fuzz target: the auditable applications' client (src/apps/client.c: apps_client_connect, then one
 * apps_client_call) talking to a hostile server over a real connection — the harness listens on a Unix
 * socket in a temporary directory and, on a thread of its own, plays the server: it writes the byte
 * stream the input describes, split at random points (fuzz_send_split), and reads whatever the client
 * sends. The client is client 1 of the order book with an Ed25519 key; the server's key is Ed25519 too
 * (scheme "sig"). The input is
 *
 *   byte 0   bit 0: the client asks for scheme "sig" (else the server's); bits 1-2 the WELCOME: honest
 *            (scheme sig), honest with one byte edited (u8 offset, u8 xor follow), raw (44 bytes
 *            follow), honest naming scheme "none"; bit 3: no WELCOME at all
 *   byte 1   split seed; byte 2: the WELCOME's next sequence number - 1
 *   then u8 length + the request body the client sends, then frames, each an op byte (bits 0-2 what,
 *   bits 3-7 split seed):
 *     0  the honest REPLY to the client's request (the harness computes that request's hash): index
 *        u8, result u8 length + bytes (replaced by a nil value unless it is one well-formed value),
 *        signed with the server key
 *     1  the same with edits (a byte: bit 0 seq + 1, bit 1 another client, bit 2 a request hash bit,
 *        bit 3 a tag bit, bit 4 the KV application, bit 5 scheme "none"), signed with the server key
 *     2  the honest REPLY, signed, then patched (u8 count of 5-byte fuzz_patch edits)
 *     3  the honest REPLY signed with the client's key instead of the server's
 *     4  ERROR: code u8, then u8 length + text
 *     5  BATCH: u16 length + payload
 *     6  a frame: type u8, u16 length, payload
 *     7  u8 length + raw bytes, and the stream ends
 *   after the last frame the server shuts its side down (the client sees the end of the stream).
 *
 * Invariants (abort on violation):
 *   - connect succeeds exactly when the stream's first frame is a well-formed WELCOME (44 bytes,
 *     version 1, book, scheme "sig" — or "none" when the client asked for the server's — and the
 *     server key's tag); an ERROR there is reported with its code's status, a DSig scheme is refused
 *     (the client key is not a DSig key);
 *   - with scheme "sig" the call succeeds exactly when the first frame after the WELCOME is a REPLY
 *     whose bytes are the honest REPLY's (so an edited, patched or wrongly signed reply, or one for
 *     another request, is never accepted), and what it returns is that reply: its sequence number,
 *     index, result and receipt;
 *   - with scheme "none" (unsigned by design: the baseline of docs/kv.md) an accepted reply still
 *     answers exactly the request sent (application, scheme, client, sequence number, tag, request
 *     hash) and its result is one well-formed value;
 *   - every failure carries a detail string; nothing is read outside the frames sent.
 */
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/apps_internal.h"
#include "core/bytes.h"
#include "fuzz_common.h"

#define FC_MAX_INPUT 65536u
#define FC_CLIENT 1u

static struct {
    int ready;
    dsig_key *server, *server_pub, *client;
    apps_signer *server_signer, *client_signer;
    uint8_t tag[APPS_TAG_BYTES];
    char sock[300], addr[320];
    int lfd;
    uint8_t *stream, *msg; /* the server's byte stream; a message being built */
    size_t slen;
} F;

static void cleanup(void)
{
    apps_signer_free(F.server_signer);
    apps_signer_free(F.client_signer);
    dsig_key_free(F.server);
    dsig_key_free(F.server_pub);
    dsig_key_free(F.client);
    close(F.lfd);
    free(F.stream);
    free(F.msg);
}

static void setup(void)
{
    if (F.ready)
        return;
    F.ready = 1;
    FUZZ_CHECK(dsig_init() == DSIG_OK, "dsig_init");
    F.server = fuzz_ed25519_key(0x5E);
    F.client = fuzz_ed25519_key(FC_CLIENT);
    FUZZ_CHECK(dsig_key_public(&F.server_pub, F.server) == DSIG_OK && apps_server_tag(F.server_pub, F.tag) == DSIG_OK,
               "server key");
    FUZZ_CHECK(apps_signer_new(&F.server_signer, APPS_SCHEME_SIG, F.server, 0, 0, NULL, NULL) == DSIG_OK &&
                   apps_signer_new(&F.client_signer, APPS_SCHEME_SIG, F.client, FC_CLIENT, 0, NULL, NULL) == DSIG_OK,
               "signers");
    snprintf(F.sock, sizeof F.sock, "%s/s.sock", fuzz_tmpdir("apps-client"));
    snprintf(F.addr, sizeof F.addr, "unix:%s", F.sock);
    dsig_net_addr a;
    FUZZ_CHECK(dsig_net_addr_parse(F.addr, &a) == DSIG_OK && dsig_net_socket_listen(&a, 0, &F.lfd, NULL) == DSIG_OK,
               "listen on %s: %s", F.addr, dsig_last_error_detail());
    F.stream = malloc(4 * FC_MAX_INPUT + 65536);
    F.msg = malloc(APPS_MAX_FRAME);
    FUZZ_CHECK(F.stream && F.msg, "out of memory");
    atexit(cleanup);
}

/* ---- the server's byte stream ------------------------------------------------------------------ */

/* Pieces of the stream: each whole frame (or the raw tail) with the split seed of its writes. */
#define FC_MAX_PIECES 256u
static struct piece {
    size_t off, len;
    uint32_t split;
} pieces[FC_MAX_PIECES];
static size_t npieces;

static void add_piece(const uint8_t *p, size_t n, uint32_t split)
{
    if (npieces == FC_MAX_PIECES || F.slen + n > 4 * FC_MAX_INPUT + 65536)
        return;
    memcpy(F.stream + F.slen, p, n);
    pieces[npieces++] = (struct piece){F.slen, n, split};
    F.slen += n;
}

static void add_frame(uint8_t type, const uint8_t *payload, size_t n, uint32_t split)
{
    uint8_t hdr[DSIG_NET_HDR_BYTES];
    if (npieces == FC_MAX_PIECES || F.slen + sizeof hdr + n > 4 * FC_MAX_INPUT + 65536)
        return;
    dsig_net_frame_header(hdr, type, (uint32_t)n);
    memcpy(F.stream + F.slen, hdr, sizeof hdr);
    memcpy(F.stream + F.slen + sizeof hdr, payload, n);
    pieces[npieces++] = (struct piece){F.slen, sizeof hdr + n, split};
    F.slen += sizeof hdr + n;
}

/* The server thread: accept, write the stream, shut the write side, read until the client closes. */
static void *serve(void *arg)
{
    (void)arg;
    int fd = accept(F.lfd, NULL, NULL);
    FUZZ_CHECK(fd >= 0, "accept");
    for (size_t i = 0; i < npieces; i++)
        if (fuzz_send_split(fd, F.stream + pieces[i].off, pieces[i].len, pieces[i].split))
            break;
    shutdown(fd, SHUT_WR);
    uint8_t sink[4096];
    while (read(fd, sink, sizeof sink) > 0) {
    }
    close(fd);
    return NULL;
}

/* ---- the model --------------------------------------------------------------------------------- */

/* The status the client gives an ERROR frame of this code (client.c's mapping, docs/kv.md). */
static int error_status(unsigned code)
{
    switch (code) {
    case APPS_ERR_SIGNATURE: return DSIG_E_VERIFY;
    case APPS_ERR_SEQUENCE: return DSIG_E_STATE;
    case APPS_ERR_UNKNOWN: return DSIG_E_UNKNOWN_SIGNER;
    case APPS_ERR_MALFORMED:
    case APPS_ERR_COMMAND: return DSIG_E_FORMAT;
    case APPS_ERR_PROTOCOL: return DSIG_E_ARG;
    default: return DSIG_E_IO;
    }
}

/* A REPLY payload: length u32 ‖ reply message ‖ signature (by signer; NULL: none, scheme "none"). */
static size_t reply_payload(const apps_rep *rep, apps_signer *signer, uint8_t *out, size_t cap)
{
    size_t ml, sl = 0;
    FUZZ_CHECK(apps_rep_encode(rep, out + 4, cap - 4, &ml) == DSIG_OK, "reply encode");
    if (signer)
        FUZZ_CHECK(apps_sign(signer, out + 4, ml, out + 4 + ml, cap - 4 - ml, &sl) == DSIG_OK, "reply sign");
    dsig_store_be32(out, (uint32_t)ml);
    return 4 + ml + sl;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > FC_MAX_INPUT)
        return 0;
    setup();
    fuzz_in in = {data, size};
    const unsigned b0 = fuzz_u8(&in), split0 = fuzz_u8(&in);
    const uint64_t seq0 = 1u + fuzz_u8(&in);
    F.slen = 0;
    npieces = 0;

    /* The WELCOME (its model: what the client must make of it). */
    uint8_t w[APPS_WELCOME_BYTES] = {APPS_PROTO_VERSION, APPS_APP_BOOK, APPS_SCHEME_SIG, 0};
    dsig_store_be64(w + 4, seq0);
    memcpy(w + 12, F.tag, APPS_TAG_BYTES);
    const unsigned wv = (b0 >> 1) & 3;
    if (wv == 1) {
        const unsigned off = fuzz_u8(&in) % APPS_WELCOME_BYTES;
        w[off] ^= fuzz_u8(&in);
    } else if (wv == 2) {
        size_t wl;
        const uint8_t *raw = fuzz_take(&in, APPS_WELCOME_BYTES, &wl);
        memcpy(w, raw, wl);
    } else if (wv == 3) {
        w[2] = APPS_SCHEME_NONE;
    }
    const int ask_sig = b0 & 1, no_welcome = (b0 & 8) != 0;
    if (!no_welcome)
        add_frame(APPS_T_WELCOME, w, sizeof w, split0);
    const int scheme = w[2];
    int connect_ok = !no_welcome && w[0] == APPS_PROTO_VERSION && w[1] == APPS_APP_BOOK &&
                     (scheme == APPS_SCHEME_SIG || (scheme == APPS_SCHEME_NONE && !ask_sig)) &&
                     memcmp(w + 12, F.tag, APPS_TAG_BYTES) == 0;
    const uint64_t seq = dsig_load_be64(w + 4);

    /* The request the client will send, and the honest reply to it. */
    size_t bl;
    const uint8_t *body = fuzz_take(&in, fuzz_u8(&in), &bl);
    static const uint8_t empty_body[1] = {0};
    if (!bl)
        body = empty_body, bl = 1;
    apps_req rq = {.app = APPS_APP_BOOK, .scheme = scheme, .client = FC_CLIENT, .seq = seq, .body = body,
                   .body_len = bl};
    memcpy(rq.tag, w + 12, APPS_TAG_BYTES);
    uint8_t req_hash[32] = {0};
    size_t ml;
    if (apps_req_encode(&rq, F.msg, APPS_MAX_FRAME, &ml) == DSIG_OK) {
        struct iovec h = {F.msg, ml};
        apps_hash(req_hash, &h, 1);
    }
    static uint8_t honest[APPS_MAX_FRAME], hon[APPS_MAX_FRAME], buf[APPS_MAX_FRAME], patched[APPS_MAX_FRAME];
    size_t honest_len = 0;
    int decided = 0, call_ok = 0; /* the first frame after the WELCOME decides the call */
    int error_rc = 0;             /* an ERROR decided it: this status */
    while (in.n) {
        const unsigned op = fuzz_u8(&in), what = op & 7, split = op >> 3;
        size_t n = 0, hl = 0;
        uint8_t ftype = APPS_T_REPLY;
        const uint8_t *payload = buf;
        if (what <= 3) {
            const uint8_t index = fuzz_u8(&in);
            size_t rl;
            const uint8_t *res = fuzz_take(&in, fuzz_u8(&in), &rl);
            static const uint8_t nil[1] = {APPS_V_NIL};
            if (apps_value_check(res, rl) != DSIG_OK)
                res = nil, rl = 1;
            apps_rep rep = {.app = APPS_APP_BOOK, .scheme = scheme, .client = FC_CLIENT, .seq = seq, .index = index,
                            .result = res, .result_len = rl};
            memcpy(rep.tag, w + 12, APPS_TAG_BYTES);
            memcpy(rep.req_hash, req_hash, 32);
            memset(rep.chain, 0x33, 32);
            apps_signer *signer = scheme == APPS_SCHEME_NONE ? NULL : F.server_signer;
            hl = reply_payload(&rep, signer, hon, sizeof hon); /* the honest reply with this index and result */
            const unsigned edits = what == 1 ? fuzz_u8(&in) : 0;
            if (edits & 1)
                rep.seq++;
            if (edits & 2)
                rep.client = 2;
            if (edits & 4)
                rep.req_hash[index % 32] ^= 1;
            if (edits & 8)
                rep.tag[index % 32] ^= 0x80;
            if (edits & 16)
                rep.app = APPS_APP_KV;
            if (edits & 32)
                rep.scheme = scheme == APPS_SCHEME_NONE ? APPS_SCHEME_SIG : APPS_SCHEME_NONE;
            n = reply_payload(&rep, what == 3 ? F.client_signer : signer, buf, sizeof buf);
            if (what == 2) {
                size_t el;
                const uint8_t *ed = fuzz_take(&in, 5u * fuzz_u8(&in), &el);
                n = fuzz_patch(buf, n, ed, el, patched, 64);
                payload = patched;
            }
        } else if (what == 4) {
            buf[0] = fuzz_u8(&in);
            memset(buf + 1, 0, 8);
            size_t tl;
            const uint8_t *t = fuzz_take(&in, fuzz_u8(&in), &tl);
            memcpy(buf + 9, t, tl);
            n = 9 + tl;
            ftype = APPS_T_ERROR;
        } else if (what == 5 || what == 6) {
            ftype = what == 5 ? APPS_T_BATCH : fuzz_u8(&in);
            payload = fuzz_take(&in, fuzz_u16(&in), &n);
        } else {
            size_t rl;
            const uint8_t *raw = fuzz_take(&in, fuzz_u8(&in), &rl);
            add_piece(raw, rl, split);
            if (!decided)
                decided = 1, call_ok = 0; /* raw bytes cannot hold the honest (signed) reply */
            break;
        }
        if (no_welcome && !npieces && ftype == APPS_T_WELCOME)
            ftype = APPS_T_SYNC_ACK; /* no WELCOME means none: the connect must fail */
        if (!decided && connect_ok) {
            decided = 1;
            if (ftype == APPS_T_REPLY && hl) {
                memcpy(honest, hon, hl);
                honest_len = hl;
                call_ok = n == hl && memcmp(payload, hon, n) == 0;
            } else if (ftype == APPS_T_ERROR && what == 4) {
                error_rc = error_status(buf[0]);
            }
        }
        add_frame(ftype, payload, n, split);
    }
    /* Without a WELCOME first, the first frame decides the connect: an ERROR's status. */
    int connect_error_rc = 0;
    uint8_t t0;
    uint32_t l0;
    if (no_welcome && npieces && pieces[0].len >= DSIG_NET_HDR_BYTES + 9 &&
        dsig_net_header_parse(F.stream + pieces[0].off, APPS_MAX_FRAME, &t0, &l0) == DSIG_OK && t0 == APPS_T_ERROR &&
        l0 == pieces[0].len - DSIG_NET_HDR_BYTES)
        connect_error_rc = error_status(F.stream[pieces[0].off + DSIG_NET_HDR_BYTES]);

    pthread_t th;
    FUZZ_CHECK(pthread_create(&th, NULL, serve, NULL) == 0, "server thread");
    apps_client_opts o = {.address = F.addr, .app = APPS_APP_BOOK, .id = FC_CLIENT, .key = F.client,
                          .server_key = F.server_pub, .scheme = ask_sig ? APPS_SCHEME_SIG : -1, .timeout_ms = 30000};
    apps_client *c = NULL;
    int rc = apps_client_connect(&c, &o);
    fuzz_check_detail(rc, "apps_client_connect");
    FUZZ_CHECK((rc == DSIG_OK) == connect_ok, "connect %s (%s) where the WELCOME says it should %s",
               rc == DSIG_OK ? "succeeded" : "failed", dsig_last_error_detail(), connect_ok ? "succeed" : "fail");
    if (connect_error_rc)
        FUZZ_CHECK(rc == connect_error_rc, "an ERROR before the WELCOME gave status %d, expected %d (%s)", rc,
                   connect_error_rc, dsig_last_error_detail());
    if (rc == DSIG_OK) {
        FUZZ_CHECK(apps_client_scheme(c) == scheme && apps_client_next_seq(c) == seq, "the client took scheme %d, seq %llu",
                   apps_client_scheme(c), (unsigned long long)apps_client_next_seq(c));
        apps_reply r;
        rc = apps_client_call(c, body, bl, &r);
        fuzz_check_detail(rc, "apps_client_call");
        if (scheme == APPS_SCHEME_SIG) {
            FUZZ_CHECK((rc == DSIG_OK) == call_ok, "the call %s (%s) where the first frame says it should %s",
                       rc == DSIG_OK ? "succeeded" : "failed", dsig_last_error_detail(),
                       call_ok ? "succeed" : "fail");
            if (error_rc)
                FUZZ_CHECK(rc == error_rc, "an ERROR reply gave status %d, expected %d (%s)", rc, error_rc,
                           dsig_last_error_detail());
        }
        if (rc == DSIG_OK) {
            const uint8_t *m, *s;
            size_t rml, rsl;
            apps_rep rep;
            FUZZ_CHECK(apps_signed_split(r.receipt, r.receipt_len, &m, &rml, &s, &rsl) == DSIG_OK &&
                           apps_rep_parse(m, rml, &rep) == DSIG_OK,
                       "an accepted receipt does not parse");
            FUZZ_CHECK(rep.app == APPS_APP_BOOK && rep.scheme == scheme && rep.client == FC_CLIENT && rep.seq == seq &&
                           memcmp(rep.tag, F.tag, APPS_TAG_BYTES) == 0 && memcmp(rep.req_hash, req_hash, 32) == 0,
                       "an accepted reply does not answer the request sent");
            FUZZ_CHECK(r.seq == seq && r.index == rep.index && r.result_len == rep.result_len &&
                           memcmp(r.result, rep.result, rep.result_len) == 0 &&
                           apps_value_check(r.result, r.result_len) == DSIG_OK,
                       "the reply returned is not the receipt's");
            if (scheme == APPS_SCHEME_SIG)
                FUZZ_CHECK(r.receipt_len == honest_len && memcmp(r.receipt, honest, honest_len) == 0,
                           "the accepted receipt is not the honest reply");
            FUZZ_CHECK(apps_client_next_seq(c) == seq + 1, "the next sequence number is not seq + 1");
        }
    }
    apps_client_close(c);
    FUZZ_CHECK(pthread_join(th, NULL) == 0, "server thread join");
    return 0;
}

/* Seeds: the honest exchange with each result kind, each WELCOME variant, each edit, a patch, the
 * wrong key, ERRORs of every code, a BATCH, a torn frame. */
static void seeds(void)
{
    static const uint8_t book[APPS_BOOK_BODY] = {APPS_BOOK_BUY, 0, 0, 0, 100, 0, 0, 0, 5};
    static const uint8_t value_int[9] = {APPS_V_INT, 0, 0, 0, 0, 0, 0, 0, 7};
    for (unsigned v = 0; v < 16; v++)
        for (unsigned what = 0; what < 8; what++) {
            if (v != 0 && v != 1 && what != 0) /* the WELCOME variants once, with an honest reply */
                continue;
            const uint8_t head[3] = {(uint8_t)v, (uint8_t)(v * 5 + what), 4};
            fuzz_seed_begin();
            fuzz_seed_add(head, 3);
            if (((v >> 1) & 3) == 1) {
                const uint8_t e[2] = {(uint8_t)(v * 11), 1};
                fuzz_seed_add(e, 2);
            } else if (((v >> 1) & 3) == 2) {
                uint8_t raw[APPS_WELCOME_BYTES] = {APPS_PROTO_VERSION, APPS_APP_BOOK, APPS_SCHEME_SIG, 0};
                dsig_store_be64(raw + 4, 9);
                fuzz_seed_add(raw, sizeof raw); /* a wrong tag */
            }
            const uint8_t l = sizeof book;
            fuzz_seed_add(&l, 1);
            fuzz_seed_add(book, sizeof book);
            const uint8_t op = (uint8_t)(what | (what + 1) << 3);
            fuzz_seed_add(&op, 1);
            if (what <= 3) {
                const uint8_t idx = 3, rl = sizeof value_int;
                fuzz_seed_add(&idx, 1);
                fuzz_seed_add(&rl, 1);
                fuzz_seed_add(value_int, rl);
                if (what == 1) {
                    const uint8_t e = (uint8_t)(1u << (v % 6));
                    fuzz_seed_add(&e, 1);
                } else if (what == 2) {
                    const uint8_t pe[6] = {1, 60, 0, 0, 0, 4};
                    fuzz_seed_add(pe, sizeof pe);
                }
            } else if (what == 4) {
                const uint8_t e[3] = {(uint8_t)(1 + v % 7), 2, 'n'};
                fuzz_seed_add(e, 2);
                fuzz_seed_add(e + 2, 1);
                fuzz_seed_add("o", 1);
            } else if (what == 5 || what == 6) {
                if (what == 6) {
                    const uint8_t t = APPS_T_SYNC_ACK;
                    fuzz_seed_add(&t, 1);
                }
                fuzz_seed_u16(16);
                fuzz_seed_add("0123456789abcdef", 16);
            } else {
                const uint8_t rl = 7;
                fuzz_seed_add(&rl, 1);
                fuzz_seed_add("\0\0\0\x24\0\0", 7);
            }
            /* and the honest reply after it (decides nothing when the first frame did) */
            const uint8_t op0 = 0, idx = 4, rl = 1, nil = APPS_V_NIL;
            fuzz_seed_add(&op0, 1);
            fuzz_seed_add(&idx, 1);
            fuzz_seed_add(&rl, 1);
            fuzz_seed_add(&nil, 1);
            fuzz_seed_end();
        }
}

FUZZ_SEED_GENERATOR(seeds)
