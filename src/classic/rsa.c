/*
 * RSA key type and the RS256/384/512 (RSASSA-PKCS1-v1_5) and PS256/384/512 (RSASSA-PSS) algorithms
 * (RFC 8017 §8.1/§8.2, RFC 7518 §3.3/§3.5) on OpenSSL 3.0 EVP_PKEY.
 *
 * Keys are validated on every way in (JWK, PEM, generation): 2048..16384-bit odd modulus, odd e > 1 of
 * at most 64 bits, d in [1, n-1], and when the CRT members are given, p·q = n, dp/dq/qi consistent with
 * d, then OpenSSL's pairwise check; a d-only key is checked by (2^e)^d ≡ 2 (mod n).
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "classic/pkey.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"

#define RSA_MIN_BITS 2048
#define RSA_MAX_BITS 16384
#define RSA_E 65537u

struct rsa_impl {
    EVP_PKEY *pkey;
    unsigned bits;
};

struct rsa_params {
    enum dsig_pk_hash hash;
    int pss;
};

/* The eight RSA integers, in JWK order after e, n. Any may be NULL except n and e. */
struct rsa_ints {
    BIGNUM *n, *e, *d, *p, *q, *dp, *dq, *qi;
};

/* Free the integers, wiping the private ones. */
static void rsa_ints_free(struct rsa_ints *r)
{
    BN_free(r->n);
    BN_free(r->e);
    BN_clear_free(r->d);
    BN_clear_free(r->p);
    BN_clear_free(r->q);
    BN_clear_free(r->dp);
    BN_clear_free(r->dq);
    BN_clear_free(r->qi);
    memset(r, 0, sizeof *r);
}

/* @spec RFC 8017 §3.1–3.2: check that (n, e[, d[, p, q, dp, dq, qi]]) is a consistent RSA key. */
static int rsa_check(const struct rsa_ints *r, BN_CTX *ctx)
{
    int nb = BN_num_bits(r->n);
    if (nb < RSA_MIN_BITS)
        return dsig_fail(DSIG_E_KEY_WEAK, "RSA modulus of %d bits: at least %d bits are required", nb,
                         RSA_MIN_BITS);
    if (nb > RSA_MAX_BITS)
        return dsig_fail(DSIG_E_TOO_LARGE, "RSA modulus of %d bits: at most %d bits are supported", nb,
                         RSA_MAX_BITS);
    if (!BN_is_odd(r->n))
        return dsig_fail(DSIG_E_KEY, "RSA modulus \"n\" is even");
    if (!BN_is_odd(r->e) || BN_cmp(r->e, BN_value_one()) <= 0)
        return dsig_fail(DSIG_E_KEY, "RSA exponent \"e\" must be odd and greater than 1");
    if (BN_num_bits(r->e) > 64 || BN_cmp(r->e, r->n) >= 0)
        return dsig_fail(DSIG_E_KEY, "RSA exponent \"e\" larger than 64 bits is not supported");
    if (!r->d)
        return DSIG_OK;
    if (BN_is_zero(r->d) || BN_cmp(r->d, r->n) >= 0)
        return dsig_fail(DSIG_E_KEY, "RSA private exponent \"d\" is not in [1, n-1]");

    int rc = DSIG_E_NOMEM;
    BN_CTX_start(ctx);
    BIGNUM *t = BN_CTX_get(ctx), *u = BN_CTX_get(ctx), *p1 = BN_CTX_get(ctx), *q1 = BN_CTX_get(ctx);
    BIGNUM *two = BN_CTX_get(ctx);
    if (!two)
        goto out;
    if (r->p) {
        rc = DSIG_E_KEY;
        if (BN_cmp(r->p, BN_value_one()) <= 0 || BN_cmp(r->q, BN_value_one()) <= 0 ||
            !BN_mul(t, r->p, r->q, ctx) || BN_cmp(t, r->n) != 0) {
            dsig_fail(rc, "RSA primes \"p\"·\"q\" do not equal \"n\"");
            goto out;
        }
        if (!BN_sub(p1, r->p, BN_value_one()) || !BN_sub(q1, r->q, BN_value_one()))
            goto crypto;
        /* dp = d mod (p-1), dq = d mod (q-1), e·dp ≡ 1 (mod p-1), e·dq ≡ 1 (mod q-1) */
        if (!BN_mod(t, r->d, p1, ctx))
            goto crypto;
        if (BN_cmp(t, r->dp) != 0) {
            dsig_fail(rc, "RSA member \"dp\" is not d mod (p-1)");
            goto out;
        }
        if (!BN_mod(t, r->d, q1, ctx))
            goto crypto;
        if (BN_cmp(t, r->dq) != 0) {
            dsig_fail(rc, "RSA member \"dq\" is not d mod (q-1)");
            goto out;
        }
        if (!BN_mod_mul(t, r->e, r->dp, p1, ctx) || !BN_mod_mul(u, r->e, r->dq, q1, ctx))
            goto crypto;
        if (!BN_is_one(t) || !BN_is_one(u)) {
            dsig_fail(rc, "RSA private exponent \"d\" does not invert \"e\"");
            goto out;
        }
        if (BN_cmp(r->qi, r->p) >= 0 || !BN_mod_mul(t, r->qi, r->q, r->p, ctx))
            goto badqi;
        if (!BN_is_one(t))
            goto badqi;
    }
    /* (2^e)^d must give 2 back: catches a d that does not belong to (n, e) when no CRT is given. */
    if (!BN_set_word(two, 2) || !BN_mod_exp(t, two, r->e, r->n, ctx) ||
        !BN_mod_exp_mont_consttime(u, t, r->d, r->n, ctx, NULL))
        goto crypto;
    if (BN_cmp(u, two) != 0) {
        rc = dsig_fail(DSIG_E_KEY, "RSA private exponent \"d\" does not match (n, e)");
        goto out;
    }
    rc = DSIG_OK;
    goto out;
badqi:
    rc = dsig_fail(DSIG_E_KEY, "RSA member \"qi\" is not q^-1 mod p");
    goto out;
crypto:
    rc = dsig_fail_openssl(DSIG_E_CRYPTO, "RSA key check");
out:
    BN_CTX_end(ctx);
    return rc;
}

