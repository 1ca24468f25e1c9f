/*
 * tests/xmss/test_xmss_state.c — the traversal and the providers:
 *   - traversal consistency: a traversal with a small forced split (so the next-subtree and next-tree
 *     builders, the switches and the XMSS^MT cached WOTS+ signatures all run) signs index after
 *     index exactly like a traversal rebuilt at each index; reloads and jumps rebuild correctly;
 *   - providers "XMSS" / "XMSSMT": keygen with a `param`, JWK (AKP, "pub" = OID ‖ root ‖ SEED)
 *     round trip, in-memory keys refuse to sign, malformed "pub" and corrupted signatures rejected;
 *   - state files: create (registry_dir ""), sign through the ordinary stream API, close, reopen,
 *     go on; indices never repeat; an XMSS-SHA2_10_256 key signs exactly 1024 times, then
 *     DSIG_E_EXHAUSTED.
 */
#include <stdio.h>
#include <unistd.h>

#include "core/internal.h"
#include "dsig/state.h"
#include "xmss_testlib.h"

/* Sign msg at q with a traversal. */
static void sign_t(const dsig_xmss_hash *hc, dsig_xmss_trav *T, const uint8_t *prf, const uint8_t *root,
                   uint64_t q, uint8_t *sig)
{
    const dsig_xmss_params *p = hc->p;
    uint8_t dg[XMSS_NMAX], msg[8] = {(uint8_t)q, 1, 2, 3};
    assert_int_equal(dsig_xmss_sign_prepare(hc, T, prf, q, sig), DSIG_OK);
    assert_int_equal(dsig_xmss_hmsg(p, sig + p->idx_bytes, root, q, msg, sizeof msg, dg), DSIG_OK);
    dsig_xmss_sign_finish(hc, dg, sig);
}

/* Sequential signing with split `split` equals signing with a traversal rebuilt at each index. */
static void consistency(const char *set, unsigned split, uint64_t count, uint64_t reload_at,
                        uint64_t jump_from, uint64_t jump_to)
{
    const dsig_xmss_params *p = dsig_xmss_params_by_name(set);
    assert_non_null(p);
    uint8_t seeds[3 * XMSS_NMAX];
    tu_fill(seeds, sizeof seeds, 42 + split);
    dsig_xmss_hash hc;
    dsig_xmss_hash_init(&hc, p, seeds + 2 * p->n, seeds);
    const uint8_t *prf = seeds + p->n;
    uint8_t root[XMSS_NMAX], pk[4 + 2 * XMSS_NMAX];
    dsig_xmss_trav *T = NULL, *R = NULL;
    dsig_xmss_test_split = split;
    assert_int_equal(dsig_xmss_keygen(&hc, root, &T), DSIG_OK);
    dsig_xmss_test_split = 0;
    memset(pk, 0, 4);
    pk[3] = (uint8_t)p->oid;
    memcpy(pk + 4, root, p->n);
    memcpy(pk + 4 + p->n, seeds + 2 * p->n, p->n);
    uint8_t *a = malloc(p->sig_bytes), *b = malloc(p->sig_bytes);
    uint8_t msg[8];
    for (uint64_t q = 0; q < count; q++) {
        if (q == jump_from)
            q = jump_to; /* a skipped window: the traversal rebuilds at the new index */
        if (q == reload_at) {
            dsig_xmss_trav_free(T);
            dsig_xmss_test_split = split;
            assert_int_equal(dsig_xmss_trav_new(&hc, q, NULL, 0, &T), DSIG_OK);
            dsig_xmss_test_split = 0;
        }
        sign_t(&hc, T, prf, root, q, a);
        /* reference: a default traversal moved to q (rebuilt when q leaves its subtrees) */
        if (!R)
            assert_int_equal(dsig_xmss_trav_new(&hc, q, NULL, 0, &R), DSIG_OK);
        sign_t(&hc, R, prf, root, q, b);
        assert_memory_equal(a, b, p->sig_bytes);
        memset(msg, 0, sizeof msg);
        msg[0] = (uint8_t)q, msg[1] = 1, msg[2] = 2, msg[3] = 3;
        assert_int_equal(dsig_xmss_verify_raw(p, pk, msg, sizeof msg, a, p->sig_bytes), DSIG_OK);
    }
    dsig_xmss_trav_free(T);
    dsig_xmss_trav_free(R);
    dsig_xmss_hash_wipe(&hc);
    free(a), free(b);
}

/* XMSS with bottom subtrees of 8 leaves: next-subtree builders and switches. */
static void test_traversal_xmss(void **st)
{
    (void)st;
    consistency("XMSS-SHA2_10_256", 3, xt_sample() ? 40 : 100, 37, 70, 75);
}

