/*
 * src/serve/ranges.c — index-range reservation on a shared counter (ranges.h, docs/scale.md): one
 * compare-and-swap per range, bounded retries with jittered backoff, a cooldown after the coordinator
 * failed to answer (so that every signing request does not wait for the whole retry budget), and the
 * adaptive range size.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "serve/ranges.h"

#define KEY_ID_MAX 128

/* What the reservation remembers of one key between its ranges. */
struct range_key {
    char id[KEY_ID_MAX + 1];
    uint64_t last;        /* size of the last range (0: none yet) */
    uint64_t last_ns;     /* when it was reserved (monotonic) */
    uint64_t seen;        /* the highest counter value seen: the counter never goes below it */
};

struct serve_ranges {
    const struct serve_counter *counter;
    struct serve_ranges_config cfg;
    dsig_state_range_source source;
    pthread_mutex_t mu;      /* guards keys, nkeys, down_until_ns, rng */
    struct range_key *keys;
    size_t nkeys, cap;
    uint64_t down_until_ns;  /* cooldown after an unavailable coordinator */
    unsigned rng;            /* jitter */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void serve_counter_free(struct serve_counter *c)
{
    if (!c)
        return;
    if (c->ops && c->ops->destroy)
        c->ops->destroy(c->ctx);
    dsig_xfree(c, sizeof *c);
}

int serve_counter_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > SERVE_COUNTER_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
            return 0;
    }
    return 1;
}

int serve_counter_parse(const char *s, size_t len, uint64_t *v)
{
    if (len == 0 || len > 20)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return 0;
        x = x * 10 + d;
    }
    *v = x;
    return 1;
}

static void defaults(struct serve_ranges_config *c)
{
    if (!c->floor)
        c->floor = 16;
    if (!c->ceiling)
        c->ceiling = 65536;
    if (!c->initial)
        c->initial = 64;
    if (!c->target_ms)
        c->target_ms = 30000;
    if (!c->share)
        c->share = 16;
    if (!c->attempts)
        c->attempts = 8;
    if (!c->backoff_ms)
        c->backoff_ms = 2;
    if (!c->cooldown_ms)
        c->cooldown_ms = 1000;
    if (!c->deadline_ms)
        c->deadline_ms = 5000;
}

uint64_t serve_ranges_size(const struct serve_ranges_config *cfg, uint64_t last, uint64_t elapsed_ms,
                           uint64_t remaining)
{
    struct serve_ranges_config c = *cfg;
    defaults(&c);
    uint64_t n = c.initial;
    if (last) {
        /* The rate of the last range times the target lifetime, damped to [last/4, 4 last]. */
        long double want = (long double)last * c.target_ms / (long double)(elapsed_ms ? elapsed_ms : 1);
        uint64_t lo = last / 4 ? last / 4 : 1;
        long double hi = (long double)last * 4;
        n = want < lo ? lo : want > hi ? (uint64_t)hi : (uint64_t)want;
    }
    if (n < c.floor)
        n = c.floor;
    if (n > c.ceiling)
        n = c.ceiling;
    uint64_t part = remaining / c.share + (remaining % c.share != 0);
    if (n > part)
        n = part;
    if (n > remaining)
        n = remaining;
    return n ? n : remaining ? 1 : 0;
}

/* The range source of a state file: dsig_state_range_source.reserve. */
static int serve_ranges_reserve_cb(void *ctx, const dsig_state_range_request *req, uint64_t *lo, uint64_t *hi)
{
    return serve_ranges_reserve(ctx, req->key_id, req->next, req->capacity, lo, hi);
}

