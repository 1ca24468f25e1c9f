/*
 * src/serve/log.c — the server log: one JSON object per message, e.g.
 *   {"time":"2026-11-30T04:04:07.432Z","level":"warn","msg":"audit log: ...","request_id":"5f3a9c0e12ab77d1"}
 * handed to the application's callback (the dsig tool prints it on standard error). The request id is
 * the one in the audit record and in the response header DSig-Request-Id.
 */
#include <stdarg.h>
#include <stdio.h>

#include "jose/jose_internal.h"
#include "front.h"

void serve_log(const struct serve_logger *lg, int level, const char *request_id, const char *fmt, ...)
{
    if (!lg || !lg->fn)
        return;
    char msg[1024], stamp[SERVE_STAMP_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    serve_utc_stamp(stamp);
    jose_buf b = {0};
    jose_buf_adds(&b, "{");
    jose_buf_member(&b, NULL, "time", stamp);
    jose_buf_member(&b, ",", "level", level == DSIG_SERVE_LOG_ERROR ? "error" : level == DSIG_SERVE_LOG_WARN ? "warn" : "info");
    jose_buf_member(&b, ",", "msg", msg);
    if (request_id)
        jose_buf_member(&b, ",", "request_id", request_id);
    jose_buf_adds(&b, "}");
    if (!b.oom)
        lg->fn(lg->arg, level, b.p);
    jose_buf_wipe(&b);
}
