/*
 * State-file layer (src/core/statefile.c) with the test-only stateful scheme of toy.c: create (O_EXCL,
 * 0600), open and lock (same process, other process, two copies of one key), index windows,
 * exhaustion, rollback refusal through the high-water registry, torn and edited files, permissions,
 * symlinks, forks, threads, keys without a state file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hash/sha256.h"
#include "testutil.h"
#include "toy.h"

static char dir[256];      /* per-run temporary directory */
static char regdir[300];   /* its high-water registry */

/* Path of a file in the temporary directory. */
static const char *tpath(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

/* Read a whole file (malloc'ed). */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Replace a file's bytes (mode 0600). */
static void spit(const char *path, const uint8_t *b, size_t len)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, len), (ssize_t)len);
    close(fd);
}

/* Counter field of a state file image (8 bytes before the 32-byte checksum). */
static uint64_t image_counter(const uint8_t *b, size_t len)
{
    uint64_t v = 0;
    for (size_t i = len - 40; i < len - 32; i++)
        v = v << 8 | b[i];
    return v;
}

/* Set the counter of an image and fix its checksum (simulates a legitimate newer file). */
static void image_set_counter(uint8_t *b, size_t len, uint64_t c)
{
    for (int i = 7; i >= 0; i--, c >>= 8)
        b[len - 40 + (size_t)i] = (uint8_t)c;
    dsig_sha256(b + len - 32, b, len - 32);
}

static dsig_state_opts opts_reserve(uint32_t reserve)
{
    dsig_state_opts o = {.reserve = reserve, .registry_dir = regdir};
    return o;
}

/* Sign a short message; returns the status and the index used. */
static int sign_one(const dsig_key *key, uint64_t *q)
{
    uint8_t sig[TOY_SIG_LEN];
    size_t len = 0;
    int rc = dsig_sign(&toy_alg, key, "msg", 3, sig, sizeof sig, &len);
    if (rc == DSIG_OK) {
        assert_int_equal(len, TOY_SIG_LEN);
        *q = toy_sig_index(sig);
        assert_int_equal(dsig_verify(&toy_alg, key, "msg", 3, sig, len), DSIG_OK);
    }
    return rc;
}

/* A new key with capacity `cap` in state file `name`. */
static dsig_key *make(const char *name, unsigned cap, uint32_t reserve)
{
    char p[512];
    dsig_key *k = NULL;
    dsig_keygen_params kp = {.bits = cap};
    dsig_state_opts o = opts_reserve(reserve);
    assert_int_equal(dsig_state_create(&k, tpath(p, sizeof p, name), &toy_alg, &kp, &o), DSIG_OK);
    return k;
}

