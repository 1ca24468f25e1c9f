/*
 * bench/bench_ping_internal.h — what the files of `dsig ping` share between themselves: the message
 * layouts of its protocol (bench_ping_proto.c), the keys of one end (bench_ping_keys.c) and the state of
 * one end (bench_ping_end.c), driven by bench_ping_run.c. Not seen by the tests or the tool
 * (bench_ping.h is their interface).
 */
#ifndef DSIG_BENCH_PING_INTERNAL_H
#define DSIG_BENCH_PING_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <sodium.h>

#include "bench_ping.h"
#include "dsig/node.h"

/* ---- protocol (bench_ping_proto.c): APP frames of the DSig node, all integers big-endian -------- */

/*
 * Every APP payload starts with a kind byte:
 * PM_HELLO     "DSPG" ‖ version u8 ‖ schemes u8 (10 B with the kind); the responder answers with its own.
 *              Who the peer is was settled by the node's authenticated HELLO (docs/node.md).
 * PM_PING/PONG round header (32 B, its first byte is the kind) ‖ message ‖ signature, header = kind u8 ‖
 *              scheme u8 ‖ flags u8 ‖ 0 u8 ‖ seq u32 ‖ responder verify ns u64 ‖ responder sign ns u64 ‖
 *              msg len u32 ‖ sig len u32. The message starts at offset 32 of the payload: aligned like
 *              the payload itself (an odd offset costs the 1 KiB fast-path verification ~2 us).
 * PM_SYNC      scheme u8: the responder waits until its group pool is full and every batch with unused
 *              keys is acknowledged by the initiator (dsig_node_wait_ready), notes its counters and
 *              answers PM_SYNC_ACK.
 * PM_END       the responder answers PM_END_ACK = fast u64 ‖ slow u64 (verifications since the SYNC) ‖
 *              background CPU ns u64 ‖ wall ns u64 (both since the SYNC) (32 B).
 * PM_BYE       the responder exits.
 * DSig's batches, acknowledgements and re-syncs are the node's own frames: nothing of ping's.
 */
#define PM_HELLO 0x01u
#define PM_PING 0x02u
#define PM_PONG 0x03u
#define PM_SYNC 0x04u
#define PM_SYNC_ACK 0x05u
#define PM_END 0x06u
#define PM_END_ACK 0x07u
#define PM_BYE 0x08u

#define PING_VERSION 3u        /* 3: over the DSig node's APP frames */
#define HELLO_BYTES 10u
#define END_ACK_BYTES 32u
#define RHDR 32u
#define FLAG_BAD 1u             /* the responder's verification failed */
#define SIG_CAP 4096u           /* a DSig signature of any preset fits */
#define FRAME_CAP (RHDR + PING_MAX_MSG + SIG_CAP)
#define REPLY_TIMEOUT_MS 20000
#define POOL_MAX 4096u          /* keys per pool at most (a config-mode responder always uses it) */

/* Round header fields. */
typedef struct rhdr {
    uint8_t kind, scheme, flags;
    uint32_t seq, msg_len, sig_len;
    uint64_t r_verify, r_sign;
} rhdr;

/* The responder's figures of one block (the PM_END_ACK body). */
typedef struct ping_end_ack {
    uint64_t fast, slow;         /* its DSig verifications since the SYNC, fast / slow path */
    uint64_t bg_ns, wall_ns;     /* its background CPU and the wall time since the SYNC */
} ping_end_ack;

void rhdr_put(uint8_t out[RHDR], const rhdr *h);
/* Read and check a round payload (kind byte included): header, lengths, scheme. 0 or -1. */
int rhdr_get(const uint8_t *p, size_t len, rhdr *h, const uint8_t **msg, const uint8_t **sig);
/* A ping HELLO body (after the kind byte) announcing `schemes`; check one: 0, or -1 when it is not a
 * `dsig ping` end of this version (*schemes = the schemes it announces, masked to the known ones). */
void hello_put(uint8_t out[HELLO_BYTES - 1], unsigned schemes);
int hello_get(const uint8_t *p, size_t len, unsigned *schemes);
void end_ack_put(uint8_t out[END_ACK_BYTES], const ping_end_ack *a);
void end_ack_get(const uint8_t in[END_ACK_BYTES], ping_end_ack *a);

/* ---- keys (bench_ping_keys.c) ------------------------------------------------------------------ */

/* Keys of one end: its own Ed25519 key pair and the peer's public key, in both libraries' forms. */
typedef struct ping_keys {
    uint64_t self_id, peer_id;
    uint8_t sk[crypto_sign_SECRETKEYBYTES]; /* libsodium: seed ‖ public key */
    uint8_t peer_pk[crypto_sign_PUBLICKEYBYTES];
    dsig_key *ed_sk;                        /* the same key for the node (the sodium-ed25519 baseline
                                               signs under it too: harmless, DSig batch roots and node
                                               AUTH use keys derived from it, docs/dsig.md) */
    dsig_key *peer_ed_pk;
} ping_keys;

/* Free keys (the secret is wiped). */
void ping_keys_free(ping_keys *k);
/* Self-contained mode: fresh DSig key pairs for both ends (ids 1 = initiator, 2 = responder). 0 or -1. */
int ping_keys_generate(ping_keys *ini, ping_keys *rsp, char *why, size_t whylen);
/* Config mode: this node's private key (o->key) checked against its entry of cfg, and the peer's public
 * key (o->peer, or the only other node of cfg). 0 or -1 (why says what is wrong). */
