/*
 * src/hash/blake3_impl.h — private to src/hash/blake3*.c and tests/hash/test_blake3.c: the BLAKE3
 * constants, the back-end function table and the per-back-end entry points (portable, SSE4.1, AVX2,
 * AVX-512).
 * Not installed; the public API is src/hash/blake3.h.
 */
#ifndef DSIG_HASH_BLAKE3_IMPL_H
#define DSIG_HASH_BLAKE3_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hash/blake3.h"
#include "core/bytes.h"

/* @spec BLAKE3 spec §2.1, Table 3: domain-separation flags (bit values of the `d` word). */
enum {
    B3_CHUNK_START = 1u << 0,
    B3_CHUNK_END = 1u << 1,
    B3_PARENT = 1u << 2,
    B3_ROOT = 1u << 3,
    B3_KEYED_HASH = 1u << 4,
    B3_DERIVE_KEY_CONTEXT = 1u << 5,
    B3_DERIVE_KEY_MATERIAL = 1u << 6,
};

/* @spec BLAKE3 spec §2.2: IV = the SHA-256 initial hash words (FIPS 180-4 §5.3.3). Defined static in
 * each file so the compiler folds the constants into the unrolled rounds. */
__attribute__((unused)) static const uint32_t dsig_b3_iv[8] = {
    0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au, 0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};

/* @spec BLAKE3 spec §2.2: message word order of rounds 0..6. Row r is the permutation
 * (2,6,3,10,7,0,4,13,1,11,12,5,9,14,15,8) applied r times, so no round permutes words at run time. */
__attribute__((unused)) static const uint8_t dsig_b3_sched[7][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8},
    {3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1},
    {10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6},
    {12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4},
    {9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7},
    {11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13},
};

/* Wipe a secret-bearing temporary; the empty asm with a memory clobber keeps the compiler from dropping
 * the memset as a dead store. Inline, unlike dsig_memzero, because the one-block path runs per signature. */
