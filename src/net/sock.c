/*
 * src/net/sock.c — socket set-up shared by the event loop (loop.c) and the blocking users of the
 * transport (the auditable applications, src/apps/): bind + listen with a stale Unix socket replaced,
 * TCP_NODELAY, and a blocking connect with a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/internal.h"
#include "net/net.h"

void dsig_net_socket_nodelay(int fd, int family)
{
    /* Frames are small and latency matters more than packet count. */
    if (family == AF_INET || family == AF_INET6) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
}

int dsig_net_socket_listen(const dsig_net_addr *addr, int nonblock, int *fd_out, dsig_net_addr *bound)
{
    int fd = socket(addr->family, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "net: socket: %s", strerror(errno));
    int one = 1;
    if (bound)
        *bound = *addr;
    if (addr->family == AF_UNIX) {
        const char *path = ((const struct sockaddr_un *)&addr->ss)->sun_path;
        struct stat sb;
        if (lstat(path, &sb) == 0 && S_ISSOCK(sb.st_mode))
            unlink(path); /* a stale socket of an earlier run (never another kind of file) */
    } else {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (addr->family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    }
    if (bind(fd, (const struct sockaddr *)&addr->ss, addr->len) < 0 || listen(fd, 128) < 0) {
        int e = errno;
        close(fd);
        char t[DSIG_NET_ADDR_TEXT_MAX] = "?";
        dsig_net_addr_format(addr, t, sizeof t);
        return dsig_fail(DSIG_E_IO, "net: cannot listen on %s: %s", t, strerror(e));
    }
    if (bound && addr->family != AF_UNIX) {
        socklen_t sl = sizeof bound->ss;
        getsockname(fd, (struct sockaddr *)&bound->ss, &sl);
        bound->len = sl;
    }
    *fd_out = fd;
    return DSIG_OK;
}

int dsig_net_socket_connect(const dsig_net_addr *addr, int timeout_ms, int *fd_out)
{
    char t[DSIG_NET_ADDR_TEXT_MAX] = "?";
    dsig_net_addr_format(addr, t, sizeof t);
    int fd = socket(addr->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "net: socket: %s", strerror(errno));
    dsig_net_socket_nodelay(fd, addr->family);
    int r;
    do
        r = connect(fd, (const struct sockaddr *)&addr->ss, addr->len);
    while (r < 0 && errno == EINTR);
    int e = r < 0 ? errno : 0;
    if (e == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int n;
        do
            n = poll(&p, 1, timeout_ms);
        while (n < 0 && errno == EINTR);
        socklen_t sl = sizeof e;
        if (n == 0)
            e = ETIMEDOUT;
        else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) != 0)
            e = errno;
    }
    if (e) {
        close(fd);
        return dsig_fail(DSIG_E_IO, "cannot connect to %s: %s", t, strerror(e));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        e = errno;
        close(fd);
        return dsig_fail(DSIG_E_IO, "cannot connect to %s: %s", t, strerror(e));
    }
    *fd_out = fd;
    return DSIG_OK;
}
