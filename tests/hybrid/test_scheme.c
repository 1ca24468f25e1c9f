/*
 * tests/hybrid/test_scheme.c — the DSig scheme (src/hybrid/scheme.h): frozen known-answer vectors for
 * every preset (any change of the byte format fails here), round trips for every preset and custom
 * set, rejection of every corrupted field, a randomized fast-vs-slow differential test, and the
 * reference code's checksum forgery. Run also with DSIG_CPU_DISABLE=all (portable hashes) by CTest.
 *
 * To regenerate the vectors after a deliberate format change: DSIG_HB_PRINT_KAT=1 ./test_scheme.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "classic/eddsa.h"
#include "core/internal.h"
#include "hash/blake3.h"
#include "hybrid/hb_internal.h"
#include "hybrid/scheme.h"
#include "testutil.h"

/* Fixed inputs of the vectors (the root key is derived from the identity, so the root signatures
 * inside the signatures are fixed too). */
static uint8_t g_master[32];
static dsig_ed25519_dkey g_root; /* root key of the identity below */
static dsig_hb_who g_who;        /* runtime domain, signer 1, g_root's public key */
static const char KAT_MSG[] = "DSig known-answer message";
#define KAT_SEQ 0x0102030405060708ull
#define KAT_INDEX 3u
/* dsig_hb_key_seed(00..1f, batch 7, index 9); the BLAKE3 chain-hash key; F(x = 00..11, pk_seed = a0..af,
 * W-OTS+, chain 5, step 2) for each hash. */
#define KAT_KEYSEED "8aef81926edda17cbb0f6e8d24196809d3016438be856bab8005e4a53b5ed54e"
#define KAT_KCHAIN "b4fef978db3abcbf85493ccea664e9de94a8bf41371bf87bef0346ac7c2056c7"
#define KAT_F_HARAKA "a47bfad37bc8758e5b2d07e2107c29d17b3d"
#define KAT_F_SHA256 "a36d197cef51b22c6b640aa80ad75a2f78de"
#define KAT_F_BLAKE3 "793cf5c153280fc514ae92bed479b6d872d8"

/* The root key and identity of the Ed25519 identity key with RFC 8032 seed `tag` repeated. */
static void identity(uint8_t tag, uint64_t signer_id, dsig_ed25519_dkey *root, dsig_hb_who *who)
{
    uint8_t seed[32], pk[32], sk[64];
    memset(seed, tag, sizeof seed);
    crypto_sign_seed_keypair(pk, sk, seed);
    dsig_key *k = dsig_key_new(&dsig_keytype_ed25519);
    dsig_jwk_member m[2] = {{"x", pk, 32}, {"d", seed, 32}};
    if (!k || k->type->import_jwk(k, m, 2) != DSIG_OK) abort();
    k->has_private = 1;
    if (dsig_ed25519_derive_secret(k, DSIG_HB_ROOT_LABEL, root) != DSIG_OK) abort();
    dsig_key_free(k);
    who->domain = DSIG_HB_DOMAIN_RUNTIME;
    who->signer_id = signer_id;
    memcpy(who->root_pk, root->pk, 32);
}

/* Master seed 00 01 .. 1f; identity key from the RFC 8032 seed 42 42 .. 42, signer 1. */
static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < 32; i++) g_master[i] = (uint8_t)i;
    if (sodium_init() < 0 || dsig_init() != DSIG_OK) return -1;
    identity(0x42, 1, &g_root, &g_who);
    return 0;
}

