/*
 * src/pq/lms/hss_key.c — the HSS private key (RFC 8554 §6): the levels' working trees, child trees
 * derived from their parent leaf (cisco/hash-sigs "Secret Method 2") and signed by it, the next child
 * tree built a slice per signature, and streaming signing.
 */
#include <pthread.h>
#include <string.h>

#include "core/bytes.h"
#include "core/ct.h"
#include "core/internal.h"
#include "dsig/mem.h"
#include "pq/lms/lms_internal.h"

_Thread_local uint64_t dsig_lms_test_child_signs;

struct dsig_hss_priv {
    pthread_mutex_t mu;              /* guards the trees (child replacement, subtree cache) */
    unsigned L;
    unsigned shift[DSIG_HSS_L_MAX];  /* bits of the global index below level i */
    unsigned htot;
    const dsig_lms_params *lp[DSIG_HSS_L_MAX];
    const dsig_lmots_params *op[DSIG_HSS_L_MAX];
    dsig_lms_key lv[DSIG_HSS_L_MAX];
    int built[DSIG_HSS_L_MAX];
    uint64_t prefix[DSIG_HSS_L_MAX]; /* level i >= 1: index >> shift[i-1] it was built for */
    uint8_t *psig[DSIG_HSS_L_MAX];   /* level i >= 1: LMS signature of lv[i].pub by level i-1 */
    size_t psig_len[DSIG_HSS_L_MAX];
    /* Level i >= 1: the NEXT child tree (prefix nx_prefix[i] = prefix[i] + 1), built a slice per
     * signature while lv[i] is in use; nx_psig[i] is its parent's signature once nx_signed[i]. At the
     * roll-over the two swap (buffers recycled). */
    dsig_lms_key nx[DSIG_HSS_L_MAX];
    int nx_on[DSIG_HSS_L_MAX], nx_signed[DSIG_HSS_L_MAX];
    uint64_t nx_prefix[DSIG_HSS_L_MAX];
    uint8_t *nx_psig[DSIG_HSS_L_MAX];
};

/* The child (SEED, I) that leaf q of `parent` signs: cisco/hash-sigs "Secret Method 2". */
static void child_seed_I(const dsig_lms_key *parent, uint32_t q, uint8_t *seed, uint8_t *I)
{
    const unsigned n = parent->op->n;
    uint8_t t[DSIG_LMS_N_MAX];
    memcpy(seed, parent->seed, n);
    dsig_lms_chain(parent->op->shake, n, parent->I, q, 0xfffe, seed, 0xff, 0x100);
    memcpy(t, parent->seed, n);
    dsig_lms_chain(parent->op->shake, n, parent->I, q, 0xffff, t, 0xff, 0x100);
    memcpy(I, t, DSIG_LMS_I_LEN);
    dsig_memzero(t, sizeof t);
}

/* @spec RFC 8554 §6.2 (signing a child public key): the LMS signature by leaf pq of `parent` of
 * child->pub into *psig (allocated on first use), randomizer derived (0xfffd) so that signing it
 * again after a restart yields the identical one-time signature. */
