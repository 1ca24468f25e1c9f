/*
 * src/bft/window.h — the window of broadcast instances each origin keeps (consistent broadcast,
 * cbc.c; reliable broadcast, rbc.c): BFT_WINDOW slots from `floor` up; frames of instances below it
 * are replays, above it they wait until the bottom retires. A slot retires once delivered and, where
 * the protocol retransmits, acknowledged by every other member — or by n-f when the window is needed
 * (`force`): a crashed member must not stop an origin for good, while a slow one keeps getting
 * retransmissions as long as the window has room.
 */
#ifndef DSIG_BFT_WINDOW_H
#define DSIG_BFT_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "bft/bft.h"

/* The head every instance slot of a window starts with. */
typedef struct bft_slot_head {
    int used;
    int delivered;
    uint64_t k;                      /* the instance number */
    uint64_t ack_mask;               /* members (bit per index) that acknowledged delivery */
} bft_slot_head;

typedef struct bft_window {
    uint64_t floor;                  /* lowest instance still held; below it everything is refused */
    void *slots;                     /* BFT_WINDOW slots of `stride` bytes, each starting with a head */
    size_t stride;
    void (*clear)(void *slot);       /* frees a slot's contents and zeroes it */
    int need_acks;                   /* retire only acknowledged slots (else: delivered is enough) */
} bft_window;

/* A window of slots at `slots` (BFT_WINDOW of `stride` bytes, zeroed), starting at instance 1. */
void bft_window_init(bft_window *w, void *slots, size_t stride, void (*clear)(void *), int need_acks);
/* Clear every slot (before the slots are freed). */
void bft_window_clear_all(bft_window *w);
/* The slot of instance k within the window, created when asked; NULL outside it (or a stale slot). */
void *bft_window_slot(bft_window *w, uint64_t k, int create);
/* Retire delivered (and, with need_acks, acknowledged) slots at the bottom; see the file comment. */
void bft_window_advance(bft_window *w, const bft_core *c, int force);
/* Room for instance k: retire (forced) from the bottom while that moves the window. */
void bft_window_make_room(bft_window *w, const bft_core *c, uint64_t k);
/* Move the window so that k is its top (a certificate proved the origin is that far). */
void bft_window_jump(bft_window *w, uint64_t k);
/* Member bit mask of everyone but this process. */
uint64_t bft_others_mask(const bft_core *c);

#endif
