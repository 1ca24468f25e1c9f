/*
 * src/serve/metrics.c — Prometheus counters of `dsig serve` (text exposition format 0.0.4): requests by
 * endpoint and status code and by tenant, payload bytes, latency and queueing histograms per endpoint,
 * errors by kind, and the state of the audit log and of the connections (read from their modules when
 * rendered). Every counter is a relaxed atomic: requests never take a lock to count themselves (a
 * tenant's slot is looked up once per configuration load, under a mutex).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "serve/ranges.h"
#include "serve_internal.h"

static const unsigned codes[] = {0, 200, 400, 401, 403, 404, 405, 408, 411, 413, 422, 429, 431, 500, 501, 503};
#define N_CODES (sizeof codes / sizeof codes[0] + 1) /* + "other" */
/* Latency bucket upper bounds in seconds (le), then +Inf. */
static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
#define N_BUCKETS (sizeof buckets / sizeof buckets[0] + 1)

/* Queueing bucket upper bounds in seconds (the kernel's receive time stamps have millisecond steps). */
static const double qbuckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define N_QBUCKETS (sizeof qbuckets / sizeof qbuckets[0] + 1)

struct tenant_counters {
    char name[SERVE_NAME_MAX + 1];
    _Atomic uint64_t requests[EP_COUNT][N_CODES];
};

struct serve_metrics {
    _Atomic uint64_t requests[EP_COUNT][N_CODES];
    _Atomic uint64_t bytes[EP_COUNT];
    _Atomic uint64_t hist[EP_COUNT][N_BUCKETS]; /* non-cumulative; summed when rendered */
    _Atomic uint64_t dur_ns[EP_COUNT];
    _Atomic uint64_t qhist[EP_COUNT][N_QBUCKETS];
    _Atomic uint64_t queue_ns[EP_COUNT];
    _Atomic uint64_t errors[ERR_COUNT];
    _Atomic int64_t inflight;
    uint64_t start_ns;
    pthread_mutex_t tenant_mu;                  /* guards adding slots (slots are never removed) */
    struct tenant_counters *_Atomic tenants[SERVE_METRICS_TENANTS];
    _Atomic int ntenants;
};

/* Endpoint label. */
const char *serve_endpoint_name(enum serve_endpoint e)
{
    static const char *const n[EP_COUNT] = {"sign", "verify", "sign-digest", "key", "keys", "healthz", "readyz",
                                            "metrics", "log", "jwks", "rotate", "retire", "versions", "other"};
    return (unsigned)e < EP_COUNT ? n[e] : "other";
}

/* Error-kind label (also the audit "result" of a failed request). */
const char *serve_error_name(enum serve_error e)
{
    static const char *const n[ERR_COUNT] = {"none", "unauthenticated", "forbidden", "not_found", "rate_limited",
                                             "bad_request", "too_large", "client_abort", "timeout", "sign_error",
                                             "invalid_signature", "method_not_allowed", "internal", "too_slow",
                                             "audit_unavailable", "not_implemented", "conflict",
                                             "coordinator_unavailable"};
    return (unsigned)e < ERR_COUNT ? n[e] : "internal";
}

/* Zeroed counters. */
struct serve_metrics *serve_metrics_new(void)
{
    struct serve_metrics *m = dsig_calloc(1, sizeof *m);
    if (m) {
        m->start_ns = serve_now_ns();
        pthread_mutex_init(&m->tenant_mu, NULL);
    }
    return m;
}

/* Free the counters. */
void serve_metrics_free(struct serve_metrics *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->ntenants; i++)
        dsig_xfree(m->tenants[i], 0);
    pthread_mutex_destroy(&m->tenant_mu);
    dsig_xfree(m, 0);
}

/* The slot of a tenant name (found or added). */
int serve_metrics_tenant_slot(struct serve_metrics *m, const char *name)
{
    pthread_mutex_lock(&m->tenant_mu);
    int n = atomic_load(&m->ntenants), slot = -1;
    for (int i = 0; i < n && slot < 0; i++)
        if (strcmp(m->tenants[i]->name, name) == 0)
            slot = i;
    if (slot < 0 && n < SERVE_METRICS_TENANTS && strlen(name) <= SERVE_NAME_MAX) {
        struct tenant_counters *t = dsig_calloc(1, sizeof *t);
        if (t) {
            strcpy(t->name, name);
            atomic_store(&m->tenants[n], t);
            atomic_store(&m->ntenants, n + 1); /* published after the slot (seq_cst) */
            slot = n;
        }
    }
    pthread_mutex_unlock(&m->tenant_mu);
    return slot;
}

