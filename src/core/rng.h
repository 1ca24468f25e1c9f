/*
 * src/core/rng.h — sources of random bytes (rng.c). Not installed.
 *
 * A source is the OS CSPRNG (getrandom), or a deterministic SHAKE256-based DRBG seeded by the caller
 * (keys from a seed, benchmark payloads). The DRBG output is
 *   request i returns SHAKE256("dsig-drbg-v1" || u32le(len(label)) || label || seed || 0x01^i)[0..n)
 * (deterministic for a given sequence of request sizes; see rng.c).
 */
#ifndef DSIG_CORE_RNG_H
#define DSIG_CORE_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct dsig_rng {
    int seeded;
    void *xof;            /* EVP_MD_CTX* for the seeded case */
} dsig_rng;

/* A source reading the OS CSPRNG (never fails to initialise). */
void dsig_rng_init_os(dsig_rng *rng);

/*
 * A deterministic source from `seed` and a domain-separating `label`.
 * @retval DSIG_OK       the source is ready (release it with dsig_rng_clear)
 * @retval DSIG_E_NOMEM  out of memory
 * @retval DSIG_E_CRYPTO OpenSSL could not start SHAKE256
 */
int dsig_rng_init_seeded(dsig_rng *rng, const uint8_t *seed, size_t seed_len, const char *label);

/*
 * The next `n` bytes of the source.
 * @retval DSIG_OK       out holds n bytes
 * @retval DSIG_E_RNG    the OS source failed (unseeded)
 * @retval DSIG_E_NOMEM  out of memory (seeded)
 * @retval DSIG_E_CRYPTO the XOF failed (seeded)
 */
int dsig_rng_bytes(dsig_rng *rng, void *out, size_t n);

/* Wipe and release a source. */
void dsig_rng_clear(dsig_rng *rng);

/*
 * `n` bytes of OS randomness.
 * @retval DSIG_OK    out holds n bytes
 * @retval DSIG_E_RNG getrandom failed
 */
int dsig_random_bytes(void *out, size_t n);

#endif
