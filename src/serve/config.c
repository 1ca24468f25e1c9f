/*
 * src/serve/config.c — the `dsig serve` configuration: strict JSON (jansson), every member checked
 * and bounded, errors naming the member (docs/serve.md is the reference).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/internal.h"
#include "jose/jose_internal.h"
#include "serve_internal.h"

/* Bounds of the numeric settings (docs/serve.md). */
#define MAX_TENANTS 1024
#define MAX_TOKENS_PER_TENANT 64
#define MAX_KEYS_PER_TENANT 1024

/* Reject members of `obj` that are not in the NULL-terminated `allowed` list. */
static int check_members(const json_t *obj, const char *where, const char *const *allowed)
{
    return jose_json_only_members(obj, "config: ", where, allowed);
}

/* Optional string member (absent: *out untouched); copies it. */
static int get_str(const json_t *obj, const char *where, const char *name, char **out, int allow_empty)
{
    json_t *v = json_object_get(obj, name);
    if (!v)
        return DSIG_OK;
    if (!json_is_string(v))
        return dsig_fail(DSIG_E_JSON, "config: %s.%s: must be a string", where, name);
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (strlen(s) != n)
        return dsig_fail(DSIG_E_JSON, "config: %s.%s: contains a NUL character", where, name);
    if (!allow_empty && n == 0)
        return dsig_fail(DSIG_E_JSON, "config: %s.%s: must not be empty", where, name);
    if (n > 4096)
        return dsig_fail(DSIG_E_TOO_LARGE, "config: %s.%s: longer than 4096 bytes", where, name);
    char *c = dsig_strdup(s);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    dsig_xfree(*out, 0);
    *out = c;
    return DSIG_OK;
}

/* Optional integer member within [lo, hi] (absent: *out untouched). */
static int get_uint(const json_t *obj, const char *where, const char *name, uint64_t lo, uint64_t hi,
                    uint64_t *out)
{
    json_t *v = json_object_get(obj, name);
    if (!v)
        return DSIG_OK;
    if (!json_is_integer(v))
        return dsig_fail(DSIG_E_JSON, "config: %s.%s: must be an integer", where, name);
    json_int_t x = json_integer_value(v);
    if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi)
        return dsig_fail(DSIG_E_ARG, "config: %s.%s: %lld is outside [%llu, %llu]", where, name,
                         (long long)x, (unsigned long long)lo, (unsigned long long)hi);
    *out = (uint64_t)x;
    return DSIG_OK;
}

/* Optional number member (integer or real) within [lo, hi]. */
static int get_num(const json_t *obj, const char *where, const char *name, double lo, double hi, double *out)
{
    json_t *v = json_object_get(obj, name);
    if (!v)
        return DSIG_OK;
    if (!json_is_number(v))
        return dsig_fail(DSIG_E_JSON, "config: %s.%s: must be a number", where, name);
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi))
        return dsig_fail(DSIG_E_ARG, "config: %s.%s: %g is outside [%g, %g]", where, name, x, lo, hi);
    *out = x;
    return DSIG_OK;
}

/* Optional object member: *out NULL when absent. */
static int get_obj(const json_t *obj, const char *where, const char *name, json_t **out)
{
    json_t *v = json_object_get(obj, name);
    *out = NULL;
    if (!v)
        return DSIG_OK;
    if (!json_is_object(v))
        return dsig_fail(DSIG_E_JSON, "config: %s.%s: must be an object", where, name);
    *out = v;
    return DSIG_OK;
}

/* A relative path made relative to base (NULL/"" base: unchanged). Replaces *p. */
static int resolve_path(char **p, const char *base)
{
    if (!*p || (*p)[0] == '/' || !base || !base[0])
        return DSIG_OK;
    size_t n = strlen(base) + strlen(*p) + 2;
    char *r = dsig_malloc(n);
    if (!r)
        return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    snprintf(r, n, "%s/%s", base, *p);
    dsig_xfree(*p, 0);
    *p = r;
    return DSIG_OK;
}

