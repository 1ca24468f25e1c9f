/*
 * tests/hybrid/test_verifier_state.c — what a verifier remembers, under restarts and replays (no
 * threads: every step deterministic):
 *   - a signer restarted under the same id and key (default options) never reuses a batch sequence
 *     number: the verifier with the old batch cached accepts the new signatures, convicts no one;
 *   - a signature whose sequence number is cached with another root takes the slow path (not the fast
 *     path's rejection), can_verify_fast says 0 for it, and — both halves validly signed — it convicts
 *     the signer (ROOT evidence); the same root signed again with another nonce convicts no one;
 *   - the per-signer sequence floor: replayed old batch messages are refused as stale and evict
 *     nothing; evidence outlives the eviction of the batches it cites; replayed evidence adds nothing;
 *   - evidence records are bounded per signer and in all, the detections still counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/runtime.h"
#include "testutil.h"

/* A deterministic DSig key (public part in *pub). */
static dsig_key *dsig_test_key(uint8_t tag, dsig_key **pub)
{
    uint8_t seed[32];
    memset(seed, tag, sizeof seed);
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("DSig"), &kp), DSIG_OK);
    assert_int_equal(dsig_key_public(pub, k), DSIG_OK);
    return k;
}

static dsig_hybrid_verifier *inline_verifier(const dsig_hybrid_params *p, unsigned evidence_max)
{
    dsig_hybrid_verifier_options vo;
    dsig_hybrid_verifier_options_default(&vo);
    vo.threads = 0;
    vo.evidence_max = evidence_max;
    dsig_hybrid_verifier *v;
    assert_int_equal(dsig_hybrid_verifier_new(&v, p, &vo), DSIG_OK);
    return v;
}

/* A signer without threads that keeps its batch messages (first_seq 0 = the default). */
static dsig_hybrid_signer *quiet_signer(const dsig_key *k, uint64_t id, uint64_t first_seq)
{
    dsig_hybrid_signer_options so;
    dsig_hybrid_signer_options_default(&so);
    so.threads = 0;
    so.signer_id = id;
    so.outbox = 8;
    so.first_seq = first_seq;
    so.pool_target = 128;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &so), DSIG_OK);
    return s;
}

/* Sign msg and give its batch message(s) to v; returns the signature's sequence number. */
static uint64_t sign_and_publish(dsig_hybrid_signer *s, dsig_hybrid_verifier *v, uint64_t id, const char *msg,
                                 uint8_t *sig, size_t *sl, int *batch_rc)
{
    assert_int_equal(dsig_hybrid_sign(s, (const uint8_t *)msg, strlen(msg), sig, 2048, sl), DSIG_OK);
    uint8_t bm[8192];
    size_t bl;
    while (dsig_hybrid_signer_next_batch(s, bm, sizeof bm, &bl) == DSIG_OK)
        *batch_rc = dsig_hybrid_verifier_receive_batch(v, id, bm, bl);
    uint64_t seq;
    uint32_t idx;
    assert_int_equal(dsig_hybrid_sig_locate(NULL, sig, *sl, &seq, &idx), DSIG_OK);
    return seq;
}

/* Restart with default options: new seqs, accepted, nobody convicted. Forced reuse of a seq (what
 * a default of 0 used to do): the slow path decides, and the signer is convicted with both halves. */
