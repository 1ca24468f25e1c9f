/*
 * Falcon-512 / Falcon-1024 against the round-3 submission's known-answer tests
 * (tests/vectors/falcon/round3-kat, read at run time):
 *   - every record's signed message verifies under its pk (detached signature rebuilt as
 *     0x30+logn ‖ nonce ‖ compressed s2), streamed in chunks; and mutations are rejected;
 *   - the KAT pk equals h = g/f mod q recomputed from the KAT sk;
 *   - signing reproduces the KAT `sm` byte for byte: the NIST AES-256-CTR DRBG seeded with `seed`
 *     yields 48 bytes (consumed by the reference key generation), then the 40-byte nonce, then the
 *     48-byte seed of the sampler's SHAKE256 — we sign from the KAT sk with that state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/internal.h"
#include "pq/falcon/falcon.h"
#include "testutil.h"

/* ---- the NIST PQC AES-256-CTR DRBG (no derivation function), test-only --------------------- */

typedef struct nist_drbg {
    uint8_t key[32], v[16];
} nist_drbg;

/* Increment the 128-bit big-endian counter V. */
static void drbg_incr(uint8_t v[16])
{
    for (int j = 15; j >= 0; j--) {
        if (v[j] == 0xff) {
            v[j] = 0;
        } else {
            v[j]++;
            break;
        }
    }
}

/* AES-256-ECB of one block. */
static void aes256_block(const uint8_t key[32], const uint8_t in[16], uint8_t out[16])
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int len = 0;
    assert_non_null(ctx);
    assert_int_equal(EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), NULL, key, NULL), 1);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    assert_int_equal(EVP_EncryptUpdate(ctx, out, &len, in, 16), 1);
    EVP_CIPHER_CTX_free(ctx);
}

/* CTR_DRBG_Update with optional 48 bytes of provided data. */
static void drbg_update(nist_drbg *d, const uint8_t *provided)
{
    uint8_t temp[48];
    for (int i = 0; i < 3; i++) {
        drbg_incr(d->v);
        aes256_block(d->key, d->v, temp + 16 * i);
    }
    if (provided)
        for (int i = 0; i < 48; i++)
            temp[i] ^= provided[i];
    memcpy(d->key, temp, 32);
    memcpy(d->v, temp + 32, 16);
}

/* randombytes_init(seed, NULL). */
static void drbg_init(nist_drbg *d, const uint8_t seed[48])
{
    memset(d, 0, sizeof *d);
    drbg_update(d, seed);
}

/* randombytes(out, n). */
static void drbg_bytes(nist_drbg *d, uint8_t *out, size_t n)
{
    uint8_t block[16];
    while (n > 0) {
        drbg_incr(d->v);
        aes256_block(d->key, d->v, block);
        size_t k = n < 16 ? n : 16;
        memcpy(out, block, k);
        out += k;
        n -= k;
    }
    drbg_update(d, NULL);
}

/* ---- KAT file ------------------------------------------------------------------------------ */

typedef struct kat {
    uint8_t *seed, *msg, *pk, *sk, *sm;
    size_t seed_len, mlen, pk_len, sk_len, smlen;
} kat;

typedef struct katfile {
    kat *r;
    size_t n;
    unsigned logn;
} katfile;

/* Value of "name = HEX" lines as bytes. */
static uint8_t *hexval(const char *line, size_t *len)
{
    const char *eq = strchr(line, '=');
    assert_non_null(eq);
    eq++;
    while (*eq == ' ')
        eq++;
    if (*eq == '\0') {
        *len = 0;
        return calloc(1, 1);
    }
    return tu_hex(eq, len);
}

