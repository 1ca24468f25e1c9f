/*
 * src/serve/metrics.c — Prometheus counters of `dsig serve` (text exposition format 0.0.4): requests by
 * endpoint and status code, payload bytes, a latency histogram per endpoint, errors by kind. Every
 * counter is a relaxed atomic: requests never take a lock to count themselves.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "serve_internal.h"

static const unsigned codes[] = {0, 200, 400, 401, 403, 404, 405, 408, 411, 413, 422, 429, 431, 500, 503};
#define N_CODES (sizeof codes / sizeof codes[0] + 1) /* + "other" */
/* Latency bucket upper bounds in seconds (le), then +Inf. */
static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
#define N_BUCKETS (sizeof buckets / sizeof buckets[0] + 1)

struct serve_metrics {
    _Atomic uint64_t requests[EP_COUNT][N_CODES];
    _Atomic uint64_t bytes[EP_COUNT];
    _Atomic uint64_t hist[EP_COUNT][N_BUCKETS]; /* non-cumulative; summed when rendered */
    _Atomic uint64_t dur_ns[EP_COUNT];
    _Atomic uint64_t errors[ERR_COUNT];
    _Atomic int64_t inflight;
    uint64_t start_ns;
};

/* Endpoint label. */
const char *serve_endpoint_name(enum serve_endpoint e)
{
    static const char *const n[EP_COUNT] = {"sign", "verify", "key", "keys", "healthz", "metrics", "other"};
    return (unsigned)e < EP_COUNT ? n[e] : "other";
}

/* Error-kind label (also the audit "result" of a failed request). */
const char *serve_error_name(enum serve_error e)
{
    static const char *const n[ERR_COUNT] = {"none", "unauthenticated", "forbidden", "not_found", "rate_limited",
                                             "bad_request", "too_large", "client_abort", "timeout", "sign_error",
                                             "invalid_signature", "method_not_allowed", "internal"};
    return (unsigned)e < ERR_COUNT ? n[e] : "internal";
}

/* Zeroed counters. */
struct serve_metrics *serve_metrics_new(void)
{
    struct serve_metrics *m = dsig_calloc(1, sizeof *m);
    if (m)
        m->start_ns = serve_now_ns();
    return m;
}

/* Free the counters. */
void serve_metrics_free(struct serve_metrics *m)
{
    dsig_xfree(m, 0);
}

/* Count one finished request. */
void serve_metrics_request(struct serve_metrics *m, enum serve_endpoint e, unsigned code, uint64_t bytes,
                           uint64_t duration_ns, enum serve_error err)
{
    if ((unsigned)e >= EP_COUNT)
        e = EP_OTHER;
    size_t c = N_CODES - 1;
    for (size_t i = 0; i < N_CODES - 1; i++)
        if (codes[i] == code)
            c = i;
    double s = (double)duration_ns * 1e-9;
    size_t b = N_BUCKETS - 1;
    for (size_t i = 0; i < N_BUCKETS - 1; i++)
        if (s <= buckets[i]) {
            b = i;
            break;
        }
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

/* @spec Prometheus exposition format 0.0.4 (text): HELP/TYPE lines, counters, a histogram per endpoint. */
char *serve_metrics_render(struct serve_metrics *m, size_t nkeys, size_t *len)
{
    struct sbuf b = {dsig_malloc(8192), 0, 8192, 0};
    if (!b.p)
        return NULL;
    sb_printf(&b, "# HELP dsig_serve_requests_total Requests finished, by endpoint and HTTP status (0: no "
                  "response, connection closed).\n# TYPE dsig_serve_requests_total counter\n");
    for (int e = 0; e < EP_COUNT; e++)
        for (size_t c = 0; c < N_CODES; c++) {
            uint64_t v = atomic_load_explicit(&m->requests[e][c], memory_order_relaxed);
            if (!v)
                continue;
            if (c == N_CODES - 1)
                sb_printf(&b, "dsig_serve_requests_total{endpoint=\"%s\",code=\"other\"} %llu\n",
                          serve_endpoint_name((enum serve_endpoint)e), (unsigned long long)v);
            else
                sb_printf(&b, "dsig_serve_requests_total{endpoint=\"%s\",code=\"%u\"} %llu\n",
                          serve_endpoint_name((enum serve_endpoint)e), codes[c], (unsigned long long)v);
        }
    sb_printf(&b, "# HELP dsig_serve_payload_bytes_total Payload bytes received (sign and verify bodies).\n"
                  "# TYPE dsig_serve_payload_bytes_total counter\n");
    for (int e = 0; e <= EP_VERIFY; e++)
        sb_printf(&b, "dsig_serve_payload_bytes_total{endpoint=\"%s\"} %llu\n",
                  serve_endpoint_name((enum serve_endpoint)e),
                  (unsigned long long)atomic_load_explicit(&m->bytes[e], memory_order_relaxed));
    sb_printf(&b, "# HELP dsig_serve_request_duration_seconds Time from the request headers to the end of "
                  "the request.\n# TYPE dsig_serve_request_duration_seconds histogram\n");
    for (int e = 0; e < EP_COUNT; e++) {
        const char *en = serve_endpoint_name((enum serve_endpoint)e);
        uint64_t cum = 0;
        for (size_t i = 0; i < N_BUCKETS; i++) {
            cum += atomic_load_explicit(&m->hist[e][i], memory_order_relaxed);
            if (i < N_BUCKETS - 1)
                sb_printf(&b, "dsig_serve_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %llu\n", en,
                          buckets[i], (unsigned long long)cum);
            else
                sb_printf(&b, "dsig_serve_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n", en,
                          (unsigned long long)cum);
        }
        sb_printf(&b, "dsig_serve_request_duration_seconds_sum{endpoint=\"%s\"} %.6f\n", en,
                  (double)atomic_load_explicit(&m->dur_ns[e], memory_order_relaxed) * 1e-9);
        sb_printf(&b, "dsig_serve_request_duration_seconds_count{endpoint=\"%s\"} %llu\n", en,
                  (unsigned long long)cum);
    }
    sb_printf(&b, "# HELP dsig_serve_errors_total Failed requests by kind.\n# TYPE dsig_serve_errors_total counter\n");
    for (int k = 1; k < ERR_COUNT; k++)
        sb_printf(&b, "dsig_serve_errors_total{kind=\"%s\"} %llu\n", serve_error_name((enum serve_error)k),
                  (unsigned long long)atomic_load_explicit(&m->errors[k], memory_order_relaxed));
    sb_printf(&b, "# HELP dsig_serve_requests_in_flight Requests being served.\n"
                  "# TYPE dsig_serve_requests_in_flight gauge\ndsig_serve_requests_in_flight %lld\n",
              (long long)atomic_load_explicit(&m->inflight, memory_order_relaxed));
    sb_printf(&b, "# HELP dsig_serve_keys Keys served.\n# TYPE dsig_serve_keys gauge\ndsig_serve_keys %zu\n", nkeys);
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
