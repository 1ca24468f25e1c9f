/*
 * src/hybrid/wots.c — W-OTS+ with the standard checksum Σ(w−1−d_i) (docs/dsig-format.md §5.1): digits,
 * key tables with every chain level, signing by copying, chain completion to the leaf.
 *
 * The reference code's checksum Σ d_i is forgeable (raising a message digit raises the checksum, so a
 * signature holder can move chains forward); with Σ(w−1−d_i) raising any digit lowers a checksum digit.
 */
#include <string.h>

#include "core/internal.h"
#include "hash/blake3.h"
#include "hybrid/hb_internal.h"

/* D = BLAKE3-keyed(K_msg, pk_seed ‖ nonce ‖ msg), digest_bytes of XOF output, 4 zero bytes after.
 * @spec docs §5.0 */
void hb_message_digest(const dsig_hb_params *p, const uint8_t *pk_seed, const uint8_t *nonce,
                       const uint8_t *msg, size_t len, uint8_t *out)
{
    const uint8_t *key = hb_key(HB_K_MSG);
    if (len <= 32 && p->digest_bytes <= 64) {
        /* Short message: one compression, no hasher set-up. */
        uint8_t blk[64];
        memcpy(blk, pk_seed, 16);
        memcpy(blk + 16, nonce, 16);
        if (len) memcpy(blk + 32, msg, len);
        dsig_blake3_hash_block(key, blk, 32 + len, out, p->digest_bytes);
    } else {
        dsig_blake3_hasher h;
        dsig_blake3_init_keyed(&h, key);
        dsig_blake3_update(&h, pk_seed, 16);
        dsig_blake3_update(&h, nonce, 16);
        dsig_blake3_update(&h, msg, len);
        dsig_blake3_finalize(&h, out, p->digest_bytes);
    }
    memset(out + p->digest_bytes, 0, 4);
}

/* Message digits: len1 groups of log_w bits of D, little-endian bit order; then the checksum
 * Σ(w−1−d_i) written in base w, least significant digit first. @spec docs §5.1 */
void hb_wots_digits(const dsig_hb_params *p, const uint8_t *digest, uint8_t *digits)
{
    unsigned lw = p->log_w, wm = p->w - 1u, csum = 0;
    if (lw == 2 && p->len1 % 8u == 0) {
        /* The default w = 4: two digest bytes to eight digit bytes at once (SWAR: spread the nibbles to
         * 16-bit fields, then the bit pairs to bytes), no per-digit bit-window arithmetic; the digit sum
         * is a byte-wise sum of those words (each byte ≤ 3·len1/8 ≤ 24: no carry between bytes). */
        uint64_t acc = 0;
        for (unsigned b = 0; b < p->len1 / 4u; b += 2) {
            uint64_t x = (uint64_t)digest[b] | ((uint64_t)digest[b + 1] << 32);
            x = (x | (x << 12)) & 0x000F000F000F000Full;
            x = (x | (x << 6)) & 0x0303030303030303ull;
            dsig_store_le64(digits + 4 * b, x);
            acc += x;
        }
        /* Σ(3 − d) = 3·len1 − Σd; the horizontal byte sum (≤ 3·len1 = 192) lands in the top byte. */
        csum = 3u * p->len1 - (unsigned)((acc * 0x0101010101010101ull) >> 56);
    } else {
        for (unsigned i = 0; i < p->len1; i++) {
            unsigned d = hb_bits(digest, (size_t)i * lw, lw);
            digits[i] = (uint8_t)d;
            csum += wm - d;
        }
    }
    for (unsigned j = 0; j < p->len2; j++) digits[p->len1 + j] = (uint8_t)((csum >> (j * lw)) & wm);
}

/* Complete the table: level d+1 of chain i = F(level d, pk_seed, i, d), all chains in lock-step. */
void hb_wots_keygen(const dsig_hb_params *p, const uint8_t pk_seed[16], uint8_t *table)
{
    uint16_t ids[HB_MAX_WOTS_CHAINS];
    uint8_t start[HB_MAX_WOTS_CHAINS], stop[HB_MAX_WOTS_CHAINS];
    uint8_t vals[HB_MAX_WOTS_CHAINS * DSIG_HB_WOTS_N];
    const size_t n = p->n;
    for (unsigned i = 0; i < p->chains; i++) {
        ids[i] = (uint16_t)i;
        start[i] = 0;
        stop[i] = (uint8_t)(p->w - 1);
        hb_cpy_val(vals + i * n, table + (size_t)i * p->w * n, n);
    }
    hb_chains_walk(p, pk_seed, HB_DOM_WOTS, ids, start, stop, vals, p->chains, table);
    dsig_memzero(vals, sizeof vals);
}

/* Signature values: chain i at level d_i, copied from the table. */
void hb_wots_sign(const dsig_hb_params *p, const uint8_t *table, const uint8_t *digest, uint8_t *values)
{
    uint8_t digits[HB_MAX_WOTS_CHAINS];
    const size_t n = p->n;
    hb_wots_digits(p, digest, digits);
    /* Locals: the stores to `values` could alias *p, which would make the compiler reload w and the
     * chain count for every chain; the default n as a constant makes each copy two moves. */
    const size_t w = p->w, chains = p->chains;
    if (n == DSIG_HB_WOTS_N) {
        for (size_t i = 0; i < chains; i++)
            hb_cpy_val(values + i * DSIG_HB_WOTS_N, table + (i * w + digits[i]) * DSIG_HB_WOTS_N, DSIG_HB_WOTS_N);
        return;
    }
    for (size_t i = 0; i < chains; i++)
        hb_cpy_val(values + i * n, table + (i * w + digits[i]) * n, n);
}

