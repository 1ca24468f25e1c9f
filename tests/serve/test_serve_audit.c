/*
 * tests/serve/test_serve_audit.c — the audit log's durability contract: with the default group commit a
 * line is on disk (covered by an fdatasync that started after its write) before serve_audit_write
 * returns, i.e. before the server releases the signature it audits; concurrent writers share
 * fdatasyncs; no timer sits on the critical path; an existing log with a wider mode is tightened to
 * 0600; a symbolic link is refused.
 *
 * The hook: this executable defines fdatasync(), which the library's calls resolve to. It notes the
 * file size when the sync starts, syncs for real (raw system call), and only then publishes that size
 * as durable — so "durable" never runs ahead of what a completed sync covered.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "core/internal.h"
#include "serve/serve_internal.h"

static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static off_t durable;          /* bytes of the log covered by a completed fdatasync */
static unsigned long nsyncs;   /* fdatasync calls */

/* Test hook (interposes libc's): the size at start becomes durable once the real sync completes. */
int fdatasync(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    struct timespec ts = {0, 2 * 1000 * 1000}; /* a slow disk: writers pile up into batches */
    nanosleep(&ts, NULL);
    int rc = (int)syscall(SYS_fdatasync, fd);
    pthread_mutex_lock(&hook_mu);
    if (rc == 0 && S_ISREG(st.st_mode) && st.st_size > durable)
        durable = st.st_size;
    nsyncs++;
    pthread_mutex_unlock(&hook_mu);
    return rc;
}

/* Reset the hook's counters (a fresh log). */
static void hook_reset(void)
{
    pthread_mutex_lock(&hook_mu);
    durable = 0;
    nsyncs = 0;
    pthread_mutex_unlock(&hook_mu);
}

#define THREADS 8
#define LINES 40

struct writer {
    struct serve_audit *a;
    const char *path;
    int id;
    int failures;              /* lines returned before they were durable */
};

/* 1 if `needle` occurs in the first `len` bytes of the file. */
static int durable_prefix_has(const char *path, off_t len, const char *needle)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char *buf = malloc((size_t)len + 1);
    ssize_t got = buf ? pread(fd, buf, (size_t)len, 0) : -1;
    close(fd);
    int found = got > 0 && memmem(buf, (size_t)got, needle, strlen(needle)) != NULL;
    free(buf);
    return found;
}

/* One writer: every line, once serve_audit_write returns ("the signature is released"), must lie in
 * the part of the file a completed fdatasync covered. */
static void *writer_main(void *arg)
{
    struct writer *w = arg;
    for (int i = 0; i < LINES; i++) {
        char kid[32], needle[48];
        snprintf(kid, sizeof kid, "w%d-%d", w->id, i);
        snprintf(needle, sizeof needle, "\"kid\":\"%s\"", kid);
        struct serve_audit_rec r = {.tenant = "t", .kid = kid, .op = "sign", .method = "POST", .bytes = 1,
                                    .code = 200, .result = "ok", .peer = "127.0.0.1",
                                    .release = 1};
        if (serve_audit_write(w->a, &r) != DSIG_OK) {
            w->failures++;
            continue;
        }
        pthread_mutex_lock(&hook_mu);
        off_t d = durable;
        pthread_mutex_unlock(&hook_mu);
        if (!durable_prefix_has(w->path, d, needle))
            w->failures++;
    }
    return NULL;
}

