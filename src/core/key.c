/* Keys: generation, binding to algorithms, public copies, PEM via OpenSSL. */
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/decoder.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "core/internal.h"
#include "core/layer_api.h"

struct dsig_key *dsig_key_new(const struct dsig_keytype *type)
{
    struct dsig_key *k = dsig_calloc(1, sizeof *k);
    if (k)
        k->type = type;
    return k;
}

void dsig_key_free(dsig_key *key)
{
    if (!key)
        return;
    if (key->state) /* unlock the state file first: the unused rest of the window is lost by design */
        dsig_state_close(key);
    if (key->impl && key->type->destroy)
        key->type->destroy(key);
    if (key->kid)
        dsig_xfree(key->kid, 0);
    dsig_xfree(key, sizeof *key);
}

/* 1 if alg takes keys of type t: its keytype or one in its optional keytypes list (internal.h). */
int dsig_alg_takes_keytype(const dsig_alg *alg, const struct dsig_keytype *t)
{
    if (t == alg->keytype)
        return 1;
    if (alg->keytypes)
        for (const struct dsig_keytype *const *p = alg->keytypes; *p; p++)
            if (*p == t)
                return 1;
    return 0;
}

/* Type, curve and size of `key` fit `alg` (the binding is not looked at). */
static int key_fits_alg(const dsig_key *key, const dsig_alg *alg)
{
    if (!dsig_alg_takes_keytype(alg, key->type)) {
        const char *kc = key->type->crv ? key->type->crv : "";
        const char *ac = alg->keytype->crv ? alg->keytype->crv : "";
        char also[160] = ""; /* the other accepted curves, for the message */
        for (const struct dsig_keytype *const *p = alg->keytypes; p && *p; p++)
            if (*p != alg->keytype && (*p)->crv && strlen(also) + strlen((*p)->crv) + 3 < sizeof also)
                strcat(strcat(also, *also ? ", " : " (or "), (*p)->crv);
        if (*also)
            strcat(also, ")");
        return dsig_fail(DSIG_E_KEY_MISMATCH, "%s needs a key of type %s%s%s%s, got one of type %s%s%s", alg->name,
                         alg->keytype->kty, *ac ? " " : "", ac, also, key->type->kty, *kc ? " " : "", kc);
    }
    unsigned bits = key->type->bits ? key->type->bits(key) : 0;
    if (alg->min_key_bits && bits < alg->min_key_bits)
        return dsig_fail(DSIG_E_KEY_WEAK, "%s needs a key of at least %u bits, got %u", alg->name,
                         alg->min_key_bits, bits);
    return DSIG_OK;
}

int dsig_key_check_alg(const dsig_key *key, const dsig_alg *alg)
{
    if (!key || !alg)
        return dsig_fail(DSIG_E_ARG, "key or algorithm missing");
    /* An algorithm that takes only its own keys says how to get one: a key made for another purpose
     * (or a PEM key, never bound) must not be pressed into this one. */
    char hint[128] = "";
    if (alg->flags & DSIG_ALG_BOUND_KEY)
        snprintf(hint, sizeof hint, "; %s takes only keys made for it (JWK \"alg\":\"%s\"): make one with "
                 "`dsig keygen -a %s` (dsig_key_generate)", alg->name, alg->name, alg->name);
    if (key->alg && key->alg != alg)
        return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "the key is bound to %s, not %s%s", key->alg->name,
                         alg->name, hint);
    int rc = key_fits_alg(key, alg);
    if (rc == DSIG_OK && !key->alg && *hint)
        return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "the key is not bound to an algorithm (PEM keys never are)%s",
                         hint);
    return rc;
}

int dsig_key_set_alg(dsig_key *key, const dsig_alg *alg)
{
    if (!key)
        return dsig_fail(DSIG_E_ARG, "no key");
    int rc = alg ? key_fits_alg(key, alg) : DSIG_OK;
    if (rc == DSIG_OK)
        key->alg = alg;
    return rc;
}

