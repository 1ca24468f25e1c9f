/*
 * JWK import/export (RFC 7517, RFC 7518 §6, RFC 8037 §2) and RFC 7638 thumbprints. This file owns JSON
 * and base64url; key types own the meaning of the decoded members (struct dsig_keytype).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "jose/jose_internal.h"
#include "core/layer_api.h"

/* Number of names in a NULL-terminated list. */
static size_t count_names(const char *const *l)
{
    size_t n = 0;
    while (l && l[n])
        n++;
    return n;
}

/* Optional string member: absent → *out NULL; other JSON type → DSIG_E_JSON naming it. */
static int opt_string(const json_t *obj, const char *name, const char **out)
{
    *out = NULL;
    const json_t *v = json_object_get(obj, name);
    if (!v)
        return DSIG_OK;
    if (!json_is_string(v))
        return dsig_fail(DSIG_E_JSON, "JWK: member \"%s\" must be a string", name);
    *out = json_string_value(v);
    return DSIG_OK;
}

/* @spec RFC 7517 §4.2 (use), §4.3 (key_ops): we only hold signature keys. */
static int check_use(const json_t *jwk)
{
    const char *use;
    int rc = opt_string(jwk, "use", &use);
    if (rc)
        return rc;
    if (use && strcmp(use, "sig") != 0)
        return dsig_fail(DSIG_E_KEY, "JWK: \"use\" is \"%.32s\"; only signature keys (\"sig\") are accepted",
                         use);
    const json_t *ops = json_object_get(jwk, "key_ops");
    if (!ops)
        return DSIG_OK;
    if (!json_is_array(ops))
        return dsig_fail(DSIG_E_JSON, "JWK: member \"key_ops\" must be an array of strings");
    int sig_op = 0;
    for (size_t i = 0; i < json_array_size(ops); i++) {
        const json_t *e = json_array_get(ops, i);
        if (!json_is_string(e))
            return dsig_fail(DSIG_E_JSON, "JWK: \"key_ops\" entry %zu is not a string", i);
        sig_op |= strcmp(json_string_value(e), "sign") == 0 || strcmp(json_string_value(e), "verify") == 0;
    }
    if (!sig_op)
        return dsig_fail(DSIG_E_KEY, "JWK: \"key_ops\" allows neither \"sign\" nor \"verify\"");
    return DSIG_OK;
}

/* Decode every member of the key type (public then private), in keytype order. */
static int decode_members(const json_t *jwk, const struct dsig_keytype *t, dsig_jwk_member *m,
                          size_t *n, int *has_private)
{
    size_t np = count_names(t->pub_members), ns = count_names(t->priv_members);
    *n = 0;
    *has_private = 0;
    if (np + ns > DSIG_JWK_MAX_MEMBERS)
        return dsig_fail(DSIG_E_INTERNAL, "JWK: key type %s has too many members", t->kty);
    for (size_t i = 0; i < np + ns; i++) {
        const char *name = i < np ? t->pub_members[i] : t->priv_members[i - np];
        m[i].name = name;
        m[i].data = NULL;
        m[i].len = 0;
        *n = i + 1;
        const json_t *v = json_object_get(jwk, name);
        if (!v) {
            if (i < np)
                return dsig_fail(DSIG_E_KEY, "JWK: required member \"%s\" is missing", name);
            continue;
        }
        if (!json_is_string(v))
            return dsig_fail(DSIG_E_JSON, "JWK: member \"%s\" must be a string", name);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "JWK member \"%s\"", name);
        if (dsig_b64url_decode_alloc(json_string_value(v), json_string_length(v), &m[i].data, &m[i].len))
            return jose_fail_prefix(DSIG_E_BASE64, prefix);
        if (i >= np)
            *has_private = 1;
    }
    if (!t->has_public && !*has_private)
        return dsig_fail(DSIG_E_KEY, "JWK: %s key without its secret member", t->kty);
    return DSIG_OK;
}

/* Wipe and free decoded members. */
static void free_members(dsig_jwk_member *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].data)
            dsig_xfree(m[i].data, m[i].len);
}

/* @spec RFC 7517 §4.5: "kid" is a case-sensitive string. Kept as the key's own id, bounded and free
 * of control characters (it is printed, and written back into JWKs and JWS headers). */
