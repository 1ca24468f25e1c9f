/*
 * ML-DSA core (src/pq/mldsa): NIST ACVP known answers for KeyGen_internal (all groups), Sign_internal
 * (every "internal" sigGen group, externalMu true and false, deterministic and hedged) and
 * Verify_internal (every "internal" sigVer group, valid and invalid cases); the NTT against schoolbook
 * negacyclic multiplication; Decompose / Power2Round exhaustively against the FIPS 204 definitions;
 * round trips, corrupted and mis-sized signatures, malformed hint encodings and malformed secret keys.
 * Wycheproof's ML-DSA files are run at the μ level too (keygen from seed, sign with μ, verify).
 * The "external" ACVP groups (pure and preHash) are exercised through the public API in tests/mldsa_api.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "hash/keccak.h"
#include "pq/mldsa/mldsa.h"
#include "pq/mldsa/ntt.h"
#include "pq/mldsa/packing.h"
#include "pq/mldsa/reduce.h"
#include "pq/mldsa/rounding.h"
#include "testutil.h"

#define ACVP "mldsa/acvp/"

/* Test case `tcId` inside expectedResults' group `tgId`, or NULL. */
static json_t *find_expected(json_t *exp, json_int_t tgid, json_int_t tcid)
{
    size_t i, j;
    json_t *g, *t;
    json_array_foreach(json_object_get(exp, "testGroups"), i, g)
    {
        if (json_integer_value(json_object_get(g, "tgId")) != tgid)
            continue;
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            if (json_integer_value(json_object_get(t, "tcId")) == tcid)
                return t;
        }
    }
    return NULL;
}

/* Parameter set named by an ACVP group (fails the test if unknown). */
static const dsig_mldsa_params *group_params(const json_t *g)
{
    const dsig_mldsa_params *p = dsig_mldsa_params_by_name(tu_str(g, "parameterSet"));
    assert_non_null(p);
    return p;
}

/* Fails with the case id if got differs from the hex answer. */
static void expect_hex(const uint8_t *got, size_t got_len, const char *want_hex, const char *what, json_int_t tc)
{
    size_t n;
    uint8_t *want = tu_hex(want_hex, &n);
    if (n != got_len || memcmp(got, want, n) != 0)
        fail_msg("%s tcId %lld: output differs from the known answer", what, (long long)tc);
    free(want);
}

/* Parameter lookup by name and the sizes of FIPS 204 Table 2. */
static void test_params(void **state)
{
    (void)state;
    assert_ptr_equal(dsig_mldsa_params_by_name("ML-DSA-44"), &dsig_mldsa44);
    assert_ptr_equal(dsig_mldsa_params_by_name("ML-DSA-65"), &dsig_mldsa65);
    assert_ptr_equal(dsig_mldsa_params_by_name("ML-DSA-87"), &dsig_mldsa87);
    assert_null(dsig_mldsa_params_by_name("ML-DSA-43"));
    assert_null(dsig_mldsa_params_by_name(NULL));
    const dsig_mldsa_params *all[] = {&dsig_mldsa44, &dsig_mldsa65, &dsig_mldsa87};
    for (int i = 0; i < 3; i++) {
        const dsig_mldsa_params *p = all[i];
        assert_int_equal(p->beta, p->tau * p->eta);
        assert_int_equal(p->pk_bytes, 32 + 320 * p->k);
        assert_int_equal(p->sk_bytes, 128 + 32 * ((p->k + p->l) * mldsa_eta_bits(p) + 13 * p->k));
        assert_int_equal(p->sig_bytes, p->lambda / 4 + 32 * p->l * (size_t)mldsa_z_bits(p) + p->omega + p->k);
    }
}

/* Schoolbook product in Z_q[X]/(X^256 + 1), standard representatives. */
static void negacyclic_mul(int64_t r[256], const int32_t *a, const int32_t *b)
{
    const int64_t q = DSIG_MLDSA_Q;
    memset(r, 0, 256 * sizeof r[0]);
    for (int i = 0; i < 256; i++)
        for (int j = 0; j < 256; j++) {
            int64_t t = ((int64_t)a[i] * b[j]) % q;
            if (i + j < 256)
                r[i + j] = (r[i + j] + t) % q;
            else
                r[i + j - 256] = (r[i + j - 256] - t) % q;
        }
    for (int i = 0; i < 256; i++)
        r[i] = (r[i] % q + q) % q;
}

/* x mod q in [0, q). */
static int64_t modq(int64_t x)
{
    return (x % DSIG_MLDSA_Q + DSIG_MLDSA_Q) % DSIG_MLDSA_Q;
}

/* Random coefficients with |a_i| < bound. */
static void rand_poly(int32_t *a, int32_t bound, uint64_t seed)
{
    uint32_t buf[256];
    tu_fill((uint8_t *)buf, sizeof buf, seed);
    for (int i = 0; i < 256; i++)
        a[i] = (int32_t)(buf[i] % (uint32_t)(2 * bound - 1)) - (bound - 1);
}

