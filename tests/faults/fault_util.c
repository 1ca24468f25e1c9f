/*
 * tests/faults/fault_util.c — harness for the fault tests (see fault_util.h).
 */
#include "fault_util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* Monotonic milliseconds, for bounded waits. */
uint64_t fu_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- files ------------------------------------------------------------------------------------------ */

/* A private mkdtemp directory (short path: Unix socket paths are limited to 107 bytes). */
char *fu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base || strlen(base) > 40)
        base = "/tmp";
    char *d = malloc(strlen(base) + 32);
    assert_non_null(d);
    sprintf(d, "%s/dsig-faults-XXXXXX", base);
    if (!mkdtemp(d))
        fail_msg("mkdtemp(%s): %s", d, strerror(errno));
    return d;
}

/* Remove the files of `dir` (flat), the directory itself, and free the path. */
void fu_tmpdir_remove(char *dir)
{
    if (!dir)
        return;
    DIR *dp = opendir(dir);
    if (dp) {
        struct dirent *e;
        while ((e = readdir(dp)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char *p = fu_path(dir, e->d_name);
            unlink(p);
            free(p);
        }
        closedir(dp);
    }
    rmdir(dir);
    free(dir);
}

/* dir + "/" + name, malloc'd. */
char *fu_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Write a text file (0600: configs hold private keys). */
char *fu_write_file(const char *dir, const char *name, const char *text)
{
    char *p = fu_path(dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        fail_msg("open(%s): %s", p, strerror(errno));
    size_t n = strlen(text), off = 0;
    while (off < n) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            fail_msg("write(%s): %s", p, strerror(errno));
        off += (size_t)w;
    }
    close(fd);
    return p;
}

/* Read a whole file; NULL when it cannot be opened. */
char *fu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    assert_non_null(b);
    size_t r;
    while ((r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            b = realloc(b, cap + 1);
            assert_non_null(b);
        }
    }
    fclose(f);
    b[n] = 0;
    if (len)
        *len = n;
    return b;
}

/* ---- keys ------------------------------------------------------------------------------------------- */

/* A random DSig key pair (Ed25519 bound to "DSig", as nodes need) with both JWK forms. */
void fu_dsig_key_new(fu_dsig_key *k)
{
    memset(k, 0, sizeof *k);
    const dsig_alg *alg = dsig_alg_by_name("DSig");
    assert_non_null(alg);
    assert_int_equal(dsig_key_generate(&k->priv, alg, NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&k->pub, k->priv), DSIG_OK);
    size_t n;
    assert_int_equal(dsig_jwk_export(k->priv, 1, &k->jwk_priv, &n), DSIG_OK);
    assert_int_equal(dsig_jwk_export(k->priv, 0, &k->jwk_pub, &n), DSIG_OK);
}

/* Free what fu_dsig_key_new made (the private JWK text is wiped first). */
void fu_dsig_key_free(fu_dsig_key *k)
{
    dsig_key_free(k->priv);
    dsig_key_free(k->pub);
    if (k->jwk_priv) {
        dsig_memzero(k->jwk_priv, strlen(k->jwk_priv));
        dsig_free(k->jwk_priv);
    }
    dsig_free(k->jwk_pub);
    memset(k, 0, sizeof *k);
}

/* ---- processes -------------------------------------------------------------------------------------- */

/* $DSIG_TOOL (set by CTest). */
const char *fu_tool(void)
{
    const char *t = getenv("DSIG_TOOL");
    if (!t || !*t)
        fail_msg("DSIG_TOOL is not set (run through ctest)");
    return t;
}

/* fork/exec with output to a log file; the child leads its own process group. */
pid_t fu_spawn(char *const argv[], const char *log)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        if (log) {
            int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                close(fd);
            }
        }
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Reap without blocking: 1 still running, 0 exited. */
int fu_alive(pid_t pid, int *status)
{
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == 0)
        return 1;
    if (status)
        *status = st;
    return 0;
}

/* Graceful stop with a bounded wait, then SIGKILL. */
int fu_stop(pid_t pid, unsigned ms)
{
    if (pid <= 0)
        return -1;
    kill(pid, SIGTERM);
    uint64_t dl = fu_mono_ms() + ms;
    int st = 0;
    while (fu_mono_ms() < dl) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0)
            return -1;
        usleep(2000);
    }
    kill(pid, SIGKILL);
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return st;
}

/* Crash-like stop: no chance to flush or say goodbye. */
void fu_kill(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
}