static int keep_kid(dsig_key *key, const char *kid)
{
    size_t n = strlen(kid);
    if (n == 0 || n > DSIG_KID_MAX)
        return dsig_fail(DSIG_E_KEY, "JWK: \"kid\" must be 1 to %u bytes, got %zu", DSIG_KID_MAX, n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)kid[i] < 0x20 || kid[i] == 0x7f)
            return dsig_fail(DSIG_E_KEY, "JWK: \"kid\" holds a control character at byte %zu", i);
    if (!(key->kid = dsig_strdup(kid)))
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    return DSIG_OK;
}

/* The curves of key type `kty` ("P-256, P-384, ..."), for a message naming what "crv" may be. */
static void curves_of(const char *kty, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (const struct dsig_keytype *const *t = dsig_keytype_list(); *t; t++)
        if ((*t)->crv && strcmp((*t)->kty, kty) == 0 && strlen(buf) + strlen((*t)->crv) + 3 < cap)
            strcat(strcat(buf, *buf ? ", " : ""), (*t)->crv);
}

/* No key type answers (kty, crv): say which member is missing or wrong rather than "unsupported". */
static int no_keytype(const char *kty, const char *crv)
{
    char curves[256];
    curves_of(kty, curves, sizeof curves);
    if (!*curves)
        return dsig_fail(DSIG_E_UNSUPPORTED, "JWK: unsupported key type \"%.32s\"%s", kty,
                         crv ? " (and it takes no \"crv\")" : "");
    if (!crv)
        return dsig_fail(DSIG_E_KEY, "JWK: member \"crv\" is missing: key type \"%s\" needs one of %s",
                         kty, curves);
    return dsig_fail(DSIG_E_UNSUPPORTED, "JWK: \"crv\" \"%.32s\" is not supported for key type \"%s\" "
                     "(supported: %s)", crv, kty, curves);
}

/* Bind the key to the JWK "alg" (the EdDSA alias resolves through the key type). */
static int bind_alg(dsig_key *key, const char *alg_name)
{
    const dsig_alg *a = jose_legacy_alias(alg_name, key->type);
    if (!a)
        a = dsig_alg_by_name(alg_name);
    if (!a)
        return dsig_fail(DSIG_E_UNSUPPORTED, "JWK: \"alg\" \"%.64s\" is not a supported algorithm",
                         alg_name);
    int rc = dsig_key_set_alg(key, a);
    if (rc)
        return jose_fail_prefix(rc, "JWK \"alg\"");
    return DSIG_OK;
}

/* Everything after parsing: look the key type up, decode, hand to the key type, bind. */
static int import_object(dsig_key **out, json_t *jwk)
{
    const char *kty, *crv, *alg, *kid;
    int rc;
    if ((rc = opt_string(jwk, "kty", &kty)) || (rc = opt_string(jwk, "crv", &crv)) ||
        (rc = opt_string(jwk, "alg", &alg)) || (rc = opt_string(jwk, "kid", &kid)))
        return rc;
    if (!kty)
        return dsig_fail(DSIG_E_KEY, "JWK: member \"kty\" is missing");
    if ((rc = check_use(jwk)))
        return rc;
    const struct dsig_keytype *t = dsig_keytype_find_jwk(kty, crv, alg);
    /* AKP (RFC 9964): "alg" is required and selects the key type (the parameter set). */
    if (!t && dsig_keytype_kty_needs_alg(kty) && !alg)
        return dsig_fail(DSIG_E_KEY, "JWK: member \"alg\" is required for key type \"%.32s\"", kty);
    if (!t && dsig_keytype_kty_needs_alg(kty))
        return dsig_fail(DSIG_E_UNSUPPORTED, "JWK: key type \"%.32s\" with \"alg\" \"%.64s\" is not "
                                             "supported%s", kty, alg, crv ? " (and takes no \"crv\")" : "");
    if (!t)
        return no_keytype(kty, crv);
    if (!t->import_jwk)
        return dsig_fail(DSIG_E_UNSUPPORTED, "JWK: key type \"%s\" cannot be imported (no provider)", kty);
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t n = 0;
    int has_private = 0;
    dsig_key *key = NULL;
    rc = decode_members(jwk, t, m, &n, &has_private);
    if (rc == DSIG_OK && !(key = dsig_key_new(t)))
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (rc == DSIG_OK)
        rc = t->import_jwk(key, m, n);
    free_members(m, n);
    if (rc == DSIG_OK) {
        key->has_private = has_private;
        if (alg)
            rc = bind_alg(key, alg);
        if (rc == DSIG_OK && kid)
            rc = keep_kid(key, kid);
    }
    if (rc) {
        dsig_key_free(key);
        return rc;
    }
    *out = key;
    return DSIG_OK;
}

