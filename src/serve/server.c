/*
 * src/serve/server.c — the HTTP front end of `dsig serve` on libmicrohttpd: routing, authentication
 * and authorization, and the streaming sign / verify requests.
 *
 * A sign request is a detached JWS signer (dsig/jws.h) fed directly from MHD's upload callbacks: each
 * chunk MHD hands over (at most one connection read buffer) goes to dsig_jws_sign_update, and to the
 * audit digest (digest.c: copied into a small per-upload ring that a worker thread hashes while this
 * thread signs; joined before the audit line), then is forgotten. Nothing touches the disk. The
 * signature exists only once the whole body has arrived (MHD's final call): a client that disconnects
 * or times out mid-upload gets nothing, and its context is aborted in the completion callback.
 *
 * With "tls" in the configuration the same daemon speaks HTTPS (MHD_USE_TLS: GnuTLS inside
 * libmicrohttpd) with the certificate and key tls.c loaded and checked; nothing else changes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <jansson.h>
#include <microhttpd.h>
#include "core/internal.h"
#include "serve_internal.h"

#define SIG_HEADER "DSig-Signature"      /* verify: the detached JWS (compact or flattened JSON) */

struct dsig_server {
    struct dsig_serve_config *cfg;
    struct MHD_Daemon *mhd;
    pthread_mutex_t ks_mu;               /* guards ks (the pointer swap) */
    pthread_mutex_t reload_mu;           /* one reload at a time */
    struct serve_keyset *ks;
    struct serve_metrics *metrics;
    struct serve_audit *audit;
    struct serve_digest_pool *digests;   /* audit digest workers; NULL: hashed inline */
    struct serve_peer_limiter *peers;    /* failed authentications per client address; NULL: unlimited */
    struct serve_tls *tls;               /* certificate and key (libmicrohttpd keeps pointers to them until
                                          * it stops); NULL: plain HTTP */
    pthread_mutex_t start_mu;            /* guards starting, start_msg */
    int starting;                        /* MHD_start_daemon is running: collect its messages */
    char start_msg[512];                 /* libmicrohttpd's messages during the start, to explain a failure */
    dsig_serve_log_fn log;
    void *log_arg;
    unsigned port;
};

/* Per-request state (MHD's con_cls), created when the request line is parsed. */
struct req {
    enum serve_endpoint ep;
    int started;                         /* the access handler has seen the request */
    int done;                            /* a response was queued */
    int audited;                         /* the audit line is written */
    int json;                            /* sign: flattened JSON output */
    uint64_t t0;
    const struct serve_tenant *tenant;
    char kid[SERVE_NAME_MAX + 1];
    struct serve_key *key;               /* reference held for the whole request */
    dsig_jws_sign_ctx *sctx;
    dsig_jws_verify_ctx *vctx;
    struct serve_digest *dg;             /* audit digest of the payload (audit.payload_digest) */
    uint8_t digest[32];
    int have_digest;
    uint64_t bytes;
    unsigned code;
    enum serve_error err;
    char method[8];
    char peer[INET6_ADDRSTRLEN];
};

/* Format a message for the log callback. */
static void slog(struct dsig_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void slog(struct dsig_server *s, const char *fmt, ...)
{
    if (!s->log)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s->log(s->log_arg, buf);
}

/* Key directory warnings (a skipped symbolic link) go to the log. */
static void key_warn(void *arg, const char *msg)
{
    slog(arg, "%s", msg);
}

/* MHD's own messages (listener errors, refused connections) go to the log callback. */
static void mhd_logger(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
    struct dsig_server *s = cls;
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    size_t n = strlen(buf);
    while (n && buf[n - 1] == '\n')
        buf[--n] = '\0';
    /* Collected during the start so that a failure (e.g. GnuTLS refusing the certificate) can say why. */
    pthread_mutex_lock(&s->start_mu);
    if (s->starting) {
        size_t used = strlen(s->start_msg);
        snprintf(s->start_msg + used, sizeof s->start_msg - used, "%s%s", used ? "; " : "", buf);
    }
    pthread_mutex_unlock(&s->start_mu);
    if (!s->log)
        return;
    s->log(s->log_arg, buf);
}

/* The current key set, with a reference. */
static struct serve_keyset *current_keys(struct dsig_server *s)
{
    pthread_mutex_lock(&s->ks_mu);
    struct serve_keyset *ks = s->ks;
    serve_keyset_ref(ks);
    pthread_mutex_unlock(&s->ks_mu);
    return ks;
}

/* Queue a response with a copy of body; records the status on the request. */
static enum MHD_Result respond(struct MHD_Connection *c, struct req *r, unsigned code, const char *ctype,
                               const char *body, size_t len, const char *h1, const char *v1)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    if (ctype)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (h1)
        MHD_add_response_header(resp, h1, v1);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, code, resp);
    MHD_destroy_response(resp);
    r->done = 1;
    r->code = code;
    return ret;
}

