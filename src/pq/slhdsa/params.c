/*
 * src/pq/slhdsa/params.c — the twelve parameter-set descriptors (FIPS 205 Table 2) and name lookup.
 */
#include "pq/slhdsa/params.h"

#include <string.h>

#include "pq/slhdsa/hash.h"

/* One descriptor from Table 2's columns; the derived sizes are computed here so they cannot drift. */
#define SLH_SET(sym, nm, fam, ops_, n_, h_, d_, a_, k_, m_, cat_)                                  \
    const dsig_slhdsa_params sym = {                                                              \
        .name = nm, .family = fam, .n = n_, .h = h_, .d = d_, .hp = (h_) / (d_), .a = a_, .k = k_, \
        .lg_w = 4, .m = m_, .category = cat_, .len = 2 * (n_) + 3, .pk_bytes = 2 * (n_),           \
        .sk_bytes = 4 * (n_),                                                                     \
        .sig_bytes = (size_t)(1 + (k_) * (1 + (a_)) + (h_) + (d_) * (2 * (n_) + 3)) * (n_),       \
        .ops = &ops_}

/* @spec FIPS 205 §11 Table 2: n, h, d, h', a, k, lg_w, m, security category. */
SLH_SET(dsig_slhdsa_sha2_128s, "SLH-DSA-SHA2-128s", DSIG_SLHDSA_SHA2, dsig_slhdsa_sha2_ops, 16, 63, 7, 12, 14, 30, 1);
SLH_SET(dsig_slhdsa_shake_128s, "SLH-DSA-SHAKE-128s", DSIG_SLHDSA_SHAKE, dsig_slhdsa_shake_ops, 16, 63, 7, 12, 14, 30, 1);
SLH_SET(dsig_slhdsa_sha2_128f, "SLH-DSA-SHA2-128f", DSIG_SLHDSA_SHA2, dsig_slhdsa_sha2_ops, 16, 66, 22, 6, 33, 34, 1);
SLH_SET(dsig_slhdsa_shake_128f, "SLH-DSA-SHAKE-128f", DSIG_SLHDSA_SHAKE, dsig_slhdsa_shake_ops, 16, 66, 22, 6, 33, 34, 1);
SLH_SET(dsig_slhdsa_sha2_192s, "SLH-DSA-SHA2-192s", DSIG_SLHDSA_SHA2, dsig_slhdsa_sha2_ops, 24, 63, 7, 14, 17, 39, 3);
SLH_SET(dsig_slhdsa_shake_192s, "SLH-DSA-SHAKE-192s", DSIG_SLHDSA_SHAKE, dsig_slhdsa_shake_ops, 24, 63, 7, 14, 17, 39, 3);
SLH_SET(dsig_slhdsa_sha2_192f, "SLH-DSA-SHA2-192f", DSIG_SLHDSA_SHA2, dsig_slhdsa_sha2_ops, 24, 66, 22, 8, 33, 42, 3);
SLH_SET(dsig_slhdsa_shake_192f, "SLH-DSA-SHAKE-192f", DSIG_SLHDSA_SHAKE, dsig_slhdsa_shake_ops, 24, 66, 22, 8, 33, 42, 3);
SLH_SET(dsig_slhdsa_sha2_256s, "SLH-DSA-SHA2-256s", DSIG_SLHDSA_SHA2, dsig_slhdsa_sha2_ops, 32, 64, 8, 14, 22, 47, 5);
SLH_SET(dsig_slhdsa_shake_256s, "SLH-DSA-SHAKE-256s", DSIG_SLHDSA_SHAKE, dsig_slhdsa_shake_ops, 32, 64, 8, 14, 22, 47, 5);
SLH_SET(dsig_slhdsa_sha2_256f, "SLH-DSA-SHA2-256f", DSIG_SLHDSA_SHA2, dsig_slhdsa_sha2_ops, 32, 68, 17, 9, 35, 49, 5);
SLH_SET(dsig_slhdsa_shake_256f, "SLH-DSA-SHAKE-256f", DSIG_SLHDSA_SHAKE, dsig_slhdsa_shake_ops, 32, 68, 17, 9, 35, 49, 5);

const dsig_slhdsa_params *const dsig_slhdsa_all[] = {
    &dsig_slhdsa_sha2_128s,  &dsig_slhdsa_sha2_128f,  &dsig_slhdsa_sha2_192s,
    &dsig_slhdsa_sha2_192f,  &dsig_slhdsa_sha2_256s,  &dsig_slhdsa_sha2_256f,
    &dsig_slhdsa_shake_128s, &dsig_slhdsa_shake_128f, &dsig_slhdsa_shake_192s,
    &dsig_slhdsa_shake_192f, &dsig_slhdsa_shake_256s, &dsig_slhdsa_shake_256f,
    NULL,
};

/* Linear search over the twelve names (lookup happens once per key, not per operation). */
const dsig_slhdsa_params *dsig_slhdsa_params_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; dsig_slhdsa_all[i] != NULL; i++)
        if (strcmp(dsig_slhdsa_all[i]->name, name) == 0)
            return dsig_slhdsa_all[i];
    return NULL;
}
