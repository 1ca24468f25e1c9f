/*
 * src/serve/request.c — one HTTP request of `dsig serve`: the head check, routing on the path as sent,
 * authentication and authorization, the streaming sign and verify, and the audit record.
 *
 * A sign request is a detached JWS signer (dsig/jws.h) fed directly from libmicrohttpd's upload
 * callbacks: each chunk it hands over (at most one connection read buffer) goes to
 * dsig_jws_sign_update, and to the audit digest (digest.c: lent to a worker thread while this thread
 * signs; synced before the chunk goes back), then is forgotten. Nothing touches the disk but the audit
 * record. The signature exists only once the whole body has arrived: a client that disconnects or is
 * cut mid-upload gets nothing, and its context is aborted in the completion callback.
 *
 * Audit records say what the client got. A request gets one record when it ends — except a signature,
 * whose record (code 200) is written before the signature leaves and must be durable first
 * (serve_audit_wait). When that fails the client gets 503 and no signature, and a correction record
 * (same request_id, "correction": true) says so; likewise when the response holding the signature
 * could not be delivered completely (the client went away: code 0).
 */
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <jansson.h>

#include "core/internal.h"
#include "jose/jose_internal.h"
#include "front.h"

#define SIG_HEADER "DSig-Signature"      /* verify: the detached JWS (compact or flattened JSON) */
#define ID_HEADER "DSig-Request-Id"      /* every response: the request id of the audit record and log */
#define INDEX_HEADER "DSig-Log-Index"    /* sign: the index of the signature's record in the audit log */

/* Queue a response with a copy of body; `close_after` adds Connection: close (the framing cannot be
 * trusted: nothing after this request may be read from the connection). */
static enum MHD_Result respond_full(struct MHD_Connection *c, struct req *r, unsigned code, const char *ctype,
                                    const char *body, size_t len, const char *h1, const char *v1, int close_after)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    if (ctype)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (h1)
        MHD_add_response_header(resp, h1, v1);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, ID_HEADER, r->id);
    if (close_after)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(c, code, resp);
    MHD_destroy_response(resp);
    r->done = 1;
    if (ret == MHD_YES)
        r->code = code;
    return ret;
}

static enum MHD_Result respond(struct MHD_Connection *c, struct req *r, unsigned code, const char *ctype,
                               const char *body, size_t len, const char *h1, const char *v1)
{
    return respond_full(c, r, code, ctype, body, len, h1, v1, 0);
}

/* Free text from json_dumps with jansson's allocator (the tool installs a wiping one). */
void serve_json_free(char *text)
{
    jose_json_text_free(text);
}

/* A JSON error body {"error": kind, "message": text} (+ newline); the request is marked failed with
 * `err`. */
static enum MHD_Result respond_error_full(struct MHD_Connection *c, struct req *r, unsigned code,
                                          enum serve_error err, const char *msg, const char *h1, const char *v1,
                                          int close_after)
{
    r->err = err;
    json_t *o = json_pack("{s:s,s:s}", "error", serve_error_name(err), "message", msg);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    char *line = text ? dsig_malloc(strlen(text) + 2) : NULL;
    enum MHD_Result ret;
    if (!line) {
        ret = respond_full(c, r, code, "text/plain", "error\n", 6, h1, v1, close_after);
    } else {
        size_t n = strlen(text);
        memcpy(line, text, n);
        line[n] = '\n';
        ret = respond_full(c, r, code, "application/json", line, n + 1, h1, v1, close_after);
        dsig_xfree(line, 0);
    }
    serve_json_free(text);
    return ret;
}

static enum MHD_Result respond_error(struct MHD_Connection *c, struct req *r, unsigned code, enum serve_error err,
                                     const char *msg, const char *h1, const char *v1)
{
    return respond_error_full(c, r, code, err, msg, h1, v1, 0);
}

/* @spec docs/scale.md "Wiring": no index range now (the coordinator unreachable, or a windowed key
 * without a new range) is a 503 that passes; an exhausted key's 503 does not. */
int serve_sign_rc_retry(int rc)
{
    return rc == DSIG_E_UNAVAILABLE || rc == DSIG_E_RANGE;
}

/* A failed signing call: 503 + Retry-After while a stateful key has no index range (the message says
 * why and that stateless keys sign on), 503 for an exhausted key, else 500. */
static enum MHD_Result respond_sign_failure(struct dsig_server *s, struct MHD_Connection *c, struct req *r, int rc)
{
    char msg[512];
    if (serve_sign_rc_retry(rc)) {
        snprintf(msg, sizeof msg, "stateful key \"%s\" has no index range now (the index coordinator did not "
                 "answer); retry later: %s", r->kid, dsig_last_error_detail());
        serve_log(&s->log, DSIG_SERVE_LOG_ERROR, r->id, "%s", msg);
        return respond_error(c, r, 503, ERR_COORDINATOR, msg, "Retry-After", "1");
    }
    snprintf(msg, sizeof msg, "cannot sign: %s: %s", dsig_strerror(rc), dsig_last_error_detail());
    serve_log(&s->log, DSIG_SERVE_LOG_ERROR, r->id, "%s", msg);
    return respond_error(c, r, rc == DSIG_E_EXHAUSTED ? 503 : 500, ERR_SIGN, msg, NULL, NULL);
}


/* Respond with a JSON document (consumed) and a newline. */
static enum MHD_Result respond_json(struct MHD_Connection *c, struct req *r, unsigned code, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    char *line = text ? dsig_malloc(strlen(text) + 2) : NULL;
    enum MHD_Result ret;
    if (!line) {
        ret = respond_error(c, r, 500, ERR_INTERNAL, "out of memory", NULL, NULL);
    } else {
        size_t n = strlen(text);
        memcpy(line, text, n);
        line[n] = '\n';
        ret = respond(c, r, code, "application/json", line, n + 1, NULL, NULL);
        dsig_xfree(line, 0);
    }
    serve_json_free(text);
    return ret;
}

/* The endpoint a path (as sent) names. Percent-encoding is never decoded: no key id or endpoint needs
 * it, so "/v1/keys/a%2fsign" or "%00" simply names nothing. */
