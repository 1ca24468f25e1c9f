/*
 * tools/dsig/log_cmd.h — the parts of `dsig log` (cmd_log.c: options and the log key; log_verify.c;
 * log_prove.c; log_tree.c: reading the log into its tree).
 */
#ifndef DSIG_TOOL_LOG_CMD_H
#define DSIG_TOOL_LOG_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/tlog.h"

/* The log key as a note verifier: its name (the log's origin) and Ed25519 public key. */
struct logkey {
    char name[DSIG_TLOG_ORIGIN_MAX + 1];
    uint8_t pub[32];
};

/* A checkpoint: tree size and root. */
struct ckpt {
    uint64_t size;
    uint8_t root[32];
};

/* The post-order store of every subtree (dsig_tlog_node_pos), for proofs offline: 64 bytes a record. */
struct store {
    uint8_t (*h)[32];
    uint64_t n, cap;
};

void log_hex32(char out[65], const uint8_t in[32]);
int log_unhex32(const char *s, uint8_t out[32]);              /* 0, or -1: not 64 hex digits */
int log_store_put(void *arg, unsigned level, uint64_t index, const uint8_t h[32]);  /* dsig_tlog_store_fn */
int log_store_get(void *arg, unsigned level, uint64_t index, uint8_t out[32]);      /* dsig_tlog_fetch_fn */
int log_file_get(void *arg, unsigned level, uint64_t index, uint8_t out[32]);       /* over a FILE * */
int64_t log_record_index(const char *p, size_t n);             /* a record's leading "index", or -1 */
char *log_beside(const char *path, const char *suffix);        /* path + suffix, malloc'ed */
/* Called for each record, in order; non-zero stops the walk and is returned. */
typedef int (*record_fn)(void *arg, uint64_t index, const char *line, size_t len, const uint8_t leaf[32]);
/* Read the files in order, each line a leaf appended to r (and its subtrees to st, if not NULL); the
 * index check. 0, 1 (a bad record, reported) or -1 (error, reported). */
int log_walk(char **files, int nfiles, dsig_tlog_range *r, struct store *st, record_fn fn, void *arg);

/* The subcommands: exit statuses. */
int log_verify(char **files, int nfiles, const struct logkey *lk, const char *cpath, const char *tree);
int log_prove_from_log(char **files, int nfiles, const struct logkey *lk, const char *jws, const char *index_s,
                       const char *digest, const char *ckpt);
int log_prove_answer(const char *answer, const struct logkey *lk, const char *record, const char *jws,
                     const char *digest);

#endif
