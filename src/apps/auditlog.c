/*
 * src/apps/auditlog.c — the request log's record format (apps_internal.h): building a record with its
 * chain value, and a bounded sequential reader for the server's recovery, the auditor and replays.
 * Durability is not here: records are appended through the shared durable log (src/core/applog.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/apps_internal.h"
#include "core/bytes.h"
#include "core/internal.h"

static const uint8_t REC_MAGIC[4] = {'D', 'S', 'A', 'L'};
static const char CHAIN_LABEL[] = "DSig-app-log-chain";
#define REC_VERSION 1u

void apps_rec_chain(const uint8_t prev[32], const uint8_t *rec, size_t len, uint8_t out[32])
{
    struct iovec iov[3] = {{(void *)CHAIN_LABEL, sizeof CHAIN_LABEL - 1}, {(void *)prev, 32}, {(void *)rec, len}};
    apps_hash(out, iov, 3);
}

int apps_rec_build(apps_rec *r, const uint8_t prev[32], uint8_t *out, size_t cap, size_t *len)
{
    if (r->req_len > APPS_MSG_HDR + APPS_MAX_BODY || r->sig_len > APPS_MAX_SIG)
        return dsig_fail(DSIG_E_TOO_LARGE, "log record: request or signature too large");
    size_t total = APPS_REC_HDR + r->req_len + r->sig_len + 32;
    if (total > cap)
        return dsig_fail(DSIG_E_BUFFER, "log record: buffer too small");
    memcpy(out, REC_MAGIC, 4);
    out[4] = REC_VERSION;
    out[5] = (uint8_t)r->scheme;
    out[6] = (uint8_t)r->app;
    out[7] = 0;
    dsig_store_be32(out + 8, (uint32_t)total);
    dsig_store_be64(out + 12, r->index);
    dsig_store_be64(out + 20, r->client);
    dsig_store_be64(out + 28, r->seq);
    dsig_store_be64(out + 36, r->time_ns);
    dsig_store_be32(out + 44, (uint32_t)r->req_len);
    dsig_store_be32(out + 48, (uint32_t)r->sig_len);
    memcpy(out + APPS_REC_HDR, r->req, r->req_len);
    if (r->sig_len)
        memcpy(out + APPS_REC_HDR + r->req_len, r->sig, r->sig_len);
    apps_rec_chain(prev, out, total - 32, r->chain);
    memcpy(out + total - 32, r->chain, 32);
    *len = total;
    return DSIG_OK;
}

int apps_logrd_open(apps_logrd *rd, const char *path)
{
    memset(rd, 0, sizeof *rd);
    rd->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (rd->fd < 0)
        return dsig_fail(DSIG_E_IO, "log \"%s\": %s", path, strerror(errno));
    struct stat st;
    if (fstat(rd->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(rd->fd);
        rd->fd = -1;
        return dsig_fail(DSIG_E_IO, "log \"%s\": not a regular file", path);
    }
    rd->size = (uint64_t)st.st_size;
    if (!(rd->buf = malloc(APPS_REC_MAX))) {
        close(rd->fd);
        rd->fd = -1;
        return dsig_fail(DSIG_E_NOMEM, "log: out of memory");
    }
    return DSIG_OK;
}

void apps_logrd_close(apps_logrd *rd)
{
    if (rd->fd >= 0)
        close(rd->fd);
    rd->fd = -1;
    free(rd->buf);
    rd->buf = NULL;
}

/* Read exactly n bytes at `off`; the number read (short at the end of the file) or -1. */
static ssize_t read_at(int fd, uint8_t *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int apps_logrd_next(apps_logrd *rd, apps_rec *r, char *what, size_t cap, int *torn)
{
    *torn = 0;
    rd->rec_offset = rd->offset;
    if (rd->offset >= rd->size)
        return 0;
    ssize_t got = read_at(rd->fd, rd->buf, APPS_REC_HDR, rd->offset);
    if (got < 0)
        return dsig_fail(DSIG_E_IO, "log: read: %s", strerror(errno));
    if ((size_t)got < APPS_REC_HDR) {
        *torn = 1;
        snprintf(what, cap, "truncated record: %zd of at least %u header bytes before the end of the file", got,
                 APPS_REC_HDR);
        return DSIG_E_FORMAT;
    }
    const uint8_t *h = rd->buf;
    if (memcmp(h, REC_MAGIC, 4) != 0) {
        snprintf(what, cap, "not a log record (bad magic)");
        return DSIG_E_FORMAT;
    }
    if (h[4] != REC_VERSION || h[7] != 0) {
        snprintf(what, cap, "record version %u / reserved byte %u not understood", h[4], h[7]);
        return DSIG_E_FORMAT;
    }
    uint32_t total = dsig_load_be32(h + 8);
    uint32_t rl = dsig_load_be32(h + 44), sl = dsig_load_be32(h + 48);
    if (rl < APPS_MSG_HDR || rl > APPS_MSG_HDR + APPS_MAX_BODY || sl > APPS_MAX_SIG ||
        total != APPS_REC_HDR + (uint64_t)rl + sl + 32) {
        snprintf(what, cap, "record length %u does not match its request (%u) and signature (%u) lengths", total, rl,
                 sl);
        return DSIG_E_FORMAT;
    }
    got = read_at(rd->fd, rd->buf, total, rd->offset);
    if (got < 0)
        return dsig_fail(DSIG_E_IO, "log: read: %s", strerror(errno));
    if ((size_t)got < total) {
        *torn = 1;
        snprintf(what, cap, "truncated record: %zd of its %u bytes before the end of the file", got, total);
        return DSIG_E_FORMAT;
    }
    r->scheme = h[5];
    r->app = h[6];
    r->index = dsig_load_be64(h + 12);
    r->client = dsig_load_be64(h + 20);
    r->seq = dsig_load_be64(h + 28);
    r->time_ns = dsig_load_be64(h + 36);
    r->req = rd->buf + APPS_REC_HDR;
    r->req_len = rl;
    r->sig = r->req + rl;
    r->sig_len = sl;
    memcpy(r->chain, rd->buf + total - 32, 32);
    rd->rec_offset = rd->offset;
    rd->rec_len = total;
    rd->offset += total;
    return 1;
}
