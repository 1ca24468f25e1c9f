/*
 * tests/apps/apps_fixture.h — an order-book server running in the test process (apps_fixture.c): a
 * temporary directory with a server key, registered clients 1 and 2, the log, a Unix socket; library
 * clients; and a raw client that writes frames byte by byte (to send what no correct client would).
 */
#ifndef DSIG_TESTS_APPS_FIXTURE_H
#define DSIG_TESTS_APPS_FIXTURE_H

#include <pthread.h>

#include "testutil.h"
#include "apps/apps_internal.h"

struct fx {
    int scheme;
    char dir[64], keys[96], log[128], sock[128], addr[160];
    dsig_key *server_key, *server_pub, *ck[3];
    apps_keyset *ks;
    apps_server *srv;
    pthread_t th;
    int running;
};

/* Keys for `scheme` ("DSig"-bound for dsig, "Ed25519" otherwise) and the directories. */
void fx_init(struct fx *f, int scheme);
/* Start (or restart, on the same log) the server; returns apps_server_new's code. */
int fx_start(struct fx *f);
void fx_stop(struct fx *f);
/* Stop, remove everything. */
void fx_free(struct fx *f);
/* A library client for registered client `id` (1 or 2), synced. */
apps_client *fx_client(struct fx *f, uint64_t id);
/* Place a book order through a client; returns the call's code, the reply in *r. */
int fx_order(apps_client *c, unsigned op, uint32_t price, uint32_t qty, uint64_t order, apps_reply *r);
/* The server's counters. */
apps_server_stats fx_stats(struct fx *f);

struct raw {
    apps_io io;
    uint8_t tag[APPS_TAG_BYTES];
    uint64_t next_seq;
    apps_signer *signer;
};
/* A bare connection to the server (no HELLO) in *io; returns its descriptor. */
int raw_connect(struct fx *f, apps_io *io);
/* Connect and send HELLO for `id`; DSIG_OK once WELCOME came, else the server's error (as the library
 * maps it) — the connection stays open for inspection. */
int raw_open(struct fx *f, struct raw *r, uint64_t id);
void raw_close(struct raw *r);
/* A whole REQUEST frame (header included) into out: client id and seq as given, signed by client
 * `signer_id`'s key; flip_sig flips one signature byte. *len = frame bytes. */
void raw_request(struct fx *f, struct raw *r, uint64_t client, uint64_t seq, const uint8_t *body, size_t blen,
                 int flip_sig, uint8_t *out, size_t *len);
/* Write bytes as they are. */
void raw_send(struct raw *r, const void *p, size_t n);
/* The next frame other than BATCH: its type; for ERROR *code = the error code. DSIG_E_IO if closed. */
int raw_next(struct raw *r, uint8_t *type, unsigned *code);

#endif
