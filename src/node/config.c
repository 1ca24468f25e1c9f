/*
 * src/node/config.c — the membership configuration (docs/node.md, "Configuration"): strict JSON
 * parsing with jansson, bounds, and read-only accessors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <jansson.h>

#include "core/internal.h"
#include "dsig/jwk.h"
#include "net/net.h"
#include "jose/jose_internal.h"
#include "node/node_internal.h"

#define CFG "node config: "

/* Free what one node entry owns and zero it (id 0: a free slot of a node's membership table). */
void node_cfg_entry_clear(struct node_cfg_node *nd)
{
    dsig_xfree(nd->address, 0);
    dsig_key_free(nd->pk);
    dsig_xfree(nd->group_names, 0);
    dsig_xfree(nd->group_idx, 0);
    memset(nd, 0, sizeof *nd);
}

/* Free everything a configuration owns. */
void dsig_node_config_free(dsig_node_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_nodes; i++)
        node_cfg_entry_clear(&cfg->nodes[i]);
    for (size_t i = 0; i < cfg->n_groups; i++) {
        dsig_xfree(cfg->groups[i].name, 0);
        dsig_xfree(cfg->groups[i].members, 0);
    }
    dsig_xfree(cfg->nodes, 0);
    dsig_xfree(cfg->groups, 0);
    dsig_xfree(cfg->by_id, 0);
    dsig_xfree(cfg->text, 0);
    dsig_xfree(cfg, 0);
}

/* Reject any member of `obj` not in the NULL-terminated `allowed` list, naming it. */
static int only_members(const json_t *obj, const char *where, const char *const *allowed)
{
    return jose_json_only_members(obj, CFG, where, allowed);
}

/* A group name: 1..DSIG_NODE_MAX_NAME bytes of [A-Za-z0-9._-]. */
static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > DSIG_NODE_MAX_NAME)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* qsort comparator: groups by name. */
static int cmp_group(const void *a, const void *b)
{
    return strcmp(((const struct node_cfg_group *)a)->name, ((const struct node_cfg_group *)b)->name);
}

/* qsort comparator: u64 ascending. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Parse the "groups" object into cfg->groups (sorted by name). */
static int parse_groups(dsig_node_config *cfg, const json_t *groups)
{
    if (!groups)
        return DSIG_OK;
    if (!json_is_object(groups))
        return dsig_fail(DSIG_E_JSON, CFG "\"groups\" must be an object");
    size_t n = json_object_size(groups);
    if (n > DSIG_NODE_MAX_GROUPS)
        return dsig_fail(DSIG_E_TOO_LARGE, CFG "%zu groups, at most %u", n, DSIG_NODE_MAX_GROUPS);
    cfg->groups = dsig_calloc(n ? n : 1, sizeof *cfg->groups);
    if (!cfg->groups)
        return dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)groups, k, v) {
        if (!valid_name(k))
            return dsig_fail(DSIG_E_FORMAT,
                             CFG "groups: invalid group name \"%.80s\" (1..%u of A-Z a-z 0-9 . _ -)", k,
                             DSIG_NODE_MAX_NAME);
        if (!json_is_object(v))
            return dsig_fail(DSIG_E_JSON, CFG "groups.%s must be an object", k);
        char where[96];
        snprintf(where, sizeof where, "groups.%s", k);
        static const char *const allowed[] = {"params", NULL};
        int rc = only_members(v, where, allowed);
        if (rc)
            return rc;
        struct node_cfg_group *g = &cfg->groups[cfg->n_groups];
        g->name = dsig_strdup(k);
        if (!g->name)
            return dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
        cfg->n_groups++;
        json_t *pv = json_object_get(v, "params");
        if (!pv) {
            g->params = dsig_hybrid_params_default();
        } else {
            if (!json_is_string(pv))
                return dsig_fail(DSIG_E_JSON, CFG "groups.%s.params must be a string", k);
            g->params = dsig_hybrid_params_by_name(json_string_value(pv));
            if (!g->params)
                return dsig_fail(DSIG_E_FORMAT, CFG "groups.%s.params: unknown parameter set \"%.80s\"",
                                 k, json_string_value(pv));
        }
    }
    qsort(cfg->groups, cfg->n_groups, sizeof *cfg->groups, cmp_group);
    return DSIG_OK;
}

