/*
 * GOST3410-2012-256, HMAC-STREEBOG-256/512: RFC 6986 / Botan Streebog vectors through the providers'
 * streaming hash; RFC 7836 Appendix B HMAC examples; GOST R 34.10-2012 Appendix A.1 (= RFC 7091 §7.1)
 * on its test curve with the given nonce (exact s ‖ r) and Botan's records of it (digest bytes read
 * little-endian); round trips, every-bit tampering, bad keys, JWK; interoperation with the OpenSSL
 * GOST engine (`openssl ... -engine gost`, paramset A = id-tc26-gost-3410-2012-256-paramSetB) in both
 * directions when the engine is installed (Debian: libengine-gost-openssl), skipped otherwise.
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
    dsig_key *priv = NULL, *pub = NULL;
    static const uint8_t seed[32] = {9, 8, 7};
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    assert_int_equal(dsig_key_generate(&priv, alg, &kp), DSIG_OK);
    assert_string_equal(dsig_key_kty(priv), "EC");
    assert_string_equal(dsig_key_curve(priv), "GOST-256-B");
    assert_int_equal(dsig_key_public(&pub, priv), DSIG_OK);
    rt_roundtrip(alg, priv, pub);
    uint8_t msg[100], sig[64];
    size_t sl = 0;
    tu_fill(msg, sizeof msg, 5);
    assert_int_equal(dsig_sign(alg, priv, msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
    rt_tamper_all(alg, pub, msg, sizeof msg, sig, sl, NULL);
    uint8_t bad[64];
    memset(bad, 0, 64);
    assert_int_equal(dsig_verify(alg, pub, msg, sizeof msg, bad, 64), DSIG_E_VERIFY);
    memset(bad, 0xff, 64);
    assert_int_equal(dsig_verify(alg, pub, msg, sizeof msg, bad, 64), DSIG_E_VERIFY);
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
    const dsig_alg *alg = gostalg();
    for (int round = 0; round < 3; round++) {
        snprintf(cmd, sizeof cmd,
                 "cd %s && openssl genpkey -engine gost -algorithm gost2012_256 -pkeyopt paramset:A "
                 "-out k.pem 2>/dev/null && openssl pkey -engine gost -in k.pem -pubout -out pub.pem "
                 "2>/dev/null && openssl pkey -engine gost -in k.pem -text -noout > k.txt 2>/dev/null",
                 dir);
        assert_true(sh(cmd));
        char path[256], line[256], dh[80] = "", xh[80] = "", yh[80] = "";
        snprintf(path, sizeof path, "%s/k.txt", dir);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        while (fgets(line, sizeof line, f)) {
            sscanf(line, "Private key: %70s", dh);
            sscanf(line, " X:%70s", xh);
            sscanf(line, " Y:%70s", yh);
            if (strstr(line, "Parameter set:"))
                assert_non_null(strstr(line, "CryptoPro-A"));
        }
        fclose(f);
        uint8_t d[32], x[32], y[32];
        rt_hexw(dh, d, 32);
        rt_hexw(xh, x, 32);
        rt_hexw(yh, y, 32);
        dsig_key *priv = NULL, *pub = NULL;
        /* the import checks d·G = (x, y): the engine's curve is ours */
        assert_int_equal(rt_jwk_key("GOST-256-B", x, y, d, 32, &priv), DSIG_OK);
        assert_int_equal(rt_jwk_key("GOST-256-B", x, y, NULL, 32, &pub), DSIG_OK);

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
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streebog_vectors), cmocka_unit_test(test_hmac_rfc7836),
        cmocka_unit_test(test_appendix_a1),      cmocka_unit_test(test_botan_vectors),
        cmocka_unit_test(test_roundtrip),        cmocka_unit_test(test_engine_interop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
