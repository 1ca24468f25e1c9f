/*
 * tests/faults/fault_util.h — harness for the fault tests (docs/faults.md): temporary directories, Ed25519 key
 * material as JWK, child processes (`$DSIG_TOOL node ...`), bounded waits, and a frame-aware TCP/UDS
 * proxy thread that forwards bytes between a node and its peer and can cut a connection in the middle
 * of a frame or stop reading (a slow peer).
 */
#ifndef DSIG_TESTS_FAULT_UTIL_H
#define DSIG_TESTS_FAULT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dsig/dsig.h"

/* Monotonic clock in milliseconds. */
uint64_t fu_mono_ms(void);

/* Wait (≤ ms) until cond holds; fail the test naming the condition otherwise. */
#define FU_WAIT_FOR(cond, ms)                                                                        \
    do {                                                                                             \
        uint64_t fu_dl_ = fu_mono_ms() + (ms);                                                       \
        while (!(cond)) {                                                                            \
            if (fu_mono_ms() > fu_dl_)                                                               \
                fail_msg("timed out after %u ms waiting for %s", (unsigned)(ms), #cond);             \
            usleep(1000);                                                                            \
        }                                                                                            \
    } while (0)

/* A fresh private directory under $TMPDIR (or /tmp); returns a malloc'd path. */
char *fu_tmpdir(void);
/* Remove a directory made by fu_tmpdir and everything in it (one level of files) and free the path. */
void fu_tmpdir_remove(char *dir);
/* dir/name as a malloc'd string. */
char *fu_path(const char *dir, const char *name);
/* Write `text` to dir/name (mode 0600); fails the test on error. Returns the malloc'd path. */
char *fu_write_file(const char *dir, const char *name, const char *text);
/* Whole file into a malloc'd NUL-terminated buffer, or NULL if it cannot be read. */
char *fu_read_file(const char *path, size_t *len);

/* A fresh DSig key (Ed25519 bound to "DSig"): the private key object, and its JWK texts (malloc'd; the
 * private one holds "d"). */
typedef struct fu_dsig_key {
    dsig_key *priv;
    dsig_key *pub;
    char *jwk_priv;
    char *jwk_pub;
} fu_dsig_key;
void fu_dsig_key_new(fu_dsig_key *k);
void fu_dsig_key_free(fu_dsig_key *k);

/* ---- child processes ----------------------------------------------------------------------------- */

/* The tool under test ($DSIG_TOOL), failing the test when unset. */
const char *fu_tool(void);
/* fork + exec argv (argv[0] is the program path) with stdout and stderr appended to `log` (NULL: keep).
 * Returns the pid. The child gets its own process group so a kill reaches only it. */
pid_t fu_spawn(char *const argv[], const char *log);
/* SIGTERM, wait ≤ ms, then SIGKILL; returns the exit status as waitpid reports it (or -1). */
int fu_stop(pid_t pid, unsigned ms);
/* SIGKILL and reap (a crash-like stop). */
void fu_kill(pid_t pid);
/* 1 while the child runs, 0 once it has exited (reaped here; *status gets its status when not NULL). */
int fu_alive(pid_t pid, int *status);

/* ---- proxy ---------------------------------------------------------------------------------------- */

/*
 * A proxy on its own thread: accepts on `listen_addr` ("unix:/path" or "tcp:127.0.0.1:0"), and for
 * each accepted connection connects to `upstream` and forwards both directions. It parses the DSGN
 * frame headers (12 bytes, u32 big-endian length at offset 8) of the client→upstream stream so that it
 * can cut exactly inside a frame.
 */
typedef struct fu_proxy fu_proxy;

fu_proxy *fu_proxy_start(const char *listen_addr, const char *upstream);
/* The address clients should use (with the real port for tcp:...:0), valid until stop. */
const char *fu_proxy_addr(const fu_proxy *p);
/*
 * Arm a cut: after `frames` more frames (either direction) of at least `min_payload` payload bytes have
 * started, forward the header and the first `at` payload bytes of the next such frame (FU_CUT_HALF: half
 * of it; clamped to length − 1 so the frame is never complete), then close both sockets. Connections
 * after that are forwarded normally until the next arm.
 */
#define FU_CUT_HALF UINT32_MAX
void fu_proxy_cut_midframe(fu_proxy *p, unsigned frames, uint32_t min_payload, uint32_t at);
/* Stop (paused = 1) or resume (0) reading from one side: FU_FROM_CLIENT or FU_FROM_UPSTREAM. The bytes
 * that side sends pile up in the socket buffers and then in its sender's send queue: a slow reader. */
#define FU_FROM_CLIENT 1
#define FU_FROM_UPSTREAM 2
void fu_proxy_pause(fu_proxy *p, int side, int paused);
/* Lossy mode: of the node's APP frames (type 0x13, both directions) drop `drop_permille` per mille and
 * hold back `reorder_permille` per mille until the next frame has passed (reordering); every other
 * frame passes. Deterministic for a seed; 0, 0 turns it off. */
void fu_proxy_lossy(fu_proxy *p, unsigned drop_permille, unsigned reorder_permille, uint64_t seed);
uint64_t fu_proxy_dropped(fu_proxy *p);         /* APP frames dropped */
uint64_t fu_proxy_reordered(fu_proxy *p);       /* APP frames held back */
/* Counters. */
uint64_t fu_proxy_cuts(fu_proxy *p);            /* cuts performed */
uint64_t fu_proxy_accepted(fu_proxy *p);        /* connections accepted */
uint64_t fu_proxy_frames_up(fu_proxy *p);       /* whole client→upstream frames forwarded */
void fu_proxy_stop(fu_proxy *p);

/* ---- raw peers ------------------------------------------------------------------------------------ */

/* A blocking connected socket to "unix:/path" or "tcp:host:port" (≤ 2 s of retries), or -1. */
int fu_connect(const char *addr);
/* Write all n bytes (MSG_NOSIGNAL); 0 or -1. */
int fu_write_all(int fd, const void *buf, size_t n);
/* 1 if the peer closed `fd` (EOF / reset) within ms, reading and discarding whatever arrives. */
int fu_wait_closed(int fd, unsigned ms);

/* ---- signatures ----------------------------------------------------------------------------------- */

/* Flip one bit of a copy of sig at byte offset `at` (wrapped into range); returns a malloc'd copy. */
uint8_t *fu_corrupt(const uint8_t *sig, size_t len, size_t at, uint8_t mask);

/* Resident set size of process `pid` (0 = self) in KiB from /proc, or 0 if unknown. */
uint64_t fu_rss_kib(pid_t pid);

#endif
