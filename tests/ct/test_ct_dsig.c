/*
 * tests/ct/test_ct_dsig.c — constant-time check of the DSig signer ("ctgrind"): batch key generation
 * (per-key seeds from the master seed, W-OTS+ / HORS secrets and chains, leaves, Merkle tree, the
 * Ed25519 root signature) and one-time signing, for every parameter preset (each with a batch of four
 * keys: the per-key code is the same for 128), then the registry algorithm "DSig" (a one-key batch
 * per signature) through dsig_hb_alg_sign_digest.
 *
 * Run under valgrind memcheck (tests/ct/CMakeLists.txt). The master seed and the root signing key
 * (scalar and nonce prefix, derived from the DSig key) are marked secret. What DSig publishes is declassified by this test when it is published: the batch
 * (leaves, tree, root signature: the batch message) after key generation, each signature once made.
 * pk_seed and nonce, derived from the secret per-key seed, stay marked until then: the code must not
 * branch on them either. Any report fails the test.
 *
 * `--self-check` probes (ct_test.h) the root and a signature's chain values before declassifying
 * them, for every preset and the registry signature: memcheck must report each.
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "core/ct.h"
#include "core/internal.h"
#include "ct_test.h"
#include "dsig/dsig.h"
#include "hash/blake3.h"
#include "hybrid/hb_internal.h"
#include "hybrid/runtime.h"

static uint8_t sig[70000];

/* A fresh DSig key, its root signing key (derived for batch roots alone) and a master seed; the
 * secrets marked. `pub` gets the public DSig key, `who` the runtime batch identity (signer 1). */
static int secrets(uint8_t master[DSIG_HB_SEED_BYTES], dsig_ed25519_dkey *root, dsig_hb_who *who, dsig_key **pub)
{
    const dsig_alg *alg = dsig_alg_by_name("DSig");
    dsig_key *key = NULL;
    if (!alg || dsig_random_bytes(master, DSIG_HB_SEED_BYTES) || dsig_key_generate(&key, alg, NULL) ||
        dsig_hb_key_root_secret(key, root) || (pub && dsig_key_public(pub, key))) {
        dsig_key_free(key);
        return 1;
    }
    dsig_key_free(key);
    who->domain = DSIG_HB_DOMAIN_RUNTIME;
    who->signer_id = 1;
    memcpy(who->root_pk, root->pk, sizeof who->root_pk);
    DSIG_CT_SECRET(master, DSIG_HB_SEED_BYTES);
    DSIG_CT_SECRET(root->s, sizeof root->s);
    DSIG_CT_SECRET(root->prefix, sizeof root->prefix);
    return 0;
}

/* One parameter set: key generation, publication of the batch, a signature of each of two keys. */
static int check_params(const dsig_hb_params *p, int self_check)
{
    uint8_t master[DSIG_HB_SEED_BYTES];
    dsig_ed25519_dkey root;
    dsig_hb_who who;
    if (secrets(master, &root, &who, NULL))
        return 1;
    dsig_hb_batch b;
    int rc = dsig_hb_keygen_batch(p, master, 9, &root, &who, &b);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    if (rc)
        return fprintf(stderr, "%s: keygen: %s\n", p->name, dsig_last_error_detail()), 1;
    if (self_check)
        ct_probe(b.root, p->name);
    /* Published in the batch message: the leaves, the tree over them, the root signature. */
    DSIG_CT_DECLASSIFY(b.nodes, (2 * (size_t)p->batch - 1) * 32);
    DSIG_CT_DECLASSIFY(b.root, sizeof b.root);
    DSIG_CT_DECLASSIFY(b.root_sig, sizeof b.root_sig);
    static const char msg[] = "ctgrind: a DSig message";
    for (uint32_t k = 0; k < 2 && rc == DSIG_OK; k++) {
        size_t sl = 0;
        rc = dsig_hb_sign(&b.keys[k * (p->batch - 1)], (const uint8_t *)msg, sizeof msg - 1, sig, sizeof sig, &sl);
        DSIG_CT_DECLASSIFY(&rc, sizeof rc);
        DSIG_CT_DECLASSIFY(&sl, sizeof sl);
        if (rc)
            break;
        if (self_check)
            ct_probe(sig + HB_OFF_VALUES, p->name);
        DSIG_CT_DECLASSIFY(sig, sl); /* released */
        rc = dsig_hb_verify_slow(p, sig, sl, (const uint8_t *)msg, sizeof msg - 1, &who);
        if (rc == DSIG_OK)
            rc = dsig_hb_verify_fast(p, &b, sig, sl, (const uint8_t *)msg, sizeof msg - 1);
    }
    if (rc)
        fprintf(stderr, "%s: sign / verify: %s\n", p->name, dsig_last_error_detail());
    dsig_hb_batch_free(&b);
    sodium_memzero(&root, sizeof root);
    return rc != DSIG_OK;
}

/* The registry algorithm "DSig": a digest signed with a one-key batch made under the master seed. */
static int check_registry(int self_check)
{
    uint8_t master[DSIG_HB_SEED_BYTES], digest[32];
    dsig_ed25519_dkey root;
    dsig_hb_who who;
    dsig_key *pub = NULL;
    if (secrets(master, &root, &who, &pub))
        return 1;
    static const char msg[] = "ctgrind: the registry DSig";
    dsig_blake3(msg, sizeof msg - 1, digest, sizeof digest);
    const dsig_alg *alg = dsig_alg_by_name("DSig");
    size_t sl = 0;
    int rc = alg ? dsig_hb_alg_sign_digest(master, &root, digest, sig, sizeof sig, &sl) : DSIG_E_UNSUPPORTED;
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    DSIG_CT_DECLASSIFY(&sl, sizeof sl);
    if (rc) {
        fprintf(stderr, "DSig: %s\n", dsig_last_error_detail());
        dsig_key_free(pub);
        sodium_memzero(&root, sizeof root);
        return 1;
    }
    if (self_check)
        ct_probe(sig + HB_OFF_VALUES, "registry DSig");
    DSIG_CT_DECLASSIFY(sig, sl);
    rc = dsig_verify(alg, pub, msg, sizeof msg - 1, sig, sl);
    dsig_key_free(pub);
    sodium_memzero(&root, sizeof root);
    if (rc)
        fprintf(stderr, "DSig: the registry signature does not verify: %s\n", dsig_last_error_detail());
    return rc != DSIG_OK;
}

int main(int argc, char **argv)
{
    const int self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    if (sodium_init() < 0)
        return 1;
    size_t n = 0;
    for (size_t i = 0; dsig_hb_presets[i]; i++, n++) {
        dsig_hb_params q;
        if (dsig_hb_params_with_batch(&q, dsig_hb_presets[i], 2) || check_params(&q, self_check))
            return fprintf(stderr, "preset %s failed\n", dsig_hb_presets[i]->name), 1;
    }
    if (check_registry(self_check))
        return 1;
    if (self_check)
        return ct_probe_summary();
    printf("DSig: %zu presets (key generation, batch, two one-time signatures each) and the registry "
           "signature: no secret-dependent branch or address reported\n", n);
    return 0;
}
