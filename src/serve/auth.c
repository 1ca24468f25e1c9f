/*
 * src/serve/auth.c — bearer tokens (RFC 6750 §2.1), tenant grants and per-token rate limits.
 *
 * Tokens are never stored: the configuration holds their SHA-256, the presented token is hashed and
 * compared with every configured hash with CRYPTO_memcmp, without stopping at a match, so the time
 * depends on the number of tokens only. The hash is unsalted on purpose: tokens are meant to be 256-bit
 * random strings (dsig serve --new-token), for which a salt or a slow hash adds nothing; a short
 * human-chosen token would be open to offline guessing from a leaked configuration (docs/serve.md).
 * Failed authentications are rate-limited per client address (serve_peer_fail_take), so guessing
 * through the service is bounded too (every refused request still gets its audit line, 401 or 429).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/ct.h"
#include "core/internal.h"
#include "hash/blake3.h"
#include "serve_internal.h"

static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_sha256;

/* Fetch SHA-256 once for the process (EVP_MD_fetch is costly; the object is shared read-only). */
static void md_init(void)
{
    md_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
}

/* The EVP_MD for SHA-256 (fetched once, thread-safe); NULL on failure. */
const void *serve_sha256_md(void)
{
    pthread_once(&md_once, md_init);
    return md_sha256;
}

/* SHA-256 of one buffer with the process-wide EVP_MD. */
int serve_sha256(const void *data, size_t len, uint8_t out[32])
{
    const EVP_MD *md = serve_sha256_md();
    unsigned int ol = 0;
    if (!md || EVP_Digest(data, len, out, &ol, md, NULL) != 1 || ol != 32)
        return dsig_fail_openssl(DSIG_E_CRYPTO, "SHA-256");
    return DSIG_OK;
}

/* A fresh 256-bit token (base64url) and its SHA-256 in hex, as the configuration stores it. */
int dsig_serve_new_token(char token[DSIG_SERVE_TOKEN_LEN + 1], char sha256_hex[65])
{
    if (!token || !sha256_hex)
        return dsig_fail(DSIG_E_ARG, "serve: NULL argument");
    uint8_t raw[32], h[32];
    int rc = dsig_random_bytes(raw, sizeof raw);
    if (rc == DSIG_OK) {
        dsig_b64url_encode(token, raw, sizeof raw);
        rc = serve_sha256(token, DSIG_SERVE_TOKEN_LEN, h);
    }
    dsig_memzero(raw, sizeof raw);
    if (rc != DSIG_OK) {
        dsig_memzero(token, DSIG_SERVE_TOKEN_LEN + 1);
        return rc;
    }
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < 32; i++) {
        sha256_hex[2 * i] = hx[h[i] >> 4];
        sha256_hex[2 * i + 1] = hx[h[i] & 15];
    }
    sha256_hex[64] = '\0';
    return DSIG_OK;
}

/* @spec RFC 6750 §2.1: "Authorization: Bearer <b64token>"; hash and look the token up. */
int serve_auth(const struct dsig_serve_config *cfg, const char *authz, size_t *token)
{
    if (!authz)
        return SERVE_AUTH_MISSING;
    if (strncasecmp(authz, "Bearer ", 7) != 0)
        return SERVE_AUTH_MALFORMED;
    const char *t = authz + 7;
    while (*t == ' ')
        t++;
    size_t n = strlen(t);
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    if (n == 0 || n > SERVE_TOKEN_MAX)
        return SERVE_AUTH_MALFORMED;
    /* Printable ASCII without spaces (a superset of RFC 6750's b64token). The check touches every
     * byte whatever it holds, so its time says nothing about the token's value. */
    unsigned bad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        bad |= (unsigned)(c <= ' ' || c >= 0x7f);
    }
    if (bad)
        return SERVE_AUTH_MALFORMED;
    uint8_t h[32];
    if (serve_sha256(t, n, h) != DSIG_OK)
        return SERVE_AUTH_UNKNOWN;
    size_t found = 0; /* index + 1 of the match, 0 if none; built without branching on the comparison */
    for (size_t i = 0; i < cfg->ntokens; i++) {
        size_t eq = (size_t)(CRYPTO_memcmp(h, cfg->tokens[i].hash, 32) == 0);
        found |= ((size_t)0 - eq) & (i + 1);
    }
    dsig_memzero(h, sizeof h);
    /* Whether a token matched, and which, is the answer (401 or the tenant): public from here on. */
    DSIG_CT_DECLASSIFY(&found, sizeof found);
    if (!found)
        return SERVE_AUTH_UNKNOWN;
    *token = found - 1;
    return SERVE_AUTH_OK;
}

/* 1 if the tenant may do `op` (0 = any) on key `kid`. */
int serve_tenant_allows(const struct serve_tenant *t, const char *kid, unsigned op)
{
    if (op ? !(t->ops & op) : !t->ops)
        return 0;
    if (t->all_keys)
        return 1;
    for (size_t i = 0; i < t->nkeys; i++)
        if (strcmp(t->keys[i], kid) == 0)
            return 1;
    return 0;
}

/* Token bucket step (caller holds the lock): refill at `rate` per second up to `burst` since *last_ns,
 * take one token if there is one. 1 if taken; else *retry_s = whole seconds until one is there. */
