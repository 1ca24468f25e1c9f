/*
 * `dsig log`: check a `dsig serve` transparency log offline (dsig/tlog.h) — the whole log against its
 * signed checkpoints (verify), one record's inclusion (prove), and the note verifier key of a log key
 * (key). See docs/serve.md "Transparency log".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "dsig/jwk.h"
#include "dsig/tlog.h"

const char cli_usage_log[] =
    "Usage: dsig log verify LOG... --log-key PUB [--checkpoints FILE] [--tree FILE]\n"
    "       dsig log prove LOG... --log-key PUB (--jws FILE | --index N) [--payload-digest HEX]\n"
    "                      [--checkpoint FILE]\n"
    "       dsig log prove --proof ANSWER --log-key PUB [--record FILE] [--jws FILE] [--payload-digest HEX]\n"
    "       dsig log key KEY [--origin NAME]\n"
    "\n"
    "verify  recompute the Merkle tree (RFC 9162) of the audit log LOG (rotated files first, in order)\n"
    "        and check every signed checkpoint of FILE (default: LOG.checkpoints beside the last LOG)\n"
    "        against it: signature, root at its size, sizes that never shrink, consistency. Each\n"
    "        record's \"index\" must be its position. Prints the first bad record: edited, deleted,\n"
    "        reordered, truncated (an edited record is found exactly with the tree file the service\n"
    "        keeps, LOG.tree; without it, the range between two checkpoints).\n"
    "prove   the inclusion of one record in the latest checkpoint: with LOG, the record whose\n"
    "        \"jws_sha256\" is the SHA-256 of the JWS in FILE (the signature as the service returned it)\n"
    "        or record N, against FILE (default: LOG.checkpoint); with --proof, an answer of\n"
    "        GET /v1/log/proof, tied to the record in FILE (one line of the log) when given.\n"
    "        --payload-digest: the record must also hold this payload digest (hex SHA-256 / BLAKE3).\n"
    "key     print the note verifier key of a log key (Ed25519 JWK, private or public): what\n"
    "        --log-key takes; NAME defaults to the service's origin, dsig-serve/<thumbprint>.\n"
    "\n"
    "PUB is a note verifier key (NAME+KEYID+BASE64, as `dsig log key` and the service's start-up\n"
    "log print it) or a file holding one, or the log key's public JWK file (with --origin NAME when\n"
    "the service was configured with audit.log_origin).\n"
    "\n"
    "  -q, --quiet  no OK line (failures are still reported)\n"
    "\n"
    "Exit status: 0 verified, 1 the log or the proof does not verify, 2 error.\n";

#define MAX_FILE (1ull << 32) /* a checkpoints file or proof answer read whole: bounded */

static void hex32(char out[65], const uint8_t in[32])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[in[i] >> 4];
        out[2 * i + 1] = hx[in[i] & 15];
    }
    out[64] = '\0';
}

static int unhex32(const char *s, uint8_t out[32])
{
    if (!s || strlen(s) != 64)
        return -1;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* The log key: (name, pub) from a verifier key text, a file holding one, or a public JWK file. */
struct logkey {
    char name[DSIG_TLOG_ORIGIN_MAX + 1];
    uint8_t pub[32];
};

static int default_origin(const dsig_key *k, char name[DSIG_TLOG_ORIGIN_MAX + 1])
{
    char tp[DSIG_THUMBPRINT_LEN];
    int rc = dsig_jwk_thumbprint(k, tp);
    if (rc != DSIG_OK)
        return rc;
    snprintf(name, DSIG_TLOG_ORIGIN_MAX + 1, "dsig-serve/%s", tp);
    return DSIG_OK;
}

static int load_logkey(const char *arg, const char *origin, struct logkey *lk)
{
    FILE *f = fopen(arg, "rb");
    char *text = NULL;
    size_t len = 0;
    if (f) {
        fclose(f);
        if (input_read_all(arg, DSIG_JWK_MAX_BYTES, "log key", &text, &len, NULL) != 0)
            return -1;
    } else {
        len = strlen(arg);
        if (!(text = malloc(len + 1)))
            return cli_err("out of memory"), -1;
        memcpy(text, arg, len + 1);
    }
    size_t skip = strspn(text, " \t\r\n");
    int rc;
    if (text[skip] == '{') {
        dsig_key *k = NULL;
        rc = dsig_jwk_import(&k, text, len);
        if (rc == DSIG_OK)
            rc = dsig_tlog_ed25519_public(k, lk->pub);
        if (rc == DSIG_OK) {
            if (origin)
                snprintf(lk->name, sizeof lk->name, "%s", origin);
            else
                rc = default_origin(k, lk->name);
        }
        dsig_key_free(k);
    } else {
        rc = dsig_tlog_vkey_parse(text + skip, len - skip, lk->name, lk->pub);
        if (rc == DSIG_OK && origin && strcmp(origin, lk->name) != 0)
            rc = DSIG_E_ARG;
    }
    free(text);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "--log-key '%s'", arg);
        return -1;
    }
    return 0;
}

