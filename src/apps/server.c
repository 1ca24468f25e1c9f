/*
 * src/apps/server.c — the auditable server shared by the key-value store and the order book (apps.h).
 *
 * Threads: apps_server_run accepts connections; each connection has its own thread, which reads a frame,
 * checks and verifies a request (in parallel with the other connections), then
 *   1. under the sequencer lock: checks the client's sequence number (exactly previous + 1), builds the
 *      log record (chained to the previous one) and appends it — the log order is fixed here;
 *   2. waits until the record is durable (group commit: concurrent connections share an fdatasync);
 *   3. waits for its turn (every earlier entry executed) and executes the request on the backend — so the
 *      store always equals the replay of the log's prefix;
 *   4. signs the reply (request hash, client, sequence number, log index, chain value) and writes it,
 *      preceded by any new batch messages of the server's DSig signer.
 * Anything refused before step 1 (malformed, unknown client, bad signature, replay, unknown command)
 * gets an unsigned ERROR frame and is neither logged nor executed. A backend that goes away (Redis
 * restarting) is rebuilt from the log by the thread holding the turn, which then executes its entry:
 * nothing logged is lost and nothing is executed twice. The server's signer and the clients' batch
 * verification run on the DSig runtime's background threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apps/apps_internal.h"
#include "core/applog.h"
#include "core/bytes.h"
#include "core/internal.h"

#define MAX_CONNS 512u
#define PART_TIMEOUT_MS 10000    /* a frame must be complete within this once it started */
#define BATCH_RETAIN 16u         /* server batch messages kept for clients that connect later */
#define STARTUP_BACKEND_MS 10000u /* how long a starting server waits for its store */

struct conn {
    apps_server *s;
    apps_io io;
    pthread_t th;
    atomic_int done;             /* the thread has finished: reap it */
    struct conn *next;
    int hello;                   /* HELLO received */
    uint64_t client;
    size_t ci;                   /* the client's position in the keyset */
    const dsig_key *pub;
    uint64_t bcursor;            /* server batch messages already sent on this connection */
    apps_buf result;
    uint8_t *out;                /* reply message, then its signature */
    uint8_t *bmsg;               /* a batch message being sent */
};

struct apps_server {
    unsigned app;
    int scheme;
    uint8_t tag[APPS_TAG_BYTES];
    const apps_keyset *clients;
    char *log_path;
    int quiet;
    apps_backend *be;
    apps_signer *signer;
    apps_verifier *verifier;
    apps_batchq *bq;
    size_t batch_max;            /* largest batch message accepted */
    dsig_applog *log;
    int lfd[APPS_MAX_LISTEN];
    char laddr[APPS_MAX_LISTEN][DSIG_NET_ADDR_TEXT_MAX];
    size_t nlisten;
    int stop_pipe[2];
    atomic_int stopping;

    /* sequencer: log order */
    pthread_mutex_t seq_mu;
    uint64_t next_index;
    uint8_t chain[32];
    uint64_t *last_seq;          /* per keyset position */
    atomic_int failed;           /* the log failed: nothing more is accepted (read without a lock) */
    uint8_t *recbuf;

    /* execution turn */
    pthread_mutex_t ex_mu;
    pthread_cond_t ex_cv;
    uint64_t executed;           /* every entry <= executed has been executed */

    pthread_mutex_t conn_mu;
    struct conn *conns;
    unsigned nconns;

    struct {
        _Atomic uint64_t executed, malformed, signature, replay, unknown, command, fast, slow, rebuilds, conns;
    } st;
};

