/*
 * tests/ct/test_ct_serve.c — constant-time check of the `dsig serve` bearer-token comparison
 * ("ctgrind"): serve_auth (src/serve/auth.c) hashes the presented token and compares the hash with
 * every configured token hash.
 *
 * The secrets here are the configured hashes (they identify the tenants' tokens; the presented token is
 * the client's own input): the test marks them secret in a parsed configuration and authenticates a
 * valid token of each tenant, an unknown one and malformed ones. The library declassifies only the
 * outcome — whether a token matched and which (the answer: 401, or the tenant) — never the position or
 * the bytes of a mismatch. Any other report fails the test.
 *
 * Then the client-address bucket (serve_peer_bucket: the failed-authentication limiter and the
 * per-address connection limit): a keyed BLAKE3 hash of the address under a random per-process key,
 * marked secret here. The library declassifies the hash once computed (the bucket indexes an array and
 * is observable from outside by design: which addresses throttle each other); the key must not reach
 * a branch or an address before that.
 *
 * `--self-check` probes each configured hash and the bucket key after marking them (ct_test.h):
 * memcheck must report each.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "core/ct.h"
#include "ct_test.h"
#include "dsig/serve.h"
#include "serve/serve_internal.h"

static const char *const tokens[3] = {"ct-token-one-0123456789abcdefghijklmnopqrstuvw",
                                      "ct-token-two-0123456789abcdefghijklmnopqrstuvw",
                                      "ct-token-three-0123456789abcdefghijklmnopqrstu"};

/* The bucket of a few client addresses under a secret key: in range, and the same for the same key. */
static int check_buckets(int self_check)
{
    static const char *const peers[] = {"192.0.2.7", "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::9", "::ffff:192.0.2.7",
                                        "not-an-address"};
    uint8_t key[32];
    if (dsig_random_bytes(key, sizeof key))
        return 1;
    DSIG_CT_SECRET(key, sizeof key);
    if (self_check)
        ct_probe(key, "the client-address bucket key");
    size_t b[5];
    int bad = 0;
    for (size_t i = 0; i < 5; i++) {
        b[i] = serve_peer_bucket(key, peers[i], 1021);
        if (b[i] >= 1021 || b[i] != serve_peer_bucket(key, peers[i], 1021))
            bad = fprintf(stderr, "bucket of %s: %zu, not stable or out of range\n", peers[i], b[i]);
    }
    /* One IPv6 /64 is one bucket; an IPv4-mapped address is its IPv4 address. */
    if (b[1] != b[2] || b[0] != b[3])
        bad = fprintf(stderr, "buckets: /64 %zu / %zu, mapped IPv4 %zu / %zu\n", b[1], b[2], b[0], b[3]);
    dsig_memzero(key, sizeof key);
    return bad;
}

int main(int argc, char **argv)
{
    const int self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    char hex[3][65], cfgtext[2048];
    for (int i = 0; i < 3; i++) {
        uint8_t h[32];
        SHA256((const uint8_t *)tokens[i], strlen(tokens[i]), h);
        for (int j = 0; j < 32; j++)
            snprintf(hex[i] + 2 * j, 3, "%02x", h[j]);
    }
    int n = snprintf(cfgtext, sizeof cfgtext,
                     "{\"key_dir\":\"keys\",\"tenants\":[{\"name\":\"a\",\"tokens\":[{\"sha256\":\"%s\"},{\"sha256\":"
                     "\"%s\"}],\"keys\":[\"*\"],\"operations\":[\"sign\"]},{\"name\":\"b\",\"tokens\":[{\"sha256\":"
                     "\"%s\"}],\"keys\":[\"k\"],\"operations\":[\"verify\"]}]}",
                     hex[0], hex[1], hex[2]);
    dsig_serve_config *cfg;
    if (dsig_serve_config_parse(&cfg, cfgtext, (size_t)n, "/") != DSIG_OK)
        return fprintf(stderr, "configuration: %s\n", dsig_last_error_detail()), 1;
    for (size_t i = 0; i < cfg->ntokens; i++) {
        DSIG_CT_SECRET(cfg->tokens[i].hash, 32);
        if (self_check)
            ct_probe(cfg->tokens[i].hash, "a configured token hash");
    }
    int bad = check_buckets(self_check);
    if (self_check)
        return ct_probe_summary();
    for (int i = 0; i < 3; i++) {
        char authz[128];
        snprintf(authz, sizeof authz, "Bearer %s", tokens[i]);
        size_t tok = 99;
        int rc = serve_auth(cfg, authz, &tok);
        if (rc != SERVE_AUTH_OK || tok >= cfg->ntokens || cfg->tokens[tok].tenant != (i < 2 ? 0u : 1u))
            bad = fprintf(stderr, "token %d: %d, index %zu\n", i, rc, tok);
    }
    static const char *const refused[] = {"Bearer ct-token-unknown", "Bearer ", "Basic xyz", "Bearer a b"};
    static const int expect[] = {SERVE_AUTH_UNKNOWN, SERVE_AUTH_MALFORMED, SERVE_AUTH_MALFORMED,
                                 SERVE_AUTH_MALFORMED};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        size_t tok = 0;
        int rc = serve_auth(cfg, refused[i], &tok);
        if (rc != expect[i])
            bad = fprintf(stderr, "\"%s\": %d, expected %d\n", refused[i], rc, expect[i]);
    }
    if (serve_auth(cfg, NULL, &(size_t){0}) != SERVE_AUTH_MISSING)
        bad = fprintf(stderr, "missing header not reported\n");
    dsig_serve_config_free(cfg);
    if (bad)
        return 1;
    printf("serve: bearer tokens of two tenants, unknown and malformed tokens, client-address buckets: no "
           "branch or address depending on the configured token hashes or the bucket key reported\n");
    return 0;
}
