/*
 * Fuzz target: the node plane's connection handlers (src/node/node_conn.c) over a real socket — one
 * dsig_node (id 1) runs in this process, its plane on 127.0.0.1 (port chosen by the kernel), in a
 * configuration of three members in group "g": itself and peers 2 and 3, whose keys the harness holds
 * (their addresses are closed ports: the node's own connections to them never come up). Each input is
 * one connection of a hostile peer played by the harness; everything it writes is split at random
 * points (fuzz_send_split), so the transport's incremental reader sees torn headers and payloads. At
 * the start of every input peers 2 and 3 are removed and added again (dsig_node_member_remove / _add):
 * their replay windows, cached batches, queue shares and budgets start empty, so an input's outcome
 * does not depend on the ones before it. The input is
 *
 *   byte 0   HELLO: bits 0-2 the id claimed (0: 2, 1: 3, 2: the node's own id 1, 3: an unknown id 7,
 *            4: id 0 (out of range), 5: raw — u8 length + that many bytes are the HELLO payload,
 *            6: id 2 under another protocol version, 7: id 3 with a payload one byte short);
 *            bits 3-5 the AUTH sent after the node's HELLO and AUTH (0 honest: the transcript signed
 *            with the claimed id's derived authentication key; 1 under the other peer's key; 2 under
 *            the claimed id's identity key itself, no derivation; 3 the honest AUTH of an earlier
 *            connection, replayed; 4 honest with one bit flipped (the next byte: which); 5 none (the
 *            connection stays claimed, not proven); 6 honest, one byte short; 7 the transcript with
 *            the two ids and nonces swapped — the node's own AUTH reflected back)
 *   byte 1   split seed of the HELLO and AUTH
 *   then up to FC_MAX_OPS operations, each a byte: bits 0-2 what, bits 3-7 the split seed of its bytes
 *     0  BATCH: u8 selects one of the harness's batch messages (0-2: peer 2's, honest, three seqs;
 *        3: peer 3's, honest; 4: one claiming signer 2 but signed with peer 3's key), as is
 *     1  the same, patched: u8 batch, u8 count of 5-byte fuzz_patch edits over the whole payload
 *     2  BATCH_ACK: u8 signer (0: the node's id), u16 seq, u8 group (0: "g", else "x")
 *     3  APP: u16 length + bytes
 *     4  a raw frame: type u8, u16 length, payload (a type the transport does not carry ends the input)
 *     5  u8 length + raw bytes, and the input ends (a torn frame, garbage)
 *     6  HELLO again (the first one's payload)
 *     7  the honest AUTH again (a late AUTH after none, or a second one)
 *   An input ends with a half-close; the harness reads until the node closes the connection (so every
 *   frame it sent has been handled) and until the node's verification queue is empty.
 *
 * Invariants (abort on violation; also whatever ASan and UBSan see in the node's threads):
 *   - the node answers a HELLO it accepts (parses, a configured id other than its own) with its own
 *     HELLO and an AUTH that verifies under its derived key over the transcript of this connection,
 *     and sends no AUTH for a HELLO it refuses;
 *   - the peer is authenticated exactly when its AUTH is the honest one (auth_ok moves by one, and only
 *     then); a wrong AUTH of 64 bytes moves auth_failed; every refusal (HELLO, AUTH, a second HELLO
 *     or AUTH) moves connections_rejected; each BATCH / BATCH_ACK / APP on a connection claimed but
 *     not proven moves drop_unauthenticated; an unknown id in the HELLO moves drop_unknown_id — each
 *     by exactly the count the harness predicts;
 *   - an APP payload is delivered (on_app) exactly when it was sent on an authenticated connection the
 *     node had not refused, in order, byte-identical, from the claimed id; app_received counts them;
 *   - a batch message is cached (dsig_node_can_verify_fast of a signature from its batch) exactly when
 *     its honest BATCH payload was sent on an authenticated connection (the direction "sent ⇒ cached"
 *     only when no batch was turned away by the queue bounds in that input); the batch signed with the
 *     wrong key is never cached, edited or not;
 *   - dsig_node_peer_up stays 0 for both peers (an accepted connection never makes a peer "up": only
 *     the node's own, outgoing, ones do, and those cannot connect here).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "classic/ed25519_derive.h"
#include "classic/eddsa.h"
#include "core/bytes.h"
#include "core/internal.h"
#include "dsig/hybrid.h"
#include "dsig/jwk.h"
#include "dsig/node.h"
#include "fuzz_common.h"
#include "net/net.h"
#include "node/node_state.h"
#include "node_raw.h"

#define FC_MAX_INPUT 16384u
#define FC_MAX_OPS 64u
#define FC_TIMEOUT_MS 30000 /* generous: the campaign runs under nice 19 on a shared machine */
#define FC_BATCHES 5u
#define FC_WRONG_KEY 4u
#define FC_APP_MAX 64u
#define FC_SEQ0 1000u

