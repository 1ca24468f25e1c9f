/*
 * The identity of a stateful key: its RFC 7638 thumbprint, computed here from the key's public members
 * so that the core needs nothing from the JOSE layer. It names the key's high-water registry file
 * (on disk: it must stay byte for byte what dsig_jwk_thumbprint gives; tests/state checks both agree)
 * and the key in the list of keys open in this process.
 *
 * @spec RFC 7638 §3 (the required members in lexicographic order, no whitespace, SHA-256, base64url);
 * RFC 9964 (AKP: alg, kty, pub). Stateful key types are public-key types whose members are
 * base64url-encoded octets and whose kty/crv/alg are plain ASCII names.
 */
#include <stdio.h>
#include <string.h>

#include "core/state_internal.h"

/* A name that needs no JSON escaping. */
static int plain(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\' || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
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

/* The value of the members the key type names itself (kty, crv, alg); NULL for the exported ones. */
static const char *type_value(const struct dsig_keytype *t, const char *name)
{
    return strcmp(name, "kty") == 0 ? t->kty : strcmp(name, "crv") == 0 ? t->crv
                                             : strcmp(name, "alg") == 0 ? t->alg : NULL;
}

int state_key_identity(const struct dsig_key *key, char out[DSIG_THUMBPRINT_LEN])
{
    const struct dsig_keytype *t = key->type;
    if (!t->has_public || !t->export_jwk || !plain(t->kty) || (t->crv && !plain(t->crv)) ||
        (t->alg && !plain(t->alg)))
        return dsig_fail(DSIG_E_INTERNAL, "state file: %s keys have no identity of their own", t->kty);
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    memset(m, 0, sizeof m);
    size_t n = DSIG_JWK_MAX_MEMBERS;
    int rc = t->export_jwk(key, 0, m, &n);
    if (rc)
        return rc;
    if (n > DSIG_JWK_MAX_MEMBERS) {
        n = 0;
        rc = dsig_fail(DSIG_E_INTERNAL, "state file: too many public members");
    }
    /* The names, sorted, and the text's length: "{" + per member ,"name":"value" + "}". */
    const char *names[DSIG_JWK_MAX_MEMBERS + 3];
    size_t nn = 0, total = 2;
    names[nn++] = "kty";
    if (t->crv)
        names[nn++] = "crv";
    if (t->alg)
        names[nn++] = "alg";
    for (const char *const *p = t->pub_members; p && *p && nn < DSIG_JWK_MAX_MEMBERS + 3; p++)
        names[nn++] = *p;
    sort_names(names, nn);
    const dsig_jwk_member *val[DSIG_JWK_MAX_MEMBERS + 3] = {0};
    for (size_t i = 0; i < nn && rc == DSIG_OK; i++) {
        const char *v = type_value(t, names[i]);
        size_t vlen = v ? strlen(v) : 0;
        if (!v) {
            for (size_t j = 0; j < n && !val[i]; j++)
                if (m[j].name && m[j].data && strcmp(m[j].name, names[i]) == 0)
                    val[i] = &m[j];
            if (!val[i])
                rc = dsig_fail(DSIG_E_INTERNAL, "state file: the key exports no \"%s\" member", names[i]);
            else
                vlen = dsig_b64url_encoded_len(val[i]->len);
        }
        total += 6 + strlen(names[i]) + vlen;
    }
    char *json = rc ? NULL : dsig_malloc(total + 1);
    if (!rc && !json)
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    size_t len = 0;
    if (!rc) {
        json[len++] = '{';
        for (size_t i = 0; i < nn; i++) {
            if (i)
                json[len++] = ',';
            len += (size_t)sprintf(json + len, "\"%s\":\"", names[i]);
            if (val[i]) {
                dsig_b64url_encode(json + len, val[i]->data, val[i]->len);
                len += strlen(json + len);
            } else {
                len += (size_t)sprintf(json + len, "%s", type_value(t, names[i]));
            }
            json[len++] = '"';
        }
        json[len++] = '}';
        uint8_t md[32];
        rc = state_sha256(md, json, len);
        if (!rc)
            dsig_b64url_encode(out, md, sizeof md);
    }
    dsig_xfree(json, total + 1);
    for (size_t j = 0; j < n; j++)
        dsig_xfree(m[j].data, m[j].len);
    return rc;
}