/* Checks one NTT back-end set: product via NTT equals the schoolbook product, the output bounds of
 * ntt.h hold, and invntt(ntt(a)) = a·2^32. */
static void check_ntt(void (*ntt)(int32_t *), void (*invntt)(int32_t *),
                      void (*pw)(int32_t *, const int32_t *, const int32_t *),
                      void (*pwacc)(int32_t *, const int32_t *, const int32_t *, unsigned))
{
    const int32_t q = DSIG_MLDSA_Q;
    const int64_t r2 = modq((int64_t)1 << 32);
    for (uint64_t seed = 1; seed <= 6; seed++) {
        int32_t a[256], b[256], ah[256], bh[256], c[256];
        int64_t want[256];
        rand_poly(a, q, seed);
        rand_poly(b, seed & 1 ? q : 4, seed + 100);
        memcpy(ah, a, sizeof a);
        memcpy(bh, b, sizeof b);
        ntt(ah);
        ntt(bh);
        for (int i = 0; i < 256; i++) {
            assert_true(ah[i] > -9 * q && ah[i] < 9 * q);
            assert_true(bh[i] > -9 * q && bh[i] < 9 * q);
        }
        /* reduce ah below q as pointwise_acc requires |a| < q of its first operand */
        int32_t ahr[256];
        for (int i = 0; i < 256; i++)
            ahr[i] = mldsa_reduce32(ah[i]);
        pw(c, ahr, bh);
        invntt(c);
        negacyclic_mul(want, a, b);
        for (int i = 0; i < 256; i++) {
            assert_true(c[i] > -q && c[i] < q);
            assert_int_equal(modq(c[i]), want[i]); /* R^-1 from pw cancels R from invntt */
        }
        /* invntt(ntt(a)) = a·R */
        memcpy(c, ahr, sizeof c);
        invntt(c);
        for (int i = 0; i < 256; i++)
            assert_int_equal(modq(c[i]), modq(modq(a[i]) * r2));
        /* pointwise_acc over 8 pairs = sum of pointwise products */
        int32_t va[8 * 256], vb[8 * 256], acc[256];
        for (int j = 0; j < 8; j++) {
            rand_poly(va + 256 * j, q, seed * 17 + (uint64_t)j);
            rand_poly(vb + 256 * j, 9 * q, seed * 31 + (uint64_t)j);
        }
        for (unsigned len = 1; len <= 8; len += 3) {
            pwacc(acc, va, vb, len);
            for (int i = 0; i < 256; i++) {
                int64_t s = 0;
                for (unsigned j = 0; j < len; j++)
                    s = modq(s + modq((int64_t)va[256 * j + i]) * modq(vb[256 * j + i]));
                /* acc = s·R^-1, so acc·R = s */
                assert_true(acc[i] > -q && acc[i] < q);
                assert_int_equal(modq(modq(acc[i]) * r2), s);
            }
        }
    }
}

/* @spec FIPS 204 Algorithms 41, 42, 45: portable and dispatched NTT back-ends. */
static void test_ntt(void **state)
{
    (void)state;
    check_ntt(dsig_mldsa_ntt_c, dsig_mldsa_invntt_tomont_c, dsig_mldsa_pointwise_montgomery_c,
              dsig_mldsa_pointwise_acc_montgomery_c);
    check_ntt(dsig_mldsa_ntt, dsig_mldsa_invntt_tomont, dsig_mldsa_pointwise_montgomery,
              dsig_mldsa_pointwise_acc_montgomery);
    /* NTT of X is (ζ^(2·BitRev8(j)+1))_j: natural order as in FIPS 204 Algorithm 41 */
    int32_t x[256] = {0};
    x[1] = 1;
    dsig_mldsa_ntt(x);
    for (unsigned j = 0; j < 256; j++) {
        unsigned br = 0;
        for (unsigned b = 0; b < 8; b++)
            br |= ((j >> b) & 1u) << (7 - b);
        int64_t z = 1;
        for (unsigned e = 0; e < 2 * br + 1; e++)
            z = z * 1753 % DSIG_MLDSA_Q;
        assert_int_equal(modq(x[j]), z);
    }
}

/* @spec FIPS 204 Algorithm 36 Decompose, literally (reference for the branch-free version). */
static void decompose_ref(int32_t gamma2, int32_t r, int32_t *r1, int32_t *r0)
{
    int32_t a = 2 * gamma2;
    int32_t rp = r % DSIG_MLDSA_Q;
    int32_t z = rp % a;
    if (z > gamma2)
        z -= a;
    if (rp - z == DSIG_MLDSA_Q - 1) {
        *r1 = 0;
        *r0 = z - 1;
    } else {
        *r1 = (rp - z) / a;
        *r0 = z;
    }
}

