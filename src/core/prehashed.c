/*
 * Signing a digest computed elsewhere (dsig/prehashed.h): the algorithm-independent checks around a
 * descriptor's optional `prehashed` operations. Which algorithms take which hashes is the descriptors'
 * business alone; nothing here names one.
 */
#include <string.h>

#include "core/backend.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/provider.h"
#include "dsig/prehashed.h"

const char *dsig_alg_digest_hashes(const dsig_alg *alg)
{
    return alg && alg->ops->prehashed ? alg->ops->prehashed->hashes(alg) : NULL;
}

/* 1 if `hash` is one of the names in the ", "-separated list (exact match, case included). */
static int listed(const char *list, const char *hash)
{
    size_t n = strlen(hash);
    for (const char *p = list; *p;) {
        size_t m = strcspn(p, ",");
        if (m == n && memcmp(p, hash, n) == 0)
            return 1;
        p += m;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return 0;
}

/* The checks both directions share; on DSIG_OK *ops is the provider's table. */
static int check(const dsig_alg *alg, const dsig_key *key, const char *hash, int signing,
                 const struct dsig_alg_prehashed **ops)
{
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    if ((rc = dsig_key_check_alg(key, alg)))
        return rc;
    const struct dsig_alg_prehashed *p = alg->ops->prehashed;
    if (!p)
        return dsig_fail(DSIG_E_UNSUPPORTED,
                         "%s does not sign a digest computed elsewhere (only algorithms whose signature keeps "
                         "its meaning over a client's hash do: ML-DSA, RSA and ECDSA)", alg->name);
    if (!listed(p->hashes(alg), hash))
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s signs no digest of \"%.64s\" (it takes: %s)", alg->name, hash,
                         p->hashes(alg));
    if (signing && !key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s signing needs a private key", alg->name);
    *ops = p;
    return DSIG_OK;
}

int dsig_sign_digest(const dsig_alg *alg, const dsig_key *key, const char *hash, const uint8_t *digest,
                     size_t digest_len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    if (!alg || !key || !hash || (!digest && digest_len) || !sig || !sig_len)
        return dsig_fail(DSIG_E_ARG, "dsig_sign_digest: NULL argument");
    const struct dsig_alg_prehashed *p = NULL;
    int rc = check(alg, key, hash, 1, &p);
    if (rc)
        return rc;
    return p->sign(alg, key, hash, digest ? digest : (const uint8_t *)"", digest_len, sig, cap, sig_len);
}

int dsig_verify_digest(const dsig_alg *alg, const dsig_key *key, const char *hash, const uint8_t *digest,
                       size_t digest_len, const uint8_t *sig, size_t sig_len)
{
    if (!alg || !key || !hash || (!digest && digest_len) || (!sig && sig_len))
        return dsig_fail(DSIG_E_ARG, "dsig_verify_digest: NULL argument");
    const struct dsig_alg_prehashed *p = NULL;
    int rc = check(alg, key, hash, 0, &p);
    if (rc)
        return rc;
    return p->verify(alg, key, hash, digest ? digest : (const uint8_t *)"", digest_len,
                     sig ? sig : (const uint8_t *)"", sig_len);
}
