/*
 * What the fuzz harnesses share (docs/fuzzing.md): invariant checks that abort, exact-size copies,
 * 5-byte patch edits, an input reader, seed writing, the keys the JOSE targets verify with, and one
 * deterministic key (with its public part) for every registry algorithm.
 */
#ifndef DSIG_FUZZ_COMMON_H
#define DSIG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dsig/dsig.h"

/* Report a violated invariant and abort: what the fuzzer is looking for. */
#define FUZZ_CHECK(cond, ...)                                                                        \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            fprintf(stderr, "fuzz: invariant failed (%s:%d): ", __FILE__, __LINE__);                \
            fprintf(stderr, __VA_ARGS__);                                                            \
            fprintf(stderr, "\n");                                                                   \
            abort();                                                                                 \
        }                                                                                            \
    } while (0)

/* A failure of the library (rc other than DSIG_OK and DSIG_E_VERIFY) must say why: a non-empty
 * dsig_last_error_detail(); `what` names the call in the report. */
void fuzz_check_detail(int rc, const char *what);

/* A copy of n bytes in a heap buffer of exactly n bytes (1 if n = 0), so that ASan sees any read
 * past the end; aborts on allocation failure. Free with free(). */
uint8_t *fuzz_dup(const void *data, size_t n);

/* Apply 5-byte edits (op, offset u24le, value) to a copy of base into out (capacity blen + grow);
 * returns the new length. op & 3: 0 xor, 1 set, 2 truncate at offset, 3 insert value at offset (the
 * result grows by at most `grow` bytes). Lets single-byte mutations reach deep into large objects
 * (64 KiB DSig HORS signatures, 4.6 KB ML-DSA signatures) that would not fit an input. */
size_t fuzz_patch(const uint8_t *base, size_t blen, const uint8_t *edits, size_t elen, uint8_t *out,
                  size_t grow);

/* Sequential reader over a fuzz input: short reads give zeros / empty fields, never fail. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t n;
} fuzz_in;
uint8_t fuzz_u8(fuzz_in *in);
uint16_t fuzz_u16(fuzz_in *in); /* little-endian */
/* Up to `want` bytes (fewer if the input ends); *len receives how many. */
const uint8_t *fuzz_take(fuzz_in *in, size_t want, size_t *len);

/* Feed len bytes to fn(arg, chunk, n) in pieces whose sizes follow from `split` (0: one piece;
 * otherwise a mix of empty, 1–3 byte, block-sized and larger pieces). Returns the first non-zero
 * result of fn, else 0. */
typedef int (*fuzz_chunk_fn)(void *arg, const uint8_t *chunk, size_t n);
int fuzz_feed(fuzz_chunk_fn fn, void *arg, const uint8_t *data, size_t len, uint32_t split);
/* Streamed signing / verification (dsig_*_init_ex, then the data over `split`: see fuzz_feed); a
 * failed update aborts the context. The result of final, or the first error. */
int fuzz_sign_streamed(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                       const dsig_sign_opts *opts, uint32_t split, uint8_t *sig, size_t cap, size_t *sig_len);
int fuzz_verify_streamed(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                         const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts, uint32_t split);
/* Adapters for the streaming contexts. */
int fuzz_sign_update(void *ctx, const uint8_t *chunk, size_t n);   /* dsig_sign_ctx */
int fuzz_verify_update(void *ctx, const uint8_t *chunk, size_t n); /* dsig_verify_ctx */

/* Seed corpora: with DSIG_FUZZ_SEEDS=DIR in the environment, a harness's LLVMFuzzerInitialize calls
 * fuzz_seeds_run(gen): gen writes each seed with fuzz_seed(), then the process exits 0. Without the
 * variable fuzz_seeds_run returns and fuzzing goes on. */
void fuzz_seeds_run(void (*gen)(void));
/* A harness's LLVMFuzzerInitialize: the seed generator `gen` runs when DSIG_FUZZ_SEEDS is set. */
#define FUZZ_SEED_GENERATOR(gen)                                                                     \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                                \
    {                                                                                                \
        (void)argc;                                                                                  \
        (void)argv;                                                                                  \
        fuzz_seeds_run(gen);                                                                         \
        return 0;                                                                                    \
    }
void fuzz_seed(const void *data, size_t len);
/* A seed assembled from pieces: fuzz_seed_begin, fuzz_seed_add (any number), fuzz_seed_end. */
void fuzz_seed_begin(void);
void fuzz_seed_add(const void *data, size_t len);
void fuzz_seed_u16(unsigned v);
void fuzz_seed_end(void);
/* One seed per NUL-terminated text. */
void fuzz_seed_texts(const char *const *texts, size_t n);
/* A seed of two parts (a mode header and a body). */
void fuzz_seed2(const void *head, size_t hl, const void *body, size_t bl);
/* Seed callback that writes the seeds of one target (*(const unsigned *)arg), or all when arg is NULL. */
void fuzz_seed_cb(void *arg, unsigned target, const uint8_t *data, size_t len);

