/*
 * src/node/node_workers.c — background verification: received batches wait in one bounded queue
 * (and within their sender's share and verification budget, docs/node.md "Per-peer bounds"); the
 * workers check each root signature (the hybrid verifier runs with threads = 0, so the verdict is known
 * here and an ACK can follow), cache the batch, mark the replay window and acknowledge.
 *
 * Owns n->q_lock (and n->q_cond): see node_state.h.
 */
#include <pthread.h>

#include "core/internal.h"
#include "node/node_state.h"

/* Top up a peer's verification budget for the time elapsed and take one batch from it: 1 if it had
 * one, 0 if it is spent (q_lock held). */
static int budget_take(dsig_node *n, struct peer *p)
{
    int64_t now = mono_ms(), burst = (int64_t)n->opt.peer_verify_burst * 1000;
    p->tokens += (now - p->refilled_ms) * (int64_t)n->opt.peer_verify_rate; /* rate/s = rate/1000 per ms */
    p->refilled_ms = now;
    if (p->tokens > burst)
        p->tokens = burst;
    if (p->tokens < 1000)
        return 0;
    p->tokens -= 1000;
    return 1;
}

/* Queue w for verification within the queue's and its sender's bounds; a refusal frees and counts it. */
void node_queue_push(dsig_node *n, struct work *w)
{
    struct peer *from = &n->peers[w->from];
    pthread_mutex_lock(&n->q_lock);
    int full = n->q_len >= n->opt.verify_queue || n->q_stop || from->queued >= n->opt.peer_verify_queue;
    int broke = !full && !budget_take(n, from);
    if (full || broke) {
        pthread_mutex_unlock(&n->q_lock);
        dsig_xfree(w, 0);
        bump(n, full ? C_QFULL : C_RATE);
        return;
    }
    from->queued++;
    if (n->q_tail)
        n->q_tail->next = w;
    else
        n->q_head = w;
    n->q_tail = w;
    n->q_len++;
    pthread_cond_signal(&n->q_cond);
    pthread_mutex_unlock(&n->q_lock);
}

/* Verification worker: check root signatures, cache, mark the window, acknowledge. */
static void *worker_main(void *arg)
{
    dsig_node *n = arg;
    for (;;) {
        pthread_mutex_lock(&n->q_lock);
        while (!n->q_head && !n->q_stop)
            pthread_cond_wait(&n->q_cond, &n->q_lock);
        if (n->q_stop) {
            pthread_mutex_unlock(&n->q_lock);
            return NULL;
        }
        struct work *w = n->q_head;
        n->q_head = w->next;
        if (!n->q_head)
            n->q_tail = NULL;
        n->q_len--;
        pthread_mutex_unlock(&n->q_lock);

        node_mem_rdlock(n);
        if (!node_slot_is(n, (long)w->sidx, w->sgen) || !node_slot_is(n, (long)w->from, w->fgen)) {
            /* its signer or sender left while it waited: nothing to cache. A sender still here
             * gets its share back (node_queue_forget reset a leaving one's). */
            if (node_slot_is(n, (long)w->from, w->fgen)) {
                pthread_mutex_lock(&n->q_lock);
                n->peers[w->from].queued--;
                pthread_mutex_unlock(&n->q_lock);
            }
            node_mem_unlock(n);
            dsig_xfree(w, 0);
            continue;
        }
        dsig_hybrid_verifier *v = n->peers[w->sidx].verifiers[w->gi];
        int rc = dsig_hybrid_verifier_receive_batch(v, w->signer, w->msg, w->len);
        bump(n, C_BATCH_CHECKS);
        pthread_mutex_lock(&n->q_lock);
        struct peer *from = &n->peers[w->from];
        from->queued--;
        if (rc == DSIG_E_VERIFY) { /* a forged batch: its sender pays for the check, and more */
            int64_t floor = -(int64_t)n->opt.peer_verify_burst * 1000;
            from->tokens -= (int64_t)BAD_BATCH_COST * 1000;
            if (from->tokens < floor)
                from->tokens = floor;
        }
        pthread_mutex_unlock(&n->q_lock);
        if (rc == DSIG_OK) {
            node_windows_mark(n, w->sidx, w->gi, w->seq);
            bump(n, C_VERIFIED);
            node_send_ack(n, w->conn, w->signer, w->seq, w->gi);
        } else if (rc == DSIG_E_VERIFY) {
            bump(n, C_BADSIG);
        } else if (rc == DSIG_E_STALE) { /* below the sequence floor: an old batch */
            bump(n, C_REPLAY);
        } else if (rc != DSIG_E_EQUIVOCATION) { /* equivocation is counted by the verifier */
            bump(n, C_MALFORMED);
        }
        node_mem_unlock(n);
        dsig_xfree(w, 0);
    }
}

/* Stop the verification workers and join them. */
void node_workers_stop(dsig_node *n)
{
    pthread_mutex_lock(&n->q_lock);
    n->q_stop = 1;
    pthread_cond_broadcast(&n->q_cond);
    pthread_mutex_unlock(&n->q_lock);
    for (unsigned i = 0; i < n->n_workers; i++)
        pthread_join(n->workers[i], NULL);
    n->n_workers = 0;
}

/* Start the verification workers. */
int node_workers_start(dsig_node *n)
{
    n->workers = dsig_calloc(n->opt.verify_threads, sizeof *n->workers);
    if (!n->workers)
        return dsig_fail(DSIG_E_NOMEM, "node: out of memory");
    for (unsigned i = 0; i < n->opt.verify_threads; i++) {
        if (pthread_create(&n->workers[i], NULL, worker_main, n) != 0) {
            node_workers_stop(n);
            return dsig_fail(DSIG_E_NOMEM, "node: cannot start a verification thread");
        }
        n->n_workers++;
    }
    return DSIG_OK;
}

/* Free what is still queued (workers stopped). */
void node_queue_free(dsig_node *n)
{
    while (n->q_head) {
        struct work *w = n->q_head;
        n->q_head = w->next;
        dsig_xfree(w, 0);
    }
    n->q_tail = NULL;
    n->q_len = 0;
}

/* Drop the queued batches of slot si (signed or sent by it) and reset its budget. */
void node_queue_forget(dsig_node *n, size_t si)
{
    pthread_mutex_lock(&n->q_lock);
    struct work **pp = &n->q_head, *last = NULL;
    while (*pp) {
        struct work *w = *pp;
        if (w->sidx == si || w->from == si) {
            *pp = w->next;
            n->peers[w->from].queued--;
            n->q_len--;
            dsig_xfree(w, 0);
        } else {
            last = w;
            pp = &w->next;
        }
    }
    n->q_tail = last;
    n->peers[si].queued = 0;
    n->peers[si].tokens = (int64_t)n->opt.peer_verify_burst * 1000;
    n->peers[si].refilled_ms = mono_ms();
    pthread_mutex_unlock(&n->q_lock);
}
