/*
 * tests/apps/test_apps_durable.c — nothing is executed before its log record is durable. This executable
 * defines fdatasync() (the library's calls resolve to it): it notes the log's size when each sync
 * completes, and can be told to fail. With syncs working, every executed request's record lies in the
 * synced part of the log when the reply arrives; concurrent clients share syncs (group commit). With a
 * failing sync, the request is logged but neither executed nor answered with a signed reply, and the
 * server refuses everything after it (the page cache may have lost what the log holds).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "apps_fixture.h"

static atomic_int fail_syncs;
static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static off_t synced_size;
static unsigned long nsyncs;

/* Test hook (interposes libc's): fail on demand, else sync for real and publish the size covered. */
int fdatasync(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    if (atomic_load(&fail_syncs)) {
        errno = EIO;
        return -1;
    }
    int rc = (int)syscall(SYS_fdatasync, fd);
    pthread_mutex_lock(&hook_mu);
    if (rc == 0 && S_ISREG(st.st_mode) && st.st_size > synced_size)
        synced_size = st.st_size;
    nsyncs++;
    pthread_mutex_unlock(&hook_mu);
    return rc;
}

/* A record of this test: header, request (header + book body), Ed25519 signature, chain. */
#define REC_BYTES (APPS_REC_HDR + APPS_MSG_HDR + APPS_BOOK_BODY + 64 + 32)

struct worker {
    struct fx *f;
    uint64_t id;
    int bad;
};

/* Each reply: the synced part of the log already holds the request's record. */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    apps_client *c = fx_client(w->f, w->id);
    for (int i = 0; i < 40; i++) {
        apps_reply r;
        if (fx_order(c, APPS_BOOK_BUY, 1800 + (uint32_t)i, 1, 0, &r) != DSIG_OK) {
            w->bad++;
            continue;
        }
        /* every record here has the same size, so entry r.index ends at r.index * REC_BYTES */
        pthread_mutex_lock(&hook_mu);
        off_t s = synced_size;
        pthread_mutex_unlock(&hook_mu);
        if (s < (off_t)r.index * REC_BYTES)
            w->bad++;
    }
    apps_client_close(c);
    return NULL;
}

static void test_executed_only_when_durable(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, APPS_SCHEME_SIG);
    assert_int_equal(fx_start(&f), DSIG_OK);
    pthread_t th[2];
    struct worker w[2] = {{&f, 1, 0}, {&f, 2, 0}};
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].bad, 0);
    }
    apps_server_stats st = fx_stats(&f);
    assert_int_equal(st.entries, 80);
    /* every executed entry was covered by a completed sync: the synced size is the whole log */
    struct stat ls;
    assert_int_equal(stat(f.log, &ls), 0);
    pthread_mutex_lock(&hook_mu);
    assert_int_equal(synced_size, ls.st_size);
    assert_true(nsyncs >= 1);
    pthread_mutex_unlock(&hook_mu);

    /* a failing fdatasync: the request is not executed, no signed reply, and the server stops accepting */
    apps_client *c = fx_client(&f, 1);
    uint64_t executed = fx_stats(&f).executed;
    atomic_store(&fail_syncs, 1);
    apps_reply r;
    int rc = fx_order(c, APPS_BOOK_SELL, 1700, 5, 0, &r);
    assert_int_equal(rc, DSIG_E_IO);
    assert_non_null(strstr(dsig_last_error_detail(), "log failed"));
    assert_int_equal(fx_stats(&f).executed, executed);
    atomic_store(&fail_syncs, 0);
    rc = fx_order(c, APPS_BOOK_SELL, 1700, 5, 0, &r);
    assert_int_equal(rc, DSIG_E_IO); /* still refused: the log is failed */
    assert_int_equal(fx_stats(&f).executed, executed);
    apps_client_close(c);
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_executed_only_when_durable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
