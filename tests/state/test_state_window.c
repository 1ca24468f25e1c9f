/*
 * Index windows of stateful keys (dsig_state_set_window, dsig_state_query, dsig_state_opts.ranges;
 * docs/scale.md): with the test-only scheme of toy.c the window's rules — a jump forward only, the
 * window durable (format version 2) before its first index, refusal outside it (DSIG_E_RANGE), the
 * remainder after a reopen, a range source asked when the window is used up, its errors passed on, a
 * range whose persist failed used by the next signature and not asked for again — and with the real
 * HSS-LMS, XMSS and XMSS^MT providers that a signature made after a jump verifies and carries the index
 * jumped to (HSS builds the new level trees, XMSS recomputes its traversal state).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash/sha256.h"
#include "sigindex.h"
#include "testutil.h"
#include "toy.h"

static char dir[256], regdir[300];

static const char *tpath(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

/* The version byte of a state file ('1' or '2'). */
static char file_version(const char *path)
{
    char b[13] = {0};
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, b, sizeof b), (ssize_t)sizeof b);
    close(fd);
    return b[11];
}

static int toy_sign(const dsig_key *key, uint64_t *q)
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

static dsig_key *toy_make(const char *name, unsigned cap, uint32_t reserve)
{
    char p[512];
    dsig_key *k = NULL;
    dsig_keygen_params kp = {.bits = cap};
    dsig_state_opts o = {.reserve = reserve, .registry_dir = regdir};
    assert_int_equal(dsig_state_create(&k, tpath(p, sizeof p, name), &toy_alg, &kp, &o), DSIG_OK);
    return k;
}

static void test_window_rules(void **state)
{
    (void)state;
    char p[512];
    tpath(p, sizeof p, "w.state");
    dsig_key *k = toy_make("w.state", 100, 4);
    uint64_t q;
    assert_int_equal(toy_sign(k, &q), DSIG_OK);
    assert_int_equal(q, 0);
    assert_int_equal(file_version(p), '1'); /* no window: the format of before */
    dsig_state_info in;
    assert_int_equal(dsig_state_query(k, &in), DSIG_OK);
    assert_int_equal(in.next, 1);
    assert_int_equal(in.counter, 4);
    assert_int_equal(in.capacity, 100);
    assert_int_equal(in.windowed, 0);

    /* Never backward: below the durable counter (4) is refused, whatever was actually used. */
    assert_int_equal(dsig_state_set_window(k, 2, 10), DSIG_E_STATE);
    assert_int_equal(dsig_state_set_window(k, 3, 10), DSIG_E_STATE);
    assert_int_equal(dsig_state_set_window(k, 20, 10), DSIG_E_ARG);
    assert_int_equal(dsig_state_set_window(k, 20, 101), DSIG_E_ARG);
    assert_int_equal(dsig_state_set_window(NULL, 20, 30), DSIG_E_ARG);

    /* Forward: durable before this returns, and the next index is lo. */
    assert_int_equal(dsig_state_set_window(k, 20, 26), DSIG_OK);
    assert_int_equal(file_version(p), '2');
    assert_int_equal(dsig_state_query(k, &in), DSIG_OK);
    assert_int_equal(in.windowed, 1);
    assert_int_equal(in.window_lo, 20);
    assert_int_equal(in.window_hi, 26);
    assert_int_equal(in.next, 20);
    for (uint64_t want = 20; want < 26; want++) {
        assert_int_equal(toy_sign(k, &q), DSIG_OK);
        assert_int_equal(q, want);
    }
    /* Outside the window: refused, with no range source to ask. */
    assert_int_equal(toy_sign(k, &q), DSIG_E_RANGE);
    assert_non_null(strstr(dsig_last_error_detail(), "[20, 26)"));
    assert_int_equal(dsig_state_set_window(k, 25, 30), DSIG_E_STATE);
    assert_int_equal(dsig_state_set_window(k, 30, 40), DSIG_OK);
    assert_int_equal(toy_sign(k, &q), DSIG_OK);
    assert_int_equal(q, 30);
    dsig_key_free(k);

    /* Reopen: still windowed; the remainder above the file's counter is used, nothing below it. */
    dsig_state_opts o = {.reserve = 4, .registry_dir = regdir};
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    assert_int_equal(dsig_state_query(k, &in), DSIG_OK);
    assert_int_equal(in.windowed, 1);
    assert_int_equal(in.window_lo, 30);
    assert_int_equal(in.window_hi, 40);
    assert_int_equal(in.next, 34); /* 31..33 were reserved by the previous opener: burned */
    for (uint64_t want = 34; want < 40; want++) {
        assert_int_equal(toy_sign(k, &q), DSIG_OK);
        assert_int_equal(q, want);
    }
    assert_int_equal(toy_sign(k, &q), DSIG_E_RANGE);
    /* An empty window fences the key: it stays windowed and signs nothing. */
    assert_int_equal(dsig_state_set_window(k, 50, 50), DSIG_OK);
    assert_int_equal(toy_sign(k, &q), DSIG_E_RANGE);
    dsig_key_free(k);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    assert_int_equal(toy_sign(k, &q), DSIG_E_RANGE);
    /* The window reaching the capacity: then exhausted, not "range used up". */
    assert_int_equal(dsig_state_set_window(k, 99, 100), DSIG_OK);
    assert_int_equal(toy_sign(k, &q), DSIG_OK);
    assert_int_equal(q, 99);
    assert_int_equal(toy_sign(k, &q), DSIG_E_EXHAUSTED);
    dsig_key_free(k);
}

