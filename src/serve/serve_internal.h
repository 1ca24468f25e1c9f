/*
 * src/serve/serve_internal.h — what the parts of `dsig serve` share: the parsed configuration
 * (config.c), bearer-token authentication and rate limits (auth.c), the key set (keys.c), metrics
 * (metrics.c), the audit log (audit.c) and the HTTP front end (server.c).
 */
#ifndef DSIG_SERVE_INTERNAL_H
#define DSIG_SERVE_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dsig/dsig.h"
#include "dsig/serve.h"

/* Operations a tenant may be granted (bit set). */
#define SERVE_OP_SIGN 1u
#define SERVE_OP_VERIFY 2u
#define SERVE_OP_SIGN_DIGEST 4u    /* sign a client's digest (sign_digest.c): its own grant, never implied */
#define SERVE_OP_ADMIN 8u          /* rotate a key, retire a version (key_rotate.c): never implied */

#define SERVE_NAME_MAX 64          /* tenant names and key ids: [A-Za-z0-9._-]{1,64} */
#define SERVE_TOKEN_MAX 4096       /* presented bearer tokens longer than this are refused */
#define SERVE_CONFIG_MAX (1u << 20)/* configuration file bound */

/* One bearer token: its SHA-256 and its token bucket. */
struct serve_token {
    uint8_t hash[32];
    size_t tenant;             /* index into dsig_serve_config.tenants */
    double rate;               /* requests per second refilled; 0 = unlimited */
    double burst;              /* bucket capacity */
    pthread_mutex_t mu;        /* guards tokens/last_ns */
    double tokens;
    uint64_t last_ns;
};

struct serve_tenant {
    char *name;
    char **keys;               /* allowed key ids */
    size_t nkeys;
    int all_keys;              /* "*" was listed */
    unsigned ops;              /* SERVE_OP_* */
};

enum serve_digest_kind { SERVE_DIGEST_NONE = 0, SERVE_DIGEST_SHA256 = 1, SERVE_DIGEST_BLAKE3 = 2 };

/* GROUP (the default): a line is synced by a shared fdatasync before serve_audit_write returns. */
enum serve_audit_sync { SERVE_SYNC_NONE = 0, SERVE_SYNC_INTERVAL = 1, SERVE_SYNC_ALWAYS = 2, SERVE_SYNC_GROUP = 3 };

struct dsig_serve_config {
    char *path;                /* the file it was loaded from (dsig_serve_config_load), NULL if parsed */
    char *text;                /* the JSON it was parsed from, when not loaded from a file (a reload
                                * parses it again) */
    size_t text_len;
    char *base_dir;            /* for relative paths in `text` (NULL: the working directory) */
    char *address;             /* numeric IPv4 or IPv6 */
    unsigned port;
    char *key_dir;
    char *state_registry;      /* NULL: library default; "" none */
    int include_kid;           /* JWS header "kid" = RFC 7638 thumbprint */
    int jwks;                  /* serve GET /.well-known/jwks.json (no token) */
    char *audit_path;          /* NULL: no audit log */
    enum serve_audit_sync audit_sync;
    unsigned audit_interval_ms;
    int audit_digest;          /* payload digest in the audit line: SERVE_DIGEST_* */
    int audit_digest_threads;  /* digest worker threads; 0 = inline on the connection thread; -1 = auto */
    char *log_key;             /* "audit.log_key": the Ed25519 JWK that signs checkpoints; NULL: <path>.key */
    char *log_origin;          /* "audit.log_origin": the checkpoints' origin; NULL: dsig-serve/<thumbprint> */
    unsigned checkpoint_interval_ms; /* "audit.checkpoint_interval_ms" (default 1000) */
    int tlog;                  /* "audit.transparency_log" (default 1): the audit log as a Merkle tree log */
    size_t max_header;
    size_t upload_buffer;      /* connection read buffer: the largest chunk a body streams in */
    uint64_t max_body;         /* 0 = unlimited */
    unsigned timeout_s;        /* idle timeout; also the window of min_upload_rate */
    unsigned header_timeout_s; /* a complete request head within this */
    uint64_t min_upload_rate;  /* body bytes per second at least, over every timeout_s window; 0 = none */
    unsigned max_conn;
    unsigned max_conn_per_addr; /* connections from one client address; 0 = no limit */
    unsigned threads;
    double auth_fail_rate;     /* failed authentications per second per client address; 0 = unlimited */
    double auth_fail_burst;
    struct serve_tenant *tenants;
    size_t ntenants;
    struct serve_token *tokens;
    size_t ntokens;
    char *tls_cert;            /* "tls.cert": PEM certificate chain (leaf first); NULL: plain HTTP */
    char *tls_key;             /* "tls.key": PEM private key of the leaf */
    unsigned tls_min;          /* "tls.min_version": 12 (TLS 1.2, the default) or 13; 0 without "tls" */
    /* "coordinator": the shared index counter of stateful keys (docs/scale.md); coord_n 0: none */
    char **coord_etcd;         /* "coordinator.etcd": member endpoints http(s)://HOST:PORT */
    size_t coord_n;
    char *coord_prefix;        /* "coordinator.prefix" (default "/dsig/") */
    unsigned coord_connect_ms; /* "coordinator.connect_timeout_ms" (default 1000) */
    unsigned coord_timeout_ms; /* "coordinator.timeout_ms" (default 3000) */
    int coord_shared;          /* "coordinator.shared_config": tenants and key retirements from etcd */
    char *coord_instance;      /* "coordinator.instance_id": names this instance's checkpoint (NULL: the log origin) */
    unsigned coord_max_stale_s; /* "coordinator.max_stale_s": refuse tokens after this long unsynced (0: never) */
    char *coord_text;          /* the member as canonical JSON: a reload that changes it needs a restart */
};

