/*
 * JOSE helpers shared by JWK and JWS: the text builder (JSON string escaping), strict JSON loading
 * (duplicate members rejected, one value, nothing after it) and in-place wiping of parsed secrets.
 */
#include <stdio.h>
#include <string.h>

#include "jose/jose_internal.h"
#include "core/layer_api.h"

/* Grow so that `extra` more bytes plus a NUL fit. */
static int buf_reserve(jose_buf *b, size_t extra)
{
    if (b->oom)
        return 0;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->oom = 1;
        return 0;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = dsig_realloc(b->p, cap); /* dsig_realloc wipes the old block */
    if (!p) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void jose_buf_add(jose_buf *b, const void *data, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}

DSIG_LAYER_API void jose_buf_adds(jose_buf *b, const char *s)
{
    jose_buf_add(b, s, strlen(s));
}

/* @spec RFC 8259 §7: quote, escape '"', '\\' and control characters. */
void jose_buf_json_str(jose_buf *b, const char *s)
{
    jose_buf_add(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            char esc[2] = {'\\', (char)*c};
            jose_buf_add(b, esc, 2);
        } else if (*c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", *c);
            jose_buf_add(b, esc, 6);
        } else {
            jose_buf_add(b, c, 1);
        }
    }
    jose_buf_add(b, "\"", 1);
}

DSIG_LAYER_API void jose_buf_member(jose_buf *b, const char *sep, const char *name, const char *value)
{
    if (sep)
        jose_buf_adds(b, sep);
    jose_buf_json_str(b, name);
    jose_buf_add(b, ":", 1);
    jose_buf_json_str(b, value);
}

DSIG_LAYER_API void jose_buf_wipe(jose_buf *b)
{
    if (b->p)
        dsig_xfree(b->p, b->cap);
    memset(b, 0, sizeof *b);
}

int jose_json_load_object(json_t **out, const char *text, size_t len, const char *what)
{
    *out = NULL;
    json_error_t err;
    /* JSON_REJECT_DUPLICATES: {"alg":"HS256","alg":"none"} must not be read either way.
     * No JSON_DISABLE_EOF_CHECK: trailing data after the value is an error. No JSON_ALLOW_NUL. */
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!j)
        return dsig_fail(DSIG_E_JSON, "%s: invalid JSON at byte %d: %s", what, err.position,
                         err.text);
    if (!json_is_object(j)) {
        json_decref(j);
        return dsig_fail(DSIG_E_JSON, "%s: expected a JSON object", what);
    }
    *out = j;
    return DSIG_OK;
}

DSIG_LAYER_API int jose_json_only_members(const json_t *obj, const char *prefix, const char *where, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        size_t i = 0;
        while (allowed[i] && strcmp(k, allowed[i]) != 0)
            i++;
        if (!allowed[i])
            return dsig_fail(DSIG_E_JSON, "%s%s: unknown member \"%s\"", prefix, where, k);
    }
    return DSIG_OK;
}

void jose_json_wipe_string(json_t *obj, const char *name)
{
    json_t *v = json_object_get(obj, name);
    if (v && json_is_string(v))
        dsig_memzero((char *)json_string_value(v), json_string_length(v));
}

int jose_fail_prefix(int code, const char *prefix)
{
    return dsig_fail_prefix(code, "%s", prefix);
}

DSIG_LAYER_API void jose_json_text_free(char *text)
{
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    if (text)
        f(text);
}
