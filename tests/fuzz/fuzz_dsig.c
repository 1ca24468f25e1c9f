/*
 * Fuzz target: DSig hybrid signatures (src/hybrid/). One entry point; the input is
 *
 *   byte 0   target: bits 0-1 = 0 scheme signature (dsig_hb_parse / _sig_locate / _verify_fast /
 *            _verify_slow / _verify_leaf against a real cached batch), 1 batch wire message
 *            (dsig_hb_batch_verify and the runtime receive path with threads = 0), 2 public runtime
 *            (dsig_hybrid_verify fast and slow signers, dsig_hybrid_verify_slow), 3 registry "DSig"
 *            (dsig_verify, one-shot and streamed); bit 2 = patch mode (see below), else raw
 *   byte 1   parameter preset (index modulo the preset count; ignored by the registry target)
 *   byte 2   selector: bits 0-1 message (4 fixed messages: empty, 4 B, 32 B, 100 B — both digest
 *            paths), bits 2-3 verification path (3 = every path plus cross-checks), bits 4-5 which
 *            known-valid object a patch applies to
 *   rest     raw mode: the signature / batch message itself; patch mode: 5-byte edits
 *            (op, 24-bit offset, value) applied to a known-valid object — how the 64 KiB HORS t=4096
 *            signatures are reached within the input bound
 *
 * Known-valid objects are made once from fixed seeds: for each preset a batch (batch_seq 1000 + i),
 * one signature of message j by leaf kidx[j] (each one-time key signs ONE message: two would let
 * anyone forge legitimately), the batch message, its verified (cached) form, a runtime verifier that
 * has the batch (signer 1) and one that never gets it (signer 1 too: a key has one id).
 *
 * Invariants (abort on violation):
 *   - no path ever accepts a (message, signature) that is not byte-identical to a known valid one
 *     (the leaf-only path: identical over the bytes it covers: all but batch_seq, proof, root sig);
 *     a batch message is accepted only if byte-identical to the real one — anything else is a forgery;
 *   - every known-valid object is accepted on every path (completeness);
 *   - results are DSIG_OK or DSIG_E_VERIFY (DSIG_E_FORMAT for a wrong batch length at receive);
 *     never equivocation (it would need a second valid signature under one key or root);
 *   - can_verify_fast is exact: 1 iff the signature carries the cached batch's seq, proof and root
 *     signature;
 *   - fast acceptance implies slow and leaf acceptance; slow acceptance for the cached batch
 *     sequence number implies fast acceptance; parse and locate agree.
 * Work per input is bounded: inputs over FUZZ_DSIG_MAX_INPUT bytes are rejected first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "fuzz_common.h"
#include "hash/blake3.h"
#include "hybrid/hb_internal.h"
#include "hybrid/runtime.h"

#define FD_NMSG 4
#define FD_MAX_PRESETS 16
#define FD_PATCH_GROW 64 /* patch mode may insert this many bytes past the base object */

typedef struct fd_preset {
    const dsig_hb_params *p;
    uint8_t *sig[FD_NMSG]; /* sig[j]: message j signed with leaf kidx[j] */
    uint32_t kidx[FD_NMSG];
    uint8_t *bmsg;         /* the batch message */
    dsig_hb_batch cached;  /* its verified form (dsig_hb_batch_verify) */
    dsig_hybrid_verifier *v; /* signer 1 has the batch cached (fast path) */
    dsig_hybrid_verifier *vslow; /* signer 1 without the batch (slow path) */
} fd_preset;

static struct {
    int ready;
    dsig_ed25519_dkey root;    /* root key of edkey */
    dsig_hb_who who;           /* runtime domain, signer 1 */
    dsig_key *edkey, *edpub;   /* DSig key behind every batch */
    const dsig_alg *alg;       /* registry "DSig" */
    dsig_key *algkey, *algpub; /* DSig key of the registry signatures */
    uint8_t *asig[FD_NMSG];    /* registry signature of message j (fixed master seed j) */
    size_t asig_len;
    size_t np;
    fd_preset pr[FD_MAX_PRESETS];
    uint8_t msg[FD_NMSG][100];
    size_t msg_len[FD_NMSG];
} S;

