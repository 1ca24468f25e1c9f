/*
 * src/core/keytype.h — key types and the key object (key.c, keytypes.c). Not installed.
 *
 * A key type says how the keys of one kind (kty + crv, or kty + alg for AKP) are made, imported,
 * exported and destroyed; a provider defines it next to its algorithms and names it from their
 * descriptors (core/provider.h). The core finds every key type through the registry's descriptors:
 * no list of key types is kept anywhere else.
 */
#ifndef DSIG_CORE_KEYTYPE_H
#define DSIG_CORE_KEYTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"
#include "dsig/dsig.h"

struct dsig_stateful_ops; /* core/stateful.h */

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

/* What a key type gives the core. Every hook returns DSIG_OK or a DSIG_E_* code with the detail
 * recorded (core/error_internal.h). */
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
    /* PEM via OpenSSL EVP_PKEY (optional: NULL for oct). `pkey` is an EVP_PKEY*. from_pkey answers
     * DSIG_E_KEY_MISMATCH for an EVP_PKEY of another type (the next key type is tried). */
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
     * others). See core/stateful.h and include/dsig/state.h. */
    const struct dsig_stateful_ops *stateful;
    /* Optional: generate for a named parameter set (dsig_keygen_params.param; NULL = the type's
     * default set). When set, dsig_key_generate calls it instead of generate; a param given to a
     * type without it is refused (DSIG_E_UNSUPPORTED). Unknown names: DSIG_E_ARG naming the valid
     * ones. For HSS-LMS / XMSS / XMSSMT, whose one JOSE name covers many RFC parameter sets. */
    int (*generate_param)(struct dsig_key *key, const char *param, unsigned bits, dsig_rng *rng);
};

struct dsig_key {
    const struct dsig_keytype *type;
    const dsig_alg *alg;     /* bound algorithm or NULL */
    int has_private;
    void *impl;
    struct dsig_state_file *state; /* open state file of a stateful key, else NULL (statefile.c) */
    char *kid;               /* the JWK's own "kid" (dsig_malloc), or NULL: the RFC 7638 thumbprint */
};

/*
 * Every key type the registered algorithms take, each once, in registry order (an algorithm's
 * `keytype`, then its `keytypes` list): a NULL-terminated array built on first use (thread-safe).
 * Order matters where the first match wins (PEM import tries from_pkey in this order).
 */
const struct dsig_keytype *const *dsig_keytype_list(void);

/* The key type answering (kty, crv) (crv NULL: a kty without curves); NULL if none. Types named by
 * "alg" never match here. */
const struct dsig_keytype *dsig_keytype_find(const char *kty, const char *crv);

/* As dsig_keytype_find, for JWK import: a type with a non-NULL `alg` matches only that "alg". */
const struct dsig_keytype *dsig_keytype_find_jwk(const char *kty, const char *crv, const char *alg);

/* 1 if some key type of this kty is selected by "alg" (then a JWK of that kty must carry "alg"),
 * else 0. */
int dsig_keytype_kty_needs_alg(const char *kty);

/* A new empty key of a type (impl NULL; free with dsig_key_free); NULL on OOM. */
struct dsig_key *dsig_key_new(const struct dsig_keytype *type);

/* OpenSSL pem_password_cb that refuses instead of prompting on the terminal: encrypted PEM keys fail
 * (key.c). Always returns -1. */
int dsig_pem_no_passphrase(char *buf, int size, int rwflag, void *u);

#endif