/* Decompose and UseHint for every r in [0, q), both γ2; Power2Round for every r. */
static void test_rounding_exhaustive(void **state)
{
    (void)state;
    const int32_t g2s[2] = {(DSIG_MLDSA_Q - 1) / 88, (DSIG_MLDSA_Q - 1) / 32};
    for (int g = 0; g < 2; g++) {
        const mldsa_decomp d = mldsa_decomp_init(g2s[g]);
        for (int32_t r = 0; r < DSIG_MLDSA_Q; r++) {
            int32_t w1, w0, e1, e0;
            w1 = mldsa_decompose(&d, &w0, r);
            decompose_ref(g2s[g], r, &e1, &e0);
            if (w1 != e1 || w0 != e0)
                fail_msg("Decompose(%d) gamma2=%d: got (%d,%d), want (%d,%d)", r, g2s[g], w1, w0, e1, e0);
            /* UseHint (Algorithm 40) with h = 1 */
            int32_t m = (DSIG_MLDSA_Q - 1) / (2 * g2s[g]);
            int32_t want = e0 > 0 ? (e1 + 1) % m : (e1 - 1 + m) % m;
            if (mldsa_use_hint(&d, r, 1) != want || mldsa_use_hint(&d, r, 0) != e1)
                fail_msg("UseHint(%d) gamma2=%d", r, g2s[g]);
        }
    }
    for (int32_t r = 0; r < DSIG_MLDSA_Q; r++) {
        int32_t r0, r1 = mldsa_power2round(&r0, r);
        int32_t z = r % 8192;
        if (z > 4096)
            z -= 8192;
        if (r0 != z || r1 != (r - z) / 8192)
            fail_msg("Power2Round(%d)", r);
    }
}

/* MakeHint in the signer's form agrees with Algorithm 39's definition HighBits(r) ≠ HighBits(r + z). */
static void test_make_hint(void **state)
{
    (void)state;
    const int32_t g2s[2] = {(DSIG_MLDSA_Q - 1) / 88, (DSIG_MLDSA_Q - 1) / 32};
    uint32_t rnd[4096];
    tu_fill((uint8_t *)rnd, sizeof rnd, 77);
    for (int g = 0; g < 2; g++) {
        const mldsa_decomp d = mldsa_decomp_init(g2s[g]);
        for (int i = 0; i < 4096; i += 2) {
            /* w in [0, q), perturbation e = -cs2 + ct0 with |e| < γ2 (plus the edges) */
            int32_t w = (int32_t)(rnd[i] % DSIG_MLDSA_Q);
            int32_t e = (int32_t)(rnd[i + 1] % (uint32_t)(2 * g2s[g])) - g2s[g];
            if (i < 40)
                w = i < 20 ? i : DSIG_MLDSA_Q - 1 - (i - 20);
            int32_t w0, w1 = mldsa_decompose(&d, &w0, w);
            int32_t v0, v1 = mldsa_decompose(&d, &v0, (int32_t)modq((int64_t)w + e));
            int32_t h = mldsa_make_hint(w0 + e, w1, g2s[g]);
            assert_int_equal(h, v1 != w1);
        }
    }
}

/* @spec FIPS 204 Algorithm 6: ACVP keyGen, every test of every group, pk and sk byte-exact. */
static void test_acvp_keygen(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json(ACVP "ML-DSA-keyGen-FIPS204/prompt.json");
    json_t *exp = tu_load_json(ACVP "ML-DSA-keyGen-FIPS204/expectedResults.json");
    size_t i, j, n = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        const dsig_mldsa_params *p = group_params(g);
        json_int_t tg = json_integer_value(json_object_get(g, "tgId"));
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_int_t tc = json_integer_value(json_object_get(t, "tcId"));
            json_t *e = find_expected(exp, tg, tc);
            assert_non_null(e);
            size_t sl;
            uint8_t *seed = tu_hex(tu_str(t, "seed"), &sl);
            assert_int_equal(sl, 32);
            uint8_t *pk = malloc(p->pk_bytes), *sk = malloc(p->sk_bytes);
            assert_int_equal(dsig_mldsa_keygen_internal(p, pk, sk, seed), DSIG_OK);
            expect_hex(pk, p->pk_bytes, tu_str(e, "pk"), "keyGen pk", tc);
            expect_hex(sk, p->sk_bytes, tu_str(e, "sk"), "keyGen sk", tc);
            free(seed);
            free(pk);
            free(sk);
            n++;
        }
    }
    print_message("ACVP keyGen: %zu tests passed\n", n);
    assert_int_equal(n, 66);
    json_decref(prompt);
    json_decref(exp);
}

