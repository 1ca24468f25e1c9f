/*
 * Messages and small parsers shared by the commands. Every failure message has the form
 * "dsig: <what>: <status sentence>: <detail>" so that a user sees which file or member was wrong.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dsig/node.h"

int cli_quiet = 0;

/* The last failure message, without the "dsig: " prefix (verify --json reports it as "reason"). */
static char last_error[1024];

const char *cli_last_error(void)
{
    return last_error;
}

/* Record a failure message (text, then an optional suffix) and print it as one "dsig: " line. */
static void report(const char *fmt, va_list ap, const char *suffix)
{
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    size_t n = strlen(last_error);
    snprintf(last_error + n, sizeof last_error - n, "%s", suffix ? suffix : "");
    fprintf(stderr, "dsig: %s\n", last_error);
}

void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(fmt, ap, NULL);
    va_end(ap);
}

/* Report a library failure with the library's status sentence and per-thread detail. */
void cli_err_lib(int rc, const char *fmt, ...)
{
    char suffix[640];
    const char *detail = dsig_last_error_detail();
    if (detail && *detail)
        snprintf(suffix, sizeof suffix, ": %s: %s", dsig_strerror(rc), detail);
    else
        snprintf(suffix, sizeof suffix, ": %s", dsig_strerror(rc));
    va_list ap;
    va_start(ap, fmt);
    report(fmt, ap, suffix);
    va_end(ap);
}

/* Report a system-call failure as an I/O error with errno's text. */
void cli_err_sys(int errnum, const char *fmt, ...)
{
    char suffix[320];
    snprintf(suffix, sizeof suffix, ": %s: %s", dsig_strerror(DSIG_E_IO), strerror(errnum));
    va_list ap;
    va_start(ap, fmt);
    report(fmt, ap, suffix);
    va_end(ap);
}

/* Report a usage error of a command and point at its help. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    fprintf(stderr, "dsig%s%s: %s", cmd ? " " : "", cmd ? cmd : "", last_error);
    fprintf(stderr, "\nTry 'dsig %s%s'.\n", cmd ? cmd : "help", cmd ? " --help" : "");
    return CLI_EXIT_ERROR;
}

/* A line for the user on stderr, silenced by --quiet. */
void cli_note(const char *fmt, ...)
{
    if (cli_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Look an algorithm up in the registry by its JOSE name. */
const dsig_alg *cli_alg_lookup(const char *cmd, const char *name)
{
    const dsig_alg *alg = dsig_alg_by_name(name);
    if (!alg)
        cli_usage_error(cmd, "unknown algorithm '%s' (see 'dsig list --names')", name);
    return alg;
}

/* Map a --format name to the library's format. */
int cli_parse_format(const char *cmd, const char *s, dsig_format *out)
{
    static const struct {
        const char *name;
        dsig_format fmt;
    } names[] = {
        {"jws", DSIG_FMT_JWS}, {"json", DSIG_FMT_JSON}, {"compact", DSIG_FMT_COMPACT_B64},
        {"raw", DSIG_FMT_RAW},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].fmt;
            return 0;
        }
    cli_usage_error(cmd, "unknown format '%s' (expected jws, json, compact or raw)", s);
    return -1;
}

/* Parse a decimal unsigned option value, refusing signs, junk and overflow. */
int cli_parse_uint(const char *cmd, const char *opt, const char *s, unsigned *out)
{
    if (*s < '0' || *s > '9') {
        cli_usage_error(cmd, "option '%s' needs a positive decimal number, got '%s'", opt, s);
        return -1;
    }
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > 1000000u) {
        cli_usage_error(cmd, "option '%s' needs a positive decimal number, got '%s'", opt, s);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

/* Value of one hex digit, or -1; without branches on the digit (a --seed is the key). */
static int hexval(char ch)
{
    int c = (unsigned char)ch;
    int d = c - '0', l = (c | 0x20) - 'a';            /* digit 0..9, letter 0..5 (either case) */
    int dm = ~((d | (9 - d)) >> (sizeof(int) * 8 - 1)); /* all ones when 0 <= d <= 9 */
    int lm = ~((l | (5 - l)) >> (sizeof(int) * 8 - 1)); /* all ones when 0 <= l <= 5 */
    return (d & dm) | ((l + 10) & lm) | ~(dm | lm);
}

/* Report the first character of `s` that is not a hex digit, by its position (1-based, counted in
 * characters) and in full — an ellipsis pasted from a document is three bytes of UTF-8. */
static void report_not_hex(const char *cmd, const char *opt, const char *s, size_t at)
{
    size_t col = 1;
    for (size_t i = 0; i < at; i++)
        col += ((unsigned char)s[i] & 0xc0) != 0x80; /* UTF-8 continuation bytes are no characters */
    size_t n = 1;
    while (s[at + n] && ((unsigned char)s[at + n] & 0xc0) == 0x80 && n < 4)
        n++;
    cli_usage_error(cmd, "option '%s': character %zu ('%.*s') is not a hex digit; give every digit "
                         "(0-9, a-f), e.g. %s 000102030405060708090a0b0c0d0e0f",
                    opt, col, (int)n, s + at, opt);
}

/* Decode a hex option value (even length, hex digits only) into a malloc'ed buffer. */
int cli_parse_hex(const char *cmd, const char *opt, const char *s, uint8_t **out, size_t *len)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        if (hexval(s[i]) < 0) {
            report_not_hex(cmd, opt, s, i);
            return -1;
        }
    if (n == 0 || n % 2) {
        cli_usage_error(cmd, "option '%s' has %zu hex digits; it needs a positive even number (two per "
                             "byte)", opt, n);
        return -1;
    }
    uint8_t *b = malloc(n / 2);
    if (!b) {
        cli_err_sys(ENOMEM, "%s", opt);
        return -1;
    }
    for (size_t i = 0; i < n / 2; i++)
        b[i] = (uint8_t)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
    *out = b;
    *len = n / 2;
    return 0;
}

/* A JSON string literal (RFC 8259 escapes), or null for NULL. */
void cli_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

const char *cli_key_id(const dsig_key *key, char buf[DSIG_THUMBPRINT_LEN])
{
    if (dsig_key_kid(key))
        return dsig_key_kid(key);
    return dsig_jwk_thumbprint(key, buf) == DSIG_OK ? buf : NULL;
}

/* Wipe a buffer that may hold secrets, then free it. */
void cli_free_secret(void *p, size_t n)
{
    if (!p)
        return;
    dsig_memzero(p, n);
    free(p);
}

/* Text output ends with one newline: JWK text has none, PEM text already has it. */
int cli_needs_newline(const char *text, size_t len)
{
    return len == 0 || text[len - 1] != '\n';
}

/* "2,3" -> node ids (1..2^63-1, at most cap). Number of ids, or -1. */
int cli_parse_ids(const char *s, uint64_t *ids, int cap)
{
    int n = 0;
    while (*s) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || errno || v == 0 || v > DSIG_NODE_MAX_ID || n == cap || (*end && *end != ','))
            return -1;
        ids[n++] = (uint64_t)v;
        s = *end ? end + 1 : end;
    }
    return n ? n : -1;
}
