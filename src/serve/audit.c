/*
 * src/serve/audit.c — the audit log writer: an append-only file of records, one line each, and the one
 * question the server asks it before it releases a signature: "is record N durable?". It knows nothing
 * of what a record says (audit_record.c formats the server's records); it writes its own two event
 * records only, about itself (a recovery, records lost).
 *
 * Durability is a watermark: `durable` is the number of the last record known on disk, and only a
 * successful fdatasync that started after a record was written, followed by a check that the file is
 * still the one at the configured path, moves it forward. A record that is not durable yet is kept in
 * memory (`buf`, from the file offset `durable_off` on), so that nothing depends on what the kernel
 * did with it after a failure:
 *
 *  - a failed fdatasync, a failed or short write, or the file deleted, renamed or replaced stops the
 *    log (`failed`, sticky): every writer waiting for durability gets an error at once (its client
 *    gets no signature), and records appended while stopped are kept in memory (bounded; past the
 *    bound they are counted as lost). After a failed fdatasync the kernel may have dropped the dirty
 *    pages and report the next sync as a success, so a later sync proves nothing about them:
 *  - recovery (the log thread, retrying with a back-off) cuts the file back to `durable_off`, writes
 *    every record kept in memory again, then an "audit_recovered" event record, and syncs. Only when
 *    that sync succeeds (and the file is still at its path) is the log running again. A record thus
 *    reaches the disk whole, once, in order — never as a fragment, never glued to the next one.
 *  - a short write is completed; if that fails the fragment is cut off at once (ftruncate back to the
 *    end of the last whole record) and the record waits in memory like the others.
 *  - two fdatasyncs of the file never overlap: Linux reports a writeback error to one fdatasync per
 *    open file description (errseq), so of two overlapping syncs one may fail and the other succeed
 *    although the pages it covered were dropped. A sync (or a recovery) waits for the one in flight.
 *  - the file's identity (st_dev, st_ino of the open file against lstat of the path, st_nlink) is
 *    checked after every sync and once a second while idle: deleted, renamed or replaced, the log stops
 *    until the path names the file again (renamed back) or serve_audit_reopen switches to the file now
 *    at the path (rotation: rename, then SIGHUP), into which the records not yet durable are written.
 *    What a successful sync covered stays in the file it went to while that file has a name (renamed
 *    or replaced: it is not written again into the next one); only its writers are not released.
 *
 * Sync modes: "group" (the log thread runs one fdatasync per batch of records, immediately), "always"
 * (the writer syncs its own record, holding the lock), "interval" (the log thread syncs every
 * interval_ms) and "none" (no fdatasync before close; a record counts as settled once written).
 * serve_audit_wait returns when a record has what its mode promises: on disk (group, always) or in the
 * file (interval, none) — and never while the log is stopped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/applog.h"
#include "core/internal.h"
#include "dsig/tlog.h"
#include "jose/jose_internal.h"
#include "serve_internal.h"

#define RETRY_MIN_MS 100u   /* first recovery attempt after a failure ... */
#define RETRY_MAX_MS 2000u  /* ... doubling up to this */
#define IDLE_CHECK_MS 1000u /* identity check of an idle log */

