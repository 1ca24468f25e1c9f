/*
 * src/pq/falcon/falcon_codec.c — Falcon integer side: encodings, hash-to-point, NTT mod q = 12289 and
 * the verification equation (Falcon round-3 specification §3.7, §3.10, §3.11).
 *
 * Everything here is exact integer arithmetic, so any correct implementation verifies the same
 * signatures; only the byte formats must match the specification bit for bit.
 */
#include <pthread.h>
#include <string.h>

#include "core/ct.h"
#include "core/internal.h"
#include "pq/falcon/falcon.h"

/* @spec Table 3.3: ⌊β²⌋ for n = 512 and n = 1024. */
uint32_t falcon_l2bound(unsigned logn)
{
    return logn == 9 ? 34034726u : 70265242u;
}

/* Number of bits per coefficient of f and g in the private key (spec §3.11.5). */
static unsigned fg_bits(unsigned logn)
{
    return logn == 9 ? 6u : 5u;
}

/* ---- mod q helpers ------------------------------------------------------------------------ */

/* a·b mod q for a, b < q (the compiler turns the constant modulus into a multiply). */
static inline uint32_t mq_mul(uint32_t a, uint32_t b)
{
    return (a * b) % FALCON_Q;
}

/* a + b mod q. */
static inline uint32_t mq_add(uint32_t a, uint32_t b)
{
    uint32_t r = a + b;
    r -= FALCON_Q & -(uint32_t)(r >= FALCON_Q);
    return r;
}

/* a − b mod q. */
static inline uint32_t mq_sub(uint32_t a, uint32_t b)
{
    uint32_t r = a + FALCON_Q - b;
    r -= FALCON_Q & -(uint32_t)(r >= FALCON_Q);
    return r;
}

/* a^e mod q (square and multiply; e is public). */
static uint32_t mq_pow(uint32_t a, uint32_t e)
{
    uint32_t r = 1;
    while (e) {
        if (e & 1)
            r = mq_mul(r, a);
        a = mq_mul(a, a);
        e >>= 1;
    }
    return r;
}

/* Signed small integer to Z_q. */
static inline uint32_t mq_from_int(int32_t x)
{
    int32_t r = x % (int32_t)FALCON_Q;
    r += (int32_t)FALCON_Q & -(int32_t)(r < 0);
    return (uint32_t)r;
}

/* ---- NTT ------------------------------------------------------------------------------------ */

/* zetas[k] = psi^rev10(k) with psi a primitive 2048-th root of unity mod q; the first n entries are
 * the bit-reversed powers of a primitive 2n-th root for n = 512 as well (rev10(k) = 2·rev9(k)). */
static uint16_t ntt_zetas[1024];
static uint16_t ntt_zetas_inv[1024];
static uint16_t ntt_inv_n[FALCON_MAX_LOGN + 1];
static pthread_once_t ntt_once = PTHREAD_ONCE_INIT;

/* Build the NTT tables once: find a generator of Z_q^* (q − 1 = 2^12·3), take psi of order 2048. */
static void ntt_init(void)
{
    uint32_t g = 2;
    while (mq_pow(g, (FALCON_Q - 1) / 2) == 1 || mq_pow(g, (FALCON_Q - 1) / 3) == 1)
        g++;
    uint32_t psi = mq_pow(g, (FALCON_Q - 1) / 2048);
    for (unsigned k = 0; k < 1024; k++) {
        unsigned r = 0;
        for (unsigned b = 0; b < 10; b++)
            r |= ((k >> b) & 1u) << (9 - b);
        ntt_zetas[k] = (uint16_t)mq_pow(psi, r);
        ntt_zetas_inv[k] = (uint16_t)mq_pow(ntt_zetas[k], FALCON_Q - 2);
    }
    for (unsigned l = 0; l <= FALCON_MAX_LOGN; l++)
        ntt_inv_n[l] = (uint16_t)mq_pow(1u << l, FALCON_Q - 2);
}

