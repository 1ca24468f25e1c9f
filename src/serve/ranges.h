/*
 * src/serve/ranges.h — index-range reservation for stateful keys shared by several signers
 * (docs/scale.md): a shared per-key counter behind an abstract interface (an etcd cluster, a file on
 * this host, an in-process fake for tests), and the reservation on top of it, which a state file uses as
 * its range source (dsig_state_opts.ranges, dsig/state.h).
 *
 * The counter of a key is the first index no signer has been given: every index below it belongs to
 * a range that was handed out once (to one signer, which uses it or burns it). A reservation reads the
 * counter c and moves it to c + N with one compare-and-swap; the signer's state file then records the
 * range [c, c + N) durably before the first index of it is used. The counter only grows, so a range is
 * never handed out twice, whatever crashes.
 */
#ifndef DSIG_SERVE_RANGES_H
#define DSIG_SERVE_RANGES_H

#include <stdint.h>

#include "dsig/state.h"

/* ---- the shared counter ------------------------------------------------------------------------ */

/* What a counter operation returns. */
enum serve_counter_status {
    SERVE_COUNTER_OK = 0,          /* done */
    SERVE_COUNTER_CONFLICT = 1,    /* cas only: the counter did not hold `expected`; *observed is what
                                      it held (absent = 0) */
    SERVE_COUNTER_UNAVAILABLE = 2  /* the coordinator could not be reached or did not answer in time;
                                      for cas: the swap may or may not have happened (the caller then
                                      treats the range as burned and never uses it) */
};

/*
 * One shared counter store. key_name is a key's RFC 7638 thumbprint (base64url, 43 characters); an
 * implementation keeps one counter per name (etcd: one key under a prefix). A counter that does not
 * exist holds 0; a cas from 0 creates it. Counters only ever move up; nothing here deletes one.
 * Every function may be called from several threads at once. On SERVE_COUNTER_UNAVAILABLE an
 * implementation records a detail (dsig_fail) naming the coordinator and the cause.
 */
struct serve_counter_ops {
    const char *name; /* "etcd", "file", "memory": for messages */
    /* *value = the counter's current value (0 if it does not exist). SERVE_COUNTER_OK or
     * SERVE_COUNTER_UNAVAILABLE. A stale read is allowed: the cas that follows then fails. */
    int (*get)(void *ctx, const char *key_name, uint64_t *value);
    /* Atomically: if the counter holds `expected` (an absent counter holds 0), set it to `desired` and
     * make that durable on the coordinator before returning SERVE_COUNTER_OK; otherwise
     * SERVE_COUNTER_CONFLICT with *observed = the value it holds. SERVE_COUNTER_UNAVAILABLE: not known.
     * desired > expected always. */
    int (*cas)(void *ctx, const char *key_name, uint64_t expected, uint64_t desired, uint64_t *observed);
    /* Optional: free ctx (serve_counter_free). */
    void (*destroy)(void *ctx);
};

struct serve_counter {
    const struct serve_counter_ops *ops;
    void *ctx;
};

/* Free a counter made by one of the constructors below (calls ops->destroy). NULL is a no-op. */
void serve_counter_free(struct serve_counter *c);

/* The rules every counter store shares. A counter name is a key thumbprint: 1 to
 * SERVE_COUNTER_NAME_MAX base64url characters, so never a path or a key outside the prefix. */
#define SERVE_COUNTER_NAME_MAX 128
int serve_counter_name_ok(const char *name);
/* A stored counter value: 1 to 20 decimal digits, no sign, no space, no overflow; 1 and *v, or 0 (a
 * damaged value, never guessed at). */
int serve_counter_parse(const char *s, size_t len, uint64_t *v);

/*
 * The single-host counter: one file per key in `dir` (created 0700 if missing), holding the value as
 * decimal text, updated under an open-file-description lock (fcntl F_OFD_SETLKW on DIR/NAME.lock) by
 * writing a temporary file, fsync, rename and fsync of the directory. Safe between threads and
 * between processes of one host (and only there: never on NFS).
 * DSIG_OK, DSIG_E_ARG (NULL), DSIG_E_IO (the directory cannot be created or opened), DSIG_E_NOMEM.
 */
int serve_counter_file_new(struct serve_counter **out, const char *dir);

/*
 * The cluster counter: one etcd key PREFIX + NAME per counter (value: decimal text), through etcd's v3
 * JSON gateway (POST /v3/kv/range, /v3/kv/txn; etcd 3.4) over HTTP with libcurl. get = a linearizable
 * range; cas = one txn comparing the value (or, for expected 0, the key's create revision 0) and
 * putting the new value on success: a quorum write, durable on a majority before etcd answers. The
 * endpoints are members of one cluster; a request that fails on one (connection refused, timeout, HTTP
 * error, an answer that does not parse) is tried on the next, and the member that answered last is
 * asked first next time.
 */
struct serve_counter_etcd_config {
    const char *const *endpoints; /* "http://HOST:PORT" (or https), at least one */
    size_t n_endpoints;
    const char *prefix;           /* key prefix [NULL: "/dsig/"] */
    uint32_t connect_timeout_ms;  /* per member [1000] */
    uint32_t timeout_ms;          /* per request and member, connect included [3000] */
};
/* DSIG_OK, DSIG_E_ARG (no endpoint, an endpoint that is not http:// or https://, a prefix longer than
 * 256 bytes), DSIG_E_NOMEM, DSIG_E_UNAVAILABLE (libcurl cannot be initialised). */
