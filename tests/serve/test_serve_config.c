/*
 * tests/serve/test_serve_config.c — `dsig serve` configuration parsing (strict, bounded, clear errors),
 * bearer-token authentication (hash lookup, malformed headers), tenant grants, the token bucket, the
 * key directory loader, and the served public key against RFC 8037 Appendix A (key, thumbprint).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "testutil.h"
#include "dsig/serve.h"
#include "core/internal.h"
#include "serve/serve_internal.h"

/* SHA-256("tokA"), SHA-256("tokB") as hex — computed by the test with the server's own hash, checked
 * against an independent recomputation through the public one-shot path below. */
static char hex_a[65], hex_b[65];

/* Hex of SHA-256(s) via the server's hash helper. */
static void hash_hex(const char *s, char out[65])
{
    uint8_t h[32];
    assert_int_equal(serve_sha256(s, strlen(s), h), DSIG_OK);
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", h[i]);
}

/* Parse a configuration text; returns the status and leaves *c set on success. */
static int parse(const char *text, dsig_serve_config **c)
{
    return dsig_serve_config_parse(c, text, strlen(text), "/base");
}

/* A valid configuration with two tenants, with an extra member spliced in at top level. */
static char *good_config(const char *extra)
{
    char *buf = malloc(4096);
    snprintf(buf, 4096,
             "{%s\"listen\":{\"address\":\"127.0.0.1\",\"port\":0},\"key_dir\":\"keys\","
             "\"audit\":{\"path\":\"/var/log/a.log\",\"sync\":\"always\",\"payload_digest\":\"blake3\","
             "\"digest_threads\":3},"
             "\"limits\":{\"max_header_bytes\":4096,\"request_timeout_s\":5,\"max_connections\":10,"
             "\"max_body_bytes\":1000,\"threads\":2,\"upload_buffer_bytes\":65536,"
             "\"auth_failures\":{\"per_second\":0.5,\"burst\":7},\"max_connections_per_address\":4,"
             "\"header_timeout_s\":3,\"min_upload_bytes_per_s\":100},"
             "\"tenants\":[{\"name\":\"ci\",\"tokens\":[{\"sha256\":\"%s\",\"rate\":{\"per_second\":2,\"burst\":3}}],"
             "\"keys\":[\"k1\",\"k2\"],\"operations\":[\"sign\",\"verify\"]},"
             "{\"name\":\"ro\",\"tokens\":[{\"sha256\":\"%s\"}],\"keys\":[\"*\"],\"operations\":[\"verify\"]}]}",
             extra ? extra : "", hex_a, hex_b);
    return buf;
}

/* SHA-256 helper agrees with the public JWK thumbprint path (RFC 7638 is SHA-256 over the canonical JWK):
 * here on the RFC 8037 A.3 known answer. */
static void test_sha256_known_answer(void **state)
{
    (void)state;
    json_t *v = tu_load_json("jws/rfc8037/rfc8037_appendixA.json");
    json_t *pub = json_object_get(v, "public_jwk");
    /* RFC 7638 §3: members crv, kty, x in lexicographic order, no whitespace. */
    char canon[256];
    snprintf(canon, sizeof canon, "{\"crv\":\"%s\",\"kty\":\"%s\",\"x\":\"%s\"}", tu_str(pub, "crv"),
             tu_str(pub, "kty"), tu_str(pub, "x"));
    uint8_t h[32];
    assert_int_equal(serve_sha256(canon, strlen(canon), h), DSIG_OK);
    size_t n = 0;
    uint8_t *want = NULL;
    assert_int_equal(dsig_b64url_decode_alloc(tu_str(v, "jwk_thumbprint_sha256"),
                                              strlen(tu_str(v, "jwk_thumbprint_sha256")), &want, &n), DSIG_OK);
    assert_int_equal(n, 32);
    assert_memory_equal(h, want, 32);
    dsig_xfree(want, 0);
    json_decref(v);
}

static void test_config_good(void **state)
{
    (void)state;
    dsig_serve_config *c = NULL;
    char *t = good_config(NULL);
    assert_int_equal(parse(t, &c), DSIG_OK);
    assert_string_equal(c->address, "127.0.0.1");
    assert_int_equal(c->port, 0);
    assert_string_equal(c->key_dir, "/base/keys");
    assert_string_equal(c->audit_path, "/var/log/a.log");
    assert_int_equal(c->audit_sync, SERVE_SYNC_ALWAYS);
    assert_int_equal(c->max_header, 4096);
    assert_int_equal(c->timeout_s, 5);
    assert_int_equal(c->max_conn, 10);
    assert_int_equal(c->max_body, 1000);
    assert_int_equal(c->threads, 2);
    assert_int_equal(c->upload_buffer, 65536);
    assert_int_equal(c->ntenants, 2);
    assert_int_equal(c->ntokens, 2);
    assert_true(c->include_kid);
    assert_int_equal(c->audit_digest, SERVE_DIGEST_BLAKE3);
    assert_int_equal(c->audit_digest_threads, 3);
    assert_string_equal(c->tenants[0].name, "ci");
    assert_int_equal(c->tenants[0].ops, SERVE_OP_SIGN | SERVE_OP_VERIFY);
    assert_int_equal(c->tenants[1].ops, SERVE_OP_VERIFY);
    assert_true(c->tenants[1].all_keys);
    assert_true(c->tokens[0].rate == 2.0 && c->tokens[0].burst == 3.0);
    assert_true(c->auth_fail_rate == 0.5 && c->auth_fail_burst == 7.0);
    assert_int_equal(c->max_conn_per_addr, 4);
    assert_int_equal(c->header_timeout_s, 3);
    assert_int_equal(c->min_upload_rate, 100);
    dsig_serve_config_free(c);
    free(t);
}

static void test_config_defaults(void **state)
{
    (void)state;
    char t[512];
    snprintf(t, sizeof t, "{\"key_dir\":\"/k\",\"tenants\":[]}");
    dsig_serve_config *c = NULL;
    assert_int_equal(parse(t, &c), DSIG_OK);
    assert_string_equal(c->address, "127.0.0.1"); /* loopback unless told otherwise */
    assert_int_equal(c->port, 8080);
    assert_string_equal(c->key_dir, "/k");
    assert_null(c->audit_path);
    assert_int_equal(c->audit_sync, SERVE_SYNC_GROUP);
    assert_int_equal(c->audit_digest, SERVE_DIGEST_BLAKE3);
    assert_int_equal(c->audit_digest_threads, -1); /* automatic */
    assert_true(c->auth_fail_rate == 5.0 && c->auth_fail_burst == 50.0);
    assert_int_equal(c->max_conn_per_addr, 32); /* an eighth of max_connections (0 behind a proxy) */
    assert_int_equal(c->max_header, 8192);
    assert_int_equal(c->max_body, UINT64_C(4) << 30);
    assert_int_equal(c->timeout_s, 30);
    assert_int_equal(c->header_timeout_s, 10);
    assert_int_equal(c->min_upload_rate, 1024);
    assert_int_equal(c->upload_buffer, 1024 * 1024);
    assert_true(c->tlog); /* an audit log is a transparency log unless told otherwise */
    dsig_serve_config_free(c);
    snprintf(t, sizeof t, "{\"key_dir\":\"/k\",\"tenants\":[],\"audit\":{\"transparency_log\":false}}");
    assert_int_equal(parse(t, &c), DSIG_OK);
    assert_false(c->tlog);
    dsig_serve_config_free(c);
}

