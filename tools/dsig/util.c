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

/* Report a library failure with the library's status sentence and per-thread detail. */
void cli_err_lib(int rc, const char *fmt, ...)
{
    va_list ap;
    fputs("dsig: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const char *detail = dsig_last_error_detail();
    if (detail && *detail)
        fprintf(stderr, ": %s: %s\n", dsig_strerror(rc), detail);
    else
        fprintf(stderr, ": %s\n", dsig_strerror(rc));
}

/* Report a system-call failure as an I/O error with errno's text. */
void cli_err_sys(int errnum, const char *fmt, ...)
{
    va_list ap;
    fputs("dsig: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ": %s: %s\n", dsig_strerror(DSIG_E_IO), strerror(errnum));
}

/* Report a usage error of a command and point at its help. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "dsig%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
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

/* Value of one hex digit, or -1. */
static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decode a hex option value (even length, hex digits only) into a malloc'ed buffer. */
int cli_parse_hex(const char *cmd, const char *opt, const char *s, uint8_t **out, size_t *len)
{
    size_t n = strlen(s);
    if (n == 0 || n % 2) {
        cli_usage_error(cmd, "option '%s' needs an even number of hex digits", opt);
        return -1;
    }
    uint8_t *b = malloc(n / 2);
    if (!b) {
        cli_err_sys(ENOMEM, "%s", opt);
        return -1;
    }
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            cli_free_secret(b, n / 2);
            cli_usage_error(cmd, "option '%s': '%c%c' at offset %zu is not hex", opt, s[2 * i],
                            s[2 * i + 1], 2 * i);
            return -1;
        }
        b[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = b;
    *len = n / 2;
    return 0;
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