static enum serve_endpoint classify(const char *path)
{
    if (strcmp(path, "/healthz") == 0)
        return EP_HEALTHZ;
    if (strcmp(path, "/readyz") == 0)
        return EP_READYZ;
    if (strcmp(path, "/metrics") == 0)
        return EP_METRICS;
    if (strcmp(path, "/v1/keys") == 0)
        return EP_KEYS;
    if (strcmp(path, "/.well-known/jwks.json") == 0)
        return EP_JWKS;
    if (strcmp(path, "/v1/log/checkpoint") == 0 || strcmp(path, "/v1/log/proof") == 0 ||
        strcmp(path, "/v1/log/consistency") == 0)
        return EP_LOG;
    if (strncmp(path, "/v1/keys/", 9) == 0) {
        const char *rest = path + 9, *slash = strchr(rest, '/');
        if (!slash)
            return EP_KEY;
        if (strcmp(slash, "/sign") == 0)
            return EP_SIGN;
        if (strcmp(slash, "/verify") == 0)
            return EP_VERIFY;
        if (strcmp(slash, "/sign-digest") == 0)
            return EP_SIGN_DIGEST;
        if (strcmp(slash, "/rotate") == 0)
            return EP_ROTATE;
        if (strcmp(slash, "/versions") == 0)
            return EP_VERSIONS;
        if (strncmp(slash, "/versions/", 10) == 0 && strchr(slash + 10, '/') &&
            strcmp(strchr(slash + 10, '/'), "/retire") == 0)
            return EP_RETIRE; /* /versions/{N}/retire: N is checked by key_rotate.c */
    }
    return EP_OTHER;
}

/* The raw request-target: visible ASCII only (target_ok), its length, and its path — origin-form, or
 * the path of an absolute-form target (RFC 9112 §3.2.2) — up to the query. */
static void take_target(struct req *r, const char *uri)
{
    size_t n = strlen(uri);
    r->target_len = n;
    r->target_ok = n > 0;
    for (size_t i = 0; i < n; i++)
        r->target_ok &= uri[i] > 0x20 && uri[i] < 0x7f;
    const char *p = uri;
    if (strncasecmp(p, "http://", 7) == 0 || strncasecmp(p, "https://", 8) == 0) {
        p = strchr(strstr(p, "//") + 2, '/');
        if (!p)
            p = "/";
    }
    size_t pl = strcspn(p, "?");
    r->path[0] = '\0';
    if (pl <= SERVE_PATH_MAX) {
        memcpy(r->path, p, pl);
        r->path[pl] = '\0';
    }
}

/* How long the request's bytes had waited in the kernel when the request line was read: the time since
 * the last segment arrived (TCP_INFO, millisecond steps): queueing behind other connections on this
 * thread or in the listen queue. A lower bound when the client was still sending. */