/* Forward negacyclic NTT in place (Cooley–Tukey, bit-reversed output). */
void falcon_ntt(uint16_t *a, unsigned logn)
{
    pthread_once(&ntt_once, ntt_init);
    size_t n = (size_t)1 << logn, k = 0;
    for (size_t len = n >> 1; len >= 1; len >>= 1) {
        for (size_t start = 0; start < n; start += 2 * len) {
            uint32_t z = ntt_zetas[++k];
            for (size_t j = start; j < start + len; j++) {
                uint32_t t = mq_mul(z, a[j + len]);
                a[j + len] = (uint16_t)mq_sub(a[j], t);
                a[j] = (uint16_t)mq_add(a[j], t);
            }
        }
    }
}

/* Inverse of falcon_ntt (Gentleman–Sande), including the 1/n factor. */
void falcon_intt(uint16_t *a, unsigned logn)
{
    pthread_once(&ntt_once, ntt_init);
    size_t n = (size_t)1 << logn;
    for (size_t len = 1; len < n; len <<= 1) {
        /* Undo the forward layer of this `len`: it used zetas[n/(2·len) + start/(2·len)]. */
        size_t k = n / (2 * len);
        for (size_t start = 0; start < n; start += 2 * len) {
            uint32_t zi = ntt_zetas_inv[k++];
            for (size_t j = start; j < start + len; j++) {
                uint32_t t = a[j];
                a[j] = (uint16_t)mq_add(t, a[j + len]);
                a[j + len] = (uint16_t)mq_mul(zi, mq_sub(t, a[j + len]));
            }
        }
    }
    uint32_t ni = ntt_inv_n[logn];
    for (size_t j = 0; j < n; j++)
        a[j] = (uint16_t)mq_mul(a[j], ni);
}

/* ---- public key ------------------------------------------------------------------------------ */

/* @spec §3.11.4: 0x00+logn ‖ 14-bit big-endian packing of h. */
void falcon_pk_encode(uint8_t *out, const uint16_t *h, unsigned logn)
{
    size_t n = (size_t)1 << logn, v = 1;
    uint32_t acc = 0;
    unsigned acc_len = 0;
    out[0] = (uint8_t)logn;
    for (size_t u = 0; u < n; u++) {
        acc = (acc << 14) | h[u];
        acc_len += 14;
        while (acc_len >= 8) {
            acc_len -= 8;
            out[v++] = (uint8_t)(acc >> acc_len);
        }
    }
}

/* @spec §3.11.4 decoding: exact length, header, every value < q. */
int falcon_pk_decode(uint16_t *h, const uint8_t *in, size_t len, unsigned logn)
{
    size_t n = (size_t)1 << logn, v = 1;
    if (len != FALCON_PK_LEN(logn))
        return dsig_fail(DSIG_E_KEY, "Falcon public key: %zu bytes, expected %u", len,
                         FALCON_PK_LEN(logn));
    if (in[0] != logn)
        return dsig_fail(DSIG_E_KEY, "Falcon public key: header byte 0x%02x, expected 0x%02x", in[0],
                         logn);
    uint32_t acc = 0;
    unsigned acc_len = 0;
    size_t u = 0;
    while (u < n) {
        acc = (acc << 8) | in[v++];
        acc_len += 8;
        if (acc_len >= 14) {
            acc_len -= 14;
            uint32_t w = (acc >> acc_len) & 0x3FFF;
            if (w >= FALCON_Q)
                return dsig_fail(DSIG_E_KEY, "Falcon public key: coefficient %zu is %u >= q", u, w);
            h[u++] = (uint16_t)w;
        }
    }
    return DSIG_OK;
}

/* ---- private key ----------------------------------------------------------------------------- */

/* Two's-complement packing of n signed values on `bits` bits, big-endian bit order. */
static size_t trim_i8_encode(uint8_t *out, const int8_t *x, size_t n, unsigned bits)
{
    uint32_t acc = 0, mask = (1u << bits) - 1u;
    unsigned acc_len = 0;
    size_t v = 0;
    for (size_t u = 0; u < n; u++) {
        acc = (acc << bits) | ((uint32_t)(uint8_t)x[u] & mask);
        acc_len += bits;
        while (acc_len >= 8) {
            acc_len -= 8;
            out[v++] = (uint8_t)(acc >> acc_len);
        }
    }
    return v;
}

/* Inverse of trim_i8_encode; rejects −2^(bits−1) (spec: that value is never a valid coefficient).
 * Returns bytes consumed or 0. Runs in time independent of the (secret) values. */
