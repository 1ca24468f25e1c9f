/*
 * The algorithm registry: the concatenation of every provider's descriptor list, in a stable order.
 * Adding a family = one line in `families`.
 */
#include <string.h>

#include "core/internal.h"

static const dsig_alg *const *const families[] = {
    dsig_mac_algs,
    dsig_rsa_algs,
    dsig_ecdsa_algs,
    dsig_eddsa_algs,
    dsig_hybrid_algs,
    dsig_mldsa_algs,
    dsig_slhdsa_algs,
    dsig_falcon_algs, /* FALCON512, FALCON1024 */
    dsig_sm2_algs, dsig_gost_algs, /* regional: SM2-SM3, GOST3410-2012-256 */
    dsig_xmss_algs, /* XMSS, XMSSMT (stateful) */
    dsig_lms_algs, /* HSS-LMS (stateful) */
};

#define N_FAMILIES (sizeof families / sizeof families[0])

size_t dsig_alg_count(void)
{
    size_t n = 0;
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const dsig_alg *const *a = families[f]; *a; a++)
            n++;
    return n;
}

const dsig_alg *dsig_alg_at(size_t i)
{
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const dsig_alg *const *a = families[f]; *a; a++)
            if (i-- == 0)
                return *a;
    return NULL;
}

const dsig_alg *dsig_alg_by_name(const char *name)
{
    if (!name)
        return NULL;
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const dsig_alg *const *a = families[f]; *a; a++)
            if (strcmp((*a)->name, name) == 0)
                return *a;
    return NULL;
}

const char *dsig_alg_name(const dsig_alg *alg) { return alg->name; }
const char *dsig_alg_family(const dsig_alg *alg) { return alg->family; }
const char *dsig_alg_kty(const dsig_alg *alg) { return alg->keytype->kty; }
const char *dsig_alg_curve(const dsig_alg *alg) { return alg->keytype->crv; }
const char *dsig_alg_description(const dsig_alg *alg) { return alg->description; }
const char *dsig_alg_baseline(const dsig_alg *alg) { return alg->baseline; }
unsigned dsig_alg_security_bits(const dsig_alg *alg) { return alg->security_bits; }
unsigned dsig_alg_flags(const dsig_alg *alg) { return alg->flags; }
size_t dsig_alg_sig_max(const dsig_alg *alg) { return alg->sig_max; }
unsigned dsig_alg_default_bits(const dsig_alg *alg) { return alg->default_key_bits; }
