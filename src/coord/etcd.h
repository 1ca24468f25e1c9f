/*
 * src/coord/etcd.h — a small client of etcd's v3 JSON gateway (etcd 3.4+: POST /v3/kv/..., /v3/lease/...,
 * /v3/watch on the client port) over libcurl, shared by everything that coordinates through etcd: the
 * index-range counter of stateful keys (serve/counter_etcd.c), the shared service configuration and
 * checkpoints (serve), and DSig node-plane membership (node). Not installed: libdsig-coord's callers are
 * the libraries above it. docs/scale.md describes how each caller lays out its keys.
 *
 * Members: a request goes to the member that answered last, then to the others in turn; the first
 * well-formed answer wins. Anything that is not a well-formed etcd answer (refused, reset, timed out, an
 * HTTP status other than 200, an answer over the size cap, JSON without "header") is DSIG_E_UNAVAILABLE
 * with a detail naming every member and why it failed — never guessed at.
 *
 * Keys and values are bytes; the gateway carries them as standard padded base64 and 64-bit numbers as
 * JSON strings: this file hides both. Reads are linearizable (etcd's default).
 *
 * Threads: every function may be called from any thread at the same time (one libcurl handle per
 * request, from a small pool so connections are reused). A watch holds one handle for its duration.
 */
#ifndef DSIG_COORD_ETCD_H
#define DSIG_COORD_ETCD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct coord_etcd coord_etcd;

#define COORD_ETCD_KEY_MAX 1024           /* bytes of one key */
#define COORD_ETCD_ANSWER_MAX (1u << 20)  /* the largest answer cap (a prefix read, a watch message) */

typedef struct {
    const char *const *endpoints; /* "http://HOST:PORT" or "https://HOST:PORT", no path, at least one */
    size_t n_endpoints;
    uint32_t connect_timeout_ms;  /* per member [1000] */
    uint32_t timeout_ms;          /* per request and member, connect included [3000] */
    const char *what;             /* names the caller in error details ["etcd"] */
    size_t answer_max;            /* bytes of one answer or watch message, at most
                                   * COORD_ETCD_ANSWER_MAX [COORD_ETCD_ANSWER_MAX] */
} coord_etcd_config;

/* One key-value pair as etcd holds it. key and value are NUL-terminated for convenience (they may hold
 * NUL bytes; use the lengths). */
typedef struct {
    char *key;
    size_t key_len;
    char *value;
    size_t value_len;
    int64_t create_revision, mod_revision, version, lease;
} coord_etcd_kv;

/* The answer of a read: the pairs, sorted by key, and the store's revision when it was read. */
typedef struct {
    coord_etcd_kv *kvs;
    size_t n;
    int64_t revision;
} coord_etcd_kvs;

/*
 * A client of the cluster cfg names (endpoints are copied).
 * @retval DSIG_OK
 * @retval DSIG_E_ARG         no endpoint, an endpoint that is not http(s)://HOST:PORT
 * @retval DSIG_E_NOMEM
 * @retval DSIG_E_UNAVAILABLE libcurl cannot be initialised
 */
int coord_etcd_new(coord_etcd **out, const coord_etcd_config *cfg);
void coord_etcd_free(coord_etcd *e);
/* HTTP requests sent so far (every member tried counts): for metrics and measurements. */
uint64_t coord_etcd_requests(const coord_etcd *e);
/* The member count. */
size_t coord_etcd_members(const coord_etcd *e);

/*
 * POST the JSON object `body` to `path` ("/v3/kv/txn", ...); *answer gets the answer object (the
 * caller decrefs it). The building block of the calls below, for requests they do not cover (a txn).
 * @retval DSIG_OK
 * @retval DSIG_E_ARG         etcd refused the request itself (gRPC InvalidArgument, NotFound,
 *                            FailedPrecondition, OutOfRange: the same on every member); the detail
 *                            holds etcd's message
 * @retval DSIG_E_NOMEM
 * @retval DSIG_E_UNAVAILABLE no member answered well-formed; the detail names `what` and every
 *                            member's failure
 */
