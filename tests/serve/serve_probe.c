/*
 * tests/serve/serve_probe.c — a raw-socket HTTP client for the `dsig serve` tests: exact bytes on the wire
 * (the framing matrix) and hostile clients on loopback, each bounded in connections and time.
 *
 *   serve_probe send PORT BYTES [SRC]
 *       send BYTES (C escapes: \r \n \t \0 \\ \xHH) on one connection from source address SRC (default
 *       127.0.0.1), read until the server closes, or is idle 0.5 s after answering (5 s before); print
 *       "STATUS closed|open N" (STATUS "-" when no response came; N status lines seen).
 *   serve_probe storm PORT MODE N SECS SRC [BYTES]
 *       attack from SRC while a legitimate client (127.0.0.1) asks GET /healthz on a new connection
 *       every 50 ms for SECS seconds, then print
 *           "legit OK/TOTAL max_ms M" and "attack ... close_wait C open O"
 *       where MODE is
 *         hitrun     N connections, each sending BYTES (default: half a request head) and closing at once;
 *                    C = server sockets in CLOSE-WAIT once at most 5 are, or 10 s after the last
 *                    connection, and "released_ms R": how long after the last connection that was;
 *         slowloris  N connections sending a request line, then one header line a second, forever;
 *                    O = how many the server has not closed at the end;
 *         slowbody   N connections sending a POST head (BYTES) and then one body byte every 100 ms;
 *                    O as for slowloris;
 *         idle       N connections that connect and send nothing; O as for slowloris.
 * SERVE_PROBE_LEGIT=0 leaves the legitimate client out (its plain HTTP would not work on a TLS port).
 * Exit status 0 unless a socket call failed (the shell test judges the numbers).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 2000

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Decode C escapes into out (at most cap bytes); the length. */
static size_t unescape(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n < cap; s++) {
        if (*s != '\\' || !s[1]) {
            out[n++] = *s;
            continue;
        }
        s++;
        switch (*s) {
        case 'r': out[n++] = '\r'; break;
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case '0': out[n++] = '\0'; break;
        case 'x': {
            char hex[3] = {s[1], s[1] ? s[2] : 0, 0};
            out[n++] = (char)strtol(hex, NULL, 16);
            s += 2;
            break;
        }
        default: out[n++] = *s; break;
        }
    }
    return n;
}

/* A TCP connection to 127.0.0.1:port from src (blocking); -1 on failure. */
static int dial(unsigned port, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    if (src) {
        inet_pton(AF_INET, src, &a.sin_addr);
        if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
            close(fd);
            return -1;
        }
    }
    a.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read until the peer closes or nothing comes for idle_ms (first_ms for the first byte); returns the
 * bytes (NUL-terminated) and whether the peer closed. */
static size_t drain(int fd, char *buf, size_t cap, unsigned first_ms, unsigned idle_ms, int *closed)
{
    size_t n = 0;
    *closed = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)(n ? idle_ms : first_ms)) <= 0)
            break;
        char tmp[4096];
        ssize_t r = recv(fd, tmp, sizeof tmp, 0);
        if (r <= 0) {
            *closed = 1;
            break;
        }
        size_t k = (size_t)r < cap - 1 - n ? (size_t)r : cap - 1 - n;
        memcpy(buf + n, tmp, k);
        n += k;
    }
    buf[n] = '\0';
    return n;
}

static int cmd_send(unsigned port, const char *bytes, const char *src)
{
    static char req[65536], resp[65536];
    size_t n = unescape(bytes, req, sizeof req);
    int fd = dial(port, src);
    if (fd < 0) {
        perror("connect");
        return 2;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    int closed = 0;
    drain(fd, resp, sizeof resp, 5000, 500, &closed);
    close(fd);
    int statuses = 0;
    for (const char *p = resp; (p = strstr(p, "HTTP/1.1 ")); p++)
        if (p == resp || p[-1] == '\n')
            statuses++;
    char status[8] = "-";
    if (strncmp(resp, "HTTP/1.", 7) == 0 && strlen(resp) >= 12)
        snprintf(status, sizeof status, "%.3s", resp + 9);
    printf("%s %s %d\n", status, closed ? "closed" : "open", statuses);
    return 0;
}

/* Server sockets on `port` in CLOSE-WAIT (state 08 in /proc/net/tcp). */
static int close_wait(unsigned port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned lport = 0, st = 0;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %x", &lport, &st) == 2 && lport == port && st == 0x08)
            n++;
    }
    fclose(f);
    return n;
}

struct legit {
    unsigned port;
    _Atomic int stop;
    int ok, total;
    uint64_t max_ms;
};

