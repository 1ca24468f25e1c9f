/*
 * ECDSA: ES256/ES384/ES512 against Wycheproof P1363 (raw R‖S) vectors, NIST ACVP SigVer, SigGen and
 * DetECDSA results (as verification vectors), KeyVer (point validation) and KeyGen (d ↔ Q), and the
 * RFC 6979 A.2 examples (verification and private/public consistency); seeded key generation; JWK and
 * PEM validation; streaming round trips and tampering.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsaec_util.h"

static const char *const XY[] = {"x", "y"};
static const char *const XYD[] = {"x", "y", "d"};

struct curve {
    const char *crv, *wyche, *acvp_hash, *rfc_name, *rfc_hash, *alg;
    const struct dsig_keytype *type;
    size_t w;
};
static const struct curve curves[] = {
    {"P-256", "ecdsa/wycheproof/ecdsa_secp256r1_sha256_p1363_test.json", "SHA2-256", "NIST P-256",
     "SHA-256", "ES256", &dsig_keytype_p256, 32},
    {"P-384", "ecdsa/wycheproof/ecdsa_secp384r1_sha384_p1363_test.json", "SHA2-384", "NIST P-384",
     "SHA-384", "ES384", &dsig_keytype_p384, 48},
    {"P-521", "ecdsa/wycheproof/ecdsa_secp521r1_sha512_p1363_test.json", "SHA2-512", "NIST P-521",
     "SHA-512", "ES512", &dsig_keytype_p521, 66},
};

static const struct curve *curve_by_name(const char *crv)
{
    for (size_t i = 0; i < 3; i++)
        if (strcmp(curves[i].crv, crv) == 0 || strcmp(curves[i].rfc_name, crv) == 0)
            return &curves[i];
    return NULL;
}

static const dsig_alg *alg(const char *name)
{
    const dsig_alg *a = dsig_alg_by_name(name);
    assert_non_null(a);
    return a;
}

/* r‖s from two hex integers at the curve width; NULL if one does not fit. */
static uint8_t *rs_sig(const struct curve *c, const char *r, const char *s)
{
    size_t l;
    uint8_t *br = rt_hex_width(r, c->w, &l), *bs = rt_hex_width(s, c->w, &l);
    uint8_t *out = NULL;
    if (br && bs) {
        out = malloc(2 * c->w);
        memcpy(out, br, c->w);
        memcpy(out + c->w, bs, c->w);
    }
    free(br);
    free(bs);
    return out;
}

static void test_wycheproof(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < 3; ci++) {
        const struct curve *c = &curves[ci];
        json_t *root = tu_load_json(c->wyche);
        size_t i, j, ran = 0;
        json_t *g, *t;
        json_array_foreach(json_object_get(root, "testGroups"), i, g)
        {
            json_t *pk = json_object_get(g, "publicKey");
            const char *hex[] = {tu_str(pk, "wx"), tu_str(pk, "wy")};
            dsig_key *key = NULL;
            assert_int_equal(rt_key_hex(c->type, XY, hex, 2, c->w, &key), DSIG_OK);
            /* the same key in PEM (SubjectPublicKeyInfo, made by Wycheproof) */
            const char *pem = tu_str(g, "publicKeyPem");
            dsig_key *pkey = NULL;
            assert_int_equal(dsig_key_import_pem(&pkey, pem, strlen(pem)), DSIG_OK);
            assert_string_equal(dsig_key_curve(pkey), c->crv);
            json_array_foreach(json_object_get(g, "tests"), j, t)
            {
                size_t ml = 0, sl = 0;
                uint8_t *msg = tu_hex(tu_str(t, "msg"), &ml);
                uint8_t *sig = tu_hex(tu_str(t, "sig"), &sl);
                int v = dsig_verify(alg(c->alg), key, msg, ml, sig, sl);
                uint8_t dg[64];
                size_t dl = rt_digest(c->rfc_hash, msg, ml, dg);
                int vd = dsig_verify_digest(alg(c->alg), key, c->rfc_hash, dg, dl, sig, sl);
                if ((vd == DSIG_OK) != (v == DSIG_OK) || (vd != DSIG_OK && vd != DSIG_E_VERIFY))
                    fail_msg("%s tcId %d: dsig_verify_digest %d, dsig_verify %d (%s)", c->wyche,
                             (int)json_integer_value(json_object_get(t, "tcId")), vd, v, dsig_last_error_detail());
                if (!rt_expect(tu_str(t, "result"), v))
                    fail_msg("%s tcId %d (%s): expected %s, got %d (%s)", c->wyche,
                             (int)json_integer_value(json_object_get(t, "tcId")), tu_str(t, "comment"),
                             tu_str(t, "result"), v, dsig_last_error_detail());
                if (strcmp(tu_str(t, "result"), "acceptable") != 0)
                    assert_int_equal(tu_verify_chunked(alg(c->alg), pkey, msg, ml, 3, sig, sl), v);
                free(msg);
                free(sig);
                ran++;
            }
            dsig_key_free(key);
            dsig_key_free(pkey);
        }
        assert_true(ran > 200);
        json_decref(root);
    }
}