static size_t trim_i8_decode(int8_t *x, size_t n, unsigned bits, const uint8_t *in, size_t len)
{
    size_t need = (n * bits + 7) / 8;
    if (len < need)
        return 0;
    uint32_t acc = 0, mask1 = (1u << bits) - 1u, mask2 = 1u << (bits - 1), bad = 0;
    unsigned acc_len = 0;
    size_t u = 0, v = 0;
    while (u < n) {
        acc = (acc << 8) | in[v++];
        acc_len += 8;
        while (acc_len >= bits && u < n) {
            acc_len -= bits;
            uint32_t w = (acc >> acc_len) & mask1;
            bad |= (uint32_t)(w == mask2);
            w |= -(w & mask2);   /* sign-extend */
            x[u++] = (int8_t)(int32_t)w;
        }
    }
    /* n·bits is a multiple of 8 for the parameter sets, so no padding bits remain. Whether the
     * encoding is valid is public (the key is refused either way). */
    DSIG_CT_DECLASSIFY(&bad, sizeof bad);
    return bad ? 0 : v;
}

/* @spec §3.11.5: 0x50+logn ‖ f ‖ g ‖ F. */
void falcon_sk_encode(uint8_t *out, const int8_t *f, const int8_t *g, const int8_t *F, unsigned logn)
{
    size_t n = (size_t)1 << logn, v = 1;
    out[0] = (uint8_t)(0x50 + logn);
    v += trim_i8_encode(out + v, f, n, fg_bits(logn));
    v += trim_i8_encode(out + v, g, n, fg_bits(logn));
    trim_i8_encode(out + v, F, n, 8);
}

/* @spec §3.11.5 decoding: exact length and header, no forbidden value. */
int falcon_sk_decode(int8_t *f, int8_t *g, int8_t *F, const uint8_t *in, size_t len, unsigned logn)
{
    size_t n = (size_t)1 << logn, v = 1, k;
    if (len != FALCON_SK_LEN(logn))
        return dsig_fail(DSIG_E_KEY, "Falcon private key: %zu bytes, expected %u", len,
                         FALCON_SK_LEN(logn));
    if (in[0] != 0x50 + logn)
        return dsig_fail(DSIG_E_KEY, "Falcon private key: header byte 0x%02x, expected 0x%02x",
                         in[0], 0x50 + logn);
    if ((k = trim_i8_decode(f, n, fg_bits(logn), in + v, len - v)) == 0)
        return dsig_fail(DSIG_E_KEY, "Falcon private key: invalid f encoding");
    v += k;
    if ((k = trim_i8_decode(g, n, fg_bits(logn), in + v, len - v)) == 0)
        return dsig_fail(DSIG_E_KEY, "Falcon private key: invalid g encoding");
    v += k;
    if ((k = trim_i8_decode(F, n, 8, in + v, len - v)) == 0)
        return dsig_fail(DSIG_E_KEY, "Falcon private key: invalid F encoding");
    return DSIG_OK;
}

/* ---- compressed signature -------------------------------------------------------------------- */

/* @spec §3.11.2 Compress: per coefficient, sign bit, 7 low bits of |s|, then (|s| >> 7) zeros and
 * a one; the last byte is zero-padded. */
size_t falcon_comp_encode(uint8_t *out, size_t cap, const int16_t *s, unsigned logn)
{
    size_t n = (size_t)1 << logn, v = 0;
    uint32_t acc = 0;
    unsigned acc_len = 0;
    for (size_t u = 0; u < n; u++)
        if (s[u] < -2047 || s[u] > 2047)
            return 0;
    for (size_t u = 0; u < n; u++) {
        int t = s[u];
        uint32_t neg = (uint32_t)(t < 0);
        uint32_t w = (uint32_t)(t < 0 ? -t : t);
        acc = (acc << 8) | (neg << 7) | (w & 127u);
        acc_len += 8;
        w >>= 7;
        /* At most 15 + 1 bits: with the ≤ 7 carried bits and the 8 above, fits in 32 bits. */
        acc = (acc << (w + 1)) | 1u;
        acc_len += w + 1;
        while (acc_len >= 8) {
            acc_len -= 8;
            if (v >= cap)
                return 0;
            out[v++] = (uint8_t)(acc >> acc_len);
        }
    }
    if (acc_len > 0) {
        if (v >= cap)
            return 0;
        out[v++] = (uint8_t)(acc << (8 - acc_len));
    }
    return v;
}

