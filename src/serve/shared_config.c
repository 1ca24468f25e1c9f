/*
 * src/serve/shared_config.c — the shared configuration of `dsig serve` instances (docs/scale.md "Shared
 * configuration"), with "coordinator": {"shared_config": true}:
 *
 *   PREFIX config/published       present once the tenants are published: from then on etcd's tenants
 *                                 replace the file's (the first instance publishes the file's, in one txn
 *                                 that only succeeds while this key is absent)
 *   PREFIX config/tenants/<name>  one tenant, the object of the file's "tenants" entries
 *   PREFIX config/keys/<id>       {"retired": [N, ...]}: versions every instance retires
 *   PREFIX checkpoints/<instance> this instance's latest transparency-log checkpoint (put here)
 *
 * One thread reads PREFIX config/ (one linearizable read: every entry at one revision), applies it
 * through the reload path (serve_reload_locked: the file again with its "tenants" replaced), then
 * watches the prefix from the next revision in windows of a second; the first event ends the window
 * and everything is read again (one code path for the first read, a change and a compaction). A window
 * without events ends with a linearizable read of one key: the proof that this instance is current,
 * which coordinator.max_stale_s bounds (a member cut off from the quorum keeps a watch open but sends
 * nothing; its linearizable reads fail).
 *
 * Fail-safe: etcd unreachable keeps the configuration applied last; an entry that does not parse or
 * check is refused with a log line and its previous value kept (a new entry that is malformed is left
 * out); an update that does not check as a whole (a token hash in two tenants) is refused and the
 * previous configuration stays. Nothing here falls back to more access than the last applied state.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/etcd.h"
#include "core/internal.h"
#include "front.h"

#define WATCH_MS 1000u        /* one watch window: also how long a stop may wait */
#define BACKOFF_MIN_MS 200u
#define BACKOFF_MAX_MS 5000u
#define TXN_OPS_MAX 128u      /* etcd's default --max-txn-ops: the bootstrap publication fits in one txn */
#define RETIRE_ATTEMPTS 5u    /* compare-and-swap attempts to add a retired version */

struct serve_shared {
    struct dsig_server *s;
    coord_etcd *etcd;
    char *cfg_prefix;          /* PREFIX config/ */
    char *ten_prefix;          /* PREFIX config/tenants/ */
    char *keys_prefix;         /* PREFIX config/keys/ */
    char *published_key;       /* PREFIX config/published */
    char *ckpt_key;            /* PREFIX checkpoints/<instance> */
    char *instance;
    unsigned max_stale_s;
    pthread_mutex_t mu;        /* guards stop (and the backoff wait) */
    pthread_cond_t cv;
    int stop;
    pthread_t th;
    int started;
    /* the watcher thread's own */
    json_t *applied;           /* name -> tenant object applied last (NULL: the file's tenants apply) */
    json_t *refused;           /* etcd key -> mod revision refused (each refusal logged once) */
    int bootstrapped;          /* the publication txn was answered */
    int said_unpublished;
    int said_down;
    uint64_t ckpt_size;        /* tree size of the checkpoint put last */
    int ckpt_put;
    _Atomic int connected, published;
    _Atomic int64_t revision;
    _Atomic uint64_t last_ok_ns; /* the last successful linearizable read; 0: never */
    _Atomic uint64_t n_applied, n_refused, n_ckpts;
};

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = dsig_malloc(la + lb + 1);
    if (p) {
        memcpy(p, a, la);
        memcpy(p + la, b, lb + 1);
    }
    return p;
}