/* 1 if `b` differs from `a` in a member that takes a restart to change (the listener, TLS, the thread
 * pool, libmicrohttpd's limits, the audit log's settings); *what[n] names the first one. */
int serve_config_restart_diff(const struct dsig_serve_config *a, const struct dsig_serve_config *b, char *what,
                              size_t n);
/* Parse the configuration `c` came from again (its file, or its text): a reload. With `tenants` (a JSON
 * array, may be NULL) its "tenants" member is replaced by them first: the shared configuration. */
int serve_config_reread(const struct dsig_serve_config *c, const json_t *tenants, struct dsig_serve_config **out);
/* The "tenants" JSON array of the configuration `c` came from (read again); NULL with the error set. */
json_t *serve_config_tenants_json(const struct dsig_serve_config *c);
/* Check one tenant object by the rules of the configuration's "tenants" entries: DSIG_OK or the error
 * (dsig_last_error_detail names the member). */
int serve_tenant_check(const json_t *tenant);

/* ---- auth.c ----------------------------------------------------------------------------- */

/* SHA-256 with the process-wide EVP_MD (fetched once). */
int serve_sha256(const void *data, size_t len, uint8_t out[32]);
/* Free text from json_dumps with jansson's allocator: the application may have installed its own (the
 * dsig tool installs a wiping one); NULL ok. request.c. */
void serve_json_free(char *text);
/* The EVP_MD for SHA-256 (fetched once, thread-safe); NULL on failure. */
const void *serve_sha256_md(void);

#define SERVE_AUTH_OK 0
#define SERVE_AUTH_MISSING (-1)    /* no Authorization header */
#define SERVE_AUTH_MALFORMED (-2)  /* not "Bearer <token>" */
#define SERVE_AUTH_UNKNOWN (-3)    /* no such token */
/* Authenticate an Authorization header value (NULL = absent): hash the token and compare with every
 * configured hash in constant time. On success *token is its index in cfg->tokens. */
int serve_auth(const struct dsig_serve_config *cfg, const char *authz, size_t *token);
/* 1 if the tenant may do `op` (SERVE_OP_*; 0 = any operation) on key `kid`. */
int serve_tenant_allows(const struct serve_tenant *t, const char *kid, unsigned op);
/* Token bucket: 1 if a request may go now (and takes a token), 0 if rate limited; *retry_s receives
 * the whole seconds to wait. */
int serve_rate_take(struct serve_token *tok, uint64_t now_ns, unsigned *retry_s);
/* Failed authentications per client address: a token bucket per address hash (a fixed table of
 * buckets under a random key; addresses that share a bucket share its budget). Rate 0: no limit. */