int coord_etcd_call(coord_etcd *e, const char *path, json_t *body, const char *what, json_t **answer);

/* Standard padded base64 of len bytes (NULL: out of memory; free with dsig_xfree(p, 0)); and its
 * inverse into out[0..cap): the length, or -1 (not base64, or does not fit). */
char *coord_etcd_b64(const void *data, size_t len);
int coord_etcd_unb64(const char *in, unsigned char *out, size_t cap);

/*
 * Read one key (prefix 0) or every key that starts with `key` (prefix 1). No key: DSIG_OK with n = 0.
 * Free with coord_etcd_kvs_free.
 * @retval DSIG_OK
 * @retval DSIG_E_ARG         key empty or longer than COORD_ETCD_KEY_MAX
 * @retval DSIG_E_NOMEM
 * @retval DSIG_E_UNAVAILABLE no member answered, or the answer is malformed
 */
int coord_etcd_get(coord_etcd *e, const char *key, int prefix, coord_etcd_kvs *out);
void coord_etcd_kvs_free(coord_etcd_kvs *kvs);

/* Put value[0..len) at key, attached to lease (0: none). *revision (may be NULL) gets the store's
 * revision after the put. DSIG_OK, DSIG_E_ARG, DSIG_E_NOMEM, DSIG_E_UNAVAILABLE. */
int coord_etcd_put(coord_etcd *e, const char *key, const void *value, size_t len, int64_t lease,
                   int64_t *revision);
/* Delete key (prefix 0) or every key under it (prefix 1); *deleted (may be NULL) gets the count.
 * DSIG_OK, DSIG_E_ARG, DSIG_E_NOMEM, DSIG_E_UNAVAILABLE. */
int coord_etcd_delete(coord_etcd *e, const char *key, int prefix, uint64_t *deleted);

/*
 * Leases: a lease of ttl_s seconds (etcd may grant more); keep-alive renews it for its TTL (*ttl_left,
 * may be NULL, gets what etcd granted); revoke deletes it and every key attached to it.
 * @retval DSIG_OK
 * @retval DSIG_E_ARG         ttl_s < 1 or id 0
 * @retval DSIG_E_STATE       keep-alive or revoke of a lease that has expired (its keys are gone)
 * @retval DSIG_E_UNAVAILABLE
 */
int coord_etcd_lease_grant(coord_etcd *e, int64_t ttl_s, int64_t *id);
int coord_etcd_lease_keepalive(coord_etcd *e, int64_t id, int64_t *ttl_left);
int coord_etcd_lease_revoke(coord_etcd *e, int64_t id);

/* One change seen by a watch. */
typedef struct {
    int deleted;      /* 0: a put (kv holds the new value), 1: a delete (kv holds the key only) */
    coord_etcd_kv kv; /* owned by the watch: copy what outlives the callback */
} coord_etcd_event;

/* Called once per event, in revision order; a non-zero return ends the watch (DSIG_OK). */
typedef int (*coord_etcd_watch_fn)(void *arg, const coord_etcd_event *ev);

/*
 * Watch every key under `prefix` from revision *from (events with mod revision >= *from) for at most
 * max_ms milliseconds, delivering events on the calling thread; on return *from is the revision to
 * watch from next (one past the last event delivered), so that calling it in a loop sees every change
 * exactly once. Typical use: read the prefix
 * (coord_etcd_get), then watch from kvs.revision + 1 on a thread of its own.
 * @retval DSIG_OK            max_ms passed (or the callback asked to stop)
 * @retval DSIG_E_STALE       *from has been compacted away: read the prefix again, then watch on
 * @retval DSIG_E_ARG
 * @retval DSIG_E_UNAVAILABLE no member accepted the watch, or the stream broke (*from is still right:
 *                            watch again)
 */
int coord_etcd_watch(coord_etcd *e, const char *prefix, int64_t *from, uint32_t max_ms,
                     coord_etcd_watch_fn fn, void *arg);

#endif