int ping_keys_from_config(const ping_opts *o, const dsig_node_config *cfg, ping_keys *k, char *why,
                          size_t whylen);
/* Set the peer's public key (config mode with etcd: learned once it joined). 0 or -1. */
int ping_keys_set_peer(ping_keys *k, const dsig_key *peer_pk, char *why, size_t whylen);
/* The in-memory membership of the self-contained mode: nodes 1 (initiator) and 2 (responder) on
 * loopback TCP ports port[0], port[1], both in group "ping" (default DSig preset). NULL on failure. */
dsig_node_config *ping_local_config(const ping_keys *ini, const ping_keys *rsp, const unsigned port[2]);

/* ---- one end (bench_ping_end.c) ----------------------------------------------------------------- */

/* Per (size, scheme) sample storage, pooled over the runs. */
typedef struct samples {
    double *rtt, *sign, *verify, *transmit;
    size_t n;                    /* round trips stored */
    uint64_t fast, slow;
    uint64_t bg_ini, wall_ini, bg_rsp, wall_rsp; /* background CPU / wall ns of the timed rounds */
    size_t sig_bytes;
} samples;

/* State of one end. The node's plane thread runs on_app: the responder answers pings there and the
 * initiator runs its whole chain of round trips there (receive, verify, sign the next, send), so no
 * round trip pays a cross-thread wake-up. Control messages go through a one-slot mailbox to the main
 * thread, which may block (dsig_node_wait_ready) without stalling the plane. */
typedef struct ping_ep {
    int initiator;
    const ping_opts *o;
    ping_keys *k;
    dsig_node *node;
    char group[DSIG_NODE_MAX_NAME + 1];
    unsigned pool_keys, schemes;
    uint8_t *buf;                           /* FRAME_CAP: the frame being built (plane thread) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the plane thread's CPU clock, learned in its first on_app */
    clockid_t plane_clk;
    atomic_int have_plane_clk;
    /* mailbox (mu) */
    int got_ctrl;
    uint8_t ctrl_kind;
    uint32_t ctrl_len;
    uint8_t ctrl[END_ACK_BYTES];
    /* responder: counters noted at the last SYNC (main thread) */
    uint64_t fast0, slow0, bg0, wall0;
    /* initiator: the chain of round trips (set by the main thread before it sends the first ping, then
     * the plane thread's; chain_done under mu hands it back) */
    int scheme;
    size_t len;
    uint32_t seq;
    unsigned left;
    samples *rec;                           /* NULL for warm-up rounds */
    uint64_t t0, t1;
    int chain_done;
    uint64_t progress;                      /* rounds completed (mu) */
    /* first failure (mu) */
    atomic_int failed;
    char why[256];
} ping_ep;

/* Monotonic nanoseconds. */
static inline uint64_t ping_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Record the first failure of an end and wake its main thread. */
__attribute__((format(printf, 2, 3))) void ep_fail(ping_ep *e, const char *fmt, ...);
/* Set up one end: its node (id k->self_id of cfg, not started) with ping's on_app, and the group both
 * ends share (the first by name; none = no DSig). 0 or -1 (e->why says why). */
int ep_open(ping_ep *e, int initiator, const ping_opts *o, ping_keys *k, const dsig_node_config *cfg,
            unsigned pool);
/* Free an end (the node first: its plane thread uses the rest). */
void ep_close(ping_ep *e);
/* Start an end's node (listen, connect, plane). 0 or -1. */
int ep_start(ping_ep *e);
/* CPU time of every thread of this process but the plane thread and the calling one, in ns. */
uint64_t ep_bg_cpu_ns(ping_ep *e);
/* DSig verification counters of the node (fast, slow). */
void ep_fast_slow(ping_ep *e, uint64_t *fast, uint64_t *slow);
/* Send a small control message (kind ‖ body, body at most END_ACK_BYTES) to the peer. */
int ep_send_ctrl(ping_ep *e, uint8_t kind, const void *body, size_t len);
/* Initiator: sign round e->seq (message in e->buf) and send it. 0, or -1 with the end failed. */
int ep_send_round(ping_ep *e);
/* Main thread: wait ≤ timeout_ms for a control message of `kind` (0: any). 0, or -1 with the end failed. */
int ep_wait_ctrl(ping_ep *e, uint8_t kind, int timeout_ms, const char *what);
/* Main thread: wait ≤ ms until the node's connection to the peer is up and authenticated. 0 or -1. */
int ep_wait_peer(ping_ep *e, int ms);
/* Keys per pool for the initiator: every key a block uses is ready before it (capped at POOL_MAX). */
unsigned ping_pool_size(const ping_opts *o);

/* ---- membership through etcd (bench_ping_etcd.c) ------------------------------------------------- */
/* Register e's node (not started yet) and follow etcd; wait for the peer to join, then set its key and
 * the group both belong to. 0, or -1 (e->why says why; *m may need ping_etcd_leave). */
int ping_etcd_join(ping_ep *e, const dsig_node_config *cfg, dsig_node_etcd **m);
/* Print the membership counters and leave (lease revoked). NULL m accepted. */
void ping_etcd_leave(ping_ep *e, dsig_node_etcd *m);

/* ---- the two ends' main threads (bench_ping_run.c uses them for both modes) --------------------- */
int ping_responder_main(ping_ep *e, int ready_fd);
int ping_initiator_main(ping_ep *e, int ready_fd, ping_sink sink, void *ctx);

#endif
