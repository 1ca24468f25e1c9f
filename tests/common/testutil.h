/*
 * tests/common/testutil.h — shared by every test: cmocka, vector loading from tests/vectors (plain or
 * xz-compressed files, tests/vectors/README.md), hex, files.
 */
#ifndef DSIG_TESTUTIL_H
#define DSIG_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <jansson.h>

#include "dsig/dsig.h"

/* Directory of the official vectors ($DSIG_VECTORS, which CTest sets to the source tree's tests/vectors;
 * else tests/vectors relative to the working directory). */
const char *tu_vectors_dir(void);

/* Load a JSON file relative to the vectors dir (e.g. "eddsa/rfc8032/ed25519.json"); fails the test
 * if missing or invalid. Free with json_decref. */
json_t *tu_load_json(const char *relpath);

/* Read a whole file relative to the vectors dir; NUL-terminated; fails the test if missing. A file stored
 * as RELPATH.xz is decompressed in memory, so callers always name the uncompressed file. */
char *tu_read_vector_file(const char *relpath, size_t *len);

/* Hex string -> newly allocated bytes (free with free()). Fails the test on bad hex. */
uint8_t *tu_hex(const char *hex, size_t *len);

/* Convenience: string member of a JSON object, failing the test if absent. */
const char *tu_str(const json_t *obj, const char *key);

/* Deterministic pseudo-random bytes for tests (xorshift; NOT cryptographic). */
void tu_fill(uint8_t *buf, size_t n, uint64_t seed);
/* In main() of a test of one CPU back-end: if the back-end would decline here (`needs`, DSIG_CPU_* bits
 * from src/core/cpu.h, which the test includes: the dispatchers' own rule, so OS support and
 * DSIG_CPU_DISABLE count), say so and exit 77, which CTest reports as skipped (SKIP_RETURN_CODE). */
#define TU_SKIP_WITHOUT_CPU(needs)                                                                    \
    do {                                                                                              \
        if (!dsig_cpu_usable(needs)) {                                                                \
            printf("skipped: back-end declines here (cpu: %s)\n", dsig_cpu_describe());               \
            return 77;                                                                                \
        }                                                                                             \
    } while (0)

/* The next word of a test-local splitmix64 stream kept in *state (reproducible; NOT cryptographic). */
uint64_t tu_rand64(uint64_t *state);

/* Stream `msg` through sign/verify with a given chunk size (0 = one update). */
int tu_sign_chunked(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                    size_t chunk, uint8_t *sig, size_t cap, size_t *sig_len);
int tu_verify_chunked(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                      size_t chunk, const uint8_t *sig, size_t sig_len);

/* 1 when environment variable `name` is set to a value starting with '1' (e.g. DSIG_SLH_SAMPLE=1,
 * which sanitizer runs set to sample the slow known-answer loops). */
int tu_env_flag(const char *name);

/* An AKP JWK text (RFC 9964: kty "AKP", "alg", base64url "pub" and, when priv is non-NULL, "priv").
 * Free with free(). */
char *tu_akp_jwk(const char *alg, const uint8_t *pub, size_t pub_len, const uint8_t *priv,
                 size_t priv_len);

/* Import a NUL-terminated JWK text; returns the library code (dsig_jwk_import). */
int tu_jwk_import(const char *jwk, dsig_key **key);

/* ACVP: the test with tcId `tc` in group `group` ("tests" array); fails the test if absent. */
const json_t *tu_acvp_test(const json_t *group, json_int_t tc);

/* ACVP: the test tgId `tg` / tcId `tc` of a whole document (e.g. expectedResults.json); fails the
 * test if absent. */
const json_t *tu_acvp_find(const json_t *doc, json_int_t tg, json_int_t tc);

#endif
