/* src/pq/mldsa/params.c — the three ML-DSA parameter sets and their encoded sizes. */
#include <string.h>

#include "pq/mldsa/mldsa.h"

/*
 * @spec FIPS 204 §4 Table 1 (parameters) and Table 2 (sizes of pk, sk, signature in bytes).
 * Sizes follow from the parameters: pk = 32 + 320k; sk = 128 + 32·((k+l)·bitlen(2η) + 13k);
 * sig = λ/4 + 32·l·(1 + bitlen(γ1 - 1)) + ω + k.
 */
const dsig_mldsa_params dsig_mldsa44 = {
    .name = "ML-DSA-44", .k = 4, .l = 4, .eta = 2, .tau = 39, .beta = 78,
    .gamma1 = 1 << 17, .gamma2 = (DSIG_MLDSA_Q - 1) / 88, .omega = 80, .lambda = 128,
    .pk_bytes = 1312, .sk_bytes = 2560, .sig_bytes = 2420,
};
const dsig_mldsa_params dsig_mldsa65 = {
    .name = "ML-DSA-65", .k = 6, .l = 5, .eta = 4, .tau = 49, .beta = 196,
    .gamma1 = 1 << 19, .gamma2 = (DSIG_MLDSA_Q - 1) / 32, .omega = 55, .lambda = 192,
    .pk_bytes = 1952, .sk_bytes = 4032, .sig_bytes = 3309,
};
const dsig_mldsa_params dsig_mldsa87 = {
    .name = "ML-DSA-87", .k = 8, .l = 7, .eta = 2, .tau = 60, .beta = 120,
    .gamma1 = 1 << 19, .gamma2 = (DSIG_MLDSA_Q - 1) / 32, .omega = 75, .lambda = 256,
    .pk_bytes = 2592, .sk_bytes = 4896, .sig_bytes = 4627,
};

/* The parameter set named name (exact FIPS 204 spelling), or NULL. */
const dsig_mldsa_params *dsig_mldsa_params_by_name(const char *name)
{
    static const dsig_mldsa_params *const all[] = {&dsig_mldsa44, &dsig_mldsa65, &dsig_mldsa87};
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}
