/*
 * DSig in the agile registry: algorithm "DSig" (family "DSig") on Ed25519 OKP keys, plus the public
 * parameter-set functions and the stateless helpers of dsig/hybrid.h.
 *
 * Streaming: the payload is hashed once with BLAKE3 (32-byte digest); sign_final signs the digest with
 * a DSig signature made from a fresh batch of ONE one-time key (W-OTS+ w = 4, Haraka, log_batch = 0)
 * whose root is signed, in the file domain, with the root key derived from the DSig key. The signature
 * is self-contained and checked on the slow path (one-time signature, root, Ed25519) by anyone holding
 * the public key. A fresh random master seed per signature means no one-time key is ever reused, with
 * no state to keep. Keys must be bound to "DSig" (DSIG_ALG_BOUND_KEY).
 */
#include <pthread.h>
#include <string.h>

#include <sodium.h>

#include "classic/ed25519_derive.h"
#include "classic/eddsa.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"
#include "hash/blake3.h"
#include "hybrid/runtime.h"

_Static_assert(DSIG_HYBRID_OTS_WOTS == DSIG_HB_OTS_WOTS && DSIG_HYBRID_OTS_HORS == DSIG_HB_OTS_HORS,
               "public and internal one-time scheme ids differ");
_Static_assert(DSIG_HYBRID_HASH_HARAKA == DSIG_HB_HASH_HARAKA &&
                   DSIG_HYBRID_HASH_SHA256 == DSIG_HB_HASH_SHA256 &&
                   DSIG_HYBRID_HASH_BLAKE3 == DSIG_HB_HASH_BLAKE3,
               "public and internal hash ids differ");

/* Signature size of the registry algorithm's parameter set (W-OTS+ w = 4, 68 chains of 18 bytes, no
 * Merkle proof for a batch of one): header + chain values + Ed25519 root signature. Checked against
 * the scheme's own figure at first use (alg_params). */
#define DSIG_ALG_SIG_BYTES (DSIG_HB_SIG_HEADER + 68u * DSIG_HB_WOTS_N + DSIG_HB_ED25519_SIG)

/* ---- DSig keys --------------------------------------------------------------------------------- */

static const dsig_alg dsig_alg_dsig;

/* An OKP Ed25519 key bound to "DSig" (dsig_key_check_alg's detail says how to make one). */
static int check_dsig_key(const dsig_key *key)
{
    if (!key)
        return dsig_fail(DSIG_E_ARG, "DSig: no key");
    int rc = dsig_key_check_alg(key, &dsig_alg_dsig);
    if (rc)
        return rc;
    if (!key->impl)
        return dsig_fail(DSIG_E_KEY_MISMATCH, "DSig needs an OKP Ed25519 key");
    return DSIG_OK;
}

int dsig_hb_key_public(const dsig_key *key, uint8_t identity_pk[DSIG_HB_ED25519_PK],
                       uint8_t root_pk[DSIG_HB_ED25519_PK])
{
    int rc = check_dsig_key(key);
    if (rc)
        return rc;
    const struct dsig_eddsa_key *k = key->impl;
    if (identity_pk)
        memcpy(identity_pk, k->pk, DSIG_HB_ED25519_PK);
    return dsig_ed25519_derive_public(k->pk, DSIG_HB_ROOT_LABEL, root_pk);
}

int dsig_hb_key_root_secret(const dsig_key *key, dsig_ed25519_dkey *root_sk)
{
    int rc = check_dsig_key(key);
    if (rc)
        return rc;
    return dsig_ed25519_derive_secret(key, DSIG_HB_ROOT_LABEL, root_sk);
}

/* ---- parameter sets ------------------------------------------------------------------------- */

/* 1 if p is one of the static presets. */
static int is_preset(const dsig_hb_params *p)
{
    for (const dsig_hb_params *const *q = dsig_hb_presets; *q; q++)
        if (*q == p)
            return 1;
    return 0;
}

int dsig_hb_params_resolve(const dsig_hybrid_params *p, const dsig_hb_params **out)
{
    const dsig_hb_params *hp = p ? p : dsig_hb_params_default();
    int rc = dsig_hb_params_check(hp);
    if (rc)
        return rc;
    *out = hp;
    return DSIG_OK;
}

const dsig_hybrid_params *dsig_hybrid_params_default(void) { return dsig_hb_params_default(); }

const dsig_hybrid_params *dsig_hybrid_params_by_name(const char *name)
{
    return name ? dsig_hb_params_by_name(name) : NULL;
}

size_t dsig_hybrid_params_count(void)
{
    size_t n = 0;
    while (dsig_hb_presets[n])
        n++;
    return n;
}

const dsig_hybrid_params *dsig_hybrid_params_at(size_t i)
{
    return i < dsig_hybrid_params_count() ? dsig_hb_presets[i] : NULL;
}

