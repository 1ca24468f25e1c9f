/*
 * bench/bench_report.c — the streaming report in its four forms: the table (the reference report's
 * look), CSV, JSON lines and an SVG chart (hand-written SVG: no new dependency).
 */
#include <math.h>
#include <string.h>

#include "bench_internal.h"

/* Column widths of the table; the first nine are the reference report's. */
enum { W_KTY = 7, W_ALG = 20, W_KIB = 7, W_SIGN = 7, W_VER = 8, W_CPUS = 8, W_CPUV = 8, W_MEMS = 7,
       W_MEMV = 7, W_MIBS = 8, W_MIBV = 8, W_EFFS = 5, W_EFFV = 5 };

static const int widths[] = {W_KTY, W_ALG, W_KIB, W_SIGN, W_VER, W_CPUS, W_CPUV,
                             W_MEMS, W_MEMV, W_MIBS, W_MIBV, W_EFFS, W_EFFV};
#define NCOLS (sizeof widths / sizeof widths[0])

/* Integer with '.' every three digits, as the reference report prints KiB and milliseconds. */
void bench_fmt_thousands(char *buf, size_t cap, uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 1 < cap; i++) {
        if (i > 0 && (n - i) % 3 == 0 && o + 2 < cap)
            buf[o++] = '.';
        buf[o++] = digits[i];
    }
    if (cap)
        buf[o < cap ? o : cap - 1] = '\0';
}

/* A non-negative double rounded to an integer, thousands-dotted. */
static void fmt_round(char *buf, size_t cap, double v)
{
    bench_fmt_thousands(buf, cap, v > 0 ? (uint64_t)llround(v) : 0);
}

/* Efficiency ratio with two decimals, or "n/a" when the baseline is unknown. */
static void fmt_eff(char *buf, size_t cap, double v)
{
    if (v < 0)
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.2f", v);
}

/* Print cells left-aligned with " | " separators (the last one unpadded, like the report). */
static void print_cells(FILE *f, const char *const *cells)
{
    for (size_t i = 0; i < NCOLS; i++) {
        if (i + 1 < NCOLS)
            fprintf(f, "%-*s | ", widths[i], cells[i]);
        else
            fprintf(f, "%s\n", cells[i]);
    }
}

/* The header line. */
void bench_table_header(FILE *f)
{
    static const char *const h[] = {"KTY", "ALG", "KiB", "SIGN", "VER", "CPU-S", "CPU-V",
                                    "MEM-S", "MEM-V", "MiB/s-S", "MiB/s-V", "EFF-S", "EFF-V"};
    print_cells(f, h);
}

/* The "----+----" rule between header, rows and summary. */
void bench_table_rule(FILE *f)
{
    for (size_t i = 0; i < NCOLS; i++) {
        int w = widths[i] + (i == 0 || i + 1 == NCOLS ? 1 : 2);
        for (int k = 0; k < w; k++)
            fputc('-', f);
        fputc(i + 1 < NCOLS ? '+' : '\n', f);
    }
}

/* One row: times and memory rounded to integers, MiB/s rounded, efficiency with two decimals. */
void bench_table_row(FILE *f, const bench_row *r)
{
    char c[NCOLS][32];
    bench_fmt_thousands(c[2], sizeof c[2], r->bytes / 1024);
    fmt_round(c[3], sizeof c[3], r->sign_ms.median);
    fmt_round(c[4], sizeof c[4], r->ver_ms.median);
    fmt_round(c[5], sizeof c[5], r->cpu_s_ms.median);
    fmt_round(c[6], sizeof c[6], r->cpu_v_ms.median);
    fmt_round(c[7], sizeof c[7], r->mem_s_kib.median);
    fmt_round(c[8], sizeof c[8], r->mem_v_kib.median);
    /* Added columns: plain integers (a thousands dot would read as a decimal point here). */
    snprintf(c[9], sizeof c[9], "%.0f", r->mibps_s);
    snprintf(c[10], sizeof c[10], "%.0f", r->mibps_v);
    fmt_eff(c[11], sizeof c[11], r->eff_s);
    fmt_eff(c[12], sizeof c[12], r->eff_v);
    const char *cells[NCOLS] = {r->kty, r->label};
    for (size_t i = 2; i < NCOLS; i++)
        cells[i] = c[i];
    print_cells(f, cells);
}

/* A CSV field, quoted (RFC 4180) only when it holds a separator, quote or newline. */
void bench_csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ",median,min,max" of one metric. */
static void csv_stat(FILE *f, const bench_stat *s)
{
    fprintf(f, ",%.3f,%.3f,%.3f", s->median, s->min, s->max);
}

/* ",value" or "," (empty = n/a). */
static void csv_opt(FILE *f, double v, int prec)
{
    if (v < 0)
        fputc(',', f);
    else
        fprintf(f, ",%.*f", prec, v);
}

/* CSV header; the columns are documented in docs/benchmarks.md. */
void bench_csv_header(FILE *f)
{
    fputs("kty,alg,key_bits,kib,bytes,"
          "sign_ms_median,sign_ms_min,sign_ms_max,ver_ms_median,ver_ms_min,ver_ms_max,"
          "cpu_s_ms_median,cpu_s_ms_min,cpu_s_ms_max,cpu_v_ms_median,cpu_v_ms_min,cpu_v_ms_max,"
          "mem_s_kib_median,mem_s_kib_min,mem_s_kib_max,mem_v_kib_median,mem_v_kib_min,mem_v_kib_max,"
          "mibps_s,mibps_v,baseline,baseline_ms,eff_s,eff_v\n",
          f);
}

