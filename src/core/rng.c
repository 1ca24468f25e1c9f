/*
 * Randomness: the OS CSPRNG, and a seeded deterministic SHAKE256 stream for reproducible keys and
 * benchmark payloads (see internal.h for the exact construction).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "core/internal.h"
#include "core/layer_api.h"

DSIG_LAYER_API int dsig_random_bytes(void *out, size_t n)
{
    unsigned char *p = out;
    while (n > 0) {
        ssize_t r = getrandom(p, n > 256 ? 256 : n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return dsig_fail(DSIG_E_RNG, "getrandom failed: %s", strerror(errno));
        }
        p += r;
        n -= (size_t)r;
    }
    return DSIG_OK;
}

void dsig_rng_init_os(dsig_rng *rng)
{
    rng->seeded = 0;
    rng->xof = NULL;
}

int dsig_rng_init_seeded(dsig_rng *rng, const uint8_t *seed, size_t seed_len, const char *label)
{
    static const char domain[] = "dsig-drbg-v1";
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "seeded RNG: out of memory");
    uint32_t ll = (uint32_t)strlen(label);
    uint8_t le[4] = {(uint8_t)ll, (uint8_t)(ll >> 8), (uint8_t)(ll >> 16), (uint8_t)(ll >> 24)};
    if (!EVP_DigestInit_ex(c, EVP_shake256(), NULL) || !EVP_DigestUpdate(c, domain, sizeof domain - 1) ||
        !EVP_DigestUpdate(c, le, 4) || !EVP_DigestUpdate(c, label, ll) ||
        !EVP_DigestUpdate(c, seed, seed_len)) {
        EVP_MD_CTX_free(c);
        return dsig_fail_openssl(DSIG_E_CRYPTO, "seeded RNG");
    }
    rng->seeded = 1;
    rng->xof = c;
    return DSIG_OK;
}

/*
 * OpenSSL 3.0 cannot squeeze a SHAKE context incrementally (EVP_DigestSqueeze arrived in 3.3), so each
 * request is answered from a copy of the absorbed state, and then one byte 0x01 is absorbed into the
 * base state so that the next request gives fresh bytes: request i returns
 * SHAKE256(prefix || seed || 0x01^i)[0..n). Deterministic for a given sequence of request sizes.
 */
int dsig_rng_bytes(dsig_rng *rng, void *out, size_t n)
{
    if (!rng || !rng->seeded)
        return dsig_random_bytes(out, n);
    EVP_MD_CTX *base = rng->xof;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "seeded RNG: out of memory");
    static const uint8_t tick = 0x01;
    int ok = EVP_MD_CTX_copy_ex(c, base) && EVP_DigestUpdate(base, &tick, 1) &&
             EVP_DigestFinalXOF(c, out, n);
    EVP_MD_CTX_free(c);
    if (!ok)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "seeded RNG");
    return DSIG_OK;
}

void dsig_rng_clear(dsig_rng *rng)
{
    if (rng && rng->xof) {
        EVP_MD_CTX_free(rng->xof); /* EVP_MD_CTX_free cleanses the state */
        rng->xof = NULL;
    }
}
