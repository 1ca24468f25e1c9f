/*
 * src/core/internal.h — what algorithm providers (src/mac, src/classic, src/pq, ...) and the JOSE layer
 * share with the core. Not installed.
 *
 * The one abstraction: every algorithm is a `struct dsig_alg` descriptor pointing at a key type and a
 * table of operations. A provider exports a NULL-terminated array of descriptors; registry.c lists the
 * arrays. Nothing outside a provider knows its internals.
 */
#ifndef DSIG_CORE_INTERNAL_H
#define DSIG_CORE_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "dsig/dsig.h"

/* ---- errors -------------------------------------------------------------------------------- */

/* Record a detail sentence for the calling thread and return `code` (so: return dsig_fail(...)). */
int dsig_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record the OpenSSL error queue's first entry as detail (prefixed by `what`), clear it, return code. */
int dsig_fail_openssl(int code, const char *what);
/* Record `code` with a detail "PREFIX: previous detail" (PREFIX from fmt), for errors passed up with
 * context added; the previous detail is copied first (it lives in the same buffer). */
int dsig_fail_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dsig_clear_error(void);

/* ---- memory ------------------------------------------------------------------------------- */

/* Counted allocation; every library allocation goes through these. dsig_xfree wipes `n` bytes first
 * when n > 0 (pass the size for secrets), then frees. */
void *dsig_malloc(size_t n);
void *dsig_calloc(size_t count, size_t n);
void *dsig_realloc(void *p, size_t n);
char *dsig_strdup(const char *s);
void dsig_xfree(void *p, size_t wipe_len);
/* The counters behind dsig_malloc, for memory the library maps itself (secmem.c). */
void dsig_mem_account_add(size_t n);
void dsig_mem_account_sub(size_t n);

/* Page-backed memory for long-lived secrets (secmem.c). Each protection is best effort; `flags` says
 * which ones the region got. */
#define DSIG_SECMEM_NODUMP 1u     /* MADV_DONTDUMP: left out of core dumps */
#define DSIG_SECMEM_WIPEONFORK 2u /* MADV_WIPEONFORK: reads as zeros in a child made by fork, _Fork or
                                     clone without CLONE_VM */
#define DSIG_SECMEM_LOCKED 4u     /* mlock: never written to swap */
typedef struct dsig_secmem {
    void *p;                      /* page aligned, zero-filled */
    size_t len;                   /* mapped length (whole pages) */
    unsigned flags;               /* DSIG_SECMEM_* */
} dsig_secmem;
/* At least `len` bytes of secret memory into *m (zeroed). DSIG_OK, DSIG_E_NOMEM, DSIG_E_ARG. */
int dsig_secmem_alloc(dsig_secmem *m, size_t len);
/* Wipe and release a region (kept for reuse or unmapped); *m is zeroed. NULL or empty: no-op. */
void dsig_secmem_free(dsig_secmem *m);

/* ---- randomness ----------------------------------------------------------------------------- */

/*
 * A source of bytes: the OS CSPRNG (getrandom), or a deterministic SHAKE256-based DRBG seeded by the
 * caller (keys from a seed, benchmark payloads). The DRBG output is
 *   request i returns SHAKE256("dsig-drbg-v1" || u32le(len(label)) || label || seed || 0x01^i)[0..n)
 * (deterministic for a given sequence of request sizes; see rng.c).
 */
typedef struct dsig_rng {
    int seeded;
    void *xof;            /* EVP_MD_CTX* for the seeded case */
} dsig_rng;

void dsig_rng_init_os(dsig_rng *rng);
int dsig_rng_init_seeded(dsig_rng *rng, const uint8_t *seed, size_t seed_len, const char *label);
int dsig_rng_bytes(dsig_rng *rng, void *out, size_t n);
void dsig_rng_clear(dsig_rng *rng);
/* OS randomness directly. */
int dsig_random_bytes(void *out, size_t n);

/* OpenSSL pem_password_cb that refuses instead of prompting on the terminal: encrypted PEM keys fail. */
int dsig_pem_no_passphrase(char *buf, int size, int rwflag, void *u);