/* Free text from json_dumps with jansson's allocator (the tool installs a wiping one). */
static void json_text_free(char *text)
{
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    if (text)
        f(text);
}

/* A JSON error body {"error": kind, "message": text}; the request is marked failed with `err`. */
static enum MHD_Result respond_error(struct MHD_Connection *c, struct req *r, unsigned code, enum serve_error err,
                                     const char *msg, const char *h1, const char *v1)
{
    r->err = err;
    json_t *o = json_pack("{s:s,s:s}", "error", serve_error_name(err), "message", msg);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    enum MHD_Result ret;
    if (!text) {
        ret = respond(c, r, code, "text/plain", "error\n", 6, h1, v1);
    } else {
        size_t n = strlen(text);
        text[n] = '\0';
        char *line = dsig_malloc(n + 2);
        if (line) {
            memcpy(line, text, n);
            line[n] = '\n';
            ret = respond(c, r, code, "application/json", line, n + 1, h1, v1);
            dsig_xfree(line, 0);
        } else {
            ret = respond(c, r, code, "application/json", text, n, h1, v1);
        }
        json_text_free(text);
    }
    return ret;
}

/* Respond with a JSON document (consumed). */
static enum MHD_Result respond_json(struct MHD_Connection *c, struct req *r, unsigned code, const char *ctype,
                                    json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text)
        return respond_error(c, r, 500, ERR_INTERNAL, "out of memory", NULL, NULL);
    size_t n = strlen(text);
    char *line = dsig_malloc(n + 2);
    enum MHD_Result ret;
    if (!line) {
        ret = respond_error(c, r, 500, ERR_INTERNAL, "out of memory", NULL, NULL);
    } else {
        memcpy(line, text, n);
        line[n] = '\n';
        ret = respond(c, r, code, ctype, line, n + 1, NULL, NULL);
        dsig_xfree(line, 0);
    }
    json_text_free(text);
    return ret;
}

/* The endpoint a path names (for metrics even before routing). */
static enum serve_endpoint classify(const char *url)
{
    if (strcmp(url, "/healthz") == 0)
        return EP_HEALTHZ;
    if (strcmp(url, "/metrics") == 0)
        return EP_METRICS;
    if (strcmp(url, "/v1/keys") == 0)
        return EP_KEYS;
    if (strncmp(url, "/v1/keys/", 9) == 0) {
        const char *rest = url + 9, *slash = strchr(rest, '/');
        if (!slash)
            return EP_KEY;
        if (strcmp(slash, "/sign") == 0)
            return EP_SIGN;
        if (strcmp(slash, "/verify") == 0)
            return EP_VERIFY;
    }
    return EP_OTHER;
}

/* MHD_OPTION_URI_LOG_CALLBACK: the request line is parsed; create the request state here so that the
 * completion callback sees (and counts) even requests MHD rejects before the access handler. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct dsig_server *s = cls;
    struct req *r = dsig_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->t0 = serve_now_ns();
    r->ep = EP_OTHER;
    char path[128];
    size_t n = strcspn(uri, "?");
    if (n < sizeof path) {
        memcpy(path, uri, n);
        path[n] = '\0';
        r->ep = classify(path);
    }
    strcpy(r->method, "-");
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    strcpy(r->peer, "-");
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, r->peer, sizeof r->peer);
        else if (sa->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, r->peer,
                      sizeof r->peer);
    }
    serve_metrics_inflight(s->metrics, 1);
    return r;
}

/* Authenticate (401), apply the token's rate limit (429). Returns 1 to go on, 0 if a response was queued.
 * Failures count against the client address: past its budget the answer is 429, not 401. */
