/*
 * tests/tlog/test_tlog.c — dsig/tlog.h: the RFC 6962 reference tree's roots, proofs that verify and
 * proofs that must not (every bit of every hash flipped, wrong index, size or length), the compact
 * range against a full recomputation, and checkpoints as C2SP signed notes (sign, verify, tamper,
 * verifier key text).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dsig/dsig.h"
#include "dsig/jwk.h"
#include "dsig/tlog.h"
#include "hash/sha256.h"

static uint8_t nodes[4096][32];
static uint64_t nstored;

static int put(void *arg, unsigned level, uint64_t index, const uint8_t h[32])
{
    (void)arg;
    assert_int_equal(dsig_tlog_node_pos(level, index), nstored);
    memcpy(nodes[nstored++], h, 32);
    return 0;
}

static int get(void *arg, unsigned level, uint64_t index, uint8_t out[32])
{
    (void)arg;
    uint64_t p = dsig_tlog_node_pos(level, index);
    assert_true(p < nstored);
    memcpy(out, nodes[p], 32);
    return 0;
}

static void hex32(const char *hex, uint8_t out[32])
{
    for (int i = 0; i < 32; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

/* The RFC 6962 reference test data: 8 inputs, the roots of their first 1..8 leaves. */
static void test_reference_roots(void **state)
{
    (void)state;
    static const char *in[8] = {"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                "606162636465666768696a6b6c6d6e6f"};
    static const char *roots[8] = {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                                   "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
                                   "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
                                   "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                                   "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
                                   "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
                                   "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
                                   "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"};
    dsig_tlog_range r;
    dsig_tlog_range_init(&r);
    uint8_t root[32], want[32];
    dsig_tlog_range_root(&r, root);
    hex32("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", want);
    assert_memory_equal(root, want, 32);
    for (int i = 0; i < 8; i++) {
        uint8_t e[16], leaf[32];
        size_t n = strlen(in[i]) / 2;
        for (size_t j = 0; j < n; j++) {
            unsigned v;
            sscanf(in[i] + 2 * j, "%2x", &v);
            e[j] = (uint8_t)v;
        }
        dsig_tlog_leaf_hash(e, n, leaf);
        assert_int_equal(dsig_tlog_range_append(&r, leaf, NULL, NULL), DSIG_OK);
        dsig_tlog_range_root(&r, root);
        hex32(roots[i], want);
        assert_memory_equal(root, want, 32);
    }
}

/* Entries of every length up to several SHA-256 blocks: the streaming leaf hash equals the one-shot
 * SHA-256 of 0x00 ‖ entry. */
static void test_leaf_lengths(void **state)
{
    (void)state;
    uint8_t buf[301], tmp[302], a[32], b[32];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7 + 1);
    for (size_t n = 0; n <= sizeof buf; n++) {
        tmp[0] = 0;
        memcpy(tmp + 1, buf, n);
        dsig_tlog_leaf_hash(buf, n, a);
        dsig_sha256(b, tmp, n + 1);
        assert_memory_equal(a, b, 32);
    }
}

static void build(uint64_t n)
{
    nstored = 0;
    dsig_tlog_range r;
    dsig_tlog_range_init(&r);
    for (uint64_t i = 0; i < n; i++) {
        char e[24];
        uint8_t leaf[32];
        int len = snprintf(e, sizeof e, "entry-%llu", (unsigned long long)i);
        dsig_tlog_leaf_hash(e, (size_t)len, leaf);
        assert_int_equal(dsig_tlog_range_append(&r, leaf, put, NULL), DSIG_OK);
    }
}

static void root_of(uint64_t n, uint8_t out[32])
{
    if (n == 0) {
        dsig_tlog_empty_root(out);
        return;
    }
    assert_int_equal(dsig_tlog_subtree(get, NULL, 0, n, out), DSIG_OK);
}

/* Every inclusion proof in trees of 1..40 leaves verifies; every single-bit change, another index, a shorter
 * or longer proof does not. (Another size may verify: the size is bound to the root by the checkpoint.) */
