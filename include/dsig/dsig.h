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
#include "registry.h"
#include "state.h"
#include "stream.h"

DSIG_BEGIN_DECLS

#define DSIG_VERSION_STRING "0.1.0"

/* Version of the library actually linked. */
DSIG_EXPORT const char *dsig_version(void);

/* Optional: initialise backends eagerly (thread-safe, idempotent). Every entry point also does it
 * lazily. Returns DSIG_E_CRYPTO if a backend (libsodium, libgcrypt) cannot start. */
DSIG_EXPORT int dsig_init(void);

DSIG_END_DECLS

#endif
