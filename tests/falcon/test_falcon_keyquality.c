/*
 * FALCON512 / FALCON1024 private-key quality on import (docs/falcon.md): an AKP JWK
 * "priv" must pass the checks key generation applies to (f, g) (spec §3.8.2 Algorithm 5):
 * ‖(f, g)‖² < 16823 and the Gram–Schmidt norm ≤ 1.17·√q (falcon_keygen_gs_ok).
 *
 *  - every KAT private key still imports (no false positive);
 *  - (f, g) failing the norm, and (f, g) passing the norm but failing the Gram–Schmidt bound, are
 *    refused with DSIG_E_KEY naming that check;
 *  - the crafted "badly reduced" basis (f, g, F + k·f, G + k·g): it satisfies the NTRU equation and has
 *    the same h, and *neither* check catches it — correctly: both depend on (f, g) only, and so do the
 *    Gram–Schmidt norms of the basis, hence the leaves of the LDL tree (the sampler's deviations, which
 *    must stay ≥ σ_min). The test proves that: the leaves of both keys agree, the key imports, and its
 *    signatures verify. (The int8 encoding of F and G bounds how unreduced such a basis can be.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "testutil.h"

/* Hex value of the `idx`-th "name = ..." line of a KAT file (NULL when there is none). */
static uint8_t *field(const char *text, const char *name, unsigned idx, size_t *len)
{
    char key[16];
    snprintf(key, sizeof key, "\n%s = ", name);
    const char *p = text;
    for (unsigned i = 0; i <= idx; i++) {
        p = strstr(p, key);
        if (!p)
            return NULL;
        p += strlen(key);
    }
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

/* Import (pk, sk) as a JWK; returns the code, *out the key on success. */
static int import(const char *name, const uint8_t *pk, size_t pk_len, const uint8_t *sk,
                  size_t sk_len, dsig_key **out)
{
    char *j = akp_jwk(name, pk, pk_len, sk, sk_len);
    *out = NULL;
    int rc = dsig_jwk_import(out, j, strlen(j));
    free(j);
    return rc;
}

/* (f, g) refused with DSIG_E_KEY and a message containing `why` (F: any; the quality check comes
 * first). The public key is the KAT one: the refusal must not depend on it. */
static void expect_quality_refusal(const char *name, unsigned logn, const int8_t *f, const int8_t *g,
                                   const int8_t *F, const uint8_t *pk, size_t pk_len, const char *why)
{
    uint8_t sk[2305];
    size_t sk_len = FALCON_SK_LEN(logn);
    falcon_sk_encode(sk, f, g, F, logn);
    dsig_key *k = NULL;
    assert_int_equal(import(name, pk, pk_len, sk, sk_len, &k), DSIG_E_KEY);
    assert_null(k);
    const char *d = dsig_last_error_detail();
    if (!d || !strstr(d, why))
        fail_msg("%s: expected a refusal naming \"%s\", got \"%s\"", name, why, d ? d : "(none)");
}

/* Leaves of an LDL tree (the per-coordinate sampler scale √leaf/σ), in tree order. */
static size_t leaves(const double *tree, unsigned logn, double *out)
{
    if (logn == 0) {
        out[0] = tree[0];
        return 1;
    }
    size_t n = (size_t)1 << logn, sub = (size_t)logn << (logn - 1);
    size_t a = leaves(tree + n, logn - 1, out);
    return a + leaves(tree + n + sub, logn - 1, out + a);
}

static void run(unsigned logn)
{
    const char *name = logn == 9 ? "FALCON512" : "FALCON1024";
    const dsig_alg *alg = dsig_alg_by_name(name);
    assert_non_null(alg);
    size_t flen, pk_len, sk_len, n = (size_t)1 << logn;
    char *text = tu_read_vector_file(logn == 9 ? "falcon/round3-kat/falcon512-KAT.rsp"
                                               : "falcon/round3-kat/falcon1024-KAT.rsp",
                                     &flen);

    /* 1. Every KAT key imports. */
    unsigned count = 0;
    for (;; count++) {
        uint8_t *pk = field(text, "pk", count, &pk_len), *sk = field(text, "sk", count, &sk_len);
        if (!pk || !sk) {
            free(pk);
            free(sk);
            break;
        }
        dsig_key *k = NULL;
        int rc = import(name, pk, pk_len, sk, sk_len, &k);
        if (rc != DSIG_OK)
            fail_msg("%s KAT key %u refused: %s", name, count, dsig_last_error_detail());
        dsig_key_free(k);
        free(pk);
        free(sk);
    }
    assert_true(count >= 90);

    uint8_t *pk = field(text, "pk", 0, &pk_len), *sk = field(text, "sk", 0, &sk_len);
    free(text);
    int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N];
    int8_t f2[FALCON_MAX_N], g2[FALCON_MAX_N], F2[FALCON_MAX_N], G2[FALCON_MAX_N];
    assert_int_equal(falcon_sk_decode(f, g, F, sk, sk_len, logn), DSIG_OK);
    assert_int_equal(falcon_complete_private(G, f, g, F, logn), DSIG_OK);

    /* 2. Norm check: f with every coefficient at the largest encodable magnitude. */
    int fmax = logn == 9 ? 31 : 15;
    for (size_t u = 0; u < n; u++) {
        f2[u] = (int8_t)((u & 1) ? fmax : -fmax);
        g2[u] = g[u];
    }
    expect_quality_refusal(name, logn, f2, g2, F, pk, pk_len, "norm check");

    /* 3. Gram–Schmidt check: f = 1, g = 0 has ‖(f, g)‖² = 1 but its dual vector is (q, 0). A shorter
     * variant with the same property: g = f (so f·f̄ + g·ḡ = 2·f·f̄). */
    memset(f2, 0, sizeof f2);
    memset(g2, 0, sizeof g2);
    f2[0] = 1;
    assert_false(falcon_keygen_gs_ok(f2, g2, logn));
    expect_quality_refusal(name, logn, f2, g2, F, pk, pk_len, "Gram-Schmidt");
    uint32_t sq = 0;
    for (size_t u = 0; u < n; u++)
        sq += (uint32_t)(2 * f[u] * f[u]);
    if (sq < 16823 && !falcon_keygen_gs_ok(f, f, logn))
        expect_quality_refusal(name, logn, f, f, F, pk, pk_len, "Gram-Schmidt");

    /* 4. Badly reduced basis (f, g, F + c·x^j·f, G + c·x^j·g): the largest |c| (and a rotation j) that
     * keeps F and G in int8. Same lattice, same h, NTRU equation still holds. */
    int best_c = 0;
    size_t best_j = 0;
    for (size_t j = 0; j < 8; j++) {
        for (int c = 1; c <= 40; c++) {
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                int ok = 1;
                for (size_t u = 0; u < n && ok; u++) {
                    /* (x^j·f)[u] = f[u − j], negated on wrap-around (x^n = −1). */
                    int fj = u >= j ? f[u - j] : -f[n + u - j];
                    int gj = u >= j ? g[u - j] : -g[n + u - j];
                    int a = F[u] + sgn * c * fj, b = G[u] + sgn * c * gj;
                    ok = a > -128 && a < 128 && b > -128 && b < 128;
                }
                if (ok && c > abs(best_c)) {
                    best_c = sgn * c;
                    best_j = j;
                }
            }
        }
    }
    assert_int_not_equal(best_c, 0);
    uint64_t n_before = 0, n_after = 0;
    for (size_t u = 0; u < n; u++) {
        int fj = u >= best_j ? f[u - best_j] : -f[n + u - best_j];
        int gj = u >= best_j ? g[u - best_j] : -g[n + u - best_j];
        F2[u] = (int8_t)(F[u] + best_c * fj);
        G2[u] = (int8_t)(G[u] + best_c * gj);
        n_before += (uint64_t)(F[u] * F[u] + G[u] * G[u]);
        n_after += (uint64_t)(F2[u] * F2[u] + G2[u] * G2[u]);
    }
    print_message("%s: (F, G) += %d·x^%zu·(f, g): ||(F,G)||^2 %llu -> %llu\n", name, best_c, best_j,
                  (unsigned long long)n_before, (unsigned long long)n_after);
    int8_t Gc[FALCON_MAX_N];
    assert_int_equal(falcon_complete_private(Gc, f, g, F2, logn), DSIG_OK);
    assert_memory_equal(Gc, G2, n);

    /* Same Gram–Schmidt norms, so the same LDL leaves (sampler deviations), up to rounding. */
    falcon_expanded e1, e2;
    assert_int_equal(falcon_expand_private(&e1, f, g, F, G, logn), DSIG_OK);
    assert_int_equal(falcon_expand_private(&e2, f, g, F2, G2, logn), DSIG_OK);
    double *l1 = malloc(n * sizeof *l1), *l2 = malloc(n * sizeof *l2);
    assert_int_equal(leaves(e1.tree, logn, l1), n);
    assert_int_equal(leaves(e2.tree, logn, l2), n);
    double worst = 0;
    for (size_t u = 0; u < n; u++) {
        double r = fabs(l1[u] - l2[u]) / l1[u];
        worst = r > worst ? r : worst;
    }
    print_message("%s: largest relative difference of the LDL leaves: %.3g\n", name, worst);
    assert_true(worst < 1e-9);
    free(l1);
    free(l2);
    falcon_expanded_clear(&e1);
    falcon_expanded_clear(&e2);

    /* It imports (neither check is about F, G) and signs correctly. */
    uint8_t sk2[2305], sig[1400];
    falcon_sk_encode(sk2, f, g, F2, logn);
    assert_memory_not_equal(sk2, sk, sk_len);
    dsig_key *k = NULL;
    assert_int_equal(import(name, pk, pk_len, sk2, sk_len, &k), DSIG_OK);
    for (int i = 0; i < 3; i++) {
        size_t len = 0;
        assert_int_equal(dsig_sign(alg, k, "abc", 3, sig, sizeof sig, &len), DSIG_OK);
        assert_int_equal(dsig_verify(alg, k, "abc", 3, sig, len), DSIG_OK);
    }
    dsig_key_free(k);
    free(pk);
    free(sk);
}

static void test_keyquality_512(void **state)
{
    (void)state;
    run(9);
}

static void test_keyquality_1024(void **state)
{
    (void)state;
    run(10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyquality_512),
        cmocka_unit_test(test_keyquality_1024),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
