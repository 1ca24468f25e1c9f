/*
 * Differential target: the fast and the slow DSig verification paths (src/hybrid/sigformat.c) over
 * every parameter set the scheme allows — presets and custom sets built from the input by
 * dsig_hb_params_init — with fuzzed messages and edited signatures. The fast path checks a signature
 * against a batch it already verified (cached Merkle nodes and root signature); the slow path recomputes
 * the root from the proof and checks the Ed25519 root signature (under the root key derived from a
 * DSig key, runtime domain, signer 1). The input is
 *
 *   byte 0   one-time scheme (bit 0: 0 W-OTS+, 1 HORS); bit 7: pass bytes 1-4 to dsig_hb_params_init
 *            unreduced (mostly refused: the validation is fuzzed too)
 *   byte 1   chain hash (1 Haraka, 2 SHA-256, 3 BLAKE3)
 *   byte 2   W-OTS+: log w (1..4); HORS: log t (4..12)
 *   byte 3   HORS: k
 *   byte 4   log batch size (0..3: up to 8 one-time keys, made once per parameter set)
 *   byte 5   index of the one-time key that signs
 *   u16le    message length, message
 *   rest     5-byte edits applied to the signature (fuzz_patch)
 *
 * Invariants (abort on violation): a refused parameter set says why; the fast and the slow path always
 * return the same verdict; the unedited signature is accepted by both, an edited one (other bytes) by
 * neither; the leaf-only check (dsig_hb_verify_leaf) accepts whatever the fast path accepts; parse and
 * locate agree.
 */
#include <string.h>

#include <sodium.h>

#include "fuzz_common.h"
#include "hybrid/hb_internal.h"
#include "hybrid/runtime.h"

#define FP_MAX_INPUT 16384u
/* Parameter sets kept with their batches. HORS alone has ~27 000 (hash × t × k × batch size) and a
 * batch costs far more than an execution, so the cache is large and evicts one entry at a time (round
 * robin): a full flush made every execution after the first 96 sets pay for a key generation. An entry
 * holds at most 8 keys of 4096 secret and 4096 public 16-byte values: 512 MiB in the worst case, under
 * libFuzzer's 2 GiB limit with ASan's own. */
#define FP_CACHE 512u
#define FP_SEQ 7u

/* One batch per parameter set (by id), made on first use from a fixed master seed. */
static struct fp_batch {
    dsig_hb_params p;
    dsig_hb_batch keys;   /* with the one-time keys */
    dsig_hb_batch cached; /* the verified batch message, as a verifier caches it */
} cache[FP_CACHE];
static size_t n_cache, next_evict;
/* The root key derived from a DSig key of a fixed seed, and whose batches these are (runtime domain,
 * signer 1). */
static dsig_ed25519_dkey root;
static dsig_hb_who who;

static void init_key(void)
{
    static int ready;
    if (ready)
        return;
    ready = 1;
    FUZZ_CHECK(sodium_init() >= 0, "libsodium");
    uint8_t seed[32];
    memset(seed, 0x44, sizeof seed);
    const dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    dsig_key *k = NULL;
    FUZZ_CHECK(dsig_key_generate(&k, dsig_alg_by_name("DSig"), &kp) == DSIG_OK, "DSig key: %s",
               dsig_last_error_detail());
    FUZZ_CHECK(dsig_hb_key_root_secret(k, &root) == DSIG_OK, "root key");
    dsig_key_free(k);
    who.domain = DSIG_HB_DOMAIN_RUNTIME;
    who.signer_id = 1;
    memcpy(who.root_pk, root.pk, sizeof who.root_pk);
}