/* 1 if s is a valid tenant name / key id: [A-Za-z0-9._-]{1,64}, not starting with a dot. */
int serve_valid_name(const char *s, size_t len)
{
    if (len == 0 || len > SERVE_NAME_MAX || s[0] == '.')
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* "listen": {"address", "port"}. */
static int parse_listen(struct dsig_serve_config *c, const json_t *root)
{
    static const char *const allowed[] = {"address", "port", NULL};
    json_t *o;
    int rc;
    if ((rc = get_obj(root, "config", "listen", &o)) != DSIG_OK || !o)
        return rc;
    if ((rc = check_members(o, "listen", allowed)) != DSIG_OK ||
        (rc = get_str(o, "listen", "address", &c->address, 0)) != DSIG_OK)
        return rc;
    uint64_t port = c->port;
    if ((rc = get_uint(o, "listen", "port", 0, 65535, &port)) != DSIG_OK)
        return rc;
    c->port = (unsigned)port;
    unsigned char buf[16];
    if (inet_pton(AF_INET, c->address, buf) != 1 && inet_pton(AF_INET6, c->address, buf) != 1)
        return dsig_fail(DSIG_E_ARG, "config: listen.address: \"%s\" is not a numeric IPv4 or IPv6 address",
                         c->address);
    return DSIG_OK;
}

/* "audit": {"path", "sync", "interval_ms", "payload_digest", "digest_threads", "log_key", "log_origin",
 * "checkpoint_interval_ms", "transparency_log"}. */
static int parse_audit(struct dsig_serve_config *c, const json_t *root)
{
    static const char *const allowed[] = {"path", "sync", "interval_ms", "payload_digest", "digest_threads",
                                          "log_key", "log_origin", "checkpoint_interval_ms", "transparency_log",
                                          NULL};
    json_t *o;
    int rc;
    if ((rc = get_obj(root, "config", "audit", &o)) != DSIG_OK || !o)
        return rc;
    if ((rc = check_members(o, "audit", allowed)) != DSIG_OK ||
        (rc = get_str(o, "audit", "path", &c->audit_path, 0)) != DSIG_OK)
        return rc;
    char *sync = NULL;
    if ((rc = get_str(o, "audit", "sync", &sync, 0)) != DSIG_OK)
        return rc;
    if (sync) {
        if (strcmp(sync, "group") == 0)
            c->audit_sync = SERVE_SYNC_GROUP;
        else if (strcmp(sync, "always") == 0)
            c->audit_sync = SERVE_SYNC_ALWAYS;
        else if (strcmp(sync, "interval") == 0)
            c->audit_sync = SERVE_SYNC_INTERVAL;
        else if (strcmp(sync, "none") == 0)
            c->audit_sync = SERVE_SYNC_NONE;
        else
            rc = dsig_fail(DSIG_E_ARG, "config: audit.sync: \"%s\" is not group, always, interval or none", sync);
        dsig_xfree(sync, 0);
        if (rc != DSIG_OK)
            return rc;
    }
    char *dg = NULL;
    if ((rc = get_str(o, "audit", "payload_digest", &dg, 0)) != DSIG_OK)
        return rc;
    if (dg) {
        if (strcmp(dg, "sha256") == 0)
            c->audit_digest = SERVE_DIGEST_SHA256;
        else if (strcmp(dg, "blake3") == 0)
            c->audit_digest = SERVE_DIGEST_BLAKE3;
        else if (strcmp(dg, "none") == 0)
            c->audit_digest = SERVE_DIGEST_NONE;
        else
            rc = dsig_fail(DSIG_E_ARG, "config: audit.payload_digest: \"%s\" is not sha256, blake3 or none", dg);
        dsig_xfree(dg, 0);
        if (rc != DSIG_OK)
            return rc;
    }
    uint64_t ms = c->audit_interval_ms;
    if ((rc = get_uint(o, "audit", "interval_ms", 1, 60000, &ms)) != DSIG_OK)
        return rc;
    c->audit_interval_ms = (unsigned)ms;
    uint64_t dt = UINT64_MAX; /* absent: automatic (see server.c) */
    if ((rc = get_uint(o, "audit", "digest_threads", 0, 64, &dt)) != DSIG_OK)
        return rc;
    c->audit_digest_threads = dt == UINT64_MAX ? -1 : (int)dt;
    if ((rc = get_str(o, "audit", "log_key", &c->log_key, 0)) != DSIG_OK ||
        (rc = get_str(o, "audit", "log_origin", &c->log_origin, 0)) != DSIG_OK)
        return rc;
    if (c->log_origin) {
        int okname = c->log_origin[0] != '\0' && strlen(c->log_origin) <= 255;
        for (const char *p = c->log_origin; *p; p++)
            okname &= (unsigned char)*p > 0x20 && *p != '+' && *p != 0x7f;
        if (!okname)
            return dsig_fail(DSIG_E_ARG, "config: audit.log_origin: 1 to 255 bytes without spaces, '+' or control characters");
    }
    uint64_t cms = c->checkpoint_interval_ms;
    if ((rc = get_uint(o, "audit", "checkpoint_interval_ms", 10, 3600000, &cms)) != DSIG_OK)
        return rc;
    c->checkpoint_interval_ms = (unsigned)cms;
    json_t *tl = json_object_get(o, "transparency_log");
    if (tl && !json_is_boolean(tl))
        return dsig_fail(DSIG_E_JSON, "config: audit.transparency_log: must be true or false");
    if (tl)
        c->tlog = json_is_true(tl);
    return DSIG_OK;
}

/* "coordinator": {"etcd": [endpoints], "prefix", "connect_timeout_ms", "timeout_ms"}: the shared index
 * counter of stateful keys (docs/scale.md). */
#define MAX_COORD_ENDPOINTS 16
static int parse_coordinator(struct dsig_serve_config *c, const json_t *root)
{
    static const char *const allowed[] = {"etcd", "prefix", "connect_timeout_ms", "timeout_ms", "shared_config",
                                          "instance_id", "max_stale_s", NULL};
    json_t *o;
    int rc;
    if ((rc = get_obj(root, "config", "coordinator", &o)) != DSIG_OK || !o)
        return rc;
    if ((rc = check_members(o, "coordinator", allowed)) != DSIG_OK)
        return rc;
    json_t *a = json_object_get(o, "etcd");
    if (!a)
        return dsig_fail(DSIG_E_JSON, "config: coordinator: missing member \"etcd\" (the cluster's endpoints)");
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > MAX_COORD_ENDPOINTS)
        return dsig_fail(DSIG_E_JSON, "config: coordinator.etcd: must be an array of 1 to %d endpoint strings",
                         MAX_COORD_ENDPOINTS);
    size_t n = json_array_size(a);
    if (!(c->coord_etcd = dsig_calloc(n, sizeof *c->coord_etcd)))
        return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(a, i);
        const char *u = json_string_value(e);
        size_t len = u ? strlen(u) : 0;
        int ok = u && len == json_string_length(e) && len <= 400 &&
                 ((strncmp(u, "http://", 7) == 0 && len > 7) || (strncmp(u, "https://", 8) == 0 && len > 8)) &&
                 u[len - 1] != '/';
        for (size_t j = 0; ok && j < len; j++)
            ok = (unsigned char)u[j] > 0x20 && (unsigned char)u[j] < 0x7f;
        if (!ok)
            return dsig_fail(DSIG_E_ARG, "config: coordinator.etcd[%zu]: not an endpoint \"http://HOST:PORT\" "
                             "(or https://; no path, no trailing slash, at most 400 characters)", i);
        if (!(c->coord_etcd[i] = dsig_strdup(u)))
            return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
        c->coord_n = i + 1;
    }
    if ((rc = get_str(o, "coordinator", "prefix", &c->coord_prefix, 0)) != DSIG_OK)
        return rc;
    if (c->coord_prefix) {
        int ok = c->coord_prefix[0] == '/' && strlen(c->coord_prefix) <= 256;
        for (const char *p = c->coord_prefix; ok && *p; p++)
            ok = (unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f;
        if (!ok)
            return dsig_fail(DSIG_E_ARG, "config: coordinator.prefix: must start with '/', at most 256 printable "
                             "characters without spaces");
    }
    uint64_t cms = 1000, tms = 3000;
    if ((rc = get_uint(o, "coordinator", "connect_timeout_ms", 1, 60000, &cms)) != DSIG_OK ||
        (rc = get_uint(o, "coordinator", "timeout_ms", 1, 600000, &tms)) != DSIG_OK)
        return rc;
    if (cms > tms)
        return dsig_fail(DSIG_E_ARG, "config: coordinator.connect_timeout_ms (%llu) is larger than timeout_ms (%llu)",
                         (unsigned long long)cms, (unsigned long long)tms);
    c->coord_connect_ms = (unsigned)cms;
    c->coord_timeout_ms = (unsigned)tms;
    /* The shared configuration (shared_config.c, docs/scale.md "Shared configuration"). */
    json_t *sh = json_object_get(o, "shared_config");
    if (sh && !json_is_boolean(sh))
        return dsig_fail(DSIG_E_JSON, "config: coordinator.shared_config: must be true or false");
    c->coord_shared = sh && json_is_true(sh);
    if ((rc = get_str(o, "coordinator", "instance_id", &c->coord_instance, 0)) != DSIG_OK)
        return rc;
    if (c->coord_instance && !serve_valid_name(c->coord_instance, strlen(c->coord_instance)))
        return dsig_fail(DSIG_E_ARG, "config: coordinator.instance_id: \"%s\" is not [A-Za-z0-9._-]{1,64}",
                         c->coord_instance);
    uint64_t stale = 0;
    if ((rc = get_uint(o, "coordinator", "max_stale_s", 0, 86400, &stale)) != DSIG_OK)
        return rc;
    if (stale && !c->coord_shared)
        return dsig_fail(DSIG_E_ARG, "config: coordinator.max_stale_s: only with \"shared_config\": true");
    c->coord_max_stale_s = (unsigned)stale;
    if (!(c->coord_text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS)))
        return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    return DSIG_OK;
}

