/* The one chunked reader (see dsig/io.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

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
