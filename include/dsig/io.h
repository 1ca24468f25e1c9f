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

/* buf/cap may be NULL/0: an internal buffer of `chunk` bytes is then allocated. *total may be NULL. */
DSIG_EXPORT int dsig_read_fd(int fd, uint8_t *buf, size_t chunk, dsig_chunk_fn fn, void *arg,
                             uint64_t *total);

DSIG_END_DECLS

#endif