/* Per target: inputs run, inputs that passed the format checks (exact length, version, parameter id,
 * index), inputs some path accepted (all of them known-valid). Printed by fuzz_dsig_free. */
static unsigned long st_inputs[4], st_parsed[4], st_accepted[4];

/* A deterministic DSig key, and its public half. */
static void make_key(const dsig_alg *alg, uint8_t tag, dsig_key **k, dsig_key **pub)
{
    uint8_t seed[32];
    memset(seed, tag, sizeof seed);
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    FUZZ_CHECK(alg && dsig_key_generate(k, alg, &kp) == DSIG_OK, "Ed25519 key generation");
    FUZZ_CHECK(dsig_key_public(pub, *k) == DSIG_OK, "public key");
}

/* One preset's batch, signatures, batch message, cached batch and runtime verifier. */
static void init_preset(fd_preset *P, const dsig_hb_params *p, uint64_t seq)
{
    uint8_t master[DSIG_HB_SEED_BYTES];
    memset(master, 0x5a, sizeof master);
    master[0] = (uint8_t)seq;
    P->p = p;
    dsig_hb_batch b;
    FUZZ_CHECK(dsig_hb_keygen_batch(p, master, seq, &S.root, &S.who, &b) == DSIG_OK, "keygen %s", p->name);
    const uint32_t kidx[FD_NMSG] = {0, 1, p->batch / 2, p->batch - 1};
    for (int j = 0; j < FD_NMSG; j++) {
        size_t sl = 0;
        P->kidx[j] = kidx[j];
        P->sig[j] = malloc(p->sig_bytes);
        FUZZ_CHECK(P->sig[j] && dsig_hb_sign(&b.keys[kidx[j]], S.msg[j], S.msg_len[j], P->sig[j], p->sig_bytes,
                                           &sl) == DSIG_OK && sl == p->sig_bytes,
                 "sign %s", p->name);
        dsig_hb_key_erase(&b.keys[kidx[j]]); /* one message per one-time key */
    }
    size_t bl = 0;
    P->bmsg = malloc(p->batch_msg_bytes);
    FUZZ_CHECK(P->bmsg && dsig_hb_batch_message(&b, P->bmsg, p->batch_msg_bytes, &bl) == DSIG_OK, "batch message");
    dsig_hb_batch_free(&b);
    FUZZ_CHECK(dsig_hb_batch_verify(p, P->bmsg, bl, &S.who, &P->cached) == DSIG_OK, "batch verify %s", p->name);

    dsig_hybrid_verifier_options vo;
    dsig_hybrid_verifier_options_default(&vo);
    vo.threads = 0;
    FUZZ_CHECK(dsig_hybrid_verifier_new(&P->v, p, &vo) == DSIG_OK, "verifier");
    FUZZ_CHECK(dsig_hybrid_verifier_add_signer(P->v, 1, S.edpub) == DSIG_OK, "add signer 1");
    FUZZ_CHECK(dsig_hybrid_verifier_add_signer(P->v, 2, S.edpub) == DSIG_E_ARG, "one key under two ids");
    FUZZ_CHECK(dsig_hybrid_verifier_new(&P->vslow, p, &vo) == DSIG_OK, "verifier");
    FUZZ_CHECK(dsig_hybrid_verifier_add_signer(P->vslow, 1, S.edpub) == DSIG_OK, "add signer 1");
    FUZZ_CHECK(dsig_hybrid_verifier_receive_batch(P->v, 1, P->bmsg, bl) == DSIG_OK, "receive batch");
}

