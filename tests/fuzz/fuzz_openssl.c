/*
 * Differential target: our verifiers against OpenSSL 3's on the classical algorithms — MACs (HMAC-SHA-2,
 * HMAC-SHA-3, HMAC-SM3, KMAC, and CMAC-AES, which is written here), RSASSA-PKCS1-v1_5 and PSS, ECDSA
 * (JOSE R ‖ S), Ed25519, Ed448 and SM2 (ours on libgcrypt). Same key (the harness's key of the
 * algorithm, handed to OpenSSL as PEM or raw MAC key bytes), same message, a fuzzed signature: the
 * verdicts must agree. The input is
 *
 *   byte 0   algorithm (index into the table below, modulo its size)
 *   byte 1   bit 0: patch mode — rest = 5-byte edits (fuzz_patch) applied to our own signature of a
 *            fixed message (made once: signing at every input would cost more than both verifications);
 *            else raw mode — u16le message length, message, then the signature bytes
 *
 * Invariant (abort on violation): dsig_verify accepts iff OpenSSL accepts; in patch mode without
 * effective edits both accept (our signatures are valid for OpenSSL too).
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "core/internal.h"
#include "fuzz_common.h"

#define FO_MAX_INPUT 16384u

enum kind { MAC_HMAC, MAC_KMAC, MAC_CMAC, SIG_PKCS1, SIG_PSS, SIG_ECDSA, SIG_EDDSA, SIG_SM2 };

/* The JOSE name, how OpenSSL verifies it, and its digest / cipher / MAC size. */
static const struct fo_alg {
    const char *name;
    enum kind kind;
    const char *sub; /* digest (HMAC, RSA, ECDSA, SM2) or cipher (CMAC) */
    size_t size;     /* KMAC output bytes; ECDSA: bytes of R (and of S) */
} table[] = {
    {"HS256", MAC_HMAC, "SHA256", 0},           {"HS384", MAC_HMAC, "SHA384", 0},
    {"HS512", MAC_HMAC, "SHA512", 0},           {"HMAC-SHA3-256", MAC_HMAC, "SHA3-256", 0},
    {"HMAC-SHA3-384", MAC_HMAC, "SHA3-384", 0}, {"HMAC-SHA3-512", MAC_HMAC, "SHA3-512", 0},
    {"HMAC-SM3", MAC_HMAC, "SM3", 0},           {"KMAC128", MAC_KMAC, NULL, 32},
    {"KMAC256", MAC_KMAC, NULL, 64},            {"CMAC-AES-128", MAC_CMAC, "AES-128-CBC", 0},
    {"CMAC-AES-192", MAC_CMAC, "AES-192-CBC", 0}, {"CMAC-AES-256", MAC_CMAC, "AES-256-CBC", 0},
    {"RS256", SIG_PKCS1, "SHA256", 0},          {"RS384", SIG_PKCS1, "SHA384", 0},
    {"RS512", SIG_PKCS1, "SHA512", 0},          {"PS256", SIG_PSS, "SHA256", 0},
    {"PS384", SIG_PSS, "SHA384", 0},            {"PS512", SIG_PSS, "SHA512", 0},
    {"ES256", SIG_ECDSA, "SHA256", 32},         {"ES384", SIG_ECDSA, "SHA384", 48},
    {"ES512", SIG_ECDSA, "SHA512", 66},         {"Ed25519", SIG_EDDSA, NULL, 0},
    {"Ed448", SIG_EDDSA, NULL, 0},              {"SM2-SM3", SIG_SM2, "SM3", 32},
};
#define N_TABLE (sizeof table / sizeof table[0])

static struct {
    int ready;
    size_t alg[N_TABLE];     /* registry index */
    EVP_PKEY *pkey[N_TABLE]; /* the public key for OpenSSL (signatures) */
    uint8_t mac_key[N_TABLE][128];
    size_t mac_key_len[N_TABLE];
    uint8_t *base[N_TABLE]; /* our signature of fixed_msg */
    size_t base_len[N_TABLE];
} S;

static const char fixed_msg[] = "OpenSSL and dsig must agree.";