/* A rate object {"per_second": r, "burst": b} (member `name` of `o`, optional): *rate and *burst are left
 * alone when absent. per_second ≥ min_rate (0 allowed when min_rate is 0: unlimited); burst defaults to
 * max(1, per_second). */
static int parse_rate(const json_t *o, const char *where, const char *name, double min_rate, double *rate,
                      double *burst)
{
    static const char *const rallowed[] = {"per_second", "burst", NULL};
    json_t *r;
    char rw[160];
    int rc;
    snprintf(rw, sizeof rw, "%s.%s", where, name);
    if ((rc = get_obj(o, where, name, &r)) != DSIG_OK || !r)
        return rc;
    if ((rc = check_members(r, rw, rallowed)) != DSIG_OK)
        return rc;
    if (!json_object_get(r, "per_second"))
        return dsig_fail(DSIG_E_JSON, "config: %s: missing member \"per_second\"", rw);
    double pr = 0, b;
    if ((rc = get_num(r, rw, "per_second", min_rate, 1e6, &pr)) != DSIG_OK)
        return rc;
    if (pr > 0 && pr < 0.001) /* 0 (no limit) or a rate that refills within about 17 minutes */
        return dsig_fail(DSIG_E_ARG, "config: %s.per_second: %g is below 0.001 (use 0 for no limit)", rw, pr);
    b = pr < 1 ? 1 : pr;
    if ((rc = get_num(r, rw, "burst", 1, 1e7, &b)) != DSIG_OK)
        return rc;
    *rate = pr;
    *burst = b;
    return DSIG_OK;
}

