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

/* DSig hybrid signatures (fuzz_dsig.c): byte 0 selects the target (0 scheme signature, 1 batch
 * message, 2 runtime verifier, 3 registry "DSig"; bit 2 = patch mode). Inputs over the bound are
 * rejected before any work. */
#define FUZZ_DSIG_MAX_INPUT 9216u
#define FUZZ_DSIG_TARGETS 4u
int fuzz_dsig_one(const uint8_t *data, size_t size);
/* Called with each seed input (target = data[0] & 3); the bytes are valid during the call only. */
typedef void (*fuzz_dsig_seed_cb)(void *arg, unsigned target, const uint8_t *data, size_t len);
void fuzz_dsig_seeds(fuzz_dsig_seed_cb cb, void *arg);
void fuzz_dsig_free(void);

/* ML-DSA (fuzz_mldsa.c): byte 0 selects the target (0 signature, 1 public key, 2 AKP JWK; bit 2 =
 * patch mode), byte 1 the parameter set, byte 2 message / path / base JWK. Seeds use the DSig
 * callback type (target = data[0] & 3). */
#define FUZZ_MLDSA_MAX_INPUT 8192u
#define FUZZ_MLDSA_TARGETS 3u
int fuzz_mldsa_one(const uint8_t *data, size_t size);
void fuzz_mldsa_seeds(fuzz_dsig_seed_cb cb, void *arg);
void fuzz_mldsa_free(void);

#endif
