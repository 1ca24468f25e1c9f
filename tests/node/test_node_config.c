/*
 * tests/node/test_node_config.c — membership configuration: a good file (RFC 8032 keys, checked
 * against the official vectors), accessors, file loading, and every rejection with the field named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nodetest.h"
#include "testutil.h"

static const char *const G3[] = {"[\"g1\",\"b2\"]", "[\"g1\"]", "[]"};
#define GROUPS "{\"g1\":{\"params\":\"wots4-haraka-b128\"},\"b2\":{}}"

/* A three-node configuration parses; accessors give the file's content, groups sorted by name. */
static void test_good(void **state)
{
    (void)state;
    unsigned ports[3] = {7101, 7102, 7103};
    char *txt = nt_config(3, ports, G3, GROUPS);
    dsig_node_config *cfg = NULL;
    assert_int_equal(dsig_node_config_parse(txt, strlen(txt), &cfg), DSIG_OK);
    assert_int_equal(dsig_node_config_node_count(cfg), 3);
    dsig_node_member m;
    assert_int_equal(dsig_node_config_node(cfg, 0, &m), DSIG_OK);
    assert_int_equal(m.id, 1);
    assert_string_equal(m.address, "tcp:127.0.0.1:7101");
    assert_int_equal(m.n_groups, 2);
    assert_string_equal(m.groups[0], "g1");
    assert_string_equal(m.groups[1], "b2");
    assert_string_equal(dsig_key_curve(m.public_key), "Ed25519");
    assert_false(dsig_key_has_private(m.public_key));
    assert_int_equal(dsig_node_config_find(cfg, 3, &m), DSIG_OK);
    assert_int_equal(m.n_groups, 0);
    assert_int_equal(dsig_node_config_find(cfg, 4, &m), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_node_config_node(cfg, 3, &m), DSIG_E_ARG);

    assert_int_equal(dsig_node_config_group_count(cfg), 2);
    dsig_node_group g;
    assert_int_equal(dsig_node_config_group(cfg, 0, &g), DSIG_OK);
    assert_string_equal(g.name, "b2"); /* sorted */
    assert_int_equal(g.n_members, 1);
    assert_ptr_equal(g.params, dsig_hybrid_params_default());
    assert_int_equal(dsig_node_config_group_find(cfg, "g1", &g), DSIG_OK);
    assert_int_equal(g.n_members, 2);
    assert_int_equal(g.members[0], 1);
    assert_int_equal(g.members[1], 2);
    assert_string_equal(dsig_hybrid_params_name(g.params), "wots4-haraka-b128");
    assert_int_equal(dsig_node_config_group_find(cfg, "nope", &g), DSIG_E_ARG);
    dsig_node_config_free(cfg);

    /* the same text from a file */
    char path[] = "/tmp/dsig-node-cfg-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, txt, strlen(txt)), (ssize_t)strlen(txt));
    close(fd);
    assert_int_equal(dsig_node_config_load(path, &cfg), DSIG_OK);
    assert_int_equal(dsig_node_config_node_count(cfg), 3);
    dsig_node_config_free(cfg);
    unlink(path);
    assert_int_equal(dsig_node_config_load("/nonexistent/dsig-node.json", &cfg), DSIG_E_IO);
    assert_null(cfg);
    free(txt);
}

