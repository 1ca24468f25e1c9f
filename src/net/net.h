/*
 * src/net/net.h — the DSig transport: length-prefixed frames over TCP and Unix domain
 * sockets, driven by one poll() event loop that the caller runs on its own thread. Not installed: the
 * node (next step) builds on it. docs/net.md describes the wire format and the state machine.
 *
 * Threads: dsig_net_loop_run / run_once run on ONE thread (the "loop thread"; later the background
 * plane thread). Every other function here is thread-safe and may be called from any thread, including
 * from inside the event callback (which runs on the loop thread with no lock held).
 */
#ifndef DSIG_NET_NET_H
#define DSIG_NET_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* ---- frames ---------------------------------------------------------------------------------- */

/*
 * Frame = 12-byte header + payload:
 *   0..3  magic "DSGN" (0x44 0x53 0x47 0x4E)
 *   4     version (DSIG_NET_VERSION = 1)
 *   5     type (DSIG_NET_T_*)
 *   6..7  reserved, must be zero
 *   8..11 payload length, u32 big-endian (≤ the configured maximum)
 */
#define DSIG_NET_HDR_BYTES 12u
#define DSIG_NET_VERSION 1u
#define DSIG_NET_MAGIC0 0x44u
#define DSIG_NET_MAGIC1 0x53u
#define DSIG_NET_MAGIC2 0x47u
#define DSIG_NET_MAGIC3 0x4Eu

/* Frame types. 0x01/0x02 are the transport's heartbeat (8-byte payload, answered by the loop itself,
 * never delivered); 0x10..0x7F belong to the layer above (the node); everything else is malformed. */
#define DSIG_NET_T_PING 0x01u
#define DSIG_NET_T_PONG 0x02u
#define DSIG_NET_T_APP_MIN 0x10u
#define DSIG_NET_T_APP_MAX 0x7Fu
#define DSIG_NET_PING_BYTES 8u

/* Payload limits: the default maximum (a DSig batch message is ~4.2 KB) and the hard ceiling that no
 * configuration may exceed. */
#define DSIG_NET_DEFAULT_MAX_PAYLOAD 65536u
#define DSIG_NET_MAX_PAYLOAD_LIMIT (16u * 1024u * 1024u)
#define DSIG_NET_MIN_PAYLOAD_LIMIT 64u

/* Write the 12-byte header of a frame. */
void dsig_net_frame_header(uint8_t out[DSIG_NET_HDR_BYTES], uint8_t type, uint32_t payload_len);

/* Validate a complete header against `max_payload`: DSIG_OK with *type / *len, DSIG_E_FORMAT (magic,
 * version, reserved bits, unknown type, heartbeat of the wrong size) or DSIG_E_TOO_LARGE. */
int dsig_net_header_parse(const uint8_t hdr[DSIG_NET_HDR_BYTES], uint32_t max_payload, uint8_t *type,
                          uint32_t *len);

/* Called once per complete frame. Return 0 to continue decoding; any other value stops the feed at
 * this frame boundary and is returned by dsig_net_decoder_feed. `payload` is valid during the call. */
typedef int (*dsig_net_frame_fn)(void *arg, uint8_t type, const uint8_t *payload, uint32_t len);

/*
 * Incremental decoder: bytes arrive in pieces of any size (a frame cut at any byte, several frames in
 * one piece). A frame that lies whole in one piece is delivered in place (no copy); only a split one is
 * assembled in the decoder's buffer (grown up to max_payload, kept between frames). The first invalid
 * header makes the stream dead: every later feed returns the same error.
 */
typedef struct dsig_net_decoder {
    uint32_t max_payload;
    int error;                       /* 0 or the sticky DSIG_E_* */
    uint8_t hdr[DSIG_NET_HDR_BYTES];
    uint32_t hdr_have;               /* header bytes held */
    uint8_t type;                    /* of the frame being assembled (hdr complete) */
    uint32_t need, have;             /* payload length and bytes held */
    uint8_t *buf;
    uint32_t cap;
    uint64_t frames;                 /* complete frames delivered */
} dsig_net_decoder;

void dsig_net_decoder_init(dsig_net_decoder *d, uint32_t max_payload);
/* Forget any partial frame and a sticky error (the buffer is kept). */
void dsig_net_decoder_reset(dsig_net_decoder *d);
void dsig_net_decoder_clear(dsig_net_decoder *d);
/* Feed n bytes; *consumed (may be NULL) = bytes used (all of them unless the callback stopped). */
int dsig_net_decoder_feed(dsig_net_decoder *d, const uint8_t *in, size_t n, dsig_net_frame_fn fn,
                          void *arg, size_t *consumed);
/* Nonzero while part of a frame is held (a connection cut now loses a frame). */
int dsig_net_decoder_midframe(const dsig_net_decoder *d);

