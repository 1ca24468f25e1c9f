/*
 * dsig/common.h — macros shared by every public header.
 */
#ifndef DSIG_COMMON_H
#define DSIG_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define DSIG_WARN_UNUSED __attribute__((warn_unused_result))
#define DSIG_EXPORT __attribute__((visibility("default")))
#else
#define DSIG_WARN_UNUSED
#define DSIG_EXPORT
#endif

#ifdef __cplusplus
#define DSIG_BEGIN_DECLS extern "C" {
#define DSIG_END_DECLS }
#else
#define DSIG_BEGIN_DECLS
#define DSIG_END_DECLS
#endif

#endif
