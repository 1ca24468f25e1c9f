/*
 * src/coord/etcd_watch.c — coord_etcd_watch: one POST /v3/watch whose answer is a stream of JSON
 * messages, one per line ({"result": {"header": ..., "created": true}}, then {"result": {"events":
 * [...]}} as changes happen), read until the time limit ends the transfer.
 *
 * The stream is bounded: a line longer than the answer cap, a message that is not JSON, an
 * event without a well-formed key, or an error message ends the watch as DSIG_E_UNAVAILABLE with *from
 * unchanged past the last event delivered, so the caller's next watch neither skips nor repeats one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord/etcd_internal.h"
#include "core/internal.h"
#include "core/layer_api.h"

enum watch_end { W_RUNNING = 0, W_STOPPED, W_COMPACTED, W_BROKEN };

struct watch {
    coord_etcd *e;
    coord_etcd_watch_fn fn;
    void *arg;
    int64_t *from;
    char *line;      /* the message being received */
    size_t len;
    int created;     /* the watch was accepted by this member */
    enum watch_end end;
    char why[200];
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* One message of the stream; 0 to go on, -1 to end the transfer (w->end says why). */
static int on_message(struct watch *w, const char *text, size_t len)
{
    json_error_t je;
    json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    json_t *r = json_object_get(m, "result");
    if (!json_is_object(r)) {
        snprintf(w->why, sizeof w->why, "%s", m ? etcd_error_message(json_object_get(m, "error"))
                                                 : "a watch message that is not JSON");
        if (!w->why[0])
            snprintf(w->why, sizeof w->why, "a watch message without a result");
        json_decref(m);
        w->end = W_BROKEN;
        return -1;
    }
    int64_t compact = 0;
    if (etcd_int(json_object_get(r, "compact_revision"), &compact) != 0 || compact > 0) {
        json_decref(m);
        w->end = W_COMPACTED;
        return -1;
    }
    if (json_is_true(json_object_get(r, "canceled"))) {
        snprintf(w->why, sizeof w->why, "the watch was cancelled: %.150s",
                 json_string_value(json_object_get(r, "cancel_reason")) ? json_string_value(
                     json_object_get(r, "cancel_reason")) : "no reason given");
        json_decref(m);
        w->end = W_BROKEN;
        return -1;
    }
    if (json_is_true(json_object_get(r, "created")))
        w->created = 1;
    json_t *events = json_object_get(r, "events");
    for (size_t i = 0; i < json_array_size(events); i++) {
        json_t *ev = json_array_get(events, i);
        const char *type = json_string_value(json_object_get(ev, "type"));
        coord_etcd_event e = {.deleted = type && strcmp(type, "DELETE") == 0};
        if ((type && !e.deleted && strcmp(type, "PUT") != 0) ||
            etcd_kv_parse(json_object_get(ev, "kv"), &e.kv) != 0) {
            snprintf(w->why, sizeof w->why, "a malformed watch event");
            json_decref(m);
            w->end = W_BROKEN;
            return -1;
        }
        if (e.kv.mod_revision < *w->from) {
            etcd_kv_clear(&e.kv); /* already delivered (a member's stream may repeat history) */
            continue;
        }
        int stop = w->fn(w->arg, &e);
        *w->from = e.kv.mod_revision + 1;
        etcd_kv_clear(&e.kv);
        if (stop) {
            json_decref(m);
            w->end = W_STOPPED;
            return -1;
        }
    }
    json_decref(m);
    return 0;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
    struct watch *w = arg;
    size_t n = size * nmemb;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            if (w->len && on_message(w, w->line, w->len) != 0)
                return 0;
            w->len = 0;
            continue;
        }
        if (w->len == etcd_answer_max(w->e)) {
            snprintf(w->why, sizeof w->why, "a watch message longer than %zu bytes", etcd_answer_max(w->e));
            w->end = W_BROKEN;
            return 0;
        }
        w->line[w->len++] = p[i];
    }
    return n;
}

