/*
 * bench/bench_apps.c — `dsig bench apps` (bench_apps.h; method in docs/benchmarks.md).
 *
 * For each configuration (unpinned, and pinned: client on CPU 0, server and redis-server on CPU 1), for
 * each application (kv on a redis-server started here, book), one server process per scheme (none,
 * Ed25519, DSig — the same server code, each with its own durable log) is forked, each listening on a
 * Unix socket and on TCP loopback; this process is the client. Per transport, one client per scheme
 * connects; every round, each scheme in turn waits until both key pools are full and the server has
 * verified the client's batches (apps_client_sync), then sends its share of the requests with window 1.
 * Latencies are pooled per (configuration, application, transport, scheme). At the end every signed log is
 * audited on the slow path with nothing but the public keys. CSV and one SVG chart per application go to
 * --out, and without it nowhere (never into the current directory unasked).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apps/apps.h"
#include "bench_apps.h"
#include "bench_internal.h"
#include "net/net.h"

/* The schemes measured, in order; "ed25519" is the sig scheme with Ed25519 keys (libsodium). */
enum { S_NONE, S_ED25519, S_DSIG, NSCHEMES };
static const char *const scheme_names[NSCHEMES] = {"none", "ed25519", "dsig"};
static const char *const scheme_titles[NSCHEMES] = {"none (unsigned)", "Ed25519 (libsodium)", "DSig"};
static const int scheme_apps[NSCHEMES] = {APPS_SCHEME_NONE, APPS_SCHEME_SIG, APPS_SCHEME_DSIG};
/* The registry algorithm each scheme's identity keys are bound to. */
static const char *const scheme_alg[NSCHEMES] = {"Ed25519", "Ed25519", "DSig"};

enum { T_UNIX, T_TCP, NTRANSPORTS };
static const char *const transport_names[NTRANSPORTS] = {"unix", "tcp"};
enum { A_KV, A_BOOK, NAPPS };
static const char *const app_names[NAPPS] = {"kv", "book"};
static const unsigned app_ids[NAPPS] = {APPS_APP_KV, APPS_APP_BOOK};
enum { P_OFF, P_ON, NPINS };
static const char *const pin_names[NPINS] = {"off", "on"};

#define PAPER_R 0.86          /* the DSig paper: 86 % less added latency than EdDSA in its applications */
#define KV_KEYS 1000u         /* the key space; all set during the warm-up */
#define MAX_REQUESTS 1000000u

typedef struct opts {
    unsigned requests, warmup, runs, pool;
    unsigned apps, transports, pins, schemes; /* bit masks */
    const char *out_dir, *log_dir;
    int keep, quiet;
    uint64_t seed;
} opts;

/* One result row. */
typedef struct row {
    int pin, app, transport, scheme;
    double *lat;                  /* µs, `n` samples (sorted after stats) */
    size_t n;
    double wall_s;                /* wall time of the measured requests */
    double p10, p50, p90, p99, mean, rps;
    uint64_t reply_fast, reply_slow, req_fast, req_slow;
} row;

/* ---- options ------------------------------------------------------------------------------------- */

static int name_item(const char *t, void *out, size_t i, const char *const *names, size_t n)
{
    (void)i;
    for (size_t k = 0; k < n; k++)
        if (strcasecmp(t, names[k]) == 0) {
            *(unsigned *)out |= 1u << k;
            return 0;
        }
    return -1;
}
static int scheme_item(const char *t, void *out, size_t i) { return name_item(t, out, i, scheme_names, NSCHEMES); }
static int app_item(const char *t, void *out, size_t i) { return name_item(t, out, i, app_names, NAPPS); }
static int transport_item(const char *t, void *out, size_t i)
{
    return name_item(t, out, i, transport_names, NTRANSPORTS);
}
static int pin_item(const char *t, void *out, size_t i) { return name_item(t, out, i, pin_names, NPINS); }

static const bench_list_spec scheme_list = {"--schemes", 128, "unknown scheme", "schemes", "none, ed25519, dsig",
                                            NULL, scheme_item};
static const bench_list_spec app_list = {"--apps", 64, "unknown application", "applications", "kv, book", NULL,
                                         app_item};
static const bench_list_spec transport_list = {"--transports", 64, "unknown transport", "transports", "unix, tcp",
                                               NULL, transport_item};
static const bench_list_spec pin_list = {"--pin", 64, "unknown pinning", "pinnings", "off, on", NULL, pin_item};

static void help(FILE *f)
{
    fputs("Usage: dsig bench apps [options]\n"
          "The DSig paper's application benchmark: an auditable Redis (16 B keys, 32 B values, 80% GET with\n"
          "90% hits) and an auditable order book (one symbol, 50% buys, prices 1880-1893, quantities\n"
          "100-1000), window 1, with no signature, libsodium Ed25519 and DSig through the same server (the\n"
          "Ed25519 baseline logs durably too). Client and servers are separate processes; redis-server is\n"
          "started and stopped here. Prints p10/p50/p90 and requests/s, the latency each scheme adds to the\n"
          "unsigned one, and R = 1 - added(DSig)/added(Ed25519) next to the paper's 0.86.\n"
          "\n"
          "  --requests N     measured requests per scheme, application, transport and pinning (default 10000)\n"
          "  --runs N         rounds the requests are split into, schemes interleaved (default 5)\n"
          "  --warmup N       untimed requests per client before measuring (default 1000; kv also sets all\n"
          "                   1000 keys first)\n"
          "  --pool N         DSig one-time keys kept ready per signer (default 512)\n"
          "  --apps LIST      kv,book (default both)\n"
          "  --transports L   unix,tcp (default both; tcp is loopback)\n"
          "  --pin LIST       off,on (default both; on: client on CPU 0, servers and redis-server on CPU 1)\n"
          "  --schemes LIST   none,ed25519,dsig (default all three)\n"
          "  --out DIR        write the CSV and the SVG charts there (without it no file is written)\n"
          "  --log-dir DIR    where the request logs go (default /dev/shm, a tmpfs: the fdatasync per request\n"
          "                   is made but costs ~nothing; a disk adds the same 0.3-8 ms to every scheme here)\n"
          "  --keep           keep the logs and keys (to run dsig audit verify on them) and print where\n"
          "  --seed N         workload seed (default 1)\n"
          "  --quick          300 requests, 3 runs, 100 warm-up (a smoke test)\n"
          "  -q, --quiet      no progress notes\n"
          "Exit status: 0 done, 2 error (a refused request, a reply that does not verify, a failed audit).\n",
          f);
}

