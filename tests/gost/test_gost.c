/*
 * GOST3410-2012-256, HMAC-STREEBOG-256/512: RFC 6986 / Botan Streebog vectors through the providers'
 * streaming hash; RFC 7836 Appendix B HMAC examples; GOST R 34.10-2012 Appendix A.1 (= RFC 7091 §7.1)
 * on its test curve with the given nonce (exact s ‖ r) and Botan's records of it (digest bytes read
 * little-endian); round trips, every-bit tampering, bad keys, JWK on each of the four TC26 256-bit
 * parameter sets (crv GOST-256-A..D, keygen param), the paramSetA subgroup check (cofactor 4);
 * interoperation with the OpenSSL GOST engine (`openssl ... -engine gost`) on every 256-bit paramset it
 * offers (A/B/C = CryptoPro = TC26 B/C/D, TCA..TCD, XA/XB) in both directions when the engine is
 * installed (Debian: libengine-gost-openssl), skipped otherwise. No known-answer vectors exist for
 * the production curves (vectors/gost/README.md): the engine interop, with its keys imported under
 * our d·G = Q check, is the independent proof of the curve constants.
 */
#include <unistd.h>

#include "mac/mac.h"
#include "regional_testlib.h"

static const dsig_alg *gostalg(void)
{
    const dsig_alg *a = dsig_alg_by_name("GOST3410-2012-256");
    assert_non_null(a);
    return a;
}

/* ---- Streebog (RFC 6986 + Botan extras) ------------------------------------------------------- */

static int sb_count;

static void sb_rec(const struct rt_rec *r, void *arg)
{
    (void)arg;
    int which = strcmp(r->section, "Streebog-256") == 0   ? DSIG_REC_STREEBOG256
                : strcmp(r->section, "Streebog-512") == 0 ? DSIG_REC_STREEBOG512
                                                          : -1;
    assert_true(which >= 0);
    const char *in = rt_get(r, "In");
    size_t n = 0, on = 0;
    uint8_t *msg = in && *in ? tu_hex(in, &n) : calloc(1, 1);
    uint8_t *want = tu_hex(rt_get(r, "Out"), &on), got[64];
    static const size_t chunks[] = {0, 1, 63, 64};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(dsig_rec_hash(which, msg, n, chunks[i], got), DSIG_OK);
        assert_memory_equal(got, want, on);
    }
    free(msg);
    free(want);
    sb_count++;
}

static void test_streebog_vectors(void **st)
{
    (void)st;
    size_t len;
    char *text = tu_read_vector_file("mac/botan-hash/streebog.vec", &len);
    sb_count = 0;
    rt_vec_each(text, "Out", sb_rec, NULL);
    assert_true(sb_count >= 200);
    free(text);
}

/* ---- RFC 7836 HMAC ----------------------------------------------------------------------------- */