/* Make `pkey` (ownership taken, freed on failure) the impl of `key`. */
static int rsa_store(struct dsig_key *key, EVP_PKEY *pkey, unsigned bits, int has_private)
{
    struct rsa_impl *impl = dsig_calloc(1, sizeof *impl);
    if (!impl) {
        EVP_PKEY_free(pkey);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    impl->pkey = pkey;
    impl->bits = bits;
    key->impl = impl;
    key->has_private = has_private;
    return DSIG_OK;
}

/* Validate the integers and store them in key->impl as an EVP_PKEY. `pairwise` adds OpenSSL's check. */
static int rsa_build(struct dsig_key *key, const struct rsa_ints *r, int pairwise)
{
    if ((r->p || r->q || r->dp || r->dq || r->qi) &&
        !(r->p && r->q && r->dp && r->dq && r->qi))
        return dsig_fail(DSIG_E_KEY, "RSA private members \"p\", \"q\", \"dp\", \"dq\", \"qi\" must be "
                                     "given all together or not at all");
    if (r->p && !r->d)
        return dsig_fail(DSIG_E_KEY, "RSA private member \"d\" is missing");
    BN_CTX *ctx = BN_CTX_secure_new();
    if (!ctx)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    int rc = rsa_check(r, ctx);
    BN_CTX_free(ctx);
    if (rc)
        return rc;

    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    int ok = b && OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, r->n) &&
             OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, r->e);
    if (ok && r->d)
        ok = OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_D, r->d);
    if (ok && r->p)
        ok = OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_FACTOR1, r->p) &&
             OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_FACTOR2, r->q) &&
             OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_EXPONENT1, r->dp) &&
             OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_EXPONENT2, r->dq) &&
             OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, r->qi);
    EVP_PKEY *pkey;
    if ((rc = dsig_pk_from_builder("RSA", b, ok, r->d != NULL, "RSA key parameters", &pkey)))
        return rc;
    if (pairwise && r->p) {
        EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
        int chk = c ? EVP_PKEY_pairwise_check(c) : -1;
        EVP_PKEY_CTX_free(c);
        if (chk != 1) {
            EVP_PKEY_free(pkey);
            return dsig_fail_openssl(DSIG_E_KEY, "RSA key fails the pairwise consistency check");
        }
    }
    return rsa_store(key, pkey, (unsigned)BN_num_bits(r->n), r->d != NULL);
}

