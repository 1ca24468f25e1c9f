/*
 * Fuzz target: ML-DSA (FIPS 204) signatures, public keys and AKP JWKs (RFC 9964). One entry point; the
 * input is
 *
 *   byte 0   target: bits 0-1 = 0 signature (dsig_verify one-shot / streamed, and
 *            dsig_mldsa_verify_external_mu), 1 public key (raw pk bytes wrapped in an AKP JWK, imported
 *            with dsig_jwk_import, then verifying a known signature), 2 AKP JWK text (dsig_jwk_import;
 *            private JWKs also sign); target 3 is read as 0. Bit 2 = patch mode (see below), else raw
 *   byte 1   parameter set: ML-DSA-44 / 65 / 87 (index modulo 3)
 *   byte 2   selector: bits 0-1 message (4 fixed messages: empty, 3 B, 64 B, 1000 B), bits 2-3 path
 *            (signature: 0 one-shot, 1 streamed in three pieces, 2 external μ, 3 all three, which
 *            must agree), bit 4 which known JWK a patch applies to (0 public, 1 private)
 *   rest     raw mode: the object itself; patch mode: 5-byte edits (op, 24-bit offset, value) applied
 *            to the known-valid object — how the hint region, z and c~ of the 4627-byte ML-DSA-87
 *            signature are reached with single-byte mutations
 *
 * Known-valid objects are made once from fixed seeds: per set a key, the deterministic signature of
 * each message (FIPS 204 §3.4, rnd = 0^32, so "the same signature" is well defined), μ of each
 * message, the public key bytes and the exported public and private JWKs.
 *
 * Invariants (abort on violation):
 *   - a signature is accepted only if byte-identical to the known signature of that message; the
 *     known signature is accepted on every path (completeness); verification returns DSIG_OK or
 *     DSIG_E_VERIFY only, and every path agrees;
 *   - a public key of the right length always imports (every such string is a pk encoding); one of
 *     another length never does; the imported key verifies the known signature iff the pk is
 *     byte-identical to the real one;
 *   - an AKP JWK that imports verifies the known signature iff it carries the original public key
 *     (same RFC 7638 thumbprint: alg, kty, pub; JSON texts may differ — whitespace, member order,
 *     extra members — and still be the same key); one with a private part always carries the
 *     original key (ξ must give "pub") and its deterministic signature equals the known one; its
 *     own export re-imports.
 *   - every failure carries a detail string (dsig_last_error_detail()).
 * Work per input is bounded: inputs over FUZZ_MLDSA_MAX_INPUT bytes are rejected first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "dsig/mldsa.h"
#include "fuzz_common.h"
#include "pq/mldsa/params.h"

#define FM_NSETS 3
#define FM_NMSG 4
#define FM_PATCH_GROW 64 /* patch mode may insert this many bytes past the base object */
#define FM_MAX_OBJ 4700  /* largest known object (ML-DSA-87 private JWK ~3.6 KB, signature 4627) */

typedef struct fm_set {
    const dsig_mldsa_params *p;
    const dsig_alg *alg;
    dsig_key *key, *pub;
    uint8_t sig[FM_NMSG][FM_MAX_OBJ];
    uint8_t mu[FM_NMSG][DSIG_MLDSA_MU_LEN];
    uint8_t *pk;
    size_t pk_len;
    char *jwk[2]; /* 0 public, 1 private (exported by the library) */
    size_t jwk_len[2];
    char thumb[DSIG_THUMBPRINT_LEN];
} fm_set;

static struct {
    int ready;
    fm_set s[FM_NSETS];
    uint8_t msg[FM_NMSG][1000];
    size_t msg_len[FM_NMSG];
} S;

/* Per target: inputs run, inputs of the exact expected length, inputs accepted (each known-valid). */
static unsigned long st_inputs[3], st_sized[3], st_accepted[3];

