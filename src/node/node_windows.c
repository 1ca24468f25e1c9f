/*
 * src/node/node_windows.c — the table of replay windows, one per (signer, group) (replay.c slides one):
 * the plane thread checks a received batch seq before queueing it, a worker marks it once it verified.
 *
 * Owns n->win_lock: see node_state.h.
 */
#include <string.h>

#include "node/node_state.h"

/* Classify seq of (signer index si, group gi). */
int node_windows_check(dsig_node *n, size_t si, size_t gi, uint64_t seq)
{
    pthread_mutex_lock(&n->win_lock);
    int st = node_window_check(&n->windows[si * n->cfg->n_groups + gi], n->win_width, seq);
    pthread_mutex_unlock(&n->win_lock);
    return st;
}

/* Mark seq of (si, gi) as verified. */
void node_windows_mark(dsig_node *n, size_t si, size_t gi, uint64_t seq)
{
    pthread_mutex_lock(&n->win_lock);
    node_window_mark(&n->windows[si * n->cfg->n_groups + gi], n->win_width, seq);
    pthread_mutex_unlock(&n->win_lock);
}

/* Empty the windows of slot si: a new member's seqs are its own. */
void node_windows_reset(dsig_node *n, size_t si)
{
    pthread_mutex_lock(&n->win_lock);
    memset(&n->windows[si * n->cfg->n_groups], 0, n->cfg->n_groups * sizeof *n->windows);
    pthread_mutex_unlock(&n->win_lock);
}