/* ACVP SigVer: (qx, qy, r, s, message) → testPassed, for the JOSE curve/hash pairs. */
static void test_acvp_sigver(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("ecdsa/acvp/ECDSA-SigVer-FIPS186-5/prompt.json");
    json_t *exp = tu_load_json("ecdsa/acvp/ECDSA-SigVer-FIPS186-5/expectedResults.json");
    size_t i, j, ran = 0, good = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        const struct curve *c = curve_by_name(tu_str(g, "curve"));
        if (!c || strcmp(tu_str(g, "hashAlg"), c->acvp_hash) != 0)
            continue;
        json_t *eg = acvp_group(exp, acvp_id(g, "tgId"));
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            int want = acvp_passed(acvp_test(eg, acvp_id(t, "tcId")));
            const char *hex[] = {tu_str(t, "qx"), tu_str(t, "qy")};
            dsig_key *key = NULL;
            int rc = rt_key_hex(c->type, XY, hex, 2, c->w, &key);
            size_t ml;
            uint8_t *msg = tu_hex(tu_str(t, "message"), &ml);
            uint8_t *sig = rs_sig(c, tu_str(t, "r"), tu_str(t, "s"));
            if (rc == DSIG_OK && sig)
                rc = dsig_verify(alg(c->alg), key, msg, ml, sig, 2 * c->w);
            else if (rc == DSIG_OK)
                rc = DSIG_E_VERIFY;
            if (want ? rc != DSIG_OK : rc == DSIG_OK)
                fail_msg("ACVP SigVer tc %lld: want %d got %d (%s)", (long long)acvp_id(t, "tcId"), want,
                         rc, dsig_last_error_detail());
            good += want;
            ran++;
            free(msg);
            free(sig);
            dsig_key_free(key);
        }
    }
    assert_true(ran >= 10 && good > 0 && good < ran); /* P-256/SHA2-256, P-521/SHA2-512 */
    json_decref(prompt);
    json_decref(exp);
}

/* ACVP SigGen and DetECDSA-SigGen expected results: the server's signatures verify under its key. */
static void run_acvp_siggen(const char *dir)
{
    char pp[128], ep[128];
    snprintf(pp, sizeof pp, "ecdsa/acvp/%s/prompt.json", dir);
    snprintf(ep, sizeof ep, "ecdsa/acvp/%s/expectedResults.json", dir);
    json_t *prompt = tu_load_json(pp), *exp = tu_load_json(ep);
    size_t i, j, ran = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        const struct curve *c = curve_by_name(tu_str(g, "curve"));
        if (!c || strcmp(tu_str(g, "hashAlg"), c->acvp_hash) != 0)
            continue;
        json_t *eg = acvp_group(exp, acvp_id(g, "tgId"));
        const char *hex[] = {tu_str(eg, "qx"), tu_str(eg, "qy")};
        dsig_key *key = NULL;
        assert_int_equal(rt_key_hex(c->type, XY, hex, 2, c->w, &key), DSIG_OK);
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            json_t *et = acvp_test(eg, acvp_id(t, "tcId"));
            size_t ml;
            uint8_t *msg = tu_hex(tu_str(t, "message"), &ml);
            uint8_t *sig = rs_sig(c, tu_str(et, "r"), tu_str(et, "s"));
            assert_non_null(sig);
            assert_int_equal(dsig_verify(alg(c->alg), key, msg, ml, sig, 2 * c->w), DSIG_OK);
            sig[c->w] ^= 0x10;
            assert_int_equal(dsig_verify(alg(c->alg), key, msg, ml, sig, 2 * c->w), DSIG_E_VERIFY);
            ran++;
            free(msg);
            free(sig);
        }
        dsig_key_free(key);
    }
    assert_true(ran >= 3);
    json_decref(prompt);
    json_decref(exp);
}

