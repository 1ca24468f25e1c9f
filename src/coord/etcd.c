/*
 * src/coord/etcd.c — the etcd v3 JSON-gateway client (etcd.h): members, the handle pool, one POST with
 * fail-over, and the key-value and lease calls built on it. The watch stream is in etcd_watch.c.
 */
#include "coord/etcd.h"
#include "coord/etcd_internal.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/layer_api.h"
#include "jose/jose_internal.h"

#define ETCD_POOL 8 /* idle handles kept */
#define ETCD_DETAIL 600

/* ---- base64 and numbers ---------------------------------------------------------------------------- */

DSIG_LAYER_API char *coord_etcd_b64(const void *data, size_t len)
{
    if (len > (size_t)1 << 28)
        return NULL;
    char *out = dsig_malloc(4 * ((len + 2) / 3) + 1);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, data, (int)len);
    return out;
}

/* EVP_DecodeBlock counts padding as zero bytes: they are taken off here. */
DSIG_LAYER_API int coord_etcd_unb64(const char *in, unsigned char *out, size_t cap)
{
    size_t n = strlen(in);
    if (n % 4 != 0 || n / 4 * 3 > cap || n > (size_t)1 << 28)
        return -1;
    if (n == 0)
        return 0;
    int len = EVP_DecodeBlock(out, (const unsigned char *)in, (int)n);
    if (len < 0)
        return -1;
    if (in[n - 1] == '=')
        len--;
    if (in[n - 2] == '=')
        len--;
    return len;
}

/* A 64-bit number the gateway sent as a JSON string of decimal digits (absent: 0). -1: malformed. */
int etcd_int(json_t *v, int64_t *out)
{
    *out = 0;
    if (!v)
        return 0;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    const char *s = json_string_value(v);
    if (!s || !*s || strlen(s) > 20)
        return -1;
    char *end;
    long long x = strtoll(s, &end, 10);
    if (*end != '\0')
        return -1;
    *out = (int64_t)x;
    return 0;
}

/* ---- the client ----------------------------------------------------------------------------------- */

struct coord_etcd {
    char **endpoints;
    size_t n;
    char *what;
    long connect_ms, total_ms;
    size_t answer_max;
    _Atomic size_t preferred; /* the member that answered last */
    _Atomic uint64_t requests;
    pthread_mutex_t lock;     /* the pool */
    CURL *pool[ETCD_POOL];
    size_t pooled;
};

/* curl_global_init is not safe to race with itself: once per process, never cleaned up (other code of
 * the process may still use libcurl). */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

DSIG_LAYER_API int coord_etcd_new(coord_etcd **out, const coord_etcd_config *cfg)
{
    if (!out)
        return dsig_fail(DSIG_E_ARG, "etcd client: no output");
    *out = NULL;
    const char *what = cfg && cfg->what ? cfg->what : "etcd";
    if (!cfg || !cfg->endpoints || cfg->n_endpoints == 0)
        return dsig_fail(DSIG_E_ARG, "%s: no endpoint", what);
    for (size_t i = 0; i < cfg->n_endpoints; i++) {
        const char *u = cfg->endpoints[i];
        if (!u || (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) || strlen(u) > 400 ||
            u[strlen(u) - 1] == '/')
            return dsig_fail(DSIG_E_ARG, "%s: endpoint '%.100s' is not http(s)://HOST:PORT (no path, no "
                                         "trailing slash)", what, u ? u : "(null)");
    }
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return dsig_fail(DSIG_E_UNAVAILABLE, "%s: libcurl: %s", what, curl_easy_strerror(curl_init_rc));
    coord_etcd *e = dsig_calloc(1, sizeof *e);
    if (!e)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    pthread_mutex_init(&e->lock, NULL);
    e->connect_ms = cfg->connect_timeout_ms ? (long)cfg->connect_timeout_ms : 1000;
    e->total_ms = cfg->timeout_ms ? (long)cfg->timeout_ms : 3000;
    e->answer_max = cfg->answer_max && cfg->answer_max < COORD_ETCD_ANSWER_MAX ? cfg->answer_max
                                                                               : COORD_ETCD_ANSWER_MAX;
    e->endpoints = dsig_calloc(cfg->n_endpoints, sizeof *e->endpoints);
    e->what = dsig_strdup(what);
    int bad = !e->endpoints || !e->what;
    for (size_t i = 0; !bad && i < cfg->n_endpoints; i++, e->n++)
        bad = !(e->endpoints[i] = dsig_strdup(cfg->endpoints[i]));
    if (bad) {
        coord_etcd_free(e);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    *out = e;
    return DSIG_OK;
}

DSIG_LAYER_API void coord_etcd_free(coord_etcd *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->pooled; i++)
        curl_easy_cleanup(e->pool[i]);
    for (size_t i = 0; e->endpoints && i < e->n; i++)
        dsig_xfree(e->endpoints[i], 0);
    dsig_xfree(e->endpoints, 0);
    dsig_xfree(e->what, 0);
    pthread_mutex_destroy(&e->lock);
    dsig_xfree(e, sizeof *e);
}

