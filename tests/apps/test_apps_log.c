/*
 * tests/apps/test_apps_log.c — the byte layouts of src/apps (request, reply, values, bodies: every
 * truncation and every altered fixed field refused) and the offline auditor on logs built here with real
 * signatures (Ed25519 through the registry, and DSig): an intact log verifies; each way of tampering is
 * reported at exactly the right entry and byte offset with the right verdict — a request byte changed
 * (signature), a record removed (missing), two records swapped (out of order), a record repeated, a
 * client without a key, an unsigned field changed (chain), a per-client sequence gap, an unsigned entry,
 * a truncated tail, a record numbered 0. Receipts: valid, altered, and under another server key.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "apps/apps_internal.h"
#include "core/bytes.h"

/* ---- layouts ---------------------------------------------------------------------------------------- */

static void test_messages(void **state)
{
    (void)state;
    uint8_t body[APPS_BOOK_BODY], msg[256], out[512];
    apps_book_body(APPS_BOOK_BUY, 1885, 300, 0, body);
    apps_req rq = {.app = APPS_APP_BOOK, .scheme = APPS_SCHEME_DSIG, .client = 7, .seq = 3, .body = body,
                   .body_len = sizeof body};
    memset(rq.tag, 0xAB, sizeof rq.tag);
    size_t ml;
    assert_int_equal(apps_req_encode(&rq, msg, sizeof msg, &ml), DSIG_OK);
    assert_int_equal(ml, APPS_MSG_HDR + APPS_BOOK_BODY);
    apps_req p;
    assert_int_equal(apps_req_parse(msg, ml, &p), DSIG_OK);
    assert_int_equal(p.client, 7);
    assert_int_equal(p.seq, 3);
    assert_memory_equal(p.body, body, sizeof body);
    for (size_t cut = 0; cut < ml; cut++) /* every truncation */
        assert_int_equal(apps_req_parse(msg, cut, &p), DSIG_E_FORMAT);
    static const size_t fixed[] = {0, 15, 16, 17, 18, 19, 68}; /* label, version, app, scheme, zero, length */
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        memcpy(out, msg, ml);
        out[fixed[i]] ^= 0x40;
        assert_int_equal(apps_req_parse(out, ml, &p), DSIG_E_FORMAT);
    }
    memcpy(out, msg, ml);
    dsig_store_be64(out + 60, 0); /* sequence numbers start at 1 */
    assert_int_equal(apps_req_parse(out, ml, &p), DSIG_E_FORMAT);

    apps_buf v;
    apps_buf_init(&v, 1024);
    apps_val_array(&v, 2);
    apps_val_int(&v, -5);
    apps_val_str(&v, APPS_V_BULK, "x", 1);
    apps_rep rep = {.app = APPS_APP_KV, .scheme = APPS_SCHEME_SIG, .client = 7, .seq = 3, .index = 9,
                    .result = v.p, .result_len = v.len};
    assert_int_equal(apps_rep_encode(&rep, out, sizeof out, &ml), DSIG_OK);
    apps_rep q;
    assert_int_equal(apps_rep_parse(out, ml, &q), DSIG_OK);
    assert_int_equal(q.index, 9);
    for (size_t cut = 0; cut < ml; cut++)
        assert_int_equal(apps_rep_parse(out, cut, &q), DSIG_E_FORMAT);
    apps_buf_free(&v);
}

