/*
 * src/net/addr.c — transport addresses: "tcp:HOST:PORT" (numeric IPv4, or [IPv6]) and "unix:PATH".
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "core/internal.h"
#include "net/net.h"

/* Strict decimal port 0..65535. */
static int parse_port(const char *s, uint16_t *port)
{
    if (!*s || strlen(s) > 5)
        return dsig_fail(DSIG_E_ARG, "net: bad port \"%s\"", s);
    unsigned v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return dsig_fail(DSIG_E_ARG, "net: bad port \"%s\"", s);
        v = v * 10 + (unsigned)(*p - '0');
    }
    if (v > 65535)
        return dsig_fail(DSIG_E_ARG, "net: port %u out of range", v);
    *port = (uint16_t)v;
    return DSIG_OK;
}

/* Parse the text form of an address; see net.h. */
int dsig_net_addr_parse(const char *text, dsig_net_addr *out)
{
    if (!text || !out)
        return dsig_fail(DSIG_E_ARG, "net: NULL address");
    memset(out, 0, sizeof *out);
    if (strncmp(text, "unix:", 5) == 0) {
        const char *path = text + 5;
        struct sockaddr_un *un = (struct sockaddr_un *)&out->ss;
        size_t n = strlen(path);
        if (n == 0 || n >= sizeof un->sun_path)
            return dsig_fail(DSIG_E_ARG, "net: Unix socket path empty or longer than %zu bytes",
                             sizeof un->sun_path - 1);
        un->sun_family = AF_UNIX;
        memcpy(un->sun_path, path, n + 1);
        out->family = AF_UNIX;
        out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
        return DSIG_OK;
    }
    if (strncmp(text, "tcp:", 4) != 0)
        return dsig_fail(DSIG_E_ARG, "net: address \"%s\" must start with tcp: or unix:", text);
    const char *host = text + 4, *colon;
    char buf[64];
    size_t hl;
    int v6 = 0;
    if (*host == '[') {
        const char *end = strchr(host, ']');
        if (!end || end[1] != ':')
            return dsig_fail(DSIG_E_ARG, "net: bad IPv6 address in \"%s\" (want tcp:[ADDR]:PORT)", text);
        host++;
        hl = (size_t)(end - host);
        colon = end + 1;
        v6 = 1;
    } else {
        colon = strrchr(host, ':');
        if (!colon)
            return dsig_fail(DSIG_E_ARG, "net: missing port in \"%s\"", text);
        hl = (size_t)(colon - host);
    }
    if (hl == 0 || hl >= sizeof buf)
        return dsig_fail(DSIG_E_ARG, "net: bad host in \"%s\"", text);
    memcpy(buf, host, hl);
    buf[hl] = 0;
    uint16_t port;
    int rc = parse_port(colon + 1, &port);
    if (rc != DSIG_OK)
        return rc;
    if (v6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out->ss;
        if (inet_pton(AF_INET6, buf, &s6->sin6_addr) != 1)
            return dsig_fail(DSIG_E_ARG, "net: \"%s\" is not a numeric IPv6 address", buf);
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(port);
        out->family = AF_INET6;
        out->len = sizeof *s6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&out->ss;
        if (inet_pton(AF_INET, buf, &s4->sin_addr) != 1)
            return dsig_fail(DSIG_E_ARG, "net: \"%s\" is not a numeric IPv4 address", buf);
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        out->family = AF_INET;
        out->len = sizeof *s4;
    }
    return DSIG_OK;
}

/* Text form of an address; see net.h. */
int dsig_net_addr_format(const dsig_net_addr *a, char *buf, size_t cap)
{
    char host[INET6_ADDRSTRLEN];
    int n;
    if (!a || !buf)
        return dsig_fail(DSIG_E_ARG, "net: NULL address");
    if (a->family == AF_UNIX) {
        const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;
        n = snprintf(buf, cap, "unix:%s", un->sun_path);
    } else if (a->family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&a->ss;
        inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
        n = snprintf(buf, cap, "tcp:%s:%u", host, ntohs(s4->sin_port));
    } else if (a->family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&a->ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
        n = snprintf(buf, cap, "tcp:[%s]:%u", host, ntohs(s6->sin6_port));
    } else {
        return dsig_fail(DSIG_E_ARG, "net: unknown address family %d", a->family);
    }
    if (n < 0 || (size_t)n >= cap)
        return dsig_fail(DSIG_E_BUFFER, "net: address text does not fit in %zu bytes", cap);
    return DSIG_OK;
}
