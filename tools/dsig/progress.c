/*
 * The progress bar: on stderr, only when stderr is a terminal and not --quiet, only for large inputs
 * (a known size of at least 64 MiB, or an unknown size once 64 MiB have passed), redrawn at most ten
 * times a second, and erased at the end. When disabled, progress_add is one branch.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_THRESHOLD (64ull << 20)
#define PROGRESS_INTERVAL_NS 100000000ull

/* Monotonic clock in nanoseconds. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Decide whether a bar may be shown for this input at all. */
void progress_start(struct progress *p, const struct cli_input *in)
{
    p->enabled = !cli_quiet && isatty(STDERR_FILENO);
    p->visible = 0;
    p->size_known = in->size_known;
    p->size = in->size;
    p->done = 0;
    p->t0_ns = p->last_ns = p->enabled ? now_ns() : 0;
    if (p->enabled && p->size_known && p->size < PROGRESS_THRESHOLD)
        p->enabled = 0;
}

/* Redraw the bar in place. */
static void draw(struct progress *p, uint64_t t)
{
    double mib = (double)p->done / (1024.0 * 1024.0);
    double secs = (double)(t - p->t0_ns) / 1e9;
    double rate = secs > 0 ? mib / secs : 0;
    if (p->size_known && p->size) {
        double total = (double)p->size / (1024.0 * 1024.0);
        unsigned pct = (unsigned)(p->done * 100 / p->size);
        char bar[21];
        unsigned fill = pct / 5 > 20 ? 20 : pct / 5;
        for (unsigned i = 0; i < 20; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[20] = '\0';
        fprintf(stderr, "\r[%s] %3u%%  %.1f / %.1f MiB  %.1f MiB/s\033[K", bar, pct, mib, total, rate);
    } else {
        fprintf(stderr, "\r%.1f MiB  %.1f MiB/s\033[K", mib, rate);
    }
    fflush(stderr);
    p->visible = 1;
}

/* Account for n more bytes; redraw if due. */
void progress_add(struct progress *p, size_t n)
{
    p->done += n;
    if (!p->enabled || (!p->size_known && p->done < PROGRESS_THRESHOLD))
        return;
    uint64_t t = now_ns();
    if (t - p->last_ns < PROGRESS_INTERVAL_NS)
        return;
    p->last_ns = t;
    draw(p, t);
}

/* Erase the bar, leaving the line clean for the result message. */
void progress_end(struct progress *p)
{
    if (p->visible) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->visible = 0;
    }
}