static void test_values_and_bodies(void **state)
{
    (void)state;
    /* arrays claiming more elements than bytes, unknown types, trailing bytes, nesting beyond 8 */
    static const uint8_t bad1[] = {APPS_V_ARRAY, 0, 0, 0, 9, APPS_V_NIL};
    static const uint8_t bad2[] = {9};
    static const uint8_t bad3[] = {APPS_V_NIL, APPS_V_NIL};
    static const uint8_t bad4[] = {APPS_V_BULK, 0, 0, 0, 5, 'a'};
    assert_int_equal(apps_value_check(bad1, sizeof bad1), DSIG_E_FORMAT);
    assert_int_equal(apps_value_check(bad2, sizeof bad2), DSIG_E_FORMAT);
    assert_int_equal(apps_value_check(bad3, sizeof bad3), DSIG_E_FORMAT);
    assert_int_equal(apps_value_check(bad4, sizeof bad4), DSIG_E_FORMAT);
    uint8_t deep[64];
    size_t n = 0;
    for (int i = 0; i < 10; i++) {
        deep[n++] = APPS_V_ARRAY;
        deep[n++] = 0;
        deep[n++] = 0;
        deep[n++] = 0;
        deep[n++] = 1;
    }
    deep[n++] = APPS_V_NIL;
    assert_int_equal(apps_value_check(deep, n), DSIG_E_FORMAT);
    assert_int_equal(apps_value_check(deep + 10, n - 10), DSIG_OK); /* 8 levels are fine */

    const char *argv[] = {"SET", "k", "v"};
    uint8_t body[64];
    size_t len;
    assert_int_equal(apps_kv_body(3, argv, NULL, body, sizeof body, &len), DSIG_OK);
    const uint8_t *av[APPS_KV_MAX_ARGS];
    size_t lens[APPS_KV_MAX_ARGS], argc;
    assert_int_equal(apps_kv_parse(body, len, av, lens, APPS_KV_MAX_ARGS, &argc), DSIG_OK);
    assert_int_equal(argc, 3);
    for (size_t cut = 0; cut < len; cut++)
        assert_int_equal(apps_kv_parse(body, cut, av, lens, APPS_KV_MAX_ARGS, &argc), DSIG_E_FORMAT);
    body[len] = 0;
    assert_int_equal(apps_kv_parse(body, len + 1, av, lens, APPS_KV_MAX_ARGS, &argc), DSIG_E_FORMAT);

    uint8_t b[APPS_BOOK_BODY];
    apps_book_req r;
    apps_book_body(APPS_BOOK_SELL, 1880, 100, 0, b);
    assert_int_equal(apps_book_parse(b, sizeof b, &r), DSIG_OK);
    apps_book_body(APPS_BOOK_SELL, 0, 100, 0, b);
    assert_int_equal(apps_book_parse(b, sizeof b, &r), DSIG_E_FORMAT); /* no price */
    apps_book_body(APPS_BOOK_BUY, 1880, 0x80000000u, 0, b);
    assert_int_equal(apps_book_parse(b, sizeof b, &r), DSIG_E_FORMAT); /* quantity range */
    apps_book_body(APPS_BOOK_CANCEL, 1, 0, 5, b);
    assert_int_equal(apps_book_parse(b, sizeof b, &r), DSIG_E_FORMAT); /* unused field set */
    apps_book_body(9, 1, 1, 0, b);
    assert_int_equal(apps_book_parse(b, sizeof b, &r), DSIG_E_FORMAT);
    assert_int_equal(apps_book_parse(b, sizeof b - 1, &r), DSIG_E_FORMAT);
}

/* ---- logs ------------------------------------------------------------------------------------------- */

#define NREC 12

struct logset {
    char dir[64], keys[96], path[128];
    dsig_key *ck[3];                 /* clients 1 and 2 (index 1, 2) */
    uint8_t *rec[NREC + 2];          /* records as built (chained in this order) */
    size_t len[NREC + 2];
    size_t nrec;
};