struct serve_peer_limiter;
int serve_peer_limiter_new(struct serve_peer_limiter **out, double rate, double burst);
void serve_peer_limiter_free(struct serve_peer_limiter *l);
/* Change the rate and burst (a configuration reload). */
void serve_peer_limiter_set(struct serve_peer_limiter *l, double rate, double burst);
/* Charge one failed authentication to `peer`: 1 if within its budget (answer 401), 0 if over it
 * (answer 429; *retry_s = whole seconds to wait). A NULL limiter allows everything. */
int serve_peer_fail_take(struct serve_peer_limiter *l, const char *peer, uint64_t now_ns, unsigned *retry_s);
/* Which of n buckets the client address `peer` (numeric text) falls in, under a random 32-byte key: an
 * IPv4 address whole (also IPv4-mapped), an IPv6 address by its /64 prefix (one host usually holds a
 * whole /64). Shared by the failed-authentication limiter and the per-address connection limit. */
size_t serve_peer_bucket(const uint8_t key[32], const char *peer, size_t n);
/* 1 if s is a valid tenant name / key id. */
int serve_valid_name(const char *s, size_t len);

/* ---- keys.c ------------------------------------------------------------------------------- */

/* One served key version: shared by reference between key sets (reloads, rotations) and requests in
 * flight. A key id has versions: file <id>.jwk is version 1 (its kid stays "<id>"), <id>.v<N>.jwk
 * (or .state) is version N with kid "<id>.v<N>" (key_version.c). */
struct serve_key {
    atomic_uint refs;
    char kid[SERVE_NAME_MAX + 1];  /* the key id: the group of versions, as in the URL paths */
    char vkid[SERVE_NAME_MAX + 1]; /* this version's kid: the file name without its extension */
    unsigned version;              /* 1.. */
    atomic_int retired;            /* an <id>.v<N>.retired marker: neither signs nor verifies; atomic
                                    * because a retirement applies to the key in every set at once */
    dsig_key *key;             /* private key (signing) */
    dsig_key *pub;             /* its public part (verification) */
    const dsig_alg *alg;
    char *jwk;                 /* public JWK text */
    char thumbprint[DSIG_THUMBPRINT_LEN];
    int stateful;
    uint64_t dev, ino;         /* identity of the file, to keep a state file's open key on reload */
    struct serve_counter *counter; /* with a coordinator, a state file's: the shared index counter ... */
    struct serve_ranges *ranges;   /* ... and the reservation its windows come from (freed after key) */
    int64_t mtime_ns;
    uint64_t size;
};

struct serve_keyset {
    atomic_uint refs;
    struct serve_key **keys;   /* sorted by kid, then version */
    size_t n;
};

/* A warning sink (the server's log); may be NULL. */
typedef void (*serve_warn_fn)(void *arg, const char *msg);
/* Load every key file of cfg->key_dir (*.jwk, *.state); `prev` (may be NULL) lends its state-file
 * keys (already open and locked) when the same file is still there. All or nothing, except that a
 * symbolic link is skipped with a warning (never followed). */
int serve_keyset_load(const struct dsig_serve_config *cfg, const struct serve_keyset *prev,
                      serve_warn_fn warn, void *warn_arg, struct serve_keyset **out);
/* The signing version of key id `kid`: its newest version not retired; NULL if none. */
struct serve_key *serve_keyset_find(const struct serve_keyset *ks, const char *kid);
/* Version `version` of key id `kid` (retired or not); NULL if absent. */
struct serve_key *serve_keyset_find_version(const struct serve_keyset *ks, const char *kid, unsigned version);
/* The versions of key id `kid`: ks->keys[*lo .. *hi), oldest first (empty: *lo == *hi). */
void serve_keyset_range(const struct serve_keyset *ks, const char *kid, size_t *lo, size_t *hi);
/* The highest version number of key id `kid` in the set (retired ones included); 0 if none. */
unsigned serve_keyset_max_version(const struct serve_keyset *ks, const char *kid);
/* Load one key file `name` (a *.jwk or *.state entry of cfg->key_dir) as a served key; the return
 * codes of serve_keyset_load (a symbolic link is an error here). */
int serve_key_load(const struct dsig_serve_config *cfg, const char *name, struct serve_key **out);
/* A new set: every key of `ks` and `k` (one reference each taken; replaces a key of the same id and
 * version). */
int serve_keyset_with(const struct serve_keyset *ks, struct serve_key *k, struct serve_keyset **out);