static void test_create_sign_reopen(void **state)
{
    (void)state;
    char p[512];
    dsig_key *k = make("a.state", 10, 4);
    struct stat sb;
    assert_int_equal(stat(tpath(p, sizeof p, "a.state"), &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(dsig_state_is_state_file(p), 1);
    uint64_t rem, q;
    assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
    assert_int_equal(rem, 10);
    size_t len;
    uint8_t *img = slurp(p, &len);
    assert_int_equal(image_counter(img, len), 0); /* nothing reserved yet */
    free(img);
    for (uint64_t i = 0; i < 3; i++) {
        assert_int_equal(sign_one(k, &q), DSIG_OK);
        assert_int_equal(q, i);
    }
    img = slurp(p, &len);
    assert_int_equal(image_counter(img, len), 4); /* one window of 4 reserved durably */
    free(img);
    assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
    assert_int_equal(rem, 7);
    dsig_key_free(k);
    /* Reopen: the rest of the window (index 3) is lost by design; signing continues at 4. */
    dsig_state_opts o = opts_reserve(4);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
    assert_int_equal(rem, 6);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 4);
    assert_ptr_equal(dsig_key_alg(k), &toy_alg);
    assert_int_equal(dsig_key_has_private(k), 1);
    /* A public copy verifies but never signs. */
    dsig_key *pub = NULL;
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    assert_int_not_equal(sign_one(pub, &q), DSIG_OK);
    dsig_key_free(pub);
    dsig_key_free(k);
}

static void test_o_excl(void **state)
{
    (void)state;
    char p[512];
    tpath(p, sizeof p, "exists.state");
    spit(p, (const uint8_t *)"precious", 8);
    dsig_key *k = NULL;
    dsig_state_opts o = opts_reserve(0);
    assert_int_equal(dsig_state_create(&k, p, &toy_alg, NULL, &o), DSIG_E_IO);
    assert_null(k);
    assert_non_null(strstr(dsig_last_error_detail(), "already exists"));
    size_t len;
    uint8_t *b = slurp(p, &len);
    assert_int_equal(len, 8);
    assert_memory_equal(b, "precious", 8);
    free(b);
    /* A symbolic link is not followed either. */
    char l[512];
    assert_int_equal(symlink("nowhere.state", tpath(l, sizeof l, "link.state")), 0);
    assert_int_equal(dsig_state_create(&k, l, &toy_alg, NULL, &o), DSIG_E_IO);
    assert_int_equal(access(tpath(p, sizeof p, "nowhere.state"), F_OK), -1);
    /* Non-stateful algorithms have no state file. */
    assert_int_equal(dsig_state_create(&k, tpath(p, sizeof p, "ed.state"), dsig_alg_by_name("Ed25519"),
                                       NULL, &o),
                     DSIG_E_UNSUPPORTED);
    assert_int_equal(access(p, F_OK), -1);
}

static void test_lock(void **state)
{
    (void)state;
    char p[512];
    dsig_key *k = make("lock.state", 100, 8), *k2 = NULL;
    dsig_state_opts o = opts_reserve(8);
    tpath(p, sizeof p, "lock.state");
    /* A second open in this process: flock on a new descriptor conflicts. */
    assert_int_equal(dsig_state_open(&k2, p, &o), DSIG_E_STATE);
    assert_null(k2);
    assert_non_null(strstr(dsig_last_error_detail(), "in use"));
    /* Still refused after the file was renamed over by a reservation. */
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(dsig_state_open(&k2, p, &o), DSIG_E_STATE);
    /* Another process. */
    pid_t pid = fork();
    if (pid == 0) {
        dsig_key *c = NULL;
        int rc = dsig_state_open(&c, p, &o);
        _exit(rc == DSIG_E_STATE ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* A forked child inherits the lock but must not sign with the parent's window. */
    pid = fork();
    if (pid == 0) {
        uint64_t cq;
        _exit(dsig_state_take_index(k, &cq) == DSIG_E_STATE ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    dsig_key_free(k);
    /* Free releases the lock. */
    assert_int_equal(dsig_state_open(&k2, p, &o), DSIG_OK);
    dsig_key_free(k2);
}

static void test_two_copies(void **state)
{
    (void)state;
    char p[512], c[512];
    dsig_key *k = make("orig.state", 100, 8), *k2 = NULL;
    dsig_key_free(k);
    size_t len;
    uint8_t *b = slurp(tpath(p, sizeof p, "orig.state"), &len);
    spit(tpath(c, sizeof c, "copy.state"), b, len);
    free(b);
    dsig_state_opts o = opts_reserve(8);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    /* Same key, other file: the registry lock refuses it. */
    assert_int_equal(dsig_state_open(&k2, c, &o), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "another state file"));
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    dsig_key_free(k);
    /* The copy is now older than the high-water mark: refused. */
    assert_int_equal(dsig_state_open(&k2, c, &o), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "high-water"));
}

static void test_exhaustion(void **state)
{
    (void)state;
    char p[512];
    dsig_key *k = make("ex.state", 5, 3);
    uint64_t q, rem;
    for (uint64_t i = 0; i < 5; i++) {
        assert_int_equal(sign_one(k, &q), DSIG_OK);
        assert_int_equal(q, i);
    }
    assert_int_equal(sign_one(k, &q), DSIG_E_EXHAUSTED);
    assert_non_null(strstr(dsig_last_error_detail(), "all its 5 signatures"));
    assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
    assert_int_equal(rem, 0);
    dsig_key_free(k);
    size_t len;
    uint8_t *b = slurp(tpath(p, sizeof p, "ex.state"), &len);
    assert_int_equal(image_counter(b, len), 5); /* last window clipped to the capacity */
    free(b);
    dsig_state_opts o = opts_reserve(3);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    assert_int_equal(dsig_state_remaining(k, &rem), DSIG_OK);
    assert_int_equal(rem, 0);
    assert_int_equal(sign_one(k, &q), DSIG_E_EXHAUSTED);
    dsig_key_free(k);
}

static void test_rollback(void **state)
{
    (void)state;
    char p[512];
    dsig_key *k = make("rb.state", 100, 2);
    tpath(p, sizeof p, "rb.state");
    size_t len;
    uint8_t *backup = slurp(p, &len); /* counter 0 */
    uint64_t q;
    for (int i = 0; i < 3; i++)
        assert_int_equal(sign_one(k, &q), DSIG_OK);
    dsig_key_free(k);
    spit(p, backup, len); /* restore the backup */
    dsig_state_opts o = opts_reserve(2);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_STATE);
    assert_null(k);
    assert_non_null(strstr(dsig_last_error_detail(), "older than"));
    /* Without a registry (tests only) the restored copy cannot be detected. */
    dsig_state_opts none = {.reserve = 2, .registry_dir = ""};
    assert_int_equal(dsig_state_open(&k, p, &none), DSIG_OK);
    dsig_key_free(k);
    /* Crash between the state file rename and the registry write: the state file is ahead of the
     * registry. That is safe (no index above the registry mark was handed out) and must open. */
    image_set_counter(backup, len, 40);
    spit(p, backup, len);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 40);
    dsig_key_free(k);
    /* ... and the registry then follows: counter 41 < mark 42 after another restore is refused. */
    image_set_counter(backup, len, 41);
    spit(p, backup, len);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_STATE);
    free(backup);
}

