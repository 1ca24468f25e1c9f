/*
 * src/hash/keccak_impl.h — private to src/hash/keccak*.c, the Keccak tests and bench: the round
 * constants, one unrolled Keccak-f[1600] round written once over abstract lane operations (so the
 * portable 64-bit and the 4-way AVX2 back-ends share the same, checked, data flow), and the per-back-end
 * entry points so tests can prove each back-end whatever the dispatcher picks on this CPU.
 */
#ifndef DSIG_HASH_KECCAK_IMPL_H
#define DSIG_HASH_KECCAK_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* @spec FIPS 202 §3.2.5 ι: the 24 round constants RC[i_r]. */
extern const uint64_t dsig_keccak_rc[24];

/* Portable 64-bit C (any CPU): one state, four and eight interleaved states (dsig_keccak_x4, _x8). */
void dsig_keccak_f1600_portable(uint64_t s[25]);
void dsig_keccak_f1600_x4_portable(uint64_t s[100]);
void dsig_keccak_f1600_x8_portable(uint64_t s[200]);

#if defined(__x86_64__) || defined(__i386__)
#define DSIG_KECCAK_X86 1
/* 4-way AVX2 (keccak_avx2.c): needs DSIG_CPU_AVX2 in dsig_cpu_features(). */
void dsig_keccak_f1600_x4_avx2(uint64_t s[100]);
/* 4-way AVX-512VL on 256-bit registers, and one state on 128-bit ones (keccak_avx512.c): need
 * DSIG_CPU_AVX512. */
void dsig_keccak_f1600_x4_avx512(uint64_t s[100]);
void dsig_keccak_f1600_avx512(uint64_t s[25]);
/* 8-way AVX-512 on 512-bit registers (keccak_avx512.c, dsig_keccak_x8 layout): needs DSIG_CPU_AVX512. */
void dsig_keccak_f1600_x8_avx512(uint64_t s[200]);
#endif

/* One back-end of the x4 permutation, defined next to its code and listed in order of preference in
 * keccak_dispatch.c; it declines when the CPU lacks a feature in `needs`. It may also bring a
 * single-state permutation (f1600; NULL: the portable one, as for AVX2, whose 256-bit lanes gain
 * nothing on one state without AVX-512's rotate and three-input logic) and an 8-way one (f1600_x8). */
typedef struct dsig_keccak_x4_backend {
    const char *name;
    unsigned needs; /* DSIG_CPU_* bits, all required */
    unsigned lanes; /* states permuted side by side: 4 (AVX2) or 1 (portable, one after another) */
    void (*f1600_x4)(uint64_t s[100]);
    void (*f1600)(uint64_t s[25]); /* one state, or NULL */
    void (*f1600_x8)(uint64_t s[200]); /* eight states side by side, or NULL (portable, one by one) */
} dsig_keccak_x4_backend;

extern const dsig_keccak_x4_backend dsig_keccak_x4_portable_backend;
#ifdef DSIG_KECCAK_X86
extern const dsig_keccak_x4_backend dsig_keccak_x4_avx512_backend;
extern const dsig_keccak_x4_backend dsig_keccak_x4_avx2_backend;
#endif
/* The dispatcher's list, in order of preference (portable last): *n entries. */
const dsig_keccak_x4_backend *const *dsig_keccak_backends(size_t *n);
/* The x4 back-end chosen for this process (never NULL; chosen once, thread-safe). Inline: one acquire
 * load on the fast path; the slot is keccak_dispatch.c's, only it writes it. */
extern const void *dsig_keccak_x4_slot;
const dsig_keccak_x4_backend *dsig_keccak_x4_resolve(void);
static inline const dsig_keccak_x4_backend *dsig_keccak_x4_get(void)
{
    const void *v = __atomic_load_n(&dsig_keccak_x4_slot, __ATOMIC_ACQUIRE);
    if (__builtin_expect(v != NULL, 1))
        return (const dsig_keccak_x4_backend *)v;
    return dsig_keccak_x4_resolve();
}

