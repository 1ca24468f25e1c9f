/*
 * src/hash/blake3.h — BLAKE3 (hash, keyed hash, derive-key, XOF), written here from the BLAKE3
 * specification, with portable, SSE4.1, AVX2 and AVX-512 back-ends chosen at run time (src/core/cpu.h).
 *
 * Caller-allocated hasher state, libsodium style. Hot paths that hash at most one 64-byte block call
 * dsig_blake3_hash_block() (one compression, no hasher set-up); Merkle trees hash many independent
 * 64-byte nodes with dsig_blake3_hash64_many() (SIMD across nodes).
 */
#ifndef DSIG_HASH_BLAKE3_H
#define DSIG_HASH_BLAKE3_H

#include <stddef.h>
#include <stdint.h>

#define DSIG_BLAKE3_OUT_LEN 32
#define DSIG_BLAKE3_KEY_LEN 32
#define DSIG_BLAKE3_BLOCK_LEN 64
#define DSIG_BLAKE3_CHUNK_LEN 1024
#define DSIG_BLAKE3_MAX_DEPTH 54

/* Private members (only blake3.c reads them). The current chunk is kept as raw bytes in buf until more
 * input shows it is not the last one: then it is hashed in the same SIMD batch as the next input's chunks
 * (no block-by-block serial work), and at finalisation it becomes the root or the last leaf. buf comes
 * before cv_stack: callers that hashed a secret wipe offsetof(dsig_blake3_hasher, cv_stack) bytes. */
typedef struct dsig_blake3_hasher {
    uint32_t key[8];
    uint64_t chunk_counter;  /* index of the chunk in buf = number of chunks already in the tree */
    uint16_t buf_len;        /* bytes of the current chunk in buf, 0..DSIG_BLAKE3_CHUNK_LEN */
    uint8_t flags;
    uint8_t cv_stack_len;
    uint8_t buf[DSIG_BLAKE3_CHUNK_LEN];
    uint8_t cv_stack[(DSIG_BLAKE3_MAX_DEPTH + 1) * 32];
} dsig_blake3_hasher;

void dsig_blake3_init(dsig_blake3_hasher *h);
void dsig_blake3_init_keyed(dsig_blake3_hasher *h, const uint8_t key[DSIG_BLAKE3_KEY_LEN]);
void dsig_blake3_init_derive_key(dsig_blake3_hasher *h, const char *context);
void dsig_blake3_update(dsig_blake3_hasher *h, const void *in, size_t len);
/* Any output length (XOF); does not modify the hasher. */
void dsig_blake3_finalize(const dsig_blake3_hasher *h, uint8_t *out, size_t out_len);
void dsig_blake3_finalize_seek(const dsig_blake3_hasher *h, uint64_t seek, uint8_t *out, size_t out_len);

/* One-shot convenience: unkeyed hash of `in` with `out_len` bytes of output. */
void dsig_blake3(const void *in, size_t len, uint8_t *out, size_t out_len);

/* BLAKE3 of a message of at most 64 bytes, out_len <= 64: a single compression. key == NULL is the
 * unkeyed hash; otherwise the keyed hash (KEYED_HASH mode) under the 32-byte key — identical to
 * dsig_blake3_init_keyed + update + finalize, without the hasher set-up. */
void dsig_blake3_hash_block(const uint8_t *key, const void *in, size_t len, uint8_t *out, size_t out_len);

/* BLAKE3 (keyed when key != NULL) of a message of at most one chunk (len <= 1024), 32 bytes out: the
 * same as dsig_blake3_init_keyed + update + finalize, as a chain of compressions without the hasher. */
void dsig_blake3_hash_chunk(const uint8_t *key, const void *in, size_t len, uint8_t out[32]);

/* n independent 64-byte messages hashed at once (SIMD across messages): out[i] = BLAKE3 (keyed when
 * key != NULL) of the 64-byte message in[i], 32 bytes — the same as dsig_blake3_hash_block(key, in[i],
 * 64, out[i], 32). For Merkle trees: a node is the hash of left32 || right32. */
void dsig_blake3_hash64_many(const uint8_t *key, const uint8_t (*in)[64], size_t n, uint8_t (*out)[32]);

/* n independent BLAKE3 hashes of equal-length messages of at most one chunk (len <= 1024): message i
 * is the len bytes at in + i*stride; out[i] = its 32-byte hash (keyed when key != NULL) — the same as
 * dsig_blake3_hash_block / the hasher on each message. SIMD across messages (AVX-512: 16, AVX2: 8,
 * SSE4.1: 4 at a time). For DSig's lane-parallel leaf hashing. */
void dsig_blake3_hash_many_chunks(const uint8_t *key, const uint8_t *in, size_t stride, size_t len, size_t n,
                                  uint8_t (*out)[32]);

/* The back-end chosen at run time: "avx512", "avx2", "sse41" or "portable". */
const char *dsig_blake3_impl(void);

#endif