int dsig_jwk_import(dsig_key **out, const char *json, size_t len)
{
    if (!out || !json)
        return dsig_fail(DSIG_E_ARG, "dsig_jwk_import: NULL argument");
    *out = NULL;
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    if (len > DSIG_JWK_MAX_BYTES)
        return dsig_fail(DSIG_E_TOO_LARGE, "JWK: larger than %u bytes", DSIG_JWK_MAX_BYTES);
    json_t *jwk;
    if ((rc = jose_json_load_object(&jwk, json, len, "JWK")))
        return rc;
    if (json_object_get(jwk, "keys"))
        rc = dsig_fail(DSIG_E_UNSUPPORTED, "JWK: this is a JWK Set; give one key");
    else
        rc = import_object(out, jwk);
    /* The parsed private members are copies of secrets: wipe them before jansson frees them. */
    const struct dsig_keytype *const *t;
    for (t = dsig_keytype_list(); *t; t++)
        for (const char *const *p = (*t)->priv_members; p && *p; p++)
            jose_json_wipe_string(jwk, *p);
    json_decref(jwk);
    return rc;
}

/* Fetch the exported members of a key (caller frees with free_members). */
static int export_members(const dsig_key *key, int include_private, dsig_jwk_member *m, size_t *n)
{
    if (!key->type->export_jwk)
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s keys cannot be exported (no provider)", key->type->kty);
    memset(m, 0, sizeof *m * DSIG_JWK_MAX_MEMBERS);
    *n = DSIG_JWK_MAX_MEMBERS;
    int rc = key->type->export_jwk(key, include_private, m, n);
    if (rc) {
        *n = 0; /* on failure the key type has released what it allocated */
        return rc;
    }
    if (*n > DSIG_JWK_MAX_MEMBERS)
        return dsig_fail(DSIG_E_INTERNAL, "JWK export: too many members");
    return DSIG_OK;
}

/* The exported member called `name`, or NULL. */
static const dsig_jwk_member *find_member(const dsig_jwk_member *m, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].name && m[i].data && strcmp(m[i].name, name) == 0)
            return &m[i];
    return NULL;
}

/* Append `,"name":"BASE64URL(value)"` for a member; a missing member is an internal error. */
static int add_b64_member(jose_buf *b, const dsig_jwk_member *m, size_t n, const char *name,
                          const char *sep)
{
    const dsig_jwk_member *x = find_member(m, n, name);
    if (!x)
        return dsig_fail(DSIG_E_KEY, "JWK export: the key has no member \"%s\"", name);
    char *enc = dsig_b64url_encode_alloc(x->data, x->len);
    if (!enc)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    jose_buf_member(b, sep, name, enc);
    dsig_xfree(enc, strlen(enc));
    return DSIG_OK;
}

int dsig_jwk_export(const dsig_key *key, int include_private, char **json, size_t *len)
{
    if (!key || !json)
        return dsig_fail(DSIG_E_ARG, "dsig_jwk_export: NULL argument");
    *json = NULL;
    if (include_private && !key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "the key has no private part to export");
    if (!include_private && !key->type->has_public)
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s keys are secret keys and have no public part",
                         key->type->kty);
    char kid[DSIG_THUMBPRINT_LEN];
    int rc = key->kid ? DSIG_OK : dsig_jwk_thumbprint(key, kid);
    if (rc)
        return rc;
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t n;
    if ((rc = export_members(key, include_private, m, &n)))
        return rc;
    jose_buf b = {0};
    jose_buf_adds(&b, "{");
    jose_buf_member(&b, NULL, "kty", key->type->kty);
    if (key->type->crv)
        jose_buf_member(&b, ",", "crv", key->type->crv);
    for (const char *const *p = key->type->pub_members; rc == DSIG_OK && p && *p; p++)
        rc = add_b64_member(&b, m, n, *p, ",");
    for (const char *const *p = key->type->priv_members; include_private && rc == DSIG_OK && p && *p; p++)
        if (find_member(m, n, *p)) /* optional private members (RSA CRT) may be absent */
            rc = add_b64_member(&b, m, n, *p, ",");
    free_members(m, n);
    if (key->alg)
        jose_buf_member(&b, ",", "alg", key->alg->name);
    else if (key->type->alg) /* AKP: "alg" is part of the key */
        jose_buf_member(&b, ",", "alg", key->type->alg);
    jose_buf_member(&b, ",", "kid", key->kid ? key->kid : kid);
    jose_buf_adds(&b, "}");
    if (rc == DSIG_OK && b.oom)
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (rc) {
        jose_buf_wipe(&b);
        return rc;
    }
    *json = b.p;
    if (len)
        *len = b.len;
    return DSIG_OK;
}

