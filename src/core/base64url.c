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

/* 1 if 0 <= v < lim, else 0, without a branch (v is a character minus the start of its range). */
static unsigned in_range(int v, unsigned lim)
{
    return (((unsigned)v - lim) >> (sizeof(unsigned) * 8 - 1)) & ~((unsigned)v >> (sizeof(unsigned) * 8 - 1)) & 1u;
}

/* The value of one hexadecimal digit, or -1; branch-free: the digits may be a secret's (dsig serve's
 * configured token hashes). */
static int hex_digit(unsigned char c)
{
    int d = c - '0', l = (c | 0x20) - 'a'; /* | 0x20: A-F as a-f */
    unsigned md = in_range(d, 10), ml = in_range(l, 6);
    return (int)(((unsigned)d & (0u - md)) | ((unsigned)(l + 10) & (0u - ml)) | (0u - (1u ^ (md | ml))));
}

DSIG_LAYER_API int dsig_hex_decode(const char *hex, size_t n, uint8_t *out, size_t cap, size_t *out_len)
{
    if (n % 2)
        return dsig_fail(DSIG_E_FORMAT, "hex: odd number of digits");
    if (n / 2 > cap)
        return dsig_fail(DSIG_E_BUFFER, "hex: too long (at most %zu bytes)", cap);
    int bad = 0;
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_digit((unsigned char)hex[i]), lo = hex_digit((unsigned char)hex[i + 1]);
        bad |= (hi | lo) >> 8; /* -1 sets all bits */
        out[i / 2] = (uint8_t)(((unsigned)hi << 4) | ((unsigned)lo & 15u));
    }
    /* Only the verdict leaves the branch-free loop; the digit is named only for text that is not a
     * valid encoding (of a secret or of anything else). */
    DSIG_CT_DECLASSIFY(&bad, sizeof bad);
    if (bad) {
        dsig_memzero(out, n / 2);
        size_t i = 0;
        while (i < n && hex_digit((unsigned char)hex[i]) >= 0)
            i++;
        return dsig_fail(DSIG_E_FORMAT, "hex: invalid digit '%c' at position %zu", hex[i], i);
    }
    *out_len = n / 2;
    return DSIG_OK;
}