/* "limits": {...}. */
static int parse_limits(struct dsig_serve_config *c, const json_t *root)
{
    static const char *const allowed[] = {"max_header_bytes", "request_timeout_s", "max_connections",
                                          "max_body_bytes", "threads", "upload_buffer_bytes", "auth_failures",
                                          "max_connections_per_address", "header_timeout_s",
                                          "min_upload_bytes_per_s", NULL};
    json_t *o;
    int rc;
    if ((rc = get_obj(root, "config", "limits", &o)) != DSIG_OK || !o)
        return rc;
    if ((rc = check_members(o, "limits", allowed)) != DSIG_OK)
        return rc;
    uint64_t hdr = c->max_header, to = c->timeout_s, conn = c->max_conn, body = c->max_body, thr = c->threads;
    uint64_t ub = c->upload_buffer, per = c->max_conn_per_addr, hto = c->header_timeout_s, rate = c->min_upload_rate;
    if ((rc = get_uint(o, "limits", "max_header_bytes", 1024, 1u << 20, &hdr)) != DSIG_OK ||
        (rc = get_uint(o, "limits", "request_timeout_s", 1, 3600, &to)) != DSIG_OK ||
        (rc = get_uint(o, "limits", "max_connections", 1, 65536, &conn)) != DSIG_OK ||
        (rc = get_uint(o, "limits", "max_body_bytes", 0, UINT64_C(1) << 50, &body)) != DSIG_OK ||
        (rc = get_uint(o, "limits", "threads", 1, 64, &thr)) != DSIG_OK ||
        (rc = get_uint(o, "limits", "upload_buffer_bytes", 4096, 16u << 20, &ub)) != DSIG_OK ||
        (rc = get_uint(o, "limits", "max_connections_per_address", 0, 65536, &per)) != DSIG_OK ||
        (rc = get_uint(o, "limits", "header_timeout_s", 1, 3600, &hto)) != DSIG_OK ||
        (rc = get_uint(o, "limits", "min_upload_bytes_per_s", 0, UINT64_C(1) << 40, &rate)) != DSIG_OK ||
        (rc = parse_rate(o, "limits", "auth_failures", 0, &c->auth_fail_rate, &c->auth_fail_burst)) != DSIG_OK)
        return rc;
    c->upload_buffer = (size_t)ub;
    c->max_conn_per_addr = (unsigned)per;
    c->header_timeout_s = (unsigned)hto;
    c->min_upload_rate = rate;
    c->max_header = (size_t)hdr;
    c->timeout_s = (unsigned)to;
    c->max_conn = (unsigned)conn;
    c->max_body = body;
    c->threads = (unsigned)thr;
    return DSIG_OK;
}

/* "tls": {"cert", "key", "min_version"}: both paths required when present (files are read at start). */
static int parse_tls(struct dsig_serve_config *c, const json_t *root)
{
    static const char *const allowed[] = {"cert", "key", "min_version", NULL};
    json_t *o;
    int rc;
    if ((rc = get_obj(root, "config", "tls", &o)) != DSIG_OK || !o)
        return rc;
    if ((rc = check_members(o, "tls", allowed)) != DSIG_OK ||
        (rc = get_str(o, "tls", "cert", &c->tls_cert, 0)) != DSIG_OK ||
        (rc = get_str(o, "tls", "key", &c->tls_key, 0)) != DSIG_OK)
        return rc;
    if (!c->tls_cert)
        return dsig_fail(DSIG_E_JSON, "config: tls: missing member \"cert\" (the PEM certificate chain)");
    if (!c->tls_key)
        return dsig_fail(DSIG_E_JSON, "config: tls: missing member \"key\" (the PEM private key)");
    char *mv = NULL;
    if ((rc = get_str(o, "tls", "min_version", &mv, 0)) != DSIG_OK)
        return rc;
    c->tls_min = 12;
    if (mv) {
        if (strcmp(mv, "1.2") == 0)
            c->tls_min = 12;
        else if (strcmp(mv, "1.3") == 0)
            c->tls_min = 13;
        else
            rc = dsig_fail(DSIG_E_ARG, "config: tls.min_version: \"%s\" is not \"1.2\" or \"1.3\"", mv);
        dsig_xfree(mv, 0);
    }
    return rc;
}

