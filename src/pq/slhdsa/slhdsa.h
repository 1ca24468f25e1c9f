/*
 * src/pq/slhdsa/slhdsa.h — SLH-DSA (FIPS 205) internal API: what the ACVP tests call and what a
 * registry provider streams through. Not installed.
 *
 * Keys are byte strings as in FIPS 205 §9: pk = PK.seed ‖ PK.root (2n), sk = SK.seed ‖ SK.prf ‖
 * PK.seed ‖ PK.root (4n). Signatures are R ‖ SIG_FORS ‖ SIG_HT (p->sig_bytes).
 *
 * Streaming. The message reaches the algorithm only through two hashes:
 *   R      = PRF_msg(SK.prf, opt_rand, M)        (n bytes; signing only)
 *   digest = H_msg(R, PK.seed, PK.root, M)        (m bytes)
 * both exposed as init/update/final (dsig_slhdsa_msg_*), and the tree work takes R and the digest
 * (dsig_slhdsa_sign_digest / dsig_slhdsa_verify_digest). So:
 *   - verification reads M once: R is the signature's first n bytes;
 *   - exact FIPS 205 signing reads M twice (PRF_msg pass, then H_msg pass): for seekable input;
 *   - one-pass signing (pipes): R = dsig_slhdsa_r_onepass(SK.prf, fresh opt_rand), i.e. PRF_msg over
 *     the empty message, then one H_msg pass. The result is an ordinary SLH-DSA signature that every
 *     FIPS 205 verifier accepts (verification never recomputes R); it differs from Algorithm 19 only
 *     in that R does not depend on M, so opt_rand MUST be fresh randomness (never PK.seed: a constant
 *     R would turn H_msg into a fixed-prefix hash across messages).
 * M is whatever the caller feeds: the raw message for the internal interface (ACVP), M' for the
 * external interfaces (§10.2): feed dsig_slhdsa_pure_prefix() then M, or dsig_slhdsa_prehash_prefix()
 * then PH(M).
 *
 * Constant time: secret seeds only flow through the hash functions; all branches and indices depend
 * on the public digest, public tree positions or public signature bytes.
 */
#ifndef DSIG_PQ_SLHDSA_H
#define DSIG_PQ_SLHDSA_H

#include <stddef.h>
#include <stdint.h>

#include "hash/keccak.h"
#include "pq/slhdsa/params.h"

/* @spec FIPS 205 Algorithm 18 slh_keygen_internal(SK.seed, SK.prf, PK.seed): n-byte inputs;
 * pk (p->pk_bytes), sk (p->sk_bytes). */
int dsig_slhdsa_keygen_internal(const dsig_slhdsa_params *p, const uint8_t *sk_seed,
                                const uint8_t *sk_prf, const uint8_t *pk_seed, uint8_t *pk,
                                uint8_t *sk);

/* ---- message hashes (streaming) --------------------------------------------------------------- */

typedef struct dsig_slhdsa_msg {
    const dsig_slhdsa_params *p;
    int kind;                       /* 1 PRF_msg, 2 H_msg; 0 = not started / finished */
    dsig_keccak shake;              /* SHAKE sets */
    void *md;                       /* SHA2 sets: EVP_MD_CTX* (SHA-256 for n = 16, else SHA-512) */
    uint8_t opad[128];              /* PRF_msg (SHA2): SK.prf ⊕ opad, for the outer HMAC hash */
    uint8_t seed[2 * DSIG_SLHDSA_NMAX]; /* H_msg (SHA2): R ‖ PK.seed, the MGF1 seed prefix */
} dsig_slhdsa_msg;

/* @spec FIPS 205 §11.1/§11.2 PRF_msg(SK.prf, opt_rand, M): start; opt_rand is n bytes. */
int dsig_slhdsa_prf_msg_init(dsig_slhdsa_msg *h, const dsig_slhdsa_params *p, const uint8_t *sk_prf,
                             const uint8_t *opt_rand);
/* @spec FIPS 205 §11.1/§11.2 H_msg(R, PK.seed, PK.root, M): start; pk = PK.seed ‖ PK.root. */
int dsig_slhdsa_h_msg_init(dsig_slhdsa_msg *h, const dsig_slhdsa_params *p, const uint8_t *r,
                           const uint8_t *pk);
/* Absorb the next piece of M (any length, including 0). */
int dsig_slhdsa_msg_update(dsig_slhdsa_msg *h, const uint8_t *data, size_t len);
/* Finish: PRF_msg writes n bytes (R), H_msg m bytes (the digest). Releases and wipes h. */
int dsig_slhdsa_msg_final(dsig_slhdsa_msg *h, uint8_t *out);
/* Release and wipe an unfinished h (safe on a finished or zeroed one). */
void dsig_slhdsa_msg_abort(dsig_slhdsa_msg *h);

/* One-pass signing's R = PRF_msg(SK.prf, opt_rand, empty M); opt_rand must be fresh (see above). */
int dsig_slhdsa_r_onepass(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *opt_rand,
                          uint8_t *r);

/* ---- signing and verification from the digest ------------------------------------------------ */

