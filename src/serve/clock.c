/*
 * src/serve/clock.c — the two clocks of `dsig serve`: a monotonic one for durations and deadlines, and
 * UTC wall-clock time stamps (RFC 3339, millisecond precision) for the audit log and the server log,
 * and the absolute deadlines of timed condition waits.
 */
#include <stdio.h>
#include <time.h>

#include "serve_internal.h"

/* Monotonic clock in nanoseconds. */
uint64_t serve_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* "2026-11-30T04:04:07.432Z" (24 characters + NUL). */
void serve_utc_stamp(char out[SERVE_STAMP_LEN])
{
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    char day[20];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm); /* 19 characters for years 0..9999 */
    snprintf(out, SERVE_STAMP_LEN, "%.19s.%03uZ", day, (unsigned)(now.tv_nsec / 1000000L) % 1000u);
}

/* CLOCK_REALTIME ms from now: the deadline pthread_cond_timedwait takes. */
struct timespec serve_abstime_ms(unsigned ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    return ts;
}
