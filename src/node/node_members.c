/*
 * src/node/node_members.c — membership at run time: members join (dsig_node_member_add) and leave
 * (dsig_node_member_remove) while the node runs, without restarting it or the others
 * (docs/node.md "Dynamic membership").
 *
 * The node's own copy of the configuration is the membership table: its node entries are slots
 * (DSIG_NODE_MAX_NODES of them, allocated once so no pointer into them ever moves), a member that
 * leaves frees its slot (id 0) and the next one to join may take it, with a new generation so that a
 * connection or a queued batch of the earlier occupant is never taken for the new one's. A group's
 * member list is kept by position (a member's bit in the ack masks of node_batches.c): a leaving
 * member leaves a hole (0) that the next one fills. The groups themselves — names and parameter sets
 * — are the configuration's and do not change.
 *
 * Owns n->mem_lock: see node_state.h.
 */
#include <string.h>

#include "classic/ed25519_derive.h"
#include "classic/eddsa.h"
#include "core/internal.h"
#include "node/node_state.h"

#define MEMBER_JSON_MAX (64u * 1024u) /* one entry: an id, an address, a JWK and ≤ 64 group names */

void node_mem_rdlock(dsig_node *n)
{
    pthread_rwlock_rdlock(&n->mem_lock);
}

void node_mem_unlock(dsig_node *n)
{
    pthread_rwlock_unlock(&n->mem_lock);
}

int node_slot_is(const dsig_node *n, long i, uint64_t gen)
{
    return i >= 0 && (size_t)i < n->cfg->n_nodes && (size_t)i != n->my_idx && n->peers[i].id != 0 &&
           n->peers[i].gen == gen;
}

/* Set up slot i for cfg->nodes[i]. */
int node_slot_init(dsig_node *n, size_t i)
{
    const struct node_cfg_node *nd = &n->cfg->nodes[i];
    struct peer *p = &n->peers[i];
    p->id = nd->id;
    p->gen = ++n->gens;
    p->out_conn = 0;
    p->out_ready = 0;
    atomic_store_explicit(&p->ready, 0, memory_order_relaxed);
    atomic_store_explicit(&p->in_conn, 0, memory_order_relaxed);
    p->queued = 0;
    p->tokens = (int64_t)n->opt.peer_verify_burst * 1000;
    p->refilled_ms = mono_ms();
    const struct dsig_eddsa_key *pk = nd->pk->impl;
    int rc = dsig_ed25519_derive_public(pk->pk, NODE_AUTH_KEY_LABEL, p->auth_pk);
    if (rc)
        return rc;
    if (dsig_net_addr_parse(nd->address, &p->addr) != DSIG_OK)
        return dsig_fail(DSIG_E_FORMAT, "node: bad address %s", nd->address);
    if (i == n->my_idx)
        return DSIG_OK;
    p->verifiers = dsig_calloc(n->cfg->n_groups ? n->cfg->n_groups : 1, sizeof *p->verifiers);
    if (!p->verifiers)
        return dsig_fail(DSIG_E_NOMEM, "node: out of memory");
    for (size_t j = 0; j < nd->n_groups; j++) {
        size_t gi = nd->group_idx[j];
        if (!n->groups[gi].member)
            continue; /* a group of its that is not ours: its signatures there take the slow path */
        dsig_hybrid_verifier_options vo;
        dsig_hybrid_verifier_options_default(&vo);
        vo.threads = 0; /* the node's workers verify: the verdict decides the ACK */
        vo.cache_batches = n->opt.cache_batches;
        vo.max_signers = 1;
        if ((rc = dsig_hybrid_verifier_new(&p->verifiers[gi], n->cfg->groups[gi].params, &vo)) != DSIG_OK ||
            (rc = dsig_hybrid_verifier_add_signer(p->verifiers[gi], nd->id, nd->pk)) != DSIG_OK)
            return rc;
    }
    return DSIG_OK;
}

/* Free slot i's verifiers: the batches cached for its member go with them (their counts stay in the
 * node's statistics). */
