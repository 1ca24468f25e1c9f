/*
 * Differential target: streaming vs one-shot signing and verification, for every registry algorithm
 * over random chunk splits (the streaming contract of docs/architecture.md: results are identical for
 * any chunking). The input is
 *
 *   byte 0   algorithm (registry index modulo the count)
 *   byte 1   bit 0: options (algorithms flagged DSIG_ALG_OPTIONS: context = the first 4 message bytes,
 *            deterministic where the algorithm has a deterministic variant), bit 1: also verify a
 *            corrupted copy of each signature (which byte and how: bits 2-7)
 *   byte 2   split seed of the streamed signing, byte 3 of the streamed verification
 *   rest     message (at most FS_MAX_MSG bytes)
 *
 * For each input: sign one-shot (dsig_sign_ex) and streamed (dsig_sign_init_ex + update over the split
 * + final) with the harness's key of that algorithm. Invariants (abort on violation):
 *   - both succeed (a stateful key that runs out is replaced) and fit dsig_alg_sig_max;
 *   - where the signature is reproducible (not DSIG_ALG_RANDOMIZED, not stateful; or deterministic
 *     options) the two are byte-identical;
 *   - each verifies one-shot and streamed over the other split; a corrupted copy (one byte changed)
 *     verifies in neither; the two verifications always return the same code.
 * Algorithms flagged DSIG_ALG_TWO_PASS (SLH-DSA: 10 ms – 10 s per signature under ASan) are not signed
 * here; their one-shot vs streamed verification is fuzz_verify's (flag bit 1), their two-pass vs
 * one-shot signing the unit tests' (tests/slhdsa_api).
 */
#include <string.h>

#include "fuzz_common.h"

#define FS_MAX_MSG 4096u

/* Sign once; a stateful key that is used up is replaced (once) and the signature retried. */
static int sign_one(size_t ai, int streamed, const uint8_t *msg, size_t ml, const dsig_sign_opts *o, uint32_t split,
                    uint8_t *sig, size_t cap, size_t *sl)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        const fuzz_alg *A = fuzz_alg_get(ai);
        int rc = streamed ? fuzz_sign_streamed(A->alg, A->key, msg, ml, o, split, sig, cap, sl)
                          : dsig_sign_ex(A->alg, A->key, msg, ml, sig, cap, sl, o);
        if (rc != DSIG_E_EXHAUSTED)
            return rc;
        fuzz_alg_renew(ai);
    }
    return DSIG_E_EXHAUSTED;
}

/* Both verifications of (msg, sig) must agree, and accept iff `valid`. */
static void check_verify(const fuzz_alg *A, const uint8_t *msg, size_t ml, const uint8_t *sig, size_t sl,
                         const dsig_sign_opts *o, uint32_t split, int valid, const char *what)
{
    int r1 = dsig_verify_ex(A->alg, A->pub, msg, ml, sig, sl, o);
    int r2 = fuzz_verify_streamed(A->alg, A->pub, msg, ml, sig, sl, o, split);
    FUZZ_CHECK(r1 == r2 && (r1 == DSIG_OK) == valid,
               "%s: %s signature: one-shot verification %d, streamed %d, expected %s (%s)", dsig_alg_name(A->alg), what,
               r1, r2, valid ? "valid" : "invalid", dsig_last_error_detail());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || size > 4 + FS_MAX_MSG)
        return 0;
    size_t ai = data[0] % fuzz_alg_count();
    const unsigned flags = data[1];
    const uint32_t split_s = data[2] | 0x100u, split_v = data[3] | 0x200u;
    const fuzz_alg *A = fuzz_alg_get(ai);
    const unsigned af = dsig_alg_flags(A->alg);
    if (af & DSIG_ALG_TWO_PASS)
        return 0;
    uint8_t *msg = fuzz_dup(data + 4, size - 4);
    const size_t ml = size - 4;
    dsig_sign_opts o = {.deterministic = 1, .context = msg, .context_len = ml < 4 ? ml : 4};
    const dsig_sign_opts *op = (flags & 1) && (af & DSIG_ALG_OPTIONS) ? &o : NULL;
    const size_t cap = dsig_alg_sig_max(A->alg);
    uint8_t *s1 = malloc(cap), *s2 = malloc(cap);
    FUZZ_CHECK(s1 && s2, "out of memory");
    size_t l1 = 0, l2 = 0;
    int r1 = sign_one(ai, 0, msg, ml, op, 0, s1, cap, &l1);
    int r2 = sign_one(ai, 1, msg, ml, op, split_s, s2, cap, &l2);
    if (op && r1 == DSIG_E_UNSUPPORTED && r2 == DSIG_E_UNSUPPORTED) { /* options, but no deterministic variant */
        o.deterministic = 0;
        r1 = sign_one(ai, 0, msg, ml, op, 0, s1, cap, &l1);
        r2 = sign_one(ai, 1, msg, ml, op, split_s, s2, cap, &l2);
    }
    A = fuzz_alg_get(ai); /* a renewed stateful key */
    FUZZ_CHECK(r1 == DSIG_OK && r2 == DSIG_OK, "%s: one-shot signing %d, streamed signing %d (%s)", dsig_alg_name(A->alg),
               r1, r2, dsig_last_error_detail());
    FUZZ_CHECK(l1 <= cap && l2 <= cap && l1 && l2, "%s: signature sizes %zu / %zu, maximum %zu", dsig_alg_name(A->alg),
               l1, l2, cap);
    const int reproducible = (!(af & (DSIG_ALG_RANDOMIZED | DSIG_ALG_STATEFUL))) || (op && o.deterministic);
    if (reproducible)
        FUZZ_CHECK(l1 == l2 && memcmp(s1, s2, l1) == 0,
                   "%s: streamed signature (split %u) differs from the one-shot signature", dsig_alg_name(A->alg),
                   split_s);
    check_verify(A, msg, ml, s1, l1, op, split_v, 1, "one-shot");
    check_verify(A, msg, ml, s2, l2, op, split_v, 1, "streamed");
    if (flags & 2) {
        size_t at = (size_t)(flags >> 2) * 7919u % l2;
        s2[at] ^= (uint8_t)(1u + (flags >> 2) % 255u);
        check_verify(A, msg, ml, s2, l2, op, split_v, 0, "corrupted");
    }
    free(s1);
    free(s2);
    free(msg);
    return 0;
}

/* Seeds: every algorithm, with and without options, with a short and a multi-block message. */
static void seeds(void)
{
    static const char body[] = "The streaming contract: results are identical for any chunking of the input; "
                               "this seed spans more than two SHA-512 blocks and a BLAKE3 chunk boundary is "
                               "reached by the fuzzer's insertions.";
    for (size_t i = 0; i < fuzz_alg_count(); i++) {
        for (unsigned v = 0; v < 2; v++) {
            const uint8_t head[4] = {(uint8_t)i, (uint8_t)(v ? 3 : 2), (uint8_t)(17 + i), (uint8_t)(91 + i)};
            fuzz_seed2(head, 4, body, v ? sizeof body - 1 : 5);
        }
    }
}

FUZZ_SEED_GENERATOR(seeds)