/* Write all of buf to fd, retrying short writes and EINTR (a write of 0 bytes counts as EIO). Returns 0
 * or the errno of the failed write; *done (may be NULL) receives the bytes written either way, so that a
 * caller can cut a partial record back. */
int dsig_write_all(int fd, const void *buf, size_t len, size_t *done);

/* Read the whole regular file open on `fd` (at most `max` bytes) into a new NUL-terminated buffer
 * (*out, free with dsig_xfree(*out, *len + 1)). `what` names it in the error detail ("what: not a
 * regular file", "what: larger than N bytes", "what: cannot read the whole file"). fd is not closed. */
int dsig_read_whole_fd(int fd, const char *what, size_t max, char **out, size_t *len);
/* Read the JWK file open on `fd` (a regular file of at most DSIG_JWK_MAX_BYTES) and import it; the text
 * is wiped (it may hold a private key). Errors name `path` ("key file \"PATH\": ..."). fd is not closed.
 * src/jose/jwk.c. */
int dsig_jwk_read_fd(int fd, const char *path, dsig_key **key);

/* ---- base64url (RFC 4648 §5, no padding, canonical) ------------------------------------------ */

size_t dsig_b64url_encoded_len(size_t n);
/* Writes encoded_len chars + NUL; out must have encoded_len+1 bytes. */
void dsig_b64url_encode(char *out, const uint8_t *in, size_t n);
/* Allocating form (NUL-terminated); NULL on OOM. */
char *dsig_b64url_encode_alloc(const uint8_t *in, size_t n);
/* Strict decode: rejects padding, characters outside the alphabet, length ≡ 1 (mod 4) and non-zero
 * trailing bits. *out is allocated (free with dsig_xfree(p, len)); returns DSIG_E_BASE64 on error. */
int dsig_b64url_decode_alloc(const char *in, size_t n, uint8_t **out, size_t *out_len);
int dsig_b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *out_len);

/* Streaming encoder: feeds base64url text of the bytes given to a sink, carrying up to 2 bytes. */
typedef int (*dsig_text_sink)(void *arg, const char *text, size_t len);
typedef struct dsig_b64url_stream {
    uint8_t carry[3];
    size_t ncarry;
    dsig_text_sink sink;
    void *arg;
} dsig_b64url_stream;
void dsig_b64url_stream_init(dsig_b64url_stream *s, dsig_text_sink sink, void *arg);
int dsig_b64url_stream_update(dsig_b64url_stream *s, const uint8_t *in, size_t n);
int dsig_b64url_stream_final(dsig_b64url_stream *s);

/* ---- hex (tests, CLI --seed) -------------------------------------------------------------- */
int dsig_hex_decode(const char *hex, uint8_t *out, size_t cap, size_t *out_len);

/* ---- key types ------------------------------------------------------------------------------ */

/*
 * JWK members travel between the JOSE layer and a key type as decoded byte strings: the JOSE layer
 * owns JSON and base64url, the key type owns the meaning. A member with data == NULL is absent.
 */
typedef struct dsig_jwk_member {
    const char *name;   /* "n", "e", "d", "x", "y", "k", ... */
    uint8_t *data;
    size_t len;
} dsig_jwk_member;

#define DSIG_JWK_MAX_MEMBERS 8

struct dsig_keytype {
    const char *kty;                 /* "RSA", "EC", "OKP", "oct", "AKP" */
    const char *crv;                 /* "P-256", "Ed25519", ...; NULL if the kty has no curve */
    const char *const *pub_members;  /* NULL-terminated, in RFC 7638 (lexicographic) order */
    const char *const *priv_members; /* NULL-terminated, private-only members */
    int has_public;                  /* 0 for oct (MAC) keys */
    int sized;                       /* 1: generate takes a size in bits (RSA modulus, MAC key);
                                        other types have one size, and keygen refuses another */