struct serve_audit {
    int enabled;               /* a log was opened (immutable after open: read without the lock) */
    char *path;
    enum serve_audit_sync sync;
    unsigned interval_ms;
    pthread_mutex_t mu;
    pthread_cond_t wake;       /* the log thread: work, a failure, stop */
    pthread_cond_t done;       /* writers waiting for durability: the watermark moved, or a failure */
    pthread_cond_t sync_idle;  /* the fdatasync running outside the lock returned */
    /* Everything below is guarded by mu. */
    int fd;
    dev_t dev;                 /* identity of the open file */
    ino_t ino;
    off_t durable_off;         /* bytes of the file before this offset are durable (settled, for "none") */
    char *buf;                 /* the records after durable_off, in order, each with its newline: */
    size_t len, cap;           /* [0, in_file) are in the file, [in_file, len) not written yet */
    size_t in_file;
    uint64_t appended;         /* records accepted (number of the last one) */
    uint64_t in_file_seq;      /* records written to the file */
    uint64_t durable;          /* records known durable: the watermark */
    int failed;                /* errno of what stopped the log; 0 = running */
    char why[192];             /* what stopped it */
    char retry_why[192];       /* why the last recovery attempt failed */
    uint64_t lost;             /* records dropped while stopped, not yet reported in the file */
    unsigned retry_ms;
    int syncing;               /* an fdatasync runs outside the lock: no other may start */
    int stop;
    uint64_t syncs, sync_failures, write_failures, recoveries, lost_total;
    pthread_t thread;
    int have_thread;
    struct serve_tlog *tlog;   /* the Merkle tree of the records (NULL: none): tlog.c */
};

/* Move the durability watermark to s: the records it passes join the tree. */
static void set_durable(struct serve_audit *a, uint64_t s)
{
    if (s <= a->durable)
        return;
    if (a->tlog)
        serve_tlog_advance(a->tlog, s - a->durable);
    a->durable = s;
}

/* Stop the log (sticky until a recovery): wake the writers waiting for durability and the log thread. */
static void log_stop(struct serve_audit *a, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void log_stop(struct serve_audit *a, int err, const char *fmt, ...)
{
    if (!a->failed) {
        a->retry_why[0] = '\0';
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->why, sizeof a->why, fmt, ap);
        va_end(ap);
        a->failed = err ? err : EIO;
        a->retry_ms = RETRY_MIN_MS;
    }
    pthread_cond_broadcast(&a->done);
    pthread_cond_signal(&a->wake);
}

/* 0 if the path still names the open file and the file has a name; else errno with *what set. */
static int identity_lost(struct serve_audit *a, const char **what)
{
    struct stat fs, ps;
    if (fstat(a->fd, &fs) != 0) {
        *what = "cannot be checked (fstat failed)";
        return errno;
    }
    if (fs.st_nlink == 0) {
        *what = "was deleted";
        return ENOENT;
    }
    if (lstat(a->path, &ps) != 0) {
        *what = "was renamed or deleted (no file at its path)";
        return errno;
    }
    if (ps.st_dev != a->dev || ps.st_ino != a->ino) {
        *what = "was replaced (its path names another file)";
        return ESTALE;
    }
    return 0;
}

#define EVENT_ROOM 1024u /* beyond SERVE_AUDIT_MEM_MAX, for the log's own event record */

/* Room for n more bytes in buf, at most `max` in all. 1 if there is. */
static int buf_room(struct serve_audit *a, size_t n, size_t max)
{
    if (a->len + n <= a->cap)
        return a->len + n <= max;
    if (a->len + n > max)
        return 0;
    size_t ncap = a->cap ? a->cap : 4096;
    while (ncap < a->len + n)
        ncap *= 2;
    if (ncap > SERVE_AUDIT_MEM_MAX + EVENT_ROOM)
        ncap = SERVE_AUDIT_MEM_MAX + EVENT_ROOM;
    char *p = dsig_realloc(a->buf, ncap);
    if (!p)
        return 0;
    a->buf = p;
    a->cap = ncap;
    return 1;
}

/* Forget the first n bytes of buf (they are durable now). */
static void buf_drop(struct serve_audit *a, size_t n)
{
    memmove(a->buf, a->buf + n, a->len - n);
    a->len -= n;
    a->in_file -= n;
    a->durable_off += (off_t)n;
}

/* Write the records not in the file yet, whole: a short write is continued, and if it cannot be, the
 * fragment is cut off again (the file ends at the last whole record). Stops the log on failure. */