/* Load and parse a .rsp file (records separated by blank lines). */
static katfile load_kat(unsigned logn)
{
    katfile kf = { NULL, 0, logn };
    size_t flen;
    char *text = tu_read_vector_file(logn == 9 ? "falcon/round3-kat/falcon512-KAT.rsp"
                                               : "falcon/round3-kat/falcon1024-KAT.rsp",
                                     &flen);
    char *save = NULL;
    kat *cur = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "count = ", 8) == 0) {
            kf.r = realloc(kf.r, (kf.n + 1) * sizeof *kf.r);
            cur = &kf.r[kf.n++];
            memset(cur, 0, sizeof *cur);
        } else if (!cur) {
            continue;
        } else if (strncmp(line, "seed = ", 7) == 0) {
            cur->seed = hexval(line, &cur->seed_len);
        } else if (strncmp(line, "msg = ", 6) == 0) {
            cur->msg = hexval(line, &cur->mlen);
        } else if (strncmp(line, "pk = ", 5) == 0) {
            cur->pk = hexval(line, &cur->pk_len);
        } else if (strncmp(line, "sk = ", 5) == 0) {
            cur->sk = hexval(line, &cur->sk_len);
        } else if (strncmp(line, "sm = ", 5) == 0) {
            cur->sm = hexval(line, &cur->smlen);
        }
    }
    free(text);
    assert_int_equal(kf.n, 90);
    return kf;
}

static void free_kat(katfile *kf)
{
    for (size_t i = 0; i < kf->n; i++) {
        free(kf->r[i].seed);
        free(kf->r[i].msg);
        free(kf->r[i].pk);
        free(kf->r[i].sk);
        free(kf->r[i].sm);
    }
    free(kf->r);
}

/* Rebuild the detached signature 0x30+logn ‖ nonce ‖ comp(s2) from the reference's sm layout
 * len(2, BE) ‖ nonce ‖ msg ‖ 0x20+logn ‖ comp(s2). Returns its length. */
static size_t detach(const kat *k, unsigned logn, uint8_t *sig)
{
    size_t sig_len = ((size_t)k->sm[0] << 8) | k->sm[1];
    assert_int_equal(k->smlen, 2 + FALCON_NONCE_LEN + k->mlen + sig_len);
    assert_memory_equal(k->sm + 2 + FALCON_NONCE_LEN, k->msg, k->mlen);
    const uint8_t *esig = k->sm + 2 + FALCON_NONCE_LEN + k->mlen;
    assert_int_equal(esig[0], 0x20 + logn);
    sig[0] = (uint8_t)(0x30 + logn);
    memcpy(sig + 1, k->sm + 2, FALCON_NONCE_LEN);
    memcpy(sig + 1 + FALCON_NONCE_LEN, esig + 1, sig_len - 1);
    return FALCON_NONCE_LEN + sig_len;
}

/* Verify a detached signature streaming the message in chunks of `chunk` bytes. */
static int verify_detached(const uint16_t *h_ntt, unsigned logn, const uint8_t *sig, size_t len,
                           const uint8_t *msg, size_t mlen, size_t chunk, int fmt)
{
    falcon_verify_ctx v;
    int rc = falcon_verify_start(&v, logn, sig, len, fmt);
    if (rc != DSIG_OK)
        return rc;
    for (size_t off = 0; off < mlen; off += chunk)
        falcon_verify_update(&v, msg + off, mlen - off < chunk ? mlen - off : chunk);
    return falcon_verify_finish(&v, h_ntt);
}