/* A version 2 file whose counter is outside its window is refused as damaged. */
static void test_window_format(void **state)
{
    (void)state;
    char p[512];
    tpath(p, sizeof p, "f.state");
    dsig_key *k = toy_make("f.state", 100, 4);
    assert_int_equal(dsig_state_set_window(k, 10, 20), DSIG_OK);
    dsig_key_free(k);
    int fd = open(p, O_RDONLY);
    uint8_t b[4096];
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    assert_true(n > 56);
    /* counter, lo, hi are the 24 bytes before the checksum */
    uint8_t *ctr = b + n - 56;
    ctr[7] = 25; /* counter 25 > hi 20 */
    dsig_sha256(b + n - 32, b, (size_t)n - 32);
    unlink(p);
    fd = open(p, O_WRONLY | O_CREAT, 0600);
    assert_int_equal(write(fd, b, (size_t)n), n);
    close(fd);
    dsig_state_opts o = {.reserve = 4, .registry_dir = ""};
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_FORMAT);
    assert_non_null(strstr(dsig_last_error_detail(), "outside its index window"));
}

/* ---- a range source -------------------------------------------------------------------------- */

struct fake_source {
    uint64_t counter;   /* the shared counter */
    uint64_t size;
    int calls;
    int fail;           /* next answer: this code */
    int bad;            /* next answer: a range below req->next */
    uint64_t last_next;
    char last_id[64];
};

static int fake_reserve(void *ctx, const dsig_state_range_request *req, uint64_t *lo, uint64_t *hi)
{
    struct fake_source *f = ctx;
    f->calls++;
    f->last_next = req->next;
    snprintf(f->last_id, sizeof f->last_id, "%s", req->key_id);
    if (f->fail) {
        int rc = f->fail;
        f->fail = 0;
        return dsig_fail(rc, "fake coordinator says no");
    }
    if (f->bad) {
        f->bad = 0;
        *lo = req->next ? req->next - 1 : 0;
        *hi = *lo + 2;
        return DSIG_OK;
    }
    uint64_t start = f->counter > req->next ? f->counter : req->next;
    if (start >= req->capacity)
        return dsig_fail(DSIG_E_EXHAUSTED, "fake: all handed out");
    *lo = start;
    *hi = start + f->size > req->capacity ? req->capacity : start + f->size;
    f->counter = *hi;
    return DSIG_OK;
}

