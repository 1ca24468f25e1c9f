/*
 * The JWS protected header: building ours, parsing theirs under a strict policy, and deciding which
 * algorithm verifies — from the key and the caller, never from the header alone.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "jose/jose_internal.h"

/* Header parameters this implementation understands when listed in "crit" (RFC 7797 only). */
static const char *const understood_crit[] = {"b64", NULL};

/* 1 if `name` is in the NULL-terminated list. */
static int in_list(const char *const *list, const char *name)
{
    for (; list && *list; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

/* @spec RFC 7515 §4.1.11 (crit), RFC 7797 §3 and §6 (b64 must be understood and listed in crit). */
static int check_crit(const json_t *hdr, int *b64_listed)
{
    *b64_listed = 0;
    const json_t *crit = json_object_get(hdr, "crit");
    if (!crit)
        return DSIG_OK;
    if (!json_is_array(crit))
        return dsig_fail(DSIG_E_HEADER, "JWS header: \"crit\" must be an array of member names");
    size_t n = json_array_size(crit);
    if (n == 0)
        return dsig_fail(DSIG_E_HEADER, "JWS header: \"crit\" must not be empty");
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(crit, i);
        if (!json_is_string(e))
            return dsig_fail(DSIG_E_HEADER, "JWS header: \"crit\" entry %zu is not a string", i);
        const char *name = json_string_value(e);
        for (size_t j = 0; j < i; j++)
            if (strcmp(json_string_value(json_array_get(crit, j)), name) == 0)
                return dsig_fail(DSIG_E_HEADER, "JWS header: \"crit\" lists \"%.64s\" twice", name);
        if (!in_list(understood_crit, name))
            return dsig_fail(DSIG_E_HEADER, "JWS header: \"crit\" lists unknown member \"%.64s\"",
                             name);
        if (!json_object_get(hdr, name))
            return dsig_fail(DSIG_E_HEADER,
                             "JWS header: \"crit\" lists \"%.64s\" but the header has no such member",
                             name);
        if (strcmp(name, "b64") == 0)
            *b64_listed = 1;
    }
    return DSIG_OK;
}

/* @spec RFC 7515 §7.2.1: protected and unprotected header members must be disjoint; alg/b64/crit
 * are only meaningful integrity-protected (RFC 7515 §4.1.11, RFC 7797 §3). */
static int check_unprotected(const json_t *prot, const json_t *unprot)
{
    static const char *const protected_only[] = {"alg", "b64", "crit", NULL};
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)unprot, name, v) {
        (void)v;
        if (in_list(protected_only, name))
            return dsig_fail(DSIG_E_HEADER,
                             "JWS unprotected header: \"%.64s\" is only allowed in the protected header",
                             name);
        if (json_object_get(prot, name))
            return dsig_fail(DSIG_E_HEADER,
                             "JWS: member \"%.64s\" is in both the protected and unprotected header",
                             name);
    }
    return DSIG_OK;
}