/* ---- checkpoints ------------------------------------------------------------------------------ */

struct ckpt {
    uint64_t size;
    uint8_t root[32];
};

/* Every note of a checkpoints file (notes one after the other), verified and parsed, in order. 0, -1
 * (error, reported) or 1 (a checkpoint does not verify or shrinks the tree, reported). */
static int load_checkpoints(const char *path, const struct logkey *lk, struct ckpt **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0;
    if (input_read_all(path, MAX_FILE, "checkpoints", &text, &len, NULL) != 0)
        return -1;
    int status = 0;
    size_t cap = 0, pos = 0;
    while (pos < len && status == 0) {
        while (pos < len && text[pos] == '\n')
            pos++;
        if (pos >= len)
            break;
        /* The text runs to the first blank line; the signature lines ("— ...") follow it. */
        char *blank = strstr(text + pos, "\n\n");
        if (!blank) {
            cli_err("%s: checkpoint %zu: no signature", path, *n + 1);
            status = 1;
            break;
        }
        size_t end = (size_t)(blank - text) + 2;
        while (end < len && strncmp(text + end, "\xe2\x80\x94 ", 4) == 0) {
            char *nl = memchr(text + end, '\n', len - end);
            end = nl ? (size_t)(nl - text) + 1 : len;
        }
        size_t tl = 0;
        struct ckpt c;
        char origin[DSIG_TLOG_ORIGIN_MAX + 1];
        int rc = dsig_tlog_note_verify(text + pos, end - pos, lk->name, lk->pub, &tl);
        if (rc == DSIG_OK)
            rc = dsig_tlog_checkpoint_parse(text + pos, tl, origin, &c.size, c.root);
        if (rc != DSIG_OK) {
            cli_err_lib(rc, "%s: checkpoint %zu does not verify with the log key %s", path, *n + 1, lk->name);
            status = 1;
            break;
        }
        if (strcmp(origin, lk->name) != 0) {
            cli_err("%s: checkpoint %zu is of the log \"%s\", not \"%s\"", path, *n + 1, origin, lk->name);
            status = 1;
            break;
        }
        if (*n && c.size < (*out)[*n - 1].size) {
            cli_err("%s: checkpoint %zu shrinks the tree from %llu to %llu records", path, *n + 1,
                    (unsigned long long)(*out)[*n - 1].size, (unsigned long long)c.size);
            status = 1;
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            struct ckpt *p = realloc(*out, cap * sizeof *p);
            if (!p) {
                cli_err("out of memory");
                status = -1;
                break;
            }
            *out = p;
        }
        (*out)[(*n)++] = c;
        pos = end;
    }
    free(text);
    return status;
}

/* ---- the tree of the log files ---------------------------------------------------------------- */

/* The post-order store of every subtree, for proofs offline (64 bytes a record). */
struct store {
    uint8_t (*h)[32];
    uint64_t n, cap;
};

static int store_put(void *arg, unsigned level, uint64_t index, const uint8_t h[32])
{
    (void)level;
    (void)index;
    struct store *s = arg;
    if (s->n == s->cap) {
        uint64_t cap = s->cap ? 2 * s->cap : 4096;
        void *p = realloc(s->h, cap * 32);
        if (!p)
            return -1;
        s->h = p;
        s->cap = cap;
    }
    memcpy(s->h[s->n++], h, 32);
    return 0;
}

static int store_get(void *arg, unsigned level, uint64_t index, uint8_t out[32])
{
    struct store *s = arg;
    uint64_t pos = dsig_tlog_node_pos(level, index);
    if (pos >= s->n)
        return DSIG_E_ARG;
    memcpy(out, s->h[pos], 32);
    return DSIG_OK;
}