/* VmRSS of a process from /proc. */
uint64_t fu_rss_kib(pid_t pid)
{
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/status");
    else
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *s = fu_read_file(path, NULL);
    if (!s)
        return 0;
    uint64_t kib = 0;
    const char *p = strstr(s, "VmRSS:");
    if (p)
        kib = strtoull(p + 6, NULL, 10);
    free(s);
    return kib;
}

/* ---- sockets ---------------------------------------------------------------------------------------- */

/* Parse "unix:/p" or "tcp:a.b.c.d:port" into a sockaddr. 0 or -1. */
static int parse_addr(const char *a, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    if (!strncmp(a, "unix:", 5)) {
        struct sockaddr_un *un = (struct sockaddr_un *)ss;
        if (strlen(a + 5) >= sizeof un->sun_path)
            return -1;
        un->sun_family = AF_UNIX;
        strcpy(un->sun_path, a + 5);
        *len = (socklen_t)sizeof *un;
        return 0;
    }
    if (!strncmp(a, "tcp:", 4)) {
        char host[64];
        const char *colon = strrchr(a + 4, ':');
        if (!colon || (size_t)(colon - (a + 4)) >= sizeof host)
            return -1;
        memcpy(host, a + 4, (size_t)(colon - (a + 4)));
        host[colon - (a + 4)] = 0;
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)atoi(colon + 1));
        if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
            return -1;
        *len = (socklen_t)sizeof *in;
        return 0;
    }
    return -1;
}

/* Connect with retries for up to 2 s (the node may still be starting). */
int fu_connect(const char *addr)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (parse_addr(addr, &ss, &len) != 0)
        return -1;
    uint64_t dl = fu_mono_ms() + 2000;
    for (;;) {
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
            if (ss.ss_family == AF_INET) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            }
            return fd;
        }
        close(fd);
        if (fu_mono_ms() > dl)
            return -1;
        usleep(10000);
    }
}

/* Blocking write of the whole buffer without SIGPIPE. */
int fu_write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Drain until EOF/reset or the deadline. */
int fu_wait_closed(int fd, unsigned ms)
{
    uint64_t dl = fu_mono_ms() + ms;
    uint8_t buf[4096];
    for (;;) {
        uint64_t now = fu_mono_ms();
        if (now >= dl)
            return 0;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, (int)(dl - now));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return 1;
    }
}

/* A copy of sig with bits `mask` flipped at byte `at % len`. */
uint8_t *fu_corrupt(const uint8_t *sig, size_t len, size_t at, uint8_t mask)
{
    uint8_t *c = malloc(len ? len : 1);
    assert_non_null(c);
    memcpy(c, sig, len);
    if (len)
        c[at % len] ^= mask ? mask : 1;
    return c;
}

/* ---- proxy ------------------------------------------------------------------------------------------ */

#define FU_PROXY_PAIRS 16

/* Frame-header tracking of one direction of one connection. */
typedef struct fu_dir {
    uint8_t hdr[12];
    uint32_t hdr_have;
    uint64_t remaining;          /* payload bytes of the current frame still to pass */
    uint64_t cut_at;             /* when cutting: payload bytes still allowed before the cut */
    int cutting;
} fu_dir;

typedef struct fu_pair {
    int cfd, ufd;                /* client side (accepted), upstream side (connected); -1 = free */
    fu_dir d[2];                 /* 0: client→upstream, 1: upstream→client */
    /* lossy mode: bytes of an incomplete frame, and one APP frame held back (reordering), per direction */
    uint8_t *buf[2], *held[2];
    size_t len[2], cap[2], held_len[2];
} fu_pair;

struct fu_proxy {
    pthread_t th;
    int lfd;
    int wake[2];
    char addr[160];
    char upstream[160];
    char unix_path[110];
    fu_pair pairs[FU_PROXY_PAIRS];
    pthread_mutex_t mu;
    int stop;
    int paused;                  /* FU_FROM_* bits: sides not read from */
    int cut_armed;
    unsigned drop_pm, reorder_pm;/* lossy mode: per mille of APP frames dropped / held back */
    uint64_t rng;
    unsigned cut_skip;           /* qualifying frames still to pass before the cut */
    uint32_t cut_min;
    uint32_t cut_pos;            /* payload bytes forwarded before the cut (FU_CUT_HALF: len / 2) */
    _Atomic uint64_t cuts, accepted, frames_up, dropped, reordered;
};

