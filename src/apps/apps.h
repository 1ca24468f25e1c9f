/*
 * src/apps/apps.h — the auditable applications (docs/kv.md, docs/orderbook.md): a key-value store on a
 * real redis-server and a limit order book, both behind one server that
 *   1. refuses anything not signed by a registered client (DSig, a registry signature such as Ed25519,
 *      or nothing — the `none` baseline of the benchmark), and any replayed or out-of-order request
 *      (per-client sequence numbers, exactly previous + 1);
 *   2. appends (request ‖ signature ‖ client id ‖ sequence number) to a durable, hash-chained log and
 *      waits for it to be on disk (group commit) before executing anything;
 *   3. executes the requests in log order (Redis through hiredis, or the in-process order book);
 *   4. answers with a reply signed by the server that names the request (its hash, client id, sequence
 *      number), its log position and the log's chain value: a receipt the client can show to anyone.
 * An offline auditor checks a log with nothing but the clients' public keys (the slow path), and a
 * verified log replayed into an empty store rebuilds the same data set.
 *
 * This library is not part of libdsig: it links hiredis. Its users are the `dsig kv`, `dsig book`,
 * `dsig audit` commands, `dsig bench apps` and tests/apps. Every function returns DSIG_OK or a negative
 * DSIG_E_* code with dsig_last_error_detail() naming what was wrong.
 */
#ifndef DSIG_APPS_APPS_H
#define DSIG_APPS_APPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dsig/dsig.h"

/* ---- applications, schemes, bounds --------------------------------------------------------- */

#define APPS_APP_KV 1u   /* key-value store on redis-server */
#define APPS_APP_BOOK 2u /* limit order book */

/* How requests and replies are signed. Every scheme goes through the same code path (log included). */
enum apps_scheme {
    APPS_SCHEME_NONE = 0, /* unsigned: the baseline; such a log cannot be audited */
    APPS_SCHEME_SIG = 1,  /* a one-shot registry signature with the key's bound algorithm (Ed25519:
                             libsodium) */
    APPS_SCHEME_DSIG = 2  /* DSig hybrid signatures: background key pools, batches sent ahead on the
                             request connection, fast-path verification */
};

#define APPS_MAX_BODY 65536u       /* request body (command and arguments) */
#define APPS_MAX_SIG 65536u        /* signature */
#define APPS_MAX_RESULT 65536u     /* encoded result value */
#define APPS_MAX_CLIENTS 256u      /* registered clients per server */
#define APPS_MAX_ID UINT64_C(0x7FFFFFFFFFFFFFFF) /* client ids are 1..2^63-1 */
#define APPS_TAG_BYTES 32u         /* server tag: RFC 7638 thumbprint (SHA-256) of its public key */

/* "none", "sig", "dsig"; NULL out of range. */
const char *apps_scheme_name(int scheme);
/* The scheme named `name`, or -1. */
int apps_scheme_by_name(const char *name);
/* "kv", "book"; NULL out of range. */
const char *apps_app_name(unsigned app);

/* ---- keys ---------------------------------------------------------------------------------- */

/* Load a JWK file (at most 64 KiB) through the public key API. need_private: refuse a public key
 * (DSIG_E_NO_PRIVATE); otherwise a key with a private part is refused too (DSIG_E_KEY: key
 * directories hold public keys only), so no private key is ever read by mistake. */
int apps_key_load(const char *path, int need_private, dsig_key **out);

/* The registered clients: DIR/client-<ID>.jwk, one public JWK per client (ID decimal, 1..2^63-1).
 * Other files are ignored; a malformed client file, a private key, a duplicate id or more than
 * APPS_MAX_CLIENTS clients are errors naming the file. Immutable once loaded. */
typedef struct apps_keyset apps_keyset;
int apps_keyset_load(const char *dir, apps_keyset **out);
size_t apps_keyset_count(const apps_keyset *ks);
uint64_t apps_keyset_id(const apps_keyset *ks, size_t i);       /* ascending */
const dsig_key *apps_keyset_find(const apps_keyset *ks, uint64_t id); /* NULL if not registered */
int apps_keyset_index(const apps_keyset *ks, uint64_t id, size_t *pos); /* 1 and its position, or 0 */
void apps_keyset_free(apps_keyset *ks);

/* The server tag of a key (public or private): the RFC 7638 thumbprint's 32 bytes. */
int apps_server_tag(const dsig_key *server_key, uint8_t tag[APPS_TAG_BYTES]);

/* ---- request bodies ------------------------------------------------------------------------- */

/* KV: argc u16 ‖ (length u32 ‖ bytes) × argc, argv[0] the command name (the allowed commands:
 * apps_kv_command_list()). 1 ≤ argc ≤ 64. DSIG_E_TOO_LARGE beyond APPS_MAX_BODY. */
int apps_kv_body(int argc, const char *const *argv, const size_t *lens, uint8_t *out, size_t cap,
                 size_t *len);
/* The allowed KV commands, space-separated, for messages and help. */
const char *apps_kv_command_list(void);