/* Lower-case hex of n bytes into out (2n+1). */
static void hexs(char *out, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static void assert_hex(const char *want, const uint8_t *b, size_t n)
{
    char got[2 * 64 + 1];
    hexs(got, b, n);
    assert_string_equal(got, want);
}

typedef struct {
    const dsig_hb_params *p;
    size_t sig_bytes;
    const char *leaf0, *root, *sig_digest;
} kat_t;

/* Frozen vectors: leaf 0, the root, and BLAKE3-256 of the signature of KAT_MSG by key KAT_INDEX. */
static const kat_t KATS[] = {
    {&dsig_hb_wots4_haraka, 1559,
     "beb9f9782cbb515212f17034f1881b2a5e7be946cc95a64a886b0cfbde7c4ff4",
     "296ad45792f892febfd7674814efc65cb76134209346da5224116fb6173a6f47",
     "7a041439b7bb8d91c122278756eefd70768ae5ec6a9a5cfc7251dee82e72ad28"},
    {&dsig_hb_wots2_haraka, 2783,
     "e800f9ec90b8b7c7b5dbc329d3fc7fa8d1ebf853a66c7ce291dcb71ae5fac088",
     "f04873e1db916f15f896bdfb249f5935b83cca80b07bbfe499269efc2a61a7eb",
     "727e71cfa44b3923c0474477f2b45f9f5adb80d00f9b0ec4a2b84610faa9230f"},
    {&dsig_hb_wots8_haraka, 1163,
     "dd5becce9bd84e5bacc1a1d6ac1284242286e79c91f35e51c02cec54bd6ad87c",
     "397a2487d6f16be3fe5391a34e2b0ee24e9192140b3b0c999d6b7671d623845f",
     "0444963fb07e7e0d2cf667d71f09c01f4f14865d0077de392e4b6031392a04f0"},
    {&dsig_hb_wots16_haraka, 965,
     "b755fe2705373df8e05d861b469f46f09d74d62cd89b6e9353c7b817a781d2ed",
     "d48e176395ddd0975b5a2709bb61065583563d44b809796b26c4b9d47a72dc53",
     "7e1f501ac3fe1b7391a6270b280b2eeb0c7128344658d202b90f63e748e1e566"},
    {&dsig_hb_wots4_sha256, 1559,
     "32459d36308e4bcf92327cf2a410805ab8fe536e20f1d3210b10c77befccd228",
     "000486df7f9a53ae098af17972c50c3aa2b3ddf2d6e2de026ba84c9a86717737",
     "723f37d3e1612da903adc60b3376960a510712ab2e39515dc1e77a66b2e79e88"},
    {&dsig_hb_wots4_blake3, 1559,
     "cdde77a52206e166191bcfa48fe328cb79c2f1f43dd75ad90da93d9153b43554",
     "e4c87f44c586edf17ec54141bffc67010e4422ee639fd0f8e9028482d01ce129",
     "b8c2c0fa3a3606a06932a03ca7abaf2e289c663c08678434c4e406d54ad933ed"},
    {&dsig_hb_hors64_haraka, 4431,
     "0673abdd2fc7dfd5ac3ee3dcf2c0f2121cfa844acf33bb7c705b4fe82d4e6cf5",
     "d9d48394c453220b34fb67025bb4f596391e6e823e52bd476239eb259f110baf",
     "61d337ebe98f859e577c71dd8b6c4059935585ea07af6e58f5daeb48ee567bc4"},
    {&dsig_hb_hors32_haraka, 8527,
     "c0ab80b408f722f6c349d81763efea3572f948769d6a1204b915f75150fb1686",
     "e5872a0bdd5eff3410d886a3c3bc725727a551495a166e551ba573e088cca3df",
     "0a076e4156f79862dfa76d97f28d2774afb618097d35cb72a56865fea22b318d"},
    {&dsig_hb_hors16_haraka, 65871,
     "3de3d4e4de0b8cad7d1b80c6bd746c5b2b1265639685b654580e234294838c49",
     "9082640ce1186f91077b218ce90c289f873d9e8570d3dc035836da90c80b0cf6",
     "eb95c78e9fed5301cbf0ed58a00f6eba03618eea978da5afab18bf49ca39ea5e"},
};

/* Batch of a parameter set from the fixed seeds. */
static void make_batch(const dsig_hb_params *p, uint64_t seq, dsig_hb_batch *b)
{
    assert_int_equal(dsig_hb_keygen_batch(p, g_master, seq, &g_root, &g_who, b), DSIG_OK);
}

/* Verifier-side copy of a batch through its wire form. */
static void verified_copy(const dsig_hb_batch *b, dsig_hb_batch *v)
{
    const dsig_hb_params *p = b->params;
    uint8_t *msg = malloc(p->batch_msg_bytes);
    size_t len = 0;
    assert_non_null(msg);
    assert_int_equal(dsig_hb_batch_message(b, msg, p->batch_msg_bytes, &len), DSIG_OK);
    assert_int_equal(len, p->batch_msg_bytes);
    assert_int_equal(dsig_hb_batch_verify(p, msg, len, &g_who, v), DSIG_OK);
    assert_memory_equal(v->root, b->root, 32);
    free(msg);
}

static void test_kat(void **state)
{
    (void)state;
    const int print = getenv("DSIG_HB_PRINT_KAT") != NULL;
    const dsig_hb_params *const *ps = dsig_hb_presets;
    size_t nkat = sizeof KATS / sizeof KATS[0];
    if (!print) assert_int_equal(nkat, 9);
    for (size_t i = 0; ps[i]; i++) {
        const dsig_hb_params *p = ps[i];
        dsig_hb_batch b;
        make_batch(p, KAT_SEQ, &b);
        uint8_t *sig = malloc(p->sig_bytes), dg[32];
        size_t sl = 0;
        assert_int_equal(dsig_hb_sign(&b.keys[KAT_INDEX], (const uint8_t *)KAT_MSG, strlen(KAT_MSG), sig,
                                      p->sig_bytes, &sl), DSIG_OK);
        assert_int_equal(sl, p->sig_bytes);
        dsig_blake3(sig, sl, dg, 32);
        if (print) {
            char l[65], r[65], s[65];
            hexs(l, b.nodes[0], 32);
            hexs(r, b.root, 32);
            hexs(s, dg, 32);
            printf("    {&dsig_hb_%s, %zu,\n     \"%s\",\n     \"%s\",\n     \"%s\"},\n",
                   p == &dsig_hb_wots4_haraka ? "wots4_haraka" : p == &dsig_hb_wots2_haraka ? "wots2_haraka"
                   : p == &dsig_hb_wots8_haraka ? "wots8_haraka" : p == &dsig_hb_wots16_haraka ? "wots16_haraka"
                   : p == &dsig_hb_wots4_sha256 ? "wots4_sha256" : p == &dsig_hb_wots4_blake3 ? "wots4_blake3"
                   : p == &dsig_hb_hors64_haraka ? "hors64_haraka" : p == &dsig_hb_hors32_haraka ? "hors32_haraka"
                   : "hors16_haraka", p->sig_bytes, l, r, s);
        } else {
            const kat_t *k = NULL;
            for (size_t j = 0; j < nkat; j++)
                if (KATS[j].p == p) k = &KATS[j];
            assert_non_null(k);
            assert_int_equal(p->sig_bytes, k->sig_bytes);
            assert_hex(k->leaf0, b.nodes[0], 32);
            assert_hex(k->root, b.root, 32);
            assert_hex(k->sig_digest, dg, 32);
        }
        assert_int_equal(dsig_hb_verify_slow(p, sig, sl, (const uint8_t *)KAT_MSG, strlen(KAT_MSG), &g_who), DSIG_OK);
        free(sig);
        dsig_hb_batch_free(&b);
    }
}

/* Encodings that are not covered by whole-signature digests: derived keys, key seed, checksum. */
static void test_encodings(void **state)
{
    (void)state;
    const dsig_hb_params *p = &dsig_hb_wots4_haraka;
    assert_int_equal(p->sig_bytes, 1559);
    assert_int_equal(p->chains, 68);
    assert_int_equal(p->len2, 4);
    assert_int_equal(p->batch_msg_bytes, 4173);
    assert_int_equal(p->id, 0x07000211u);
    assert_int_equal(dsig_hb_wots2_haraka.chains, 136);
    assert_int_equal(dsig_hb_wots8_haraka.chains, 46);
    assert_int_equal(dsig_hb_wots16_haraka.chains, 35);
    for (size_t i = 0; dsig_hb_presets[i]; i++) {
        assert_int_equal(dsig_hb_params_check(dsig_hb_presets[i]), DSIG_OK);
        assert_ptr_equal(dsig_hb_params_by_id(dsig_hb_presets[i]->id), dsig_hb_presets[i]);
        assert_ptr_equal(dsig_hb_params_by_name(dsig_hb_presets[i]->name), dsig_hb_presets[i]);
    }
    /* checksum Σ(w−1−d): all-zero digest → digits 0, csum 192 = 3·64 → base 4 LSB first 0,0,0,3 */
    uint8_t dg[20] = {0}, digits[HB_MAX_WOTS_CHAINS];
    hb_wots_digits(p, dg, digits);
    for (int i = 0; i < 64; i++) assert_int_equal(digits[i], 0);
    assert_int_equal(digits[64], 0);
    assert_int_equal(digits[65], 0);
    assert_int_equal(digits[66], 0);
    assert_int_equal(digits[67], 3);
    dg[0] = 0x1b; /* digits 3,2,1,0 (LSB first) → csum 192 − 6 = 186 = 2·64+3·16+2·4+2 */
    hb_wots_digits(p, dg, digits);
    assert_int_equal(digits[0], 3);
    assert_int_equal(digits[1], 2);
    assert_int_equal(digits[2], 1);
    assert_int_equal(digits[3], 0);
    assert_int_equal(digits[64], 2);
    assert_int_equal(digits[65], 2);
    assert_int_equal(digits[66], 3);
    assert_int_equal(digits[67], 2);
    uint8_t seed[32];
    dsig_hb_key_seed(g_master, 7, 9, seed);
    if (!getenv("DSIG_HB_PRINT_KAT")) {
        assert_hex(KAT_KEYSEED, seed, 32);
        assert_hex(KAT_KCHAIN, hb_key(HB_K_CHAIN), 32);
    }
    /* F on one value for each hash */
    static const dsig_hb_params *fp[] = {&dsig_hb_wots4_haraka, &dsig_hb_wots4_sha256, &dsig_hb_wots4_blake3};
    static const char *fw[] = {KAT_F_HARAKA, KAT_F_SHA256, KAT_F_BLAKE3};
    uint8_t pks[16], x[18], out[18];
    for (int i = 0; i < 16; i++) pks[i] = (uint8_t)(0xa0 + i);
    for (int i = 0; i < 18; i++) x[i] = (uint8_t)i;
    for (int i = 0; i < 3; i++) {
        hb_chain_f(fp[i], pks, HB_DOM_WOTS, 5, 2, x, out);
        if (getenv("DSIG_HB_PRINT_KAT")) {
            char h[37];
            hexs(h, out, 18);
            printf("F[%d] %s\n", i, h);
        } else {
            assert_hex(fw[i], out, 18);
        }
    }
    if (getenv("DSIG_HB_PRINT_KAT")) {
        char h[65];
        hexs(h, seed, 32);
        printf("keyseed %s\n", h);
        hexs(h, hb_key(HB_K_CHAIN), 32);
        printf("kchain %s\n", h);
    }
}

/*
 * The lane-parallel leaf (docs §5.3) recomputed literally from the document with the plain BLAKE3
 * hasher, from key 0's table: cross-checks the multi-message hashing, the lane split, the zero values
 * of a short last lane (w = 16: L = 35, lane 7 empty) and the 128 lanes of t = 4096.
 */
static void spec_leaf(const dsig_hb_params *p, const dsig_hb_key *k, uint8_t leaf[32])
{
    uint8_t klane[32], kleaf[32], lane[1024], dig[128][32];
    dsig_blake3_hasher h;
    dsig_blake3_init_derive_key(&h, "DSig hybrid signatures v1 one-time public key lane");
    dsig_blake3_finalize(&h, klane, 32);
    dsig_blake3_init_derive_key(&h, "DSig hybrid signatures v1 one-time public key leaf");
    dsig_blake3_finalize(&h, kleaf, 32);
    const int wots = p->ots == DSIG_HB_OTS_WOTS;
    unsigned L = p->chains, m = wots ? 8 : (L / 32 > 8 ? L / 32 : 8), per = (L + m - 1) / m;
    size_t lb = (20 + (size_t)per * p->n + 63) / 64 * 64;
    const uint8_t *table = k->mem + DSIG_HB_SIG_HEADER + 32u * p->log_batch + 64;
    for (unsigned l = 0; l < m; l++) {
        memset(lane, 0, sizeof lane);
        memcpy(lane, k->mem + HB_OFF_PKSEED, 16);
        lane[16] = p->ots;
        lane[17] = p->n;
        lane[18] = (uint8_t)l;
        lane[19] = (uint8_t)(l >> 8);
        for (unsigned j = 0; j < per && l * per + j < L; j++) {
            size_t i = l * per + j;
            const uint8_t *top = wots ? table + (i * p->w + p->w - 1) * p->n : table + i * 32 + 16;
            memcpy(lane + 20 + j * p->n, top, p->n);
        }
        dsig_blake3_init_keyed(&h, klane);
        dsig_blake3_update(&h, lane, lb);
        dsig_blake3_finalize(&h, dig[l], 32);
    }
    dsig_blake3_init_keyed(&h, kleaf);
    dsig_blake3_update(&h, dig, (size_t)m * 32);
    dsig_blake3_finalize(&h, leaf, 32);
}

static void test_leaf_encoding(void **state)
{
    (void)state;
    const dsig_hb_params *ps[] = {&dsig_hb_wots4_haraka, &dsig_hb_wots16_haraka, &dsig_hb_wots2_haraka,
                                  &dsig_hb_hors64_haraka, &dsig_hb_hors16_haraka};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        dsig_hb_params q;
        assert_int_equal(dsig_hb_params_with_batch(&q, ps[i], 1), DSIG_OK);
        dsig_hb_batch b;
        make_batch(&q, 5, &b);
        uint8_t leaf[32];
        spec_leaf(&q, &b.keys[0], leaf);
        assert_memory_equal(leaf, b.nodes[0], 32);
        dsig_hb_batch_free(&b);
    }
}