int dsig_key_generate(dsig_key **out, const dsig_alg *alg, const dsig_keygen_params *params)
{
    if (!out || !alg)
        return dsig_fail(DSIG_E_ARG, "dsig_key_generate: NULL argument");
    *out = NULL;
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    const char *param = params ? params->param : NULL;
    if (param && !alg->keytype->generate_param)
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s has no parameter sets to choose from (param \"%s\")",
                         alg->name, param);
    if (param && strlen(param) > 400)
        return dsig_fail(DSIG_E_ARG, "parameter set name longer than 400 characters");
    if (params && params->bits && !alg->keytype->sized && params->bits != alg->default_key_bits) {
        const char *crv = alg->keytype->crv;
        if (!alg->default_key_bits)
            return dsig_fail(DSIG_E_ARG, "%s keys have one size, set by the algorithm: a key size "
                             "(%u bits) does not apply", alg->name, params->bits);
        return dsig_fail(DSIG_E_ARG, "%s keys have one size (%s%s%s, %u bits): a key size of %u bits "
                         "does not apply; the algorithm sets the size", alg->name, alg->keytype->kty,
                         crv ? " " : "", crv ? crv : "", alg->default_key_bits, params->bits);
    }
    unsigned bits = params && params->bits ? params->bits : alg->default_key_bits;
    if (alg->min_key_bits && bits < alg->min_key_bits)
        return dsig_fail(DSIG_E_KEY_WEAK, "%s needs a key of at least %u bits", alg->name,
                         alg->min_key_bits);
    dsig_rng rng;
    if (params && params->seed) {
        if (params->seed_len < 16)
            return dsig_fail(DSIG_E_ARG, "key generation seed must be at least 16 bytes");
        /* A named parameter set is part of the label, so that one seed gives unrelated keys for
         * different sets; without one the label is unchanged (existing seeded keys stay the same). */
        char label[512];
        if (param)
            snprintf(label, sizeof label, "keygen/%s/%u/%s", alg->keytype->kty, bits, param);
        else
            snprintf(label, sizeof label, "keygen/%s/%u", alg->keytype->kty, bits);
        rc = dsig_rng_init_seeded(&rng, params->seed, params->seed_len, label);
        if (rc)
            return rc;
    } else {
        dsig_rng_init_os(&rng);
    }
    struct dsig_key *k = dsig_key_new(alg->keytype);
    if (!k) {
        dsig_rng_clear(&rng);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    rc = alg->keytype->generate_param ? alg->keytype->generate_param(k, param, bits, &rng)
                                      : alg->keytype->generate(k, bits, &rng);
    dsig_rng_clear(&rng);
    if (rc) {
        dsig_key_free(k);
        return rc;
    }
    k->has_private = 1;
    k->alg = alg;
    *out = k;
    return DSIG_OK;
}

int dsig_key_public(dsig_key **out, const dsig_key *key)
{
    if (!out || !key)
        return dsig_fail(DSIG_E_ARG, "dsig_key_public: NULL argument");
    *out = NULL;
    if (!key->type->has_public || !key->type->public_copy)
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s keys are secret keys and have no public part",
                         key->type->kty);
    struct dsig_key *k = dsig_key_new(key->type);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    int rc = key->type->public_copy(k, key);
    if (rc) {
        dsig_key_free(k);
        return rc;
    }
    k->has_private = 0;
    k->alg = key->alg;
    if (key->kid && !(k->kid = dsig_strdup(key->kid))) {
        dsig_key_free(k);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    *out = k;
    return DSIG_OK;
}

int dsig_key_has_private(const dsig_key *key) { return key && key->has_private; }
const char *dsig_key_kty(const dsig_key *key) { return key->type->kty; }
const char *dsig_key_curve(const dsig_key *key) { return key->type->crv; }
unsigned dsig_key_bits(const dsig_key *key) { return key->type->bits ? key->type->bits(key) : 0; }
const dsig_alg *dsig_key_alg(const dsig_key *key) { return key->alg; }
const char *dsig_key_kid(const dsig_key *key) { return key ? key->kid : NULL; }

int dsig_key_infer_alg(const dsig_key *key, const dsig_alg **out)
{
    if (!key || !out)
        return dsig_fail(DSIG_E_ARG, "dsig_key_infer_alg: NULL argument");
    *out = key->alg;
    if (key->alg)
        return DSIG_OK;
    const dsig_alg *only = NULL;
    size_t fits = 0;
    char names[256] = "";
    for (size_t i = 0, n = dsig_alg_count(); i < n; i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (a->explicit_only || !dsig_alg_takes_keytype(a, key->type))
            continue;
        only = a;
        if (fits++ < 12 && strlen(names) + strlen(a->name) + 3 < sizeof names)
            strcat(strcat(names, *names ? ", " : ""), a->name);
    }
    if (fits == 1) {
        *out = only;
        return DSIG_OK;
    }
    const char *crv = key->type->crv;
    if (fits == 0)
        return dsig_fail(DSIG_E_UNSUPPORTED, "no registered algorithm takes keys of type %s%s%s",
                         key->type->kty, crv ? " " : "", crv ? crv : "");
    return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "the key is not bound to an algorithm and keys of type "
                     "%s%s%s fit %zu algorithms (%s%s)",
                     key->type->kty, crv ? " " : "", crv ? crv : "", fits, names, fits > 12 ? ", ..." : "");
}

