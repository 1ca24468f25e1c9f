/*
 * src/hybrid/walk_plan.c — the schedule both chain walkers follow (chain.c, chain_vaes512.c): each
 * chain's number of steps, the chains ordered by it (most first) and where each chain's end goes.
 *
 * Step counts are public (every chain has the same length in key generation; in verification they are
 * the signature's digits) but random, so nothing here branches on them: a mispredicted branch per
 * chain costs more than the hashing of a step. The order is a counting sort. With SSE2 and few step
 * counts (w = 2, 4, 8) it runs 16 chains at a time (positions by in-register prefix sums): the scalar
 * sort's ~17 instructions per chain were about 100 ns of a 68-chain verification.
 */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "hybrid/hb_internal.h"

/* ws->ge and ws->most from the number of chains with exactly s steps. */
static void plan_totals(const uint16_t count[16], unsigned levels, hb_walk_sched *ws)
{
    ws->ge[levels] = 0;
    ws->most = 0;
    for (unsigned s = levels; s-- > 0;) {
        ws->ge[s] = (uint16_t)(ws->ge[s + 1] + count[s]);
        if (!ws->most && s && ws->ge[s]) ws->most = s;
    }
}

#if defined(__SSE2__)
/* Steps and positions, 16 chains per block. Chains with s steps take positions [ge[s+1], ge[s]), in
 * chain order. Bytes of steps past cnt are 0xFF (they match no count). Positions fit a byte (cnt ≤ 256). */
static void plan_sse2(const uint8_t *start, const uint8_t *stop, unsigned levels, size_t cnt, hb_walk_sched *ws,
                      uint8_t pos[HB_WALK_MAX])
{
    const size_t blocks = (cnt + 15) / 16;
    const __m128i top = _mm_set1_epi8((char)(levels - 1)), one = _mm_set1_epi8(1), zero = _mm_setzero_si128();
    __m128i st[HB_WALK_MAX / 16];
    for (size_t b = 0; b < blocks; b++) {
        const size_t k = cnt - 16 * b < 16 ? cnt - 16 * b : 16;
        __m128i from, to = top, past = zero;
        if (k == 16) {
            from = _mm_loadu_si128((const __m128i *)(start + 16 * b));
            if (stop) to = _mm_loadu_si128((const __m128i *)(stop + 16 * b));
        } else { /* the last, partial block: no read past the arrays */
            uint8_t a[16] = {0}, e[16] = {0};
            memcpy(a, start + 16 * b, k);
            from = _mm_loadu_si128((const __m128i *)a);
            if (stop) {
                memcpy(e, stop + 16 * b, k);
                to = _mm_loadu_si128((const __m128i *)e);
            }
            past = _mm_cmplt_epi8(_mm_set1_epi8((char)(k - 1)),
                                  _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        }
        /* max(stop − start, 0): a saturating subtraction */
        st[b] = _mm_or_si128(_mm_subs_epu8(to, from), past);
        _mm_storeu_si128((__m128i *)(ws->steps + 16 * b), st[b]);
    }
    uint16_t count[16] = {0};
    for (unsigned v = 0; v < levels; v++) {
        __m128i acc = zero; /* a byte lane sees at most 16 chains */
        for (size_t b = 0; b < blocks; b++) acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(st[b], _mm_set1_epi8((char)v)));
        const __m128i sum = _mm_sad_epu8(acc, zero);
        count[v] = (uint16_t)(_mm_cvtsi128_si32(sum) + _mm_extract_epi16(sum, 4));
    }
    plan_totals(count, levels, ws);
    uint8_t next[16]; /* next position of a chain with v steps (mod 256: cnt = 256 wraps only at the end) */
    for (unsigned v = 0; v < levels; v++) next[v] = (uint8_t)ws->ge[v + 1];
    for (size_t b = 0; b < blocks; b++) {
        __m128i p = zero;
        for (unsigned v = 0; v < levels; v++) {
            const __m128i m = _mm_cmpeq_epi8(st[b], _mm_set1_epi8((char)v));
            __m128i r = _mm_and_si128(m, one); /* inclusive prefix sum of the matches */
            r = _mm_add_epi8(r, _mm_slli_si128(r, 1));
            r = _mm_add_epi8(r, _mm_slli_si128(r, 2));
            r = _mm_add_epi8(r, _mm_slli_si128(r, 4));
            r = _mm_add_epi8(r, _mm_slli_si128(r, 8));
            /* position = next[v] + matches before this chain = next[v] + r − 1 */
            const __m128i at = _mm_add_epi8(r, _mm_set1_epi8((char)(next[v] - 1)));
            p = _mm_or_si128(p, _mm_and_si128(m, at));
            next[v] = (uint8_t)(next[v] + (_mm_extract_epi16(r, 7) >> 8));
        }
        _mm_storeu_si128((__m128i *)(pos + 16 * b), p);
    }
}
#endif