DSIG_LAYER_API uint64_t coord_etcd_requests(const coord_etcd *e)
{
    return e ? atomic_load_explicit(&((coord_etcd *)e)->requests, memory_order_relaxed) : 0;
}

DSIG_LAYER_API size_t coord_etcd_members(const coord_etcd *e)
{
    return e ? e->n : 0;
}

const char *etcd_what(const coord_etcd *e)
{
    return e->what;
}

size_t etcd_answer_max(const coord_etcd *e)
{
    return e->answer_max;
}

/* ---- HTTP ------------------------------------------------------------------------------------------ */

CURL *etcd_handle_take(coord_etcd *e)
{
    CURL *h = NULL;
    pthread_mutex_lock(&e->lock);
    if (e->pooled)
        h = e->pool[--e->pooled];
    pthread_mutex_unlock(&e->lock);
    return h ? h : curl_easy_init();
}

void etcd_handle_give(coord_etcd *e, CURL *h, int reuse)
{
    if (reuse) {
        pthread_mutex_lock(&e->lock);
        if (e->pooled < ETCD_POOL) {
            e->pool[e->pooled++] = h;
            h = NULL;
        }
        pthread_mutex_unlock(&e->lock);
    }
    if (h)
        curl_easy_cleanup(h);
}

void etcd_handle_setup(coord_etcd *e, CURL *h, const char *url, const char *body, struct curl_slist *hdr,
                       long total_ms, char *err)
{
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, e->connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, total_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
    atomic_fetch_add_explicit(&e->requests, 1, memory_order_relaxed);
}

struct answer {
    char *buf;
    size_t len, cap;
    int too_big;
};

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
    struct answer *a = arg;
    size_t n = size * nmemb;
    if (n > a->cap - a->len) {
        a->too_big = 1;
        return 0; /* aborts the transfer (CURLE_WRITE_ERROR) */
    }
    if (a->len + n > 0) {
        char *nb = realloc(a->buf, a->len + n + 1);
        if (!nb) {
            a->too_big = 1;
            return 0;
        }
        a->buf = nb;
    }
    memcpy(a->buf + a->len, p, n);
    a->len += n;
    return n;
}

/* The gateway answers gRPC errors as {"error": ..., "message": ..., "code": N}: its message, or "". */
const char *etcd_error_message(json_t *j)
{
    const char *m = json_string_value(json_object_get(j, "message"));
    if (!m)
        m = json_string_value(json_object_get(j, "error"));
    return m ? m : "";
}

/* POST body to ENDPOINT + path on one member: the parsed object of a 200 answer, or NULL with why.
 * *grpc_code gets the gRPC code of an error answer (0: none). */