/* μ for the internal interface: given, or H(tr ‖ M', 64) with tr from the sk (bytes 64..127) or pk. */
static void internal_mu(const dsig_mldsa_params *p, const json_t *g, const json_t *t, const uint8_t *sk,
                        const uint8_t *pk, uint8_t mu[64])
{
    if (json_is_true(json_object_get(g, "externalMu"))) {
        size_t n;
        uint8_t *m = tu_hex(tu_str(t, "mu"), &n);
        assert_int_equal(n, 64);
        memcpy(mu, m, 64);
        free(m);
        return;
    }
    uint8_t tr[64];
    if (sk)
        memcpy(tr, sk + 64, 64);
    else
        dsig_mldsa_tr(p, pk, tr);
    size_t mlen;
    uint8_t *msg = tu_hex(tu_str(t, "message"), &mlen);
    dsig_keccak k;
    dsig_shake256_init(&k);
    dsig_keccak_absorb(&k, tr, 64);
    dsig_keccak_absorb(&k, msg, mlen);
    dsig_shake_finalize(&k);
    dsig_keccak_squeeze(&k, mu, 64);
    free(msg);
}

/* @spec FIPS 204 Algorithm 7: ACVP sigGen, every "internal" group (deterministic and hedged,
 * externalMu true and false), signature byte-exact; each signature is also checked to verify under
 * the public key the sk implies (t1 from keygen is not given, so only through our own verify of a
 * fresh key in the round-trip test). */
static void test_acvp_siggen_internal(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json(ACVP "ML-DSA-sigGen-FIPS204/prompt.json");
    json_t *exp = tu_load_json(ACVP "ML-DSA-sigGen-FIPS204/expectedResults.json");
    size_t i, j, n = 0, groups = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        if (strcmp(tu_str(g, "signatureInterface"), "internal") != 0)
            continue;
        groups++;
        const dsig_mldsa_params *p = group_params(g);
        json_int_t tg = json_integer_value(json_object_get(g, "tgId"));
        int det = json_is_true(json_object_get(g, "deterministic"));
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_int_t tc = json_integer_value(json_object_get(t, "tcId"));
            json_t *e = find_expected(exp, tg, tc);
            assert_non_null(e);
            size_t skl;
            uint8_t *sk = tu_hex(tu_str(t, "sk"), &skl);
            assert_int_equal(skl, p->sk_bytes);
            uint8_t rnd[32] = {0};
            if (!det) {
                size_t rl;
                uint8_t *r = tu_hex(tu_str(t, "rnd"), &rl);
                assert_int_equal(rl, 32);
                memcpy(rnd, r, 32);
                free(r);
            }
            uint8_t mu[64];
            internal_mu(p, g, t, sk, NULL, mu);
            uint8_t *sig = malloc(p->sig_bytes);
            int rc = dsig_mldsa_sign_mu(p, sig, sk, mu, rnd);
            if (rc != DSIG_OK)
                fail_msg("sigGen tcId %lld: sign returned %d (%s)", (long long)tc, rc, dsig_last_error_detail());
            expect_hex(sig, p->sig_bytes, tu_str(e, "signature"), "sigGen", tc);
            free(sig);
            free(sk);
            n++;
        }
    }
    print_message("ACVP sigGen internal: %zu tests in %zu groups passed\n", n, groups);
    assert_int_equal(groups, 12);
    assert_true(n >= 12 * 10);
    json_decref(prompt);
    json_decref(exp);
}

/* @spec FIPS 204 Algorithm 8: ACVP sigVer, every "internal" group; testPassed must match. The
 * internalProjection's `reason` is only printed to diagnose a mismatch. */
static void test_acvp_sigver_internal(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json(ACVP "ML-DSA-sigVer-FIPS204/prompt.json");
    json_t *exp = tu_load_json(ACVP "ML-DSA-sigVer-FIPS204/expectedResults.json");
    json_t *proj = tu_load_json(ACVP "ML-DSA-sigVer-FIPS204/internalProjection.json");
    size_t i, j, n = 0, npass = 0, groups = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        if (strcmp(tu_str(g, "signatureInterface"), "internal") != 0)
            continue;
        groups++;
        const dsig_mldsa_params *p = group_params(g);
        json_int_t tg = json_integer_value(json_object_get(g, "tgId"));
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_int_t tc = json_integer_value(json_object_get(t, "tcId"));
            json_t *e = find_expected(exp, tg, tc);
            assert_non_null(e);
            int want = json_is_true(json_object_get(e, "testPassed"));
            size_t pkl, sigl;
            uint8_t *pk = tu_hex(tu_str(t, "pk"), &pkl);
            assert_int_equal(pkl, p->pk_bytes);
            uint8_t *sig = tu_hex(tu_str(t, "signature"), &sigl);
            uint8_t mu[64];
            internal_mu(p, g, t, NULL, pk, mu);
            int rc = dsig_mldsa_verify_mu(p, pk, mu, sig, sigl);
            if ((rc == DSIG_OK) != want) {
                json_t *pt = find_expected(proj, tg, tc);
                const char *reason = pt ? json_string_value(json_object_get(pt, "reason")) : NULL;
                fail_msg("sigVer tcId %lld: got %d (%s), expected %s (reason: %s)", (long long)tc, rc,
                         rc ? dsig_last_error_detail() : "ok", want ? "valid" : "invalid",
                         reason ? reason : "?");
            }
            if (!want)
                assert_int_equal(rc, DSIG_E_VERIFY);
            npass += (size_t)want;
            free(pk);
            free(sig);
            n++;
        }
    }
    print_message("ACVP sigVer internal: %zu tests (%zu valid) in %zu groups passed\n", n, npass, groups);
    assert_int_equal(groups, 6);
    assert_true(npass > 0 && npass < n);
    json_decref(prompt);
    json_decref(exp);
    json_decref(proj);
}