/* Build every known-valid object once (fixed seeds: the corpus and the oracle are deterministic). */
static void fd_init(void)
{
    if (S.ready)
        return;
    S.ready = 1;
    FUZZ_CHECK(sodium_init() >= 0, "libsodium");
    for (int j = 0; j < FD_NMSG; j++) {
        static const size_t lens[FD_NMSG] = {0, 4, 32, 100};
        S.msg_len[j] = lens[j];
        for (size_t i = 0; i < lens[j]; i++)
            S.msg[j][i] = (uint8_t)(0x30 + 7 * i + 13 * (size_t)j);
    }
    make_key(dsig_alg_by_name("DSig"), 0x42, &S.edkey, &S.edpub);
    FUZZ_CHECK(dsig_hb_key_root_secret(S.edkey, &S.root) == DSIG_OK, "root key");
    S.who.domain = DSIG_HB_DOMAIN_RUNTIME;
    S.who.signer_id = 1;
    memcpy(S.who.root_pk, S.root.pk, 32);
    for (size_t i = 0; dsig_hb_presets[i] && S.np < FD_MAX_PRESETS; i++, S.np++)
        init_preset(&S.pr[S.np], dsig_hb_presets[i], 1000 + i);

    S.alg = dsig_alg_by_name("DSig");
    make_key(S.alg, 0x43, &S.algkey, &S.algpub);
    dsig_ed25519_dkey ask;
    FUZZ_CHECK(dsig_hb_key_root_secret(S.algkey, &ask) == DSIG_OK, "DSig root key");
    S.asig_len = dsig_alg_sig_max(S.alg);
    for (int j = 0; j < FD_NMSG; j++) {
        uint8_t master[DSIG_HB_SEED_BYTES], digest[32];
        size_t sl = 0;
        memset(master, 0xa0 + j, sizeof master);
        dsig_blake3(S.msg[j], S.msg_len[j], digest, sizeof digest);
        S.asig[j] = malloc(S.asig_len);
        FUZZ_CHECK(S.asig[j] && dsig_hb_alg_sign_digest(master, &ask, digest, S.asig[j], S.asig_len, &sl) ==
                                  DSIG_OK && sl == S.asig_len,
                 "registry signature");
    }
    sodium_memzero(&ask, sizeof ask);
}

/* Free every known object (the CTest driver calls it, so that LeakSanitizer sees a clean exit). */
void fuzz_dsig_free(void)
{
    if (!S.ready)
        return;
    static const char *const names[4] = {"scheme", "batch", "runtime", "registry"};
    for (int t = 0; t < 4; t++)
        printf("fuzz_dsig: %-8s %7lu inputs, %7lu well-formed, %6lu accepted (each byte-identical to a valid one)\n",
               names[t], st_inputs[t], st_parsed[t], st_accepted[t]);
    for (size_t i = 0; i < S.np; i++) {
        fd_preset *P = &S.pr[i];
        for (int j = 0; j < FD_NMSG; j++)
            free(P->sig[j]);
        free(P->bmsg);
        dsig_hb_batch_free(&P->cached);
        dsig_hybrid_verifier_free(P->v);
        dsig_hybrid_verifier_free(P->vslow);
    }
    for (int j = 0; j < FD_NMSG; j++)
        free(S.asig[j]);
    dsig_key_free(S.edkey);
    dsig_key_free(S.edpub);
    dsig_key_free(S.algkey);
    dsig_key_free(S.algpub);
    sodium_memzero(&S, sizeof S);
}

/* DSIG_OK or DSIG_E_VERIFY, nothing else, from a verification of untrusted bytes. */
static void check_rc(int rc, const char *what)
{
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_VERIFY, "%s returned %d (%s)", what, rc, dsig_last_error_detail());
}