/* @spec §3.11.2 Decompress, strict: rejects "-0", |s| > 2047, running out of input and non-zero
 * padding bits. Returns bytes consumed or 0. */
size_t falcon_comp_decode(int16_t *s, unsigned logn, const uint8_t *in, size_t len)
{
    size_t n = (size_t)1 << logn, v = 0;
    uint32_t acc = 0;
    unsigned acc_len = 0;
    for (size_t u = 0; u < n; u++) {
        if (v >= len)
            return 0;
        acc = (acc << 8) | in[v++];
        uint32_t b = acc >> acc_len;
        uint32_t sgn = b & 128u, m = b & 127u;
        for (;;) {
            if (acc_len == 0) {
                if (v >= len)
                    return 0;
                acc = (acc << 8) | in[v++];
                acc_len = 8;
            }
            acc_len--;
            if ((acc >> acc_len) & 1u)
                break;
            m += 128;
            if (m > 2047)
                return 0;
        }
        if (sgn && m == 0)
            return 0;
        s[u] = (int16_t)(sgn ? -(int)m : (int)m);
    }
    if ((acc & ((1u << acc_len) - 1u)) != 0)
        return 0;
    return v;
}

/* ---- hash to point ---------------------------------------------------------------------------- */

/* @spec §3.7 Algorithm 3 HashToPoint (the salt and message were absorbed and the sponge finalized). */
void falcon_hash_to_point(dsig_keccak *xof, uint16_t *c, unsigned logn)
{
    size_t n = (size_t)1 << logn, u = 0;
    uint8_t buf[DSIG_SHAKE256_RATE];
    size_t pos = sizeof buf, have = sizeof buf;
    while (u < n) {
        if (pos + 2 > have) {
            /* A block is 136 bytes = 68 words: words never straddle blocks. */
            dsig_keccak_squeeze(xof, buf, sizeof buf);
            pos = 0;
        }
        uint32_t w = ((uint32_t)buf[pos] << 8) | buf[pos + 1];
        pos += 2;
        if (w < 5u * FALCON_Q)
            c[u++] = (uint16_t)(w % FALCON_Q);
    }
}

/* ---- verification ------------------------------------------------------------------------------- */

/* @spec §3.10 Algorithm 16 steps 3–6: s1 = c − s2·h mod q (centered), accept iff ‖(s1, s2)‖² ≤ ⌊β²⌋. */
int falcon_verify_core(const uint16_t *h_ntt, const uint16_t *c, const int16_t *s2, unsigned logn)
{
    size_t n = (size_t)1 << logn;
    uint16_t t[FALCON_MAX_N];
    for (size_t u = 0; u < n; u++)
        t[u] = (uint16_t)mq_from_int(s2[u]);
    falcon_ntt(t, logn);
    for (size_t u = 0; u < n; u++)
        t[u] = (uint16_t)mq_mul(t[u], h_ntt[u]);
    falcon_intt(t, logn);
    uint64_t norm = 0;
    for (size_t u = 0; u < n; u++) {
        int32_t s1 = (int32_t)mq_sub(c[u], t[u]);
        s1 -= (int32_t)FALCON_Q & -(int32_t)(s1 > (int32_t)(FALCON_Q / 2));
        norm += (uint64_t)((int64_t)s1 * s1);
        norm += (uint64_t)((int32_t)s2[u] * s2[u]);
    }
    return norm <= falcon_l2bound(logn);
}

/* ---- key completion ------------------------------------------------------------------------------ */

/* Load a small polynomial into NTT form. */
static void small_to_ntt(uint16_t *out, const int8_t *a, unsigned logn)
{
    size_t n = (size_t)1 << logn;
    for (size_t u = 0; u < n; u++)
        out[u] = (uint16_t)mq_from_int(a[u]);
    falcon_ntt(out, logn);
}

/* Multiply num by the inverse of den (both in NTT form), in place in num; DSIG_E_KEY if den has a
 * zero NTT coefficient (not invertible). Fermat inversion per coefficient: constant time. */