    /* Fill key->impl from generated material. bits = 0 means default. */
    int (*generate)(struct dsig_key *key, unsigned bits, dsig_rng *rng);
    /* members[i] corresponds to pub_members then priv_members, in order; absent = NULL data. */
    int (*import_jwk)(struct dsig_key *key, const dsig_jwk_member *members, size_t n);
    /* Export fills members (allocated with dsig_malloc; the caller frees with dsig_xfree(data,len)). */
    int (*export_jwk)(const struct dsig_key *key, int include_private, dsig_jwk_member *members,
                      size_t *n);
    /* PEM via OpenSSL EVP_PKEY (optional: NULL for oct). `pkey` is an EVP_PKEY*. */
    int (*to_pkey)(const struct dsig_key *key, int include_private, void **pkey);
    int (*from_pkey)(struct dsig_key *key, void *pkey);
    int (*public_copy)(struct dsig_key *dst, const struct dsig_key *src);
    void (*destroy)(struct dsig_key *key);    /* wipe and free impl */
    unsigned (*bits)(const struct dsig_key *key);
    /* Key types that a JWK names by "alg" rather than "crv" (AKP, RFC 9964: one type per ML-DSA
     * set): the required "alg" value; NULL for the others. The JWK layer looks such a type up by
     * (kty, alg), writes "alg" on export and includes it in the RFC 7638 thumbprint. */
    const char *alg;
    /* Stateful key types (LMS/HSS, XMSS): how their private part lives in a state file (NULL for the
     * others). See include/dsig/state.h and src/core/statefile.c. */
    const struct dsig_stateful_ops *stateful;
    /* Optional: generate for a named parameter set (dsig_keygen_params.param; NULL = the type's
     * default set). When set, dsig_key_generate calls it instead of generate; a param given to a
     * type without it is refused (DSIG_E_UNSUPPORTED). Unknown names: DSIG_E_ARG naming the valid
     * ones. For HSS-LMS / XMSS / XMSSMT, whose one JOSE name covers many RFC parameter sets. */
    int (*generate_param)(struct dsig_key *key, const char *param, unsigned bits, dsig_rng *rng);
};

/* What a stateful key type gives the state-file layer. */
struct dsig_stateful_ops {
    /* Private material to store (everything but the counter), allocated with dsig_malloc; the core
     * wipes and frees it. */
    int (*save_private)(const struct dsig_key *key, uint8_t **out, size_t *len);
    /* Rebuild key->impl from saved material; `next` is the first index this process may use (the
     * provider brings any traversal state to it). */
    int (*load_private)(struct dsig_key *key, const uint8_t *in, size_t len, uint64_t next);
    /* How many signatures the key can make in total (2^h, or the product over HSS/MT levels). */
    uint64_t (*capacity)(const struct dsig_key *key);
    /* Optional: cheap consistency check of saved material against the stored public key, run before
     * load_private rebuilds any tree (a parameter code edited in the file would otherwise make the
     * load rebuild a tree of up to 2^25 leaves before the public-key comparison refuses it). */
    int (*check_private)(const uint8_t *priv, size_t priv_len, const uint8_t *pub, size_t pub_len);
};

/* For providers' sign_init: the next unused index of a key opened from a state file. The index is
 * durably reserved before this returns. DSIG_E_EXHAUSTED when none are left; DSIG_E_STATE when the
 * key has no state file (stateful keys never sign from memory). Thread-safe. */
int dsig_state_take_index(const struct dsig_key *key, uint64_t *index);
/* Release a key's state file (unlock, close, wipe the private copy); key.c's dsig_key_free. */
void dsig_state_close(struct dsig_key *key);

struct dsig_key {
    const struct dsig_keytype *type;
    const dsig_alg *alg;     /* bound algorithm or NULL */
    int has_private;
    void *impl;
    struct dsig_state_file *state; /* open state file of a stateful key, else NULL (statefile.c) */
    char *kid;               /* the JWK's own "kid" (dsig_malloc), or NULL: the RFC 7638 thumbprint */
};

/* All key types, NULL-terminated (keytypes.c). */
extern const struct dsig_keytype *const dsig_keytypes[];
const struct dsig_keytype *dsig_keytype_find(const char *kty, const char *crv);
/* As dsig_keytype_find, for JWK import: a type with a non-NULL `alg` matches only that "alg". */
const struct dsig_keytype *dsig_keytype_find_jwk(const char *kty, const char *crv, const char *alg);
/* 1 if some key type of this kty is selected by "alg" (then a JWK of that kty must carry "alg"). */
int dsig_keytype_kty_needs_alg(const char *kty);
/* Allocate an empty key of a type (impl NULL). */
struct dsig_key *dsig_key_new(const struct dsig_keytype *type);

