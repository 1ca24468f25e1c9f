/*
 * src/core/applog.c — the append-only durable log of src/core/applog.h: one write(2) per record under a
 * mutex, tickets in file order, and four ways of making records durable (group commit, every record,
 * an interval flusher, none).
 *
 * Group commit is leader-based: a waiter whose record is not yet covered runs the fdatasync itself when
 * none is running (snapshotting `written` first, so the sync covers every record written before it
 * started), or waits for the running one to finish and looks again. A lone writer therefore pays one
 * fdatasync and no thread wake-up; N concurrent writers pay about two syncs between them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/applog.h"
#include "core/internal.h"
#include "core/durable.h"
#include "core/layer_api.h"

struct dsig_applog {
    int fd;                    /* changed by reopen under mu */
    char *path;                /* for reopen (log rotation) */
    char what[32];             /* names the log in error details ("audit log") */
    enum dsig_applog_sync sync;
    unsigned interval_ms;
    pthread_mutex_t mu;
    pthread_cond_t cv;         /* wakes the interval flusher */
    pthread_cond_t done;       /* a group-commit sync finished */
    int dirty, stop, have_thread;
    int kicked;                /* GROUP: a record nobody waits for asks the background syncer */
    int syncing;               /* a group-commit leader is in fdatasync */
    int failed;                /* an fdatasync or write failed: nothing after `synced` is durable */
    uint64_t fail_lo, fail_hi; /* records [fail_lo, fail_hi] were lost to a failure (fail_lo 0: none);
                                  fail_hi is UINT64_MAX until a reopen closes the failed file. Once
                                  a range is recorded it only grows: a waiter may be told "not durable"
                                  for a record that was, never the reverse. */
    uint64_t written;          /* records written (ticket of the last one), under mu */
    uint64_t synced;           /* every record numbered <= synced is on disk, under mu */
    uint64_t syncs;            /* fdatasync calls (statistics / tests) */
    pthread_t thread;
};

/* @spec POSIX fdatasync: run it on a duplicate of the current descriptor outside the lock (a reopen
 * may close a->fd meanwhile); called and returns with mu held. 0 or an errno. */
static int sync_unlocked(struct dsig_applog *a)
{
    int fd = dup(a->fd);
    pthread_mutex_unlock(&a->mu);
    int e = 0;
    if (fd < 0) {
        e = errno;
    } else {
        if (fdatasync(fd) != 0)
            e = errno;
        close(fd);
    }
    pthread_mutex_lock(&a->mu);
    return e;
}

/* Record a failure of the current file (mu held): every record not yet known durable is lost. */
static void mark_failed(struct dsig_applog *a)
{
    a->failed = 1;
    if (!a->fail_lo)
        a->fail_lo = a->synced + 1;
    a->fail_hi = UINT64_MAX;
}

/* 1 if record `t` was lost to a failure (mu held). */
static int lost(const struct dsig_applog *a, uint64_t t)
{
    return a->fail_lo && t >= a->fail_lo && t <= a->fail_hi;
}

/* Interval flusher: fdatasync what was written since the last pass, every interval_ms. */
static void *flusher(void *arg)
{
    struct dsig_applog *a = arg;
    pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(a->interval_ms % 1000) * 1000000L;
        ts.tv_sec += a->interval_ms / 1000 + ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&a->cv, &a->mu, &ts);
        if (a->dirty) {
            a->dirty = 0;
            (void)sync_unlocked(a);
            a->syncs++;
        }
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static void group_commit(struct dsig_applog *a, uint64_t ticket);

/* GROUP mode's background syncer: records that nobody waits for (dsig_applog_kick) are synced by the
 * same leader protocol as the waiters', as soon as possible. Exits on stop. */
