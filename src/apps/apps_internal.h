/*
 * src/apps/apps_internal.h — the pieces of the applications library shared between its files and its
 * tests: frames and messages (wire.c), the signature adapter (sigscheme.c — the only file that calls
 * the DSig and registry signing API), batch queues (batchq.c), framed socket I/O (io.c), the log
 * record format (auditlog.c), the order book (book.c) and the backend interface (kv_redis.c,
 * book_backend.c).
 */
#ifndef DSIG_APPS_INTERNAL_H
#define DSIG_APPS_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "apps/apps.h"
#include "net/net.h"

/* ---- frames (over the src/net frame format: 12-byte header, types 0x20..0x27) --------------------- */

#define APPS_PROTO_VERSION 1u
#define APPS_T_HELLO 0x20u   /* c→s: version u8 ‖ app u8 ‖ scheme u8 (or 0xFF) ‖ 0 u8 ‖ client id u64 (12 B) */
#define APPS_T_WELCOME 0x21u /* s→c: version u8 ‖ app u8 ‖ scheme u8 ‖ 0 u8 ‖ next seq u64 ‖ tag[32] (44 B) */
#define APPS_T_BATCH 0x22u   /* both: a DSig batch message of the sender */
#define APPS_T_REQUEST 0x23u /* c→s: request message length u32 ‖ request message ‖ signature */
#define APPS_T_REPLY 0x24u   /* s→c: reply message length u32 ‖ reply message ‖ signature */
#define APPS_T_ERROR 0x25u   /* s→c: code u8 ‖ seq u64 ‖ text (unsigned: nothing was logged) */
#define APPS_T_SYNC 0x26u    /* c→s: empty */
#define APPS_T_SYNC_ACK 0x27u/* s→c: server's request verifications fast u64 ‖ slow u64 (16 B) */

#define APPS_HELLO_BYTES 12u
#define APPS_HELLO_ANY_SCHEME 0xFFu /* HELLO scheme byte: "the server's" (announced in WELCOME) */
#define APPS_WELCOME_BYTES 44u
#define APPS_ERROR_TEXT_MAX 400u

/* ERROR codes: what the client library turns them into (apps_client_call). */
#define APPS_ERR_MALFORMED 1u  /* DSIG_E_FORMAT */
#define APPS_ERR_SIGNATURE 2u  /* DSIG_E_VERIFY */
#define APPS_ERR_SEQUENCE 3u   /* DSIG_E_STATE */
#define APPS_ERR_UNKNOWN 4u    /* DSIG_E_UNKNOWN_SIGNER */
#define APPS_ERR_COMMAND 5u    /* DSIG_E_FORMAT */
#define APPS_ERR_SERVER 6u     /* DSIG_E_IO: the log failed, the server is stopping */
#define APPS_ERR_PROTOCOL 7u   /* DSIG_E_ARG: wrong app / scheme / version */

/* Largest frame payload: a request or reply message with its body or result and a signature. */
#define APPS_MSG_HDR 72u
#define APPS_REPLY_HDR 144u
#define APPS_MAX_FRAME (4u + APPS_REPLY_HDR + APPS_MAX_RESULT + APPS_MAX_SIG)

/* ---- messages (wire.c) ------------------------------------------------------------------------ */

/*
 * Request message — what the client signs (integers big-endian):
 *   0  "DSig-app-request" (16)  16 version  17 app  18 scheme  19 zero
 *   20 server tag (32)          52 client id u64    60 seq u64  68 body length u32   72 body
 * Reply message — what the server signs:
 *   0  "DSig-app-reply\0\0" (16) 16 version 17 app  18 scheme  19 zero
 *   20 server tag (32)  52 client id u64  60 seq u64  68 log index u64  76 request hash (32)
 *   108 log chain value after the entry (32)  140 result length u32  144 result
 */
typedef struct apps_req {
    unsigned app;
    int scheme;
    uint8_t tag[APPS_TAG_BYTES];
    uint64_t client, seq;
    const uint8_t *body;
    size_t body_len;
} apps_req;

typedef struct apps_rep {
    unsigned app;
    int scheme;
    uint8_t tag[APPS_TAG_BYTES];
    uint64_t client, seq, index;
    uint8_t req_hash[32], chain[32];
    const uint8_t *result;
    size_t result_len;
} apps_rep;

/* Encode into out (cap ≥ header + body/result); *len = bytes written. DSIG_E_TOO_LARGE / DSIG_E_BUFFER. */
int apps_req_encode(const apps_req *r, uint8_t *out, size_t cap, size_t *len);
int apps_rep_encode(const apps_rep *r, uint8_t *out, size_t cap, size_t *len);
/* Parse exactly len bytes (pointers into `in`). DSIG_E_FORMAT naming the field. */
int apps_req_parse(const uint8_t *in, size_t len, apps_req *r);
int apps_rep_parse(const uint8_t *in, size_t len, apps_rep *r);

