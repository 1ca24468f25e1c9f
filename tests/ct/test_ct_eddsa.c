/*
 * tests/ct/test_ct_eddsa.c — constant-time check of EdDSA signing ("ctgrind"): Ed25519 (libsodium group
 * operations, our one SHA-512 pass and the one-pass streaming signer of docs/eddsa-one-pass.md) and
 * Ed448 (libgcrypt group operations, our SHAKE256 pass).
 *
 * Ed448 is a known leak, run only with `--ed448`: libgcrypt 1.10's MPI arithmetic (gcry_mpi_ec_mul,
 * gcry_mpi_mod / mulm on the secret scalar and nonce) branches on the values of secret limbs — memcheck
 * reports them (docs/fuzzing.md, "Constant time"). The one known, expected branch of libsodium (is the
 * scalar zero) is suppressed in ct.supp with its reason.
 *
 * The private key enters as the base64url text of a JWK "d", marked secret: the base64url decoder, the
 * OKP key type's import hook (public key derived and compared with "x"), the exact RFC 8032 one-shot
 * signature and the randomized streaming one. The library declassifies the public key it derives from
 * "d" (it is "x", public); the test declassifies each signature once released. Any other report fails.
 *
 * The same is done for a DSig key (an OKP Ed25519 key bound to "DSig"): import of "d", then the
 * registry's DSig signing, which derives the batch-root signing key from the secret one
 * (src/classic/ed25519_derive.c: tweaked scalar, labelled prefix hash, the [s']B self-check), makes a
 * one-key batch and signs its root with the derived key. (test_ct_dsig marks the derived key and the
 * master seed itself; here the secret is the identity key the derivation starts from.)
 *
 * `--self-check` probes (ct_test.h) each signature's last byte (in S, the scalar half of the Ed25519
 * signature, or of DSig's root signature) before declassifying it: memcheck must
 * report each.
 */
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "ct_test.h"
#include "dsig/dsig.h"

static int check(const char *name, int self_check)
{
    const dsig_alg *alg = dsig_alg_by_name(name);
    dsig_key *gen, *pubk;
    if (!alg || dsig_key_generate(&gen, alg, NULL) != DSIG_OK || dsig_key_public(&pubk, gen) != DSIG_OK)
        return 1;
    /* x and d as the JWK would carry them. */
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS] = {{0}};
    size_t nm = DSIG_JWK_MAX_MEMBERS;
    if (alg->keytype->export_jwk(gen, 1, m, &nm) != DSIG_OK)
        return 1;
    dsig_key_free(gen);
    uint8_t x[64], raw[64], d[64];
    size_t xl = 0, dl = 0;
    for (size_t i = 0; i < nm; i++) {
        if (m[i].data && strcmp(m[i].name, "x") == 0)
            memcpy(x, m[i].data, xl = m[i].len);
        if (m[i].data && strcmp(m[i].name, "d") == 0)
            memcpy(raw, m[i].data, dl = m[i].len);
        dsig_xfree(m[i].data, m[i].len);
    }
    if (ct_secret_from_b64(raw, dl, d, sizeof d))
        return fprintf(stderr, "%s: base64url decode of d failed\n", name), 1;
    dsig_jwk_member im[2] = {{"x", x, xl}, {"d", d, dl}};
    struct dsig_key *key = dsig_key_new(alg->keytype);
    if (!key)
        return 1;
    int rc = alg->keytype->import_jwk(key, im, 2);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc); /* d gives x: not secret */
    dsig_memzero(d, sizeof d);
    if (rc)
        return fprintf(stderr, "%s: import: %s\n", name, dsig_last_error_detail()), 1;
    key->has_private = 1;
    /* The JWK's "alg" binds a DSig key (the import hook sees only the key members). */
    if ((alg->flags & DSIG_ALG_BOUND_KEY) && dsig_key_set_alg(key, alg) != DSIG_OK)
        return fprintf(stderr, "%s: binding: %s\n", name, dsig_last_error_detail()), 1;
    static uint8_t sig[2][4096];
    size_t sl[2] = {0, 0};
    static const char msg[] = "ctgrind: an EdDSA message, signed one-shot and streamed";
    rc = dsig_sign(alg, key, msg, sizeof msg - 1, sig[0], sizeof sig[0], &sl[0]);
    dsig_sign_ctx *c;
    if (!rc && !(rc = dsig_sign_init(&c, alg, key)) && !(rc = dsig_sign_update(c, msg, 9)) &&
        !(rc = dsig_sign_update(c, msg + 9, sizeof msg - 10)))
        rc = dsig_sign_final(c, sig[1], sizeof sig[1], &sl[1]);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    DSIG_CT_DECLASSIFY(sl, sizeof sl);
    for (int i = 0; rc == DSIG_OK && i < 2; i++) {
        if (self_check)
            ct_probe(sig[i] + sl[i] - 1, i ? "a streamed signature" : "a one-shot signature");
        DSIG_CT_DECLASSIFY(sig[i], sl[i]); /* released */
        rc = dsig_verify(alg, pubk, msg, sizeof msg - 1, sig[i], sl[i]);
    }
    if (rc)
        fprintf(stderr, "%s: sign / verify: %s\n", name, dsig_last_error_detail());
    dsig_key_free(key);
    dsig_key_free(pubk);
    return rc != DSIG_OK;
}

int main(int argc, char **argv)
{
    const int self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    const int ed448 = argc > 1 && strcmp(argv[1], "--ed448") == 0;
    if (check(ed448 ? "Ed448" : "Ed25519", self_check) || (!ed448 && check("DSig", self_check)))
        return 1;
    if (self_check)
        return ct_probe_summary();
    printf("%s: JWK import of a secret d, exact one-shot and streaming one-pass signatures: no "
           "secret-dependent branch or address reported\n", ed448 ? "Ed448" : "Ed25519 and DSig keys");
    return 0;
}
