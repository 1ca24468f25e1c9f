/*
 * RSA/ECDSA interoperability with the OpenSSL command line: keys made by `openssl genpkey` import into
 * dsig and keys made by dsig export to OpenSSL; dsig signatures verify with `openssl dgst -verify`, and
 * `openssl dgst -sign` signatures verify with dsig (ES*: JOSE R‖S ↔ DER). Skips if `openssl` is absent.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/ecdsa.h>

#include "rsaec_util.h"

static char dir[64];

static void write_file(const char *name, const void *data, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static uint8_t *read_file(const char *name, size_t *len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *buf = malloc(65536);
    *len = fread(buf, 1, 65536, f);
    fclose(f);
    buf[*len] = 0;
    return buf;
}

/* Run a shell command in the temp dir; returns its exit status. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[512], full[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd '%s' && %s >/dev/null 2>&1", dir, cmd);
    int rc = system(full);
    return rc == -1 ? -1 : WEXITSTATUS(rc);
}

/* JOSE R‖S → DER SEQUENCE{r, s} (what openssl dgst reads). */
static size_t rs_to_der(const uint8_t *rs, size_t len, uint8_t *der)
{
    ECDSA_SIG *s = ECDSA_SIG_new();
    ECDSA_SIG_set0(s, BN_bin2bn(rs, (int)len / 2, NULL), BN_bin2bn(rs + len / 2, (int)len / 2, NULL));
    unsigned char *p = der;
    int n = i2d_ECDSA_SIG(s, &p);
    ECDSA_SIG_free(s);
    assert_true(n > 0);
    return (size_t)n;
}

/* DER → R‖S of width w. */
static void der_to_rs(const uint8_t *der, size_t len, size_t w, uint8_t *rs)
{
    const unsigned char *p = der;
    ECDSA_SIG *s = d2i_ECDSA_SIG(NULL, &p, (long)len);
    assert_non_null(s);
    assert_int_equal(BN_bn2binpad(ECDSA_SIG_get0_r(s), rs, (int)w), (int)w);
    assert_int_equal(BN_bn2binpad(ECDSA_SIG_get0_s(s), rs + w, (int)w), (int)w);
    ECDSA_SIG_free(s);
}

