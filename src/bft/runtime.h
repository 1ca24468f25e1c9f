/*
 * src/bft/runtime.h — internal hooks of a dsig_bft object, for the tests' Byzantine processes
 * (tests/bft/bft_byz.c): they run an honest core and tamper with what it sends. Not installed.
 */
#ifndef DSIG_BFT_RUNTIME_H
#define DSIG_BFT_RUNTIME_H

#include "bft/bft.h"

/* Called (with the object's lock held) for every frame the core sends; returns 1 when it took care of
 * the frame (dropped it, or sent something else with bft_runtime_send_raw), 0 to send it as is. */
typedef int (*bft_send_hook)(void *arg, dsig_bft *b, uint64_t to, const uint8_t *frame, size_t len);
void bft_runtime_set_send_hook(dsig_bft *b, bft_send_hook hook, void *arg);
/* Inside a hook: send a frame unchanged / sign a statement as this process. */
int bft_runtime_send_raw(dsig_bft *b, uint64_t to, const uint8_t *frame, size_t len);
int bft_runtime_sign(dsig_bft *b, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sig_len);
/* The core (session id, members) of the object. */
bft_core *bft_runtime_core(dsig_bft *b);

#endif