static void test_hmac_rfc7836(void **st)
{
    (void)st;
    json_t *j = tu_load_json("mac/rfc7836/hmac_streebog_rfc7836.json");
    size_t i;
    json_t *t;
    int n = 0;
    json_array_foreach(json_object_get(j, "tests"), i, t) {
        const char *a = tu_str(t, "algorithm");
        const char *name = strstr(a, "_256") ? "HMAC-STREEBOG-256" : "HMAC-STREEBOG-512";
        size_t kl, ml, tl;
        uint8_t *key = tu_hex(tu_str(t, "key"), &kl), *msg = tu_hex(tu_str(t, "msg"), &ml);
        uint8_t *mac = tu_hex(tu_str(t, "mac"), &tl), out[64];
        assert_int_equal(dsig_mac_compute(name, key, kl, msg, ml, NULL, 0, tl, 0, out), DSIG_OK);
        assert_memory_equal(out, mac, tl);
        /* the registered streaming path, in several chunkings (the 32-byte key is below
         * HMAC-STREEBOG-512's 512-bit policy minimum, so only the 256-bit one) */
        const dsig_alg *alg = dsig_alg_by_name(name);
        assert_non_null(alg);
        char *bk = dsig_b64url_encode_alloc(key, kl), json[256];
        snprintf(json, sizeof json, "{\"kty\":\"oct\",\"k\":\"%s\"}", bk);
        dsig_xfree(bk, 0);
        dsig_key *k = NULL;
        assert_int_equal(dsig_jwk_import(&k, json, strlen(json)), DSIG_OK);
        if (tl == 32) {
            uint8_t sig[64];
            size_t sl;
            for (size_t c = 0; c < 4; c++) {
                assert_int_equal(tu_sign_chunked(alg, k, msg, ml, c, sig, sizeof sig, &sl), DSIG_OK);
                assert_memory_equal(sig, mac, 32);
                assert_int_equal(tu_verify_chunked(alg, k, msg, ml, c + 1, mac, tl), DSIG_OK);
            }
            mac[31] ^= 0x80;
            assert_int_equal(dsig_verify(alg, k, msg, ml, mac, tl), DSIG_E_VERIFY);
            assert_int_equal(dsig_verify(alg, k, msg, ml, mac, tl - 1), DSIG_E_VERIFY);
        } else {
            uint8_t sig[64];
            size_t sl;
            assert_int_equal(dsig_sign(alg, k, msg, ml, sig, sizeof sig, &sl), DSIG_E_KEY_WEAK);
        }
        dsig_key_free(k);
        free(key);
        free(msg);
        free(mac);
        n++;
    }
    assert_int_equal(n, 2);
    json_decref(j);
    /* HMAC-STREEBOG-512 streaming with a policy-sized key against the test hook */
    const dsig_alg *alg = dsig_alg_by_name("HMAC-STREEBOG-512");
    uint8_t kb[64], msg[1000], sig[64], ref[64];
    size_t sl;
    tu_fill(kb, sizeof kb, 8);
    tu_fill(msg, sizeof msg, 9);
    char *bk = dsig_b64url_encode_alloc(kb, sizeof kb), json[256];
    snprintf(json, sizeof json, "{\"kty\":\"oct\",\"k\":\"%s\"}", bk);
    dsig_xfree(bk, 0);
    dsig_key *k = NULL;
    assert_int_equal(dsig_jwk_import(&k, json, strlen(json)), DSIG_OK);
    assert_int_equal(tu_sign_chunked(alg, k, msg, sizeof msg, 33, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_mac_compute("HMAC-STREEBOG-512", kb, 64, msg, sizeof msg, NULL, 0, 64, 0, ref),
                     DSIG_OK);
    assert_memory_equal(sig, ref, 64);
    assert_int_equal(tu_verify_chunked(alg, k, msg, sizeof msg, 100, ref, 64), DSIG_OK);
    dsig_key_free(k);
}

/* ---- GOST R 34.10-2012 Appendix A.1 / RFC 7091 §7.1 -------------------------------------------- */

static void test_appendix_a1(void **st)
{
    (void)st;
    json_t *j = tu_load_json("gost/gost-r-34.10-2012/gost3410_2012_appendixA.json");
    json_t *ex = json_array_get(json_object_get(j, "examples"), 0);
    assert_int_equal(json_integer_value(json_object_get(ex, "bits")), 256);
    uint8_t p[32], a[32], b[32], gx[32], gy[32], q[32], d[32], x[32], y[32], e[32], k[32], r[32], s[32];
    rt_hexw(tu_str(ex, "p"), p, 32);
    rt_hexw(tu_str(ex, "a"), a, 32);
    rt_hexw(tu_str(ex, "b"), b, 32);
    rt_hexw(tu_str(ex, "xP"), gx, 32);
    rt_hexw(tu_str(ex, "yP"), gy, 32);
    rt_hexw(tu_str(ex, "q"), q, 32);
    assert_string_equal(tu_str(ex, "m"), tu_str(ex, "q")); /* cofactor 1 */
    rt_hexw(tu_str(ex, "d"), d, 32);
    rt_hexw(tu_str(ex, "xQ"), x, 32);
    rt_hexw(tu_str(ex, "yQ"), y, 32);
    rt_hexw(tu_str(ex, "e"), e, 32);
    rt_hexw(tu_str(ex, "k"), k, 32);
    rt_hexw(tu_str(ex, "r"), r, 32);
    rt_hexw(tu_str(ex, "s"), s, 32);
    struct rec_explicit ep = {p, a, b, gx, gy, q};
    uint8_t qx[32], qy[32], h[32], sig[64];
    assert_int_equal(dsig_rec_test_pub(&ep, 1, d, qx, qy), DSIG_OK);
    assert_memory_equal(qx, x, 32);
    assert_memory_equal(qy, y, 32);
    /* The example gives e < q; the hash bytes whose little-endian value is e are e reversed. */
    for (size_t i = 0; i < 32; i++)
        h[i] = e[31 - i];
    assert_int_equal(dsig_gost_test_sign(&ep, d, h, k, sig), DSIG_OK);
    assert_memory_equal(sig, s, 32); /* s first */
    assert_memory_equal(sig + 32, r, 32);
    assert_int_equal(dsig_gost_test_verify(&ep, x, y, h, sig), DSIG_OK);
    for (size_t bit = 0; bit < 512; bit += 5) {
        uint8_t t[64];
        memcpy(t, sig, 64);
        t[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dsig_gost_test_verify(&ep, x, y, h, t), DSIG_E_VERIFY);
    }
    /* r ‖ s (the other order) does not verify */
    uint8_t swapped[64];
    memcpy(swapped, r, 32);
    memcpy(swapped + 32, s, 32);
    assert_int_equal(dsig_gost_test_verify(&ep, x, y, h, swapped), DSIG_E_VERIFY);
    h[0] ^= 1;
    assert_int_equal(dsig_gost_test_verify(&ep, x, y, h, sig), DSIG_E_VERIFY);
    h[0] ^= 1;
    assert_int_equal(dsig_gost_test_sign(&ep, d, h, NULL, sig), DSIG_OK);
    assert_int_equal(dsig_gost_test_verify(&ep, x, y, h, sig), DSIG_OK);
    /* A.2 is the 512-bit example: GOST3410-2012-512 is not implemented (256-bit keys only). */
    json_decref(j);
}

/* Botan's records of the same example: Msg is the digest byte string (α read little-endian). */
static int bot_count;

static void bot_rec(const struct rt_rec *r, void *arg)
{
    (void)arg;
    uint8_t p[32], a[32], b[32], gx[32], gy[32], q[32], h[32], want[64], x[32], y[32], sig[64];
    rt_hexw(rt_get(r, "P"), p, 32);
    rt_hexw(rt_get(r, "A"), a, 32);
    rt_hexw(rt_get(r, "B"), b, 32);
    rt_hexw(rt_get(r, "Gx"), gx, 32);
    rt_hexw(rt_get(r, "Gy"), gy, 32);
    rt_hexw(rt_get(r, "Order"), q, 32);
    rt_hexw(rt_get(r, "Msg"), h, 32);
    rt_hexw(rt_get(r, "Signature"), want, 64);
    struct rec_explicit ep = {p, a, b, gx, gy, q};
    const char *X = rt_get(r, "X");
    if (X && rt_get(r, "Nonce")) {
        uint8_t d[32], k[32];
        rt_hexw(X, d, 32);
        rt_hexw(rt_get(r, "Nonce"), k, 32);
        assert_int_equal(dsig_gost_test_sign(&ep, d, h, k, sig), DSIG_OK);
        assert_memory_equal(sig, want, 64);
        assert_int_equal(dsig_rec_test_pub(&ep, 1, d, x, y), DSIG_OK);
    } else {
        rt_hexw(rt_get(r, "Px"), x, 32);
        rt_hexw(rt_get(r, "Py"), y, 32);
    }
    assert_int_equal(dsig_gost_test_verify(&ep, x, y, h, want), DSIG_OK);
    bot_count++;
}

static void test_botan_vectors(void **st)
{
    (void)st;
    size_t len;
    bot_count = 0;
    char *t1 = tu_read_vector_file("gost/botan/gost_3410_sign.vec", &len);
    rt_vec_each(t1, "Signature", bot_rec, NULL);
    char *t2 = tu_read_vector_file("gost/botan/gost_3410_verify.vec", &len);
    rt_vec_each(t2, "Signature", bot_rec, NULL);
    assert_int_equal(bot_count, 2);
    free(t1);
    free(t2);
}

/* ---- round trips, tampering, bad keys, JWK ---------------------------------------------------- */

static void test_roundtrip(void **st)
{
    (void)st;
    const dsig_alg *alg = gostalg();
    dsig_key *priv, *pub;
    static const uint8_t seed[32] = {9, 8, 7};
    rt_seeded_pair(alg, "GOST-256-B", seed, &priv, &pub);
    uint8_t msg[100], sig[64];
    size_t sl = 0;
    rt_sign_tamper(alg, priv, pub, msg, sig, &sl);
    /* GOST takes no signing options */
    dsig_sign_opts o = {.context = (const uint8_t *)"x", .context_len = 1};
    assert_int_equal(dsig_sign_ex(alg, priv, msg, 1, sig, sizeof sig, &sl, &o), DSIG_E_UNSUPPORTED);
    rt_jwk_roundtrip(priv);
    rt_bad_keys("GOST-256-B", priv);
    /* an SM2 key is not a GOST key (same kty, other crv) */
    dsig_key *sm2 = NULL;
    assert_int_equal(dsig_key_generate(&sm2, dsig_alg_by_name("SM2-SM3"), NULL), DSIG_OK);
    assert_int_not_equal(dsig_sign(alg, sm2, msg, 1, sig, sizeof sig, &sl), DSIG_OK);
    const struct rec_key *sk = sm2->impl;
    dsig_key *cross = NULL;
    assert_int_not_equal(rt_jwk_key("GOST-256-B", sk->x, sk->y, NULL, 32, &cross), DSIG_OK);
    dsig_key_free(sm2);
    /* no PEM for GOST keys (OpenSSL's default provider has none) */
    char *pem = NULL;
    size_t pl;
    assert_int_not_equal(dsig_key_export_pem(priv, 0, &pem, &pl), DSIG_OK);
    dsig_key_free(priv);
    dsig_key_free(pub);
}

/* ---- the four TC26 256-bit parameter sets ------------------------------------------------------ */

static const char *const crvs[] = {"GOST-256-A", "GOST-256-B", "GOST-256-C", "GOST-256-D"};

/* Keygen on each set (by crv, TC26 name and OID), round trips, every-bit tampering, JWK, bad keys;
 * keys of one set never verify or import as another. */
static void test_paramsets(void **st)
{
    (void)st;
    const dsig_alg *alg = gostalg();
    static const char *const tc26[] = {"id-tc26-gost-3410-2012-256-paramSetA",
                                       "id-tc26-gost-3410-2012-256-paramSetB",
                                       "id-tc26-gost-3410-2012-256-paramSetC",
                                       "id-tc26-gost-3410-2012-256-paramSetD"};
    static const char *const oids[] = {"1.2.643.7.1.2.1.1.1", "1.2.643.7.1.2.1.1.2",
                                       "1.2.643.7.1.2.1.1.3", "1.2.643.7.1.2.1.1.4"};
    static const uint8_t seed[32] = {4, 3, 2, 1};
    dsig_key *privs[4], *pubs[4];
    uint8_t msg[300], sigs[4][64];
    size_t sl = 0;
    tu_fill(msg, sizeof msg, 44);
    for (int i = 0; i < 4; i++) {
        dsig_keygen_params kp = {.param = crvs[i]};
        assert_int_equal(dsig_key_generate(&privs[i], alg, &kp), DSIG_OK);
        assert_string_equal(dsig_key_kty(privs[i]), "EC");
        assert_string_equal(dsig_key_curve(privs[i]), crvs[i]);
        assert_int_equal(dsig_key_bits(privs[i]), 256);
        assert_ptr_equal(dsig_key_alg(privs[i]), alg);
        assert_int_equal(dsig_key_public(&pubs[i], privs[i]), DSIG_OK);
        assert_string_equal(dsig_key_curve(pubs[i]), crvs[i]);
        rt_roundtrip(alg, privs[i], pubs[i]);
        assert_int_equal(dsig_sign(alg, privs[i], msg, sizeof msg, sigs[i], 64, &sl), DSIG_OK);
        assert_int_equal(sl, 64);
        rt_tamper_all(alg, pubs[i], msg, sizeof msg, sigs[i], sl, NULL);
        rt_jwk_roundtrip(privs[i]);
        rt_bad_keys(crvs[i], privs[i]);
        /* the JWK names the set */
        char *json = NULL;
        size_t jl = 0;
        assert_int_equal(dsig_jwk_export(pubs[i], 0, &json, &jl), DSIG_OK);
        char want[64];
        snprintf(want, sizeof want, "\"crv\":\"%s\"", crvs[i]);
        assert_non_null(strstr(json, want));
        dsig_free(json);
        /* the other spellings of the set; the TC26 name in any case; seeded keys are reproducible */
        const char *names[] = {tc26[i], oids[i], crvs[i]};
        dsig_key *k1 = NULL, *k2 = NULL;
        for (int n = 0; n < 3; n++) {
            kp = (dsig_keygen_params){.param = names[n], .seed = seed, .seed_len = sizeof seed};
            assert_int_equal(dsig_key_generate(&k1, alg, &kp), DSIG_OK);
            assert_string_equal(dsig_key_curve(k1), crvs[i]);
            dsig_key_free(k1);
        }
        char lower[64];
        snprintf(lower, sizeof lower, "%s", crvs[i]);
        for (char *c = lower; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
        kp = (dsig_keygen_params){.param = lower, .seed = seed, .seed_len = sizeof seed};
        assert_int_equal(dsig_key_generate(&k1, alg, &kp), DSIG_OK);
        kp.param = crvs[i];
        assert_int_equal(dsig_key_generate(&k2, alg, &kp), DSIG_OK);
        assert_string_equal(dsig_key_curve(k1), crvs[i]);
        const struct rec_key *r1 = k1->impl, *r2 = k2->impl;
        /* the label holds the param as given: same spelling, same key */
        assert_memory_not_equal(r1->d, r2->d, 32);
        dsig_key_free(k1);
        assert_int_equal(dsig_key_generate(&k1, alg, &kp), DSIG_OK);
        r1 = k1->impl;
        assert_memory_equal(r1->d, r2->d, 32);
        assert_memory_equal(r1->x, r2->x, 32);
        dsig_key_free(k1);
        dsig_key_free(k2);
    }
    /* default (no param) is paramSetB, with the same seeded key as before parameter sets existed */
    dsig_key *def = NULL;
    assert_int_equal(dsig_key_generate(&def, alg, NULL), DSIG_OK);
    assert_string_equal(dsig_key_curve(def), "GOST-256-B");
    dsig_key_free(def);
    /* keys, points and signatures do not cross sets */
    for (int i = 0; i < 4; i++) {
        const struct rec_key *ki = privs[i]->impl;
        for (int j = 0; j < 4; j++) {
            if (i == j)
                continue;
            assert_int_equal(dsig_verify(alg, pubs[j], msg, sizeof msg, sigs[i], 64), DSIG_E_VERIFY);
            dsig_key *cross = NULL;
            /* B's points may lie on C's curve by chance only with negligible probability */
            assert_int_equal(rt_jwk_key(crvs[j], ki->x, ki->y, NULL, 32, &cross), DSIG_E_POINT);
            assert_null(cross);
        }
    }
    /* unknown parameter sets; bare letters are ambiguous (the engine's "A" is TC26's B) */
    static const char *const bad[] = {"A", "B", "TCA", "GOST-256-E", "GOST-512-A", "", "1.2.643.7.1.2.1.1.5",
                                      "id-tc26-gost-3410-2012-512-paramSetA", "GOST-256-B "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dsig_keygen_params kp = {.param = bad[i]};
        dsig_key *k = NULL;
        assert_int_equal(dsig_key_generate(&k, alg, &kp), DSIG_E_ARG);
        assert_null(k);
    }
    assert_non_null(strstr(dsig_last_error_detail(), "GOST-256-A"));
    /* another algorithm refuses the GOST keys, with a message naming all four sets */
    uint8_t sig[64];
    assert_int_equal(dsig_sign(dsig_alg_by_name("SM2-SM3"), privs[0], msg, 1, sig, 64, &sl),
                     DSIG_E_ALG_NOT_ALLOWED); /* generated keys are bound to their algorithm */
    const struct rec_key *ka = privs[0]->impl;
    dsig_key *unbound = NULL;
    assert_int_equal(rt_jwk_key("GOST-256-A", ka->x, ka->y, ka->d, 32, &unbound), DSIG_OK);
    assert_int_equal(dsig_sign(dsig_alg_by_name("SM2-SM3"), unbound, msg, 1, sig, 64, &sl),
                     DSIG_E_KEY_MISMATCH);
    assert_int_equal(dsig_sign(alg, unbound, msg, 1, sig, 64, &sl), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pubs[0], msg, 1, sig, sl), DSIG_OK);
    dsig_key_free(unbound);
    dsig_key *sm2 = NULL, *sm2u = NULL;
    assert_int_equal(dsig_key_generate(&sm2, dsig_alg_by_name("SM2-SM3"), NULL), DSIG_OK);
    const struct rec_key *ks = sm2->impl;
    assert_int_equal(rt_jwk_key("SM2", ks->x, ks->y, ks->d, 32, &sm2u), DSIG_OK);
    assert_int_equal(dsig_sign(alg, sm2u, msg, 1, sig, 64, &sl), DSIG_E_KEY_MISMATCH);
    assert_non_null(strstr(dsig_last_error_detail(), "GOST-256-D"));
    dsig_key_free(sm2u);
    dsig_keygen_params kp = {.param = "GOST-256-A"};
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("SM2-SM3"), &kp), DSIG_E_UNSUPPORTED);
    dsig_key_free(sm2);
    for (int i = 0; i < 4; i++) {
        dsig_key_free(privs[i]);
        dsig_key_free(pubs[i]);
    }
}

