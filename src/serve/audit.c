/*
 * src/serve/audit.c — the audit log: one JSON line per request, appended with O_APPEND in one write(2)
 * (lines never interleave) and made durable with fdatasync:
 *  - "group" (the default): group commit. The writer numbers its line, wakes the syncer thread and,
 *    if a signature is released after the line (r->release), waits until an fdatasync that *started
 *    after* its write has completed; the syncer runs one fdatasync per batch of pending lines,
 *    immediately (no timer), so concurrent requests share a flush. Lines of other requests are synced
 *    by the same batches without being waited for.
 *  - "always": fdatasync after every line, by the writer, under the lock (one flush per line).
 *  - "interval": a flusher thread syncs at most every interval_ms; a crash loses that window.
 *  - "none": left to the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "serve_internal.h"

struct serve_audit {
    int fd;                    /* -1: no log; changed by reopen under mu */
    int enabled;               /* a log was opened (immutable after open: read without the lock) */
    char *path;                /* for reopen (log rotation) */
    enum serve_audit_sync sync;
    unsigned interval_ms;
    pthread_mutex_t mu;
    pthread_cond_t cv;         /* wakes the syncer/flusher */
    pthread_cond_t done;       /* wakes writers waiting for their line to be synced (group) */
    int dirty, stop, have_thread;
    uint64_t written;          /* lines written (sequence number of the last line), under mu */
    uint64_t synced;           /* every line numbered ≤ synced is on disk, under mu */
    uint64_t failed_lo, failed;/* the last failed fdatasync covered lines (failed_lo, failed], under mu */
    uint64_t syncs;            /* fdatasync calls made by the syncer (statistics / tests) */
    pthread_t thread;
};

/* @spec POSIX fdatasync: run it on a duplicate of the current descriptor outside the lock (a reopen
 * may close a->fd meanwhile); called and returns with mu held. 0 or an errno. */
static int sync_unlocked(struct serve_audit *a)
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

/* Group-commit syncer: whenever lines wait (written > synced), snapshot the last line number, sync,
 * and release every writer up to that number. Lines written during the sync wait for the next pass,
 * because the snapshot was taken before they were written. Exits on stop once nothing waits. */
static void *group_syncer(void *arg)
{
    struct serve_audit *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && a->written == a->synced)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->written == a->synced)
            break; /* stop, and no writer waits */
        uint64_t target = a->written;
        int e = sync_unlocked(a);
        a->syncs++;
        if (e == 0) {
            if (target > a->synced)
                a->synced = target;
        } else {
            a->failed_lo = a->synced;
            a->failed = target;
            /* the failed lines are not retried: their writers report the error. Mark them settled
             * so that the loop does not spin on them. */
            if (target > a->synced)
                a->synced = target;
        }
        pthread_cond_broadcast(&a->done);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Interval flusher: fdatasync what was written since the last pass, every interval_ms. */
static void *flusher(void *arg)
{
    struct serve_audit *a = arg;
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

/* Open the log file: create it 0600, tighten an existing file's wider mode to 0600, and sync the
 * directory so that the (new) entry survives a crash. Returns the descriptor or -1 (errno set). */
static int open_log(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    /* An existing log keeps its mode at open(2): tighten a wider one (refuse what is not a file
     * or cannot be tightened, e.g. owned by someone else). */
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) != 0)
        e = errno;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    /* The directory entry of a just created file is durable only once the directory is synced. */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        return fd; /* path too long for the buffer: open() accepted it, the dir sync is best effort */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd); /* best effort: some file systems refuse fsync on directories */
        close(dfd);
    }
    return fd;
}

/* Open (create, mode 0600, O_APPEND) the audit log and start its syncer thread if the mode needs one. */
int serve_audit_open(struct serve_audit **out, const char *path, enum serve_audit_sync sync, unsigned interval_ms)
{
    struct serve_audit *a = dsig_calloc(1, sizeof *a);
    if (!a)
        return dsig_fail(DSIG_E_NOMEM, "audit log: out of memory");
    a->fd = -1;
    a->sync = sync;
    a->interval_ms = interval_ms ? interval_ms : 200;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    pthread_cond_init(&a->done, NULL);
    if (path) {
        if ((a->fd = open_log(path)) < 0) {
            int e = errno;
            serve_audit_close(a);
            return dsig_fail(DSIG_E_IO, "audit log \"%s\": %s", path, strerror(e));
        }
        a->enabled = 1;
        if (!(a->path = dsig_strdup(path))) {
            serve_audit_close(a);
            return dsig_fail(DSIG_E_NOMEM, "audit log: out of memory");
        }
        if (sync == SERVE_SYNC_INTERVAL || sync == SERVE_SYNC_GROUP) {
            if (pthread_create(&a->thread, NULL, sync == SERVE_SYNC_GROUP ? group_syncer : flusher, a) != 0) {
                serve_audit_close(a);
                return dsig_fail(DSIG_E_INTERNAL, "audit log: cannot start the syncer thread");
            }
            a->have_thread = 1;
        }
    }
    *out = a;
    return DSIG_OK;
}