/* Target 0: the pure scheme's parse and verification paths against the cached batch. */
static void fuzz_scheme(fd_preset *P, unsigned sel, const uint8_t *sig, size_t len)
{
    const dsig_hb_params *p = P->p;
    const unsigned m = sel & 3, path = (sel >> 2) & 3;
    const uint8_t *msg = S.msg[m];
    const size_t ml = S.msg_len[m];
    const int known = len == p->sig_bytes && memcmp(sig, P->sig[m], len) == 0;
    /* Bytes the leaf-only path covers: version, parameter id (parse), index, pk_seed, nonce, values —
     * not the batch sequence number, the proof nor the root signature. */
    const size_t cov_hi = HB_OFF_VALUES + (size_t)p->chains * p->n;
    const int leaf_known = len == p->sig_bytes && memcmp(sig, P->sig[m], HB_OFF_SEQ) == 0 &&
                           memcmp(sig + HB_OFF_INDEX, P->sig[m] + HB_OFF_INDEX, cov_hi - HB_OFF_INDEX) == 0;

    dsig_hb_sig_view v;
    memset(&v, 0, sizeof v);
    int rp = dsig_hb_parse(p, sig, len, &v);
    check_rc(rp, "dsig_hb_parse");
    if (rp == DSIG_OK) {
        st_parsed[0]++;
        FUZZ_CHECK(v.index < p->batch && v.param_id == p->id, "parse accepted index %u / id %08x", v.index,
                 v.param_id);
        FUZZ_CHECK(v.pk_seed == sig + HB_OFF_PKSEED && v.values == sig + HB_OFF_VALUES &&
                     v.root_sig + DSIG_HB_ED25519_SIG == sig + len &&
                     v.proof + (size_t)p->log_batch * 32 == v.root_sig,
                 "parse views outside the signature");
    }
    uint64_t seq = 0;
    uint32_t idx = 0;
    int rl = dsig_hb_sig_locate(p, sig, len, &seq, &idx);
    FUZZ_CHECK((rl == DSIG_OK) == (rp == DSIG_OK) && (rl != DSIG_OK || (seq == v.batch_seq && idx == v.index)),
             "parse and locate disagree");

    int rf = DSIG_E_VERIFY, rs = DSIG_E_VERIFY, rleaf = DSIG_E_VERIFY;
    if (path == 0 || path == 3) {
        rf = dsig_hb_verify_fast(p, &P->cached, sig, len, msg, ml);
        check_rc(rf, "dsig_hb_verify_fast");
        FUZZ_CHECK(rf != DSIG_OK || known, "FORGERY: fast path accepted an unknown signature (%s, msg %u)", p->name, m);
        FUZZ_CHECK(rf == DSIG_OK || !known, "fast path rejected a valid signature (%s, msg %u): %s", p->name, m,
                 dsig_last_error_detail());
    }
    if (path == 1 || path == 3) {
        rs = dsig_hb_verify_slow(p, sig, len, msg, ml, &S.who);
        check_rc(rs, "dsig_hb_verify_slow");
        FUZZ_CHECK(rs != DSIG_OK || known, "FORGERY: slow path accepted an unknown signature (%s, msg %u)", p->name, m);
        FUZZ_CHECK(rs == DSIG_OK || !known, "slow path rejected a valid signature (%s, msg %u): %s", p->name, m,
                 dsig_last_error_detail());
    }
    if (path == 2 || path == 3) {
        const uint8_t *expect = P->cached.nodes[rp == DSIG_OK ? v.index : 0];
        rleaf = dsig_hb_verify_leaf(p, sig, len, msg, ml, expect);
        check_rc(rleaf, "dsig_hb_verify_leaf");
        FUZZ_CHECK(rleaf != DSIG_OK || leaf_known, "FORGERY: leaf path accepted an unknown one-time signature (%s, msg %u)",
                 p->name, m);
        FUZZ_CHECK(rleaf == DSIG_OK || !leaf_known, "leaf path rejected a valid one-time signature (%s, msg %u): %s",
                 p->name, m, dsig_last_error_detail());
    }
    if (rf == DSIG_OK || rs == DSIG_OK || rleaf == DSIG_OK)
        st_accepted[0]++;
    if (path == 3) {
        FUZZ_CHECK(rf != DSIG_OK || (rs == DSIG_OK && rleaf == DSIG_OK), "fast accepted what slow/leaf reject");
        FUZZ_CHECK(rs != DSIG_OK || v.batch_seq != P->cached.batch_seq || rf == DSIG_OK,
                 "slow accepted a signature of the cached batch that fast rejects");
    }
}

