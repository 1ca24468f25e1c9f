/*
 * bench/bench_dsig_hybrid.c — the DSig rows of `dsig bench dsig`: per configuration, latency of sign,
 * fast verify and slow verify with the key pool full and the batch cache warm, and one-core throughput
 * with the background threads' CPU time included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_dsig_internal.h"

/* The DSig runtime is optional at build time: without its public header only the baselines run
 * (BENCH_DSIG_NO_RUNTIME forces that, e.g. to test the baseline-only path). */
#if defined(__has_include) && !defined(BENCH_DSIG_NO_RUNTIME)
#if __has_include("dsig/hybrid.h")
#include "dsig/hybrid.h"
#define BENCH_HAVE_DSIG 1
#endif
#endif
#ifndef BENCH_HAVE_DSIG
#define BENCH_HAVE_DSIG 0
#endif

#if BENCH_HAVE_DSIG

/* The DSig runtime is in this build. */
int bench_dsig_available(void)
{
    return 1;
}

#define SIGNER_ID 1u
#define ROUND_MAX 256u       /* latency calls per round: half the default pool of 512 ready keys */
#define TPUT_CALLS_FULL 2048u
#define TPUT_CALLS_QUICK 512u

/* One configuration under test: parameters, the signer's Ed25519 key, and the measurement buffers. */
typedef struct dcfg {
    dsig_hybrid_params *params;
    dsig_key *ed_sk, *ed_pk;
    size_t sig_bytes;
    unsigned batch;
} dcfg;

/* Latency context: a threaded signer publishing to a channel, a subscribed (fast) verifier and an
 * unsubscribed (slow) one, and a round of stored messages and signatures. */
typedef struct dlat {
    const dcfg *c;
    dsig_hybrid_signer *signer;
    dsig_hybrid_channel *ch;
    dsig_hybrid_verifier *fast, *slow, *v; /* v: the verifier of the current row */
    unsigned pool;          /* the signer's pool target */
    const uint8_t *payload;
    size_t len;             /* message length of the current row */
    uint8_t *msgs;          /* ROUND_MAX messages of len bytes (len >= 8: a counter in the first 8) */
    uint8_t *sigs;          /* ROUND_MAX signatures */
    size_t msg_stride;
    uint64_t counter;       /* makes every signed message distinct */
} dlat;

/* Message slot i for the next signature: the payload with a running counter in its first bytes. */
static uint8_t *next_msg(dlat *d, unsigned i)
{
    uint8_t *m = d->msgs + (size_t)i * d->msg_stride;
    memcpy(m, d->payload, d->len);
    uint64_t ctr = ++d->counter;
    for (size_t b = 0; b < 8 && b < d->len; b++)
        m[b] = (uint8_t)(ctr >> (8 * b));
    return m;
}

/* Before a round of timed signs: a full pool (the paper waits for 512 ready keys) and the messages. */
static int sign_prepare(void *p, unsigned first, unsigned n)
{
    dlat *d = p;
    (void)first;
    for (unsigned i = 0; i < n; i++)
        (void)next_msg(d, i);
    int rc = dsig_hybrid_signer_wait_ready(d->signer, d->pool);
    /* Let the verifier's background plane catch up too: with tiny batches (one Ed25519 verify per
     * key) it is slower than the signer, and an overflowing queue would drop batch messages. */
    dsig_hybrid_verifier_flush(d->fast);
    return rc;
}

/* Timed: one DSig sign (pool pop, digest, copies, key erasure). */
static int sign_call(void *p, unsigned i)
{
    dlat *d = p;
    size_t slot = i % ROUND_MAX, len = 0;
    int rc = dsig_hybrid_sign(d->signer, d->msgs + slot * d->msg_stride, d->len,
                              d->sigs + slot * d->c->sig_bytes, d->c->sig_bytes, &len);
    return rc ? rc : len == d->c->sig_bytes ? 0 : DSIG_E_INTERNAL;
}

/* Before a round of timed verifications: sign n fresh messages (untimed), let the fast verifier
 * verify and cache their batches, and check that each signature takes the intended path. */