/* paramSetA has cofactor 4: points on the curve outside the order-q subgroup are refused. The
 * points are built here with libgcrypt: (x, sqrt(x^3 + ax + b)) for small x (p ≡ 3 mod 4), kept
 * when q·P != O; T = q·P then has order 2 or 4. */
static void test_paramset_a_subgroup(void **st)
{
    (void)st;
    struct rec_ctx c;
    assert_int_equal(rec_ctx_open(&c, &dsig_rec_gost256a, NULL), DSIG_OK);
    assert_false(c.cofactor_one);
    assert_int_equal(gcry_mpi_get_nbits(c.n), 255);
    gcry_mpi_t x = gcry_mpi_new(0), y = gcry_mpi_new(0), rhs = gcry_mpi_new(0), t = gcry_mpi_new(0);
    gcry_mpi_t e = gcry_mpi_new(0), three = gcry_mpi_set_ui(NULL, 3), one = gcry_mpi_set_ui(NULL, 1);
    gcry_mpi_add_ui(e, c.p, 1);
    gcry_mpi_rshift(e, e, 2); /* (p + 1) / 4 */
    gcry_mpi_point_t P = gcry_mpi_point_new(0), T = gcry_mpi_point_new(0);
    int found = 0, tested = 0;
    dsig_key *good = NULL;
    dsig_keygen_params kp = {.param = "GOST-256-A"};
    assert_int_equal(dsig_key_generate(&good, gostalg(), &kp), DSIG_OK);
    const struct rec_key *gk = good->impl;
    for (unsigned xi = 1; xi < 200 && found < 3; xi++) {
        gcry_mpi_set_ui(x, xi);
        gcry_mpi_powm(rhs, x, three, c.p);
        gcry_mpi_mulm(t, c.a, x, c.p);
        gcry_mpi_addm(rhs, rhs, t, c.p);
        gcry_mpi_addm(rhs, rhs, c.b, c.p);
        gcry_mpi_powm(y, rhs, e, c.p);
        gcry_mpi_mulm(t, y, y, c.p);
        if (gcry_mpi_cmp(t, rhs) != 0)
            continue; /* not a square: no point with this x */
        gcry_mpi_point_set(P, x, y, one);
        assert_true(gcry_mpi_ec_curve_point(P, c.ctx));
        gcry_mpi_ec_mul(T, c.n, P, c.ctx);
        uint8_t bx[32], by[32];
        assert_int_equal(rec_mpi_out(x, bx, 32), DSIG_OK);
        assert_int_equal(rec_mpi_out(y, by, 32), DSIG_OK);
        dsig_key *k = NULL;
        tested++;
        if (gcry_mpi_ec_get_affine(t, NULL, T, c.ctx) == 0) {
            /* P is outside the subgroup: refused as such, and so is Q + T for a valid Q */
            found++;
            assert_int_equal(rt_jwk_key("GOST-256-A", bx, by, NULL, 32, &k), DSIG_E_POINT);
            assert_null(k);
            gcry_mpi_point_t Q = rec_point(&c, gk->x, gk->y);
            assert_non_null(Q);
            gcry_mpi_ec_add(Q, Q, T, c.ctx);
            gcry_mpi_t qx = gcry_mpi_new(0), qy = gcry_mpi_new(0);
            assert_int_equal(gcry_mpi_ec_get_affine(qx, qy, Q, c.ctx), 0);
            assert_int_equal(rec_mpi_out(qx, bx, 32), DSIG_OK);
            assert_int_equal(rec_mpi_out(qy, by, 32), DSIG_OK);
            assert_true(gcry_mpi_ec_curve_point(Q, c.ctx));
            assert_int_equal(rt_jwk_key("GOST-256-A", bx, by, NULL, 32, &k), DSIG_E_POINT);
            assert_null(k);
            /* ... also with the private key: d·G != Q + T is caught by the point check first */
            assert_int_equal(rt_jwk_key("GOST-256-A", bx, by, gk->d, 32, &k), DSIG_E_POINT);
            gcry_mpi_release(qx);
            gcry_mpi_release(qy);
            gcry_mpi_point_release(Q);
            /* 4·P is in the subgroup: accepted */
            gcry_mpi_t four = gcry_mpi_set_ui(NULL, 4);
            gcry_mpi_ec_mul(T, four, P, c.ctx);
            gcry_mpi_release(four);
            if (gcry_mpi_ec_get_affine(x, y, T, c.ctx) == 0) {
                assert_int_equal(rec_mpi_out(x, bx, 32), DSIG_OK);
                assert_int_equal(rec_mpi_out(y, by, 32), DSIG_OK);
                assert_int_equal(rt_jwk_key("GOST-256-A", bx, by, NULL, 32, &k), DSIG_OK);
                dsig_key_free(k);
            }
        } else {
            assert_int_equal(rt_jwk_key("GOST-256-A", bx, by, NULL, 32, &k), DSIG_OK);
            dsig_key_free(k);
        }
    }
    assert_true(found >= 3);
    assert_true(tested >= found);
    dsig_key_free(good);
    gcry_mpi_release(x);
    gcry_mpi_release(y);
    gcry_mpi_release(rhs);
    gcry_mpi_release(t);
    gcry_mpi_release(e);
    gcry_mpi_release(three);
    gcry_mpi_release(one);
    gcry_mpi_point_release(P);
    gcry_mpi_point_release(T);
    rec_ctx_close(&c);
}

