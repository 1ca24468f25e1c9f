/*
 * Fuzz target: the node configuration (dsig_node_config_parse, src/node/config.c: nodes with ids,
 * addresses and Ed25519 public JWKs, groups with DSig parameter presets). The input is the JSON text.
 *
 * Invariants (abort on violation): a refused configuration says why; an accepted one is consistent —
 * every node is found by its id, ids and addresses are unique, every key is public only, groups are
 * sorted by name and found by name, members are ascending, exist as nodes and list the group, every
 * group has a member, and the accessors refuse indexes past the end.
 */
#include <string.h>

#include "dsig/hybrid.h"
#include "dsig/node.h"
#include "fuzz_common.h"

#define FNC_MAX_INPUT 65536u

static void check_config(const dsig_node_config *cfg)
{
    const size_t nn = dsig_node_config_node_count(cfg), ng = dsig_node_config_group_count(cfg);
    dsig_node_member m, m2;
    dsig_node_group g, g2;
    FUZZ_CHECK(nn >= 1, "a configuration with no node");
    for (size_t i = 0; i < nn; i++) {
        FUZZ_CHECK(dsig_node_config_node(cfg, i, &m) == DSIG_OK, "node %zu of %zu", i, nn);
        FUZZ_CHECK(m.id >= 1 && m.id <= DSIG_NODE_MAX_ID, "node id %llu out of range", (unsigned long long)m.id);
        FUZZ_CHECK(dsig_node_config_find(cfg, m.id, &m2) == DSIG_OK && m2.address == m.address,
                   "node %llu not found by its id", (unsigned long long)m.id);
        FUZZ_CHECK(m.public_key && !dsig_key_has_private(m.public_key), "node key with a private part");
        for (size_t j = 0; j < i; j++) {
            FUZZ_CHECK(dsig_node_config_node(cfg, j, &m2) == DSIG_OK, "node %zu", j);
            FUZZ_CHECK(m2.id != m.id && strcmp(m2.address, m.address) != 0, "duplicate node id or address");
        }
        for (size_t k = 0; k < m.n_groups; k++) {
            FUZZ_CHECK(dsig_node_config_group_find(cfg, m.groups[k], &g) == DSIG_OK, "node in undefined group %s",
                       m.groups[k]);
            int found = 0;
            for (size_t x = 0; x < g.n_members; x++)
                found |= g.members[x] == m.id;
            FUZZ_CHECK(found, "node %llu lists group %s which does not list it", (unsigned long long)m.id, g.name);
        }
    }
    for (size_t i = 0; i < ng; i++) {
        FUZZ_CHECK(dsig_node_config_group(cfg, i, &g) == DSIG_OK, "group %zu of %zu", i, ng);
        FUZZ_CHECK(g.params && g.n_members >= 1, "group %s without parameters or members", g.name);
        FUZZ_CHECK(dsig_node_config_group_find(cfg, g.name, &g2) == DSIG_OK && g2.members == g.members,
                   "group %s not found by its name", g.name);
        if (i) {
            FUZZ_CHECK(dsig_node_config_group(cfg, i - 1, &g2) == DSIG_OK && strcmp(g2.name, g.name) < 0,
                       "groups not sorted by name");
        }
        for (size_t x = 0; x < g.n_members; x++) {
            FUZZ_CHECK(x == 0 || g.members[x - 1] < g.members[x], "members of %s not ascending", g.name);
            FUZZ_CHECK(dsig_node_config_find(cfg, g.members[x], &m) == DSIG_OK, "member %llu of %s is no node",
                       (unsigned long long)g.members[x], g.name);
        }
    }
    FUZZ_CHECK(dsig_node_config_node(cfg, nn, &m) != DSIG_OK && dsig_node_config_group(cfg, ng, &g) != DSIG_OK,
               "accessors past the end");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FNC_MAX_INPUT)
        return 0;
    char *text = (char *)fuzz_dup(data, size);
    dsig_node_config *cfg = NULL;
    int rc = dsig_node_config_parse(text, size, &cfg);
    fuzz_check_detail(rc, "dsig_node_config_parse");
    if (rc == DSIG_OK)
        check_config(cfg);
    dsig_node_config_free(cfg);
    free(text);
    return 0;
}

static void seeds(void)
{
    static const char *const texts[] = {
        ("{\"nodes\":[{\"id\":1,\"address\":\"tcp:10.0.0.1:7101\",\"public_key\":{\"kty\":\"OKP\",\"crv\":\"Ed25519\","
         "\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"},\"groups\":[\"g1\"]},{\"id\":2,\"address\":"
         "\"tcp:[::1]:7102\",\"public_key\":{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":"
         "\"PUAXw-hDiVqStwqnTRt-vJyYLM8uxJaMwM1V8Sr0Zgw\"},\"groups\":[\"g1\",\"b.2\"]},{\"id\":9223372036854775807,"
         "\"address\":\"unix:/run/dsig/n3.sock\",\"public_key\":{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":"
         "\"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\"}}],\"groups\":{\"g1\":{\"params\":"
         "\"wots4-haraka-b128\"},\"b.2\":{\"params\":\"wots4-blake3-b128\"}}}"),
        ("{\"nodes\":[{\"id\":5,\"address\":\"tcp:127.0.0.1:1\",\"public_key\":{\"kty\":\"OKP\",\"crv\":\"Ed25519\","
         "\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"},\"groups\":[\"x\"]}],\"groups\":{\"x\":{}}}"),
    };
    fuzz_seed_texts(texts, sizeof texts / sizeof texts[0]);
    for (size_t i = 0; dsig_hybrid_params_at(i); i++) {
        char t[512];
        int n = snprintf(t, sizeof t,
                         "{\"nodes\":[{\"id\":%zu,\"address\":\"tcp:127.0.0.1:%zu\",\"public_key\":{\"kty\":\"OKP\","
                         "\"crv\":\"Ed25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"},\"groups\":"
                         "[\"p\"]}],\"groups\":{\"p\":{\"params\":\"%s\"}}}",
                         i + 1, 7000 + i, dsig_hybrid_params_name(dsig_hybrid_params_at(i)));
        fuzz_seed(t, (size_t)n);
    }
}

FUZZ_SEED_GENERATOR(seeds)