int dsig_hybrid_params_new(dsig_hybrid_params **out, unsigned ots, unsigned hash, unsigned log_w,
                           unsigned log_t, unsigned k, unsigned log_batch)
{
    if (!out)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_params_new: out is NULL");
    *out = NULL;
    dsig_hb_params *p = dsig_calloc(1, sizeof *p);
    if (!p)
        return dsig_fail(DSIG_E_NOMEM, "DSig parameters: out of memory");
    int rc = dsig_hb_params_init(p, ots, hash, log_w, log_t, k, log_batch);
    if (rc) {
        dsig_xfree(p, 0);
        return rc;
    }
    *out = p;
    return DSIG_OK;
}

int dsig_hybrid_params_with_batch(dsig_hybrid_params **out, const dsig_hybrid_params *p,
                                  unsigned log_batch)
{
    if (!out)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_params_with_batch: out is NULL");
    *out = NULL;
    const dsig_hb_params *hp;
    int rc = dsig_hb_params_resolve(p, &hp);
    if (rc)
        return rc;
    dsig_hb_params *q = dsig_calloc(1, sizeof *q);
    if (!q)
        return dsig_fail(DSIG_E_NOMEM, "DSig parameters: out of memory");
    rc = dsig_hb_params_with_batch(q, hp, log_batch);
    if (rc) {
        dsig_xfree(q, 0);
        return rc;
    }
    *out = q;
    return DSIG_OK;
}

void dsig_hybrid_params_free(dsig_hybrid_params *p)
{
    if (p && !is_preset(p))
        dsig_xfree(p, 0);
}

const char *dsig_hybrid_params_name(const dsig_hybrid_params *p) { return p->name; }
size_t dsig_hybrid_params_sig_bytes(const dsig_hybrid_params *p) { return p->sig_bytes; }
size_t dsig_hybrid_params_batch_msg_bytes(const dsig_hybrid_params *p) { return p->batch_msg_bytes; }
unsigned dsig_hybrid_params_batch_size(const dsig_hybrid_params *p) { return p->batch; }

/* ---- stateless helpers ---------------------------------------------------------------------- */

int dsig_hybrid_sig_locate(const dsig_hybrid_params *p, const uint8_t *sig, size_t sig_len,
                           uint64_t *batch_seq, uint32_t *index)
{
    const dsig_hb_params *hp;
    int rc = dsig_hb_params_resolve(p, &hp);
    if (rc)
        return rc;
    if (!sig || !batch_seq || !index)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_sig_locate: NULL argument");
    return dsig_hb_sig_locate(hp, sig, sig_len, batch_seq, index);
}

int dsig_hybrid_verify_slow(const dsig_hybrid_params *p, const dsig_key *signer_key, uint64_t signer_id,
                            const uint8_t *msg, size_t len, const uint8_t *sig, size_t sig_len)
{
    const dsig_hb_params *hp;
    int rc = dsig_hb_params_resolve(p, &hp);
    if (rc)
        return rc;
    if ((!msg && len) || !sig)
        return dsig_fail(DSIG_E_ARG, "dsig_hybrid_verify_slow: NULL argument");
    dsig_hb_who who = {.domain = DSIG_HB_DOMAIN_RUNTIME, .signer_id = signer_id};
    if ((rc = dsig_hb_key_public(signer_key, NULL, who.root_pk)))
        return rc;
    return dsig_hb_verify_slow(hp, sig, sig_len, msg, len, &who);
}

/* ---- registry algorithm "DSig" -------------------------------------------------------------- */

static dsig_hb_params alg_p;
static int alg_p_rc;
static pthread_once_t alg_p_once = PTHREAD_ONCE_INIT;

/* Build the registry algorithm's parameter set once: the default with batches of one key. */
static void alg_params_init(void)
{
    alg_p_rc = dsig_hb_params_with_batch(&alg_p, dsig_hb_params_default(), 0);
    if (alg_p_rc == DSIG_OK && alg_p.sig_bytes != DSIG_ALG_SIG_BYTES)
        alg_p_rc = DSIG_E_INTERNAL; /* the descriptor's sig_max would be wrong */
}

/* The registry algorithm's parameter set, or an error. */
static int alg_params(const dsig_hb_params **out)
{
    pthread_once(&alg_p_once, alg_params_init);
    if (alg_p_rc)
        return dsig_fail(alg_p_rc, "DSig: registry parameter set unavailable (signature size %zu, "
                                   "descriptor says %u)", alg_p.sig_bytes, (unsigned)DSIG_ALG_SIG_BYTES);
    *out = &alg_p;
    return DSIG_OK;
}

/* Streaming state of either direction. */
struct alg_state {
    dsig_blake3_hasher h;                /* first: the per-chunk update touches only it */
    const dsig_hb_params *p;
    int signing;
    dsig_ed25519_dkey root;              /* sign: the root key (secret) */
    dsig_hb_who who;                     /* verify: file domain, root public key */
    uint8_t *sig;                        /* verify: copy of the signature */
    size_t sig_len;
};

/* Common set-up: parameter set, key material, hasher. */
static int alg_init(void **state, const struct dsig_key *key, int signing)
{
    const dsig_hb_params *p;
    int rc = alg_params(&p);
    if (rc)
        return rc;
    struct alg_state *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "DSig: out of memory");
    st->p = p;
    st->signing = signing;
    st->who.domain = DSIG_HB_DOMAIN_FILE;
    rc = signing ? dsig_hb_key_root_secret(key, &st->root) : dsig_hb_key_public(key, NULL, st->who.root_pk);
    if (rc) {
        dsig_xfree(st, sizeof *st);
        return rc;
    }
    dsig_blake3_init(&st->h);
    *state = st;
    return DSIG_OK;
}

