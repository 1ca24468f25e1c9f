/*
 * src/node/replay.c — the per-(signer, group) replay window for batch sequence numbers.
 * @spec RFC 4303 §3.4.3 (the sliding anti-replay window, here over batch seqs; a seq is marked only
 * after its batch verified, so forged frames cannot burn seqs).
 */
#include "node/node_internal.h"

/* Is bit `d` (distance below top) set? */
static int win_bit(const struct node_window *w, uint64_t d)
{
    return (int)((w->bits[d / 64] >> (d % 64)) & 1u);
}

/* Classify `seq`: NEW (above the top, or in the window and unmarked), SEEN, or OLD (below the window). */
int node_window_check(const struct node_window *w, unsigned width, uint64_t seq)
{
    if (!w->any || seq > w->top)
        return NODE_WIN_NEW;
    uint64_t d = w->top - seq;
    if (d >= width)
        return NODE_WIN_OLD;
    return win_bit(w, d) ? NODE_WIN_SEEN : NODE_WIN_NEW;
}

/* Mark `seq`, shifting the bitmap when it raises the top. */
void node_window_mark(struct node_window *w, unsigned width, uint64_t seq)
{
    if (!w->any) {
        w->any = 1;
        w->top = seq;
        for (unsigned i = 0; i < NODE_WIN_WORDS; i++)
            w->bits[i] = 0;
        w->bits[0] = 1;
        return;
    }
    if (seq > w->top) {
        uint64_t shift = seq - w->top;
        if (shift >= width) {
            for (unsigned i = 0; i < NODE_WIN_WORDS; i++)
                w->bits[i] = 0;
        } else {
            /* shift the multi-word bitmap left by `shift` bits (distances grow) */
            unsigned ws = (unsigned)(shift / 64), bs = (unsigned)(shift % 64);
            for (int i = (int)NODE_WIN_WORDS - 1; i >= 0; i--) {
                uint64_t v = 0;
                int src = i - (int)ws;
                if (src >= 0) {
                    v = w->bits[src] << bs;
                    if (bs && src >= 1)
                        v |= w->bits[src - 1] >> (64 - bs);
                }
                w->bits[i] = v;
            }
        }
        w->top = seq;
        w->bits[0] |= 1;
        return;
    }
    uint64_t d = w->top - seq;
    if (d < width)
        w->bits[d / 64] |= UINT64_C(1) << (d % 64);
}