static uint64_t queued_ns(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (!ci || getsockopt(ci->connect_fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
        return 0;
    return (uint64_t)ti.tcpi_last_data_recv * 1000000u;
}

/* A request id: 16 hexadecimal digits, a bijective mix (SplitMix64's finalizer) of a counter and a
 * random key — unique within the process, and not a request count. */
static void new_id(struct dsig_server *s, char out[SERVE_REQUEST_ID_LEN + 1])
{
    uint64_t z = atomic_fetch_add_explicit(&s->next_id, 1, memory_order_relaxed) + s->id_key;
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    snprintf(out, SERVE_REQUEST_ID_LEN + 1, "%016llx", (unsigned long long)z);
}

/* MHD_OPTION_URI_LOG_CALLBACK: the request line is parsed; the request state is created here so that
 * the completion callback sees (and counts) even requests libmicrohttpd rejects itself. `uri` is the
 * request-target as received, before libmicrohttpd decodes it in place. */
void *serve_on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct dsig_server *s = cls;
    struct req *r = dsig_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->t0 = serve_now_ns();
    r->queue_ns = queued_ns(c);
    r->rt = serve_current(s);
    r->tenant_slot = -1;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->conn = ci ? ci->socket_context : NULL;
    new_id(s, r->id);
    take_target(r, uri);
    r->ep = classify(r->path);
    strcpy(r->method, "-");
    serve_metrics_inflight(s->metrics, 1);
    return r;
}

/* The audit state, logged when it changes (from a request, or the guard's tick). */
void serve_note_audit(struct dsig_server *s)
{
    char why[512];
    int ready = serve_audit_ready(s->audit, why, sizeof why);
    if (atomic_exchange(&s->audit_was_ready, ready) == ready)
        return;
    if (ready)
        serve_log(&s->log, DSIG_SERVE_LOG_INFO, NULL, "audit log running again: signing resumed");
    else
        serve_log(&s->log, DSIG_SERVE_LOG_ERROR, NULL, "audit log stopped: %s; signing refused (503) until it recovers", why);
}

/* Write a record of the request: its outcome, or (correction) what the client got in the end. *seq: the
 * writer's record number (0: not accepted); *index (may be NULL) its index in the log's tree; jws: the
 * SHA-256 of the signature released on it, or NULL. */
static int audit_write_full(struct dsig_server *s, struct req *r, const char *result, int correction,
                            const uint8_t *jws, uint64_t *seq, uint64_t *index)
{
    struct serve_audit_rec a = {0};
    a.request_id = r->id;
    a.correction = correction;
    a.tenant = r->tenant ? r->tenant->name : "-";
    a.kid = r->kid[0] ? r->kid : "-";
    a.op = serve_endpoint_name(r->ep);
    a.method = r->method;
    a.bytes = r->bytes;
    a.digest = r->have_digest ? r->digest : NULL;
    a.digest_name = r->rt->cfg->audit_digest == SERVE_DIGEST_BLAKE3 ? "blake3" : "sha256";
    a.code = r->code;
    a.result = result;
    a.queue_ns = r->queue_ns;
    a.duration_ns = serve_now_ns() - r->t0 + r->queue_ns;
    a.peer = serve_conn_peer(r->conn);
    if (r->key) {
        a.alg = dsig_alg_name(r->key->alg);
        a.thumbprint = r->key->thumbprint;
        a.version = r->key->version;
    }
    a.jws_sha256 = jws;
    if (r->ep == EP_SIGN_DIGEST && r->sd.hash[0]) {
        a.signed_hash = r->sd.hash;
        a.signed_digest = r->sd.digest;
        a.signed_digest_len = r->sd.digest_len;
    }
    char line[SERVE_AUDIT_REC_MAX];
    size_t n = serve_audit_record(&a, line);
    *seq = 0;
    int rc = n ? serve_audit_append_indexed(s->audit, line, n, seq, index)
               : dsig_fail(DSIG_E_INTERNAL, "audit record too long");
    if (rc != DSIG_OK)
        serve_note_audit(s);
    return rc;
}

static int audit_write(struct dsig_server *s, struct req *r, const char *result, int correction, uint64_t *seq)
{
    return audit_write_full(s, r, result, correction, NULL, seq, NULL);
}

/* Authenticate (401), apply the token's rate limit (429). Returns 1 to go on, 0 if a response was queued.
 * Failures count against the client address: past its budget the answer is 429, not 401. */
static int authenticate(struct dsig_server *s, struct MHD_Connection *c, struct req *r, enum MHD_Result *ret)
{
    const struct dsig_serve_config *cfg = r->rt->cfg;
    const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    unsigned age_s = 0;
    if (serve_shared_stale(s->shared, &age_s)) { /* fail closed: a token revoked meanwhile must not pass */
        *ret = respond_error(c, r, 503, ERR_COORDINATOR, age_s ? "the shared configuration could not be read "
                             "from etcd within coordinator.max_stale_s: tokens are refused until it is"
                             : "the shared configuration has not been read from etcd yet", "Retry-After", "1");
        return 0;
    }
    size_t tok = 0;
    int a = serve_auth(cfg, authz, &tok);
    unsigned retry = 1;
    if (a != SERVE_AUTH_OK && !serve_peer_fail_take(s->peers, serve_conn_peer(r->conn), serve_now_ns(), &retry)) {
        char ra[16];
        snprintf(ra, sizeof ra, "%u", retry);
        *ret = respond_error(c, r, 429, ERR_RATE_LIMITED,
                             "too many failed authentications from this address", "Retry-After", ra);
        return 0;
    }
    if (a == SERVE_AUTH_MISSING) {
        *ret = respond_error(c, r, 401, ERR_UNAUTHENTICATED, "missing Authorization: Bearer token",
                             MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"dsig\"");
        return 0;
    }
    if (a != SERVE_AUTH_OK) {
        *ret = respond_error(c, r, 401, ERR_UNAUTHENTICATED,
                             a == SERVE_AUTH_MALFORMED ? "malformed Authorization header (want: Bearer TOKEN)"
                                                       : "unknown bearer token",
                             MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                             a == SERVE_AUTH_MALFORMED ? "Bearer realm=\"dsig\", error=\"invalid_request\""
                                                       : "Bearer realm=\"dsig\", error=\"invalid_token\"");
        return 0;
    }
    struct serve_token *t = &cfg->tokens[tok];
    r->tenant = &cfg->tenants[t->tenant];
    r->tenant_slot = r->rt->tenant_slot[t->tenant];
    if (!serve_rate_take(t, serve_now_ns(), &retry)) {
        char ra[16];
        snprintf(ra, sizeof ra, "%u", retry);
        *ret = respond_error(c, r, 429, ERR_RATE_LIMITED, "rate limit of this token exceeded", "Retry-After", ra);
        return 0;
    }
    return 1;
}

/* Look the key up for an authorized tenant: 403 if not granted, 404 if absent. 1 to go on. */
static int find_key(struct MHD_Connection *c, struct req *r, unsigned op, enum MHD_Result *ret)
{
    if (!serve_tenant_allows(r->tenant, r->kid, op)) {
        *ret = respond_error(c, r, 403, ERR_FORBIDDEN,
                             op == SERVE_OP_SIGN     ? "this token may not sign with this key"
                             : op == SERVE_OP_VERIFY ? "this token may not verify with this key"
                             : op == SERVE_OP_SIGN_DIGEST ? "this token may not sign digests with this key "
                                                            "(operation \"sign-digest\")"
                             : op == SERVE_OP_ADMIN ? "this token may not rotate or retire this key (operation "
                                                      "\"admin\")"
                                                     : "this token may not use this key",
                             NULL, NULL);
        return 0;
    }
    struct serve_key *k = serve_keyset_find(r->rt->ks, r->kid);
    if (!k) {
        *ret = respond_error(c, r, 404, ERR_NOT_FOUND, "no such key", NULL, NULL);
        return 0;
    }
    serve_key_ref(k);
    r->key = k;
    return 1;
}

/* 1 if the Accept header asks for JSON (flattened JWS). */
static int wants_json(struct MHD_Connection *c)
{
    const char *acc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return acc && (strcasestr(acc, "application/json") || strcasestr(acc, "application/jose+json"));
}

/* Body presence and size checks before a streaming request starts (411, 413). 1 to go on. The framing
 * itself was checked by serve_http_check. */
static int check_body(struct MHD_Connection *c, struct req *r, enum MHD_Result *ret)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (!cl && !te) {
        *ret = respond_error(c, r, 411, ERR_BAD_REQUEST,
                             "the payload needs Content-Length or Transfer-Encoding: chunked (Content-Length: 0 "
                             "for an empty payload)", NULL, NULL);
        return 0;
    }
    uint64_t max = r->rt->cfg->max_body;
    if (cl && max && strtoull(cl, NULL, 10) > max) { /* 1*DIGIT: checked by serve_http_check */
        char msg[96];
        snprintf(msg, sizeof msg, "payload larger than the limit of %llu bytes", (unsigned long long)max);
        *ret = respond_error(c, r, 413, ERR_TOO_LARGE, msg, NULL, NULL);
        return 0;
    }
    return 1;
}

/* Start the audit digest of the payload (audit.payload_digest: SHA-256, BLAKE3 or none; nothing
 * without an audit log, the digest's only reader). */
static int digest_init(struct dsig_server *s, struct req *r)
{
    const struct dsig_serve_config *cfg = r->rt->cfg;
    if (cfg->audit_digest == SERVE_DIGEST_NONE || !cfg->audit_path)
        return 1;
    return serve_digest_new(&r->dg, s->digests, cfg->audit_digest) == DSIG_OK;
}

