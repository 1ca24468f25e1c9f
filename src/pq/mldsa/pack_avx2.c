/*
 * src/pq/mldsa/pack_avx2.c — AVX2 back-end of ML-DSA's bit packing (FIPS 204 Algorithms 16–19; contract
 * of kernels.h's pack / unpack): 8 coefficients of `bits` bits ↔ `bits` bytes per step, for the widths
 * FIPS 204 uses (3, 4, 6, 10, 13, 18, 20); any other width goes to the portable code.
 *
 * Coefficient i of a group starts at bit i·bits: byte o_i = ⌊i·bits / 8⌋, shift s_i = i·bits mod 8.
 * Unpack: each 128-bit half loads the 16 bytes from its first coefficient's byte (o_0 = 0, o_4), a byte
 * shuffle gives every 32-bit lane the 4 bytes from o_i, a variable shift by s_i and a mask finish it.
 * Pack runs the other way: pairs of lanes are merged into 64-bit lanes (2·bits ≤ 40 bits), each shifted
 * to its bit position, the odd 64-bit lane of each half is moved by a byte shuffle next to the even one,
 * and the high half joins the low one at its byte offset o_4. Groups whose loads or stores would
 * reach past the polynomial's encoding go through a small local buffer instead.
 *
 * Constant time: the shuffles and shifts depend only on `bits`, never on coefficient values.
 */
#include "pq/mldsa/kernels.h"

#ifdef DSIG_MLDSA_HAVE_AVX2

#include <immintrin.h>
#include <string.h>

#include "dsig/mem.h"

#define MLDSA_AVX2 __attribute__((target("avx2")))

/* Byte j of lane i (unpack): o_i + j, relative to the half's first byte (o_4 for lanes 4..7). */
#define UB(b, i, j) (((i) * (b)) / 8 + (j) - ((i) >= 4 ? (4 * (b)) / 8 : 0))
#define UL(b, i) UB(b, i, 0), UB(b, i, 1), UB(b, i, 2), UB(b, i, 3)
/* Pack: byte k of a half takes byte 8 + k − d of the half (the odd 64-bit lane), d its byte offset
 * relative to the even lane: ⌊2·bits / 8⌋ (low half) or ⌊6·bits / 8⌋ − ⌊4·bits / 8⌋ (high half). */
#define PB(d, k) ((k) >= (d) && (k) < (d) + 6 ? 8 + (k) - (d) : 0x80)
#define PH(d)                                                                                       \
    PB(d, 0), PB(d, 1), PB(d, 2), PB(d, 3), PB(d, 4), PB(d, 5), PB(d, 6), PB(d, 7), PB(d, 8), PB(d, 9), \
        PB(d, 10), PB(d, 11), PB(d, 12), PB(d, 13), PB(d, 14), PB(d, 15)

/* Pack, widths ≤ 16: byte i of the group takes byte i − o4 of the high half (a byte shift by o4). */
#define CB(o, i) ((i) >= (o) ? (i) - (o) : 0x80)
#define CH(o)                                                                                       \
    CB(o, 0), CB(o, 1), CB(o, 2), CB(o, 3), CB(o, 4), CB(o, 5), CB(o, 6), CB(o, 7), CB(o, 8), CB(o, 9), \
        CB(o, 10), CB(o, 11), CB(o, 12), CB(o, 13), CB(o, 14), CB(o, 15)

/* The constants of one width. */
typedef struct pack_ctl {
    uint8_t ushuf[32];  /* unpack: byte shuffle */
    int32_t ushift[8];  /* unpack: s_i */
    uint8_t pshuf[32];  /* pack: odd 64-bit lane next to the even one */
    int64_t pshift[4];  /* pack: bit shift of 64-bit lane k = (2·k·bits) mod 8 */
    uint8_t pcomb[16];  /* pack, widths ≤ 16: the high half moved to byte o4 */
} __attribute__((aligned(32))) pack_ctl;

