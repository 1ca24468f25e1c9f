/*
 * src/serve/server.c — the life of `dsig serve` on libmicrohttpd: start, reload, stop, and the wiring of
 * its callbacks (requests: request.c; connections: conns.c).
 *
 * Event loop: libmicrohttpd's internal thread pool in poll(2) mode (MHD_USE_POLL). Its epoll mode (what
 * MHD_USE_AUTO picks on Linux) does not notice, in 0.9.75, that a client closed a connection whose
 * request is incomplete: the socket stays in CLOSE-WAIT until the idle timeout, and a client sending
 * partial requests and closing them exhausts max_connections for everyone (tests/serve/serve_hostile.sh
 * shows it). poll(2) reports the hang-up at once, costs O(connections per thread) per wake-up — nothing
 * at max_connections in the hundreds — and works the same with built-in TLS.
 *
 * A reload replaces the configuration and the keys together (struct serve_runtime, reference counted:
 * a request keeps the one it started with); members that need a restart must not change.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/internal.h"
#include "front.h"

/* Key directory warnings (a skipped symbolic link) go to the log. */
static void key_warn(void *arg, const char *msg)
{
    struct dsig_server *s = arg;
    serve_log(&s->log, DSIG_SERVE_LOG_WARN, NULL, "%s", msg);
}

/* MHD's own messages (listener errors, refused connections) go to the log. */
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
    serve_log(&s->log, DSIG_SERVE_LOG_WARN, NULL, "libmicrohttpd: %s", buf);
}

void serve_runtime_unref(struct serve_runtime *rt)
{
    if (!rt || atomic_fetch_sub(&rt->refs, 1) != 1)
        return;
    serve_keyset_unref(rt->ks);
    if (!rt->cfg_refs || atomic_fetch_sub(rt->cfg_refs, 1) == 1) {
        dsig_serve_config_free(rt->cfg);
        dsig_xfree(rt->cfg_refs, 0);
    }
    dsig_xfree(rt->tenant_slot, 0);
    dsig_xfree(rt, 0);
}

struct serve_runtime *serve_current(struct dsig_server *s)
{
    pthread_mutex_lock(&s->rt_mu);
    struct serve_runtime *rt = s->rt;
    atomic_fetch_add(&rt->refs, 1);
    pthread_mutex_unlock(&s->rt_mu);
    return rt;
}

int serve_ready(struct dsig_server *s, const struct serve_runtime *rt, char *why, size_t n)
{
    unsigned age_s = 0;
    if (serve_shared_stale(s->shared, &age_s)) {
        if (why)
            snprintf(why, n, age_s ? "the shared configuration is %u s old (coordinator.max_stale_s)"
                                   : "the shared configuration has not been read from etcd yet", age_s);
        return 0;
    }
    if (rt->ks->n == 0) {
        if (why)
            snprintf(why, n, "no keys loaded");
        return 0;
    }
    if (!serve_audit_ready(s->audit, NULL, 0)) {
        if (why)
            snprintf(why, n, "the audit log cannot record signatures");
        return 0;
    }
    return 1;
}

int dsig_server_ready(dsig_server *s)
{
    if (!s)
        return 0;
    struct serve_runtime *rt = serve_current(s);
    int ok = serve_ready(s, rt, NULL, 0);
    serve_runtime_unref(rt);
    return ok;
}

/* A token's bucket level carries over a reload when the same token is still configured: a SIGHUP must
 * not refill every bucket. */
static void carry_buckets(struct dsig_serve_config *to, const struct dsig_serve_config *from)
{
    for (size_t i = 0; from && i < to->ntokens; i++)
        for (size_t j = 0; j < from->ntokens; j++) {
            struct serve_token *t = &to->tokens[i], *f = (struct serve_token *)&from->tokens[j];
            if (!dsig_ct_equal(t->hash, f->hash, 32)) /* token hashes are secrets: no early exit */
                continue;
            pthread_mutex_lock(&f->mu);
            t->tokens = f->tokens < t->burst ? f->tokens : t->burst;
            t->last_ns = f->last_ns;
            pthread_mutex_unlock(&f->mu);
            break;
        }
}

/* A runtime for cfg (taken over, also on failure): its keys (state files carried over from prev) and
 * the tenants' metric slots. */
