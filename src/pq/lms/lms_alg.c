/*
 * src/pq/lms/lms_alg.c — the "HSS-LMS" registry algorithm (JOSE name mirroring RFC 8778's COSE
 * HSS-LMS): an AKP key type whose JWK "pub" is the RFC 8554 §6.1 HSS public key (u32 L ‖ LMS public
 * key, which carries the top level's typecodes), stateful ops for the state-file layer, and
 * streaming sign/verify over the core in lms.c.
 *
 * Private keys never appear in JWKs: they live in state files (include/dsig/state.h). The state
 * layer stores save_private's bytes: u32 L ‖ L × (u32 LMS type ‖ u32 LM-OTS type) ‖ SEED (n) ‖ I (16),
 * the top level's RFC 8554 Appendix A secrets; lower levels are re-derived from them (lms.h).
 * The global index of a signature is the leaf counter across levels (top level most significant).
 *
 * Default parameter set: two levels of LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 (2^20 signatures,
 * ~0.1 s key generation, 5076-byte signatures; one H20 tree would take ~50 s to generate and to
 * reload from a state file).
 */
#include <string.h>

#include "core/bytes.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"
#include "core/stateful.h"
#include "dsig/mem.h"
#include "pq/lms/lms.h"

#define DEFAULT_PARAM "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4"

/* Longest HSS signature: 8 levels of H25 with LMOTS W1 (n = 32), 7 signed public keys. */
#define LMS_SIG_MAX_ONE (4 + 4 + 32 * 266 + 4 + 25 * 32)
#define HSS_SIG_MAX (4 + 8 * LMS_SIG_MAX_ONE + 7 * 56)

/* Key impl: the public key always, the private key (trees in memory) when generated or loaded. */
struct hss_key {
    uint8_t pub[DSIG_HSS_PUB_MAX];
    size_t pub_len;
    dsig_hss_priv *priv;
};

/* Streaming state of either direction. */
struct hss_state {
    int verify;
    dsig_hss_sign_ctx s;
    dsig_hss_verify_ctx v;
    uint8_t pub[DSIG_HSS_PUB_MAX]; /* verify: copies the verify context points into */
    uint8_t *sig;
    size_t sig_len;
};

static const char *const akp_pub_members[] = {"pub", NULL};
static const char *const akp_priv_members[] = {NULL};

static int hss_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng);
static int hss_generate_param(struct dsig_key *key, const char *param, unsigned bits, dsig_rng *rng);
static int hss_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n);
static int hss_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                          size_t *n);
static int hss_public_copy(struct dsig_key *dst, const struct dsig_key *src);
static void hss_destroy(struct dsig_key *key);
static int hss_save_private(const struct dsig_key *key, uint8_t **out, size_t *len);
static int hss_load_private(struct dsig_key *key, const uint8_t *in, size_t len, uint64_t next);
static uint64_t hss_capacity(const struct dsig_key *key);
static int hss_check_private(const uint8_t *priv, size_t priv_len, const uint8_t *pub, size_t pub_len);

static const struct dsig_stateful_ops hss_stateful = {
    .save_private = hss_save_private,
    .load_private = hss_load_private,
    .capacity = hss_capacity,
    .check_private = hss_check_private,
};

static const struct dsig_keytype dsig_keytype_hss_lms = {
    .kty = "AKP", .crv = NULL, .pub_members = akp_pub_members, .priv_members = akp_priv_members,
    .has_public = 1, .generate = hss_generate, .import_jwk = hss_import_jwk,
    .export_jwk = hss_export_jwk, .to_pkey = NULL, .from_pkey = NULL,
    .public_copy = hss_public_copy, .destroy = hss_destroy, .bits = NULL, .alg = "HSS-LMS",
    .stateful = &hss_stateful, .generate_param = hss_generate_param,
};

/* ---- key material ------------------------------------------------------------------------------ */

/* Key type hook: free the trees (the core wipes the seeds). */
static void hss_destroy(struct dsig_key *key)
{
    struct hss_key *k = key->impl;
    if (k) {
        dsig_hss_priv_free(k->priv);
        dsig_xfree(k, sizeof *k);
    }
    key->impl = NULL;
}

