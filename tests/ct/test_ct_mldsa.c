/*
 * tests/ct/test_ct_mldsa.c — constant-time check of ML-DSA key generation and signing ("ctgrind").
 *
 * Run under valgrind memcheck (tests/ct/CMakeLists.txt). The seed ξ and the signing randomness are
 * marked undefined with DSIG_CT_SECRET; memcheck then reports every conditional jump and every memory
 * address that depends on them. The library declassifies only what FIPS 204 makes public or lets leak
 * (ρ and tr, which are in the public key; the rejection-loop decisions; the signature once released),
 * each at a DSIG_CT_DECLASSIFY with a comment. Any other report fails the test (--error-exitcode).
 *
 * The second half runs the library's own entry points with the same markers: the JWK private-key path
 * (the base64url "priv" seed decoded, then the AKP key type's import hook: KeyGen from ξ and the
 * comparison with "pub") and streaming signing through dsig_sign_ex with a context, the deterministic
 * variant and HashML-DSA (SHA-512, SHAKE256), with a secret rnd pinned through the test hook.
 *
 * `--self-check` runs the same paths and probes (ct_test.h) what each computes from the marked
 * secrets: the packed private key of each key generation (K ‖ tr ‖ s1 ..., from ξ) and the seed the
 * JWK decoder returns. memcheck must report every probe (tests/ct/expect_leak.sh --all-probes), or the
 * marks got lost before the code the test is meant to check. The signatures cannot be probed: the
 * library declassifies c~, z and h as it packs them (they are the signature, FIPS 204 §3.6.3).
 */
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "ct_test.h"
#include "dsig/dsig.h"
#include "pq/mldsa/mldsa.h"
#include "pq/mldsa/mldsa_key.h"

#ifndef DSIG_CTGRIND
#error "tests/ct needs the valgrind markers (DSIG_CTGRIND)"
#endif

static int self_check;

/* Key generation and signing for one parameter set with secrets marked; returns 0 on success. */
static int check_set(const dsig_mldsa_params *p, unsigned rounds)
{
    static uint8_t pk[4096], sk[8192], sig[8192];
    uint8_t xi[32], rnd[32], mu[64];
    for (unsigned r = 0; r < rounds; r++) {
        if (dsig_random_bytes(xi, sizeof xi) || dsig_random_bytes(rnd, sizeof rnd) ||
            dsig_random_bytes(mu, sizeof mu))
            return 1;
        DSIG_CT_SECRET(xi, sizeof xi);
        DSIG_CT_SECRET(rnd, sizeof rnd);
        int rc = dsig_mldsa_keygen_internal(p, pk, sk, xi);
        DSIG_CT_DECLASSIFY(&rc, sizeof rc); /* success does not depend on ξ */
        if (rc)
            return fprintf(stderr, "%s: keygen failed\n", p->name), 1;
        DSIG_CT_DECLASSIFY(pk, p->pk_bytes); /* the public key is public */
        if (self_check && r == 0)
            ct_probe(sk + 32, "K in a packed private key"); /* after ρ, which is public */
        rc = dsig_mldsa_sign_mu(p, sig, sk, mu, rnd);
        DSIG_CT_DECLASSIFY(&rc, sizeof rc);
        if (rc)
            return fprintf(stderr, "%s: sign failed\n", p->name), 1;
        DSIG_CT_DECLASSIFY(sig, p->sig_bytes); /* released */
        DSIG_CT_DECLASSIFY(sk, p->sk_bytes);   /* done with it */
        if (dsig_mldsa_verify_mu(p, pk, mu, sig, p->sig_bytes) != DSIG_OK)
            return fprintf(stderr, "%s: signature does not verify\n", p->name), 1;
    }
    return 0;
}

/* Import ξ (secret) as a JWK private key through the base64url decoder and the AKP import hook, then
 * sign through the streaming API with several option sets; returns 0 on success. */