static int runtime_new(struct dsig_server *s, struct dsig_serve_config *cfg, const struct serve_runtime *prev,
                       struct serve_runtime **out)
{
    *out = NULL;
    struct serve_runtime *rt = dsig_calloc(1, sizeof *rt);
    if (!rt) {
        dsig_serve_config_free(cfg);
        return dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    }
    atomic_init(&rt->refs, 1);
    rt->cfg = cfg;
    if (!(rt->cfg_refs = dsig_malloc(sizeof *rt->cfg_refs))) {
        serve_runtime_unref(rt);
        return dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    }
    atomic_init(rt->cfg_refs, 1);
    int rc = serve_keyset_load(cfg, prev ? prev->ks : NULL, key_warn, s, &rt->ks);
    if (rc == DSIG_OK && !(rt->tenant_slot = dsig_calloc(cfg->ntenants ? cfg->ntenants : 1, sizeof *rt->tenant_slot)))
        rc = dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    if (rc != DSIG_OK) {
        serve_runtime_unref(rt);
        return rc;
    }
    for (size_t i = 0; i < cfg->ntenants; i++)
        rt->tenant_slot[i] = serve_metrics_tenant_slot(s->metrics, cfg->tenants[i].name);
    carry_buckets(cfg, prev ? prev->cfg : NULL);
    *out = rt;
    return DSIG_OK;
}

int serve_install_keyset(struct dsig_server *s, struct serve_keyset *ks)
{
    struct serve_runtime *old = serve_current(s);
    struct serve_runtime *rt = dsig_calloc(1, sizeof *rt);
    size_t nt = old->cfg->ntenants ? old->cfg->ntenants : 1;
    if (!rt || !(rt->tenant_slot = dsig_calloc(nt, sizeof *rt->tenant_slot))) {
        dsig_xfree(rt, 0);
        serve_keyset_unref(ks);
        serve_runtime_unref(old);
        return dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    }
    atomic_init(&rt->refs, 1);
    rt->cfg = old->cfg; /* the same tenants, tokens and their buckets */
    rt->cfg_refs = old->cfg_refs;
    atomic_fetch_add(rt->cfg_refs, 1);
    rt->ks = ks;
    memcpy(rt->tenant_slot, old->tenant_slot, nt * sizeof *rt->tenant_slot);
    pthread_mutex_lock(&s->rt_mu);
    struct serve_runtime *prev = s->rt;
    s->rt = rt;
    pthread_mutex_unlock(&s->rt_mu);
    serve_runtime_unref(prev); /* the server's reference; requests in flight hold theirs */
    serve_runtime_unref(old);
    return DSIG_OK;
}

/* The guard's limits from a configuration: the upload rate is measured over request_timeout_s windows. */
static struct serve_conn_limits conn_limits(const struct dsig_serve_config *cfg)
{
    struct serve_conn_limits l = {0};
    l.header_timeout_s = cfg->header_timeout_s;
    l.min_rate = cfg->min_upload_rate;
    l.window_s = cfg->timeout_s;
    l.per_address = cfg->max_conn_per_addr;
    return l;
}

/* MHD_OPTION_NOTIFY_CONNECTION: a connection opens (tracked by the guard, or cut when its address has
 * its share) or closes (before libmicrohttpd closes its descriptor). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct dsig_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        serve_conn_closed(s->conns, *socket_context);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    *socket_context = fd ? serve_conn_open(s->conns, fd->connect_fd, ad ? ad->client_addr : NULL) : NULL;
}

/* The guard's tick: log a change of the audit log's state even when no request sees it. */
static void guard_tick(void *arg)
{
    serve_note_audit(arg);
}

/* Start the audit digest workers. Automatic (digest_threads absent): one per CPU beyond the first,
 * at most 4, none on one CPU (a worker could only take turns with the signer there). */
static int start_digests(struct dsig_server *s, const struct dsig_serve_config *cfg)
{
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
static int start_tls(struct dsig_server *s, const struct dsig_serve_config *cfg)
{
    if (!cfg->tls_cert)
        return DSIG_OK;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return dsig_fail(DSIG_E_UNSUPPORTED, "serve: tls: TLS is not supported by this libmicrohttpd (built without "
                         "GnuTLS): use a TLS-terminating proxy (docs/serve.md)");
    return serve_tls_load(cfg, key_warn, s, &s->tls);
}

/* Start libmicrohttpd on the configured address: poll(2) mode (see the file comment), the connection
 * guard's notifications, the pool and limits of the configuration, TLS when configured. */
static int start_mhd(struct dsig_server *s, const struct dsig_serve_config *cfg)
{
    if (MHD_is_feature_supported(MHD_FEATURE_POLL) != MHD_YES)
        return dsig_fail(DSIG_E_UNSUPPORTED, "serve: this libmicrohttpd has no poll() mode");
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
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
        return dsig_fail(DSIG_E_ARG, "serve: bad listen address \"%s\"", cfg->address);
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
    s->mhd = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, serve_on_access, s,
                              MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                              MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)cfg->threads,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->max_conn,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout_s,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
                              MHD_OPTION_URI_LOG_CALLBACK, serve_on_uri, s,
                              MHD_OPTION_NOTIFY_COMPLETED, serve_on_completed, s,
                              MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                              MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
                              MHD_OPTION_ARRAY, tlsopt,
                              MHD_OPTION_END);
    pthread_mutex_lock(&s->start_mu);
    s->starting = 0;
    char why[sizeof s->start_msg];
    snprintf(why, sizeof why, "%s",
             s->start_msg[0] ? s->start_msg : s->tls ? "no detail from libmicrohttpd" : "address in use, or not allowed");
    pthread_mutex_unlock(&s->start_mu);
    if (!s->mhd)
        return dsig_fail(DSIG_E_IO, "serve: %scannot %s on %s port %u: %s", s->tls ? "tls: " : "",
                         s->tls ? "start TLS" : "listen", cfg->address, cfg->port, why);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : cfg->port;
    return DSIG_OK;
}

