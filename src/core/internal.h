/*
 * src/core/internal.h — umbrella over the core's internal headers, for files that have not yet
 * switched to including the ones they use. Not installed. New code includes the header it needs:
 *
 *   core/error_internal.h  dsig_fail and friends: recording an error detail
 *   core/mem.h             the counted allocator, secret memory
 *   core/rng.h             OS randomness and the seeded DRBG
 *   core/codec.h           base64url and hex
 *   core/fileio.h          whole writes, bounded whole-file reads
 *   core/backend.h         starting libsodium / libgcrypt
 *   core/keytype.h         key types, the key object, key-type lookup
 *   core/stateful.h        stateful key types and the state-file layer
 *   core/provider.h        the provider contract: struct dsig_alg and its operations
 */
#ifndef DSIG_CORE_INTERNAL_H
#define DSIG_CORE_INTERNAL_H

#include <stdarg.h> /* kept for files that used va_list through the former internal.h */

#include "core/backend.h"
#include "core/codec.h"
#include "core/error_internal.h"
#include "core/fileio.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"
#include "core/rng.h"
#include "core/stateful.h"

/*
 * Read the JWK file open on `fd` (a regular file of at most DSIG_JWK_MAX_BYTES) and import it; the text
 * is wiped (it may hold a private key). Errors name `path` ("key file \"PATH\": ..."). fd is not closed.
 * Defined by the JOSE layer (src/jose/jwk.c), declared here for its callers above it.
 * @retval DSIG_OK  *key is the imported key
 * @retval other    the read's error (core/fileio.h) or the import's (dsig_jwk_import)
 */
int dsig_jwk_read_fd(int fd, const char *path, dsig_key **key);

#endif
