/*
 * src/pq/slhdsa/slhdsa.c — SLH-DSA (FIPS 205) trees: WOTS+ (§5), XMSS (§6), hypertree (§7), FORS
 * (§8) and the internal key generation / signing / verification (§9).
 *
 * Batching: instead of the spec's recursive xmss_node / fors_node, a Merkle tree is built bottom-up
 * from chunks of leaves, one tree level at a time, and every level's independent hash calls go to the
 * family back-end as one array (hash.h). WOTS+ chains of a leaf chunk step together. Signing also
 * takes the WOTS+ signature and the XMSS root from the same pass that builds the authentication path
 * (the spec computes them again with wots_sign and xmss_pkFromSig); the FORS roots likewise. Outputs
 * are byte-identical to the spec's algorithms (ACVP vectors in tests/slhdsa).
 */
#include "pq/slhdsa/slhdsa.h"

#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "dsig/mem.h"
#include "pq/slhdsa/hash.h"

#define XMSS_CHUNK_H 2   /* XMSS leaves per batch: 4 leaves × len chains (h' >= 3 always) */
#define FORS_CHUNK_H 6   /* FORS leaves per batch: 64 */
#define TOPS_MAX 256     /* 2^(max(a - FORS_CHUNK_H, h' - XMSS_CHUNK_H)) chunk roots */

/* Set up a per-key hash context (sk_seed NULL for verification). */
void dsig_slhdsa_ctx_init(dsig_slhdsa_ctx *c, const dsig_slhdsa_params *p, const uint8_t *pk_seed,
                          const uint8_t *sk_seed)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    memcpy(c->pk_seed, pk_seed, p->n);
    if (sk_seed != NULL)
        memcpy(c->sk_seed, sk_seed, p->n);
    p->ops->init(c);
}

/* Wipe a context (it holds SK.seed). */
void dsig_slhdsa_ctx_wipe(dsig_slhdsa_ctx *c)
{
    dsig_memzero(c, sizeof *c);
}

/* Back-end in use for a set, as a fresh context would choose it. */
const char *dsig_slhdsa_backend(const dsig_slhdsa_params *p)
{
    static const uint8_t zero[DSIG_SLHDSA_NMAX];
    dsig_slhdsa_ctx c;
    dsig_slhdsa_ctx_init(&c, p, zero, NULL);
    const char *name = p->ops->backend(&c);
    dsig_slhdsa_ctx_wipe(&c);
    return name;
}

/* @spec FIPS 205 Algorithm 4 base_2b(X, b, out_len): big-endian b-bit digits (b <= 16 here). */
static void base_2b(const uint8_t *x, unsigned b, unsigned out_len, uint32_t *out)
{
    size_t in = 0;
    unsigned bits = 0;
    uint32_t total = 0;
    for (unsigned o = 0; o < out_len; o++) {
        while (bits < b) {
            total = (total << 8) | x[in++];
            bits += 8;
        }
        bits -= b;
        out[o] = (total >> bits) & ((1u << b) - 1);
    }
}

/* @spec FIPS 205 Algorithm 7 lines 1-8 (wots_sign) / Algorithm 8 lines 1-8 (wots_pkFromSig): the
 * len base-w digits of an n-byte message followed by the 3 checksum digits (lg_w = 4). */
static void wots_digits(const dsig_slhdsa_params *p, const uint8_t *m, uint32_t *msg)
{
    unsigned len1 = 2 * p->n;
    uint32_t csum = 0;
    base_2b(m, 4, len1, msg);
    for (unsigned i = 0; i < len1; i++)
        csum += 15 - msg[i];
    /* csum <<= (8 - (len2·lg_w mod 8)) mod 8 = 4; toByte(csum, 2); base_2b(·, 4, 3) */
    csum <<= 4;
    uint8_t cb[2] = {(uint8_t)(csum >> 8), (uint8_t)csum};
    base_2b(cb, 4, 3, msg + len1);
}

