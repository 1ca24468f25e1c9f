#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tu_vectors_dir(void)
{
    const char *d = getenv("DSIG_VECTORS");
    return d && *d ? d : "../shared/vectors";
}

static char *path_of(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", tu_vectors_dir(), rel);
    return buf;
}

json_t *tu_load_json(const char *relpath)
{
    json_error_t err;
    json_t *j = json_load_file(path_of(relpath), 0, &err);
    if (!j)
        fail_msg("cannot load vectors %s: %s (line %d)", path_of(relpath), err.text, err.line);
    return j;
}

char *tu_read_vector_file(const char *relpath, size_t *len)
{
    FILE *f = fopen(path_of(relpath), "rb");
    if (!f)
        fail_msg("cannot open %s", path_of(relpath));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

uint8_t *tu_hex(const char *hex, size_t *len)
{
    size_t n = strlen(hex);
    if (n % 2)
        fail_msg("odd-length hex: %s", hex);
    uint8_t *out = malloc(n / 2 + 1);
    assert_non_null(out);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            fail_msg("bad hex: %s", hex);
        out[i] = (uint8_t)v;
    }
    *len = n / 2;
    return out;
}

const char *tu_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    if (!s)
        fail_msg("vector member \"%s\" missing", key);
    return s;
}

void tu_fill(uint8_t *buf, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)(x >> 32);
    }
}

int tu_sign_chunked(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                    size_t chunk, uint8_t *sig, size_t cap, size_t *sig_len)
{
    dsig_sign_ctx *c;
    int rc = dsig_sign_init(&c, alg, key);
    if (rc)
        return rc;
    size_t step = chunk ? chunk : (len ? len : 1);
    for (size_t off = 0; off < len; off += step) {
        size_t n = len - off < step ? len - off : step;
        if ((rc = dsig_sign_update(c, msg + off, n))) {
            dsig_sign_abort(c);
            return rc;
        }
    }
    return dsig_sign_final(c, sig, cap, sig_len);
}

int tu_verify_chunked(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                      size_t chunk, const uint8_t *sig, size_t sig_len)
{
    dsig_verify_ctx *c;
    int rc = dsig_verify_init(&c, alg, key, sig, sig_len);
    if (rc)
        return rc;
    size_t step = chunk ? chunk : (len ? len : 1);
    for (size_t off = 0; off < len; off += step) {
        size_t n = len - off < step ? len - off : step;
        if ((rc = dsig_verify_update(c, msg + off, n))) {
            dsig_verify_abort(c);
            return rc;
        }
    }
    return dsig_verify_final(c);
}