struct app_msg {
    uint64_t from;
    size_t len;
    uint8_t *bytes;
};

static struct {
    int ready;
    dsig_key *key[4], *pub[4];            /* [1] the node, [2] and [3] the peers */
    dsig_ed25519_dkey ask[4];             /* their derived authentication keys */
    uint8_t node_apk[32];                 /* the node's authentication public key */
    char *entry[4];                       /* configuration entries of the peers (member_add) */
    dsig_node_config *cfg;
    dsig_node *n;
    unsigned port;
    uint8_t *batch[FC_BATCHES];           /* BATCH payloads: prefix ‖ batch message */
    size_t batch_len[FC_BATCHES];
    uint64_t batch_signer[FC_BATCHES];
    uint8_t *bsig[FC_BATCHES];            /* a signature by a key of each batch */
    size_t bsig_len[FC_BATCHES];
    uint8_t replay[64];                   /* the honest AUTH of the previous connection */
    pthread_mutex_t app_lock;
    struct app_msg got[FC_APP_MAX];
    size_t n_got;
    int got_overflow;
} F = {.app_lock = PTHREAD_MUTEX_INITIALIZER};

static void on_app(void *arg, uint64_t peer, const uint8_t *bytes, size_t len)
{
    (void)arg;
    pthread_mutex_lock(&F.app_lock);
    if (F.n_got < FC_APP_MAX) {
        F.got[F.n_got].from = peer;
        F.got[F.n_got].len = len;
        F.got[F.n_got].bytes = fuzz_dup(bytes, len);
        F.n_got++;
    } else {
        F.got_overflow = 1;
    }
    pthread_mutex_unlock(&F.app_lock);
}

/* Remove member "kid" (a thumbprint, printed last or not) from a JWK text in place. */
static void strip_kid(char *jwk)
{
    char *kid = strstr(jwk, "\"kid\"");
    if (!kid)
        return;
    char *end = strchr(strchr(kid + 5, '"') + 1, '"') + 1;
    if (*end == ',')
        end++;
    else if (kid[-1] == ',')
        kid--;
    memmove(kid, end, strlen(end) + 1);
}

/* A DSig key (an Ed25519 key bound to "DSig", what the node configuration takes) from seed b × 32. */
static dsig_key *dsig_key_from_seed(uint8_t b)
{
    dsig_key *e = fuzz_ed25519_key(b), *k = NULL;
    char *jwk = NULL;
    size_t jl;
    FUZZ_CHECK(dsig_jwk_export(e, 1, &jwk, &jl) == DSIG_OK, "export: %s", dsig_last_error_detail());
    dsig_key_free(e);
    strip_kid(jwk);
    char *alg = strstr(jwk, "\"alg\":\"Ed25519\"");
    FUZZ_CHECK(alg != NULL, "unexpected JWK export (no \"alg\":\"Ed25519\")");
    char text[1024];
    int tl = snprintf(text, sizeof text, "%.*s\"alg\":\"DSig\"%s", (int)(alg - jwk), jwk,
                      alg + strlen("\"alg\":\"Ed25519\""));
    dsig_memzero(jwk, strlen(jwk));
    dsig_free(jwk);
    FUZZ_CHECK(tl > 0 && (size_t)tl < sizeof text, "JWK text");
    FUZZ_CHECK(dsig_jwk_import(&k, text, (size_t)tl) == DSIG_OK, "import as DSig: %s", dsig_last_error_detail());
    dsig_memzero(text, sizeof text);
    return k;
}

