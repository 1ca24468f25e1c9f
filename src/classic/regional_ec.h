/*
 * src/classic/regional_ec.h — what the SM2 (sm2.c) and GOST R 34.10-2012 (gost.c) providers share:
 * 256-bit short-Weierstrass keys held as fixed-width big-endian bytes, the curve arithmetic on
 * libgcrypt's MPI / EC point API, streaming hashes on libgcrypt gcry_md, and internal test hooks
 * (known-answer tests with a given nonce k and explicit test curves). Not installed.
 *
 * sm2p256v1 and id-tc26-gost-3410-2012-256-paramSetB/C/D have cofactor 1: a point on the curve that
 * is not the point at infinity is in the prime-order group. id-tc26-gost-3410-2012-256-paramSetA (the
 * twisted Edwards curve of RFC 7836 in its Weierstrass form) has cofactor 4, so public points on it
 * are also checked to have order q (rec_point).
 */
#ifndef DSIG_CLASSIC_REGIONAL_EC_H
#define DSIG_CLASSIC_REGIONAL_EC_H

#include <stddef.h>
#include <stdint.h>

#include <gcrypt.h>

#include "core/keytype.h"
#include "core/rng.h"

#define REC_BYTES 32u

/* A named curve of a key type. */
struct rec_curve {
    const struct dsig_keytype *type;
    const char *gcry_name;      /* libgcrypt curve name */
    const char *gcry_alt;       /* another libgcrypt name for it (other releases), or NULL */
    const char *std_name;       /* the standard's name of the parameter set (messages, keygen param) */
    const char *oid;            /* its OID (keygen param) */
};

/* Key impl of both key types: coordinates and scalar as 32-byte big-endian strings. */
struct rec_key {
    const struct rec_curve *cv;
    int has_d;
    uint8_t x[REC_BYTES], y[REC_BYTES], d[REC_BYTES];
};

/* Explicit curve parameters (big-endian, REC_BYTES each) for the standards' test curves. */
struct rec_explicit {
    const uint8_t *p, *a, *b, *gx, *gy, *n;
};

/* One operation's curve context (libgcrypt contexts carry scratch state: never shared). */
struct rec_ctx {
    gcry_ctx_t ctx;
    gcry_mpi_t p, a, b, n;
    gcry_mpi_point_t G;
    int cofactor_one;           /* h = 1: no subgroup check needed for points on the curve */
};

/* EC "SM2" (sm2.c) and EC "GOST-256-A".."GOST-256-D" = id-tc26-gost-3410-2012-256-paramSetA..D
 * (gost.c; B is the default); see docs/regional.md. */
extern const struct dsig_keytype dsig_keytype_sm2;
extern const struct dsig_keytype dsig_keytype_gost256a, dsig_keytype_gost256b, dsig_keytype_gost256c,
    dsig_keytype_gost256d;

extern const struct rec_curve dsig_rec_sm2, dsig_rec_gost256a, dsig_rec_gost256b, dsig_rec_gost256c,
    dsig_rec_gost256d;
/* The four GOST curves, NULL-terminated, in TC26 order A, B, C, D. */
extern const struct rec_curve *const dsig_rec_gost_curves[];
/* The curve of a regional key type, or NULL. */
const struct rec_curve *rec_curve_of(const struct dsig_keytype *t);

/* Open a context on a named curve, or on explicit parameters when ep != NULL. */
int rec_ctx_open(struct rec_ctx *c, const struct rec_curve *cv, const struct rec_explicit *ep);
void rec_ctx_close(struct rec_ctx *c);
/* Big-endian bytes -> MPI (secret: flagged secure so that libgcrypt multiplies in constant time). */
gcry_mpi_t rec_mpi(const uint8_t *be, size_t n, int secret);
/* MPI -> exactly n big-endian bytes. */
int rec_mpi_out(gcry_mpi_t a, uint8_t *out, size_t n);
/* A validated public point (coordinates < p, on the curve, of order n when the cofactor is not 1);
 * NULL if invalid. */
