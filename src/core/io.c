/* The one chunked reader (see dsig/io.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "core/layer_api.h"

/* The one write loop: short writes are continued, EINTR retried, a 0-byte write is an error. */
DSIG_LAYER_API int dsig_write_all(int fd, const void *buf, size_t len, size_t *done)
{
    const uint8_t *p = buf;
    size_t off = 0;
    int e = 0;
    while (off < len) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            e = w < 0 && errno ? errno : EIO;
            break;
        }
        off += (size_t)w;
    }
    if (done)
        *done = off;
    return e;
}

int dsig_read_fd(int fd, uint8_t *buf, size_t chunk, dsig_chunk_fn fn, void *arg, uint64_t *total)
{
    if (chunk == 0 || !fn)
        return dsig_fail(DSIG_E_ARG, "dsig_read_fd: chunk size must be positive");
    uint8_t *own = NULL;
    if (!buf) {
        own = dsig_malloc(chunk);
        if (!own)
            return dsig_fail(DSIG_E_NOMEM, "out of memory for a %zu-byte read buffer", chunk);
        buf = own;
    }
    uint64_t n_total = 0;
    int rc = DSIG_OK;
    for (;;) {
        ssize_t r = read(fd, buf, chunk);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = dsig_fail(DSIG_E_IO, "read failed after %llu bytes: %s",
                           (unsigned long long)n_total, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        n_total += (uint64_t)r;
        if ((rc = fn(arg, buf, (size_t)r)) != DSIG_OK)
            break;
    }
    if (own)
        dsig_xfree(own, 0);
    if (total)
        *total = n_total;
    return rc;
}

/* One bounded whole-file read for the small files the service loads (configuration, JWKs, TLS PEM). */
DSIG_LAYER_API int dsig_read_whole_fd(int fd, const char *what, size_t max, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return dsig_fail(DSIG_E_IO, "%s: not a regular file", what);
    if ((uint64_t)st.st_size > max)
        return dsig_fail(DSIG_E_TOO_LARGE, "%s: larger than %zu bytes", what, max);
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = dsig_malloc(n + 1);
    if (!buf)
        return dsig_fail(DSIG_E_NOMEM, "%s: out of memory", what);
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got != n) { /* the file shrank, or a read error */
        dsig_xfree(buf, n + 1);
        return dsig_fail(DSIG_E_IO, "%s: cannot read the whole file", what);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return DSIG_OK;
}

int dsig_pread_all(int fd, void *buf, size_t len, off_t off)
{
    uint8_t *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, p + done, len - done, off + (off_t)done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno ? errno : EIO;
        }
        if (r == 0)
            return EIO;
        done += (size_t)r;
    }
    return 0;
}