/* Read the RSA integers of an EVP_PKEY (absent private ones stay NULL). */
static int rsa_ints_from_pkey(EVP_PKEY *pkey, struct rsa_ints *r, int with_private)
{
    memset(r, 0, sizeof *r);
    if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &r->n) ||
        !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &r->e)) {
        rsa_ints_free(r);
        return dsig_fail_openssl(DSIG_E_KEY, "RSA key without n or e");
    }
    if (with_private) {
        /* Absent parameters leave the pointer NULL; the error queue entries are not errors here. */
        EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_D, &r->d);
        EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_FACTOR1, &r->p);
        EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_FACTOR2, &r->q);
        EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_EXPONENT1, &r->dp);
        EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_EXPONENT2, &r->dq);
        EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, &r->qi);
        /* Later consistency checks run BN arithmetic on these secrets: constant-time paths only. */
        BIGNUM *secrets[] = {r->d, r->p, r->q, r->dp, r->dq, r->qi};
        for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++)
            if (secrets[i])
                BN_set_flags(secrets[i], BN_FLG_CONSTTIME);
        BIGNUM *r3 = NULL;
        if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_FACTOR3, &r3)) {
            BN_clear_free(r3);
            rsa_ints_free(r);
            ERR_clear_error();
            return dsig_fail(DSIG_E_UNSUPPORTED, "multi-prime RSA keys are not supported");
        }
        ERR_clear_error();
    }
    return DSIG_OK;
}

/* A public-only EVP_PKEY with the same (n, e). */
static int rsa_public_pkey(const struct rsa_impl *impl, EVP_PKEY **out)
{
    struct rsa_ints r;
    int rc = rsa_ints_from_pkey(impl->pkey, &r, 0);
    if (rc)
        return rc;
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    int pushed = b && OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, r.n) &&
                 OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, r.e);
    rc = dsig_pk_from_builder("RSA", b, pushed, 0, "RSA key parameters", out);
    rsa_ints_free(&r);
    return rc;
}

/* ---- key type operations -------------------------------------------------------------------- */

/* Seeded generation: draw odd candidates with the top two bits set until one is a prime p with
 * gcd(e, p-1) = 1 (and, for q, |p-q| > 2^(half-100)). @spec FIPS 186-5 §A.1.3 (probable primes). */
static int rsa_gen_prime(BIGNUM *out, int half_bits, dsig_rng *rng, BN_CTX *ctx, const BIGNUM *other)
{
    size_t nb = (size_t)half_bits / 8;
    uint8_t buf[RSA_MAX_BITS / 16];
    BIGNUM *diff = BN_new();
    int rc = DSIG_OK;
    if (!diff)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    for (unsigned long tries = 0;; tries++) {
        if (tries > 1000000ul) {
            rc = dsig_fail(DSIG_E_INTERNAL, "RSA prime search did not terminate");
            break;
        }
        if ((rc = dsig_rng_bytes(rng, buf, nb)))
            break;
        buf[0] |= 0xC0;  /* top two bits: p·q has exactly 2·half bits */
        buf[nb - 1] |= 1;
        if (!BN_bin2bn(buf, (int)nb, out)) {
            rc = dsig_fail_openssl(DSIG_E_NOMEM, "RSA keygen");
            break;
        }
        if (BN_mod_word(out, RSA_E) == 1) /* e | p-1 */
            continue;
        if (other) {
            if (!BN_sub(diff, out, other)) {
                rc = dsig_fail_openssl(DSIG_E_CRYPTO, "RSA keygen");
                break;
            }
            if (BN_num_bits(diff) <= half_bits - 100)
                continue;
        }
        int pr = BN_check_prime(out, ctx, NULL);
        if (pr < 0) {
            rc = dsig_fail_openssl(DSIG_E_CRYPTO, "RSA primality test");
            break;
        }
        if (pr == 1)
            break;
    }
    OPENSSL_cleanse(buf, sizeof buf);
    BN_free(diff);
    return rc;
}

