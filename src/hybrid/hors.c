/*
 * src/hybrid/hors.c — HORS with the completed public key in the signature (docs/dsig-format.md §5.2):
 * t slots of 16 bytes; slot s carries the secret s_s when s is one of the k digest indices, else the
 * public value p_s = F(s_s, pk_seed, HORS, s, 0). The leaf hashes all t public values (lane-parallel).
 */
#include <string.h>

#include "core/internal.h"
#include "hash/blake3.h"
#include "hybrid/hb_internal.h"

#define HORS_CHUNK 256u /* slots walked per hb_chains_walk call in key generation */

/* The k indices of log_t bits of D (little-endian bit order), sorted, duplicates removed.
 * Returns the number of distinct indices. */
static unsigned hors_indices(const dsig_hb_params *p, const uint8_t *digest, uint16_t *idx)
{
    unsigned cnt = 0;
    for (unsigned i = 0; i < p->k; i++) {
        uint16_t v = (uint16_t)hb_bits(digest, (size_t)i * p->log_t, p->log_t);
        unsigned j = cnt;
        /* insertion sort (k ≤ 255): indices are public, derived from the message digest */
        while (j > 0 && idx[j - 1] > v) j--;
        if (j > 0 && idx[j - 1] == v) continue;
        memmove(idx + j + 1, idx + j, (cnt - j) * sizeof *idx);
        idx[j] = v;
        cnt++;
    }
    return cnt;
}

/* Public slots from the level-0 secrets in table[(2s)·16] into table[(2s+1)·16]. */
void hb_hors_keygen(const dsig_hb_params *p, const uint8_t pk_seed[16], uint8_t *table)
{
    uint16_t ids[HORS_CHUNK];
    uint8_t start[HORS_CHUNK], stop[HORS_CHUNK], vals[HORS_CHUNK * DSIG_HB_HORS_N];
    memset(start, 0, sizeof start);
    memset(stop, 1, sizeof stop);
    for (unsigned base = 0; base < p->chains; base += HORS_CHUNK) {
        unsigned m = p->chains - base < HORS_CHUNK ? p->chains - base : HORS_CHUNK;
        for (unsigned i = 0; i < m; i++) {
            ids[i] = (uint16_t)(base + i);
            memcpy(vals + i * 16, table + (size_t)(base + i) * 32, 16);
        }
        hb_chains_walk(p, pk_seed, HB_DOM_HORS, ids, start, stop, vals, m, table);
    }
    dsig_memzero(vals, sizeof vals);
}

/* Signature slots: every public value, then the secrets of the digest indices over them. */
void hb_hors_sign(const dsig_hb_params *p, const uint8_t *table, const uint8_t *digest, uint8_t *values)
{
    uint16_t idx[255];
    for (unsigned s = 0; s < p->chains; s++) hb_cpy_val(values + (size_t)s * 16, table + (size_t)s * 32 + 16, 16);
    unsigned cnt = hors_indices(p, digest, idx);
    for (unsigned i = 0; i < cnt; i++) memcpy(values + (size_t)idx[i] * 16, table + (size_t)idx[i] * 32, 16);
}

/* Leaf over p_0 … p_{t−1}: the signature's slots with the revealed secrets replaced by their
 * public values. @spec docs §5.3 */
void hb_hors_leaf(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *values,
                  const uint8_t *digest, uint8_t leaf[32])
{
    uint16_t idx[255];
    uint8_t start[255], stop[255], pub[255 * DSIG_HB_HORS_N];
    unsigned cnt = hors_indices(p, digest, idx);
    memset(start, 0, sizeof start);
    memset(stop, 1, sizeof stop);
    for (unsigned i = 0; i < cnt; i++) memcpy(pub + i * 16, values + (size_t)idx[i] * 16, 16);
    hb_chains_walk(p, pk_seed, HB_DOM_HORS, idx, start, stop, pub, cnt, NULL);
    hb_leaf_hash(p, pk_seed, values, 16, idx, pub, cnt, leaf);
}

/* Leaf of a key from its public slots (slot s's public value at table[(2s+1)·16]). */
void hb_hors_leaf_from_table(const dsig_hb_params *p, const uint8_t pk_seed[16], const uint8_t *table,
                             uint8_t leaf[32])
{
    hb_leaf_hash(p, pk_seed, table + 16, 32, NULL, NULL, 0, leaf);
}