/* The service's side file of subtree hashes (LOG.tree), read through a FILE. */
static int file_get(void *arg, unsigned level, uint64_t index, uint8_t out[32])
{
    FILE *f = arg;
    uint64_t pos = dsig_tlog_node_pos(level, index);
    if (fseeko(f, (off_t)(pos * 32), SEEK_SET) != 0 || fread(out, 1, 32, f) != 32)
        return DSIG_E_IO;
    return DSIG_OK;
}

/* The "index" a record starts with, or -1. */
static int64_t record_index(const char *p, size_t n)
{
    static const char pre[] = "{\"index\":";
    if (n < sizeof pre || memcmp(p, pre, sizeof pre - 1) != 0)
        return -1;
    int64_t v = 0;
    size_t i = sizeof pre - 1, d = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9' && d < 18; i++, d++)
        v = v * 10 + (p[i] - '0');
    return d ? v : -1;
}

/* Walk the records of the files in order: each line a leaf; the index check; a callback per record.
 * Returns 0, 1 (a bad record, reported) or -1 (error, reported). */
typedef int (*record_fn)(void *arg, uint64_t index, const char *line, size_t len, const uint8_t leaf[32]);

static int walk(char **files, int nfiles, dsig_tlog_range *r, struct store *st, record_fn fn, void *arg)
{
    char *line = NULL;
    size_t cap = 0;
    int status = 0;
    for (int fi = 0; fi < nfiles && status == 0; fi++) {
        FILE *f = fopen(files[fi], "rb");
        if (!f) {
            cli_err_sys(errno, "log '%s'", files[fi]);
            status = -1;
            break;
        }
        ssize_t got;
        uint64_t lineno = 0;
        while ((got = getline(&line, &cap, f)) > 0) {
            lineno++;
            uint64_t i = r->size;
            size_t n = (size_t)got;
            if (line[n - 1] != '\n') {
                cli_err("%s:%llu: record %llu is truncated (the log ends inside it, without a newline)", files[fi],
                        (unsigned long long)lineno, (unsigned long long)i);
                status = 1;
                break;
            }
            n--;
            int64_t idx = record_index(line, n);
            if (idx >= 0 && (uint64_t)idx != i) {
                if ((uint64_t)idx > i)
                    cli_err("%s:%llu: record %llu is missing (deleted): this line holds record %lld", files[fi],
                            (unsigned long long)lineno, (unsigned long long)i, (long long)idx);
                else
                    cli_err("%s:%llu: record %lld is out of place (reordered or repeated): record %llu belongs here",
                            files[fi], (unsigned long long)lineno, (long long)idx, (unsigned long long)i);
                status = 1;
                break;
            }
            uint8_t leaf[32];
            dsig_tlog_leaf_hash(line, n, leaf);
            if (dsig_tlog_range_append(r, leaf, st ? store_put : NULL, st) != DSIG_OK) {
                cli_err("out of memory");
                status = -1;
                break;
            }
            if (fn && (status = fn(arg, i, line, n, leaf)) != 0)
                break;
        }
        if (status == 0 && ferror(f)) {
            cli_err_sys(errno, "log '%s'", files[fi]);
            status = -1;
        }
        fclose(f);
    }
    free(line);
    return status;
}

/* ---- verify ----------------------------------------------------------------------------------- */

struct verify_state {
    const struct ckpt *c;
    size_t nc, next;             /* the next checkpoint to reach */
    dsig_tlog_range *r;
    const char *cpath;
    FILE *tree;                  /* the side file, NULL if absent */
    int bad_from;                /* the first checkpoint whose root differs: index + 1, 0 none */
};

/* After each record: a checkpoint whose size is reached must have the log's root. */
static int verify_record(void *arg, uint64_t index, const char *line, size_t len, const uint8_t leaf[32])
{
    (void)index;
    (void)line;
    (void)len;
    (void)leaf;
    struct verify_state *v = arg;
    while (v->next < v->nc && v->c[v->next].size == v->r->size) {
        uint8_t root[32];
        dsig_tlog_range_root(v->r, root);
        if (memcmp(root, v->c[v->next].root, 32) != 0) {
            v->bad_from = (int)v->next + 1;
            return 1;
        }
        v->next++;
    }
    return 0;
}