static int authenticate(struct dsig_server *s, struct MHD_Connection *c, struct req *r, enum MHD_Result *ret)
{
    const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    size_t tok = 0;
    int a = serve_auth(s->cfg, authz, &tok);
    unsigned retry = 1;
    if (a != SERVE_AUTH_OK && !serve_peer_fail_take(s->peers, r->peer, serve_now_ns(), &retry)) {
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
    struct serve_token *t = &s->cfg->tokens[tok];
    r->tenant = &s->cfg->tenants[t->tenant];
    if (!serve_rate_take(t, serve_now_ns(), &retry)) {
        char ra[16];
        snprintf(ra, sizeof ra, "%u", retry);
        *ret = respond_error(c, r, 429, ERR_RATE_LIMITED, "rate limit of this token exceeded", "Retry-After", ra);
        return 0;
    }
    return 1;
}

/* Look the key up for an authorized tenant: 403 if not granted, 404 if absent. 1 to go on. */
static int find_key(struct dsig_server *s, struct MHD_Connection *c, struct req *r, unsigned op, enum MHD_Result *ret)
{
    if (!serve_tenant_allows(r->tenant, r->kid, op)) {
        *ret = respond_error(c, r, 403, ERR_FORBIDDEN,
                             op == SERVE_OP_SIGN     ? "this token may not sign with this key"
                             : op == SERVE_OP_VERIFY ? "this token may not verify with this key"
                                                     : "this token may not use this key",
                             NULL, NULL);
        return 0;
    }
    struct serve_keyset *ks = current_keys(s);
    struct serve_key *k = serve_keyset_find(ks, r->kid);
    if (k)
        serve_key_ref(k);
    serve_keyset_unref(ks);
    if (!k) {
        *ret = respond_error(c, r, 404, ERR_NOT_FOUND, "no such key", NULL, NULL);
        return 0;
    }
    r->key = k;
    return 1;
}

/* 1 if the Accept header asks for JSON (flattened JWS). */
static int wants_json(struct MHD_Connection *c)
{
    const char *acc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return acc && (strcasestr(acc, "application/json") || strcasestr(acc, "application/jose+json"));
}

/* Body framing and size checks before a streaming request starts (411, 413, 400). 1 to go on. */
static int check_body(struct dsig_server *s, struct MHD_Connection *c, struct req *r, enum MHD_Result *ret)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (!cl && !te) {
        *ret = respond_error(c, r, 411, ERR_BAD_REQUEST,
                             "the payload needs Content-Length or Transfer-Encoding: chunked (Content-Length: 0 "
                             "for an empty payload)", NULL, NULL);
        return 0;
    }
    if (cl && s->cfg->max_body) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(cl, &end, 10);
        if (errno == 0 && end != cl && *end == '\0' && v > s->cfg->max_body) {
            char msg[96];
            snprintf(msg, sizeof msg, "payload larger than the limit of %llu bytes",
                     (unsigned long long)s->cfg->max_body);
            *ret = respond_error(c, r, 413, ERR_TOO_LARGE, msg, NULL, NULL);
            return 0;
        }
    }
    return 1;
}

/* Start the audit digest of the payload (audit.payload_digest: SHA-256, BLAKE3 or none; nothing
 * without an audit log, the digest's only reader). */
static int digest_init(struct dsig_server *s, struct req *r)
{
    if (s->cfg->audit_digest == SERVE_DIGEST_NONE || !s->cfg->audit_path)
        return 1;
    return serve_digest_new(&r->dg, s->digests, s->cfg->audit_digest) == DSIG_OK;
}

/* POST /v1/keys/{kid}/sign: set up the streaming signer. */
static enum MHD_Result begin_sign(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret) || !find_key(s, c, r, SERVE_OP_SIGN, &ret) || !check_body(s, c, r, &ret))
        return ret;
    r->json = wants_json(c);
    dsig_jws_sign_opts o = {0};
    o.format = r->json ? DSIG_FMT_JSON : DSIG_FMT_JWS;
    o.include_kid = s->cfg->include_kid;
    int rc = dsig_jws_sign_init(&r->sctx, NULL, r->key->key, &o);
    if (rc != DSIG_OK) {
        r->sctx = NULL;
        char msg[512];
        snprintf(msg, sizeof msg, "cannot sign: %s: %s", dsig_strerror(rc), dsig_last_error_detail());
        return respond_error(c, r, rc == DSIG_E_EXHAUSTED ? 503 : 500, ERR_SIGN, msg, NULL, NULL);
    }
    if (!digest_init(s, r))
        return respond_error(c, r, 500, ERR_INTERNAL, "cannot start the payload digest", NULL, NULL);
    return MHD_YES;
}

