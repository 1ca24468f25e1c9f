/*
 * src/hybrid/onetime.c — one-time key generation for a whole batch (per-key seeds, key expansion, all
 * chain levels), the Merkle tree, the Ed25519 root signature (under the derived root key), and the
 * background-plane batch message with its verification (docs/dsig-format.md §3, §6, §7).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "core/internal.h"
#include "hash/blake3.h"
#include "hybrid/hb_internal.h"

/* seed = BLAKE3-keyed(master, "DSig-hb-keyseed1" ‖ batch_seq u64le ‖ index u32le). @spec docs §3.1 */
void dsig_hb_key_seed(const uint8_t master_seed[DSIG_HB_SEED_BYTES], uint64_t batch_seq, uint32_t index,
                      uint8_t seed_out[DSIG_HB_SEED_BYTES])
{
    uint8_t blk[28];
    memcpy(blk, "DSig-hb-keyseed1", 16);
    dsig_store_le64(blk + 16, batch_seq);
    dsig_store_le32(blk + 24, index);
    dsig_blake3_hash_block(master_seed, blk, sizeof blk, seed_out, DSIG_HB_SEED_BYTES);
}

/* The shared allocation of a batch's keys: secret memory (src/core/secmem.c: out of core dumps and
 * swap, zero in a fork child) holding each key's memory at a 64-byte aligned offset. The header is
 * ordinary heap (it holds no secret). `refs` counts the keys not yet erased; the last erase releases
 * the region. */
typedef struct hb_slab {
    _Atomic uint32_t refs;
    dsig_secmem mem;
} hb_slab;

#define HB_ALIGN(x) (((x) + (size_t)63u) & ~(size_t)63u)

/* Drop one key's reference; release the region with the last one. */
static void hb_slab_release(hb_slab *sl)
{
    if (atomic_fetch_sub_explicit(&sl->refs, 1, memory_order_acq_rel) == 1) {
        /* Every key erased its own bytes before dropping its reference, and nothing else is written
         * in a slab (the gaps between keys stay zero): wiping the whole slab again would double the
         * erase traffic of signing (a 672 KB memset once per 128 signatures with the default set). */
        dsig_secmem_free_wiped(&sl->mem);
        dsig_xfree(sl, 0);
    }
}

/* Wipe a prepared key and release its memory. */
void dsig_hb_key_erase(dsig_hb_key *key)
{
    if (!key) return;
    if (key->mem) {
        dsig_memzero(key->mem, key->mem_len);
        if (key->slab)
            hb_slab_release(key->slab);
        else
            dsig_xfree(key->mem, key->mem_len);
    }
    dsig_memzero(key, sizeof *key);
}

/* Prefetch hints for a key's whole memory. Read intent: the signing thread only reads a key, and the
 * background thread that erases it afterwards (src/hybrid/signer.c, "Deferred erase") would otherwise
 * have to take every line back from this core. Into L2 (locality 1: PREFETCHT2 on x86), not L1: the
 * ~85 hints of a key then leave the L1 fill buffers to the signature being made, where a burst of L1
 * prefetches kept the caller waiting on them (measured −30 ns a signature, docs/benchmarks.md "sixth
 * pass"); the next signature's loads hit L2. */
void dsig_hb_key_prefetch(const dsig_hb_key *key)
{
    if (!key || !key->mem) return;
    const uint8_t *m = key->mem;
    for (size_t o = 0; o < key->mem_len; o += 64) __builtin_prefetch(m + o, 0, 1);
    __builtin_prefetch(m + key->mem_len - 1, 0, 1);
}

/* Bytes of the signature template kept in a key: the 47-byte prefix and the proof ‖ root_sig tail. */
static size_t tmpl_bytes(const dsig_hb_params *p)
{
    return DSIG_HB_SIG_HEADER + (size_t)p->log_batch * 32 + DSIG_HB_ED25519_SIG;
}

/*
 * Build key `index` in its preassigned memory: expand its seed into pk_seed ‖ nonce ‖ level-0 secrets
 * (BLAKE3-keyed(K_expand, seed) XOF, through the caller's scratch `xof` of 32 + L·n bytes), fill the
 * template prefix, compute every level and the leaf. @spec docs §3.1, §5
 */