/* Round trips for each set; every corrupted byte position tried must fail, as must wrong lengths,
 * another μ, another key. */
static void test_roundtrip_and_corruption(void **state)
{
    (void)state;
    const dsig_mldsa_params *all[] = {&dsig_mldsa44, &dsig_mldsa65, &dsig_mldsa87};
    for (int s = 0; s < 3; s++) {
        const dsig_mldsa_params *p = all[s];
        uint8_t *pk = malloc(p->pk_bytes), *sk = malloc(p->sk_bytes), *sig = malloc(p->sig_bytes + 1);
        uint8_t *pk2 = malloc(p->pk_bytes), *sk2 = malloc(p->sk_bytes);
        uint8_t xi[32], mu[64], rnd[32];
        for (uint64_t it = 0; it < 4; it++) {
            tu_fill(xi, sizeof xi, 1000 + it + 10 * (uint64_t)s);
            tu_fill(mu, sizeof mu, 2000 + it);
            tu_fill(rnd, sizeof rnd, 3000 + it);
            if (it & 1)
                memset(rnd, 0, sizeof rnd);
            assert_int_equal(dsig_mldsa_keygen_internal(p, pk, sk, xi), DSIG_OK);
            uint8_t tr[64];
            dsig_mldsa_tr(p, pk, tr);
            assert_memory_equal(tr, sk + 64, 64);
            assert_int_equal(dsig_mldsa_sign_mu(p, sig, sk, mu, rnd), DSIG_OK);
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes), DSIG_OK);
            /* length */
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes - 1), DSIG_E_VERIFY);
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes + 1), DSIG_E_VERIFY);
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, 0), DSIG_E_VERIFY);
            /* other message representative */
            mu[5] ^= 1;
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes), DSIG_E_VERIFY);
            mu[5] ^= 1;
            /* other key */
            xi[0] ^= 1;
            assert_int_equal(dsig_mldsa_keygen_internal(p, pk2, sk2, xi), DSIG_OK);
            assert_int_equal(dsig_mldsa_verify_mu(p, pk2, mu, sig, p->sig_bytes), DSIG_E_VERIFY);
            /* corrupted bytes: c̃, z (start, middle), hints, last byte; two bit positions each */
            const size_t zoff = p->lambda / 4, hoff = p->sig_bytes - p->omega - p->k;
            const size_t pos[] = {0, zoff - 1, zoff, zoff + 100, hoff - 1, hoff, p->sig_bytes - 2,
                                  p->sig_bytes - 1, (size_t)it * 97 % p->sig_bytes};
            for (size_t k = 0; k < sizeof pos / sizeof pos[0]; k++)
                for (unsigned bit = 0; bit < 8; bit += 7) {
                    sig[pos[k]] ^= (uint8_t)(1u << bit);
                    if (dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes) != DSIG_E_VERIFY)
                        fail_msg("%s: flipping bit %u of byte %zu was accepted", p->name, bit, pos[k]);
                    sig[pos[k]] ^= (uint8_t)(1u << bit);
                }
            /* corrupted public key */
            pk[40] ^= 4;
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes), DSIG_E_VERIFY);
            pk[40] ^= 4;
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes), DSIG_OK);
        }
        /* deterministic signing is deterministic; hedged signing differs */
        uint8_t *sig2 = malloc(p->sig_bytes);
        memset(rnd, 0, sizeof rnd);
        assert_int_equal(dsig_mldsa_sign_mu(p, sig, sk, mu, rnd), DSIG_OK);
        assert_int_equal(dsig_mldsa_sign_mu(p, sig2, sk, mu, rnd), DSIG_OK);
        assert_memory_equal(sig, sig2, p->sig_bytes);
        rnd[0] = 1;
        assert_int_equal(dsig_mldsa_sign_mu(p, sig2, sk, mu, rnd), DSIG_OK);
        assert_memory_not_equal(sig, sig2, p->sig_bytes);
        free(sig2);
        free(pk);
        free(sk);
        free(sig);
        free(pk2);
        free(sk2);
    }
}