/* The 20-byte head of lane message `lane`: pk_seed ‖ ots ‖ n ‖ lane u16le. @spec docs §5.3 */
static inline void lane_prefix(uint8_t *m, const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned lane)
{
    memcpy(m, pk_seed, 16);
    m[16] = p->ots;
    m[17] = (uint8_t)p->n;
    dsig_store_le16(m + 18, lane);
}

/* Lane-parallel leaf (see hb_internal.h): lane messages 8 at a time through the multi-message BLAKE3,
 * then one keyed hash over the lane digests. @spec docs §5.3 */
void hb_leaf_hash(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *tops, size_t stride,
                  const uint16_t *ovr_idx, const uint8_t *ovr_vals, size_t ovr_cnt, uint8_t leaf[32])
{
    uint8_t buf[8][HB_LANE_MAX];
    uint8_t dig[HB_MAX_LANES][32];
    const unsigned lanes = hb_leaf_lanes(p), per = hb_lane_values(p), L = p->chains;
    const size_t n = p->n, len = hb_lane_bytes(p), used = HB_LANE_PREFIX + (size_t)per * n;
    size_t o = 0; /* next override */
    for (unsigned g = 0; g < lanes; g += 8) {
        for (unsigned l = 0; l < 8; l++) {
            unsigned lane = g + l, first = lane * per;
            uint8_t *m = buf[l];
            lane_prefix(m, p, pk_seed, lane);
            m += HB_LANE_PREFIX;
            unsigned have = first >= L ? 0 : (L - first < per ? L - first : per);
            for (unsigned j = 0; j < have; j++) hb_cpy_val(m + (size_t)j * n, tops + (size_t)(first + j) * stride, n);
            /* positions ≥ L (the last lanes when L is not a multiple of the lane count) are zeros */
            if (have < per) memset(m + (size_t)have * n, 0, (size_t)(per - have) * n);
            memset(buf[l] + used, 0, len - used); /* zeros to the block boundary */
        }
        unsigned end = (g + 8) * per;
        for (; o < ovr_cnt && ovr_idx[o] < end; o++) {
            unsigned i = ovr_idx[o], lane = i / per;
            hb_cpy_val(buf[lane - g] + HB_LANE_PREFIX + (size_t)(i - lane * per) * n, ovr_vals + o * n, n);
        }
        dsig_blake3_hash_many_chunks(hb_key(HB_K_LANE), buf[0], HB_LANE_MAX, len, 8, dig + g);
    }
    /* One message: serial compressions (a multi-message SIMD call would waste its other lanes). */
    dsig_blake3_hash_chunk(hb_key(HB_K_LEAF), dig, (size_t)lanes * 32, leaf);
}

/* Leaf implied by a signature: complete chain i from level d_i to w−1. The lane messages (W-OTS+ has
 * 8) are laid out first and the walk writes each chain's end straight into its slot: no copy of the
 * values into a scratch array, and none from there into the lanes. @spec docs §5.3 */
void hb_wots_leaf(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *values,
                  const uint8_t *digest, uint8_t leaf[32])
{
    uint8_t digits[HB_MAX_WOTS_CHAINS];
    _Alignas(64) uint8_t lanes[8 * HB_LANE_MAX];
    uint8_t dig[8][32];
    const unsigned per = hb_lane_values(p), L = p->chains;
    const size_t n = p->n, len = hb_lane_bytes(p);
    hb_wots_digits(p, digest, digits);
    for (unsigned l = 0; l < 8; l++) {
        uint8_t *m = lanes + l * len;
        const unsigned first = l * per, have = first >= L ? 0 : (L - first < per ? L - first : per);
        const size_t used = HB_LANE_PREFIX + (size_t)have * n;
        /* Slots past the last chain and the padding to the block boundary are zeros. A full lane pads
         * less than one block: zero its whole last block (a fixed size, no memset call; the walk writes
         * its values there afterwards). */
        if (len - used <= 64 && len >= 64 + HB_LANE_PREFIX)
            memset(m + len - 64, 0, 64);
        else
            memset(m + used, 0, len - used);
        lane_prefix(m, p, pk_seed, l);
    }
    const hb_walk_out lay = {.per = per, .stride = len};
    hb_chains_walk_to(p, pk_seed, HB_DOM_WOTS, NULL, digits, NULL, values, lanes + HB_LANE_PREFIX, &lay, L);
    dsig_blake3_hash_many_chunks(hb_key(HB_K_LANE), lanes, len, len, 8, dig);
    dsig_blake3_hash_chunk(hb_key(HB_K_LEAF), dig, sizeof dig, leaf);
}

/* Leaf of a key from its table's top level (chain i's end at table[(i·w + w−1)·n]). */
void hb_wots_leaf_from_table(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *table,
                             uint8_t leaf[32])
{
    const size_t n = p->n;
    hb_leaf_hash(p, pk_seed, table + (size_t)(p->w - 1) * n, (size_t)p->w * n, NULL, NULL, 0, leaf);
}
