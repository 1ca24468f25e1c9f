/*
 * src/hash/blake3_x8.h — the 8-way BLAKE3 kernel body (one ymm register per state or message word of 8
 * inputs), instantiated twice: by blake3_avx2.c with AVX2 rotations (byte shuffles, shift pairs) and by
 * blake3_avx512.c with AVX-512VL vprord (one instruction per rotation), so each back-end's 8-way path is
 * the same code. The including file defines, before including it:
 *   B3_X8            the target attribute of the functions
 *   X8(name)         the prefixed name of each function (avx2_rounds, vl8_rounds, ...)
 *   rot16, rot12, rot8, rot7   static inline __m256i (__m256i) right rotations of each 32-bit lane
 * and includes immintrin.h, core/avx2_util.h and hash/blake3_impl.h.
 */
/* @spec BLAKE3 spec §2.2: G on 8 inputs at once (message word added before b, as in the SSE4.1 G4). */
#define B3_G8(a, b, c, d, x, y)                                                                                 \
    do {                                                                                                     \
        a = _mm256_add_epi32(_mm256_add_epi32(a, x), b);                                                     \
        d = rot16(_mm256_xor_si256(d, a));                                                                   \
        c = _mm256_add_epi32(c, d);                                                                          \
        b = rot12(_mm256_xor_si256(b, c));                                                                   \
        a = _mm256_add_epi32(_mm256_add_epi32(a, y), b);                                                     \
        d = rot8(_mm256_xor_si256(d, a));                                                                    \
        c = _mm256_add_epi32(c, d);                                                                          \
        b = rot7(_mm256_xor_si256(b, c));                                                                    \
    } while (0)

/* @spec BLAKE3 spec §2.2: the 7 rounds on 8 states at once; m[w] is message word w of every lane. */
B3_X8 __attribute__((always_inline)) static inline void X8(rounds)(__m256i v[16], const __m256i m[16])
{
#pragma GCC unroll 7
    for (int k = 0; k < 7; k++) {
        const uint8_t *s = dsig_b3_sched[k];
        B3_G8(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
        B3_G8(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
        B3_G8(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
        B3_G8(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
        B3_G8(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
        B3_G8(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
        B3_G8(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
        B3_G8(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
    }
}

/* Lane counters: lane i uses counter + i when inc, else counter (low and high words). */
B3_X8 static inline void X8(counters)(uint64_t counter, int inc, __m256i *lo, __m256i *hi)
{
    uint32_t l[8], h[8];
    for (int i = 0; i < 8; i++) {
        uint64_t c = counter + (inc ? (uint64_t)i : 0);
        l[i] = (uint32_t)c;
        h[i] = (uint32_t)(c >> 32);
    }
    *lo = _mm256_loadu_si256((const __m256i *)l);
    *hi = _mm256_loadu_si256((const __m256i *)h);
}

/* @spec BLAKE3 spec §2.2: 8 inputs in parallel (lane i = input i), `blocks` blocks each; block j of lane i
 * is at in[i] + 64*j except the last, which is at last[i] (if last) and is last_len bytes long. */
B3_X8 static void X8(hash8)(const uint8_t *const in[8], const uint8_t *const last[8], size_t blocks,
                               uint8_t last_len, const uint32_t key[8], uint64_t counter, int inc_counter,
                               uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t *out)
{
    __m256i h[8];
    for (int i = 0; i < 8; i++)
        h[i] = _mm256_set1_epi32((int)key[i]);
    __m256i clo, chi;
    X8(counters)(counter, inc_counter, &clo, &chi);
    for (size_t j = 0; j < blocks; j++) {
        uint8_t f = flags;
        uint32_t bl = 64;
        if (j == 0)
            f |= flags_start;
        int is_last = j + 1 == blocks;
        if (is_last) {
            f |= flags_end;
            bl = last_len;
        }
        __m256i m[16];
        for (int i = 0; i < 8; i++) {
            const uint8_t *p = is_last && last ? last[i] : in[i] + 64 * j;
            m[i] = _mm256_loadu_si256((const __m256i *)p);
            m[8 + i] = _mm256_loadu_si256((const __m256i *)(p + 32));
        }
        dsig_avx2_transpose8x32(m);
        dsig_avx2_transpose8x32(m + 8);
        __m256i v[16];
        for (int i = 0; i < 8; i++)
            v[i] = h[i];
        for (int i = 0; i < 4; i++)
            v[8 + i] = _mm256_set1_epi32((int)dsig_b3_iv[i]);
        v[12] = clo;
        v[13] = chi;
        v[14] = _mm256_set1_epi32((int)bl);
        v[15] = _mm256_set1_epi32(f);
        X8(rounds)(v, m);
        for (int i = 0; i < 8; i++)
            h[i] = _mm256_xor_si256(v[i], v[i + 8]);
    }
    dsig_avx2_transpose8x32(h);
    for (int i = 0; i < 8; i++)
        _mm256_storeu_si256((__m256i *)(out + 32 * i), h[i]);
}
#undef B3_G8