static int verify_prepare(void *p, unsigned first, unsigned n)
{
    dlat *d = p;
    (void)first;
    int rc = dsig_hybrid_signer_wait_ready(d->signer, n < d->pool ? n : d->pool);
    for (unsigned i = 0; i < n && rc == 0; i++) {
        uint8_t *m = next_msg(d, i);
        size_t len = 0;
        rc = dsig_hybrid_sign(d->signer, m, d->len, d->sigs + (size_t)i * d->c->sig_bytes,
                              d->c->sig_bytes, &len);
    }
    if (rc)
        return rc;
    dsig_hybrid_verifier_flush(d->fast);
    for (unsigned i = 0; i < n; i++) {
        int fast = dsig_hybrid_can_verify_fast(d->v, SIGNER_ID, d->sigs + (size_t)i * d->c->sig_bytes,
                                               d->c->sig_bytes);
        if (fast != (d->v == d->fast)) {
            dsig_hybrid_verifier_stats vs;
            dsig_hybrid_signer_stats ss;
            dsig_hybrid_verifier_stats_get(d->fast, &vs);
            dsig_hybrid_signer_stats_get(d->signer, &ss);
            return bd_fail(DSIG_E_INTERNAL,
                         "a signature would not take the %s path (batches cached %llu, evicted %llu, "
                         "dropped %llu; publish errors %llu)",
                         d->v == d->fast ? "fast" : "slow", (unsigned long long)vs.batches_cached,
                         (unsigned long long)vs.batches_evicted, (unsigned long long)vs.batches_dropped,
                         (unsigned long long)ss.publish_errors);
        }
    }
    return 0;
}

/* Timed: one verification of a valid signature by the row's verifier; must accept. */
static int verify_call(void *p, unsigned i)
{
    dlat *d = p;
    size_t slot = i % ROUND_MAX;
    return dsig_hybrid_verify(d->v, SIGNER_ID, d->msgs + slot * d->msg_stride, d->len,
                              d->sigs + slot * d->c->sig_bytes, d->c->sig_bytes);
}

/* Parameters and the signer's DSig key of a configuration. */
static int dcfg_open(dcfg *c, const bench_dsig_cfg *cfg, uint64_t seed)
{
    static const unsigned hash_ids[] = {DSIG_HYBRID_HASH_HARAKA, DSIG_HYBRID_HASH_SHA256,
                                        DSIG_HYBRID_HASH_BLAKE3};
    unsigned log_w = 0, log_batch = 0;
    memset(c, 0, sizeof *c);
    while ((1u << log_w) < cfg->hbss.w)
        log_w++;
    while ((1u << log_batch) < cfg->batch)
        log_batch++;
    int rc = dsig_hybrid_params_new(&c->params, cfg->hbss.w ? DSIG_HYBRID_OTS_WOTS : DSIG_HYBRID_OTS_HORS,
                                    hash_ids[cfg->hash], log_w, cfg->hbss.log_t, cfg->hbss.k, log_batch);
    if (rc)
        return rc;
    c->sig_bytes = dsig_hybrid_params_sig_bytes(c->params);
    c->batch = dsig_hybrid_params_batch_size(c->params);
    const dsig_alg *alg = dsig_alg_by_name("DSig");
    if (!alg)
        return bd_fail(DSIG_E_UNSUPPORTED, "the DSig algorithm is not registered");
    return bench_make_keys(alg, 0, seed, 0x44536967u, &c->ed_sk, &c->ed_pk);
}

/* Free a configuration. */
static void dcfg_close(dcfg *c)
{
    dsig_key_free(c->ed_pk);
    dsig_key_free(c->ed_sk);
    dsig_hybrid_params_free(c->params);
    memset(c, 0, sizeof *c);
}

/* Verifier options whose cache and queue hold every batch a latency round or throughput round can
 * touch (tiny batches need many of them: the pool alone spans 512 batches of one key). */