/* ---- key_version.c: versions of a key id ------------------------------------------------------ */

/* Split a key file's stem: "<id>.v<N>" (N 1..999999999, no leading zero) gives id and N; any other
 * stem is the id itself, version 1. id[] receives SERVE_NAME_MAX + 1 bytes at most. 1 if versioned. */
int serve_key_stem_parse(const char *stem, size_t len, char id[SERVE_NAME_MAX + 1], unsigned *version);
/* The "kid" of a JWS's protected header (compact or flattened JSON; bounded): 1 with out set, 0 when
 * the header has none, -1 when the header cannot be read (the verifier then says why). */
int serve_jws_header_kid(const char *sig, size_t n, char *out, size_t outsz);
/* The live version of key id `id` a JWS header kid names — its version kid, its JWK's own "kid" or its
 * RFC 7638 thumbprint — newest first. NULL with *retired = 1 if only a retired version matches. */
struct serve_key *serve_keyset_pick(const struct serve_keyset *ks, const char *id, const char *kid, int *retired);
/* "signing", "verify-only" or "retired": the state of k in ks. */
const char *serve_key_state(const struct serve_keyset *ks, const struct serve_key *k);
void serve_key_ref(struct serve_key *k);
void serve_key_unref(struct serve_key *k);
void serve_keyset_ref(struct serve_keyset *ks);
void serve_keyset_unref(struct serve_keyset *ks);

/* ---- clock.c ------------------------------------------------------------------------------- */

/* Monotonic clock in nanoseconds. */
uint64_t serve_now_ns(void);
#define SERVE_STAMP_LEN 25 /* "2026-11-30T04:04:07.432Z" + NUL */
/* The UTC time now, RFC 3339 with milliseconds. */
void serve_utc_stamp(char out[SERVE_STAMP_LEN]);
/* The CLOCK_REALTIME time ms milliseconds from now (for pthread_cond_timedwait). */
struct timespec serve_abstime_ms(unsigned ms);

/* ---- audit.c: the audit log writer ---------------------------------------------------------- */

/* Records not yet durable are kept in memory up to this many bytes (then further ones are lost, and
 * counted in the log's next "audit_recovered" event). */
#define SERVE_AUDIT_MEM_MAX (4u << 20)

struct serve_audit;
/* Open (create mode 0600, O_APPEND, never through a symbolic link) the audit log and start its thread;
 * path NULL: a log that accepts everything and writes nothing. DSIG_E_IO if the file cannot be opened. */
int serve_audit_open(struct serve_audit **out, const char *path, enum serve_audit_sync sync,
                     unsigned interval_ms);
/* Append one record: `rec` is one line without its newline (the writer adds it). *seq receives the
 * record's number for serve_audit_wait, or 0 when the record was not accepted. Returns DSIG_OK when the
 * record is in the file; DSIG_E_IO when the log is stopped (the record is kept in memory and written by
 * the recovery: *seq != 0) or the record was lost (no room to keep it: *seq == 0); DSIG_E_ARG for an
 * empty record or one with a newline. */
int serve_audit_append(struct serve_audit *a, const char *rec, size_t len, uint64_t *seq);
/* Wait until record `seq` has what the sync mode promises — on disk ("group", "always": an fdatasync
 * that started after it was written succeeded and the file is still at its path), in the file
 * ("interval", "none"). DSIG_OK, or DSIG_E_IO as soon as the log stops before that (a failed write or
 * sync, the file deleted, renamed or replaced) or for seq 0: then nothing may be released on it. */
int serve_audit_wait(struct serve_audit *a, uint64_t seq);
/* 1 if the log is running (or there is none); 0 if it is stopped, with the reason in why[n]. */
int serve_audit_ready(struct serve_audit *a, char *why, size_t n);
/* Reopen the log at its path (rotation: rename, then reopen): the old file is synced and closed, and
 * records not durable in it are written to the new one. If the path still names the open file, only a
 * recovery is attempted. DSIG_E_IO (the old file stays in use) if the path cannot be opened. */
int serve_audit_reopen(struct serve_audit *a);
/* Stop the thread, make what can be durable durable (one last recovery when stopped), close. NULL ok. */
void serve_audit_close(struct serve_audit *a);
struct serve_audit_stats {
    uint64_t records;          /* accepted */
    uint64_t durable;          /* number of the last durable record */
    uint64_t syncs, sync_failures, write_failures, recoveries, lost;
    int ready;                 /* serve_audit_ready */
};
void serve_audit_stats(struct serve_audit *a, struct serve_audit_stats *st);

