/*
 * src/serve/audit.c — the audit log: one JSON line per request, appended and made durable by the shared
 * durable log (src/core/applog.h):
 *  - "group" (the default): group commit. If a signature is released after the line (r->release), the
 *    writer waits until an fdatasync that *started after* its write has completed; concurrent requests
 *    share a flush, and no timer sits on the path. Lines of requests that release nothing are synced by
 *    the next flush without being waited for.
 *  - "always": fdatasync after every line, by the writer, under the lock (one flush per line).
 *  - "interval": a flusher thread syncs at most every interval_ms; a crash loses that window.
 *  - "none": left to the kernel.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "serve_internal.h"

struct serve_audit {
    dsig_applog *log;          /* NULL: no log */
};

/* Open the audit log (see src/core/applog.h for the file's mode, symlinks and the directory sync). */
int serve_audit_open(struct serve_audit **out, const char *path, enum dsig_applog_sync sync, unsigned interval_ms)
{
    struct serve_audit *a = dsig_calloc(1, sizeof *a);
    if (!a)
        return dsig_fail(DSIG_E_NOMEM, "audit log: out of memory");
    if (path) {
        int rc = dsig_applog_open(&a->log, "audit log", path, sync, interval_ms);
        if (rc != DSIG_OK) {
            dsig_xfree(a, 0);
            return rc;
        }
    }
    *out = a;
    return DSIG_OK;
}

/* Append one line (see the file comment for durability). */
int serve_audit_write(struct serve_audit *a, const struct serve_audit_rec *r)
{
    if (!a || !a->log)
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
    struct iovec iov = {line, (size_t)n};
    uint64_t ticket = 0;
    int rc = dsig_applog_append(a->log, &iov, 1, &ticket);
    if (rc != DSIG_OK)
        return rc;
    if (!r->release) {
        dsig_applog_kick(a->log); /* nothing leaves on this line: synced soon, not waited for */
        return DSIG_OK;
    }
    return dsig_applog_wait(a->log, ticket);
}

/* Reopen the log at its path (after a rotation renamed it); on failure the old file stays in use. */
int serve_audit_reopen(struct serve_audit *a)
{
    if (!a || !a->log)
        return DSIG_OK;
    return dsig_applog_reopen(a->log);
}

/* Statistics for tests and metrics: lines written and synced (group mode) and fdatasyncs. */
void serve_audit_stats(struct serve_audit *a, uint64_t *written, uint64_t *synced, uint64_t *syncs)
{
    *written = *synced = *syncs = 0;
    if (a && a->log)
        dsig_applog_stats(a->log, written, synced, syncs);
}

/* Sync and close. */
void serve_audit_close(struct serve_audit *a)
{
    if (!a)
        return;
    dsig_applog_close(a->log);
    dsig_xfree(a, 0);
}