/* Derive d, dp, dq, qi from p, q, e. @spec FIPS 186-5 §A.1.1: d = e^-1 mod lcm(p-1, q-1). */
static int rsa_derive(struct rsa_ints *r, BN_CTX *ctx)
{
    int ok = 0;
    BN_CTX_start(ctx);
    BIGNUM *p1 = BN_CTX_get(ctx), *q1 = BN_CTX_get(ctx), *g = BN_CTX_get(ctx), *l = BN_CTX_get(ctx);
    r->n = BN_new();
    r->d = BN_secure_new();
    r->dp = BN_secure_new();
    r->dq = BN_secure_new();
    r->qi = BN_secure_new();
    if (l && r->n && r->d && r->dp && r->dq && r->qi) {
        BN_set_flags(p1, BN_FLG_CONSTTIME);
        BN_set_flags(q1, BN_FLG_CONSTTIME);
        BN_set_flags(l, BN_FLG_CONSTTIME);
        ok = BN_mul(r->n, r->p, r->q, ctx) && BN_sub(p1, r->p, BN_value_one()) &&
             BN_sub(q1, r->q, BN_value_one()) && BN_gcd(g, p1, q1, ctx) && BN_mul(l, p1, q1, ctx) &&
             BN_div(l, NULL, l, g, ctx) && BN_mod_inverse(r->d, r->e, l, ctx) &&
             BN_mod(r->dp, r->d, p1, ctx) && BN_mod(r->dq, r->d, q1, ctx) &&
             BN_mod_inverse(r->qi, r->q, r->p, ctx);
    }
    BN_CTX_end(ctx);
    return ok ? DSIG_OK : dsig_fail_openssl(DSIG_E_CRYPTO, "RSA key derivation");
}

/* Generate from the OS RNG with OpenSSL's own (faster, sieving) generator. */
static int rsa_generate_os(struct dsig_key *key, unsigned bits)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    EVP_PKEY *pkey = NULL;
    int ok = c && EVP_PKEY_keygen_init(c) > 0 && EVP_PKEY_CTX_set_rsa_keygen_bits(c, (int)bits) > 0 &&
             EVP_PKEY_keygen(c, &pkey) > 0;
    EVP_PKEY_CTX_free(c);
    if (!ok)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "RSA key generation");
    return rsa_store(key, pkey, (unsigned)EVP_PKEY_get_bits(pkey), 1);
}

/* Generate an RSA key (e = 65537); deterministic when the RNG is seeded. */
static int rsa_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    if (bits == 0)
        bits = RSA_MIN_BITS;
    if (bits < RSA_MIN_BITS)
        return dsig_fail(DSIG_E_KEY_WEAK, "RSA keys need at least %d bits, %u requested", RSA_MIN_BITS,
                         bits);
    if (bits > RSA_MAX_BITS)
        return dsig_fail(DSIG_E_TOO_LARGE, "RSA keys of more than %d bits are not supported",
                         RSA_MAX_BITS);
    if (bits % 16)
        return dsig_fail(DSIG_E_ARG, "RSA key size must be a multiple of 16 bits, got %u", bits);
    if (!rng || !rng->seeded)
        return rsa_generate_os(key, bits);

    struct rsa_ints r = {0};
    BN_CTX *ctx = BN_CTX_secure_new();
    int rc = DSIG_E_NOMEM;
    r.e = BN_new();
    r.p = BN_secure_new();
    r.q = BN_secure_new();
    if (!ctx || !r.e || !r.p || !r.q || !BN_set_word(r.e, RSA_E)) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        goto out;
    }
    BN_set_flags(r.p, BN_FLG_CONSTTIME);
    BN_set_flags(r.q, BN_FLG_CONSTTIME);
    int half = (int)bits / 2;
    for (int attempt = 0; attempt < 16; attempt++) {
        if ((rc = rsa_gen_prime(r.p, half, rng, ctx, NULL)) ||
            (rc = rsa_gen_prime(r.q, half, rng, ctx, r.p)))
            goto out;
        if (BN_cmp(r.p, r.q) < 0)
            BN_swap(r.p, r.q); /* p > q: the usual CRT convention (qi = q^-1 mod p) */
        if ((rc = rsa_derive(&r, ctx)))
            goto out;
        if (BN_num_bits(r.d) > half) /* FIPS 186-5: d > 2^(nlen/2) */
            break;
        rc = DSIG_E_INTERNAL;
        BN_free(r.n);
        BN_clear_free(r.d);
        BN_clear_free(r.dp);
        BN_clear_free(r.dq);
        BN_clear_free(r.qi);
        r.n = r.d = r.dp = r.dq = r.qi = NULL;
    }
    if (rc == DSIG_E_INTERNAL) {
        rc = dsig_fail(rc, "RSA key generation: no suitable private exponent");
        goto out;
    }
    rc = rsa_build(key, &r, 0);
