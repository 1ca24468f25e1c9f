/*
 * src/apps/client.c — the client library of the auditable applications (apps.h): one connection, one
 * request at a time. It signs each request with the next sequence number, sends its own DSig batch
 * messages ahead of the requests they cover (on the same stream, from the thread that writes requests),
 * feeds the server's batch messages to its verifier as they arrive, and accepts a reply only if the
 * server's signature verifies and the reply names exactly the request sent.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "apps/apps_internal.h"
#include "core/bytes.h"
#include "core/internal.h"

#define SERVER_ID 0u              /* the server's id in the client's verifier */
#define BATCH_RETAIN 16u

struct apps_client {
    apps_io io;
    unsigned app;
    int scheme;
    uint64_t id, next_seq;
    const dsig_key *key, *server_key;
    uint8_t tag[APPS_TAG_BYTES];
    apps_signer *signer;
    apps_verifier *verifier;
    apps_batchq *bq;
    uint64_t bcursor;
    size_t batch_max;
    uint8_t *out;                 /* length ‖ request message ‖ signature */
    uint8_t *bmsg;
    uint8_t req_hash[32];
    int timeout_ms;
    uint64_t fast, slow;
    uint64_t srv_fast, srv_slow;  /* the server's counters at the last sync */
};

/* The client signer's batch callback (background thread): queued, sent before the next request. */
static void client_batch(void *arg, const uint8_t *msg, size_t len)
{
    apps_batchq_push(((apps_client *)arg)->bq, msg, len);
}

/* Send the batch messages the server has not had yet. */
static int send_batches(apps_client *c)
{
    return apps_batchq_send(c->bq, &c->bcursor, c->io.fd, c->bmsg, c->batch_max);
}

/* An ERROR frame from the server as a status code, its text in the detail. */
static int server_error(const uint8_t *p, size_t len)
{
    if (len < 9)
        return dsig_fail(DSIG_E_FORMAT, "server sent a malformed ERROR frame");
    int rc;
    switch (p[0]) {
    case APPS_ERR_SIGNATURE: rc = DSIG_E_VERIFY; break;
    case APPS_ERR_SEQUENCE: rc = DSIG_E_STATE; break;
    case APPS_ERR_UNKNOWN: rc = DSIG_E_UNKNOWN_SIGNER; break;
    case APPS_ERR_MALFORMED:
    case APPS_ERR_COMMAND: rc = DSIG_E_FORMAT; break;
    case APPS_ERR_PROTOCOL: rc = DSIG_E_ARG; break;
    default: rc = DSIG_E_IO; break;
    }
    size_t n = len - 9 > APPS_ERROR_TEXT_MAX ? APPS_ERROR_TEXT_MAX : len - 9;
    return dsig_fail(rc, "server: %.*s", (int)n, (const char *)p + 9);
}

/* Read frames until one of type `want` (feeding batch messages to the verifier on the way). */
static int read_until(apps_client *c, uint8_t want, const uint8_t **p, uint32_t *len)
{
    for (;;) {
        uint8_t type;
        int rc = apps_io_read(&c->io, c->timeout_ms, c->timeout_ms, &type, p, len);
        if (rc == DSIG_E_WOULD_BLOCK)
            return dsig_fail(DSIG_E_IO, "no answer from the server within %d ms", c->timeout_ms);
        if (rc != DSIG_OK)
            return rc;
        if (type == want)
            return DSIG_OK;
        if (type == APPS_T_BATCH && c->verifier && c->scheme == APPS_SCHEME_DSIG) {
            (void)apps_verifier_batch(c->verifier, SERVER_ID, *p, *len); /* a bad one only costs the fast path */
            continue;
        }
        if (type == APPS_T_ERROR)
            return server_error(*p, *len);
        return dsig_fail(DSIG_E_FORMAT, "server sent an unexpected frame (type 0x%02x)", type);
    }
}

