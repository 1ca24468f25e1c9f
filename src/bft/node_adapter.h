/*
 * src/bft/node_adapter.h — everything the BFT protocols use of the DSig node (include/dsig/node.h), in
 * one place: send an APP frame, sign with a group's pool, verify, signature size. When the node API
 * changes (verifier-group hints, waiting for a batch) this is the file to adapt.
 */
#ifndef DSIG_BFT_NODE_ADAPTER_H
#define DSIG_BFT_NODE_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#include "dsig/node.h"

/* dsig_node_send_app: DSIG_OK or the node's refusal. */
int bft_node_send(dsig_node *n, uint64_t to, const uint8_t *frame, size_t len);
/* Sign with a one-time key of `group`'s pool. */
int bft_node_sign(dsig_node *n, const char *group, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                  size_t *sig_len);
/* Verify a DSig signature of node `signer` (fast path when its batch is cached here). */
int bft_node_verify(dsig_node *n, uint64_t signer, const uint8_t *msg, size_t len, const uint8_t *sig,
                    size_t sig_len);
/* Signature size of `group` (0: not a group of this node). */
size_t bft_node_sig_bytes(dsig_node *n, const char *group);
uint64_t bft_node_self(const dsig_node *n);

#endif