/* POST /v1/keys/{kid}/sign: set up the streaming signer — unless the audit log cannot take the
 * signature's record now (503: the body is not read, no signature could be released anyway). */
static enum MHD_Result begin_sign(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret) || !find_key(c, r, SERVE_OP_SIGN, &ret) || !check_body(c, r, &ret))
        return ret;
    if (!serve_audit_ready(s->audit, NULL, 0)) {
        serve_note_audit(s);
        return respond_error(c, r, 503, ERR_AUDIT, "the audit log cannot record signatures now; retry later",
                             "Retry-After", "1");
    }
    r->json = wants_json(c);
    dsig_jws_sign_opts o = {0};
    o.format = r->json ? DSIG_FMT_JSON : DSIG_FMT_JWS;
    o.include_kid = r->rt->cfg->include_kid;
    int rc = dsig_jws_sign_init(&r->sctx, NULL, r->key->key, &o);
    if (rc != DSIG_OK) {
        r->sctx = NULL;
        return respond_sign_failure(s, c, r, rc);
    }
    if (!digest_init(s, r))
        return respond_error(c, r, 500, ERR_INTERNAL, "cannot start the payload digest", NULL, NULL);
    return MHD_YES;
}

/* POST /v1/keys/{kid}/sign-digest: a small JSON body, collected whole (sign_digest.c), and the same
 * audit-first release as a signature. */
static enum MHD_Result begin_sign_digest(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret) || !find_key(c, r, SERVE_OP_SIGN_DIGEST, &ret) || !check_body(c, r, &ret))
        return ret;
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > SERVE_SIGN_DIGEST_BODY_MAX) {
        char msg[96];
        snprintf(msg, sizeof msg, "a sign-digest body is at most %u bytes", SERVE_SIGN_DIGEST_BODY_MAX);
        return respond_error(c, r, 413, ERR_TOO_LARGE, msg, NULL, NULL);
    }
    if (!dsig_alg_digest_hashes(r->key->alg)) { /* before the body: nothing to read */
        char msg[160];
        snprintf(msg, sizeof msg, "%s does not sign a digest computed elsewhere (ML-DSA, RSA and ECDSA keys do): "
                 "use /sign with the payload", dsig_alg_name(r->key->alg));
        return respond_error(c, r, 400, ERR_BAD_REQUEST, msg, NULL, NULL);
    }
    if (!serve_audit_ready(s->audit, NULL, 0)) {
        serve_note_audit(s);
        return respond_error(c, r, 503, ERR_AUDIT, "the audit log cannot record signatures now; retry later",
                             "Retry-After", "1");
    }
    r->digest_req = dsig_malloc(SERVE_SIGN_DIGEST_BODY_MAX);
    if (!r->digest_req)
        return respond_error(c, r, 500, ERR_INTERNAL, "out of memory", NULL, NULL);
    return MHD_YES;
}

/* The version a JWS header "kid" names (key_version.c) replaces the signing version in r->key; a kid
 * of no version of this key, or of a retired one, is a 422 verdict saying so. No kid: the signing
 * version. 1 to go on. */
static int pick_version(struct MHD_Connection *c, struct req *r, const char *sig, size_t n, enum MHD_Result *ret)
{
    char kid[DSIG_KID_MAX + 1], msg[DSIG_KID_MAX + 3 * SERVE_NAME_MAX + 160];
    if (serve_jws_header_kid(sig, n, kid, sizeof kid) != 1)
        return 1; /* none (or unreadable: the verifier says why) */
    int retired = 0;
    struct serve_key *k = serve_keyset_pick(r->rt->ks, r->kid, kid, &retired);
    if (k) {
        serve_key_ref(k);
        serve_key_unref(r->key);
        r->key = k;
        return 1;
    }
    /* the kid is the client's text: only [A-Za-z0-9._-] of it goes into the message */
    for (char *p = kid; *p; p++)
        if (!serve_valid_name(p, 1))
            *p = '?';
    if (retired)
        snprintf(msg, sizeof msg, "the JWS kid \"%s\" names a retired version of key \"%s\": its signatures are "
                 "no longer accepted", kid, r->kid);
    else /* another key's signature: not valid for this key, as one made with another algorithm */
        snprintf(msg, sizeof msg, "the JWS kid \"%s\" names no version of key \"%s\" (GET /v1/keys/%s/versions)",
                 kid, r->kid, r->kid);
    r->err = ERR_VERIFY_INVALID;
    *ret = respond_json(c, r, 422, json_pack("{s:b,s:s,s:s,s:s}", "valid", 0, "kid", r->kid, "alg",
                                             dsig_alg_name(r->key->alg), "reason", msg));
    return 0;
}

/* POST /v1/keys/{kid}/verify: parse the signature header and set up the streaming verifier. */
static enum MHD_Result begin_verify(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret) || !find_key(c, r, SERVE_OP_VERIFY, &ret) || !check_body(c, r, &ret))
        return ret;
    const char *sig = MHD_lookup_connection_value(c, MHD_HEADER_KIND, SIG_HEADER);
    if (!sig || !*sig)
        return respond_error(c, r, 400, ERR_BAD_REQUEST, "missing " SIG_HEADER " header (the detached JWS)", NULL,
                             NULL);
    size_t n = strlen(sig);
    while (n && (sig[n - 1] == ' ' || sig[n - 1] == '\t')) /* trailing OWS is not part of the value */
        n--;
    dsig_format f = dsig_jws_detect_format(sig, n);
    if (f != DSIG_FMT_JWS && f != DSIG_FMT_JSON)
        return respond_error(c, r, 400, ERR_BAD_REQUEST,
                             SIG_HEADER " must hold a detached JWS (compact with an empty payload segment, or "
                                        "flattened JSON without \"payload\")", NULL, NULL);
    if (!pick_version(c, r, sig, n, &ret))
        return ret;
    dsig_jws_verify_opts o = {0};
    o.format = f;
    int rc = dsig_jws_verify_init(&r->vctx, r->key->pub, sig, n, &o);
    if (rc == DSIG_E_ALG_NOT_ALLOWED || rc == DSIG_E_KEY_MISMATCH) {
        /* Well-formed, but made with another algorithm than this key's: not valid for this key. */
        r->vctx = NULL;
        r->err = ERR_VERIFY_INVALID;
        return respond_json(c, r, 422,
                            json_pack("{s:b,s:s,s:s,s:s}", "valid", 0, "kid", r->kid, "alg",
                                      dsig_alg_name(r->key->alg), "reason", dsig_last_error_detail()));
    }
    if (rc != DSIG_OK) {
        r->vctx = NULL;
        char msg[512];
        snprintf(msg, sizeof msg, SIG_HEADER " rejected: %s: %s", dsig_strerror(rc), dsig_last_error_detail());
        return respond_error(c, r, 400, ERR_BAD_REQUEST, msg, NULL, NULL);
    }
    if (!digest_init(s, r))
        return respond_error(c, r, 500, ERR_INTERNAL, "cannot start the payload digest", NULL, NULL);
    return MHD_YES;
}