struct case_ {
    const char *alg, *dgst, *sigopt, *genpkey;
    size_t ec_w; /* 0 for RSA */
};
static const struct case_ cases[] = {
    {"RS256", "-sha256", "", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048", 0},
    {"PS256", "-sha256", "-sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:digest",
     "-algorithm RSA -pkeyopt rsa_keygen_bits:2048", 0},
    {"ES256", "-sha256", "", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", 32},
    {"ES384", "-sha384", "", "-algorithm EC -pkeyopt ec_paramgen_curve:P-384", 48},
    {"ES512", "-sha512", "", "-algorithm EC -pkeyopt ec_paramgen_curve:P-521", 66},
};

/* Both directions for one case with the private key in priv.pem / public in pub.pem and `key`. */
static void both_ways(const struct case_ *c, const dsig_key *key, const dsig_key *pub)
{
    const dsig_alg *a = dsig_alg_by_name(c->alg);
    uint8_t msg[3000];
    tu_fill(msg, sizeof msg, 9);
    write_file("msg", msg, sizeof msg);
    uint8_t sig[1024], der[300];
    size_t sl;
    /* dsig signs, openssl verifies */
    assert_int_equal(dsig_sign(a, key, msg, sizeof msg, sig, sizeof sig, &sl), DSIG_OK);
    if (c->ec_w)
        write_file("sig", der, rs_to_der(sig, sl, der));
    else
        write_file("sig", sig, sl);
    char opts[200];
    snprintf(opts, sizeof opts, "%s %s", c->dgst, c->sigopt);
    if (run("openssl dgst %s -verify pub.pem -signature sig msg", opts) != 0)
        fail_msg("%s: openssl rejects the dsig signature", c->alg);
    /* a tampered one is rejected by openssl too (the check above is not vacuous) */
    msg[0] ^= 1;
    write_file("msg2", msg, sizeof msg);
    msg[0] ^= 1;
    assert_int_not_equal(run("openssl dgst %s -verify pub.pem -signature sig msg2", opts), 0);
    /* openssl signs, dsig verifies */
    assert_int_equal(run("openssl dgst %s -sign priv.pem -out sig2 msg", opts), 0);
    size_t l2;
    uint8_t *s2 = read_file("sig2", &l2);
    if (c->ec_w) {
        der_to_rs(s2, l2, c->ec_w, sig);
        l2 = 2 * c->ec_w;
        memcpy(s2, sig, l2);
    }
    assert_int_equal(dsig_verify(a, pub, msg, sizeof msg, s2, l2), DSIG_OK);
    assert_int_equal(tu_verify_chunked(a, pub, msg, sizeof msg, 7, s2, l2), DSIG_OK);
    s2[l2 / 2] ^= 4;
    assert_int_equal(dsig_verify(a, pub, msg, sizeof msg, s2, l2), DSIG_E_VERIFY);
    free(s2);
}

static dsig_key *import_file(const char *name)
{
    size_t len;
    uint8_t *pem = read_file(name, &len);
    dsig_key *k = NULL;
    int rc = dsig_key_import_pem(&k, (const char *)pem, len);
    if (rc)
        fail_msg("import %s: %d %s", name, rc, dsig_last_error_detail());
    free(pem);
    return k;
}

static int have_openssl(void)
{
    return system("openssl version >/dev/null 2>&1") == 0;
}

static void test_openssl_keys(void **state)
{
    (void)state;
    if (!have_openssl())
        skip();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const struct case_ *c = &cases[i];
        assert_int_equal(run("openssl genpkey %s -out priv.pem", c->genpkey), 0);
        assert_int_equal(run("openssl pkey -in priv.pem -pubout -out pub.pem"), 0);
        dsig_key *key = import_file("priv.pem"), *pub = import_file("pub.pem");
        assert_true(dsig_key_has_private(key));
        assert_false(dsig_key_has_private(pub));
        both_ways(c, key, pub);
        dsig_key_free(key);
        dsig_key_free(pub);
    }
    /* a 1024-bit RSA key from openssl is refused */
    assert_int_equal(run("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out weak.pem"), 0);
    size_t len;
    uint8_t *pem = read_file("weak.pem", &len);
    dsig_key *k = NULL;
    /* refused; KEY_WEAK once core/key.c's probe passes on from_pkey errors other than KEY_MISMATCH,
     * UNSUPPORTED with the current probe (see the rsaec report) */
    int rc = dsig_key_import_pem(&k, (const char *)pem, len);
    assert_true(rc == DSIG_E_KEY_WEAK || rc == DSIG_E_UNSUPPORTED);
    assert_null(k);
    free(pem);
    /* an RSA-PSS-restricted key (a different OpenSSL key type) is not accepted as RSA */
    assert_int_equal(run("openssl genpkey -algorithm RSA-PSS -pkeyopt rsa_keygen_bits:2048 -out pss.pem"), 0);
    pem = read_file("pss.pem", &len);
    assert_int_equal(dsig_key_import_pem(&k, (const char *)pem, len), DSIG_E_UNSUPPORTED);
    free(pem);
}

static void test_dsig_keys(void **state)
{
    (void)state;
    if (!have_openssl())
        skip();
    static const uint8_t seed[32] = "interop seed, thirty-two bytes.";
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const struct case_ *c = &cases[i];
        dsig_keygen_params p = {.seed = seed, .seed_len = 32};
        dsig_key *key = NULL, *pub = NULL;
        assert_int_equal(dsig_key_generate(&key, dsig_alg_by_name(c->alg), &p), DSIG_OK);
        assert_int_equal(dsig_key_public(&pub, key), DSIG_OK);
        char *pem;
        size_t len;
        assert_int_equal(dsig_key_export_pem(key, 1, &pem, &len), DSIG_OK);
        write_file("priv.pem", pem, len);
        dsig_free(pem);
        assert_int_equal(dsig_key_export_pem(key, 0, &pem, &len), DSIG_OK);
        write_file("pub.pem", pem, len);
        dsig_free(pem);
        /* OpenSSL's own full key check accepts what we generated */
        assert_int_equal(run("openssl pkey -in priv.pem -check -noout"), 0);
        both_ways(c, key, pub);
        dsig_key_free(key);
        dsig_key_free(pub);
    }
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/dsig-interop-rsaec-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openssl_keys),
        cmocka_unit_test(test_dsig_keys),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
