/*
 * tests/apps/apps_fixture.c — see apps_fixture.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps_fixture.h"
#include "core/bytes.h"

/* Write a key's JWK (public or private) to path. */
static void write_key(const dsig_key *k, int priv, const char *path)
{
    char *text;
    size_t len;
    assert_int_equal(dsig_jwk_export(k, priv, &text, &len), DSIG_OK);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    dsig_free(text);
}

void fx_init(struct fx *f, int scheme)
{
    memset(f, 0, sizeof *f);
    f->scheme = scheme;
    strcpy(f->dir, "/tmp/dsig-apps-srv.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->keys, sizeof f->keys, "%s/keys", f->dir);
    snprintf(f->log, sizeof f->log, "%s/book.log", f->dir);
    snprintf(f->sock, sizeof f->sock, "%s/s.sock", f->dir);
    snprintf(f->addr, sizeof f->addr, "unix:%s", f->sock);
    assert_int_equal(mkdir(f->keys, 0700), 0);
    const dsig_alg *alg = dsig_alg_by_name(scheme == APPS_SCHEME_DSIG ? "DSig" : "Ed25519");
    assert_int_equal(dsig_key_generate(&f->server_key, alg, NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&f->server_pub, f->server_key), DSIG_OK);
    for (int c = 1; c <= 2; c++) {
        assert_int_equal(dsig_key_generate(&f->ck[c], alg, NULL), DSIG_OK);
        dsig_key *pub;
        assert_int_equal(dsig_key_public(&pub, f->ck[c]), DSIG_OK);
        char p[160];
        snprintf(p, sizeof p, "%s/client-%d.jwk", f->keys, c);
        write_key(pub, 0, p);
        dsig_key_free(pub);
    }
    assert_int_equal(apps_keyset_load(f->keys, &f->ks), DSIG_OK);
}

static void *run(void *arg)
{
    (void)apps_server_run(arg);
    return NULL;
}

int fx_start(struct fx *f)
{
    apps_server_opts o = {.app = APPS_APP_BOOK, .scheme = f->scheme, .key = f->server_key, .clients = f->ks,
                          .log_path = f->log, .listen = {f->addr}, .nlisten = 1, .pool = 128, .quiet = 1};
    int rc = apps_server_new(&f->srv, &o);
    if (rc != DSIG_OK)
        return rc;
    assert_int_equal(pthread_create(&f->th, NULL, run, f->srv), 0);
    f->running = 1;
    return DSIG_OK;
}

void fx_stop(struct fx *f)
{
    if (!f->running)
        return;
    apps_server_stop(f->srv);
    pthread_join(f->th, NULL);
    apps_server_free(f->srv);
    f->srv = NULL;
    f->running = 0;
}

void fx_free(struct fx *f)
{
    fx_stop(f);
    apps_keyset_free(f->ks);
    char p[160];
    for (int c = 1; c <= 2; c++) {
        snprintf(p, sizeof p, "%s/client-%d.jwk", f->keys, c);
        unlink(p);
        dsig_key_free(f->ck[c]);
    }
    dsig_key_free(f->server_key);
    dsig_key_free(f->server_pub);
    rmdir(f->keys);
    unlink(f->log);
    unlink(f->sock);
    rmdir(f->dir);
}

apps_client *fx_client(struct fx *f, uint64_t id)
{
    apps_client_opts o = {.address = f->addr, .app = APPS_APP_BOOK, .id = id, .key = f->ck[id],
                          .server_key = f->server_pub, .scheme = -1, .pool = 128, .timeout_ms = 10000};
    apps_client *c = NULL;
    int rc = apps_client_connect(&c, &o);
    if (rc != DSIG_OK) {
        print_error("client %llu: %s\n", (unsigned long long)id, dsig_last_error_detail());
        fail();
    }
    assert_int_equal(apps_client_sync(c), DSIG_OK);
    return c;
}

int fx_order(apps_client *c, unsigned op, uint32_t price, uint32_t qty, uint64_t order, apps_reply *r)
{
    uint8_t body[APPS_BOOK_BODY];
    apps_book_body(op, price, qty, order, body);
    return apps_client_call(c, body, sizeof body, r);
}

apps_server_stats fx_stats(struct fx *f)
{
    apps_server_stats st;
    apps_server_stats_get(f->srv, &st);
    return st;
}

int raw_connect(struct fx *f, apps_io *io)
{
    dsig_net_addr a;
    int fd;
    assert_int_equal(dsig_net_addr_parse(f->addr, &a), DSIG_OK);
    assert_int_equal(dsig_net_socket_connect(&a, 5000, &fd), DSIG_OK);
    assert_int_equal(apps_io_init(io, fd), DSIG_OK);
    return fd;
}

int raw_open(struct fx *f, struct raw *r, uint64_t id)
{
    memset(r, 0, sizeof *r);
    raw_connect(f, &r->io);
    if (id >= 1 && id <= 2)
        assert_int_equal(apps_signer_new(&r->signer, f->scheme, f->ck[id], id, 128, NULL, NULL), DSIG_OK);
    uint8_t hello[APPS_HELLO_BYTES] = {APPS_PROTO_VERSION, APPS_APP_BOOK, (uint8_t)f->scheme, 0};
    dsig_store_be64(hello + 4, id);
    struct iovec iov = {hello, sizeof hello};
    assert_int_equal(apps_io_write(r->io.fd, APPS_T_HELLO, &iov, 1), DSIG_OK);
    uint8_t type;
    const uint8_t *p;
    uint32_t len;
    int rc = apps_io_read(&r->io, 5000, 5000, &type, &p, &len);
    if (rc != DSIG_OK)
        return rc;
    if (type == APPS_T_ERROR)
        return p[0] == APPS_ERR_UNKNOWN ? DSIG_E_UNKNOWN_SIGNER : DSIG_E_ARG;
    assert_int_equal(type, APPS_T_WELCOME);
    assert_int_equal(len, APPS_WELCOME_BYTES);
    r->next_seq = dsig_load_be64(p + 4);
    memcpy(r->tag, p + 12, APPS_TAG_BYTES);
    return DSIG_OK;
}

void raw_close(struct raw *r)
{
    apps_signer_free(r->signer);
    apps_io_clear(&r->io);
}

void raw_request(struct fx *f, struct raw *r, uint64_t client, uint64_t seq, const uint8_t *body, size_t blen,
                 int flip_sig, uint8_t *out, size_t *len)
{
    (void)f;
    apps_req rq = {.app = APPS_APP_BOOK, .scheme = f->scheme, .client = client, .seq = seq, .body = body,
                   .body_len = blen};
    memcpy(rq.tag, r->tag, APPS_TAG_BYTES);
    uint8_t *pl = out + DSIG_NET_HDR_BYTES;
    size_t ml, sl = 0;
    assert_int_equal(apps_req_encode(&rq, pl + 4, 4096, &ml), DSIG_OK);
    assert_int_equal(apps_sign(r->signer, pl + 4, ml, pl + 4 + ml, 4096, &sl), DSIG_OK);
    if (flip_sig)
        pl[4 + ml + sl / 2] ^= 0x01;
    dsig_store_be32(pl, (uint32_t)ml);
    dsig_net_frame_header(out, APPS_T_REQUEST, (uint32_t)(4 + ml + sl));
    *len = DSIG_NET_HDR_BYTES + 4 + ml + sl;
}

void raw_send(struct raw *r, const void *p, size_t n)
{
    assert_int_equal(write(r->io.fd, p, n), (ssize_t)n);
}

int raw_next(struct raw *r, uint8_t *type, unsigned *code)
{
    for (;;) {
        const uint8_t *p;
        uint32_t len;
        int rc = apps_io_read(&r->io, 10000, 10000, type, &p, &len);
        if (rc != DSIG_OK)
            return rc;
        if (*type == APPS_T_BATCH)
            continue;
        *code = *type == APPS_T_ERROR && len ? p[0] : 0;
        return DSIG_OK;
    }
}