/* Each bad configuration is refused with a detail naming the member. */
static void test_config_bad(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *detail;
    } cases[] = {
        {"", "line"},
        {"[]", "top level"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"bogus\":1}", "unknown member \"bogus\""},
        {"{\"tenants\":[]}", "key_dir"},
        {"{\"key_dir\":\"k\"}", "tenants"},
        {"{\"key_dir\":\"k\",\"key_dir\":\"j\",\"tenants\":[]}", "duplicate"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"listen\":{\"port\":70000}}", "listen.port"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"listen\":{\"address\":\"localhost\"}}", "listen.address"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"listen\":{\"port\":\"80\"}}", "listen.port"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"threads\":0}}", "limits.threads"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"header_timeout_s\":0}}", "limits.header_timeout_s"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"min_upload_bytes_per_s\":-1}}",
         "limits.min_upload_bytes_per_s"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"max_header_bytes\":10}}", "limits.max_header_bytes"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"max_body\":10}}", "unknown member \"max_body\""},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"upload_buffer_bytes\":100}}", "limits.upload_buffer_bytes"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"audit\":{\"sync\":\"sometimes\"}}", "audit.sync"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"include_kid\":1}", "include_kid"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"auth_failures\":{\"per_second\":-1}}}",
         "limits.auth_failures.per_second"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"auth_failures\":{\"burst\":3}}}",
         "limits.auth_failures: missing member \"per_second\""},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"auth_failures\":{\"per_second\":1,\"bust\":3}}}",
         "bust"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"auth_failures\":5}}", "limits.auth_failures"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"max_connections_per_address\":-1}}",
         "limits.max_connections_per_address"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"max_connections_per_address\":70000}}",
         "limits.max_connections_per_address"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"limits\":{\"auth_failures\":{\"per_second\":1e-12}}}",
         "below 0.001"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"audit\":{\"payload_digest\":true}}", "audit.payload_digest"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"audit\":{\"payload_digest\":\"md5\"}}", "audit.payload_digest"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"audit\":{\"digest_threads\":65}}", "audit.digest_threads"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"audit\":{\"digest_threads\":-1}}", "audit.digest_threads"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"audit\":{\"digest_threads\":\"2\"}}", "audit.digest_threads"},
        {"{\"key_dir\":\"k\",\"tenants\":[],\"audit\":{\"transparency_log\":0}}", "audit.transparency_log"},
        {"{\"key_dir\":\"k\",\"tenants\":[{\"name\":\"a b\",\"tokens\":[],\"keys\":[],\"operations\":[]}]}",
         "tenants[0].name"},
        {"{\"key_dir\":\"k\",\"tenants\":[{\"name\":\"a\",\"tokens\":[{\"sha256\":\"00\"}],\"keys\":[],"
         "\"operations\":[]}]}", "tenants[0].tokens[0].sha256"},
        {"{\"key_dir\":\"k\",\"tenants\":[{\"name\":\"a\",\"tokens\":[],\"keys\":[],\"operations\":[]}]}",
         "tenants[0].tokens"},
        {"{\"key_dir\":\"k\",\"tenants\":[{\"name\":\"a\",\"tokens\":[{\"sha256\":"
         "\"0000000000000000000000000000000000000000000000000000000000000000\"}],\"keys\":[\"../x\"],"
         "\"operations\":[]}]}", "tenants[0].keys[0]"},
        {"{\"key_dir\":\"k\",\"tenants\":[{\"name\":\"a\",\"tokens\":[{\"sha256\":"
         "\"0000000000000000000000000000000000000000000000000000000000000000\"}],\"keys\":[],"
         "\"operations\":[\"delete\"]}]}", "tenants[0].operations[0]"},
        {"{\"key_dir\":\"k\",\"tenants\":[{\"name\":\"a\",\"tokens\":[{\"sha256\":"
         "\"0000000000000000000000000000000000000000000000000000000000000000\",\"rate\":{\"per_second\":0}}],"
         "\"keys\":[],\"operations\":[]}]}", "rate.per_second"},
        {"{\"key_dir\":\"k\",\"tenants\":[{\"name\":\"a\",\"tokens\":[{\"sha256\":"
         "\"0000000000000000000000000000000000000000000000000000000000000000\"},{\"sha256\":"
         "\"0000000000000000000000000000000000000000000000000000000000000000\"}],\"keys\":[],\"operations\":[]}]}",
         "twice"},
        {"{\"key_dir\":\"k\",\"tenants\":[{\"name\":\"a\",\"tokens\":[{\"sha256\":"
         "\"0000000000000000000000000000000000000000000000000000000000000000\"}],\"keys\":[],\"operations\":[]},"
         "{\"name\":\"a\",\"tokens\":[{\"sha256\":"
         "\"1111111111111111111111111111111111111111111111111111111111111111\"}],\"keys\":[],\"operations\":[]}]}",
         "used twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dsig_serve_config *c = (dsig_serve_config *)1;
        int rc = parse(cases[i].text, &c);
        if (rc == DSIG_OK || !strstr(dsig_last_error_detail(), cases[i].detail))
            fail_msg("case %zu: rc %d, detail \"%s\", wanted \"%s\"", i, rc, dsig_last_error_detail(),
                     cases[i].detail);
        assert_null(c);
    }
    dsig_serve_config *c = NULL;
    assert_int_not_equal(dsig_serve_config_load(&c, "/nonexistent/serve.json"), DSIG_OK);
    assert_non_null(strstr(dsig_last_error_detail(), "/nonexistent/serve.json"));
}

