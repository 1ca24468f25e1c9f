/*
 * tests/bft/byz.c — Byzantine behaviour shared by the property test and the Byzantine process (byz.h).
 */
#include <string.h>

#include "byz.h"
#include "core/bytes.h"

uint64_t byz_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Sign statement (kind, self, a, b, 0, d) into a vote blob appended to out: signer u64 ‖ blob16. */
static int put_signed(const bft_core *c, byz_sign_fn sign, void *arg, bft_buf *out, int kind, uint64_t a,
                      uint64_t b, const uint8_t d[32], int with_signer)
{
    uint8_t stmt[BFT_STMT_BYTES], sig[DSIG_BFT_MAX_SIG];
    size_t sl = 0;
    bft_stmt(c, stmt, kind, c->self, a, b, 0, d);
    if (sign(arg, stmt, sizeof stmt, sig, sizeof sig, &sl) != 0)
        return -1;
    if (with_signer)
        bb_u64(out, c->self);
    bb_blob16(out, sig, sl);
    return 0;
}

int byz_equivocate(const bft_core *c, byz_sign_fn sign, void *arg, const uint8_t *frame, size_t len, bft_buf *out)
{
    int type;
    bft_rd r;
    if (!bft_open(c, frame, len, &type, &r))
        return 0;
    bb_reset(out);
    bb_put(out, frame, BFT_HDR_BYTES);
    if (type == BT_CBC_SEND || type == BT_RBC_SEND) {
        uint64_t o = rd_u64(&r), k = rd_u64(&r);
        size_t vl;
        const uint8_t *v = rd_blob16(&r, 1, DSIG_BFT_MAX_VALUE, &vl);
        if (r.bad || o != c->self)
            return 0;
        uint8_t twin[DSIG_BFT_MAX_VALUE], d[32];
        memcpy(twin, v, vl);
        twin[vl - 1] ^= 0x5A; /* another value of the same length */
        bft_hash("DSig-bft value v1", twin, vl, NULL, 0, d);
        bb_u64(out, o);
        bb_u64(out, k);
        bb_blob16(out, twin, vl);
        return put_signed(c, sign, arg, out, type, o, k, d, 0) == 0 && !out->err;
    }
    if (type == BT_PB_PREPREPARE) {
        uint64_t v = rd_u64(&r), s = rd_u64(&r);
        if (r.bad || rd_u8(&r) != 1)
            return 0; /* already the null request */
        uint8_t d[32];
        bft_null_digest(d);
        bb_u64(out, v);
        bb_u64(out, s);
        bb_u8(out, 0);
        return put_signed(c, sign, arg, out, BT_PB_PREPREPARE, v, s, d, 1) == 0 && !out->err;
    }
    return 0;
}

static const uint8_t types_cbc[] = {BT_CBC_SEND, BT_CBC_ECHO, BT_CBC_FINAL, BT_CBC_ACK, BT_CBC_WITNESS, 0x7F};
static const uint8_t types_rbc[] = {BT_RBC_SEND, BT_RBC_ECHO, BT_RBC_READY, BT_RBC_ACK, 0x00};
static const uint8_t types_pbft[] = {BT_PB_REQUEST, BT_PB_PREPREPARE, BT_PB_PREPARE, BT_PB_COMMIT, BT_PB_REPLY,
                                     BT_PB_CHECKPOINT, BT_PB_VIEWCHANGE, BT_PB_NEWVIEW, BT_PB_FETCH, BT_PB_STATE};

void byz_inject(const bft_core *c, int cls, uint64_t *rng, const bft_buf *captured, size_t n_captured,
                bft_buf *out)
{
    bb_reset(out);
    unsigned what = (unsigned)(byz_rand(rng) % 5);
    const bft_buf *cap = n_captured ? &captured[byz_rand(rng) % n_captured] : NULL;
    if (!cap || cap->len <= BFT_HDR_BYTES)
        what = 0;
    if (what == 0) { /* garbage behind a valid header */
        const uint8_t *types = cls == BFT_CLASS_CBC ? types_cbc : cls == BFT_CLASS_RBC ? types_rbc : types_pbft;
        size_t nt = cls == BFT_CLASS_CBC ? sizeof types_cbc : cls == BFT_CLASS_RBC ? sizeof types_rbc
                                                                                  : sizeof types_pbft;
        bb_put(out, BFT_MAGIC, 4);
        bb_u8(out, BFT_VERSION);
        bb_u8(out, types[byz_rand(rng) % nt]);
        bb_put(out, c->session, 8);
        size_t n = (size_t)(byz_rand(rng) % 200);
        for (size_t i = 0; i < n; i++)
            bb_u8(out, (uint8_t)byz_rand(rng));
        return;
    }
    bb_put(out, cap->p, cap->len);
    size_t body = cap->len - BFT_HDR_BYTES;
    switch (what) {
    case 1: /* replay as is */
        break;
    case 2: /* a bit flipped anywhere after the header */
        out->p[BFT_HDR_BYTES + byz_rand(rng) % body] ^= (uint8_t)(1u << (byz_rand(rng) % 8));
        break;
    case 3: /* cut or extended */
        if (byz_rand(rng) & 1)
            out->len = BFT_HDR_BYTES + (size_t)(byz_rand(rng) % body);
        else
            bb_u8(out, (uint8_t)byz_rand(rng));
        break;
    default: /* the second u64 of the body (instance / sequence number) moved on by one */
        if (body >= 16) {
            uint64_t x = dsig_load_be64(out->p + BFT_HDR_BYTES + 8);
            dsig_store_be64(out->p + BFT_HDR_BYTES + 8, x + 1);
        }
        break;
    }
}
