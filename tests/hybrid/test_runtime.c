/*
 * tests/hybrid/test_runtime.c — the DSig runtime without background threads (signers and verifiers
 * with threads = 0, so every step is deterministic): fast / slow path, can_verify_fast, unknown and
 * wrong signer, bad batches never cached, eviction, equivocation evidence (leaf and batch),
 * non-blocking mode, one-time keys never reused, the pull API and the channel, the per-signature
 * verifier-group hint, and the registry algorithm "DSig" (round trips, tampering, a frozen
 * known-answer signature). Child processes: test_fork.c; restarts and replays: test_verifier_state.c.
 * The threaded half is test_runtime_threads.c (CTest label "threads", also run under TSan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classic/eddsa.h"
#include "hash/blake3.h"
#include "hybrid/runtime.h"
#include "testutil.h"

/* A deterministic DSig key (public part in *pub). */
static dsig_key *ed_key(uint8_t tag, dsig_key **pub)
{
    uint8_t seed[32];
    memset(seed, tag, sizeof seed);
    dsig_keygen_params kp = {.bits = 0, .seed = seed, .seed_len = sizeof seed};
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("DSig"), &kp), DSIG_OK);
    if (pub)
        assert_int_equal(dsig_key_public(pub, k), DSIG_OK);
    return k;
}

/* Options of a signer with no threads that keeps its batch messages for the pull API. */
static dsig_hybrid_signer_options quiet_signer(uint64_t id, unsigned outbox)
{
    dsig_hybrid_signer_options o;
    dsig_hybrid_signer_options_default(&o);
    o.threads = 0;
    o.signer_id = id;
    o.outbox = outbox;
    return o;
}

/* Options of a verifier that verifies batches inside receive_batch. */
static dsig_hybrid_verifier_options inline_verifier(void)
{
    dsig_hybrid_verifier_options o;
    dsig_hybrid_verifier_options_default(&o);
    o.threads = 0;
    return o;
}

/* Pull the next batch message of s into a fresh buffer. */
static uint8_t *pull_batch(dsig_hybrid_signer *s, size_t *len)
{
    size_t cap = dsig_hybrid_params_batch_msg_bytes(dsig_hybrid_signer_params(s));
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    assert_int_equal(dsig_hybrid_signer_next_batch(s, buf, cap, len), DSIG_OK);
    assert_int_equal(*len, cap);
    return buf;
}

/* Slow path before the batch arrives, fast path after; can_verify_fast both ways. */
static void test_fast_and_slow(void **state)
{
    (void)state;
    dsig_key *pub, *k = ed_key(1, &pub);
    dsig_hybrid_signer_options so = quiet_signer(7, 8);
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_OK);
    dsig_hybrid_verifier_options vo = inline_verifier();
    dsig_hybrid_verifier *v;
    assert_int_equal(dsig_hybrid_verifier_new(&v, NULL, &vo), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 7, pub), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 7, pub), DSIG_E_ARG);

    size_t sb = dsig_hybrid_signer_sig_bytes(s);
    assert_int_equal(sb, dsig_hybrid_params_sig_bytes(dsig_hybrid_params_default()));
    assert_true(sb <= 1584);
    uint8_t *sig = malloc(sb), *sig2 = malloc(sb);
    size_t len, len2;
    const uint8_t msg[8] = "8 bytes!";
    assert_int_equal(dsig_hybrid_sign(s, msg, sizeof msg, sig, sb, &len), DSIG_OK); /* generates */
    assert_int_equal(len, sb);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 7, sig, len), 0);
    assert_int_equal(dsig_hybrid_verify(v, 7, msg, sizeof msg, sig, len), DSIG_OK);
    dsig_hybrid_verifier_stats vs;
    dsig_hybrid_verifier_stats_get(v, &vs);
    assert_int_equal(vs.slow, 1);
    assert_int_equal(vs.fast, 0);

    size_t blen;
    uint8_t *batch = pull_batch(s, &blen);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 7, batch, blen), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 7, batch, blen - 1), DSIG_E_FORMAT);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 7, sig, len), 1);
    assert_int_equal(dsig_hybrid_sign(s, msg, sizeof msg, sig2, sb, &len2), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 7, msg, sizeof msg, sig2, len2), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 7, msg, sizeof msg, sig, len), DSIG_OK); /* replay: same msg */
    dsig_hybrid_verifier_stats_get(v, &vs);
    assert_int_equal(vs.fast, 2);
    assert_int_equal(vs.batches_cached, 1);
    /* A duplicate batch is harmless. */
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 7, batch, blen), DSIG_OK);
    dsig_hybrid_verifier_stats_get(v, &vs);
    assert_int_equal(vs.batches_duplicate, 1);

    /* Wrong message, corrupted signature, truncated and over-long: rejected on both paths. */
    const uint8_t other[8] = "8 bytes?";
    assert_int_equal(dsig_hybrid_verify(v, 7, other, sizeof other, sig2, len2), DSIG_E_VERIFY);
    for (size_t pos = 0; pos < len2; pos += 97) {
        sig2[pos] ^= 0x01;
        assert_int_equal(dsig_hybrid_verify(v, 7, msg, sizeof msg, sig2, len2), DSIG_E_VERIFY);
        assert_int_equal(dsig_hybrid_verify_slow(NULL, pub, 7, msg, sizeof msg, sig2, len2), DSIG_E_VERIFY);
        sig2[pos] ^= 0x01;
    }
    assert_int_equal(dsig_hybrid_verify(v, 7, msg, sizeof msg, sig2, len2 - 1), DSIG_E_VERIFY);
    uint8_t *longer = calloc(1, len2 + 1);
    memcpy(longer, sig2, len2);
    assert_int_equal(dsig_hybrid_verify(v, 7, msg, sizeof msg, longer, len2 + 1), DSIG_E_VERIFY);
    free(longer);
    assert_int_equal(dsig_hybrid_verify_slow(NULL, pub, 7, msg, sizeof msg, sig2, len2), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify_slow(NULL, k, 7, msg, sizeof msg, sig2, len2), DSIG_OK);

    /* Unknown signer. */
    assert_int_equal(dsig_hybrid_verify(v, 8, msg, sizeof msg, sig, len), DSIG_E_UNKNOWN_SIGNER);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 8, sig, len), 0);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 8, batch, blen), DSIG_E_UNKNOWN_SIGNER);

    /* Too small a buffer consumes no key. */
    dsig_hybrid_signer_stats ss, ss2;
    dsig_hybrid_signer_stats_get(s, &ss);
    assert_int_equal(dsig_hybrid_sign(s, msg, sizeof msg, sig, sb - 1, &len), DSIG_E_BUFFER);
    dsig_hybrid_signer_stats_get(s, &ss2);
    assert_int_equal(ss.ready, ss2.ready);
    assert_int_equal(ss.signatures, ss2.signatures);

    free(batch);
    free(sig);
    free(sig2);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_signer_free(s);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* A batch whose root signature is bad is dropped, never cached; a batch of another signer too. */