/*
 * @spec FIPS 205 Algorithm 5 chain, for `count` chains at once: chain i goes from position start[i]
 * to end[i] (values in vals, n bytes each; ADRS adrs[i] with type/keypair/chain set). All chains
 * take step j together so each step is one batch. When rec is given, chain i's value at position
 * rec_at[i] is copied to rec[i] (the WOTS+ signature of the leaf being signed). Positions are public.
 */
static void chains_run(const dsig_slhdsa_ctx *c, uint8_t (*adrs)[32], uint8_t *vals,
                       const uint32_t *start, const uint32_t *end, size_t count, uint8_t *const *rec,
                       const uint32_t *rec_at, const uint8_t **ap, uint8_t **vp)
{
    unsigned n = c->p->n;
    for (uint32_t j = 0; j < DSIG_SLHDSA_W; j++) {
        size_t cnt = 0;
        for (size_t i = 0; i < count; i++) {
            if (rec != NULL && rec[i] != NULL && rec_at[i] == j)
                memcpy(rec[i], vals + i * n, n);
            if (start[i] <= j && j < end[i]) {
                slh_set_hash(adrs[i], j);
                ap[cnt] = adrs[i];
                vp[cnt] = vals + i * n;
                cnt++;
            }
        }
        if (cnt > 0)
            c->p->ops->f_many(c, ap, (const uint8_t *const *)vp, vp, cnt);
    }
}

/* Leaf generator for merkle(): writes cnt leaves starting at index first. */
typedef void (*leaf_fn)(const dsig_slhdsa_ctx *c, void *arg, uint32_t first, unsigned cnt,
                        uint8_t *out);

/* What xmss_leaves needs: the tree's ADRS (layer, tree) and, when signing, the leaf being signed
 * with its WOTS+ digits and where its signature goes. */
typedef struct xmss_arg {
    const uint8_t *adrs;     /* layer and tree address set */
    uint32_t sign_leaf;
    const uint32_t *digits;  /* NULL: no signature wanted */
    uint8_t *wots_sig;       /* len·n bytes */
} xmss_arg;

/* @spec FIPS 205 Algorithm 6 wots_pkGen for leaves first..first+cnt-1 of one XMSS tree (the z = 0
 * case of Algorithm 9 xmss_node), plus Algorithm 10 line 7 (wots_sign) for the signed leaf. */
