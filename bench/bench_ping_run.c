/*
 * bench/bench_ping_run.c — `dsig ping`'s two modes (both ends here, or one end of a --config
 * membership) and its entry point.
 *
 * `dsig ping` is the two-process ping-pong of the DSig paper (OSDI '24, §8):
 * the initiator signs a message and sends it; the responder verifies it, signs the echoed message and
 * replies; the initiator verifies the reply. No signature ("none"), libsodium Ed25519 and DSig are
 * measured in the same run, interleaved per run, over the same connection (docs/benchmarks.md).
 *
 * Transport: the DSig node (include/dsig/node.h, docs/node.md) — the product a user deploys. Each end
 * is a node of a two-node membership (in memory in the self-contained mode, the --config file
 * otherwise); the ping messages are the node's APP frames (dsig_node_send_app / on_app), DSig signs
 * from the node's group pool (dsig_node_sign) and verifies through its verifier cache (dsig_node_verify),
 * and the batches, acknowledgements and re-syncs are the node's own background plane. Both ends run
 * the round trips on the node's plane thread: the responder answers inside on_app, and the initiator
 * chains its rounds there too (verify the reply, sign the next message, send), so no round trip pays a
 * cross-thread wake-up on either side; the main threads only exchange control messages.
 *
 * Timing (CLOCK_MONOTONIC, ns): the initiator brackets its own sign and verify; the responder brackets
 * its verify and sign and returns both in the reply header (outside the signed bytes). Per round trip:
 *   rtt      = initiator: before its sign .. after its verify of the reply
 *   transmit = (rtt - both signs - both verifies) / 2      (one way; derived as in the paper)
 * so "none" gives the transport's one-way floor. Before the warm-up and again before the timed rounds of
 * each block, both ends wait until their group pool is full and every batch with unused keys has been
 * verified, cached and acknowledged by the other end (dsig_node_wait_ready).
 *
 * Background CPU: each end notes, at the start of the timed rounds (the responder: its last SYNC) and
 * at their end (the responder: END), its process CPU time minus the CPU time of the node's plane thread
 * (which signs and verifies the round trips in the foreground; it also carries the plane's frames, a
 * small part) and of the idle main thread; the difference over the wall time between the two points
 * is the plane's cost in cores (key generation and batch verification threads). The responder returns
 * its figure in END_ACK.
 *
 * Files: bench_ping_args.c (options), bench_ping_report.c (rows, targets), bench_ping_proto.c (ping's
 * own message layouts), bench_ping_keys.c (keys and membership, public API), bench_ping_end.c (one end:
 * node, plane-thread round trips, mailbox), bench_ping_responder.c / bench_ping_initiator.c (the main
 * thread of each role), this file (modes).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "bench_internal.h"
#include "bench_ping_internal.h"

/* Two free loopback TCP ports (bound together, then released for the nodes). 0 or -1. */
static int reserve_ports(unsigned port[2])
{
    int fd[2] = {-1, -1}, rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&a, sizeof a) != 0 ||
            getsockname(fd[i], (struct sockaddr *)&a, &al) != 0)
            rc = -1;
        else
            port[i] = ntohs(a.sin_port);
    }
    for (int i = 0; i < 2; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    return rc;
}