/* Book: op u8 ‖ price u32 ‖ quantity u32 ‖ order id u64 (17 bytes, big-endian). Field meanings:
 *   BUY / SELL   price  = limit price in ticks (1 .. 2^31-1): the worst price the order accepts;
 *                qty    = number of units to trade (1 .. 2^31-1); order = 0
 *   CANCEL       order  = the id of one of the client's resting orders; price = qty = 0
 *   DEPTH        qty    = levels per side to report (1 .. 1000); price = order = 0               */
#define APPS_BOOK_BUY 1u
#define APPS_BOOK_SELL 2u
#define APPS_BOOK_CANCEL 3u
#define APPS_BOOK_DEPTH 4u
#define APPS_BOOK_BODY 17u
void apps_book_body(unsigned op, uint32_t price, uint32_t qty, uint64_t order, uint8_t out[APPS_BOOK_BODY]);

/* ---- result values (RESP-like, docs/kv.md "Replies") ----------------------------------------- */

#define APPS_V_NIL 0u
#define APPS_V_INT 1u
#define APPS_V_BULK 2u
#define APPS_V_STATUS 3u
#define APPS_V_ERROR 4u
#define APPS_V_ARRAY 5u

/* Check that v[0..len) is exactly one well-formed value (depth ≤ 8). DSIG_OK or DSIG_E_FORMAT. */
int apps_value_check(const uint8_t *v, size_t len);
/* Print a checked value on one line ("nil", "(integer) 3", "\"bytes\"", "(error) ...", "[a, b]"). */
void apps_value_print(FILE *f, const uint8_t *v, size_t len);

/* A cursor over an encoded value (after apps_value_check). */
typedef struct apps_val {
    unsigned type;
    int64_t i;                   /* INT */
    const uint8_t *s;            /* BULK / STATUS / ERROR */
    size_t n;                    /* string length, or ARRAY element count */
} apps_val;
/* Decode the value at *p (checked input), advancing *p past it (past the header only for arrays). */
void apps_val_next(const uint8_t **p, apps_val *v);

/* ---- server --------------------------------------------------------------------------------- */

typedef struct apps_server apps_server;

#define APPS_MAX_LISTEN 4u

typedef struct apps_server_opts {
    unsigned app;                  /* APPS_APP_KV or APPS_APP_BOOK */
    int scheme;                    /* enum apps_scheme */
    const dsig_key *key;           /* the server's private key (all schemes: it names the server) */
    const apps_keyset *clients;    /* registered clients (kept by pointer: must outlive the server) */
    const char *log_path;          /* the request log (created, or recovered and continued) */
    int sync_always;               /* 1: one fdatasync per record; 0: group commit (default) */
    const char *listen[APPS_MAX_LISTEN]; /* "unix:PATH" / "tcp:HOST:PORT" (port 0: any) */
    size_t nlisten;
    const char *redis;             /* KV: redis-server address ("unix:PATH" or "tcp:HOST:PORT") */
    unsigned pool;                 /* DSig: one-time keys kept ready (default 512) */
    int quiet;                     /* no notes on stderr */
} apps_server_opts;

/* Open the log (recovering its entries: a torn last record left by a crash is cut off; any other damage
 * is an error), rebuild the backend from it (KV: FLUSHALL, then every logged write in order — the
 * server owns its Redis), start the signer and bind the listeners. Nothing is served before
 * apps_server_run. */
int apps_server_new(apps_server **out, const apps_server_opts *o);
/* The i-th bound address as text (the port picked for port 0). */
int apps_server_address(apps_server *s, size_t i, char *buf, size_t cap);
/* Serve (accept connections, one thread each) until apps_server_stop. */
int apps_server_run(apps_server *s);
/* Make apps_server_run return; callable from a signal handler (it writes one byte to a pipe). */
void apps_server_stop(apps_server *s);
/* Close every connection, join the threads, sync and close the log, erase the keys. */
void apps_server_free(apps_server *s);

typedef struct apps_server_stats {
    uint64_t entries;              /* log entries (recovered + appended) */
    uint64_t executed;             /* entries executed since start (recovery replay excluded) */
    uint64_t refused_malformed, refused_signature, refused_replay, refused_unknown, refused_command;
    uint64_t verify_fast, verify_slow; /* DSig: request verifications on each path */
    uint64_t backend_rebuilds;     /* KV: Redis connections lost and the data set rebuilt */
    uint64_t connections;          /* accepted since start */
} apps_server_stats;
void apps_server_stats_get(apps_server *s, apps_server_stats *st);

/* ---- client --------------------------------------------------------------------------------- */

typedef struct apps_client apps_client;

typedef struct apps_client_opts {
    const char *address;           /* the server's address */
    unsigned app;
    uint64_t id;                   /* this client's registered id */
    const dsig_key *key;           /* its private key (kept by pointer until close) */
    const dsig_key *server_key;    /* the server's public key: replies must verify under it */
    int scheme;                    /* -1: the server's (announced at connection) */
    unsigned pool;                 /* DSig: one-time keys kept ready (default 512) */
    int timeout_ms;                /* per reply (default 30000: a server waiting for Redis holds it) */
} apps_client_opts;

