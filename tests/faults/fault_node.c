/*
 * tests/faults/fault_node.c — node cluster harness for the fault tests (see fault_node.h).
 */
#include "fault_node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* Build the configuration text, write it, parse it. */
void fn_cluster_init(fn_cluster *c, unsigned n, const char *params, unsigned members, unsigned proxied)
{
    assert_true(n >= 1 && n <= FN_MAX);
    memset(c, 0, sizeof *c);
    c->dir = fu_tmpdir();
    c->n = n;
    size_t cap = 4096 + n * 1024;
    char *j = malloc(cap);
    assert_non_null(j);
    size_t off = (size_t)snprintf(j, cap, "{\"nodes\":[");
    for (unsigned id = 1; id <= n; id++) {
        fu_dsig_key_new(&c->key[id]);
        if (proxied & (1u << id)) {
            snprintf(c->addr[id], sizeof c->addr[id], "unix:%s/p%u.sock", c->dir, id);
            snprintf(c->listen[id], sizeof c->listen[id], "unix:%s/n%u.sock", c->dir, id);
        } else {
            snprintf(c->addr[id], sizeof c->addr[id], "unix:%s/n%u.sock", c->dir, id);
        }
        off += (size_t)snprintf(j + off, cap - off,
                                "%s{\"id\":%u,\"address\":\"%s\",\"public_key\":%s,\"groups\":[%s]}",
                                id > 1 ? "," : "", id, c->addr[id], c->key[id].jwk_pub,
                                (!members || (members & (1u << id))) ? "\"" FN_GROUP "\"" : "");
        assert_true(off < cap);
    }
    off += (size_t)snprintf(j + off, cap - off, "],\"groups\":{\"%s\":{\"params\":\"%s\"}}}", FN_GROUP,
                            params ? params : "wots4-haraka-b128");
    assert_true(off < cap);
    c->config_json = j;
    c->config_path = fu_write_file(c->dir, "cluster.json", j);
    int rc = dsig_node_config_load(c->config_path, &c->cfg);
    if (rc != DSIG_OK)
        fail_msg("config: %s (%s)\n%s", dsig_strerror(rc), dsig_last_error_detail(), j);
}

void fn_cluster_free(fn_cluster *c)
{
    for (unsigned id = 1; id <= c->n; id++) {
        dsig_node_free(c->node[id]);
        c->node[id] = NULL;
        fu_dsig_key_free(&c->key[id]);
    }
    dsig_node_config_free(c->cfg);
    free(c->config_json);
    free(c->config_path);
    fu_tmpdir_remove(c->dir);
    memset(c, 0, sizeof *c);
}

void fn_options(dsig_node_options *o)
{
    dsig_node_options_default(o);
    o->pool_target = 256;
    o->backoff_max_ms = 200;
}

dsig_node *fn_node_new(fn_cluster *c, uint64_t id, const dsig_node_options *o)
{
    assert_true(id >= 1 && id <= c->n);
    assert_null(c->node[id]);
    dsig_node_options opt;
    if (o)
        opt = *o;
    else
        fn_options(&opt);
    if (c->listen[id][0])
        opt.listen_address = c->listen[id];
    int rc = dsig_node_new(&c->node[id], c->cfg, id, c->key[id].priv, &opt);
    if (rc != DSIG_OK)
        fail_msg("dsig_node_new(%u): %s (%s)", (unsigned)id, dsig_strerror(rc), dsig_last_error_detail());
    return c->node[id];
}

dsig_node *fn_node_start(fn_cluster *c, uint64_t id, const dsig_node_options *o)
{
    dsig_node *n = fn_node_new(c, id, o);
    int rc = dsig_node_start(n);
    if (rc != DSIG_OK)
        fail_msg("dsig_node_start(%u): %s (%s)", (unsigned)id, dsig_strerror(rc), dsig_last_error_detail());
    return n;
}

void fn_node_free(fn_cluster *c, uint64_t id)
{
    dsig_node_free(c->node[id]);
    c->node[id] = NULL;
}

