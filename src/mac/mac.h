/*
 * src/mac/mac.h — internal test hook of the MAC provider (not installed).
 *
 * The provider itself is reached through the registry (dsig_mac_algs); this hook
 * exists so that known-answer tests can drive the same EVP_MAC code path with the parameters the
 * official vectors vary but the registered algorithms fix: truncated / extended output lengths, KMAC
 * customization strings and KMACXOF.
 */
#ifndef DSIG_MAC_MAC_H
#define DSIG_MAC_MAC_H

#include <stddef.h>
#include <stdint.h>

struct dsig_keytype;

/* The key type of every MAC: JWK kty "oct" (mac.c). */
extern const struct dsig_keytype dsig_keytype_oct;

/*
 * Compute the MAC of `msg` under `key` for the registered algorithm `alg_name` ("HS256",
 * "HMAC-SHA3-384", "KMAC128", "CMAC-AES-256", ...), writing `out_len` bytes to `out`.
 *  - HMAC / CMAC: out_len must be 1..full tag size; the tag is truncated to its first out_len bytes
 *    (RFC 2104 §5, SP 800-38B §6.2). custom/xof must be empty / 0.
 *  - KMAC: out_len is the requested output L (in bytes, 1..2^21-1); `custom` is the customization
 *    string S (SP 800-185 §4.2); xof != 0 selects KMACXOF (§4.3.1: right_encode(0) in place of L).
 * No key-size policy is applied except what the primitive itself requires (CMAC: an exact AES key
 * size; KMAC: the backend's 4..512-byte key range). Returns DSIG_OK or a DSIG_E_* code.
 */
int dsig_mac_compute(const char *alg_name, const uint8_t *key, size_t klen, const uint8_t *msg,
                     size_t mlen, const uint8_t *custom, size_t clen, size_t out_len, int xof,
                     uint8_t *out);

#endif
