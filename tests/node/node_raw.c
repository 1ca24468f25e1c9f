/*
 * tests/node/node_raw.c — raw node connections for tests (node_raw.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <unistd.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "classic/ed25519_derive.h"
#include "classic/eddsa.h"
#include "dsig/error.h"
#include "dsig/registry.h"
#include "dsig/stream.h"
#include "net/net.h"
#include "node/node_internal.h"
#include "node_raw.h"

/* Write all bytes. 0 or -1. */
static int wr(int s, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t r = send(s, b, n, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Read exactly n bytes within the deadline (ms since the epoch of CLOCK_MONOTONIC). 0 or -1. */
static int rd(int s, uint8_t *p, size_t n, long long deadline)
{
    while (n) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        if (now >= deadline)
            return -1;
        struct pollfd pf = {s, POLLIN, 0};
        if (poll(&pf, 1, (int)(deadline - now)) != 1)
            return -1;
        ssize_t r = recv(s, p, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int nr_connect(unsigned port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        close(s);
        return -1;
    }
    return s;
}

int nr_frame(int s, uint8_t type, const void *p, size_t len)
{
    uint8_t h[DSIG_NET_HDR_BYTES];
    dsig_net_frame_header(h, type, (uint32_t)len);
    if (wr(s, h, sizeof h) != 0)
        return -1;
    return len ? wr(s, p, len) : 0;
}

int nr_read_frame(int s, uint8_t *buf, size_t cap, size_t *len, unsigned ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long deadline = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + ms;
    for (;;) {
        uint8_t h[DSIG_NET_HDR_BYTES];
        if (rd(s, h, sizeof h, deadline) != 0)
            return -1;
        uint32_t l = (uint32_t)h[8] << 24 | (uint32_t)h[9] << 16 | (uint32_t)h[10] << 8 | h[11];
        if (l > cap)
            return -1;
        if (rd(s, buf, l, deadline) != 0)
            return -1;
        if (h[5] == DSIG_NET_T_PING) {
            if (nr_frame(s, DSIG_NET_T_PONG, buf, l) != 0)
                return -1;
            continue;
        }
        if (h[5] == DSIG_NET_T_PONG)
            continue;
        *len = l;
        return h[5];
    }
}

int nr_hello(int s, uint64_t id, uint8_t nonce[32])
{
    for (int i = 0; i < 32; i++)
        nonce[i] = (uint8_t)(rand() ^ (i * 37)); /* fresh enough for a test peer */
    uint8_t h[NODE_HELLO_BYTES];
    node_hello_encode(h, id, 0x7E57, nonce);
    return nr_frame(s, DSIG_NODE_T_HELLO, h, sizeof h);
}

int nr_handshake(int s, uint64_t id, const dsig_key *key, uint64_t node_id, const dsig_key *node_pub)
{
    return nr_handshake_label(s, id, key, NODE_AUTH_KEY_LABEL, node_id, node_pub);
}

int nr_handshake_label(int s, uint64_t id, const dsig_key *key, const char *label, uint64_t node_id,
                       const dsig_key *node_pub)
{
    uint8_t mine[32], theirs[32], buf[256];
    size_t len = 0;
    uint64_t nid, inst;
    if (nr_hello(s, id, mine) != 0)
        return -1;
    if (nr_read_frame(s, buf, sizeof buf, &len, 3000) != DSIG_NODE_T_HELLO ||
        node_hello_parse(buf, len, &nid, &inst, theirs) != DSIG_OK || nid != node_id)
        return -1;
    /* the node answers our HELLO with its AUTH; read it before sending ours, since a node that refuses
     * ours closes the connection and may discard what it had queued */
    uint8_t t[NODE_AUTH_TRANSCRIPT_BYTES], sig[64];
    if (nr_read_frame(s, buf, sizeof buf, &len, 3000) != DSIG_NODE_T_AUTH || len != 64)
        return -1;
    if (node_pub) {
        uint8_t apk[32];
        node_auth_transcript(t, node_id, id, theirs, mine);
        if (dsig_ed25519_derive_public(((const struct dsig_eddsa_key *)node_pub->impl)->pk, NODE_AUTH_KEY_LABEL,
                                       apk) != DSIG_OK ||
            !dsig_ed25519_verify_pk(apk, t, sizeof t, buf))
            return -1;
    }
    dsig_ed25519_dkey ask;
    node_auth_transcript(t, id, node_id, mine, theirs);
    int rc = DSIG_OK;
    if (label) {
        rc = dsig_ed25519_derive_secret(key, label, &ask);
    } else { /* the identity key itself: plain RFC 8032 Ed25519 */
        const struct dsig_eddsa_key *k = key->impl;
        memcpy(ask.s, k->s, 32);
        memcpy(ask.prefix, k->prefix, 32);
        memcpy(ask.pk, k->pk, 32);
    }
    if (rc == DSIG_OK)
        rc = dsig_ed25519_dkey_sign(&ask, t, sizeof t, sig);
    dsig_memzero(&ask, sizeof ask);
    if (rc != DSIG_OK || nr_frame(s, DSIG_NODE_T_AUTH, sig, sizeof sig) != 0)
        return -1;
    return 0;
}