static void logf_(struct serve_shared *sh, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(struct serve_shared *sh, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    serve_log(&sh->s->log, level, NULL, "shared configuration: %s", buf);
}

static int stopping(struct serve_shared *sh)
{
    pthread_mutex_lock(&sh->mu);
    int st = sh->stop;
    pthread_mutex_unlock(&sh->mu);
    return st;
}

/* Sleep ms unless stopped meanwhile. */
static void pause_ms(struct serve_shared *sh, unsigned ms)
{
    struct timespec ts = serve_abstime_ms(ms);
    pthread_mutex_lock(&sh->mu);
    while (!sh->stop && pthread_cond_timedwait(&sh->cv, &sh->mu, &ts) == 0)
        ;
    pthread_mutex_unlock(&sh->mu);
}

static void went_down(struct serve_shared *sh, const char *what)
{
    atomic_store(&sh->connected, 0);
    if (!sh->said_down) { /* once per outage: the watcher retries every few seconds */
        logf_(sh, DSIG_SERVE_LOG_WARN, "%s: %s; keeping the configuration applied last (etcd revision %" PRId64 ")",
              what, dsig_last_error_detail(), atomic_load(&sh->revision));
        sh->said_down = 1;
    }
}

static void came_up(struct serve_shared *sh)
{
    atomic_store(&sh->connected, 1);
    atomic_store(&sh->last_ok_ns, serve_now_ns());
    if (sh->said_down)
        logf_(sh, DSIG_SERVE_LOG_INFO, "etcd answers again");
    sh->said_down = 0;
}

/* A request_put operation of a txn (NULL: out of memory). */
static json_t *txn_put(const char *key, const char *value, size_t len)
{
    char *k = coord_etcd_b64(key, strlen(key)), *v = coord_etcd_b64(value, len);
    json_t *op = k && v ? json_pack("{s:{s:s,s:s}}", "request_put", "key", k, "value", v) : NULL;
    dsig_xfree(k, 0);
    dsig_xfree(v, 0);
    return op;
}

/* A txn: `compare` (a compare object, taken) then the puts in `ops` (taken); 1 if it succeeded, 0 if
 * the compare failed, -1 (error set) if etcd did not answer. */
static int txn(struct serve_shared *sh, json_t *compare, json_t *ops, const char *what)
{
    json_t *body = compare && ops ? json_pack("{s:[o],s:o}", "compare", compare, "success", ops) : NULL;
    if (!body) {
        json_decref(compare);
        json_decref(ops);
        dsig_fail(DSIG_E_NOMEM, "out of memory");
        return -1;
    }
    json_t *ans = NULL;
    int rc = coord_etcd_call(sh->etcd, "/v3/kv/txn", body, what, &ans);
    json_decref(body);
    if (rc != DSIG_OK)
        return -1;
    int ok = json_is_true(json_object_get(ans, "succeeded")); /* the gateway leaves a false one out */
    json_decref(ans);
    return ok;
}

/* A compare: the key does not exist (create_revision 0), or its mod revision is `rev`. */
static json_t *cmp_rev(const char *key, const char *target, int64_t rev)
{
    char *k = coord_etcd_b64(key, strlen(key));
    char r[24];
    snprintf(r, sizeof r, "%" PRId64, rev);
    json_t *c = k ? json_pack("{s:s,s:s,s:s,s:s}", "key", k, "target", target, "result", "EQUAL",
                              strcmp(target, "CREATE") == 0 ? "create_revision" : "mod_revision", r)
                  : NULL;
    dsig_xfree(k, 0);
    return c;
}

/* Publish the file's tenants and the marker in one txn that only succeeds while nothing is published. */
static void bootstrap(struct serve_shared *sh)
{
    struct serve_runtime *rt = serve_current(sh->s);
    json_t *tenants = serve_config_tenants_json(rt->cfg);
    serve_runtime_unref(rt);
    if (!tenants) {
        logf_(sh, DSIG_SERVE_LOG_ERROR, "cannot publish the file's tenants: %s", dsig_last_error_detail());
        sh->bootstrapped = 1;
        return;
    }
    if (json_array_size(tenants) + 1 > TXN_OPS_MAX) {
        logf_(sh, DSIG_SERVE_LOG_ERROR, "%zu tenants do not fit in one etcd transaction (%u operations): put them "
              "under %s, then %s, with etcdctl", json_array_size(tenants), TXN_OPS_MAX, sh->ten_prefix,
              sh->published_key);
        json_decref(tenants);
        sh->bootstrapped = 1;
        return;
    }
    json_t *ops = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(tenants, i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        char *key = name ? join(sh->ten_prefix, name) : NULL;
        char *text = json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS);
        if (!ops || !key || !text || json_array_append_new(ops, txn_put(key, text, strlen(text))) != 0) {
            json_decref(ops);
            ops = NULL;
        }
        dsig_xfree(key, 0);
        serve_json_free(text);
    }
    char stamp[SERVE_STAMP_LEN];
    serve_utc_stamp(stamp);
    json_t *marker = json_pack("{s:s,s:s}", "by", sh->instance, "time", stamp);
    char *mt = marker ? json_dumps(marker, JSON_COMPACT) : NULL;
    json_decref(marker);
    if (ops && (!mt || json_array_append_new(ops, txn_put(sh->published_key, mt, strlen(mt))) != 0)) {
        json_decref(ops);
        ops = NULL;
    }
    serve_json_free(mt);
    int won = txn(sh, cmp_rev(sh->published_key, "CREATE", 0), ops, "shared configuration publication");
    if (won >= 0)
        sh->bootstrapped = 1;
    if (won == 1)
        logf_(sh, DSIG_SERVE_LOG_INFO, "published the file's %zu tenants under %s", json_array_size(tenants),
              sh->ten_prefix);
    json_decref(tenants);
}