static void xmss_leaves(const dsig_slhdsa_ctx *c, void *argp, uint32_t first, unsigned cnt,
                        uint8_t *out)
{
    const dsig_slhdsa_params *p = c->p;
    const xmss_arg *arg = argp;
    unsigned n = p->n, len = p->len;
    enum { MAXC = (1u << XMSS_CHUNK_H) * DSIG_SLHDSA_LENMAX };
    uint8_t adrs[MAXC][32];
    uint8_t vals[MAXC * DSIG_SLHDSA_NMAX];
    /* Zero-initialised: GCC cannot see that the loops below fill the first `total` entries. */
    const uint8_t *ap[MAXC] = {0}, *sk[MAXC] = {0};
    uint8_t *vp[MAXC] = {0}, *rec[MAXC] = {0};
    uint32_t start[MAXC] = {0}, end[MAXC] = {0}, rec_at[MAXC] = {0};
    size_t total = (size_t)cnt * len;
    int want_sig = 0;

    /* PRF: skADRS = WOTS_PRF, keypair = leaf, chain = i, hash = 0 (Algorithm 6 lines 1-6). */
    for (unsigned l = 0; l < cnt; l++)
        for (unsigned i = 0; i < len; i++) {
            size_t x = (size_t)l * len + i;
            memcpy(adrs[x], arg->adrs, 32);
            slh_set_type(adrs[x], SLH_WOTS_PRF);
            slh_set_keypair(adrs[x], first + l);
            slh_set_chain(adrs[x], i);
            ap[x] = adrs[x];
            sk[x] = c->sk_seed;
            vp[x] = vals + x * n;
        }
    p->ops->f_many(c, ap, sk, vp, total);

    /* Chains: ADRS = WOTS_HASH, keypair, chain (lines 7-8); the signed leaf records its digits. */
    for (unsigned l = 0; l < cnt; l++) {
        int signing = arg->digits != NULL && first + l == arg->sign_leaf;
        want_sig |= signing;
        for (unsigned i = 0; i < len; i++) {
            size_t x = (size_t)l * len + i;
            slh_set_type(adrs[x], SLH_WOTS_HASH);
            slh_set_keypair(adrs[x], first + l);
            slh_set_chain(adrs[x], i);
            start[x] = 0;
            end[x] = DSIG_SLHDSA_W - 1;
            rec[x] = signing ? arg->wots_sig + (size_t)i * n : NULL;
            rec_at[x] = signing ? arg->digits[i] : 0;
        }
    }
    chains_run(c, adrs, vals, start, end, total, want_sig ? rec : NULL, rec_at, ap, vp);

    /* wotspkADRS = WOTS_PK with the keypair; pk = T_len(tmp) (lines 10-13). */
    for (unsigned l = 0; l < cnt; l++) {
        uint8_t pkadrs[32];
        memcpy(pkadrs, arg->adrs, 32);
        slh_set_type(pkadrs, SLH_WOTS_PK);
        slh_set_keypair(pkadrs, first + l);
        p->ops->t(c, pkadrs, vals + (size_t)l * len * n, (size_t)len * n, out + (size_t)l * n);
    }
    dsig_memzero(vals, sizeof vals);
}

/* What fors_leaves needs: the FORS ADRS (tree address, keypair). */
typedef struct fors_arg {
    const uint8_t *adrs;
} fors_arg;

/* @spec FIPS 205 Algorithm 14 fors_skGen + Algorithm 15 fors_node (z = 0) for cnt leaves with
 * global FORS leaf indices first..first+cnt-1 (tree i, leaf j has index i·2^a + j). */
static void fors_leaves(const dsig_slhdsa_ctx *c, void *argp, uint32_t first, unsigned cnt,
                        uint8_t *out)
{
    const dsig_slhdsa_params *p = c->p;
    const fors_arg *arg = argp;
    enum { MAXC = 1u << FORS_CHUNK_H };
    uint8_t adrs[MAXC][32];
    const uint8_t *ap[MAXC] = {0}, *sk[MAXC] = {0}; /* initialised for GCC's flow analysis */
    uint8_t *vp[MAXC] = {0};
    uint32_t kp = ((uint32_t)arg->adrs[20] << 24) | ((uint32_t)arg->adrs[21] << 16) |
                  ((uint32_t)arg->adrs[22] << 8) | arg->adrs[23];
    for (unsigned i = 0; i < cnt; i++) {
        memcpy(adrs[i], arg->adrs, 32);
        slh_set_type(adrs[i], SLH_FORS_PRF);
        slh_set_keypair(adrs[i], kp);
        slh_set_index(adrs[i], first + i);
        ap[i] = adrs[i];
        sk[i] = c->sk_seed;
        vp[i] = out + (size_t)i * p->n;
    }
    p->ops->f_many(c, ap, sk, vp, cnt);
    for (unsigned i = 0; i < cnt; i++) {
        slh_set_type(adrs[i], SLH_FORS_TREE);
        slh_set_keypair(adrs[i], kp);
        slh_set_height(adrs[i], 0);
        slh_set_index(adrs[i], first + i);
    }
    p->ops->f_many(c, ap, (const uint8_t *const *)vp, vp, cnt);
}