static json_t *post_one(coord_etcd *e, const char *endpoint, const char *path, const char *body, char *why,
                        size_t why_len, int *grpc_code)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s", endpoint, path);
    struct answer a = {.cap = e->answer_max};
    CURL *h = etcd_handle_take(e);
    if (!h) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    char err[CURL_ERROR_SIZE] = "";
    etcd_handle_setup(e, h, url, body, hdr, e->total_ms, err);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
    CURLcode cc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdr);
    json_t *j = NULL;
    if (a.too_big) {
        snprintf(why, why_len, "%s: answer larger than %zu bytes", endpoint, e->answer_max);
    } else if (cc != CURLE_OK) {
        snprintf(why, why_len, "%s: %s", endpoint, err[0] ? err : curl_easy_strerror(cc));
    } else if (status != 200) {
        json_t *ej = a.buf ? json_loadb(a.buf, a.len, 0, NULL) : NULL;
        const char *msg = ej ? etcd_error_message(ej) : "";
        json_int_t code = ej ? json_integer_value(json_object_get(ej, "code")) : 0;
        *grpc_code = (int)code;
        snprintf(why, why_len, "%s: HTTP %ld%s%.200s", endpoint, status, *msg ? ": " : "", msg);
        json_decref(ej);
    } else {
        json_error_t je;
        j = a.buf ? json_loadb(a.buf, a.len, JSON_REJECT_DUPLICATES, &je) : NULL;
        /* Streaming calls (lease keep-alive) wrap their one answer as {"result": {...}}. */
        json_t *r = j ? json_object_get(j, "result") : NULL;
        if (!j || !json_is_object(j) ||
            !(json_is_object(json_object_get(j, "header")) || json_is_object(json_object_get(r, "header")))) {
            snprintf(why, why_len, "%s%s: the answer is not an etcd v3 answer (%s)", endpoint, path,
                     j ? "no header" : a.buf ? je.text : "empty");
            json_decref(j);
            j = NULL;
        }
    }
    free(a.buf);
    etcd_handle_give(e, h, cc == CURLE_OK); /* a good connection stays open for the next request */
    return j;
}

size_t etcd_first_member(coord_etcd *e)
{
    return atomic_load_explicit(&e->preferred, memory_order_relaxed) % e->n;
}

void etcd_prefer_member(coord_etcd *e, size_t i)
{
    atomic_store_explicit(&e->preferred, i, memory_order_relaxed);
}

const char *etcd_member(const coord_etcd *e, size_t i)
{
    return e->endpoints[i % e->n];
}

void etcd_detail_add(char *detail, size_t cap, size_t *used, const char *why)
{
    if (*used >= cap - 1)
        return;
    int w = snprintf(detail + *used, cap - *used, "%s%s", *used ? "; " : "", why);
    *used = w < 0 ? *used : *used + (size_t)w;
    if (*used > cap - 1)
        *used = cap - 1;
}

/*
 * POST to the members in turn, starting with the one that answered last: DSIG_OK with the first
 * well-formed answer, or DSIG_E_UNAVAILABLE with a detail naming every member's failure. An etcd error
 * that is the request's own fault (gRPC InvalidArgument 3, NotFound 5, FailedPrecondition 9,
 * OutOfRange 11) is the same on every member: DSIG_E_ARG at once.
 */
static int call_text(coord_etcd *e, const char *path, const char *body, const char *what, json_t **answer)
{
    char detail[ETCD_DETAIL] = "";
    size_t used = 0;
    size_t first = etcd_first_member(e);
    for (size_t t = 0; t < e->n; t++) {
        size_t i = (first + t) % e->n;
        char why[300];
        int code = 0;
        json_t *j = post_one(e, e->endpoints[i], path, body, why, sizeof why, &code);
        if (j) {
            if (i != first)
                etcd_prefer_member(e, i);
            *answer = j;
            return DSIG_OK;
        }
        if (code == 3 || code == 5 || code == 9 || code == 11)
            return dsig_fail(DSIG_E_ARG, "%s (%s): etcd refused the request: %s", e->what, what, why);
        etcd_detail_add(detail, sizeof detail, &used, why);
    }
    return dsig_fail(DSIG_E_UNAVAILABLE, "%s (%s): no member of %zu answered: %s", e->what, what, e->n, detail);
}