/* Parse one node entry against cfg's groups into *nd (zeroed first; on failure the caller clears it
 * with node_cfg_entry_clear). Shared by the configuration file and dynamic membership
 * (node_members.c), so that both accept exactly the same entries. */
int node_cfg_parse_entry(const dsig_node_config *cfg, const json_t *o, const char *where,
                         struct node_cfg_node *nd)
{
    memset(nd, 0, sizeof *nd);
    if (!json_is_object(o))
        return dsig_fail(DSIG_E_JSON, CFG "%s must be an object", where);
    static const char *const allowed[] = {"id", "address", "public_key", "groups", NULL};
    int rc = only_members(o, where, allowed);
    if (rc)
        return rc;

    json_t *id = json_object_get(o, "id");
    if (!json_is_integer(id))
        return dsig_fail(DSIG_E_JSON, CFG "%s.id: missing or not an integer", where);
    json_int_t iv = json_integer_value(id);
    if (iv < 1)
        return dsig_fail(DSIG_E_FORMAT, CFG "%s.id: %lld out of range (1..2^63-1)", where, (long long)iv);
    nd->id = (uint64_t)iv;

    json_t *addr = json_object_get(o, "address");
    if (!json_is_string(addr))
        return dsig_fail(DSIG_E_JSON, CFG "%s.address: missing or not a string", where);
    dsig_net_addr na;
    _Static_assert(DSIG_NODE_MAX_ADDRESS == DSIG_NET_ADDR_TEXT_MAX, "dsig/node.h names the net layer's bound");
    if (json_string_length(addr) >= DSIG_NET_ADDR_TEXT_MAX ||
        dsig_net_addr_parse(json_string_value(addr), &na) != DSIG_OK)
        return dsig_fail(DSIG_E_FORMAT, CFG "%s.address: invalid address \"%.80s\" (tcp:HOST:PORT or "
                         "unix:PATH, numeric hosts)", where, json_string_value(addr));
    if ((na.family == AF_INET && ((const struct sockaddr_in *)&na.ss)->sin_port == 0) ||
        (na.family == AF_INET6 && ((const struct sockaddr_in6 *)&na.ss)->sin6_port == 0))
        return dsig_fail(DSIG_E_FORMAT, CFG "%s.address: port 0 cannot be connected to", where);
    nd->address = dsig_strdup(json_string_value(addr));
    if (!nd->address)
        return dsig_fail(DSIG_E_NOMEM, CFG "out of memory");

    json_t *pk = json_object_get(o, "public_key");
    if (!json_is_object(pk))
        return dsig_fail(DSIG_E_JSON, CFG "%s.public_key: missing or not a JWK object", where);
    if (json_object_get(pk, "d"))
        return dsig_fail(DSIG_E_KEY, CFG "%s.public_key: contains a private key (\"d\"); the "
                         "configuration must hold public keys only", where);
    char *jwk = json_dumps(pk, JSON_COMPACT);
    if (!jwk)
        return dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
    rc = dsig_jwk_import(&nd->pk, jwk, strlen(jwk));
    jose_json_text_free(jwk); /* the application may have set its own allocator (the dsig tool does) */
    if (rc)
        return dsig_fail_prefix(rc, CFG "%s.public_key", where);
    const char *crv = dsig_key_curve(nd->pk);
    if (strcmp(dsig_key_kty(nd->pk), "OKP") != 0 || !crv || strcmp(crv, "Ed25519") != 0)
        return dsig_fail(DSIG_E_KEY_MISMATCH, CFG "%s.public_key: must be an OKP Ed25519 key", where);
    /* A node key signs batch roots and HELLO answers (each under its own derived key): it must be a
     * key made for DSig, never one that also signs plain Ed25519 (docs/dsig.md "Key separation"). */
    if ((rc = dsig_key_check_alg(nd->pk, dsig_alg_by_name("DSig"))) != DSIG_OK)
        return dsig_fail_prefix(rc, CFG "%s.public_key", where);
    rc = dsig_jwk_thumbprint(nd->pk, nd->thumb);
    if (rc)
        return rc;

