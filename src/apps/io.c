/*
 * src/apps/io.c — blocking framed I/O on a stream socket for the applications' client and server
 * threads: frames in the src/net format (12-byte header, validated before any payload is buffered),
 * decoded by the transport's incremental decoder from a read buffer, with an idle timeout before a
 * frame and a stall timeout inside one (a peer that stops in the middle of a frame is dropped).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "apps/apps_internal.h"
#include "core/internal.h"

#define RBUF 65536u

int apps_io_init(apps_io *io, int fd)
{
    memset(io, 0, sizeof *io);
    io->fd = fd;
    io->rbuf = malloc(RBUF);
    io->frame = malloc(APPS_MAX_FRAME);
    if (!io->rbuf || !io->frame) {
        free(io->rbuf);
        free(io->frame);
        io->rbuf = io->frame = NULL;
        return dsig_fail(DSIG_E_NOMEM, "connection: out of memory");
    }
    io->rcap = RBUF;
    dsig_net_decoder_init(&io->dec, APPS_MAX_FRAME);
    return DSIG_OK;
}

void apps_io_clear(apps_io *io)
{
    if (io->fd >= 0)
        close(io->fd);
    io->fd = -1;
    dsig_net_decoder_clear(&io->dec);
    free(io->rbuf);
    free(io->frame);
    io->rbuf = io->frame = NULL;
}

/* Decoder callback: copy the frame out and stop at its boundary. */
static int on_frame(void *arg, uint8_t type, const uint8_t *payload, uint32_t len)
{
    apps_io *io = arg;
    if (len)
        memcpy(io->frame, payload, len);
    io->frame_len = len;
    io->frame_type = type;
    io->got = 1;
    return 1;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int apps_io_read(apps_io *io, int idle_ms, int part_ms, uint8_t *type, const uint8_t **payload, uint32_t *len)
{
    int64_t deadline = idle_ms < 0 ? -1 : now_ms() + idle_ms;
    int started = dsig_net_decoder_midframe(&io->dec);
    for (;;) {
        if (io->rlen) {
            io->got = 0;
            size_t used = 0;
            int rc = dsig_net_decoder_feed(&io->dec, io->rbuf + io->roff, io->rlen, on_frame, io, &used);
            io->roff += used;
            io->rlen -= used;
            if (io->got) {
                *type = io->frame_type;
                *payload = io->frame;
                *len = io->frame_len;
                return DSIG_OK;
            }
            if (rc < 0)
                return dsig_fail(rc, "connection: malformed frame header (%s)", dsig_strerror(rc));
            if (!started && dsig_net_decoder_midframe(&io->dec)) {
                started = 1;
                deadline = now_ms() + part_ms;
            }
        }
        io->roff = 0;
        int wait = deadline < 0 ? -1 : (int)(deadline - now_ms());
        if (deadline >= 0 && wait <= 0) {
            if (started)
                return dsig_fail(DSIG_E_IO, "connection: the peer stalled in the middle of a frame for %d ms", part_ms);
            return dsig_fail(DSIG_E_WOULD_BLOCK, "connection: nothing received for %d ms", idle_ms);
        }
        struct pollfd p = {.fd = io->fd, .events = POLLIN};
        int n = poll(&p, 1, wait);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return dsig_fail(DSIG_E_IO, "connection: poll: %s", strerror(errno));
        if (n == 0)
            continue; /* the deadline check above reports it */
        ssize_t r = read(io->fd, io->rbuf, io->rcap);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r < 0)
            return dsig_fail(DSIG_E_IO, "connection: read: %s", strerror(errno));
        if (r == 0)
            return dsig_fail(DSIG_E_IO, started || dsig_net_decoder_midframe(&io->dec)
                                            ? "connection closed in the middle of a frame"
                                            : "connection closed");
        io->rlen = (size_t)r;
    }
}

int apps_io_write(int fd, uint8_t type, const struct iovec *iov, int n)
{
    struct iovec v[8];
    uint8_t hdr[DSIG_NET_HDR_BYTES];
    if (n < 0 || n > 7)
        return dsig_fail(DSIG_E_ARG, "connection: too many pieces");
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        v[i + 1] = iov[i];
        total += iov[i].iov_len;
    }
    if (total > APPS_MAX_FRAME)
        return dsig_fail(DSIG_E_TOO_LARGE, "connection: frame of %zu bytes", total);
    dsig_net_frame_header(hdr, type, (uint32_t)total);
    v[0].iov_base = hdr;
    v[0].iov_len = sizeof hdr;
    int cnt = n + 1;
    struct iovec *cur = v;
    while (cnt > 0) {
        struct msghdr m = {.msg_iov = cur, .msg_iovlen = (size_t)cnt};
        ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return dsig_fail(DSIG_E_IO, "connection: write: %s", strerror(errno));
        size_t done = (size_t)w;
        while (cnt > 0 && done >= cur->iov_len) {
            done -= cur->iov_len;
            cur++;
            cnt--;
        }
        if (cnt > 0) {
            cur->iov_base = (uint8_t *)cur->iov_base + done;
            cur->iov_len -= done;
        }
    }
    return DSIG_OK;
}
