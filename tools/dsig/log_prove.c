/*
 * tools/dsig/log_prove.c — `dsig log prove`: one record in the latest checkpoint, from the log files or
 * from an answer of GET /v1/log/proof.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "log_cmd.h"

/* ---- prove ------------------------------------------------------------------------------------ */

/* The record binds the JWS and the payload digest (when given). 0 or 1 (reported). */
static int record_binds(const char *rec, size_t len, const uint8_t *jws_hash, const char *digest)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return cli_err("out of memory"), 1;
    memcpy(copy, rec, len);
    copy[len] = '\0';
    int bad = 0;
    if (jws_hash) {
        char hx[65], want[96];
        log_hex32(hx, jws_hash);
        snprintf(want, sizeof want, "\"jws_sha256\":\"%s\"", hx);
        if (!strstr(copy, want)) {
            cli_err("the record does not hold the SHA-256 of this JWS");
            bad = 1;
        }
    }
    if (!bad && digest) {
        char a[160], b[160];
        snprintf(a, sizeof a, "\"sha256\":\"%s\"", digest);
        snprintf(b, sizeof b, "\"blake3\":\"%s\"", digest);
        if (!strstr(copy, a) && !strstr(copy, b)) {
            cli_err("the record does not hold this payload digest");
            bad = 1;
        }
    }
    free(copy);
    return bad;
}

/* SHA-256 of the JWS file (its trailing newline, as the service sends it, is not part of the JWS). */
static int jws_hash_of(const char *path, uint8_t out[32])
{
    char *text = NULL;
    size_t len = 0;
    if (input_read_all(path, 1u << 30, "JWS", &text, &len, NULL) != 0)
        return -1;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;
    dsig_tlog_sha256(text, len, out);
    free(text);
    return 0;
}

/* A note file: verified, parsed. 0, 1 (does not verify), -1. */
static int load_note(const char *path, const struct logkey *lk, struct ckpt *c)
{
    char *text = NULL;
    size_t len = 0, tl = 0;
    if (input_read_all(path, 1u << 20, "checkpoint", &text, &len, NULL) != 0)
        return -1;
    char origin[DSIG_TLOG_ORIGIN_MAX + 1];
    int rc = dsig_tlog_note_verify(text, len, lk->name, lk->pub, &tl);
    if (rc == DSIG_OK)
        rc = dsig_tlog_checkpoint_parse(text, tl, origin, &c->size, c->root);
    free(text);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "checkpoint '%s' does not verify with the log key %s", path, lk->name);
        return 1;
    }
    return 0;
}

struct find_state {
    const uint8_t *jws_hash;
    uint64_t want_index;         /* UINT64_MAX: find by JWS */
    uint64_t found;
    char *record;
    size_t record_len;
};

static int find_record(void *arg, uint64_t index, const char *line, size_t len, const uint8_t leaf[32],
                       const char *file, uint64_t lineno)
{
    (void)leaf;
    (void)file;
    (void)lineno;
    struct find_state *f = arg;
    if (f->found != UINT64_MAX)
        return 0;
    int match = 0;
    if (f->want_index != UINT64_MAX) {
        match = index == f->want_index;
    } else {
        char hx[65], want[96];
        log_hex32(hx, f->jws_hash);
        snprintf(want, sizeof want, "\"jws_sha256\":\"%s\"", hx);
        match = memmem(line, len, want, strlen(want)) != NULL;
    }
    if (match) {
        if (!(f->record = malloc(len + 1)))
            return -1;
        memcpy(f->record, line, len);
        f->record[len] = '\0';
        f->record_len = len;
        f->found = index;
    }
    return 0;
}

int log_prove_from_log(char **files, int nfiles, const struct logkey *lk, const char *jws, const char *index_s,
                          const char *digest, const char *ck_arg)
{
    uint8_t jh[32];
    struct find_state fs = {.want_index = UINT64_MAX, .found = UINT64_MAX};
    if (jws) {
        if (jws_hash_of(jws, jh) != 0)
            return CLI_EXIT_ERROR;
        fs.jws_hash = jh;
    }
    if (index_s) {
        char *end;
        errno = 0;
        fs.want_index = strtoull(index_s, &end, 10);
        if (errno || *end || !*index_s)
            return cli_usage_error("log", "--index: a record number");
    }
    char *cdef = ck_arg ? NULL : log_beside(files[nfiles - 1], ".checkpoint");
    struct ckpt c;
    struct store st = {0};
    dsig_tlog_range r;
    dsig_tlog_range_init(&r);
    int status = CLI_EXIT_ERROR, s;
    if ((s = load_note(ck_arg ? ck_arg : cdef, lk, &c)) != 0) {
        status = s > 0 ? CLI_EXIT_INVALID : CLI_EXIT_ERROR;
        goto out;
    }
    if ((s = log_walk(files, nfiles, &r, &st, find_record, &fs)) != 0) {
        status = s > 0 ? CLI_EXIT_INVALID : CLI_EXIT_ERROR;
        goto out;
    }
    if (fs.found == UINT64_MAX) {
        cli_err(jws ? "no record of the log holds this JWS" : "the log has no record %s", jws ? "" : index_s);
        status = CLI_EXIT_INVALID;
        goto out;
    }
    if (record_binds(fs.record, fs.record_len, jws ? jh : NULL, digest)) {
        status = CLI_EXIT_INVALID;
        goto out;
    }
    if (fs.found >= c.size || c.size > r.size) {
        cli_err(fs.found >= c.size ? "record %llu is not in the checkpoint yet (it signs %llu records)"
                                   : "record %llu: the checkpoint signs %llu records, more than the log holds",
                (unsigned long long)fs.found, (unsigned long long)c.size);
        status = CLI_EXIT_INVALID;
        goto out;
    }
    uint8_t proof[DSIG_TLOG_PROOF_MAX][32], leaf[32];
    size_t np = 0;
    log_store_get(&st, 0, fs.found, leaf);
    if (dsig_tlog_inclusion_proof(log_store_get, &st, fs.found, c.size, proof, &np) != DSIG_OK ||
        dsig_tlog_verify_inclusion(fs.found, c.size, leaf, (const uint8_t(*)[32])proof, np, c.root) != DSIG_OK) {
        cli_err("record %llu is not in the tree the checkpoint signed (the log differs from it)",
                (unsigned long long)fs.found);
        status = CLI_EXIT_INVALID;
        goto out;
    }
    if (!cli_quiet)
        printf("OK: record %llu is in the checkpoint of %llu records of %s (inclusion proof of %zu hashes)\n",
               (unsigned long long)fs.found, (unsigned long long)c.size, lk->name, np);
    status = CLI_EXIT_OK;
out:
    free(fs.record);
    free(st.h);
    free(cdef);
    return status;
}