static void test_inclusion_tamper(void **state)
{
    (void)state;
    build(40);
    for (uint64_t n = 1; n <= 40; n++) {
        uint8_t root[32];
        root_of(n, root);
        for (uint64_t m = 0; m < n; m++) {
            uint8_t proof[DSIG_TLOG_PROOF_MAX][32], leaf[32];
            size_t len;
            assert_int_equal(dsig_tlog_inclusion_proof(get, NULL, m, n, proof, &len), DSIG_OK);
            memcpy(leaf, nodes[dsig_tlog_node_pos(0, m)], 32);
            assert_int_equal(dsig_tlog_verify_inclusion(m, n, leaf, (const uint8_t(*)[32])proof, len, root), DSIG_OK);
            for (size_t i = 0; i < len; i++)
                for (int bit = 0; bit < 256; bit += 37) {
                    proof[i][bit / 8] ^= (uint8_t)(1u << (bit % 8));
                    assert_int_equal(dsig_tlog_verify_inclusion(m, n, leaf, (const uint8_t(*)[32])proof, len, root),
                                     DSIG_E_VERIFY);
                    proof[i][bit / 8] ^= (uint8_t)(1u << (bit % 8));
                }
            leaf[5] ^= 1;
            assert_int_equal(dsig_tlog_verify_inclusion(m, n, leaf, (const uint8_t(*)[32])proof, len, root), DSIG_E_VERIFY);
            leaf[5] ^= 1;
            if (n > 1) {
                assert_int_not_equal(dsig_tlog_verify_inclusion((m + 1) % n, n, leaf, (const uint8_t(*)[32])proof, len, root), DSIG_OK);
                assert_int_not_equal(dsig_tlog_verify_inclusion(m, n, leaf, (const uint8_t(*)[32])proof, len - 1, root), DSIG_OK);
            }
            memcpy(proof[len], root, 32);
            assert_int_not_equal(dsig_tlog_verify_inclusion(m, n, leaf, (const uint8_t(*)[32])proof, len + 1, root), DSIG_OK);
        }
        assert_int_equal(dsig_tlog_verify_inclusion(n, n, root, NULL, 0, root), DSIG_E_ARG);
    }
}

static void test_consistency_tamper(void **state)
{
    (void)state;
    build(40);
    for (uint64_t n = 1; n <= 40; n++) {
        uint8_t r2[32];
        root_of(n, r2);
        for (uint64_t m = 1; m <= n; m++) {
            uint8_t r1[32], proof[DSIG_TLOG_PROOF_MAX][32];
            size_t len;
            root_of(m, r1);
            assert_int_equal(dsig_tlog_consistency_proof(get, NULL, m, n, proof, &len), DSIG_OK);
            assert_int_equal(dsig_tlog_verify_consistency(m, n, r1, r2, (const uint8_t(*)[32])proof, len), DSIG_OK);
            for (size_t i = 0; i < len; i++) {
                proof[i][i % 32] ^= 0x40;
                assert_int_equal(dsig_tlog_verify_consistency(m, n, r1, r2, (const uint8_t(*)[32])proof, len), DSIG_E_VERIFY);
                proof[i][i % 32] ^= 0x40;
            }
            r1[0] ^= 1;
            assert_int_equal(dsig_tlog_verify_consistency(m, n, r1, r2, (const uint8_t(*)[32])proof, len), DSIG_E_VERIFY);
            r1[0] ^= 1;
            if (m < n) {
                uint8_t other[32];
                root_of(n - 1, other);
                assert_int_not_equal(dsig_tlog_verify_consistency(m, n, r1, other, (const uint8_t(*)[32])proof, len), DSIG_OK);
                assert_int_not_equal(dsig_tlog_verify_consistency(m, n, r1, r2, (const uint8_t(*)[32])proof, len - 1), DSIG_OK);
            }
        }
    }
    uint8_t z[32] = {0};
    assert_int_equal(dsig_tlog_verify_consistency(0, 3, z, z, NULL, 0), DSIG_E_ARG);
    assert_int_equal(dsig_tlog_verify_consistency(4, 3, z, z, NULL, 0), DSIG_E_ARG);
}

