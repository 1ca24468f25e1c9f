/*
 * src/core/codec.h — text encodings of bytes: base64url (RFC 4648 §5, no padding, canonical; the
 * JOSE layer's) and hex (tests, CLI --seed). base64url.c. Not installed.
 */
#ifndef DSIG_CORE_CODEC_H
#define DSIG_CORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* ---- base64url ---------------------------------------------------------------------------- */

/* Characters of the encoding of n bytes (no padding, no NUL). */
size_t dsig_b64url_encoded_len(size_t n);

/* Writes dsig_b64url_encoded_len(n) chars + NUL; out must have that many + 1 bytes. */
void dsig_b64url_encode(char *out, const uint8_t *in, size_t n);

/* Allocating form (NUL-terminated; free with dsig_xfree(p, 0)); NULL on OOM. */
char *dsig_b64url_encode_alloc(const uint8_t *in, size_t n);

/*
 * Strict decode of n characters into a new buffer (*out, free with dsig_xfree(*out, *out_len)):
 * rejects padding, characters outside the alphabet, length ≡ 1 (mod 4) and non-zero trailing bits.
 * @retval DSIG_OK       *out and *out_len are set
 * @retval DSIG_E_BASE64 not canonical base64url
 * @retval DSIG_E_NOMEM  out of memory
 */
int dsig_b64url_decode_alloc(const char *in, size_t n, uint8_t **out, size_t *out_len);

/*
 * As dsig_b64url_decode_alloc, into the caller's buffer of `cap` bytes.
 * @retval DSIG_OK       out holds *out_len bytes
 * @retval DSIG_E_BASE64 not canonical base64url
 * @retval DSIG_E_BUFFER the decoded bytes do not fit in cap
 */
int dsig_b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *out_len);

/* Streaming encoder: feeds base64url text of the bytes given to a sink, carrying up to 2 bytes. A
 * sink returns DSIG_OK or an error, which the encoder passes up unchanged. */
typedef int (*dsig_text_sink)(void *arg, const char *text, size_t len);
typedef struct dsig_b64url_stream {
    uint8_t carry[3];
    size_t ncarry;
    dsig_text_sink sink;
    void *arg;
} dsig_b64url_stream;

/* Start an encoder writing to sink(arg, ...). */
void dsig_b64url_stream_init(dsig_b64url_stream *s, dsig_text_sink sink, void *arg);

/*
 * Encode n more bytes (whole groups of 3 go to the sink, the rest waits).
 * @retval DSIG_OK  the sink took everything
 * @retval other    the sink's error
 */
int dsig_b64url_stream_update(dsig_b64url_stream *s, const uint8_t *in, size_t n);

/*
 * Encode the carried bytes (the unpadded tail).
 * @retval DSIG_OK  done
 * @retval other    the sink's error
 */
int dsig_b64url_stream_final(dsig_b64url_stream *s);

/* ---- hex ---------------------------------------------------------------------------------- */

/*
 * Decode the n characters of hex text (either case) at `hex` into out. Constant time in the digits
 * (they may be a secret's; hence the length is given, not found by a NUL search): only whether the
 * text is valid is branched on (tests/ct: ct_core).
 * @retval DSIG_OK       out holds *out_len bytes
 * @retval DSIG_E_FORMAT an odd number of digits or a character that is not a hex digit
 * @retval DSIG_E_BUFFER more than cap bytes
 */
int dsig_hex_decode(const char *hex, size_t n, uint8_t *out, size_t cap, size_t *out_len);

#endif
