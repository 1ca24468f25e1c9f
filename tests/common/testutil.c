#include "testutil.h"

#include "core/internal.h" /* dsig_b64url_encode_alloc */

#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tu_vectors_dir(void)
{
    const char *d = getenv("DSIG_VECTORS");
    return d && *d ? d : "tests/vectors";
}

static char *path_of(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", tu_vectors_dir(), rel);
    return buf;
}

/* The whole of `f`, NUL-terminated; NULL on a read error. */
static char *read_stream(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (cap - n < 2) {
            buf = realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The decompressed content of the .xz file `f`, NUL-terminated; fails the test on a corrupt file. */
static char *read_xz(FILE *f, const char *path, size_t *len)
{
    size_t clen;
    char *packed = read_stream(f, &clen);
    if (!packed)
        fail_msg("cannot read %s", path);
    lzma_stream strm = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK)
        fail_msg("liblzma: cannot start a decoder for %s", path);
    size_t cap = clen * 4 + 4096;
    char *out = malloc(cap);
    assert_non_null(out);
    strm.next_in = (const uint8_t *)packed;
    strm.avail_in = clen;
    lzma_ret r;
    do {
        if (strm.total_out + 1 >= cap) {
            out = realloc(out, cap *= 2);
            assert_non_null(out);
        }
        strm.next_out = (uint8_t *)out + strm.total_out;
        strm.avail_out = cap - 1 - strm.total_out;
        r = lzma_code(&strm, LZMA_FINISH);
    } while (r == LZMA_OK);
    if (r != LZMA_STREAM_END)
        fail_msg("%s: corrupt xz data (liblzma code %d)", path, (int)r);
    *len = strm.total_out;
    out[*len] = '\0';
    lzma_end(&strm);
    free(packed);
    return out;
}

char *tu_read_vector_file(const char *relpath, size_t *len)
{
    size_t n;
    char *buf;
    FILE *f = fopen(path_of(relpath), "rb");
    if (f) {
        buf = read_stream(f, &n);
        if (!buf)
            fail_msg("cannot read %s", path_of(relpath));
    } else {
        /* Files over 32 KiB are stored compressed (tests/vectors/README.md). */
        char xz[4200];
        snprintf(xz, sizeof xz, "%s.xz", path_of(relpath));
        f = fopen(xz, "rb");
        if (!f)
            fail_msg("cannot open %s (nor %s.xz)", path_of(relpath), path_of(relpath));
        buf = read_xz(f, xz, &n);
    }
    fclose(f);
    if (len)
        *len = n;
    return buf;
}

json_t *tu_load_json(const char *relpath)
{
    size_t n;
    char *text = tu_read_vector_file(relpath, &n);
    json_error_t err;
    json_t *j = json_loadb(text, n, 0, &err);
    free(text);
    if (!j)
        fail_msg("cannot load vectors %s: %s (line %d)", path_of(relpath), err.text, err.line);
    return j;
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

uint64_t tu_rand64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
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
    rc = dsig_sign_final(c, sig, cap, sig_len);
    if (rc == DSIG_E_BUFFER) /* the context keeps the signature: not wanted here */
        dsig_sign_abort(c);
    return rc;
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

/* Sampling switches of slow tests: set, and starting with '1'. */
int tu_env_flag(const char *name)
{
    const char *s = getenv(name);
    return s != NULL && s[0] == '1';
}

/* JWK text of an AKP key, built by hand so tests can also feed it inconsistent members. */
char *tu_akp_jwk(const char *alg, const uint8_t *pub, size_t pub_len, const uint8_t *priv,
                 size_t priv_len)
{
    char *pub64 = dsig_b64url_encode_alloc(pub, pub_len);
    char *priv64 = priv ? dsig_b64url_encode_alloc(priv, priv_len) : NULL;
    assert_non_null(pub64);
    size_t n = strlen(alg) + strlen(pub64) + (priv64 ? strlen(priv64) : 0) + 128;
    char *j = malloc(n);
    assert_non_null(j);
    if (priv64)
        snprintf(j, n, "{\"kty\":\"AKP\",\"alg\":\"%s\",\"pub\":\"%s\",\"priv\":\"%s\"}", alg, pub64,
                 priv64);
    else
        snprintf(j, n, "{\"kty\":\"AKP\",\"alg\":\"%s\",\"pub\":\"%s\"}", alg, pub64);
    dsig_free(pub64);
    dsig_free(priv64);
    return j;
}

/* dsig_jwk_import of a C string. */
int tu_jwk_import(const char *jwk, dsig_key **key)
{
    return dsig_jwk_import(key, jwk, strlen(jwk));
}

/* Linear scan of one group's tests: ACVP files are small enough. */
const json_t *tu_acvp_test(const json_t *group, json_int_t tc)
{
    const json_t *t;
    size_t i;
    json_array_foreach(json_object_get(group, "tests"), i, t)
    {
        if (json_integer_value(json_object_get(t, "tcId")) == tc)
            return t;
    }
    fail_msg("no ACVP test tcId %lld in group %lld", (long long)tc,
             (long long)json_integer_value(json_object_get(group, "tgId")));
    return NULL;
}

/* The group by tgId, then the test by tcId. */
const json_t *tu_acvp_find(const json_t *doc, json_int_t tg, json_int_t tc)
{
    const json_t *g;
    size_t i;
    json_array_foreach(json_object_get(doc, "testGroups"), i, g)
    {
        if (json_integer_value(json_object_get(g, "tgId")) == tg)
            return tu_acvp_test(g, tc);
    }
    fail_msg("no ACVP group tgId %lld (looking for tcId %lld)", (long long)tg, (long long)tc);
    return NULL;
}