void fn_dump_stats(fn_cluster *c, const char *why)
{
    print_message("faults: counters (%s):\n", why);
    for (unsigned id = 1; id <= c->n; id++) {
        if (!c->node[id])
            continue;
        dsig_node_stats s;
        dsig_node_stats_get(c->node[id], &s);
        print_message("  node %u: generated %llu sent %llu resent %llu send_failed %llu acks %llu sigs %llu | "
                      "received %llu verified %llu unknown %llu badsig %llu replay %llu malformed %llu "
                      "qfull %llu | fast %llu slow %llu failed %llu equiv %llu | peers_up %llu reconnects %llu "
                      "rejected %llu\n",
                      id, (unsigned long long)s.batches_generated, (unsigned long long)s.batches_sent,
                      (unsigned long long)s.batches_resent, (unsigned long long)s.batches_send_failed,
                      (unsigned long long)s.acks_received, (unsigned long long)s.signatures,
                      (unsigned long long)s.batches_received, (unsigned long long)s.batches_verified,
                      (unsigned long long)s.drop_unknown_id, (unsigned long long)s.drop_bad_signature,
                      (unsigned long long)s.drop_replay, (unsigned long long)s.drop_malformed,
                      (unsigned long long)s.drop_queue_full, (unsigned long long)s.verify_fast,
                      (unsigned long long)s.verify_slow, (unsigned long long)s.verify_failed,
                      (unsigned long long)s.equivocations, (unsigned long long)s.peers_up,
                      (unsigned long long)s.reconnects, (unsigned long long)s.connections_rejected);
    }
}

void fn_wait_ready(fn_cluster *c, uint64_t signer, unsigned n_keys, unsigned ms)
{
    int rc = dsig_node_wait_ready(c->node[signer], FN_GROUP, n_keys, (int)ms);
    if (rc != DSIG_OK) {
        char detail[256];
        snprintf(detail, sizeof detail, "%s", dsig_last_error_detail());
        fn_dump_stats(c, "wait_ready failed");
        fail_msg("node %u: dsig_node_wait_ready(%u keys, %u ms): %s (%s)", (unsigned)signer, n_keys, ms,
                 dsig_strerror(rc), detail);
    }
}

uint8_t *fn_sign(dsig_node *signer, const char *msg, size_t *sig_len)
{
    size_t cap = dsig_node_sig_bytes(signer, FN_GROUP);
    assert_true(cap > 0);
    uint8_t *sig = malloc(cap);
    assert_non_null(sig);
    int rc = dsig_node_sign(signer, FN_GROUP, (const uint8_t *)msg, strlen(msg), sig, cap, sig_len);
    if (rc != DSIG_OK)
        fail_msg("dsig_node_sign: %s (%s)", dsig_strerror(rc), dsig_last_error_detail());
    assert_int_equal(*sig_len, cap);
    return sig;
}

void fn_wait_fast(dsig_node *verifier, uint64_t signer_id, const uint8_t *sig, size_t sig_len, unsigned ms)
{
    FU_WAIT_FOR(dsig_node_can_verify_fast(verifier, signer_id, sig, sig_len) == 1, ms);
}

/* Verify a (possibly corrupted) pair, asserting a rejection; `what` names the corruption. */
static void expect_rejected(dsig_node *v, uint64_t signer_id, const uint8_t *msg, size_t len,
                            const uint8_t *sig, size_t sig_len, const char *what)
{
    int rc = dsig_node_verify(v, signer_id, msg, len, sig, sig_len);
    if (rc != DSIG_E_VERIFY && rc != DSIG_E_UNKNOWN_SIGNER)
        fail_msg("forgery check: %s: dsig_node_verify returned %d (%s), expected a rejection", what, rc,
                 dsig_strerror(rc));
}