static void test_bad_batch_dropped(void **state)
{
    (void)state;
    dsig_key *pubA, *kA = ed_key(2, &pubA), *pubB, *kB = ed_key(3, &pubB);
    dsig_hybrid_signer_options so = quiet_signer(1, 4);
    dsig_hybrid_signer *a, *b;
    assert_int_equal(dsig_hybrid_signer_new(&a, kA, NULL, &so), DSIG_OK);
    so.signer_id = 2;
    assert_int_equal(dsig_hybrid_signer_new(&b, kB, NULL, &so), DSIG_OK);
    dsig_hybrid_verifier_options vo = inline_verifier();
    dsig_hybrid_verifier *v;
    assert_int_equal(dsig_hybrid_verifier_new(&v, NULL, &vo), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 1, pubA), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 2, pubB), DSIG_OK);

    uint8_t sig[4096], sigb[4096];
    size_t len, lenb;
    const uint8_t msg[] = "payload";
    assert_int_equal(dsig_hybrid_sign(a, msg, sizeof msg, sig, sizeof sig, &len), DSIG_OK);
    assert_int_equal(dsig_hybrid_sign(b, msg, sizeof msg, sigb, sizeof sigb, &lenb), DSIG_OK);
    size_t blen, blenb;
    uint8_t *batch = pull_batch(a, &blen), *batchb = pull_batch(b, &blenb);

    /* Flip a bit of the root signature (the last 64 bytes of the batch message, docs §7) and of a
     * leaf; either way the Ed25519 check fails. */
    size_t flips[] = {blen - 1, blen - 40, blen / 2};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        batch[flips[i]] ^= 0x80;
        assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 1, batch, blen), DSIG_E_VERIFY);
        assert_int_equal(dsig_hybrid_can_verify_fast(v, 1, sig, len), 0);
        batch[flips[i]] ^= 0x80;
    }
    /* B's genuine batch presented as A's: wrong signer, dropped. */
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 1, batchb, blenb), DSIG_E_VERIFY);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 1, sig, len), 0);
    dsig_hybrid_verifier_stats vs;
    dsig_hybrid_verifier_stats_get(v, &vs);
    assert_int_equal(vs.batches_rejected, 4);
    assert_int_equal(vs.batches_cached, 0);

    /* Both good batches: cached; each signature verifies only under its own signer (both batches
     * have sequence number 0, so the wrong-signer check runs on the fast path). */
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 1, batch, blen), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 2, batchb, blenb), DSIG_OK);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 1, sig, len), 1);
    assert_int_equal(dsig_hybrid_verify(v, 1, msg, sizeof msg, sig, len), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 2, msg, sizeof msg, sigb, lenb), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 2, msg, sizeof msg, sig, len), DSIG_E_VERIFY);
    assert_int_equal(dsig_hybrid_verify(v, 1, msg, sizeof msg, sigb, lenb), DSIG_E_VERIFY);
    assert_int_equal(dsig_hybrid_verify_slow(NULL, pubB, 1, msg, sizeof msg, sig, len), DSIG_E_VERIFY);

    free(batch);
    free(batchb);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_signer_free(a);
    dsig_hybrid_signer_free(b);
    dsig_key_free(kA);
    dsig_key_free(pubA);
    dsig_key_free(kB);
    dsig_key_free(pubB);
}

