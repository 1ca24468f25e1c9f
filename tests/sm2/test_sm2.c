/*
 * SM2-SM3 and HMAC-SM3: GM/T 0004 / draft-shen SM3 vectors through the providers' streaming hash;
 * the GB/T 32918.2 (GM/T 0003.2) signature example on its test curve with the given nonce k (Z_A, e,
 * r ‖ s exact); Botan's SM2 records (test curve, sm2p256v1, SM2 over P-256) — signing with the given
 * nonce and verifying through the public streaming API with the record's ID; Wycheproof HMAC-SM3;
 * round trips with the default and a custom ID, tampering of every signature bit, bad keys, JWK and
 * PEM round trips; interoperation with OpenSSL 3.0's SM2 (both directions, default and custom ID).
 */
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "mac/mac.h"
#include "regional_testlib.h"

static const dsig_alg *sm2alg(void)
{
    const dsig_alg *a = dsig_alg_by_name("SM2-SM3");
    assert_non_null(a);
    return a;
}

/* ---- SM3 (GM/T 0004) through the streaming hash ---------------------------------------------- */

static void sm3_rec(const struct rt_rec *r, void *arg)
{
    (void)arg;
    const char *in = rt_get(r, "In"), *exp = rt_get(r, "Out");
    size_t n = 0, on = 0;
    uint8_t *msg = in && *in ? tu_hex(in, &n) : calloc(1, 1);
    uint8_t *want = tu_hex(exp, &on), got[32];
    assert_int_equal(on, 32);
    static const size_t chunks[] = {0, 1, 63, 64};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(dsig_rec_hash(DSIG_REC_SM3, msg, n, chunks[i], got), DSIG_OK);
        assert_memory_equal(got, want, 32);
    }
    free(msg);
    free(want);
}

static void test_sm3_vectors(void **st)
{
    (void)st;
    size_t len;
    char *text = tu_read_vector_file("mac/botan-hash/sm3.vec", &len);
    int n = rt_vec_each(text, "Out", sm3_rec, NULL);
    assert_true(n >= 100);
    free(text);
}

/* ---- the GM/T 0003.2 example ------------------------------------------------------------------ */

struct ex_curve {
    uint8_t p[32], a[32], b[32], gx[32], gy[32], n[32];
    struct rec_explicit ep;
};

static void ex_curve_load(struct ex_curve *c, const char *p, const char *a, const char *b, const char *gx,
                          const char *gy, const char *n)
{
    rt_hexw(p, c->p, 32);
    rt_hexw(a, c->a, 32);
    rt_hexw(b, c->b, 32);
    rt_hexw(gx, c->gx, 32);
    rt_hexw(gy, c->gy, 32);
    rt_hexw(n, c->n, 32);
    c->ep = (struct rec_explicit){c->p, c->a, c->b, c->gx, c->gy, c->n};
}

/* e = SM3(Z_A ‖ M) with the streaming hash. */
static void sm2_e(const uint8_t za[32], const uint8_t *m, size_t mlen, uint8_t e[32])
{
    uint8_t *buf = malloc(32 + mlen);
    memcpy(buf, za, 32);
    memcpy(buf + 32, m, mlen);
    assert_int_equal(dsig_rec_hash(DSIG_REC_SM3, buf, 32 + mlen, 7, e), DSIG_OK);
    free(buf);
}

