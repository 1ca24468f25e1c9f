/*
 * The byte format of a state file (include/dsig/state.h, docs/state.md):
 *
 *   "dsig-state 1\n"                 magic and format version (13 bytes); "dsig-state 2\n": windowed
 *   u8    name_len, name             JOSE algorithm name ("HSS-LMS", "XMSS", "XMSSMT"), 1..64 bytes
 *   u32be pub_len,  pub              the RFC public key (the AKP JWK "pub"), 1..4096 bytes
 *   u32be priv_len, priv             provider's private material (save_private), 1..1 MiB
 *   u64be counter                    next index not yet reserved: every index below it may be used
 *   u64be window_lo, window_hi       version 2 only: the key signs only inside [lo, hi), lo <= counter
 *                                    <= hi (an index range reserved from a shared counter)
 *   32    SHA-256 of all the bytes above (torn or edited files are refused)
 *
 * A key without a window is written as version 1, byte for byte as before; a windowed key as version
 * 2, which a library that knows only version 1 refuses (it would otherwise sign outside the window).
 */
#include <string.h>

#include <openssl/evp.h>

#include "core/bytes.h"
#include "core/ct.h"
#include "core/state_internal.h"

#define STATE_MAGIC "dsig-state 1\n"
#define STATE_MAGIC_V2 "dsig-state 2\n"
#define STATE_MAGIC_LEN 13

int state_sha256(uint8_t out[32], const void *in, size_t len)
{
    unsigned n = 0;
    if (!EVP_Digest(in, len, out, &n, EVP_sha256(), NULL) || n != 32)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "state file: SHA-256");
    return DSIG_OK;
}

int state_format_encode(const char *name, const uint8_t *pub, size_t pub_len, const uint8_t *priv,
                        size_t priv_len, uint64_t counter, const struct state_window *w, uint8_t **out,
                        size_t *len)
{
    size_t nlen = strlen(name);
    const int v2 = w && w->on;
    size_t total = STATE_MAGIC_LEN + 1 + nlen + 4 + pub_len + 4 + priv_len + 8 + (v2 ? 16 : 0) + 32;
    uint8_t *b = dsig_malloc(total);
    if (!b)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    uint8_t *p = b;
    memcpy(p, v2 ? STATE_MAGIC_V2 : STATE_MAGIC, STATE_MAGIC_LEN), p += STATE_MAGIC_LEN;
    *p++ = (uint8_t)nlen;
    memcpy(p, name, nlen), p += nlen;
    dsig_store_be32(p, (uint32_t)pub_len), p += 4;
    memcpy(p, pub, pub_len), p += pub_len;
    dsig_store_be32(p, (uint32_t)priv_len), p += 4;
    memcpy(p, priv, priv_len), p += priv_len;
    dsig_store_be64(p, counter), p += 8;
    if (v2) {
        dsig_store_be64(p, w->lo), p += 8;
        dsig_store_be64(p, w->hi), p += 8;
    }
    int rc = state_sha256(p, b, (size_t)(p - b));
    if (rc) {
        dsig_xfree(b, total);
        return rc;
    }
    *out = b;
    *len = total;
    return DSIG_OK;
}

int state_format_decode(const uint8_t *b, size_t len, const char *path, struct state_fields *f)
{
    if (len < STATE_PREFIX_LEN || memcmp(b, STATE_PREFIX, STATE_PREFIX_LEN) != 0)
        return dsig_fail(DSIG_E_FORMAT, "'%s' is not a dsig state file (no \"dsig-state\" magic)", path);
    const int v2 = len >= STATE_MAGIC_LEN && memcmp(b, STATE_MAGIC_V2, STATE_MAGIC_LEN) == 0;
    if (!v2 && (len < STATE_MAGIC_LEN || memcmp(b, STATE_MAGIC, STATE_MAGIC_LEN) != 0))
        return dsig_fail(DSIG_E_UNSUPPORTED, "state file '%s': unknown format version (this library "
                                             "reads \"dsig-state 1\" and \"dsig-state 2\")", path);
    const size_t tail = 8 + (v2 ? 16 : 0); /* counter, and the window of version 2 */
    const size_t fixed = STATE_MAGIC_LEN + 1 + 4 + 4 + tail + 32;
    if (len < fixed + 2)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s' is truncated (%zu bytes)", path, len);
    uint8_t sum[32];
    int rc = state_sha256(sum, b, len - 32);
    if (rc)
        return rc;
    /* The checksum covers the private section, so both sums are secret-derived; whether they match
     * (the file is intact) is public (tests/ct: ct_state). */
    int intact = dsig_ct_equal(sum, b + len - 32, 32);
    DSIG_CT_DECLASSIFY(&intact, sizeof intact);
    if (!intact)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': checksum mismatch: the file is damaged (torn "
                                        "write) or was edited; it is refused", path);
    const uint8_t *p = b + STATE_MAGIC_LEN, *e = b + len - 32;
    size_t nlen = *p++;
    if (nlen == 0 || nlen > STATE_NAME_MAX || (size_t)(e - p) < nlen + 4)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': bad algorithm name length %zu", path, nlen);
    for (size_t i = 0; i < nlen; i++)
        if (p[i] < 0x21 || p[i] > 0x7e)
            return dsig_fail(DSIG_E_FORMAT, "state file '%s': algorithm name is not printable ASCII", path);
    memcpy(f->name, p, nlen);
    f->name[nlen] = '\0';
    p += nlen;
    f->pub_len = dsig_load_be32(p), p += 4;
    if (f->pub_len == 0 || f->pub_len > STATE_PUB_MAX || (size_t)(e - p) < f->pub_len + 4)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': bad public key length %zu", path, f->pub_len);
    f->pub = p, p += f->pub_len;
    f->priv_len = dsig_load_be32(p), p += 4;
    if (f->priv_len == 0 || f->priv_len > STATE_PRIV_MAX || (size_t)(e - p) < f->priv_len + tail)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': bad private material length %zu", path,
                         f->priv_len);
    f->priv = p, p += f->priv_len;
    f->counter = dsig_load_be64(p), p += 8;
    f->window.on = v2;
    f->window.lo = f->window.hi = 0;
    if (v2) {
        f->window.lo = dsig_load_be64(p), p += 8;
        f->window.hi = dsig_load_be64(p), p += 8;
        if (f->window.lo > f->counter || f->counter > f->window.hi)
            return dsig_fail(DSIG_E_FORMAT, "state file '%s': counter %llu outside its index window "
                                            "[%llu, %llu)", path, (unsigned long long)f->counter,
                             (unsigned long long)f->window.lo, (unsigned long long)f->window.hi);
    }
    if (p != e)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': %zu unexpected bytes before the checksum",
                         path, (size_t)(e - p));
    return DSIG_OK;
}
