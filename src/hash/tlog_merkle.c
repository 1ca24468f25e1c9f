/*
 * src/core/tlog_merkle.c — RFC 9162 §2.1 Merkle tree hashing: leaf and node hashes, the compact range
 * of a growing log, subtree hashes from stored complete subtrees, inclusion and consistency proofs and
 * their verification. Pure computation: storage belongs to the caller (dsig/tlog.h).
 */
#include <string.h>

#include "core/internal.h"
#include "dsig/tlog.h"
#include "hash/sha256.h"

/* A streaming SHA-256 over the project's compression function: a leaf hash is a one-byte prefix and
 * an entry of any length, hashed without copying the entry. */
struct sha256_stream {
    uint32_t st[8];
    uint8_t block[64];
    size_t fill;
    uint64_t total;
};

static void stream_init(struct sha256_stream *s)
{
    memcpy(s->st, dsig_sha256_iv, sizeof s->st);
    s->fill = 0;
    s->total = 0;
}

static void stream_update(struct sha256_stream *s, const uint8_t *p, size_t n)
{
    s->total += n;
    if (s->fill) {
        size_t take = 64 - s->fill < n ? 64 - s->fill : n;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        n -= take;
        if (s->fill < 64)
            return;
        dsig_sha256_compress(s->st, s->block, 1);
        s->fill = 0;
    }
    if (n >= 64) {
        dsig_sha256_compress(s->st, p, n / 64);
        p += n / 64 * 64;
        n %= 64;
    }
    memcpy(s->block, p, n);
    s->fill = n;
}

static void stream_final(struct sha256_stream *s, uint8_t out[32])
{
    uint64_t bits = s->total * 8;
    s->block[s->fill++] = 0x80;
    if (s->fill > 56) {
        memset(s->block + s->fill, 0, 64 - s->fill);
        dsig_sha256_compress(s->st, s->block, 1);
        s->fill = 0;
    }
    memset(s->block + s->fill, 0, 56 - s->fill);
    for (int i = 0; i < 8; i++)
        s->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    dsig_sha256_compress(s->st, s->block, 1);
    dsig_sha256_store(out, s->st);
}

void dsig_tlog_leaf_hash(const void *entry, size_t len, uint8_t out[DSIG_TLOG_HASH_LEN])
{
    static const uint8_t zero = 0x00;
    struct sha256_stream s;
    stream_init(&s);
    stream_update(&s, &zero, 1);
    stream_update(&s, entry, len);
    stream_final(&s, out);
}

void dsig_tlog_node_hash(const uint8_t left[DSIG_TLOG_HASH_LEN], const uint8_t right[DSIG_TLOG_HASH_LEN],
                         uint8_t out[DSIG_TLOG_HASH_LEN])
{
    uint8_t buf[65];
    buf[0] = 0x01;
    memcpy(buf + 1, left, 32);
    memcpy(buf + 33, right, 32);
    dsig_sha256(out, buf, sizeof buf);
}

void dsig_tlog_sha256(const void *data, size_t len, uint8_t out[DSIG_TLOG_HASH_LEN])
{
    dsig_sha256(out, data, len);
}

void dsig_tlog_empty_root(uint8_t out[DSIG_TLOG_HASH_LEN])
{
    dsig_sha256(out, "", 0);
}

/* ---- storage order ------------------------------------------------------------------------- */

static unsigned popcount64(uint64_t x)
{
    return (unsigned)__builtin_popcountll(x);
}

uint64_t dsig_tlog_node_pos(unsigned level, uint64_t index)
{
    uint64_t last = ((index + 1) << level) - 1; /* the subtree's last leaf: it is stored right after it */
    return 2 * last - popcount64(last) + level;
}

uint64_t dsig_tlog_stored_nodes(uint64_t size)
{
    return 2 * size - popcount64(size);
}

/* ---- compact range ------------------------------------------------------------------------- */

void dsig_tlog_range_init(dsig_tlog_range *r)
{
    memset(r, 0, sizeof *r);
}

int dsig_tlog_range_append(dsig_tlog_range *r, const uint8_t leaf[DSIG_TLOG_HASH_LEN], dsig_tlog_store_fn store,
                           void *arg)
{
    if (r->size == UINT64_MAX)
        return dsig_fail(DSIG_E_ARG, "tlog: the tree is full");
    int bad = 0;
    uint8_t cur[32];
    memcpy(cur, leaf, 32);
    if (store && store(arg, 0, r->size, cur) != 0)
        bad = 1;
    /* Each set low bit of the old size is a complete subtree to the left that the new leaf completes. */
    for (unsigned level = 0; (r->size >> level) & 1; level++) {
        dsig_tlog_node_hash(r->hash[--r->n], cur, cur);
        if (store && !bad && store(arg, level + 1, r->size >> (level + 1), cur) != 0)
            bad = 1;
    }
    memcpy(r->hash[r->n++], cur, 32);
    r->size++;
    return bad ? dsig_fail(DSIG_E_IO, "tlog: a subtree hash could not be stored") : DSIG_OK;
}