/* Re-encode a detached signature with its s2 scaled by `factor` (to break the norm bound). */
static size_t scale_s2(const uint8_t *sig, size_t len, unsigned logn, int factor, uint8_t *out,
                       size_t cap)
{
    int16_t s2[FALCON_MAX_N];
    size_t n = (size_t)1 << logn;
    assert_true(falcon_comp_decode(s2, logn, sig + 41, len - 41) == len - 41);
    for (size_t u = 0; u < n; u++) {
        int v = s2[u] * factor;
        s2[u] = (int16_t)(v > 2047 ? 2047 : v < -2047 ? -2047 : v);
    }
    memcpy(out, sig, 41);
    size_t body = falcon_comp_encode(out + 41, cap - 41, s2, logn);
    assert_true(body > 0);
    return 41 + body;
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* Every KAT signature verifies; the KAT pk equals g/f mod q from the KAT sk; mutations fail. */
static void run_verify(unsigned logn)
{
    katfile kf = load_kat(logn);
    size_t n = (size_t)1 << logn;
    static uint8_t sig[4096], bad[4096];
    for (size_t i = 0; i < kf.n; i++) {
        const kat *k = &kf.r[i];
        uint16_t h[FALCON_MAX_N], h2[FALCON_MAX_N];
        assert_int_equal(falcon_pk_decode(h, k->pk, k->pk_len, logn), DSIG_OK);
        /* pk ↔ sk consistency and the encoders. */
        int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N];
        assert_int_equal(falcon_sk_decode(f, g, F, k->sk, k->sk_len, logn), DSIG_OK);
        assert_int_equal(falcon_compute_public(h2, f, g, logn), DSIG_OK);
        assert_memory_equal(h, h2, n * sizeof *h);
        assert_int_equal(falcon_complete_private(G, f, g, F, logn), DSIG_OK);
        uint8_t enc[2305];
        falcon_pk_encode(enc, h, logn);
        assert_memory_equal(enc, k->pk, k->pk_len);
        falcon_sk_encode(enc, f, g, F, logn);
        assert_memory_equal(enc, k->sk, k->sk_len);

        falcon_ntt(h, logn);
        size_t len = detach(k, logn, sig);
        size_t chunk = 1 + i % 37;
        assert_int_equal(verify_detached(h, logn, sig, len, k->msg, k->mlen, chunk,
                                         FALCON_FMT_COMPRESSED), DSIG_OK);
        /* Padded form: zero-fill to 666 / 1280 bytes. */
        size_t plen = FALCON_SIG_PADDED_LEN(logn);
        if (len <= plen) {
            memcpy(bad, sig, len);
            memset(bad + len, 0, plen - len);
            assert_int_equal(verify_detached(h, logn, bad, plen, k->msg, k->mlen, 1000,
                                             FALCON_FMT_PADDED), DSIG_OK);
            if (len < plen) {
                /* The padded form is not a valid compressed signature (trailing bytes)... */
                assert_int_equal(verify_detached(h, logn, bad, plen, k->msg, k->mlen, 1000,
                                                 FALCON_FMT_COMPRESSED), DSIG_E_VERIFY);
                /* ...and its padding must be zero. */
                bad[plen - 1] = 1;
                assert_int_equal(verify_detached(h, logn, bad, plen, k->msg, k->mlen, 1000,
                                                 FALCON_FMT_PADDED), DSIG_E_VERIFY);
            }
        }
        if (i >= 10)
            continue;
        /* Mutations (first records only; each is cheap). */
        /* wrong message */
        if (k->mlen > 0) {
            uint8_t *m2 = malloc(k->mlen);
            memcpy(m2, k->msg, k->mlen);
            m2[0] ^= 1;
            assert_int_equal(verify_detached(h, logn, sig, len, m2, k->mlen, 64,
                                             FALCON_FMT_COMPRESSED), DSIG_E_VERIFY);
            free(m2);
        }
        /* wrong header byte (other degree, uncompressed/CT header, raw round-3 nist header) */
        static const uint8_t hdrs[] = { 0x39, 0x3A, 0x29, 0x2A, 0x59, 0x5A, 0x00, 0xB9 };
        for (size_t j = 0; j < sizeof hdrs; j++) {
            if (hdrs[j] == 0x30 + logn)
                continue;
            memcpy(bad, sig, len);
            bad[0] = hdrs[j];
            assert_int_equal(verify_detached(h, logn, bad, len, k->msg, k->mlen, 64,
                                             FALCON_FMT_COMPRESSED), DSIG_E_VERIFY);
        }
        /* trailing byte, truncations, empty */
        memcpy(bad, sig, len);
        bad[len] = 0;
        assert_int_equal(verify_detached(h, logn, bad, len + 1, k->msg, k->mlen, 64,
                                         FALCON_FMT_COMPRESSED), DSIG_E_VERIFY);
        for (size_t cut = 1; cut < len; cut += 1 + cut / 3)
            assert_int_equal(verify_detached(h, logn, sig, len - cut, k->msg, k->mlen, 64,
                                             FALCON_FMT_COMPRESSED), DSIG_E_VERIFY);
        /* salt and body bit flips */
        for (size_t pos = 1; pos < len; pos += 7) {
            memcpy(bad, sig, len);
            bad[pos] ^= (uint8_t)(1u << (pos % 8));
            assert_int_equal(verify_detached(h, logn, bad, len, k->msg, k->mlen, 64,
                                             FALCON_FMT_COMPRESSED), DSIG_E_VERIFY);
        }
        /* norm too large: a well-formed s2 scaled up */
        size_t blen = scale_s2(sig, len, logn, 3, bad, sizeof bad);
        assert_int_equal(verify_detached(h, logn, bad, blen, k->msg, k->mlen, 64,
                                         FALCON_FMT_COMPRESSED), DSIG_E_VERIFY);
        /* wrong length for the padded form */
        assert_int_equal(verify_detached(h, logn, sig, len, k->msg, k->mlen, 64,
                                         FALCON_FMT_PADDED), DSIG_E_VERIFY);
        /* wrong public key */
        uint16_t h3[FALCON_MAX_N];
        assert_int_equal(falcon_pk_decode(h3, kf.r[(i + 1) % kf.n].pk, k->pk_len, logn), DSIG_OK);
        falcon_ntt(h3, logn);
        assert_int_equal(verify_detached(h3, logn, sig, len, k->msg, k->mlen, 64,
                                         FALCON_FMT_COMPRESSED), DSIG_E_VERIFY);
    }
    free_kat(&kf);
}

