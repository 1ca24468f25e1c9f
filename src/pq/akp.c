/*
 * src/pq/akp.c — shared scaffolding of the AKP key types (RFC 9964 JWK "kty": "AKP"): see akp.h.
 */
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "pq/akp.h"

#include <string.h>

const char *const dsig_akp_pub_members[] = {"pub", NULL};
const char *const dsig_akp_priv_members[] = {"priv", NULL};

/* Linear search: at most a dozen sets per family, and only on key-type lookups, never per chunk. */
const dsig_alg *dsig_akp_find_alg(const dsig_alg *const *algs, const struct dsig_keytype *t)
{
    for (const dsig_alg *const *a = algs; *a; a++)
        if ((*a)->keytype == t)
            return *a;
    return NULL;
}

/* The algorithm of key type t, or NULL with the family's mismatch error recorded. */
const dsig_alg *dsig_akp_alg_of(const dsig_alg *const *algs, const struct dsig_keytype *t,
                                const char *what)
{
    const dsig_alg *a = dsig_akp_find_alg(algs, t);
    if (!a)
        dsig_fail(DSIG_E_KEY_MISMATCH, "not %s (kty %s)", what, t ? t->kty : "?");
    return a;
}

/* Refuse a key size: every AKP parameter set fixes its own sizes. */
int dsig_akp_check_no_bits(const char *name, unsigned bits)
{
    if (bits)
        return dsig_fail(DSIG_E_ARG, "%s keys have no size parameter (got %u bits); omit it", name,
                         bits);
    return DSIG_OK;
}

/* "pub" is required in every AKP JWK (RFC 9964); its length is the parameter set's. */
int dsig_akp_check_pub(const dsig_jwk_member *m, size_t n, const char *name, size_t pub_len)
{
    if (n < 1 || !m[0].data)
        return dsig_fail(DSIG_E_KEY, "%s JWK: member \"pub\" is missing", name);
    if (pub_len && m[0].len != pub_len)
        return dsig_fail(DSIG_E_KEY, "%s JWK: member \"pub\" must be %zu bytes, got %zu", name,
                         pub_len, m[0].len);
    return DSIG_OK;
}

/* "priv" is optional: its absence makes a public key. */
int dsig_akp_has_priv(const dsig_jwk_member *m, size_t n)
{
    return n >= 2 && m[1].data != NULL;
}

/* An allocated copy of len bytes into a member; DSIG_E_NOMEM on failure. */
static int member_copy(dsig_jwk_member *m, const char *name, const uint8_t *src, size_t len)
{
    m->name = name;
    m->len = len;
    m->data = dsig_malloc(len);
    if (!m->data)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    memcpy(m->data, src, len);
    return DSIG_OK;
}

/* "pub" then, if asked, "priv"; a failed "priv" copy releases "pub" so the caller owns nothing. */
int dsig_akp_export(dsig_jwk_member *m, size_t *n, int include_private, const uint8_t *pub,
                    size_t pub_len, const uint8_t *priv, size_t priv_len)
{
    int rc = member_copy(&m[0], "pub", pub, pub_len);
    if (rc == DSIG_OK && include_private && (rc = member_copy(&m[1], "priv", priv, priv_len))) {
        dsig_xfree(m[0].data, m[0].len);
        m[0].data = NULL;
    }
    if (rc)
        return rc;
    *n = include_private ? 2 : 1;
    return DSIG_OK;
}

/* Replace key's impl; the old one goes through the type's destroy hook (wipe, or drop a reference). */
void dsig_akp_install(struct dsig_key *key, void *impl, int has_private)
{
    if (key->impl)
        key->type->destroy(key);
    key->impl = impl;
    key->has_private = has_private;
}

int dsig_akp_check_sig_len(const char *name, size_t expected, size_t sig_len)
{
    if (sig_len != expected)
        return dsig_fail(DSIG_E_VERIFY, "%s signature must be %zu bytes, got %zu", name, expected, sig_len);
    return DSIG_OK;
}