/* Self-contained: fork a responder child; both ends are nodes on loopback TCP, keys in memory. */
static int run_local(const ping_opts *o, ping_sink sink, void *ctx)
{
    ping_keys ini, rsp;
    char why[256];
    unsigned port[2];
    if (ping_keys_generate(&ini, &rsp, why, sizeof why) != 0) {
        fprintf(stderr, "dsig ping: %s\n", why);
        return 2;
    }
    dsig_node_config *cfg = reserve_ports(port) == 0 ? ping_local_config(&ini, &rsp, port) : NULL;
    int pfd[2] = {-1, -1};
    if (!cfg || pipe(pfd) != 0) {
        fprintf(stderr, "dsig ping: %s\n", cfg ? strerror(errno) : "no loopback ports / configuration");
        dsig_node_config_free(cfg);
        ping_keys_free(&ini);
        ping_keys_free(&rsp);
        return 2;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork(); /* before any node exists: no threads to lose */
    if (pid < 0) {
        fprintf(stderr, "dsig ping: fork: %s\n", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        dsig_node_config_free(cfg);
        ping_keys_free(&ini);
        ping_keys_free(&rsp);
        return 2;
    }
    if (pid == 0) {
        /* The child: the responder. It never outlives the measuring parent. */
        close(pfd[0]);
        ping_keys_free(&ini);
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(2);
        ping_ep e;
        int code = 2;
        if (ep_open(&e, 0, o, &rsp, cfg, ping_pool_size(o)) == 0)
            code = ping_responder_main(&e, pfd[1]);
        else {
            fprintf(stderr, "dsig ping (responder): %s\n", e.why);
            uint8_t b = 0;
            if (write(pfd[1], &b, 1) != 1)
                code = 2;
            close(pfd[1]);
        }
        ep_close(&e);
        dsig_node_config_free(cfg);
        ping_keys_free(&rsp);
        fflush(stderr);
        _exit(code);
    }
    close(pfd[1]);
    ping_keys_free(&rsp);
    ping_ep e;
    int code = 2;
    if (ep_open(&e, 1, o, &ini, cfg, ping_pool_size(o)) == 0)
        code = ping_initiator_main(&e, pfd[0], sink, ctx);
    else
        fprintf(stderr, "dsig ping: %s\n", e.why);
    ep_close(&e);
    dsig_node_config_free(cfg);
    close(pfd[0]);
    if (code != 0)
        kill(pid, SIGTERM);
    int st = 0;
    if (waitpid(pid, &st, 0) == pid && code == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        fprintf(stderr, "dsig ping: the responder process failed\n");
        code = 2;
    }
    ping_keys_free(&ini);
    return code;
}

/* Config mode: one end, a node of the membership file; the lower id answers, the higher id measures. */
static int run_config(const ping_opts *o, ping_sink sink, void *ctx)
{
    dsig_node_config *cfg = NULL;
    if (dsig_node_config_load(o->config, &cfg) != DSIG_OK) {
        fprintf(stderr, "dsig ping: %s\n", dsig_last_error_detail());
        return 2;
    }
    ping_keys k;
    char why[512];
    if (ping_keys_from_config(o, cfg, &k, why, sizeof why) != 0) {
        fprintf(stderr, "dsig ping: %s\n", why);
        dsig_node_config_free(cfg);
        return 2;
    }
    int responder = k.self_id < k.peer_id;
    ping_ep e;
    int code = 2;
    /* the responder cannot know the initiator's --count: it keeps the largest pool */
    dsig_node_etcd *m = NULL;
    if (ep_open(&e, !responder, o, &k, cfg, responder ? POOL_MAX : ping_pool_size(o)) != 0 ||
        (o->etcd && ping_etcd_join(&e, cfg, &m) != 0))
        fprintf(stderr, "dsig ping: %s\n", e.why);
    else
        code = responder ? ping_responder_main(&e, -1) : ping_initiator_main(&e, -1, sink, ctx);
    ping_etcd_leave(&e, m); /* before the node goes */
    ep_close(&e);
    dsig_node_config_free(cfg);
    ping_keys_free(&k);
    return code;
}

/* Run with parsed options. */
int ping_run(const ping_opts *o, ping_sink sink, void *ctx)
{
    if (sodium_init() < 0) {
        fprintf(stderr, "dsig ping: libsodium unusable\n");
        return 2;
    }
    if (!o->quiet)
        fprintf(stderr,
                "# dsig ping: %u run(s) x %zu size(s); per block %u warm-up + %u timed round trips; "
                "transmit = (rtt - signs - verifies) / 2\n",
                o->runs, o->nsizes, o->warmup, o->count);
    return o->config ? run_config(o, sink, ctx) : run_local(o, sink, ctx);
}

/* `dsig ping` entry point. */
int dsig_ping_main(int argc, char **argv)
{
    ping_opts o;
    char err[BENCH_ERR_LEN];
    int r = ping_parse(argc, argv, &o, err, sizeof err);
    if (r == 1) {
        ping_print_help(stdout);
        return 0;
    }
    if (r < 0) {
        fprintf(stderr, "dsig ping: %s\n", err);
        return 2;
    }
    return ping_run(&o, NULL, NULL);
}
