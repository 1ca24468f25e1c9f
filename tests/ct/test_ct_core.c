/*
 * tests/ct/test_ct_core.c — constant-time check of the primitives secrets pass through in several
 * schemes ("ctgrind"): dsig_ct_equal (every tag, root and key check of the library), hexadecimal
 * decoding (dsig serve's configured token hashes), and BLAKE3 with a
 * secret key and a secret message in every mode and entry point the library uses — the hasher (keyed,
 * derive-key with secret key material, XOF output and seek), one block, one chunk, 64-byte messages
 * many at a time (Merkle nodes), equal-length chunks many at a time (DSig leaves).
 *
 * Run under valgrind memcheck (tests/ct/CMakeLists.txt) once per BLAKE3 back-end valgrind can execute:
 * the default dispatch (AVX2 under valgrind: it does not emulate AVX-512, so the AVX-512 back-end is
 * never chosen there and cannot be checked this way), SSE4.1 (DSIG_CPU_DISABLE=avx2) and portable
 * (DSIG_CPU_DISABLE=all). Each output is declassified by the test once computed; the comparison
 * verdicts of dsig_ct_equal are declassified (they are what the callers publish). Any other report
 * fails the test.
 *
 * `--self-check` probes (ct_test.h) each output before declassifying it: memcheck must report each.
 */
#include <stdio.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "ct_test.h"
#include "dsig/dsig.h"
#include "hash/blake3.h"
#include "hash/haraka.h"
#include "hash/sha256.h"

#define MSG_LEN (17u * 1024u + 100u) /* more chunks than the widest SIMD batch, and a partial one */
#define MANY 19                      /* more messages than any SIMD width, and a remainder */

static uint8_t msg[MSG_LEN];
static uint8_t blocks[MANY][64], chunks[MANY * 1000];

static int self_check;

/* The test's end of an output: probe it (self-check), then declassify it. */
static void released(void *p, size_t n, const char *what)
{
    if (self_check)
        ct_probe(p, what);
    DSIG_CT_DECLASSIFY(p, n);
}

static int check_ct_equal(void)
{
    uint8_t a[64], b[64];
    if (dsig_random_bytes(a, sizeof a))
        return 1;
    memcpy(b, a, sizeof b);
    DSIG_CT_SECRET(a, sizeof a);
    DSIG_CT_SECRET(b, sizeof b);
    if (self_check)
        ct_probe(a, "a dsig_ct_equal operand");
    int bad = 0;
    for (size_t n = 1; n <= sizeof a; n += 7) {
        int same = dsig_ct_equal(a, b, n);
        b[n - 1] ^= 0x40; /* the last byte differs: a comparison that stops early would branch first */
        int differ = dsig_ct_equal(a, b, n);
        b[n - 1] ^= 0x40;
        DSIG_CT_DECLASSIFY(&same, sizeof same); /* the verdict is what callers publish */
        DSIG_CT_DECLASSIFY(&differ, sizeof differ);
        if (!same || differ)
            bad = fprintf(stderr, "dsig_ct_equal, %zu bytes: equal %d, different %d\n", n, same, differ);
    }
    return bad != 0;
}

/* Hexadecimal text of a secret (dsig serve's configured token hashes are read as such): decoded back. */
static int check_hex(void)
{
    static const char digits[] = "0123456789abcdef";
    char hex[65];
    uint8_t raw[32], back[32];
    if (dsig_random_bytes(raw, sizeof raw))
        return 1;
    for (size_t i = 0; i < 64; i++) {
        hex[i] = digits[i & 1 ? raw[i / 2] & 15 : raw[i / 2] >> 4];
        if (i % 3 == 0 && hex[i] >= 'a')
            hex[i] = (char)(hex[i] - 'a' + 'A'); /* both cases */
    }
    hex[64] = 0;
    DSIG_CT_SECRET(hex, 64);
    size_t got = 0;
    int rc = dsig_hex_decode(hex, 64, back, sizeof back, &got);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc); /* the verdict: a valid text stays valid whatever its digits */
    released(back, sizeof back, "hex-decoded bytes");
    int bad = rc != DSIG_OK || got != 32 || memcmp(raw, back, 32) != 0;
    /* Not hex: refused, the digit named (the text is not a valid encoding of anything). */
    rc = dsig_hex_decode("00g1", 4, back, sizeof back, &got);
    if (rc != DSIG_E_FORMAT || !strstr(dsig_last_error_detail(), "'g' at position 2"))
        bad = 1;
    if (bad)
        fprintf(stderr, "hex: decoding %d, %s\n", rc, dsig_last_error_detail());
    return bad;
}

