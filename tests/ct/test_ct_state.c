/*
 * tests/ct/test_ct_state.c — constant-time check of loading a stateful private key from its state
 * file ("ctgrind"): the path dsig_state_open takes after reading the file, on an image in memory (a
 * read from disk cannot be marked): the format's checksum over the secret section (state_format_encode,
 * state_format_decode), the provider's consistency check (check_private) and the rebuild of the key
 * from its seeds at the stored counter (state_key_from_private, as dsig_state_open calls it: the
 * provider's check_private, load_private — HSS-LMS trees from SEED, the XMSS^MT traversal from SK_SEED
 * checked against the stored root — and the rebuilt public key compared with the stored one).
 *
 * Run under valgrind memcheck (tests/ct/CMakeLists.txt). The secrets of the private section are marked
 * (HSS: SEED; XMSS^MT: SK_SEED and SK_PRF; parameter codes, I, PUB_SEED, the root and the saved
 * top-tree nodes are public) before the image is made, so its checksum is secret-derived as well. The
 * library declassifies only verdicts: whether the checksum matches and whether the seeds give the
 * stored root — and the rebuilt public key, which is public. Signing itself is test_ct_hbs's.
 *
 * `--self-check` probes (ct_test.h) the image's checksum and the loaded key's saved private section:
 * memcheck must report each.
 */
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "core/state_internal.h"
#include "core/stateful.h"
#include "ct_test.h"
#include "dsig/dsig.h"

/* The public key of `key` as its JWK "pub" (a copy in pub, *len bytes). */
static int pub_of(const struct dsig_key *key, uint8_t *pub, size_t cap, size_t *len)
{
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS] = {{0}};
    size_t n = DSIG_JWK_MAX_MEMBERS;
    int rc = key->type->export_jwk(key, 0, m, &n);
    *len = 0;
    for (size_t i = 0; rc == DSIG_OK && i < n; i++) {
        if (m[i].data && strcmp(m[i].name, "pub") == 0 && m[i].len <= cap)
            memcpy(pub, m[i].data, *len = m[i].len);
        dsig_xfree(m[i].data, m[i].len);
    }
    return rc != DSIG_OK || *len == 0;
}

/* One algorithm: generate, save the private section with its secrets marked, encode the image, then
 * decode and load it as dsig_state_open does. `secret_off`/`secret_len`: the secret bytes of the
 * private section. */
static int check(const char *name, const char *param, size_t secret_off, size_t secret_len, int self_check)
{
    const dsig_alg *alg = dsig_alg_by_name(name);
    const dsig_keygen_params kp = {.param = param};
    dsig_key *gen = NULL;
    if (!alg || dsig_key_generate(&gen, alg, &kp) != DSIG_OK)
        return fprintf(stderr, "%s: keygen: %s\n", name, dsig_last_error_detail()), 1;
    const struct dsig_stateful_ops *so = alg->keytype->stateful;
    static uint8_t pub[4096], pub2[4096];
    size_t pub_len = 0, pub2_len = 0, priv_len = 0, img_len = 0;
    uint8_t *priv = NULL, *img = NULL;
    if (pub_of(gen, pub, sizeof pub, &pub_len) || so->save_private(gen, &priv, &priv_len) ||
        secret_off + secret_len > priv_len)
        return fprintf(stderr, "%s: save: %s\n", name, dsig_last_error_detail()), 1;
    dsig_key_free(gen);
    DSIG_CT_SECRET(priv + secret_off, secret_len);
    int rc = state_format_encode(name, pub, pub_len, priv, priv_len, 7, NULL, &img, &img_len);
    dsig_xfree(priv, priv_len);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    if (rc)
        return fprintf(stderr, "%s: encode: %s\n", name, dsig_last_error_detail()), 1;
    if (self_check)
        ct_probe(img + img_len - 32, "the state image's checksum");
    struct state_fields f;
    struct dsig_key *k = NULL;
    rc = state_format_decode(img, img_len, "ct.state", &f);
    if (rc == DSIG_OK)
        rc = state_key_from_private(&k, alg, f.priv, f.priv_len, f.counter, f.pub, f.pub_len);
    if (rc == DSIG_OK)
        rc = pub_of(k, pub2, sizeof pub2, &pub2_len) ? DSIG_E_KEY : DSIG_OK;
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    DSIG_CT_DECLASSIFY(pub2, sizeof pub2); /* the loaded key's public key: public */
    if (rc == DSIG_OK && (pub2_len != pub_len || memcmp(pub, pub2, pub_len) != 0))
        rc = fprintf(stderr, "%s: the loaded key has another public key\n", name);
    if (rc == DSIG_OK && self_check) {
        uint8_t *again = NULL;
        size_t again_len = 0;
        if (so->save_private(k, &again, &again_len) == DSIG_OK) {
            ct_probe(again + secret_off, "the loaded key's private section");
            dsig_xfree(again, again_len);
        }
    }
    if (rc)
        fprintf(stderr, "%s: load: %s\n", name, dsig_last_error_detail());
    dsig_key_free(k);
    dsig_xfree(img, img_len);
    return rc != DSIG_OK;
}

int main(int argc, char **argv)
{
    const int self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    /* HSS private section: u32 L ‖ L × (u32 LMS type ‖ u32 LM-OTS type) ‖ SEED (32) ‖ I. XMSS: a
     * 10-byte header, then SK_SEED ‖ SK_PRF ‖ PUB_SEED ‖ root (n = 32 each) ‖ the top-tree nodes. */
    if (check("HSS-LMS", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W2", 4 + 8, 32, self_check) ||
        check("XMSSMT", "XMSSMT-SHA2_20/4_256", 10, 64, self_check))
        return 1;
    if (self_check)
        return ct_probe_summary();
    printf("state files of HSS-LMS (H5/W2) and XMSS^MT (SHA2_20/4_256): checksum, decoding, consistency "
           "check and key rebuild from the secret seeds: no secret-dependent branch or address reported\n");
    return 0;
}