/* Beyond 32 cached batches the oldest is evicted and its signatures fall back to the slow path. */
static void test_eviction(void **state)
{
    (void)state;
    dsig_hybrid_params *p;
    assert_int_equal(dsig_hybrid_params_with_batch(&p, NULL, 1), DSIG_OK); /* 2 keys per batch */
    dsig_key *pub, *k = ed_key(4, &pub);
    dsig_hybrid_signer_options so = quiet_signer(5, 64);
    so.pool_target = 2;
    so.first_seq = 1000; /* explicit (default: the clock) */
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, p, &so), DSIG_OK);
    dsig_hybrid_verifier_options vo = inline_verifier();
    vo.cache_batches = 0; /* raised to the minimum, 32 */
    dsig_hybrid_verifier *v;
    assert_int_equal(dsig_hybrid_verifier_new(&v, p, &vo), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 5, pub), DSIG_OK);

    enum { NB = 34 };
    size_t sb = dsig_hybrid_signer_sig_bytes(s);
    uint8_t *sigs = malloc((size_t)NB * sb);
    uint8_t msg[8] = {0};
    size_t len;
    for (unsigned i = 0; i < NB; i++) {
        msg[0] = (uint8_t)i;
        /* Two keys per batch: sign with the first of batch i, throw the second away. */
        assert_int_equal(dsig_hybrid_sign(s, msg, sizeof msg, sigs + i * sb, sb, &len), DSIG_OK);
        uint8_t junk[4096];
        assert_int_equal(dsig_hybrid_sign(s, msg, sizeof msg, junk, sizeof junk, &len), DSIG_OK);
        uint64_t seq;
        uint32_t idx;
        assert_int_equal(dsig_hybrid_sig_locate(p, sigs + i * sb, sb, &seq, &idx), DSIG_OK);
        assert_int_equal(seq, 1000 + i);
        assert_int_equal(idx, 0);
        size_t blen;
        uint8_t *b = pull_batch(s, &blen);
        assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 5, b, blen), DSIG_OK);
        free(b);
    }
    dsig_hybrid_verifier_stats vs;
    dsig_hybrid_verifier_stats_get(v, &vs);
    assert_int_equal(vs.batches_cached, NB);
    assert_int_equal(vs.batches_evicted, NB - 32);
    for (unsigned i = 0; i < NB; i++) {
        msg[0] = (uint8_t)i;
        int cached = i >= NB - 32;
        assert_int_equal(dsig_hybrid_can_verify_fast(v, 5, sigs + i * sb, sb), cached);
        assert_int_equal(dsig_hybrid_verify(v, 5, msg, sizeof msg, sigs + i * sb, sb), DSIG_OK);
        msg[1] ^= 1;
        assert_int_equal(dsig_hybrid_verify(v, 5, msg, sizeof msg, sigs + i * sb, sb), DSIG_E_VERIFY);
        msg[1] ^= 1;
    }
    dsig_hybrid_verifier_stats_get(v, &vs);
    assert_int_equal(vs.slow, 2 * (NB - 32));
    assert_int_equal(vs.fast, 2 * 32);
    free(sigs);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_signer_free(s);
    dsig_hybrid_params_free(p);
    dsig_key_free(k);
    dsig_key_free(pub);
}

static int g_cb_calls;
static dsig_hybrid_evidence g_cb_ev;

/* Equivocation callback: remember the last record. */
static void on_equiv(void *arg, const dsig_hybrid_evidence *ev)
{
    (void)arg;
    g_cb_calls++;
    g_cb_ev = *ev;
}

/* An equivocating signer (simulated with the scheme: one key, two messages) is convicted with both
 * signatures; the second verification returns DSIG_E_EQUIVOCATION. Also two batches under one
 * sequence number. */