/* "message length u32 ‖ message ‖ signature" (REQUEST / REPLY frame payloads and receipts). */
int apps_signed_split(const uint8_t *p, size_t len, const uint8_t **msg, size_t *msg_len,
                      const uint8_t **sig, size_t *sig_len);

/* A growable output buffer (bounded by cap_max). */
typedef struct apps_buf {
    uint8_t *p;
    size_t len, cap, max;
    int overflow;                /* something did not fit under max */
} apps_buf;
void apps_buf_init(apps_buf *b, size_t max);
void apps_buf_free(apps_buf *b);
void apps_buf_put(apps_buf *b, const void *p, size_t n);
/* Result values: append one value (arrays: the header, then `n` values). */
void apps_val_nil(apps_buf *b);
void apps_val_int(apps_buf *b, int64_t v);
void apps_val_str(apps_buf *b, unsigned type, const void *p, size_t n); /* BULK, STATUS or ERROR */
void apps_val_array(apps_buf *b, uint32_t n);

/* KV body: parse into at most `cap` arguments (pointers into the body). DSIG_E_FORMAT. */
#define APPS_KV_MAX_ARGS 64u
int apps_kv_parse(const uint8_t *body, size_t len, const uint8_t **argv, size_t *lens, size_t cap, size_t *argc);

/* Book body. DSIG_E_FORMAT naming the field for a bad op, range or non-zero unused field. */
typedef struct apps_book_req {
    unsigned op;
    uint32_t price, qty;
    uint64_t order;
} apps_book_req;
int apps_book_parse(const uint8_t *body, size_t len, apps_book_req *r);

/* ---- the signature adapter (sigscheme.c): every call into the public signing API ----------------- */

/* BLAKE3-256 of the concatenation of n pieces (request hashes, the log chain). */
void apps_hash(uint8_t out[32], const struct iovec *iov, int n);

/* Called on a background thread with each new DSig batch message, before any of its keys signs. */
typedef void (*apps_batch_fn)(void *arg, const uint8_t *msg, size_t len);

/* Size of a DSig batch message (the default parameter set, which signers and verifiers here use). */
size_t apps_batch_msg_bytes(void);

typedef struct apps_signer apps_signer;
/* A signer for `scheme` with `key` (kept by pointer; must outlive the signer). DSIG: a key pool of
 * `pool` keys (0 = 512) with one background thread; every batch message goes to on_batch. SIG: the
 * key's bound algorithm. NONE: signatures are empty. */
int apps_signer_new(apps_signer **out, int scheme, const dsig_key *key, uint64_t id, unsigned pool,
                    apps_batch_fn on_batch, void *arg);
size_t apps_signer_sig_max(const apps_signer *s);
int apps_sign(apps_signer *s, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap, size_t *sig_len);
/* DSIG: wait until the pool is full (warm-up). Others: DSIG_OK at once. */
int apps_signer_wait_full(apps_signer *s);
void apps_signer_free(apps_signer *s);

typedef struct apps_verifier apps_verifier;
int apps_verifier_new(apps_verifier **out, int scheme, unsigned max_peers);
/* Register a peer (idempotent for the same id). DSIG_E_TOO_LARGE beyond max_peers. */
int apps_verifier_add(apps_verifier *v, uint64_t id, const dsig_key *pub);
/* A batch message from peer `id` (queued, verified in the background). */
int apps_verifier_batch(apps_verifier *v, uint64_t id, const uint8_t *msg, size_t len);
/* Wait until every batch received so far is verified and cached. */
void apps_verifier_flush(apps_verifier *v);
/* Verify (fast path when the batch is cached). *fast (may be NULL) = 1 on the fast path. DSIG_OK,
 * DSIG_E_VERIFY, DSIG_E_EQUIVOCATION, DSIG_E_UNKNOWN_SIGNER. NONE: the signature must be empty. */
int apps_verify(apps_verifier *v, uint64_t id, const dsig_key *pub, const uint8_t *msg, size_t len,
                const uint8_t *sig, size_t sig_len, int *fast);
void apps_verifier_free(apps_verifier *v);

/* Offline slow-path verification with only the public key and the signer's id (auditor: the client's
 * id; receipts: the server, id 0), which DSig signatures are bound to. NONE: DSIG_E_UNSUPPORTED. */
int apps_verify_offline(int scheme, const dsig_key *pub, uint64_t id, const uint8_t *msg, size_t len,
                        const uint8_t *sig, size_t sig_len);

/* ---- batch queue (batchq.c): batch messages waiting to go to a peer ------------------------------ */