static void test_params_reject(void **state)
{
    (void)state;
    dsig_hb_params q;
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_WOTS, DSIG_HB_HASH_HARAKA, 5, 0, 0, 7), DSIG_E_ARG);
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_WOTS, DSIG_HB_HASH_HARAKA, 0, 0, 0, 7), DSIG_E_ARG);
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_WOTS, 9, 2, 0, 0, 7), DSIG_E_ARG);
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_WOTS, DSIG_HB_HASH_HARAKA, 2, 0, 0, 11), DSIG_E_ARG);
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_HORS, DSIG_HB_HASH_HARAKA, 0, 8, 16, 7), DSIG_E_ARG);
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_HORS, DSIG_HB_HASH_HARAKA, 0, 13, 16, 7), DSIG_E_ARG);
    assert_int_equal(dsig_hb_params_init(&q, 3, DSIG_HB_HASH_HARAKA, 2, 0, 0, 7), DSIG_E_ARG);
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_HORS, DSIG_HB_HASH_SHA256, 0, 8, 64, 3), DSIG_OK);
    dsig_hb_params bad = dsig_hb_wots4_haraka;
    bad.sig_bytes++;
    assert_int_equal(dsig_hb_params_check(&bad), DSIG_E_ARG);
    dsig_hb_batch b;
    assert_int_equal(dsig_hb_keygen_batch(&bad, g_master, 1, &g_root, &g_who, &b), DSIG_E_ARG);
    dsig_hb_who other = g_who;
    other.root_pk[0] ^= 1;
    assert_int_equal(dsig_hb_keygen_batch(&dsig_hb_wots4_haraka, g_master, 1, &g_root, &other, &b),
                     DSIG_E_KEY_MISMATCH);
}

