/*
 * FALCON512 / FALCON1024 private-key validity: an AKP JWK whose "priv" (f, g, F) does
 * not satisfy the NTRU equation f·G − g·F = q over Z[x]/(x^n+1) must be refused on import, even
 * when G = gF/f mod q fits in int8 and h = g/f matches "pub". Without the check, F = 0 (so G = 0)
 * would be accepted and signing would then never terminate (singular basis: the LDL tree holds NaN/zero leaves
 * and no sample is ever short enough); (2F, 2G) would be accepted as well (a sublattice of index 2).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "testutil.h"

/* Hex value of "name = ..." in the first KAT record. */
static uint8_t *field(const char *text, const char *name, size_t *len)
{
    char key[16];
    snprintf(key, sizeof key, "\n%s = ", name);
    const char *p = strstr(text, key);
    assert_non_null(p);
    p += strlen(key);
    const char *e = strchr(p, '\n');
    char *hex = strndup(p, (size_t)(e - p));
    uint8_t *v = tu_hex(hex, len);
    free(hex);
    return v;
}

/* {"kty":"AKP","alg":...,"pub":...,"priv":...} */
static char *akp_jwk(const char *alg, const uint8_t *pk, size_t pk_len, const uint8_t *sk,
                     size_t sk_len)
{
    char *pub = dsig_b64url_encode_alloc(pk, pk_len);
    char *priv = dsig_b64url_encode_alloc(sk, sk_len);
    size_t n = strlen(pub) + strlen(priv) + 128;
    char *j = malloc(n);
    snprintf(j, n, "{\"kty\":\"AKP\",\"alg\":\"%s\",\"pub\":\"%s\",\"priv\":\"%s\"}", alg, pub, priv);
    dsig_xfree(pub, 0);
    dsig_xfree(priv, 0);
    return j;
}

/* A hang (the pre-fix behaviour) becomes a test failure instead of a ctest timeout. */
static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "signing with a crafted Falcon key did not terminate\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

/* Import must refuse the key; if it does not, signing must still terminate (it did not before). */
static void expect_refused(const char *name, const uint8_t *pk, size_t pk_len, const uint8_t *sk,
                           size_t sk_len)
{
    char *j = akp_jwk(name, pk, pk_len, sk, sk_len);
    dsig_key *k = NULL;
    int rc = dsig_jwk_import(&k, j, strlen(j));
    if (rc == DSIG_OK) {
        uint8_t sig[1400];
        size_t len = 0;
        alarm(20);
        (void)dsig_sign(dsig_alg_by_name(name), k, "abc", 3, sig, sizeof sig, &len);
        alarm(0);
        dsig_key_free(k);
    }
    free(j);
    assert_int_equal(rc, DSIG_E_KEY);
}

/* KAT key with (F, G) replaced by (0, 0) and by (2F, 2G): both keep h = g/f and an int8 G. */
static void run(unsigned logn)
{
    const char *name = logn == 9 ? "FALCON512" : "FALCON1024";
    size_t flen, pk_len, sk_len, n = (size_t)1 << logn;
    char *text = tu_read_vector_file(logn == 9 ? "falcon/round3-kat/falcon512-KAT.rsp"
                                               : "falcon/round3-kat/falcon1024-KAT.rsp",
                                     &flen);
    uint8_t *pk = field(text, "pk", &pk_len), *sk = field(text, "sk", &sk_len);
    free(text);
    int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N], Z[FALCON_MAX_N];
    assert_int_equal(falcon_sk_decode(f, g, F, sk, sk_len, logn), DSIG_OK);
    assert_int_equal(falcon_complete_private(G, f, g, F, logn), DSIG_OK);
    uint8_t *bad = malloc(sk_len);

    /* The genuine key is accepted (the check has no false positive). */
    char *j = akp_jwk(name, pk, pk_len, sk, sk_len);
    dsig_key *k = NULL;
    assert_int_equal(dsig_jwk_import(&k, j, strlen(j)), DSIG_OK);
    dsig_key_free(k);
    free(j);

    /* F = 0 → G = 0: f·G − g·F = 0. */
    memset(Z, 0, sizeof Z);
    falcon_sk_encode(bad, f, g, Z, logn);
    expect_refused(name, pk, pk_len, bad, sk_len);

    /* (2F, 2G): f·G − g·F = 2q (only possible when every 2F, 2G coefficient fits). */
    int fits = 1;
    for (size_t u = 0; u < n; u++) {
        fits &= F[u] > -64 && F[u] < 64 && G[u] > -64 && G[u] < 64;
        Z[u] = (int8_t)(2 * F[u]);
    }
    if (fits) {
        falcon_sk_encode(bad, f, g, Z, logn);
        expect_refused(name, pk, pk_len, bad, sk_len);
    }
    free(bad);
    free(pk);
    free(sk);
}

static void test_ntru_equation_512(void **state)
{
    (void)state;
    run(9);
}

static void test_ntru_equation_1024(void **state)
{
    (void)state;
    run(10);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ntru_equation_512),
        cmocka_unit_test(test_ntru_equation_1024),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