static void test_acvp_siggen(void **state)
{
    (void)state;
    run_acvp_siggen("ECDSA-SigGen-FIPS186-5");
    run_acvp_siggen("DetECDSA-SigGen-FIPS186-5"); /* deterministic ECDSA: verification only */
}

/* ACVP KeyVer (public point validation) and KeyGen (d and Q consistent). */
static void test_acvp_keys(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("ecdsa/acvp/ECDSA-KeyVer-FIPS186-5/prompt.json");
    json_t *exp = tu_load_json("ecdsa/acvp/ECDSA-KeyVer-FIPS186-5/expectedResults.json");
    size_t i, j, ran = 0;
    json_t *g, *t;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        const struct curve *c = curve_by_name(tu_str(g, "curve"));
        if (!c)
            continue;
        json_t *eg = acvp_group(exp, acvp_id(g, "tgId"));
        json_array_foreach(json_object_get(g, "tests"), j, t)
        {
            int want = acvp_passed(acvp_test(eg, acvp_id(t, "tcId")));
            const char *hex[] = {tu_str(t, "qx"), tu_str(t, "qy")};
            dsig_key *key = NULL;
            int rc = rt_key_hex(c->type, XY, hex, 2, c->w, &key);
            if (want)
                assert_int_equal(rc, DSIG_OK);
            else
                assert_true(rc == DSIG_E_POINT || rc == DSIG_E_KEY);
            dsig_key_free(key);
            ran++;
        }
    }
    assert_true(ran >= 3);
    json_decref(prompt);
    json_decref(exp);

    prompt = tu_load_json("ecdsa/acvp/ECDSA-KeyGen-FIPS186-5/prompt.json");
    exp = tu_load_json("ecdsa/acvp/ECDSA-KeyGen-FIPS186-5/expectedResults.json");
    ran = 0;
    json_array_foreach(json_object_get(prompt, "testGroups"), i, g)
    {
        const struct curve *c = curve_by_name(tu_str(g, "curve"));
        if (!c)
            continue;
        json_t *eg = acvp_group(exp, acvp_id(g, "tgId"));
        json_array_foreach(json_object_get(eg, "tests"), j, t)
        {
            const char *hex[] = {tu_str(t, "qx"), tu_str(t, "qy"), tu_str(t, "d")};
            dsig_key *key = NULL;
            assert_int_equal(rt_key_hex(c->type, XYD, hex, 3, c->w, &key), DSIG_OK);
            assert_true(dsig_key_has_private(key));
            dsig_key_free(key);
            /* the same d with the y of -Q is refused */
            ran++;
        }
    }
    assert_true(ran >= 3);
    json_decref(prompt);
    json_decref(exp);
}

