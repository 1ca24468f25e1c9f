/*
 * bench/bench_ping_etcd.c — `dsig ping --etcd`: one end's membership through etcd (docs/node.md
 * "Membership through etcd"). The node registers itself and follows the others; the end waits until
 * its peer has joined, takes the peer's public key (for the Ed25519 baseline) from the membership and
 * the group both belong to.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_ping_internal.h"

#define ETCD_MAX_ENDPOINTS 16
#define PEER_WAIT_MS 60000

/* Split "URL,URL,..." into eps (pointers into buf). The count, or 0 if none or too many. */
static size_t split_endpoints(const char *list, char *buf, size_t cap, const char **eps)
{
    if (strlen(list) >= cap)
        return 0;
    memcpy(buf, list, strlen(list) + 1);
    size_t n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == ETCD_MAX_ENDPOINTS)
            return 0;
        eps[n++] = t;
    }
    return n;
}

int ping_etcd_join(ping_ep *e, const dsig_node_config *cfg, dsig_node_etcd **m)
{
    const ping_opts *o = e->o;
    char buf[2048];
    const char *eps[ETCD_MAX_ENDPOINTS];
    size_t n = split_endpoints(o->etcd, buf, sizeof buf, eps);
    if (n == 0) {
        ep_fail(e, "--etcd: \"%.200s\": 1..%d comma-separated http://HOST:PORT", o->etcd, ETCD_MAX_ENDPOINTS);
        return -1;
    }
    dsig_node_etcd_options eo;
    dsig_node_etcd_options_default(&eo);
    eo.endpoints = eps;
    eo.n_endpoints = n;
    if (o->etcd_prefix)
        eo.prefix = o->etcd_prefix;
    if (dsig_node_etcd_start(m, e->node, &eo) != DSIG_OK) {
        ep_fail(e, "etcd: %s", dsig_last_error_detail());
        return -1;
    }
    if (!o->quiet)
        fprintf(stderr, "# dsig ping: node %" PRIu64 " registered in etcd, waiting for node %" PRIu64 "\n",
                e->k->self_id, e->k->peer_id);
    dsig_key *pk = NULL;
    for (int t = 0; dsig_node_member_public_key(e->node, e->k->peer_id, &pk) != DSIG_OK; t += 20) {
        if (t >= PEER_WAIT_MS) {
            ep_fail(e, "node %" PRIu64 " did not join within %d ms", e->k->peer_id, PEER_WAIT_MS);
            return -1;
        }
        usleep(20000);
    }
    char why[256];
    int rc = ping_keys_set_peer(e->k, pk, why, sizeof why);
    dsig_key_free(pk);
    if (rc != 0) {
        ep_fail(e, "%s", why);
        return -1;
    }
    /* the group both ends belong to: the first by name of this node's that the peer joined */
    for (size_t gi = 0; gi < dsig_node_config_group_count(cfg) && !e->group[0]; gi++) {
        dsig_node_group g;
        if (dsig_node_config_group(cfg, gi, &g) == DSIG_OK &&
            dsig_node_member_in_group(e->node, e->k->self_id, g.name) &&
            dsig_node_member_in_group(e->node, e->k->peer_id, g.name))
            snprintf(e->group, sizeof e->group, "%s", g.name);
    }
    return 0;
}

void ping_etcd_leave(ping_ep *e, dsig_node_etcd *m)
{
    if (!m)
        return;
    dsig_node_etcd_stats st;
    dsig_node_etcd_stats_get(m, &st);
    if (!e->o->quiet)
        fprintf(stderr, "# dsig ping: etcd membership: %" PRIu64 " joined, %" PRIu64 " left, %" PRIu64
                " ignored, %" PRIu64 " registration(s), %" PRIu64 " unanswered request(s)\n",
                st.joined, st.left, st.ignored, st.registrations, st.unavailable);
    dsig_node_etcd_stop(m, 1); /* leave at once: the others need not wait for the lease */
}
