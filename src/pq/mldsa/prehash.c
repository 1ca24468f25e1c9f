/*
 * The HashML-DSA pre-hash functions (FIPS 204 §5.4): their table, OIDs and, for the SHA-2/SHA-3
 * digests, the OpenSSL EVP_MDs (each fetched once).
 *
 * SHAKE128/SHAKE256 (and μ) are not here: they run on src/hash/keccak.h, whose sponge absorbs 64 KiB
 * chunks faster than OpenSSL 3.0's EVP SHAKE256 on this project's machines (~611 vs ~563 MiB/s,
 * `dsig bench keccak`) and has no per-call EVP overhead; see docs/mldsa.md.
 */
#include <pthread.h>
#include <string.h>

#include "hash/keccak.h"
#include "pq/mldsa/prehash.h"

/* @spec FIPS 204 §5.4 (HashML-DSA: the approved hash functions and XOFs) with the NIST OIDs
 * 2.16.840.1.101.3.4.2.x (CSOR); SHAKE128 gives 256 bits and SHAKE256 512 bits of output. */
static const dsig_mldsa_prehash table[] = {
    {"SHA-224", "SHA2-224", 4, 28, 0},        {"SHA-256", "SHA2-256", 1, 32, 0},
    {"SHA-384", "SHA2-384", 2, 48, 0},        {"SHA-512", "SHA2-512", 3, 64, 0},
    {"SHA-512/224", "SHA2-512/224", 5, 28, 0}, {"SHA-512/256", "SHA2-512/256", 6, 32, 0},
    {"SHA3-224", "SHA3-224", 7, 28, 0},       {"SHA3-256", "SHA3-256", 8, 32, 0},
    {"SHA3-384", "SHA3-384", 9, 48, 0},       {"SHA3-512", "SHA3-512", 10, 64, 0},
    {"SHAKE128", NULL, 11, 32, DSIG_SHAKE128_RATE}, {"SHAKE256", NULL, 12, 64, DSIG_SHAKE256_RATE},
};

#define N_PREHASH (sizeof table / sizeof table[0])

static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *mds[N_PREHASH];

/* Fetch every EVP digest from the default library context, once (failures leave NULL). */
static void fetch_all(void)
{
    for (size_t i = 0; i < N_PREHASH; i++)
        if (table[i].evp_name)
            mds[i] = EVP_MD_fetch(NULL, table[i].evp_name, NULL);
}

/* Table lookup by the dsig_sign_opts name. */
const dsig_mldsa_prehash *dsig_mldsa_prehash_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < N_PREHASH; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

/* The accepted names, for messages. */
const char *dsig_mldsa_prehash_names(void)
{
    return "SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, SHA-512/256, SHA3-224, SHA3-256, "
           "SHA3-384, SHA3-512, SHAKE128, SHAKE256";
}

/* The fetched EVP_MD of a table entry. */
const EVP_MD *dsig_mldsa_prehash_md(const dsig_mldsa_prehash *ph)
{
    pthread_once(&md_once, fetch_all);
    return mds[ph - table];
}

/* @spec FIPS 204 §5.4.1 (OID encoded in DER as part of M'): 06 09 60 86 48 01 65 03 04 02 x. */
void dsig_mldsa_prehash_oid(const dsig_mldsa_prehash *ph, uint8_t out[DSIG_MLDSA_PH_OID_BYTES])
{
    static const uint8_t prefix[DSIG_MLDSA_PH_OID_BYTES - 1] = {0x06, 0x09, 0x60, 0x86, 0x48,
                                                                0x01, 0x65, 0x03, 0x04, 0x02};
    memcpy(out, prefix, sizeof prefix);
    out[DSIG_MLDSA_PH_OID_BYTES - 1] = ph->oid_arc;
}

