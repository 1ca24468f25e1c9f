/*
 * tests/mac/kmac_ref.h — a small, slow, bit-oriented KMAC reference used only by the tests.
 *
 * The ACVP KMAC vectors use key, message and output lengths in bits that are rarely multiples of 8,
 * which a byte-oriented library (OpenSSL, and so dsig) cannot take. This reference implements
 * Keccak-p[1600,24] (FIPS 202 §3) and KMAC / KMACXOF (SP 800-185 §4) on bit strings, so that the
 * test can prove it bit-exact against ACVP and then hold the library to it on byte-aligned inputs.
 */
#ifndef DSIG_TEST_KMAC_REF_H
#define DSIG_TEST_KMAC_REF_H

#include <stddef.h>
#include <stdint.h>

/*
 * KMAC128 (strength 128) or KMAC256 (256) of a key of key_bits bits and a message of msg_bits bits,
 * customization S (whole bytes), output out_bits bits (xof: KMACXOF, L encoded as 0). Bit strings
 * use the ACVP convention (see kmac_ref.c). `out` receives ceil(out_bits/8) bytes, unused bits zero.
 * Returns 0, or -1 on bad arguments / allocation failure.
 */
int kmac_ref(unsigned strength, const uint8_t *key, size_t key_bits, const uint8_t *msg,
             size_t msg_bits, const uint8_t *custom, size_t custom_len, size_t out_bits, int xof,
             uint8_t *out);

/* 1 if the first `bits` bits of a and b (in that convention) are equal, else 0. */
int kmac_ref_equal_bits(const uint8_t *a, const uint8_t *b, size_t bits);

#endif
