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
 */
#ifndef DSIG_STATE_H
#define DSIG_STATE_H

#include "common.h"
#include "key.h"
#include "registry.h"

DSIG_BEGIN_DECLS

typedef struct dsig_state_opts {
    uint32_t reserve;          /* indices reserved per durable write; 0 = default (64); 1 = one fsync
                                  per signature (slowest, loses nothing on a crash) */
    const char *registry_dir;  /* high-water registry: NULL = $DSIG_STATE_REGISTRY, else
                                  $XDG_STATE_HOME/dsig/hwm, else ~/.local/state/dsig/hwm; "" = none
                                  (restored copies can then not be detected: tests only) */
} dsig_state_opts;

/* Generate a key for a stateful `alg` and create its state file at `path` (O_EXCL: an existing file
 * is never overwritten; mode 0600). The returned key is open and locked; free it with dsig_key_free. */
DSIG_EXPORT int dsig_state_create(dsig_key **key, const char *path, const dsig_alg *alg,
                                  const dsig_keygen_params *params, const dsig_state_opts *opts);

/* Open, lock and check a state file (format, integrity checksum, algorithm, high-water registry). */
DSIG_EXPORT int dsig_state_open(dsig_key **key, const char *path, const dsig_state_opts *opts);

/* Signatures still available: capacity minus the durable counter, plus what is left of the window
 * reserved by this process. */
DSIG_EXPORT int dsig_state_remaining(const dsig_key *key, uint64_t *remaining);

/* 1 if the file at `path` starts like a dsig state file (for tools choosing between JWK and state). */
DSIG_EXPORT int dsig_state_is_state_file(const char *path);

DSIG_END_DECLS

#endif