/* The same with loops over the chains: four sets of counters (chains c ≡ g mod 4), so that equal
 * counts in a row do not chain read-modify-writes through one memory word. Leaves in fill[g][s] the
 * first position of the chains c ≡ g with s steps. */
static void plan_scalar(const uint8_t *start, const uint8_t *stop, unsigned levels, size_t cnt, hb_walk_sched *ws,
                        uint16_t fill[4][16])
{
    uint16_t count[4][16], total[16] = {0};
    memset(count, 0, sizeof count);
    for (size_t c = 0; c < cnt; c++) {
        const int d = (stop ? (int)stop[c] : (int)levels - 1) - (int)start[c];
        const uint8_t k = (uint8_t)(d & ~(d >> 31)); /* max(d, 0) without a branch */
        ws->steps[c] = k;
        count[c & 3][k]++;
    }
    for (unsigned s = 0; s < levels; s++) total[s] = (uint16_t)(count[0][s] + count[1][s] + count[2][s] + count[3][s]);
    plan_totals(total, levels, ws);
    for (unsigned s = 0; s < levels; s++) {
        uint16_t next = ws->ge[s + 1];
        for (unsigned g = 0; g < 4; g++) {
            fill[g][s] = next;
            next = (uint16_t)(next + count[g][s]);
        }
    }
}

/* Chain c at position i; its end slot is *d (`per` values in a row, each group `skip` bytes of
 * padding after the previous one). */
static inline void place(hb_walk_sched *ws, size_t c, unsigned i, uint8_t **d, unsigned *j, unsigned per, size_t n,
                         size_t skip)
{
    ws->at[c] = (uint16_t)i;
    ws->order[i] = (uint16_t)c;
    ws->dst[c] = *d;
    *d += n;
    if (++*j == per) {
        *j = 0;
        *d += skip;
    }
}

void hb_walk_plan(const uint8_t *start, const uint8_t *stop, unsigned levels, size_t cnt, uint8_t *ends,
                  const hb_walk_out *lay, size_t n, hb_walk_sched *ws)
{
    /* Locals: the stores below could alias *lay. */
    const unsigned per = lay->per;
    const size_t skip = lay->stride - (size_t)per * n;
    uint8_t *d = ends;
    unsigned j = 0;
#if defined(__SSE2__)
    /* The in-register sort costs per step count and block of 16 chains, the scalar one per chain:
     * measured (whole schedule), the first is 1.6×, 1.3× and 1.05× faster at w = 2, 4 and 8 (136, 68
     * and 46 chains) and slower at w = 16. Chosen by the parameter set's shape, never by the digits. */
    if (levels * ((cnt + 15) / 16) <= cnt) {
        uint8_t pos[HB_WALK_MAX];
        plan_sse2(start, stop, levels, cnt, ws, pos);
        for (size_t c = 0; c < cnt; c++) place(ws, c, pos[c], &d, &j, per, n, skip);
        return;
    }
#endif
    uint16_t fill[4][16];
    plan_scalar(start, stop, levels, cnt, ws, fill);
    for (size_t c = 0; c < cnt; c++) place(ws, c, fill[c & 3][ws->steps[c]]++, &d, &j, per, n, skip);
}

/* For the tests: the portable sort, whichever one hb_walk_plan uses. */
void hb_walk_plan_scalar(const uint8_t *start, const uint8_t *stop, unsigned levels, size_t cnt, hb_walk_sched *ws)
{
    uint16_t fill[4][16];
    plan_scalar(start, stop, levels, cnt, ws, fill);
    for (size_t c = 0; c < cnt; c++) {
        const uint16_t i = fill[c & 3][ws->steps[c]]++;
        ws->at[c] = i;
        ws->order[i] = (uint16_t)c;
    }
}