/* A temporary directory with a keys directory holding clients 1 and 2, bound to `alg`. */
static void logset_init(struct logset *L, const char *alg)
{
    memset(L, 0, sizeof *L);
    strcpy(L->dir, "/tmp/dsig-apps-log.XXXXXX");
    assert_non_null(mkdtemp(L->dir));
    snprintf(L->keys, sizeof L->keys, "%s/keys", L->dir);
    snprintf(L->path, sizeof L->path, "%s/log", L->dir);
    assert_int_equal(mkdir(L->keys, 0700), 0);
    for (int c = 1; c <= 2; c++) {
        assert_int_equal(dsig_key_generate(&L->ck[c], dsig_alg_by_name(alg), NULL), DSIG_OK);
        dsig_key *pub;
        char *text, p[160];
        size_t tl;
        assert_int_equal(dsig_key_public(&pub, L->ck[c]), DSIG_OK);
        assert_int_equal(dsig_jwk_export(pub, 0, &text, &tl), DSIG_OK);
        snprintf(p, sizeof p, "%s/client-%d.jwk", L->keys, c);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fwrite(text, 1, tl, f);
        fclose(f);
        dsig_free(text);
        dsig_key_free(pub);
    }
}

static void logset_free(struct logset *L)
{
    char p[160];
    for (int c = 1; c <= 2; c++) {
        snprintf(p, sizeof p, "%s/client-%d.jwk", L->keys, c);
        unlink(p);
        dsig_key_free(L->ck[c]);
    }
    for (size_t i = 0; i < L->nrec; i++)
        free(L->rec[i]);
    rmdir(L->keys);
    unlink(L->path);
    rmdir(L->dir);
}

/* Build records 1..n: clients alternate 1, 2, 1, ... each with consecutive sequence numbers, except
 * that seq_skip (if nonzero) makes that entry's sequence number one too high. Signed with `scheme`. */
static void build(struct logset *L, int scheme, size_t n, size_t seq_skip)
{
    uint8_t chain[32] = {0}, tag[APPS_TAG_BYTES];
    memset(tag, 0x5A, sizeof tag);
    apps_signer *s[3] = {0};
    for (int c = 1; c <= 2; c++)
        assert_int_equal(apps_signer_new(&s[c], scheme, L->ck[c], (uint64_t)c, 128, NULL, NULL), DSIG_OK);
    uint64_t seq[3] = {0, 0, 0};
    for (size_t i = 1; i <= n; i++) {
        int c = (i % 2) ? 1 : 2;
        seq[c] += (i == seq_skip) ? 2 : 1;
        uint8_t body[APPS_BOOK_BODY], msg[256], sig[4096];
        apps_book_body(APPS_BOOK_BUY, 1880 + (uint32_t)i, 100, 0, body);
        apps_req rq = {.app = APPS_APP_BOOK, .scheme = scheme, .client = (uint64_t)c, .seq = seq[c], .body = body,
                       .body_len = sizeof body};
        memcpy(rq.tag, tag, sizeof tag);
        size_t ml, sl;
        assert_int_equal(apps_req_encode(&rq, msg, sizeof msg, &ml), DSIG_OK);
        assert_int_equal(apps_sign(s[c], msg, ml, sig, sizeof sig, &sl), DSIG_OK);
        apps_rec r = {.scheme = scheme, .app = APPS_APP_BOOK, .index = i, .client = (uint64_t)c, .seq = seq[c],
                      .time_ns = 1000 + i, .req = msg, .req_len = ml, .sig = sig, .sig_len = sl};
        L->rec[L->nrec] = malloc(APPS_REC_MAX);
        assert_int_equal(apps_rec_build(&r, chain, L->rec[L->nrec], APPS_REC_MAX, &L->len[L->nrec]), DSIG_OK);
        memcpy(chain, r.chain, 32);
        L->nrec++;
    }
    for (int c = 1; c <= 2; c++)
        apps_signer_free(s[c]);
}

