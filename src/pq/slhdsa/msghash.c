/*
 * src/pq/slhdsa/msghash.c — where the message enters SLH-DSA: PRF_msg and H_msg as streaming hashes
 * (FIPS 205 §11.1 SHAKE256; §11.2 HMAC-SHA-256/512 and SHA-256/512 + MGF1), the one-shot internal
 * functions (Algorithms 19/20) over them, and the external interfaces' M' encodings and pre-hash
 * (§10.2). SHA-256/512 for the payload are OpenSSL EVP digests fetched once per process, so an update
 * is exactly EVP_DigestUpdate (SHAKE: dsig_keccak_absorb).
 */
#include <pthread.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/internal.h"
#include "dsig/mem.h"
#include "pq/slhdsa/slhdsa.h"

enum { KIND_NONE = 0, KIND_PRF = 1, KIND_HMSG = 2 };

/* @spec FIPS 205 §10.2.2: the pre-hash functions and their DER-encoded OIDs (2.16.840.1.101.3.4.2.x). */
#define PH_OID(x) {0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, x}
static const dsig_slhdsa_prehash prehashes[] = {
    {"SHA-256", "SHA2-256", 32, PH_OID(0x01)},      {"SHA-384", "SHA2-384", 48, PH_OID(0x02)},
    {"SHA-512", "SHA2-512", 64, PH_OID(0x03)},      {"SHA-224", "SHA2-224", 28, PH_OID(0x04)},
    {"SHA-512/224", "SHA2-512/224", 28, PH_OID(0x05)},
    {"SHA-512/256", "SHA2-512/256", 32, PH_OID(0x06)},
    {"SHA3-224", "SHA3-224", 28, PH_OID(0x07)},     {"SHA3-256", "SHA3-256", 32, PH_OID(0x08)},
    {"SHA3-384", "SHA3-384", 48, PH_OID(0x09)},     {"SHA3-512", "SHA3-512", 64, PH_OID(0x0a)},
    {"SHAKE128", "SHAKE128", 32, PH_OID(0x0b)},     {"SHAKE256", "SHAKE256", 64, PH_OID(0x0c)},
};
#define N_PREHASH (sizeof prehashes / sizeof prehashes[0])

static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_sha256, *md_sha512;
static EVP_MD *md_pre[N_PREHASH];

/* pthread_once body: fetch the digests once (EVP_MD_fetch is costly; the objects are immutable). */
static void fetch_mds(void)
{
    md_sha256 = EVP_MD_fetch(NULL, "SHA2-256", NULL);
    md_sha512 = EVP_MD_fetch(NULL, "SHA2-512", NULL);
    for (size_t i = 0; i < N_PREHASH; i++)
        md_pre[i] = EVP_MD_fetch(NULL, prehashes[i].evp_name, NULL);
}

/* SHA-256 for category 1, SHA-512 for categories 3 and 5 (§11.2.1 vs §11.2.2). */
static const EVP_MD *sha2_md(const dsig_slhdsa_params *p)
{
    pthread_once(&md_once, fetch_mds);
    return p->n == 16 ? md_sha256 : md_sha512;
}

/* Start an EVP digest in h->md. */
static int md_start(dsig_slhdsa_msg *h, const EVP_MD *md)
{
    if (md == NULL)
        return dsig_fail(DSIG_E_CRYPTO, "SLH-DSA: SHA-2 digest unavailable in OpenSSL");
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL)
        return dsig_fail(DSIG_E_NOMEM, "SLH-DSA: out of memory for a digest context");
    if (EVP_DigestInit_ex(ctx, md, NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        return dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA digest init");
    }
    h->md = ctx;
    return DSIG_OK;
}

/* @spec FIPS 205 §11.1 PRF_msg = SHAKE256(SK.prf ‖ opt_rand ‖ M, 8n); §11.2 PRF_msg =
 * Trunc_n(HMAC-SHA-X(SK.prf, opt_rand ‖ M)) (RFC 2104: inner hash over (K ⊕ ipad) ‖ text). */
