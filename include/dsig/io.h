/*
 * dsig/io.h — the one chunked reader used by the tool and the benchmarks.
 *
 * Reads a file descriptor to its end in chunks of at most `chunk` bytes through a fixed buffer, and
 * hands each chunk to a callback. Retries on EINTR, treats short reads as normal (pipes), and reports
 * read errors as DSIG_E_IO with errno in the detail. Memory: one buffer of `chunk` bytes.
 */
#ifndef DSIG_IO_H
#define DSIG_IO_H

#include "common.h"

DSIG_BEGIN_DECLS

#define DSIG_IO_DEFAULT_CHUNK (64u * 1024u)

/* Return DSIG_OK to continue; any other value stops the read and is returned by dsig_read_fd. */
typedef int (*dsig_chunk_fn)(void *arg, const uint8_t *data, size_t len);

/*
 * Read `fd` to its end in reads of at most `chunk` bytes into `buf` (at least `chunk` bytes; NULL: an
 * internal buffer of `chunk` bytes is allocated and freed), handing every chunk read to fn(arg, ...).
 * Retries on EINTR; a short read is not an error. *total (may be NULL) receives the bytes read, also
 * on failure.
 * @retval DSIG_OK     the end of the input was reached and every callback returned DSIG_OK.
 * @retval DSIG_E_ARG  chunk is 0 or fn is NULL.
 * @retval DSIG_E_NOMEM the internal buffer cannot be allocated.
 * @retval DSIG_E_IO   read() failed (the detail gives errno's text and the offset).
 * @retval other       the first value other than DSIG_OK a callback returned (the read stops there).
 */
DSIG_EXPORT int dsig_read_fd(int fd, uint8_t *buf, size_t chunk, dsig_chunk_fn fn, void *arg,
                             uint64_t *total);

DSIG_END_DECLS

#endif
