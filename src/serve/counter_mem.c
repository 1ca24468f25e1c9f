/*
 * src/serve/counter_mem.c — an in-process shared counter (ranges.h) for tests: a table of named
 * values under one mutex, with injected faults (an unavailable coordinator, a swap that was applied
 * but whose answer was lost, another writer getting in first).
 */
#include <pthread.h>
#include <string.h>

#include "core/internal.h"
#include "serve/ranges.h"

#define MEM_NAMES 16
#define MEM_NAME_MAX 128

struct mem_counter {
    pthread_mutex_t mu;
    size_t n;
    char names[MEM_NAMES][MEM_NAME_MAX + 1];
    uint64_t values[MEM_NAMES];
    struct serve_counter_mem_faults faults;
    uint64_t calls;
};

/* The slot of `name` (created at 0); -1 when the table is full or the name too long. Under mu. */
static int slot(struct mem_counter *m, const char *name)
{
    if (strlen(name) > MEM_NAME_MAX)
        return -1;
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0)
            return (int)i;
    if (m->n == MEM_NAMES)
        return -1;
    strcpy(m->names[m->n], name);
    m->values[m->n] = 0;
    return (int)m->n++;
}

/* Consume one injected unavailability, if any. Under mu. */
static int take_unavailable(struct mem_counter *m)
{
    if (!m->faults.unavailable)
        return 0;
    m->faults.unavailable--;
    dsig_fail(DSIG_E_UNAVAILABLE, "memory index counter: injected unavailability");
    return 1;
}

static int mem_get(void *ctx, const char *name, uint64_t *value)
{
    struct mem_counter *m = ctx;
    pthread_mutex_lock(&m->mu);
    m->calls++;
    int st = SERVE_COUNTER_UNAVAILABLE, i = slot(m, name);
    if (i < 0)
        dsig_fail(DSIG_E_UNAVAILABLE, "memory index counter: table full");
    else if (!take_unavailable(m)) {
        *value = m->values[i];
        st = SERVE_COUNTER_OK;
    }
    pthread_mutex_unlock(&m->mu);
    return st;
}

static int mem_cas(void *ctx, const char *name, uint64_t expected, uint64_t desired, uint64_t *observed)
{
    struct mem_counter *m = ctx;
    pthread_mutex_lock(&m->mu);
    m->calls++;
    int st = SERVE_COUNTER_UNAVAILABLE, i = slot(m, name);
    if (i < 0) {
        dsig_fail(DSIG_E_UNAVAILABLE, "memory index counter: table full");
        goto out;
    }
    if (m->faults.conflicts) {
        m->faults.conflicts--;
        m->values[i] += m->faults.bump ? m->faults.bump : 1;
    }
    if (take_unavailable(m))
        goto out;
    if (m->faults.lost && m->values[i] == expected) {
        m->faults.lost--;
        m->values[i] = desired;
        dsig_fail(DSIG_E_UNAVAILABLE, "memory index counter: injected lost answer");
        goto out;
    }
    if (m->values[i] != expected) {
        *observed = m->values[i];
        st = SERVE_COUNTER_CONFLICT;
    } else {
        m->values[i] = desired;
        st = SERVE_COUNTER_OK;
    }
out:
    pthread_mutex_unlock(&m->mu);
    return st;
}

static void mem_destroy(void *ctx)
{
    struct mem_counter *m = ctx;
    pthread_mutex_destroy(&m->mu);
    dsig_xfree(m, sizeof *m);
}

static const struct serve_counter_ops mem_ops = {
    .name = "memory", .get = mem_get, .cas = mem_cas, .destroy = mem_destroy};

int serve_counter_mem_new(struct serve_counter **out)
{
    if (!out)
        return dsig_fail(DSIG_E_ARG, "serve_counter_mem_new: NULL argument");
    struct mem_counter *m = dsig_calloc(1, sizeof *m);
    struct serve_counter *c = dsig_calloc(1, sizeof *c);
    if (!m || !c) {
        dsig_xfree(m, 0);
        dsig_xfree(c, 0);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&m->mu, NULL);
    c->ops = &mem_ops;
    c->ctx = m;
    *out = c;
    return DSIG_OK;
}

void serve_counter_mem_set_faults(struct serve_counter *c, const struct serve_counter_mem_faults *f)
{
    struct mem_counter *m = c->ctx;
    pthread_mutex_lock(&m->mu);
    m->faults = *f;
    pthread_mutex_unlock(&m->mu);
}

void serve_counter_mem_set(struct serve_counter *c, const char *key_name, uint64_t value)
{
    struct mem_counter *m = c->ctx;
    pthread_mutex_lock(&m->mu);
    int i = slot(m, key_name);
    if (i >= 0)
        m->values[i] = value;
    pthread_mutex_unlock(&m->mu);
}

uint64_t serve_counter_mem_calls(const struct serve_counter *c)
{
    struct mem_counter *m = c->ctx;
    pthread_mutex_lock(&m->mu);
    uint64_t n = m->calls;
    pthread_mutex_unlock(&m->mu);
    return n;
}
