/*
 * src/pq/falcon/falcon_api.c — Falcon detached signatures, streaming (spec §3.9 Algorithm 10 and §3.10
 * Algorithm 16 with the §3.11.3 signature layout): header 0x30+logn ‖ salt r ‖ Compress(s2).
 *
 * HashToPoint(r ‖ M) is a SHAKE256 over the salt then the message, so both directions read the
 * message once, in chunks, with constant memory: the salt is known before the first chunk (the
 * signer draws it at start, the verifier reads it from the signature).
 */
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "pq/falcon/falcon.h"

/* Size of the signature in a format, or the signer's maximum for the compressed one. */
static size_t sig_len_for(unsigned logn, int fmt)
{
    (void)fmt;
    return FALCON_SIG_PADDED_LEN(logn);
}

/* @spec §3.10 Algorithm 16 steps 1–2 (decode) and the salt absorption of HashToPoint. */
int falcon_verify_start(falcon_verify_ctx *v, unsigned logn, const uint8_t *sig, size_t len, int fmt)
{
    v->logn = logn;
    if (len < 1 + FALCON_NONCE_LEN + 1)
        return dsig_fail(DSIG_E_VERIFY, "Falcon signature: %zu bytes is too short", len);
    if (sig[0] != 0x30 + logn)
        return dsig_fail(DSIG_E_VERIFY, "Falcon signature: header byte 0x%02x, expected 0x%02x",
                         sig[0], 0x30 + logn);
    size_t max = fmt == FALCON_FMT_PADDED ? sig_len_for(logn, fmt) : FALCON_SIG_VERIFY_MAX_LEN(logn);
    if (fmt == FALCON_FMT_PADDED ? len != max : len > max)
        return dsig_fail(DSIG_E_VERIFY, "Falcon signature: %zu bytes, %s %zu", len,
                         fmt == FALCON_FMT_PADDED ? "padded form is exactly" : "at most", max);
    const uint8_t *body = sig + 1 + FALCON_NONCE_LEN;
    size_t blen = len - 1 - FALCON_NONCE_LEN;
    size_t used = falcon_comp_decode(v->s2, logn, body, blen);
    if (used == 0)
        return dsig_fail(DSIG_E_VERIFY, "Falcon signature: invalid compressed s2 encoding");
    if (fmt == FALCON_FMT_PADDED) {
        uint8_t nz = 0;
        for (size_t u = used; u < blen; u++)
            nz |= body[u];
        if (nz)
            return dsig_fail(DSIG_E_VERIFY, "Falcon signature: non-zero padding after s2");
    } else if (used != blen) {
        return dsig_fail(DSIG_E_VERIFY, "Falcon signature: %zu trailing bytes after s2", blen - used);
    }
    dsig_shake256_init(&v->xof);
    dsig_keccak_absorb(&v->xof, sig + 1, FALCON_NONCE_LEN);
    return DSIG_OK;
}

/* Absorb a message chunk. */
void falcon_verify_update(falcon_verify_ctx *v, const uint8_t *m, size_t len)
{
    dsig_keccak_absorb(&v->xof, m, len);
}

/* @spec §3.10 Algorithm 16 steps 3–6. */
int falcon_verify_finish(falcon_verify_ctx *v, const uint16_t *h_ntt)
{
    uint16_t c[FALCON_MAX_N];
    dsig_shake_finalize(&v->xof);
    falcon_hash_to_point(&v->xof, c, v->logn);
    if (!falcon_verify_core(h_ntt, c, v->s2, v->logn))
        return dsig_fail(DSIG_E_VERIFY, "Falcon signature: ||(s1, s2)||^2 exceeds the bound");
    return DSIG_OK;
}

/* Start HashToPoint with the salt. */
void falcon_sign_start(falcon_sign_ctx *s, unsigned logn, const uint8_t salt[FALCON_NONCE_LEN])
{
    s->logn = logn;
    memcpy(s->salt, salt, FALCON_NONCE_LEN);
    dsig_shake256_init(&s->xof);
    dsig_keccak_absorb(&s->xof, salt, FALCON_NONCE_LEN);
}

/* Absorb a message chunk. */
void falcon_sign_update(falcon_sign_ctx *s, const uint8_t *m, size_t len)
{
    dsig_keccak_absorb(&s->xof, m, len);
}

/* @spec §3.9 Algorithm 10: sample, compress (retry while it does not fit), lay out. */
int falcon_sign_finish(falcon_sign_ctx *s, const falcon_expanded *ek, const uint8_t seed[48],
                       uint8_t *out, size_t cap, size_t *out_len, int fmt)
{
    unsigned logn = s->logn;
    size_t max = sig_len_for(logn, fmt);
    uint16_t c[FALCON_MAX_N];
    int16_t s2[FALCON_MAX_N];
    dsig_keccak rng;
    if (ek->logn != logn)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "Falcon: key is for n = %u", 1u << ek->logn);
    /* The compressed length is only known after sampling: ask for room for the largest. */
    if (cap < max)
        return dsig_fail(DSIG_E_BUFFER, "Falcon signature needs %zu bytes, buffer has %zu", max, cap);
    dsig_shake_finalize(&s->xof);
    falcon_hash_to_point(&s->xof, c, logn);
    dsig_shake256_init(&rng);
    dsig_keccak_absorb(&rng, seed, 48);
    dsig_shake_finalize(&rng);
    size_t room = max - 1 - FALCON_NONCE_LEN, body = 0;
    int rc;
    for (;;) {
        rc = falcon_sign_core(s2, &rng, ek, c);
        if (rc != DSIG_OK)
            break;
        /* s2 is the signature about to be released (and a too-long encoding restarts, which
         * leaks only the number of attempts). */
        DSIG_CT_DECLASSIFY(s2, ((size_t)1 << logn) * sizeof *s2);
        body = falcon_comp_encode(out + 1 + FALCON_NONCE_LEN, room, s2, logn);
        if (body != 0)
            break; /* else: too long for sbytelen, sample again (spec Algorithm 10) */
    }
    if (rc == DSIG_OK) {
        out[0] = (uint8_t)(0x30 + logn);
        memcpy(out + 1, s->salt, FALCON_NONCE_LEN);
        size_t total = 1 + FALCON_NONCE_LEN + body;
        if (fmt == FALCON_FMT_PADDED) {
            memset(out + total, 0, max - total);
            total = max;
        }
        *out_len = total;
    }
    dsig_keccak_wipe(&rng);
    dsig_memzero(s2, sizeof s2);
    return rc;
}
