/*
 * tests/ct/test_ct_slhdsa.c — constant-time check of SLH-DSA key generation and signing ("ctgrind")
 * for SLH-DSA-SHA2-128f and SLH-DSA-SHAKE-128f (the s sets run the same code, only more of it).
 *
 * Run under valgrind memcheck (tests/ct/CMakeLists.txt). SK.seed, SK.prf and opt_rand are marked
 * undefined with DSIG_CT_SECRET (PK.seed is public); memcheck then reports every conditional jump and
 * every memory address that depends on them. The library declassifies only what FIPS 205 publishes: R
 * and the digest at the start of dsig_slhdsa_sign_digest (R is the signature's first n bytes, the
 * digest is H_msg of public values) and the public key after the JWK import's key generation. This
 * test declassifies PK.root after keygen and each signature once released. Any other report fails the
 * test (--error-exitcode).
 *
 * Paths: the internal functions (keygen, sign_internal hedged and deterministic), then the library's
 * own entry points — the AKP JWK import hook with a secret "priv" (PK.root recomputed and compared),
 * dsig_sign_ex (exact two-pass, with context, deterministic, HashSLH-DSA), one-pass streaming and the
 * two-pass API, with a secret opt_rand pinned through the test hook.
 *
 * `--self-check` runs the same paths and probes (ct_test.h) each signature's FORS part (the bytes after
 * R) before releasing it: memcheck must report every probe (tests/ct/expect_leak.sh --all-probes), or the
 * marks got lost on the way to the code the test is meant to check.
 */
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "ct_test.h"
#include "dsig/dsig.h"
#include "pq/slhdsa/slhdsa.h"
#include "pq/slhdsa/slhdsa_key.h"

#ifndef DSIG_CTGRIND
#error "tests/ct needs the valgrind markers (DSIG_CTGRIND)"
#endif

static uint8_t sig[17088];
static int self_check;

/* The FORS part of a signature (after R, which the library declassifies as it computes it), probed
 * before the test releases the signature (--self-check). */
static void probe_sig(size_t n, const char *what)
{
    if (self_check)
        ct_probe(sig + n, what);
}

/* Keygen and internal signing with SK.seed, SK.prf and opt_rand secret; 0 on success. */
static int check_internal(const dsig_slhdsa_params *p)
{
    uint8_t seeds[96], pk[64], sk[128], rnd[32];
    static const char msg[] = "ctgrind message";
    if (dsig_random_bytes(seeds, sizeof seeds) || dsig_random_bytes(rnd, sizeof rnd))
        return 1;
    DSIG_CT_SECRET(seeds, 2 * p->n); /* SK.seed ‖ SK.prf; PK.seed (seeds[2n..3n)) stays public */
    DSIG_CT_SECRET(rnd, sizeof rnd);
    int rc = dsig_slhdsa_keygen_internal(p, seeds, seeds + p->n, seeds + 2 * p->n, pk, sk);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    if (rc)
        return fprintf(stderr, "%s: keygen failed\n", p->name), 1;
    DSIG_CT_DECLASSIFY(pk, p->pk_bytes); /* PK.root is published */
    for (int det = 0; det < 2; det++) {
        rc = dsig_slhdsa_sign_internal(p, sk, (const uint8_t *)msg, sizeof msg - 1, det ? NULL : rnd, sig);
        DSIG_CT_DECLASSIFY(&rc, sizeof rc);
        if (rc)
            return fprintf(stderr, "%s: sign failed\n", p->name), 1;
        probe_sig(p->n, det ? "an internal deterministic signature" : "an internal hedged signature");
        DSIG_CT_DECLASSIFY(sig, p->sig_bytes); /* released */
        if (dsig_slhdsa_verify_internal(p, pk, (const uint8_t *)msg, sizeof msg - 1, sig, p->sig_bytes))
            return fprintf(stderr, "%s: signature does not verify\n", p->name), 1;
    }
    dsig_memzero(sk, sizeof sk);
    return 0;
}