/*
 * Visit the 25 lanes: M(y, x, index) with index = x + 5y (FIPS 202 §3.1.4 order). Used to load and
 * store the named lane variables a<y><x>.
 */
#define DSIG_KECCAK_LANES(M)                                                                          \
    M(0, 0, 0) M(0, 1, 1) M(0, 2, 2) M(0, 3, 3) M(0, 4, 4) M(1, 0, 5) M(1, 1, 6) M(1, 2, 7) M(1, 3, 8) \
    M(1, 4, 9) M(2, 0, 10) M(2, 1, 11) M(2, 2, 12) M(2, 3, 13) M(2, 4, 14) M(3, 0, 15) M(3, 1, 16)     \
    M(3, 2, 17) M(3, 3, 18) M(3, 4, 19) M(4, 0, 20) M(4, 1, 21) M(4, 2, 22) M(4, 3, 23) M(4, 4, 24)

/*
 * @spec FIPS 202 §3.2.1-§3.2.5: one round Rnd(A, i_r) = ι(χ(π(ρ(θ(A))))), reading lanes A<y><x> and
 * writing lanes E<y><x> (so two calls with A and E swapped make a loop body with no copies).
 * ρ and π are folded: output row Y takes B[X] = rot(A[x'][X] ^ D[x'], r[x'][X]) with x' = X + 3Y mod 5,
 * the inverse of π's (x, y) -> (y, 2x + 3y); the rotation counts are the constants of Table 2, so no
 * table lookups or variable shifts remain. The caller declares the lanes and c0..c4, d0..d4, b0..b4 of
 * its lane type and defines KXOR(a, b), KPAR(a, b, c, d, e) = a ^ b ^ c ^ d ^ e (θ's column parity),
 * KCHI(a, b, c) = a ^ (~b & c) (χ), KROL(x, n) (n constant, 1..63) and KRC(i) (round constant i as a
 * lane): KPAR and KCHI are single operations so that three-input instructions (AVX-512 vpternlogq)
 * can implement them as one. Machine-generated from the table in FIPS 202 and then checked
 * against the FIPS 202 answers and OpenSSL (tests/hash/test_keccak.c).
 */
