/* Keys for the fuzz targets: deterministic, created once. */
#include <string.h>

#include "fuzz_common.h"

static fuzz_keys keys;
static int ready;

/* 1 if a key of this algorithm's type is already in the set. */
static int have_kty(const dsig_alg *a)
{
    for (size_t i = 0; i < keys.n; i++) {
        const char *c1 = dsig_key_curve(keys.key[i]), *c2 = dsig_alg_curve(a);
        if (strcmp(dsig_key_kty(keys.key[i]), dsig_alg_kty(a)) == 0 &&
            ((!c1 && !c2) || (c1 && c2 && strcmp(c1, c2) == 0)))
            return 1;
    }
    return 0;
}

const fuzz_keys *fuzz_get_keys(void)
{
    if (ready)
        return &keys;
    ready = 1;
    static const uint8_t seed[32] = "dsig fuzz keys, fixed seed.....";
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    size_t na = 0;
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (na < 63)
            keys.allowed[na++] = dsig_alg_name(a);
        if (keys.n >= 16 || have_kty(a) || (dsig_alg_flags(a) & DSIG_ALG_STATEFUL) ||
            strcmp(dsig_alg_kty(a), "RSA") == 0)
            continue;
        dsig_key *k;
        if (dsig_key_generate(&k, a, &kp) == DSIG_OK) {
            dsig_key_set_alg(k, NULL); /* unbound: the allow-list and the header decide */
            keys.key[keys.n++] = k;
        }
    }
    keys.allowed[na] = NULL;
    return &keys;
}

void fuzz_free_keys(void)
{
    for (size_t i = 0; i < keys.n; i++)
        dsig_key_free(keys.key[i]);
    memset(&keys, 0, sizeof keys);
    ready = 0;
}