static void test_verify_kat_512(void **state)
{
    (void)state;
    run_verify(9);
}

static void test_verify_kat_1024(void **state)
{
    (void)state;
    run_verify(10);
}

/* Encodings reject malformed input. */
static void test_encoding_rejects(void **state)
{
    (void)state;
    katfile kf = load_kat(9);
    const kat *k = &kf.r[0];
    uint16_t h[FALCON_MAX_N];
    int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N];
    uint8_t buf[2400];
    assert_int_equal(falcon_pk_decode(h, k->pk, k->pk_len - 1, 9), DSIG_E_KEY);
    assert_int_equal(falcon_pk_decode(h, k->pk, k->pk_len, 10), DSIG_E_KEY);
    memcpy(buf, k->pk, k->pk_len);
    buf[0] = 0x0A;
    assert_int_equal(falcon_pk_decode(h, buf, k->pk_len, 9), DSIG_E_KEY);
    memcpy(buf, k->pk, k->pk_len);
    buf[1] = 0xFF; /* first coefficient ≥ 0x3FC0 > q */
    buf[2] |= 0xFC;
    assert_int_equal(falcon_pk_decode(h, buf, k->pk_len, 9), DSIG_E_KEY);
    assert_int_equal(falcon_sk_decode(f, g, F, k->sk, k->sk_len - 1, 9), DSIG_E_KEY);
    memcpy(buf, k->sk, k->sk_len);
    buf[0] = 0x5A;
    assert_int_equal(falcon_sk_decode(f, g, F, buf, k->sk_len, 9), DSIG_E_KEY);
    memcpy(buf, k->sk, k->sk_len);
    buf[1] = 0x80; /* f[0] = −32: the forbidden 6-bit value */
    assert_int_equal(falcon_sk_decode(f, g, F, buf, k->sk_len, 9), DSIG_E_KEY);

    /* Compression: round trip at the extremes, "-0" and over-long runs rejected. */
    int16_t s[FALCON_MAX_N], t[FALCON_MAX_N];
    for (size_t u = 0; u < 512; u++)
        s[u] = (int16_t)((u % 3 == 0) ? 2047 : (u % 3 == 1) ? -2047 : 0);
    size_t len = falcon_comp_encode(buf, sizeof buf, s, 9);
    assert_true(len > 0);
    assert_int_equal(falcon_comp_decode(t, 9, buf, len), len);
    assert_memory_equal(s, t, 512 * sizeof *s);
    assert_int_equal(falcon_comp_decode(t, 9, buf, len - 1), 0);
    s[5] = 2048;
    assert_int_equal(falcon_comp_encode(buf, sizeof buf, s, 9), 0);
    memset(s, 0, sizeof s);
    len = falcon_comp_encode(buf, sizeof buf, s, 9);
    assert_int_equal(len, 576); /* 9 bits per zero: 4608 bits */
    buf[0] |= 0x80;              /* sign bit on a zero: "-0" */
    assert_int_equal(falcon_comp_decode(t, 9, buf, len), 0);
    memset(buf, 0, sizeof buf); /* 0 followed by an endless unary run: magnitude > 2047 */
    assert_int_equal(falcon_comp_decode(t, 9, buf, sizeof buf), 0);
    assert_int_equal(falcon_comp_encode(buf, 10, s, 9), 0); /* does not fit */
    free_kat(&kf);
}