/* GET /v1/keys: the keys this tenant may use, with the operations granted. */
static enum MHD_Result list_keys(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret))
        return ret;
    const struct serve_keyset *ks = r->rt->ks;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < ks->n; i++) {
        const struct serve_key *k = ks->keys[i];
        if (serve_keyset_find(ks, k->kid) != k || !serve_tenant_allows(r->tenant, k->kid, 0))
            continue; /* one entry per key id: its signing version */
        json_t *ops = json_array();
        if (serve_tenant_allows(r->tenant, k->kid, SERVE_OP_SIGN))
            json_array_append_new(ops, json_string("sign"));
        if (serve_tenant_allows(r->tenant, k->kid, SERVE_OP_VERIFY))
            json_array_append_new(ops, json_string("verify"));
        if (serve_tenant_allows(r->tenant, k->kid, SERVE_OP_SIGN_DIGEST) && dsig_alg_digest_hashes(k->alg))
            json_array_append_new(ops, json_string("sign-digest"));
        if (serve_tenant_allows(r->tenant, k->kid, SERVE_OP_ADMIN))
            json_array_append_new(ops, json_string("admin"));
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:o,s:b,s:I}", "kid", k->kid, "alg", dsig_alg_name(k->alg),
                                             "thumbprint", k->thumbprint, "operations", ops, "stateful",
                                             k->stateful, "version", (json_int_t)k->version));
    }
    return respond_json(c, r, 200, arr ? json_pack("{s:o}", "keys", arr) : NULL);
}

/* GET /v1/keys/{kid}: the public JWK of its signing version. */
static enum MHD_Result get_key(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret) || !find_key(c, r, 0, &ret))
        return ret;
    size_t n = strlen(r->key->jwk);
    char *body = dsig_malloc(n + 2);
    if (!body)
        return respond_error(c, r, 500, ERR_INTERNAL, "out of memory", NULL, NULL);
    memcpy(body, r->key->jwk, n);
    body[n] = '\n';
    ret = respond(c, r, 200, "application/jwk+json", body, n + 1, NULL, NULL);
    dsig_xfree(body, 0);
    return ret;
}

/* GET /.well-known/jwks.json (RFC 7517 §5 JWK Set), with "jwks": true only: the public JWK of every
 * live version of every served key (retired ones left out), without a token — public keys for
 * verifiers that hold no token. Off by default: the set names every tenant's key ids. */
static enum MHD_Result jwks(struct MHD_Connection *c, struct req *r)
{
    if (!r->rt->cfg->jwks)
        return respond_error(c, r, 404, ERR_NOT_FOUND, "no such endpoint (the JWK Set is off: \"jwks\": true)",
                             NULL, NULL);
    const struct serve_keyset *ks = r->rt->ks;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < ks->n; i++) {
        if (atomic_load(&ks->keys[i]->retired))
            continue;
        json_t *k = json_loads(ks->keys[i]->jwk, 0, NULL);
        if (!k || json_array_append_new(arr, k) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return respond_json(c, r, 200, arr ? json_pack("{s:o}", "keys", arr) : NULL);
}

/* GET /readyz: 200 when a signature can be made and recorded now, else 503 (with what is missing). */
static enum MHD_Result readyz(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    char why[512];
    int ready = serve_ready(s, r->rt, why, sizeof why);
    json_t *doc = ready ? json_pack("{s:b}", "ready", 1) : json_pack("{s:b,s:s}", "ready", 0, "reason", why);
    struct serve_shared_stats sh;
    serve_shared_stats(s->shared, &sh);
    if (doc && sh.enabled) /* which shared configuration this instance applies, and whether it is current */
        json_object_set_new(doc, "shared_config",
                            json_pack("{s:b,s:b,s:I,s:o}", "connected", sh.connected, "published", sh.published,
                                      "revision", (json_int_t)sh.revision, "age_ms",
                                      sh.age_ms == UINT64_MAX ? json_null() : json_integer((json_int_t)sh.age_ms)));
    return respond_json(c, r, ready ? 200 : 503, doc);
}

/* GET /metrics. */
static enum MHD_Result metrics(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    struct serve_metrics_extra x;
    memset(&x, 0, sizeof x);
    x.nkeys = r->rt->ks->n;
    x.ks = r->rt->ks;
    x.ready = serve_ready(s, r->rt, NULL, 0);
    serve_audit_stats(s->audit, &x.audit);
    serve_conns_stats(s->conns, &x.conns);
    serve_shared_stats(s->shared, &x.shared);
    size_t len = 0;
    char *text = serve_metrics_render(s->metrics, &x, &len);
    if (!text)
        return respond_error(c, r, 500, ERR_INTERNAL, "out of memory", NULL, NULL);
    enum MHD_Result ret = respond(c, r, 200, "text/plain; version=0.0.4", text, len, NULL, NULL);
    dsig_xfree(text, 0);
    return ret;
}

/* GET /v1/log/...: the transparency log (tlog_api.c), for any authenticated token. */
static enum MHD_Result log_endpoint(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret))
        return ret;
    unsigned code = 500;
    char msg[256] = "internal error";
    if (strcmp(r->path, "/v1/log/checkpoint") == 0) {
        char *note = NULL;
        size_t len = 0;
        if (!serve_log_checkpoint(s, &note, &len, &code, msg, sizeof msg))
            return respond_error(c, r, code, code == 404 ? ERR_NOT_FOUND : ERR_INTERNAL, msg, NULL, NULL);
        ret = respond(c, r, 200, "text/plain; charset=utf-8", note, len, NULL, NULL);
        dsig_free(note);
        return ret;
    }
    json_t *doc;
    if (strcmp(r->path, "/v1/log/proof") == 0)
        doc = serve_log_proof(s, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "index"), &code, msg, sizeof msg);
    else
        doc = serve_log_consistency(s, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "from"),
                                    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "to"), &code, msg, sizeof msg);
    if (!doc)
        return respond_error(c, r, code,
                             code == 400 ? ERR_BAD_REQUEST : code == 404 ? ERR_NOT_FOUND : ERR_INTERNAL, msg, NULL, NULL);
    return respond_json(c, r, 200, doc);
}