/* Log and count a refused entry once per mod revision. */
static void refuse(struct serve_shared *sh, const coord_etcd_kv *kv, const char *why, int kept)
{
    json_t *seen = json_object_get(sh->refused, kv->key);
    if (seen && json_integer_value(seen) == kv->mod_revision)
        return;
    json_object_set_new(sh->refused, kv->key, json_integer(kv->mod_revision));
    atomic_fetch_add(&sh->n_refused, 1);
    logf_(sh, DSIG_SERVE_LOG_ERROR, "refused %s (mod revision %" PRId64 "): %s; %s", kv->key, kv->mod_revision, why,
          kept ? "keeping its previous value" : "left out");
}

/* One tenant entry into `next` (or its previous value, when it is refused). */
static void take_tenant(struct serve_shared *sh, const coord_etcd_kv *kv, json_t *next)
{
    const char *name = kv->key + strlen(sh->ten_prefix);
    size_t nl = kv->key_len - strlen(sh->ten_prefix);
    char why[600] = "";
    json_t *o = NULL;
    if (strlen(name) != nl || !serve_valid_name(name, nl)) {
        snprintf(why, sizeof why, "the key's last part is not a tenant name [A-Za-z0-9._-]{1,64}");
    } else {
        json_error_t jerr;
        o = json_loadb(kv->value, kv->value_len, JSON_REJECT_DUPLICATES, &jerr);
        const char *in = json_string_value(json_object_get(o, "name"));
        if (!o)
            snprintf(why, sizeof why, "not JSON: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
        else if (!json_is_object(o))
            snprintf(why, sizeof why, "not a JSON object");
        else if (!in || strcmp(in, name) != 0)
            snprintf(why, sizeof why, "its \"name\" is not \"%s\", the key's last part", name);
        else if (serve_tenant_check(o) != DSIG_OK)
            snprintf(why, sizeof why, "%s", dsig_last_error_detail());
    }
    if (!why[0]) {
        json_object_set_new(next, name, o);
        json_object_del(sh->refused, kv->key);
        return;
    }
    json_decref(o);
    json_t *prev = sh->applied && serve_valid_name(name, nl) ? json_object_get(sh->applied, name) : NULL;
    if (prev)
        json_object_set(next, name, prev);
    refuse(sh, kv, why, prev != NULL);
}

/* Retire, on this instance, the versions one PREFIX config/keys/<id> entry lists. */
static void take_retired(struct serve_shared *sh, const coord_etcd_kv *kv)
{
    const char *id = kv->key + strlen(sh->keys_prefix);
    size_t il = kv->key_len - strlen(sh->keys_prefix);
    json_t *o = NULL, *a = NULL;
    const char *why = NULL;
    if (strlen(id) != il || !serve_valid_name(id, il))
        why = "the key's last part is not a key id [A-Za-z0-9._-]{1,64}";
    else if (!(o = json_loadb(kv->value, kv->value_len, JSON_REJECT_DUPLICATES, NULL)) || !json_is_object(o) ||
             json_object_size(o) != 1 || !json_is_array(a = json_object_get(o, "retired")))
        why = "not {\"retired\": [version, ...]}";
    for (size_t i = 0; !why && i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 999999999)
            why = "a version that is not an integer 1..999999999";
    }
    if (why) {
        refuse(sh, kv, why, 0);
        json_decref(o);
        return;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        unsigned v = (unsigned)json_integer_value(json_array_get(a, i));
        struct serve_runtime *rt = serve_current(sh->s);
        struct serve_key *k = serve_keyset_find_version(rt->ks, id, v);
        int todo = k && !atomic_load(&k->retired);
        serve_runtime_unref(rt);
        if (!todo) /* retired already, or a version this instance does not have */
            continue;
        char vs[16], msg[256] = "";
        unsigned code = 500;
        struct serve_key *used = NULL;
        snprintf(vs, sizeof vs, "%u", v);
        json_t *doc = serve_key_retire(sh->s, id, vs, &code, msg, sizeof msg, &used);
        serve_key_unref(used);
        if (doc)
            logf_(sh, DSIG_SERVE_LOG_INFO, "key %s: version %u retired (%s)", id, v, kv->key);
        else
            refuse(sh, kv, msg, 0);
        json_decref(doc);
    }
    json_decref(o);
}

