/*
 * tests/ct/test_ct_hbs.c — constant-time check of the stateful hash-based signers ("ctgrind"): HSS/LMS
 * (RFC 8554: one level LMS_SHA256_M32_H5 / LMOTS_SHA256_N32_W2) and XMSS^MT (RFC 8391:
 * XMSSMT-SHA2_20/4_256, four layers of 32-leaf trees): private key set-up (trees built from the secret
 * seed) and signing at several indices.
 *
 * Run under valgrind memcheck (tests/ct/CMakeLists.txt). The top-level SEED (HSS), SK_SEED and SK_PRF
 * (XMSS) are marked secret; I and PUB_SEED are public. The roots are declassified once computed (they
 * are the public key), each signature once released. The index is public. Any report fails the test.
 *
 * `--self-check` probes (ct_test.h) each root before declassifying it and each signature's OTS part:
 * memcheck must report each.
 */
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/bytes.h"
#include "core/internal.h"
#include "ct_test.h"
#include "dsig/dsig.h"
#include "pq/lms/lms.h"
#include "pq/xmss/xmss.h"

static uint8_t sig[16384];

static int check_hss(int self_check)
{
    unsigned L = 0;
    uint32_t lms[8], ots[8];
    uint8_t seed[32], I[16], pub[128];
    if (dsig_hss_parse_param("H5/W2", &L, lms, ots) || dsig_random_bytes(seed, sizeof seed) ||
        dsig_random_bytes(I, sizeof I))
        return 1;
    DSIG_CT_SECRET(seed, sizeof seed);
    dsig_hss_priv *k;
    int rc = dsig_hss_priv_new(&k, L, lms, ots, seed, I, 0);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    if (rc)
        return fprintf(stderr, "HSS: %s\n", dsig_last_error_detail()), 1;
    size_t pl = dsig_hss_priv_pub(k, pub);
    if (self_check)
        ct_probe(pub + pl - 1, "the HSS root");
    DSIG_CT_DECLASSIFY(pub, pl); /* the public key */
    static const char msg[] = "ctgrind: HSS";
    for (uint64_t q = 0; rc == DSIG_OK && q < 32; q += 13) {
        size_t sl = 0;
        rc = dsig_hss_sign(k, q, NULL, (const uint8_t *)msg, sizeof msg - 1, sig, sizeof sig, &sl);
        DSIG_CT_DECLASSIFY(&rc, sizeof rc);
        if (rc)
            break;
        DSIG_CT_DECLASSIFY(sig, sl); /* the library declassifies it too, as it is released */
        rc = dsig_hss_verify(pub, pl, (const uint8_t *)msg, sizeof msg - 1, sig, sl);
    }
    if (rc)
        fprintf(stderr, "HSS: sign / verify: %s\n", dsig_last_error_detail());
    dsig_hss_priv_free(k);
    return rc != DSIG_OK;
}

static int check_xmssmt(int self_check)
{
    const dsig_xmss_params *p = dsig_xmss_params_by_name("XMSSMT-SHA2_20/4_256");
    uint8_t sk_seed[XMSS_NMAX], sk_prf[XMSS_NMAX], pk[4 + 2 * XMSS_NMAX];
    if (!p || dsig_random_bytes(sk_seed, p->n) || dsig_random_bytes(sk_prf, p->n) ||
        dsig_random_bytes(pk + 4 + p->n, p->n))
        return 1;
    DSIG_CT_SECRET(sk_seed, p->n);
    DSIG_CT_SECRET(sk_prf, p->n);
    const uint8_t *pub_seed = pk + 4 + p->n;
    dsig_xmss_hash hc;
    dsig_xmss_trav *t = NULL;
    dsig_xmss_hash_init(&hc, p, pub_seed, sk_seed);
    int rc = dsig_xmss_keygen(&hc, pk + 4, &t);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    dsig_xmss_trav_free(t);
    dsig_xmss_hash_wipe(&hc);
    if (rc)
        return fprintf(stderr, "XMSS^MT keygen: %s\n", dsig_last_error_detail()), 1;
    if (self_check)
        ct_probe(pk + 4, "the XMSS^MT root");
    DSIG_CT_DECLASSIFY(pk + 4, p->n); /* root: the public key */
    dsig_store_be32(pk, p->oid);
    static const char msg[] = "ctgrind: XMSS^MT";
    for (uint64_t q = 0; rc == DSIG_OK && q < 70; q += 33) {
        rc = dsig_xmss_sign_raw(p, sk_seed, sk_prf, pub_seed, pk + 4, q, (const uint8_t *)msg, sizeof msg - 1, sig);
        DSIG_CT_DECLASSIFY(&rc, sizeof rc);
        if (rc)
            break;
        if (self_check)
            ct_probe(sig + p->idx_bytes + p->n, "an XMSS^MT signature");
        DSIG_CT_DECLASSIFY(sig, p->sig_bytes); /* released */
        rc = dsig_xmss_verify_raw(p, pk, (const uint8_t *)msg, sizeof msg - 1, sig, p->sig_bytes);
    }
    if (rc)
        fprintf(stderr, "XMSS^MT: sign / verify: %s\n", dsig_last_error_detail());
    return rc != DSIG_OK;
}

int main(int argc, char **argv)
{
    const int self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    if (check_hss(self_check) || check_xmssmt(self_check))
        return 1;
    if (self_check)
        return ct_probe_summary();
    printf("HSS-LMS (H5/W2), XMSS^MT (SHA2_20/4_256): private key set-up and signing at several indices: "
           "no secret-dependent branch or address reported\n");
    return 0;
}