/* The legitimate client: GET /healthz on a new connection every 50 ms, each bounded by 10 s. */
static void *legit_main(void *arg)
{
    struct legit *l = arg;
    while (!atomic_load(&l->stop)) {
        uint64_t t0 = now_ms();
        int fd = dial(l->port, "127.0.0.1");
        int ok = 0;
        if (fd >= 0) {
            static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
            if (send(fd, req, sizeof req - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof req - 1)) {
                char buf[1024];
                int closed;
                uint64_t deadline = t0 + 10000;
                size_t n = 0;
                while (!n && now_ms() < deadline)
                    n = drain(fd, buf, sizeof buf, 200, 200, &closed);
                ok = strncmp(buf, "HTTP/1.1 200", 12) == 0;
            }
            close(fd);
        }
        uint64_t dt = now_ms() - t0;
        l->total++;
        l->ok += ok;
        if (dt > l->max_ms)
            l->max_ms = dt;
        sleep_ms(50);
    }
    return NULL;
}

/* Connections the server has closed among fds (a read returns 0 or an error). */
static int still_open(int *fds, int n)
{
    int open = 0;
    for (int i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue;
        struct pollfd p = {fds[i], POLLIN, 0};
        char c;
        if (poll(&p, 1, 0) > 0 && recv(fds[i], &c, 1, MSG_DONTWAIT) <= 0) {
            close(fds[i]);
            fds[i] = -1;
            continue;
        }
        open++;
    }
    return open;
}

static int cmd_storm(unsigned port, const char *mode, int n, unsigned secs, const char *src, const char *bytes)
{
    if (n > MAX_CONNS)
        n = MAX_CONNS;
    struct legit l = {.port = port};
    pthread_t th;
    const char *lg = getenv("SERVE_PROBE_LEGIT"); /* "0": no legitimate client (a TLS port) */
    int with_legit = !lg || strcmp(lg, "0") != 0;
    if (!with_legit)
        atomic_store(&l.stop, 1);
    pthread_create(&th, NULL, legit_main, &l);
    static int fds[MAX_CONNS];
    static char buf[65536];
    size_t blen = 0;
    int opened = 0;
    uint64_t end = now_ms() + secs * 1000u;
    if (strcmp(mode, "hitrun") == 0) {
        blen = unescape(bytes ? bytes : "POST /v1/keys/k/sign HTTP/1.1\\r\\nHost: t\\r\\nContent-Le", buf, sizeof buf);
        for (int i = 0; i < n; i++) {
            int fd = dial(port, src);
            if (fd < 0)
                continue;
            opened++;
            (void)send(fd, buf, blen, MSG_NOSIGNAL);
            close(fd);
        }
        /* How long until (almost) no server socket is left in CLOSE-WAIT: 10 s at most. */
        uint64_t t_last = now_ms();
        int cw = close_wait(port);
        while (cw > 5 && now_ms() - t_last < 10000) {
            sleep_ms(100);
            cw = close_wait(port);
        }
        uint64_t settle = now_ms() - t_last;
        while (now_ms() < end)
            sleep_ms(50);
        atomic_store(&l.stop, 1);
        pthread_join(th, NULL);
        printf("legit %d/%d max_ms %llu\n", l.ok, l.total, (unsigned long long)l.max_ms);
        printf("attack %s connections %d close_wait %d open 0 released_ms %llu\n", mode, opened, cw,
               (unsigned long long)settle);
        return 0;
    }
    int body = strcmp(mode, "slowbody") == 0, idle = strcmp(mode, "idle") == 0;
    if (body)
        blen = unescape(bytes ? bytes : "POST /v1/keys/k/sign HTTP/1.1\\r\\nHost: t\\r\\nContent-Length: 1000000\\r\\n\\r\\n",
                        buf, sizeof buf);
    else
        blen = unescape("GET /healthz HTTP/1.1\r\n", buf, sizeof buf);
    for (int i = 0; i < n; i++) {
        fds[i] = dial(port, src);
        if (fds[i] < 0)
            continue;
        opened++;
        if (!idle)
            (void)send(fds[i], buf, blen, MSG_NOSIGNAL);
    }
    while (now_ms() < end) {
        sleep_ms(body ? 100 : 1000);
        for (int i = 0; i < n && !idle; i++)
            if (fds[i] >= 0)
                (void)send(fds[i], body ? "x" : "X-Drip: a\r\n", body ? 1 : 11, MSG_NOSIGNAL);
        still_open(fds, n);
    }
    int open = still_open(fds, n);
    atomic_store(&l.stop, 1);
    pthread_join(th, NULL);
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    printf("legit %d/%d max_ms %llu\n", l.ok, l.total, (unsigned long long)l.max_ms);
    printf("attack %s connections %d close_wait 0 open %d\n", mode, opened, open);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "send") == 0)
        return cmd_send((unsigned)atoi(argv[2]), argv[3], argc > 4 ? argv[4] : "127.0.0.1");
    if (argc >= 7 && strcmp(argv[1], "storm") == 0)
        return cmd_storm((unsigned)atoi(argv[2]), argv[3], atoi(argv[4]), (unsigned)atoi(argv[5]), argv[6],
                         argc > 7 ? argv[7] : NULL);
    fprintf(stderr, "usage: serve_probe send PORT BYTES [SRC] | storm PORT MODE N SECS SRC [BYTES]\n");
    return 2;
}
