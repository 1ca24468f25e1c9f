/*
 * The progress bar: on stderr, only when stderr is a terminal and not --quiet, only for large inputs
 * (a known size of at least 64 MiB, or an unknown size once 64 MiB have passed), redrawn at most ten
 * times a second, and erased at the end. When disabled, progress_add is one branch.
 *
 * The line always fits the terminal (TIOCGWINSZ, else $COLUMNS, else 80): a line longer than the
 * terminal wraps, and "\r" then redraws only its last part, leaving a trail of old lines. Narrow
 * terminals get shorter forms (bar dropped, then the byte counts), never a wrapped line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_THRESHOLD (64ull << 20)
#define PROGRESS_INTERVAL_NS 100000000ull
#define BAR_MAX 20
#define BAR_MIN 8

/* Monotonic clock in nanoseconds. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Columns of the terminal on stderr. */
static unsigned term_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *c = getenv("COLUMNS");
    long v = c ? strtol(c, NULL, 10) : 0;
    return v > 0 && v < 10000 ? (unsigned)v : 80;
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

/* The text of the line for a terminal of `width` columns (see cli.h). */
size_t progress_format(char *buf, size_t cap, unsigned width, uint64_t done, int size_known,
                       uint64_t size, double secs)
{
    double mib = (double)done / (1024.0 * 1024.0);
    double rate = secs > 0 ? mib / secs : 0;
    size_t room = width > 1 ? width - 1 : 0; /* the last column would wrap on some terminals */
    if (room + 1 < cap)
        cap = room + 1;
    char forms[3][96];
    int nforms = 0;
    unsigned pct = 0;
    if (size_known && size) {
        pct = (unsigned)(done * 100 / size);
        double total = (double)size / (1024.0 * 1024.0);
        snprintf(forms[nforms++], sizeof forms[0], "%3u%%  %.1f / %.1f MiB  %.1f MiB/s", pct, mib, total, rate);
        snprintf(forms[nforms++], sizeof forms[0], "%3u%%  %.1f MiB/s", pct, rate);
        snprintf(forms[nforms++], sizeof forms[0], "%3u%%", pct);
    } else {
        snprintf(forms[nforms++], sizeof forms[0], "%.1f MiB  %.1f MiB/s", mib, rate);
        snprintf(forms[nforms++], sizeof forms[0], "%.1f MiB", mib);
    }
    /* The richest text that fits, with a bar in front when the size is known and it leaves the bar
     * at least BAR_MIN cells. */
    for (int f = 0; f < nforms; f++) {
        size_t n = strlen(forms[f]);
        if (size_known && size && n + 3 + BAR_MIN <= room) {
            size_t cells = room - n - 3 < BAR_MAX ? room - n - 3 : BAR_MAX;
            size_t fill = pct >= 100 ? cells : cells * pct / 100;
            char bar[BAR_MAX + 1];
            for (size_t i = 0; i < cells; i++)
                bar[i] = i < fill ? '#' : '.';
            bar[cells] = '\0';
            snprintf(buf, cap, "[%s] %s", bar, forms[f]);
            return strlen(buf);
        }
        if (n <= room) {
            snprintf(buf, cap, "%s", forms[f]);
            return strlen(buf);
        }
    }
    if (cap)
        buf[0] = '\0'; /* not even the shortest form fits: draw nothing rather than wrap */
    return 0;
}

/* Redraw the bar in place. */
static void draw(struct progress *p, uint64_t t)
{
    char line[256];
    progress_format(line, sizeof line, term_width(), p->done, p->size_known, p->size,
                    (double)(t - p->t0_ns) / 1e9);
    fprintf(stderr, "\r%s\033[K", line);
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
