/*
 * src/node/node_etcd.c — node-plane membership through etcd (docs/node.md "Membership through etcd"):
 * a node registers its configuration entry under PREFIX "nodes/<id>" attached to a lease that a
 * thread of its own keeps alive, reads the prefix, then watches it from the read's revision + 1 and
 * turns each change into dsig_node_member_add / _remove (node_members.c, which checks every entry as
 * the configuration parser does). etcd is trusted for membership as the configuration file is.
 *
 * One thread: watch for at most a third of the lease's TTL (and half a second), keep the lease alive
 * when due, and around that re-register after a lost lease and re-read after a compacted watch. An
 * etcd outage changes nothing in the membership: the node keeps the members it has and retries.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "coord/etcd.h"
#include "core/internal.h"
#include "node/node_state.h"

#define DEFAULT_PREFIX "dsig/"
#define PREFIX_MAX 256u
#define KEEP_MEMBERS DSIG_NODE_MAX_NODES

struct dsig_node_etcd {
    dsig_node *node;
    coord_etcd *etcd;
    dsig_node_etcd_options opt;
    char prefix[PREFIX_MAX + 8];        /* PREFIX "nodes/" */
    size_t prefix_len;
    char self_key[PREFIX_MAX + 32];
    char *self_entry;
    size_t self_len;
    int64_t lease;                      /* 0: not registered */
    int64_t from;                       /* the next revision to watch from */
    uint64_t known[KEEP_MEMBERS];       /* ids learned from etcd (a re-read removes the missing) */
    size_t n_known;
    pthread_t thread;
    _Atomic int stop;
    _Atomic uint64_t c_reg, c_lost, c_join, c_left, c_ign, c_unav, c_reread;
};

static void count(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

__attribute__((format(printf, 2, 3))) static void say(dsig_node_etcd *m, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (m->opt.on_log)
        m->opt.on_log(m->opt.on_log_arg, line);
    else
        fprintf(stderr, "dsig node %" PRIu64 " etcd: %s\n", m->node->my_id, line);
}

void dsig_node_etcd_options_default(dsig_node_etcd_options *o)
{
    memset(o, 0, sizeof *o);
    o->prefix = DEFAULT_PREFIX;
    o->lease_ttl_s = 5;
    o->timeout_ms = 2000;
}

/* The id a key PREFIX "nodes/<id>" names: canonical decimal 1..2^63-1, else 0. */
static uint64_t key_id(const dsig_node_etcd *m, const char *key, size_t len)
{
    if (len <= m->prefix_len || memcmp(key, m->prefix, m->prefix_len) != 0)
        return 0;
    const char *d = key + m->prefix_len;
    size_t n = len - m->prefix_len;
    if (n > 19 || d[0] == '0')
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (d[i] < '0' || d[i] > '9')
            return 0;
        v = v * 10 + (uint64_t)(d[i] - '0');
    }
    return v <= DSIG_NODE_MAX_ID ? v : 0;
}

static void known_add(dsig_node_etcd *m, uint64_t id)
{
    for (size_t i = 0; i < m->n_known; i++)
        if (m->known[i] == id)
            return;
    if (m->n_known < KEEP_MEMBERS)
        m->known[m->n_known++] = id;
}

static void known_del(dsig_node_etcd *m, uint64_t id)
{
    for (size_t i = 0; i < m->n_known; i++)
        if (m->known[i] == id) {
            m->known[i] = m->known[--m->n_known];
            return;
        }
}

/* The "id" member of an entry's JSON must be the key's: 1, else 0 (malformed JSON is left to the
 * entry parser, which names what is wrong). */
static int id_matches(const char *json, size_t len, uint64_t id)
{
    json_error_t err;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
    json_t *v = root ? json_object_get(root, "id") : NULL;
    int ok = !v || (json_is_integer(v) && (uint64_t)json_integer_value(v) == id);
    json_decref(root);
    return ok;
}

