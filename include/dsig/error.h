/*
 * dsig/error.h — status codes.
 *
 * Every public function that can fail returns an int: DSIG_OK (0) on success, a negative DSIG_E_*
 * code otherwise. Verification has three outcomes that must never be confused:
 *   DSIG_OK          the signature is valid;
 *   DSIG_E_VERIFY    the signature is well-formed input but does not verify (or is malformed);
 *   anything else    an error: the question could not be answered (I/O, memory, bad key, ...).
 *
 * dsig_last_error_detail() gives a human-readable sentence naming what was wrong for the most recent
 * failure on the calling thread (e.g. "JWS header: unknown critical member \"exp\""). It is stored in
 * thread-local storage and is overwritten by the next failure on the same thread.
 */
#ifndef DSIG_ERROR_H
#define DSIG_ERROR_H

#include "common.h"

DSIG_BEGIN_DECLS

enum dsig_status {
    DSIG_OK = 0,
    DSIG_E_VERIFY = -1,          /* signature or tag does not verify */
    DSIG_E_ARG = -2,             /* invalid argument (NULL, bad size, misuse) */
    DSIG_E_NOMEM = -3,           /* out of memory */
    DSIG_E_UNSUPPORTED = -4,     /* unknown or unsupported algorithm / feature */
    DSIG_E_KEY = -5,             /* malformed or inconsistent key material */
    DSIG_E_KEY_MISMATCH = -6,    /* key type, curve or size does not fit the algorithm */
    DSIG_E_KEY_WEAK = -7,        /* key below the minimum size (e.g. RSA < 2048 bits) */
    DSIG_E_FORMAT = -8,          /* malformed encoding (JWS, JWK, PEM, signature layout) */
    DSIG_E_BASE64 = -9,          /* invalid or non-canonical base64url */
    DSIG_E_JSON = -10,           /* invalid JSON, duplicate member, wrong member type */
    DSIG_E_HEADER = -11,         /* JWS protected header rejected (none, crit, b64, size) */
    DSIG_E_ALG_NOT_ALLOWED = -12,/* algorithm not allowed by the key or the allow-list */
    DSIG_E_IO = -13,             /* read or write failure */
    DSIG_E_RNG = -14,            /* random number generator failure */
    DSIG_E_CRYPTO = -15,         /* failure inside a cryptographic backend */
    DSIG_E_BUFFER = -16,         /* output buffer too small */
    DSIG_E_STATE = -17,          /* context used out of order, or a key state file refused (locked,
                                    restored from an older copy, wrong owner or mode, damaged) */
    DSIG_E_POINT = -18,          /* invalid curve point */
    DSIG_E_NO_PRIVATE = -19,     /* operation needs a private key */
    DSIG_E_TOO_LARGE = -20,      /* input exceeds a documented bound */
    DSIG_E_WOULD_BLOCK = -21,    /* non-blocking operation could not proceed now */
    DSIG_E_EXHAUSTED = -22,      /* stateful key has no one-time keys left */
    DSIG_E_INTERNAL = -23,       /* bug: please report */
    DSIG_E_EQUIVOCATION = -24,   /* valid signature, but the signer signed another message with the
                                    same one-time key, or two batches under one sequence number
                                    (DSig; evidence is kept, see dsig/hybrid.h) */
    DSIG_E_UNKNOWN_SIGNER = -25, /* no public key registered for that signer id (DSig verifier) */
    DSIG_E_STALE = -26,          /* DSig batch below the verifier's sequence floor: valid or not, it
                                    is never cached (a replay of an old batch message) */
    DSIG_E_RANGE = -27,          /* stateful key: its index range (window) is used up and no new one
                                    was given: reserve the next range (dsig/state.h) */
    DSIG_E_UNAVAILABLE = -28     /* a coordinator that must be asked (the shared index counter of a
                                    stateful key) cannot be reached now: retry later */
};

/*
 * A static English sentence describing a status code (DSIG_OK included); an unknown code gives a
 * generic sentence. Use dsig_last_error_detail() for what exactly went wrong.
 * @return a static NUL-terminated string, never NULL.
 */
DSIG_EXPORT const char *dsig_strerror(int code);

/*
 * The detail of the most recent failure on the calling thread, more specific than dsig_strerror()
 * (it names the member, the limit or the system error). Thread-local and overwritten by the next
 * failure on the same thread; read it only after a call failed, since a success may leave an older
 * detail in place.
 * @return a NUL-terminated string valid until the thread's next failing call; "" if none so far.
 */
DSIG_EXPORT const char *dsig_last_error_detail(void);

DSIG_END_DECLS

#endif
