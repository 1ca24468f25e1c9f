/*
 * Fuzz target: ACVP-style signature verification (SigVer: public key, message, signature; for
 * FIPS 204/205 also context and pre-hash) for EVERY registry algorithm. The input is
 *
 *   byte 0   algorithm (registry index modulo the count)
 *   byte 1   flags: bit 0 the key comes from the input (else the harness's key of that algorithm),
 *            bit 1 also verify streamed in pieces (split seed = byte 2), bit 2 options follow
 *   byte 2   split seed for the streamed verification
 *   [bit 0]  u16le length + the key's raw members (each u16le length + bytes, in the key type's JWK
 *            member order: e.g. n, e for RSA; x, y for EC; pub for AKP; k for a MAC key)
 *   [bit 2]  u8 context length + context, u8 pre-hash (0 pure, else index into the pre-hash names)
 *   u16le    signature length, signature
 *   rest     message
 *
 * Invariants (abort on violation):
 *   - a key that fails to import, and a verification that fails with an error (not DSIG_E_VERIFY),
 *     say why (a detail string); non-default options on an algorithm without them are refused (an
 *     error, never a verdict);
 *   - one-shot and streamed verification return the same verdict for every split;
 *   - strictness (no malleability): if (message, signature) verifies, then flipping any one of several
 *     bits of the signature (first, last, middle, and one chosen by the input) or one bit of the message
 *     does not — a verifier that ignores a bit (padding, an index's high bits, a sign bit) is caught here.
 */
#include <string.h>

#include "fuzz_common.h"

#define FV_MAX_INPUT 65536u

static const char *const prehashes[] = {"SHA-256",  "SHA-384",  "SHA-512",  "SHA-224",
                                        "SHA-512/224", "SHA-512/256", "SHA3-224", "SHA3-256",
                                        "SHA3-384", "SHA3-512", "SHAKE128", "SHAKE256", "MD5"};
#define N_PREHASH (sizeof prehashes / sizeof prehashes[0])

