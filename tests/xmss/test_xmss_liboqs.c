/*
 * tests/xmss/test_xmss_liboqs.c — liboqs XMSS / XMSS^MT known answers (reference implementation):
 * every .rsp signature verifies (and a corrupted copy does not); for the sets whose trees are cheap
 * (t = h/d <= 10) the signer, loaded from the given sk at its index, reproduces `sm` byte for byte.
 */
#include <dirent.h>
#include <stdio.h>

#include "xmss_testlib.h"

/* Sets whose signing known answer is checked (to keep the run short): every tree height 5 set, the
 * n = 24/32 XMSS h = 10 sets and XMSSMT-SHA2_20/2_256; under the sanitizers only SHA-256 ones with
 * t = 5 and XMSS-SHA2_10_256. The others are verified only. */
static int sign_checked(const dsig_xmss_params *p)
{
    if (p->t > 10)
        return 0;
    if (!xt_sample()) /* n = 64 and the SHAKE XMSS^MT t = 10 sets: verified only (run time) */
        return p->t <= 5 || (p->n != 64 && (!p->mt || (p->hash == XMSS_SHA256 && p->h == 20)));
    return p->hash == XMSS_SHA256 && (p->t <= 5 || (p->n == 32 && !p->mt));
}

/* One .rsp file: verify, corrupt, and (cheap sets) re-sign from sk. */
static void one_file(const char *fname, int *signed_count)
{
    char rel[256], name[64];
    snprintf(rel, sizeof rel, "xmss/liboqs/%s", fname);
    snprintf(name, sizeof name, "%.*s", (int)(strlen(fname) - 4), fname);
    const dsig_xmss_params *p = dsig_xmss_params_by_name(name);
    if (!p)
        fail_msg("%s: no parameter set named %s", fname, name);
    size_t tl;
    char *text = tu_read_vector_file(rel, &tl);
    char *hpk = xt_field(text, "pk"), *hsk = xt_field(text, "sk"), *hmsg = xt_field(text, "msg"),
         *hsm = xt_field(text, "sm");
    assert_non_null(hpk);
    assert_non_null(hsm);
    size_t pkl, skl, ml, sml;
    uint8_t *pk = xt_hex(hpk, &pkl), *sk = xt_hex(hsk, &skl), *msg = xt_hex(hmsg, &ml),
            *sm = xt_hex(hsm, &sml);
    assert_int_equal(pkl, p->pk_bytes);
    assert_int_equal(sml, p->sig_bytes);
    assert_int_equal(dsig_xmss_verify_raw(p, pk, msg, ml, sm, sml), DSIG_OK);
    sm[sml / 2] ^= 0x20;
    assert_int_equal(dsig_xmss_verify_raw(p, pk, msg, ml, sm, sml), DSIG_E_VERIFY);
    sm[sml / 2] ^= 0x20;
    if (ml) {
        msg[0] ^= 1;
        assert_int_equal(dsig_xmss_verify_raw(p, pk, msg, ml, sm, sml), DSIG_E_VERIFY);
        msg[0] ^= 1;
    }
    if (sign_checked(p)) {
        /* sk = OID ‖ idx ‖ SK_SEED ‖ SK_PRF ‖ root ‖ PUB_SEED (‖ reference BDS state) */
        unsigned n = p->n, ib = p->idx_bytes;
        assert_true(skl >= 4 + ib + 4 * n);
        uint64_t q = 0;
        for (unsigned i = 0; i < ib; i++)
            q = q << 8 | sk[4 + i];
        const uint8_t *s = sk + 4 + ib;
        assert_memory_equal(s + 2 * n, pk + 4, n); /* root */
        assert_memory_equal(s + 3 * n, pk + 4 + n, n); /* PUB_SEED */
        assert_int_equal(dsig_xmss_sig_index(p, sm), q);
        uint8_t *sig = malloc(p->sig_bytes);
        assert_int_equal(dsig_xmss_sign_raw(p, s, s + n, s + 3 * n, s + 2 * n, q, msg, ml, sig),
                         DSIG_OK);
        assert_memory_equal(sig, sm, sml);
        free(sig);
        ++*signed_count;
    }
    free(pk), free(sk), free(msg), free(sm);
    free(hpk), free(hsk), free(hmsg), free(hsm), free(text);
}

/* Every .rsp in the liboqs directory. */
static void test_liboqs_all(void **st)
{
    (void)st;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/xmss/liboqs", tu_vectors_dir());
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int files = 0, signed_count = 0;
    while ((e = readdir(d))) {
        /* NAME.rsp, or NAME.rsp.xz for the large ones (tu_read_vector_file decompresses). */
        char fname[200];
        size_t l = strlen(e->d_name);
        if (l > 3 && strcmp(e->d_name + l - 3, ".xz") == 0)
            l -= 3;
        snprintf(fname, sizeof fname, "%.*s", (int)l, e->d_name);
        if (l < 5 || strcmp(fname + l - 4, ".rsp") != 0)
            continue;
        one_file(fname, &signed_count);
        files++;
    }
    closedir(d);
    print_message("liboqs: %d files verified, %d signatures reproduced\n", files, signed_count);
    assert_int_equal(files, 34);
    assert_true(signed_count >= (xt_sample() ? 3 : 12));
}

/* Every parameter set: name lookup round trip and sizes (RFC 8391 §4.1.8 / §4.2.4 lengths). */
static void test_params(void **st)
{
    (void)st;
    int nx = 0, nm = 0;
    for (const dsig_xmss_params *const *p = dsig_xmss_all_params; *p; p++) {
        char name[48];
        dsig_xmss_params_name(*p, name, sizeof name);
        assert_ptr_equal(dsig_xmss_params_by_name(name), *p);
        assert_ptr_equal(dsig_xmss_params_by_oid((*p)->mt, (*p)->oid), *p);
        (*p)->mt ? nm++ : nx++;
    }
    assert_int_equal(nx, 21);
    assert_int_equal(nm, 56);
    const dsig_xmss_params *p = dsig_xmss_params_by_name("XMSS-SHA2_10_256");
    assert_non_null(p);
    assert_int_equal(p->oid, 1);
    assert_int_equal(p->sig_bytes, 2500);
    p = dsig_xmss_params_by_name("XMSSMT-SHA2_20/2_256");
    assert_int_equal(p->sig_bytes, 4963);
    assert_null(dsig_xmss_params_by_name("XMSS-SHA2_11_256"));
    assert_null(dsig_xmss_params_by_oid(0, 0));
    assert_null(dsig_xmss_params_by_oid(1, 0x39));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_liboqs_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