/* A string array member into a new NULL-free array of copies; each checked with `valid`. */
static int get_names(const json_t *obj, const char *where, const char *name, size_t max, char ***out, size_t *n)
{
    json_t *a = json_object_get(obj, name);
    *out = NULL;
    *n = 0;
    if (!a)
        return dsig_fail(DSIG_E_JSON, "config: %s: missing member \"%s\"", where, name);
    if (!json_is_array(a))
        return dsig_fail(DSIG_E_JSON, "config: %s.%s: must be an array of strings", where, name);
    size_t cnt = json_array_size(a);
    if (cnt > max)
        return dsig_fail(DSIG_E_TOO_LARGE, "config: %s.%s: more than %zu entries", where, name, max);
    char **v = dsig_calloc(cnt ? cnt : 1, sizeof *v);
    if (!v)
        return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    for (size_t i = 0; i < cnt; i++) {
        json_t *s = json_array_get(a, i);
        if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s)) {
            for (size_t j = 0; j < i; j++)
                dsig_xfree(v[j], 0);
            dsig_xfree(v, 0);
            return dsig_fail(DSIG_E_JSON, "config: %s.%s[%zu]: must be a string", where, name, i);
        }
        if (!(v[i] = dsig_strdup(json_string_value(s)))) {
            for (size_t j = 0; j < i; j++)
                dsig_xfree(v[j], 0);
            dsig_xfree(v, 0);
            return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
        }
    }
    *out = v;
    *n = cnt;
    return DSIG_OK;
}

/* One token object: {"sha256": hex, "rate": {"per_second", "burst"}}. */
static int parse_token(struct serve_token *t, const json_t *o, const char *where)
{
    static const char *const allowed[] = {"sha256", "rate", NULL};
    int rc;
    if (!json_is_object(o))
        return dsig_fail(DSIG_E_JSON, "config: %s: must be an object", where);
    if ((rc = check_members(o, where, allowed)) != DSIG_OK)
        return rc;
    json_t *h = json_object_get(o, "sha256");
    if (!json_is_string(h))
        return dsig_fail(DSIG_E_JSON, "config: %s.sha256: missing, or not a string", where);
    size_t hl = 0;
    if (json_string_length(h) != 64 ||
        dsig_hex_decode(json_string_value(h), 64, t->hash, sizeof t->hash, &hl) != DSIG_OK || hl != 32)
        return dsig_fail(DSIG_E_ARG, "config: %s.sha256: not 64 hexadecimal digits (the SHA-256 of the "
                                     "token: dsig serve --new-token prints both)", where);
    if ((rc = parse_rate(o, where, "rate", 0.001, &t->rate, &t->burst)) != DSIG_OK)
        return rc;
    t->tokens = t->burst;
    return DSIG_OK;
}

/* "tenants": [...] */
static int parse_tenants(struct dsig_serve_config *c, const json_t *root)
{
    static const char *const allowed[] = {"name", "tokens", "keys", "operations", NULL};
    json_t *a = json_object_get(root, "tenants");
    if (!a)
        return dsig_fail(DSIG_E_JSON, "config: missing member \"tenants\"");
    if (!json_is_array(a))
        return dsig_fail(DSIG_E_JSON, "config: tenants: must be an array");
    size_t n = json_array_size(a);
    if (n > MAX_TENANTS)
        return dsig_fail(DSIG_E_TOO_LARGE, "config: tenants: more than %d tenants", MAX_TENANTS);
    size_t ntok = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *tk = json_object_get(json_array_get(a, i), "tokens");
        if (json_is_array(tk))
            ntok += json_array_size(tk);
    }
    c->tenants = dsig_calloc(n ? n : 1, sizeof *c->tenants);
    c->tokens = dsig_calloc(ntok ? ntok : 1, sizeof *c->tokens);
    if (!c->tenants || !c->tokens)
        return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    int rc;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(a, i);
        struct serve_tenant *t = &c->tenants[i];
        char where[96];
        snprintf(where, sizeof where, "tenants[%zu]", i);
        c->ntenants = i + 1;
        if (!json_is_object(o))
            return dsig_fail(DSIG_E_JSON, "config: %s: must be an object", where);
        if ((rc = check_members(o, where, allowed)) != DSIG_OK ||
            (rc = get_str(o, where, "name", &t->name, 0)) != DSIG_OK)
            return rc;
        if (!t->name)
            return dsig_fail(DSIG_E_JSON, "config: %s: missing member \"name\"", where);
        if (!serve_valid_name(t->name, strlen(t->name)))
            return dsig_fail(DSIG_E_ARG, "config: %s.name: \"%s\" is not [A-Za-z0-9._-]{1,64}", where, t->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->tenants[j].name, t->name) == 0)
                return dsig_fail(DSIG_E_ARG, "config: %s.name: \"%s\" is used twice", where, t->name);
        if ((rc = get_names(o, where, "keys", MAX_KEYS_PER_TENANT, &t->keys, &t->nkeys)) != DSIG_OK)
            return rc;
        for (size_t j = 0; j < t->nkeys; j++) {
            if (strcmp(t->keys[j], "*") == 0)
                t->all_keys = 1;
            else if (!serve_valid_name(t->keys[j], strlen(t->keys[j])))
                return dsig_fail(DSIG_E_ARG, "config: %s.keys[%zu]: \"%s\" is not a key id ([A-Za-z0-9._-]{1,64}) "
                                             "or \"*\"", where, j, t->keys[j]);
        }
        char **ops = NULL;
        size_t nops = 0;
        if ((rc = get_names(o, where, "operations", 4, &ops, &nops)) != DSIG_OK)
            return rc;
        for (size_t j = 0; j < nops; j++) {
            if (strcmp(ops[j], "sign") == 0)
                t->ops |= SERVE_OP_SIGN;
            else if (strcmp(ops[j], "verify") == 0)
                t->ops |= SERVE_OP_VERIFY;
            else if (strcmp(ops[j], "sign-digest") == 0)
                t->ops |= SERVE_OP_SIGN_DIGEST;
            else if (strcmp(ops[j], "admin") == 0)
                t->ops |= SERVE_OP_ADMIN;
            else if (rc == DSIG_OK)
                rc = dsig_fail(DSIG_E_ARG,
                               "config: %s.operations[%zu]: \"%s\" is not sign, verify, sign-digest or admin",
                               where, j, ops[j]);
        }
        for (size_t j = 0; j < nops; j++)
            dsig_xfree(ops[j], 0);
        dsig_xfree(ops, 0);
        if (rc != DSIG_OK)
            return rc;
        json_t *tk = json_object_get(o, "tokens");
        if (!json_is_array(tk) || json_array_size(tk) == 0)
            return dsig_fail(DSIG_E_JSON, "config: %s.tokens: must be a non-empty array of token objects", where);
        if (json_array_size(tk) > MAX_TOKENS_PER_TENANT)
            return dsig_fail(DSIG_E_TOO_LARGE, "config: %s.tokens: more than %d tokens", where,
                             MAX_TOKENS_PER_TENANT);
        for (size_t j = 0; j < json_array_size(tk); j++) {
            char tw[128];
            snprintf(tw, sizeof tw, "%s.tokens[%zu]", where, j);
            struct serve_token *tok = &c->tokens[c->ntokens];
            pthread_mutex_init(&tok->mu, NULL);
            c->ntokens++;
            tok->tenant = i;
            if ((rc = parse_token(tok, json_array_get(tk, j), tw)) != DSIG_OK)
                return rc;
            for (size_t k = 0; k + 1 < c->ntokens; k++)
                if (dsig_ct_equal(c->tokens[k].hash, tok->hash, 32)) /* secrets: no early exit */
                    return dsig_fail(DSIG_E_ARG, "config: %s.sha256: the same token hash is configured twice", tw);
        }
    }
    return DSIG_OK;
}