static void test_gmt0003_example(void **st)
{
    (void)st;
    json_t *j = tu_load_json("sm2/gmt0003/sm2_sign_example_fp256.json");
    json_t *ex = json_object_get(j, "example");
    assert_non_null(ex);
    struct ex_curve c;
    ex_curve_load(&c, tu_str(ex, "p"), tu_str(ex, "a"), tu_str(ex, "b"), tu_str(ex, "xG"), tu_str(ex, "yG"),
                  tu_str(ex, "n"));
    uint8_t d[32], k[32], x[32], y[32], za[32], e[32], r[32], s[32], px[32], py[32], got[32], sig[64];
    rt_hexw(tu_str(ex, "dA"), d, 32);
    rt_hexw(tu_str(ex, "k"), k, 32);
    rt_hexw(tu_str(ex, "xA"), x, 32);
    rt_hexw(tu_str(ex, "yA"), y, 32);
    rt_hexw(tu_str(ex, "ZA"), za, 32);
    rt_hexw(tu_str(ex, "e"), e, 32);
    rt_hexw(tu_str(ex, "r"), r, 32);
    rt_hexw(tu_str(ex, "s"), s, 32);
    const char *id = tu_str(ex, "ID_ascii"), *msg = tu_str(ex, "message_ascii");
    /* P_A = d_A·G */
    assert_int_equal(dsig_rec_test_pub(&c.ep, 0, d, px, py), DSIG_OK);
    assert_memory_equal(px, x, 32);
    assert_memory_equal(py, y, 32);
    /* Z_A and e */
    assert_int_equal(dsig_sm2_test_za(&c.ep, (const uint8_t *)id, strlen(id), x, y, got), DSIG_OK);
    assert_memory_equal(got, za, 32);
    sm2_e(got, (const uint8_t *)msg, strlen(msg), got);
    assert_memory_equal(got, e, 32);
    /* the signature with the given k */
    assert_int_equal(dsig_sm2_test_sign(&c.ep, d, e, k, sig), DSIG_OK);
    assert_memory_equal(sig, r, 32);
    assert_memory_equal(sig + 32, s, 32);
    assert_int_equal(dsig_sm2_test_verify(&c.ep, x, y, e, sig), DSIG_OK);
    for (size_t bit = 0; bit < 512; bit += 7) {
        uint8_t t[64];
        memcpy(t, sig, 64);
        t[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dsig_sm2_test_verify(&c.ep, x, y, e, t), DSIG_E_VERIFY);
    }
    e[0] ^= 1;
    assert_int_equal(dsig_sm2_test_verify(&c.ep, x, y, e, sig), DSIG_E_VERIFY);
    /* a random nonce signs too */
    e[0] ^= 1;
    assert_int_equal(dsig_sm2_test_sign(&c.ep, d, e, NULL, sig), DSIG_OK);
    assert_int_equal(dsig_sm2_test_verify(&c.ep, x, y, e, sig), DSIG_OK);
    /* bad nonces are refused */
    assert_int_equal(dsig_sm2_test_sign(&c.ep, d, e, c.n, sig), DSIG_E_ARG);
    json_decref(j);
}

/* ---- Botan sm2_sig.vec --------------------------------------------------------------------- */

static int botan_count;

static void botan_rec(const struct rt_rec *r, void *arg)
{
    (void)arg;
    const char *hash = rt_get(r, "Hash");
    if (strcmp(hash, "SM3") != 0 && strcmp(hash, "Raw") != 0)
        return; /* SHA-256 variants: not SM2-SM3 */
    struct ex_curve c;
    ex_curve_load(&c, rt_get(r, "P"), rt_get(r, "A"), rt_get(r, "B"), rt_get(r, "xG"), rt_get(r, "yG"),
                  rt_get(r, "Order"));
    const char *ident = rt_get(r, "Ident");
    uint8_t d[32], k[32], x[32], y[32], za[32], e[32], sig[64], want[64];
    rt_hexw(rt_get(r, "x"), d, 32);
    rt_hexw(rt_get(r, "Nonce"), k, 32);
    rt_hexw(rt_get(r, "Signature"), want, 64);
    size_t mlen;
    uint8_t *msg = tu_hex(rt_get(r, "Msg"), &mlen);
    assert_int_equal(dsig_rec_test_pub(&c.ep, 0, d, x, y), DSIG_OK);
    if (strcmp(hash, "Raw") == 0) {
        assert_int_equal(mlen, 32);
        memcpy(e, msg, 32);
    } else {
        assert_int_equal(dsig_sm2_test_za(&c.ep, (const uint8_t *)ident, strlen(ident), x, y, za), DSIG_OK);
        sm2_e(za, msg, mlen, e);
    }
    assert_int_equal(dsig_sm2_test_sign(&c.ep, d, e, k, sig), DSIG_OK);
    assert_memory_equal(sig, want, 64);
    assert_int_equal(dsig_sm2_test_verify(&c.ep, x, y, e, want), DSIG_OK);
    /* On the recommended curve: the full public path (JWK, streaming verify with the ID as context). */
    if (strcmp(rt_get(r, "Oid"), "1.2.156.10197.1.301") == 0 && strcmp(hash, "SM3") == 0) {
        dsig_key *pub = NULL;
        assert_int_equal(rt_jwk_key("SM2", x, y, NULL, 32, &pub), DSIG_OK);
        dsig_sign_opts o = {.context = (const uint8_t *)ident, .context_len = strlen(ident)};
        assert_int_equal(dsig_verify_ex(sm2alg(), pub, msg, mlen, want, 64, &o), DSIG_OK);
        assert_int_equal(dsig_verify(sm2alg(), pub, msg, mlen, want, 64), DSIG_E_VERIFY); /* default ID */
        rt_tamper_all(sm2alg(), pub, msg, mlen, want, 64, &o);
        dsig_key_free(pub);
    }
    free(msg);
    botan_count++;
}