/* One CSV row: full precision (3 decimals), plain numbers (no thousands dot). */
void bench_csv_row(FILE *f, const bench_row *r)
{
    bench_csv_str(f, r->kty);
    fputc(',', f);
    bench_csv_str(f, r->alg);
    fprintf(f, ",%u,%llu,%llu", r->key_bits, (unsigned long long)(r->bytes / 1024),
            (unsigned long long)r->bytes);
    csv_stat(f, &r->sign_ms);
    csv_stat(f, &r->ver_ms);
    csv_stat(f, &r->cpu_s_ms);
    csv_stat(f, &r->cpu_v_ms);
    csv_stat(f, &r->mem_s_kib);
    csv_stat(f, &r->mem_v_kib);
    fprintf(f, ",%.3f,%.3f,", r->mibps_s, r->mibps_v);
    bench_csv_str(f, r->baseline);
    csv_opt(f, r->base_ms, 3);
    csv_opt(f, r->eff_s, 4);
    csv_opt(f, r->eff_v, 4);
    fputc('\n', f);
}

/* A JSON string (names come from the registry, but escape anyway). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* `"name":{"median":…,"min":…,"max":…}` */
static void json_stat(FILE *f, const char *name, const bench_stat *s)
{
    fprintf(f, ",\"%s\":%.3f,\"%s_min\":%.3f,\"%s_max\":%.3f", name, s->median, name, s->min, name,
            s->max);
}

/* One JSON object per line; keys are the table's columns in lower case (units: ms, KiB, MiB/s). */
void bench_json_row(FILE *f, const bench_row *r)
{
    fputs("{\"kty\":", f);
    json_str(f, r->kty);
    fputs(",\"alg\":", f);
    json_str(f, r->alg);
    fprintf(f, ",\"key_bits\":%u,\"kib\":%llu,\"bytes\":%llu", r->key_bits,
            (unsigned long long)(r->bytes / 1024), (unsigned long long)r->bytes);
    json_stat(f, "sign", &r->sign_ms);
    json_stat(f, "ver", &r->ver_ms);
    json_stat(f, "cpu_s", &r->cpu_s_ms);
    json_stat(f, "cpu_v", &r->cpu_v_ms);
    json_stat(f, "mem_s", &r->mem_s_kib);
    json_stat(f, "mem_v", &r->mem_v_kib);
    fprintf(f, ",\"mibps_s\":%.3f,\"mibps_v\":%.3f,\"baseline\":", r->mibps_s, r->mibps_v);
    json_str(f, r->baseline);
    if (r->base_ms < 0)
        fputs(",\"baseline_ms\":null,\"eff_s\":null,\"eff_v\":null}\n", f);
    else
        fprintf(f, ",\"baseline_ms\":%.3f,\"eff_s\":%.4f,\"eff_v\":%.4f}\n", r->base_ms, r->eff_s,
                r->eff_v);
}

/* Text escaped for XML. */
void bench_xml_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* The SVG prologue: size, font, white background. */
static void svg_begin(FILE *f, int width, int height)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
}

/* Horizontal grouped bars: for each row at `bytes`, sign (blue) above verify (orange), in MiB/s. */
void bench_svg_write(FILE *f, const bench_row *rows, size_t n, uint64_t bytes)
{
    const int left = 170, right = 90, top = 60, bar = 11, group = 2 * bar + 8, plot = 560;
    size_t m = 0;
    double max = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].bytes != bytes)
            continue;
        m++;
        if (rows[i].mibps_s > max)
            max = rows[i].mibps_s;
        if (rows[i].mibps_v > max)
            max = rows[i].mibps_v;
    }
    if (max <= 0)
        max = 1;
    int width = left + plot + right, height = top + (int)m * group + 40;
    svg_begin(f, width, height);
    fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">dsig streaming "
               "throughput, %.0f KiB payload (MiB/s, higher is better)</text>\n",
            left, (double)bytes / 1024.0);
    fprintf(f, "<rect x=\"%d\" y=\"32\" width=\"10\" height=\"10\" fill=\"#4e79a7\"/>"
               "<text x=\"%d\" y=\"41\">sign</text>\n", left, left + 14);
    fprintf(f, "<rect x=\"%d\" y=\"32\" width=\"10\" height=\"10\" fill=\"#f28e2b\"/>"
               "<text x=\"%d\" y=\"41\">verify</text>\n", left + 60, left + 74);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left, top - 4,
            left, top + (int)m * group);
    int y = top;
    for (size_t i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        if (r->bytes != bytes)
            continue;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + bar + 4);
        bench_xml_str(f, r->label);
        fputs("</text>\n", f);
        const double v[2] = {r->mibps_s, r->mibps_v};
        static const char *const colour[2] = {"#4e79a7", "#f28e2b"};
        for (int k = 0; k < 2; k++) {
            double w = v[k] / max * plot;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
                       "<text x=\"%.1f\" y=\"%d\">%.1f</text>\n",
                    left, y + k * bar, w, bar - 1, colour[k], left + w + 4, y + k * bar + bar - 2,
                    v[k]);
        }
        y += group;
    }
    fputs("</svg>\n", f);
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

void bench_svg_latency(FILE *f, const char *title, const char *const *subtitle, size_t nsub, const char *unit,
                       const char *const *series, size_t ns, const bench_lat_bar *bars, size_t n, int log_axis)
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
            const bench_lat_bar *b = NULL;
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