static int ntt_div(uint16_t *num, const uint16_t *den, unsigned logn)
{
    size_t n = (size_t)1 << logn;
    uint32_t zero = 0;
    for (size_t u = 0; u < n; u++) {
        zero |= (uint32_t)(den[u] == 0);
        num[u] = (uint16_t)mq_mul(num[u], mq_pow(den[u], FALCON_Q - 2));
    }
    DSIG_CT_DECLASSIFY(&zero, sizeof zero); /* invertibility: key validity, public */
    return zero ? DSIG_E_KEY : DSIG_OK;
}

/* @spec §3.8.2 (the NTRU equation): OR of the coefficients of f·G − g·F − q over Z[x]/(x^n + 1),
 * computed exactly (schoolbook). Zero iff the equation holds. G = gF/f mod q only proves it mod q:
 * a crafted key with f·G − g·F = k·q, k ≠ 1 (e.g. F = G = 0), passes that and the h = g/f check,
 * and its singular or index-k basis makes signing loop forever. Fixed loops, no data-dependent
 * branch; |coefficient| ≤ n·2·31·127 < 2^23, so int32 is exact. */
static uint32_t ntru_equation_residue(const int8_t *f, const int8_t *g, const int8_t *F,
                                      const int8_t *G, unsigned logn)
{
    size_t n = (size_t)1 << logn;
    uint32_t bad = 0;
    for (size_t k = 0; k < n; k++) {
        int32_t acc = 0;
        for (size_t i = 0; i <= k; i++)
            acc += (int32_t)f[i] * G[k - i] - (int32_t)g[i] * F[k - i];
        /* x^n = −1: the wrapped terms change sign. */
        for (size_t i = k + 1; i < n; i++)
            acc -= (int32_t)f[i] * G[n + k - i] - (int32_t)g[i] * F[n + k - i];
        if (k == 0) /* k is public */
            acc -= (int32_t)FALCON_Q;
        bad |= (uint32_t)acc;
    }
    return bad;
}

/* G = g·F/f mod q, centered into (−q/2, q/2]; must fit in int8 and satisfy f·G − g·F = q exactly
 * (spec §3.8.2 key validity). */
int falcon_complete_private(int8_t *G, const int8_t *f, const int8_t *g, const int8_t *F,
                            unsigned logn)
{
    size_t n = (size_t)1 << logn;
    uint16_t a[FALCON_MAX_N], b[FALCON_MAX_N];
    small_to_ntt(a, g, logn);
    small_to_ntt(b, F, logn);
    for (size_t u = 0; u < n; u++)
        a[u] = (uint16_t)mq_mul(a[u], b[u]);
    small_to_ntt(b, f, logn);
    int rc = ntt_div(a, b, logn);
    uint32_t bad = 0;
    if (rc == DSIG_OK) {
        falcon_intt(a, logn);
        for (size_t u = 0; u < n; u++) {
            int32_t w = a[u];
            w -= (int32_t)FALCON_Q & -(int32_t)(w > (int32_t)(FALCON_Q / 2));
            bad |= (uint32_t)(w < -127) | (uint32_t)(w > 127);
            G[u] = (int8_t)w;
        }
        bad |= ntru_equation_residue(f, g, F, G, logn);
    }
    dsig_memzero(a, sizeof a);
    dsig_memzero(b, sizeof b);
    /* Key validity is public: an invalid key is refused. */
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    DSIG_CT_DECLASSIFY(&bad, sizeof bad);
    if (rc != DSIG_OK)
        return dsig_fail(DSIG_E_KEY, "Falcon private key: f is not invertible mod q");
    if (bad)
        return dsig_fail(DSIG_E_KEY, "Falcon private key: G = gF/f mod q is out of range or "
                                     "f*G - g*F != q (not an NTRU basis)");
    return DSIG_OK;
}

/* h = g/f mod q. */
int falcon_compute_public(uint16_t *h, const int8_t *f, const int8_t *g, unsigned logn)
{
    uint16_t b[FALCON_MAX_N];
    small_to_ntt(h, g, logn);
    small_to_ntt(b, f, logn);
    int rc = ntt_div(h, b, logn);
    dsig_memzero(b, sizeof b);
    if (rc != DSIG_OK)
        return dsig_fail(DSIG_E_KEY, "Falcon private key: f is not invertible mod q");
    falcon_intt(h, logn);
    return DSIG_OK;
}
