/*
 * tests/ct/test_ct_mac.c — constant-time check of the MAC key paths ("ctgrind"): every HMAC (SHA-2,
 * SHA-3, SM3, Streebog), KMAC and CMAC-AES algorithm of the registry.
 *
 * Run under valgrind memcheck (tests/ct/CMakeLists.txt). The key enters as the base64url text of a
 * JWK "k" member, marked secret: the base64url decoder, the oct key type's import, the MAC computation in
 * one piece and streamed (OpenSSL EVP_MAC for HMAC/KMAC, the CMAC written here on AES-CBC, libgcrypt
 * for SM3/Streebog), and verification of a correct and of a wrong tag. The library declassifies only
 * the verification verdict (which tag bytes differ is not revealed, only whether any do); the test
 * declassifies each tag once released. Any other report fails the test.
 *
 * `--self-check` runs the same paths but branches on a byte of each tag before declassifying it
 * (ct_test.h): memcheck must report every one, which shows the key's secrecy reaches the tag through
 * every back-end (a test whose markers got lost on the way would pass whatever the code does).
 */
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "ct_test.h"
#include "dsig/dsig.h"

#ifndef DSIG_CTGRIND
#error "tests/ct needs the valgrind markers (DSIG_CTGRIND)"
#endif

/* Algorithms whose back-end is known not to be constant time, reported by this test and therefore left
 * out of its verdict (docs/fuzzing.md, "Constant time"): libgcrypt 1.10's Streebog compression indexes
 * lookup tables with state bytes and branches on the carries of its 512-bit additions, so an HMAC key
 * (hashed into the inner and outer states) reaches secret-dependent addresses. */
static const char *const known_leaks[] = {"HMAC-STREEBOG-256", "HMAC-STREEBOG-512"};

static int known_leak(const dsig_alg *a)
{
    for (size_t i = 0; i < sizeof known_leaks / sizeof known_leaks[0]; i++)
        if (strcmp(dsig_alg_name(a), known_leaks[i]) == 0)
            return 1;
    return 0;
}

/* One MAC algorithm: import a secret key, sign (one-shot and streamed), verify right and wrong tags. */
static int check_alg(const dsig_alg *alg, int self_check)
{
    uint8_t raw[64], k[64];
    size_t kl = dsig_alg_default_bits(alg) / 8;
    if (kl < 16 || kl > sizeof k)
        kl = 32;
    if (dsig_random_bytes(raw, kl))
        return 1;
    /* JWK "k" → bytes: the decoder sees the secret characters (jansson, which finds the member in the
     * JSON text, is not constant time: docs/fuzzing.md), then the key type's import hook. */
    if (ct_secret_from_b64(raw, kl, k, sizeof k))
        return fprintf(stderr, "%s: base64url decode of the key failed\n", dsig_alg_name(alg)), 1;
    dsig_jwk_member m[1] = {{"k", k, kl}};
    struct dsig_key *key = dsig_key_new(alg->keytype);
    if (!key)
        return 1;
    int rc = alg->keytype->import_jwk(key, m, 1);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc); /* success does not depend on the key's value */
    dsig_memzero(k, sizeof k);
    if (rc)
        return fprintf(stderr, "%s: import: %s\n", dsig_alg_name(alg), dsig_last_error_detail()), 1;
    key->has_private = 1;
    static const char msg[] = "ctgrind: a message of a few blocks for every MAC, "
                              "longer than one SHA-512 block and one AES block.......";
    uint8_t tag[128], tag2[128];
    size_t tl = 0, tl2 = 0;
    rc = dsig_sign(alg, key, msg, sizeof msg - 1, tag, sizeof tag, &tl);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    if (self_check)
        ct_probe(tag, dsig_alg_name(alg));
    DSIG_CT_DECLASSIFY(tag, sizeof tag); /* released */
    dsig_sign_ctx *c;
    if (!rc)
        rc = dsig_sign_init(&c, alg, key);
    if (!rc && !(rc = dsig_sign_update(c, msg, 7)) && !(rc = dsig_sign_update(c, msg + 7, sizeof msg - 8)))
        rc = dsig_sign_final(c, tag2, sizeof tag2, &tl2);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    DSIG_CT_DECLASSIFY(tag2, sizeof tag2);
    if (rc || tl != tl2 || memcmp(tag, tag2, tl) != 0)
        return fprintf(stderr, "%s: signing failed or streamed tag differs\n", dsig_alg_name(alg)), 1;
    int good = dsig_verify(alg, key, msg, sizeof msg - 1, tag, tl);
    tag[tl / 2] ^= 0x20;
    int bad = dsig_verify(alg, key, msg, sizeof msg - 1, tag, tl);
    dsig_key_free(key);
    if (good != DSIG_OK || bad != DSIG_E_VERIFY)
        return fprintf(stderr, "%s: verification %d / %d\n", dsig_alg_name(alg), good, bad), 1;
    return 0;
}

int main(int argc, char **argv)
{
    const int self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    size_t n = 0;
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (!(dsig_alg_flags(a) & DSIG_ALG_SYMMETRIC) || known_leak(a))
            continue;
        if (check_alg(a, self_check))
            return 1;
        n++;
    }
    if (self_check)
        return ct_probe_summary();
    printf("%zu MAC algorithms (all but the %zu known leaks of libgcrypt's Streebog): JWK import of a secret key, one-shot and streamed tags, verification of "
           "right and wrong tags: no secret-dependent branch or address reported\n",
           n, sizeof known_leaks / sizeof known_leaks[0]);
    return 0;
}