#define CTL(b)                                                                                       \
    {                                                                                                \
        {UL(b, 0), UL(b, 1), UL(b, 2), UL(b, 3), UL(b, 4), UL(b, 5), UL(b, 6), UL(b, 7)},            \
        {0, (b) % 8, (2 * (b)) % 8, (3 * (b)) % 8, (4 * (b)) % 8, (5 * (b)) % 8, (6 * (b)) % 8,      \
         (7 * (b)) % 8},                                                                             \
        {PH((2 * (b)) / 8), PH((6 * (b)) / 8 - (4 * (b)) / 8)},                                      \
        {0, (2 * (b)) % 8, (4 * (b)) % 8, (6 * (b)) % 8},                                            \
        {CH((4 * (b)) / 8)},                                                                         \
    }

static const pack_ctl ctl3 = CTL(3), ctl4 = CTL(4), ctl6 = CTL(6), ctl10 = CTL(10), ctl13 = CTL(13),
                      ctl18 = CTL(18), ctl20 = CTL(20);

/* The constants for `bits`, or NULL for a width this back-end leaves to the portable code. */
static const pack_ctl *ctl_of(unsigned bits)
{
    switch (bits) {
    case 3: return &ctl3;
    case 4: return &ctl4;
    case 6: return &ctl6;
    case 10: return &ctl10;
    case 13: return &ctl13;
    case 18: return &ctl18;
    case 20: return &ctl20;
    default: return NULL;
    }
}

/* Groups (of 8 coefficients) at the end whose 16-byte accesses at offset o_4 would pass the end of
 * the 32·bits bytes of one polynomial: they are staged through a local buffer. */
static unsigned tail_groups(unsigned bits)
{
    unsigned reach = (4 * bits) / 8 + 16; /* bytes touched from a group's first byte */
    return (reach + bits - 1) / bits;
}

/* What one call needs besides the width's shuffles: the field mask, the map between fields and
 * coefficients (field = b + sign·a_i, sign ±1 applied as a conditional negation), the high half's byte
 * offset o4 and the number of groups handled in place before the tail buffer. */
typedef struct pack_args {
    __m256i mask, b, neg;
    unsigned o4, direct;
} pack_args;

MLDSA_AVX2 static inline pack_args args_of(unsigned bits, int32_t b, int32_t sign)
{
    pack_args p;
    p.mask = _mm256_set1_epi32((int32_t)((1u << bits) - 1));
    p.b = _mm256_set1_epi32(b);
    p.neg = _mm256_set1_epi32(sign < 0 ? -1 : 0);
    p.o4 = (4 * bits) / 8;
    p.direct = 32 - tail_groups(bits);
    return p;
}

/* sign·v for the pack_args' sign. */
MLDSA_AVX2 static inline __m256i signed_by(const pack_args *p, __m256i v)
{
    return _mm256_sub_epi32(_mm256_xor_si256(v, p->neg), p->neg);
}

/* Unpack one group from in (at least (4·bits)/8 + 16 readable bytes). */
MLDSA_AVX2 static inline __m256i unpack8(const uint8_t *in, unsigned o4, __m256i shuf, __m256i shift,
                                         __m256i mask)
{
    __m256i v = _mm256_loadu2_m128i((const __m128i *)(in + o4), (const __m128i *)in);
    return _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(v, shuf), shift), mask);
}

/* The 32 groups of one polynomial, a width this back-end handles. */
MLDSA_AVX2 static void unpack_poly(mldsa_poly *a, const uint8_t *in, const pack_ctl *c, int32_t b, int32_t sign,
                                   unsigned bits)
{
    const __m256i shuf = _mm256_load_si256((const __m256i *)c->ushuf);
    const __m256i shift = _mm256_load_si256((const __m256i *)c->ushift);
    const pack_args p = args_of(bits, b, sign);
    uint8_t tail[64] = {0};
    memcpy(tail, in + p.direct * bits, (32 - p.direct) * bits);
    for (unsigned g = 0; g < 32; g++) {
        const uint8_t *src = g < p.direct ? in + g * bits : tail + (g - p.direct) * bits;
        __m256i v = signed_by(&p, unpack8(src, p.o4, shuf, shift, p.mask));
        _mm256_store_si256((__m256i *)&a->c[8 * g], _mm256_add_epi32(p.b, v));
    }
    dsig_memzero(tail, sizeof tail); /* secret key material passes through here */
}