static struct fp_batch *batch_for(const dsig_hb_params *p)
{
    for (size_t i = 0; i < n_cache; i++)
        if (cache[i].p.id == p->id)
            return &cache[i];
    struct fp_batch *b;
    if (n_cache < FP_CACHE) {
        b = &cache[n_cache++];
    } else { /* full: rebuild the oldest entry in place (its batches point at its parameters) */
        b = &cache[next_evict];
        next_evict = (next_evict + 1) % FP_CACHE;
        dsig_hb_batch_free(&b->keys);
        dsig_hb_batch_free(&b->cached);
    }
    b->p = *p;
    uint8_t master[DSIG_HB_SEED_BYTES];
    memset(master, 0x3c, sizeof master);
    FUZZ_CHECK(dsig_hb_keygen_batch(&b->p, master, FP_SEQ, &root, &who, &b->keys) == DSIG_OK, "keygen: %s",
               dsig_last_error_detail());
    uint8_t *bm = malloc(p->batch_msg_bytes);
    size_t bl = 0;
    FUZZ_CHECK(bm && dsig_hb_batch_message(&b->keys, bm, p->batch_msg_bytes, &bl) == DSIG_OK, "batch message");
    FUZZ_CHECK(dsig_hb_batch_verify(&b->p, bm, bl, &who, &b->cached) == DSIG_OK, "our own batch message: %s",
               dsig_last_error_detail());
    free(bm);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8 || size > FP_MAX_INPUT)
        return 0;
    init_key();
    fuzz_in in = {data, size};
    const unsigned b0 = fuzz_u8(&in), b1 = fuzz_u8(&in), b2 = fuzz_u8(&in), b3 = fuzz_u8(&in), b4 = fuzz_u8(&in);
    const unsigned kidx = fuzz_u8(&in);
    const int raw = b0 & 0x80, hors = b0 & 1;
    dsig_hb_params p;
    int rc;
    if (raw)
        rc = dsig_hb_params_init(&p, b0 & 0x7f, b1, hors ? 0 : b2, hors ? b2 : 0, hors ? b3 : 0, b4 & 3);
    else if (hors)
        rc = dsig_hb_params_init(&p, DSIG_HB_OTS_HORS, 1 + b1 % 3, 0, 4 + b2 % 9, 1 + b3, b4 & 3);
    else
        rc = dsig_hb_params_init(&p, DSIG_HB_OTS_WOTS, 1 + b1 % 3, 1 + b2 % 4, 0, 0, b4 & 3);
    if (rc) {
        fuzz_check_detail(rc, "dsig_hb_params_init");
        return 0;
    }
    FUZZ_CHECK(dsig_hb_params_check(&p) == DSIG_OK, "a parameter set from dsig_hb_params_init fails its check");
    struct fp_batch *B = batch_for(&p);
    const uint32_t idx = kidx % p.batch;
    size_t ml, el;
    const uint8_t *m = fuzz_take(&in, fuzz_u16(&in), &ml);
    const uint8_t *ed = fuzz_take(&in, in.n, &el);
    uint8_t *msg = fuzz_dup(m, ml);
    uint8_t *good = malloc(p.sig_bytes), *edited = malloc(p.sig_bytes + 64);
    size_t gl = 0;
    FUZZ_CHECK(good && edited, "out of memory");
    FUZZ_CHECK(dsig_hb_sign(&B->keys.keys[idx], msg, ml, good, p.sig_bytes, &gl) == DSIG_OK && gl == p.sig_bytes,
               "sign: %s", dsig_last_error_detail());
    size_t sl = fuzz_patch(good, gl, ed, el, edited, 64);
    uint8_t *sig = fuzz_dup(edited, sl);
    const int same = sl == gl && memcmp(sig, good, gl) == 0;

    dsig_hb_sig_view v;
    uint64_t seq;
    uint32_t li;
    int rp = dsig_hb_parse(&p, sig, sl, &v), rl = dsig_hb_sig_locate(&p, sig, sl, &seq, &li);
    FUZZ_CHECK((rp == DSIG_OK) == (rl == DSIG_OK) && (rp || (seq == v.batch_seq && li == v.index)),
               "parse and locate disagree");
    int rf = dsig_hb_verify_fast(&p, &B->cached, sig, sl, msg, ml);
    int rs = dsig_hb_verify_slow(&p, sig, sl, msg, ml, &who);
    int rlf = dsig_hb_verify_leaf(&p, sig, sl, msg, ml, B->cached.nodes[rp == DSIG_OK ? v.index : 0]);
    FUZZ_CHECK(rf == rs, "%s (id %08x): fast path %d, slow path %d (%s)", p.name, p.id, rf, rs,
               dsig_last_error_detail());
    FUZZ_CHECK((rf == DSIG_OK) == same, "%s (id %08x): %s signature %s", p.name, p.id, same ? "the valid" : "an edited",
               rf == DSIG_OK ? "accepted" : "rejected");
    FUZZ_CHECK(rf != DSIG_OK || rlf == DSIG_OK, "fast path accepts what the leaf check rejects");
    free(sig);
    free(edited);
    free(good);
    free(msg);
    return 0;
}

/* Seeds: every preset (W-OTS+ and HORS, every hash) with batches of 1 and 8 keys, unedited and with
 * two no-op edits aimed at the proof and the root signature. */
static void seeds(void)
{
    for (size_t i = 0; dsig_hb_presets[i]; i++) {
        const dsig_hb_params *q = dsig_hb_presets[i];
        for (unsigned lb = 0; lb < 4; lb += 3) {
            const int hors = q->ots == DSIG_HB_OTS_HORS;
            const uint8_t head[6] = {(uint8_t)hors,  (uint8_t)(q->hash - 1), (uint8_t)(hors ? q->log_t - 4 : q->log_w - 1),
                                     (uint8_t)(q->k - 1), (uint8_t)lb, (uint8_t)(3 * i)};
            fuzz_seed_begin();
            fuzz_seed_add(head, 6);
            fuzz_seed_u16(11);
            fuzz_seed_add("DSig paths.", 11);
            if (lb) {
                const uint8_t ed[10] = {0, 0x40, 0, 0, 0, 0, 0xff, 0xff, 0, 0}; /* xor with 0: no-ops */
                fuzz_seed_add(ed, 10);
            }
            fuzz_seed_end();
        }
    }
}

FUZZ_SEED_GENERATOR(seeds)