/* "coordinator": the etcd endpoints and their settings, parsed strictly; a change takes a restart. */
static void test_config_coordinator(void **state)
{
    (void)state;
    dsig_serve_config *c = NULL, *d = NULL;
    char *g = good_config("\"coordinator\":{\"etcd\":[\"http://10.0.0.1:2379\",\"https://e2:2379\"],"
                          "\"prefix\":\"/p/\",\"connect_timeout_ms\":200,\"timeout_ms\":900},");
    assert_int_equal(parse(g, &c), DSIG_OK);
    free(g);
    assert_int_equal(c->coord_n, 2);
    assert_string_equal(c->coord_etcd[1], "https://e2:2379");
    assert_string_equal(c->coord_prefix, "/p/");
    assert_int_equal(c->coord_connect_ms, 200);
    assert_int_equal(c->coord_timeout_ms, 900);
    g = good_config(NULL);
    assert_int_equal(parse(g, &d), DSIG_OK);
    free(g);
    assert_int_equal(d->coord_n, 0);
    char what[64] = "";
    assert_int_equal(serve_config_restart_diff(c, d, what, sizeof what), 1);
    assert_string_equal(what, "coordinator");
    dsig_serve_config_free(d);
    g = good_config("\"coordinator\":{\"etcd\":[\"http://10.0.0.1:2379\"]},");
    assert_int_equal(parse(g, &d), DSIG_OK);
    free(g);
    assert_null(d->coord_prefix); /* the counter's default "/dsig/" */
    assert_int_equal(d->coord_connect_ms, 1000);
    assert_int_equal(d->coord_timeout_ms, 3000);
    dsig_serve_config_free(d);
    dsig_serve_config_free(c);
    static const struct {
        const char *member, *detail;
    } bad[] = {
        {"{}", "missing member \"etcd\""},
        {"{\"etcd\":[]}", "coordinator.etcd: must be an array"},
        {"{\"etcd\":\"http://a:1\"}", "coordinator.etcd: must be an array"},
        {"{\"etcd\":[1]}", "coordinator.etcd[0]"},
        {"{\"etcd\":[\"http://a:1\",\"ftp://a:1\"]}", "coordinator.etcd[1]"},
        {"{\"etcd\":[\"http://a:1/\"]}", "coordinator.etcd[0]"},
        {"{\"etcd\":[\"http://\"]}", "coordinator.etcd[0]"},
        {"{\"etcd\":[\"http://a b:1\"]}", "coordinator.etcd[0]"},
        {"{\"etcd\":[\"http://a:1\"],\"prefix\":\"p/\"}", "coordinator.prefix"},
        {"{\"etcd\":[\"http://a:1\"],\"prefix\":\"\"}", "coordinator.prefix"},
        {"{\"etcd\":[\"http://a:1\"],\"timeout_ms\":0}", "coordinator.timeout_ms"},
        {"{\"etcd\":[\"http://a:1\"],\"connect_timeout_ms\":5000,\"timeout_ms\":1000}", "larger than"},
        {"{\"etcd\":[\"http://a:1\"],\"lease\":1}", "unknown member \"lease\""},
        {"[]", "coordinator: must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char extra[256];
        snprintf(extra, sizeof extra, "\"coordinator\":%s,", bad[i].member);
        g = good_config(extra);
        c = NULL;
        int rc = parse(g, &c);
        free(g);
        if (rc == DSIG_OK)
            fail_msg("coordinator %s: accepted", bad[i].member);
        assert_null(c);
        if (!strstr(dsig_last_error_detail(), bad[i].detail))
            fail_msg("coordinator %s: detail \"%s\" lacks \"%s\"", bad[i].member, dsig_last_error_detail(),
                     bad[i].detail);
    }
}

static void test_auth(void **state)
{
    (void)state;
    dsig_serve_config *c = NULL;
    char *t = good_config(NULL);
    assert_int_equal(parse(t, &c), DSIG_OK);
    size_t tok = 99;
    assert_int_equal(serve_auth(c, NULL, &tok), SERVE_AUTH_MISSING);
    assert_int_equal(serve_auth(c, "Basic dXNlcjpwYXNz", &tok), SERVE_AUTH_MALFORMED);
    assert_int_equal(serve_auth(c, "Bearer ", &tok), SERVE_AUTH_MALFORMED);
    assert_int_equal(serve_auth(c, "Bearer a\x01" "b", &tok), SERVE_AUTH_MALFORMED);
    assert_int_equal(serve_auth(c, "Bearer tokC", &tok), SERVE_AUTH_UNKNOWN);
    assert_int_equal(serve_auth(c, "Bearer toka", &tok), SERVE_AUTH_UNKNOWN);
    assert_int_equal(serve_auth(c, "Bearer tokA", &tok), SERVE_AUTH_OK);
    assert_int_equal(tok, 0);
    assert_int_equal(serve_auth(c, "bearer  tokB ", &tok), SERVE_AUTH_OK); /* scheme is case-insensitive */
    assert_int_equal(tok, 1);
    char *huge = malloc(SERVE_TOKEN_MAX + 16);
    memcpy(huge, "Bearer ", 7);
    memset(huge + 7, 'x', SERVE_TOKEN_MAX + 1);
    huge[7 + SERVE_TOKEN_MAX + 1] = '\0';
    assert_int_equal(serve_auth(c, huge, &tok), SERVE_AUTH_MALFORMED);
    free(huge);
    dsig_serve_config_free(c);
    free(t);
}

/* The token x key x operation matrix at the grant level. */
static void test_grants(void **state)
{
    (void)state;
    dsig_serve_config *c = NULL;
    char *t = good_config(NULL);
    assert_int_equal(parse(t, &c), DSIG_OK);
    const struct serve_tenant *ci = &c->tenants[0], *ro = &c->tenants[1];
    assert_true(serve_tenant_allows(ci, "k1", SERVE_OP_SIGN));
    assert_true(serve_tenant_allows(ci, "k2", SERVE_OP_VERIFY));
    assert_true(serve_tenant_allows(ci, "k2", 0));
    assert_false(serve_tenant_allows(ci, "k3", SERVE_OP_SIGN));
    assert_false(serve_tenant_allows(ci, "k3", 0));
    assert_false(serve_tenant_allows(ci, "k", SERVE_OP_SIGN)); /* exact ids, no prefixes */
    assert_false(serve_tenant_allows(ro, "k1", SERVE_OP_SIGN));
    assert_true(serve_tenant_allows(ro, "anything", SERVE_OP_VERIFY));
    assert_true(serve_tenant_allows(ro, "anything", 0));
    dsig_serve_config_free(c);
    free(t);
}

/* Token bucket: burst, refill at the rate, Retry-After. */
static void test_rate(void **state)
{
    (void)state;
    dsig_serve_config *c = NULL;
    char *t = good_config(NULL);
    assert_int_equal(parse(t, &c), DSIG_OK);
    struct serve_token *tk = &c->tokens[0]; /* 2/s, burst 3 */
    uint64_t now = 1000000000ull;
    unsigned retry = 0;
    for (int i = 0; i < 3; i++)
        assert_true(serve_rate_take(tk, now, &retry));
    assert_false(serve_rate_take(tk, now, &retry));
    assert_int_equal(retry, 1);
    assert_false(serve_rate_take(tk, now + 400000000ull, &retry)); /* 0.8 token */
    assert_true(serve_rate_take(tk, now + 500000000ull, &retry));  /* 1.0 token */
    assert_true(serve_rate_take(tk, now + 100000000000ull, &retry)); /* refilled, capped at the burst */
    assert_true(serve_rate_take(tk, now + 100000000000ull, &retry));
    assert_true(serve_rate_take(tk, now + 100000000000ull, &retry));
    assert_false(serve_rate_take(tk, now + 100000000000ull, &retry));
    assert_true(serve_rate_take(&c->tokens[1], now, &retry)); /* no rate: unlimited */
    dsig_serve_config_free(c);
    free(t);
}

/* Failed authentications per client address: each address has its own burst, refills at the rate;
 * rate 0 = no limiter; a new token from dsig_serve_new_token is 43 base64url characters whose SHA-256
 * is the hex printed with it. */
static void test_peer_limiter_and_new_token(void **state)
{
    (void)state;
    struct serve_peer_limiter *l = NULL;
    assert_int_equal(serve_peer_limiter_new(&l, 0, 10), DSIG_OK); /* rate 0: no limit */
    unsigned retry = 0;
    for (int i = 0; i < 100; i++)
        assert_true(serve_peer_fail_take(l, "10.0.0.1", 1, &retry));
    serve_peer_limiter_set(l, 1, 2); /* a reload sets a limit: the bucket starts full at the new burst */
    assert_true(serve_peer_fail_take(l, "10.0.0.1", 2, &retry));
    assert_true(serve_peer_fail_take(l, "10.0.0.1", 2, &retry));
    assert_false(serve_peer_fail_take(l, "10.0.0.1", 2, &retry));
    serve_peer_limiter_free(l);
    assert_true(serve_peer_fail_take(NULL, "10.0.0.1", 1, &retry));
    assert_int_equal(serve_peer_limiter_new(&l, 0.5, 3), DSIG_OK);
    assert_non_null(l);
    uint64_t now = 5000000000ull;
    for (int i = 0; i < 3; i++)
        assert_true(serve_peer_fail_take(l, "10.0.0.1", now, &retry));
    assert_false(serve_peer_fail_take(l, "10.0.0.1", now, &retry));
    assert_int_equal(retry, 2); /* one failure per 2 s */
    /* Another address keeps its own budget (unless it shares the bucket: try a few until one does not). */
    int other_ok = 0;
    for (int i = 2; i < 10 && !other_ok; i++) {
        char a[32];
        snprintf(a, sizeof a, "10.0.0.%d", i);
        other_ok = serve_peer_fail_take(l, a, now, &retry);
    }
    assert_true(other_ok);
    assert_true(serve_peer_fail_take(l, "10.0.0.1", now + 2000000000ull, &retry)); /* refilled one */
    assert_false(serve_peer_fail_take(l, "10.0.0.1", now + 2000000000ull, &retry));
    /* The same client written IPv4-mapped shares the IPv4 budget; one IPv6 /64 is one client. */
    assert_false(serve_peer_fail_take(l, "::ffff:10.0.0.1", now + 2000000000ull, &retry));
    serve_peer_limiter_free(l);
    assert_int_equal(serve_peer_limiter_new(&l, 0.5, 3), DSIG_OK); /* fresh buckets: no collision */
    for (int i = 0; i < 3; i++)
        assert_true(serve_peer_fail_take(l, "2001:db8:1:2::1", now, &retry));
    assert_false(serve_peer_fail_take(l, "2001:db8:1:2:ffff::7", now, &retry));
    serve_peer_limiter_free(l);
    /* A tiny rate (possible through the library API) gives a bounded Retry-After, not an overflow. */
    assert_int_equal(serve_peer_limiter_new(&l, 1e-12, 1), DSIG_OK);
    assert_true(serve_peer_fail_take(l, "10.9.9.9", now, &retry));
    assert_false(serve_peer_fail_take(l, "10.9.9.9", now, &retry));
    assert_int_equal(retry, 86400);
    serve_peer_limiter_free(l);
    serve_peer_limiter_free(NULL);

    char tok[DSIG_SERVE_TOKEN_LEN + 1], hex[65], tok2[DSIG_SERVE_TOKEN_LEN + 1], hex2[65];
    assert_int_equal(dsig_serve_new_token(tok, hex), DSIG_OK);
    assert_int_equal(dsig_serve_new_token(tok2, hex2), DSIG_OK);
    assert_int_equal(strlen(tok), 43);
    assert_int_equal(strlen(hex), 64);
    assert_true(strcmp(tok, tok2) != 0);
    uint8_t h[32];
    assert_int_equal(serve_sha256(tok, strlen(tok), h), DSIG_OK);
    char want[65];
    for (int i = 0; i < 32; i++)
        snprintf(want + 2 * i, 3, "%02x", h[i]);
    assert_string_equal(hex, want);
    assert_int_equal(dsig_serve_new_token(NULL, hex), DSIG_E_ARG);
}

/* Write text to dir/name. */
static void put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Warning sink of the key loader: counts the warnings (each must name a file). */
static void count_warn(void *arg, const char *msg)
{
    assert_non_null(strstr(msg, "symbolic link"));
    ++*(int *)arg;
}

/* Remove every file of a directory, then the directory. */
static void rmdir_all(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* "tls": paths resolved like key_dir, min_version parsed (default 1.2), absent = plain HTTP; refused
 * shapes name the member. The files themselves are read at start (test_tls_load). */
static void test_config_tls(void **state)
{
    (void)state;
    dsig_serve_config *c = NULL;
    char *t = good_config("\"tls\":{\"cert\":\"tls/chain.pem\",\"key\":\"/etc/k.pem\",\"min_version\":\"1.3\"},");
    assert_int_equal(parse(t, &c), DSIG_OK);
    assert_string_equal(c->tls_cert, "/base/tls/chain.pem");
    assert_string_equal(c->tls_key, "/etc/k.pem");
    assert_int_equal(c->tls_min, 13);
    dsig_serve_config_free(c);
    free(t);
    t = good_config("\"tls\":{\"cert\":\"c.pem\",\"key\":\"k.pem\"},");
    assert_int_equal(parse(t, &c), DSIG_OK);
    assert_string_equal(c->tls_cert, "/base/c.pem");
    assert_string_equal(c->tls_key, "/base/k.pem");
    assert_int_equal(c->tls_min, 12);
    dsig_serve_config_free(c);
    free(t);
    t = good_config(NULL);
    assert_int_equal(parse(t, &c), DSIG_OK);
    assert_null(c->tls_cert);
    assert_null(c->tls_key);
    assert_int_equal(c->tls_min, 0);
    dsig_serve_config_free(c);
    free(t);
    static const struct {
        const char *tls;
        const char *detail;
    } bad[] = {
        {"\"tls\":{\"cert\":\"c.pem\"},", "tls: missing member \"key\""},
        {"\"tls\":{\"key\":\"k.pem\"},", "tls: missing member \"cert\""},
        {"\"tls\":{},", "tls: missing member \"cert\""},
        {"\"tls\":{\"cert\":\"c\",\"key\":\"k\",\"ciphers\":\"x\"},", "tls: unknown member \"ciphers\""},
        {"\"tls\":{\"cert\":\"c\",\"key\":\"k\",\"min_version\":\"1.1\"},", "tls.min_version"},
        {"\"tls\":{\"cert\":\"c\",\"key\":\"k\",\"min_version\":1.3},", "tls.min_version: must be a string"},
        {"\"tls\":{\"cert\":\"\",\"key\":\"k\"},", "tls.cert: must not be empty"},
        {"\"tls\":{\"cert\":\"c\",\"key\":7},", "tls.key: must be a string"},
        {"\"tls\":true,", "config.tls: must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = good_config(bad[i].tls);
        c = (dsig_serve_config *)1;
        int rc = parse(t, &c);
        if (rc == DSIG_OK || !strstr(dsig_last_error_detail(), bad[i].detail))
            fail_msg("tls case %zu: rc %d, detail \"%s\", wanted \"%s\"", i, rc, dsig_last_error_detail(),
                     bad[i].detail);
        assert_null(c);
        free(t);
    }
}

/* A P-256 key and a self-signed certificate for it valid from now + from_s to now + to_s; the key
 * PEM is written with `mode`, encrypted with "pw" when `encrypt`. Returns the key (caller frees). */
static EVP_PKEY *make_pair(const char *cert_path, const char *key_path, long from_s, long to_s, mode_t mode,
                           int encrypt)
{
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    assert_non_null(pk);
    assert_non_null(x);
    assert_int_equal(X509_set_version(x, 2), 1);
    assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(x), 1), 1);
    assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), from_s));
    assert_non_null(X509_gmtime_adj(X509_getm_notAfter(x), to_s));
    assert_int_equal(X509_set_pubkey(x, pk), 1);
    X509_NAME *n = X509_get_subject_name(x);
    assert_int_equal(
        X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"127.0.0.1", -1, -1, 0), 1);
    assert_int_equal(X509_set_issuer_name(x, n), 1);
    assert_true(X509_sign(x, pk, EVP_sha256()) > 0);
    if (cert_path) {
        FILE *f = fopen(cert_path, "w");
        assert_non_null(f);
        assert_int_equal(PEM_write_X509(f, x), 1);
        fclose(f);
    }
    if (key_path) {
        unlink(key_path);
        int fd = open(key_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        assert_int_equal(fchmod(fd, mode), 0);
        FILE *f = fdopen(fd, "w");
        assert_non_null(f);
        assert_int_equal(PEM_write_PrivateKey(f, pk, encrypt ? EVP_aes_128_cbc() : NULL,
                                              encrypt ? (unsigned char *)"pw" : NULL, encrypt ? 2 : 0, NULL, NULL),
                         1);
        fclose(f);
    }
    X509_free(x);
    return pk;
}

