/*
 * src/core/error_internal.h — how library code records an error for dsig_last_error_detail (error.c).
 * Not installed.
 *
 * Every failing path returns a DSIG_E_* code (include/dsig/dsig.h) and leaves one detail sentence for
 * the calling thread; these functions do both in one expression: `return dsig_fail(DSIG_E_ARG, ...)`.
 */
#ifndef DSIG_CORE_ERROR_INTERNAL_H
#define DSIG_CORE_ERROR_INTERNAL_H

#include "dsig/dsig.h"

/*
 * Record a detail sentence (printf format) for the calling thread and return `code`.
 * @retval code  always
 */
int dsig_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Record the OpenSSL error queue's first entry as the detail, prefixed by `what`, clear the queue and
 * return `code`.
 * @retval code  always
 */
int dsig_fail_openssl(int code, const char *what);

/*
 * Record `code` with the detail "PREFIX: previous detail" (PREFIX from fmt), for an error passed up
 * with context added; the previous detail is copied first (it lives in the same buffer).
 * @retval code  always
 */
int dsig_fail_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Forget the calling thread's detail (dsig_last_error_detail then returns ""). */
void dsig_clear_error(void);

#endif