/* POST /v1/keys/{kid}/verify: parse the signature header and set up the streaming verifier. */
static enum MHD_Result begin_verify(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret) || !find_key(s, c, r, SERVE_OP_VERIFY, &ret) || !check_body(s, c, r, &ret))
        return ret;
    const char *sig = MHD_lookup_connection_value(c, MHD_HEADER_KIND, SIG_HEADER);
    if (!sig || !*sig)
        return respond_error(c, r, 400, ERR_BAD_REQUEST, "missing " SIG_HEADER " header (the detached JWS)", NULL,
                             NULL);
    size_t n = strlen(sig);
    dsig_format f = dsig_jws_detect_format(sig, n);
    if (f != DSIG_FMT_JWS && f != DSIG_FMT_JSON)
        return respond_error(c, r, 400, ERR_BAD_REQUEST,
                             SIG_HEADER " must hold a detached JWS (compact with an empty payload segment, or "
                                        "flattened JSON without \"payload\")", NULL, NULL);
    dsig_jws_verify_opts o = {0};
    o.format = f;
    int rc = dsig_jws_verify_init(&r->vctx, r->key->pub, sig, n, &o);
    if (rc == DSIG_E_ALG_NOT_ALLOWED || rc == DSIG_E_KEY_MISMATCH) {
        /* Well-formed, but made with another algorithm than this key's: not valid for this key. */
        r->vctx = NULL;
        r->err = ERR_VERIFY_INVALID;
        return respond_json(c, r, 422, "application/json",
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
    struct serve_keyset *ks = current_keys(s);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < ks->n; i++) {
        const struct serve_key *k = ks->keys[i];
        if (!serve_tenant_allows(r->tenant, k->kid, 0))
            continue;
        json_t *ops = json_array();
        if (serve_tenant_allows(r->tenant, k->kid, SERVE_OP_SIGN))
            json_array_append_new(ops, json_string("sign"));
        if (serve_tenant_allows(r->tenant, k->kid, SERVE_OP_VERIFY))
            json_array_append_new(ops, json_string("verify"));
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:o,s:b}", "kid", k->kid, "alg", dsig_alg_name(k->alg),
                                             "thumbprint", k->thumbprint, "operations", ops, "stateful",
                                             k->stateful));
    }
    serve_keyset_unref(ks);
    return respond_json(c, r, 200, "application/json", arr ? json_pack("{s:o}", "keys", arr) : NULL);
}