static inline void b3_wipe(void *p, size_t n)
{
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/*
 * One back-end. All functions take the 64-byte block as bytes (the back-end loads the words itself).
 *  compress_cv:  cv <- first 8 words of compress(cv, block, counter, block_len, flags)   (§2.2)
 *  compress_xof: out <- all 16 output words, little-endian (64 bytes; the second half xored with cv)
 *  hash_many:    n independent inputs, input i at in + i*stride, each `blocks` whole 64-byte blocks,
 *                started from `key`; block j of input i uses counter (counter + i if inc_counter) and
 *                flags | (j==0 ? flags_start : 0) | (j==blocks-1 ? flags_end : 0); the 32-byte chaining
 *                value of input i goes to out + 32*i. Used for parent nodes and one-block messages
 *                (blocks = 1). `out` must not overlap `in`.
 *  hash_lanes:   the same with one pointer per input (blocks >= 1): block j < blocks-1 of input i is at
 *                in[i] + 64*j; the last block is at last[i] (last == NULL: in[i] + 64*(blocks-1)), holds
 *                last_len (0..64) message bytes and must be zero-padded to 64 bytes. Used for whole
 *                chunks (blocks = 16, the first one possibly a copy) and dsig_blake3_hash_many_chunks.
 *  xof_many:     n consecutive root output blocks: out + 64*i <- compress_xof(cv, block, block_len,
 *                counter + i, flags) (the parallel XOF of §2.6).
 *  degree:       how many inputs (or output blocks) the SIMD kernels process at once (1, 4, 8, 16, at
 *                most DSIG_B3_MAX_DEGREE); callers batch in multiples of it. Any n stays correct.
 */
#define DSIG_B3_MAX_DEGREE 16
typedef struct dsig_b3_backend {
    const char *name;
    unsigned needs; /* DSIG_CPU_* bits, all required, or the back-end declines */
    void (*compress_cv)(uint32_t cv[8], const uint8_t block[64], uint8_t block_len, uint64_t counter,
                        uint8_t flags);
    void (*compress_xof)(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len, uint64_t counter,
                         uint8_t flags, uint8_t out[64]);
    void (*hash_many)(const uint8_t *in, size_t stride, size_t n, size_t blocks, const uint32_t key[8],
                      uint64_t counter, int inc_counter, uint8_t flags, uint8_t flags_start,
                      uint8_t flags_end, uint8_t *out);
    void (*hash_lanes)(const uint8_t *const in[], const uint8_t *const last[], size_t n, size_t blocks,
                       uint8_t last_len, const uint32_t key[8], uint64_t counter, int inc_counter,
                       uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out);
    void (*xof_many)(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len, uint64_t counter,
                     uint8_t flags, size_t n, uint8_t *out);
    size_t degree;
} dsig_b3_backend;

/* The argument lists shared by every back-end's hash_many / hash_lanes / xof_many. */
#define DSIG_B3_HASH_MANY_ARGS                                                                               \
    const uint8_t *in, size_t stride, size_t n, size_t blocks, const uint32_t key[8], uint64_t counter,      \
        int inc_counter, uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out
#define DSIG_B3_HASH_LANES_ARGS                                                                              \
    const uint8_t *const in[], const uint8_t *const last[], size_t n, size_t blocks, uint8_t last_len,       \
        const uint32_t key[8], uint64_t counter, int inc_counter, uint8_t flags, uint8_t flags_start,        \
        uint8_t flags_end, uint8_t *out
#define DSIG_B3_XOF_MANY_ARGS                                                                                \
    const uint32_t cv[8], const uint8_t block[64], uint8_t block_len, uint64_t counter, uint8_t flags,       \
        size_t n, uint8_t *out

/* Portable back-end (blake3.c). */
void dsig_b3_portable_compress_cv(uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                  uint64_t counter, uint8_t flags);
void dsig_b3_portable_compress_xof(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                   uint64_t counter, uint8_t flags, uint8_t out[64]);
void dsig_b3_portable_hash_many(DSIG_B3_HASH_MANY_ARGS);
void dsig_b3_portable_hash_lanes(DSIG_B3_HASH_LANES_ARGS);
void dsig_b3_portable_xof_many(DSIG_B3_XOF_MANY_ARGS);

#if defined(__x86_64__) || defined(__i386__)
#define DSIG_B3_X86 1
/* SSE4.1 back-end (blake3_sse41.c): one-block compression with the state rows in 4 xmm registers, and
 * 4-way hash_many / hash_lanes / xof_many (one state word of 4 inputs or output blocks per xmm). */
void dsig_b3_sse41_compress_cv(uint32_t cv[8], const uint8_t block[64], uint8_t block_len, uint64_t counter,
                               uint8_t flags);
void dsig_b3_sse41_compress_xof(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                uint64_t counter, uint8_t flags, uint8_t out[64]);
void dsig_b3_sse41_hash_many(DSIG_B3_HASH_MANY_ARGS);
void dsig_b3_sse41_hash_lanes(DSIG_B3_HASH_LANES_ARGS);
void dsig_b3_sse41_xof_many(DSIG_B3_XOF_MANY_ARGS);
/* AVX2 back-end (blake3_avx2.c): 8-way hash_many / hash_lanes / xof_many; a remainder of 2..7 runs as a
 * padded 8-way group, a single one takes the SSE4.1 one-block compression. */
void dsig_b3_avx2_hash_many(DSIG_B3_HASH_MANY_ARGS);
void dsig_b3_avx2_hash_lanes(DSIG_B3_HASH_LANES_ARGS);
void dsig_b3_avx2_xof_many(DSIG_B3_XOF_MANY_ARGS);
/* AVX-512 back-end (blake3_avx512.c, needs AVX512F + AVX512VL): 16-way hash_many / hash_lanes / xof_many
 * with one word of 16 inputs per zmm and native rotates; a remainder of 9..15 runs as a padded 16-way
 * group, 1..8 take the AVX2 back-end. The one-block compression uses 128-bit VL rotates. */
void dsig_b3_avx512_compress_cv(uint32_t cv[8], const uint8_t block[64], uint8_t block_len, uint64_t counter,
                                uint8_t flags);
void dsig_b3_avx512_compress_xof(const uint32_t cv[8], const uint8_t block[64], uint8_t block_len,
                                 uint64_t counter, uint8_t flags, uint8_t out[64]);
void dsig_b3_avx512_hash_many(DSIG_B3_HASH_MANY_ARGS);
void dsig_b3_avx512_hash_lanes(DSIG_B3_HASH_LANES_ARGS);
void dsig_b3_avx512_xof_many(DSIG_B3_XOF_MANY_ARGS);
#endif

/* Each back-end's table, next to its code; blake3_dispatch.c lists them in order of preference. A NULL
 * compress_cv / compress_xof pair or hash_many / hash_lanes / xof_many group is taken from the next
 * usable back-end (each group whole from one back-end, with its degree). */
extern const dsig_b3_backend dsig_b3_backend_portable;
#ifdef DSIG_B3_X86
extern const dsig_b3_backend dsig_b3_backend_sse41;
extern const dsig_b3_backend dsig_b3_backend_avx2;
extern const dsig_b3_backend dsig_b3_backend_avx512;
#endif

/* The operations in use (chosen once by blake3_dispatch.c from dsig_cpu_features(); thread-safe).
 * Inline, so the per-hash fast path stays one acquire load as when the choice lived in blake3.c: the
 * slot is blake3_dispatch.c's, only it writes it. */
extern const void *dsig_b3_slot;
const dsig_b3_backend *dsig_b3_backend_resolve(void);
static inline const dsig_b3_backend *dsig_b3_backend_get(void)
{
    const void *v = __atomic_load_n(&dsig_b3_slot, __ATOMIC_ACQUIRE);
    if (__builtin_expect(v != NULL, 1))
        return (const dsig_b3_backend *)v;
    return dsig_b3_backend_resolve();
}
/* Their degree: how many inputs the batch kernels take at once (1, 4, 8 or 16). */
size_t dsig_blake3_simd_degree(void);

/* Tests only: switch the process to the back-end called `name` ("portable", "sse41", "avx2", "avx512").
 * Returns 0, or -1 when the CPU (or DSIG_CPU_DISABLE) lacks it. Not thread-safe against concurrent
 * hashing; call it while no other thread uses BLAKE3. */
int dsig_blake3_force_impl(const char *name);

#endif