/* @spec FIPS 204 Algorithm 21 HintBitUnpack: each malformed hint encoding is rejected. */
static void test_malformed_hints(void **state)
{
    (void)state;
    const dsig_mldsa_params *all[] = {&dsig_mldsa44, &dsig_mldsa65, &dsig_mldsa87};
    for (int s = 0; s < 3; s++) {
        const dsig_mldsa_params *p = all[s];
        uint8_t *pk = malloc(p->pk_bytes), *sk = malloc(p->sk_bytes), *sig = malloc(p->sig_bytes);
        uint8_t *bad = malloc(p->sig_bytes);
        uint8_t xi[32], mu[64], rnd[32] = {0};
        tu_fill(xi, sizeof xi, 55 + (uint64_t)s);
        tu_fill(mu, sizeof mu, 56);
        assert_int_equal(dsig_mldsa_keygen_internal(p, pk, sk, xi), DSIG_OK);
        /* find a signature with at least two hints in one polynomial (most have) */
        uint8_t *y = sig + p->sig_bytes - p->omega - p->k;
        unsigned poly = p->k;
        for (int tries = 0; tries < 50 && poly == p->k; tries++) {
            mu[0] = (uint8_t)tries;
            assert_int_equal(dsig_mldsa_sign_mu(p, sig, sk, mu, rnd), DSIG_OK);
            unsigned prev = 0;
            for (unsigned i = 0; i < p->k && poly == p->k; i++) {
                if (y[p->omega + i] >= prev + 2)
                    poly = i;
                prev = y[p->omega + i];
            }
        }
        assert_true(poly < p->k);
        assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes), DSIG_OK);
        unsigned start = poly ? y[p->omega + poly - 1] : 0, total = y[p->omega + p->k - 1];
        uint8_t *yb = bad + p->sig_bytes - p->omega - p->k;

        /* indices not strictly increasing: swap two, then duplicate one */
        memcpy(bad, sig, p->sig_bytes);
        uint8_t tmp = yb[start];
        yb[start] = yb[start + 1];
        yb[start + 1] = tmp;
        assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, bad, p->sig_bytes), DSIG_E_VERIFY);
        assert_non_null(strstr(dsig_last_error_detail(), "strictly increasing"));
        memcpy(bad, sig, p->sig_bytes);
        yb[start + 1] = yb[start];
        assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, bad, p->sig_bytes), DSIG_E_VERIFY);
        /* count above ω */
        memcpy(bad, sig, p->sig_bytes);
        yb[p->omega + p->k - 1] = (uint8_t)(p->omega + 1);
        assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, bad, p->sig_bytes), DSIG_E_VERIFY);
        assert_non_null(strstr(dsig_last_error_detail(), "omega"));
        /* counts decreasing */
        memcpy(bad, sig, p->sig_bytes);
        if (poly + 1 < p->k) {
            yb[p->omega + poly + 1] = (uint8_t)start;
            if (y[p->omega + poly] > start) {
                assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, bad, p->sig_bytes), DSIG_E_VERIFY);
            }
        }
        memcpy(bad, sig, p->sig_bytes);
        yb[p->omega] = (uint8_t)(y[p->omega + 1] + 1);
        if (yb[p->omega] <= p->omega) {
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, bad, p->sig_bytes), DSIG_E_VERIFY);
        }
        /* non-zero padding after the last index */
        if (total < p->omega) {
            memcpy(bad, sig, p->sig_bytes);
            yb[p->omega - 1] = 1;
            assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, bad, p->sig_bytes), DSIG_E_VERIFY);
            assert_non_null(strstr(dsig_last_error_detail(), "padding"));
        }
        /* ‖z‖∞ ≥ γ1 - β: z coefficient 0 set to γ1 (encoded as 0) */
        memcpy(bad, sig, p->sig_bytes);
        bad[p->lambda / 4] = 0;
        bad[p->lambda / 4 + 1] = 0;
        bad[p->lambda / 4 + 2] &= (uint8_t)(mldsa_z_bits(p) == 18 ? 0xFC : 0xF0);
        assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, bad, p->sig_bytes), DSIG_E_VERIFY);
        free(pk);
        free(sk);
        free(sig);
        free(bad);
    }
}

