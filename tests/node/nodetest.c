/*
 * tests/node/nodetest.c — helpers shared by the node tests (see nodetest.h).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nodetest.h"
#include "testutil.h"

/* Base64url without padding (for comparing a JWK "x" with the vector). */
static void b64url(const uint8_t *in, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = a[(v >> 18) & 63];
        out[o++] = a[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = a[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = a[v & 63];
    }
    out[o] = 0;
}

/* RFC 8032 key i from the official vectors, bound to DSig; the public JWK's x must be the vector's
 * publicKey. */
dsig_key *nt_key(size_t i, char **public_jwk)
{
    json_t *v = tu_load_json("eddsa/rfc8032/ed25519.json");
    assert_true(i < json_array_size(v));
    json_t *t = json_array_get(v, i);
    size_t sl, pl;
    uint8_t *sk = tu_hex(tu_str(t, "secretKey"), &sl);
    uint8_t *pk = tu_hex(tu_str(t, "publicKey"), &pl);
    assert_int_equal(sl, 32);
    assert_int_equal(pl, 32);
    /* import the vector's secret key as a private JWK; the library derives x from d */
    char d[64], x[64], priv[256];
    b64url(sk, 32, d);
    b64url(pk, 32, x);
    snprintf(priv, sizeof priv, "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"alg\":\"DSig\",\"d\":\"%s\",\"x\":\"%s\"}",
             d, x);
    dsig_key *k = NULL;
    assert_int_equal(dsig_jwk_import(&k, priv, strlen(priv)), DSIG_OK);
    char *jwk = NULL;
    size_t jl;
    assert_int_equal(dsig_jwk_export(k, 0, &jwk, &jl), DSIG_OK);
    json_t *j = json_loadb(jwk, jl, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "x")), x); /* known answer */
    json_object_del(j, "kid"); /* keep "alg":"DSig": the configuration takes DSig keys only */
    *public_jwk = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    dsig_free(jwk);
    free(sk);
    free(pk);
    json_decref(v);
    return k;
}

/* Bind port 0 on loopback, read the port, release it. */
unsigned nt_free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &l), 0);
    close(s);
    return ntohs(a.sin_port);
}

/* Assemble a configuration text. */
char *nt_config(size_t count, const unsigned *ports, const char *const *groups, const char *groups_obj)
{
    size_t cap = 4096 + count * 1024, o = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    o += (size_t)snprintf(s + o, cap - o, "{\"nodes\":[");
    for (size_t i = 0; i < count; i++) {
        char *jwk;
        dsig_key *k = nt_key(i, &jwk);
        dsig_key_free(k);
        o += (size_t)snprintf(s + o, cap - o,
                              "%s{\"id\":%zu,\"address\":\"tcp:127.0.0.1:%u\",\"public_key\":%s,\"groups\":%s}",
                              i ? "," : "", i + 1, ports[i], jwk, groups[i]);
        free(jwk);
    }
    o += (size_t)snprintf(s + o, cap - o, "],\"groups\":%s}", groups_obj);
    assert_true(o < cap);
    return s;
}

void nt_nap(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

dsig_key *nt_private(size_t i)
{
    char *j;
    dsig_key *k = nt_key(i, &j);
    free(j);
    return k;
}

dsig_key *nt_public(size_t i)
{
    dsig_key *k = nt_private(i), *pub;
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    dsig_key_free(k);
    return pub;
}

dsig_node_config *nt_pair_config(const unsigned ports[2], char **txt)
{
    static const char *const groups[] = {"[\"g1\"]", "[\"g1\"]"};
    *txt = nt_config(2, ports, groups, "{\"g1\":{}}");
    dsig_node_config *cfg;
    assert_int_equal(dsig_node_config_parse(*txt, strlen(*txt), &cfg), DSIG_OK);
    return cfg;
}
