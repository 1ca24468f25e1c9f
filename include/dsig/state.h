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

typedef struct dsig_state_opts {
    uint32_t reserve;          /* indices reserved per durable write; 0 = default (64); 1 = one fsync
                                  per signature (slowest, loses nothing on a crash) */
    const char *registry_dir;  /* high-water registry: NULL = $DSIG_STATE_REGISTRY, else
                                  $XDG_STATE_HOME/dsig/hwm, else ~/.local/state/dsig/hwm; "" = none
                                  (restored copies can then not be detected: tests only) */
    const dsig_state_store *store; /* where new counters are made durable: NULL = the state file
                                  (temporary file, fsync, rename, fsync of the directory); copied
                                  at create/open */
} dsig_state_opts;

/* Generate a key for a stateful `alg` and create its state file at `path` (O_EXCL: an existing file
 * is never overwritten; mode 0600). The returned key is open and locked; free it with dsig_key_free
 * (which unlocks the file; the unused rest of the reserved window is lost by design).
 * The same key generated again (same seed) continues after its recorded high-water mark.
 * @retval DSIG_OK           *key is the new key, its state file durable
 * @retval DSIG_E_ARG        key, path or alg is NULL, or path names a directory
 * @retval DSIG_E_UNSUPPORTED alg is not stateful, or params name a set it does not have
 * @retval DSIG_E_IO         the file exists, or creating, writing or syncing it failed
 * @retval DSIG_E_STATE      the key is already open (this or another process), or the registry is
 *                           unusable (owner, mode, damage)
 * @retval DSIG_E_EXHAUSTED  this key was already used up on this machine
 * @retval DSIG_E_NOMEM, DSIG_E_RNG, DSIG_E_CRYPTO, DSIG_E_INTERNAL  as their names say */
DSIG_EXPORT int dsig_state_create(dsig_key **key, const char *path, const dsig_alg *alg,
                                  const dsig_keygen_params *params, const dsig_state_opts *opts);

/* Open, lock and check a state file (format, integrity checksum, algorithm, high-water registry).
 * @retval DSIG_OK           *key is open and locked: it signs from its counter on
 * @retval DSIG_E_ARG        key or path is NULL, or path names a directory
 * @retval DSIG_E_IO         the file cannot be opened or read
 * @retval DSIG_E_STATE      locked by another process or already open here, a symbolic link, not a
 *                           regular file, readable by others, older than the key's high-water mark,
 *                           or the registry is unusable
 * @retval DSIG_E_FORMAT     not a state file, damaged (checksum), impossible size or counter
 * @retval DSIG_E_UNSUPPORTED another format version, or an algorithm this library does not have
 * @retval DSIG_E_KEY        the private material does not belong to the stored public key
 * @retval DSIG_E_NOMEM, DSIG_E_CRYPTO  as their names say */
DSIG_EXPORT int dsig_state_open(dsig_key **key, const char *path, const dsig_state_opts *opts);

/* Signatures still available: capacity minus the durable counter, plus what is left of the window
 * reserved by this process.
 * @retval DSIG_OK      *remaining set
 * @retval DSIG_E_ARG   key or remaining is NULL
 * @retval DSIG_E_STATE the key has no open state file (*remaining = 0) */
DSIG_EXPORT int dsig_state_remaining(const dsig_key *key, uint64_t *remaining);

/* Whether the file at `path` starts like a dsig state file (for tools choosing between JWK and state).
 * @retval 1  a regular file starting with "dsig-state " (any format version)
 * @retval 0  anything else, or it cannot be read, or path is NULL */
DSIG_EXPORT int dsig_state_is_state_file(const char *path);

DSIG_END_DECLS

#endif