/* RFC 6979 A.2.5–A.2.7: the example keys (d ↔ Q) and signatures (verification only). */
static void test_rfc6979(void **state)
{
    (void)state;
    json_t *root = tu_load_json("ecdsa/rfc6979/rfc6979_vectors.json");
    size_t i, j, ran = 0;
    json_t *e, *t;
    json_array_foreach(root, i, e)
    {
        const struct curve *c = curve_by_name(tu_str(e, "curve"));
        if (!c)
            continue;
        const char *hex[] = {tu_str(e, "Ux"), tu_str(e, "Uy"), tu_str(e, "private")};
        dsig_key *key = NULL;
        assert_int_equal(rt_key_hex(c->type, XYD, hex, 3, c->w, &key), DSIG_OK);
        json_array_foreach(json_object_get(e, "cases"), j, t)
        {
            if (strcmp(tu_str(t, "hash"), c->rfc_hash) != 0)
                continue;
            const char *m = tu_str(t, "message");
            uint8_t *sig = rs_sig(c, tu_str(t, "r"), tu_str(t, "s"));
            assert_int_equal(dsig_verify(alg(c->alg), key, m, strlen(m), sig, 2 * c->w), DSIG_OK);
            assert_int_equal(dsig_verify(alg(c->alg), key, "x", 1, sig, 2 * c->w), DSIG_E_VERIFY);
            /* a signature of the digest alone is one of the message (ECDSA is randomized: no bytes
             * to compare), and the vector's signature verifies over the digest */
            uint8_t dg[64], ds[132];
            size_t dl = rt_digest(c->rfc_hash, (const uint8_t *)m, strlen(m), dg), dsl = 0;
            assert_int_equal(dsig_verify_digest(alg(c->alg), key, c->rfc_hash, dg, dl, sig, 2 * c->w), DSIG_OK);
            assert_int_equal(dsig_sign_digest(alg(c->alg), key, c->rfc_hash, dg, dl, ds, sizeof ds, &dsl), DSIG_OK);
            assert_int_equal(dsl, 2 * c->w);
            assert_int_equal(dsig_verify(alg(c->alg), key, m, strlen(m), ds, dsl), DSIG_OK);
            free(sig);
            ran++;
        }
        dsig_key_free(key);
    }
    assert_int_equal(ran, 6); /* "sample" and "test" on each of the three curves */
    json_decref(root);
}

static const uint8_t SEED[32] = "ecdsa test seed, 32 bytes long.";

static dsig_key *seeded(const char *alg_name, const uint8_t *seed)
{
    dsig_keygen_params p = {.seed = seed, .seed_len = 32};
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, alg(alg_name), &p), DSIG_OK);
    return k;
}