/*
 * Reduce cnt nodes (a power of two) at height z, local indices lo..lo+cnt-1, held in buf, to their
 * common ancestor (left in buf[0..n)). Node (z', i) is hashed with tree index (base >> z') + i (FORS
 * trees sit side by side: base = tree·2^a). Records the authentication path of local leaf idx at
 * every level below `height` whose sibling is in range.
 */
static void reduce(const dsig_slhdsa_ctx *c, uint8_t *buf, unsigned cnt, unsigned z, uint32_t lo,
                   uint32_t base, uint32_t idx, unsigned height, const uint8_t node_adrs[32],
                   uint8_t *auth)
{
    unsigned n = c->p->n;
    uint8_t adrs[TOPS_MAX / 2 > (1u << FORS_CHUNK_H) / 2 ? TOPS_MAX / 2 : (1u << FORS_CHUNK_H) / 2][32];
    uint8_t tmp[(TOPS_MAX / 2) * DSIG_SLHDSA_NMAX];
    const uint8_t *ap[TOPS_MAX / 2], *in[TOPS_MAX / 2];
    uint8_t *op[TOPS_MAX / 2];
    for (;;) {
        if (auth != NULL && z < height) {
            uint32_t sib = (idx >> z) ^ 1;
            if (sib >= lo && sib < lo + cnt)
                memcpy(auth + (size_t)z * n, buf + (size_t)(sib - lo) * n, n);
        }
        if (cnt == 1)
            break;
        unsigned half = cnt / 2;
        for (unsigned i = 0; i < half; i++) {
            memcpy(adrs[i], node_adrs, 32);
            slh_set_height(adrs[i], z + 1);
            slh_set_index(adrs[i], (base >> (z + 1)) + (lo >> 1) + i);
            ap[i] = adrs[i];
            in[i] = buf + (size_t)2 * i * n;
            op[i] = tmp + (size_t)i * n;
        }
        c->p->ops->h_many(c, ap, in, op, half);
        memcpy(buf, tmp, (size_t)half * n);
        cnt = half;
        lo >>= 1;
        z++;
    }
}

/*
 * @spec FIPS 205 Algorithm 9 xmss_node / Algorithm 15 fors_node (root of a tree of height
 * `height`) and Algorithm 10 lines 1-4 / Algorithm 16 lines 4-7 (authentication path of leaf idx):
 * idx is local to the tree (0..2^height-1); leaves come from gen in chunks of 2^chunk_h, each chunk is reduced to its root, then the chunk
 * roots are reduced. auth (height·n bytes) may be NULL (key generation).
 */
static void merkle(const dsig_slhdsa_ctx *c, unsigned height, unsigned chunk_h, uint32_t base,
                   uint32_t idx, leaf_fn gen, void *arg, const uint8_t node_adrs[32], uint8_t *auth,
                   uint8_t *root)
{
    unsigned n = c->p->n;
    if (chunk_h > height)
        chunk_h = height;
    unsigned chunk = 1u << chunk_h, nch = 1u << (height - chunk_h);
    uint8_t buf[(1u << FORS_CHUNK_H) * DSIG_SLHDSA_NMAX];
    uint8_t tops[TOPS_MAX * DSIG_SLHDSA_NMAX];
    for (unsigned j = 0; j < nch; j++) {
        gen(c, arg, base + j * chunk, chunk, buf);
        reduce(c, buf, chunk, 0, j * chunk, base, idx, height, node_adrs, auth);
        memcpy(tops + (size_t)j * n, buf, n);
    }
    reduce(c, tops, nch, chunk_h, 0, base, idx, height, node_adrs, auth);
    memcpy(root, tops, n);
    dsig_memzero(buf, sizeof buf);
}

/* @spec FIPS 205 Algorithm 10 xmss_sign (+ the root Algorithm 11 would recompute): WOTS+ signature
 * of the n-byte msg at leaf idx, then the authentication path; root of the tree to *root. */
