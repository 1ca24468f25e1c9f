/*
 * tests/faults/fault_mh_node.c — the small client of the multi-host test (tests/faults/multihost.sh): a
 * DSig node (include/dsig/node.h) that either signs messages and sends them to the verifiers as APP
 * frames, or verifies what it receives and reports whether it took the fast path.
 *
 *   fault_mh_node --config F --id N --key K.jwk --role signer --to 2,3 --count M
 *   fault_mh_node --config F --id N --key K.jwk --role verifier --from 1 --count M
 *
 * APP payload (signer → verifier): seq u32 LE ‖ signature ‖ message ("multihost message <seq>").
 * Verifier → signer: the 4 bytes "done" once `count` messages were checked.
 * The verifier prints one JSON line: {"id":…,"received":…,"ok":…,"fast":…,"fast_second_half":…,
 * "failed":…,"forgeries_accepted":…} and exits 0 when every message verified, the second half took the
 * fast path and no corrupted signature verified. Exit 1 otherwise, 2 on a setup error, 3 on timeout.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsig/dsig.h"
#include "dsig/node.h"

#define GROUP "g"

typedef struct app {
    dsig_node *node;
    int verifier;
    uint64_t from;
    unsigned count;
    pthread_mutex_t mu;
    unsigned received, ok, fast, fast_second_half, failed, forgeries_accepted;
    unsigned done_from;          /* signer: "done" messages received */
} app;

/* Monotonic milliseconds. */
static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* APP frames, on the plane thread: verify (verifier) or count "done" (signer). */
static void on_app(void *arg, uint64_t peer, const uint8_t *b, size_t len)
{
    app *a = arg;
    if (!a->verifier) {
        if (len == 4 && !memcmp(b, "done", 4)) {
            pthread_mutex_lock(&a->mu);
            a->done_from++;
            pthread_mutex_unlock(&a->mu);
        }
        return;
    }
    if (peer != a->from || len < 4)
        return;
    uint32_t seq = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    size_t sig_len = dsig_node_sig_bytes(a->node, GROUP);
    if (len < 4 + sig_len)
        return;
    const uint8_t *sig = b + 4, *msg = b + 4 + sig_len;
    size_t mlen = len - 4 - sig_len;
    int fast = dsig_node_can_verify_fast(a->node, peer, sig, sig_len);
    int rc = dsig_node_verify(a->node, peer, msg, mlen, sig, sig_len);
    /* A corrupted copy (one bit of a one-time value) must never verify. */
    uint8_t *bad = malloc(sig_len);
    int forged = 0;
    if (bad) {
        memcpy(bad, sig, sig_len);
        bad[47 + seq % 64] ^= 0x04;
        forged = dsig_node_verify(a->node, peer, msg, mlen, bad, sig_len) == DSIG_OK;
        free(bad);
    }
    pthread_mutex_lock(&a->mu);
    a->received++;
    if (rc == DSIG_OK) {
        a->ok++;
        a->fast += fast == 1;
        if (seq >= a->count / 2)
            a->fast_second_half += fast == 1;
    } else {
        a->failed++;
    }
    a->forgeries_accepted += forged;
    int finished = a->received == a->count;
    pthread_mutex_unlock(&a->mu);
    if (finished)
        (void)dsig_node_send_app(a->node, peer, "done", 4);
}