/* Close both ends of a pair. */
static void pair_close(fu_pair *pr)
{
    if (pr->cfd >= 0)
        close(pr->cfd);
    if (pr->ufd >= 0)
        close(pr->ufd);
    for (int d = 0; d < 2; d++) {
        free(pr->buf[d]);
        free(pr->held[d]);
    }
    memset(pr, 0, sizeof *pr);
    pr->cfd = pr->ufd = -1;
}

/*
 * Decide how many of the n bytes in `buf` (direction `dir` of pair `pr`) to forward; sets *cut when the
 * connection must be closed after forwarding them. Updates the frame tracking and the armed cut.
 */
static size_t proxy_scan(fu_proxy *p, fu_pair *pr, int dir, const uint8_t *buf, size_t n, int *cut)
{
    fu_dir *d = &pr->d[dir];
    size_t i = 0;
    *cut = 0;
    while (i < n) {
        if (d->remaining > 0) {
            size_t take = n - i;
            if (take > d->remaining)
                take = (size_t)d->remaining;
            if (d->cutting && take >= d->cut_at) {
                *cut = 1;
                return i + (size_t)d->cut_at;
            }
            if (d->cutting)
                d->cut_at -= take;
            d->remaining -= take;
            i += take;
            if (d->remaining == 0 && dir == 0)
                atomic_fetch_add(&p->frames_up, 1);
            continue;
        }
        d->hdr[d->hdr_have++] = buf[i++];
        if (d->hdr_have < 12)
            continue;
        d->hdr_have = 0;
        uint32_t len = (uint32_t)d->hdr[8] << 24 | (uint32_t)d->hdr[9] << 16 | (uint32_t)d->hdr[10] << 8 |
                       d->hdr[11];
        d->remaining = len;
        pthread_mutex_lock(&p->mu);
        if (p->cut_armed && len >= p->cut_min && len >= 1) {
            if (p->cut_skip > 0) {
                p->cut_skip--;
            } else {
                p->cut_armed = 0;
                d->cutting = 1;
                d->cut_at = p->cut_pos == FU_CUT_HALF ? len / 2 : p->cut_pos;
                if (d->cut_at > len - 1)
                    d->cut_at = len - 1;
            }
        }
        pthread_mutex_unlock(&p->mu);
        if (d->cutting && d->cut_at == 0) {
            /* Cut right after the header: forward up to here. */
            *cut = 1;
            return i;
        }
        if (len == 0 && dir == 0)
            atomic_fetch_add(&p->frames_up, 1);
    }
    return n;
}

/* Lossy mode: whole frames out of the bytes of one direction; APP frames (type 0x13, the node's
 * application messages) dropped or held back until the next frame has passed (reordered). Node frames
 * (HELLO, AUTH, BATCH, ACK, heartbeats) always pass: the transport itself stays sound. 0 / -1. */
static int proxy_lossy(fu_proxy *p, fu_pair *pr, int dir, const uint8_t *in, size_t n, int to)
{
    if (pr->len[dir] + n > pr->cap[dir]) {
        size_t cap = (pr->len[dir] + n) * 2;
        uint8_t *b = realloc(pr->buf[dir], cap);
        if (!b)
            return -1;
        pr->buf[dir] = b;
        pr->cap[dir] = cap;
    }
    memcpy(pr->buf[dir] + pr->len[dir], in, n);
    pr->len[dir] += n;
    size_t off = 0;
    while (pr->len[dir] - off >= 12) {
        const uint8_t *h = pr->buf[dir] + off;
        size_t flen = 12 + ((size_t)h[8] << 24 | (size_t)h[9] << 16 | (size_t)h[10] << 8 | h[11]);
        if (pr->len[dir] - off < flen)
            break;
        pthread_mutex_lock(&p->mu);
        uint64_t x = p->rng += 0x9E3779B97F4A7C15ull;
        unsigned drop = p->drop_pm, reorder = p->reorder_pm;
        pthread_mutex_unlock(&p->mu);
        x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
        unsigned roll = (unsigned)((x >> 20) % 1000);
        int app = h[5] == 0x13;
        if (app && roll < drop) {
            atomic_fetch_add(&p->dropped, 1);
        } else if (app && roll < drop + reorder && !pr->held[dir]) {
            pr->held[dir] = malloc(flen);
            if (!pr->held[dir])
                return -1;
            memcpy(pr->held[dir], h, flen);
            pr->held_len[dir] = flen;
            atomic_fetch_add(&p->reordered, 1);
        } else {
            if (fu_write_all(to, h, flen) != 0)
                return -1;
            if (pr->held[dir]) { /* the held frame goes after this one */
                int rc = fu_write_all(to, pr->held[dir], pr->held_len[dir]);
                free(pr->held[dir]);
                pr->held[dir] = NULL;
                if (rc != 0)
                    return -1;
            }
        }
        off += flen;
    }
    memmove(pr->buf[dir], pr->buf[dir] + off, pr->len[dir] - off);
    pr->len[dir] -= off;
    return 0;
}

