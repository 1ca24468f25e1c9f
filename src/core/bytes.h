/*
 * src/core/bytes.h — fixed-width unsigned integers to and from big-endian byte strings: the one copy
 * for every encoder that needs them (SHA-2 message words and lengths, LMS u32str/u16str, XMSS and
 * SLH-DSA toByte, state-file headers). No alignment or aliasing assumptions (memcpy); GCC and Clang
 * compile each to one load or store plus a byte swap on little-endian hosts.
 */
#ifndef DSIG_CORE_BYTES_H
#define DSIG_CORE_BYTES_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DSIG_BE16(x) (x)
#define DSIG_BE32(x) (x)
#define DSIG_BE64(x) (x)
#define DSIG_LE16(x) __builtin_bswap16(x)
#define DSIG_LE32(x) __builtin_bswap32(x)
#define DSIG_LE64(x) __builtin_bswap64(x)
#else
#define DSIG_BE16(x) __builtin_bswap16(x)
#define DSIG_BE32(x) __builtin_bswap32(x)
#define DSIG_BE64(x) __builtin_bswap64(x)
#define DSIG_LE16(x) (x)
#define DSIG_LE32(x) (x)
#define DSIG_LE64(x) (x)
#endif

/* Big-endian 16-bit store (the low 16 bits of v). */
static inline void dsig_store_be16(uint8_t *p, uint32_t v)
{
    uint16_t w = DSIG_BE16((uint16_t)v);
    memcpy(p, &w, 2);
}

/* Big-endian 32-bit store. */
static inline void dsig_store_be32(uint8_t *p, uint32_t v)
{
    v = DSIG_BE32(v);
    memcpy(p, &v, 4);
}

/* Big-endian 64-bit store. */
static inline void dsig_store_be64(uint8_t *p, uint64_t v)
{
    v = DSIG_BE64(v);
    memcpy(p, &v, 8);
}

/* Big-endian 16-bit load. */
static inline uint32_t dsig_load_be16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return DSIG_BE16(v);
}

/* Big-endian 32-bit load. */
static inline uint32_t dsig_load_be32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return DSIG_BE32(v);
}

/* Big-endian 64-bit load. */
static inline uint64_t dsig_load_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return DSIG_BE64(v);
}

/* Little-endian 16-bit store (the low 16 bits of v). */
static inline void dsig_store_le16(uint8_t *p, uint32_t v)
{
    uint16_t w = DSIG_LE16((uint16_t)v);
    memcpy(p, &w, 2);
}

/* Little-endian 32-bit store. */
static inline void dsig_store_le32(uint8_t *p, uint32_t v)
{
    v = DSIG_LE32(v);
    memcpy(p, &v, 4);
}

/* Little-endian 64-bit store. */
static inline void dsig_store_le64(uint8_t *p, uint64_t v)
{
    v = DSIG_LE64(v);
    memcpy(p, &v, 8);
}

/* Little-endian 16-bit load. */
static inline uint32_t dsig_load_le16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return DSIG_LE16(v);
}

/* Little-endian 32-bit load. */
static inline uint32_t dsig_load_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return DSIG_LE32(v);
}

/* Little-endian 64-bit load. */
static inline uint64_t dsig_load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return DSIG_LE64(v);
}

#endif
