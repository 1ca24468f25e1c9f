/* Fuzz target: JWK import (a JWK Set is refused: the library has no JWKS parser), and export /
 * thumbprint / re-import of whatever imports; a private key that imports must sign what its public
 * part verifies (fuzz_check_key_pair). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int fuzz_jwk_one(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1); /* exact size: ASan sees over-reads */
    if (!text)
        return 0;
    memcpy(text, data, size);
    dsig_key *k = NULL;
    if (dsig_jwk_import(&k, text, size) == DSIG_OK) {
        char tp[DSIG_THUMBPRINT_LEN], tp2[DSIG_THUMBPRINT_LEN];
        FUZZ_CHECK(dsig_jwk_thumbprint(k, tp) == DSIG_OK, "thumbprint of an imported key");
        for (int priv = 0; priv < 2; priv++) {
            char *out = NULL;
            size_t ol = 0;
            if (dsig_jwk_export(k, priv, &out, &ol) == DSIG_OK) {
                dsig_key *k2 = NULL;
                FUZZ_CHECK(dsig_jwk_import(&k2, out, ol) == DSIG_OK, "our own export does not re-import: %s", out);
                FUZZ_CHECK(dsig_jwk_thumbprint(k2, tp2) == DSIG_OK && strcmp(tp, tp2) == 0,
                           "re-imported export has another thumbprint");
                FUZZ_CHECK(dsig_key_has_private(k2) == (priv && dsig_key_has_private(k)), "private part lost or made up");
                dsig_key_free(k2);
                dsig_free(out);
            }
        }
        fuzz_check_key_pair(k);
        dsig_key_free(k);
    }
    free(text);
    return 0;
}

#ifndef DSIG_FUZZ_DRIVER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_jwk_one(data, size);
}

static void seeds(void)
{
    fuzz_jose_seeds(fuzz_seed_cb, &(unsigned){1});
}

FUZZ_SEED_GENERATOR(seeds)
#endif