DSIG_LAYER_API int coord_etcd_call(coord_etcd *e, const char *path, json_t *body, const char *what,
                                   json_t **answer)
{
    if (answer)
        *answer = NULL;
    if (!e || !path || !body || !answer)
        return dsig_fail(DSIG_E_ARG, "etcd client: no client, path, body or answer");
    char *text = json_dumps(body, JSON_COMPACT);
    if (!text)
        return dsig_fail(DSIG_E_NOMEM, "%s: out of memory", e->what);
    int rc = call_text(e, path, text, what ? what : path, answer);
    jose_json_text_free(text);
    return rc;
}

/* ---- key-value ------------------------------------------------------------------------------------- */

/* The range end that selects every key starting with key[0..n): key with its last byte below 0xff
 * incremented (trailing 0xff bytes dropped); all 0xff: "\0" (every key from key on). */
static size_t prefix_end(const char *key, size_t n, char *end)
{
    memcpy(end, key, n);
    while (n && (unsigned char)end[n - 1] == 0xff)
        n--;
    if (n == 0) {
        end[0] = '\0';
        return 1;
    }
    end[n - 1] = (char)((unsigned char)end[n - 1] + 1);
    return n;
}

int etcd_key_fields(coord_etcd *e, json_t *req, const char *key, int prefix)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n > COORD_ETCD_KEY_MAX)
        return dsig_fail(DSIG_E_ARG, "%s: key empty or longer than %d bytes", e->what, COORD_ETCD_KEY_MAX);
    char *k = coord_etcd_b64(key, n);
    if (!k || json_object_set_new(req, "key", json_string(k)) != 0) {
        dsig_xfree(k, 0);
        return dsig_fail(DSIG_E_NOMEM, "%s: out of memory", e->what);
    }
    dsig_xfree(k, 0);
    if (prefix) {
        char end[COORD_ETCD_KEY_MAX];
        size_t en = prefix_end(key, n, end);
        char *r = coord_etcd_b64(end, en);
        if (!r || json_object_set_new(req, "range_end", json_string(r)) != 0) {
            dsig_xfree(r, 0);
            return dsig_fail(DSIG_E_NOMEM, "%s: out of memory", e->what);
        }
        dsig_xfree(r, 0);
    }
    return DSIG_OK;
}

/* Decode base64 field `name` of o into a new NUL-terminated buffer. Absent: "" (etcd leaves out empty
 * values). -1: malformed or out of memory. */
static int b64_field(json_t *o, const char *name, char **out, size_t *len)
{
    json_t *v = json_object_get(o, name);
    const char *s = v ? json_string_value(v) : "";
    if (!s)
        return -1;
    size_t cap = strlen(s) / 4 * 3 + 1;
    unsigned char *buf = dsig_malloc(cap);
    if (!buf)
        return -1;
    int n = coord_etcd_unb64(s, buf, cap);
    if (n < 0) {
        dsig_xfree(buf, 0);
        return -1;
    }
    buf[n] = '\0';
    *out = (char *)buf;
    *len = (size_t)n;
    return 0;
}

int etcd_kv_parse(json_t *o, coord_etcd_kv *kv)
{
    memset(kv, 0, sizeof *kv);
    if (!json_is_object(o) || b64_field(o, "key", &kv->key, &kv->key_len) != 0)
        return -1;
    if (b64_field(o, "value", &kv->value, &kv->value_len) != 0 ||
        etcd_int(json_object_get(o, "create_revision"), &kv->create_revision) != 0 ||
        etcd_int(json_object_get(o, "mod_revision"), &kv->mod_revision) != 0 ||
        etcd_int(json_object_get(o, "version"), &kv->version) != 0 ||
        etcd_int(json_object_get(o, "lease"), &kv->lease) != 0) {
        etcd_kv_clear(kv);
        return -1;
    }
    return 0;
}

