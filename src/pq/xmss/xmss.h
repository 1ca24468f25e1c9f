/*
 * src/pq/xmss/xmss.h — XMSS and XMSS^MT (RFC 8391, NIST SP 800-208) core: parameter sets, the tweakable
 * hashes, WOTS+, tree hashing, a traversal that keeps the nodes of the active trees (and builds the
 * next ones a few leaves per signature), signing and verification. The provider (xmss_alg.c) wraps it.
 * Not installed; tests include it.
 */
#ifndef DSIG_PQ_XMSS_H
#define DSIG_PQ_XMSS_H

#include <stddef.h>
#include <stdint.h>

#include "hash/keccak.h"
#include "hash/sha256_impl.h"

#define XMSS_NMAX 64
#define XMSS_LEN_MAX (2 * XMSS_NMAX + 3)  /* WOTS+ len for w = 16 */
#define XMSS_DMAX 12
#define XMSS_HMAX 60
#define XMSS_TMAX 20

enum { XMSS_SHA256 = 1, XMSS_SHA512, XMSS_SHAKE128, XMSS_SHAKE256 };

/* One RFC 8391 / SP 800-208 parameter set. */
typedef struct dsig_xmss_params {
    const char *tag;       /* internal identifier; the RFC name: dsig_xmss_params_name() */
    uint32_t oid;          /* RFC 8391 §5.3/§5.4 (+ SP 800-208 §5) typecode */
    int mt;                /* 0: XMSS, 1: XMSS^MT */
    int hash;              /* XMSS_SHA256, ... */
    unsigned n;            /* hash output bytes (24, 32, 64) */
    unsigned padlen;       /* bytes of the toByte(x, .) domain prefix: n, or 4 for n = 24 */
    unsigned h, d, t;      /* total height, layers, height of one tree (h / d) */
    unsigned len1, len;    /* WOTS+ (w = 16) */
    unsigned idx_bytes;    /* 4 for XMSS, ceil(h / 8) for XMSS^MT */
    size_t sig_bytes, pk_bytes;
} dsig_xmss_params;

/* Lookups; NULL if unknown. */
const dsig_xmss_params *dsig_xmss_params_by_oid(int mt, uint32_t oid);
const dsig_xmss_params *dsig_xmss_params_by_name(const char *name);
/* "XMSS-SHA2_10_256", "XMSSMT-SHA2_20/2_256", ... into out (48 bytes suffice). */
void dsig_xmss_params_name(const dsig_xmss_params *p, char *out, size_t cap);
/* NULL-terminated list of all sets (both XMSS and XMSS^MT). */
extern const dsig_xmss_params *const dsig_xmss_all_params[];

/* Hash context of one key: the seeds and the SHA-2 states after the constant first block. */
typedef struct dsig_xmss_hash {
    const dsig_xmss_params *p;
    dsig_sha256_compress_fn c256;
    int has_sk;
    uint32_t prf256[8];   /* SHA-256 after toByte(3, 32) ‖ PUB_SEED (n = 32) */
    uint32_t kg256[8];    /* SHA-256 after toByte(4, 32) ‖ SK_SEED (n = 32; secret) */
    uint64_t prf512[8];   /* SHA-512 after toByte(3, 64) ‖ PUB_SEED (n = 64) */
    uint64_t kg512[8];    /* SHA-512 after toByte(4, 64) ‖ SK_SEED (n = 64; secret) */
    uint8_t pub_seed[XMSS_NMAX];
    uint8_t sk_seed[XMSS_NMAX];
} dsig_xmss_hash;

void dsig_xmss_hash_init(dsig_xmss_hash *c, const dsig_xmss_params *p, const uint8_t *pub_seed,
                         const uint8_t *sk_seed /* NULL: verify only */);
void dsig_xmss_hash_wipe(dsig_xmss_hash *c);

/* The traversal state of a signing key (opaque). */
typedef struct dsig_xmss_trav dsig_xmss_trav;

/* Bottom-subtree height used for a tree of height t (t itself up to 10, else about t/2); tests may
 * force a smaller split with dsig_xmss_test_split (0 = default). */
extern unsigned dsig_xmss_test_split;

/* Key generation from the three seeds: writes root (n bytes). With trav != NULL also returns a
 * traversal positioned at index 0 (so keygen and the first signatures share the tree work). */
int dsig_xmss_keygen(const dsig_xmss_hash *c, uint8_t *root, dsig_xmss_trav **trav);

/* A traversal positioned at index q (recomputes the active trees: the cost of a few trees of 2^t
 * leaves; see docs/xmss.md). `top` is optional persisted top-tree material for single-tree sets
 * (dsig_xmss_trav_top), NULL to recompute. */
int dsig_xmss_trav_new(const dsig_xmss_hash *c, uint64_t q, const uint8_t *top, size_t top_len,
                       dsig_xmss_trav **trav);
void dsig_xmss_trav_free(dsig_xmss_trav *t);
/* Persistable static part for XMSS (d = 1) with t > split: the nodes of levels split..h. */
int dsig_xmss_trav_top(const dsig_xmss_trav *t, const uint8_t **top, size_t *len);

/*
 * Signature at index q without the message-dependent part: writes idx, r = PRF(SK_PRF, toByte(q,32)),
 * every auth path and the WOTS+ signatures of layers >= 1 into sig (p->sig_bytes). The traversal
 * moves to q + 1 (a q other than its position rebuilds it there). The layer-0 WOTS+ signature is
 * added by dsig_xmss_sign_finish once the message digest is known.
 */
int dsig_xmss_sign_prepare(const dsig_xmss_hash *c, dsig_xmss_trav *t, const uint8_t *sk_prf,
                           uint64_t q, uint8_t *sig);
void dsig_xmss_sign_finish(const dsig_xmss_hash *c, const uint8_t *digest, uint8_t *sig);

/* The signature's index and r (no checks beyond the length, done by the caller). */
uint64_t dsig_xmss_sig_index(const dsig_xmss_params *p, const uint8_t *sig);

/* H_msg prefix toByte(2, padlen) ‖ r ‖ root ‖ toByte(idx, n) (length returned). */
size_t dsig_xmss_hmsg_prefix(const dsig_xmss_params *p, uint8_t *out, const uint8_t *r,
                             const uint8_t *root, uint64_t idx);

/* Verify sig against the digest H_msg(...) and the public root: 0 valid, -1 invalid (index out of
 * range or root mismatch; constant-time root comparison). */
int dsig_xmss_verify_digest(const dsig_xmss_hash *c, const uint8_t *root, const uint8_t *digest,
                            const uint8_t *sig);

/* Root of the top layer's current tree = the public root (n bytes). */
const uint8_t *dsig_xmss_trav_root(const dsig_xmss_trav *t);

/* Raw helpers over the provider's H_msg (xmss_alg.c): tests and benchmarks. */
int dsig_xmss_sign_raw(const dsig_xmss_params *p, const uint8_t *sk_seed, const uint8_t *sk_prf,
                       const uint8_t *pub_seed, const uint8_t *root, uint64_t q, const uint8_t *msg,
                       size_t len, uint8_t *sig);
int dsig_xmss_verify_raw(const dsig_xmss_params *p, const uint8_t *pk, const uint8_t *msg, size_t len,
                         const uint8_t *sig, size_t sig_len);
int dsig_xmss_hmsg(const dsig_xmss_params *p, const uint8_t *r, const uint8_t *root, uint64_t idx,
                   const uint8_t *msg, size_t len, uint8_t *out);

#endif