gcry_mpi_point_t rec_point(struct rec_ctx *c, const uint8_t x[REC_BYTES], const uint8_t y[REC_BYTES]);
/* Affine x of P into x (an existing MPI); DSIG_E_INTERNAL at infinity. */
int rec_affine_x(struct rec_ctx *c, gcry_mpi_point_t P, gcry_mpi_t x);
/* A secret scalar k uniform in [1, n-1] from the OS RNG (secure MPI). */
int rec_random_scalar(struct rec_ctx *c, gcry_mpi_t *k);
/* Curve constants as bytes (for SM2's Z_A): a, b, xG, yG. */
int rec_curve_bytes(struct rec_ctx *c, uint8_t a[REC_BYTES], uint8_t b[REC_BYTES], uint8_t gx[REC_BYTES],
                    uint8_t gy[REC_BYTES]);

/* Key type hooks shared by the SM2 and GOST key types. */
int rec_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng);
int rec_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n);
int rec_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m, size_t *n);
int rec_public_copy(struct dsig_key *dst, const struct dsig_key *src);
void rec_destroy(struct dsig_key *key);
unsigned rec_bits(const struct dsig_key *key);
/* Validate (x, y[, d]) on the key type's curve and store them as key->impl. */
int rec_build(struct dsig_key *key, const uint8_t *x, const uint8_t *y, const uint8_t *d);

/* ---- internal test hooks (tests/sm2, tests/gost) ---------------------------------------------- */

enum { DSIG_REC_SM3 = 0, DSIG_REC_STREEBOG256 = 1, DSIG_REC_STREEBOG512 = 2 };
/* Hash msg with the providers' streaming hash code (gcry_md), fed in chunks of `chunk` bytes
 * (0 = one write). out: 32 or 64 bytes. */
int dsig_rec_hash(int which, const uint8_t *msg, size_t len, size_t chunk, uint8_t *out);
/* Public point d·G on sm2p256v1 (gost = 0) / paramSetB (gost = 1), or on the explicit curve ep. */
int dsig_rec_test_pub(const struct rec_explicit *ep, int gost, const uint8_t d[REC_BYTES],
                      uint8_t x[REC_BYTES], uint8_t y[REC_BYTES]);
/* SM2 Z_A = SM3(ENTL ‖ ID ‖ a ‖ b ‖ xG ‖ yG ‖ xA ‖ yA) on sm2p256v1 (ep NULL) or a test curve. */
int dsig_sm2_test_za(const struct rec_explicit *ep, const uint8_t *id, size_t id_len,
                     const uint8_t x[REC_BYTES], const uint8_t y[REC_BYTES], uint8_t za[REC_BYTES]);
/* SM2 signature of the digest e with the nonce k (NULL: random) → r ‖ s. */
int dsig_sm2_test_sign(const struct rec_explicit *ep, const uint8_t d[REC_BYTES],
                       const uint8_t e[REC_BYTES], const uint8_t *k, uint8_t sig[2 * REC_BYTES]);
/* SM2 verification of r ‖ s over the digest e: DSIG_OK or DSIG_E_VERIFY. */
int dsig_sm2_test_verify(const struct rec_explicit *ep, const uint8_t x[REC_BYTES],
                         const uint8_t y[REC_BYTES], const uint8_t e[REC_BYTES],
                         const uint8_t sig[2 * REC_BYTES]);
/* GOST R 34.10-2012 signature of the hash h (the Streebog output bytes; α = h read little-endian)
 * with the nonce k (NULL: random) → s ‖ r, on paramSetB (ep NULL) or a test curve. */
int dsig_gost_test_sign(const struct rec_explicit *ep, const uint8_t d[REC_BYTES],
                        const uint8_t h[REC_BYTES], const uint8_t *k, uint8_t sig[2 * REC_BYTES]);
int dsig_gost_test_verify(const struct rec_explicit *ep, const uint8_t x[REC_BYTES],
                          const uint8_t y[REC_BYTES], const uint8_t h[REC_BYTES],
                          const uint8_t sig[2 * REC_BYTES]);

#endif