static void verifier_opts(dsig_hybrid_verifier_options *vo, unsigned batch, unsigned keys, unsigned threads)
{
    dsig_hybrid_verifier_options_default(vo);
    unsigned need = 2 * (keys / batch) + 8;
    if (vo->cache_batches < need)
        vo->cache_batches = need;
    if (vo->queue_max < need)
        vo->queue_max = need;
    vo->threads = threads;
}

/* Latency rows of one configuration for each size: sign, verify-fast, verify-slow. */
static int dsig_latency_rows(run *R, const dcfg *c, const bench_dsig_cfg *cfg, const uint8_t *payload,
                             const size_t *sizes, size_t nsizes)
{
    dlat d = {.c = c, .payload = payload};
    dsig_hybrid_signer_options so;
    dsig_hybrid_verifier_options vo;
    dsig_hybrid_signer_options_default(&so);
    size_t maxlen = 8;
    for (size_t s = 0; s < nsizes; s++)
        maxlen = sizes[s] > maxlen ? sizes[s] : maxlen;
    d.pool = so.pool_target;
    d.msg_stride = maxlen;
    d.msgs = malloc(ROUND_MAX * maxlen);
    d.sigs = malloc(ROUND_MAX * c->sig_bytes);
    verifier_opts(&vo, c->batch, d.pool + ROUND_MAX, 1);
    int rc = d.msgs && d.sigs ? 0 : DSIG_E_NOMEM;
    if (rc == 0)
        rc = dsig_hybrid_channel_new(&d.ch);
    if (rc == 0)
        rc = dsig_hybrid_verifier_new(&d.fast, c->params, &vo);
    if (rc == 0)
        rc = dsig_hybrid_verifier_new(&d.slow, c->params, &vo);
    if (rc == 0)
        rc = dsig_hybrid_verifier_add_signer(d.fast, SIGNER_ID, c->ed_pk);
    if (rc == 0)
        rc = dsig_hybrid_verifier_add_signer(d.slow, SIGNER_ID, c->ed_pk);
    if (rc == 0)
        rc = dsig_hybrid_channel_subscribe(d.ch, d.fast);
    so.signer_id = SIGNER_ID;
    so.channel = d.ch;
    if (rc == 0)
        rc = dsig_hybrid_signer_new(&d.signer, c->ed_sk, c->params, &so);
    /* One whole untimed round per row: the first signatures after the signer starts otherwise pay
     * for the pool's first refill cycle and cold caches (seen as a slower first row). */
    unsigned warm = ROUND_MAX;
    for (size_t s = 0; s < nsizes && rc == 0; s++) {
        static const char *const ops[] = {"sign", "verify-fast", "verify-slow"};
        d.len = sizes[s];
        for (int op = 0; op < 3 && rc == 0; op++) {
            d.v = op == 2 ? d.slow : d.fast;
            lat_job j = {.prepare = op ? verify_prepare : sign_prepare,
                         .call = op ? verify_call : sign_call,
                         .ctx = &d,
                         .round = ROUND_MAX};
            dsig_hybrid_verifier_stats before, after;
            dsig_hybrid_verifier_stats_get(d.v, &before);
            rc = bd_measure_latency(&j, warm, R->o->count, R->overhead, R->ns);
            dsig_hybrid_verifier_stats_get(d.v, &after);
            uint64_t want = op ? warm + R->o->count : 0;
            if (rc == 0 && (op == 2 ? after.slow - before.slow : after.fast - before.fast) != want)
                rc = bd_fail(DSIG_E_INTERNAL, "%s did not take the intended path every time", ops[op]);
            if (rc)
                break;
            bench_dsig_row r = bd_row_of("dsig", ops[op], "latency", d.len, c->sig_bytes, cfg);
            bench_dsig_fill_stats(&r, R->ns, R->o->count);
            rc = bd_emit(R, &r);
        }
    }
    dsig_hybrid_signer_free(d.signer);
    if (d.ch && d.fast)
        (void)dsig_hybrid_channel_unsubscribe(d.ch, d.fast);
    dsig_hybrid_verifier_free(d.fast);
    dsig_hybrid_verifier_free(d.slow);
    dsig_hybrid_channel_free(d.ch);
    free(d.msgs);
    free(d.sigs);
    return rc;
}

