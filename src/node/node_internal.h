/*
 * src/node/node_internal.h — what the files of the DSig node share: the parsed configuration
 * (config.c), the frame payload codec (proto.c), the replay window (replay.c).
 */
#ifndef DSIG_NODE_INTERNAL_H
#define DSIG_NODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dsig/node.h"

/* ---- configuration ---------------------------------------------------------------------------- */

struct node_cfg_node {
    uint64_t id;
    char *address;
    dsig_key *pk;                    /* public only */
    char thumb[64];                  /* RFC 7638 thumbprint, for duplicate detection and key matching */
    size_t n_groups;
    const char **group_names;        /* point into the group table */
    size_t *group_idx;               /* indexes into cfg->groups */
};

struct node_cfg_group {
    char *name;
    const dsig_hybrid_params *params;
    size_t n_members;
    uint64_t *members;               /* ascending */
};

struct dsig_node_config {
    char *text;                      /* the JSON text, so a node can take its own copy */
    size_t text_len;
    size_t n_nodes;
    struct node_cfg_node *nodes;     /* file order */
    size_t *by_id;                   /* indexes of the nodes with an id, sorted by id (binary search) */
    size_t n_index;                  /* entries of by_id: n_nodes for a parsed file; a node's own copy
                                        has free slots (id 0) after members left (node_members.c) */
    size_t n_groups;
    struct node_cfg_group *groups;   /* sorted by name: the index is part of the batch seq */
};

/* Parse one node entry ({"id","address","public_key","groups"}) against cfg's groups into *nd, naming
 * `where` in errors; on failure clear *nd with node_cfg_entry_clear. Codes of dsig_node_config_parse. */
int node_cfg_parse_entry(const dsig_node_config *cfg, const json_t *o, const char *where,
                         struct node_cfg_node *nd);
/* Free what an entry owns and zero it. */
void node_cfg_entry_clear(struct node_cfg_node *nd);
/* Rebuild by_id and n_index from the entries with an id. */
void node_cfg_sort_ids(dsig_node_config *cfg);

/* Index of the node with this id, or -1. */
long node_cfg_index(const dsig_node_config *cfg, uint64_t id);
/* Index of the group with this name (len bytes, not NUL-terminated), or -1. */
long node_cfg_group_index(const dsig_node_config *cfg, const char *name, size_t len);
/* Position of `id` among a group's members, or -1. */
int node_cfg_member_pos(const struct node_cfg_group *g, uint64_t id);

/* ---- frame payloads (proto.c) ----------------------------------------------------------------- */

#define NODE_NONCE_BYTES 32u
#define NODE_HELLO_BYTES (17u + NODE_NONCE_BYTES)
#define NODE_AUTH_BYTES 64u              /* AUTH payload: an Ed25519 signature */
#define NODE_AUTH_LABEL "DSig-node-hello-auth"
#define NODE_AUTH_LABEL_BYTES 20u
/* AUTH is signed with the key derived from the node's DSig key under this label
 * (src/classic/ed25519_derive.h): nothing else is ever signed under it. */
#define NODE_AUTH_KEY_LABEL "DSig node authentication key"
#define NODE_AUTH_TRANSCRIPT_BYTES (NODE_AUTH_LABEL_BYTES + 17u + 2u * NODE_NONCE_BYTES)
#define NODE_BATCH_HDR_MAX (8u + 1u + DSIG_NODE_MAX_NAME)

/* HELLO payload: version ‖ id ‖ instance ‖ nonce. */
void node_hello_encode(uint8_t out[NODE_HELLO_BYTES], uint64_t id, uint64_t instance,
                       const uint8_t nonce[NODE_NONCE_BYTES]);
/* DSIG_OK or DSIG_E_FORMAT (length, version, id 0 or > DSIG_NODE_MAX_ID). */
int node_hello_parse(const uint8_t *p, size_t len, uint64_t *id, uint64_t *instance,
                     uint8_t nonce[NODE_NONCE_BYTES]);
/* The bytes signed by AUTH (docs/node.md "Authentication"). */
void node_auth_transcript(uint8_t out[NODE_AUTH_TRANSCRIPT_BYTES], uint64_t signer, uint64_t verifier,
                          const uint8_t signer_nonce[NODE_NONCE_BYTES],
                          const uint8_t verifier_nonce[NODE_NONCE_BYTES]);

/* BATCH prefix (signer id ‖ name len ‖ name) into out; returns its length. */
size_t node_batch_prefix(uint8_t out[NODE_BATCH_HDR_MAX], uint64_t signer, const char *group, size_t glen);

struct node_batch_view {
    uint64_t signer;
    const char *group;
    size_t group_len;
    const uint8_t *msg;              /* the batch message */
    size_t msg_len;
    uint64_t seq;                    /* batch seq read from the message */
};
/* DSIG_OK or DSIG_E_FORMAT (too short, empty or over-long name, message shorter than its header). */
int node_batch_parse(const uint8_t *p, size_t len, struct node_batch_view *out);

/* BATCH_ACK payload into out (≤ 17 + name); returns its length. */
#define NODE_ACK_MAX (17u + DSIG_NODE_MAX_NAME)
size_t node_ack_encode(uint8_t out[NODE_ACK_MAX], uint64_t signer, uint64_t seq, const char *group,
                       size_t glen);
int node_ack_parse(const uint8_t *p, size_t len, uint64_t *signer, uint64_t *seq, const char **group,
                   size_t *glen);

/* The batch seq of a batch message (version u8 ‖ param id u32 ‖ seq u64 little-endian ‖ ...). */
#define NODE_BATCH_MSG_SEQ_OFF 5u
uint64_t node_batch_msg_seq(const uint8_t *msg);

/* Group index carried in the top byte of every batch seq: the seq spaces of a node's groups (one
 * signer each, same Ed25519 key and node id) never overlap. */
#define NODE_SEQ_GROUP_SHIFT 56u
#define NODE_SEQ_LOW_MASK ((UINT64_C(1) << NODE_SEQ_GROUP_SHIFT) - 1u)

/* ---- replay window (replay.c) ----------------------------------------------------------------- */

/* Sliding window over one (signer, group) seq space, like the IPsec anti-replay window (RFC 4303
 * §3.4.3): seqs above the highest are new; seqs within `width` below it are new unless marked. */
#define NODE_WIN_WORDS 16u           /* width ≤ 1024 */
struct node_window {
    int any;                         /* a seq has been marked */
    uint64_t top;                    /* highest marked seq */
    uint64_t bits[NODE_WIN_WORDS];   /* bit (top - seq) set: seq marked */
};

enum { NODE_WIN_NEW = 0, NODE_WIN_SEEN = 1, NODE_WIN_OLD = 2 };
/* Classify seq without changing the window. */
int node_window_check(const struct node_window *w, unsigned width, uint64_t seq);
/* Mark seq as seen (after its batch verified), sliding the window forward if needed. */
void node_window_mark(struct node_window *w, unsigned width, uint64_t seq);

#endif