/* ---- algorithms ----------------------------------------------------------------------------- */

struct dsig_alg_ops {
    /* Streaming sign. *state is allocated by init; final writes the signature but does not free. */
    int (*sign_init)(void **state, const dsig_alg *alg, const struct dsig_key *key);
    int (*sign_update)(void *state, const uint8_t *data, size_t len);
    int (*sign_final)(void *state, uint8_t *sig, size_t cap, size_t *sig_len);
    /* Streaming verify; the signature is known at init. final returns DSIG_OK or DSIG_E_VERIFY. */
    int (*verify_init)(void **state, const dsig_alg *alg, const struct dsig_key *key,
                       const uint8_t *sig, size_t sig_len);
    int (*verify_update)(void *state, const uint8_t *data, size_t len);
    int (*verify_final)(void *state);
    /* Wipe and free a state from either direction. */
    void (*free_state)(void *state);
    /* Optional one-shot over an in-memory message (e.g. exact RFC 8032). NULL: streaming is used. */
    int (*sign_oneshot)(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg,
                        size_t len, uint8_t *sig, size_t cap, size_t *sig_len);
    int (*verify_oneshot)(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg,
                          size_t len, const uint8_t *sig, size_t sig_len);
    /* Optional (algorithms flagged DSIG_ALG_OPTIONS): init with non-default options. The core only
     * calls these when opts differ from the defaults, after checking context_len <= 255; without
     * them it refuses such options. The one-shot hooks above are bypassed when options are given. */
    int (*sign_init_opts)(void **state, const dsig_alg *alg, const struct dsig_key *key,
                          const dsig_sign_opts *opts);
    int (*verify_init_opts)(void **state, const dsig_alg *alg, const struct dsig_key *key,
                            const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts);
    /* Optional options-aware one-shot over an in-memory message (opts may be NULL = defaults;
     * context length already checked). When set, dsig_sign_ex uses it with or without options,
     * ahead of sign_oneshot: for schemes whose exact signature reads the message twice (SLH-DSA). */
    int (*sign_oneshot_opts)(const dsig_alg *alg, const struct dsig_key *key, const uint8_t *msg,
                             size_t len, uint8_t *sig, size_t cap, size_t *sig_len,
                             const dsig_sign_opts *opts);
    /* Optional two-pass signing (algorithms flagged DSIG_ALG_TWO_PASS): init (opts may be NULL),
     * sign_update over pass 1, sign_next_pass, sign_update over pass 2, sign_final. The core
     * checks the pass order and equal byte totals. */
    int (*sign_init_two_pass)(void **state, const dsig_alg *alg, const struct dsig_key *key,
                              const dsig_sign_opts *opts);
    int (*sign_next_pass)(void *state);
};

struct dsig_alg {
    const char *name;                     /* JOSE alg */
    const char *family;                   /* "HMAC", "RSASSA-PSS", ... */
    const char *description;
    const struct dsig_keytype *keytype;   /* the key type it takes */
    const char *baseline;                 /* bare hash for benchmarks: "SHA-256", "SHAKE256", ... */
    unsigned security_bits;
    unsigned flags;                       /* DSIG_ALG_* */
    size_t sig_max;
    unsigned min_key_bits;                /* refuse smaller keys (RSA 2048; MAC: hash output) */
    unsigned default_key_bits;            /* keygen default (RSA 2048; MAC key size) */
    const struct dsig_alg_ops *ops;
    const void *params;                   /* provider-private parameters */
    /* Optional, NULL-terminated: every key type the algorithm accepts, for a JOSE name that covers
     * several curves (GOST3410-2012-256: GOST-256-A..D). NULL = `keytype` only. `keytype` stays the
     * default (keygen without a param, dsig_alg_curve) and must be in the list. */
    const struct dsig_keytype *const *keytypes;
    /* 1: never chosen for an unbound key from its type alone (dsig_key_infer_alg): a key is used
     * with this algorithm only when bound to it or when the caller names it. DSig takes the keys
     * of Ed25519; an unbound Ed25519 key is an Ed25519 key. */
    int explicit_only;
};