void fn_check_no_forgery(dsig_node *v, uint64_t signer_id, uint64_t other_id, const char *msg,
                         const uint8_t *sig, size_t sig_len)
{
    const uint8_t *m = (const uint8_t *)msg;
    size_t mlen = strlen(msg);
    int rc = dsig_node_verify(v, signer_id, m, mlen, sig, sig_len);
    if (rc != DSIG_OK)
        fail_msg("forgery check: the genuine signature does not verify: %d (%s)", rc, dsig_strerror(rc));
    dsig_node_stats before, after;
    dsig_node_stats_get(v, &before);

    /* Field offsets of docs/dsig-format.md §4; the tail is proof then the 64-byte Ed25519 signature. */
    assert_true(sig_len > 47 + 64 + 16);
    struct {
        size_t at;
        const char *what;
    } spots[] = {
        {0, "version"},           {1, "parameter id"},     {5, "batch seq (low byte)"},
        {12, "batch seq (high byte)"}, {13, "leaf index"}, {15, "pk_seed"},
        {31, "nonce"},            {47, "first one-time value"},
        {47 + (sig_len - 47 - 64) / 2, "middle one-time value"},
        {sig_len - 64 - 33, "Merkle proof / last value"},  {sig_len - 64 - 1, "Merkle proof (last node)"},
        {sig_len - 64, "Ed25519 root signature (R)"},      {sig_len - 1, "Ed25519 root signature (S)"},
    };
    size_t checks = 0;
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        for (unsigned bit = 0; bit < 8; bit += 7) {
            uint8_t *bad = fu_corrupt(sig, sig_len, spots[i].at, (uint8_t)(1u << bit));
            expect_rejected(v, signer_id, m, mlen, bad, sig_len, spots[i].what);
            free(bad);
            checks++;
        }
    }
    /* Length changes. */
    expect_rejected(v, signer_id, m, mlen, sig, sig_len - 1, "truncated signature");
    uint8_t *longer = calloc(1, sig_len + 1);
    assert_non_null(longer);
    memcpy(longer, sig, sig_len);
    expect_rejected(v, signer_id, m, mlen, longer, sig_len + 1, "extended signature");
    free(longer);
    expect_rejected(v, signer_id, m, 0, sig, sig_len, "empty message");
    checks += 3;
    /* Another message under the genuine signature. */
    char *other = malloc(mlen + 2);
    assert_non_null(other);
    memcpy(other, msg, mlen);
    other[mlen] = '!';
    expect_rejected(v, signer_id, (const uint8_t *)other, mlen + 1, sig, sig_len, "another message");
    other[0] ^= 1;
    expect_rejected(v, signer_id, (const uint8_t *)other, mlen, sig, sig_len, "message bit flipped");
    free(other);
    checks += 2;
    /* The genuine signature claimed by another signer. */
    if (other_id) {
        expect_rejected(v, other_id, m, mlen, sig, sig_len, "claimed by another configured signer");
        checks++;
    }
    expect_rejected(v, 0x7FFFFFFF00000001ull, m, mlen, sig, sig_len, "claimed by an unknown id");
    checks++;

    dsig_node_stats_get(v, &after);
    assert_true(after.verify_failed >= before.verify_failed + checks);
    assert_int_equal(after.equivocations, before.equivocations);
    /* And the genuine one still verifies afterwards (no state was poisoned by the attempts). */
    rc = dsig_node_verify(v, signer_id, m, mlen, sig, sig_len);
    assert_int_equal(rc, DSIG_OK);
}

/* Little-endian fields of docs/dsig-format.md §4. */
void fn_otk_of(const uint8_t *sig, size_t sig_len, fn_otk *out)
{
    assert_true(sig_len >= 31);
    out->seq = 0;
    for (int i = 7; i >= 0; i--)
        out->seq = out->seq << 8 | sig[5 + i];
    out->index = (uint32_t)sig[13] | (uint32_t)sig[14] << 8;
    memcpy(out->pk_seed, sig + 15, 16);
}

static int cmp_seq_index(const void *a, const void *b)
{
    const fn_otk *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_seed(const void *a, const void *b)
{
    return memcmp(((const fn_otk *)a)->pk_seed, ((const fn_otk *)b)->pk_seed, 16);
}

void fn_otk_all_distinct(fn_otk *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_seq_index);
    for (size_t i = 1; i < n; i++)
        if (!cmp_seq_index(&v[i - 1], &v[i]))
            fail_msg("one-time key reused: batch seq %llu index %u signed twice",
                     (unsigned long long)v[i].seq, v[i].index);
    qsort(v, n, sizeof *v, cmp_seed);
    for (size_t i = 1; i < n; i++)
        if (!cmp_seed(&v[i - 1], &v[i]))
            fail_msg("one-time key reused: the same pk_seed in batch seq %llu index %u and seq %llu index %u",
                     (unsigned long long)v[i - 1].seq, v[i - 1].index, (unsigned long long)v[i].seq,
                     v[i].index);
}