static void write_pending(struct serve_audit *a)
{
    if (a->failed || a->in_file == a->len)
        return;
    size_t done = 0;
    int e = dsig_write_all(a->fd, a->buf + a->in_file, a->len - a->in_file, &done);
    if (e == 0) {
        a->in_file = a->len;
        a->in_file_seq = a->appended;
        return;
    }
    a->write_failures++;
    int cut = done == 0 || ftruncate(a->fd, a->durable_off + (off_t)a->in_file) == 0;
    log_stop(a, e, "write failed: %s%s", strerror(e), cut ? "" : " (a partial record is left until the recovery)");
}

/* Wait (lock held) until no fdatasync runs outside the lock: the next one may start. */
static void wait_sync_idle(struct serve_audit *a)
{
    while (a->syncing)
        pthread_cond_wait(&a->sync_idle, &a->mu);
}

/* The records in the file become durable: fdatasync, then the identity check. With `unlock`, the sync
 * runs on a duplicate of the descriptor outside the lock (group, interval: writers go on appending);
 * without, under it ("always": one sync per record, the writer's own). Either way after the sync in
 * flight, never beside it (see the file comment), so nothing else (a recovery, a reopen) changes the
 * file meanwhile. The target is kept as a file offset and a record number: what was in the file when
 * the sync started.
 * After a successful sync the bytes it covered are on disk in this file for as long as the file has a
 * name anywhere: unless it was deleted they are not kept for a rewrite (which would write them a second
 * time, into the next file after a rotation). Their writers are released only if the file is also
 * still the one at the path — or, with `rotating` (the final sync of a file a reopen leaves), at all. */
static void sync_step(struct serve_audit *a, int unlock, int rotating)
{
    wait_sync_idle(a);
    if (a->failed || a->in_file_seq == a->durable)
        return;
    off_t target_off = a->durable_off + (off_t)a->in_file;
    uint64_t target_seq = a->in_file_seq;
    int e = 0;
    if (unlock) {
        int fd = dup(a->fd);
        a->syncing = 1;
        pthread_mutex_unlock(&a->mu);
        if (fd < 0) {
            e = errno;
        } else {
            while (fdatasync(fd) != 0 && (e = errno) == EINTR)
                e = 0;
            close(fd);
        }
        pthread_mutex_lock(&a->mu);
        a->syncing = 0;
        pthread_cond_broadcast(&a->sync_idle);
    } else {
        while (fdatasync(a->fd) != 0 && (e = errno) == EINTR)
            e = 0;
    }
    a->syncs++;
    if (e) {
        a->sync_failures++;
        log_stop(a, e, "fdatasync failed: %s", strerror(e));
        return;
    }
    const char *what = NULL;
    struct stat fs;
    if ((e = fstat(a->fd, &fs) != 0 ? errno : fs.st_nlink == 0 ? ENOENT : 0) != 0) {
        log_stop(a, e, "the audit log \"%s\" %s", a->path, e == ENOENT ? "was deleted" : "cannot be checked (fstat failed)");
        return;
    }
    /* The sync covered every byte written before it started, even if a write failed meanwhile. */
    if (target_off > a->durable_off)
        buf_drop(a, (size_t)(target_off - a->durable_off));
    if (!rotating && (e = identity_lost(a, &what)) != 0) {
        log_stop(a, e, "the audit log \"%s\" %s", a->path, what);
        return;
    }
    set_durable(a, target_seq);
    pthread_cond_broadcast(&a->done);
}

/* Queue one record into buf (with its newline); its number, or 0 when there is no room. The log's
 * own events may use EVENT_ROOM bytes more than records: a full buffer still gets its recovery event.
 * With a tree, a JSON object record gets its index as first member and its leaf hash is taken now:
 * records reach the file in queue order, a recovery rewrites them byte for byte. */