/* Make the audit log a transparency log: its tree (rebuilt from the file) and signed checkpoints —
 * unless "audit.transparency_log" is false (plain audit lines, no index; the log endpoints answer 404). */
static int start_tlog(struct dsig_server *s, const struct dsig_serve_config *cfg)
{
    if (!cfg->audit_path || !cfg->tlog)
        return DSIG_OK;
    struct serve_tlog *t = NULL;
    int rc = serve_tlog_open(&t, cfg->audit_path);
    if (rc == DSIG_OK && (rc = serve_audit_attach_tlog(s->audit, t)) == DSIG_OK) /* takes t */
        s->tlog = t;
    if (rc == DSIG_OK && (rc = serve_ckpt_start(&s->ckpt, s->audit, s->tlog, cfg, key_warn, s)) != DSIG_OK)
        serve_tlog_undo_open(s->tlog);
    if (rc == DSIG_OK)
        serve_log(&s->log, DSIG_SERVE_LOG_INFO, NULL, "transparency log: origin %s, note verifier key %s",
                  serve_ckpt_origin(s->ckpt), serve_ckpt_vkey(s->ckpt));
    return rc;
}

/* Start: load keys, open the audit log, start the guard, listen. */
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
    s->log.fn = log;
    s->log.arg = log_arg;
    atomic_init(&s->audit_was_ready, 1);
    pthread_mutex_init(&s->rt_mu, NULL);
    pthread_mutex_init(&s->reload_mu, NULL);
    pthread_mutex_init(&s->start_mu, NULL);
    int rc;
    if (!serve_sha256_md()) {
        dsig_serve_config_free(cfg);
        rc = dsig_fail(DSIG_E_CRYPTO, "serve: SHA-256 is not available from OpenSSL");
        goto fail;
    }
    if (!(s->metrics = serve_metrics_new())) {
        dsig_serve_config_free(cfg);
        rc = dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
        goto fail;
    }
    if ((rc = dsig_random_bytes(&s->id_key, sizeof s->id_key)) != DSIG_OK) {
        dsig_serve_config_free(cfg);
        goto fail;
    }
    if ((rc = runtime_new(s, cfg, NULL, &s->rt)) != DSIG_OK) /* takes cfg */
        goto fail;
    cfg = s->rt->cfg;
    struct serve_conn_limits lim = conn_limits(cfg);
    if ((rc = serve_audit_open(&s->audit, cfg->audit_path, cfg->audit_sync, cfg->audit_interval_ms)) != DSIG_OK ||
        (rc = start_tlog(s, cfg)) != DSIG_OK ||
        (rc = start_digests(s, cfg)) != DSIG_OK ||
        (rc = serve_peer_limiter_new(&s->peers, cfg->auth_fail_rate, cfg->auth_fail_burst)) != DSIG_OK ||
        (rc = serve_conns_new(&s->conns, &lim, guard_tick, s)) != DSIG_OK ||
        (rc = serve_shared_start(s, cfg)) != DSIG_OK) /* before requests: they see the shared tenants */
        goto fail;
    /* The shared configuration replaced the runtime (cfg is gone) and its thread may replace it again:
     * hold the current one for the rest of the start (what it reads takes a restart to change). */
    struct serve_runtime *rt = serve_current(s);
    if ((rc = start_tls(s, rt->cfg)) == DSIG_OK)
        rc = start_mhd(s, rt->cfg);
    serve_runtime_unref(rt);
    if (rc != DSIG_OK)
        goto fail;
    serve_log(&s->log, DSIG_SERVE_LOG_INFO, NULL, "listening on port %u%s", s->port, s->tls ? " (https)" : "");
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