/* An edited record: the first leaf where the log and the service's side file differ, trusted once its
 * root at the failed checkpoint's size is the signed one. */
static void locate_edit(char **files, int nfiles, const struct verify_state *v)
{
    const struct ckpt *bad = &v->c[v->bad_from - 1];
    uint64_t lo = v->bad_from >= 2 ? v->c[v->bad_from - 2].size : 0;
    uint8_t root[32];
    if (v->tree && dsig_tlog_subtree(file_get, v->tree, 0, bad->size, root) == DSIG_OK &&
        memcmp(root, bad->root, 32) == 0) {
        /* Walk again and compare each leaf with the side file's. */
        uint64_t i = 0, lineno = 0;
        char *line = NULL;
        size_t cap = 0;
        for (int fi = 0; fi < nfiles; fi++) {
            FILE *f = fopen(files[fi], "rb");
            if (!f)
                break;
            lineno = 0;
            ssize_t got;
            while ((got = getline(&line, &cap, f)) > 0 && i < bad->size) {
                lineno++;
                uint8_t leaf[32], want[32];
                dsig_tlog_leaf_hash(line, (size_t)got - 1, leaf);
                if (file_get(v->tree, 0, i, want) == DSIG_OK && memcmp(leaf, want, 32) != 0) {
                    cli_err("%s:%llu: record %llu was edited: it is not the record checkpoint %d (size %llu) signed",
                            files[fi], (unsigned long long)lineno, (unsigned long long)i, v->bad_from,
                            (unsigned long long)bad->size);
                    fclose(f);
                    free(line);
                    return;
                }
                i++;
            }
            fclose(f);
        }
        free(line);
    }
    cli_err("the records %llu..%llu are not those checkpoint %d of %s signed (size %llu): one of them was edited "
            "(the tree file LOG.tree, if kept, finds which)",
            (unsigned long long)lo, (unsigned long long)bad->size - 1, v->bad_from, v->cpath,
            (unsigned long long)bad->size);
}

static char *beside(const char *path, const char *suffix)
{
    size_t a = strlen(path), b = strlen(suffix);
    char *p = malloc(a + b + 1);
    if (p) {
        memcpy(p, path, a);
        memcpy(p + a, suffix, b + 1);
    }
    return p;
}

static int log_verify(char **files, int nfiles, const struct logkey *lk, const char *cpath_arg, const char *tree_arg)
{
    char *cdef = cpath_arg ? NULL : beside(files[nfiles - 1], ".checkpoints");
    char *tdef = tree_arg ? NULL : beside(files[nfiles - 1], ".tree");
    const char *cpath = cpath_arg ? cpath_arg : cdef;
    const char *tpath = tree_arg ? tree_arg : tdef;
    struct ckpt *c = NULL;
    size_t nc = 0;
    int status = CLI_EXIT_ERROR;
    dsig_tlog_range r;
    dsig_tlog_range_init(&r);
    struct verify_state v = {0};
    struct store store = {0};
    if (!cpath || !tpath) {
        cli_err("out of memory");
        goto out;
    }
    int st = load_checkpoints(cpath, lk, &c, &nc);
    if (st != 0) {
        status = st > 0 ? CLI_EXIT_INVALID : CLI_EXIT_ERROR;
        goto out;
    }
    v.c = c;
    v.nc = nc;
    v.r = &r;
    v.cpath = cpath;
    v.tree = fopen(tpath, "rb");
    if (!v.tree && tree_arg) {
        cli_err_sys(errno, "tree file '%s'", tpath);
        goto out;
    }
    while (v.next < nc && c[v.next].size == 0) /* checkpoints of the empty tree */
        v.next++;
    st = walk(files, nfiles, &r, &store, verify_record, &v);
    if (st < 0)
        goto out;
    if (st > 0) {
        if (v.bad_from)
            locate_edit(files, nfiles, &v);
        status = CLI_EXIT_INVALID;
        goto out;
    }
    if (v.next < nc) {
        cli_err("the log holds %llu records, but checkpoint %zu of %s signed %llu: records %llu..%llu are missing "
                "(the log was truncated)",
                (unsigned long long)r.size, v.next + 1, cpath, (unsigned long long)c[v.next].size,
                (unsigned long long)r.size, (unsigned long long)c[v.next].size - 1);
        status = CLI_EXIT_INVALID;
        goto out;
    }
    /* Consistency between successive checkpoints: implied by the one tree recomputed above, and checked
     * the way a client does too, by RFC 9162 consistency proofs made from that tree. */
    int proofs = 0;
    for (size_t k = 1; k < nc; k++) {
        uint8_t proof[DSIG_TLOG_PROOF_MAX][32];
        size_t np = 0;
        if (c[k - 1].size == 0)
            continue;
        if (dsig_tlog_consistency_proof(store_get, &store, c[k - 1].size, c[k].size, proof, &np) != DSIG_OK) {
            cli_err("checkpoints %zu and %zu: no consistency proof", k, k + 1);
            goto out;
        }
        if (dsig_tlog_verify_consistency(c[k - 1].size, c[k].size, c[k - 1].root, c[k].root,
                                         (const uint8_t(*)[32])proof, np) != DSIG_OK) {
            cli_err("checkpoints %zu and %zu of %s are not consistent", k, k + 1, cpath);
            status = CLI_EXIT_INVALID;
            goto out;
        }
        proofs++;
    }
    uint64_t last = nc ? c[nc - 1].size : 0;
    if (!cli_quiet) {
        uint8_t root[32];
        char hx[65];
        dsig_tlog_range_root(&r, root);
        hex32(hx, root);
        printf("OK: %llu records, %zu checkpoints (the latest signs %llu records; %d consistency proofs checked); "
               "tree root %s\n",
               (unsigned long long)r.size, nc, (unsigned long long)last, proofs, hx);
        if (r.size > last)
            printf("note: the last %llu records are not in a checkpoint yet\n", (unsigned long long)(r.size - last));
    }
    status = CLI_EXIT_OK;
out:
    if (v.tree)
        fclose(v.tree);
    free(store.h);
    free(c);
    free(cdef);
    free(tdef);
    return status;
}

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
        hex32(hx, jws_hash);
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