/* A ring of the last `retain` batch messages, numbered 1, 2, ... Consumers keep a cursor (the number
 * of the last message they sent) and take what is newer; a consumer that fell behind the ring skips
 * what it lost (those keys verify on the slow path). Thread-safe. */
typedef struct apps_batchq apps_batchq;
int apps_batchq_new(apps_batchq **out, unsigned retain, size_t max_msg);
void apps_batchq_push(apps_batchq *q, const uint8_t *msg, size_t len);
/* Copy the oldest message numbered > *cursor into buf: 1 (and *cursor advanced), 0 if none. */
int apps_batchq_next(apps_batchq *q, uint64_t *cursor, uint8_t *buf, size_t cap, size_t *len);
/* Write every message numbered > *cursor to fd as BATCH frames, in order (buf: cap bytes of scratch).
 * NULL q: nothing. DSIG_OK or the write's error. */
int apps_batchq_send(apps_batchq *q, uint64_t *cursor, int fd, uint8_t *buf, size_t cap);
void apps_batchq_free(apps_batchq *q);

/* ---- framed socket I/O (io.c) ---------------------------------------------------------------------- */

typedef struct apps_io {
    int fd;
    dsig_net_decoder dec;
    uint8_t *rbuf;               /* bytes read but not yet decoded */
    size_t roff, rlen, rcap;
    uint8_t *frame;              /* the current frame's payload (copied out of the decoder) */
    uint32_t frame_len;
    uint8_t frame_type;
    int got;                     /* decoder callback: a frame was copied */
} apps_io;

int apps_io_init(apps_io *io, int fd);
void apps_io_clear(apps_io *io); /* frees buffers and closes fd */
/*
 * Next frame. Waits up to idle_ms for its first byte (-1: no limit), then up to part_ms for the rest.
 * DSIG_OK with *type / *payload (valid until the next call) / *len; DSIG_E_WOULD_BLOCK (idle timeout,
 * nothing lost); DSIG_E_IO ("connection closed", "closed in the middle of a frame", a read error or
 * a stalled frame); DSIG_E_FORMAT / DSIG_E_TOO_LARGE (bad header: the stream is dead).
 */
int apps_io_read(apps_io *io, int idle_ms, int part_ms, uint8_t *type, const uint8_t **payload, uint32_t *len);
/* Write one frame (header + the concatenated pieces) fully. DSIG_E_IO if the peer is gone. */
int apps_io_write(int fd, uint8_t type, const struct iovec *iov, int n);

/* ---- the log record (auditlog.c) -------------------------------------------------------------------- */

/*
 * One record, integers big-endian:
 *   0 "DSAL"  4 version (1)  5 scheme  6 app  7 zero  8 record length u32 (all of it)
 *   12 index u64  20 client id u64  28 seq u64  36 time (ns since the epoch, not signed) u64
 *   44 request length u32  48 signature length u32  52 request  .. signature
 *   .. chain (32) = BLAKE3("DSig-app-log-chain" ‖ previous chain ‖ the record's bytes before it)
 * The chain before the first record is 32 zero bytes.
 */
#define APPS_REC_HDR 52u
#define APPS_REC_MAX (APPS_REC_HDR + APPS_MSG_HDR + APPS_MAX_BODY + APPS_MAX_SIG + 32u)

typedef struct apps_rec {
    int scheme;
    unsigned app;
    uint64_t index, client, seq, time_ns;
    const uint8_t *req;
    size_t req_len;
    const uint8_t *sig;
    size_t sig_len;
    uint8_t chain[32];
} apps_rec;

/* The chain value of a record whose bytes before the chain are rec[0..len) after `prev`. */
void apps_rec_chain(const uint8_t prev[32], const uint8_t *rec, size_t len, uint8_t out[32]);
/* Build a record (header, request, signature) for `prev` into out; *len = its total length, chain
 * written at the end and copied to r->chain. */
int apps_rec_build(apps_rec *r, const uint8_t prev[32], uint8_t *out, size_t cap, size_t *len);

/* Sequential reader. */
typedef struct apps_logrd {
    int fd;
    uint64_t offset;             /* of the next record */
    uint64_t size;               /* of the file when opened */
    uint8_t *buf;                /* the current record */
    uint64_t rec_offset;         /* its offset */
    size_t rec_len;              /* its length (the chain covers buf[0 .. rec_len - 32)) */
} apps_logrd;
int apps_logrd_open(apps_logrd *rd, const char *path);
void apps_logrd_close(apps_logrd *rd);
/* Next record: 1 (r points into the reader's buffer until the next call), 0 at the end, or an error:
 * DSIG_E_FORMAT for a bad record (what[] says why, with *bad_offset = its offset), DSIG_E_IO. A record
 * cut short by the end of the file is DSIG_E_FORMAT with *torn = 1. */