/* The registry file of the only key in a fresh registry directory. */
static void registry_file(const char *rdir, char *out, size_t cap)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s", rdir);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char name[128] = "";
    assert_non_null(fgets(name, sizeof name, f));
    pclose(f);
    name[strcspn(name, "\n")] = '\0';
    snprintf(out, cap, "%s/%s", rdir, name);
}

static void test_registry_slots(void **state)
{
    (void)state;
    char p[512], rd[512], rf[700];
    snprintf(rd, sizeof rd, "%s/reg2", dir);
    dsig_state_opts o = {.reserve = 5, .registry_dir = rd};
    dsig_key *k = NULL;
    dsig_keygen_params kp = {.bits = 100};
    assert_int_equal(dsig_state_create(&k, tpath(p, sizeof p, "slots.state"), &toy_alg, &kp, &o), DSIG_OK);
    uint64_t q;
    for (int i = 0; i < 6; i++) /* two reservations: marks 5 and 10 in the two slots */
        assert_int_equal(sign_one(k, &q), DSIG_OK);
    dsig_key_free(k);
    registry_file(rd, rf, sizeof rf);
    size_t len;
    uint8_t *r = slurp(rf, &len);
    assert_int_equal(len, 64);
    /* A torn slot: the other one still holds a valid mark. */
    uint8_t *t = malloc(len);
    memcpy(t, r, len);
    t[0] ^= 1;
    spit(rf, t, len);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    dsig_key_free(k);
    memcpy(t, r, len);
    t[40] ^= 1;
    spit(rf, t, len);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    dsig_key_free(k);
    /* Both slots damaged, or a wrong size: refused, never guessed. */
    t[0] ^= 1;
    spit(rf, t, len);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_STATE);
    spit(rf, r, 40);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_STATE);
    spit(rf, r, len);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    dsig_key_free(k);
    free(t);
    free(r);
}

static void test_torn_and_edited(void **state)
{
    (void)state;
    char p[512];
    dsig_key *k = make("torn.state", 100, 4);
    dsig_key_free(k);
    tpath(p, sizeof p, "torn.state");
    size_t len;
    uint8_t *good = slurp(p, &len);
    dsig_state_opts o = {.reserve = 4, .registry_dir = ""};
    for (size_t cut = 0; cut < len; cut++) { /* every torn length */
        spit(p, good, cut);
        assert_int_not_equal(dsig_state_open(&k, p, &o), DSIG_OK);
        assert_null(k);
    }
    for (size_t i = 0; i < len; i++) { /* every single-byte edit */
        good[i] ^= 0x20;
        spit(p, good, len);
        int rc = dsig_state_open(&k, p, &o);
        assert_true(rc == DSIG_E_FORMAT || rc == DSIG_E_UNSUPPORTED);
        good[i] ^= 0x20;
    }
    spit(p, good, len);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    dsig_key_free(k);
    /* Trailing garbage. */
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, good, len);
    longer[len] = 0;
    spit(p, longer, len + 1);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_FORMAT);
    free(longer);
    /* Another format version. */
    good[11] = '9';
    spit(p, good, len);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_UNSUPPORTED);
    assert_int_equal(dsig_state_is_state_file(p), 1);
    free(good);
    assert_int_equal(dsig_state_is_state_file("/nonexistent/x"), 0);
    assert_int_equal(dsig_state_is_state_file(dir), 0);
}