/* XMSS^MT 20/4 (trees of 32 leaves): tree switches on every layer-0 boundary, whole-tree split and a
 * split of 2 (next-tree top builders). */
static void test_traversal_mt(void **st)
{
    (void)st;
    consistency("XMSSMT-SHA2_20/4_256", 0, xt_sample() ? 40 : 140, 45, 100, 129);
    consistency("XMSSMT-SHA2_20/4_256", 2, xt_sample() ? 40 : 140, 45, 100, 129);
    consistency("XMSSMT-SHAKE_20/4_256", 2, xt_sample() ? 10 : 70, 45, 100, 129);
}

/* A JWK (public) round trip of a key; returns the re-imported public key. */
static dsig_key *jwk_roundtrip(const dsig_key *k)
{
    char *json = NULL;
    size_t len = 0;
    assert_int_equal(dsig_jwk_export(k, 0, &json, &len), DSIG_OK);
    assert_non_null(strstr(json, "\"pub\""));
    assert_null(strstr(json, "\"priv\""));
    dsig_key *pub = NULL;
    assert_int_equal(dsig_jwk_import(&pub, json, len), DSIG_OK);
    dsig_free(json);
    return pub;
}

/* A JWK with a given kty/alg/pub. */
static int import_pub(const char *alg, const uint8_t *pub, size_t len, dsig_key **out)
{
    char b64[512], json[700];
    dsig_b64url_encode(b64, pub, len);
    snprintf(json, sizeof json, "{\"kty\":\"AKP\",\"alg\":\"%s\",\"pub\":\"%s\"}", alg, b64);
    return dsig_jwk_import(out, json, strlen(json));
}

/* Providers without state: keygen by param, JWK, refusals, malformed input. */
static void test_provider_memory(void **st)
{
    (void)st;
    const dsig_alg *x = dsig_alg_by_name("XMSS"), *mt = dsig_alg_by_name("XMSSMT");
    assert_non_null(x);
    assert_non_null(mt);
    assert_true(dsig_alg_flags(mt) & DSIG_ALG_STATEFUL);
    uint8_t seed[32];
    tu_fill(seed, sizeof seed, 7);
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed, .param = "XMSSMT-SHA2_20/4_256"};
    dsig_key *k = NULL, *bad = NULL;
    assert_int_equal(dsig_key_generate(&k, mt, &kp), DSIG_OK);
    kp.param = "XMSS-SHA2_10_256"; /* an XMSS set for XMSSMT */
    assert_int_equal(dsig_key_generate(&bad, mt, &kp), DSIG_E_ARG);
    kp.param = "XMSSMT-SHA2_21/4_256";
    assert_int_equal(dsig_key_generate(&bad, mt, &kp), DSIG_E_ARG);
    /* in memory: verify-only, signing refused */
    uint8_t sig[16384];
    size_t sl = 0;
    assert_int_not_equal(dsig_sign(mt, k, "m", 1, sig, sizeof sig, &sl), DSIG_OK);
    dsig_key *pub = jwk_roundtrip(k);
    /* malformed public keys */
    uint8_t raw[4 + 64];
    memset(raw, 0, sizeof raw);
    raw[3] = 2; /* XMSSMT-SHA2_20/4_256 */
    assert_int_equal(import_pub("XMSSMT", raw, sizeof raw - 1, &bad), DSIG_E_KEY); /* short */
    raw[3] = 0x39;
    assert_int_equal(import_pub("XMSSMT", raw, sizeof raw, &bad), DSIG_E_KEY); /* unknown OID */
    raw[3] = 0;
    assert_int_equal(import_pub("XMSS", raw, sizeof raw, &bad), DSIG_E_KEY);
    raw[3] = 1;
    assert_int_equal(import_pub("XMSS", raw, 3, &bad), DSIG_E_KEY);
    assert_null(bad);
    /* a liboqs signature through the stream API with an imported key */
    size_t tl, pkl, ml, sml;
    char *text = tu_read_vector_file("xmss/liboqs/XMSSMT-SHA2_20-4_256.rsp", &tl);
    char *hpk = xt_field(text, "pk"), *hm = xt_field(text, "msg"), *hs = xt_field(text, "sm");
    uint8_t *vpk = xt_hex(hpk, &pkl), *msg = xt_hex(hm, &ml), *sm = xt_hex(hs, &sml);
    dsig_key *vk = NULL;
    assert_int_equal(import_pub("XMSSMT", vpk, pkl, &vk), DSIG_OK);
    assert_int_equal(tu_verify_chunked(mt, vk, msg, ml, 7, sm, sml), DSIG_OK);
    assert_int_equal(tu_verify_chunked(mt, vk, msg, ml, 7, sm, sml - 1), DSIG_E_VERIFY);
    sm[0] = sm[1] = sm[2] = 0xff; /* index 2^24 - 1 >= 2^20 */
    assert_int_equal(tu_verify_chunked(mt, vk, msg, ml, 0, sm, sml), DSIG_E_VERIFY);
    assert_int_not_equal(tu_verify_chunked(x, vk, msg, ml, 0, sm, sml), DSIG_OK); /* wrong alg */
    free(text), free(hpk), free(hm), free(hs), free(vpk), free(msg), free(sm);
    dsig_key_free(vk);
    dsig_key_free(pub);
    dsig_key_free(k);
}

