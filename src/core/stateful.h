/*
 * src/core/stateful.h — what a stateful key type (LMS/HSS, XMSS) and the state-file layer
 * (statefile.c) give each other. Not installed. See include/dsig/state.h.
 */
#ifndef DSIG_CORE_STATEFUL_H
#define DSIG_CORE_STATEFUL_H

#include <stddef.h>
#include <stdint.h>

struct dsig_key;

/* What a stateful key type gives the state-file layer (struct dsig_keytype.stateful). Hooks return
 * DSIG_OK or a DSIG_E_* code with the detail recorded. */
struct dsig_stateful_ops {
    /* Private material to store (everything but the counter), allocated with dsig_malloc; the core
     * wipes and frees it. */
    int (*save_private)(const struct dsig_key *key, uint8_t **out, size_t *len);
    /* Rebuild key->impl from saved material; `next` is the first index this process may use (the
     * provider brings any traversal state to it). */
    int (*load_private)(struct dsig_key *key, const uint8_t *in, size_t len, uint64_t next);
    /* How many signatures the key can make in total (2^h, or the product over HSS/MT levels). */
    uint64_t (*capacity)(const struct dsig_key *key);
    /* Optional: cheap consistency check of saved material against the stored public key, run before
     * load_private rebuilds any tree (a parameter code edited in the file would otherwise make the
     * load rebuild a tree of up to 2^25 leaves before the public-key comparison refuses it). */
    int (*check_private)(const uint8_t *priv, size_t priv_len, const uint8_t *pub, size_t pub_len);
};

/*
 * For providers' sign_init: the next unused index of a key opened from a state file. The index is
 * durably reserved before this returns. Thread-safe.
 * @retval DSIG_OK          *index is this signature's
 * @retval DSIG_E_ARG       NULL argument
 * @retval DSIG_E_EXHAUSTED no index is left (the key's capacity, or its range source says so)
 * @retval DSIG_E_RANGE     the key's index window is used up and it has no range source
 * @retval DSIG_E_UNAVAILABLE the range source cannot reach its coordinator (no new window now)
 * @retval DSIG_E_STATE     the key has no state file (stateful keys never sign from memory), the file
 *                          was opened by the parent of a forked process, or the high-water mark moved
 * @retval other            the error of writing the reservation (state file, then high-water mark)
 */
int dsig_state_take_index(const struct dsig_key *key, uint64_t *index);

/* Release a key's state file (unlock, close, wipe the private copy); key.c's dsig_key_free. */
void dsig_state_close(struct dsig_key *key);

#endif