static void test_permissions_and_links(void **state)
{
    (void)state;
    char p[512], l[512];
    dsig_key *k = make("perm.state", 100, 4);
    dsig_key_free(k);
    tpath(p, sizeof p, "perm.state");
    dsig_state_opts o = opts_reserve(4);
    assert_int_equal(chmod(p, 0644), 0);
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "chmod 600"));
    assert_int_equal(chmod(p, 0600), 0);
    assert_int_equal(symlink("perm.state", tpath(l, sizeof l, "perm-link.state")), 0);
    assert_int_equal(dsig_state_open(&k, l, &o), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "symbolic link"));
    assert_int_equal(dsig_state_open(&k, tpath(l, sizeof l, "missing.state"), &o), DSIG_E_IO);
    assert_int_not_equal(dsig_state_open(&k, dir, &o), DSIG_OK);
    assert_null(k);
    /* Renames keep mode 0600. */
    assert_int_equal(dsig_state_open(&k, p, &o), DSIG_OK);
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    dsig_key_free(k);
}

static void test_memory_key_never_signs(void **state)
{
    (void)state;
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, &toy_alg, NULL), DSIG_OK);
    uint64_t q, rem;
    assert_int_equal(sign_one(k, &q), DSIG_E_STATE);
    assert_non_null(strstr(dsig_last_error_detail(), "state file"));
    assert_int_equal(dsig_state_remaining(k, &rem), DSIG_E_STATE);
    assert_int_equal(dsig_state_take_index(k, &q), DSIG_E_STATE);
    dsig_key_free(k);
    /* A param on an algorithm without parameter sets is refused. */
    dsig_keygen_params kp = {.param = "X"};
    assert_int_equal(dsig_key_generate(&k, &toy_alg, &kp), DSIG_E_UNSUPPORTED);
}

static void test_same_seed_continues(void **state)
{
    (void)state;
    char p[512];
    uint8_t seed[32];
    memset(seed, 7, sizeof seed);
    dsig_keygen_params kp = {.bits = 50, .seed = seed, .seed_len = sizeof seed};
    dsig_state_opts o = opts_reserve(10);
    dsig_key *k = NULL;
    assert_int_equal(dsig_state_create(&k, tpath(p, sizeof p, "seed1.state"), &toy_alg, &kp, &o), DSIG_OK);
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    dsig_key_free(k);
    /* The same key made again continues after the registry's mark instead of reusing index 0. */
    assert_int_equal(dsig_state_create(&k, tpath(p, sizeof p, "seed2.state"), &toy_alg, &kp, &o), DSIG_OK);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 10);
    dsig_key_free(k);
}

#define THREADS 4
#define PER_THREAD 200
static uint64_t seen[THREADS * PER_THREAD];

struct worker {
    dsig_key *key;
    int id;
};

/* Take PER_THREAD indices through full signatures. */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        uint8_t sig[TOY_SIG_LEN];
        size_t len;
        if (dsig_sign(&toy_alg, w->key, "m", 1, sig, sizeof sig, &len) != DSIG_OK)
            return (void *)1;
        seen[w->id * PER_THREAD + i] = toy_sig_index(sig);
    }
    return NULL;
}

/* Sort helper. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_threads(void **state)
{
    (void)state;
    dsig_key *k = make("threads.state", 1000, 7);
    pthread_t t[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){k, i};
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
    qsort(seen, THREADS * PER_THREAD, sizeof seen[0], cmp_u64);
    for (size_t i = 0; i < THREADS * PER_THREAD; i++)
        assert_int_equal(seen[i], i); /* every index once, none skipped within one process */
    dsig_key_free(k);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-state-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
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
        cmocka_unit_test(test_create_sign_reopen),
        cmocka_unit_test(test_o_excl),
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_two_copies),
        cmocka_unit_test(test_exhaustion),
        cmocka_unit_test(test_rollback),
        cmocka_unit_test(test_registry_slots),
        cmocka_unit_test(test_torn_and_edited),
        cmocka_unit_test(test_permissions_and_links),
        cmocka_unit_test(test_memory_key_never_signs),
        cmocka_unit_test(test_same_seed_continues),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