static void test_botan_vectors(void **st)
{
    (void)st;
    size_t len;
    char *text = tu_read_vector_file("sm2/botan/sm2_sig.vec", &len);
    botan_count = 0;
    rt_vec_each(text, "Signature", botan_rec, NULL);
    assert_int_equal(botan_count, 4); /* test curve SM3 + Raw, sm2p256v1, P-256 */
    free(text);
}

/* ---- HMAC-SM3 (Wycheproof) ------------------------------------------------------------------ */

static void test_hmac_sm3_wycheproof(void **st)
{
    (void)st;
    json_t *j = tu_load_json("mac/wycheproof/hmac_sm3_test.json");
    size_t gi, ti, count = 0;
    json_t *g, *t;
    const dsig_alg *alg = dsig_alg_by_name("HMAC-SM3");
    assert_non_null(alg);
    json_array_foreach(json_object_get(j, "testGroups"), gi, g) {
        size_t tag_bytes = (size_t)json_integer_value(json_object_get(g, "tagSize")) / 8;
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            size_t kl, ml, tl;
            uint8_t *key = tu_hex(tu_str(t, "key"), &kl), *msg = tu_hex(tu_str(t, "msg"), &ml);
            uint8_t *tag = tu_hex(tu_str(t, "tag"), &tl), out[32];
            int valid = strcmp(tu_str(t, "result"), "valid") == 0;
            assert_int_equal(dsig_mac_compute("HMAC-SM3", key, kl, msg, ml, NULL, 0, tag_bytes, 0, out),
                             DSIG_OK);
            if (valid)
                assert_memory_equal(out, tag, tag_bytes);
            else
                assert_true(tl != tag_bytes || memcmp(out, tag, tag_bytes) != 0);
            /* full-size tags with policy-sized keys: the registered streaming path too */
            if (tag_bytes == 32 && kl >= 32) {
                char *bk = dsig_b64url_encode_alloc(key, kl), json[512];
                snprintf(json, sizeof json, "{\"kty\":\"oct\",\"k\":\"%s\"}", bk);
                dsig_xfree(bk, 0);
                dsig_key *k = NULL;
                assert_int_equal(dsig_jwk_import(&k, json, strlen(json)), DSIG_OK);
                assert_int_equal(tu_verify_chunked(alg, k, msg, ml, 5, tag, tl),
                                 valid ? DSIG_OK : DSIG_E_VERIFY);
                dsig_key_free(k);
            }
            free(key);
            free(msg);
            free(tag);
            count++;
        }
    }
    assert_true(count > 100);
    json_decref(j);
}

/* ---- round trips, IDs, tampering, bad keys, JWK/PEM ------------------------------------------- */

