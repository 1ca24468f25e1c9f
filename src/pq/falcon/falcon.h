/*
 * src/pq/falcon/falcon.h — FALCON-512 / FALCON-1024 (Falcon round-3 specification, v1.2), written here.
 * Not installed.
 *
 * Layers:
 *   falcon_codec.c   encodings (pk, sk, compressed s2), hash-to-point, NTT mod q, verification.
 *   falcon_sign.c    floating-point part: FFT, LDL tree, ffSampling, SamplerZ (binary64, no FMA).
 *   falcon_keygen.c  key generation (NTRU equation solving).
 *   falcon_alg.c     the dsig provider (JWS "FALCON512"/"FALCON1024", AKP keys).
 *
 * Detached signature format (spec §3.11.3): header 0x30+logn ‖ 40-byte salt ‖ compressed s2. The
 * "padded" variant zero-fills the compressed body to the fixed lengths 666 / 1280 bytes.
 */
#ifndef DSIG_PQ_FALCON_H
#define DSIG_PQ_FALCON_H

#include <stddef.h>
#include <stdint.h>

#include "hash/keccak.h"

#define FALCON_Q 12289u
#define FALCON_NONCE_LEN 40
#define FALCON_MAX_LOGN 10
#define FALCON_MAX_N 1024

/* Sizes (bytes) for logn 9 / 10. */
#define FALCON_PK_LEN(logn) (1u + (14u << (logn)) / 8u)                       /* 897 / 1793 */
#define FALCON_SK_LEN(logn) ((logn) == 9 ? 1281u : 2305u)                       /* f,g 6/5 bits, F 8 bits */
#define FALCON_SIG_PADDED_LEN(logn) ((logn) == 9 ? 666u : 1280u)                /* spec sbytelen */
/* Largest compressed signature the signer emits: the spec's sbytelen (Sign restarts when the
 * compressed s2 does not fit, spec Algorithm 10). */
#define FALCON_SIG_MAX_LEN(logn) FALCON_SIG_PADDED_LEN(logn)
/* Largest compressed signature the verifier accepts: what the round-3 reference signer can emit
 * (CRYPTO_BYTES − 2 = 688 / 1328; it does not apply sbytelen, and one FALCON-1024 KAT signature
 * is 1281 bytes long). */
#define FALCON_SIG_VERIFY_MAX_LEN(logn) ((logn) == 9 ? 688u : 1328u)

/* Squared-norm acceptance bound ⌊β²⌋ (spec Table 3.3): 34034726 / 70265242. */
uint32_t falcon_l2bound(unsigned logn);

/* ---- encodings (falcon_codec.c) ---------------------------------------------------------- */

/* @spec §3.11.4 public key: header 0x00+logn ‖ 14-bit big-endian packing of h. 0 or DSIG_E_KEY. */
int falcon_pk_decode(uint16_t *h, const uint8_t *in, size_t len, unsigned logn);
void falcon_pk_encode(uint8_t *out, const uint16_t *h, unsigned logn);
/* @spec §3.11.5 private key: header 0x50+logn ‖ f ‖ g ‖ F (two's complement, 6/5/8 bits for 512,
 * 5/5/8 for 1024; the most negative value is forbidden). G is recomputed. 0 or DSIG_E_KEY. */
int falcon_sk_decode(int8_t *f, int8_t *g, int8_t *F, const uint8_t *in, size_t len, unsigned logn);
void falcon_sk_encode(uint8_t *out, const int8_t *f, const int8_t *g, const int8_t *F, unsigned logn);
/* @spec §3.11.2 Compress: returns the byte length written (0 if a coefficient is out of range or
 * `cap` is too small). */
size_t falcon_comp_encode(uint8_t *out, size_t cap, const int16_t *s, unsigned logn);
/* @spec §3.11.2 Decompress: returns bytes consumed (0 = invalid: -0, magnitude > 2047, truncated,
 * non-zero padding bits in the last byte). */
size_t falcon_comp_decode(int16_t *s, unsigned logn, const uint8_t *in, size_t len);

/* @spec §3.7 HashToPoint: squeeze a finalized SHAKE256(salt ‖ M) into c ∈ Z_q^n (16-bit big-endian
 * words, reject ≥ 5q). Variable time in public data only. */
void falcon_hash_to_point(dsig_keccak *xof, uint16_t *c, unsigned logn);

/* NTT mod q (negacyclic, size 2^logn). */
void falcon_ntt(uint16_t *a, unsigned logn);
void falcon_intt(uint16_t *a, unsigned logn);

/* @spec §3.10 Verify core: with h already in NTT form, 1 iff ‖(c − s2·h, s2)‖² ≤ ⌊β²⌋. */
int falcon_verify_core(const uint16_t *h_ntt, const uint16_t *c, const int16_t *s2, unsigned logn);

/* From (f, g, F): G = g·F/f mod q (fG − gF = q), centered; fails (DSIG_E_KEY) if f is not
 * invertible mod q or G does not fit in int8. */