/* ---- PEM ------------------------------------------------------------------------------------ */

/* Never prompt for a passphrase (OpenSSL's default reads the terminal): encrypted keys are refused. */
DSIG_LAYER_API int dsig_pem_no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* A dsig key from an EVP_PKEY: the first key type whose from_pkey does not answer
 * DSIG_E_KEY_MISMATCH owns it (a weak or malformed key of that type is reported as such). */
static int key_from_pkey(EVP_PKEY *pkey, struct dsig_key **out)
{
    for (const struct dsig_keytype *const *t = dsig_keytype_list(); *t; t++) {
        if (!(*t)->from_pkey)
            continue;
        struct dsig_key *k = dsig_key_new(*t);
        if (!k)
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
        int rc = (*t)->from_pkey(k, pkey);
        if (rc == DSIG_OK) {
            *out = k;
            return DSIG_OK;
        }
        dsig_key_free(k);
        if (rc != DSIG_E_KEY_MISMATCH)
            return rc;
    }
    const char *name = EVP_PKEY_get0_type_name(pkey);
    return dsig_fail(DSIG_E_UNSUPPORTED, "PEM: key type %s is not supported", name ? name : "?");
}

/* Decode one key with OpenSSL's decoders: `type` "PEM" or "DER", `selection` a key pair (private)
 * or a public key. Every form openssl writes is accepted: PKCS#8, SEC1 ("EC PRIVATE KEY"), PKCS#1
 * ("RSA PRIVATE KEY", "RSA PUBLIC KEY"), SubjectPublicKeyInfo. NULL when it is not such a key. */
static EVP_PKEY *decode_pkey(const unsigned char *data, size_t len, const char *type, int selection)
{
    EVP_PKEY *pkey = NULL;
    OSSL_DECODER_CTX *d = OSSL_DECODER_CTX_new_for_pkey(&pkey, type, NULL, NULL, selection, NULL, NULL);
    if (!d)
        return NULL;
    /* Never prompt: encrypted keys fail instead of reading the terminal. */
    OSSL_DECODER_CTX_set_pem_password_cb(d, dsig_pem_no_passphrase, NULL);
    if (!OSSL_DECODER_from_data(d, &data, &len)) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    OSSL_DECODER_CTX_free(d);
    return pkey;
}

/* PEM or DER (`type`) to a dsig key. */
static int import_encoded(dsig_key **out, const unsigned char *data, size_t len, const char *type)
{
    int priv = 1;
    EVP_PKEY *pkey = decode_pkey(data, len, type, EVP_PKEY_KEYPAIR);
    if (!pkey) {
        priv = 0;
        pkey = decode_pkey(data, len, type, EVP_PKEY_PUBLIC_KEY);
    }
    if (!pkey) {
        char what[96];
        snprintf(what, sizeof what, "%s: cannot parse the key (PKCS#8, SEC1, PKCS#1 or "
                                    "SubjectPublicKeyInfo, unencrypted)", type);
        return dsig_fail_openssl(DSIG_E_FORMAT, what);
    }
    struct dsig_key *k = NULL;
    int rc = key_from_pkey(pkey, &k);
    EVP_PKEY_free(pkey);
    if (rc)
        return rc;
    if (!priv) /* a public key never yields a signing key, whatever the provider said */
        k->has_private = 0;
    *out = k;
    return DSIG_OK;
}