/* Set the defaults documented in docs/serve.md. */
static int set_defaults(struct dsig_serve_config *c)
{
    c->address = dsig_strdup("127.0.0.1");
    c->port = 8080;
    c->include_kid = 1;
    c->audit_sync = SERVE_SYNC_GROUP;
    c->audit_interval_ms = 200;
    c->audit_digest = SERVE_DIGEST_BLAKE3; /* the cheapest strong hash here: see docs/serve.md Performance */
    c->audit_digest_threads = -1;
    c->checkpoint_interval_ms = 1000;
    c->tlog = 1;
    c->max_header = 8192;
    c->upload_buffer = 1024u * 1024u; /* 1 MiB: measured sweet spot between 512 KiB and 4 MiB */
    c->max_body = UINT64_C(4) << 30; /* 4 GiB: a release image fits; raise it (or 0 = none) for more */
    c->timeout_s = 30;
    c->header_timeout_s = 10;
    c->min_upload_rate = 1024;       /* 30 KiB per 30 s window: only a stalling client falls below */
    c->max_conn = 256;
    c->max_conn_per_addr = 32;       /* one address cannot take more than an eighth of max_connections */
    c->threads = 4;
    c->auth_fail_rate = 5;   /* failed authentications per second and client address ... */
    c->auth_fail_burst = 50; /* ... after a burst: room for a misconfigured client to see its 401s */
    return c->address ? DSIG_OK : dsig_fail(DSIG_E_NOMEM, "config: out of memory");
}