/* GET /v1/keys/{kid}: the public JWK. */
static enum MHD_Result get_key(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    enum MHD_Result ret = MHD_NO;
    if (!authenticate(s, c, r, &ret) || !find_key(s, c, r, 0, &ret))
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

/* Sum the size of the request headers (name, value, ": " and CRLF) for the max_header limit. */
static enum MHD_Result add_header_size(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    *(size_t *)cls += strlen(key) + (value ? strlen(value) : 0) + 4;
    return MHD_YES;
}

/* First call of a request: route it; GETs are answered now, POSTs set up their stream. */
static enum MHD_Result begin(struct dsig_server *s, struct MHD_Connection *c, struct req *r, const char *url,
                             const char *method)
{
    size_t ml = strlen(method);
    if (ml < sizeof r->method) {
        int ok = 1;
        for (size_t i = 0; i < ml; i++)
            ok &= method[i] >= 'A' && method[i] <= 'Z';
        if (ok)
            memcpy(r->method, method, ml + 1);
    }
    size_t hdr = strlen(url) + ml + 12;
    MHD_get_connection_values(c, MHD_HEADER_KIND, add_header_size, &hdr);
    if (hdr > s->cfg->max_header) {
        char msg[96];
        snprintf(msg, sizeof msg, "request headers larger than %zu bytes", s->cfg->max_header);
        return respond_error(c, r, 431, ERR_BAD_REQUEST, msg, NULL, NULL);
    }
    int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    int is_post = strcmp(method, "POST") == 0;
    r->ep = classify(url);
    if (r->ep == EP_SIGN || r->ep == EP_VERIFY || r->ep == EP_KEY) {
        const char *rest = url + 9, *slash = strchr(rest, '/');
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
    case EP_METRICS: {
        if (!is_get)
            break;
        struct serve_keyset *ks = current_keys(s);
        size_t nk = ks->n, len = 0;
        serve_keyset_unref(ks);
        char *text = serve_metrics_render(s->metrics, nk, &len);
        if (!text)
            return respond_error(c, r, 500, ERR_INTERNAL, "out of memory", NULL, NULL);
        enum MHD_Result ret = respond(c, r, 200, "text/plain; version=0.0.4", text, len, NULL, NULL);
        dsig_xfree(text, 0);
        return ret;
    }
    case EP_KEYS:
        if (!is_get)
            break;
        return list_keys(s, c, r);
    case EP_KEY:
        if (!is_get)
            break;
        return get_key(s, c, r);
    case EP_SIGN:
        if (!is_post)
            break;
        return begin_sign(s, c, r);
    case EP_VERIFY:
        if (!is_post)
            break;
        return begin_verify(s, c, r);
    default:
        return respond_error(c, r, 404, ERR_NOT_FOUND, "no such endpoint", NULL, NULL);
    }
    return respond_error(c, r, 405, ERR_METHOD, "method not allowed here", MHD_HTTP_HEADER_ALLOW,
                         r->ep == EP_SIGN || r->ep == EP_VERIFY ? "POST" : "GET, HEAD");
}

/* One body chunk: signer/verifier here while a digest worker hashes the same bytes (lent, not copied:
 * synced before the chunk goes back to MHD). 0 on failure (close). */
static int feed(struct dsig_server *s, struct req *r, const char *data, size_t n)
{
    r->bytes += n;
    if (s->cfg->max_body && r->bytes > s->cfg->max_body) {
        r->err = ERR_TOO_LARGE; /* chunked body over the limit: MHD cannot answer mid-upload, we close */
        return 0;
    }
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

/* Write the request's audit line (once); `release`: a signature leaves after it (durable first). */
static int audit(struct dsig_server *s, struct req *r, const char *result, int release)
{
    if (r->audited)
        return DSIG_OK;
    r->audited = 1;
    struct serve_audit_rec a = {0};
    a.tenant = r->tenant ? r->tenant->name : "-";
    a.kid = r->kid[0] ? r->kid : "-";
    a.op = serve_endpoint_name(r->ep);
    a.method = r->method;
    a.bytes = r->bytes;
    a.digest = r->have_digest ? r->digest : NULL;
    a.digest_name = s->cfg->audit_digest == SERVE_DIGEST_BLAKE3 ? "blake3" : "sha256";
    a.code = r->code;
    a.result = result;
    a.duration_ns = serve_now_ns() - r->t0;
    a.peer = r->peer;
    a.release = release;
    int rc = serve_audit_write(s->audit, &a);
    if (rc != DSIG_OK)
        slog(s, "audit log: %s", dsig_last_error_detail());
    return rc;
}

/* The whole body arrived: finish signing (audit first, then release) or verifying. */
static enum MHD_Result finish(struct dsig_server *s, struct MHD_Connection *c, struct req *r)
{
    if (!digest_final(r)) /* joined here: the audit line below needs the whole payload's digest */
        return respond_error(c, r, 500, ERR_INTERNAL, "payload digest failed: no signature released", NULL, NULL);
    if (r->sctx) {
        char *sig = NULL;
        size_t len = 0;
        int rc = dsig_jws_sign_final(r->sctx, &sig, &len);
        r->sctx = NULL;
        if (rc != DSIG_OK) {
            char msg[512];
            snprintf(msg, sizeof msg, "cannot sign: %s: %s", dsig_strerror(rc), dsig_last_error_detail());
            return respond_error(c, r, rc == DSIG_E_EXHAUSTED ? 503 : 500, ERR_SIGN, msg, NULL, NULL);
        }
        /* The signature leaves only once the audit line is written (and, with sync "group" or "always",
         * on disk). */
        r->code = 200;
        if (audit(s, r, "ok", 1) != DSIG_OK) {
            dsig_free(sig);
            r->code = 500;
            return respond_error(c, r, 500, ERR_INTERNAL, "audit log write failed: no signature released", NULL,
                                 NULL);
        }
        char *body = dsig_malloc(len + 2);
        enum MHD_Result ret;
        if (!body) {
            ret = respond_error(c, r, 500, ERR_INTERNAL, "out of memory", NULL, NULL);
        } else {
            memcpy(body, sig, len);
            body[len] = '\n';
            ret = respond(c, r, 200, r->json ? "application/jose+json" : "application/jose", body, len + 1, NULL,
                          NULL);
            dsig_xfree(body, 0);
        }
        dsig_free(sig);
        return ret;
    }
    if (r->vctx) {
        const char *alg = dsig_alg_name(dsig_jws_verify_alg(r->vctx));
        int rc = dsig_jws_verify_final(r->vctx);
        r->vctx = NULL;
        if (rc == DSIG_OK || rc == DSIG_E_VERIFY) {
            if (rc != DSIG_OK)
                r->err = ERR_VERIFY_INVALID;
            return respond_json(c, r, rc == DSIG_OK ? 200 : 422, "application/json",
                                json_pack("{s:b,s:s,s:s}", "valid", rc == DSIG_OK, "kid", r->kid, "alg", alg));
        }
        char msg[512];
        snprintf(msg, sizeof msg, "cannot verify: %s: %s", dsig_strerror(rc), dsig_last_error_detail());
        return respond_error(c, r, 500, ERR_INTERNAL, msg, NULL, NULL);
    }
    return respond_error(c, r, 500, ERR_INTERNAL, "request in an unexpected state", NULL, NULL);
}

/* MHD access handler: first call routes, further calls stream the body, the last one finishes. */
static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
    (void)version;
    struct dsig_server *s = cls;
    struct req *r = *con_cls;
    if (!r)
        return MHD_NO; /* the URI callback could not allocate: drop the connection */
    if (!r->started) {
        r->started = 1;
        return begin(s, c, r, url, method);
    }
    if (r->done) { /* answered early (error): the body is not wanted */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!feed(s, r, upload_data, *upload_data_size))
            return MHD_NO; /* closes the connection: no signature, ever */
        *upload_data_size = 0;
        return MHD_YES;
    }
    return finish(s, c, r);
}

