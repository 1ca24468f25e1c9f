/*
 * bench/bench_svg_latency.c — the one latency chart of the benchmarks (`dsig bench apps`, `dsig bench
 * bft`): horizontal bars, one per (group, series), the median as the bar and p10..p90 as a whisker,
 * grouped under each group's title (with an optional note), coloured by series with a legend, on a
 * linear axis (1-2-5 ticks, bench_svg_tick_step) or a logarithmic one (1, 2, 5 per decade) for
 * latencies that span decades. Readable without the table: title, subtitle lines, value labels.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_internal.h"

#define MAX_GROUPS 64

static const char *const colour[] = {"#9c9c9c", "#f28e2b", "#4e79a7", "#59a14f", "#e15759", "#76b7b2"};
#define NCOLOURS (sizeof colour / sizeof colour[0])

/* The x axis: [lo, hi] over `plot` pixels, linear (lo = 0, ticks every `step`) or logarithmic. */
typedef struct axis {
    double lo, hi, step;
    int plot, log;
} axis;

/* Pixels from the axis' origin to v. */
static double axis_x(const axis *a, double v)
{
    if (a->log) {
        v = v < a->lo ? a->lo : v;
        return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) * a->plot;
    }
    return v / a->hi * a->plot;
}

/* The axis that holds every bar's whisker. */
static axis axis_for(const bench_lat_bar *bars, size_t n, int log_axis, int plot)
{
    double max = 0, min = 0;
    for (size_t i = 0; i < n; i++) {
        if (bars[i].p90 > max)
            max = bars[i].p90;
        if (bars[i].p10 > 0 && (min == 0 || bars[i].p10 < min))
            min = bars[i].p10;
    }
    if (max <= 0)
        max = 1;
    axis a = {.plot = plot, .log = log_axis};
    if (log_axis) {
        a.lo = pow(10.0, floor(log10(min > 0 ? min : 1)));
        a.hi = pow(10.0, ceil(log10(max)));
        if (a.hi <= a.lo)
            a.hi = a.lo * 10;
    } else {
        a.step = bench_svg_tick_step(max);
        a.hi = ceil(max / a.step) * a.step;
    }
    return a;
}

/* Grid lines and tick labels from y_top to y_axis, at `left`. */
static void draw_ticks(FILE *f, const axis *a, int left, int y_top, int y_axis)
{
    static const double mult[3] = {1, 2, 5};
    for (double d = a->log ? a->lo : 0; d <= a->hi * 1.0001; d = a->log ? d * 10 : d + a->step) {
        for (int m = 0; m < (a->log ? 3 : 1); m++) {
            double t = d * (a->log ? mult[m] : 1);
            if (t > a->hi * 1.0001)
                break;
            double x = left + axis_x(a, t);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/>"
                       "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                    x, y_top, x, y_axis, x, y_axis + 14, t);
        }
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left, y_axis, left + a->plot,
            y_axis);
}

/* One bar: label at the left, the median bar, the p10..p90 whisker with end caps, the value label. */
static void draw_bar(FILE *f, const bench_lat_chart *c, const axis *a, const bench_lat_bar *b, int left, int y,
                     int bar)
{
    double w = axis_x(a, b->p50), x10 = left + axis_x(a, b->p10), x90 = left + axis_x(a, b->p90);
    int cy = y + bar / 2;
    const char *label = b->label ? b->label
                        : b->series >= 0 && (size_t)b->series < c->nseries ? c->series[b->series] : "";
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + bar - 3);
    bench_xml_str(f, label);
    fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", left, y, w, bar,
            colour[(size_t)b->series % NCOLOURS]);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>"
               "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>"
               "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n",
            x10, cy, x90, cy, x10, cy - 4, x10, cy + 4, x90, cy - 4, x90, cy + 4);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.1f ", (x90 > left + w ? x90 : left + w) + 6, y + bar - 3, b->p50);
    bench_xml_str(f, c->unit);
    fprintf(f, " (%.1f–%.1f)", b->p10, b->p90);
    if (b->n)
        fprintf(f, ", n=%lu", b->n);
    fputs("</text>\n", f);
}

void bench_svg_latency(FILE *f, const bench_lat_chart *c, const bench_lat_bar *bars, size_t n)
{
    /* right: room for the longest value label ("1234.5 µs (1000.0–1500.0), n=10000", ≈ 220 px at font
     * size 11) beside a whisker that ends at the axis' end */
    const int left = 200, plot = 560, right = 250, bar = 14, gap = 4;
    const char *groups[MAX_GROUPS];
    size_t ng = 0, drawn = 0;
    for (size_t i = 0; i < n; i++) {
        size_t g = 0;
        while (g < ng && strcmp(groups[g], bars[i].group) != 0)
            g++;
        if (g == ng && ng < MAX_GROUPS)
            groups[ng++] = bars[i].group;
        drawn += g < ng;
    }
    axis a = axis_for(bars, n, c->log_axis, plot);
    int head = 30 + 15 * (int)c->nsub + 40;
    int height = head + (int)ng * 48 + (int)drawn * (bar + gap) + 50, width = left + plot + right;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, height, width, height);
    fputs("<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", f);
    bench_xml_str(f, c->title);
    fputs("</text>\n", f);
    for (size_t i = 0; i < c->nsub; i++) {
        fprintf(f, "<text x=\"10\" y=\"%d\" fill=\"#333\">", 36 + 15 * (int)i);
        bench_xml_str(f, c->subtitle[i]);
        fputs("</text>\n", f);
    }
    int ly = 30 + 15 * (int)c->nsub + 6;
    for (size_t k = 0; k < c->nseries; k++) {
        int x = left + (int)k * 150;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", x,
                ly, colour[k % NCOLOURS], x + 14, ly + 9);
        bench_xml_str(f, c->series[k]);
        fputs("</text>\n", f);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">bar: median (p50), its value printed; whisker: p10 .. p90%s"
               "</text>\n", left, ly + 25, c->log_axis ? "; logarithmic axis" : "");
    int y0 = head + 6, y_axis = height - 40;
    draw_ticks(f, &a, left, y0, y_axis);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", left + plot / 2, y_axis + 30);
    bench_xml_str(f, c->axis);
    fputs("</text>\n", f);
    int y = y0;
    for (size_t g = 0; g < ng; g++) {
        y += 14;
        fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">", y);
        bench_xml_str(f, groups[g]);
        fputs("</text>\n", f);
        if (c->group_notes && c->group_notes[g]) {
            fprintf(f, "<text x=\"20\" y=\"%d\" fill=\"#333\">", y + 15);
            bench_xml_str(f, c->group_notes[g]);
            fputs("</text>\n", f);
        }
        y += 34;
        /* the group's bars in series order (legend order), then in the order given */
        for (size_t k = 0; k <= c->nseries; k++)
            for (size_t i = 0; i < n; i++) {
                const bench_lat_bar *b = &bars[i];
                int in_k = k < c->nseries ? b->series == (int)k : b->series < 0 || (size_t)b->series >= c->nseries;
                if (!in_k || strcmp(b->group, groups[g]) != 0)
                    continue;
                draw_bar(f, c, &a, b, left, y, bar);
                y += bar + gap;
            }
    }
    fputs("</svg>\n", f);
}