/* A store that fails on demand (and otherwise does nothing: the registry is off in this test). */
static int fail_persist;
static int flaky_persist(void *ctx, const dsig_state_update *u)
{
    (void)ctx;
    (void)u;
    if (fail_persist) {
        fail_persist--;
        return dsig_fail(DSIG_E_IO, "injected persist failure");
    }
    return DSIG_OK;
}

static void test_range_source(void **state)
{
    (void)state;
    struct fake_source f = {.counter = 10, .size = 5};
    dsig_state_range_source src = {fake_reserve, &f};
    char p[512];
    tpath(p, sizeof p, "src.state");
    dsig_key *k = toy_make("src.state", 40, 2);
    uint64_t q;
    assert_int_equal(toy_sign(k, &q), DSIG_OK); /* index 0; counter 2 */
    dsig_key_free(k);

    dsig_state_opts o = {.reserve = 2, .registry_dir = regdir, .ranges = &src};
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    /* With a source, a key without a window takes one before its first signature. */
    assert_int_equal(toy_sign(k, &q), DSIG_OK);
    assert_int_equal(q, 10);
    assert_int_equal(f.calls, 1);
    assert_int_equal(f.last_next, 2);
    assert_int_equal(strlen(f.last_id), 43);
    assert_int_equal(file_version(p), '2');
    for (uint64_t want = 11; want < 15; want++) {
        assert_int_equal(toy_sign(k, &q), DSIG_OK);
        assert_int_equal(q, want);
    }
    assert_int_equal(f.calls, 1);
    f.counter = 22; /* another signer took [15, 22) meanwhile */
    assert_int_equal(toy_sign(k, &q), DSIG_OK);
    assert_int_equal(q, 22);
    assert_int_equal(f.calls, 2);
    for (int i = 0; i < 4; i++)
        assert_int_equal(toy_sign(k, &q), DSIG_OK);
    /* The source's errors reach the signer, with its detail; nothing is handed out. */
    f.fail = DSIG_E_UNAVAILABLE;
    assert_int_equal(toy_sign(k, &q), DSIG_E_UNAVAILABLE);
    assert_non_null(strstr(dsig_last_error_detail(), "fake coordinator says no"));
    f.fail = DSIG_E_EXHAUSTED;
    assert_int_equal(toy_sign(k, &q), DSIG_E_EXHAUSTED);
    /* A range below the durable counter is a bug of the source: refused, never used. */
    f.bad = 1;
    assert_int_equal(toy_sign(k, &q), DSIG_E_INTERNAL);
    assert_int_equal(toy_sign(k, &q), DSIG_OK);
    assert_int_equal(q, 27);
    dsig_key_free(k);

    /* A persist that fails after the source gave a range: the next signature uses that range, the
     * source is not asked again (it would burn another one). */
    dsig_state_store store = {flaky_persist, NULL};
    dsig_state_opts o2 = {.reserve = 2, .registry_dir = "", .ranges = &src, .store = &store};
    assert_int_equal(dsig_state_open(&k, p, &o2), DSIG_OK);
    int calls = f.calls;
    for (uint64_t want = 29; want < 32; want++) { /* the rest of [27, 32) above the file's counter */
        assert_int_equal(toy_sign(k, &q), DSIG_OK);
        assert_int_equal(q, want);
    }
    assert_int_equal(f.calls, calls);
    fail_persist = 1;
    assert_int_equal(toy_sign(k, &q), DSIG_E_IO); /* got [32, 37), could not make it durable */
    assert_int_equal(f.calls, calls + 1);
    assert_int_equal(toy_sign(k, &q), DSIG_OK);
    assert_int_equal(q, 32);
    assert_int_equal(f.calls, calls + 1);
    dsig_key_free(k);
}

/* ---- the real providers: a signature after a jump ------------------------------------------------ */