int dsig_slhdsa_prf_msg_init(dsig_slhdsa_msg *h, const dsig_slhdsa_params *p, const uint8_t *sk_prf,
                             const uint8_t *opt_rand)
{
    if (h == NULL || p == NULL || sk_prf == NULL || opt_rand == NULL)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA PRF_msg: NULL argument");
    memset(h, 0, sizeof *h);
    h->p = p;
    if (p->family == DSIG_SLHDSA_SHAKE) {
        dsig_shake256_init(&h->shake);
        dsig_keccak_absorb(&h->shake, sk_prf, p->n);
        dsig_keccak_absorb(&h->shake, opt_rand, p->n);
        h->kind = KIND_PRF;
        return DSIG_OK;
    }
    const EVP_MD *md = sha2_md(p);
    int rc = md_start(h, md);
    if (rc != DSIG_OK)
        return rc;
    size_t bs = p->n == 16 ? 64 : 128;
    uint8_t ipad[128];
    memset(ipad, 0x36, bs);
    memset(h->opad, 0x5c, bs);
    for (unsigned i = 0; i < p->n; i++) {
        ipad[i] ^= sk_prf[i];
        h->opad[i] ^= sk_prf[i];
    }
    int ok = EVP_DigestUpdate(h->md, ipad, bs) == 1 && EVP_DigestUpdate(h->md, opt_rand, p->n) == 1;
    dsig_memzero(ipad, sizeof ipad);
    if (!ok) {
        dsig_slhdsa_msg_abort(h);
        return dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA PRF_msg");
    }
    h->kind = KIND_PRF;
    return DSIG_OK;
}

/* @spec FIPS 205 §11.1 H_msg = SHAKE256(R ‖ PK.seed ‖ PK.root ‖ M, 8m); §11.2 H_msg =
 * MGF1-SHA-X(R ‖ PK.seed ‖ SHA-X(R ‖ PK.seed ‖ PK.root ‖ M), m): the inner hash streams. */
int dsig_slhdsa_h_msg_init(dsig_slhdsa_msg *h, const dsig_slhdsa_params *p, const uint8_t *r,
                           const uint8_t *pk)
{
    if (h == NULL || p == NULL || r == NULL || pk == NULL)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA H_msg: NULL argument");
    memset(h, 0, sizeof *h);
    h->p = p;
    if (p->family == DSIG_SLHDSA_SHAKE) {
        dsig_shake256_init(&h->shake);
        dsig_keccak_absorb(&h->shake, r, p->n);
        dsig_keccak_absorb(&h->shake, pk, 2 * (size_t)p->n);
        h->kind = KIND_HMSG;
        return DSIG_OK;
    }
    int rc = md_start(h, sha2_md(p));
    if (rc != DSIG_OK)
        return rc;
    memcpy(h->seed, r, p->n);
    memcpy(h->seed + p->n, pk, p->n);
    if (EVP_DigestUpdate(h->md, r, p->n) != 1 || EVP_DigestUpdate(h->md, pk, 2 * (size_t)p->n) != 1) {
        dsig_slhdsa_msg_abort(h);
        return dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA H_msg");
    }
    h->kind = KIND_HMSG;
    return DSIG_OK;
}

/* The per-chunk step: exactly one absorb / EVP_DigestUpdate. */
int dsig_slhdsa_msg_update(dsig_slhdsa_msg *h, const uint8_t *data, size_t len)
{
    if (h == NULL || h->kind == KIND_NONE)
        return dsig_fail(DSIG_E_STATE, "SLH-DSA message hash: update without init");
    if (len == 0)
        return DSIG_OK;
    if (data == NULL)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA message hash: NULL data");
    if (h->p->family == DSIG_SLHDSA_SHAKE) {
        dsig_keccak_absorb(&h->shake, data, len);
        return DSIG_OK;
    }
    if (EVP_DigestUpdate(h->md, data, len) != 1)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA message hash update");
    return DSIG_OK;
}