static void xmss_sign(const dsig_slhdsa_ctx *c, const uint8_t tree_adrs[32], uint32_t idx,
                      const uint8_t *msg, uint8_t *sig, uint8_t *root)
{
    const dsig_slhdsa_params *p = c->p;
    /* msg (PK_FORS for layer 0, else the root of layer j-1) comes from SK.seed but is public: every
     * verifier recomputes it from the signature (Algorithms 17 and 11). Its WOTS+ digits steer which
     * chain step is recorded (ctgrind, tests/ct). */
    DSIG_CT_DECLASSIFY(msg, p->n);
    uint32_t digits[DSIG_SLHDSA_LENMAX];
    wots_digits(p, msg, digits);
    xmss_arg arg = {.adrs = tree_adrs, .sign_leaf = idx, .digits = digits, .wots_sig = sig};
    uint8_t node_adrs[32];
    memcpy(node_adrs, tree_adrs, 32);
    slh_set_type(node_adrs, SLH_TREE);
    merkle(c, p->hp, XMSS_CHUNK_H, 0, idx, xmss_leaves, &arg, node_adrs,
           sig + (size_t)p->len * p->n, root);
}

/* @spec FIPS 205 Algorithm 11 xmss_pkFromSig (with Algorithm 8 wots_pkFromSig): the root implied
 * by an XMSS signature on msg at leaf idx. */
static void xmss_pk_from_sig(const dsig_slhdsa_ctx *c, const uint8_t tree_adrs[32], uint32_t idx,
                             const uint8_t *sig, const uint8_t *msg, uint8_t *root)
{
    const dsig_slhdsa_params *p = c->p;
    unsigned n = p->n, len = p->len;
    uint32_t digits[DSIG_SLHDSA_LENMAX], end[DSIG_SLHDSA_LENMAX];
    uint8_t adrs[DSIG_SLHDSA_LENMAX][32];
    uint8_t vals[DSIG_SLHDSA_LENMAX * DSIG_SLHDSA_NMAX];
    const uint8_t *ap[DSIG_SLHDSA_LENMAX];
    uint8_t *vp[DSIG_SLHDSA_LENMAX];
    wots_digits(p, msg, digits);
    memcpy(vals, sig, (size_t)len * n);
    for (unsigned i = 0; i < len; i++) {
        memcpy(adrs[i], tree_adrs, 32);
        slh_set_type(adrs[i], SLH_WOTS_HASH);
        slh_set_keypair(adrs[i], idx);
        slh_set_chain(adrs[i], i);
        end[i] = DSIG_SLHDSA_W - 1;
    }
    chains_run(c, adrs, vals, digits, end, len, NULL, NULL, ap, vp);
    uint8_t a[32], node[2 * DSIG_SLHDSA_NMAX], out[DSIG_SLHDSA_NMAX];
    memcpy(a, tree_adrs, 32);
    slh_set_type(a, SLH_WOTS_PK);
    slh_set_keypair(a, idx);
    p->ops->t(c, a, vals, (size_t)len * n, node);

    /* Climb the authentication path (Algorithm 11 lines 6-17). */
    const uint8_t *auth = sig + (size_t)len * n;
    memcpy(a, tree_adrs, 32);
    slh_set_type(a, SLH_TREE);
    for (unsigned k = 0; k < p->hp; k++) {
        const uint8_t *ap1[1] = {a}, *in1[1] = {node};
        uint8_t *out1[1] = {out};
        slh_set_height(a, k + 1);
        slh_set_index(a, idx >> (k + 1));
        if (((idx >> k) & 1) == 0) {
            memcpy(node + n, auth + (size_t)k * n, n);
        } else {
            memmove(node + n, node, n);
            memcpy(node, auth + (size_t)k * n, n);
        }
        p->ops->h_many(c, ap1, in1, out1, 1);
        memcpy(node, out, n);
    }
    memcpy(root, node, n);
}

