/*
 * src/node/node_acks.c — BATCH_ACKs: sent on the connection the batch came from once it verified (or
 * when a re-sent batch is already cached); one that a full send queue refuses waits in a bounded list
 * for the plane thread's retry. Beyond the bound it is dropped: the signer's re-sync recovers.
 *
 * Owns n->ack_lock: see node_state.h.
 */
#include <string.h>

#include "node/node_state.h"

/* Keep a refused ACK for the plane thread's retry (duplicates are kept once). */
static void defer_ack(dsig_node *n, uint64_t conn, uint64_t signer, uint64_t seq, size_t gi)
{
    pthread_mutex_lock(&n->ack_lock);
    for (size_t i = 0; i < n->n_acks; i++) {
        struct pending_ack *a = &n->acks[i];
        if (a->conn == conn && a->signer == signer && a->seq == seq && a->gi == gi) {
            pthread_mutex_unlock(&n->ack_lock);
            return;
        }
    }
    if (n->n_acks == ACK_PENDING_MAX) {
        pthread_mutex_unlock(&n->ack_lock);
        bump(n, C_ACK_DROP);
        return;
    }
    n->acks[n->n_acks++] = (struct pending_ack){conn, signer, seq, gi};
    atomic_store_explicit(&n->retry, 1, memory_order_relaxed);
    pthread_mutex_unlock(&n->ack_lock);
    bump(n, C_ACK_DEFER);
}

/* Queue one ACK frame; DSIG_E_WOULD_BLOCK and other errors are returned. */
static int ack_frame(dsig_node *n, uint64_t conn, uint64_t signer, uint64_t seq, size_t gi)
{
    uint8_t a[NODE_ACK_MAX];
    const struct node_cfg_group *cg = &n->cfg->groups[gi];
    size_t al = node_ack_encode(a, signer, seq, cg->name, strlen(cg->name));
    return dsig_net_send(n->loop, conn, DSIG_NODE_T_BATCH_ACK, a, al);
}

/* Send an ACK for (signer, group, seq) back on `conn`; a full send queue defers it for retry. */
void node_send_ack(dsig_node *n, uint64_t conn, uint64_t signer, uint64_t seq, size_t gi)
{
    if (ack_frame(n, conn, signer, seq, gi) == DSIG_E_WOULD_BLOCK)
        defer_ack(n, conn, signer, seq, gi);
}

/* Plane thread: retry the deferred ACKs; those whose connection is gone are dropped (the signer
 * re-syncs when it reconnects). Returns 1 if some still wait. */
int node_retry_acks(dsig_node *n)
{
    pthread_mutex_lock(&n->ack_lock);
    size_t k = 0;
    for (size_t i = 0; i < n->n_acks; i++) {
        struct pending_ack a = n->acks[i];
        int rc = ack_frame(n, a.conn, a.signer, a.seq, a.gi);
        if (rc == DSIG_OK)
            bump(n, C_ACK_RETRY);
        else if (rc == DSIG_E_WOULD_BLOCK)
            n->acks[k++] = a;
        else
            bump(n, C_ACK_DROP);
    }
    n->n_acks = k;
    pthread_mutex_unlock(&n->ack_lock);
    return k != 0;
}