/* Secret keys with an s1 or s2 coefficient outside [-η, η] are rejected with DSIG_E_KEY. */
static void test_malformed_sk(void **state)
{
    (void)state;
    const dsig_mldsa_params *all[] = {&dsig_mldsa44, &dsig_mldsa65, &dsig_mldsa87};
    for (int s = 0; s < 3; s++) {
        const dsig_mldsa_params *p = all[s];
        uint8_t *pk = malloc(p->pk_bytes), *sk = malloc(p->sk_bytes), *sig = malloc(p->sig_bytes);
        uint8_t xi[32] = {1, 2, 3}, mu[64] = {0}, rnd[32] = {0};
        assert_int_equal(dsig_mldsa_keygen_internal(p, pk, sk, xi), DSIG_OK);
        const unsigned eb = mldsa_eta_bits(p);
        const size_t s1off = 128, s2off = 128 + 32 * eb * p->l;
        const size_t offs[] = {s1off, s1off + 32 * eb * p->l - 1, s2off, s2off + 32 * eb * p->k - 1};
        for (size_t k = 0; k < 4; k++) {
            uint8_t save = sk[offs[k]];
            /* all-ones bits encode η - (2^bits - 1) < -η */
            sk[offs[k]] = 0xFF;
            int rc = dsig_mldsa_sign_mu(p, sig, sk, mu, rnd);
            assert_int_equal(rc, DSIG_E_KEY);
            sk[offs[k]] = save;
        }
        assert_int_equal(dsig_mldsa_sign_mu(p, sig, sk, mu, rnd), DSIG_OK);
        assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes), DSIG_OK);
        free(pk);
        free(sk);
        free(sig);
    }
}

/* μ of the external interface, ML-DSA.Sign/Verify (FIPS 204 Algorithms 2/3): H(tr ‖ 0 ‖ |ctx| ‖ ctx ‖ M). */
static void external_mu(const uint8_t tr[64], const uint8_t *ctx, size_t ctxlen, const uint8_t *msg,
                        size_t mlen, uint8_t mu[64])
{
    uint8_t pre[2] = {0, (uint8_t)ctxlen};
    dsig_keccak k;
    dsig_shake256_init(&k);
    dsig_keccak_absorb(&k, tr, 64);
    dsig_keccak_absorb(&k, pre, 2);
    dsig_keccak_absorb(&k, ctx, ctxlen);
    dsig_keccak_absorb(&k, msg, mlen);
    dsig_shake_finalize(&k);
    dsig_keccak_squeeze(&k, mu, 64);
}

/* Optional hex member (NULL/0 when absent). */
static uint8_t *opt_hex(const json_t *t, const char *key, size_t *len)
{
    const json_t *v = json_object_get(t, key);
    *len = 0;
    if (!json_is_string(v))
        return NULL;
    return tu_hex(json_string_value(v), len);
}

/* Wycheproof ML-DSA signing files at the μ level: seed groups give ξ (KeyGen_internal must give the
 * group's publicKey), noseed groups the expanded sk; tests with `mu` must sign byte-exactly
 * (rnd given or 0^32) and verify, and invalid private keys must be refused with DSIG_E_KEY. Tests
 * without `mu` are context / key-length cases of the external API: checked to be ones we refuse. */
static void wycheproof_sign(const char *file, const dsig_mldsa_params *p, int seeded, size_t *count)
{
    json_t *root = tu_load_json(file);
    size_t i, j;
    json_t *g, *t;
    uint8_t *pk = malloc(p->pk_bytes), *sk = malloc(p->sk_bytes), *sig = malloc(p->sig_bytes);
    json_array_foreach(json_object_get(root, "testGroups"), i, g)
    {
        size_t kl, pkl;
        uint8_t *k = opt_hex(g, seeded ? "privateSeed" : "privateKey", &kl);
        uint8_t *gpk = opt_hex(g, "publicKey", &pkl);
        int key_ok = kl == (seeded ? 32 : p->sk_bytes);
        if (key_ok && seeded) {
            assert_int_equal(dsig_mldsa_keygen_internal(p, pk, sk, k), DSIG_OK);
            assert_int_equal(pkl, p->pk_bytes);
            assert_memory_equal(pk, gpk, p->pk_bytes);
        } else if (key_ok) {
            memcpy(sk, k, p->sk_bytes);
            if (pkl == p->pk_bytes)
                memcpy(pk, gpk, p->pk_bytes);
        }
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_int_t tc = json_integer_value(json_object_get(t, "tcId"));
            int valid = strcmp(tu_str(t, "result"), "valid") == 0;
            size_t mul, rl, ctxl, sl;
            uint8_t *mu = opt_hex(t, "mu", &mul);
            uint8_t *r = opt_hex(t, "rnd", &rl);
            uint8_t *ctx = opt_hex(t, "ctx", &ctxl);
            uint8_t *want = opt_hex(t, "sig", &sl);
            uint8_t rnd[32] = {0};
            if (r) {
                assert_int_equal(rl, 32);
                memcpy(rnd, r, 32);
            }
            if (!mu) {
                /* only invalid external-API cases come without μ */
                if (valid || (key_ok && ctxl <= 255))
                    fail_msg("%s tcId %lld: unexpected test without mu", file, (long long)tc);
            } else if (!key_ok) {
                fail_msg("%s tcId %lld: mu given with a bad key length", file, (long long)tc);
            } else {
                assert_int_equal(mul, 64);
                int rc = dsig_mldsa_sign_mu(p, sig, sk, mu, rnd);
                if (valid) {
                    if (rc != DSIG_OK)
                        fail_msg("%s tcId %lld: sign failed: %s", file, (long long)tc, dsig_last_error_detail());
                    assert_int_equal(sl, p->sig_bytes);
                    if (memcmp(sig, want, sl) != 0)
                        fail_msg("%s tcId %lld: signature differs", file, (long long)tc);
                    if (pkl == p->pk_bytes)
                        assert_int_equal(dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes), DSIG_OK);
                } else if (rc != DSIG_E_KEY) {
                    fail_msg("%s tcId %lld: invalid private key accepted (rc %d)", file, (long long)tc, rc);
                }
            }
            free(mu);
            free(r);
            free(ctx);
            free(want);
            (*count)++;
        }
        free(k);
        free(gpk);
    }
    free(pk);
    free(sk);
    free(sig);
    json_decref(root);
}