static void hb_key_build(const dsig_hb_params *p, const uint8_t master_seed[32], uint64_t batch_seq,
                         uint32_t index, dsig_hb_key *key, uint8_t *xof)
{
    const size_t tb = tmpl_bytes(p), sec = (size_t)p->chains * p->n, xof_len = 32 + sec;
    uint8_t seed[32];
    key->params = p;
    key->batch_seq = batch_seq;
    key->index = index;

    dsig_hb_key_seed(master_seed, batch_seq, index, seed);
    dsig_blake3_hasher h;
    dsig_blake3_init_keyed(&h, hb_key(HB_K_EXPAND));
    dsig_blake3_update(&h, seed, sizeof seed);
    dsig_blake3_finalize(&h, xof, xof_len);
    /* The seed sits in the hasher's chunk buffer (buf, before cv_stack: checked at compile time in
     * blake3.c); the CV stack is unused by a one-block input. */
    dsig_memzero(&h, offsetof(dsig_blake3_hasher, cv_stack));
    dsig_memzero(seed, sizeof seed);

    uint8_t *t = key->mem;
    t[HB_OFF_VERSION] = DSIG_HB_VERSION;
    dsig_store_le32(t + HB_OFF_PARAM, p->id);
    dsig_store_le64(t + HB_OFF_SEQ, batch_seq);
    dsig_store_le16(t + HB_OFF_INDEX, index);
    memcpy(t + HB_OFF_PKSEED, xof, 16);
    memcpy(t + HB_OFF_NONCE, xof + 16, 16);

    uint8_t *table = key->mem + tb;
    const size_t n = p->n;
    for (size_t i = 0; i < p->chains; i++) hb_cpy_val(table + i * p->levels * n, xof + 32 + i * n, n);

    if (p->ots == DSIG_HB_OTS_WOTS) {
        hb_wots_keygen(p, t + HB_OFF_PKSEED, table);
        hb_wots_leaf_from_table(p, t + HB_OFF_PKSEED, table, key->leaf);
    } else {
        hb_hors_keygen(p, t + HB_OFF_PKSEED, table);
        hb_hors_leaf_from_table(p, t + HB_OFF_PKSEED, table, key->leaf);
    }
}

/* root message = "DSig-hybrid-root" ‖ version ‖ domain ‖ param id u32le ‖ signer id u64le ‖ root public
 * key ‖ batch_seq u64le ‖ root. @spec docs §6 */
void dsig_hb_root_message(const dsig_hb_params *p, const dsig_hb_who *who, uint64_t batch_seq,
                          const uint8_t root[DSIG_HB_HASH_BYTES], uint8_t out[DSIG_HB_ROOT_MSG_BYTES])
{
    memcpy(out, "DSig-hybrid-root", 16);
    out[16] = DSIG_HB_VERSION;
    out[17] = who->domain;
    dsig_store_le32(out + 18, p->id);
    dsig_store_le64(out + 22, who->signer_id);
    memcpy(out + 30, who->root_pk, 32);
    dsig_store_le64(out + 62, batch_seq);
    memcpy(out + 70, root, 32);
}

/* Free a batch (erasing any keys left in it). */
void dsig_hb_batch_free(dsig_hb_batch *b)
{
    if (!b) return;
    if (b->keys && b->params)
        for (uint32_t i = 0; i < b->params->batch; i++) dsig_hb_key_erase(&b->keys[i]);
    dsig_xfree(b->keys, 0);
    dsig_xfree(b->nodes, 0);
    memset(b, 0, sizeof *b);
}

/* Generate a batch: keys, leaves, tree, root signature, per-key template tails. */
int dsig_hb_keygen_batch(const dsig_hb_params *p, const uint8_t master_seed[DSIG_HB_SEED_BYTES],
                         uint64_t batch_seq, const dsig_ed25519_dkey *root_sk, const dsig_hb_who *who,
                         dsig_hb_batch *out)
{
    int rc;
    if (!out) return dsig_fail(DSIG_E_ARG, "DSig keygen: NULL batch");
    memset(out, 0, sizeof *out);
    if (!master_seed || !root_sk || !who)
        return dsig_fail(DSIG_E_ARG, "DSig keygen: NULL seed, root key or identity");
    if ((rc = dsig_hb_params_check(p)) != DSIG_OK) return rc;
    if ((rc = dsig_backend_init()) != DSIG_OK) return rc;
    if (memcmp(root_sk->pk, who->root_pk, 32) != 0)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "DSig keygen: the root key is not the identity's root public key");

    const uint32_t b = p->batch;
    out->params = p;
    out->batch_seq = batch_seq;
    out->who = *who;
    out->nodes = dsig_malloc((2 * (size_t)b - 1) * 32);
    out->keys = dsig_calloc(b, sizeof *out->keys);
    if (!out->nodes || !out->keys) {
        dsig_hb_batch_free(out);
        return dsig_fail(DSIG_E_NOMEM, "DSig keygen: out of memory for a batch");
    }
    /* One allocation for every key of the batch (and one XOF scratch buffer), not one per key. */
    const size_t klen = tmpl_bytes(p) + p->table_bytes, stride = HB_ALIGN(klen);
    const size_t xof_len = 32 + (size_t)p->chains * p->n;
    hb_slab *sl = dsig_calloc(1, sizeof *sl);
    uint8_t *xof = dsig_malloc(xof_len);
    if (!sl || !xof || dsig_secmem_alloc(&sl->mem, (size_t)b * stride) != DSIG_OK) {
        dsig_xfree(sl, 0);
        dsig_xfree(xof, 0);
        dsig_hb_batch_free(out);
        return dsig_fail(DSIG_E_NOMEM, "DSig keygen: out of memory for the one-time keys of a batch");
    }
    uint8_t *base = sl->mem.p; /* page aligned */
    atomic_init(&sl->refs, b);
    for (uint32_t i = 0; i < b; i++) {
        out->keys[i].mem = base + (size_t)i * stride;
        out->keys[i].mem_len = klen;
        out->keys[i].slab = sl;
    }
    for (uint32_t i = 0; i < b; i++) {
        hb_key_build(p, master_seed, batch_seq, i, &out->keys[i], xof);
        memcpy(out->nodes[i], out->keys[i].leaf, 32);
    }
    dsig_xfree(xof, xof_len);
    out->secmem_flags = sl->mem.flags;
    hb_tree_build(p, out->nodes);
    memcpy(out->root, out->nodes[2 * (size_t)b - 2], 32);

    uint8_t msg[DSIG_HB_ROOT_MSG_BYTES];
    dsig_hb_root_message(p, who, batch_seq, out->root, msg);
    if (dsig_ed25519_dkey_sign(root_sk, msg, sizeof msg, out->root_sig) != DSIG_OK) {
        dsig_hb_batch_free(out);
        return dsig_fail(DSIG_E_CRYPTO, "DSig keygen: Ed25519 signing of the batch root failed");
    }
    for (uint32_t i = 0; i < b; i++) {
        uint8_t *tail = out->keys[i].mem + DSIG_HB_SIG_HEADER;
        hb_tree_proof(p, (const uint8_t(*)[32])out->nodes, i, tail);
        memcpy(tail + (size_t)p->log_batch * 32, out->root_sig, 64);
    }
    return DSIG_OK;
}

