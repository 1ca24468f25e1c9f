/*
 * src/pq/lms/lms_hash.c — the streaming hash of LMS (SHA-256, SHA-256/192 or SHAKE256 with an n-byte
 * output, SP 800-208 §4.2): a SHA-256 state fed whole blocks straight from the input, or a Keccak sponge.
 */
#include <string.h>

#include "core/bytes.h"
#include "dsig/mem.h"
#include "hash/keccak.h"
#include "hash/sha256.h"
#include "pq/lms/lms.h"

void dsig_lms_hash_init(dsig_lms_hash *h, int shake)
{
    h->shake = shake;
    if (shake) {
        dsig_shake256_init(&h->u.k);
    } else {
        memcpy(h->u.sha.s, dsig_sha256_iv, sizeof h->u.sha.s);
        h->u.sha.total = 0;
    }
}

void dsig_lms_hash_update(dsig_lms_hash *h, const void *in, size_t len)
{
    const uint8_t *p = in;
    if (h->shake) {
        dsig_keccak_absorb(&h->u.k, p, len);
        return;
    }
    size_t used = (size_t)(h->u.sha.total & 63);
    h->u.sha.total += len;
    if (used) {
        size_t take = 64 - used < len ? 64 - used : len;
        memcpy(h->u.sha.buf + used, p, take);
        p += take;
        len -= take;
        if (used + take < 64)
            return;
        dsig_sha256_compress(h->u.sha.s, h->u.sha.buf, 1);
    }
    if (len >= 64) { /* whole blocks straight from the input: no copy on the payload path */
        dsig_sha256_compress(h->u.sha.s, p, len / 64);
        p += len & ~(size_t)63;
        len &= 63;
    }
    memcpy(h->u.sha.buf, p, len);
}

/* @spec FIPS 180-4 §5.1.1 padding; SP 800-208 §4.2 SHA-256/192 = the first 24 bytes. */
void dsig_lms_hash_final(dsig_lms_hash *h, uint8_t *out, size_t n)
{
    if (h->shake) {
        dsig_shake_finalize(&h->u.k);
        dsig_keccak_squeeze(&h->u.k, out, n);
        dsig_keccak_wipe(&h->u.k);
        return;
    }
    size_t used = (size_t)(h->u.sha.total & 63);
    uint8_t *b = h->u.sha.buf;
    b[used++] = 0x80;
    if (used > 56) {
        memset(b + used, 0, 64 - used);
        dsig_sha256_compress(h->u.sha.s, b, 1);
        used = 0;
    }
    memset(b + used, 0, 56 - used);
    uint64_t bits = h->u.sha.total * 8;
    dsig_store_be32(b + 56, (uint32_t)(bits >> 32));
    dsig_store_be32(b + 60, (uint32_t)bits);
    dsig_sha256_compress(h->u.sha.s, b, 1);
    uint8_t full[32];
    dsig_sha256_store(full, h->u.sha.s);
    memcpy(out, full, n);
    dsig_memzero(h, sizeof *h);
}