int serve_counter_etcd_new(struct serve_counter **out, const struct serve_counter_etcd_config *cfg);
/* HTTP requests an etcd counter has sent (every member tried counts): for metrics and measurements. */
uint64_t serve_counter_etcd_requests(const struct serve_counter *c);

/*
 * An in-process counter for tests, with fault injection (serve_counter_mem_set_faults).
 * DSIG_OK or DSIG_E_NOMEM.
 */
int serve_counter_mem_new(struct serve_counter **out);
struct serve_counter_mem_faults {
    unsigned unavailable;   /* the next calls (get or cas) that fail as unavailable */
    unsigned lost;          /* the next cas calls that are applied but answer unavailable (the
                               coordinator committed, the answer was lost) */
    unsigned conflicts;     /* the next cas calls that find another writer got in first */
    uint64_t bump;          /* what that other writer adds (0: 1) */
};
/* Set the faults of a counter made by serve_counter_mem_new (replacing the previous ones). */
void serve_counter_mem_set_faults(struct serve_counter *c, const struct serve_counter_mem_faults *f);
/* Set a memory counter's value directly (a coordinator restored from an old copy, in tests). */
void serve_counter_mem_set(struct serve_counter *c, const char *key_name, uint64_t value);
/* Number of get + cas calls that reached a memory counter. */
uint64_t serve_counter_mem_calls(const struct serve_counter *c);

/* ---- the reservation ----------------------------------------------------------------------------- */

/*
 * Sizing and retry policy (0 = the default in brackets). A range of N indices: the first one of a key
 * has `initial` indices; each next one is sized so that it would last `target_ms` at the rate the last
 * one was used (N' = N * target / elapsed), at most 4x and at least 1/4 of the last one, inside
 * [floor, ceiling], and never more than ceil(remaining / share) of what is left of the key (small
 * ranges near the end waste little).
 */
struct serve_ranges_config {
    uint64_t initial;        /* first range of a key [64] */
    uint64_t floor;          /* smallest range [16] */
    uint64_t ceiling;        /* largest range [65536] */
    uint32_t target_ms;      /* how long a range should last [30000] */
    uint32_t share;          /* a range is at most ceil(remaining / share) [16] */
    uint32_t attempts;       /* counter operations per reservation, all outcomes [8] */
    uint32_t backoff_ms;     /* first pause after a conflict or an unavailable answer, doubling with
                                jitter, capped at 64x [2] */
    uint32_t cooldown_ms;    /* after a reservation failed as unavailable, fail at once for this long
                                without asking the coordinator [1000] */
    uint32_t deadline_ms;    /* no new attempt once a reservation has taken this long: the signer
                                waits at most about this plus one counter call (an etcd counter's
                                call tries each member for up to its timeout) [5000] */
};

struct serve_ranges;

/* A reservation policy on `counter` (not owned: it must outlive the result). cfg NULL = defaults.
 * DSIG_OK, DSIG_E_ARG (NULL counter, floor > ceiling), DSIG_E_NOMEM. */
int serve_ranges_new(struct serve_ranges **out, const struct serve_counter *counter,
                     const struct serve_ranges_config *cfg);
void serve_ranges_free(struct serve_ranges *r);

/*
 * Reserve the next range of key `key_id` (its thumbprint), for a signer whose state file's durable
 * counter is `local_next`, on a key of `capacity` indices: [*lo, *hi) with local_next <= *lo < *hi <=
 * capacity, handed to no one else, ever. *lo = max(counter, local_next): a state file that was used
 * before the key was shared pushes the counter past its own indices.
 * @retval DSIG_OK            the range is reserved (durable on the coordinator).
 * @retval DSIG_E_EXHAUSTED   the counter (or local_next) is at the key's capacity: no index is left.
 * @retval DSIG_E_UNAVAILABLE the coordinator did not answer (after the retries, or within the
 *                            cooldown of an earlier failure), or the attempts ran out with at least
 *                            one of them unanswered; nothing was reserved that will be used.
 * @retval DSIG_E_STATE       the compare-and-swap kept failing, every attempt answered (more
 *                            contention than `attempts`).
 * @retval DSIG_E_STATE       also: the counter went below a value this process saw before (a
 *                            coordinator restored from an old copy would hand out used indices).
 * @retval DSIG_E_ARG         NULL argument, or a key_id that is empty, longer than 128 bytes or not
 *                            base64url.
 * @retval DSIG_E_NOMEM       out of memory.
 */
int serve_ranges_reserve(struct serve_ranges *r, const char *key_id, uint64_t local_next, uint64_t capacity,
                         uint64_t *lo, uint64_t *hi);

/* The range source for dsig_state_open / dsig_state_create (dsig_state_opts.ranges): every key opened
 * with it reserves its windows through serve_ranges_reserve. Valid while r lives. */
const dsig_state_range_source *serve_ranges_source(struct serve_ranges *r);

/* The size the next range of key_id would get now (0 if the key has no range yet): for metrics/tests. */
uint64_t serve_ranges_next_size(struct serve_ranges *r, const char *key_id);

/* The sizing rule alone (above): the next range after one of `last` indices used up in `elapsed_ms`,
 * with `remaining` indices left in the key. Pure; for the reservation and its tests. */
uint64_t serve_ranges_size(const struct serve_ranges_config *cfg, uint64_t last, uint64_t elapsed_ms,
                           uint64_t remaining);

#endif
