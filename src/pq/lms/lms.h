/*
 * src/pq/lms/lms.h — LMS / HSS hash-based signatures (RFC 8554, NIST SP 800-208) written here: the
 * internal core used by the "HSS-LMS" provider (lms_alg.c) and by the vector tests. Not installed.
 *
 * Hashes: SHA-256 (M32/N32), SHA-256/192 (M24/N24, SP 800-208 §4.2: the first 24 bytes), SHAKE256
 * with 32- or 24-byte output (SP 800-208 §4.3/4.4). The one-block hashes (LM-OTS chain steps and the
 * Appendix A key derivation: 23 + n <= 55 bytes) are single SHA-256 compressions or single Keccak
 * permutations; nothing here goes through OpenSSL EVP.
 *
 * Private keys: RFC 8554 Appendix A pseudorandom derivation from (SEED, I); HSS child keys follow
 * cisco/hash-sigs "Secret Method 2" (SEED_child = H(I ‖ u32 q ‖ u16 0xfffe ‖ 0xff ‖ SEED), I_child =
 * the first 16 bytes of H(I ‖ u32 q ‖ u16 0xffff ‖ 0xff ‖ SEED), q = the parent leaf that signs the
 * child) and the internal randomizers C of child-key signatures are derived (u16 0xfffd): re-signing a
 * child key after a restart then produces the very same one-time signature, never a second one.
 */
#ifndef DSIG_PQ_LMS_H
#define DSIG_PQ_LMS_H

#include <stddef.h>
#include <stdint.h>

#include "hash/keccak.h"

#define DSIG_LMS_N_MAX 32
#define DSIG_LMS_P_MAX 265            /* LMOTS W1, n = 32 */
#define DSIG_LMS_H_MAX 25
#define DSIG_HSS_L_MAX 8
#define DSIG_LMS_I_LEN 16
#define DSIG_LMS_PUB_MAX (8 + DSIG_LMS_I_LEN + DSIG_LMS_N_MAX) /* u32 type ‖ u32 otstype ‖ I ‖ T[1] */
#define DSIG_HSS_PUB_MAX (4 + DSIG_LMS_PUB_MAX)

/* RFC 8554 §4.1 domain separators. */
#define DSIG_LMS_D_PBLC 0x8080u
#define DSIG_LMS_D_MESG 0x8181u
#define DSIG_LMS_D_LEAF 0x8282u
#define DSIG_LMS_D_INTR 0x8383u

/* An LMS parameter set (RFC 8554 §5.1 Table 2; SP 800-208 §4). */
typedef struct dsig_lms_params {
    const char *name;   /* "LMS_SHA256_M32_H10", ... */
    uint32_t type;      /* IANA typecode */
    unsigned m, h;
    int shake;          /* 0: SHA-256(/192), 1: SHAKE256 */
} dsig_lms_params;

/* An LM-OTS parameter set (RFC 8554 §4.1 Table 1; SP 800-208 §4). */
typedef struct dsig_lmots_params {
    const char *name;   /* "LMOTS_SHA256_N32_W4", ... */
    uint32_t type;
    unsigned n, w, p, ls;
    int shake;
} dsig_lmots_params;

const dsig_lms_params *dsig_lms_params_by_type(uint32_t type);
const dsig_lms_params *dsig_lms_params_by_name(const char *name, size_t len);
const dsig_lmots_params *dsig_lmots_params_by_type(uint32_t type);
const dsig_lmots_params *dsig_lmots_params_by_name(const char *name, size_t len);
/* All sets (NULL-terminated), for tests. */
extern const dsig_lms_params *const dsig_lms_all[];
extern const dsig_lmots_params *const dsig_lmots_all[];

/* Bytes of an LMS signature / public key for (lms, ots). */
size_t dsig_lms_sig_len(const dsig_lms_params *lp, const dsig_lmots_params *op);
size_t dsig_lms_pub_len(const dsig_lms_params *lp);
/* SP 800-208 pairs an LMS set only with an LM-OTS set of the same hash and output length. */
int dsig_lms_pair_ok(const dsig_lms_params *lp, const dsig_lmots_params *op);

/* ---- message hash (streams the payload) -------------------------------------------------------- */

/* SHA-256 or SHAKE256, incremental, on our compression / sponge. */
typedef struct dsig_lms_hash {
    int shake;
    union {
        struct {
            uint32_t s[8];
            uint8_t buf[64];
            uint64_t total;
        } sha;
        dsig_keccak k;
    } u;
} dsig_lms_hash;