static void test_roundtrip(void **st)
{
    (void)st;
    const dsig_alg *alg = sm2alg();
    dsig_key *priv, *pub;
    static const uint8_t seed[32] = {1, 2, 3};
    rt_seeded_pair(alg, "SM2", seed, &priv, &pub);
    assert_int_equal(dsig_key_bits(priv), 256);

    /* sign, tamper, r = 0 / s = 0 and all-ones (r, s) */
    uint8_t msg[100], sig[64];
    size_t sl = 0;
    rt_sign_tamper(alg, priv, pub, msg, sig, &sl);

    /* the ID: explicit default = no options; a custom ID must match on both sides */
    dsig_sign_opts def = {.context = (const uint8_t *)"1234567812345678", .context_len = 16};
    assert_int_equal(dsig_verify_ex(alg, pub, msg, sizeof msg, sig, sl, &def), DSIG_OK);
    dsig_sign_opts alice = {.context = (const uint8_t *)"ALICE123@YAHOO.COM", .context_len = 18};
    assert_int_equal(dsig_sign_ex(alg, priv, msg, sizeof msg, sig, sizeof sig, &sl, &alice), DSIG_OK);
    assert_int_equal(dsig_verify_ex(alg, pub, msg, sizeof msg, sig, sl, &alice), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pub, msg, sizeof msg, sig, sl), DSIG_E_VERIFY);
    /* options SM2 does not define */
    dsig_sign_opts det = {.deterministic = 1};
    assert_int_equal(dsig_sign_ex(alg, priv, msg, sizeof msg, sig, sizeof sig, &sl, &det),
                     DSIG_E_UNSUPPORTED);
    dsig_sign_opts ph = {.prehash = "SHA-256"};
    assert_int_equal(dsig_verify_ex(alg, pub, msg, sizeof msg, sig, sl, &ph), DSIG_E_UNSUPPORTED);

    rt_jwk_roundtrip(priv);
    rt_bad_keys("SM2", priv);
    /* d = n - 1 is outside SM2's [1, n-2] (1 + d would not be invertible) */
    uint8_t nm1[32], qx[32], qy[32];
    rt_hexw("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54122", nm1, 32);
    assert_int_equal(dsig_rec_test_pub(NULL, 0, nm1, qx, qy), DSIG_OK);
    dsig_key *k = NULL;
    assert_int_equal(rt_jwk_key("SM2", qx, qy, NULL, 32, &k), DSIG_OK); /* the point is fine */
    dsig_key_free(k);
    assert_int_equal(rt_jwk_key("SM2", qx, qy, nm1, 32, &k), DSIG_E_KEY);

    /* PEM through OpenSSL's SM2 key type, both ways */
    char *pem = NULL;
    size_t pl = 0;
    dsig_key *back = NULL;
    assert_int_equal(dsig_key_export_pem(priv, 1, &pem, &pl), DSIG_OK);
    assert_int_equal(dsig_key_import_pem(&back, pem, pl), DSIG_OK);
    assert_string_equal(dsig_key_curve(back), "SM2");
    assert_memory_equal(((struct rec_key *)back->impl)->d, ((struct rec_key *)priv->impl)->d, 32);
    dsig_free(pem);
    dsig_key_free(back);
    assert_int_equal(dsig_key_export_pem(pub, 0, &pem, &pl), DSIG_OK);
    assert_int_equal(dsig_key_import_pem(&back, pem, pl), DSIG_OK);
    assert_false(dsig_key_has_private(back));
    dsig_free(pem);
    dsig_key_free(back);

    /* the key type does not go with other algorithms, nor P-256 keys with SM2-SM3 */
    assert_int_not_equal(dsig_sign(dsig_alg_by_name("ES256"), priv, msg, 1, sig, sizeof sig, &sl), DSIG_OK);
    dsig_key *p256 = NULL;
    assert_int_equal(dsig_key_generate(&p256, dsig_alg_by_name("ES256"), NULL), DSIG_OK);
    assert_int_not_equal(dsig_sign(alg, p256, msg, 1, sig, sizeof sig, &sl), DSIG_OK);
    dsig_key_free(p256);
    dsig_key_free(priv);
    dsig_key_free(pub);
}

/* ---- interop with OpenSSL 3.0 SM2 ------------------------------------------------------------- */