/* A failed call must say why: a non-empty detail string. */
static void check_detail(int rc, const char *what)
{
    if (rc == DSIG_OK)
        return;
    const char *d = dsig_last_error_detail();
    FUZZ_CHECK(d && *d, "%s failed (%d) without a detail string", what, rc);
}

/* The "pub" member of an exported AKP JWK, decoded (the raw pk bytes). */
static void pk_of_jwk(fm_set *P)
{
    const char *a = strstr(P->jwk[0], "\"pub\":\"");
    FUZZ_CHECK(a != NULL, "exported JWK has no \"pub\": %s", P->jwk[0]);
    a += 7;
    const char *e = strchr(a, '"');
    FUZZ_CHECK(e && dsig_b64url_decode_alloc(a, (size_t)(e - a), &P->pk, &P->pk_len) == DSIG_OK &&
                 P->pk_len == P->p->pk_bytes,
             "exported \"pub\" of %s", P->p->name);
}

/* One parameter set's key, signatures, μ values, pk and JWKs (fixed seed per set). */
static void init_set(fm_set *P, const dsig_mldsa_params *p, const char *name, uint8_t tag)
{
    uint8_t seed[32];
    memset(seed, tag, sizeof seed);
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    P->p = p;
    P->alg = dsig_alg_by_name(name);
    FUZZ_CHECK(P->alg && dsig_key_generate(&P->key, P->alg, &kp) == DSIG_OK, "keygen %s", name);
    FUZZ_CHECK(dsig_key_public(&P->pub, P->key) == DSIG_OK, "public key %s", name);
    FUZZ_CHECK(p->sig_bytes <= FM_MAX_OBJ, "signature size");
    dsig_sign_opts det = {.deterministic = 1};
    for (int j = 0; j < FM_NMSG; j++) {
        size_t sl = 0;
        FUZZ_CHECK(dsig_sign_ex(P->alg, P->key, S.msg[j], S.msg_len[j], P->sig[j], sizeof P->sig[j], &sl, &det) ==
                         DSIG_OK && sl == p->sig_bytes,
                 "sign %s", name);
        FUZZ_CHECK(dsig_mldsa_mu(P->pub, NULL, 0, S.msg[j], S.msg_len[j], P->mu[j]) == DSIG_OK, "mu %s", name);
    }
    for (int priv = 0; priv < 2; priv++)
        FUZZ_CHECK(dsig_jwk_export(P->key, priv, &P->jwk[priv], &P->jwk_len[priv]) == DSIG_OK &&
                     P->jwk_len[priv] <= FM_MAX_OBJ,
                 "export %s", name);
    FUZZ_CHECK(dsig_jwk_thumbprint(P->pub, P->thumb) == DSIG_OK, "thumbprint %s", name);
    pk_of_jwk(P);
}

/* Build every known-valid object once. */
static void fm_init(void)
{
    if (S.ready)
        return;
    S.ready = 1;
    static const size_t lens[FM_NMSG] = {0, 3, 64, 1000};
    for (int j = 0; j < FM_NMSG; j++) {
        S.msg_len[j] = lens[j];
        for (size_t i = 0; i < lens[j]; i++)
            S.msg[j][i] = (uint8_t)(0x41 + 11 * i + 29 * (size_t)j);
    }
    init_set(&S.s[0], &dsig_mldsa44, "ML-DSA-44", 0x44);
    init_set(&S.s[1], &dsig_mldsa65, "ML-DSA-65", 0x65);
    init_set(&S.s[2], &dsig_mldsa87, "ML-DSA-87", 0x87);
}

/* Free every known object (the CTest driver calls it, so that LeakSanitizer sees a clean exit). */
void fuzz_mldsa_free(void)
{
    if (!S.ready)
        return;
    static const char *const names[3] = {"signature", "pk", "jwk"};
    for (int t = 0; t < 3 && st_inputs[0] + st_inputs[1] + st_inputs[2]; t++)
        printf("fuzz_mldsa: %-9s %7lu inputs, %7lu of the exact size, %6lu accepted (each the known one)\n",
               names[t], st_inputs[t], st_sized[t], st_accepted[t]);
    for (int i = 0; i < FM_NSETS; i++) {
        fm_set *P = &S.s[i];
        dsig_key_free(P->key);
        dsig_key_free(P->pub);
        dsig_free(P->pk);
        dsig_free(P->jwk[0]);
        dsig_free(P->jwk[1]);
    }
    memset(&S, 0, sizeof S);
}