/* Target 1: the batch wire message, through the scheme and through the runtime's receive path. */
static void fuzz_batch(fd_preset *P, unsigned sel, const uint8_t *bm, size_t len)
{
    const dsig_hb_params *p = P->p;
    const unsigned path = (sel >> 2) & 3;
    const int known = len == p->batch_msg_bytes && memcmp(bm, P->bmsg, len) == 0;
    st_parsed[1] += len == p->batch_msg_bytes && bm[0] == DSIG_HB_VERSION && dsig_load_le32(bm + 1) == p->id;
    if (path != 1) {
        dsig_hb_batch b;
        int rc = dsig_hb_batch_verify(p, bm, len, &S.who, &b);
        check_rc(rc, "dsig_hb_batch_verify");
        st_accepted[1] += rc == DSIG_OK;
        FUZZ_CHECK(rc != DSIG_OK || known, "FORGERY: batch message accepted but differs from the real one (%s)", p->name);
        FUZZ_CHECK(rc == DSIG_OK || !known, "real batch message rejected (%s): %s", p->name, dsig_last_error_detail());
        if (rc == DSIG_OK) {
            FUZZ_CHECK(memcmp(b.root, P->cached.root, 32) == 0 && b.batch_seq == P->cached.batch_seq && !b.keys,
                     "accepted batch has another root");
            dsig_hb_batch_free(&b);
        } else {
            FUZZ_CHECK(b.nodes == NULL && b.params == NULL, "rejected batch not left zeroed");
        }
    }
    if (path != 0) {
        /* A fresh verifier: the mutated message first, then the real one, then a known signature. */
        dsig_hybrid_verifier_options vo;
        dsig_hybrid_verifier_options_default(&vo);
        vo.threads = 0;
        dsig_hybrid_verifier *v;
        FUZZ_CHECK(dsig_hybrid_verifier_new(&v, p, &vo) == DSIG_OK, "verifier");
        FUZZ_CHECK(dsig_hybrid_verifier_add_signer(v, 1, S.edpub) == DSIG_OK, "add signer");
        int rc = dsig_hybrid_verifier_receive_batch(v, 1, bm, len);
        if (len != p->batch_msg_bytes)
            FUZZ_CHECK(rc == DSIG_E_FORMAT, "receive_batch of %zu bytes returned %d", len, rc);
        else
            check_rc(rc, "dsig_hybrid_verifier_receive_batch");
        st_accepted[1] += path == 1 && rc == DSIG_OK;
        FUZZ_CHECK(rc != DSIG_OK || known, "FORGERY: runtime cached a batch message that differs from the real one (%s)",
                 p->name);
        FUZZ_CHECK(dsig_hybrid_verifier_receive_batch(v, 1, P->bmsg, p->batch_msg_bytes) == DSIG_OK,
                 "real batch rejected after a mutated one: %s", dsig_last_error_detail());
        FUZZ_CHECK(dsig_hybrid_verifier_evidence_count(v) == 0, "equivocation evidence from one real batch");
        FUZZ_CHECK(dsig_hybrid_can_verify_fast(v, 1, P->sig[0], p->sig_bytes) == 1, "real batch not cached");
        FUZZ_CHECK(dsig_hybrid_verify(v, 1, S.msg[0], S.msg_len[0], P->sig[0], p->sig_bytes) == DSIG_OK,
                 "valid signature rejected on the fast path: %s", dsig_last_error_detail());
        dsig_hybrid_verifier_stats st;
        dsig_hybrid_verifier_stats_get(v, &st);
        FUZZ_CHECK(st.batches_cached == 1 && st.fast == 1, "verifier stats: cached %llu fast %llu",
                 (unsigned long long)st.batches_cached, (unsigned long long)st.fast);
        dsig_hybrid_verifier_free(v);
    }
}

/* Target 2: the public runtime — a verifier with the batch cached (fast), without it (slow), and the
 * stateless dsig_hybrid_verify_slow. */
