/*
 * The algorithm registry: the concatenation of every family's descriptor list, in a stable order. It
 * is the one list of what the library offers; key types come from the descriptors (keytypes.c).
 *
 * Adding a family = one descriptor file exporting `const dsig_alg *const dsig_NAME_algs[]` (NULL-
 * terminated) and one line in DSIG_FAMILIES below (docs/adding-an-algorithm.md).
 */
#include <string.h>

#include "core/keytype.h"
#include "core/provider.h"

/* Every family, in registry order (the order of `dsig list` and of key-type lookup). */
#define DSIG_FAMILIES(X)                                                                           \
    X(dsig_mac_algs)    /* HMAC, KMAC, CMAC (src/mac/mac.c) */                                     \
    X(dsig_rsa_algs)    /* RS*, PS* (src/classic/rsa.c) */                                         \
    X(dsig_ecdsa_algs)  /* ES256, ES384, ES512 (src/classic/ecdsa.c) */                            \
    X(dsig_eddsa_algs)  /* Ed25519, Ed448 (src/classic/eddsa_common.c) */                          \
    X(dsig_hybrid_algs) /* DSig (src/hybrid/hybrid_alg.c) */                                       \
    X(dsig_mldsa_algs)  /* ML-DSA-44/65/87 (src/pq/mldsa/mldsa_alg.c) */                           \
    X(dsig_slhdsa_algs) /* SLH-DSA-* (src/pq/slhdsa/slhdsa_alg.c) */                               \
    X(dsig_falcon_algs) /* FALCON512, FALCON1024 (src/pq/falcon/falcon_alg.c) */                   \
    X(dsig_sm2_algs)    /* SM2-SM3 (src/classic/sm2.c) */                                          \
    X(dsig_gost_algs)   /* GOST3410-2012-256 (src/classic/gost.c) */                               \
    X(dsig_xmss_algs)   /* XMSS, XMSSMT, stateful (src/pq/xmss/xmss_alg.c) */                      \
    X(dsig_lms_algs)    /* HSS-LMS, stateful (src/pq/lms/lms_alg.c) */

/* The families' lists are declared here and nowhere else: only the registry reaches them. */
#define DSIG_FAMILY_DECLARE(list) extern const dsig_alg *const list[];
DSIG_FAMILIES(DSIG_FAMILY_DECLARE)

#define DSIG_FAMILY_ENTRY(list) list,
static const dsig_alg *const *const families[] = {DSIG_FAMILIES(DSIG_FAMILY_ENTRY)};

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