out:
    rsa_ints_free(&r);
    BN_CTX_free(ctx);
    return rc;
}

/* Decode a JWK member into a new BIGNUM (NULL when absent). */
static int member_bn(const struct dsig_keytype *t, const dsig_jwk_member *m, size_t n, const char *name,
                     int secret, BIGNUM **out)
{
    *out = NULL;
    const dsig_jwk_member *mm = dsig_pk_member(t, m, n, name);
    if (!mm)
        return DSIG_OK;
    if (mm->len == 0)
        return dsig_fail(DSIG_E_KEY, "RSA member \"%s\" is empty", name);
    if (mm->len > RSA_MAX_BITS / 8 + 1)
        return dsig_fail(DSIG_E_TOO_LARGE, "RSA member \"%s\" is too long", name);
    BIGNUM *bn = secret ? BN_secure_new() : BN_new();
    if (!bn || !BN_bin2bn(mm->data, (int)mm->len, bn)) {
        BN_free(bn);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    if (secret)
        BN_set_flags(bn, BN_FLG_CONSTTIME);
    *out = bn;
    return DSIG_OK;
}

/* @spec RFC 7518 §6.3: import an RSA JWK (decoded members). */
static int rsa_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    const struct dsig_keytype *t = key->type;
    const dsig_jwk_member *mn = dsig_pk_member(t, m, n, "n"), *me = dsig_pk_member(t, m, n, "e");
    if (!mn)
        return dsig_fail(DSIG_E_KEY, "RSA JWK: member \"n\" is missing");
    if (!me)
        return dsig_fail(DSIG_E_KEY, "RSA JWK: member \"e\" is missing");
    /* base64urlUInt is the minimal big-endian form (RFC 7518 §2, §6.3.1.1) */
    if (mn->len == 0 || mn->data[0] == 0)
        return dsig_fail(DSIG_E_KEY, "RSA JWK: member \"n\" has a leading zero octet");
    if (me->len == 0 || me->data[0] == 0)
        return dsig_fail(DSIG_E_KEY, "RSA JWK: member \"e\" has a leading zero octet");
    struct rsa_ints r = {0};
    static const char *const names[] = {"n", "e", "d", "p", "q", "dp", "dq", "qi"};
    BIGNUM **slots[] = {&r.n, &r.e, &r.d, &r.p, &r.q, &r.dp, &r.dq, &r.qi};
    int rc = DSIG_OK;
    for (size_t i = 0; i < 8 && rc == DSIG_OK; i++)
        rc = member_bn(t, m, n, names[i], i >= 2, slots[i]);
    if (rc == DSIG_OK && !r.d && (r.p || r.q || r.dp || r.dq || r.qi))
        rc = dsig_fail(DSIG_E_KEY, "RSA JWK: private members without \"d\"");
    if (rc == DSIG_OK)
        rc = rsa_build(key, &r, 1);
    rsa_ints_free(&r);
    return rc;
}