/* Connect, introduce the client (HELLO), learn the server's scheme and the next sequence number, start
 * the signer. DSIG_E_UNKNOWN_SIGNER if the server does not know this id, DSIG_E_ARG for a scheme
 * mismatch, DSIG_E_IO if it cannot connect. */
int apps_client_connect(apps_client **out, const apps_client_opts *o);

/* Warm-up barrier: wait until this client's key pool is full, hand every pending batch to the server,
 * and wait until the server has verified them and its own pool is full; then every reply batch the
 * server sent is verified here too. Afterwards both sides verify on the fast path (DSig). */
int apps_client_sync(apps_client *c);

/* One verified reply. Pointers are valid until the next call on the client. */
typedef struct apps_reply {
    uint64_t seq;                  /* the request's sequence number */
    uint64_t index;                /* its position in the server's log */
    const uint8_t *result;         /* the encoded result value (apps_value_print) */
    size_t result_len;
    const uint8_t *receipt;        /* reply message ‖ signature: transferable proof (apps_receipt_check) */
    size_t receipt_len;
    int fast;                      /* DSig: the reply verified on the fast path */
} apps_reply;

/*
 * Sign the body as the next request, send it, wait for the reply and verify it: the server's signature,
 * and that it answers exactly this request (hash, client, sequence number, server). DSIG_OK; an error
 * the server sent (unsigned: the request was refused before it was logged) as DSIG_E_VERIFY
 * (signature refused), DSIG_E_STATE (replay / sequence), DSIG_E_UNKNOWN_SIGNER, DSIG_E_FORMAT
 * (malformed / unknown command), DSIG_E_IO (server gone or log failed), with the server's text in the
 * detail; DSIG_E_VERIFY "reply signature" if the reply does not verify. The sequence number advances
 * only when the server logged the request.
 */
int apps_client_call(apps_client *c, const uint8_t *body, size_t len, apps_reply *r);

/* The scheme in use, the next sequence number, and the replies verified on each path. */
int apps_client_scheme(const apps_client *c);
uint64_t apps_client_next_seq(const apps_client *c);
void apps_client_paths(const apps_client *c, uint64_t *fast, uint64_t *slow);
/* The server's request verifications on each path (all its clients), as of the last apps_client_sync. */
void apps_client_server_paths(const apps_client *c, uint64_t *fast, uint64_t *slow);

/* Close the connection and free (erasing the one-time keys). NULL accepted. */
void apps_client_close(apps_client *c);

/* ---- receipts: a reply checked offline -------------------------------------------------------- */

typedef struct apps_receipt_info {
    unsigned app;
    int scheme;
    uint64_t client, seq, index;
    uint8_t request_hash[32], chain[32];
    const uint8_t *result;         /* points into the receipt */
    size_t result_len;
} apps_receipt_info;

/* Verify a receipt (apps_reply.receipt) on the slow path with only the server's public key, and decode
 * it. DSIG_OK, DSIG_E_VERIFY (signature), DSIG_E_FORMAT (layout), DSIG_E_UNSUPPORTED (scheme none:
 * nothing to verify). */
int apps_receipt_check(const uint8_t *receipt, size_t len, const dsig_key *server_pub, apps_receipt_info *info);

/* ---- audit ---------------------------------------------------------------------------------- */

typedef struct apps_audit_result {
    uint64_t entries;              /* entries checked (all of them when the log verified) */
    uint64_t clients;              /* distinct clients seen */
    uint64_t by_scheme[3];         /* entries per scheme */
    uint64_t bad_entry;            /* the first bad, missing or reordered entry's index (0: none) */
    uint64_t bad_offset;           /* its byte offset in the log */
    char what[512];                /* the verdict on it, one sentence */
    uint8_t head[32];              /* chain value after the last entry */
} apps_audit_result;

/* Check every entry of a log, on the slow path, with only the public keys of `keys` (the clients):
 * record framing, consecutive log indices, the hash chain, a known client, consecutive per-client
 * sequence numbers, the request header against the record, the signature. Stops at the first failure.
 * DSIG_OK (every entry verified), DSIG_E_VERIFY (res->what names the first bad, missing or reordered
 * entry), DSIG_E_IO (cannot read the log). */
int apps_audit_verify(const char *log_path, const apps_keyset *keys, apps_audit_result *res);

/* Replay a log into an EMPTY Redis at `redis` (refused with DSIG_E_STATE if it holds any key): every
 * write in log order. Verify the log first (apps_audit_verify): this only replays. *writes = writes
 * executed. */
int apps_audit_replay_kv(const char *log_path, const char *redis, uint64_t *writes);

/* Replay a log into an empty order book and print its resting orders (one line each: side, price, qty,
 * order id, owner, by price-time priority) to f: what the book's server holds after the same log. */
int apps_audit_replay_book(const char *log_path, FILE *f, uint64_t *writes);

#endif
