/* The per-origin window of broadcast instances (see window.h). */
#include "bft/window.h"

/* The i-th slot of the ring. */
static bft_slot_head *at(const bft_window *w, uint64_t k)
{
    return (bft_slot_head *)((unsigned char *)w->slots + (size_t)(k % BFT_WINDOW) * w->stride);
}

void bft_window_init(bft_window *w, void *slots, size_t stride, void (*clear)(void *), int need_acks)
{
    w->floor = 1;
    w->slots = slots;
    w->stride = stride;
    w->clear = clear;
    w->need_acks = need_acks;
}

void bft_window_clear_all(bft_window *w)
{
    for (uint64_t j = 0; j < BFT_WINDOW; j++)
        w->clear(at(w, j));
}

void *bft_window_slot(bft_window *w, uint64_t k, int create)
{
    if (k < w->floor || k - w->floor >= BFT_WINDOW)
        return NULL;
    bft_slot_head *s = at(w, k);
    if (s->used)
        return s->k == k ? s : NULL;
    if (!create)
        return NULL;
    s->used = 1;
    s->k = k;
    return s;
}

uint64_t bft_others_mask(const bft_core *c)
{
    uint64_t all = c->n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << c->n) - 1;
    return all & ~(UINT64_C(1) << c->self_idx);
}

void bft_window_advance(bft_window *w, const bft_core *c, int force)
{
    for (;;) {
        bft_slot_head *s = at(w, w->floor);
        if (!s->used || s->k != w->floor || !s->delivered)
            return;
        if (w->need_acks) {
            uint64_t others = bft_others_mask(c), acked = s->ack_mask & others;
            int enough = (size_t)__builtin_popcountll(acked) + 1 >= c->n - c->f;
            if (acked != others && !(force && enough))
                return;
            force = 0;
        }
        w->clear(s);
        w->floor++;
    }
}

void bft_window_make_room(bft_window *w, const bft_core *c, uint64_t k)
{
    while (k >= w->floor + BFT_WINDOW) {
        uint64_t before = w->floor;
        bft_window_advance(w, c, 1);
        if (w->floor == before)
            return;
    }
}

void bft_window_jump(bft_window *w, uint64_t k)
{
    uint64_t nf = k - BFT_WINDOW + 1;
    for (uint64_t x = w->floor; x < nf && x < w->floor + BFT_WINDOW; x++) {
        bft_slot_head *s = at(w, x);
        if (s->used && s->k == x)
            w->clear(s);
    }
    w->floor = nf;
}
