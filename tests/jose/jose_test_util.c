/* Helpers shared by the JOSE tests. */
#include <stdlib.h>
#include <string.h>

#include "jose_test_util.h"

const dsig_alg *jt_need(const char *name)
{
    const dsig_alg *a = dsig_alg_by_name(name);
    if (!a) {
        print_message("  (skipped: algorithm %s is not in the registry yet)\n", name);
        skip();
    }
    return a;
}

dsig_key *jt_key_json(const json_t *jwk)
{
    char *text = json_dumps(jwk, JSON_COMPACT);
    assert_non_null(text);
    dsig_key *k = NULL;
    int rc = dsig_jwk_import(&k, text, strlen(text));
    free(text);
    if (rc == DSIG_E_UNSUPPORTED) {
        print_message("  (skipped: %s)\n", dsig_last_error_detail());
        skip();
    }
    if (rc)
        fail_msg("JWK import failed: %d %s", rc, dsig_last_error_detail());
    return k;
}

dsig_key *jt_key_file(const char *rel)
{
    json_t *j = tu_load_json(rel);
    dsig_key *k = jt_key_json(j);
    json_decref(j);
    return k;
}

char *jt_b64(const char *s, size_t n)
{
    char *out = malloc(dsig_b64url_encoded_len(n) + 1);
    assert_non_null(out);
    dsig_b64url_encode(out, (const uint8_t *)s, n);
    return out;
}

char *jt_forge(const char *hdr_json, const char *payload_seg, const dsig_alg *alg, const dsig_key *key)
{
    char *h = jt_b64(hdr_json, strlen(hdr_json));
    size_t in_len = strlen(h) + 1 + strlen(payload_seg);
    char *input = malloc(in_len + 1);
    assert_non_null(input);
    strcpy(input, h);
    strcat(input, ".");
    strcat(input, payload_seg);
    size_t cap = dsig_alg_sig_max(alg), sl = 0;
    uint8_t *sig = malloc(cap);
    assert_non_null(sig);
    assert_int_equal(dsig_sign(alg, key, input, in_len, sig, cap, &sl), DSIG_OK);
    char *s = malloc(dsig_b64url_encoded_len(sl) + 1);
    assert_non_null(s);
    dsig_b64url_encode(s, sig, sl);
    char *out = malloc(in_len + 2 + strlen(s));
    assert_non_null(out);
    strcpy(out, input);
    strcat(out, ".");
    strcat(out, s);
    free(h);
    free(input);
    free(sig);
    free(s);
    return out;
}

int jt_verify_embedded(const char *jws, const dsig_key *key, const dsig_jws_verify_opts *opts)
{
    uint8_t *p = NULL;
    size_t n = 0;
    int rc = dsig_jws_verify_compact(key, jws, strlen(jws), opts, &p, &n);
    if (rc == DSIG_OK)
        assert_non_null(p);
    else
        assert_null(p);
    dsig_free(p);
    return rc;
}

int jt_verify_detached(const char *jws, const dsig_key *key, const dsig_jws_verify_opts *opts,
                       const void *payload, size_t len, size_t chunk)
{
    dsig_jws_verify_ctx *c;
    int rc = dsig_jws_verify_init(&c, key, jws, strlen(jws), opts);
    if (rc)
        return rc;
    const uint8_t *p = payload;
    if (!chunk)
        chunk = len ? len : 1;
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        if ((rc = dsig_jws_verify_update(c, p + off, n))) {
            dsig_jws_verify_abort(c);
            return rc;
        }
    }
    return dsig_jws_verify_final(c);
}

const dsig_alg *jt_hs;
dsig_key *jt_hkey;

int jt_setup_hs256(void **state)
{
    (void)state;
    jt_hs = dsig_alg_by_name("HS256");
    if (!jt_hs)
        return 0;
    json_t *j = tu_load_json("jws/rfc7515/rfc7515_A.1.jwk");
    char *t = json_dumps(j, JSON_COMPACT);
    int rc = dsig_jwk_import(&jt_hkey, t, strlen(t));
    free(t);
    json_decref(j);
    return rc;
}

int jt_teardown_hs256(void **state)
{
    (void)state;
    dsig_key_free(jt_hkey);
    jt_hkey = NULL;
    return 0;
}