int serve_ranges_new(struct serve_ranges **out, const struct serve_counter *counter,
                     const struct serve_ranges_config *cfg)
{
    if (!out || !counter || !counter->ops || !counter->ops->get || !counter->ops->cas)
        return dsig_fail(DSIG_E_ARG, "serve_ranges_new: NULL argument");
    *out = NULL;
    struct serve_ranges_config c = {0};
    if (cfg)
        c = *cfg;
    defaults(&c);
    if (c.floor > c.ceiling || c.ceiling > ((uint64_t)1 << 32))
        return dsig_fail(DSIG_E_ARG, "index ranges: floor %llu above ceiling %llu (at most 2^32)",
                         (unsigned long long)c.floor, (unsigned long long)c.ceiling);
    struct serve_ranges *r = dsig_calloc(1, sizeof *r);
    if (!r)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    r->counter = counter;
    r->cfg = c;
    r->source.reserve = serve_ranges_reserve_cb;
    r->source.ctx = r;
    r->rng = (unsigned)(now_ns() ^ ((uint64_t)getpid() << 16));
    pthread_mutex_init(&r->mu, NULL);
    *out = r;
    return DSIG_OK;
}

void serve_ranges_free(struct serve_ranges *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->mu);
    dsig_xfree(r->keys, 0);
    dsig_xfree(r, sizeof *r);
}

const dsig_state_range_source *serve_ranges_source(struct serve_ranges *r)
{
    return r ? &r->source : NULL;
}

/* The record of key_id (created); NULL when out of memory. Called with r->mu held. */
static struct range_key *key_of(struct serve_ranges *r, const char *key_id)
{
    for (size_t i = 0; i < r->nkeys; i++)
        if (strcmp(r->keys[i].id, key_id) == 0)
            return &r->keys[i];
    if (r->nkeys == r->cap) {
        size_t nc = r->cap ? 2 * r->cap : 4;
        struct range_key *k = dsig_realloc(r->keys, nc * sizeof *k);
        if (!k)
            return NULL;
        r->keys = k;
        r->cap = nc;
    }
    struct range_key *k = &r->keys[r->nkeys++];
    memset(k, 0, sizeof *k);
    strcpy(k->id, key_id);
    return k;
}

uint64_t serve_ranges_next_size(struct serve_ranges *r, const char *key_id)
{
    uint64_t n = 0;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nkeys; i++)
        if (strcmp(r->keys[i].id, key_id) == 0 && r->keys[i].last)
            n = serve_ranges_size(&r->cfg, r->keys[i].last, (now_ns() - r->keys[i].last_ns) / 1000000u,
                                  UINT64_MAX);
    pthread_mutex_unlock(&r->mu);
    return n;
}

static int key_id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > KEY_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_'))
            return 0;
    }
    return 1;
}

/* The pause before attempt `a` (>= 1): backoff_ms * 2^(a-1), capped at 64x, times a jitter in [0.5, 1]. */
static uint64_t pause_ms(struct serve_ranges *r, unsigned a)
{
    uint64_t base = (uint64_t)r->cfg.backoff_ms << (a - 1 < 6 ? a - 1 : 6);
    pthread_mutex_lock(&r->mu);
    unsigned j = (unsigned)rand_r(&r->rng) % 1024u;
    pthread_mutex_unlock(&r->mu);
    return base / 2 + base * j / 2048u;
}