void node_slot_free(dsig_node *n, size_t i)
{
    struct peer *p = &n->peers[i];
    if (!p->verifiers)
        return;
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        if (!p->verifiers[gi])
            continue;
        dsig_hybrid_verifier_stats vs;
        dsig_hybrid_verifier_stats_get(p->verifiers[gi], &vs);
        atomic_fetch_add_explicit(&n->gone_fast, vs.fast, memory_order_relaxed);
        atomic_fetch_add_explicit(&n->gone_slow, vs.slow, memory_order_relaxed);
        atomic_fetch_add_explicit(&n->gone_equiv, vs.equivocations, memory_order_relaxed);
        dsig_hybrid_verifier_free(p->verifiers[gi]);
    }
    dsig_xfree(p->verifiers, 0);
    p->verifiers = NULL;
}

/* Take member slot i out (mem_lock held for writing): close its connections, forget its
 * acknowledgements, queued batches and cached keys, free its entry. */
static void member_drop(dsig_node *n, size_t i)
{
    struct peer *p = &n->peers[i];
    if (p->out_conn)
        (void)dsig_net_close(n->loop, p->out_conn); /* an outgoing connection stops reconnecting */
    uint64_t in = atomic_exchange_explicit(&p->in_conn, 0, memory_order_acq_rel);
    if (in)
        (void)dsig_net_close(n->loop, in);
    /* Other connections that claimed its id are the plane thread's: their peer_gen no longer matches
     * (node_slot_is) and their next frame closes them. */
    int pos[DSIG_NODE_MAX_GROUPS];
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        struct node_cfg_group *g = &n->cfg->groups[gi];
        pos[gi] = node_cfg_member_pos(g, p->id);
        if (pos[gi] < 0)
            continue;
        g->members[pos[gi]] = 0; /* a hole the next member may fill */
        while (g->n_members && g->members[g->n_members - 1] == 0)
            g->n_members--;
    }
    node_members_changed(n, (long)i, pos);
    node_queue_forget(n, i);
    node_slot_free(n, i);
    node_cfg_entry_clear(&n->cfg->nodes[i]);
    p->id = 0;
    p->out_conn = 0;
    while (n->cfg->n_nodes && n->cfg->nodes[n->cfg->n_nodes - 1].id == 0 && n->cfg->n_nodes - 1 != n->my_idx)
        n->cfg->n_nodes--;
    node_cfg_sort_ids(n->cfg);
}

/* Is entry nd, a member now at slot i, the same member (address, key, groups)? */
static int same_entry(const struct node_cfg_node *a, const struct node_cfg_node *b)
{
    if (a->id != b->id || strcmp(a->address, b->address) != 0 || strcmp(a->thumb, b->thumb) != 0 ||
        a->n_groups != b->n_groups)
        return 0;
    for (size_t j = 0; j < a->n_groups; j++) {
        int found = 0;
        for (size_t k = 0; k < b->n_groups; k++)
            found |= a->group_idx[j] == b->group_idx[k];
        if (!found)
            return 0;
    }
    return 1;
}

/* Parse one entry (bounded, strict JSON) against the node's groups (immutable: no lock needed). */
static int parse_member(dsig_node *n, const char *json, size_t len, struct node_cfg_node *nd)
{
    memset(nd, 0, sizeof *nd);
    if (len > MEMBER_JSON_MAX)
        return dsig_fail(DSIG_E_TOO_LARGE, "node member: %zu bytes, at most %u", len, MEMBER_JSON_MAX);
    json_error_t err;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return dsig_fail(DSIG_E_JSON, "node member: invalid JSON at line %d column %d: %s", err.line,
                         err.column, err.text);
    int rc = node_cfg_parse_entry(n->cfg, root, "member", nd);
    json_decref(root);
    if (rc)
        node_cfg_entry_clear(nd);
    return rc;
}

/*
 * Install parsed entry *nd (consumed: moved into a slot, or cleared). An existing member with the
 * same id: replace 0 refuses (DSIG_E_STATE), replace 1 keeps it if it is the same entry (*changed 0)
 * and otherwise takes it out first. (mem_lock held for writing.)
 */
