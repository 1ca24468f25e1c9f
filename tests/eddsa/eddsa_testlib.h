/*
 * tests/eddsa/eddsa_testlib.h — small helpers shared by the EdDSA tests (header-only, static).
 */
#ifndef DSIG_TEST_EDDSA_TESTLIB_H
#define DSIG_TEST_EDDSA_TESTLIB_H

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "testutil.h"

/* Build a key of `type` straight from raw JWK members (x required, d optional), bypassing JSON. */
static inline int et_key(const struct dsig_keytype *type, const uint8_t *x, size_t xl, const uint8_t *d,
                         size_t dl, dsig_key **out)
{
    *out = NULL;
    int rc = dsig_init();
    if (rc)
        return rc;
    struct dsig_key *k = dsig_key_new(type);
    assert_non_null(k);
    dsig_jwk_member m[2] = {{"x", (uint8_t *)x, xl}, {"d", (uint8_t *)d, d ? dl : 0}};
    rc = type->import_jwk(k, m, 2);
    if (rc) {
        dsig_key_free(k);
        return rc;
    }
    k->has_private = d != NULL;
    *out = k;
    return DSIG_OK;
}

/* Same, from hex strings (d may be NULL). */
static inline int et_key_hex(const struct dsig_keytype *type, const char *xhex, const char *dhex,
                             dsig_key **out)
{
    size_t xl, dl = 0;
    uint8_t *x = tu_hex(xhex, &xl);
    uint8_t *d = dhex ? tu_hex(dhex, &dl) : NULL;
    int rc = et_key(type, x, xl, d, dl, out);
    free(x);
    free(d);
    return rc;
}

/* The algorithm for a curve name used by the vector files. */
static inline const dsig_alg *et_alg(int ed448)
{
    const dsig_alg *a = dsig_alg_by_name(ed448 ? "Ed448" : "Ed25519");
    assert_non_null(a);
    return a;
}

#endif
