/*
 * src/serve/serve_internal.h — what the parts of `dsig serve` share: the parsed configuration
 * (config.c), bearer-token authentication and rate limits (auth.c), the key set (keys.c), metrics
 * (metrics.c), the audit log (audit.c) and the HTTP front end (server.c).
 */
#ifndef DSIG_SERVE_INTERNAL_H
#define DSIG_SERVE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dsig/dsig.h"
#include "dsig/serve.h"
#include "core/applog.h"

/* Operations a tenant may be granted (bit set). */
#define SERVE_OP_SIGN 1u
#define SERVE_OP_VERIFY 2u

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


struct dsig_serve_config {
    char *address;             /* numeric IPv4 or IPv6 */
    unsigned port;
    char *key_dir;
    char *state_registry;      /* NULL: library default; "" none */
    int include_kid;           /* JWS header "kid" = RFC 7638 thumbprint */
    char *audit_path;          /* NULL: no audit log */
    enum dsig_applog_sync audit_sync;
    unsigned audit_interval_ms;
    int audit_digest;          /* payload digest in the audit line: SERVE_DIGEST_* */
    int audit_digest_threads;  /* digest worker threads; 0 = inline on the connection thread; -1 = auto */
    size_t max_header;
    size_t upload_buffer;      /* connection read buffer: the largest chunk a body streams in */
    uint64_t max_body;         /* 0 = unlimited */
    unsigned timeout_s;
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
};

/* ---- auth.c ----------------------------------------------------------------------------- */

/* SHA-256 with the process-wide EVP_MD (fetched once). */
int serve_sha256(const void *data, size_t len, uint8_t out[32]);
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
/* Monotonic clock in nanoseconds. */
uint64_t serve_now_ns(void);

/* Failed authentications per client address: a token bucket per address hash (a fixed table of
 * buckets under a random key; addresses that share a bucket share its budget). */
struct serve_peer_limiter;
int serve_peer_limiter_new(struct serve_peer_limiter **out, double rate, double burst);
void serve_peer_limiter_free(struct serve_peer_limiter *l);
/* Charge one failed authentication to `peer`: 1 if within its budget (answer 401), 0 if over it
 * (answer 429; *retry_s = whole seconds to wait). A NULL limiter allows everything. */
int serve_peer_fail_take(struct serve_peer_limiter *l, const char *peer, uint64_t now_ns, unsigned *retry_s);
/* 1 if s is a valid tenant name / key id. */
int serve_valid_name(const char *s, size_t len);

/* ---- keys.c ------------------------------------------------------------------------------- */

/* One served key: shared by reference between key sets (reloads) and requests in flight. */
struct serve_key {
    atomic_uint refs;
    char kid[SERVE_NAME_MAX + 1];
    dsig_key *key;             /* private key (signing) */
    dsig_key *pub;             /* its public part (verification) */
    const dsig_alg *alg;
    char *jwk;                 /* public JWK text */
    char thumbprint[DSIG_THUMBPRINT_LEN];
    int stateful;
    uint64_t dev, ino;         /* identity of the file, to keep a state file's open key on reload */
    int64_t mtime_ns;
    uint64_t size;
};

struct serve_keyset {
    atomic_uint refs;
    struct serve_key **keys;   /* sorted by kid */
    size_t n;
};

/* A warning sink (the server's log); may be NULL. */
typedef void (*serve_warn_fn)(void *arg, const char *msg);
/* Load every key file of cfg->key_dir (*.jwk, *.state); `prev` (may be NULL) lends its state-file
 * keys (already open and locked) when the same file is still there. All or nothing, except that a
 * symbolic link is skipped with a warning (never followed). */
int serve_keyset_load(const struct dsig_serve_config *cfg, const struct serve_keyset *prev,
                      serve_warn_fn warn, void *warn_arg, struct serve_keyset **out);
struct serve_key *serve_keyset_find(const struct serve_keyset *ks, const char *kid);
void serve_key_ref(struct serve_key *k);
void serve_key_unref(struct serve_key *k);
void serve_keyset_ref(struct serve_keyset *ks);
void serve_keyset_unref(struct serve_keyset *ks);

/* ---- metrics.c ---------------------------------------------------------------------------- */

enum serve_endpoint { EP_SIGN, EP_VERIFY, EP_KEY, EP_KEYS, EP_HEALTHZ, EP_METRICS, EP_OTHER, EP_COUNT };
enum serve_error {
    ERR_NONE = 0, ERR_UNAUTHENTICATED, ERR_FORBIDDEN, ERR_NOT_FOUND, ERR_RATE_LIMITED, ERR_BAD_REQUEST,
    ERR_TOO_LARGE, ERR_CLIENT_ABORT, ERR_TIMEOUT, ERR_SIGN, ERR_VERIFY_INVALID, ERR_METHOD, ERR_INTERNAL,
    ERR_COUNT
};
const char *serve_endpoint_name(enum serve_endpoint e);
const char *serve_error_name(enum serve_error e);

struct serve_metrics;
struct serve_metrics *serve_metrics_new(void);
void serve_metrics_free(struct serve_metrics *m);
/* Count one finished request. code 0 = no HTTP response (connection closed). */
void serve_metrics_request(struct serve_metrics *m, enum serve_endpoint e, unsigned code, uint64_t bytes,
                           uint64_t duration_ns, enum serve_error err);
void serve_metrics_inflight(struct serve_metrics *m, int delta);
/* Prometheus text exposition (version 0.0.4); malloc'd. */
char *serve_metrics_render(struct serve_metrics *m, size_t nkeys, size_t *len);

/* ---- audit.c ------------------------------------------------------------------------------- */

struct serve_audit;
struct serve_audit_rec {
    const char *tenant;        /* "-" if none */
    const char *kid;           /* "-" if none */
    const char *op;            /* sign, verify, key, keys, healthz, metrics, other */
    const char *method;
    uint64_t bytes;
    const uint8_t *digest;     /* 32-byte payload digest, NULL if none */
    const char *digest_name;   /* its JSON member: "sha256" or "blake3" */
    unsigned code;             /* HTTP status, 0 = none sent */
    const char *result;        /* ok, invalid, or the error kind */
    uint64_t duration_ns;
    const char *peer;
    int release;               /* a signature is released after this line: "group" waits for its sync */
};
/* Open (create, O_APPEND) the audit log; path NULL: a no-op log. */
int serve_audit_open(struct serve_audit **out, const char *path, enum dsig_applog_sync sync,
                     unsigned interval_ms);
/* Append one line; with DSIG_APPLOG_ALWAYS, or DSIG_APPLOG_GROUP and r->release, it is on disk (an
 * fdatasync started after the write has completed) when this returns DSIG_OK. DSIG_APPLOG_GROUP lines
 * without release are synced by the next batch but not waited for. */
int serve_audit_write(struct serve_audit *a, const struct serve_audit_rec *r);
/* Reopen the log at its path (log rotation); the old file stays in use on failure. */
int serve_audit_reopen(struct serve_audit *a);
void serve_audit_close(struct serve_audit *a);
/* Counters: lines written and lines known synced (group mode), fdatasyncs made by the syncer thread. */
void serve_audit_stats(struct serve_audit *a, uint64_t *written, uint64_t *synced, uint64_t *syncs);

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

#endif
