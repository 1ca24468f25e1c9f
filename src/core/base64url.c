/* base64url (RFC 4648 §5) without padding: strict, canonical decoding; streaming encoding. */
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "core/layer_api.h"

/* Branch-free, table-free character encode (private keys travel through here: a table indexed by
 * secret bits leaks through the cache). offset(v) = char - v steps at 26, 52, 62 and 63; each step is
 * added under a mask that is all ones exactly when v is past it. */
static char enc(uint32_t v)
{
    int32_t off = 'A';
    off += (int32_t)(((25u - v) >> 8) & 6u);                    /* 26..51: 'a' - 26 */
    off -= (int32_t)(((51u - v) >> 8) & 75u);                   /* 52..61: '0' - 52 */
    off -= (int32_t)(((61u - v) >> 8) & 13u);                   /* 62: '-' - 62 */
    off += (int32_t)(((62u - v) >> 8) & 49u);                   /* 63: '_' - 63 */
    return (char)((int32_t)v + off);
}

size_t dsig_b64url_encoded_len(size_t n)
{
    return (n / 3) * 4 + (n % 3 ? n % 3 + 1 : 0);
}

DSIG_LAYER_API void dsig_b64url_encode(char *out, const uint8_t *in, size_t n)
{
    size_t i = 0, o = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = enc(v >> 18);
        out[o++] = enc((v >> 12) & 63);
        out[o++] = enc((v >> 6) & 63);
        out[o++] = enc(v & 63);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = enc(v >> 18);
        out[o++] = enc((v >> 12) & 63);
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = enc(v >> 18);
        out[o++] = enc((v >> 12) & 63);
        out[o++] = enc((v >> 6) & 63);
    }
    out[o] = '\0';
}

char *dsig_b64url_encode_alloc(const uint8_t *in, size_t n)
{
    char *out = dsig_malloc(dsig_b64url_encoded_len(n) + 1);
    if (out)
        dsig_b64url_encode(out, in, n);
    return out;
}

/* Branch-free character decode (keys travel through here): returns 0..63, or -1. */
static int dec(unsigned char c)
{
    int r = -1;
    r += ((('A' - 1 - (int)c) & ((int)c - ('Z' + 1))) >> 8) & ((int)c - 'A' + 1);
    r += ((('a' - 1 - (int)c) & ((int)c - ('z' + 1))) >> 8) & ((int)c - 'a' + 27);
    r += ((('0' - 1 - (int)c) & ((int)c - ('9' + 1))) >> 8) & ((int)c - '0' + 53);
    r += ((('-' - 1 - (int)c) & ((int)c - ('-' + 1))) >> 8) & 63;
    r += ((('_' - 1 - (int)c) & ((int)c - ('_' + 1))) >> 8) & 64;
    return r;
}

DSIG_LAYER_API int dsig_b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *out_len)
{
    if (n % 4 == 1)
        return dsig_fail(DSIG_E_BASE64, "base64url: impossible length %zu", n);
    size_t need = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    if (need > cap)
        return dsig_fail(DSIG_E_BUFFER, "base64url: output buffer too small");
    uint32_t acc = 0;
    int bits = 0, bad = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int v = dec((unsigned char)in[i]);
        bad |= v >> 8; /* -1 sets all bits */
        acc = (acc << 6) | ((uint32_t)v & 63);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    /* Only the validity verdicts leave the branch-free loop (a valid key string stays valid, so they
     * say nothing about the secret it encodes); the constant-time test sees the rest as secret. */
    uint32_t trailing = bits ? acc & ((1u << bits) - 1) : 0;
    DSIG_CT_DECLASSIFY(&bad, sizeof bad);
    DSIG_CT_DECLASSIFY(&trailing, sizeof trailing);
    if (bad) {
        dsig_memzero(out, o);
        return dsig_fail(DSIG_E_BASE64, "base64url: invalid character (padding, whitespace or "
                                        "characters outside A-Z a-z 0-9 - _ are not allowed)");
    }
    if (trailing) {
        dsig_memzero(out, o);
        return dsig_fail(DSIG_E_BASE64, "base64url: non-canonical encoding (non-zero trailing bits)");
    }
    *out_len = o;
    return DSIG_OK;
}

int dsig_b64url_decode_alloc(const char *in, size_t n, uint8_t **out, size_t *out_len)
{
    size_t cap = n / 4 * 3 + 3;
    uint8_t *buf = dsig_malloc(cap);
    if (!buf)
        return dsig_fail(DSIG_E_NOMEM, "base64url: out of memory");
    int rc = dsig_b64url_decode(in, n, buf, cap, out_len);
    if (rc != DSIG_OK) {
        dsig_xfree(buf, cap);
        return rc;
    }
    *out = buf;
    return DSIG_OK;
}

void dsig_b64url_stream_init(dsig_b64url_stream *s, dsig_text_sink sink, void *arg)
{
    memset(s, 0, sizeof *s);
    s->sink = sink;
    s->arg = arg;
}

int dsig_b64url_stream_update(dsig_b64url_stream *s, const uint8_t *in, size_t n)
{
    char out[4096];
    while (s->ncarry > 0 && s->ncarry < 3 && n > 0) {
        s->carry[s->ncarry++] = *in++;
        n--;
    }
    if (s->ncarry == 3) {
        dsig_b64url_encode(out, s->carry, 3);
        int rc = s->sink(s->arg, out, 4);
        if (rc)
            return rc;
        s->ncarry = 0;
    }
    while (n >= 3) {
        size_t take = n / 3 * 3;
        if (take > sizeof out / 4 * 3 - 3)
            take = sizeof out / 4 * 3 - 3;
        dsig_b64url_encode(out, in, take);
        int rc = s->sink(s->arg, out, take / 3 * 4);
        if (rc)
            return rc;
        in += take;
        n -= take;
    }
    memcpy(s->carry + s->ncarry, in, n);
    s->ncarry += n;
    return DSIG_OK;
}

int dsig_b64url_stream_final(dsig_b64url_stream *s)
{
    char out[8];
    if (!s->ncarry)
        return DSIG_OK;
    dsig_b64url_encode(out, s->carry, s->ncarry);
    int rc = s->sink(s->arg, out, strlen(out));
    s->ncarry = 0;
    return rc;
}

DSIG_LAYER_API int dsig_hex_decode(const char *hex, uint8_t *out, size_t cap, size_t *out_len)
{
    size_t n = strlen(hex);
    if (n % 2)
        return dsig_fail(DSIG_E_FORMAT, "hex: odd number of digits");
    if (n / 2 > cap)
        return dsig_fail(DSIG_E_BUFFER, "hex: too long (at most %zu bytes)", cap);
    for (size_t i = 0; i < n; i += 2) {
        int v = 0;
        for (int j = 0; j < 2; j++) {
            char c = hex[i + j];
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0)
                return dsig_fail(DSIG_E_FORMAT, "hex: invalid digit '%c'", c);
            v = v * 16 + d;
        }
        out[i / 2] = (uint8_t)v;
    }
    *out_len = n / 2;
    return DSIG_OK;
}
