/*
 * tools/dsig/log_cmd.h — the parts of `dsig log` (cmd_log.c: options and the log key; log_verify.c;
 * log_prove.c; log_tree.c: reading the log into its tree; log_keys.c: records against the auditor's keys
 * and JWS files).
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
/* Called for each record, in order (file and lineno: where it is, for messages); non-zero stops the walk
 * and is returned. */
typedef int (*record_fn)(void *arg, uint64_t index, const char *line, size_t len, const uint8_t leaf[32],
                         const char *file, uint64_t lineno);
/* Read the files in order, each line a leaf appended to r (and its subtrees to st, if not NULL); the
 * index check. 0, 1 (a bad record, reported) or -1 (error, reported). */
int log_walk(char **files, int nfiles, dsig_tlog_range *r, struct store *st, record_fn fn, void *arg);

/* log_keys.c: the public keys of --keys (directories as `dsig serve` reads them, JWK Sets, JWKs) and the
 * JWS files of --jws DIR. load: 0 or -1 (reported). */
struct log_keys;
int log_keys_load(struct log_keys **out, char **paths, int npaths, const char *jws_dir);
void log_keys_free(struct log_keys *ks);
/* One record (at file:lineno): 0, 1 (bad: the message, malloc'ed, in *why) or -1 (out of memory). */
int log_keys_record(struct log_keys *ks, uint64_t index, const char *line, size_t len, const char *file,
                    uint64_t lineno, char **why);
/* After the walk: 1 (reported) if a JWS file matched no record. */
int log_keys_unmatched(const struct log_keys *ks);
void log_keys_counts(const struct log_keys *ks, uint64_t *checked, uint64_t *jws_checked, size_t *nkeys,
                     size_t *njws);

/* The subcommands: exit statuses. keys NULL: no key check. */
int log_verify(char **files, int nfiles, const struct logkey *lk, const char *cpath, const char *tree,
               struct log_keys *keys);
int log_prove_from_log(char **files, int nfiles, const struct logkey *lk, const char *jws, const char *index_s,
                       const char *digest, const char *ckpt);
int log_prove_answer(const char *answer, const struct logkey *lk, const char *record, const char *jws,
                     const char *digest);

#endif