/* Sign a few keys of a batch and verify each on both paths; wrong message fails both. */
static void roundtrip(const dsig_hb_params *p)
{
    dsig_hb_batch b, v;
    make_batch(p, 42, &b);
    verified_copy(&b, &v);
    uint8_t *sig = malloc(p->sig_bytes);
    uint8_t msg[100];
    for (uint32_t i = 0; i < p->batch; i += (p->batch > 8 ? p->batch / 5 : 1)) {
        size_t ml = (i * 37) % sizeof msg;
        tu_fill(msg, ml, i + 1);
        size_t sl;
        assert_int_equal(dsig_hb_sign(&b.keys[i], msg, ml, sig, p->sig_bytes, &sl), DSIG_OK);
        assert_int_equal(dsig_hb_verify_fast(p, &v, sig, sl, msg, ml), DSIG_OK);
        assert_int_equal(dsig_hb_verify_leaf(p, sig, sl, msg, ml, dsig_hb_batch_leaf(&v, i)), DSIG_OK);
        assert_int_equal(dsig_hb_verify_slow(p, sig, sl, msg, ml, &g_who), DSIG_OK);
        uint64_t seq;
        uint32_t idx;
        assert_int_equal(dsig_hb_sig_locate(p, sig, sl, &seq, &idx), DSIG_OK);
        assert_int_equal(seq, 42);
        assert_int_equal(idx, i);
        msg[0] ^= 0x80;
        if (ml == 0) ml = 1;
        assert_int_equal(dsig_hb_verify_fast(p, &v, sig, sl, msg, ml), DSIG_E_VERIFY);
        assert_int_equal(dsig_hb_verify_slow(p, sig, sl, msg, ml, &g_who), DSIG_E_VERIFY);
        dsig_hb_key_erase(&b.keys[i]);
        assert_int_equal(dsig_hb_sign(&b.keys[i], msg, ml, sig, p->sig_bytes, &sl), DSIG_E_STATE);
    }
    free(sig);
    dsig_hb_batch_free(&v);
    dsig_hb_batch_free(&b);
}