static int parse(int argc, char **argv, opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->requests = 10000;
    o->runs = 5;
    o->warmup = 1000;
    o->pool = 512;
    o->apps = (1u << NAPPS) - 1;
    o->transports = (1u << NTRANSPORTS) - 1;
    o->pins = (1u << NPINS) - 1;
    o->schemes = (1u << NSCHEMES) - 1;
    o->seed = 1;
    int req_set = 0, runs_set = 0, warm_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0;
        uint64_t u;
        size_t cnt;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        if (strcmp(a, "--quick") == 0) {
            if (!req_set)
                o->requests = 300;
            if (!runs_set)
                o->runs = 3;
            if (!warm_set)
                o->warmup = 100;
        } else if (strcmp(a, "--keep") == 0) {
            o->keep = 1;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--requests", &missing))) {
            if (bench_parse_u64(v, 1, MAX_REQUESTS, &u) != 0)
                return bench_fail(err, errlen, "--requests: \"%s\" is not a number in 1..%u", v, MAX_REQUESTS);
            o->requests = (unsigned)u;
            req_set = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--runs", &missing))) {
            if (bench_parse_u64(v, 1, 100, &u) != 0)
                return bench_fail(err, errlen, "--runs: \"%s\" is not a number in 1..100", v);
            o->runs = (unsigned)u;
            runs_set = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--warmup", &missing))) {
            if (bench_parse_u64(v, 0, MAX_REQUESTS, &u) != 0)
                return bench_fail(err, errlen, "--warmup: \"%s\" is not a number in 0..%u", v, MAX_REQUESTS);
            o->warmup = (unsigned)u;
            warm_set = 1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--pool", &missing))) {
            if (bench_parse_u64(v, 1, 1u << 16, &u) != 0)
                return bench_fail(err, errlen, "--pool: \"%s\" is not a number in 1..65536", v);
            o->pool = (unsigned)u;
        } else if ((v = bench_opt_value(argc, argv, &i, "--seed", &missing))) {
            if (bench_parse_u64(v, 0, UINT64_MAX, &o->seed) != 0)
                return bench_fail(err, errlen, "--seed: \"%s\" is not a number", v);
        } else if ((v = bench_opt_value(argc, argv, &i, "--apps", &missing))) {
            o->apps = 0;
            if (bench_parse_list(&app_list, v, &o->apps, SIZE_MAX, &cnt, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--transports", &missing))) {
            o->transports = 0;
            if (bench_parse_list(&transport_list, v, &o->transports, SIZE_MAX, &cnt, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--pin", &missing))) {
            o->pins = 0;
            if (bench_parse_list(&pin_list, v, &o->pins, SIZE_MAX, &cnt, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--schemes", &missing))) {
            o->schemes = 0;
            if (bench_parse_list(&scheme_list, v, &o->schemes, SIZE_MAX, &cnt, err, errlen))
                return -1;
        } else if ((v = bench_opt_value(argc, argv, &i, "--out", &missing))) {
            o->out_dir = v;
        } else if ((v = bench_opt_value(argc, argv, &i, "--log-dir", &missing))) {
            o->log_dir = v;
        } else if (missing) {
            return bench_fail(err, errlen, "%s needs a value", a);
        } else {
            return bench_fail(err, errlen, "unknown option \"%s\" (see dsig bench apps --help)", a);
        }
        if (missing)
            return bench_fail(err, errlen, "%s needs a value", a);
    }
    if (o->runs > o->requests)
        return bench_fail(err, errlen, "--runs (%u) exceeds --requests (%u)", o->runs, o->requests);
    return 0;
}

/* ---- processes ----------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Pin the calling process (and the threads it creates from now on) to one CPU, or to all (cpu < 0). */
static int pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++)
        if (cpu < 0 || c == cpu)
            CPU_SET((int)c, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

/* A redis-server on a Unix socket in `dir` (no persistence, as the paper's setup); pid or -1. */
static pid_t redis_start(const char *dir, const char *sock, int cpu, char *err, size_t errlen)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        bench_fail(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (cpu >= 0)
            pin_to(cpu);
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
        }
        execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
               "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning",
               (char *)NULL);
        fprintf(stderr, "dsig bench apps: cannot run redis-server: %s (scripts/install-deps.sh installs it)\n",
                strerror(errno));
        _exit(127);
    }
    dsig_net_addr a;
    char text[160];
    snprintf(text, sizeof text, "unix:%.150s", sock);
    if (dsig_net_addr_parse(text, &a) != DSIG_OK) {
        bench_fail(err, errlen, "redis socket path too long: %s", sock);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    for (int i = 0; i < 500; i++) {
        int fd;
        if (dsig_net_socket_connect(&a, 1000, &fd) == DSIG_OK) {
            close(fd);
            return pid;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            bench_fail(err, errlen, "redis-server exited at start (status %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            return -1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    bench_fail(err, errlen, "redis-server did not open %s within 5 s", sock);
    return -1;
}

/* Stop a child and reap it. */
static void child_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* What a server child needs. */
typedef struct server_spec {
    int app, scheme, cpu;
    char key[512], keys[512], log[512], sock[512], redis[512];
    unsigned pool;
} server_spec;

static void *server_run(void *arg)
{
    (void)apps_server_run(arg);
    return NULL;
}

/* The server child: serve until SIGTERM. Reports "OK tcp:127.0.0.1:PORT" or "ERR why" on fd. */
static void server_child(const server_spec *sp, int fd)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (sp->cpu >= 0)
        pin_to(sp->cpu);
    char msg[600];
    dsig_key *key = NULL;
    apps_keyset *ks = NULL;
    apps_server *s = NULL;
    char unix_addr[560];
    snprintf(unix_addr, sizeof unix_addr, "unix:%s", sp->sock);
    apps_server_opts so = {.app = app_ids[sp->app], .scheme = scheme_apps[sp->scheme], .log_path = sp->log,
                           .listen = {unix_addr, "tcp:127.0.0.1:0"}, .nlisten = 2, .pool = sp->pool, .quiet = 1,
                           .redis = sp->app == A_KV ? sp->redis : NULL};
    int rc = apps_key_load(sp->key, 1, &key);
    if (rc == DSIG_OK)
        rc = apps_keyset_load(sp->keys, &ks);
    so.key = key;
    so.clients = ks;
    if (rc == DSIG_OK)
        rc = apps_server_new(&s, &so);
    char tcp[160] = "";
    if (rc == DSIG_OK)
        rc = apps_server_address(s, 1, tcp, sizeof tcp);
    int n = rc == DSIG_OK ? snprintf(msg, sizeof msg, "OK %s\n", tcp)
                          : snprintf(msg, sizeof msg, "ERR %s\n", dsig_last_error_detail());
    ssize_t w = write(fd, msg, (size_t)n);
    (void)w;
    close(fd);
    if (rc == DSIG_OK) {
        pthread_t th;
        if (pthread_create(&th, NULL, server_run, s) == 0) {
            int sig;
            sigwait(&set, &sig);
            apps_server_stop(s);
            pthread_join(th, NULL);
        }
    }
    apps_server_free(s);
    apps_keyset_free(ks);
    dsig_key_free(key);
    _exit(rc == DSIG_OK ? 0 : 2);
}

/* Fork a server; *tcp receives its TCP address. pid or -1. */
static pid_t server_start(const server_spec *sp, char *tcp, size_t cap, char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        bench_fail(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        bench_fail(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        server_child(sp, p[1]);
    }
    close(p[1]);
    char line[700];
    size_t got = 0;
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    while (got + 1 < sizeof line && poll(&pf, 1, 30000) > 0) {
        ssize_t r = read(p[0], line + got, sizeof line - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        if (memchr(line, '\n', got))
            break;
    }
    close(p[0]);
    line[got] = '\0';
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = '\0';
    if (strncmp(line, "OK ", 3) != 0) {
        bench_fail(err, errlen, "%s server (%s) did not start: %s", app_names[sp->app], scheme_names[sp->scheme],
                   got ? line + 4 : "no answer");
        child_stop(pid);
        return -1;
    }
    snprintf(tcp, cap, "%.150s", line + 3);
    return pid;
}

/* ---- keys ---------------------------------------------------------------------------------------- */

/* Write a key (private or public JWK) to a file, mode 0600. 0 or -1. */
static int write_jwk(const dsig_key *k, int priv, const char *path, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    int rc = dsig_jwk_export(k, priv, &text, &len);
    if (rc != DSIG_OK)
        return bench_fail(err, errlen, "key export: %s", dsig_last_error_detail());
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    dsig_free(text);
    return ok ? 0 : bench_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
}

/* The keys of one scheme in the work directory: server-S.jwk, server-S.pub.jwk, client-S.jwk (client 1)
 * and keys-S/client-1.jwk, bound to the scheme's algorithm (through the public key API). */
static int make_keys(const char *work, int s, char *err, size_t errlen)
{
    const dsig_alg *alg = dsig_alg_by_name(scheme_alg[s]);
    char path[700];
    snprintf(path, sizeof path, "%s/keys-%s", work, scheme_names[s]);
    if (!alg || mkdir(path, 0700) != 0)
        return bench_fail(err, errlen, "keys for %s: %s", scheme_names[s], alg ? strerror(errno) : "no algorithm");
    static const char *const who[2] = {"server", "client"};
    for (int w = 0; w < 2; w++) {
        dsig_key *k = NULL, *pub = NULL;
        if (dsig_key_generate(&k, alg, NULL) != DSIG_OK || dsig_key_public(&pub, k) != DSIG_OK) {
            dsig_key_free(k);
            return bench_fail(err, errlen, "keygen: %s", dsig_last_error_detail());
        }
        int rc;
        snprintf(path, sizeof path, "%s/%s-%s.jwk", work, who[w], scheme_names[s]);
        rc = write_jwk(k, 1, path, err, errlen);
        if (rc == 0) {
            if (w == 0)
                snprintf(path, sizeof path, "%s/server-%s.pub.jwk", work, scheme_names[s]);
            else
                snprintf(path, sizeof path, "%s/keys-%s/client-1.jwk", work, scheme_names[s]);
            rc = write_jwk(pub, 0, path, err, errlen);
        }
        dsig_key_free(k);
        dsig_key_free(pub);
        if (rc)
            return -1;
    }
    return 0;
}

/* ---- workloads ----------------------------------------------------------------------------------- */

/* The next request of the workload into body. KV: 80% GET (90% of keys present), 20% SET of a present
 * key with a fresh 32-byte value. Book: 50% buys; price 1880..1893 ticks; quantity 100..1000 units. */
static size_t next_body(int app, uint64_t *st, uint8_t *body, int setup_key)
{
    size_t len = 0;
    if (app == A_BOOK) {
        uint64_t r = bench_rand_u64(st);
        unsigned op = (r & 1) ? APPS_BOOK_BUY : APPS_BOOK_SELL;
        uint32_t price = 1880 + (uint32_t)((r >> 8) % 14);
        uint32_t qty = 100 + (uint32_t)((r >> 24) % 901);
        apps_book_body(op, price, qty, 0, body);
        return APPS_BOOK_BODY;
    }
    char key[17], val[33];
    const char *argv[3];
    uint64_t r = bench_rand_u64(st);
    unsigned k = setup_key >= 0 ? (unsigned)setup_key : (unsigned)((r >> 16) % KV_KEYS);
    int get = setup_key < 0 && r % 100 < 80;
    if (get && (r >> 8) % 100 >= 90)
        snprintf(key, sizeof key, "miss%012u", k); /* never set: a miss */
    else
        snprintf(key, sizeof key, "key:%012u", k);
    if (get) {
        argv[0] = "GET";
        argv[1] = key;
        apps_kv_body(2, argv, NULL, body, APPS_MAX_BODY, &len);
        return len;
    }
    static const char hx[] = "0123456789abcdef";
    uint64_t v1 = bench_rand_u64(st), v2 = bench_rand_u64(st);
    for (int i = 0; i < 16; i++) {
        val[i] = hx[(v1 >> (4 * i)) & 15];
        val[16 + i] = hx[(v2 >> (4 * i)) & 15];
    }
    val[32] = '\0';
    argv[0] = "SET";
    argv[1] = key;
    argv[2] = val;
    apps_kv_body(3, argv, NULL, body, APPS_MAX_BODY, &len);
    return len;
}

/* One request; latency in µs into *us (if not NULL). 0 or -1 (message in err). */
static int one_request(apps_client *c, const uint8_t *body, size_t len, double *us, row *r, char *err, size_t errlen)
{
    apps_reply rep;
    double t0 = now_s();
    int rc = apps_client_call(c, body, len, &rep);
    double t1 = now_s();
    if (rc != DSIG_OK)
        return bench_fail(err, errlen, "request refused or unverified: %s: %s", dsig_strerror(rc),
                          dsig_last_error_detail());
    if (us)
        *us = (t1 - t0) * 1e6;
    if (r) {
        if (rep.fast)
            r->reply_fast++;
        else
            r->reply_slow++;
    }
    return 0;
}

/* ---- the measurement ---------------------------------------------------------------------------- */

typedef struct bench {
    const opts *o;
    double load[2];            /* 1-minute load average at the start and at the end */
    char work[200];            /* short: Unix socket paths live in it (at most 107 bytes) */
    row *rows;
    size_t nrows;
    char logs[NPINS][NAPPS][NSCHEMES][600]; /* request logs written ("" = none) */
    int audit_ok[NPINS][NAPPS][NSCHEMES];
    uint64_t audit_entries[NPINS][NAPPS][NSCHEMES];
    double audit_s[NPINS][NAPPS][NSCHEMES];
} bench;

static row *row_new(bench *B, int pin, int app, int tr, int s, size_t cap)
{
    row *r = &B->rows[B->nrows++];
    memset(r, 0, sizeof *r);
    r->pin = pin;
    r->app = app;
    r->transport = tr;
    r->scheme = s;
    r->lat = malloc(cap * sizeof *r->lat);
    return r;
}

/* One (pinning, application): servers up, every transport measured, servers down. */
static int run_app(bench *B, int pin, int app, char *err, size_t errlen)
{
    const opts *o = B->o;
    pid_t redis[NSCHEMES] = {0}, srv[NSCHEMES] = {0};
    char tcp[NSCHEMES][160];
    int rc = 0, server_cpu = pin == P_ON ? 1 : -1;
    for (int s = 0; s < NSCHEMES && rc == 0; s++) {
        if (!(o->schemes & (1u << s)))
            continue;
        server_spec sp = {.app = app, .scheme = s, .cpu = server_cpu, .pool = o->pool};
        snprintf(sp.key, sizeof sp.key, "%s/server-%s.jwk", B->work, scheme_names[s]);
        snprintf(sp.keys, sizeof sp.keys, "%s/keys-%s", B->work, scheme_names[s]);
        snprintf(sp.log, sizeof sp.log, "%s/%s-%s-pin%s.log", B->work, app_names[app], scheme_names[s], pin_names[pin]);
        snprintf(sp.sock, sizeof sp.sock, "%s/%s-%s.sock", B->work, app_names[app], scheme_names[s]);
        if (app == A_KV) {
            char rs[512];
            snprintf(rs, sizeof rs, "%s/redis-%s.sock", B->work, scheme_names[s]);
            snprintf(sp.redis, sizeof sp.redis, "unix:%.400s", rs);
            if ((redis[s] = redis_start(B->work, rs, server_cpu, err, errlen)) < 0) {
                redis[s] = 0;
                rc = -1;
                break;
            }
        }
        if ((srv[s] = server_start(&sp, tcp[s], sizeof tcp[s], err, errlen)) < 0) {
            srv[s] = 0;
            rc = -1;
            break;
        }
        snprintf(B->logs[pin][app][s], sizeof B->logs[pin][app][s], "%s", sp.log);
    }
    if (rc == 0 && pin == P_ON && pin_to(0) != 0)
        rc = bench_fail(err, errlen, "cannot pin the client to CPU 0: %s", strerror(errno));
    uint8_t *body = malloc(APPS_MAX_BODY);
    dsig_key *ckey[NSCHEMES] = {0}, *skey[NSCHEMES] = {0};
    for (int s = 0; rc == 0 && s < NSCHEMES; s++) {
        if (!(o->schemes & (1u << s)))
            continue;
        char path[700];
        snprintf(path, sizeof path, "%s/client-%s.jwk", B->work, scheme_names[s]);
        if (apps_key_load(path, 1, &ckey[s]) != DSIG_OK)
            rc = bench_fail(err, errlen, "%s", dsig_last_error_detail());
        snprintf(path, sizeof path, "%s/server-%s.pub.jwk", B->work, scheme_names[s]);
        if (rc == 0 && apps_key_load(path, 0, &skey[s]) != DSIG_OK)
            rc = bench_fail(err, errlen, "%s", dsig_last_error_detail());
    }
    for (int tr = 0; rc == 0 && tr < NTRANSPORTS; tr++) {
        if (!(o->transports & (1u << tr)))
            continue;
        apps_client *cl[NSCHEMES] = {0};
        row *rw[NSCHEMES] = {0};
        uint64_t st = o->seed * 1000003u + (uint64_t)(pin * 100 + app * 10 + tr);
        uint64_t f0[NSCHEMES], s0[NSCHEMES];
        for (int s = 0; rc == 0 && s < NSCHEMES; s++) {
            if (!(o->schemes & (1u << s)))
                continue;
            char addr[600];
            if (tr == T_UNIX)
                snprintf(addr, sizeof addr, "unix:%s/%s-%s.sock", B->work, app_names[app], scheme_names[s]);
            else
                snprintf(addr, sizeof addr, "%s", tcp[s]);
            apps_client_opts co = {.address = addr, .app = app_ids[app], .id = 1, .key = ckey[s],
                                   .server_key = skey[s], .scheme = scheme_apps[s], .pool = o->pool};
            if (apps_client_connect(&cl[s], &co) != DSIG_OK || apps_client_sync(cl[s]) != DSIG_OK) {
                rc = bench_fail(err, errlen, "%s client (%s, %s): %s", app_names[app], scheme_names[s],
                                transport_names[tr], dsig_last_error_detail());
                break;
            }
            /* Warm-up: kv sets its whole key space first (90% of GETs then hit), then the workload. */
            for (unsigned k = 0; rc == 0 && app == A_KV && tr == 0 && k < KV_KEYS; k++) {
                size_t len = next_body(app, &st, body, (int)k);
                rc = one_request(cl[s], body, len, NULL, NULL, err, errlen);
            }
            if (app == A_KV && tr != 0 && !(o->transports & 1u)) /* the unix pass did not set the keys */
                for (unsigned k = 0; rc == 0 && k < KV_KEYS; k++) {
                    size_t len = next_body(app, &st, body, (int)k);
                    rc = one_request(cl[s], body, len, NULL, NULL, err, errlen);
                }
            for (unsigned k = 0; rc == 0 && k < o->warmup; k++) {
                size_t len = next_body(app, &st, body, -1);
                rc = one_request(cl[s], body, len, NULL, NULL, err, errlen);
            }
            rw[s] = row_new(B, pin, app, tr, s, o->requests);
        }
        for (unsigned run = 0; rc == 0 && run < o->runs; run++) {
            unsigned share = o->requests / o->runs + (run < o->requests % o->runs ? 1 : 0);
            for (int s = 0; rc == 0 && s < NSCHEMES; s++) {
                if (!cl[s])
                    continue;
                /* pools full and every batch verified on both sides before the round */
                if (apps_client_sync(cl[s]) != DSIG_OK) {
                    rc = bench_fail(err, errlen, "sync: %s", dsig_last_error_detail());
                    break;
                }
                if (run == 0)
                    apps_client_server_paths(cl[s], &f0[s], &s0[s]);
                double w0 = now_s();
                for (unsigned k = 0; rc == 0 && k < share; k++) {
                    size_t len = next_body(app, &st, body, -1);
                    rc = one_request(cl[s], body, len, &rw[s]->lat[rw[s]->n], rw[s], err, errlen);
                    if (rc == 0)
                        rw[s]->n++;
                }
                rw[s]->wall_s += now_s() - w0;
            }
        }
        for (int s = 0; s < NSCHEMES; s++) {
            if (!cl[s])
                continue;
            if (rc == 0 && apps_client_sync(cl[s]) == DSIG_OK) {
                uint64_t f1, s1;
                apps_client_server_paths(cl[s], &f1, &s1);
                rw[s]->req_fast = f1 - f0[s];
                rw[s]->req_slow = s1 - s0[s];
            }
            apps_client_close(cl[s]);
        }
        if (!o->quiet && rc == 0)
            fprintf(stderr, "dsig bench apps: %s over %s, pinning %s: done\n", app_names[app], transport_names[tr],
                    pin_names[pin]);
    }
    for (int s = 0; s < NSCHEMES; s++) {
        dsig_key_free(ckey[s]);
        dsig_key_free(skey[s]);
    }
    free(body);
    if (pin == P_ON)
        pin_to(-1);
    for (int s = 0; s < NSCHEMES; s++) {
        child_stop(srv[s]);
        child_stop(redis[s]);
    }
    return rc;
}

/* Statistics of a row. */
static void row_stats(row *r)
{
    if (!r->n)
        return;
    double sum = 0;
    for (size_t i = 0; i < r->n; i++)
        sum += r->lat[i];
    bench_stat_of(r->lat, r->n); /* sorts */
    r->p10 = bench_percentile(r->lat, r->n, 0.10);
    r->p50 = bench_percentile(r->lat, r->n, 0.50);
    r->p90 = bench_percentile(r->lat, r->n, 0.90);
    r->p99 = bench_percentile(r->lat, r->n, 0.99);
    r->mean = sum / (double)r->n;
    r->rps = r->wall_s > 0 ? (double)r->n / r->wall_s : 0;
}

static const row *find(const bench *B, int pin, int app, int tr, int s)
{
    for (size_t i = 0; i < B->nrows; i++) {
        const row *r = &B->rows[i];
        if (r->pin == pin && r->app == app && r->transport == tr && r->scheme == s && r->n)
            return r;
    }
    return NULL;
}

/* R = 1 - added(DSig)/added(Ed25519) at one percentile (0: p10, 1: p50, 2: p90); NAN if not measured. */
static double ratio(const bench *B, const row *r, int which)
{
    const row *n = find(B, r->pin, r->app, r->transport, S_NONE), *e = find(B, r->pin, r->app, r->transport, S_ED25519),
              *d = find(B, r->pin, r->app, r->transport, S_DSIG);
    if (!n || !e || !d)
        return NAN;
    double pn = which == 0 ? n->p10 : which == 1 ? n->p50 : n->p90;
    double pe = which == 0 ? e->p10 : which == 1 ? e->p50 : e->p90;
    double pd = which == 0 ? d->p10 : which == 1 ? d->p50 : d->p90;
    return pe - pn > 0 ? 1.0 - (pd - pn) / (pe - pn) : NAN;
}

/* The added latency of r over the unsigned row at p50 (NAN if none). */
static double added(const bench *B, const row *r, int which)
{
    const row *n = find(B, r->pin, r->app, r->transport, S_NONE);
    if (!n)
        return NAN;
    return which == 0 ? r->p10 - n->p10 : which == 1 ? r->p50 - n->p50 : r->p90 - n->p90;
}

/* "model name" of the first CPU. */
static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c += 2;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, cap, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static void print_table(const bench *B, FILE *f)
{
    fprintf(f, "%-5s %-5s %-6s %-20s %8s %9s %9s %9s %9s %10s %10s %11s\n", "app", "via", "pinned", "scheme", "requests",
            "p10 us", "p50 us", "p90 us", "req/s", "added p50", "req fast", "reply fast");
    for (size_t i = 0; i < B->nrows; i++) {
        const row *r = &B->rows[i];
        char add[32] = "-", rf[32] = "-", pf[32] = "-";
        if (r->scheme != S_NONE && !isnan(added(B, r, 1)))
            snprintf(add, sizeof add, "%.2f", added(B, r, 1));
        if (r->scheme == S_DSIG) {
            snprintf(rf, sizeof rf, "%.1f%%", r->req_fast + r->req_slow ? 100.0 * (double)r->req_fast /
                                                                             (double)(r->req_fast + r->req_slow)
                                                                       : 0);
            snprintf(pf, sizeof pf, "%.1f%%", r->reply_fast + r->reply_slow ? 100.0 * (double)r->reply_fast /
                                                                                 (double)(r->reply_fast + r->reply_slow)
                                                                           : 0);
        }
        fprintf(f, "%-5s %-5s %-6s %-20s %8zu %9.2f %9.2f %9.2f %9.0f %10s %10s %11s\n", app_names[r->app],
                transport_names[r->transport], r->pin ? "yes" : "no", scheme_titles[r->scheme], r->n, r->p10, r->p50,
                r->p90, r->rps, add, rf, pf);
    }
    for (size_t i = 0; i < B->nrows; i++) {
        const row *r = &B->rows[i];
        if (r->scheme != S_DSIG)
            continue;
        const row *e = find(B, r->pin, r->app, r->transport, S_ED25519);
        if (!e || !find(B, r->pin, r->app, r->transport, S_NONE))
            continue; /* R needs all three schemes */
        if (isnan(ratio(B, r, 1))) {
            fprintf(f, "R %s %s %s: n/a (Ed25519 added %.2f us at p50: nothing to compare with); the paper: %.2f\n",
                    app_names[r->app], transport_names[r->transport], r->pin ? "pinned" : "unpinned", added(B, e, 1),
                    PAPER_R);
            continue;
        }
        fprintf(f, "R %s %s %s: 1 - added(DSig)/added(Ed25519) = 1 - %.2f/%.2f us = %.2f at p50 (p10 %.2f, p90 %.2f); "
                   "the paper: %.2f\n",
                app_names[r->app], transport_names[r->transport], r->pin ? "pinned" : "unpinned", added(B, r, 1),
                added(B, e, 1), ratio(B, r, 1), ratio(B, r, 0), ratio(B, r, 2), PAPER_R);
    }
}

static void write_csv(const bench *B, FILE *f, const char *date, const char *machine, long ncpu)
{
    fputs("date,machine,cpus,app,transport,pinned,scheme,requests,p10_us,p50_us,p90_us,p99_us,mean_us,req_per_s,"
          "added_p10_us,added_p50_us,added_p90_us,request_fast,request_slow,reply_fast,reply_slow,r_p10,r_p50,r_p90,"
          "paper_r\n",
          f);
    for (size_t i = 0; i < B->nrows; i++) {
        const row *r = &B->rows[i];
        bench_csv_str(f, date);
        fputc(',', f);
        bench_csv_str(f, machine);
        fprintf(f, ",%ld,%s,%s,%s,%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f", ncpu, app_names[r->app],
                transport_names[r->transport], r->pin ? "yes" : "no", scheme_names[r->scheme], r->n, r->p10, r->p50,
                r->p90, r->p99, r->mean, r->rps);
        for (int w = 0; w < 3; w++) {
            double a = r->scheme == S_NONE ? NAN : added(B, r, w);
            if (isnan(a))
                fputc(',', f);
            else
                fprintf(f, ",%.3f", a);
        }
        if (r->scheme == S_DSIG) /* the fast path exists only there */
            fprintf(f, ",%llu,%llu,%llu,%llu", (unsigned long long)r->req_fast, (unsigned long long)r->req_slow,
                    (unsigned long long)r->reply_fast, (unsigned long long)r->reply_slow);
        else
            fputs(",,,,", f);
        for (int w = 0; w < 3; w++) {
            double x = r->scheme == S_DSIG ? ratio(B, r, w) : NAN;
            if (isnan(x))
                fputc(',', f);
            else
                fprintf(f, ",%.4f", x);
        }
        fprintf(f, ",%.2f\n", PAPER_R);
    }
}

static void write_svg(const bench *B, FILE *f, int app, const char *date, const char *machine, long ncpu,
                      const char *logplace)
{
    bench_lat_bar bars[NPINS * NTRANSPORTS * NSCHEMES];
    char groups[NPINS * NTRANSPORTS][96], notes[NPINS * NTRANSPORTS][160];
    const char *notep[NPINS * NTRANSPORTS];
    size_t n = 0, ng = 0;
    unsigned long count = 0;
    for (int pin = 0; pin < NPINS; pin++)
        for (int tr = 0; tr < NTRANSPORTS; tr++) {
            int first = 1;
            for (int s = 0; s < NSCHEMES; s++) {
                const row *r = find(B, pin, app, tr, s);
                if (!r)
                    continue;
                if (first) {
                    snprintf(groups[ng], sizeof groups[ng], "%s, %s",
                             tr == T_UNIX ? "Unix socket" : "TCP loopback",
                             pin ? "pinned (client CPU 0, server+redis CPU 1)" : "unpinned");
                    const row *d = find(B, pin, app, tr, S_DSIG);
                    double R = d ? ratio(B, d, 1) : NAN;
                    if (!isnan(R))
                        snprintf(notes[ng], sizeof notes[ng], "R = 1 - added(DSig)/added(Ed25519) = %.2f at p50 "
                                 "(paper: %.2f)", R, PAPER_R);
                    else
                        notes[ng][0] = '\0';
                    notep[ng] = notes[ng][0] ? notes[ng] : NULL;
                    ng++;
                    first = 0;
                }
                bars[n++] = (bench_lat_bar){.group = groups[ng - 1], .label = scheme_titles[s], .series = s,
                                            .p10 = r->p10, .p50 = r->p50, .p90 = r->p90, .n = r->n};
                count = r->n;
            }
        }
    char title[160], s0[200], s1[300], s2[300], s3[300];
    snprintf(title, sizeof title, "dsig bench apps: auditable %s, latency per request (window 1)",
             app == A_KV ? "Redis" : "order book");
    snprintf(s0, sizeof s0, "workload: %s",
             app == A_KV ? "16 B keys, 32 B values, 80% GET with 90% hits, 20% SET (the DSig paper's)"
                         : "one symbol, 50% buys, limit prices 1880-1893 ticks, quantities 100-1000 (the DSig paper's)");
    snprintf(s1, sizeof s1, "%.120s, %ld CPUs, load average %.1f-%.1f; %.40s; %lu requests per bar", machine, ncpu,
             B->load[0], B->load[1], date, count);
    snprintf(s2, sizeof s2, "client and server in separate processes; every request signed, logged durably "
             "(%.100s) before it runs, reply signed", logplace);
    snprintf(s3, sizeof s3, "%ld CPUs: unpinned, the DSig background threads share the cores with client, server%s",
             ncpu, app == A_KV ? " and redis-server" : "");
    const char *sub[4] = {s0, s1, s2, s3};
    const bench_lat_chart chart = {.title = title, .subtitle = sub, .nsub = 4, .series = scheme_titles,
                                   .nseries = NSCHEMES, .unit = "µs", .group_notes = notep,
                                   .axis = "latency per request, µs (bar: median; whisker: p10 to p90)"};
    bench_svg_latency(f, &chart, bars, n);
}

/* Audit every signed log on the slow path. 0 or -1. */
static int audit_logs(bench *B, char *err, size_t errlen)
{
    for (int pin = 0; pin < NPINS; pin++)
        for (int app = 0; app < NAPPS; app++)
            for (int s = S_ED25519; s < NSCHEMES; s++) {
                if (!B->logs[pin][app][s][0])
                    continue;
                char dir[700];
                snprintf(dir, sizeof dir, "%s/keys-%s", B->work, scheme_names[s]);
                apps_keyset *ks = NULL;
                if (apps_keyset_load(dir, &ks) != DSIG_OK)
                    return bench_fail(err, errlen, "audit keys: %s", dsig_last_error_detail());
                apps_audit_result res;
                double t0 = now_s();
                int rc = apps_audit_verify(B->logs[pin][app][s], ks, &res);
                B->audit_s[pin][app][s] = now_s() - t0;
                apps_keyset_free(ks);
                if (rc != DSIG_OK)
                    return bench_fail(err, errlen, "audit of %s: %s", B->logs[pin][app][s],
                                      rc == DSIG_E_VERIFY ? res.what : dsig_last_error_detail());
                B->audit_ok[pin][app][s] = 1;
                B->audit_entries[pin][app][s] = res.entries;
            }
    return 0;
}

/* nftw callback: remove one entry (depth first). */
static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Remove the work directory: it holds only what this run made (keys, logs, sockets). */
static void rm_work(const char *work)
{
    (void)nftw(work, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int bench_apps_main(int argc, char **argv)
{
    opts o;
    char err[BENCH_ERR_LEN];
    int pr = parse(argc, argv, &o, err, sizeof err);
    if (pr == 1) {
        help(stdout);
        return 0;
    }
    if (pr < 0) {
        fprintf(stderr, "dsig bench apps: %s\n", err);
        return 2;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 2 && (o.pins & (1u << P_ON))) {
        fprintf(stderr, "dsig bench apps: one CPU: the pinned configuration is skipped\n");
        o.pins &= ~(1u << P_ON);
    }
    bench B;
    memset(&B, 0, sizeof B);
    B.o = &o;
    struct stat sb;
    const char *logdir = o.log_dir ? o.log_dir
                         : (stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0)
                             ? "/dev/shm"
                             : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (strlen(logdir) > 60) {
        fprintf(stderr, "dsig bench apps: --log-dir: at most 60 bytes (Unix socket paths are made in it)\n");
        return 2;
    }
    snprintf(B.work, sizeof B.work, "%s/dsig-apps.XXXXXX", logdir);
    if (!mkdtemp(B.work)) {
        fprintf(stderr, "dsig bench apps: cannot make a directory in %s: %s\n", logdir, strerror(errno));
        return 2;
    }
    if (getloadavg(&B.load[0], 1) != 1)
        B.load[0] = -1;
    size_t maxrows = NPINS * NAPPS * NTRANSPORTS * NSCHEMES;
    B.rows = calloc(maxrows, sizeof *B.rows);
    int rc = B.rows ? 0 : bench_fail(err, sizeof err, "out of memory");
    for (int s = 0; rc == 0 && s < NSCHEMES; s++)
        if (o.schemes & (1u << s))
            rc = make_keys(B.work, s, err, sizeof err);
    for (int pin = 0; rc == 0 && pin < NPINS; pin++)
        for (int app = 0; rc == 0 && app < NAPPS; app++)
            if ((o.pins & (1u << pin)) && (o.apps & (1u << app)))
                rc = run_app(&B, pin, app, err, sizeof err);
    if (rc == 0) {
        if (!o.quiet)
            fprintf(stderr, "dsig bench apps: auditing the signed logs (slow path, public keys only)\n");
        rc = audit_logs(&B, err, sizeof err);
    }
    if (getloadavg(&B.load[1], 1) != 1)
        B.load[1] = -1;
    for (size_t i = 0; i < B.nrows; i++)
        row_stats(&B.rows[i]);
    char date[64], machine[200], stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
    bench_timestamp(stamp, sizeof stamp);
    cpu_model(machine, sizeof machine);
    const char *logplace = strncmp(B.work, "/dev/shm", 8) == 0 ? "tmpfs" : B.work;
    if (rc == 0) {
        printf("# dsig bench apps, %s, %s, %ld CPUs, load average %.1f at the start, %.1f at the end; %u requests "
               "per row in %u rounds, window 1, after %u warm-up\n",
               date, machine, ncpu, B.load[0], B.load[1], o.requests, o.runs, o.warmup);
        print_table(&B, stdout);
        for (int pin = 0; pin < NPINS; pin++)
            for (int app = 0; app < NAPPS; app++)
                for (int s = S_ED25519; s < NSCHEMES; s++)
                    if (B.audit_ok[pin][app][s])
                        printf("audit: %s %s log (%s): %llu entries verified with public keys only in %.2f s\n",
                               app_names[app], scheme_titles[s], pin ? "pinned" : "unpinned",
                               (unsigned long long)B.audit_entries[pin][app][s], B.audit_s[pin][app][s]);
        if (ncpu <= 2)
            printf("note: %ld CPUs: the client, the servers, redis-server and each process's DSig background threads "
                   "(key generation, batch verification) share them; unpinned, DSig's background work competes with "
                   "the foreground path (the paper gives it a core of its own), pinned rows keep client and server "
                   "apart (client CPU 0, server and redis-server CPU 1, as taskset -c 0 / -c 1) but not from their "
                   "own background threads.\n",
                   ncpu);
        printf("note: request logs on %s%s: each request is written and fdatasync'ed before it runs, for every "
               "scheme%s.\n",
               logplace, strcmp(logplace, "tmpfs") == 0 ? " (/dev/shm)" : "",
               strcmp(logplace, "tmpfs") == 0 ? "; on tmpfs the flush itself costs ~nothing (--log-dir DIR for a "
                                                "disk, where it adds the same 0.3-8 ms to every scheme here)"
                                              : "");
        if (!o.out_dir) {
            printf("CSV, SVG: not written (give --out DIR)\n");
        } else if (bench_mkdir_p(o.out_dir) != 0) {
            rc = bench_fail(err, sizeof err, "cannot create %s", o.out_dir);
        } else {
            char path[4200];
            snprintf(path, sizeof path, "%s/bench_apps_%s.csv", o.out_dir, stamp);
            FILE *f = fopen(path, "w");
            if (!f) {
                rc = bench_fail(err, sizeof err, "cannot write %s: %s", path, strerror(errno));
            } else {
                write_csv(&B, f, date, machine, ncpu);
                if (fclose(f) != 0)
                    rc = bench_fail(err, sizeof err, "error writing %s", path);
                else
                    printf("CSV: %s\n", path);
            }
            for (int app = 0; rc == 0 && app < NAPPS; app++) {
                if (!(o.apps & (1u << app)))
                    continue;
                snprintf(path, sizeof path, "%s/bench_apps_%s_%s.svg", o.out_dir, app_names[app], stamp);
                if (!(f = fopen(path, "w"))) {
                    rc = bench_fail(err, sizeof err, "cannot write %s: %s", path, strerror(errno));
                    break;
                }
                write_svg(&B, f, app, date, machine, ncpu, logplace);
                if (fclose(f) != 0)
                    rc = bench_fail(err, sizeof err, "error writing %s", path);
                else
                    printf("SVG: %s\n", path);
            }
        }
    }
    if (rc != 0)
        fprintf(stderr, "dsig bench apps: %s\n", err);
    if (o.keep)
        printf("kept: %s (logs <app>-<scheme>-pin<off|on>.log, keys keys-<scheme>/; e.g. dsig audit verify "
               "%s/kv-dsig-pinoff.log --keys %s/keys-dsig)\n",
               B.work, B.work, B.work);
    else
        rm_work(B.work);
    for (size_t i = 0; i < B.nrows; i++)
        free(B.rows[i].lat);
    free(B.rows);
    return rc == 0 ? 0 : 2;
}
