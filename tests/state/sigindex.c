/* The one-time index of a stateful signature (sigindex.h). */
#include "sigindex.h"

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int64_t sigindex_hss(const uint8_t *sig, size_t len)
{
    static const unsigned ots_p[5] = {0, 265, 133, 67, 34};                /* typecodes 1..4: W1..W8 */
    static const unsigned lms_h[10] = {0, 0, 0, 0, 0, 5, 10, 15, 20, 25}; /* typecodes 5..9 */
    if (len < 4)
        return -1;
    uint32_t levels = be32(sig) + 1;
    size_t off = 4;
    int64_t idx = 0;
    for (uint32_t i = 0; i < levels; i++) {
        if (off + 8 > len)
            return -1;
        uint32_t q = be32(sig + off), ot = be32(sig + off + 4);
        if (ot < 1 || ot > 4)
            return -1;
        size_t ots_len = 4 + 32 + (size_t)ots_p[ot] * 32;
        if (off + 4 + ots_len + 4 > len)
            return -1;
        uint32_t lt = be32(sig + off + 4 + ots_len);
        if (lt < 5 || lt > 9)
            return -1;
        unsigned h = lms_h[lt];
        if (q >= (1u << h))
            return -1;
        idx = (idx << h) | q;
        off += 4 + ots_len + 4 + (size_t)h * 32;
        if (i + 1 < levels)
            off += 24 + 32;
    }
    return off == len ? idx : -1;
}

int64_t sigindex_xmss(const uint8_t *sig, size_t len, unsigned idx_bytes)
{
    if (len < idx_bytes || idx_bytes > 8)
        return -1;
    uint64_t v = 0;
    for (unsigned i = 0; i < idx_bytes; i++)
        v = v << 8 | sig[i];
    return (int64_t)v;
}
