/*
 * src/serve/counter_etcd.c — the cluster index counter (ranges.h) on etcd's v3 JSON gateway (etcd 3.4:
 * POST /v3/kv/range and /v3/kv/txn; keys and values are standard padded base64 inside JSON, 64-bit
 * numbers are JSON strings). The value of PREFIX + NAME is the counter as decimal text.
 *
 * A compare-and-swap is one txn: compare VALUE == expected (for expected 0: CREATE revision == 0, the
 * key does not exist), on success put the new value, on failure read the key back (the observed
 * value, in the same answer: no second round trip). etcd applies a txn only once a majority has it in
 * its log, so an answer of "succeeded": true is the durable, linearizable swap the ranges layer needs.
 *
 * Anything that is not a well-formed answer is "unavailable", never guessed at: the ranges layer then
 * treats the range as burned. A cas retried on the next member after a timeout may find its own
 * earlier write (a conflict whose observed value is `desired`): that range is burned too, never used.
 *
 * libcurl easy handles are kept in a small pool so that connections (keep-alive) are reused between
 * requests; each request uses one handle from one thread (NOSIGNAL: no SIGALRM for timeouts).
 */
#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "serve/ranges.h"
#include "serve_internal.h"

#define ETCD_ANSWER_MAX (64 * 1024) /* an answer for one key is a few hundred bytes */
#define ETCD_PREFIX_MAX 256
#define ETCD_NAME_MAX SERVE_COUNTER_NAME_MAX
#define ETCD_POOL 8 /* idle handles kept */
#define ETCD_DETAIL 600

struct etcd_counter {
    char **endpoints;
    size_t n;
    char *prefix;
    long connect_ms, total_ms;
    _Atomic size_t preferred;        /* the member that answered last */
    _Atomic uint64_t requests;
    pthread_mutex_t lock;            /* the pool */
    CURL *pool[ETCD_POOL];
    size_t pooled;
};

/* ---- small helpers ------------------------------------------------------------------------------- */

/* Standard padded base64 of len bytes into a new string (NULL: out of memory). */
static char *b64_encode(const void *data, size_t len)
{
    char *out = dsig_malloc(4 * ((len + 2) / 3) + 1);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, data, (int)len);
    return out;
}

/* Decode standard padded base64 `in` into out[0..cap): the length, or -1 if it is not base64 or does
 * not fit. EVP_DecodeBlock counts padding as zero bytes: they are taken off here. */
static int b64_decode(const char *in, unsigned char *out, size_t cap)
{
    size_t n = strlen(in);
    if (n % 4 != 0 || n / 4 * 3 > cap)
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

/* base64(PREFIX + name), or NULL (out of memory). */
static char *etcd_key(const struct etcd_counter *e, const char *name)
{
    char k[ETCD_PREFIX_MAX + ETCD_NAME_MAX + 1];
    int n = snprintf(k, sizeof k, "%s%s", e->prefix, name);
    return b64_encode(k, (size_t)n);
}

/* ---- HTTP ------------------------------------------------------------------------------------------ */

struct answer {
    char *buf;
    size_t len;
    int too_big;
};

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
    struct answer *a = arg;
    size_t n = size * nmemb;
    if (n > ETCD_ANSWER_MAX - a->len) {
        a->too_big = 1;
        return 0; /* aborts the transfer (CURLE_WRITE_ERROR) */
    }
    memcpy(a->buf + a->len, p, n);
    a->len += n;
    return n;
}

static CURL *handle_take(struct etcd_counter *e)
{
    CURL *h = NULL;
    pthread_mutex_lock(&e->lock);
    if (e->pooled)
        h = e->pool[--e->pooled];
    pthread_mutex_unlock(&e->lock);
    return h ? h : curl_easy_init();
}