void dsig_tlog_range_root(const dsig_tlog_range *r, uint8_t out[DSIG_TLOG_HASH_LEN])
{
    if (r->n == 0) {
        dsig_tlog_empty_root(out);
        return;
    }
    uint8_t acc[32];
    memcpy(acc, r->hash[r->n - 1], 32);
    for (unsigned i = r->n - 1; i-- > 0;)
        dsig_tlog_node_hash(r->hash[i], acc, acc);
    memcpy(out, acc, 32);
}

/* ---- subtrees and proofs ------------------------------------------------------------------- */

/* The largest power of two smaller than n (n >= 2): RFC 9162's split point k. */
static uint64_t split_point(uint64_t n)
{
    uint64_t k = (uint64_t)1 << (63 - __builtin_clzll(n - 1));
    return k;
}

int dsig_tlog_subtree(dsig_tlog_fetch_fn fetch, void *arg, uint64_t begin, uint64_t end,
                      uint8_t out[DSIG_TLOG_HASH_LEN])
{
    if (end <= begin)
        return dsig_fail(DSIG_E_ARG, "tlog: empty subtree");
    uint64_t n = end - begin;
    if ((n & (n - 1)) == 0) {
        if (begin % n)
            return dsig_fail(DSIG_E_ARG, "tlog: unaligned subtree [%llu, %llu)", (unsigned long long)begin,
                             (unsigned long long)end);
        return fetch(arg, (unsigned)__builtin_ctzll(n), begin / n, out);
    }
    uint64_t k = split_point(n);
    if (begin % k)
        return dsig_fail(DSIG_E_ARG, "tlog: unaligned subtree [%llu, %llu)", (unsigned long long)begin,
                         (unsigned long long)end);
    uint8_t left[32], right[32];
    int rc = dsig_tlog_subtree(fetch, arg, begin, begin + k, left);
    if (rc == DSIG_OK)
        rc = dsig_tlog_subtree(fetch, arg, begin + k, end, right);
    if (rc == DSIG_OK)
        dsig_tlog_node_hash(left, right, out);
    return rc;
}

/* RFC 9162 §2.1.3.1 PATH(m, D[n]), walked top-down: the siblings come out root side first, and are
 * reversed at the end (the proof lists them leaf side first). */
int dsig_tlog_inclusion_proof(dsig_tlog_fetch_fn fetch, void *arg, uint64_t index, uint64_t size,
                              uint8_t proof[][DSIG_TLOG_HASH_LEN], size_t *n)
{
    *n = 0;
    if (index >= size)
        return dsig_fail(DSIG_E_ARG, "tlog: leaf %llu is not in a tree of %llu", (unsigned long long)index,
                         (unsigned long long)size);
    uint64_t begin = 0, end = size;
    size_t cnt = 0;
    while (end - begin > 1) {
        uint64_t k = split_point(end - begin);
        int rc;
        if (index < begin + k) {
            rc = dsig_tlog_subtree(fetch, arg, begin + k, end, proof[cnt]);
            end = begin + k;
        } else {
            rc = dsig_tlog_subtree(fetch, arg, begin, begin + k, proof[cnt]);
            begin += k;
        }
        if (rc != DSIG_OK)
            return rc;
        cnt++;
    }
    for (size_t i = 0; i < cnt / 2; i++) {
        uint8_t t[32];
        memcpy(t, proof[i], 32);
        memcpy(proof[i], proof[cnt - 1 - i], 32);
        memcpy(proof[cnt - 1 - i], t, 32);
    }
    *n = cnt;
    return DSIG_OK;
}