/* A private temporary directory (in /dev/shm when writable: fsync is free there) removed with all its
 * files at exit; `tag` names it. Aborts on failure. */
const char *fuzz_tmpdir(const char *tag);

/* An Ed25519 key (bound to its algorithm) from the 32-byte seed seed_byte × 32: the applications'
 * harnesses' server and client keys. Aborts on failure. */
dsig_key *fuzz_ed25519_key(uint8_t seed_byte);

/* A hostile peer's writes on a stream socket: the bytes in pieces split at random points (fuzz_feed's
 * split; 0: one write), so the other side's incremental frame reader sees torn headers and payloads.
 * 0, or 1 once the peer closed (what it answered before is still there to read). No SIGPIPE. */
int fuzz_send_split(int fd, const uint8_t *p, size_t n, uint32_t split);
/* One frame of the transport's format (src/net: header, payload) sent so. */
int fuzz_send_frame(int fd, uint8_t type, const uint8_t *payload, size_t n, uint32_t split);

/* Keys the JOSE targets use (created once, from fixed seeds): one per key type that has a provider and
 * whose first algorithm is cheap to generate (RSA and stateful schemes excluded). */
typedef struct fuzz_keys {
    dsig_key *key[16];
    size_t n;
    const char *allowed[64]; /* every registered algorithm name */
} fuzz_keys;

const fuzz_keys *fuzz_get_keys(void);
/* For a key that imported with a private part: the signature it makes (with the first algorithm of
 * the registry that takes it; not stateful keys, which sign only from a state file) must verify
 * under its public part. An imported private key whose halves disagree (edited RSA CRT values, an EC
 * private scalar of another point) must be refused or must not sign: a wrong RSA-CRT signature
 * released would give away the factorization. */
void fuzz_check_key_pair(const dsig_key *key);
void fuzz_free_keys(void);

/* One key per registry algorithm (fuzz_algs.c), from a fixed seed: `key` signs (stateful schemes:
 * open on a state file in a private temporary directory, small fast parameter sets), `pub` verifies
 * (the key itself for MACs). Made on first use of that algorithm. */
typedef struct fuzz_alg {
    const dsig_alg *alg;
    dsig_key *key;
    dsig_key *pub;
} fuzz_alg;
size_t fuzz_alg_count(void);
/* Replace the state-file key of stateful algorithm i (out of one-time keys) by the next seed's. */
void fuzz_alg_renew(size_t i);
const fuzz_alg *fuzz_alg_get(size_t i);
/* Raw public members of a key, for ACVP-style inputs: the key type's JWK members (public ones, or
 * "k" of a MAC key) concatenated, each preceded by u16le length. Returns the bytes written (0 when
 * they do not fit cap). */
size_t fuzz_key_members(const dsig_key *key, uint8_t *out, size_t cap);
/* The inverse: a key of alg's key type from such members (imported as a JWK); DSIG_OK or the import's
 * error. */
int fuzz_key_from_members(const dsig_alg *alg, const uint8_t *members, size_t len, dsig_key **out);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Seed callback: target and the seed bytes (valid during the call only). */
typedef void (*fuzz_dsig_seed_cb)(void *arg, unsigned target, const uint8_t *data, size_t len);

/* JWS (fuzz_jws.c: byte 0 = mode, then the text) and JWK (fuzz_jwk.c: the text) targets, shared with
 * the CTest driver (fuzz_driver.c); their seeds (fuzz_jose_seeds.c): target 0 JWS, 1 JWK. */
int fuzz_jwk_one(const uint8_t *data, size_t size);
int fuzz_jws_one(const uint8_t *data, size_t size);
void fuzz_jose_seeds(fuzz_dsig_seed_cb cb, void *arg);

/* DSig hybrid signatures (fuzz_dsig.c): byte 0 selects the target (0 scheme signature, 1 batch
 * message, 2 runtime verifier, 3 registry "DSig"; bit 2 = patch mode). Inputs over the bound are
 * rejected before any work. */
#define FUZZ_DSIG_MAX_INPUT 9216u
#define FUZZ_DSIG_TARGETS 4u
int fuzz_dsig_one(const uint8_t *data, size_t size);
/* Called with each seed input (target = data[0] & 3). */
void fuzz_dsig_seeds(fuzz_dsig_seed_cb cb, void *arg);
void fuzz_dsig_free(void);

/* ML-DSA (fuzz_mldsa.c): byte 0 selects the target (0 signature, 1 public key, 2 AKP JWK; bit 2 =
 * patch mode), byte 1 the parameter set, byte 2 message / path / base JWK. Seeds use the DSig
 * callback type (target = data[0] & 3). */
#define FUZZ_MLDSA_MAX_INPUT 8192u
#define FUZZ_MLDSA_TARGETS 3u
int fuzz_mldsa_one(const uint8_t *data, size_t size);
void fuzz_mldsa_seeds(fuzz_dsig_seed_cb cb, void *arg);
void fuzz_mldsa_free(void);

#endif
