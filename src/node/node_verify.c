/*
 * src/node/node_verify.c — verification of any configured signer's signature: routed to the group its
 * batch seq names, on the fast path through that group's verifier when this node caches the signer's
 * batches (a member of a group of ours), else on the slow path.
 *
 * No lock of its own (the hybrid verifiers lock themselves); the membership lock is held for reading
 * while a signer is looked up and its signature checked (see node_state.h).
 */
#include "core/internal.h"
#include "node/node_state.h"

/*
 * Where a signature from `signer_id` is checked: the group its batch seq names (top byte) when the
 * parameter set matches; *v is that group's verifier if this node caches it for this signer (a member
 * of a group of ours), else NULL (the slow path). DSIG_OK, or DSIG_E_VERIFY for a signature of no
 * configured group.
 */
static int route(dsig_node *n, long si, const uint8_t *sig, size_t sig_len,
                 const struct node_cfg_group **cg, dsig_hybrid_verifier **v)
{
    uint64_t seq;
    uint32_t idx;
    *v = NULL;
    for (size_t gi = 0; gi < n->cfg->n_groups; gi++) {
        const struct node_cfg_group *g = &n->cfg->groups[gi];
        if (dsig_hybrid_sig_locate(g->params, sig, sig_len, &seq, &idx) != DSIG_OK)
            continue;
        size_t named = (size_t)(seq >> NODE_SEQ_GROUP_SHIFT);
        if (named < n->cfg->n_groups && n->cfg->groups[named].params == g->params) {
            gi = named;
            g = &n->cfg->groups[gi];
        }
        *cg = g;
        if (si >= 0 && n->peers[si].verifiers)
            *v = n->peers[si].verifiers[gi];
        return DSIG_OK;
    }
    return dsig_fail(DSIG_E_VERIFY, "node: signature of no configured parameter set");
}

static int verify(dsig_node *n, uint64_t signer_id, const uint8_t *msg, size_t len, const uint8_t *sig,
                  size_t sig_len);

/* Verify any member's signature (fast path when cached). */
int dsig_node_verify(dsig_node *n, uint64_t signer_id, const uint8_t *msg, size_t len, const uint8_t *sig,
                     size_t sig_len)
{
    if (!n || (!msg && len) || !sig)
        return dsig_fail(DSIG_E_ARG, "dsig_node_verify: NULL argument");
    node_mem_rdlock(n);
    int rc = verify(n, signer_id, msg, len, sig, sig_len);
    node_mem_unlock(n);
    return rc;
}

/* dsig_node_verify (mem_lock held for reading). */
static int verify(dsig_node *n, uint64_t signer_id, const uint8_t *msg, size_t len, const uint8_t *sig,
                  size_t sig_len)
{
    long si = node_cfg_index(n->cfg, signer_id);
    if (si < 0) {
        bump(n, C_VFAIL);
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, "node: signer %llu is not in the configuration",
                         (unsigned long long)signer_id);
    }
    const struct node_cfg_group *cg = NULL;
    dsig_hybrid_verifier *v;
    int rc = route(n, si, sig, sig_len, &cg, &v);
    if (rc == DSIG_OK && v) {
        rc = dsig_hybrid_verify(v, signer_id, msg, len, sig, sig_len);
    } else if (rc == DSIG_OK) {
        bump(n, C_SLOW_DIRECT);
        rc = dsig_hybrid_verify_slow(cg->params, n->cfg->nodes[si].pk, signer_id, msg, len, sig, sig_len);
    }
    if (rc != DSIG_OK && rc != DSIG_E_EQUIVOCATION)
        bump(n, C_VFAIL);
    return rc;
}

int dsig_node_can_verify_fast(dsig_node *n, uint64_t signer_id, const uint8_t *sig, size_t sig_len)
{
    if (!n || !sig)
        return 0;
    const struct node_cfg_group *cg = NULL;
    dsig_hybrid_verifier *v;
    node_mem_rdlock(n);
    long si = node_cfg_index(n->cfg, signer_id);
    int fast = si >= 0 && route(n, si, sig, sig_len, &cg, &v) == DSIG_OK && v &&
               dsig_hybrid_can_verify_fast(v, signer_id, sig, sig_len);
    node_mem_unlock(n);
    return fast;
}

size_t dsig_node_sig_bytes(dsig_node *n, const char *group)
{
    struct ngroup *g = n ? node_my_group(n, group) : NULL;
    return g ? dsig_hybrid_params_sig_bytes(g->cg->params) : 0;
}