/* @spec FIPS 204 Algorithms 18/19 (SimpleBitUnpack, BitUnpack): a_i = b + sign·(field i). */
MLDSA_AVX2 void dsig_mldsa_unpack_avx2(mldsa_poly *a, const uint8_t *in, int32_t b, int32_t sign, unsigned bits)
{
    const pack_ctl *c = ctl_of(bits); /* NULL: a width left to the portable code */
    c ? unpack_poly(a, in, c, b, sign, bits) : dsig_mldsa_unpack_c(a, in, b, sign, bits);
}

/* Pack one group v (fields already masked) to out, which needs 16 writable bytes (o4 + 16 for widths
 * above 16); bytes past the group's `bits` receive zeros, and the next group's stores overwrite them.
 * The halves meet at byte o4 (shared by both for odd widths): up to 16 bits they are merged in a
 * register, above (18, 20: even, nothing shared) the high half is stored on its own at out + o4. */
MLDSA_AVX2 static inline void pack8(uint8_t *out, __m256i v, unsigned o4, unsigned bits, __m256i shuf,
                                    __m256i shift, __m128i comb)
{
    const __m256i lo32 = _mm256_set1_epi64x(0xFFFFFFFF);
    /* 64-bit lane k: fields 2k and 2k+1 side by side, then moved to bit (2·k·bits) mod 8 */
    __m256i x = _mm256_or_si256(_mm256_and_si256(v, lo32),
                                _mm256_sll_epi64(_mm256_srli_epi64(v, 32), _mm_cvtsi32_si128((int)bits)));
    x = _mm256_sllv_epi64(x, shift);
    __m256i even = _mm256_and_si256(x, _mm256_setr_epi64x(-1, 0, -1, 0));
    __m256i r = _mm256_or_si256(even, _mm256_shuffle_epi8(x, shuf));
    __m128i lo = _mm256_castsi256_si128(r), hi = _mm256_extracti128_si256(r, 1);
    if (bits <= 16) {
        _mm_storeu_si128((__m128i *)out, _mm_or_si128(lo, _mm_shuffle_epi8(hi, comb)));
    } else {
        _mm_storeu_si128((__m128i *)out, lo);
        _mm_storeu_si128((__m128i *)(out + o4), hi);
    }
}

/* The 32 groups of one polynomial, a width this back-end handles. */
MLDSA_AVX2 static void pack_poly(uint8_t *out, const mldsa_poly *a, const pack_ctl *c, int32_t b, int32_t sign,
                                 unsigned bits)
{
    const __m256i shuf = _mm256_load_si256((const __m256i *)c->pshuf);
    const __m256i shift = _mm256_load_si256((const __m256i *)c->pshift);
    const __m128i comb = _mm_load_si128((const __m128i *)c->pcomb);
    const pack_args p = args_of(bits, b, sign);
    uint8_t tail[64] = {0};
    for (unsigned g = 0; g < 32; g++) {
        __m256i v = signed_by(&p, _mm256_load_si256((const __m256i *)&a->c[8 * g]));
        v = _mm256_and_si256(_mm256_add_epi32(p.b, v), p.mask);
        pack8(g < p.direct ? out + g * bits : tail + (g - p.direct) * bits, v, p.o4, bits, shuf, shift, comb);
    }
    memcpy(out + p.direct * bits, tail, (32 - p.direct) * bits);
    dsig_memzero(tail, sizeof tail); /* secret key material passes through here */
}

/* @spec FIPS 204 Algorithms 16/17 (SimpleBitPack, BitPack): field i = (b + sign·a_i) mod 2^bits. */
MLDSA_AVX2 void dsig_mldsa_pack_avx2(uint8_t *out, const mldsa_poly *a, int32_t b, int32_t sign, unsigned bits)
{
    const pack_ctl *c = ctl_of(bits); /* NULL: a width left to the portable code */
    c ? pack_poly(out, a, c, b, sign, bits) : dsig_mldsa_pack_c(out, a, b, sign, bits);
}

#endif /* DSIG_MLDSA_HAVE_AVX2 */