/* Wycheproof ML-DSA verification files: μ computed from tr, ctx and msg (external interface), then
 * Verify_internal; public keys of the wrong length and contexts over 255 bytes count as rejected. */
static void wycheproof_verify(const char *file, const dsig_mldsa_params *p, size_t *count)
{
    json_t *root = tu_load_json(file);
    size_t i, j;
    json_t *g, *t;
    json_array_foreach(json_object_get(root, "testGroups"), i, g)
    {
        size_t pkl;
        uint8_t *pk = opt_hex(g, "publicKey", &pkl);
        uint8_t tr[64];
        if (pkl == p->pk_bytes)
            dsig_mldsa_tr(p, pk, tr);
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_int_t tc = json_integer_value(json_object_get(t, "tcId"));
            int valid = strcmp(tu_str(t, "result"), "valid") == 0;
            size_t ml, ctxl, sl;
            uint8_t *msg = opt_hex(t, "msg", &ml);
            uint8_t *ctx = opt_hex(t, "ctx", &ctxl);
            uint8_t *sig = opt_hex(t, "sig", &sl);
            int ok = 0;
            if (pkl == p->pk_bytes && ctxl <= 255) {
                uint8_t mu[64];
                external_mu(tr, ctx, ctxl, msg, ml, mu);
                int rc = dsig_mldsa_verify_mu(p, pk, mu, sig, sl);
                if (rc != DSIG_OK && rc != DSIG_E_VERIFY)
                    fail_msg("%s tcId %lld: verify returned %d", file, (long long)tc, rc);
                ok = rc == DSIG_OK;
            }
            if (ok != valid)
                fail_msg("%s tcId %lld: got %s, expected %s (%s)", file, (long long)tc, ok ? "valid" : "invalid",
                         valid ? "valid" : "invalid", tu_str(t, "comment"));
            free(msg);
            free(ctx);
            free(sig);
            (*count)++;
        }
        free(pk);
    }
    json_decref(root);
}

/* Wycheproof ML-DSA-44/65/87: sign (seed and expanded key) and verify files. */
static void test_wycheproof(void **state)
{
    (void)state;
    static const struct {
        const char *tag;
        const dsig_mldsa_params *p;
    } sets[] = {{"44", &dsig_mldsa44}, {"65", &dsig_mldsa65}, {"87", &dsig_mldsa87}};
    size_t n = 0;
    char path[128];
    for (int s = 0; s < 3; s++) {
        snprintf(path, sizeof path, "mldsa/wycheproof/mldsa_%s_sign_seed_test.json", sets[s].tag);
        wycheproof_sign(path, sets[s].p, 1, &n);
        snprintf(path, sizeof path, "mldsa/wycheproof/mldsa_%s_sign_noseed_test.json", sets[s].tag);
        wycheproof_sign(path, sets[s].p, 0, &n);
        snprintf(path, sizeof path, "mldsa/wycheproof/mldsa_%s_verify_test.json", sets[s].tag);
        wycheproof_verify(path, sets[s].p, &n);
    }
    print_message("Wycheproof: %zu tests passed\n", n);
    assert_int_equal(n, 79 + 68 + 171 + 97 + 73 + 202 + 88 + 64 + 233);
}

int main(void)
{
    print_message("ML-DSA: keccak back-end %s, cpu features: %s\n", dsig_keccak_backend(),
                  dsig_cpu_describe());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_ntt),
        cmocka_unit_test(test_rounding_exhaustive),
        cmocka_unit_test(test_make_hint),
        cmocka_unit_test(test_acvp_keygen),
        cmocka_unit_test(test_acvp_siggen_internal),
        cmocka_unit_test(test_acvp_sigver_internal),
        cmocka_unit_test(test_roundtrip_and_corruption),
        cmocka_unit_test(test_malformed_hints),
        cmocka_unit_test(test_malformed_sk),
        cmocka_unit_test(test_wycheproof),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