static int check_import_and_stream(const dsig_alg *alg, const dsig_mldsa_params *p)
{
    static uint8_t pk[4096], sk[8192], sig[8192];
    uint8_t xi[32], rnd[32], seed[32];
    char b64[64];
    size_t seed_len = 0, sig_len = 0, b64_len;
    if (dsig_random_bytes(xi, sizeof xi) || dsig_random_bytes(rnd, sizeof rnd))
        return 1;
    /* "pub" of the JWK: derived with public inputs before ξ is marked */
    if (dsig_mldsa_keygen_internal(p, pk, sk, xi))
        return fprintf(stderr, "%s: keygen failed\n", p->name), 1;
    dsig_b64url_encode(b64, xi, sizeof xi);
    b64_len = strlen(b64); /* 43: public */
    DSIG_CT_SECRET(b64, b64_len);
    DSIG_CT_SECRET(rnd, sizeof rnd);
    /* JWK "priv" → bytes: the decoder sees the secret characters */
    int rc = dsig_b64url_decode(b64, b64_len, seed, sizeof seed, &seed_len);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    if (rc || seed_len != sizeof seed)
        return fprintf(stderr, "%s: base64url decode of the seed failed\n", p->name), 1;
    if (self_check)
        ct_probe(seed, "the decoded JWK seed");
    /* the key type's JWK import hook, as dsig_jwk_import calls it */
    dsig_jwk_member m[2] = {{"pub", pk, p->pk_bytes}, {"priv", seed, sizeof seed}};
    struct dsig_key *key = dsig_key_new(alg->keytype);
    if (!key)
        return 1;
    rc = alg->keytype->import_jwk(key, m, 2);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc); /* "pub" matches: not secret */
    if (rc)
        return fprintf(stderr, "%s: JWK import hook failed: %s\n", p->name, dsig_last_error_detail()), 1;
    rc = dsig_mldsa_key_set_test_rnd(key, rnd);
    static const uint8_t ctx[] = "ctgrind context";
    const dsig_sign_opts opts[] = {
        {.context = ctx, .context_len = sizeof ctx - 1},           /* pure, hedged (rnd secret) */
        {.deterministic = 1},                                      /* pure, deterministic */
        {.context = ctx, .context_len = 3, .prehash = "SHA-512"}, /* HashML-DSA, hedged */
        {.deterministic = 1, .prehash = "SHAKE256"},               /* HashML-DSA, deterministic */
    };
    static const char msg[] = "payload streamed through the signer";
    for (size_t i = 0; rc == DSIG_OK && i < sizeof opts / sizeof opts[0]; i++) {
        rc = dsig_sign_ex(alg, key, msg, sizeof msg - 1, sig, sizeof sig, &sig_len, &opts[i]);
        DSIG_CT_DECLASSIFY(&rc, sizeof rc);
        DSIG_CT_DECLASSIFY(&sig_len, sizeof sig_len);
        if (rc == DSIG_OK) {
            DSIG_CT_DECLASSIFY(sig, sig_len); /* released */
            rc = dsig_verify_ex(alg, key, msg, sizeof msg - 1, sig, sig_len, &opts[i]);
        }
        if (rc)
            fprintf(stderr, "%s: streaming option set %zu: %s\n", p->name, i, dsig_last_error_detail());
    }
    /* Private JWK export: the key type hands out the seed and the encoder turns it into text. */
    dsig_jwk_member out[DSIG_JWK_MAX_MEMBERS] = {{0}};
    size_t nout = DSIG_JWK_MAX_MEMBERS;
    int erc = alg->keytype->export_jwk(key, 1, out, &nout);
    DSIG_CT_DECLASSIFY(&erc, sizeof erc);
    DSIG_CT_DECLASSIFY(&nout, sizeof nout);
    for (size_t i = 0; erc == DSIG_OK && i < nout; i++) {
        if (!out[i].data)
            continue;
        char text[8192];
        if (dsig_b64url_encoded_len(out[i].len) < sizeof text)
            dsig_b64url_encode(text, out[i].data, out[i].len);
        dsig_xfree(out[i].data, out[i].len);
    }
    if (erc)
        rc = erc;
    dsig_key_free(key);
    dsig_memzero(sk, sizeof sk);
    dsig_memzero(seed, sizeof seed);
    return rc != DSIG_OK;
}

int main(int argc, char **argv)
{
    self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    const dsig_mldsa_params *sets[] = {&dsig_mldsa44, &dsig_mldsa65, &dsig_mldsa87};
    for (size_t i = 0; i < 3; i++)
        if (check_set(sets[i], 3) || check_import_and_stream(dsig_alg_by_name(sets[i]->name), sets[i]))
            return 1;
    if (self_check)
        return ct_probe_summary();
    printf("ML-DSA-44/65/87: key generation and signing (3 rounds each), JWK seed import and streaming "
           "signing (context, deterministic, HashML-DSA): no secret-dependent branch or address reported\n");
    return 0;
}
