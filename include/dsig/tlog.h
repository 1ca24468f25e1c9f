/*
 * dsig/tlog.h — transparency logs: RFC 9162 §2.1 Merkle trees (SHA-256) and C2SP tlog-checkpoint
 * signed notes (Ed25519, C2SP signed-note).
 *
 * Tree hashing (RFC 9162 §2.1.1): the hash of the empty tree is SHA-256(""), a leaf is
 * SHA-256(0x00 ‖ entry), an inner node SHA-256(0x01 ‖ left ‖ right), and a tree of n > 1 leaves splits
 * at k, the largest power of two smaller than n. Leaves are numbered from 0.
 *
 * A log that grows one leaf at a time keeps a *compact range* (dsig_tlog_range): the roots of the
 * complete subtrees its size decomposes into, at most 64 hashes, enough for the root of the whole
 * tree. Proofs need the hashes of older subtrees: the caller stores every complete subtree's hash as
 * the range reports it (dsig_tlog_range_append's callback) and lends them back through a getter; with
 * the storage order of dsig_tlog_node_pos (post-order: a node right after its last leaf) that storage is
 * one append-only array of 2n - popcount(n) hashes.
 */
#ifndef DSIG_TLOG_H
#define DSIG_TLOG_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "key.h"

DSIG_BEGIN_DECLS

#define DSIG_TLOG_HASH_LEN 32
#define DSIG_TLOG_PROOF_MAX 128 /* hashes in an inclusion or consistency proof of a 64-bit tree, at most */

/* SHA-256(0x00 ‖ entry): the leaf hash of one log entry. */
DSIG_EXPORT void dsig_tlog_leaf_hash(const void *entry, size_t len, uint8_t out[DSIG_TLOG_HASH_LEN]);
/* SHA-256(0x01 ‖ left ‖ right). */
DSIG_EXPORT void dsig_tlog_node_hash(const uint8_t left[DSIG_TLOG_HASH_LEN], const uint8_t right[DSIG_TLOG_HASH_LEN],
                                     uint8_t out[DSIG_TLOG_HASH_LEN]);
/* Plain SHA-256: what a log record's "jws_sha256" holds of the JWS it records. */
DSIG_EXPORT void dsig_tlog_sha256(const void *data, size_t len, uint8_t out[DSIG_TLOG_HASH_LEN]);
/* SHA-256(""): the root of the empty tree. */
DSIG_EXPORT void dsig_tlog_empty_root(uint8_t out[DSIG_TLOG_HASH_LEN]);

/* The position of the complete subtree (level, index) — leaves [index·2^level, (index+1)·2^level) — in
 * post-order storage.
 * @return its 0-based position among the stored hashes. */
DSIG_EXPORT uint64_t dsig_tlog_node_pos(unsigned level, uint64_t index);
/* The number of complete-subtree hashes post-order storage holds for a tree of `size` leaves.
 * @return that count (2·size − popcount(size)). */
DSIG_EXPORT uint64_t dsig_tlog_stored_nodes(uint64_t size);

/* A tree's right edge: its size and the roots of its complete subtrees, largest first. */
typedef struct dsig_tlog_range {
    uint64_t size;
    unsigned n;                                  /* = popcount(size) */
    uint8_t hash[64][DSIG_TLOG_HASH_LEN];
} dsig_tlog_range;

/* Called for every complete subtree an append completes, lowest level first (the leaf itself is level 0):
 * in post-order, so storing them in call order gives dsig_tlog_node_pos. Non-zero stops the append. */
typedef int (*dsig_tlog_store_fn)(void *arg, unsigned level, uint64_t index, const uint8_t hash[DSIG_TLOG_HASH_LEN]);
/* Lends back a stored complete subtree hash. Returns DSIG_OK or an error code (passed on). */
typedef int (*dsig_tlog_fetch_fn)(void *arg, unsigned level, uint64_t index, uint8_t out[DSIG_TLOG_HASH_LEN]);