/* ---- interop with the OpenSSL GOST engine ------------------------------------------------------ */

/* Run a shell command; 1 on exit status 0. */
static int sh(const char *cmd)
{
    int rc = system(cmd);
    return rc == 0;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* The engine's gost2012_256 paramsets: its name, what `openssl pkey -text` prints, our crv. */
struct engine_set {
    const char *paramset, *printed, *crv;
    int rounds;
};

static const struct engine_set engine_sets[] = {
    {"A", "CryptoPro-A", "GOST-256-B", 3}, /* = TC26 paramSetB */
    {"B", "CryptoPro-B", "GOST-256-C", 2}, /* = TC26 paramSetC */
    {"C", "CryptoPro-C", "GOST-256-D", 2}, /* = TC26 paramSetD */
    {"TCA", "ParamSet A", "GOST-256-A", 3},
    {"TCB", "ParamSet B", "GOST-256-B", 1},
    {"TCC", "ParamSet C", "GOST-256-C", 1},
    {"TCD", "ParamSet D", "GOST-256-D", 1},
    {"XA", "CryptoPro-XchA", "GOST-256-B", 1}, /* the key-exchange OIDs name the same curves */
    {"XB", "CryptoPro-XchB", "GOST-256-D", 1},
};

/* One interop round in dir on the engine paramset es: an engine key imported as a JWK, a message of
 * round*2000+3 bytes signed by us and verified by the engine, and the other way round. */
static void engine_round(const char *dir, const struct engine_set *es, int round)
{
    const dsig_alg *alg = gostalg();
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd %s && openssl genpkey -engine gost -algorithm gost2012_256 -pkeyopt paramset:%s "
             "-out k.pem 2>/dev/null && openssl pkey -engine gost -in k.pem -pubout -out pub.pem "
             "2>/dev/null && openssl pkey -engine gost -in k.pem -text -noout > k.txt 2>/dev/null",
             dir, es->paramset);
    assert_true(sh(cmd));
    char path[256], line[256], dh[80] = "", xh[80] = "", yh[80] = "";
    snprintf(path, sizeof path, "%s/k.txt", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int named = 0;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "Private key: %70s", dh);
        sscanf(line, " X:%70s", xh);
        sscanf(line, " Y:%70s", yh);
        if (strstr(line, "Parameter set:")) {
            assert_non_null(strstr(line, es->printed));
            named = 1;
        }
    }
    fclose(f);
    assert_true(named);
    uint8_t d[32], x[32], y[32];
    rt_hexw(dh, d, 32);
    rt_hexw(xh, x, 32);
    rt_hexw(yh, y, 32);
    dsig_key *priv = NULL, *pub = NULL;
    /* the import checks d·G = (x, y) (and, on A, q·Q = O): the engine's curve is ours */
    assert_int_equal(rt_jwk_key(es->crv, x, y, d, 32, &priv), DSIG_OK);
    assert_int_equal(rt_jwk_key(es->crv, x, y, NULL, 32, &pub), DSIG_OK);
    /* ... and no other set's */
    for (size_t o = 0; o < 4; o++) {
        dsig_key *other = NULL;
        if (strcmp(crvs[o], es->crv) != 0)
            assert_int_equal(rt_jwk_key(crvs[o], x, y, NULL, 32, &other), DSIG_E_POINT);
    }

    uint8_t msg[5000], sig[64];
    size_t len = (size_t)(round * 2000 + 3), sl;
    tu_fill(msg, sizeof msg, (uint64_t)round + 100);
    snprintf(path, sizeof path, "%s/m.bin", dir);
    write_file(path, msg, len);

    /* dsig → engine */
    assert_int_equal(tu_sign_chunked(alg, priv, msg, len, 512, sig, sizeof sig, &sl), DSIG_OK);
    snprintf(path, sizeof path, "%s/ours.sig", dir);
    write_file(path, sig, sl);
    snprintf(cmd, sizeof cmd,
             "cd %s && openssl dgst -engine gost -md_gost12_256 -verify pub.pem -signature ours.sig "
             "m.bin 2>/dev/null | grep -q 'Verified OK'", dir);
    assert_true(sh(cmd));
    sig[40] ^= 1;
    write_file(path, sig, sl);
    assert_false(sh(cmd));

    /* engine → dsig */
    snprintf(cmd, sizeof cmd,
             "cd %s && openssl dgst -engine gost -md_gost12_256 -sign k.pem -out theirs.sig m.bin "
             ">/dev/null 2>&1", dir);
    assert_true(sh(cmd));
    snprintf(path, sizeof path, "%s/theirs.sig", dir);
    size_t tl;
    f = fopen(path, "rb");
    assert_non_null(f);
    tl = fread(sig, 1, sizeof sig, f);
    fclose(f);
    assert_int_equal(tl, 64);
    assert_int_equal(tu_verify_chunked(alg, pub, msg, len, 1000, sig, tl), DSIG_OK);
    msg[len - 1] ^= 1;
    assert_int_equal(dsig_verify(alg, pub, msg, len, sig, tl), DSIG_E_VERIFY);
    dsig_key_free(priv);
    dsig_key_free(pub);
}

