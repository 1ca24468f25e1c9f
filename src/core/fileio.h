/*
 * src/core/fileio.h — whole writes and bounded whole-file reads on file descriptors (io.c). Not
 * installed.
 */
#ifndef DSIG_CORE_FILEIO_H
#define DSIG_CORE_FILEIO_H

#include <stddef.h>

/*
 * Write all of buf to fd, retrying short writes and EINTR (a write of 0 bytes counts as EIO). *done
 * (may be NULL) receives the bytes written either way, so that a caller can cut a partial record back.
 * @retval 0      everything was written
 * @retval errno  of the failed write (not a DSIG_E_* code, and no detail is recorded)
 */
int dsig_write_all(int fd, const void *buf, size_t len, size_t *done);

/*
 * Read the whole regular file open on `fd` (at most `max` bytes) into a new NUL-terminated buffer
 * (*out, free with dsig_xfree(*out, *len + 1)). `what` names it in the error detail. fd is not closed.
 * @retval DSIG_OK          *out and *len are set
 * @retval DSIG_E_IO        not a regular file ("what: not a regular file"), or a short read
 * @retval DSIG_E_TOO_LARGE larger than max ("what: larger than N bytes")
 * @retval DSIG_E_NOMEM     out of memory
 */
int dsig_read_whole_fd(int fd, const char *what, size_t max, char **out, size_t *len);

#endif