/* ---- addresses ------------------------------------------------------------------------------- */

/* "tcp:127.0.0.1:7000", "tcp:[::1]:7000" (numeric hosts only: the loop never blocks on DNS) or
 * "unix:/path/to/socket". Port 0 is allowed for listening (the kernel picks one). */
typedef struct dsig_net_addr {
    int family;                      /* AF_INET, AF_INET6, AF_UNIX */
    socklen_t len;
    struct sockaddr_storage ss;
} dsig_net_addr;

#define DSIG_NET_ADDR_TEXT_MAX 128u

int dsig_net_addr_parse(const char *text, dsig_net_addr *out);
/* The text form (same syntax as parse) into buf; DSIG_E_BUFFER if it does not fit. */
int dsig_net_addr_format(const dsig_net_addr *a, char *buf, size_t cap);

/* ---- sockets (sock.c): shared by the loop and blocking users of the transport ------------------ */

/* TCP_NODELAY on a TCP socket (nothing for Unix sockets). */
void dsig_net_socket_nodelay(int fd, int family);
/* A listening socket on addr (SOCK_CLOEXEC, non-blocking if asked): a stale Unix socket file at the path
 * is replaced (only a socket), TCP gets SO_REUSEADDR (and IPV6_V6ONLY). *bound (may be NULL) receives
 * the bound address (the port picked for port 0). DSIG_OK or DSIG_E_IO naming the address. */
int dsig_net_socket_listen(const dsig_net_addr *addr, int nonblock, int *fd, dsig_net_addr *bound);
/* A blocking connection to addr within timeout_ms (TCP_NODELAY for TCP). DSIG_OK or DSIG_E_IO naming
 * the address and the reason. */
int dsig_net_socket_connect(const dsig_net_addr *addr, int timeout_ms, int *fd);

/* ---- configuration ----------------------------------------------------------------------------- */

typedef struct dsig_net_config {
    uint32_t max_payload;            /* per frame; default 64 KiB, ≤ DSIG_NET_MAX_PAYLOAD_LIMIT */
    uint32_t sendq_max_frames;       /* queued application frames per connection; default 256 */
    uint32_t sendq_max_bytes;        /* queued bytes per connection; default 1 MiB, ≥ one max frame */
    uint32_t max_conns;              /* listeners + connections; default 256, ≤ 65536 */
    uint32_t heartbeat_ms;           /* ping interval; 0 = no heartbeats; default 500 */
    uint32_t heartbeat_misses;       /* silent intervals before the peer is dropped; default 4 */
    uint32_t backoff_min_ms;         /* first reconnect delay; default 20 */
    uint32_t backoff_max_ms;         /* delay ceiling; default 2000 */
    uint32_t connect_timeout_ms;     /* a pending connect is abandoned after; default 2000 */
} dsig_net_config;

void dsig_net_config_default(dsig_net_config *cfg);

/* ---- statistics ---------------------------------------------------------------------------------- */

#define DSIG_NET_STATS_FIELDS(X)                                                                     \
    X(frames_in)          /* application + heartbeat frames received */                              \
    X(frames_out)         /* frames fully written to the socket */                                   \
    X(bytes_in)                                                                                      \
    X(bytes_out)                                                                                     \
    X(dropped_malformed)  /* connections dropped for a bad header or over-long length */             \
    X(cut_midframe)       /* connections that ended inside a frame (the partial frame is lost) */    \
    X(timeouts)           /* connections dropped for heartbeat silence */                            \
    X(reconnects)         /* outgoing connections re-established after a loss */                     \
    X(connect_failures)   /* connect attempts that failed or timed out */                            \
    X(accepted)           /* incoming connections accepted (listener / loop totals) */               \
    X(rejected)           /* incoming connections refused: max_conns reached */                      \
    X(send_full)          /* sends refused with DSIG_E_WOULD_BLOCK (queue at its bound) */           \
    X(discarded)          /* queued frames thrown away because the connection went down */          \
    X(pings_out)                                                                                     \
    X(pongs_in)                                                                                      \
    X(rtt_last_us)        /* round-trip of the last answered ping */

typedef struct dsig_net_stats {
#define DSIG_NET_STATS_DECL(f) uint64_t f;
    DSIG_NET_STATS_FIELDS(DSIG_NET_STATS_DECL)
#undef DSIG_NET_STATS_DECL
    uint64_t queued_frames;          /* current send queue (per connection only) */
    uint64_t queued_bytes;
} dsig_net_stats;

/* ---- the loop ------------------------------------------------------------------------------------ */

typedef struct dsig_net_loop dsig_net_loop;

enum dsig_net_event_kind {
    DSIG_NET_EV_UP = 1,              /* a connection is established (accepted or connected) */
    DSIG_NET_EV_DOWN,                /* it is gone; `reason` says why. Outgoing ones reconnect. */
    DSIG_NET_EV_FRAME                /* an application frame arrived */
};

