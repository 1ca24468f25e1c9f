/* Every key type, for JWK and PEM import (lookup by kty + crv). */
#include <string.h>

#include "core/internal.h"

const struct dsig_keytype *const dsig_keytypes[] = {
    &dsig_keytype_oct,  &dsig_keytype_rsa,     &dsig_keytype_p256, &dsig_keytype_p384,
    &dsig_keytype_p521, &dsig_keytype_ed25519, &dsig_keytype_ed448, &dsig_keytype_mldsa44,
    &dsig_keytype_mldsa65, &dsig_keytype_mldsa87,
    &dsig_keytype_slhdsa_sha2_128s, &dsig_keytype_slhdsa_sha2_128f, &dsig_keytype_slhdsa_sha2_192s,
    &dsig_keytype_slhdsa_sha2_192f, &dsig_keytype_slhdsa_sha2_256s, &dsig_keytype_slhdsa_sha2_256f,
    &dsig_keytype_slhdsa_shake_128s, &dsig_keytype_slhdsa_shake_128f, &dsig_keytype_slhdsa_shake_192s,
    &dsig_keytype_slhdsa_shake_192f, &dsig_keytype_slhdsa_shake_256s, &dsig_keytype_slhdsa_shake_256f,
    &dsig_keytype_sm2, &dsig_keytype_gost256b, /* regional (src/classic/sm2.c, gost.c) */
    &dsig_keytype_gost256a, &dsig_keytype_gost256c, &dsig_keytype_gost256d, /* GOST3410-2012-256 */
    &dsig_keytype_xmss, &dsig_keytype_xmssmt, /* stateful (src/pq/xmss) */
    &dsig_keytype_hss_lms, /* stateful (src/pq/lms) */
    &dsig_keytype_falcon512, &dsig_keytype_falcon1024, /* src/pq/falcon */
    NULL,
};

/* Does type t answer to (kty, crv, alg)? A type named by "alg" needs that exact "alg". */
static int type_matches(const struct dsig_keytype *t, const char *kty, const char *crv, const char *alg)
{
    if (strcmp(t->kty, kty) != 0)
        return 0;
    if (t->alg)
        return crv == NULL && alg && strcmp(t->alg, alg) == 0;
    if (t->crv == NULL && crv == NULL)
        return 1;
    return t->crv && crv && strcmp(t->crv, crv) == 0;
}

const struct dsig_keytype *dsig_keytype_find_jwk(const char *kty, const char *crv, const char *alg)
{
    for (const struct dsig_keytype *const *t = dsig_keytypes; *t; t++)
        if (type_matches(*t, kty, crv, alg))
            return *t;
    return NULL;
}

const struct dsig_keytype *dsig_keytype_find(const char *kty, const char *crv)
{
    return dsig_keytype_find_jwk(kty, crv, NULL);
}

int dsig_keytype_kty_needs_alg(const char *kty)
{
    for (const struct dsig_keytype *const *t = dsig_keytypes; *t; t++)
        if ((*t)->alg && strcmp((*t)->kty, kty) == 0)
            return 1;
    return 0;
}
