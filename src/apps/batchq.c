/*
 * src/apps/batchq.c — the DSig batch messages a signer produced, kept for the peers that must receive
 * them before the signatures they cover (apps_internal.h). The signer's background thread pushes; the
 * thread that owns a connection takes what is newer than its cursor just before it writes a request or
 * reply, so batches travel ahead on the same stream and no background thread ever writes to a socket.
 */
#include <pthread.h>
#include <string.h>

#include "apps/apps_internal.h"
#include "core/internal.h"

struct slot {
    uint64_t serial;   /* 0: empty */
    size_t len;
    uint8_t *data;
};

struct apps_batchq {
    pthread_mutex_t mu;
    unsigned retain;
    size_t max_msg;
    uint64_t head;     /* serial of the newest message */
    struct slot *ring; /* message `serial` lives at ring[serial % retain] */
};

int apps_batchq_new(apps_batchq **out, unsigned retain, size_t max_msg)
{
    *out = NULL;
    apps_batchq *q = dsig_calloc(1, sizeof *q);
    if (!q || !(q->ring = dsig_calloc(retain ? retain : 1, sizeof *q->ring))) {
        dsig_xfree(q, 0);
        return dsig_fail(DSIG_E_NOMEM, "batch queue: out of memory");
    }
    q->retain = retain ? retain : 1;
    q->max_msg = max_msg;
    for (unsigned i = 0; i < q->retain; i++)
        if (!(q->ring[i].data = dsig_malloc(max_msg))) {
            apps_batchq_free(q);
            return dsig_fail(DSIG_E_NOMEM, "batch queue: out of memory");
        }
    pthread_mutex_init(&q->mu, NULL);
    *out = q;
    return DSIG_OK;
}

void apps_batchq_push(apps_batchq *q, const uint8_t *msg, size_t len)
{
    if (len > q->max_msg)
        return; /* not a batch message of this parameter set: the peer would refuse it anyway */
    pthread_mutex_lock(&q->mu);
    uint64_t serial = ++q->head;
    struct slot *s = &q->ring[serial % q->retain];
    s->serial = serial;
    s->len = len;
    memcpy(s->data, msg, len);
    pthread_mutex_unlock(&q->mu);
}

int apps_batchq_next(apps_batchq *q, uint64_t *cursor, uint8_t *buf, size_t cap, size_t *len)
{
    pthread_mutex_lock(&q->mu);
    int got = 0;
    uint64_t want = *cursor + 1;
    if (q->head >= q->retain && want <= q->head - q->retain)
        want = q->head - q->retain + 1; /* fell behind the ring: what is gone is skipped */
    if (want <= q->head) {
        struct slot *s = &q->ring[want % q->retain];
        if (s->serial == want && s->len <= cap) {
            memcpy(buf, s->data, s->len);
            *len = s->len;
            got = 1;
        }
        *cursor = want;
    }
    pthread_mutex_unlock(&q->mu);
    return got;
}

int apps_batchq_send(apps_batchq *q, uint64_t *cursor, int fd, uint8_t *buf, size_t cap)
{
    if (!q)
        return DSIG_OK;
    size_t len;
    while (apps_batchq_next(q, cursor, buf, cap, &len)) {
        struct iovec iov = {buf, len};
        int rc = apps_io_write(fd, APPS_T_BATCH, &iov, 1);
        if (rc != DSIG_OK)
            return rc;
    }
    return DSIG_OK;
}

void apps_batchq_free(apps_batchq *q)
{
    if (!q)
        return;
    for (unsigned i = 0; q->ring && i < q->retain; i++)
        dsig_xfree(q->ring[i].data, 0);
    dsig_xfree(q->ring, 0);
    if (q->max_msg)
        pthread_mutex_destroy(&q->mu);
    dsig_xfree(q, 0);
}