/* @spec RFC 7515 §5.2 steps 2-5; RFC 7797 §3 (b64). */
int jose_header_parse(const char *b64, size_t b64_len, const json_t *unprotected, jose_header *out)
{
    memset(out, 0, sizeof *out);
    if (b64_len == 0)
        return dsig_fail(DSIG_E_FORMAT, "JWS: the protected header is empty");
    if (b64_len > dsig_b64url_encoded_len(DSIG_JWS_MAX_HEADER))
        return dsig_fail(DSIG_E_HEADER, "JWS header: larger than %u bytes", DSIG_JWS_MAX_HEADER);
    uint8_t raw[DSIG_JWS_MAX_HEADER + 3];
    size_t raw_len = 0;
    int rc = dsig_b64url_decode(b64, b64_len, raw, sizeof raw, &raw_len);
    if (rc)
        return jose_fail_prefix(DSIG_E_BASE64, "JWS protected header");
    if (raw_len > DSIG_JWS_MAX_HEADER)
        return dsig_fail(DSIG_E_HEADER, "JWS header: larger than %u bytes", DSIG_JWS_MAX_HEADER);
    json_t *hdr;
    if ((rc = jose_json_load_object(&hdr, (const char *)raw, raw_len, "JWS header")))
        return rc;

    const json_t *alg = json_object_get(hdr, "alg");
    const json_t *b64v = json_object_get(hdr, "b64");
    const json_t *kid = json_object_get(hdr, "kid");
    int b64_listed = 0;
    if (!alg)
        rc = dsig_fail(DSIG_E_HEADER, "JWS header: \"alg\" is missing");
    else if (!json_is_string(alg))
        rc = dsig_fail(DSIG_E_HEADER, "JWS header: \"alg\" must be a string");
    else if (strcasecmp(json_string_value(alg), "none") == 0)
        rc = dsig_fail(DSIG_E_HEADER, "JWS header: \"alg\":\"%s\" (unsecured JWS) is never accepted",
                       json_string_value(alg));
    else if (json_string_length(alg) == 0 || json_string_length(alg) >= JOSE_ALG_NAME_MAX)
        rc = dsig_fail(DSIG_E_HEADER, "JWS header: \"alg\" has an impossible length");
    else if (b64v && !json_is_boolean(b64v))
        rc = dsig_fail(DSIG_E_HEADER, "JWS header: \"b64\" must be true or false");
    else if (kid && !json_is_string(kid))
        rc = dsig_fail(DSIG_E_HEADER, "JWS header: \"kid\" must be a string");
    else
        rc = check_crit(hdr, &b64_listed);
    if (rc == DSIG_OK && b64v && json_is_false(b64v) && !b64_listed)
        rc = dsig_fail(DSIG_E_HEADER, "JWS header: \"b64\":false requires \"crit\":[\"b64\"]");
    if (rc == DSIG_OK && unprotected)
        rc = check_unprotected(hdr, unprotected);
    if (rc == DSIG_OK) {
        memcpy(out->alg, json_string_value(alg), json_string_length(alg) + 1);
        out->b64 = !(b64v && json_is_false(b64v));
    }
    json_decref(hdr);
    return rc;
}

int jose_header_build(const dsig_alg *alg, const dsig_key *key, int b64, int include_kid,
                      char **b64_out, size_t *b64_len)
{
    *b64_out = NULL;
    char kid[DSIG_THUMBPRINT_LEN];
    if (include_kid && !key->kid) { /* the key's own "kid" first, else its thumbprint */
        int rc = dsig_jwk_thumbprint(key, kid);
        if (rc)
            return rc;
    }
    jose_buf b = {0};
    jose_buf_adds(&b, "{");
    jose_buf_member(&b, NULL, "alg", alg->name);
    if (!b64)
        jose_buf_adds(&b, ",\"b64\":false,\"crit\":[\"b64\"]");
    if (include_kid)
        jose_buf_member(&b, ",", "kid", key->kid ? key->kid : kid);
    jose_buf_adds(&b, "}");
    if (b.oom) {
        jose_buf_wipe(&b);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    char *enc = dsig_b64url_encode_alloc((const uint8_t *)b.p, b.len);
    jose_buf_wipe(&b);
    if (!enc)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    *b64_out = enc;
    *b64_len = strlen(enc);
    return DSIG_OK;
}

const dsig_alg *jose_legacy_alias(const char *name, const struct dsig_keytype *kt)
{
    /* @spec RFC 8037 §3.1: "EdDSA" with the curve taken from the OKP key. */
    if (!name || !kt || strcmp(name, "EdDSA") != 0 || strcmp(kt->kty, "OKP") != 0)
        return NULL;
    for (size_t i = 0, n = dsig_alg_count(); i < n; i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (a && a->keytype == kt)
            return a;
    }
    return NULL;
}

const dsig_alg *dsig_jws_alg_for_key(const char *name, const dsig_key *key)
{
    if (!name)
        return NULL;
    const dsig_alg *a = dsig_alg_by_name(name);
    return a ? a : jose_legacy_alias(name, key ? key->type : NULL);
}

/* Does header alg `h` name `alg` (directly, or through the EdDSA alias for this key type)? */
static int header_names(const char *h, const dsig_alg *alg, const dsig_key *key)
{
    if (strcmp(h, alg->name) == 0)
        return 1;
    return jose_legacy_alias(h, key->type) == alg;
}

/* Is `alg` in the caller's allow-list (by its name, or the header's alias name for it)? */
static int allowed_has(const char *const *allowed, const dsig_alg *alg, const char *h)
{
    if (!allowed)
        return 1;
    if (in_list(allowed, alg->name))
        return 1;
    return h && strcmp(h, alg->name) != 0 && in_list(allowed, h);
}

/* Key type as words for details: "RSA", "EC P-256", "OKP Ed25519", "oct". */
static void key_words(const dsig_key *key, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s", key->type->kty, key->type->crv ? " " : "",
             key->type->crv ? key->type->crv : "");
}