/* A verification result of untrusted bytes: DSIG_OK or DSIG_E_VERIFY (with a detail), accepted only
 * when `known`, and the known signature never rejected. */
static void check_verify(int rc, int known, const char *what, const fm_set *P, unsigned m)
{
    check_detail(rc, what);
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_VERIFY, "%s returned %d (%s)", what, rc, dsig_last_error_detail());
    FUZZ_CHECK(rc != DSIG_OK || known, "FORGERY: %s accepted an unknown signature (%s, msg %u)", what, P->p->name, m);
    FUZZ_CHECK(rc == DSIG_OK || !known, "%s rejected the valid signature (%s, msg %u): %s", what, P->p->name, m,
             dsig_last_error_detail());
}

/* Streamed verification in three pieces (one empty), so the update path sees the message split. */
static int verify_streamed(const fm_set *P, const dsig_key *key, unsigned m, const uint8_t *sig, size_t len)
{
    dsig_verify_ctx *c;
    int rc = dsig_verify_init(&c, P->alg, key, sig, len);
    if (rc != DSIG_OK)
        return rc;
    size_t ml = S.msg_len[m], third = ml / 3;
    if ((rc = dsig_verify_update(c, S.msg[m], third)) == DSIG_OK &&
        (rc = dsig_verify_update(c, S.msg[m] + third, 0)) == DSIG_OK &&
        (rc = dsig_verify_update(c, S.msg[m] + third, ml - third)) == DSIG_OK)
        return dsig_verify_final(c);
    dsig_verify_abort(c);
    return rc;
}

/* Target 0: a signature of message m under the real public key, on the selected paths. */
static void fuzz_sig(fm_set *P, unsigned sel, const uint8_t *sig, size_t len)
{
    const unsigned m = sel & 3, path = (sel >> 2) & 3;
    const int known = len == P->p->sig_bytes && memcmp(sig, P->sig[m], len) == 0;
    st_sized[0] += len == P->p->sig_bytes;
    int r[3] = {DSIG_E_VERIFY, DSIG_E_VERIFY, DSIG_E_VERIFY}, acc = 0;
    if (path == 0 || path == 3) {
        r[0] = dsig_verify(P->alg, P->pub, S.msg[m], S.msg_len[m], sig, len);
        check_verify(r[0], known, "dsig_verify", P, m);
    }
    if (path == 1 || path == 3) {
        r[1] = verify_streamed(P, P->pub, m, sig, len);
        check_verify(r[1], known, "streamed dsig_verify", P, m);
    }
    if (path == 2 || path == 3) {
        /* The private key holds the public part too: both key kinds must verify alike. */
        r[2] = dsig_mldsa_verify_external_mu(m & 1 ? P->key : P->pub, P->mu[m], sig, len);
        check_verify(r[2], known, "dsig_mldsa_verify_external_mu", P, m);
    }
    for (int i = 0; i < 3; i++)
        acc |= r[i] == DSIG_OK;
    if (path == 3)
        FUZZ_CHECK(r[0] == r[1] && r[1] == r[2], "paths disagree: one-shot %d, streamed %d, external mu %d", r[0], r[1],
                 r[2]);
    st_accepted[0] += acc;
}