/* RFC 9162 §2.1.4.1 SUBPROOF(m, D[n], b), top-down and reversed like the inclusion proof. */
int dsig_tlog_consistency_proof(dsig_tlog_fetch_fn fetch, void *arg, uint64_t m, uint64_t n,
                                uint8_t proof[][DSIG_TLOG_HASH_LEN], size_t *len)
{
    *len = 0;
    if (m == 0 || m > n)
        return dsig_fail(DSIG_E_ARG, "tlog: no consistency proof from %llu to %llu", (unsigned long long)m,
                         (unsigned long long)n);
    uint64_t begin = 0, end = n;
    int whole = 1; /* b: the old tree is a complete subtree of this one so far (its hash is known) */
    size_t cnt = 0;
    int rc = DSIG_OK;
    for (;;) {
        if (m == end - begin) {
            if (!whole)
                rc = dsig_tlog_subtree(fetch, arg, begin, end, proof[cnt++]);
            break;
        }
        uint64_t k = split_point(end - begin);
        if (m <= k) {
            rc = dsig_tlog_subtree(fetch, arg, begin + k, end, proof[cnt++]);
            end = begin + k;
        } else {
            rc = dsig_tlog_subtree(fetch, arg, begin, begin + k, proof[cnt++]);
            m -= k;
            begin += k;
            whole = 0;
        }
        if (rc != DSIG_OK)
            return rc;
    }
    if (rc != DSIG_OK)
        return rc;
    for (size_t i = 0; i < cnt / 2; i++) {
        uint8_t t[32];
        memcpy(t, proof[i], 32);
        memcpy(proof[i], proof[cnt - 1 - i], 32);
        memcpy(proof[cnt - 1 - i], t, 32);
    }
    *len = cnt;
    return DSIG_OK;
}

/* ---- verification (RFC 9162 §2.1.3.2, §2.1.4.2) ---------------------------------------------- */

int dsig_tlog_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf[DSIG_TLOG_HASH_LEN],
                               const uint8_t proof[][DSIG_TLOG_HASH_LEN], size_t n,
                               const uint8_t root[DSIG_TLOG_HASH_LEN])
{
    if (index >= size)
        return dsig_fail(DSIG_E_ARG, "tlog: leaf %llu is not in a tree of %llu", (unsigned long long)index,
                         (unsigned long long)size);
    uint64_t fn = index, sn = size - 1;
    uint8_t r[32];
    memcpy(r, leaf, 32);
    for (size_t i = 0; i < n; i++) {
        if (sn == 0)
            return dsig_fail(DSIG_E_VERIFY, "tlog: inclusion proof too long");
        if ((fn & 1) || fn == sn) {
            dsig_tlog_node_hash(proof[i], r, r);
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else {
            dsig_tlog_node_hash(r, proof[i], r);
        }
        fn >>= 1;
        sn >>= 1;
    }
    if (sn != 0)
        return dsig_fail(DSIG_E_VERIFY, "tlog: inclusion proof too short");
    if (memcmp(r, root, 32) != 0)
        return dsig_fail(DSIG_E_VERIFY, "tlog: inclusion proof does not lead to the root");
    return DSIG_OK;
}

int dsig_tlog_verify_consistency(uint64_t m, uint64_t n, const uint8_t root1[DSIG_TLOG_HASH_LEN],
                                 const uint8_t root2[DSIG_TLOG_HASH_LEN],
                                 const uint8_t proof[][DSIG_TLOG_HASH_LEN], size_t len)
{
    if (m == 0 || m > n)
        return dsig_fail(DSIG_E_ARG, "tlog: no consistency proof from %llu to %llu", (unsigned long long)m,
                         (unsigned long long)n);
    if (m == n) {
        if (len != 0)
            return dsig_fail(DSIG_E_VERIFY, "tlog: a consistency proof between equal sizes is empty");
        if (memcmp(root1, root2, 32) != 0)
            return dsig_fail(DSIG_E_VERIFY, "tlog: two different roots for one tree size");
        return DSIG_OK;
    }
    if (len == 0)
        return dsig_fail(DSIG_E_VERIFY, "tlog: empty consistency proof");
    /* When m is a power of two the old root is itself the first node of the path. */
    size_t i = 0;
    const uint8_t *first;
    if ((m & (m - 1)) == 0) {
        first = root1;
    } else {
        first = proof[0];
        i = 1;
    }
    uint64_t fn = m - 1, sn = n - 1;
    while (fn & 1) {
        fn >>= 1;
        sn >>= 1;
    }
    uint8_t fr[32], sr[32];
    memcpy(fr, first, 32);
    memcpy(sr, first, 32);
    for (; i < len; i++) {
        if (sn == 0)
            return dsig_fail(DSIG_E_VERIFY, "tlog: consistency proof too long");
        if ((fn & 1) || fn == sn) {
            dsig_tlog_node_hash(proof[i], fr, fr);
            dsig_tlog_node_hash(proof[i], sr, sr);
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else {
            dsig_tlog_node_hash(sr, proof[i], sr);
        }
        fn >>= 1;
        sn >>= 1;
    }
    if (sn != 0)
        return dsig_fail(DSIG_E_VERIFY, "tlog: consistency proof too short");
    if (memcmp(fr, root1, 32) != 0 || memcmp(sr, root2, 32) != 0)
        return dsig_fail(DSIG_E_VERIFY, "tlog: the tree of %llu does not extend the tree of %llu",
                         (unsigned long long)n, (unsigned long long)m);
    return DSIG_OK;
}