/* A temporary state-file path. */
static void tmp_path(char *out, size_t cap, const char *tag)
{
    const char *d = getenv("TMPDIR");
    snprintf(out, cap, "%s/xmss-state-%s-%d", d && *d ? d : "/tmp", tag, (int)getpid());
    unlink(out);
}

/* Index of a signature (first idx_bytes big-endian bytes). */
static uint64_t sig_idx(const uint8_t *sig, unsigned ib)
{
    uint64_t q = 0;
    for (unsigned i = 0; i < ib; i++)
        q = q << 8 | sig[i];
    return q;
}

/* State file: create, sign, reopen, sign; verify everything with the public JWK. */
static void state_roundtrip(const char *algname, const char *param, unsigned ib, int rounds, int per)
{
    const dsig_alg *alg = dsig_alg_by_name(algname);
    char path[512];
    tmp_path(path, sizeof path, algname);
    dsig_state_opts so = {.reserve = 4, .registry_dir = ""};
    dsig_keygen_params kp = {.param = param};
    dsig_key *k = NULL;
    assert_int_equal(dsig_state_create(&k, path, alg, &kp, &so), DSIG_OK);
    dsig_key *pub = jwk_roundtrip(k);
    uint8_t msg[1000], *sig = malloc(dsig_alg_sig_max(alg));
    tu_fill(msg, sizeof msg, 3);
    int64_t last = -1;
    for (int r = 0; r < rounds; r++) {
        if (r) {
            dsig_key_free(k);
            k = NULL;
            assert_int_equal(dsig_state_open(&k, path, &so), DSIG_OK);
        }
        for (int i = 0; i < per; i++) {
            size_t sl = 0;
            msg[0] = (uint8_t)i;
            assert_int_equal(tu_sign_chunked(alg, k, msg, sizeof msg, 333, sig, dsig_alg_sig_max(alg), &sl),
                             DSIG_OK);
            int64_t q = (int64_t)sig_idx(sig, ib);
            assert_true(q > last); /* never reused */
            last = q;
            assert_int_equal(tu_verify_chunked(alg, pub, msg, sizeof msg, 100, sig, sl), DSIG_OK);
            msg[5] ^= 1;
            assert_int_equal(tu_verify_chunked(alg, pub, msg, sizeof msg, 0, sig, sl), DSIG_E_VERIFY);
            msg[5] ^= 1;
        }
    }
    dsig_key_free(k);
    dsig_key_free(pub);
    free(sig);
    unlink(path);
}

/* XMSS and XMSS^MT through state files (defaults and a named set). */
static void test_state_roundtrip(void **st)
{
    (void)st;
    state_roundtrip("XMSSMT", NULL, 3, 3, 6);
    state_roundtrip("XMSSMT", "XMSSMT-SHAKE_20/4_256", 3, 2, 3);
    state_roundtrip("XMSS", NULL, 4, 2, 5);
}

/* XMSS-SHA2_10_256: exactly 2^10 signatures, then DSIG_E_EXHAUSTED. */
static void test_exhaustion(void **st)
{
    (void)st;
    const dsig_alg *alg = dsig_alg_by_name("XMSS");
    char path[512];
    tmp_path(path, sizeof path, "exhaust");
    dsig_state_opts so = {.reserve = 256, .registry_dir = ""};
    dsig_key *k = NULL;
    assert_int_equal(dsig_state_create(&k, path, alg, NULL, &so), DSIG_OK);
    uint8_t sig[2500];
    size_t sl;
    for (uint64_t i = 0; i < 1024; i++) {
        assert_int_equal(dsig_sign(alg, k, "x", 1, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(sig_idx(sig, 4), i);
    }
    assert_int_equal(dsig_sign(alg, k, "x", 1, sig, sizeof sig, &sl), DSIG_E_EXHAUSTED);
    dsig_key_free(k);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_traversal_xmss),
        cmocka_unit_test(test_traversal_mt),
        cmocka_unit_test(test_provider_memory),
        cmocka_unit_test(test_state_roundtrip),
        cmocka_unit_test(test_exhaustion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
