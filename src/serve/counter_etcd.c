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
 * The requests go through the shared etcd client (coord/etcd.h: members, fail-over, bounded answers).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "coord/etcd.h"
#include "core/internal.h"
#include "serve/ranges.h"
#include "serve_internal.h"

#define ETCD_ANSWER_MAX (64 * 1024) /* an answer for one key is a few hundred bytes */
#define ETCD_PREFIX_MAX 256
#define ETCD_NAME_MAX SERVE_COUNTER_NAME_MAX

struct etcd_counter {
    coord_etcd *client;
    char *prefix;
};

/* base64(PREFIX + name), or NULL (out of memory). */
static char *etcd_key(const struct etcd_counter *e, const char *name)
{
    char k[ETCD_PREFIX_MAX + ETCD_NAME_MAX + 1];
    int n = snprintf(k, sizeof k, "%s%s", e->prefix, name);
    return coord_etcd_b64(k, (size_t)n);
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
    int len = jv ? (json_is_string(jv) ? coord_etcd_unb64(json_string_value(jv), buf, sizeof buf) : -1) : 0;
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
    dsig_xfree(key, 0);
    if (!req) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter: out of memory");
        return SERVE_COUNTER_UNAVAILABLE;
    }
    json_t *ans = NULL;
    coord_etcd_call(e->client, "/v3/kv/range", req, "read", &ans);
    json_decref(req);
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
    char *key = etcd_key(e, name), *eb = coord_etcd_b64(ev, (size_t)el), *db = coord_etcd_b64(dv, (size_t)dl);
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
    dsig_xfree(key, 0);
    dsig_xfree(eb, 0);
    dsig_xfree(db, 0);
    if (!req) {
        dsig_fail(DSIG_E_UNAVAILABLE, "etcd index counter: out of memory");
        return SERVE_COUNTER_UNAVAILABLE;
    }
    json_t *ans = NULL;
    coord_etcd_call(e->client, "/v3/kv/txn", req, "compare-and-swap", &ans);
    json_decref(req);
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
    coord_etcd_free(e->client);
    dsig_xfree(e->prefix, 0);
    dsig_xfree(e, sizeof *e);
}

static const struct serve_counter_ops etcd_ops = {
    .name = "etcd", .get = etcd_get, .cas = etcd_cas, .destroy = etcd_destroy};

int serve_counter_etcd_new(struct serve_counter **out, const struct serve_counter_etcd_config *cfg)
{
    if (!out || !cfg || !cfg->endpoints || cfg->n_endpoints == 0)
        return dsig_fail(DSIG_E_ARG, "etcd index counter: no endpoint");
    *out = NULL;
    const char *prefix = cfg->prefix ? cfg->prefix : "/dsig/";
    if (strlen(prefix) > ETCD_PREFIX_MAX)
        return dsig_fail(DSIG_E_ARG, "etcd index counter: prefix longer than %d bytes", ETCD_PREFIX_MAX);
    struct etcd_counter *e = dsig_calloc(1, sizeof *e);
    struct serve_counter *c = dsig_calloc(1, sizeof *c);
    if (!e || !c || !(e->prefix = dsig_strdup(prefix))) {
        etcd_destroy(e);
        dsig_xfree(c, 0);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    coord_etcd_config ec = {.endpoints = cfg->endpoints, .n_endpoints = cfg->n_endpoints,
                            .connect_timeout_ms = cfg->connect_timeout_ms, .timeout_ms = cfg->timeout_ms,
                            .what = "etcd index counter", .answer_max = ETCD_ANSWER_MAX};
    int rc = coord_etcd_new(&e->client, &ec);
    if (rc != DSIG_OK) {
        etcd_destroy(e);
        dsig_xfree(c, 0);
        return rc;
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
    const struct etcd_counter *e = c->ctx;
    return coord_etcd_requests(e->client);
}