static void handle_give(struct etcd_counter *e, CURL *h)
{
    pthread_mutex_lock(&e->lock);
    if (e->pooled < ETCD_POOL) {
        e->pool[e->pooled++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&e->lock);
    if (h)
        curl_easy_cleanup(h);
}

/*
 * POST body to ENDPOINT + path on one member: the parsed JSON object of a 200 answer, or NULL with why
 * written to `why`.
 */
static json_t *post_one(struct etcd_counter *e, const char *endpoint, const char *path, const char *body,
                        char *why, size_t why_len)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s", endpoint, path);
    struct answer a = {.buf = dsig_malloc(ETCD_ANSWER_MAX + 1)};
    CURL *h = handle_take(e);
    if (!a.buf || !h) {
        snprintf(why, why_len, "out of memory");
        dsig_xfree(a.buf, 0);
        if (h)
            curl_easy_cleanup(h);
        return NULL;
    }
    curl_easy_reset(h);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    char err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, e->connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, e->total_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
    atomic_fetch_add_explicit(&e->requests, 1, memory_order_relaxed);
    CURLcode cc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdr);
    json_t *j = NULL;
    if (a.too_big) {
        snprintf(why, why_len, "%s: answer larger than %d bytes", endpoint, ETCD_ANSWER_MAX);
    } else if (cc != CURLE_OK) {
        snprintf(why, why_len, "%s: %s", endpoint, err[0] ? err : curl_easy_strerror(cc));
    } else if (status != 200) {
        /* etcd's gateway answers gRPC errors as {"error": ..., "message": ..., "code": N}. */
        a.buf[a.len] = '\0';
        json_t *ej = json_loadb(a.buf, a.len, 0, NULL);
        const char *msg = ej ? json_string_value(json_object_get(ej, "message")) : NULL;
        snprintf(why, why_len, "%s: HTTP %ld%s%.200s", endpoint, status, msg ? ": " : "", msg ? msg : "");
        json_decref(ej);
    } else {
        json_error_t je;
        j = json_loadb(a.buf, a.len, JSON_REJECT_DUPLICATES, &je);
        if (!j || !json_is_object(j) || !json_is_object(json_object_get(j, "header"))) {
            snprintf(why, why_len, "%s%s: the answer is not an etcd v3 answer (%s)", endpoint, path,
                     j ? "no header" : je.text);
            json_decref(j);
            j = NULL;
        }
    }
    dsig_xfree(a.buf, 0);
    if (cc == CURLE_OK)
        handle_give(e, h); /* its connection stays open for the next request */
    else
        curl_easy_cleanup(h);
    return j;
}

/*
 * POST to the members in turn, starting with the one that answered last: the first well-formed answer,
 * or NULL with a DSIG_E_UNAVAILABLE detail naming every member's failure.
 */
static json_t *post(struct etcd_counter *e, const char *path, const char *body, const char *what)
{
    char detail[ETCD_DETAIL] = "";
    size_t used = 0;
    size_t first = atomic_load_explicit(&e->preferred, memory_order_relaxed) % e->n;
    for (size_t t = 0; t < e->n; t++) {
        size_t i = (first + t) % e->n;
        char why[300];
        json_t *j = post_one(e, e->endpoints[i], path, body, why, sizeof why);
        if (j) {
            if (i != first)
                atomic_store_explicit(&e->preferred, i, memory_order_relaxed);
            return j;
        }
        if (used < sizeof detail - 1) {
            int w = snprintf(detail + used, sizeof detail - used, "%s%s", used ? "; " : "", why);
            used = w < 0 ? used : used + (size_t)w;
            if (used > sizeof detail - 1)
                used = sizeof detail - 1;
        }
    }
    dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter (%s): no member of %zu answered: %s", what, e->n, detail);
    return NULL;
}