static uint64_t buf_add(struct serve_audit *a, const char *rec, size_t n, int event, uint64_t *index)
{
    char pre[48];
    size_t pl = 0, skip = 0;
    if (a->tlog && n >= 2 && rec[0] == '{') {
        uint64_t idx = serve_tlog_next_index(a->tlog);
        pl = (size_t)snprintf(pre, sizeof pre, "{\"index\":%llu%s", (unsigned long long)idx, rec[1] == '}' ? "" : ",");
        skip = 1;
    }
    size_t total = pl + n - skip;
    if (!buf_room(a, total + 1, SERVE_AUDIT_MEM_MAX + (event ? EVENT_ROOM : 0)))
        return 0;
    char *line = a->buf + a->len;
    memcpy(line, pre, pl);
    memcpy(line + pl, rec + skip, n - skip);
    if (a->tlog) {
        if (index)
            *index = serve_tlog_next_index(a->tlog);
        if (serve_tlog_pend(a->tlog, line, total) != 0)
            return 0;
    }
    line[total] = '\n';
    a->len += total + 1;
    return ++a->appended;
}

/* The log's own event record (JSON, one line), queued like the others. */
static void add_event(struct serve_audit *a, const char *event, const char *cause, uint64_t rewritten)
{
    char stamp[SERVE_STAMP_LEN], num[64];
    serve_utc_stamp(stamp);
    jose_buf b = {0};
    jose_buf_adds(&b, "{");
    jose_buf_member(&b, NULL, "time", stamp);
    jose_buf_member(&b, ",", "event", event);
    jose_buf_member(&b, ",", "cause", cause);
    snprintf(num, sizeof num, ",\"rewritten\":%llu,\"lost\":%llu}", (unsigned long long)rewritten,
             (unsigned long long)a->lost);
    jose_buf_adds(&b, num);
    if (!b.oom && buf_add(a, b.p, b.len, 1, NULL))
        a->lost = 0;
    jose_buf_wipe(&b);
}

/* Bring a stopped log back: cut the file back to what is durable, write every record kept in memory
 * again followed by an event record saying so, sync, check the identity. The log runs again only if all
 * of that succeeded; otherwise it stays stopped (retried later, or at the next reopen). Holds the lock
 * throughout: recoveries are rare, and appends must not interleave with the rewrite. */
static void recover(struct serve_audit *a)
{
    wait_sync_idle(a); /* its sync must not overlap one still running on the old contents */
    if (!a->failed)
        return; /* that sync found the log running (a reopen's recovery, raced by the log thread's) */
    const char *what = NULL;
    int e = identity_lost(a, &what);
    if (e) {
        snprintf(a->retry_why, sizeof a->retry_why, "the audit log \"%s\" %s", a->path, what);
        return; /* until it is renamed back, or reopened */
    }
    if (ftruncate(a->fd, a->durable_off) != 0) {
        snprintf(a->retry_why, sizeof a->retry_why, "cannot cut the log back: %s", strerror(errno));
        return;
    }
    a->in_file = 0;
    a->in_file_seq = a->durable;
    size_t keep_len = a->len, keep_pend = a->tlog ? serve_tlog_pending(a->tlog) : 0;
    uint64_t keep_seq = a->appended, keep_lost = a->lost;
    add_event(a, "audit_recovered", a->why, a->appended - a->durable);
    size_t done = 0;
    e = dsig_write_all(a->fd, a->buf, a->len, &done);
    if (e == 0)
        while (fdatasync(a->fd) != 0 && (e = errno) == EINTR)
            e = 0;
    a->syncs++;
    what = NULL;
    if (e == 0)
        e = identity_lost(a, &what);
    if (e) {
        /* As before this attempt: the event record is made again by the next one. */
        a->len = keep_len;
        a->appended = keep_seq;
        a->lost = keep_lost;
        if (a->tlog)
            serve_tlog_unpend(a->tlog, keep_pend);
        if (done)
            (void)ftruncate(a->fd, a->durable_off);
        snprintf(a->retry_why, sizeof a->retry_why, "%s", what ? what : strerror(e));
        return;
    }
    a->recoveries++;
    a->in_file = a->len;
    buf_drop(a, a->len);
    set_durable(a, a->appended);
    a->in_file_seq = a->appended;
    a->failed = 0;
    a->why[0] = a->retry_why[0] = '\0';
    pthread_cond_broadcast(&a->done);
}

