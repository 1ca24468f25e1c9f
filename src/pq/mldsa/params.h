/*
 * src/pq/mldsa/params.h — the three ML-DSA parameter sets (FIPS 204 §4, Table 1) and the sizes they
 * imply (Table 2). One descriptor per set; the code takes a pointer and never switches on names.
 */
#ifndef DSIG_PQ_MLDSA_PARAMS_H
#define DSIG_PQ_MLDSA_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#define DSIG_MLDSA_N 256
#define DSIG_MLDSA_Q 8380417
#define DSIG_MLDSA_D 13
#define DSIG_MLDSA_KMAX 8 /* largest k (ML-DSA-87) */
#define DSIG_MLDSA_LMAX 7 /* largest l (ML-DSA-87) */

typedef struct dsig_mldsa_params {
    const char *name;    /* "ML-DSA-44" ... */
    unsigned k, l;       /* matrix A is k × l */
    unsigned eta;        /* secret coefficient bound */
    unsigned tau;        /* ±1 count in the challenge */
    unsigned beta;       /* tau * eta */
    int32_t gamma1;      /* y coefficient range */
    int32_t gamma2;      /* low-order rounding range */
    unsigned omega;      /* max 1s in the hint */
    unsigned lambda;     /* collision strength; c~ is lambda/4 bytes */
    size_t pk_bytes, sk_bytes, sig_bytes;
} dsig_mldsa_params;

extern const dsig_mldsa_params dsig_mldsa44, dsig_mldsa65, dsig_mldsa87;

#endif