/* Read PREFIX config/ and apply it. DSIG_OK (also when an update is refused: that is logged) or
 * DSIG_E_UNAVAILABLE. *rev: the revision read. */
static int sync_all(struct serve_shared *sh, int64_t *rev)
{
    if (!sh->bootstrapped)
        bootstrap(sh);
    coord_etcd_kvs kvs = {0};
    int rc = coord_etcd_get(sh->etcd, sh->cfg_prefix, 1, &kvs);
    if (rc != DSIG_OK)
        return rc;
    came_up(sh);
    *rev = kvs.revision;
    json_t *next = json_object();
    int published = 0;
    size_t tl = strlen(sh->ten_prefix), kl = strlen(sh->keys_prefix);
    for (size_t i = 0; next && i < kvs.n; i++) {
        const coord_etcd_kv *kv = &kvs.kvs[i];
        if (strcmp(kv->key, sh->published_key) == 0)
            published = 1;
        else if (kv->key_len > tl && strncmp(kv->key, sh->ten_prefix, tl) == 0)
            take_tenant(sh, kv, next);
    }
    atomic_store(&sh->published, published || sh->applied);
    if (!next) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    } else if (!published && !sh->applied) {
        if (!sh->said_unpublished)
            logf_(sh, DSIG_SERVE_LOG_WARN, "nothing published at %s: the file's tenants apply", sh->published_key);
        sh->said_unpublished = 1;
    } else if (!published) {
        /* The marker was deleted: keep what was applied (going back to the file could re-admit revoked
         * tokens); a restart publishes the file's tenants again. */
    } else if (!sh->applied || !json_equal(next, sh->applied)) {
        json_t *arr = json_array();
        const char *name;
        json_t *t;
        json_object_foreach(next, name, t) /* sorted by name: the object keeps insertion order, kvs is sorted */
            if (arr && json_array_append(arr, t) != 0) {
                json_decref(arr);
                arr = NULL;
            }
        char cause[96], refused[96];
        snprintf(cause, sizeof cause, "shared configuration applied (etcd revision %" PRId64 ")", kvs.revision);
        snprintf(refused, sizeof refused, "shared configuration of etcd revision %" PRId64, kvs.revision);
        pthread_mutex_lock(&sh->s->reload_mu);
        int arc = arr ? serve_reload_locked(sh->s, arr, cause, refused, NULL)
                      : dsig_fail(DSIG_E_NOMEM, "out of memory");
        pthread_mutex_unlock(&sh->s->reload_mu);
        json_decref(arr);
        if (arc == DSIG_OK) {
            json_decref(sh->applied);
            sh->applied = json_incref(next);
            atomic_store(&sh->revision, kvs.revision);
            atomic_fetch_add(&sh->n_applied, 1);
        } else {
            atomic_fetch_add(&sh->n_refused, 1); /* serve_reload_locked logged why */
        }
    } else {
        atomic_store(&sh->revision, kvs.revision); /* the same tenants at a later revision */
    }
    for (size_t i = 0; i < kvs.n; i++) /* after the tenants: a retirement needs no tenant change */
        if (kvs.kvs[i].key_len > kl && strncmp(kvs.kvs[i].key, sh->keys_prefix, kl) == 0)
            take_retired(sh, &kvs.kvs[i]);
    json_decref(next);
    coord_etcd_kvs_free(&kvs);
    return rc == DSIG_E_NOMEM ? DSIG_OK : rc; /* out of memory: the next change tries again */
}

