/* Fuzz target: JWK import, and export/thumbprint of whatever imports. */
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
        char tp[DSIG_THUMBPRINT_LEN];
        (void)dsig_jwk_thumbprint(k, tp);
        for (int priv = 0; priv < 2; priv++) {
            char *out = NULL;
            size_t ol = 0;
            if (dsig_jwk_export(k, priv, &out, &ol) == DSIG_OK) {
                dsig_key *k2 = NULL;
                if (dsig_jwk_import(&k2, out, ol) != DSIG_OK)
                    abort(); /* our own export must re-import */
                dsig_key_free(k2);
                dsig_free(out);
            }
        }
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
#endif
