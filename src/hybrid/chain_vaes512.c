/*
 * src/hybrid/chain_vaes512.c — the verification walk (hb_chains_walk_to) for Haraka-512 chains of
 * n = 18 bytes on VAES-512: the F blocks (docs/dsig-format.md §3.2) stay in registers from a chain's
 * first step to its last, eight chains at a time.
 *
 * Why a walker of its own: the generic one (chain.c) keeps its blocks in memory; after each call of
 * the 8-way hash it copies the 18-byte outputs back into the blocks and bumps their step bytes, and
 * the next call loads those blocks whole, past narrow stores the CPU cannot forward. Here each step
 * rebuilds the blocks' two variable words from the feed-forward in a few shuffles, and a mask keeps
 * the lanes whose chain has already ended. Measured: 3 % off a verification (docs/benchmarks.md,
 * "sixth pass"); the Haraka rounds themselves are most of the walk.
 *
 * The chains are grouped by their number of steps (most first: hb_walk_plan, the schedule of the
 * generic walker too), so a group of eight is nearly uniform and a call hashes about as many lanes as
 * the generic one does. A step
 * count is a digit of the signature (public): the schedule follows it, and the per-lane choices are
 * masks, not branches (a mispredicted branch per chain costs more than a hash).
 */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <string.h>

#include "core/cpu.h"
#include "core/internal.h"
#include "hash/haraka_vaes512_core.h"
#include "hybrid/hb_internal.h"

/*
 * Walk the chains order[0..a) (a ≤ 4·nq; every one has at least one step, order[0] the most) and
 * store each end at dst[c]. Lanes past `a` repeat order[0] with no steps: hashed, never stored.
 */