/* @spec docs/serve.md "Configuration": parse and check a whole configuration. */
int dsig_serve_config_parse(dsig_serve_config **out, const char *json, size_t len, const char *base_dir)
{
    static const char *const allowed[] = {"listen", "key_dir", "state_registry_dir", "include_kid", "jwks", "audit",
                                          "limits", "tenants", "tls", "coordinator", NULL};
    if (!out || !json)
        return dsig_fail(DSIG_E_ARG, "config: NULL argument");
    *out = NULL;
    if (len > SERVE_CONFIG_MAX)
        return dsig_fail(DSIG_E_TOO_LARGE, "config: larger than %u bytes", SERVE_CONFIG_MAX);
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return dsig_fail(DSIG_E_JSON, "config: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
    struct dsig_serve_config *c = dsig_calloc(1, sizeof *c);
    int rc = c ? set_defaults(c) : dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    if (rc != DSIG_OK)
        goto done;
    if (!json_is_object(root)) {
        rc = dsig_fail(DSIG_E_JSON, "config: the top level must be an object");
        goto done;
    }
    json_t *kid = json_object_get(root, "include_kid");
    if (kid && !json_is_boolean(kid)) {
        rc = dsig_fail(DSIG_E_JSON, "config: include_kid: must be true or false");
        goto done;
    }
    if (kid)
        c->include_kid = json_is_true(kid);
    json_t *jwks = json_object_get(root, "jwks");
    if (jwks && !json_is_boolean(jwks)) {
        rc = dsig_fail(DSIG_E_JSON, "config: jwks: must be true or false");
        goto done;
    }
    if (jwks)
        c->jwks = json_is_true(jwks);
    if ((rc = check_members(root, "config", allowed)) != DSIG_OK ||
        (rc = parse_listen(c, root)) != DSIG_OK ||
        (rc = get_str(root, "config", "key_dir", &c->key_dir, 0)) != DSIG_OK ||
        (rc = get_str(root, "config", "state_registry_dir", &c->state_registry, 1)) != DSIG_OK ||
        (rc = parse_audit(c, root)) != DSIG_OK || (rc = parse_limits(c, root)) != DSIG_OK ||
        (rc = parse_tenants(c, root)) != DSIG_OK || (rc = parse_tls(c, root)) != DSIG_OK ||
        (rc = parse_coordinator(c, root)) != DSIG_OK)
        goto done;
    if (!c->key_dir) {
        rc = dsig_fail(DSIG_E_JSON, "config: missing member \"key_dir\"");
        goto done;
    }
    if ((rc = resolve_path(&c->key_dir, base_dir)) != DSIG_OK ||
        (rc = resolve_path(&c->audit_path, base_dir)) != DSIG_OK ||
        (rc = resolve_path(&c->log_key, base_dir)) != DSIG_OK ||
        (rc = resolve_path(&c->tls_cert, base_dir)) != DSIG_OK ||
        (rc = resolve_path(&c->tls_key, base_dir)) != DSIG_OK ||
        (c->state_registry && c->state_registry[0] && (rc = resolve_path(&c->state_registry, base_dir)) != DSIG_OK))
        goto done;
    /* A reload parses the same text again (dsig_serve_config_load replaces it by the file's path). */
    if (!(c->text = dsig_malloc(len + 1)) || (base_dir && !(c->base_dir = dsig_strdup(base_dir)))) {
        rc = dsig_fail(DSIG_E_NOMEM, "config: out of memory");
        goto done;
    }
    memcpy(c->text, json, len);
    c->text[len] = '\0';
    c->text_len = len;
done:
    json_decref(root);
    if (rc != DSIG_OK) {
        dsig_serve_config_free(c);
        return rc;
    }
    *out = c;
    return DSIG_OK;
}

/* The configuration file's bytes (bounded; free with dsig_xfree(buf, n + 1)). */
static int read_config_file(const char *path, char **buf, size_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "config: cannot open \"%s\": %s", path, strerror(errno));
    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "config \"%s\"", path);
    int rc = dsig_read_whole_fd(fd, what, SERVE_CONFIG_MAX, buf, n);
    close(fd);
    return rc;
}

/* Read the configuration file (bounded) and parse it relative to its directory. */
int dsig_serve_config_load(dsig_serve_config **out, const char *path)
{
    if (!out || !path)
        return dsig_fail(DSIG_E_ARG, "config: NULL argument");
    *out = NULL;
    char *buf = NULL;
    size_t n = 0;
    int rrc = read_config_file(path, &buf, &n);
    if (rrc != DSIG_OK)
        return rrc;
    char *dir = dsig_strdup(path);
    if (!dir) {
        dsig_xfree(buf, n + 1);
        return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    int rc = dsig_serve_config_parse(out, buf, n, slash ? dir : NULL);
    dsig_xfree(dir, 0);
    dsig_xfree(buf, n + 1); /* token hashes are not secrets, but the habit costs nothing */
    if (rc == DSIG_OK) { /* a reload reads the file again: the text is not kept */
        dsig_xfree((*out)->text, (*out)->text_len + 1);
        (*out)->text = NULL;
        (*out)->text_len = 0;
        if (!((*out)->path = dsig_strdup(path))) {
            dsig_serve_config_free(*out);
            *out = NULL;
            return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
        }
    }
    return rc;
}

/* A reload: the file again, or the text again; with `tenants`, its "tenants" replaced by them. */
int serve_config_reread(const struct dsig_serve_config *c, const json_t *tenants, struct dsig_serve_config **out)
{
    if (!tenants)
        return c->path ? dsig_serve_config_load(out, c->path)
                       : dsig_serve_config_parse(out, c->text, c->text_len, c->base_dir);
    *out = NULL;
    char *buf = c->text;
    size_t n = c->text_len;
    int rc = c->path ? read_config_file(c->path, &buf, &n) : DSIG_OK;
    if (rc != DSIG_OK)
        return rc;
    json_error_t jerr;
    json_t *root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &jerr);
    if (c->path)
        dsig_xfree(buf, n + 1);
    if (!root)
        return dsig_fail(DSIG_E_JSON, "config: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
    char *text = NULL;
    if (!json_is_object(root) || json_object_set(root, "tenants", (json_t *)tenants) != 0 ||
        !(text = json_dumps(root, JSON_COMPACT))) {
        json_decref(root);
        return dsig_fail(DSIG_E_JSON, "config: the top level must be an object");
    }
    json_decref(root);
    rc = dsig_serve_config_parse(out, text, strlen(text), c->base_dir);
    serve_json_free(text);
    if (rc == DSIG_OK && c->path) { /* a later reload reads the file again, as after a load */
        dsig_xfree((*out)->text, (*out)->text_len + 1);
        (*out)->text = NULL;
        (*out)->text_len = 0;
        if (!((*out)->path = dsig_strdup(c->path))) {
            dsig_serve_config_free(*out);
            *out = NULL;
            return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
        }
    }
    return rc;
}

/* The "tenants" array of the configuration `c` came from (its file read again, or its text). */
json_t *serve_config_tenants_json(const struct dsig_serve_config *c)
{
    char *buf = c->text;
    size_t n = c->text_len;
    if (c->path && read_config_file(c->path, &buf, &n) != DSIG_OK)
        return NULL;
    json_error_t jerr;
    json_t *root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &jerr);
    if (c->path)
        dsig_xfree(buf, n + 1);
    json_t *t = root ? json_object_get(root, "tenants") : NULL;
    if (!json_is_array(t)) {
        json_decref(root);
        dsig_fail(DSIG_E_JSON, "config: no \"tenants\" array (the file changed since it was loaded?)");
        return NULL;
    }
    json_incref(t);
    json_decref(root);
    return t;
}