/* The digest split of Algorithm 19 lines 7-12 / Algorithm 20 lines 6-11: md, idx_tree, idx_leaf. */
static void split_digest(const dsig_slhdsa_params *p, const uint8_t *digest, uint64_t *idx_tree,
                         uint32_t *idx_leaf)
{
    size_t md_len = (p->k * p->a + 7) / 8;
    unsigned tree_bits = p->h - p->hp;
    size_t tree_len = (tree_bits + 7) / 8, leaf_len = (p->hp + 7) / 8;
    uint64_t t = 0;
    uint32_t l = 0;
    for (size_t i = 0; i < tree_len; i++)
        t = (t << 8) | digest[md_len + i];
    for (size_t i = 0; i < leaf_len; i++)
        l = (l << 8) | digest[md_len + tree_len + i];
    if (tree_bits < 64)
        t &= ((uint64_t)1 << tree_bits) - 1;
    *idx_tree = t;
    *idx_leaf = l & ((1u << p->hp) - 1);
}

/* @spec FIPS 205 Algorithm 16 fors_sign (+ the roots Algorithm 17 would recompute) and Algorithm 17
 * lines 19-22: FORS signature of md into sig, the FORS public key into pk. adrs: FORS_TREE type with
 * tree address and keypair set. */
static void fors_sign(const dsig_slhdsa_ctx *c, const uint8_t *md, const uint8_t adrs[32],
                      uint8_t *sig, uint8_t *pk)
{
    const dsig_slhdsa_params *p = c->p;
    unsigned n = p->n, a = p->a;
    uint32_t idx[DSIG_SLHDSA_KMAX];
    uint8_t roots[DSIG_SLHDSA_KMAX * DSIG_SLHDSA_NMAX];
    fors_arg arg = {.adrs = adrs};
    base_2b(md, a, p->k, idx);
    for (unsigned i = 0; i < p->k; i++) {
        uint32_t base = i << a;
        /* The revealed secret (Algorithm 16 line 3) is the leaf's PRF output. */
        uint8_t skadrs[32];
        const uint8_t *ap1[1] = {skadrs}, *in1[1] = {c->sk_seed};
        uint8_t *out1[1] = {sig};
        memcpy(skadrs, adrs, 32);
        slh_set_type(skadrs, SLH_FORS_PRF);
        memcpy(skadrs + 20, adrs + 20, 4);
        slh_set_index(skadrs, base + idx[i]);
        p->ops->f_many(c, ap1, in1, out1, 1);
        merkle(c, a, FORS_CHUNK_H, base, idx[i], fors_leaves, &arg, adrs, sig + n,
               roots + (size_t)i * n);
        sig += (size_t)(1 + a) * n;
    }
    uint8_t pkadrs[32];
    memcpy(pkadrs, adrs, 32);
    slh_set_type(pkadrs, SLH_FORS_ROOTS);
    memcpy(pkadrs + 20, adrs + 20, 4);
    p->ops->t(c, pkadrs, roots, (size_t)p->k * n, pk);
}

