/*
 * src/pq/mldsa/prehash.h — the pre-hash functions HashML-DSA allows (FIPS 204 §5.4), each with the
 * DER encoding of its OID (private to the ML-DSA provider). SHAKE128/SHAKE256 run on the project's
 * sponge (src/hash/keccak.h, like μ itself); the SHA-2/SHA-3 digests on OpenSSL EVP, each EVP_MD
 * fetched once per process (thread-safe).
 */
#ifndef DSIG_PQ_MLDSA_PREHASH_H
#define DSIG_PQ_MLDSA_PREHASH_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* DER of an OID 2.16.840.1.101.3.4.2.x: tag 06, length 09, nine content bytes. */
#define DSIG_MLDSA_PH_OID_BYTES 11
/* Largest pre-hash output used (SHA-512, SHA3-512, SHAKE256 → 64 bytes). */
#define DSIG_MLDSA_PH_MAX 64

typedef struct dsig_mldsa_prehash {
    const char *name;      /* dsig_sign_opts.prehash spelling: "SHA-256", "SHAKE128", ... */
    const char *evp_name;  /* OpenSSL fetch name; NULL for the XOFs (src/hash/keccak.h) */
    uint8_t oid_arc;       /* last arc x of 2.16.840.1.101.3.4.2.x (NIST hash algorithm OIDs) */
    size_t out_len;        /* bytes of PH(M) (the XOFs: 32 for SHAKE128, 64 for SHAKE256) */
    unsigned xof_rate;     /* XOFs: Keccak rate in bytes (DSIG_SHAKE128_RATE / _256_); 0: EVP digest */
} dsig_mldsa_prehash;

/* The pre-hash called `name` (exact, case-sensitive), or NULL. */
const dsig_mldsa_prehash *dsig_mldsa_prehash_find(const char *name);
/* "SHA-224, SHA-256, ..." for error messages. */
const char *dsig_mldsa_prehash_names(void);
/* Its EVP_MD, fetched once; NULL for the XOFs and if OpenSSL cannot provide it. */
const EVP_MD *dsig_mldsa_prehash_md(const dsig_mldsa_prehash *ph);
/* Write the DER encoding of its OID (DSIG_MLDSA_PH_OID_BYTES bytes). */
void dsig_mldsa_prehash_oid(const dsig_mldsa_prehash *ph, uint8_t out[DSIG_MLDSA_PH_OID_BYTES]);
#endif