/* MHD completion: abort what did not finish, write the audit line, count, free. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)c;
    struct dsig_server *s = cls;
    struct req *r = *con_cls;
    if (!r)
        return;
    *con_cls = NULL;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && r->err == ERR_NONE) {
        /* READ_ERROR / CLIENT_ABORT: the peer went away; WITH_ERROR: MHD refused the request (bad
         * Content-Length, chunked syntax) or the peer reset; TIMEOUT: a slow client. */
        if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
            r->err = ERR_TIMEOUT;
        else if (toe == MHD_REQUEST_TERMINATED_READ_ERROR || toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT)
            r->err = ERR_CLIENT_ABORT;
        else if (toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN)
            r->err = ERR_CLIENT_ABORT;
        else
            r->err = r->started && !r->sctx && !r->vctx ? ERR_CLIENT_ABORT : ERR_BAD_REQUEST;
    }
    if (!r->started && r->code == 0 && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        r->err = ERR_BAD_REQUEST; /* answered by MHD itself (malformed request, oversized headers) */
    if (r->sctx) { /* upload cut short: the signer never finishes */
        dsig_jws_sign_abort(r->sctx);
        r->sctx = NULL;
    }
    if (r->vctx) {
        dsig_jws_verify_abort(r->vctx);
        r->vctx = NULL;
    }
    (void)digest_final(r); /* of the part received, also after a disconnect; "-" if it failed */
    if (!r->done)
        r->code = 0;
    audit(s, r, r->err == ERR_NONE ? "ok" : serve_error_name(r->err), 0);
    serve_metrics_request(s->metrics, r->ep, r->code, r->bytes, serve_now_ns() - r->t0, r->err);
    serve_metrics_inflight(s->metrics, -1);
    serve_key_unref(r->key);
    serve_digest_free(r->dg);
    dsig_xfree(r, 0);
}