/* @spec FIPS 205 Algorithm 17 fors_pkFromSig. */
static void fors_pk_from_sig(const dsig_slhdsa_ctx *c, const uint8_t *sig, const uint8_t *md,
                             const uint8_t adrs[32], uint8_t *pk)
{
    const dsig_slhdsa_params *p = c->p;
    unsigned n = p->n, a = p->a;
    uint32_t idx[DSIG_SLHDSA_KMAX];
    uint8_t roots[DSIG_SLHDSA_KMAX * DSIG_SLHDSA_NMAX];
    uint8_t leaf_adrs[DSIG_SLHDSA_KMAX][32];
    const uint8_t *ap[DSIG_SLHDSA_KMAX], *in[DSIG_SLHDSA_KMAX];
    uint8_t *op[DSIG_SLHDSA_KMAX];
    uint8_t node[DSIG_SLHDSA_KMAX][2 * DSIG_SLHDSA_NMAX];
    base_2b(md, a, p->k, idx);
    /* Leaves of all k trees in one batch, then each level of all k trees in one batch. */
    for (unsigned i = 0; i < p->k; i++) {
        memcpy(leaf_adrs[i], adrs, 32);
        slh_set_height(leaf_adrs[i], 0);
        slh_set_index(leaf_adrs[i], (i << a) + idx[i]);
        ap[i] = leaf_adrs[i];
        in[i] = sig + (size_t)i * (1 + a) * n;
        op[i] = roots + (size_t)i * n;
    }
    p->ops->f_many(c, ap, in, op, p->k);
    for (unsigned j = 0; j < a; j++) {
        for (unsigned i = 0; i < p->k; i++) {
            const uint8_t *auth = sig + (size_t)i * (1 + a) * n + n + (size_t)j * n;
            uint32_t gi = (i << a) + idx[i];
            slh_set_height(leaf_adrs[i], j + 1);
            slh_set_index(leaf_adrs[i], gi >> (j + 1));
            if (((idx[i] >> j) & 1) == 0) {
                memcpy(node[i], roots + (size_t)i * n, n);
                memcpy(node[i] + n, auth, n);
            } else {
                memcpy(node[i], auth, n);
                memcpy(node[i] + n, roots + (size_t)i * n, n);
            }
            in[i] = node[i];
        }
        p->ops->h_many(c, ap, in, op, p->k);
    }
    uint8_t pkadrs[32];
    memcpy(pkadrs, adrs, 32);
    slh_set_type(pkadrs, SLH_FORS_ROOTS);
    memcpy(pkadrs + 20, adrs + 20, 4);
    p->ops->t(c, pkadrs, roots, (size_t)p->k * n, pk);
}

/* @spec FIPS 205 Algorithm 18 slh_keygen_internal: PK.root = xmss_node(SK.seed, 0, h', PK.seed,
 * ADRS with layer d-1). */
int dsig_slhdsa_keygen_internal(const dsig_slhdsa_params *p, const uint8_t *sk_seed,
                                const uint8_t *sk_prf, const uint8_t *pk_seed, uint8_t *pk,
                                uint8_t *sk)
{
    if (p == NULL || sk_seed == NULL || sk_prf == NULL || pk_seed == NULL || pk == NULL || sk == NULL)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA keygen: NULL argument");
    unsigned n = p->n;
    dsig_slhdsa_ctx c;
    uint8_t adrs[32] = {0}, root[DSIG_SLHDSA_NMAX];
    dsig_slhdsa_ctx_init(&c, p, pk_seed, sk_seed);
    slh_set_layer(adrs, p->d - 1);
    xmss_arg arg = {.adrs = adrs, .sign_leaf = 0, .digits = NULL, .wots_sig = NULL};
    uint8_t node_adrs[32];
    memcpy(node_adrs, adrs, 32);
    slh_set_type(node_adrs, SLH_TREE);
    merkle(&c, p->hp, XMSS_CHUNK_H, 0, 0, xmss_leaves, &arg, node_adrs, NULL, root);
    dsig_slhdsa_ctx_wipe(&c);
    /* sk_seed/sk_prf/pk_seed may alias sk: move in an order that never overwrites unread input. */
    memmove(sk + 2 * n, pk_seed, n);
    memcpy(sk + 3 * n, root, n);
    memmove(sk + n, sk_prf, n);
    memmove(sk, sk_seed, n);
    memcpy(pk, sk + 2 * n, 2 * (size_t)n);
    return DSIG_OK;
}