/* The log thread: group commit (a sync as soon as records wait), interval flushes, recovery of a
 * stopped log, and the identity check of an idle one. Exits on stop once nothing waits for a sync. */
static void *log_thread(void *arg)
{
    struct serve_audit *a = arg;
    pthread_mutex_lock(&a->mu);
    uint64_t last_check = serve_now_ns();
    for (;;) {
        if (a->failed) {
            if (a->stop)
                break;
            struct timespec ts = serve_abstime_ms(a->retry_ms);
            pthread_cond_timedwait(&a->wake, &a->mu, &ts);
            if (a->stop)
                break;
            recover(a);
            if (a->failed && a->retry_ms < RETRY_MAX_MS)
                a->retry_ms *= 2;
            continue;
        }
        if (a->sync == SERVE_SYNC_GROUP && a->in_file_seq > a->durable) {
            sync_step(a, 1, 0);
            last_check = serve_now_ns();
            continue;
        }
        if (a->stop)
            break;
        unsigned wait_ms = a->sync == SERVE_SYNC_INTERVAL ? a->interval_ms : IDLE_CHECK_MS;
        struct timespec ts = serve_abstime_ms(wait_ms);
        int timed_out = pthread_cond_timedwait(&a->wake, &a->mu, &ts) == ETIMEDOUT;
        if (a->failed || a->stop)
            continue;
        if (a->sync == SERVE_SYNC_INTERVAL && timed_out && a->in_file_seq > a->durable) {
            sync_step(a, 1, 0);
            last_check = serve_now_ns();
        } else if (serve_now_ns() - last_check >= IDLE_CHECK_MS * 1000000ull) {
            const char *what = NULL;
            int e = identity_lost(a, &what);
            if (e)
                log_stop(a, e, "the audit log \"%s\" %s", a->path, what);
            last_check = serve_now_ns();
        }
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Open (create, mode 0600, O_APPEND) the audit log and start its thread. */
int serve_audit_open(struct serve_audit **out, const char *path, enum serve_audit_sync sync, unsigned interval_ms)
{
    struct serve_audit *a = dsig_calloc(1, sizeof *a);
    if (!a)
        return dsig_fail(DSIG_E_NOMEM, "audit log: out of memory");
    a->fd = -1;
    a->sync = sync;
    a->interval_ms = interval_ms ? interval_ms : 200;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->wake, NULL);
    pthread_cond_init(&a->done, NULL);
    pthread_cond_init(&a->sync_idle, NULL);
    if (path) {
        struct stat st;
        if ((a->fd = dsig_applog_open_file(path, &st)) < 0) {
            int e = errno;
            serve_audit_close(a);
            return dsig_fail(DSIG_E_IO, "audit log \"%s\": %s", path, strerror(e));
        }
        a->dev = st.st_dev;
        a->ino = st.st_ino;
        a->durable_off = st.st_size;
        a->enabled = 1;
        if (!(a->path = dsig_strdup(path))) {
            serve_audit_close(a);
            return dsig_fail(DSIG_E_NOMEM, "audit log: out of memory");
        }
        if (pthread_create(&a->thread, NULL, log_thread, a) != 0) {
            serve_audit_close(a);
            return dsig_fail(DSIG_E_INTERNAL, "audit log: cannot start its thread");
        }
        a->have_thread = 1;
    }
    *out = a;
    return DSIG_OK;
}

/* Append one record (see the file comment). */
int serve_audit_append(struct serve_audit *a, const char *rec, size_t n, uint64_t *seq)
{
    return serve_audit_append_indexed(a, rec, n, seq, NULL);
}

int serve_audit_append_indexed(struct serve_audit *a, const char *rec, size_t n, uint64_t *seq, uint64_t *index)
{
    *seq = 0;
    if (index)
        *index = UINT64_MAX;
    if (!a || !a->enabled)
        return DSIG_OK;
    if (n == 0 || memchr(rec, '\n', n))
        return dsig_fail(DSIG_E_ARG, "audit log: a record is one non-empty line");
    pthread_mutex_lock(&a->mu);
    if (!a->failed && a->len + n + 1 > SERVE_AUDIT_MEM_MAX)
        sync_step(a, 0, 0); /* running but far behind ("interval"): make room before queueing more */
    uint64_t s = buf_add(a, rec, n, 0, index);
    if (!s) {
        a->lost++;
        a->lost_total++;
    }
    write_pending(a);
    if (!a->failed) {
        switch (a->sync) {
        case SERVE_SYNC_GROUP:
            pthread_cond_signal(&a->wake);
            break;
        case SERVE_SYNC_ALWAYS:
            sync_step(a, 0, 0);
            break;
        case SERVE_SYNC_NONE: /* settled once written: nothing to keep for a rewrite */
            set_durable(a, a->in_file_seq);
            buf_drop(a, a->in_file);
            break;
        case SERVE_SYNC_INTERVAL:
            break;
        }
    }
    int rc = DSIG_OK;
    if (!s)
        rc = dsig_fail(DSIG_E_IO, "audit log: record lost (%s; no room left to keep it)",
                       a->failed ? a->why : "too far behind");
    else if (a->failed)
        rc = dsig_fail(DSIG_E_IO, "audit log: %s (the record is kept and written when the log recovers)", a->why);
    *seq = s;
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* Wait until record `seq` has what the mode promises (see the file comment). */
int serve_audit_wait(struct serve_audit *a, uint64_t seq)
{
    if (!a || !a->enabled)
        return DSIG_OK;
    pthread_mutex_lock(&a->mu);
    int ok;
    if (a->sync == SERVE_SYNC_GROUP || a->sync == SERVE_SYNC_ALWAYS) {
        while (a->durable < seq && !a->failed)
            pthread_cond_wait(&a->done, &a->mu);
        ok = seq && a->durable >= seq;
    } else {
        ok = seq && !a->failed && a->in_file_seq >= seq;
    }
    int rc = ok ? DSIG_OK
                : dsig_fail(DSIG_E_IO, "audit log: record not durable: %s",
                            a->failed ? a->why : "it could not be written");
    pthread_mutex_unlock(&a->mu);
    return rc;
}

/* 1 if the log runs (or there is none); else 0 with the reason in why. */
int serve_audit_ready(struct serve_audit *a, char *why, size_t n)
{
    if (!a || !a->enabled)
        return 1;
    pthread_mutex_lock(&a->mu);
    int ok = !a->failed;
    if (!ok && why && n)
        snprintf(why, n, "%s%s%s", a->why, a->retry_why[0] ? "; recovery: " : "", a->retry_why);
    pthread_mutex_unlock(&a->mu);
    return ok;
}

/* Switch to the file now at the path (rotation), or recover into the same file if it is still there. */
int serve_audit_reopen(struct serve_audit *a)
{
    if (!a || !a->enabled)
        return DSIG_OK;
    struct stat st;
    int fd = dsig_applog_open_file(a->path, &st);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "audit log \"%s\": %s", a->path, strerror(errno));
    pthread_mutex_lock(&a->mu);
    if (st.st_dev == a->dev && st.st_ino == a->ino) { /* not rotated: keep the descriptor */
        if (a->failed)
            recover(a);
        pthread_mutex_unlock(&a->mu);
        close(fd);
        return DSIG_OK;
    }
    /* Settle the old file: what a final sync covers is durable there; the rest goes to the new one. */
    sync_step(a, 0, 1);
    int old = a->fd;
    a->fd = fd;
    a->dev = st.st_dev;
    a->ino = st.st_ino;
    a->durable_off = st.st_size;
    a->in_file = 0;
    a->in_file_seq = a->durable;
    if (a->failed || a->len) {
        /* Records not durable in the old file (or never written): into the new one, with the event. */
        if (!a->failed)
            log_stop(a, EIO, "rotated with records not yet durable");
        recover(a);
    }
    pthread_cond_broadcast(&a->done);
    pthread_mutex_unlock(&a->mu);
    close(old);
    return DSIG_OK;
}

/* Counters for metrics and tests. */
void serve_audit_stats(struct serve_audit *a, struct serve_audit_stats *st)
{
    memset(st, 0, sizeof *st);
    st->ready = 1;
    if (!a || !a->enabled)
        return;
    pthread_mutex_lock(&a->mu);
    st->records = a->appended;
    st->durable = a->durable;
    st->syncs = a->syncs;
    st->sync_failures = a->sync_failures;
    st->write_failures = a->write_failures;
    st->recoveries = a->recoveries;
    st->lost = a->lost_total;
    st->ready = !a->failed;
    pthread_mutex_unlock(&a->mu);
}

/* Stop the thread (after a last group sync), make what can be durable durable, close. */
void serve_audit_close(struct serve_audit *a)
{
    if (!a)
        return;
    if (a->have_thread) {
        pthread_mutex_lock(&a->mu);
        a->stop = 1;
        pthread_cond_signal(&a->wake);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->thread, NULL);
    }
    if (a->fd >= 0) {
        pthread_mutex_lock(&a->mu);
        if (a->failed)
            recover(a); /* one last attempt for the records kept in memory */
        else
            sync_step(a, 0, 0);
        if (a->sync == SERVE_SYNC_NONE && !a->failed)
            (void)fdatasync(a->fd);
        pthread_mutex_unlock(&a->mu);
        close(a->fd);
    }
    pthread_cond_destroy(&a->done);
    pthread_cond_destroy(&a->sync_idle);
    pthread_cond_destroy(&a->wake);
    pthread_mutex_destroy(&a->mu);
    dsig_xfree(a->buf, a->cap);
    dsig_xfree(a->path, 0);
    serve_tlog_free(a->tlog);
    dsig_xfree(a, 0);
}