DSIG_LAYER_API int coord_etcd_watch(coord_etcd *e, const char *prefix, int64_t *from, uint32_t max_ms,
                                    coord_etcd_watch_fn fn, void *arg)
{
    if (!e || !from || !fn || *from < 1 || max_ms == 0)
        return dsig_fail(DSIG_E_ARG, "etcd watch: no client, callback, start revision or time");
    json_t *cr = json_object();
    char sr[24];
    snprintf(sr, sizeof sr, "%lld", (long long)*from);
    int rc = cr ? etcd_key_fields(e, cr, prefix, 1) : dsig_fail(DSIG_E_NOMEM, "out of memory");
    json_t *req = rc == DSIG_OK && json_object_set_new(cr, "start_revision", json_string(sr)) == 0
                      ? json_pack("{s:o}", "create_request", cr)
                      : (json_decref(cr), NULL);
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    struct watch w = {.e = e, .fn = fn, .arg = arg, .from = from, .line = dsig_malloc(etcd_answer_max(e))};
    if (rc != DSIG_OK || !body || !w.line) {
        json_free_t jf;
        json_get_alloc_funcs(&(json_malloc_t){0}, &jf); /* the application's own (the dsig tool's) */
        if (body)
            jf(body);
        dsig_xfree(w.line, 0);
        return rc != DSIG_OK ? rc : dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    uint64_t deadline = now_ms() + max_ms;
    char detail[600] = "";
    size_t used = 0, first = etcd_first_member(e);
    rc = DSIG_E_UNAVAILABLE;
    for (size_t t = 0; t < coord_etcd_members(e) && w.end == W_RUNNING; t++) {
        uint64_t now = now_ms();
        if (now >= deadline) {
            rc = DSIG_OK;
            break;
        }
        size_t i = (first + t) % coord_etcd_members(e);
        char url[512], err[CURL_ERROR_SIZE] = "", why[300];
        snprintf(url, sizeof url, "%s/v3/watch", etcd_member(e, i));
        CURL *h = etcd_handle_take(e);
        if (!h) {
            etcd_detail_add(detail, sizeof detail, &used, "out of memory");
            break;
        }
        struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
        etcd_handle_setup(e, h, url, body, hdr, (long)(deadline - now), err);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &w);
        w.created = 0;
        w.len = 0;
        CURLcode cc = curl_easy_perform(h);
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(hdr);
        etcd_handle_give(e, h, 0); /* a watch ends mid-stream: never reuse its connection */
        if (w.end != W_RUNNING)
            break;
        if (cc == CURLE_OPERATION_TIMEDOUT && w.created) {
            etcd_prefer_member(e, i);
            rc = DSIG_OK; /* the time is up: the normal end */
            break;
        }
        if (cc == CURLE_OK && status != 200)
            snprintf(why, sizeof why, "%s: HTTP %ld", etcd_member(e, i), status);
        else
            snprintf(why, sizeof why, "%s: %s", etcd_member(e, i),
                     cc == CURLE_OK ? "the stream ended" : err[0] ? err : curl_easy_strerror(cc));
        etcd_detail_add(detail, sizeof detail, &used, why);
        if (w.created)
            break; /* the stream broke after the watch began: the caller watches again from *from */
    }
    json_free_t jf;
    json_get_alloc_funcs(&(json_malloc_t){0}, &jf); /* the application's own (the dsig tool's) */
    jf(body);
    dsig_xfree(w.line, 0);
    switch (w.end) {
    case W_STOPPED:
        return DSIG_OK;
    case W_COMPACTED:
        return dsig_fail(DSIG_E_STALE, "%s (watch): revision %lld has been compacted: read again",
                         etcd_what(e), (long long)*from);
    case W_BROKEN:
        return dsig_fail(DSIG_E_UNAVAILABLE, "%s (watch): %s", etcd_what(e), w.why);
    case W_RUNNING:
        break;
    }
    if (rc == DSIG_OK)
        return DSIG_OK;
    return dsig_fail(DSIG_E_UNAVAILABLE, "%s (watch): no member of %zu kept the watch: %s", etcd_what(e),
                     coord_etcd_members(e), detail);
}