/* Write records in the order given by idx (0-based; -1 ends), with an optional trailing byte count. */
static uint64_t write_order(struct logset *L, const int *idx, size_t tail_cut)
{
    int fd = open(L->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    uint64_t off = 0;
    for (int k = 0; idx[k] >= 0; k++) {
        size_t n = L->len[idx[k]];
        if (idx[k + 1] < 0 && tail_cut)
            n -= tail_cut;
        assert_int_equal(write(fd, L->rec[idx[k]], n), (ssize_t)n);
        off += n;
    }
    close(fd);
    return off;
}

/* Offset of the k-th record (0-based) of the natural order. */
static uint64_t offset_of(const struct logset *L, size_t k)
{
    uint64_t off = 0;
    for (size_t i = 0; i < k; i++)
        off += L->len[i];
    return off;
}

/* Audit: the return code, and when bad, the entry, offset and a verdict word. */
static void expect(struct logset *L, int rc, uint64_t entry, uint64_t offset, const char *word)
{
    apps_keyset *ks;
    assert_int_equal(apps_keyset_load(L->keys, &ks), DSIG_OK);
    apps_audit_result res;
    int got = apps_audit_verify(L->path, ks, &res);
    apps_keyset_free(ks);
    if (got != rc || (rc == DSIG_E_VERIFY && (res.bad_entry != entry || res.bad_offset != offset ||
                                              !strstr(res.what, word)))) {
        print_error("audit: rc %d (want %d), entry %llu (want %llu), offset %llu (want %llu): %s (want \"%s\")\n",
                    got, rc, (unsigned long long)res.bad_entry, (unsigned long long)entry,
                    (unsigned long long)res.bad_offset, (unsigned long long)offset, res.what, word);
        fail();
    }
    if (rc == DSIG_OK)
        assert_int_equal(res.entries, L->nrec);
}

static void natural(int *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = (int)i;
    idx[n] = -1;
}

static void test_audit_tampering(void **state)
{
    (void)state;
    struct logset L;
    logset_init(&L, "Ed25519");
    build(&L, APPS_SCHEME_SIG, NREC, 0);
    int idx[NREC + 2];

    natural(idx, NREC);
    write_order(&L, idx, 0);
    expect(&L, DSIG_OK, 0, 0, NULL);

    /* a request byte (the book price) changed in entry 5: its signature */
    uint8_t save = L.rec[4][APPS_REC_HDR + APPS_MSG_HDR + 2];
    L.rec[4][APPS_REC_HDR + APPS_MSG_HDR + 2] ^= 1;
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 5, offset_of(&L, 4), "signature does not verify");
    L.rec[4][APPS_REC_HDR + APPS_MSG_HDR + 2] = save;

    /* entry 5 removed: missing, at the offset where entry 6 now is */
    for (int k = 4; k < NREC; k++)
        idx[k] = k + 1;
    idx[NREC - 1] = -1;
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 5, offset_of(&L, 4), "entry 5 is missing");

    /* entries 5 and 6 swapped: out of order */
    natural(idx, NREC);
    idx[4] = 5;
    idx[5] = 4;
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 5, offset_of(&L, 4), "out of order");

    /* entry 3 written twice */
    int dup[NREC + 2] = {0, 1, 2, 2, 3, -1};
    write_order(&L, dup, 0);
    expect(&L, DSIG_E_VERIFY, 3, offset_of(&L, 3), "appears again");

    /* entry 4's record says it is entry 0: no entry has that number (bad_entry 0 would mean "none") */
    natural(idx, NREC);
    uint8_t index_save[8];
    memcpy(index_save, L.rec[3] + 12, 8);
    memset(L.rec[3] + 12, 0, 8);
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 4, offset_of(&L, 3), "says it is entry 0");
    memcpy(L.rec[3] + 12, index_save, 8);

    /* the last record cut short */
    natural(idx, NREC);
    write_order(&L, idx, 10);
    expect(&L, DSIG_E_VERIFY, NREC, offset_of(&L, NREC - 1), "truncated");

    /* the unsigned time field of entry 7 changed: the chain */
    natural(idx, NREC);
    L.rec[6][40] ^= 0x10;
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 7, offset_of(&L, 6), "hash chain broken");
    L.rec[6][40] ^= 0x10;

    /* client 2 has no key any more: its first entry (2) */
    char p[160];
    snprintf(p, sizeof p, "%s/client-2.jwk", L.keys);
    char moved[160];
    snprintf(moved, sizeof moved, "%s/saved.jwk", L.dir);
    assert_int_equal(rename(p, moved), 0);
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 2, offset_of(&L, 1), "no public key");
    assert_int_equal(rename(moved, p), 0);
    logset_free(&L);

    /* a per-client sequence gap in a log whose entries and chain are otherwise consistent */
    logset_init(&L, "Ed25519");
    build(&L, APPS_SCHEME_SIG, NREC, 7); /* entry 7 (client 1) skips one sequence number */
    natural(idx, NREC);
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 7, offset_of(&L, 6), "missing before it");
    logset_free(&L);

    /* unsigned entries cannot be audited */
    logset_init(&L, "Ed25519");
    build(&L, APPS_SCHEME_NONE, 3, 0);
    natural(idx, 3);
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 1, 0, "unsigned");
    logset_free(&L);
}