enum dsig_net_down_reason {
    DSIG_NET_DOWN_EOF = 1,           /* the peer closed */
    DSIG_NET_DOWN_IO,                /* read/write error (reset, broken pipe) */
    DSIG_NET_DOWN_MALFORMED,         /* bad header / type / over-long length */
    DSIG_NET_DOWN_TIMEOUT,           /* heartbeat silence */
    DSIG_NET_DOWN_LOCAL,             /* dsig_net_close or loop shutdown */
    DSIG_NET_DOWN_CONNECT            /* an outgoing connect attempt failed (no UP came before) */
};

typedef struct dsig_net_event {
    int kind;                        /* enum dsig_net_event_kind */
    uint64_t conn;                   /* connection id */
    int outgoing;                    /* 1: made by dsig_net_connect (reconnects), 0: accepted */
    uint64_t listener;               /* UP of an accepted connection: its listener id */
    int reason;                      /* DOWN: enum dsig_net_down_reason */
    uint8_t type;                    /* FRAME */
    const uint8_t *payload;          /* FRAME: valid during the callback only */
    uint32_t len;
} dsig_net_event;

/* Runs on the loop thread with no lock held; may call any dsig_net_* function except run/free. */
typedef void (*dsig_net_event_fn)(void *arg, dsig_net_loop *loop, const dsig_net_event *ev);

/* cfg NULL = defaults. DSIG_E_ARG for an inconsistent configuration. */
int dsig_net_loop_new(dsig_net_loop **out, const dsig_net_config *cfg, dsig_net_event_fn fn, void *arg);
/* Close every socket (unlinking Unix listener paths) and free. The loop must not be running. */
void dsig_net_loop_free(dsig_net_loop *loop);

/* One iteration: timers, pending writes, one poll() of at most timeout_ms (-1: until something
 * happens), then the ready sockets. DSIG_OK, or DSIG_E_STATE once stopped. */
int dsig_net_loop_run_once(dsig_net_loop *loop, int timeout_ms);
/* Iterate until dsig_net_loop_stop. */
int dsig_net_loop_run(dsig_net_loop *loop);
/* Make run return (from any thread); permanent: later runs return at once. */
void dsig_net_loop_stop(dsig_net_loop *loop);

/* Listen on addr (bound here, so errors and the chosen port are known at once; a stale Unix socket
 * file at the path is replaced). *id names the listener. */
int dsig_net_listen(dsig_net_loop *loop, const dsig_net_addr *addr, uint64_t *id);
/* Start an outgoing connection that the loop keeps up: reconnects with jittered exponential backoff
 * after every loss until dsig_net_close. *id stays valid across reconnects. */
int dsig_net_connect(dsig_net_loop *loop, const dsig_net_addr *addr, uint64_t *id);
/* Close a listener or connection (asynchronously, on the loop thread). DSIG_E_STATE if unknown. */
int dsig_net_close(dsig_net_loop *loop, uint64_t id);
/* The bound address of a listener (e.g. the port picked for port 0). */
int dsig_net_local_addr(dsig_net_loop *loop, uint64_t id, dsig_net_addr *out);

/*
 * Queue one application frame (type in 0x10..0x7F) on a connection that is UP; the loop thread writes
 * it. The payload is the concatenation of iov[0..n). Never blocks, never grows past the bounds:
 *   DSIG_OK, DSIG_E_WOULD_BLOCK (queue full: drop or retry), DSIG_E_STATE (unknown id / not UP),
 *   DSIG_E_TOO_LARGE (payload > max_payload), DSIG_E_ARG (bad type).
 */
int dsig_net_sendv(dsig_net_loop *loop, uint64_t conn, uint8_t type, const struct iovec *iov, int n);
int dsig_net_send(dsig_net_loop *loop, uint64_t conn, uint8_t type, const void *payload, size_t len);
/* As dsig_net_send, but wait up to timeout_ms (-1: no limit) for room in the queue. Must not be called
 * on the loop thread (it would wait for itself): DSIG_E_STATE there. */
int dsig_net_send_wait(dsig_net_loop *loop, uint64_t conn, uint8_t type, const void *payload, size_t len,
                       int timeout_ms);

/* Counters of one connection or listener (outgoing ones keep theirs across reconnects; a listener
 * sums the connections it accepted), or of the whole loop (conn = 0). DSIG_E_STATE if unknown. */
int dsig_net_stats_get(dsig_net_loop *loop, uint64_t id, dsig_net_stats *out);
/* 1 if the connection is UP, 0 otherwise (unknown ids too). */
int dsig_net_is_up(dsig_net_loop *loop, uint64_t conn);

#endif
