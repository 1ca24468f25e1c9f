/*
 * src/hybrid/params.h — DSig hybrid-signature parameter sets: the one-time scheme (W-OTS+ or
 * HORS-completed), the chain hash (Haraka-512, SHA-256 compression, BLAKE3 block) and the batch size.
 *
 * A parameter set is one immutable struct. The named presets are static; custom sets are built with
 * dsig_hb_params_init() (which validates and fills the derived sizes). Every parameter set has a 4-byte
 * parameter id (docs/dsig-format.md §2) that travels in every signature, batch message and root message,
 * so bytes made under one set can never be accepted under another.
 */
#ifndef DSIG_HYBRID_PARAMS_H
#define DSIG_HYBRID_PARAMS_H

#include <stddef.h>
#include <stdint.h>

/* Wire-format version byte (first byte of signatures, batch messages and root messages). Version 2:
 * roots signed under the derived root key, with domain and signer id in the root message. */
#define DSIG_HB_VERSION 2u

/* One-time scheme. */
#define DSIG_HB_OTS_WOTS 1u /* W-OTS+ (chains, standard checksum Σ(w−1−d_i)) */
#define DSIG_HB_OTS_HORS 2u /* HORS with the completed public key in the signature */

/* Chain hash F. */
#define DSIG_HB_HASH_HARAKA 1u /* Haraka-512 v2 of one 64-byte block, truncated */
#define DSIG_HB_HASH_SHA256 2u /* one SHA-256 compression of one 64-byte block from the IV, truncated */
#define DSIG_HB_HASH_BLAKE3 3u /* BLAKE3 keyed hash of one 64-byte block (a single compression) */

/* Fixed sizes. */
#define DSIG_HB_SEED_BYTES 32u     /* master seed and per-key seed */
#define DSIG_HB_PKSEED_BYTES 16u   /* public seed (tweak key) of a one-time key */
#define DSIG_HB_NONCE_BYTES 16u    /* message randomiser of a one-time key */
#define DSIG_HB_HASH_BYTES 32u     /* leaves, Merkle nodes, root */
#define DSIG_HB_ED25519_PK 32u
#define DSIG_HB_ED25519_SIG 64u
#define DSIG_HB_WOTS_N 18u         /* W-OTS+ chain value bytes */
#define DSIG_HB_HORS_N 16u         /* HORS secret / public slot bytes */
#define DSIG_HB_MAX_LOG_BATCH 10u  /* batches of 2^0 .. 2^10 one-time keys */
#define DSIG_HB_MAX_VALUE 18u      /* largest chain value (n) */
#define DSIG_HB_SIG_HEADER 47u     /* bytes before the chain values (docs/dsig-format.md §4) */
#define DSIG_HB_ROOT_MSG_BYTES 102u /* the Ed25519-signed root message (docs/dsig-format.md §6) */

typedef struct dsig_hb_params {
    const char *name;     /* "wots4-haraka-b128", ...: the preset name, or "custom" */
    uint32_t id;          /* parameter id (little-endian on the wire; see dsig_hb_params_init) */
    uint8_t ots;          /* DSIG_HB_OTS_* */
    uint8_t hash;         /* DSIG_HB_HASH_* */
    uint8_t log_w;        /* W-OTS+: 1..4 (w = 2, 4, 8, 16); HORS: 0 */
    uint8_t log_t;        /* HORS: 4..12 (t = 2^log_t public slots); W-OTS+: 0 */
    uint16_t k;           /* HORS: revealed secrets per signature (1..255); W-OTS+: 0 */
    uint8_t log_batch;    /* 0..10: 2^log_batch one-time keys per Ed25519-signed batch */
    /* ---- derived (filled by dsig_hb_params_init; constant for the presets) ---- */
    uint8_t n;            /* bytes per chain value / slot: 18 (W-OTS+) or 16 (HORS) */
    uint16_t w;           /* W-OTS+ chain length 2^log_w (levels 0..w−1); HORS: 1 */
    uint16_t len1;        /* W-OTS+: message digits ⌈128/log_w⌉; HORS: k */
    uint16_t len2;        /* W-OTS+: checksum digits; HORS: 0 */
    uint16_t chains;      /* values in a signature: len1+len2 (W-OTS+) or t (HORS) */
    uint16_t levels;      /* precomputed levels per chain: w (W-OTS+) or 2 (HORS: secret, public) */
    uint16_t digest_bytes;/* message-digest XOF output used: ⌈len1·log_w/8⌉ or ⌈k·log_t/8⌉ */
    uint32_t batch;       /* 2^log_batch */
    size_t sig_bytes;     /* exact signature length */
    size_t table_bytes;   /* precomputed secret table of one one-time key: levels·chains·n */
    size_t batch_msg_bytes; /* exact batch-message length (docs/dsig-format.md §7) */
} dsig_hb_params;

/* Named presets (batch 128 unless the name says otherwise). The default is W-OTS+ w=4 + Haraka. */
extern const dsig_hb_params dsig_hb_wots4_haraka;   /* "wots4-haraka-b128" — the default */
extern const dsig_hb_params dsig_hb_wots2_haraka;   /* "wots2-haraka-b128" (w = 2) */
extern const dsig_hb_params dsig_hb_wots8_haraka;   /* "wots8-haraka-b128" (w = 8) */
extern const dsig_hb_params dsig_hb_wots16_haraka;  /* "wots16-haraka-b128" (w = 16) */
extern const dsig_hb_params dsig_hb_wots4_sha256;   /* "wots4-sha256-b128" */
extern const dsig_hb_params dsig_hb_wots4_blake3;   /* "wots4-blake3-b128" */
extern const dsig_hb_params dsig_hb_hors64_haraka;  /* "hors-k64-t256-haraka-b128" */
extern const dsig_hb_params dsig_hb_hors32_haraka;  /* "hors-k32-t512-haraka-b128" */
extern const dsig_hb_params dsig_hb_hors16_haraka;  /* "hors-k16-t4096-haraka-b128" */

/* The default parameter set (&dsig_hb_wots4_haraka). */
const dsig_hb_params *dsig_hb_params_default(void);
/* NULL-terminated list of every preset. */
extern const dsig_hb_params *const dsig_hb_presets[];
/* Preset by name, or NULL. */
const dsig_hb_params *dsig_hb_params_by_name(const char *name);
/* Preset by parameter id, or NULL (custom sets are not found). */
const dsig_hb_params *dsig_hb_params_by_id(uint32_t id);

/*
 * Build and validate a parameter set. For W-OTS+: log_w 1..4, log_t = k = 0. For HORS: log_w = 0,
 * log_t 4..12, k 1..255 with k < t, and k·(log_t − log2 k) ≥ 128 (the HORS security estimate).
 * log_batch 0..10. Fills every derived field, name = "custom". DSIG_E_ARG with a detail naming the
 * field on any violation.
 */
int dsig_hb_params_init(dsig_hb_params *p, unsigned ots, unsigned hash, unsigned log_w, unsigned log_t,
                        unsigned k, unsigned log_batch);
/* Re-check a parameter set (presets, or one filled by dsig_hb_params_init): DSIG_OK or DSIG_E_ARG. */
int dsig_hb_params_check(const dsig_hb_params *p);

/* The same parameter set with another batch size (log_batch 0..10), for batch-size sweeps. */
int dsig_hb_params_with_batch(dsig_hb_params *out, const dsig_hb_params *p, unsigned log_batch);

#endif