/* Batch message: version ‖ param id ‖ batch_seq ‖ leaves ‖ root_sig. @spec docs §7 */
int dsig_hb_batch_message(const dsig_hb_batch *b, uint8_t *out, size_t cap, size_t *out_len)
{
    if (!b || !b->params || !b->nodes || !out) return dsig_fail(DSIG_E_ARG, "DSig batch message: NULL argument");
    const dsig_hb_params *p = b->params;
    if (cap < p->batch_msg_bytes)
        return dsig_fail(DSIG_E_BUFFER, "DSig batch message: needs %zu bytes, buffer has %zu",
                         p->batch_msg_bytes, cap);
    out[0] = DSIG_HB_VERSION;
    dsig_store_le32(out + 1, p->id);
    dsig_store_le64(out + 5, b->batch_seq);
    memcpy(out + 13, b->nodes, (size_t)p->batch * 32);
    memcpy(out + 13 + (size_t)p->batch * 32, b->root_sig, 64);
    if (out_len) *out_len = p->batch_msg_bytes;
    return DSIG_OK;
}

/* Parse a batch message, rebuild its tree, verify the Ed25519 root signature. */
int dsig_hb_batch_verify(const dsig_hb_params *p, const uint8_t *msg, size_t len, const dsig_hb_who *who,
                         dsig_hb_batch *out)
{
    int rc;
    if (!out) return dsig_fail(DSIG_E_ARG, "DSig batch verify: NULL output");
    memset(out, 0, sizeof *out);
    if (!msg || !who) return dsig_fail(DSIG_E_ARG, "DSig batch verify: NULL message or identity");
    if ((rc = dsig_hb_params_check(p)) != DSIG_OK) return rc;
    if ((rc = dsig_backend_init()) != DSIG_OK) return rc;
    if (len != p->batch_msg_bytes)
        return dsig_fail(DSIG_E_VERIFY, "DSig batch message: length %zu, expected %zu", len, p->batch_msg_bytes);
    if (msg[0] != DSIG_HB_VERSION)
        return dsig_fail(DSIG_E_VERIFY, "DSig batch message: version %u, expected %u", msg[0], DSIG_HB_VERSION);
    if (dsig_load_le32(msg + 1) != p->id)
        return dsig_fail(DSIG_E_VERIFY, "DSig batch message: parameter id 0x%08x, expected 0x%08x",
                         dsig_load_le32(msg + 1), p->id);
    const uint32_t b = p->batch;
    out->nodes = dsig_malloc((2 * (size_t)b - 1) * 32);
    if (!out->nodes) return dsig_fail(DSIG_E_NOMEM, "DSig batch verify: out of memory");
    out->params = p;
    out->batch_seq = dsig_load_le64(msg + 5);
    out->who = *who;
    memcpy(out->nodes, msg + 13, (size_t)b * 32);
    memcpy(out->root_sig, msg + 13 + (size_t)b * 32, 64);
    hb_tree_build(p, out->nodes);
    memcpy(out->root, out->nodes[2 * (size_t)b - 2], 32);

    uint8_t rm[DSIG_HB_ROOT_MSG_BYTES];
    dsig_hb_root_message(p, who, out->batch_seq, out->root, rm);
    if (!dsig_ed25519_verify_pk(who->root_pk, rm, sizeof rm, out->root_sig)) {
        uint64_t seq = out->batch_seq;
        dsig_hb_batch_free(out);
        return dsig_fail(DSIG_E_VERIFY, "DSig batch message: Ed25519 root signature of batch %llu does not verify",
                         (unsigned long long)seq);
    }
    return DSIG_OK;
}
