/*
 * The state file of a stateful key, shared by the files that each do one job of it:
 *   statefile.c        the API (create, open, take an index, close) and the default store
 *   state_format.c     the byte format (encode, decode, checksum)
 *   state_hwm.c        the high-water registry (one small file per key, outside the state file)
 *   state_open_keys.c  the process-wide list of open keys
 *   state_identity.c   the key's identity (its RFC 7638 thumbprint), which names its registry file
 *   durable.c          the durable POSIX updates (temporary file, fsync, rename, directory fsync)
 * include/dsig/state.h is the contract; docs/state.md explains the order of the durable steps.
 */
#ifndef DSIG_CORE_STATE_INTERNAL_H
#define DSIG_CORE_STATE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/internal.h"

/* ---- byte format (state_format.c) ----------------------------------------------------------- */

#define STATE_NAME_MAX 64
#define STATE_PUB_MAX 4096u
#define STATE_PRIV_MAX (1u << 20)
#define STATE_PREFIX "dsig-state " /* any version: what dsig_state_is_state_file recognizes */
#define STATE_PREFIX_LEN 11
#define STATE_FILE_MAX (13 + 1 + STATE_NAME_MAX + 4 + STATE_PUB_MAX + 4 + STATE_PRIV_MAX + 8 + 16 + 32)

/* An index window: when `on`, the key signs only inside [lo, hi) (format version 2). */
struct state_window {
    int on;
    uint64_t lo, hi;
};

/* Fields of a decoded image (pointers into the buffer). */
struct state_fields {
    char name[STATE_NAME_MAX + 1];
    const uint8_t *pub, *priv;
    size_t pub_len, priv_len;
    uint64_t counter;
    struct state_window window; /* on = 0 for a version 1 file */
};

/* The file image of (name, pub, priv, counter, window) in a new buffer: version 1 when w is NULL or
 * off, version 2 otherwise. It holds the private material: the caller wipes it with
 * dsig_xfree(*out, *len). DSIG_OK, DSIG_E_NOMEM or DSIG_E_CRYPTO. */
int state_format_encode(const char *name, const uint8_t *pub, size_t pub_len, const uint8_t *priv,
                        size_t priv_len, uint64_t counter, const struct state_window *w, uint8_t **out,
                        size_t *len);
/* Bounded decoder: every length checked against the bytes left, the checksum first; `path` names the
 * file in messages. DSIG_OK, DSIG_E_FORMAT, DSIG_E_UNSUPPORTED (another format version). */
int state_format_decode(const uint8_t *b, size_t len, const char *path, struct state_fields *f);
/* SHA-256 (libcrypto): the checksum of the format and the registry's slot check. DSIG_OK or
 * DSIG_E_CRYPTO. */
int state_sha256(uint8_t out[32], const void *in, size_t len);

/* ---- the key's identity (state_identity.c) ---------------------------------------------------- */

/* The RFC 7638 thumbprint of a key of a public-key type, as dsig_jwk_thumbprint gives it: the name of
 * the key's registry file and of the key in the list of open keys. */
int state_key_identity(const struct dsig_key *key, char out[DSIG_THUMBPRINT_LEN]);

/* ---- high-water registry (state_hwm.c) ---------------------------------------------------------- */

struct state_hwm {
    int fd;               /* the key's registry file, flock'ed; -1 = no registry */
    int slot_ok[2];
    uint64_t slot_val[2];
};

void state_hwm_init(struct state_hwm *h);
/* Open and lock the registry file of key `thumb` (directory from opts or the environment; none when
 * opts->registry_dir is ""), reading its mark into *mark (0 for a new file or no registry).
 * DSIG_OK, DSIG_E_STATE (in use, damaged, wrong owner or mode), DSIG_E_IO, DSIG_E_NOMEM. */
int state_hwm_open(struct state_hwm *h, const char *thumb, const dsig_state_opts *opts, uint64_t *mark);
/* Durably record `mark` in the slot that does not hold the current maximum. DSIG_OK, DSIG_E_IO. */
int state_hwm_write(struct state_hwm *h, const char *thumb, uint64_t mark);
/* The current mark (0 without a registry). */
uint64_t state_hwm_mark(const struct state_hwm *h);
void state_hwm_close(struct state_hwm *h);

/* ---- keys open in this process (state_open_keys.c) --------------------------------------------- */

struct state_claim {
    const char *thumb, *path;  /* the key's identity and its state file, for messages */
    struct state_claim *next;
    int claimed;
};

/* Record the key as open in this process; DSIG_E_STATE if it already is (by identity). */
int state_claim_take(struct state_claim *c);
/* Remove it from the list (no-op if it is not on it). */
void state_claim_release(struct state_claim *c);

/* ---- the open state (statefile.c) ------------------------------------------------------------ */

/* A fresh key of `alg` rebuilt from private material for index `next` (the provider's check_private,
 * then load_private), checked against `pub`: what opening a state file does once it is decoded.
 * DSIG_OK, DSIG_E_KEY (the material does not belong to pub), the providers' codes. */
int state_key_from_private(struct dsig_key **out, const dsig_alg *alg, const uint8_t *priv, size_t priv_len,
                           uint64_t next, const uint8_t *pub, size_t pub_len);

struct dsig_state_file {
    pthread_mutex_t mu;    /* serializes dsig_state_take_index */
    int fd;                /* the state file, flock'ed LOCK_EX for the key's lifetime */
    int dirfd;             /* its directory: temporary file, rename, fsync */
    char *base;            /* file name inside dirfd */
    char *path;            /* as given, for messages */
    const dsig_alg *alg;
    uint8_t *pub;
    size_t pub_len;
    uint8_t *priv;         /* secret: wiped on close */
    size_t priv_len;
    uint64_t next;         /* next index handed out */
    uint64_t end;          /* durable counter: [next, end) is this process's reserved window */
    uint64_t tried;        /* the highest counter ever handed to the store, durable or not: a
                              failed write may still have reached the disk (or the registry), so
                              nothing below it is ever asked for again */
    struct state_window win; /* the index range the key is restricted to (durable in the file) */
    struct state_window pend; /* a range the source gave whose persist failed: used next, never lost
                                 to a retry that would ask the source again */
    dsig_state_range_source ranges; /* reserve NULL = none: a used-up window gives DSIG_E_RANGE */
    uint64_t cap;          /* capacity of the key */
    uint32_t reserve;
    pid_t pid;             /* a forked child shares the lock: it must not sign */
    dsig_state_store store; /* where a new counter is made durable; persist NULL = the state file */
    char thumb[DSIG_THUMBPRINT_LEN];
    struct state_hwm hwm;
    struct state_claim claim;
};

#endif