static void jump_and_sign(const char *alg_name, const char *param, const uint64_t (*win)[2], size_t nwin,
                          unsigned xmss_idx_bytes)
{
    const dsig_alg *alg = dsig_alg_by_name(alg_name);
    assert_non_null(alg);
    char p[512], name[64];
    snprintf(name, sizeof name, "%s.state", alg_name);
    tpath(p, sizeof p, name);
    dsig_keygen_params kp = {.param = param};
    dsig_state_opts o = {.reserve = 3, .registry_dir = regdir};
    dsig_key *k = NULL, *pub = NULL;
    assert_int_equal(dsig_state_create(&k, p, alg, &kp, &o), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    uint8_t *sig = malloc(65536);
    size_t sl;
    assert_int_equal(dsig_sign(alg, k, "first", 5, sig, 65536, &sl), DSIG_OK);
    for (size_t w = 0; w < nwin; w++) {
        if (w == nwin / 2) { /* half of the jumps after a reopen (the provider's load at the counter) */
            dsig_key_free(k);
            assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
        }
        assert_int_equal(dsig_state_set_window(k, win[w][0], win[w][1]), DSIG_OK);
        for (uint64_t want = win[w][0]; want < win[w][1]; want++) {
            char msg[64];
            int ml = snprintf(msg, sizeof msg, "%s at %llu", alg_name, (unsigned long long)want);
            assert_int_equal(dsig_sign(alg, k, msg, (size_t)ml, sig, 65536, &sl), DSIG_OK);
            int64_t got = xmss_idx_bytes ? sigindex_xmss(sig, sl, xmss_idx_bytes) : sigindex_hss(sig, sl);
            if (got != (int64_t)want)
                fail_msg("%s: signature carries index %lld, want %llu", alg_name, (long long)got,
                         (unsigned long long)want);
            assert_int_equal(dsig_verify(alg, pub, msg, (size_t)ml, sig, sl), DSIG_OK);
            assert_int_equal(dsig_verify(alg, pub, "other", 5, sig, sl), DSIG_E_VERIFY);
        }
        int rc = dsig_sign(alg, k, "x", 1, sig, 65536, &sl);
        uint64_t cap = 0;
        assert_int_equal(dsig_state_remaining(k, &cap), DSIG_OK);
        assert_int_equal(rc, cap == 0 ? DSIG_E_EXHAUSTED : DSIG_E_RANGE);
    }
    free(sig);
    dsig_key_free(pub);
    dsig_key_free(k);
}

static void test_jump_hss(void **state)
{
    (void)state;
    /* Two levels of H5 (1024): inside the first bottom tree, across several top-level leaves (new
     * bottom trees built and signed at the jump), to the very last index. */
    static const uint64_t w[][2] = {{5, 7}, {31, 34}, {100, 102}, {700, 703}, {1021, 1024}};
    jump_and_sign("HSS-LMS", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4",
                  w, sizeof w / sizeof w[0], 0);
}

static void test_jump_xmss(void **state)
{
    (void)state;
    /* XMSS h = 10: the whole tree is stored; a jump re-positions the traversal. */
    static const uint64_t w[][2] = {{3, 5}, {600, 603}, {1022, 1024}};
    jump_and_sign("XMSS", "XMSS-SHA2_10_256", w, sizeof w / sizeof w[0], 4);
}

static void test_jump_xmssmt(void **state)
{
    (void)state;
    /* XMSS^MT 20/4 (trees of 32 leaves, 4 layers): jumps inside a bottom tree, across bottom trees,
     * across trees of every layer (the traversal is recomputed from scratch). */
    static const uint64_t w[][2] = {{4, 6}, {20, 23}, {31, 34}, {5000, 5002}, {300000, 300003},
                                    {1048574, 1048576}};
    jump_and_sign("XMSSMT", "XMSSMT-SHA2_20/4_256", w, sizeof w / sizeof w[0], 3);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-statew-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
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
        cmocka_unit_test(test_window_rules),
        cmocka_unit_test(test_window_format),
        cmocka_unit_test(test_range_source),
        cmocka_unit_test(test_jump_hss),
        cmocka_unit_test(test_jump_xmss),
        cmocka_unit_test(test_jump_xmssmt),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