/* @spec docs/scale.md "Shared configuration": the configuration and its keys as one unit (all or
 * nothing); with `tenants` the file's "tenants" replaced by them, and they become the tenants every later
 * reload applies. The caller holds reload_mu. */
int serve_reload_locked(struct dsig_server *s, json_t *tenants, const char *cause, const char *refused,
                        size_t *nkeys)
{
    struct serve_runtime *old = serve_current(s), *fresh = NULL;
    struct dsig_serve_config *cfg = NULL;
    const json_t *use = tenants ? tenants : s->shared_tenants;
    char what[64];
    int rc = serve_config_reread(old->cfg, use, &cfg);
    if (rc == DSIG_OK && serve_config_restart_diff(old->cfg, cfg, what, sizeof what)) {
        dsig_serve_config_free(cfg);
        rc = dsig_fail(DSIG_E_ARG, "%s changed: that takes a restart", what);
    } else if (rc == DSIG_OK) {
        rc = runtime_new(s, cfg, old, &fresh); /* takes cfg */
    }
    if (rc == DSIG_OK) {
        pthread_mutex_lock(&s->rt_mu);
        struct serve_runtime *prev = s->rt;
        s->rt = fresh;
        pthread_mutex_unlock(&s->rt_mu);
        serve_runtime_unref(prev); /* the server's reference; requests in flight hold theirs */
        if (tenants) {
            json_incref(tenants);
            json_decref(s->shared_tenants);
            s->shared_tenants = tenants;
        }
        serve_peer_limiter_set(s->peers, fresh->cfg->auth_fail_rate, fresh->cfg->auth_fail_burst);
        struct serve_conn_limits lim = conn_limits(fresh->cfg);
        serve_conns_set_limits(s->conns, &lim);
        serve_log(&s->log, DSIG_SERVE_LOG_INFO, NULL, "%s: %zu keys, %zu tenants", cause, fresh->ks->n,
                  fresh->cfg->ntenants);
        if (nkeys)
            *nkeys = fresh->ks->n;
    } else {
        char detail[600];
        snprintf(detail, sizeof detail, "%s", dsig_last_error_detail());
        serve_log(&s->log, DSIG_SERVE_LOG_ERROR, NULL, "%s refused, keeping the current configuration and its %zu "
                  "keys: %s", refused, old->ks->n, detail);
        if (nkeys)
            *nkeys = old->ks->n;
        rc = dsig_fail(rc, "%s", detail);
    }
    serve_runtime_unref(old);
    return rc;
}

/* Reload the configuration and its keys as one unit (all or nothing), then reopen the audit log. */
int dsig_server_reload(dsig_server *s, size_t *nkeys)
{
    if (!s)
        return dsig_fail(DSIG_E_ARG, "serve: NULL server");
    pthread_mutex_lock(&s->reload_mu);
    int rc = serve_reload_locked(s, NULL, "configuration reloaded", "reload", nkeys);
    /* A reload also reopens the audit log, so that rotation is "rename, then SIGHUP". */
    if (serve_audit_reopen(s->audit) != DSIG_OK)
        serve_log(&s->log, DSIG_SERVE_LOG_ERROR, NULL, "%s (still writing to the old file)", dsig_last_error_detail());
    serve_note_audit(s);
    pthread_mutex_unlock(&s->reload_mu);
    return rc;
}

/* Stop and free everything. */
void dsig_server_stop(dsig_server *s)
{
    if (!s)
        return;
    if (s->mhd) {
        serve_log(&s->log, DSIG_SERVE_LOG_INFO, NULL, "stopping");
        MHD_stop_daemon(s->mhd); /* completion callbacks run for the open connections */
    }
    serve_shared_stop(s->shared); /* its thread reloads: stopped before what a reload touches goes */
    serve_conns_free(s->conns); /* after MHD: every connection is closed; its tick reads the audit log */
    json_decref(s->shared_tenants);
    serve_runtime_unref(s->rt);
    serve_ckpt_stop(s->ckpt); /* the last checkpoint, while the audit log is still open */
    serve_shared_free(s->shared); /* puts that last checkpoint in etcd */
    serve_audit_close(s->audit);
    serve_ckpt_free(s->ckpt);
    serve_digest_pool_free(s->digests); /* after MHD: every request's digest is freed */
    serve_peer_limiter_free(s->peers);
    serve_metrics_free(s->metrics);
    serve_tls_free(s->tls); /* after MHD: it kept pointers to the PEM text; the key is wiped */
    pthread_mutex_destroy(&s->rt_mu);
    pthread_mutex_destroy(&s->reload_mu);
    pthread_mutex_destroy(&s->start_mu);
    dsig_xfree(s, 0);
}