static int member_put(dsig_node *n, struct node_cfg_node *nd, int replace, int *changed)
{
    dsig_node_config *cfg = n->cfg;
    *changed = 0;
    long cur = node_cfg_index(cfg, nd->id);
    int rc = DSIG_OK;
    if (cur >= 0 && (size_t)cur == n->my_idx)
        rc = same_entry(&cfg->nodes[cur], nd) ? DSIG_OK
             : dsig_fail(DSIG_E_STATE, "node member %llu: this node's own entry cannot change",
                         (unsigned long long)nd->id);
    else if (cur >= 0 && !replace)
        rc = dsig_fail(DSIG_E_STATE, "node member %llu: already a member (remove it first)",
                       (unsigned long long)nd->id);
    if (rc || (cur >= 0 && same_entry(&cfg->nodes[cur], nd))) {
        node_cfg_entry_clear(nd);
        return rc;
    }
    /* the same checks as the configuration parser's cross-node ones, against the others */
    for (size_t i = 0; i < cfg->n_nodes; i++) {
        const struct node_cfg_node *o = &cfg->nodes[i];
        if (o->id == 0 || (long)i == cur)
            continue;
        if (strcmp(o->address, nd->address) == 0)
            rc = dsig_fail(DSIG_E_FORMAT, "node member %llu: same address as member %llu (%s)",
                           (unsigned long long)nd->id, (unsigned long long)o->id, o->address);
        else if (strcmp(o->thumb, nd->thumb) == 0)
            rc = dsig_fail(DSIG_E_KEY, "node member %llu: same key as member %llu (every node needs its "
                           "own key)", (unsigned long long)nd->id, (unsigned long long)o->id);
        if (rc) {
            node_cfg_entry_clear(nd);
            return rc;
        }
    }
    for (size_t j = 0; j < nd->n_groups; j++) {
        const struct node_cfg_group *g = &cfg->groups[nd->group_idx[j]];
        size_t live = 0;
        for (size_t k = 0; k < g->n_members; k++)
            live += g->members[k] != 0 && (long)k != (cur >= 0 ? node_cfg_member_pos(g, nd->id) : -1);
        if (live >= DSIG_NODE_MAX_GROUP_MEMBERS) {
            rc = dsig_fail(DSIG_E_TOO_LARGE, "node member %llu: group %s has %u members already",
                           (unsigned long long)nd->id, g->name, DSIG_NODE_MAX_GROUP_MEMBERS);
            node_cfg_entry_clear(nd);
            return rc;
        }
    }
    if (cur >= 0)
        member_drop(n, (size_t)cur); /* a new address, key or groups: a new member under the old id */
    size_t slot = 0;
    while (slot < cfg->n_nodes && (cfg->nodes[slot].id != 0 || slot == n->my_idx))
        slot++;
    if (slot == DSIG_NODE_MAX_NODES) {
        rc = dsig_fail(DSIG_E_TOO_LARGE, "node member %llu: %u members already", (unsigned long long)nd->id,
                       DSIG_NODE_MAX_NODES);
        node_cfg_entry_clear(nd);
        return rc;
    }
    if (slot == cfg->n_nodes)
        cfg->n_nodes++;
    cfg->nodes[slot] = *nd;
    memset(nd, 0, sizeof *nd);
    int pos[DSIG_NODE_MAX_GROUPS];
    for (size_t gi = 0; gi < cfg->n_groups; gi++)
        pos[gi] = -1;
    for (size_t j = 0; j < cfg->nodes[slot].n_groups; j++) {
        size_t gi = cfg->nodes[slot].group_idx[j];
        struct node_cfg_group *g = &cfg->groups[gi];
        size_t k = 0;
        while (k < g->n_members && g->members[k] != 0)
            k++;
        if (k == g->n_members)
            g->n_members++;
        g->members[k] = cfg->nodes[slot].id;
        pos[gi] = (int)k;
    }
    node_cfg_sort_ids(cfg);
    rc = node_slot_init(n, slot);
    if (rc == DSIG_OK) {
        node_windows_reset(n, slot);
        node_queue_forget(n, slot);
        node_members_changed(n, -1, pos); /* its bits start clear: wait_ready waits for its ACKs */
        if (n->dialing)
            rc = dsig_net_connect(n->loop, &n->peers[slot].addr, &n->peers[slot].out_conn);
    }
    if (rc) {
        member_drop(n, slot);
        return rc;
    }
    *changed = 1;
    return DSIG_OK;
}