void etcd_kv_clear(coord_etcd_kv *kv)
{
    dsig_xfree(kv->key, 0);
    dsig_xfree(kv->value, 0);
    memset(kv, 0, sizeof *kv);
}

int etcd_header_revision(json_t *ans, int64_t *rev)
{
    return etcd_int(json_object_get(json_object_get(ans, "header"), "revision"), rev);
}

DSIG_LAYER_API int coord_etcd_get(coord_etcd *e, const char *key, int prefix, coord_etcd_kvs *out)
{
    if (!e || !out)
        return dsig_fail(DSIG_E_ARG, "etcd client: no client or output");
    memset(out, 0, sizeof *out);
    json_t *req = json_object();
    if (!req)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    json_t *ans = NULL;
    int rc = etcd_key_fields(e, req, key, prefix);
    if (rc == DSIG_OK)
        rc = coord_etcd_call(e, "/v3/kv/range", req, "read", &ans);
    json_decref(req);
    if (rc != DSIG_OK)
        return rc;
    rc = etcd_range_parse(e, ans, out);
    json_decref(ans);
    return rc;
}

int etcd_range_parse(coord_etcd *e, json_t *ans, coord_etcd_kvs *out)
{
    memset(out, 0, sizeof *out);
    json_t *kvs = json_object_get(ans, "kvs");
    size_t n = kvs ? json_array_size(kvs) : 0;
    if ((kvs && !json_is_array(kvs)) || etcd_header_revision(ans, &out->revision) != 0)
        return dsig_fail(DSIG_E_UNAVAILABLE, "%s (read): a malformed range answer", e->what);
    if (n && !(out->kvs = dsig_calloc(n, sizeof *out->kvs)))
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++, out->n++) {
        if (etcd_kv_parse(json_array_get(kvs, i), &out->kvs[i]) != 0) {
            coord_etcd_kvs_free(out);
            return dsig_fail(DSIG_E_UNAVAILABLE, "%s (read): a malformed key-value pair in the answer", e->what);
        }
    }
    return DSIG_OK;
}

DSIG_LAYER_API void coord_etcd_kvs_free(coord_etcd_kvs *kvs)
{
    if (!kvs)
        return;
    for (size_t i = 0; i < kvs->n; i++)
        etcd_kv_clear(&kvs->kvs[i]);
    dsig_xfree(kvs->kvs, 0);
    memset(kvs, 0, sizeof *kvs);
}

/* Send req (consumed) to path; *ans_out (NULL: not wanted) gets the answer. */
static int simple_call(coord_etcd *e, const char *path, json_t *req, const char *what, json_t **ans_out)
{
    json_t *ans = NULL;
    int rc = coord_etcd_call(e, path, req, what, &ans);
    json_decref(req);
    if (ans_out)
        *ans_out = ans;
    else
        json_decref(ans);
    return rc;
}

DSIG_LAYER_API int coord_etcd_put(coord_etcd *e, const char *key, const void *value, size_t len,
                                  int64_t lease, int64_t *revision)
{
    if (!e || (!value && len))
        return dsig_fail(DSIG_E_ARG, "etcd client: no client or value");
    json_t *req = json_object();
    char *v = coord_etcd_b64(value ? value : "", len);
    char ls[24];
    snprintf(ls, sizeof ls, "%lld", (long long)lease);
    int rc = !req || !v ? dsig_fail(DSIG_E_NOMEM, "out of memory") : etcd_key_fields(e, req, key, 0);
    if (rc == DSIG_OK && (json_object_set_new(req, "value", json_string(v)) != 0 ||
                          (lease && json_object_set_new(req, "lease", json_string(ls)) != 0)))
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    dsig_xfree(v, 0);
    if (rc != DSIG_OK) {
        json_decref(req);
        return rc;
    }
    json_t *ans = NULL;
    if ((rc = simple_call(e, "/v3/kv/put", req, "put", &ans)) != DSIG_OK)
        return rc;
    int64_t rev = 0;
    if (etcd_header_revision(ans, &rev) != 0)
        rc = dsig_fail(DSIG_E_UNAVAILABLE, "%s (put): a malformed answer", e->what);
    json_decref(ans);
    if (revision)
        *revision = rev;
    return rc;
}

