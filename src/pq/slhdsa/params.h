/*
 * src/pq/slhdsa/params.h — the twelve SLH-DSA parameter sets (FIPS 205 §11, Table 2) and the sizes
 * they imply. One descriptor per set; the code takes a pointer and never switches on names. The hash
 * family (SHA2 or SHAKE, §11.1/§11.2) is a table of operations (hash.h) the descriptor points at.
 */
#ifndef DSIG_PQ_SLHDSA_PARAMS_H
#define DSIG_PQ_SLHDSA_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#define DSIG_SLHDSA_NMAX 32     /* largest n (category 5) */
#define DSIG_SLHDSA_MMAX 49     /* largest m (SLH-DSA-*-256f) */
#define DSIG_SLHDSA_LENMAX 67   /* largest WOTS+ len = 2n + 3 */
#define DSIG_SLHDSA_KMAX 35     /* largest FORS k */
#define DSIG_SLHDSA_AMAX 14     /* largest FORS a */
#define DSIG_SLHDSA_HPMAX 9     /* largest XMSS height h' */
#define DSIG_SLHDSA_DMAX 22     /* largest hypertree depth d */
#define DSIG_SLHDSA_LG_W 4      /* lg_w, the same for every set */
#define DSIG_SLHDSA_W 16        /* w = 2^lg_w */

struct dsig_slhdsa_hash_ops;

typedef enum { DSIG_SLHDSA_SHA2 = 0, DSIG_SLHDSA_SHAKE = 1 } dsig_slhdsa_family;

typedef struct dsig_slhdsa_params {
    const char *name;          /* FIPS 205 name: "SLH-DSA-SHA2-128s" ... "SLH-DSA-SHAKE-256f" */
    dsig_slhdsa_family family;
    unsigned n;                /* security parameter, bytes (16/24/32) */
    unsigned h;                /* total hypertree height */
    unsigned d;                /* hypertree layers */
    unsigned hp;               /* h' = h/d, height of one XMSS tree */
    unsigned a;                /* FORS tree height */
    unsigned k;                /* FORS trees */
    unsigned lg_w;             /* always 4 */
    unsigned m;                /* H_msg output bytes */
    unsigned category;         /* NIST security category 1/3/5 */
    unsigned len;              /* WOTS+ chains: len1 + len2 = 2n + 3 */
    size_t pk_bytes;           /* 2n: PK.seed ‖ PK.root */
    size_t sk_bytes;           /* 4n: SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root */
    size_t sig_bytes;          /* (1 + k(1+a) + h + d·len)·n */
    const struct dsig_slhdsa_hash_ops *ops;
} dsig_slhdsa_params;

extern const dsig_slhdsa_params dsig_slhdsa_sha2_128s, dsig_slhdsa_sha2_128f, dsig_slhdsa_sha2_192s,
    dsig_slhdsa_sha2_192f, dsig_slhdsa_sha2_256s, dsig_slhdsa_sha2_256f, dsig_slhdsa_shake_128s,
    dsig_slhdsa_shake_128f, dsig_slhdsa_shake_192s, dsig_slhdsa_shake_192f, dsig_slhdsa_shake_256s,
    dsig_slhdsa_shake_256f;

/* All twelve, NULL-terminated, in FIPS 205 Table 2 order (SHA2 then SHAKE). */
extern const dsig_slhdsa_params *const dsig_slhdsa_all[];

/* The set with that FIPS 205 name (exact, case-sensitive) or NULL. */
const dsig_slhdsa_params *dsig_slhdsa_params_by_name(const char *name);

#endif