static void fuzz_runtime(fd_preset *P, unsigned sel, const uint8_t *sig, size_t len)
{
    const dsig_hb_params *p = P->p;
    const unsigned m = sel & 3, path = (sel >> 2) & 3;
    const uint8_t *msg = S.msg[m];
    const size_t ml = S.msg_len[m];
    const int known = len == p->sig_bytes && memcmp(sig, P->sig[m], len) == 0;
    struct fd_res {
        int rc;
        const char *what;
    } r[3];
    int nr = 0;
    if (path == 0 || path == 3)
        r[nr++] = (struct fd_res){dsig_hybrid_verify(P->v, 1, msg, ml, sig, len), "dsig_hybrid_verify (fast signer)"};
    if (path == 1 || path == 3)
        r[nr++] = (struct fd_res){dsig_hybrid_verify(P->vslow, 1, msg, ml, sig, len), "dsig_hybrid_verify (slow path)"};
    if (path == 2 || path == 3)
        r[nr++] = (struct fd_res){dsig_hybrid_verify_slow(p, S.edpub, 1, msg, ml, sig, len), "dsig_hybrid_verify_slow"};
    int acc = 0;
    st_parsed[2] += dsig_hb_sig_locate(p, sig, len, NULL, NULL) == DSIG_OK;
    for (int i = 0; i < nr; i++) {
        acc |= r[i].rc == DSIG_OK;
        check_rc(r[i].rc, r[i].what);
        FUZZ_CHECK(r[i].rc != DSIG_OK || known, "FORGERY: %s accepted an unknown signature (%s, msg %u)", r[i].what,
                 p->name, m);
        FUZZ_CHECK(r[i].rc == DSIG_OK || !known, "%s rejected a valid signature (%s, msg %u): %s", r[i].what, p->name,
                 m, dsig_last_error_detail());
    }
    st_accepted[2] += acc;
    if (path == 3) {
        uint64_t seq = 0;
        uint32_t idx = 0;
        int rl = dsig_hybrid_sig_locate(p, sig, len, &seq, &idx);
        check_rc(rl, "dsig_hybrid_sig_locate");
        dsig_hb_sig_view sv;
        int in_batch = rl == DSIG_OK && dsig_hb_parse(p, sig, len, &sv) == DSIG_OK &&
                       dsig_hb_sig_in_batch(p, &P->cached, &sv);
        FUZZ_CHECK(dsig_hybrid_can_verify_fast(P->v, 1, sig, len) == in_batch,
                 "can_verify_fast disagrees with the cache (exact: seq, proof and root signature)");
        FUZZ_CHECK(dsig_hybrid_can_verify_fast(P->vslow, 1, sig, len) == 0, "can_verify_fast for a signer with no batch");
        FUZZ_CHECK(dsig_hybrid_verifier_evidence_count(P->v) == 0, "equivocation evidence without a second key use");
    }
}

/* Target 3: the registry algorithm "DSig" through dsig_verify (one-shot, or streamed in pieces). */
static void fuzz_registry(unsigned sel, const uint8_t *sig, size_t len)
{
    const unsigned m = sel & 3, path = (sel >> 2) & 3;
    const uint8_t *msg = S.msg[m];
    const size_t ml = S.msg_len[m];
    const int known = len == S.asig_len && memcmp(sig, S.asig[m], len) == 0;
    int rc;
    if (path & 1) {
        dsig_verify_ctx *c;
        rc = dsig_verify_init(&c, S.alg, S.algpub, sig, len);
        if (rc == DSIG_OK) {
            size_t half = ml / 2;
            if ((rc = dsig_verify_update(c, msg, half)) == DSIG_OK &&
                (rc = dsig_verify_update(c, msg + half, 0)) == DSIG_OK &&
                (rc = dsig_verify_update(c, msg + half, ml - half)) == DSIG_OK)
                rc = dsig_verify_final(c);
            else
                dsig_verify_abort(c);
        }
    } else {
        rc = dsig_verify(S.alg, S.algpub, msg, ml, sig, len);
    }
    check_rc(rc, "dsig_verify(DSig)");
    st_parsed[3] += len == S.asig_len && sig[0] == DSIG_HB_VERSION;
    st_accepted[3] += rc == DSIG_OK;
    FUZZ_CHECK(rc != DSIG_OK || known, "FORGERY: registry DSig accepted an unknown signature (msg %u)", m);
    FUZZ_CHECK(rc == DSIG_OK || !known, "registry DSig rejected a valid signature (msg %u): %s", m, dsig_last_error_detail());
}

