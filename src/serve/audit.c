/*
 * src/serve/audit.c — the audit log: one JSON line per request, appended with O_APPEND in one write(2)
 * (lines never interleave) and made durable with fdatasync: after every line ("always"), or by a
 * flusher thread at most every interval_ms when lines were written ("interval", the default: group
 * commit; a crash loses at most that window), or left to the kernel ("none").
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
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
    pthread_cond_t cv;
    int dirty, stop, have_thread;
    pthread_t thread;
};

/* Group commit: fdatasync what was written since the last pass, every interval_ms. */
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
            /* dup: a reopen may close a->fd while this syncs outside the lock */
            int fd = dup(a->fd);
            pthread_mutex_unlock(&a->mu);
            if (fd >= 0) {
                (void)fdatasync(fd);
                close(fd);
            }
            pthread_mutex_lock(&a->mu);
        }
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Open (create, mode 0600, O_APPEND) the audit log. */
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
    if (path) {
        a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (a->fd < 0) {
            int e = errno;
            serve_audit_close(a);
            return dsig_fail(DSIG_E_IO, "audit log \"%s\": %s", path, strerror(e));
        }
        a->enabled = 1;
        if (!(a->path = dsig_strdup(path))) {
            serve_audit_close(a);
            return dsig_fail(DSIG_E_NOMEM, "audit log: out of memory");
        }
        if (sync == SERVE_SYNC_INTERVAL) {
            if (pthread_create(&a->thread, NULL, flusher, a) != 0) {
                serve_audit_close(a);
                return dsig_fail(DSIG_E_INTERNAL, "audit log: cannot start the flusher thread");
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
    if (rc == DSIG_OK && a->sync == SERVE_SYNC_ALWAYS && fdatasync(a->fd) != 0)
        rc = dsig_fail(DSIG_E_IO, "audit log: fdatasync failed: %s", strerror(errno));
    if (a->sync == SERVE_SYNC_INTERVAL)
        a->dirty = 1;
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* Reopen the log at its path (after a rotation renamed it): the old descriptor is synced and closed
 * once no line is being written; on failure the old file stays in use. */
int serve_audit_reopen(struct serve_audit *a)
{
    if (!a || !a->enabled)
        return DSIG_OK;
    int fd = open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "audit log \"%s\": %s", a->path, strerror(errno));
    pthread_mutex_lock(&a->mu);
    int old = a->fd;
    a->fd = fd;
    (void)fdatasync(old); /* under the lock: the flusher never syncs a closed descriptor */
    close(old);
    pthread_mutex_unlock(&a->mu);
    return DSIG_OK;
}

/* Stop the flusher, sync and close. */
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
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    dsig_xfree(a->path, 0);
    dsig_xfree(a, 0);
}
