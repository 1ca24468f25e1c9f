/* Every key type, for JWK and PEM import (lookup by kty + crv). */
#include <string.h>

#include "core/internal.h"

const struct dsig_keytype *const dsig_keytypes[] = {
    &dsig_keytype_oct,  &dsig_keytype_rsa,     &dsig_keytype_p256, &dsig_keytype_p384,
    &dsig_keytype_p521, &dsig_keytype_ed25519, &dsig_keytype_ed448, NULL,
};

const struct dsig_keytype *dsig_keytype_find(const char *kty, const char *crv)
{
    for (const struct dsig_keytype *const *t = dsig_keytypes; *t; t++) {
        if (strcmp((*t)->kty, kty) != 0)
            continue;
        if ((*t)->crv == NULL && crv == NULL)
            return *t;
        if ((*t)->crv && crv && strcmp((*t)->crv, crv) == 0)
            return *t;
    }
    return NULL;
}