/* 1 if alg takes keys of type t (its keytype, or one of its optional keytypes list), else 0. */
int dsig_alg_takes_keytype(const dsig_alg *alg, const struct dsig_keytype *t);

/* Provider descriptor lists (NULL-terminated). registry.c lists them; add one line per family. */
extern const dsig_alg *const dsig_mac_algs[];
extern const dsig_alg *const dsig_rsa_algs[];
extern const dsig_alg *const dsig_ecdsa_algs[];
extern const dsig_alg *const dsig_eddsa_algs[];
extern const dsig_alg *const dsig_hybrid_algs[];
extern const dsig_alg *const dsig_mldsa_algs[];
extern const dsig_alg *const dsig_slhdsa_algs[];
extern const dsig_alg *const dsig_falcon_algs[]; /* FALCON512, FALCON1024 (src/pq/falcon) */
extern const dsig_alg *const dsig_sm2_algs[];  /* SM2-SM3 (src/classic/sm2.c) */
extern const dsig_alg *const dsig_gost_algs[]; /* GOST3410-2012-256 (src/classic/gost.c) */
extern const dsig_alg *const dsig_xmss_algs[];  /* XMSS, XMSSMT (src/pq/xmss/xmss_alg.c) */
extern const dsig_alg *const dsig_lms_algs[];   /* HSS-LMS (src/pq/lms/lms_alg.c) */

/* Key types defined by providers (listed in keytypes.c). */
extern const struct dsig_keytype dsig_keytype_oct;
extern const struct dsig_keytype dsig_keytype_rsa;
extern const struct dsig_keytype dsig_keytype_p256;
extern const struct dsig_keytype dsig_keytype_p384;
extern const struct dsig_keytype dsig_keytype_p521;
extern const struct dsig_keytype dsig_keytype_ed25519;
extern const struct dsig_keytype dsig_keytype_ed448;
extern const struct dsig_keytype dsig_keytype_mldsa44; /* AKP, "alg" ML-DSA-44 (src/pq/mldsa) */
extern const struct dsig_keytype dsig_keytype_mldsa65;
extern const struct dsig_keytype dsig_keytype_mldsa87;
/* AKP, "alg" SLH-DSA-SHA2-128s ... SLH-DSA-SHAKE-256f (src/pq/slhdsa/slhdsa_alg.c) */
extern const struct dsig_keytype dsig_keytype_slhdsa_sha2_128s, dsig_keytype_slhdsa_sha2_128f,
    dsig_keytype_slhdsa_sha2_192s, dsig_keytype_slhdsa_sha2_192f, dsig_keytype_slhdsa_sha2_256s,
    dsig_keytype_slhdsa_sha2_256f, dsig_keytype_slhdsa_shake_128s, dsig_keytype_slhdsa_shake_128f,
    dsig_keytype_slhdsa_shake_192s, dsig_keytype_slhdsa_shake_192f, dsig_keytype_slhdsa_shake_256s,
    dsig_keytype_slhdsa_shake_256f;

/* EC "SM2" (src/classic/sm2.c) and EC "GOST-256-A".."GOST-256-D" = id-tc26-gost-3410-2012-256-
 * paramSetA..D (src/classic/gost.c; B is the default); see docs/regional.md. */
extern const struct dsig_keytype dsig_keytype_sm2;
extern const struct dsig_keytype dsig_keytype_gost256b;
extern const struct dsig_keytype dsig_keytype_gost256a, dsig_keytype_gost256c, dsig_keytype_gost256d;
/* AKP, "alg" XMSS / XMSSMT (stateful; src/pq/xmss/xmss_alg.c) */
extern const struct dsig_keytype dsig_keytype_xmss, dsig_keytype_xmssmt;
/* AKP, "alg" HSS-LMS (stateful; src/pq/lms/lms_alg.c) */
extern const struct dsig_keytype dsig_keytype_hss_lms;

/* AKP, "alg" FALCON512 / FALCON1024 (src/pq/falcon/falcon_alg.c) */
extern const struct dsig_keytype dsig_keytype_falcon512, dsig_keytype_falcon1024;

/* Backends are started once (libsodium, libgcrypt). */
int dsig_backend_init(void);

#endif