static void test_restart(void **state)
{
    (void)state;
    dsig_key *pub, *k = dsig_test_key(1, &pub);
    dsig_hybrid_verifier *v = inline_verifier(NULL, 0);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 5, pub), DSIG_OK);
    uint8_t s1[2048], s2[2048], s3[2048];
    size_t l1, l2, l3;
    int brc = -99;

    dsig_hybrid_signer *a = quiet_signer(k, 5, 0);
    uint64_t seq1 = sign_and_publish(a, v, 5, "before the restart", s1, &l1, &brc);
    assert_int_equal(brc, DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 5, (const uint8_t *)"before the restart", 18, s1, l1), DSIG_OK);
    dsig_hybrid_signer_free(a);

    /* The process restarts: a new signer, same key and id, default options. */
    dsig_hybrid_signer *b = quiet_signer(k, 5, 0);
    assert_int_equal(dsig_hybrid_sign(b, (const uint8_t *)"after", 5, s2, sizeof s2, &l2), DSIG_OK);
    uint64_t seq2, dummy;
    uint32_t idx;
    assert_int_equal(dsig_hybrid_sig_locate(NULL, s2, l2, &seq2, &idx), DSIG_OK);
    assert_true(seq2 > seq1);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 5, s2, l2), 0);
    assert_int_equal(dsig_hybrid_verify(v, 5, (const uint8_t *)"after", 5, s2, l2), DSIG_OK); /* slow */
    uint8_t bm[8192];
    size_t bl;
    assert_int_equal(dsig_hybrid_signer_next_batch(b, bm, sizeof bm, &bl), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 5, bm, bl), DSIG_OK);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 5, s2, l2), 1);
    assert_int_equal(dsig_hybrid_verify(v, 5, (const uint8_t *)"after", 5, s2, l2), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 5, (const uint8_t *)"before the restart", 18, s1, l1), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 0);
    dsig_hybrid_signer_free(b);

    /* A signer that does reuse seq1 (an explicit first_seq): its signature is not the cached batch's,
     * so can_verify_fast says 0 and the slow path decides: valid, under another root for seq1 — two
     * validly signed roots under one seq, which convicts the signer (ROOT evidence). */
    dsig_hybrid_signer *c = quiet_signer(k, 5, seq1);
    assert_int_equal(dsig_hybrid_sign(c, (const uint8_t *)"reused", 6, s3, sizeof s3, &l3), DSIG_OK);
    assert_int_equal(dsig_hybrid_sig_locate(NULL, s3, l3, &dummy, &idx), DSIG_OK);
    assert_int_equal(dummy, seq1);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 5, s3, l3), 0);
    dsig_hybrid_verifier_stats st0, st1;
    dsig_hybrid_verifier_stats_get(v, &st0);
    assert_int_equal(dsig_hybrid_verify(v, 5, (const uint8_t *)"reused", 6, s3, l3), DSIG_E_EQUIVOCATION);
    dsig_hybrid_verifier_stats_get(v, &st1);
    assert_int_equal(st1.slow, st0.slow + 1);
    assert_int_equal(st1.fast, st0.fast);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 1);
    const dsig_hybrid_evidence *ev;
    assert_int_equal(dsig_hybrid_verifier_evidence(v, 0, &ev), DSIG_OK);
    assert_int_equal(ev->kind, DSIG_HYBRID_EQUIV_ROOT);
    assert_int_equal(ev->batch_seq, seq1);
    assert_null(ev->msg1);
    assert_memory_equal(ev->msg2, "reused", 6);
    assert_int_equal(dsig_hybrid_verify_slow(NULL, pub, 5, ev->msg2, ev->msg2_len, ev->sig2, ev->sig2_len), DSIG_OK);
    dsig_hybrid_verifier *w = inline_verifier(NULL, 0); /* the first half: a validly signed batch */
    assert_int_equal(dsig_hybrid_verifier_add_signer(w, 5, pub), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(w, 5, ev->sig1, ev->sig1_len), DSIG_OK);
    assert_int_equal(dsig_hybrid_can_verify_fast(w, 5, s1, l1), 1);
    dsig_hybrid_verifier_free(w);
    /* Again: still equivocation, no second record; a wrong message: just invalid. */
    assert_int_equal(dsig_hybrid_verify(v, 5, (const uint8_t *)"reused", 6, s3, l3), DSIG_E_EQUIVOCATION);
    assert_int_equal(dsig_hybrid_verify(v, 5, (const uint8_t *)"reuseD", 6, s3, l3), DSIG_E_VERIFY);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 1);
    dsig_hybrid_signer_free(c);
    dsig_hybrid_verifier_free(v);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* Batches of 2 keys under seq first.. for key k, signer id `id`, made with the scheme (so that a test
 * can sign twice with one key: an equivocating signer). */
static void make_batches(const dsig_hb_params *p, const dsig_key *k, uint64_t id, uint8_t mtag, uint64_t first,
                         unsigned count, dsig_hb_batch *out, uint8_t *msgs)
{
    dsig_ed25519_dkey root;
    assert_int_equal(dsig_hb_key_root_secret(k, &root), DSIG_OK);
    dsig_hb_who who = {.domain = DSIG_HB_DOMAIN_RUNTIME, .signer_id = id};
    memcpy(who.root_pk, root.pk, 32);
    uint8_t master[32];
    memset(master, mtag, sizeof master);
    for (unsigned i = 0; i < count; i++) {
        assert_int_equal(dsig_hb_keygen_batch(p, master, first + i, &root, &who, &out[i]), DSIG_OK);
        assert_int_equal(dsig_hb_batch_message(&out[i], msgs + (size_t)i * p->batch_msg_bytes, p->batch_msg_bytes,
                                               NULL), DSIG_OK);
    }
    dsig_memzero(&root, sizeof root);
}