/* Counts the TLS loader's warnings (an expired certificate). */
static void tls_warn(void *arg, const char *msg)
{
    assert_non_null(strstr(msg, "expired or not yet valid"));
    ++*(int *)arg;
}

/* Load with cert and key paths; returns the status, frees what loaded. Checks the detail names `want`. */
static int tls_try(const char *cert, const char *key, unsigned min, const char *want, int *warnings)
{
    struct dsig_serve_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.tls_cert = (char *)cert;
    cfg.tls_key = (char *)key;
    cfg.tls_min = min;
    struct serve_tls *t = (struct serve_tls *)1;
    int rc = serve_tls_load(&cfg, tls_warn, warnings, &t);
    if (rc == DSIG_OK) {
        assert_non_null(t);
        assert_int_equal(t->min_version, min);
        assert_int_equal(strlen(t->cert), t->cert_len); /* NUL-terminated for GnuTLS */
        assert_int_equal(strlen(t->key), t->key_len);
        assert_non_null(strstr(t->cert, "-----BEGIN CERTIFICATE-----"));
        serve_tls_free(t);
    } else {
        assert_null(t);
        if (want && !strstr(dsig_last_error_detail(), want))
            fail_msg("tls load: detail \"%s\", wanted \"%s\"", dsig_last_error_detail(), want);
    }
    return rc;
}