/* Target 1: raw public key bytes, wrapped in an AKP JWK and imported; then the known signature. */
static void fuzz_pk(fm_set *P, unsigned sel, const uint8_t *pk, size_t len)
{
    const unsigned m = sel & 3, path = (sel >> 2) & 3;
    const int known = len == P->p->pk_bytes && memcmp(pk, P->pk, len) == 0;
    st_sized[1] += len == P->p->pk_bytes;
    char *b64 = dsig_b64url_encode_alloc(pk, len);
    FUZZ_CHECK(b64 != NULL, "out of memory");
    size_t cap = strlen(b64) + 64;
    char *text = malloc(cap);
    FUZZ_CHECK(text != NULL, "out of memory");
    int tl = snprintf(text, cap, "{\"kty\":\"AKP\",\"alg\":\"%s\",\"pub\":\"%s\"}", P->p->name, b64);
    dsig_free(b64);
    dsig_key *k = NULL;
    int rc = dsig_jwk_import(&k, text, (size_t)tl);
    free(text);
    check_detail(rc, "dsig_jwk_import (pk)");
    FUZZ_CHECK((rc == DSIG_OK) == (len == P->p->pk_bytes), "%s pk of %zu bytes: import returned %d (%s)", P->p->name,
             len, rc, dsig_last_error_detail());
    if (rc != DSIG_OK)
        return;
    FUZZ_CHECK(dsig_key_has_private(k) == 0, "a public JWK imported as a private key");
    int rv;
    if (path & 1) {
        /* External μ as intended: μ from THIS key's tr (with the original's μ a small change of t1 can
         * still verify — μ is what binds the public key, so that is the caller's μ, not a forgery). */
        uint8_t mu[DSIG_MLDSA_MU_LEN];
        FUZZ_CHECK(dsig_mldsa_mu(k, NULL, 0, S.msg[m], S.msg_len[m], mu) == DSIG_OK, "mu of an imported pk");
        FUZZ_CHECK(!known || memcmp(mu, P->mu[m], sizeof mu) == 0, "mu differs for the same pk");
        rv = dsig_mldsa_verify_external_mu(k, mu, P->sig[m], P->p->sig_bytes);
    } else {
        rv = dsig_verify(P->alg, k, S.msg[m], S.msg_len[m], P->sig[m], P->p->sig_bytes);
    }
    check_verify(rv, known, "verify under a mutated pk", P, m);
    if (rv == DSIG_OK) {
        char tp[DSIG_THUMBPRINT_LEN];
        FUZZ_CHECK(dsig_jwk_thumbprint(k, tp) == DSIG_OK && strcmp(tp, P->thumb) == 0, "accepted pk, other thumbprint");
        st_accepted[1]++;
    }
    dsig_key_free(k);
}

/* Target 2: AKP JWK text. Whatever imports verifies the known signature iff it is the original public
 * key, signs like the original if private, and re-exports and re-imports. */