/* @spec FIPS 205 Algorithm 19 slh_sign_internal lines 6-16 and Algorithm 12 ht_sign. */
int dsig_slhdsa_sign_digest(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *r,
                            const uint8_t *digest, uint8_t *sig)
{
    if (p == NULL || sk == NULL || r == NULL || digest == NULL || sig == NULL)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA sign: NULL argument");
    unsigned n = p->n;
    /* R is published as the signature's first n bytes, and the digest is H_msg of R, the public key
     * and M, which every verifier recomputes: both are public although R came from SK.prf. Only
     * from here on do branches and indices follow them (ctgrind, tests/ct). */
    DSIG_CT_DECLASSIFY(r, n);
    DSIG_CT_DECLASSIFY(digest, p->m);
    uint64_t idx_tree;
    uint32_t idx_leaf;
    split_digest(p, digest, &idx_tree, &idx_leaf);
    dsig_slhdsa_ctx c;
    dsig_slhdsa_ctx_init(&c, p, sk + 2 * n, sk);
    memmove(sig, r, n);
    uint8_t *out = sig + n;

    uint8_t adrs[32] = {0}, pk_fors[DSIG_SLHDSA_NMAX], root[DSIG_SLHDSA_NMAX];
    slh_set_tree(adrs, idx_tree);
    slh_set_type(adrs, SLH_FORS_TREE);
    slh_set_keypair(adrs, idx_leaf);
    fors_sign(&c, digest, adrs, out, pk_fors);
    out += (size_t)p->k * (1 + p->a) * n;

    /* Hypertree (Algorithm 12): layer j signs the root of layer j-1 (layer 0 signs PK_FORS). */
    const uint8_t *msg = pk_fors;
    for (unsigned j = 0; j < p->d; j++) {
        uint8_t tree_adrs[32] = {0};
        slh_set_layer(tree_adrs, j);
        slh_set_tree(tree_adrs, idx_tree);
        xmss_sign(&c, tree_adrs, idx_leaf, msg, out, root);
        out += (size_t)(p->len + p->hp) * n;
        msg = root;
        idx_leaf = (uint32_t)(idx_tree & ((1u << p->hp) - 1));
        idx_tree >>= p->hp;
    }
    dsig_slhdsa_ctx_wipe(&c);
    return DSIG_OK;
}

/* @spec FIPS 205 Algorithm 20 slh_verify_internal lines 4-13 and Algorithm 13 ht_verify. */
int dsig_slhdsa_verify_digest(const dsig_slhdsa_params *p, const uint8_t *pk, const uint8_t *sig,
                              const uint8_t *digest)
{
    if (p == NULL || pk == NULL || sig == NULL || digest == NULL)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA verify: NULL argument");
    unsigned n = p->n;
    uint64_t idx_tree;
    uint32_t idx_leaf;
    split_digest(p, digest, &idx_tree, &idx_leaf);
    dsig_slhdsa_ctx c;
    dsig_slhdsa_ctx_init(&c, p, pk, NULL);
    const uint8_t *in = sig + n;

    uint8_t adrs[32] = {0}, node[DSIG_SLHDSA_NMAX];
    slh_set_tree(adrs, idx_tree);
    slh_set_type(adrs, SLH_FORS_TREE);
    slh_set_keypair(adrs, idx_leaf);
    fors_pk_from_sig(&c, in, digest, adrs, node);
    in += (size_t)p->k * (1 + p->a) * n;

    for (unsigned j = 0; j < p->d; j++) {
        uint8_t tree_adrs[32] = {0};
        slh_set_layer(tree_adrs, j);
        slh_set_tree(tree_adrs, idx_tree);
        xmss_pk_from_sig(&c, tree_adrs, idx_leaf, in, node, node);
        in += (size_t)(p->len + p->hp) * n;
        idx_leaf = (uint32_t)(idx_tree & ((1u << p->hp) - 1));
        idx_tree >>= p->hp;
    }
    dsig_slhdsa_ctx_wipe(&c);
    if (!dsig_ct_equal(node, pk + n, n))
        return dsig_fail(DSIG_E_VERIFY, "SLH-DSA: signature does not verify (hypertree root differs "
                                        "from PK.root)");
    return DSIG_OK;
}