static void test_roundtrip_presets(void **state)
{
    (void)state;
    for (size_t i = 0; dsig_hb_presets[i]; i++) roundtrip(dsig_hb_presets[i]);
}

static void test_roundtrip_custom(void **state)
{
    (void)state;
    dsig_hb_params q;
    for (unsigned h = DSIG_HB_HASH_HARAKA; h <= DSIG_HB_HASH_BLAKE3; h++) {
        for (unsigned lw = 1; lw <= 4; lw++) {
            for (unsigned lb = 0; lb <= 2; lb++) {
                assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_WOTS, h, lw, 0, 0, lb), DSIG_OK);
                roundtrip(&q);
            }
        }
        assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_HORS, h, 0, 8, 64, 1), DSIG_OK);
        roundtrip(&q);
        assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_HORS, h, 0, 9, 32, 0), DSIG_OK);
        roundtrip(&q);
    }
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_WOTS, DSIG_HB_HASH_HARAKA, 2, 0, 0, 10), DSIG_OK);
    assert_int_equal(q.sig_bytes, 47 + 1224 + 320 + 64);
    roundtrip(&q);
}

/* Both paths on one input; returns the common verdict (asserts they agree). */
static int both(const dsig_hb_params *p, const dsig_hb_batch *v, const uint8_t *sig, size_t sl,
                const uint8_t *msg, size_t ml)
{
    int f = dsig_hb_verify_fast(p, v, sig, sl, msg, ml);
    int s = dsig_hb_verify_slow(p, sig, sl, msg, ml, &g_who);
    if (f != s) fail_msg("fast %d and slow %d disagree (%s)", f, s, dsig_last_error_detail());
    return f;
}

/* Flip one bit at `off` and check both paths reject. */
static void expect_reject_flip(const dsig_hb_params *p, const dsig_hb_batch *v, const uint8_t *sig,
                               size_t off, const uint8_t *msg, size_t ml)
{
    uint8_t *c = malloc(p->sig_bytes);
    memcpy(c, sig, p->sig_bytes);
    c[off] ^= 0x01;
    if (both(p, v, c, p->sig_bytes, msg, ml) != DSIG_E_VERIFY) fail_msg("flip at offset %zu accepted", off);
    free(c);
}