/* Install an impl holding priv (ownership moves) or only pub. */
static int install(struct dsig_key *key, dsig_hss_priv *priv, const uint8_t *pub, size_t pub_len)
{
    struct hss_key *k = dsig_calloc(1, sizeof *k);
    if (!k) {
        dsig_hss_priv_free(priv);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    if (priv) {
        k->priv = priv;
        k->pub_len = dsig_hss_priv_pub(priv, k->pub);
    } else {
        memcpy(k->pub, pub, pub_len);
        k->pub_len = pub_len;
    }
    hss_destroy(key);
    key->impl = k;
    key->has_private = priv != NULL;
    return DSIG_OK;
}

/* A key of the parameter string (NULL = default) from SEED ‖ I drawn from rng. */
static int generate_with(struct dsig_key *key, const char *param, unsigned bits, dsig_rng *rng)
{
    if (bits)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS keys have no size in bits (got %u): choose a parameter "
                                     "set instead", bits);
    unsigned L;
    uint32_t lt[DSIG_HSS_L_MAX], ot[DSIG_HSS_L_MAX];
    int rc = dsig_hss_parse_param(param ? param : DEFAULT_PARAM, &L, lt, ot);
    if (rc)
        return rc;
    const dsig_lms_params *top = dsig_lms_params_by_type(lt[0]);
    uint8_t secret[DSIG_LMS_N_MAX + DSIG_LMS_I_LEN];
    rc = dsig_rng_bytes(rng, secret, top->m + DSIG_LMS_I_LEN);
    dsig_hss_priv *priv = NULL;
    if (rc == DSIG_OK)
        rc = dsig_hss_priv_new(&priv, L, lt, ot, secret, secret + top->m, 0);
    dsig_memzero(secret, sizeof secret);
    return rc ? rc : install(key, priv, NULL, 0);
}

/* Key type hook: the default set (two levels of H10/W4). */
static int hss_generate(struct dsig_key *key, unsigned bits, dsig_rng *rng)
{
    return generate_with(key, NULL, bits, rng);
}

/* Key type hook: a named set, "LMS_.../LMOTS_..." per level, comma-separated, top first. */
static int hss_generate_param(struct dsig_key *key, const char *param, unsigned bits, dsig_rng *rng)
{
    return generate_with(key, param, bits, rng);
}

/* Key type hook: "pub" only (an HSS public key); there is no "priv" for stateful keys. */
static int hss_import_jwk(struct dsig_key *key, const dsig_jwk_member *m, size_t n)
{
    if (n < 1 || !m[0].data)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS JWK: member \"pub\" is missing");
    int rc = dsig_hss_pub_check(m[0].data, m[0].len);
    return rc ? rc : install(key, NULL, m[0].data, m[0].len);
}

/* Key type hook: "pub"; private keys are only in state files. */
static int hss_export_jwk(const struct dsig_key *key, int include_private, dsig_jwk_member *m,
                          size_t *n)
{
    const struct hss_key *k = key->impl;
    if (include_private)
        return dsig_fail(DSIG_E_UNSUPPORTED, "HSS-LMS private keys are never exported: they live only "
                                             "in their state file");
    m[0].name = "pub";
    m[0].len = k->pub_len;
    m[0].data = dsig_malloc(k->pub_len);
    if (!m[0].data)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    memcpy(m[0].data, k->pub, k->pub_len);
    *n = 1;
    return DSIG_OK;
}

/* Key type hook: the public half. */
static int hss_public_copy(struct dsig_key *dst, const struct dsig_key *src)
{
    const struct hss_key *k = src->impl;
    return install(dst, NULL, k->pub, k->pub_len);
}

/* Stateful hook: u32 L ‖ L × (u32 LMS type ‖ u32 LM-OTS type) ‖ SEED ‖ I. */
static int hss_save_private(const struct dsig_key *key, uint8_t **out, size_t *len)
{
    const struct hss_key *k = key->impl;
    if (!k || !k->priv)
        return dsig_fail(DSIG_E_NO_PRIVATE, "HSS-LMS key has no private part to save");
    uint32_t lt[DSIG_HSS_L_MAX], ot[DSIG_HSS_L_MAX];
    unsigned L = dsig_hss_priv_levels(k->priv, lt, ot);
    size_t sn;
    const uint8_t *seed = dsig_hss_priv_seed(k->priv, &sn);
    size_t total = 4 + 8 * (size_t)L + sn + DSIG_LMS_I_LEN;
    uint8_t *b = dsig_malloc(total);
    if (!b)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    dsig_store_be32(b, L);
    for (unsigned i = 0; i < L; i++) {
        dsig_store_be32(b + 4 + 8 * i, lt[i]);
        dsig_store_be32(b + 8 + 8 * i, ot[i]);
    }
    memcpy(b + 4 + 8 * L, seed, sn);
    memcpy(b + 4 + 8 * L + sn, dsig_hss_priv_I(k->priv), DSIG_LMS_I_LEN);
    *out = b;
    *len = total;
    return DSIG_OK;
}