static void *group_syncer(void *arg)
{
    struct dsig_applog *a = arg;
    pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        if (!a->kicked) {
            pthread_cond_wait(&a->cv, &a->mu);
            continue;
        }
        a->kicked = 0;
        group_commit(a, a->written);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

void dsig_applog_kick(dsig_applog *a)
{
    if (a->sync != DSIG_APPLOG_GROUP)
        return;
    pthread_mutex_lock(&a->mu);
    a->kicked = 1;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* Open the log file (see applog.h). */
DSIG_LAYER_API int dsig_applog_open_file(const char *path, struct stat *out)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    /* An existing log keeps its mode at open(2): tighten a wider one (refuse what is not a file
     * or cannot be tightened, e.g. owned by someone else). */
    struct stat st;
    int e = 0;
    if (!out)
        out = &st;
    if (fstat(fd, out) != 0)
        e = errno;
    else if (!S_ISREG(out->st_mode))
        e = EINVAL;
    else if ((out->st_mode & 07777) != 0600 && fchmod(fd, 0600) != 0)
        e = errno;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    /* The directory entry of a just created file is durable only once the directory is synced; best
     * effort: some file systems refuse fsync on directories. */
    (void)dsig_durable_sync_parent(path);
    return fd;
}

int dsig_applog_open(dsig_applog **out, const char *what, const char *path, enum dsig_applog_sync sync,
                     unsigned interval_ms)
{
    *out = NULL;
    struct dsig_applog *a = dsig_calloc(1, sizeof *a);
    if (!a)
        return dsig_fail(DSIG_E_NOMEM, "%s: out of memory", what);
    snprintf(a->what, sizeof a->what, "%s", what);
    a->fd = -1;
    a->sync = sync;
    a->interval_ms = interval_ms ? interval_ms : 200;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    pthread_cond_init(&a->done, NULL);
    if ((a->fd = dsig_applog_open_file(path, NULL)) < 0) {
        int e = errno;
        dsig_applog_close(a);
        return dsig_fail(DSIG_E_IO, "%s \"%s\": %s", what, path, strerror(e));
    }
    if (!(a->path = dsig_strdup(path))) {
        dsig_applog_close(a);
        return dsig_fail(DSIG_E_NOMEM, "%s: out of memory", what);
    }
    if (sync == DSIG_APPLOG_INTERVAL || sync == DSIG_APPLOG_GROUP) {
        if (pthread_create(&a->thread, NULL, sync == DSIG_APPLOG_GROUP ? group_syncer : flusher, a) != 0) {
            dsig_applog_close(a);
            return dsig_fail(DSIG_E_INTERNAL, "%s: cannot start the syncer thread", what);
        }
        a->have_thread = 1;
    }
    *out = a;
    return DSIG_OK;
}

int dsig_applog_append(dsig_applog *a, const struct iovec *iov, int n, uint64_t *ticket)
{
    if (n < 1 || n > IOV_MAX)
        return dsig_fail(DSIG_E_ARG, "%s: 1..%d pieces per record", a->what, IOV_MAX);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    pthread_mutex_lock(&a->mu);
    if (a->failed) {
        pthread_mutex_unlock(&a->mu);
        return dsig_fail(DSIG_E_IO, "%s \"%s\": an earlier write or fdatasync failed; nothing more is written", a->what, a->path);
    }
    ssize_t w;
    do
        w = writev(a->fd, iov, n);
    while (w < 0 && errno == EINTR);
    int rc = DSIG_OK;
    if (w < 0 || (size_t)w != total) {
        /* A short write leaves a torn record at the end: no later record may follow it. */
        mark_failed(a);
        rc = dsig_fail(DSIG_E_IO, "%s \"%s\": write failed: %s", a->what, a->path, w < 0 ? strerror(errno) : "short write");
    } else {
        uint64_t seq = ++a->written;
        if (ticket)
            *ticket = seq;
        if (a->sync == DSIG_APPLOG_ALWAYS) {
            if (fdatasync(a->fd) != 0) {
                mark_failed(a);
                rc = dsig_fail(DSIG_E_IO, "%s \"%s\": fdatasync failed: %s", a->what, a->path, strerror(errno));
            } else {
                a->synced = seq;
            }
        } else if (a->sync == DSIG_APPLOG_INTERVAL) {
            a->dirty = 1;
        }
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* Group commit (mu held): until record `ticket` is synced (or the log failed), lead an fdatasync when
 * none runs, else wait for the running one. */
static void group_commit(struct dsig_applog *a, uint64_t ticket)
{
    while (a->synced < ticket && !a->failed && !lost(a, ticket)) {
        if (a->syncing) {
            pthread_cond_wait(&a->done, &a->mu);
            continue;
        }
        /* Leader: the snapshot is taken under the lock every write holds, so this sync started after
         * the write of every record numbered <= target. */
        a->syncing = 1;
        uint64_t target = a->written;
        int e = sync_unlocked(a);
        a->syncs++;
        a->syncing = 0;
        if (e == 0) {
            if (target > a->synced)
                a->synced = target;
        } else {
            mark_failed(a);
        }
        pthread_cond_broadcast(&a->done);
    }
}

int dsig_applog_wait(dsig_applog *a, uint64_t ticket)
{
    if (a->sync != DSIG_APPLOG_GROUP && a->sync != DSIG_APPLOG_ALWAYS)
        return DSIG_OK;
    pthread_mutex_lock(&a->mu);
    group_commit(a, ticket);
    int rc = a->synced >= ticket && !lost(a, ticket)
                 ? DSIG_OK
                 : dsig_fail(DSIG_E_IO, "%s \"%s\": fdatasync failed (record not durable)", a->what, a->path);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int dsig_applog_reopen(dsig_applog *a)
{
    int fd = dsig_applog_open_file(a->path, NULL);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "%s \"%s\": %s", a->what, a->path, strerror(errno));
    pthread_mutex_lock(&a->mu);
    while (a->syncing) /* a leader syncs a dup of the old descriptor: let it finish first */
        pthread_cond_wait(&a->done, &a->mu);
    int old = a->fd;
    a->fd = fd;
    /* Under the lock: records numbered up to `written` all went to `old`. Unless that file failed,
     * one last sync makes them durable; if it failed, they stay lost and the new file starts clean. */
    if (!a->failed && fdatasync(old) != 0)
        mark_failed(a);
    if (a->failed)
        a->fail_hi = a->written;
    a->failed = 0;
    a->synced = a->written;
    pthread_cond_broadcast(&a->done);
    close(old);
    pthread_mutex_unlock(&a->mu);
    return DSIG_OK;
}

void dsig_applog_stats(dsig_applog *a, uint64_t *written, uint64_t *synced, uint64_t *syncs)
{
    pthread_mutex_lock(&a->mu);
    *written = a->written;
    *synced = a->synced;
    *syncs = a->syncs;
    pthread_mutex_unlock(&a->mu);
}

void dsig_applog_close(dsig_applog *a)
{
    if (!a)
        return;
    if (a->have_thread) {
        pthread_mutex_lock(&a->mu);
        a->stop = 1;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->thread, NULL);
    }
    if (a->fd >= 0) {
        (void)fdatasync(a->fd);
        close(a->fd);
    }
    pthread_cond_destroy(&a->done);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    dsig_xfree(a->path, 0);
    dsig_xfree(a, 0);
}