/* Start the audit digest workers. Automatic (digest_threads absent): one per CPU beyond the first,
 * at most 4, none on one CPU (a worker could only take turns with the signer there). */
static int start_digests(struct dsig_server *s)
{
    const struct dsig_serve_config *cfg = s->cfg;
    if (cfg->audit_digest == SERVE_DIGEST_NONE || !cfg->audit_path)
        return DSIG_OK;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned workers = cfg->audit_digest_threads >= 0 ? (unsigned)cfg->audit_digest_threads
                       : ncpu <= 1                    ? 0u
                       : ncpu - 1 > 4                 ? 4u
                                                      : (unsigned)(ncpu - 1);
    if (!workers)
        return DSIG_OK;
    struct serve_digest_opts o = {0};
    o.workers = workers;
    /* Below 64 KiB a hand-over (a thread wake-up) costs more than the hashing. libmicrohttpd reads into
     * about half the connection pool: with small pools, lend chunks of a quarter of it. */
    size_t pool = cfg->max_header + cfg->upload_buffer;
    o.offload_min = pool / 4 < 64u * 1024u ? pool / 4 : 64u * 1024u;
    return serve_digest_pool_new(&s->digests, &o);
}

/* Load and check the certificate and key when the configuration has "tls"; refuse early when this
 * libmicrohttpd has no TLS (built without GnuTLS). */
static int start_tls(struct dsig_server *s)
{
    if (!s->cfg->tls_cert)
        return DSIG_OK;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return dsig_fail(DSIG_E_UNSUPPORTED, "serve: tls: TLS is not supported by this libmicrohttpd (built without "
                         "GnuTLS): use a TLS-terminating proxy (docs/serve.md)");
    return serve_tls_load(s->cfg, key_warn, s, &s->tls);
}

/* Start: load keys, open the audit log, listen. */
int dsig_server_start(dsig_server **out, dsig_serve_config *cfg, dsig_serve_log_fn log, void *log_arg)
{
    if (!out || !cfg) {
        dsig_serve_config_free(cfg);
        return dsig_fail(DSIG_E_ARG, "serve: NULL argument");
    }
    *out = NULL;
    struct dsig_server *s = dsig_calloc(1, sizeof *s);
    if (!s) {
        dsig_serve_config_free(cfg);
        return dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    }
    s->cfg = cfg;
    s->log = log;
    s->log_arg = log_arg;
    pthread_mutex_init(&s->ks_mu, NULL);
    pthread_mutex_init(&s->reload_mu, NULL);
    pthread_mutex_init(&s->start_mu, NULL);
    int rc;
    if (!serve_sha256_md()) {
        rc = dsig_fail(DSIG_E_CRYPTO, "serve: SHA-256 is not available from OpenSSL");
        goto fail;
    }
    if (!(s->metrics = serve_metrics_new())) {
        rc = dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
        goto fail;
    }
    if ((rc = serve_keyset_load(cfg, NULL, key_warn, s, &s->ks)) != DSIG_OK ||
        (rc = serve_audit_open(&s->audit, cfg->audit_path, cfg->audit_sync, cfg->audit_interval_ms)) != DSIG_OK ||
        (rc = start_digests(s)) != DSIG_OK ||
        (rc = serve_peer_limiter_new(&s->peers, cfg->auth_fail_rate, cfg->auth_fail_burst)) != DSIG_OK ||
        (rc = start_tls(s)) != DSIG_OK)
        goto fail;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, cfg->address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)cfg->port);
    } else if (inet_pton(AF_INET6, cfg->address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)cfg->port);
        flags |= MHD_USE_IPv6;
    } else {
        rc = dsig_fail(DSIG_E_ARG, "serve: bad listen address \"%s\"", cfg->address);
        goto fail;
    }
    /* The connection pool holds the request headers and then the read buffer the body streams
     * through: headers over max_header do not fit and MHD answers 431. */
    size_t pool = cfg->max_header + cfg->upload_buffer;
    /* TLS options go in an array: empty for plain HTTP (libmicrohttpd refuses HTTPS options without
     * MHD_USE_TLS). gnutls_record_recv delivers the plaintext into the connection's read buffer: the
     * body still reaches the signer without a copy of ours, in chunks of one TLS record (<= 16 KiB). */
    struct MHD_OptionItem tlsopt[4] = {{MHD_OPTION_END, 0, NULL}};
    if (s->tls) {
        flags |= MHD_USE_TLS;
        tlsopt[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls->cert};
        tlsopt[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls->key};
        tlsopt[2] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                            (void *)serve_tls_priorities(s->tls->min_version)};
        tlsopt[3] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    }
    pthread_mutex_lock(&s->start_mu);
    s->starting = 1;
    pthread_mutex_unlock(&s->start_mu);
    s->mhd = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_access, s,
                              MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                              MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)cfg->threads,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->max_conn,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)cfg->max_conn_per_addr,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout_s,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
                              MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
                              MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                              MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
                              MHD_OPTION_ARRAY, tlsopt,
                              MHD_OPTION_END);
    pthread_mutex_lock(&s->start_mu);
    s->starting = 0;
    pthread_mutex_unlock(&s->start_mu);
    if (!s->mhd) {
        char why[sizeof s->start_msg];
        pthread_mutex_lock(&s->start_mu);
        const char *dflt = s->tls ? "no detail from libmicrohttpd" : "address in use, or not allowed";
        snprintf(why, sizeof why, "%s", s->start_msg[0] ? s->start_msg : dflt);
        pthread_mutex_unlock(&s->start_mu);
        rc = dsig_fail(DSIG_E_IO, "serve: %scannot %s on %s port %u: %s", s->tls ? "tls: " : "",
                       s->tls ? "start TLS" : "listen", cfg->address, cfg->port, why);
        goto fail;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : cfg->port;
    *out = s;
    return DSIG_OK;
fail:
    dsig_server_stop(s);
    return rc;
}