/* The counter value in a range answer's object r ({"kvs": [...]}; no kvs: absent = 0). */
static int range_value(json_t *r, const char *name, uint64_t *value)
{
    json_t *kvs = json_object_get(r, "kvs");
    *value = 0;
    if (!kvs)
        return SERVE_COUNTER_OK;
    json_t *kv = json_array_get(kvs, 0);
    if (!json_is_array(kvs) || json_array_size(kvs) != 1 || !json_is_object(kv)) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter '%s': the range answer does not hold one key", name);
        return SERVE_COUNTER_UNAVAILABLE;
    }
    json_t *jv = json_object_get(kv, "value");
    unsigned char buf[40];
    int len = jv ? (json_is_string(jv) ? b64_decode(json_string_value(jv), buf, sizeof buf) : -1) : 0;
    if (len <= 0 || !serve_counter_parse((const char *)buf, (size_t)len, value)) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter '%s' is damaged (not one decimal number): "
                                      "refusing to guess it", name);
        return SERVE_COUNTER_UNAVAILABLE;
    }
    return SERVE_COUNTER_OK;
}

/* ---- the counter operations ---------------------------------------------------------------------- */

static int etcd_get(void *ctx, const char *name, uint64_t *value)
{
    struct etcd_counter *e = ctx;
    if (!serve_counter_name_ok(name)) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter: bad name");
        return SERVE_COUNTER_UNAVAILABLE;
    }
    char *key = etcd_key(e, name);
    json_t *req = key ? json_pack("{s:s}", "key", key) : NULL;
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    dsig_xfree(key, 0);
    if (!body) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter: out of memory");
        return SERVE_COUNTER_UNAVAILABLE;
    }
    json_t *ans = post(e, "/v3/kv/range", body, "read");
    serve_json_free(body);
    if (!ans)
        return SERVE_COUNTER_UNAVAILABLE;
    int st = range_value(ans, name, value);
    json_decref(ans);
    return st;
}

static int etcd_cas(void *ctx, const char *name, uint64_t expected, uint64_t desired, uint64_t *observed)
{
    struct etcd_counter *e = ctx;
    if (!serve_counter_name_ok(name)) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter: bad name");
        return SERVE_COUNTER_UNAVAILABLE;
    }
    char ev[24], dv[24];
    int el = snprintf(ev, sizeof ev, "%llu", (unsigned long long)expected);
    int dl = snprintf(dv, sizeof dv, "%llu", (unsigned long long)desired);
    char *key = etcd_key(e, name), *eb = b64_encode(ev, (size_t)el), *db = b64_encode(dv, (size_t)dl);
    json_t *cmp = NULL;
    if (key && eb)
        cmp = expected == 0 ? json_pack("{s:s,s:s,s:s,s:s}", "key", key, "target", "CREATE", "result", "EQUAL",
                                        "create_revision", "0")
                            : json_pack("{s:s,s:s,s:s,s:s}", "key", key, "target", "VALUE", "result", "EQUAL",
                                        "value", eb);
    json_t *req = cmp && db ? json_pack("{s:[o],s:[{s:{s:s,s:s}}],s:[{s:{s:s}}]}", "compare", cmp, "success",
                                        "request_put", "key", key, "value", db, "failure", "request_range",
                                        "key", key)
                            : (json_decref(cmp), NULL);
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    dsig_xfree(key, 0);
    dsig_xfree(eb, 0);
    dsig_xfree(db, 0);
    if (!body) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter: out of memory");
        return SERVE_COUNTER_UNAVAILABLE;
    }
    json_t *ans = post(e, "/v3/kv/txn", body, "compare-and-swap");
    serve_json_free(body);
    if (!ans)
        return SERVE_COUNTER_UNAVAILABLE;
    int st;
    /* The gateway leaves out fields that hold their default: "succeeded" is absent when false. */
    json_t *ok = json_object_get(ans, "succeeded");
    if (json_is_true(ok)) {
        st = SERVE_COUNTER_OK;
    } else if (ok && !json_is_false(ok)) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter '%s': txn answer with a non-boolean \"succeeded\"",
                  name);
        st = SERVE_COUNTER_UNAVAILABLE;
    } else {
        /* The failure branch read the key: responses[0].response_range. */
        json_t *rr = json_object_get(json_array_get(json_object_get(ans, "responses"), 0), "response_range");
        if (!json_is_object(rr)) {
            dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter '%s': failed txn without the key read back", name);
            st = SERVE_COUNTER_UNAVAILABLE;
        } else {
            st = range_value(rr, name, observed);
            if (st == SERVE_COUNTER_OK) {
                st = SERVE_COUNTER_CONFLICT;
                if (*observed == expected) {
                    /* The compare failed on a counter holding `expected`: only a key holding "0" does
                     * that (expected 0 compares the create revision). Nothing here writes 0. */
                    dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter '%s' holds 0 explicitly: refusing it",
                              name);
                    st = SERVE_COUNTER_UNAVAILABLE;
                }
            }
        }
    }
    json_decref(ans);
    return st;
}