/* Export the members in pub_members-then-priv_members order (absent ones have NULL data). */
static int rsa_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m, size_t *n)
{
    const struct rsa_impl *impl = key->impl;
    struct rsa_ints r;
    int rc = rsa_ints_from_pkey(impl->pkey, &r, include_private && key->has_private);
    if (rc)
        return rc;
    static const char *const names[] = {"e", "n", "d", "p", "q", "dp", "dq", "qi"};
    const BIGNUM *vals[] = {r.e, r.n, r.d, r.p, r.q, r.dp, r.dq, r.qi};
    size_t count = include_private && key->has_private ? 8 : 2;
    for (size_t i = 0; i < count; i++) {
        m[i].name = names[i];
        m[i].data = NULL;
        m[i].len = 0;
    }
    for (size_t i = 0; i < count && rc == DSIG_OK; i++)
        if (vals[i])
            rc = dsig_pk_bn_export(vals[i], 0, &m[i].data, &m[i].len);
    rsa_ints_free(&r);
    if (rc) {
        for (size_t i = 0; i < count; i++) {
            dsig_xfree(m[i].data, m[i].len);
            m[i].data = NULL;
        }
        return rc;
    }
    *n = count;
    return DSIG_OK;
}

/* EVP_PKEY for PEM export: the key itself (private) or a public-only copy. */
static int rsa_to_pkey(const struct dsig_key *key, int include_private, void **out)
{
    const struct rsa_impl *impl = key->impl;
    if (include_private)
        return dsig_pk_ref(impl->pkey, out);
    return rsa_public_pkey(impl, (EVP_PKEY **)out);
}

/* Take an RSA EVP_PKEY (from PEM) through the same validation as a JWK. */
static int rsa_from_pkey(struct dsig_key *key, void *pk)
{
    EVP_PKEY *pkey = pk;
    if (!EVP_PKEY_is_a(pkey, "RSA"))
        return DSIG_E_KEY_MISMATCH; /* quick probe answer; core names the type */
    struct rsa_ints r;
    int rc = rsa_ints_from_pkey(pkey, &r, 1);
    if (rc)
        return rc;
    rc = rsa_build(key, &r, 1);
    rsa_ints_free(&r);
    return rc;
}

/* A public-only copy of src. */
static int rsa_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct rsa_impl *s = src->impl;
    EVP_PKEY *pkey = NULL;
    int rc = rsa_public_pkey(s, &pkey);
    if (rc)
        return rc;
    return rsa_store(dst, pkey, s->bits, 0);
}

/* Free the key (OpenSSL clears the RSA integers when freeing them). */
static void rsa_destroy(struct dsig_key *key)
{
    struct rsa_impl *impl = key->impl;
    dsig_pk_free_impl(key, impl ? impl->pkey : NULL, sizeof *impl);
}

/* Modulus size in bits. */
static unsigned rsa_bits(const struct dsig_key *key)
{
    const struct rsa_impl *impl = key->impl;
    return impl ? impl->bits : 0;
}

static const char *const rsa_pub[] = {"e", "n", NULL};
static const char *const rsa_priv[] = {"d", "p", "q", "dp", "dq", "qi", NULL};

const struct dsig_keytype dsig_keytype_rsa = {
    .kty = "RSA",
    .crv = NULL,
    .pub_members = rsa_pub,
    .priv_members = rsa_priv,
    .has_public = 1,
    .sized = 1,
    .generate = rsa_generate,
    .import_jwk = rsa_import_jwk,
    .export_jwk = rsa_export_jwk,
    .to_pkey = rsa_to_pkey,
    .from_pkey = rsa_from_pkey,
    .public_copy = rsa_public_copy,
    .destroy = rsa_destroy,
    .bits = rsa_bits,
};

/* ---- signature operations -------------------------------------------------------------------- */

/* Configure the padding of a sign/verify context. @spec RFC 7518 §3.3 (PKCS#1 v1.5), §3.5 (PSS with
 * MGF1 using the same hash and a salt as long as the hash output; verification demands exactly it). */