#define DSIG_KECCAK_ROUND(A, E, rc)                             \
    c0 = KPAR(A##00, A##10, A##20, A##30, A##40);               \
    c1 = KPAR(A##01, A##11, A##21, A##31, A##41);               \
    c2 = KPAR(A##02, A##12, A##22, A##32, A##42);               \
    c3 = KPAR(A##03, A##13, A##23, A##33, A##43);               \
    c4 = KPAR(A##04, A##14, A##24, A##34, A##44);               \
    d0 = KXOR(c4, KROL(c1, 1));                                 \
    d1 = KXOR(c0, KROL(c2, 1));                                 \
    d2 = KXOR(c1, KROL(c3, 1));                                 \
    d3 = KXOR(c2, KROL(c4, 1));                                 \
    d4 = KXOR(c3, KROL(c0, 1));                                 \
    b0 = KXOR(A##00, d0);                                       \
    b1 = KROL(KXOR(A##11, d1), 44);                             \
    b2 = KROL(KXOR(A##22, d2), 43);                             \
    b3 = KROL(KXOR(A##33, d3), 21);                             \
    b4 = KROL(KXOR(A##44, d4), 14);                             \
    E##00 = KXOR(KCHI(b0, b1, b2), KRC(rc));                    \
    E##01 = KCHI(b1, b2, b3);                                   \
    E##02 = KCHI(b2, b3, b4);                                   \
    E##03 = KCHI(b3, b4, b0);                                   \
    E##04 = KCHI(b4, b0, b1);                                   \
    b0 = KROL(KXOR(A##03, d3), 28);                             \
    b1 = KROL(KXOR(A##14, d4), 20);                             \
    b2 = KROL(KXOR(A##20, d0), 3);                              \
    b3 = KROL(KXOR(A##31, d1), 45);                             \
    b4 = KROL(KXOR(A##42, d2), 61);                             \
    E##10 = KCHI(b0, b1, b2);                                   \
    E##11 = KCHI(b1, b2, b3);                                   \
    E##12 = KCHI(b2, b3, b4);                                   \
    E##13 = KCHI(b3, b4, b0);                                   \
    E##14 = KCHI(b4, b0, b1);                                   \
    b0 = KROL(KXOR(A##01, d1), 1);                              \
    b1 = KROL(KXOR(A##12, d2), 6);                              \
    b2 = KROL(KXOR(A##23, d3), 25);                             \
    b3 = KROL(KXOR(A##34, d4), 8);                              \
    b4 = KROL(KXOR(A##40, d0), 18);                             \
    E##20 = KCHI(b0, b1, b2);                                   \
    E##21 = KCHI(b1, b2, b3);                                   \
    E##22 = KCHI(b2, b3, b4);                                   \
    E##23 = KCHI(b3, b4, b0);                                   \
    E##24 = KCHI(b4, b0, b1);                                   \
    b0 = KROL(KXOR(A##04, d4), 27);                             \
    b1 = KROL(KXOR(A##10, d0), 36);                             \
    b2 = KROL(KXOR(A##21, d1), 10);                             \
    b3 = KROL(KXOR(A##32, d2), 15);                             \
    b4 = KROL(KXOR(A##43, d3), 56);                             \
    E##30 = KCHI(b0, b1, b2);                                   \
    E##31 = KCHI(b1, b2, b3);                                   \
    E##32 = KCHI(b2, b3, b4);                                   \
    E##33 = KCHI(b3, b4, b0);                                   \
    E##34 = KCHI(b4, b0, b1);                                   \
    b0 = KROL(KXOR(A##02, d2), 62);                             \
    b1 = KROL(KXOR(A##13, d3), 55);                             \
    b2 = KROL(KXOR(A##24, d4), 39);                             \
    b3 = KROL(KXOR(A##30, d0), 41);                             \
    b4 = KROL(KXOR(A##41, d1), 2);                              \
    E##40 = KCHI(b0, b1, b2);                                   \
    E##41 = KCHI(b1, b2, b3);                                   \
    E##42 = KCHI(b2, b3, b4);                                   \
    E##43 = KCHI(b3, b4, b0);                                   \
    E##44 = KCHI(b4, b0, b1);


/* The lanes stored complemented by DSIG_KECCAK_ROUND_LC, as M(y, x): P = {(1,0), (2,0), (3,1), (2,2),
 * (2,3), (0,4)} in (x, y) (Keccak implementation overview v3.2 §2.2, "lane complementing"). */
#define DSIG_KECCAK_LC_LANES(M) M(0, 1) M(0, 2) M(1, 3) M(2, 2) M(3, 2) M(4, 0)

/*
 * The same round on a state whose lanes in P are stored complemented, for instruction sets without an
 * and-not (portable C): χ's a ^ (~b & c) is rewritten per lane with AND / OR on the stored (possibly
 * complemented) values so that the output again has exactly P complemented, with one NOT per row
 * (5 per round instead of 25). θ, ρ, π and ι are unchanged (complements pass through XOR parity and
 * rotations). Machine-generated by exhaustive search over {AND, OR} x operand negations, checked on
 * all truth-table inputs; the caller also declares `nb` and defines KAND, KOR and KNOT.
 */
#define DSIG_KECCAK_ROUND_LC(A, E, rc)                              \
    c0 = KXOR(KXOR(KXOR(A##00, A##10), KXOR(A##20, A##30)), A##40); \
    c1 = KXOR(KXOR(KXOR(A##01, A##11), KXOR(A##21, A##31)), A##41); \
    c2 = KXOR(KXOR(KXOR(A##02, A##12), KXOR(A##22, A##32)), A##42); \
    c3 = KXOR(KXOR(KXOR(A##03, A##13), KXOR(A##23, A##33)), A##43); \
    c4 = KXOR(KXOR(KXOR(A##04, A##14), KXOR(A##24, A##34)), A##44); \
    d0 = KXOR(c4, KROL(c1, 1));                                     \
    d1 = KXOR(c0, KROL(c2, 1));                                     \
    d2 = KXOR(c1, KROL(c3, 1));                                     \
    d3 = KXOR(c2, KROL(c4, 1));                                     \
    d4 = KXOR(c3, KROL(c0, 1));                                     \
    b0 = KXOR(A##00, d0);                                           \
    b1 = KROL(KXOR(A##11, d1), 44);                                 \
    b2 = KROL(KXOR(A##22, d2), 43);                                 \
    b3 = KROL(KXOR(A##33, d3), 21);                                 \
    b4 = KROL(KXOR(A##44, d4), 14);                                 \
    nb = KNOT(b2);                                                  \
    E##00 = KXOR(KXOR(b0, KOR(b1, b2)), KRC(rc));                   \
    E##01 = KXOR(b1, KOR(nb, b3));                                  \
    E##02 = KXOR(b2, KAND(b3, b4));                                 \
    E##03 = KXOR(b3, KOR(b4, b0));                                  \
    E##04 = KXOR(b4, KAND(b0, b1));                                 \
    b0 = KROL(KXOR(A##03, d3), 28);                                 \
    b1 = KROL(KXOR(A##14, d4), 20);                                 \
    b2 = KROL(KXOR(A##20, d0), 3);                                  \
    b3 = KROL(KXOR(A##31, d1), 45);                                 \
    b4 = KROL(KXOR(A##42, d2), 61);                                 \
    nb = KNOT(b4);                                                  \
    E##10 = KXOR(b0, KOR(b1, b2));                                  \
    E##11 = KXOR(b1, KAND(b2, b3));                                 \
    E##12 = KXOR(b2, KOR(b3, nb));                                  \
    E##13 = KXOR(b3, KOR(b4, b0));                                  \
    E##14 = KXOR(b4, KAND(b0, b1));                                 \
    b0 = KROL(KXOR(A##01, d1), 1);                                  \
    b1 = KROL(KXOR(A##12, d2), 6);                                  \
    b2 = KROL(KXOR(A##23, d3), 25);                                 \
    b3 = KROL(KXOR(A##34, d4), 8);                                  \
    b4 = KROL(KXOR(A##40, d0), 18);                                 \
    nb = KNOT(b3);                                                  \
    E##20 = KXOR(b0, KOR(b1, b2));                                  \
    E##21 = KXOR(b1, KAND(b2, b3));                                 \
    E##22 = KXOR(b2, KAND(nb, b4));                                 \
    E##23 = KXOR(nb, KOR(b4, b0));                                  \
    E##24 = KXOR(b4, KAND(b0, b1));                                 \
    b0 = KROL(KXOR(A##04, d4), 27);                                 \
    b1 = KROL(KXOR(A##10, d0), 36);                                 \
    b2 = KROL(KXOR(A##21, d1), 10);                                 \
    b3 = KROL(KXOR(A##32, d2), 15);                                 \
    b4 = KROL(KXOR(A##43, d3), 56);                                 \
    nb = KNOT(b3);                                                  \
    E##30 = KXOR(b0, KAND(b1, b2));                                 \
    E##31 = KXOR(b1, KOR(b2, b3));                                  \
    E##32 = KXOR(b2, KOR(nb, b4));                                  \
    E##33 = KXOR(nb, KAND(b4, b0));                                 \
    E##34 = KXOR(b4, KOR(b0, b1));                                  \
    b0 = KROL(KXOR(A##02, d2), 62);                                 \
    b1 = KROL(KXOR(A##13, d3), 55);                                 \
    b2 = KROL(KXOR(A##24, d4), 39);                                 \
    b3 = KROL(KXOR(A##30, d0), 41);                                 \
    b4 = KROL(KXOR(A##41, d1), 2);                                  \
    nb = KNOT(b1);                                                  \
    E##40 = KXOR(b0, KAND(nb, b2));                                 \
    E##41 = KXOR(nb, KOR(b2, b3));                                  \
    E##42 = KXOR(b2, KAND(b3, b4));                                 \
    E##43 = KXOR(b3, KOR(b4, b0));                                  \
    E##44 = KXOR(b4, KAND(b0, b1));

#endif