/* Index of a status code in `codes` (the last index: any other). */
static size_t code_index(unsigned code)
{
    for (size_t i = 0; i < N_CODES - 1; i++)
        if (codes[i] == code)
            return i;
    return N_CODES - 1;
}

/* Count one request of a tenant. */
void serve_metrics_tenant(struct serve_metrics *m, int slot, enum serve_endpoint e, unsigned code)
{
    if (slot < 0 || slot >= SERVE_METRICS_TENANTS || (unsigned)e >= EP_COUNT)
        return;
    struct tenant_counters *t = atomic_load_explicit(&m->tenants[slot], memory_order_acquire);
    if (t)
        atomic_fetch_add_explicit(&t->requests[e][code_index(code)], 1, memory_order_relaxed);
}

/* Count one finished request. */
void serve_metrics_request(struct serve_metrics *m, enum serve_endpoint e, unsigned code, uint64_t bytes,
                           uint64_t duration_ns, uint64_t queue_ns, enum serve_error err)
{
    if ((unsigned)e >= EP_COUNT)
        e = EP_OTHER;
    size_t c = code_index(code);
    double s = (double)duration_ns * 1e-9, q = (double)queue_ns * 1e-9;
    size_t b = N_BUCKETS - 1, qb = N_QBUCKETS - 1;
    for (size_t i = 0; i < N_BUCKETS - 1; i++)
        if (s <= buckets[i]) {
            b = i;
            break;
        }
    for (size_t i = 0; i < N_QBUCKETS - 1; i++)
        if (q <= qbuckets[i]) {
            qb = i;
            break;
        }
    atomic_fetch_add_explicit(&m->qhist[e][qb], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->queue_ns[e], queue_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->requests[e][c], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->bytes[e], bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->hist[e][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->dur_ns[e], duration_ns, memory_order_relaxed);
    if (err != ERR_NONE && (unsigned)err < ERR_COUNT)
        atomic_fetch_add_explicit(&m->errors[err], 1, memory_order_relaxed);
}

/* Requests being served now. */
void serve_metrics_inflight(struct serve_metrics *m, int delta)
{
    atomic_fetch_add_explicit(&m->inflight, delta, memory_order_relaxed);
}

/* A growing text buffer. */
struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
};

/* Append formatted text. */
static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap * 2 + (size_t)n;
        char *q = dsig_realloc(b->p, ncap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = ncap;
    }
}

/* One histogram per endpoint: cumulative buckets, +Inf, _sum (seconds) and _count. */
static void render_hist(struct sbuf *b, const char *name, const char *help, const double *bounds, size_t nb,
                        _Atomic uint64_t (*hist)[], size_t stride, _Atomic uint64_t *sum_ns)
{
    sb_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (int e = 0; e < EP_COUNT; e++) {
        const char *en = serve_endpoint_name((enum serve_endpoint)e);
        _Atomic uint64_t *h = (_Atomic uint64_t *)hist + (size_t)e * stride;
        uint64_t cum = 0;
        for (size_t i = 0; i <= nb; i++) {
            cum += atomic_load_explicit(&h[i], memory_order_relaxed);
            if (i < nb)
                sb_printf(b, "%s_bucket{endpoint=\"%s\",le=\"%g\"} %llu\n", name, en, bounds[i],
                          (unsigned long long)cum);
            else
                sb_printf(b, "%s_bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n", name, en, (unsigned long long)cum);
        }
        sb_printf(b, "%s_sum{endpoint=\"%s\"} %.6f\n", name, en,
                  (double)atomic_load_explicit(&sum_ns[e], memory_order_relaxed) * 1e-9);
        sb_printf(b, "%s_count{endpoint=\"%s\"} %llu\n", name, en, (unsigned long long)cum);
    }
}

/* Request counters by endpoint and code, with an optional leading label (the tenant). */
static void render_requests(struct sbuf *b, const char *name, const char *tenant, _Atomic uint64_t (*req)[N_CODES])
{
    for (int e = 0; e < EP_COUNT; e++)
        for (size_t c = 0; c < N_CODES; c++) {
            uint64_t v = atomic_load_explicit(&req[e][c], memory_order_relaxed);
            if (!v)
                continue;
            char code[16];
            if (c == N_CODES - 1)
                strcpy(code, "other");
            else
                snprintf(code, sizeof code, "%u", codes[c]);
            sb_printf(b, "%s{%s%s%sendpoint=\"%s\",code=\"%s\"} %llu\n", name, tenant ? "tenant=\"" : "",
                      tenant ? tenant : "", tenant ? "\"," : "", serve_endpoint_name((enum serve_endpoint)e), code,
                      (unsigned long long)v);
        }
}