static void test_equivocation(void **state)
{
    (void)state;
    const dsig_hb_params *p = dsig_hb_params_default();
    dsig_key *pub, *k = ed_key(5, &pub);
    uint8_t master[32], master2[32];
    dsig_ed25519_dkey root;
    dsig_hb_who who = {.domain = DSIG_HB_DOMAIN_RUNTIME, .signer_id = 3};
    assert_int_equal(dsig_hb_key_root_secret(k, &root), DSIG_OK);
    memcpy(who.root_pk, root.pk, 32);
    memset(master, 0x11, sizeof master);
    memset(master2, 0x22, sizeof master2);
    dsig_hb_batch b, b2;
    assert_int_equal(dsig_hb_keygen_batch(p, master, 9, &root, &who, &b), DSIG_OK);
    assert_int_equal(dsig_hb_keygen_batch(p, master2, 9, &root, &who, &b2), DSIG_OK);
    uint8_t *bm = malloc(p->batch_msg_bytes), *bm2 = malloc(p->batch_msg_bytes);
    size_t bl, bl2;
    assert_int_equal(dsig_hb_batch_message(&b, bm, p->batch_msg_bytes, &bl), DSIG_OK);
    assert_int_equal(dsig_hb_batch_message(&b2, bm2, p->batch_msg_bytes, &bl2), DSIG_OK);

    dsig_hybrid_verifier_options vo = inline_verifier();
    vo.on_equivocation = on_equiv;
    g_cb_calls = 0;
    dsig_hybrid_verifier *v;
    assert_int_equal(dsig_hybrid_verifier_new(&v, NULL, &vo), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 3, pub), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 3, bm, bl), DSIG_OK);

    uint8_t s1[4096], s2[4096], s3[4096];
    size_t l1, l2, l3;
    const uint8_t m1[] = "pay Alice 10", m2[] = "pay Carol 10";
    assert_int_equal(dsig_hb_sign(&b.keys[5], m1, sizeof m1, s1, sizeof s1, &l1), DSIG_OK);
    assert_int_equal(dsig_hb_sign(&b.keys[5], m2, sizeof m2, s2, sizeof s2, &l2), DSIG_OK);
    assert_int_equal(dsig_hb_sign(&b.keys[6], m2, sizeof m2, s3, sizeof s3, &l3), DSIG_OK);

    assert_int_equal(dsig_hybrid_verify(v, 3, m1, sizeof m1, s1, l1), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 3, m1, sizeof m1, s1, l1), DSIG_OK); /* same message: fine */
    assert_int_equal(dsig_hybrid_verify(v, 3, m2, sizeof m2, s3, l3), DSIG_OK); /* other key: fine */
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 0);
    assert_int_equal(dsig_hybrid_verify(v, 3, m2, sizeof m2, s2, l2), DSIG_E_EQUIVOCATION);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 1);
    assert_int_equal(g_cb_calls, 1);
    const dsig_hybrid_evidence *ev;
    assert_int_equal(dsig_hybrid_verifier_evidence(v, 0, &ev), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_evidence(v, 1, &ev), DSIG_E_ARG);
    assert_int_equal(dsig_hybrid_verifier_evidence(v, 0, &ev), DSIG_OK);
    assert_ptr_equal(g_cb_ev.sig1, ev->sig1);
    assert_int_equal(ev->kind, DSIG_HYBRID_EQUIV_LEAF);
    assert_int_equal(ev->signer_id, 3);
    assert_int_equal(ev->batch_seq, 9);
    assert_int_equal(ev->index, 5);
    assert_int_equal(ev->msg1_len, sizeof m1);
    assert_memory_equal(ev->msg1, m1, sizeof m1);
    assert_memory_equal(ev->msg2, m2, sizeof m2);
    assert_int_equal(ev->sig1_len, l1);
    assert_memory_equal(ev->sig1, s1, l1);
    assert_memory_equal(ev->sig2, s2, l2);
    /* The evidence convinces anyone holding the public key. */
    assert_int_equal(dsig_hybrid_verify_slow(NULL, pub, 3, ev->msg1, ev->msg1_len, ev->sig1, ev->sig1_len), 0);
    assert_int_equal(dsig_hybrid_verify_slow(NULL, pub, 3, ev->msg2, ev->msg2_len, ev->sig2, ev->sig2_len), 0);
    /* Again (anyone can replay the second signature): still DSIG_E_EQUIVOCATION, but no new record —
     * one per replay would let a network attacker grow the evidence list without bound. */
    for (int i = 0; i < 200; i++)
        assert_int_equal(dsig_hybrid_verify(v, 3, m2, sizeof m2, s2, l2), DSIG_E_EQUIVOCATION);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 1);
    assert_int_equal(g_cb_calls, 1);

    /* A second, different batch under sequence number 9 (recorded once, however often replayed). */
    for (int i = 0; i < 20; i++)
        assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 3, bm2, bl2), DSIG_E_EQUIVOCATION);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 2);
    assert_int_equal(dsig_hybrid_verifier_evidence(v, 1, &ev), DSIG_OK);
    assert_int_equal(ev->kind, DSIG_HYBRID_EQUIV_BATCH);
    assert_int_equal(ev->batch_seq, 9);
    assert_null(ev->msg1);
    assert_int_equal(ev->sig1_len, bl);
    assert_memory_equal(ev->sig1, bm, bl);
    assert_memory_equal(ev->sig2, bm2, bl2);
    dsig_hybrid_verifier_stats vs;
    dsig_hybrid_verifier_stats_get(v, &vs);
    assert_int_equal(vs.equivocations, 2);

    free(bm);
    free(bm2);
    dsig_hb_batch_free(&b);
    dsig_hb_batch_free(&b2);
    dsig_hybrid_verifier_free(v);
    dsig_memzero(&root, sizeof root);
    dsig_key_free(k);
    dsig_key_free(pub);
}

static unsigned g_groups_seen;

/* on_batch: note which groups produced batch messages. */
static void on_group_batch(void *arg, uint64_t signer_id, unsigned group, const uint8_t *msg, size_t len)
{
    (void)arg;
    (void)msg;
    (void)len;
    assert_int_equal(signer_id, 21);
    g_groups_seen |= 1u << group;
}

/* The hint: three verifier groups, a channel each (the third none). A signature made for group g is
 * on the fast path exactly at the verifiers of g's channel; one verifier in two groups caches both
 * groups' batches (one growing sequence per signer: all groups number from one counter). */
