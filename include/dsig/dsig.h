/*
 * dsig/dsig.h — the whole public API of libdsig.
 *
 * libdsig signs and verifies payloads of any size in one streaming pass with constant memory, for
 * every algorithm of its registry, as raw signatures or as JWS with detached unencoded payloads.
 * See docs/manual.md.
 */
#ifndef DSIG_DSIG_H
#define DSIG_DSIG_H

#include "common.h"
#include "error.h"
#include "io.h"
#include "jwk.h"
#include "jws.h"
#include "hybrid.h"
#include "key.h"
#include "mem.h"
#include "mldsa.h"
#include "prehashed.h"
#include "registry.h"
#include "state.h"
#include "stream.h"

DSIG_BEGIN_DECLS

#define DSIG_VERSION_STRING "0.1.0"

/*
 * The version of the library actually linked (which may differ from the DSIG_VERSION_STRING a program
 * was compiled against), e.g. "0.1.0". Never fails.
 * @return a static NUL-terminated string, never NULL.
 */
DSIG_EXPORT const char *dsig_version(void);

/*
 * Initialise the cryptographic back-ends (libsodium, libgcrypt) now instead of at first use. Optional:
 * every entry point that needs a back-end does it lazily. Thread-safe and idempotent; the outcome of
 * the first call is kept, so a failure is reported again by every later call.
 * @retval DSIG_OK       the back-ends are ready.
 * @retval DSIG_E_CRYPTO libsodium or libgcrypt cannot start (the detail says which).
 */
DSIG_EXPORT int dsig_init(void);

DSIG_END_DECLS

#endif