/* Signing from the KAT sk with the KAT DRBG state reproduces `sm` byte for byte. */
static void run_sign(unsigned logn, size_t count)
{
    katfile kf = load_kat(logn);
    /* The reference's crypto_sign encodes s2 into a buffer of CRYPTO_BYTES − 2 − 40 bytes, header
     * included (CRYPTO_BYTES 690 / 1330). */
    size_t esig_cap = (logn == 9 ? 690 : 1330) - 2 - FALCON_NONCE_LEN;
    for (size_t i = 0; i < count; i++) {
        const kat *k = &kf.r[i];
        nist_drbg d;
        uint8_t kg_seed[48], nonce[FALCON_NONCE_LEN], seed[48];
        drbg_init(&d, k->seed);
        drbg_bytes(&d, kg_seed, sizeof kg_seed); /* consumed by crypto_sign_keypair */
        drbg_bytes(&d, nonce, sizeof nonce);
        drbg_bytes(&d, seed, sizeof seed);

        int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N];
        assert_int_equal(falcon_sk_decode(f, g, F, k->sk, k->sk_len, logn), DSIG_OK);
        assert_int_equal(falcon_complete_private(G, f, g, F, logn), DSIG_OK);
        falcon_expanded ek;
        assert_int_equal(falcon_expand_private(&ek, f, g, F, G, logn), DSIG_OK);

        dsig_keccak xof, rng;
        uint16_t c[FALCON_MAX_N];
        int16_t s2[FALCON_MAX_N];
        dsig_shake256_init(&xof);
        dsig_keccak_absorb(&xof, nonce, sizeof nonce);
        dsig_keccak_absorb(&xof, k->msg, k->mlen);
        dsig_shake_finalize(&xof);
        falcon_hash_to_point(&xof, c, logn);
        dsig_shake256_init(&rng);
        dsig_keccak_absorb(&rng, seed, sizeof seed);
        dsig_shake_finalize(&rng);
        assert_int_equal(falcon_sign_core(s2, &rng, &ek, c), DSIG_OK);

        uint8_t *sm = malloc(2 + FALCON_NONCE_LEN + k->mlen + esig_cap);
        uint8_t *esig = sm + 2 + FALCON_NONCE_LEN + k->mlen;
        esig[0] = (uint8_t)(0x20 + logn);
        size_t body = falcon_comp_encode(esig + 1, esig_cap - 1, s2, logn);
        assert_true(body > 0);
        sm[0] = (uint8_t)((body + 1) >> 8);
        sm[1] = (uint8_t)(body + 1);
        memcpy(sm + 2, nonce, sizeof nonce);
        memcpy(sm + 2 + FALCON_NONCE_LEN, k->msg, k->mlen);
        size_t smlen = 2 + FALCON_NONCE_LEN + k->mlen + 1 + body;
        if (smlen != k->smlen || memcmp(sm, k->sm, smlen) != 0)
            fail_msg("falcon%u KAT count %zu: signature differs from the KAT", 1u << logn, i);
        free(sm);
        falcon_expanded_clear(&ek);
    }
    free_kat(&kf);
}

static void test_sign_kat_512(void **state)
{
    (void)state;
    run_sign(9, 90);
}

static void test_sign_kat_1024(void **state)
{
    (void)state;
    run_sign(10, 90);
}

/* Key generation from the KAT DRBG reproduces pk and sk. Where the reference's solver rejected a
 * candidate that ours accepts (its fixed-capacity buffers; see falcon.h), the KAT key must be the
 * next candidate of the same PRNG: we retry skipping 1, then 2 candidates, and count those records. */