/* Throughput rows (first size): one core does everything, as in the paper's cpu-tput. A signer with
 * no background thread and a pool of one batch generates each batch (keys, tree, Ed25519 root
 * signature) inside the sign that finds the pool empty; a verifier with no background thread
 * verifies each batch message (tree, Ed25519) inside receive_batch. Rounds start from an empty pool,
 * so a round of N signs (N a multiple of the batch) pays for exactly N keys. */
static int dsig_tput_rows(run *R, const dcfg *c, const bench_dsig_cfg *cfg, const uint8_t *payload,
                          size_t len)
{
    unsigned rounds = R->o->quick ? TPUT_ROUNDS_QUICK : TPUT_ROUNDS_FULL;
    unsigned n = R->o->quick ? TPUT_CALLS_QUICK : TPUT_CALLS_FULL;
    if (n < 2 * c->batch)
        n = 2 * c->batch;
    unsigned nbatches = n / c->batch;
    size_t bmsg_cap = dsig_hybrid_params_batch_msg_bytes(c->params), stride = len > 8 ? len : 8;
    double sv[TPUT_ROUNDS_FULL], vv[TPUT_ROUNDS_FULL];
    dsig_hybrid_signer *signer = NULL;
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.threads = 0;
    so.pool_target = c->batch;
    so.signer_id = SIGNER_ID;
    so.outbox = 2 * nbatches + 4; /* room to spare: an overflowing outbox drops the oldest message */
    uint8_t *msgs = malloc((size_t)n * stride), *sigs = malloc((size_t)n * c->sig_bytes);
    uint8_t *bmsgs = malloc((size_t)so.outbox * bmsg_cap);
    size_t *blen = malloc(sizeof *blen * so.outbox);
    int rc = msgs && sigs && bmsgs && blen ? 0 : DSIG_E_NOMEM;
    if (rc == 0)
        rc = dsig_hybrid_signer_new(&signer, c->ed_sk, c->params, &so);
    for (unsigned i = 0; i < n && rc == 0; i++) {
        memcpy(msgs + (size_t)i * stride, payload, len);
        for (size_t b = 0; b < 8 && b < len; b++)
            msgs[(size_t)i * stride + b] = (uint8_t)((uint64_t)i >> (8 * b));
    }
    for (unsigned k = 0; k < rounds && rc == 0; k++) {
        /* Untimed: empty the pool and the outbox, so the round generates exactly its own keys. */
        dsig_hybrid_signer_stats st;
        dsig_hybrid_signer_stats_get(signer, &st);
        for (uint64_t i = 0; i < st.ready && rc == 0; i++) {
            size_t sl = 0;
            rc = dsig_hybrid_sign(signer, msgs, len, sigs, c->sig_bytes, &sl);
        }
        size_t got = 0;
        while (rc == 0 && dsig_hybrid_signer_next_batch(signer, bmsgs, bmsg_cap, &got) == DSIG_OK)
            ;
        if (rc)
            break;
        uint64_t t0 = cpu_ns();
        for (unsigned i = 0; i < n && rc == 0; i++) {
            size_t sl = 0;
            rc = dsig_hybrid_sign(signer, msgs + (size_t)i * stride, len, sigs + (size_t)i * c->sig_bytes,
                                  c->sig_bytes, &sl);
        }
        uint64_t t1 = cpu_ns();
        sv[k] = (double)(t1 - t0) / n;
        unsigned nb = 0;
        while (rc == 0 && nb < so.outbox &&
               dsig_hybrid_signer_next_batch(signer, bmsgs + nb * bmsg_cap, bmsg_cap, &blen[nb]) == DSIG_OK)
            nb++;
        if (rc == 0 && nb != nbatches && k == 0) /* extra batches are charged to the signs: a note */
            fprintf(stderr, "bench dsig: note: %u signatures generated %u batches, expected %u\n", n, nb,
                    nbatches);
        /* Timed: verify every batch message, then every signature on the fast path. */
        dsig_hybrid_verifier *v = NULL;
        dsig_hybrid_verifier_options vo;
        verifier_opts(&vo, c->batch, n, 0);
        if (rc == 0)
            rc = dsig_hybrid_verifier_new(&v, c->params, &vo);
        if (rc == 0)
            rc = dsig_hybrid_verifier_add_signer(v, SIGNER_ID, c->ed_pk);
        t0 = cpu_ns();
        for (unsigned b = 0; b < nb && rc == 0; b++)
            rc = dsig_hybrid_verifier_receive_batch(v, SIGNER_ID, bmsgs + b * bmsg_cap, blen[b]);
        for (unsigned i = 0; i < n && rc == 0; i++)
            rc = dsig_hybrid_verify(v, SIGNER_ID, msgs + (size_t)i * stride, len,
                                    sigs + (size_t)i * c->sig_bytes, c->sig_bytes);
        t1 = cpu_ns();
        vv[k] = (double)(t1 - t0) / n;
        dsig_hybrid_verifier_stats vs;
        if (v) {
            dsig_hybrid_verifier_stats_get(v, &vs);
            if (rc == 0 && vs.fast != n)
                rc = bd_fail(DSIG_E_INTERNAL, "throughput verify took the slow path");
        }
        dsig_hybrid_verifier_free(v);
    }
    dsig_hybrid_signer_free(signer);
    free(msgs);
    free(sigs);
    free(bmsgs);
    free(blen);
    if (rc)
        return rc;
    bench_dsig_row r = bd_row_of("dsig", "sign", "throughput", len, c->sig_bytes, cfg);
    bench_dsig_fill_stats(&r, sv, rounds);
    rc = bd_emit(R, &r);
    r = bd_row_of("dsig", "verify", "throughput", len, c->sig_bytes, cfg);
    bench_dsig_fill_stats(&r, vv, rounds);
    return rc ? rc : bd_emit(R, &r);
}

