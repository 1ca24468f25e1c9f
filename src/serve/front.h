/*
 * src/serve/front.h — what the HTTP front end of `dsig serve` shares between its files: the server
 * (server.c: start, reload, stop, the libmicrohttpd callbacks' wiring), the requests (request.c:
 * routing, authentication, the streaming sign and verify, the audit records), the request-head check
 * (http_strict.c) and the server log (log.c).
 */
#ifndef DSIG_SERVE_FRONT_H
#define DSIG_SERVE_FRONT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>

#include <jansson.h>
#include <microhttpd.h>

#include "serve_internal.h"

/* ---- log.c: the server log ------------------------------------------------------------------- */

struct serve_logger {
    dsig_serve_log_fn fn;      /* NULL: no log */
    void *arg;
};
/* One message as one JSON object {"time","level","msg"[,"request_id"]} to the log callback. `level` is
 * DSIG_SERVE_LOG_*; request_id may be NULL. */
void serve_log(const struct serve_logger *lg, int level, const char *request_id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- server.c --------------------------------------------------------------------------------- */

/* What a reload replaces as one unit: the configuration and the keys loaded with it. Requests hold a
 * reference from their request line to their end, so each sees one configuration throughout. */
struct serve_runtime {
    atomic_uint refs;
    struct dsig_serve_config *cfg;
    struct serve_keyset *ks;
    int *tenant_slot;          /* metrics slot of each tenant of cfg */
    atomic_uint *cfg_refs;     /* runtimes sharing cfg (a rotation swaps the keys only): the last frees it */
};
void serve_runtime_unref(struct serve_runtime *rt);

struct serve_shared;
struct dsig_server {
    struct MHD_Daemon *mhd;
    pthread_mutex_t rt_mu;               /* guards rt (the pointer swap) */
    pthread_mutex_t reload_mu;           /* one reload at a time */
    struct serve_runtime *rt;
    struct serve_metrics *metrics;
    struct serve_audit *audit;
    struct serve_tlog *tlog;             /* the audit log's tree (owned by audit), NULL without a log */
    struct serve_ckpt *ckpt;             /* its signed checkpoints, NULL without a log */
    struct serve_digest_pool *digests;   /* audit digest workers; NULL: hashed inline */
    struct serve_peer_limiter *peers;    /* failed authentications per client address */
    struct serve_conns *conns;           /* deadlines and the per-address limit */
    struct serve_tls *tls;               /* certificate and key (libmicrohttpd keeps pointers to them until
                                          * it stops); NULL: plain HTTP */
    pthread_mutex_t start_mu;            /* guards starting, start_msg */
    int starting;                        /* MHD_start_daemon is running: collect its messages */
    char start_msg[512];                 /* libmicrohttpd's messages during the start, to explain a failure */
    struct serve_shared *shared;         /* the shared configuration's watcher (shared_config.c); NULL: none */
    json_t *shared_tenants;              /* the tenants it applied (guarded by reload_mu); NULL: the file's */
    struct serve_logger log;
    _Atomic int audit_was_ready;         /* the last audit state logged */
    _Atomic uint64_t next_id;            /* request ids: a counter ... */
    uint64_t id_key;                     /* ... mixed with a random key */
    unsigned port;
};

/* The current runtime, with a reference. */
struct serve_runtime *serve_current(struct dsig_server *s);
/* 1 if the service can sign now (keys loaded, the audit log running); else 0 with the reason (why may
 * be NULL). */
int serve_ready(struct dsig_server *s, const struct serve_runtime *rt, char *why, size_t n);
/* Install `ks` (taken over, also on failure) with the current configuration: a new runtime sharing it,
 * swapped in as a reload does. The caller holds s->reload_mu (a reload or rotation at a time). */
int serve_install_keyset(struct dsig_server *s, struct serve_keyset *ks);
/* A reload with reload_mu held: the configuration file again (its "tenants" replaced by `tenants`, or
 * else by the shared tenants applied before), and its keys; logged as "CAUSE: N keys" or "REFUSED
 * refused, keeping ...". All or nothing. */
int serve_reload_locked(struct dsig_server *s, json_t *tenants, const char *cause, const char *refused,
                        size_t *nkeys);
/* Log the audit log's state when it changed since the last call (from requests and the guard's tick). */
void serve_note_audit(struct dsig_server *s);

/* ---- request.c -------------------------------------------------------------------------------- */

#define SERVE_PATH_MAX 128 /* longer request paths name no endpoint */

/* Per-request state (libmicrohttpd's con_cls), created when the request line is parsed. */
struct req {
    struct serve_runtime *rt;            /* the configuration and keys of this request */
    struct serve_conn *conn;             /* its connection in the guard (NULL if untracked) */
    char id[SERVE_REQUEST_ID_LEN + 1];
    enum serve_endpoint ep;
    int started;                         /* the access handler has seen the request */
    int deferred;                        /* no body: routed at the next call */
    int done;                            /* a response was queued */
    int audited;                         /* the request's record is written */
    int released;                        /* a signature response was queued (its record said 200) */
    int json;                            /* sign: flattened JSON output */
    uint64_t t0;                         /* the request line was read */
    uint64_t queue_ns;                   /* it had waited this long in the kernel before */
    const struct serve_tenant *tenant;
    int tenant_slot;
    char kid[SERVE_NAME_MAX + 1];
    struct serve_key *key;               /* reference held for the whole request */
    dsig_jws_sign_ctx *sctx;
    dsig_jws_verify_ctx *vctx;
    struct serve_digest *dg;             /* audit digest of the payload (audit.payload_digest) */
    uint8_t digest[32];
    int have_digest;
    char *digest_req;                    /* sign-digest: the request body (SERVE_SIGN_DIGEST_BODY_MAX) */
    struct serve_signed_digest sd;       /* sign-digest: what was asked and signed (for the record) */
    uint64_t bytes;
    unsigned code;
    enum serve_error err;
    char method[8];
    size_t target_len;                   /* the raw request-target's length */
    int target_ok;                       /* visible ASCII only */
    char path[SERVE_PATH_MAX + 1];       /* its path, as sent (never percent-decoded); "" if too long */
};

/* libmicrohttpd callbacks (cls = the server). */
void *serve_on_uri(void *cls, const char *uri, struct MHD_Connection *c);
enum MHD_Result serve_on_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                const char *version, const char *upload_data, size_t *upload_data_size,
                                void **con_cls);