/* Put this instance's latest checkpoint when the tree grew since the last one put (plainly: no lease). */
static void put_checkpoint(struct serve_shared *sh)
{
    struct serve_ckpt *c = sh->s->ckpt;
    char *note = NULL;
    size_t len = 0;
    uint64_t size = 0;
    uint8_t root[32];
    if (!c || serve_ckpt_latest(c, &note, &len, &size, root) != DSIG_OK)
        return;
    if (sh->ckpt_put && size == sh->ckpt_size) {
        dsig_free(note);
        return;
    }
    char stamp[SERVE_STAMP_LEN];
    serve_utc_stamp(stamp);
    json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:s%,s:s}", "instance", sh->instance, "origin", serve_ckpt_origin(c),
                          "vkey", serve_ckpt_vkey(c), "size", (json_int_t)size, "checkpoint", note, len, "time",
                          stamp);
    dsig_free(note);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return;
    if (coord_etcd_put(sh->etcd, sh->ckpt_key, text, strlen(text), 0, NULL) == DSIG_OK) {
        sh->ckpt_put = 1;
        sh->ckpt_size = size;
        atomic_fetch_add(&sh->n_ckpts, 1);
    } else {
        went_down(sh, "checkpoint not published");
    }
    serve_json_free(text);
}

/* The first event of a window ends it: everything is read again. */
static int on_event(void *arg, const coord_etcd_event *ev)
{
    (void)ev;
    *(int *)arg = 1;
    return 1;
}

static void *watcher(void *arg)
{
    struct serve_shared *sh = arg;
    int need_read = 1;
    int64_t from = 0;
    unsigned backoff = 0;
    while (!stopping(sh)) {
        put_checkpoint(sh);
        int rc = DSIG_OK;
        int64_t rev = 0;
        if (need_read && (rc = sync_all(sh, &rev)) == DSIG_OK) {
            from = rev + 1;
            need_read = 0;
        }
        int changed = 0;
        if (rc == DSIG_OK)
            rc = coord_etcd_watch(sh->etcd, sh->cfg_prefix, &from, WATCH_MS, on_event, &changed);
        if (rc == DSIG_E_STALE) { /* compacted past what was read: read again */
            need_read = 1;
            continue;
        }
        if (rc == DSIG_OK && changed) {
            need_read = 1;
            backoff = 0;
            continue;
        }
        if (rc == DSIG_OK) { /* a quiet window: prove this member is in the quorum */
            coord_etcd_kvs one = {0};
            rc = coord_etcd_get(sh->etcd, sh->published_key, 0, &one);
            coord_etcd_kvs_free(&one);
            if (rc == DSIG_OK)
                came_up(sh);
        }
        if (rc == DSIG_OK) {
            backoff = 0;
            continue;
        }
        went_down(sh, need_read ? "cannot read the configuration" : "the watch stopped");
        backoff = backoff ? (backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2) : BACKOFF_MIN_MS;
        pause_ms(sh, backoff);
    }
    return NULL;
}