/* Stateful hook: rebuild the trees for index `next` (the top tree, the child trees on the path to
 * `next`, and the part of each level's next child tree that signing up to `next` would have built, so
 * the signatures after a reload keep their bounded per-signature work; loading may cost one more tree
 * per level. An exhausted key gets its top tree only, for the public key). */
static int hss_load_private(struct dsig_key *key, const uint8_t *in, size_t len, uint64_t next)
{
    if (!in || len < 4)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS private material: too short (%zu bytes)", len);
    uint32_t L = dsig_load_be32(in), lt[DSIG_HSS_L_MAX], ot[DSIG_HSS_L_MAX];
    if (L < 1 || L > DSIG_HSS_L_MAX || len < 4 + 8 * (size_t)L)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS private material: L = %u, must be 1..8", L);
    for (uint32_t i = 0; i < L; i++) {
        lt[i] = dsig_load_be32(in + 4 + 8 * i);
        ot[i] = dsig_load_be32(in + 8 + 8 * i);
    }
    const dsig_lms_params *top = dsig_lms_params_by_type(lt[0]);
    if (!top)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS private material: unknown LMS type 0x%x", lt[0]);
    if (len != 4 + 8 * (size_t)L + top->m + DSIG_LMS_I_LEN)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS private material: %zu bytes, expected %zu", len,
                         4 + 8 * (size_t)L + top->m + DSIG_LMS_I_LEN);
    const uint8_t *seed = in + 4 + 8 * L;
    dsig_hss_priv *priv;
    int rc = dsig_hss_priv_new(&priv, L, lt, ot, seed, seed + top->m, next);
    if (rc)
        return rc == DSIG_E_ARG ? dsig_fail(DSIG_E_KEY, "HSS-LMS private material: invalid "
                                                        "parameter sets") : rc;
    return install(key, priv, NULL, 0);
}

/* Stateful hook: before any tree is built, the saved L, top-level typecodes and I must be those of
 * the stored public key (u32 L ‖ u32 LMS type ‖ u32 LM-OTS type ‖ I ‖ T[1]); all of them are public.
 * The lower levels' typecodes are not in the public key and cannot be checked here: a change there
 * gives other child trees, whose signatures still verify (HSS signatures carry each level's types). */
static int hss_check_private(const uint8_t *priv, size_t priv_len, const uint8_t *pub, size_t pub_len)
{
    if (priv_len < 4 + 8 + DSIG_LMS_I_LEN || pub_len < 12 + DSIG_LMS_I_LEN)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS state: private part or public key too short");
    if (dsig_load_be32(priv) != dsig_load_be32(pub) || dsig_load_be32(priv + 4) != dsig_load_be32(pub + 4) ||
        dsig_load_be32(priv + 8) != dsig_load_be32(pub + 8))
        return dsig_fail(DSIG_E_KEY, "HSS-LMS state: the private part's levels or top-level typecodes "
                                     "differ from the public key's");
    if (memcmp(priv + priv_len - DSIG_LMS_I_LEN, pub + 12, DSIG_LMS_I_LEN) != 0)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS state: the private part's identifier I differs from the "
                                     "public key's");
    return DSIG_OK;
}

/* Stateful hook: 2^(sum of the level heights); 0 for a public key. */
static uint64_t hss_capacity(const struct dsig_key *key)
{
    const struct hss_key *k = key->impl;
    return k && k->priv ? dsig_hss_priv_capacity(k->priv) : 0;
}

/* ---- streaming ------------------------------------------------------------------------------------ */

/* Ops hook: wipe and free a state of either direction. */
static void hss_free_state(void *state)
{
    struct hss_state *st = state;
    if (!st)
        return;
    dsig_hss_sign_clear(&st->s);
    dsig_xfree(st->sig, st->sig_len);
    dsig_xfree(st, sizeof *st);
}

/* Ops hook: take the next index from the state file (durably reserved by the core before it is
 * returned), choose a fresh randomizer C, and start H(I ‖ q ‖ D_MESG ‖ C ‖ ...). */
