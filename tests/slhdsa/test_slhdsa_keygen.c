/* SLH-DSA key generation: ACVP keyGen (all 12 parameter sets, every test) and BoringSSL keygen files,
 * byte-exact (FIPS 205 Algorithm 18). */
#include "slh_testlib.h"

/* Every ACVP keyGen test: pk and sk from (skSeed, skPrf, pkSeed). */
static void test_acvp_keygen(void **state)
{
    (void)state;
    json_t *prompt = tu_load_json("slhdsa/acvp/SLH-DSA-keyGen-FIPS205/prompt.json");
    json_t *expect = tu_load_json("slhdsa/acvp/SLH-DSA-keyGen-FIPS205/expectedResults.json");
    json_t *groups = json_object_get(prompt, "testGroups");
    json_t *egroups = json_object_get(expect, "testGroups");
    size_t gi, ti, count = 0, sets = 0;
    json_t *g, *t;
    json_array_foreach(groups, gi, g) {
        const dsig_slhdsa_params *p = slh_group_params(g);
        json_t *etests = json_object_get(json_array_get(egroups, gi), "tests");
        double t0 = slh_now();
        json_array_foreach(json_object_get(g, "tests"), ti, t) {
            size_t l1, l2, l3, lpk, lsk;
            uint8_t *sks = slh_jhex(t, "skSeed", &l1), *skp = slh_jhex(t, "skPrf", &l2);
            uint8_t *pks = slh_jhex(t, "pkSeed", &l3);
            json_t *e = slh_find_tc(etests, json_integer_value(json_object_get(t, "tcId")));
            uint8_t *epk = slh_jhex(e, "pk", &lpk), *esk = slh_jhex(e, "sk", &lsk);
            assert_int_equal(l1, p->n);
            assert_int_equal(lpk, p->pk_bytes);
            assert_int_equal(lsk, p->sk_bytes);
            uint8_t pk[64], sk[128];
            assert_int_equal(dsig_slhdsa_keygen_internal(p, sks, skp, pks, pk, sk), DSIG_OK);
            assert_memory_equal(pk, epk, lpk);
            assert_memory_equal(sk, esk, lsk);
            free(sks), free(skp), free(pks), free(epk), free(esk);
            count++;
        }
        print_message("  %-20s keyGen %zu tests ok (%.2f s)\n", p->name,
                      json_array_size(json_object_get(g, "tests")), slh_now() - t0);
        sets++;
    }
    assert_int_equal(sets, 12);
    assert_true(count >= 96);
    json_decref(prompt);
    json_decref(expect);
}

/* BoringSSL keygen files: seed = skSeed ‖ skPrf ‖ pkSeed; pub, priv. */
static void boring_keygen(const char *file, const dsig_slhdsa_params *p)
{
    size_t len;
    char *text = tu_read_vector_file(file, &len);
    char *cur = text;
    slh_record r;
    int count = 0;
    while (slh_next_record(&cur, &r)) {
        if (slh_field(&r, "seed") == NULL)
            continue;
        size_t ls, lp, lk;
        uint8_t *seed = tu_hex(slh_field(&r, "seed"), &ls), *pub = tu_hex(slh_field(&r, "pub"), &lp);
        uint8_t *priv = tu_hex(slh_field(&r, "priv"), &lk);
        assert_int_equal(ls, 3 * p->n);
        uint8_t pk[64], sk[128];
        assert_int_equal(dsig_slhdsa_keygen_internal(p, seed, seed + p->n, seed + 2 * p->n, pk, sk),
                         DSIG_OK);
        assert_memory_equal(pk, pub, lp);
        assert_memory_equal(sk, priv, lk);
        free(seed), free(pub), free(priv);
        count++;
    }
    assert_true(count >= 8);
    free(text);
}

/* BoringSSL SHA2-128s and SHAKE-256f keygen records. */
static void test_boringssl_keygen(void **state)
{
    (void)state;
    boring_keygen("slhdsa/boringssl/slhdsa_sha2_128s_keygen.txt", &dsig_slhdsa_sha2_128s);
    boring_keygen("slhdsa/boringssl/slhdsa_shake_256f_keygen.txt", &dsig_slhdsa_shake_256f);
}

/* Descriptors: names, Table 2 sizes, lookup. */
static void test_params(void **state)
{
    (void)state;
    static const struct { const char *name; size_t pk, sig; } t2[] = {
        {"SLH-DSA-SHA2-128s", 32, 7856},   {"SLH-DSA-SHAKE-128s", 32, 7856},
        {"SLH-DSA-SHA2-128f", 32, 17088},  {"SLH-DSA-SHAKE-128f", 32, 17088},
        {"SLH-DSA-SHA2-192s", 48, 16224},  {"SLH-DSA-SHAKE-192s", 48, 16224},
        {"SLH-DSA-SHA2-192f", 48, 35664},  {"SLH-DSA-SHAKE-192f", 48, 35664},
        {"SLH-DSA-SHA2-256s", 64, 29792},  {"SLH-DSA-SHAKE-256s", 64, 29792},
        {"SLH-DSA-SHA2-256f", 64, 49856},  {"SLH-DSA-SHAKE-256f", 64, 49856},
    };
    for (size_t i = 0; i < 12; i++) {
        const dsig_slhdsa_params *p = dsig_slhdsa_params_by_name(t2[i].name);
        assert_non_null(p);
        assert_string_equal(p->name, t2[i].name);
        assert_int_equal(p->pk_bytes, t2[i].pk);
        assert_int_equal(p->sk_bytes, 2 * t2[i].pk);
        assert_int_equal(p->sig_bytes, t2[i].sig);
        assert_int_equal(p->hp * p->d, p->h);
        print_message("  %-20s back-end %s\n", p->name, dsig_slhdsa_backend(p));
    }
    assert_null(dsig_slhdsa_params_by_name("SLH-DSA-SHA2-128S"));
    assert_null(dsig_slhdsa_params_by_name(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_acvp_keygen),
        cmocka_unit_test(test_boringssl_keygen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