static void run_keygen(unsigned logn, size_t count, size_t max_skipped)
{
    katfile kf = load_kat(logn);
    size_t skipped = 0;
    for (size_t i = 0; i < count; i++) {
        const kat *k = &kf.r[i];
        int ok = 0;
        for (unsigned skip = 0; skip <= 2 && !ok; skip++) {
            nist_drbg d;
            uint8_t kg_seed[48];
            drbg_init(&d, k->seed);
            drbg_bytes(&d, kg_seed, sizeof kg_seed);
            dsig_keccak rng;
            dsig_shake256_init(&rng);
            dsig_keccak_absorb(&rng, kg_seed, sizeof kg_seed);
            dsig_shake_finalize(&rng);
            int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N];
            uint16_t h[FALCON_MAX_N];
            assert_int_equal(falcon_keygen_skip(&rng, f, g, F, G, h, logn, skip), DSIG_OK);
            uint8_t pk[1793], sk[2305];
            falcon_pk_encode(pk, h, logn);
            falcon_sk_encode(sk, f, g, F, logn);
            ok = memcmp(pk, k->pk, k->pk_len) == 0 && memcmp(sk, k->sk, k->sk_len) == 0;
            if (ok && skip > 0) {
                skipped++;
                print_message("falcon%u KAT count %zu: reproduced after skipping %u candidate(s)\n",
                              1u << logn, i, skip);
            }
        }
        if (!ok)
            fail_msg("falcon%u KAT count %zu: key pair not reproduced", 1u << logn, i);
    }
    assert_true(skipped <= max_skipped);
    free_kat(&kf);
}

static void test_keygen_kat_512(void **state)
{
    (void)state;
    run_keygen(9, 90, 10);
}

static void test_keygen_kat_1024(void **state)
{
    (void)state;
    run_keygen(10, 90, 10);
}

/* The streaming API: sign in chunks, verify in other chunks, both formats. */
static void test_stream_roundtrip(void **state)
{
    (void)state;
    for (unsigned logn = 9; logn <= 10; logn++) {
        katfile kf = load_kat(logn);
        const kat *k = &kf.r[3];
        int8_t f[FALCON_MAX_N], g[FALCON_MAX_N], F[FALCON_MAX_N], G[FALCON_MAX_N];
        uint16_t h[FALCON_MAX_N];
        assert_int_equal(falcon_sk_decode(f, g, F, k->sk, k->sk_len, logn), DSIG_OK);
        assert_int_equal(falcon_complete_private(G, f, g, F, logn), DSIG_OK);
        assert_int_equal(falcon_pk_decode(h, k->pk, k->pk_len, logn), DSIG_OK);
        falcon_ntt(h, logn);
        falcon_expanded ek;
        assert_int_equal(falcon_expand_private(&ek, f, g, F, G, logn), DSIG_OK);
        uint8_t msg[3000], salt[40], seed[48], sig[1280];
        tu_fill(msg, sizeof msg, logn);
        for (int fmt = 0; fmt <= 1; fmt++) {
            for (int rep = 0; rep < 3; rep++) {
                tu_fill(salt, sizeof salt, 100 + rep);
                tu_fill(seed, sizeof seed, 200 + rep);
                falcon_sign_ctx s;
                falcon_sign_start(&s, logn, salt);
                for (size_t off = 0; off < sizeof msg; off += 1000)
                    falcon_sign_update(&s, msg + off, 1000);
                size_t len = 0;
                assert_int_equal(falcon_sign_finish(&s, &ek, seed, sig, sizeof sig, &len, fmt),
                                 DSIG_OK);
                if (fmt == FALCON_FMT_PADDED)
                    assert_int_equal(len, FALCON_SIG_PADDED_LEN(logn));
                else
                    assert_true(len <= FALCON_SIG_PADDED_LEN(logn));
                assert_int_equal(verify_detached(h, logn, sig, len, msg, sizeof msg, 77, fmt),
                                 DSIG_OK);
                msg[rep] ^= 1;
                assert_int_equal(verify_detached(h, logn, sig, len, msg, sizeof msg, 77, fmt),
                                 DSIG_E_VERIFY);
                msg[rep] ^= 1;
            }
        }
        falcon_expanded_clear(&ek);
        free_kat(&kf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoding_rejects),
        cmocka_unit_test(test_verify_kat_512),
        cmocka_unit_test(test_verify_kat_1024),
        cmocka_unit_test(test_sign_kat_512),
        cmocka_unit_test(test_sign_kat_1024),
        cmocka_unit_test(test_keygen_kat_512),
        cmocka_unit_test(test_keygen_kat_1024),
        cmocka_unit_test(test_stream_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