static void test_hint_groups(void **state)
{
    (void)state;
    dsig_key *pub, *k = ed_key(12, &pub);
    dsig_hybrid_channel *ch[2];
    dsig_hybrid_verifier *v[3]; /* v[0] in group 0, v[1] in group 1, v[2] in both */
    dsig_hybrid_verifier_options vo = inline_verifier();
    for (int i = 0; i < 2; i++)
        assert_int_equal(dsig_hybrid_channel_new(&ch[i]), DSIG_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dsig_hybrid_verifier_new(&v[i], NULL, &vo), DSIG_OK);
        assert_int_equal(dsig_hybrid_verifier_add_signer(v[i], 21, pub), DSIG_OK);
    }
    assert_int_equal(dsig_hybrid_channel_subscribe(ch[0], v[0]), DSIG_OK);
    assert_int_equal(dsig_hybrid_channel_subscribe(ch[1], v[1]), DSIG_OK);
    assert_int_equal(dsig_hybrid_channel_subscribe(ch[0], v[2]), DSIG_OK);
    assert_int_equal(dsig_hybrid_channel_subscribe(ch[1], v[2]), DSIG_OK);
    dsig_hybrid_channel *const chans[3] = {ch[0], ch[1], NULL};
    dsig_hybrid_signer_options so = quiet_signer(21, 4);
    so.groups = 3;
    so.group_channels = chans;
    so.on_batch = on_group_batch;
    g_groups_seen = 0;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_OK);
    static const int fast_at[3][3] = {{1, 0, 1}, {0, 1, 1}, {0, 0, 0}};
    uint8_t sig[2048];
    size_t sl;
    uint64_t last = 0;
    for (int round = 0; round < 3; round++) {
        for (unsigned g = 0; g < 3; g++) {
            const uint8_t m[4] = {(uint8_t)g, (uint8_t)round};
            assert_int_equal(dsig_hybrid_sign_hint(s, g, m, sizeof m, sig, sizeof sig, &sl), DSIG_OK);
            uint64_t seq;
            uint32_t idx;
            assert_int_equal(dsig_hybrid_sig_locate(NULL, sig, sl, &seq, &idx), DSIG_OK);
            if (round == 0) { /* each group's first signature generated its first batch */
                assert_true(seq > last);
                last = seq;
            }
            for (int i = 0; i < 3; i++) {
                assert_int_equal(dsig_hybrid_can_verify_fast(v[i], 21, sig, sl), fast_at[g][i]);
                assert_int_equal(dsig_hybrid_verify(v[i], 21, m, sizeof m, sig, sl), DSIG_OK);
            }
        }
    }
    assert_int_equal(g_groups_seen, 7);
    assert_int_equal(dsig_hybrid_sign_hint(s, 3, sig, 1, sig, sizeof sig, &sl), DSIG_E_ARG);
    /* dsig_hybrid_sign is group 0; the outbox keeps each group's messages apart. */
    assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)"z", 1, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_hybrid_can_verify_fast(v[0], 21, sig, sl), 1);
    uint8_t bm[8192];
    size_t bl;
    for (unsigned g = 0; g < 3; g++)
        assert_int_equal(dsig_hybrid_signer_next_group_batch(s, g, bm, sizeof bm, &bl), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_next_group_batch(s, 2, bm, sizeof bm, &bl), DSIG_E_WOULD_BLOCK);
    assert_int_equal(dsig_hybrid_signer_next_group_batch(s, 3, bm, sizeof bm, &bl), DSIG_E_ARG);
    assert_int_equal(dsig_hybrid_signer_wait_ready(s, 100), DSIG_OK);
    dsig_hybrid_signer_stats st;
    dsig_hybrid_signer_stats_get(s, &st);
    assert_true(st.ready >= 300);
    dsig_hybrid_signer_free(s);
    so.groups = 65;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_E_ARG);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dsig_hybrid_channel_unsubscribe(ch[i == 1], v[i]), DSIG_OK);
        if (i == 2)
            assert_int_equal(dsig_hybrid_channel_unsubscribe(ch[1], v[i]), DSIG_OK);
        dsig_hybrid_verifier_free(v[i]);
    }
    for (int i = 0; i < 2; i++)
        dsig_hybrid_channel_free(ch[i]);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* Non-blocking mode, the pull API and one-time keys never reused over many pool refills. */
static void test_nonblocking_and_unique(void **state)
{
    (void)state;
    dsig_hybrid_params *p;
    assert_int_equal(dsig_hybrid_params_with_batch(&p, NULL, 4), DSIG_OK); /* 16 keys per batch */
    dsig_key *pub, *k = ed_key(6, &pub);
    dsig_hybrid_signer_options so = quiet_signer(1, 2);
    so.nonblocking = 1;
    so.pool_target = 32;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, p, &so), DSIG_OK);
    uint8_t sig[4096];
    size_t len;
    assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)"x", 1, sig, sizeof sig, &len),
                     DSIG_E_WOULD_BLOCK);
    assert_int_equal(dsig_hybrid_signer_refill(s, 3), DSIG_OK);

    /* Pull API: outbox of 2, three batches made: the oldest was dropped. */
    dsig_hybrid_signer_stats st;
    dsig_hybrid_signer_stats_get(s, &st);
    assert_int_equal(st.ready, 48);
    assert_int_equal(st.outbox_dropped, 1);
    uint8_t small[8];
    size_t blen = 0;
    assert_int_equal(dsig_hybrid_signer_next_batch(s, small, sizeof small, &blen), DSIG_E_BUFFER);
    assert_int_equal(blen, dsig_hybrid_params_batch_msg_bytes(p));
    free(pull_batch(s, &blen));
    free(pull_batch(s, &blen));
    assert_int_equal(dsig_hybrid_signer_next_batch(s, small, sizeof small, &blen), DSIG_E_WOULD_BLOCK);

    enum { N = 48 + 400 };
    uint64_t *pairs = malloc(N * sizeof *pairs);
    unsigned n = 0;
    for (unsigned i = 0; i < N; i++) {
        int rc = dsig_hybrid_sign(s, (const uint8_t *)&i, sizeof i, sig, sizeof sig, &len);
        if (rc == DSIG_E_WOULD_BLOCK) {
            assert_true(i >= 48);
            assert_int_equal(dsig_hybrid_signer_refill(s, 1), DSIG_OK);
            rc = dsig_hybrid_sign(s, (const uint8_t *)&i, sizeof i, sig, sizeof sig, &len);
        }
        assert_int_equal(rc, DSIG_OK);
        assert_int_equal(dsig_hybrid_verify_slow(p, pub, 1, (const uint8_t *)&i, sizeof i, sig, len), DSIG_OK);
        uint64_t seq;
        uint32_t idx;
        assert_int_equal(dsig_hybrid_sig_locate(p, sig, len, &seq, &idx), DSIG_OK);
        pairs[n++] = seq << 32 | idx;
    }
    dsig_hybrid_signer_stats_get(s, &st);
    assert_int_equal(st.signatures, N);
    assert_true(st.would_block >= 1);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++)
            assert_true(pairs[i] != pairs[j]);
    free(pairs);
    dsig_hybrid_signer_free(s);

    /* A blocking signer without threads generates on demand. */
    so.nonblocking = 0;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, p, &so), DSIG_OK);
    assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)"x", 1, sig, sizeof sig, &len), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_wait_ready(s, 40), DSIG_OK);
    dsig_hybrid_signer_stats_get(s, &st);
    assert_true(st.ready >= 40);
    dsig_hybrid_signer_free(s);

    dsig_hybrid_params_free(p);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* Bad keys, bad options. */