DSIG_LAYER_API int coord_etcd_delete(coord_etcd *e, const char *key, int prefix, uint64_t *deleted)
{
    if (!e)
        return dsig_fail(DSIG_E_ARG, "etcd client: no client");
    json_t *req = json_object();
    int rc = req ? etcd_key_fields(e, req, key, prefix) : dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (rc != DSIG_OK) {
        json_decref(req);
        return rc;
    }
    json_t *ans = NULL;
    if ((rc = simple_call(e, "/v3/kv/deleterange", req, "delete", &ans)) != DSIG_OK)
        return rc;
    int64_t n = 0;
    if (etcd_int(json_object_get(ans, "deleted"), &n) != 0 || n < 0)
        rc = dsig_fail(DSIG_E_UNAVAILABLE, "%s (delete): a malformed answer", e->what);
    json_decref(ans);
    if (deleted)
        *deleted = (uint64_t)n;
    return rc;
}

/* ---- leases ---------------------------------------------------------------------------------------- */

/* POST {field: "value"} (a 64-bit number as the gateway's string) to a lease endpoint. */
static int lease_call(coord_etcd *e, const char *path, const char *what, const char *field, int64_t value,
                      json_t **ans)
{
    char v[24];
    snprintf(v, sizeof v, "%lld", (long long)value);
    json_t *req = json_pack("{s:s}", field, v);
    if (!req)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    return simple_call(e, path, req, what, ans);
}

DSIG_LAYER_API int coord_etcd_lease_grant(coord_etcd *e, int64_t ttl_s, int64_t *id)
{
    if (!e || !id || ttl_s < 1)
        return dsig_fail(DSIG_E_ARG, "etcd lease: no client, no output or a TTL below 1 s");
    json_t *ans = NULL;
    int rc = lease_call(e, "/v3/lease/grant", "lease grant", "TTL", ttl_s, &ans);
    if (rc != DSIG_OK)
        return rc;
    if (etcd_int(json_object_get(ans, "ID"), id) != 0 || *id == 0)
        rc = dsig_fail(DSIG_E_UNAVAILABLE, "%s (lease grant): no lease id in the answer", e->what);
    json_decref(ans);
    return rc;
}

DSIG_LAYER_API int coord_etcd_lease_keepalive(coord_etcd *e, int64_t id, int64_t *ttl_left)
{
    if (!e || id == 0)
        return dsig_fail(DSIG_E_ARG, "etcd lease: no client or lease 0");
    json_t *ans = NULL;
    int rc = lease_call(e, "/v3/lease/keepalive", "lease keep-alive", "ID", id, &ans);
    if (rc != DSIG_OK)
        return rc;
    /* The gateway streams keep-alive answers as {"result": {...}}; an expired lease has TTL 0 (absent). */
    json_t *r = json_object_get(ans, "result");
    int64_t ttl = 0;
    if (etcd_int(json_object_get(r ? r : ans, "TTL"), &ttl) != 0)
        rc = dsig_fail(DSIG_E_UNAVAILABLE, "%s (lease keep-alive): a malformed answer", e->what);
    else if (ttl <= 0)
        rc = dsig_fail(DSIG_E_STATE, "%s: lease %lld has expired", e->what, (long long)id);
    json_decref(ans);
    if (ttl_left)
        *ttl_left = ttl;
    return rc;
}

DSIG_LAYER_API int coord_etcd_lease_revoke(coord_etcd *e, int64_t id)
{
    if (!e || id == 0)
        return dsig_fail(DSIG_E_ARG, "etcd lease: no client or lease 0");
    int rc = lease_call(e, "/v3/lease/revoke", "lease revoke", "ID", id, NULL);
    if (rc == DSIG_E_ARG)
        rc = dsig_fail(DSIG_E_STATE, "%s: lease %lld has expired", e->what, (long long)id);
    return rc;
}