static int bucket_take(double *tokens, uint64_t *last_ns, double rate, double burst, uint64_t now_ns,
                       unsigned *retry_s)
{
    if (*last_ns && now_ns > *last_ns) {
        *tokens += (double)(now_ns - *last_ns) * 1e-9 * rate;
        if (*tokens > burst)
            *tokens = burst;
    }
    if (!*last_ns || now_ns > *last_ns)
        *last_ns = now_ns;
    if (*tokens >= 1.0) {
        *tokens -= 1.0;
        return 1;
    }
    if (retry_s) {
        double wait = (1.0 - *tokens) / rate;
        *retry_s = wait < 1 ? 1u : wait > 86400 ? 86400u : (unsigned)(wait + 0.999); /* no UB cast */
    }
    return 0;
}

/* Token bucket of a bearer token: one token per request. */
int serve_rate_take(struct serve_token *tok, uint64_t now_ns, unsigned *retry_s)
{
    if (tok->rate <= 0)
        return 1;
    pthread_mutex_lock(&tok->mu);
    int ok = bucket_take(&tok->tokens, &tok->last_ns, tok->rate, tok->burst, now_ns, retry_s);
    pthread_mutex_unlock(&tok->mu);
    return ok;
}

#define PEER_BUCKETS 4096 /* 4096 × 16 bytes: addresses beyond that share buckets (more limiting, never less) */

struct serve_peer_limiter {
    double rate, burst;
    uint8_t key[DSIG_BLAKE3_KEY_LEN]; /* random: which addresses share a bucket is not chosen from outside */
    pthread_mutex_t mu;
    struct {
        double tokens;
        uint64_t last_ns;           /* 0: untouched (full) */
    } b[PEER_BUCKETS];
};

/* A limiter allowing `burst` failures per address, refilled at `rate` per second; rate 0: no limit. */
int serve_peer_limiter_new(struct serve_peer_limiter **out, double rate, double burst)
{
    *out = NULL;
    struct serve_peer_limiter *l = dsig_calloc(1, sizeof *l);
    if (!l)
        return dsig_fail(DSIG_E_NOMEM, "serve: out of memory");
    int rc = dsig_random_bytes(l->key, sizeof l->key);
    if (rc != DSIG_OK) {
        dsig_xfree(l, 0);
        return rc;
    }
    l->rate = rate;
    l->burst = burst;
    pthread_mutex_init(&l->mu, NULL);
    *out = l;
    return DSIG_OK;
}

void serve_peer_limiter_free(struct serve_peer_limiter *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->mu);
    dsig_xfree(l, sizeof *l);
}

/* The part of a client address that names one client for the limiter: an IPv4 address whole (also
 * when written IPv4-mapped, ::ffff:a.b.c.d), an IPv6 address by its /64 prefix (one host usually owns
 * a whole /64 and could otherwise rotate through 2^64 budgets); anything else as text. */
static size_t peer_key(const char *peer, uint8_t out[64])
{
    uint8_t a6[16];
    if (inet_pton(AF_INET6, peer, a6) == 1) {
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a6, mapped, sizeof mapped) == 0) {
            memcpy(out, a6 + 12, 4);
            return 4;
        }
        out[0] = 6; /* apart from any IPv4 key */
        memcpy(out + 1, a6, 8);
        return 9;
    }
    if (inet_pton(AF_INET, peer, out) == 1)
        return 4;
    size_t n = strnlen(peer, 63);
    memcpy(out, peer, n);
    return n;
}

/* Which of n buckets a client address falls in: its keyed BLAKE3 hash (the key is random per process,
 * so which addresses share a bucket cannot be chosen from outside). */
size_t serve_peer_bucket(const uint8_t key[32], const char *peer, size_t n)
{
    uint8_t k[64], h[8];
    size_t kn = peer_key(peer, k);
    dsig_blake3_hash_block(key, k, kn, h, sizeof h);
    /* The bucket is public by design: it indexes the bucket array, and which addresses share one shows
     * from outside anyway (failures from one address throttle the others). The key is what must not
     * leak, and the hash of it is constant time (tests/ct: ct_serve). */
    DSIG_CT_DECLASSIFY(h, sizeof h);
    uint32_t v = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
    return (size_t)(v % n);
}

/* Charge a failed authentication to the bucket of `peer`. */
int serve_peer_fail_take(struct serve_peer_limiter *l, const char *peer, uint64_t now_ns, unsigned *retry_s)
{
    if (!l)
        return 1;
    size_t i = serve_peer_bucket(l->key, peer, PEER_BUCKETS);
    pthread_mutex_lock(&l->mu);
    if (l->rate <= 0) {
        pthread_mutex_unlock(&l->mu);
        return 1;
    }
    if (!l->b[i].last_ns)
        l->b[i].tokens = l->burst;
    int ok = bucket_take(&l->b[i].tokens, &l->b[i].last_ns, l->rate, l->burst, now_ns, retry_s);
    pthread_mutex_unlock(&l->mu);
    return ok;
}

/* New limits (a reload): buckets keep their level, capped at the new burst. */
void serve_peer_limiter_set(struct serve_peer_limiter *l, double rate, double burst)
{
    pthread_mutex_lock(&l->mu);
    l->rate = rate;
    l->burst = burst;
    for (size_t i = 0; i < PEER_BUCKETS; i++)
        if (l->b[i].tokens > burst)
            l->b[i].tokens = burst;
    pthread_mutex_unlock(&l->mu);
}