static void shared_free(struct serve_shared *sh)
{
    coord_etcd_free(sh->etcd);
    json_decref(sh->applied);
    json_decref(sh->refused);
    dsig_xfree(sh->cfg_prefix, 0);
    dsig_xfree(sh->ten_prefix, 0);
    dsig_xfree(sh->keys_prefix, 0);
    dsig_xfree(sh->published_key, 0);
    dsig_xfree(sh->ckpt_key, 0);
    dsig_xfree(sh->instance, 0);
    pthread_mutex_destroy(&sh->mu);
    pthread_cond_destroy(&sh->cv);
    dsig_xfree(sh, 0);
}

int serve_shared_start(struct dsig_server *s, const struct dsig_serve_config *cfg)
{
    if (!cfg->coord_n || !cfg->coord_shared)
        return DSIG_OK;
    struct serve_shared *sh = dsig_calloc(1, sizeof *sh);
    if (!sh)
        return dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    sh->s = s;
    pthread_mutex_init(&sh->mu, NULL);
    pthread_cond_init(&sh->cv, NULL);
    sh->max_stale_s = cfg->coord_max_stale_s;
    const char *prefix = cfg->coord_prefix ? cfg->coord_prefix : "/dsig/";
    const char *inst = cfg->coord_instance ? cfg->coord_instance : s->ckpt ? serve_ckpt_origin(s->ckpt) : NULL;
    char anon[40];
    if (!inst) { /* no log and no name: a random one, only to tell instances apart in the marker */
        uint64_t r = 0;
        dsig_random_bytes(&r, sizeof r);
        snprintf(anon, sizeof anon, "instance-%016" PRIx64, r);
        inst = anon;
    }
    coord_etcd_config ec = {.endpoints = (const char *const *)cfg->coord_etcd, .n_endpoints = cfg->coord_n,
                            .connect_timeout_ms = cfg->coord_connect_ms, .timeout_ms = cfg->coord_timeout_ms,
                            .what = "etcd (shared configuration)"};
    int rc = DSIG_E_NOMEM;
    if ((sh->cfg_prefix = join(prefix, "config/")) && (sh->ten_prefix = join(prefix, "config/tenants/")) &&
        (sh->keys_prefix = join(prefix, "config/keys/")) && (sh->published_key = join(prefix, "config/published")) &&
        (sh->instance = dsig_strdup(inst)) && (sh->ckpt_key = join(prefix, "checkpoints/")) &&
        (sh->refused = json_object())) {
        char *k = join(sh->ckpt_key, inst);
        dsig_xfree(sh->ckpt_key, 0);
        sh->ckpt_key = k;
        rc = k ? coord_etcd_new(&sh->etcd, &ec) : DSIG_E_NOMEM;
    }
    if (rc != DSIG_OK) {
        shared_free(sh);
        return rc == DSIG_E_NOMEM ? dsig_fail(rc, "serve: out of memory") : rc;
    }
    /* One attempt before the listener opens: when etcd answers, the first request already sees the
     * shared tenants; when it does not, the watcher keeps trying (max_stale_s refuses tokens meanwhile). */
    int64_t rev = 0;
    if (sync_all(sh, &rev) != DSIG_OK)
        went_down(sh, "cannot read the configuration at start");
    if (pthread_create(&sh->th, NULL, watcher, sh) != 0) {
        shared_free(sh);
        return dsig_fail(DSIG_E_NOMEM, "serve: cannot start the shared configuration's thread");
    }
    sh->started = 1;
    s->shared = sh;
    return DSIG_OK;
}