int log_prove_answer(const char *answer, const struct logkey *lk, const char *record, const char *jws,
                        const char *digest)
{
    char *text = NULL, *rec = NULL;
    size_t len = 0, rlen = 0;
    if (input_read_all(answer, 1u << 20, "proof", &text, &len, NULL) != 0)
        return CLI_EXIT_ERROR;
    int status = CLI_EXIT_INVALID;
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    free(text);
    json_t *hashes = doc ? json_object_get(doc, "hashes") : NULL;
    const char *note = doc ? json_string_value(json_object_get(doc, "checkpoint")) : NULL;
    const char *lh = doc ? json_string_value(json_object_get(doc, "leaf_hash")) : NULL;
    json_int_t idx = doc ? json_integer_value(json_object_get(doc, "index")) : -1;
    json_int_t size = doc ? json_integer_value(json_object_get(doc, "tree_size")) : -1;
    uint8_t leaf[32], proof[DSIG_TLOG_PROOF_MAX][32];
    size_t np = json_is_array(hashes) ? json_array_size(hashes) : SIZE_MAX;
    int ok = note && log_unhex32(lh, leaf) == 0 && idx >= 0 && size > idx && np <= DSIG_TLOG_PROOF_MAX;
    for (size_t i = 0; ok && i < np; i++)
        ok = log_unhex32(json_string_value(json_array_get(hashes, i)), proof[i]) == 0;
    if (!ok) {
        cli_err("%s: not an answer of GET /v1/log/proof", answer);
        status = CLI_EXIT_ERROR;
        goto out;
    }
    size_t tl = 0;
    struct ckpt c;
    char origin[DSIG_TLOG_ORIGIN_MAX + 1];
    int rc = dsig_tlog_note_verify(note, strlen(note), lk->name, lk->pub, &tl);
    if (rc == DSIG_OK)
        rc = dsig_tlog_checkpoint_parse(note, tl, origin, &c.size, c.root);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "the checkpoint in %s does not verify with the log key %s", answer, lk->name);
        goto out;
    }
    if (c.size != (uint64_t)size) {
        cli_err("the proof is for %lld records, its checkpoint signs %llu", (long long)size, (unsigned long long)c.size);
        goto out;
    }
    if (record) {
        uint8_t rl[32];
        if (input_read_all(record, 1u << 20, "record", &rec, &rlen, NULL) != 0) {
            status = CLI_EXIT_ERROR;
            goto out;
        }
        if (rlen && rec[rlen - 1] == '\n')
            rlen--;
        dsig_tlog_leaf_hash(rec, rlen, rl);
        if (memcmp(rl, leaf, 32) != 0) {
            cli_err("the proof is not of this record (its leaf hash differs)");
            goto out;
        }
        if (log_record_index(rec, rlen) != (int64_t)idx) {
            cli_err("the record's index is not the proof's (%lld)", (long long)idx);
            goto out;
        }
        uint8_t jh[32];
        if (jws && jws_hash_of(jws, jh) != 0) {
            status = CLI_EXIT_ERROR;
            goto out;
        }
        if (record_binds(rec, rlen, jws ? jh : NULL, digest))
            goto out;
    } else if (jws || digest) {
        cli_err("--jws and --payload-digest are checked against the record: give it with --record");
        status = CLI_EXIT_ERROR;
        goto out;
    }
    if (dsig_tlog_verify_inclusion((uint64_t)idx, c.size, leaf, (const uint8_t(*)[32])proof, np, c.root) != DSIG_OK) {
        cli_err_lib(DSIG_E_VERIFY, "record %lld: the inclusion proof", (long long)idx);
        goto out;
    }
    if (!cli_quiet)
        printf("OK: record %lld is in the checkpoint of %llu records of %s%s\n", (long long)idx,
               (unsigned long long)c.size, lk->name, record ? " (the record matches)" : "");
    status = CLI_EXIT_OK;
out:
    free(rec);
    json_decref(doc);
    return status;
}