/* The sequence floor and evidence that survives: replays of old batch messages and of evidence. */
static void test_floor_and_replays(void **state)
{
    (void)state;
    dsig_hybrid_params *hp;
    assert_int_equal(dsig_hybrid_params_with_batch(&hp, NULL, 1), DSIG_OK);
    const dsig_hb_params *p = hp;
    enum { NB = 96 };
    dsig_key *pub, *k = dsig_test_key(2, &pub);
    dsig_hb_batch *b = calloc(NB, sizeof *b), rival;
    uint8_t *bm = malloc((size_t)NB * p->batch_msg_bytes), *rm = malloc(p->batch_msg_bytes);
    make_batches(p, k, 9, 0x11, 1000, NB, b, bm);
    make_batches(p, k, 9, 0x22, 1063, 1, &rival, rm); /* another root under seq 1063 */
    dsig_hybrid_verifier *v = inline_verifier(hp, 0);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 9, pub), DSIG_OK);
#define BM(i) (bm + (size_t)(i) * p->batch_msg_bytes)
    for (int i = 32; i < 64; i++) /* the cache holds seqs 1032..1063 */
        assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 9, BM(i), p->batch_msg_bytes), DSIG_OK);

    /* Equivocation on batch 1063 leaf 0, and a second, rival batch for 1063. */
    uint8_t s1[2048], s2[2048], sx[2048];
    size_t l1, l2, lx;
    assert_int_equal(dsig_hb_sign(&b[63].keys[0], (const uint8_t *)"m1", 2, s1, sizeof s1, &l1), DSIG_OK);
    assert_int_equal(dsig_hb_sign(&b[63].keys[0], (const uint8_t *)"m2", 2, s2, sizeof s2, &l2), DSIG_OK);
    assert_int_equal(dsig_hb_sign(&b[32].keys[1], (const uint8_t *)"x", 1, sx, sizeof sx, &lx), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 9, (const uint8_t *)"m1", 2, s1, l1), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 9, (const uint8_t *)"m2", 2, s2, l2), DSIG_E_EQUIVOCATION);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 9, rm, p->batch_msg_bytes), DSIG_E_EQUIVOCATION);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 2);

    /* Replay the 32 older batch messages: stale, nothing evicted, the cache and the records intact. */
    for (int i = 0; i < 32; i++)
        assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 9, BM(i), p->batch_msg_bytes), DSIG_E_STALE);
    dsig_hybrid_verifier_stats st;
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.batches_stale, 32);
    assert_int_equal(st.batches_evicted, 0);
    assert_int_equal(st.batches_cached, 32);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 9, sx, lx), 1);
    /* Replayed evidence: the second signature, the rival batch — no new record. */
    for (int i = 0; i < 50; i++) {
        assert_int_equal(dsig_hybrid_verify(v, 9, (const uint8_t *)"m2", 2, s2, l2), DSIG_E_EQUIVOCATION);
        assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 9, rm, p->batch_msg_bytes), DSIG_E_EQUIVOCATION);
    }
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 2);

    /* 32 newer batches push every cited batch out; the floor is 1063; the records stay. */
    for (int i = 64; i < NB; i++)
        assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 9, BM(i), p->batch_msg_bytes), DSIG_OK);
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.batches_evicted, 32);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 2);
    const dsig_hybrid_evidence *ev;
    assert_int_equal(dsig_hybrid_verifier_evidence(v, 0, &ev), DSIG_OK);
    assert_int_equal(ev->kind, DSIG_HYBRID_EQUIV_LEAF);
    assert_int_equal(dsig_hybrid_verify_slow(hp, pub, 9, ev->msg1, ev->msg1_len, ev->sig1, ev->sig1_len), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify_slow(hp, pub, 9, ev->msg2, ev->msg2_len, ev->sig2, ev->sig2_len), DSIG_OK);
    /* Now everything at or below 1063 is stale, the rival and the originals alike. */
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 9, rm, p->batch_msg_bytes), DSIG_E_STALE);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 9, BM(63), p->batch_msg_bytes), DSIG_E_STALE);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 9, BM(40), p->batch_msg_bytes), DSIG_E_STALE);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 9, sx, lx), 0);
    assert_int_equal(dsig_hybrid_verify(v, 9, (const uint8_t *)"x", 1, sx, lx), DSIG_OK); /* slow */
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 2);
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.equivocations, 2);
#undef BM
    for (int i = 0; i < NB; i++)
        dsig_hb_batch_free(&b[i]);
    dsig_hb_batch_free(&rival);
    free(b);
    free(bm);
    free(rm);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_params_free(hp);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* A signature whose root signature differs from the cached batch's but signs the same root (a signer
 * may sign one root message twice with other nonces): valid on the slow path, and no equivocation —
 * the batch is the same. */
