/*
 * The persist-before-release interface of the state files (dsig_state_store, include/dsig/state.h)
 * and the key identity that names the high-water registry file:
 *   - a store that fails: no signature is released, the counter in memory does not move, the next
 *     signature asks the store again for the same counter, the registry is not raised;
 *   - a store that records: it is called before the signature that needs the new counter is returned,
 *     once per window, with an image that is a valid state file holding that counter;
 *   - the registry file of a real HSS-LMS and XMSS key is named by its RFC 7638 thumbprint
 *     (dsig_jwk_thumbprint), as before the core computed that identity itself.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "toy.h"

static char dir[256];    /* per-run temporary directory */
static char regdir[300]; /* its high-water registry */

#define MAX_CALLS 16

struct recorder {
    const char *tag;              /* names its image files */
    int fail;                     /* persist returns DSIG_E_IO while set */
    int calls;
    uint64_t counter[MAX_CALLS];  /* update->counter of each call */
    int returned_before[MAX_CALLS]; /* signatures the test had received when the call came */
    int returned;                 /* signatures received so far (set by the test) */
    char image_path[MAX_CALLS][320]; /* each call's image, written out as a file */
};

static int record_persist(void *ctx, const dsig_state_update *u)
{
    struct recorder *r = ctx;
    assert_true(r->calls < MAX_CALLS);
    int i = r->calls++;
    r->counter[i] = u->counter;
    r->returned_before[i] = r->returned;
    assert_non_null(u->path);
    snprintf(r->image_path[i], sizeof r->image_path[i], "%s/%s-image%d.state", dir, r->tag, i);
    int fd = open(r->image_path[i], O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, u->image, u->image_len), (ssize_t)u->image_len);
    close(fd);
    return r->fail ? DSIG_E_IO : DSIG_OK;
}

static int sign_one(const dsig_key *key, uint64_t *q)
{
    uint8_t sig[TOY_SIG_LEN];
    size_t len = 0;
    int rc = dsig_sign(&toy_alg, key, "msg", 3, sig, sizeof sig, &len);
    if (rc == DSIG_OK) {
        *q = toy_sig_index(sig);
        assert_int_equal(dsig_verify(&toy_alg, key, "msg", 3, sig, len), DSIG_OK);
    }
    return rc;
}

static dsig_key *make(const char *name, unsigned cap, uint32_t reserve, const dsig_state_store *store)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    dsig_key *k = NULL;
    dsig_keygen_params kp = {.bits = cap};
    dsig_state_opts o = {.reserve = reserve, .registry_dir = regdir, .store = store};
    assert_int_equal(dsig_state_create(&k, p, &toy_alg, &kp, &o), DSIG_OK);
    return k;
}

static void test_failing_store_releases_nothing(void **state)
{
    (void)state;
    struct recorder r = {.tag = "fail", .fail = 1};
    dsig_state_store store = {record_persist, &r};
    dsig_key *k = make("fail.state", 10, 1, &store);
    uint64_t rem, q = 99;
    for (int attempt = 0; attempt < 2; attempt++) {
        assert_int_equal(sign_one(k, &q), DSIG_E_IO);
        assert_int_equal(q, 99); /* no signature */
        assert_non_null(strstr(dsig_last_error_detail(), "did not persist"));
        assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
        assert_int_equal(rem, 10); /* the counter in memory did not move */
        assert_int_equal(r.calls, attempt + 1);
        assert_int_equal(r.counter[attempt], 1); /* asked again for the same counter */
    }
    /* The registry was not raised: the state file (counter 0) still opens once the key is closed. */
    dsig_key_free(k);
    char p[512];
    snprintf(p, sizeof p, "%s/fail.state", dir);
    dsig_state_opts o = {.reserve = 1, .registry_dir = regdir, .store = &store};
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    r.fail = 0;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 0); /* the first index, never skipped by the failures */
    assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
    assert_int_equal(rem, 9);
    dsig_key_free(k);
    /* This store did not write the state file: after its success the registry's mark (1) is above
     * the file's counter (0), and the file is refused as an old copy. */
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_STATE);
    assert_null(k);
}

static void test_store_called_before_release(void **state)
{
    (void)state;
    struct recorder r = {.tag = "rec"};
    dsig_state_store store = {record_persist, &r};
    dsig_key *k = make("rec.state", 10, 2, &store);
    assert_int_equal(r.calls, 0); /* creation writes the state file itself */
    for (int i = 0; i < 5; i++) {
        uint64_t q;
        assert_int_equal(sign_one(k, &q), DSIG_OK);
        assert_int_equal(q, (uint64_t)i);
        r.returned++;
    }
    /* One call per window of 2, each before the first signature of its window was returned. */
    assert_int_equal(r.calls, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r.counter[i], 2 * (uint64_t)(i + 1));
        assert_int_equal(r.returned_before[i], 2 * i);
    }
    dsig_key_free(k);
    /* Each image is a valid state file holding its counter: opened (without a registry, the images
     * are copies of one key), it signs from there. */
    for (int i = 0; i < 3; i++) {
        dsig_state_opts o = {.reserve = 1, .registry_dir = ""};
        assert_int_equal(dsig_state_open(&k, r.image_path[i], &o), DSIG_OK);
        uint64_t rem;
        assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
        assert_int_equal(rem, 10 - r.counter[i]);
        dsig_key_free(k);
    }
}

/* The registry file of a real stateful key is named by its RFC 7638 thumbprint. */
static void identity_is_thumbprint(const char *alg_name, const char *param, const char *file)
{
    const dsig_alg *alg = dsig_alg_by_name(alg_name);
    assert_non_null(alg);
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    dsig_key *k = NULL;
    dsig_keygen_params kp = {.param = param};
    dsig_state_opts o = {.registry_dir = regdir};
    assert_int_equal(dsig_state_create(&k, p, alg, &kp, &o), DSIG_OK);
    char thumb[DSIG_THUMBPRINT_LEN], reg[700];
    assert_int_equal(dsig_jwk_thumbprint(k, thumb), DSIG_OK);
    snprintf(reg, sizeof reg, "%s/%s", regdir, thumb);
    struct stat sb;
    assert_int_equal(stat(reg, &sb), 0);
    assert_int_equal(sb.st_size, 64);
    dsig_key_free(k);
}

static void test_identity_is_thumbprint(void **state)
{
    (void)state;
    identity_is_thumbprint("HSS-LMS", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8", "lms.state");
    identity_is_thumbprint("XMSS", "XMSS-SHA2_10_256", "xmss.state");
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-store-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(regdir, sizeof regdir, "%s/registry", dir);
    toy_register();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failing_store_releases_nothing),
        cmocka_unit_test(test_store_called_before_release),
        cmocka_unit_test(test_identity_is_thumbprint),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