static int hss_sign_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                         const dsig_sign_opts *opts)
{
    (void)opts; /* takes no options (not flagged DSIG_ALG_OPTIONS): always NULL */
    (void)alg;
    struct hss_key *k = key->impl;
    if (!k || !k->priv)
        return dsig_fail(DSIG_E_NO_PRIVATE, "HSS-LMS: signing needs the private key (open its state "
                                            "file with dsig_state_open)");
    uint64_t index;
    int rc = dsig_state_take_index(key, &index);
    if (rc)
        return rc;
    struct hss_state *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    uint8_t c[DSIG_LMS_N_MAX];
    rc = dsig_random_bytes(c, sizeof c);
    if (rc == DSIG_OK)
        rc = dsig_hss_sign_init(&st->s, k->priv, index, c);
    if (rc) {
        hss_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* Ops hook: the payload into the message hash. */
static int hss_sign_update(void *state, const uint8_t *data, size_t len)
{
    dsig_hss_sign_update(&((struct hss_state *)state)->s, data, len);
    return DSIG_OK;
}

/* Ops hook: the bottom level's LM-OTS signature; write the HSS signature. */
static int hss_sign_final(void *state, uint8_t *sig, size_t cap, size_t *sig_len)
{
    struct hss_state *st = state;
    if (cap < st->s.sig_len)
        return dsig_fail(DSIG_E_BUFFER, "HSS-LMS signature needs %zu bytes, buffer has %zu",
                         st->s.sig_len, cap);
    int rc = dsig_hss_sign_final(&st->s);
    if (rc)
        return rc;
    memcpy(sig, st->s.sig, st->s.sig_len);
    *sig_len = st->s.sig_len;
    return DSIG_OK;
}

/* Ops hook: parse the signature (layout checked here), start the bottom level's message hash. */
static int hss_verify_init(void **state, const dsig_alg *alg, const struct dsig_key *key,
                           const uint8_t *sig, size_t sig_len,
                           const dsig_sign_opts *opts)
{
    (void)opts; /* always NULL, as for sign_init */
    (void)alg;
    const struct hss_key *k = key->impl;
    if (!k)
        return dsig_fail(DSIG_E_KEY, "HSS-LMS: empty key");
    if (sig_len > HSS_SIG_MAX)
        return dsig_fail(DSIG_E_VERIFY, "HSS-LMS signature: %zu bytes is more than any parameter set "
                                        "makes", sig_len);
    struct hss_state *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    st->verify = 1;
    memcpy(st->pub, k->pub, k->pub_len);
    st->sig = dsig_malloc(sig_len ? sig_len : 1);
    if (!st->sig) {
        hss_free_state(st);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    if (sig_len)
        memcpy(st->sig, sig, sig_len);
    st->sig_len = sig_len;
    int rc = dsig_hss_verify_init(&st->v, st->pub, k->pub_len, st->sig, sig_len);
    if (rc) {
        hss_free_state(st);
        return rc;
    }
    *state = st;
    return DSIG_OK;
}

/* Ops hook: the payload into the message hash. */
static int hss_verify_update(void *state, const uint8_t *data, size_t len)
{
    dsig_hss_verify_update(&((struct hss_state *)state)->v, data, len);
    return DSIG_OK;
}

/* Ops hook: every level's check (RFC 8554 §6.3). */
static int hss_verify_final(void *state)
{
    return dsig_hss_verify_final(&((struct hss_state *)state)->v);
}

static const struct dsig_alg_ops hss_ops = {
    .sign_init = hss_sign_init,
    .sign_update = hss_sign_update,
    .sign_final = hss_sign_final,
    .verify_init = hss_verify_init,
    .verify_update = hss_verify_update,
    .verify_final = hss_verify_final,
    .free_state = hss_free_state,
};

static const dsig_alg a_hss_lms = {
    .name = "HSS-LMS",
    .family = "HSS-LMS",
    .description = "HSS/LMS stateful hash-based signatures (RFC 8554, SP 800-208; JOSE name after "
                   "RFC 8778); private key in a state file; default 2 levels of "
                   "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 (2^20 signatures)",
    .keytype = &dsig_keytype_hss_lms,
    .baseline = "SHA-256",
    .security_bits = 256,
    .flags = DSIG_ALG_STATEFUL | DSIG_ALG_PQ | DSIG_ALG_ONE_PASS | DSIG_ALG_RANDOMIZED,
    .sig_max = HSS_SIG_MAX,
    .min_key_bits = 0,
    .default_key_bits = 0,
    .ops = &hss_ops,
    .params = NULL,
};

const dsig_alg *const dsig_lms_algs[] = {&a_hss_lms, NULL};
