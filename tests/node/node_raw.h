/*
 * tests/node/node_raw.h — a raw (hand-driven) node connection for attack and fault tests: frames over a
 * blocking socket and the HELLO / AUTH handshake of docs/node.md, done right or wrong on purpose.
 */
#ifndef DSIG_NODE_RAW_H
#define DSIG_NODE_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/node.h"

/* A TCP connection to 127.0.0.1:port, or -1. */
int nr_connect(unsigned port);
/* Write one frame (header + payload). 0 or -1. */
int nr_frame(int s, uint8_t type, const void *p, size_t len);
/* Read the next frame that is not a transport heartbeat (≤ ms); answers PINGs with PONGs. Returns the
 * type (payload into buf, length into *len, at most cap bytes), or -1 on EOF / error / timeout. */
int nr_read_frame(int s, uint8_t *buf, size_t cap, size_t *len, unsigned ms);
/* Send our HELLO claiming `id` with a fresh nonce (kept in nonce). 0 or -1. */
int nr_hello(int s, uint64_t id, uint8_t nonce[32]);
/*
 * The whole handshake on a connection to a node: our HELLO as `id`, the node's HELLO (its id must be
 * `node_id`), then our AUTH signed with `key` (a wrong key makes an impostor). Reads the node's AUTH
 * too (checks it under node_pub when not NULL). 0 on success of our side's steps, -1 otherwise (the
 * node may still refuse us afterwards: that is what impostor tests check).
 */
int nr_handshake(int s, uint64_t id, const dsig_key *key, uint64_t node_id, const dsig_key *node_pub);
/* The same with our AUTH signed under the key derived from `key` under `label` (nr_handshake:
 * NODE_AUTH_KEY_LABEL), or under `key` itself, as plain Ed25519, for label NULL. */
int nr_handshake_label(int s, uint64_t id, const dsig_key *key, const char *label, uint64_t node_id,
                       const dsig_key *node_pub);

#endif
