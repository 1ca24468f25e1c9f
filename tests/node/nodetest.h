/*
 * tests/node/nodetest.h — helpers shared by the node tests: RFC 8032 keys, configuration text, ports.
 */
#ifndef DSIG_NODETEST_H
#define DSIG_NODETEST_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/node.h"

/* Private key of RFC 8032 §7.1 Ed25519 test i (0-based, 0..3 from the official vector file) as a DSig
 * key ("alg":"DSig"), and its public JWK text (malloc'd, compact) checked against the vector's publicKey. */
dsig_key *nt_key(size_t i, char **public_jwk);

/* nt_key(i) alone (private), and its public part. */
dsig_key *nt_private(size_t i);
dsig_key *nt_public(size_t i);

/* Sleep `ms` milliseconds. */
void nt_nap(int ms);

/* A free TCP port on 127.0.0.1 (bound then released; good enough for tests). */
unsigned nt_free_port(void);

/* Configuration text for nodes 1..count (ids 1..count), node i on tcp:127.0.0.1:ports[i-1] with key
 * nt_key(i-1), member of the groups in groups[i-1] (a JSON array text like "[\"g1\"]"), and the given
 * "groups" object text. malloc'd. */
char *nt_config(size_t count, const unsigned *ports, const char *const *groups, const char *groups_obj);

/* Nodes 1 and 2 on ports[0..1], both in the one group "g1": the parsed configuration (its text
 * malloc'd into *txt). */
dsig_node_config *nt_pair_config(const unsigned ports[2], char **txt);

#endif
