/*
 * bench/bench_svg_series.c — a horizontal latency chart for results grouped by configuration and
 * coloured by series (BFT protocol layouts x none / Ed25519 / DSig), with an optional logarithmic
 * axis for latencies that span decades. bench_svg_latency (bench_report.c) draws labelled bars with
 * per-group notes on a linear axis; this one matches bars to series by name.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_internal.h"

static void svg_begin(FILE *f, int width, int height)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about `want` ticks up to max. */
static double nice_step(double max, int want)
{
    double raw = max / want, p = pow(10.0, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static const char *const series_colour[] = {"#9c9c9c", "#f28e2b", "#4e79a7", "#59a14f", "#e15759", "#76b7b2"};

/* Position of v on the axis [lo, hi] of `plot` pixels; logarithmic when `log_axis` (lo > 0). */
static double axis_x(double v, double lo, double hi, int plot, int log_axis)
{
    if (log_axis) {
        v = v < lo ? lo : v;
        return (log10(v) - log10(lo)) / (log10(hi) - log10(lo)) * plot;
    }
    return v / hi * plot;
}

void bench_svg_latency_series(FILE *f, const char *title, const char *const *subtitle, size_t nsub, const char *unit,
                       const char *const *series, size_t ns, const bench_series_bar *bars, size_t n, int log_axis)
{
    const int left = 200, right = 120, bar = 13, plot = 640;
    const int top = 80 + 16 * (int)nsub;
    /* groups in order of first appearance */
    const char *groups[64];
    size_t ng = 0;
    double max = 0, min = 0;
    for (size_t i = 0; i < n; i++) {
        size_t g = 0;
        while (g < ng && strcmp(groups[g], bars[i].group) != 0)
            g++;
        if (g == ng && ng < 64)
            groups[ng++] = bars[i].group;
        if (bars[i].p90 > max)
            max = bars[i].p90;
        if (bars[i].p10 > 0 && (min == 0 || bars[i].p10 < min))
            min = bars[i].p10;
    }
    if (max <= 0)
        max = 1;
    double lo = 0, hi, step = 0;
    if (log_axis) {
        lo = pow(10.0, floor(log10(min > 0 ? min : 1)));
        hi = pow(10.0, ceil(log10(max)));
        if (hi <= lo)
            hi = lo * 10;
    } else {
        step = nice_step(max, 6);
        hi = ceil(max / step) * step;
    }
    int group_h = (int)ns * bar + 12, height = top + (int)ng * group_h + 48, width = left + plot + right;
    svg_begin(f, width, height);
    fputs("<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", f);
    bench_xml_str(f, title);
    fputs("</text>\n", f);
    for (size_t i = 0; i < nsub; i++) {
        fprintf(f, "<text x=\"10\" y=\"%d\">", 38 + 16 * (int)i);
        bench_xml_str(f, subtitle[i]);
        fputs("</text>\n", f);
    }
    int ly = top - 40;
    for (size_t k = 0; k < ns; k++) {
        int x = left + (int)k * 110;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
                x, ly - 9, series_colour[k % 6], x + 14, ly);
        bench_xml_str(f, series[k]);
        fputs("</text>\n", f);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">bar: median (p50), its value printed; whisker: p10 .. p90%s</text>\n",
            left, ly + 16, log_axis ? "; logarithmic axis" : "");
    int y_axis = top + (int)ng * group_h;
    /* ticks: 1, 2, 5 per decade (log) or the nice step (linear) */
    for (double d = log_axis ? lo : 0; d <= hi * 1.0001; d = log_axis ? d * 10 : d + step) {
        static const double mult[3] = {1, 2, 5};
        for (int m = 0; m < (log_axis ? 3 : 1); m++) {
            double t = d * (log_axis ? mult[m] : 1);
            if (t > hi * 1.0001)
                break;
            double x = left + axis_x(t, lo, hi, plot, log_axis);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                       "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                    x, top - 4, x, y_axis + 4, x, y_axis + 16, t);
        }
        if (!log_axis && step <= 0)
            break;
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", left + plot / 2, y_axis + 34);
    bench_xml_str(f, unit);
    fputs("</text>\n", f);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left, top - 4, left, y_axis);
    for (size_t g = 0; g < ng; g++) {
        int y0 = top + (int)g * group_h;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y0 + (int)ns * bar / 2 + 4);
        bench_xml_str(f, groups[g]);
        fputs("</text>\n", f);
        for (size_t k = 0; k < ns; k++) {
            const bench_series_bar *b = NULL;
            for (size_t i = 0; i < n && !b; i++)
                if (strcmp(bars[i].group, groups[g]) == 0 && strcmp(bars[i].series, series[k]) == 0)
                    b = &bars[i];
            if (!b)
                continue;
            int y = y0 + (int)k * bar;
            double w = axis_x(b->p50, lo, hi, plot, log_axis), x10 = left + axis_x(b->p10, lo, hi, plot, log_axis),
                   x90 = left + axis_x(b->p90, lo, hi, plot, log_axis);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
                       "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>"
                       "<text x=\"%.1f\" y=\"%d\">%.1f</text>\n",
                    left, y, w, bar - 2, series_colour[k % 6], x10, y + bar / 2, x90, y + bar / 2, x90 + 4,
                    y + bar - 3, b->p50);
        }
    }
    fputs("</svg>\n", f);
}