/* DSig-signed entries verify on the slow path with nothing but the public keys; a flipped signature
 * byte does not. */
static void test_audit_dsig(void **state)
{
    (void)state;
    struct logset L;
    logset_init(&L, "DSig");
    build(&L, APPS_SCHEME_DSIG, 6, 0);
    int idx[8];
    natural(idx, 6);
    write_order(&L, idx, 0);
    expect(&L, DSIG_OK, 0, 0, NULL);
    L.rec[2][L.len[2] - 32 - 100] ^= 4; /* inside entry 3's signature */
    write_order(&L, idx, 0);
    expect(&L, DSIG_E_VERIFY, 3, offset_of(&L, 2), "signature does not verify");
    logset_free(&L);
}

/* A receipt verifies under the server's key, not when altered, not under another key. */
static void test_receipt(void **state)
{
    (void)state;
    dsig_key *sk, *pub, *other;
    assert_int_equal(dsig_key_generate(&sk, dsig_alg_by_name("Ed25519"), NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, sk), DSIG_OK);
    assert_int_equal(dsig_key_generate(&other, dsig_alg_by_name("Ed25519"), NULL), DSIG_OK);
    apps_signer *s;
    assert_int_equal(apps_signer_new(&s, APPS_SCHEME_SIG, sk, 0, 0, NULL, NULL), DSIG_OK);
    uint8_t val[] = {APPS_V_INT, 0, 0, 0, 0, 0, 0, 0, 42};
    apps_rep rep = {.app = APPS_APP_KV, .scheme = APPS_SCHEME_SIG, .client = 3, .seq = 4, .index = 5, .result = val,
                    .result_len = sizeof val};
    assert_int_equal(apps_server_tag(pub, rep.tag), DSIG_OK);
    uint8_t buf[1024];
    size_t ml, sl;
    assert_int_equal(apps_rep_encode(&rep, buf + 4, sizeof buf - 4, &ml), DSIG_OK);
    assert_int_equal(apps_sign(s, buf + 4, ml, buf + 4 + ml, sizeof buf - 4 - ml, &sl), DSIG_OK);
    dsig_store_be32(buf, (uint32_t)ml);
    apps_receipt_info info;
    assert_int_equal(apps_receipt_check(buf, 4 + ml + sl, pub, &info), DSIG_OK);
    assert_int_equal(info.index, 5);
    assert_int_equal(info.seq, 4);
    assert_int_equal(apps_receipt_check(buf, 4 + ml + sl, other, &info), DSIG_E_VERIFY);
    buf[4 + ml - 1] ^= 1; /* the result */
    assert_int_equal(apps_receipt_check(buf, 4 + ml + sl, pub, &info), DSIG_E_VERIFY);
    apps_signer_free(s);
    dsig_key_free(sk);
    dsig_key_free(pub);
    dsig_key_free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_values_and_bodies),
        cmocka_unit_test(test_audit_tampering),
        cmocka_unit_test(test_audit_dsig),
        cmocka_unit_test(test_receipt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