static void test_args(void **state)
{
    (void)state;
    dsig_key *pub, *k = ed_key(7, &pub);
    dsig_hybrid_signer *s = NULL;
    assert_int_equal(dsig_hybrid_signer_new(&s, pub, NULL, NULL), DSIG_E_NO_PRIVATE);
    assert_null(s);
    dsig_key *ec = NULL;
    assert_int_equal(dsig_key_generate(&ec, dsig_alg_by_name("ES256"), NULL), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_new(&s, ec, NULL, NULL), DSIG_E_ALG_NOT_ALLOWED);
    /* Ed25519 keys not made for DSig (unbound as from PEM, or bound to Ed25519): refused with the way
     * to make a DSig key, by the signer, the verifier and the stateless slow path. */
    dsig_key *ed = NULL, *edu = NULL;
    assert_int_equal(dsig_key_generate(&ed, dsig_alg_by_name("Ed25519"), NULL), DSIG_OK);
    assert_int_equal(dsig_key_generate(&edu, dsig_alg_by_name("Ed25519"), NULL), DSIG_OK);
    assert_int_equal(dsig_key_set_alg(edu, NULL), DSIG_OK);
    const dsig_key *notdsig[2] = {ed, edu};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dsig_hybrid_signer_new(&s, notdsig[i], NULL, NULL), DSIG_E_ALG_NOT_ALLOWED);
        assert_non_null(strstr(dsig_last_error_detail(), "dsig keygen -a DSig"));
        assert_int_equal(dsig_hybrid_verify_slow(NULL, notdsig[i], 1, (const uint8_t *)"m", 1,
                                                 (const uint8_t *)"s", 1), DSIG_E_ALG_NOT_ALLOWED);
    }
    assert_null(s);
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.pool_target = 0;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_E_ARG);
    dsig_hybrid_verifier *v;
    dsig_hybrid_verifier_options vo = inline_verifier();
    vo.max_signers = 1;
    assert_int_equal(dsig_hybrid_verifier_new(&v, NULL, &vo), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 1, ec), DSIG_E_ALG_NOT_ALLOWED);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 1, ed), DSIG_E_ALG_NOT_ALLOWED);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 1, edu), DSIG_E_ALG_NOT_ALLOWED);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 1, k), DSIG_OK); /* a private key works too */
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 2, pub), DSIG_E_ARG); /* one key, one id */
    assert_non_null(strstr(dsig_last_error_detail(), "already registered as signer 1"));
    dsig_key *pub2, *k2 = ed_key(70, &pub2);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 2, pub2), DSIG_E_TOO_LARGE);
    dsig_key_free(k2);
    dsig_key_free(pub2);
    dsig_hybrid_verifier_free(v);

    /* Parameter sets: presets by name and index, custom sets. */
    assert_true(dsig_hybrid_params_count() >= 4);
    for (size_t i = 0; i < dsig_hybrid_params_count(); i++) {
        const dsig_hybrid_params *p = dsig_hybrid_params_at(i);
        assert_ptr_equal(dsig_hybrid_params_by_name(dsig_hybrid_params_name(p)), p);
    }
    assert_null(dsig_hybrid_params_at(dsig_hybrid_params_count()));
    assert_null(dsig_hybrid_params_by_name("nope"));
    assert_string_equal(dsig_hybrid_params_name(dsig_hybrid_params_default()), "wots4-haraka-b128");
    assert_int_equal(dsig_hybrid_params_batch_size(dsig_hybrid_params_default()), 128);
    dsig_hybrid_params *cp;
    assert_int_equal(dsig_hybrid_params_new(&cp, DSIG_HYBRID_OTS_WOTS, DSIG_HYBRID_HASH_SHA256, 3, 0, 0, 5),
                     DSIG_OK);
    assert_int_equal(dsig_hybrid_params_batch_size(cp), 32);
    dsig_hybrid_params_free(cp);
    assert_int_equal(dsig_hybrid_params_new(&cp, DSIG_HYBRID_OTS_WOTS, 9, 2, 0, 0, 7), DSIG_E_ARG);
    assert_int_equal(dsig_hybrid_params_new(&cp, DSIG_HYBRID_OTS_WOTS, 1, 2, 0, 0, 11), DSIG_E_ARG);
    dsig_hybrid_params_free((dsig_hybrid_params *)dsig_hybrid_params_default()); /* ignored */
    dsig_key_free(ec);
    dsig_key_free(ed);
    dsig_key_free(edu);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* The channel fans batch messages out to every subscriber; HORS and SHA-256 sets run the same way. */
