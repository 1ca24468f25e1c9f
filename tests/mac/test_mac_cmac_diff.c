/*
 * Differential test of the library's own CMAC-AES (src/mac/mac.c, SP 800-38B on bulk AES-CBC)
 * against OpenSSL's EVP_MAC "CMAC", on pseudo-random keys and messages:
 *   - every message length 0..100, plus lengths around the 4 KiB bulk step of the implementation;
 *   - many chunkings of the same message through the streaming API (one update, 1-byte, 15/16/17,
 *     the bulk step +-1, and random sizes with zero-length updates in between);
 *   - the test hook (one update, every truncation length) and streaming verify (good tag, a flipped
 *     bit in every byte position, a truncated tag).
 * The keys are drawn so that both values of the top bit of L = AES_K(0) — the constant-time branch
 * of subkey doubling — occur for each key size; the test checks that they did.
 * Known-answer proof (ACVP, Wycheproof) is in test_mac_vectors.c.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "core/internal.h"
#include "mac/mac.h"
#include "testutil.h"

#define MAX_MSG 10000u
#define STEP 4096u /* the implementation's bulk step (CMAC_STEP in mac.c) */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* Deterministic test PRNG (xorshift64*); NOT cryptographic. */
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Fill a buffer from rnd(). */
static void rnd_bytes(uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(rnd() >> 56);
}

/* A raw-bytes oct key through the key type's JWK import. */
static dsig_key *oct_key(const uint8_t *k, size_t len)
{
    dsig_key *key = dsig_key_new(&dsig_keytype_oct);
    assert_non_null(key);
    dsig_jwk_member m = {.name = "k", .data = (uint8_t *)k, .len = len};
    assert_int_equal(dsig_keytype_oct.import_jwk(key, &m, 1), DSIG_OK);
    key->has_private = 1;
    return key;
}

/* Reference tag from OpenSSL's EVP_MAC "CMAC" with the given AES-CBC cipher. */
static void ref_cmac(EVP_MAC *mac, const char *cipher, const uint8_t *key, size_t klen,
                     const uint8_t *msg, size_t mlen, uint8_t tag[16])
{
    EVP_MAC_CTX *c = EVP_MAC_CTX_new(mac);
    assert_non_null(c);
    OSSL_PARAM prm[2] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, (char *)cipher, 0),
                         OSSL_PARAM_construct_end()};
    size_t n = 0;
    assert_int_equal(EVP_MAC_init(c, key, klen, prm), 1);
    assert_int_equal(EVP_MAC_update(c, msg, mlen), 1);
    assert_int_equal(EVP_MAC_final(c, tag, &n, 16), 1);
    assert_int_equal(n, 16);
    EVP_MAC_CTX_free(c);
}

/* Top bit of L = AES_K(0^128) (which subkey-doubling case the key exercises). */
static int l_top_bit(const char *ecb, const uint8_t *key)
{
    static const uint8_t zero[16];
    uint8_t l[32];
    int outl = 0;
    EVP_CIPHER *ciph = EVP_CIPHER_fetch(NULL, ecb, NULL);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    assert_non_null(ciph);
    assert_non_null(c);
    assert_int_equal(EVP_EncryptInit_ex2(c, ciph, key, NULL, NULL), 1);
    assert_int_equal(EVP_EncryptUpdate(c, l, &outl, zero, 16), 1);
    assert_int_equal(outl, 16);
    EVP_CIPHER_CTX_free(c);
    EVP_CIPHER_free(ciph);
    return l[0] >> 7;
}

/* Next chunk size for pattern `pat`, at most `remaining` (pattern 0: all of it; may return 0). */
static size_t chunk_of(unsigned pat, size_t remaining)
{
    static const size_t fixed[] = {0, 1, 15, 16, 17, STEP - 1, STEP, STEP + 1};
    size_t n;
    if (pat < sizeof fixed / sizeof fixed[0]) {
        n = fixed[pat] ? fixed[pat] : remaining;
    } else {
        /* Random sizes, a quarter of them zero-length updates, some spanning several steps. */
        uint64_t r = rnd();
        n = (r & 3) == 0 ? 0 : (r >> 8) % ((r & 4) ? 2 * STEP + 40 : 40);
    }
    return n < remaining ? n : remaining;
}
#define N_PATTERNS 11u

/* Streaming sign of msg with chunking pattern `pat`; the 16-byte tag in `tag`. */
static void sign_chunked(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                         unsigned pat, uint8_t tag[16])
{
    dsig_sign_ctx *c;
    assert_int_equal(dsig_sign_init(&c, alg, key), DSIG_OK);
    size_t off = 0;
    unsigned zero_run = 0;
    while (off < len) {
        size_t n = chunk_of(pat, len - off);
        assert_int_equal(dsig_sign_update(c, msg + off, n), DSIG_OK);
        off += n;
        zero_run = n ? 0 : zero_run + 1;
        assert_true(zero_run < 1000);
    }
    if (pat >= 8) /* a trailing empty update must not change the held-back last block */
        assert_int_equal(dsig_sign_update(c, msg + off, 0), DSIG_OK);
    size_t sl = 0;
    assert_int_equal(dsig_sign_final(c, tag, 16, &sl), DSIG_OK);
    assert_int_equal(sl, 16);
}