static int find_record(void *arg, uint64_t index, const char *line, size_t len, const uint8_t leaf[32])
{
    (void)leaf;
    struct find_state *f = arg;
    if (f->found != UINT64_MAX)
        return 0;
    int match = 0;
    if (f->want_index != UINT64_MAX) {
        match = index == f->want_index;
    } else {
        char hx[65], want[96];
        hex32(hx, f->jws_hash);
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

static int prove_from_log(char **files, int nfiles, const struct logkey *lk, const char *jws, const char *index_s,
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
    char *cdef = ck_arg ? NULL : beside(files[nfiles - 1], ".checkpoint");
    struct ckpt c;
    struct store st = {0};
    dsig_tlog_range r;
    dsig_tlog_range_init(&r);
    int status = CLI_EXIT_ERROR, s;
    if ((s = load_note(ck_arg ? ck_arg : cdef, lk, &c)) != 0) {
        status = s > 0 ? CLI_EXIT_INVALID : CLI_EXIT_ERROR;
        goto out;
    }
    if ((s = walk(files, nfiles, &r, &st, find_record, &fs)) != 0) {
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
    store_get(&st, 0, fs.found, leaf);
    if (dsig_tlog_inclusion_proof(store_get, &st, fs.found, c.size, proof, &np) != DSIG_OK ||
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

static int prove_answer(const char *answer, const struct logkey *lk, const char *record, const char *jws,
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
    int ok = note && unhex32(lh, leaf) == 0 && idx >= 0 && size > idx && np <= DSIG_TLOG_PROOF_MAX;
    for (size_t i = 0; ok && i < np; i++)
        ok = unhex32(json_string_value(json_array_get(hashes, i)), proof[i]) == 0;
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
        if (record_index(rec, rlen) != (int64_t)idx) {
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

/* ---- key -------------------------------------------------------------------------------------- */

static int log_key(const char *path, const char *origin)
{
    dsig_key *k = NULL;
    int is_pem;
    if (keyfile_load(path, &k, &is_pem, NULL) != 0)
        return CLI_EXIT_ERROR;
    uint8_t pub[32];
    char name[DSIG_TLOG_ORIGIN_MAX + 1], *vkey = NULL;
    int rc = dsig_tlog_ed25519_public(k, pub);
    if (rc == DSIG_OK) {
        if (origin)
            snprintf(name, sizeof name, "%s", origin);
        else
            rc = default_origin(k, name);
    }
    if (rc == DSIG_OK)
        rc = dsig_tlog_vkey_format(name, pub, &vkey);
    dsig_key_free(k);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "log key '%s'", path);
        return CLI_EXIT_ERROR;
    }
    printf("%s\n", vkey);
    dsig_free(vkey);
    return CLI_EXIT_OK;
}

/* `dsig log` */
int cmd_log(int argc, char **argv)
{
    enum { OPT_LOGKEY = 1, OPT_CKPTS, OPT_TREE, OPT_JWS, OPT_INDEX, OPT_DIGEST, OPT_CKPT, OPT_PROOF, OPT_RECORD, OPT_ORIGIN };
    static const struct cli_opt opts[] = {
        {"log-key", 0, 1, OPT_LOGKEY},     {"checkpoints", 0, 1, OPT_CKPTS}, {"tree", 0, 1, OPT_TREE},
        {"jws", 0, 1, OPT_JWS},            {"index", 0, 1, OPT_INDEX},       {"payload-digest", 0, 1, OPT_DIGEST},
        {"checkpoint", 0, 1, OPT_CKPT},    {"proof", 0, 1, OPT_PROOF},       {"record", 0, 1, OPT_RECORD},
        {"origin", 0, 1, OPT_ORIGIN},      CLI_COMMON_OPTS,                  {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "log", opts, argc, argv);
    const char *sub = NULL, *lkey = NULL, *ckpts = NULL, *tree = NULL, *jws = NULL, *index = NULL, *digest = NULL,
               *ckpt = NULL, *proof = NULL, *record = NULL, *origin = NULL, *val;
    char **files = calloc((size_t)argc + 1, sizeof *files);
    int nfiles = 0, id;
    if (!files)
        return cli_err("out of memory"), CLI_EXIT_ERROR;
    int status = CLI_EXIT_ERROR;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_LOGKEY: lkey = val; break;
        case OPT_CKPTS: ckpts = val; break;
        case OPT_TREE: tree = val; break;
        case OPT_JWS: jws = val; break;
        case OPT_INDEX: index = val; break;
        case OPT_DIGEST: digest = val; break;
        case OPT_CKPT: ckpt = val; break;
        case OPT_PROOF: proof = val; break;
        case OPT_RECORD: record = val; break;
        case OPT_ORIGIN: origin = val; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_log, stdout); status = CLI_EXIT_OK; goto out;
        case ARGS_POSITIONAL:
            if (!sub)
                sub = val;
            else
                files[nfiles++] = (char *)val;
            break;
        default: goto out;
        }
    }
    if (!sub) {
        status = cli_usage_error("log", "expected verify, prove or key");
    } else if (strcmp(sub, "key") == 0) {
        if (nfiles != 1 || lkey || ckpts || tree || jws || index || digest || ckpt || proof || record)
            status = cli_usage_error("log", "key takes one key file and --origin only");
        else
            status = log_key(files[0], origin);
    } else if (strcmp(sub, "verify") != 0 && strcmp(sub, "prove") != 0) {
        status = cli_usage_error("log", "unknown subcommand '%s' (verify, prove, key)", sub);
    } else if (!lkey) {
        status = cli_usage_error("log", "%s needs --log-key PUB", sub);
    } else {
        struct logkey lk;
        if (load_logkey(lkey, origin, &lk) != 0)
            goto out;
        if (strcmp(sub, "verify") == 0) {
            if (!nfiles || jws || index || digest || ckpt || proof || record)
                status = cli_usage_error("log", "verify takes LOG... --log-key PUB [--checkpoints FILE] [--tree FILE]");
            else
                status = log_verify(files, nfiles, &lk, ckpts, tree);
        } else if (proof) {
            if (nfiles || index || ckpts || tree || ckpt)
                status = cli_usage_error("log", "prove --proof takes --record, --jws and --payload-digest only");
            else
                status = prove_answer(proof, &lk, record, jws, digest);
        } else if (!nfiles || !!jws == !!index || record || ckpts || tree) {
            status = cli_usage_error("log", "prove takes LOG... and one of --jws FILE or --index N (or --proof ANSWER)");
        } else {
            status = prove_from_log(files, nfiles, &lk, jws, index, digest, ckpt);
        }
    }
out:
    free(files);
    return status;
}