static void etcd_destroy(void *ctx)
{
    struct etcd_counter *e = ctx;
    if (!e)
        return;
    for (size_t i = 0; i < e->pooled; i++)
        curl_easy_cleanup(e->pool[i]);
    for (size_t i = 0; e->endpoints && i < e->n; i++)
        dsig_xfree(e->endpoints[i], 0);
    dsig_xfree(e->endpoints, 0);
    dsig_xfree(e->prefix, 0);
    pthread_mutex_destroy(&e->lock);
    dsig_xfree(e, sizeof *e);
}

static const struct serve_counter_ops etcd_ops = {
    .name = "etcd", .get = etcd_get, .cas = etcd_cas, .destroy = etcd_destroy};

/* curl_global_init is not safe to race with itself: once per process, never cleaned up (other
 * counters or other code of the process may still use libcurl). */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int serve_counter_etcd_new(struct serve_counter **out, const struct serve_counter_etcd_config *cfg)
{
    if (!out || !cfg || !cfg->endpoints || cfg->n_endpoints == 0)
        return dsig_fail(DSIG_E_ARG, "etcd index counter: no endpoint");
    *out = NULL;
    const char *prefix = cfg->prefix ? cfg->prefix : "/dsig/";
    if (strlen(prefix) > ETCD_PREFIX_MAX)
        return dsig_fail(DSIG_E_ARG, "etcd index counter: prefix longer than %d bytes", ETCD_PREFIX_MAX);
    for (size_t i = 0; i < cfg->n_endpoints; i++) {
        const char *u = cfg->endpoints[i];
        if (!u || (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) || strlen(u) > 400 ||
            u[strlen(u) - 1] == '/')
            return dsig_fail(DSIG_E_ARG, "etcd index counter: endpoint '%.100s' is not http(s)://HOST:PORT "
                                         "(no path, no trailing slash)", u ? u : "(null)");
    }
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter: libcurl: %s", curl_easy_strerror(curl_init_rc));
    struct etcd_counter *e = dsig_calloc(1, sizeof *e);
    struct serve_counter *c = dsig_calloc(1, sizeof *c);
    if (!e || !c) {
        dsig_xfree(e, 0);
        dsig_xfree(c, 0);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&e->lock, NULL);
    e->connect_ms = cfg->connect_timeout_ms ? (long)cfg->connect_timeout_ms : 1000;
    e->total_ms = cfg->timeout_ms ? (long)cfg->timeout_ms : 3000;
    e->endpoints = dsig_calloc(cfg->n_endpoints, sizeof *e->endpoints);
    e->prefix = dsig_strdup(prefix);
    int bad = !e->endpoints || !e->prefix;
    for (size_t i = 0; !bad && i < cfg->n_endpoints; i++, e->n++)
        bad = !(e->endpoints[i] = dsig_strdup(cfg->endpoints[i]));
    if (bad) {
        etcd_destroy(e);
        dsig_xfree(c, 0);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    c->ops = &etcd_ops;
    c->ctx = e;
    *out = c;
    return DSIG_OK;
}

uint64_t serve_counter_etcd_requests(const struct serve_counter *c)
{
    if (!c || c->ops != &etcd_ops)
        return 0;
    struct etcd_counter *e = c->ctx;
    return atomic_load_explicit(&e->requests, memory_order_relaxed);
}