static int rsa_set_padding(EVP_PKEY_CTX *c, const struct dsig_pk_state *st)
{
    const struct rsa_params *p = st->alg->params;
    int ok = EVP_PKEY_CTX_set_rsa_padding(c, p->pss ? RSA_PKCS1_PSS_PADDING : RSA_PKCS1_PADDING) > 0;
    if (ok && p->pss)
        ok = EVP_PKEY_CTX_set_rsa_pss_saltlen(c, RSA_PSS_SALTLEN_DIGEST) > 0 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(c, st->md) > 0;
    return ok ? DSIG_OK : dsig_fail_openssl(DSIG_E_CRYPTO, "RSA padding parameters");
}

/* Start a streaming signature: only the hash runs until final. */
static int rsa_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                         const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    const struct rsa_params *p = alg->params;
    return dsig_pk_sign_init(state, alg, p->hash, ((const struct rsa_impl *)key->impl)->pkey, NULL);
}

/* @spec RFC 8017 §8.1.1 / §8.2.1: sign the digest (RSASP1 over the EMSA encoding). */
static int rsa_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct dsig_pk_state *st = state;
    size_t k = (size_t)EVP_PKEY_get_size(st->pkey);
    if (cap < k)
        return dsig_fail(DSIG_E_BUFFER, "%s signature needs %zu bytes, buffer has %zu", st->alg->name, k,
                         cap);
    size_t n = k;
    int rc = dsig_pk_sign_digest(st, rsa_set_padding, sig, &n, "RSA signing");
    if (rc == DSIG_OK && n != k)
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "RSA signing");
    if (rc == DSIG_OK)
        *sig_len = n;
    return rc;
}

/* Start a streaming verification; a signature of the wrong length is remembered and rejected at final. */
static int rsa_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                           const uint8_t *sig, size_t sig_len,
                           const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    const struct rsa_params *p = alg->params;
    EVP_PKEY *pkey = ((const struct rsa_impl *)key->impl)->pkey;
    return dsig_pk_verify_init(state, alg, p->hash, pkey, NULL, sig, sig_len,
                               (size_t)EVP_PKEY_get_size(pkey));
}

/* @spec RFC 8017 §8.1.2 / §8.2.2: RSAVP1 and the EMSA check on the digest. */
static int rsa_verify_final(void *state)
{
    struct dsig_pk_state *st = state;
    if (st->bad_sig)
        return dsig_fail(DSIG_E_VERIFY, "%s signature must be exactly %d bytes (the modulus size)",
                         st->alg->name, EVP_PKEY_get_size(st->pkey));
    uint8_t dg[EVP_MAX_MD_SIZE];
    size_t dlen;
    int rc = dsig_pk_digest(st, dg, &dlen);
    if (rc)
        return rc;
    return dsig_pk_verify_digest(st, rsa_set_padding, st->sig, st->sig_len, dg, dlen);
}

/* dsig/prehashed.h: the algorithm's own hash only (RS256 signs SHA-256 digests). */
static const char *rsa_digest_hashes(const dsig_alg *alg)
{
    return dsig_pk_hash_name(((const struct rsa_params *)alg->params)->hash);
}

/* @spec RFC 8017 §8.1.1 / §8.2.1 on a caller's digest: the signature of any message with that hash. */
static int rsa_sign_prehashed(const dsig_alg *alg, const struct dsig_key *key, const char *hash,
                              const uint8_t *digest, size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    (void)hash; /* the core checked it is the algorithm's */
    const struct rsa_params *p = alg->params;
    struct dsig_pk_state st;
    int rc = dsig_pk_prehashed_state(&st, alg, p->hash, ((const struct rsa_impl *)key->impl)->pkey, NULL, len);
    if (rc)
        return rc;
    size_t k = (size_t)EVP_PKEY_get_size(st.pkey), n = k;
    if (cap < k)
        return dsig_fail(DSIG_E_BUFFER, "%s signature needs %zu bytes, buffer has %zu", alg->name, k, cap);
    rc = dsig_pk_sign_hash(&st, rsa_set_padding, digest, len, sig, &n, "RSA signing");
    if (rc == DSIG_OK && n != k)
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "RSA signing");
    if (rc == DSIG_OK)
        *sig_len = n;
    return rc;
}