void serve_shared_stop(struct serve_shared *sh)
{
    if (!sh || !sh->started)
        return;
    pthread_mutex_lock(&sh->mu);
    sh->stop = 1;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    pthread_join(sh->th, NULL);
    sh->started = 0;
}

void serve_shared_free(struct serve_shared *sh)
{
    if (!sh)
        return;
    serve_shared_stop(sh);
    put_checkpoint(sh); /* the last one, made as the server stopped */
    shared_free(sh);
}

void serve_shared_stats(struct serve_shared *sh, struct serve_shared_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!sh)
        return;
    st->enabled = 1;
    st->connected = atomic_load(&sh->connected);
    st->published = atomic_load(&sh->published);
    st->revision = atomic_load(&sh->revision);
    uint64_t ok = atomic_load(&sh->last_ok_ns);
    st->age_ms = ok ? (serve_now_ns() - ok) / 1000000u : UINT64_MAX;
    st->applied = atomic_load(&sh->n_applied);
    st->refused = atomic_load(&sh->n_refused);
    st->checkpoints = atomic_load(&sh->n_ckpts);
}

int serve_shared_stale(struct serve_shared *sh, unsigned *age_s)
{
    *age_s = 0;
    if (!sh || !sh->max_stale_s)
        return 0;
    uint64_t ok = atomic_load(&sh->last_ok_ns);
    if (!ok)
        return 1;
    uint64_t age = serve_now_ns() - ok;
    *age_s = (unsigned)(age / 1000000000u);
    return age > (uint64_t)sh->max_stale_s * 1000000000u;
}

/* @spec docs/scale.md "Shared configuration": a version retired here is added to PREFIX
 * config/keys/<id> (compare-and-swap on the entry's mod revision), so that every instance retires it. */
void serve_shared_publish_retired(struct serve_shared *sh, const char *id, unsigned version)
{
    if (!sh)
        return;
    char *key = join(sh->keys_prefix, id);
    int done = 0;
    for (unsigned attempt = 0; key && !done && attempt < RETIRE_ATTEMPTS; attempt++) {
        coord_etcd_kvs kvs = {0};
        if (coord_etcd_get(sh->etcd, key, 0, &kvs) != DSIG_OK)
            break;
        json_t *o = kvs.n ? json_loadb(kvs.kvs[0].value, kvs.kvs[0].value_len, JSON_REJECT_DUPLICATES, NULL)
                          : json_pack("{s:[]}", "retired");
        json_t *a = json_object_get(o, "retired");
        int64_t mod = kvs.n ? kvs.kvs[0].mod_revision : 0;
        coord_etcd_kvs_free(&kvs);
        if (!json_is_array(a)) { /* a malformed entry: replaced by one that lists this version */
            json_decref(o);
            o = json_pack("{s:[]}", "retired");
            a = json_object_get(o, "retired");
        }
        int have = 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            have |= json_integer_value(json_array_get(a, i)) == (json_int_t)version;
        char *text = NULL;
        if (!have && a && json_array_append_new(a, json_integer(version)) == 0)
            text = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (have) {
            done = 1;
            break;
        }
        json_t *ops = text ? json_pack("[o]", txn_put(key, text, strlen(text))) : NULL;
        serve_json_free(text);
        int r = txn(sh, mod ? cmp_rev(key, "MOD", mod) : cmp_rev(key, "CREATE", 0), ops,
                    "shared key retirement");
        if (r < 0)
            break;
        done = r == 1;
    }
    if (!done)
        logf_(sh, DSIG_SERVE_LOG_ERROR, "key %s: version %u retired here but not published to %s: %s", id, version,
              key ? key : "etcd", dsig_last_error_detail());
    dsig_xfree(key, 0);
}