/* Finish PRF_msg (n bytes) or H_msg (m bytes) and release h. */
int dsig_slhdsa_msg_final(dsig_slhdsa_msg *h, uint8_t *out)
{
    if (h == NULL || h->kind == KIND_NONE)
        return dsig_fail(DSIG_E_STATE, "SLH-DSA message hash: final without init");
    if (out == NULL) {
        dsig_slhdsa_msg_abort(h);
        return dsig_fail(DSIG_E_ARG, "SLH-DSA message hash: NULL output");
    }
    const dsig_slhdsa_params *p = h->p;
    int rc = DSIG_OK;
    if (p->family == DSIG_SLHDSA_SHAKE) {
        dsig_shake_finalize(&h->shake);
        dsig_keccak_squeeze(&h->shake, out, h->kind == KIND_PRF ? p->n : p->m);
        dsig_slhdsa_msg_abort(h);
        return DSIG_OK;
    }
    EVP_MD_CTX *ctx = h->md;
    const EVP_MD *md = sha2_md(p);
    size_t bs = p->n == 16 ? 64 : 128;
    uint8_t inner[64], t[64];
    unsigned ilen = 0;
    if (EVP_DigestFinal_ex(ctx, inner, &ilen) != 1) {
        rc = dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA message hash final");
    } else if (h->kind == KIND_PRF) {
        /* HMAC outer hash: H((K ⊕ opad) ‖ inner), truncated to n bytes. */
        if (EVP_DigestInit_ex(ctx, md, NULL) != 1 || EVP_DigestUpdate(ctx, h->opad, bs) != 1 ||
            EVP_DigestUpdate(ctx, inner, ilen) != 1 || EVP_DigestFinal_ex(ctx, t, NULL) != 1)
            rc = dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA PRF_msg outer hash");
        else
            memcpy(out, t, p->n);
    } else {
        /* @spec RFC 8017 B.2.1 MGF1(seed = R ‖ PK.seed ‖ inner, m): Hash(seed ‖ I2OSP(ctr, 4)), ctr = 0.. */
        for (uint32_t ctr = 0, done = 0; done < p->m && rc == DSIG_OK; ctr++) {
            uint8_t cb[4] = {(uint8_t)(ctr >> 24), (uint8_t)(ctr >> 16), (uint8_t)(ctr >> 8),
                             (uint8_t)ctr};
            if (EVP_DigestInit_ex(ctx, md, NULL) != 1 ||
                EVP_DigestUpdate(ctx, h->seed, 2 * (size_t)p->n) != 1 ||
                EVP_DigestUpdate(ctx, inner, ilen) != 1 || EVP_DigestUpdate(ctx, cb, 4) != 1 ||
                EVP_DigestFinal_ex(ctx, t, NULL) != 1) {
                rc = dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA H_msg MGF1");
                break;
            }
            uint32_t take = p->m - done < ilen ? p->m - done : ilen;
            memcpy(out + done, t, take);
            done += take;
        }
    }
    dsig_memzero(inner, sizeof inner);
    dsig_memzero(t, sizeof t);
    dsig_slhdsa_msg_abort(h);
    return rc;
}

/* Release the digest context and wipe the state (keys, pads). */
void dsig_slhdsa_msg_abort(dsig_slhdsa_msg *h)
{
    if (h == NULL)
        return;
    if (h->md != NULL)
        EVP_MD_CTX_free(h->md); /* OpenSSL cleanses the digest state on free */
    dsig_keccak_wipe(&h->shake);
    dsig_memzero(h, sizeof *h);
}

/* R for one-pass signing: PRF_msg(SK.prf, opt_rand, empty message). */
int dsig_slhdsa_r_onepass(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *opt_rand,
                          uint8_t *r)
{
    if (p == NULL || sk == NULL)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA one-pass R: NULL argument");
    dsig_slhdsa_msg h;
    int rc = dsig_slhdsa_prf_msg_init(&h, p, sk + p->n, opt_rand);
    if (rc != DSIG_OK)
        return rc;
    return dsig_slhdsa_msg_final(&h, r);
}

/* PRF_msg or H_msg over prefix ‖ M (prefix may be empty), one shot. */
static int msg_hash_oneshot(dsig_slhdsa_msg *h, const uint8_t *prefix, size_t plen, const uint8_t *m,
                            size_t mlen, uint8_t *out)
{
    int rc = dsig_slhdsa_msg_update(h, prefix, plen);
    if (rc == DSIG_OK)
        rc = dsig_slhdsa_msg_update(h, m, mlen);
    if (rc != DSIG_OK) {
        dsig_slhdsa_msg_abort(h);
        return rc;
    }
    return dsig_slhdsa_msg_final(h, out);
}

/* Algorithm 19 over prefix ‖ M with opt_rand = addrnd or PK.seed. */
static int sign_with_prefix(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *prefix,
                            size_t plen, const uint8_t *m, size_t mlen, const uint8_t *addrnd,
                            uint8_t *sig)
{
    if (p == NULL || sk == NULL || sig == NULL || (m == NULL && mlen > 0))
        return dsig_fail(DSIG_E_ARG, "SLH-DSA sign: NULL argument");
    unsigned n = p->n;
    uint8_t r[DSIG_SLHDSA_NMAX], digest[DSIG_SLHDSA_MMAX];
    dsig_slhdsa_msg h;
    /* Deterministic variant: opt_rand = PK.seed (Algorithm 19 line 2 / §9.2). */
    int rc = dsig_slhdsa_prf_msg_init(&h, p, sk + n, addrnd != NULL ? addrnd : sk + 2 * n);
    if (rc == DSIG_OK)
        rc = msg_hash_oneshot(&h, prefix, plen, m, mlen, r);
    if (rc == DSIG_OK)
        rc = dsig_slhdsa_h_msg_init(&h, p, r, sk + 2 * n);
    if (rc == DSIG_OK)
        rc = msg_hash_oneshot(&h, prefix, plen, m, mlen, digest);
    if (rc == DSIG_OK)
        rc = dsig_slhdsa_sign_digest(p, sk, r, digest, sig);
    dsig_memzero(r, sizeof r);
    return rc;
}

