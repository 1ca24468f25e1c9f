/*
 * One deterministic key per registry algorithm for the ACVP-style and differential harnesses, and the
 * raw-member form of keys (the key type's JWK members as bytes) that fuzz inputs carry.
 *
 * Keys of algorithms that share a key type and default size share one key (RS256 … PS512 one RSA-2048
 * key). Stateful keys live in state files in a private temporary directory (no high-water registry),
 * removed at exit; they use the algorithm's default parameter set, and a key that runs out of one-time
 * keys is replaced by the next seed (fuzz_alg_renew).
 */
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "fuzz_common.h"

#define MAX_ALGS 128

static fuzz_alg algs[MAX_ALGS];
static unsigned renewals[MAX_ALGS];
static size_t n_algs;

static const char *state_dir;

size_t fuzz_alg_count(void)
{
    if (!n_algs)
        n_algs = dsig_alg_count() < MAX_ALGS ? dsig_alg_count() : MAX_ALGS;
    return n_algs;
}

/* Make the key of algorithm i (seed: index and renewal count). */
static void make_key(size_t i)
{
    fuzz_alg *A = &algs[i];
    const dsig_alg *a = dsig_alg_at(i);
    uint8_t seed[32];
    char text[64];
    memset(seed, 0, sizeof seed);
    int tl = snprintf(text, sizeof text, "dsig fuzz alg %zu/%u", i, renewals[i]);
    memcpy(seed, text, tl > 0 && (size_t)tl < sizeof seed ? (size_t)tl : sizeof seed - 1);
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    A->alg = a;
    if (dsig_alg_flags(a) & DSIG_ALG_STATEFUL) {
        if (!state_dir)
            state_dir = fuzz_tmpdir("state");
        char path[512];
        snprintf(path, sizeof path, "%s/%zu-%u.state", state_dir, i, renewals[i]);
        dsig_state_opts so = {.registry_dir = ""};
        FUZZ_CHECK(dsig_state_create(&A->key, path, a, &kp, &so) == DSIG_OK, "state key %s: %s", dsig_alg_name(a),
                   dsig_last_error_detail());
    } else {
        for (size_t j = 0; j < i; j++)
            if (algs[j].alg && !(dsig_alg_flags(algs[j].alg) & DSIG_ALG_STATEFUL) &&
                algs[j].alg->keytype == a->keytype && algs[j].alg->default_key_bits == a->default_key_bits &&
                dsig_key_check_alg(algs[j].key, a) == DSIG_OK) {
                A->key = algs[j].key;
                A->pub = algs[j].pub;
                return;
            }
        FUZZ_CHECK(dsig_key_generate(&A->key, a, &kp) == DSIG_OK, "key %s: %s", dsig_alg_name(a),
                   dsig_last_error_detail());
        /* unbound, so that later algorithms of the key type can share it — except for an algorithm
         * that takes only keys made for it (DSig: one key, one purpose) */
        if (!(dsig_alg_flags(a) & DSIG_ALG_BOUND_KEY))
            dsig_key_set_alg(A->key, NULL);
    }
    if (dsig_alg_flags(a) & DSIG_ALG_SYMMETRIC)
        A->pub = A->key;
    else
        FUZZ_CHECK(dsig_key_public(&A->pub, A->key) == DSIG_OK, "public key %s", dsig_alg_name(a));
}

const fuzz_alg *fuzz_alg_get(size_t i)
{
    i %= fuzz_alg_count();
    if (!algs[i].alg) {
        /* Sharing looks at earlier algorithms: make them first (cheap once made). */
        for (size_t j = 0; j < i; j++)
            if (!algs[j].alg && dsig_alg_at(j)->keytype == dsig_alg_at(i)->keytype)
                make_key(j);
        make_key(i);
    }
    return &algs[i];
}

void fuzz_alg_renew(size_t i)
{
    i %= fuzz_alg_count();
    fuzz_alg *A = &algs[i];
    FUZZ_CHECK(A->alg && (dsig_alg_flags(A->alg) & DSIG_ALG_STATEFUL), "renew of a stateless key");
    dsig_key_free(A->key);
    dsig_key_free(A->pub);
    memset(A, 0, sizeof *A);
    renewals[i]++;
    make_key(i);
}

/* ---- raw members ------------------------------------------------------------------------------- */

/* The members a raw key carries: the public ones, or the private ones of a key type without a
 * public part (MAC keys: "k"). */
static const char *const *raw_member_names(const struct dsig_keytype *t)
{
    return t->has_public ? t->pub_members : t->priv_members;
}

size_t fuzz_key_members(const dsig_key *key, uint8_t *out, size_t cap)
{
    const struct dsig_keytype *t = key->type;
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    memset(m, 0, sizeof m);
    size_t n = DSIG_JWK_MAX_MEMBERS, o = 0;
    if (!t->export_jwk || t->export_jwk(key, !t->has_public, m, &n) != DSIG_OK)
        return 0;
    int fits = 1;
    for (const char *const *name = raw_member_names(t); *name; name++)
        for (size_t i = 0; i < n; i++)
            if (m[i].name && m[i].data && strcmp(m[i].name, *name) == 0) {
                if (o + 2 + m[i].len > cap || m[i].len > 0xffff) {
                    fits = 0;
                    break;
                }
                out[o++] = (uint8_t)m[i].len;
                out[o++] = (uint8_t)(m[i].len >> 8);
                memcpy(out + o, m[i].data, m[i].len);
                o += m[i].len;
            }
    for (size_t i = 0; i < n; i++)
        dsig_xfree(m[i].data, m[i].len);
    return fits ? o : 0;
}

/* Append text to a growing JSON buffer. */
static void put(char **b, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        *cap = 2 * (*len + n + 1);
        *b = realloc(*b, *cap);
        FUZZ_CHECK(*b != NULL, "out of memory");
    }
    memcpy(*b + *len, s, n + 1);
    *len += n;
}

int fuzz_key_from_members(const dsig_alg *alg, const uint8_t *mem, size_t mlen, dsig_key **out)
{
    const struct dsig_keytype *t = alg->keytype;
    char *j = NULL, item[160];
    size_t jl = 0, jc = 0;
    snprintf(item, sizeof item, "{\"kty\":\"%s\"", t->kty);
    put(&j, &jl, &jc, item);
    if (t->crv) {
        snprintf(item, sizeof item, ",\"crv\":\"%s\"", t->crv);
        put(&j, &jl, &jc, item);
    }
    if (t->alg) {
        snprintf(item, sizeof item, ",\"alg\":\"%s\"", t->alg);
        put(&j, &jl, &jc, item);
    }
    fuzz_in in = {mem, mlen};
    for (const char *const *name = raw_member_names(t); *name; name++) {
        size_t l;
        const uint8_t *p = fuzz_take(&in, fuzz_u16(&in), &l);
        char *b64 = dsig_b64url_encode_alloc(p, l);
        FUZZ_CHECK(b64 != NULL, "out of memory");
        snprintf(item, sizeof item, ",\"%s\":\"", *name);
        put(&j, &jl, &jc, item);
        put(&j, &jl, &jc, b64);
        put(&j, &jl, &jc, "\"");
        dsig_free(b64);
    }
    put(&j, &jl, &jc, "}");
    int rc = dsig_jwk_import(out, j, jl);
    free(j);
    return rc;
}