static void test_checkpoint_note(void **state)
{
    (void)state;
    dsig_key *key = NULL;
    const dsig_alg *ed = dsig_alg_by_name("Ed25519");
    uint8_t seed[32] = {1, 2, 3};
    dsig_keygen_params p = {.seed = seed, .seed_len = sizeof seed};
    assert_int_equal(dsig_key_generate(&key, ed, &p), DSIG_OK);
    uint8_t pub[32], root[32], root2[32];
    assert_int_equal(dsig_tlog_ed25519_public(key, pub), DSIG_OK);
    memset(root, 0xab, 32);
    char *body = NULL, *note = NULL, *vkey = NULL;
    assert_int_equal(dsig_tlog_checkpoint_body("example.com/log", 42, root, &body), DSIG_OK);
    assert_string_equal(body, "example.com/log\n42\nq6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=\n");
    size_t len = 0, tl = 0;
    assert_int_equal(dsig_tlog_note_sign(body, strlen(body), "example.com/log", key, &note, &len), DSIG_OK);
    assert_int_equal(strncmp(note + strlen(body), "\n\xe2\x80\x94 example.com/log ", 21), 0);
    assert_int_equal(dsig_tlog_note_verify(note, len, "example.com/log", pub, &tl), DSIG_OK);
    assert_int_equal(tl, strlen(body));
    char origin[DSIG_TLOG_ORIGIN_MAX + 1];
    uint64_t size = 0;
    assert_int_equal(dsig_tlog_checkpoint_parse(note, tl, origin, &size, root2), DSIG_OK);
    assert_string_equal(origin, "example.com/log");
    assert_int_equal(size, 42);
    assert_memory_equal(root, root2, 32);
    /* the size changed, a wrong name, another key: refused */
    note[16] = '3';
    assert_int_equal(dsig_tlog_note_verify(note, len, "example.com/log", pub, &tl), DSIG_E_VERIFY);
    note[16] = '4';
    assert_int_equal(dsig_tlog_note_verify(note, len, "example.com/other", pub, &tl), DSIG_E_VERIFY);
    pub[0] ^= 1;
    assert_int_equal(dsig_tlog_note_verify(note, len, "example.com/log", pub, &tl), DSIG_E_VERIFY);
    pub[0] ^= 1;
    /* verifier key text round trip; a changed key ID is refused */
    assert_int_equal(dsig_tlog_vkey_format("example.com/log", pub, &vkey), DSIG_OK);
    char name[DSIG_TLOG_ORIGIN_MAX + 1];
    uint8_t pub2[32];
    assert_int_equal(dsig_tlog_vkey_parse(vkey, strlen(vkey), name, pub2), DSIG_OK);
    assert_string_equal(name, "example.com/log");
    assert_memory_equal(pub, pub2, 32);
    char *plus = strchr(vkey, '+');
    plus[1] = plus[1] == '0' ? '1' : '0';
    assert_int_equal(dsig_tlog_vkey_parse(vkey, strlen(vkey), name, pub2), DSIG_E_FORMAT);
    assert_int_equal(dsig_tlog_checkpoint_parse("a\n01\nx\n", 7, origin, &size, root2), DSIG_E_FORMAT);
    dsig_free(body);
    assert_int_equal(dsig_tlog_checkpoint_body("has space", 1, root, &body), DSIG_E_ARG);
    assert_null(body);
    dsig_free(note);
    dsig_free(vkey);
    dsig_key_free(key);
}

int main(void)
{
    if (dsig_init() != DSIG_OK)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_roots),
        cmocka_unit_test(test_leaf_lengths),
        cmocka_unit_test(test_inclusion_tamper),
        cmocka_unit_test(test_consistency_tamper),
        cmocka_unit_test(test_checkpoint_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