/* Every DSig row of one configuration; a configuration the runtime rejects is skipped with the
 * reason (e.g. a parameter set it does not support), a failure inside a measurement ends the run. */
int bd_config_rows(run *R, const bench_dsig_cfg *cfg, const uint8_t *payload,
                            const size_t *sizes, size_t nsizes, int with_tput)
{
    dcfg c;
    char why[512];
    int rc = dcfg_open(&c, cfg, R->o->seed);
    if (rc) {
        fprintf(stderr, "bench dsig: skipped %s %s%u batch %u: %s\n", bench_dsig_hash_name(cfg->hash),
                cfg->hbss.w ? "w=" : "hors k=", cfg->hbss.w ? cfg->hbss.w : cfg->hbss.k, cfg->batch,
                bd_errtext(rc, why, sizeof why));
        dcfg_close(&c);
        R->skipped++;
        return 0;
    }
    rc = dsig_latency_rows(R, &c, cfg, payload, sizes, nsizes);
    if (rc == 0 && with_tput)
        rc = dsig_tput_rows(R, &c, cfg, payload, sizes[0]);
    if (rc)
        fprintf(stderr, "bench dsig: %s %s%u batch %u failed: %s\n", bench_dsig_hash_name(cfg->hash),
                cfg->hbss.w ? "w=" : "hors k=", cfg->hbss.w ? cfg->hbss.w : cfg->hbss.k, cfg->batch,
                bd_errtext(rc, why, sizeof why));
    dcfg_close(&c);
    return rc;
}

#else /* !BENCH_HAVE_DSIG */

/* Without the runtime there is nothing to measure. */
int bench_dsig_available(void)
{
    return 0;
}

/* No DSig rows: the configuration is counted as skipped. */
int bd_config_rows(run *R, const bench_dsig_cfg *cfg, const uint8_t *payload,
                            const size_t *sizes, size_t nsizes, int with_tput)
{
    (void)cfg;
    (void)payload;
    (void)sizes;
    (void)nsizes;
    (void)with_tput;
    R->skipped++;
    return 0;
}

#endif