/* Insertion sort of a few names (strcmp = code-point order for ASCII member names). */
static void sort_names(const char **v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            const char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* @spec RFC 7638 §3 (required members, lexicographic order, no whitespace, SHA-256) and §3.2 (oct:
 * "k", "kty"); RFC 8037 §2 (OKP: crv, kty, x); RFC 9964 (AKP: alg, kty, pub). */
int dsig_jwk_thumbprint(const dsig_key *key, char out[DSIG_THUMBPRINT_LEN])
{
    if (!key || !out)
        return dsig_fail(DSIG_E_ARG, "dsig_jwk_thumbprint: NULL argument");
    const struct dsig_keytype *t = key->type;
    const char *names[DSIG_JWK_MAX_MEMBERS + 3];
    size_t nn = 0;
    names[nn++] = "kty";
    if (t->crv)
        names[nn++] = "crv";
    if (t->alg)
        names[nn++] = "alg";
    const char *const *req = t->has_public ? t->pub_members : t->priv_members;
    for (const char *const *p = req; p && *p && nn < DSIG_JWK_MAX_MEMBERS + 3; p++)
        names[nn++] = *p;
    sort_names(names, nn);

    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t n;
    if (!t->has_public && !key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "the thumbprint of an %s (secret) key needs the secret", t->kty);
    int rc = export_members(key, !t->has_public, m, &n);
    if (rc)
        return rc;
    jose_buf b = {0};
    jose_buf_adds(&b, "{");
    for (size_t i = 0; i < nn && rc == DSIG_OK; i++) {
        const char *sep = i ? "," : NULL;
        if (strcmp(names[i], "kty") == 0)
            jose_buf_member(&b, sep, "kty", t->kty);
        else if (strcmp(names[i], "crv") == 0)
            jose_buf_member(&b, sep, "crv", t->crv);
        else if (strcmp(names[i], "alg") == 0)
            jose_buf_member(&b, sep, "alg", t->alg);
        else
            rc = add_b64_member(&b, m, n, names[i], sep);
    }
    jose_buf_adds(&b, "}");
    free_members(m, n);
    uint8_t md[32];
    unsigned mdlen = 0;
    if (rc == DSIG_OK && b.oom)
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (rc == DSIG_OK && !EVP_Digest(b.p, b.len, md, &mdlen, EVP_sha256(), NULL))
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "JWK thumbprint: SHA-256");
    jose_buf_wipe(&b);
    if (rc)
        return rc;
    dsig_b64url_encode(out, md, sizeof md);
    return DSIG_OK;
}

DSIG_LAYER_API int dsig_jwk_read_fd(int fd, const char *path, dsig_key **key)
{
    char what[64 + 4096];
    snprintf(what, sizeof what, "key file \"%s\"", path);
    char *buf = NULL;
    size_t n = 0;
    int rc = dsig_read_whole_fd(fd, what, DSIG_JWK_MAX_BYTES, &buf, &n);
    if (rc != DSIG_OK)
        return rc;
    if ((rc = dsig_jwk_import(key, buf, n)) != DSIG_OK) {
        /* keep the import's detail: dsig_fail rewrites the thread's detail buffer */
        char detail[512];
        snprintf(detail, sizeof detail, "%s", dsig_last_error_detail());
        rc = dsig_fail(rc, "key file \"%s\": %s", path, detail);
    }
    dsig_xfree(buf, n + 1); /* private JWK text */
    return rc;
}
