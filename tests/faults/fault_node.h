/*
 * tests/faults/fault_node.h — a small cluster of DSig nodes (include/dsig/node.h) for the fault tests:
 * keys, a JSON configuration in a private temporary directory, nodes as threads of this process, and
 * the checks every fault test ends with (a corrupted or forged signature never verifies).
 */
#ifndef DSIG_TESTS_FAULT_NODE_H
#define DSIG_TESTS_FAULT_NODE_H

#include "dsig/node.h"
#include "fault_util.h"

#define FN_MAX 8
#define FN_GROUP "g"

typedef struct fn_cluster {
    char *dir;                   /* private temporary directory (sockets, config, logs) */
    unsigned n;                  /* nodes 1..n */
    fu_dsig_key key[FN_MAX + 1];  /* [id] */
    char addr[FN_MAX + 1][128];  /* configured address: what the others connect to */
    char listen[FN_MAX + 1][128];/* where the node really listens ("" = the configured address) */
    char *config_json;
    char *config_path;
    dsig_node_config *cfg;
    dsig_node *node[FN_MAX + 1];
} fn_cluster;

/*
 * n nodes (ids 1..n), each on a Unix socket in a fresh directory; the nodes in bit mask `members`
 * (1u << id; 0 = all) form group FN_GROUP with parameter preset `params` (NULL = default), the others
 * belong to no group. `proxied` is a bit mask of ids whose configured address is "unix:DIR/pID.sock"
 * (a proxy's) while the node listens on "unix:DIR/nID.sock".
 */
void fn_cluster_init(fn_cluster *c, unsigned n, const char *params, unsigned members, unsigned proxied);
/* Stop and free every node, the configuration, the keys and the directory. */
void fn_cluster_free(fn_cluster *c);

/* Options with test-friendly defaults: a small pool (256), short reconnect backoff (200 ms). */
void fn_options(dsig_node_options *o);
/* Create node `id` (not started) with `o` (NULL = fn_options); the listen address override is set. */
dsig_node *fn_node_new(fn_cluster *c, uint64_t id, const dsig_node_options *o);
/* Create and start node `id`. */
dsig_node *fn_node_start(fn_cluster *c, uint64_t id, const dsig_node_options *o);
/* Stop and free node `id` (a clean restart's first half). */
void fn_node_free(fn_cluster *c, uint64_t id);

/* Print every started node's counters (diagnostics on failure). */
void fn_dump_stats(fn_cluster *c, const char *why);
/* dsig_node_wait_ready(signer, FN_GROUP, n_keys, ms); on failure prints the counters of every node and
 * fails the test with the node's error detail. */
void fn_wait_ready(fn_cluster *c, uint64_t signer, unsigned n_keys, unsigned ms);

/* Sign `msg` in FN_GROUP at `signer`; fails the test on error. Returns the malloc'd signature. */
uint8_t *fn_sign(dsig_node *signer, const char *msg, size_t *sig_len);

/* Wait ≤ ms until `verifier` can check this signature of `signer_id` on the fast path. */
void fn_wait_fast(dsig_node *verifier, uint64_t signer_id, const uint8_t *sig, size_t sig_len,
                  unsigned ms);

/*
 * The end-of-fault check: (msg, sig) from `signer_id` verifies at `v`, and every corruption of it does
 * not: a bit flipped in each field (version, parameter id, batch seq, index, pk_seed, nonce, first /
 * middle / last one-time value, Merkle proof, Ed25519 root signature), a truncated or extended
 * signature, another message, and the right signature claimed by another configured signer (when
 * other_id != 0). Each must return DSIG_E_VERIFY (or DSIG_E_UNKNOWN_SIGNER for an unknown id), never
 * DSIG_OK or DSIG_E_EQUIVOCATION. Also checks the verifier's verify_failed counter moved accordingly.
 */
void fn_check_no_forgery(dsig_node *v, uint64_t signer_id, uint64_t other_id, const char *msg,
                         const uint8_t *sig, size_t sig_len);

/* The (batch seq, index, pk_seed) of a signature — what identifies its one-time key. */
typedef struct fn_otk {
    uint64_t seq;
    uint32_t index;
    uint8_t pk_seed[16];
} fn_otk;
void fn_otk_of(const uint8_t *sig, size_t sig_len, fn_otk *out);
/* Fail the test if two of the n entries are equal in (seq, index) or in pk_seed. */
void fn_otk_all_distinct(fn_otk *v, size_t n);

#endif