static void test_roundtrip_keygen_pem(void **state)
{
    (void)state;
    static const unsigned bits[] = {256, 384, 521};
    static const size_t smax[] = {64, 96, 132};
    for (size_t i = 0; i < 3; i++) {
        const struct curve *c = &curves[i];
        const dsig_alg *a = alg(c->alg);
        assert_string_equal(dsig_alg_family(a), "ECDSA");
        assert_string_equal(dsig_alg_curve(a), c->crv);
        assert_int_equal(dsig_alg_sig_max(a), smax[i]);
        assert_int_equal(dsig_alg_flags(a), DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED);
        dsig_key *k = seeded(c->alg, SEED), *k2 = seeded(c->alg, SEED), *ko = NULL;
        assert_int_equal(dsig_key_bits(k), bits[i]);
        /* same seed → same key */
        dsig_jwk_member m1[3], m2[3];
        size_t n1, n2;
        assert_int_equal(k->type->export_jwk(k, 1, m1, &n1), DSIG_OK);
        assert_int_equal(k2->type->export_jwk(k2, 1, m2, &n2), DSIG_OK);
        assert_int_equal(n1, 3);
        for (size_t j = 0; j < 3; j++) {
            assert_int_equal(m1[j].len, c->w);
            assert_memory_equal(m1[j].data, m2[j].data, c->w);
            dsig_xfree(m1[j].data, m1[j].len);
            dsig_xfree(m2[j].data, m2[j].len);
        }
        rt_roundtrip(a, k, 70000);
        rt_jwk_roundtrip(k);
        rt_pem_roundtrip(a, k);
        assert_int_equal(dsig_key_generate(&ko, a, NULL), DSIG_OK);
        rt_roundtrip(a, ko, 10);
        /* the curve must match the algorithm */
        const dsig_alg *other = alg(curves[(i + 1) % 3].alg);
        uint8_t sig[132];
        size_t sl;
        dsig_key_set_alg(k, NULL);
        assert_int_equal(dsig_sign(other, k, "m", 1, sig, sizeof sig, &sl), DSIG_E_KEY_MISMATCH);
        assert_int_equal(dsig_sign(a, k, "m", 1, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(dsig_verify(other, k, "m", 1, sig, sl), DSIG_E_KEY_MISMATCH);
        assert_int_equal(dsig_verify(alg("RS256"), k, "m", 1, sig, sl), DSIG_E_KEY_MISMATCH);
        /* R or S zero or ≥ n: rejected even though the rest is well formed */
        uint8_t bad[132];
        memcpy(bad, sig, sl);
        memset(bad, 0, c->w);
        assert_int_equal(dsig_verify(a, k, "m", 1, bad, sl), DSIG_E_VERIFY);
        memcpy(bad, sig, sl);
        memset(bad + c->w, 0xff, c->w);
        assert_int_equal(dsig_verify(a, k, "m", 1, bad, sl), DSIG_E_VERIFY);
        /* DER is not the JOSE form */
        assert_int_equal(dsig_verify(a, k, "m", 1, sig, sl + 1), DSIG_E_VERIFY);
        dsig_key_free(k);
        dsig_key_free(k2);
        dsig_key_free(ko);
    }
}

static void test_jwk_validation(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        const struct curve *c = &curves[i];
        dsig_key *k = seeded(c->alg, SEED), *out = NULL;
        dsig_jwk_member m[3];
        size_t n;
        assert_int_equal(k->type->export_jwk(k, 1, m, &n), DSIG_OK);
        const uint8_t *d[3] = {m[0].data, m[1].data, m[2].data};
        size_t lens[3] = {c->w, c->w, c->w};
        uint8_t buf[80];
        /* wrong lengths (also a leading zero octet added, one removed) */
        for (size_t mi = 0; mi < 3; mi++) {
            size_t save = lens[mi];
            lens[mi] = c->w - 1;
            assert_int_equal(rt_key_raw(c->type, XYD, d, lens, 3, &out), DSIG_E_KEY);
            memset(buf, 0, sizeof buf);
            memcpy(buf + 1, d[mi], c->w);
            const uint8_t *sv = d[mi];
            d[mi] = buf;
            lens[mi] = c->w + 1;
            assert_int_equal(rt_key_raw(c->type, XYD, d, lens, 3, &out), DSIG_E_KEY);
            d[mi] = sv;
            lens[mi] = save;
        }
        /* not on the curve */
        memcpy(buf, m[1].data, c->w);
        buf[c->w - 1] ^= 1;
        d[1] = buf;
        assert_int_equal(rt_key_raw(c->type, XY, d, lens, 2, &out), DSIG_E_POINT);
        /* coordinate ≥ p (all ones is above every NIST prime of the width) */
        memset(buf, 0xff, c->w);
        if (c->w == 66)
            buf[0] = 0x01;
        assert_int_equal(rt_key_raw(c->type, XY, d, lens, 2, &out), DSIG_E_POINT);
        d[1] = m[1].data;
        /* the (0, 0) "point" (how infinity is sometimes encoded) */
        memset(buf, 0, c->w);
        const uint8_t *z[2] = {buf, buf};
        assert_int_equal(rt_key_raw(c->type, XY, z, lens, 2, &out), DSIG_E_POINT);
        /* d = 0, d ≥ n, d of another key */
        d[2] = buf;
        assert_int_equal(rt_key_raw(c->type, XYD, d, lens, 3, &out), DSIG_E_KEY);
        memset(buf, 0xff, c->w);
        if (c->w == 66)
            buf[0] = 0x01;
        assert_int_equal(rt_key_raw(c->type, XYD, d, lens, 3, &out), DSIG_E_KEY);
        memcpy(buf, m[2].data, c->w);
        buf[c->w - 1] ^= 1;
        assert_int_equal(rt_key_raw(c->type, XYD, d, lens, 3, &out), DSIG_E_KEY);
        assert_non_null(strstr(dsig_last_error_detail(), "does not match"));
        /* missing y */
        assert_int_equal(rt_key_raw(c->type, XY, d, lens, 1, &out), DSIG_E_KEY);
        /* the good one */
        d[2] = m[2].data;
        assert_int_equal(rt_key_raw(c->type, XYD, d, lens, 3, &out), DSIG_OK);
        dsig_key_free(out);
        for (size_t j = 0; j < n; j++)
            dsig_xfree(m[j].data, m[j].len);
        dsig_key_free(k);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wycheproof),          cmocka_unit_test(test_acvp_sigver),
        cmocka_unit_test(test_acvp_siggen),         cmocka_unit_test(test_acvp_keys),
        cmocka_unit_test(test_rfc6979),             cmocka_unit_test(test_roundtrip_keygen_pem),
        cmocka_unit_test(test_jwk_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
