/*
 * The in-process channel: fans a signer's batch messages out to every subscribed verifier (each
 * delivery only queues the bytes; verification happens on the verifier's own threads). A rwlock
 * lets publishers run concurrently while subscribe / unsubscribe wait for deliveries in progress,
 * which is what makes "unsubscribe, then free the verifier" safe.
 */
#include <pthread.h>
#include <string.h>

#include "hybrid/runtime.h"

struct dsig_hybrid_channel {
    pthread_rwlock_t lock;
    dsig_hybrid_verifier **subs;
    size_t n, cap;
};

int dsig_hybrid_channel_new(dsig_hybrid_channel **out)
{
    if (!out)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_channel_new: out is NULL");
    dsig_hybrid_channel *ch = dsig_calloc(1, sizeof *ch);
    if (!ch)
        return dsig_fail(DSIG_E_NOMEM, "DSig channel: out of memory");
    pthread_rwlock_init(&ch->lock, NULL);
    *out = ch;
    return DSIG_OK;
}

void dsig_hybrid_channel_free(dsig_hybrid_channel *ch)
{
    if (!ch)
        return;
    pthread_rwlock_destroy(&ch->lock);
    dsig_xfree(ch->subs, 0);
    dsig_xfree(ch, 0);
}

int dsig_hybrid_channel_subscribe(dsig_hybrid_channel *ch, dsig_hybrid_verifier *v)
{
    if (!ch || !v)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_channel_subscribe: NULL argument");
    int rc = DSIG_OK;
    pthread_rwlock_wrlock(&ch->lock);
    for (size_t i = 0; i < ch->n; i++)
        if (ch->subs[i] == v)
            rc = dsig_fail(DSIG_E_ARG, "DSig channel: verifier already subscribed");
    if (rc == DSIG_OK && ch->n == ch->cap) {
        size_t ncap = ch->cap ? 2 * ch->cap : 4;
        dsig_hybrid_verifier **n = dsig_realloc(ch->subs, ncap * sizeof *n);
        if (!n)
            rc = dsig_fail(DSIG_E_NOMEM, "DSig channel: out of memory");
        else {
            ch->subs = n;
            ch->cap = ncap;
        }
    }
    if (rc == DSIG_OK)
        ch->subs[ch->n++] = v;
    pthread_rwlock_unlock(&ch->lock);
    return rc;
}

int dsig_hybrid_channel_unsubscribe(dsig_hybrid_channel *ch, dsig_hybrid_verifier *v)
{
    if (!ch || !v)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_channel_unsubscribe: NULL argument");
    int rc = DSIG_E_ARG;
    pthread_rwlock_wrlock(&ch->lock);
    for (size_t i = 0; i < ch->n; i++) {
        if (ch->subs[i] == v) {
            memmove(&ch->subs[i], &ch->subs[i + 1], (ch->n - i - 1) * sizeof *ch->subs);
            ch->n--;
            rc = DSIG_OK;
            break;
        }
    }
    pthread_rwlock_unlock(&ch->lock);
    if (rc)
        return dsig_fail(rc, "DSig channel: verifier was not subscribed");
    return DSIG_OK;
}

int dsig_hybrid_channel_publish(dsig_hybrid_channel *ch, uint64_t signer_id, const uint8_t *msg,
                                size_t len)
{
    if (!ch || (!msg && len))
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_channel_publish: NULL argument");
    int first = DSIG_OK;
    pthread_rwlock_rdlock(&ch->lock);
    for (size_t i = 0; i < ch->n; i++) {
        int rc = dsig_hybrid_verifier_receive_batch(ch->subs[i], signer_id, msg, len);
        if (rc && first == DSIG_OK)
            first = rc;
    }
    pthread_rwlock_unlock(&ch->lock);
    return first;
}