int jose_decide_alg(const char *h, const dsig_key *key, const dsig_jws_verify_opts *opts,
                    const dsig_alg **out)
{
    *out = NULL;
    const char *const *allowed = opts ? opts->allowed : NULL;
    const dsig_alg *want = opts ? opts->alg : NULL;
    const dsig_alg *a = NULL;
    char kw[64];
    key_words(key, kw, sizeof kw);
    int rc;

    if (key->alg || want) {
        /* The key (or the caller) names the algorithm; the header must agree. */
        a = key->alg ? key->alg : want;
        if (key->alg && want && want != key->alg)
            return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "the caller asked for %s but the key is bound to %s",
                             want->name, key->alg->name);
        if (h && !header_names(h, a, key))
            return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "JWS header says %.64s but the %s %s",
                             h, key->alg ? "key is bound to" : "caller expects", a->name);
    } else if (dsig_key_infer_alg(key, &a) == DSIG_OK) {
        /* An unbound key whose type admits exactly one algorithm (a public JWK without "alg" from
         * another JOSE library): that algorithm, decided by the key; the header must agree. */
        if (h && !header_names(h, a, key))
            return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "JWS header says %.64s but %s keys are used with %s "
                             "only", h, kw, a->name);
    } else if (allowed && h) {
        if (!in_list(allowed, h))
            return dsig_fail(DSIG_E_ALG_NOT_ALLOWED,
                             "JWS header says %.64s, which is not in the allowed algorithms", h);
        a = dsig_alg_by_name(h);
        if (!a)
            a = jose_legacy_alias(h, key->type);
        if (!a)
            return dsig_fail(DSIG_E_UNSUPPORTED, "JWS header: algorithm \"%.64s\" is not supported", h);
    } else {
        char why[320]; /* dsig_key_infer_alg named the algorithms that fit */
        snprintf(why, sizeof why, "%s", dsig_last_error_detail());
        return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "%s: pass the algorithm (opts->alg)%s", why,
                         h ? " or an allow-list (opts->allowed)" : "");
    }
    if (!allowed_has(allowed, a, h))
        return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "%s is not in the allowed algorithms", a->name);
    rc = dsig_key_check_alg(key, a);
    if (rc == DSIG_E_KEY_MISMATCH) {
        char why[256];
        snprintf(why, sizeof why, "%s", dsig_last_error_detail());
        return dsig_fail(DSIG_E_ALG_NOT_ALLOWED, "%s%.64s but the key's type is %s (%s)",
                         h ? "JWS header says " : "algorithm ", h ? h : a->name, kw, why);
    }
    if (rc)
        return rc;
    *out = a;
    return DSIG_OK;
}