/* One signature through the library: rc and the released signature declassified, then verified. */
static int lib_sign(const dsig_alg *alg, dsig_key *key, const dsig_sign_opts *o, int mode)
{
    static const char msg[] = "payload streamed through the signer";
    size_t sig_len = 0;
    int rc;
    if (mode == 0) {
        rc = dsig_sign_ex(alg, key, msg, sizeof msg - 1, sig, sizeof sig, &sig_len, o);
    } else {
        dsig_sign_ctx *c = NULL;
        rc = mode == 1 ? dsig_sign_init_ex(&c, alg, key, o) : dsig_sign_init_two_pass(&c, alg, key, o);
        DSIG_CT_DECLASSIFY(&rc, sizeof rc);
        for (int pass = 0; rc == DSIG_OK && pass < mode; pass++) {
            rc = dsig_sign_update(c, msg, 5);
            if (rc == DSIG_OK)
                rc = dsig_sign_update(c, msg + 5, sizeof msg - 6);
            if (rc == DSIG_OK && mode == 2 && pass == 0)
                rc = dsig_sign_next_pass(c);
        }
        if (c)
            rc = rc ? (dsig_sign_abort(c), rc) : dsig_sign_final(c, sig, sizeof sig, &sig_len);
    }
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    DSIG_CT_DECLASSIFY(&sig_len, sizeof sig_len);
    if (rc == DSIG_OK) {
        probe_sig(dsig_slhdsa_params_by_name(dsig_alg_name(alg))->n, "a library signature");
        DSIG_CT_DECLASSIFY(sig, sig_len); /* released */
        rc = dsig_verify_ex(alg, key, msg, sizeof msg - 1, sig, sig_len, o);
    }
    if (rc)
        fprintf(stderr, "%s: mode %d: %s\n", dsig_alg_name(alg), mode, dsig_last_error_detail());
    return rc;
}

/* The JWK import hook with a secret priv, then signing through the API; 0 on success. */
static int check_library(const dsig_alg *alg, const dsig_slhdsa_params *p)
{
    uint8_t seeds[96], pk[64], sk[128], rnd[32];
    if (dsig_random_bytes(seeds, sizeof seeds) || dsig_random_bytes(rnd, sizeof rnd))
        return 1;
    if (dsig_slhdsa_keygen_internal(p, seeds, seeds + p->n, seeds + 2 * p->n, pk, sk))
        return 1;
    DSIG_CT_SECRET(sk, 2 * p->n); /* "priv": SK.seed ‖ SK.prf secret, PK.seed ‖ PK.root public */
    DSIG_CT_SECRET(rnd, sizeof rnd);
    dsig_jwk_member m[2] = {{"pub", pk, p->pk_bytes}, {"priv", sk, p->sk_bytes}};
    struct dsig_key *key = dsig_key_new(alg->keytype);
    if (!key)
        return 1;
    int rc = alg->keytype->import_jwk(key, m, 2);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc); /* "pub"/PK.root consistency: public */
    if (rc)
        return fprintf(stderr, "%s: JWK import failed: %s\n", p->name, dsig_last_error_detail()), 1;
    key->alg = alg;
    rc = dsig_slhdsa_key_set_test_rnd(key, rnd);
    static const uint8_t ctx[] = "ctgrind context";
    const dsig_sign_opts opts[] = {
        {.context = ctx, .context_len = sizeof ctx - 1},          /* pure, hedged (opt_rand secret) */
        {.deterministic = 1},                                     /* pure, deterministic */
        {.context = ctx, .context_len = 3, .prehash = "SHA-256"}, /* HashSLH-DSA, hedged */
        {.deterministic = 1, .prehash = "SHAKE128"},              /* HashSLH-DSA, deterministic */
    };
    for (size_t i = 0; rc == DSIG_OK && i < 4; i++)
        rc = lib_sign(alg, key, &opts[i], 0);
    if (rc == DSIG_OK)
        rc = lib_sign(alg, key, &opts[0], 1); /* one-pass streaming: R = PRF_msg(SK.prf, opt_rand, ε) */
    if (rc == DSIG_OK)
        rc = lib_sign(alg, key, &opts[1], 2); /* two-pass API, deterministic */
    dsig_key_free(key);
    dsig_memzero(sk, sizeof sk);
    return rc != DSIG_OK;
}

int main(int argc, char **argv)
{
    self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    static const char *const names[] = {"SLH-DSA-SHA2-128f", "SLH-DSA-SHAKE-128f"};
    for (size_t i = 0; i < 2; i++) {
        const dsig_alg *alg = dsig_alg_by_name(names[i]);
        const dsig_slhdsa_params *p = dsig_slhdsa_params_by_name(names[i]);
        if (!alg || !p || check_internal(p) || check_library(alg, p))
            return 1;
    }
    if (self_check)
        return ct_probe_summary();
    printf("SLH-DSA-SHA2-128f/SHAKE-128f: key generation, internal signing (hedged, deterministic), JWK "
           "import with a secret priv, dsig_sign_ex (context, deterministic, HashSLH-DSA), one-pass and "
           "two-pass streaming: no secret-dependent branch or address reported\n");
    return 0;
}