/* A fresh temporary directory and the log path in it. */
static void tmp_log(char dir[64], char path[128])
{
    strcpy(dir, "/tmp/dsig-audit.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, 128, "%s/audit.log", dir);
}

/* Remove the log and its directory. */
static void tmp_clean(const char *dir, const char *path)
{
    unlink(path);
    rmdir(dir);
}

/* Group commit (the default): 8 concurrent writers; no line is released before it is synced, and the
 * writers share fdatasyncs (fewer syncs than lines). */
static void test_group_commit_never_releases_unsynced(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    hook_reset();
    struct serve_audit *a = NULL;
    assert_int_equal(serve_audit_open(&a, path, DSIG_APPLOG_GROUP, 200), DSIG_OK);
    pthread_t th[THREADS];
    struct writer w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct writer){.a = a, .path = path, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    uint64_t written, synced, syncs;
    serve_audit_stats(a, &written, &synced, &syncs);
    assert_int_equal(written, THREADS * LINES);
    assert_int_equal(synced, THREADS * LINES);
    pthread_mutex_lock(&hook_mu);
    unsigned long n = nsyncs;
    pthread_mutex_unlock(&hook_mu);
    /* group commit: one fdatasync serves a batch of waiting writers */
    assert_true(n >= 1 && syncs < THREADS * LINES);
    serve_audit_close(a);
    tmp_clean(dir, path);
}

/* One writer alone waits for one sync, not for a timer: interval_ms (10 s here) is not on the path. */
static void test_group_commit_no_timer(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    hook_reset();
    struct serve_audit *a = NULL;
    assert_int_equal(serve_audit_open(&a, path, DSIG_APPLOG_GROUP, 10000), DSIG_OK);
    struct serve_audit_rec r = {.op = "sign", .code = 200, .result = "ok", .release = 1};
    uint64_t t0 = serve_now_ns();
    for (int i = 0; i < 5; i++)
        assert_int_equal(serve_audit_write(a, &r), DSIG_OK);
    uint64_t dt = serve_now_ns() - t0;
    assert_true(dt < 5ull * 1000 * 1000 * 1000); /* 5 syncs of ~2 ms, nowhere near 5 × 10 s */
    pthread_mutex_lock(&hook_mu);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(durable, st.st_size);
    pthread_mutex_unlock(&hook_mu);
    serve_audit_close(a);
    tmp_clean(dir, path);
}

/* "always": the writer syncs its own line; "none": no sync at all until close. */
static void test_always_and_none(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    hook_reset();
    struct serve_audit *a = NULL;
    struct serve_audit_rec r = {.op = "sign", .code = 200, .result = "ok", .release = 1};
    assert_int_equal(serve_audit_open(&a, path, DSIG_APPLOG_ALWAYS, 0), DSIG_OK);
    assert_int_equal(serve_audit_write(a, &r), DSIG_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    pthread_mutex_lock(&hook_mu);
    assert_int_equal(durable, st.st_size);
    assert_int_equal(nsyncs, 1);
    pthread_mutex_unlock(&hook_mu);
    serve_audit_close(a);

    hook_reset();
    assert_int_equal(serve_audit_open(&a, path, DSIG_APPLOG_NONE, 0), DSIG_OK);
    assert_int_equal(serve_audit_write(a, &r), DSIG_OK);
    pthread_mutex_lock(&hook_mu);
    assert_int_equal(nsyncs, 0);
    pthread_mutex_unlock(&hook_mu);
    serve_audit_close(a); /* flushed on close */
    pthread_mutex_lock(&hook_mu);
    assert_int_equal(nsyncs, 1);
    pthread_mutex_unlock(&hook_mu);
    tmp_clean(dir, path);
}

/* An existing log readable by others is tightened to 0600 at open and at reopen; a symlink is refused. */
static void test_mode_and_symlink(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(fchmod(fd, 0644), 0);
    close(fd);
    struct serve_audit *a = NULL;
    assert_int_equal(serve_audit_open(&a, path, DSIG_APPLOG_GROUP, 0), DSIG_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(chmod(path, 0666), 0); /* rotation tooling left a wide mode */
    assert_int_equal(serve_audit_reopen(a), DSIG_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    serve_audit_close(a);

    char link[160];
    snprintf(link, sizeof link, "%s/link.log", dir);
    assert_int_equal(symlink(path, link), 0);
    a = NULL;
    assert_int_not_equal(serve_audit_open(&a, link, DSIG_APPLOG_GROUP, 0), DSIG_OK);
    assert_null(a);
    assert_non_null(strstr(dsig_last_error_detail(), "link.log"));
    unlink(link);
    tmp_clean(dir, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_commit_never_releases_unsynced),
        cmocka_unit_test(test_group_commit_no_timer),
        cmocka_unit_test(test_always_and_none),
        cmocka_unit_test(test_mode_and_symlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