int falcon_complete_private(int8_t *G, const int8_t *f, const int8_t *g, const int8_t *F,
                            unsigned logn);
/* h = g/f mod q; DSIG_E_KEY if f is not invertible. */
int falcon_compute_public(uint16_t *h, const int8_t *f, const int8_t *g, unsigned logn);

/* ---- signing (falcon_sign.c) ------------------------------------------------------------ */

/* The private basis in FFT form plus the normalized LDL tree (spec §3.8.3), built once per key. */
typedef struct falcon_expanded {
    unsigned logn;
    double *b00, *b01, *b10, *b11; /* FFT(g), FFT(-f), FFT(G), FFT(-F) */
    double *tree;                  /* (logn+1)·2^logn values */
    double *mem;                   /* the allocation holding all of the above */
    size_t mem_len;                /* bytes */
} falcon_expanded;

int falcon_expand_private(falcon_expanded *ek, const int8_t *f, const int8_t *g, const int8_t *F,
                          const int8_t *G, unsigned logn);
void falcon_expanded_clear(falcon_expanded *ek);

/*
 * @spec §3.9 Sign, inner loop: sample (s1, s2) for the hashed message c until ‖(s1,s2)‖² ≤ ⌊β²⌋.
 * Randomness: each attempt squeezes 56 bytes from `rng` (a finalized SHAKE256) to seed the
 * ChaCha20-based sampler PRNG, as the round-3 reference does (so the KATs reproduce). Returns 0 or a
 * DSIG_E_* code (allocation failure).
 */
int falcon_sign_core(int16_t *s2, dsig_keccak *rng, const falcon_expanded *ek, const uint16_t *c);

/* ---- detached signatures, streaming (falcon_api.c) ------------------------------------------ */

enum { FALCON_FMT_COMPRESSED = 0, FALCON_FMT_PADDED = 1 };

/* Verification in one pass: the salt comes from the signature, the message is absorbed as it
 * arrives (constant memory). */
typedef struct falcon_verify_ctx {
    dsig_keccak xof;
    unsigned logn;
    int16_t s2[FALCON_MAX_N];
} falcon_verify_ctx;

/* Parse header ‖ salt ‖ compressed s2 (strict: exact length for the format, no trailing data except
 * the zero padding of the padded form) and absorb the salt. 0, or DSIG_E_VERIFY with a detail. */
int falcon_verify_start(falcon_verify_ctx *v, unsigned logn, const uint8_t *sig, size_t len, int fmt);
void falcon_verify_update(falcon_verify_ctx *v, const uint8_t *m, size_t len);
/* 0 if valid, DSIG_E_VERIFY otherwise. h_ntt: the public key in NTT form. */
int falcon_verify_finish(falcon_verify_ctx *v, const uint16_t *h_ntt);

typedef struct falcon_sign_ctx {
    dsig_keccak xof;
    unsigned logn;
    uint8_t salt[FALCON_NONCE_LEN];
} falcon_sign_ctx;

/* Start a signature with a given 40-byte salt (fresh randomness: the caller draws it). */
void falcon_sign_start(falcon_sign_ctx *s, unsigned logn, const uint8_t salt[FALCON_NONCE_LEN]);
void falcon_sign_update(falcon_sign_ctx *s, const uint8_t *m, size_t len);
/* Hash to the point, sample with randomness from `seed` (48 bytes, e.g. from the OS), encode. If
 * the compressed s2 does not fit the format's size, sampling restarts (spec Algorithm 10). */
int falcon_sign_finish(falcon_sign_ctx *s, const falcon_expanded *ek, const uint8_t seed[48],
                       uint8_t *out, size_t cap, size_t *out_len, int fmt);

/* ---- key generation (falcon_keygen.c) --------------------------------------------------- */

/*
 * @spec §3.8.2 NTRUGen from a finalized SHAKE256 PRNG (the round-3 reference seeds it with 48 bytes):
 * f, g, F, G and the public h. 0 or a DSIG_E_* code.
 */
int falcon_keygen(dsig_keccak *rng, int8_t *f, int8_t *g, int8_t *F, int8_t *G, uint16_t *h,
                  unsigned logn);
/*
 * As falcon_keygen, but discard the first `skip` candidates that pass every check. For the KAT test
 * only: the round-3 reference's NTRU solver works in fixed-capacity integer buffers and rejects a
 * few (f, g) that have a valid solution; it then moves on to the next candidate of the same PRNG.
 */
int falcon_keygen_skip(dsig_keccak *rng, int8_t *f, int8_t *g, int8_t *F, int8_t *G, uint16_t *h,
                       unsigned logn, unsigned skip);

/* Floating-point helpers of key generation (falcon_sign.c, for the FP discipline). */
int falcon_keygen_gs_ok(const int8_t *f, const int8_t *g, unsigned logn);
int falcon_babai_round(int64_t *k, const double *F, const double *G, const double *f,
                       const double *g, unsigned logn, int scale, double *tmp);

#endif