/* Move bytes from one end to the other; 0 ok, -1 when the pair must be closed. */
static int proxy_forward(fu_proxy *p, fu_pair *pr, int dir)
{
    uint8_t buf[65536];
    int from = dir == 0 ? pr->cfd : pr->ufd, to = dir == 0 ? pr->ufd : pr->cfd;
    ssize_t r = recv(from, buf, sizeof buf, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (r <= 0)
        return -1;
    pthread_mutex_lock(&p->mu);
    int lossy = p->drop_pm || p->reorder_pm;
    pthread_mutex_unlock(&p->mu);
    if (lossy)
        return proxy_lossy(p, pr, dir, buf, (size_t)r, to);
    int cut;
    size_t fwd = proxy_scan(p, pr, dir, buf, (size_t)r, &cut);
    /* The ends are blocking sockets: nodes always read, so a write completes. */
    if (fu_write_all(to, buf, fwd) != 0)
        return -1;
    if (cut) {
        atomic_fetch_add(&p->cuts, 1);
        return -1;
    }
    return 0;
}

/* The proxy thread: poll the listener, the wake pipe and every pair. */
static void *proxy_main(void *arg)
{
    fu_proxy *p = arg;
    for (;;) {
        struct pollfd pf[2 + 2 * FU_PROXY_PAIRS];
        int idx[2 + 2 * FU_PROXY_PAIRS];
        int n = 0;
        pthread_mutex_lock(&p->mu);
        int stop = p->stop, paused = p->paused;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;
        pf[n].fd = p->lfd, pf[n].events = POLLIN, idx[n++] = -1;
        pf[n].fd = p->wake[0], pf[n].events = POLLIN, idx[n++] = -2;
        for (int i = 0; i < FU_PROXY_PAIRS; i++) {
            if (p->pairs[i].cfd < 0)
                continue;
            /* A negative fd is ignored by poll: a paused side is not even watched for hang-ups. */
            pf[n].fd = (paused & FU_FROM_CLIENT) ? -1 : p->pairs[i].cfd, pf[n].events = POLLIN;
            idx[n++] = 2 * i;
            pf[n].fd = (paused & FU_FROM_UPSTREAM) ? -1 : p->pairs[i].ufd, pf[n].events = POLLIN;
            idx[n++] = 2 * i + 1;
        }
        int r = poll(pf, (nfds_t)n, 50);
        if (r <= 0) {
            /* quiet: a frame held back for reordering must not wait for traffic that never comes */
            for (int i = 0; i < FU_PROXY_PAIRS; i++)
                for (int d = 0; d < 2; d++)
                    if (p->pairs[i].cfd >= 0 && p->pairs[i].held[d]) {
                        fu_pair *pr = &p->pairs[i];
                        (void)fu_write_all(d == 0 ? pr->ufd : pr->cfd, pr->held[d], pr->held_len[d]);
                        free(pr->held[d]);
                        pr->held[d] = NULL;
                    }
            continue;
        }
        for (int k = 0; k < n; k++) {
            if (!pf[k].revents)
                continue;
            if (idx[k] == -2) {
                char c[64];
                if (read(p->wake[0], c, sizeof c) < 0) { /* drained */ }
                continue;
            }
            if (idx[k] == -1) {
                int cfd = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
                if (cfd < 0)
                    continue;
                atomic_fetch_add(&p->accepted, 1);
                int ufd = fu_connect(p->upstream);
                int slot = -1;
                for (int i = 0; i < FU_PROXY_PAIRS && slot < 0; i++)
                    if (p->pairs[i].cfd < 0)
                        slot = i;
                if (ufd < 0 || slot < 0) {
                    close(cfd);
                    if (ufd >= 0)
                        close(ufd);
                    continue;
                }
                memset(&p->pairs[slot], 0, sizeof p->pairs[slot]);
                p->pairs[slot].cfd = cfd;
                p->pairs[slot].ufd = ufd;
                continue;
            }
            fu_pair *pr = &p->pairs[idx[k] / 2];
            if (pr->cfd < 0)
                continue; /* closed earlier in this round */
            if (proxy_forward(p, pr, idx[k] % 2) != 0)
                pair_close(pr);
        }
    }
    for (int i = 0; i < FU_PROXY_PAIRS; i++)
        if (p->pairs[i].cfd >= 0)
            pair_close(&p->pairs[i]);
    return NULL;
}

/* Bind the listener, start the thread. */
fu_proxy *fu_proxy_start(const char *listen_addr, const char *upstream)
{
    fu_proxy *p = calloc(1, sizeof *p);
    assert_non_null(p);
    pthread_mutex_init(&p->mu, NULL);
    for (int i = 0; i < FU_PROXY_PAIRS; i++)
        p->pairs[i].cfd = p->pairs[i].ufd = -1;
    snprintf(p->upstream, sizeof p->upstream, "%s", upstream);
    struct sockaddr_storage ss;
    socklen_t len;
    assert_int_equal(parse_addr(listen_addr, &ss, &len), 0);
    p->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(p->lfd >= 0);
    if (ss.ss_family == AF_UNIX) {
        snprintf(p->unix_path, sizeof p->unix_path, "%s", listen_addr + 5);
        unlink(p->unix_path);
    } else {
        int one = 1;
        setsockopt(p->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    }
    if (bind(p->lfd, (struct sockaddr *)&ss, len) != 0 || listen(p->lfd, 16) != 0)
        fail_msg("proxy bind/listen %s: %s", listen_addr, strerror(errno));
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in in;
        socklen_t l = sizeof in;
        getsockname(p->lfd, (struct sockaddr *)&in, &l);
        char host[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
        snprintf(p->addr, sizeof p->addr, "tcp:%s:%u", host, (unsigned)ntohs(in.sin_port));
    } else {
        snprintf(p->addr, sizeof p->addr, "%s", listen_addr);
    }
    assert_int_equal(pipe2(p->wake, O_CLOEXEC | O_NONBLOCK), 0);
    assert_int_equal(pthread_create(&p->th, NULL, proxy_main, p), 0);
    return p;
}

const char *fu_proxy_addr(const fu_proxy *p) { return p->addr; }

/* Wake the proxy thread so it re-reads its settings. */
static void proxy_wake(fu_proxy *p)
{
    char c = 1;
    if (write(p->wake[1], &c, 1) < 0) { /* pipe full: a wake is pending anyway */ }
}

void fu_proxy_cut_midframe(fu_proxy *p, unsigned frames, uint32_t min_payload, uint32_t at)
{
    pthread_mutex_lock(&p->mu);
    p->cut_pos = at;
    p->cut_armed = 1;
    p->cut_skip = frames;
    p->cut_min = min_payload;
    pthread_mutex_unlock(&p->mu);
}

void fu_proxy_pause(fu_proxy *p, int side, int paused)
{
    pthread_mutex_lock(&p->mu);
    if (paused)
        p->paused |= side;
    else
        p->paused &= ~side;
    pthread_mutex_unlock(&p->mu);
    proxy_wake(p);
}

void fu_proxy_lossy(fu_proxy *p, unsigned drop_permille, unsigned reorder_permille, uint64_t seed)
{
    pthread_mutex_lock(&p->mu);
    p->drop_pm = drop_permille;
    p->reorder_pm = reorder_permille;
    p->rng = seed;
    pthread_mutex_unlock(&p->mu);
    proxy_wake(p);
}

uint64_t fu_proxy_dropped(fu_proxy *p) { return atomic_load(&p->dropped); }
uint64_t fu_proxy_reordered(fu_proxy *p) { return atomic_load(&p->reordered); }
uint64_t fu_proxy_cuts(fu_proxy *p) { return atomic_load(&p->cuts); }
uint64_t fu_proxy_accepted(fu_proxy *p) { return atomic_load(&p->accepted); }
uint64_t fu_proxy_frames_up(fu_proxy *p) { return atomic_load(&p->frames_up); }

/* Stop and join the thread, close everything. */
void fu_proxy_stop(fu_proxy *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_mutex_unlock(&p->mu);
    proxy_wake(p);
    pthread_join(p->th, NULL);
    close(p->lfd);
    close(p->wake[0]);
    close(p->wake[1]);
    if (p->unix_path[0])
        unlink(p->unix_path);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
