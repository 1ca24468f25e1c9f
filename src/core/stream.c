/*
 * Streaming sign/verify: the algorithm-independent shell around a descriptor's operations. It checks
 * the key against the algorithm, counts bytes, and guarantees that final/abort wipe and free the
 * context on every path.
 */
#include <string.h>

#include "core/backend.h"
#include "core/error_internal.h"
#include "core/keytype.h"
#include "core/mem.h"
#include "core/provider.h"

/* What a sign and a verify context share; the public types wrap it so they cannot be mixed up. */
struct stream {
    const dsig_alg *alg;
    void *state;
    uint64_t total;
    int failed;
    int pass;              /* two-pass signing: 1 or 2; 0 = ordinary one-pass context */
    uint64_t pass1_total;  /* two-pass signing: bytes fed in pass 1 */
    /* Signing: the finished signature, held when dsig_sign_final was given no buffer or one too
     * small — a streamed payload cannot be fed again, so the signature must not be lost. */
    uint8_t *sig;
    size_t sig_len;
};

struct dsig_sign_ctx {
    struct stream s;
};

struct dsig_verify_ctx {
    struct stream s;
};

/* Checks common to both directions before a provider sees the key. */
static int stream_check(const dsig_alg *alg, const dsig_key *key, int signing)
{
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    if ((rc = dsig_key_check_alg(key, alg)))
        return rc;
    if (signing && !key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s signing needs a private key", alg->name);
    if (!signing && (alg->flags & DSIG_ALG_SYMMETRIC) && !key->has_private)
        return dsig_fail(DSIG_E_NO_PRIVATE, "%s verification needs the secret key", alg->name);
    return DSIG_OK;
}

/* Feed one chunk; a failed update poisons the context (only final/abort remain). */
static int stream_update(struct stream *s, int (*update)(void *, const uint8_t *, size_t),
                         const void *data, size_t len, const char *fn)
{
    if (!s || (!data && len))
        return dsig_fail(DSIG_E_ARG, "%s: NULL argument", fn);
    if (s->failed)
        return dsig_fail(DSIG_E_STATE, "%s after a failure", fn);
    if (s->sig)
        return dsig_fail(DSIG_E_STATE, "%s after dsig_sign_final made the signature", fn);
    if (len == 0)
        return DSIG_OK;
    int rc = update(s->state, data, len);
    if (rc)
        s->failed = 1;
    s->total += len;
    return rc;
}

/* Wipe and free a context of either direction (the stream is its first and only member). */
static void stream_free(struct stream *s)
{
    if (!s)
        return;
    if (s->state)
        s->alg->ops->free_state(s->state);
    if (s->sig)
        dsig_xfree(s->sig, 0); /* a signature is public */
    dsig_xfree(s, sizeof *s);
}

/* Non-zero when opts asks for anything but the defaults (NULL = defaults). */
static int opts_given(const dsig_sign_opts *o)
{
    return o && (o->context_len || o->deterministic || o->prehash);
}

/* The options a provider sees: NULL for the defaults (core/provider.h). */
static const dsig_sign_opts *opts_for_provider(const dsig_sign_opts *o)
{
    return opts_given(o) ? o : NULL;
}

/* Checks on options before any provider sees them. */
static int opts_check(const dsig_alg *alg, const dsig_sign_opts *o)
{
    if (!opts_given(o))
        return DSIG_OK;
    if (o->context_len && !o->context)
        return dsig_fail(DSIG_E_ARG, "signing options: context_len is %zu but context is NULL",
                         o->context_len);
    if (o->context_len > DSIG_SIGN_CONTEXT_MAX)
        return dsig_fail(DSIG_E_ARG, "signing options: context of %zu bytes exceeds %d",
                         o->context_len, DSIG_SIGN_CONTEXT_MAX);
    if (!(alg->flags & DSIG_ALG_OPTIONS))
        return dsig_fail(DSIG_E_UNSUPPORTED,
                         "%s takes no signing options (context, deterministic, pre-hash)", alg->name);
    return DSIG_OK;
}

int dsig_sign_init_ex(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                      const dsig_sign_opts *opts)
{
    if (!ctx || !alg || !key)
        return dsig_fail(DSIG_E_ARG, "dsig_sign_init: NULL argument");
    *ctx = NULL;
    int rc = stream_check(alg, key, 1);
    if (rc || (rc = opts_check(alg, opts)))
        return rc;
    struct dsig_sign_ctx *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    c->s.alg = alg;
    rc = alg->ops->sign_init(&c->s.state, alg, key, opts_for_provider(opts));
    if (rc) {
        dsig_xfree(c, sizeof *c);
        return rc;
    }
    *ctx = c;
    return DSIG_OK;
}

int dsig_sign_init_two_pass(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                            const dsig_sign_opts *opts)
{
    if (!ctx || !alg || !key)
        return dsig_fail(DSIG_E_ARG, "dsig_sign_init_two_pass: NULL argument");
    *ctx = NULL;
    if (!(alg->flags & DSIG_ALG_TWO_PASS) || !alg->ops->two_pass)
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s has no two-pass signature (sign it in one pass with "
                                             "dsig_sign_init)", alg->name);
    int rc = stream_check(alg, key, 1);
    if (rc || (rc = opts_check(alg, opts)))
        return rc;
    struct dsig_sign_ctx *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    c->s.alg = alg;
    c->s.pass = 1;
    rc = alg->ops->two_pass->sign_init(&c->s.state, alg, key, opts_for_provider(opts));
    if (rc) {
        dsig_xfree(c, sizeof *c);
        return rc;
    }
    *ctx = c;
    return DSIG_OK;
}

int dsig_sign_next_pass(dsig_sign_ctx *ctx)
{
    if (!ctx)
        return dsig_fail(DSIG_E_ARG, "dsig_sign_next_pass: NULL context");
    if (ctx->s.failed || ctx->s.sig)
        return dsig_fail(DSIG_E_STATE, "dsig_sign_next_pass after a failure or after "
                                       "dsig_sign_final");
    if (ctx->s.pass != 1)
        return dsig_fail(DSIG_E_STATE, ctx->s.pass ? "dsig_sign_next_pass called twice"
                                                   : "dsig_sign_next_pass on a one-pass context "
                                                     "(start it with dsig_sign_init_two_pass)");
    int rc = ctx->s.alg->ops->two_pass->next_pass(ctx->s.state);
    if (rc) {
        ctx->s.failed = 1;
        return rc;
    }
    ctx->s.pass1_total = ctx->s.total;
    ctx->s.total = 0;
    ctx->s.pass = 2;
    return DSIG_OK;
}

int dsig_sign_init(dsig_sign_ctx **ctx, const dsig_alg *alg, const dsig_key *key)
{
    return dsig_sign_init_ex(ctx, alg, key, NULL);
}

int dsig_sign_update(dsig_sign_ctx *ctx, const void *data, size_t len)
{
    return stream_update(ctx ? &ctx->s : NULL, ctx ? ctx->s.alg->ops->sign_update : NULL, data, len,
                         "dsig_sign_update");
}

uint64_t dsig_sign_total(const dsig_sign_ctx *ctx)
{
    return ctx ? ctx->s.total : 0;
}

void dsig_sign_abort(dsig_sign_ctx *ctx)
{
    stream_free(ctx ? &ctx->s : NULL);
}

/* Checks before the provider's final: the context must be complete. */
static int sign_final_check(const struct stream *s)
{
    if (s->failed)
        return dsig_fail(DSIG_E_STATE, "dsig_sign_final after a failed update");
    if (s->pass == 1)
        return dsig_fail(DSIG_E_STATE, "dsig_sign_final: two-pass signing is still in pass 1 (call "
                                       "dsig_sign_next_pass and feed the payload again)");
    if (s->pass == 2 && s->total != s->pass1_total)
        return dsig_fail(DSIG_E_STATE, "dsig_sign_final: pass 2 fed %llu bytes, pass 1 fed %llu: the "
                                       "two passes must read the same payload",
                         (unsigned long long)s->total, (unsigned long long)s->pass1_total);
    return DSIG_OK;
}

int dsig_sign_final(dsig_sign_ctx *ctx, uint8_t *sig, size_t cap, size_t *sig_len)
{
    if (!ctx)
        return dsig_fail(DSIG_E_ARG, "dsig_sign_final: NULL context");
    struct stream *s = &ctx->s;
    int rc = sig_len ? DSIG_OK : dsig_fail(DSIG_E_ARG, "dsig_sign_final: NULL sig_len");
    if (rc == DSIG_OK && !s->sig) {
        if ((rc = sign_final_check(s)) == DSIG_OK && sig && cap >= s->alg->sig_max) {
            /* The common case: a buffer of dsig_alg_sig_max bytes always suffices. */
            rc = s->alg->ops->sign_final(s->state, sig, cap, sig_len);
            dsig_sign_abort(ctx);
            return rc;
        }
        /* No buffer, or one that may be too small: sign into the context, which keeps the
         * signature until a buffer that fits arrives. The signer's state is wiped right away. */
        if (rc == DSIG_OK && !(s->sig = dsig_malloc(s->alg->sig_max)))
            rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        if (rc == DSIG_OK)
            rc = s->alg->ops->sign_final(s->state, s->sig, s->alg->sig_max, &s->sig_len);
        if (rc == DSIG_OK) {
            s->alg->ops->free_state(s->state);
            s->state = NULL;
        }
    }
    if (rc) {
        dsig_sign_abort(ctx);
        return rc;
    }
    *sig_len = s->sig_len;
    if (!sig)
        return DSIG_OK; /* size query: the context stays */
    if (cap < s->sig_len)
        return dsig_fail(DSIG_E_BUFFER, "dsig_sign_final: the %s signature needs %zu bytes, the buffer "
                                        "has %zu; the context keeps the signature: call "
                                        "dsig_sign_final again with a larger buffer, or dsig_sign_abort",
                         s->alg->name, s->sig_len, cap);
    memcpy(sig, s->sig, s->sig_len);
    dsig_sign_abort(ctx);
    return DSIG_OK;
}

int dsig_verify_init_ex(dsig_verify_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                        const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts)
{
    if (!ctx || !alg || !key || (!sig && sig_len))
        return dsig_fail(DSIG_E_ARG, "dsig_verify_init: NULL argument");
    *ctx = NULL;
    int rc = stream_check(alg, key, 0);
    if (rc || (rc = opts_check(alg, opts)))
        return rc;
    struct dsig_verify_ctx *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    c->s.alg = alg;
    if (!sig)
        sig = (const uint8_t *)"";
    rc = alg->ops->verify_init(&c->s.state, alg, key, sig, sig_len, opts_for_provider(opts));
    if (rc) {
        dsig_xfree(c, sizeof *c);
        return rc;
    }
    *ctx = c;
    return DSIG_OK;
}

int dsig_verify_init(dsig_verify_ctx **ctx, const dsig_alg *alg, const dsig_key *key,
                     const uint8_t *sig, size_t sig_len)
{
    return dsig_verify_init_ex(ctx, alg, key, sig, sig_len, NULL);
}

int dsig_verify_update(dsig_verify_ctx *ctx, const void *data, size_t len)
{
    return stream_update(ctx ? &ctx->s : NULL, ctx ? ctx->s.alg->ops->verify_update : NULL, data, len,
                         "dsig_verify_update");
}

void dsig_verify_abort(dsig_verify_ctx *ctx)
{
    stream_free(ctx ? &ctx->s : NULL);
}

int dsig_verify_final(dsig_verify_ctx *ctx)
{
    if (!ctx)
        return dsig_fail(DSIG_E_ARG, "dsig_verify_final: NULL context");
    dsig_clear_error();
    int rc = ctx->s.failed ? dsig_fail(DSIG_E_STATE, "dsig_verify_final after a failed update")
                           : ctx->s.alg->ops->verify_final(ctx->s.state);
    if (rc == DSIG_E_VERIFY && !dsig_last_error_detail()[0])
        dsig_fail(DSIG_E_VERIFY, "%s signature does not verify", ctx->s.alg->name);
    dsig_verify_abort(ctx);
    return rc;
}

int dsig_sign_ex(const dsig_alg *alg, const dsig_key *key, const void *msg, size_t msg_len,
                 uint8_t *sig, size_t cap, size_t *sig_len, const dsig_sign_opts *opts)
{
    if (!alg || !key || (!msg && msg_len) || !sig || !sig_len)
        return dsig_fail(DSIG_E_ARG, "dsig_sign: NULL argument");
    if (alg->ops->oneshot && alg->ops->oneshot->sign) {
        int rc = stream_check(alg, key, 1);
        if (rc || (rc = opts_check(alg, opts)))
            return rc;
        return alg->ops->oneshot->sign(alg, key, msg ? msg : (const void *)"", msg_len, sig, cap,
                                       sig_len, opts_for_provider(opts));
    }
    dsig_sign_ctx *c;
    int rc = dsig_sign_init_ex(&c, alg, key, opts);
    if (rc)
        return rc;
    if ((rc = dsig_sign_update(c, msg, msg_len))) {
        dsig_sign_abort(c);
        return rc;
    }
    rc = dsig_sign_final(c, sig, cap, sig_len);
    if (rc == DSIG_E_BUFFER) /* the one-shot form keeps nothing: the message is still the caller's */
        dsig_sign_abort(c);
    return rc;
}

int dsig_sign(const dsig_alg *alg, const dsig_key *key, const void *msg, size_t msg_len,
              uint8_t *sig, size_t cap, size_t *sig_len)
{
    return dsig_sign_ex(alg, key, msg, msg_len, sig, cap, sig_len, NULL);
}

int dsig_verify_ex(const dsig_alg *alg, const dsig_key *key, const void *msg, size_t msg_len,
                   const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts)
{
    if (!alg || !key || (!msg && msg_len) || (!sig && sig_len))
        return dsig_fail(DSIG_E_ARG, "dsig_verify: NULL argument");
    if (alg->ops->oneshot && alg->ops->oneshot->verify) {
        int rc = stream_check(alg, key, 0);
        if (rc || (rc = opts_check(alg, opts)))
            return rc;
        return alg->ops->oneshot->verify(alg, key, msg ? msg : (const void *)"", msg_len,
                                         sig ? sig : (const uint8_t *)"", sig_len,
                                         opts_for_provider(opts));
    }
    dsig_verify_ctx *c;
    int rc = dsig_verify_init_ex(&c, alg, key, sig, sig_len, opts);
    if (rc)
        return rc;
    if ((rc = dsig_verify_update(c, msg, msg_len))) {
        dsig_verify_abort(c);
        return rc;
    }
    return dsig_verify_final(c);
}

int dsig_verify(const dsig_alg *alg, const dsig_key *key, const void *msg, size_t msg_len,
                const uint8_t *sig, size_t sig_len)
{
    return dsig_verify_ex(alg, key, msg, msg_len, sig, sig_len, NULL);
}