void dsig_lms_hash_init(dsig_lms_hash *h, int shake);
void dsig_lms_hash_update(dsig_lms_hash *h, const void *in, size_t len);
/* Output n bytes (SHA-256 truncates; SHAKE squeezes n). */
void dsig_lms_hash_final(dsig_lms_hash *h, uint8_t *out, size_t n);

/* ---- verification -------------------------------------------------------------------------------- */

/* Streaming HSS verification: the signature is parsed (and its layout checked) at init, the payload
 * streams through update, final does the one-time and tree computations. */
typedef struct dsig_hss_verify_ctx {
    dsig_lms_hash h;               /* H(I ‖ u32 q ‖ D_MESG ‖ C ‖ message) of the bottom level */
    unsigned L;
    /* Into the caller's buffers (alive until final): lpub[i] is the LMS public key of level i (the
     * HSS key's for i = 0, else inside the signature), lsig[i] the LMS signature it checks. */
    const uint8_t *lpub[DSIG_HSS_L_MAX];
    const uint8_t *lsig[DSIG_HSS_L_MAX];
} dsig_hss_verify_ctx;

/* DSIG_OK, or DSIG_E_VERIFY when the layout is wrong (the error detail names what). */
int dsig_hss_verify_init(dsig_hss_verify_ctx *c, const uint8_t *pub, size_t pub_len, const uint8_t *sig,
                         size_t sig_len);
void dsig_hss_verify_update(dsig_hss_verify_ctx *c, const uint8_t *in, size_t len);
int dsig_hss_verify_final(dsig_hss_verify_ctx *c);
/* One-shot HSS and single-level LMS verification. */
int dsig_hss_verify(const uint8_t *pub, size_t pub_len, const uint8_t *msg, size_t msg_len,
                    const uint8_t *sig, size_t sig_len);
int dsig_lms_verify(const uint8_t *pub, size_t pub_len, const uint8_t *msg, size_t msg_len,
                    const uint8_t *sig, size_t sig_len);
/* Layout check of an HSS public key (u32 L in 1..8, known LMS/LM-OTS pair, exact length). */
int dsig_hss_pub_check(const uint8_t *pub, size_t pub_len);

/* ---- one LMS key: its whole Merkle tree in memory ---------------------------------------------- */

typedef struct dsig_lms_key {
    const dsig_lms_params *lp;
    const dsig_lmots_params *op;
    uint8_t I[DSIG_LMS_I_LEN];
    uint8_t seed[DSIG_LMS_N_MAX];   /* secret */
    unsigned cut;                   /* heights below `cut` are not stored (h > 20): recomputed per
                                       2^cut-leaf subtree, the last one cached */
    uint8_t *nodes;                 /* T[r] for r < 2^(h-cut+1), heap order, m bytes each */
    uint8_t *sub;                   /* cut > 0: the cached subtree, local heap order */
    int64_t sub_idx;                /* which subtree is cached (-1: none) */
    uint32_t done;                  /* leaves computed so far; 2^h once built (incremental builds
                                       of the next HSS child tree stop in between) */
    uint8_t pub[DSIG_LMS_PUB_MAX];
} dsig_lms_key;

/* @spec RFC 8554 §5.2 + Appendix A: build the key of (SEED, I) (tree-hash over all 2^h leaves). */
int dsig_lms_key_build(dsig_lms_key *k, const dsig_lms_params *lp, const dsig_lmots_params *op,
                       const uint8_t *I, const uint8_t *seed);
void dsig_lms_key_clear(dsig_lms_key *k);
/* The 24 + m byte LMS public key of a built key. */
static inline size_t dsig_lms_key_pub_len(const dsig_lms_key *k) { return 24 + k->lp->m; }
/* Public key only (ACVP keyGen): u32 type ‖ u32 otstype ‖ I ‖ T[1]. */
int dsig_lms_keygen_pub(const dsig_lms_params *lp, const dsig_lmots_params *op, const uint8_t *I,
                        const uint8_t *seed, uint8_t *pub);
/* Test hooks (per thread, never reset by the library): LM-OTS public keys computed (tree leaves, at
 * key generation, reloading, incremental child builds and H25 subtree recomputation) and LMS
 * signatures of child public keys made. tests/lms/test_lms_incr.c bounds their growth per signature. */
extern _Thread_local uint64_t dsig_lms_test_leaves;
extern _Thread_local uint64_t dsig_lms_test_child_signs;
/* Randomizer C derived as in cisco/hash-sigs (H(I ‖ u32 q ‖ u16 0xfffd ‖ 0xff ‖ SEED)). */
void dsig_lms_derive_c(const dsig_lms_key *k, uint32_t q, uint8_t *c);
/* @spec RFC 8554 §5.4.1: LMS signature of msg at leaf q with randomizer c (n bytes). sig must have
 * dsig_lms_sig_len bytes. */