/* POST /v1/keys/{id}/rotate, POST /v1/keys/{id}/versions/{N}/retire (admin), GET /v1/keys/{id}/versions
 * (any grant on the key): key_rotate.c. */
static enum MHD_Result key_admin(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret) || !find_key(c, r, r->ep == EP_VERSIONS ? 0 : SERVE_OP_ADMIN, &ret))
        return ret;
    if (r->ep == EP_VERSIONS)
        return respond_json(c, r, 200, serve_key_versions(r->rt->ks, r->kid));
    unsigned code = 500;
    char msg[512] = "internal error";
    struct serve_key *used = NULL;
    json_t *doc;
    if (r->ep == EP_ROTATE) {
        doc = serve_key_rotate(s, r->kid, &code, msg, sizeof msg, &used);
    } else {
        char v[16] = "";
        const char *p = strstr(r->path + 9, "/versions/") + 10;
        size_t vl = strcspn(p, "/");
        if (vl < sizeof v)
            memcpy(v, p, vl), v[vl] = '\0';
        doc = serve_key_retire(s, r->kid, v, &code, msg, sizeof msg, &used);
    }
    if (used) { /* the record names the version made or retired */
        serve_key_unref(r->key);
        r->key = used;
    }
    if (!doc) {
        if (code >= 500)
            serve_log(&s->log, DSIG_SERVE_LOG_ERROR, r->id, "%s", msg);
        return respond_error(c, r, code, code == 404 ? ERR_NOT_FOUND : code == 409 ? ERR_CONFLICT : ERR_INTERNAL, msg,
                             NULL, NULL);
    }
    if (r->ep == EP_RETIRE) /* every instance sharing the configuration retires it too */
        serve_shared_publish_retired(s->shared, r->kid, r->key->version);
    serve_log(&s->log, DSIG_SERVE_LOG_INFO, r->id, "key %s: version %u %s", r->kid, r->key->version,
              r->ep == EP_ROTATE ? "made, now signing" : "retired");
    return respond_json(c, r, 200, doc);
}

/* Route a request whose head passed the check: GETs are answered, POSTs set up their stream. */
static enum MHD_Result route(struct dsig_server *s, struct MHD_Connection *c, struct req *r, const char *method)
{
    const union MHD_ConnectionInfo *hs = MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (hs && hs->header_size > r->rt->cfg->max_header) {
        char msg[96];
        snprintf(msg, sizeof msg, "request headers larger than %zu bytes", r->rt->cfg->max_header);
        return respond_error(c, r, 431, ERR_BAD_REQUEST, msg, NULL, NULL);
    }
    int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    int is_post = strcmp(method, "POST") == 0;
    if (r->ep == EP_SIGN || r->ep == EP_VERIFY || r->ep == EP_SIGN_DIGEST || r->ep == EP_KEY || r->ep == EP_ROTATE ||
        r->ep == EP_RETIRE || r->ep == EP_VERSIONS) {
        const char *rest = r->path + 9, *slash = strchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
        if (!serve_valid_name(rest, n))
            return respond_error(c, r, 404, ERR_NOT_FOUND, "not a key id ([A-Za-z0-9._-]{1,64})", NULL, NULL);
        memcpy(r->kid, rest, n);
        r->kid[n] = '\0';
    }
    switch (r->ep) {
    case EP_HEALTHZ:
        if (!is_get)
            break;
        return respond(c, r, 200, "text/plain", "ok\n", 3, NULL, NULL);
    case EP_READYZ:
        if (!is_get)
            break;
        return readyz(s, c, r);
    case EP_METRICS:
        if (!is_get)
            break;
        return metrics(s, c, r);
    case EP_KEYS:
        if (!is_get)
            break;
        return list_keys(s, c, r);
    case EP_KEY:
        if (!is_get)
            break;
        return get_key(s, c, r);
    case EP_LOG:
        if (!is_get)
            break;
        return log_endpoint(s, c, r);
    case EP_JWKS:
        if (!is_get)
            break;
        return jwks(c, r);
    case EP_SIGN:
        if (!is_post)
            break;
        return begin_sign(s, c, r);
    case EP_VERIFY:
        if (!is_post)
            break;
        return begin_verify(s, c, r);
    case EP_SIGN_DIGEST:
        if (!is_post)
            break;
        return begin_sign_digest(s, c, r);
    case EP_ROTATE:
    case EP_RETIRE:
        if (!is_post)
            break;
        return key_admin(s, c, r);
    case EP_VERSIONS:
        if (!is_get)
            break;
        return key_admin(s, c, r);
    default:
        return respond_error(c, r, 404, ERR_NOT_FOUND, "no such endpoint", NULL, NULL);
    }
    return respond_error(c, r, 405, ERR_METHOD, "method not allowed here", MHD_HTTP_HEADER_ALLOW,
                         r->ep == EP_SIGN || r->ep == EP_VERIFY || r->ep == EP_SIGN_DIGEST || r->ep == EP_ROTATE ||
                                 r->ep == EP_RETIRE ? "POST" : "GET, HEAD");
}

/* First call of a request: check the head (a bad one is answered at once, and the connection closed).
 * A request with a body is routed now, so that an error (401, 413, ...) is answered before the body is
 * read (libmicrohttpd then closes the connection rather than read the body). One without a body is
 * routed at the next call, once libmicrohttpd knows the request is complete: a response queued at
 * the first call would make it close the connection, and keep-alive is lost for GETs. */