    json_t *gs = json_object_get(o, "groups");
    if (gs && !json_is_array(gs))
        return dsig_fail(DSIG_E_JSON, CFG "%s.groups must be an array of group names", where);
    size_t ng = gs ? json_array_size(gs) : 0;
    if (ng > DSIG_NODE_MAX_GROUPS)
        return dsig_fail(DSIG_E_TOO_LARGE, CFG "%s.groups: %zu entries, at most %u", where, ng,
                         DSIG_NODE_MAX_GROUPS);
    nd->group_names = dsig_calloc(ng ? ng : 1, sizeof *nd->group_names);
    nd->group_idx = dsig_calloc(ng ? ng : 1, sizeof *nd->group_idx);
    if (!nd->group_names || !nd->group_idx)
        return dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
    for (size_t j = 0; j < ng; j++) {
        json_t *s = json_array_get(gs, j);
        if (!json_is_string(s))
            return dsig_fail(DSIG_E_JSON, CFG "%s.groups[%zu] must be a string", where, j);
        long gi = node_cfg_group_index(cfg, json_string_value(s), json_string_length(s));
        if (gi < 0)
            return dsig_fail(DSIG_E_FORMAT, CFG "%s.groups[%zu]: undefined group \"%.80s\"", where, j,
                             json_string_value(s));
        for (size_t q = 0; q < j; q++)
            if (nd->group_idx[q] == (size_t)gi)
                return dsig_fail(DSIG_E_FORMAT, CFG "%s.groups[%zu]: group \"%s\" listed twice", where,
                                 j, cfg->groups[gi].name);
        nd->group_idx[j] = (size_t)gi;
        nd->group_names[j] = cfg->groups[gi].name;
        nd->n_groups++;
    }
    return DSIG_OK;
}

/* Parse one entry of "nodes". */
static int parse_node(dsig_node_config *cfg, size_t i, const json_t *o)
{
    char where[48];
    snprintf(where, sizeof where, "nodes[%zu]", i);
    return node_cfg_parse_entry(cfg, o, where, &cfg->nodes[i]);
}

/* Rebuild cfg->by_id from the entries with an id (insertion sort: ≤ 256 entries, and no comparator
 * context shared between threads); cfg->n_index gets their count. by_id has room for n_nodes. */
void node_cfg_sort_ids(dsig_node_config *cfg)
{
    size_t k = 0;
    for (size_t i = 0; i < cfg->n_nodes; i++) {
        if (cfg->nodes[i].id == 0)
            continue;
        size_t j = k++;
        while (j > 0 && cfg->nodes[cfg->by_id[j - 1]].id > cfg->nodes[i].id) {
            cfg->by_id[j] = cfg->by_id[j - 1];
            j--;
        }
        cfg->by_id[j] = i;
    }
    cfg->n_index = k;
}

/* Cross-node checks and derived tables: unique ids/addresses/keys, group member lists. */
static int finish(dsig_node_config *cfg)
{
    cfg->by_id = dsig_calloc(cfg->n_nodes ? cfg->n_nodes : 1, sizeof *cfg->by_id);
    if (!cfg->by_id)
        return dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
    node_cfg_sort_ids(cfg);
    for (size_t i = 1; i < cfg->n_nodes; i++)
        if (cfg->nodes[cfg->by_id[i]].id == cfg->nodes[cfg->by_id[i - 1]].id)
            return dsig_fail(DSIG_E_FORMAT, CFG "nodes[%zu].id: duplicate id %llu", cfg->by_id[i],
                             (unsigned long long)cfg->nodes[cfg->by_id[i]].id);
    for (size_t i = 0; i < cfg->n_nodes; i++)
        for (size_t j = 0; j < i; j++) {
            if (strcmp(cfg->nodes[i].address, cfg->nodes[j].address) == 0)
                return dsig_fail(DSIG_E_FORMAT, CFG "nodes[%zu].address: same address as nodes[%zu]", i,
                                 j);
            if (strcmp(cfg->nodes[i].thumb, cfg->nodes[j].thumb) == 0)
                return dsig_fail(DSIG_E_KEY, CFG "nodes[%zu].public_key: same key as nodes[%zu] (every "
                                 "node needs its own key)", i, j);
        }
    for (size_t g = 0; g < cfg->n_groups; g++) {
        struct node_cfg_group *gr = &cfg->groups[g];
        size_t cnt = 0;
        for (size_t i = 0; i < cfg->n_nodes; i++)
            for (size_t j = 0; j < cfg->nodes[i].n_groups; j++)
                cnt += cfg->nodes[i].group_idx[j] == g;
        if (cnt == 0)
            return dsig_fail(DSIG_E_FORMAT, CFG "groups.%s: no node is a member", gr->name);
        if (cnt > DSIG_NODE_MAX_GROUP_MEMBERS)
            return dsig_fail(DSIG_E_TOO_LARGE, CFG "groups.%s: %zu members, at most %u", gr->name, cnt,
                             DSIG_NODE_MAX_GROUP_MEMBERS);
        gr->members = dsig_calloc(cnt, sizeof *gr->members);
        if (!gr->members)
            return dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
        for (size_t i = 0; i < cfg->n_nodes; i++)
            for (size_t j = 0; j < cfg->nodes[i].n_groups; j++)
                if (cfg->nodes[i].group_idx[j] == g)
                    gr->members[gr->n_members++] = cfg->nodes[i].id;
        qsort(gr->members, gr->n_members, sizeof *gr->members, cmp_u64);
    }
    return DSIG_OK;
}

