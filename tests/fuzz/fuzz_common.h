/* Shared by the fuzz targets and the CTest driver: the keys the targets verify with. */
#ifndef DSIG_FUZZ_COMMON_H
#define DSIG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/dsig.h"

/* Keys the targets use (created once, from fixed seeds): one per key type that has a provider and
 * whose first algorithm is cheap to generate (RSA and stateful schemes excluded). */
typedef struct fuzz_keys {
    dsig_key *key[16];
    size_t n;
    const char *allowed[64]; /* every registered algorithm name */
} fuzz_keys;

const fuzz_keys *fuzz_get_keys(void);
void fuzz_free_keys(void);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int fuzz_jwk_one(const uint8_t *data, size_t size);
int fuzz_jws_one(const uint8_t *data, size_t size);

#endif