static enum MHD_Result begin(struct dsig_server *s, struct MHD_Connection *c, struct req *r, const char *url,
                             const char *method, const char *version)
{
    size_t ml = strlen(method);
    if (ml < sizeof r->method) {
        int ok = 1;
        for (size_t i = 0; i < ml; i++)
            ok &= method[i] >= 'A' && method[i] <= 'Z';
        if (ok)
            memcpy(r->method, method, ml + 1);
    }
    int has_body = 0;
    const char *why = NULL;
    unsigned bad = serve_http_check(c, r, url, method, version, &has_body, &why);
    serve_conn_headers_done(r->conn, has_body && !bad);
    if (bad)
        return respond_error_full(c, r, bad, bad == 501 ? ERR_NOT_IMPLEMENTED : ERR_BAD_REQUEST, why, NULL, NULL, 1);
    if (!has_body) {
        r->deferred = 1;
        return MHD_YES;
    }
    return route(s, c, r, method);
}

/* One body chunk: signer/verifier here while a digest worker hashes the same bytes (lent, not copied:
 * synced before the chunk goes back to MHD). 0 on failure (close). A chunk that would take the body past
 * max_body is refused whole, before it is hashed: the record's byte count and digest are of the same
 * bytes. */
static int feed(struct req *r, const char *data, size_t n)
{
    uint64_t max = r->rt->cfg->max_body;
    if (max && (r->bytes > max || n > max - r->bytes)) {
        r->err = ERR_TOO_LARGE; /* chunked body over the limit: MHD cannot answer mid-upload, we close */
        return 0;
    }
    if (r->digest_req) { /* sign-digest: a small body kept whole; over its bound the connection closes */
        if (r->bytes + n > SERVE_SIGN_DIGEST_BODY_MAX) {
            r->err = ERR_TOO_LARGE;
            return 0;
        }
        memcpy(r->digest_req + r->bytes, data, n);
        r->bytes += n;
        serve_conn_body(r->conn, r->bytes);
        return 1;
    }
    r->bytes += n;
    serve_conn_body(r->conn, r->bytes);
    if (r->dg && serve_digest_update(r->dg, data, n) != DSIG_OK) {
        r->err = ERR_INTERNAL;
        return 0;
    }
    int rc = r->sctx ? dsig_jws_sign_update(r->sctx, data, n) : dsig_jws_verify_update(r->vctx, data, n);
    /* MHD reuses its read buffer once we return: no worker may still be reading it. */
    int drc = r->dg ? serve_digest_sync(r->dg) : DSIG_OK;
    if (rc != DSIG_OK) {
        r->err = r->sctx ? ERR_SIGN : ERR_INTERNAL;
        return 0;
    }
    if (drc != DSIG_OK) {
        r->err = ERR_INTERNAL;
        return 0;
    }
    return 1;
}

/* Finish the audit digest (once): joins its worker. 1 if there is a digest (or none configured). */
static int digest_final(struct req *r)
{
    if (r->have_digest || !r->dg)
        return 1;
    if (serve_digest_final(r->dg, r->digest) != DSIG_OK)
        return 0;
    r->have_digest = 1;
    return 1;
}

/* The signature is made: its record first, durable, then the signature — or 503 and a correction. */
static enum MHD_Result release_signature(struct dsig_server *s, struct MHD_Connection *c, struct req *r, char *sig,
                                         size_t len, const char *ctype)
{
    r->code = 200;
    uint64_t seq = 0, ignored, index = UINT64_MAX;
    uint8_t jws[32];
    int rc = serve_sha256(sig, len, jws);
    if (rc == DSIG_OK)
        rc = audit_write_full(s, r, "ok", 0, jws, &seq, &index);
    if (rc == DSIG_OK)
        rc = serve_audit_wait(s->audit, seq);
    if (rc != DSIG_OK) {
        dsig_free(sig);
        serve_log(&s->log, DSIG_SERVE_LOG_ERROR, r->id, "signature not released: %s", dsig_last_error_detail());
        r->audited = seq != 0; /* a record saying 200 exists (or will, after a recovery): correct it */
        enum MHD_Result ret = respond_error(c, r, 503, ERR_AUDIT,
                                            "the audit log could not record the signature: none released; retry "
                                            "later", "Retry-After", "1");
        if (seq)
            (void)audit_write(s, r, serve_error_name(ERR_AUDIT), 1, &ignored);
        serve_note_audit(s);
        return ret;
    }
    r->audited = 1;
    char *body = dsig_malloc(len + 2);
    enum MHD_Result ret = MHD_NO;
    if (body) {
        memcpy(body, sig, len);
        body[len] = '\n';
        char idx[24];
        snprintf(idx, sizeof idx, "%llu", (unsigned long long)index);
        ret = respond(c, r, 200, ctype, body, len + 1, index != UINT64_MAX ? INDEX_HEADER : NULL, idx);
        dsig_xfree(body, 0);
    }
    dsig_free(sig);
    if (ret == MHD_YES) {
        r->released = 1; /* the completion corrects the record if the response is not delivered */
    } else { /* nothing left: the connection is closed */
        r->code = 0;
        r->err = ERR_INTERNAL;
        (void)audit_write(s, r, serve_error_name(ERR_INTERNAL), 1, &ignored);
    }
    return ret;
}

