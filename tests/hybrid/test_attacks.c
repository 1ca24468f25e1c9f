/*
 * tests/hybrid/test_attacks.c — the cross-protocol forgeries against DSig, played end to end and
 * refused (docs/dsig.md "Key separation"):
 *
 *   1. one plain Ed25519 signature over attacker-chosen bytes made with the victim's key — the CLI's
 *      `dsig sign -a Ed25519 --format raw` with a PEM copy of it — used as a batch-root signature:
 *      (CLI) a DSig file signature of the attacker's choice for `dsig verify -a DSig`; (run time) a
 *      forged batch of 128 one-time keys in a verifier's cache;
 *   5. a runtime signer with batches of one key (the registry's parameter set) signing a 32-byte
 *      message = BLAKE3 of a file, used as the registry algorithm's file signature, and the reverse.
 *
 * Each attack is built exactly as it worked before the keys were separated (attacker's own one-time
 * keys, the victim's signature patched in as the root signature), against the root message the
 * verifier really checks. Controls prove each harness can succeed: the same forged one-time signature
 * with a root signature from the victim's real root key verifies, so only the key separation refuses
 * the forgery. The CLI half runs $DSIG_TOOL (set by CTest).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsig/jwk.h"
#include "dsig/stream.h"
#include "hash/blake3.h"
#include "hybrid/runtime.h"
#include "testutil.h"

#define SEED_HEX "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
static const char PAYLOAD[] = "pay 1000000 to Mallory\n";

static char g_dir[256];

/* Path of a file in the test's directory (static buffer rotation: up to 4 at once). */
static const char *at(const char *name)
{
    static char buf[4][512];
    static int i;
    char *b = buf[i++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", g_dir, name);
    return b;
}

static void write_file(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static size_t read_file(const char *path, void *b, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(b, 1, cap, f);
    fclose(f);
    return n;
}

/* Run `$DSIG_TOOL ARGS` (a printf format; stdout discarded, stderr to err.txt); its exit status. */
static int tool(const char *fmt, ...)
{
    const char *t = getenv("DSIG_TOOL");
    if (!t)
        fail_msg("DSIG_TOOL is not set (run through ctest)");
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s'", t, args, at("err.txt"));
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* 1 if the last tool run's stderr contains `what`. */
static int err_has(const char *what)
{
    char b[4096];
    size_t n = read_file(at("err.txt"), b, sizeof b - 1);
    b[n] = 0;
    return strstr(b, what) != NULL;
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "%s/dsig-attacks.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A key file loaded through the JWK/PEM importers. */
static dsig_key *load_key(const char *path)
{
    char b[8192];
    size_t n = read_file(path, b, sizeof b);
    dsig_key *k = NULL;
    if (n && b[0] == '-')
        assert_int_equal(dsig_key_import_pem(&k, b, n), DSIG_OK);
    else
        assert_int_equal(dsig_jwk_import(&k, b, n), DSIG_OK);
    return k;
}

/* The attacker's own batch: his own DSig key and master seed (leaves and root do not depend on whose
 * root key signs them; only the root signature does). */
static void attacker_batch(const dsig_hb_params *p, uint64_t seq, dsig_hb_batch *b)
{
    dsig_key *mk = NULL;
    assert_int_equal(dsig_key_generate(&mk, dsig_alg_by_name("DSig"), NULL), DSIG_OK);
    dsig_ed25519_dkey root;
    assert_int_equal(dsig_hb_key_root_secret(mk, &root), DSIG_OK);
    dsig_hb_who who = {.domain = DSIG_HB_DOMAIN_RUNTIME, .signer_id = 666};
    memcpy(who.root_pk, root.pk, 32);
    uint8_t master[32];
    memset(master, 0xAA, sizeof master);
    assert_int_equal(dsig_hb_keygen_batch(p, master, seq, &root, &who, b), DSIG_OK);
    dsig_memzero(&root, sizeof root);
    dsig_key_free(mk);
}

/* Put `root_sig` where a signature template and the batch message carry the root signature. */
static void patch_root_sig(dsig_hb_batch *b, const uint8_t root_sig[64])
{
    const dsig_hb_params *p = b->params;
    memcpy(b->root_sig, root_sig, 64);
    for (uint32_t i = 0; i < p->batch; i++)
        if (b->keys[i].mem)
            memcpy(b->keys[i].mem + DSIG_HB_SIG_HEADER + (size_t)p->log_batch * 32, root_sig, 64);
}

/* The identity (domain, id, root public key) a verifier checks a victim's roots under. */
static dsig_hb_who victim_who(const dsig_key *victim, uint8_t domain, uint64_t id)
{
    dsig_hb_who w = {.domain = domain, .signer_id = id};
    assert_int_equal(dsig_hb_key_public(victim, NULL, w.root_pk), DSIG_OK);
    return w;
}

/* A verifier that checks batch messages inside receive_batch (verdicts returned). */
static dsig_hybrid_verifier *inline_verifier(const dsig_hybrid_params *p)
{
    dsig_hybrid_verifier_options vo;
    dsig_hybrid_verifier_options_default(&vo);
    vo.threads = 0;
    dsig_hybrid_verifier *v;
    assert_int_equal(dsig_hybrid_verifier_new(&v, p, &vo), DSIG_OK);
    return v;
}

/* The registry algorithm's parameter set: the default with batches of one key. */
static dsig_hybrid_params *file_params(void)
{
    dsig_hybrid_params *p1 = NULL;
    assert_int_equal(dsig_hybrid_params_with_batch(&p1, NULL, 0), DSIG_OK);
    return p1;
}

/* Attack 1 through the CLI: the victim's PEM key signs the root message the attacker chose with
 * `-a Ed25519`; the forged DSig file signature is refused, and the PEM key cannot do DSig at all. */
static void test_cli_plain_ed25519_root(void **state)
{
    (void)state;
    assert_int_equal(tool("keygen -q -a DSig --seed %s -o '%s' --pub '%s'", SEED_HEX, at("victim.jwk"),
                          at("victim.pub.jwk")), 0);
    /* The same key material as an unbound PEM key, the way OpenSSL users hold it. */
    assert_int_equal(tool("keygen -q -a Ed25519 --seed %s --pem -o '%s'", SEED_HEX, at("victim.pem")), 0);
    assert_int_equal(tool("pubkey -q --pem -o '%s' '%s'", at("victim.pub.pem"), at("victim.pem")), 0);
    write_file(at("payload"), PAYLOAD, strlen(PAYLOAD));
    dsig_key *vpub = load_key(at("victim.pub.jwk")), *vpriv = load_key(at("victim.jwk"));

    dsig_hybrid_params *p1 = file_params();
    uint8_t digest[32];
    dsig_blake3(PAYLOAD, strlen(PAYLOAD), digest, sizeof digest);
    /* Two root messages the attacker may ask for: the one the verifier checks (file domain, the
     * victim's root public key), and the same over the victim's identity key. */
    dsig_hb_who whos[2] = {victim_who(vpub, DSIG_HB_DOMAIN_FILE, 0), victim_who(vpub, DSIG_HB_DOMAIN_FILE, 0)};
    uint8_t derived[32];
    assert_int_equal(dsig_hb_key_public(vpub, whos[1].root_pk, derived), DSIG_OK); /* identity key */
    for (int w = 0; w < 2; w++) {
        dsig_hb_batch b;
        attacker_batch(p1, 0, &b);
        uint8_t rm[DSIG_HB_ROOT_MSG_BYTES], rs[64], sig[2048];
        dsig_hb_root_message(p1, &whos[w], 0, b.root, rm);
        write_file(at("rm.bin"), rm, sizeof rm);
        /* The victim signs 102 attacker bytes with plain Ed25519: nothing stops that. */
        assert_int_equal(tool("sign -q -k '%s' -a Ed25519 --format raw -o '%s' '%s'", at("victim.pem"),
                              at("rs.bin"), at("rm.bin")), 0);
        assert_int_equal(read_file(at("rs.bin"), rs, sizeof rs), 64);
        patch_root_sig(&b, rs);
        size_t sl;
        assert_int_equal(dsig_hb_sign(&b.keys[0], digest, 32, sig, sizeof sig, &sl), DSIG_OK);
        write_file(at("forged.sig"), sig, sl);
        /* Refused as a bad signature by the DSig key, refused as unusable by the PEM key. */
        assert_int_equal(tool("verify -q -a DSig -k '%s' -s '%s' '%s'", at("victim.pub.jwk"), at("forged.sig"),
                              at("payload")), 1);
        assert_int_equal(tool("verify -q -a DSig -k '%s' -s '%s' '%s'", at("victim.pub.pem"), at("forged.sig"),
                              at("payload")), 2);
        assert_true(err_has("dsig keygen -a DSig"));

        /* Control: the same forged one-time signature with a root signature from the victim's real
         * root key is accepted, so the harness is right and only the key separation refused it. */
        dsig_ed25519_dkey vroot;
        assert_int_equal(dsig_hb_key_root_secret(vpriv, &vroot), DSIG_OK);
        dsig_hb_root_message(p1, &whos[0], 0, b.root, rm);
        assert_int_equal(dsig_ed25519_dkey_sign(&vroot, rm, sizeof rm, sig + sl - 64), DSIG_OK);
        dsig_memzero(&vroot, sizeof vroot);
        write_file(at("control.sig"), sig, sl);
        assert_int_equal(tool("verify -q -a DSig -k '%s' -s '%s' '%s'", at("victim.pub.jwk"), at("control.sig"),
                              at("payload")), 0);
        dsig_hb_batch_free(&b);
    }
    /* An unbound (PEM) or Ed25519-bound key never signs DSig; a DSig key never signs plain Ed25519. */
    assert_int_equal(tool("sign -q -a DSig -k '%s' -o '%s' '%s'", at("victim.pem"), at("x.sig"), at("payload")), 2);
    assert_true(err_has("dsig keygen -a DSig"));
    assert_int_equal(tool("keygen -q -a Ed25519 --seed %s -o '%s'", SEED_HEX, at("victim.ed.jwk")), 0);
    assert_int_equal(tool("sign -q -a DSig -k '%s' -o '%s' '%s'", at("victim.ed.jwk"), at("x.sig"), at("payload")), 2);
    assert_true(err_has("dsig keygen -a DSig"));
    assert_int_equal(tool("sign -q -a Ed25519 -k '%s' -o '%s' '%s'", at("victim.jwk"), at("x.sig"), at("payload")), 2);
    /* A genuine DSig signature of the same key verifies. */
    assert_int_equal(tool("sign -q -k '%s' -o '%s' '%s'", at("victim.jwk"), at("good.sig"), at("payload")), 0);
    assert_int_equal(tool("verify -q -k '%s' -s '%s' '%s'", at("victim.pub.jwk"), at("good.sig"), at("payload")), 0);
    /* The reverse: the root signature of that genuine DSig signature, over the root message it signs,
     * is no plain Ed25519 signature of the victim's (it is under the derived root key)... */
    uint8_t gsig[2048], gleaf[32], groot[32], grm[DSIG_HB_ROOT_MSG_BYTES];
    assert_int_equal(tool("sign -q -k '%s' --format raw -o '%s' '%s'", at("victim.jwk"), at("good.raw"), at("payload")),
                     0);
    size_t gl = read_file(at("good.raw"), gsig, sizeof gsig);
    dsig_hb_sig_view gv;
    assert_int_equal(dsig_hb_parse(p1, gsig, gl, &gv), DSIG_OK);
    assert_int_equal(dsig_hb_compute_leaf(p1, &gv, digest, sizeof digest, gleaf), DSIG_OK);
    dsig_hb_merkle_root_from_proof(p1, gleaf, gv.index, gv.proof, groot);
    dsig_hb_root_message(p1, &whos[0], gv.batch_seq, groot, grm);
    assert_true(dsig_ed25519_verify_pk(whos[0].root_pk, grm, sizeof grm, gv.root_sig)); /* the right bytes */
    write_file(at("grm.bin"), grm, sizeof grm);
    write_file(at("grs.bin"), gv.root_sig, 64);
    assert_int_equal(tool("verify -q -a Ed25519 --format raw -k '%s' -s '%s' '%s'", at("victim.pub.pem"),
                          at("grs.bin"), at("grm.bin")), 1);
    /* ... while the victim's plain signature of the same bytes is (the harness reads what it should). */
    assert_int_equal(tool("sign -q -k '%s' -a Ed25519 --format raw -o '%s' '%s'", at("victim.pem"), at("grs.bin"),
                          at("grm.bin")), 0);
    assert_int_equal(tool("verify -q -a Ed25519 --format raw -k '%s' -s '%s' '%s'", at("victim.pub.pem"),
                          at("grs.bin"), at("grm.bin")), 0);
    dsig_hybrid_params_free(p1);
    dsig_key_free(vpub);
    dsig_key_free(vpriv);
}

/* Attack 1 at run time: a forged batch of 128 keys whose root signature is the victim's plain Ed25519
 * signature of the root message never enters the cache, and none of its signatures verifies. */
static void test_runtime_forged_batch(void **state)
{
    (void)state;
    const dsig_hb_params *p = dsig_hb_params_default();
    dsig_key *victim = NULL, *vpub = NULL, *plain = NULL;
    assert_int_equal(dsig_key_generate(&victim, dsig_alg_by_name("DSig"), NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&vpub, victim), DSIG_OK);
    /* The same key through PEM: unbound, so plain Ed25519 signs anything with it. */
    char *pem = NULL;
    size_t pl = 0;
    assert_int_equal(dsig_key_export_pem(victim, 1, &pem, &pl), DSIG_OK);
    assert_int_equal(dsig_key_import_pem(&plain, pem, pl), DSIG_OK);
    dsig_memzero(pem, pl);
    dsig_free(pem);
    assert_null(dsig_key_alg(plain));

    dsig_hybrid_verifier *v = inline_verifier(NULL);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 1, vpub), DSIG_OK);
    /* The unbound copy is no DSig key anywhere. */
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 2, plain), DSIG_E_ALG_NOT_ALLOWED);
    dsig_hybrid_signer *s = NULL;
    assert_int_equal(dsig_hybrid_signer_new(&s, plain, NULL, NULL), DSIG_E_ALG_NOT_ALLOWED);

    const dsig_alg *ed = dsig_alg_by_name("Ed25519");
    dsig_hb_who who = victim_who(vpub, DSIG_HB_DOMAIN_RUNTIME, 1);
    uint64_t seq = 77;
    dsig_hb_batch b;
    attacker_batch(p, seq, &b);
    uint8_t rm[DSIG_HB_ROOT_MSG_BYTES], rs[64];
    size_t sl = 0;
    dsig_hb_root_message(p, &who, seq, b.root, rm);
    assert_int_equal(dsig_sign(ed, plain, rm, sizeof rm, rs, sizeof rs, &sl), DSIG_OK);
    patch_root_sig(&b, rs);
    uint8_t *bm = malloc(p->batch_msg_bytes), sig[2048];
    size_t bl;
    assert_int_equal(dsig_hb_batch_message(&b, bm, p->batch_msg_bytes, &bl), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 1, bm, bl), DSIG_E_VERIFY);
    dsig_hybrid_verifier_stats st;
    dsig_hybrid_verifier_stats_get(v, &st);
    assert_int_equal(st.batches_cached, 0);
    assert_int_equal(st.batches_rejected, 1);
    int accepted = 0;
    for (uint32_t i = 0; i < p->batch; i += 9) {
        uint8_t m[8] = {(uint8_t)i};
        assert_int_equal(dsig_hb_sign(&b.keys[i], m, sizeof m, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(dsig_hybrid_can_verify_fast(v, 1, sig, sl), 0);
        accepted += dsig_hybrid_verify(v, 1, m, sizeof m, sig, sl) == DSIG_OK;
        accepted += dsig_hybrid_verify_slow(NULL, vpub, 1, m, sizeof m, sig, sl) == DSIG_OK;
    }
    assert_int_equal(accepted, 0);

    /* Control: the victim's real root signature makes the same batch cached and its keys verify. */
    dsig_ed25519_dkey vroot;
    assert_int_equal(dsig_hb_key_root_secret(victim, &vroot), DSIG_OK);
    assert_int_equal(dsig_ed25519_dkey_sign(&vroot, rm, sizeof rm, rs), DSIG_OK);
    dsig_memzero(&vroot, sizeof vroot);
    patch_root_sig(&b, rs);
    assert_int_equal(dsig_hb_batch_message(&b, bm, p->batch_msg_bytes, &bl), DSIG_OK);
    assert_int_equal(dsig_hybrid_verifier_receive_batch(v, 1, bm, bl), DSIG_OK);
    uint8_t m[8] = {1, 2, 3};
    assert_int_equal(dsig_hb_sign(&b.keys[1], m, sizeof m, sig, sizeof sig, &sl), DSIG_OK);
    assert_int_equal(dsig_hybrid_can_verify_fast(v, 1, sig, sl), 1);
    assert_int_equal(dsig_hybrid_verify(v, 1, m, sizeof m, sig, sl), DSIG_OK);

    free(bm);
    dsig_hb_batch_free(&b);
    dsig_hybrid_verifier_free(v);
    dsig_key_free(victim);
    dsig_key_free(vpub);
    dsig_key_free(plain);
}

/* Attack 5: a runtime signer with one-key batches signing BLAKE3(payload) is not a file signature
 * (CLI and library), and a file signature is not a runtime signature under any signer id. */
static void test_runtime_vs_file_domain(void **state)
{
    (void)state;
    const dsig_alg *alg = dsig_alg_by_name("DSig");
    dsig_key *k = NULL, *pub = NULL;
    assert_int_equal(dsig_key_generate(&k, alg, NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    char *jwk = NULL;
    size_t jl = 0;
    assert_int_equal(dsig_jwk_export(pub, 0, &jwk, &jl), DSIG_OK);
    write_file(at("k.pub.jwk"), jwk, jl);
    dsig_free(jwk);
    write_file(at("payload"), PAYLOAD, strlen(PAYLOAD));
    uint8_t digest[32], sig[2048], fsig[2048];
    dsig_blake3(PAYLOAD, strlen(PAYLOAD), digest, sizeof digest);

    dsig_hybrid_params *p1 = file_params();
    for (uint64_t id = 0; id < 2; id++) { /* 0: the signer id a file signature would carry */
        dsig_hybrid_signer_options so;
        dsig_hybrid_signer_options_default(&so);
        so.threads = 0;
        so.signer_id = id;
        so.pool_target = 1;
        dsig_hybrid_signer *s;
        assert_int_equal(dsig_hybrid_signer_new(&s, k, p1, &so), DSIG_OK);
        size_t sl;
        assert_int_equal(dsig_hybrid_sign(s, digest, sizeof digest, sig, sizeof sig, &sl), DSIG_OK);
        assert_int_equal(sl, dsig_alg_sig_max(alg)); /* same size, same parameter id */
        assert_int_equal(dsig_hybrid_verify_slow(p1, pub, id, digest, sizeof digest, sig, sl), DSIG_OK);
        assert_int_equal(dsig_verify(alg, pub, (const uint8_t *)PAYLOAD, strlen(PAYLOAD), sig, sl), DSIG_E_VERIFY);
        write_file(at("rt.sig"), sig, sl);
        assert_int_equal(tool("verify -q -a DSig --format raw -k '%s' -s '%s' '%s'", at("k.pub.jwk"), at("rt.sig"),
                              at("payload")), 1);
        dsig_hybrid_signer_free(s);
    }
    /* The reverse: a genuine file signature (verifies as one) is no runtime signature. */
    size_t fl = 0;
    assert_int_equal(dsig_sign(alg, k, (const uint8_t *)PAYLOAD, strlen(PAYLOAD), fsig, sizeof fsig, &fl), DSIG_OK);
    assert_int_equal(dsig_verify(alg, pub, (const uint8_t *)PAYLOAD, strlen(PAYLOAD), fsig, fl), DSIG_OK);
    dsig_hybrid_verifier *v = inline_verifier(p1);
    assert_int_equal(dsig_hybrid_verifier_add_signer(v, 0, pub), DSIG_OK);
    assert_int_equal(dsig_hybrid_verify(v, 0, digest, sizeof digest, fsig, fl), DSIG_E_VERIFY);
    for (uint64_t id = 0; id < 3; id++)
        assert_int_equal(dsig_hybrid_verify_slow(p1, pub, id, digest, sizeof digest, fsig, fl), DSIG_E_VERIFY);
    dsig_hybrid_verifier_free(v);
    dsig_hybrid_params_free(p1);
    dsig_key_free(k);
    dsig_key_free(pub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_plain_ed25519_root),
        cmocka_unit_test(test_runtime_forged_batch),
        cmocka_unit_test(test_runtime_vs_file_domain),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