static void fuzz_jwk_text(fm_set *P, unsigned sel, const uint8_t *data, size_t len)
{
    const unsigned m = sel & 3;
    st_sized[2] += len == P->jwk_len[0] || len == P->jwk_len[1];
    dsig_key *k = NULL;
    int rc = dsig_jwk_import(&k, (const char *)data, len);
    check_detail(rc, "dsig_jwk_import (AKP)");
    if (rc != DSIG_OK)
        return;
    if (strcmp(dsig_key_kty(k), "AKP") != 0) {
        dsig_key_free(k); /* the mutation made another key type: the JWK target covers those */
        return;
    }
    /* Which set's key is it now ("alg" may have been mutated into another set's name)? */
    fm_set *Q = NULL;
    for (int i = 0; i < FM_NSETS; i++)
        if (dsig_key_check_alg(k, S.s[i].alg) == DSIG_OK)
            Q = &S.s[i];
    FUZZ_CHECK(Q != NULL, "an AKP key imported without an ML-DSA algorithm");
    char tp[DSIG_THUMBPRINT_LEN];
    FUZZ_CHECK(dsig_jwk_thumbprint(k, tp) == DSIG_OK, "thumbprint of an imported AKP key: %s", dsig_last_error_detail());
    const int same = strcmp(tp, Q->thumb) == 0;
    /* Any "pub" of the right length is a public key, so a public JWK may import as another key; it
     * must then reject the original's signature, and the original key must accept it. */
    int rv = dsig_verify(Q->alg, k, S.msg[m], S.msg_len[m], Q->sig[m], Q->p->sig_bytes);
    check_verify(rv, same, "verify under an imported AKP JWK", Q, m);
    /* A private JWK: "priv" (ξ) determines pk, and a "pub" that does not match it is refused. */
    FUZZ_CHECK(!dsig_key_has_private(k) || same,
             "FORGERY: a private AKP JWK imported with a \"pub\" that is not its own (%s)", Q->p->name);
    if (dsig_key_has_private(k)) {
        uint8_t sig[FM_MAX_OBJ];
        size_t sl = 0;
        dsig_sign_opts det = {.deterministic = 1};
        rc = dsig_sign_ex(Q->alg, k, S.msg[m], S.msg_len[m], sig, sizeof sig, &sl, &det);
        FUZZ_CHECK(rc == DSIG_OK && sl == Q->p->sig_bytes && memcmp(sig, Q->sig[m], sl) == 0,
                 "FORGERY: an imported private AKP JWK signs differently from the original (%s): %d %s", Q->p->name,
                 rc, rc ? dsig_last_error_detail() : "");
    }
    for (int priv = 0; priv < 2; priv++) {
        char *out = NULL;
        size_t ol = 0;
        if (priv && !dsig_key_has_private(k))
            break;
        FUZZ_CHECK(dsig_jwk_export(k, priv, &out, &ol) == DSIG_OK, "export of an imported AKP key: %s",
                 dsig_last_error_detail());
        dsig_key *k2 = NULL;
        FUZZ_CHECK(dsig_jwk_import(&k2, out, ol) == DSIG_OK, "our own export must re-import");
        dsig_key_free(k2);
        dsig_free(out);
    }
    st_accepted[2] += rv == DSIG_OK;
    dsig_key_free(k);
}

int fuzz_mldsa_one(const uint8_t *data, size_t size)
{
    if (size < 3 || size > FUZZ_MLDSA_MAX_INPUT)
        return 0; /* bounded work per input */
    fm_init();
    const unsigned target = (data[0] & 3) == 3 ? 0 : data[0] & 3, patch = data[0] & 4, sel = data[2];
    st_inputs[target]++;
    fm_set *P = &S.s[data[1] % FM_NSETS];
    const uint8_t *body = data + 3;
    size_t blen = size - 3;
    uint8_t *obj;
    if (patch) {
        const uint8_t *base;
        size_t base_len;
        if (target == 0) {
            base = P->sig[sel & 3];
            base_len = P->p->sig_bytes;
        } else if (target == 1) {
            base = P->pk;
            base_len = P->pk_len;
        } else {
            base = (const uint8_t *)P->jwk[(sel >> 4) & 1];
            base_len = P->jwk_len[(sel >> 4) & 1];
        }
        uint8_t *tmp = malloc(base_len + FM_PATCH_GROW);
        FUZZ_CHECK(tmp != NULL, "out of memory");
        blen = fuzz_patch(base, base_len, body, blen, tmp, FM_PATCH_GROW);
        obj = fuzz_dup(tmp, blen);
        free(tmp);
    } else {
        obj = fuzz_dup(body, blen);
    }
    if (target == 0)
        fuzz_sig(P, sel, obj, blen);
    else if (target == 1)
        fuzz_pk(P, sel, obj, blen);
    else
        fuzz_jwk_text(P, sel, obj, blen);
    free(obj);
    return 0;
}

/* Offsets of interesting bytes of a known object (f modulo 8): where the no-op edits of the patch
 * seeds point, so that most single mutations of an edit corrupt that field. Signature (FIPS 204
 * Algorithm 26 sigEncode): c~ ‖ z (l polynomials of 32·(1 + bitlen(γ1 − 1)) bytes) ‖ h (ω indices,
 * then k running counts); pk (Algorithm 22): ρ ‖ t1; JWK: "kty", "alg", "pub", "priv" values. */
