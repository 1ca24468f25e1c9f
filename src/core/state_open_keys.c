/*
 * The keys open in this process. flock alone does not stop a second open in the same process where
 * it is emulated with POSIX record locks (NFS: a process never conflicts with itself), nor a second
 * copy of the file when the registry is disabled: this list of open keys (by identity) refuses both.
 */
#include <pthread.h>
#include <string.h>

#include "core/state_internal.h"

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static struct state_claim *open_list;

int state_claim_take(struct state_claim *c)
{
    int busy = 0;
    pthread_mutex_lock(&open_mu);
    for (const struct state_claim *o = open_list; o && !busy; o = o->next)
        busy = strcmp(o->thumb, c->thumb) == 0;
    if (!busy) {
        c->next = open_list;
        open_list = c;
        c->claimed = 1;
    }
    pthread_mutex_unlock(&open_mu);
    return busy ? dsig_fail(DSIG_E_STATE, "key %s is in use: this state file or another state file of "
                                          "the same key is already open in this process ('%s')",
                            c->thumb, c->path)
                : DSIG_OK;
}

void state_claim_release(struct state_claim *c)
{
    if (!c->claimed)
        return;
    pthread_mutex_lock(&open_mu);
    for (struct state_claim **pp = &open_list; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    c->claimed = 0;
    pthread_mutex_unlock(&open_mu);
}