static int check_blake3(void)
{
    uint8_t key[32], km[48];
    if (dsig_random_bytes(key, sizeof key) || dsig_random_bytes(km, sizeof km) ||
        dsig_random_bytes(msg, sizeof msg) || dsig_random_bytes(blocks, sizeof blocks) ||
        dsig_random_bytes(chunks, sizeof chunks))
        return 1;
    DSIG_CT_SECRET(key, sizeof key);
    DSIG_CT_SECRET(km, sizeof km);
    DSIG_CT_SECRET(msg, sizeof msg);
    DSIG_CT_SECRET(blocks, sizeof blocks);
    DSIG_CT_SECRET(chunks, sizeof chunks);

    /* The hasher, keyed, fed in uneven pieces; 100 bytes of output and a seek into the XOF stream. */
    static uint8_t out[100], seek[40], whole[32], derived[64];
    dsig_blake3_hasher h;
    dsig_blake3_init_keyed(&h, key);
    for (size_t off = 0, step = 1; off < sizeof msg; off += step, step = step * 3 + 1)
        dsig_blake3_update(&h, msg + off, off + step > sizeof msg ? sizeof msg - off : step);
    dsig_blake3_finalize(&h, out, sizeof out);
    dsig_blake3_finalize_seek(&h, 60, seek, sizeof seek);
    released(out, sizeof out, "the keyed hasher's output");
    released(seek, sizeof seek, "the keyed XOF output after a seek");
    /* derive-key with secret key material (a public context). */
    dsig_blake3_init_derive_key(&h, "dsig ctgrind 2026-12-02 derive-key");
    dsig_blake3_update(&h, km, sizeof km);
    dsig_blake3_finalize(&h, derived, sizeof derived);
    released(derived, sizeof derived, "a derived key");
    dsig_memzero(&h, sizeof h);
    int bad = memcmp(out + 60, seek, sizeof out - 60) != 0;

    /* One block and one chunk, keyed; both checked against the hasher. */
    uint8_t blk[32], chk[32];
    dsig_blake3_hash_block(key, blocks[0], 64, blk, sizeof blk);
    dsig_blake3_hash_chunk(key, chunks, 1000, chk);
    dsig_blake3_init_keyed(&h, key);
    dsig_blake3_update(&h, chunks, 1000);
    dsig_blake3_finalize(&h, whole, sizeof whole);
    released(blk, sizeof blk, "a keyed block hash");
    released(chk, sizeof chk, "a keyed chunk hash");
    released(whole, sizeof whole, "the keyed hasher's chunk hash");
    bad |= memcmp(chk, whole, 32) != 0;

    /* Many at a time: every SIMD width and the scalar remainder. */
    static uint8_t many64[MANY][32], manyc[MANY][32];
    dsig_blake3_hash64_many(key, (const uint8_t(*)[64])blocks, MANY, many64);
    dsig_blake3_hash_many_chunks(key, chunks, 1000, 1000, MANY, manyc);
    released(many64, sizeof many64, "64-byte messages hashed many at a time");
    released(manyc, sizeof manyc, "chunks hashed many at a time");
    bad |= memcmp(many64[0], blk, 32) != 0 || memcmp(manyc[0], chk, 32) != 0;
    dsig_memzero(key, sizeof key);
    dsig_memzero(km, sizeof km);
    if (bad)
        fprintf(stderr, "BLAKE3 (%s): entry points disagree\n", dsig_blake3_impl());
    return bad;
}

int main(int argc, char **argv)
{
    self_check = argc > 1 && strcmp(argv[1], "--self-check") == 0;
    if (dsig_init() != DSIG_OK || check_ct_equal() || check_hex() || check_blake3())
        return 1;
    if (self_check)
        return ct_probe_summary();
    printf("dsig_ct_equal on secret operands, hex decoding of secret text, BLAKE3 (%s back-end) keyed, derive-key, XOF, block, chunk, "
           "many-at-a-time with a secret key and message: no secret-dependent branch or address reported "
           "(back-ends here: SHA-256 %s, Haraka %s)\n",
           dsig_blake3_impl(), dsig_sha256_impl(), dsig_haraka_impl());
    return 0;
}
