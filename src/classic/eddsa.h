/*
 * src/classic/eddsa.h — the parts of the Ed25519 and Ed448 providers (RFC 8032) that do not depend
 * on the curve: the OKP key-type hooks, the one-pass streaming skeleton (hash handling, nonce seed,
 * signature framing) and the message hashes fetched once (see docs/eddsa-one-pass.md).
 *
 * Each curve file (ed25519.c, ed448.c) supplies a `struct dsig_eddsa_curve` descriptor with its sizes,
 * hash and names, plus hooks for what really differs: key expansion and point checks, the nonce
 * point R = [r]B, S = (r + k·s) mod L, and the verification equation.
 */
#ifndef DSIG_CLASSIC_EDDSA_H
#define DSIG_CLASSIC_EDDSA_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "core/keytype.h"
#include "core/provider.h"
#include "core/rng.h"

/* Largest encoded key / point / scalar (Ed448: 57 bytes); Ed25519 uses the first 32. */
#define DSIG_EDDSA_MAX_BYTES 57
/* Largest H output used (Ed448: SHAKE256 squeezed to 114 bytes). */
#define DSIG_EDDSA_MAX_HASH 114

/* Key material both curves keep; the first member of each curve's key impl. */
struct dsig_eddsa_key {
    int has_seed;
    uint8_t seed[DSIG_EDDSA_MAX_BYTES];   /* the RFC 8032 secret key (JWK "d") */
    uint8_t pk[DSIG_EDDSA_MAX_BYTES];     /* encoded A (JWK "x") */
    uint8_t s[DSIG_EDDSA_MAX_BYTES];      /* secret scalar, little-endian */
    uint8_t prefix[DSIG_EDDSA_MAX_BYTES]; /* second half of H(seed): secret input of the nonce seed */
};

struct dsig_eddsa_curve;

/* Streaming state both curves share; the first member of each curve's state. */
struct dsig_eddsa_state {
    EVP_MD_CTX *md; /* k-hash H(dom ‖ R ‖ A ‖ M); first, so the per-chunk update touches only it */
    const struct dsig_eddsa_curve *curve;
    uint8_t R[DSIG_EDDSA_MAX_BYTES];
    uint8_t A[DSIG_EDDSA_MAX_BYTES]; /* public key */
    uint8_t S[DSIG_EDDSA_MAX_BYTES]; /* verify: signature scalar */
    uint8_t s[DSIG_EDDSA_MAX_BYTES]; /* sign: copy of the secret scalar */
};

/* What makes a curve: sizes, names, its hash H, and the curve-specific arithmetic. */
struct dsig_eddsa_curve {
    const char *name;                   /* "Ed25519": messages */
    const struct dsig_keytype *keytype; /* the key type whose hooks use this descriptor */
    size_t key_bytes;                   /* seed, A, R, S and prefix size (32 / 57) */
    unsigned bits;                      /* key size as OpenSSL reports it (256 / 456) */
    int evp_id;                         /* EVP_PKEY_ED25519 / EVP_PKEY_ED448 */
    const char *hash_name;              /* "SHA-512" / "SHAKE256": messages */
    const EVP_MD *(*md)(void);          /* H, fetched once */
    size_t hash_bytes;                  /* output of H used (64 / 114) */
    int xof;                            /* H is squeezed with EVP_DigestFinalXOF */
    const uint8_t *dom;                 /* k-hash prefix (Ed448 dom4), NULL for none */
    size_t dom_len;
    const char *nonce_tag;              /* domain tag of the one-pass nonce seed */
    size_t key_size;                    /* sizeof the curve's key impl */
    size_t state_size;                  /* sizeof the curve's streaming state */

    /* DSIG_OK if `pk` is an acceptable public key, else DSIG_E_POINT (error recorded). */
    int (*check_public)(const uint8_t *pk);
    /* From k->seed (already copied): fill s, prefix, pk and any curve-private part. */
    int (*expand)(struct dsig_eddsa_key *k);
    /* Optional: finish a public-only key once k->pk is set. */
    int (*init_public)(struct dsig_eddsa_key *k);
    /* Optional: free what the key impl holds besides plain memory (called before the wipe). */
    void (*release_key)(struct dsig_eddsa_key *k);
    /* r = h mod L (kept in the curve's state) and st->R = encode([r]B). */
    int (*nonce)(struct dsig_eddsa_state *st, const uint8_t *h);
    /* Reject a signature whose S is not < L or whose R does not decode (DSIG_E_VERIFY). */
    int (*check_sig)(const uint8_t *sig);
    /* Write R ‖ S with S = (r + k·s) mod L, k = h mod L; wipes the nonce. */
    int (*sign_finish)(struct dsig_eddsa_state *st, const uint8_t *h, uint8_t *sig);
    /* The verification equation with k = h mod L: DSIG_OK or DSIG_E_VERIFY. */
    int (*verify_finish)(struct dsig_eddsa_state *st, const uint8_t *h);
    /* Optional: free what the state holds besides plain memory (called before the wipe). */
    void (*release_state)(struct dsig_eddsa_state *st);
    /* Exact RFC 8032 one-shot: write the 2 · key_bytes signature of msg (k has its seed). */
    int (*sign_oneshot)(const struct dsig_eddsa_key *k, const uint8_t *msg, size_t len, uint8_t *sig);
    /* Exact RFC 8032 one-shot verification of a 2 · key_bytes signature: DSIG_OK or DSIG_E_VERIFY. */
    int (*verify_oneshot)(const struct dsig_eddsa_key *k, const uint8_t *msg, size_t len,
                          const uint8_t *sig);
};