/* Configuration entry of node id (its public JWK without "kid"). */
static char *entry_text(uint64_t id, const char *address)
{
    char *jwk = NULL;
    size_t jl;
    FUZZ_CHECK(dsig_jwk_export(F.pub[id], 0, &jwk, &jl) == DSIG_OK, "export public: %s", dsig_last_error_detail());
    strip_kid(jwk);
    char *s = malloc(2048);
    FUZZ_CHECK(s != NULL, "memory");
    snprintf(s, 2048, "{\"id\":%llu,\"address\":\"%s\",\"public_key\":%s,\"groups\":[\"g\"]}",
             (unsigned long long)id, address, jwk);
    dsig_free(jwk);
    return s;
}

/* Batch message i: an honest one of `signer` made with key `key` (a signer of its own, so that the
 * signature comes from exactly that batch). */
static void make_batch(size_t i, uint64_t signer, size_t key, uint64_t seq)
{
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.threads = 0;
    so.signer_id = signer;
    so.outbox = 1;
    so.pool_target = 16;
    so.first_seq = seq; /* group index 0 in the high bits (NODE_SEQ_GROUP_SHIFT) */
    dsig_hybrid_signer *s;
    FUZZ_CHECK(dsig_hybrid_signer_new(&s, F.key[key], NULL, &so) == DSIG_OK, "signer: %s", dsig_last_error_detail());
    FUZZ_CHECK(dsig_hybrid_signer_refill(s, 1) == DSIG_OK, "refill: %s", dsig_last_error_detail());
    static uint8_t bm[65536];
    size_t bl;
    FUZZ_CHECK(dsig_hybrid_signer_next_batch(s, bm, sizeof bm, &bl) == DSIG_OK, "batch: %s", dsig_last_error_detail());
    F.batch[i] = malloc(NODE_BATCH_HDR_MAX + bl);
    FUZZ_CHECK(F.batch[i] != NULL, "memory");
    size_t pl = node_batch_prefix(F.batch[i], signer, "g", 1);
    memcpy(F.batch[i] + pl, bm, bl);
    F.batch_len[i] = pl + bl;
    F.batch_signer[i] = signer;
    F.bsig_len[i] = dsig_hybrid_signer_sig_bytes(s);
    F.bsig[i] = malloc(F.bsig_len[i]);
    size_t sl;
    FUZZ_CHECK(dsig_hybrid_sign(s, (const uint8_t *)"m", 1, F.bsig[i], F.bsig_len[i], &sl) == DSIG_OK,
               "sign: %s", dsig_last_error_detail());
    dsig_hybrid_signer_free(s);
}

static void setup(void)
{
    if (F.ready)
        return;
    for (size_t i = 1; i <= 3; i++) {
        F.key[i] = dsig_key_from_seed((uint8_t)(0x40 + i));
        FUZZ_CHECK(dsig_key_public(&F.pub[i], F.key[i]) == DSIG_OK, "public part");
        FUZZ_CHECK(dsig_ed25519_derive_secret(F.key[i], NODE_AUTH_KEY_LABEL, &F.ask[i]) == DSIG_OK, "derive");
    }
    FUZZ_CHECK(dsig_ed25519_derive_public(((const struct dsig_eddsa_key *)F.pub[1]->impl)->pk, NODE_AUTH_KEY_LABEL,
                                          F.node_apk) == DSIG_OK,
               "derive public");
    char *e1 = entry_text(1, "tcp:127.0.0.1:3"); /* it listens on a port of the kernel's choice */
    F.entry[2] = entry_text(2, "tcp:127.0.0.1:1"); /* closed ports: the node's connections fail */
    F.entry[3] = entry_text(3, "tcp:127.0.0.1:2");
    char txt[8192];
    int tl = snprintf(txt, sizeof txt, "{\"nodes\":[%s,%s,%s],\"groups\":{\"g\":{}}}", e1, F.entry[2], F.entry[3]);
    free(e1);
    FUZZ_CHECK(tl > 0 && (size_t)tl < sizeof txt, "configuration text");
    FUZZ_CHECK(dsig_node_config_parse(txt, (size_t)tl, &F.cfg) == DSIG_OK, "configuration: %s",
               dsig_last_error_detail());
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.pool_target = 16;
    o.heartbeat_ms = 0;         /* the harness does not answer PINGs */
    o.backoff_max_ms = 60000;   /* the dead peers are retried rarely */
    o.peer_verify_rate = 1000000;
    o.peer_verify_burst = 1000000;
    o.listen_address = "tcp:127.0.0.1:0";
    o.on_app = on_app;
    FUZZ_CHECK(dsig_node_new(&F.n, F.cfg, 1, F.key[1], &o) == DSIG_OK, "node: %s", dsig_last_error_detail());
    FUZZ_CHECK(dsig_node_start(F.n) == DSIG_OK, "start: %s", dsig_last_error_detail());
    char addr[128];
    FUZZ_CHECK(dsig_node_listen_address(F.n, addr, sizeof addr) == DSIG_OK, "address");
    const char *colon = strrchr(addr, ':');
    F.port = (unsigned)strtoul(colon + 1, NULL, 10);
    for (size_t i = 0; i < 3; i++)
        make_batch(i, 2, 2, FC_SEQ0 + i);
    make_batch(3, 3, 3, FC_SEQ0);
    make_batch(FC_WRONG_KEY, 2, 3, FC_SEQ0 + 7);
    F.ready = 1;
}