/* ---- tlog.c: the audit log as a Merkle tree -------------------------------------------------- */

struct serve_tlog;
/* Rebuild the tree of the log at log_path (its side file "<log_path>.tree" kept for the records of the
 * rotated files before it): DSIG_OK, DSIG_E_IO (a file cannot be read or written, or the log starts past
 * what the side file holds), DSIG_E_NOMEM. A missing log is an empty one. */
int serve_tlog_open(struct serve_tlog **out, const char *log_path);
void serve_tlog_free(struct serve_tlog *t);
/* Cut the side file back to what it held before serve_tlog_open added to it: a start refused (the log
 * does not match its last checkpoint) leaves no hashes of the changed log behind. */
void serve_tlog_undo_open(struct serve_tlog *t);
/* The log file's length up to its last whole line, when it was opened (a torn tail is cut there). */
uint64_t serve_tlog_file_end(const struct serve_tlog *t);
/* The index the next record gets (durable records + pending ones). */
uint64_t serve_tlog_next_index(const struct serve_tlog *t);
/* Queue the leaf hash of the next record (its line without the newline); -1 out of memory. */
int serve_tlog_pend(struct serve_tlog *t, const char *line, size_t n);
size_t serve_tlog_pending(const struct serve_tlog *t);
/* Forget the pending records past the first `keep` (a recovery attempt undone). */
void serve_tlog_unpend(struct serve_tlog *t, size_t keep);
/* The first k pending records are durable: into the tree (and the side file). */
void serve_tlog_advance(struct serve_tlog *t, uint64_t k);
/* Size and root of the tree of the durable records. */
void serve_tlog_head(const struct serve_tlog *t, uint64_t *size, uint8_t root[32]);
/* How many records the side file serves proofs for (0 after a write failure); any thread. */
uint64_t serve_tlog_stored(struct serve_tlog *t);
/* dsig_tlog_fetch_fn over the side file (arg = the tree); any thread. */
int serve_tlog_fetch(void *arg, unsigned level, uint64_t index, uint8_t out[32]);

/* Attach a tree to an audit log just opened (before any record): every record then starts with its
 * index ({"index":N,...}), its leaf hash is taken as it is queued, and it joins the tree once durable.
 * A torn last line left by a crash is cut off. DSIG_E_IO if that cut fails. */
int serve_audit_attach_tlog(struct serve_audit *a, struct serve_tlog *t);
/* serve_audit_append that also says the record's index (UINT64_MAX without a tree). */
int serve_audit_append_indexed(struct serve_audit *a, const char *rec, size_t len, uint64_t *seq, uint64_t *index);
/* The tree head of the durable records (0 and the empty root without a tree). */
void serve_audit_tree_head(struct serve_audit *a, uint64_t *size, uint8_t root[32]);
/* Make what is written durable now (a sync under the lock) unless the log is stopped: before the last
 * checkpoint at shutdown. */
void serve_audit_settle(struct serve_audit *a);

/* ---- tlog_checkpoint.c: signed checkpoints of the tree ---------------------------------------- */

struct serve_ckpt;
/* Load (or make) the log key, check the latest checkpoint on disk against the key and the tree (a
 * mismatch refuses the start: DSIG_E_VERIFY), make a first checkpoint if the tree grew, start the
 * thread that makes one every cfg->checkpoint_interval_ms when it grew. `tlog` is the tree attached to
 * `audit` (borrowed). Errors: DSIG_E_IO, DSIG_E_KEY, DSIG_E_KEY_MISMATCH, DSIG_E_VERIFY, DSIG_E_NOMEM. */
int serve_ckpt_start(struct serve_ckpt **out, struct serve_audit *audit, struct serve_tlog *tlog,
                     const struct dsig_serve_config *cfg, serve_warn_fn warn, void *warn_arg);
/* Stop the thread, make the records written durable, sign a last checkpoint (before the audit log
 * closes). NULL ok. */