int fuzz_dsig_one(const uint8_t *data, size_t size)
{
    if (size < 3 || size > FUZZ_DSIG_MAX_INPUT)
        return 0; /* bounded work per input */
    fd_init();
    const unsigned target = data[0] & 3, patch = data[0] & 4, sel = data[2];
    st_inputs[target]++;
    fd_preset *P = &S.pr[data[1] % S.np];
    const uint8_t *body = data + 3;
    size_t blen = size - 3;
    uint8_t *obj;
    if (patch) {
        const uint8_t *base;
        size_t base_len;
        if (target == 1) {
            base = P->bmsg;
            base_len = P->p->batch_msg_bytes;
        } else if (target == 3) {
            base = S.asig[(sel >> 4) & 3];
            base_len = S.asig_len;
        } else {
            base = P->sig[(sel >> 4) & 3];
            base_len = P->p->sig_bytes;
        }
        uint8_t *tmp = malloc(base_len + FD_PATCH_GROW);
        FUZZ_CHECK(tmp != NULL, "out of memory");
        blen = fuzz_patch(base, base_len, body, blen, tmp, FD_PATCH_GROW);
        obj = fuzz_dup(tmp, blen);
        free(tmp);
    } else {
        obj = fuzz_dup(body, blen);
    }
    switch (target) {
    case 0:
        fuzz_scheme(P, sel, obj, blen);
        break;
    case 1:
        fuzz_batch(P, sel, obj, blen);
        break;
    case 2:
        fuzz_runtime(P, sel, obj, blen);
        break;
    default:
        fuzz_registry(sel, obj, blen);
        break;
    }
    free(obj);
    return 0;
}

/* Offset of field f (mod 8) of a signature / batch message of p: where the no-op edits of the patch
 * seeds point, so that most single mutations of an edit corrupt that field (or another). */
static size_t field_offset(const dsig_hb_params *p, unsigned target, unsigned f, size_t len)
{
    if (target == 1) {
        const size_t bo[8] = {0, 1, 5, 12, 13, 13 + 32 * (size_t)(p->batch / 2), len - 64, len - 1};
        return bo[f % 8];
    }
    const size_t vals = (size_t)(target == 3 ? 68 * DSIG_HB_WOTS_N : (size_t)p->chains * p->n);
    const size_t so[8] = {HB_OFF_PARAM, HB_OFF_SEQ, HB_OFF_INDEX, HB_OFF_PKSEED + 3, HB_OFF_NONCE + 7,
                          HB_OFF_VALUES + vals / 2, HB_OFF_VALUES + vals, len - 64 + 33};
    return so[f % 8];
}

/* Seed corpus: every known-valid object, raw where it fits the bound, as an empty patch, and as a
 * patch of two no-op edits (set a byte to its value) aimed at two of its fields. */
void fuzz_dsig_seeds(fuzz_dsig_seed_cb cb, void *arg)
{
    fd_init();
    uint8_t *buf = malloc(FUZZ_DSIG_MAX_INPUT);
    FUZZ_CHECK(buf != NULL, "out of memory");
    for (unsigned t = 0; t < 4; t++) {
        for (size_t i = 0; i < (t == 3 ? 1 : S.np); i++) {
            fd_preset *P = &S.pr[i];
            for (unsigned j = 0; j < (t == 1 ? 1u : (unsigned)FD_NMSG); j++) {
                const uint8_t *obj = t == 1 ? P->bmsg : t == 3 ? S.asig[j] : P->sig[j];
                size_t ol = t == 1 ? P->p->batch_msg_bytes : t == 3 ? S.asig_len : P->p->sig_bytes;
                buf[1] = (uint8_t)i;
                buf[2] = (uint8_t)(j | (3u << 2) | (j << 4)); /* message j, every path, base object j */
                buf[0] = (uint8_t)(t | 4);                      /* empty patch: the object itself */
                cb(arg, t, buf, 3);
                for (unsigned e = 0; e < 2; e++) {
                    size_t off = field_offset(P->p, t, (unsigned)i + j + 3 * e, ol);
                    uint8_t *ed = buf + 3 + 5 * e;
                    ed[0] = 1; /* set the byte to its own value: a no-op until mutated */
                    ed[1] = (uint8_t)off;
                    ed[2] = (uint8_t)(off >> 8);
                    ed[3] = (uint8_t)(off >> 16);
                    ed[4] = obj[off];
                }
                cb(arg, t, buf, 13);
                if (3 + ol <= FUZZ_DSIG_MAX_INPUT) {
                    buf[0] = (uint8_t)t;
                    memcpy(buf + 3, obj, ol);
                    cb(arg, t, buf, 3 + ol);
                }
            }
        }
    }
    free(buf);
}

#ifndef DSIG_FUZZ_DRIVER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_dsig_one(data, size);
}

static void seeds(void)
{
    fuzz_dsig_seeds(fuzz_seed_cb, NULL);
}

FUZZ_SEED_GENERATOR(seeds)
#endif