/* The TLS files read at start: a good pair (and a chain), then every refusal with its message: key
 * mode 0644, a symbolic link, a missing file, a directory, a key of another certificate, not PEM, an
 * encrypted key, a NUL byte, an oversized key file, a broken second certificate; an expired
 * certificate only warns. The priority strings allow TLS 1.2 only when asked. */
static void test_tls_load(void **state)
{
    (void)state;
    char dir[] = "/tmp/dsig-serve-tls.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cert[600], key[600], cert2[600], key2[600], p[600];
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    snprintf(cert2, sizeof cert2, "%s/cert2.pem", dir);
    snprintf(key2, sizeof key2, "%s/key2.pem", dir);
    int warnings = 0;
    EVP_PKEY_free(make_pair(cert, key, -60, 86400, 0600, 0));
    EVP_PKEY_free(make_pair(cert2, key2, -60, 86400, 0400, 0));
    assert_int_equal(tls_try(cert, key, 12, NULL, &warnings), DSIG_OK);
    assert_int_equal(tls_try(cert2, key2, 13, NULL, &warnings), DSIG_OK); /* 0400 is fine too */
    assert_int_equal(warnings, 0);
    /* no "tls": nothing loaded */
    struct dsig_serve_config none;
    memset(&none, 0, sizeof none);
    struct serve_tls *t = (struct serve_tls *)1;
    assert_int_equal(serve_tls_load(&none, NULL, NULL, &t), DSIG_OK);
    assert_null(t);
    /* a chain: leaf first, then another certificate */
    char chain[600], cmd[2000];
    snprintf(chain, sizeof chain, "%s/chain.pem", dir);
    snprintf(cmd, sizeof cmd, "cat '%s' '%s' > '%s'", cert, cert2, chain);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tls_try(chain, key, 12, NULL, &warnings), DSIG_OK);
    /* the key of the second certificate of the chain does not match the leaf */
    assert_int_not_equal(tls_try(chain, key2, 12, "does not match the certificate", &warnings), DSIG_OK);
    assert_int_not_equal(tls_try(cert, key2, 12, "does not match the certificate", &warnings), DSIG_OK);
    /* a key readable by others / by the group */
    assert_int_equal(chmod(key, 0644), 0);
    assert_int_not_equal(tls_try(cert, key, 12, "mode 0644: the private key must not be readable by group or "
                                 "others (chmod 600)", &warnings), DSIG_OK);
    assert_non_null(strstr(dsig_last_error_detail(), "tls.key"));
    assert_int_equal(chmod(key, 0640), 0);
    assert_int_not_equal(tls_try(cert, key, 12, "mode 0640", &warnings), DSIG_OK);
    assert_int_equal(chmod(key, 0600), 0);
    /* symbolic links are never followed (key or certificate) */
    snprintf(p, sizeof p, "%s/link.pem", dir);
    assert_int_equal(symlink(key, p), 0);
    assert_int_not_equal(tls_try(cert, p, 12, "a symbolic link", &warnings), DSIG_OK);
    assert_int_not_equal(tls_try(p, key, 12, "tls.cert", &warnings), DSIG_OK);
    unlink(p);
    /* missing files, a directory */
    snprintf(p, sizeof p, "%s/missing.pem", dir);
    assert_int_not_equal(tls_try(p, key, 12, "tls.cert", &warnings), DSIG_OK);
    assert_non_null(strstr(dsig_last_error_detail(), "missing.pem"));
    assert_int_not_equal(tls_try(cert, p, 12, "tls.key", &warnings), DSIG_OK);
    assert_int_not_equal(tls_try(dir, key, 12, "not a regular file", &warnings), DSIG_OK);
    /* not PEM: the key as certificate, the certificate as key, garbage, an empty file */
    assert_int_not_equal(tls_try(key, key, 12, "contains a private key", &warnings), DSIG_OK);
    snprintf(p, sizeof p, "%s/junk.pem", dir);
    put(dir, "junk.pem", "hello\n");
    assert_int_not_equal(tls_try(p, key, 12, "no PEM certificate", &warnings), DSIG_OK);
    put(dir, "junk.pem", "hello\n");
    assert_int_equal(chmod(p, 0600), 0);
    assert_int_not_equal(tls_try(cert, p, 12, "not an unencrypted PEM private key", &warnings), DSIG_OK);
    put(dir, "junk.pem", "");
    assert_int_not_equal(tls_try(cert, p, 12, "empty file", &warnings), DSIG_OK);
    /* an encrypted key is refused, never prompted for */
    EVP_PKEY *pk = make_pair(NULL, p, -60, 86400, 0600, 1);
    assert_int_not_equal(tls_try(cert, p, 12, "not an unencrypted PEM private key", &warnings), DSIG_OK);
    EVP_PKEY_free(pk);
    /* a NUL byte (GnuTLS takes the text as a C string) */
    snprintf(cmd, sizeof cmd, "printf 'x\\000y' >> '%s'", chain);
    assert_int_equal(system(cmd), 0);
    assert_int_not_equal(tls_try(chain, key, 12, "NUL byte", &warnings), DSIG_OK);
    /* a broken second certificate */
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s' && printf -- '-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\\n' >> '%s'",
             cert, chain, chain);
    assert_int_equal(system(cmd), 0);
    assert_int_not_equal(tls_try(chain, key, 12, "certificate #2 of the chain does not parse", &warnings), DSIG_OK);
    /* an oversized key file (bound: 64 KiB) */
    snprintf(cmd, sizeof cmd, "head -c 70000 /dev/zero | tr '\\000' 'A' > '%s' && chmod 600 '%s'", p, p);
    assert_int_equal(system(cmd), 0);
    assert_int_not_equal(tls_try(cert, p, 12, "larger than 65536 bytes", &warnings), DSIG_OK);
    /* an expired certificate loads, with a warning */
    EVP_PKEY_free(make_pair(cert, key, -2 * 86400, -86400, 0600, 0));
    assert_int_equal(tls_try(cert, key, 12, NULL, &warnings), DSIG_OK);
    assert_int_equal(warnings, 1);
    /* priorities: AEAD + ECDHE only; TLS 1.2 allowed only with min_version 1.2 */
    assert_non_null(strstr(serve_tls_priorities(12), "+VERS-TLS1.2"));
    assert_non_null(strstr(serve_tls_priorities(12), "+VERS-TLS1.3"));
    assert_null(strstr(serve_tls_priorities(13), "+VERS-TLS1.2"));
    assert_non_null(strstr(serve_tls_priorities(13), "+VERS-TLS1.3"));
    assert_non_null(strstr(serve_tls_priorities(13), "-VERS-ALL"));
    /* key exchange on elliptic curves only (no TLS 1.3 FFDHE), X25519 first (no HelloRetryRequest for curl) */
    assert_non_null(strstr(serve_tls_priorities(12), "-GROUP-ALL:+GROUP-X25519:"));
    assert_non_null(strstr(serve_tls_priorities(13), "-GROUP-ALL:+GROUP-X25519:"));
    rmdir_all(dir);
}