static void corrupt_all(const dsig_hb_params *p)
{
    dsig_hb_batch b, v;
    make_batch(p, 9, &b);
    verified_copy(&b, &v);
    const uint8_t msg[8] = "8 bytes!";
    uint32_t at = p->batch - 2 < p->batch ? p->batch - 2 : 0;
    size_t sl, vb = (size_t)p->chains * p->n, proof = 47 + vb, rs = proof + 32u * p->log_batch;
    uint8_t *sig = malloc(p->sig_bytes + 1);
    assert_int_equal(dsig_hb_sign(&b.keys[at], msg, 8, sig, p->sig_bytes, &sl), DSIG_OK);
    assert_int_equal(both(p, &v, sig, sl, msg, 8), DSIG_OK);
    expect_reject_flip(p, &v, sig, 0, msg, 8);          /* version */
    expect_reject_flip(p, &v, sig, 1, msg, 8);          /* parameter id */
    expect_reject_flip(p, &v, sig, 5, msg, 8);          /* batch sequence number */
    expect_reject_flip(p, &v, sig, 12, msg, 8);         /* batch sequence number, top byte */
    expect_reject_flip(p, &v, sig, 13, msg, 8);         /* index (another valid index) */
    for (size_t o = 15; o < 31; o += 5) expect_reject_flip(p, &v, sig, o, msg, 8); /* pk_seed */
    for (size_t o = 31; o < 47; o += 5) expect_reject_flip(p, &v, sig, o, msg, 8); /* nonce */
    if (p->ots == DSIG_HB_OTS_WOTS) {
        for (size_t c = 0; c < p->chains; c++) {           /* every chain value, first and last byte */
            expect_reject_flip(p, &v, sig, 47 + c * p->n, msg, 8);
            expect_reject_flip(p, &v, sig, 47 + c * p->n + p->n - 1, msg, 8);
        }
    } else {
        for (size_t c = 0; c < p->chains; c += (p->chains > 512 ? 37 : 1))  /* slots */
            expect_reject_flip(p, &v, sig, 47 + c * p->n + 7, msg, 8);
    }
    for (size_t l = 0; l < p->log_batch; l++) {        /* every proof node */
        expect_reject_flip(p, &v, sig, proof + l * 32, msg, 8);
        expect_reject_flip(p, &v, sig, proof + l * 32 + 31, msg, 8);
    }
    for (size_t o = rs; o < rs + 64; o += 9) expect_reject_flip(p, &v, sig, o, msg, 8); /* root sig */

    /* index out of range, truncated, over-long, empty */
    uint8_t *c = malloc(p->sig_bytes + 1);
    memcpy(c, sig, p->sig_bytes);
    dsig_store_le16(c + 13, p->batch);
    assert_int_equal(both(p, &v, c, p->sig_bytes, msg, 8), DSIG_E_VERIFY);
    dsig_store_le16(c + 13, 0xffff);
    assert_int_equal(both(p, &v, c, p->sig_bytes, msg, 8), DSIG_E_VERIFY);
    memcpy(c, sig, p->sig_bytes);
    c[p->sig_bytes] = 0;
    assert_int_equal(both(p, &v, c, p->sig_bytes + 1, msg, 8), DSIG_E_VERIFY);
    assert_int_equal(both(p, &v, c, p->sig_bytes - 1, msg, 8), DSIG_E_VERIFY);
    assert_int_equal(both(p, &v, c, 0, msg, 8), DSIG_E_VERIFY);
    assert_int_equal(both(p, &v, c, 47, msg, 8), DSIG_E_VERIFY);
    /* wrong signer key, same key under another signer id, another domain: the slow path rejects and
     * the batch message does not verify (the root message binds all three) */
    dsig_ed25519_dkey root2;
    dsig_hb_who whos[3];
    identity(0x43, 1, &root2, &whos[0]);
    whos[1] = g_who;
    whos[1].signer_id = 2;
    whos[2] = g_who;
    whos[2].domain = DSIG_HB_DOMAIN_FILE;
    uint8_t *bm = malloc(p->batch_msg_bytes);
    dsig_hb_batch w;
    assert_int_equal(dsig_hb_batch_message(&b, bm, p->batch_msg_bytes, NULL), DSIG_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dsig_hb_verify_slow(p, sig, sl, msg, 8, &whos[i]), DSIG_E_VERIFY);
        assert_int_equal(dsig_hb_batch_verify(p, bm, p->batch_msg_bytes, &whos[i], &w), DSIG_E_VERIFY);
        assert_null(w.nodes);
    }
    /* corrupted batch messages: leaf, root signature, seq, version, parameter id, lengths */
    size_t offs[] = {0, 1, 5, 13, 13 + 32u * p->batch - 1, 13 + 32u * p->batch, p->batch_msg_bytes - 1};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        bm[offs[i]] ^= 0x10;
        assert_int_equal(dsig_hb_batch_verify(p, bm, p->batch_msg_bytes, &g_who, &w), DSIG_E_VERIFY);
        bm[offs[i]] ^= 0x10;
    }
    assert_int_equal(dsig_hb_batch_verify(p, bm, p->batch_msg_bytes - 1, &g_who, &w), DSIG_E_VERIFY);
    assert_int_equal(dsig_hb_batch_verify(p, bm, p->batch_msg_bytes, &g_who, &w), DSIG_OK);
    dsig_hb_batch_free(&w);
    /* a cached batch with another sequence number: fast rejects */
    dsig_hb_batch b2, v2;
    make_batch(p, 10, &b2);
    verified_copy(&b2, &v2);
    assert_int_equal(dsig_hb_verify_fast(p, &v2, sig, sl, msg, 8), DSIG_E_VERIFY);
    dsig_hb_batch_free(&v2);
    dsig_hb_batch_free(&b2);
    /* the same bytes under another parameter set */
    const dsig_hb_params *other = p == &dsig_hb_wots4_haraka ? &dsig_hb_wots4_sha256 : &dsig_hb_wots4_haraka;
    assert_int_equal(dsig_hb_verify_slow(other, sig, sl, msg, 8, &g_who), DSIG_E_VERIFY);
    free(bm);
    free(c);
    free(sig);
    dsig_hb_batch_free(&v);
    dsig_hb_batch_free(&b);
}

static void test_reject_corruptions(void **state)
{
    (void)state;
    corrupt_all(&dsig_hb_wots4_haraka);
    corrupt_all(&dsig_hb_wots4_sha256);
    corrupt_all(&dsig_hb_wots4_blake3);
    corrupt_all(&dsig_hb_wots16_haraka);
    corrupt_all(&dsig_hb_hors64_haraka);
    dsig_hb_params q;
    assert_int_equal(dsig_hb_params_init(&q, DSIG_HB_OTS_WOTS, DSIG_HB_HASH_HARAKA, 2, 0, 0, 1), DSIG_OK);
    corrupt_all(&q);
}

/* Random mutations (bit flips, byte swaps between signatures, other messages): fast == slow. */
static void test_differential(void **state)
{
    (void)state;
    const dsig_hb_params *ps[] = {&dsig_hb_wots4_haraka, &dsig_hb_hors32_haraka, &dsig_hb_wots8_haraka};
    uint64_t rnd = 0x9e3779b97f4a7c15ull;
    for (size_t pi = 0; pi < 3; pi++) {
        const dsig_hb_params *p = ps[pi];
        dsig_hb_batch b, v;
        make_batch(p, 77, &b);
        verified_copy(&b, &v);
        uint8_t *s1 = malloc(p->sig_bytes), *s2 = malloc(p->sig_bytes), *c = malloc(p->sig_bytes);
        uint8_t m1[16] = "message one....", m2[16] = "message two....";
        size_t sl;
        assert_int_equal(dsig_hb_sign(&b.keys[1], m1, 16, s1, p->sig_bytes, &sl), DSIG_OK);
        assert_int_equal(dsig_hb_sign(&b.keys[2], m2, 16, s2, p->sig_bytes, &sl), DSIG_OK);
        int ok = 0, bad = 0;
        for (int it = 0; it < 300; it++) {
            rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
            memcpy(c, (rnd & 1) ? s1 : s2, p->sig_bytes);
            const uint8_t *m = (rnd & 1) ? m1 : m2;
            switch ((rnd >> 1) % 5) {
            case 0: break; /* valid */
            case 1: c[(rnd >> 8) % p->sig_bytes] ^= (uint8_t)(1u << ((rnd >> 40) & 7)); break;
            case 2: m = (rnd & 1) ? m2 : m1; break; /* other message */
            case 3: { /* splice a range of the other signature in */
                size_t o = (rnd >> 8) % p->sig_bytes, n = 1 + (rnd >> 32) % 64;
                if (o + n > p->sig_bytes) n = p->sig_bytes - o;
                memcpy(c + o, ((rnd & 1) ? s2 : s1) + o, n);
                break;
            }
            default: c[47 + (rnd >> 8) % (p->chains * p->n)] ^= 0xff; break;
            }
            int r = both(p, &v, c, p->sig_bytes, m, 16);
            if (r == DSIG_OK) ok++; else bad++;
        }
        assert_true(ok > 0);
        assert_true(bad > 0);
        free(s1);
        free(s2);
        free(c);
        dsig_hb_batch_free(&v);
        dsig_hb_batch_free(&b);
    }
}

