/*
 * bench/bench_util.c — the deterministic payload, statistics, clocks and the memory probe, and the
 * option-parsing pieces shared by `dsig bench stream|sig`, `dsig bench dsig` and `dsig ping`.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_internal.h"
#include "dsig/io.h"

/* One splitmix64 step: a full-period, well-mixed 64-bit sequence (enough for reproducible bytes). */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t bench_rand_u64(uint64_t *state)
{
    return splitmix64(state);
}

/* Fill buf with the payload for `seed`: output words written little-endian, so the bytes do not
 * depend on the host and a short payload is a prefix of a long one. */
void bench_payload_fill(uint8_t *buf, size_t n, uint64_t seed)
{
    uint64_t st = seed;
    size_t i = 0;
    while (i < n) {
        uint64_t w = splitmix64(&st);
        for (unsigned b = 0; b < 8 && i < n; b++, i++)
            buf[i] = (uint8_t)(w >> (8 * b));
    }
}

/* qsort comparator for doubles. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median (mean of the two middle values for an even count), min and max; sorts v in place. */
bench_stat bench_stat_of(double *v, size_t n)
{
    bench_stat s = {0, 0, 0};
    if (n == 0)
        return s;
    qsort(v, n, sizeof *v, cmp_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    return s;
}

/* Nearest-rank percentile of sorted data: the ceil(q*n)-th smallest value. */
double bench_percentile(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return 0;
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

/* Median / p90 / p99 of v (sorted in place). */
bench_pctl bench_pctl_of(double *v, size_t n)
{
    bench_pctl s = {0, 0, 0};
    if (n == 0)
        return s;
    bench_stat b = bench_stat_of(v, n);
    s.median = b.median;
    s.p90 = bench_percentile(v, n, 0.90);
    s.p99 = bench_percentile(v, n, 0.99);
    return s;
}

/* Milliseconds from a clock. */
static double clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Wall-clock milliseconds (monotonic). */
double bench_now_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

/* CPU milliseconds consumed by the calling thread. */
double bench_cpu_ms(void)
{
    return clock_ms(CLOCK_THREAD_CPUTIME_ID);
}

/* Read one "Key:  N kB" field of /proc/self/status without touching the heap (so that the probe
 * itself does not grow what it measures). Returns -1 if unavailable. */
static long status_kib(const char *key)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    size_t klen = strlen(key);
    for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, klen) == 0 && p[klen] == ':')
            return strtol(p + klen + 1, NULL, 10);
    }
    return -1;
}

/* Reset the kernel's peak-RSS mark (VmHWM) to the current RSS: "5" to /proc/self/clear_refs. */
static int reset_peak_rss(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok;
}

/* Peak RSS of the process in KiB from getrusage (cannot be reset: the fallback). */
static long rusage_peak_kib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return ru.ru_maxrss;
}

/* Start a memory measurement: reset peaks (RSS and the library's allocation counter), note levels. */
void bench_mem_begin(bench_mem_probe *p)
{
    p->peak_reset = reset_peak_rss();
    p->rss_before_kib = status_kib("VmRSS");
    p->hwm_before_kib = p->peak_reset ? -1 : rusage_peak_kib();
    dsig_alloc_stats_reset();
    dsig_alloc_stats stats;
    dsig_alloc_stats_get(&stats);
    p->lib_before = stats.current;
}

/*
 * Growth in KiB since bench_mem_begin:
 *   max(0, VmHWM_after - VmRSS_before)              (peak RSS growth of the process)
 * + (library peak - library current before) / 1024  (bytes libdsig + OpenSSL allocated at peak)
 * Without clear_refs, the RSS term is max(0, ru_maxrss_after - ru_maxrss_before), a lower bound.
 */
double bench_mem_end(const bench_mem_probe *p)
{
    dsig_alloc_stats stats;
    dsig_alloc_stats_get(&stats);
    double lib = stats.peak > p->lib_before ? (double)(stats.peak - p->lib_before) / 1024.0 : 0.0;
    long growth = 0;
    if (p->peak_reset) {
        long hwm = status_kib("VmHWM");
        if (hwm >= 0 && p->rss_before_kib >= 0 && hwm > p->rss_before_kib)
            growth = hwm - p->rss_before_kib;
    } else {
        long after = rusage_peak_kib();
        if (after >= 0 && p->hwm_before_kib >= 0 && after > p->hwm_before_kib)
            growth = after - p->hwm_before_kib;
    }
    return (double)growth + lib;
}

/* Key seed: payload generator bytes under a domain constant, so keys and payload never coincide. */
void bench_key_seed(uint8_t out[32], uint64_t seed, uint64_t counter)
{
    bench_payload_fill(out, 32, seed ^ 0x6b65792d73656564ull ^ (counter * 0xd1b54a32d192ed03ull));
}

/* Algorithms whose keys are RSA moduli get one row per --rsa-bits size. */
int bench_alg_takes_bits(const dsig_alg *alg)
{
    const char *kty = dsig_alg_kty(alg);
    return kty && strcmp(kty, "RSA") == 0;
}