/* The key directory: the RFC 8037 A.1 key (bound to Ed25519) is served with the A.2 public JWK and
 * the A.3 thumbprint; refused files make the whole load fail with a detail naming them. */
static void test_keyset(void **state)
{
    (void)state;
    char dir[] = "/tmp/dsig-serve-keys.XXXXXX";
    assert_non_null(mkdtemp(dir));
    json_t *v = tu_load_json("jws/rfc8037/rfc8037_appendixA.json");
    json_t *priv = json_deep_copy(json_object_get(v, "private_jwk"));
    json_object_set_new(priv, "alg", json_string("Ed25519"));
    char *text = json_dumps(priv, JSON_COMPACT);
    put(dir, "rfc8037.jwk", text);
    free(text);
    json_decref(priv);
    put(dir, "README", "not a key");
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("ES256"), NULL), DSIG_OK);
    char *jwk = NULL;
    size_t jl = 0;
    assert_int_equal(dsig_jwk_export(k, 1, &jwk, &jl), DSIG_OK);
    put(dir, "es.jwk", jwk);
    dsig_free(jwk);

    char cfgtext[256];
    snprintf(cfgtext, sizeof cfgtext, "{\"key_dir\":\"%s\",\"tenants\":[]}", dir);
    dsig_serve_config *c = NULL;
    assert_int_equal(parse(cfgtext, &c), DSIG_OK);
    struct serve_keyset *ks = NULL;
    assert_int_equal(serve_keyset_load(c, NULL, NULL, NULL, &ks), DSIG_OK);
    assert_int_equal(ks->n, 2);
    assert_string_equal(ks->keys[0]->kid, "es"); /* sorted */
    struct serve_key *r = serve_keyset_find(ks, "rfc8037");
    assert_non_null(r);
    assert_null(serve_keyset_find(ks, "nope"));
    assert_string_equal(r->thumbprint, tu_str(v, "jwk_thumbprint_sha256"));
    assert_string_equal(dsig_alg_name(r->alg), "Ed25519");
    json_error_t je;
    json_t *served = json_loads(r->jwk, 0, &je);
    assert_non_null(served);
    assert_null(json_object_get(served, "d")); /* never private material */
    assert_string_equal(json_string_value(json_object_get(served, "x")),
                        tu_str(json_object_get(v, "public_jwk"), "x"));
    json_decref(served);

    /* A reload keeps nothing of the old set but state-file keys; the old set stays valid. */
    serve_key_ref(r);
    struct serve_keyset *ks2 = NULL;
    assert_int_equal(serve_keyset_load(c, ks, NULL, NULL, &ks2), DSIG_OK);
    serve_keyset_unref(ks);
    assert_string_equal(r->kid, "rfc8037"); /* still held by "a request in flight" */
    serve_key_unref(r);
    serve_keyset_unref(ks2);

    /* A symbolic link (.jwk to a key, dangling .state) is skipped with a warning, never followed, and
     * does not fail the (re)load. */
    char lp[512];
    snprintf(lp, sizeof lp, "%s/link.jwk", dir);
    assert_int_equal(symlink("es.jwk", lp), 0);
    snprintf(lp, sizeof lp, "%s/dangling.state", dir);
    assert_int_equal(symlink("/nonexistent/x.state", lp), 0);
    int warnings = 0;
    assert_int_equal(serve_keyset_load(c, NULL, count_warn, &warnings, &ks), DSIG_OK);
    assert_int_equal(ks->n, 2);
    assert_int_equal(warnings, 2);
    assert_null(serve_keyset_find(ks, "link"));
    serve_keyset_unref(ks);
    unlink(lp);
    snprintf(lp, sizeof lp, "%s/link.jwk", dir);
    unlink(lp);

    /* All or nothing: a public-only key, a key without "alg", a bad name. */
    put(dir, "pub.jwk", "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\",\"alg\":\"Ed25519\"}");
    assert_int_not_equal(serve_keyset_load(c, NULL, NULL, NULL, &ks), DSIG_OK);
    assert_non_null(strstr(dsig_last_error_detail(), "pub.jwk"));
    assert_non_null(strstr(dsig_last_error_detail(), "*.pub")); /* says where public keys go */
    char p[512];
    snprintf(p, sizeof p, "%s/pub.jwk", dir);
    unlink(p);
    text = json_dumps(json_object_get(v, "private_jwk"), JSON_COMPACT);
    put(dir, "unbound.jwk", text);
    free(text);
    assert_int_not_equal(serve_keyset_load(c, NULL, NULL, NULL, &ks), DSIG_OK);
    assert_non_null(strstr(dsig_last_error_detail(), "not bound"));
    snprintf(p, sizeof p, "%s/unbound.jwk", dir);
    unlink(p);
    put(dir, "bad name.jwk", "{}");
    assert_int_not_equal(serve_keyset_load(c, NULL, NULL, NULL, &ks), DSIG_OK);
    assert_non_null(strstr(dsig_last_error_detail(), "bad name.jwk"));
    snprintf(p, sizeof p, "%s/bad name.jwk", dir);
    unlink(p);
    dsig_serve_config_free(c);

    /* The layout docs/serve.md gives for a stateful key: KID.state with its public key beside it as
     * KID.pub (ignored by the loader) — the service starts and serves KID from the state file. */
    const dsig_alg *lms = dsig_alg_by_name("HSS-LMS");
    if (lms) {
        snprintf(cfgtext, sizeof cfgtext, "{\"key_dir\":\"%s\",\"state_registry_dir\":\"\",\"tenants\":[]}", dir);
        assert_int_equal(parse(cfgtext, &c), DSIG_OK);
        dsig_state_opts so = {.registry_dir = ""};
        dsig_keygen_params kp = {.param = "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8"};
        dsig_key *sk = NULL, *spub = NULL;
        snprintf(p, sizeof p, "%s/release.state", dir);
        assert_int_equal(dsig_state_create(&sk, p, lms, &kp, &so), DSIG_OK);
        assert_int_equal(dsig_key_public(&spub, sk), DSIG_OK);
        assert_int_equal(dsig_jwk_export(spub, 0, &jwk, &jl), DSIG_OK);
        dsig_key_free(spub);
        dsig_key_free(sk); /* unlocked: the loader opens it */
        put(dir, "release.pub", jwk);
        assert_int_equal(serve_keyset_load(c, NULL, NULL, NULL, &ks), DSIG_OK);
        struct serve_key *sr = serve_keyset_find(ks, "release");
        assert_non_null(sr);
        assert_true(sr->stateful);
        assert_int_equal(ks->n, 3);
        serve_keyset_unref(ks);
        /* Named KID.jwk (what the docs once said), the public key stops the start, and says why. */
        put(dir, "release.jwk", jwk);
        assert_int_not_equal(serve_keyset_load(c, NULL, NULL, NULL, &ks), DSIG_OK);
        assert_non_null(strstr(dsig_last_error_detail(), "release.jwk"));
        assert_non_null(strstr(dsig_last_error_detail(), "*.pub"));
        dsig_free(jwk);
        dsig_serve_config_free(c);
    }
    dsig_key_free(k);
    json_decref(v);
    rmdir_all(dir);
}