static void init(void)
{
    if (S.ready)
        return;
    S.ready = 1;
    for (size_t t = 0; t < N_TABLE; t++) {
        size_t i = 0;
        while (i < fuzz_alg_count() && strcmp(dsig_alg_name(dsig_alg_at(i)), table[t].name) != 0)
            i++;
        FUZZ_CHECK(i < fuzz_alg_count(), "%s is not registered", table[t].name);
        S.alg[t] = i;
        const fuzz_alg *A = fuzz_alg_get(i);
        S.base[t] = malloc(dsig_alg_sig_max(A->alg));
        FUZZ_CHECK(S.base[t] && dsig_sign(A->alg, A->key, fixed_msg, sizeof fixed_msg - 1, S.base[t],
                                          dsig_alg_sig_max(A->alg), &S.base_len[t]) == DSIG_OK,
                   "sign %s: %s", table[t].name, dsig_last_error_detail());
        if (table[t].kind <= MAC_CMAC) {
            uint8_t m[160];
            size_t ml = fuzz_key_members(A->key, m, sizeof m);
            FUZZ_CHECK(ml > 2 && ml - 2 <= sizeof S.mac_key[t], "MAC key of %s", table[t].name);
            S.mac_key_len[t] = ml - 2; /* one member, "k", after its u16 length */
            memcpy(S.mac_key[t], m + 2, ml - 2);
            continue;
        }
        char *pem;
        size_t pl;
        FUZZ_CHECK(dsig_key_export_pem(A->pub, 0, &pem, &pl) == DSIG_OK, "PEM of %s: %s", table[t].name,
                   dsig_last_error_detail());
        BIO *b = BIO_new_mem_buf(pem, (int)pl);
        S.pkey[t] = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
        BIO_free(b);
        dsig_free(pem);
        FUZZ_CHECK(S.pkey[t] != NULL, "OpenSSL cannot read our %s public key", table[t].name);
    }
}

/* OpenSSL's MAC of msg, compared with sig in constant time: 1 valid, 0 not. */
static int openssl_mac(size_t t, const uint8_t *msg, size_t ml, const uint8_t *sig, size_t sl)
{
    const struct fo_alg *a = &table[t];
    static const char *const macs[] = {"HMAC", "KMAC-128", "CMAC"};
    const char *mac = a->kind == MAC_HMAC ? macs[0] : a->kind == MAC_CMAC ? macs[2] : a->size == 32 ? macs[1] : "KMAC-256";
    EVP_MAC *m = EVP_MAC_fetch(NULL, mac, NULL);
    EVP_MAC_CTX *c = m ? EVP_MAC_CTX_new(m) : NULL;
    OSSL_PARAM prm[2] = {OSSL_PARAM_END, OSSL_PARAM_END};
    size_t size = a->size;
    if (a->kind == MAC_HMAC)
        prm[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)a->sub, 0);
    else if (a->kind == MAC_CMAC)
        prm[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, (char *)a->sub, 0);
    else
        prm[0] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size);
    uint8_t out[64];
    size_t ol = 0;
    FUZZ_CHECK(c && EVP_MAC_init(c, S.mac_key[t], S.mac_key_len[t], prm) == 1 && EVP_MAC_update(c, msg, ml) == 1 &&
                   EVP_MAC_final(c, out, &ol, sizeof out) == 1,
               "OpenSSL %s", a->name);
    EVP_MAC_CTX_free(c);
    EVP_MAC_free(m);
    return sl == ol && CRYPTO_memcmp(out, sig, ol) == 0;
}

/* JOSE R ‖ S (each `size` bytes) as a DER ECDSA-Sig-Value; 0 if it cannot be one. */
static size_t rs_to_der(const uint8_t *sig, size_t sl, size_t size, uint8_t *der, size_t cap)
{
    if (sl != 2 * size)
        return 0;
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, (int)size, NULL), *s = BN_bin2bn(sig + size, (int)size, NULL);
    FUZZ_CHECK(es && r && s && ECDSA_SIG_set0(es, r, s) == 1, "out of memory");
    int n = i2d_ECDSA_SIG(es, NULL);
    uint8_t *p = der;
    FUZZ_CHECK(n > 0 && (size_t)n <= cap && i2d_ECDSA_SIG(es, &p) == n, "DER of R, S");
    ECDSA_SIG_free(es);
    return (size_t)n;
}