int serve_ranges_reserve(struct serve_ranges *r, const char *key_id, uint64_t local_next, uint64_t capacity,
                         uint64_t *lo, uint64_t *hi)
{
    if (!r || !key_id || !lo || !hi)
        return dsig_fail(DSIG_E_ARG, "serve_ranges_reserve: NULL argument");
    *lo = *hi = 0;
    if (!key_id_ok(key_id))
        return dsig_fail(DSIG_E_ARG, "index ranges: bad key id (1..%d base64url characters)", KEY_ID_MAX);
    if (local_next >= capacity)
        return dsig_fail(DSIG_E_EXHAUSTED, "key %s: this state file has reached the key's %llu "
                                           "signatures", key_id, (unsigned long long)capacity);
    const struct serve_counter_ops *ops = r->counter->ops;
    void *cctx = r->counter->ctx;
    uint64_t t0 = now_ns(), last, last_ns, seen;
    pthread_mutex_lock(&r->mu);
    struct range_key *k = key_of(r, key_id);
    if (!k) {
        pthread_mutex_unlock(&r->mu);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    last = k->last, last_ns = k->last_ns, seen = k->seen;
    uint64_t down = r->down_until_ns;
    pthread_mutex_unlock(&r->mu);
    if (t0 < down)
        return dsig_fail(DSIG_E_UNAVAILABLE, "key %s: the %s index counter did not answer a moment ago: "
                                             "no new index range; stateful signing stops (next attempt "
                                             "in %llu ms)", key_id, ops->name,
                         (unsigned long long)((down - t0) / 1000000u + 1));

    uint64_t c = 0, n = 0, want_hi = 0;
    int have_c = 0, st = SERVE_COUNTER_UNAVAILABLE, unanswered = 0;
    unsigned a;
    for (a = 0; a < r->cfg.attempts; a++) {
        if (a && now_ns() - t0 >= r->cfg.deadline_ms * 1000000ull)
            break; /* a slow coordinator: stop here rather than hold the key's signers any longer */
        if (a)
            sleep_ms(pause_ms(r, a));
        if (!have_c) {
            st = ops->get(cctx, key_id, &c);
            if (st != SERVE_COUNTER_OK) {
                unanswered++;
                continue;
            }
            have_c = 1;
        }
        if (c < seen)
            return dsig_fail(DSIG_E_STATE, "key %s: the %s index counter went back from %llu to %llu (a "
                                           "coordinator restored from an old copy?): it would hand out "
                                           "used indices; stateful signing stops", key_id, ops->name,
                             (unsigned long long)seen, (unsigned long long)c);
        seen = c;
        uint64_t start = c > local_next ? c : local_next;
        if (start >= capacity)
            return dsig_fail(DSIG_E_EXHAUSTED, "key %s: every one of its %llu indices has been handed "
                                               "out (%s counter at %llu): it can never sign again", key_id,
                             (unsigned long long)capacity, ops->name, (unsigned long long)c);
        n = serve_ranges_size(&r->cfg, last, last ? (t0 - last_ns) / 1000000u : 0, capacity - start);
        want_hi = start + n;
        uint64_t observed = 0;
        st = ops->cas(cctx, key_id, c, want_hi, &observed);
        if (st == SERVE_COUNTER_OK) {
            *lo = start;
            *hi = want_hi;
            break;
        }
        if (st == SERVE_COUNTER_CONFLICT) {
            c = observed; /* someone else reserved first: swap from what is there now */
        } else {
            have_c = 0;   /* the swap may have happened: read again, the range is burned then */
            unanswered++;
        }
    }
    /* Attempts used up partly waiting for a coordinator that did not answer, the last answer a
     * conflict (it came back at the end, as after an etcd election): an outage, not contention. */
    if (st == SERVE_COUNTER_CONFLICT && unanswered)
        st = SERVE_COUNTER_UNAVAILABLE;
    pthread_mutex_lock(&r->mu);
    k = key_of(r, key_id); /* the table may have moved */
    if (k && seen > k->seen)
        k->seen = seen;
    if (st == SERVE_COUNTER_OK && k) {
        if (want_hi > k->seen)
            k->seen = want_hi;
        k->last = n;
        k->last_ns = now_ns();
    }
    if (st == SERVE_COUNTER_UNAVAILABLE)
        r->down_until_ns = now_ns() + r->cfg.cooldown_ms * 1000000ull;
    pthread_mutex_unlock(&r->mu);
    if (st == SERVE_COUNTER_OK)
        return DSIG_OK;
    if (st == SERVE_COUNTER_UNAVAILABLE)
        return dsig_fail_prefix(DSIG_E_UNAVAILABLE, "key %s: the %s index counter is unavailable (%u "
                                                    "attempts): no new index range; stateful signing "
                                                    "stops until it answers", key_id, ops->name, a);
    return dsig_fail(DSIG_E_STATE, "key %s: the %s index counter kept changing under %u compare-and-swap "
                                   "attempts: no index range now (too many signers reserving at once)",
                     key_id, ops->name, a);
}