/* A reload: the text parsed again gives the same configuration; a change of a restart-only member is
 * named, a change of what a reload may change is not. */
static void test_config_reread_and_restart_diff(void **state)
{
    (void)state;
    dsig_serve_config *a = NULL, *b = NULL;
    char *t = good_config(NULL);
    assert_int_equal(parse(t, &a), DSIG_OK);
    assert_int_equal(serve_config_reread(a, NULL, &b), DSIG_OK);
    char what[64] = "";
    assert_false(serve_config_restart_diff(a, b, what, sizeof what));
    assert_string_equal(b->key_dir, "/base/keys");
    assert_int_equal(b->ntenants, 2);
    b->max_body = 5;                /* reloadable */
    b->ntokens = 1;
    b->header_timeout_s = 9;
    assert_false(serve_config_restart_diff(a, b, what, sizeof what));
    b->ntokens = 2;
    b->port = 1234;
    assert_true(serve_config_restart_diff(a, b, what, sizeof what));
    assert_string_equal(what, "listen.port");
    b->port = a->port;
    b->audit_sync = SERVE_SYNC_NONE;
    assert_true(serve_config_restart_diff(a, b, what, sizeof what));
    assert_string_equal(what, "audit.sync");
    b->audit_sync = a->audit_sync;
    b->tlog = !a->tlog;
    assert_true(serve_config_restart_diff(a, b, what, sizeof what));
    assert_string_equal(what, "audit.transparency_log");
    dsig_serve_config_free(a);
    dsig_serve_config_free(b);
    free(t);
}

/* The shared configuration's pieces (shared_config.c, docs/scale.md "Shared configuration"): one tenant
 * checked on its own by the file's rules, a reload with the tenants replaced, the file's tenants as
 * JSON, and the coordinator's shared_config members. */
