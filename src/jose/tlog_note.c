/*
 * src/jose/tlog_note.c — C2SP tlog-checkpoint bodies and C2SP signed notes with Ed25519 keys
 * (dsig/tlog.h): the checkpoint text, the note key ID and verifier key text, signing and verification.
 * Here rather than in src/core because it takes keys through their JWK form (jose).
 *
 *   example.com/log            <- origin
 *   42                         <- tree size, decimal
 *   qwErty...=                 <- root hash, standard base64
 *                              <- blank line
 *   — example.com/log AbCd...  <- "— " name " " base64(key ID, 4 bytes big-endian ‖ Ed25519 signature)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "dsig/jwk.h"
#include "dsig/stream.h"
#include "dsig/tlog.h"
#include "hash/sha256.h"

#define EM_DASH "\xe2\x80\x94" /* U+2014 */

/* ---- standard base64 (RFC 4648 §4, padded) ---------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Encode n bytes into out (room for 4*ceil(n/3)+1). */
static void b64_encode(char *out, const uint8_t *in, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[o] = '\0';
}

static int b64_value(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;
    return p ? (int)(p - b64) : -1;
}

/* Strict decode of exactly `len` characters (padded, canonical) into out[cap]; the byte count or -1. */
static long b64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
    if (len == 0 || len % 4)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            if (in[i + j] == '=' && i + 4 == len && j >= 2) {
                v[j] = 0;
                pad++;
                continue;
            }
            if (pad || (v[j] = b64_value(in[i + j])) < 0)
                return -1;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
            return -1; /* non-zero bits under the padding: not canonical */
        if (o + 3 - (size_t)pad > cap)
            return -1;
        out[o++] = (uint8_t)(w >> 16);
        if (pad < 2)
            out[o++] = (uint8_t)(w >> 8);
        if (pad < 1)
            out[o++] = (uint8_t)w;
    }
    return (long)o;
}

/* ---- names, key IDs, verifier keys ------------------------------------------------------------ */

/* A key name / origin: non-empty, bounded, no space, '+' or control character. */
static int valid_name(const char *s, size_t n)
{
    if (n == 0 || n > DSIG_TLOG_ORIGIN_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || s[i] == '+' || s[i] == 0x7f)
            return 0;
    return 1;
}

uint32_t dsig_tlog_note_key_id(const char *name, const uint8_t pub[32])
{
    size_t n = strlen(name);
    uint8_t buf[DSIG_TLOG_ORIGIN_MAX + 2 + 32], h[32];
    if (n > DSIG_TLOG_ORIGIN_MAX)
        n = DSIG_TLOG_ORIGIN_MAX;
    memcpy(buf, name, n);
    buf[n] = '\n';
    buf[n + 1] = 0x01; /* signature type: Ed25519 */
    memcpy(buf + n + 2, pub, 32);
    dsig_sha256(h, buf, n + 2 + 32);
    return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

int dsig_tlog_vkey_format(const char *name, const uint8_t pub[32], char **out)
{
    *out = NULL;
    size_t n = strlen(name);
    if (!valid_name(name, n))
        return dsig_fail(DSIG_E_ARG, "tlog: the key name is empty, too long, or holds a space, '+' or a control character");
    uint8_t raw[33];
    raw[0] = 0x01;
    memcpy(raw + 1, pub, 32);
    char enc[48];
    b64_encode(enc, raw, sizeof raw);
    size_t cap = n + 1 + 8 + 1 + strlen(enc) + 1;
    char *s = dsig_malloc(cap);
    if (!s)
        return dsig_fail(DSIG_E_NOMEM, "tlog: out of memory");
    snprintf(s, cap, "%s+%08x+%s", name, (unsigned)dsig_tlog_note_key_id(name, pub), enc);
    *out = s;
    return DSIG_OK;
}

int dsig_tlog_vkey_parse(const char *vkey, size_t len, char name[DSIG_TLOG_ORIGIN_MAX + 1], uint8_t pub[32])
{
    while (len && (vkey[len - 1] == '\n' || vkey[len - 1] == '\r' || vkey[len - 1] == ' '))
        len--;
    const char *p1 = memchr(vkey, '+', len);
    const char *p2 = p1 ? memchr(p1 + 1, '+', len - (size_t)(p1 + 1 - vkey)) : NULL;
    if (!p2 || p2 - p1 != 9 || !valid_name(vkey, (size_t)(p1 - vkey)))
        return dsig_fail(DSIG_E_FORMAT, "tlog: not a note verifier key (want NAME+KEYID+BASE64)");
    char hex[9];
    memcpy(hex, p1 + 1, 8);
    hex[8] = '\0';
    char *end;
    unsigned long id = strtoul(hex, &end, 16);
    uint8_t raw[40];
    long n = b64_decode(p2 + 1, len - (size_t)(p2 + 1 - vkey), raw, sizeof raw);
    if (*end || n != 33 || raw[0] != 0x01)
        return dsig_fail(DSIG_E_FORMAT, "tlog: not an Ed25519 note verifier key");
    memcpy(name, vkey, (size_t)(p1 - vkey));
    name[p1 - vkey] = '\0';
    memcpy(pub, raw + 1, 32);
    if (dsig_tlog_note_key_id(name, pub) != id)
        return dsig_fail(DSIG_E_FORMAT, "tlog: the verifier key's ID does not match its name and key");
    return DSIG_OK;
}

int dsig_tlog_ed25519_public(const dsig_key *key, uint8_t pub[32])
{
    const char *crv = key ? dsig_key_curve(key) : NULL;
    if (!crv || strcmp(crv, "Ed25519") != 0)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "tlog: the log key must be an Ed25519 key");
    char *json = NULL;
    size_t jlen = 0;
    int rc = dsig_jwk_export(key, 0, &json, &jlen);
    if (rc != DSIG_OK)
        return rc;
    const char *x = strstr(json, "\"x\":\"");
    size_t got = 0;
    rc = x ? dsig_b64url_decode(x + 5, strcspn(x + 5, "\""), pub, 32, &got) : DSIG_E_FORMAT;
    dsig_free(json);
    if (rc != DSIG_OK || got != 32)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "tlog: cannot read the Ed25519 public key");
    return DSIG_OK;
}

