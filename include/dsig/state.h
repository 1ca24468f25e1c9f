/*
 * dsig/state.h — stateful signature keys (LMS/HSS, XMSS/XMSS^MT): the private key lives in a state file.
 *
 * DANGER. A stateful key signs with one-time keys: signing twice with the same index reveals enough to
 * forge. The library makes reuse impossible through this API:
 *   - the private key is only usable through an open state file (dsig_state_create / dsig_state_open);
 *     a stateful key generated in memory or imported from a JWK can verify but never sign;
 *   - before a signature is released, the index it uses has been reserved in the file durably (write,
 *     fsync, atomic rename, fsync of the directory). Reservations come in windows (opts->reserve
 *     indices per durable write) so the fsync is amortized; a crash loses at most the rest of the
 *     current window, never reuses an index;
 *   - the file is locked exclusively while open: a second process (or a second open in this process)
 *     gets DSIG_E_STATE;
 *   - a copy restored from an older state is refused: every reservation is also recorded in a
 *     high-water registry outside the file (one small file per key, named by the public key's RFC 7638
 *     thumbprint, in opts->registry_dir or the default below); opening a state file whose counter is
 *     below the registry's mark fails with DSIG_E_STATE. Copying a key to another machine defeats the
 *     registry: do not copy state files, ever;
 *   - an exhausted key returns DSIG_E_EXHAUSTED and never a signature.
 * Use dsig_sign_init / dsig_sign (and the JWS/CLI paths) with the key as usual; each signature takes
 * the next index.
 *
 * Storage is behind a persist-before-release interface (dsig_state_store, in the manner of
 * cisco/hash-sigs' update_private_key): when a window is used up, the new state is handed to the
 * store's persist callback, and an index is released only after it returned DSIG_OK. The default
 * store (opts->store NULL) is the state file itself.
 *
 * Index windows (several signers sharing one key: docs/scale.md). A key can be restricted to a window
 * [lo, hi) of its indices (dsig_state_set_window, or a range source in opts->ranges that is asked for
 * the next window whenever one is used up). The window is part of the state file (format version 2)
 * and is made durable before any index in it is handed out; setting one jumps forward to lo (the
 * indices below it are burned, never used) and never backward. A windowed key stays windowed: outside
 * its window it signs nothing (DSIG_E_RANGE) until it is given the next one.
 */
#ifndef DSIG_STATE_H
#define DSIG_STATE_H

#include "common.h"
#include "key.h"
#include "registry.h"

DSIG_BEGIN_DECLS

/* What a store is asked to make durable before any index below `counter` is released. */
typedef struct dsig_state_update {
    const char *path;        /* the state file the key was created at or opened from */
    const uint8_t *image;    /* the complete state file holding the new counter, in the format of
                                docs/state.md; it holds the private key: copy it only where it is
                                as safe as the state file, never log it */
    size_t image_len;
    uint64_t counter;        /* the new durable counter */
} dsig_state_update;

/*
 * A persist callback and its context. persist is called with the key's lock held, once per reserved
 * window (opts->reserve indices), before the index that needs it is handed out; it must return only
 * once the update would survive a crash (or fail).
 *   return DSIG_OK        the update is durable: the window is reserved, the signature proceeds
 *   return DSIG_E_*       it is not: no index is handed out, the signing call fails with that code
 *                         (any other nonzero value: DSIG_E_IO) and the counter in memory is left as
 *                         it was, so the next signature asks the store again for the same counter
 * A custom store replaces the state file's updates only: the file at `path` is still created, opened,
 * locked and checked as usual, and the high-water registry is raised after persist succeeded. A store
 * that does not update that file makes it an old copy, which the registry then refuses to open.
 */
typedef struct dsig_state_store {
    int (*persist)(void *ctx, const dsig_state_update *update);
    void *ctx;
} dsig_state_store;