void serve_ckpt_stop(struct serve_ckpt *c);
void serve_ckpt_free(struct serve_ckpt *c);
/* The note verifier key text ("<origin>+<key ID>+<base64>") and the origin. */
const char *serve_ckpt_vkey(const struct serve_ckpt *c);
const char *serve_ckpt_origin(const struct serve_ckpt *c);
/* A copy of the latest checkpoint (NUL-terminated, free with dsig_free), its size and root.
 * DSIG_E_STATE when there is none (no transparency log), DSIG_E_NOMEM. */
int serve_ckpt_latest(struct serve_ckpt *c, char **note, size_t *len, uint64_t *size, uint8_t root[32]);

/* ---- audit_record.c: what the server writes in the audit log --------------------------------- */

#define SERVE_REQUEST_ID_LEN 16 /* hexadecimal digits */
#define SERVE_AUDIT_REC_MAX 1024
/* One request's record. A request has one record, or two when the first one (written before a
 * signature was released) turned out wrong: the second, with `correction`, says what the client got. */
struct serve_audit_rec {
    const char *request_id;    /* also in the response header DSig-Request-Id and the server log */
    int correction;
    const char *tenant;        /* "-" if none */
    const char *kid;           /* "-" if none */
    const char *op;            /* sign, verify, key, keys, healthz, readyz, metrics, other */
    const char *method;
    uint64_t bytes;
    const uint8_t *digest;     /* 32-byte payload digest, NULL if none */
    const char *digest_name;   /* its JSON member: "sha256" or "blake3" */
    const char *alg;           /* the key's algorithm, NULL if no key */
    unsigned version;          /* the key version used (with alg), 0 if none */
    const char *thumbprint;    /* the key's RFC 7638 thumbprint, NULL if no key */
    const uint8_t *jws_sha256; /* SHA-256 of the JWS released (the response body without its newline), NULL if none */
    const char *signed_hash;   /* sign-digest: the hash named by the client, NULL otherwise */
    const uint8_t *signed_digest; /* sign-digest: the digest signed (signed_digest_len bytes) */
    size_t signed_digest_len;
    unsigned code;             /* HTTP status, 0 = none sent */
    const char *result;        /* ok, or the error kind */
    uint64_t duration_ns;      /* from the request's arrival (queueing included) to its end */
    uint64_t queue_ns;         /* of which waiting before the server read the request */
    const char *peer;
};
/* The record as one JSON object without a newline; its length, or 0 if it does not fit (it always
 * does: every string in it comes from a fixed set or is validated). */
size_t serve_audit_record(const struct serve_audit_rec *r, char out[SERVE_AUDIT_REC_MAX]);

/* ---- conns.c: the connection guard --------------------------------------------------------- */

#define SERVE_PEER_MAX 46          /* INET6_ADDRSTRLEN */
enum serve_cut { SERVE_CUT_NONE = 0, SERVE_CUT_HEADERS, SERVE_CUT_SLOW, SERVE_CUT_PER_ADDRESS };
struct serve_conn_limits {
    unsigned header_timeout_s; /* complete request head within this of the accept / previous request */
    uint64_t min_rate;         /* body bytes per second at least, 0 = no minimum ... */
    unsigned window_s;         /* ... over every window of this many seconds */
    unsigned per_address;      /* connections per client address, 0 = no limit */
};
struct serve_conns;
struct serve_conn;
/* Start the guard: its thread checks the deadlines and then calls tick(arg) (may be NULL) every 200 ms. */
int serve_conns_new(struct serve_conns **out, const struct serve_conn_limits *l, void (*tick)(void *), void *arg);
/* Change header_timeout_s, min_rate and window_s (per_address is fixed at start). */
void serve_conns_set_limits(struct serve_conns *g, const struct serve_conn_limits *l);
/* Stop the thread and free (after libmicrohttpd stopped). NULL ok. */
void serve_conns_free(struct serve_conns *g);
/* One check of every connection's deadlines at `now` (serve_now_ns), as the guard's thread makes every
 * 200 ms; for tests, which give the clock reading. */
void serve_conns_sweep(struct serve_conns *g, uint64_t now);
/* A connection was accepted on fd from sa: tracked from now on; cut at once (shutdown) when its
 * address is over the limit (serve_conn_cut says SERVE_CUT_PER_ADDRESS). NULL on allocation failure
 * (the socket is shut down then too). */
