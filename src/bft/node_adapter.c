/*
 * src/bft/node_adapter.c — the BFT protocols' only contact with the DSig node API (node_adapter.h).
 */
#include "bft/node_adapter.h"

int bft_node_send(dsig_node *n, uint64_t to, const uint8_t *frame, size_t len)
{
    return dsig_node_send_app(n, to, frame, len);
}

int bft_node_sign(dsig_node *n, const char *group, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                  size_t *sig_len)
{
    return dsig_node_sign(n, group, msg, len, sig, cap, sig_len);
}

int bft_node_verify(dsig_node *n, uint64_t signer, const uint8_t *msg, size_t len, const uint8_t *sig,
                    size_t sig_len)
{
    return dsig_node_verify(n, signer, msg, len, sig, sig_len);
}

size_t bft_node_sig_bytes(dsig_node *n, const char *group)
{
    return dsig_node_sig_bytes(n, group);
}

uint64_t bft_node_self(const dsig_node *n)
{
    return dsig_node_id(n);
}