/* Verify, one-shot or streamed (split != 0). */
static int verify(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t ml, const uint8_t *sig,
                  size_t sl, const dsig_sign_opts *o, uint32_t split)
{
    return split ? fuzz_verify_streamed(alg, key, msg, ml, sig, sl, o, split) : dsig_verify_ex(alg, key, msg, ml, sig, sl, o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > FV_MAX_INPUT)
        return 0;
    fuzz_in in = {data, size};
    size_t ai = fuzz_u8(&in) % fuzz_alg_count();
    unsigned flags = fuzz_u8(&in), split = fuzz_u8(&in);
    const fuzz_alg *A = fuzz_alg_get(ai);
    const dsig_alg *alg = A->alg;
    dsig_key *own = NULL;
    const dsig_key *key = A->pub;
    if (flags & 1) {
        size_t ml;
        const uint8_t *mem = fuzz_take(&in, fuzz_u16(&in), &ml);
        uint8_t *m = fuzz_dup(mem, ml);
        int rc = fuzz_key_from_members(alg, m, ml, &own);
        free(m);
        if (rc) {
            fuzz_check_detail(rc, "key import");
            return 0;
        }
        key = own;
    }
    dsig_sign_opts o = {0}, *op = NULL;
    uint8_t *ctx = NULL;
    if (flags & 4) {
        size_t cl;
        const uint8_t *c = fuzz_take(&in, fuzz_u8(&in), &cl);
        ctx = fuzz_dup(c, cl);
        unsigned ph = fuzz_u8(&in);
        o.context = ctx;
        o.context_len = cl;
        o.prehash = ph ? prehashes[(ph - 1) % N_PREHASH] : NULL;
        op = &o;
    }
    size_t sl, ml;
    const uint8_t *s = fuzz_take(&in, fuzz_u16(&in), &sl);
    uint8_t *sig = fuzz_dup(s, sl);
    const uint8_t *m = fuzz_take(&in, in.n, &ml);
    uint8_t *msg = fuzz_dup(m, ml);

    int rc = verify(alg, key, msg, ml, sig, sl, op, 0);
    fuzz_check_detail(rc, dsig_alg_name(alg));
    if (op && (o.context_len || o.prehash) && !(dsig_alg_flags(alg) & DSIG_ALG_OPTIONS))
        FUZZ_CHECK(rc != DSIG_OK && rc != DSIG_E_VERIFY, "%s: options it does not have were ignored (%d)",
                   dsig_alg_name(alg), rc);
    if (flags & 2) {
        int rs = verify(alg, key, msg, ml, sig, sl, op, split | 0x100u);
        FUZZ_CHECK(rs == rc, "%s: one-shot verification says %d, streamed (split %u) says %d", dsig_alg_name(alg), rc,
                   split, rs);
    }
    if (rc == DSIG_OK) {
        FUZZ_CHECK(sl > 0, "%s accepted an empty signature", dsig_alg_name(alg));
        const size_t bits[5] = {0, 8 * sl - 1, 4 * sl, 8 * (size_t)split % (8 * sl), (8 * sl) / 3 + 1};
        for (int b = 0; b < 5; b++) {
            size_t bit = bits[b] % (8 * sl);
            sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            int rf = verify(alg, key, msg, ml, sig, sl, op, 0);
            FUZZ_CHECK(rf != DSIG_OK, "%s: MALLEABLE: the signature still verifies with bit %zu of %zu flipped",
                       dsig_alg_name(alg), bit, 8 * sl);
            sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        if (ml) {
            size_t bit = (size_t)split % (8 * ml);
            msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            FUZZ_CHECK(verify(alg, key, msg, ml, sig, sl, op, 0) != DSIG_OK,
                       "%s: the signature also verifies the message with bit %zu flipped", dsig_alg_name(alg), bit);
        }
    }
    free(msg);
    free(sig);
    free(ctx);
    dsig_key_free(own);
    return 0;
}

/* Seeds: for every algorithm, valid signatures of two messages by the harness's key, with that key
 * and with the key given as raw members (streamed), and with a context and a pre-hash where the
 * algorithm takes options. */
static void seeds(void)
{
    static const char *const msgs[2] = {"", "ACVP-style message: 45 bytes of fuzz seed."};
    static uint8_t sig[65536], mem[8192];
    for (size_t i = 0; i < fuzz_alg_count(); i++) {
        const fuzz_alg *A = fuzz_alg_get(i);
        size_t mlen = fuzz_key_members(A->pub, mem, sizeof mem);
        for (int variant = 0; variant < 3; variant++) {
            const int opts = variant == 2;
            if (opts && !(dsig_alg_flags(A->alg) & DSIG_ALG_OPTIONS))
                continue;
            dsig_sign_opts o = {.context = (const uint8_t *)"ctx", .context_len = 3, .prehash = "SHA-256"};
            const char *m = msgs[variant & 1];
            size_t sl = 0;
            if (dsig_sign_ex(A->alg, A->key, m, strlen(m), sig, sizeof sig, &sl, opts ? &o : NULL) != DSIG_OK) {
                fprintf(stderr, "seed: %s: %s\n", dsig_alg_name(A->alg), dsig_last_error_detail());
                continue;
            }
            const uint8_t head[3] = {(uint8_t)i, (uint8_t)(variant == 1 && mlen ? 3 : opts ? 4 : 0), (uint8_t)(7 + i)};
            fuzz_seed_begin();
            fuzz_seed_add(head, 3);
            if (head[1] & 1) {
                fuzz_seed_u16((unsigned)mlen);
                fuzz_seed_add(mem, mlen);
            }
            if (opts) {
                const uint8_t c[5] = {3, 'c', 't', 'x', 1};
                fuzz_seed_add(c, 5);
            }
            fuzz_seed_u16((unsigned)sl);
            fuzz_seed_add(sig, sl);
            fuzz_seed_add(m, strlen(m));
            fuzz_seed_end();
        }
    }
}

FUZZ_SEED_GENERATOR(seeds)