/* A note on stderr (unless quiet). */
__attribute__((format(printf, 2, 3))) static void note(const apps_server *s, const char *fmt, ...)
{
    if (s->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dsig %s: ", apps_app_name(s->app));
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- frames out --------------------------------------------------------------------------------- */

/* An unsigned ERROR frame: code, the request's sequence number (0 if none), text. */
static int send_error(struct conn *c, unsigned code, uint64_t seq, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int send_error(struct conn *c, unsigned code, uint64_t seq, const char *fmt, ...)
{
    uint8_t hdr[9];
    char text[APPS_ERROR_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > APPS_ERROR_TEXT_MAX)
        n = APPS_ERROR_TEXT_MAX;
    for (int i = 0; i < n; i++)
        if ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] == 0x7f)
            text[i] = '?';
    hdr[0] = (uint8_t)code;
    dsig_store_be64(hdr + 1, seq);
    struct iovec iov[2] = {{hdr, sizeof hdr}, {text, (size_t)n}};
    return apps_io_write(c->io.fd, APPS_T_ERROR, iov, 2);
}

/* Send the server's batch messages this connection has not had yet (before a reply they may cover). */
static int send_batches(struct conn *c)
{
    return apps_batchq_send(c->s->bq, &c->bcursor, c->io.fd, c->bmsg, c->s->batch_max);
}

/* ---- the backend: execution and rebuild ---------------------------------------------------------- */

/* Empty the backend and replay entries 1..upto from the log; retried until it works, the server stops or
 * (limit_ms > 0) the time is up (ex_mu held, or before serving). DSIG_OK, DSIG_E_STATE when stopping,
 * DSIG_E_IO when the time is up. */
static int rebuild(apps_server *s, uint64_t upto, const char *why_first, unsigned limit_ms)
{
    unsigned delay_ms = 20;
    int told = 0;
    uint64_t start = now_ns(CLOCK_MONOTONIC);
    for (;;) {
        if (atomic_load(&s->stopping))
            return dsig_fail(DSIG_E_STATE, "server stopping");
        char why[256] = "";
        uint64_t t0 = now_ns(CLOCK_MONOTONIC), writes = 0;
        if (s->be->ops->reset(s->be, why, sizeof why) == APPS_EXEC_OK) {
            int rc = apps_replay(s->log_path, s->be, upto, &writes);
            if (rc == DSIG_OK) {
                if (upto || told)
                    note(s, "data set rebuilt from the log: %llu writes of entries 1..%llu in %.1f ms",
                         (unsigned long long)writes, (unsigned long long)upto,
                         (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
                return DSIG_OK;
            }
            snprintf(why, sizeof why, "%s", dsig_last_error_detail());
            if (rc != DSIG_E_IO) /* the log itself is unreadable: retrying does not help */
                return rc;
        }
        if (limit_ms && now_ns(CLOCK_MONOTONIC) - start > (uint64_t)limit_ms * 1000000u)
            return dsig_fail(DSIG_E_IO, "%s", why);
        if (!told) {
            note(s, "%s%s%s; retrying until it answers", why_first ? why_first : "", why_first ? ": " : "", why);
            told = 1;
        }
        struct timespec ts = {0, (long)delay_ms * 1000000L};
        nanosleep(&ts, NULL);
        if (delay_ms < 500)
            delay_ms *= 2;
    }
}

/* Execute entry `index` in its turn; the result goes to c->result. DSIG_OK, or DSIG_E_STATE if the
 * server stops (or the log failed) before it could run. */
static int execute_in_turn(struct conn *c, uint64_t index, const uint8_t *body, size_t len)
{
    apps_server *s = c->s;
    pthread_mutex_lock(&s->ex_mu);
    while (s->executed + 1 != index && !atomic_load(&s->stopping) && !atomic_load(&s->failed))
        pthread_cond_wait(&s->ex_cv, &s->ex_mu);
    int rc = DSIG_OK;
    if (s->executed + 1 != index) {
        rc = DSIG_E_STATE;
    } else {
        for (;;) {
            c->result.len = 0;
            c->result.overflow = 0;
            if (s->be->ops->exec(s->be, index, c->client, body, len, &c->result) == APPS_EXEC_OK)
                break;
            atomic_fetch_add(&s->st.rebuilds, 1);
            if ((rc = rebuild(s, index - 1, "the store went away", 0)) != DSIG_OK)
                break;
        }
        if (rc == DSIG_OK) {
            if (c->result.overflow) {
                c->result.len = c->result.overflow = 0;
                static const char big[] = "result larger than the reply bound";
                apps_val_str(&c->result, APPS_V_ERROR, big, sizeof big - 1);
            }
            s->executed = index;
            atomic_fetch_add(&s->st.executed, 1);
            pthread_cond_broadcast(&s->ex_cv);
        }
    }
    pthread_mutex_unlock(&s->ex_mu);
    return rc;
}

/* ---- requests ------------------------------------------------------------------------------------- */

/* Log failed: refuse everything from now on (waiters in the turn give up). */
static void fail_log(apps_server *s)
{
    pthread_mutex_lock(&s->ex_mu);
    atomic_store(&s->failed, 1);
    pthread_cond_broadcast(&s->ex_cv);
    pthread_mutex_unlock(&s->ex_mu);
}

/* One REQUEST frame. Returns 0 to keep the connection, -1 to close it. */
static int on_request(struct conn *c, const uint8_t *p, size_t len)
{
    apps_server *s = c->s;
    const uint8_t *msg, *sig;
    size_t ml, sl;
    apps_req rq;
    if (apps_signed_split(p, len, &msg, &ml, &sig, &sl) != DSIG_OK || apps_req_parse(msg, ml, &rq) != DSIG_OK) {
        atomic_fetch_add(&s->st.malformed, 1);
        return send_error(c, APPS_ERR_MALFORMED, 0, "malformed request: %s", dsig_last_error_detail()) ? -1 : 0;
    }
    if (rq.app != s->app || rq.scheme != s->scheme || rq.client != c->client ||
        memcmp(rq.tag, s->tag, APPS_TAG_BYTES) != 0) {
        atomic_fetch_add(&s->st.malformed, 1);
        return send_error(c, APPS_ERR_PROTOCOL, rq.seq,
                          "request for %s/%s from client %llu does not fit this connection (%s/%s, client %llu, "
                          "this server's tag)",
                          apps_app_name(rq.app), apps_scheme_name(rq.scheme), (unsigned long long)rq.client,
                          apps_app_name(s->app), apps_scheme_name(s->scheme), (unsigned long long)c->client)
                   ? -1
                   : 0;
    }
    char why[512];
    if (s->be->ops->check(rq.body, rq.body_len, why, sizeof why) != 0) {
        atomic_fetch_add(&s->st.command, 1);
        return send_error(c, APPS_ERR_COMMAND, rq.seq, "refused, not logged: %s", why) ? -1 : 0;
    }
    int fast = 0;
    int vrc = apps_verify(s->verifier, c->client, c->pub, msg, ml, sig, sl, &fast);
    if (vrc != DSIG_OK) {
        atomic_fetch_add(&s->st.signature, 1);
        return send_error(c, APPS_ERR_SIGNATURE, rq.seq,
                          "signature of client %llu on request %llu does not verify (%s): refused, not logged",
                          (unsigned long long)c->client, (unsigned long long)rq.seq, dsig_strerror(vrc))
                   ? -1
                   : 0;
    }
    atomic_fetch_add(fast ? &s->st.fast : &s->st.slow, 1);

    /* 1. sequence number and log order */
    pthread_mutex_lock(&s->seq_mu);
    if (atomic_load(&s->failed)) {
        pthread_mutex_unlock(&s->seq_mu);
        return send_error(c, APPS_ERR_SERVER, rq.seq, "the log failed: nothing more is accepted") ? -1 : 0;
    }
    uint64_t expected = s->last_seq[c->ci] + 1;
    if (rq.seq != expected) {
        pthread_mutex_unlock(&s->seq_mu);
        atomic_fetch_add(&s->st.replay, 1);
        return send_error(c, APPS_ERR_SEQUENCE, rq.seq,
                          "%s: client %llu sent sequence number %llu, the next one is %llu; refused, not logged",
                          rq.seq < expected ? "replayed or old request" : "out of order (a gap)",
                          (unsigned long long)c->client, (unsigned long long)rq.seq, (unsigned long long)expected)
                   ? -1
                   : 0;
    }
    apps_rec r = {.scheme = s->scheme, .app = s->app, .index = s->next_index, .client = c->client,
                  .seq = rq.seq, .time_ns = now_ns(CLOCK_REALTIME), .req = msg, .req_len = ml, .sig = sig,
                  .sig_len = sl};
    size_t rl;
    uint64_t ticket = 0;
    int rc = apps_rec_build(&r, s->chain, s->recbuf, APPS_REC_MAX, &rl);
    if (rc == DSIG_OK) {
        struct iovec iov = {s->recbuf, rl};
        rc = dsig_applog_append(s->log, &iov, 1, &ticket);
    }
    if (rc != DSIG_OK) {
        pthread_mutex_unlock(&s->seq_mu);
        fail_log(s);
        note(s, "request log: %s; refusing everything from now on", dsig_last_error_detail());
        return send_error(c, APPS_ERR_SERVER, rq.seq, "the log failed: %s", dsig_last_error_detail()) ? -1 : 0;
    }
    s->next_index++;
    memcpy(s->chain, r.chain, 32);
    s->last_seq[c->ci] = rq.seq;
    pthread_mutex_unlock(&s->seq_mu);

    /* 2. durable before anything is executed */
    if ((rc = dsig_applog_wait(s->log, ticket)) != DSIG_OK) {
        fail_log(s);
        note(s, "request log: %s; refusing everything from now on", dsig_last_error_detail());
        return send_error(c, APPS_ERR_SERVER, rq.seq, "the log failed: %s (not executed)", dsig_last_error_detail())
                   ? -1
                   : 0;
    }

    /* 3. execute in log order */
    if (execute_in_turn(c, r.index, rq.body, rq.body_len) != DSIG_OK)
        return send_error(c, APPS_ERR_SERVER, rq.seq,
                          "logged as entry %llu but not executed: the server is stopping or its log failed "
                          "(a restart executes it)",
                          (unsigned long long)r.index),
               -1;

    /* 4. the signed reply */
    apps_rep rep = {.app = s->app, .scheme = s->scheme, .client = c->client, .seq = rq.seq, .index = r.index,
                    .result = c->result.p, .result_len = c->result.len};
    memcpy(rep.tag, s->tag, APPS_TAG_BYTES);
    struct iovec h = {(void *)msg, ml};
    apps_hash(rep.req_hash, &h, 1);
    memcpy(rep.chain, r.chain, 32);
    size_t rml, rsl = 0;
    uint8_t *sigout;
    if ((rc = apps_rep_encode(&rep, c->out + 4, APPS_MAX_FRAME - 4, &rml)) == DSIG_OK) {
        sigout = c->out + 4 + rml;
        rc = apps_sign(s->signer, c->out + 4, rml, sigout, APPS_MAX_FRAME - 4 - rml, &rsl);
    }
    if (rc != DSIG_OK) {
        note(s, "cannot sign the reply to entry %llu: %s", (unsigned long long)r.index, dsig_last_error_detail());
        return send_error(c, APPS_ERR_SERVER, rq.seq, "executed as entry %llu, but the reply could not be signed",
                          (unsigned long long)r.index),
               -1;
    }
    dsig_store_be32(c->out, (uint32_t)rml);
    if (send_batches(c) != DSIG_OK)
        return -1;
    struct iovec iov = {c->out, 4 + rml + rsl};
    return apps_io_write(c->io.fd, APPS_T_REPLY, &iov, 1) == DSIG_OK ? 0 : -1;
}

/* HELLO: who the client is. Returns 0 to go on, -1 to close. */
static int on_hello(struct conn *c, const uint8_t *p, size_t len)
{
    apps_server *s = c->s;
    if (c->hello || len != APPS_HELLO_BYTES || p[0] != APPS_PROTO_VERSION || p[3] != 0) {
        atomic_fetch_add(&s->st.malformed, 1);
        send_error(c, APPS_ERR_PROTOCOL, 0, "malformed or repeated HELLO");
        return -1;
    }
    uint64_t id = dsig_load_be64(p + 4);
    if (p[1] != s->app || (p[2] != s->scheme && p[2] != APPS_HELLO_ANY_SCHEME)) {
        send_error(c, APPS_ERR_PROTOCOL, 0, "this server is %s with scheme %s, not %s with scheme %s",
                   apps_app_name(s->app), apps_scheme_name(s->scheme), apps_app_name(p[1]) ? apps_app_name(p[1]) : "?",
                   apps_scheme_name(p[2]) ? apps_scheme_name(p[2]) : "?");
        return -1;
    }
    if (!apps_keyset_index(s->clients, id, &c->ci)) {
        atomic_fetch_add(&s->st.unknown, 1);
        send_error(c, APPS_ERR_UNKNOWN, 0, "client %llu is not registered with this server",
                   (unsigned long long)id);
        return -1;
    }
    c->client = id;
    c->pub = apps_keyset_find(s->clients, id);
    if (apps_verifier_add(s->verifier, id, c->pub) != DSIG_OK) {
        send_error(c, APPS_ERR_SERVER, 0, "cannot register client %llu: %s", (unsigned long long)id,
                   dsig_last_error_detail());
        return -1;
    }
    c->hello = 1;
    uint8_t w[APPS_WELCOME_BYTES] = {APPS_PROTO_VERSION, (uint8_t)s->app, (uint8_t)s->scheme, 0};
    pthread_mutex_lock(&s->seq_mu);
    dsig_store_be64(w + 4, s->last_seq[c->ci] + 1);
    pthread_mutex_unlock(&s->seq_mu);
    memcpy(w + 12, s->tag, APPS_TAG_BYTES);
    struct iovec iov = {w, sizeof w};
    if (apps_io_write(c->io.fd, APPS_T_WELCOME, &iov, 1) != DSIG_OK)
        return -1;
    return send_batches(c) == DSIG_OK ? 0 : -1; /* the retained ones: they cover the next replies */
}

/* The connection thread. */
static void *conn_main(void *arg)
{
    struct conn *c = arg;
    apps_server *s = c->s;
    for (;;) {
        uint8_t type;
        const uint8_t *p;
        uint32_t len;
        int rc = apps_io_read(&c->io, -1, PART_TIMEOUT_MS, &type, &p, &len);
        if (rc != DSIG_OK) {
            if (rc != DSIG_E_IO || strstr(dsig_last_error_detail(), "middle")) {
                atomic_fetch_add(&s->st.malformed, 1);
                if (!atomic_load(&s->stopping))
                    note(s, "client %llu: %s; connection closed, nothing of that frame was executed",
                         (unsigned long long)c->client, dsig_last_error_detail());
                if (rc != DSIG_E_IO)
                    send_error(c, APPS_ERR_MALFORMED, 0, "%s", dsig_last_error_detail());
            }
            break;
        }
        int keep;
        if (type == APPS_T_HELLO) {
            keep = on_hello(c, p, len);
        } else if (!c->hello) {
            atomic_fetch_add(&s->st.malformed, 1);
            send_error(c, APPS_ERR_PROTOCOL, 0, "HELLO expected first (frame type 0x%02x)", type);
            keep = -1;
        } else if (type == APPS_T_REQUEST) {
            keep = on_request(c, p, len);
        } else if (type == APPS_T_BATCH && s->scheme == APPS_SCHEME_DSIG) {
            if (apps_verifier_batch(s->verifier, c->client, p, len) != DSIG_OK)
                atomic_fetch_add(&s->st.malformed, 1); /* dropped: its keys verify on the slow path */
            keep = 0;
        } else if (type == APPS_T_SYNC && len == 0) {
            apps_verifier_flush(s->verifier);
            uint8_t ack[16];
            dsig_store_be64(ack, atomic_load(&s->st.fast));
            dsig_store_be64(ack + 8, atomic_load(&s->st.slow));
            struct iovec iov = {ack, sizeof ack};
            keep = apps_signer_wait_full(s->signer) == DSIG_OK && send_batches(c) == DSIG_OK &&
                           apps_io_write(c->io.fd, APPS_T_SYNC_ACK, &iov, 1) == DSIG_OK
                       ? 0
                       : -1;
        } else {
            atomic_fetch_add(&s->st.malformed, 1);
            send_error(c, APPS_ERR_PROTOCOL, 0, "unexpected frame type 0x%02x of %u bytes", type, len);
            keep = -1;
        }
        if (keep != 0)
            break;
    }
    shutdown(c->io.fd, SHUT_RDWR);
    atomic_store(&c->done, 1);
    return NULL;
}

static void conn_free(struct conn *c)
{
    apps_io_clear(&c->io);
    apps_buf_free(&c->result);
    free(c->out);
    free(c->bmsg);
    free(c);
}

/* Join and free finished connections (or all of them with `all`, after their sockets were shut down). */
static void reap(apps_server *s, int all)
{
    pthread_mutex_lock(&s->conn_mu);
    struct conn **pp = &s->conns;
    while (*pp) {
        struct conn *c = *pp;
        if (all || atomic_load(&c->done)) {
            *pp = c->next;
            s->nconns--;
            pthread_mutex_unlock(&s->conn_mu);
            pthread_join(c->th, NULL);
            conn_free(c);
            pthread_mutex_lock(&s->conn_mu);
        } else {
            pp = &c->next;
        }
    }
    pthread_mutex_unlock(&s->conn_mu);
}

/* A new connection: its thread, or a refusal when full. */
static void accept_one(apps_server *s, int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return;
    }
    c->s = s;
    apps_buf_init(&c->result, APPS_MAX_RESULT);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        dsig_net_socket_nodelay(fd, ss.ss_family);
    if (apps_io_init(&c->io, fd) != DSIG_OK || !(c->out = malloc(APPS_MAX_FRAME)) ||
        !(c->bmsg = malloc(s->batch_max ? s->batch_max : 1))) {
        if (c->io.rbuf)
            apps_io_clear(&c->io);
        else
            close(fd);
        free(c->out);
        free(c);
        return;
    }
    pthread_mutex_lock(&s->conn_mu);
    int full = s->nconns >= MAX_CONNS;
    pthread_mutex_unlock(&s->conn_mu);
    if (full) {
        send_error(c, APPS_ERR_SERVER, 0, "too many connections (%u)", MAX_CONNS);
        conn_free(c);
        return;
    }
    atomic_fetch_add(&s->st.conns, 1);
    pthread_mutex_lock(&s->conn_mu);
    if (pthread_create(&c->th, NULL, conn_main, c) != 0) {
        pthread_mutex_unlock(&s->conn_mu);
        conn_free(c);
        return;
    }
    c->next = s->conns;
    s->conns = c;
    s->nconns++;
    pthread_mutex_unlock(&s->conn_mu);
}

/* ---- life cycle ------------------------------------------------------------------------------------ */

/* The server signer's batch callback (its background thread). */
static void server_batch(void *arg, const uint8_t *msg, size_t len)
{
    apps_batchq_push(((apps_server *)arg)->bq, msg, len);
}

/* Read the existing log: next index, chain, per-client sequence numbers; cut a torn last record off. */
static int recover(apps_server *s)
{
    struct stat st;
    if (stat(s->log_path, &st) != 0)
        return errno == ENOENT ? DSIG_OK : dsig_fail(DSIG_E_IO, "log \"%s\": %s", s->log_path, strerror(errno));
    apps_logrd rd;
    int rc = apps_logrd_open(&rd, s->log_path);
    if (rc != DSIG_OK)
        return rc;
    apps_rec r;
    char what[256];
    int torn = 0, broken = 0;
    while ((rc = apps_logrd_next(&rd, &r, what, sizeof what, &torn)) == 1) {
        uint8_t ch[32];
        apps_rec_chain(s->chain, rd.buf, rd.rec_len - 32, ch);
        if (r.index != s->next_index || memcmp(ch, r.chain, 32) != 0 || r.app != s->app || r.scheme != s->scheme) {
            rc = dsig_fail(DSIG_E_FORMAT,
                           "log \"%s\": the record at byte %llu is not entry %llu of a %s/%s log with an intact "
                           "chain (dsig audit verify says more)",
                           s->log_path, (unsigned long long)rd.rec_offset, (unsigned long long)s->next_index,
                           apps_app_name(s->app), apps_scheme_name(s->scheme));
            broken = 1;
            break;
        }
        size_t ci;
        if (apps_keyset_index(s->clients, r.client, &ci) && r.seq > s->last_seq[ci])
            s->last_seq[ci] = r.seq;
        memcpy(s->chain, r.chain, 32);
        s->next_index++;
    }
    uint64_t cut = rd.rec_offset;
    apps_logrd_close(&rd);
    if (rc == DSIG_E_FORMAT && !broken) {
        if (!torn)
            return dsig_fail(DSIG_E_FORMAT, "log \"%s\": damaged at byte %llu: %s", s->log_path,
                             (unsigned long long)cut, what);
        /* A crash during an append: that record was never durable, so never executed nor answered. (Its
         * length fields agree with each other, so this is a short tail, not a damaged length.) */
        if (truncate(s->log_path, (off_t)cut) != 0)
            return dsig_fail(DSIG_E_IO, "log \"%s\": cannot cut the torn last record: %s", s->log_path,
                             strerror(errno));
        note(s, "log: cut a torn last record at byte %llu (%s)", (unsigned long long)cut, what);
        rc = 0;
    }
    return rc < 0 ? rc : DSIG_OK;
}

int apps_server_new(apps_server **out, const apps_server_opts *o)
{
    *out = NULL;
    if ((o->app != APPS_APP_KV && o->app != APPS_APP_BOOK) || !apps_scheme_name(o->scheme) || !o->key ||
        !o->clients || !o->log_path || o->nlisten < 1 || o->nlisten > APPS_MAX_LISTEN ||
        (o->app == APPS_APP_KV && !o->redis))
        return dsig_fail(DSIG_E_ARG, "server: app, scheme, key, clients, log, 1..%u listen addresses%s needed",
                         APPS_MAX_LISTEN, o->app == APPS_APP_KV ? " and the redis address" : "");
    apps_server *s = calloc(1, sizeof *s);
    if (!s)
        return dsig_fail(DSIG_E_NOMEM, "server: out of memory");
    s->app = o->app;
    s->scheme = o->scheme;
    s->clients = o->clients;
    s->quiet = o->quiet;
    s->next_index = 1;
    s->stop_pipe[0] = s->stop_pipe[1] = -1;
    for (size_t i = 0; i < APPS_MAX_LISTEN; i++)
        s->lfd[i] = -1;
    pthread_mutex_init(&s->seq_mu, NULL);
    pthread_mutex_init(&s->ex_mu, NULL);
    pthread_cond_init(&s->ex_cv, NULL);
    pthread_mutex_init(&s->conn_mu, NULL);
    int rc = DSIG_OK;
    size_t nc = apps_keyset_count(o->clients);
    if (!(s->log_path = strdup(o->log_path)) || !(s->last_seq = calloc(nc ? nc : 1, sizeof *s->last_seq)) ||
        !(s->recbuf = malloc(APPS_REC_MAX)) || pipe2(s->stop_pipe, O_CLOEXEC) != 0)
        rc = dsig_fail(DSIG_E_NOMEM, "server: out of memory");
    if (rc == DSIG_OK)
        rc = apps_server_tag(o->key, s->tag);
    if (rc == DSIG_OK)
        rc = recover(s);
    if (rc == DSIG_OK)
        rc = dsig_applog_open(&s->log, "request log", s->log_path,
                              o->sync_always ? DSIG_APPLOG_ALWAYS : DSIG_APPLOG_GROUP, 0);
    if (rc == DSIG_OK)
        rc = o->app == APPS_APP_KV ? apps_kv_backend_new(&s->be, o->redis) : apps_book_backend_new(&s->be);
    if (rc == DSIG_OK)
        rc = rebuild(s, s->next_index - 1, o->app == APPS_APP_KV ? "redis-server does not answer" : NULL,
                     STARTUP_BACKEND_MS);
    s->executed = s->next_index - 1;
    if (rc == DSIG_OK && s->scheme == APPS_SCHEME_DSIG) {
        s->batch_max = apps_batch_msg_bytes();
        rc = apps_batchq_new(&s->bq, BATCH_RETAIN, s->batch_max);
    }
    if (rc == DSIG_OK)
        rc = apps_verifier_new(&s->verifier, s->scheme, (unsigned)(nc ? nc : 1));
    if (rc == DSIG_OK)
        rc = apps_signer_new(&s->signer, s->scheme, o->key, 0, o->pool, server_batch, s);
    for (size_t i = 0; rc == DSIG_OK && i < o->nlisten; i++) {
        dsig_net_addr a, bound;
        if ((rc = dsig_net_addr_parse(o->listen[i], &a)) != DSIG_OK)
            break;
        if ((rc = dsig_net_socket_listen(&a, 0, &s->lfd[i], &bound)) != DSIG_OK)
            break;
        dsig_net_addr_format(&bound, s->laddr[i], sizeof s->laddr[i]);
        s->nlisten++;
    }
    if (rc != DSIG_OK) {
        apps_server_free(s);
        return rc;
    }
    note(s, "serving %s with scheme %s, log %s (%llu entries)", apps_app_name(s->app), apps_scheme_name(s->scheme),
         s->log_path, (unsigned long long)(s->next_index - 1));
    *out = s;
    return DSIG_OK;
}

int apps_server_address(apps_server *s, size_t i, char *buf, size_t cap)
{
    if (i >= s->nlisten)
        return dsig_fail(DSIG_E_ARG, "server: no listen address %zu", i);
    if ((size_t)snprintf(buf, cap, "%s", s->laddr[i]) >= cap)
        return dsig_fail(DSIG_E_BUFFER, "server: address buffer too small");
    return DSIG_OK;
}

int apps_server_run(apps_server *s)
{
    struct pollfd p[APPS_MAX_LISTEN + 1];
    for (size_t i = 0; i < s->nlisten; i++)
        p[i] = (struct pollfd){.fd = s->lfd[i], .events = POLLIN};
    p[s->nlisten] = (struct pollfd){.fd = s->stop_pipe[0], .events = POLLIN};
    while (!atomic_load(&s->stopping)) {
        int n = poll(p, s->nlisten + 1, 1000);
        if (n < 0 && errno != EINTR)
            return dsig_fail(DSIG_E_IO, "server: poll: %s", strerror(errno));
        if (n > 0 && p[s->nlisten].revents)
            break;
        for (size_t i = 0; n > 0 && i < s->nlisten; i++)
            if (p[i].revents & POLLIN)
                accept_one(s, s->lfd[i]);
        reap(s, 0);
    }
    atomic_store(&s->stopping, 1);
    return DSIG_OK;
}

void apps_server_stop(apps_server *s)
{
    atomic_store(&s->stopping, 1);
    char b = 1;
    ssize_t w = write(s->stop_pipe[1], &b, 1);
    (void)w;
}

void apps_server_stats_get(apps_server *s, apps_server_stats *st)
{
    memset(st, 0, sizeof *st);
    pthread_mutex_lock(&s->seq_mu);
    st->entries = s->next_index - 1;
    pthread_mutex_unlock(&s->seq_mu);
    st->executed = atomic_load(&s->st.executed);
    st->refused_malformed = atomic_load(&s->st.malformed);
    st->refused_signature = atomic_load(&s->st.signature);
    st->refused_replay = atomic_load(&s->st.replay);
    st->refused_unknown = atomic_load(&s->st.unknown);
    st->refused_command = atomic_load(&s->st.command);
    st->verify_fast = atomic_load(&s->st.fast);
    st->verify_slow = atomic_load(&s->st.slow);
    st->backend_rebuilds = atomic_load(&s->st.rebuilds);
    st->connections = atomic_load(&s->st.conns);
}

void apps_server_free(apps_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, 1);
    pthread_mutex_lock(&s->ex_mu);
    pthread_cond_broadcast(&s->ex_cv);
    pthread_mutex_unlock(&s->ex_mu);
    pthread_mutex_lock(&s->conn_mu);
    for (struct conn *c = s->conns; c; c = c->next)
        shutdown(c->io.fd, SHUT_RDWR);
    pthread_mutex_unlock(&s->conn_mu);
    reap(s, 1);
    for (size_t i = 0; i < APPS_MAX_LISTEN; i++) {
        if (s->lfd[i] < 0)
            continue;
        close(s->lfd[i]);
        if (strncmp(s->laddr[i], "unix:", 5) == 0)
            unlink(s->laddr[i] + 5);
    }
    apps_signer_free(s->signer);
    apps_verifier_free(s->verifier);
    apps_batchq_free(s->bq);
    if (s->be)
        s->be->ops->free(s->be);
    dsig_applog_close(s->log);
    if (s->stop_pipe[0] >= 0)
        close(s->stop_pipe[0]);
    if (s->stop_pipe[1] >= 0)
        close(s->stop_pipe[1]);
    pthread_mutex_destroy(&s->seq_mu);
    pthread_mutex_destroy(&s->ex_mu);
    pthread_cond_destroy(&s->ex_cv);
    pthread_mutex_destroy(&s->conn_mu);
    free(s->recbuf);
    free(s->last_seq);
    free(s->log_path);
    free(s);
}
