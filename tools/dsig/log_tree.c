/*
 * tools/dsig/log_tree.c — what `dsig log` verify and prove share: the log files read record by record
 * into an RFC 9162 tree (dsig/tlog.h), the subtree store for proofs, the service's tree file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log_cmd.h"

void log_hex32(char out[65], const uint8_t in[32])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[in[i] >> 4];
        out[2 * i + 1] = hx[in[i] & 15];
    }
    out[64] = '\0';
}

int log_unhex32(const char *s, uint8_t out[32])
{
    if (!s || strlen(s) != 64)
        return -1;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

int log_store_put(void *arg, unsigned level, uint64_t index, const uint8_t h[32])
{
    (void)level;
    (void)index;
    struct store *s = arg;
    if (s->n == s->cap) {
        uint64_t cap = s->cap ? 2 * s->cap : 4096;
        void *p = realloc(s->h, cap * 32);
        if (!p)
            return -1;
        s->h = p;
        s->cap = cap;
    }
    memcpy(s->h[s->n++], h, 32);
    return 0;
}

int log_store_get(void *arg, unsigned level, uint64_t index, uint8_t out[32])
{
    struct store *s = arg;
    uint64_t pos = dsig_tlog_node_pos(level, index);
    if (pos >= s->n)
        return DSIG_E_ARG;
    memcpy(out, s->h[pos], 32);
    return DSIG_OK;
}

/* The service's side file of subtree hashes (LOG.tree), read through a FILE. */
int log_file_get(void *arg, unsigned level, uint64_t index, uint8_t out[32])
{
    FILE *f = arg;
    uint64_t pos = dsig_tlog_node_pos(level, index);
    if (fseeko(f, (off_t)(pos * 32), SEEK_SET) != 0 || fread(out, 1, 32, f) != 32)
        return DSIG_E_IO;
    return DSIG_OK;
}

/* The "index" a record starts with, or -1. */
int64_t log_record_index(const char *p, size_t n)
{
    static const char pre[] = "{\"index\":";
    if (n < sizeof pre || memcmp(p, pre, sizeof pre - 1) != 0)
        return -1;
    int64_t v = 0;
    size_t i = sizeof pre - 1, d = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9' && d < 18; i++, d++)
        v = v * 10 + (p[i] - '0');
    return d ? v : -1;
}

/* Walk the records of the files in order: each line a leaf; the index check; a callback per record.
 * Returns 0, 1 (a bad record, reported) or -1 (error, reported). */

int log_walk(char **files, int nfiles, dsig_tlog_range *r, struct store *st, record_fn fn, void *arg)
{
    char *line = NULL;
    size_t cap = 0;
    int status = 0;
    for (int fi = 0; fi < nfiles && status == 0; fi++) {
        FILE *f = fopen(files[fi], "rb");
        if (!f) {
            cli_err_sys(errno, "log '%s'", files[fi]);
            status = -1;
            break;
        }
        ssize_t got;
        uint64_t lineno = 0;
        while ((got = getline(&line, &cap, f)) > 0) {
            lineno++;
            uint64_t i = r->size;
            size_t n = (size_t)got;
            if (line[n - 1] != '\n') {
                cli_err("%s:%llu: record %llu is truncated (the log ends inside it, without a newline)", files[fi],
                        (unsigned long long)lineno, (unsigned long long)i);
                status = 1;
                break;
            }
            n--;
            int64_t idx = log_record_index(line, n);
            if (idx >= 0 && (uint64_t)idx != i) {
                if ((uint64_t)idx > i)
                    cli_err("%s:%llu: record %llu is missing (deleted): this line holds record %lld", files[fi],
                            (unsigned long long)lineno, (unsigned long long)i, (long long)idx);
                else
                    cli_err("%s:%llu: record %lld is out of place (reordered or repeated): record %llu belongs here",
                            files[fi], (unsigned long long)lineno, (long long)idx, (unsigned long long)i);
                status = 1;
                break;
            }
            uint8_t leaf[32];
            dsig_tlog_leaf_hash(line, n, leaf);
            if (dsig_tlog_range_append(r, leaf, st ? log_store_put : NULL, st) != DSIG_OK) {
                cli_err("out of memory");
                status = -1;
                break;
            }
            if (fn && (status = fn(arg, i, line, n, leaf, files[fi], lineno)) != 0)
                break;
        }
        if (status == 0 && ferror(f)) {
            cli_err_sys(errno, "log '%s'", files[fi]);
            status = -1;
        }
        fclose(f);
    }
    free(line);
    return status;
}

char *log_beside(const char *path, const char *suffix)
{
    size_t a = strlen(path), b = strlen(suffix);
    char *p = malloc(a + b + 1);
    if (p) {
        memcpy(p, path, a);
        memcpy(p + a, suffix, b + 1);
    }
    return p;
}