static int sign_child(const dsig_hss_priv *k, unsigned i, dsig_lms_key *parent, uint32_t pq,
                      const dsig_lms_key *child, uint8_t **psig)
{
    uint8_t c[DSIG_LMS_N_MAX];
    if (!*psig) {
        *psig = dsig_malloc(dsig_lms_sig_len(k->lp[i - 1], k->op[i - 1]));
        if (!*psig)
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    dsig_lms_test_child_signs++;
    dsig_lms_derive_c(parent, pq, c);
    return dsig_lms_sign(parent, pq, c, child->pub, dsig_lms_key_pub_len(child), *psig);
}

/* Leaf of the level-(i-1) tree that signs the level-i tree of prefix pre. */
static inline uint32_t parent_leaf(const dsig_hss_priv *k, unsigned i, uint64_t pre)
{
    return (uint32_t)(pre & ((1u << k->lp[i - 1]->h) - 1));
}

/* Make nx[i] the current level i (its tree complete, signed by lv[i-1], which is already current):
 * swap the structures so the retired tree's buffers are reused by the next one; wipe its seed. */
static int promote_next(dsig_hss_priv *k, unsigned i)
{
    while (!dsig_lms_key_complete(&k->nx[i])) /* only after a jump: the slices normally finished it */
        dsig_lms_key_step(&k->nx[i]);
    if (!k->nx_signed[i]) {
        int rc = sign_child(k, i, &k->lv[i - 1], parent_leaf(k, i, k->nx_prefix[i]), &k->nx[i],
                            &k->nx_psig[i]);
        if (rc)
            return rc;
    }
    dsig_lms_key t = k->lv[i];
    k->lv[i] = k->nx[i];
    k->nx[i] = t;
    dsig_memzero(k->nx[i].seed, sizeof k->nx[i].seed);
    uint8_t *p = k->psig[i];
    k->psig[i] = k->nx_psig[i];
    k->nx_psig[i] = p;
    k->psig_len[i] = dsig_lms_sig_len(k->lp[i - 1], k->op[i - 1]);
    k->prefix[i] = k->nx_prefix[i];
    k->built[i] = 1;
    k->nx_on[i] = k->nx_signed[i] = 0;
    return DSIG_OK;
}

/* @spec RFC 8554 §6.2 (key replacement): make levels 1..L-1 those of global `index`, top down. A
 * level that rolls over to its next tree takes the precomputed one; after a jump (or at load) the
 * child tree is built here and signed by its parent leaf (derived C: the same bytes every time). */
static int prepare(dsig_hss_priv *k, uint64_t index)
{
    for (unsigned i = 1; i < k->L; i++) {
        uint64_t pre = index >> k->shift[i - 1];
        if (k->built[i] && k->prefix[i] == pre)
            continue;
        if (k->nx_on[i] && k->nx_prefix[i] == pre) {
            int rc = promote_next(k, i);
            if (rc)
                return rc;
            continue;
        }
        uint32_t pq = parent_leaf(k, i, pre);
        uint8_t seed[DSIG_LMS_N_MAX], I[DSIG_LMS_I_LEN];
        k->built[i] = 0;
        child_seed_I(&k->lv[i - 1], pq, seed, I);
        int rc = dsig_lms_key_begin(&k->lv[i], k->lp[i], k->op[i], I, seed);
        dsig_memzero(seed, sizeof seed);
        if (rc)
            return rc;
        while (!dsig_lms_key_complete(&k->lv[i]))
            dsig_lms_key_step(&k->lv[i]);
        rc = sign_child(k, i, &k->lv[i - 1], pq, &k->lv[i], &k->psig[i]);
        if (rc)
            return rc;
        k->psig_len[i] = dsig_lms_sig_len(k->lp[i - 1], k->op[i - 1]);
        k->prefix[i] = pre;
        k->built[i] = 1;
    }
    return DSIG_OK;
}

/*
 * After prepare(index): advance every level's next child tree by the slice that `index` owes, top
 * down. Level i's next tree has 2^h_i leaves to compute while the current one serves 2^shift[i-1]
 * signatures, so position pos in that lifetime owes (pos >> shift[i]) + 1 leaves: the bottom level one
 * leaf per signature, level i one leaf per 2^shift[i] signatures — never more than one leaf per level
 * per signature in sequence (a jump ahead catches up here). A complete next tree is signed by its
 * parent: the current parent tree, or, when the parent rolls over at the same time, the parent's next
 * tree (complete before it, being one level up). Failures are not fatal to the signature being made:
 * the next tree is dropped and the roll-over rebuilds it (prepare) as before.
 */
static void advance(dsig_hss_priv *k, uint64_t index)
{
    for (unsigned i = 1; i < k->L; i++) {
        const uint64_t pre = index >> k->shift[i - 1], npre = pre + 1;
        if (npre >> (k->htot - k->shift[i - 1])) /* the last tree of this level: none follows */
            continue;
        const unsigned hp = k->lp[i - 1]->h;
        const int same_parent = (npre >> hp) == (pre >> hp);
        dsig_lms_key *parent = same_parent ? &k->lv[i - 1] : &k->nx[i - 1];
        if (!same_parent && !(k->nx_on[i - 1] && k->nx_prefix[i - 1] == (npre >> hp)))
            continue; /* not reachable in sequence (i - 1 >= 1 and advanced just above) */
        const uint32_t pq = parent_leaf(k, i, npre);
        if (!(k->nx_on[i] && k->nx_prefix[i] == npre)) {
            uint8_t seed[DSIG_LMS_N_MAX], I[DSIG_LMS_I_LEN];
            child_seed_I(parent, pq, seed, I);
            int rc = dsig_lms_key_begin(&k->nx[i], k->lp[i], k->op[i], I, seed);
            dsig_memzero(seed, sizeof seed);
            k->nx_on[i] = rc == DSIG_OK;
            k->nx_signed[i] = 0;
            k->nx_prefix[i] = npre;
            if (rc)
                continue;
        }
        const uint64_t pos = index & (((uint64_t)1 << k->shift[i - 1]) - 1);
        const uint64_t full = (uint64_t)1 << k->lp[i]->h;
        uint64_t owed = (pos >> k->shift[i]) + 1;
        if (owed > full)
            owed = full;
        while (k->nx[i].done < owed)
            dsig_lms_key_step(&k->nx[i]);
        if (dsig_lms_key_complete(&k->nx[i]) && !k->nx_signed[i] && dsig_lms_key_complete(parent))
            k->nx_signed[i] = sign_child(k, i, parent, pq, &k->nx[i], &k->nx_psig[i]) == DSIG_OK;
    }
}

int dsig_hss_priv_new(dsig_hss_priv **out, unsigned L, const uint32_t *lms_types,
                      const uint32_t *ots_types, const uint8_t *seed, const uint8_t *I, uint64_t next)
{
    *out = NULL;
    if (L < 1 || L > DSIG_HSS_L_MAX)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS: L = %u levels, must be 1..8", L);
    dsig_hss_priv *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    pthread_mutex_init(&k->mu, NULL);
    k->L = L;
    for (unsigned i = 0; i < L; i++) {
        k->lp[i] = dsig_lms_params_by_type(lms_types[i]);
        k->op[i] = dsig_lmots_params_by_type(ots_types[i]);
        if (!k->lp[i] || !k->op[i] || !dsig_lms_pair_ok(k->lp[i], k->op[i]) ||
            k->lp[i]->shake != k->lp[0]->shake || k->lp[i]->m != k->lp[0]->m) {
            dsig_hss_priv_free(k);
            return dsig_fail(DSIG_E_ARG, "HSS-LMS: level %u: LMS type 0x%x / LM-OTS type 0x%x is not a "
                                         "known pair using the top level's hash and length", i + 1,
                             lms_types[i], ots_types[i]);
        }
        k->htot += k->lp[i]->h;
    }
    if (k->htot > 63) {
        dsig_hss_priv_free(k);
        return dsig_fail(DSIG_E_ARG, "HSS-LMS: total height %u exceeds 63 (a 64-bit counter)", L);
    }
    unsigned below = k->htot;
    for (unsigned i = 0; i < L; i++) {
        below -= k->lp[i]->h;
        k->shift[i] = below;
    }
    int rc = dsig_lms_key_build(&k->lv[0], k->lp[0], k->op[0], I, seed);
    if (rc == DSIG_OK && next < dsig_hss_priv_capacity(k)) {
        rc = prepare(k, next);
        /* The next trees as signing `next` leaves them (loading may cost a tree per level): the
         * signatures from `next` on then do only their own slices. */
        if (rc == DSIG_OK)
            advance(k, next);
    }
    if (rc) {
        dsig_hss_priv_free(k);
        return rc;
    }
    *out = k;
    return DSIG_OK;
}

void dsig_hss_priv_free(dsig_hss_priv *k)
{
    if (!k)
        return;
    for (unsigned i = 0; i < DSIG_HSS_L_MAX; i++) {
        dsig_lms_key_clear(&k->lv[i]);
        dsig_lms_key_clear(&k->nx[i]);
        dsig_xfree(k->psig[i], 0);
        dsig_xfree(k->nx_psig[i], 0);
    }
    pthread_mutex_destroy(&k->mu);
    dsig_xfree(k, sizeof *k);
}

size_t dsig_hss_priv_pub(const dsig_hss_priv *k, uint8_t *pub)
{
    dsig_store_be32(pub, k->L);
    memcpy(pub + 4, k->lv[0].pub, dsig_lms_key_pub_len(&k->lv[0]));
    return 4 + dsig_lms_key_pub_len(&k->lv[0]);
}

uint64_t dsig_hss_priv_capacity(const dsig_hss_priv *k)
{
    return (uint64_t)1 << k->htot;
}

size_t dsig_hss_priv_sig_len(const dsig_hss_priv *k)
{
    size_t len = 4;
    for (unsigned i = 0; i < k->L; i++) {
        len += dsig_lms_sig_len(k->lp[i], k->op[i]);
        if (i + 1 < k->L)
            len += dsig_lms_pub_len(k->lp[i + 1]);
    }
    return len;
}

unsigned dsig_hss_priv_levels(const dsig_hss_priv *k, uint32_t *lms_types, uint32_t *ots_types)
{
    for (unsigned i = 0; i < k->L; i++) {
        if (lms_types)
            lms_types[i] = k->lp[i]->type;
        if (ots_types)
            ots_types[i] = k->op[i]->type;
    }
    return k->L;
}

const uint8_t *dsig_hss_priv_seed(const dsig_hss_priv *k, size_t *n)
{
    *n = k->lp[0]->m;
    return k->lv[0].seed;
}

const uint8_t *dsig_hss_priv_I(const dsig_hss_priv *k)
{
    return k->lv[0].I;
}

int dsig_hss_sign_init(dsig_hss_sign_ctx *c, dsig_hss_priv *k, uint64_t index, const uint8_t *rand_c)
{
    memset(c, 0, sizeof *c);
    if (index >= dsig_hss_priv_capacity(k))
        return dsig_fail(DSIG_E_EXHAUSTED, "HSS-LMS: index %llu is beyond the key's %llu signatures",
                         (unsigned long long)index, (unsigned long long)dsig_hss_priv_capacity(k));
    size_t len = dsig_hss_priv_sig_len(k);
    c->sig = dsig_malloc(len);
    if (!c->sig)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    c->sig_len = len;
    pthread_mutex_lock(&k->mu);
    int rc = prepare(k, index);
    if (rc) {
        pthread_mutex_unlock(&k->mu);
        dsig_hss_sign_clear(c);
        return rc;
    }
    const unsigned L = k->L;
    dsig_lms_key *b = &k->lv[L - 1];
    size_t off = 4;
    dsig_store_be32(c->sig, L - 1);
    for (unsigned i = 1; i < L; i++) {
        memcpy(c->sig + off, k->psig[i], k->psig_len[i]);
        off += k->psig_len[i];
        memcpy(c->sig + off, k->lv[i].pub, dsig_lms_key_pub_len(&k->lv[i]));
        off += dsig_lms_key_pub_len(&k->lv[i]);
    }
    uint8_t C[DSIG_LMS_N_MAX];
    c->q = (uint32_t)(index & ((1u << b->lp->h) - 1));
    if (rand_c)
        memcpy(C, rand_c, b->op->n);
    else
        dsig_lms_derive_c(b, c->q, C);
    c->y_off = off + dsig_lms_sign_frame(b, c->q, C, c->sig + off);
    c->op = b->op;
    memcpy(c->I, b->I, DSIG_LMS_I_LEN);
    memcpy(c->seed, b->seed, b->op->n);
    /* This signature's slice of the next child trees (no whole tree inside one signature). */
    advance(k, index);
    pthread_mutex_unlock(&k->mu);
    dsig_lms_mesg_init(&c->h, c->op->shake, c->I, c->q, C, c->op->n);
    return DSIG_OK;
}

void dsig_hss_sign_update(dsig_hss_sign_ctx *c, const uint8_t *in, size_t len)
{
    dsig_lms_hash_update(&c->h, in, len);
}

int dsig_hss_sign_final(dsig_hss_sign_ctx *c)
{
    if (!c->sig || !c->op)
        return dsig_fail(DSIG_E_STATE, "HSS-LMS: sign context not initialized");
    uint8_t Q[DSIG_LMS_N_MAX];
    dsig_lms_hash_final(&c->h, Q, c->op->n);
    dsig_lmots_sign_q(c->op, c->I, c->q, c->seed, Q, c->sig + c->y_off);
    dsig_memzero(c->seed, sizeof c->seed);
    c->op = NULL;
    /* The signature is released: its y values are public from here on. */
    DSIG_CT_DECLASSIFY(c->sig, c->sig_len);
    return DSIG_OK;
}

void dsig_hss_sign_clear(dsig_hss_sign_ctx *c)
{
    dsig_xfree(c->sig, c->sig_len);
    dsig_memzero(c, sizeof *c);
}

int dsig_hss_sign(dsig_hss_priv *k, uint64_t index, const uint8_t *rand_c, const uint8_t *msg,
                  size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    dsig_hss_sign_ctx c;
    if (cap < dsig_hss_priv_sig_len(k))
        return dsig_fail(DSIG_E_BUFFER, "HSS-LMS: signature needs %zu bytes, buffer has %zu",
                         dsig_hss_priv_sig_len(k), cap);
    int rc = dsig_hss_sign_init(&c, k, index, rand_c);
    if (rc)
        return rc;
    dsig_hss_sign_update(&c, msg, len);
    rc = dsig_hss_sign_final(&c);
    if (rc == DSIG_OK) {
        memcpy(sig, c.sig, c.sig_len);
        *sig_len = c.sig_len;
    }
    dsig_hss_sign_clear(&c);
    return rc;
}