static void test_channel(void **state)
{
    (void)state;
    const char *sets[] = {"wots4-haraka-b128", "wots4-sha256-b128", "hors-k32-t512-haraka-b128"};
    dsig_key *pub, *k = ed_key(8, &pub);
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        const dsig_hybrid_params *p = dsig_hybrid_params_by_name(sets[si]);
        assert_non_null(p);
        dsig_hybrid_channel *ch;
        assert_int_equal(dsig_hybrid_channel_new(&ch), DSIG_OK);
        dsig_hybrid_verifier_options vo = inline_verifier();
        dsig_hybrid_verifier *v1, *v2, *v3;
        assert_int_equal(dsig_hybrid_verifier_new(&v1, p, &vo), DSIG_OK);
        assert_int_equal(dsig_hybrid_verifier_new(&v2, p, &vo), DSIG_OK);
        assert_int_equal(dsig_hybrid_verifier_new(&v3, p, &vo), DSIG_OK);
        assert_int_equal(dsig_hybrid_verifier_add_signer(v1, 4, pub), DSIG_OK);
        assert_int_equal(dsig_hybrid_verifier_add_signer(v2, 4, pub), DSIG_OK);
        assert_int_equal(dsig_hybrid_verifier_add_signer(v3, 4, pub), DSIG_OK);
        assert_int_equal(dsig_hybrid_channel_subscribe(ch, v1), DSIG_OK);
        assert_int_equal(dsig_hybrid_channel_subscribe(ch, v2), DSIG_OK);
        assert_int_equal(dsig_hybrid_channel_subscribe(ch, v3), DSIG_OK);
        assert_int_equal(dsig_hybrid_channel_subscribe(ch, v2), DSIG_E_ARG);
        assert_int_equal(dsig_hybrid_channel_unsubscribe(ch, v3), DSIG_OK);
        assert_int_equal(dsig_hybrid_channel_unsubscribe(ch, v3), DSIG_E_ARG);

        dsig_hybrid_signer_options so = quiet_signer(4, 0);
        so.channel = ch;
        dsig_hybrid_signer *s;
        assert_int_equal(dsig_hybrid_signer_new(&s, k, p, &so), DSIG_OK);
        size_t sb = dsig_hybrid_signer_sig_bytes(s), len;
        uint8_t *sig = malloc(sb);
        const uint8_t msg[32] = "thirty-two bytes of message....";
        assert_int_equal(dsig_hybrid_sign(s, msg, sizeof msg, sig, sb, &len), DSIG_OK);
        assert_int_equal(dsig_hybrid_can_verify_fast(v1, 4, sig, len), 1);
        assert_int_equal(dsig_hybrid_can_verify_fast(v2, 4, sig, len), 1);
        assert_int_equal(dsig_hybrid_can_verify_fast(v3, 4, sig, len), 0);
        assert_int_equal(dsig_hybrid_verify(v1, 4, msg, sizeof msg, sig, len), DSIG_OK);
        assert_int_equal(dsig_hybrid_verify(v2, 4, msg, sizeof msg, sig, len), DSIG_OK);
        assert_int_equal(dsig_hybrid_verify(v3, 4, msg, sizeof msg, sig, len), DSIG_OK);
        sig[len / 2] ^= 4;
        assert_int_equal(dsig_hybrid_verify(v1, 4, msg, sizeof msg, sig, len), DSIG_E_VERIFY);
        assert_int_equal(dsig_hybrid_verify(v3, 4, msg, sizeof msg, sig, len), DSIG_E_VERIFY);
        free(sig);
        dsig_hybrid_signer_free(s);
        dsig_hybrid_channel_free(ch);
        dsig_hybrid_verifier_free(v1);
        dsig_hybrid_verifier_free(v2);
        dsig_hybrid_verifier_free(v3);
    }
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* Lower-case hex. */
static void to_hex(char *out, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

/* Registry algorithm "DSig" pinned by a frozen signature: DSig key from the RFC 8032 §7.1 TEST 1
 * secret key (official vector), master seed 00..1f, digest BLAKE3("abc"). Any change of the format, of
 * the root-key derivation or of the registry parameter set changes the BLAKE3 of the signature. */
#define KAT_SIG_BLAKE3 "934fc28f0a274c08078769215d9b3199bb8906fa835bdd89a375323f3ec17dd5"
static void test_registry_kat(void **state)
{
    (void)state;
    json_t *j = tu_load_json("eddsa/rfc8032/ed25519.json");
    json_t *t1 = json_array_get(j, 0);
    assert_non_null(t1);
    size_t n, npk;
    uint8_t *seed = tu_hex(tu_str(t1, "secretKey"), &n);
    uint8_t *vpk = tu_hex(tu_str(t1, "publicKey"), &npk);
    assert_int_equal(n, 32);
    uint8_t sk[64], pk[32], master[32], digest[32];
    assert_int_equal(crypto_sign_seed_keypair(pk, sk, seed), 0);
    assert_memory_equal(pk, vpk, 32);
    free(vpk);
    dsig_key *dk = dsig_key_new(&dsig_keytype_ed25519);
    dsig_jwk_member m[2] = {{"x", pk, 32}, {"d", seed, 32}};
    assert_non_null(dk);
    assert_int_equal(dk->type->import_jwk(dk, m, 2), DSIG_OK);
    dk->has_private = 1;
    assert_int_equal(dsig_key_set_alg(dk, dsig_alg_by_name("DSig")), DSIG_OK);
    dsig_ed25519_dkey root;
    assert_int_equal(dsig_hb_key_root_secret(dk, &root), DSIG_OK);
    dsig_key_free(dk);
    for (int i = 0; i < 32; i++)
        master[i] = (uint8_t)i;
    dsig_blake3("abc", 3, digest, sizeof digest);
    const dsig_alg *alg = dsig_alg_by_name("DSig");
    assert_non_null(alg);
    uint8_t sig[2048];
    size_t len;
    assert_int_equal(dsig_hb_alg_sign_digest(master, &root, digest, sig, sizeof sig, &len), DSIG_OK);
    dsig_memzero(&root, sizeof root);
    assert_int_equal(len, dsig_alg_sig_max(alg));
    uint8_t h[32];
    char hex[65];
    dsig_blake3(sig, len, h, sizeof h);
    to_hex(hex, h, sizeof h);
    if (getenv("DSIG_HB_PRINT_KAT"))
        printf("KAT_SIG_BLAKE3 %s\n", hex);
    assert_string_equal(hex, KAT_SIG_BLAKE3);
    free(seed);
    json_decref(j);
}

/* Registry algorithm "DSig": streamed round trips with several chunkings, tampering, key binding. */
static void test_registry_roundtrip(void **state)
{
    (void)state;
    const dsig_alg *alg = dsig_alg_by_name("DSig");
    assert_non_null(alg);
    assert_string_equal(dsig_alg_family(alg), "DSig");
    assert_string_equal(dsig_alg_baseline(alg), "BLAKE3");
    assert_true(dsig_alg_flags(alg) & DSIG_ALG_ONE_PASS);
    assert_true(dsig_alg_flags(alg) & DSIG_ALG_RANDOMIZED);
    dsig_key *k = NULL, *pub = NULL;
    assert_int_equal(dsig_key_generate(&k, alg, NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    size_t mlen = 5000;
    uint8_t *msg = malloc(mlen);
    tu_fill(msg, mlen, 42);
    uint8_t sig[2048], sig2[2048];
    size_t len, len2;
    size_t chunks[] = {0, 1, 63, 1024};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        assert_int_equal(tu_sign_chunked(alg, k, msg, mlen, chunks[c], sig, sizeof sig, &len), DSIG_OK);
        assert_int_equal(len, dsig_alg_sig_max(alg));
        for (size_t c2 = 0; c2 < sizeof chunks / sizeof chunks[0]; c2++)
            assert_int_equal(tu_verify_chunked(alg, pub, msg, mlen, chunks[c2], sig, len), DSIG_OK);
    }
    /* Randomized: two signatures differ; both verify. */
    assert_int_equal(tu_sign_chunked(alg, k, msg, mlen, 0, sig2, sizeof sig2, &len2), DSIG_OK);
    assert_memory_not_equal(sig, sig2, len);
    assert_int_equal(tu_verify_chunked(alg, pub, msg, mlen, 0, sig2, len2), DSIG_OK);
    msg[77] ^= 1;
    assert_int_equal(tu_verify_chunked(alg, pub, msg, mlen, 0, sig, len), DSIG_E_VERIFY);
    msg[77] ^= 1;
    for (size_t pos = 0; pos < len; pos += 131) {
        sig[pos] ^= 0x10;
        assert_int_equal(tu_verify_chunked(alg, pub, msg, mlen, 0, sig, len), DSIG_E_VERIFY);
        sig[pos] ^= 0x10;
    }
    assert_int_equal(tu_verify_chunked(alg, pub, msg, mlen, 0, sig, len - 1), DSIG_E_VERIFY);
    /* The signature is a DSig signature on BLAKE3(payload) in the file domain: the runtime's slow path
     * (same parameter set, batch of one) refuses it under any signer id, and the scheme's slow path
     * accepts it only in the file domain. */
    uint8_t digest[32];
    dsig_blake3(msg, mlen, digest, sizeof digest);
    dsig_hybrid_params *p1;
    assert_int_equal(dsig_hybrid_params_with_batch(&p1, NULL, 0), DSIG_OK);
    for (uint64_t id = 0; id < 3; id++)
        assert_int_equal(dsig_hybrid_verify_slow(p1, pub, id, digest, sizeof digest, sig, len), DSIG_E_VERIFY);
    dsig_hb_who who = {.domain = DSIG_HB_DOMAIN_FILE, .signer_id = 0};
    assert_int_equal(dsig_hb_key_public(pub, NULL, who.root_pk), DSIG_OK);
    assert_int_equal(dsig_hb_verify_slow(p1, sig, len, digest, sizeof digest, &who), DSIG_OK);
    who.domain = DSIG_HB_DOMAIN_RUNTIME;
    assert_int_equal(dsig_hb_verify_slow(p1, sig, len, digest, sizeof digest, &who), DSIG_E_VERIFY);
    dsig_hybrid_params_free(p1);
    /* Another DSig key: rejected. */
    dsig_key *k2 = NULL;
    assert_int_equal(dsig_key_generate(&k2, alg, NULL), DSIG_OK);
    assert_int_equal(tu_verify_chunked(alg, k2, msg, mlen, 0, sig, len), DSIG_E_VERIFY);
    dsig_key_free(k2);
    free(msg);
    dsig_key_free(k);
    dsig_key_free(pub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_and_slow),
        cmocka_unit_test(test_bad_batch_dropped),
        cmocka_unit_test(test_eviction),
        cmocka_unit_test(test_equivocation),
        cmocka_unit_test(test_hint_groups),
        cmocka_unit_test(test_nonblocking_and_unique),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_channel),
        cmocka_unit_test(test_registry_kat),
        cmocka_unit_test(test_registry_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
