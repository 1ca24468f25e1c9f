/*
 * bench/bench_report.c — the streaming report in its four forms: the table (the reference report's
 * look), CSV, JSON lines and an SVG chart (hand-written SVG: no new dependency); the CSV and XML field
 * writers and the latency chart the other harnesses share.
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

/* A non-negative double rounded to a plain integer (no thousands separator: "1.024" reads as a
 * decimal number in most of the world). */
static void fmt_round(char *buf, size_t cap, double v)
{
    snprintf(buf, cap, "%llu", v > 0 ? (unsigned long long)llround(v) : 0ull);
}

int bench_eff_suspect(double eff)
{
    return eff > BENCH_EFF_SUSPECT;
}

int bench_row_suspect(const bench_row *r)
{
    return bench_eff_suspect(r->eff_s) || bench_eff_suspect(r->eff_v);
}

/* Efficiency ratio with two decimals, "!" after a suspect one, or "n/a" without a baseline. */
static void fmt_eff(char *buf, size_t cap, double v)
{
    if (v < 0)
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.2f%s", v, bench_eff_suspect(v) ? "!" : "");
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
    snprintf(c[2], sizeof c[2], "%llu", (unsigned long long)(r->bytes / 1024));
    fmt_round(c[3], sizeof c[3], r->sign_ms.median);
    fmt_round(c[4], sizeof c[4], r->ver_ms.median);
    fmt_round(c[5], sizeof c[5], r->cpu_s_ms.median);
    fmt_round(c[6], sizeof c[6], r->cpu_v_ms.median);
    fmt_round(c[7], sizeof c[7], r->mem_s_kib.median);
    fmt_round(c[8], sizeof c[8], r->mem_v_kib.median);
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
          "mibps_s,mibps_v,baseline,baseline_ms,eff_s,eff_v,eff_suspect\n",
          f);
}

/* One CSV row: full precision (3 decimals), plain numbers. */
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
    fprintf(f, ",%d\n", bench_row_suspect(r));
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
        fputs(",\"baseline_ms\":null,\"eff_s\":null,\"eff_v\":null,\"eff_suspect\":false}\n", f);
    else
        fprintf(f, ",\"baseline_ms\":%.3f,\"eff_s\":%.4f,\"eff_v\":%.4f,\"eff_suspect\":%s}\n", r->base_ms,
                r->eff_s, r->eff_v, bench_row_suspect(r) ? "true" : "false");
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

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving at most 8 steps up to max. */
double bench_svg_tick_step(double max)
{
    if (!(max > 0))
        return 1;
    double mag = pow(10, floor(log10(max)));
    static const double mult[] = {0.1, 0.2, 0.5, 1, 2, 5};
    for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
        if (max / (mult[i] * mag) <= 8)
            return mult[i] * mag;
    return 5 * mag;
}

/* Throughput (MiB/s) of a payload at a time of `ms` milliseconds; 0 when unknown. */
static double mibps(uint64_t bytes, double ms)
{
    return ms > 0 ? (double)bytes / (1024.0 * 1024.0) / (ms / 1e3) : 0;
}

/* Horizontal grouped bars: for each row at `bytes`, sign (blue) above verify (orange), in MiB/s, the
 * bar at the median and a whisker from the slowest to the fastest measured iteration; x axis with
 * ticks and grid; the title says the payload, the machine, the date and the iteration counts. */
void bench_svg_write(FILE *f, const bench_row *rows, size_t n, uint64_t bytes, const bench_svg_meta *m)
{
    const int left = 190, right = 70, top = 78, bar = 11, group = 2 * bar + 8, plot = 560;
    size_t nrows = 0;
    double max = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].bytes != bytes)
            continue;
        nrows++;
        const double v[4] = {rows[i].mibps_s, rows[i].mibps_v, mibps(bytes, rows[i].sign_ms.min),
                             mibps(bytes, rows[i].ver_ms.min)};
        for (int k = 0; k < 4; k++)
            if (v[k] > max)
                max = v[k];
    }
    double step = bench_svg_tick_step(max > 0 ? max : 1);
    double axis = ceil((max > 0 ? max : 1) / step) * step;
    int bottom = top + (int)nrows * group;
    int width = left + plot + right, height = bottom + 48;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">dsig streaming "
               "throughput, %llu KiB payload (MiB/s, higher is better)</text>\n",
            10, (unsigned long long)(bytes / 1024));
    fputs("<text x=\"10\" y=\"38\">", f);
    bench_xml_str(f, m && m->machine ? m->machine : "machine unknown");
    fprintf(f, "; %s; %u warm-up, %u measured iterations per bar (median; whisker: slowest to fastest)"
               "</text>\n", m && m->date ? m->date : "date unknown", m ? m->warmup : 0, m ? m->measure : 0);
    fprintf(f, "<rect x=\"%d\" y=\"50\" width=\"10\" height=\"10\" fill=\"#4e79a7\"/>"
               "<text x=\"%d\" y=\"59\">sign</text>\n", left, left + 14);
    fprintf(f, "<rect x=\"%d\" y=\"50\" width=\"10\" height=\"10\" fill=\"#f28e2b\"/>"
               "<text x=\"%d\" y=\"59\">verify</text>\n", left + 60, left + 74);
    /* x axis: grid lines, ticks and their labels, the unit. */
    for (double t = 0; t <= axis + step / 2; t += step) {
        double x = left + t / axis * plot;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                   "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>"
                   "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                x, top - 4, x, bottom, x, bottom, x, bottom + 5, x, bottom + 17, t);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left, bottom,
            left + plot, bottom);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">MiB/s</text>\n", left + plot / 2,
            bottom + 34);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left, top - 4,
            left, bottom);
    int y = top;
    for (size_t i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        if (r->bytes != bytes)
            continue;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + bar + 4);
        bench_xml_str(f, r->label);
        fputs("</text>\n", f);
        const double v[2] = {r->mibps_s, r->mibps_v};
        const double lo[2] = {mibps(bytes, r->sign_ms.max), mibps(bytes, r->ver_ms.max)};
        const double hi[2] = {mibps(bytes, r->sign_ms.min), mibps(bytes, r->ver_ms.min)};
        static const char *const colour[2] = {"#4e79a7", "#f28e2b"};
        for (int k = 0; k < 2; k++) {
            double w = v[k] / axis * plot, x0 = left + lo[k] / axis * plot, x1 = left + hi[k] / axis * plot;
            int yc = y + k * bar + (bar - 1) / 2;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
                       "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>"
                       "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>"
                       "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>"
                       "<text x=\"%.1f\" y=\"%d\">%.0f</text>\n",
                    left, y + k * bar, w, bar - 1, colour[k], x0, yc, x1, yc, x0, yc - 3, x0, yc + 3, x1,
                    yc - 3, x1, yc + 3, (x1 > left + w ? x1 : left + w) + 4, y + k * bar + bar - 2, v[k]);
        }
        y += group;
    }
    fputs("</svg>\n", f);
}