/* Apply one entry put under `key`. */
static void apply_put(dsig_node_etcd *m, const coord_etcd_kv *kv)
{
    uint64_t id = key_id(m, kv->key, kv->key_len);
    if (id == 0) {
        count(&m->c_ign);
        say(m, "ignored key %.100s: not %s<id>", kv->key, m->prefix);
        return;
    }
    if (id == m->node->my_id)
        return; /* our own registration */
    if (!id_matches(kv->value, kv->value_len, id)) {
        count(&m->c_ign);
        say(m, "ignored %.100s: the \"id\" of its entry is not %" PRIu64, kv->key, id);
        return;
    }
    int changed = 0;
    int rc = node_member_put_json(m->node, kv->value, kv->value_len, &changed);
    if (rc != DSIG_OK) {
        count(&m->c_ign);
        say(m, "ignored %.100s: %s", kv->key, dsig_last_error_detail());
        return;
    }
    known_add(m, id);
    if (changed) {
        count(&m->c_join);
        say(m, "member %" PRIu64 " joined", id);
    }
}

/* Apply the deletion of `key`. */
static void apply_delete(dsig_node_etcd *m, uint64_t id)
{
    if (id == 0)
        return;
    known_del(m, id);
    if (id == m->node->my_id) { /* our lease expired (an outage longer than the TTL) */
        m->lease = 0;
        return;
    }
    if (dsig_node_member_remove(m->node, id) == DSIG_OK) {
        count(&m->c_left);
        say(m, "member %" PRIu64 " left", id);
    }
}

/* Read the prefix, apply every entry, and remove the members learned from etcd that are gone. */
static int read_all(dsig_node_etcd *m)
{
    coord_etcd_kvs kvs;
    int rc = coord_etcd_get(m->etcd, m->prefix, 1, &kvs);
    if (rc) {
        count(&m->c_unav);
        return rc;
    }
    uint64_t was[KEEP_MEMBERS];
    size_t n_was = m->n_known;
    memcpy(was, m->known, n_was * sizeof *was);
    m->n_known = 0;
    for (size_t i = 0; i < kvs.n; i++)
        apply_put(m, &kvs.kvs[i]);
    for (size_t i = 0; i < n_was; i++) {
        int still = 0;
        for (size_t j = 0; j < m->n_known; j++)
            still |= m->known[j] == was[i];
        if (!still)
            apply_delete(m, was[i]);
    }
    m->from = kvs.revision + 1;
    coord_etcd_kvs_free(&kvs);
    return DSIG_OK;
}

/* A fresh lease and our entry under it. */
static int register_self(dsig_node_etcd *m)
{
    int64_t lease;
    int rc = coord_etcd_lease_grant(m->etcd, m->opt.lease_ttl_s, &lease);
    if (rc == DSIG_OK) {
        rc = coord_etcd_put(m->etcd, m->self_key, m->self_entry, m->self_len, lease, NULL);
        if (rc)
            (void)coord_etcd_lease_revoke(m->etcd, lease);
    }
    if (rc) {
        count(&m->c_unav);
        return rc;
    }
    m->lease = lease;
    count(&m->c_reg);
    return DSIG_OK;
}

static int on_event(void *arg, const coord_etcd_event *ev)
{
    dsig_node_etcd *m = arg;
    if (ev->deleted)
        apply_delete(m, key_id(m, ev->kv.key, ev->kv.key_len));
    else
        apply_put(m, &ev->kv);
    return atomic_load_explicit(&m->stop, memory_order_relaxed);
}

