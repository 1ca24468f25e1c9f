/*
 * src/node/proto.c — payload layouts of the node's frames (docs/node.md, "Frames"). Integers in the node
 * payloads are big-endian like the transport header; the batch message inside BATCH is the scheme's own
 * byte string (docs/dsig-format.md §7, little-endian seq).
 */
#include <string.h>

#include "core/internal.h"
#include "node/node_internal.h"
#include "core/bytes.h"

/* Build a HELLO payload: version ‖ id ‖ instance ‖ nonce. */
void node_hello_encode(uint8_t out[NODE_HELLO_BYTES], uint64_t id, uint64_t instance,
                       const uint8_t nonce[NODE_NONCE_BYTES])
{
    out[0] = DSIG_NODE_PROTOCOL_VERSION;
    dsig_store_be64(out + 1, id);
    dsig_store_be64(out + 9, instance);
    memcpy(out + 17, nonce, NODE_NONCE_BYTES);
}

/* Parse and check a HELLO payload. */
int node_hello_parse(const uint8_t *p, size_t len, uint64_t *id, uint64_t *instance,
                     uint8_t nonce[NODE_NONCE_BYTES])
{
    if (len != NODE_HELLO_BYTES)
        return dsig_fail(DSIG_E_FORMAT, "node HELLO: %zu bytes, expected %u", len, NODE_HELLO_BYTES);
    if (p[0] != DSIG_NODE_PROTOCOL_VERSION)
        return dsig_fail(DSIG_E_FORMAT, "node HELLO: protocol version %u, expected %u", p[0],
                         DSIG_NODE_PROTOCOL_VERSION);
    uint64_t v = dsig_load_be64(p + 1);
    if (v == 0 || v > DSIG_NODE_MAX_ID)
        return dsig_fail(DSIG_E_FORMAT, "node HELLO: node id out of range");
    *id = v;
    *instance = dsig_load_be64(p + 9);
    memcpy(nonce, p + 17, NODE_NONCE_BYTES);
    return DSIG_OK;
}

/* The transcript a node signs in its AUTH frame: domain label ‖ version ‖ signer id ‖ verifier id ‖
 * signer's nonce ‖ verifier's nonce. It is signed under the node's authentication key (derived under
 * NODE_AUTH_KEY_LABEL), which signs nothing else; the label names the protocol; the verifier's fresh
 * nonce makes it unusable on any other connection; the order of the ids makes it unusable in the other
 * direction. */
void node_auth_transcript(uint8_t out[NODE_AUTH_TRANSCRIPT_BYTES], uint64_t signer, uint64_t verifier,
                          const uint8_t signer_nonce[NODE_NONCE_BYTES],
                          const uint8_t verifier_nonce[NODE_NONCE_BYTES])
{
    memcpy(out, NODE_AUTH_LABEL, NODE_AUTH_LABEL_BYTES);
    uint8_t *p = out + NODE_AUTH_LABEL_BYTES;
    p[0] = DSIG_NODE_PROTOCOL_VERSION;
    dsig_store_be64(p + 1, signer);
    dsig_store_be64(p + 9, verifier);
    memcpy(p + 17, signer_nonce, NODE_NONCE_BYTES);
    memcpy(p + 17 + NODE_NONCE_BYTES, verifier_nonce, NODE_NONCE_BYTES);
}

/* Write signer id ‖ name length ‖ name, the part of a BATCH frame before the batch message. */
size_t node_batch_prefix(uint8_t out[NODE_BATCH_HDR_MAX], uint64_t signer, const char *group, size_t glen)
{
    dsig_store_be64(out, signer);
    out[8] = (uint8_t)glen;
    memcpy(out + 9, group, glen);
    return 9 + glen;
}

/* The seq field of a batch message (docs/dsig-format.md §7). */
uint64_t node_batch_msg_seq(const uint8_t *msg)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | msg[NODE_BATCH_MSG_SEQ_OFF + (unsigned)i];
    return v;
}

/* Split a BATCH payload into its fields; the batch message itself is checked by the verifier. */
int node_batch_parse(const uint8_t *p, size_t len, struct node_batch_view *out)
{
    if (len < 9)
        return dsig_fail(DSIG_E_FORMAT, "node BATCH: %zu bytes, shorter than its header", len);
    size_t glen = p[8];
    if (glen == 0 || glen > DSIG_NODE_MAX_NAME)
        return dsig_fail(DSIG_E_FORMAT, "node BATCH: group name length %zu", glen);
    if (len < 9 + glen + NODE_BATCH_MSG_SEQ_OFF + 8)
        return dsig_fail(DSIG_E_FORMAT, "node BATCH: %zu bytes, too short for a batch message", len);
    out->signer = dsig_load_be64(p);
    out->group = (const char *)p + 9;
    out->group_len = glen;
    out->msg = p + 9 + glen;
    out->msg_len = len - 9 - glen;
    out->seq = node_batch_msg_seq(out->msg);
    return DSIG_OK;
}

/* Build a BATCH_ACK payload: signer ‖ seq ‖ name length ‖ name. */
size_t node_ack_encode(uint8_t out[NODE_ACK_MAX], uint64_t signer, uint64_t seq, const char *group,
                       size_t glen)
{
    dsig_store_be64(out, signer);
    dsig_store_be64(out + 8, seq);
    out[16] = (uint8_t)glen;
    memcpy(out + 17, group, glen);
    return 17 + glen;
}

/* Parse a BATCH_ACK payload (the name must fill the rest exactly). */
int node_ack_parse(const uint8_t *p, size_t len, uint64_t *signer, uint64_t *seq, const char **group,
                   size_t *glen)
{
    if (len < 18 || p[16] == 0 || p[16] > DSIG_NODE_MAX_NAME || len != 17u + p[16])
        return dsig_fail(DSIG_E_FORMAT, "node BATCH_ACK: bad length %zu", len);
    *signer = dsig_load_be64(p);
    *seq = dsig_load_be64(p + 8);
    *glen = p[16];
    *group = (const char *)p + 17;
    return DSIG_OK;
}