/* Bytes until the node closes the connection (discarded). */
static void drain(int fd)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint8_t buf[4096];
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        FUZZ_CHECK(ms < FC_TIMEOUT_MS, "the node did not close the connection after the peer's half-close");
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, (int)(FC_TIMEOUT_MS - ms)) != 1)
            continue;
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
    }
}

/* Wait until no received batch waits for or is in verification. */
static void quiesce(void)
{
    for (int i = 0; i < FC_TIMEOUT_MS; i++) {
        node_mem_rdlock(F.n);
        pthread_mutex_lock(&F.n->q_lock);
        unsigned busy = F.n->q_len;
        for (size_t p = 0; p < F.n->cfg->n_nodes; p++)
            busy += F.n->peers[p].queued;
        pthread_mutex_unlock(&F.n->q_lock);
        node_mem_unlock(F.n);
        if (!busy)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    FUZZ_CHECK(0, "the verification queue did not drain");
}

/* Peers 2 and 3 leave and join again: fresh windows, caches, queue shares and budgets. */
static void reset_peers(void)
{
    for (uint64_t id = 2; id <= 3; id++) {
        FUZZ_CHECK(dsig_node_member_remove(F.n, id) == DSIG_OK, "remove %llu: %s", (unsigned long long)id,
                   dsig_last_error_detail());
        FUZZ_CHECK(dsig_node_member_add(F.n, F.entry[id], strlen(F.entry[id])) == DSIG_OK, "add %llu: %s",
                   (unsigned long long)id, dsig_last_error_detail());
    }
    pthread_mutex_lock(&F.app_lock);
    for (size_t i = 0; i < F.n_got; i++)
        free(F.got[i].bytes);
    F.n_got = 0;
    F.got_overflow = 0;
    pthread_mutex_unlock(&F.app_lock);
}

/* The harness's model of the connection. */
struct model {
    int fd;
    int hello_ok, identified, closed, peer_closed;
    uint64_t claimed;
    uint8_t honest_auth[64];
    uint64_t rejected, auth_ok, auth_failed, unauth, unknown;
    int sent_honest[FC_BATCHES];
    struct app_msg want[FC_APP_MAX];
    size_t n_want;
};

static void send_frame(struct model *m, uint8_t type, const uint8_t *p, size_t n, uint32_t split)
{
    if (!m->peer_closed && fuzz_send_frame(m->fd, type, p, n, split))
        m->peer_closed = 1; /* the node closed: later writes are lost, as a peer's would be */
}

/* A frame of a node type after the handshake, and what the node does with it. */
static void node_frame(struct model *m, uint8_t type, const uint8_t *p, size_t n, uint32_t split)
{
    send_frame(m, type, p, n, split);
    if (m->closed)
        return;
    if (type == DSIG_NODE_T_HELLO) { /* a second HELLO */
        m->rejected++;
        m->closed = 1;
        return;
    }
    if (type == DSIG_NODE_T_AUTH) {
        if (!m->identified && n == 64 && memcmp(p, m->honest_auth, 64) == 0) {
            m->identified = 1;
            m->auth_ok++;
            return;
        }
        if (!m->identified && n == 64)
            m->auth_failed++;
        m->rejected++;
        m->closed = 1;
        return;
    }
    if (!m->identified) {
        m->unauth++; /* any other frame on a connection claimed but not proven is not taken */
        return;
    }
    if (type == DSIG_NODE_T_BATCH)
        for (size_t i = 0; i < FC_BATCHES; i++)
            if (n == F.batch_len[i] && memcmp(p, F.batch[i], n) == 0)
                m->sent_honest[i] = 1;
    if (type == DSIG_NODE_T_APP && m->n_want < FC_APP_MAX) {
        m->want[m->n_want].from = m->claimed;
        m->want[m->n_want].len = n;
        m->want[m->n_want].bytes = fuzz_dup(p, n);
        m->n_want++;
    }
}

/* Read the node's answer to a HELLO: its HELLO and AUTH when it accepted ours (the AUTH checked);
 * when it refused, anything but an AUTH before it closes. */
static void read_answer(struct model *m, const uint8_t my_nonce[32], uint8_t node_nonce[32])
{
    uint8_t buf[256];
    size_t len;
    int t = nr_read_frame(m->fd, buf, sizeof buf, &len, FC_TIMEOUT_MS);
    if (!m->hello_ok) {
        while (t >= 0) {
            FUZZ_CHECK(t != DSIG_NODE_T_AUTH, "the node sent an AUTH for a HELLO it refused");
            t = nr_read_frame(m->fd, buf, sizeof buf, &len, FC_TIMEOUT_MS);
        }
        return;
    }
    uint64_t nid, inst;
    FUZZ_CHECK(t == DSIG_NODE_T_HELLO, "no HELLO from the node (got %d)", t);
    FUZZ_CHECK(node_hello_parse(buf, len, &nid, &inst, node_nonce) == DSIG_OK && nid == 1,
               "the node's HELLO is malformed");
    t = nr_read_frame(m->fd, buf, sizeof buf, &len, FC_TIMEOUT_MS);
    FUZZ_CHECK(t == DSIG_NODE_T_AUTH && len == 64, "no AUTH from the node for an accepted HELLO (got %d)", t);
    uint8_t tr[NODE_AUTH_TRANSCRIPT_BYTES];
    node_auth_transcript(tr, 1, m->claimed, node_nonce, my_nonce);
    FUZZ_CHECK(dsig_ed25519_verify_pk(F.node_apk, tr, sizeof tr, buf), "the node's AUTH does not verify");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > FC_MAX_INPUT)
        return 0;
    setup();
    reset_peers();
    dsig_node_stats s0, s1;
    dsig_node_stats_get(F.n, &s0);
    fuzz_in in = {data, size};
    const unsigned b0 = fuzz_u8(&in), split0 = fuzz_u8(&in), hmode = b0 & 7, amode = (b0 >> 3) & 7;
    struct model m = {.fd = nr_connect(F.port)};
    FUZZ_CHECK(m.fd >= 0, "connect to the node");

    /* HELLO */
    static const uint64_t ids[8] = {2, 3, 1, 7, 0, 0, 2, 3};
    uint8_t hello[NODE_HELLO_BYTES + 255], my_nonce[32];
    size_t hl = NODE_HELLO_BYTES;
    for (int i = 0; i < 32; i++)
        my_nonce[i] = (uint8_t)(i * 29 + b0 + size);
    node_hello_encode(hello, ids[hmode], 0x7E57, my_nonce);
    if (hmode == 5) {
        const uint8_t *raw = fuzz_take(&in, fuzz_u8(&in), &hl);
        memcpy(hello, raw, hl);
    } else if (hmode == 6) {
        hello[0] ^= 0x40;
    } else if (hmode == 7) {
        hl--;
    }
    uint64_t id = 0, inst;
    uint8_t nonce[32];
    const int parsed = node_hello_parse(hello, hl, &id, &inst, nonce) == DSIG_OK;
    if (parsed)
        memcpy(my_nonce, nonce, 32);
    const int known = parsed && id >= 1 && id <= 3;
    m.hello_ok = known && id != 1;
    m.claimed = id;
    m.closed = !m.hello_ok;
    if (!m.hello_ok) {
        m.rejected++;
        if (parsed && !known)
            m.unknown++;
    }
    send_frame(&m, DSIG_NODE_T_HELLO, hello, hl, split0);

    /* the node's answer, then our AUTH */
    uint8_t node_nonce[32] = {0};
    read_answer(&m, my_nonce, node_nonce);
    if (m.hello_ok) {
        uint8_t tr[NODE_AUTH_TRANSCRIPT_BYTES], auth[64];
        node_auth_transcript(tr, id, 1, my_nonce, node_nonce);
        FUZZ_CHECK(dsig_ed25519_dkey_sign(&F.ask[id], tr, sizeof tr, m.honest_auth) == DSIG_OK, "AUTH");
        size_t al = 64;
        memcpy(auth, m.honest_auth, 64);
        if (amode == 1) {
            FUZZ_CHECK(dsig_ed25519_dkey_sign(&F.ask[id == 2 ? 3 : 2], tr, sizeof tr, auth) == DSIG_OK, "AUTH");
        } else if (amode == 2) { /* the identity key as plain Ed25519 (what the label prevents) */
            const struct dsig_eddsa_key *k = F.key[id]->impl;
            dsig_ed25519_dkey ik;
            memcpy(ik.s, k->s, 32);
            memcpy(ik.prefix, k->prefix, 32);
            memcpy(ik.pk, k->pk, 32);
            FUZZ_CHECK(dsig_ed25519_dkey_sign(&ik, tr, sizeof tr, auth) == DSIG_OK, "AUTH");
            dsig_memzero(&ik, sizeof ik);
        } else if (amode == 3) {
            memcpy(auth, F.replay, 64);
        } else if (amode == 4) {
            const unsigned bit = fuzz_u8(&in);
            auth[(bit >> 3) & 63] ^= (uint8_t)(1u << (bit & 7));
        } else if (amode == 6) {
            al = 63;
        } else if (amode == 7) { /* reflection: the node's own transcript */
            node_auth_transcript(tr, 1, id, node_nonce, my_nonce);
            FUZZ_CHECK(dsig_ed25519_dkey_sign(&F.ask[id], tr, sizeof tr, auth) == DSIG_OK, "AUTH");
        }
        if (amode != 5)
            node_frame(&m, DSIG_NODE_T_AUTH, auth, al, split0 >> 1);
        memcpy(F.replay, m.honest_auth, 64);
    }

    /* the operations */
    int end = 0;
    for (unsigned k = 0; k < FC_MAX_OPS && in.n && !end; k++) {
        const unsigned op = fuzz_u8(&in), what = op & 7, split = op >> 3;
        size_t n;
        switch (what) {
        case 0:
        case 1: {
            const unsigned b = fuzz_u8(&in) % FC_BATCHES;
            if (what == 0) {
                node_frame(&m, DSIG_NODE_T_BATCH, F.batch[b], F.batch_len[b], split);
                break;
            }
            static uint8_t patched[65536 + NODE_BATCH_HDR_MAX + 64];
            size_t el;
            const uint8_t *ed = fuzz_take(&in, 5u * fuzz_u8(&in), &el);
            n = fuzz_patch(F.batch[b], F.batch_len[b], ed, el, patched, 64);
            node_frame(&m, DSIG_NODE_T_BATCH, patched, n, split);
            break;
        }
        case 2: {
            uint8_t ack[NODE_ACK_MAX];
            const unsigned signer = fuzz_u8(&in), seq = fuzz_u16(&in), g = fuzz_u8(&in);
            n = node_ack_encode(ack, signer ? signer : 1, FC_SEQ0 + seq, g ? "x" : "g", 1);
            node_frame(&m, DSIG_NODE_T_BATCH_ACK, ack, n, split);
            break;
        }
        case 3: {
            const uint8_t *p = fuzz_take(&in, fuzz_u16(&in), &n);
            node_frame(&m, DSIG_NODE_T_APP, p, n, split);
            break;
        }
        case 4: {
            const uint8_t type = fuzz_u8(&in);
            const uint8_t *p = fuzz_take(&in, fuzz_u16(&in), &n);
            if (type < DSIG_NET_T_APP_MIN || type > DSIG_NET_T_APP_MAX) {
                send_frame(&m, type, p, n, split); /* the transport's business (heartbeat, or dropped) */
                end = 1;
            } else {
                node_frame(&m, type, p, n, split);
            }
            break;
        }
        case 5: {
            const uint8_t *p = fuzz_take(&in, fuzz_u8(&in), &n);
            if (!m.peer_closed && fuzz_send_split(m.fd, p, n, split))
                m.peer_closed = 1;
            end = 1;
            break;
        }
        case 6:
            node_frame(&m, DSIG_NODE_T_HELLO, hello, hl, split);
            break;
        default:
            if (m.hello_ok)
                node_frame(&m, DSIG_NODE_T_AUTH, m.honest_auth, 64, split);
            else
                send_frame(&m, DSIG_NODE_T_AUTH, m.honest_auth, 64, split);
            break;
        }
    }
    shutdown(m.fd, SHUT_WR);
    drain(m.fd);
    close(m.fd);
    quiesce();

    /* the counters */
    dsig_node_stats_get(F.n, &s1);
#define DELTA(f) (s1.f - s0.f)
    FUZZ_CHECK(DELTA(auth_ok) == m.auth_ok, "auth_ok moved by %llu, expected %llu", (unsigned long long)DELTA(auth_ok),
               (unsigned long long)m.auth_ok);
    FUZZ_CHECK(DELTA(auth_failed) == m.auth_failed, "auth_failed moved by %llu, expected %llu",
               (unsigned long long)DELTA(auth_failed), (unsigned long long)m.auth_failed);
    FUZZ_CHECK(DELTA(connections_rejected) == m.rejected, "connections_rejected moved by %llu, expected %llu",
               (unsigned long long)DELTA(connections_rejected), (unsigned long long)m.rejected);
    FUZZ_CHECK(DELTA(drop_unauthenticated) == m.unauth, "drop_unauthenticated moved by %llu, expected %llu",
               (unsigned long long)DELTA(drop_unauthenticated), (unsigned long long)m.unauth);
    FUZZ_CHECK(DELTA(drop_unknown_id) >= m.unknown, "drop_unknown_id moved by %llu, at least %llu expected",
               (unsigned long long)DELTA(drop_unknown_id), (unsigned long long)m.unknown);
    FUZZ_CHECK(DELTA(app_received) == m.n_want, "app_received moved by %llu, %zu APP frames were taken",
               (unsigned long long)DELTA(app_received), m.n_want);
    FUZZ_CHECK(!dsig_node_peer_up(F.n, 2) && !dsig_node_peer_up(F.n, 3), "a peer is up through an accepted connection");

    /* the application messages: exactly those sent after an honest handshake, in order, byte-identical */
    pthread_mutex_lock(&F.app_lock);
    FUZZ_CHECK(!F.got_overflow && F.n_got == m.n_want, "%zu APP messages delivered, %zu expected", F.n_got, m.n_want);
    for (size_t i = 0; i < m.n_want; i++)
        FUZZ_CHECK(F.got[i].from == m.want[i].from && F.got[i].len == m.want[i].len &&
                       memcmp(F.got[i].bytes, m.want[i].bytes, m.want[i].len) == 0,
                   "APP message %zu delivered differs (from %llu, %zu bytes)", i, (unsigned long long)F.got[i].from,
                   F.got[i].len);
    pthread_mutex_unlock(&F.app_lock);
    for (size_t i = 0; i < m.n_want; i++)
        free(m.want[i].bytes);

    /* the cache: exactly the honest batches sent after an honest handshake */
    const int bounded = DELTA(drop_queue_full) || DELTA(drop_rate_limited);
    for (size_t i = 0; i < FC_BATCHES; i++) {
        const int fast = dsig_node_can_verify_fast(F.n, F.batch_signer[i], F.bsig[i], F.bsig_len[i]);
        if (i == FC_WRONG_KEY)
            FUZZ_CHECK(!fast, "the batch signed with the wrong key was cached");
        else if (!m.sent_honest[i])
            FUZZ_CHECK(!fast, "batch %zu was cached, but never sent honestly after an honest handshake", i);
        else
            FUZZ_CHECK(fast || bounded, "batch %zu was sent after an honest handshake but is not cached", i);
    }
    return 0;
}