/* The bound port. */
unsigned dsig_server_port(const dsig_server *s)
{
    return s ? s->port : 0;
}

/* 1 if the server speaks TLS (https). */
int dsig_server_tls(const dsig_server *s)
{
    return s && s->tls ? 1 : 0;
}

/* Reload the key directory and swap the set (all or nothing). */
int dsig_server_reload(dsig_server *s, size_t *nkeys)
{
    if (!s)
        return dsig_fail(DSIG_E_ARG, "serve: NULL server");
    pthread_mutex_lock(&s->reload_mu);
    struct serve_keyset *old = current_keys(s), *fresh = NULL;
    int rc = serve_keyset_load(s->cfg, old, key_warn, s, &fresh);
    if (rc == DSIG_OK) {
        pthread_mutex_lock(&s->ks_mu);
        struct serve_keyset *prev = s->ks;
        s->ks = fresh;
        pthread_mutex_unlock(&s->ks_mu);
        serve_keyset_unref(prev); /* the server's reference; requests in flight hold their keys */
        if (nkeys)
            *nkeys = fresh->n;
    } else if (nkeys) {
        *nkeys = old->n;
    }
    serve_keyset_unref(old);
    /* A reload also reopens the audit log, so that rotation is "rename, then SIGHUP". */
    if (serve_audit_reopen(s->audit) != DSIG_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", dsig_last_error_detail());
        slog(s, "%s (still writing to the old file)", detail);
    }
    pthread_mutex_unlock(&s->reload_mu);
    return rc;
}

/* Stop and free everything. */
void dsig_server_stop(dsig_server *s)
{
    if (!s)
        return;
    if (s->mhd)
        MHD_stop_daemon(s->mhd); /* completion callbacks run for the open connections */
    serve_keyset_unref(s->ks);
    serve_audit_close(s->audit);
    serve_digest_pool_free(s->digests); /* after MHD: every request's digest is freed */
    serve_peer_limiter_free(s->peers);
    serve_metrics_free(s->metrics);
    serve_tls_free(s->tls); /* after MHD: it kept pointers to the PEM text; the key is wiped */
    dsig_serve_config_free(s->cfg);
    pthread_mutex_destroy(&s->ks_mu);
    pthread_mutex_destroy(&s->reload_mu);
    pthread_mutex_destroy(&s->start_mu);
    dsig_xfree(s, 0);
}