/*
 * The verification walk's back-ends agree: the register-resident VAES-512 walker (where this CPU has
 * it) against the generic one, on random chains — every step count, stops and chain ids given or
 * not, 1 to 256 chains, any output layout. The frozen vectors above cover one layout only.
 */
static void test_walk_backends(void **state)
{
    (void)state;
    const dsig_hb_params *ps[] = {&dsig_hb_wots4_haraka, &dsig_hb_wots2_haraka, &dsig_hb_wots8_haraka,
                                  &dsig_hb_wots16_haraka};
    if (!hb_chains_walk_native(ps[0])) {
        print_message("no VAES-512 on this CPU (or DSIG_CPU_DISABLE): only the generic walker runs\n");
        skip();
    }
    uint64_t rnd = 0x2545f4914f6cdd1dull;
#define NEXT() (rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17, rnd)
    enum { MAXC = 256, N = 18 };
    static uint8_t vals[MAXC * N], e1[MAXC * (N + 40) + 64], e2[sizeof e1];
    uint8_t start[MAXC], stop[MAXC], seed[16];
    uint16_t ids[MAXC];
    unsigned runs = 0;
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
        const dsig_hb_params *p = ps[pi];
        assert_true(hb_chains_walk_native(p));
        for (int it = 0; it < 400; it++, runs++) {
            const size_t cnt = it < 64 ? (size_t)it + 1 : 1 + NEXT() % MAXC;
            for (size_t i = 0; i < sizeof vals; i++) vals[i] = (uint8_t)NEXT();
            for (size_t i = 0; i < 16; i++) seed[i] = (uint8_t)NEXT();
            for (size_t c = 0; c < cnt; c++) {
                start[c] = (uint8_t)(NEXT() % p->levels);
                stop[c] = (uint8_t)(NEXT() % p->levels); /* below start: no steps */
                ids[c] = (uint16_t)NEXT();
            }
            const int use_stop = (it >> 1) & 1, use_ids = it & 1;
            const unsigned per = 1 + (unsigned)(NEXT() % cnt);
            const hb_walk_out lay = {.per = per, .stride = (size_t)per * N + NEXT() % 40};
            memset(e1, 0xa5, sizeof e1);
            memset(e2, 0xa5, sizeof e2);
            const unsigned dom = (unsigned)(NEXT() & 0xff);
            hb_chains_walk_to_generic(p, seed, dom, use_ids ? ids : NULL, start, use_stop ? stop : NULL, vals, e1,
                                      &lay, cnt);
            hb_chains_walk_to_vaes512(p, seed, dom, use_ids ? ids : NULL, start, use_stop ? stop : NULL, vals, e2,
                                      &lay, cnt);
            if (memcmp(e1, e2, sizeof e1) != 0) {
                size_t i = 0;
                while (e1[i] == e2[i]) i++;
                fail_msg("%s: walkers differ (chains %zu, per %u, stride %zu, stops %d, ids %d) at byte %zu",
                         p->name, cnt, per, lay.stride, use_stop, use_ids, i);
            }
        }
    }
#undef NEXT
    print_message("%u random walks: both walkers agree\n", runs);
}

/*
 * The walkers' schedule (hb_walk_plan: the in-register sort where the build has SSE2) against the
 * portable counting sort, and the invariants either walker relies on: order is a permutation of the
 * chains by non-increasing steps, at its inverse, ge[s] the chains with at least s steps, each chain's
 * end slot where the layout puts it. Both walkers share this schedule, so their differential test
 * cannot see a wrong one; the frozen vectors see only one layout.
 */
