/*
 * tests/ct/test_ct_mldsa.c — constant-time check of ML-DSA key generation and signing ("ctgrind").
 *
 * Run under valgrind memcheck (tests/ct/CMakeLists.txt). The seed ξ and the signing randomness are
 * marked undefined with DSIG_CT_SECRET; memcheck then reports every conditional jump and every memory
 * address that depends on them. The library declassifies only what FIPS 204 makes public or lets leak
 * (ρ and tr, which are in the public key; the rejection-loop decisions; the signature once released),
 * each at a DSIG_CT_DECLASSIFY with a comment. Any other report fails the test (--error-exitcode).
 *
 * `--self-check` branches on a secret on purpose: CTest expects valgrind to fail it, which proves the
 * harness can see a leak at all (a ctgrind test that cannot fail proves nothing).
 */
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "pq/mldsa/mldsa.h"

#ifndef DSIG_CTGRIND
#error "tests/ct needs the valgrind markers (DSIG_CTGRIND)"
#endif

/* A branch on a secret byte: memcheck must flag this. */
static int leaky(const uint8_t *secret)
{
    volatile int r = 0;
    if (secret[0] & 1)
        r = 1;
    return r;
}

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

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--self-check") == 0) {
        uint8_t s[1] = {0};
        if (dsig_random_bytes(s, 1))
            return 2;
        DSIG_CT_SECRET(s, 1);
        return leaky(s) * 0;
    }
    const dsig_mldsa_params *sets[] = {&dsig_mldsa44, &dsig_mldsa65, &dsig_mldsa87};
    for (size_t i = 0; i < 3; i++)
        if (check_set(sets[i], 3))
            return 1;
    printf("ML-DSA-44/65/87: key generation and signing, 3 rounds each, no secret-dependent branch "
           "or address reported\n");
    return 0;
}