void serve_on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe);

/* ---- key_rotate.c: POST /v1/keys/{id}/rotate, .../versions/{N}/retire; GET .../versions ---------- */

/* Each answers a JSON document (code 200) or NULL with the HTTP code and a message. *used (may stay
 * NULL) receives a reference to the version the request made or named, for the audit record. */
json_t *serve_key_rotate(struct dsig_server *s, const char *id, unsigned *code, char *msg, size_t n,
                         struct serve_key **used);
json_t *serve_key_retire(struct dsig_server *s, const char *id, const char *version, unsigned *code, char *msg,
                         size_t n, struct serve_key **used);
json_t *serve_key_versions(const struct serve_keyset *ks, const char *id);

/* ---- tlog_api.c: the log endpoints' answers ---------------------------------------------------- */

/* Each returns its answer, or 0/NULL with the HTTP status in *code and the reason in msg[n]. */
int serve_log_checkpoint(struct dsig_server *s, char **body, size_t *len, unsigned *code, char *msg, size_t n);
json_t *serve_log_proof(struct dsig_server *s, const char *index, unsigned *code, char *msg, size_t n);
json_t *serve_log_consistency(struct dsig_server *s, const char *from, const char *to, unsigned *code, char *msg,
                              size_t n);

/* ---- shared_config.c: tenants and key retirements from etcd, checkpoints to it ------------------- */

/* With "coordinator.shared_config": publish the file's tenants if nothing is published yet, read and
 * apply what is, then start the watcher thread (s->shared). Without it: nothing (DSIG_OK). Only an
 * allocation or thread failure fails: etcd unreachable at start is logged and retried by the watcher. */
int serve_shared_start(struct dsig_server *s, const struct dsig_serve_config *cfg);
/* Stop the watcher thread (within about a second: its watch's window, plus etcd's timeouts). NULL ok. */
void serve_shared_stop(struct serve_shared *sh);
/* Stop, put the last checkpoint (after serve_ckpt_stop made it), free. NULL ok. */
void serve_shared_free(struct serve_shared *sh);
/* A version retired on this instance (POST .../retire): add it to PREFIX config/keys/<id> so that every
 * instance retires it; a failure is logged (the retirement here stands). NULL ok. */
void serve_shared_publish_retired(struct serve_shared *sh, const char *id, unsigned version);
void serve_shared_stats(struct serve_shared *sh, struct serve_shared_stats *st);
/* 1 if coordinator.max_stale_s is set and the configuration was not synced within it (*age_s: its age,
 * 0 if never synced): then tokens are refused. NULL ok (0). */
int serve_shared_stale(struct serve_shared *sh, unsigned *age_s);

/* ---- http_strict.c ---------------------------------------------------------------------------- */

/* The request head against RFC 9112, beyond what libmicrohttpd 0.9 checks: every byte of the head
 * accounted for by the fields it parsed (so no bare LF, NUL, obs-fold or other byte it skipped), field
 * names tokens, field values without control characters, Content-Length and Transfer-Encoding
 * unambiguous, one Host. 0 if the request may be served (*has_body: a body follows), else the status
 * to answer (400 or 501; the connection is closed after it) with the reason in *why. */
unsigned serve_http_check(struct MHD_Connection *c, const struct req *r, const char *url, const char *method,
                          const char *version, int *has_body, const char **why);

#endif
