/*
 * src/serve/auth.c — bearer tokens (RFC 6750 §2.1), tenant grants and per-token rate limits.
 *
 * Tokens are never stored: the configuration holds their SHA-256, the presented token is hashed and
 * compared with every configured hash with CRYPTO_memcmp, without stopping at a match, so the time
 * depends on the number of tokens only.
 */
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/internal.h"
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

/* Monotonic clock in nanoseconds. */
uint64_t serve_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/* Token bucket: refill at `rate` per second up to `burst`, take one token per request. */
int serve_rate_take(struct serve_token *tok, uint64_t now_ns, unsigned *retry_s)
{
    if (tok->rate <= 0)
        return 1;
    pthread_mutex_lock(&tok->mu);
    if (tok->last_ns && now_ns > tok->last_ns) {
        tok->tokens += (double)(now_ns - tok->last_ns) * 1e-9 * tok->rate;
        if (tok->tokens > tok->burst)
            tok->tokens = tok->burst;
    }
    if (!tok->last_ns || now_ns > tok->last_ns)
        tok->last_ns = now_ns;
    int ok = tok->tokens >= 1.0;
    if (ok)
        tok->tokens -= 1.0;
    else if (retry_s) {
        double wait = (1.0 - tok->tokens) / tok->rate;
        *retry_s = wait < 1 ? 1u : (unsigned)(wait + 0.999);
    }
    pthread_mutex_unlock(&tok->mu);
    return ok;
}