int dsig_lms_sign(dsig_lms_key *k, uint32_t q, const uint8_t *c, const uint8_t *msg, size_t len,
                  uint8_t *sig);
/* Write the LMS signature except the LM-OTS y values: u32 q ‖ u32 otstype ‖ C ‖ (y left) ‖ u32 type ‖
 * path. Returns the offset of y in sig. */
size_t dsig_lms_sign_frame(dsig_lms_key *k, uint32_t q, const uint8_t *c, uint8_t *sig);
/* @spec RFC 8554 §4.5 Algorithm 3: the LM-OTS y values of the message digest Q (n bytes). */
void dsig_lmots_sign_q(const dsig_lmots_params *op, const uint8_t *I, uint32_t q, const uint8_t *seed,
                       const uint8_t *Q, uint8_t *y);

/* ---- HSS private key ------------------------------------------------------------------------------ */

typedef struct dsig_hss_priv dsig_hss_priv;

/* A private key of L levels from the top-level SEED (n bytes) and I; builds the top tree and the
 * child trees for index `next`, and the part of every level's NEXT child tree (and its signature by
 * the parent) that the signatures before `next` would have computed, so signing from `next` on keeps
 * a bounded amount of tree work per signature. All levels must use the same hash and n. */
int dsig_hss_priv_new(dsig_hss_priv **out, unsigned L, const uint32_t *lms_types,
                      const uint32_t *ots_types, const uint8_t *seed, const uint8_t *I, uint64_t next);
void dsig_hss_priv_free(dsig_hss_priv *k);
/* The HSS public key (u32 L ‖ top LMS public key). */
size_t dsig_hss_priv_pub(const dsig_hss_priv *k, uint8_t *pub);
uint64_t dsig_hss_priv_capacity(const dsig_hss_priv *k);
size_t dsig_hss_priv_sig_len(const dsig_hss_priv *k);
unsigned dsig_hss_priv_levels(const dsig_hss_priv *k, uint32_t *lms_types, uint32_t *ots_types);
/* Top-level SEED (n bytes, secret) and I. */
const uint8_t *dsig_hss_priv_seed(const dsig_hss_priv *k, size_t *n);
const uint8_t *dsig_hss_priv_I(const dsig_hss_priv *k);

/* Streaming HSS signing at a global index (the leaf counter across levels). */
typedef struct dsig_hss_sign_ctx {
    dsig_lms_hash h;
    const dsig_lmots_params *op;
    uint32_t q;
    uint8_t I[DSIG_LMS_I_LEN];
    uint8_t seed[DSIG_LMS_N_MAX];   /* bottom-level SEED (secret) */
    uint8_t *sig;                   /* the whole HSS signature, y of the final LM-OTS left to fill */
    size_t sig_len, y_off;
} dsig_hss_sign_ctx;

/* Prepare the levels for `index` (switching to the precomputed next child tree when a level rolls
 * over; rebuilding a child tree only after a jump), advance every level's next child tree by its
 * bounded slice (one leaf per level at most, plus the nodes it completes and, once complete, the
 * parent's signature of its public key), write the signature frame and start the message hash. c: the n-byte randomizer of the message signature
 * (NULL: derived, as cisco/hash-sigs does: reproducible test signatures). Thread-safe per key. */
int dsig_hss_sign_init(dsig_hss_sign_ctx *c, dsig_hss_priv *k, uint64_t index, const uint8_t *rand_c);
void dsig_hss_sign_update(dsig_hss_sign_ctx *c, const uint8_t *in, size_t len);
/* Finish; sig (sig_len bytes) stays owned by c until dsig_hss_sign_clear. */
int dsig_hss_sign_final(dsig_hss_sign_ctx *c);
void dsig_hss_sign_clear(dsig_hss_sign_ctx *c);
/* One-shot over a message in memory. */
int dsig_hss_sign(dsig_hss_priv *k, uint64_t index, const uint8_t *rand_c, const uint8_t *msg,
                  size_t len, uint8_t *sig, size_t cap, size_t *sig_len);

/* Parse "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8" (one pair per
 * HSS level, top first; "LMS_.../LMOTS_..." names or "H10/W4" shorthand for SHA-256 M32). */
int dsig_hss_parse_param(const char *s, unsigned *L, uint32_t *lms_types, uint32_t *ots_types);

#endif