/* ---- checkpoints ------------------------------------------------------------------------------ */

int dsig_tlog_checkpoint_body(const char *origin, uint64_t size, const uint8_t root[DSIG_TLOG_HASH_LEN], char **out)
{
    *out = NULL;
    size_t n = strlen(origin);
    if (!valid_name(origin, n))
        return dsig_fail(DSIG_E_ARG, "tlog: the origin is empty, too long, or holds a space, '+' or a control character");
    char enc[48];
    b64_encode(enc, root, 32);
    size_t cap = n + 1 + 21 + 1 + 44 + 2;
    char *s = dsig_malloc(cap);
    if (!s)
        return dsig_fail(DSIG_E_NOMEM, "tlog: out of memory");
    snprintf(s, cap, "%s\n%llu\n%s\n", origin, (unsigned long long)size, enc);
    *out = s;
    return DSIG_OK;
}

int dsig_tlog_checkpoint_parse(const char *text, size_t len, char origin[DSIG_TLOG_ORIGIN_MAX + 1], uint64_t *size,
                               uint8_t root[DSIG_TLOG_HASH_LEN])
{
    const char *l1 = memchr(text, '\n', len);
    const char *l2 = l1 ? memchr(l1 + 1, '\n', len - (size_t)(l1 + 1 - text)) : NULL;
    const char *l3 = l2 ? memchr(l2 + 1, '\n', len - (size_t)(l2 + 1 - text)) : NULL;
    if (!l3)
        return dsig_fail(DSIG_E_FORMAT, "checkpoint: fewer than three lines");
    if (!valid_name(text, (size_t)(l1 - text)))
        return dsig_fail(DSIG_E_FORMAT, "checkpoint: line 1 is not an origin");
    const char *s = l1 + 1;
    size_t sl = (size_t)(l2 - s);
    if (sl == 0 || sl > 20 || (sl > 1 && s[0] == '0'))
        return dsig_fail(DSIG_E_FORMAT, "checkpoint: line 2 is not a tree size");
    uint64_t v = 0;
    for (size_t i = 0; i < sl; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
            return dsig_fail(DSIG_E_FORMAT, "checkpoint: line 2 is not a tree size");
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (b64_decode(l2 + 1, (size_t)(l3 - l2 - 1), root, 32) != 32)
        return dsig_fail(DSIG_E_FORMAT, "checkpoint: line 3 is not a base64 SHA-256 root hash");
    memcpy(origin, text, (size_t)(l1 - text));
    origin[l1 - text] = '\0';
    *size = v;
    return DSIG_OK;
}

/* ---- notes ------------------------------------------------------------------------------------ */

static const dsig_alg *ed25519(void)
{
    return dsig_alg_by_name("Ed25519");
}

int dsig_tlog_note_sign(const char *text, size_t text_len, const char *name, const dsig_key *key, char **note,
                        size_t *len)
{
    *note = NULL;
    *len = 0;
    size_t nl = strlen(name);
    if (!valid_name(name, nl))
        return dsig_fail(DSIG_E_ARG, "tlog: bad note key name");
    if (text_len == 0 || text[text_len - 1] != '\n' || (text_len >= 2 && text[text_len - 2] == '\n'))
        return dsig_fail(DSIG_E_ARG, "tlog: a note text ends in one newline");
    for (size_t i = 0; i < text_len; i++)
        if ((unsigned char)text[i] < 0x20 && text[i] != '\n')
            return dsig_fail(DSIG_E_ARG, "tlog: a note text holds no control character");
    uint8_t pub[32];
    int rc = dsig_tlog_ed25519_public(key, pub);
    if (rc != DSIG_OK)
        return rc;
    uint8_t sig[4 + 64];
    size_t sl = 0;
    if ((rc = dsig_sign(ed25519(), key, text, text_len, sig + 4, 64, &sl)) != DSIG_OK)
        return rc;
    if (sl != 64)
        return dsig_fail(DSIG_E_INTERNAL, "tlog: unexpected Ed25519 signature length");
    uint32_t id = dsig_tlog_note_key_id(name, pub);
    sig[0] = (uint8_t)(id >> 24);
    sig[1] = (uint8_t)(id >> 16);
    sig[2] = (uint8_t)(id >> 8);
    sig[3] = (uint8_t)id;
    char enc[96];
    b64_encode(enc, sig, sizeof sig);
    size_t cap = text_len + 1 + 4 + nl + 1 + strlen(enc) + 2;
    char *s = dsig_malloc(cap);
    if (!s)
        return dsig_fail(DSIG_E_NOMEM, "tlog: out of memory");
    memcpy(s, text, text_len);
    int w = snprintf(s + text_len, cap - text_len, "\n" EM_DASH " %s %s\n", name, enc);
    *note = s;
    *len = text_len + (size_t)w;
    return DSIG_OK;
}

int dsig_tlog_note_verify(const char *note, size_t len, const char *name, const uint8_t pub[32], size_t *text_len)
{
    *text_len = 0;
    /* The text ends at the last blank line ("\n\n"): the signature block follows it. */
    size_t split = 0;
    int found = 0;
    for (size_t i = 1; i < len; i++)
        if (note[i] == '\n' && note[i - 1] == '\n') {
            split = i; /* note[0..split) is the text with its final newline */
            found = 1;
        }
    if (!found || len == 0 || note[len - 1] != '\n')
        return dsig_fail(DSIG_E_FORMAT, "note: no signature block");
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)note[i] < 0x20 && note[i] != '\n')
            return dsig_fail(DSIG_E_FORMAT, "note: a control character");
    uint32_t want = dsig_tlog_note_key_id(name, pub);
    size_t nl = strlen(name);
    const char *p = note + split + 1, *end = note + len;
    int known = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t ll = (size_t)(eol - p);
        if (ll < 4 || memcmp(p, EM_DASH " ", 4) != 0)
            return dsig_fail(DSIG_E_FORMAT, "note: a signature line does not start with \"— \"");
        const char *kn = p + 4, *sp = memchr(kn, ' ', (size_t)(eol - kn));
        if (!sp)
            return dsig_fail(DSIG_E_FORMAT, "note: a signature line without a signature");
        uint8_t sig[4 + 64 + 8];
        long sl = b64_decode(sp + 1, (size_t)(eol - sp - 1), sig, sizeof sig);
        uint32_t id = sl >= 4 ? (uint32_t)sig[0] << 24 | (uint32_t)sig[1] << 16 | (uint32_t)sig[2] << 8 | sig[3] : 0;
        if ((size_t)(sp - kn) == nl && memcmp(kn, name, nl) == 0 && sl >= 4 && id == want) {
            known = 1;
            dsig_key *k = NULL;
            char jwk[128], x[48];
            dsig_b64url_encode(x, pub, 32);
            snprintf(jwk, sizeof jwk, "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\"}", x);
            int rc = dsig_jwk_import(&k, jwk, strlen(jwk));
            if (rc != DSIG_OK)
                return rc;
            rc = sl == 68 ? dsig_verify(ed25519(), k, note, split, sig + 4, 64) : DSIG_E_VERIFY;
            dsig_key_free(k);
            if (rc != DSIG_OK)
                return dsig_fail(DSIG_E_VERIFY, "note: the signature of %s does not verify", name);
        }
        p = eol + 1;
    }
    if (!known)
        return dsig_fail(DSIG_E_VERIFY, "note: no signature by the key %s+%08x", name, (unsigned)want);
    *text_len = split;
    return DSIG_OK;
}