static void test_engine_interop(void **st)
{
    (void)st;
    if (!sh("openssl engine gost -t >/dev/null 2>&1")) {
        fprintf(stderr, "test_engine_interop: the OpenSSL GOST engine is not installed "
                        "(libengine-gost-openssl); skipped\n");
        skip();
    }
    char dir[] = "/tmp/dsig-gost-XXXXXX", cmd[1024];
    assert_non_null(mkdtemp(dir));
    /* the engine has no paramset "D" (its letters are CryptoPro's: TC26 D is its "C" or "TCD") */
    snprintf(cmd, sizeof cmd,
             "cd %s && openssl genpkey -engine gost -algorithm gost2012_256 -pkeyopt paramset:D "
             "-out d.pem >/dev/null 2>&1", dir);
    assert_false(sh(cmd));
    for (size_t set = 0; set < sizeof engine_sets / sizeof engine_sets[0]; set++)
        for (int round = 0; round < engine_sets[set].rounds; round++)
            engine_round(dir, &engine_sets[set], round);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streebog_vectors), cmocka_unit_test(test_hmac_rfc7836),
        cmocka_unit_test(test_appendix_a1),      cmocka_unit_test(test_botan_vectors),
        cmocka_unit_test(test_roundtrip),        cmocka_unit_test(test_paramsets),
        cmocka_unit_test(test_paramset_a_subgroup), cmocka_unit_test(test_engine_interop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
