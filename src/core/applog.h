/*
 * src/core/applog.h — an append-only log file with durable writes: "append a record, make it durable,
 * release what depends on it", for the auditable applications' request logs (src/apps/). Not installed.
 * The `dsig serve` audit log (src/serve/audit.c) shares only the way the file is opened
 * (dsig_applog_open_file): it keeps every record in memory until it is durable and rewrites them after
 * a failure, which this log does not (a failure here is final until a reopen).
 *
 * A record is written with one write(2) on an O_APPEND descriptor (records never interleave) and gets a
 * ticket: its number, 1, 2, ... in file order. How it becomes durable depends on the mode:
 *  - GROUP: group commit. dsig_applog_wait(ticket) returns once an fdatasync that *started after* the
 *    record's write has completed. The first waiter runs the fdatasync itself (no thread hand-off on
 *    the path of a lone writer); writers that arrive while it runs wait for it and then for one more
 *    sync, which one of them runs for all of them (concurrent writers share a flush; no timer).
 *    Records nobody waits for are handed to a background syncer thread with dsig_applog_kick().
 *  - ALWAYS: fdatasync after every record, by the writer, under the lock.
 *  - INTERVAL: a flusher thread syncs at most every interval_ms; a crash loses that window.
 *  - NONE: left to the kernel (synced once at close).
 * A failed fdatasync makes the log *failed*: the page cache may have dropped the dirty pages, so no later
 * record can be called durable either. Every wait and append then returns DSIG_E_IO until
 * dsig_applog_reopen() opens a fresh file.
 */
#ifndef DSIG_CORE_APPLOG_H
#define DSIG_CORE_APPLOG_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

enum dsig_applog_sync {
    DSIG_APPLOG_NONE = 0,
    DSIG_APPLOG_INTERVAL = 1,
    DSIG_APPLOG_ALWAYS = 2,
    DSIG_APPLOG_GROUP = 3
};

typedef struct dsig_applog dsig_applog;

/*
 * Open (create mode 0600, O_APPEND, O_NOFOLLOW) the log at `path`: an existing file wider than 0600 is
 * tightened, anything but a regular file (a symlink, a directory) is refused, and the directory is
 * fsynced so that a new file's entry survives a crash. `what` names the log in error details ("audit
 * log"; at most 31 bytes are kept). interval_ms: INTERVAL mode's period (0 = 200).
 * DSIG_OK, DSIG_E_IO naming the path, DSIG_E_NOMEM, DSIG_E_INTERNAL (thread).
 */
int dsig_applog_open(dsig_applog **out, const char *what, const char *path, enum dsig_applog_sync sync,
                     unsigned interval_ms);

/*
 * Open the file of an append-only log as dsig_applog_open does: O_WRONLY | O_APPEND | O_CREAT |
 * O_CLOEXEC | O_NOFOLLOW, mode 0600 (an existing file wider than 0600 is tightened; anything but a
 * regular file is refused with EINVAL), then fsync the directory (best effort) so that a new file's
 * entry survives a crash. st (may be NULL) receives the file's fstat. Returns the descriptor, or -1
 * with errno set.
 */
int dsig_applog_open_file(const char *path, struct stat *st);

/*
 * Append one record, the concatenation of iov[0..n), in one write(2); *ticket (may be NULL) receives its
 * number. ALWAYS mode: durable when this returns DSIG_OK. DSIG_E_IO (write failed, short, or the log is
 * failed), DSIG_E_ARG (n out of 1..IOV_MAX).
 */
int dsig_applog_append(dsig_applog *a, const struct iovec *iov, int n, uint64_t *ticket);

/*
 * Wait until record `ticket` is durable (GROUP: see above; ALWAYS: it already is; INTERVAL and NONE:
 * returns at once — those modes promise nothing). DSIG_OK, or DSIG_E_IO when the fdatasync covering it
 * failed or the log is failed.
 */
int dsig_applog_wait(dsig_applog *a, uint64_t ticket);

/* GROUP mode: have the background syncer make everything written so far durable soon, without waiting
 * (for records whose writer releases nothing). Other modes: no-op. */
void dsig_applog_kick(dsig_applog *a);

/* Reopen the log at its path (after a rotation renamed it; also clears a failure): the old descriptor is
 * synced and closed once no record is being written; on failure the old file stays in use. */
int dsig_applog_reopen(dsig_applog *a);

/* Counters: records written (the last ticket), records known durable (GROUP), fdatasync calls made by
 * group commit or the interval flusher. */
void dsig_applog_stats(dsig_applog *a, uint64_t *written, uint64_t *synced, uint64_t *syncs);

/* Stop the flusher, sync and close. NULL is accepted. */
void dsig_applog_close(dsig_applog *a);

#endif