int apps_logrd_next(apps_logrd *rd, apps_rec *r, char *what, size_t cap, int *torn);

/* ---- order book (book.c) ------------------------------------------------------------------------------ */

typedef struct apps_book apps_book;
typedef struct apps_fill {
    uint64_t maker;              /* the resting order's id */
    uint32_t price;              /* the resting order's price: what the trade executes at */
    uint32_t qty;
} apps_fill;
#define APPS_BOOK_MAX_ORDERS (1u << 20)
#define APPS_BOOK_MAX_FILLS 1024u  /* fills listed in one reply (all are executed) */

int apps_book_new(apps_book **out);
void apps_book_free(apps_book *b);
/*
 * A limit order `id` (unique: the log index) from `owner`: match against the opposite side best price
 * first, FIFO within a level, while the price is acceptable (buy: ask ≤ price; sell: bid ≥ price); the
 * rest rests at `price` behind the orders already there. fills[0..*nfills) lists the trades (at most
 * cap; *filled is the whole filled quantity, *nfills_total the number of trades). DSIG_E_TOO_LARGE if the
 * book is full (nothing changed), DSIG_E_ARG for a zero price or quantity or a reused id.
 */
int apps_book_limit(apps_book *b, uint64_t id, uint64_t owner, int buy, uint32_t price, uint32_t qty,
                    apps_fill *fills, size_t cap, size_t *nfills, size_t *nfills_total, uint64_t *filled,
                    uint32_t *rested);
/* Cancel resting order `id` of `owner`: *qty = what was still resting. DSIG_E_ARG "no resting order",
 * DSIG_E_ALG_NOT_ALLOWED if another client owns it. */
int apps_book_cancel(apps_book *b, uint64_t id, uint64_t owner, uint32_t *qty);
/* Up to `levels` best levels of one side: price, total quantity, orders. Returns the count. */
typedef struct apps_level {
    uint32_t price;
    uint64_t qty;
    uint32_t orders;
} apps_level;
size_t apps_book_depth(const apps_book *b, int buy, apps_level *out, size_t levels);
/* Every resting order by priority (bids best first, then asks best first). */
typedef void (*apps_book_order_fn)(void *arg, int buy, uint32_t price, uint32_t qty, uint64_t id, uint64_t owner);
void apps_book_each(const apps_book *b, apps_book_order_fn fn, void *arg);
size_t apps_book_orders(const apps_book *b);

/* ---- backends (kv_redis.c, book_backend.c) ------------------------------------------------------------ */

#define APPS_EXEC_OK 0
#define APPS_EXEC_DOWN 1  /* the store is unreachable: nothing is known about this request's effect */

typedef struct apps_backend apps_backend;
struct apps_backend_ops {
    unsigned app;
    /* Is the body a well-formed, allowed request? 0, or -1 with why[] (checked before logging). */
    int (*check)(const uint8_t *body, size_t len, char *why, size_t cap);
    /* Does it change the store (replayed by rebuilds and the auditor)? */
    int (*writes)(const uint8_t *body, size_t len);
    /* Execute entry `index` of `client`; the result value goes to out. APPS_EXEC_OK / APPS_EXEC_DOWN. */
    int (*exec)(apps_backend *be, uint64_t index, uint64_t client, const uint8_t *body, size_t len, apps_buf *out);
    /* (Re)connect and empty the store, ready for a rebuild. APPS_EXEC_OK / APPS_EXEC_DOWN (why[]). */
    int (*reset)(apps_backend *be, char *why, size_t cap);
    void (*free)(apps_backend *be);
};
struct apps_backend {
    const struct apps_backend_ops *ops;
};

/* KV on redis-server at `address`; connect errors are reported by reset (the caller retries). */
int apps_kv_backend_new(apps_backend **out, const char *address);
extern const struct apps_backend_ops apps_kv_ops;
/* Connect without emptying, and refuse (DSIG_E_STATE) a Redis that holds any key: the auditor's replay. */
int apps_kv_connect_empty(apps_backend *be);
/* The order book; apps_book_backend_book gives the book (replay). */
int apps_book_backend_new(apps_backend **out);
apps_book *apps_book_backend_book(apps_backend *be);
extern const struct apps_backend_ops apps_book_ops;

/* Replay every write of a log's entries 1..upto (UINT64_MAX: all; 0: none) into `be` in log order,
 * after be->reset. *writes = writes executed. APPS_EXEC_DOWN stops it (returned as DSIG_E_IO); a bad
 * record is DSIG_E_FORMAT. */
int apps_replay(const char *log_path, apps_backend *be, uint64_t upto, uint64_t *writes);

#endif