int node_member_put_json(dsig_node *n, const char *json, size_t len, int *changed)
{
    struct node_cfg_node nd;
    int rc = parse_member(n, json, len, &nd);
    *changed = 0;
    if (rc)
        return rc;
    pthread_rwlock_wrlock(&n->mem_lock);
    rc = member_put(n, &nd, 1, changed);
    pthread_rwlock_unlock(&n->mem_lock);
    return rc;
}

int dsig_node_member_add(dsig_node *n, const char *json, size_t len)
{
    if (!n || !json)
        return dsig_fail(DSIG_E_ARG, "dsig_node_member_add: NULL argument");
    struct node_cfg_node nd;
    int rc = parse_member(n, json, len, &nd);
    if (rc)
        return rc;
    int changed;
    pthread_rwlock_wrlock(&n->mem_lock);
    rc = member_put(n, &nd, 0, &changed);
    pthread_rwlock_unlock(&n->mem_lock);
    return rc;
}

int dsig_node_member_remove(dsig_node *n, uint64_t id)
{
    if (!n)
        return dsig_fail(DSIG_E_ARG, "dsig_node_member_remove: NULL argument");
    if (id == n->my_id)
        return dsig_fail(DSIG_E_ARG, "node: %llu is this node; it cannot remove itself",
                         (unsigned long long)id);
    pthread_rwlock_wrlock(&n->mem_lock);
    long i = node_cfg_index(n->cfg, id);
    if (i >= 0)
        member_drop(n, (size_t)i);
    pthread_rwlock_unlock(&n->mem_lock);
    if (i < 0)
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "node: %llu is not a member", (unsigned long long)id);
    return DSIG_OK;
}

int dsig_node_member_public_key(dsig_node *n, uint64_t id, dsig_key **out)
{
    if (!n || !out)
        return dsig_fail(DSIG_E_ARG, "dsig_node_member_public_key: NULL argument");
    *out = NULL;
    node_mem_rdlock(n);
    long i = node_cfg_index(n->cfg, id);
    int rc = i < 0 ? dsig_fail(DSIG_E_UNKNOWN_SIGNER, "node: %llu is not a member", (unsigned long long)id)
                   : dsig_key_public(out, n->cfg->nodes[i].pk);
    node_mem_unlock(n);
    return rc;
}

size_t dsig_node_member_ids(dsig_node *n, uint64_t *ids, size_t cap)
{
    if (!n)
        return 0;
    node_mem_rdlock(n);
    size_t count = n->cfg->n_index;
    for (size_t k = 0; ids && k < count && k < cap; k++)
        ids[k] = n->cfg->nodes[n->cfg->by_id[k]].id;
    node_mem_unlock(n);
    return count;
}

/* This node's own entry of its configuration, as compact JSON (dsig_malloc'd), or NULL. */
char *node_self_entry(dsig_node *n, size_t *len)
{
    json_error_t err;
    json_t *root = json_loadb(n->cfg->text, n->cfg->text_len, 0, &err);
    json_t *nodes = root ? json_object_get(root, "nodes") : NULL;
    char *out = NULL;
    for (size_t i = 0; i < json_array_size(nodes) && !out; i++) {
        json_t *o = json_array_get(nodes, i);
        if ((uint64_t)json_integer_value(json_object_get(o, "id")) != n->my_id)
            continue;
        char *s = json_dumps(o, JSON_COMPACT);
        if (!s)
            break;
        *len = strlen(s);
        out = dsig_malloc(*len + 1);
        if (out)
            memcpy(out, s, *len + 1);
        json_malloc_t jm;
        json_free_t jf;
        json_get_alloc_funcs(&jm, &jf); /* the application may have set its own (the dsig tool does) */
        jf(s);
    }
    json_decref(root);
    if (!out)
        (void)dsig_fail(DSIG_E_NOMEM, "node %llu: cannot write its own entry", (unsigned long long)n->my_id);
    return out;
}

int dsig_node_member_in_group(dsig_node *n, uint64_t id, const char *group)
{
    if (!n || !group)
        return 0;
    long gi = node_cfg_group_index(n->cfg, group, strlen(group));
    node_mem_rdlock(n);
    int in = gi >= 0 && node_cfg_index(n->cfg, id) >= 0 && node_cfg_member_pos(&n->cfg->groups[gi], id) >= 0;
    node_mem_unlock(n);
    return in;
}