/* @spec FIPS 205 Algorithm 19 slh_sign_internal, lines 6-16: sig = R ‖ FORS ‖ HT for the m-byte
 * digest = H_msg(R, PK.seed, PK.root, M). sig has p->sig_bytes. */
int dsig_slhdsa_sign_digest(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *r,
                            const uint8_t *digest, uint8_t *sig);

/* @spec FIPS 205 Algorithm 20 slh_verify_internal, lines 4-13, given digest = H_msg(sig[0..n), ...).
 * The caller has checked sig_len == p->sig_bytes (dsig_slhdsa_verify_internal does). DSIG_OK or
 * DSIG_E_VERIFY. */
int dsig_slhdsa_verify_digest(const dsig_slhdsa_params *p, const uint8_t *pk, const uint8_t *sig,
                              const uint8_t *digest);

/* ---- one-shot internal interface over an in-memory M (ACVP) ---------------------------------- */

/* @spec FIPS 205 Algorithm 19 slh_sign_internal(M, SK, addrnd): addrnd NULL = deterministic
 * (opt_rand = PK.seed). */
int dsig_slhdsa_sign_internal(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *m,
                              size_t mlen, const uint8_t *addrnd, uint8_t *sig);
/* @spec FIPS 205 Algorithm 20 slh_verify_internal(M, SIG, PK): DSIG_OK or DSIG_E_VERIFY (a wrong
 * length is DSIG_E_VERIFY too, with a detail). */
int dsig_slhdsa_verify_internal(const dsig_slhdsa_params *p, const uint8_t *pk, const uint8_t *m,
                                size_t mlen, const uint8_t *sig, size_t sig_len);

/* ---- external interface (§10.2) --------------------------------------------------------------- */

/* Longest M' prefix: 1 ‖ |ctx| ‖ ctx (255) ‖ OID DER (11). */
#define DSIG_SLHDSA_PREFIX_MAX (2 + 255 + 11)

/* A pre-hash function of HashSLH-DSA (§10.2.2). */
typedef struct dsig_slhdsa_prehash {
    const char *name;        /* "SHA-256", "SHA-512", "SHAKE128", "SHA3-256", ... */
    const char *evp_name;    /* OpenSSL name */
    size_t out_len;          /* PH(M) length (SHAKE128: 32, SHAKE256: 64) */
    uint8_t oid[11];         /* DER: 06 09 60 86 48 01 65 03 04 02 xx */
} dsig_slhdsa_prehash;

/* By name (the names above; also "SHA2-256" etc.), NULL if not one of the FIPS 205 §10.2.2 list. */
const dsig_slhdsa_prehash *dsig_slhdsa_prehash_find(const char *name);

/* @spec FIPS 205 Algorithm 22 line 9: M' prefix 0 ‖ |ctx| ‖ ctx. DSIG_E_ARG if ctx_len > 255. */
int dsig_slhdsa_pure_prefix(const uint8_t *ctx, size_t ctx_len,
                            uint8_t out[DSIG_SLHDSA_PREFIX_MAX], size_t *out_len);
/* @spec FIPS 205 Algorithm 23 line 26: M' prefix 1 ‖ |ctx| ‖ ctx ‖ OID (PH(M) follows). */
int dsig_slhdsa_prehash_prefix(const dsig_slhdsa_prehash *ph, const uint8_t *ctx, size_t ctx_len,
                               uint8_t out[DSIG_SLHDSA_PREFIX_MAX], size_t *out_len);
/* PH(M) with OpenSSL (fetched once per process); out has ph->out_len bytes. */
int dsig_slhdsa_prehash_compute(const dsig_slhdsa_prehash *ph, const uint8_t *m, size_t mlen,
                                uint8_t *out);

/* The pre-hash's OpenSSL EVP_MD (as const void *: this header does not pull in OpenSSL), fetched
 * once per process, for callers that stream PH(M); NULL if OpenSSL lacks it. */
const void *dsig_slhdsa_prehash_md(const dsig_slhdsa_prehash *ph);

/* @spec FIPS 205 Algorithms 22/23 slh_sign / hash_slh_sign with caller-supplied addrnd (NULL =
 * deterministic); ph NULL = pure. For tests and one-shot callers; M in memory. */
int dsig_slhdsa_sign_ext(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *m,
                         size_t mlen, const uint8_t *ctx, size_t ctx_len,
                         const dsig_slhdsa_prehash *ph, const uint8_t *addrnd, uint8_t *sig);
/* @spec FIPS 205 Algorithms 24/25 slh_verify / hash_slh_verify; ph NULL = pure. With ph given, m
 * is the message itself (PH(M) is computed here) unless m_is_digest, then m is PH(M). */
int dsig_slhdsa_verify_ext(const dsig_slhdsa_params *p, const uint8_t *pk, const uint8_t *m,
                           size_t mlen, const uint8_t *ctx, size_t ctx_len,
                           const dsig_slhdsa_prehash *ph, int m_is_digest, const uint8_t *sig,
                           size_t sig_len);

/* Name of the tree-hash back-end a key of this set uses now ("sha256-shani", "keccak-x4-avx2"...). */
const char *dsig_slhdsa_backend(const dsig_slhdsa_params *p);

#endif
