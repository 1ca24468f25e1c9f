/*
 * tools/dsig/log_verify.c — `dsig log verify`: the whole log against every signed checkpoint beside it,
 * and the first bad record named.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log_cmd.h"

#define MAX_FILE (1ull << 32) /* a checkpoints file is read whole: bounded */

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

/* ---- verify ----------------------------------------------------------------------------------- */

struct verify_state {
    const struct ckpt *c;
    size_t nc, next;             /* the next checkpoint to reach */
    dsig_tlog_range *r;
    const char *cpath;
    FILE *tree;                  /* the side file, NULL if absent */
    int bad_from;                /* the first checkpoint whose root differs: index + 1, 0 none */
    struct log_keys *keys;       /* --keys, NULL if not given */
    char *key_bad;               /* the first record whose key does not check: the message */
};

/* After each record: a checkpoint whose size is reached must have the log's root. */
static int verify_record(void *arg, uint64_t index, const char *line, size_t len, const uint8_t leaf[32],
                         const char *file, uint64_t lineno)
{
    (void)leaf;
    struct verify_state *v = arg;
    /* The key check is reported only once the log itself verifies (after the walk): a record that was
     * edited must be named as edited, not as holding a wrong key. */
    if (v->keys && !v->key_bad) {
        char *why = NULL;
        int st = log_keys_record(v->keys, index, line, len, file, lineno, &why);
        if (st < 0) {
            cli_err("out of memory");
            return -1;
        }
        v->key_bad = why;
    }
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
    if (v->tree && dsig_tlog_subtree(log_file_get, v->tree, 0, bad->size, root) == DSIG_OK &&
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
                if (log_file_get(v->tree, 0, i, want) == DSIG_OK && memcmp(leaf, want, 32) != 0) {
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

int log_verify(char **files, int nfiles, const struct logkey *lk, const char *cpath_arg, const char *tree_arg,
               struct log_keys *keys)
{
    char *cdef = cpath_arg ? NULL : log_beside(files[nfiles - 1], ".checkpoints");
    char *tdef = tree_arg ? NULL : log_beside(files[nfiles - 1], ".tree");
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
    v.keys = keys;
    v.tree = fopen(tpath, "rb");
    if (!v.tree && tree_arg) {
        cli_err_sys(errno, "tree file '%s'", tpath);
        goto out;
    }
    while (v.next < nc && c[v.next].size == 0) /* checkpoints of the empty tree */
        v.next++;
    st = log_walk(files, nfiles, &r, &store, verify_record, &v);
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
        if (dsig_tlog_consistency_proof(log_store_get, &store, c[k - 1].size, c[k].size, proof, &np) != DSIG_OK) {
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
    if (v.key_bad) {
        cli_err("%s", v.key_bad);
        status = CLI_EXIT_INVALID;
        goto out;
    }
    if (keys && log_keys_unmatched(keys)) {
        status = CLI_EXIT_INVALID;
        goto out;
    }
    uint64_t last = nc ? c[nc - 1].size : 0;
    if (!cli_quiet) {
        uint8_t root[32];
        char hx[65];
        dsig_tlog_range_root(&r, root);
        log_hex32(hx, root);
        printf("OK: %llu records, %zu checkpoints (the latest signs %llu records; %d consistency proofs checked); "
               "tree root %s\n",
               (unsigned long long)r.size, nc, (unsigned long long)last, proofs, hx);
        if (r.size > last)
            printf("note: the last %llu records are not in a checkpoint yet\n", (unsigned long long)(r.size - last));
        if (keys) {
            uint64_t nk, nj;
            size_t keys_given, jws_given;
            log_keys_counts(keys, &nk, &nj, &keys_given, &jws_given);
            printf("keys: the key of %llu records matches one of the %zu keys given (thumbprint, algorithm)",
                   (unsigned long long)nk, keys_given);
            if (jws_given)
                printf("; JWS: %zu files, each the signature of its record (header and key; the signature "
                       "itself needs the payload: dsig verify)", jws_given);
            printf("\n");
        }
    }
    status = CLI_EXIT_OK;
out:
    free(v.key_bad);
    if (v.tree)
        fclose(v.tree);
    free(store.h);
    free(c);
    free(cdef);
    free(tdef);
    return status;
}