/* The first PEM block that holds a key ("... PRIVATE KEY" or "... PUBLIC KEY"): `openssl ecparam
 * -genkey` writes an "EC PARAMETERS" block before the key. NULL when there is none. */
static const char *first_key_block(const char *pem, size_t len)
{
    static const char begin[] = "-----BEGIN ";
    const char *p = pem, *end = pem + len;
    while ((p = memmem(p, (size_t)(end - p), begin, sizeof begin - 1)) != NULL) {
        const char *label = p + sizeof begin - 1;
        const char *dash = memmem(label, (size_t)(end - label), "-----", 5);
        if (!dash)
            return NULL;
        size_t n = (size_t)(dash - label);
        if ((n >= 11 && memcmp(dash - 11, "PRIVATE KEY", 11) == 0) ||
            (n >= 10 && memcmp(dash - 10, "PUBLIC KEY", 10) == 0))
            return p;
        p = dash;
    }
    return NULL;
}

/* What both imports check first: arguments, the backends, the size bound. */
static int import_begin(dsig_key **out, const void *data, size_t len, const char *type)
{
    if (!out || !data)
        return dsig_fail(DSIG_E_ARG, "dsig_key_import_%s: NULL argument", type[0] == 'P' ? "pem" : "der");
    *out = NULL;
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    if (len > DSIG_JWK_MAX_BYTES)
        return dsig_fail(DSIG_E_TOO_LARGE, "%s input larger than %u bytes", type, DSIG_JWK_MAX_BYTES);
    return DSIG_OK;
}

int dsig_key_import_pem(dsig_key **out, const char *pem, size_t len)
{
    int rc = import_begin(out, pem, len, "PEM");
    if (rc)
        return rc;
    if (memmem(pem, len, "ENCRYPTED", 9))
        return dsig_fail(DSIG_E_UNSUPPORTED, "PEM: encrypted private keys are not supported; "
                                             "decrypt it first (openssl pkey -in KEY -out PLAIN)");
    const char *block = first_key_block(pem, len);
    if (!block)
        return dsig_fail(DSIG_E_FORMAT, "PEM: no key block (\"-----BEGIN PRIVATE KEY-----\", \"EC "
                                        "PRIVATE KEY\", \"RSA PRIVATE KEY\", \"PUBLIC KEY\" or \"RSA "
                                        "PUBLIC KEY\")");
    return import_encoded(out, (const unsigned char *)block, len - (size_t)(block - pem), "PEM");
}

int dsig_key_import_der(dsig_key **out, const uint8_t *der, size_t len)
{
    int rc = import_begin(out, der, len, "DER");
    if (rc)
        return rc;
    if (len == 0 || der[0] != 0x30)
        return dsig_fail(DSIG_E_FORMAT, "DER: a key starts with an ASN.1 SEQUENCE (0x30)");
    return import_encoded(out, der, len, "DER");
}

int dsig_key_export_pem(const dsig_key *key, int include_private, char **pem, size_t *len)
{
    if (!key || !pem)
        return dsig_fail(DSIG_E_ARG, "dsig_key_export_pem: NULL argument");
    *pem = NULL;
    if (!key->type->to_pkey)
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s keys have no PEM form", key->type->kty);
    if (include_private && !key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "the key has no private part to export");
    EVP_PKEY *pkey = NULL;
    int rc = key->type->to_pkey(key, include_private, (void **)&pkey);
    if (rc)
        return rc;
    BIO *bio = BIO_new(BIO_s_secmem());
    int ok = bio && (include_private ? PEM_write_bio_PKCS8PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL)
                                     : PEM_write_bio_PUBKEY(bio, pkey));
    EVP_PKEY_free(pkey);
    if (!ok) {
        BIO_free(bio);
        return dsig_fail_openssl(DSIG_E_CRYPTO, "PEM export");
    }
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    char *copy = dsig_malloc((size_t)n + 1);
    if (!copy) {
        BIO_free(bio);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    memcpy(copy, data, (size_t)n);
    copy[n] = '\0';
    BIO_free(bio); /* secmem BIO cleanses */
    *pem = copy;
    if (len)
        *len = (size_t)n;
    return DSIG_OK;
}