int apps_client_connect(apps_client **out, const apps_client_opts *o)
{
    *out = NULL;
    if (!o->address || !o->key || !o->server_key || o->id == 0 || o->id > APPS_MAX_ID ||
        (o->app != APPS_APP_KV && o->app != APPS_APP_BOOK) || (o->scheme != -1 && !apps_scheme_name(o->scheme)))
        return dsig_fail(DSIG_E_ARG, "client: address, keys, an id in 1..2^63-1 and an application are needed");
    dsig_net_addr addr;
    int rc = dsig_net_addr_parse(o->address, &addr);
    if (rc != DSIG_OK)
        return rc;
    apps_client *c = calloc(1, sizeof *c);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "client: out of memory");
    c->io.fd = -1;
    c->app = o->app;
    c->id = o->id;
    c->key = o->key;
    c->server_key = o->server_key;
    c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
    int fd = -1;
    uint8_t expect_tag[APPS_TAG_BYTES];
    if ((rc = apps_server_tag(o->server_key, expect_tag)) != DSIG_OK ||
        (rc = dsig_net_socket_connect(&addr, c->timeout_ms, &fd)) != DSIG_OK)
        goto fail;
    if ((rc = apps_io_init(&c->io, fd)) != DSIG_OK) {
        close(fd);
        goto fail;
    }
    if (!(c->out = malloc(APPS_MAX_FRAME))) {
        rc = dsig_fail(DSIG_E_NOMEM, "client: out of memory");
        goto fail;
    }
    uint8_t hello[APPS_HELLO_BYTES] = {APPS_PROTO_VERSION, (uint8_t)o->app,
                                       (uint8_t)(o->scheme < 0 ? APPS_HELLO_ANY_SCHEME : (unsigned)o->scheme), 0};
    dsig_store_be64(hello + 4, o->id);
    struct iovec iov = {hello, sizeof hello};
    if ((rc = apps_io_write(c->io.fd, APPS_T_HELLO, &iov, 1)) != DSIG_OK)
        goto fail;
    const uint8_t *w;
    uint32_t wl;
    if ((rc = read_until(c, APPS_T_WELCOME, &w, &wl)) != DSIG_OK)
        goto fail;
    if (wl != APPS_WELCOME_BYTES || w[0] != APPS_PROTO_VERSION || w[1] != o->app || w[2] > APPS_SCHEME_DSIG ||
        (o->scheme >= 0 && w[2] != o->scheme)) {
        rc = dsig_fail(DSIG_E_FORMAT, "server sent a malformed WELCOME");
        goto fail;
    }
    c->scheme = w[2];
    c->next_seq = dsig_load_be64(w + 4);
    memcpy(c->tag, w + 12, APPS_TAG_BYTES);
    if (memcmp(c->tag, expect_tag, APPS_TAG_BYTES) != 0) {
        rc = dsig_fail(DSIG_E_KEY_MISMATCH, "the server at %s does not hold the expected server key", o->address);
        goto fail;
    }
    if ((rc = apps_verifier_new(&c->verifier, c->scheme, 1)) != DSIG_OK ||
        (rc = apps_verifier_add(c->verifier, SERVER_ID, o->server_key)) != DSIG_OK)
        goto fail;
    if (c->scheme == APPS_SCHEME_DSIG) {
        c->batch_max = apps_batch_msg_bytes();
        if ((rc = apps_batchq_new(&c->bq, BATCH_RETAIN, c->batch_max)) != DSIG_OK)
            goto fail;
        if (!(c->bmsg = malloc(c->batch_max))) {
            rc = dsig_fail(DSIG_E_NOMEM, "client: out of memory");
            goto fail;
        }
    }
    if ((rc = apps_signer_new(&c->signer, c->scheme, o->key, o->id, o->pool, client_batch, c)) != DSIG_OK)
        goto fail;
    *out = c;
    return DSIG_OK;
fail:
    apps_client_close(c);
    return rc;
}

int apps_client_sync(apps_client *c)
{
    int rc = apps_signer_wait_full(c->signer);
    if (rc == DSIG_OK)
        rc = send_batches(c);
    if (rc == DSIG_OK)
        rc = apps_io_write(c->io.fd, APPS_T_SYNC, NULL, 0);
    const uint8_t *p;
    uint32_t len;
    if (rc == DSIG_OK)
        rc = read_until(c, APPS_T_SYNC_ACK, &p, &len);
    if (rc == DSIG_OK && len != 16)
        rc = dsig_fail(DSIG_E_FORMAT, "server sent a malformed SYNC_ACK");
    if (rc == DSIG_OK) {
        c->srv_fast = dsig_load_be64(p);
        c->srv_slow = dsig_load_be64(p + 8);
        apps_verifier_flush(c->verifier);
    }
    return rc;
}