/* Read a whole small file. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = malloc(65537);
    size_t n = b ? fread(b, 1, 65536, f) : 0;
    fclose(f);
    if (!b)
        return NULL;
    b[n] = 0;
    *len = n;
    return b;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *keyfile = NULL, *role = NULL, *to = NULL;
    uint64_t id = 0, from = 0;
    unsigned count = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--config"))
            config = argv[i + 1];
        else if (!strcmp(argv[i], "--key"))
            keyfile = argv[i + 1];
        else if (!strcmp(argv[i], "--id"))
            id = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--role"))
            role = argv[i + 1];
        else if (!strcmp(argv[i], "--to"))
            to = argv[i + 1];
        else if (!strcmp(argv[i], "--from"))
            from = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--count"))
            count = (unsigned)strtoul(argv[i + 1], NULL, 10);
    }
    if (!config || !keyfile || !role || !id || !count || (strcmp(role, "signer") && strcmp(role, "verifier"))) {
        fprintf(stderr, "usage: fault_mh_node --config F --id N --key K --role signer|verifier "
                        "[--to 2,3 | --from 1] [--count M]\n");
        return 2;
    }
    dsig_node_config *cfg;
    dsig_key *key;
    size_t klen;
    char *ktext = slurp(keyfile, &klen);
    if (dsig_node_config_load(config, &cfg) != DSIG_OK || !ktext || dsig_jwk_import(&key, ktext, klen) != DSIG_OK) {
        fprintf(stderr, "fault_mh_node: config/key: %s\n", dsig_last_error_detail());
        return 2;
    }
    dsig_memzero(ktext, klen);
    free(ktext);
    app a = {.verifier = !strcmp(role, "verifier"), .from = from, .count = count};
    pthread_mutex_init(&a.mu, NULL);
    dsig_node_options o;
    dsig_node_options_default(&o);
    o.pool_target = 256;
    o.backoff_max_ms = 300;
    o.on_app = on_app;
    o.on_app_arg = &a;
    int rc = dsig_node_new(&a.node, cfg, id, key, &o);
    dsig_key_free(key);
    if (rc == DSIG_OK)
        rc = dsig_node_start(a.node);
    if (rc != DSIG_OK) {
        fprintf(stderr, "fault_mh_node %llu: %s (%s)\n", (unsigned long long)id, dsig_strerror(rc),
                dsig_last_error_detail());
        return 2;
    }
    int exit_code = 0;
    uint64_t deadline = now_ms() + 90000;
    if (!a.verifier) {
        uint64_t peers[8];
        unsigned np = 0;
        for (const char *p = to; p && *p && np < 8;) {
            peers[np++] = strtoull(p, (char **)&p, 10);
            if (*p == ',')
                p++;
        }
        /* Warm-up: every member of the group has acknowledged the batches with unused keys. */
        rc = dsig_node_wait_ready(a.node, GROUP, 128, 60000);
        if (rc != DSIG_OK) {
            fprintf(stderr, "fault_mh_node signer: verifiers not warm: %s\n", dsig_last_error_detail());
            exit_code = 3;
        }
        for (unsigned k = 0; k < np && !exit_code; k++)
            while (!dsig_node_peer_up(a.node, peers[k]) && now_ms() < deadline)
                usleep(5000);
        size_t sig_len = dsig_node_sig_bytes(a.node, GROUP);
        uint8_t *buf = malloc(4 + sig_len + 64);
        for (unsigned i = 0; i < count && !exit_code; i++) {
            char msg[64];
            int mlen = snprintf(msg, sizeof msg, "multihost message %u", i);
            buf[0] = (uint8_t)i, buf[1] = (uint8_t)(i >> 8), buf[2] = (uint8_t)(i >> 16), buf[3] = (uint8_t)(i >> 24);
            size_t sl;
            if (dsig_node_sign(a.node, GROUP, (const uint8_t *)msg, (size_t)mlen, buf + 4, sig_len, &sl) != DSIG_OK) {
                exit_code = 1;
                break;
            }
            memcpy(buf + 4 + sig_len, msg, (size_t)mlen);
            for (unsigned k = 0; k < np; k++)
                while (dsig_node_send_app(a.node, peers[k], buf, 4 + sig_len + (size_t)mlen) != DSIG_OK) {
                    if (now_ms() > deadline) {
                        exit_code = 3;
                        break;
                    }
                    usleep(1000);
                }
            usleep(1000);
        }
        free(buf);
        while (!exit_code) {
            pthread_mutex_lock(&a.mu);
            unsigned d = a.done_from;
            pthread_mutex_unlock(&a.mu);
            if (d >= np)
                break;
            if (now_ms() > deadline)
                exit_code = 3;
            usleep(5000);
        }
        dsig_node_stats s;
        dsig_node_stats_get(a.node, &s);
        printf("{\"id\":%llu,\"role\":\"signer\",\"signed\":%llu,\"batches_sent\":%llu,\"acks\":%llu,\"exit\":%d}\n",
               (unsigned long long)id, (unsigned long long)s.signatures, (unsigned long long)s.batches_sent,
               (unsigned long long)s.acks_received, exit_code);
    } else {
        for (;;) {
            pthread_mutex_lock(&a.mu);
            unsigned r = a.received;
            pthread_mutex_unlock(&a.mu);
            if (r >= count)
                break;
            if (now_ms() > deadline) {
                exit_code = 3;
                break;
            }
            usleep(5000);
        }
        usleep(200000); /* let the "done" frame leave */
        pthread_mutex_lock(&a.mu);
        printf("{\"id\":%llu,\"role\":\"verifier\",\"received\":%u,\"ok\":%u,\"fast\":%u,\"fast_second_half\":%u,"
               "\"failed\":%u,\"forgeries_accepted\":%u}\n",
               (unsigned long long)id, a.received, a.ok, a.fast, a.fast_second_half, a.failed,
               a.forgeries_accepted);
        if (!exit_code && (a.ok != count || a.failed || a.forgeries_accepted ||
                           a.fast_second_half != count - count / 2))
            exit_code = 1;
        pthread_mutex_unlock(&a.mu);
    }
    fflush(stdout);
    dsig_node_free(a.node);
    dsig_node_config_free(cfg);
    return exit_code;
}
