/*
 * src/core/ct.h — markers for the constant-time test ("ctgrind": secrets marked undefined under
 * valgrind memcheck, so any branch or memory index that depends on them is reported).
 *
 * Built with -DDSIG_CTGRIND (CMake option DSIG_CTGRIND=ON, used by tests/ct) the macros become
 * valgrind client requests; otherwise they compile to nothing.
 *   DSIG_CT_SECRET(p, n)      mark n bytes at p as secret (tests mark seeds, keys, rnd)
 *   DSIG_CT_DECLASSIFY(p, n)  a value derived from secrets that the algorithm makes public or that a
 *                             standard allows to leak (FIPS 204 rejection-loop decisions, a signature
 *                             about to be released). Every use carries a comment saying why.
 */
#ifndef DSIG_CORE_CT_H
#define DSIG_CORE_CT_H

#ifdef DSIG_CTGRIND
#include <valgrind/memcheck.h>
#define DSIG_CT_SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define DSIG_CT_DECLASSIFY(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#else
#define DSIG_CT_SECRET(p, n) ((void)(p), (void)(n))
#define DSIG_CT_DECLASSIFY(p, n) ((void)(p), (void)(n))
#endif

#endif