static void test_same_root_resigned(void **state)
{
    (void)state;
    dsig_hybrid_params *hp;
    assert_int_equal(dsig_hybrid_params_with_batch(&hp, NULL, 2), DSIG_OK);
    const dsig_hb_params *p = hp;
    dsig_key *pub, *k = dsig_test_key(6, &pub);
    dsig_hb_batch b;
    uint8_t *bm = malloc(p->batch_msg_bytes), sig[2048], rm[DSIG_HB_ROOT_MSG_BYTES], other[64];
    make_batches(p, k, 8, 0x44, 700, 1, &b, bm);
    dsig_hybrid_verifier *v = inline_verifier(hp, 0);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 8, pub), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 8, bm, p->batch_msg_bytes), DSIG_OK);
    size_t sl;
    assert_int_equal(dsig_hb_sign(&b.keys[2], (const uint8_t *)"m", 1, sig, sizeof sig, &sl), DSIG_OK);
    /* The same root message signed again with another nonce key: another valid signature. */
    dsig_ed25519_dkey root;
    assert_int_equal(dsig_hb_key_root_secret(k, &root), DSIG_OK);
    dsig_hb_root_message(p, &b.who, b.batch_seq, b.root, rm);
    root.prefix[0] ^= 1;
    assert_int_equal(dsig_ed25519_dkey_sign(&root, rm, sizeof rm, other), DSIG_OK);
    dsig_memzero(&root, sizeof root);
    assert_memory_not_equal(other, b.root_sig, 64);
    memcpy(sig + sl - 64, other, 64);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 8, sig, sl), 0);
    assert_int_equal(dsig_hybrid_verify(v, 8, (const uint8_t *)"m", 1, sig, sl), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 0);
    dsig_hybrid_verifier_stats st;
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.slow, 1);
    assert_int_equal(st.equivocations, 0);
    dsig_hb_batch_free(&b);
    free(bm);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_params_free(hp);
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* Equivocate on `n` leaves of one batch (batch size 32) of signer `id`. */
static void equivocate(dsig_hybrid_verifier *v, const dsig_hb_params *p, const dsig_key *k, uint64_t id, unsigned n)
{
    dsig_hb_batch b;
    uint8_t *bm = malloc(p->batch_msg_bytes), s[2048];
    size_t sl;
    make_batches(p, k, id, 0x33, 5000, 1, &b, bm);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, id, bm, p->batch_msg_bytes), DSIG_OK);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(dsig_hb_sign(&b.keys[i], (const uint8_t *)"a", 1, s, sizeof s, &sl), DSIG_OK);
        assert_int_equal(dsig_hybrid_verify(v, id, (const uint8_t *)"a", 1, s, sl), DSIG_OK);
        assert_int_equal(dsig_hb_sign(&b.keys[i], (const uint8_t *)"b", 1, s, sizeof s, &sl), DSIG_OK);
        assert_int_equal(dsig_hybrid_verify(v, id, (const uint8_t *)"b", 1, s, sl), DSIG_E_EQUIVOCATION);
    }
    dsig_hb_batch_free(&b);
    free(bm);
}

/* Evidence records: at most DSIG_HYBRID_EVIDENCE_PER_SIGNER per signer and evidence_max in all. */
static void test_evidence_bounds(void **state)
{
    (void)state;
    dsig_hybrid_params *hp;
    assert_int_equal(dsig_hybrid_params_with_batch(&hp, NULL, 5), DSIG_OK);
    dsig_key *pa, *ka = dsig_test_key(3, &pa), *pb, *kb = dsig_test_key(4, &pb);
    dsig_hybrid_verifier *v = inline_verifier(hp, 20);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 1, pa), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 2, pb), DSIG_OK);
    equivocate(v, hp, ka, 1, 20);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), DSIG_HYBRID_EVIDENCE_PER_SIGNER);
    equivocate(v, hp, kb, 2, 10);
    assert_int_equal(dsig_hybrid_verifier_evidence_count(v), 20); /* 16 + 4: the total bound */
    dsig_hybrid_verifier_stats st;
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.equivocations, 30);
    assert_int_equal(st.evidence_dropped, 10);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_params_free(hp);
    dsig_key_free(ka);
    dsig_key_free(pa);
    dsig_key_free(kb);
    dsig_key_free(pb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_floor_and_replays),
        cmocka_unit_test(test_same_root_resigned),
        cmocka_unit_test(test_evidence_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