/* What a range source is asked for: the next index window of one key. */
typedef struct dsig_state_range_request {
    const char *path;        /* the state file */
    const char *key_id;      /* the key's RFC 7638 thumbprint: the same for every copy of the key, so
                                the name of its shared counter */
    uint64_t next;           /* the durable counter of this state file: every index below it may have
                                been used here; a range must start at or above it */
    uint64_t capacity;       /* the key's total number of signatures */
} dsig_state_range_request;

/*
 * A range source and its context (for example an index-range reservation on a shared counter). reserve
 * is called with the key's lock held (other signers of the key wait), when the key has no index left
 * in its window (or has no window yet), before any index is handed out.
 *   return DSIG_OK            [*lo, *hi) with req->next <= *lo < *hi <= req->capacity is reserved for
 *                             this key alone, never to be given to anyone else; the state layer makes
 *                             it durable in the state file, then signs from *lo
 *   return DSIG_E_EXHAUSTED   no index of the key is left anywhere
 *   return DSIG_E_UNAVAILABLE the coordinator cannot be reached: no range now
 *   return DSIG_E_*           any other failure; the signing call fails with it
 * A range the state layer could not make durable is kept in memory and used by the next signature; a
 * range is lost (burned) when the process ends before it is used up, and never reused.
 */
typedef struct dsig_state_range_source {
    int (*reserve)(void *ctx, const dsig_state_range_request *req, uint64_t *lo, uint64_t *hi);
    void *ctx;
} dsig_state_range_source;

typedef struct dsig_state_opts {
    uint32_t reserve;          /* indices reserved per durable write; 0 = default (64); 1 = one fsync
                                  per signature (slowest, loses nothing on a crash) */
    const char *registry_dir;  /* high-water registry: NULL = $DSIG_STATE_REGISTRY, else
                                  $XDG_STATE_HOME/dsig/hwm, else ~/.local/state/dsig/hwm; "" = none
                                  (restored copies can then not be detected: tests only) */
    const dsig_state_store *store; /* where new counters are made durable: NULL = the state file
                                  (temporary file, fsync, rename, fsync of the directory); copied
                                  at create/open */
    const dsig_state_range_source *ranges; /* where the next index window comes from when one is used
                                  up: NULL = nowhere (a windowed key then gets DSIG_E_RANGE; a key
                                  without a window signs up to its capacity as before); copied at
                                  create/open; with a source, the key signs only inside windows */
} dsig_state_opts;

/* The counters of an open stateful key (dsig_state_query). */
typedef struct dsig_state_info {
    uint64_t next;           /* the next index this process hands out */
    uint64_t counter;        /* the durable counter: every index below it may have been used */
    uint64_t capacity;       /* the key's total number of signatures */
    int windowed;            /* 1: the key signs only inside [window_lo, window_hi) */
    uint64_t window_lo, window_hi;
} dsig_state_info;

/*
 * Generate a key for a stateful `alg` (params as for dsig_key_generate: a seed, a parameter set) and
 * create its state file at `path`: O_EXCL (an existing file is never overwritten), mode 0600, written,
 * fsynced and its directory fsynced before this returns. The key's mark is recorded in the high-water
 * registry; the same key made again (same seed) continues after that mark, never from 0. The returned
 * key is open and locked; free it with dsig_key_free. *key is NULL on failure.
 * @retval DSIG_OK            *key is the open key.
 * @retval DSIG_E_ARG         key, path or alg NULL, path names a directory, or a bad params member (as
 *                            dsig_key_generate).
 * @retval DSIG_E_UNSUPPORTED alg is not stateful.
 * @retval DSIG_E_IO          the file exists already, or its directory cannot be opened or written.
 * @retval DSIG_E_STATE       the key is already open in this process, or the registry is unusable
 *                            (no directory, wrong owner or mode, damaged, locked by another process).
 * @retval DSIG_E_EXHAUSTED   the same key was already used up on this machine (registry mark).
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_INTERNAL    a provider's private section outside the format's bounds (a bug).
 * @retval other              the codes of dsig_key_generate (DSIG_E_KEY_WEAK, DSIG_E_RNG, DSIG_E_CRYPTO).
 */