/* Check one tenant object on its own, with the rules of the configuration file ("tenants" entries). */
int serve_tenant_check(const json_t *tenant)
{
    json_t *root = json_pack("{s:s,s:[O]}", "key_dir", ".", "tenants", tenant);
    char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    if (!text)
        return dsig_fail(DSIG_E_NOMEM, "config: out of memory");
    struct dsig_serve_config *c = NULL;
    int rc = dsig_serve_config_parse(&c, text, strlen(text), NULL);
    serve_json_free(text);
    dsig_serve_config_free(c);
    return rc;
}

/* 1 if both strings are NULL or equal. */
static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The members a running server cannot change: libmicrohttpd's options, the listener, TLS, the audit
 * log's thread and descriptor. */
int serve_config_restart_diff(const struct dsig_serve_config *a, const struct dsig_serve_config *b, char *what,
                              size_t n)
{
    const char *m = !same_str(a->address, b->address)           ? "listen.address"
                    : a->port != b->port                         ? "listen.port"
                    : !same_str(a->tls_cert, b->tls_cert)         ? "tls.cert"
                    : !same_str(a->tls_key, b->tls_key)           ? "tls.key"
                    : a->tls_min != b->tls_min                    ? "tls.min_version"
                    : a->threads != b->threads                    ? "limits.threads"
                    : a->max_conn != b->max_conn                  ? "limits.max_connections"
                    : a->max_conn_per_addr != b->max_conn_per_addr ? "limits.max_connections_per_address"
                    : a->max_header != b->max_header              ? "limits.max_header_bytes"
                    : a->upload_buffer != b->upload_buffer        ? "limits.upload_buffer_bytes"
                    : a->timeout_s != b->timeout_s                ? "limits.request_timeout_s"
                    : !same_str(a->audit_path, b->audit_path)     ? "audit.path"
                    : a->audit_sync != b->audit_sync              ? "audit.sync"
                    : a->audit_interval_ms != b->audit_interval_ms ? "audit.interval_ms"
                    : a->audit_digest != b->audit_digest          ? "audit.payload_digest"
                    : a->audit_digest_threads != b->audit_digest_threads ? "audit.digest_threads"
                    : !same_str(a->log_key, b->log_key)           ? "audit.log_key"
                    : !same_str(a->log_origin, b->log_origin)     ? "audit.log_origin"
                    : a->checkpoint_interval_ms != b->checkpoint_interval_ms ? "audit.checkpoint_interval_ms"
                    : a->tlog != b->tlog                          ? "audit.transparency_log"
                    : !same_str(a->coord_text, b->coord_text)     ? "coordinator"
                                                                  : NULL;
    if (m && what && n)
        snprintf(what, n, "%s", m);
    return m != NULL;
}

/* Free a configuration (NULL accepted). */
void dsig_serve_config_free(dsig_serve_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ntenants; i++) {
        for (size_t j = 0; j < c->tenants[i].nkeys; j++)
            dsig_xfree(c->tenants[i].keys[j], 0);
        dsig_xfree(c->tenants[i].keys, 0);
        dsig_xfree(c->tenants[i].name, 0);
    }
    for (size_t i = 0; i < c->ntokens; i++)
        pthread_mutex_destroy(&c->tokens[i].mu);
    dsig_xfree(c->tokens, c->ntokens * sizeof *c->tokens);
    dsig_xfree(c->tenants, 0);
    dsig_xfree(c->path, 0);
    dsig_xfree(c->text, c->text ? c->text_len + 1 : 0);
    dsig_xfree(c->base_dir, 0);
    dsig_xfree(c->address, 0);
    dsig_xfree(c->key_dir, 0);
    dsig_xfree(c->state_registry, 0);
    dsig_xfree(c->audit_path, 0);
    dsig_xfree(c->log_key, 0);
    dsig_xfree(c->log_origin, 0);
    dsig_xfree(c->tls_cert, 0);
    dsig_xfree(c->tls_key, 0);
    for (size_t i = 0; i < c->coord_n; i++)
        dsig_xfree(c->coord_etcd[i], 0);
    dsig_xfree(c->coord_etcd, 0);
    dsig_xfree(c->coord_prefix, 0);
    dsig_xfree(c->coord_instance, 0);
    serve_json_free(c->coord_text); /* json_dumps text */
    dsig_xfree(c, 0);
}