/* OpenSSL's verdict on a signature: 1 valid, 0 not. */
static int openssl_verify(size_t t, const uint8_t *msg, size_t ml, const uint8_t *sig, size_t sl)
{
    const struct fo_alg *a = &table[t];
    if (a->kind <= MAC_CMAC)
        return openssl_mac(t, msg, ml, sig, sl);
    uint8_t der[512];
    if (a->kind == SIG_ECDSA || a->kind == SIG_SM2) {
        if (!(sl = rs_to_der(sig, sl, a->size, der, sizeof der)))
            return 0;
        sig = der;
    }
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = NULL;
    if (a->kind == SIG_SM2) {
        /* The default distinguishing ID of GB/T 32918.2 (docs/regional.md), set before the digest init. */
        pc = EVP_PKEY_CTX_new(S.pkey[t], NULL);
        FUZZ_CHECK(pc && EVP_PKEY_CTX_set1_id(pc, "1234567812345678", 16) > 0, "SM2 ID");
        EVP_MD_CTX_set_pkey_ctx(c, pc);
    }
    EVP_PKEY_CTX *vc = NULL;
    FUZZ_CHECK(c && EVP_DigestVerifyInit(c, &vc, a->sub ? EVP_get_digestbyname(a->sub) : NULL, NULL, S.pkey[t]) == 1,
               "OpenSSL verify init %s", a->name);
    if (a->kind == SIG_PSS)
        FUZZ_CHECK(EVP_PKEY_CTX_set_rsa_padding(vc, RSA_PKCS1_PSS_PADDING) > 0 &&
                       EVP_PKEY_CTX_set_rsa_pss_saltlen(vc, RSA_PSS_SALTLEN_DIGEST) > 0,
                   "PSS parameters");
    int ok = EVP_DigestVerify(c, sig, sl, msg, ml) == 1;
    EVP_MD_CTX_free(c);
    EVP_PKEY_CTX_free(pc);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > FO_MAX_INPUT)
        return 0;
    init();
    fuzz_in in = {data, size};
    const size_t t = fuzz_u8(&in) % N_TABLE;
    const unsigned mode = fuzz_u8(&in);
    const fuzz_alg *A = fuzz_alg_get(S.alg[t]);
    const size_t cap = dsig_alg_sig_max(A->alg) + 64;
    uint8_t *sig = malloc(cap), *msg;
    FUZZ_CHECK(sig != NULL, "out of memory");
    size_t sl, ml, rl;
    int untouched = 0;
    if (mode & 1) {
        const uint8_t *ed = fuzz_take(&in, in.n, &rl);
        msg = fuzz_dup(fixed_msg, ml = sizeof fixed_msg - 1);
        sl = fuzz_patch(S.base[t], S.base_len[t], ed, rl, sig, 64);
        untouched = sl == S.base_len[t] && memcmp(sig, S.base[t], sl) == 0;
    } else {
        const uint8_t *m = fuzz_take(&in, fuzz_u16(&in), &ml);
        msg = fuzz_dup(m, ml);
        const uint8_t *rest = fuzz_take(&in, in.n, &rl);
        sl = rl < cap ? rl : cap;
        memcpy(sig, rest, sl);
    }
    uint8_t *s = fuzz_dup(sig, sl);
    const int ours = dsig_verify(A->alg, A->pub, msg, ml, s, sl) == DSIG_OK;
    const int theirs = openssl_verify(t, msg, ml, s, sl);
    FUZZ_CHECK(ours == theirs, "%s: dsig_verify says %s, OpenSSL says %s (signature of %zu bytes)", table[t].name,
               ours ? "valid" : "invalid", theirs ? "valid" : "invalid", sl);
    FUZZ_CHECK(!untouched || ours, "%s: our own signature does not verify", table[t].name);
    free(s);
    free(sig);
    free(msg);
    /* OpenSSL keeps the last errors of the thread's queue (a refused key or signature leaves them),
     * with strings allocated for each: an input would end with more allocations than frees, and
     * libFuzzer then runs LeakSanitizer's whole-heap scan after it — 90 % of this harness's time.
     * Emptying the queue keeps each input balanced; a real leak still triggers the scan. */
    ERR_clear_error();
    return 0;
}

/* Seeds: per algorithm, an unedited patch (our signature as is), two no-op edits, and our signature
 * of another message in raw mode. */
static void seeds(void)
{
    init();
    static const char msg[] = "A raw-mode message.";
    for (size_t t = 0; t < N_TABLE; t++) {
        const fuzz_alg *A = fuzz_alg_get(S.alg[t]);
        static uint8_t sig[8192];
        size_t sl = 0, bl = S.base_len[t];
        FUZZ_CHECK(dsig_sign(A->alg, A->key, msg, sizeof msg - 1, sig, sizeof sig, &sl) == DSIG_OK, "seed");
        for (int v = 0; v < 3; v++) {
            const uint8_t head[2] = {(uint8_t)t, (uint8_t)(v < 2)};
            fuzz_seed_begin();
            fuzz_seed_add(head, 2);
            if (v == 1) {
                const uint8_t ed[10] = {1, 0, 0, 0, S.base[t][0], 1, (uint8_t)(bl - 1), (uint8_t)((bl - 1) >> 8), 0,
                                        S.base[t][bl - 1]};
                fuzz_seed_add(ed, 10);
            } else if (v == 2) {
                fuzz_seed_u16(sizeof msg - 1);
                fuzz_seed_add(msg, sizeof msg - 1);
                fuzz_seed_add(sig, sl);
            }
            fuzz_seed_end();
        }
    }
}

FUZZ_SEED_GENERATOR(seeds)