/* Streaming verify of msg (1-byte then the rest) against `tag` of `tlen` bytes. */
static int verify_stream(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                         const uint8_t *tag, size_t tlen)
{
    dsig_verify_ctx *c;
    assert_int_equal(dsig_verify_init(&c, alg, key, tag, tlen), DSIG_OK);
    size_t first = len ? 1 : 0;
    assert_int_equal(dsig_verify_update(c, msg, first), DSIG_OK);
    assert_int_equal(dsig_verify_update(c, msg + first, len - first), DSIG_OK);
    return dsig_verify_final(c);
}

/* Compare one (key, message) against the reference through every path. */
static void check_one(EVP_MAC *mac, const char *cbc, const dsig_alg *alg, const uint8_t *k,
                      size_t klen, const uint8_t *msg, size_t len)
{
    uint8_t want[16], got[16];
    ref_cmac(mac, cbc, k, klen, msg, len, want);

    /* The test hook (one update), full and truncated. */
    for (size_t t = 1; t <= 16; t++) {
        memset(got, 0xA5, sizeof got);
        assert_int_equal(dsig_mac_compute(alg->name, k, klen, msg, len, NULL, 0, t, 0, got), DSIG_OK);
        if (memcmp(got, want, t) != 0)
            fail_msg("%s len %zu: hook tag (%zu bytes) differs from EVP_MAC CMAC", alg->name, len, t);
    }

    dsig_key *key = oct_key(k, klen);
    for (unsigned pat = 0; pat < N_PATTERNS; pat++) {
        sign_chunked(alg, key, msg, len, pat, got);
        if (memcmp(got, want, 16) != 0)
            fail_msg("%s len %zu chunking %u: tag differs from EVP_MAC CMAC", alg->name, len, pat);
    }
    assert_int_equal(verify_stream(alg, key, msg, len, want, 16), DSIG_OK);
    uint8_t bad[16];
    for (size_t i = 0; i < 16; i++) {
        memcpy(bad, want, 16);
        bad[i] ^= (uint8_t)(1u << (i % 8));
        assert_int_equal(verify_stream(alg, key, msg, len, bad, 16), DSIG_E_VERIFY);
    }
    assert_int_equal(verify_stream(alg, key, msg, len, want, 15), DSIG_E_VERIFY);
    dsig_key_free(key);
}

/* Every key size: random keys and messages of lengths 0..100 and around the bulk step. */
static void test_cmac_differential(void **state)
{
    (void)state;
    static const struct {
        const char *name, *cbc, *ecb;
        size_t klen;
    } sizes[] = {
        {"CMAC-AES-128", "AES-128-CBC", "AES-128-ECB", 16},
        {"CMAC-AES-192", "AES-192-CBC", "AES-192-ECB", 24},
        {"CMAC-AES-256", "AES-256-CBC", "AES-256-ECB", 32},
    };
    static const size_t big[] = {127,      128,      129,      255,          256,
                                 STEP - 17, STEP - 16, STEP - 1, STEP,         STEP + 1,
                                 STEP + 15, STEP + 16, STEP + 17, 2 * STEP + 16, 2 * STEP + 33,
                                 MAX_MSG};
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
    assert_non_null(mac);
    static uint8_t msg[MAX_MSG];
    size_t n_cases = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const dsig_alg *alg = dsig_alg_by_name(sizes[s].name);
        assert_non_null(alg);
        unsigned top[2] = {0, 0};
        size_t n_len = 101 + sizeof big / sizeof big[0];
        for (size_t i = 0; i < n_len; i++) {
            size_t len = i <= 100 ? i : big[i - 101];
            uint8_t k[32];
            rnd_bytes(k, sizes[s].klen);
            rnd_bytes(msg, len);
            top[l_top_bit(sizes[s].ecb, k)]++;
            check_one(mac, sizes[s].cbc, alg, k, sizes[s].klen, msg, len);
            n_cases++;
        }
        /* Both doubling cases (top bit of L clear / set) were exercised. */
        assert_true(top[0] > 0 && top[1] > 0);
    }
    EVP_MAC_free(mac);
    print_message("CMAC differential: %zu (key, message) cases x %u chunkings, 3 key sizes\n",
                  n_cases, N_PATTERNS);
}

/* A key of the wrong size is refused by the hook before any AES work. */
static void test_cmac_key_sizes(void **state)
{
    (void)state;
    uint8_t k[33] = {0}, out[16];
    static const char *const names[] = {"CMAC-AES-128", "CMAC-AES-192", "CMAC-AES-256"};
    static const size_t good[] = {16, 24, 32};
    for (size_t i = 0; i < 3; i++)
        for (size_t kl = 0; kl <= 33; kl++) {
            int rc = dsig_mac_compute(names[i], k, kl, k, 5, NULL, 0, 16, 0, out);
            assert_int_equal(rc, kl == good[i] ? DSIG_OK : DSIG_E_KEY_MISMATCH);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cmac_differential),
        cmocka_unit_test(test_cmac_key_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