/* Parse a configuration from JSON text. */
int dsig_node_config_parse(const char *json, size_t len, dsig_node_config **out)
{
    if (!json || !out)
        return dsig_fail(DSIG_E_ARG, "dsig_node_config_parse: NULL argument");
    *out = NULL;
    if (len > DSIG_NODE_MAX_CONFIG_BYTES)
        return dsig_fail(DSIG_E_TOO_LARGE, CFG "%zu bytes, at most %u", len, DSIG_NODE_MAX_CONFIG_BYTES);
    json_error_t err;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return dsig_fail(DSIG_E_JSON, CFG "invalid JSON at line %d column %d: %s", err.line, err.column,
                         err.text);
    dsig_node_config *cfg = dsig_calloc(1, sizeof *cfg);
    int rc = DSIG_OK;
    if (!cfg) {
        rc = dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
        goto done;
    }
    if (!json_is_object(root)) {
        rc = dsig_fail(DSIG_E_JSON, CFG "the top level must be an object");
        goto done;
    }
    static const char *const allowed[] = {"nodes", "groups", NULL};
    if ((rc = only_members(root, "top level", allowed)) != DSIG_OK)
        goto done;
    if ((rc = parse_groups(cfg, json_object_get(root, "groups"))) != DSIG_OK)
        goto done;
    json_t *nodes = json_object_get(root, "nodes");
    if (!json_is_array(nodes) || json_array_size(nodes) == 0) {
        rc = dsig_fail(DSIG_E_JSON, CFG "\"nodes\": missing, not an array, or empty");
        goto done;
    }
    size_t nn = json_array_size(nodes);
    if (nn > DSIG_NODE_MAX_NODES) {
        rc = dsig_fail(DSIG_E_TOO_LARGE, CFG "%zu nodes, at most %u", nn, DSIG_NODE_MAX_NODES);
        goto done;
    }
    cfg->nodes = dsig_calloc(nn, sizeof *cfg->nodes);
    if (!cfg->nodes) {
        rc = dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nn; i++) {
        cfg->n_nodes = i + 1;
        if ((rc = parse_node(cfg, i, json_array_get(nodes, i))) != DSIG_OK)
            goto done;
    }
    if ((rc = finish(cfg)) != DSIG_OK)
        goto done;
    cfg->text = dsig_malloc(len + 1);
    if (!cfg->text) {
        rc = dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
        goto done;
    }
    memcpy(cfg->text, json, len);
    cfg->text[len] = 0;
    cfg->text_len = len;
done:
    json_decref(root);
    if (rc) {
        dsig_node_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return DSIG_OK;
}

/* Read a whole configuration file (bounded) and parse it. */
int dsig_node_config_load(const char *path, dsig_node_config **out)
{
    if (!path || !out)
        return dsig_fail(DSIG_E_ARG, "dsig_node_config_load: NULL argument");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return dsig_fail(DSIG_E_IO, CFG "cannot open %s: %s", path, strerror(errno));
    char *buf = dsig_malloc(DSIG_NODE_MAX_CONFIG_BYTES + 1);
    if (!buf) {
        fclose(f);
        return dsig_fail(DSIG_E_NOMEM, CFG "out of memory");
    }
    size_t n = fread(buf, 1, DSIG_NODE_MAX_CONFIG_BYTES + 1, f);
    int ioerr = ferror(f);
    fclose(f);
    int rc;
    if (ioerr)
        rc = dsig_fail(DSIG_E_IO, CFG "cannot read %s", path);
    else if (n > DSIG_NODE_MAX_CONFIG_BYTES)
        rc = dsig_fail(DSIG_E_TOO_LARGE, CFG "%s is larger than %u bytes", path,
                       DSIG_NODE_MAX_CONFIG_BYTES);
    else
        rc = dsig_node_config_parse(buf, n, out);
    dsig_xfree(buf, 0);
    return rc;
}

/* Binary search of the id table. */
long node_cfg_index(const dsig_node_config *cfg, uint64_t id)
{
    size_t lo = 0, hi = cfg->n_index;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t v = cfg->nodes[cfg->by_id[mid]].id;
        if (v == id)
            return (long)cfg->by_id[mid];
        if (v < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Linear search of the (≤ 64) group names. */
long node_cfg_group_index(const dsig_node_config *cfg, const char *name, size_t len)
{
    for (size_t i = 0; i < cfg->n_groups; i++)
        if (strlen(cfg->groups[i].name) == len && memcmp(cfg->groups[i].name, name, len) == 0)
            return (long)i;
    return -1;
}

/* Position of a member id in a group's ascending member list. */
int node_cfg_member_pos(const struct node_cfg_group *g, uint64_t id)
{
    for (size_t i = 0; i < g->n_members; i++)
        if (g->members[i] == id)
            return (int)i;
    return -1;
}

/* Public view of a node entry. */
static void member_view(const struct node_cfg_node *nd, dsig_node_member *out)
{
    out->id = nd->id;
    out->address = nd->address;
    out->public_key = nd->pk;
    out->n_groups = nd->n_groups;
    out->groups = nd->group_names;
}

/* Number of configured nodes. */
size_t dsig_node_config_node_count(const dsig_node_config *cfg)
{
    return cfg ? cfg->n_nodes : 0;
}

/* The i-th node in file order. */
int dsig_node_config_node(const dsig_node_config *cfg, size_t i, dsig_node_member *out)
{
    if (!cfg || !out || i >= cfg->n_nodes)
        return dsig_fail(DSIG_E_ARG, "dsig_node_config_node: index out of range");
    member_view(&cfg->nodes[i], out);
    return DSIG_OK;
}

/* The node with a given id. */
int dsig_node_config_find(const dsig_node_config *cfg, uint64_t id, dsig_node_member *out)
{
    if (!cfg || !out)
        return dsig_fail(DSIG_E_ARG, "dsig_node_config_find: NULL argument");
    long i = node_cfg_index(cfg, id);
    if (i < 0)
        return dsig_fail(DSIG_E_UNKNOWN_SIGNER, CFG "no node with id %llu", (unsigned long long)id);
    member_view(&cfg->nodes[i], out);
    return DSIG_OK;
}

/* Number of groups. */
size_t dsig_node_config_group_count(const dsig_node_config *cfg)
{
    return cfg ? cfg->n_groups : 0;
}

/* Public view of a group entry. */
static void group_view(const struct node_cfg_group *g, dsig_node_group *out)
{
    out->name = g->name;
    out->params = g->params;
    out->n_members = g->n_members;
    out->members = g->members;
}

/* The i-th group (sorted by name). */
int dsig_node_config_group(const dsig_node_config *cfg, size_t i, dsig_node_group *out)
{
    if (!cfg || !out || i >= cfg->n_groups)
        return dsig_fail(DSIG_E_ARG, "dsig_node_config_group: index out of range");
    group_view(&cfg->groups[i], out);
    return DSIG_OK;
}

/* A group by name. */
int dsig_node_config_group_find(const dsig_node_config *cfg, const char *name, dsig_node_group *out)
{
    if (!cfg || !name || !out)
        return dsig_fail(DSIG_E_ARG, "dsig_node_config_group_find: NULL argument");
    long i = node_cfg_group_index(cfg, name, strlen(name));
    if (i < 0)
        return dsig_fail(DSIG_E_ARG, CFG "undefined group \"%.80s\"", name);
    group_view(&cfg->groups[i], out);
    return DSIG_OK;
}