static size_t field_offset(const fm_set *P, unsigned target, unsigned jwk, unsigned f)
{
    const dsig_mldsa_params *p = P->p;
    if (target == 0) {
        const size_t ct = p->lambda / 4, zpoly = 32 * (p->gamma1 == (1 << 17) ? 18u : 20u), h = ct + p->l * zpoly;
        const size_t so[8] = {0, ct - 1, ct + 5, ct + zpoly * p->l / 2 + 3, h - 1, h + 2, h + p->omega + p->k / 2,
                              p->sig_bytes - 1};
        return so[f % 8];
    }
    if (target == 1) {
        const size_t po[8] = {0, 31, 32, 33, 32 + 320 / 2, p->pk_bytes / 2, p->pk_bytes - 2, p->pk_bytes - 1};
        return po[f % 8];
    }
    const char *t = P->jwk[jwk];
    const char *keys[4] = {"\"kty\":\"", "\"alg\":\"", "\"pub\":\"", "\"priv\":\""};
    const char *at = strstr(t, keys[f % 4]);
    if (!at)
        at = t + 1;
    size_t off = (size_t)(at - t) + strlen(keys[f % 4]);
    if (f % 8 >= 4) /* the value's last character (base64url padding bits live there) */
        off = (size_t)(strchr(t + off, '"') - t) - 1;
    return off < P->jwk_len[jwk] ? off : P->jwk_len[jwk] - 1;
}

/* Seed corpus: every known-valid object raw, as an empty patch, and as patches of two no-op edits
 * (set a byte to its own value) aimed at two of its fields; the selector asks for every path. */
void fuzz_mldsa_seeds(fuzz_dsig_seed_cb cb, void *arg)
{
    fm_init();
    uint8_t *buf = malloc(FUZZ_MLDSA_MAX_INPUT);
    FUZZ_CHECK(buf != NULL, "out of memory");
    for (unsigned t = 0; t < 3; t++) {
        for (unsigned i = 0; i < FM_NSETS; i++) {
            fm_set *P = &S.s[i];
            for (unsigned j = 0; j < (t == 2 ? 2u : (unsigned)FM_NMSG); j++) {
                const unsigned m = t == 2 ? i % FM_NMSG : j, jwk = t == 2 ? j : 0;
                const uint8_t *obj = t == 0   ? P->sig[m]
                                     : t == 1 ? P->pk
                                              : (const uint8_t *)P->jwk[jwk];
                size_t ol = t == 0 ? P->p->sig_bytes : t == 1 ? P->pk_len : P->jwk_len[jwk];
                buf[1] = (uint8_t)i;
                buf[2] = (uint8_t)(m | (3u << 2) | (jwk << 4));
                buf[0] = (uint8_t)(t | 4);
                cb(arg, t, buf, 3);
                for (unsigned pair = 0; pair < 4; pair++) {
                    for (unsigned e = 0; e < 2; e++) {
                        size_t off = field_offset(P, t, jwk, 2 * pair + e + j);
                        uint8_t *ed = buf + 3 + 5 * e;
                        ed[0] = 1; /* set the byte to its own value: a no-op until mutated */
                        ed[1] = (uint8_t)off;
                        ed[2] = (uint8_t)(off >> 8);
                        ed[3] = (uint8_t)(off >> 16);
                        ed[4] = obj[off];
                    }
                    cb(arg, t, buf, 13);
                }
                if (3 + ol <= FUZZ_MLDSA_MAX_INPUT) {
                    buf[0] = (uint8_t)t;
                    memcpy(buf + 3, obj, ol);
                    cb(arg, t, buf, 3 + ol);
                }
            }
        }
    }
    free(buf);
}

#ifndef DSIG_FUZZ_DRIVER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_mldsa_one(data, size);
}

static void seeds(void)
{
    fuzz_mldsa_seeds(fuzz_seed_cb, NULL);
}

FUZZ_SEED_GENERATOR(seeds)
#endif