/* Algorithm 20 over prefix ‖ M. */
static int verify_with_prefix(const dsig_slhdsa_params *p, const uint8_t *pk, const uint8_t *prefix,
                              size_t plen, const uint8_t *m, size_t mlen, const uint8_t *sig,
                              size_t sig_len)
{
    if (p == NULL || pk == NULL || (m == NULL && mlen > 0) || (sig == NULL && sig_len > 0))
        return dsig_fail(DSIG_E_ARG, "SLH-DSA verify: NULL argument");
    if (sig_len != p->sig_bytes)
        return dsig_fail(DSIG_E_VERIFY, "%s: signature is %zu bytes, expected %zu", p->name, sig_len,
                         p->sig_bytes);
    uint8_t digest[DSIG_SLHDSA_MMAX];
    dsig_slhdsa_msg h;
    int rc = dsig_slhdsa_h_msg_init(&h, p, sig, pk);
    if (rc == DSIG_OK)
        rc = msg_hash_oneshot(&h, prefix, plen, m, mlen, digest);
    if (rc == DSIG_OK)
        rc = dsig_slhdsa_verify_digest(p, pk, sig, digest);
    return rc;
}

/* @spec FIPS 205 Algorithm 19 slh_sign_internal. */
int dsig_slhdsa_sign_internal(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *m,
                              size_t mlen, const uint8_t *addrnd, uint8_t *sig)
{
    return sign_with_prefix(p, sk, NULL, 0, m, mlen, addrnd, sig);
}

/* @spec FIPS 205 Algorithm 20 slh_verify_internal. */
int dsig_slhdsa_verify_internal(const dsig_slhdsa_params *p, const uint8_t *pk, const uint8_t *m,
                                size_t mlen, const uint8_t *sig, size_t sig_len)
{
    return verify_with_prefix(p, pk, NULL, 0, m, mlen, sig, sig_len);
}

/* Look a pre-hash function up by FIPS 205 / OpenSSL name. */
const dsig_slhdsa_prehash *dsig_slhdsa_prehash_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < N_PREHASH; i++)
        if (strcmp(prehashes[i].name, name) == 0 || strcmp(prehashes[i].evp_name, name) == 0)
            return &prehashes[i];
    return NULL;
}

/* @spec FIPS 205 Algorithm 22 line 9: 0 ‖ |ctx| ‖ ctx. */
int dsig_slhdsa_pure_prefix(const uint8_t *ctx, size_t ctx_len,
                            uint8_t out[DSIG_SLHDSA_PREFIX_MAX], size_t *out_len)
{
    if (ctx_len > 255)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA: context string is %zu bytes (at most 255)", ctx_len);
    if (out == NULL || out_len == NULL || (ctx == NULL && ctx_len > 0))
        return dsig_fail(DSIG_E_ARG, "SLH-DSA: NULL argument to pure_prefix");
    out[0] = 0;
    out[1] = (uint8_t)ctx_len;
    if (ctx_len > 0)
        memcpy(out + 2, ctx, ctx_len);
    *out_len = 2 + ctx_len;
    return DSIG_OK;
}

/* @spec FIPS 205 Algorithm 23 line 26: 1 ‖ |ctx| ‖ ctx ‖ OID (PH(M) follows). */
int dsig_slhdsa_prehash_prefix(const dsig_slhdsa_prehash *ph, const uint8_t *ctx, size_t ctx_len,
                               uint8_t out[DSIG_SLHDSA_PREFIX_MAX], size_t *out_len)
{
    if (ph == NULL)
        return dsig_fail(DSIG_E_ARG, "SLH-DSA: no pre-hash function given");
    int rc = dsig_slhdsa_pure_prefix(ctx, ctx_len, out, out_len);
    if (rc != DSIG_OK)
        return rc;
    out[0] = 1;
    memcpy(out + *out_len, ph->oid, sizeof ph->oid);
    *out_len += sizeof ph->oid;
    return DSIG_OK;
}

