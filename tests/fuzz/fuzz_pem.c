/*
 * Fuzz target: PEM / DER keys (dsig_key_import_pem: PKCS#8 "PRIVATE KEY" and SubjectPublicKeyInfo
 * "PUBLIC KEY" through OpenSSL, then our key types' from_pkey). The input is
 *
 *   byte 0   bit 0 = DER mode: the rest is DER, armoured here as base64 PEM with the label of bit 1
 *            (0 "PRIVATE KEY", 1 "PUBLIC KEY"), so that mutations reach the ASN.1 and key checks
 *            rather than the armour; else the rest is the PEM text itself
 *   rest     DER bytes or PEM text
 *
 * Invariants (abort on violation): a refused key says why; a key that imports exports as PEM and JWK
 * (public, and private when it has one), both re-import to the same RFC 7638 thumbprint, a PUBLIC KEY
 * never yields a private key, and an imported private key signs what its public part verifies.
 */
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "fuzz_common.h"

#define FP_MAX_INPUT 16384u

/* Base64 PEM armour around DER. */
static char *armour(const uint8_t *der, size_t n, const char *label, size_t *len)
{
    size_t cap = 4 * ((n + 2) / 3) + n / 48 + 128;
    char *pem = malloc(cap);
    FUZZ_CHECK(pem != NULL, "out of memory");
    size_t o = (size_t)snprintf(pem, cap, "-----BEGIN %s-----\n", label);
    for (size_t i = 0; i < n; i += 48) {
        size_t k = n - i < 48 ? n - i : 48;
        o += (size_t)EVP_EncodeBlock((unsigned char *)pem + o, der + i, (int)k);
        pem[o++] = '\n';
    }
    o += (size_t)snprintf(pem + o, cap - o, "-----END %s-----\n", label);
    *len = o;
    return pem;
}

/* Export (PEM and JWK, public or private), re-import, same thumbprint. */
static void round_trip(const dsig_key *k, const char *tp, int priv)
{
    char *out = NULL, tp2[DSIG_THUMBPRINT_LEN];
    size_t ol = 0;
    dsig_key *k2 = NULL;
    if (dsig_key_export_pem(k, priv, &out, &ol) == DSIG_OK) {
        FUZZ_CHECK(dsig_key_import_pem(&k2, out, ol) == DSIG_OK, "our PEM export does not re-import: %s (%s)", out,
                   dsig_last_error_detail());
        FUZZ_CHECK(dsig_jwk_thumbprint(k2, tp2) == DSIG_OK && strcmp(tp, tp2) == 0, "PEM round trip changed the key");
        FUZZ_CHECK(dsig_key_has_private(k2) == priv, "PEM round trip: private part %d, expected %d",
                   dsig_key_has_private(k2), priv);
        dsig_key_free(k2);
        dsig_free(out);
    }
    if (dsig_jwk_export(k, priv, &out, &ol) == DSIG_OK) {
        FUZZ_CHECK(dsig_jwk_import(&k2, out, ol) == DSIG_OK, "JWK export of a PEM key does not re-import: %s", out);
        FUZZ_CHECK(dsig_jwk_thumbprint(k2, tp2) == DSIG_OK && strcmp(tp, tp2) == 0, "JWK round trip changed the key");
        dsig_key_free(k2);
        dsig_free(out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FP_MAX_INPUT)
        return 0;
    const unsigned mode = data[0];
    size_t len;
    char *text;
    if (mode & 1)
        text = armour(data + 1, size - 1, (mode & 2) ? "PUBLIC KEY" : "PRIVATE KEY", &len);
    else
        text = (char *)fuzz_dup(data + 1, len = size - 1);
    dsig_key *k = NULL;
    int rc = dsig_key_import_pem(&k, text, len);
    if (rc) {
        fuzz_check_detail(rc, "dsig_key_import_pem");
    } else {
        const int public_block = memmem(text, len, "-----BEGIN PUBLIC KEY-----", 26) != NULL;
        FUZZ_CHECK(!public_block || !dsig_key_has_private(k), "a PUBLIC KEY block gave a private key");
        char tp[DSIG_THUMBPRINT_LEN];
        FUZZ_CHECK(dsig_jwk_thumbprint(k, tp) == DSIG_OK, "thumbprint of an imported PEM key");
        round_trip(k, tp, 0);
        if (dsig_key_has_private(k))
            round_trip(k, tp, 1);
        fuzz_check_key_pair(k);
        dsig_key_free(k);
    }
    free(text);
    /* OpenSSL keeps the last errors of the thread's queue (a refused key or signature leaves them),
     * with strings allocated for each: an input would end with more allocations than frees, and
     * libFuzzer then runs LeakSanitizer's whole-heap scan after it — 90 % of this harness's time.
     * Emptying the queue keeps each input balanced; a real leak still triggers the scan. */
    ERR_clear_error();
    return 0;
}

/* Seeds: every PEM-capable JOSE key exported private and public, as text and as bare DER. */
static void seeds(void)
{
    const fuzz_keys *fk = fuzz_get_keys();
    for (size_t i = 0; i < fk->n + 1; i++) {
        dsig_key *own = NULL;
        const dsig_key *k = i < fk->n ? fk->key[i] : NULL;
        if (!k) { /* and one RSA key (the JOSE key set has none) */
            static const uint8_t seed[32] = "dsig fuzz PEM RSA seed.........";
            dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
            if (dsig_key_generate(&own, dsig_alg_by_name("RS256"), &kp) != DSIG_OK)
                continue;
            k = own;
        }
        for (int priv = 0; priv < 2; priv++) {
            char *pem;
            size_t pl;
            if (dsig_key_export_pem(k, priv, &pem, &pl) != DSIG_OK)
                continue;
            fuzz_seed2("\0", 1, pem, pl);
            /* The DER inside the armour. */
            char *b = strchr(pem, '\n'), *e = strstr(pem, "-----END");
            static uint8_t der[16384], clean[16384];
            size_t cl = 0;
            for (char *p = b; p && p < e; p++)
                if (*p != '\n')
                    clean[cl++] = (uint8_t)*p;
            int dl = EVP_DecodeBlock(der, clean, (int)cl);
            while (dl > 0 && cl && clean[cl - 1] == '=') /* EVP_DecodeBlock counts the padding */
                cl--, dl--;
            if (dl > 0) {
                const uint8_t m = (uint8_t)(priv ? 1 : 3);
                fuzz_seed2(&m, 1, der, (size_t)dl);
            }
            dsig_free(pem);
        }
        dsig_key_free(own);
    }
}

FUZZ_SEED_GENERATOR(seeds)