static inline __attribute__((always_inline)) TARGET_V512 void
walk_group(__m512i seed, unsigned dom, const uint16_t *ids, const uint8_t *start, const uint8_t *vals,
           const uint8_t *steps, const uint16_t *order, size_t a, uint8_t *const *dst, const int nq)
{
    __m512i w1[2], w2[2], st[2];
    const __m512i inc = _mm512_set4_epi32(0, 0, 0, 0x100), lo16 = _mm512_set4_epi32(0, 0, 0xffff, 0);
    for (int q = 0; q < nq; q++) {
        /* Per 128-bit lane: x = value bytes 0..15; h = F block bytes 16..19 (dom, step, chain u16le)
         * in dword 0 and the lane's steps in dword 1; w2 = value bytes 12..17 (a load that stays
         * inside the value, shifted). Masked broadcasts put each chain in its lane without a trip
         * through memory. AVX-512F only: no byte shifts (BW), every move is in dwords or qwords. */
        __m512i x = _mm512_setzero_si512(), h = x, y = x;
        for (int l = 0; l < 4; l++) {
            const size_t g = (size_t)(4 * q + l), c = order[g < a ? g : 0];
            const uint8_t *v = vals + c * DSIG_HB_WOTS_N;
            const uint64_t chain = ids ? ids[c] : (uint64_t)c, k = g < a ? steps[c] : 0;
            const __mmask8 q0 = (__mmask8)(1u << (2 * l));
            x = _mm512_mask_broadcast_i32x4(x, (__mmask16)(0xFu << (4 * l)), _mm_loadu_si128((const __m128i *)v));
            h = _mm512_mask_set1_epi64(h, q0, (long long)(dom | (uint64_t)start[c] << 8 | chain << 16 | k << 32));
            y = _mm512_mask_set1_epi64(y, q0, (long long)(dsig_load_le64(v + 10) >> 16));
        }
        /* word 1 = dom step chain ‖ value[0..12), word 2 = value[12..18) ‖ zeros */
        w1[q] = _mm512_mask_shuffle_epi32(h, 0xEEEE, x, _MM_SHUFFLE(2, 1, 0, 0));
        w2[q] = y;
        st[q] = _mm512_shuffle_epi32(h, _MM_SHUFFLE(1, 1, 1, 1));
    }
    const unsigned most = steps[order[0]];
    for (unsigned t = 0; t < most; t++) {
        __m512i s[2][4];
        for (int q = 0; q < nq; q++) {
            s[q][0] = seed;
            s[q][1] = w1[q];
            s[q][2] = w2[q];
            s[q][3] = _mm512_setzero_si512();
        }
        dsig_haraka512_v512_rounds(s, nq);
        const __m512i tt = _mm512_set1_epi32((int)t);
        for (int q = 0; q < nq; q++) {
            /* Feed-forward and truncation to the output's first 18 bytes: bytes 8..15 of words 0 and
             * 1 (out[0..16) = dwords o0..o3 of o), bytes 0..1 of word 2 (out[16..18)). The next
             * block: word 1 = step + 1 ‖ o0 o1 o2, word 2 = o3 ‖ out[16..18) ‖ zeros. */
            const __m512i f0 = _mm512_xor_si512(s[q][0], seed), f1 = _mm512_xor_si512(s[q][1], w1[q]);
            const __m512i f2 = _mm512_xor_si512(s[q][2], w2[q]);
            const __m512i o = _mm512_unpackhi_epi64(f0, f1);
            const __m512i n1 =
                _mm512_mask_shuffle_epi32(_mm512_add_epi32(w1[q], inc), 0xEEEE, o, _MM_SHUFFLE(2, 1, 0, 0));
            const __m512i o3 = _mm512_maskz_shuffle_epi32(0x1111, o, _MM_SHUFFLE(3, 3, 3, 3));
            const __m512i t2 = _mm512_maskz_shuffle_epi32(0x2222, f2, _MM_SHUFFLE(0, 0, 0, 0));
            const __m512i n2 = _mm512_ternarylogic_epi32(o3, t2, lo16, 0xF8); /* o3 | (t2 & lo16) */
            const __mmask16 live = _mm512_cmpgt_epi32_mask(st[q], tt);
            w1[q] = _mm512_mask_mov_epi32(w1[q], live, n1);
            w2[q] = _mm512_mask_mov_epi32(w2[q], live, n2);
        }
    }
    /* Each lane's value is block bytes 20..37: dwords 1..3 of word 1, then bytes 0..5 of word 2. Put
     * out[0..16) in one register per lane (two shuffles for four lanes) and store it with out[16..18)
     * from registers: through a stored copy of the words, the narrow reloads missed store forwarding. */
    for (int q = 0; q < nq; q++) {
        const __m512i lo = _mm512_mask_shuffle_epi32(_mm512_shuffle_epi32(w1[q], _MM_SHUFFLE(0, 3, 2, 1)), 0x8888,
                                                     w2[q], _MM_SHUFFLE(0, 0, 0, 0));
        const size_t g = (size_t)(4 * q);
#define WALK_STORE(l)                                                                                    \
    if (g + (l) < a) {                                                                                   \
        uint8_t *d = dst[order[g + (l)]];                                                                \
        _mm_storeu_si128((__m128i *)d, _mm512_extracti32x4_epi32(lo, l));                                \
        dsig_store_le16(d + 16, (uint32_t)_mm_extract_epi16(_mm512_extracti32x4_epi32(w2[q], l), 2)); \
    }
        WALK_STORE(0)
        WALK_STORE(1)
        WALK_STORE(2)
        WALK_STORE(3)
#undef WALK_STORE
    }
}

TARGET_V512 void hb_chains_walk_to_vaes512(const dsig_hb_params *p, const uint8_t pk_seed[16], unsigned dom,
                                           const uint16_t *ids, const uint8_t *start, const uint8_t *stop,
                                           const uint8_t *vals, uint8_t *ends, const hb_walk_out *lay,
                                           size_t cnt)
{
    hb_walk_sched ws;
    hb_walk_plan(start, stop, p->levels, cnt, ends, lay, DSIG_HB_WOTS_N, &ws);
    uint8_t *const *dst = ws.dst;
    const size_t moving = ws.ge[1]; /* chains with at least one step: order[0..moving) */

    const __m512i seed = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)pk_seed));
    size_t g = 0;
    for (; g + 4 < moving; g += 8)
        walk_group(seed, dom, ids, start, vals, ws.steps, ws.order + g, moving - g < 8 ? moving - g : 8, dst, 2);
    if (g < moving)
        walk_group(seed, dom, ids, start, vals, ws.steps, ws.order + g, moving - g, dst, 1);
    /* Chains without steps end where they start. */
    for (size_t i = moving; i < cnt; i++) {
        const size_t c = ws.order[i];
        hb_cpy_val(dst[c], vals + c * DSIG_HB_WOTS_N, DSIG_HB_WOTS_N);
    }
}

#else
typedef int dsig_hb_chain_vaes512_unused;
#endif