/* Seeds: every HELLO and AUTH variant; after an honest handshake each operation; a late AUTH after
 * none; frames on a claimed connection; a torn frame. */
static void seeds(void)
{
    static const uint8_t app[] = "hello, node";
    for (unsigned h = 0; h < 8; h++)
        for (unsigned a = 0; a < 8; a++) {
            const uint8_t head[2] = {(uint8_t)(h | a << 3), (uint8_t)(h * 8 + a)};
            fuzz_seed_begin();
            fuzz_seed_add(head, 2);
            if (h == 5) { /* raw: an honest HELLO of peer 2 */
                uint8_t raw[NODE_HELLO_BYTES], nonce[32] = {1, 2, 3};
                node_hello_encode(raw, 2, 9, nonce);
                const uint8_t l = sizeof raw;
                fuzz_seed_add(&l, 1);
                fuzz_seed_add(raw, sizeof raw);
            }
            if (a == 4) {
                const uint8_t bit = (uint8_t)(h * 31);
                fuzz_seed_add(&bit, 1);
            }
            const uint8_t ops[] = {0, 0, 3 | 8, sizeof app - 1, 0};
            fuzz_seed_add(ops, sizeof ops);
            fuzz_seed_add(app, sizeof app - 1);
            fuzz_seed_end();
        }
    /* honest handshake, then each operation */
    for (unsigned what = 0; what < 8; what++)
        for (unsigned v = 0; v < 5; v++) {
            const uint8_t head[2] = {(uint8_t)(v & 1), (uint8_t)v};
            fuzz_seed_begin();
            fuzz_seed_add(head, 2);
            const uint8_t op = (uint8_t)(what | v << 4);
            fuzz_seed_add(&op, 1);
            if (what == 0) {
                const uint8_t b = (uint8_t)v;
                fuzz_seed_add(&b, 1);
            } else if (what == 1) {
                const uint8_t pe[7] = {(uint8_t)v, 1, 1, (uint8_t)(20 + v * 13), 0, 0, 0x80};
                fuzz_seed_add(pe, sizeof pe);
            } else if (what == 2) {
                const uint8_t ack[4] = {(uint8_t)(v == 1 ? 2 : 0), (uint8_t)v, 0, (uint8_t)(v == 2)};
                fuzz_seed_add(ack, sizeof ack);
            } else if (what == 3) {
                fuzz_seed_u16(sizeof app - 1 - v);
                fuzz_seed_add(app, sizeof app - 1 - v);
            } else if (what == 4) {
                static const uint8_t types[5] = {DSIG_NODE_T_APP, 0x7F, DSIG_NET_T_PING, DSIG_NODE_T_AUTH, 0x00};
                fuzz_seed_add(&types[v], 1);
                fuzz_seed_u16(3);
                fuzz_seed_add("abc", 3);
            } else if (what == 5) {
                uint8_t hdr[DSIG_NET_HDR_BYTES];
                dsig_net_frame_header(hdr, DSIG_NODE_T_APP, 100);
                const uint8_t l = (uint8_t)(v + 7);
                fuzz_seed_add(&l, 1);
                fuzz_seed_add(hdr, l < sizeof hdr ? l : sizeof hdr);
            }
            /* an APP after it, to see whether the connection still serves */
            const uint8_t tail[3] = {3, 2, 0};
            fuzz_seed_add(tail, sizeof tail);
            fuzz_seed_add("ok", 2);
            fuzz_seed_end();
        }
    /* no AUTH: frames on a claimed connection, then the late honest AUTH, then the same frames */
    for (unsigned v = 0; v < 2; v++) {
        const uint8_t head[2] = {(uint8_t)(v | 5 << 3), 3};
        const uint8_t ops[] = {0, 0, 3, 2, 0, 'h', 'i', 2, 0, 0, 0, 0, 7, 0, 0, 0, 3, 2, 0, 'h', 'i', 0, 3};
        fuzz_seed2(head, 2, ops, sizeof ops);
    }
}

FUZZ_SEED_GENERATOR(seeds)