DSIG_EXPORT int dsig_state_create(dsig_key **key, const char *path, const dsig_alg *alg,
                                  const dsig_keygen_params *params, const dsig_state_opts *opts);

/*
 * Open a state file, lock it exclusively (flock, non-blocking) and check it: a regular file (not a
 * symbolic link) of mode 0600 or stricter, its format and integrity checksum, its algorithm, that the
 * private section belongs to the public key, and its counter against the high-water registry. The
 * returned key signs with dsig_sign_init / dsig_sign as usual; free it with dsig_key_free (which unlocks
 * the file). *key is NULL on failure.
 * @retval DSIG_OK            *key is the open key.
 * @retval DSIG_E_ARG         key or path NULL, or path names a directory.
 * @retval DSIG_E_IO          the file or its directory cannot be opened or read.
 * @retval DSIG_E_STATE       locked by another process or already open in this one, a symbolic link,
 *                            not a regular file, readable by other users, older than the registry's
 *                            mark (a restored copy), or an unusable registry.
 * @retval DSIG_E_FORMAT      not a state file, truncated, checksum mismatch, a counter beyond the key's
 *                            capacity, or a malformed private section.
 * @retval DSIG_E_KEY         the private section does not belong to the public key.
 * @retval DSIG_E_UNSUPPORTED another format version, or an algorithm it names that is not a stateful
 *                            algorithm of this library.
 * @retval DSIG_E_NOMEM       out of memory.
 * @retval DSIG_E_CRYPTO      a back-end failed to start.
 */
DSIG_EXPORT int dsig_state_open(dsig_key **key, const char *path, const dsig_state_opts *opts);

/*
 * The signatures still available to `key` (*remaining): its capacity minus the durable counter, plus
 * what is left of the window this process reserved. *remaining is 0 on failure.
 * @retval DSIG_OK      *remaining is set.
 * @retval DSIG_E_ARG   key or remaining NULL.
 * @retval DSIG_E_STATE the key has no open state file (a stateful key imported from a JWK, or any other
 *                      key).
 */
DSIG_EXPORT int dsig_state_remaining(const dsig_key *key, uint64_t *remaining);

/*
 * The counters and the window of an open stateful key.
 * @retval DSIG_OK      *info is set.
 * @retval DSIG_E_ARG   key or info NULL.
 * @retval DSIG_E_STATE the key has no open state file.
 */
DSIG_EXPORT int dsig_state_query(const dsig_key *key, dsig_state_info *info);

/*
 * Restrict `key` to the index window [lo, hi) and make that durable (the state file, then the
 * high-water registry) before this returns; the next signature takes index lo. Everything below lo
 * that was not used is burned: the key never goes back. lo == hi is allowed: the key is then windowed
 * with nothing to sign (a copy made for a new signer gets its indices from a range source only).
 * Requires counter <= lo <= hi <= capacity, where counter is the durable counter (dsig_state_query):
 * a window starting below it could reach indices this file may have used already.
 * @retval DSIG_OK          the window is durable.
 * @retval DSIG_E_ARG       key NULL, lo > hi or hi beyond the key's capacity.
 * @retval DSIG_E_STATE     the key has no open state file, it was opened by the parent of a forked
 *                          process, or lo is below its durable counter (that would go backward).
 * @retval other            the error of the durable write (the store, then the registry); the key's
 *                          window and counters are then unchanged.
 */
DSIG_EXPORT int dsig_state_set_window(dsig_key *key, uint64_t lo, uint64_t hi);

/*
 * Whether the file at `path` is a regular file that starts like a dsig state file (its magic), for
 * tools choosing between a JWK and a state file. Reads the first bytes only; checks nothing else.
 * @retval 1 it starts like a state file.
 * @retval 0 it does not, cannot be read, or path is NULL.
 */
DSIG_EXPORT int dsig_state_is_state_file(const char *path);

DSIG_END_DECLS

#endif