/* The whole body arrived: finish signing (record first, then release) or verifying. */
static enum MHD_Result finish(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    serve_conn_body_done(r->conn);
    if (!digest_final(r)) /* joined here: the record needs the whole payload's digest */
        return respond_error(c, r, 500, ERR_INTERNAL, "payload digest failed: no signature released", NULL, NULL);
    if (r->sctx) {
        char *sig = NULL;
        size_t len = 0;
        int rc = dsig_jws_sign_final(r->sctx, &sig, &len);
        r->sctx = NULL;
        if (rc != DSIG_OK)
            return respond_sign_failure(s, c, r, rc);
        return release_signature(s, c, r, sig, len, r->json ? "application/jose+json" : "application/jose");
    }
    if (r->digest_req) {
        unsigned code = 500;
        char msg[512];
        if (!serve_sign_digest(r->key, r->digest_req, (size_t)r->bytes, &r->sd, &code, msg, sizeof msg)) {
            if (code >= 500)
                serve_log(&s->log, DSIG_SERVE_LOG_ERROR, r->id, "%s", msg);
            if (serve_sign_rc_retry(r->sd.sign_rc))
                return respond_error(c, r, 503, ERR_COORDINATOR, msg, "Retry-After", "1");
            return respond_error(c, r, code, code == 400 ? ERR_BAD_REQUEST : ERR_SIGN, msg,
                                 NULL, NULL);
        }
        char *body = r->sd.body; /* released (and freed) by release_signature */
        r->sd.body = NULL;
        return release_signature(s, c, r, body, r->sd.body_len, "application/json");
    }
    if (r->vctx) {
        const char *alg = dsig_alg_name(dsig_jws_verify_alg(r->vctx));
        int rc = dsig_jws_verify_final(r->vctx);
        r->vctx = NULL;
        if (rc == DSIG_OK || rc == DSIG_E_VERIFY) {
            if (rc != DSIG_OK)
                r->err = ERR_VERIFY_INVALID;
            return respond_json(c, r, rc == DSIG_OK ? 200 : 422,
                                json_pack("{s:b,s:s,s:s,s:s,s:I}", "valid", rc == DSIG_OK, "kid", r->kid, "alg", alg,
                                          "key_version", r->key->vkid, "version", (json_int_t)r->key->version));
        }
        char msg[512];
        snprintf(msg, sizeof msg, "cannot verify: %s: %s", dsig_strerror(rc), dsig_last_error_detail());
        serve_log(&s->log, DSIG_SERVE_LOG_ERROR, r->id, "%s", msg);
        return respond_error(c, r, 500, ERR_INTERNAL, msg, NULL, NULL);
    }
    return respond_error(c, r, 500, ERR_INTERNAL, "request in an unexpected state", NULL, NULL);
}

/* MHD access handler: first call routes, further calls stream the body, the last one finishes. */
enum MHD_Result serve_on_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                const char *version, const char *upload_data, size_t *upload_data_size,
                                void **con_cls)
{
    struct dsig_server *s = cls;
    struct req *r = *con_cls;
    if (!r)
        return MHD_NO; /* the URI callback could not allocate: drop the connection */
    if (!r->started) {
        r->started = 1;
        return begin(s, c, r, url, method, version);
    }
    if (r->deferred) { /* no body: this call is the last one; an empty POST finishes at once */
        r->deferred = 0;
        enum MHD_Result ret = route(s, c, r, method);
        return ret == MHD_YES && !r->done ? finish(s, c, r) : ret;
    }
    if (r->done) { /* answered early (error): the body is not wanted */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!feed(r, upload_data, *upload_data_size))
            return MHD_NO; /* closes the connection: no signature, ever */
        *upload_data_size = 0;
        return MHD_YES;
    }
    return finish(s, c, r);
}

/* Why a request ended without completing: the guard's cut, libmicrohttpd's time-out, the client going
 * away, or a request libmicrohttpd refused itself (it answered 400/413: bad chunked framing). */
static enum serve_error ended_why(struct MHD_Connection *c, const struct req *r, enum MHD_RequestTerminationCode toe)
{
    enum serve_cut cut = serve_conn_cut(r->conn);
    if (cut == SERVE_CUT_SLOW)
        return ERR_TOO_SLOW;
    if (cut != SERVE_CUT_NONE || toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
        return ERR_TIMEOUT;
    if (toe == MHD_REQUEST_TERMINATED_WITH_ERROR) {
        const union MHD_ConnectionInfo *st = MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
        if (st && st->http_status == 413)
            return ERR_TOO_LARGE;
        if (st && st->http_status >= 400)
            return ERR_BAD_REQUEST;
    }
    return ERR_CLIENT_ABORT; /* READ_ERROR, CLIENT_ABORT, a reset (WITH_ERROR), DAEMON_SHUTDOWN */
}

/* MHD completion: abort what did not finish, write the record (or the correction of a signature's
 * record whose response did not arrive), count, free. */
void serve_on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct dsig_server *s = cls;
    struct req *r = *con_cls;
    if (!r)
        return;
    *con_cls = NULL;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && r->err == ERR_NONE)
        r->err = ended_why(c, r, toe);
    if (!r->started && !r->done) {
        /* Answered by libmicrohttpd itself (malformed request line or headers, oversized head). */
        const union MHD_ConnectionInfo *st = MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
        r->code = st ? st->http_status : 0;
        if (r->err == ERR_NONE && r->code)
            r->err = r->code == 413 || r->code == 431 ? ERR_TOO_LARGE : ERR_BAD_REQUEST;
    }
    if (r->sctx) { /* upload cut short: the signer never finishes */
        dsig_jws_sign_abort(r->sctx);
        r->sctx = NULL;
    }
    if (r->vctx) {
        dsig_jws_verify_abort(r->vctx);
        r->vctx = NULL;
    }
    (void)digest_final(r); /* of the part received, also after a disconnect; "-" if it failed */
    uint64_t ignored;
    if (r->released && toe != MHD_REQUEST_TERMINATED_COMPLETED_OK) {
        r->code = 0; /* the signature's response did not arrive whole */
        (void)audit_write(s, r, serve_error_name(r->err), 1, &ignored);
    } else if (!r->audited) {
        if (!r->done)
            r->code = r->started ? 0 : r->code;
        (void)audit_write(s, r, r->err == ERR_NONE ? "ok" : serve_error_name(r->err), 0, &ignored);
    }
    uint64_t dur = serve_now_ns() - r->t0 + r->queue_ns;
    serve_metrics_request(s->metrics, r->ep, r->code, r->bytes, dur, r->queue_ns, r->err);
    serve_metrics_tenant(s->metrics, r->tenant_slot, r->ep, r->code);
    serve_metrics_inflight(s->metrics, -1);
    serve_conn_request_done(r->conn);
    serve_key_unref(r->key);
    dsig_xfree(r->digest_req, SERVE_SIGN_DIGEST_BODY_MAX);
    dsig_xfree(r->sd.body, 0);
    serve_digest_free(r->dg);
    serve_runtime_unref(r->rt);
    dsig_xfree(r, 0);
}