/* Replace the first occurrence of `from` in `s` by `to` (new string). */
static char *subst(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    assert_non_null(p);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *r = malloc(n);
    assert_non_null(r);
    snprintf(r, n, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
    return r;
}

/* Expect a rejection with `code` and a detail containing `needle`. */
static void expect_bad(const char *txt, int code, const char *needle)
{
    dsig_node_config *cfg = (dsig_node_config *)1;
    int rc = dsig_node_config_parse(txt, strlen(txt), &cfg);
    if (rc != code || !strstr(dsig_last_error_detail(), needle))
        fail_msg("expected %d with \"%s\", got %d: %s", code, needle, rc, dsig_last_error_detail());
    assert_null(cfg);
}

/* Every kind of bad configuration is rejected, naming the field. */
static void test_bad(void **state)
{
    (void)state;
    unsigned ports[3] = {7101, 7102, 7103};
    char *good = nt_config(3, ports, G3, GROUPS);
    char *t;

    expect_bad("{", DSIG_E_JSON, "invalid JSON");
    expect_bad("[]", DSIG_E_JSON, "top level");
    expect_bad("{\"nodes\":[]}", DSIG_E_JSON, "\"nodes\"");
    expect_bad("{\"nodes\":[],\"x\":1}", DSIG_E_JSON, "unknown member \"x\"");
    t = subst(good, "{\"id\":1,", "{\"id\":1,\"port\":3,");
    expect_bad(t, DSIG_E_JSON, "nodes[0]: unknown member \"port\"");
    free(t);
    t = subst(good, "{\"id\":1,", "{\"id\":1,\"id\":1,");
    expect_bad(t, DSIG_E_JSON, "duplicate");
    free(t);
    t = subst(good, "\"id\":2", "\"id\":1");
    expect_bad(t, DSIG_E_FORMAT, "duplicate id 1");
    free(t);
    t = subst(good, "\"id\":2", "\"id\":0");
    expect_bad(t, DSIG_E_FORMAT, "nodes[1].id");
    free(t);
    t = subst(good, "\"id\":2", "\"id\":\"2\"");
    expect_bad(t, DSIG_E_JSON, "nodes[1].id");
    free(t);
    t = subst(good, "tcp:127.0.0.1:7102", "tcp:127.0.0.1:7101");
    expect_bad(t, DSIG_E_FORMAT, "nodes[1].address: same address");
    free(t);
    t = subst(good, "tcp:127.0.0.1:7102", "tcp:localhost:7102");
    expect_bad(t, DSIG_E_FORMAT, "nodes[1].address");
    free(t);
    t = subst(good, "tcp:127.0.0.1:7102", "tcp:127.0.0.1:0");
    expect_bad(t, DSIG_E_FORMAT, "port 0");
    free(t);
    t = subst(good, "[\"g1\"]", "[\"g9\"]");
    expect_bad(t, DSIG_E_FORMAT, "nodes[1].groups[0]: undefined group \"g9\"");
    free(t);
    t = subst(good, "[\"g1\"]", "[\"g1\",\"g1\"]");
    expect_bad(t, DSIG_E_FORMAT, "listed twice");
    free(t);
    t = subst(good, "\"b2\":{}", "\"b2\":{},\"lonely\":{}");
    expect_bad(t, DSIG_E_FORMAT, "groups.lonely: no node");
    free(t);
    t = subst(good, "\"b2\":{}", "\"b2\":{\"size\":3}");
    expect_bad(t, DSIG_E_JSON, "groups.b2: unknown member \"size\"");
    free(t);
    t = subst(good, "wots4-haraka-b128", "wots5-nothing");
    expect_bad(t, DSIG_E_FORMAT, "groups.g1.params: unknown parameter set");
    free(t);
    t = subst(good, "\"b2\":{}", "\"b 2\":{}");
    expect_bad(t, DSIG_E_FORMAT, "invalid group name");
    free(t);
    t = subst(good, "\"crv\":\"Ed25519\"", "\"crv\":\"Ed448\"");
    expect_bad(t, DSIG_E_KEY, "nodes[0].public_key"); /* x has the wrong length for Ed448 */
    free(t);
    t = subst(good, "\"kty\":\"OKP\"", "\"d\":\"AAAA\",\"kty\":\"OKP\"");
    expect_bad(t, DSIG_E_KEY, "private key");
    free(t);
    /* node keys are DSig keys: an unbound or Ed25519-bound public key is refused, with the remedy */
    t = subst(good, ",\"alg\":\"DSig\"", "");
    expect_bad(t, DSIG_E_ALG_NOT_ALLOWED, "nodes[0].public_key: the key is not bound");
    assert_non_null(strstr(dsig_last_error_detail(), "dsig keygen -a DSig"));
    free(t);
    t = subst(good, "\"alg\":\"DSig\"", "\"alg\":\"Ed25519\"");
    expect_bad(t, DSIG_E_ALG_NOT_ALLOWED, "nodes[0].public_key: the key is bound to Ed25519");
    free(t);
    /* node 2 with node 1's key */
    {
        char *j0;
        dsig_key *k0 = nt_key(0, &j0);
        char *j1;
        dsig_key *k1 = nt_key(1, &j1);
        t = subst(good, j1, j0);
        expect_bad(t, DSIG_E_KEY, "nodes[1].public_key: same key");
        free(t);
        dsig_key_free(k0);
        dsig_key_free(k1);
        free(j0);
        free(j1);
    }
    /* too large */
    char *big = malloc(DSIG_NODE_MAX_CONFIG_BYTES + 2);
    memset(big, ' ', DSIG_NODE_MAX_CONFIG_BYTES + 1);
    big[DSIG_NODE_MAX_CONFIG_BYTES + 1] = 0;
    expect_bad(big, DSIG_E_TOO_LARGE, "at most");
    free(big);
    free(good);
}

/* dsig_node_new checks the id and that the private key matches the configured public key. */
static void test_new_checks(void **state)
{
    (void)state;
    unsigned ports[3] = {nt_free_port(), nt_free_port(), nt_free_port()};
    char *txt = nt_config(3, ports, G3, GROUPS);
    dsig_node_config *cfg;
    assert_int_equal(dsig_node_config_parse(txt, strlen(txt), &cfg), DSIG_OK);
    char *j;
    dsig_key *k0 = nt_key(0, &j);
    free(j);
    dsig_key *k1 = nt_key(1, &j);
    free(j);
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.pool_target = 128;
    dsig_node *n = NULL;
    assert_int_equal(dsig_node_new(&n, cfg, 9, k0, &o), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_node_new(&n, cfg, 2, k0, &o), DSIG_E_KEY_MISMATCH);
    dsig_key *pub;
    assert_int_equal(dsig_key_public(&pub, k0), DSIG_OK);
    assert_int_equal(dsig_node_new(&n, cfg, 1, pub, &o), DSIG_E_NO_PRIVATE);
    /* the same key material unbound (as from PEM) or bound to Ed25519: not a DSig key */
    dsig_key *plain;
    char *pem;
    size_t pl;
    assert_int_equal(dsig_key_export_pem(k0, 1, &pem, &pl), DSIG_OK);
    assert_int_equal(dsig_key_import_pem(&plain, pem, pl), DSIG_OK);
    dsig_free(pem);
    assert_int_equal(dsig_node_new(&n, cfg, 1, plain, &o), DSIG_E_ALG_NOT_ALLOWED);
    assert_non_null(strstr(dsig_last_error_detail(), "dsig keygen -a DSig"));
    assert_int_equal(dsig_key_set_alg(plain, dsig_alg_by_name("Ed25519")), DSIG_OK);
    assert_int_equal(dsig_node_new(&n, cfg, 1, plain, &o), DSIG_E_ALG_NOT_ALLOWED);
    dsig_key_free(plain);
    assert_int_equal(dsig_node_new(&n, cfg, 1, k0, &o), DSIG_OK);
    dsig_node_config_free(cfg); /* the node has its own copy */
    assert_int_equal(dsig_node_sig_bytes(n, "g1"), 1559);
    assert_int_equal(dsig_node_sig_bytes(n, "zz"), 0);
    uint8_t sig[2000];
    size_t sl;
    assert_int_equal(dsig_node_sign(n, "zz", (const uint8_t *)"x", 1, sig, sizeof sig, &sl), DSIG_E_ARG);
    /* signing works before start; any configured node verifies on the slow path */
    assert_int_equal(dsig_node_sign(n, "g1", (const uint8_t *)"x", 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_node_verify(n, 1, (const uint8_t *)"x", 1, sig, sl), DSIG_OK);
    assert_int_equal(dsig_node_verify(n, 2, (const uint8_t *)"x", 1, sig, sl), DSIG_E_VERIFY);
    assert_int_equal(dsig_node_verify(n, 7, (const uint8_t *)"x", 1, sig, sl), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_node_wait_ready(n, "g1", 1, 10), DSIG_E_STATE);
    assert_int_equal(dsig_node_send_app(n, 2, "hi", 2), DSIG_E_STATE);
    dsig_node_free(n);
    dsig_key_free(pub);
    dsig_key_free(k0);
    dsig_key_free(k1);
    free(txt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_new_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