/* @spec RFC 8017 §8.1.2 / §8.2.2 on a caller's digest. */
static int rsa_verify_prehashed(const dsig_alg *alg, const struct dsig_key *key, const char *hash,
                                const uint8_t *digest, size_t len, const uint8_t *sig, size_t sig_len)
{
    (void)hash;
    const struct rsa_params *p = alg->params;
    struct dsig_pk_state st;
    int rc = dsig_pk_prehashed_state(&st, alg, p->hash, ((const struct rsa_impl *)key->impl)->pkey, NULL, len);
    if (rc)
        return rc;
    if (sig_len != (size_t)EVP_PKEY_get_size(st.pkey))
        return dsig_fail(DSIG_E_VERIFY, "%s signature must be exactly %d bytes (the modulus size)", alg->name,
                         EVP_PKEY_get_size(st.pkey));
    return dsig_pk_verify_digest(&st, rsa_set_padding, sig, sig_len, digest, len);
}

static const struct dsig_alg_prehashed rsa_prehashed = {
    .hashes = rsa_digest_hashes,
    .sign = rsa_sign_prehashed,
    .verify = rsa_verify_prehashed,
};

static const struct dsig_alg_ops rsa_ops = {
    .sign_init = rsa_sign_init,
    .sign_update = dsig_pk_update,
    .sign_final = rsa_sign_final,
    .verify_init = rsa_verify_init,
    .verify_update = dsig_pk_update,
    .verify_final = rsa_verify_final,
    .free_state = dsig_pk_free_state,
    .prehashed = &rsa_prehashed,
};

static const struct rsa_params p_rs256 = {DSIG_PK_SHA256, 0}, p_rs384 = {DSIG_PK_SHA384, 0},
                                p_rs512 = {DSIG_PK_SHA512, 0}, p_ps256 = {DSIG_PK_SHA256, 1},
                                p_ps384 = {DSIG_PK_SHA384, 1}, p_ps512 = {DSIG_PK_SHA512, 1};

#define RSA_ALG(var, nm, fam, desc, base, fl, par)                                                  \
    static const dsig_alg var = {.name = nm,                                                         \
                                 .family = fam,                                                      \
                                 .description = desc,                                                \
                                 .keytype = &dsig_keytype_rsa,                                       \
                                 .baseline = base,                                                   \
                                 .security_bits = 112,                                               \
                                 .flags = fl,                                                        \
                                 .sig_max = RSA_MAX_SIG,                                             \
                                 .min_key_bits = RSA_MIN_BITS,                                       \
                                 .default_key_bits = RSA_MIN_BITS,                                   \
                                 .ops = &rsa_ops,                                                    \
                                 .params = &par}

/* sig_max covers the largest modulus we accept (16384 bits), so JWS and the CLI can sign with it. */
#define RSA_MAX_SIG 2048

#define PKCS1 "RSASSA-PKCS1-v1_5"
#define PSS "RSASSA-PSS"
RSA_ALG(alg_rs256, "RS256", PKCS1, "RSASSA-PKCS1-v1_5 using SHA-256", "SHA-256", DSIG_ALG_ONE_PASS,
        p_rs256);
RSA_ALG(alg_rs384, "RS384", PKCS1, "RSASSA-PKCS1-v1_5 using SHA-384", "SHA-384", DSIG_ALG_ONE_PASS,
        p_rs384);
RSA_ALG(alg_rs512, "RS512", PKCS1, "RSASSA-PKCS1-v1_5 using SHA-512", "SHA-512", DSIG_ALG_ONE_PASS,
        p_rs512);
RSA_ALG(alg_ps256, "PS256", PSS, "RSASSA-PSS using SHA-256 and MGF1 with SHA-256", "SHA-256",
        DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED, p_ps256);
RSA_ALG(alg_ps384, "PS384", PSS, "RSASSA-PSS using SHA-384 and MGF1 with SHA-384", "SHA-384",
        DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED, p_ps384);
RSA_ALG(alg_ps512, "PS512", PSS, "RSASSA-PSS using SHA-512 and MGF1 with SHA-512", "SHA-512",
        DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED, p_ps512);

const dsig_alg *const dsig_rsa_algs[] = {&alg_rs256, &alg_rs384, &alg_rs512, &alg_ps256,
                                         &alg_ps384, &alg_ps512, NULL};