/* Generate the seeded key pair for one row (never timed by the callers except keygen rows). */
int bench_make_keys(const dsig_alg *alg, unsigned bits, uint64_t seed, uint64_t counter,
                    dsig_key **sign_key, dsig_key **verify_key)
{
    uint8_t ks[32];
    bench_key_seed(ks, seed, counter);
    dsig_keygen_params params = {.bits = bits, .seed = ks, .seed_len = sizeof ks};
    *sign_key = *verify_key = NULL;
    int rc = dsig_key_generate(sign_key, alg, &params);
    dsig_memzero(ks, sizeof ks);
    if (rc)
        return rc;
    if (dsig_alg_flags(alg) & DSIG_ALG_SYMMETRIC) {
        *verify_key = *sign_key;
        return 0;
    }
    rc = dsig_key_public(verify_key, *sign_key);
    if (rc) {
        dsig_key_free(*sign_key);
        *sign_key = NULL;
    }
    return rc;
}

/* Error code and the library's detail sentence. */
const char *bench_errstr(int rc, char *buf, size_t cap)
{
    const char *d = dsig_last_error_detail();
    snprintf(buf, cap, "%s%s%s", dsig_strerror(rc), d && *d ? ": " : "", d ? d : "");
    return buf;
}

/* mkdir -p. */
int bench_mkdir_p(const char *dir)
{
    char tmp[4096];
    if (strlen(dir) >= sizeof tmp)
        return -1;
    strcpy(tmp, dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* The growing text of bench_read_file. */
typedef struct file_text {
    char *buf;
    size_t len, max;
} file_text;

/* dsig_read_fd callback: append, or stop past the bound. */
static int file_text_add(void *arg, const uint8_t *data, size_t n)
{
    file_text *t = arg;
    if (n > t->max - t->len)
        return DSIG_E_TOO_LARGE;
    memcpy(t->buf + t->len, data, n);
    t->len += n;
    return DSIG_OK;
}

/* Read a whole small file (at most max bytes) into a NUL-terminated buffer. */
int bench_read_file(const char *path, size_t max, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    file_text t = {malloc(max + 1), 0, max};
    int rc = t.buf ? dsig_read_fd(fd, NULL, DSIG_IO_DEFAULT_CHUNK, file_text_add, &t, NULL) : DSIG_E_NOMEM;
    int e = errno;
    close(fd);
    if (rc != DSIG_OK) {
        if (t.buf)
            dsig_memzero(t.buf, t.len);
        free(t.buf);
        errno = rc == DSIG_E_TOO_LARGE ? EFBIG : rc == DSIG_E_NOMEM ? ENOMEM : (e ? e : EIO);
        return -1;
    }
    t.buf[t.len] = '\0';
    *out = t.buf;
    *len = t.len;
    return 0;
}

/* Local time stamp for output file names. */
void bench_timestamp(char *buf, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, cap, "%Y%m%d_%H%M%S", &tm);
}

void bench_utc_date(char *buf, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%d %H:%M UTC", &tm);
}

void bench_machine(char *buf, size_t cap)
{
    char model[160] = "unknown CPU", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(model, sizeof model, "%s", colon);
            break;
        }
    }
    if (f)
        fclose(f);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(buf, cap, "%s, %ld CPU%s", model, n, n == 1 ? "" : "s");
}

/* Format an error message into err and return -1 (so parsers can `return bench_fail(...)`). */
int bench_fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Unsigned decimal in [lo, hi], whole string; a sign or leading space is refused. */
int bench_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Decimal with an optional binary unit (K = 1024, M = 1024^2, G = 1024^3, as allowed by `units`). */
int bench_parse_scaled(const char *s, uint64_t bare, const char *units, uint64_t lo, uint64_t hi,
                       uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mult = bare;
    if (*end) {
        /* *end is not NUL, so neither is u: strchr cannot match the terminator. */
        const char u = (char)(*end | 0x20);
        const char *pos = strchr(units, u);
        if (!pos)
            return -1;
        mult = 1;
        for (const char *q = units; q <= pos; q++)
            mult *= 1024u;
        end++;
        if (*end && strcasecmp(end, "ib") != 0 && strcasecmp(end, "b") != 0)
            return -1;
    }
    /* v * mult in [lo, hi] without overflowing: v <= hi / mult  <=>  v * mult <= hi. */
    if (v > hi / mult || v * mult < lo)
        return -1;
    *out = v * mult;
    return 0;
}

/* "--name VALUE" / "--name=VALUE"; a longer option that merely starts with name is not a match. */
const char *bench_opt_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

/* Comma-separated list: strtok_r on a bounded copy, so empty items (",,") are skipped. */
int bench_parse_list(const bench_list_spec *ls, const char *s, void *out, size_t cap, size_t *n,
                     char *err, size_t len)
{
    char tmp[512];
    if (strlen(s) >= ls->max_len || ls->max_len > sizeof tmp)
        return bench_fail(err, len, "%s: list too long", ls->opt);
    strcpy(tmp, s);
    *n = 0;
    char *save = NULL;
    for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n >= cap)
            return bench_fail(err, len, "%s: at most %zu %s", ls->opt, cap, ls->unit);
        if (ls->parse(t, out, *n) != 0)
            return bench_fail(err, len, "%s: %s \"%s\"; valid: %s", ls->opt, ls->item, t, ls->valid);
        (*n)++;
    }
    if (*n == 0)
        return ls->example ? bench_fail(err, len, "%s: empty list; valid: %s", ls->opt, ls->example)
                           : bench_fail(err, len, "%s: empty list", ls->opt);
    return 0;
}