/* Make `r` the right edge of the empty tree (size 0, no subtree). */
DSIG_EXPORT void dsig_tlog_range_init(dsig_tlog_range *r);
/*
 * Append one leaf hash; `store` (may be NULL) sees each completed subtree.
 * @retval DSIG_OK
 * @retval DSIG_E_ARG the tree is full (2^64 - 1 leaves)
 * @retval DSIG_E_IO  `store` returned non-zero (the leaf is appended all the same)
 */
DSIG_EXPORT int dsig_tlog_range_append(dsig_tlog_range *r, const uint8_t leaf[DSIG_TLOG_HASH_LEN],
                                       dsig_tlog_store_fn store, void *arg);
/* The root hash of the tree (the empty root for size 0). */
DSIG_EXPORT void dsig_tlog_range_root(const dsig_tlog_range *r, uint8_t out[DSIG_TLOG_HASH_LEN]);

/*
 * MTH(D[begin:end]) from stored complete subtrees: O(log n) fetches. begin must be a multiple of the
 * largest power of two not above end - begin, as in every subtree a proof names.
 * @retval DSIG_OK
 * @retval DSIG_E_ARG an empty or unaligned range
 * @retval other      what `fetch` returned
 */
DSIG_EXPORT int dsig_tlog_subtree(dsig_tlog_fetch_fn fetch, void *arg, uint64_t begin, uint64_t end,
                                  uint8_t out[DSIG_TLOG_HASH_LEN]);

/*
 * The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1), bottom-up, into
 * proof[0..*n) (room for DSIG_TLOG_PROOF_MAX).
 * @retval DSIG_OK
 * @retval DSIG_E_ARG index >= size
 * @retval other      what `fetch` returned
 */
DSIG_EXPORT int dsig_tlog_inclusion_proof(dsig_tlog_fetch_fn fetch, void *arg, uint64_t index, uint64_t size,
                                          uint8_t proof[][DSIG_TLOG_HASH_LEN], size_t *n);
/*
 * The consistency proof between the trees of m and n leaves (RFC 9162 §2.1.4.1), 0 < m <= n; empty for
 * m == n.
 * @retval DSIG_OK
 * @retval DSIG_E_ARG m == 0 or m > n
 * @retval other      what `fetch` returned
 */
DSIG_EXPORT int dsig_tlog_consistency_proof(dsig_tlog_fetch_fn fetch, void *arg, uint64_t m, uint64_t n,
                                            uint8_t proof[][DSIG_TLOG_HASH_LEN], size_t *len);

/*
 * Verify an inclusion proof (RFC 9162 §2.1.3.2).
 * @retval DSIG_OK     the leaf is at `index` in the tree of `size` leaves with this root
 * @retval DSIG_E_VERIFY it is not (wrong hash, wrong length)
 * @retval DSIG_E_ARG  index >= size
 */
DSIG_EXPORT int dsig_tlog_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf[DSIG_TLOG_HASH_LEN],
                                           const uint8_t proof[][DSIG_TLOG_HASH_LEN], size_t n,
                                           const uint8_t root[DSIG_TLOG_HASH_LEN]);
/*
 * Verify a consistency proof (RFC 9162 §2.1.4.2) between root1 (m leaves) and root2 (n leaves).
 * @retval DSIG_OK       the tree of n leaves extends the tree of m leaves
 * @retval DSIG_E_VERIFY it does not (or the proof is malformed)
 * @retval DSIG_E_ARG    m == 0 or m > n
 */
DSIG_EXPORT int dsig_tlog_verify_consistency(uint64_t m, uint64_t n, const uint8_t root1[DSIG_TLOG_HASH_LEN],
                                             const uint8_t root2[DSIG_TLOG_HASH_LEN],
                                             const uint8_t proof[][DSIG_TLOG_HASH_LEN], size_t len);

/* ---- checkpoints and signed notes ------------------------------------------------------------ */

#define DSIG_TLOG_ORIGIN_MAX 255 /* bytes of an origin / note key name */

