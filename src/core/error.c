/* Status codes and the per-thread failure detail. */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "core/internal.h"
#include "core/layer_api.h"

static _Thread_local char detail[512];

const char *dsig_strerror(int code)
{
    switch (code) {
    case DSIG_OK: return "success";
    case DSIG_E_VERIFY: return "signature verification failed";
    case DSIG_E_ARG: return "invalid argument";
    case DSIG_E_NOMEM: return "out of memory";
    case DSIG_E_UNSUPPORTED: return "unsupported algorithm or feature";
    case DSIG_E_KEY: return "malformed key";
    case DSIG_E_KEY_MISMATCH: return "key does not fit the algorithm";
    case DSIG_E_KEY_WEAK: return "key too small";
    case DSIG_E_FORMAT: return "malformed input";
    case DSIG_E_BASE64: return "invalid base64url";
    case DSIG_E_JSON: return "invalid JSON";
    case DSIG_E_HEADER: return "JWS header rejected";
    case DSIG_E_ALG_NOT_ALLOWED: return "algorithm not allowed";
    case DSIG_E_IO: return "I/O error";
    case DSIG_E_RNG: return "random number generator failure";
    case DSIG_E_CRYPTO: return "cryptographic backend failure";
    case DSIG_E_BUFFER: return "output buffer too small";
    case DSIG_E_STATE: return "wrong state (a context used out of order, or a key state file refused)";
    case DSIG_E_POINT: return "invalid curve point";
    case DSIG_E_NO_PRIVATE: return "private key required";
    case DSIG_E_TOO_LARGE: return "input too large";
    case DSIG_E_WOULD_BLOCK: return "operation would block";
    case DSIG_E_EXHAUSTED: return "key exhausted";
    case DSIG_E_INTERNAL: return "internal error";
    case DSIG_E_EQUIVOCATION: return "signer equivocation: one-time key used for two messages";
    case DSIG_E_UNKNOWN_SIGNER: return "unknown signer";
    case DSIG_E_STALE: return "batch older than every cached one (sequence floor)";
    case DSIG_E_RANGE: return "the key's index range is used up (reserve the next range)";
    case DSIG_E_UNAVAILABLE: return "coordinator unavailable (retry later)";
    default: return "unknown error";
    }
}

const char *dsig_last_error_detail(void)
{
    return detail;
}

void dsig_clear_error(void)
{
    detail[0] = '\0';
}

DSIG_LAYER_API int dsig_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    /* Details quote untrusted input (header members, JWK fields): keep terminal control bytes out. */
    for (char *c = detail; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
            *c = '?';
    return code;
}

DSIG_LAYER_API int dsig_fail_prefix(int code, const char *fmt, ...)
{
    char prev[sizeof detail], prefix[256];
    memcpy(prev, detail, sizeof prev);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    return dsig_fail(code, "%s: %s", prefix, prev);
}

DSIG_LAYER_API int dsig_fail_openssl(int code, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[256];
    if (e != 0) {
        ERR_error_string_n(e, buf, sizeof buf);
        ERR_clear_error();
        return dsig_fail(code, "%s: %s", what, buf);
    }
    return dsig_fail(code, "%s", what);
}