/* PH(M) with the digest fetched once (SHAKE128/256 with 256/512-bit output, §10.2.2). */
int dsig_slhdsa_prehash_compute(const dsig_slhdsa_prehash *ph, const uint8_t *m, size_t mlen,
                                uint8_t *out)
{
    if (ph == NULL || out == NULL || (m == NULL && mlen > 0))
        return dsig_fail(DSIG_E_ARG, "SLH-DSA pre-hash: NULL argument");
    pthread_once(&md_once, fetch_mds);
    const EVP_MD *md = md_pre[ph - prehashes];
    if (md == NULL)
        return dsig_fail(DSIG_E_UNSUPPORTED, "SLH-DSA pre-hash %s unavailable in OpenSSL", ph->name);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL)
        return dsig_fail(DSIG_E_NOMEM, "SLH-DSA pre-hash: out of memory");
    int xof = (EVP_MD_get_flags(md) & EVP_MD_FLAG_XOF) != 0;
    int ok = EVP_DigestInit_ex(ctx, md, NULL) == 1 && EVP_DigestUpdate(ctx, m, mlen) == 1 &&
             (xof ? EVP_DigestFinalXOF(ctx, out, ph->out_len) == 1
                  : EVP_DigestFinal_ex(ctx, out, NULL) == 1);
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "SLH-DSA pre-hash");
    return DSIG_OK;
}

/* The pre-hash's EVP_MD (fetched once per process) for streaming PH(M); NULL if OpenSSL lacks it. */
const void *dsig_slhdsa_prehash_md(const dsig_slhdsa_prehash *ph)
{
    if (ph == NULL)
        return NULL;
    pthread_once(&md_once, fetch_mds);
    return md_pre[ph - prehashes];
}

/* M' prefix for the external interfaces, and PH(M) in place of M for HashSLH-DSA. */
static int ext_prefix(const dsig_slhdsa_prehash *ph, const uint8_t **m, size_t *mlen,
                      int m_is_digest, const uint8_t *ctx, size_t ctx_len,
                      uint8_t prefix[DSIG_SLHDSA_PREFIX_MAX], size_t *plen, uint8_t phm[64])
{
    if (ph == NULL)
        return dsig_slhdsa_pure_prefix(ctx, ctx_len, prefix, plen);
    int rc = dsig_slhdsa_prehash_prefix(ph, ctx, ctx_len, prefix, plen);
    if (rc != DSIG_OK)
        return rc;
    if (m_is_digest) {
        if (*mlen != ph->out_len)
            return dsig_fail(DSIG_E_ARG, "SLH-DSA: %s digest must be %zu bytes, got %zu", ph->name,
                             ph->out_len, *mlen);
        return DSIG_OK;
    }
    rc = dsig_slhdsa_prehash_compute(ph, *m, *mlen, phm);
    *m = phm;
    *mlen = ph->out_len;
    return rc;
}

/* @spec FIPS 205 Algorithm 22 slh_sign / Algorithm 23 hash_slh_sign (addrnd supplied). */
int dsig_slhdsa_sign_ext(const dsig_slhdsa_params *p, const uint8_t *sk, const uint8_t *m,
                         size_t mlen, const uint8_t *ctx, size_t ctx_len,
                         const dsig_slhdsa_prehash *ph, const uint8_t *addrnd, uint8_t *sig)
{
    uint8_t prefix[DSIG_SLHDSA_PREFIX_MAX], phm[64];
    size_t plen = 0;
    int rc = ext_prefix(ph, &m, &mlen, 0, ctx, ctx_len, prefix, &plen, phm);
    if (rc != DSIG_OK)
        return rc;
    return sign_with_prefix(p, sk, prefix, plen, m, mlen, addrnd, sig);
}

/* @spec FIPS 205 Algorithm 24 slh_verify / Algorithm 25 hash_slh_verify. */
int dsig_slhdsa_verify_ext(const dsig_slhdsa_params *p, const uint8_t *pk, const uint8_t *m,
                           size_t mlen, const uint8_t *ctx, size_t ctx_len,
                           const dsig_slhdsa_prehash *ph, int m_is_digest, const uint8_t *sig,
                           size_t sig_len)
{
    uint8_t prefix[DSIG_SLHDSA_PREFIX_MAX], phm[64];
    size_t plen = 0;
    int rc = ext_prefix(ph, &m, &mlen, m_is_digest, ctx, ctx_len, prefix, &plen, phm);
    if (rc != DSIG_OK)
        return rc;
    return verify_with_prefix(p, pk, prefix, plen, m, mlen, sig, sig_len);
}