/*
 * The checkpoint body (C2SP tlog-checkpoint): "<origin>\n<size>\n<base64 root>\n", NUL-terminated,
 * allocated (free with dsig_free).
 * @retval DSIG_OK
 * @retval DSIG_E_ARG an origin that is empty, too long, or holds a space, '+' or a control character
 * @retval DSIG_E_NOMEM
 */
DSIG_EXPORT int dsig_tlog_checkpoint_body(const char *origin, uint64_t size, const uint8_t root[DSIG_TLOG_HASH_LEN],
                                          char **out);
/*
 * Parse a checkpoint body (the note text, up to the blank line): origin (into origin[DSIG_TLOG_ORIGIN_MAX+1]),
 * size, root. Extension lines after the root are allowed and ignored.
 * @retval DSIG_OK
 * @retval DSIG_E_FORMAT not a checkpoint (the detail says which line)
 */
DSIG_EXPORT int dsig_tlog_checkpoint_parse(const char *text, size_t len, char origin[DSIG_TLOG_ORIGIN_MAX + 1],
                                           uint64_t *size, uint8_t root[DSIG_TLOG_HASH_LEN]);

/* The C2SP signed-note key ID of an Ed25519 key: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ pub)[:4], big-endian.
 * @return the key ID. */
DSIG_EXPORT uint32_t dsig_tlog_note_key_id(const char *name, const uint8_t pub[32]);
/*
 * The public note verifier key text "<name>+<key ID, 8 hex digits>+<base64(0x01 ‖ pub)>" (the Go
 * golang.org/x/mod/sumdb/note form), allocated; and its parser (name into name[DSIG_TLOG_ORIGIN_MAX+1]).
 * @retval DSIG_OK
 * @retval DSIG_E_ARG bad name (format) / DSIG_E_FORMAT not such a key, or its key ID does not match (parse)
 * @retval DSIG_E_NOMEM
 */
DSIG_EXPORT int dsig_tlog_vkey_format(const char *name, const uint8_t pub[32], char **out);
/* Parse a note verifier key text (the form dsig_tlog_vkey_format makes): name into
 * name[DSIG_TLOG_ORIGIN_MAX+1], the Ed25519 public key into pub.
 * @retval DSIG_OK
 * @retval DSIG_E_FORMAT not such a key, or its key ID does not match its name and key */
DSIG_EXPORT int dsig_tlog_vkey_parse(const char *vkey, size_t len, char name[DSIG_TLOG_ORIGIN_MAX + 1], uint8_t pub[32]);
/* The 32-byte public key of an Ed25519 key (private or public).
 * @retval DSIG_OK @retval DSIG_E_KEY_MISMATCH not an Ed25519 key @retval DSIG_E_NOMEM */
DSIG_EXPORT int dsig_tlog_ed25519_public(const dsig_key *key, uint8_t pub[32]);

/*
 * Sign `text` (ending in a newline) as a note: text, a blank line, "— <name> <base64(key ID ‖ sig)>\n".
 * `key` is an Ed25519 private key. The note is allocated (free with dsig_free), *len its length.
 * @retval DSIG_OK
 * @retval DSIG_E_ARG text not ending in a newline, with a control character or an empty line at its end; bad name
 * @retval DSIG_E_KEY_MISMATCH not an Ed25519 key
 * @retval other      the signature failed
 */
DSIG_EXPORT int dsig_tlog_note_sign(const char *text, size_t text_len, const char *name, const dsig_key *key,
                                    char **note, size_t *len);
/*
 * Verify a note against the Ed25519 key (name, pub): the note must hold a signature line of that name and
 * key ID, and it must verify (signatures of other keys are ignored). *text_len receives the length of
 * the text (the signed part, with its final newline).
 * @retval DSIG_OK
 * @retval DSIG_E_FORMAT  not a note
 * @retval DSIG_E_VERIFY  no signature of this key, or it does not verify
 */
DSIG_EXPORT int dsig_tlog_note_verify(const char *note, size_t len, const char *name, const uint8_t pub[32],
                                      size_t *text_len);

DSIG_END_DECLS

#endif