/* Sleep ms unless stopping. */
static void nap(dsig_node_etcd *m, int ms)
{
    for (int t = 0; t < ms && !atomic_load(&m->stop); t += 50) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void *etcd_main(void *arg)
{
    dsig_node_etcd *m = arg;
    int64_t period = (int64_t)m->opt.lease_ttl_s * 1000 / 3;
    int64_t next_ka = mono_ms() + period;
    int need_read = 0;
    while (!atomic_load(&m->stop)) {
        if (m->lease == 0) {
            if (register_self(m) != DSIG_OK) {
                nap(m, 500);
                continue;
            }
            say(m, "registered again (lease %" PRId64 ")", m->lease);
            next_ka = mono_ms() + period;
        }
        if (need_read) {
            if (read_all(m) != DSIG_OK) {
                nap(m, 500);
                continue;
            }
            need_read = 0;
        }
        int64_t left = next_ka - mono_ms();
        uint32_t wait = left < 50 ? 50 : left > 500 ? 500 : (uint32_t)left;
        int rc = coord_etcd_watch(m->etcd, m->prefix, &m->from, wait, on_event, m);
        if (rc == DSIG_E_STALE) {
            count(&m->c_reread);
            need_read = 1;
        } else if (rc != DSIG_OK) {
            count(&m->c_unav);
            nap(m, 200); /* etcd is down: keep the members we have */
        }
        if (m->lease != 0 && mono_ms() >= next_ka) {
            rc = coord_etcd_lease_keepalive(m->etcd, m->lease, NULL);
            if (rc == DSIG_OK) {
                next_ka = mono_ms() + period;
            } else if (rc == DSIG_E_STATE) {
                count(&m->c_lost);
                say(m, "lease %" PRId64 " expired: registering again", m->lease);
                m->lease = 0;
            } else {
                count(&m->c_unav);
                next_ka = mono_ms() + 500; /* retry soon: the TTL is running */
            }
        }
    }
    return NULL;
}

static void etcd_free(dsig_node_etcd *m)
{
    coord_etcd_free(m->etcd);
    dsig_xfree(m->self_entry, 0);
    dsig_xfree(m, 0);
}

int dsig_node_etcd_start(dsig_node_etcd **out, dsig_node *n, const dsig_node_etcd_options *o)
{
    if (!out || !n || !o)
        return dsig_fail(DSIG_E_ARG, "dsig_node_etcd_start: NULL argument");
    *out = NULL;
    const char *prefix = o->prefix ? o->prefix : DEFAULT_PREFIX;
    if (strlen(prefix) > PREFIX_MAX)
        return dsig_fail(DSIG_E_ARG, "node etcd: prefix longer than %u bytes", PREFIX_MAX);
    if (o->lease_ttl_s < 2 || o->lease_ttl_s > 3600)
        return dsig_fail(DSIG_E_ARG, "node etcd: lease_ttl_s %u out of range (2..3600)", o->lease_ttl_s);
    dsig_node_etcd *m = dsig_calloc(1, sizeof *m);
    if (!m)
        return dsig_fail(DSIG_E_NOMEM, "node etcd: out of memory");
    m->node = n;
    m->opt = *o;
    m->opt.prefix = NULL; /* the caller's string may not outlive this call: m->prefix is the copy */
    m->opt.endpoints = NULL;
    atomic_init(&m->stop, 0);
    m->prefix_len = (size_t)snprintf(m->prefix, sizeof m->prefix, "%snodes/", prefix);
    snprintf(m->self_key, sizeof m->self_key, "%s%" PRIu64, m->prefix, n->my_id);
    coord_etcd_config ec = {.endpoints = o->endpoints, .n_endpoints = o->n_endpoints,
                            .connect_timeout_ms = o->timeout_ms < 1000 ? o->timeout_ms : 1000,
                            .timeout_ms = o->timeout_ms ? o->timeout_ms : 2000, .what = "node membership"};
    int rc = coord_etcd_new(&m->etcd, &ec);
    if (rc == DSIG_OK && !(m->self_entry = node_self_entry(n, &m->self_len)))
        rc = DSIG_E_NOMEM;
    if (rc == DSIG_OK)
        rc = register_self(m);
    if (rc == DSIG_OK && (rc = read_all(m)) != DSIG_OK)
        (void)coord_etcd_lease_revoke(m->etcd, m->lease);
    if (rc == DSIG_OK && pthread_create(&m->thread, NULL, etcd_main, m) != 0) {
        (void)coord_etcd_lease_revoke(m->etcd, m->lease);
        rc = dsig_fail(DSIG_E_NOMEM, "node etcd: cannot start its thread");
    }
    if (rc) {
        etcd_free(m);
        return rc;
    }
    *out = m;
    return DSIG_OK;
}

void dsig_node_etcd_stop(dsig_node_etcd *m, int leave)
{
    if (!m)
        return;
    atomic_store(&m->stop, 1);
    pthread_join(m->thread, NULL);
    if (leave && m->lease)
        (void)coord_etcd_lease_revoke(m->etcd, m->lease);
    etcd_free(m);
}

void dsig_node_etcd_stats_get(dsig_node_etcd *m, dsig_node_etcd_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!m)
        return;
    st->registrations = atomic_load(&m->c_reg);
    st->leases_lost = atomic_load(&m->c_lost);
    st->joined = atomic_load(&m->c_join);
    st->left = atomic_load(&m->c_left);
    st->ignored = atomic_load(&m->c_ign);
    st->unavailable = atomic_load(&m->c_unav);
    st->rereads = atomic_load(&m->c_reread);
}