struct serve_conn *serve_conn_open(struct serve_conns *g, int fd, const struct sockaddr *sa);
/* The connection closes (before its descriptor does). NULL ok. */
void serve_conn_closed(struct serve_conns *g, struct serve_conn *c);
/* Its client address as numeric text ("-" for NULL). */
const char *serve_conn_peer(const struct serve_conn *c);
/* Request phases (NULL ok): head complete (a body follows: the rate applies), body bytes so far, body
 * complete, request ended (the next head's deadline starts). */
void serve_conn_headers_done(struct serve_conn *c, int has_body);
void serve_conn_body(struct serve_conn *c, uint64_t total);
void serve_conn_body_done(struct serve_conn *c);
void serve_conn_request_done(struct serve_conn *c);
/* Why the guard cut the connection (SERVE_CUT_NONE if it did not). */
enum serve_cut serve_conn_cut(const struct serve_conn *c);
struct serve_conns_stats {
    uint64_t open, cut_headers, cut_slow, refused_per_address;
};
void serve_conns_stats(struct serve_conns *g, struct serve_conns_stats *st);

/* ---- metrics.c ---------------------------------------------------------------------------- */

enum serve_endpoint {
    EP_SIGN, EP_VERIFY, EP_SIGN_DIGEST, EP_KEY, EP_KEYS, EP_HEALTHZ, EP_READYZ, EP_METRICS, EP_LOG, EP_JWKS,
    EP_ROTATE, EP_RETIRE, EP_VERSIONS, EP_OTHER, EP_COUNT
};
enum serve_error {
    ERR_NONE = 0, ERR_UNAUTHENTICATED, ERR_FORBIDDEN, ERR_NOT_FOUND, ERR_RATE_LIMITED, ERR_BAD_REQUEST,
    ERR_TOO_LARGE, ERR_CLIENT_ABORT, ERR_TIMEOUT, ERR_SIGN, ERR_VERIFY_INVALID, ERR_METHOD, ERR_INTERNAL,
    ERR_TOO_SLOW, ERR_AUDIT, ERR_NOT_IMPLEMENTED, ERR_CONFLICT, ERR_COORDINATOR, ERR_COUNT
};
const char *serve_endpoint_name(enum serve_endpoint e);
const char *serve_error_name(enum serve_error e);

struct serve_metrics;
struct serve_metrics *serve_metrics_new(void);
void serve_metrics_free(struct serve_metrics *m);
/* Count one finished request. code 0 = no HTTP response (connection closed); duration_ns from its
 * arrival, of which queue_ns before the server read it. */
void serve_metrics_request(struct serve_metrics *m, enum serve_endpoint e, unsigned code, uint64_t bytes,
                           uint64_t duration_ns, uint64_t queue_ns, enum serve_error err);
void serve_metrics_inflight(struct serve_metrics *m, int delta);
/* The per-tenant counters of tenant `name` (created the first time; the same slot across reloads):
 * its index, or -1 past SERVE_METRICS_TENANTS distinct names (then not counted per tenant). */
#define SERVE_METRICS_TENANTS 4096
int serve_metrics_tenant_slot(struct serve_metrics *m, const char *name);
void serve_metrics_tenant(struct serve_metrics *m, int slot, enum serve_endpoint e, unsigned code);
/* The shared configuration's watcher (shared_config.c). */
struct serve_shared_stats {
    int enabled;               /* 0: no shared configuration (the rest is 0) */
    int connected;             /* the last etcd request succeeded */
    int published;             /* etcd holds a published configuration (else the file's tenants apply) */
    int64_t revision;          /* the etcd revision of the configuration applied (0: none yet) */
    uint64_t age_ms;           /* since the last successful read or watch (UINT64_MAX: never) */
    uint64_t applied, refused, checkpoints; /* configurations applied, entries or updates refused, checkpoints put */
};
/* What the renderer reads from elsewhere. */
struct serve_metrics_extra {
    size_t nkeys;
    const struct serve_keyset *ks; /* the keys served: their coordinator request counters (may be NULL) */
    int ready;
    struct serve_audit_stats audit;
    struct serve_conns_stats conns;
    struct serve_shared_stats shared;
};
/* Prometheus text exposition (version 0.0.4); malloc'd. */
char *serve_metrics_render(struct serve_metrics *m, const struct serve_metrics_extra *x, size_t *len);

/* ---- tls.c --------------------------------------------------------------------------------- */