/* @spec Prometheus exposition format 0.0.4 (text): HELP/TYPE lines, counters, histograms per endpoint. */
char *serve_metrics_render(struct serve_metrics *m, const struct serve_metrics_extra *x, size_t *len)
{
    struct sbuf b = {dsig_malloc(16384), 0, 16384, 0};
    if (!b.p)
        return NULL;
    sb_printf(&b, "# HELP dsig_serve_requests_total Requests finished, by endpoint and HTTP status (0: no "
                  "response, connection closed).\n# TYPE dsig_serve_requests_total counter\n");
    render_requests(&b, "dsig_serve_requests_total", NULL, m->requests);
    sb_printf(&b, "# HELP dsig_serve_tenant_requests_total Authenticated requests finished, by tenant, endpoint "
                  "and HTTP status.\n# TYPE dsig_serve_tenant_requests_total counter\n");
    int nt = atomic_load(&m->ntenants);
    for (int i = 0; i < nt; i++) {
        struct tenant_counters *t = atomic_load(&m->tenants[i]);
        render_requests(&b, "dsig_serve_tenant_requests_total", t->name, t->requests);
    }
    sb_printf(&b, "# HELP dsig_serve_payload_bytes_total Payload bytes received (sign and verify bodies).\n"
                  "# TYPE dsig_serve_payload_bytes_total counter\n");
    for (int e = 0; e <= EP_VERIFY; e++)
        sb_printf(&b, "dsig_serve_payload_bytes_total{endpoint=\"%s\"} %llu\n",
                  serve_endpoint_name((enum serve_endpoint)e),
                  (unsigned long long)atomic_load_explicit(&m->bytes[e], memory_order_relaxed));
    render_hist(&b, "dsig_serve_request_duration_seconds",
                "Time from the arrival of the request (its queueing included) to its end.", buckets, N_BUCKETS - 1,
                m->hist, N_BUCKETS, m->dur_ns);
    render_hist(&b, "dsig_serve_request_queue_seconds",
                "Time a request waited in the kernel (listen queue, socket buffer) before the server read it: "
                "the kernel's time since the last segment arrived, at the request line (a lower bound).",
                qbuckets, N_QBUCKETS - 1, m->qhist, N_QBUCKETS, m->queue_ns);
    sb_printf(&b, "# HELP dsig_serve_errors_total Failed requests by kind.\n# TYPE dsig_serve_errors_total counter\n");
    for (int k = 1; k < ERR_COUNT; k++)
        sb_printf(&b, "dsig_serve_errors_total{kind=\"%s\"} %llu\n", serve_error_name((enum serve_error)k),
                  (unsigned long long)atomic_load_explicit(&m->errors[k], memory_order_relaxed));
    const struct serve_audit_stats *a = &x->audit;
    sb_printf(&b, "# HELP dsig_serve_audit_records_total Audit records accepted.\n"
                  "# TYPE dsig_serve_audit_records_total counter\ndsig_serve_audit_records_total %llu\n"
                  "# HELP dsig_serve_audit_syncs_total fdatasync calls of the audit log.\n"
                  "# TYPE dsig_serve_audit_syncs_total counter\ndsig_serve_audit_syncs_total %llu\n"
                  "# HELP dsig_serve_audit_sync_failures_total Failed fdatasync calls of the audit log.\n"
                  "# TYPE dsig_serve_audit_sync_failures_total counter\ndsig_serve_audit_sync_failures_total %llu\n"
                  "# HELP dsig_serve_audit_write_failures_total Failed writes to the audit log.\n"
                  "# TYPE dsig_serve_audit_write_failures_total counter\ndsig_serve_audit_write_failures_total %llu\n"
                  "# HELP dsig_serve_audit_recoveries_total Recoveries of the audit log after a failure.\n"
                  "# TYPE dsig_serve_audit_recoveries_total counter\ndsig_serve_audit_recoveries_total %llu\n"
                  "# HELP dsig_serve_audit_records_lost_total Audit records that could not be kept.\n"
                  "# TYPE dsig_serve_audit_records_lost_total counter\ndsig_serve_audit_records_lost_total %llu\n"
                  "# HELP dsig_serve_audit_ready 1 if the audit log can make records durable.\n"
                  "# TYPE dsig_serve_audit_ready gauge\ndsig_serve_audit_ready %d\n",
              (unsigned long long)a->records, (unsigned long long)a->syncs, (unsigned long long)a->sync_failures,
              (unsigned long long)a->write_failures, (unsigned long long)a->recoveries, (unsigned long long)a->lost,
              a->ready);
    const struct serve_conns_stats *c = &x->conns;
    sb_printf(&b, "# HELP dsig_serve_connections_open Connections open.\n"
                  "# TYPE dsig_serve_connections_open gauge\ndsig_serve_connections_open %llu\n"
                  "# HELP dsig_serve_connections_cut_total Connections closed by the server, by reason.\n"
                  "# TYPE dsig_serve_connections_cut_total counter\n"
                  "dsig_serve_connections_cut_total{reason=\"header_timeout\"} %llu\n"
                  "dsig_serve_connections_cut_total{reason=\"too_slow\"} %llu\n"
                  "dsig_serve_connections_cut_total{reason=\"per_address\"} %llu\n",
              (unsigned long long)c->open, (unsigned long long)c->cut_headers, (unsigned long long)c->cut_slow,
              (unsigned long long)c->refused_per_address);
    sb_printf(&b, "# HELP dsig_serve_requests_in_flight Requests being served.\n"
                  "# TYPE dsig_serve_requests_in_flight gauge\ndsig_serve_requests_in_flight %lld\n",
              (long long)atomic_load_explicit(&m->inflight, memory_order_relaxed));
    sb_printf(&b, "# HELP dsig_serve_ready 1 if the service can sign (keys loaded, audit log running).\n"
                  "# TYPE dsig_serve_ready gauge\ndsig_serve_ready %d\n", x->ready);
    const struct serve_shared_stats *sh = &x->shared;
    if (sh->enabled)
        sb_printf(&b, "# HELP dsig_serve_shared_config_connected 1 if the last etcd request of the shared "
                      "configuration's watcher succeeded.\n"
                      "# TYPE dsig_serve_shared_config_connected gauge\ndsig_serve_shared_config_connected %d\n"
                      "# HELP dsig_serve_shared_config_revision The etcd revision of the configuration applied.\n"
                      "# TYPE dsig_serve_shared_config_revision gauge\ndsig_serve_shared_config_revision %lld\n"
                      "# HELP dsig_serve_shared_config_age_seconds Since the last successful read or watch.\n"
                      "# TYPE dsig_serve_shared_config_age_seconds gauge\ndsig_serve_shared_config_age_seconds %.3f\n"
                      "# HELP dsig_serve_shared_config_applied_total Shared configurations applied.\n"
                      "# TYPE dsig_serve_shared_config_applied_total counter\n"
                      "dsig_serve_shared_config_applied_total %llu\n"
                      "# HELP dsig_serve_shared_config_refused_total Entries or updates refused (malformed).\n"
                      "# TYPE dsig_serve_shared_config_refused_total counter\n"
                      "dsig_serve_shared_config_refused_total %llu\n"
                      "# HELP dsig_serve_checkpoints_published_total Checkpoints put in etcd.\n"
                      "# TYPE dsig_serve_checkpoints_published_total counter\n"
                      "dsig_serve_checkpoints_published_total %llu\n",
                  sh->connected, (long long)sh->revision,
                  sh->age_ms == UINT64_MAX ? -1.0 : (double)sh->age_ms * 1e-3, (unsigned long long)sh->applied,
                  (unsigned long long)sh->refused, (unsigned long long)sh->checkpoints);
    sb_printf(&b, "# HELP dsig_serve_keys Keys served.\n# TYPE dsig_serve_keys gauge\ndsig_serve_keys %zu\n",
              x->nkeys);
    /* Per key version, not one sum: a reload that drops a key would make a sum go down. */
    sb_printf(&b, "# HELP dsig_serve_coordinator_requests_total HTTP requests a stateful key's index counter sent "
                  "to the coordinator (etcd; every member tried counts), by key version.\n"
                  "# TYPE dsig_serve_coordinator_requests_total counter\n");
    for (size_t i = 0; x->ks && i < x->ks->n; i++) {
        const struct serve_key *k = x->ks->keys[i];
        if (k->counter)
            sb_printf(&b, "dsig_serve_coordinator_requests_total{kid=\"%s\"} %llu\n", k->vkid,
                      (unsigned long long)serve_counter_etcd_requests(k->counter));
    }
    sb_printf(&b, "# HELP dsig_serve_uptime_seconds Seconds since the server started.\n"
                  "# TYPE dsig_serve_uptime_seconds gauge\ndsig_serve_uptime_seconds %.3f\n",
              (double)(serve_now_ns() - m->start_ns) * 1e-9);
    if (b.oom) {
        dsig_xfree(b.p, 0);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