/* OpenSSL: sign (sign=1, DER out) or verify a DER signature, with SM3 and the given ID. */
static int ossl_sm2(EVP_PKEY *pk, int sign, const char *id, const uint8_t *msg, size_t len, uint8_t *der,
                    size_t *der_len)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new(pk, NULL);
    assert_non_null(m);
    assert_non_null(pc);
    if (id)
        assert_int_equal(EVP_PKEY_CTX_set1_id(pc, id, strlen(id)), 1);
    EVP_MD_CTX_set_pkey_ctx(m, pc);
    int ok;
    if (sign)
        ok = EVP_DigestSignInit(m, NULL, EVP_sm3(), NULL, pk) == 1 &&
             EVP_DigestSign(m, der, der_len, msg, len) == 1;
    else
        ok = EVP_DigestVerifyInit(m, NULL, EVP_sm3(), NULL, pk) == 1 &&
             EVP_DigestVerify(m, der, *der_len, msg, len) == 1;
    EVP_MD_CTX_free(m);
    EVP_PKEY_CTX_free(pc);
    ERR_clear_error();
    return ok;
}

static void test_openssl_interop(void **st)
{
    (void)st;
    const dsig_alg *alg = sm2alg();
    for (int round = 0; round < 4; round++) {
        dsig_key *priv = NULL, *pub = NULL;
        assert_int_equal(dsig_key_generate(&priv, alg, NULL), DSIG_OK);
        assert_int_equal(dsig_key_public(&pub, priv), DSIG_OK);
        char *pem = NULL;
        size_t pl = 0;
        assert_int_equal(dsig_key_export_pem(priv, 1, &pem, &pl), DSIG_OK);
        BIO *bio = BIO_new_mem_buf(pem, (int)pl);
        EVP_PKEY *pk = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
        BIO_free(bio);
        dsig_free(pem);
        assert_non_null(pk);
        assert_true(EVP_PKEY_is_a(pk, "SM2"));
        /* Odd rounds: a custom ID on both sides. Even rounds: dsig's default (no options) against
         * OpenSSL given "1234567812345678" explicitly — OpenSSL 3.0 does not default to the GM/T 0009
         * ID when none is set, so interop needs it spelled out there. */
        const char *id = round % 2 ? "alice@example.com" : "1234567812345678";
        dsig_sign_opts o = {.context = (const uint8_t *)id, .context_len = round % 2 ? strlen(id) : 0};
        uint8_t msg[777], sig[64], der[128];
        tu_fill(msg, sizeof msg, (uint64_t)round);
        size_t len = (size_t)(round * 200 + 1), sl = 0;

        /* dsig → OpenSSL */
        assert_int_equal(dsig_sign_ex(alg, priv, msg, len, sig, sizeof sig, &sl, &o), DSIG_OK);
        ECDSA_SIG *es = ECDSA_SIG_new();
        ECDSA_SIG_set0(es, BN_bin2bn(sig, 32, NULL), BN_bin2bn(sig + 32, 32, NULL));
        unsigned char *pp = der;
        size_t dl = (size_t)i2d_ECDSA_SIG(es, &pp);
        ECDSA_SIG_free(es);
        assert_true(ossl_sm2(pk, 0, id, msg, len, der, &dl));
        msg[0] ^= 1;
        assert_false(ossl_sm2(pk, 0, id, msg, len, der, &dl));
        msg[0] ^= 1;

        /* OpenSSL → dsig */
        dl = sizeof der;
        assert_true(ossl_sm2(pk, 1, id, msg, len, der, &dl));
        const unsigned char *cp = der;
        es = d2i_ECDSA_SIG(NULL, &cp, (long)dl);
        assert_non_null(es);
        assert_int_equal(BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, 32), 32);
        assert_int_equal(BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + 32, 32), 32);
        ECDSA_SIG_free(es);
        assert_int_equal(tu_verify_chunked(alg, pub, msg, len, 0, sig, 64),
                         round % 2 ? DSIG_E_VERIFY : DSIG_OK);
        assert_int_equal(dsig_verify_ex(alg, pub, msg, len, sig, 64, &o), DSIG_OK);
        EVP_PKEY_free(pk);
        dsig_key_free(priv);
        dsig_key_free(pub);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sm3_vectors),     cmocka_unit_test(test_gmt0003_example),
        cmocka_unit_test(test_botan_vectors),   cmocka_unit_test(test_hmac_sm3_wycheproof),
        cmocka_unit_test(test_roundtrip),       cmocka_unit_test(test_openssl_interop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