#define SERVE_TLS_CERT_MAX (1u << 20)  /* certificate chain file bound */
#define SERVE_TLS_KEY_MAX (64u << 10)  /* private key file bound */

/* The certificate chain and key, read at start and handed to libmicrohttpd (GnuTLS) as PEM text. */
struct serve_tls {
    char *cert;                /* NUL-terminated PEM */
    size_t cert_len;
    char *key;                 /* NUL-terminated PEM: a secret, wiped by serve_tls_free */
    size_t key_len;
    unsigned min_version;      /* 12 or 13 */
};
/* Read cfg->tls_cert and cfg->tls_key (regular files, never through a symbolic link, bounded; the key
 * not readable by group or others) and check them with OpenSSL: every certificate of the chain parses,
 * the key parses (unencrypted) and matches the first certificate. Warnings (an expired certificate)
 * go to `warn`. *out NULL (and DSIG_OK) when the configuration has no "tls". */
int serve_tls_load(const struct dsig_serve_config *cfg, serve_warn_fn warn, void *warn_arg, struct serve_tls **out);
/* Wipe the key and free. NULL ok. */
void serve_tls_free(struct serve_tls *t);
/* The GnuTLS priority string for a minimum version (12 or 13): forward-secret AEAD suites only. */
const char *serve_tls_priorities(unsigned min_version);

/* ---- digest.c ------------------------------------------------------------------------------ */

/* The audit payload digest beside the signer: large chunks are lent (no copy) to a shared pool of
 * worker threads while the connection thread signs them (see digest.c). */
struct serve_digest_opts {
    unsigned workers;          /* worker threads, 1..64 */
    size_t offload_min;        /* chunks smaller than this are hashed inline (small requests) */
};
struct serve_digest_pool;
struct serve_digest;
int serve_digest_pool_new(struct serve_digest_pool **out, const struct serve_digest_opts *o);
/* Stop the workers; every digest must have been freed. NULL ok. */
void serve_digest_pool_free(struct serve_digest_pool *p);
/* Start a payload digest of `kind` (SERVE_DIGEST_SHA256 / _BLAKE3); pool NULL: hashed inline. The
 * digest belongs to one thread (the connection's); a worker only holds it while hashing a lent chunk. */
int serve_digest_new(struct serve_digest **out, struct serve_digest_pool *pool, int kind);
/* Feed bytes in order. A chunk of at least offload_min bytes is LENT to a worker, not copied: it must
 * stay valid and unchanged until serve_digest_sync (or the next update, final or free). */
int serve_digest_update(struct serve_digest *d, const void *data, size_t n);
/* Return once no worker holds this digest's chunk (hashing it here if none started on it). */
int serve_digest_sync(struct serve_digest *d);
/* Sync and write the 32-byte digest of everything fed (once). */
int serve_digest_final(struct serve_digest *d, uint8_t out[32]);
/* Sync and free. NULL ok. */
void serve_digest_free(struct serve_digest *d);

/* ---- sign_digest.c: POST /v1/keys/{kid}/sign-digest ------------------------------------------ */

#define SERVE_SIGN_DIGEST_BODY_MAX 1024u /* the request body: {"hash": ..., "digest": ...} */
struct serve_signed_digest {
    char hash[32];             /* the hash name the client gave (validated by the registry) */
    uint8_t digest[64];
    size_t digest_len;
    char *body;                /* the response JSON (no newline; dsig_xfree(body, 0)), on success */
    size_t body_len;
    int sign_rc;               /* the signing call's result when it failed (DSIG_OK before it ran) */
};
/* Parse the request body, sign with k's private key: 1 with out->body set (code 200), or 0 with the
 * HTTP code (400 the request, 503 the key cannot sign now, 500) and a message. out->hash/digest are set
 * as far as the body could be read (for the audit record). */
int serve_sign_digest(const struct serve_key *k, const char *body, size_t len, struct serve_signed_digest *out,
                      unsigned *code, char *msg, size_t n);

/* ---- request.c ---------------------------------------------------------------------------------- */

/* 1 if a signing failure with `rc` means "no index range now" (a stateful key shared through a
 * coordinator that cannot be reached, or whose range is used up without a new one): a 503 with
 * Retry-After, stateless keys unaffected. */
int serve_sign_rc_retry(int rc);

#endif