/* Start signing: Ed25519 key pair and an empty BLAKE3 hasher. */
static int alg_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                         const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    (void)alg;
    return alg_init(state, key, 1);
}

/* Absorb a chunk of payload (both directions). */
static int alg_update(void *state, const uint8_t *data, size_t len)
{
    dsig_blake3_update(&((struct alg_state *)state)->h, data, len);
    return DSIG_OK;
}

/* Sign a 32-byte digest with a batch of one key made under `master` (the registry algorithm's
 * signature; separate so that tests can pin it with a fixed master seed). The root message is in the
 * file domain: a root signed for a runtime batch (or the reverse) never verifies here. */
int dsig_hb_alg_sign_digest(const uint8_t master[DSIG_HB_SEED_BYTES], const dsig_ed25519_dkey *root_sk,
                            const uint8_t digest[32], uint8_t *sig, size_t cap, size_t *sig_len)
{
    const dsig_hb_params *p;
    int rc = alg_params(&p);
    if (rc)
        return rc;
    if (cap < p->sig_bytes)
        return dsig_fail(DSIG_E_BUFFER, "DSig: signature needs %zu bytes", p->sig_bytes);
    dsig_hb_who who = {.domain = DSIG_HB_DOMAIN_FILE, .signer_id = 0};
    memcpy(who.root_pk, root_sk->pk, sizeof who.root_pk);
    dsig_hb_batch b;
    if ((rc = dsig_hb_keygen_batch(p, master, 0, root_sk, &who, &b)))
        return rc;
    rc = dsig_hb_sign(&b.keys[0], digest, 32, sig, cap, sig_len);
    dsig_hb_batch_free(&b); /* erases the one-time key */
    return rc;
}

/* Digest the payload and sign it with a one-key batch under a fresh master seed. */
static int alg_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct alg_state *st = state;
    uint8_t digest[DSIG_BLAKE3_OUT_LEN], master[DSIG_HB_SEED_BYTES];
    dsig_blake3_finalize(&st->h, digest, sizeof digest);
    if (dsig_random_bytes(master, sizeof master) != DSIG_OK)
        return dsig_fail(DSIG_E_RNG, "DSig: cannot draw a master seed");
    int rc = dsig_hb_alg_sign_digest(master, &st->root, digest, sig, cap, sig_len);
    dsig_memzero(master, sizeof master);
    return rc;
}

/* Start verifying: public key, a copy of the signature, an empty hasher. */
static int alg_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                           const uint8_t *sig, size_t sig_len,
                           const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    (void)alg;
    int rc = alg_init(state, key, 0);
    if (rc)
        return rc;
    struct alg_state *st = *state;
    st->sig = dsig_malloc(sig_len ? sig_len : 1);
    if (!st->sig) {
        dsig_xfree(st, sizeof *st);
        *state = NULL;
        return dsig_fail(DSIG_E_NOMEM, "DSig: out of memory");
    }
    if (sig_len)
        memcpy(st->sig, sig, sig_len);
    st->sig_len = sig_len;
    return DSIG_OK;
}

/* Digest the payload and check the signature on the slow path. */
static int alg_verify_final(void *state)
{
    struct alg_state *st = state;
    uint8_t digest[DSIG_BLAKE3_OUT_LEN];
    dsig_blake3_finalize(&st->h, digest, sizeof digest);
    return dsig_hb_verify_slow(st->p, st->sig, st->sig_len, digest, sizeof digest, &st->who);
}

/* Wipe and free a state of either direction. */
static void alg_free_state(void *state)
{
    struct alg_state *st = state;
    if (!st)
        return;
    dsig_xfree(st->sig, 0);
    dsig_xfree(st, sizeof *st);
}

static const struct dsig_alg_ops dsig_hybrid_ops = {
    .sign_init = alg_sign_init,
    .sign_update = alg_update,
    .sign_final = alg_sign_final,
    .verify_init = alg_verify_init,
    .verify_update = alg_update,
    .verify_final = alg_verify_final,
    .free_state = alg_free_state,
};

static const dsig_alg dsig_alg_dsig = {
    .name = "DSig",
    .family = "DSig",
    .description = "DSig hybrid signature (W-OTS+ w=4, Haraka-512, batch of one key, Ed25519 root) "
                   "over a one-pass BLAKE3 digest of the payload",
    .keytype = &dsig_keytype_ed25519,
    .baseline = "BLAKE3",
    .security_bits = 128,
    .flags = DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED | DSIG_ALG_BOUND_KEY,
    .sig_max = DSIG_ALG_SIG_BYTES,
    .min_key_bits = 0,
    .default_key_bits = 256,
    .ops = &dsig_hybrid_ops,
    .params = NULL,
    .explicit_only = 1,
};

const dsig_alg *const dsig_hybrid_algs[] = {&dsig_alg_dsig, NULL};