/* The two descriptors (ed25519.c, ed448.c), listed by dsig_eddsa_algs (eddsa_common.c). */
extern const dsig_alg dsig_alg_ed25519;
extern const dsig_alg dsig_alg_ed448;
extern const struct dsig_eddsa_curve dsig_eddsa_curve_ed25519;
extern const struct dsig_eddsa_curve dsig_eddsa_curve_ed448;
/* Their key types (OKP "Ed25519", "Ed448"); the DSig hybrid scheme takes Ed25519 keys too. */
extern const struct dsig_keytype dsig_keytype_ed25519;
extern const struct dsig_keytype dsig_keytype_ed448;

/* SHA-512 and SHAKE256 implementations, fetched once per process (thread-safe); NULL on failure. */
const EVP_MD *dsig_eddsa_sha512(void);
const EVP_MD *dsig_eddsa_shake256(void);

/*
 * Absorb the one-pass nonce seed into `ctx` (already initialised with the scheme's hash H):
 *   domain_tag ‖ prefix ‖ 32 fresh OS-random bytes ‖ u64le(process-wide counter).
 * The caller squeezes H and reduces mod L to get r. Returns DSIG_OK, DSIG_E_RNG or DSIG_E_CRYPTO.
 */
int dsig_eddsa_absorb_nonce_seed(EVP_MD_CTX *ctx, const char *domain_tag, const uint8_t *prefix,
                                 size_t prefix_len);

/* DSIG_OK if `pk` (57 bytes) is a canonical Ed448 point of order L, else DSIG_E_POINT (ed448.c). */
int dsig_ed448_check_public(const uint8_t pk[57]);

/* ---- shared key-type hooks (struct dsig_keytype; the curve is found from key->type) ---------- */

int dsig_eddsa_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng);
int dsig_eddsa_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n);
int dsig_eddsa_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                          size_t *n);
int dsig_eddsa_to_pkey(const struct dsig_key *key, int include_private, void **pkey);
int dsig_eddsa_from_pkey(struct dsig_key *key, void *pkey);
int dsig_eddsa_public_copy(struct dsig_key *dst, const struct dsig_key *src);
void dsig_eddsa_destroy(struct dsig_key *key);
unsigned dsig_eddsa_bits(const struct dsig_key *key);

/* JWK members of an OKP key: "x" public, "d" private (RFC 8037 §2). */
extern const char *const dsig_eddsa_pub_members[];
extern const char *const dsig_eddsa_priv_members[];

/* The OKP key type of curve `crv_name` (a string literal): the shared hooks above. */
#define DSIG_EDDSA_KEYTYPE(crv_name)                                                                 \
    {                                                                                                \
        .kty = "OKP", .crv = crv_name, .pub_members = dsig_eddsa_pub_members,                        \
        .priv_members = dsig_eddsa_priv_members, .has_public = 1, .generate = dsig_eddsa_generate,   \
        .import_jwk = dsig_eddsa_import_jwk, .export_jwk = dsig_eddsa_export_jwk,                    \
        .to_pkey = dsig_eddsa_to_pkey, .from_pkey = dsig_eddsa_from_pkey,                            \
        .public_copy = dsig_eddsa_public_copy, .destroy = dsig_eddsa_destroy,                        \
        .bits = dsig_eddsa_bits,                                                                     \
    }

/* ---- the algorithm ------------------------------------------------------------------------------ */

/* Streaming and one-shot operations of both curves (eddsa_common.c); the curve is alg->params. */
extern const struct dsig_alg_ops dsig_eddsa_ops;

/* The dsig_alg of a curve: `nm` its JOSE name (a string literal), `cv` its descriptor. */
#define DSIG_EDDSA_ALG(nm, kt, base, sec, sig_bytes, kbits, cv)                                      \
    {                                                                                                \
        .name = nm, .family = "EdDSA",                                                               \
        .description = nm " (RFC 8032); one-pass streaming with a hedged nonce, exact RFC 8032 "     \
                          "one-shot",                                                                \
        .keytype = &kt, .baseline = base, .security_bits = sec,                                      \
        .flags = DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED | DSIG_ALG_DETERMINISTIC_ONESHOT,           \
        .sig_max = sig_bytes, .min_key_bits = 0, .default_key_bits = kbits, .ops = &dsig_eddsa_ops,  \
        .params = &cv,                                                                               \
    }

#endif