static void test_shared_tenants(void **state)
{
    (void)state;
    char good[256];
    snprintf(good, sizeof good, "{\"name\":\"x\",\"tokens\":[{\"sha256\":\"%s\"}],\"keys\":[\"*\"],"
                                "\"operations\":[\"sign\"]}", hex_b);
    json_t *t = json_loads(good, 0, NULL);
    assert_non_null(t);
    assert_int_equal(serve_tenant_check(t), DSIG_OK);
    /* Each malformed entry is refused with the member named. */
    static const char *const bad[][2] = {
        {"[1]", "must be an object"},
        {"{\"name\":\"x\",\"keys\":[],\"operations\":[]}", "tokens"},
        {"{\"name\":\"x\",\"tokens\":[{\"sha256\":\"abcd\"}],\"keys\":[],\"operations\":[]}",
         "not 64 hexadecimal digits"},
        {"{\"name\":\"a b\",\"tokens\":[{\"sha256\":\"abcd\"}],\"keys\":[],\"operations\":[]}", "name"},
        {"{\"name\":\"x\",\"tokens\":[],\"keys\":[],\"operations\":[],\"admin\":true}", "admin"},
        {"{\"name\":\"x\",\"tokens\":[],\"keys\":[],\"operations\":[\"root\"]}", "operations"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *b = json_loads(bad[i][0], 0, NULL);
        assert_non_null(b);
        assert_int_not_equal(serve_tenant_check(b), DSIG_OK);
        if (!strstr(dsig_last_error_detail(), bad[i][1]))
            fail_msg("entry %zu: \"%s\" does not name %s", i, dsig_last_error_detail(), bad[i][1]);
        json_decref(b);
    }
    /* A reload with the tenants replaced: only x, with tokB. */
    dsig_serve_config *a = NULL, *b = NULL;
    char *text = good_config(NULL);
    assert_int_equal(parse(text, &a), DSIG_OK);
    json_t *file = serve_config_tenants_json(a);
    assert_non_null(file);
    assert_int_equal(json_array_size(file), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(file, 0), "name")), "ci");
    json_decref(file);
    json_t *arr = json_pack("[O]", t);
    assert_int_equal(serve_config_reread(a, arr, &b), DSIG_OK);
    assert_int_equal(b->ntenants, 1);
    assert_string_equal(b->tenants[0].name, "x");
    assert_string_equal(b->key_dir, "/base/keys"); /* the rest of the file, relative paths as before */
    size_t tok = 9;
    assert_int_equal(serve_auth(b, "Bearer tokB", &tok), SERVE_AUTH_OK);
    assert_int_equal(serve_auth(b, "Bearer tokA", &tok), SERVE_AUTH_UNKNOWN);
    dsig_serve_config_free(b);
    b = NULL;
    /* No tenants at all: a valid configuration that admits nobody. */
    json_t *none = json_array();
    assert_int_equal(serve_config_reread(a, none, &b), DSIG_OK);
    assert_int_equal(b->ntenants, 0);
    assert_int_equal(serve_auth(b, "Bearer tokB", &tok), SERVE_AUTH_UNKNOWN);
    dsig_serve_config_free(b);
    b = NULL;
    json_decref(none);
    /* Two tenants with one token: refused as a whole. */
    json_t *y = json_deep_copy(t);
    json_object_set_new(y, "name", json_string("y"));
    json_array_append_new(arr, y);
    assert_int_not_equal(serve_config_reread(a, arr, &b), DSIG_OK);
    assert_non_null(strstr(dsig_last_error_detail(), "twice"));
    assert_null(b);
    json_decref(arr);
    json_decref(t);
    dsig_serve_config_free(a);
    free(text);
    /* The coordinator's members. */
    static const char *const coord[][2] = {
        {"\"coordinator\":{\"etcd\":[\"http://127.0.0.1:2379\"],\"shared_config\":1},", "shared_config"},
        {"\"coordinator\":{\"etcd\":[\"http://127.0.0.1:2379\"],\"max_stale_s\":5},", "only with"},
        {"\"coordinator\":{\"etcd\":[\"http://127.0.0.1:2379\"],\"shared_config\":true,\"instance_id\":\"a/b\"},",
         "instance_id"},
        {"\"coordinator\":{\"etcd\":[\"http://127.0.0.1:2379\"],\"shared_config\":true,\"max_stale_s\":86401},",
         "max_stale_s"},
    };
    for (size_t i = 0; i < sizeof coord / sizeof coord[0]; i++) {
        char *c = good_config(coord[i][0]);
        dsig_serve_config *x = NULL;
        assert_int_not_equal(parse(c, &x), DSIG_OK);
        if (!strstr(dsig_last_error_detail(), coord[i][1]))
            fail_msg("coordinator %zu: \"%s\" does not name %s", i, dsig_last_error_detail(), coord[i][1]);
        free(c);
    }
    char *c = good_config("\"coordinator\":{\"etcd\":[\"http://127.0.0.1:2379\"],\"shared_config\":true,"
                          "\"instance_id\":\"eu-1\",\"max_stale_s\":30},");
    dsig_serve_config *x = NULL;
    assert_int_equal(parse(c, &x), DSIG_OK);
    assert_true(x->coord_shared);
    assert_string_equal(x->coord_instance, "eu-1");
    assert_int_equal(x->coord_max_stale_s, 30);
    dsig_serve_config_free(x);
    free(c);
}

/* Metrics text: every family present, counts where they belong, queueing in its own histogram and in
 * the duration, per-tenant counters by name across slots. */
static void test_metrics(void **state)
{
    (void)state;
    struct serve_metrics *m = serve_metrics_new();
    assert_non_null(m);
    serve_metrics_request(m, EP_SIGN, 200, 1000, 2000000, 1500000, ERR_NONE);
    serve_metrics_request(m, EP_SIGN, 401, 0, 10000, 0, ERR_UNAUTHENTICATED);
    int a = serve_metrics_tenant_slot(m, "alpha"), b = serve_metrics_tenant_slot(m, "beta");
    assert_true(a >= 0 && b >= 0 && a != b);
    assert_int_equal(serve_metrics_tenant_slot(m, "alpha"), a); /* a reload finds the same slot */
    serve_metrics_tenant(m, a, EP_SIGN, 200);
    serve_metrics_tenant(m, a, EP_SIGN, 200);
    serve_metrics_tenant(m, b, EP_VERIFY, 422);
    serve_metrics_tenant(m, -1, EP_VERIFY, 422); /* no slot: not counted, no crash */
    struct serve_metrics_extra x = {.nkeys = 3, .ready = 1};
    x.audit.sync_failures = 7;
    x.audit.ready = 1;
    x.conns.cut_headers = 2;
    size_t len = 0;
    char *t = serve_metrics_render(m, &x, &len);
    assert_non_null(t);
    assert_non_null(strstr(t, "dsig_serve_requests_total{endpoint=\"sign\",code=\"200\"} 1\n"));
    assert_non_null(strstr(t, "dsig_serve_requests_total{endpoint=\"sign\",code=\"401\"} 1\n"));
    assert_non_null(strstr(t, "dsig_serve_payload_bytes_total{endpoint=\"sign\"} 1000\n"));
    assert_non_null(strstr(t, "dsig_serve_request_duration_seconds_bucket{endpoint=\"sign\",le=\"0.001\"} 1\n"));
    assert_non_null(strstr(t, "dsig_serve_request_duration_seconds_bucket{endpoint=\"sign\",le=\"0.0025\"} 2\n"));
    assert_non_null(strstr(t, "dsig_serve_request_duration_seconds_count{endpoint=\"sign\"} 2\n"));
    assert_non_null(strstr(t, "dsig_serve_request_queue_seconds_bucket{endpoint=\"sign\",le=\"0.001\"} 1\n"));
    assert_non_null(strstr(t, "dsig_serve_request_queue_seconds_bucket{endpoint=\"sign\",le=\"0.0025\"} 2\n"));
    assert_non_null(strstr(t, "dsig_serve_request_queue_seconds_sum{endpoint=\"sign\"} 0.001500\n"));
    assert_non_null(strstr(t, "dsig_serve_tenant_requests_total{tenant=\"alpha\",endpoint=\"sign\",code=\"200\"} 2\n"));
    assert_non_null(strstr(t, "dsig_serve_tenant_requests_total{tenant=\"beta\",endpoint=\"verify\",code=\"422\"} 1\n"));
    assert_non_null(strstr(t, "dsig_serve_errors_total{kind=\"unauthenticated\"} 1\n"));
    assert_non_null(strstr(t, "dsig_serve_audit_sync_failures_total 7\n"));
    assert_non_null(strstr(t, "dsig_serve_connections_cut_total{reason=\"header_timeout\"} 2\n"));
    assert_non_null(strstr(t, "dsig_serve_keys 3\n"));
    dsig_xfree(t, 0);
    serve_metrics_free(m);
}

int main(void)
{
    hash_hex("tokA", hex_a);
    hash_hex("tokB", hex_b);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_known_answer),
        cmocka_unit_test(test_config_good),
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_reread_and_restart_diff),
        cmocka_unit_test(test_config_bad),
        cmocka_unit_test(test_config_tls),
        cmocka_unit_test(test_tls_load),
        cmocka_unit_test(test_auth),
        cmocka_unit_test(test_grants),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_peer_limiter_and_new_token),
        cmocka_unit_test(test_config_coordinator),
        cmocka_unit_test(test_shared_tenants),
        cmocka_unit_test(test_keyset),
        cmocka_unit_test(test_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