/* Attach the tree (before any record); cut a torn tail the tree did not count. */
int serve_audit_attach_tlog(struct serve_audit *a, struct serve_tlog *t)
{
    if (!a || !a->enabled) {
        serve_tlog_free(t);
        return DSIG_OK;
    }
    pthread_mutex_lock(&a->mu);
    int rc = DSIG_OK;
    off_t end = (off_t)serve_tlog_file_end(t);
    if (a->durable_off > end) {
        if (ftruncate(a->fd, end) != 0)
            rc = dsig_fail(DSIG_E_IO, "audit log \"%s\": cannot cut its torn last line: %s", a->path, strerror(errno));
        else
            a->durable_off = end;
    }
    if (rc == DSIG_OK)
        a->tlog = t;
    pthread_mutex_unlock(&a->mu);
    if (rc != DSIG_OK)
        serve_tlog_free(t);
    return rc;
}

void serve_audit_tree_head(struct serve_audit *a, uint64_t *size, uint8_t root[32])
{
    *size = 0;
    if (!a || !a->enabled || !a->tlog) {
        dsig_tlog_empty_root(root);
        return;
    }
    pthread_mutex_lock(&a->mu);
    serve_tlog_head(a->tlog, size, root);
    pthread_mutex_unlock(&a->mu);
}

void serve_audit_settle(struct serve_audit *a)
{
    if (!a || !a->enabled)
        return;
    pthread_mutex_lock(&a->mu);
    if (!a->failed) {
        write_pending(a);
        sync_step(a, 0, 0);
    }
    pthread_mutex_unlock(&a->mu);
}