/* Append one line (see the file comment for durability). */
int serve_audit_write(struct serve_audit *a, const struct serve_audit_rec *r)
{
    if (!a || !a->enabled)
        return DSIG_OK;
    char line[768], ts[40], hex[65] = "-";
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    if (r->digest) {
        static const char hx[] = "0123456789abcdef";
        for (int i = 0; i < 32; i++) {
            hex[2 * i] = hx[r->digest[i] >> 4];
            hex[2 * i + 1] = hx[r->digest[i] & 15];
        }
        hex[64] = '\0';
    }
    /* Every string here is from a fixed set or validated ([A-Za-z0-9._-], numeric addresses): no
     * JSON escaping is needed. */
    int n = snprintf(line, sizeof line,
                     "{\"time\":\"%s.%03ldZ\",\"tenant\":\"%s\",\"kid\":\"%s\",\"op\":\"%s\",\"method\":\"%s\","
                     "\"bytes\":%llu,\"%s\":\"%s\",\"code\":%u,\"result\":\"%s\",\"duration_ms\":%.3f,"
                     "\"peer\":\"%s\"}\n",
                     ts, now.tv_nsec / 1000000L, r->tenant ? r->tenant : "-", r->kid ? r->kid : "-", r->op,
                     r->method ? r->method : "-", (unsigned long long)r->bytes,
                     r->digest_name ? r->digest_name : "sha256", hex, r->code, r->result,
                     (double)r->duration_ns * 1e-6, r->peer ? r->peer : "-");
    if (n < 0 || (size_t)n >= sizeof line)
        return dsig_fail(DSIG_E_INTERNAL, "audit log: line too long");
    pthread_mutex_lock(&a->mu);
    ssize_t w;
    do
        w = write(a->fd, line, (size_t)n);
    while (w < 0 && errno == EINTR);
    int rc = w == n ? DSIG_OK : dsig_fail(DSIG_E_IO, "audit log: write failed: %s", w < 0 ? strerror(errno) : "short");
    if (rc == DSIG_OK) {
        switch (a->sync) {
        case SERVE_SYNC_ALWAYS:
            if (fdatasync(a->fd) != 0)
                rc = dsig_fail(DSIG_E_IO, "audit log: fdatasync failed: %s", strerror(errno));
            break;
        case SERVE_SYNC_GROUP: {
            /* Number the line under the same lock as its write: the syncer's snapshot of `written`
             * is taken under it too, so a sync covering `seq` started after this write. */
            uint64_t seq = ++a->written;
            pthread_cond_signal(&a->cv);
            if (!r->release)
                break; /* nothing leaves on this line: synced by the next batch, not waited for */
            while (a->synced < seq)
                pthread_cond_wait(&a->done, &a->mu);
            if (seq > a->failed_lo && seq <= a->failed)
                rc = dsig_fail(DSIG_E_IO, "audit log: fdatasync failed (line not durable)");
            break;
        }
        case SERVE_SYNC_INTERVAL:
            a->dirty = 1;
            break;
        case SERVE_SYNC_NONE:
            break;
        }
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* Reopen the log at its path (after a rotation renamed it): the old descriptor is synced and closed
 * once no line is being written; on failure the old file stays in use. */
int serve_audit_reopen(struct serve_audit *a)
{
    if (!a || !a->enabled)
        return DSIG_OK;
    int fd = open_log(a->path);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "audit log \"%s\": %s", a->path, strerror(errno));
    pthread_mutex_lock(&a->mu);
    int old = a->fd;
    a->fd = fd;
    /* Under the lock: lines numbered up to `written` all went to `old`; the syncer (which syncs a
     * dup) may still be syncing `old` for an earlier snapshot, which stays correct. */
    if (fdatasync(old) == 0 && a->sync == SERVE_SYNC_GROUP && a->written > a->synced) {
        a->synced = a->written;
        pthread_cond_broadcast(&a->done);
    }
    close(old);
    pthread_mutex_unlock(&a->mu);
    return DSIG_OK;
}

/* Statistics for tests and metrics: lines written and synced (group mode) and syncer fdatasyncs. */
void serve_audit_stats(struct serve_audit *a, uint64_t *written, uint64_t *synced, uint64_t *syncs)
{
    pthread_mutex_lock(&a->mu);
    *written = a->written;
    *synced = a->synced;
    *syncs = a->syncs;
    pthread_mutex_unlock(&a->mu);
}

/* Stop the syncer (after it has released every waiting writer), sync and close. */
void serve_audit_close(struct serve_audit *a)
{
    if (!a)
        return;
    if (a->have_thread) {
        pthread_mutex_lock(&a->mu);
        a->stop = 1;
        pthread_cond_signal(&a->cv);
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