int apps_client_call(apps_client *c, const uint8_t *body, size_t len, apps_reply *r)
{
    memset(r, 0, sizeof *r);
    apps_req rq = {.app = c->app, .scheme = c->scheme, .client = c->id, .seq = c->next_seq, .body = body,
                   .body_len = len};
    memcpy(rq.tag, c->tag, APPS_TAG_BYTES);
    size_t ml, sl = 0;
    int rc = apps_req_encode(&rq, c->out + 4, APPS_MAX_FRAME - 4, &ml);
    if (rc == DSIG_OK)
        rc = apps_sign(c->signer, c->out + 4, ml, c->out + 4 + ml, APPS_MAX_FRAME - 4 - ml, &sl);
    if (rc != DSIG_OK)
        return rc;
    dsig_store_be32(c->out, (uint32_t)ml);
    struct iovec h = {c->out + 4, ml};
    apps_hash(c->req_hash, &h, 1);
    if ((rc = send_batches(c)) != DSIG_OK)
        return rc;
    struct iovec iov = {c->out, 4 + ml + sl};
    if ((rc = apps_io_write(c->io.fd, APPS_T_REQUEST, &iov, 1)) != DSIG_OK)
        return rc;
    const uint8_t *p;
    uint32_t pl;
    if ((rc = read_until(c, APPS_T_REPLY, &p, &pl)) != DSIG_OK)
        return rc;
    const uint8_t *msg, *sig;
    size_t rml, rsl;
    apps_rep rep;
    if (apps_signed_split(p, pl, &msg, &rml, &sig, &rsl) != DSIG_OK || apps_rep_parse(msg, rml, &rep) != DSIG_OK)
        return dsig_fail(DSIG_E_FORMAT, "malformed reply: %s", dsig_last_error_detail());
    if (rep.app != c->app || rep.scheme != c->scheme || rep.client != c->id || rep.seq != rq.seq ||
        memcmp(rep.tag, c->tag, APPS_TAG_BYTES) != 0 || memcmp(rep.req_hash, c->req_hash, 32) != 0)
        return dsig_fail(DSIG_E_VERIFY, "the reply does not answer request %llu of client %llu",
                         (unsigned long long)rq.seq, (unsigned long long)c->id);
    int fast = 0;
    if ((rc = apps_verify(c->verifier, SERVER_ID, c->server_key, msg, rml, sig, rsl, &fast)) != DSIG_OK)
        return dsig_fail(DSIG_E_VERIFY, "reply signature does not verify (%s)", dsig_strerror(rc));
    if (fast)
        c->fast++;
    else
        c->slow++;
    c->next_seq++;
    r->seq = rep.seq;
    r->index = rep.index;
    r->result = rep.result;
    r->result_len = rep.result_len;
    r->receipt = p;
    r->receipt_len = pl;
    r->fast = fast;
    return DSIG_OK;
}

int apps_client_scheme(const apps_client *c)
{
    return c->scheme;
}

uint64_t apps_client_next_seq(const apps_client *c)
{
    return c->next_seq;
}

void apps_client_paths(const apps_client *c, uint64_t *fast, uint64_t *slow)
{
    *fast = c->fast;
    *slow = c->slow;
}

void apps_client_server_paths(const apps_client *c, uint64_t *fast, uint64_t *slow)
{
    *fast = c->srv_fast;
    *slow = c->srv_slow;
}

void apps_client_close(apps_client *c)
{
    if (!c)
        return;
    if (c->io.fd >= 0)
        shutdown(c->io.fd, SHUT_RDWR);
    apps_signer_free(c->signer); /* first: its background thread pushes to bq */
    apps_verifier_free(c->verifier);
    apps_batchq_free(c->bq);
    if (c->io.rbuf)
        apps_io_clear(&c->io);
    else if (c->io.fd >= 0)
        close(c->io.fd);
    free(c->out);
    free(c->bmsg);
    free(c);
}