static void test_walk_plan(void **state)
{
    (void)state;
    uint64_t rnd = 0x9e3779b97f4a7c15ull;
#define NEXT() (rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17, rnd)
    static const unsigned levels_of[] = {2, 4, 8, 16};
    static uint8_t ends[HB_WALK_MAX * 64];
    static hb_walk_sched a, b;
    uint8_t start[HB_WALK_MAX], stop[HB_WALK_MAX];
    unsigned runs = 0;
    for (int it = 0; it < 4000; it++, runs++) {
        const unsigned levels = levels_of[it & 3];
        const size_t cnt = it < 256 ? (size_t)it + 1 : 1 + NEXT() % HB_WALK_MAX;
        const int use_stop = (it >> 2) & 1, uniform = (it % 7) == 0; /* key generation: every chain alike */
        for (size_t c = 0; c < cnt; c++) {
            start[c] = (uint8_t)(uniform ? 0 : NEXT() % levels);
            stop[c] = (uint8_t)(NEXT() % levels);
        }
        const unsigned per = 1 + (unsigned)(NEXT() % cnt);
        const size_t n = (it & 8) ? 16 : 18;
        const hb_walk_out lay = {.per = per, .stride = per * n + NEXT() % 40};
        memset(&a, 0x5a, sizeof a);
        memset(&b, 0xa5, sizeof b);
        hb_walk_plan(start, use_stop ? stop : NULL, levels, cnt, ends, &lay, n, &a);
        hb_walk_plan_scalar(start, use_stop ? stop : NULL, levels, cnt, &b);
        assert_memory_equal(a.steps, b.steps, cnt);
        assert_memory_equal(a.ge, b.ge, (levels + 1) * sizeof a.ge[0]);
        assert_int_equal(a.most, b.most);
        unsigned seen[HB_WALK_MAX] = {0}, ge[17] = {0};
        for (size_t c = 0; c < cnt; c++) {
            const int d = (use_stop ? (int)stop[c] : (int)levels - 1) - (int)start[c];
            assert_int_equal(a.steps[c], d > 0 ? d : 0);
            for (unsigned s = 0; s <= a.steps[c]; s++) ge[s]++;
            assert_true(a.at[c] < cnt);
            assert_int_equal(a.order[a.at[c]], c);
            seen[a.at[c]]++;
            assert_ptr_equal(a.dst[c], ends + (c / per) * lay.stride + (c % per) * n);
        }
        for (size_t i = 0; i < cnt; i++) {
            assert_int_equal(seen[i], 1);
            if (i) assert_true(a.steps[a.order[i - 1]] >= a.steps[a.order[i]]);
        }
        for (unsigned s = 0; s < levels; s++) assert_int_equal(a.ge[s], ge[s]);
        assert_int_equal(a.ge[levels], 0);
        unsigned most = 0;
        for (unsigned s = 1; s < levels; s++)
            if (ge[s]) most = s;
        assert_int_equal(a.most, most);
    }
#undef NEXT
    print_message("%u random schedules: both sorts agree\n", runs);
}

/*
 * The reference code's checksum Σ d_i lets a holder of one signature raise message digits: every chain
 * it must reveal can be computed forward. With Σ(w−1−d_i) raising a digit lowers the checksum, so some
 * checksum chain would have to go backwards. Forge exactly as an attacker would (advance each message
 * chain whose digit rose, advance checksum chains where possible) and check the leaf does not match.
 */
static void test_reference_checksum_forgery(void **state)
{
    (void)state;
    const dsig_hb_params *p = &dsig_hb_wots4_haraka;
    dsig_hb_batch b;
    make_batch(p, 3, &b);
    const dsig_hb_key *k = &b.keys[0];
    const uint8_t *pks = k->mem + HB_OFF_PKSEED;
    const uint8_t *table = k->mem + DSIG_HB_SIG_HEADER + 32u * p->log_batch + 64;
    uint8_t d1[24], d2[24], dig1[HB_MAX_WOTS_CHAINS], dig2[HB_MAX_WOTS_CHAINS];
    uint8_t vals[HB_MAX_WOTS_CHAINS * 18], leaf[32];
    tu_fill(d1, 16, 5);
    memset(d1 + 16, 0, 8);
    for (int trial = 0; trial < 64; trial++) {
        memcpy(d2, d1, sizeof d2);
        hb_wots_digits(p, d1, dig1);
        if (dig1[trial] == 3) continue;
        d2[trial / 4] = (uint8_t)(d2[trial / 4] + (1u << (2 * (trial % 4)))); /* raise digit `trial` by one */
        hb_wots_digits(p, d2, dig2);
        assert_int_equal(dig2[trial], dig1[trial] + 1);
        hb_wots_sign(p, table, d1, vals); /* the known signature */
        int backwards = 0;
        for (unsigned i = 0; i < p->chains; i++) {
            if (dig2[i] < dig1[i]) { backwards++; continue; } /* the forger cannot invert F */
            for (unsigned j = dig1[i]; j < dig2[i]; j++)
                hb_chain_f(p, pks, HB_DOM_WOTS, i, j, vals + i * 18, vals + i * 18);
        }
        assert_true(backwards > 0); /* some checksum digit fell */
        hb_wots_leaf(p, pks, vals, d2, leaf);
        assert_memory_not_equal(leaf, k->leaf, 32);
        /* sanity: the honest signature for d2 completes to the leaf */
        hb_wots_sign(p, table, d2, vals);
        hb_wots_leaf(p, pks, vals, d2, leaf);
        assert_memory_equal(leaf, k->leaf, 32);
    }
    dsig_hb_batch_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encodings),
        cmocka_unit_test(test_kat),
        cmocka_unit_test(test_leaf_encoding),
        cmocka_unit_test(test_params_reject),
        cmocka_unit_test(test_roundtrip_presets),
        cmocka_unit_test(test_roundtrip_custom),
        cmocka_unit_test(test_reject_corruptions),
        cmocka_unit_test(test_differential),
        cmocka_unit_test(test_walk_backends),
        cmocka_unit_test(test_walk_plan),
        cmocka_unit_test(test_reference_checksum_forgery),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
